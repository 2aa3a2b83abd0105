/* Pieces shared by the printers: a growable text buffer and the JSON forms
 * of the structures every report carries (statistics, environment,
 * workload). Each printer (latency, throughput, pitfalls, calibrate) builds
 * on these so that a field is spelled the same way everywhere. */
#ifndef IB_REPORT_REPORT_H
#define IB_REPORT_REPORT_H

#include "base/common.h"

#include <cjson/cJSON.h>

typedef struct ib__sbuf {
    char *data;
    size_t len, cap;
    bool failed; /* an allocation failed: the result is NULL */
} ib__sbuf;

void ib__sbuf_printf(ib__sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Returns the text (caller frees) or NULL after an allocation failure. */
char *ib__sbuf_finish(ib__sbuf *b);
/* Each non-empty line of lines' text through item(b, line) (a text block
 * as a list's items: Markdown's, HTML's); frees lines' text, its failure
 * carried into b. */
void ib__sbuf_each_line(ib__sbuf *b, ib__sbuf *lines, void (*item)(ib__sbuf *b, const char *line));

/* Text from outside (a model path, a model's input names, a message) need
 * not be UTF-8, which JSON and the HTML page declare. The length of the
 * longest well-formed UTF-8 prefix of s (RFC 3629: no overlong form, no
 * surrogate, nothing above U+10FFFF, no sequence cut short). */
size_t ib__utf8_valid_prefix(const char *s, size_t n);
/* Appends n bytes of s with every byte that starts no well-formed UTF-8
 * character replaced by U+FFFD: the one sanitizer of every format. */
void ib__sbuf_append_utf8(ib__sbuf *b, const char *s, size_t n);

/* A number, or null when it is not finite (JSON has no NaN). */
cJSON *ib__json_number(double v);
void ib__json_add_number(cJSON *obj, const char *key, double v);
/* An option list as a JSON object of strings, in its order. */
cJSON *ib__json_options(const ib_option_list *list);
/* s at key, or null where s is NULL or "" (the result did not say). */
void ib__json_add_string_or_null(cJSON *o, const char *key, const char *s);
cJSON *ib__json_stats(const ib_stats *st);
/* st at key, or null where it holds no sample. */
void ib__json_add_stats_or_null(cJSON *o, const char *key, const ib_stats *st);
/* The measurement options a result was taken with. */
cJSON *ib__json_config(const ib_config *cfg);
cJSON *ib__json_env(const ib_env *env);
cJSON *ib__json_array(const double *x, size_t n);
/* "warmup": {runs, ms, steady} at root: what the warm-up did. */
void ib__json_add_warmup(cJSON *root, int64_t runs, double ms, bool steady);
/* "precision": {target, achieved, met} at root, where a target was asked
 * for (only a target has a verdict); nothing otherwise. */
void ib__json_add_precision(cJSON *root, double target, double achieved, bool met);
/* The IB_WARN_* bits of a result into o: "warnings" (what is wrong with
 * this measurement) and "notes" (standing advice about the setup, such as
 * session_dependent), each an array of keys. */
void ib__json_add_warnings(cJSON *o, unsigned bits);
/* The IB_WARN_* bits of warnings as their JSON keys ("high_cv"), their
 * text lines and whether each is a note, at most cap of each; returns how
 * many. */
#define IB__MAX_WARNINGS 16
size_t ib__warning_list(unsigned warnings, const char **keys, const char **texts, bool *notes, size_t cap);
/* "cuda", "cpu", "auto": a device as the documents spell it. */
const char *ib__device_name(ib_device_kind d);
/* The differences between two latency results compared (different
 * models, batches, ... partial inputs): fn(ctx, key, line) for each, in
 * the order the reports list them; key as the JSON spells it. */
void ib__compare_warnings_each(const ib_latency_file *a, const ib_latency_file *b,
                               void (*fn)(void *ctx, const char *key, const char *line), void *ctx);
/* The warnings each compared input was measured with (its result's own,
 * notes left out), which the verdict rests on: fn(ctx, key, line) for A's
 * then B's, key "a.high_cv", line "input A (a.json) warned high_cv: the
 * coefficient of variation is above 5%: ..." (the name "A" without one). */
void ib__compare_inputs_warned_each(unsigned a_warnings, const char *a_name, unsigned b_warnings,
                                    const char *b_name,
                                    void (*fn)(void *ctx, const char *key, const char *line), void *ctx);
/* The same, for one side, as a ';'-separated list of its keys ("high_cv;cpu_busy"), into b. */
void ib__warning_keys_list(ib__sbuf *b, unsigned warnings);
/* The IB_WARN_* bits of a result document: its "warnings" and its "notes"
 * (a document written before notes were kept apart has them all in
 * "warnings"). */
unsigned ib__json_result_warning_bits(const cJSON *doc);
/* A document's opening keys: schema, partial and stop_reason; with info,
 * model, device and workload too. */
cJSON *ib__json_document(const char *schema, bool partial, ib_status stop_status,
                         const ib_workload_info *info);
/* The shortest decimal text (at least 15 digits' precision) that reads
 * back as exactly v: the number format of JSON and CSV. */
#define IB__EXACT_LEN 32
void ib__format_exact(char out[IB__EXACT_LEN], double v);
/* Serializes and deletes root, as valid UTF-8 (ib__sbuf_append_utf8);
 * NULL on failure. */
char *ib__json_finish(cJSON *root);

/* The closing lines of every text report: PARTIAL and why, a missing-NVML
 * note on a GPU, the warnings, one per line, each "warning: ...", then the
 * notes, once each, "note: ...". */
void ib__text_footer(ib__sbuf *b, bool partial, ib_status stop_status, const ib_env *env, unsigned warnings);
/* An HTML page's table of the model and the machine (batch and timing as
 * the page words them), and its lists of the footer's warnings and notes:
 * every command's page, serve's too (html_report.c). */
void ib__html_page_meta(ib__sbuf *b, const ib_workload_info *info, const ib_env *env, const char *batch,
                        const char *timing);
void ib__html_page_notes(ib__sbuf *b, bool partial, ib_status stop_status, const ib_env *env,
                         unsigned warnings);
/* "NVIDIA H200 (driver 580.159, CUDA 13.0), RUNTIME VERSION PROVIDER": the
 * machine, then what environment.runtime names ("" parts left out). */
void ib__text_env(ib__sbuf *b, const ib_env *env);
/* Room for a whole option list as text (IB_MAX_OPTIONS of key=value). */
#define IB__OPTIONS_TEXT_LEN (IB_MAX_OPTIONS * (IB_OPTION_KEY_LEN + IB_OPTION_VALUE_LEN + 2) + 64)
/* "threads=default, dtype=fp16": a backend's
 * options as every report prints them, in its order; "" for none. */
void ib__format_options(char *buf, size_t cap, const ib_option_list *list);
/* Who chose the arithmetic when the user did not: " (runtime default)",
 * " (the model's own)", or "" (asked). */
const char *ib__math_note(bool math_default, bool math_of_model);
/* A workload's options in that form, then its arithmetic:
 * "threads=default, math=fp32 (runtime default)". */
void ib__info_runtime_options(char *buf, size_t cap, const ib_workload_info *info);
/* The same of a result read back (its math carries its note). */
void ib__file_runtime_options(char *buf, size_t cap, const ib_latency_file *f);
/* How the inputs are filled: "x=random, sr=16000". */
void ib__info_inputs(ib__sbuf *b, const ib_workload_info *info);
/* The same as report lines: "\nruntime options: ...\ninput values: ...". */
void ib__text_runtime_options(ib__sbuf *b, const ib_workload_info *info);
/* Formats a duration in ms with 4 significant digits and the best unit. */
const char *ib__fmt_ms(char buf[32], double ms);
/* "median 139.3 us, 95% CI [135.6, 142.2] us": a figure and its interval in
 * one unit, the figure's (never a unit per number). */
void ib__text_estimate(ib__sbuf *b, const char *name, double value_ms, const double ci_ms[2]);
/* Four significant digits without an exponent: a table's cell in its
 * table's unit (ib__latency_unit) and an interval in its estimate's can
 * reach 10,000 of it (a request of 15 s in ms, few runs on a loaded
 * machine), and "1.511e+04" is not for reading. */
const char *ib__fmt_plain4(char buf[32], double v);
/* A fraction as the percentage a user wrote: every digit it carries
 * ("0.001%", "0.5%"), not a fixed two decimals. */
const char *ib__fmt_percent(char buf[32], double fraction);
/* Inputs per second: whole numbers once they are large, 4 digits below. */
const char *ib__fmt_rate(char buf[32], double v);
/* Why a throughput curve stopped before memory or max_batch, and when
 * ("stopped past the peak after ...: ...\n", "stopped by the time bound
 * after ...\n"); nothing when every candidate was timed. */
void ib__throughput_stop_line(ib__sbuf *b, const ib_throughput_result *r);
/* A pitfall row's "vs correct": "+12.3%", "+-4.5%" for the single sample
 * (a spread, not an offset), "-" for the correct row or without figures. */
const char *ib__fmt_pitfall_error(char buf[32], const ib_pitfall_row *row);
/* A pitfall row's interval of its difference: "[-9.1%, +1.2%]", "exact
 * (same runs)" for a row read off the correct runs, "none" without one,
 * "-" for a row not compared. */
const char *ib__fmt_pitfall_interval(char buf[48], const double ci_pct[2], ib_pitfall_reading reading);
/* The JSON of a row's reading: error_ci95_pct ([low, high] or null),
 * verdict (ib_pitfall_reading_name, null when not compared), no_interval. */
void ib__json_pitfall_reading(cJSON *o, const double ci_pct[2], ib_pitfall_reading reading,
                              const char *no_interval);
/* The line that names the arithmetic every pitfalls row is compared with
 * (math, math_default: the correct row's): "reference arithmetic (...):
 * TF32, the runtime's default (float32 tensors, 10-bit mantissas in
 * convolutions and matrix products)", "...: strict fp32 (no TF32)", ... */
#define IB__REFERENCE_TEXT_LEN 224
const char *ib__pitfalls_reference(char buf[IB__REFERENCE_TEXT_LEN], const char *math, bool math_default);
/* The arithmetic of row's figures: the TF32 row's own, the reference's for
 * the others ("" when the backend does not say). */
const char *ib__pitfall_math(const ib_pitfalls_result *r, const ib_pitfall_row *row);
/* ib_latency_file_parse's reading, handed the keys of the runtime that
 * wrote old files (legacy, NULL: none; ib_latency_file_parse asks the
 * registry for them, src/entry/entry.c). */
struct ib__legacy_result_keys;
ib_status ib__latency_file_read(const char *text, size_t len, const struct ib__legacy_result_keys *legacy,
                                ib_latency_file *out, ib_error *err);
/* The unit of a latency table or plot given its median in ms (of a table
 * of several figures, the smallest median): "us" below 0.1 ms
 * (microseconds read better there), "s" from 1000 ms, else "ms". Returns
 * that unit per ms (1000, 1e-3 or 1). Its cells: ib__fmt_plain4. */
double ib__latency_unit(double median_ms, const char **unit);

/* The accuracy of a reduced arithmetic (accuracy_report.c): a table after
 * a blank line, nothing when not measured; "accuracy" in a JSON document
 * (null when not measured). */
void ib__text_accuracy(ib__sbuf *b, const ib_accuracy *acc);
void ib__json_accuracy(cJSON *root, const ib_accuracy *acc);

/* Sessions of any command (sessions_figures.c). A figure: one value a
 * session (NaN where a session has none) and, for a two-level interval,
 * each session's runs; plain: the values alone, no interval (a batch). */
typedef struct ib__session_figure {
    const char *key, *label, *unit;
    const double *values;             /* [k] */
    const ib_session_sample *samples; /* [k] or NULL */
    bool plain;
} ib__session_figure;
/* {key, label, unit, values, sessions, geomean, interval, ci95, precision,
 * between_sd_log, within_sd_log, spread} of f over k sessions. */
cJSON *ib__session_figure_json(const ib__session_figure *f, size_t k);
/* The energy per input of each session (J, NaN where a session has no
 * figure) as a figure of figures, its interval the t over the sessions'
 * log values (docs/energy.md); added only where some session has one. */
void ib__add_energy_figure(cJSON *figures, const char *key, const char *label, const double *joules_per_item,
                           size_t k);
/* --sessions of a generative model's serve (sessions_serve_gen.c): the
 * merged document's figures from the sessions' entries (runs). */
void ib__gen_serve_session_figures(cJSON *sessions, const cJSON *runs, size_t k);
/* Whether any of v[0..k) is finite (a figure some session has). */
bool ib__any_finite(const double *v, size_t k);
/* Session i's entry of sessions.runs: index, exit_status, message, failed,
 * and keys[0..n_keys) moved from its document root (NULL: it failed). */
cJSON *ib__session_entry(const ib_session_outcome *o, cJSON *root, size_t i, const char *const *keys,
                         size_t n_keys);
typedef struct ib__sessions_count {
    size_t requested, count, measured;
    bool incomplete;
    const char *stop_reason; /* NULL: "sessions incomplete" */
    const cJSON *runs;       /* their warnings are merged */
} ib__sessions_count;
/* Adds base.sessions {requested, count, measured, incomplete} and sets
 * base's partial, stop_reason and warnings from c; returns sessions. */
cJSON *ib__sessions_object(cJSON *base, const ib__sessions_count *c);
/* o[key] as a number, NaN when it is not one. */
double ib__json_num(const cJSON *o, const char *key);
/* The figure of sessions.figures whose key is key, or NULL (figures read
 * back: anything else than an array of figures finds none). */
const cJSON *ib__figure_named(const cJSON *figures, const char *key);
/* A figure's value of session i (0-based), NaN when none. */
double ib__figure_value(const cJSON *figure, size_t i);
/* The aggregate rows the CSV and Markdown tables end with. */
typedef enum ib__figure_row {
    IB__FIGURE_GEOMEAN,
    IB__FIGURE_CI_LOW,
    IB__FIGURE_CI_HIGH,
    IB__FIGURE_BETWEEN_SD,
    IB__FIGURE_SPREAD,
    IB__FIGURE_ROWS
} ib__figure_row;
extern const char *const ib__figure_row_names[IB__FIGURE_ROWS];
double ib__figure_aggregate(const cJSON *figure, ib__figure_row row);
/* The latency sessions merged (sessions_report.c, ib_sessions_merge). */
char *ib__latency_sessions_merge(const ib_session_outcome *s, size_t k, size_t requested,
                                 const char *stop_reason, ib_error *err);
/* The text report of a throughput or pitfalls sessions document
 * (sessions_commands.c); NULL when it is not one or memory ran out. */
char *ib__sessions_report_text_doc(const char *doc);
/* Its HTML page: a strip of each figure's session values (html_report.c). */
char *ib__sessions_report_html_doc(const char *doc);
/* The warnings of a sessions report, without one session's machine
 * figures (the sessions carry their own). */
void ib__sessions_footer(ib__sbuf *b, unsigned warnings);
/* The text table of sessions (a row each, a column per figure) and each
 * figure across them. */
void ib__sessions_text_table(ib__sbuf *b, const cJSON *sessions);

/* serve's JSON pieces (serve_report.c), also in the fleet's serve report:
 * the copies' name ("none", "apart", "inside_compute"), one rate's point,
 * and the configuration with its instances. */
/* Energy (energy_report.c): "counter", "sampled_power", "none"; a text
 * line (and the idle and step lines) labelled label; the JSON object of a
 * figure (its figures null, note the reason, without one); the curve's
 * inputs per joule by batch, the most efficient beside the fastest. */
const char *ib__energy_source_name(ib_energy_source s);
void ib__text_energy(ib__sbuf *b, const char *label, const ib_energy *e);
/* Which of a measurement's device and CPU package figures (cpu NULL: none)
 * its reports show, IB__ENERGY_SHOW_* bits, the same in every format: on a
 * CPU workload the CPU package's alone (it is the workload's energy; the
 * device's "a CPU workload" no figure would stand on every result); else
 * the device's, and the CPU package's where it has a figure (where it has
 * none, why is in the JSON's cpu_energy.note, not a line on every result:
 * issue 28). */
enum { IB__ENERGY_SHOW_DEVICE = 1, IB__ENERGY_SHOW_CPU = 2 };
unsigned ib__energy_shown(const ib_energy *device, const ib_energy *cpu);
cJSON *ib__json_energy(const ib_energy *e);
/* The figure in a line, or "no figure: why"; "8.303 +-0.73%" or "-". */
const char *ib__energy_summary(char *buf, size_t cap, const ib_energy *e);
const char *ib__fmt_inputs_per_joule(char buf[32], const ib_energy *e);
void ib__text_energy_curve(ib__sbuf *b, const ib_throughput_result *r);
/* The same with the work's items named ("input", "token"): "J a token",
 * "tokens/J". */
void ib__text_energy_of(ib__sbuf *b, const char *label, const ib_energy *e, const char *item);
const char *ib__energy_summary_of(char *buf, size_t cap, const ib_energy *e, const char *item);
/* A curve's energy by count (batch, sequences): its items per joule, the
 * most efficient beside the fastest. n points; peak, most_efficient
 * indexes (-1 none); rate: items per second at each. */
typedef struct ib__energy_curve {
    const char *what, *item; /* "batch", "input"; "sequences", "token" */
    size_t n;
    const int64_t *count;
    const ib_energy *const *energy;
    const bool *ok;
    const double *rate;
    int peak, most_efficient;
    bool count_first; /* "8 sequences", not "batch 8" */
} ib__energy_curve;
void ib__text_energy_table(ib__sbuf *b, const ib__energy_curve *c);
/* Room for a curve's columns (a generation's IB_GEN_MAX_POINTS fit too),
 * and the curve of a throughput result by batch, of a generation's points
 * by sequences, over them. */
typedef struct ib__energy_curve_columns {
    int64_t count[IB_MAX_POINTS];
    const ib_energy *energy[IB_MAX_POINTS];
    bool ok[IB_MAX_POINTS];
    double rate[IB_MAX_POINTS];
} ib__energy_curve_columns;
ib__energy_curve ib__energy_curve_of_batches(const ib_throughput_result *r, ib__energy_curve_columns *cols);
ib__energy_curve ib__energy_curve_of_sequences(const ib_gen_result *r, ib__energy_curve_columns *cols);
/* Point i's count as the text names it: "batch 8", "8 sequences". */
void ib__energy_curve_at(char buf[48], const ib__energy_curve *c, int i);
/* pitfalls: the energy rows (the correct one first) as the tables print
 * them, none when the row does not apply; the text section; the JSON. */
typedef struct ib__energy_pitfall_row {
    char name[64];
    double joules_per_item, error_pct;
    char why[200];
} ib__energy_pitfall_row;
size_t ib__energy_pitfall_rows(const ib_energy_pitfall *e, ib__energy_pitfall_row rows[3]);
void ib__text_energy_pitfall(ib__sbuf *b, const ib_energy_pitfall *e);
cJSON *ib__json_energy_pitfall(const ib_energy_pitfall *e);
/* A change of energy as compare's reports show it: the figures shown (a
 * merged result's the geometric mean across its sessions), the change B /
 * A - 1 and its interval (NaN: not in both), how the interval was got
 * ("the two figures' bounds, ..."; docs/compare.md) and each side's reason
 * for having no figure ("" or NULL where it has one). */
typedef struct ib__energy_compared {
    double a, b, change, ci[2];
    char how[200];
    const char *why_not_a, *why_not_b;
} ib__energy_compared;
/* The change between two sides' figures (ib__energy_sessions_change) and
 * how its interval was got, into out's change, ci and how. */
struct ib__energy_side;
void ib__energy_compare_sides(const struct ib__energy_side *a, const struct ib__energy_side *b,
                              ib__energy_compared *out);
/* compare of two latency results: the energy per input's, by their
 * sessions' figures where they are sessions documents. */
void ib__energy_compare(const ib_latency_file *a, const ib_latency_file *b, ib__energy_compared *out);
/* Its verdict against threshold ("more energy", "less energy", "no
 * change", "inconclusive"; "not in both files" when change is NaN). */
const char *ib__energy_change_verdict(double change, const double ci[2], double threshold);
/* compare's text line of it ("what: A J -> B J: ..."), or where one side
 * has none "label: not in both files: B has no figure: its reason", or
 * nothing where neither has; its JSON object (pct, interval_pct, verdict)
 * and the reasons (why_not_a, why_not_b) added to o. */
void ib__text_energy_compared(ib__sbuf *buf, const char *label, const char *what,
                              const ib__energy_compared *e, double threshold);
cJSON *ib__json_energy_compared(const ib__energy_compared *e, double threshold);
/* The reason of the side without a figure (*side "A" or "B"; A when
 * neither has one). */
const char *ib__energy_why_not(const ib__energy_compared *e, const char **side);
void ib__json_energy_why_not(cJSON *o, const ib__energy_compared *e);
/* A figure's joules_per_item and bound read back from its JSON object e,
 * at path in a document (absent, null or without a figure: both NaN), and
 * where it has none and note[cap] is still empty, e's note: its reason.
 * Refused, "<refusal><path> is not an object" or "<refusal><path>.
 * joules_per_item is not a positive number with a bound in [0, 1)", when
 * it is broken (refusal: "not an inferbench latency result: "). */
ib_status ib__energy_read_figure(const cJSON *e, const char *refusal, const char *path,
                                 double *joules_per_item, double *bound, char *note, size_t cap,
                                 ib_error *err);

const char *ib__serve_copies_name(ib_serve_copies c);
cJSON *ib__serve_json_point(const ib_serve_point *p, bool copies_apart);
cJSON *ib__serve_json_config(const ib_serve_config *cfg, size_t instances);

#endif
