/* The rows of serve --pitfalls that the in-process engine and the HTTP
 * client share (serve_gen_pitfall_rows.h): their figures and readings. */
#include "core/serve_gen_pitfall_rows.h"
#include "core/stats.h"

#include <math.h>

void ib__serve_pitfall_set(ib_gen_serve_pitfall_row *row, double wrong, double correct)
{
    row->wrong = wrong;
    row->correct = correct;
    row->error_pct = (wrong - correct) / correct * 100;
}

void ib__serve_pitfall_not_applicable(ib_gen_serve_pitfall_row *row, const char *why)
{
    row->applies = false;
    row->not_applicable = why;
}

ib_status ib__serve_pitfall_settle(ib_gen_serve_pitfall_row *row, ib_status st, const ib_error *why,
                                   ib_error *err)
{
    row->status = st;
    if (st == IB_OK) return IB_OK;
    ib__strlcpy(row->error, why->message, sizeof row->error);
    if (st != IB_ERR_INTERRUPTED) return IB_OK;
    if (err) *err = *why;
    return st;
}

static bool completed(const ib_gen_serve_request *q) { return q->generated_tokens == q->spec.output_tokens; }

/* The completed requests' figure f into out (room for r->n_requests; TPOT:
 * requests of more than one token); how many. */
size_t ib__serve_pitfall_samples(const ib_gen_serve_result *r, ib__serve_figure f, double *out)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_requests; i++) {
        const ib_gen_serve_request *q = &r->requests[i];
        if (!completed(q) || (f == IB__SERVE_TPOT && q->spec.output_tokens < 2)) continue;
        out[n++] = f == IB__SERVE_TTFT   ? q->ttft_ms
                   : f == IB__SERVE_TPOT ? q->tpot_ms
                                         : q->first_token_ms - q->admitted_ms;
    }
    return n;
}

static double median(const double *x, size_t n)
{
    ib_stats st;
    return n > 0 && ib_stats_compute(x, n, &st) == IB_OK ? st.p50 : NAN;
}

/* A measured row: the median of the mistake's samples against the run's,
 * read by compare's interval. */
void ib__serve_pitfall_median_row(ib_gen_serve_pitfall_row *row, const double *wrong, size_t n_wrong,
                                  const double *correct, size_t n_correct)
{
    ib__serve_pitfall_set(row, median(wrong, n_wrong), median(correct, n_correct));
    row->reading =
        ib__pitfall_interval(correct, n_correct, wrong, n_wrong, row->error_ci95_pct, &row->no_interval);
}

/* ------------------------------------------------------------------------ */
/* Rows read off the run                                                     */
/* ------------------------------------------------------------------------ */

/* TTFT from admission against TTFT from the schedule, at the p99: the
 * tail is where the wait for a slot is. */
void ib__serve_pitfall_actual_start(const ib_gen_serve_result *r, double *scratch,
                                    ib_gen_serve_pitfall_row *row)
{
    size_t n = ib__serve_pitfall_samples(r, IB__SERVE_TTFT_FROM_ADMISSION, scratch);
    ib_stats st;
    if (n == 0 || ib_stats_compute(scratch, n, &st) != IB_OK) {
        ib__serve_pitfall_not_applicable(row, "no request completed");
        return;
    }
    ib__serve_pitfall_set(row, st.p99, r->ttft.p99);
    row->reading = ib__pitfall_exact(row->error_pct, row->error_ci95_pct, &row->no_interval);
}

/* The mean of per-request TPOT against decode time over decode tokens
 * (the span of each request's tokens after its first, summed, over their
 * count): the TPOT a token sees. */
void ib__serve_pitfall_mean_tpot(const ib_gen_serve_result *r, ib_gen_serve_pitfall_row *row)
{
    double decode_ms = 0, tokens = 0;
    for (size_t i = 0; i < r->n_requests; i++) {
        const ib_gen_serve_request *q = &r->requests[i];
        if (!completed(q) || q->spec.output_tokens < 2) continue;
        decode_ms += q->end_ms - q->first_token_ms;
        tokens += q->spec.output_tokens - 1;
    }
    if (tokens == 0) {
        ib__serve_pitfall_not_applicable(row, "no request generated more than one token");
        return;
    }
    ib__serve_pitfall_set(row, r->tpot.mean, decode_ms / tokens);
    row->reading = ib__pitfall_exact(row->error_pct, row->error_ci95_pct, &row->no_interval);
}

/* Interrupted: the rows not measured yet say so, and the result is
 * partial (the correct run's figures complete). */
void ib__serve_pitfall_unreached(ib_gen_serve_pitfall_row *rows, ib_status st, ib_gen_serve_result *r)
{
    for (int k = 0; k < IB_GEN_SERVE_PITFALL_COUNT; k++)
        if (rows[k].applies && rows[k].status == IB_OK && isnan(rows[k].wrong)) {
            rows[k].status = st;
            ib__strlcpy(rows[k].error, "not measured: the run stopped before this row", sizeof rows[k].error);
        }
    r->partial = true;
    r->stop_status = st;
}

void ib__serve_pitfall_explain(ib_gen_serve_pitfall_row *rows, ib__serve_side side, bool gpu)
{
    const ib__serve_pitfall_text *texts = ib__serve_pitfall_texts(side);
    for (int k = 0; k < IB_GEN_SERVE_PITFALL_COUNT; k++)
        if (texts[k].name) rows[k].why = ib__pitfall_why(&texts[k].why, gpu, rows[k].reading);
}

void ib__serve_pitfall_rows_init(ib_gen_serve_result *r, ib__serve_side side)
{
    const ib__serve_pitfall_text *texts = ib__serve_pitfall_texts(side);
    ib_gen_serve_pitfall_row *rows = r->pitfalls;
    r->has_pitfalls = true;
    for (int k = 0; k < IB_GEN_SERVE_PITFALL_COUNT; k++)
        rows[k] = (ib_gen_serve_pitfall_row){ .kind = (ib_gen_serve_pitfall)k,
                                              .name = texts[k].name,
                                              .why = texts[k].why.effect_gpu,
                                              .figure = texts[k].figure,
                                              .applies = texts[k].name != NULL,
                                              .wrong = NAN,
                                              .correct = NAN,
                                              .error_pct = NAN,
                                              .error_ci95_pct = { NAN, NAN } };
}
