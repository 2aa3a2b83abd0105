/* The prefix cache of the serving engine (docs/serve-generative.md,
 * "Prompts and the prefix cache"), as llama-server's slots keep it
 * (cache_prompt): a slot keeps the cells of its last request, and the next
 * request admitted to it keeps the common prefix of its prompt and those
 * cells, prefilling only the rest. The ids of a request are its own past
 * the shared prefix (--shared-prefix), so the common prefix of two
 * requests is at most the shared prefix both prompts hold. */
#include "core/serve_gen.h"

int32_t ib__gen_shared_tokens(const ib_gen_serve_config *c, int32_t prompt_tokens)
{
    return c->shared_prefix < prompt_tokens ? c->shared_prefix : prompt_tokens;
}

ib_status ib__gen_prefix_validate(const ib_gen_serve_config *c, const ib_gen_serve_request *rs, size_t n,
                                  ib_error *err)
{
    IB_FAIL_IF(c->shared_prefix < 0, err, IB_ERR_INVALID_ARG,
               "a shared prefix of %d tokens: 0 (none) or more, up to the shortest prompt",
               (int)c->shared_prefix);
    for (size_t i = 0; i < n; i++)
        IB_FAIL_IF(
            c->shared_prefix > rs[i].spec.prompt_tokens, err, IB_ERR_INVALID_ARG,
            "a shared prefix of %d tokens passes request %zu's prompt of %d: at most the shortest prompt",
            (int)c->shared_prefix, i + 1, (int)rs[i].spec.prompt_tokens);
    return IB_OK;
}

/* The cells a prompt of prompt_tokens whose first shared are the shared
 * prefix reuses from a slot holding held_shared of them: never the whole
 * prompt, since its last token must be decoded for its logits (as
 * llama-server decodes it again). */
static int32_t reusable(int32_t held_shared, int32_t shared, int32_t prompt_tokens)
{
    int32_t k = held_shared < shared ? held_shared : shared;
    return k < prompt_tokens - 1 ? k : prompt_tokens - 1;
}

int32_t ib__gen_prefix_slot(const bool *busy, const int32_t *held_shared, int32_t slots, int32_t shared,
                            int32_t prompt_tokens, int32_t *reuse)
{
    int32_t best = -1;
    *reuse = 0;
    for (int32_t s = 0; s < slots; s++) {
        if (busy[s]) continue;
        int32_t k = reusable(held_shared[s], shared, prompt_tokens);
        if (best < 0 || k > *reuse) best = s, *reuse = k;
    }
    return best;
}
