/* Plotting primitives for the HTML reports: axes with round ticks, bins,
 * downsampling, and SVG shapes and escaped text appended to an ib__sbuf.
 * The SVG is meant to be inlined in HTML: no xmlns, no script, no link to
 * anything outside, so that the page renders offline. */
#ifndef IB_REPORT_SVG_H
#define IB_REPORT_SVG_H

#include "report/report.h"

/* Appends s with & < > " ' escaped: safe in HTML text and in attribute
 * values, and with bytes that are not UTF-8 replaced (ib__sbuf_append_utf8):
 * the page declares UTF-8. Every string from outside (model names,
 * messages) goes through this. */
void ib__xml_escape(ib__sbuf *b, const char *s);

#define IB__MAX_TICKS 12

/* An axis from one tick to another: lo, lo + step, ..., hi. */
typedef struct ib__axis {
    double lo, hi, step;
    int n_ticks;
    int decimals; /* what a tick label needs to show the step */
    bool log2;    /* values are log2 of what the labels show (2^v) */
} ib__axis;

/* The axis covering [lo, hi] with at most max_ticks ticks (clamped to
 * 2..IB__MAX_TICKS) at whole multiples of a 1-2-5 step: the first tick at
 * or below lo, the last at or above hi. A zero range is widened by 5% of
 * the value (or by 1 around 0) so that the axis has extent. */
ib__axis ib__nice_axis(double lo, double hi, int max_ticks);
/* For log2 values: whole-number ticks (labels 1, 2, 4, ...), at least one
 * doubling of extent. */
ib__axis ib__log2_axis(double lo, double hi, int max_ticks);
/* A tick's label, "0.015", or "64" on a log2 axis. */
const char *ib__axis_label(const ib__axis *a, int i, char buf[32]);

/* Bins for a histogram of sorted[0..n): Freedman-Diaconis (width
 * 2 IQR / n^(1/3)), sqrt(n) when the IQR is 0, clamped to [5, 60]. */
size_t ib__histogram_bins(const double *sorted, size_t n);
/* Counts x[0..n) into n_bins equal bins over [lo, hi] (the last bin
 * closed; NaN is not counted). Returns how many lie outside [lo, hi]: in
 * no bin, for the chart to say (never folded into an edge bin, where they
 * would be drawn as if they were there). */
size_t ib__histogram(const double *x, size_t n, double lo, double hi, size_t n_bins, size_t *counts);
/* Indices of y[0..n) to draw when at most max_points (>= 2) fit: all of
 * them when they fit, else the minimum and the maximum of each of
 * max_points / 2 consecutive buckets, in run order, so that spikes stay
 * visible. Returns how many were written to idx (room for max_points). */
size_t ib__downsample_minmax(const double *y, size_t n, size_t max_points, size_t *idx);

/* A plot area inside an SVG of width x height pixels. */
typedef struct ib__plot {
    double width, height;
    double left, right, top, bottom; /* margins, px */
    ib__axis x, y;
} ib__plot;

double ib__plot_px(const ib__plot *p, double x);
double ib__plot_py(const ib__plot *p, double y);

/* <svg> with a role and an accessible title; closed by ib__svg_end. */
void ib__svg_begin(ib__sbuf *b, const ib__plot *p, const char *title);
void ib__svg_end(ib__sbuf *b);
/* Frame, grid, ticks with labels, and the axis titles. */
void ib__svg_axes(ib__sbuf *b, const ib__plot *p, const char *x_title, const char *y_title);
/* A line through the points (x[i], y[i]); non-finite points are skipped. */
void ib__svg_polyline(ib__sbuf *b, const ib__plot *p, const double *x, const double *y, size_t n,
                      const char *cls);
/* A circle of class cls at each finite point. */
void ib__svg_points(ib__sbuf *b, const ib__plot *p, const double *x, const double *y, size_t n,
                    const char *cls, double radius_px);
/* Histogram bars: counts[i] over [lo + i w, lo + (i+1) w), w = (hi-lo)/n. */
void ib__svg_bars(ib__sbuf *b, const ib__plot *p, const size_t *counts, size_t n_bins, double lo, double hi,
                  const char *cls);
/* A rectangle over [x_lo, x_hi] x [y_lo, y_hi] (plot units), with title as
 * its tooltip. */
void ib__svg_rect(ib__sbuf *b, const ib__plot *p, double x_lo, double x_hi, double y_lo, double y_hi,
                  const char *cls, const char *title);
/* A horizontal bar from x = 0 to x between y_lo and y_hi (plot units),
 * with title as its tooltip. */
void ib__svg_hbar(ib__sbuf *b, const ib__plot *p, double y_lo, double y_hi, double x, const char *cls,
                  const char *title);
/* A line from (x1, y1) to (x2, y2) in plot units. */
void ib__svg_segment(ib__sbuf *b, const ib__plot *p, double x1, double y1, double x2, double y2,
                     const char *cls);
/* A vertical marker at x labelled at the top; row staggers labels that
 * would overlap (0 = first line below the top). */
void ib__svg_vline(ib__sbuf *b, const ib__plot *p, double x, const char *cls, const char *label, int row);
/* A horizontal marker at y, labelled in the right margin (leave it room). */
void ib__svg_hline(ib__sbuf *b, const ib__plot *p, double y, const char *cls, const char *label);
/* Escaped text at (px, py) pixels; anchor "start", "middle" or "end". */
void ib__svg_text(ib__sbuf *b, double px, double py, const char *anchor, const char *cls, const char *text);

#endif
