/* A generative model served under load (docs/serve-generative.md): the
 * text report and the JSON document, with every request's and every
 * step's times and the schedule it was measured on. */
#include "report/gen_serve_sections.h"
#include "report/printer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------------ */
/* Text                                                                      */
/* ------------------------------------------------------------------------ */

static void text_schedule(ib__sbuf *b, const ib_gen_serve_result *r, const ib_gen_serve_config *c)
{
    ib__sbuf_printf(b, "requests: %zu measured, ", r->n_requests);
    if (c->arrivals == IB_ARRIVALS_TRACE) {
        ib__sbuf_printf(b, "arrivals and lengths from a trace\n");
        return;
    }
    if (c->arrivals == IB_ARRIVALS_CONSTANT)
        ib__sbuf_printf(b, "one every %.4g ms", 1000.0 / c->rate);
    else if (c->burstiness == 1)
        ib__sbuf_printf(b, "Poisson arrivals at %.4g requests/s (seed %llu)", c->rate,
                        (unsigned long long)c->seed);
    else
        ib__sbuf_printf(b, "gamma arrivals at %.4g requests/s, burstiness %.4g (seed %llu)", c->rate,
                        c->burstiness, (unsigned long long)c->seed);
    ib__sbuf_printf(b, "; prompt %d", (int)c->prompt_min);
    if (c->prompt_max != c->prompt_min) ib__sbuf_printf(b, "..%d", (int)c->prompt_max);
    ib__sbuf_printf(b, " tokens, output %d", (int)c->output_min);
    if (c->output_max != c->output_min) ib__sbuf_printf(b, "..%d", (int)c->output_max);
    ib__sbuf_printf(b, " tokens%s\n",
                    c->prompt_max != c->prompt_min || c->output_max != c->output_min ? " (drawn uniformly)"
                                                                                     : "");
}

static void text_header(ib__sbuf *b, const ib_gen_serve_result *r, const ib_gen_serve_config *c)
{
    const ib_gen_info *in = &r->info;
    ib__sbuf model = { 0 }; /* generate's words for the model: its type once, its size as a count */
    ib__gen_model_text(&model, in);
    if (model.failed) b->failed = true;
    ib__sbuf_printf(b, "inferbench serve: %s", in->model);
    if (model.len && !model.failed) ib__sbuf_printf(b, " (%s)", model.data);
    ib__sbuf_printf(b, " under load\n");
    free(model.data);
    ib__text_env(b, &r->env); /* the machine, as generate's heading */
    ib__sbuf_printf(b, "\n");
    ib__gen_runtime_text(b, in);
    ib__sbuf_printf(b,
                    "\nengine: %d slots of %d tokens; each step one mixed batch (a token of every request "
                    "generating, then prompt chunks up to %d tokens), synchronized, its end every token's "
                    "time; %d warm-up requests before, not counted; %s, a fixed output length\n",
                    (int)r->slots, (int)r->ctx_per_slot, (int)r->prefill_chunk, (int)r->warmup_requests,
                    r->sample_greedy
                        ? "each token a greedy sample of its logits on the host, within its step (--sampling "
                          "greedy)"
                        : "random token ids");
    text_schedule(b, r, c);
    ib__gen_serve_prompts_text(b, r);
}

static void stats_row(ib__sbuf *b, const char *label, const ib_stats *st)
{
    if (st->n == 0) {
        ib__sbuf_printf(b, "%-12s %7d %10s\n", label, 0, "-");
        return;
    }
    ib__sbuf_printf(b, "%-12s %7zu %10.4g %10.4g %10.4g %10.4g %10.4g %10.4g\n", label, st->n, st->mean,
                    st->p50, st->p90, st->p99, st->max, st->min);
}

static void text_figures(ib__sbuf *b, const ib_gen_serve_result *r)
{
    ib__sbuf_printf(b, "\n%-12s %7s %10s %10s %10s %10s %10s %10s\n", "ms", "n", "mean", "p50", "p90", "p99",
                    "max", "min");
    stats_row(b, "TTFT", &r->ttft);
    stats_row(b, "  queue", &r->queue);
    stats_row(b, "TPOT", &r->tpot);
    stats_row(b, "ITL", &r->itl);
    stats_row(b, "end-to-end", &r->e2e);
    ib__sbuf_printf(
        b, "every time from the request's scheduled arrival; queue: waiting for a slot (part of TTFT "
           "and end-to-end); TPOT: (end - first token) / (tokens - 1) per request; ITL: every gap\n\n");
    char span[32];
    ib__sbuf_printf(b, "%zu of %zu requests completed over %s (first arrival to last completion)\n",
                    r->n_completed, r->n_requests, ib__fmt_ms(span, r->span_ms));
    if (isnan(r->offered_rate)) /* a trace of one request, or of one instant */
        ib__sbuf_printf(b, "rate: offered - (the trace spans no time), achieved %.4g requests/s",
                        r->achieved_rate);
    else
        ib__sbuf_printf(b, "rate: offered %.4g requests/s, achieved %.4g", r->offered_rate, r->achieved_rate);
    /* The achieved rate's span holds one end-to-end latency more than the
     * arrivals': the pace and the TTFT's growth say whether the server
     * kept up. */
    if (!isnan(r->pace) && !isnan(r->ttft_growth))
        ib__sbuf_printf(b,
                        "; the completions kept %.0f%% of the arrivals' pace, the last quarter's TTFT %.3gx "
                        "the first's%s",
                        100 * r->pace, r->ttft_growth, r->saturated ? " (saturated: the queue grows)" : "");
    ib__sbuf_printf(b, "\n");
    char out_rate[32], all_rate[32]; /* 12280, never 1.228e+04 */
    ib__sbuf_printf(b, "tokens: %s output tokens/s, %s in all (prompt + output) a second\n",
                    ib__fmt_plain4(out_rate, r->output_tokens_per_s),
                    ib__fmt_plain4(all_rate, r->total_tokens_per_s));
}

static void text_goodput(ib__sbuf *b, const ib_gen_serve_result *r, const ib_gen_serve_config *c)
{
    if (isnan(r->goodput_rate)) return;
    ib__sbuf_printf(b, "goodput within");
    const char *sep = " ";
    if (c->slo_ttft_ms > 0) ib__sbuf_printf(b, "%sTTFT <= %.4g ms", sep, c->slo_ttft_ms), sep = ", ";
    if (c->slo_tpot_ms > 0) ib__sbuf_printf(b, "%sTPOT <= %.4g ms", sep, c->slo_tpot_ms), sep = ", ";
    if (c->slo_e2e_ms > 0) ib__sbuf_printf(b, "%send-to-end <= %.4g ms", sep, c->slo_e2e_ms);
    ib__sbuf_printf(b, ": %.4g requests/s, %zu of %zu completed requests (%.4g%%)\n", r->goodput_rate,
                    r->n_good, r->n_completed, 100 * r->good_share);
}

/* The median time of the steps that decoded tokens, with a prompt chunk
 * (chunked) or without: a chunk's share of the decode gaps. NaN: none. */
static double median_step(const ib_gen_serve_result *r, bool chunked)
{
    double *x = malloc((r->n_steps ? r->n_steps : 1) * sizeof *x);
    size_t n = 0;
    for (size_t i = 0; x && i < r->n_steps; i++)
        if (r->steps[i].decode_tokens > 0 && (r->steps[i].prefill_tokens > 0) == chunked)
            x[n++] = r->steps[i].end_ms - r->steps[i].start_ms;
    ib_stats st = { 0 };
    bool ok = n > 0 && ib_stats_compute(x, n, &st) == IB_OK;
    free(x);
    return ok ? st.p50 : NAN;
}

/* What the steps were: how many, how full, how many carried a chunk, and
 * what a chunk did to the decode steps it shared. */
static void text_steps(ib__sbuf *b, const ib_gen_serve_result *r)
{
    size_t chunked = 0;
    double decode = 0, busy = 0;
    for (size_t i = 0; i < r->n_steps; i++) {
        chunked += r->steps[i].prefill_tokens > 0;
        decode += r->steps[i].decode_tokens;
        busy += r->steps[i].end_ms - r->steps[i].start_ms;
    }
    if (r->n_steps == 0) return;
    char t[32], with[32], without[32];
    ib__sbuf_printf(b,
                    "steps: %zu (%zu with a prompt chunk), %.4g decode tokens a step on average, the engine "
                    "busy %s of the span\n",
                    r->n_steps, chunked, decode / (double)r->n_steps, ib__fmt_ms(t, busy));
    double c = median_step(r, true), p = median_step(r, false);
    if (!isnan(c) && !isnan(p))
        ib__sbuf_printf(b, "decode steps: median %s with a prompt chunk, %s without\n", ib__fmt_ms(with, c),
                        ib__fmt_ms(without, p));
}

char *ib__gen_serve_report_text(const ib_gen_serve_result *r, const ib_gen_serve_config *c,
                                const ib_endpoint_result *ep)
{
    ib__sbuf b = { 0 };
    if (ep) { /* served over HTTP: the endpoint in place of the engine (endpoint_report.c) */
        ib__endpoint_text_header(&b, ep);
        text_schedule(&b, r, c);
    } else
        text_header(&b, r, c);
    text_figures(&b, r);
    text_goodput(&b, r, c);
    text_steps(&b, r);
    ib__gen_serve_tail_lines(&b, r);
    if (ep) ib__endpoint_text(&b, ep, r);
    ib__gen_serve_pitfalls_text(&b, r);
    ib__gen_serve_text_machine(&b, r);
    /* Further sections come here, one call each (the curve over rates). */
    ib__text_footer(&b, r->partial, r->stop_status, &r->env, r->warnings);
    return ib__sbuf_finish(&b);
}

/* ------------------------------------------------------------------------ */
/* JSON                                                                      */
/* ------------------------------------------------------------------------ */

static const char *arrivals_name(const ib_gen_serve_config *c)
{
    return c->arrivals == IB_ARRIVALS_TRACE      ? "trace"
           : c->arrivals == IB_ARRIVALS_CONSTANT ? "constant"
                                                 : "gamma";
}

static cJSON *json_settings(const ib_gen_serve_result *r, const ib_gen_serve_config *c)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "slots", r->slots);
    cJSON_AddNumberToObject(o, "ctx_per_slot", r->ctx_per_slot);
    cJSON_AddNumberToObject(o, "prefill_chunk", r->prefill_chunk);
    cJSON_AddNumberToObject(o, "warmup_requests", r->warmup_requests);
    cJSON_AddStringToObject(o, "arrivals", arrivals_name(c));
    ib__json_add_number(o, "rate", c->arrivals == IB_ARRIVALS_TRACE ? NAN : c->rate);
    ib__json_add_number(o, "burstiness", c->arrivals == IB_ARRIVALS_POISSON ? c->burstiness : NAN);
    cJSON_AddNumberToObject(o, "seed", (double)c->seed);
    ib__json_add_number(o, "slo_ttft_ms", c->slo_ttft_ms > 0 ? c->slo_ttft_ms : NAN);
    ib__json_add_number(o, "slo_tpot_ms", c->slo_tpot_ms > 0 ? c->slo_tpot_ms : NAN);
    ib__json_add_number(o, "slo_e2e_ms", c->slo_e2e_ms > 0 ? c->slo_e2e_ms : NAN);
    cJSON_AddStringToObject(o, "tokens", "random ids");
    cJSON_AddBoolToObject(o, "fixed_length", true);
    return o;
}

static cJSON *json_figures(const ib_gen_serve_result *r)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "requests", (double)r->n_requests);
    cJSON_AddNumberToObject(o, "completed", (double)r->n_completed);
    ib__json_add_stats_or_null(o, "ttft_ms", &r->ttft);
    ib__json_add_stats_or_null(o, "queue_ms", &r->queue);
    ib__json_add_stats_or_null(o, "tpot_ms", &r->tpot);
    ib__json_add_stats_or_null(o, "itl_ms", &r->itl);
    ib__json_add_stats_or_null(o, "e2e_ms", &r->e2e);
    ib__json_add_number(o, "span_ms", r->span_ms);
    ib__json_add_number(o, "offered_rate", r->offered_rate);
    ib__json_add_number(o, "achieved_rate", r->achieved_rate);
    ib__json_add_number(o, "pace", r->pace);
    ib__json_add_number(o, "ttft_growth", r->ttft_growth);
    ib__json_add_number(o, "output_tokens_per_s", r->output_tokens_per_s);
    ib__json_add_number(o, "total_tokens_per_s", r->total_tokens_per_s);
    cJSON_AddNumberToObject(o, "good_requests", (double)r->n_good);
    ib__json_add_number(o, "goodput_rate", r->goodput_rate);
    ib__json_add_number(o, "good_share", r->good_share);
    return o;
}

static cJSON *json_request(const ib_gen_serve_request *q)
{
    cJSON *o = cJSON_CreateObject();
    ib__json_add_number(o, "scheduled_ms", q->spec.arrival_ms);
    cJSON_AddNumberToObject(o, "prompt_tokens", q->spec.prompt_tokens);
    cJSON_AddNumberToObject(o, "output_tokens", q->spec.output_tokens);
    ib__json_add_number(o, "admitted_ms", q->admitted_ms);
    ib__json_add_number(o, "first_token_ms", q->first_token_ms);
    ib__json_add_number(o, "end_ms", q->end_ms);
    cJSON_AddNumberToObject(o, "slot", q->slot);
    cJSON_AddNumberToObject(o, "generated_tokens", q->generated_tokens);
    ib__json_add_number(o, "queue_ms", q->queue_ms);
    ib__json_add_number(o, "ttft_ms", q->ttft_ms);
    ib__json_add_number(o, "tpot_ms", q->tpot_ms);
    ib__json_add_number(o, "e2e_ms", q->e2e_ms);
    cJSON_AddBoolToObject(o, "met", q->met);
    cJSON_AddNumberToObject(o, "cached_tokens", q->cached_tokens);
    return o;
}

static cJSON *json_step(const ib_gen_serve_step *s)
{
    cJSON *o = cJSON_CreateObject();
    ib__json_add_number(o, "start_ms", s->start_ms);
    ib__json_add_number(o, "end_ms", s->end_ms);
    cJSON_AddNumberToObject(o, "decode_tokens", s->decode_tokens);
    cJSON_AddNumberToObject(o, "prefill_tokens", s->prefill_tokens);
    cJSON_AddNumberToObject(o, "running", s->running);
    cJSON_AddNumberToObject(o, "waiting", s->waiting);
    cJSON_AddNumberToObject(o, "kv_cells", s->kv_cells);
    return o;
}

char *ib__gen_serve_report_json(const ib_gen_serve_result *r, const ib_gen_serve_config *c,
                                const ib_endpoint_result *ep)
{
    cJSON *root = ib__json_document("inferbench.serve_generative/1", r->partial, r->stop_status, NULL);
    cJSON_AddStringToObject(root, "model", r->info.model);
    cJSON_AddItemToObject(root, "info", ib__gen_json_info(&r->info));
    cJSON *settings = json_settings(r, c), *figures = json_figures(r);
    ib__gen_serve_prompts_json(settings, figures, r);
    if (!ep) /* over HTTP the server picks the tokens */
        cJSON_AddStringToObject(settings, "sampling", r->sample_greedy ? "greedy" : "none");
    cJSON_AddItemToObject(root, "settings", settings);
    cJSON_AddItemToObject(root, "figures", figures);
    ib__gen_serve_pitfalls_json(root, r);
    cJSON *reqs = cJSON_AddArrayToObject(root, "requests");
    for (size_t i = 0; i < r->n_requests; i++) cJSON_AddItemToArray(reqs, json_request(&r->requests[i]));
    cJSON *steps = cJSON_AddArrayToObject(root, "steps");
    for (size_t i = 0; i < r->n_steps; i++) cJSON_AddItemToArray(steps, json_step(&r->steps[i]));
    cJSON_AddItemToObject(root, "tail", ib__gen_serve_tail_json(&r->tail));
    ib__gen_serve_json_machine(root, r);
    if (ep) cJSON_AddItemToObject(root, "endpoint", ib__endpoint_json(ep, r));
    return ib__json_finish(root);
}
