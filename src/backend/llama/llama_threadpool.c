/* A persistent CPU threadpool for a llama.cpp context (llama_backend.h):
 * the threads llama.cpp's own tools keep for a context's life, created
 * once, where ggml alone would start and join them at every graph
 * compute. A pool replaced (a new thread count) is freed only once the
 * CPU backend has computed with its successor: at its next compute the
 * backend pauses the pool it used last, which must still be there. */
#include "backend/llama/llama_backend.h"

static void free_pool(const ib__llama_api *api, ggml_threadpool_t *pool)
{
    if (*pool) api->threadpool_free(*pool);
    *pool = NULL;
}

ib_status ib__llama_threadpool_attach(const ib__llama_api *api, struct llama_context *ctx, int32_t n_threads,
                                      ib__llama_pools *pools, ib_error *err)
{
    IB_FAIL_IF(!api->threadpool_new, err, IB_ERR_RUNTIME,
               "llama: the CPU backend gives no threadpool (ggml_threadpool_new)");
    struct ggml_threadpool_params p = api->threadpool_params_default(n_threads);
    ggml_threadpool_t made = api->threadpool_new(&p);
    IB_FAIL_IF(!made, err, IB_ERR_RUNTIME, "llama: no threadpool of %d threads", (int)n_threads);
    /* One pool for both decodes (a prompt's and a token's): the context's
     * two thread counts are set equal (context_params, set_threads). */
    api->attach_threadpool(ctx, made, NULL);
    if (pools->attached != pools->in_use) free_pool(api, &pools->attached); /* never computed with */
    pools->attached = made;
    return IB_OK;
}

void ib__llama_threadpool_decoded(const ib__llama_api *api, ib__llama_pools *pools)
{
    if (pools->in_use != pools->attached) free_pool(api, &pools->in_use);
    pools->in_use = pools->attached;
}

void ib__llama_threadpool_free(const ib__llama_api *api, ib__llama_pools *pools)
{
    if (pools->in_use != pools->attached) free_pool(api, &pools->in_use);
    free_pool(api, &pools->attached);
    pools->in_use = NULL;
}
