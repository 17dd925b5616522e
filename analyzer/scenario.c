/* scenario.c - builds the what-if scenarios of an analysis. */
#include "scenario.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"

/* Factor lists are stored whole in run.json and in the trace's metadata
 * (a longer one is refused, never cut). */
#define FACTOR_LIST_MAX 255
#define FACTORS_MAX 64

int scen_parse_factors(const char *list, double **out, size_t *n, char *err,
                       size_t errlen)
{
    if (strlen(list) > FACTOR_LIST_MAX) {
        snprintf(err, errlen, "factor list longer than %d characters",
                 FACTOR_LIST_MAX);
        return -1;
    }
    size_t k = 0;
    double *v = malloc(FACTORS_MAX * sizeof(*v));
    const char *p = list;
    if (!v) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* items separated by single commas, none empty: "2,", ",2" and "2,,4"
     * are refused alike */
    while (*p) {
        char *end;
        double f;
        if (!strncmp(p, "inf", 3)) {
            f = INFINITY;
            end = (char *)p + 3;
        } else {
            f = strtod(p, &end);
        }
        /* a plain decimal number: no sign, no spaces, no hex */
        int plain = isdigit((unsigned char)*p) || !strncmp(p, "inf", 3);
        for (const char *c = p; plain && c < end; c++)
            plain = !strchr("xXpP+- \t", *c) || (c > p && strchr("eE", c[-1]) &&
                                                 strchr("+-", *c));
        int dup = 0;
        for (size_t i = 0; i < k; i++)
            dup |= v[i] == f;
        int bad = end == p || !plain || dup || (*end && *end != ',') ||
                  !(f > 1.0) || (*end == ',' && !end[1]) ||
                  (isinf(f) && strncmp(p, "inf", 3)); /* 1e309 */
        if (bad || k == FACTORS_MAX) {
            if (bad)
                snprintf(err, errlen,
                         "bad factor list '%s': use distinct decimal numbers "
                         "above 1 and 'inf', separated by commas (e.g. %s)",
                         list, SCEN_DEFAULT_FACTORS);
            else
                snprintf(err, errlen, "more than %d factors in '%s'",
                         FACTORS_MAX, list);
            free(v);
            return -1;
        }
        v[k++] = f;
        p = *end ? end + 1 : end;
    }
    if (k == 0) {
        free(v);
        snprintf(err, errlen, "empty factor list");
        return -1;
    }
    *out = v;
    *n = k;
    return 0;
}

static int grow(scen_set *ss)
{
    size_t n = ss->n + 1;
    ospg_scenario *s = realloc(ss->scen, n * sizeof(*s));
    if (s)
        ss->scen = s;
    char **nm = realloc(ss->names, n * sizeof(*nm));
    if (nm)
        ss->names = nm;
    double *fc = realloc(ss->factors, n * sizeof(*fc));
    if (fc)
        ss->factors = fc;
    if (!s || !nm || !fc)
        return -1;
    memset(&ss->scen[ss->n], 0, sizeof(ss->scen[0]));
    ss->names[ss->n] = NULL;
    ss->factors[ss->n] = 0;
    ss->n = n;
    return 0;
}

/* Appends a scenario named name with the given factor; returns it. */
static ospg_scenario *add(scen_set *ss, const char *name, double factor)
{
    if (grow(ss))
        return NULL;
    size_t i = ss->n - 1;
    ss->names[i] = strdup(name);
    if (!ss->names[i]) {
        ss->n--;
        return NULL;
    }
    ss->factors[i] = factor;
    ss->scen[i].factor = factor;
    return &ss->scen[i];
}

static uint32_t *own(scen_set *ss, size_t n)
{
    uint32_t **o = realloc(ss->owned, (ss->nowned + 1) * sizeof(*o));
    if (!o)
        return NULL;
    ss->owned = o;
    uint32_t *a = calloc(n ? n : 1, sizeof(*a));
    if (a)
        ss->owned[ss->nowned++] = a;
    return a;
}

int scen_init(scen_set *ss)
{
    memset(ss, 0, sizeof(*ss));
    return add(ss, "measured", 1.0) ? 0 : -1;
}

void scen_free(scen_set *ss)
{
    for (size_t i = 0; i < ss->n; i++)
        free(ss->names[i]);
    for (size_t i = 0; i < ss->nowned; i++)
        free(ss->owned[i]);
    free(ss->owned);
    free(ss->names);
    free(ss->factors);
    free(ss->scen);
    free(ss->paths);
    memset(ss, 0, sizeof(*ss));
}

int scen_add_path(scen_set *ss, uint32_t id, uint32_t parent, uint32_t loc,
                  uint64_t factor_milli)
{
    if (id >= ss->npaths) {
        size_t n = (size_t)id + 1 > 2 * ss->npaths ? (size_t)id + 1
                                                    : 2 * ss->npaths;
        region_path *p = realloc(ss->paths, n * sizeof(*p));
        if (!p)
            return -1;
        memset(p + ss->npaths, 0, (n - ss->npaths) * sizeof(*p));
        ss->paths = p;
        ss->npaths = n;
    }
    region_path *r = &ss->paths[id];
    r->parent = parent;
    r->loc = loc;
    r->defined = 1;
    r->own_factor = factor_milli ? (double)factor_milli / 1000.0 : -1.0;
    return 0;
}

/* Paths are entered from paths made before them (a parent's id is lower):
 * a walk up that does not descend in ids is a damaged trace, and ends. */
size_t scen_region_tags(void *arg, uint32_t path, uint32_t *locs,
                        size_t max)
{
    const scen_set *ss = arg;
    size_t n = 0;
    /* a path's parent has a lower id: the walk ends */
    for (uint32_t p = path; p && p < ss->npaths && n < max;
         p = ss->paths[p].parent < p ? ss->paths[p].parent : 0) {
        if (!ss->paths[p].defined)
            break;
        int dup = 0;
        for (size_t i = 0; i < n; i++)
            dup |= locs[i] == ss->paths[p].loc;
        if (!dup)
            locs[n++] = ss->paths[p].loc;
    }
    return n;
}

/* The innermost own factor along path (paths arrive parents first in a
 * stream, but streams interleave: resolve lazily, walking up). */
double scen_own_factor(void *arg, uint32_t path)
{
    const scen_set *ss = arg;
    for (unsigned hops = 0; path && path < ss->npaths && hops < 1024;
         hops++) {
        const region_path *r = &ss->paths[path];
        if (!r->defined)
            return 0;
        if (r->own_factor > 0)
            return r->own_factor;
        path = r->parent;
    }
    return 0;
}

/* 1 when region loc lies on path. */
static int path_has(const scen_set *ss, uint32_t path, uint32_t loc)
{
    for (unsigned hops = 0; path && path < ss->npaths && hops < 1024;
         hops++) {
        if (!ss->paths[path].defined)
            return 0;
        if (ss->paths[path].loc == loc)
            return 1;
        path = ss->paths[path].parent;
    }
    return 0;
}

static int any_path(const scen_set *ss)
{
    for (size_t i = 1; i < ss->npaths; i++)
        if (ss->paths[i].defined)
            return 1;
    return 0;
}

int scen_add_all_regions(scen_set *ss, const double *f, size_t nf)
{
    if (!any_path(ss))
        return 0;
    for (size_t k = 0; k < nf; k++) {
        ospg_scenario *s = add(ss, "all", f[k]);
        if (!s)
            return -1;
        s->all_regions = 1;
    }
    return 0;
}

/* The sorted path ids through region loc, owned by the set. */
static const uint32_t *paths_through(scen_set *ss, uint32_t loc, size_t *n)
{
    size_t k = 0;
    for (size_t i = 1; i < ss->npaths; i++)
        k += path_has(ss, (uint32_t)i, loc);
    uint32_t *a = own(ss, k);
    if (!a)
        return NULL;
    k = 0;
    for (size_t i = 1; i < ss->npaths; i++)
        if (path_has(ss, (uint32_t)i, loc))
            a[k++] = (uint32_t)i;
    *n = k;
    return a;
}

static const char *name_of(const loctab *lt, uint32_t loc, char *buf,
                           size_t len)
{
    const loctab_entry *e = lt ? loctab_get(lt, loc) : NULL;
    if (e)
        return e->where;
    snprintf(buf, len, "loc#%u", loc);
    return buf;
}

static int add_region(scen_set *ss, const loctab *lt, uint32_t loc,
                      const double *f, size_t nf)
{
    size_t n;
    const uint32_t *paths = paths_through(ss, loc, &n);
    if (!paths)
        return -1;
    char buf[32];
    const char *name = name_of(lt, loc, buf, sizeof(buf));
    for (size_t k = 0; k < nf; k++) {
        ospg_scenario *s = add(ss, name, f[k]);
        if (!s)
            return -1;
        s->regions = paths;
        s->nregions = n;
    }
    return 0;
}

int scen_add_each_region(scen_set *ss, const loctab *lt, const double *f,
                         size_t nf)
{
    for (size_t i = 1; i < ss->npaths; i++) {
        if (!ss->paths[i].defined)
            continue;
        uint32_t loc = ss->paths[i].loc;
        int seen = 0;
        for (size_t j = 1; j < i && !seen; j++)
            seen = ss->paths[j].defined && ss->paths[j].loc == loc;
        if (!seen && add_region(ss, lt, loc, f, nf))
            return -1;
    }
    return 0;
}

int scen_add_expected(scen_set *ss)
{
    int any = 0;
    for (size_t i = 1; i < ss->npaths; i++)
        any |= ss->paths[i].defined && ss->paths[i].own_factor > 0;
    if (!any)
        return 0;
    ospg_scenario *s = add(ss, "expected", 0);
    if (!s)
        return -1;
    s->factor = 0;
    s->region_factor = scen_own_factor;
    s->region_factor_arg = ss;
    return 0;
}

static uint64_t grain_burden(void *arg, uint32_t loc)
{
    const scen_set *ss = arg;
    switch (loctab_grain_of(loctab_get(ss->burden_names, loc))) {
    case LOCTAB_GRAIN_TASK: return ss->task_burden;
    case LOCTAB_GRAIN_CHUNK: return ss->chunk_burden;
    default: return 0;
    }
}

int scen_add_burdened(scen_set *ss, const loctab *names, uint64_t task_cost,
                      uint64_t chunk_cost, uint64_t barrier_cost)
{
    ospg_scenario *s = add(ss, "burdened", 0);
    if (!s)
        return -1;
    ss->burden_names = names;
    ss->task_burden = task_cost;
    ss->chunk_burden = chunk_cost;
    s->factor = 0;
    s->grain_burden = grain_burden;
    s->grain_burden_arg = ss;
    s->barrier_burden = barrier_cost;
    return 0;
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

int scen_add_locs(scen_set *ss, const char *name, const uint32_t *locs,
                  size_t nlocs, const double *f, size_t nf)
{
    uint32_t *a = own(ss, nlocs);
    if (!a)
        return -1;
    memcpy(a, locs, nlocs * sizeof(*a));
    qsort(a, nlocs, sizeof(*a), cmp_u32);
    for (size_t k = 0; k < nf; k++) {
        ospg_scenario *s = add(ss, name, f[k]);
        if (!s)
            return -1;
        s->locs = a;
        s->nlocs = nlocs;
    }
    return 0;
}

/* "apps/x.c:12" matches "x.c:12" and "/abs/apps/x.c:12". */
static int where_matches(const char *where, const char *spec)
{
    size_t lw = strlen(where), ls = strlen(spec);
    if (lw == ls)
        return !strcmp(where, spec);
    if (lw > ls)
        return where[lw - ls - 1] == '/' && !strcmp(where + lw - ls, spec);
    return spec[ls - lw - 1] == '/' && !strcmp(spec + ls - lw, where);
}

int scen_add_spec(scen_set *ss, const char *spec, const loctab *lt,
                  const double *f, size_t nf, char *err, size_t errlen)
{
    uint32_t ids[64];
    size_t n = 0, nregion = 0;
    uint32_t region_loc = 0;
    for (const loctab_entry *e = loctab_first(lt); e && n < 64;
         e = loctab_next(lt, e)) {
        /* a sampled line is no directive: its code lies in some
         * directive's W-nodes, which carry their own location */
        if (!where_matches(e->where, spec) || report_is_line(e->directive))
            continue;
        if (!strcmp(e->directive, "region")) {
            region_loc = e->id;
            nregion++;
        } else {
            ids[n++] = e->id;
        }
    }
    if (nregion) {
        if (add_region(ss, lt, region_loc, f, nf))
            goto nomem;
        return 0;
    }
    if (n == 0) {
        snprintf(err, errlen,
                 "--speedup %s: no directive or region at that location in "
                 "this profile (use file:line as profile.csv shows it)",
                 spec);
        return -1;
    }
    if (scen_add_locs(ss, spec, ids, n, f, nf) == 0)
        return 0;
nomem:
    snprintf(err, errlen, "out of memory");
    return -1;
}
