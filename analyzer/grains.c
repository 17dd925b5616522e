/* grains.c - `whatif grains DIR`: every task and chunk of an offline
 * trace as a grain, their metrics, and the grain graph (grains.h).
 *
 * One replay of the trace reports each grain once its subtree has folded
 * (replay_hooks.grain).  Rows go to grains.csv as they come; what the
 * graphs and the summaries need is kept: per group (the grains of one
 * location at one depth of the grain tree) their count and every
 * grain's work (8 bytes a grain, for the median), per
 * worksharing instance the work of each thread, every timed grain's
 * interval (16 bytes, for the instantaneous parallelism), and the grains
 * themselves only while there are few enough to draw one by one.
 */
#include "grains.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "cli.h"
#include "html.h"
#include "loctab.h"
#include "replay.h"
#include "report.h"
#include "srcloc.h"
#include "timeline.h"

#include <uthash.h>

/* Grains drawn one by one at most (with their fork and join points);
 * above, the graph shows groups. */
#define FULL_MAX_DEFAULT 1000

/* Bins of the instantaneous parallelism over the run (parallelism.csv). */
#define TIMELINE_BINS 200

/* Threads whose chunk work an instance keeps apart (stream ids, which
 * the profiler numbers from 0). */
#define THREADS_MAX 65536

/* The grains of one location at one depth: one node of the aggregated
 * graph. */
typedef struct group_key {
    uint32_t depth, loc;
} group_key;

typedef struct group {
    group_key key;
    uint64_t id;           /* from 1, in order of first grain */
    uint64_t count, work, min, max;
    uint64_t low_benefit;  /* grains whose parallel benefit is below 1 */
    uint64_t *works;       /* every grain's work, for the median */
    size_t nworks, capworks;
    UT_hash_handle hh;
} group;

/* Edges of the aggregated graph: parent group -> group, with a count. */
typedef struct group_edge {
    struct { uint64_t from, to; } key;
    uint64_t count;
    UT_hash_handle hh;
} group_edge;

/* One worksharing instance: its chunks' work per thread. */
typedef struct instance {
    uint64_t id;
    uint32_t loc;
    uint64_t chunks;
    uint64_t *thread_work; /* indexed by thread */
    uint32_t nthreads;
    UT_hash_handle hh;
} instance;

typedef struct collect {
    FILE *csv;
    const loctab *names;
    double create_cost;    /* task_create_cost, 0 when not measured */
    double dispatch_cost;  /* chunk_dispatch_cost, likewise */
    group *groups;
    uint64_t ngroups;
    group_edge *edges;
    instance *instances;
    replay_grain *kept;    /* every grain while nkept <= full_max */
    size_t nkept, capkept;
    size_t full_max;
    int full_dropped;      /* more grains than full_max: kept is freed */
    uint64_t ngrains, nlow;
    timeline *busy;        /* the timed grains' intervals, by thread */
    uint64_t ntimed;       /* grains with a start and end (trace v5) */
    uint64_t origin;       /* the clock at the program's start */
    timeline_bin *bins;    /* its step function, once the replay is done */
    size_t nbins;
    timeline_summary tsum;
    int failed;            /* out of memory */
} collect;

typedef struct meta_sink {
    report_meta *meta;
    int failed;
} meta_sink;

static void on_meta(void *arg, const char *key, const char *value)
{
    meta_sink *ms = arg;
    if (report_meta_set(ms->meta, key, value))
        ms->failed = 1;
}

static const loctab_entry *name_of(const collect *c, uint32_t loc)
{
    return loctab_get(c->names, loc);
}

/* What the runtime paid to make a grain of loc runnable: creating a task,
 * handing out a loop chunk; 0 when not measured. */
static double grain_cost(const collect *c, uint32_t loc)
{
    switch (loctab_grain_of(name_of(c, loc))) {
    case LOCTAB_GRAIN_TASK: return c->create_cost;
    case LOCTAB_GRAIN_CHUNK: return c->dispatch_cost;
    default: return 0;
    }
}

/* A grain's parallel benefit: its own work over what the runtime paid to
 * make it runnable (NAN where that is not measured: runs with few tasks
 * or chunks, a metric that is not a time). */
static double benefit(const collect *c, const replay_grain *g)
{
    double cost = grain_cost(c, g->loc);
    return cost > 0 ? (double)g->work / cost : NAN;
}

static group *group_of(collect *c, uint32_t depth, uint32_t loc)
{
    group_key k = {depth, loc};
    group *gr;
    HASH_FIND(hh, c->groups, &k, sizeof(k), gr);
    if (gr)
        return gr;
    if (!(gr = calloc(1, sizeof(*gr))))
        return NULL;
    gr->key = k;
    gr->id = ++c->ngroups;
    gr->min = UINT64_MAX;
    HASH_ADD(hh, c->groups, key, sizeof(gr->key), gr);
    return gr;
}

static int group_add(collect *c, const replay_grain *g, double pb)
{
    group *gr = group_of(c, g->depth, g->loc);
    if (!gr)
        return -1;
    if (gr->nworks == gr->capworks) {
        size_t cap = gr->capworks ? 2 * gr->capworks : 16;
        uint64_t *w = realloc(gr->works, cap * sizeof(*w));
        if (!w)
            return -1;
        gr->works = w;
        gr->capworks = cap;
    }
    gr->works[gr->nworks++] = g->work;
    gr->count++;
    gr->work += g->work;
    if (g->work < gr->min)
        gr->min = g->work;
    if (g->work > gr->max)
        gr->max = g->work;
    gr->low_benefit += pb < 1;
    uint64_t from = 0;
    if (g->depth > 1) {
        group *pg = group_of(c, g->depth - 1, g->parent_loc);
        if (!pg)
            return -1;
        from = pg->id;
    }
    group_edge *e;
    struct { uint64_t from, to; } k = {from, gr->id};
    HASH_FIND(hh, c->edges, &k, sizeof(k), e);
    if (!e) {
        if (!(e = calloc(1, sizeof(*e))))
            return -1;
        e->key.from = from;
        e->key.to = gr->id;
        HASH_ADD(hh, c->edges, key, sizeof(e->key), e);
    }
    e->count++;
    return 0;
}

static int instance_add(collect *c, const replay_grain *g)
{
    instance *in;
    HASH_FIND(hh, c->instances, &g->instance, sizeof(g->instance), in);
    if (!in) {
        if (!(in = calloc(1, sizeof(*in))))
            return -1;
        in->id = g->instance;
        in->loc = g->loc;
        HASH_ADD(hh, c->instances, id, sizeof(in->id), in);
    }
    if (g->thread >= THREADS_MAX) /* a stream id no profiler writes */
        return 0;
    if (g->thread >= in->nthreads) {
        uint32_t n = g->thread + 1;
        uint64_t *tw = realloc(in->thread_work, n * sizeof(*tw));
        if (!tw)
            return -1;
        memset(tw + in->nthreads, 0, (n - in->nthreads) * sizeof(*tw));
        in->thread_work = tw;
        in->nthreads = n;
    }
    in->thread_work[g->thread] += g->work;
    in->chunks++;
    return 0;
}

static int keep(collect *c, const replay_grain *g)
{
    if (c->full_dropped)
        return 0;
    if (c->nkept == c->full_max) {
        free(c->kept);
        c->kept = NULL;
        c->full_dropped = 1;
        return 0;
    }
    if (c->nkept == c->capkept) {
        size_t cap = c->capkept ? 2 * c->capkept : 256;
        if (cap > c->full_max)
            cap = c->full_max;
        replay_grain *k = realloc(c->kept, cap * sizeof(*k));
        if (!k)
            return -1;
        c->kept = k;
        c->capkept = cap;
    }
    c->kept[c->nkept++] = *g;
    return 0;
}

static void csv_where(FILE *f, const collect *c, uint32_t loc)
{
    const loctab_entry *e = name_of(c, loc);
    report_csv_text(f, e ? e->where : "?");
    fputc(',', f);
    report_csv_text(f, e ? e->directive : "?");
}

/* A thread ran nothing inside a task: not running, in the timeline. */
static void on_wait(void *arg, uint32_t thread, uint64_t start_ns,
                    uint64_t end_ns)
{
    collect *c = arg;
    if (timeline_add_wait(c->busy, thread, start_ns, end_ns))
        c->failed = 1;
}

static void on_grain(void *arg, const replay_grain *g)
{
    collect *c = arg;
    double pb = benefit(c, g);
    c->ngrains++;
    c->nlow += pb < 1;
    fprintf(c->csv, "%llu,%llu,", (unsigned long long)g->id,
            (unsigned long long)g->parent);
    csv_where(c->csv, c, g->loc);
    fprintf(c->csv, ",%u,%u,%llu,%llu,%llu,%llu,", g->depth, g->thread,
            (unsigned long long)g->work, (unsigned long long)g->children,
            (unsigned long long)g->instance, (unsigned long long)g->scope);
    if (!isnan(pb))
        fprintf(c->csv, "%.3f", pb);
    if (g->timed)
        fprintf(c->csv, ",%lld,%lld",
                (long long)(int64_t)(g->start_ns - c->origin),
                (long long)(int64_t)(g->end_ns - c->origin));
    else
        fputs(",,", c->csv);
    fputc('\n', c->csv);
    if (g->timed) {
        c->ntimed++;
        if (timeline_add(c->busy, g->thread, g->start_ns, g->end_ns))
            c->failed = 1;
    }
    if (group_add(c, g, pb) || (g->instance && instance_add(c, g)) ||
        keep(c, g))
        c->failed = 1;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

static uint64_t median(group *gr)
{
    if (!gr->nworks)
        return 0;
    qsort(gr->works, gr->nworks, sizeof(*gr->works), cmp_u64);
    return gr->works[gr->nworks / 2];
}

static int by_group_id(const group *a, const group *b)
{
    return (a->id > b->id) - (a->id < b->id);
}

static int by_instance_id(const instance *a, const instance *b)
{
    return (a->id > b->id) - (a->id < b->id);
}

/* ---- Tables ---- */

static int write_groups_csv(const char *path, collect *c, char *err,
                            size_t errlen)
{
    char tmp[PATH_MAX + 64];
    FILE *f = report_open_tmp(path, tmp, sizeof(tmp), err, errlen);
    if (!f)
        return -1;
    fputs("group,location,directive,depth,grains,work,min_work,"
          "median_work,max_work,low_benefit\n",
          f);
    HASH_SORT(c->groups, by_group_id);
    for (group *gr = c->groups; gr; gr = gr->hh.next) {
        fprintf(f, "%llu,", (unsigned long long)gr->id);
        csv_where(f, c, gr->key.loc);
        fprintf(f, ",%u,%llu,%llu,%llu,%llu,%llu,%llu\n", gr->key.depth,
                (unsigned long long)gr->count, (unsigned long long)gr->work,
                (unsigned long long)(gr->count ? gr->min : 0),
                (unsigned long long)median(gr),
                (unsigned long long)gr->max,
                (unsigned long long)gr->low_benefit);
    }
    return report_close_tmp(f, tmp, path, !ferror(f), err, errlen);
}

/* An instance's work, its busiest thread's and the threads that ran
 * chunks of it. */
static void instance_sums(const instance *in, uint64_t *total,
                          uint64_t *most, uint64_t *threads)
{
    *total = *most = *threads = 0;
    for (uint32_t t = 0; t < in->nthreads; t++) {
        *threads += in->thread_work[t] > 0;
        *total += in->thread_work[t];
        if (in->thread_work[t] > *most)
            *most = in->thread_work[t];
    }
}

/* The load balance of each worksharing instance: the most work one
 * thread did over the mean of the threads that ran chunks. */
static int write_instances_csv(const char *path, collect *c, char *err,
                               size_t errlen)
{
    char tmp[PATH_MAX + 64];
    FILE *f = report_open_tmp(path, tmp, sizeof(tmp), err, errlen);
    if (!f)
        return -1;
    fputs("instance,location,directive,chunks,threads,work,"
          "max_thread_work,mean_thread_work,load_balance\n",
          f);
    HASH_SORT(c->instances, by_instance_id);
    for (instance *in = c->instances; in; in = in->hh.next) {
        uint64_t total, most, threads;
        instance_sums(in, &total, &most, &threads);
        double mean = threads ? (double)total / (double)threads : 0;
        fprintf(f, "%llu,", (unsigned long long)in->id);
        csv_where(f, c, in->loc);
        fprintf(f, ",%llu,%llu,%llu,%llu,%.1f,", (unsigned long long)in->chunks,
                (unsigned long long)threads, (unsigned long long)total,
                (unsigned long long)most, mean);
        if (mean > 0)
            fprintf(f, "%.3f", (double)most / mean);
        fputc('\n', f);
    }
    return report_close_tmp(f, tmp, path, !ferror(f), err, errlen);
}

/* ---- Graphs ----
 *
 * One description, two syntaxes: the writer calls node() and edge() and
 * each format prints them its way. */

typedef struct attr {
    const char *key;
    const char *text;   /* or NULL: */
    double num;         /* a number (NAN: left out) */
} attr;

typedef struct graph_out {
    FILE *graphml, *dot;
    unsigned long long edges;
} graph_out;

static void dot_text(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            fputc('\\', f);
        fputc(*s, f);
    }
}

static void num_text(char *buf, size_t len, double v)
{
    if (v == floor(v) && fabs(v) < 1e18)
        snprintf(buf, len, "%.0f", v);
    else
        snprintf(buf, len, "%.3f", v);
}

static void node(graph_out *o, const char *id, const char *label,
                 const char *shape, const attr *a, size_t na)
{
    char v[64];
    fprintf(o->graphml, "<node id=\"%s\"><data key=\"label\">", id);
    html_escape(o->graphml, label);
    fputs("</data>", o->graphml);
    fprintf(o->dot, "  %s [label=\"", id);
    dot_text(o->dot, label);
    fprintf(o->dot, "\", shape=%s", shape);
    for (size_t i = 0; i < na; i++) {
        if (!a[i].text && isnan(a[i].num))
            continue;
        const char *t = a[i].text;
        if (!t) {
            num_text(v, sizeof(v), a[i].num);
            t = v;
        }
        fprintf(o->graphml, "<data key=\"%s\">", a[i].key);
        html_escape(o->graphml, t);
        fputs("</data>", o->graphml);
        fprintf(o->dot, ", %s=\"", a[i].key);
        dot_text(o->dot, t);
        fputc('"', o->dot);
    }
    fputs("</node>\n", o->graphml);
    fputs("];\n", o->dot);
}

static void edge(graph_out *o, const char *from, const char *to,
                 const char *kind, double count)
{
    fprintf(o->graphml, "<edge id=\"e%llu\" source=\"%s\" target=\"%s\">"
                        "<data key=\"edge_kind\">%s</data>",
            ++o->edges, from, to, kind);
    fprintf(o->dot, "  %s -> %s [edge_kind=\"%s\"", from, to, kind);
    if (!isnan(count)) {
        fprintf(o->graphml, "<data key=\"count\">%.0f</data>", count);
        fprintf(o->dot, ", label=\"%.0f\"", count);
    }
    fputs("</edge>\n", o->graphml);
    fputs("];\n", o->dot);
}

/* The keys every node or edge may carry (GraphML declares them first). */
static const char *const node_keys[][2] = {
    {"label", "string"},     {"kind", "string"},
    {"location", "string"},  {"directive", "string"},
    {"depth", "int"},        {"thread", "int"},
    {"work", "double"},      {"children", "int"},
    {"instance", "int"},     {"parallel_benefit", "double"},
    {"grains", "int"},       {"min_work", "double"},
    {"median_work", "double"}, {"max_work", "double"},
    {"low_benefit", "int"},
};

static void graph_begin(graph_out *o, const char *what)
{
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
          "<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\" "
          "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
          "xsi:schemaLocation=\"http://graphml.graphdrawing.org/xmlns "
          "http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd\">\n",
          o->graphml);
    for (size_t i = 0; i < sizeof(node_keys) / sizeof(node_keys[0]); i++)
        fprintf(o->graphml, "<key id=\"%s\" for=\"node\" attr.name=\"%s\" "
                            "attr.type=\"%s\"/>\n",
                node_keys[i][0], node_keys[i][0], node_keys[i][1]);
    fputs("<key id=\"edge_kind\" for=\"edge\" attr.name=\"kind\" "
          "attr.type=\"string\"/>\n"
          "<key id=\"count\" for=\"edge\" attr.name=\"count\" "
          "attr.type=\"int\"/>\n",
          o->graphml);
    fprintf(o->graphml, "<graph id=\"%s\" edgedefault=\"directed\">\n", what);
    fprintf(o->dot, "digraph %s {\n  rankdir=TB;\n", what);
}

static void graph_end(graph_out *o)
{
    fputs("</graph>\n</graphml>\n", o->graphml);
    fputs("}\n", o->dot);
}

static void loc_attrs(const collect *c, uint32_t loc, attr *a)
{
    const loctab_entry *e = name_of(c, loc);
    a[0] = (attr){"location", e ? e->where : "?", NAN};
    a[1] = (attr){"directive", e ? e->directive : "?", NAN};
}

static void group_label(const collect *c, const group *gr, char *buf,
                        size_t len)
{
    const loctab_entry *e = name_of(c, gr->key.loc);
    snprintf(buf, len, "%s %s x%llu", e ? e->directive : "?",
             e ? e->where : "?", (unsigned long long)gr->count);
}

/* Groups as nodes, creation edges between them with counts. */
static void write_aggregated(graph_out *o, collect *c)
{
    char id[32], to[32], label[PATH_MAX + 64];
    graph_begin(o, "aggregated_grain_graph");
    node(o, "g0", "program", "box",
         (attr[]){{"kind", "program", NAN}}, 1);
    for (group *gr = c->groups; gr; gr = gr->hh.next) {
        attr a[10];
        loc_attrs(c, gr->key.loc, a);
        a[2] = (attr){"kind", "group", NAN};
        a[3] = (attr){"depth", NULL, gr->key.depth};
        a[4] = (attr){"grains", NULL, (double)gr->count};
        a[5] = (attr){"work", NULL, (double)gr->work};
        a[6] = (attr){"min_work", NULL, gr->count ? (double)gr->min : 0};
        a[7] = (attr){"median_work", NULL, (double)median(gr)};
        a[8] = (attr){"max_work", NULL, (double)gr->max};
        a[9] = (attr){"low_benefit", NULL, (double)gr->low_benefit};
        snprintf(id, sizeof(id), "g%llu", (unsigned long long)gr->id);
        group_label(c, gr, label, sizeof(label));
        node(o, id, label, "ellipse", a, 10);
    }
    for (group_edge *e = c->edges; e; e = e->hh.next) {
        snprintf(id, sizeof(id), "g%llu", (unsigned long long)e->key.from);
        snprintf(to, sizeof(to), "g%llu", (unsigned long long)e->key.to);
        edge(o, id, to, "create", (double)e->count);
    }
    graph_end(o);
}

/* A sync scope of the full graph: its fork and join points, the grain
 * whose code opened it, and the exit of each of its grains. */
typedef struct scope_ref {
    uint64_t scope;
    uint64_t owner;       /* grain id (0: the program) */
    const struct scope_ref *prev; /* the owner's scope before it */
    UT_hash_handle hh;
} scope_ref;

/* A grain's last scope so far, by grain id. */
typedef struct owner_last {
    uint64_t owner;
    const scope_ref *last;
    UT_hash_handle hh;
} owner_last;

static int cmp_grain_id(const void *a, const void *b)
{
    const replay_grain *x = a, *y = b;
    return (x->id > y->id) - (x->id < y->id);
}

static int by_scope(const scope_ref *a, const scope_ref *b)
{
    return (a->scope > b->scope) - (a->scope < b->scope);
}

/* Where control leaves grain id: the join of its last scope, or the
 * grain itself. */
static void grain_exit(owner_last *lasts, uint64_t id, char *buf,
                       size_t len)
{
    owner_last *ol;
    HASH_FIND(hh, lasts, &id, sizeof(id), ol);
    if (ol)
        snprintf(buf, len, "j%llu", (unsigned long long)ol->last->scope);
    else
        snprintf(buf, len, "t%llu", (unsigned long long)id);
}

/* Every grain, with the fork and join point of each sync scope: a grain
 * forks into its scopes in the order they began, each joined before the
 * next; the program's own scopes (those of its threads) each run from
 * the program's start to its end. */
static int write_full(graph_out *o, collect *c)
{
    qsort(c->kept, c->nkept, sizeof(*c->kept), cmp_grain_id);
    scope_ref *scopes = NULL, *s, *tmp;
    owner_last *lasts = NULL, *ol, *oltmp;
    int rc = -1;
    for (size_t i = 0; i < c->nkept; i++) {
        const replay_grain *g = &c->kept[i];
        HASH_FIND(hh, scopes, &g->scope, sizeof(g->scope), s);
        if (s)
            continue;
        if (!(s = calloc(1, sizeof(*s))))
            goto out;
        s->scope = g->scope;
        s->owner = g->parent;
        HASH_ADD(hh, scopes, scope, sizeof(s->scope), s);
    }
    HASH_SORT(scopes, by_scope);
    /* each grain's scopes in the order they began */
    for (s = scopes; s; s = s->hh.next) {
        if (!s->owner)
            continue;
        HASH_FIND(hh, lasts, &s->owner, sizeof(s->owner), ol);
        if (!ol) {
            if (!(ol = calloc(1, sizeof(*ol))))
                goto out;
            ol->owner = s->owner;
            HASH_ADD(hh, lasts, owner, sizeof(ol->owner), ol);
        }
        s->prev = ol->last;
        ol->last = s;
    }
    char id[32], from[32], label[PATH_MAX + 64];
    graph_begin(o, "grain_graph");
    node(o, "t0", "program start", "box",
         (attr[]){{"kind", "program", NAN}}, 1);
    node(o, "end", "program end", "box",
         (attr[]){{"kind", "program_end", NAN}}, 1);
    for (size_t i = 0; i < c->nkept; i++) {
        const replay_grain *g = &c->kept[i];
        attr a[9];
        loc_attrs(c, g->loc, a);
        a[2] = (attr){"kind", "grain", NAN};
        a[3] = (attr){"depth", NULL, g->depth};
        a[4] = (attr){"thread", NULL, g->thread};
        a[5] = (attr){"work", NULL, (double)g->work};
        a[6] = (attr){"children", NULL, (double)g->children};
        a[7] = (attr){"instance", NULL, g->instance ? (double)g->instance
                                                    : NAN};
        a[8] = (attr){"parallel_benefit", NULL, benefit(c, g)};
        snprintf(id, sizeof(id), "t%llu", (unsigned long long)g->id);
        const loctab_entry *e = name_of(c, g->loc);
        snprintf(label, sizeof(label), "%s %s #%llu", e ? e->directive : "?",
                 e ? e->where : "?", (unsigned long long)g->id);
        node(o, id, label, "ellipse", a, 9);
    }
    for (s = scopes; s; s = s->hh.next) {
        snprintf(id, sizeof(id), "f%llu", (unsigned long long)s->scope);
        node(o, id, "fork", "point", (attr[]){{"kind", "fork", NAN}}, 1);
        snprintf(id, sizeof(id), "j%llu", (unsigned long long)s->scope);
        node(o, id, "join", "point", (attr[]){{"kind", "join", NAN}}, 1);
    }
    /* a grain's scopes in series; the program's side by side */
    for (s = scopes; s; s = s->hh.next) {
        char fork[32], join[32];
        snprintf(fork, sizeof(fork), "f%llu", (unsigned long long)s->scope);
        snprintf(join, sizeof(join), "j%llu", (unsigned long long)s->scope);
        const scope_ref *prev = s->prev;
        if (prev)
            snprintf(from, sizeof(from), "j%llu",
                     (unsigned long long)prev->scope);
        else
            snprintf(from, sizeof(from), "t%llu",
                     (unsigned long long)s->owner);
        edge(o, from, fork, "continue", NAN);
        if (!s->owner)
            edge(o, join, "end", "continue", NAN);
    }
    for (size_t i = 0; i < c->nkept; i++) {
        const replay_grain *g = &c->kept[i];
        char gid[32], join[32];
        snprintf(id, sizeof(id), "f%llu", (unsigned long long)g->scope);
        snprintf(gid, sizeof(gid), "t%llu", (unsigned long long)g->id);
        edge(o, id, gid, "create", NAN);
        grain_exit(lasts, g->id, from, sizeof(from));
        snprintf(join, sizeof(join), "j%llu", (unsigned long long)g->scope);
        edge(o, from, join, "sync", NAN);
    }
    graph_end(o);
    rc = 0;
out:
    HASH_ITER(hh, lasts, ol, oltmp) {
        HASH_DEL(lasts, ol);
        free(ol);
    }
    HASH_ITER(hh, scopes, s, tmp) {
        HASH_DEL(scopes, s);
        free(s);
    }
    return rc;
}

static int write_graphs(const char *outdir, collect *c, int full,
                        char *err, size_t errlen)
{
    char pg[PATH_MAX + 32], pd[PATH_MAX + 32], tg[PATH_MAX + 64],
        td[PATH_MAX + 64];
    snprintf(pg, sizeof(pg), "%s/grains.graphml", outdir);
    snprintf(pd, sizeof(pd), "%s/grains.dot", outdir);
    graph_out o = {report_open_tmp(pg, tg, sizeof(tg), err, errlen), NULL,
                   0};
    if (!o.graphml)
        return -1;
    if (!(o.dot = report_open_tmp(pd, td, sizeof(td), err, errlen))) {
        report_close_tmp(o.graphml, tg, pg, 0, err, errlen);
        return -1;
    }
    int ok = 1;
    if (full)
        ok = write_full(&o, c) == 0;
    else
        write_aggregated(&o, c);
    ok = ok && !ferror(o.graphml) && !ferror(o.dot);
    int r1 = report_close_tmp(o.graphml, tg, pg, ok, err, errlen);
    int r2 = report_close_tmp(o.dot, td, pd, ok && !r1, err, errlen);
    if (!ok && !r1 && !r2)
        snprintf(err, errlen, "%s: could not be written", pg);
    return ok && !r1 && !r2 ? 0 : -1;
}

/* ---- The run's database ----
 *
 * The groups, their edges and the worksharing instances go into the run's
 * profile.db too (tables grain_group, grain_edge, grain_instance, replaced
 * whole), where whatif report draws them. */

/* The instantaneous parallelism: the timed grains' step function in bins,
 * to parallelism.csv (times from the program's start) and, for the
 * database, kept in c. */
static int write_timeline(const char *path, collect *c, char *err,
                          size_t errlen)
{
    if (timeline_bins(c->busy, TIMELINE_BINS, &c->bins, &c->nbins,
                      &c->tsum)) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    char tmp[PATH_MAX + 64];
    FILE *f = report_open_tmp(path, tmp, sizeof(tmp), err, errlen);
    if (!f)
        return -1;
    fputs("start_ns,end_ns,mean_running,max_running\n", f);
    for (size_t k = 0; k < c->nbins; k++)
        fprintf(f, "%lld,%lld,%.3f,%u\n",
                (long long)(int64_t)(c->bins[k].start - c->origin),
                (long long)(int64_t)(c->bins[k].end - c->origin),
                c->bins[k].mean, c->bins[k].max);
    return report_close_tmp(f, tmp, path, !ferror(f), err, errlen);
}

static int db_text(sqlite3_stmt *st, int col, const char *s)
{
    return sqlite3_bind_text(st, col, s ? s : "?", -1, SQLITE_TRANSIENT);
}

static int db_groups(sqlite3 *db, collect *c)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "INSERT INTO grain_group VALUES (?, ?, "
                                    "?, ?, ?, ?, ?, ?, ?, ?)",
                                -1, &st, NULL);
    for (group *gr = c->groups; rc == SQLITE_OK && gr; gr = gr->hh.next) {
        const loctab_entry *e = name_of(c, gr->key.loc);
        sqlite3_bind_int64(st, 1, (sqlite3_int64)gr->id);
        db_text(st, 2, e ? e->where : NULL);
        db_text(st, 3, e ? e->directive : NULL);
        sqlite3_bind_int64(st, 4, gr->key.depth);
        sqlite3_bind_int64(st, 5, (sqlite3_int64)gr->count);
        sqlite3_bind_int64(st, 6, (sqlite3_int64)gr->work);
        sqlite3_bind_int64(st, 7, (sqlite3_int64)(gr->count ? gr->min : 0));
        sqlite3_bind_int64(st, 8, (sqlite3_int64)median(gr));
        sqlite3_bind_int64(st, 9, (sqlite3_int64)gr->max);
        sqlite3_bind_int64(st, 10, (sqlite3_int64)gr->low_benefit);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_OK)
        return rc;
    rc = sqlite3_prepare_v2(db, "INSERT INTO grain_edge VALUES (?, ?, ?)", -1,
                            &st, NULL);
    for (group_edge *e = c->edges; rc == SQLITE_OK && e; e = e->hh.next) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)e->key.from);
        sqlite3_bind_int64(st, 2, (sqlite3_int64)e->key.to);
        sqlite3_bind_int64(st, 3, (sqlite3_int64)e->count);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

static int db_instances(sqlite3 *db, collect *c)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "INSERT INTO grain_instance VALUES (?, "
                                    "?, ?, ?, ?, ?, ?, ?)",
                                -1, &st, NULL);
    for (instance *in = c->instances; rc == SQLITE_OK && in;
         in = in->hh.next) {
        uint64_t total, most, threads;
        instance_sums(in, &total, &most, &threads);
        const loctab_entry *e = name_of(c, in->loc);
        sqlite3_bind_int64(st, 1, (sqlite3_int64)in->id);
        db_text(st, 2, e ? e->where : NULL);
        db_text(st, 3, e ? e->directive : NULL);
        sqlite3_bind_int64(st, 4, (sqlite3_int64)in->chunks);
        sqlite3_bind_int64(st, 5, (sqlite3_int64)threads);
        sqlite3_bind_int64(st, 6, (sqlite3_int64)total);
        sqlite3_bind_int64(st, 7, (sqlite3_int64)most);
        if (threads && total)
            sqlite3_bind_double(st, 8,
                                (double)most * threads / (double)total);
        else
            sqlite3_bind_null(st, 8);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

static int db_timeline(sqlite3 *db, collect *c)
{
    sqlite3_stmt *st = NULL;
    int rc = sqlite3_prepare_v2(db, "INSERT INTO grain_timeline VALUES (?, "
                                    "?, ?, ?)",
                                -1, &st, NULL);
    for (size_t k = 0; rc == SQLITE_OK && k < c->nbins; k++) {
        sqlite3_bind_int64(st, 1, (sqlite3_int64)(c->bins[k].start -
                                                  c->origin));
        sqlite3_bind_int64(st, 2,
                           (sqlite3_int64)(c->bins[k].end - c->origin));
        sqlite3_bind_double(st, 3, c->bins[k].mean);
        sqlite3_bind_int64(st, 4, c->bins[k].max);
        rc = sqlite3_step(st) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset(st);
    }
    sqlite3_finalize(st);
    return rc;
}

/* Writes the grain tables into dir/profile.db.  Returns 0, 1 when there
 * is no profile.db there, -1 with err set. */
static int db_write(const char *dir, collect *c, char *err, size_t errlen)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/profile.db", dir);
    struct stat sb;
    if (stat(path, &sb))
        return 1;
    sqlite3 *db = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL);
    if (rc == SQLITE_OK) {
        sqlite3_busy_timeout(db, 2000);
        rc = sqlite3_exec(
            db,
            "BEGIN; DROP TABLE IF EXISTS grain_group;"
            " DROP TABLE IF EXISTS grain_edge;"
            " DROP TABLE IF EXISTS grain_instance;"
            " DROP TABLE IF EXISTS grain_timeline;"
            " CREATE TABLE grain_group(id INTEGER PRIMARY KEY,"
            " location TEXT NOT NULL, directive TEXT NOT NULL,"
            " depth INTEGER NOT NULL, grains INTEGER NOT NULL,"
            " work INTEGER NOT NULL, min_work INTEGER NOT NULL,"
            " median_work INTEGER NOT NULL, max_work INTEGER NOT NULL,"
            " low_benefit INTEGER NOT NULL);"
            " CREATE TABLE grain_edge(from_group INTEGER NOT NULL,"
            " to_group INTEGER NOT NULL, grains INTEGER NOT NULL);"
            " CREATE TABLE grain_instance(id INTEGER PRIMARY KEY,"
            " location TEXT NOT NULL, directive TEXT NOT NULL,"
            " chunks INTEGER NOT NULL, threads INTEGER NOT NULL,"
            " work INTEGER NOT NULL, max_thread_work INTEGER NOT NULL,"
            " load_balance REAL);"
            " CREATE TABLE grain_timeline(start_ns INTEGER NOT NULL,"
            " end_ns INTEGER NOT NULL, mean_running REAL NOT NULL,"
            " max_running INTEGER NOT NULL);",
            NULL, NULL, NULL);
    }
    if (rc == SQLITE_OK)
        rc = db_groups(db, c);
    if (rc == SQLITE_OK)
        rc = db_instances(db, c);
    if (rc == SQLITE_OK)
        rc = db_timeline(db, c);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
    if (rc != SQLITE_OK)
        snprintf(err, errlen, "%s: %s", path,
                 db ? sqlite3_errmsg(db) : "cannot open");
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}

static void collect_free(collect *c)
{
    group *gr, *gt;
    HASH_ITER(hh, c->groups, gr, gt) {
        HASH_DEL(c->groups, gr);
        free(gr->works);
        free(gr);
    }
    group_edge *e, *et;
    HASH_ITER(hh, c->edges, e, et) {
        HASH_DEL(c->edges, e);
        free(e);
    }
    instance *in, *it;
    HASH_ITER(hh, c->instances, in, it) {
        HASH_DEL(c->instances, in);
        free(in->thread_work);
        free(in);
    }
    free(c->kept);
    timeline_free(c->busy);
    free(c->bins);
}

int grains_write(const char *trace_dir, const char *outdir,
                 const grains_opts *go, grains_result *res, char *err,
                 size_t errlen)
{
    int rc = -1;
    loctab *lt = loctab_new(), *named = NULL;
    meta_sink ms = {report_meta_new(), 0};
    collect c;
    memset(&c, 0, sizeof(c));
    memset(res, 0, sizeof(*res));
    ospg_profile prof = {0};
    char csv_path[PATH_MAX + 32], csv_tmp[PATH_MAX + 64];
    if (err && errlen)
        err[0] = 0;
    if (!lt || !ms.meta) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    replay_hooks scan = {.meta = on_meta, .arg = &ms, .scan_only = 1,
                         .allow_partial = go->partial,
                         .progress = "reading the trace's names"};
    if (replay_dir(trace_dir, 1, NULL, lt, &scan, &prof, NULL, err, errlen))
        goto out;
    if (report_meta_get(ms.meta, "unsupported")) {
        snprintf(err, errlen, "%s: the program ran %s, which whatif does not "
                 "support: no grains", trace_dir,
                 report_meta_get(ms.meta, "unsupported"));
        goto out;
    }
    size_t unresolved = 0;
    char warn[1024];
    if (ms.failed ||
        srcloc_resolve(lt, ms.meta, &named, &unresolved, warn, sizeof(warn))) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (unresolved)
        fprintf(stderr, "whatif: warning: %s\n", warn);
    /* the costs are measured in ns: comparable with work only when the
     * run's metric is a time */
    const char *cost = report_meta_get(ms.meta, "task_create_cost");
    const char *dcost = report_meta_get(ms.meta, "chunk_dispatch_cost");
    const char *unit = report_meta_get(ms.meta, "metric_unit");
    int in_ns = unit && !strcmp(unit, "ns");
    c.create_cost = cost && in_ns ? strtod(cost, NULL) : 0;
    c.dispatch_cost = dcost && in_ns ? strtod(dcost, NULL) : 0;
    c.names = named;
    c.full_max = go->full_max ? go->full_max : FULL_MAX_DEFAULT;
    const char *origin = report_meta_get(ms.meta, "clock_origin_ns");
    c.origin = origin ? strtoull(origin, NULL, 10) : 0;
    if (!(c.busy = timeline_new())) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (mkdir(outdir, 0777) && errno != EEXIST) {
        snprintf(err, errlen, "%s: %s", outdir, strerror(errno));
        goto out;
    }
    snprintf(csv_path, sizeof(csv_path), "%s/grains.csv", outdir);
    if (!(c.csv = report_open_tmp(csv_path, csv_tmp, sizeof(csv_tmp), err,
                                  errlen)))
        goto out;
    fputs("grain,parent,location,directive,depth,thread,work,children,"
          "instance,scope,parallel_benefit,start_ns,end_ns\n",
          c.csv);
    replay_hooks hooks = {.grain = on_grain, .wait = on_wait, .arg = &c,
                          .allow_partial = go->partial,
                          .progress = "reading the grains"};
    ospg_profile_free(&prof);
    replay_stats st;
    int replayed = replay_dir(trace_dir, 1, NULL, lt, &hooks, &prof, &st,
                              err, errlen);
    int ok = !replayed && !c.failed && !ferror(c.csv);
    if (c.failed)
        snprintf(err, errlen, "out of memory");
    /* refused before any file is replaced */
    if (ok && go->full && c.full_dropped) {
        snprintf(err, errlen, "%llu grains: more than --full-max %zu to draw "
                 "one by one", (unsigned long long)c.ngrains, c.full_max);
        ok = 0;
    }
    char cerr[PATH_MAX + 128] = "";
    /* a write that failed (a full disk): report_close_tmp says which */
    int write_failed = !replayed && !c.failed && ferror(c.csv);
    if (report_close_tmp(c.csv, csv_tmp, csv_path, ok, cerr, sizeof(cerr)) &&
        (ok || write_failed)) {
        snprintf(err, errlen, "%s", cerr);
        ok = 0;
    }
    c.csv = NULL;
    if (!ok)
        goto out;
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/grain_groups.csv", outdir);
    if (write_groups_csv(path, &c, err, errlen))
        goto out;
    snprintf(path, sizeof(path), "%s/instances.csv", outdir);
    if (write_instances_csv(path, &c, err, errlen))
        goto out;
    snprintf(path, sizeof(path), "%s/parallelism.csv", outdir);
    if (write_timeline(path, &c, err, errlen))
        goto out;
    int full = go->aggregate ? 0 : !c.full_dropped;
    if (write_graphs(outdir, &c, full, err, errlen))
        goto out;
    /* the run's database and report, when it has them */
    int in_db = db_write(go->run_dir ? go->run_dir : outdir, &c, err, errlen);
    if (in_db < 0)
        goto out;
    res->in_report = 0;
    if (in_db == 0) {
        char rep[PATH_MAX + 32];
        snprintf(rep, sizeof(rep), "%s/report.html",
                 go->run_dir ? go->run_dir : outdir);
        struct stat rsb;
        if (!stat(rep, &rsb)) {
            if (html_report(go->run_dir ? go->run_dir : outdir, NULL, err,
                            errlen))
                goto out;
            res->in_report = 1;
        }
    }
    res->grains = c.ngrains;
    res->groups = c.ngroups;
    res->instances = HASH_COUNT(c.instances);
    res->low_benefit = c.nlow;
    res->full = full;
    res->partial = st.partial;
    res->timed = c.ntimed;
    res->threads = c.tsum.threads;
    res->max_running = c.tsum.max;
    res->mean_running = c.tsum.mean;
    res->available = prof.span && prof.span[0]
                         ? (double)prof.work / (double)prof.span[0]
                         : 0;
    rc = 0;
out:
    if (c.csv)
        report_close_tmp(c.csv, csv_tmp, csv_path, 0, warn, sizeof(warn));
    collect_free(&c);
    ospg_profile_free(&prof);
    loctab_free(named);
    loctab_free(lt);
    report_meta_free(ms.meta);
    return rc;
}

/* ---- The command ---- */

static void usage(FILE *f)
{
    fputs("usage: whatif grains [-o DIR] [--full | --aggregate] "
          "[--full-max N] [--partial] [-q] RUN_DIR\n"
          "\n"
          "Every task and loop chunk of an offline run (its trace) as a\n"
          "grain: DIR/grains.csv (one row per grain: parent, location,\n"
          "thread, own work, children, parallel benefit, start and end\n"
          "time), grain_groups.csv (the grains of one location at one\n"
          "depth: count, min, median, max work), instances.csv (the load\n"
          "balance of each worksharing instance), parallelism.csv (grains\n"
          "running at once over time), and the grain graph as\n"
          "grains.graphml and grains.dot:\n"
          "every grain with its fork and join points when there are at\n"
          "most N (--full-max, 1000), else one node per group.\n"
          "DIR: RUN_DIR unless -o.\n",
          f);
}

int cmd_grains(int argc, char **argv)
{
    const char *out = NULL, *dir = NULL;
    grains_opts go = {0};
    int quiet = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            usage(stdout);
            return 0;
        } else if (!strcmp(argv[i], "-o") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(argv[i], "--full")) {
            go.full = 1;
        } else if (!strcmp(argv[i], "--aggregate")) {
            go.aggregate = 1;
        } else if (!strcmp(argv[i], "--full-max") && i + 1 < argc) {
            char *end;
            errno = 0;
            unsigned long long n = strtoull(argv[++i], &end, 10);
            if (errno || *end || !n || n > 100000000ull ||
                argv[i][0] == '-') {
                fprintf(stderr, "whatif grains: --full-max '%s': a count from "
                                "1 to 100000000\n", argv[i]);
                return 2;
            }
            go.full_max = (size_t)n;
        } else if (!strcmp(argv[i], "--partial")) {
            go.partial = 1;
        } else if (!strcmp(argv[i], "-q")) {
            quiet = 1;
        } else if (argv[i][0] == '-' || dir) {
            fprintf(stderr, "whatif grains: unexpected argument '%s' (see "
                            "whatif grains --help)\n", argv[i]);
            return 2;
        } else {
            dir = argv[i];
        }
    }
    if (!dir) {
        fprintf(stderr, "whatif grains: a run directory (see whatif grains "
                        "--help)\n");
        return 2;
    }
    if (go.full && go.aggregate) {
        fprintf(stderr, "whatif grains: --full or --aggregate, not both\n");
        return 2;
    }
    char trace[PATH_MAX];
    struct stat sb;
    int run_dir = snprintf(trace, sizeof(trace), "%s/trace", dir) <
                      (int)sizeof(trace) &&
                  stat(trace, &sb) == 0 && S_ISDIR(sb.st_mode);
    if (run_dir)
        go.run_dir = dir;
    if (!run_dir) {
        if (stat(dir, &sb) == 0 && S_ISDIR(sb.st_mode) &&
            snprintf(trace, sizeof(trace), "%s/profile.db", dir) > 0 &&
            stat(trace, &sb) == 0) {
            fprintf(stderr, "whatif grains: %s has no trace: grains need an "
                            "offline run (whatif run --mode offline); on "
                            "the fly, profile.csv has each location's grain "
                            "count and mean work\n", dir);
            return 1;
        }
        snprintf(trace, sizeof(trace), "%s", dir);
    }
    grains_result res;
    char err[PATH_MAX + 512] = "";
    if (grains_write(trace, out ? out : dir, &go, &res, err, sizeof(err))) {
        fprintf(stderr, "whatif grains: %s\n", err);
        return 1;
    }
    if (!quiet) {
        fprintf(stderr, "whatif grains: %llu grains in %llu groups, %llu "
                        "worksharing instances",
                (unsigned long long)res.grains,
                (unsigned long long)res.groups,
                (unsigned long long)res.instances);
        if (res.timed)
            fprintf(stderr, "; %llu timed: %.2f running on average, at most "
                            "%u at once on %u threads (available "
                            "parallelism %.2f)",
                    (unsigned long long)res.timed, res.mean_running,
                    res.max_running, res.threads, res.available);
        if (res.low_benefit)
            fprintf(stderr, "; %llu grains hold less work than the runtime "
                            "paid to create or hand them out (parallel "
                            "benefit below 1: better run serially, or in "
                            "larger grains)",
                    (unsigned long long)res.low_benefit);
        fprintf(stderr, "\nwhatif grains: %s/grains.csv, grain_groups.csv, "
                        "instances.csv, parallelism.csv, grains.graphml and "
                        "grains.dot (%s)\n",
                out ? out : dir,
                res.full ? "every grain" : "aggregated: one node per group");
        if (res.in_report)
            fprintf(stderr, "whatif grains: %s/report.html shows the grain "
                            "groups\n", dir);
        if (res.partial)
            fprintf(stderr, "whatif grains: the trace is incomplete: the "
                            "grains are those recorded\n");
    }
    return 0;
}
