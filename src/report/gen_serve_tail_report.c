/* Why the tail of a generative model served under load is what it is
 * (docs/serve-generative.md, "Why the tail"): the step trace's summary
 * (ib_gen_serve_tail) in the words every format shows, and its JSON. */
#include "report/printer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "75%" of a share, "-" without one. */
static const char *pct(char buf[32], double share)
{
    if (isnan(share)) return "-";
    snprintf(buf, 32, "%.3g%%", 100 * share);
    return buf;
}

/* The gaps of the ITL tail and of all: how many carried a prompt chunk. */
static void gaps_line(ib__sbuf *b, const ib_gen_serve_tail *t)
{
    if (t->gaps == 0) return;
    char p99[32], tail[32], all[32];
    ib__sbuf_printf(b,
                    "ITL tail: of the %zu gaps at or above the p99 (%s), %zu (%s) came from a step that "
                    "carried a prompt chunk, against %zu of all %zu gaps (%s)\n",
                    t->tail_gaps, ib__fmt_ms(p99, t->itl_p99_ms), t->tail_gaps_chunked,
                    pct(tail, (double)t->tail_gaps_chunked / (double)t->tail_gaps), t->gaps_chunked, t->gaps,
                    pct(all, (double)t->gaps_chunked / (double)t->gaps));
}

static void tpot_line(ib__sbuf *b, const ib_gen_serve_tail *t)
{
    if (t->tail_requests == 0) return;
    char p99[32], tail[32], all[32];
    ib__sbuf_printf(b,
                    "TPOT tail: the %zu request%s at or above the p99 (%s) spent %s of %s decode time in "
                    "steps with a prompt chunk, every request %s\n",
                    t->tail_requests, t->tail_requests == 1 ? "" : "s", ib__fmt_ms(p99, t->tpot_p99_ms),
                    pct(tail, t->tail_decode_chunked_share), t->tail_requests == 1 ? "its" : "their",
                    pct(all, t->decode_chunked_share));
}

static void ttft_line(ib__sbuf *b, const ib_gen_serve_result *r)
{
    const ib_gen_serve_tail *t = &r->tail;
    if (t->prefill.n == 0) return;
    char q50[32], f50[32], q99[32], f99[32], p99[32], all[32], tail[32];
    ib__sbuf_printf(b,
                    "TTFT = wait for a slot + prefill: p50 %s + %s, p99 %s + %s; the wait is %s of all "
                    "TTFT, %s of the %zu at or above its p99 (%s)\n",
                    ib__fmt_ms(q50, r->queue.p50), ib__fmt_ms(f50, t->prefill.p50),
                    ib__fmt_ms(q99, r->queue.p99), ib__fmt_ms(f99, t->prefill.p99),
                    pct(all, t->ttft_queue_share), pct(tail, t->tail_ttft_queue_share), t->ttft_tail_requests,
                    ib__fmt_ms(p99, t->ttft_p99_ms));
}

static void kv_line(ib__sbuf *b, const ib_gen_serve_result *r)
{
    const ib_gen_serve_tail *t = &r->tail;
    if (isnan(t->kv_cells_mean)) return;
    char mean[32], most[32];
    ib__sbuf_printf(
        b,
        "KV cache: %.4g cells held on average over the steps' time (%s of %d slots x %d), %.0f at "
        "most (%s)\n",
        t->kv_cells_mean, pct(mean, t->kv_cells_mean / t->kv_capacity_cells), (int)r->slots,
        (int)r->ctx_per_slot, t->kv_cells_max, pct(most, t->kv_cells_max / t->kv_capacity_cells));
}

void ib__gen_serve_tail_lines(ib__sbuf *b, const ib_gen_serve_result *r)
{
    gaps_line(b, &r->tail);
    tpot_line(b, &r->tail);
    ttft_line(b, r);
    kv_line(b, r);
}

size_t ib__gen_serve_tail_each(ib__sbuf *b, const ib_gen_serve_result *r,
                               void (*fn)(ib__sbuf *b, const char *line, size_t index))
{
    ib__sbuf lines = { 0 };
    ib__gen_serve_tail_lines(&lines, r);
    b->failed |= lines.failed;
    size_t n = 0;
    for (char *line = lines.failed ? NULL : lines.data, *end; line && *line; line = end + 1) {
        end = strchr(line, '\n');
        *end = '\0';
        fn(b, line, n++);
    }
    free(lines.data);
    return n;
}

cJSON *ib__gen_serve_tail_json(const ib_gen_serve_tail *t)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "gaps", (double)t->gaps);
    cJSON_AddNumberToObject(o, "gaps_chunked", (double)t->gaps_chunked);
    ib__json_add_number(o, "itl_p99_ms", t->itl_p99_ms);
    cJSON_AddNumberToObject(o, "tail_gaps", (double)t->tail_gaps);
    cJSON_AddNumberToObject(o, "tail_gaps_chunked", (double)t->tail_gaps_chunked);
    ib__json_add_number(o, "decode_chunked_share", t->decode_chunked_share);
    ib__json_add_number(o, "tpot_p99_ms", t->tpot_p99_ms);
    cJSON_AddNumberToObject(o, "tail_requests", (double)t->tail_requests);
    ib__json_add_number(o, "tail_decode_chunked_share", t->tail_decode_chunked_share);
    ib__json_add_stats_or_null(o, "prefill_ms", &t->prefill);
    ib__json_add_number(o, "ttft_p99_ms", t->ttft_p99_ms);
    cJSON_AddNumberToObject(o, "ttft_tail_requests", (double)t->ttft_tail_requests);
    ib__json_add_number(o, "ttft_queue_share", t->ttft_queue_share);
    ib__json_add_number(o, "tail_ttft_queue_share", t->tail_ttft_queue_share);
    ib__json_add_number(o, "kv_cells_mean", t->kv_cells_mean);
    ib__json_add_number(o, "kv_cells_max", t->kv_cells_max);
    ib__json_add_number(o, "kv_capacity_cells", t->kv_capacity_cells);
    return o;
}
