/* html.c - the HTML report of a run (html.h). */
#include "html.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

#include "profdb.h"
#include "ranks.h"
#include "report.h"

/* Rows the page shows before "show all"; the rest stay in its data. */
#define TABLE_FIRST 200
#define SNIPPETS 6      /* source excerpts: the leading rows and lines */
#define SNIPPET_CONTEXT 3
#define COMPOSITION_PARTS 8
#define MAX_P 256       /* the speedup plot's cores */

/* ---- Writing ---- */

void html_escape(FILE *f, const char *s)
{
    for (; s && *s; s++) {
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        default: fputc(*s, f);
        }
    }
}

/* A JavaScript string literal; '<' escaped so that no text closes the
 * script element. */
static void js_str(FILE *f, const char *s)
{
    fputc('"', f);
    for (; s && *s; s++) {
        unsigned char ch = (unsigned char)*s;
        if (ch == '"' || ch == '\\')
            fprintf(f, "\\%c", ch);
        else if (ch < 0x20 || ch == '<' || ch == '>' || ch == '&')
            fprintf(f, "\\u%04x", ch);
        else
            fputc(ch, f);
    }
    fputc('"', f);
}

static void js_num(FILE *f, double v)
{
    if (isnan(v))
        fputs("null", f);
    else if (isinf(v))
        fputs(v > 0 ? "Infinity" : "-Infinity", f);
    else if (v == floor(v) && fabs(v) < 1e15)
        fprintf(f, "%.0f", v);
    else
        fprintf(f, "%.6g", v);
}

/* A number as the CSV writes it: integers whole, ratios with 3 decimals,
 * "inf". */
static void fmt_int(char *buf, size_t len, double v)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.0f", v);
}

static void fmt_ratio(char *buf, size_t len, double v)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else if (isinf(v))
        snprintf(buf, len, "inf");
    else
        snprintf(buf, len, "%.3f", v);
}

static void fmt_factor(char *buf, size_t len, double v)
{
    if (isinf(v))
        snprintf(buf, len, "&#8734;");
    else
        snprintf(buf, len, "%g", v);
}

static const char style[] =
    "body{font:14px/1.45 system-ui,sans-serif;margin:24px auto;"
    "max-width:1100px;padding:0 16px;color:#222}"
    "h1{font-size:22px}h2{font-size:18px;margin-top:32px;"
    "border-bottom:1px solid #ddd}"
    "table{border-collapse:collapse;margin:8px 0}"
    "td,th{padding:3px 8px;text-align:right;border-bottom:1px solid #eee;"
    "white-space:nowrap}"
    "td.t,th.t{text-align:left;white-space:normal;word-break:break-all}"
    "td.d,th.d{text-align:left}"
    "th{background:#f4f4f4;position:sticky;top:0}"
    "th.s{cursor:pointer}th.s:hover{background:#e6e6e6}"
    ".bar{display:inline-block;height:10px;background:#d9534f;"
    "vertical-align:middle;margin-right:6px}"
    "dl.sum{display:grid;grid-template-columns:max-content auto;gap:2px 16px}"
    "dl.sum dt{color:#666}dl.sum dd{margin:0}"
    ".big{font-size:20px;font-weight:600}"
    "pre{background:#f8f8f8;padding:6px;overflow-x:auto;margin:4px 0 12px}"
    "pre b{background:#ffe9a8;font-weight:normal;display:inline-block;"
    "min-width:100%}"
    ".note{color:#8a4b00}.muted{color:#777}"
    "svg text{font:11px system-ui,sans-serif}"
    "button{margin:4px 8px 4px 0}";

void html_num_cell(FILE *f, double v, int decimals)
{
    if (isnan(v))
        fputs("<td>-</td>", f);
    else if (isinf(v))
        fputs("<td>inf</td>", f);
    else
        fprintf(f, "<td>%.*f</td>", decimals, v);
}

void html_begin(FILE *f, const char *title)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
          "<meta name=\"viewport\" content=\"width=device-width\">"
          "<title>whatif: ",
          f);
    html_escape(f, title);
    fprintf(f, "</title><style>%s</style></head><body>\n", style);
}

static void head(FILE *f, const profdb *pg)
{
    const char *cmd = profdb_meta(pg, "command");
    html_begin(f, cmd ? cmd : "profile");
}

static void dd(FILE *f, const char *id, const char *label, const char *value)
{
    fprintf(f, "<dt>%s</dt><dd", label);
    if (id)
        fprintf(f, " id=\"%s\"", id);
    fputs(">", f);
    html_escape(f, value ? value : "-");
    fputs("</dd>", f);
}

static void summary(FILE *f, const profdb *pg)
{
    const profdb_row *p = &pg->rows[0];
    char w[64], s[64], par[64];
    fmt_int(w, sizeof(w), p->work);
    fmt_int(s, sizeof(s), p->span);
    fmt_ratio(par, sizeof(par), p->parallelism);
    const char *unit = profdb_meta(pg, "metric_unit");
    fputs("<h1>whatif profile</h1>\n<section id=\"summary\">"
          "<p class=\"big\">parallelism <span id=\"program-parallelism\">",
          f);
    html_escape(f, par);
    fputs("</span></p><dl class=\"sum\">", f);
    dd(f, "command", "command", profdb_meta(pg, "command"));
    dd(f, "program-work", "work", w);
    dd(f, "program-span", "span (critical path)", s);
    dd(f, "metric", "metric", profdb_meta(pg, "metric"));
    dd(f, NULL, "unit", unit);
    dd(f, NULL, "how it was measured", profdb_meta(pg, "metric_reason"));
    dd(f, "threads", "threads", profdb_meta(pg, "threads"));
    dd(f, NULL, "mode", profdb_meta(pg, "mode"));
    dd(f, NULL, "date", profdb_meta(pg, "date"));
    dd(f, NULL, "runtime", profdb_meta(pg, "runtime"));
    const char *complete = profdb_meta(pg, "complete");
    if (complete && strcmp(complete, "yes"))
        dd(f, "incomplete", "complete", complete);
    fputs("</dl><p class=\"muted\">Work is the total of every serial "
          "fragment, span the longest chain of them that must run one "
          "after another; their ratio bounds the speedup on any number "
          "of cores.</p></section>\n",
          f);
}

static const char *const palette[] = {
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac",
};
#define NCOLORS (sizeof(palette) / sizeof(palette[0]))

static void bar(FILE *f, double pct)
{
    if (isnan(pct) || pct < 0)
        pct = 0;
    fprintf(f, "<span class=\"bar\" style=\"width:%.1fpx\"></span>",
            pct > 100 ? 100.0 : pct);
}

/* A row of two texts, a count and a share of the critical path, as a
 * bar. */
static void share_row(FILE *f, const char *a, const char *b, double count,
                      double pct)
{
    fputs("<tr><td class=\"t\">", f);
    html_escape(f, a);
    fputs("</td><td class=\"t\">", f);
    html_escape(f, b);
    fprintf(f, "</td><td>%.0f</td><td>", count);
    bar(f, pct);
    fprintf(f, "%.3f%%</td></tr>", pct);
}

/* The critical path as one stacked bar of its leading locations, then
 * its sampled lines and the program's serial fragments. */
static void composition(FILE *f, const profdb *pg)
{
    fputs("<h2>What the critical path is made of</h2>\n"
          "<section id=\"composition\">",
          f);
    /* locations' own critical work sums to the span, regions overlap it */
    const profdb_row *part[COMPOSITION_PARTS];
    size_t np = 0;
    double rest = 100;
    for (size_t i = 0; i < pg->nrows && np < COMPOSITION_PARTS; i++) {
        const profdb_row *r = &pg->rows[i];
        if (!strcmp(r->directive, "region") || !(r->critical_percent > 0))
            continue;
        part[np++] = r;
        rest -= r->critical_percent;
    }
    fputs("<svg width=\"1000\" height=\"34\" role=\"img\" "
          "aria-label=\"critical path composition\">",
          f);
    double x = 0;
    for (size_t i = 0; i < np; i++) {
        double wdt = part[i]->critical_percent * 10;
        fprintf(f, "<rect x=\"%.1f\" y=\"2\" width=\"%.1f\" height=\"30\" "
                   "fill=\"%s\"><title>",
                x, wdt, palette[i % NCOLORS]);
        html_escape(f, part[i]->location);
        fprintf(f, " (%s): %.1f%%</title></rect>", part[i]->directive,
                part[i]->critical_percent);
        x += wdt;
    }
    if (rest > 0.05)
        fprintf(f, "<rect x=\"%.1f\" y=\"2\" width=\"%.1f\" height=\"30\" "
                   "fill=\"#ddd\"><title>the rest: %.1f%%</title></rect>",
                x, rest * 10, rest);
    fputs("</svg><table id=\"composition-table\"><tr><th></th>"
          "<th class=\"t\">location</th><th class=\"t\">directive</th>"
          "<th>share of the critical path</th></tr>",
          f);
    for (size_t i = 0; i < np; i++) {
        fprintf(f, "<tr><td><svg width=\"10\" height=\"10\"><rect "
                   "width=\"10\" height=\"10\" fill=\"%s\"/></svg></td>"
                   "<td class=\"t\">",
                palette[i % NCOLORS]);
        html_escape(f, part[i]->location);
        fputs("</td><td class=\"t\">", f);
        html_escape(f, part[i]->directive);
        fprintf(f, "</td><td>%.3f%%</td></tr>", part[i]->critical_percent);
    }
    fputs("</table>", f);
    if (pg->nlines) {
        fputs("<h3>Source lines on the critical path (sampled)</h3>"
              "<table id=\"lines\"><tr><th class=\"t\">line</th>"
              "<th class=\"t\">function</th><th>samples</th>"
              "<th>share of the critical path</th></tr>",
              f);
        for (size_t i = 0; i < pg->nlines; i++)
            share_row(f, pg->lines[i].location, pg->lines[i].function,
                      pg->lines[i].samples, pg->lines[i].critical_percent);
        fputs("</table>", f);
    }
    if (pg->nserial) {
        fputs("<h3>The program's serial code on the critical path, between"
              "</h3><table id=\"serial\"><tr><th class=\"t\">from</th>"
              "<th class=\"t\">to</th><th>fragments</th>"
              "<th>share of the critical path</th></tr>",
              f);
        for (size_t i = 0; i < pg->nserial; i++)
            share_row(f, pg->serial[i].from, pg->serial[i].to,
                      pg->serial[i].fragments,
                      pg->serial[i].critical_percent);
        fputs("</table>", f);
    }
    fputs("</section>\n", f);
}

/* ---- Plots (SVG) ---- */

typedef struct axis {
    double lo, hi;              /* in data units (lo > 0 when log) */
    int log;
    const char *label;
} axis;

enum { PLOT_W = 720, PLOT_H = 340, M_LEFT = 60, M_RIGHT = 20, M_TOP = 16,
       M_BOTTOM = 44 };

static double map(const axis *a, double v, double from, double to)
{
    double t = a->log ? (log(v) - log(a->lo)) / (log(a->hi) - log(a->lo))
                      : (v - a->lo) / (a->hi - a->lo);
    if (!isfinite(t))
        t = 0;
    return from + t * (to - from);
}

static double px(const axis *a, double v)
{
    return map(a, v, M_LEFT, PLOT_W - M_RIGHT);
}

static double py(const axis *a, double v)
{
    return map(a, v, PLOT_H - M_BOTTOM, M_TOP);
}

static void plot_open(FILE *f, const char *id, const char *title)
{
    fprintf(f, "<svg id=\"%s\" width=\"%d\" height=\"%d\" role=\"img\" "
               "aria-label=\"%s\">",
            id, PLOT_W, PLOT_H, title);
}

static void tick_x(FILE *f, const axis *x, double v, const char *label)
{
    double X = px(x, v);
    fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" "
               "stroke=\"#eee\"/><text x=\"%.1f\" y=\"%d\" "
               "text-anchor=\"middle\">%s</text>",
            X, X, M_TOP, PLOT_H - M_BOTTOM, X, PLOT_H - M_BOTTOM + 14, label);
}

static void tick_y(FILE *f, const axis *y, double v)
{
    double Y = py(y, v);
    fprintf(f, "<line x1=\"%d\" x2=\"%d\" y1=\"%.1f\" y2=\"%.1f\" "
               "stroke=\"#eee\"/><text x=\"%d\" y=\"%.1f\" "
               "text-anchor=\"end\">%g</text>",
            M_LEFT, PLOT_W - M_RIGHT, Y, Y, M_LEFT - 4, Y + 4, v);
}

static void axes(FILE *f, const axis *x, const axis *y)
{
    fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" "
               "fill=\"none\" stroke=\"#999\"/>",
            M_LEFT, M_TOP, PLOT_W - M_LEFT - M_RIGHT,
            PLOT_H - M_TOP - M_BOTTOM);
    fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s</text>",
            (PLOT_W + M_LEFT) / 2, PLOT_H - 8, x->label);
    fprintf(f, "<text transform=\"translate(14 %d) rotate(-90)\" "
               "text-anchor=\"middle\">%s</text>",
            (PLOT_H - M_BOTTOM + M_TOP) / 2, y->label);
}

/* Ticks of a linear axis from 0: about five round steps. */
static void ticks_linear(FILE *f, const axis *y)
{
    double span = y->hi - y->lo, step = pow(10, floor(log10(span / 5)));
    if (span / step > 25)
        step *= 5;
    else if (span / step > 10)
        step *= 2;
    for (double v = 0; v <= y->hi + step / 2; v += step)
        if (v >= y->lo)
            tick_y(f, y, v);
}

/* Where a factor sits on the what-if plot: "inf" one step past the
 * largest finite factor. */
static double factor_x(double v, double maxfin)
{
    return isinf(v) ? maxfin * 4 : v;
}

static void whatif_curves(FILE *f, const profdb *pg)
{
    fputs("<h2>What-if: program parallelism if code were faster</h2>\n"
          "<section id=\"whatif\">",
          f);
    if (!pg->ncurves) {
        fputs("<p class=\"muted\">No what-if scenario in this run: mark "
              "code with <code>__WHATIF_BEGIN__</code>/<code>__WHATIF_END__"
              "</code>, or ask <code>whatif analyze --speedup FILE:LINE"
              "</code> or <code>--opportunities</code> of an offline "
              "trace.</p></section>\n",
              f);
        return;
    }
    double maxfin = 2, maxy = 1;
    for (size_t i = 0; i < pg->ncurves; i++)
        for (size_t k = 0; k < pg->curves[i].n; k++) {
            double v = pg->curves[i].x[k], p = pg->curves[i].y[k];
            if (isfinite(v) && v > maxfin)
                maxfin = v;
            if (isfinite(p) && p > maxy)
                maxy = p;
        }
    int has_inf = 0;
    for (size_t i = 0; i < pg->ncurves; i++)
        for (size_t k = 0; k < pg->curves[i].n; k++)
            has_inf |= isinf(pg->curves[i].x[k]);
    axis x = {1, has_inf ? maxfin * 4 : maxfin, 1, "speed-up factor of the "
                                                    "code (log scale)"};
    axis y = {0, maxy * 1.08, 0, "program parallelism"};
    plot_open(f, "whatif-plot", "what-if curves");
    axes(f, &x, &y);
    ticks_linear(f, &y);
    for (double v = 1; v <= maxfin * 1.01; v *= 2) {
        char l[32];
        snprintf(l, sizeof(l), "%g", v);
        tick_x(f, &x, v, l);
    }
    if (has_inf)
        tick_x(f, &x, maxfin * 4, "&#8734;");
    for (size_t i = 0; i < pg->ncurves; i++) {
        const profdb_curve *c = &pg->curves[i];
        const char *col = palette[i % NCOLORS];
        fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" "
                   "stroke-width=\"2\"%s points=\"",
                col, c->directive ? " stroke-dasharray=\"5 3\"" : "");
        for (size_t k = 0; k < c->n; k++)
            if (isfinite(c->y[k]))
                fprintf(f, "%.1f,%.1f ", px(&x, factor_x(c->x[k], maxfin)),
                        py(&y, c->y[k]));
        fputs("\"><title>", f);
        html_escape(f, c->name);
        fputs("</title></polyline>", f);
        for (size_t k = 0; k < c->n; k++) {
            if (!isfinite(c->y[k]))
                continue;
            int sat = c->x[k] == c->saturation;
            fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"%d\" "
                       "fill=\"%s\"%s><title>",
                    px(&x, factor_x(c->x[k], maxfin)), py(&y, c->y[k]),
                    sat ? 6 : 3, col,
                    sat ? " stroke=\"#000\" stroke-width=\"1.5\"" : "");
            html_escape(f, c->name);
            char fac[32];
            fmt_factor(fac, sizeof(fac), c->x[k]);
            fprintf(f, " x%s: %.3f%s</title></circle>", fac, c->y[k],
                    sat ? " (saturates)" : "");
        }
    }
    fputs("</svg>", f);
    /* the same as a table, with the saturation and next bottleneck */
    fputs("<table id=\"whatif-table\"><tr><th></th><th class=\"t\">sped up"
          "</th><th class=\"t\">kind</th><th>now</th><th>at the largest "
          "factor</th><th>saturates at</th><th class=\"t\">then the "
          "critical path is led by</th></tr>",
          f);
    for (size_t i = 0; i < pg->ncurves; i++) {
        const profdb_curve *c = &pg->curves[i];
        char fac[32], now[32], last[32];
        fmt_factor(fac, sizeof(fac), c->saturation);
        fmt_ratio(now, sizeof(now), c->y[0]);
        fmt_ratio(last, sizeof(last), c->y[c->n - 1]);
        fprintf(f, "<tr><td><svg width=\"16\" height=\"4\"><rect "
                   "width=\"16\" height=\"4\" fill=\"%s\"/></svg></td>"
                   "<td class=\"t\">",
                palette[i % NCOLORS]);
        html_escape(f, c->name);
        fputs("</td><td class=\"t\">", f);
        if (c->directive) { /* a location may be two rows: say which */
            fputs("opportunity: ", f);
            html_escape(f, c->directive);
        } else {
            fputs("scenario", f);
        }
        fprintf(f, "</td><td>%s</td><td>%s</td><td>x%s</td>"
                   "<td class=\"t\">",
                now, last, fac);
        html_escape(f, c->leader ? c->leader : "-");
        fputs("</td></tr>", f);
    }
    fputs("</table><p class=\"muted\">Solid: scenarios of this run "
          "(annotated regions, <code>--speedup</code>); dashed: "
          "<code>opportunities.csv</code>. A circled point is where the "
          "curve saturates (95% of its gain): beyond it, the code in the "
          "last column limits the program.</p></section>\n",
          f);
}

/* Speedup at P cores: at most min(P, W/S) (the work and span laws), at
 * least W / ((W - S)/P + S) for a greedy scheduler (Brent's bound: its
 * T_P <= (W - S)/P + S, tighter than W/P + S and exact at P = 1). */
static double lower_bound(double W, double S, double P)
{
    return W / ((W - S) / P + S);
}

static double upper_bound(double W, double S, double P)
{
    return fmin(P, W / S);
}

/* The bounds with the measured speedups of timed runs. */
static void speedup(FILE *f, const profdb *pg)
{
    const profdb_row *p = &pg->rows[0];
    double W = p->work, S = p->span;
    fputs("<h2>Speedup prediction</h2>\n<section id=\"speedup\">", f);
    if (!(W > 0) || !(S > 0)) {
        fputs("<p class=\"muted\">No work or span was measured.</p>"
              "</section>\n",
              f);
        return;
    }
    double t1 = NAN, top = fmin(W / S, MAX_P);
    for (size_t i = 0; i < pg->ntimings; i++)
        if (pg->timings[i].threads == 1)
            t1 = pg->timings[i].seconds;
    for (size_t i = 0; i < pg->ntimings && isfinite(t1); i++)
        top = fmax(top, t1 / pg->timings[i].seconds);
    double yhi = 2;
    while (yhi < top * 1.2 && yhi < MAX_P)
        yhi *= 2;
    axis x = {1, MAX_P, 1, "cores P (log scale)"};
    axis y = {1, yhi, 1, "speedup over one core (log scale)"};
    plot_open(f, "speedup-plot", "speedup bounds");
    axes(f, &x, &y);
    for (int v = 1; v <= MAX_P; v *= 2) {
        char l[16];
        snprintf(l, sizeof(l), "%d", v);
        tick_x(f, &x, v, l);
        if (v <= yhi)
            tick_y(f, &y, v);
    }
    /* the band between the bounds, then each bound */
    fputs("<polygon fill=\"#4e79a7\" fill-opacity=\"0.15\" points=\"", f);
    for (int i = 0; i <= 64; i++) {
        double P = pow(MAX_P, i / 64.0);
        fprintf(f, "%.1f,%.1f ", px(&x, P), py(&y, upper_bound(W, S, P)));
    }
    for (int i = 64; i >= 0; i--) {
        double P = pow(MAX_P, i / 64.0);
        fprintf(f, "%.1f,%.1f ", px(&x, P), py(&y, lower_bound(W, S, P)));
    }
    fputs("\"/><polyline id=\"upper-bound\" fill=\"none\" stroke=\"#4e79a7\" "
          "stroke-width=\"2\" points=\"",
          f);
    for (int i = 0; i <= 64; i++) {
        double P = pow(MAX_P, i / 64.0);
        fprintf(f, "%.1f,%.1f ", px(&x, P), py(&y, upper_bound(W, S, P)));
    }
    fputs("\"><title>upper bound min(P, W/S)</title></polyline>"
          "<polyline id=\"lower-bound\" fill=\"none\" stroke=\"#4e79a7\" "
          "stroke-dasharray=\"5 3\" stroke-width=\"2\" points=\"",
          f);
    for (int i = 0; i <= 64; i++) {
        double P = pow(MAX_P, i / 64.0);
        fprintf(f, "%.1f,%.1f ", px(&x, P), py(&y, lower_bound(W, S, P)));
    }
    fputs("\"><title>lower bound W / ((W - S)/P + S)</title></polyline>",
          f);
    /* the burdened span: task creation on every task's path */
    const char *bs = profdb_meta(pg, "burdened_span");
    double Sb = bs ? strtod(bs, NULL) : NAN;
    if (Sb > 0) {
        fputs("<polyline id=\"burdened-bound\" fill=\"none\" "
              "stroke=\"#f28e2b\" stroke-dasharray=\"2 3\" "
              "stroke-width=\"2\" points=\"",
              f);
        for (int i = 0; i <= 64; i++) {
            double P = pow(MAX_P, i / 64.0);
            fprintf(f, "%.1f,%.1f ", px(&x, P),
                    py(&y, fmax(1, W / ((W - S) / P + Sb))));
        }
        fputs("\"><title>burdened lower bound W / ((W - S)/P + "
              "S_burdened)</title></polyline>",
              f);
    }
    for (size_t i = 0; i < pg->ntimings && isfinite(t1); i++) {
        const profdb_timing *t = &pg->timings[i];
        double s = t1 / t->seconds;
        if (!(s > 0) || t->threads > MAX_P)
            continue;
        fprintf(f, "<circle class=\"measured\" cx=\"%.1f\" cy=\"%.1f\" "
                   "r=\"5\" fill=\"#e15759\"><title>measured at %d: "
                   "%.2fx</title></circle>",
                px(&x, t->threads), py(&y, fmin(fmax(s, 1), yhi)), t->threads,
                s);
    }
    fputs("</svg>", f);
    fprintf(f, "<table id=\"speedup-table\"><tr><th>P</th><th>at least</th>"
               "<th>at most</th>%s<th>measured</th><th>wall time (s)</th>"
               "</tr>",
            Sb > 0 ? "<th>at least, burdened</th>" : "");
    for (int P = 1; P <= MAX_P; P *= 2) {
        double lo = lower_bound(W, S, P), hi = upper_bound(W, S, P), meas = NAN,
               secs = NAN;
        for (size_t i = 0; i < pg->ntimings; i++)
            if (pg->timings[i].threads == P) {
                secs = pg->timings[i].seconds;
                meas = t1 / secs;
            }
        fprintf(f, "<tr><td>%d</td><td>%.2f</td><td>%.2f</td>", P, lo, hi);
        if (Sb > 0)
            fprintf(f, "<td class=\"burdened\">%.2f</td>",
                    W / ((W - S) / P + Sb));
        if (isfinite(meas))
            fprintf(f, "<td class=\"meas\">%.2f</td><td>%.3f</td></tr>", meas,
                    secs);
        else
            fputs("<td>-</td><td>-</td></tr>", f);
    }
    /* timed counts that are not powers of two */
    for (size_t i = 0; i < pg->ntimings; i++) {
        int P = pg->timings[i].threads;
        if (!(P & (P - 1)) && P <= MAX_P)
            continue;
        fprintf(f, "<tr><td>%d</td><td>%.2f</td><td>%.2f</td>", P,
                lower_bound(W, S, P), upper_bound(W, S, P));
        if (Sb > 0)
            fprintf(f, "<td class=\"burdened\">%.2f</td>",
                    W / ((W - S) / P + Sb));
        fprintf(f, "<td class=\"meas\">%.2f</td><td>%.3f</td></tr>",
                t1 / pg->timings[i].seconds, pg->timings[i].seconds);
    }
    fputs("</table><p class=\"muted\">With work W and span S, P cores "
          "cannot run the program faster than min(P, W/S) times one core "
          "(the work and span laws), and a greedy scheduler gets at least "
          "W/((W - S)/P + S) (Brent's bound). Both leave out what parallel "
          "execution adds: scheduling, memory bandwidth, contention.",
          f);
    if (Sb > 0)
        fprintf(f, " Burdened (dotted): Brent's bound with the burdened span "
                   "S_burdened = %.0f, every task's path started after what "
                   "creating a task cost in this run (task_create_cost), "
                   "every loop chunk's after what handing out a chunk cost "
                   "(chunk_dispatch_cost), every barrier phase's after what "
                   "a barrier cost beyond the wait for its last thread "
                   "(barrier_cost): a greedy scheduler that pays that per "
                   "grain and per barrier.",
                Sb);
    if (pg->ntimings)
        fputs(" Measured: the program's wall time at one thread over its "
              "wall time at P (<code>whatif run --threads</code>, "
              "unprofiled runs).",
              f);
    else
        fputs(" <code>whatif run --threads 1,2,4,...</code> adds the "
              "measured speedups.",
              f);
    fputs("</p></section>\n", f);
}

/* The profile table: the first rows written as HTML, every row in the
 * script's data, which sorts, filters and shows all on demand. */
static const char *const columns[] = {
    "location", "directive", "instances", "work", "span", "parallelism",
    "critical_work", "critical_percent", "grains", "mean_grain_work",
};

static void table_row(FILE *f, const profdb_row *r)
{
    char a[64], b[64], c[64], d[64], e[64], g[64], h[64];
    fmt_int(a, sizeof(a), r->instances);
    fmt_int(b, sizeof(b), r->work);
    fmt_int(c, sizeof(c), r->span);
    fmt_ratio(d, sizeof(d), r->parallelism);
    fmt_int(e, sizeof(e), r->critical_work);
    fmt_int(g, sizeof(g), r->grains);
    fmt_int(h, sizeof(h),
            r->grains > 0 ? floor(r->grain_work / r->grains + 0.5) : 0);
    fputs("<tr><td class=\"t\">", f);
    html_escape(f, r->location);
    fputs("</td><td class=\"d\">", f);
    html_escape(f, r->directive);
    fprintf(f, "</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s"
               "</td><td>",
            a, b, c, d, e);
    bar(f, r->critical_percent);
    fprintf(f, "%.3f</td><td>%s</td><td>%s</td></tr>", r->critical_percent,
            g, h);
}

static const char script[] =
    "(function(){var t0=performance.now();\n"
    "var D=window.WHATIF_ROWS,body=document.getElementById('rows'),"
    "more=document.getElementById('show-all'),"
    "filt=document.getElementById('filter'),key=7,desc=true,all=false;\n"
    "function esc(s){return String(s).replace(/&/g,'&amp;')"
    ".replace(/</g,'&lt;').replace(/>/g,'&gt;');}\n"
    "function n0(v){return v===null?'-':v===Infinity?'inf':"
    "Math.round(v).toString();}\n"
    "function n3(v){return v===null?'-':v===Infinity?'inf':v.toFixed(3);}\n"
    "function render(){var q=filt.value.toLowerCase(),"
    "r=D.slice(1).filter(function(x){return !q||"
    "(x[0]+' '+x[1]).toLowerCase().indexOf(q)>=0;});\n"
    "function val(x,k){return k===9?(x[8]>0?x[9]/x[8]:0):x[k];}\n"
    "r.sort(function(a,b){var x=val(a,key),y=val(b,key);if(x===y)return 0;"
    "if(typeof x==='string')return desc?(x<y?1:-1):(x<y?-1:1);"
    "return desc?(y===null?-1:x===null?1:y-x):(x===null?-1:y===null?1:x-y);"
    "});\n"
    "var shown=all?r:r.slice(0,window.WHATIF_FIRST),h=[];\n"
    "[D[0]].concat(shown).forEach(function(x){var m=x[8]>0?x[9]/x[8]:0;"
    "h.push('<tr><td class=\"t\">'+esc(x[0])+'</td><td class=\"d\">'+"
    "esc(x[1])+'</td><td>'+n0(x[2])+'</td><td>'+n0(x[3])+'</td><td>'+"
    "n0(x[4])+'</td><td>'+n3(x[5])+'</td><td>'+n0(x[6])+'</td><td>'+"
    "'<span class=\"bar\" style=\"width:'+Math.min(100,Math.max(0,x[7]))"
    ".toFixed(1)+'px\"></span>'+n3(x[7])+'</td><td>'+n0(x[8])+'</td><td>'+"
    "n0(m)+'</td></tr>');});\n"
    "body.innerHTML=h.join('');\n"
    "document.getElementById('row-count').textContent=(shown.length+1)+"
    "' of '+D.length;\n"
    "more.style.display=shown.length<r.length?'':'none';}\n"
    "document.querySelectorAll('#profile th.s').forEach(function(th,i){"
    "th.addEventListener('click',function(){if(key===i)desc=!desc;else{"
    "key=i;desc=i>1;}render();});});\n"
    "more.addEventListener('click',function(){all=true;render();});\n"
    "filt.addEventListener('input',render);\n"
    "render();document.body.setAttribute('data-ready','1');\n"
    "document.body.setAttribute('data-render-ms',"
    "(performance.now()-t0).toFixed(1));\n"
    "})();\n";

static void profile_table(FILE *f, const profdb *pg)
{
    fputs("<h2>Profile</h2>\n<section id=\"profile\"><p>Rows: <span "
          "id=\"row-count\">",
          f);
    size_t first = pg->nrows < TABLE_FIRST + 1 ? pg->nrows : TABLE_FIRST + 1;
    fprintf(f, "%zu of %zu</span> (click a column to sort). <input "
               "id=\"filter\" placeholder=\"filter by location or "
               "directive\" size=\"32\"></p><table><thead><tr>",
            first, pg->nrows);
    for (size_t i = 0; i < sizeof(columns) / sizeof(columns[0]); i++)
        fprintf(f, "<th class=\"s%s\">%s</th>",
                i == 0 ? " t" : i == 1 ? " d" : "", columns[i]);
    fputs("</tr></thead><tbody id=\"rows\">", f);
    for (size_t i = 0; i < first; i++)
        table_row(f, &pg->rows[i]);
    fprintf(f, "</tbody></table><button id=\"show-all\"%s>show all %zu rows"
               "</button><p class=\"muted\">The first row is the whole "
               "program. critical_percent: the row's own serial code's "
               "share of the program's critical path (the column sums to "
               "100; what-if regions overlap it). Units: %s.</p>",
            pg->nrows > first ? "" : " style=\"display:none\"", pg->nrows,
            profdb_meta(pg, "metric_unit") ? profdb_meta(pg, "metric_unit") : "-");
    fputs("<script>window.WHATIF_ROWS=[", f);
    for (size_t i = 0; i < pg->nrows; i++) {
        const profdb_row *r = &pg->rows[i];
        fputs(i ? ",\n[" : "[", f);
        js_str(f, r->location);
        fputc(',', f);
        js_str(f, r->directive);
        double v[] = {r->instances, r->work, r->span, r->parallelism,
                      r->critical_work, r->critical_percent, r->grains,
                      r->grain_work};
        for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++) {
            fputc(',', f);
            js_num(f, v[k]);
        }
        fputc(']', f);
    }
    fprintf(f, "];window.WHATIF_FIRST=%d;</script><script>%s</script>"
               "</section>\n",
            TABLE_FIRST, script);
}

static void notes(FILE *f, const profdb *pg)
{
    if (!pg->nnotes)
        return;
    fputs("<h2>Notes: rows that are not exact</h2>\n<section id=\"notes\">"
          "<ul>",
          f);
    for (size_t i = 0; i < pg->nnotes; i++) {
        fputs("<li class=\"note\"><b>", f);
        html_escape(f, pg->notes[i].location);
        fputs("</b> (", f);
        html_escape(f, pg->notes[i].directive);
        fputs("): ", f);
        html_escape(f, pg->notes[i].text);
        fputs("</li>", f);
    }
    fputs("</ul></section>\n", f);
}

/* ---- Source excerpts ---- */

/* Splits "file:line" (a context's sites after " < " left out) into file
 * and line; 0 when it is not one. */
static int split_where(const char *where, char *file, size_t len, long *line)
{
    const char *end = strstr(where, " < ");
    size_t n = end ? (size_t)(end - where) : strlen(where);
    const char *colon = NULL;
    for (size_t i = 0; i < n; i++)
        if (where[i] == ':')
            colon = where + i;
    if (!colon || colon == where || (size_t)(colon - where) >= len)
        return 0;
    char *e;
    *line = strtol(colon + 1, &e, 10);
    if (e != where + n || *line <= 0)
        return 0;
    memcpy(file, where, (size_t)(colon - where));
    file[colon - where] = 0;
    return 1;
}

/* Opens file as the run named it: absolute, or relative to the directory
 * the program ran in (run.json's cwd), or to the current one. */
static FILE *open_source(const profdb *pg, const char *file)
{
    FILE *s = NULL;
    const char *cwd = profdb_meta(pg, "cwd");
    if (file[0] != '/' && cwd) {
        char path[PATH_MAX * 2];
        snprintf(path, sizeof(path), "%s/%s", cwd, file);
        s = fopen(path, "r");
    }
    return s ? s : fopen(file, "r");
}

static int snippet(FILE *f, const profdb *pg, const char *where,
                   const char *what)
{
    char file[PATH_MAX], text[1024];
    long line;
    if (!split_where(where, file, sizeof(file), &line))
        return 0;
    FILE *s = open_source(pg, file);
    if (!s)
        return 0;
    fputs("<h3>", f);
    html_escape(f, where);
    fputs(" <span class=\"muted\">", f);
    html_escape(f, what);
    fputs("</span></h3><pre>", f);
    long at = 1;
    int cont = 0;
    while (fgets(text, sizeof(text), s) && at <= line + SNIPPET_CONTEXT) {
        size_t n = strlen(text);
        int whole = n && text[n - 1] == '\n';
        if (whole)
            text[n - 1] = 0;
        if (at >= line - SNIPPET_CONTEXT) {
            if (!cont)
                fprintf(f, at == line ? "<b>%5ld  " : "%5ld  ", at);
            html_escape(f, text);
            if (whole)
                fputs(at == line ? "</b>\n" : "\n", f);
        }
        cont = !whole;
        if (whole)
            at++;
    }
    fclose(s);
    fputs("</pre>", f);
    return 1;
}

/* The source around the leading rows and lines, as far as the files can
 * be read here; no section when none can. */
static void sources(FILE *out, const profdb *pg)
{
    int shown = 0;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f)
        return;
    for (size_t i = 1; i < pg->nrows && shown < SNIPPETS / 2; i++) {
        const profdb_row *r = &pg->rows[i];
        if (!(r->critical_percent > 0))
            break;
        char what[128];
        snprintf(what, sizeof(what), "%s, %.1f%% of the critical path",
                 r->directive, r->critical_percent);
        shown += snippet(f, pg, r->location, what);
    }
    for (size_t i = 0; i < pg->nlines && shown < SNIPPETS; i++) {
        char what[256];
        snprintf(what, sizeof(what), "in %.200s, %.1f%% of the critical path",
                 pg->lines[i].function, pg->lines[i].critical_percent);
        shown += snippet(f, pg, pg->lines[i].location, what);
    }
    fclose(f);
    if (shown)
        fprintf(out, "<h2>Source of the leading rows</h2>\n<section "
                     "id=\"sources\">%s</section>\n",
                buf);
    free(buf);
}

int html_report(const char *dir, const char *out, char *err, size_t errlen)
{
    profdb pg;
    memset(&pg, 0, sizeof(pg));
    char path[PATH_MAX + 32], tmp[PATH_MAX + 64];
    if (err && errlen)
        err[0] = 0;
    if (!out) {
        snprintf(path, sizeof(path), "%s/report.html", dir);
        out = path;
    }
    if (profdb_load(dir, &pg, err, errlen)) {
        profdb_free(&pg);
        return -1;
    }
    FILE *f = report_open_tmp(out, tmp, sizeof(tmp), err, errlen);
    if (!f) {
        profdb_free(&pg);
        return -1;
    }
    head(f, &pg);
    summary(f, &pg);
    composition(f, &pg);
    whatif_curves(f, &pg);
    speedup(f, &pg);
    profile_table(f, &pg);
    notes(f, &pg);
    html_grains(f, &pg);
    sources(f, &pg);
    fputs("<p class=\"muted\">Written by whatif ", f);
    html_escape(f, profdb_meta(&pg, "tool_version"));
    fputs(" from the run's profile.db.</p></body></html>\n", f);
    int rc = report_close_tmp(f, tmp, out, !ferror(f), err, errlen);
    profdb_free(&pg);
    return rc;
}

/* ---- whatif report ---- */

static void usage(FILE *f)
{
    fputs("usage: whatif report [-o FILE] [-q] DIR\n"
          "  writes one self-contained HTML page (DIR/report.html unless\n"
          "  -o) from the profile of run directory DIR: summary, critical\n"
          "  path, what-if curves, speedup bounds, the profile table and\n"
          "  the source of its leading rows; no network needed to view it.\n"
          "  DIR of an MPI run (rank-NNNNN/ inside): the ranks side by\n"
          "  side, each linked to its own report\n",
          f);
}

int cmd_report(int argc, char **argv)
{
    const char *out = NULL, *dir = NULL;
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "-q")) {
            quiet = 1;
        } else if (argv[i][0] == '-' || dir) {
            fprintf(stderr, "whatif report: unexpected argument '%s'\n",
                    argv[i]);
            usage(stderr);
            return 2;
        } else {
            dir = argv[i];
        }
    }
    if (!dir) {
        usage(stderr);
        return 2;
    }
    char err[PATH_MAX + 256] = "", path[PATH_MAX + 32];
    /* an MPI run's directory: the ranks' page */
    char **ranks;
    snprintf(path, sizeof(path), "%s/profile.db", dir);
    size_t nranks = access(path, F_OK) ? ranks_list(dir, &ranks) : 0;
    if (nranks) {
        ranks_free(ranks, nranks);
        if (ranks_report(dir, out, err, sizeof(err))) {
            fprintf(stderr, "whatif report: %s\n", err);
            return 1;
        }
    } else if (html_report(dir, out, err, sizeof(err))) {
        fprintf(stderr, "whatif report: %s\n", err);
        return 1;
    }
    if (!quiet) {
        snprintf(path, sizeof(path), "%s/report.html", dir);
        fprintf(stderr, "whatif: report in %s\n", out ? out : path);
    }
    return 0;
}
