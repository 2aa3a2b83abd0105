/* The endpoint before a run: an http(s) URL on a loopback host (the
 * project sends nothing beyond this machine), a server that answers GET
 * /v1/models as an OpenAI-compatible one does, and has the model. */
#include "endpoint/endpoint.h"

#include <arpa/inet.h>
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static bool loopback(const char *host)
{
    char bare[256];
    size_t n = strlen(host);
    if (n >= 2 && host[0] == '[' && host[n - 1] == ']') host++, n -= 2; /* [::1] */
    if (n >= sizeof bare) return false;
    memcpy(bare, host, n);
    bare[n] = '\0';
    unsigned char a[16];
    if (inet_pton(AF_INET, bare, a) == 1) return a[0] == 127;
    if (inet_pton(AF_INET6, bare, a) == 1) {
        static const unsigned char one[16] = { [15] = 1 };
        return !memcmp(a, one, 16);
    }
    return !strcasecmp(bare, "localhost");
}

/* The path of the server's root: the URL's, its trailing '/' and a
 * trailing "/v1" (a base URL as OpenAI clients take it) taken off. */
static void root_path(const char *path, char *out, size_t cap)
{
    ib__strlcpy(out, path, cap);
    size_t n = strlen(out);
    while (n > 0 && out[n - 1] == '/') out[--n] = '\0';
    if (n >= 3 && !strcmp(out + n - 3, "/v1")) out[n - 3] = '\0';
}

static ib_status url_parts(CURLU *u, const char *url, const char *path, char **out, ib_error *err)
{
    char *scheme = NULL, *host = NULL, *old_path = NULL;
    ib_status st = IB_OK;
    if (curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
        curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK)
        st = ib__fail(err, IB_ERR_INVALID_ARG, "endpoint '%s': not a URL (http://127.0.0.1:PORT)", url);
    else if (strcasecmp(scheme, "http") && strcasecmp(scheme, "https"))
        st = ib__fail(err, IB_ERR_INVALID_ARG, "endpoint '%s': only http:// and https:// are spoken", url);
    else if (!loopback(host))
        st = ib__fail(err, IB_ERR_INVALID_ARG,
                      "endpoint '%s': host '%s' is not a loopback address: inferbench sends requests to this "
                      "machine only (127.0.0.0/8, ::1, localhost)",
                      url, host);
    char root[1024];
    if (st == IB_OK) {
        curl_url_get(u, CURLUPART_PATH, &old_path, 0);
        root_path(old_path ? old_path : "", root, sizeof root - strlen(path) - 1);
        strcat(root, path);
        curl_url_set(u, CURLUPART_QUERY, NULL, 0);
        curl_url_set(u, CURLUPART_FRAGMENT, NULL, 0);
        if (curl_url_set(u, CURLUPART_PATH, root, 0) != CURLUE_OK ||
            curl_url_get(u, CURLUPART_URL, out, 0) != CURLUE_OK)
            st = ib__fail(err, IB_ERR_NO_MEMORY, "endpoint '%s': out of memory", url);
    }
    curl_free(scheme);
    curl_free(host);
    curl_free(old_path);
    return st;
}

ib_status ib__ep_url(const char *url, const char *path, char **out, ib_error *err)
{
    *out = NULL;
    IB_FAIL_IF(!url || !*url, err, IB_ERR_INVALID_ARG, "no endpoint URL");
    CURLU *u = curl_url();
    IB_FAIL_IF(!u, err, IB_ERR_NO_MEMORY, "out of memory");
    char *got = NULL;
    ib_status st = url_parts(u, url, path, &got, err);
    curl_url_cleanup(u);
    /* curl_free'd memory is free()'d memory only by libcurl's default
     * allocator: copy it into ours. */
    if (st == IB_OK && !(*out = strdup(got))) st = ib__fail(err, IB_ERR_NO_MEMORY, "out of memory");
    curl_free(got);
    return st;
}

void ib__ep_easy_defaults(CURL *easy)
{
    curl_easy_setopt(easy, CURLOPT_NOPROXY, "*");
    curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 0L);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
}

typedef struct body {
    char *p;
    size_t n;
} body;

static size_t keep_body(char *bytes, size_t size, size_t n, void *ctx)
{
    body *b = ctx;
    size_t k = size * n;
    if (b->n + k > (1u << 24)) return 0; /* a list of models is not 16 MiB */
    char *q = realloc(b->p, b->n + k + 1);
    if (!q) return 0;
    memcpy(q + b->n, bytes, k);
    b->p = q;
    b->n += k;
    q[b->n] = '\0';
    return k;
}

/* The ids of /v1/models' answer listed in names (cut), and the model's
 * n_vocab (llama-server's meta) where it is stated. */
static ib_status find_model(const cJSON *root, const char *url, const char *model, int32_t *vocab,
                            ib_error *err)
{
    const cJSON *data = cJSON_IsObject(root) ? cJSON_GetObjectItemCaseSensitive(root, "data") : NULL;
    IB_FAIL_IF(!cJSON_IsArray(data), err, IB_ERR_INVALID_ARG,
               "endpoint %s: GET /v1/models has no list of models: not an OpenAI-compatible server", url);
    char names[200] = "";
    const cJSON *m;
    cJSON_ArrayForEach(m, data)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(m, "id");
        if (!cJSON_IsString(id)) continue;
        if (!strcmp(id->valuestring, model)) {
            const cJSON *nv =
                cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(m, "meta"), "n_vocab");
            *vocab = cJSON_IsNumber(nv) && nv->valuedouble >= 1 && nv->valuedouble < 1e9
                         ? (int32_t)nv->valuedouble
                         : 0;
            return IB_OK;
        }
        size_t k = strlen(names);
        snprintf(names + k, sizeof names - k, "%s'%s'", k ? ", " : "", id->valuestring);
    }
    return ib__fail(err, IB_ERR_INVALID_ARG, "endpoint %s has no model '%s' (it has: %s)", url, model,
                    names[0] ? names : "none");
}

static ib_status get_models(CURL *easy, const char *url, const char *models_url, const char *model,
                            int32_t *vocab, ib_error *err)
{
    body b = { 0 };
    ib__ep_easy_defaults(easy);
    curl_easy_setopt(easy, CURLOPT_URL, models_url);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long)IB__EP_CHECK_TIMEOUT_MS);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, keep_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, &b);
    CURLcode code = curl_easy_perform(easy);
    long status = 0;
    curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
    cJSON *root = code == CURLE_OK && status == 200 && b.p ? cJSON_ParseWithLength(b.p, b.n) : NULL;
    ib_status st = IB_OK;
    if (code != CURLE_OK)
        st = ib__fail(err, IB_ERR_INVALID_ARG, "endpoint %s does not answer (%s)", url,
                      curl_easy_strerror(code));
    else if (status != 200)
        st = ib__fail(err, IB_ERR_INVALID_ARG,
                      "endpoint %s: GET /v1/models answered HTTP %ld: not an OpenAI-compatible server", url,
                      status);
    else
        st = find_model(root, url, model, vocab, err);
    cJSON_Delete(root);
    free(b.p);
    return st;
}

ib_status ib_endpoint_check(const ib_endpoint_config *cfg, int32_t *vocab, ib_error *err)
{
    *vocab = 0;
    IB_FAIL_IF(!cfg, err, IB_ERR_INVALID_ARG, "no endpoint configuration");
    IB_FAIL_IF(!cfg->model || !*cfg->model, err, IB_ERR_INVALID_ARG,
               "an endpoint needs the server's name of the model (--model NAME)");
    IB_FAIL_IF(!(cfg->request_timeout_ms >= 0) || cfg->vocab < 0 ||
                   (cfg->vocab > 0 && cfg->vocab <= IB__EP_LOWEST_ID),
               err, IB_ERR_INVALID_ARG, "a request timeout >= 0 ms and a vocabulary above %d ids",
               IB__EP_LOWEST_ID);
    IB_FAIL_IF(!ib__ep_api_path(cfg->api), err, IB_ERR_INVALID_ARG,
               "endpoint API %d unknown (completions or llama)", (int)cfg->api);
    char *models_url = NULL;
    IB_TRY(ib__ep_url(cfg->url, "/v1/models", &models_url, err));
    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURL *easy = curl_easy_init();
    ib_status st = easy ? get_models(easy, cfg->url, models_url, cfg->model, vocab, err)
                        : ib__fail(err, IB_ERR_NO_MEMORY, "out of memory");
    curl_easy_cleanup(easy);
    curl_global_cleanup();
    free(models_url);
    return st;
}
