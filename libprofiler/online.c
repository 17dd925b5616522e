/* online.c - feeds the analysis core from the profiler's callbacks.
 *
 * A queue is a list of chunks.  The owning thread writes records into its
 * tail chunk and publishes them by storing the chunk's committed length
 * (release); it links a new chunk (release) only after the last record of
 * the old one is committed.  The drainer, holding drain_lock, reads each
 * queue's head chunk up to its committed length (acquire) and hands used
 * chunks back through the queue's `returned` stack, which only the owner
 * empties (all at once), so neither side ever waits on the other.
 *
 * A record naming a node the drainer has not seen waits in its queue (the
 * engine refuses it; other queues go on).  The node's BEGIN is then either
 * already committed in another queue (a task is begun before the runtime
 * can run it elsewhere), so another pass finds it, or about to be: the
 * thread that opens a barrier phase publishes its BEGIN just after letting
 * the other threads see the phase.  At the end every thread is done, so a
 * record still waiting names a node nobody began: an error.
 */
#include "online.h"

#include <limits.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "loctab.h"
#include "replay.h"
#include "report.h"
#include "spin.h"
#include "srcloc.h"

#define CHUNK_BYTES (64u << 10)
/* Queued chunks after which a thread stops to drain: bounds the memory of
 * records not yet applied at about threads x MAX_BACKLOG x CHUNK_BYTES. */
#define MAX_BACKLOG 4u
/* Share of the run spent folding above which the user is told that the
 * offline mode would cost less. */
#define FOLD_HINT_SHARE 0.2
/* Records one drain applies before letting go of the core. */
#define DRAIN_BUDGET 65536L

typedef struct qrec {
    uint8_t type;        /* TRACE_BEGIN, TRACE_WORK or TRACE_END */
    uint8_t kind;        /* BEGIN: ospg_kind */
    uint16_t flags;      /* WORK: OSPG_W_* */
    uint32_t loc;
    uint32_t region;     /* WORK */
    uint32_t ndeps;      /* BEGIN: ospg_dep items follow the record */
    uint64_t id;         /* BEGIN, END */
    uint64_t parent;     /* BEGIN, WORK */
    uint64_t idx;        /* BEGIN, WORK */
    uint64_t arg;        /* WORK: work; END: nchildren; BEGIN: group */
    uint64_t owner;      /* BEGIN with a group */
} qrec;

typedef struct qchunk {
    _Atomic(struct qchunk *) next;  /* set once the owner moved on */
    atomic_size_t committed;        /* bytes of whole records */
    size_t cap;
    struct qchunk *free_next;       /* on a spare or returned list */
    alignas(16) unsigned char data[];
} qchunk;

struct online_queue {
    /* the owner's side */
    alignas(64) qchunk *tail;
    size_t pos;                 /* bytes written into tail */
    qchunk *spare;              /* chunks ready for reuse */
    uint64_t linked;            /* chunks handed to the drainer */
    /* shared */
    alignas(64) _Atomic(qchunk *) returned;
    atomic_uint_fast64_t released;  /* chunks the drainer is done with */
    /* the drainer's side (drain_lock) */
    alignas(64) qchunk *head;
    size_t rpos;
    uint64_t nrec;              /* records applied, for messages */
    char name[32];
    online_queue *next_queue;
};

static spin_lock drain_lock = SPIN_LOCK_INIT; /* the engine, queue heads */
static spin_lock names_lock = SPIN_LOCK_INIT; /* locs, meta */
static _Atomic(online_queue *) queues;
static atomic_int stopped;    /* failed or closed: records are dropped */
static replay_engine *engine;
static loctab *locs;
static report_meta *meta;
static report_notes *notes;   /* what is not exact, per location */
static int notes_failed;      /* a note was lost (out of memory) */
static int failed;            /* the first error, sticky (drain_lock) */
static int closed;            /* the profile is written (drain_lock) */
static double start_seconds;  /* when profiling started */
static double fold_seconds;   /* spent draining (drain_lock) */
static char hint[256];        /* advice for the user, or "" */
static char fail_what[8192];

static size_t nscen = 1;
static ospg_scenario *scen;
static const char **scen_names;
static double *scen_factors;

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

int online_setup(const double *factors, size_t nf)
{
    start_seconds = seconds_now();
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
    engine = replay_engine_new(nscen, scen, NULL, NULL, "record");
    if (engine)
        replay_engine_trust(engine);
    locs = loctab_new();
    meta = report_meta_new();
    notes = report_notes_new();
    return engine && locs && meta && notes ? 0 : -1;
}

/* Remembers the first failure; called with drain_lock held. */
static void note_failure(const char *what)
{
    if (failed)
        return;
    failed = 1;
    snprintf(fail_what, sizeof(fail_what), "%s", what);
    atomic_store(&stopped, 1);
}

/* ---- The drainer ---- */

static size_t rec_size(size_t ndeps)
{
    return sizeof(qrec) + ndeps * sizeof(ospg_dep);
}

/* Hands chunk c back to its queue's owner (drain_lock held). */
static void chunk_release(online_queue *q, qchunk *c)
{
    if (c->cap > CHUNK_BYTES) {
        free(c); /* one oversized record's own chunk */
    } else {
        c->free_next = atomic_load_explicit(&q->returned,
                                            memory_order_relaxed);
        while (!atomic_compare_exchange_weak_explicit(
            &q->returned, &c->free_next, c, memory_order_release,
            memory_order_relaxed))
            ;
    }
    atomic_fetch_add_explicit(&q->released, 1, memory_order_release);
}

/* Applies q's committed records until one waits on a node not begun yet,
 * the queue is empty or *budget is spent.  Returns the number applied, -1
 * on error (failure noted). */
static long drain_queue(online_queue *q, long *budget)
{
    long applied = 0;
    trace_rec tr;
    memset(&tr, 0, sizeof(tr));
    for (;;) {
        qchunk *c = q->head;
        size_t end = atomic_load_explicit(&c->committed,
                                          memory_order_acquire);
        while (q->rpos < end && *budget > 0) {
            const qrec *r = (const qrec *)(c->data + q->rpos);
            tr.type = r->type;
            tr.kind = r->kind;
            tr.loc = r->loc;
            tr.id = r->id;
            tr.parent = r->parent;
            tr.idx = r->idx;
            tr.region = r->region;
            tr.flags = r->flags;
            tr.work = r->arg;
            tr.nchildren = r->arg;
            tr.group = r->type == TRACE_BEGIN ? r->arg : 0;
            tr.owner = r->owner;
            tr.ndeps = r->ndeps;
            tr.deps = r->ndeps ? (const ospg_dep *)(r + 1) : NULL;
            int rc = replay_engine_apply(engine, &tr, q->name, q->nrec);
            if (rc < 0) {
                note_failure(replay_engine_error(engine));
                return -1;
            }
            if (rc == 0)
                return applied;
            q->rpos += rec_size(r->ndeps);
            q->nrec++;
            applied++;
            (*budget)--;
        }
        if (q->rpos < end)
            return applied;
        qchunk *nx = atomic_load_explicit(&c->next, memory_order_acquire);
        if (!nx)
            return applied;
        /* records committed before the link are visible now */
        if (q->rpos < atomic_load_explicit(&c->committed,
                                           memory_order_acquire))
            continue;
        q->head = nx;
        q->rpos = 0;
        chunk_release(q, c);
    }
}

static void drain_records(long budget);

/* Drains every queue, round-robin, until no record can be applied or the
 * budget is spent (budget < 0: no limit), and counts the time it took.
 * drain_lock held. */
static void drain_all(long budget)
{
    double t0 = seconds_now();
    drain_records(budget);
    fold_seconds += seconds_now() - t0;
}

static void drain_records(long budget)
{
    long left = budget < 0 ? LONG_MAX : budget;
    online_queue *first = atomic_load_explicit(&queues, memory_order_acquire);
    for (;;) {
        long progress = 0;
        for (online_queue *q = first; q && !failed; q = q->next_queue) {
            long n = drain_queue(q, &left);
            if (n < 0)
                return;
            progress += n;
        }
        if (!progress || left <= 0 || failed)
            return;
    }
}

/* ---- The owner's side ---- */

online_queue *online_queue_open(uint32_t thread_index)
{
    /* cache-line aligned, so that owner and drainer fields do not share
     * a line (sizeof is a multiple of the alignment, as C11 asks) */
    online_queue *q = aligned_alloc(alignof(online_queue), sizeof(*q));
    qchunk *c = calloc(1, sizeof(*c) + CHUNK_BYTES);
    if (q)
        memset(q, 0, sizeof(*q));
    if (!q || !c) {
        free(q);
        free(c);
        spin_acquire(&drain_lock);
        note_failure("out of memory for a thread's record queue");
        spin_release(&drain_lock);
        return NULL;
    }
    c->cap = CHUNK_BYTES;
    q->tail = q->head = c;
    snprintf(q->name, sizeof(q->name), "thread %u", thread_index);
    q->next_queue = atomic_load_explicit(&queues, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(
        &queues, &q->next_queue, q, memory_order_release,
        memory_order_relaxed))
        ;
    return q;
}

static qchunk *chunk_get(online_queue *q, size_t need)
{
    qchunk *c = NULL;
    if (need <= CHUNK_BYTES) {
        if (!q->spare)
            q->spare = atomic_exchange_explicit(&q->returned, NULL,
                                                memory_order_acquire);
        if ((c = q->spare))
            q->spare = c->free_next;
    }
    if (!c) {
        size_t cap = need > CHUNK_BYTES ? need : CHUNK_BYTES;
        if (!(c = malloc(sizeof(*c) + cap)))
            return NULL;
        c->cap = cap;
    }
    atomic_store_explicit(&c->next, NULL, memory_order_relaxed);
    atomic_store_explicit(&c->committed, 0, memory_order_relaxed);
    c->free_next = NULL;
    return c;
}

/* The tail chunk has no room for need bytes: links a fresh one, then
 * drains (waiting for the core only when this queue is too long).
 * Returns where to write, NULL when out of memory (failure noted). */
static unsigned char *queue_grow(online_queue *q, size_t need)
{
    qchunk *c = chunk_get(q, need);
    if (!c) {
        spin_acquire(&drain_lock);
        note_failure("out of memory for queued records");
        spin_release(&drain_lock);
        return NULL;
    }
    atomic_store_explicit(&q->tail->next, c, memory_order_release);
    q->tail = c;
    q->pos = 0;
    q->linked++;
    uint64_t backlog = q->linked - atomic_load_explicit(
                                       &q->released, memory_order_acquire);
    if (backlog >= MAX_BACKLOG)
        spin_acquire(&drain_lock);
    else if (!spin_try_acquire(&drain_lock))
        return c->data; /* another thread is draining */
    if (!closed && !failed)
        drain_all(DRAIN_BUDGET);
    spin_release(&drain_lock);
    return c->data;
}

static inline qrec *rec_reserve(online_queue *q, size_t len)
{
    if (!q || atomic_load_explicit(&stopped, memory_order_relaxed))
        return NULL;
    if (q->pos + len <= q->tail->cap)
        return (qrec *)(q->tail->data + q->pos);
    return (qrec *)queue_grow(q, len);
}

static inline void rec_commit(online_queue *q, size_t len)
{
    q->pos += len;
    atomic_store_explicit(&q->tail->committed, q->pos, memory_order_release);
}

void online_begin(online_queue *q, uint64_t id, uint64_t parent,
                  uint64_t idx, ospg_kind kind, uint32_t loc, uint64_t group,
                  uint64_t owner, const ospg_dep *deps, size_t ndeps)
{
    size_t len = rec_size(ndeps);
    qrec *r = rec_reserve(q, len);
    if (!r)
        return;
    r->type = TRACE_BEGIN;
    r->kind = (uint8_t)kind;
    r->loc = loc;
    r->region = 0;
    r->ndeps = (uint32_t)ndeps;
    r->id = id;
    r->parent = parent;
    r->idx = idx;
    r->arg = group;
    r->owner = group ? owner : 0;
    if (ndeps)
        memcpy(r + 1, deps, ndeps * sizeof(*deps));
    rec_commit(q, len);
}

void online_work(online_queue *q, uint64_t parent, uint64_t idx,
                 uint64_t work, uint32_t loc, uint32_t region, unsigned flags)
{
    qrec *r = rec_reserve(q, sizeof(qrec));
    if (!r)
        return;
    r->type = TRACE_WORK;
    r->flags = (uint16_t)flags;
    r->loc = loc;
    r->region = region;
    r->ndeps = 0;
    r->parent = parent;
    r->idx = idx;
    r->arg = work;
    rec_commit(q, sizeof(qrec));
}

void online_end(online_queue *q, uint64_t id, uint64_t nchildren,
                uint32_t loc)
{
    qrec *r = rec_reserve(q, sizeof(qrec));
    if (!r)
        return;
    r->type = TRACE_END;
    r->loc = loc;
    r->ndeps = 0;
    r->id = id;
    r->arg = nchildren;
    rec_commit(q, sizeof(qrec));
}

const char *online_hint(void)
{
    return hint;
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

/* After the last drain: the first record that could not be applied, as
 * an error (0 when every queue is empty).  drain_lock held. */
static int check_drained(void)
{
    trace_rec tr;
    memset(&tr, 0, sizeof(tr));
    for (online_queue *q = atomic_load(&queues); q; q = q->next_queue) {
        qchunk *c = q->head;
        if (q->rpos >= atomic_load(&c->committed))
            continue;
        const qrec *r = (const qrec *)(c->data + q->rpos);
        tr.type = r->type;
        tr.id = r->id;
        tr.parent = r->parent;
        tr.group = r->type == TRACE_BEGIN ? r->arg : 0;
        tr.owner = r->owner;
        replay_engine_blocked(engine, &tr, q->name, q->nrec);
        note_failure(replay_engine_error(engine));
        return -1;
    }
    return 0;
}

int online_finish(uint64_t root_nchildren, int partial, const char *dir,
                  char *err, size_t errlen)
{
    int ret = -1;
    ospg_profile prof;
    loctab *named = NULL;
    memset(&prof, 0, sizeof(prof));
    spin_acquire(&drain_lock);
    spin_acquire(&names_lock);
    if (closed) {
        snprintf(err, errlen, "the profile was already written");
        goto out;
    }
    if (!failed)
        drain_all(-1);
    closed = 1;
    atomic_store(&stopped, 1);
    if (!failed && !partial) {
        trace_rec end;
        memset(&end, 0, sizeof(end));
        end.type = TRACE_END;
        end.id = TRACE_ROOT_ID;
        end.nchildren = root_nchildren;
        end.loc = OSPG_LOC_NONE;
        if (replay_engine_apply(engine, &end, "program end", 0) < 0)
            note_failure(replay_engine_error(engine));
        else
            check_drained();
    }
    if (failed) {
        snprintf(err, errlen, "the graph could not be built (%s)", fail_what);
        goto out;
    }
    if (partial)
        report_meta_set(meta, "complete",
                        "no: the program exited inside an OpenMP construct; "
                        "constructs still open were closed as they stood");
    ospg *graph = replay_engine_graph(engine);
    uint64_t peak = ospg_peak_live_nodes(graph);
    if (replay_engine_finish(engine, partial, &prof)) {
        snprintf(err, errlen, "the graph is incomplete: %s",
                 replay_engine_error(engine));
        goto out;
    }
    char num[32];
    snprintf(num, sizeof(num), "%llu",
             (unsigned long long)peak);
    report_meta_set(meta, "peak_live_nodes", num);
    /* Folding is serial: say when it took a large share of the run. */
    double run_seconds = seconds_now() - start_seconds;
    snprintf(num, sizeof(num), "%.3f", fold_seconds);
    report_meta_set(meta, "online_fold_seconds", num);
    if (run_seconds > 0.1 && fold_seconds > FOLD_HINT_SHARE * run_seconds)
        snprintf(hint, sizeof(hint),
                 "folding the graph on the fly took %.2f s of the run's "
                 "%.2f s: for a program this fine-grained, --mode offline "
                 "(WHATIF_MODE=offline) slows it down less",
                 fold_seconds, run_seconds);
    size_t unresolved = 0;
    char warn[512] = "";
    if (srcloc_resolve(locs, meta, &named, &unresolved, warn, sizeof(warn))) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    srcloc_merge_profile(&prof, named);
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
    spin_release(&drain_lock);
    return ret;
}
