/* The script of the loopback server (docs/script-server.md): what it
 * promises, checked before a socket is opened, so that a bad script is one
 * line and never a server that misbehaves unscripted. */
#include "endpoint/script_server.h"

#include <math.h>
#include <string.h>

void ib_script_init(ib_script *s)
{
    *s = (ib_script){ .ttft_ms = 50,
                      .itl_ms = 5,
                      .tokens_per_chunk = 1,
                      .default_max_tokens = 16,
                      .failure = IB_SCRIPT_FAIL_NONE,
                      .fail_every = 1 };
    ib__strlcpy(s->model, "script", sizeof s->model);
}

/* A time of the script: finite and >= 0 (and below a day: a script that
 * waits longer is a typo). */
static bool good_ms(double ms) { return isfinite(ms) && ms >= 0 && ms <= 86400e3; }

/* The model's name goes into every chunk's JSON unescaped: only characters
 * that need no escaping, as model names are. */
static bool good_model(const char *m)
{
    size_t n = strnlen(m, sizeof((ib_script *)0)->model);
    if (n == 0 || n == sizeof((ib_script *)0)->model) return false;
    for (size_t i = 0; i < n; i++) {
        char c = m[i];
        bool ok =
            (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || strchr("._-:/", c);
        if (!ok) return false;
    }
    return true;
}

ib_status ib__script_check(const ib_script *s, ib_error *err)
{
    IB_FAIL_IF(!good_ms(s->ttft_ms), err, IB_ERR_INVALID_ARG, "script: ttft %g ms is not a time >= 0",
               s->ttft_ms);
    IB_FAIL_IF(!good_ms(s->itl_ms), err, IB_ERR_INVALID_ARG, "script: itl %g ms is not a time >= 0",
               s->itl_ms);
    IB_FAIL_IF(!good_ms(s->cold_start_ms), err, IB_ERR_INVALID_ARG,
               "script: cold start %g ms is not a time >= 0", s->cold_start_ms);
    IB_FAIL_IF(s->n_gaps < 0 || s->n_gaps > IB_SCRIPT_MAX_GAPS, err, IB_ERR_INVALID_ARG,
               "script: %d gaps, not 0 to %d", (int)s->n_gaps, IB_SCRIPT_MAX_GAPS);
    for (int32_t i = 0; i < s->n_gaps; i++)
        IB_FAIL_IF(!good_ms(s->gaps_ms[i]), err, IB_ERR_INVALID_ARG,
                   "script: gap %d of %g ms is not a time >= 0", (int)i + 1, s->gaps_ms[i]);
    IB_FAIL_IF(s->tokens_per_chunk < 1 || s->tokens_per_chunk > IB__SCRIPT_MAX_TOKENS_PER_CHUNK, err,
               IB_ERR_INVALID_ARG, "script: %d tokens a chunk, not 1 to %d", (int)s->tokens_per_chunk,
               IB__SCRIPT_MAX_TOKENS_PER_CHUNK);
    IB_FAIL_IF(s->default_max_tokens < 1 || s->default_max_tokens > IB__SCRIPT_MAX_TOKENS, err,
               IB_ERR_INVALID_ARG, "script: default max_tokens %lld, not 1 to %d",
               (long long)s->default_max_tokens, IB__SCRIPT_MAX_TOKENS);
    IB_FAIL_IF(s->stop_after_tokens < 0, err, IB_ERR_INVALID_ARG, "script: stop after %lld tokens, not >= 0",
               (long long)s->stop_after_tokens);
    IB_FAIL_IF(!good_model(s->model), err, IB_ERR_INVALID_ARG,
               "script: model name empty, too long, or not letters, digits and . _ - : /");
    IB_FAIL_IF(s->failure < IB_SCRIPT_FAIL_NONE || s->failure > IB_SCRIPT_FAIL_ERROR, err, IB_ERR_INVALID_ARG,
               "script: failure %d unknown", (int)s->failure);
    IB_FAIL_IF(s->fail_after_chunks < 0, err, IB_ERR_INVALID_ARG, "script: fail after %lld chunks, not >= 0",
               (long long)s->fail_after_chunks);
    IB_FAIL_IF(s->fail_every < 1, err, IB_ERR_INVALID_ARG, "script: fail every %lld-th request, not >= 1",
               (long long)s->fail_every);
    IB_FAIL_IF(s->slots < 0 || s->slots > IB__SCRIPT_MAX_SLOTS, err, IB_ERR_INVALID_ARG,
               "script: %d slots, not 0 (no limit) to %d", (int)s->slots, IB__SCRIPT_MAX_SLOTS);
    return IB_OK;
}

double ib__script_gap_ms(const ib_script *s, int64_t i)
{
    return s->n_gaps > 0 ? s->gaps_ms[(i - 1) % s->n_gaps] : s->itl_ms;
}

bool ib__script_fails(const ib_script *s, int64_t index)
{
    return s->failure != IB_SCRIPT_FAIL_NONE && (index + 1) % s->fail_every == 0;
}
