/* replay.c - feeds trace streams to the analysis core in causal order.
 *
 * Streams are read round-robin, a bounded batch at a time, so that streams
 * written side by side are consumed side by side and the set of live nodes
 * stays what it was in the run.  A record naming an unknown node blocks its
 * stream; when every unfinished stream is blocked, the trace is inconsistent
 * and the first blocked record is reported.
 */
#include "replay.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Node ids are unique 64-bit counters: a cheap mix hashes them well. */
#define HASH_FUNCTION(keyptr, keylen, hashv)                                \
    do {                                                                    \
        uint64_t k_;                                                        \
        memcpy(&k_, (keyptr), sizeof(k_));                                  \
        (void)(keylen);                                                     \
        k_ *= 0x9e3779b97f4a7c15ull;                                        \
        (hashv) = (unsigned)(k_ >> 32);                                     \
    } while (0)
#include <uthash.h>

#include "trace.h"

#define BATCH 1024 /* records per stream per turn */

enum { MAP_NODE = 1, MAP_GROUP = 2 };

/* A grain being replayed (hooks.grain): reported and freed when its node
 * is released. */
typedef struct grain_state {
    replay_grain g;
} grain_state;

typedef struct id_entry {
    uint64_t id;
    int type;
    ospg_node *node;
    ospg_group *group;
    uint64_t owner;     /* MAP_GROUP: the owner's node id */
    /* with hooks.grain only: */
    grain_state *own;   /* MAP_NODE: the node is a grain (owned here) */
    grain_state *encl;  /* MAP_NODE: the grain whose code it is (NULL:
                         * the program's) */
    uint64_t scope;     /* MAP_NODE: its sync scope; MAP_GROUP: the
                         * worksharing instance */
    uint32_t loc;       /* MAP_GROUP: its location, its members' too */
    UT_hash_handle hh;
} id_entry;

struct replay_engine {
    ospg *g;
    loctab *lt;
    replay_hooks hooks;
    id_entry *nodes;
    id_entry *groups;
    id_entry *last;     /* the node found last: W records repeat parents */
    id_entry *last_group; /* likewise for the chunks of one loop */
    id_entry *spare;    /* released entries, reused (linked through hh.next) */
    int root_ended;
    uint64_t root_nchildren;
    const char *unit;   /* what a record's position counts ("byte") */
    int trusted;        /* records from our own profiler: ids are unique */
    int allow_partial;  /* replay_hooks.allow_partial */
    uint32_t stream;    /* the stream the record being applied came from */
    uint64_t grains, scopes, instances; /* numbered so far (hooks.grain) */
    /* the record being applied, for messages */
    const char *src;
    uint64_t off;
    char err[8192];
};

typedef struct replay_engine replay;

/* An error about the record being applied: "SRC: UNIT OFF: what". */
static void rec_err(replay *rp, const char *fmt, ...)
{
    int n = snprintf(rp->err, sizeof(rp->err), "%s: %s %llu: ", rp->src,
                     rp->unit, (unsigned long long)rp->off);
    if (n < 0 || (size_t)n >= sizeof(rp->err))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(rp->err + n, sizeof(rp->err) - n, fmt, ap);
    va_end(ap);
}

/* The core tells us when a node or group is folded: forget its id (and
 * report the grain it was: nothing below it is left to count). */
static void on_release(void *arg, void *user)
{
    replay *rp = arg;
    id_entry *e = user;
    if (e->own) {
        rp->hooks.grain(rp->hooks.arg, &e->own->g);
        free(e->own);
        e->own = NULL;
    }
    if (rp->last == e)
        rp->last = NULL;
    if (rp->last_group == e)
        rp->last_group = NULL;
    if (e->type == MAP_NODE)
        HASH_DEL(rp->nodes, e);
    else
        HASH_DEL(rp->groups, e);
    e->hh.next = rp->spare;
    rp->spare = e;
}

static id_entry *find(id_entry *head, uint64_t id)
{
    id_entry *e;
    HASH_FIND(hh, head, &id, sizeof(id), e);
    return e;
}

static id_entry *find_node(replay *rp, uint64_t id)
{
    if (rp->last && rp->last->id == id)
        return rp->last;
    id_entry *e = find(rp->nodes, id);
    if (e)
        rp->last = e;
    return e;
}

static int map_add(replay *rp, id_entry **head, uint64_t id, int type,
                   id_entry **out)
{
    id_entry *e = rp->spare;
    if (e) {
        rp->spare = e->hh.next;
        memset(e, 0, sizeof(*e));
    } else if (!(e = calloc(1, sizeof(*e)))) {
        return -1;
    }
    e->id = id;
    e->type = type;
    HASH_ADD(hh, *head, id, sizeof(e->id), e);
    *out = e;
    return 0;
}

static const char *rec_name(int type)
{
    switch (type) {
    case TRACE_BEGIN: return "begin";
    case TRACE_WORK: return "work";
    case TRACE_END: return "end";
    case TRACE_LEAF: return "leaf";
    case TRACE_LOC: return "location";
    case TRACE_META: return "meta";
    case TRACE_REGION: return "region";
    case TRACE_NOTE: return "note";
    case TRACE_WAIT: return "wait";
    }
    return "record";
}

static int core_error(replay *rp, const trace_rec *r, int rc)
{
    rec_err(rp, "%s record: %s", rec_name(r->type), ospg_strerror(rc));
    return -1;
}

replay_engine *replay_engine_new(size_t nscen, const ospg_scenario *scen,
                                 loctab *lt, const replay_hooks *hooks,
                                 const char *unit)
{
    replay *rp = calloc(1, sizeof(*rp));
    if (!rp)
        return NULL;
    rp->lt = lt;
    if (hooks)
        rp->hooks = *hooks;
    rp->unit = unit;
    rp->src = "";
    id_entry *root;
    if (!(rp->g = ospg_new(nscen, scen)) ||
        map_add(rp, &rp->nodes, TRACE_ROOT_ID, MAP_NODE, &root)) {
        replay_engine_free(rp);
        return NULL;
    }
    ospg_set_release_hook(rp->g, on_release, rp);
    if (rp->hooks.region_tags)
        ospg_set_region_tags(rp->g, rp->hooks.region_tags,
                             rp->hooks.region_tags_arg);
    root->node = ospg_root(rp->g);
    return rp;
}

void replay_engine_free(replay_engine *rp)
{
    if (!rp)
        return;
    if (rp->g) {
        ospg_set_release_hook(rp->g, NULL, NULL);
        ospg_free(rp->g);
    }
    id_entry *e, *tmp;
    HASH_ITER(hh, rp->nodes, e, tmp) {
        HASH_DEL(rp->nodes, e);
        free(e->own);
        free(e);
    }
    HASH_ITER(hh, rp->groups, e, tmp) {
        HASH_DEL(rp->groups, e);
        free(e);
    }
    while (rp->spare) {
        e = rp->spare;
        rp->spare = e->hh.next;
        free(e);
    }
    free(rp);
}

void replay_engine_trust(replay_engine *rp)
{
    rp->trusted = 1;
}

const char *replay_engine_error(const replay_engine *rp)
{
    return rp->err;
}

ospg *replay_engine_graph(replay_engine *rp)
{
    return rp->g;
}

int replay_engine_root_ended(const replay_engine *rp)
{
    return rp->root_ended;
}

/* The group of a member's BEGIN: found, or created at its first member
 * (the owner, an ancestor of the member, is then necessarily still live).
 * Returns 1 with *out set, 0 when the owner is not begun yet, -1 on error
 * (message set). */
static int member_group(replay *rp, const trace_rec *r, id_entry **out)
{
    id_entry *e = rp->last_group && rp->last_group->id == r->group
                      ? rp->last_group
                      : find(rp->groups, r->group);
    if (e) {
        rp->last_group = e;
        if (e->owner != r->owner) {
            rec_err(rp, "group %llu has owner %llu, this member names "
                    "owner %llu", (unsigned long long)r->group,
                    (unsigned long long)e->owner,
                    (unsigned long long)r->owner);
            return -1;
        }
        *out = e;
        return 1;
    }
    id_entry *o = find_node(rp, r->owner);
    if (!o)
        return 0;
    if (r->loc == OSPG_LOC_NONE) {
        rec_err(rp, "group member without a location");
        return -1;
    }
    ospg_group *g = ospg_group_new(rp->g, o->node, r->loc);
    if (!g)
        return core_error(rp, r, ospg_error(rp->g));
    if (map_add(rp, &rp->groups, r->group, MAP_GROUP, &e)) {
        /* not mapped: the core frees it with its owner, no hook runs */
        return core_error(rp, r, OSPG_ERR_NOMEM);
    }
    e->group = g;
    e->owner = r->owner;
    e->scope = ++rp->instances;
    e->loc = r->loc;
    ospg_group_set_user(g, e);
    *out = e;
    return 1;
}

/* A grain begins under the node of entry p: numbered, counted as a child
 * of the grain p's code belongs to.  gr: its worksharing instance. */
static void grain_init(replay *rp, replay_grain *g, const id_entry *p,
                       const id_entry *gr, uint32_t loc)
{
    memset(g, 0, sizeof(*g));
    g->id = ++rp->grains;
    g->parent = p->encl ? p->encl->g.id : 0;
    g->parent_loc = p->encl ? p->encl->g.loc : OSPG_LOC_PROGRAM;
    g->depth = p->encl ? p->encl->g.depth + 1 : 1;
    g->scope = p->scope;
    g->instance = gr ? gr->scope : 0;
    g->loc = loc;
    g->thread = rp->stream;
    if (p->encl)
        p->encl->g.children++;
}

/* hooks.grain: what a node begun as entry e under p is, grain-wise.
 * Returns -1 when out of memory. */
static int grain_begin(replay *rp, id_entry *e, const id_entry *p,
                       const trace_rec *r, const id_entry *gr)
{
    e->encl = p->encl;
    e->scope = r->kind == OSPG_S ? ++rp->scopes : p->scope;
    /* a member without a location of its own has its group's (the core's
     * rule) */
    uint32_t loc = r->loc != OSPG_LOC_NONE ? r->loc : gr ? gr->loc : r->loc;
    if (r->kind != OSPG_P || loc == OSPG_LOC_NONE)
        return 0;
    if (!(e->own = malloc(sizeof(*e->own))))
        return -1;
    grain_init(rp, &e->own->g, p, gr, loc);
    e->encl = e->own;
    return 0;
}

/* hooks.grain: a LEAF under p; a grain is reported at once. */
static void grain_leaf(replay *rp, id_entry *p, const trace_rec *r,
                       const id_entry *gr)
{
    uint64_t work = r->nchildren ? r->work : 0;
    uint32_t loc = r->loc != OSPG_LOC_NONE ? r->loc : gr ? gr->loc : r->loc;
    if (r->kind != OSPG_P || loc == OSPG_LOC_NONE) {
        if (p->encl)
            p->encl->g.work += work;
        return;
    }
    replay_grain g;
    grain_init(rp, &g, p, gr, loc);
    g.work = work;
    g.timed = r->timed;
    g.start_ns = r->t_start;
    g.end_ns = r->t_end;
    rp->hooks.grain(rp->hooks.arg, &g);
}

int replay_engine_apply(replay_engine *rp, const trace_rec *r,
                        const char *src, uint64_t off)
{
    id_entry *p, *e, *gr = NULL;
    int rc = 0;

    rp->src = src;
    rp->off = off;
    /* A scan reads names, metadata and regions only. */
    if (rp->hooks.scan_only && r->type != TRACE_LOC &&
        r->type != TRACE_META && r->type != TRACE_REGION &&
        r->type != TRACE_NOTE)
        return 1;
    switch (r->type) {
    case TRACE_BEGIN:
        if (!(p = find_node(rp, r->parent)))
            return 0;
        /* a trace from outside may begin a node twice */
        if (r->id == TRACE_ROOT_ID ||
            (!rp->trusted && find_node(rp, r->id))) {
            rec_err(rp, "node %llu begun twice", (unsigned long long)r->id);
            return -1;
        }
        if (r->group && (rc = member_group(rp, r, &gr)) <= 0)
            return rc;
        ospg_node *n = ospg_begin(rp->g, p->node, r->idx, (ospg_kind)r->kind,
                                  r->loc, gr ? gr->group : NULL, r->deps,
                                  r->ndeps, &rc);
        if (!n)
            return core_error(rp, r, rc);
        if (map_add(rp, &rp->nodes, r->id, MAP_NODE, &e))
            return core_error(rp, r, OSPG_ERR_NOMEM);
        e->node = n;
        ospg_node_set_user(n, e);
        if (rp->hooks.grain && grain_begin(rp, e, p, r, gr))
            return core_error(rp, r, OSPG_ERR_NOMEM);
        return 1;
    case TRACE_WORK:
        if (!(p = find_node(rp, r->parent)))
            return 0;
        /* before the core sees it: the last child may fold p away */
        if (rp->hooks.grain && p->encl)
            p->encl->g.work += r->work;
        rc = ospg_work_sampled(rp->g, p->node, r->idx, r->work, r->loc,
                               r->region, r->flags, r->samples, r->nsamples);
        return rc ? core_error(rp, r, rc) : 1;
    case TRACE_LEAF: {
        if (!(p = find_node(rp, r->parent)))
            return 0;
        if (r->group && (rc = member_group(rp, r, &gr)) <= 0)
            return rc;
        ospg_leaf_work w = {r->work, r->wloc, r->region, r->flags};
        if (rp->hooks.grain) /* before the core folds p away */
            grain_leaf(rp, p, r, gr);
        rc = ospg_leaf(rp->g, p->node, r->idx, (ospg_kind)r->kind, r->loc,
                       gr ? gr->group : NULL, r->nchildren ? &w : NULL);
        return rc ? core_error(rp, r, rc) : 1;
    }
    case TRACE_END:
        if (r->id == TRACE_ROOT_ID) {
            if (rp->root_ended) {
                rec_err(rp, "the program ends twice");
                return -1;
            }
            rp->root_ended = 1;
            rp->root_nchildren = r->nchildren;
            return 1;
        }
        if (!(e = find_node(rp, r->id)))
            return 0;
        if (e->own) { /* ended by the thread that ran it */
            e->own->g.thread = rp->stream;
            if (r->loc != OSPG_LOC_NONE)
                e->own->g.loc = r->loc;
            e->own->g.timed = r->timed;
            e->own->g.start_ns = r->t_start;
            e->own->g.end_ns = r->t_end;
        }
        rc = ospg_end(rp->g, e->node, r->nchildren, r->loc);
        return rc ? core_error(rp, r, rc) : 1;
    case TRACE_LOC:
        rc = loctab_set(rp->lt, r->loc, r->str1, r->str2);
        if (rc) {
            rec_err(rp, "location %u: %s", r->loc, loctab_strerror(rc));
            return -1;
        }
        return 1;
    case TRACE_META:
        if (rp->hooks.meta)
            rp->hooks.meta(rp->hooks.arg, r->str1, r->str2);
        return 1;
    case TRACE_NOTE:
        if (rp->hooks.note)
            rp->hooks.note(rp->hooks.arg, r->loc, r->note, r->value);
        return 1;
    case TRACE_REGION:
        if (rp->hooks.region)
            rp->hooks.region(rp->hooks.arg, r->region_id, r->region_parent,
                             r->loc, r->factor_milli);
        return 1;
    case TRACE_WAIT:
        if (rp->hooks.wait)
            rp->hooks.wait(rp->hooks.arg, rp->stream, r->t_start, r->t_end);
        return 1;
    }
    rec_err(rp, "unknown record");
    return -1;
}

void replay_engine_blocked(replay_engine *rp, const trace_rec *r,
                           const char *src, uint64_t off)
{
    /* a BEGIN waits on its parent, then on its group's owner (only while
     * the group is not created yet) */
    int named_by_parent = r->type == TRACE_BEGIN || r->type == TRACE_WORK ||
                          r->type == TRACE_LEAF;
    int owner = named_by_parent && r->type != TRACE_WORK &&
                find(rp->nodes, r->parent) != NULL;
    uint64_t id = owner ? r->owner : named_by_parent ? r->parent : r->id;
    rp->src = src;
    rp->off = off;
    rec_err(rp, "%s record names %s %llu, which no stream begins (or which "
            "already completed)", rec_name(r->type),
            owner ? "group owner node" : "node", (unsigned long long)id);
}

int replay_engine_finish(replay_engine *rp, int partial, ospg_profile *out)
{
    int rc = partial ? ospg_finish_partial(rp->g, out)
                     : ospg_finish(rp->g, rp->root_nchildren, out);
    if (rc)
        snprintf(rp->err, sizeof(rp->err),
                 "%llu nodes never completed (%s)",
                 (unsigned long long)(ospg_live_nodes(rp->g) - 1),
                 ospg_strerror(rc));
    return rc ? -1 : 0;
}

/* ---- Trace files ---- */

typedef struct stream {
    const char *name;
    trace_reader *rd;
    int done;
    int pending;        /* rec holds a record not yet applied */
    uint64_t rec_off;   /* its byte offset */
    trace_rec rec;
} stream;


static void note_partial(replay_stats *st, const char *why)
{
    if (!st->partial)
        snprintf(st->partial_why, sizeof(st->partial_why), "%s", why);
    st->partial = 1;
}

/* Advances one stream by up to BATCH records.  Returns the number applied,
 * or -1 on error (message in err). */
static long step(replay *rp, stream *s, replay_stats *st, char *err,
                 size_t errlen)
{
    long applied = 0;
    while (!s->done && applied < BATCH) {
        if (!s->pending) {
            s->rec_off = trace_reader_offset(s->rd);
            int rc = trace_reader_next(s->rd, &s->rec);
            if (rc < 0 && rp->allow_partial) {
                /* The stream ends where the run stopped writing it: cut
                 * short, or damaged by a process that died writing it
                 * (a crash flush racing the thread's own write). */
                note_partial(st, trace_reader_error(s->rd));
                s->done = 1;
                break;
            }
            if (rc < 0) {
                snprintf(err, errlen, "%s", trace_reader_error(s->rd));
                return -1;
            }
            if (rc == 0) {
                s->done = 1;
                break;
            }
            s->pending = 1;
            st->records++;
        }
        rp->stream = trace_reader_stream(s->rd);
        int rc = replay_engine_apply(rp, &s->rec, s->name, s->rec_off);
        if (rc < 0) {
            snprintf(err, errlen, "%s", rp->err);
            return -1;
        }
        if (rc == 0)
            break;
        s->pending = 0;
        applied++;
    }
    return applied;
}

/* ---- Progress on a terminal ---- */

typedef struct progress {
    const char *label;  /* NULL: silent */
    double start;
    uint64_t total;     /* bytes of every stream */
    unsigned ticks;
    int shown;
} progress;

static double mono_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void progress_start(progress *pr, const char *label,
                           const char *const *paths, size_t npaths)
{
    memset(pr, 0, sizeof(*pr));
    if (!label || !isatty(STDERR_FILENO))
        return;
    pr->label = label;
    pr->start = mono_seconds();
    for (size_t i = 0; i < npaths; i++) {
        struct stat sb;
        if (!stat(paths[i], &sb))
            pr->total += (uint64_t)sb.st_size;
    }
}

/* Every few hundred steps: once past a second, the share read so far. */
static void progress_step(progress *pr, const stream *ss, size_t npaths)
{
    if (!pr->label || ++pr->ticks % 256 || !pr->total)
        return;
    if (!pr->shown && mono_seconds() - pr->start < 1.0)
        return;
    uint64_t at = 0;
    for (size_t i = 0; i < npaths; i++)
        at += trace_reader_offset(ss[i].rd);
    fprintf(stderr, "\rwhatif: %s %3.0f%%", pr->label,
            100.0 * (double)(at < pr->total ? at : pr->total) /
                (double)pr->total);
    pr->shown = 1;
}

static void progress_end(progress *pr)
{
    if (pr->shown)
        fprintf(stderr, "\r%*s\r", (int)strlen(pr->label) + 16, "");
}

int replay_files(const char *const *paths, size_t npaths, size_t nscen,
                 const ospg_scenario *scen, loctab *lt,
                 const replay_hooks *hooks, ospg_profile *out,
                 replay_stats *stats, char *err, size_t errlen)
{
    replay_stats st = {0};
    stream *ss = calloc(npaths ? npaths : 1, sizeof(*ss));
    replay *rp = replay_engine_new(nscen, scen, lt, hooks, "byte");
    int ret = -1;
    if (rp && hooks)
        rp->allow_partial = hooks->allow_partial;

    memset(out, 0, sizeof(*out));
    if (!ss || !rp) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    if (npaths == 0) {
        snprintf(err, errlen, "no trace stream to read");
        goto out;
    }
    for (size_t i = 0; i < npaths; i++) {
        ss[i].name = paths[i];
        ss[i].rd = trace_reader_open(paths[i]);
        if (!ss[i].rd) {
            snprintf(err, errlen, "%s: out of memory", paths[i]);
            goto out;
        }
        if (trace_reader_error(ss[i].rd)) {
            snprintf(err, errlen, "%s", trace_reader_error(ss[i].rd));
            goto out;
        }
        if (hooks && hooks->scan_only)
            trace_reader_skim(ss[i].rd, 1);
    }
    st.streams = npaths;
    progress pr;
    progress_start(&pr, hooks ? hooks->progress : NULL, paths, npaths);

    for (;;) {
        progress_step(&pr, ss, npaths);
        long progress = 0;
        size_t open = 0;
        for (size_t i = 0; i < npaths; i++) {
            long n = step(rp, &ss[i], &st, err, errlen);
            if (n < 0)
                goto out;
            progress += n;
            open += !ss[i].done;
        }
        if (open == 0)
            break;
        if (progress == 0) {
            for (size_t i = 0; i < npaths; i++) {
                if (!ss[i].pending)
                    continue;
                replay_engine_blocked(rp, &ss[i].rec, ss[i].name,
                                      ss[i].rec_off);
                if (rp->allow_partial) {
                    /* its node's BEGIN was lost with the run: drop it */
                    note_partial(&st, rp->err);
                    ss[i].pending = 0;
                    st.lost_records++;
                    continue;
                }
                snprintf(err, errlen, "%s", rp->err);
                goto out;
            }
        }
    }
    progress_end(&pr);
    for (size_t i = 0; i < npaths; i++)
        st.bytes += trace_reader_offset(ss[i].rd);
    if (hooks && hooks->scan_only) {
        ret = 0;
        goto out;
    }
    if (!rp->root_ended && !rp->allow_partial) {
        snprintf(err, errlen,
                 "%s: the trace has no end-of-program record (%llu nodes "
                 "still open): the run was cut short or a stream is missing "
                 "(whatif analyze --partial profiles what was recorded)",
                 paths[0], (unsigned long long)(ospg_live_nodes(rp->g) - 1));
        goto out;
    }
    if (!rp->root_ended)
        note_partial(&st, "the trace has no end-of-program record");
    st.peak_live_nodes = ospg_peak_live_nodes(rp->g);
    if (replay_engine_finish(rp, st.partial, out)) {
        snprintf(err, errlen, "%s: the trace is incomplete: %s", paths[0],
                 rp->err);
        goto out;
    }
    ret = 0;
out:
    if (stats)
        *stats = st;
    replay_engine_free(rp);
    for (size_t i = 0; ss && i < npaths; i++)
        trace_reader_close(ss[i].rd);
    free(ss);
    return ret;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int replay_dir(const char *dir, size_t nscen, const ospg_scenario *scen,
               loctab *lt, const replay_hooks *hooks, ospg_profile *out,
               replay_stats *stats, char *err, size_t errlen)
{
    DIR *d = opendir(dir);
    char **paths = NULL;
    size_t n = 0, cap = 0;
    int ret = -1;

    memset(out, 0, sizeof(*out));
    if (!d) {
        snprintf(err, errlen, "%s: cannot open trace directory: %s", dir,
                 strerror(errno));
        return -1;
    }
    size_t plen = strlen(REPLAY_STREAM_PREFIX);
    size_t slen = strlen(REPLAY_STREAM_SUFFIX);
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len <= plen + slen ||
            strncmp(de->d_name, REPLAY_STREAM_PREFIX, plen) ||
            strcmp(de->d_name + len - slen, REPLAY_STREAM_SUFFIX))
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **np = realloc(paths, cap * sizeof(*np));
            if (!np)
                goto nomem;
            paths = np;
        }
        size_t need = strlen(dir) + 1 + len + 1;
        if (!(paths[n] = malloc(need)))
            goto nomem;
        snprintf(paths[n], need, "%s/%s", dir, de->d_name);
        n++;
    }
    if (n == 0) {
        snprintf(err, errlen,
                 "%s: no trace streams (%s*%s) in this directory: was the "
                 "program profiled in offline mode?", dir,
                 REPLAY_STREAM_PREFIX, REPLAY_STREAM_SUFFIX);
        goto done;
    }
    qsort(paths, n, sizeof(*paths), cmp_str);
    ret = replay_files((const char *const *)paths, n, nscen, scen, lt, hooks,
                       out, stats, err, errlen);
    goto done;
nomem:
    snprintf(err, errlen, "%s: out of memory", dir);
done:
    closedir(d);
    for (size_t i = 0; i < n; i++)
        free(paths[i]);
    free(paths);
    return ret;
}

