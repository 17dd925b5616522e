/* repeat.c - one profile out of N runs (repeat.h). */
#include "repeat.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uthash.h>

#include "report.h"

/* One row (directive, location) across the runs; the program is the row
 * ("program", "program"). */
typedef struct rrow {
    char *key;          /* "directive\0location", owned */
    const char *directive, *location;
    size_t first;       /* the order rows were first seen in */
    int *present;       /* [n] */
    double *work, *span, *par, *pct; /* [n] */
    UT_hash_handle hh;
} rrow;

typedef struct rset {
    int n;
    rrow *rows;
    size_t nrows;
    double *pspan;      /* [n] program span of each run */
} rset;

static void rset_free(rset *rs)
{
    rrow *r, *tmp;
    HASH_ITER(hh, rs->rows, r, tmp) {
        HASH_DEL(rs->rows, r);
        free(r->key);
        free(r->present);
        free(r->work);
        free(r->span);
        free(r->par);
        free(r->pct);
        free(r);
    }
    free(rs->pspan);
}

static rrow *row_get(rset *rs, const char *directive, const char *location)
{
    size_t dl = strlen(directive), ll = strlen(location);
    char *key = malloc(dl + ll + 2);
    if (!key)
        return NULL;
    memcpy(key, directive, dl + 1);
    memcpy(key + dl + 1, location, ll + 1);
    rrow *r;
    HASH_FIND(hh, rs->rows, key, dl + ll + 2, r);
    if (r) {
        free(key);
        return r;
    }
    r = calloc(1, sizeof(*r));
    if (!r) {
        free(key);
        return NULL;
    }
    r->key = key;
    r->directive = key;
    r->location = key + dl + 1;
    r->first = rs->nrows++;
    r->present = calloc((size_t)rs->n, sizeof(int));
    r->work = calloc((size_t)rs->n, sizeof(double));
    r->span = calloc((size_t)rs->n, sizeof(double));
    r->par = calloc((size_t)rs->n, sizeof(double));
    r->pct = calloc((size_t)rs->n, sizeof(double));
    HASH_ADD_KEYPTR(hh, rs->rows, r->key, dl + ll + 2, r);
    if (!r->present || !r->work || !r->span || !r->par || !r->pct)
        return NULL; /* freed with the set */
    return r;
}

/* Reads run k's profile (scenario 0: the program and its directive and
 * region rows). */
static int read_run(rset *rs, const char *dir, int k, char *err,
                    size_t errlen)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/run-%d/profile.db", dir, k + 1);
    sqlite3 *db = NULL;
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(
            db, "SELECT CASE WHEN location_id = 0 THEN 'program' ELSE"
                " directive END, CASE WHEN location_id = 0 THEN 'program'"
                " ELSE location END, work, span, parallelism,"
                " critical_percent FROM profile_named WHERE scenario = 0"
                " AND (location_id = 0 OR (directive NOT LIKE 'line%' AND"
                " directive <> 'serial' AND (instances > 0 OR"
                " critical_work > 0 OR grains > 0)))",
            -1, &st, NULL);
    while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
        const char *d = (const char *)sqlite3_column_text(st, 0);
        const char *l = (const char *)sqlite3_column_text(st, 1);
        rrow *r = row_get(rs, d ? d : "unknown", l ? l : "?");
        if (!r) {
            rc = SQLITE_NOMEM;
            break;
        }
        r->present[k] = 1;
        r->work[k] = sqlite3_column_double(st, 2);
        r->span[k] = sqlite3_column_double(st, 3);
        r->par[k] = sqlite3_column_type(st, 4) == SQLITE_NULL
                        ? 0
                        : sqlite3_column_double(st, 4);
        r->pct[k] = sqlite3_column_double(st, 5);
        if (!strcmp(r->directive, "program"))
            rs->pspan[k] = r->span[k];
        rc = SQLITE_OK;
    }
    if (rc != SQLITE_DONE)
        snprintf(err, errlen, "%s: %s", path,
                 db ? sqlite3_errmsg(db) : "cannot open");
    sqlite3_finalize(st);
    sqlite3_close(db);
    return rc == SQLITE_DONE ? 0 : -1;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median, least and most of the values of the runs a row was present in
 * (the mean of the two middle ones for an even count). */
typedef struct stat3 {
    double med, min, max;
} stat3;

static stat3 stats_of(const double *v, const int *present, int n)
{
    double buf[128];
    int m = 0;
    for (int k = 0; k < n && m < 128; k++)
        if (present[k])
            buf[m++] = v[k];
    stat3 s = {0, 0, 0};
    if (!m)
        return s;
    qsort(buf, (size_t)m, sizeof(*buf), cmp_double);
    s.min = buf[0];
    s.max = buf[m - 1];
    s.med = m % 2 ? buf[m / 2] : (buf[m / 2 - 1] + buf[m / 2]) / 2;
    return s;
}

static int runs_of(const rrow *r, int n)
{
    int c = 0;
    for (int k = 0; k < n; k++)
        c += r->present[k];
    return c;
}

/* The run of median program span (the lower one of the two middles). */
static int median_run(const rset *rs)
{
    int best = 0;
    for (int k = 0; k < rs->n; k++) {
        int below = 0, above = 0;
        for (int j = 0; j < rs->n; j++) {
            below += rs->pspan[j] < rs->pspan[k] ||
                     (rs->pspan[j] == rs->pspan[k] && j < k);
            above += rs->pspan[j] > rs->pspan[k] ||
                     (rs->pspan[j] == rs->pspan[k] && j > k);
        }
        if (below == (rs->n - 1) / 2 && above == rs->n / 2) {
            best = k;
            break;
        }
    }
    return best;
}

static int copy_file(const char *src, const char *dst)
{
    char tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof(tmp), "%s.tmp", dst);
    FILE *in = fopen(src, "rb"), *out = in ? fopen(tmp, "wb") : NULL;
    char buf[65536];
    size_t got;
    int rc = in && out ? 0 : -1;
    while (rc == 0 && (got = fread(buf, 1, sizeof(buf), in)) > 0)
        if (fwrite(buf, 1, got, out) != got)
            rc = -1;
    if (in && ferror(in))
        rc = -1;
    if (in)
        fclose(in);
    if (out && fclose(out))
        rc = -1;
    if (rc == 0 && rename(tmp, dst))
        rc = -1;
    if (rc)
        unlink(tmp);
    return rc;
}

/* Rows in the order of repeat.csv: the program, then by median share of
 * the critical path, then by location. */
static const rset *sort_set;
static int cmp_rows(const void *a, const void *b)
{
    const rrow *x = *(const rrow *const *)a, *y = *(const rrow *const *)b;
    int xp = !strcmp(x->directive, "program"),
        yp = !strcmp(y->directive, "program");
    if (xp != yp)
        return yp - xp;
    double cx = stats_of(x->pct, x->present, sort_set->n).med,
           cy = stats_of(y->pct, y->present, sort_set->n).med;
    if (cx != cy)
        return cx < cy ? 1 : -1;
    int c = strcmp(x->location, y->location);
    return c ? c : strcmp(x->directive, y->directive);
}

static const char repeat_schema[] =
    "DROP TABLE IF EXISTS repeat_run;\n"
    "DROP TABLE IF EXISTS repeat_stat;\n"
    "CREATE TABLE repeat_run(run INTEGER PRIMARY KEY,"
    " directory TEXT NOT NULL, program_span INTEGER NOT NULL,"
    " chosen INTEGER NOT NULL);\n"
    "CREATE TABLE repeat_stat(location TEXT NOT NULL,"
    " directive TEXT NOT NULL, runs INTEGER NOT NULL,"
    " parallelism_median REAL, parallelism_min REAL, parallelism_max REAL,"
    " span_median REAL, span_min REAL, span_max REAL,"
    " work_median REAL, work_min REAL, work_max REAL,"
    " critical_percent_median REAL, critical_percent_min REAL,"
    " critical_percent_max REAL, PRIMARY KEY(directive, location));\n";

/* The repeat tables into dir/profile.db (the chosen run's copy). */
static int write_db(const char *dir, const rset *rs, rrow **order,
                    int chosen, char *err, size_t errlen)
{
    char path[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/profile.db", dir);
    sqlite3 *db = NULL;
    sqlite3_stmt *run = NULL, *row = NULL;
    char *emsg = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &emsg);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, repeat_schema, NULL, NULL, &emsg);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "INSERT INTO repeat_run VALUES"
                                    " (?, ?, ?, ?)", -1, &run, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "INSERT INTO repeat_stat VALUES (?, ?,"
                                    " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                                    " ?)", -1, &row, NULL);
    for (int k = 0; rc == SQLITE_OK && k < rs->n; k++) {
        char d[32];
        snprintf(d, sizeof(d), "run-%d", k + 1);
        sqlite3_bind_int(run, 1, k + 1);
        sqlite3_bind_text(run, 2, d, -1, SQLITE_TRANSIENT);
        sqlite3_bind_int64(run, 3, (sqlite3_int64)rs->pspan[k]);
        sqlite3_bind_int(run, 4, k == chosen);
        rc = sqlite3_step(run) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset(run);
    }
    for (size_t i = 0; rc == SQLITE_OK && i < rs->nrows; i++) {
        const rrow *r = order[i];
        stat3 v[4] = {stats_of(r->par, r->present, rs->n),
                      stats_of(r->span, r->present, rs->n),
                      stats_of(r->work, r->present, rs->n),
                      stats_of(r->pct, r->present, rs->n)};
        sqlite3_bind_text(row, 1, r->location, -1, SQLITE_STATIC);
        sqlite3_bind_text(row, 2, r->directive, -1, SQLITE_STATIC);
        sqlite3_bind_int(row, 3, runs_of(r, rs->n));
        for (int j = 0; j < 4; j++) {
            sqlite3_bind_double(row, 4 + 3 * j, v[j].med);
            sqlite3_bind_double(row, 5 + 3 * j, v[j].min);
            sqlite3_bind_double(row, 6 + 3 * j, v[j].max);
        }
        rc = sqlite3_step(row) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset(row);
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "COMMIT", NULL, NULL, &emsg);
    if (rc != SQLITE_OK)
        snprintf(err, errlen, "%s: %s", path,
                 emsg ? emsg : db ? sqlite3_errmsg(db) : "cannot open");
    sqlite3_free(emsg);
    sqlite3_finalize(run);
    sqlite3_finalize(row);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

static int write_csv(const char *dir, const rset *rs, rrow **order,
                     char *err, size_t errlen)
{
    char path[PATH_MAX + 64], tmp[PATH_MAX + 96];
    snprintf(path, sizeof(path), "%s/repeat.csv", dir);
    FILE *f = report_open_tmp(path, tmp, sizeof(tmp), err, errlen);
    if (!f)
        return -1;
    fputs("location,directive,runs,parallelism_median,parallelism_min,"
          "parallelism_max,span_median,span_min,span_max,work_median,"
          "work_min,work_max,critical_percent_median,critical_percent_min,"
          "critical_percent_max\n", f);
    for (size_t i = 0; i < rs->nrows; i++) {
        const rrow *r = order[i];
        stat3 p = stats_of(r->par, r->present, rs->n),
              s = stats_of(r->span, r->present, rs->n),
              w = stats_of(r->work, r->present, rs->n),
              c = stats_of(r->pct, r->present, rs->n);
        report_csv_text(f, r->location);
        fputc(',', f);
        report_csv_text(f, r->directive);
        fprintf(f, ",%d,%.3f,%.3f,%.3f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.3f,"
                   "%.3f,%.3f\n",
                runs_of(r, rs->n), p.med, p.min, p.max, s.med, s.min, s.max,
                w.med, w.min, w.max, c.med, c.min, c.max);
    }
    return report_close_tmp(f, tmp, path, !ferror(f), err, errlen);
}

int repeat_combine(const char *dir, int n, char *err, size_t errlen)
{
    rset rs = {.n = n};
    rrow **order = NULL;
    int rc = -1;
    if (n < 1 || n > 128 || !(rs.pspan = calloc((size_t)n, sizeof(double)))) {
        snprintf(err, errlen, "%d runs: out of range", n);
        return -1;
    }
    for (int k = 0; k < n; k++)
        if (read_run(&rs, dir, k, err, errlen))
            goto out;
    int chosen = median_run(&rs);
    static const char *const files[] = {
        "profile.csv", "run.json", "profile.db", "critical_lines.csv",
        "serial_fragments.csv", "whatif.csv", "opportunities.csv"};
    for (size_t i = 0; i < sizeof(files) / sizeof(*files); i++) {
        char src[PATH_MAX + 64], dst[PATH_MAX + 64];
        snprintf(src, sizeof(src), "%s/run-%d/%s", dir, chosen + 1,
                 files[i]);
        snprintf(dst, sizeof(dst), "%s/%s", dir, files[i]);
        if (access(src, F_OK) == 0 && copy_file(src, dst)) {
            snprintf(err, errlen, "%s: %s", dst, strerror(errno));
            goto out;
        }
    }
    order = malloc((rs.nrows ? rs.nrows : 1) * sizeof(*order));
    if (!order) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    size_t i = 0;
    for (rrow *r = rs.rows; r; r = r->hh.next)
        order[i++] = r;
    sort_set = &rs;
    qsort(order, rs.nrows, sizeof(*order), cmp_rows);
    if (write_csv(dir, &rs, order, err, errlen) ||
        write_db(dir, &rs, order, chosen, err, errlen))
        goto out;
    rc = 0;
out:
    free(order);
    rset_free(&rs);
    return rc;
}

/* Splits a repeat.csv line into fields (the location may be quoted). */
static int fields(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    while (n < max && *p && *p != '\n') {
        if (*p == '"') {
            f[n++] = ++p;
            char *w = p;
            while (*p && !(*p == '"' && p[1] != '"')) {
                if (*p == '"')
                    p++;
                *w++ = *p++;
            }
            *w = 0;
            if (*p)
                p++;
        } else {
            f[n++] = p;
            p += strcspn(p, ",\n");
        }
        if (*p == ',' || *p == '\n')
            *p++ = 0;
    }
    return n;
}

#define REPEAT_ROWS 8

void repeat_summary(const char *dir)
{
    char path[PATH_MAX + 64], line[8192];
    snprintf(path, sizeof(path), "%s/repeat.csv", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    int row = 0;
    char noisy[REPEAT_ROWS][512];
    int nnoisy = 0;
    while (fgets(line, sizeof(line), f)) {
        char *v[16];
        if (row++ == 0 || fields(line, v, 16) < 15)
            continue;
        if (row == 2) {
            fprintf(stderr, "whatif: %s runs: program parallelism %s "
                            "(median), %s to %s (repeat.csv); profile.csv "
                            "is the run of median span\n",
                    v[2], v[3], v[4], v[5]);
            fprintf(stderr, "%-32s %-9s %26s %22s\n", "location",
                    "directive", "parallelism med [range]",
                    "critical% med [range]");
            continue;
        }
        if (row <= REPEAT_ROWS + 2)
            fprintf(stderr, "%-32s %-9s %9s [%6s, %8s] %7s [%5s, %6s]\n",
                    v[0], v[1], v[3], v[4], v[5], v[12], v[13], v[14]);
        double smin = strtod(v[7], NULL), smax = strtod(v[8], NULL);
        if (smin > 0 && smax > 2 * smin && strtod(v[12], NULL) >= 1.0 &&
            nnoisy < REPEAT_ROWS)
            snprintf(noisy[nnoisy++], sizeof(noisy[0]),
                     "whatif: note: %s (%s): its span varies %.0f to %.0f "
                     "across the runs (%.1fx): a fragment the machine slowed "
                     "in some run; trust its median",
                     v[0], v[1], smin, smax, smax / smin);
    }
    fclose(f);
    for (int i = 0; i < nnoisy; i++)
        fprintf(stderr, "%s\n", noisy[i]);
}
