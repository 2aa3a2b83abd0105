/* A stand-in of llama.cpp's library for the backend's release check
 * (tests/unit/test_llama.c): it says a release (STANDIN_VERSION) and
 * returns default parameters of the headers' layout, or (STANDIN_LARGER)
 * a llama_context_params with one field more, as another release would. */
/* llama.h's declaration renamed away: this file defines the function
 * with another return type (STANDIN_LARGER). */
#define llama_context_default_params llama_context_default_params_of_the_headers
#include <llama.h>
#undef llama_context_default_params

#include <string.h>

const char *llama_version(void) { return STANDIN_VERSION; }
const char *ggml_version(void) { return STANDIN_GGML_VERSION; }

typedef struct {
    struct llama_context_params p;
    int added; /* a field another release appended */
} larger_params;

#ifdef STANDIN_LARGER
larger_params llama_context_default_params(void);
larger_params llama_context_default_params(void)
{
    larger_params r;
    memset(&r, 0, sizeof r);
    r.p.n_ctx = 512;
    r.p.n_batch = 2048;
    r.p.n_ubatch = 512;
    r.p.n_seq_max = 1;
    r.p.type_k = r.p.type_v = GGML_TYPE_F16;
    r.p.flash_attn_type = LLAMA_FLASH_ATTN_TYPE_AUTO;
    r.p.offload_kqv = true;
    r.added = 1;
    return r;
}
#else
struct llama_context_params llama_context_default_params(void);
struct llama_context_params llama_context_default_params(void)
{
    struct llama_context_params r;
    memset(&r, 0, sizeof r);
    return r;
}
#endif

struct llama_model_params llama_model_default_params(void)
{
    struct llama_model_params r;
    memset(&r, 0, sizeof r);
    r.n_gpu_layers = -1;
    r.use_extra_bufts = true;
    return r;
}

struct llama_model_quantize_params llama_model_quantize_default_params(void)
{
    struct llama_model_quantize_params r;
    memset(&r, 0, sizeof r);
    r.ftype = LLAMA_FTYPE_MOSTLY_Q8_0;
    r.output_tensor_type = r.token_embedding_type = GGML_TYPE_COUNT;
    r.quantize_output_tensor = true;
    r.max_buf_size = (size_t)8 << 30;
    return r;
}
