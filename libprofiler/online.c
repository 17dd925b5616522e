/* online.c - feeds the analysis core from the profiler's callbacks.
 *
 * Each thread calls the concurrent builder itself.  What remains to do
 * here: map the caller's group ids to the builder's groups (a group is
 * created by whichever member comes first), remember the first failure,
 * and let online_finish stop the threads.  For that, a thread marks itself
 * busy for the length of each event (a store to its own cache line) and
 * checks `stopped` after marking; online_finish sets `stopped` and waits
 * until no thread is busy, then has the builder to itself.
 *
 * The mark and the check need a full barrier between them, or the store
 * could wait in the store buffer while the load runs ahead.  A locked
 * store on every event cost more than the rest of event_enter (fib, one
 * thread: 1.3% of the run's time).  Where the kernel offers it, the
 * stopping side pays instead: membarrier(PRIVATE_EXPEDITED) runs a full
 * barrier on every thread of the process, so each event needs only a
 * compiler barrier.
 */
#include "online.h"

#include <linux/membarrier.h>
#include <sched.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <uthash.h>

#include "loctab.h"
#include "report.h"
#include "spin.h"
#include "srcloc.h"

#define GROUP_SHARDS 64

struct online_thread {
    alignas(64) atomic_int busy;  /* inside an event */
    uint32_t index;
    online_thread *next_thread;
};

/* A group id of the caller's and the builder's group it stands for; the
 * entry goes when the builder frees the group (its owner folded). */
typedef struct group_entry {
    uint64_t id;
    ospg_group *group;
    UT_hash_handle hh;
} group_entry;

typedef struct group_shard {
    alignas(64) spin_lock lock;
    group_entry *map;
} group_shard;

static ospg *graph;
static group_shard group_shards[GROUP_SHARDS];
static spin_lock names_lock = SPIN_LOCK_INIT; /* locs, meta, notes */
static spin_lock fail_lock = SPIN_LOCK_INIT;
static _Atomic(online_thread *) threads;
static atomic_int stopped;    /* failed or closed: events are dropped */
static int stop_by_membarrier; /* see the file comment */
static atomic_int closed;     /* online_finish ran */
static loctab *locs;
static report_meta *meta;
static report_notes *notes;   /* what is not exact, per location */
static int notes_failed;      /* a note was lost (out of memory) */
static atomic_int failed;     /* the first error is in fail_what */
static char fail_what[512];

static size_t nscen = 1;
static ospg_scenario *scen;
static const char **scen_names;
static double *scen_factors;

static group_shard *shard_of(uint64_t id)
{
    return &group_shards[(id * 0x9e3779b97f4a7c15ull) >> 58];
}

/* The builder frees a group: forget its id.  Runs under a node lock;
 * group_get never holds a shard lock while it takes a node lock. */
static void on_release(void *arg, void *user)
{
    (void)arg;
    group_entry *e = user;
    group_shard *sh = shard_of(e->id);
    spin_acquire(&sh->lock);
    HASH_DEL(sh->map, e);
    spin_release(&sh->lock);
    free(e);
}

int online_setup(const double *factors, size_t nf)
{
    nscen = 1 + nf;
    scen = calloc(nscen, sizeof(*scen));
    scen_names = calloc(nscen, sizeof(*scen_names));
    scen_factors = calloc(nscen, sizeof(*scen_factors));
    if (!scen || !scen_names || !scen_factors)
        return -1;
    scen_names[0] = "measured";
    scen_factors[0] = 1;
    for (size_t i = 0; i < nf; i++) {
        scen[1 + i].factor = factors[i];
        scen[1 + i].all_regions = 1;
        scen_names[1 + i] = "all";
        scen_factors[1 + i] = factors[i];
    }
    long cmds = syscall(SYS_membarrier, MEMBARRIER_CMD_QUERY, 0, 0);
    stop_by_membarrier =
        cmds > 0 && (cmds & MEMBARRIER_CMD_PRIVATE_EXPEDITED) &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED,
                0, 0) == 0;
    graph = ospg_new(nscen, scen);
    if (graph) {
        ospg_set_concurrent(graph);
        ospg_set_fixed_locations(graph);
        ospg_set_release_hook(graph, on_release, NULL);
    }
    locs = loctab_new();
    meta = report_meta_new();
    notes = report_notes_new();
    return graph && locs && meta && notes ? 0 : -1;
}

void online_set_region_tags(ospg_region_tags_fn fn, void *arg)
{
    if (graph)
        ospg_set_region_tags(graph, fn, arg);
}

/* Remembers the first failure and stops recording. */
static void note_failure(const char *what)
{
    spin_acquire(&fail_lock);
    if (!atomic_load(&failed)) {
        snprintf(fail_what, sizeof(fail_what), "%s", what);
        atomic_store(&failed, 1);
    }
    spin_release(&fail_lock);
    atomic_store(&stopped, 1);
}

static void note_graph_failure(const char *event, int err)
{
    char what[256];
    snprintf(what, sizeof(what), "%s: %s", event, ospg_strerror(err));
    note_failure(what);
}

online_thread *online_thread_open(uint32_t thread_index)
{
    online_thread *t = aligned_alloc(alignof(online_thread), sizeof(*t));
    if (!t) {
        note_failure("out of memory for a thread's state");
        return NULL;
    }
    memset(t, 0, sizeof(*t));
    t->index = thread_index;
    t->next_thread = atomic_load_explicit(&threads, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(
        &threads, &t->next_thread, t, memory_order_release,
        memory_order_relaxed))
        ;
    return t;
}

ospg_node *online_root(void)
{
    return graph ? ospg_root(graph) : NULL;
}

/* Marks t busy unless recording stopped; 0: drop the event.  Either
 * stop_threads sees busy, or this thread sees stopped (a full barrier on
 * both sides, or membarrier on stop_threads' side). */
static inline int event_enter(online_thread *t)
{
    if (!t || !graph)
        return 0;
    if (stop_by_membarrier) {
        atomic_store_explicit(&t->busy, 1, memory_order_relaxed);
        atomic_signal_fence(memory_order_seq_cst);
    } else {
        atomic_store(&t->busy, 1);
    }
    if (atomic_load(&stopped)) {
        atomic_store_explicit(&t->busy, 0, memory_order_release);
        return 0;
    }
    return 1;
}

static inline void event_leave(online_thread *t)
{
    atomic_store_explicit(&t->busy, 0, memory_order_release);
}

/* The group of a member: found, or created by this first member. */
static ospg_group *group_get(uint64_t id, ospg_node *owner, uint32_t loc)
{
    group_shard *sh = shard_of(id);
    group_entry *e;
    spin_acquire(&sh->lock);
    HASH_FIND(hh, sh->map, &id, sizeof(id), e);
    spin_release(&sh->lock);
    if (e)
        return e->group;
    /* Created without the shard lock (it takes the owner's lock).  Two
     * first members may both create one: the loser's stays empty, and an
     * empty group adds nothing. */
    ospg_group *gr = ospg_group_new(graph, owner, loc);
    group_entry *mine = gr ? malloc(sizeof(*mine)) : NULL;
    if (!mine)
        return NULL;
    mine->id = id;
    mine->group = gr;
    spin_acquire(&sh->lock);
    HASH_FIND(hh, sh->map, &id, sizeof(id), e);
    if (!e) {
        HASH_ADD(hh, sh->map, id, sizeof(mine->id), mine);
        ospg_group_set_user(gr, mine);
        e = mine;
        mine = NULL;
    }
    spin_release(&sh->lock);
    free(mine);
    return e->group;
}

ospg_node *online_begin(online_thread *t, ospg_node *parent, uint64_t idx,
                        ospg_kind kind, uint32_t loc, uint64_t group,
                        ospg_node *owner, const ospg_dep *deps, size_t ndeps)
{
    return online_begin_work(t, parent, idx, kind, loc, group, owner, deps,
                             ndeps, NULL);
}

ospg_node *online_begin_work(online_thread *t, ospg_node *parent,
                             uint64_t idx, ospg_kind kind, uint32_t loc,
                             uint64_t group, ospg_node *owner,
                             const ospg_dep *deps, size_t ndeps,
                             const ospg_leaf_work *w)
{
    if (!event_enter(t))
        return NULL;
    ospg_node *n = NULL;
    ospg_group *gr = NULL;
    int err = OSPG_OK;
    if (!parent || (group && !owner)) {
        note_failure("an event names a node whose begin failed");
    } else if (group && !(gr = group_get(group, owner, loc))) {
        note_graph_failure("group", ospg_error(graph) ? ospg_error(graph)
                                                      : OSPG_ERR_NOMEM);
    } else if (!(n = ospg_begin_work(graph, parent, idx, kind, loc, gr, deps,
                                     ndeps, w, &err))) {
        note_graph_failure("begin", err);
    }
    event_leave(t);
    return n;
}

void online_work(online_thread *t, ospg_node *parent, uint64_t idx,
                 uint64_t work, uint32_t loc, uint32_t region, unsigned flags)
{
    online_work_sampled(t, parent, idx, work, loc, region, flags, NULL, 0);
}

void online_work_sampled(online_thread *t, ospg_node *parent, uint64_t idx,
                         uint64_t work, uint32_t loc, uint32_t region,
                         unsigned flags, const ospg_sample *smp, size_t nsmp)
{
    if (!event_enter(t))
        return;
    int err;
    if (!parent)
        note_failure("an event names a node whose begin failed");
    else if ((err = ospg_work_sampled(graph, parent, idx, work, loc, region,
                                      flags, smp, nsmp)))
        note_graph_failure("work", err);
    event_leave(t);
}

void online_leaf(online_thread *t, ospg_node *parent, uint64_t idx,
                 ospg_kind kind, uint32_t loc, uint64_t group,
                 ospg_node *owner, const ospg_leaf_work *w)
{
    if (!event_enter(t))
        return;
    ospg_group *gr = NULL;
    int err;
    if (!parent || (group && !owner)) {
        note_failure("an event names a node whose begin failed");
    } else if (group && !(gr = group_get(group, owner, loc))) {
        note_graph_failure("group", ospg_error(graph) ? ospg_error(graph)
                                                      : OSPG_ERR_NOMEM);
    } else if ((err = ospg_leaf(graph, parent, idx, kind, loc, gr, w))) {
        note_graph_failure("leaf", err);
    }
    event_leave(t);
}

void online_work_end(online_thread *t, ospg_node *node, uint64_t idx,
                     uint64_t work, uint32_t loc, uint32_t region,
                     unsigned flags, uint64_t nchildren, uint32_t end_loc)
{
    if (!event_enter(t))
        return;
    int err;
    if (!node)
        note_failure("an event names a node whose begin failed");
    else if ((err = ospg_work_end(graph, node, idx, work, loc, region, flags,
                                  nchildren, end_loc)))
        note_graph_failure("work", err);
    event_leave(t);
}

void online_end(online_thread *t, ospg_node *node, uint64_t nchildren,
                uint32_t loc)
{
    if (!event_enter(t))
        return;
    int err;
    if (!node)
        note_failure("an event names a node whose begin failed");
    else if ((err = ospg_end(graph, node, nchildren, loc)))
        note_graph_failure("end", err);
    event_leave(t);
}

void online_loc(uint32_t loc, const char *directive, const char *where)
{
    spin_acquire(&names_lock);
    loctab_set(locs, loc, directive, where);
    spin_release(&names_lock);
}

void online_note(uint32_t loc, uint32_t note, uint64_t value)
{
    spin_acquire(&names_lock);
    if (report_notes_add(notes, loc, note, value))
        notes_failed = 1;
    spin_release(&names_lock);
}

void online_meta(const char *key, const char *value)
{
    spin_acquire(&names_lock);
    if (!report_meta_reserved(key))
        report_meta_set(meta, key, value);
    spin_release(&names_lock);
}

/* Stops recording and waits for threads inside an event to leave it. */
static void stop_threads(void)
{
    atomic_store(&stopped, 1);
    /* the acquire loads of busy below must not pass the store */
    atomic_thread_fence(memory_order_seq_cst);
    /* Registered at setup, it does not fail; if it did, a millisecond is
     * far longer than a store takes to leave a store buffer. */
    if (stop_by_membarrier &&
        syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) != 0)
        usleep(1000);
    for (online_thread *t = atomic_load(&threads); t; t = t->next_thread)
        while (atomic_load_explicit(&t->busy, memory_order_acquire))
            sched_yield();
}

int online_finish(uint64_t root_nchildren, int partial, const char *dir,
                  char *err, size_t errlen)
{
    int ret = -1;
    ospg_profile prof;
    loctab *named = NULL;
    memset(&prof, 0, sizeof(prof));
    if (atomic_exchange(&closed, 1)) {
        snprintf(err, errlen, "the profile was already written");
        return -1;
    }
    stop_threads();
    spin_acquire(&names_lock);
    if (!graph) {
        snprintf(err, errlen, "the profile could not be set up");
        goto out;
    }
    if (atomic_load(&failed)) {
        snprintf(err, errlen, "the graph could not be built (%s)", fail_what);
        goto out;
    }
    uint64_t peak = ospg_peak_live_nodes(graph);
    int rc = partial ? ospg_finish_partial(graph, &prof)
                     : ospg_finish(graph, root_nchildren, &prof);
    if (rc) {
        snprintf(err, errlen, "the graph is incomplete: %s (an OpenMP "
                 "construct was still open, or a record was lost)",
                 ospg_strerror(rc));
        goto out;
    }
    if (partial)
        report_meta_set(meta, "complete",
                        "no: the program exited inside an OpenMP construct; "
                        "constructs still open were closed as they stood");
    char num[32];
    snprintf(num, sizeof(num), "%llu", (unsigned long long)peak);
    report_meta_set(meta, "peak_live_nodes", num);
    size_t unresolved = 0;
    char warn[512] = "";
    if (srcloc_resolve(locs, meta, &named, &unresolved, warn, sizeof(warn))) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    srcloc_merge_profile(&prof, named);
    report_notes_fine_grains(notes, &prof, named, meta);
    report_notes_outliers(notes, &prof, named);
    if (notes_failed)
        report_meta_set(meta, "notes_lost", "out of memory: some notes on "
                                            "inexact rows were lost");
    if (report_write_all(dir, &prof, named, meta, notes, scen_names,
                         scen_factors, err, errlen))
        goto out;
    report_notes_print(stderr, notes, named,
                       report_meta_get(meta, "metric_unit"));
    if (nscen > 1) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/whatif.csv", dir);
        if (report_write_whatif_csv(path, &prof, named, scen_names,
                                    scen_factors, err, errlen))
            goto out;
    }
    if (unresolved)
        snprintf(err, errlen, "warning: %s", warn);
    else
        err[0] = 0;
    ret = 0;
out:
    ospg_profile_free(&prof);
    loctab_free(named);
    spin_release(&names_lock);
    return ret;
}
