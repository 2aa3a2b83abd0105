/* The words of serve --pitfalls' rows, in process (serve_gen_pitfalls.c)
 * and over HTTP (src/endpoint/endpoint_pitfalls.c), in one table: a row
 * both sides state alike is written once (BOTH_SIDES), a row whose
 * mistake reads differently on a side (the engine's admission against a
 * client's send, its slots against a server's batch) has each side's own
 * words. In the core, beneath both: the endpoint may use the core, the
 * core no endpoint. */
#include "core/serve_gen_pitfall_rows.h"

/* Row k's words on both sides. */
#define BOTH_SIDES(k, ...) [IB__SERVE_IN_PROCESS][k] = __VA_ARGS__, [IB__SERVE_OVER_HTTP][k] = __VA_ARGS__

static const ib__serve_pitfall_text texts[IB__SERVE_SIDES][IB_GEN_SERVE_PITFALL_COUNT] = {
    BOTH_SIDES(IB_GEN_SERVE_PITFALL_NO_WARMUP,
               { "no warm-up",
                 "TTFT mean ms",
                 { 1, "a fresh context's first requests pay for buffers, kernels and caches" } }),
    BOTH_SIDES(IB_GEN_SERVE_PITFALL_MEAN_TPOT,
               { "mean of per-request TPOT",
                 "TPOT ms",
                 { 0,
                   "each request's TPOT weighs the same whatever its tokens: the few tokens of short "
                   "requests count as much as the many of long ones, where decode time over decode tokens "
                   "weighs each token once",
                   NULL,
                   "the two differ by less than compare's threshold here: requests of equal output counts "
                   "weigh alike either way (they part as the output lengths differ)",
                   NULL, NULL } }),
    BOTH_SIDES(
        IB_GEN_SERVE_PITFALL_DECODE_ONLY,
        { "decode-only TPOT",
          "TPOT p50 ms",
          { -1,
            "one sequence decoding alone (generate's TPOT, llama-bench's tg) shares no step with other "
            "requests' tokens or prompt chunks: under load each token waits for the whole batch",
            NULL,
            "a step of the whole batch costs what a step of one sequence does here: decoding alone "
            "reads the same",
            NULL, NULL } }),

    /* In process: the engine's admission, slots and prefix cache. */
    [IB__SERVE_IN_PROCESS]
        [IB_GEN_SERVE_PITFALL_ACTUAL_START] = { "TTFT from admission",
                                                "TTFT p99 ms",
                                                { -1,
                                                  "timed from when the engine took the request, not when it "
                                                  "was due: the wait for a slot "
                                                  "vanishes from the tail exactly when the engine falls "
                                                  "behind (coordinated omission)",
                                                  NULL,
                                                  "no request waited long for a slot at this rate: timing "
                                                  "from admission hides nothing "
                                                  "measurable here (it does nearer saturation)",
                                                  NULL, NULL } },
    [IB__SERVE_IN_PROCESS]
        [IB_GEN_SERVE_PITFALL_ALL_AT_ONCE] = { "every request at time 0",
                                               "TPOT p50 ms",
                                               { 0,
                                                 "a rate of infinity (vLLM bench serve's default) is not "
                                                 "the rate asked: every slot is full from the first step "
                                                 "(each token decoded in the fullest batch: higher), and "
                                                 "requests of like lengths then run in waves, prefilled "
                                                 "together between them instead of beside other requests' "
                                                 "tokens (no prefill-decode interference: lower); which "
                                                 "wins depends on the model and the lengths",
                                                 NULL,
                                                 "no difference beyond the noise of the two runs: the engine "
                                                 "is about as full at this rate as "
                                                 "with every request at once (or too few requests tell them "
                                                 "apart)",
                                                 NULL, NULL } },
    [IB__SERVE_IN_PROCESS]
        [IB_GEN_SERVE_PITFALL_REPEATED_PROMPT] = { "a prompt repeated",
                                                   "TTFT p50 ms",
                                                   { -1,
                                                     "a seeded dataset that repeats its prompts lets the "
                                                     "prefix cache skip their prefill: a warm "
                                                     "prefix no real traffic has",
                                                     NULL,
                                                     "the prefill of these prompts is too small a part of "
                                                     "the TTFT for the prefix cache to show",
                                                     NULL, NULL } },
    /* IB_GEN_SERVE_PITFALL_CHUNK_GAPS: over HTTP only, no row in process (no name). */

    /* Over HTTP: the client's send, the server's batch and cache, its chunks. */
    [IB__SERVE_OVER_HTTP]
        [IB_GEN_SERVE_PITFALL_ACTUAL_START] = { "TTFT from the send",
                                                "TTFT p99 ms",
                                                { -1,
                                                  "timed from when the client sent each request, not when it "
                                                  "was due: a client that falls "
                                                  "behind (or a closed loop, vLLM's --max-concurrency gate) "
                                                  "hides its own delay from the TTFT "
                                                  "(coordinated omission)",
                                                  NULL,
                                                  "the client sent every request on time at this rate: "
                                                  "timing from the send hides nothing "
                                                  "measurable here (it does when the client or a concurrency "
                                                  "gate holds requests back)",
                                                  NULL, NULL } },
    [IB__SERVE_OVER_HTTP]
        [IB_GEN_SERVE_PITFALL_ALL_AT_ONCE] = { "every request at time 0",
                                               "TPOT p50 ms",
                                               { 0,
                                                 "a rate of infinity (vLLM bench serve's default) is not "
                                                 "the rate asked: the server's batch is full from the first "
                                                 "step (each token decoded in the fullest batch: higher), "
                                                 "and requests of like lengths then run in waves, prefilled "
                                                 "together between them instead of beside other requests' "
                                                 "tokens (no prefill-decode interference: lower); which "
                                                 "wins depends on the model and the lengths",
                                                 NULL,
                                                 "no difference beyond the noise of the two runs: the server "
                                                 "is about as full at this rate as "
                                                 "with every request at once (or too few requests tell them "
                                                 "apart)",
                                                 NULL, NULL } },
    [IB__SERVE_OVER_HTTP]
        [IB_GEN_SERVE_PITFALL_REPEATED_PROMPT] = { "same seeded prompts twice",
                                                   "TTFT p50 ms",
                                                   { -1,
                                                     "the schedule sent a second time with the same seed "
                                                     "sends the same prompts: the server's "
                                                     "prefix cache skips their prefill, a warm prefix no "
                                                     "real traffic has",
                                                     NULL,
                                                     "the second run reads as the first: this server keeps "
                                                     "no prefix of these prompts, or their "
                                                     "prefill is too small a part of the TTFT to show",
                                                     NULL, NULL } },
    [IB__SERVE_OVER_HTTP]
        [IB_GEN_SERVE_PITFALL_CHUNK_GAPS] = { "chunk gaps as token gaps",
                                              "ITL mean ms",
                                              { 1,
                                                "a chunk that carries several tokens is one gap, not "
                                                "several: the gaps between chunks taken "
                                                "for the gaps between tokens count each chunk's tokens as "
                                                "one",
                                                NULL,
                                                "every chunk carried one token here: chunk gaps are token "
                                                "gaps on this server (they part "
                                                "where it streams several a chunk)",
                                                NULL, NULL } },
};

const ib__serve_pitfall_text *ib__serve_pitfall_texts(ib__serve_side side)
{
    return texts[side == IB__SERVE_OVER_HTTP ? IB__SERVE_OVER_HTTP : IB__SERVE_IN_PROCESS];
}

const char *const ib__serve_pitfall_mean_no_interval =
    "the figure is a mean (the cold requests' weight in it is the mistake), compare's interval is of medians";
