/* A fleet: --devices all|0,2,3 (one worker thread per device of this
 * host, the library's ib_measure_fleet) or an MPI job (one rank per GPU,
 * across hosts: this process is one rank). Either way every worker
 * warms up on its own, the workers meet at a barrier, time their runs,
 * and one report holds each worker and the aggregate over the common
 * window (docs/fleet.md). */
#include "cli.h"
#include "cli_mpi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_LOCAL_DEVICES 64
#define SUMMARY_TAG 0x1f1e
#define VERDICT_TAG 0x1f1f

bool cli_fleet_wanted(const cli_args *a)
{
    return a->devices || (cli_mpi_launched(NULL) && !a->session_index);
}

/* CUDA devices usable here (0 without a GPU or a CUDA build). */
static int count_gpus(void)
{
    size_t n = ib_cuda_devices(NULL, 0);
    return n < MAX_LOCAL_DEVICES ? (int)n : MAX_LOCAL_DEVICES;
}

/* --device auto resolved the way a single run resolves it; *count: the
 * devices of that kind (GPUs, or online CPUs for CPU workers). */
static ib_device_kind resolve_device(const cli_args *a, int *count)
{
    int gpus = count_gpus();
    ib_device_kind kind = a->model_opts.device;
    if (kind == IB_DEVICE_AUTO) kind = gpus > 0 ? IB_DEVICE_CUDA : IB_DEVICE_CPU;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    *count = kind == IB_DEVICE_CUDA ? gpus : (int)(cpus > 0 ? cpus : 1);
    return kind;
}

static const char *device_noun(ib_device_kind kind) { return kind == IB_DEVICE_CUDA ? "GPU" : "CPU worker"; }

static bool bad_devices(const char *text, const char *why)
{
    fprintf(stderr, "inferbench: --devices %s: %s\n", text, why);
    return false;
}

/* "all" or distinct indexes below count, separated by commas. */
static bool parse_devices(const char *text, ib_device_kind kind, int count, int *out, size_t *n)
{
    char why[160];
    *n = 0;
    if (!strcmp(text, "all")) {
        if (count == 0) return bad_devices(text, "this host has no GPU");
        for (int i = 0; i < count && i < MAX_LOCAL_DEVICES; i++) out[(*n)++] = i;
        return true;
    }
    for (const char *s = text;;) {
        char *end;
        errno = 0;
        long v = strtol(s, &end, 10);
        if (end == s || (*end && *end != ',') || errno || v < 0 || s[0] == '-' || s[0] == '+' || s[0] == ' ')
            return bad_devices(text, "expected all, or device indexes separated by commas (0,2,3)");
        if (v >= count) {
            snprintf(why, sizeof why, "%s %ld does not exist (this host has %d%s%s)", device_noun(kind), v,
                     count, kind == IB_DEVICE_CUDA ? " GPU" : " CPUs",
                     count == 1 || kind != IB_DEVICE_CUDA ? "" : "s");
            return bad_devices(text, why);
        }
        for (size_t i = 0; i < *n; i++)
            if (out[i] == v) {
                snprintf(why, sizeof why, "%s %ld is listed twice", device_noun(kind), v);
                return bad_devices(text, why);
            }
        if (*n == MAX_LOCAL_DEVICES) return bad_devices(text, "more than 64 devices");
        out[(*n)++] = (int)v;
        if (!*end) return true;
        s = end + 1;
    }
}

/* The option by which a's backend takes its CPU threads, or NULL. */
static const ib_backend_option_decl *threads_option(const cli_args *a)
{
    const ib_backend *b = cli_backend(a);
    for (size_t i = 0; b && i < b->n_options; i++)
        if (b->options[i].role == IB_OPTION_ROLE_THREADS) return &b->options[i];
    return NULL;
}

/* Opens the model for one worker on device `index` of kind; CPU workers
 * share the cores between them, through the option their backend declares
 * for its threads, unless that option is given. */
static int open_worker(const cli_args *a, ib_device_kind kind, int index, size_t n_workers, ib_workload **w)
{
    cli_args ai = *a;
    ai.model_opts.device = kind;
    ai.model_opts.device_id = kind == IB_DEVICE_CUDA ? index : 0;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const ib_backend_option_decl *threads = threads_option(a);
    char count[24];
    snprintf(count, sizeof count, "%ld", cpus > (long)n_workers ? cpus / (long)n_workers : 1);
    if (kind == IB_DEVICE_CPU && threads && !cli_option_given(a, threads->key) &&
        !cli_set_backend_option(&ai, "--devices", threads->key, count))
        return EXIT_BAD_INPUT;
    return cli_open_workload(&ai, w);
}

/* Throughput: the batch every worker runs: the one given, else the peak
 * of the throughput search on w (the first device, alone). */
static int fleet_batch(const cli_args *a, ib_workload *w, int64_t *batch)
{
    if (*batch > 0) return EXIT_OK;
    ib_throughput_config tc;
    ib_throughput_config_init(&tc);
    tc.run = a->cfg;
    tc.run.cancel = &cli_cancel_flag;
    tc.max_batch = a->max_batch;
    tc.max_time_ms = a->throughput_max_ms;
    ib_throughput_result *r = malloc(sizeof *r);
    if (!r) return cli_fail(IB_ERR_NO_MEMORY, "out of memory");
    ib_error err = { { 0 } };
    ib_status st = ib_measure_throughput(w, &tc, r, &err);
    if (st == IB_OK && r->peak < 0) {
        st = IB_ERR_RUNTIME;
        snprintf(err.message, sizeof err.message, "the throughput search measured no batch");
    }
    if (st == IB_OK) *batch = r->points[r->peak].batch;
    free(r);
    return st == IB_OK ? EXIT_OK : cli_fail(st, err.message);
}

static int set_batches(ib_workload *const *ws, size_t n, int64_t batch)
{
    for (size_t i = 0; i < n && batch > 0; i++) {
        ib_error err = { { 0 } };
        ib_status st = ib_workload_set_batch(ws[i], batch, &err);
        if (st != IB_OK) return cli_fail(st, err.message);
    }
    return EXIT_OK;
}

/* A failed worker is the news (also when no worker measured): *st and
 * err name the first, and how many failed. */
static void name_failure(const ib_fleet_worker *workers, size_t n, bool mpi, ib_status *st, ib_error *err)
{
    size_t failed = 0;
    for (size_t i = 0; i < n; i++) failed += workers[i].status != IB_OK;
    for (size_t i = 0; i < n; i++) {
        if (workers[i].status == IB_OK) continue;
        *st = workers[i].status;
        snprintf(err->message, sizeof err->message, "%zu of %zu %s failed, the first %s %d: %s", failed, n,
                 mpi ? "ranks" : "workers", mpi ? "rank" : "device", mpi ? workers[i].rank : workers[i].index,
                 workers[i].error);
        return;
    }
}

static void warn_mixed(const ib_fleet_result *f)
{
    if (f->mixed_devices) cli_warn("the devices are of different models: the aggregate adds unlike devices");
}

/* The aggregate of workers, reported in every format asked for; a failed
 * worker makes the run fail (exit 1, or 2 when its input was bad), its
 * error named, the others' figures kept. */
static int report_fleet(cli_outputs *out, ib_fleet_worker *workers, size_t n, const ib_fleet_worker *alone,
                        ib_result_kind kind, bool mpi, const ib_workload_info *info, const ib_config *cfg)
{
    ib_fleet_result f;
    ib_error err = { { 0 } };
    ib_status st = ib_fleet_aggregate(workers, n, alone, &f, &err);
    f.measured = kind;
    f.mpi = mpi;
    name_failure(workers, n, mpi, &st, &err);
    warn_mixed(&f);
    ib_result res = { .kind = IB_RESULT_FLEET, .fleet = &f, .info = info, .cfg = cfg };
    return cli_report(out, &res, st, &err);
}

static void close_all(ib_workload **ws, size_t n)
{
    for (size_t i = 0; i < n; i++) ib_workload_destroy(ws[i]);
}

/* --devices: a thread per device of this host. */
/* The first steps of a run on this host's devices: the device kind, the
 * devices --devices names (index[], *n), the options checked against the
 * kind, the outputs prepared. EXIT_OK or the code of the line printed. */
static int start_local(cli_args *a, ib_device_kind *device, int index[MAX_LOCAL_DEVICES], size_t *n,
                       cli_outputs *out)
{
    int count;
    *device = resolve_device(a, &count);
    if (!parse_devices(a->devices, *device, count, index, n)) return EXIT_BAD_INPUT;
    if (!cli_options_fit_device(a, *device)) return EXIT_BAD_INPUT;
    return cli_prepare_outputs(a, out);
}

static int run_local(cli_args *a, ib_result_kind kind, int64_t batch)
{
    int index[MAX_LOCAL_DEVICES];
    size_t n;
    ib_device_kind device;
    cli_outputs out;
    int code = start_local(a, &device, index, &n, &out);
    if (code != EXIT_OK) return code;
    ib_workload *ws[MAX_LOCAL_DEVICES] = { 0 };
    for (size_t i = 0; i < n && code == EXIT_OK; i++) code = open_worker(a, device, index[i], n, &ws[i]);
    if (code == EXIT_OK && kind == IB_RESULT_THROUGHPUT) code = fleet_batch(a, ws[0], &batch);
    if (code == EXIT_OK) code = set_batches(ws, n, batch);
    ib_fleet_worker *workers = calloc(n + 1, sizeof *workers);
    if (code == EXIT_OK && !workers) code = cli_fail(IB_ERR_NO_MEMORY, "out of memory");
    if (code != EXIT_OK) {
        cli_outputs_abort(&out);
        close_all(ws, n);
        free(workers);
        return code;
    }
    ib_config cfg = a->cfg;
    cfg.cancel = &cli_cancel_flag;
    cli_progress_attach(&cfg, a->quiet);
    ib_error err = { { 0 } };
    ib_fleet_worker *alone = &workers[n];
    ib_status st = ib_measure_fleet(ws, 1, &cfg, alone, &err);
    if (st == IB_OK) st = ib_measure_fleet(ws, n, &cfg, workers, &err);
    alone->index = index[0];
    for (size_t i = 0; i < n; i++) workers[i].index = index[i];
    code = st == IB_OK ? report_fleet(&out, workers, n, alone, kind, false, ib_workload_get_info(ws[0]), &cfg)
                       : (cli_outputs_abort(&out), cli_fail(st, err.message));
    close_all(ws, n);
    free(workers);
    return code;
}

/* serve --devices: device i's instances are ws[i * instances ..]. */
static int open_serve_devices(cli_args *a, ib_device_kind device, const int *index, size_t n,
                              size_t instances, ib_workload **ws)
{
    size_t total = n * instances;
    for (size_t i = 0; i < total; i++) {
        int code = open_worker(a, device, index[i / instances], total, &ws[i]);
        if (code != EXIT_OK) return code;
    }
    return EXIT_OK;
}

/* Each device named by its index in every rate's summaries (the library
 * numbers them 0..n-1). */
static void number_devices(ib_fleet_serve_result *r, const int *index)
{
    for (size_t i = 0; i < r->n_devices; i++) {
        r->who[i].index = index[i];
        for (size_t k = 0; k < r->n_rates; k++) r->rates[k].devices[i].index = index[i];
    }
}

static int measure_fleet_serve(cli_args *a, ib_workload **ws, size_t n, size_t instances, const int *index,
                               cli_outputs *out)
{
    ib_fleet_serve_result *r = calloc(1, sizeof *r);
    if (!r) {
        cli_outputs_abort(out);
        return cli_fail(IB_ERR_NO_MEMORY, "out of memory");
    }
    ib_error err = { { 0 } };
    ib_status st = ib_measure_fleet_serve(ws, n, instances, &a->serve, r, &err);
    int code;
    if (r->shown) {
        number_devices(r, index);
        name_failure(r->who, n, false, &st, &err);
        warn_mixed(r->shown);
        ib_result res = { .kind = IB_RESULT_FLEET, .fleet = r->shown, .info = ib_workload_get_info(ws[0]) };
        code = cli_report(out, &res, st, &err);
    } else {
        code = cli_report(out, NULL, st, &err); /* refused before serving */
    }
    ib_fleet_serve_result_free(r);
    free(r);
    return code;
}

int cli_run_fleet_serve(cli_args *a, size_t instances)
{
    int index[MAX_LOCAL_DEVICES];
    size_t n;
    ib_device_kind device;
    cli_outputs out;
    int code = start_local(a, &device, index, &n, &out);
    if (code != EXIT_OK) return code;
    ib_workload **ws = calloc(n * instances, sizeof *ws);
    code = ws ? open_serve_devices(a, device, index, n, instances, ws)
              : cli_fail(IB_ERR_NO_MEMORY, "out of memory");
    if (code == EXIT_OK)
        code = measure_fleet_serve(a, ws, n, instances, index, &out);
    else
        cli_outputs_abort(&out);
    if (ws) close_all(ws, n * instances);
    free(ws);
    return code;
}

/* ------------------------------------------------------------------------ */
/* MPI: this process is one rank                                             */
/* ------------------------------------------------------------------------ */

typedef struct rank_state {
    int rank, size, local_rank, local_size;
    double timeout_s;
    bool met;         /* passed the barrier before the timed runs */
    bool all_present; /* every rank's summary came: MPI_Finalize is safe */
    ib_fleet_worker self;
} rank_state;

/* The ranks meet before their timed runs; after them, the gather is the
 * meeting (a barrier there would wait for a dead rank). Test hook:
 * INFERBENCH_TEST_KILL_RANK=R kills rank R as its timed runs begin. */
static ib_status meet_ranks(void *user, int point)
{
    rank_state *s = user;
    if (point != IB_SYNC_BEFORE_TIMED || s->met) return IB_OK;
    s->met = true;
    if (!cli_mpi_barrier(s->timeout_s)) return IB_ERR_RUNTIME;
    const char *kill_rank = getenv("INFERBENCH_TEST_KILL_RANK");
    if (kill_rank && atoi(kill_rank) == s->rank) raise(SIGKILL);
    return IB_OK;
}

/* Which GPU this rank takes: its local rank's; more ranks than GPUs on
 * the host only with --share-gpu. false with the reason in why. */
static bool pick_device(const cli_args *a, const rank_state *s, ib_device_kind kind, int count, int *index,
                        char *why, size_t cap)
{
    *index = s->local_rank;
    if (kind != IB_DEVICE_CUDA) return true;
    if (s->local_size > count && !a->share_gpu) {
        snprintf(why, cap,
                 "%d ranks on this host but %d GPU%s: ranks would share a GPU (--share-gpu allows it)",
                 s->local_size, count, count == 1 ? "" : "s");
        return false;
    }
    if (count == 0) {
        snprintf(why, cap, "this host has no GPU");
        return false;
    }
    *index = s->local_rank % count;
    return true;
}

/* This rank's part: open, meet, (rank 0: the first device alone), measure,
 * summarize into s->self. A rank that fails still meets the others. */
static void rank_measure(cli_args *a, rank_state *s, ib_result_kind kind, int64_t batch, ib_workload **w,
                         ib_fleet_worker *alone)
{
    int count, index = 0;
    char why[256] = "";
    ib_device_kind device = resolve_device(a, &count);
    bool ok = pick_device(a, s, device, count, &index, why, sizeof why);
    ib_status st = ok ? IB_OK : IB_ERR_INVALID_ARG;
    if (ok && (open_worker(a, device, index, (size_t)(s->local_size > 0 ? s->local_size : 1), w) != EXIT_OK ||
               (kind == IB_RESULT_THROUGHPUT && fleet_batch(a, *w, &batch) != EXIT_OK) ||
               set_batches(w, 1, batch) != EXIT_OK)) {
        st = IB_ERR_RUNTIME;
        snprintf(why, sizeof why,
                 "rank %d could not open the model on %s %d (its error is above in its output)", s->rank,
                 device_noun(device), index);
    }
    ib_config cfg = a->cfg;
    cfg.cancel = &cli_cancel_flag;
    bool together = cli_mpi_barrier(s->timeout_s);
    if (s->rank == 0 && st == IB_OK) ib_measure_fleet(w, 1, &cfg, alone, NULL);
    together = cli_mpi_barrier(s->timeout_s) && together;
    if (st == IB_OK && !together) {
        st = IB_ERR_RUNTIME;
        snprintf(why, sizeof why, "a rank did not reach a barrier within %.0f s", s->timeout_s);
    }
    if (st != IB_OK) {
        meet_ranks(s, IB_SYNC_BEFORE_TIMED);
        ib_fleet_worker_failed(st, why, &s->self);
        return;
    }
    cfg.sync = meet_ranks;
    cfg.sync_user = s;
    ib_latency_result r;
    ib_error err = { { 0 } };
    st = ib_measure_latency(*w, &cfg, &r, &err);
    meet_ranks(s, IB_SYNC_BEFORE_TIMED);
    ib_fleet_worker_summarize(&r, ib_workload_get_info(*w), st, &err, &s->self);
    ib_latency_result_free(&r);
}

/* A summary received is another process's bytes: its strings end within
 * their arrays whatever they hold. */
static void terminate_strings(ib_fleet_worker *w)
{
    w->host[sizeof w->host - 1] = w->device[sizeof w->device - 1] = w->name[sizeof w->name - 1] = '\0';
    w->uuid[sizeof w->uuid - 1] = w->pci_bus_id[sizeof w->pci_bus_id - 1] = w->error[sizeof w->error - 1] =
        '\0';
}

/* Rank 0: every rank's summary (its own at 0), those that never came
 * named; then each rank that answered is told whether all did. */
static void gather_summaries(rank_state *s, ib_fleet_worker *all)
{
    bool *received = calloc((size_t)s->size, sizeof *received);
    all[0] = s->self;
    size_t got =
        received ? cli_mpi_gather(all, sizeof *all, s->size, SUMMARY_TAG, s->timeout_s, received) : 0;
    s->all_present = got + 1 == (size_t)s->size;
    char verdict = s->all_present;
    for (int r = 1; r < s->size; r++)
        if (received && received[r]) cli_mpi_send(&verdict, 1, r, VERDICT_TAG, s->timeout_s);
    for (int r = 1; r < s->size; r++) {
        if (received && received[r]) {
            terminate_strings(&all[r]);
            continue;
        }
        char why[160];
        snprintf(why, sizeof why, "no summary from rank %d within %.0f s: the rank died or hung", r,
                 s->timeout_s);
        all[r] = (ib_fleet_worker){ .index = r, .rank = r, .local_rank = -1 };
        ib_fleet_worker_failed(IB_ERR_RUNTIME, why, &all[r]);
    }
    free(received);
}

/* Gathers and reports (out NULL: the outputs were refused, with code:
 * the ranks' summaries are still received, so that none waits). */
static int rank0_report(cli_args *a, rank_state *s, cli_outputs *out, ib_workload *w, ib_result_kind kind,
                        const ib_fleet_worker *alone, int code)
{
    ib_fleet_worker *all = calloc((size_t)s->size, sizeof *all);
    if (!all) {
        if (out) cli_outputs_abort(out);
        return cli_fail(IB_ERR_NO_MEMORY, "out of memory for the ranks' summaries");
    }
    gather_summaries(s, all);
    if (!out) {
        free(all);
        return code;
    }
    ib_workload_info fallback = { 0 };
    snprintf(fallback.model, sizeof fallback.model, "%s", a->model);
    const ib_workload_info *info = w ? ib_workload_get_info(w) : &fallback;
    code = report_fleet(out, all, (size_t)s->size, alone, kind, true, info, &a->cfg);
    free(all);
    return code;
}

static bool rank_setup(cli_args *a, rank_state *s)
{
    const char *var = "";
    cli_mpi_launched(&var);
    char why[300];
    if (a->devices) {
        fprintf(stderr,
                "inferbench: --devices is not taken under MPI: each rank takes the GPU of its local rank\n");
        return false;
    }
    /* INFERBENCH_MPI_LIBRARY: another libmpi than the system's. */
    if (!cli_mpi_load(getenv("INFERBENCH_MPI_LIBRARY"), why, sizeof why)) {
        fprintf(stderr,
                "inferbench: the environment says MPI (%s is set) but %s: install Open MPI or run "
                "without the launcher\n",
                var, why);
        return false;
    }
    if (!cli_mpi_init(&s->rank, &s->size)) {
        fprintf(stderr, "inferbench: MPI_Init failed\n");
        return false;
    }
    cli_mpi_local(&s->local_rank, &s->local_size);
    if (s->local_rank < 0) s->local_rank = s->rank;
    if (s->local_size < 1) s->local_size = s->size;
    s->timeout_s = a->rank_timeout_s;
    s->self = (ib_fleet_worker){ .index = s->rank, .rank = s->rank, .local_rank = s->local_rank };
    gethostname(s->self.host, sizeof s->self.host - 1);
    return true;
}

static int run_mpi(cli_args *a, ib_result_kind kind, int64_t batch)
{
    rank_state s = { 0 };
    if (!rank_setup(a, &s)) return EXIT_BAD_INPUT;
    cli_outputs out = { 0 };
    int code = EXIT_OK;
    if (s.rank == 0) {
        code = cli_prepare_outputs(a, &out);
    } else {
        a->json_path = a->html_path = a->csv_path = a->md_path = NULL;
        a->quiet = true;
    }
    /* A rank whose outputs are refused still takes part: the others wait. */
    ib_workload *w = NULL;
    ib_fleet_worker alone = { .status = IB_ERR_INVALID_ARG };
    rank_measure(a, &s, kind, batch, &w, &alone);
    s.self.index = s.rank;
    if (s.rank != 0) {
        char verdict = 0;
        if (cli_mpi_send(&s.self, sizeof s.self, 0, SUMMARY_TAG, s.timeout_s))
            cli_mpi_recv(&verdict, 1, 0, VERDICT_TAG, s.timeout_s);
        s.all_present = verdict == 1;
    } else {
        alone.index = 0;
        code = rank0_report(a, &s, code == EXIT_OK ? &out : NULL, w, kind, &alone, code);
    }
    ib_workload_destroy(w);
    /* Only rank 0's status tells: a rank ending non-zero would make the
     * launcher abort rank 0 before its report (its error is in it). */
    if (s.rank != 0) code = EXIT_OK;
    /* MPI_Finalize waits for every rank, a dead one too (Open MPI 4 spins
     * there for ever): with one missing, the ranks leave without it. */
    if (!s.all_present) {
        fflush(NULL);
        _exit(code);
    }
    cli_mpi_finalize();
    return code;
}

int cli_run_fleet(cli_args *a, ib_result_kind kind, int64_t batch)
{
    return cli_mpi_launched(NULL) ? run_mpi(a, kind, batch) : run_local(a, kind, batch);
}
