/* Plotting primitives for the HTML reports (svg.h). Coordinates are written
 * with one decimal: finer than a pixel, and small files. */
#include "report/svg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

void ib__xml_escape(ib__sbuf *b, const char *s)
{
    static const char specials[] = "&<>\"'";
    static const char *const entities[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&#39;" };
    while (*s) {
        /* The specials are ASCII: never inside a multi-byte character. */
        size_t run = strcspn(s, specials);
        ib__sbuf_append_utf8(b, s, run);
        s += run;
        if (*s) ib__sbuf_printf(b, "%s", entities[strchr(specials, *s++) - specials]);
    }
}

/* ------------------------------------------------------------------------ */
/* Axes                                                                      */
/* ------------------------------------------------------------------------ */

static int clamp_ticks(int max_ticks)
{
    return max_ticks < 2 ? 2 : max_ticks > IB__MAX_TICKS ? IB__MAX_TICKS : max_ticks;
}

/* Digits after the point that a multiple of step needs. */
static int step_decimals(double step)
{
    if (step >= 1) return 0;
    int d = (int)ceil(-log10(step) - 1e-9);
    return d > 12 ? 12 : d;
}

/* The first 1-2-5 step from mag up whose ticks covering [lo, hi] number
 * at most max_ticks. The tolerance keeps a bound that is a multiple of the
 * step from growing an extra tick through rounding. */
static ib__axis fit_step(double lo, double hi, double mag, int max_ticks)
{
    static const double mult[] = { 1, 2, 5, 10, 20, 50, 100 };
    ib__axis a = { 0 };
    for (size_t i = 0; i < sizeof mult / sizeof mult[0]; i++) {
        double step = mult[i] * mag;
        double k0 = floor(lo / step + 1e-9), k1 = ceil(hi / step - 1e-9);
        a = (ib__axis){ k0 * step, k1 * step, step, (int)(k1 - k0) + 1, step_decimals(step), false };
        if (a.n_ticks <= max_ticks) break;
    }
    return a;
}

ib__axis ib__nice_axis(double lo, double hi, int max_ticks)
{
    max_ticks = clamp_ticks(max_ticks);
    if (!isfinite(lo) || !isfinite(hi)) lo = hi = 0;
    if (!(hi > lo)) {
        double pad = lo != 0 ? fabs(lo) * 0.05 : 1;
        lo -= pad;
        hi += pad;
    }
    double mag = pow(10, floor(log10((hi - lo) / (max_ticks - 1))));
    return fit_step(lo, hi, mag, max_ticks);
}

ib__axis ib__log2_axis(double lo, double hi, int max_ticks)
{
    max_ticks = clamp_ticks(max_ticks);
    if (!isfinite(lo) || !isfinite(hi)) lo = hi = 0;
    lo = floor(lo);
    hi = ceil(hi);
    if (!(hi > lo)) hi = lo + 1;
    /* Whole doublings only: a tick at 2^1.5 would need a label like 2.83. */
    ib__axis a = fit_step(lo, hi, 1, max_ticks);
    a.decimals = 0;
    a.log2 = true;
    return a;
}

/* The i-th tick of a (from 0). */
static double axis_tick(const ib__axis *a, int i)
{
    /* From the index, not by accumulation: no drift in the last digits. */
    return (round(a->lo / a->step) + i) * a->step;
}

const char *ib__axis_label(const ib__axis *a, int i, char buf[32])
{
    double v = axis_tick(a, i);
    if (a->log2)
        snprintf(buf, 32, "%.0f", pow(2, v));
    else
        snprintf(buf, 32, "%.*f", a->decimals, fabs(v) < a->step * 1e-6 ? 0.0 : v);
    return buf;
}

/* ------------------------------------------------------------------------ */
/* Data                                                                      */
/* ------------------------------------------------------------------------ */

size_t ib__histogram_bins(const double *sorted, size_t n)
{
    if (n == 0) return 5;
    double range = sorted[n - 1] - sorted[0];
    double iqr = ib_quantile_sorted(sorted, n, 0.75) - ib_quantile_sorted(sorted, n, 0.25);
    double width = 2 * iqr / cbrt((double)n);
    double bins = width > 0 && range > 0 ? ceil(range / width) : ceil(sqrt((double)n));
    return bins < 5 ? 5 : bins > 60 ? 60 : (size_t)bins;
}

size_t ib__histogram(const double *x, size_t n, double lo, double hi, size_t n_bins, size_t *counts)
{
    memset(counts, 0, n_bins * sizeof *counts);
    double w = (hi - lo) / (double)n_bins;
    size_t outside = 0;
    for (size_t i = 0; i < n; i++) {
        if (isnan(x[i])) continue;
        /* Folded into an edge bin, a far sample would be drawn where it is
         * not: it is counted apart, for the caption to say. */
        if (x[i] < lo || x[i] > hi) {
            outside++;
            continue;
        }
        double k = w > 0 ? floor((x[i] - lo) / w) : 0;
        counts[k >= (double)n_bins ? n_bins - 1 : (size_t)k]++;
    }
    return outside;
}

size_t ib__downsample_minmax(const double *y, size_t n, size_t max_points, size_t *idx)
{
    if (n <= max_points) {
        for (size_t i = 0; i < n; i++) idx[i] = i;
        return n;
    }
    size_t buckets = max_points / 2, out = 0;
    for (size_t k = 0; k < buckets; k++) {
        size_t from = n * k / buckets, to = n * (k + 1) / buckets;
        size_t lo = from, hi = from;
        for (size_t i = from; i < to; i++) {
            if (y[i] < y[lo]) lo = i;
            if (y[i] > y[hi]) hi = i;
        }
        idx[out++] = lo < hi ? lo : hi;
        if (lo != hi) idx[out++] = lo < hi ? hi : lo;
    }
    return out;
}

/* ------------------------------------------------------------------------ */
/* SVG                                                                       */
/* ------------------------------------------------------------------------ */

double ib__plot_px(const ib__plot *p, double x)
{
    double w = p->width - p->left - p->right;
    return p->left + (x - p->x.lo) / (p->x.hi - p->x.lo) * w;
}

double ib__plot_py(const ib__plot *p, double y)
{
    double h = p->height - p->top - p->bottom;
    return p->top + h - (y - p->y.lo) / (p->y.hi - p->y.lo) * h;
}

void ib__svg_begin(ib__sbuf *b, const ib__plot *p, const char *title)
{
    ib__sbuf_printf(b,
                    "<svg class=\"plot\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
                    "role=\"img\" aria-label=\"",
                    p->width, p->height, p->width, p->height);
    ib__xml_escape(b, title);
    ib__sbuf_printf(b, "\">\n<title>");
    ib__xml_escape(b, title);
    ib__sbuf_printf(b, "</title>\n");
}

void ib__svg_end(ib__sbuf *b) { ib__sbuf_printf(b, "</svg>\n"); }

void ib__svg_text(ib__sbuf *b, double px, double py, const char *anchor, const char *cls, const char *text)
{
    ib__sbuf_printf(b, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" class=\"%s\">", px, py, anchor, cls);
    ib__xml_escape(b, text);
    ib__sbuf_printf(b, "</text>\n");
}

static void line(ib__sbuf *b, double x1, double y1, double x2, double y2, const char *cls)
{
    ib__sbuf_printf(b, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" class=\"%s\"/>\n", x1, y1, x2,
                    y2, cls);
}

void ib__svg_axes(ib__sbuf *b, const ib__plot *p, const char *x_title, const char *y_title)
{
    double x0 = p->left, x1 = p->width - p->right, y0 = p->height - p->bottom, y1 = p->top;
    char label[32];
    for (int i = 0; i < p->x.n_ticks; i++) {
        double px = ib__plot_px(p, axis_tick(&p->x, i));
        line(b, px, y1, px, y0, "grid");
        line(b, px, y0, px, y0 + 5, "tick");
        ib__svg_text(b, px, y0 + 18, "middle", "tick-label", ib__axis_label(&p->x, i, label));
    }
    for (int i = 0; i < p->y.n_ticks; i++) {
        double py = ib__plot_py(p, axis_tick(&p->y, i));
        line(b, x0, py, x1, py, "grid");
        line(b, x0 - 5, py, x0, py, "tick");
        ib__svg_text(b, x0 - 8, py + 4, "end", "tick-label", ib__axis_label(&p->y, i, label));
    }
    ib__sbuf_printf(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" class=\"frame\"/>\n", x0,
                    y1, x1 - x0, y0 - y1);
    ib__svg_text(b, (x0 + x1) / 2, p->height - 8, "middle", "axis-title", x_title);
    ib__sbuf_printf(b,
                    "<text transform=\"translate(16 %.1f) rotate(-90)\" text-anchor=\"middle\" "
                    "class=\"axis-title\">",
                    (y0 + y1) / 2);
    ib__xml_escape(b, y_title);
    ib__sbuf_printf(b, "</text>\n");
}

void ib__svg_polyline(ib__sbuf *b, const ib__plot *p, const double *x, const double *y, size_t n,
                      const char *cls)
{
    ib__sbuf_printf(b, "<polyline class=\"%s\" points=\"", cls);
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]) && isfinite(y[i]))
            ib__sbuf_printf(b, "%.1f,%.1f ", ib__plot_px(p, x[i]), ib__plot_py(p, y[i]));
    ib__sbuf_printf(b, "\"/>\n");
}

void ib__svg_points(ib__sbuf *b, const ib__plot *p, const double *x, const double *y, size_t n,
                    const char *cls, double radius_px)
{
    for (size_t i = 0; i < n; i++)
        if (isfinite(x[i]) && isfinite(y[i]))
            ib__sbuf_printf(b, "<circle class=\"%s\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\"/>\n", cls,
                            ib__plot_px(p, x[i]), ib__plot_py(p, y[i]), radius_px);
}

void ib__svg_bars(ib__sbuf *b, const ib__plot *p, const size_t *counts, size_t n_bins, double lo, double hi,
                  const char *cls)
{
    double w = (hi - lo) / (double)n_bins, base = ib__plot_py(p, 0);
    for (size_t i = 0; i < n_bins; i++) {
        if (counts[i] == 0) continue;
        double x0 = ib__plot_px(p, lo + w * (double)i), x1 = ib__plot_px(p, lo + w * (double)(i + 1));
        double top = ib__plot_py(p, (double)counts[i]);
        ib__sbuf_printf(b,
                        "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\">"
                        "<title>%zu</title></rect>\n",
                        cls, x0, top, x1 - x0 > 1 ? x1 - x0 : 1, base - top, counts[i]);
    }
}

void ib__svg_rect(ib__sbuf *b, const ib__plot *p, double x_lo, double x_hi, double y_lo, double y_hi,
                  const char *cls, const char *title)
{
    double x0 = ib__plot_px(p, x_lo), x1 = ib__plot_px(p, x_hi);
    double top = ib__plot_py(p, y_hi), bottom = ib__plot_py(p, y_lo);
    ib__sbuf_printf(b, "<rect class=\"%s\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"><title>", cls,
                    x0, top, x1 - x0 > 1 ? x1 - x0 : 1, bottom - top);
    ib__xml_escape(b, title);
    ib__sbuf_printf(b, "</title></rect>\n");
}

void ib__svg_hbar(ib__sbuf *b, const ib__plot *p, double y_lo, double y_hi, double x, const char *cls,
                  const char *title)
{
    ib__svg_rect(b, p, 0, x, y_lo, y_hi, cls, title);
}

void ib__svg_segment(ib__sbuf *b, const ib__plot *p, double x1, double y1, double x2, double y2,
                     const char *cls)
{
    line(b, ib__plot_px(p, x1), ib__plot_py(p, y1), ib__plot_px(p, x2), ib__plot_py(p, y2), cls);
}

void ib__svg_vline(ib__sbuf *b, const ib__plot *p, double x, const char *cls, const char *label, int row)
{
    double px = ib__plot_px(p, x), y0 = p->height - p->bottom, y1 = p->top;
    line(b, px, y1, px, y0, cls);
    /* The label sits beside the line, on the side with room. */
    bool right_half = px > (p->left + p->width - p->right) / 2;
    ib__svg_text(b, right_half ? px - 4 : px + 4, y1 + 14 + 15 * row, right_half ? "end" : "start", cls,
                 label);
}

void ib__svg_hline(ib__sbuf *b, const ib__plot *p, double y, const char *cls, const char *label)
{
    double py = ib__plot_py(p, y), x0 = p->left, x1 = p->width - p->right;
    line(b, x0, py, x1, py, cls);
    /* In the right margin: inside, the samples would run through it. */
    ib__svg_text(b, x1 + 4, py + 4, "start", cls, label);
}
