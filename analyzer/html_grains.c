/* html_grains.c - the report's grain section: the aggregated grain graph
 * that `whatif grains` stored in the run's profile.db (html.h), colored by
 * a metric the reader picks, and the grains and loop instances it flags.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "html.h"
#include "profdb.h"

#define ROW_MAX 24    /* groups drawn side by side at one depth */
#define DEPTH_MAX 60  /* depths drawn */
#define WIDTH 960.0
#define ROW_H 56.0
#define FLAG_ROWS 20

typedef struct placed {
    double x, y;
    int drawn;
    int labeled;  /* few enough in its row for a label */
} placed;

/* Where each group goes: one row per depth, in location order (so that
 * rows of the same locations line up). */
static size_t place(const profdb *pg, placed *at, size_t *hidden)
{
    size_t rows = 0;
    *hidden = 0;
    for (size_t i = 0; i < pg->ngroups;) {
        size_t j = i;
        while (j < pg->ngroups && pg->groups[j].depth == pg->groups[i].depth)
            j++;
        size_t n = j - i, shown = n < ROW_MAX ? n : ROW_MAX;
        for (size_t k = 0; k < n; k++) {
            at[i + k].drawn = rows < DEPTH_MAX && k < shown;
            at[i + k].x = WIDTH * (double)(k + 1) / (double)(shown + 1);
            at[i + k].y = ROW_H * (double)(rows + 1) + 24;
            at[i + k].labeled = shown <= 8;
            *hidden += !at[i + k].drawn;
        }
        rows++;
        i = j;
    }
    return rows < DEPTH_MAX ? rows : DEPTH_MAX;
}

static long find_group(const profdb *pg, double id)
{
    for (size_t i = 0; i < pg->ngroups; i++)
        if (pg->groups[i].id == id)
            return (long)i;
    return -1;
}

static void graph(FILE *f, const profdb *pg)
{
    placed *at = calloc(pg->ngroups, sizeof(*at));
    if (!at)
        return;
    size_t hidden, rows = place(pg, at, &hidden);
    double height = ROW_H * (double)(rows + 1) + 24;
    fputs("<p><label>Color by <select id=\"grain-metric\">"
          "<option value=\"median\">median grain work</option>"
          "<option value=\"work\">total work</option>"
          "<option value=\"low\">share of tasks below parallel benefit 1"
          "</option><option value=\"grains\">grains</option></select>"
          "</label> <span class=\"muted\">blue: least, red: most (log "
          "scale); circle area: grains</span></p>",
          f);
    fprintf(f, "<svg id=\"grain-graph\" viewBox=\"0 0 %.0f %.0f\" "
               "width=\"100%%\" role=\"img\"><title>aggregated grain graph"
               "</title>",
            WIDTH, height);
    double top_x = WIDTH / 2, top_y = 24;
    /* edges first, under the nodes */
    for (size_t i = 0; i < pg->ngedges; i++) {
        const profdb_grain_edge *e = &pg->gedges[i];
        long to = find_group(pg, e->to);
        long from = e->from > 0 ? find_group(pg, e->from) : -1;
        if (to < 0 || !at[to].drawn || (e->from > 0 && (from < 0 ||
                                                        !at[from].drawn)))
            continue;
        double x1 = from < 0 ? top_x : at[from].x,
               y1 = from < 0 ? top_y : at[from].y;
        fprintf(f, "<line class=\"grain-edge\" x1=\"%.1f\" y1=\"%.1f\" "
                   "x2=\"%.1f\" y2=\"%.1f\" stroke=\"#999\" "
                   "stroke-width=\"%.1f\"><title>%.0f grains created"
                   "</title></line>",
                x1, y1, at[to].x, at[to].y, 1 + log10(1 + e->grains) / 2,
                e->grains);
    }
    fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"80\" height=\"20\" "
               "fill=\"#eee\" stroke=\"#666\"/><text x=\"%.1f\" y=\"%.1f\" "
               "text-anchor=\"middle\" font-size=\"12\">program</text>",
            top_x - 40, top_y - 10, top_x, top_y + 4);
    for (size_t i = 0; i < pg->ngroups; i++) {
        const profdb_grain_group *g = &pg->groups[i];
        if (!at[i].drawn)
            continue;
        double r = fmin(4 + 4 * log10(1 + g->grains), 22);
        double low = g->grains > 0 ? g->low_benefit / g->grains : 0;
        fprintf(f, "<circle class=\"grain-group\" cx=\"%.1f\" cy=\"%.1f\" "
                   "r=\"%.1f\" data-median=\"%.0f\" data-work=\"%.0f\" "
                   "data-low=\"%.4f\" data-grains=\"%.0f\" stroke=\"#333\" "
                   "fill=\"#ccc\"><title>",
                at[i].x, at[i].y, r, g->median_work, g->work, low, g->grains);
        html_escape(f, g->directive);
        fputc(' ', f);
        html_escape(f, g->location);
        fprintf(f, ", depth %.0f: %.0f grains, work %.0f (min %.0f, median "
                   "%.0f, max %.0f); %.0f below parallel benefit 1</title>"
                   "</circle>",
                g->depth, g->grains, g->work, g->min_work, g->median_work,
                g->max_work, g->low_benefit);
        if (at[i].labeled) {
            const char *base = strrchr(g->location, '/');
            fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" "
                       "fill=\"#555\">",
                    at[i].x + r + 3, at[i].y + 3);
            html_escape(f, base ? base + 1 : g->location);
            fputs("</text>", f);
        }
    }
    fputs("</svg>", f);
    if (hidden)
        fprintf(f, "<p class=\"muted\">%zu groups not drawn (more than %d at "
                   "one depth, or deeper than %d): grain_groups.csv and "
                   "grains.graphml hold them all.</p>",
                hidden, ROW_MAX, DEPTH_MAX);
    /* color by the chosen metric, on a log scale between the extremes */
    fputs("<script>(function(){var s=document.getElementById('grain-metric');"
          "function paint(){var k=s.value,c=document.querySelectorAll("
          "'#grain-graph .grain-group'),lo=Infinity,hi=-Infinity,v=[];"
          "c.forEach(function(e,i){var x=Math.log10(1+parseFloat(e.dataset[k])"
          "*(k==='low'?100:1));v[i]=x;lo=Math.min(lo,x);hi=Math.max(hi,x);});"
          "c.forEach(function(e,i){var t=hi>lo?(v[i]-lo)/(hi-lo):0;"
          "e.setAttribute('fill','rgb('+Math.round(70+180*t)+','+"
          "Math.round(120-60*t)+','+Math.round(220-170*t)+')');});}"
          "s.addEventListener('change',paint);paint();})();</script>",
          f);
    free(at);
}

static int by_low(const void *a, const void *b)
{
    const profdb_grain_group *x = *(const profdb_grain_group *const *)a,
                             *y = *(const profdb_grain_group *const *)b;
    return (y->low_benefit > x->low_benefit) -
           (y->low_benefit < x->low_benefit);
}

static void flagged(FILE *f, const profdb *pg)
{
    const profdb_grain_group **low = calloc(pg->ngroups + 1, sizeof(*low));
    size_t n = 0;
    for (size_t i = 0; low && i < pg->ngroups; i++)
        if (pg->groups[i].low_benefit > 0)
            low[n++] = &pg->groups[i];
    if (n) {
        qsort(low, n, sizeof(*low), by_low);
        fputs("<h3>Tasks that cost more to create than they compute</h3>"
              "<table id=\"grain-flagged\"><tr><th class=\"t\">location</th>"
              "<th class=\"d\">directive</th><th>depth</th><th>grains</th>"
              "<th>below benefit 1</th><th>median work</th></tr>",
              f);
        for (size_t i = 0; i < n && i < FLAG_ROWS; i++) {
            fputs("<tr><td class=\"t\">", f);
            html_escape(f, low[i]->location);
            fputs("</td><td class=\"d\">", f);
            html_escape(f, low[i]->directive);
            fputs("</td>", f);
            html_num_cell(f, low[i]->depth, 0);
            html_num_cell(f, low[i]->grains, 0);
            html_num_cell(f, low[i]->low_benefit, 0);
            html_num_cell(f, low[i]->median_work, 0);
            fputs("</tr>", f);
        }
        fputs("</table><p class=\"muted\">Parallel benefit: a task's own "
              "work over what creating one cost in this run "
              "(task_create_cost). Below 1, running it serially (a cutoff, "
              "<code>final</code>, <code>if</code>, a coarser grainsize) "
              "saves time.</p>",
              f);
    }
    free(low);
    size_t shown = 0;
    for (size_t i = 0; i < pg->ninstances && shown < FLAG_ROWS; i++) {
        const profdb_grain_instance *in = &pg->instances[i];
        if (!(in->load_balance >= 1.1) || in->threads < 2)
            continue;
        if (!shown++)
            fputs("<h3>Least balanced loop instances</h3><table "
                  "id=\"grain-imbalance\"><tr><th class=\"t\">location</th>"
                  "<th>instance</th><th>chunks</th><th>threads</th>"
                  "<th>work</th><th>load balance</th></tr>",
                  f);
        fputs("<tr><td class=\"t\">", f);
        html_escape(f, in->location);
        fputs("</td>", f);
        html_num_cell(f, in->id, 0);
        html_num_cell(f, in->chunks, 0);
        html_num_cell(f, in->threads, 0);
        html_num_cell(f, in->work, 0);
        html_num_cell(f, in->load_balance, 3);
        fputs("</tr>", f);
    }
    if (shown)
        fputs("</table><p class=\"muted\">Load balance: the most work one "
              "thread did in the instance over the mean of its threads; 1 "
              "is even.</p>",
              f);
}

#define TL_H 180.0   /* the timeline chart's plot height */

/* Grains running at once over time (whatif grains' parallelism.csv): the
 * mean of each bin as a filled step, its maximum as a line, against the
 * threads and the available parallelism. */
static void timeline(FILE *f, const profdb *pg)
{
    size_t n = pg->ntimeline;
    if (!n)
        return;
    double t0 = pg->timeline[0].start_ns, t1 = pg->timeline[n - 1].end_ns;
    double most = 0, busy = 0;
    for (size_t i = 0; i < n; i++) {
        if (pg->timeline[i].max_running > most)
            most = pg->timeline[i].max_running;
        busy += pg->timeline[i].mean_running *
                (pg->timeline[i].end_ns - pg->timeline[i].start_ns);
    }
    const char *th = profdb_meta(pg, "threads");
    double threads = th ? strtod(th, NULL) : 0;
    double avail = pg->nrows ? pg->rows[0].parallelism : 0;
    double top = most > threads ? most : threads; /* the y scale */
    if (top < 1)
        top = 1;
    double ymax = top * 1.15, left = 40, w = WIDTH - left - 10;
    double span = t1 > t0 ? t1 - t0 : 1;
#define TX(t) (left + w * ((t) - t0) / span)
#define TY(v) (10 + TL_H - TL_H * (v) / ymax)
    fprintf(f, "<h3>Grains running at once</h3><p>From the grains' start "
               "and end times: on average %.2f running from the first "
               "grain's start to the last one's end (%.3f ms), at most "
               "%.0f; available parallelism (work / span) %.2f.</p>",
            busy / span, span / 1e6, most, avail);
    fprintf(f, "<svg id=\"grain-timeline\" width=\"%.0f\" height=\"%.0f\" "
               "role=\"img\" aria-label=\"grains running at once over "
               "time\">",
            WIDTH, TL_H + 40);
    fputs("<path class=\"tl-mean\" fill=\"#9ecae1\" stroke=\"#3182bd\" d=\"",
          f);
    fprintf(f, "M%.1f %.1f", TX(t0), TY(0));
    for (size_t i = 0; i < n; i++) {
        const profdb_grain_bin *b = &pg->timeline[i];
        fprintf(f, "L%.1f %.1fL%.1f %.1f", TX(b->start_ns),
                TY(b->mean_running), TX(b->end_ns), TY(b->mean_running));
    }
    fprintf(f, "L%.1f %.1fZ\"/>", TX(t1), TY(0));
    fputs("<path class=\"tl-max\" fill=\"none\" stroke=\"#de2d26\" "
          "stroke-width=\"0.8\" d=\"",
          f);
    for (size_t i = 0; i < n; i++) {
        const profdb_grain_bin *b = &pg->timeline[i];
        fprintf(f, "%c%.1f %.1fL%.1f %.1f", i ? 'L' : 'M', TX(b->start_ns),
                TY(b->max_running), TX(b->end_ns), TY(b->max_running));
    }
    fputs("\"/>", f);
    if (threads > 0)
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                   "stroke=\"#555\" stroke-dasharray=\"4 3\"/><text x=\"%.1f\" "
                   "y=\"%.1f\" font-size=\"11\">%.0f threads</text>",
                left, left + w, TY(threads), TY(threads), left + 4,
                TY(threads) - 3, threads);
    if (avail > 0 && avail <= ymax)
        fprintf(f, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\" "
                   "stroke=\"#31a354\" stroke-dasharray=\"2 2\"/><text "
                   "x=\"%.1f\" y=\"%.1f\" font-size=\"11\">available "
                   "%.2f</text>",
                left, left + w, TY(avail), TY(avail), left + w - 90,
                TY(avail) - 3, avail);
    fprintf(f, "<text x=\"2\" y=\"%.1f\" font-size=\"11\">0</text><text "
               "x=\"2\" y=\"%.1f\" font-size=\"11\">%.0f</text><text "
               "x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%.3f ms</text><text "
               "x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">"
               "%.3f ms</text></svg>",
            TY(0), TY(top) + 4, top, left, TL_H + 30, t0 / 1e6, left + w,
            TL_H + 30, t1 / 1e6);
#undef TX
#undef TY
    fputs("<p class=\"muted\">Blue: grains running, averaged over each of "
          "the chart's bins; red: the most at once in the bin. A thread "
          "running a grain inside another counts once; time is wall-clock "
          "from the program's start.</p>",
          f);
}

void html_grains(FILE *f, const profdb *pg)
{
    if (!pg->ngroups)
        return;
    double grains = 0;
    for (size_t i = 0; i < pg->ngroups; i++)
        grains += pg->groups[i].grains;
    fprintf(f, "<h2>Grains</h2>\n<section id=\"grains\"><p>%.0f grains "
               "(tasks and loop chunks) in %zu groups: the grains of one "
               "location at one depth of creation, from <code>whatif grains"
               "</code> (docs/grains.md). An edge: grains of one group "
               "created grains of the other.</p>",
            grains, pg->ngroups);
    graph(f, pg);
    timeline(f, pg);
    flagged(f, pg);
    fputs("</section>\n", f);
}
