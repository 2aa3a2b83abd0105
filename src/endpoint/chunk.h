/* What one streamed completion event says (src/endpoint/chunk.c): the
 * OpenAI-compatible chunk's JSON (llama-server, vLLM, SGLang) or
 * llama.cpp's own /completion event, read with cJSON, reduced to what
 * counts its tokens and the server's timings. */
#ifndef IB_ENDPOINT_CHUNK_H
#define IB_ENDPOINT_CHUNK_H

#include "base/common.h"

typedef struct ib__chunk {
    bool done;                /* the data was "[DONE]": the stream's end */
    bool error;               /* an "error" member: the server failed the request */
    bool has_choice;          /* choices[] has an element: a piece of output */
    bool has_text;            /* and its text (or chat delta's content) is not empty */
    int64_t usage_tokens;     /* usage.completion_tokens so far (cumulative), -1: none */
    int64_t prompt_tokens;    /* usage.prompt_tokens: the prompt as the server counted it, -1: none */
    int64_t predicted_tokens; /* timings.predicted_n (llama.cpp, cumulative), -1: none */
    int64_t token_ids;        /* length of tokens[] (llama.cpp's ids of this chunk), -1: none */
    /* llama.cpp's own event (POST /completion): a top-level "stop", true
     * in its final event (the stream's end: no [DONE] follows), and its
     * cumulative counts (-1: none). */
    bool native, stop;
    int64_t tokens_predicted, tokens_evaluated;
    /* The server's timings (llama-server's `timings`): NaN / -1 none. */
    double server_prompt_ms, server_predicted_ms;
    int64_t server_prompt_n, server_cache_n;
} ib__chunk;

/* Parses an event's data. IB_ERR_INVALID_ARG (malformed: not JSON, not an
 * object, a count that is not a whole number >= 0) with a message. */
ib_status ib__chunk_parse(const char *data, size_t len, ib__chunk *out, ib_error *err);

/* The output tokens chunk c carried, the request's tokens before it being
 * counted: from the cumulative usage (vLLM's continuous usage), else
 * llama.cpp's cumulative predicted_n, else its token ids; *exact false
 * when none of these is there and a chunk of text is taken for one token.
 * A usage-only chunk (no choice) carries none. llama.cpp's own event: the
 * change of its tokens_predicted, else its token ids. -1: a count going
 * back. */
int64_t ib__chunk_tokens(const ib__chunk *c, int64_t counted, bool *exact);

/* The gaps between the tokens of one request's chunks, written to out
 * (room for the chunks' tokens less one), their count returned: a chunk
 * of k tokens gives its first token the gap from the chunk before (none
 * for the request's first token) and its other k - 1 gaps of 0: they
 * reached the client together, and nothing the client sees says when the
 * server made them. The gaps sum to the last chunk's arrival less the
 * first's. */
size_t ib__chunk_gaps(const double *chunk_ms, const int32_t *chunk_tokens, size_t n_chunks, double *out);

#endif
