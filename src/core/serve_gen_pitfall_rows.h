/* The rows of serve --pitfalls, shared by the in-process engine
 * (serve_gen_pitfalls.c) and the HTTP client (src/endpoint/
 * endpoint_pitfalls.c): each side has its own words for a row, the same
 * figures, readings and printers. */
#ifndef IB_CORE_SERVE_GEN_PITFALL_ROWS_H
#define IB_CORE_SERVE_GEN_PITFALL_ROWS_H

#include "core/pitfall_reading.h"

/* A row's words: its name, its figure, why it is wrong by its reading. */
typedef struct ib__serve_pitfall_text {
    const char *name, *figure;
    ib__pitfall_texts why;
} ib__serve_pitfall_text;

/* The two sides of serve --pitfalls. */
typedef enum ib__serve_side { IB__SERVE_IN_PROCESS, IB__SERVE_OVER_HTTP, IB__SERVE_SIDES } ib__serve_side;

/* A side's words for its rows (IB_GEN_SERVE_PITFALL_COUNT of them), from
 * one table of both (serve_gen_pitfall_texts.c): what both sides state
 * alike is written once. A side out of range: the in-process one's. */
const ib__serve_pitfall_text *ib__serve_pitfall_texts(ib__serve_side side);

/* Why a row whose figure is a mean (no warm-up) has no interval. */
extern const char *const ib__serve_pitfall_mean_no_interval;

/* What a row's samples are of. */
typedef enum ib__serve_figure {
    IB__SERVE_TTFT,
    IB__SERVE_TPOT,
    IB__SERVE_TTFT_FROM_ADMISSION
} ib__serve_figure;

/* r->pitfalls named in side's words, not measured yet (NaN),
 * r->has_pitfalls. A row of no name is not one of this side's (the
 * printers skip it). */
void ib__serve_pitfall_rows_init(ib_gen_serve_result *r, ib__serve_side side);

/* Each row's why by its reading. */
void ib__serve_pitfall_explain(ib_gen_serve_pitfall_row *rows, ib__serve_side side, bool gpu);

void ib__serve_pitfall_set(ib_gen_serve_pitfall_row *row, double wrong, double correct);
void ib__serve_pitfall_not_applicable(ib_gen_serve_pitfall_row *row, const char *why);

/* The row's status from st (why's message kept): IB_OK unless
 * interrupted, which is returned (into *err) to stop the rest. */
ib_status ib__serve_pitfall_settle(ib_gen_serve_pitfall_row *row, ib_status st, const ib_error *why,
                                   ib_error *err);

/* The completed requests' figure f into out (room for r->n_requests;
 * TPOT: requests of more than one token); how many. */
size_t ib__serve_pitfall_samples(const ib_gen_serve_result *r, ib__serve_figure f, double *out);

/* A measured row: the median of the mistake's samples against the run's,
 * read by compare's interval. */
void ib__serve_pitfall_median_row(ib_gen_serve_pitfall_row *row, const double *wrong, size_t n_wrong,
                                  const double *correct, size_t n_correct);

/* Read off the run: TTFT from admission (in process) or from the send
 * (over HTTP: a request's admitted_ms) against TTFT from the schedule, at
 * the p99; the mean of per-request TPOT against decode time over decode
 * tokens. */
void ib__serve_pitfall_actual_start(const ib_gen_serve_result *r, double *scratch,
                                    ib_gen_serve_pitfall_row *row);
void ib__serve_pitfall_mean_tpot(const ib_gen_serve_result *r, ib_gen_serve_pitfall_row *row);

/* Interrupted: the rows not measured yet say so, r partial. */
void ib__serve_pitfall_unreached(ib_gen_serve_pitfall_row *rows, ib_status st, ib_gen_serve_result *r);

#endif
