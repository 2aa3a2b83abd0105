/*
 * inferbench: correct latency and throughput measurement of deep-network
 * inference. This is the whole public API: what is not declared here is not
 * API.
 *
 * Conventions
 * - Every call that can fail returns an ib_status (IB_OK is 0, errors are
 *   negative) and, when given a non-NULL ib_error, writes a one-line message
 *   there saying what went wrong.
 * - Handles are opaque; every *_destroy / *_free accepts NULL.
 * - Config structs are filled with defaults by their *_init function first,
 *   so that fields added later keep their defaults for old callers.
 * - Times carry their unit in their name (_ms, _ns, _us). Sizes: _bytes.
 * - The library never prints, exits, or reads the environment.
 */
#ifndef INFERBENCH_H
#define INFERBENCH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IB_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------------ */
/* Status and errors                                                         */
/* ------------------------------------------------------------------------ */

/* Values are frozen once released: add new ones at the end only. */
typedef enum ib_status {
    IB_OK = 0,
    IB_ERR_INVALID_ARG = -1,  /* a bad option, shape or value */
    IB_ERR_IO = -2,           /* a file could not be read or written */
    IB_ERR_MODEL = -3,        /* the model file is missing, empty or invalid */
    IB_ERR_UNSUPPORTED = -4,  /* valid, but not something we can measure */
    IB_ERR_NO_DEVICE = -5,    /* the device asked for is not there */
    IB_ERR_NO_MEMORY = -6,    /* host memory exhausted */
    IB_ERR_DEVICE_OOM = -7,   /* device memory exhausted: expected in searches */
    IB_ERR_RUNTIME = -8,      /* the inference runtime failed during a run */
    IB_ERR_DEVICE_LOST = -9,  /* the GPU context is unusable (sticky error) */
    IB_ERR_INTERRUPTED = -10, /* the caller's cancel flag was raised */
    IB_ERR_INTERNAL = -11,    /* a bug in inferbench */
    IB_ERR_NOT_MET = -12,     /* a goal (latency budget) no candidate meets */
    IB_ERR_DEADLOCK = -13     /* the workload waited on a held stream */
} ib_status;

/* A short, static name of a status ("device out of memory"). Never NULL. */
const char *ib_status_str(ib_status status);

/* Details of the last failure of a call that was handed this struct. */
typedef struct ib_error {
    char message[512];
} ib_error;

/* ------------------------------------------------------------------------ */
/* Statistics                                                                */
/* ------------------------------------------------------------------------ */

/* Fewest samples that have 95% confidence intervals: below 6 even the whole
 * range [min, max] holds the median with less than 95% probability. */
#define IB_STATS_CI_MIN_N 6

/* Summary of a sample. Percentiles use linear interpolation between closest
 * ranks (Hyndman & Fan type 7, numpy's default). ci95_mean is the
 * expanded percentile bootstrap (resamples from a fixed seed: reproducible;
 * its normal form from 100,000 samples), which stays within [min, max], so
 * never below zero for positive durations;
 * ci95_median is the distribution-free interval between two order
 * statistics chosen from the binomial distribution (coverage >= 95%). Both
 * intervals are NaN below IB_STATS_CI_MIN_N samples (docs/method.md). */
typedef struct ib_stats {
    size_t n;
    double mean, std, min, p50, p90, p95, p99, p999, max;
    double cv; /* std / mean; 0 when mean is 0 */
    double ci95_mean[2];
    double ci95_median[2];
    bool ci95_widened; /* an interval narrower than the timer's resolution
                          was widened to +- that resolution (set by the
                          measurements, never by ib_stats_compute) */
} ib_stats;

/* Computes the summary of x[0..n). x is not modified. n == 0 gives
 * IB_ERR_INVALID_ARG. */
ib_status ib_stats_compute(const double *x, size_t n, ib_stats *out);

/* The value at quantile q in [0,1] of sorted[0..n), type-7 interpolation. */
double ib_quantile_sorted(const double *sorted, size_t n, double q);

/* ------------------------------------------------------------------------ */
/* Workloads: the thing measured                                             */
/* ------------------------------------------------------------------------ */

typedef struct ib_workload ib_workload;

typedef enum ib_device_kind {
    IB_DEVICE_AUTO = 0, /* CUDA when a GPU is usable, else CPU */
    IB_DEVICE_CPU = 1,
    IB_DEVICE_CUDA = 2
} ib_device_kind;

#define IB_MAX_RANK 8

/* A value for the symbolic dimensions of one named input: "input:1x3x224x224".
 * A dimension of -1 keeps what the model or the batch option says. */
typedef struct ib_shape_override {
    char name[128];
    int rank;
    int64_t dims[IB_MAX_RANK];
} ib_shape_override;

/* Parses "NAME:D1xD2x...": NAME non-empty, 1..IB_MAX_RANK positive
 * dimensions. */
ib_status ib_shape_parse(const char *text, ib_shape_override *out, ib_error *err);

/* How one named input is filled ("--input NAME=SPEC"). The numbers are
 * kept as written: whether they fit is decided against the input's element
 * type when the model is opened (docs/cli.md, --input). */
typedef enum ib_input_fill {
    IB_INPUT_RANDOM = 0, /* "random": floats uniform in [-1, 1); integers
                            and booleans uniform in {0, 1} */
    IB_INPUT_RANGE,      /* "random:LO..HI": integers uniform in [LO, HI],
                            floats uniform in [LO, HI) */
    IB_INPUT_CONSTANT,   /* "16000", "0.5": every element */
    IB_INPUT_ZEROS,      /* "zeros" */
    IB_INPUT_ONES,       /* "ones" */
    IB_INPUT_FILE        /* "@FILE": raw little-endian values, or a NumPy
                            .npy file (dtype and shape checked) */
} ib_input_fill;

typedef struct ib_input_spec {
    char name[128]; /* the input's name */
    ib_input_fill fill;
    char spec[1024];     /* SPEC as written (what reports record); for
                            IB_INPUT_FILE the path is spec + 1 */
    char lo[64], hi[64]; /* RANGE: the bounds; CONSTANT: lo is the value */
} ib_input_spec;

/* Parses "NAME=SPEC" where SPEC is a number, "random", "random:LO..HI",
 * "zeros", "ones" or "@FILE". Checks the syntax and LO <= HI; the value's
 * fit to the input's type and the file are checked when the model is
 * opened. IB_ERR_INVALID_ARG with a one-line message otherwise. */
ib_status ib_input_spec_parse(const char *text, ib_input_spec *out, ib_error *err);

/* ------------------------------------------------------------------------ */
/* Arithmetic: the math a model runs in (docs/precision.md)                  */
/* ------------------------------------------------------------------------ */

typedef enum ib_math {
    IB_MATH_DEFAULT = 0, /* what the runtime does unasked (on a GPU often
                            TF32 on); stated in every result */
    IB_MATH_FP32 = 1,    /* float32, TF32 off: the strict reference */
    IB_MATH_TF32 = 2,    /* float32 tensors, TF32 matrix arithmetic (GPU) */
    IB_MATH_FP16 = 3,    /* the model converted to float16 (ib_onnx_convert) */
    IB_MATH_BF16 = 4     /* the model converted to bfloat16 */
} ib_math;

/* ------------------------------------------------------------------------ */
/* Backend options: KEY=VALUE settings, as given and as reported             */
/* ------------------------------------------------------------------------ */

/* One --option KEY=VALUE as given. Both strings non-NULL. */
typedef struct ib_backend_option {
    const char *key;
    const char *value;
} ib_backend_option;

#define IB_MAX_OPTIONS 16
#define IB_OPTION_KEY_LEN 32   /* bytes of a key, with its NUL */
#define IB_OPTION_VALUE_LEN 64 /* bytes of a value, with its NUL */

/* The settings a measured workload ran with, as its backend reports them:
 * only those it has (a CPU run reports no GPU settings), each a key
 * and its value in words ("yes", "EXHAUSTIVE", "default"). Recorded in
 * JSON as an object (workload.backend_options, docs/json.md), printed as
 * "key=value", compared key by key. */
typedef struct ib_option_list {
    size_t n;
    struct {
        char key[IB_OPTION_KEY_LEN];
        char value[IB_OPTION_VALUE_LEN];
    } items[IB_MAX_OPTIONS];
} ib_option_list;

/* Sets key to value in list, replacing the value of a key set before, else
 * appending. IB_ERR_INVALID_ARG when key is empty or either string is too
 * long, IB_ERR_NO_MEMORY when the list is full (list unchanged either way). */
ib_status ib_option_list_set(ib_option_list *list, const char *key, const char *value);

/* The value of key in list, or NULL when the list has no such key. */
const char *ib_option_list_get(const ib_option_list *list, const char *key);

typedef struct ib_model_options {
    ib_device_kind device;
    int device_id;
    int64_t batch;                   /* value of the batch dimension; 0 (the
                                        default): not given, the value the
                                        shapes give the batch dimension, else
                                        1. A fixed-batch model refuses a
                                        batch other than its own */
    const ib_shape_override *shapes; /* overrides for symbolic dimensions */
    size_t n_shapes;
    uint64_t seed;                    /* input fill; default 42 */
    size_t device_memory_limit_bytes; /* CUDA arena cap, 0 = none */
    size_t host_memory_limit_bytes;   /* CPU: the memory the runtime's host
                                         arena may take (its max_mem), and the
                                         bound on a batch's inputs and outputs;
                                         past it a run fails with
                                         IB_ERR_DEVICE_OOM instead of being
                                         killed. 0 = half of physical memory */
    const ib_input_spec *inputs;      /* how named inputs are filled; the
                                         others: IB_INPUT_RANDOM. A name the
                                         model lacks, or given twice, is
                                         IB_ERR_INVALID_ARG at open */
    size_t n_inputs;
    ib_math math; /* the arithmetic (default: the runtime's
                     own, stated in the info); fp16/bf16
                     convert the model in memory */
    /* The backend's own settings as KEY=VALUE pairs, in order (a later
     * one wins), as `--option` gives them: each backend declares its keys
     * (ib_backend.options, `inferbench backends`). An unknown key or a bad
     * value is IB_ERR_INVALID_ARG at open, naming it. Not owned. */
    const struct ib_backend_option *options;
    size_t n_options;
    /* The backend that opens the model, by name (a built-in one or a
     * plugin loaded): NULL, the default (ib_backend_default). Not owned. */
    const char *backend;
} ib_model_options;

void ib_model_options_init(ib_model_options *opts);

/* Opens a model for measurement on the backend opts->backend names (NULL
 * opts, or a NULL name: the default backend). `model` is what that backend
 * reads: for the default one a file path or "zoo:NAME" (optionally
 * "zoo:NAME?fp16") for a built-in architecture. The workload is prepared
 * and the inputs of opts->batch are allocated and filled; nothing is run
 * yet. A backend that reads no model options (ib_backend_takes_model_options
 * false) gets device, device_id, batch, seed and options through its table;
 * shapes, inputs, math or memory limits given to it are IB_ERR_INVALID_ARG
 * naming the first. An unknown backend name: IB_ERR_INVALID_ARG. */
ib_status ib_workload_open_model(const char *model, const ib_model_options *opts, ib_workload **out,
                                 ib_error *err);

/* A CUDA kernel that spins for duration_us on the device (calibration). */
ib_status ib_workload_open_spin_kernel(double duration_us, int device_id, ib_workload **out, ib_error *err);

void ib_workload_destroy(ib_workload *w);

typedef struct ib_tensor_info {
    char name[128];
    char type[16]; /* "float32", "float16", "int64", ... */
    int rank;
    int64_t dims[IB_MAX_RANK];       /* as bound for the current batch */
    char dim_names[IB_MAX_RANK][32]; /* symbolic names, "" where fixed */
    char values[256];                /* inputs: how they are filled ("random",
                                        "random:0..30521", "16000", "zeros", "@x.npy"),
                                        cut at 255 bytes; "" for outputs */
} ib_tensor_info;

#define IB_MAX_TENSORS 16

typedef struct ib_workload_info {
    char model[256];   /* path or zoo name */
    char provider[64]; /* what in the backend runs the model: "spin-kernel"... */
    ib_device_kind device;
    int64_t batch;      /* current batch */
    bool has_batch_dim; /* false: a fixed-batch model */
    int n_inputs, n_outputs;
    ib_tensor_info inputs[IB_MAX_TENSORS];
    ib_tensor_info outputs[IB_MAX_TENSORS];
    double flops_per_item; /* 0 when unknown */
    /* How the runtime was set up: results taken otherwise are not like for
     * like (compare says so key by key). Only the settings this backend
     * has, each with the value in effect (the default too). */
    ib_option_list options;
    char math[8];       /* the arithmetic in effect: "fp32", "tf32",
                           "fp16", "bf16" */
    bool math_default;  /* math was not asked: the runtime's default */
    bool math_of_model; /* math is the model's own (a float16 model): it
                           has no float32 to be judged against */
} ib_workload_info;

const ib_workload_info *ib_workload_get_info(const ib_workload *w);

/* Re-binds the workload for another batch size (untimed). Device out of
 * memory gives IB_ERR_DEVICE_OOM and leaves the workload usable at a smaller
 * batch. */
ib_status ib_workload_set_batch(ib_workload *w, int64_t batch, ib_error *err);

/* ------------------------------------------------------------------------ */
/* Environment: what machine state the numbers were taken in                 */
/* ------------------------------------------------------------------------ */

typedef struct ib_gpu_sample {
    double t_ms; /* since the start of the measurement */
    int pstate;  /* 0 = P0 (max performance); -1 unknown */
    unsigned sm_clock_mhz, mem_clock_mhz;
    unsigned temperature_c;
    double power_w;
    unsigned long long throttle_reasons; /* NVML clocks-event reason bits */
} ib_gpu_sample;

#define IB_MAX_GPU_SAMPLES 512

/* A process seen on the GPU (NVML's compute processes). */
#define IB_MAX_OTHER_PROCESSES 16
typedef struct ib_process_info {
    unsigned pid;                        /* as NVML gives it */
    char name[32];                       /* /proc/PID/comm; "?" where not visible (another
                                            PID namespace) */
    unsigned long long gpu_memory_bytes; /* 0 unknown */
} ib_process_info;

/* The runtime a backend ran the model on, as the backend reports it
 * (docs/json.md, environment.runtime). Strings are "" where it does not
 * say: a plugin reports its name and provider only. */
typedef struct ib_runtime_info {
    char name[32];     /* the backend's name */
    char version[32];  /* the runtime's version; "" when it cannot be loaded */
    char library[256]; /* the file the runtime was loaded from */
    char build[16];    /* what that build can run on: "cuda", "cpu" */
    char provider[64]; /* what ran the model (ib_workload_info.provider) */
} ib_runtime_info;

typedef struct ib_env {
    char tool_version[32];
    char host_cpu[128];
    char gpu_name[128]; /* "" without a GPU */
    char driver_version[32];
    int cuda_driver_version; /* e.g. 13000; 0 unknown */
    int cuda_runtime_version;
    ib_runtime_info runtime; /* what ran the model, as its backend says */
    int persistence_mode;    /* 1 on, 0 off, -1 unknown */
    unsigned sm_clock_max_mhz, mem_clock_max_mhz;
    unsigned long long l2_cache_bytes;
    bool nvml_available;
    char nvml_note[128]; /* why GPU state is missing, if it is */
    /* Which GPU gpu_name is (the JSON's environment.devices[0]): */
    int gpu_index;           /* CUDA device index; -1 without a GPU */
    char gpu_uuid[96];       /* NVML's "GPU-..."; "" unknown */
    char gpu_pci_bus_id[32]; /* "0000:3b:00.0"; "" unknown */
    size_t n_gpu_samples;    /* [0] before, [n-1] after, others during */
    ib_gpu_sample gpu_samples[IB_MAX_GPU_SAMPLES];
    /* Other work on the machine while the runs were timed (docs/gpu.md,
     * "A shared device"). */
    size_t n_other_gpu_processes; /* other compute processes NVML listed on
                                     this GPU before or during the timed runs */
    ib_process_info other_gpu_processes[IB_MAX_OTHER_PROCESSES];
    double load_average_1m; /* /proc/loadavg before the timed runs; NaN unknown */
    int n_cpus;             /* online CPUs; 0 unknown */
    double other_cpu_cores; /* CPU time the other processes took during the
                               timed runs, in cores (1.0: one core busy
                               throughout); NaN unknown */
    int gpu_numa_node;      /* the GPU's NUMA node (sysfs of its PCI
                               device); -1 unknown */
    double power_limit_w;   /* NVML's enforced power limit; 0 unknown */
    int n_cpus_allowed;     /* cores this process may run on
                               (sched_getaffinity); 0 unknown */
    int threads;            /* CPU threads the runtime was asked for (its
                               "threads" option); 0: its default */
} ib_env;

/* The machine's static facts (CPU, and the GPU device_id if
 * one is usable: name, driver, CUDA versions, clocks). *has_gpu tells
 * whether a usable CUDA GPU was found. Never fails. */
void ib_env_probe(int device_id, ib_env *env, bool *has_gpu);

/* The usable CUDA devices, in CUDA's order (device 0 first): returns how
 * many there are (0 without a GPU, a driver or a CUDA build) and puts the
 * names of the first cap of them into names (NULL with cap 0: the count
 * alone). Never fails. */
#define IB_DEVICE_NAME_LEN 128
size_t ib_cuda_devices(char (*names)[IB_DEVICE_NAME_LEN], size_t cap);

/* The compute processes other than this one that NVML lists on CUDA device
 * device_id, at most cap into out; *n how many were seen (it may exceed
 * cap). self_on_gpu: this process holds a context there, so when NVML lists
 * processes of another PID namespace (a container) one of those not
 * visible here is this process and is left out. IB_ERR_UNSUPPORTED with
 * the reason when NVML cannot tell. */
ib_status ib_gpu_other_processes(int device_id, bool self_on_gpu, ib_process_info *out, size_t cap, size_t *n,
                                 ib_error *err);

/* Trust warnings raised by a measurement; a bit set. */
enum {
    IB_WARN_THROTTLED = 1u << 0,       /* a throttle reason other than idle was seen */
    IB_WARN_CLOCK_DROP = 1u << 1,      /* SM clock fell >10% below its start */
    IB_WARN_LOW_POWER_START = 1u << 2, /* not in P0 (or low clock) at start */
    IB_WARN_HIGH_CV = 1u << 3,         /* coefficient of variation > 5% */
    IB_WARN_FEW_SAMPLES = 1u << 4,     /* fewer than 30 samples */
    IB_WARN_BIMODAL = 1u << 5,         /* the samples form two clusters */
    IB_WARN_NOT_STEADY = 1u << 6,      /* warm-up cap reached before steady */
    IB_WARN_PRECISION_NOT_MET = 1u << 7,
    IB_WARN_HOST_BOUND = 1u << 8,         /* the GPU waited for the host: runs as they are
                                             read more than with their launch held, by
                                             more than the two medians' intervals and
                                             2% */
    IB_WARN_THREADS_OVER_CORES = 1u << 9, /* a CPU run asked for more threads than
                                             the cores this process may use
                                             (ib_env.threads, n_cpus_allowed) */
    /* Bits from 20 on: the sessions' warnings (kept apart from the bits
     * above, which other work may extend). */
    IB_WARN_SESSION_DEPENDENT = 1u << 20,   /* one session of a setup known to vary
                                              between sessions: an autotuning backend
                                              (IB_CAP_AUTOTUNED), a launch-bound run */
    IB_WARN_SESSIONS_INCOMPLETE = 1u << 21, /* sessions failed or were cut short */
    IB_WARN_GPU_SHARED = 1u << 22,          /* other processes computed on the GPU */
    IB_WARN_CPU_BUSY = 1u << 23             /* the CPU was busy with other work */
};

/* Accuracy of a reduced arithmetic against strict fp32 (docs/precision.md;
 * ib_measure_accuracy below). */
typedef struct ib_output_accuracy {
    char name[128];
    bool compared;        /* false: skipped (why says why) */
    char why[128];        /* a non-float output, shapes that differ */
    size_t n;             /* elements compared */
    double max_abs_error; /* max |value - reference| */
    double max_rel_error; /* max |value - reference| / |reference| over the
                             elements whose reference is not 0 (0 if none) */
    double mean_abs_error;
    double cosine;         /* of the two as vectors; 1 when both are 0,
                              0 when one is; NaN when a value is not finite */
    bool class_scores;     /* shaped [batch, C], C >= 2: top-k below */
    double top1_agreement; /* share of rows whose arg max is the same */
    double top5_agreement; /* share of rows whose top-5 classes (top-C
                              when C < 5) are the same set */
    double top1_gap;       /* among the rows whose arg max differs, the
                              largest gap between the reference's 1st and
                              2nd scores: how close the calls were that
                              the error reversed (NaN when every row
                              agrees) */
    double top5_gap;       /* the same for the top-5 set: the reference's
                              5th and 6th scores (NaN when every row
                              agrees) */
    bool over_tolerance;   /* max_abs_error above the tolerance */
} ib_output_accuracy;

/* Energy over a measurement's window (docs/energy.md): read from the
 * hardware's cumulative energy counter between two of its changes, or,
 * without a counter, integrated from the sampled power; always with its
 * bound. A window too short for a bound of IB_ENERGY_MAX_BOUND or less has
 * no figure (source NONE) and note says why. */
typedef enum ib_energy_source {
    IB_ENERGY_NONE = 0,    /* no figure: note says why */
    IB_ENERGY_COUNTER = 1, /* the energy counter */
    IB_ENERGY_SAMPLED = 2, /* the sampled power integrated over time */
} ib_energy_source;

#define IB_ENERGY_MAX_BOUND 0.05

typedef struct ib_energy {
    ib_energy_source source;
    bool aligned;                      /* both ends of the window are counter changes */
    double window_ms;                  /* what the energy is over */
    double items;                      /* inputs (or tokens) done in the window */
    double joules;                     /* over the window */
    double joules_per_item;            /* joules / items */
    double items_per_joule;            /* items / joules */
    double power_w;                    /* joules / window: the average power */
    double bound;                      /* relative: each figure is within +- bound
                                          of its value (0.01: 1%) */
    double step_ms;                    /* the longest the counter went without changing,
                                          as learned before the window; NaN unknown */
    double idle_power_w;               /* measured before the timed phase; NaN unknown */
    double joules_above_idle;          /* joules - idle power x window: the work's own */
    double joules_per_item_above_idle; /* NaN without the idle power */
    double power_limit_fraction;       /* power_w over the GPU's enforced power
                                          limit; NaN unknown (0.95 and more:
                                          the card was power-capped) */
    double timed_ms_per_item;          /* the timed runs' median per input (or
                                          token), beside window_ms / items: a
                                          window that ran slower counts the time
                                          between runs too; NaN not stated */
    char counter[96];                  /* what was read */
    char note[224];                    /* NONE: why no figure; SAMPLED: how it was got */
} ib_energy;

typedef struct ib_accuracy {
    bool measured;
    char math[8];        /* the arithmetic judged ("tf32", "fp16"...) */
    char reference[32];  /* what it is judged against: "fp32, TF32 off" */
    int64_t batch;       /* of the inputs both ran on */
    double tolerance;    /* largest max_abs_error accepted; 0: none */
    bool over_tolerance; /* some output is over it */
    int n_outputs;
    ib_output_accuracy outputs[IB_MAX_TENSORS];
    /* What the check took on the host clock: the reference opened, both
     * run and compared (ib_measure_accuracy sets it, a failed check too). */
    double ms;
} ib_accuracy;

/* ------------------------------------------------------------------------ */
/* Latency                                                                   */
/* ------------------------------------------------------------------------ */

/* Progress of a measurement, for a caller that shows it while it runs (the
 * library itself never prints). */
typedef enum ib_phase {
    IB_PHASE_COLD_RUN, /* the first run (at a batch), kept apart */
    IB_PHASE_WARMUP,
    IB_PHASE_SAMPLING,     /* timed runs, one at a time */
    IB_PHASE_BACK_TO_BACK, /* throughput: runs timed back-to-back */
    IB_PHASE_BATCH_PROBE,  /* throughput: does a batch fit? */
    IB_PHASE_SERVING       /* serve: requests of one rate (done, total: requests) */
} ib_phase;

/* "cold run", "warm-up", "sampling", "back-to-back", "probe", "serving". */
const char *ib_phase_name(ib_phase phase);

typedef struct ib_progress {
    ib_phase phase;
    int64_t done;          /* runs done in this phase (probes: done so far) */
    int64_t total;         /* runs this phase takes; 0 when not known */
    double elapsed_ms;     /* since the measurement began */
    double eta_ms;         /* time this phase has left; NaN when not known */
    bool eta_is_bound;     /* eta_ms is a cap (adaptive stopping, warm-up until
                              steady), not an estimate */
    int64_t batch;         /* the batch being run */
    int64_t step, steps;   /* of a measurement in parts, 1-based (throughput's
                              candidate batches, pitfalls' rows, calibrate's
                              points); 0 when none */
    const char *step_name; /* "candidate", a pitfall row's name, "spin 50 us";
                              NULL when none. Valid during the call only. */
    double rate;           /* serve: the step's offered rate, requests/s; 0
                              otherwise (a closed loop, another command) */
    double total_eta_ms;   /* the whole measurement's time left: an estimate,
                              or a cap when total_eta_is_bound (its time
                              bound leaves less); NaN when not known (only
                              throughput estimates it) */
    bool total_eta_is_bound;
} ib_progress;

/* Called between runs, never inside a timed region: at each phase's start
 * and then at most every IB_PROGRESS_PERIOD_MS of the workload's clock. */
typedef void (*ib_progress_fn)(const ib_progress *p, void *user);
#define IB_PROGRESS_PERIOD_MS 100.0

typedef struct ib_config {
    int64_t warmup_runs;        /* at least this many warm-up runs (default 10) */
    double warmup_ms;           /* and at least this long (default 500) */
    bool warmup_until_steady;   /* and until steady (default true) */
    double warmup_max_ms;       /* cap on warm-up time (default 10000) */
    int64_t runs;               /* timed runs with a fixed count (default 300) */
    double precision;           /* > 0: adaptive stopping, relative half-width of
                                   the median's 95% CI (e.g. 0.005); 0 = off */
    int64_t min_runs;           /* adaptive: at least (default 30) */
    int64_t max_runs;           /* adaptive: at most (default 100000) */
    double max_time_ms;         /* adaptive: time cap (default 30000) */
    bool flush_l2;              /* overwrite the L2 cache before each run */
    bool exclude_launch;        /* hold the stream until the run is queued */
    bool sample_gpu_state;      /* NVML before/during/after (default true) */
    bool measure_energy;        /* the energy counter's figures (default true;
                                   docs/energy.md): its step and the idle
                                   power learned before the cold run, the
                                   window's ends aligned on its changes */
    const volatile int *cancel; /* nonzero: stop as soon as possible */
    ib_progress_fn progress;    /* NULL (default): no progress reports */
    void *progress_user;        /* handed to progress */
    /* Several workers measured together (docs/fleet.md): when set, called
     * right before the first timed run (IB_SYNC_BEFORE_TIMED: the workers'
     * barrier) and right after the last (IB_SYNC_AFTER_TIMED); a status
     * other than IB_OK stops the measurement with it. NULL: not called. */
    ib_status (*sync)(void *user, int point);
    void *sync_user;
} ib_config;

enum { IB_SYNC_BEFORE_TIMED = 0, IB_SYNC_AFTER_TIMED = 1 };

void ib_config_init(ib_config *cfg);

typedef struct ib_latency_result {
    bool partial;          /* stopped early (error or cancel): what is here was measured */
    ib_status stop_status; /* why it stopped early, IB_OK otherwise */
    bool has_device_timer; /* device_ms is filled (CUDA events) */
    double cold_host_ms;   /* the first run, host wall time */
    double cold_device_ms; /* the first run, device time (NaN without) */
    int64_t warmup_runs_done;
    double warmup_ms_spent;
    bool warmup_steady; /* the steady-state rule was met */
    size_t n;           /* timed samples */
    double *device_ms;  /* [n], NULL without a device timer */
    double *host_ms;    /* [n] host wall time of the same runs */
    ib_stats device;    /* over device_ms */
    ib_stats host;      /* over host_ms */
    double precision_target;
    double precision_achieved; /* relative half-width of the median CI */
    bool precision_met;
    double launch_overhead_ms;       /* with exclude_launch: per-run launch cost
                                        measured, host_wait_plain's median less
                                        host_wait_held's (NaN otherwise) */
    bool launch_bound;               /* that cost exceeds the run's median and the
                                        runs are not replayed from a captured graph
                                        (IB_CAP_GRAPH_CAPTURE): one launch a run
                                        would lift it */
    double timer_resolution_ms;      /* of the primary timer (device events
                                        when there are, else the host clock):
                                        its intervals are never narrower than
                                        +- this; NaN when unknown */
    double host_timer_resolution_ms; /* of the host clock (host statistics) */
    unsigned warnings;               /* IB_WARN_* bits */
    ib_env env;
    ib_accuracy accuracy; /* set by the caller (ib_measure_accuracy) to be
                             reported beside the timings; zeroed here */
    double *end_ms;       /* [n]: when each timed run ended, in ms on the
                             workload's clock from the start of the timed
                             phase (after cfg->sync's barrier); owned */
    /* Whether the GPU waited for the host (docs/method.md, "Host-bound"):
     * on a workload that can hold its stream, after the timed runs, pairs
     * of runs one as it is and one with its launch held (the stream held
     * until the run is queued), device-timed: their statistics (n 0: not
     * checked); host_wait_ms the difference of their medians when the
     * lower end of the plain runs' median CI lies above the upper end of
     * the held runs' (the GPU waited), 0 when not, NAN when not checked;
     * host_bound when that wait is over 5% of the held median (the figure
     * follows the host's speed). */
    ib_stats host_wait_plain, host_wait_held;
    double host_wait_ms;
    bool host_bound;
    ib_energy energy;     /* the device's over the timed runs (with the runs
                             that align the window's ends): per input */
    ib_energy cpu_energy; /* the CPU package's (RAPL) over the same window */
} ib_latency_result;

/* Measures the latency of w at its current batch: one cold run, warm-up,
 * then timed runs. On a failure after the first timed sample, the result
 * holds what was measured (partial = true) and the error is returned. The
 * result must be released with ib_latency_result_free whatever the status. */
ib_status ib_measure_latency(ib_workload *w, const ib_config *cfg, ib_latency_result *out, ib_error *err);

void ib_latency_result_free(ib_latency_result *r);

/* Reports of a latency result: a table for people, a JSON document for
 * machines (docs/json.md). Both strings are malloc'ed (ib_free); NULL when
 * memory ran out. cfg is the configuration the result was measured with. */
char *ib_latency_report_text(const ib_latency_result *r, const ib_workload_info *info);
char *ib_latency_report_json(const ib_latency_result *r, const ib_workload_info *info, const ib_config *cfg);

/* A self-contained HTML page of a latency result (docs/report.md): the
 * header, the statistics, the warnings, a histogram of the timed samples
 * (device time when there is one) with the median and p99 marked, the
 * samples in run order, and the text report. Inline CSS and SVG only: no
 * script, nothing fetched. malloc'ed (ib_free); NULL when memory ran out. */
char *ib_latency_report_html(const ib_latency_result *r, const ib_workload_info *info);

/* ------------------------------------------------------------------------ */
/* Throughput                                                                */
/* ------------------------------------------------------------------------ */

typedef struct ib_throughput_config {
    ib_config run;            /* warm-up per batch, runs per batch (default
                                 100), cancel flag */
    int64_t max_batch;        /* search bound (default 4096) */
    double latency_budget_ms; /* > 0: best throughput whose p99 fits */
    double knee_fraction;     /* knee: smallest batch reaching this share of
                                 the peak (default 0.95) */
    const int64_t *batches;   /* non-NULL: measure exactly these, no search */
    size_t n_batches;
    /* The peak alone, at the fewest new batches (best's race): the search
     * probes max_batch first, and the curve is timed downward from the
     * largest batch, stopping at the first point below knee_fraction of
     * the best one (the peak and its plateau are measured, the slope below
     * them not). Each new batch costs a GPU runtime a new shape's set-up,
     * seconds on some models. Not with a latency budget or a batch list. */
    bool from_top;
    /* The back-to-back figure alone (items_per_s): no runs timed one at a
     * time, so a point has no latency distribution (latency_ms.n 0,
     * items_per_s_sync NaN). Best's screening and finals rank by items_per_s
     * and need nothing else. Not with a latency budget. */
    bool items_only;
    /* The whole measurement's bound on the workload's clock: no batch (a
     * point of the curve) is started that would end more than this after
     * the start, its time judged by the batches timed before it
     * (docs/throughput.md, "When the search stops"); the result is then
     * partial, with stop IB_THROUGHPUT_STOP_TIME_BOUND, and the status
     * IB_OK. The first batch always runs. Default 300000; 0: none. */
    double max_time_ms;
} ib_throughput_config;

void ib_throughput_config_init(ib_throughput_config *cfg);

typedef struct ib_batch_probe {
    int64_t batch;
    bool fits;
    ib_status status; /* why it did not fit: DEVICE_OOM, or RUNTIME /
                         UNSUPPORTED (the runtime refused the size) */
    double ms;        /* wall time of the probe */
} ib_batch_probe;

typedef struct ib_throughput_point {
    int64_t batch;
    ib_status status;        /* IB_OK, or why this batch has no figures */
    double items_per_s;      /* back-to-back: runs x batch / device time of all */
    double items_per_s_sync; /* classic: per-run synchronized, summed */
    double back_to_back_ms_per_run;
    ib_stats latency_ms; /* per-run synchronized batch latency */
    double first_run_ms; /* the first run at this batch, host wall time:
                            a new shape's set-up, in no figure */
    int64_t warmup_runs; /* warm-up after it */
    bool warmup_steady;  /* false: the warm-up hit its cap first */
    ib_energy energy;    /* back-to-back runs' own window: per input */
} ib_throughput_point;

#define IB_MAX_PROBES 96
#define IB_MAX_POINTS 256

/* Why the measurement stopped adding batches (docs/throughput.md, "When
 * the search stops"). */
typedef enum ib_throughput_stop {
    IB_THROUGHPUT_STOP_DONE = 0, /* every candidate timed: a batch list, a
                                    fixed batch, or a search that ended at
                                    memory's or max_batch's limit */
    /* the growth stopped past the peak: the last two batches it timed
     * both lie, interval and all, below the knee fraction of the peak's
     * interval's lower end (a rate's interval: its per-run median's 95%
     * CI, as a rate) */
    IB_THROUGHPUT_STOP_PAST_PEAK,
    IB_THROUGHPUT_STOP_TIME_BOUND /* the next batch would have ended past
                                     max_time_ms (the result is partial) */
} ib_throughput_stop;

/* "done", "past the peak", "time bound". Never NULL. */
const char *ib_throughput_stop_name(ib_throughput_stop stop);

typedef struct ib_throughput_result {
    bool partial;
    ib_status stop_status;
    bool searched;             /* false: fixed batch model or explicit list */
    int64_t largest_fitting;   /* largest batch that ran (search), else 0 */
    bool limited_by_max_batch; /* the search stopped at max_batch, not memory */
    bool search_stopped;       /* the search failed or was interrupted before
                                  its answer: largest_fitting is what fit so
                                  far (points timed by then are kept) */
    ib_throughput_stop stop;   /* why no more batches were timed */
    double stop_ms;            /* when: the workload's clock since the start */
    int64_t stop_next_batch;   /* the batch not timed (STOP_TIME_BOUND, and
                                  STOP_PAST_PEAK: the growth's next); 0 none */
    double stop_next_ms;       /* STOP_TIME_BOUND: that batch's estimated time */
    double max_time_ms;        /* the bound it ran under (0: none) */
    double knee_fraction;      /* the band of the knee and of STOP_PAST_PEAK */
    char limit_reason[256];    /* the runtime's words at the last batch that
                                  did not fit */
    size_t n_probes;
    ib_batch_probe probes[IB_MAX_PROBES];
    double search_ms;
    double sweep_ms;
    size_t n_points;
    ib_throughput_point points[IB_MAX_POINTS];
    int peak; /* index into points, -1 none */
    int knee;
    int best_within_budget; /* -1: none, or no budget */
    int most_efficient;     /* the most inputs per joule: index into points,
                               -1 none (no point with an energy figure) */
    double latency_budget_ms;
    double timer_resolution_ms; /* of the timer of the per-run latencies: their
                                   intervals are never narrower than +- this;
                                   NaN when unknown */
    unsigned warnings;
    ib_env env;
    ib_accuracy accuracy; /* as in ib_latency_result */
} ib_throughput_result;

/* Finds the largest batch that fits (geometric growth, then bisection; a
 * device out-of-memory is an expected answer of a probe), times the
 * candidate batches (powers of two up to it, and it), and picks the peak,
 * the knee and the best within budget. No batch within the budget gives
 * IB_ERR_NOT_MET with the result complete. The result owns no memory. */
ib_status ib_measure_throughput(ib_workload *w, const ib_throughput_config *cfg, ib_throughput_result *out,
                                ib_error *err);

char *ib_throughput_report_text(const ib_throughput_result *r, const ib_workload_info *info);
char *ib_throughput_report_json(const ib_throughput_result *r, const ib_workload_info *info,
                                const ib_throughput_config *cfg);
/* A self-contained HTML page of a throughput result (docs/report.md):
 * inputs/s against batch on a log2 axis, back-to-back and per-run
 * synchronized, peak and knee marked, the table of points, and the text
 * report. malloc'ed (ib_free); NULL when memory ran out. */
char *ib_throughput_report_html(const ib_throughput_result *r, const ib_workload_info *info);

/* ------------------------------------------------------------------------ */
/* Pitfalls: what classic timing mistakes would report                       */
/* ------------------------------------------------------------------------ */

typedef enum ib_pitfall {
    IB_PITFALL_CORRECT = 0,   /* device-timed, warmed up, resident data */
    IB_PITFALL_HOST_NO_SYNC,  /* host clock read right after an async launch */
    IB_PITFALL_COPIES,        /* host-to-device and back inside the timing */
    IB_PITFALL_NO_WARMUP,     /* fresh session, first runs included */
    IB_PITFALL_SINGLE_SAMPLE, /* one run taken as the answer */
    IB_PITFALL_ZERO_INPUT,    /* the correct method on zero-filled inputs */
    IB_PITFALL_TF32,          /* TF32 taken for fp32: the arithmetic the correct
                                 row did not use (strict fp32 when it ran in TF32,
                                 the runtime's default; TF32 when it was strict) */
    IB_PITFALL_COUNT
} ib_pitfall;

/* How a pitfall row reads against the correct figure: a row is a
 * comparison of two measurements, judged by their 95% interval
 * (docs/pitfalls.md, "Reading a row"). */
typedef enum ib_pitfall_reading {
    IB_READING_NOT_COMPARED = 0, /* the reference itself, a spread, a row not measured */
    IB_READING_WITHIN_NOISE,     /* the interval holds 0: no difference shown */
    IB_READING_LOW,              /* the interval lies below 0 (a row read off the
                                    correct runs themselves: its figure, exactly) */
    IB_READING_HIGH,             /* ... above 0 */
    IB_READING_NO_INTERVAL,      /* no interval (no_interval says why): not judged */
} ib_pitfall_reading;

/* "not compared", "within noise", "reads low", "reads high", "no interval".
 * Never NULL. */
const char *ib_pitfall_reading_name(ib_pitfall_reading reading);

typedef struct ib_pitfall_row {
    ib_pitfall kind;
    const char *name;           /* "host clock, no sync" */
    const char *why;            /* one line: why it is wrong */
    bool applies;               /* false: not a mistake one can make here */
    const char *not_applicable; /* why not, when !applies */
    ib_status status;           /* IB_OK, or why it could not be measured */
    char error[256];
    ib_stats stats;   /* of what the method reports, ms */
    double error_pct; /* median vs the correct median, percent */
    /* The 95% interval of error_pct: ib_compare_samples' bootstrap of the
       medians' change, the correct samples as A, this row's as B (NaN
       without one), how the row reads by it, and why there is none. The
       why above is chosen by the reading and the device. */
    double error_ci95_pct[2];
    ib_pitfall_reading reading;
    const char *no_interval;
    /* single sample only: */
    double single_p5_pct, single_p95_pct; /* 5th..95th percentile of one-run
                                             error, percent */
    double single_off_5pct;               /* share of single runs off by > 5% */
    /* TF32 only: its stats are of the arithmetic the correct row did not
       use (math: "fp32" when the reference ran in TF32, else "tf32"), so
       that error_pct is against the correct median as in every other row;
       the medians with TF32 off and on, both measured here in fresh
       sessions, and what TF32 changes in the outputs against TF32 off. */
    double tf32_off_median_ms;
    double tf32_max_abs_error, tf32_max_rel_error;
    double tf32_on_median_ms;
    char math[8];
} ib_pitfall_row;

/* The energy mistakes, on the user's model (docs/energy.md): beside the
 * correct figure (the counter over the correct runs, the window's ends on
 * its changes), what power read at a few points times the elapsed time,
 * and the counter read around a window shorter than its step, report. */
typedef struct ib_energy_pitfall {
    ib_energy correct;        /* the correct row's */
    bool applies;             /* false: no energy counter here */
    char not_applicable[224]; /* why, when !applies */
    int sampled_points;       /* power readings used (NVML's, taken during
                                 the correct runs); 0: none (sampled_note) */
    double sampled_joules_per_item, sampled_error_pct;
    char sampled_note[128];
    double short_window_ms; /* the short window: half the counter's step */
    double short_joules_per_item, short_error_pct;
} ib_energy_pitfall;

typedef struct ib_pitfalls_result {
    bool partial;
    ib_status stop_status;
    ib_pitfall_row rows[IB_PITFALL_COUNT];
    ib_energy_pitfall energy;
    unsigned warnings; /* IB_WARN_* of the correct row */
    ib_env env;
    double *correct_ms; /* [n_correct] the correct row's samples (its
                           timing), for the interval across sessions;
                           owned: ib_pitfalls_result_free */
    size_t n_correct;
    /* The arithmetic of the correct row, the reference of every row: "tf32",
       "fp32", "fp16", "bf16" ("" when the backend does not say), and
       whether it is the runtime's default rather than asked for. */
    char reference_math[8];
    bool reference_math_default;
} ib_pitfalls_result;

/* Frees what r owns (the correct row's samples); NULL is fine. */
void ib_pitfalls_result_free(ib_pitfalls_result *r);

/* Measures w the correct way and each wrong way, in this process and on
 * this session. A wrong way that cannot run here is marked, the others
 * still run. Free the result with ib_pitfalls_result_free. */
ib_status ib_measure_pitfalls(ib_workload *w, const ib_config *cfg, ib_pitfalls_result *out, ib_error *err);

char *ib_pitfalls_report_text(const ib_pitfalls_result *r, const ib_workload_info *info);
char *ib_pitfalls_report_json(const ib_pitfalls_result *r, const ib_workload_info *info,
                              const ib_config *cfg);
/* A self-contained HTML page: a chart of what each method reports, the
 * table, the text report (docs/report.md). */
char *ib_pitfalls_report_html(const ib_pitfalls_result *r, const ib_workload_info *info);

/* ------------------------------------------------------------------------ */
/* Calibration: the tool's own accuracy on kernels of known duration         */
/* ------------------------------------------------------------------------ */

typedef struct ib_calibration_point {
    double true_us; /* the spin kernel's duration */
    ib_status status;
    size_t n;
    double median_us;           /* CUDA events around each run */
    double p5_us, p95_us;       /* spread */
    double error_us, error_pct; /* median - true, raw */
    double corrected_error_us;  /* median - harness - true: what is left once
                                   the fixed cost of an empty run, measured
                                   the same way, is taken off */
    double held_median_us;      /* with the stream held (launch excluded) */
    double held_error_us;       /* raw */
    double held_corrected_error_us;
    double launch_overhead_us; /* median - held median */
    double host_median_us;     /* host wall time of the same runs */
} ib_calibration_point;

#define IB_MAX_CALIBRATION_POINTS 16

typedef struct ib_calibration_result {
    bool partial;
    ib_status stop_status;
    size_t n_points;
    ib_calibration_point points[IB_MAX_CALIBRATION_POINTS];
    ib_calibration_point harness; /* an empty kernel (true_us 0): the fixed
                                     cost of one timed run, plain and held */
    double timer_resolution_us;   /* smallest interval between two events with
                                     nothing between them */
    unsigned warnings;
    ib_env env;
} ib_calibration_result;

/* Measures spin kernels of durations_us (NULL: 5 us to 100 ms) on device_id
 * with cfg (runs are capped so that each point takes about a second), with
 * and without launch-overhead exclusion, plus the harness's own overhead (an
 * empty kernel, measured both ways) and the timer's resolution. */
ib_status ib_calibrate(int device_id, const ib_config *cfg, const double *durations_us, size_t n,
                       ib_calibration_result *out, ib_error *err);

char *ib_calibration_report_text(const ib_calibration_result *r);
char *ib_calibration_report_json(const ib_calibration_result *r, const ib_config *cfg);

/* ------------------------------------------------------------------------ */
/* The scripted streaming server (issue 37): an OpenAI-compatible endpoint  */
/* on loopback whose tokens come at known times, to measure an HTTP client  */
/* (ours or the user's) as the spin kernel measures the GPU timer           */
/* ------------------------------------------------------------------------ */

/* How a scripted request fails (docs/script-server.md). */
typedef enum ib_script_failure {
    IB_SCRIPT_FAIL_NONE = 0,
    IB_SCRIPT_FAIL_HTTP_500 = 1,  /* answers 500 with an OpenAI error body at once */
    IB_SCRIPT_FAIL_RESET = 2,     /* after fail_after_chunks chunks, the connection reset (RST) */
    IB_SCRIPT_FAIL_NO_DONE = 3,   /* the stream ends cleanly without data: [DONE] */
    IB_SCRIPT_FAIL_MALFORMED = 4, /* after fail_after_chunks chunks, one event that is not JSON */
    IB_SCRIPT_FAIL_STALL = 5,     /* after fail_after_chunks chunks, nothing more until the server stops */
    IB_SCRIPT_FAIL_ERROR = 6 /* after fail_after_chunks chunks, an error event ({"error": ...}), the end */
} ib_script_failure;

#define IB_SCRIPT_MAX_GAPS 64

/* What the server does with every POST /v1/completions ("stream": true):
 * its first token ttft_ms after the request arrived, then one every itl_ms
 * (or gaps_ms[0], gaps_ms[1], ... in turn when n_gaps > 0), sent
 * tokens_per_chunk to a chunk (a chunk leaves when its last token is due),
 * max_tokens of them (default_max_tokens when the request names none), at
 * most stop_after_tokens when that is > 0 (fewer than asked:
 * finish_reason "stop"). Another model than `model`: 404. */
typedef struct ib_script {
    double ttft_ms;
    double itl_ms;
    double gaps_ms[IB_SCRIPT_MAX_GAPS];
    int32_t n_gaps;
    int32_t tokens_per_chunk;
    int64_t default_max_tokens;
    int64_t stop_after_tokens;
    char model[128]; /* letters, digits and . _ - : / only */
    ib_script_failure failure;
    int64_t fail_after_chunks; /* for RESET, MALFORMED, STALL */
    int64_t fail_every;        /* 1: every request fails so; n: the n-th, 2n-th, ... to arrive */
    /* nativecompletion: the first request to arrive waits this much more
     * for its first token (a server's cold start, llama-server's first
     * request); 0: none. */
    double cold_start_ms;
    /* endpointrates: a server of this many slots (0: no limit): a stream
     * holds a slot from its start to its last token as scripted, and a
     * request arriving with every slot held starts on the first one free
     * (its times from there), so that its TTFT grows with the load and the
     * server's capacity is known: slots / (ttft + the gaps of a request) */
    int32_t slots;
} ib_script;

/* Defaults: ttft 50 ms, itl 5 ms, one token a chunk, 16 tokens when the
 * request names no max_tokens, no cap, model "script", no failure. */
void ib_script_init(ib_script *s);

typedef struct ib_script_server ib_script_server;

/* Starts serving s on 127.0.0.1 (never another address) on a free port
 * (ib_script_server_port says which). A bad script: IB_ERR_INVALID_ARG with
 * one line; a build without libmicrohttpd: IB_ERR_UNSUPPORTED. */
ib_status ib_script_server_start(const ib_script *s, ib_script_server **out, ib_error *err);
int ib_script_server_port(const ib_script_server *srv);
/* Cuts the streams still open, stops, frees. NULL is fine. */
void ib_script_server_stop(ib_script_server *srv);

/* What the server did and when (its own stamps, CLOCK_MONOTONIC in ms, the
 * clock ib's host timings read), to set against what a client saw. */
typedef enum ib_script_stamp_kind {
    IB_SCRIPT_ARRIVED =
        0, /* the whole request read: the script's origin (tokens: the prompt's, -1: none read) */
    IB_SCRIPT_CHUNK = 1,   /* a chunk of `tokens` tokens handed to the socket */
    IB_SCRIPT_USAGE = 2,   /* the final usage chunk */
    IB_SCRIPT_DONE = 3,    /* data: [DONE] */
    IB_SCRIPT_REFUSED = 4, /* an error status answered (tokens: the HTTP status) */
    IB_SCRIPT_BROKEN = 5,  /* the scripted failure mid-stream (reset, malformed event, stall) */
    IB_SCRIPT_ENDED = 6    /* the stream's end handed to the socket */
} ib_script_stamp_kind;

typedef struct ib_script_stamp {
    int64_t request; /* 0, 1, ... in arrival order; the chunks' id is "cmpl-script-REQUEST" */
    ib_script_stamp_kind kind;
    int64_t tokens;
    double planned_ms; /* when the script said (arrival + offset); the arrival's own stamp for the rest */
    double sent_ms;    /* when it happened */
} ib_script_stamp;

/* Copies up to cap stamps (in the order they happened) into out and
 * returns how many there are in all. Safe while the server runs. */
size_t ib_script_server_stamps(ib_script_server *srv, ib_script_stamp *out, size_t cap);

/* The HTTP client's own error (issue 37 item 4): the client of serve
 * --endpoint driven against the scripted server at rising rates, what it
 * measured set against the server's stamps (docs/script-server.md). */
#define IB_MAX_CLIENT_CALIBRATION_POINTS 16

typedef struct ib_client_calibration_config {
    double ttft_ms, itl_ms;                         /* the script (default 20 and 5) */
    int32_t output_tokens;                          /* every request's (default 32) */
    double rates[IB_MAX_CLIENT_CALIBRATION_POINTS]; /* requests/s, in order */
    size_t n_rates;                                 /* default: 8, 16, ... 4096, doubling */
    double seconds_per_rate; /* each rate's schedule span (default 2; at least 20 requests) */
    double bound_ms;         /* accurate while every error's p99 is within (default 1) */
    const volatile int *cancel;
} ib_client_calibration_config;

void ib_client_calibration_config_init(ib_client_calibration_config *cfg);

typedef struct ib_client_calibration_point {
    double rate;                 /* offered, requests/s */
    size_t n_requests, n_failed; /* failed: as the client counted them */
    size_t n_unmatched;          /* completed but not found, or chunks not the server's */
    int64_t streams_max;         /* streams open at once on the server, at most */
    double tokens_per_s;         /* output tokens the server sent, over the span */
    /* Over the matched requests; all in ms: */
    ib_stats lateness;       /* the request read by the server - scheduled: the schedule kept? */
    ib_stats lateness_error; /* |that - the client's own lateness|: what it did not see of it */
    ib_stats ttft_error;     /* |client's TTFT - the server's (first chunk sent - scheduled)| */
    ib_stats itl_error;      /* |a gap between chunks as the client saw it - as the server sent it| */
    bool accurate;           /* nothing failed or unmatched, every p99 within the bound */
} ib_client_calibration_point;

typedef struct ib_client_calibration_result {
    double ttft_ms, itl_ms, bound_ms;
    int32_t output_tokens;
    size_t n_points;
    ib_client_calibration_point points[IB_MAX_CLIENT_CALIBRATION_POINTS];
    /* The highest point accurate with all below it (rate 0: not even the
     * first): the client's ceiling on this machine. */
    double ceiling_rate, ceiling_tokens_per_s;
    int64_t ceiling_streams;
    bool partial;
    ib_status stop_status;
} ib_client_calibration_result;

/* Runs cfg's rates in order, each on a scripted server of its own, until
 * one is not accurate (or the last). Bad settings: IB_ERR_INVALID_ARG; no
 * libmicrohttpd: IB_ERR_UNSUPPORTED; interrupted: IB_ERR_INTERRUPTED with
 * out->partial and the points measured. */
ib_status ib_calibrate_client(const ib_client_calibration_config *cfg, ib_client_calibration_result *out,
                              ib_error *err);
char *ib_client_calibration_report_text(const ib_client_calibration_result *r);
char *ib_client_calibration_report_json(const ib_client_calibration_result *r);

/* ------------------------------------------------------------------------ */
/* Compare: is the change between two latency results real?                  */
/* ------------------------------------------------------------------------ */

/* Which clock a result's samples come from. */
typedef enum ib_timing {
    IB_TIMING_DEVICE_EVENTS = 0, /* CUDA events: samples.device_ms */
    IB_TIMING_HOST_CLOCK = 1     /* host monotonic clock: samples.host_ms */
} ib_timing;

/* "device-events" or "host-clock", as the latency JSON spells it. */
const char *ib_timing_name(ib_timing timing);

/* One session of a multi-session latency result ("sessions.runs" in its
 * JSON, docs/json.md). */
typedef struct ib_latency_session {
    int exit_status;   /* 0: measured; else the process's exit
                          status, or -N when signal N ended it */
    char message[256]; /* why it failed; "" when it did not */
    bool partial;      /* it stopped early */
    size_t n;
    double *samples_ms;                   /* [n] of the result's timing; NULL when the
                                             session failed; owned */
    double joules_per_item, energy_bound; /* its energy.joules_per_item and bound; NaN: none */
} ib_latency_session;

/* A latency result read back from its JSON document ("inferbench.latency/1",
 * docs/json.md): what it measured and its primary samples. Strings are ""
 * and batch 0 where the document does not say. */
typedef struct ib_latency_file {
    char model[256];
    char device[16]; /* "cuda", "cpu" */
    int64_t batch;
    char gpu[128];            /* "" without a GPU */
    char provider[64];        /* environment.runtime.provider */
    char runtime[32];         /* environment.runtime.name */
    char runtime_version[32]; /* environment.runtime.version; "" when the file does not say */
    ib_option_list options;   /* workload.backend_options (schema 2), or
                                 what workload.runtime_options of schema 1
                                 says, in the keys of today's backend */
    char math[32];            /* "fp32", "fp16", "tf32 (runtime default)"...; "" idem */
    char flush_l2[4];         /* "yes", "no"; "" idem */
    char exclude_launch[4];   /* "yes", "no"; "" idem */
    bool partial;             /* the measurement stopped early */
    char stop_reason[128];    /* why, as the document says it ("interrupted",
                                 "sessions incomplete"...); "" when it does not */
    ib_timing timing;         /* device_ms when not null, else host_ms */
    size_t n;
    double *samples_ms;           /* [n], each 1e-6 to 1e9 ms; owned (of every
                                     session together when there are several) */
    size_t n_sessions;            /* 0: one session (no "sessions" member);
                                     else the sessions run, failed ones too */
    ib_latency_session *sessions; /* [n_sessions]; owned */
    size_t sessions_requested;    /* sessions asked for (0: one session) */
    unsigned warnings;            /* IB_WARN_* named in "warnings" */
    double joules_per_item;       /* energy.joules_per_item; NaN when the file has none
                                     (no figure, an older file, a sessions document) */
    double energy_bound;          /* its relative bound (energy.bound); NaN idem */
    /* A sessions document's energy per input across sessions (its
     * sessions.figures "joules_per_item"): geometric mean and 95% interval;
     * NaN without. */
    double sessions_joules_per_item, sessions_joules_ci95[2];
    /* Why there is no energy figure (energy.note; a sessions document's
     * first session's that has none): "" where there is one. */
    char energy_note[224];
} ib_latency_file;

/* Reads a latency result from text[0..len) (no NUL inside). Strict: any
 * other schema, a document without samples, a sample that is not a number
 * from 1e-6 ms (1 ns) to 1e9 ms (11.6 days), more than 1,000,000 samples (or 3,000,000 JSON values in
 * all, refused before parsing, which bounds memory), a metadata key of the
 * wrong type, or text that is not JSON gives IB_ERR_INVALID_ARG and a
 * one-line message starting "not an inferbench latency result: ". out is
 * filled on success and emptied on failure; release it with
 * ib_latency_file_free either way. */
ib_status ib_latency_file_parse(const char *text, size_t len, ib_latency_file *out, ib_error *err);

void ib_latency_file_free(ib_latency_file *f);

typedef enum ib_change {
    IB_CHANGE_NONE = 0,        /* the CI lies within +-threshold: equivalent */
    IB_CHANGE_FASTER = 1,      /* the CI lies entirely below -threshold */
    IB_CHANGE_SLOWER = 2,      /* the CI lies entirely above +threshold */
    IB_CHANGE_INCONCLUSIVE = 3 /* the CI straddles a threshold: more samples needed */
} ib_change;

/* "no change", "faster", "slower", "inconclusive". Never NULL. */
const char *ib_change_name(ib_change change);

#define IB_COMPARE_DEFAULT_THRESHOLD 0.01 /* 1% */
#define IB_COMPARE_MIN_SAMPLES 6
#define IB_COMPARE_RESAMPLES 10000      /* bootstrap resamples */
#define IB_COMPARE_SEED 0x696e666572ull /* fixed: the same inputs, the same CI */

/* A baseline A against a candidate B (docs/compare.md). */
typedef struct ib_comparison {
    ib_stats a, b;         /* of each sample, ms */
    double change;         /* median(B) / median(A) - 1 */
    double change_ci95[2]; /* 95% CI of change: percentile bootstrap */
    double mann_whitney_u; /* pairs (a, b) with a > b, a tie counting 1/2 */
    double mann_whitney_p; /* two-sided: that A and B are one distribution */
    double threshold;      /* smallest relative change that matters */
    ib_change verdict;
    bool two_level; /* change and its CI are of the geometric means
                       of session medians, across sessions
                       (ib_compare_sessions); false: of the runs */
    /* One side of one session, with a known between-session spread
     * (ib_compare_widen): change_ci95 is widened by it and the verdict
     * rests on that; spread_source "": not widened. */
    double between_sd;       /* sd of log times between sessions (0.01: about 1%) */
    size_t between_df;       /* its degrees of freedom (0: taken as known) */
    double runs_ci95[2];     /* the interval of the runs alone, before widening */
    char spread_source[200]; /* where between_sd comes from ("the 5 sessions of B");
                                "" not widened */
} ib_comparison;

/* Compares the samples a[0..na) (baseline) and b[0..nb) (candidate): the
 * relative change of the median, its 95% confidence interval by bootstrap
 * (IB_COMPARE_RESAMPLES resamples from a fixed seed: reproducible), the
 * Mann-Whitney U test, and the verdict against threshold (a fraction in
 * (0, 1), e.g. 0.01). Each sample needs IB_COMPARE_MIN_SAMPLES values, all
 * durations from 1e-6 to 1e9 ms (so that every ratio is finite); otherwise
 * IB_ERR_INVALID_ARG. */
ib_status ib_compare_samples(const double *a, size_t na, const double *b, size_t nb, double threshold,
                             ib_comparison *out, ib_error *err);

/* ------------------------------------------------------------------------ */
/* Sessions: one measurement repeated in fresh processes                     */
/* ------------------------------------------------------------------------ */

/* A measurement repeated in N sessions (each a fresh process: the runtime,
 * its caches, its kernel choices and the CUDA context start anew) varies
 * between sessions as well as between runs; docs/method.md, "Sessions". */
#define IB_SESSIONS_MAX 1000

/* The timed samples of one session, in ms (not owned). */
typedef struct ib_session_sample {
    const double *ms;
    size_t n;
} ib_session_sample;

/* What a set of sessions says together. */
typedef struct ib_sessions_stats {
    size_t k;             /* sessions */
    size_t n;             /* runs in all */
    double geomean_ms;    /* geometric mean of the session medians */
    double ci95_ms[2];    /* 95% CI of geomean_ms: Student's t over the
                             log session medians (each holds its runs'
                             noise too: both levels); NaN below 2
                             sessions */
    double precision;     /* relative half-width of ci95_ms */
    double between_sd;    /* between-session standard deviation of the
                             log times (about a relative sd: 0.02 is
                             2%): one-way random-effects ANOVA; with
                             one run a session, the sd of their logs */
    double within_sd;     /* within-session (run to run), the same way */
    double between_share; /* between variance / total variance, 0..1 */
    double spread;        /* (max - min) of the session medians / geomean_ms */
} ib_sessions_stats;

/* Computes the statistics of k sessions s[0..k) (each at least one sample,
 * every sample a duration from 1e-6 to 1e9 ms; k from 1 to
 * IB_SESSIONS_MAX). IB_ERR_INVALID_ARG otherwise. */
ib_status ib_sessions_compute(const ib_session_sample *s, size_t k, ib_sessions_stats *out, ib_error *err);

/* One session as the program ran it (a fresh process): the latency JSON it
 * wrote (NULL when none) and how it ended. */
typedef struct ib_session_outcome {
    const char *doc; /* its latency --json document, or NULL */
    size_t len;
    int exit_status;     /* 0, the exit status, or -N: signal N */
    const char *message; /* why it failed ("" or NULL when it did not) */
} ib_session_outcome;

/* The latency JSON of one measurement repeated in sessions s[0..k) of the
 * `requested` (docs/json.md, "sessions"): the first measured session's
 * workload, config and environment, the runs of every session pooled, and
 * a "sessions" object with each session and the statistics across them
 * (ib_sessions_compute). Marked partial when a session failed or fewer
 * than requested ran. NULL with err when no session measured anything or
 * a document is not a latency result. malloc'ed (ib_free). */
char *ib_sessions_merge_json(const ib_session_outcome *s, size_t k, size_t requested, ib_error *err);

/* The text report and the HTML page (a strip of session medians with their
 * intervals) of a multi-session result read back by ib_latency_file_parse
 * (f->n_sessions > 0). malloc'ed (ib_free); NULL when memory ran out. */
char *ib_sessions_report_text(const ib_latency_file *f);
char *ib_sessions_report_html(const ib_latency_file *f);

/* Compares two sets of sessions, baseline a[0..ka) and candidate b[0..kb)
 * (each at least 2 sessions): change is the ratio of the geometric means of
 * session medians minus 1, its 95% CI Welch's t on the log session medians
 * of both sides; a.b, the Mann-Whitney test and the stats are over the
 * pooled runs. */
ib_status ib_compare_sessions(const ib_session_sample *a, size_t ka, const ib_session_sample *b, size_t kb,
                              double threshold, ib_comparison *out, ib_error *err);

/* Compares two latency results read back: by their sessions
 * (ib_compare_sessions) when each has at least 2 that measured, else by
 * their runs (ib_compare_samples, the sessions' runs pooled); the report
 * then says that the interval covers one session only. */
ib_status ib_compare_files(const ib_latency_file *a, const ib_latency_file *b, double threshold,
                           ib_comparison *out, ib_error *err);

/* Widens the interval of c (a comparison of runs, not two-level) by a
 * between-session standard deviation of log times, between_sd >= 0,
 * estimated with df degrees of freedom (the sessions it came from less one
 * a result, pooled; 0: known exactly), for sides measured in ka and kb
 * sessions (0 or 1: one session; the runs of k sessions pooled count as
 * k): the 95% half-width of the change's between-session part, Student's
 * t at df (the normal quantile when df is 0) times between_sd sqrt(1/ka +
 * 1/kb), is added to the interval's half-widths in quadrature, on the log
 * scale, and the verdict is judged again on the widened interval. So a
 * change smaller than the spread between sessions is never called faster
 * or slower, and a spread learnt from few sessions widens by more
 * (docs/compare.md, "One session"). source (copied; NULL or "": "a known
 * spread") says where the spread comes from, for the reports.
 * IB_ERR_INVALID_ARG for a two-level comparison, one already widened, or a
 * between_sd that is not a number from 0 to 10. */
ib_status ib_compare_widen(ib_comparison *c, double between_sd, size_t df, size_t ka, size_t kb,
                           const char *source, ib_error *err);

/* The between-session sd of log times of f's sessions that measured
 * (ib_sessions_compute), into *between_sd, and how many, into *k.
 * IB_ERR_INVALID_ARG when fewer than 2 sessions measured. */
ib_status ib_latency_file_spread(const ib_latency_file *f, double *between_sd, size_t *k, ib_error *err);

/* Two between-session sds pooled, each weighted by its degrees of freedom
 * (sessions - 1): sqrt((df1 sd1^2 + df2 sd2^2) / (df1 + df2)); 0 when both
 * df are 0. */
double ib_spread_pooled(double sd1, size_t df1, double sd2, size_t df2);

/* The calibration record (docs/compare.md, "The calibration record"): a
 * small JSON document ("inferbench.spread/1") the program keeps in its
 * state folder, holding for each kind of run (device, GPU, model, batch,
 * arithmetic, timing and backend options) the between-session sd of log
 * times pooled over the multi-session latency results recorded. The
 * library reads and writes the document; the program the file. */
#define IB_SPREAD_RECORD_MAX_KINDS 1000

/* The record doc[0..len) (NULL or len 0: none yet) with f (at least 2
 * sessions that measured) added to its kind. malloc'ed (ib_free); NULL
 * with err when doc is not a record or f has fewer than 2 sessions. */
char *ib_spread_record_add(const char *doc, size_t len, const ib_latency_file *f, ib_error *err);

/* What the record says of f's kind: *between_sd, the df it pools
 * (*sessions: sessions - 1 summed, plus the number of results) and how
 * many results (*results, 0: none of this kind, *between_sd then 0).
 * IB_ERR_INVALID_ARG when doc is not a record. */
ib_status ib_spread_record_find(const char *doc, size_t len, const ib_latency_file *f, double *between_sd,
                                size_t *sessions, size_t *results, ib_error *err);

/* Reports of a comparison: text for people, JSON ("inferbench.compare/1",
 * docs/json.md) for machines, each naming A and B by a_name and b_name
 * (their files) and warning where the two results measured different
 * things (model, batch, device, GPU, provider, timing) or are partial.
 * malloc'ed (ib_free); NULL when memory ran out. */
char *ib_comparison_report_text(const ib_comparison *c, const ib_latency_file *a, const char *a_name,
                                const ib_latency_file *b, const char *b_name);
char *ib_comparison_report_json(const ib_comparison *c, const ib_latency_file *a, const char *a_name,
                                const ib_latency_file *b, const char *b_name);

/* ------------------------------------------------------------------------ */
/* Generation: generative models, token by token (docs/generate.md)          */
/* ------------------------------------------------------------------------ */

/* What changes a generation figure: every setting the result states,
 * filled by the backend at open and after each change of the sequences.
 * Strings are "" where the backend does not know; numbers 0 (or -1 where
 * 0 is a value). */
typedef struct ib_gen_info {
    char model[256];       /* the path or zoo name given */
    char arch[32];         /* "llama" */
    char model_type[64];   /* the runtime's description: "1B F16" */
    char weights_type[16]; /* "F16", "Q8_0", "Q4_K_M" */
    uint64_t n_params;
    uint64_t model_bytes;
    int32_t n_layers, n_embd, n_vocab;
    int32_t n_ctx_train;   /* the context the model was made for */
    ib_device_kind device; /* where the layers run (CUDA when any are offloaded) */
    int device_id;
    int32_t n_gpu_layers; /* layers offloaded to the GPU */
    int32_t n_ctx;        /* the context of the whole cache: n_seq_max x per sequence */
    int32_t n_seq_max;    /* sequences the context holds */
    int32_t n_batch;      /* logical batch: tokens one decode call takes at most */
    int32_t n_ubatch;     /* physical batch: tokens one compute graph takes */
    bool flash_attn;
    char kv_type[16];          /* type of the K and V caches: "f16", "q8_0" */
    uint64_t kv_bytes;         /* memory the KV cache takes */
    int32_t n_threads;         /* CPU threads a decode step uses */
    int32_t n_threads_default; /* what the runtime's own defaults would use */
    int32_t n_cpus_allowed;    /* cores the process may run on (sched_getaffinity) */
    char runtime_version[64];  /* the library's release, as it says */
    char runtime_library[256]; /* the file it was loaded from */
    /* Settings in effect, as --option keys take them (compare reads them). */
    ib_option_list options;
} ib_gen_info;

/* A generative model opened for measurement (its KV cache, its context). */
typedef struct ib__gen ib_gen;

/* Most sequences decoded together that a measurement asks for. */
#define IB_GEN_MAX_SEQUENCES 256
/* Points of the curve over sequences (a list, or the search's). */
#define IB_GEN_MAX_POINTS 64
/* Probes of the search: growth to 256 is 9, its bisection 8 at most. */
#define IB_GEN_MAX_PROBES 24

typedef struct ib_gen_options {
    /* "llama" (the default, NULL) or "fake" (the scripted workload on a
     * virtual clock, for tests: docs/generate.md lists its keys). */
    const char *backend;
    ib_device_kind device; /* AUTO: the GPU when there is one */
    int device_id;
    const ib_backend_option *options; /* the backend's KEY=VALUE pairs, in order; not owned */
    size_t n_options;
    uint64_t seed; /* of the random token ids (default 42) */
    /* Where zoo models are written as GGUF files and found again (a 1B
     * model in float16 is 3 GB): a folder the caller chooses, the library
     * reading no environment. NULL: zoo models are refused. Not owned. */
    const char *cache_dir;
} ib_gen_options;

void ib_gen_options_init(ib_gen_options *opts);

/* Opens model (a GGUF file or zoo:NAME for llama; anything for the fake)
 * on the backend opts names (NULL opts: the defaults). A file that is not
 * a model, the library missing or of another release: IB_ERR_INVALID_ARG
 * or IB_ERR_UNSUPPORTED with one line; out of memory while loading:
 * IB_ERR_DEVICE_OOM. *out is destroyed with ib_gen_destroy. */
ib_status ib_gen_open(const char *model, const ib_gen_options *opts, ib_gen **out, ib_error *err);

/* The settings of g as they are now. */
const ib_gen_info *ib_gen_get_info(const ib_gen *g);

/* What opening g did that its caller should say (the library prints
 * nothing): a zoo model's cached file found damaged and made again; ""
 * when nothing. Owned by g. */
const char *ib_gen_open_note(const ib_gen *g);

/* Releases g; NULL is a no-op. */
void ib_gen_destroy(ib_gen *g);

/* A generative model of the caller's own (a PyTorch model called from
 * Python, a runtime this library does not know), measured by the same
 * method: its operations given as callbacks (docs/generate.md,
 * "Callbacks"). The table is versioned as the backend ABI is: struct_size
 * and version first, initialized with ib_gen_callbacks_init, optional
 * slots NULL. Every slot is given `user` back; a slot that can fail returns
 * an ib_status (anything else is read as IB_ERR_RUNTIME) with a one-line
 * message in err (the library writes one where the slot left it empty).
 * The library calls the slots from the thread that measures, one at a
 * time, and times with the host clock around a call and its synchronize. */
#define IB_GEN_CALLBACKS_VERSION 1u

/* One entry of a mixed batch (ib_gen_callbacks.decode_batch): n_tokens
 * tokens of sequence seq at positions pos..pos+n_tokens-1; logits: the
 * last one's are read (a decode token, or a prompt's last chunk); request:
 * whose prompt (its own ids), positions below shared the ids every request
 * shares (serve --shared-prefix). */
typedef struct ib_gen_batch_entry {
    int32_t seq;
    int32_t pos;
    int32_t n_tokens;
    bool logits;
    uint32_t request;
    int32_t shared;
} ib_gen_batch_entry;

typedef struct ib_gen_callbacks {
    size_t struct_size; /* sizeof(ib_gen_callbacks) of the caller */
    uint32_t version;   /* IB_GEN_CALLBACKS_VERSION */
    void *user;         /* given back to every slot; not owned (destroy may free it) */
    /* Required: empties the KV cache of every sequence (untimed); the next
     * prefill starts at position 0. */
    ib_status (*clear)(void *user, ib_error *err);
    /* Required: feeds n_tokens tokens (ids of the caller's choosing) to
     * sequence seq at positions pos..pos+n_tokens-1; the last token's
     * logits are what synchronize waits for. May return once queued. */
    ib_status (*prefill)(void *user, int32_t seq, int32_t pos, int32_t n_tokens, ib_error *err);
    /* Required: one token for each of sequences 0..n_seqs-1, at position
     * pos (the sequences kept at one length). May return once queued. */
    ib_status (*step)(void *user, int32_t n_seqs, int32_t pos, ib_error *err);
    /* Waits until the work queued has finished (a GPU's stream). NULL: the
     * calls above return once done. */
    ib_status (*synchronize)(void *user, ib_error *err);
    /* Copies sequence 0's cache (positions 0..n_pos-1) to sequences
     * 1..n_seqs-1, untimed. NULL: one sequence only (more sequences are
     * IB_ERR_UNSUPPORTED, the point's answer). */
    ib_status (*fork)(void *user, int32_t n_seqs, int32_t n_pos, ib_error *err);
    /* Makes room for n_seqs sequences of ctx_per_seq tokens (untimed), the
     * cache emptied. What does not fit: IB_ERR_DEVICE_OOM, after freeing
     * what the attempt took (the search's "does not fit"); more than the
     * model allows: IB_ERR_UNSUPPORTED. NULL: a fixed cache, the info's
     * n_seq_max sequences (1 when 0) and n_ctx tokens (any when 0). */
    ib_status (*set_sequences)(void *user, int32_t n_seqs, int32_t ctx_per_seq, ib_error *err);
    /* Optional: picks the next token of sequence seq from its logits
     * (timed apart with time_sampling). */
    ib_status (*sample)(void *user, int32_t seq, ib_error *err);
    /* Optional: makes the model cold again (the no-warm-up pitfall). */
    ib_status (*reopen)(void *user, ib_error *err);
    /* Optional: the CPU threads of the following calls (the threads
     * pitfall, with the info's n_threads_default). */
    ib_status (*set_threads)(void *user, int32_t n_threads, ib_error *err);
    /* Optional: called after open and after each change of the sequences,
     * info's n_seq_max and n_ctx already set: fill what changed (kv_bytes). */
    void (*describe)(void *user, ib_gen_info *info);
    /* Optional: the clock the calls are timed with, in ms (a simulator's,
     * a test's scripted one), and its resolution. NULL: the host's
     * monotonic clock. */
    double (*now_ms)(void *user);
    double clock_resolution_ms;
    /* Optional: called once when the workload is destroyed. */
    void (*destroy)(void *user);
    /* Added after the first size of version 1 (struct_size tells whether a
     * caller's table has them; one that ends before them has neither).
     * Optional, both or neither: serving under load (ib_measure_gen_serve)
     * needs them. decode_batch: one call of every entry (each sequence at
     * most once, at most info.n_batch tokens in all, each sequence filled
     * position after position); may return once queued. remove_sequence:
     * drops sequence seq's positions from from_pos on (untimed): 0 empties
     * it, above 0 keeps a prefix the next request reuses (the engine's
     * prefix cache; IB_ERR_UNSUPPORTED where the caller cannot). */
    ib_status (*decode_batch)(void *user, const ib_gen_batch_entry *entries, size_t n_entries, ib_error *err);
    ib_status (*remove_sequence)(void *user, int32_t seq, int32_t from_pos, ib_error *err);
} ib_gen_callbacks;

/* Fills struct_size and version, every slot NULL. */
void ib_gen_callbacks_init(ib_gen_callbacks *cb);

/* A generation workload over cb (copied) for ib_measure_generation. info:
 * what the caller states about its model and settings (copied; NULL:
 * nothing), which every result carries: model (default "callbacks"),
 * device (AUTO read as the CPU), the sizes, dtypes, the options in
 * effect. A table of another version or size, a required slot missing:
 * IB_ERR_INVALID_ARG with one line. *out is destroyed with ib_gen_destroy,
 * which calls cb->destroy. */
ib_status ib_gen_open_callbacks(const ib_gen_callbacks *cb, const ib_gen_info *info, ib_gen **out,
                                ib_error *err);

typedef struct ib_gen_config {
    /* Warm-up, runs (a run is one request: the prompt, then new_tokens
     * decode steps; default 30), --precision (on the TTFT and the
     * per-token median both), cancel and progress, as ib_config has them. */
    ib_config run;
    int32_t prompt_tokens;    /* P (default 512) */
    int32_t new_tokens;       /* N decode steps a run times (default 128) */
    int32_t depth;            /* D: the position of the first timed decode step,
                                 the context from P to D filled untimed (0, the
                                 default: right after the prompt, D = P) */
    int32_t ctx_per_seq;      /* tokens of context each sequence gets (0: D + N) */
    const int32_t *sequences; /* counts decoded together, each a point; not owned */
    size_t n_sequences;
    bool search;           /* find the largest count whose KV cache fits at
                              ctx_per_seq, and time the curve up to it */
    int32_t max_sequences; /* the search's bound (default IB_GEN_MAX_SEQUENCES) */
    int64_t sequence_runs; /* runs of N steps timed at each count (default 3) */
    double tpot_budget_ms; /* > 0: the best tokens/s whose TPOT is within it */
    double knee_fraction;  /* knee: the fewest sequences reaching this share
                              of the peak's tokens/s (default 0.95) */
    bool time_sampling;    /* time a greedy sampling after each step, apart */
    bool pitfalls;         /* also measure what each classic mistake reports */
} ib_gen_config;

void ib_gen_config_init(ib_gen_config *cfg);

/* Sequences decoded together: one point of the curve. */
typedef struct ib_gen_point {
    int32_t sequences;
    ib_status status;     /* IB_OK, or why this count has no figures */
    ib_stats step_ms;     /* latency of one step (one token of each sequence) */
    double tokens_per_s;  /* sequences x steps / time of all the steps */
    double tpot_ms;       /* the mean step: each sequence's time per token */
    int64_t steps;        /* steps timed */
    double first_step_ms; /* the first step at this count (cold), in no figure */
    ib_energy energy;     /* per token of a decode window at this count (docs/energy.md) */
} ib_gen_point;

typedef struct ib_gen_probe {
    int32_t sequences;
    bool fits;
    ib_status status; /* why it did not fit */
    double ms;
} ib_gen_probe;

typedef enum ib_gen_pitfall {
    IB_GEN_PITFALL_NO_SYNC = 0,     /* host clock around a step, no synchronize */
    IB_GEN_PITFALL_PREFILL_IN_RATE, /* generation tokens/s with the prefill counted */
    IB_GEN_PITFALL_NO_WARMUP,       /* a fresh context, the first requests included */
    IB_GEN_PITFALL_EMPTY_CONTEXT,   /* decode at position 0, not at the depth */
    IB_GEN_PITFALL_MEAN_OF_RATES,   /* the mean of per-run tokens/s */
    IB_GEN_PITFALL_ONE_RUN,         /* one run's tokens/s taken as the answer */
    IB_GEN_PITFALL_EOS,             /* runs stopped at an end-of-sequence token */
    IB_GEN_PITFALL_THREADS,         /* the runtime's default threads, more than the cores */
    IB_GEN_PITFALL_BACK_TO_BACK,    /* prompts prefilled one after another, no decode between */
    IB_GEN_PITFALL_COUNT
} ib_gen_pitfall;

typedef struct ib_gen_pitfall_row {
    ib_gen_pitfall kind;
    const char *name;           /* "host clock, no synchronize" */
    const char *why;            /* one line: why it is wrong */
    const char *figure;         /* what is compared: "per-token p50 ms", "tokens/s" */
    bool applies;               /* false: not a mistake one can make here */
    const char *not_applicable; /* why not, when !applies */
    ib_status status;           /* IB_OK, or why it could not be measured */
    char error[256];
    double wrong;     /* what the mistake reports */
    double correct;   /* the correct figure, same unit */
    double error_pct; /* (wrong - correct) / correct, percent */
    int32_t detail;   /* threads: the default's count; EOS: the shortest run's tokens */
    /* As ib_pitfall_row's: error_pct's 95% interval (ib_compare_samples
       of the row's samples against the correct ones; NaN without one),
       the reading, why there is no interval; why is chosen by them. */
    double error_ci95_pct[2];
    ib_pitfall_reading reading;
    const char *no_interval;
} ib_gen_pitfall_row;

typedef struct ib_gen_result {
    bool partial;          /* stopped early (error or cancel): what is here was measured */
    ib_status stop_status; /* why, IB_OK otherwise */
    ib_gen_info info;      /* the settings the single sequence was measured with */
    int32_t prompt_tokens, new_tokens, depth, ctx_per_seq;
    bool fixed_length;      /* always true: N tokens every run, never stopped at
                               an end-of-sequence token; the ids are random */
    double cold_prefill_ms; /* the first prefill after open, apart */
    double cold_step_ms;    /* the first decode step after it */
    int64_t warmup_runs_done;
    double warmup_ms_spent;
    bool warmup_steady;
    size_t runs;             /* timed runs (requests) */
    double *ttft_ms;         /* [runs]: P tokens from a clear cache to synchronized logits */
    double *token_ms;        /* [runs * new_tokens]: each step, run after run */
    double *request_ms;      /* [runs]: TTFT + the first N - 1 steps */
    double *sample_ms;       /* [runs * new_tokens] with time_sampling, else NULL */
    double *position_p50_ms; /* [new_tokens]: the median over runs of the i-th step */
    ib_stats ttft, token, request, sample;
    double prompt_tokens_per_s;                  /* P x runs / time of all prefills */
    double tokens_per_s;                         /* runs x N / time of all steps (never a mean of rates) */
    double tpot_ms;                              /* the mean step */
    double timer_resolution_ms;                  /* of the host clock */
    double precision_target, precision_achieved; /* the larger of TTFT's and the token's */
    bool precision_met;
    /* Sequences decoded together (a list, or the search's curve). */
    bool searched;
    int32_t search_ctx_per_seq; /* the context each sequence had */
    int32_t largest_fitting;    /* the search's answer, 0 without */
    bool limited_by_max;        /* it stopped at max_sequences, not memory */
    char limit_reason[256];     /* the runtime's words where it did not fit */
    size_t n_probes;
    ib_gen_probe probes[IB_GEN_MAX_PROBES];
    size_t n_points;
    ib_gen_point points[IB_GEN_MAX_POINTS];
    int peak, knee, best_within_budget; /* indexes into points, -1 none */
    double tpot_budget_ms;
    bool has_pitfalls;
    ib_gen_pitfall_row pitfalls[IB_GEN_PITFALL_COUNT];
    /* Energy (docs/energy.md, "For generation"): the device's per output
     * token over a decode window of the single sequence's steps, the CPU
     * package's over the same window, and the device's per prompt token
     * over a window of prefills (items: prompt tokens; a request's prefill
     * is joules_per_item x prompt_tokens). */
    ib_energy decode_energy, decode_cpu_energy, prefill_energy;
    int most_efficient; /* index into points: the most tokens per joule; -1 none */
    unsigned warnings;  /* IB_WARN_* */
    ib_env env;
} ib_gen_result;

/* Measures g: the cold first prefill and step apart, warm-up until steady,
 * cfg->run.runs requests (or until --precision), each the prompt's
 * prefill (TTFT) then N decode steps timed one by one; then the sequences
 * asked for or searched, then the pitfalls asked for. On a failure after
 * the first timed run the result holds what was measured (partial) and the
 * error is returned; no count within the TPOT budget gives IB_ERR_NOT_MET
 * with the result complete. Free with ib_gen_result_free whatever the
 * status. */
ib_status ib_measure_generation(ib_gen *g, const ib_gen_config *cfg, ib_gen_result *out, ib_error *err);

void ib_gen_result_free(ib_gen_result *r);

/* Whether cfg can be measured on g, as ib_measure_generation checks it
 * before anything runs (the counts, the context against the prompt, the
 * depth and the model): IB_ERR_INVALID_ARG (or IB_ERR_UNSUPPORTED) with
 * one line, else IB_OK. For a caller that measures later (best). */
ib_status ib_gen_config_check(const ib_gen *g, const ib_gen_config *cfg, ib_error *err);

/* One session of a generation result of --sessions N that measured, read
 * back: its runs (pointing into its file's pooled arrays) and its energy
 * figures. */
typedef struct ib_gen_file_session {
    const double *ttft_ms; /* [n_ttft] */
    size_t n_ttft;
    const double *token_ms; /* [n_token] */
    size_t n_token;
    double decode_joules_per_token, decode_energy_bound;   /* NaN: no figure */
    double prefill_joules_per_token, prefill_energy_bound; /* per prompt token */
} ib_gen_file_session;

/* A generation result read back (its JSON, "inferbench.generation/1", of
 * one process or of --sessions N merged), for compare. Free with
 * ib_gen_file_free. */
typedef struct ib_gen_file {
    char model[256];
    char device[16];
    char weights_type[16];
    char runtime_version[64];
    int32_t prompt_tokens, new_tokens, depth;
    int32_t n_threads;
    bool partial;
    unsigned warnings; /* IB_WARN_* its "warnings" and "notes" name */
    double *ttft_ms;   /* [n_ttft] */
    size_t n_ttft;
    double *token_ms; /* [n_token]: every token's time, run after run */
    size_t n_token;
    double tokens_per_s;
    double decode_joules_per_token, decode_energy_bound; /* NaN: no figure */
    /* The prefill's, per prompt token; why each is missing ("" when it is
     * not): the result's own note (a merged result's first session's) */
    double prefill_joules_per_token, prefill_energy_bound;
    char decode_energy_note[256], prefill_energy_note[256];
    /* A merged result (--sessions N): the sessions that measured, with runs
     * (0 for a result of one process); ttft_ms and token_ms above pool
     * their runs, tokens_per_s and the energy figures above are the
     * geometric means across the sessions (sessions.figures; no bound:
     * each session's is its own). */
    ib_gen_file_session *sessions;
    size_t n_sessions;
} ib_gen_file;

/* Reads text[0..len): IB_ERR_UNSUPPORTED ("not an inferbench generation
 * result: why") for text that is not one at all (not JSON, no generation
 * schema: another reader's, a latency result's), IB_ERR_INVALID_ARG (the
 * same words) for a generation result that is broken. */
ib_status ib_gen_file_parse(const char *text, size_t len, ib_gen_file *out, ib_error *err);
void ib_gen_file_free(ib_gen_file *f);

/* The "schema" string of a result document in text[0..len) (JSON), such as
 * "inferbench.best/2", into schema[cap], so that a file another reader
 * refused can be named for what it is. False (schema "") when text is not
 * JSON or has no schema string. */
bool ib_result_schema(const char *text, size_t len, char *schema, size_t cap);

/* Two generation results compared (docs/generate.md, "compare"): the TTFT
 * and the per-token latency (whose mean is TPOT), each as
 * ib_compare_samples compares (when both are merged results of 2 or more
 * sessions, as ib_compare_sessions does; when one is, its interval
 * widened by that side's spread between sessions, ib_compare_widen), and
 * what differs between the two settings. */
typedef struct ib_gen_comparison {
    ib_comparison ttft, token;
    double tokens_per_s_change; /* B's tokens / time over A's, less 1 */
    /* The decode energy per token's change B / A - 1 and the interval the
     * two figures' bounds give (docs/energy.md); of two merged results the
     * change of the geometric means across sessions, its interval with
     * the spread between sessions too (docs/compare.md, "Generation
     * results"); NaN without a figure in both. */
    double energy_change, energy_change_interval[2];
    /* The same for the prefill's energy per prompt token. */
    double prefill_energy_change, prefill_energy_change_interval[2];
} ib_gen_comparison;

ib_status ib_compare_gen_files(const ib_gen_file *a, const ib_gen_file *b, double threshold,
                               ib_gen_comparison *out, ib_error *err);

/* Reports of a generation result (docs/generate.md, docs/json.md): through
 * ib_report (kind IB_RESULT_GENERATION) in text, json, csv, md and html. */

/* ------------------------------------------------------------------------ */
/* Reports in any format: one entry point over every kind of result         */
/* ------------------------------------------------------------------------ */

/* Which result an ib_result carries. */
typedef enum ib_result_kind {
    IB_RESULT_LATENCY = 0,
    IB_RESULT_THROUGHPUT = 1,
    IB_RESULT_PITFALLS = 2,
    IB_RESULT_CALIBRATION = 3,
    IB_RESULT_COMPARISON = 4,
    IB_RESULT_SESSIONS = 5, /* a latency measured in sessions (--sessions N) */
    IB_RESULT_SERVE = 6,
    IB_RESULT_BEST = 7,                  /* the fastest accurate configuration (inferbench best) */
    IB_RESULT_FLEET = 8,                 /* several devices or MPI ranks at once (docs/fleet.md) */
    IB_RESULT_THROUGHPUT_SESSIONS = 9,   /* throughput measured in sessions */
    IB_RESULT_PITFALLS_SESSIONS = 10,    /* pitfalls measured in sessions */
    IB_RESULT_GENERATION = 11,           /* a generative model (inferbench generate) */
    IB_RESULT_GEN_COMPARISON = 12,       /* two generation results compared */
    IB_RESULT_GENERATION_SESSIONS = 13,  /* a generation measured in sessions */
    IB_RESULT_GEN_SERVE = 14,            /* a generative model served under load */
    IB_RESULT_GEN_SERVE_COMPARISON = 15, /* two of those compared */
    IB_RESULT_BEST_SERVE = 16,           /* its engine's settings raced (serve --best) */
    IB_RESULT_GEN_SERVE_SESSIONS = 17    /* a generative model served in sessions */
} ib_result_kind;

/* A result of any kind with what its reports need (docs/report.md). Set
 * kind, the one pointer of that kind, and the context it uses; leave the
 * rest zero. Nothing is owned: every pointer must outlive the call. */
typedef struct ib_result {
    ib_result_kind kind;
    const ib_latency_result *latency;
    const ib_throughput_result *throughput;
    const ib_pitfalls_result *pitfalls;
    const ib_calibration_result *calibration;
    const ib_comparison *comparison;
    const ib_workload_info *info;               /* latency, throughput, pitfalls */
    const ib_config *cfg;                       /* latency, pitfalls, calibration (JSON) */
    const ib_throughput_config *throughput_cfg; /* throughput (JSON) */
    /* comparison: the two results read back and their names (files) */
    const ib_latency_file *a, *b;
    const char *a_name, *b_name;
    /* sessions: the merged document (ib_sessions_merge_json) and it read
     * back (ib_latency_file_parse); text, json and html print it */
    const char *sessions_json;
    const ib_latency_file *sessions;
    /* (throughput and pitfalls sessions: the merged document alone) */
    /* serve: the result and the configuration it was measured with */
    const struct ib_serve_result *serve;
    const struct ib_serve_config *serve_cfg;
    /* best: the search and its configuration */
    const struct ib_best_result *best;
    const struct ib_best_config *best_cfg;
    /* fleet: the per-device results and their aggregate */
    const struct ib_fleet_result *fleet;
    /* generation: the result and its configuration */
    const ib_gen_result *generation;
    const ib_gen_config *gen_cfg;
    /* generation comparison: it and the two results (a_name, b_name above) */
    const ib_gen_comparison *gen_comparison;
    const ib_gen_file *gen_a, *gen_b;
    /* a generative model served under load: the result, its configuration */
    const struct ib_gen_serve_result *gen_serve;
    const struct ib_gen_serve_config *gen_serve_cfg;
    /* and when it was served over HTTP: the endpoint's own (NULL in process) */
    const struct ib_endpoint_result *endpoint;
    /* two of those compared: it and the results read back (a_name, b_name above) */
    const struct ib_gen_serve_comparison *gen_serve_comparison;
    const struct ib_gen_serve_file *gen_serve_a, *gen_serve_b;
    /* with gen_serve (its run at the answer), a search or a curve over rates */
    const struct ib_gen_serve_rates_result *gen_serve_rates;
    const struct ib_gen_serve_rates_config *gen_serve_rates_cfg;
    /* its engine's settings raced: the race, its configuration */
    const struct ib_best_serve_result *best_serve;
    const struct ib_best_serve_config *best_serve_cfg;
} ib_result;

/* The report of r in format: "text", "json", "html", "csv" or "md"
 * (Markdown), as docs/report.md describes each. malloc'ed (ib_free); NULL
 * when the format is unknown, does not print this kind (html has no
 * calibration or comparison page), a pointer the kind needs is NULL, or
 * memory ran out: ib_report_supports tells the first cases apart. The
 * per-kind functions above (ib_latency_report_text, ...) stay, and give
 * the same text as this for their format. */
char *ib_report(const ib_result *r, const char *format);

/* Whether ib_report prints results of kind in format. */
bool ib_report_supports(const char *format, ib_result_kind kind);

/* The usual file extension of format, without the dot ("md" for
 * Markdown), or NULL for an unknown format. */
const char *ib_report_extension(const char *format);

/* ib_sessions_merge_json for the measurement of command (IB_RESULT_LATENCY, _THROUGHPUT,
 * _PITFALLS or _GENERATION): each session's document ("inferbench.latency/1",
 * ".throughput/1", ".pitfalls/1", ".generation/1") merged into one that keeps
 * each session and the figures across them (docs/json.md, "sessions"):
 * latency as above; throughput each session's peak and its inputs/s at the
 * batch most sessions chose; pitfalls each method's median, the correct one
 * with its two-level interval; generation the TTFT, per-token and request
 * medians with their two-level intervals, then tokens/s and prompt
 * tokens/s. stop_reason: why fewer than requested ran (NULL:
 * "sessions incomplete"). ib_sessions_merge_json is this for latency with
 * stop_reason NULL. malloc'ed (ib_free); NULL with err as above. */
char *ib_sessions_merge(ib_result_kind command, const ib_session_outcome *s, size_t k, size_t requested,
                        const char *stop_reason, ib_error *err);
/* The relative half-width of the 95% interval across sessions of a merged
 * document's first figure (latency: the median; pitfalls: the correct
 * method's median), the precision --precision asks of sessions; NaN when
 * there is none (one session, a throughput, not a sessions document). */
double ib_sessions_precision(const char *doc);

/* ------------------------------------------------------------------------ */
/* Built-in model zoo                                                        */
/* ------------------------------------------------------------------------ */

typedef struct ib_zoo_entry {
    const char *name; /* "efficientnet-b0" */
    const char *description;
    int64_t params;         /* counted as torchvision counts them */
    double gmacs_per_item;  /* multiply-adds at the default shape (what
                               torchvision's model table calls GFLOPS) */
    double gflops_per_item; /* 2 FLOPs per multiply-add, plus other ops */
    const char *inputs;     /* "input: float32[batch,3,224,224]" */
    const char *outputs;
    const char *dim_defaults; /* symbolic dims other than batch, and their
                                 default values: "sequence=128", or "" */
} ib_zoo_entry;

size_t ib_zoo_count(void);
const ib_zoo_entry *ib_zoo_get(size_t index);
const ib_zoo_entry *ib_zoo_find(const char *name);

/* Generates the model as a serialized ONNX ModelProto. *bytes is malloc'ed;
 * release it with ib_free. */
ib_status ib_zoo_build(const char *name, bool fp16, uint8_t **bytes, size_t *len, ib_error *err);

/* The zoo's generative models: decoder-only transformers of the Llama
 * architecture with random weights (a fixed seed), as GGUF files for the
 * llama.cpp backend (docs/zoo.md, docs/backend-llama.md). Used as
 * zoo:NAME, or zoo:NAME?TYPE for weights quantized by llama.cpp (q8_0,
 * q4_0, q4_k_m, q5_k_m, q6_k; f16 without). */
typedef struct ib_zoo_lm_entry {
    const char *name; /* "llama-3.2-1b" */
    const char *description;
    int64_t params; /* every tensor's elements */
    int32_t n_layers, n_embd, n_heads, n_kv_heads, n_ff, n_vocab;
} ib_zoo_lm_entry;

size_t ib_zoo_lm_count(void);
const ib_zoo_lm_entry *ib_zoo_lm_get(size_t index);
const ib_zoo_lm_entry *ib_zoo_lm_find(const char *name); /* NAME, NAME?TYPE, or NULL */

/* Writes zoo model name ("llama-tiny", "llama-3.2-1b?q4_k_m") as a GGUF
 * file at path, through llama.cpp's GGUF writer and quantizer, loaded from
 * library_dir (NULL: the release set-up installed). The file is made in
 * cache_dir first (or found there from an earlier use, checked: one found
 * damaged is made again, and note[note_cap] says so, "" otherwise; note
 * may be NULL), then copied to path (a reflink where the file system
 * offers one, never a link) through a temporary file: path is whole or
 * absent, and shares nothing the cache's file could lose.
 * Unknown name or type: IB_ERR_INVALID_ARG; no llama.cpp (this build or
 * the library): IB_ERR_UNSUPPORTED or IB_ERR_INVALID_ARG, one line. */
ib_status ib_zoo_export_gguf(const char *name, const char *path, const char *library_dir,
                             const char *cache_dir, char *note, size_t note_cap, ib_error *err);

/* Number of weight elements stored in a serialized ONNX model's
 * initializers (what the graph really carries). */
ib_status ib_onnx_count_initializer_elements(const uint8_t *bytes, size_t len, int64_t *count, ib_error *err);

/* The arithmetic a serialized ONNX model holds itself: IB_MATH_FP16 or
 * IB_MATH_BF16 when most of its float weight elements are of that type (a
 * float16 export; a model without weights: its float inputs and outputs),
 * IB_MATH_DEFAULT otherwise: float32 in the main, no float at all, or bytes
 * that do not parse (the runtime says what is wrong with those). Unpacks
 * the whole model: its size again in memory, for a moment. */
ib_math ib_onnx_model_math(const uint8_t *bytes, size_t len);

/* "default", "fp32", "tf32", "fp16", "bf16". Never NULL. */
const char *ib_math_name(ib_math math);

/* Parses "fp32", "tf32", "fp16" or "bf16"; IB_ERR_INVALID_ARG otherwise. */
ib_status ib_math_parse(const char *text, ib_math *out, ib_error *err);

/* What a conversion did. */
typedef struct ib_convert_info {
    bool unchanged;       /* no float32 to convert: the model already is
                             in reduced precision, returned as is */
    size_t initializers;  /* float32 initializers converted */
    size_t constants;     /* Constant nodes and tensor attributes converted */
    size_t blocked_nodes; /* nodes kept in float32 between Casts */
    size_t casts_added;   /* Casts inserted (edges, blocked nodes) */
    size_t casts_removed; /* redundant Cast pairs' nodes removed */
    size_t subgraphs;     /* If/Loop/Scan bodies converted */
} ib_convert_info;

/* Converts a serialized fp32 ONNX model to math (IB_MATH_FP16 or
 * IB_MATH_BF16), in memory: initializers, constants and float tensors to
 * the reduced type; the graph's inputs and outputs keep their types (Casts
 * at the edges); operators of the block list (docs/precision.md) stay in
 * float32 between Casts; integer (shape) computations are untouched;
 * subgraphs are converted recursively. A model with no float32 is returned
 * as is (info->unchanged). *out is malloc'ed (ib_free). A model that does
 * not parse or cannot be converted: IB_ERR_MODEL naming the node or
 * tensor; another math: IB_ERR_INVALID_ARG. info may be NULL. */
ib_status ib_onnx_convert(const uint8_t *bytes, size_t len, ib_math math, uint8_t **out, size_t *out_len,
                          ib_convert_info *info, ib_error *err);

/* ------------------------------------------------------------------------ */
/* Accuracy: a reduced arithmetic against strict fp32 (docs/precision.md)    */
/* ------------------------------------------------------------------------ */

/* Compares value[0..n) with reference[0..n), the elements of a tensor of
 * rank and dims (dims gives the class-score shape; rank 0 is fine). Pure;
 * fills every metric of out except name, why and over_tolerance. */
void ib_accuracy_compare(const double *reference, const double *value, size_t n, int rank,
                         const int64_t *dims, ib_output_accuracy *out);

/* Runs w once (untimed) and the same model opened with opts but strict
 * fp32 (TF32 off, no conversion) once, on the same inputs at w's batch,
 * and compares their float outputs; marks those over tolerance (max
 * absolute error; 0: no tolerance). w must have been opened by
 * ib_workload_open_model on a backend that reads model options (the math);
 * model and opts are what w was opened with. The reference session exists
 * only during the call. */
ib_status ib_measure_accuracy(ib_workload *w, const char *model, const ib_model_options *opts,
                              double tolerance, ib_accuracy *out, ib_error *err);

/* The same for several configurations of one model judged on the same
 * inputs (best), strict fp32 opened and run once for all: *ref NULL, the
 * reference is opened and run here (its time in out->ms) and kept in *ref
 * for the next calls, which run w alone and compare (out->ms: that). A
 * kept reference is for workloads of the same model, batch and device
 * (another is refused); free it with ib_accuracy_reference_free. */
typedef struct ib_accuracy_reference ib_accuracy_reference;

ib_status ib_measure_accuracy_kept(ib_workload *w, const char *model, const ib_model_options *opts,
                                   double tolerance, ib_accuracy_reference **ref, ib_accuracy *out,
                                   ib_error *err);
void ib_accuracy_reference_free(ib_accuracy_reference *ref);

/* ------------------------------------------------------------------------ */
/* Best: the fastest configuration that stays accurate (docs/best.md)        */
/* ------------------------------------------------------------------------ */

#define IB_BEST_MAX_CANDIDATES 48
#define IB_BEST_DEFAULT_MIN_COSINE 0.999

/* Opens candidate `index` of a search at batch 1 (*w, destroyed by the
 * search). When acc is not NULL, also judges the candidate's outputs
 * against strict fp32 into it (acc->measured false: nothing to judge, the
 * candidate is fp32 itself). A failure skips the candidate: err's message
 * says why, and the others still run. */
typedef ib_status (*ib_best_open_fn)(size_t index, void *user, ib_workload **w, ib_accuracy *acc,
                                     ib_error *err);

/* Measures candidate `index` once more in a fresh session (the program
 * starts itself again: session 1, 2, ... of `sessions`), by the full
 * latency rule at batch 1, for the finals of a search in sessions. Returns
 * the session's timed samples in ms (*ms malloc'ed: the search frees it)
 * or an error: IB_ERR_INTERRUPTED stops the search, another failure is
 * that session's (err says why) and the others go on. */
typedef ib_status (*ib_best_session_fn)(size_t index, size_t session, void *user, double **ms, size_t *n,
                                        ib_error *err);

/* What best ranks by (docs/best.md, docs/energy.md). */
typedef enum ib_best_objective {
    IB_BEST_OBJECTIVE_TIME = 0, /* the lowest median latency, the most inputs/s */
    /* the most inputs per joule at batch 1 and at the throughput batches;
     * every accurate candidate is a finalist (screening ranks by time) */
    IB_BEST_OBJECTIVE_ENERGY = 1,
} ib_best_objective;

typedef struct ib_best_config {
    size_t n_candidates;       /* 1..IB_BEST_MAX_CANDIDATES */
    const char *const *labels; /* [n_candidates]: what is on ("fp16, CUDA graph") */
    ib_best_open_fn open;
    void *open_user;
    ib_config latency;               /* a finalist's latency at batch 1 (default
                                        ib_config_init); its cancel and progress
                                        serve the whole search */
    ib_throughput_config throughput; /* the batch search, and a finalist's
                                        runs at a batch (default
                                        ib_throughput_config_init) */
    int64_t screen_runs;             /* timed runs of a first screening round
                                        (default 30), doubled each round */
    int rounds;                      /* screening rounds at most (default 3) */
    size_t finalists;                /* at most this many measured fully (default 3) */
    double margin;                   /* a candidate is dropped when the 95% CI of
                                        its median's change against the leader's
                                        lies entirely above +margin (default 0.02) */
    double min_cosine;               /* the accuracy gate when the accuracy has no
                                        tolerance: every compared output's cosine
                                        similarity at least this (default
                                        IB_BEST_DEFAULT_MIN_COSINE) */
    bool exhaustive;                 /* every candidate measured fully, the batch
                                        searched for each: the sweep best is
                                        checked against */
    size_t sessions;                 /* >= 2: the latency finals measured in this
                                        many fresh sessions each, by
                                        measure_session, instead of in this
                                        process (default 1; not with exhaustive) */
    ib_best_session_fn measure_session;
    void *session_user;
    /* A candidate far behind at batch 1 leaves before the finals, both the
     * latency finals and the throughput race: the lower end of its screened
     * median's 95% CI above far_factor x the upper end of the leader's
     * (default 4; 0: off). The race only (not exhaustive). */
    double far_factor;
    /* Each step of the race (screening, latency finals, batch search, peak
     * screening, throughput finals) stops once it has measured this long
     * on the workload's clock: the measurement in flight stops after its
     * run (what it measured stands) and the step's later candidates are
     * not measured in it (default 300000; 0: none; not exhaustive). */
    double step_max_ms;
    ib_best_objective objective; /* default IB_BEST_OBJECTIVE_TIME; ENERGY needs an
                                    energy counter (IB_ERR_UNSUPPORTED otherwise) */
} ib_best_config;

void ib_best_config_init(ib_best_config *cfg);

/* How far a candidate went in one of the two races. */
typedef enum ib_best_stage {
    IB_BEST_NOT_TRIED = 0, /* not reached (interrupted), or not a candidate here */
    IB_BEST_SKIPPED,       /* did not open: why says the runtime's reason */
    IB_BEST_INACCURATE,    /* failed the accuracy gate: never the winner */
    IB_BEST_FAILED,        /* a run failed: why */
    IB_BEST_DROPPED,       /* screening: clearly slower than the leader */
    IB_BEST_FINALIST,      /* measured fully; lost to the winner */
    IB_BEST_WINNER,
    /* the same run as another candidate (same_as): the settings in effect
     * that its model stated for the race's request are that one's (a
     * value the runtime clamps), so it is raced once, as that one */
    IB_BEST_MERGED,
    /* its step's time bound (step_max_ms) was reached before it was
     * measured in it: the race was cut short (ib_best_result.not_measured) */
    IB_BEST_NOT_MEASURED
} ib_best_stage;

/* "not tried", "skipped", "inaccurate", "failed", "dropped", "finalist",
 * "winner", "merged", "not measured". Never NULL. */
const char *ib_best_stage_name(ib_best_stage stage);

/* Where a search's time goes (docs/best.md, "The cost"), each step's time
 * counted to the candidate it worked on. The measuring steps are read on
 * the workload's clock and add up to the row's ms; opening and the
 * accuracy check are read on the host clock, outside ms. */
typedef enum ib_best_step {
    /* opening the candidate (again when it was closed) and closing it,
     * its accuracy check left out */
    IB_BEST_STEP_OPEN,
    IB_BEST_STEP_ACCURACY, /* its accuracy check (ib_accuracy.ms) */
    IB_BEST_STEP_SCREEN,   /* latency screening rounds at batch 1 */
    /* the full latency rule, its warm-up included, or the finals' sessions;
     * in the sweep, each row's latency */
    IB_BEST_STEP_LATENCY_FINAL,
    /* the throughput batch search: the latency winner's in the race, each
     * row's in the sweep */
    IB_BEST_STEP_BATCH_SEARCH,
    IB_BEST_STEP_PEAK_SCREEN,      /* screening at the peak batch */
    IB_BEST_STEP_THROUGHPUT_FINAL, /* the finals around the peak batch */
    IB_BEST_STEPS
} ib_best_step;

/* "open", "accuracy", "screen", "latency_final", "batch_search",
 * "peak_screen", "throughput_final" (the JSON keys); never NULL. */
const char *ib_best_step_name(ib_best_step step);

typedef struct ib_best_row {
    char label[128];       /* what was on; a generative model's, as it ran
                              (ib_best_gen.label_ran) */
    char asked[128];       /* the label as given, when what ran differs ("": the same) */
    int same_as;           /* IB_BEST_MERGED: the row whose run this is; else -1 */
    ib_status open_status; /* IB_OK, or why it was skipped */
    bool accurate;         /* passed the gate (fp32 itself passes) */
    ib_accuracy accuracy;  /* against strict fp32 (measured false: fp32) */
    ib_best_stage latency_stage;
    ib_stats latency;      /* ms at batch 1: a finalist's full measurement,
                              else its screening runs pooled; n 0: none */
    int64_t latency_runs;  /* timed runs spent on it, screening included */
    char latency_why[256]; /* why it was skipped, dropped or lost */
    ib_best_stage throughput_stage;
    double items_per_s; /* its best back-to-back inputs/s measured; NaN none */
    int64_t batch;      /* where */
    char throughput_why[256];
    double ms; /* time its measurements took (workload clock) */
    /* Its time by step: those from IB_BEST_STEP_SCREEN on add up to ms. */
    double step_ms[IB_BEST_STEPS];
    /* Finals in sessions (ib_best_config.sessions): across the sessions
     * that measured (sessions.k 0: none; then latency is their runs
     * pooled), and how many failed. */
    ib_sessions_stats sessions;
    size_t sessions_failed;
    ib_energy latency_energy;    /* its final latency measurement's, per input */
    ib_energy throughput_energy; /* at its throughput batch (batch); the most
                                    inputs per joule of its points under the
                                    energy objective */
    /* A generative model's race (ib_measure_best_generation), over the
     * runs latency covers (its screening rounds pooled, or its final): one
     * value a run of its TTFT and of its TPOT (the mean of its decode
     * steps), and decode tokens/s = its tokens / the time of all its steps.
     * latency is the one of the two ranked (ib_best_result.figure). */
    ib_stats ttft, tpot;
    double tokens_per_s; /* NaN: none */
    /* IB_WARN_* of its own measurements: at batch 1 (its screening runs
     * pooled, or its final) and of its throughput (its screening, or the
     * search or final that gave its figure). */
    unsigned latency_warnings, throughput_warnings;
} ib_best_row;

typedef struct ib_best_result {
    bool partial; /* stopped early: the rows say how far each got */
    ib_status stop_status;
    bool exhaustive;
    size_t sessions; /* the latency finals' sessions each (cfg->sessions); < 2:
                        measured in this process */
    size_t n_rows;
    ib_best_row rows[IB_BEST_MAX_CANDIDATES];
    int latency_winner; /* index into rows, -1: none */
    int throughput_winner;
    int searched;                 /* the row whose batch was searched, -1 none */
    int64_t peak_batch;           /* the searched row's peak batch, 0 none */
    double elapsed_ms;            /* wall time of the whole search, opening
                                     and the accuracy checks included */
    double measured_ms;           /* the measurements' own time: the sum of
                                     the rows' ms */
    double min_cosine, tolerance; /* the accuracy gate applied */
    ib_workload_info info;        /* of the first candidate that opened */
    /* IB_WARN_*: of the machine (throttling, other processes, sessions)
     * seen in any measurement; of the samples (noise, few, two clusters,
     * not steady, host-bound) in the winners' figures alone: a loser's
     * noisy screening is its row's (latency_warnings), not the answer's. */
    unsigned warnings;
    ib_env env; /* of the last measurement */
    /* The rows' step_ms summed. With workloads on the host clock (every
     * real backend's), elapsed_ms less all of them is the search's own
     * work between the steps: comparing, bookkeeping. */
    double step_ms[IB_BEST_STEPS];
    double far_factor; /* the rules applied (cfg's; 0: off) */
    double step_max_ms;
    unsigned steps_bounded; /* bit k: step k reached step_max_ms */
    /* Rows the bound left unmeasured in a step they were due in (stage
     * IB_BEST_NOT_MEASURED in either race): the race was cut short, and
     * partial is set with stop_status IB_OK (the winner is the best of
     * those measured). */
    size_t not_measured;
    size_t merged; /* rows IB_BEST_MERGED into another */
    ib_best_objective objective;
    /* A generative model's race (ib_measure_best_generation): no
     * throughput race, no accuracy gate; info's model and device are the
     * generative model's, gen_info its settings as the first candidate
     * that opened stated them. */
    bool generation;
    int figure;                               /* ib_best_gen_figure ranked */
    int32_t prompt_tokens, new_tokens, depth; /* of every measurement */
    ib_gen_info gen_info;
} ib_best_result;

/* Searches cfg's candidates for the lowest median latency at batch 1 and
 * the highest inputs/s at the throughput peak, each among the candidates
 * that pass the accuracy gate, and fills out (docs/best.md): screening
 * rounds that drop the clearly slower, then the finalists measured fully;
 * the batch searched once, on the latency winner. A candidate that cannot
 * open or run is marked and the others go on. Interrupted: IB_ERR_INTERRUPTED
 * with what was measured kept (partial). out is large: allocate it. */
ib_status ib_measure_best(const ib_best_config *cfg, ib_best_result *out, ib_error *err);

/* Best for a generative model (docs/best.md, "Generative models"): the
 * candidates are the generation backend's options raced (flash attention,
 * the KV cache's type, n_ubatch), each a model opened by the caller; the
 * race is best's latency race (screening, far behind, finals, each step's
 * bound) on the generation method's runs, ranked by one value a run. */

/* Opens candidate `index` as a generative model (*g, destroyed by the
 * search). A failure (a combination the library refuses) skips the
 * candidate: err's message says why, and the others still run. */
typedef ib_status (*ib_best_gen_open_fn)(size_t index, void *user, ib_gen **g, ib_error *err);

/* What a generation race ranks, one value a run. */
typedef enum ib_best_gen_figure {
    IB_BEST_GEN_TPOT = 0, /* the run's time per output token at the depth: the
                             mean of its N decode steps (default) */
    IB_BEST_GEN_TTFT = 1  /* the run's time to first token */
} ib_best_gen_figure;

/* "tpot" or "ttft"; never NULL. */
const char *ib_best_gen_figure_name(ib_best_gen_figure figure);

/* Runs of a first screening round of a generation race (a run is a whole
 * request: prompt and N steps), doubled each round, as screen_runs is. */
#define IB_BEST_GEN_SCREEN_RUNS 10

typedef struct ib_best_gen {
    ib_best_gen_open_fn open;
    void *open_user;
    /* Every measurement's prompt_tokens, new_tokens, depth and
     * ctx_per_seq (default ib_gen_config_init's); its run is the race's
     * (ib_best_config.latency for the finals, shorter for screening), its
     * sequences, search, sampling and pitfalls are not used. */
    ib_gen_config gen;
    ib_best_gen_figure figure; /* default IB_BEST_GEN_TPOT */
    /* Optional (NULL: the labels stay as given; user: open_user).
     * Candidate `index`'s label as it runs, into label[cap], from the
     * settings in effect that its
     * model states (ran: ib_gen_info.options) once set to the race's
     * request: a value the runtime clamps (llama.cpp's n_ubatch to the
     * context) said as it runs. Called when the candidate first opens. */
    void (*label_ran)(size_t index, void *user, const ib_option_list *ran, char *label, size_t cap);
} ib_best_gen;

void ib_best_gen_init(ib_best_gen *gen);

/* Races cfg's candidates (labels, n_candidates and the race's settings;
 * cfg->open is not used) opened by gen->open, ranked by gen->figure, and
 * fills out as ib_measure_best does its latency race (no throughput race,
 * no accuracy gate; sessions and the energy objective refused:
 * IB_ERR_INVALID_ARG). Each candidate, when it first opens, is set to
 * the request's context and the settings in effect its model states
 * (ib_gen_info.options) compared with those of the candidates before it:
 * the same settings are the same run, raced once (the later one
 * IB_BEST_MERGED, same_as the first). *winner gets the latency winner's final generation
 * measurement in full (runs 0: no winner); free it with ib_gen_result_free
 * whatever the status. */
ib_status ib_measure_best_generation(const ib_best_config *cfg, const ib_best_gen *gen, ib_best_result *out,
                                     ib_gen_result *winner, ib_error *err);

/* The text report of a search: one row per candidate (docs/best.md). */
char *ib_best_report_text(const ib_best_result *r);
char *ib_best_report_json(const ib_best_result *r, const ib_best_config *cfg);

void ib_free(void *p);

/* sizeof the public struct called name ("ib_config", "ib_latency_result",
 * "ib_backend", ...; those of this header and inferbench_backend.h that
 * bindings use), or 0 for a name not listed. For bindings that mirror the
 * structs without reading this header (python/inferbench): they check
 * their mirrors against it, and allocate the results they only hand back
 * with the size it gives. */
size_t ib_struct_size(const char *name);

/* ------------------------------------------------------------------------ */
/* Serving: latency under load (docs/serve.md)                               */
/* ------------------------------------------------------------------------ */

/* Rates a serve measurement may visit, and the largest dynamic batch. */
#define IB_SERVE_MAX_RATES 32
#define IB_SERVE_MAX_BATCH 256
#define IB_SERVE_MAX_INSTANCES 64

typedef enum ib_arrivals {
    IB_ARRIVALS_POISSON = 0, /* exponential gaps at the offered rate, seeded */
    IB_ARRIVALS_CONSTANT,    /* one request every 1/rate */
    IB_ARRIVALS_TRACE        /* the times given in trace_ms */
} ib_arrivals;

/* How the host-device copies of a request are accounted. */
typedef enum ib_serve_copies {
    IB_SERVE_COPIES_NONE = 0, /* the model runs on the host: there are none */
    IB_SERVE_COPIES_APART,    /* timed apart by device marks (copy-in, compute, copy-out) */
    IB_SERVE_COPIES_INSIDE    /* the backend copies inside its run: part of compute */
} ib_serve_copies;

/* One served request, as on_request hands it over (docs/serve.md). Times
 * in ms from the rate's schedule origin; parts NaN where not measured. */
typedef struct ib_serve_request {
    size_t rate_index;    /* which of the result's points */
    size_t index;         /* its place in the schedule */
    int instance;         /* the instance that ran it, from 0 */
    int64_t run_requests; /* requests in the run that served it (the dynamic batch) */
    double arrival_ms, start_ms, end_ms;
    double queue_ms, wakeup_ms, h2d_ms, compute_ms, d2h_ms, total_ms;
} ib_serve_request;

typedef struct ib_serve_config {
    ib_config run; /* warm-up, cancel, progress (runs and adaptive fields unused) */
    ib_arrivals arrivals;
    const double *trace_ms; /* IB_ARRIVALS_TRACE: n_trace arrival times in ms
                               from the run's start, non-decreasing */
    size_t n_trace;
    uint64_t seed;           /* of the Poisson schedule (default 1) */
    int64_t requests;        /* requests per rate (default 1000); 0: by duration_ms */
    double duration_ms;      /* with requests 0: the requests that arrive within it */
    int64_t request_batch;   /* inputs of one request (default 1) */
    int64_t concurrency;     /* > 0: closed loop, this many requests always outstanding */
    int64_t max_batch;       /* dynamic batching: up to this many requests a run (1: off) */
    double max_delay_us;     /* and at most this long after the first waited for */
    double slo_ms;           /* > 0: search the highest rate whose percentile meets it */
    double slo_percentile;   /* default 0.99 */
    double confidence;       /* of the early-stopping bound, default 0.99 */
    double search_tolerance; /* bisection stops when hi/lo <= 1 + this (default 0.05) */
    const double *rates;     /* n_rates offered rates (requests/s) to measure, no search */
    size_t n_rates;
    double start_rate; /* the search's first rate; 0: half the capacity
                          the warm-up runs suggest */
    double min_rate;   /* > 0: the search halves to no rate below this
                          (requests/s; a low rate's requests take long) */
    /* For the reports: the instances are the most that fit
     * (ib_serve_open_instances), and whether the next ran out of memory
     * (else the search stopped at its limit). */
    bool instances_max;
    bool instances_ran_out;
    /* Each completed request of a rate, in schedule order, once the rate
     * is over (never while requests are served, so it costs the timing
     * nothing); NULL: none. */
    void (*on_request)(void *ctx, const ib_serve_request *r);
    void *on_request_ctx;
} ib_serve_config;

void ib_serve_config_init(ib_serve_config *cfg);

/* The n requests on_request handed over, as CSV (RFC 4180): a header row,
 * then one row a request, its times in ms (an empty cell: a part not
 * measured). Free with ib_free. */
char *ib_serve_requests_csv(const ib_serve_request *r, size_t n);

/* What explains a rate's compute against the service time of warm-up
 * (docs/serve.md, "What explains compute under load"). */
typedef enum ib_serve_cause {
    IB_SERVE_CAUSE_NONE = 0,   /* not judged: no request completed */
    IB_SERVE_CAUSE_AS_WARM,    /* within 5% of the service time: nothing to explain */
    IB_SERVE_CAUSE_CLOCK,      /* the GPU's lower SM clock under load accounts for half or more */
    IB_SERVE_CAUSE_WAKEUP,     /* the instances' wake-up lateness does */
    IB_SERVE_CAUSE_BOTH,       /* each of them does */
    IB_SERVE_CAUSE_HOST,       /* neither does, and the run is host-bound in warm-up:
                                  its compute is the host's launching, whose state
                                  between requests no figure here shows */
    IB_SERVE_CAUSE_UNEXPLAINED /* none of these */
} ib_serve_cause;

typedef struct ib_serve_explanation {
    ib_serve_cause cause;
    double excess;              /* compute p50 / service time - 1 */
    double warmup_sm_clock_mhz; /* median SM clock of the GPU samples in warm-up's
                                   second half; NaN: none (no NVML, the CPU) */
    double load_sm_clock_mhz;   /* the same over the rate's requests; NaN: none */
    double clock_ms;            /* service time x (warm-up clock / load clock - 1):
                                   what the lower clock accounts for; NaN: no clocks */
    double wakeup_ms;           /* the wake-up's median: what the host's lateness
                                   accounts for */
    double host_wait_share;     /* warm-up's host wait over its held median
                                   (ib_serve_result); NaN: not checked */
} ib_serve_explanation;

/* "as in warm-up", "the SM clock", "the wake-up", "the SM clock and the
 * wake-up", "a host-bound run", "unexplained", "-". Never NULL. */
const char *ib_serve_cause_name(ib_serve_cause cause);

/* One offered rate (or the closed loop), measured. Times in ms. */
typedef struct ib_serve_point {
    double offered_rate;             /* requests/s; NaN in a closed loop */
    double achieved_rate;            /* completed requests / (last completion - first arrival) */
    int64_t n;                       /* requests completed */
    int64_t scheduled;               /* requests scheduled */
    int64_t over_slo;                /* requests whose total passed slo_ms */
    double at_percentile_ms;         /* the total's slo_percentile quantile (NaN without a target) */
    double compute_at_percentile_ms; /* the same of compute: above slo_ms, no
                                        lower rate can meet the target */
    bool met;                        /* the early-stopping bound says the percentile meets slo_ms */
    bool partial;                    /* interrupted or failed: not every request ran */
    ib_stats queue;                  /* scheduled arrival to the start of its run */
    ib_stats wakeup;                 /* the part of queue after the run was due (its requests
                                        arrived, an instance free): the dispatcher's own lateness */
    ib_stats h2d, compute, d2h;      /* h2d/d2h: n 0 unless copies are timed apart */
    ib_stats total;                  /* completion - scheduled arrival */
    int64_t runs;                    /* runs issued */
    int64_t batch_hist[IB_SERVE_MAX_BATCH + 1]; /* runs at each batch of requests */
    /* Runs at another batch than their instance's run before, against runs
     * at an unchanged one: the median compute of each (NaN without such
     * runs). A runtime that selects its kernels again on a shape change
     * makes every change cost that (docs/serve.md). */
    int64_t switch_runs;
    double switch_compute_p50_ms, unchanged_compute_p50_ms;
    ib_serve_explanation explained; /* its compute against warm-up's */
    ib_energy energy;               /* over the rate's schedule (its ends not aligned: the
                                       schedule starts when it starts), per request input */
} ib_serve_point;

typedef struct ib_serve_result {
    ib_serve_point points[IB_SERVE_MAX_RATES]; /* in the order measured */
    size_t n_points;
    bool searched; /* a search for slo_ms */
    bool found;    /* some rate met it: points[best] */
    size_t best;
    double service_ms; /* median run time in warm-up: the capacity estimate */
    /* After warm-up, on the first instance where its stream can be held:
     * the host-wait check's pairs (docs/method.md, "Host-bound"): the held
     * runs' median and the wait for the host a run beyond both intervals
     * (0: none); NaN: not checked (the CPU, no hold). */
    double warmup_held_ms, warmup_host_wait_ms;
    size_t instances; /* workloads that served */
    ib_serve_copies copies;
    bool partial;
    ib_status stop_status;
    /* The machine, as every other command records it: its facts, the
     * GPU's state sampled from warm-up to the last rate (alone on a CUDA
     * workload), other processes' CPU use over the serving; and the
     * IB_WARN_* bits they raise (cpu_busy, throttled, threads_over_cores,
     * ...). */
    unsigned warnings;
    ib_env env;
} ib_serve_result;

/* Serves requests to w on the configured schedule(s) and fills out (kept,
 * partial, on failure and cancel). A search in which no rate meets the
 * target returns IB_ERR_NOT_MET with the result complete (found false). */
ib_status ib_measure_serve(ib_workload *w, const ib_serve_config *cfg, ib_serve_result *out, ib_error *err);

/* The same with n_instances copies of the model (distinct workloads, each
 * with its own session and stream, on one kind of device) serving one
 * queue, a host thread each. Every time is read from the host clock (one
 * origin for all); a closed loop runs on one instance. */
ib_status ib_measure_serve_instances(ib_workload *const *ws, size_t n_instances, const ib_serve_config *cfg,
                                     ib_serve_result *out, ib_error *err);

/* Opens a copy of the model for ib_serve_open_instances. */
typedef ib_status (*ib_serve_open_fn)(void *ctx, ib_workload **out, ib_error *err);

/* --instances max: how many copies of a model fit in memory at once. On
 * entry ws[0..*n) are copies already open; each of them, then each new
 * copy from open_copy, is bound at `batch` (the largest serve will run) and
 * run once, so that its session, weights and activation arena all hold
 * their memory before the next is opened. Stops at the first copy that
 * runs out of memory (device or host: it is closed, *ran_out set) or at
 * max; *n is then the count that fits, every one open. When not even the
 * first fits, or on any other failure, that failure is returned (the copies
 * in ws[0..*n) stay open for the caller to destroy). */
ib_status ib_serve_open_instances(ib_serve_open_fn open_copy, void *ctx, int64_t batch, size_t max,
                                  ib_workload **ws, size_t *n, bool *ran_out, ib_error *err);

/* Parses a schedule file's text: one arrival time in milliseconds per line
 * (a decimal number >= 0), non-decreasing; blank lines and lines starting
 * with '#' are skipped. *times_ms is malloc'ed (release with ib_free).
 * Malformed, unsorted or empty: IB_ERR_INVALID_ARG with the line number. */
ib_status ib_serve_trace_parse(const char *text, size_t len, double **times_ms, size_t *n, ib_error *err);

/* The early-stopping rule (MLPerf LoadGen's): with n requests of which k
 * took longer than the target, the percentile p meets the target with
 * confidence c when P(X <= k) <= 1 - c for X ~ Binomial(n, 1 - p). */
bool ib_serve_percentile_met(int64_t n, int64_t k, double p, double c);

/* The reports (caller frees with ib_free; NULL when out of memory). */
char *ib_serve_report_text(const ib_serve_result *r, const ib_serve_config *cfg,
                           const ib_workload_info *info);
char *ib_serve_report_json(const ib_serve_result *r, const ib_serve_config *cfg,
                           const ib_workload_info *info);
/* A self-contained page: the latency-against-load curve (p50, p90, p99
 * against the offered rate, the target as a line), achieved against
 * offered rate, and the text report. */
char *ib_serve_report_html(const ib_serve_result *r, const ib_serve_config *cfg,
                           const ib_workload_info *info);

/* ------------------------------------------------------------------------ */
/* Fleet: several devices (or MPI ranks) measured at once (docs/fleet.md)    */
/* ------------------------------------------------------------------------ */

/* What one worker's summary carries, whatever the number of its runs, so
 * that an MPI gather stays bounded: at most IB_FLEET_MARKS points of its
 * cumulative run count and IB_FLEET_RESERVOIR of its latencies (a uniform
 * reservoir sample, seeded: reproducible). */
#define IB_FLEET_MARKS 128
#define IB_FLEET_RESERVOIR 1000
#define IB_FLEET_MAX_WORKERS 100000

/* runs timed runs had ended by t_ms (ms from the worker's barrier). */
typedef struct ib_fleet_mark {
    double t_ms;
    double runs;
} ib_fleet_mark;

/* One worker (one device, or one MPI rank) of a fleet. A fixed-size struct
 * without pointers: an MPI rank sends it as it is. */
typedef struct ib_fleet_worker {
    int index;            /* the device index (--devices), or the rank */
    int rank, local_rank; /* under MPI; -1 otherwise */
    char host[64];        /* "" when not under MPI */
    char device[16];      /* "cuda", "cpu" */
    char name[128];       /* the GPU's name, or the CPU's */
    char uuid[96];        /* "" unknown */
    char pci_bus_id[32];  /* "" unknown */
    int numa_node;        /* -1 unknown */
    ib_status status;     /* IB_OK, or why this worker has no figures */
    char error[256];      /* "" when status is IB_OK */
    int64_t batch;
    size_t n;                /* timed runs */
    ib_stats latency;        /* of its timed runs (device time when there is
                                a device timer), ms */
    double items_per_s;      /* n x batch over its own timed phase */
    double start_ms, end_ms; /* its timed phase, ms from its barrier */
    size_t n_marks;          /* the cumulative run count at the end of
                                runs (every run when n < IB_FLEET_MARKS,
                                else evenly spaced ones), first (start,0) */
    ib_fleet_mark marks[IB_FLEET_MARKS];
    size_t n_kept; /* latencies kept: all of them when n <=
                      IB_FLEET_RESERVOIR, else a reservoir */
    double kept_ms[IB_FLEET_RESERVOIR];
    double sm_clock_pct;                 /* mean SM clock over the timed runs / its
                                            maximum, %; NaN unknown */
    unsigned max_temperature_c;          /* 0 unknown */
    double mean_power_w;                 /* NaN unknown */
    unsigned long long throttle_reasons; /* NVML reason bits seen (OR) */
    unsigned warnings;                   /* IB_WARN_* of its own result */
    /* Set by ib_fleet_aggregate: */
    double window_runs;        /* runs inside the common window (fractions
                                  of the runs cut by its edges) */
    double window_items_per_s; /* window_runs x batch / window */
} ib_fleet_worker;

/* Fills w from a worker's latency result r (measured with a sync, so that
 * r->end_ms counts from the barrier) at batch on its workload info; index,
 * rank and host are the caller's. status: the measurement's. */
void ib_fleet_worker_summarize(const ib_latency_result *r, const ib_workload_info *info, ib_status status,
                               const ib_error *err, ib_fleet_worker *w);
/* A worker that measured nothing: its status and message. */
void ib_fleet_worker_failed(ib_status status, const char *message, ib_fleet_worker *w);

typedef struct ib_fleet_result {
    ib_result_kind measured; /* IB_RESULT_LATENCY or IB_RESULT_THROUGHPUT */
    size_t n_workers;
    ib_fleet_worker *workers; /* [n_workers]: not owned */
    size_t n_failed;          /* workers without figures */
    bool mpi;                 /* ranks of an MPI job */
    double window_start_ms;   /* the latest start */
    double window_end_ms;     /* the earliest end */
    double items_per_s;       /* summed over the common window */
    ib_stats pooled;          /* every worker's runs pooled, ms (weighted
                                 by runs per kept sample when sampled) */
    bool pooled_sampled;      /* a worker's runs were sampled (reservoir) */
    int straggler;            /* index into workers: the slowest median */
    int fastest;              /* and the fastest; -1 without figures */
    double straggler_ratio;   /* slowest median / fastest median */
    bool mixed_devices;       /* workers of different device names */
    bool has_alone;
    ib_fleet_worker alone;     /* the first worker's device measured alone */
    double scaling_efficiency; /* items_per_s / (workers measured x the one
                                  alone's inputs/s); NaN without */
    /* measured IB_RESULT_SERVE (serve --devices): this is the host at one
     * rate (the workers' "runs" are requests: batch 1, latency the
     * request's total, items_per_s requests/s; the straggler by p99), and
     * serve holds every rate. NULL otherwise. */
    const struct ib_fleet_serve_result *serve;
} ib_fleet_result;

/* The aggregate of workers[0..n) (kept in out, not copied) and of alone
 * (NULL: none): the common window from the latest start to the earliest
 * end of the workers that measured, each worker's runs inside it, the sum
 * of their inputs/s, the pooled latencies, the straggler and the scaling
 * efficiency. IB_ERR_INVALID_ARG when no worker measured or their timed
 * phases do not overlap. */
ib_status ib_fleet_aggregate(ib_fleet_worker *workers, size_t n, const ib_fleet_worker *alone,
                             ib_fleet_result *out, ib_error *err);

/* Runs cfg's latency measurement on ws[0..n) at once, one host thread
 * each, meeting at a barrier before their timed runs (and after), and
 * summarizes each into workers[i] (index i). A worker that fails leaves
 * its status there while the others finish. cfg->sync must be NULL. */
ib_status ib_measure_fleet(ib_workload *const *ws, size_t n, const ib_config *cfg, ib_fleet_worker *workers,
                           ib_error *err);

/* serve on several devices at once (docs/fleet.md): the host at one rate. */
typedef struct ib_fleet_serve_rate {
    double offered_rate;      /* the host's: the sum of the devices' shares, requests/s */
    bool met;                 /* every device met the target at its share */
    ib_fleet_result host;     /* the devices' aggregate over the common window */
    ib_fleet_worker *devices; /* [n_devices]: each device at this rate (owned) */
} ib_fleet_serve_rate;

typedef struct ib_fleet_serve_result {
    size_t n_devices;
    const ib_serve_config *cfg; /* the host's configuration (rates are the host's) */
    ib_serve_result *serve;     /* [n_devices]: each device's own points, at its
                                   share of each rate (owned) */
    ib_fleet_worker *who;       /* [n_devices]: who each device is, its GPU state
                                   over the whole run, and how it ended (owned) */
    ib_fleet_serve_rate *rates; /* [n_rates], in the order measured (owned) */
    size_t n_rates;
    bool searched, found; /* a search for the target; some rate met it */
    size_t best;          /* rates[best]: the highest met */
    /* What the reports start from (ib_result.fleet): the host at
     * rates[best] when found, else at the last rate measured, else (no
     * rate served) unserved: the devices of who and how they ended. */
    const ib_fleet_result *shown;
    ib_fleet_result unserved;
    bool partial; /* a device failed, or interrupted */
    ib_status stop_status;
} ib_fleet_serve_result;

/* Serves on n_devices devices at once, a host thread each:
 * ws[d * instances .. + instances) are device d's instances (distinct
 * workloads on it). cfg's rates are the host's: each device serves
 * 1/n_devices of each (its own Poisson schedule, seed cfg->seed + d; a
 * schedule file is dealt out round-robin), the devices start each rate
 * together (a barrier) and a search takes the same rates on every device:
 * the highest host rate at which every device meets the target. A device
 * that fails: the others finish the rate in progress and the run stops
 * there, the device named in out->who. IB_ERR_NOT_MET as
 * ib_measure_serve. cfg->on_request is not called. out is freed with
 * ib_fleet_serve_result_free. */
ib_status ib_measure_fleet_serve(ib_workload *const *ws, size_t n_devices, size_t instances,
                                 const ib_serve_config *cfg, ib_fleet_serve_result *out, ib_error *err);
void ib_fleet_serve_result_free(ib_fleet_serve_result *r);

/* ------------------------------------------------------------------------ */
/* Serving a generative model under load (docs/serve-generative.md)         */
/* ------------------------------------------------------------------------ */

/* One request of a generative model's schedule: when it arrives (ms from
 * the schedule's origin), the tokens of its prompt, the tokens it
 * generates (a fixed count, never stopped at an end-of-sequence token). */
typedef struct ib_gen_request_spec {
    double arrival_ms;
    int32_t prompt_tokens, output_tokens;
} ib_gen_request_spec;

/* Parses a request trace: one request a line, "ARRIVAL_MS PROMPT OUTPUT"
 * (separated by commas or blanks; arrival a decimal >= 0, the counts whole
 * numbers >= 1), non-decreasing arrivals, blank lines and '#' lines
 * skipped; or the Azure LLM inference trace's CSV as published (a header
 * "TIMESTAMP,ContextTokens,GeneratedTokens", then "2023-11-16
 * 18:15:46.6805900,374,44" rows: arrivals from the first row's time).
 * *out is malloc'ed (ib_free). Empty, unsorted, negative, non-numeric:
 * IB_ERR_INVALID_ARG with the line number, *out NULL and *n 0. */
ib_status ib_gen_trace_parse(const char *text, size_t len, ib_gen_request_spec **out, size_t *n,
                             ib_error *err);

/* Most tokens a request's prompt or output may have. */
#define IB_GEN_SERVE_MAX_TOKENS (1 << 20)

typedef struct ib_gen_serve_config {
    ib_config run; /* cancel and progress (the rest unused) */
    /* Arrivals: POISSON (gamma gaps of shape burstiness: 1 is Poisson,
     * vLLM's definition), CONSTANT, or TRACE (trace[0..n_trace) gives every
     * request's arrival and lengths). */
    ib_arrivals arrivals;
    double rate;       /* requests/s (not with TRACE) */
    double burstiness; /* gamma shape, > 0 (default 1) */
    uint64_t seed;     /* of the arrivals and the drawn lengths (default 1) */
    int64_t requests;  /* measured requests (default 1000, as serve's; TRACE: n_trace) */
    /* Each request's lengths, drawn uniformly in [min, max] (min == max:
     * fixed; default 512 and 128). */
    int32_t prompt_min, prompt_max, output_min, output_max;
    const ib_gen_request_spec *trace;
    size_t n_trace;
    /* The engine: sequences decoded together (0: the KV cache's capacity
     * at the context of a slot, at most IB_GEN_SERVE_MAX_DEFAULT_SLOTS),
     * the prompt tokens one step takes at most (default 512), the context
     * of a slot (0: the longest request's prompt + output). */
    int32_t slots, prefill_chunk, ctx_per_slot;
    /* Requests served before the measured ones, all arriving at once (the
     * first ones' lengths), their figures discarded (default 4). */
    int32_t warmup_requests;
    /* Goodput's targets in ms (0: none; TTFT and TPOT at least one). */
    double slo_ttft_ms, slo_tpot_ms, slo_e2e_ms;
    /* The prefix cache (docs/serve-generative.md, "Prompts and the prefix
     * cache"): every prompt's first shared_prefix tokens alike, a
     * prefix-cache experiment (0, the default: every request's ids its
     * own; at most the shortest prompt); prefix_cache: a slot keeps its
     * last request's cells and the next request on it reuses their common
     * prefix, prefilling only the rest (default on, as llama-server's
     * cache_prompt: with ids of each request's own nothing is reused). */
    int32_t shared_prefix;
    bool prefix_cache;
    /* Also measure what each classic mistake of serving benchmarks
     * reports, beside the correct figure (out->pitfalls). */
    bool pitfalls;
    /* The engine's own cost (serve_gen_cost.c): after the run, replay its
     * mixed batches through decode_batch + synchronize in a bare loop. */
    bool engine_cost;
    /* How each token is picked (docs/serve-generative.md, "Sampling"):
     * false (the default), the workload's own ids, no logits read on the
     * host (the model's cost alone); true, each token read is a greedy
     * sample of its logits on the host, within the step (what a server
     * must do before it can feed the token back or send it). */
    bool sample_greedy;
} ib_gen_serve_config;

/* --slots by default: the most sequences whose KV cache fits at the
 * longest request's context, at most this many (vLLM's default
 * max_num_seqs: docs/serve-generative.md, "The slots by default"). */
#define IB_GEN_SERVE_MAX_DEFAULT_SLOTS 256

void ib_gen_serve_config_init(ib_gen_serve_config *cfg);

/* --- The pitfalls of serving benchmarks (serve --pitfalls; docs/serve-generative.md,
 * "Pitfalls"): each classic mistake measured on the user's model. --- */
typedef enum ib_gen_serve_pitfall {
    IB_GEN_SERVE_PITFALL_ACTUAL_START = 0, /* TTFT from admission, not the schedule (coordinated omission) */
    IB_GEN_SERVE_PITFALL_ALL_AT_ONCE,      /* every request at time 0 (a rate of infinity) */
    IB_GEN_SERVE_PITFALL_NO_WARMUP,        /* the first requests pay the cold start */
    IB_GEN_SERVE_PITFALL_MEAN_TPOT,        /* the mean of per-request TPOT, not decode time over tokens */
    IB_GEN_SERVE_PITFALL_REPEATED_PROMPT,  /* one prompt for every request, the prefix cache warm */
    IB_GEN_SERVE_PITFALL_DECODE_ONLY,      /* generate's TPOT at one sequence taken for the TPOT under load */
    /* httppitfalls: over HTTP only (serve --endpoint --pitfalls) */
    IB_GEN_SERVE_PITFALL_CHUNK_GAPS, /* the gaps between streamed chunks taken for the gaps between tokens */
    IB_GEN_SERVE_PITFALL_COUNT
} ib_gen_serve_pitfall;

/* As ib_gen_pitfall_row, for a serve's mistakes. */
typedef struct ib_gen_serve_pitfall_row {
    ib_gen_serve_pitfall kind;
    const char *name;           /* "TTFT from admission" */
    const char *why;            /* one line: why it is wrong, by its reading */
    const char *figure;         /* what is compared: "TTFT p99 ms" */
    bool applies;               /* false: not a mistake one can make here */
    const char *not_applicable; /* why not */
    ib_status status;           /* IB_OK, or why it could not be measured */
    char error[256];
    double wrong, correct,
        error_pct;            /* the mistake's figure, the correct one, (wrong - correct) / correct % */
    double error_ci95_pct[2]; /* compare's interval of the difference (NaN without one) */
    ib_pitfall_reading reading;
    const char *no_interval; /* why there is none */
} ib_gen_serve_pitfall_row;

/* One measured request: its times in ms from the schedule's origin (NaN
 * where it never got there: an interrupted run), its figures from its
 * scheduled arrival. */
typedef struct ib_gen_serve_request {
    ib_gen_request_spec spec;
    double admitted_ms, first_token_ms, end_ms;
    int32_t slot;             /* the sequence it was decoded on */
    int32_t generated_tokens; /* output tokens completed (spec's count when done) */
    double queue_ms;          /* admitted - scheduled: waiting for a slot */
    double ttft_ms;           /* first token - scheduled */
    double tpot_ms;           /* (end - first token) / (n - 1); NaN for one token */
    double e2e_ms;            /* end - scheduled */
    bool met;                 /* met every target given */
    int32_t cached_tokens;    /* prompt cells reused from its slot's last request (prefix cache) */
} ib_gen_serve_request;

/* One step of the engine: one mixed batch, decoded and synchronized. */
typedef struct ib_gen_serve_step {
    double start_ms, end_ms; /* from the schedule's origin */
    int32_t decode_tokens, prefill_tokens;
    int32_t running;  /* requests holding a slot during the step */
    int32_t waiting;  /* arrived, not admitted */
    int32_t kv_cells; /* KV cache cells the running requests hold once the step is done */
} ib_gen_serve_step;

/* --- A generative model's serve: the machine, its energy, the default
 * slots and the engine's own cost (serve_gen_energy.c, serve_gen_slots.c,
 * serve_gen_cost.c) --- */

/* Where the slots came from: --slots, the KV cache's capacity at the
 * context of a slot, or IB_GEN_SERVE_MAX_DEFAULT_SLOTS (the cache holds
 * more; n_batch where it is smaller). */
typedef enum ib_gen_slots_from {
    IB_GEN_SLOTS_GIVEN,
    IB_GEN_SLOTS_KV_CAPACITY,
    IB_GEN_SLOTS_CAPPED
} ib_gen_slots_from;

/* The energy of a served run: its window is the measured schedule, from
 * its origin to the last completion (docs/energy.md, "Under load"). */
typedef struct ib_gen_serve_energy {
    ib_energy device;          /* items: the output tokens of the completed requests */
    ib_energy cpu;             /* the CPU package's, read at the same instants */
    double joules_per_request; /* the device's joules / completed requests; NaN: no figure */
} ib_gen_serve_energy;

/* The engine's own time per step against a bare loop of its batches. */
typedef struct ib_gen_serve_engine_cost {
    size_t steps;               /* the measured run's */
    double engine_us_per_step;  /* mean of each step from its start to its bookkeeping done */
    double runtime_us_per_step; /* mean of each step's decode_batch + synchronize */
    /* mean of the runtime's sequence removals in the steps (admission's
     * trim, a request's end): its own work, not the engine's */
    double removal_us_per_step;
    double own_us_per_step;  /* engine - runtime - removals: admission, planning, stamps */
    bool replayed;           /* cfg->engine_cost: the bare loop below ran */
    double bare_us_per_step; /* the same batches and removals back to back, mean */
    double against_bare_us;  /* engine - bare a step */
} ib_gen_serve_engine_cost;
/* --- Why the tail is what it is (genreports: docs/serve-generative.md,
 * "Why the tail") --- The step trace summarized: how much of the decode
 * tail came from steps that carried a prompt chunk (prefill-decode
 * interference), how much of TTFT was the wait for a slot, how full the
 * KV cache was. Counts of 0 and NaN shares where there is nothing to
 * summarize. */
typedef struct ib_gen_serve_tail {
    /* Every inter-token gap (ITL) and those whose step carried a prompt
     * chunk; the gaps at or above the ITL p99 (the tail), and of those
     * the ones whose step carried a chunk. */
    size_t gaps, gaps_chunked;
    double itl_p99_ms;
    size_t tail_gaps, tail_gaps_chunked;
    /* Decode time (first token to end) spent in steps with a prompt
     * chunk, as a share of it: of every request, and of the requests
     * whose TPOT is at or above the TPOT p99 (tail_requests of them). */
    double decode_chunked_share;
    double tpot_p99_ms;
    size_t tail_requests;
    double tail_decode_chunked_share;
    /* TTFT's two parts: the wait for a slot (ib_gen_serve_result.queue)
     * and the prefill itself (first token - admitted), and the wait's
     * share of TTFT (sum of waits over sum of TTFTs): of every request,
     * and of those whose TTFT is at or above the TTFT p99. */
    ib_stats prefill;
    double ttft_p99_ms;
    size_t ttft_tail_requests;
    double ttft_queue_share, tail_ttft_queue_share;
    /* KV cache cells held after each step, their mean weighted by the
     * steps' durations and their most, against the cells of every slot
     * (slots x ctx_per_slot). */
    double kv_cells_mean, kv_cells_max, kv_capacity_cells;
} ib_gen_serve_tail;

typedef struct ib_gen_serve_result {
    ib_gen_info info;
    int32_t slots, prefill_chunk, ctx_per_slot, warmup_requests;
    int32_t shared_prefix;          /* as configured: the prefix-cache experiment, 0 none */
    bool prefix_cache;              /* as configured */
    bool sample_greedy;             /* as configured */
    int64_t cached_tokens;          /* the measured requests' prompt cells reused, in all */
    ib_gen_serve_request *requests; /* n_requests, in schedule order */
    size_t n_requests, n_completed;
    ib_gen_serve_step *steps; /* the measured run's */
    size_t n_steps;
    /* Distributions over the completed requests (ITL: every gap between
     * two tokens of a request); n 0 when none. */
    ib_stats ttft, queue, tpot, itl, e2e;
    double span_ms;       /* first arrival to last completion */
    double offered_rate;  /* requests over the schedule's span (or the rate asked) */
    double achieved_rate; /* completed requests / span */
    /* The completions' rate over their own span (first to last completion)
     * against the arrivals' over theirs: about 1 while the server keeps
     * up, however long a request takes (the achieved rate's span carries
     * one end-to-end latency more than the arrivals': on a short run it
     * falls short of the offered though nothing queues), capacity / rate
     * once it does not. NaN: fewer than 2 requests completed, or a span of
     * 0. */
    double pace;
    /* The median TTFT of the last quarter of the completed requests (in
     * schedule order) over the first quarter's: about 1 while the queue
     * stays put, growing with the run once the server falls behind. NaN
     * below 4 completed. */
    double ttft_growth;
    /* The server fell behind: pace below IB_GEN_SERVE_SATURATED and
     * ttft_growth above IB_GEN_SERVE_TTFT_GROWTH, both (a run of a few
     * hundred Poisson requests leaves either alone noisy near capacity:
     * docs/serve-generative.md, "The curve"). */
    bool saturated;
    double output_tokens_per_s; /* output tokens / span */
    double total_tokens_per_s;  /* prompt + output tokens / span */
    size_t n_good;              /* completed requests that met every target */
    double goodput_rate;        /* n_good / span */
    double good_share;          /* n_good / completed */
    /* The machine, its energy, the slots' origin, the engine's cost. */
    ib_env env;
    unsigned warnings; /* IB_WARN_* */
    ib_gen_serve_energy energy;
    ib_gen_slots_from slots_from;
    ib_gen_serve_engine_cost engine_cost;
    bool partial;           /* stopped early: what was measured so far */
    ib_status stop_status;  /* why, when partial */
    ib_gen_serve_tail tail; /* the step trace summarized (genreports) */
    bool has_pitfalls;      /* cfg->pitfalls: the rows below */
    ib_gen_serve_pitfall_row pitfalls[IB_GEN_SERVE_PITFALL_COUNT];
} ib_gen_serve_result;

/* Serves cfg's requests on g (its context re-created for the slots):
 * warm-up, then the schedule from its origin, every figure from each
 * request's scheduled arrival. g needs the mixed batch and sequence
 * removal (IB_ERR_UNSUPPORTED otherwise). Bad settings, a request longer
 * than a slot's context: IB_ERR_INVALID_ARG before anything is run.
 * Interrupted (cfg->run.cancel): IB_ERR_INTERRUPTED with out->partial and
 * what was measured. out is freed with ib_gen_serve_result_free. */
ib_status ib_measure_gen_serve(ib_gen *g, const ib_gen_serve_config *cfg, ib_gen_serve_result *out,
                               ib_error *err);
void ib_gen_serve_result_free(ib_gen_serve_result *r);

/* ------------------------------------------------------------------------ */
/* Serving over HTTP: an OpenAI-compatible endpoint (issue 37,              */
/* docs/serve-endpoint.md)                                                  */
/* ------------------------------------------------------------------------ */

/* Why a request sent to an endpoint failed (IB_EP_OK: it did not). */
typedef enum ib_endpoint_failure {
    IB_EP_OK = 0,
    IB_EP_CONNECT,   /* no connection (refused, unreachable) */
    IB_EP_HTTP,      /* an HTTP status other than 200 */
    IB_EP_RESET,     /* the connection ended mid-response */
    IB_EP_TIMEOUT,   /* past the request's time limit */
    IB_EP_MALFORMED, /* an event or its JSON that cannot be read */
    IB_EP_ERROR,     /* the server sent an error event */
    IB_EP_NO_DONE,   /* the stream ended without [DONE] */
    IB_EP_NO_USAGE,  /* no usage.completion_tokens: the count is not known */
    IB_EP_SHORT,     /* fewer output tokens than asked (or more) */
    IB_EP_MISMATCH,  /* the chunks' tokens disagree with usage */
    IB_EP_OTHER,     /* any other transfer error */
    IB_EP_N_FAILURES
} ib_endpoint_failure;

/* A short name ("connect", "http", "reset"...). */
const char *ib_endpoint_failure_str(ib_endpoint_failure f);

/* nativecompletion: the API the requests are sent in
 * (docs/serve-endpoint.md, "The API"). */
typedef enum ib_endpoint_api {
    IB_ENDPOINT_API_COMPLETIONS = 0, /* OpenAI's POST /v1/completions, streamed (every server) */
    IB_ENDPOINT_API_LLAMA = 1        /* llama.cpp's own POST /completion: each event's token ids,
                                        the server's timings at the end (llama-server) */
} ib_endpoint_api;

/* "completions", "llama"; NULL for another value. */
const char *ib_endpoint_api_str(ib_endpoint_api api);

typedef struct ib_endpoint_config {
    /* http:// or https:// on a loopback host (127.0.0.0/8, ::1,
     * localhost): the server's root (a trailing /v1 is taken off). */
    const char *url;
    const char *model;         /* the server's name of the model */
    double request_timeout_ms; /* a request's limit, sent to its end (0: none) */
    /* Prompt ids are drawn in [lowest id, vocab); 0: the server's own
     * n_vocab where /v1/models states it (llama-server), else 32000. */
    int32_t vocab;
    ib_endpoint_api api; /* nativecompletion: default IB_ENDPOINT_API_COMPLETIONS */
} ib_endpoint_config;

/* Fills the defaults: no URL or model, a request timeout of 600000 ms,
 * the vocabulary found (0). */
void ib_endpoint_config_init(ib_endpoint_config *cfg);

/* One request as the endpoint answered it; times in ms from the
 * schedule's origin. */
typedef struct ib_endpoint_request {
    double sent_ms;              /* libcurl about to send it (CURLOPT_PREREQFUNCTION) */
    double lateness_ms;          /* sent - scheduled: the client's own delay */
    long http_status;            /* 0: none received */
    ib_endpoint_failure failure; /* IB_EP_OK: completed */
    int64_t usage_tokens;        /* the server's usage.completion_tokens, -1: none */
    int64_t usage_prompt_tokens; /* its usage.prompt_tokens (the ids sent, counted), -1: none */
    int64_t chunk_tokens;        /* the tokens the chunks carried */
    bool tokens_assumed;         /* some chunk's count was not stated: taken as one */
    size_t n_chunks;             /* chunks that carried tokens */
    double *chunk_ms;            /* [n_chunks]: each one's arrival */
    int32_t *chunk_token_counts; /* [n_chunks]: the tokens of each */
    /* nativecompletion: the server's own timings of the request, where it
     * states them (llama-server's `timings`, its last): its prompt's
     * processing, and its output's from the first token to the last
     * (NaN: none); the prompt tokens it processed and those it took from
     * its cache (-1: none). */
    double server_prompt_ms, server_predicted_ms;
    int64_t server_prompt_n, server_cache_n;
    /* The token ids llama.cpp's own events carried (-1: none): fewer than
     * the tokens where llama-server held a token back (its text ending
     * inside a UTF-8 character: no event, so no id, for it). */
    int64_t id_tokens;
    /* endpointrates: in flight when a search ended its rate early (the
     * bound out of reach): aborted by the client, its times where they
     * got, failure IB_EP_OK: not a failure, never completed */
    bool cut;
} ib_endpoint_request;

/* --- The client's ceiling stated in every endpoint run (ceiling: issue 37
 * item 4; docs/serve-endpoint.md, "The client's ceiling") --- calibrate
 * client's ceiling as the program found it on file (the library reads no
 * file: the program passes it here), set against the run's own load. */
typedef enum ib_client_ceiling_state {
    IB_CEILING_NOT_GIVEN = 0, /* the caller said nothing: the report says nothing */
    IB_CEILING_MISSING,       /* no calibration on file */
    IB_CEILING_UNREADABLE,    /* a file that is not a calibration (note: why) */
    IB_CEILING_CURRENT,       /* this host's, this version's */
    IB_CEILING_STALE          /* another host's or version's (note: which) */
} ib_client_ceiling_state;

typedef struct ib_client_ceiling {
    ib_client_ceiling_state state;
    double rate, tokens_per_s; /* requests/s, output tokens/s: accurate up to */
    int64_t streams;           /* streams at once: accurate up to */
    double bound_ms;           /* the criterion: every error's p99 within */
    char date[32], host[128], version[32];
    char path[512]; /* where the program looked */
    char note[768]; /* unreadable: why; stale: what differs */
} ib_client_ceiling;

/* The calibration as a file's text (JSON, schema
 * inferbench.client_calibration/1): r's ceiling, with the date (UTC,
 * ISO 8601), host and version it was made on. NULL: out of memory. */
char *ib_client_ceiling_file_text(const ib_client_calibration_result *r, const char *date, const char *host,
                                  const char *version);
/* Reads such a text into out (state IB_CEILING_CURRENT, path and note
 * left as they were); IB_ERR_INVALID_ARG with one line when it is not one. */
ib_status ib_client_ceiling_parse(const char *text, ib_client_ceiling *out, ib_error *err);

typedef struct ib_endpoint_result {
    char url[256], model[128];
    int32_t vocab;                 /* the ids' bound used */
    ib_endpoint_request *requests; /* as many as the serve result's */
    size_t n_requests;
    ib_stats lateness;        /* over the requests sent */
    double lateness_bound_ms; /* past it at p99: the client's fault */
    bool client_late;         /* lateness p99 > the bound */
    size_t failures[IB_EP_N_FAILURES];
    size_t n_failed;
    size_t n_chunks, multi_token_chunks, assumed_chunks;
    /* The schedule's origin on the host clock (CLOCK_MONOTONIC, ms): what
     * sets these times against another's stamps (the scripted server's). */
    double origin_ms;
    /* Set by the caller after the run (never by the library): the
     * client's calibrated ceiling, which the reports state. */
    ib_client_ceiling ceiling;
    /* nativecompletion: the API spoken, and the server's own timings over
     * the completed requests that state them (n 0: none did): its
     * prompt's processing (against the client's TTFT), its time per
     * output token after the first (predicted_ms over tokens - 1: against
     * the client's TPOT). */
    ib_endpoint_api api;
    ib_stats server_prompt_ms, server_decode_ms_per_token;
    /* endpointrates: the requests cut (ib_endpoint_request.cut) */
    size_t n_cut;
} ib_endpoint_result;

/* Before a run: the URL is http(s) on loopback, the server answers GET
 * /v1/models as an OpenAI-compatible server does, and lists cfg->model.
 * IB_ERR_INVALID_ARG with one line otherwise. *vocab: the server's
 * n_vocab where it says it, else 0. */
ib_status ib_endpoint_check(const ib_endpoint_config *cfg, int32_t *vocab, ib_error *err);

/* Sends serve's requests (made from scfg as ib_measure_gen_serve makes
 * them; its engine settings unused) to the endpoint, open loop, one
 * thread: each at its scheduled time whatever the others do, streamed,
 * every chunk stamped as it arrives. out holds the same figures as in
 * process (a request's admitted_ms is its sent time); ep the endpoint's
 * own. Requests that fail are counted by cause and the run goes on; every
 * request failing is IB_ERR_RUNTIME with what was measured. The checks of
 * ib_endpoint_check fail first (IB_ERR_INVALID_ARG, nothing sent).
 * Interrupted: IB_ERR_INTERRUPTED, out->partial. Free both with their
 * _free. */
ib_status ib_measure_endpoint_serve(const ib_endpoint_config *cfg, const ib_gen_serve_config *scfg,
                                    ib_gen_serve_result *out, ib_endpoint_result *ep, ib_error *err);
void ib_endpoint_result_free(ib_endpoint_result *r);

/* httppitfalls (serve --endpoint --pitfalls; docs/serve-endpoint.md,
 * "Pitfalls"): what each classic mistake of HTTP serving benchmarks
 * reports on the endpoint, beside the correct figures of r and ep (the
 * run of scfg just measured by ib_measure_endpoint_serve): r->pitfalls
 * filled, r->has_pitfalls set. Rows read off the run (TTFT from the send,
 * chunk gaps for token gaps, the mean of per-request TPOT) and rows
 * measured by running the schedule again (every request at time 0, the
 * same seeded prompts a second time). A row that fails keeps its error;
 * an interruption stops the rest (IB_ERR_INTERRUPTED, r->partial). */
ib_status ib_endpoint_serve_pitfalls(const ib_endpoint_config *cfg, const ib_gen_serve_config *scfg,
                                     ib_gen_serve_result *r, const ib_endpoint_result *ep, ib_error *err);
/* nativecompletion: serve --endpoint --pitfalls from a server that has
 * served nothing yet: the schedule of scfg sent cold first (no warm-up,
 * prompts of their own), then the run (ib_measure_endpoint_serve, with
 * its warm-up) into r and ep, then ib_endpoint_serve_pitfalls' rows and
 * the no-warm-up row: the cold run's TTFT mean against the run's (no
 * interval: compare's is of medians, and the cold start is in a few
 * requests, which a mean carries and a median hides). scfg without a
 * warm-up: no cold run, the row n/a. The cold run interrupted: nothing
 * measured (IB_ERR_INTERRUPTED, r and ep empty); failed: the row says
 * why, the rest goes on. */
ib_status ib_measure_endpoint_serve_pitfalls(const ib_endpoint_config *cfg, const ib_gen_serve_config *scfg,
                                             ib_gen_serve_result *r, ib_endpoint_result *ep, ib_error *err);
/* --- Reports of a generative model served under load (genreports:
 * docs/serve-generative.md, "Reports") --- Through ib_report (kind
 * IB_RESULT_GEN_SERVE) in text, json, csv (a row per request), md and
 * html; and its steps as CSV, a row per step (start_ms, end_ms,
 * decode_tokens, prefill_tokens, running, waiting, kv_cells): malloc'ed
 * (ib_free), NULL when memory ran out. */
char *ib_gen_serve_steps_csv(const ib_gen_serve_result *r);

/* A generative serve result read back (its JSON,
 * "inferbench.serve_generative/1"), for compare: the completed requests'
 * figures as samples (ITL rebuilt from the steps: every gap). Free with
 * ib_gen_serve_file_free. */
typedef struct ib_gen_serve_file {
    char model[256];
    char device[16];
    bool partial;
    int32_t slots, prefill_chunk, ctx_per_slot;
    double offered_rate; /* NaN: a trace of no span */
    /* Goodput's targets (NaN: not given); good of completed met them all. */
    double slo_ttft_ms, slo_tpot_ms, slo_e2e_ms;
    size_t requests, completed, good;
    double goodput_rate, output_tokens_per_s;
    double *ttft_ms, *tpot_ms, *itl_ms, *e2e_ms;
    size_t n_ttft, n_tpot, n_itl, n_e2e;
    /* The server's cost (issue 37): a result of serve --endpoint is read
     * too, its ITL from the chunks its client received (a chunk of k
     * tokens: its first at the gap from the chunk before, k - 1 of 0);
     * the schedule, to tell whether two runs were sent the same one. */
    bool over_http;   /* an endpoint's result */
    bool client_late; /* its client's lateness past its bound (in every TTFT) */
    /* In process, how each token was picked: "none" or "greedy" (a result
     * of before --sampling, or over HTTP where the server picks: "none",
     * not read). */
    char sampling[8];
    double seed;                   /* the schedule's seed (NaN: not stated) */
    ib_gen_request_spec *schedule; /* [requests]: each one's arrival and lengths */
} ib_gen_serve_file;

/* Reads text[0..len): IB_ERR_UNSUPPORTED for text that is not a
 * generative serve result at all (not JSON, another schema),
 * IB_ERR_INVALID_ARG ("not an inferbench serve_generative result: why")
 * for one that is broken. */
ib_status ib_gen_serve_file_parse(const char *text, size_t len, ib_gen_serve_file *out, ib_error *err);
void ib_gen_serve_file_free(ib_gen_serve_file *f);

/* Two generative serve results compared (docs/compare.md, "Generative
 * serve results"): TTFT, TPOT, ITL and end-to-end each as
 * ib_compare_samples compares (their medians' change with its bootstrap
 * interval, Mann-Whitney, a verdict; each side's percentiles in a and b),
 * and the goodput share (good / completed) as the difference of two
 * proportions, B's less A's, with its 95% interval (Newcombe's hybrid
 * score): NaN where a side has no targets. */
typedef struct ib_gen_serve_comparison {
    ib_comparison ttft, tpot, itl, e2e;
    double good_share_a, good_share_b, good_share_change, good_share_ci95[2];
    bool same_targets; /* both judged by the same targets */
    /* Gaps of 0 of each side: over HTTP, the tokens after a chunk's first
     * (they reached the client together). A median change of a sample
     * holding them is no change of a rate: ITL is compared (itl) only
     * when neither side has one. */
    size_t itl_zero_gaps_a, itl_zero_gaps_b;
    bool itl_compared;
} ib_gen_serve_comparison;

ib_status ib_compare_gen_serve_files(const ib_gen_serve_file *a, const ib_gen_serve_file *b, double threshold,
                                     ib_gen_serve_comparison *out, ib_error *err);
/* ------------------------------------------------------------------------ */
/* best of a generative model served under load: the engine's settings     */
/* raced by goodput at the targets (serve --best; docs/best.md, "Serving") */
/* ------------------------------------------------------------------------ */

#define IB_BEST_SERVE_MAX_CANDIDATES 64

/* Candidate i: its label, the engine's slots and prefill chunk; its model
 * (the backend's options: flash attention, the KV cache's type) is opened
 * by ib_best_serve_config.open. */
typedef struct ib_best_serve_candidate {
    const char *label;
    int32_t slots, prefill_chunk;
} ib_best_serve_candidate;

typedef struct ib_best_serve_config {
    /* The schedule, the targets (slo_ttft_ms, slo_tpot_ms: goodput's),
     * warm-up, cancel and progress; slots and prefill_chunk are each
     * candidate's. */
    ib_gen_serve_config serve;
    const ib_best_serve_candidate *candidates; /* [n_candidates], 1..IB_BEST_SERVE_MAX_CANDIDATES */
    size_t n_candidates;
    /* Opens candidate i's model; a failure skips the row with err's line. */
    ib_status (*open)(size_t i, void *user, ib_gen **g, ib_error *err);
    /* Optional: candidate i's label as it runs, from the settings in effect
     * its model states (ran) and the prefill chunk in effect. */
    void (*label_ran)(size_t i, void *user, const ib_option_list *ran, int32_t prefill_chunk, char *out,
                      size_t cap);
    void *user;
    /* Screening serves the schedule's first screen_requests requests (0:
     * a quarter of them, at least one); the `finalists` (default 3) with
     * the highest goodput serve the whole schedule, which decides. */
    int64_t screen_requests;
    size_t finalists;
    /* Each step's measuring time at most, on the model's clock (default
     * 300000; 0: none); a step past it leaves its later rows unmeasured. */
    double step_max_ms;
} ib_best_serve_config;

void ib_best_serve_config_init(ib_best_serve_config *cfg);

typedef enum ib_best_serve_step {
    IB_BEST_SERVE_STEP_OPEN = 0,   /* opening and settling each row (host clock) */
    IB_BEST_SERVE_STEP_SCREEN = 1, /* the screening runs (the model's clock) */
    IB_BEST_SERVE_STEP_FINAL = 2,  /* the finals */
    IB_BEST_SERVE_STEPS = 3
} ib_best_serve_step;

/* One candidate: its figures are those of its last measurement (a
 * finalist's: its final's alone). */
typedef struct ib_best_serve_row {
    char label[160];              /* as it ran (label_ran) */
    char asked[160];              /* as given, when it differs ("": the same) */
    int same_as;                  /* IB_BEST_MERGED: the row whose run this is; else -1 */
    int32_t slots, prefill_chunk; /* in effect (the chunk at most n_batch and
                                     every prompt token the slots can hold) */
    ib_best_stage stage;
    ib_status status; /* a skipped or failed row's */
    char why[256];
    bool final;                 /* the figures are its final's */
    size_t requests, completed; /* of that measurement */
    size_t n_good;              /* completed within every target */
    double goodput_rate;        /* requests/s within every target; NaN: none */
    double good_share, output_tokens_per_s;
    ib_stats ttft, tpot, e2e; /* n 0: none */
    double step_ms[IB_BEST_SERVE_STEPS];
} ib_best_serve_row;

typedef struct ib_best_serve_result {
    size_t n_rows;
    ib_best_serve_row rows[IB_BEST_SERVE_MAX_CANDIDATES];
    int winner;                             /* -1: none */
    size_t screen_requests, final_requests; /* each screening's, each final's */
    size_t finalists;
    size_t merged, not_measured;
    double step_max_ms;
    unsigned steps_bounded; /* bit k: step k reached step_max_ms */
    double step_ms[IB_BEST_SERVE_STEPS];
    ib_gen_info info; /* of the first row that opened */
    /* The winner's final, whole (owned; n_requests 0: none). */
    ib_gen_serve_result winner_serve;
    bool partial; /* interrupted, or rows left unmeasured by the bound */
    ib_status stop_status;
} ib_best_serve_result;

/* Races cfg's candidates serving cfg->serve's schedule: each distinct
 * setting in effect (rows that run the same: merged) screened on the
 * schedule's first requests, the best few served the whole schedule, the
 * highest goodput of the finals the winner (equal goodput: the lower
 * end-to-end p99). Interrupted: IB_ERR_INTERRUPTED, partial, what was
 * measured kept. out is freed with ib_best_serve_result_free. */
ib_status ib_measure_best_serve(const ib_best_serve_config *cfg, ib_best_serve_result *out, ib_error *err);
void ib_best_serve_result_free(ib_best_serve_result *r);

/* ------------------------------------------------------------------------ */
/* A generative model served: the SLO rate search and the curve over rates  */
/* (issue 36's answer; docs/serve-generative.md, "The answer")              */
/* ------------------------------------------------------------------------ */

/* Most rates one search or curve measures. */
#define IB_GEN_SERVE_MAX_RATES 64

/* genbestfmt: the search's and the curve's own progress, one report a
 * rate measured (each rate's run reports through its ib_config's progress
 * as serve's): which rate of how many, its point, and a search's bracket
 * so far. */
typedef struct ib_gen_serve_rate_progress {
    bool searched;                          /* a search (else a curve) */
    size_t rate;                            /* 1-based: the rates measured so far, this one included */
    size_t rates_at_most;                   /* a curve: its rates; a search: the most it can
                                               still take in all, 0 while not known (no rate
                                               failed yet: it doubles until one does) */
    const struct ib_gen_serve_point *point; /* this rate's, valid during the call */
    /* A search: the highest rate met and the lowest failed, requests/s;
     * NaN where none yet (a curve: both NaN). */
    double met_rate, failed_rate;
} ib_gen_serve_rate_progress;

typedef void (*ib_gen_serve_rate_progress_fn)(const ib_gen_serve_rate_progress *p, void *user);

typedef struct ib_gen_serve_rates_config {
    const double *rates; /* the curve's rates, requests/s, n_rates of them */
    size_t n_rates;
    double percentile; /* of TTFT and TPOT held to their targets, in (0, 1) (default 0.99) */
    double confidence; /* of LoadGen's early-stopping bound, in (0, 1) (default 0.99) */
    /* The search: its rates lie on the grid first_rate x 2^(k/m), m the
     * fewest steps a doubling whose ratio 2^(1/m) - 1 is within precision
     * (default 0.05: m 15, 4.73%); first_rate 0: the rate the warm-up
     * served (its requests all at once). */
    double precision, first_rate;
    /* genbestfmt: called after each rate is measured; NULL (default): none. */
    ib_gen_serve_rate_progress_fn rate_progress;
    void *rate_progress_user;
} ib_gen_serve_rates_config;

void ib_gen_serve_rates_config_init(ib_gen_serve_rates_config *cfg);

/* One rate of a search or a curve. Percentiles NaN where no request
 * completed; the over counts and met only with targets. */
typedef struct ib_gen_serve_point {
    double offered_rate, achieved_rate; /* requests/s */
    double pace, ttft_growth;           /* the run's (ib_gen_serve_result) */
    bool saturated;
    int64_t scheduled, admitted, completed;
    double ttft_p50_ms, ttft_p99_ms, tpot_p50_ms, tpot_p99_ms, queue_p99_ms;
    double ttft_at_percentile_ms, tpot_at_percentile_ms; /* at the config's percentile */
    int64_t ttft_over, tpot_over;                        /* requests whose TTFT, TPOT passed its target */
    bool met;                                            /* every target's percentile met by the bound */
    /* Fewer requests than the bound needs to say met even with none over
     * (459 for p99 at 99%): met is false whatever the figures, and the
     * reports say "too few to judge", not "failed" (a curve's rate; the
     * search refuses such settings) */
    bool too_few;
    bool ended_early; /* a search ended it once the bound could no longer be met */
    double goodput_rate, good_share, output_tokens_per_s, total_tokens_per_s;
    /* KV cache cells held after each step, over the run's steps, as a share
     * of slots x ctx_per_slot */
    double kv_mean_share, kv_max_share;
    bool partial; /* interrupted or failed in this rate */
    /* curveformats: the device's energy per output token over this rate's
     * run (its result's energy.device; source NONE and note: no figure) */
    ib_energy energy;
    /* endpointrates: a rate served over HTTP (ib_search_endpoint_serve,
     * ib_measure_endpoint_serve_curve): the client's lateness p99 (NaN in
     * process, or when none was sent), whether it passed its bound (the
     * rate's tail may be the client's: ib_endpoint_result.client_late),
     * the requests that failed (0 in process; by cause in the endpoint
     * result of the run at the answer) and those cut when the rate ended
     * early (ib_endpoint_request.cut). */
    double client_lateness_p99_ms;
    bool client_late;
    int64_t failed, cut;
} ib_gen_serve_point;

typedef struct ib_gen_serve_rates_result {
    bool searched;                                     /* a search (else a curve) */
    ib_gen_serve_point points[IB_GEN_SERVE_MAX_RATES]; /* in the order measured */
    size_t n_points;
    /* The search: the highest rate met and the lowest failed above it
     * (indexes into points, -1: none), the grid's step, the requests it
     * served (admitted, over every rate) against a sweep of the same grid
     * from its lowest rate to its highest, every rate served in full. */
    int32_t found, last_failed;
    double grid_step;
    int64_t requests_served, sweep_rates, sweep_requests;
    /* The fewest requests a rate needs for the bound to say met (459 for
     * p99 at 99%; 0: no targets): a rate of fewer is too_few. */
    int64_t fewest_to_meet;
    /* The curve: the saturation point (the first rate saturated: its
     * completions behind its arrivals' pace, its TTFT growing through the
     * run: ib_gen_serve_result.ttft_growth) and the knee (the
     * highest rate before it whose TTFT p99 is within IB_GEN_SERVE_KNEE_FACTOR
     * of the curve's lowest); -1: none. */
    int32_t knee, saturation;
    /* The whole run at the rate found (search) or the knee (curve; else its
     * last rate): n_requests 0 when none. */
    ib_gen_serve_result at;
    int32_t at_point; /* its index in points, -1: none */
    bool partial;
    ib_status stop_status;
} ib_gen_serve_rates_result;

#define IB_GEN_SERVE_SATURATED 0.95
#define IB_GEN_SERVE_TTFT_GROWTH 2.0
#define IB_GEN_SERVE_KNEE_FACTOR 2.0

/* The highest rate whose TTFT and TPOT percentiles (those of cfg's targets
 * given: slo_ttft_ms, slo_tpot_ms, at least one) meet their targets, each
 * judged by ib_serve_percentile_met over cfg->requests requests: a
 * geometric bracket from rc->first_rate (doubling while met, halving while
 * not, at most 6 times), then bisection on the grid until the found rate
 * and the failed one are neighbours. A rate ends as soon as its over
 * counts make the bound unreachable. One context and one warm-up for
 * every rate. cfg->rate is ignored (arrivals POISSON or CONSTANT).
 * IB_ERR_NOT_MET when no rate met (out filled); interrupted:
 * IB_ERR_INTERRUPTED with out->partial and the rates measured. out is
 * freed with ib_gen_serve_rates_result_free. */
ib_status ib_search_gen_serve(ib_gen *g, const ib_gen_serve_config *cfg, const ib_gen_serve_rates_config *rc,
                              ib_gen_serve_rates_result *out, ib_error *err);

/* Every rate of rc->rates served in full (each judged when targets are
 * given), one context and warm-up for all, and the curve's knee and
 * saturation point. Interrupted as ib_search_gen_serve. */
ib_status ib_measure_gen_serve_curve(ib_gen *g, const ib_gen_serve_config *cfg,
                                     const ib_gen_serve_rates_config *rc, ib_gen_serve_rates_result *out,
                                     ib_error *err);
void ib_gen_serve_rates_result_free(ib_gen_serve_rates_result *r);

/* A rate's verdict as every report and the progress line say it: "met",
 * "failed (3 TTFT and 0 TPOT over)", "failed early (3/50 served; 2 TTFT
 * and 0 TPOT over)" (over HTTP also ", 1 failed"), "too few to judge",
 * "partial", or "" without targets (cfg's): a rate whose percentiles look
 * within the targets yet failed says why. Returns buf or a constant. */
#define IB_GEN_SERVE_VERDICT_LEN 128
const char *ib_gen_serve_point_verdict(char buf[IB_GEN_SERVE_VERDICT_LEN], const ib_gen_serve_point *p,
                                       const ib_gen_serve_config *cfg);

/* --- The search and the curve over an HTTP endpoint (endpointrates: issue
 * 37 item 3; docs/serve-endpoint.md, "Rates: the search and the curve")
 * --- The same method as ib_search_gen_serve and
 * ib_measure_gen_serve_curve (one code: src/core/serve_gen_rates.c), each
 * rate's requests sent as ib_measure_endpoint_serve sends them: the
 * endpoint checked once (IB_ERR_INVALID_ARG, nothing sent), one warm-up
 * for every rate (the search's first rate, when rc->first_rate is 0: the
 * requests it completed a second, as in process), a search's rate ended
 * as soon as the bound is out of reach (no request sent after, those in
 * flight aborted: cut, not failures; a failed request makes a rate
 * unreachable: it never completes). Each point holds its rate's client
 * lateness p99, its failures and its cuts; out->at is the run at the
 * answer and *ep (NULL: not kept) its endpoint result, by cause and per
 * request (ep->n_requests 0 when no rate was kept). Statuses as the
 * in-process pair's; a rate whose every request failed is a point that
 * did not meet (the rates go on), and no request of any rate completing
 * is IB_ERR_RUNTIME with what was measured. Free out with
 * ib_gen_serve_rates_result_free, ep with ib_endpoint_result_free. */
ib_status ib_search_endpoint_serve(const ib_endpoint_config *cfg, const ib_gen_serve_config *scfg,
                                   const ib_gen_serve_rates_config *rc, ib_gen_serve_rates_result *out,
                                   ib_endpoint_result *ep, ib_error *err);
ib_status ib_measure_endpoint_serve_curve(const ib_endpoint_config *cfg, const ib_gen_serve_config *scfg,
                                          const ib_gen_serve_rates_config *rc, ib_gen_serve_rates_result *out,
                                          ib_endpoint_result *ep, ib_error *err);

#ifdef __cplusplus
}
#endif

#endif /* INFERBENCH_H */
