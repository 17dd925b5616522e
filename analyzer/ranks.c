/* ranks.c - the ranks of an MPI program side by side (ranks.h). */
#include "ranks.h"

#include <dirent.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "html.h"
#include "profdb.h"
#include "report.h"

static int cmp_path(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

size_t ranks_list(const char *dir, char ***paths)
{
    *paths = NULL;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    size_t n = 0, cap = 0;
    char **v = NULL;
    struct dirent *e;
    while ((e = readdir(d))) {
        char *end;
        if (strncmp(e->d_name, "rank-", 5) || !e->d_name[5])
            continue;
        strtol(e->d_name + 5, &end, 10);
        if (*end)
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            char **t = realloc(v, cap * sizeof(*v));
            if (!t)
                break;
            v = t;
        }
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        if (!(v[n] = malloc(len)))
            break;
        snprintf(v[n++], len, "%s/%s", dir, e->d_name);
    }
    closedir(d);
    if (n) /* rank-NNNNN: five digits and more sort as text up to 99999 */
        qsort(v, n, sizeof(*v), cmp_path);
    *paths = v;
    return n;
}

void ranks_free(char **paths, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
}

/* ---- One location across the ranks ---- */

typedef struct loc_ranks {
    char *key;          /* "location\x1fdirective" */
    const char *location, *directive;
    double *work, *par; /* by rank index; NAN where the rank has none */
    double span_max;
    size_t span_max_rank, present;
    double crit_sum;    /* critical share summed over the ranks */
    UT_hash_handle hh;
} loc_ranks;

typedef struct rank_set {
    profdb *db;
    size_t n;
    long *rank;         /* each one's rank number */
    loc_ranks *locs;
} rank_set;

typedef struct stat3 {
    double min, med, max, mean;
} stat3;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static stat3 stats(const double *v, size_t n)
{
    double *t = malloc((n ? n : 1) * sizeof(*t));
    stat3 s = {NAN, NAN, NAN, NAN};
    size_t m = 0;
    double sum = 0;
    for (size_t i = 0; t && i < n; i++)
        if (!isnan(v[i])) {
            t[m++] = v[i];
            sum += v[i];
        }
    if (m) {
        qsort(t, m, sizeof(*t), cmp_double);
        s.min = t[0];
        s.max = t[m - 1];
        s.med = m % 2 ? t[m / 2] : (t[m / 2 - 1] + t[m / 2]) / 2;
        s.mean = sum / (double)m;
    }
    free(t);
    return s;
}

static void set_free(rank_set *rs)
{
    loc_ranks *l, *tmp;
    HASH_ITER(hh, rs->locs, l, tmp) {
        HASH_DEL(rs->locs, l);
        free(l->key);
        free(l->work);
        free(l->par);
        free(l);
    }
    for (size_t i = 0; rs->db && i < rs->n; i++)
        profdb_free(&rs->db[i]);
    free(rs->db);
    free(rs->rank);
}

static int add_row(rank_set *rs, size_t k, const profdb_row *r)
{
    size_t len = strlen(r->location) + strlen(r->directive) + 2;
    char *key = malloc(len);
    if (!key)
        return -1;
    snprintf(key, len, "%s\x1f%s", r->location, r->directive);
    loc_ranks *l;
    HASH_FIND_STR(rs->locs, key, l);
    if (l) {
        free(key);
    } else {
        if (!(l = calloc(1, sizeof(*l))) ||
            !(l->work = malloc(rs->n * sizeof(double))) ||
            !(l->par = malloc(rs->n * sizeof(double)))) {
            if (l) {
                free(l->work);
                free(l);
            }
            free(key);
            return -1;
        }
        l->key = key;
        l->location = r->location;
        l->directive = r->directive;
        for (size_t i = 0; i < rs->n; i++)
            l->work[i] = l->par[i] = NAN;
        HASH_ADD_KEYPTR(hh, rs->locs, l->key, strlen(l->key), l);
    }
    l->work[k] = r->work;
    l->par[k] = r->parallelism;
    l->present++;
    l->crit_sum += r->critical_percent;
    if (r->span > l->span_max || l->present == 1) {
        l->span_max = r->span;
        l->span_max_rank = k;
    }
    return 0;
}

static int load_set(const char *dir, rank_set *rs, char *err, size_t errlen)
{
    memset(rs, 0, sizeof(*rs));
    char **paths;
    size_t n = ranks_list(dir, &paths);
    if (!n) {
        snprintf(err, errlen, "%s: no rank-NNNNN directory (MPI runs write "
                              "them: mpirun ... whatif run -o %s -- PROGRAM)",
                 dir, dir);
        return -1;
    }
    rs->n = n;
    rs->db = calloc(n, sizeof(*rs->db));
    rs->rank = calloc(n, sizeof(*rs->rank));
    int rc = rs->db && rs->rank ? 0 : -1;
    if (rc)
        snprintf(err, errlen, "out of memory");
    /* a rank without a profile (it failed, or its directory is gone) is
     * said and left out: the others still compare */
    size_t k = 0;
    long expect = 0;
    for (size_t j = 0; !rc && j < n; j++) {
        const char *base = strrchr(paths[j], '/');
        rs->rank[k] = strtol(base ? base + 6 : paths[j] + 5, NULL, 10);
        char why[PATH_MAX + 256];
        if (profdb_load(paths[j], &rs->db[k], why, sizeof(why))) {
            fprintf(stderr, "whatif: warning: rank %ld left out: %s\n",
                    rs->rank[k], why);
            profdb_free(&rs->db[k]);
            memset(&rs->db[k], 0, sizeof(rs->db[k]));
            continue;
        }
        const char *nr = profdb_meta(&rs->db[k], "ranks");
        if (nr && atol(nr) > expect)
            expect = atol(nr);
        k++;
    }
    rs->n = k;
    for (k = 0; !rc && k < rs->n; k++)
        for (size_t i = 0; !rc && i < rs->db[k].nrows; i++)
            if (add_row(rs, k, &rs->db[k].rows[i])) {
                snprintf(err, errlen, "out of memory");
                rc = -1;
            }
    if (!rc && !rs->n) {
        snprintf(err, errlen, "%s: no rank has a profile", dir);
        rc = -1;
    }
    if (!rc && expect > (long)rs->n)
        fprintf(stderr, "whatif: warning: the run had %ld ranks; the "
                        "profiles of %zu are here\n", expect, rs->n);
    ranks_free(paths, n);
    return rc;
}

/* Locations by their share of the critical path over all ranks. */
static int cmp_locs(const void *a, const void *b)
{
    const loc_ranks *x = *(loc_ranks *const *)a, *y = *(loc_ranks *const *)b;
    int px = !strcmp(x->directive, "program"),
        py = !strcmp(y->directive, "program");
    if (px != py)
        return py - px;
    if (x->crit_sum != y->crit_sum)
        return x->crit_sum < y->crit_sum ? 1 : -1;
    return strcmp(x->key, y->key);
}

static loc_ranks **sorted_locs(const rank_set *rs, size_t *n)
{
    *n = HASH_COUNT(rs->locs);
    loc_ranks **v = malloc((*n ? *n : 1) * sizeof(*v));
    if (!v)
        return NULL;
    size_t i = 0;
    for (loc_ranks *l = rs->locs; l; l = l->hh.next)
        v[i++] = l;
    qsort(v, *n, sizeof(*v), cmp_locs);
    return v;
}

static void num(FILE *f, double v, int decimals)
{
    fputc(',', f);
    if (isinf(v))
        fputs("inf", f);
    else if (!isnan(v))
        fprintf(f, "%.*f", decimals, v);
}

static const char *meta_or(const profdb *db, const char *key)
{
    const char *v = profdb_meta(db, key);
    return v ? v : "";
}

/* The rank whose program span is the longest. */
static size_t longest(const rank_set *rs)
{
    size_t best = 0;
    for (size_t k = 1; k < rs->n; k++)
        if (rs->db[k].rows[0].span > rs->db[best].rows[0].span)
            best = k;
    return best;
}

static int write_ranks_csv(const char *dir, const rank_set *rs, char *err,
                           size_t errlen)
{
    char path[PATH_MAX + 32], tmp[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/ranks.csv", dir);
    FILE *f = report_open_tmp(path, tmp, sizeof(tmp), err, errlen);
    if (!f)
        return -1;
    fputs("rank,host,pid,threads,work,span,parallelism,serial_percent,"
          "complete\n",
          f);
    for (size_t k = 0; k < rs->n; k++) {
        const profdb *db = &rs->db[k];
        const profdb_row *p = &db->rows[0];
        fprintf(f, "%ld,", rs->rank[k]);
        report_csv_text(f, meta_or(db, "host"));
        fprintf(f, ",%s,%s", meta_or(db, "pid"), meta_or(db, "threads"));
        num(f, p->work, 0);
        num(f, p->span, 0);
        num(f, p->parallelism, 3);
        num(f, p->critical_percent, 3);
        const char *c = profdb_meta(db, "complete");
        fprintf(f, ",%s\n", c && strcmp(c, "yes") ? "no" : "yes");
    }
    return report_close_tmp(f, tmp, path, !ferror(f), err, errlen);
}

static int write_locations_csv(const char *dir, const rank_set *rs,
                               loc_ranks **v, size_t n, char *err,
                               size_t errlen)
{
    char path[PATH_MAX + 32], tmp[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/rank_locations.csv", dir);
    FILE *f = report_open_tmp(path, tmp, sizeof(tmp), err, errlen);
    if (!f)
        return -1;
    fputs("location,directive,ranks,work_min,work_median,work_max,"
          "work_imbalance,parallelism_min,parallelism_median,"
          "parallelism_max,span_max,span_max_rank\n",
          f);
    for (size_t i = 0; i < n; i++) {
        const loc_ranks *l = v[i];
        stat3 w = stats(l->work, rs->n), p = stats(l->par, rs->n);
        report_csv_text(f, l->location);
        fputc(',', f);
        report_csv_text(f, l->directive);
        fprintf(f, ",%zu", l->present);
        num(f, w.min, 0);
        num(f, w.med, 0);
        num(f, w.max, 0);
        num(f, w.mean > 0 ? w.max / w.mean : NAN, 3);
        num(f, p.min, 3);
        num(f, p.med, 3);
        num(f, p.max, 3);
        num(f, l->span_max, 0);
        fprintf(f, ",%ld\n", rs->rank[l->span_max_rank]);
    }
    return report_close_tmp(f, tmp, path, !ferror(f), err, errlen);
}

#define SUMMARY_RANKS 16
#define SUMMARY_LOCS 8

static void summary(const rank_set *rs, loc_ranks **v, size_t n)
{
    fprintf(stderr, "whatif: %zu ranks\n%6s %-16s %14s %14s %9s\n", rs->n,
            "rank", "host", "work", "span", "parall.");
    for (size_t k = 0; k < rs->n && k < SUMMARY_RANKS; k++) {
        const profdb_row *p = &rs->db[k].rows[0];
        fprintf(stderr, "%6ld %-16.16s %14.0f %14.0f %9.3f\n", rs->rank[k],
                meta_or(&rs->db[k], "host"), p->work, p->span,
                p->parallelism);
    }
    if (rs->n > SUMMARY_RANKS)
        fprintf(stderr, "... %zu more ranks (ranks.csv)\n",
                rs->n - SUMMARY_RANKS);
    double *spans = malloc(rs->n * sizeof(*spans));
    size_t lk = longest(rs);
    if (spans) {
        for (size_t k = 0; k < rs->n; k++)
            spans[k] = rs->db[k].rows[0].span;
        stat3 s = stats(spans, rs->n);
        fprintf(stderr, "whatif: rank %ld has the longest OpenMP span, %.0f: "
                        "%.0f%% above the median rank's (its serial code: "
                        "%.1f%% of its critical path)\n",
                rs->rank[lk], s.max, s.med > 0 ? 100 * (s.max / s.med - 1) : 0,
                rs->db[lk].rows[0].critical_percent);
        free(spans);
    }
    int shown = 0;
    for (size_t i = 1; i < n && shown < SUMMARY_LOCS; i++) {
        stat3 w = stats(v[i]->work, rs->n);
        if (v[i]->present < 2 || !(w.mean > 0) || w.max / w.mean < 1.1 ||
            !strcmp(v[i]->directive, "region"))
            continue;
        if (!shown++)
            fprintf(stderr, "whatif: locations whose work differs across "
                            "the ranks (rank_locations.csv):\n");
        fprintf(stderr, "  %-40s %-9s work max/mean %.2f (rank %ld has the "
                        "longest span)\n",
                v[i]->location, v[i]->directive, w.max / w.mean,
                rs->rank[v[i]->span_max_rank]);
    }
}

int ranks_analyze(const char *dir, int quiet, char *err, size_t errlen)
{
    rank_set rs;
    int rc = load_set(dir, &rs, err, errlen);
    size_t n = 0;
    loc_ranks **v = rc ? NULL : sorted_locs(&rs, &n);
    if (!rc && !v) {
        snprintf(err, errlen, "out of memory");
        rc = -1;
    }
    if (!rc)
        rc = write_ranks_csv(dir, &rs, err, errlen) ||
                     write_locations_csv(dir, &rs, v, n, err, errlen)
                 ? -1
                 : 0;
    if (!rc && !quiet) {
        summary(&rs, v, n);
        fprintf(stderr, "whatif: ranks in %s/ (ranks.csv, "
                        "rank_locations.csv; whatif report %s)\n",
                dir, dir);
    }
    free(v);
    set_free(&rs);
    return rc;
}

/* ---- The page ---- */

int ranks_report(const char *dir, const char *out, char *err, size_t errlen)
{
    rank_set rs;
    char path[PATH_MAX + 32], tmp[PATH_MAX + 64];
    if (!out) {
        snprintf(path, sizeof(path), "%s/report.html", dir);
        out = path;
    }
    if (load_set(dir, &rs, err, errlen)) {
        set_free(&rs);
        return -1;
    }
    size_t n = 0;
    loc_ranks **v = sorted_locs(&rs, &n);
    FILE *f = v ? report_open_tmp(out, tmp, sizeof(tmp), err, errlen) : NULL;
    if (!f) {
        if (!v)
            snprintf(err, errlen, "out of memory");
        free(v);
        set_free(&rs);
        return -1;
    }
    html_begin(f, "ranks");
    size_t lk = longest(&rs);
    double maxspan = rs.db[lk].rows[0].span;
    fprintf(f, "<h1>whatif: %zu MPI ranks</h1><p>Each rank's OpenMP "
               "parallelism, measured inside the rank: MPI calls are serial "
               "work of the thread that makes them. Rank <b id=\"longest\">"
               "%ld</b> has the longest span.</p>",
            rs.n, rs.rank[lk]);
    fputs("<h2>Ranks</h2><table id=\"ranks\"><tr><th>rank</th><th class=\"t\">"
          "host</th><th>threads</th><th>work</th><th>span</th><th>"
          "parallelism</th><th class=\"t\">span (bar: the longest)</th>"
          "<th class=\"t\">its profile</th></tr>",
          f);
    for (size_t k = 0; k < rs.n; k++) {
        const profdb_row *p = &rs.db[k].rows[0];
        fprintf(f, "<tr><td>%ld</td><td class=\"t\">", rs.rank[k]);
        html_escape(f, meta_or(&rs.db[k], "host"));
        fputs("</td><td>", f);
        html_escape(f, meta_or(&rs.db[k], "threads"));
        fputs("</td>", f);
        html_num_cell(f, p->work, 0);
        html_num_cell(f, p->span, 0);
        html_num_cell(f, p->parallelism, 3);
        fprintf(f, "<td class=\"t\"><span class=\"bar\" style=\"width:"
                   "%.0fpx\"></span></td><td class=\"t\"><a href=\"rank-%05ld/"
                   "report.html\">rank-%05ld</a></td></tr>",
                maxspan > 0 ? 200 * p->span / maxspan : 0, rs.rank[k],
                rs.rank[k]);
    }
    fputs("</table><h2>Locations across the ranks</h2><table id=\"locations\">"
          "<tr><th class=\"t\">location</th><th class=\"d\">directive</th>"
          "<th>ranks</th><th>work min</th><th>median</th><th>max</th>"
          "<th>imbalance (max/mean)</th><th>parallelism min</th><th>median"
          "</th><th>max</th><th>longest span in rank</th></tr>",
          f);
    for (size_t i = 0; i < n; i++) {
        const loc_ranks *l = v[i];
        stat3 w = stats(l->work, rs.n), p = stats(l->par, rs.n);
        fputs("<tr><td class=\"t\">", f);
        html_escape(f, l->location);
        fputs("</td><td class=\"d\">", f);
        html_escape(f, l->directive);
        fprintf(f, "</td><td>%zu</td>", l->present);
        html_num_cell(f, w.min, 0);
        html_num_cell(f, w.med, 0);
        html_num_cell(f, w.max, 0);
        html_num_cell(f, w.mean > 0 ? w.max / w.mean : NAN, 3);
        html_num_cell(f, p.min, 3);
        html_num_cell(f, p.med, 3);
        html_num_cell(f, p.max, 3);
        fprintf(f, "<td>%ld</td></tr>", rs.rank[l->span_max_rank]);
    }
    fputs("</table></body></html>\n", f);
    int rc = report_close_tmp(f, tmp, out, !ferror(f), err, errlen);
    free(v);
    set_free(&rs);
    return rc;
}
