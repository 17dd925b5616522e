/* profdb.c - a run's profile.db read back (profdb.h). */
#include "profdb.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *dup_text(const unsigned char *s)
{
    return strdup(s ? (const char *)s : "");
}

static double col_num(sqlite3_stmt *st, int i)
{
    return sqlite3_column_type(st, i) == SQLITE_NULL
               ? NAN
               : sqlite3_column_double(st, i);
}

/* Grows *v (of *n items of size sz) by one zeroed item; NULL when out of
 * memory. */
static void *grow(void *v, size_t *n, size_t sz)
{
    char *p = realloc(*(void **)v, (*n + 1) * sz);
    if (!p)
        return NULL;
    *(void **)v = p;
    memset(p + *n * sz, 0, sz);
    return p + (*n)++ * sz;
}

static int table_exists(sqlite3 *db, const char *name)
{
    sqlite3_stmt *st;
    int found = 0;
    if (sqlite3_prepare_v2(db, "SELECT 1 FROM sqlite_master WHERE name = ?",
                           -1, &st, NULL) != SQLITE_OK)
        return 0;
    sqlite3_bind_text(st, 1, name, -1, SQLITE_STATIC);
    found = sqlite3_step(st) == SQLITE_ROW;
    sqlite3_finalize(st);
    return found;
}

static int load_meta(sqlite3 *db, profdb *pg)
{
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "SELECT key, value FROM run ORDER BY rowid",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        profdb_kv *e = grow(&pg->meta, &pg->nmeta, sizeof(*e));
        if (!e || !(e->key = dup_text(sqlite3_column_text(st, 0))) ||
            !(e->value = dup_text(sqlite3_column_text(st, 1))))
            rc = -1;
    }
    sqlite3_finalize(st);
    return rc;
}

const char *profdb_meta(const profdb *pg, const char *key)
{
    for (size_t i = 0; i < pg->nmeta; i++)
        if (!strcmp(pg->meta[i].key, key))
            return pg->meta[i].value;
    return NULL;
}

static int load_rows(sqlite3 *db, profdb *pg)
{
    sqlite3_stmt *st;
    const char *q =
        "SELECT location, directive, instances, work, span, parallelism,"
        " critical_work, critical_percent, grains, grain_work"
        " FROM profile_named WHERE scenario = 0"
        " AND directive NOT LIKE 'line%' AND directive != 'serial'"
        " AND (location_id = 0 OR instances > 0 OR critical_work > 0"
        " OR grains > 0)"
        " ORDER BY location_id = 0 DESC, critical_percent DESC, work DESC,"
        " location";
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        profdb_row *r = grow(&pg->rows, &pg->nrows, sizeof(*r));
        if (!r || !(r->location = dup_text(sqlite3_column_text(st, 0))) ||
            !(r->directive = dup_text(sqlite3_column_text(st, 1)))) {
            rc = -1;
            break;
        }
        r->instances = col_num(st, 2);
        r->work = col_num(st, 3);
        r->span = col_num(st, 4);
        r->parallelism = col_num(st, 5);
        r->critical_work = col_num(st, 6);
        r->critical_percent = col_num(st, 7);
        r->grains = col_num(st, 8);
        r->grain_work = col_num(st, 9);
    }
    sqlite3_finalize(st);
    return rc;
}

static int load_lines(sqlite3 *db, profdb *pg)
{
    sqlite3_stmt *st;
    if (!table_exists(db, "critical_line"))
        return 0;
    if (sqlite3_prepare_v2(db, "SELECT location, function, samples,"
                               " critical_work, critical_percent FROM"
                               " critical_line WHERE critical_work > 0"
                               " LIMIT 20",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        profdb_line *r = grow(&pg->lines, &pg->nlines, sizeof(*r));
        if (!r || !(r->location = dup_text(sqlite3_column_text(st, 0))) ||
            !(r->function = dup_text(sqlite3_column_text(st, 1)))) {
            rc = -1;
            break;
        }
        r->samples = col_num(st, 2);
        r->critical_work = col_num(st, 3);
        r->critical_percent = col_num(st, 4);
    }
    sqlite3_finalize(st);
    return rc;
}

static int load_serial(sqlite3 *db, profdb *pg)
{
    sqlite3_stmt *st;
    if (!table_exists(db, "critical_serial"))
        return 0;
    if (sqlite3_prepare_v2(db, "SELECT from_event, to_event, fragments,"
                               " critical_percent FROM critical_serial"
                               " WHERE critical_work > 0 LIMIT 10",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        profdb_serial *r = grow(&pg->serial, &pg->nserial, sizeof(*r));
        if (!r || !(r->from = dup_text(sqlite3_column_text(st, 0))) ||
            !(r->to = dup_text(sqlite3_column_text(st, 1)))) {
            rc = -1;
            break;
        }
        r->fragments = col_num(st, 2);
        r->critical_percent = col_num(st, 3);
    }
    sqlite3_finalize(st);
    return rc;
}

/* The factor where profdb_curve c saturates: the smallest whose parallelism
 * reaches 95% of the largest factor's (as opportunities.csv says). */
static size_t saturation_index(const profdb_curve *c)
{
    double last = c->y[c->n - 1];
    for (size_t k = 0; k < c->n; k++)
        if (c->y[k] >= 0.95 * last)
            return k;
    return c->n - 1;
}

/* The what-if scenarios, one profdb_curve per name, each starting at the
 * measured point (factor 1), with the location that leads the critical
 * path where it saturates. */
static int load_scenarios(sqlite3 *db, profdb *pg)
{
    sqlite3_stmt *st, *lead;
    const char *q =
        "SELECT s.id, s.name, s.factor, p.parallelism FROM scenario s"
        " JOIN profile p ON p.scenario = s.id AND p.location_id = 0"
        " ORDER BY s.id";
    const char *ql =
        "SELECT l.location, l.directive, MAX(p.critical_work) FROM profile p"
        " JOIN location l ON l.id = p.location_id WHERE p.scenario = ?"
        " AND l.directive NOT LIKE 'line%'"
        " AND l.directive NOT IN ('serial', 'region')";
    if (sqlite3_prepare_v2(db, q, -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_prepare_v2(db, ql, -1, &lead, NULL) != SQLITE_OK) {
        sqlite3_finalize(st);
        return -1;
    }
    int rc = 0;
    double measured = NAN;
    int ids[72];
    profdb_curve *c = NULL;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        int id = sqlite3_column_int(st, 0);
        const char *name = (const char *)sqlite3_column_text(st, 1);
        double par = col_num(st, 3);
        if (id == 0) {
            measured = par;
            continue;
        }
        if (name && !strcmp(name, "burdened")) /* no factor: run.json's */
            continue;
        if (!c || strcmp(c->name, name ? name : "")) {
            if (!(c = grow(&pg->curves, &pg->ncurves, sizeof(*c))) ||
                !(c->name = dup_text((const unsigned char *)name))) {
                rc = -1;
                break;
            }
            c->x[0] = 1;
            c->y[0] = measured;
            ids[0] = 0;
            c->n = 1;
        }
        if (c->n < sizeof(c->x) / sizeof(c->x[0])) {
            c->x[c->n] = col_num(st, 2);
            ids[c->n] = id;
            c->y[c->n++] = par;
        }
        /* the group's last scenario so far: its leader, recomputed as
         * the group grows (cheap: a few dozen scenarios) */
        size_t k = saturation_index(c);
        c->saturation = c->x[k];
        sqlite3_reset(lead);
        sqlite3_bind_int(lead, 1, ids[k]);
        free(c->leader);
        c->leader = NULL;
        if (sqlite3_step(lead) == SQLITE_ROW) {
            char buf[8400];
            snprintf(buf, sizeof(buf), "%s (%s)",
                     (const char *)sqlite3_column_text(lead, 0),
                     (const char *)sqlite3_column_text(lead, 1));
            if (!(c->leader = strdup(buf)))
                rc = -1;
        }
    }
    sqlite3_finalize(st);
    sqlite3_finalize(lead);
    return rc;
}

static int load_notes(sqlite3 *db, profdb *pg)
{
    sqlite3_stmt *st;
    if (!table_exists(db, "note"))
        return 0;
    if (sqlite3_prepare_v2(db, "SELECT l.location, l.directive, n.text FROM"
                               " note n LEFT JOIN location l ON l.id ="
                               " n.location_id ORDER BY n.rowid",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        profdb_note *r = grow(&pg->notes, &pg->nnotes, sizeof(*r));
        if (!r || !(r->location = dup_text(sqlite3_column_text(st, 0))) ||
            !(r->directive = dup_text(sqlite3_column_text(st, 1))) ||
            !(r->text = dup_text(sqlite3_column_text(st, 2))))
            rc = -1;
    }
    sqlite3_finalize(st);
    return rc;
}

static int load_timings(sqlite3 *db, profdb *pg)
{
    sqlite3_stmt *st;
    if (!table_exists(db, "timing"))
        return 0;
    if (sqlite3_prepare_v2(db, "SELECT threads, wall_seconds FROM timing"
                               " ORDER BY threads",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    int rc = 0;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        profdb_timing *t = grow(&pg->timings, &pg->ntimings, sizeof(*t));
        if (!t) {
            rc = -1;
            break;
        }
        t->threads = sqlite3_column_int(st, 0);
        t->seconds = col_num(st, 1);
    }
    sqlite3_finalize(st);
    return rc;
}

/* The tables of whatif grains, when it ran on this run. */
static int load_grains(sqlite3 *db, profdb *pg)
{
    if (!table_exists(db, "grain_group") || !table_exists(db, "grain_edge") ||
        !table_exists(db, "grain_instance"))
        return 0;
    sqlite3_stmt *st;
    int rc = 0;
    if (sqlite3_prepare_v2(db, "SELECT location, directive, id, depth, "
                               "grains, work, min_work, median_work, "
                               "max_work, low_benefit FROM grain_group "
                               "ORDER BY depth, location, directive",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        profdb_grain_group *g = grow(&pg->groups, &pg->ngroups, sizeof(*g));
        if (!g || !(g->location = dup_text(sqlite3_column_text(st, 0))) ||
            !(g->directive = dup_text(sqlite3_column_text(st, 1)))) {
            rc = -1;
            break;
        }
        double *v[] = {&g->id, &g->depth, &g->grains, &g->work, &g->min_work,
                       &g->median_work, &g->max_work, &g->low_benefit};
        for (int k = 0; k < 8; k++)
            *v[k] = col_num(st, k + 2);
    }
    sqlite3_finalize(st);
    if (rc || sqlite3_prepare_v2(db, "SELECT from_group, to_group, grains "
                                     "FROM grain_edge",
                                 -1, &st, NULL) != SQLITE_OK)
        return -1;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        profdb_grain_edge *e = grow(&pg->gedges, &pg->ngedges, sizeof(*e));
        if (!e) {
            rc = -1;
            break;
        }
        e->from = col_num(st, 0);
        e->to = col_num(st, 1);
        e->grains = col_num(st, 2);
    }
    sqlite3_finalize(st);
    if (rc || sqlite3_prepare_v2(db, "SELECT location, directive, id, "
                                     "chunks, threads, work, load_balance "
                                     "FROM grain_instance ORDER BY "
                                     "load_balance DESC, work DESC LIMIT 1000",
                                 -1, &st, NULL) != SQLITE_OK)
        return -1;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        profdb_grain_instance *in =
            grow(&pg->instances, &pg->ninstances, sizeof(*in));
        if (!in || !(in->location = dup_text(sqlite3_column_text(st, 0))) ||
            !(in->directive = dup_text(sqlite3_column_text(st, 1)))) {
            rc = -1;
            break;
        }
        in->id = col_num(st, 2);
        in->chunks = col_num(st, 3);
        in->threads = col_num(st, 4);
        in->work = col_num(st, 5);
        in->load_balance = col_num(st, 6);
    }
    sqlite3_finalize(st);
    if (rc || !table_exists(db, "grain_timeline"))
        return rc;
    if (sqlite3_prepare_v2(db, "SELECT start_ns, end_ns, mean_running, "
                               "max_running FROM grain_timeline ORDER BY "
                               "start_ns",
                           -1, &st, NULL) != SQLITE_OK)
        return -1;
    while (!rc && sqlite3_step(st) == SQLITE_ROW) {
        profdb_grain_bin *b = grow(&pg->timeline, &pg->ntimeline, sizeof(*b));
        if (!b) {
            rc = -1;
            break;
        }
        b->start_ns = col_num(st, 0);
        b->end_ns = col_num(st, 1);
        b->mean_running = col_num(st, 2);
        b->max_running = col_num(st, 3);
    }
    sqlite3_finalize(st);
    return rc;
}

/* Splits a CSV line in place into at most max fields (quotes removed,
 * doubled quotes kept single).  Returns the count. */
static int csv_fields(char *line, char **f, int max)
{
    int n = 0;
    char *p = line;
    while (n < max) {
        char *w = p;
        f[n++] = p;
        if (*p == '"') {
            char *r = p + 1;
            for (; *r; r++) {
                if (*r == '"' && r[1] == '"')
                    *w++ = *r++;
                else if (*r == '"')
                    break;
                else
                    *w++ = *r;
            }
            p = *r ? r + 1 : r;
        } else {
            while (*p && *p != ',' && *p != '\n')
                *w++ = *p++;
        }
        char end = *p;
        *w = 0;
        if (end != ',')
            break;
        p++;
    }
    return n;
}

/* opportunities.csv of the run, when it was asked for: one profdb_curve per
 * candidate, with the saturation and next bottleneck the file gives. */
static int load_opportunities(const char *dir, profdb *pg)
{
    char path[PATH_MAX + 32], line[16384];
    snprintf(path, sizeof(path), "%s/opportunities.csv", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    double fac[64];
    int nf = 0, rc = 0;
    char *v[80];
    if (fgets(line, sizeof(line), f)) {
        int n = csv_fields(line, v, 80);
        for (int i = 5; i < n && nf < 64; i++)
            if (!strncmp(v[i], "parallelism_x", 13))
                fac[nf++] = strtod(v[i] + 13, NULL); /* "inf" too */
    }
    while (!rc && nf && fgets(line, sizeof(line), f)) {
        int n = csv_fields(line, v, 80);
        if (n < 5 + nf + 3)
            continue;
        profdb_curve *c = grow(&pg->curves, &pg->ncurves, sizeof(*c));
        char lead[8400];
        snprintf(lead, sizeof(lead), "%s (%s)", v[6 + nf], v[7 + nf]);
        if (!c || !(c->name = strdup(v[1])) ||
            !(c->directive = strdup(v[2])) || !(c->leader = strdup(lead))) {
            rc = -1;
            break;
        }
        c->x[0] = 1;
        c->y[0] = strtod(v[4], NULL);
        c->n = 1;
        for (int k = 0; k < nf; k++) {
            c->x[c->n] = fac[k];
            c->y[c->n++] = strtod(v[5 + k], NULL);
        }
        c->saturation = strtod(v[5 + nf], NULL);
    }
    fclose(f);
    return rc;
}

void profdb_free(profdb *pg)
{
    for (size_t i = 0; i < pg->nmeta; i++) {
        free(pg->meta[i].key);
        free(pg->meta[i].value);
    }
    for (size_t i = 0; i < pg->nrows; i++) {
        free(pg->rows[i].location);
        free(pg->rows[i].directive);
    }
    for (size_t i = 0; i < pg->nlines; i++) {
        free(pg->lines[i].location);
        free(pg->lines[i].function);
    }
    for (size_t i = 0; i < pg->nserial; i++) {
        free(pg->serial[i].from);
        free(pg->serial[i].to);
    }
    for (size_t i = 0; i < pg->ncurves; i++) {
        free(pg->curves[i].name);
        free(pg->curves[i].directive);
        free(pg->curves[i].leader);
    }
    for (size_t i = 0; i < pg->nnotes; i++) {
        free(pg->notes[i].location);
        free(pg->notes[i].directive);
        free(pg->notes[i].text);
    }
    free(pg->meta);
    free(pg->rows);
    free(pg->lines);
    free(pg->serial);
    free(pg->curves);
    free(pg->notes);
    free(pg->timings);
    for (size_t i = 0; i < pg->ngroups; i++) {
        free(pg->groups[i].location);
        free(pg->groups[i].directive);
    }
    for (size_t i = 0; i < pg->ninstances; i++) {
        free(pg->instances[i].location);
        free(pg->instances[i].directive);
    }
    free(pg->groups);
    free(pg->gedges);
    free(pg->instances);
    free(pg->timeline);
}

int profdb_load(const char *dir, profdb *pg, char *err, size_t errlen)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/profile.db", dir);
    if (access(path, R_OK)) {
        snprintf(err, errlen, "%s: %s (a run's directory holds it after "
                              "whatif run or whatif analyze)",
                 path, strerror(errno));
        return -1;
    }
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        snprintf(err, errlen, "%s: %s", path,
                 db ? sqlite3_errmsg(db) : "cannot open");
        sqlite3_close(db);
        return -1;
    }
    sqlite3_busy_timeout(db, 2000);
    int version = 0;
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) ==
        SQLITE_OK) {
        if (sqlite3_step(st) == SQLITE_ROW)
            version = sqlite3_column_int(st, 0);
        sqlite3_finalize(st);
    }
    int rc = 0;
    if (version < 2) {
        snprintf(err, errlen, "%s: not a profile database (schema %d): "
                              "analyze the run again with whatif analyze",
                 path, version);
        rc = -1;
    } else if (load_meta(db, pg) || load_rows(db, pg) || load_lines(db, pg) ||
               load_serial(db, pg) || load_scenarios(db, pg) ||
               load_notes(db, pg) || load_timings(db, pg) ||
               load_grains(db, pg) ||
               load_opportunities(dir, pg)) {
        snprintf(err, errlen, "%s: %s", path, sqlite3_errmsg(db));
        rc = -1;
    } else if (!pg->nrows || strcmp(pg->rows[0].directive, "program")) {
        snprintf(err, errlen, "%s: holds no profile", path);
        rc = -1;
    }
    sqlite3_close(db);
    return rc;
}

