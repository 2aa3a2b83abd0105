/* Two generative serve results compared (docs/compare.md, "Generative
 * serve results"): TTFT, TPOT, ITL and end-to-end, each its medians'
 * change with its interval and verdict, beside each side's p99; the
 * goodput share's difference with its interval; what differs between the
 * two runs. In text, JSON, CSV and Markdown, as compare prints a latency
 * comparison. */
#include "report/printer.h"
#include "report/md_rows.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EOL "\r\n" /* CSV lines, as RFC 4180 writes them */

/* The four timed figures, in the order every format lists them. */
typedef struct figure {
    const char *key, *label;
    const ib_comparison *c;
} figure;

static size_t figures(const ib_gen_serve_comparison *c, figure out[4])
{
    size_t n = 0;
    out[n++] = (figure){ "ttft", "TTFT", &c->ttft };
    out[n++] = (figure){ "tpot", "TPOT", &c->tpot };
    if (c->itl_compared) out[n++] = (figure){ "itl", "ITL", &c->itl };
    out[n++] = (figure){ "e2e", "end-to-end", &c->e2e };
    return n;
}

/* Why ITL is not compared (NULL when it is): a side's tokens that came
 * several to a chunk, their gaps 0. */
static const char *itl_not_compared(const ib_gen_serve_comparison *c, char *buf, size_t size)
{
    if (c->itl_compared) return NULL;
    snprintf(buf, size,
             "ITL not compared: gaps of 0 (tokens that reached the client in one chunk), %zu in A, %zu in B; "
             "TPOT holds the decode rate",
             c->itl_zero_gaps_a, c->itl_zero_gaps_b);
    return buf;
}

/* The goodput share's reading: its interval of B - A away from 0. */
static const char *share_verdict(const ib_gen_serve_comparison *c)
{
    if (isnan(c->good_share_change)) return "not judged (a side has no targets)";
    if (c->good_share_ci95[0] > 0) return "higher";
    if (c->good_share_ci95[1] < 0) return "lower";
    return "no significant change";
}

/* Two numbers alike: both absent (NaN) or equal. */
static bool same_number(double a, double b) { return (isnan(a) && isnan(b)) || a == b; }

/* Whether the two runs were sent the same requests: each one's scheduled
 * arrival and lengths (the seed, the rate and the lengths asked make
 * them; a trace too). */
static bool same_schedule(const ib_gen_serve_file *a, const ib_gen_serve_file *b)
{
    if (a->requests != b->requests) return false;
    for (size_t i = 0; i < a->requests; i++) {
        const ib_gen_request_spec *x = &a->schedule[i], *y = &b->schedule[i];
        if (x->arrival_ms != y->arrival_ms || x->prompt_tokens != y->prompt_tokens ||
            x->output_tokens != y->output_tokens)
            return false;
    }
    return true;
}

/* The sentence of a run in process against one over HTTP (NULL when both
 * are alike): the difference is then the server's cost. */
static const char *transport_line(const ib_gen_serve_file *a, const ib_gen_serve_file *b)
{
    if (a->over_http == b->over_http) return NULL;
    return b->over_http ? "B over HTTP, A in process: the difference is what the server and the client add"
                        : "A over HTTP, B in process: the difference is what the server and the client add";
}

/* Beside the transport line (one side in process, the other over HTTP):
 * "A picked no token ...", what the in-process side's picking of tokens
 * leaves in the difference, then end. */
static void sampling_sentence(ib__sbuf *out, const ib_gen_serve_file *a, const ib_gen_serve_file *b,
                              const char *end)
{
    const ib_gen_serve_file *in = a->over_http ? b : a;
    ib__sbuf_printf(out, "%c %s%s", a->over_http ? 'B' : 'A',
                    !strcmp(in->sampling, "greedy")
                        ? "picked each token greedily from its logits (--sampling greedy): the difference "
                          "holds the server's sampling past one pass"
                        : "picked no token from its logits (--sampling none): the server's sampling is in "
                          "the difference too",
                    end);
}

/* What differs between the two runs: each a reason not to read a change
 * as the model's or the runtime's alone. One run in process against one
 * over HTTP names its model as the server does and states no engine: the
 * model, device, slots and prefill chunk are not set against each other
 * then (the transport line says what is compared). */
static size_t differences(const ib_gen_serve_file *a, const ib_gen_serve_file *b,
                          const ib_gen_serve_comparison *c, const char **keys, const char **texts)
{
    size_t n = 0;
#define DIFF(COND, KEY, TEXT)                                                                                \
    if (COND) {                                                                                              \
        keys[n] = KEY;                                                                                       \
        texts[n++] = TEXT;                                                                                   \
    }
    bool alike = a->over_http == b->over_http;
    DIFF(alike && strcmp(a->model, b->model), "different_model", "A and B served different models")
    DIFF(alike && strcmp(a->device, b->device), "different_device", "A and B ran on different devices")
    DIFF(alike && a->slots != b->slots, "different_slots", "A and B had different slots")
    DIFF(alike && a->prefill_chunk != b->prefill_chunk, "different_prefill_chunk",
         "A and B had different prefill chunks")
    DIFF(alike && strcmp(a->sampling, b->sampling), "different_sampling",
         "A and B picked their tokens differently (--sampling)")
    DIFF(!same_number(a->offered_rate, b->offered_rate), "different_rate",
         "A and B were offered different rates")
    DIFF(!same_number(a->seed, b->seed), "different_seed",
         "A and B drew their schedules from different seeds")
    DIFF(a->requests != b->requests, "different_request_count",
         "A and B were sent different numbers of requests")
    DIFF(a->requests == b->requests && !same_schedule(a, b), "different_schedule",
         "A and B were sent different schedules (a request's arrival or lengths differ)")
    DIFF(a->client_late, "a_client_late",
         "A's client was late (its lateness past its bound is in every TTFT)")
    DIFF(b->client_late, "b_client_late",
         "B's client was late (its lateness past its bound is in every TTFT)")
    DIFF(!c->same_targets, "different_targets", "A and B judged goodput by different targets")
    DIFF(a->partial || b->partial, "partial_input", "A or B is a partial result")
#undef DIFF
    return n;
}

/* ------------------------------------------------------------------------ */
/* Text                                                                      */
/* ------------------------------------------------------------------------ */

static void text_side(ib__sbuf *b, const char *role, const char *name, const ib_gen_serve_file *f)
{
    if (f->over_http) {
        ib__sbuf_printf(b, "%s %s: %s over HTTP, %zu of %zu requests completed\n", role, name ? name : "",
                        f->model, f->completed, f->requests);
        return;
    }
    ib__sbuf_printf(b, "%s %s: %s, %zu of %zu requests completed, %d slots, prefill chunk %d\n", role,
                    name ? name : "", f->model, f->completed, f->requests, (int)f->slots,
                    (int)f->prefill_chunk);
}

static void text_figure(ib__sbuf *b, const figure *f)
{
    const ib_comparison *c = f->c;
    char a50[32], b50[32], a99[32], b99[32];
    ib__sbuf_printf(
        b,
        "%-10s median A %s, B %s: %+.2f%%, 95%% CI [%+.2f%%, %+.2f%%]; Mann-Whitney p = %.3g: %s; "
        "p99 A %s, B %s\n",
        f->label, ib__fmt_ms(a50, c->a.p50), ib__fmt_ms(b50, c->b.p50), ib__signed_shown(100 * c->change, 2),
        ib__signed_shown(100 * c->change_ci95[0], 2), ib__signed_shown(100 * c->change_ci95[1], 2),
        c->mann_whitney_p, ib_change_name(c->verdict), ib__fmt_ms(a99, c->a.p99), ib__fmt_ms(b99, c->b.p99));
}

static void text_goodput(ib__sbuf *b, const ib_result *r)
{
    const ib_gen_serve_comparison *c = r->gen_serve_comparison;
    const ib_gen_serve_file *fa = r->gen_serve_a, *fb = r->gen_serve_b;
    if (isnan(c->good_share_change)) {
        ib__sbuf_printf(b, "goodput: %s\n", share_verdict(c));
        return;
    }
    ib__sbuf_printf(b,
                    "goodput share: A %.4g%% (%zu of %zu), B %.4g%% (%zu of %zu): %+.2f points, 95%% CI "
                    "[%+.2f, %+.2f]: %s; goodput A %.4g, B %.4g requests/s\n",
                    100 * c->good_share_a, fa->good, fa->completed, 100 * c->good_share_b, fb->good,
                    fb->completed, ib__signed_shown(100 * c->good_share_change, 2),
                    ib__signed_shown(100 * c->good_share_ci95[0], 2),
                    ib__signed_shown(100 * c->good_share_ci95[1], 2), share_verdict(c), fa->goodput_rate,
                    fb->goodput_rate);
}

char *ib__gen_serve_comparison_text(const ib_result *r)
{
    const ib_gen_serve_comparison *c = r->gen_serve_comparison;
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "inferbench compare: is serving B faster or slower than A? (a generative model "
                        "under load)\n");
    text_side(&b, "A (baseline) ", r->a_name, r->gen_serve_a);
    text_side(&b, "B (candidate)", r->b_name, r->gen_serve_b);
    const char *transport = transport_line(r->gen_serve_a, r->gen_serve_b);
    if (transport) {
        ib__sbuf_printf(&b, "%s\n", transport);
        sampling_sentence(&b, r->gen_serve_a, r->gen_serve_b, "\n");
    }
    ib__sbuf_printf(&b, "\n");
    figure f[4];
    for (size_t i = 0, n = figures(c, f); i < n; i++) text_figure(&b, &f[i]);
    char why[192];
    if (itl_not_compared(c, why, sizeof why)) ib__sbuf_printf(&b, "%s\n", why);
    ib__sbuf_printf(&b,
                    "verdicts on the median against a threshold of %.2f%% of it; the p99s beside it, "
                    "not judged\n",
                    100 * c->ttft.threshold);
    text_goodput(&b, r);
    const char *keys[16], *texts[16];
    size_t n = differences(r->gen_serve_a, r->gen_serve_b, c, keys, texts);
    for (size_t i = 0; i < n; i++) ib__sbuf_printf(&b, "warning: %s\n", texts[i]);
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */
/* ------------------------------------------------------------------------ */

static cJSON *json_goodput(const ib_result *r)
{
    const ib_gen_serve_comparison *c = r->gen_serve_comparison;
    const ib_gen_serve_file *sides[2] = { r->gen_serve_a, r->gen_serve_b };
    cJSON *o = cJSON_CreateObject();
    for (int i = 0; i < 2; i++) {
        cJSON *s = cJSON_AddObjectToObject(o, i ? "b" : "a");
        cJSON_AddNumberToObject(s, "good", (double)sides[i]->good);
        cJSON_AddNumberToObject(s, "completed", (double)sides[i]->completed);
        ib__json_add_number(s, "share", i ? c->good_share_b : c->good_share_a);
        ib__json_add_number(s, "goodput_rate", sides[i]->goodput_rate);
    }
    ib__json_add_number(o, "share_change", c->good_share_change);
    cJSON_AddItemToObject(o, "share_change_ci95", ib__json_array(c->good_share_ci95, 2));
    cJSON_AddStringToObject(o, "verdict", share_verdict(c));
    cJSON_AddBoolToObject(o, "same_targets", c->same_targets);
    return o;
}

char *ib__gen_serve_comparison_json(const ib_result *r)
{
    const ib_gen_serve_comparison *c = r->gen_serve_comparison;
    cJSON *root = cJSON_CreateObject();
    cJSON_AddStringToObject(root, "schema", "inferbench.serve_generative-compare/1");
    ib__json_add_string_or_null(root, "a", r->a_name);
    ib__json_add_string_or_null(root, "b", r->b_name);
    ib__json_add_number(root, "threshold", c->ttft.threshold);
    figure f[4];
    for (size_t i = 0, n = figures(c, f); i < n; i++)
        cJSON_AddItemToObject(root, f[i].key, ib__json_comparison(f[i].c));
    char why[192];
    if (itl_not_compared(c, why, sizeof why)) cJSON_AddStringToObject(root, "itl_not_compared", why);
    cJSON_AddItemToObject(root, "goodput", json_goodput(r));
    cJSON_AddBoolToObject(root, "a_over_http", r->gen_serve_a->over_http);
    cJSON_AddBoolToObject(root, "b_over_http", r->gen_serve_b->over_http);
    const char *keys[16], *texts[16];
    size_t n = differences(r->gen_serve_a, r->gen_serve_b, c, keys, texts);
    cJSON *w = cJSON_AddArrayToObject(root, "warnings");
    for (size_t i = 0; i < n; i++) cJSON_AddItemToArray(w, cJSON_CreateString(keys[i]));
    return ib__json_finish(root);
}

/* ------------------------------------------------------------------------ */
/* CSV: a row per figure, the goodput share's last (its unit "share")        */
/* ------------------------------------------------------------------------ */

static void csv_side(ib__sbuf *b, const char *name, const ib_gen_serve_file *f, double n, double p50,
                     double p99)
{
    ib__csv_text_cell(b, name ? name : "");
    ib__csv_text_cell(b, f->model);
    ib__csv_number(b, n);
    ib__csv_number(b, p50);
    ib__csv_number(b, p99);
}

char *ib__gen_serve_comparison_csv(const ib_result *r)
{
    const ib_gen_serve_comparison *c = r->gen_serve_comparison;
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "figure,unit,a_file,a_model,a_n,a_median,a_p99,b_file,b_model,b_n,b_median,b_p99,"
                        "change_pct,ci95_low_pct,ci95_high_pct,mann_whitney_p,threshold_pct,verdict" EOL);
    figure f[4];
    for (size_t i = 0, n = figures(c, f); i < n; i++) {
        const ib_comparison *x = f[i].c;
        ib__sbuf_printf(&b, "%s,ms", f[i].key);
        csv_side(&b, r->a_name, r->gen_serve_a, (double)x->a.n, x->a.p50, x->a.p99);
        csv_side(&b, r->b_name, r->gen_serve_b, (double)x->b.n, x->b.p50, x->b.p99);
        const double v[] = { 100 * x->change, 100 * x->change_ci95[0], 100 * x->change_ci95[1],
                             x->mann_whitney_p, 100 * x->threshold };
        for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) ib__csv_number(&b, v[k]);
        ib__csv_text_cell(&b, ib_change_name(x->verdict));
        ib__sbuf_printf(&b, EOL);
    }
    /* The share of the completed requests that met every target: its
     * difference in points (B - A) where the others have a relative change. */
    ib__sbuf_printf(&b, "good_share,share");
    csv_side(&b, r->a_name, r->gen_serve_a, (double)r->gen_serve_a->completed, c->good_share_a, NAN);
    csv_side(&b, r->b_name, r->gen_serve_b, (double)r->gen_serve_b->completed, c->good_share_b, NAN);
    const double v[] = { 100 * c->good_share_change, 100 * c->good_share_ci95[0], 100 * c->good_share_ci95[1],
                         NAN, NAN };
    for (size_t k = 0; k < sizeof v / sizeof v[0]; k++) ib__csv_number(&b, v[k]);
    ib__csv_text_cell(&b, share_verdict(c));
    ib__sbuf_printf(&b, EOL);
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* Markdown                                                                  */
/* ------------------------------------------------------------------------ */

char *ib__gen_serve_comparison_md(const ib_result *r)
{
    const ib_gen_serve_comparison *c = r->gen_serve_comparison;
    ib__sbuf b = { 0 };
    ib__sbuf_printf(&b, "**inferbench compare** (a generative model under load): A ");
    ib__md_cell(&b, r->a_name ? r->a_name : "");
    ib__sbuf_printf(&b, " (baseline), B ");
    ib__md_cell(&b, r->b_name ? r->b_name : "");
    ib__sbuf_printf(&b, " (candidate)\n\n");
    const char *transport = transport_line(r->gen_serve_a, r->gen_serve_b);
    if (transport) {
        ib__sbuf_printf(&b, "%s. ", transport);
        sampling_sentence(&b, r->gen_serve_a, r->gen_serve_b, ".\n\n");
    }
    IB__MD_HEADER(&b, "lrrrrrrrl", "figure", "A median", "B median", "A p99", "B p99", "median change",
                  "95% CI", "Mann-Whitney p", "verdict");
    figure f[4];
    for (size_t i = 0, n = figures(c, f); i < n; i++) {
        const ib_comparison *x = f[i].c;
        char t[7][40];
        snprintf(t[4], sizeof t[4], "%+.2f%%", ib__signed_shown(100 * x->change, 2));
        snprintf(t[5], sizeof t[5], "[%+.2f%%, %+.2f%%]", ib__signed_shown(100 * x->change_ci95[0], 2),
                 ib__signed_shown(100 * x->change_ci95[1], 2));
        snprintf(t[6], sizeof t[6], "%.3g", x->mann_whitney_p);
        IB__MD_ROW(&b, f[i].label, ib__fmt_ms(t[0], x->a.p50), ib__fmt_ms(t[1], x->b.p50),
                   ib__fmt_ms(t[2], x->a.p99), ib__fmt_ms(t[3], x->b.p99), t[4], t[5], t[6],
                   ib_change_name(x->verdict));
    }
    char why[192];
    if (itl_not_compared(c, why, sizeof why)) ib__sbuf_printf(&b, "\n%s.\n", why);
    ib__sbuf_printf(&b, "\nVerdicts on the median against a threshold of %.2f%%.\n\n",
                    100 * c->ttft.threshold);
    ib__sbuf line = { 0 };
    text_goodput(&line, r);
    b.failed |= line.failed;
    if (line.data) {
        line.data[strcspn(line.data, "\n")] = '\0';
        ib__md_cell(&b, line.data);
        ib__sbuf_printf(&b, "\n");
    }
    free(line.data);
    const char *keys[16], *texts[16];
    size_t n = differences(r->gen_serve_a, r->gen_serve_b, c, keys, texts);
    if (n) ib__sbuf_printf(&b, "\n");
    for (size_t i = 0; i < n; i++) ib__sbuf_printf(&b, "- warning: %s\n", texts[i]);
    return ib__sbuf_finish(&b);
}
