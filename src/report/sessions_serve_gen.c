/* --sessions of a generative model's serve (docs/serve-generative.md,
 * "Sessions"): the same schedule served in N fresh processes, and what
 * changes between them. A serving run gives one value of each figure (its
 * TTFT p99 is one number over its requests), so each is a figure of one
 * value a session: its geometric mean and the t interval over the
 * sessions' log values (sessions_figures.c). */
#include "report/report.h"

#include <math.h>
#include <stdlib.h>

/* One figure: figures.<stat>.<field> of a session's document, or
 * figures.<stat> itself when field is NULL. */
typedef struct serve_figure {
    const char *key, *label, *unit, *stat, *field;
} serve_figure;

static const serve_figure serve_figures[] = {
    { "ttft_p99_ms", "TTFT p99", "ms", "ttft_ms", "p99" },
    { "tpot_p50_ms", "TPOT p50", "ms", "tpot_ms", "p50" },
    { "tpot_p99_ms", "TPOT p99", "ms", "tpot_ms", "p99" },
    { "goodput_rate", "goodput", "requests/s", "goodput_rate", NULL },
    { "output_tokens_per_s", "output", "tokens/s", "output_tokens_per_s", NULL },
};

static double session_value(const cJSON *entry, const serve_figure *g)
{
    if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(entry, "failed"))) return NAN;
    const cJSON *figures = cJSON_GetObjectItemCaseSensitive(entry, "figures");
    return g->field ? ib__json_num(cJSON_GetObjectItemCaseSensitive(figures, g->stat), g->field)
                    : ib__json_num(figures, g->stat);
}

void ib__gen_serve_session_figures(cJSON *sessions, const cJSON *runs, size_t k)
{
    cJSON *figures = cJSON_AddArrayToObject(sessions, "figures");
    double *v = malloc((k ? k : 1) * sizeof *v);
    for (size_t j = 0; v && j < sizeof serve_figures / sizeof serve_figures[0]; j++) {
        const serve_figure *g = &serve_figures[j];
        for (size_t i = 0; i < k; i++) v[i] = session_value(cJSON_GetArrayItem(runs, (int)i), g);
        ib__session_figure f = { g->key, g->label, g->unit, v, NULL, false };
        cJSON_AddItemToArray(figures, ib__session_figure_json(&f, k));
    }
    free(v);
}
