/* MPI loaded at run time (cli/mpi.c): what the fleet's ranks need of it. */
#ifndef IB_CLI_MPI_H
#define IB_CLI_MPI_H

#include <stdbool.h>
#include <stddef.h>

/* Whether the launcher's environment says this process is an MPI rank;
 * *var (may be NULL) names the variable that says so. */
bool cli_mpi_launched(const char **var);
/* The local rank and the ranks on this host, from the launcher's
 * environment; -1 each when it does not say. */
void cli_mpi_local(int *local_rank, int *local_size);
/* dlopens Open MPI's libmpi (library: that file instead, NULL: the
 * soname) and finds what is used; false with why. */
bool cli_mpi_load(const char *library, char *why, size_t cap);
/* MPI_Init, errors returned instead of aborting, the world's rank and size. */
bool cli_mpi_init(int *rank, int *size);
void cli_mpi_finalize(void);
/* A barrier of the world that gives up after timeout_s (a dead rank never
 * arrives): false then, or when MPI failed. */
bool cli_mpi_barrier(double timeout_s);
/* Sends len bytes to rank dest with tag, or receives them from source,
 * waiting at most timeout_s (the peer may be gone). */
bool cli_mpi_send(const void *data, size_t len, int dest, int tag, double timeout_s);
bool cli_mpi_recv(void *data, size_t len, int source, int tag, double timeout_s);
/* Rank 0: receives len bytes from each rank r in 1..size-1 into base + r *
 * len with tag, waiting at most timeout_s for all; received[r] says which
 * came. Returns how many came. */
size_t cli_mpi_gather(void *base, size_t len, int size, int tag, double timeout_s, bool *received);

#endif
