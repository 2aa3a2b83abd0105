/* The accuracy columns (docs/precision.md) in the text and JSON reports of
 * latency and throughput. */
#include "report/report.h"

#include <math.h>

/* Where a class set differs, how close the reference's call was beside
 * the largest error: a reordered near tie reads as plainly as a wrong
 * class (random weights give near ties; docs/precision.md). */
static void text_class_gaps(ib__sbuf *b, const ib_output_accuracy *o)
{
    if (!o->compared || !o->class_scores) return;
    const struct {
        const char *what, *places;
        double agreement, gap;
    } sets[] = {
        { "arg max", "1st and 2nd", o->top1_agreement, o->top1_gap },
        { "top-5 set", "5th and 6th", o->top5_agreement, o->top5_gap },
    };
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        if (sets[i].agreement < 1)
            ib__sbuf_printf(b,
                            "note: %s: the %s differs in %.1f%% of the rows; there the reference's %s scores "
                            "are %.3g apart at most, against a largest error of %.3g\n",
                            o->name, sets[i].what, 100 * (1 - sets[i].agreement), sets[i].places, sets[i].gap,
                            o->max_abs_error);
}

void ib__text_accuracy(ib__sbuf *b, const ib_accuracy *acc)
{
    if (!acc->measured) return;
    ib__sbuf_printf(b, "\naccuracy of %s against %s (the same inputs, batch %lld", acc->math, acc->reference,
                    (long long)acc->batch);
    if (acc->tolerance > 0) ib__sbuf_printf(b, "; tolerance %.3g on max abs error", acc->tolerance);
    ib__sbuf_printf(b, "):\n%-24s %12s %12s %12s %10s %7s %7s\n", "output", "max abs err", "max rel err",
                    "mean abs err", "cosine", "top-1", "top-5");
    for (int i = 0; i < acc->n_outputs; i++) {
        const ib_output_accuracy *o = &acc->outputs[i];
        if (!o->compared) {
            ib__sbuf_printf(b, "%-24.24s not compared: %s\n", o->name, o->why);
            continue;
        }
        ib__sbuf_printf(b, "%-24.24s %12.3g %12.3g %12.3g %10.6f", o->name, o->max_abs_error,
                        o->max_rel_error, o->mean_abs_error, o->cosine);
        if (o->class_scores)
            ib__sbuf_printf(b, " %6.1f%% %6.1f%%", 100 * o->top1_agreement, 100 * o->top5_agreement);
        else
            ib__sbuf_printf(b, " %7s %7s", "-", "-");
        ib__sbuf_printf(b, "%s\n", o->over_tolerance ? "  OVER TOLERANCE" : "");
    }
    for (int i = 0; i < acc->n_outputs; i++) text_class_gaps(b, &acc->outputs[i]);
    if (acc->over_tolerance)
        ib__sbuf_printf(b, "warning: %s is over the tolerance (--max-error %.3g) against %s\n", acc->math,
                        acc->tolerance, acc->reference);
}

static cJSON *output_json(const ib_output_accuracy *o)
{
    cJSON *j = cJSON_CreateObject();
    cJSON_AddStringToObject(j, "name", o->name);
    cJSON_AddBoolToObject(j, "compared", o->compared);
    if (!o->compared) {
        cJSON_AddStringToObject(j, "why", o->why);
        return j;
    }
    cJSON_AddNumberToObject(j, "elements", (double)o->n);
    ib__json_add_number(j, "max_abs_error", o->max_abs_error);
    ib__json_add_number(j, "max_rel_error", o->max_rel_error);
    ib__json_add_number(j, "mean_abs_error", o->mean_abs_error);
    ib__json_add_number(j, "cosine", o->cosine);
    ib__json_add_number(j, "top1_agreement", o->class_scores ? o->top1_agreement : NAN);
    ib__json_add_number(j, "top5_agreement", o->class_scores ? o->top5_agreement : NAN);
    ib__json_add_number(j, "top1_gap", o->class_scores ? o->top1_gap : NAN);
    ib__json_add_number(j, "top5_gap", o->class_scores ? o->top5_gap : NAN);
    cJSON_AddBoolToObject(j, "over_tolerance", o->over_tolerance);
    return j;
}

void ib__json_accuracy(cJSON *root, const ib_accuracy *acc)
{
    if (!acc->measured) {
        cJSON_AddNullToObject(root, "accuracy");
        return;
    }
    cJSON *a = cJSON_AddObjectToObject(root, "accuracy");
    cJSON_AddStringToObject(a, "math", acc->math);
    cJSON_AddStringToObject(a, "reference", acc->reference);
    cJSON_AddNumberToObject(a, "batch", (double)acc->batch);
    ib__json_add_number(a, "tolerance", acc->tolerance > 0 ? acc->tolerance : NAN);
    cJSON_AddBoolToObject(a, "over_tolerance", acc->over_tolerance);
    cJSON *outs = cJSON_AddArrayToObject(a, "outputs");
    for (int i = 0; i < acc->n_outputs; i++) cJSON_AddItemToArray(outs, output_json(&acc->outputs[i]));
}
