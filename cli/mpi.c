/* MPI, loaded at run time (dlopen, as perf_analyzer does): inferbench
 * neither links nor includes MPI, so it builds and runs without it and a
 * single process never needs it. The loader targets Open MPI's ABI: its
 * handles are pointers, and MPI_COMM_WORLD, MPI_BYTE and MPI_ERRORS_RETURN
 * are the addresses of global objects (ompi_mpi_comm_world, ...) that
 * dlsym finds. MPICH's handles are integers fixed in its mpi.h
 * (MPI_COMM_WORLD is 0x44000000): supporting it takes a second table of
 * those constants and int-typed signatures (docs/fleet.md). */
#include "cli_mpi.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void *mpi_handle; /* MPI_Comm, MPI_Datatype, MPI_Errhandler, MPI_Request */

static struct {
    void *lib;
    int (*init)(int *argc, char ***argv);
    int (*finalize)(void);
    int (*comm_rank)(mpi_handle comm, int *rank);
    int (*comm_size)(mpi_handle comm, int *size);
    int (*comm_set_errhandler)(mpi_handle comm, mpi_handle handler);
    int (*ibarrier)(mpi_handle comm, mpi_handle *request);
    int (*test)(mpi_handle *request, int *flag, void *status);
    int (*isend)(const void *buf, int count, mpi_handle type, int dest, int tag, mpi_handle comm,
                 mpi_handle *request);
    int (*irecv)(void *buf, int count, mpi_handle type, int source, int tag, mpi_handle comm,
                 mpi_handle *request);
    mpi_handle comm_world, byte, errors_return;
} mpi;

/* The launcher's variables that say "you are rank R of an MPI job": Open
 * MPI's, PMIx's (Open MPI 5, Slurm), the PMI of MPICH's Hydra. */
static const char *const rank_vars[] = { "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK" };
static const char *const local_rank_vars[] = { "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID",
                                               "SLURM_LOCALID" };
static const char *const local_size_vars[] = { "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS",
                                               "SLURM_NTASKS_PER_NODE" };

/* The first of names set, as a number; -1 when none is. */
static int env_int(const char *const *names, size_t n, const char **which)
{
    for (size_t i = 0; i < n; i++) {
        const char *v = getenv(names[i]);
        if (v && *v) {
            if (which) *which = names[i];
            return atoi(v);
        }
    }
    return -1;
}

#define N_OF(a) (sizeof(a) / sizeof((a)[0]))

bool cli_mpi_launched(const char **var) { return env_int(rank_vars, N_OF(rank_vars), var) >= 0; }

void cli_mpi_local(int *local_rank, int *local_size)
{
    *local_rank = env_int(local_rank_vars, N_OF(local_rank_vars), NULL);
    *local_size = env_int(local_size_vars, N_OF(local_size_vars), NULL);
}

/* dlsym returns an object pointer; POSIX guarantees it converts to the
 * function's pointer type. */
#define LOAD(field, symbol) (*(void **)&mpi.field = dlsym(mpi.lib, symbol))

static bool load_symbols(void)
{
    bool ok = LOAD(init, "MPI_Init") && LOAD(finalize, "MPI_Finalize") && LOAD(comm_rank, "MPI_Comm_rank") &&
              LOAD(comm_size, "MPI_Comm_size") && LOAD(comm_set_errhandler, "MPI_Comm_set_errhandler") &&
              LOAD(ibarrier, "MPI_Ibarrier") && LOAD(test, "MPI_Test") && LOAD(isend, "MPI_Isend") &&
              LOAD(irecv, "MPI_Irecv");
    /* Open MPI's predefined handles: the addresses of its global objects. */
    mpi.comm_world = dlsym(mpi.lib, "ompi_mpi_comm_world");
    mpi.byte = dlsym(mpi.lib, "ompi_mpi_byte");
    mpi.errors_return = dlsym(mpi.lib, "ompi_mpi_errors_return");
    return ok && mpi.comm_world && mpi.byte && mpi.errors_return;
}

bool cli_mpi_load(const char *library, char *why, size_t cap)
{
    /* The soname of Open MPI 3 to 5; RTLD_GLOBAL: its plugins (MCA
     * components) resolve their symbols against libmpi's. */
    const char *names[] = { library ? library : "libmpi.so.40", library ? library : "libmpi.so" };
    const char *last = "";
    for (size_t i = 0; i < N_OF(names) && !mpi.lib; i++) {
        mpi.lib = dlopen(names[i], RTLD_NOW | RTLD_GLOBAL);
        if (!mpi.lib) last = dlerror();
    }
    if (!mpi.lib) {
        snprintf(why, cap, "no MPI library loads (%s)", last ? last : names[0]);
        return false;
    }
    if (!load_symbols()) {
        snprintf(why, cap,
                 "the MPI library loaded is not Open MPI (no ompi_mpi_comm_world): only Open MPI's "
                 "ABI is supported");
        return false;
    }
    return true;
}

bool cli_mpi_init(int *rank, int *size)
{
    if (mpi.init(NULL, NULL) != 0) return false;
    /* A peer that dies must not abort this rank: calls return errors. */
    mpi.comm_set_errhandler(mpi.comm_world, mpi.errors_return);
    return mpi.comm_rank(mpi.comm_world, rank) == 0 && mpi.comm_size(mpi.comm_world, size) == 0;
}

void cli_mpi_finalize(void) { mpi.finalize(); }

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Polls request until it completes, fails or timeout_s passes. */
static bool wait_request(mpi_handle *request, double timeout_s)
{
    const struct timespec step = { 0, 100000 }; /* 0.1 ms: a barrier's release skew stays small */
    double deadline = now_s() + timeout_s;
    for (;;) {
        int done = 0;
        if (mpi.test(request, &done, NULL) != 0) return false;
        if (done) return true;
        if (now_s() > deadline) return false;
        nanosleep(&step, NULL);
    }
}

bool cli_mpi_barrier(double timeout_s)
{
    mpi_handle request;
    return mpi.ibarrier(mpi.comm_world, &request) == 0 && wait_request(&request, timeout_s);
}

bool cli_mpi_send(const void *data, size_t len, int dest, int tag, double timeout_s)
{
    mpi_handle request;
    return mpi.isend(data, (int)len, mpi.byte, dest, tag, mpi.comm_world, &request) == 0 &&
           wait_request(&request, timeout_s);
}

bool cli_mpi_recv(void *data, size_t len, int source, int tag, double timeout_s)
{
    mpi_handle request;
    return mpi.irecv(data, (int)len, mpi.byte, source, tag, mpi.comm_world, &request) == 0 &&
           wait_request(&request, timeout_s);
}

size_t cli_mpi_gather(void *base, size_t len, int size, int tag, double timeout_s, bool *received)
{
    mpi_handle *requests = calloc((size_t)size, sizeof *requests);
    if (!requests) return 0;
    size_t left = 0;
    for (int r = 1; r < size; r++) {
        received[r] = false;
        left += mpi.irecv((char *)base + (size_t)r * len, (int)len, mpi.byte, r, tag, mpi.comm_world,
                          &requests[r]) == 0;
    }
    const struct timespec step = { 0, 1000000 };
    double deadline = now_s() + timeout_s;
    size_t got = 0;
    while (got < left && now_s() <= deadline) {
        for (int r = 1; r < size; r++) {
            int done = 0;
            if (received[r] || !requests[r]) continue;
            if (mpi.test(&requests[r], &done, NULL) != 0) {
                requests[r] = NULL; /* failed: not waited for */
                left--;
            } else if (done) {
                received[r] = true;
                got++;
            }
        }
        if (got < left) nanosleep(&step, NULL);
    }
    free(requests);
    return got;
}
