/* ospg.c - builds the OSPG incrementally and folds it into a profile.
 *
 * Every intermediate node accumulates, per scenario, two chains: the serial
 * chain of its W- and S-children and the best chain through one P-child
 * (prefix or dependence start + the P-child's own span).  A chain is a length
 * plus the work per location along it (a small sparse map).  When a node has
 * ended and all its children are folded it is finalized (its span is the
 * longer chain, its statistics are collapsed) and folded into its parent,
 * then freed.  Children are applied to the parent in index order through a
 * frontier, so out-of-order reports only park, never change the result.
 * Folding is driven by a work list, never by recursion.
 *
 * Memory: one node per live intermediate node, one entry per (location,
 * group) below it, events for dependence predecessors still referenced by an
 * address.  Nothing grows with the number of folded nodes.
 *
 * Concurrency (ospg_set_concurrent): threads feed one builder at once, each
 * folding what it completes; they meet only at a node they share.  Each node
 * has a lock, and every field has one owner:
 * - a node's child bookkeeping (frontier, parked children, chains, statistics,
 *   the dependence state of its children, its lazy list) is guarded by the
 *   node's own lock;
 * - its relation to its parent (prefix, start chains, pending predecessors,
 *   `finalized` and, once finalized, `queued`) by the parent's lock;
 * - a node whose subtree is done is owned by the thread that queued it, which
 *   finalizes it without a lock and then folds it under the parent's lock.
 * A thread holds one node lock at a time (plus, briefly, a live-list shard
 * lock), so there is no lock order to break.  Recycled nodes, entries and
 * the work list are per thread.
 */
#include "ospg.h"

#include <math.h>
#include <pthread.h>
#include <stdalign.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "spin.h"

/* Keys here are ids and pointers (8 or 16 bytes): a multiply-xor mix
 * hashes them well and far cheaper than uthash's byte-wise default. */
#define HASH_FUNCTION(keyptr, keylen, hashv)                                \
    do {                                                                    \
        const unsigned char *k_ = (const unsigned char *)(keyptr);          \
        uint64_t h_ = 0x9e3779b97f4a7c15ull, w_;                            \
        size_t n_ = (size_t)(keylen), i_;                                   \
        for (i_ = 0; i_ + 8 <= n_; i_ += 8) {                               \
            memcpy(&w_, k_ + i_, 8);                                        \
            h_ = (h_ ^ w_) * 0xff51afd7ed558ccdull;                         \
        }                                                                   \
        for (; i_ < n_; i_++)                                               \
            h_ = (h_ ^ k_[i_]) * 0x100000001b3ull;                          \
        (hashv) = (unsigned)(h_ ^ (h_ >> 29));                              \
    } while (0)
/* uthash allocates a table and a bucket array for every hash that becomes
 * non-empty and frees both when it empties again: the statistics of every
 * node do that, millions of times in a task-heavy run.  Freed blocks of
 * those two first sizes are kept for reuse, per thread. */
static void *hash_alloc(size_t size);
static void hash_free(void *p, size_t size);
#define uthash_malloc(size) hash_alloc(size)
#define uthash_free(ptr, size) hash_free(ptr, size)
#include <uthash.h>
#include <utlist.h>

#define HASH_CACHE_MAX 256 /* blocks kept per size */
static int hash_key_once_failed; /* no key: blocks are not cached */

typedef struct hash_block {
    struct hash_block *next;
} hash_block;

static const size_t hash_sizes[2] = {
    sizeof(UT_hash_table), HASH_INITIAL_NUM_BUCKETS * sizeof(UT_hash_bucket)};
static _Thread_local struct {
    hash_block *free[2];
    unsigned n[2];
    int registered; /* hash_key holds a value: the cache dies with us */
} hash_cache __attribute__((tls_model("initial-exec")));

static void hash_cache_drop(void);
static pthread_key_t hash_key;
static pthread_once_t hash_key_once = PTHREAD_ONCE_INIT;

static void cache_drop(void);

static void hash_thread_exit(void *unused)
{
    (void)unused;
    hash_cache_drop();
    cache_drop();
}

static void hash_key_make(void)
{
    if (pthread_key_create(&hash_key, hash_thread_exit))
        hash_key_once_failed = 1;
}

static int hash_class(size_t size)
{
    return size == hash_sizes[0] ? 0 : size == hash_sizes[1] ? 1 : -1;
}

static void *hash_alloc(size_t size)
{
    int c = hash_class(size);
    if (c >= 0 && hash_cache.free[c]) {
        hash_block *b = hash_cache.free[c];
        hash_cache.free[c] = b->next;
        hash_cache.n[c]--;
        return b;
    }
    return malloc(size);
}

/* Makes the calling thread's caches die with it; 0 when they cannot. */
static int caches_register(void)
{
    if (!hash_cache.registered) {
        pthread_once(&hash_key_once, hash_key_make);
        hash_cache.registered =
            !hash_key_once_failed &&
            pthread_setspecific(hash_key, &hash_cache) == 0;
    }
    return hash_cache.registered;
}

static void hash_free(void *p, size_t size)
{
    int c = hash_class(size);
    caches_register();
    if (c < 0 || !hash_cache.registered || hash_cache.n[c] >= HASH_CACHE_MAX) {
        free(p);
        return;
    }
    hash_block *b = p;
    b->next = hash_cache.free[c];
    hash_cache.free[c] = b;
    hash_cache.n[c]++;
}

/* Returns the calling thread's cached blocks to the allocator. */
static void hash_cache_drop(void)
{
    for (int c = 0; c < 2; c++) {
        while (hash_cache.free[c]) {
            hash_block *b = hash_cache.free[c];
            hash_cache.free[c] = b->next;
            free(b);
        }
        hash_cache.n[c] = 0;
    }
}

/* ---- Sparse location -> work maps (critical-path attribution) ---- */

typedef struct centry {
    uint32_t loc;
    uint64_t val;
} centry;

/* Chains usually cross a handful of locations, so a flat array with a
 * linear search beats a hash here; the first CMAP_INLINE entries live in
 * the map itself, so most nodes never allocate one (e == NULL: inline). */
#define CMAP_INLINE 2

typedef struct cmap {
    uint32_t n, cap;
    centry *e;
    centry inl[CMAP_INLINE];
} cmap;

static inline centry *cmap_items(cmap *m)
{
    return m->e ? m->e : m->inl;
}

static inline const centry *cmap_citems(const cmap *m)
{
    return m->e ? m->e : m->inl;
}

static int cmap_add(cmap *m, uint32_t loc, uint64_t val)
{
    if (val == 0)
        return 0;
    centry *it = cmap_items(m);
    for (uint32_t i = 0; i < m->n; i++) {
        if (it[i].loc == loc) {
            it[i].val += val;
            return 0;
        }
    }
    uint32_t cap = m->e ? m->cap : CMAP_INLINE;
    if (m->n == cap) {
        uint32_t ncap = cap * 2;
        centry *e = m->e ? realloc(m->e, ncap * sizeof(*e))
                         : malloc(ncap * sizeof(*e));
        if (!e)
            return OSPG_ERR_NOMEM;
        if (!m->e)
            memcpy(e, m->inl, sizeof(m->inl));
        m->e = e;
        m->cap = ncap;
        it = e;
    }
    it[m->n].loc = loc;
    it[m->n].val = val;
    m->n++;
    return 0;
}

static int cmap_merge(cmap *dst, const cmap *src)
{
    const centry *it = cmap_citems(src);
    for (uint32_t i = 0; i < src->n; i++)
        if (cmap_add(dst, it[i].loc, it[i].val))
            return OSPG_ERR_NOMEM;
    return 0;
}

static void cmap_free(cmap *m)
{
    free(m->e);
    m->e = NULL;
    m->n = m->cap = 0;
}

/* Replaces dst by a copy of src; dst's old contents are freed. */
static int cmap_copy(cmap *dst, const cmap *src)
{
    dst->n = 0;
    return cmap_merge(dst, src);
}

/* ---- Chains ---- */

/* rank orders equally long chains: the lower rank wins a tie. */
typedef struct chain {
    uint64_t len;
    uint64_t rank;
    cmap crit;
} chain;

#define RANK_PREFIX 0u           /* a start from the serial prefix */
#define RANK_NONE UINT64_MAX     /* no chain yet */

static void chain_free(chain *c)
{
    cmap_free(&c->crit);
}

/* Moves src into dst (dst's map freed); src is left empty. */
static void chain_move(chain *dst, chain *src)
{
    cmap_free(&dst->crit);
    *dst = *src;
    memset(&src->crit, 0, sizeof(src->crit));
}

static int chain_beats(uint64_t len, uint64_t rank, const chain *cur)
{
    return len > cur->len || (len == cur->len && rank < cur->rank);
}

/* ---- Per-location statistics ---- */

typedef struct stat_key {
    uintptr_t group; /* ospg_group *, 0 for a plain entry */
    uint32_t loc;
    uint32_t pad;    /* zeroed: uthash compares the raw bytes */
} stat_key;

typedef struct stat_entry {
    stat_key key;
    uint64_t instances;
    uint64_t work;
    UT_hash_handle hh;
    uint64_t span[]; /* [nscen]: summed for plain entries, maxed in groups */
} stat_entry;

struct ospg_group {
    ospg_node *owner;
    uint32_t loc;
    void *user;
    struct ospg_group *next; /* the owner's list */
};

/* ---- Dependence events and address states ---- */

typedef struct dep_event dep_event;
struct dep_event {
    uint32_t refs;
    int done;
    size_t nscen;
    uint64_t rank;      /* the predecessor's index + 1 */
    chain *fin;         /* [nscen] finish chains, once done */
    ospg_node **waiters;
    size_t nwaiters, capwaiters;
};

typedef struct evset {
    dep_event **ev;
    size_t n, cap;
} evset;

enum { GEN_NONE = 0, GEN_IN, GEN_INOUTSET, GEN_OUT };

typedef struct addr_state {
    uint64_t addr;
    int cur_kind;
    evset prev; /* the previous group: what members of cur depend on */
    evset cur;
    UT_hash_handle hh;
} addr_state;

/* ---- Nodes ---- */

enum { PARK_W = 1, PARK_NODE = 2 };

typedef struct park_item {
    uint64_t idx;
    int type;
    ospg_node *node;          /* PARK_NODE */
    ospg_dep *deps;           /* PARK_NODE: resolved at the frontier */
    size_t ndeps;
    uint64_t work;            /* PARK_W */
    uint32_t loc, region;
    unsigned wflags;          /* PARK_W */
    struct park_item *prev, *next;
} park_item;

struct ospg_node {
    spin_lock mu;           /* concurrent builders: see the file comment */
    unsigned shard;         /* the live list it is on */
    ospg_node *parent;
    uint64_t idx;
    ospg_kind kind;
    uint32_t loc;
    ospg_group *group;

    int ended;
    int finalized;
    int queued;             /* on the work list */
    int partial;            /* a cut-short run: missing children are empty */
    uint64_t seen;          /* highest child index reported + 1 */
    int prefix_ready;       /* P: start[] holds the serial prefix */
    uint64_t nchildren;     /* known once ended */
    uint64_t frontier;      /* children below this index are applied */
    uint64_t unfolded;      /* begun intermediate children not yet folded */
    ospg_node *blocking;    /* the S-child at the frontier, still open */
    park_item *parked;      /* out-of-order children, sorted by idx */

    uint64_t work;
    uint64_t nodes;         /* nodes folded into it, itself and W included */
    uint64_t preds_pending; /* P: dependence predecessors not yet done */
    dep_event *event;       /* P with depend items: its finish, shared */
    addr_state *addrs;      /* this node's P-children's dependence state */
    dep_event *all_last;    /* the last omp_all_memory P-child, held */
    ospg_group *groups;     /* groups this node owns */
    stat_entry *stats;
    stat_entry *hot;        /* the entry of stats added to last */
    /* W-children of the node's own location: the outermost-instance rule
     * drops them unless the node's location changes at its end, so they
     * are only summed here (skip_loc, count, work, span per scenario). */
    uint32_t skip_loc;
    uint64_t skip_n, skip_inst, skip_work; /* W-nodes, instances among them */
    uint64_t *skip_span;

    chain *ser;   /* [nscen] serial chain; the final chain once finalized */
    chain *best;  /* [nscen] best chain through a P-child */
    chain *start; /* [nscen] P: when its subtree may start */
    /* P: the prefix's attribution is still the parent's serial chain (not
     * copied until that chain changes or this node wins). */
    int lazy_prefix;
    ospg_node *lazy_prev, *lazy_next;
    ospg_node *lazy_list;   /* P-children whose prefix is still lazy */
    void *user;
    ospg_node *live_prev, *live_next; /* every live node, for teardown */
    ospg_node *next_free;
};

/* Live nodes, for a partial finish and for teardown, in shards so that
 * threads allocating at once rarely meet. */
#define LIVE_SHARDS 16
#define PEAK_SAMPLE 64 /* concurrent: allocations between peak updates */

typedef struct live_shard {
    alignas(64) spin_lock lock;
    atomic_uint_fast64_t live;
    uint64_t allocs;
    ospg_node *list;
} live_shard;

struct ospg {
    size_t nscen;
    ospg_scenario *scen;   /* [nscen], scen[0] is the identity */
    ospg_node *root;
    atomic_int err;        /* sticky: the first failure */
    int concurrent;        /* nodes are locked */
    uint64_t gen;          /* tells this builder's thread caches apart */
    atomic_uint_fast64_t peak_live;
    live_shard shards[LIVE_SHARDS];
    ospg_release_fn release_fn;
    void *release_arg;
};

/* ---- Per-thread recycling ---- */

/* What a thread recycles: sized for one builder (gen) at a time.  Blocks
 * freed by a thread go to its own cache, up to a bound, so neither side of
 * a fold ever locks for memory. */
#define CACHE_MAX 4096

typedef struct thread_cache {
    uint64_t gen;
    ospg_node *nodes;
    stat_entry *stats;     /* linked through hh.next */
    park_item *parks;      /* linked through next */
    unsigned nnodes, nstats, nparks;
    unsigned shard;        /* the live shard this thread allocates into */
    uint64_t *scratch;     /* [nscen] */
    size_t scratch_len;
    ospg_node **ready;     /* work list of nodes to finalize or fold */
    size_t nready, capready;
    int registered;        /* cache_key holds a value */
} thread_cache;

/* initial-exec: a shared library's default TLS model calls
 * __tls_get_addr on every access (the tool is loaded at start-up, so its
 * TLS is static). */
static _Thread_local thread_cache tc __attribute__((tls_model("initial-exec")));
static atomic_uint_fast64_t builder_gen;
static atomic_uint next_shard;

static inline int gerr(const ospg *g)
{
    return atomic_load_explicit(&g->err, memory_order_relaxed);
}

static inline void node_lock(const ospg *g, ospg_node *n)
{
    if (g->concurrent)
        spin_acquire(&n->mu);
}

static inline void node_unlock(const ospg *g, ospg_node *n)
{
    if (g->concurrent)
        spin_release(&n->mu);
}

const char *ospg_strerror(int err)
{
    switch (err) {
    case OSPG_OK: return "success";
    case OSPG_ERR_NOMEM: return "out of memory";
    case OSPG_ERR_STATE: return "call not allowed in the node's state";
    case OSPG_ERR_INDEX: return "child index reused or beyond the child count";
    case OSPG_ERR_ARG: return "invalid argument";
    }
    return "unknown error";
}

static int contains(const uint32_t *v, size_t n, uint32_t x)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (v[mid] == x)
            return 1;
        if (v[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return 0;
}

static uint64_t divide(uint64_t work, double factor)
{
    if (isinf(factor))
        return 0;
    return (uint64_t)((double)work / factor);
}

uint64_t ospg_scaled_work(const ospg_scenario *s, uint64_t work, uint32_t loc,
                          uint32_t region)
{
    if (!s)
        return work;
    if (s->region_factor && region != 0) {
        double f = s->region_factor(s->region_factor_arg, region);
        if (f > 1.0)
            return divide(work, f);
    }
    if (!(s->factor > 1.0))
        return work;
    int selected = (s->all_regions && region != 0) ||
                   (region != 0 && contains(s->regions, s->nregions, region)) ||
                   contains(s->locs, s->nlocs, loc);
    return selected ? divide(work, s->factor) : work;
}

static int fail(ospg *g, int err)
{
    int none = OSPG_OK;
    atomic_compare_exchange_strong(&g->err, &none, err);
    return err;
}

/* ---- Node life cycle ---- */

/* One block per node: ser, best and start chains, then skip_span. */
static size_t chains_size(const ospg *g)
{
    return 3 * g->nscen * sizeof(chain) + g->nscen * sizeof(uint64_t);
}

/* Frees what the calling thread keeps for reuse. */
static void cache_drop(void)
{
    while (tc.nodes) {
        ospg_node *n = tc.nodes;
        tc.nodes = n->next_free;
        free(n->ser);
        free(n);
    }
    while (tc.stats) {
        stat_entry *e = tc.stats;
        tc.stats = e->hh.next;
        free(e);
    }
    while (tc.parks) {
        park_item *it = tc.parks;
        tc.parks = it->next;
        free(it);
    }
    tc.nnodes = tc.nstats = tc.nparks = 0;
    free(tc.scratch);
    tc.scratch = NULL;
    tc.scratch_len = 0;
    if (!tc.nready) {
        free(tc.ready);
        tc.ready = NULL;
        tc.capready = 0;
    }
    tc.gen = 0;
}

/* Points the calling thread's cache at g (every API entry calls it).
 * Returns 0, or an error when out of memory. */
static int cache_bind(ospg *g)
{
    if (tc.gen == g->gen)
        return 0;
    cache_drop();
    tc.scratch = calloc(g->nscen, sizeof(uint64_t));
    if (!tc.scratch)
        return fail(g, OSPG_ERR_NOMEM);
    tc.scratch_len = g->nscen;
    tc.gen = g->gen;
    /* a shard per thread: threads allocating at once never share one */
    tc.shard = atomic_fetch_add(&next_shard, 1) % LIVE_SHARDS;
    caches_register();
    return 0;
}

static park_item *park_alloc(ospg *g)
{
    (void)g;
    park_item *it = tc.parks;
    if (it) {
        tc.parks = it->next;
        tc.nparks--;
        memset(it, 0, sizeof(*it));
        return it;
    }
    return calloc(1, sizeof(*it));
}

static void park_free(ospg *g, park_item *it)
{
    (void)g;
    if (tc.gen != g->gen || tc.nparks >= CACHE_MAX || !hash_cache.registered) {
        free(it);
        return;
    }
    it->next = tc.parks;
    tc.parks = it;
    tc.nparks++;
}

static uint64_t live_total(const ospg *g)
{
    uint64_t n = 0;
    for (int i = 0; i < LIVE_SHARDS; i++)
        n += atomic_load_explicit(&g->shards[i].live, memory_order_relaxed);
    return n;
}

static void peak_update(ospg *g)
{
    uint64_t now = live_total(g);
    uint64_t peak = atomic_load_explicit(&g->peak_live, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak(&g->peak_live, &peak,
                                                       now))
        ;
}

static ospg_node *node_alloc(ospg *g)
{
    ospg_node *n = tc.nodes;
    chain *chains;
    if (n) {
        tc.nodes = n->next_free;
        tc.nnodes--;
        chains = n->ser;
    } else {
        n = malloc(sizeof(*n));
        chains = calloc(1, chains_size(g));
        if (!n || !chains) {
            free(n);
            free(chains);
            return NULL;
        }
    }
    memset(n, 0, sizeof(*n));
    memset(chains, 0, chains_size(g));
    n->nodes = 1;
    n->ser = chains;
    n->best = chains + g->nscen;
    n->start = chains + 2 * g->nscen;
    n->skip_span = (uint64_t *)(chains + 3 * g->nscen);
    for (size_t s = 0; s < g->nscen; s++) {
        n->ser[s].rank = RANK_PREFIX;
        n->best[s].rank = RANK_NONE;
        n->start[s].rank = RANK_PREFIX;
    }
    live_shard *sh = &g->shards[tc.shard];
    n->shard = tc.shard;
    spin_acquire(&sh->lock);
    DL_APPEND2(sh->list, n, live_prev, live_next);
    atomic_fetch_add_explicit(&sh->live, 1, memory_order_relaxed);
    int sample = !g->concurrent || ++sh->allocs % PEAK_SAMPLE == 0;
    spin_release(&sh->lock);
    if (sample)
        peak_update(g);
    return n;
}

/* Entries are recycled: a task-heavy run creates and folds millions. */
static void stat_free(ospg *g, stat_entry *e)
{
    if (tc.gen != g->gen || tc.nstats >= CACHE_MAX || !hash_cache.registered) {
        free(e);
        return;
    }
    e->hh.next = tc.stats;
    tc.stats = e;
    tc.nstats++;
}

static void stats_free(ospg *g, stat_entry **head)
{
    stat_entry *e, *tmp;
    HASH_ITER(hh, *head, e, tmp) {
        HASH_DEL(*head, e);
        stat_free(g, e);
    }
}

static void evset_release(evset *s);

static void event_release(dep_event *e, size_t nscen)
{
    if (!e || --e->refs > 0)
        return;
    if (e->fin) {
        for (size_t s = 0; s < nscen; s++)
            chain_free(&e->fin[s]);
        free(e->fin);
    }
    free(e->waiters);
    free(e);
}

static void evset_release(evset *s)
{
    for (size_t i = 0; i < s->n; i++)
        event_release(s->ev[i], s->ev[i]->nscen);
    free(s->ev);
    memset(s, 0, sizeof(*s));
}

static void addrs_free(ospg *g, addr_state **head)
{
    addr_state *a, *tmp;
    (void)g;
    HASH_ITER(hh, *head, a, tmp) {
        HASH_DEL(*head, a);
        evset_release(&a->prev);
        evset_release(&a->cur);
        free(a);
    }
}

/* Releases everything a node holds and recycles it.  Groups it owns are
 * freed here: their entries were collapsed when it was finalized. */
static void node_release(ospg *g, ospg_node *n)
{
    if (g->release_fn && n->user)
        g->release_fn(g->release_arg, n->user);
    for (size_t s = 0; s < 3 * g->nscen; s++)
        chain_free(&n->ser[s]);
    stats_free(g, &n->stats);
    addrs_free(g, &n->addrs);
    if (n->all_last)
        event_release(n->all_last, g->nscen);
    event_release(n->event, g->nscen);
    park_item *p, *ptmp;
    DL_FOREACH_SAFE(n->parked, p, ptmp) {
        DL_DELETE(n->parked, p);
        free(p->deps);
        free(p);
    }
    ospg_group *gr, *gtmp;
    LL_FOREACH_SAFE(n->groups, gr, gtmp) {
        if (g->release_fn && gr->user)
            g->release_fn(g->release_arg, gr->user);
        free(gr);
    }
    live_shard *sh = &g->shards[n->shard];
    spin_acquire(&sh->lock);
    DL_DELETE2(sh->list, n, live_prev, live_next);
    atomic_fetch_sub_explicit(&sh->live, 1, memory_order_relaxed);
    spin_release(&sh->lock);
    if (tc.gen != g->gen || tc.nnodes >= CACHE_MAX || !hash_cache.registered) {
        free(n->ser);
        free(n);
        return;
    }
    n->next_free = tc.nodes;
    tc.nodes = n;
    tc.nnodes++;
}

/* Queues n on the calling thread's work list, unless it is queued already.
 * The caller holds the lock that guards n->queued: n's own before n is
 * finalized, its parent's after. */
static int push_ready(ospg *g, ospg_node *n)
{
    if (n->queued)
        return 0;
    if (tc.nready == tc.capready) {
        size_t cap = tc.capready ? tc.capready * 2 : 64;
        ospg_node **r = realloc(tc.ready, cap * sizeof(*r));
        if (!r)
            return fail(g, OSPG_ERR_NOMEM);
        tc.ready = r;
        tc.capready = cap;
    }
    tc.ready[tc.nready++] = n;
    n->queued = 1;
    return 0;
}

static int subtree_done(const ospg_node *n)
{
    return n->ended && n->frontier == n->nchildren && n->unfolded == 0 &&
           !n->blocking && !n->parked;
}

/* A finalized node may fold into its parent once nothing else holds it. */
static int can_fold(const ospg_node *n)
{
    if (!n->finalized)
        return 0;
    if (n->kind == OSPG_S)
        return 1; /* S-children are applied by the parent's frontier */
    return n->prefix_ready && n->preds_pending == 0;
}

/* ---- Statistics ---- */

static stat_entry *stat_new(ospg *g, uint32_t loc, ospg_group *group)
{
    size_t size = sizeof(stat_entry) + g->nscen * sizeof(uint64_t);
    stat_entry *e = tc.stats;
    if (e) {
        tc.stats = e->hh.next;
        tc.nstats--;
        memset(e, 0, size);
    } else if (!(e = calloc(1, size))) {
        return NULL;
    }
    e->key.loc = loc;
    e->key.group = (uintptr_t)group;
    return e;
}

/* Adds src's numbers into dst; members of one group sum work, max span. */
static void stat_combine(ospg *g, stat_entry *dst, const stat_entry *src)
{
    dst->work += src->work;
    if (dst->key.group) {
        dst->instances = 1;
        for (size_t s = 0; s < g->nscen; s++)
            if (src->span[s] > dst->span[s])
                dst->span[s] = src->span[s];
    } else {
        dst->instances += src->instances;
        for (size_t s = 0; s < g->nscen; s++)
            dst->span[s] += src->span[s];
    }
}

/* Moves every entry of *src into n's statistics, combining equal keys.
 * The smaller table is walked: a node's first child usually hands over its
 * whole table at no cost. */
static void stats_merge(ospg *g, ospg_node *n, stat_entry **src)
{
    stat_entry *e, *tmp, *d;
    if (!*src)
        return;
    if (HASH_COUNT(n->stats) < HASH_COUNT(*src)) {
        stat_entry *mine = n->stats;
        n->stats = *src;
        *src = mine;
        n->hot = NULL; /* its entry may be combined away below */
    }
    HASH_ITER(hh, *src, e, tmp) {
        HASH_DEL(*src, e);
        HASH_FIND(hh, n->stats, &e->key, sizeof(e->key), d);
        if (d) {
            stat_combine(g, d, e);
            stat_free(g, e);
        } else {
            HASH_ADD(hh, n->stats, key, sizeof(e->key), e);
        }
    }
}

/* Adds one contribution under key (loc, group) to n's statistics.  Runs
 * of siblings share a key, so the entry hit last is tried first. */
static int stats_add(ospg *g, ospg_node *n, uint32_t loc, ospg_group *group,
                     uint64_t work, const uint64_t *span, uint64_t ninst)
{
    stat_entry *e = n->hot;
    if (!e || e->key.loc != loc || e->key.group != (uintptr_t)group) {
        stat_key key;
        memset(&key, 0, sizeof(key));
        key.loc = loc;
        key.group = (uintptr_t)group;
        HASH_FIND(hh, n->stats, &key, sizeof(key), e);
        if (!e) {
            e = stat_new(g, loc, group);
            if (!e)
                return fail(g, OSPG_ERR_NOMEM);
            HASH_ADD(hh, n->stats, key, sizeof(e->key), e);
        }
        n->hot = e;
    }
    /* A fresh entry is all zero, so combining equals setting it. */
    e->work += work;
    if (group) {
        e->instances = 1;
        for (size_t s = 0; s < g->nscen; s++)
            if (span[s] > e->span[s])
                e->span[s] = span[s];
    } else {
        e->instances += ninst;
        for (size_t s = 0; s < g->nscen; s++)
            e->span[s] += span[s];
    }
    return 0;
}

/* A finalized node's own contribution as an instance of its location,
 * added where it folds: usually the parent already holds the key, so this
 * costs no allocation. */
static int stats_own(ospg *g, ospg_node *n, ospg_node *into)
{
    if (n->loc == OSPG_LOC_NONE)
        return 0;
    uint64_t *spans = tc.scratch;
    for (size_t s = 0; s < g->nscen; s++)
        spans[s] = n->ser[s].len;
    return stats_add(g, into, n->loc, n->group, n->work, spans, 1);
}

/* The outermost-instance rule: a node with location L drops the
 * contributions of L found below it (stats_own adds its own later). */
static int stats_collapse(ospg *g, ospg_node *n)
{
    stat_entry *e, *tmp;
    if (n->skip_n && n->skip_loc != n->loc) {
        /* The location changed at the end: the skipped W-nodes count. */
        if (stats_add(g, n, n->skip_loc, NULL, n->skip_work, n->skip_span,
                      n->skip_inst))
            return gerr(g);
    }
    n->hot = NULL; /* entries are dropped and rekeyed below */
    if (n->loc != OSPG_LOC_NONE) {
        HASH_ITER(hh, n->stats, e, tmp) {
            if (e->key.loc == n->loc) {
                HASH_DEL(n->stats, e);
                stat_free(g, e);
            }
        }
    }
    /* Close the groups this node owns: each becomes one instance. */
    if (n->groups) {
        stat_entry *closed = NULL;
        HASH_ITER(hh, n->stats, e, tmp) {
            if (!e->key.group)
                continue;
            ospg_group *gr = (ospg_group *)e->key.group;
            if (gr->owner != n)
                continue;
            HASH_DEL(n->stats, e);
            e->key.group = 0;
            e->instances = 1;
            stat_entry *d;
            HASH_FIND(hh, closed, &e->key, sizeof(e->key), d);
            if (d) {
                stat_combine(g, d, e);
                stat_free(g, e);
            } else {
                HASH_ADD(hh, closed, key, sizeof(e->key), e);
            }
        }
        stats_merge(g, n, &closed);
    }
    return 0;
}

/* ---- Applying children to their parent ---- */

/* The serial chain of n is about to grow: P-children that still share it
 * as their prefix take their own copy first. */
static int materialize_lazy(ospg *g, ospg_node *n)
{
    ospg_node *p, *tmp;
    DL_FOREACH_SAFE2(n->lazy_list, p, tmp, lazy_next) {
        for (size_t s = 0; s < g->nscen; s++)
            if (p->start[s].rank == RANK_PREFIX &&
                cmap_copy(&p->start[s].crit, &n->ser[s].crit))
                return fail(g, OSPG_ERR_NOMEM);
        DL_DELETE2(n->lazy_list, p, lazy_prev, lazy_next);
        p->lazy_prefix = 0;
    }
    return 0;
}

static int apply_w(ospg *g, ospg_node *n, uint64_t work, uint32_t loc,
                   uint32_t region, unsigned flags)
{
    if (n->lazy_list && materialize_lazy(g, n))
        return gerr(g);
    uint64_t *spans = tc.scratch;
    n->work += work;
    for (size_t s = 0; s < g->nscen; s++) {
        uint64_t ws = s ? ospg_scaled_work(&g->scen[s], work, loc, region)
                        : work;
        spans[s] = ws;
        n->ser[s].len += ws;
        if (cmap_add(&n->ser[s].crit, loc, ws))
            return fail(g, OSPG_ERR_NOMEM);
    }
    if (loc == OSPG_LOC_NONE)
        return 0;
    if (loc == n->loc && (n->skip_n == 0 || n->skip_loc == loc)) {
        n->skip_loc = loc;
        n->skip_n++;
        n->skip_inst += !(flags & OSPG_W_CONTINUES);
        n->skip_work += work;
        for (size_t s = 0; s < g->nscen; s++)
            n->skip_span[s] += spans[s];
        return 0;
    }
    return stats_add(g, n, loc, NULL, work, spans,
                     !(flags & OSPG_W_CONTINUES));
}

static int apply_s(ospg *g, ospg_node *n, ospg_node *c)
{
    if (n->lazy_list && materialize_lazy(g, n))
        return gerr(g);
    n->work += c->work;
    n->nodes += c->nodes;
    for (size_t s = 0; s < g->nscen; s++) {
        n->ser[s].len += c->ser[s].len;
        if (cmap_merge(&n->ser[s].crit, &c->ser[s].crit))
            return fail(g, OSPG_ERR_NOMEM);
    }
    stats_merge(g, n, &c->stats);
    if (stats_own(g, c, n))
        return gerr(g);
    n->unfolded--;
    node_release(g, c);
    if (subtree_done(n))
        return push_ready(g, n);
    return 0;
}

/* Starts waiting for a dependence predecessor, or takes its finish now. */
static int take_pred(ospg *g, ospg_node *p, dep_event *e)
{
    if (e == p->event)
        return 0;
    if (!e->done) {
        if (e->nwaiters == e->capwaiters) {
            size_t cap = e->capwaiters ? e->capwaiters * 2 : 4;
            ospg_node **w = realloc(e->waiters, cap * sizeof(*w));
            if (!w)
                return fail(g, OSPG_ERR_NOMEM);
            e->waiters = w;
            e->capwaiters = cap;
        }
        e->waiters[e->nwaiters++] = p;
        p->preds_pending++;
        return 0;
    }
    for (size_t s = 0; s < g->nscen; s++) {
        if (chain_beats(e->fin[s].len, e->rank, &p->start[s])) {
            p->start[s].len = e->fin[s].len;
            p->start[s].rank = e->rank;
            if (cmap_copy(&p->start[s].crit, &e->fin[s].crit))
                return fail(g, OSPG_ERR_NOMEM);
        }
    }
    return 0;
}

static int evset_push(evset *s, dep_event *e)
{
    if (s->n == s->cap) {
        size_t cap = s->cap ? s->cap * 2 : 2;
        dep_event **v = realloc(s->ev, cap * sizeof(*v));
        if (!v)
            return OSPG_ERR_NOMEM;
        s->ev = v;
        s->cap = cap;
    }
    s->ev[s->n++] = e;
    e->refs++;
    return 0;
}

static int dep_kind(uint32_t type)
{
    switch (type) {
    case OSPG_DEP_IN: return GEN_IN;
    case OSPG_DEP_INOUTSET: return GEN_INOUTSET;
    default: return GEN_OUT;
    }
}

/* Resolves one depend item of P-child p against its earlier siblings. */
/* depend(inout: omp_all_memory): p follows the latest group of every
 * address and the previous such task, and becomes the writer every later
 * access of any address (even a new one) depends on. */
static int resolve_all_memory(ospg *g, ospg_node *n, ospg_node *p)
{
    addr_state *a, *tmp;
    if (n->all_last && take_pred(g, p, n->all_last))
        return gerr(g);
    HASH_ITER(hh, n->addrs, a, tmp) {
        for (size_t i = 0; i < a->cur.n; i++)
            if (take_pred(g, p, a->cur.ev[i]))
                return gerr(g);
        evset_release(&a->prev);
        a->prev = a->cur;
        memset(&a->cur, 0, sizeof(a->cur));
        a->cur_kind = GEN_OUT;
        if (evset_push(&a->cur, p->event))
            return fail(g, OSPG_ERR_NOMEM);
    }
    if (n->all_last)
        event_release(n->all_last, g->nscen);
    n->all_last = p->event;
    p->event->refs++;
    return 0;
}

static int resolve_dep(ospg *g, ospg_node *n, ospg_node *p, const ospg_dep *d)
{
    if (d->type == OSPG_DEP_ALL_MEMORY)
        return resolve_all_memory(g, n, p);
    addr_state *a;
    HASH_FIND(hh, n->addrs, &d->addr, sizeof(d->addr), a);
    if (!a) {
        a = calloc(1, sizeof(*a));
        if (!a)
            return fail(g, OSPG_ERR_NOMEM);
        a->addr = d->addr;
        HASH_ADD(hh, n->addrs, addr, sizeof(a->addr), a);
        /* after an all-memory task, a new address starts behind it */
        if (n->all_last) {
            a->cur_kind = GEN_OUT;
            if (evset_push(&a->cur, n->all_last))
                return fail(g, OSPG_ERR_NOMEM);
        }
    }
    int kind = dep_kind(d->type);
    if (kind == GEN_OUT || kind != a->cur_kind) {
        evset_release(&a->prev);
        a->prev = a->cur;
        memset(&a->cur, 0, sizeof(a->cur));
        a->cur_kind = kind;
    }
    for (size_t i = 0; i < a->prev.n; i++)
        if (take_pred(g, p, a->prev.ev[i]))
            return gerr(g);
    if (evset_push(&a->cur, p->event))
        return fail(g, OSPG_ERR_NOMEM);
    return 0;
}

/* A P-child reaches the frontier: its prefix is the serial chain so far. */
static int apply_p_begin(ospg *g, ospg_node *n, ospg_node *p,
                         const ospg_dep *deps, size_t ndeps)
{
    int shared = 0;
    for (size_t s = 0; s < g->nscen; s++) {
        p->start[s].len = n->ser[s].len;
        p->start[s].rank = RANK_PREFIX;
        shared |= n->ser[s].crit.n > 0;
    }
    if (shared) {
        p->lazy_prefix = 1;
        DL_APPEND2(n->lazy_list, p, lazy_prev, lazy_next);
    }
    for (size_t i = 0; i < ndeps; i++)
        if (resolve_dep(g, n, p, &deps[i]))
            return gerr(g);
    p->prefix_ready = 1;
    if (can_fold(p))
        return push_ready(g, p);
    return 0;
}

/* Applies parked children that the frontier has reached. */
static int drain(ospg *g, ospg_node *n)
{
    while (!n->blocking && n->parked &&
           (n->parked->idx == n->frontier || n->partial)) {
        park_item *it = n->parked;
        if (n->partial)
            n->frontier = it->idx; /* skip children that never came */
        DL_DELETE(n->parked, it);
        int rc = 0;
        if (it->type == PARK_W) {
            rc = apply_w(g, n, it->work, it->loc, it->region, it->wflags);
            n->frontier++;
        } else if (it->node->kind == OSPG_S) {
            if (it->node->finalized) {
                n->frontier++;
                rc = apply_s(g, n, it->node);
            } else {
                n->blocking = it->node;
            }
        } else {
            n->frontier++;
            rc = apply_p_begin(g, n, it->node, it->deps, it->ndeps);
            free(it->deps);
        }
        park_free(g, it);
        if (rc)
            return rc;
    }
    if (n->partial && !n->blocking && !n->parked && n->frontier < n->nchildren)
        n->frontier = n->nchildren;
    if (subtree_done(n))
        return push_ready(g, n);
    return 0;
}

static int park(ospg *g, ospg_node *n, park_item *it)
{
    park_item *pos;
    /* Reports arrive mostly in order: search from the tail. */
    if (it->idx < n->frontier)
        return fail(g, OSPG_ERR_INDEX);
    if (n->blocking && it->idx == n->frontier)
        return fail(g, OSPG_ERR_INDEX);
    for (pos = n->parked ? n->parked->prev : NULL; pos; pos = pos->prev) {
        if (pos->idx == it->idx)
            return fail(g, OSPG_ERR_INDEX);
        if (pos->idx < it->idx)
            break;
        if (pos == n->parked) {
            pos = NULL;
            break;
        }
    }
    if (!pos) {
        DL_PREPEND(n->parked, it);
    } else if (pos == n->parked->prev) {
        DL_APPEND(n->parked, it);
    } else {
        DL_APPEND_ELEM(n->parked, pos, it);
    }
    return 0;
}

/* ---- Finalizing and folding ---- */

static int finalize(ospg *g, ospg_node *n)
{
    for (size_t s = 0; s < g->nscen; s++) {
        /* The serial chain wins a tie against any chain through a P-child. */
        if (n->best[s].len > n->ser[s].len)
            chain_move(&n->ser[s], &n->best[s]);
        chain_free(&n->best[s]);
    }
    if (stats_collapse(g, n))
        return gerr(g);
    if (n == g->root && stats_own(g, n, n))
        return gerr(g);
    return 0;
}

/* Folds a finished P-child into its parent's best chain. */
static int fold_p(ospg *g, ospg_node *p)
{
    ospg_node *n = p->parent;
    dep_event *ev = p->event;
    if (ev) {
        ev->fin = calloc(g->nscen, sizeof(chain));
        if (!ev->fin)
            return fail(g, OSPG_ERR_NOMEM);
    }
    for (size_t s = 0; s < g->nscen; s++) {
        uint64_t len = p->start[s].len + p->ser[s].len;
        int wins = chain_beats(len, p->idx, &n->best[s]);
        if (!wins && !ev)
            continue;
        int shares_prefix = p->lazy_prefix && p->start[s].rank == RANK_PREFIX;
        chain c;
        memset(&c, 0, sizeof(c));
        chain_move(&c, &p->start[s]);
        c.len = len;
        c.rank = p->idx;
        if (shares_prefix &&
            cmap_merge(&c.crit, &n->ser[s].crit)) {
            chain_free(&c);
            return fail(g, OSPG_ERR_NOMEM);
        }
        if (cmap_merge(&c.crit, &p->ser[s].crit)) {
            chain_free(&c);
            return fail(g, OSPG_ERR_NOMEM);
        }
        if (ev) {
            ev->fin[s].len = len;
            if (cmap_copy(&ev->fin[s].crit, &c.crit)) {
                chain_free(&c);
                return fail(g, OSPG_ERR_NOMEM);
            }
        }
        if (wins)
            chain_move(&n->best[s], &c);
        else
            chain_free(&c);
    }
    if (p->lazy_prefix) {
        DL_DELETE2(n->lazy_list, p, lazy_prev, lazy_next);
        p->lazy_prefix = 0;
    }
    n->work += p->work;
    n->nodes += p->nodes;
    stats_merge(g, n, &p->stats);
    if (stats_own(g, p, n))
        return gerr(g);
    if (ev) {
        ev->done = 1;
        for (size_t i = 0; i < ev->nwaiters; i++) {
            ospg_node *w = ev->waiters[i];
            if (take_pred(g, w, ev))
                return gerr(g);
            w->preds_pending--;
            if (can_fold(w) && push_ready(g, w))
                return gerr(g);
        }
        ev->nwaiters = 0;
    }
    n->unfolded--;
    node_release(g, p);
    if (subtree_done(n))
        return push_ready(g, n);
    return 0;
}

/* Folds n, finalized, into its parent if nothing holds it any more.  The
 * caller holds the parent's lock. */
static int fold_into_parent(ospg *g, ospg_node *n)
{
    ospg_node *parent = n->parent;
    if (!can_fold(n)) {
        n->queued = 0; /* whoever releases it queues it again */
        return 0;
    }
    if (n->kind == OSPG_P)
        return fold_p(g, n);
    if (parent->blocking == n) {
        parent->blocking = NULL;
        parent->frontier++;
        if (apply_s(g, parent, n) || drain(g, parent))
            return gerr(g);
        return 0;
    }
    /* An S-child finalized early stays parked until the frontier reaches
     * it (drain applies it). */
    n->queued = 0;
    return 0;
}

/* Processes the calling thread's work list until nothing is ready.  A node
 * on it is this thread's to process (queued stays set meanwhile, so nothing
 * queues it twice): its subtree is done, so it is finalized without a lock,
 * then folded under its parent's. */
static int run(ospg *g)
{
    while (tc.nready && !gerr(g)) {
        ospg_node *n = tc.ready[--tc.nready];
        int finalizing = !n->finalized;
        if (finalizing) {
            if (n->partial) {
                node_lock(g, n);
                int rc = drain(g, n);
                node_unlock(g, n);
                if (rc)
                    return gerr(g);
            }
            if (!subtree_done(n)) {
                n->queued = 0;
                continue;
            }
            if (finalize(g, n))
                return gerr(g);
        }
        if (n == g->root) {
            n->finalized = 1;
            n->queued = 0;
            continue;
        }
        ospg_node *parent = n->parent;
        node_lock(g, parent);
        if (finalizing)
            n->finalized = 1; /* under the parent's lock: can_fold reads it */
        int rc = fold_into_parent(g, n);
        node_unlock(g, parent);
        if (rc)
            return gerr(g);
    }
    if (gerr(g))
        tc.nready = 0; /* a failed build keeps nothing queued */
    return gerr(g);
}

/* ---- Public API ---- */

ospg *ospg_new(size_t nscen, const ospg_scenario *scen)
{
    if (nscen == 0)
        return NULL;
    ospg *g = aligned_alloc(alignof(ospg), sizeof(*g));
    if (!g)
        return NULL;
    memset(g, 0, sizeof(*g));
    g->nscen = nscen;
    g->gen = atomic_fetch_add(&builder_gen, 1) + 1;
    g->scen = calloc(nscen, sizeof(*g->scen));
    if (!g->scen) {
        free(g);
        return NULL;
    }
    for (size_t s = 1; s < nscen; s++)
        g->scen[s] = scen[s];
    if (cache_bind(g) || !(g->root = node_alloc(g))) {
        ospg_free(g);
        return NULL;
    }
    g->root->kind = OSPG_S;
    g->root->loc = OSPG_LOC_PROGRAM;
    g->root->prefix_ready = 1;
    return g;
}

void ospg_set_concurrent(ospg *g)
{
    g->concurrent = 1;
}

size_t ospg_nscen(const ospg *g)
{
    return g->nscen;
}

ospg_node *ospg_root(ospg *g)
{
    return g->root;
}

int ospg_error(const ospg *g)
{
    return gerr(g);
}

void ospg_set_release_hook(ospg *g, ospg_release_fn fn, void *arg)
{
    g->release_fn = fn;
    g->release_arg = arg;
}

void ospg_node_set_user(ospg_node *n, void *user)
{
    n->user = user;
}

void ospg_group_set_user(ospg_group *gr, void *user)
{
    gr->user = user;
}

uint64_t ospg_live_nodes(const ospg *g)
{
    return live_total(g);
}

uint64_t ospg_peak_live_nodes(const ospg *g)
{
    return atomic_load(&g->peak_live);
}

ospg_group *ospg_group_new(ospg *g, ospg_node *owner, uint32_t loc)
{
    if (gerr(g) || !owner) {
        fail(g, OSPG_ERR_STATE);
        return NULL;
    }
    ospg_group *gr = calloc(1, sizeof(*gr));
    if (!gr) {
        fail(g, OSPG_ERR_NOMEM);
        return NULL;
    }
    gr->owner = owner;
    gr->loc = loc;
    /* The owner's lock may be held by a thread folding into it; the list
     * is only read once the owner's subtree is done. */
    node_lock(g, owner);
    int finalized = owner->finalized;
    if (!finalized)
        LL_PREPEND(owner->groups, gr);
    node_unlock(g, owner);
    if (finalized) {
        free(gr);
        fail(g, OSPG_ERR_STATE);
        return NULL;
    }
    return gr;
}

/* parent's lock held. */
static int child_allowed(ospg *g, ospg_node *parent, uint64_t idx)
{
    if (gerr(g))
        return gerr(g);
    if (parent->finalized)
        return fail(g, OSPG_ERR_STATE);
    if (parent->ended && idx >= parent->nchildren)
        return fail(g, OSPG_ERR_INDEX);
    if (idx < parent->frontier || (parent->blocking && idx == parent->frontier))
        return fail(g, OSPG_ERR_INDEX);
    return 0;
}

/* Links new node n as child idx of parent (parent's lock held). */
static int attach(ospg *g, ospg_node *parent, ospg_node *n,
                  const ospg_dep *deps, size_t ndeps)
{
    int rc = child_allowed(g, parent, n->idx);
    if (rc)
        return rc;
    if (n->idx >= parent->seen)
        parent->seen = n->idx + 1;
    parent->unfolded++;
    if (n->idx == parent->frontier && !parent->blocking) {
        if (n->kind == OSPG_S) {
            parent->blocking = n;
            return 0;
        }
        parent->frontier++;
        if (apply_p_begin(g, parent, n, deps, ndeps) || drain(g, parent))
            return gerr(g);
        return 0;
    }
    park_item *it = park_alloc(g);
    if (!it)
        return fail(g, OSPG_ERR_NOMEM);
    it->idx = n->idx;
    it->type = PARK_NODE;
    it->node = n;
    /* Depend items resolve in index order, so they wait with it. */
    if (ndeps) {
        it->deps = malloc(ndeps * sizeof(*deps));
        if (!it->deps) {
            park_free(g, it);
            return fail(g, OSPG_ERR_NOMEM);
        }
        memcpy(it->deps, deps, ndeps * sizeof(*deps));
        it->ndeps = ndeps;
    }
    if (park(g, parent, it)) {
        free(it->deps);
        park_free(g, it);
        return gerr(g);
    }
    return 0;
}

ospg_node *ospg_begin(ospg *g, ospg_node *parent, uint64_t idx, ospg_kind kind,
                      uint32_t loc, ospg_group *group, const ospg_dep *deps,
                      size_t ndeps, int *err)
{
    int rc = gerr(g) ? gerr(g) : cache_bind(g);
    if (!rc && !parent)
        rc = fail(g, OSPG_ERR_STATE);
    if (!rc && kind != OSPG_S && kind != OSPG_P)
        rc = fail(g, OSPG_ERR_ARG);
    if (!rc && (ndeps || group) && kind != OSPG_P)
        rc = fail(g, OSPG_ERR_ARG);
    if (!rc && group) {
        /* Members must lie under the owner, or the group would never
         * close (and an untrusted trace could make it dangle).  Parent
         * links never change, and parent's ancestors are all live. */
        ospg_node *a = parent;
        while (a && a != group->owner)
            a = a->parent;
        if (!a)
            rc = fail(g, OSPG_ERR_ARG);
    }
    ospg_node *n = rc ? NULL : node_alloc(g);
    if (!rc && !n)
        rc = fail(g, OSPG_ERR_NOMEM);
    if (!rc) {
        n->parent = parent;
        n->idx = idx;
        n->kind = kind;
        n->group = group;
        n->loc = (loc == OSPG_LOC_NONE && group) ? group->loc : loc;
        if (ndeps) {
            n->event = calloc(1, sizeof(*n->event));
            if (!n->event)
                rc = fail(g, OSPG_ERR_NOMEM);
            else {
                n->event->refs = 1;
                n->event->nscen = g->nscen;
                n->event->rank = idx + 1;
            }
        }
    }
    if (!rc) {
        node_lock(g, parent);
        rc = attach(g, parent, n, deps, ndeps);
        node_unlock(g, parent);
        if (rc) /* never linked: nobody else can know it */
            node_release(g, n);
    } else if (n) {
        node_release(g, n);
    }
    if (!rc)
        rc = run(g);
    if (rc) {
        if (err)
            *err = rc;
        return NULL;
    }
    return n;
}

int ospg_work(ospg *g, ospg_node *parent, uint64_t idx, uint64_t work,
              uint32_t loc, uint32_t region, unsigned flags)
{
    int rc = gerr(g) ? gerr(g) : cache_bind(g);
    if (rc)
        return rc;
    if (!parent)
        return fail(g, OSPG_ERR_STATE);
    node_lock(g, parent);
    rc = child_allowed(g, parent, idx);
    if (!rc) {
        if (idx >= parent->seen)
            parent->seen = idx + 1;
        parent->nodes++;
        if (idx == parent->frontier) {
            parent->frontier++;
            rc = apply_w(g, parent, work, loc, region, flags) ||
                         drain(g, parent)
                     ? gerr(g)
                     : 0;
        } else {
            park_item *it = park_alloc(g);
            if (!it) {
                rc = fail(g, OSPG_ERR_NOMEM);
            } else {
                it->idx = idx;
                it->type = PARK_W;
                it->work = work;
                it->loc = loc;
                it->region = region;
                it->wflags = flags;
                if (park(g, parent, it)) {
                    park_free(g, it);
                    rc = gerr(g);
                }
            }
        }
    }
    node_unlock(g, parent);
    return rc ? rc : run(g);
}

int ospg_end(ospg *g, ospg_node *n, uint64_t nchildren, uint32_t loc)
{
    int rc = gerr(g) ? gerr(g) : cache_bind(g);
    if (rc)
        return rc;
    if (!n)
        return fail(g, OSPG_ERR_STATE);
    node_lock(g, n);
    if (n->ended)
        rc = fail(g, OSPG_ERR_STATE);
    else if (nchildren < n->frontier ||
             (n->blocking && nchildren <= n->frontier) ||
             (n->parked && n->parked->prev->idx >= nchildren))
        rc = fail(g, OSPG_ERR_INDEX);
    if (!rc) {
        n->ended = 1;
        n->nchildren = nchildren;
        if (loc != OSPG_LOC_NONE)
            n->loc = loc;
        if (subtree_done(n))
            rc = push_ready(g, n);
    }
    node_unlock(g, n);
    return rc ? rc : run(g);
}

static int cmp_stat(const void *a, const void *b)
{
    const ospg_loc_stat *x = a, *y = b;
    return (x->loc > y->loc) - (x->loc < y->loc);
}

static int build_profile(ospg *g, ospg_profile *out);

int ospg_finish(ospg *g, uint64_t root_nchildren, ospg_profile *out)
{
    memset(out, 0, sizeof(*out));
    if (ospg_end(g, g->root, root_nchildren, OSPG_LOC_NONE))
        return gerr(g);
    return build_profile(g, out);
}

int ospg_finish_partial(ospg *g, ospg_profile *out)
{
    memset(out, 0, sizeof(*out));
    if (gerr(g) || !g->root)
        return gerr(g) ? gerr(g) : fail(g, OSPG_ERR_STATE);
    if (cache_bind(g))
        return gerr(g);
    /* End every node as it stands: children never reported count as
     * empty, so the profile covers the work that was measured.  No other
     * thread may use the builder any more. */
    ospg_node *n;
    for (int i = 0; i < LIVE_SHARDS; i++)
        DL_FOREACH2(g->shards[i].list, n, live_next) {
            n->partial = 1;
            if (!n->ended) {
                n->ended = 1;
                n->nchildren = n->seen > n->frontier ? n->seen : n->frontier;
            } else if (n->nchildren > n->seen && n->nchildren > n->frontier) {
                n->nchildren = n->seen > n->frontier ? n->seen : n->frontier;
            }
        }
    for (int i = 0; i < LIVE_SHARDS; i++)
        DL_FOREACH2(g->shards[i].list, n, live_next)
            if (push_ready(g, n))
                return gerr(g);
    if (run(g))
        return gerr(g);
    return build_profile(g, out);
}

/* The profile from a finalized root; releases the root. */
static int build_profile(ospg *g, ospg_profile *out)
{
    ospg_node *r = g->root;
    if (!r || !r->finalized || live_total(g) != 1)
        return fail(g, OSPG_ERR_STATE);

    /* Every location with an instance or with critical work gets a row. */
    stat_entry *e, *tmp;
    size_t n = HASH_COUNT(r->stats);
    for (size_t s = 0; s < g->nscen; s++)
        for (uint32_t i = 0; i < r->ser[s].crit.n; i++) {
            stat_key k = {0, cmap_citems(&r->ser[s].crit)[i].loc, 0};
            HASH_FIND(hh, r->stats, &k, sizeof(k), e);
            if (!e) {
                e = stat_new(g, k.loc, NULL);
                if (!e)
                    return fail(g, OSPG_ERR_NOMEM);
                HASH_ADD(hh, r->stats, key, sizeof(e->key), e);
                n++;
            }
        }
    out->nscen = g->nscen;
    out->work = r->work;
    out->nodes = r->nodes;
    out->span = calloc(g->nscen, sizeof(uint64_t));
    out->locs = calloc(n ? n : 1, sizeof(ospg_loc_stat));
    uint64_t *pool = calloc(2 * g->nscen * (n ? n : 1), sizeof(uint64_t));
    out->storage_ = pool;
    if (!out->span || !out->locs || !pool) {
        ospg_profile_free(out);
        return fail(g, OSPG_ERR_NOMEM);
    }
    for (size_t s = 0; s < g->nscen; s++)
        out->span[s] = r->ser[s].len;
    size_t i = 0;
    HASH_ITER(hh, r->stats, e, tmp) {
        ospg_loc_stat *ls = &out->locs[i];
        ls->loc = e->key.loc;
        ls->instances = e->instances;
        ls->work = e->work;
        ls->span = pool + 2 * g->nscen * i;
        ls->critical = ls->span + g->nscen;
        memcpy(ls->span, e->span, g->nscen * sizeof(uint64_t));
        for (size_t s = 0; s < g->nscen; s++)
            for (uint32_t j = 0; j < r->ser[s].crit.n; j++)
                if (cmap_citems(&r->ser[s].crit)[j].loc == ls->loc)
                    ls->critical[s] = cmap_citems(&r->ser[s].crit)[j].val;
        i++;
    }
    out->nlocs = n;
    qsort(out->locs, n, sizeof(*out->locs), cmp_stat);
    /* The builder is spent: nothing is live any more. */
    node_release(g, r);
    g->root = NULL;
    return 0;
}

void ospg_profile_free(ospg_profile *p)
{
    if (!p)
        return;
    free(p->storage_);
    free(p->locs);
    free(p->span);
    memset(p, 0, sizeof(*p));
}

void ospg_free(ospg *g)
{
    if (!g)
        return;
    /* A failed or abandoned build still owns its live nodes.  Events are
     * shared with siblings, so drop every node's hold before freeing. */
    g->release_fn = NULL;
    for (int i = 0; i < LIVE_SHARDS; i++)
        while (g->shards[i].list)
            node_release(g, g->shards[i].list);
    /* This thread's cache; other threads drop theirs at their next use of
     * a builder, or when they exit. */
    if (tc.gen == g->gen)
        cache_drop();
    free(g->scen);
    free(g);
    hash_cache_drop();
}
