#include "report/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ib__sbuf_printf(ib__sbuf *b, const char *fmt, ...)
{
    if (b->failed) return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        size_t room = b->cap - b->len;
        int n = vsnprintf(b->data ? b->data + b->len : NULL, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t ncap = (b->cap + (size_t)n + 1) * 2;
        char *p = realloc(b->data, ncap);
        if (!p) {
            b->failed = true;
            return;
        }
        b->data = p;
        b->cap = ncap;
    }
}

char *ib__sbuf_finish(ib__sbuf *b)
{
    if (b->failed || !b->data) {
        free(b->data);
        return NULL;
    }
    return b->data;
}

void ib__sbuf_each_line(ib__sbuf *b, ib__sbuf *lines, void (*item)(ib__sbuf *b, const char *line))
{
    b->failed |= lines->failed;
    for (char *s = lines->data, *nl; s && *s; s = nl + 1) {
        nl = strchr(s, '\n');
        if (!nl) nl = s + strlen(s) - 1;
        *nl = '\0';
        if (*s) item(b, s);
    }
    free(lines->data);
    *lines = (ib__sbuf){ 0 };
}

/* The length of the well-formed UTF-8 sequence at s (n > 0 bytes left), 0
 * when none starts there. */
static size_t utf8_sequence(const unsigned char *s, size_t n)
{
    if (s[0] < 0x80) return 1;
    size_t len = s[0] >= 0xC2 && s[0] <= 0xDF   ? 2
                 : s[0] >= 0xE0 && s[0] <= 0xEF ? 3
                 : s[0] >= 0xF0 && s[0] <= 0xF4 ? 4
                                                : 0;
    if (len == 0 || len > n) return 0;
    for (size_t i = 1; i < len; i++)
        if ((s[i] & 0xC0) != 0x80) return 0;
    /* The second byte's range rules out overlong forms, surrogates
     * (U+D800..DFFF) and code points above U+10FFFF. */
    if ((s[0] == 0xE0 && s[1] < 0xA0) || (s[0] == 0xED && s[1] > 0x9F) || (s[0] == 0xF0 && s[1] < 0x90) ||
        (s[0] == 0xF4 && s[1] > 0x8F))
        return 0;
    return len;
}

size_t ib__utf8_valid_prefix(const char *s, size_t n)
{
    size_t i = 0, k;
    while (i < n && (k = utf8_sequence((const unsigned char *)s + i, n - i)) > 0) i += k;
    return i;
}

void ib__sbuf_append_utf8(ib__sbuf *b, const char *s, size_t n)
{
    while (n > 0) {
        size_t valid = ib__utf8_valid_prefix(s, n);
        ib__sbuf_printf(b, "%.*s", (int)valid, s);
        if (valid == n) return;
        ib__sbuf_printf(b, "\xEF\xBF\xBD"); /* U+FFFD REPLACEMENT CHARACTER */
        s += valid + 1;
        n -= valid + 1;
    }
}

cJSON *ib__json_number(double v) { return isfinite(v) ? cJSON_CreateNumber(v) : cJSON_CreateNull(); }

void ib__json_add_number(cJSON *obj, const char *key, double v)
{
    cJSON_AddItemToObject(obj, key, ib__json_number(v));
}

/* [lo, hi], or null when the interval does not exist (too few samples). */
static cJSON *pair(const double v[2])
{
    if (!isfinite(v[0]) || !isfinite(v[1])) return cJSON_CreateNull();
    cJSON *a = cJSON_CreateArray();
    cJSON_AddItemToArray(a, ib__json_number(v[0]));
    cJSON_AddItemToArray(a, ib__json_number(v[1]));
    return a;
}

cJSON *ib__json_stats(const ib_stats *st)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "n", (double)st->n);
    ib__json_add_number(o, "mean", st->mean);
    ib__json_add_number(o, "std", st->std);
    ib__json_add_number(o, "min", st->min);
    ib__json_add_number(o, "p50", st->p50);
    ib__json_add_number(o, "p90", st->p90);
    ib__json_add_number(o, "p95", st->p95);
    ib__json_add_number(o, "p99", st->p99);
    ib__json_add_number(o, "p999", st->p999);
    ib__json_add_number(o, "max", st->max);
    ib__json_add_number(o, "cv", st->cv);
    cJSON_AddItemToObject(o, "ci95_mean", pair(st->ci95_mean));
    cJSON_AddItemToObject(o, "ci95_median", pair(st->ci95_median));
    if (st->ci95_widened) cJSON_AddTrueToObject(o, "ci95_widened_to_resolution");
    return o;
}

void ib__json_add_stats_or_null(cJSON *o, const char *key, const ib_stats *st)
{
    if (st->n)
        cJSON_AddItemToObject(o, key, ib__json_stats(st));
    else
        cJSON_AddNullToObject(o, key);
}

cJSON *ib__json_array(const double *x, size_t n)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(a, ib__json_number(x[i]));
    return a;
}

/* Each IB_WARN_* bit: its key, its line, and whether it is a note. A
 * warning says what is wrong with this measurement; a note is standing
 * advice about the setup, true of every result of it whatever was
 * measured (issue 28: a line on every result teaches people to skip the
 * lines, and then they miss the one that matters). Notes are printed as
 * "note:" lines and kept in the documents' "notes", apart from their
 * "warnings"; compare and the sessions read the bits from both. */
static const struct {
    unsigned bit;
    const char *key;
    const char *text;
    bool note;
} warning_texts[] = {
    { IB_WARN_THROTTLED, "throttled", "the GPU throttled during the run (power, thermal or slowdown)",
      false },
    { IB_WARN_CLOCK_DROP, "clock_drop", "the SM clock dropped by more than 10% during the run", false },
    { IB_WARN_LOW_POWER_START, "low_power_start",
      "the GPU was in a low-power state at the start (warm-up should have raised it)", false },
    { IB_WARN_HIGH_CV, "high_cv", "the coefficient of variation is above 5%: the timings are noisy", false },
    { IB_WARN_FEW_SAMPLES, "few_samples", "fewer than 30 samples: the statistics are weak", false },
    { IB_WARN_BIMODAL, "bimodal", "the samples form two clusters: look at the distribution, not the mean",
      false },
    { IB_WARN_NOT_STEADY, "not_steady", "warm-up reached its time cap before the timings were steady",
      false },
    { IB_WARN_PRECISION_NOT_MET, "precision_not_met",
      "the precision target was not met within the run or time cap", false },
    { IB_WARN_THREADS_OVER_CORES, "threads_over_cores",
      "more CPU threads were asked than the cores this process may use: the threads take turns on the "
      "cores, and the figures include their waiting",
      false },
    { IB_WARN_HOST_BOUND, "host_bound",
      "host-bound: the GPU waited for the host (runs as they are read more than with their launch held, "
      "beyond both intervals): the figure follows the host's speed; replay the run from one graph, or "
      "--exclude-launch (exclude_launch=True) for the device's part alone",
      false },
    { IB_WARN_SESSION_DEPENDENT, "session_dependent",
      "this setup varies between sessions (the runtime picks its kernels in each process, or a launch-bound "
      "run times the host): another session may differ by more than this interval; --sessions N gives an "
      "interval across sessions",
      true },
    { IB_WARN_SESSIONS_INCOMPLETE, "sessions_incomplete",
      "not every session finished: the figures are of those that did", false },
    { IB_WARN_GPU_SHARED, "gpu_shared",
      "other processes used this GPU during the measurement: the figures include their interference", false },
    { IB_WARN_CPU_BUSY, "cpu_busy",
      "the machine was busy with other work during the measurement: the figures include its interference",
      false },
};
#define N_WARNING_TEXTS (sizeof warning_texts / sizeof warning_texts[0])

void ib__json_add_warmup(cJSON *root, int64_t runs, double ms, bool steady)
{
    cJSON *warm = cJSON_AddObjectToObject(root, "warmup");
    cJSON_AddNumberToObject(warm, "runs", (double)runs);
    ib__json_add_number(warm, "ms", ms);
    cJSON_AddBoolToObject(warm, "steady", steady);
}

void ib__json_add_precision(cJSON *root, double target, double achieved, bool met)
{
    if (!(target > 0)) return;
    cJSON *prec = cJSON_AddObjectToObject(root, "precision");
    ib__json_add_number(prec, "target", target);
    ib__json_add_number(prec, "achieved", achieved);
    cJSON_AddBoolToObject(prec, "met", met);
}

/* The keys of the bits set, warnings or notes alone. */
static cJSON *json_keys(unsigned bits, bool notes)
{
    cJSON *a = cJSON_CreateArray();
    for (size_t i = 0; i < N_WARNING_TEXTS; i++)
        if ((bits & warning_texts[i].bit) && warning_texts[i].note == notes)
            cJSON_AddItemToArray(a, cJSON_CreateString(warning_texts[i].key));
    return a;
}

void ib__json_add_warnings(cJSON *o, unsigned bits)
{
    cJSON_AddItemToObject(o, "warnings", json_keys(bits, false));
    cJSON_AddItemToObject(o, "notes", json_keys(bits, true));
}

void ib__compare_inputs_warned_each(unsigned a_warnings, const char *a_name, unsigned b_warnings,
                                    const char *b_name,
                                    void (*fn)(void *ctx, const char *key, const char *line), void *ctx)
{
    const unsigned bits[2] = { a_warnings, b_warnings };
    const char *names[2] = { a_name, b_name };
    for (int side = 0; side < 2; side++)
        for (size_t i = 0; i < N_WARNING_TEXTS; i++) {
            if (!(bits[side] & warning_texts[i].bit) || warning_texts[i].note) continue;
            char key[48], line[600];
            snprintf(key, sizeof key, "%c.%s", "ab"[side], warning_texts[i].key);
            if (names[side] && names[side][0])
                snprintf(line, sizeof line, "input %c (%.200s) warned %s: %s", "AB"[side], names[side],
                         warning_texts[i].key, warning_texts[i].text);
            else
                snprintf(line, sizeof line, "input %c warned %s: %s", "AB"[side], warning_texts[i].key,
                         warning_texts[i].text);
            fn(ctx, key, line);
        }
}

void ib__warning_keys_list(ib__sbuf *b, unsigned warnings)
{
    size_t before = b->len;
    for (size_t i = 0; i < N_WARNING_TEXTS; i++)
        if ((warnings & warning_texts[i].bit) && !warning_texts[i].note)
            ib__sbuf_printf(b, "%s%s", b->len > before ? ";" : "", warning_texts[i].key);
}

size_t ib__warning_list(unsigned warnings, const char **keys, const char **texts, bool *notes, size_t cap)
{
    size_t n = 0;
    for (size_t i = 0; i < N_WARNING_TEXTS && n < cap; i++)
        if (warnings & warning_texts[i].bit) {
            keys[n] = warning_texts[i].key;
            notes[n] = warning_texts[i].note;
            texts[n++] = warning_texts[i].text;
        }
    return n;
}

/* The IB_WARN_* bits a "warnings" (or "notes") array names (other entries
 * ignored). */
static unsigned json_warning_bits(const cJSON *array)
{
    unsigned bits = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, array)
    {
        for (size_t i = 0; cJSON_IsString(v) && i < N_WARNING_TEXTS; i++)
            if (!strcmp(v->valuestring, warning_texts[i].key)) bits |= warning_texts[i].bit;
    }
    return bits;
}

unsigned ib__json_result_warning_bits(const cJSON *doc)
{
    return json_warning_bits(cJSON_GetObjectItemCaseSensitive(doc, "warnings")) |
           json_warning_bits(cJSON_GetObjectItemCaseSensitive(doc, "notes"));
}

/* "N other processes used this GPU during the measurement: PID name, ...;
 * the figures include their interference". */
static void text_gpu_shared(ib__sbuf *b, const ib_env *env)
{
    size_t n = env->n_other_gpu_processes;
    ib__sbuf_printf(b, "warning: %zu other process%s used this GPU during the measurement: ", n,
                    n == 1 ? "" : "es");
    for (size_t i = 0; i < n && i < IB_MAX_OTHER_PROCESSES; i++)
        ib__sbuf_printf(b, "%s%u %s", i ? ", " : "", env->other_gpu_processes[i].pid,
                        env->other_gpu_processes[i].name);
    ib__sbuf_printf(b, "%s; the figures include their interference\n",
                    n > IB_MAX_OTHER_PROCESSES ? ", ..." : "");
}

void ib__text_footer(ib__sbuf *b, bool partial, ib_status stop_status, const ib_env *env, unsigned warnings)
{
    if (partial)
        ib__sbuf_printf(b, "PARTIAL: stopped early (%s); the figures above are what was measured\n",
                        ib_status_str(stop_status));
    if (env->gpu_name[0] && !env->nvml_available && env->nvml_note[0])
        ib__sbuf_printf(b, "note: %s\n", env->nvml_note);
    for (size_t i = 0; i < N_WARNING_TEXTS; i++) {
        if (!(warnings & warning_texts[i].bit) || warning_texts[i].note) continue;
        if (warning_texts[i].bit == IB_WARN_GPU_SHARED && env->n_other_gpu_processes > 0)
            text_gpu_shared(b, env);
        else if (warning_texts[i].bit == IB_WARN_THREADS_OVER_CORES && env->threads > 0 &&
                 env->n_cpus_allowed > 0)
            ib__sbuf_printf(b,
                            "warning: %d CPU threads were asked, and this process may use %d core%s: the "
                            "threads take turns on the cores, and the figures include their waiting (ask at "
                            "most %d)\n",
                            env->threads, env->n_cpus_allowed, env->n_cpus_allowed == 1 ? "" : "s",
                            env->n_cpus_allowed);
        else if (warning_texts[i].bit == IB_WARN_CPU_BUSY && isfinite(env->other_cpu_cores))
            ib__sbuf_printf(b,
                            "warning: the machine was busy: other processes took %.2f of its %d CPUs during "
                            "the measurement (load average %.2f): the figures include their interference\n",
                            env->other_cpu_cores, env->n_cpus, env->load_average_1m);
        else
            ib__sbuf_printf(b, "warning: %s\n", warning_texts[i].text);
    }
    for (size_t i = 0; i < N_WARNING_TEXTS; i++)
        if ((warnings & warning_texts[i].bit) && warning_texts[i].note)
            ib__sbuf_printf(b, "note: %s\n", warning_texts[i].text);
}

static cJSON *gpu_sample_json(const ib_gpu_sample *s)
{
    cJSON *o = cJSON_CreateObject();
    ib__json_add_number(o, "t_ms", s->t_ms);
    cJSON_AddNumberToObject(o, "pstate", s->pstate);
    cJSON_AddNumberToObject(o, "sm_clock_mhz", s->sm_clock_mhz);
    cJSON_AddNumberToObject(o, "mem_clock_mhz", s->mem_clock_mhz);
    cJSON_AddNumberToObject(o, "temperature_c", s->temperature_c);
    ib__json_add_number(o, "power_w", s->power_w);
    cJSON_AddNumberToObject(o, "throttle_reasons", (double)s->throttle_reasons);
    return o;
}

void ib__json_add_string_or_null(cJSON *o, const char *key, const char *s)
{
    if (s && s[0])
        cJSON_AddStringToObject(o, key, s);
    else
        cJSON_AddNullToObject(o, key);
}

static cJSON *other_process_json(const ib_process_info *p)
{
    cJSON *e = cJSON_CreateObject();
    cJSON_AddNumberToObject(e, "pid", p->pid);
    cJSON_AddStringToObject(e, "name", p->name);
    cJSON_AddNumberToObject(e, "gpu_memory_bytes", (double)p->gpu_memory_bytes);
    return e;
}

/* One entry of environment.devices (schema 2): which GPU, its static facts,
 * the state sampled on it and the other processes seen there. A run on
 * several devices lists one entry each. */
static cJSON *gpu_device_json(const ib_env *env)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "index", env->gpu_index);
    cJSON_AddStringToObject(o, "name", env->gpu_name);
    ib__json_add_string_or_null(o, "uuid", env->gpu_uuid);
    ib__json_add_string_or_null(o, "pci_bus_id", env->gpu_pci_bus_id);
    cJSON_AddStringToObject(o, "driver_version", env->driver_version);
    cJSON_AddNumberToObject(o, "cuda_driver_version", env->cuda_driver_version);
    cJSON_AddNumberToObject(o, "cuda_runtime_version", env->cuda_runtime_version);
    cJSON_AddNumberToObject(o, "persistence_mode", env->persistence_mode);
    cJSON_AddNumberToObject(o, "sm_clock_max_mhz", env->sm_clock_max_mhz);
    cJSON_AddNumberToObject(o, "mem_clock_max_mhz", env->mem_clock_max_mhz);
    cJSON_AddNumberToObject(o, "l2_cache_bytes", (double)env->l2_cache_bytes);
    ib__json_add_number(o, "power_limit_w", env->power_limit_w > 0 ? env->power_limit_w : NAN);
    cJSON_AddBoolToObject(o, "nvml", env->nvml_available);
    if (env->nvml_note[0]) cJSON_AddStringToObject(o, "nvml_note", env->nvml_note);
    cJSON *samples = cJSON_AddArrayToObject(o, "gpu_samples");
    for (size_t i = 0; i < env->n_gpu_samples; i++)
        cJSON_AddItemToArray(samples, gpu_sample_json(&env->gpu_samples[i]));
    cJSON_AddNumberToObject(o, "other_gpu_process_count", (double)env->n_other_gpu_processes);
    cJSON *others = cJSON_AddArrayToObject(o, "other_gpu_processes");
    for (size_t i = 0; i < env->n_other_gpu_processes && i < IB_MAX_OTHER_PROCESSES; i++)
        cJSON_AddItemToArray(others, other_process_json(&env->other_gpu_processes[i]));
    return o;
}

static cJSON *runtime_json(const ib_runtime_info *rt)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", rt->name);
    cJSON_AddStringToObject(o, "version", rt->version);
    cJSON_AddStringToObject(o, "library", rt->library);
    cJSON_AddStringToObject(o, "build", rt->build);
    cJSON_AddStringToObject(o, "provider", rt->provider);
    return o;
}

cJSON *ib__json_env(const ib_env *env)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "tool_version", env->tool_version);
    cJSON_AddStringToObject(o, "host_cpu", env->host_cpu);
    cJSON_AddItemToObject(o, "runtime", runtime_json(&env->runtime));
    cJSON *devices = cJSON_AddArrayToObject(o, "devices");
    if (env->gpu_name[0]) cJSON_AddItemToArray(devices, gpu_device_json(env));
    ib__json_add_number(o, "load_average_1m", env->load_average_1m);
    cJSON_AddNumberToObject(o, "n_cpus", env->n_cpus);
    ib__json_add_number(o, "other_cpu_cores", env->other_cpu_cores);
    return o;
}

static cJSON *tensor_json(const ib_tensor_info *t)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", t->name);
    cJSON_AddStringToObject(o, "type", t->type);
    cJSON *shape = cJSON_AddArrayToObject(o, "shape");
    for (int i = 0; i < t->rank; i++) cJSON_AddItemToArray(shape, cJSON_CreateNumber((double)t->dims[i]));
    if (t->values[0]) cJSON_AddStringToObject(o, "values", t->values);
    return o;
}

const char *ib__device_name(ib_device_kind d)
{
    return d == IB_DEVICE_CUDA ? "cuda" : d == IB_DEVICE_CPU ? "cpu" : "auto";
}

cJSON *ib__json_options(const ib_option_list *list)
{
    cJSON *o = cJSON_CreateObject();
    for (size_t i = 0; i < list->n && i < IB_MAX_OPTIONS; i++)
        cJSON_AddStringToObject(o, list->items[i].key, list->items[i].value);
    return o;
}

/* The workload object of a result: the model, its inputs and runtime. */
static cJSON *json_workload(const ib_workload_info *info)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "model", info->model);
    cJSON_AddStringToObject(o, "device", ib__device_name(info->device));
    cJSON_AddStringToObject(o, "provider", info->provider);
    cJSON_AddNumberToObject(o, "batch", (double)info->batch);
    cJSON_AddBoolToObject(o, "has_batch_dim", info->has_batch_dim);
    cJSON *in = cJSON_AddArrayToObject(o, "inputs");
    for (int i = 0; i < info->n_inputs; i++) cJSON_AddItemToArray(in, tensor_json(&info->inputs[i]));
    cJSON *out = cJSON_AddArrayToObject(o, "outputs");
    for (int i = 0; i < info->n_outputs; i++) cJSON_AddItemToArray(out, tensor_json(&info->outputs[i]));
    if (info->flops_per_item > 0) cJSON_AddNumberToObject(o, "flops_per_item", info->flops_per_item);
    cJSON_AddItemToObject(o, "backend_options", ib__json_options(&info->options));
    cJSON_AddStringToObject(o, "math", info->math);
    cJSON_AddBoolToObject(o, "math_default", info->math_default);
    cJSON_AddBoolToObject(o, "math_of_model", info->math_of_model);
    return o;
}

cJSON *ib__json_document(const char *schema, bool partial, ib_status stop_status,
                         const ib_workload_info *info)
{
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", schema);
    cJSON_AddBoolToObject(root, "partial", partial);
    if (partial) cJSON_AddStringToObject(root, "stop_reason", ib_status_str(stop_status));
    if (info) {
        cJSON_AddStringToObject(root, "model", info->model);
        cJSON_AddStringToObject(root, "device", ib__device_name(info->device));
        cJSON_AddItemToObject(root, "workload", json_workload(info));
    }
    return root;
}

void ib__format_exact(char out[IB__EXACT_LEN], double v)
{
    for (int digits = 15; digits <= 17; digits++) {
        snprintf(out, IB__EXACT_LEN, "%.*g", digits, v);
        if (strtod(out, NULL) == v) return;
    }
}

/* cJSON prints a number with 15 digits whenever they read back within an
 * epsilon of it, which changes about one measured value in six in its last
 * bit (seen: the CSV and the JSON of one serve run disagreed on a p99).
 * Every number becomes the raw text that reads back exactly. */
static bool exact_numbers(cJSON *node)
{
    for (cJSON *c = node->child; c; c = c->next) {
        if (cJSON_IsNumber(c)) {
            char text[IB__EXACT_LEN] = "null";
            if (isfinite(c->valuedouble)) ib__format_exact(text, c->valuedouble);
            char *copy = strdup(text);
            if (!copy) return false;
            c->type = cJSON_Raw | (c->type & cJSON_StringIsConst);
            c->valuestring = copy;
        } else if (!exact_numbers(c)) {
            return false;
        }
    }
    return true;
}

char *ib__json_finish(cJSON *root)
{
    char *s = root && exact_numbers(root) ? cJSON_Print(root) : NULL;
    cJSON_Delete(root);
    /* cJSON copies a string's bytes >= 0x80 as they are. */
    size_t n = s ? strlen(s) : 0;
    if (!s || ib__utf8_valid_prefix(s, n) == n) return s;
    ib__sbuf valid = { 0 };
    ib__sbuf_append_utf8(&valid, s, n);
    free(s);
    return ib__sbuf_finish(&valid);
}

void ib__format_options(char *buf, size_t cap, const ib_option_list *list)
{
    size_t used = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < list->n && i < IB_MAX_OPTIONS && used < cap; i++)
        used += (size_t)snprintf(buf + used, cap - used, "%s%s=%s", i ? ", " : "", list->items[i].key,
                                 list->items[i].value);
}

/* The options, then ", math=MATH" (the arithmetic; left out when unknown). */
static void options_and_math(char *buf, size_t cap, const ib_option_list *list, const char *math,
                             const char *note)
{
    ib__format_options(buf, cap, list);
    size_t used = strlen(buf);
    if (math[0] && used + 1 < cap)
        snprintf(buf + used, cap - used, "%smath=%s%s", used ? ", " : "", math, note);
}

/* Who chose the arithmetic, when the user did not. */
const char *ib__math_note(bool math_default, bool math_of_model)
{
    return math_default ? " (runtime default)" : math_of_model ? " (the model's own)" : "";
}

void ib__info_runtime_options(char *buf, size_t cap, const ib_workload_info *info)
{
    options_and_math(buf, cap, &info->options, info->math,
                     ib__math_note(info->math_default, info->math_of_model));
}

void ib__file_runtime_options(char *buf, size_t cap, const ib_latency_file *f)
{
    options_and_math(buf, cap, &f->options, f->math, "");
}

void ib__info_inputs(ib__sbuf *b, const ib_workload_info *info)
{
    for (int i = 0; i < info->n_inputs; i++)
        ib__sbuf_printf(b, "%s%s=%s", i ? ", " : "", info->inputs[i].name,
                        info->inputs[i].values[0] ? info->inputs[i].values : "?");
    if (info->n_inputs == 0) ib__sbuf_printf(b, "(none)");
}

void ib__text_runtime_options(ib__sbuf *b, const ib_workload_info *info)
{
    char line[IB__OPTIONS_TEXT_LEN];
    ib__info_runtime_options(line, sizeof line, info);
    /* A runtime with no options to state (a caller's own model) has no line. */
    if (line[0]) ib__sbuf_printf(b, "\nruntime options: %s", line);
    ib__sbuf_printf(b, "\ninput values: ");
    ib__info_inputs(b, info);
}

void ib__text_env(ib__sbuf *b, const ib_env *env)
{
    if (env->gpu_name[0]) {
        ib__sbuf_printf(b, "%s (driver %s, CUDA driver %d.%d, runtime %d.%d)", env->gpu_name,
                        env->driver_version[0] ? env->driver_version : "?", env->cuda_driver_version / 1000,
                        env->cuda_driver_version % 1000 / 10, env->cuda_runtime_version / 1000,
                        env->cuda_runtime_version % 1000 / 10);
    } else {
        ib__sbuf_printf(b, "%s", env->host_cpu[0] ? env->host_cpu : "host CPU");
    }
    const ib_runtime_info *rt = &env->runtime;
    if (rt->name[0]) ib__sbuf_printf(b, ", %s", rt->name);
    if (rt->version[0]) ib__sbuf_printf(b, " %s", rt->version);
    /* A runtime whose provider is itself (python) is named once. */
    if (rt->provider[0] && strcmp(rt->provider, rt->name)) ib__sbuf_printf(b, " %s", rt->provider);
}

/* The unit a duration in ms reads best in ("s" from 1000 ms, "ms" from 1
 * ms, "us" below); returns that unit per ms. */
static double duration_unit(double ms, const char **unit)
{
    double a = fabs(ms);
    *unit = a >= 1000 ? "s" : a >= 1 || !isfinite(a) ? "ms" : "us";
    return a >= 1000 ? 1e-3 : a >= 1 || !isfinite(a) ? 1 : 1e3;
}

const char *ib__fmt_ms(char buf[32], double ms)
{
    const char *unit;
    double scale = duration_unit(ms, &unit);
    if (!isfinite(ms))
        snprintf(buf, 32, "-");
    else
        snprintf(buf, 32, "%.4g %s", ms * scale, unit);
    return buf;
}

const char *ib__fmt_plain4(char buf[32], double v)
{
    double a = fabs(v);
    snprintf(buf, 32, a >= 1e4 ? "%.0f" : a > 0 && a < 1e-3 ? "%.4f" : "%.4g", v);
    return buf;
}

void ib__text_estimate(ib__sbuf *b, const char *name, double value_ms, const double ci_ms[2])
{
    const char *unit;
    double scale = duration_unit(value_ms, &unit);
    char v[32], lo[32], hi[32];
    ib__sbuf_printf(b, "%s %s %s, 95%% CI [%s, %s] %s", name, ib__fmt_plain4(v, value_ms * scale), unit,
                    ib__fmt_plain4(lo, ci_ms[0] * scale), ib__fmt_plain4(hi, ci_ms[1] * scale), unit);
}

const char *ib__fmt_percent(char buf[32], double fraction)
{
    snprintf(buf, 32, "%.15g%%", 100 * fraction);
    return buf;
}

cJSON *ib__json_config(const ib_config *cfg)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "warmup_runs", (double)cfg->warmup_runs);
    cJSON_AddNumberToObject(o, "warmup_ms", cfg->warmup_ms);
    cJSON_AddBoolToObject(o, "warmup_until_steady", cfg->warmup_until_steady);
    cJSON_AddNumberToObject(o, "warmup_max_ms", cfg->warmup_max_ms);
    cJSON_AddNumberToObject(o, "runs", (double)cfg->runs);
    cJSON_AddNumberToObject(o, "precision", cfg->precision);
    if (cfg->precision > 0) {
        cJSON_AddNumberToObject(o, "min_runs", (double)cfg->min_runs);
        cJSON_AddNumberToObject(o, "max_runs", (double)cfg->max_runs);
        cJSON_AddNumberToObject(o, "max_time_ms", cfg->max_time_ms);
    }
    cJSON_AddBoolToObject(o, "flush_l2", cfg->flush_l2);
    cJSON_AddBoolToObject(o, "exclude_launch", cfg->exclude_launch);
    return o;
}
