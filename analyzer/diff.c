/* diff.c - `whatif diff A B`: two runs side by side (diff.h). */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "diff.h"
#include "html.h"
#include "profdb.h"
#include "report.h"

#include <uthash.h>

/* Groups larger than this (rows of A times rows of B) are paired in
 * order instead of aligned: the alignment's table is their product. */
#define ALIGN_MAX 4000000

/* How a row of A was paired with one of B. */
enum { MATCH_SAME, MATCH_MOVED, MATCH_ONLY_A, MATCH_ONLY_B };
static const char *const match_names[] = {"same", "moved", "only_a",
                                          "only_b"};

typedef struct pair {
    const profdb_row *a, *b; /* either may be NULL */
    int match;
} pair;

/* A location's parts: its file, line and what follows (a context). */
typedef struct where {
    char file[PATH_MAX];
    long line;
    const char *rest;
} where;

static int parse_where(const char *loc, where *w)
{
    const char *end = strstr(loc, " < ");
    size_t n = end ? (size_t)(end - loc) : strlen(loc);
    const char *colon = NULL;
    for (size_t i = 0; i < n; i++)
        if (loc[i] == ':')
            colon = loc + i;
    w->rest = end ? end : "";
    if (!colon || (size_t)(colon - loc) >= sizeof(w->file))
        return 0;
    char *e;
    w->line = strtol(colon + 1, &e, 10);
    if (e != loc + n || w->line <= 0)
        return 0;
    memcpy(w->file, loc, (size_t)(colon - loc));
    w->file[colon - loc] = 0;
    return 1;
}

/* Rows that may be the same code moved: one directive, one file, one
 * calling context. */
static int same_kind(const profdb_row *a, const profdb_row *b)
{
    where wa, wb;
    return !strcmp(a->directive, b->directive) && parse_where(a->location, &wa) &&
           parse_where(b->location, &wb) && !strcmp(wa.file, wb.file) &&
           !strcmp(wa.rest, wb.rest);
}

static long line_of(const profdb_row *r)
{
    where w;
    return parse_where(r->location, &w) ? w.line : 0;
}

/* Pairs the rows of A and B that no exact location matched and that lie
 * in one file with one directive, keeping their order (lines shift when
 * code is added above them): the most pairs, then the least total shift
 * from the median one (a monotone alignment, by dynamic programming). */
/* Whether a and b can be one construct: grain counts within 4x of each
 * other (a static loop of 2 chunks, 4 at twice the threads, is not the
 * dynamic one of 4000). */
static int compatible(const profdb_row *a, const profdb_row *b)
{
    double x = a->grains, y = b->grains;
    return x == y || (x > 0 && y > 0 && x <= 4 * y && y <= 4 * x);
}

/* What pairing a with b costs: its line shift's distance from the file's
 * usual one, grain counts and work that differ. */
static long pair_cost(const profdb_row *a, const profdb_row *b, long med)
{
    long c = labs(line_of(b) - line_of(a) - med);
    if (!compatible(a, b))
        c += 100000;
    else if (a->grains != b->grains)
        c += 100;
    if (a->work > 0 && b->work > 0)
        c += (long)(100 * fabs(log2(b->work / a->work)));
    return c;
}

static int cmp_long(const void *a, const void *b)
{
    long x = *(const long *)a, y = *(const long *)b;
    return (x > y) - (x < y);
}

static void align(const profdb_row **ua, size_t na, const profdb_row **ub,
                  size_t nb, pair *out, size_t *nout)
{
    if (na * nb > ALIGN_MAX) {
        for (size_t i = 0; i < na && i < nb; i++) {
            out[(*nout)++] = (pair){ua[i], ub[i], MATCH_MOVED};
            ua[i] = ub[i] = NULL;
        }
        return;
    }
    long *shift = malloc((na * nb + 1) * sizeof(*shift));
    size_t ns = 0;
    for (size_t i = 0; shift && i < na; i++)
        for (size_t j = 0; j < nb; j++)
            shift[ns++] = line_of(ub[j]) - line_of(ua[i]);
    long med = 0;
    if (ns) {
        qsort(shift, ns, sizeof(*shift), cmp_long);
        med = shift[ns / 2];
    }
    free(shift);
    /* best[i][j]: pairs and cost of aligning ua[i..] with ub[j..] */
    size_t w = nb + 1;
    long *pairs = calloc((na + 1) * w, sizeof(*pairs));
    long *cost = calloc((na + 1) * w, sizeof(*cost));
    if (!pairs || !cost) {
        free(pairs);
        free(cost);
        return;
    }
    for (size_t i = na + 1; i-- > 0;)
        for (size_t j = nb + 1; j-- > 0;) {
            if (i == na || j == nb)
                continue;
            long p = pairs[(i + 1) * w + j], c = cost[(i + 1) * w + j];
            if (pairs[i * w + j + 1] > p ||
                (pairs[i * w + j + 1] == p && cost[i * w + j + 1] < c)) {
                p = pairs[i * w + j + 1];
                c = cost[i * w + j + 1];
            }
            long d = pair_cost(ua[i], ub[j], med);
            long tp = pairs[(i + 1) * w + j + 1] + 1,
                 tc = cost[(i + 1) * w + j + 1] + d;
            if (tp > p || (tp == p && tc < c)) {
                p = tp;
                c = tc;
            }
            pairs[i * w + j] = p;
            cost[i * w + j] = c;
        }
    for (size_t i = 0, j = 0; i < na && j < nb;) {
        long d = pair_cost(ua[i], ub[j], med);
        if (pairs[i * w + j] == pairs[(i + 1) * w + j + 1] + 1 &&
            cost[i * w + j] == cost[(i + 1) * w + j + 1] + d) {
            out[(*nout)++] = (pair){ua[i], ub[j], MATCH_MOVED};
            ua[i] = ub[j] = NULL;
            i++;
            j++;
        } else if (pairs[i * w + j] == pairs[(i + 1) * w + j] &&
                   cost[i * w + j] == cost[(i + 1) * w + j]) {
            i++;
        } else {
            j++;
        }
    }
    free(pairs);
    free(cost);
}

typedef struct row_key {
    char *key;               /* "location\x1fdirective" */
    size_t index;            /* in B's rows */
    UT_hash_handle hh;
} row_key;

static char *key_of(const profdb_row *r)
{
    size_t n = strlen(r->location) + strlen(r->directive) + 2;
    char *k = malloc(n);
    if (k)
        snprintf(k, n, "%s\x1f%s", r->location, r->directive);
    return k;
}

static void keys_free(row_key *keys)
{
    row_key *e, *tmp;
    HASH_ITER(hh, keys, e, tmp) {
        HASH_DEL(keys, e);
        free(e->key);
        free(e);
    }
}

/* Every row of A and B once: the program, then exact locations, then
 * rows moved within their file, then those of one run only. */
static pair *match_rows(const profdb *A, const profdb *B, size_t *npairs)
{
    size_t cap = A->nrows + B->nrows + 1, n = 0;
    pair *out = calloc(cap, sizeof(*out));
    const profdb_row **ua = calloc(A->nrows + 1, sizeof(*ua));
    const profdb_row **ub = calloc(B->nrows + 1, sizeof(*ub));
    if (!out || !ua || !ub) {
        free(out);
        free(ua);
        free(ub);
        return NULL;
    }
    out[n++] = (pair){&A->rows[0], &B->rows[0], MATCH_SAME};
    row_key *keys = NULL;
    for (size_t j = 1; j < B->nrows; j++) {
        ub[j] = &B->rows[j];
        row_key *e = calloc(1, sizeof(*e)), *had;
        if (!e || !(e->key = key_of(ub[j]))) {
            free(e);
            continue; /* out of memory: the row is paired below, or alone */
        }
        e->index = j;
        HASH_FIND_STR(keys, e->key, had);
        if (had) { /* rows are unique per location: never in a profile */
            free(e->key);
            free(e);
            continue;
        }
        HASH_ADD_KEYPTR(hh, keys, e->key, strlen(e->key), e);
    }
    for (size_t i = 1; i < A->nrows; i++) {
        ua[i] = &A->rows[i];
        char *k = key_of(ua[i]);
        row_key *e = NULL;
        if (k)
            HASH_FIND_STR(keys, k, e);
        free(k);
        if (e && ub[e->index] && compatible(ua[i], ub[e->index])) {
            out[n++] = (pair){ua[i], ub[e->index], MATCH_SAME};
            ua[i] = ub[e->index] = NULL;
        }
    }
    keys_free(keys);
    /* the rest, group by group, in line order */
    const profdb_row **ga = calloc(A->nrows + 1, sizeof(*ga));
    const profdb_row **gb = calloc(B->nrows + 1, sizeof(*gb));
    for (size_t i = 1; ga && gb && i < A->nrows; i++) {
        if (!ua[i])
            continue;
        size_t na = 0, nb = 0;
        for (size_t k = i; k < A->nrows; k++)
            if (ua[k] && same_kind(ua[i], ua[k]))
                ga[na++] = ua[k];
        for (size_t k = 1; k < B->nrows; k++)
            if (ub[k] && same_kind(ua[i], ub[k]))
                gb[nb++] = ub[k];
        for (size_t x = 1; x < na; x++) /* by line */
            for (size_t y = x; y > 0 && line_of(ga[y - 1]) > line_of(ga[y]);
                 y--) {
                const profdb_row *t = ga[y];
                ga[y] = ga[y - 1];
                ga[y - 1] = t;
            }
        for (size_t x = 1; x < nb; x++)
            for (size_t y = x; y > 0 && line_of(gb[y - 1]) > line_of(gb[y]);
                 y--) {
                const profdb_row *t = gb[y];
                gb[y] = gb[y - 1];
                gb[y - 1] = t;
            }
        size_t before = n;
        align(ga, na, gb, nb, out, &n);
        for (size_t k = before; k < n; k++) {
            ua[out[k].a - A->rows] = NULL;
            ub[out[k].b - B->rows] = NULL;
        }
        /* what stayed unpaired in this group: only in A */
        for (size_t k = 0; k < na; k++)
            if (ga[k]) {
                out[n++] = (pair){ga[k], NULL, MATCH_ONLY_A};
                ua[ga[k] - A->rows] = NULL;
            }
    }
    for (size_t i = 1; i < A->nrows; i++)
        if (ua[i])
            out[n++] = (pair){ua[i], NULL, MATCH_ONLY_A};
    for (size_t j = 1; j < B->nrows; j++)
        if (ub[j])
            out[n++] = (pair){NULL, ub[j], MATCH_ONLY_B};
    free(ga);
    free(gb);
    free(ua);
    free(ub);
    *npairs = n;
    return out;
}

/* ---- The what-if check ---- */

/* A's program parallelism in curve c at factor k: the span interpolated
 * linearly in 1/k between the two factors around k (a span is a
 * maximum of terms a + b/k: this errs low by at most the change of
 * critical path between them). */
static double predict_at(const profdb_curve *c, double work, double k)
{
    for (size_t i = 0; i + 1 < c->n; i++) {
        double f1 = c->x[i], f2 = c->x[i + 1];
        if (k < f1 || (k > f2 && isfinite(f2)))
            continue;
        double s1 = work / c->y[i], s2 = work / c->y[i + 1];
        double u1 = 1 / f1, u2 = isinf(f2) ? 0 : 1 / f2, u = 1 / k;
        double s = u1 == u2 ? s1 : s1 + (s2 - s1) * (u1 - u) / (u1 - u2);
        return work / s;
    }
    return NAN;
}

typedef struct check {
    const profdb_row *region;   /* A's region */
    const profdb_curve *curve;  /* its scenario */
    const profdb_row *code;     /* B's new construct that replaced it */
    double factor, predicted, achieved;
    /* the program's own serial code (outside directives and regions) on
     * the critical path in A and B, and the prediction with their
     * difference taken out: the model keeps A's, the machine may not */
    double serial_a, serial_b;
    /* B's code's work over A's region's: the same computation costs more
     * when it runs beside others (shared cores, caches, memory bandwidth),
     * which the model, keeping A's work, cannot know */
    double inflation;
    double adjusted; /* the prediction with both taken out */
} check;

static double own_serial(const profdb *r)
{
    double s = r->rows[0].critical_work;
    for (size_t i = 1; i < r->nrows; i++)
        if (!strcmp(r->rows[i].directive, "region"))
            s -= r->rows[i].critical_work;
    return s;
}

/* For each what-if region of A: the construct of B, new in B, in the same
 * file and nearest to it (a loop or taskloop first), taken as the code B
 * parallelized; its parallelism is the factor achieved.  Returns how many
 * checks. */
static size_t whatif_checks(const profdb *A, const profdb *B,
                            const pair *pairs, size_t np, check *out,
                            size_t cap)
{
    size_t n = 0, regions = 0;
    for (size_t i = 1; i < A->nrows; i++)
        regions += !strcmp(A->rows[i].directive, "region");
    for (size_t i = 1; i < A->nrows && n < cap; i++) {
        const profdb_row *r = &A->rows[i];
        where wr;
        if (strcmp(r->directive, "region") || !parse_where(r->location, &wr))
            continue;
        const profdb_curve *c = NULL;
        for (size_t k = 0; k < A->ncurves; k++)
            if (!A->curves[k].directive &&
                !strcmp(A->curves[k].name, r->location))
                c = &A->curves[k];
        /* on the fly, one scenario holds every region: this one's alone
         * when it is the only region */
        for (size_t k = 0; !c && regions == 1 && k < A->ncurves; k++)
            if (!A->curves[k].directive && !strcmp(A->curves[k].name, "all"))
                c = &A->curves[k];
        const profdb_row *best = NULL;
        long bestd = LONG_MAX;
        for (size_t k = 0; k < np; k++) {
            const profdb_row *b = pairs[k].b;
            where wb;
            if (pairs[k].match != MATCH_ONLY_B || !parse_where(b->location, &wb) ||
                strcmp(wb.file, wr.file))
                continue;
            int loopish = !strcmp(b->directive, "loop") ||
                          !strcmp(b->directive, "taskloop");
            long d = labs(wb.line - wr.line) + (loopish ? 0 : 1000000);
            if (d < bestd) {
                bestd = d;
                best = b;
            }
        }
        if (!c || !best || !(best->parallelism > 1))
            continue;
        check *ck = &out[n++];
        ck->region = r;
        ck->curve = c;
        ck->code = best;
        ck->factor = best->parallelism;
        ck->predicted = predict_at(c, A->rows[0].work, ck->factor);
        ck->achieved = B->rows[0].parallelism;
        ck->serial_a = own_serial(A);
        ck->serial_b = own_serial(B);
        ck->inflation = r->work > 0 ? best->work / r->work : NAN;
        /* A's program with B's serial code in place of its own, and the
         * region's work as B's code did it (on the critical path at
         * 1/factor, as the model puts the region there) */
        double extra = isfinite(ck->inflation) ? (ck->inflation - 1) * r->work
                                               : 0;
        double span = A->rows[0].work / ck->predicted - ck->serial_a +
                      ck->serial_b + extra / ck->factor,
               work = A->rows[0].work - ck->serial_a + ck->serial_b + extra;
        ck->adjusted = span > 0 ? work / span : NAN;
    }
    return n;
}

/* ---- Output ---- */

static double change(double a, double b)
{
    return a > 0 ? 100 * (b - a) / a : NAN;
}

static void csv_num(FILE *f, double v, int decimals)
{
    fputc(',', f);
    if (isnan(v))
        return;
    if (isinf(v))
        fputs("inf", f);
    else
        fprintf(f, "%.*f", decimals, v);
}

static int write_csv(const char *path, const pair *p, size_t n, char *err,
                     size_t errlen)
{
    char tmp[PATH_MAX + 64];
    FILE *f = report_open_tmp(path, tmp, sizeof(tmp), err, errlen);
    if (!f)
        return -1;
    fputs("location_a,location_b,directive,match,work_a,work_b,"
          "work_change_percent,span_a,span_b,span_change_percent,"
          "parallelism_a,parallelism_b,critical_percent_a,"
          "critical_percent_b\n",
          f);
    for (size_t i = 0; i < n; i++) {
        const profdb_row *a = p[i].a, *b = p[i].b;
        report_csv_text(f, a ? a->location : "");
        fputc(',', f);
        report_csv_text(f, b ? b->location : "");
        fputc(',', f);
        report_csv_text(f, a ? a->directive : b->directive);
        fprintf(f, ",%s", match_names[p[i].match]);
        csv_num(f, a ? a->work : NAN, 0);
        csv_num(f, b ? b->work : NAN, 0);
        csv_num(f, a && b ? change(a->work, b->work) : NAN, 1);
        csv_num(f, a ? a->span : NAN, 0);
        csv_num(f, b ? b->span : NAN, 0);
        csv_num(f, a && b ? change(a->span, b->span) : NAN, 1);
        csv_num(f, a ? a->parallelism : NAN, 3);
        csv_num(f, b ? b->parallelism : NAN, 3);
        csv_num(f, a ? a->critical_percent : NAN, 3);
        csv_num(f, b ? b->critical_percent : NAN, 3);
        fputc('\n', f);
    }
    return report_close_tmp(f, tmp, path, !ferror(f), err, errlen);
}

static int write_html(const char *path, const char *dir_a, const char *dir_b,
                      const pair *p, size_t n, const check *ck, size_t nck,
                      char *err, size_t errlen)
{
    char tmp[PATH_MAX + 64];
    FILE *f = report_open_tmp(path, tmp, sizeof(tmp), err, errlen);
    if (!f)
        return -1;
    html_begin(f, "diff");
    fputs("<h1>whatif diff</h1><p>A: <code>", f);
    html_escape(f, dir_a);
    fputs("</code>, B: <code>", f);
    html_escape(f, dir_b);
    fputs("</code></p>", f);
    if (nck) {
        fputs("<h2>What-if prediction against the result</h2><table "
              "id=\"diff-checks\"><tr><th class=\"t\">A's region</th>"
              "<th class=\"t\">B's code</th><th>factor achieved</th>"
              "<th>predicted</th><th>work B/A</th>"
              "<th>predicted with B's serial code and work</th>"
              "<th>achieved</th></tr>",
              f);
        for (size_t i = 0; i < nck; i++) {
            fputs("<tr><td class=\"t\">", f);
            html_escape(f, ck[i].region->location);
            fputs("</td><td class=\"t\">", f);
            html_escape(f, ck[i].code->location);
            fputs(" (", f);
            html_escape(f, ck[i].code->directive);
            fputs(")</td>", f);
            html_num_cell(f, ck[i].factor, 3);
            html_num_cell(f, ck[i].predicted, 3);
            html_num_cell(f, ck[i].inflation, 3);
            html_num_cell(f, ck[i].adjusted, 3);
            html_num_cell(f, ck[i].achieved, 3);
            fputs("</tr>", f);
        }
        fputs("</table><p class=\"muted\">Predicted: A's program "
              "parallelism with the region sped up by the factor B's code "
              "achieved (its parallelism), interpolated between A's "
              "factors. The model keeps A's work as it was. Work B/A: "
              "the work of B's code over that of A's region; above 1 when "
              "the same computation costs more run in parallel (shared "
              "cores, caches, memory bandwidth: work inflation), which "
              "raises B's parallelism without making it faster. The next "
              "column puts in B's own serial code on the critical path "
              "and B's work for the region instead of A's.</p>",
              f);
    }
    fputs("<h2>Rows</h2><table id=\"diff-rows\"><tr><th class=\"t\">A</th>"
          "<th class=\"t\">B</th><th class=\"d\">directive</th>"
          "<th class=\"d\">match</th><th>work A</th><th>work B</th>"
          "<th>span A</th><th>span B</th><th>parallelism A</th>"
          "<th>parallelism B</th><th>critical% A</th><th>critical% B</th>"
          "</tr>",
          f);
    for (size_t i = 0; i < n; i++) {
        const profdb_row *a = p[i].a, *b = p[i].b;
        fputs("<tr><td class=\"t\">", f);
        html_escape(f, a ? a->location : "-");
        fputs("</td><td class=\"t\">", f);
        html_escape(f, b ? b->location : "-");
        fputs("</td><td class=\"d\">", f);
        html_escape(f, a ? a->directive : b->directive);
        fprintf(f, "</td><td class=\"d\">%s</td>", match_names[p[i].match]);
        html_num_cell(f, a ? a->work : NAN, 0);
        html_num_cell(f, b ? b->work : NAN, 0);
        html_num_cell(f, a ? a->span : NAN, 0);
        html_num_cell(f, b ? b->span : NAN, 0);
        html_num_cell(f, a ? a->parallelism : NAN, 3);
        html_num_cell(f, b ? b->parallelism : NAN, 3);
        html_num_cell(f, a ? a->critical_percent : NAN, 3);
        html_num_cell(f, b ? b->critical_percent : NAN, 3);
        fputs("</tr>", f);
    }
    fputs("</table><p class=\"muted\">Rows are paired by location; rows "
          "whose line changed are paired within their file and directive, "
          "in line order (match <code>moved</code>).</p></body></html>\n",
          f);
    return report_close_tmp(f, tmp, path, !ferror(f), err, errlen);
}

static void summary(const profdb *A, const profdb *B, const pair *p,
                    size_t n, const check *ck, size_t nck)
{
    const profdb_row *a = &A->rows[0], *b = &B->rows[0];
    fprintf(stderr, "whatif diff: program parallelism %.3f -> %.3f, work "
                    "%+.1f%%, span %+.1f%%\n",
            a->parallelism, b->parallelism, change(a->work, b->work),
            change(a->span, b->span));
    const char *ma = profdb_meta(A, "metric"), *mb = profdb_meta(B, "metric");
    if (ma && mb && strcmp(ma, mb))
        fprintf(stderr, "whatif diff: note: A measured %s, B %s: their work "
                        "is not comparable, their parallelism is\n",
                ma, mb);
    int shown = 0;
    char v[4][32];
    for (size_t i = 1; i < n && shown < 10; i++) {
        const profdb_row *x = p[i].a, *y = p[i].b;
        const profdb_row *any = x ? x : y;
        if (!strcmp(any->directive, "region"))
            continue;
        if (!shown++)
            fprintf(stderr, "%-40s %-9s %-6s %9s %9s %8s %8s\n", "location",
                    "directive", "match", "par. A", "par. B", "crit% A",
                    "crit% B");
        double d[4] = {x ? x->parallelism : NAN, y ? y->parallelism : NAN,
                       x ? x->critical_percent : NAN,
                       y ? y->critical_percent : NAN};
        for (int k = 0; k < 4; k++)
            snprintf(v[k], sizeof(v[k]), isnan(d[k]) ? "-" : "%.3f", d[k]);
        fprintf(stderr, "%-40s %-9s %-6s %9s %9s %8s %8s\n",
                y ? y->location : x->location, any->directive,
                match_names[p[i].match], v[0], v[1], v[2], v[3]);
    }
    for (size_t i = 0; i < nck; i++) {
        fprintf(stderr, "whatif diff: A's region %s sped up %.3fx (the "
                        "parallelism of B's %s %s) predicted program "
                        "parallelism %.3f; B achieved %.3f\n",
                ck[i].region->location, ck[i].factor, ck[i].code->directive,
                ck[i].code->location, ck[i].predicted, ck[i].achieved);
        double d = change(ck[i].serial_a, ck[i].serial_b);
        double w = 100 * (ck[i].inflation - 1);
        int serial_moved = fabs(d) >= 5, work_moved = fabs(w) >= 5;
        if (serial_moved)
            fprintf(stderr, "whatif diff: the program's own serial code on "
                            "the critical path changed by %+.1f%% from A to "
                            "B (the prediction keeps A's)\n", d);
        if (work_moved)
            fprintf(stderr, "whatif diff: B's %s did %+.1f%% work against "
                            "A's region (%s; the prediction keeps A's "
                            "work)\n",
                    ck[i].code->directive, w,
                    w > 0 ? "work inflation: the same code costs more run "
                            "in parallel, which raises parallelism, not "
                            "speed"
                          : "less work: caches or memory favour B");
        if (serial_moved || work_moved)
            fprintf(stderr, "whatif diff: with %s, the prediction is %.3f\n",
                    serial_moved && work_moved ? "both changes"
                                               : "that change",
                    ck[i].adjusted);
    }
}

int diff_runs(const char *dir_a, const char *dir_b, const char *outdir,
              int quiet, char *err, size_t errlen)
{
    profdb A, B;
    memset(&A, 0, sizeof(A));
    memset(&B, 0, sizeof(B));
    int rc = -1;
    pair *p = NULL;
    size_t n = 0;
    check ck[16];
    if (profdb_load(dir_a, &A, err, errlen) ||
        profdb_load(dir_b, &B, err, errlen))
        goto out;
    if (!(p = match_rows(&A, &B, &n))) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    size_t nck = whatif_checks(&A, &B, p, n, ck, 16);
    if (mkdir(outdir, 0777) && errno != EEXIST) {
        snprintf(err, errlen, "%s: %s", outdir, strerror(errno));
        goto out;
    }
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/diff.csv", outdir);
    if (write_csv(path, p, n, err, errlen))
        goto out;
    snprintf(path, sizeof(path), "%s/diff.html", outdir);
    if (write_html(path, dir_a, dir_b, p, n, ck, nck, err, errlen))
        goto out;
    if (!quiet) {
        summary(&A, &B, p, n, ck, nck);
        fprintf(stderr, "whatif diff: %s/diff.csv, %s/diff.html\n", outdir,
                outdir);
    }
    rc = 0;
out:
    free(p);
    profdb_free(&A);
    profdb_free(&B);
    return rc;
}

static void usage(FILE *f)
{
    fputs("usage: whatif diff [-o DIR] [-q] A B\n"
          "\n"
          "Two runs side by side (before and after a change): A's and B's\n"
          "rows paired by location, and by order within their file and\n"
          "directive when lines moved; work, span, parallelism and share of\n"
          "the critical path of each, their changes, and for each what-if\n"
          "region of A that B parallelized, the parallelism A predicted at\n"
          "the factor B achieved next to the one B reached.  Writes\n"
          "DIR/diff.csv and DIR/diff.html (DIR: B unless -o); the summary\n"
          "goes to stderr.\n",
          f);
}

int cmd_diff(int argc, char **argv)
{
    const char *out = NULL, *dirs[2] = {NULL, NULL};
    int quiet = 0, nd = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "-q")) {
            quiet = 1;
        } else if (argv[i][0] == '-' || nd == 2) {
            fprintf(stderr, "whatif diff: unexpected argument '%s' (see "
                            "whatif diff --help)\n", argv[i]);
            return 2;
        } else {
            dirs[nd++] = argv[i];
        }
    }
    if (nd != 2) {
        fprintf(stderr, "whatif diff: two run directories, A and B (see "
                        "whatif diff --help)\n");
        return 2;
    }
    char err[PATH_MAX + 256] = "";
    if (diff_runs(dirs[0], dirs[1], out ? out : dirs[1], quiet, err,
                  sizeof(err))) {
        fprintf(stderr, "whatif diff: %s\n", err);
        return 1;
    }
    return 0;
}
