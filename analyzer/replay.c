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
#include <pthread.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
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

#include "spin.h"
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
    /* with several threads (under its map's lock): */
    struct idmap *map;  /* the map it is in */
    uint64_t arrived;   /* MAP_NODE: records that named it as parent */
    uint64_t nchildren; /* MAP_NODE: its END's count, once ended */
    int ended;
    ospg_node *owner_node; /* MAP_GROUP: the owner's node */
    struct id_entry *aliases; /* MAP_GROUP: copies in other threads' maps
                               * (linked through alias_next) */
    struct id_entry *alias_next;
    struct id_entry *primary; /* an alias: the group's entry */
    UT_hash_handle hh;
} id_entry;

typedef struct shared shared;
typedef struct idmap idmap;

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
    shared *sh;         /* several threads apply records: what they share
                         * (NULL: this is the only one) */
    idmap *map;         /* with sh: the ids this thread's streams began */
    unsigned nspare;
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

/* ---- Ids that several threads share ----
 *
 * With several threads, each applies the records of its own streams
 * (replay_files).  The ids live in one map per thread, each under a spin
 * lock held only to find, add or remove an entry, never across a call of
 * the core.  A node id has one map, chosen by the id alone (node_map), so
 * an id begun twice meets itself there whatever the threads that begin
 * it.  The profiler tags each stream's ids with the stream (stream index
 * + 1 in the bits from 40 up), and thread k applies streams k, k + n, ...;
 * so a node's map is that of the thread whose stream began it, and nearly
 * every lookup is in the thread's own map (a task's records come from
 * the thread that ran it), whose lock stays in its cache.  A group lives
 * in the map of the thread that created it: a loop's chunks run on every
 * thread, and a thread that finds a group in another's map copies it into
 * its own (an alias, removed with the group).
 *
 * The core frees a node on whichever thread completes its subtree, so a
 * thread may use a node only while the core cannot complete it: each
 * record that names the node as its parent is counted under the lock,
 * and so is its END's child count.  While the records counted are no more
 * than that count, the core waits for every one of them; a trace whose
 * records name a node more often than its END says is refused before the
 * core sees the extra one.  A group is used only when its owner is the
 * member's parent or an ancestor of it, which keeps the owner, and so the
 * group, live. */
#define SPARE_KEEP 4096 /* released entries a thread keeps for reuse */

struct idmap {
    alignas(64) spin_lock lock;
    id_entry *nodes;
    id_entry *groups;
};

struct shared {
    /* read on every lookup: a line no thread writes while they all run */
    alignas(64) idmap *maps; /* one per thread */
    size_t nmaps;
    ospg_node *root;        /* live to the end: never counted */
    int alone;              /* the other threads stopped: no locks */
    alignas(64) spin_lock create; /* a group is created by one thread at
                                   * a time */
    pthread_mutex_t names;  /* the location table, the hooks, the root */
    int root_ended;
    uint64_t root_nchildren;
};

/* A map's lock, unless one thread goes on alone (team_consider_solo). */
static void map_lock(const shared *sh, idmap *m)
{
    if (!sh->alone)
        spin_acquire(&m->lock);
}

static void map_unlock(const shared *sh, idmap *m)
{
    if (!sh->alone)
        spin_release(&m->lock);
}

/* The engine of the thread that calls the core now (its spare entries). */
static _Thread_local replay *thread_rp;

static id_entry *entry_new(replay *rp)
{
    id_entry *e = rp->spare;
    if (e) {
        rp->spare = e->hh.next;
        rp->nspare--;
        memset(e, 0, sizeof(*e));
        return e;
    }
    return calloc(1, sizeof(*e));
}

static void entry_spare(replay *rp, id_entry *e)
{
    if (!rp || rp->nspare >= SPARE_KEEP) {
        free(e);
        return;
    }
    e->hh.next = rp->spare;
    rp->spare = e;
    rp->nspare++;
}

static void map_del(const shared *sh, id_entry *e)
{
    idmap *m = e->map;
    map_lock(sh, m);
    if (e->type == MAP_NODE)
        HASH_DEL(m->nodes, e);
    else
        HASH_DEL(m->groups, e);
    map_unlock(sh, m);
}

static void shared_release(const shared *sh, id_entry *e)
{
    replay *mine = thread_rp;
    if (mine && mine->last == e)
        mine->last = NULL;
    if (mine && mine->last_group == e)
        mine->last_group = NULL;
    map_del(sh, e);
    /* no thread looks a group up through an alias once the group's owner
     * is folded (only members under the owner do) */
    for (id_entry *a = e->aliases, *next; a; a = next) {
        next = a->alias_next;
        if (mine && mine->last_group == a)
            mine->last_group = NULL;
        map_del(sh, a);
        entry_spare(mine, a);
    }
    entry_spare(mine, e);
}

/* The core tells us when a node or group is folded: forget its id (and
 * report the grain it was: nothing below it is left to count). */
static void on_release(void *arg, void *user)
{
    replay *rp = arg;
    id_entry *e = user;
    if (rp->sh) {
        shared_release(rp->sh, e);
        return;
    }
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
    id_entry *e = entry_new(rp);
    if (!e)
        return -1;
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

/* An engine; with nmaps > 0, one whose builder nmaps threads share, each
 * through an engine of its own with a map of its own (team_run). */
static replay *engine_new(size_t nscen, const ospg_scenario *scen,
                          loctab *lt, const replay_hooks *hooks,
                          const char *unit, size_t nmaps)
{
    replay *rp = calloc(1, sizeof(*rp));
    if (!rp)
        return NULL;
    rp->lt = lt;
    if (hooks)
        rp->hooks = *hooks;
    rp->unit = unit;
    rp->src = "";
    id_entry *root = NULL;
    if (!(rp->g = ospg_new(nscen, scen)))
        goto fail;
    if (nmaps) {
        if (!(rp->sh = aligned_alloc(64, sizeof(*rp->sh))))
            goto fail;
        memset(rp->sh, 0, sizeof(*rp->sh));
        if (!(rp->sh->maps = aligned_alloc(64, nmaps * sizeof(idmap))))
            goto fail;
        memset(rp->sh->maps, 0, nmaps * sizeof(idmap));
        rp->sh->nmaps = nmaps;
        rp->sh->root = ospg_root(rp->g);
        pthread_mutex_init(&rp->sh->names, NULL);
        ospg_set_concurrent(rp->g);
    } else {
        if (!(root = entry_new(rp)))
            goto fail;
        root->id = TRACE_ROOT_ID;
        root->type = MAP_NODE;
        root->node = ospg_root(rp->g);
        HASH_ADD(hh, rp->nodes, id, sizeof(root->id), root);
    }
    ospg_set_release_hook(rp->g, on_release, rp);
    if (rp->hooks.region_tags)
        ospg_set_region_tags(rp->g, rp->hooks.region_tags,
                             rp->hooks.region_tags_arg);
    return rp;
fail:
    replay_engine_free(rp);
    return NULL;
}

replay_engine *replay_engine_new(size_t nscen, const ospg_scenario *scen,
                                 loctab *lt, const replay_hooks *hooks,
                                 const char *unit)
{
    return engine_new(nscen, scen, lt, hooks, unit, 0);
}

static void map_free(id_entry **head)
{
    id_entry *e, *tmp;
    HASH_ITER(hh, *head, e, tmp) {
        HASH_DEL(*head, e);
        free(e->own);
        free(e);
    }
}

static void spares_free(replay *rp)
{
    while (rp->spare) {
        id_entry *e = rp->spare;
        rp->spare = e->hh.next;
        free(e);
    }
}

void replay_engine_free(replay_engine *rp)
{
    if (!rp)
        return;
    if (rp->g) {
        ospg_set_release_hook(rp->g, NULL, NULL);
        ospg_free(rp->g);
    }
    if (rp->sh) {
        for (size_t i = 0; rp->sh->maps && i < rp->sh->nmaps; i++) {
            map_free(&rp->sh->maps[i].nodes);
            map_free(&rp->sh->maps[i].groups);
        }
        if (rp->sh->maps)
            pthread_mutex_destroy(&rp->sh->names);
        free(rp->sh->maps);
        free(rp->sh);
    }
    map_free(&rp->nodes);
    map_free(&rp->groups);
    spares_free(rp);
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

static int apply_names(replay *rp, const trace_rec *r);

/* ---- Records applied by several threads ---- */

/* The map of a node id.  Ids tagged with a stream (the profiler's, see
 * above) go to the thread that applies that stream; others are spread by
 * a hash.  Any function of the id alone keeps the check for ids begun
 * twice exact. */
static idmap *node_map(const shared *sh, uint64_t id)
{
    uint64_t tag = id >> 40;
    uint64_t key = tag ? tag - 1 : (id * 0x9e3779b97f4a7c15ull) >> 32;
    return &sh->maps[key % sh->nmaps];
}

/* The entry of id (a node, or with groups set a group): a node in its
 * map, a group in the calling thread's map first.  Returned with its map's
 * lock held, or NULL. */
static id_entry *shared_find(replay *rp, uint64_t id, int groups)
{
    shared *sh = rp->sh;
    /* alone, the entry found last is as good as in the serial engine (W
     * records repeat parents); released entries are forgotten */
    id_entry *last = groups ? rp->last_group : rp->last;
    if (sh->alone && last && last->id == id)
        return last;
    if (!groups) {
        idmap *m = node_map(sh, id);
        id_entry *e;
        map_lock(sh, m);
        HASH_FIND(hh, m->nodes, &id, sizeof(id), e);
        if (e && sh->alone)
            rp->last = e;
        if (!e)
            map_unlock(sh, m);
        return e;
    }
    for (size_t k = 0; k <= sh->nmaps; k++) {
        idmap *m = k == 0 ? rp->map : &sh->maps[k - 1];
        if (k > 0 && m == rp->map)
            continue;
        id_entry *e;
        map_lock(sh, m);
        HASH_FIND(hh, m->groups, &id, sizeof(id), e);
        if (e && sh->alone)
            rp->last_group = e;
        if (e)
            return e;
        map_unlock(sh, m);
    }
    return NULL;
}

/* The node a record names as its parent: 1 with *node set and the record
 * counted, 0 when no stream has begun it yet, -1 when its END counted
 * fewer children (message set). */
static int shared_parent(replay *rp, uint64_t id, ospg_node **node)
{
    if (id == TRACE_ROOT_ID) {
        *node = rp->sh->root;
        return 1;
    }
    id_entry *e = shared_find(rp, id, 0);
    if (!e)
        return 0;
    int rc = 1;
    if (++e->arrived > e->nchildren && e->ended)
        rc = -1;
    else
        *node = e->node;
    map_unlock(rp->sh, e->map);
    if (rc < 0)
        rec_err(rp, "node %llu has more children than its end record "
                "counts", (unsigned long long)id);
    return rc;
}

/* The node an END names: 1 with *node set, 0 when not begun yet, -1 when
 * it ended before or more records named it as parent (message set). */
static int shared_end(replay *rp, uint64_t id, uint64_t nchildren,
                      ospg_node **node)
{
    id_entry *e = shared_find(rp, id, 0);
    if (!e)
        return 0;
    int rc = 1;
    if (e->ended || e->arrived > nchildren) {
        rc = -1;
    } else {
        e->ended = 1;
        e->nchildren = nchildren;
        *node = e->node;
    }
    map_unlock(rp->sh, e->map);
    if (rc < 0)
        rec_err(rp, "node %llu ends twice, or with fewer children than "
                "records name it", (unsigned long long)id);
    return rc;
}

/* Maps a node just begun, in its id's map.  Returns 1, or -1 when its id
 * is taken (by a live node, begun on any thread) or out of memory
 * (message set). */
static int shared_add_node(replay *rp, uint64_t id, ospg_node *n)
{
    id_entry *e = entry_new(rp), *there;
    if (!e) {
        rec_err(rp, "out of memory");
        return -1;
    }
    idmap *m = node_map(rp->sh, id);
    e->id = id;
    e->type = MAP_NODE;
    e->node = n;
    e->map = m;
    ospg_node_set_user(n, e);
    map_lock(rp->sh, m);
    HASH_FIND(hh, m->nodes, &id, sizeof(id), there);
    if (!there)
        HASH_ADD(hh, m->nodes, id, sizeof(e->id), e);
    map_unlock(rp->sh, m);
    if (!there)
        return 1;
    ospg_node_set_user(n, NULL);
    entry_spare(rp, e);
    rec_err(rp, "node %llu begun twice", (unsigned long long)id);
    return -1;
}

/* A group entry for the calling thread's map, owned by no core object. */
static id_entry *group_entry(replay *rp, const trace_rec *r, ospg_group *gr,
                             ospg_node *owner)
{
    id_entry *e = entry_new(rp);
    if (!e)
        return NULL;
    e->id = r->group;
    e->type = MAP_GROUP;
    e->group = gr;
    e->owner = r->owner;
    e->owner_node = owner;
    e->loc = r->loc;
    e->map = rp->map;
    return e;
}

static void map_add_group(const shared *sh, idmap *m, id_entry *e)
{
    map_lock(sh, m);
    HASH_ADD(hh, m->groups, id, sizeof(e->id), e);
    map_unlock(sh, m);
}

/* What a thread reads of a group's entry, under its map's lock. */
typedef struct group_view {
    ospg_group *group;
    uint64_t owner;
    ospg_node *owner_node;
    idmap *map;
    id_entry *primary;
} group_view;

/* Copies e (its map's lock held) and lets go of the lock. */
static void group_look(const shared *sh, id_entry *e, group_view *v)
{
    v->group = e->group;
    v->owner = e->owner;
    v->owner_node = e->owner_node;
    v->map = e->map;
    v->primary = e->primary ? e->primary : e;
    map_unlock(sh, e->map);
}

/* Creates the group of a member whose parent is p, under its owner, one
 * thread at a time (so a group is created once), unless another thread
 * came first.  Returns 1 with *v set, or 0 with *why set. */
static int shared_group_create(replay *rp, const trace_rec *r, ospg_node *p,
                               group_view *v, const char **why)
{
    spin_acquire(&rp->sh->create);
    id_entry *e = shared_find(rp, r->group, 1);
    if (e) {
        group_look(rp->sh, e, v);
    } else if (r->loc == OSPG_LOC_NONE) {
        *why = "group member without a location";
    } else {
        id_entry *o = r->owner == TRACE_ROOT_ID
                          ? NULL
                          : shared_find(rp, r->owner, 0);
        ospg_node *owner = o ? o->node : NULL;
        if (o)
            map_unlock(rp->sh, o->map);
        if (r->owner == TRACE_ROOT_ID)
            owner = rp->sh->root;
        ospg_group *gr = NULL;
        if (!owner || !ospg_node_under(p, owner))
            *why = "its owner is not an ancestor of the member";
        else if (!(gr = ospg_group_new(rp->g, owner, r->loc)) ||
                 !(e = group_entry(rp, r, gr, owner)))
            *why = "out of memory"; /* a group made stays with its owner */
        if (e) {
            ospg_group_set_user(gr, e);
            *v = (group_view){gr, r->owner, owner, rp->map, e};
            map_add_group(rp->sh, rp->map, e);
        }
    }
    spin_release(&rp->sh->create);
    return e != NULL;
}

/* The group of a member whose parent p the caller holds (shared_parent).
 * Returns 1 with *out set, -1 on error (message set). */
static int shared_group(replay *rp, const trace_rec *r, ospg_node *p,
                        ospg_group **out)
{
    const char *why = NULL;
    group_view v;
    id_entry *e = shared_find(rp, r->group, 1);
    int have = 1;
    if (e)
        group_look(rp->sh, e, &v);
    else
        have = shared_group_create(rp, r, p, &v, &why);
    if (have && v.owner != r->owner)
        why = "members of the group name different owners";
    else if (have && !ospg_node_under(p, v.owner_node))
        why = "its owner is not an ancestor of the member";
    if (why) {
        rec_err(rp, "group %llu: %s", (unsigned long long)r->group, why);
        return -1;
    }
    if (v.map != rp->map) {
        /* the owner is live (p's ancestor): the group stays until the
         * owner folds, which removes the alias with it */
        id_entry *a = group_entry(rp, r, v.group, v.owner_node);
        if (!a) {
            rec_err(rp, "out of memory");
            return -1;
        }
        a->primary = v.primary;
        map_lock(rp->sh, v.primary->map);
        a->alias_next = v.primary->aliases;
        v.primary->aliases = a;
        map_unlock(rp->sh, v.primary->map);
        map_add_group(rp->sh, rp->map, a);
    }
    *out = v.group;
    return 1;
}

/* A graph record with several threads: 1 applied, 0 names a node not
 * begun yet, -1 on error; 2 when r is not a graph record. */
static int apply_shared(replay *rp, const trace_rec *r)
{
    ospg_node *p = NULL, *n;
    ospg_group *gr = NULL;
    int rc;
    switch (r->type) {
    case TRACE_BEGIN:
        if (r->id == TRACE_ROOT_ID) {
            rec_err(rp, "node %llu begun twice", (unsigned long long)r->id);
            return -1;
        }
        if ((rc = shared_parent(rp, r->parent, &p)) <= 0)
            return rc;
        if (r->group && shared_group(rp, r, p, &gr) < 0)
            return -1;
        n = ospg_begin(rp->g, p, r->idx, (ospg_kind)r->kind, r->loc, gr,
                       r->deps, r->ndeps, &rc);
        return n ? shared_add_node(rp, r->id, n) : core_error(rp, r, rc);
    case TRACE_WORK:
        if ((rc = shared_parent(rp, r->parent, &p)) <= 0)
            return rc;
        rc = ospg_work_sampled(rp->g, p, r->idx, r->work, r->loc, r->region,
                               r->flags, r->samples, r->nsamples);
        return rc ? core_error(rp, r, rc) : 1;
    case TRACE_LEAF: {
        if ((rc = shared_parent(rp, r->parent, &p)) <= 0)
            return rc;
        if (r->group && shared_group(rp, r, p, &gr) < 0)
            return -1;
        ospg_leaf_work w = {r->work, r->wloc, r->region, r->flags};
        rc = ospg_leaf(rp->g, p, r->idx, (ospg_kind)r->kind, r->loc, gr,
                       r->nchildren ? &w : NULL);
        return rc ? core_error(rp, r, rc) : 1;
    }
    case TRACE_END:
        if (r->id == TRACE_ROOT_ID) {
            pthread_mutex_lock(&rp->sh->names);
            int twice = rp->sh->root_ended;
            rp->sh->root_ended = 1;
            rp->sh->root_nchildren = r->nchildren;
            pthread_mutex_unlock(&rp->sh->names);
            if (twice)
                rec_err(rp, "the program ends twice");
            return twice ? -1 : 1;
        }
        if ((rc = shared_end(rp, r->id, r->nchildren, &n)) <= 0)
            return rc;
        rc = ospg_end(rp->g, n, r->nchildren, r->loc);
        return rc ? core_error(rp, r, rc) : 1;
    }
    return 2;
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
    if (rp->sh) {
        if ((rc = apply_shared(rp, r)) != 2)
            return rc;
        /* names, metadata and the like: rare, one thread at a time */
        pthread_mutex_lock(&rp->sh->names);
        rc = apply_names(rp, r);
        pthread_mutex_unlock(&rp->sh->names);
        return rc;
    }
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
    }
    return apply_names(rp, r);
}

/* A record that is not part of the graph. */
static int apply_names(replay *rp, const trace_rec *r)
{
    int rc;
    switch (r->type) {
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
    /* a line of its own: with several threads each stream is one's */
    alignas(64) const char *name;
    trace_reader *rd;
    int done;
    int pending;        /* rec holds a record not yet applied */
    uint64_t rec_off;   /* its byte offset */
    trace_rec rec;
    atomic_uint_fast64_t at; /* bytes read so far (the progress line) */
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
    atomic_store_explicit(&s->at, trace_reader_offset(s->rd),
                          memory_order_relaxed);
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
        at += atomic_load_explicit(&ss[i].at, memory_order_relaxed);
    fprintf(stderr, "\rwhatif: %s %3.0f%%", pr->label,
            100.0 * (double)(at < pr->total ? at : pr->total) /
                (double)pr->total);
    pr->shown = 1;
}

/* Clears the line shown, if any (also before an error's message). */
static void progress_end(progress *pr)
{
    if (pr->shown)
        fprintf(stderr, "\r%*s\r", (int)strlen(pr->label) + 16, "");
    pr->shown = 0;
}

/* ---- Several threads ----
 *
 * Each thread applies every nth stream, a batch per stream per turn as one
 * thread does.  A turn in which none of its streams could apply a record
 * (each waits on a node another thread's stream begins) leaves the thread
 * blocked until the others apply more; when every thread still running
 * is blocked and no record was applied since they all looked, the trace
 * cannot be replayed (the caller then replays it on one thread, which
 * finds the record to blame).  So that streams written side by side are
 * still read side by side (the memory bound), a thread that is LAG turns
 * ahead of one that can go on waits for it.
 *
 * Streams that keep waiting on each other (a thread's next records need a
 * node the other's stream begins, and back, every few records) are faster
 * on one thread: each wait hands the work across cores, and the builder's
 * locks cost the threads more than they save.  The threads time their
 * waits; when in each of SOLO_STREAK windows in a row (a window: the first
 * thread's SOLO_EVERY turns) they were busy less than the equivalent of
 * SOLO_BUSY threads, the other threads stop after their turn and the
 * first applies every stream.  Two threads on a real program's trace are
 * busy most of the time; on a tree whose every other task was stolen, or
 * with one thread's stream far behind the other's (a run with more
 * threads than cores), one waits about half of it. */
#define LAG 4
#define TEAM_MIN_BYTES (1u << 20) /* a trace smaller takes one thread */
#define SOLO_EVERY 64      /* the first thread's turns in a window */
#define SOLO_STREAK 4      /* windows below SOLO_BUSY before giving up */
#define SOLO_BUSY 1.25     /* threads' worth of busy time, at least */

enum { W_RUNS, W_BLOCKED, W_DONE };

typedef struct team team;

typedef struct worker {
    replay rp;          /* a view of the shared engine: its own messages,
                         * spare entries */
    team *team;
    size_t first;       /* its streams: first, first + nthreads, ... */
    replay_stats st;
    char err[512];
    pthread_t tid;
    alignas(64) atomic_uint_fast64_t turns; /* that applied records */
    atomic_int state;
    atomic_uint_fast64_t blocked_at; /* `applied` when its last turn began */
    atomic_uint_fast64_t waited_ns;  /* blocked or waiting for laggards */
} worker;

struct team {
    stream *ss;
    size_t nstreams;
    worker *w;
    size_t nw;
    progress *pr;
    atomic_int stop;    /* a thread failed, or the streams are stuck */
    atomic_int solo;    /* the first thread goes on with every stream */
    /* the first thread's, for team_consider_solo: */
    uint64_t seen_ns, seen_waited; /* the clock and the waits at the last
                                    * look */
    unsigned streak;    /* windows below SOLO_BUSY in a row */
    alignas(64) atomic_uint_fast64_t applied; /* records, every thread */
};

/* Whether every other thread still running is blocked since `seen`. */
static int team_stuck(team *t, const worker *self, uint64_t seen)
{
    if (atomic_load(&t->applied) != seen)
        return 0;
    for (size_t i = 0; i < t->nw; i++) {
        worker *o = &t->w[i];
        if (o == self)
            continue;
        int state = atomic_load(&o->state);
        if (state == W_DONE)
            continue;
        if (state != W_BLOCKED || atomic_load(&o->blocked_at) != seen)
            return 0;
    }
    /* a thread seen done may have applied its last records since the
     * first look: it counted them before it said so */
    return atomic_load(&t->applied) == seen;
}

static uint64_t mono_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void add_wait(worker *w, uint64_t since)
{
    atomic_fetch_add_explicit(&w->waited_ns, mono_ns() - since,
                              memory_order_relaxed);
}

/* Waits while a thread that can go on is more than LAG turns behind. */
static void team_wait_laggards(team *t, worker *self, uint64_t turns)
{
    uint64_t since = 0;
    for (;; since = since ? since : mono_ns()) {
        int behind = 0;
        for (size_t i = 0; i < t->nw && !behind; i++) {
            worker *o = &t->w[i];
            behind = o != self && atomic_load(&o->state) == W_RUNS &&
                     atomic_load(&o->turns) + LAG < turns;
        }
        if (!behind || atomic_load(&t->stop) || atomic_load(&t->solo))
            break;
        sched_yield();
    }
    if (since)
        add_wait(self, since);
}

/* A blocked thread waits until another applies records: looking again
 * at once would only take the others' map locks from them.  Returns 1
 * when every thread is blocked and none will apply more. */
static int team_wait_progress(team *t, worker *self, uint64_t seen)
{
    uint64_t since = mono_ns();
    int stuck = 0;
    for (unsigned spins = 0; atomic_load(&t->applied) == seen; spins++) {
        if (atomic_load(&t->stop) || (self != t->w && atomic_load(&t->solo)))
            break;
        if ((stuck = team_stuck(t, self, seen)))
            break;
        if (spins % 64 == 63)
            sched_yield();
#if defined(__x86_64__) || defined(__i386__)
        else
            __builtin_ia32_pause();
#endif
    }
    add_wait(self, since);
    return stuck;
}

/* The first thread, every SOLO_EVERY turns: whether to go on alone, and
 * then once the others have stopped. */
static void team_consider_solo(team *t, uint64_t turns)
{
    if (atomic_load(&t->solo) || turns % SOLO_EVERY)
        return;
    uint64_t now = mono_ns(), waited = 0;
    for (size_t i = 0; i < t->nw; i++)
        waited += atomic_load_explicit(&t->w[i].waited_ns,
                                       memory_order_relaxed);
    if (t->seen_ns && now > t->seen_ns) {
        double span = (double)(now - t->seen_ns);
        double busy = (double)t->nw - (double)(waited - t->seen_waited) / span;
        t->streak = busy < SOLO_BUSY ? t->streak + 1 : 0;
    }
    t->seen_ns = now;
    t->seen_waited = waited;
    if (t->streak < SOLO_STREAK)
        return;
    atomic_store(&t->solo, 1);
    for (size_t i = 1; i < t->nw; i++)
        while (atomic_load(&t->w[i].state) != W_DONE)
            sched_yield();
    ospg_end_concurrent(t->w[0].rp.g);
    t->w[0].rp.sh->alone = 1;
}

static void *team_member(void *arg)
{
    worker *w = arg;
    team *t = w->team;
    int first = w == t->w;
    uint64_t own_turns = 0;
    thread_rp = &w->rp;
    while (!atomic_load(&t->stop)) {
        if (first) {
            progress_step(t->pr, t->ss, t->nstreams);
            team_consider_solo(t, ++own_turns);
        }
        int solo = atomic_load(&t->solo);
        if (solo && !first)
            break;
        uint64_t seen = atomic_load(&t->applied);
        long applied = 0;
        size_t open = 0;
        size_t stride = solo ? 1 : t->nw;
        for (size_t i = solo ? 0 : w->first; i < t->nstreams; i += stride) {
            long n = step(&w->rp, &t->ss[i], &w->st, w->err,
                          sizeof(w->err));
            if (n < 0) {
                atomic_store(&t->stop, 1);
                goto out;
            }
            applied += n;
            open += !t->ss[i].done;
        }
        if (applied) {
            atomic_fetch_add(&t->applied, (uint64_t)applied);
            atomic_store(&w->state, W_RUNS);
            uint64_t turns = atomic_fetch_add(&w->turns, 1) + 1;
            if (open)
                team_wait_laggards(t, w, turns);
        }
        if (!open)
            break;
        if (applied)
            continue;
        atomic_store(&w->blocked_at, seen);
        atomic_store(&w->state, W_BLOCKED);
        if (team_wait_progress(t, w, seen)) {
            atomic_store(&t->stop, 1);
            break;
        }
    }
out:
    atomic_store(&w->state, W_DONE);
    thread_rp = NULL;
    return NULL;
}

/* The locations a team defined, into the caller's table: all or none, so
 * that a one-thread replay after a conflict finds it in its own order. */
static int locs_merge(loctab *into, const loctab *from)
{
    const loctab_entry *e, *o;
    for (e = loctab_first(from); e; e = loctab_next(from, e))
        if ((o = loctab_get(into, e->id)) &&
            (strcmp(o->directive, e->directive) || strcmp(o->where, e->where)))
            return -1;
    for (e = loctab_first(from); e; e = loctab_next(from, e))
        if (loctab_set(into, e->id, e->directive, e->where))
            return -1;
    return 0;
}

/* Applies the streams with nthreads threads (the caller's one of them).
 * Returns 0, or -1 when they could not all be applied (err says why). */
static int team_run(replay *rp, stream *ss, size_t nstreams, unsigned nthreads,
                    progress *pr, replay_stats *st, char *err, size_t errlen)
{
    team t = {.ss = ss, .nstreams = nstreams, .nw = nthreads, .pr = pr};
    size_t bytes = nthreads * sizeof(*t.w);
    /* aligned: the members' counters live on cache lines of their own */
    t.w = aligned_alloc(64, (bytes + 63) / 64 * 64);
    loctab *locs = loctab_new(); /* merged into rp->lt on success */
    if (!t.w || !locs) {
        free(t.w);
        loctab_free(locs);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    memset(t.w, 0, bytes);
    for (size_t i = 0; i < nthreads; i++) {
        worker *w = &t.w[i];
        memcpy(&w->rp, rp, sizeof(*rp));
        w->rp.spare = NULL;
        w->rp.nspare = 0;
        w->rp.map = &rp->sh->maps[i];
        w->rp.lt = locs;
        w->team = &t;
        w->first = i;
        atomic_init(&w->state, W_RUNS);
    }
    size_t started = 1;
    for (; started < nthreads; started++)
        if (pthread_create(&t.w[started].tid, NULL, team_member,
                           &t.w[started])) {
            atomic_store(&t.stop, 1);
            break;
        }
    team_member(&t.w[0]);
    for (size_t i = 1; i < started; i++)
        pthread_join(t.w[i].tid, NULL);
    const char *why = NULL;
    for (size_t i = 0; i < nthreads; i++) {
        st->records += t.w[i].st.records;
        if (!why && t.w[i].err[0])
            why = t.w[i].err;
        spares_free(&t.w[i].rp);
    }
    st->solo = atomic_load(&t.solo);
    int stopped = atomic_load(&t.stop);
    if (stopped)
        snprintf(err, errlen, "%s", why ? why
                                        : "the streams wait on each other");
    else if ((stopped = locs_merge(rp->lt, locs) != 0))
        snprintf(err, errlen, "locations defined twice");
    loctab_free(locs);
    free(t.w);
    rp->root_ended = rp->sh->root_ended;
    rp->root_nchildren = rp->sh->root_nchildren;
    return stopped ? -1 : 0;
}

/* Threads for replay_files (1: the caller's alone). */
static unsigned team_size(const char *const *paths, size_t npaths,
                          const replay_hooks *hooks)
{
    unsigned want = hooks ? hooks->threads : 0;
    /* the hooks besides region_tags run on one thread (and a team that
     * fails replays again: they would see records twice) */
    if (want == 1 || npaths < 2 ||
        (hooks && (hooks->scan_only || hooks->grain || hooks->wait ||
                   hooks->meta || hooks->region || hooks->note)))
        return 1;
    if (!want) {
        /* below a few hundred thousand nodes, starting threads and the
         * builder's locks cost more than they save */
        uint64_t bytes = 0;
        for (size_t i = 0; i < npaths; i++) {
            struct stat sb;
            if (!stat(paths[i], &sb))
                bytes += (uint64_t)sb.st_size;
        }
        if (bytes < TEAM_MIN_BYTES)
            return 1;
        cpu_set_t set;
        want = sched_getaffinity(0, sizeof(set), &set) == 0
                   ? (unsigned)CPU_COUNT(&set)
                   : 1;
    }
    return want < npaths ? want : (unsigned)npaths;
}

static int replay_once(const char *const *paths, size_t npaths,
                       unsigned nthreads, size_t nscen,
                       const ospg_scenario *scen, loctab *lt,
                       const replay_hooks *hooks, ospg_profile *out,
                       replay_stats *stats, char *err, size_t errlen)
{
    replay_stats st = {0};
    progress pr = {0};
    size_t ss_bytes = (npaths ? npaths : 1) * sizeof(stream);
    stream *ss = aligned_alloc(64, ss_bytes);
    if (ss)
        memset(ss, 0, ss_bytes);
    replay *rp = engine_new(nscen, scen, lt, hooks, "byte",
                            nthreads > 1 ? nthreads : 0);
    int ret = -1;
    /* a team takes a trace cut short as an error: the one thread after it
     * profiles what was recorded */
    if (rp && hooks && nthreads == 1)
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
    /* the recorder's promise, made in every stream, lets the builder drop
     * nested instances early */
    size_t fixed = 0;
    for (size_t i = 0; i < npaths; i++)
        fixed += (trace_reader_flags(ss[i].rd) & TRACE_FLAG_FIXED_LOCS) != 0;
    if (fixed == npaths)
        ospg_set_fixed_locations(rp->g);
    st.streams = npaths;
    st.threads = nthreads;
    progress_start(&pr, hooks ? hooks->progress : NULL, paths, npaths);

    if (nthreads > 1 &&
        team_run(rp, ss, npaths, nthreads, &pr, &st, err, errlen))
        goto out;
    while (nthreads == 1) {
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
    progress_end(&pr);
    if (stats)
        *stats = st;
    replay_engine_free(rp);
    for (size_t i = 0; ss && i < npaths; i++)
        trace_reader_close(ss[i].rd);
    free(ss);
    return ret;
}

int replay_files(const char *const *paths, size_t npaths, size_t nscen,
                 const ospg_scenario *scen, loctab *lt,
                 const replay_hooks *hooks, ospg_profile *out,
                 replay_stats *stats, char *err, size_t errlen)
{
    unsigned nthreads = team_size(paths, npaths, hooks);
    /* a trace the threads cannot replay is replayed again on one thread:
     * the same trace then gives the same message */
    if (nthreads > 1 && replay_once(paths, npaths, nthreads, nscen, scen, lt,
                                    hooks, out, stats, err, errlen) == 0)
        return 0;
    return replay_once(paths, npaths, 1, nscen, scen, lt, hooks, out, stats,
                       err, errlen);
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

