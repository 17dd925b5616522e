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
 * A leaf (a task or chunk with no directive inside) never takes a node:
 * at its parent's frontier it folds straight into the parent, and before
 * it, it waits there as a parked item.
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
 * A thread rarely waits for a node's lock: an update that finds the node
 * locked is queued on the node (the lock and the queue are one atomic word,
 * `state`) and applied, in the order queued, by the thread that holds the
 * lock, which lets go only when the queue is empty (combining).  Only a
 * holder that has applied COMBINE_MAX updates of others in one hold makes
 * the others wait until it lets go (`crowded`, unlock_node).  A thread
 * that queued an update never touches the node again: it may be folded
 * and recycled by the time the update is applied.  So a parent that many threads fold into at once (the scope
 * of a loop of tasks, a barrier phase) is updated by one thread at a time
 * with its data in that thread's cache, and the others go on at once.
 * Recycled nodes, entries and the work list are per thread.
 */
#include "ospg.h"

#include <math.h>
#include <pthread.h>
#include <sched.h>
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
/* ---- Recycling ----
 *
 * A task-heavy run creates and folds millions of nodes, statistics entries
 * and hash tables (uthash allocates a table and a bucket array for every
 * hash that becomes non-empty, and frees both when it empties again).
 * Every such block goes back, when freed, to the thread that allocated it
 * (its `home`): kept by that thread when it frees it itself, else pushed
 * on a lock-free list the home's thread takes back at once when its own
 * blocks run out.  So a thread that creates tasks others complete reuses
 * its own blocks, and no allocator lock is ever shared between threads.
 * Homes belong to their builder (sized for it) and go with it. */
enum { POOL_NODE, POOL_STAT, POOL_PARK, POOL_SEG, POOL_OP, POOL_HTABLE,
       POOL_HBUCKETS, NPOOLS };
#define POOL_KEEP 4096 /* blocks a thread keeps that it freed itself */

typedef struct home home;
typedef struct grain_hist grain_hist;

/* The header in front of every recycled block (16-byte aligned). */
typedef struct rblock {
    struct rblock *next;
    home *home;          /* NULL: a plain malloc block */
    unsigned pool;
    unsigned pad;        /* 1: handed out again after a free */
} rblock;

typedef struct rpool {
    rblock *free;        /* the home's thread only */
    unsigned nfree;
    size_t size;         /* user bytes of a block */
    alignas(64) _Atomic(rblock *) returned; /* pushed by other threads */
} rpool;

struct home {
    rpool pools[NPOOLS];
    grain_hist *hists;           /* by location, this home's thread only */
    grain_hist *hist_hot;        /* the one added to last */
    grain_hist *hist_prev;       /* the one before it (siblings of two
                                  * locations alternate, as fib's do) */
    home *next_home;     /* the builder's list */
    /* the nodes this home's thread allocated (ospg_node.live_prev/next):
     * changed by that thread only */
    struct ospg_node *live;
    uint64_t allocs;
    /* nodes this home's thread allocated less those it released, wherever
     * they came from (it may go below zero; the homes' sum is the live
     * count): one writer, so no locked instruction on a node's path */
    alignas(64) atomic_uint_fast64_t nlive;
};

/* The calling thread's home for the builder it uses now (NULL: none). */
static _Thread_local home *my_home __attribute__((tls_model("initial-exec")));

static void *pool_alloc(unsigned k, size_t size)
{
    home *h = my_home;
    rblock *b = NULL;
    if (h && h->pools[k].size == size) {
        rpool *p = &h->pools[k];
        if (!p->free) {
            p->free = atomic_exchange_explicit(&p->returned, NULL,
                                               memory_order_acquire);
            p->nfree = 0; /* not counted: bounded by what this home made */
        }
        if ((b = p->free)) {
            p->free = b->next;
            if (p->nfree)
                p->nfree--;
            b->pad = 1; /* recycled */
            return b + 1;
        }
    } else {
        h = NULL;
    }
    if (!(b = malloc(sizeof(*b) + size)))
        return NULL;
    b->home = h;
    b->pool = k;
    b->pad = 0; /* fresh */
    return b + 1;
}

static void pool_free(void *ptr)
{
    if (!ptr)
        return;
    rblock *b = (rblock *)ptr - 1;
    home *h = b->home;
    if (!h) {
        free(b);
        return;
    }
    rpool *p = &h->pools[b->pool];
    if (h == my_home) {
        if (p->nfree >= POOL_KEEP) {
            free(b);
            return;
        }
        b->next = p->free;
        p->free = b;
        p->nfree++;
        return;
    }
    b->next = atomic_load_explicit(&p->returned, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(
        &p->returned, &b->next, b, memory_order_release,
        memory_order_relaxed))
        ;
}

static void hists_free(home *h);

static void home_free(home *h)
{
    hists_free(h); /* its table's blocks go back to the pools first */
    for (int k = 0; k < NPOOLS; k++) {
        rblock *lists[2] = {h->pools[k].free, atomic_load(&h->pools[k].returned)};
        for (int i = 0; i < 2; i++)
            for (rblock *b = lists[i], *next; b; b = next) {
                next = b->next;
                free(b);
            }
    }
    free(h);
}

static void *hash_alloc(size_t size);
#define uthash_malloc(size) hash_alloc(size)
#define uthash_free(ptr, size) pool_free(ptr)
#include <uthash.h>
#include <utlist.h>

/* One thread's grains of one location (ospg_loc_stat): a grain counts
 * whether or not it is nested in another instance of its location, so
 * its numbers never follow the graph up to the root; they are summed
 * where the grain is folded and merged once, into the profile. */
struct grain_hist {
    uint32_t loc;
    UT_hash_handle hh;
    uint64_t grains;
    uint64_t work;       /* their own work (nested grains' left out) */
    uint64_t max;        /* the largest of one grain */
    uint64_t min;        /* the smallest */
    uint64_t count[OSPG_HIST_BUCKETS];
};

static void *hash_alloc(size_t size)
{
    unsigned k = size == sizeof(UT_hash_table) ? POOL_HTABLE : POOL_HBUCKETS;
    return pool_alloc(k, size);
}

static void hists_free(home *h)
{
    grain_hist *e, *tmp;
    HASH_ITER(hh, h->hists, e, tmp) {
        HASH_DEL(h->hists, e);
        free(e);
    }
    h->hist_hot = h->hist_prev = NULL;
}

/* One more grain of location loc with own work v, in the calling thread's
 * numbers (a location's first grain there allocates them). */
static int grain_add(uint32_t loc, uint64_t v)
{
    home *h = my_home;
    grain_hist *e = h->hist_hot;
    if (!e || e->loc != loc) {
        grain_hist *hot = e;
        if (h->hist_prev && h->hist_prev->loc == loc) {
            e = h->hist_prev;
        } else {
            HASH_FIND(hh, h->hists, &loc, sizeof(loc), e);
            if (!e) {
                if (!(e = calloc(1, sizeof(*e))))
                    return -1;
                e->loc = loc;
                HASH_ADD(hh, h->hists, loc, sizeof(e->loc), e);
            }
        }
        h->hist_prev = hot;
        h->hist_hot = e;
    }
    if (!e->grains || v < e->min)
        e->min = v;
    if (v > e->max)
        e->max = v;
    e->grains++;
    e->work += v;
    e->count[ospg_hist_bucket(v)]++;
    return 0;
}

uint64_t ospg_grain_median(const uint64_t *hist)
{
    uint64_t n = 0;
    if (!hist)
        return 0;
    for (size_t b = 0; b < OSPG_HIST_BUCKETS; b++)
        n += hist[b];
    uint64_t rank = (n + 1) / 2, seen = 0;
    for (size_t b = 0; b < OSPG_HIST_BUCKETS && n; b++)
        if ((seen += hist[b]) >= rank)
            return ospg_hist_value(b);
    return 0;
}

/* The thread's work list and scratch die with it. */
static pthread_key_t tc_key;
static pthread_once_t tc_key_once = PTHREAD_ONCE_INIT;
static int tc_key_failed;

static void cache_drop(void);

static void thread_exit(void *unused)
{
    (void)unused;
    cache_drop();
}

static void tc_key_make(void)
{
    if (pthread_key_create(&tc_key, thread_exit))
        tc_key_failed = 1;
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

/* Replaces dst's contents by a copy of src's, in dst's own storage. */
static int cmap_copy(cmap *dst, const cmap *src)
{
    dst->n = 0;
    return cmap_merge(dst, src);
}

/* dst[loc] = max(dst[loc], src[loc]) for every loc of src. */
static int cmap_max(cmap *dst, const cmap *src)
{
    const centry *it = cmap_citems(src);
    for (uint32_t i = 0; i < src->n; i++) {
        centry *d = cmap_items(dst);
        uint32_t j = 0;
        while (j < dst->n && d[j].loc != it[i].loc)
            j++;
        if (j < dst->n) {
            if (it[i].val > d[j].val)
                d[j].val = it[i].val;
        } else if (cmap_add(dst, it[i].loc, it[i].val)) {
            return OSPG_ERR_NOMEM;
        }
    }
    return 0;
}

static uint64_t cmap_get(const cmap *m, uint32_t loc)
{
    const centry *it = cmap_citems(m);
    for (uint32_t i = 0; i < m->n; i++)
        if (it[i].loc == loc)
            return it[i].val;
    return 0;
}

/* Frees an array of n maps (NULL: none). */
static void cmaps_free(cmap *m, size_t n)
{
    if (!m)
        return;
    for (size_t i = 0; i < n; i++)
        cmap_free(&m[i]);
    free(m);
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

/* dst becomes the chain of length len and rank whose map is a copy of
 * base, in dst's own storage: a best chain replaced at every task of one
 * creator would otherwise allocate a map and free the one before it. */
static int chain_reset(chain *dst, uint64_t len, uint64_t rank,
                       const cmap *base)
{
    dst->len = len;
    dst->rank = rank;
    return cmap_copy(&dst->crit, base);
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
    int tag;             /* a tag location (see "Tags") */
    int line;            /* a sampled line's (apply_lines) */
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
    cmap *fin_tm;       /* [nscen] their tag chains, or NULL: none */
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

enum { PARK_W = 1, PARK_NODE = 2, PARK_LEAF = 3 };

typedef struct park_item {
    uint64_t idx;
    int type;
    ospg_node *node;          /* PARK_NODE */
    ospg_dep *deps;           /* PARK_NODE: resolved at the frontier */
    size_t ndeps;
    uint64_t work;            /* PARK_W, PARK_LEAF: its W-child's */
    uint32_t loc, region;
    unsigned wflags;
    ospg_kind leaf_kind;      /* PARK_LEAF */
    uint32_t leaf_loc;
    ospg_group *group;
    int has_w;
    ospg_sample *smp;         /* PARK_W: owned copy */
    size_t nsmp;
    struct park_item *prev, *next;
} park_item;

/* A node whose parked children had to be searched this far for one insert
 * indexes them by idx from then on, until none is parked: children come
 * mostly in order or last first (an end of the sorted list), but a thread
 * that runs far behind the others inserts deep inside it, every time.
 * The index's entries are apart from the items, which stay small. */
#define PARK_WALK_MAX 64
#define COMBINE_MAX 256 /* others' updates a holder applies in one hold */

typedef struct park_key {
    uint64_t idx;
    park_item *item;
    UT_hash_handle hh;
} park_key;

/* A run of consecutive children already summed (see "Segments"). */
typedef struct segment {
    uint64_t first, last;   /* the children it holds: first..last */
    /* Like a node's (see "Uniform scenarios"): every scenario's chains
     * equal scenario 0's, which alone are kept. */
    int uni;
    chain *ser;             /* [nscen] their serial chain (rank unused) */
    chain *best;            /* [nscen] the best chain through one of its
                             * P-children, from first on; rank RANK_NONE:
                             * none */
    /* NULL, or [nscen]: each tag's longest chain through one of its
     * P-children (taken nodes), from first on; its other children carry
     * no tags */
    cmap *tm;
    struct segment *prev, *next;
} segment;


typedef struct node_op node_op;

struct ospg_node {
    /* Concurrent builders (see the file comment): bit 0 set while a thread
     * updates the node, the rest the updates queued meanwhile (a node_op
     * list, newest first).  Unlocked, nothing is queued. */
    atomic_uintptr_t state;
    /* set by a holder that has applied COMBINE_MAX updates of others in
     * one hold: until it lets go, others wait instead of queueing */
    atomic_int crowded;
    int linked;             /* on its home's live list */
    int dead;               /* released (its block may await reuse) */
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
    int uni_start;          /* start and tm_start are uniform, like uni */
    uint64_t nchildren;     /* known once ended */
    uint64_t frontier;      /* children below this index are applied */
    uint64_t unfolded;      /* begun intermediate children not yet folded */
    ospg_node *blocking;    /* the S-child at the frontier, still open */
    /* out-of-order children: sorted by idx while there is no index,
     * in the order parked once there is one */
    park_item *parked;
    park_key *park_index;   /* NULL, or parked by idx (PARK_WALK_MAX) */
    uint64_t nparked;
    uint64_t parked_max;    /* highest idx parked, while any is */
    /* runs of out-of-order W-children and leaves already summed (see
     * "Segments"), sorted by their first index */
    struct segment *segs;
    uint64_t early_next;    /* the index after the last early child seen */
    struct park_item *parked_as; /* P: its item in its parent's parked list */

    uint64_t work;
    /* work of the W-nodes below it that no nested grain (a P-node with a
     * location: a task, a chunk) holds: a grain's own work */
    uint64_t grain_own;
    uint64_t nodes;         /* nodes folded into it, itself and W included */
    uint64_t preds_pending; /* P: dependence predecessors not yet done */
    dep_event *event;       /* P with depend items: its finish, shared */
    addr_state *addrs;      /* this node's P-children's dependence state */
    dep_event *all_last;    /* the last omp_all_memory P-child, held */
    _Atomic(ospg_group *) groups; /* groups this node owns */
    stat_entry *stats;
    stat_entry *hot;        /* the entry of stats added to last */
    /* W-children of the node's own location: the outermost-instance rule
     * drops them unless the node's location changes at its end, so they
     * are only summed here (skip_loc, count, work, span per scenario). */
    uint32_t skip_loc;
    uint32_t begin_loc;     /* as begun: an S-node's tells barrier phases */
    /* the location it will have when finalized, where that is known when
     * it begins (see dropped_above), else OSPG_LOC_NONE; never changes */
    uint32_t drop_loc;
    uint64_t drop_mask;     /* loc_bit of drop_loc here and above */
    uint64_t skip_n, skip_inst, skip_work; /* W-nodes, instances among them */
    uint64_t *skip_span;

    chain *ser;   /* [nscen] serial chain; the final chain once finalized */
    chain *best;  /* [nscen] best chain through a P-child */
    chain *start; /* [nscen] P: when its subtree may start */
    /* Tag chains (see "Tags"), NULL until the first tag: [2 * nscen], the
     * serial ones then the best ones (the node's own lock), and [nscen],
     * the start ones (the parent's lock, as start). */
    cmap *tm;
    cmap *tm_start;
    /* P: the prefix's attribution is still the parent's serial chain (not
     * copied until that chain changes or this node wins). */
    int lazy_prefix;
    /* Uniform (see "Uniform scenarios"): every scenario's ser, best and
     * skip_span equal scenario 0's, which alone are kept, and there are
     * no tag chains (the node's lock; uni_start: the parent's, as start) */
    int uni;
    ospg_node *lazy_prev, *lazy_next;
    ospg_node *lazy_list;   /* P-children whose prefix is still lazy */
    void *user;
    /* its home's live list (every node begun there and not released, and
     * nodes released elsewhere until their home reuses them): for a
     * partial finish and for teardown */
    ospg_node *live_prev, *live_next;
    ospg_node *next_free;
};

/* An update of a node, queued when the node is locked by another thread. */
enum { OP_ATTACH = 1, OP_WORK, OP_END, OP_FOLD, OP_LEAF, OP_WORK_END };

struct node_op {
    node_op *next;
    int kind;
    ospg_node *child;   /* ATTACH: the new child; FOLD: the child to fold */
    int finalizing;     /* FOLD: the child was finalized just now */
    uint64_t idx, work, nchildren;
    uint32_t loc, region;
    uint32_t end_loc;   /* WORK_END: the END's location */
    unsigned flags;
    /* LEAF: the leaf itself (loc, region, flags, work: its W-child's) */
    ospg_kind leaf_kind;
    uint32_t leaf_loc;
    ospg_group *group;
    int has_w;
    ospg_dep *deps;     /* ATTACH: owned copy */
    size_t ndeps;
    ospg_sample *smp;   /* WORK: owned copy once queued */
    size_t nsmp;
};

/* concurrent: a thread's allocations between peak updates, after its
 * first PEAK_SAMPLE, which all update it (a thread that allocates fewer,
 * as each of several threads running a program's few tasks does, would
 * otherwise never count) */
#define PEAK_SAMPLE 64

struct ospg {
    size_t nscen;
    ospg_scenario *scen;   /* [nscen], scen[0] is the identity */
    /* Some scenario scales work by location (outside regions too), adds
     * grain burdens: else work outside regions, and grains, are the same
     * in every scenario. */
    int scaled_by_loc;
    int grain_burdens;
    /* nodes begin uniform (see "Uniform scenarios"); not with a single
     * scenario, nor where a scenario burdens grains or barriers (nearly
     * every node would differ) */
    int uniform;
    /* a node begun with a location keeps it (ospg_set_fixed_locations) */
    int fixed_locs;
    ospg_node *root;
    atomic_int err;        /* sticky: the first failure */
    int concurrent;        /* nodes are locked */
    size_t combine_max;    /* unlock_node; COMBINE_MAX but in tests */
    size_t runs_after;     /* seg_take; RUNS_AFTER but in tests */
    atomic_uint_fast64_t crowded_holds; /* holds that reached it */
    atomic_uint_fast64_t run_children; /* children taken into runs */
    atomic_uint_fast64_t run_nodes;    /* of which finished nodes */
    uint64_t gen;          /* tells this builder's thread caches apart */
    atomic_uint_fast64_t peak_live;
    ospg_release_fn release_fn;
    void *release_arg;
    ospg_region_tags_fn region_tags;
    void *region_tags_arg;
    spin_lock homes_lock;
    home *homes;           /* every thread's, freed with the builder */
};

/* ---- Per-thread state ---- */

/* A thread's state for the builder it uses now (gen): its home, its live
 * shard, its work list. */
typedef struct thread_cache {
    uint64_t gen;
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

static inline int gerr(const ospg *g)
{
    return atomic_load_explicit(&g->err, memory_order_relaxed);
}



const char *ospg_strerror(int err)
{
    switch (err) {
    case OSPG_OK: return "success";
    case OSPG_ERR_NOMEM: return "out of memory";
    case OSPG_ERR_STATE: return "call not allowed in the node's state";
    case OSPG_ERR_INDEX: return "child index reused or beyond the child count";
    case OSPG_ERR_ARG: return "invalid argument";
    case OSPG_ERR_LOC:
        return "a node ends with another location than it began with, "
               "which its recorder said never happens";
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


/* Frees the calling thread's state (not its home: the builder's). */
static void cache_drop(void)
{
    free(tc.scratch);
    tc.scratch = NULL;
    tc.scratch_len = 0;
    if (!tc.nready) {
        free(tc.ready);
        tc.ready = NULL;
        tc.capready = 0;
    }
    tc.gen = 0;
    my_home = NULL;
}

/* One block per node: the node, then its ser, best and start chains and
 * skip_span. */
static size_t node_size(const ospg *g)
{
    size_t head = (sizeof(ospg_node) + 15) & ~(size_t)15;
    return head + 3 * g->nscen * sizeof(chain) + g->nscen * sizeof(uint64_t);
}

static size_t stat_size(const ospg *g)
{
    return sizeof(stat_entry) + g->nscen * sizeof(uint64_t);
}

/* A segment and its chains, ser then best, of every scenario. */
static size_t seg_size(const ospg *g)
{
    return sizeof(segment) + 2 * g->nscen * sizeof(chain);
}

/* ---- Uniform scenarios ----
 *
 * What-if scenarios differ only where a W-node's work is scaled (a
 * what-if region, a chosen location) or a burden is added; every other
 * node has the same chains in every scenario.  Such a node is uniform:
 * only scenario 0's chains are kept and updated, and the loops over
 * scenarios run once.  A node is expanded (scenario 0 copied to the
 * others) before the first update that differs by scenario reaches it, or
 * before a child that is not uniform folds into it; it stays expanded.  A
 * program with annotated regions pays for its scenarios only on the nodes
 * above region work. */

/* Scenarios to update in a node whose flag is uni. */
static inline size_t nsc(const ospg *g, int uni)
{
    return uni ? 1 : g->nscen;
}

/* Where scenario s's chain lives in a node whose flag is uni. */
static inline size_t sc_at(int uni, size_t s)
{
    return uni ? 0 : s;
}

/* Clears chains[1..nscen-1], which a uniform node never cleared
 * (node_alloc): once the node is expanded, node_release frees them. */
static void chains_clear_rest(ospg *g, chain *chains)
{
    memset(&chains[1], 0, (g->nscen - 1) * sizeof(chain));
}

/* Copies chains[0] to chains[1..nscen-1], cleared. */
static int chains_spread(ospg *g, chain *chains)
{
    for (size_t s = 1; s < g->nscen; s++) {
        chains[s].len = chains[0].len;
        chains[s].rank = chains[0].rank;
        if (cmap_copy(&chains[s].crit, &chains[0].crit))
            return fail(g, OSPG_ERR_NOMEM);
    }
    return 0;
}

/* Makes n's ser, best and skip_span hold every scenario. */
static int expand_chains(ospg *g, ospg_node *n)
{
    n->uni = 0;
    /* both cleared first: a copy that runs out of memory leaves the rest
     * empty, not garbage for node_release to free */
    chains_clear_rest(g, n->ser);
    chains_clear_rest(g, n->best);
    for (size_t s = 1; s < g->nscen; s++)
        n->skip_span[s] = n->skip_span[0];
    if (chains_spread(g, n->ser) || chains_spread(g, n->best))
        return gerr(g);
    return 0;
}

static inline int expand(ospg *g, ospg_node *n)
{
    return n->uni ? expand_chains(g, n) : 0;
}

/* Makes p's start hold every scenario. */
static inline int expand_start(ospg *g, ospg_node *p)
{
    if (!p->uni_start)
        return 0;
    p->uni_start = 0;
    chains_clear_rest(g, p->start);
    return chains_spread(g, p->start);
}

/* vals (one per scenario, uniform node: [0] only) in every scenario's
 * slot of out. */
static void spans_spread(const ospg *g, int uni, const uint64_t *vals,
                         uint64_t *out)
{
    for (size_t s = 0; s < g->nscen; s++)
        out[s] = vals[sc_at(uni, s)];
}

/* Whether a per-scenario array differs from its scenario 0. */
static int varies(const ospg *g, const uint64_t *v)
{
    for (size_t s = 1; s < g->nscen; s++)
        if (v[s] != v[0])
            return 1;
    return 0;
}

/* Points the calling thread at g (every API entry calls it), with a home
 * of its own.  Returns 0, or an error when out of memory. */
static int cache_bind(ospg *g)
{
    if (tc.gen == g->gen)
        return 0;
    cache_drop();
    tc.scratch = calloc(2 * g->nscen, sizeof(uint64_t)); /* two arrays */
    home *h = aligned_alloc(alignof(home), sizeof(home));
    if (!tc.scratch || !h) {
        free(h);
        return fail(g, OSPG_ERR_NOMEM);
    }
    memset(h, 0, sizeof(*h));
    h->pools[POOL_NODE].size = node_size(g);
    h->pools[POOL_STAT].size = stat_size(g);
    h->pools[POOL_PARK].size = sizeof(park_item);
    h->pools[POOL_SEG].size = seg_size(g);
    h->pools[POOL_OP].size = sizeof(node_op);
    h->pools[POOL_HTABLE].size = sizeof(UT_hash_table);
    h->pools[POOL_HBUCKETS].size =
        HASH_INITIAL_NUM_BUCKETS * sizeof(UT_hash_bucket);
    spin_acquire(&g->homes_lock);
    h->next_home = g->homes;
    g->homes = h;
    spin_release(&g->homes_lock);
    my_home = h;
    tc.scratch_len = g->nscen;
    tc.gen = g->gen;
    pthread_once(&tc_key_once, tc_key_make);
    if (!tc_key_failed)
        pthread_setspecific(tc_key, &tc);
    return 0;
}

static park_item *park_alloc(ospg *g)
{
    (void)g;
    park_item *it = pool_alloc(POOL_PARK, sizeof(*it));
    if (it)
        memset(it, 0, sizeof(*it));
    return it;
}

static void park_free(ospg *g, park_item *it)
{
    (void)g;
    free(it->smp);
    pool_free(it);
}

static int cmp_park(const park_item *a, const park_item *b)
{
    return (a->idx > b->idx) - (a->idx < b->idx);
}

/* Frees n's index of parked children, if any, and sorts them again. */
static void park_index_drop(ospg_node *n)
{
    if (!n->park_index)
        return;
    park_key *k, *tmp;
    HASH_ITER(hh, n->park_index, k, tmp) {
        HASH_DEL(n->park_index, k);
        free(k);
    }
    DL_SORT(n->parked, cmp_park);
}

/* Without concurrency one thread does everything, and the builder's
 * atomic read-modify-writes need not be locked instructions: the analyzer
 * paid four or five of them per node (about a third of its time per node
 * on a task trace). */
static uint64_t live_total(const ospg *g)
{
    uint64_t n = 0;
    if (g->concurrent)
        spin_acquire((spin_lock *)&g->homes_lock);
    for (const home *h = g->homes; h; h = h->next_home)
        n += atomic_load_explicit(&h->nlive, memory_order_relaxed);
    if (g->concurrent)
        spin_release((spin_lock *)&g->homes_lock);
    /* While others build, the homes are read one by one: a node's release
     * counted in a home read later than the one its allocation is
     * counted in can make the sum fall short, even below zero. */
    return (int64_t)n < 0 ? 0 : n;
}

/* Adds d (1 or -1) to the count of live nodes: the calling thread's, or,
 * for a thread without a home in g (ospg_free, when nothing else runs),
 * h's. */
static void nlive_add(const ospg *g, home *h, int d)
{
    if (tc.gen == g->gen && my_home)
        h = my_home;
    else if (g->concurrent) {
        atomic_fetch_add_explicit(&h->nlive, (uint64_t)(int64_t)d,
                                  memory_order_relaxed);
        return;
    }
    uint64_t v = atomic_load_explicit(&h->nlive, memory_order_relaxed);
    atomic_store_explicit(&h->nlive, v + (uint64_t)(int64_t)d,
                          memory_order_relaxed);
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
    size_t size = node_size(g);
    ospg_node *n = pool_alloc(POOL_NODE, size);
    if (!n)
        return NULL;
    /* a block released by another thread is still on this home's list */
    if (((rblock *)n - 1)->pad && n->linked)
        DL_DELETE2(my_home->live, n, live_prev, live_next);
    size_t head = (sizeof(ospg_node) + 15) & ~(size_t)15;
    /* uniform: only scenario 0's slots are read until an expansion
     * clears the others (a node is 1.8 KB with the default factors);
     * with one scenario they are the whole block */
    int partial = g->uniform && g->nscen > 1;
    memset(n, 0, partial ? head : size);
    chain *chains = (chain *)((char *)n + head);
    n->nodes = 1;
    n->uni = n->uni_start = g->uniform;
    n->ser = chains;
    n->best = chains + g->nscen;
    n->start = chains + 2 * g->nscen;
    n->skip_span = (uint64_t *)(chains + 3 * g->nscen);
    if (partial) {
        memset(&n->ser[0], 0, sizeof(chain));
        memset(&n->best[0], 0, sizeof(chain));
        memset(&n->start[0], 0, sizeof(chain));
        n->skip_span[0] = 0;
    }
    for (size_t s = 0, ns = nsc(g, n->uni); s < ns; s++) {
        n->ser[s].rank = RANK_PREFIX;
        n->best[s].rank = RANK_NONE;
        n->start[s].rank = RANK_PREFIX;
    }
    home *h = my_home;
    DL_APPEND2(h->live, n, live_prev, live_next);
    n->linked = 1;
    nlive_add(g, h, 1);
    uint64_t allocs = ++h->allocs;
    if (!g->concurrent || allocs <= PEAK_SAMPLE || allocs % PEAK_SAMPLE == 0)
        peak_update(g);
    return n;
}

/* Entries are recycled: a task-heavy run creates and folds millions. */
static void stat_free(ospg *g, stat_entry *e)
{
    (void)g;
    pool_free(e);
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
    cmaps_free(e->fin_tm, nscen);
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
static void seg_free(ospg *g, segment *sg);

static void node_release(ospg *g, ospg_node *n)
{
    if (g->release_fn && n->user)
        g->release_fn(g->release_arg, n->user);
    /* updates still queued: only a failed build leaves any (a locked
     * exchange on every node's release cost more than the check) */
    uintptr_t st = atomic_load_explicit(&n->state, memory_order_acquire);
    if (st && g->concurrent)
        st = atomic_exchange(&n->state, 0);
    else if (st)
        atomic_store_explicit(&n->state, 0, memory_order_relaxed);
    for (node_op *q = (node_op *)(st & ~(uintptr_t)1), *next; q; q = next) {
        next = q->next;
        free(q->deps);
        free(q->smp);
        pool_free(q);
    }
    /* a uniform node's other scenarios never held a map */
    for (size_t s = 0, ns = nsc(g, n->uni); s < ns; s++) {
        chain_free(&n->ser[s]);
        chain_free(&n->best[s]);
    }
    for (size_t s = 0, ns = nsc(g, n->uni_start); s < ns; s++)
        chain_free(&n->start[s]);
    cmaps_free(n->tm, 2 * g->nscen);
    cmaps_free(n->tm_start, g->nscen);
    stats_free(g, &n->stats);
    addrs_free(g, &n->addrs);
    if (n->all_last)
        event_release(n->all_last, g->nscen);
    event_release(n->event, g->nscen);
    segment *sg, *sgtmp;
    DL_FOREACH_SAFE(n->segs, sg, sgtmp) {
        DL_DELETE(n->segs, sg);
        seg_free(g, sg);
    }
    park_item *p, *ptmp;
    park_index_drop(n);
    DL_FOREACH_SAFE(n->parked, p, ptmp) {
        DL_DELETE(n->parked, p);
        free(p->deps);
        park_free(g, p);
    }
    ospg_group *gr, *gtmp;
    ospg_group *groups = atomic_load(&n->groups);
    LL_FOREACH_SAFE(groups, gr, gtmp) {
        if (g->release_fn && gr->user)
            g->release_fn(g->release_arg, gr->user);
        free(gr);
    }
    home *h = ((rblock *)n - 1)->home;
    nlive_add(g, h, -1);
    n->dead = 1;
    if (h == my_home) { /* else unlinked when the home reuses it */
        DL_DELETE2(h->live, n, live_prev, live_next);
        n->linked = 0;
    }
    pool_free(n);
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
           !n->blocking && !n->parked && !n->segs;
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
    size_t size = stat_size(g);
    stat_entry *e = pool_alloc(POOL_STAT, size);
    if (!e)
        return NULL;
    memset(e, 0, size);
    e->key.loc = loc;
    e->key.group = (uintptr_t)group;
    return e;
}

/* Adds src's numbers into dst; members of one group sum work, max span. */
static void stat_combine(ospg *g, stat_entry *dst, const stat_entry *src)
{
    dst->work += src->work;
    dst->tag |= src->tag;
    dst->line |= src->line;
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

/* Whether an instance of loc added to n's statistics is sure to be
 * dropped by the outermost-instance rule (stats_collapse): n or a node
 * above it will be finalized with location loc.  A task nested in a task
 * of its own location then adds nothing on its way up, where it would
 * make an entry only for its grandparent to free.  Ancestors are live
 * while n is; how far up to look is bounded (adding is never wrong). */
#define DROP_WALK_MAX 64

/* One bit of 64 for a location: drop_mask tells in one test that no node
 * above holds loc, the common case outside recursion. */
static inline uint64_t loc_bit(uint32_t loc)
{
    return loc == OSPG_LOC_NONE ? 0 : 1ull << ((loc * 2654435761u) >> 26);
}

static int dropped_above(const ospg_node *n, uint32_t loc)
{
    if (!(n->drop_mask & loc_bit(loc)))
        return 0;
    for (int k = 0; n && k < DROP_WALK_MAX; n = n->parent, k++)
        if (n->drop_loc == loc)
            return 1;
    return 0;
}

/* A grain: a task or a loop chunk (any P-node with a location). */
static int is_grain(const ospg_node *n)
{
    return n->kind == OSPG_P && n->loc != OSPG_LOC_NONE;
}

/* A barrier phase (see ospg_scenario.barrier_burden): the location of the
 * parallel region it belongs to, or OSPG_LOC_NONE when n is none. */
static uint32_t barrier_phase_of(const ospg *g, const ospg_node *n)
{
    const ospg_node *p = n->parent;
    if (n->kind != OSPG_S || n->nchildren < 2 || !p || p == g->root ||
        p->kind != OSPG_S)
        return OSPG_LOC_NONE;
    return p->begin_loc;
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
        spans[s] = n->ser[sc_at(n->uni, s)].len;
    if ((into == n || !dropped_above(into, n->loc)) &&
        stats_add(g, into, n->loc, n->group, n->work, spans, 1))
        return gerr(g);
    if (is_grain(n) && grain_add(n->loc, n->grain_own))
        return fail(g, OSPG_ERR_NOMEM);
    return 0;
}

/* The outermost-instance rule: a node with location L drops the
 * contributions of L found below it (stats_own adds its own later). */
static int stats_collapse(ospg *g, ospg_node *n)
{
    stat_entry *e, *tmp;
    if (n->skip_n && n->skip_loc != n->loc) {
        /* The location changed at the end: the skipped W-nodes count. */
        uint64_t *spans = tc.scratch;
        spans_spread(g, n->uni, n->skip_span, spans);
        if (stats_add(g, n, n->skip_loc, NULL, n->skip_work, spans,
                      n->skip_inst))
            return gerr(g);
    }
    n->hot = NULL; /* entries are dropped and rekeyed below */
    if (n->loc != OSPG_LOC_NONE) {
        /* (grains, which count every instance, are kept apart: grain_add) */
        HASH_ITER(hh, n->stats, e, tmp) {
            if (e->key.loc != n->loc)
                continue;
            HASH_DEL(n->stats, e);
            stat_free(g, e);
        }
    }
    /* Close the groups this node owns: each becomes one instance. */
    if (atomic_load_explicit(&n->groups, memory_order_acquire)) {
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

/* ---- Tags ----
 *
 * A tag's span is the longest chain of its W-nodes' work alone.  It is
 * folded like the span, keywise: beside each chain, a map tag -> the
 * longest such chain up to there, where a series of children adds and a
 * choice between chains (a P-child's start among its prefix and its
 * predecessors, the node's chain among its serial one and those through
 * its P-children) takes each tag's longest, whichever chain is longer
 * overall.  The maps exist only below tagged W-nodes. */

/* n's serial (which 0) or best (which 1) tag chains, made if needed. */
static cmap *tm_own(ospg *g, ospg_node *n, int which)
{
    if (expand(g, n))
        return NULL;
    if (!n->tm && !(n->tm = calloc(2 * g->nscen, sizeof(cmap)))) {
        fail(g, OSPG_ERR_NOMEM);
        return NULL;
    }
    return n->tm + (size_t)which * g->nscen;
}

static cmap *tm_starts(ospg *g, ospg_node *n)
{
    if (expand_start(g, n))
        return NULL;
    if (!n->tm_start && !(n->tm_start = calloc(g->nscen, sizeof(cmap))))
        fail(g, OSPG_ERR_NOMEM);
    return n->tm_start;
}

/* Tags the W-node's work (spans[s] in scenario s) with loc: its critical
 * work, its tag chain, its statistics (ninst instances). */
static int apply_tag(ospg *g, ospg_node *n, uint32_t loc, uint64_t work,
                     const uint64_t *spans, uint64_t ninst)
{
    cmap *ser = tm_own(g, n, 0);
    if (!ser)
        return gerr(g);
    for (size_t s = 0; s < g->nscen; s++)
        if (cmap_add(&n->ser[s].crit, loc, spans[s]) ||
            cmap_add(&ser[s], loc, spans[s]))
            return fail(g, OSPG_ERR_NOMEM);
    if (stats_add(g, n, loc, NULL, work, spans, ninst))
        return gerr(g);
    n->hot->tag = 1;
    return 0;
}

/* The tags of a W-node: those among its samples (count 0; an instance
 * each) and those of its what-if region path (no instance). */
static int apply_tags(ospg *g, ospg_node *n, uint64_t work, uint32_t region,
                      const uint64_t *spans, const ospg_sample *smp,
                      size_t nsmp)
{
    for (size_t k = 0; k < nsmp; k++)
        if (smp[k].count == 0 && apply_tag(g, n, smp[k].loc, work, spans, 1))
            return gerr(g);
    if (!region || !g->region_tags)
        return 0;
    uint32_t locs[OSPG_MAX_TAGS];
    size_t nl = g->region_tags(g->region_tags_arg, region, locs,
                               OSPG_MAX_TAGS);
    for (size_t i = 0; i < nl && i < OSPG_MAX_TAGS; i++) {
        int explicit_tag = 0;
        for (size_t k = 0; k < nsmp && !explicit_tag; k++)
            explicit_tag = smp[k].count == 0 && smp[k].loc == locs[i];
        if (!explicit_tag && apply_tag(g, n, locs[i], work, spans, 0))
            return gerr(g);
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
        for (size_t s = 0, ns = nsc(g, p->uni_start); s < ns; s++)
            if (p->start[s].rank == RANK_PREFIX &&
                cmap_copy(&p->start[s].crit,
                          &n->ser[sc_at(n->uni, s)].crit))
                return fail(g, OSPG_ERR_NOMEM);
        DL_DELETE2(n->lazy_list, p, lazy_prev, lazy_next);
        p->lazy_prefix = 0;
    }
    return 0;
}

static int apply_lines(ospg *g, ospg_node *n, uint64_t work,
                       const uint64_t *spans, const ospg_sample *smp,
                       size_t nsmp);

static inline int apply_w_stats(ospg *g, ospg_node *n, uint64_t work,
                                uint32_t loc, unsigned flags,
                                const uint64_t *spans);

/* A W-node's work in every scenario, into spans[nscen]; returns whether
 * it is the same in all of them.  Outside regions only a location can
 * scale work. */
static int w_spans(const ospg *g, uint64_t work, uint32_t loc,
                   uint32_t region, uint64_t *spans)
{
    int same = region == 0 && !g->scaled_by_loc;
    for (size_t s = 0; s < g->nscen; s++)
        spans[s] = s && !same
                       ? ospg_scaled_work(&g->scen[s], work, loc, region)
                       : work;
    return same;
}

/* A leaf's location (its group's when it has none of its own). */
static uint32_t leaf_loc_of(const node_op *op)
{
    return (op->leaf_loc == OSPG_LOC_NONE && op->group) ? op->group->loc
                                                        : op->leaf_loc;
}

/* A leaf's W-child's work in every scenario, into ws[nscen], and with a
 * grain's burden, into total[nscen]; returns whether both are the same in
 * all of them. */
static int leaf_spans(const ospg *g, const node_op *op, uint32_t loc,
                      uint64_t *ws, uint64_t *total)
{
    int grain = op->leaf_kind == OSPG_P && loc != OSPG_LOC_NONE;
    uint64_t work = op->has_w ? op->work : 0;
    /* see w_spans; a grain's burden too may differ */
    int same = (!op->has_w || (op->region == 0 && !g->scaled_by_loc)) &&
               !(grain && g->grain_burdens);
    for (size_t s = 0; s < g->nscen; s++) {
        ws[s] = !op->has_w ? 0
                : s && !same
                    ? ospg_scaled_work(&g->scen[s], work, op->loc, op->region)
                    : work;
        const ospg_scenario *sc = &g->scen[s];
        uint64_t burden = s && !same && grain && sc->grain_burden
                              ? sc->grain_burden(sc->grain_burden_arg, loc)
                              : 0;
        total[s] = ws[s] + burden;
    }
    return same;
}

static int apply_w(ospg *g, ospg_node *n, uint64_t work, uint32_t loc,
                   uint32_t region, unsigned flags, const ospg_sample *smp,
                   size_t nsmp)
{
    if (n->lazy_list && materialize_lazy(g, n))
        return gerr(g);
    uint64_t *spans = tc.scratch;
    n->work += work;
    n->grain_own += work;
    int same = w_spans(g, work, loc, region, spans);
    if (n->uni && !same && varies(g, spans) && expand(g, n))
        return gerr(g);
    for (size_t s = 0, ns = nsc(g, n->uni); s < ns; s++) {
        n->ser[s].len += spans[s];
        if (cmap_add(&n->ser[s].crit, loc, spans[s]))
            return fail(g, OSPG_ERR_NOMEM);
    }
    if (nsmp && apply_lines(g, n, work, spans, smp, nsmp))
        return gerr(g);
    if ((nsmp || (region && g->region_tags)) &&
        apply_tags(g, n, work, region, spans, smp, nsmp))
        return gerr(g);
    return apply_w_stats(g, n, work, loc, flags, spans);
}

/* What a W-child adds to n's statistics (in any order: sums). */
static inline int apply_w_stats(ospg *g, ospg_node *n, uint64_t work,
                                uint32_t loc, unsigned flags,
                                const uint64_t *spans)
{
    if (loc == OSPG_LOC_NONE)
        return 0;
    if (loc == n->loc && (n->skip_n == 0 || n->skip_loc == loc)) {
        n->skip_loc = loc;
        n->skip_n++;
        n->skip_inst += !(flags & OSPG_W_CONTINUES);
        n->skip_work += work;
        for (size_t s = 0, ns = nsc(g, n->uni); s < ns; s++)
            n->skip_span[s] += spans[s];
        return 0;
    }
    if (dropped_above(n, loc))
        return 0;
    return stats_add(g, n, loc, NULL, work, spans,
                     !(flags & OSPG_W_CONTINUES));
}

/* The samples of a W-node that n just took: its work (spans[s] in
 * scenario s) split among their lines by count. */
static int apply_lines(ospg *g, ospg_node *n, uint64_t work,
                       const uint64_t *spans, const ospg_sample *smp,
                       size_t nsmp)
{
    uint64_t total = 0;
    for (size_t k = 0; k < nsmp; k++)
        total += smp[k].count;
    if (!total)
        return 0;
    uint64_t *shares = tc.scratch + g->nscen;
    for (size_t k = 0; k < nsmp; k++) {
        if (!smp[k].count) /* a tag: apply_tags */
            continue;
        for (size_t s = 0, ns = nsc(g, n->uni); s < g->nscen; s++) {
            shares[s] = (uint64_t)((unsigned __int128)spans[s] *
                                   smp[k].count / total);
            if (s < ns &&
                cmap_add(&n->ser[s].crit, smp[k].loc, shares[s]))
                return fail(g, OSPG_ERR_NOMEM);
        }
        uint64_t w = (uint64_t)((unsigned __int128)work * smp[k].count /
                                total);
        if (stats_add(g, n, smp[k].loc, NULL, w, shares, smp[k].count))
            return gerr(g);
        n->hot->line = 1;
    }
    return 0;
}

static int apply_s(ospg *g, ospg_node *n, ospg_node *c)
{
    if (n->lazy_list && materialize_lazy(g, n))
        return gerr(g);
    n->work += c->work;
    n->grain_own += c->grain_own; /* an S-node is never a grain */
    n->nodes += c->nodes;
    if (!c->uni && expand(g, n))
        return gerr(g);
    for (size_t s = 0, ns = nsc(g, n->uni); s < ns; s++) {
        const chain *cs = &c->ser[sc_at(c->uni, s)];
        n->ser[s].len += cs->len;
        if (cmap_merge(&n->ser[s].crit, &cs->crit))
            return fail(g, OSPG_ERR_NOMEM);
    }
    if (c->tm) { /* c's final tag chains: in series */
        cmap *ser = tm_own(g, n, 0);
        if (!ser)
            return gerr(g);
        for (size_t s = 0; s < g->nscen; s++)
            if (cmap_merge(&ser[s], &c->tm[s]))
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
    if (expand_start(g, p)) /* an event holds every scenario */
        return gerr(g);
    for (size_t s = 0; s < g->nscen; s++) {
        if (chain_beats(e->fin[s].len, e->rank, &p->start[s])) {
            p->start[s].len = e->fin[s].len;
            p->start[s].rank = e->rank;
            if (cmap_copy(&p->start[s].crit, &e->fin[s].crit))
                return fail(g, OSPG_ERR_NOMEM);
        }
    }
    if (e->fin_tm) { /* each tag's longest start, whichever chain wins */
        cmap *st = tm_starts(g, p);
        if (!st)
            return gerr(g);
        for (size_t s = 0; s < g->nscen; s++)
            if (cmap_max(&st[s], &e->fin_tm[s]))
                return fail(g, OSPG_ERR_NOMEM);
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
    if (!n->uni && expand_start(g, p))
        return gerr(g);
    for (size_t s = 0, ns = nsc(g, p->uni_start); s < ns; s++) {
        const chain *prefix = &n->ser[sc_at(n->uni, s)];
        p->start[s].len = prefix->len;
        p->start[s].rank = RANK_PREFIX;
        shared |= prefix->crit.n > 0;
    }
    if (shared) {
        p->lazy_prefix = 1;
        DL_APPEND2(n->lazy_list, p, lazy_prev, lazy_next);
    }
    if (n->tm) { /* the prefix's tag chains: copied */
        cmap *st = tm_starts(g, p);
        if (!st)
            return gerr(g);
        for (size_t s = 0; s < g->nscen; s++)
            if (cmap_copy(&st[s], &n->tm[s]))
                return fail(g, OSPG_ERR_NOMEM);
    }
    for (size_t i = 0; i < ndeps; i++)
        if (resolve_dep(g, n, p, &deps[i]))
            return gerr(g);
    p->prefix_ready = 1;
    if (can_fold(p))
        return push_ready(g, p);
    return 0;
}

static int leaf_apply(ospg *g, ospg_node *n, const node_op *op);

/* The parked child at the frontier, taken out, or NULL.  A cut-short
 * run's node (partial) takes its lowest, whatever the frontier. */
static park_item *unpark(ospg_node *n)
{
    park_item *it = n->parked;
    if (n->park_index) {
        park_key *k;
        uint64_t idx = n->frontier;
        HASH_FIND(hh, n->park_index, &idx, sizeof(idx), k);
        if (!k)
            return NULL;
        it = k->item;
        HASH_DEL(n->park_index, k);
        free(k);
    }
    if (!it || (it->idx != n->frontier && !n->partial))
        return NULL;
    DL_DELETE(n->parked, it);
    n->nparked--;
    return it;
}

/* Applies parked children that the frontier has reached. */
static int seg_apply(ospg *g, ospg_node *n, const segment *sg);

static int drain(ospg *g, ospg_node *n)
{
    park_item *it;
    for (;;) {
        if (n->blocking)
            break;
        segment *sg = n->segs;
        if (sg && (sg->first == n->frontier ||
                   (n->partial && (!n->parked || sg->first < n->parked->idx)))) {
            DL_DELETE(n->segs, sg);
            int rc = seg_apply(g, n, sg);
            n->frontier = sg->last + 1;
            seg_free(g, sg);
            if (rc)
                return rc;
            continue;
        }
        if (!(it = unpark(n)))
            break;
        if (n->partial)
            n->frontier = it->idx; /* skip children that never came */
        int rc = 0;
        if (it->type == PARK_W) {
            rc = apply_w(g, n, it->work, it->loc, it->region, it->wflags,
                         it->smp, it->nsmp);
            n->frontier++;
        } else if (it->type == PARK_LEAF) {
            node_op op = {.kind = OP_LEAF, .idx = it->idx, .work = it->work,
                          .loc = it->loc, .region = it->region,
                          .flags = it->wflags, .leaf_kind = it->leaf_kind,
                          .leaf_loc = it->leaf_loc, .group = it->group,
                          .has_w = it->has_w};
            n->frontier++;
            rc = leaf_apply(g, n, &op);
        } else if (it->node->kind == OSPG_S) {
            if (it->node->finalized) {
                n->frontier++;
                rc = apply_s(g, n, it->node);
            } else {
                n->blocking = it->node;
            }
        } else {
            n->frontier++;
            it->node->parked_as = NULL;
            rc = apply_p_begin(g, n, it->node, it->deps, it->ndeps);
            free(it->deps);
        }
        park_free(g, it);
        if (rc)
            return rc;
    }
    if (n->partial && !n->blocking && !n->parked && !n->segs &&
        n->frontier < n->nchildren)
        n->frontier = n->nchildren;
    if (subtree_done(n))
        return push_ready(g, n);
    return 0;
}

/* Parks it before the first parked child of a higher index, searching
 * from the head: for a child nearer the frontier than the last parked. */
static int park_from_head(ospg *g, ospg_node *n, park_item *it,
                          unsigned *walked)
{
    park_item *pos = n->parked;
    while (pos->idx < it->idx) {
        pos = pos->next; /* the tail's index is higher: it stops there */
        ++*walked;
    }
    if (pos->idx == it->idx)
        return fail(g, OSPG_ERR_INDEX);
    if (pos == n->parked)
        DL_PREPEND(n->parked, it);
    else
        DL_PREPEND_ELEM(n->parked, pos, it);
    return 0;
}

/* Indexes it (n has an index).  Returns 0, or -1 out of memory. */
static int park_key_add(ospg_node *n, park_item *it)
{
    park_key *k = malloc(sizeof(*k));
    if (!k)
        return -1;
    k->idx = it->idx;
    k->item = it;
    HASH_ADD(hh, n->park_index, idx, sizeof(k->idx), k);
    return 0;
}

/* Parks it in the index (n has one): O(1) whatever the order.  Out of
 * memory, n goes back to the sorted list. */
static int park_indexed(ospg *g, ospg_node *n, park_item *it)
{
    park_key *there;
    HASH_FIND(hh, n->park_index, &it->idx, sizeof(it->idx), there);
    if (there)
        return fail(g, OSPG_ERR_INDEX);
    DL_APPEND(n->parked, it);
    if (park_key_add(n, it))
        park_index_drop(n);
    return 0;
}

/* Parks it in the sorted list (n has no index), *walked the items
 * passed on the way. */
static int park_sorted(ospg *g, ospg_node *n, park_item *it,
                       unsigned *walked)
{
    park_item *pos;
    /* Reports arrive mostly in order: search from the tail, unless the
     * child is nearer the head (children completing last first): then
     * from there. */
    if (n->parked && it->idx < n->parked->prev->idx &&
        (it->idx < n->parked->idx ||
         it->idx - n->parked->idx < n->parked->prev->idx - it->idx))
        return park_from_head(g, n, it, walked);
    for (pos = n->parked ? n->parked->prev : NULL; pos;
         pos = pos->prev, ++*walked) {
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

static int park(ospg *g, ospg_node *n, park_item *it)
{
    if (it->idx < n->frontier)
        return fail(g, OSPG_ERR_INDEX);
    if (n->blocking && it->idx == n->frontier)
        return fail(g, OSPG_ERR_INDEX);
    unsigned walked = 0;
    int rc = n->park_index ? park_indexed(g, n, it)
                           : park_sorted(g, n, it, &walked);
    if (rc)
        return rc;
    if (!n->nparked++ || it->idx > n->parked_max)
        n->parked_max = it->idx;
    if (walked > PARK_WALK_MAX) {
        park_item *p;
        DL_FOREACH(n->parked, p)
            if (park_key_add(n, p)) {
                park_index_drop(n);
                break;
            }
    }
    return 0;
}

/* ---- Finalizing and folding ---- */

static int finalize(ospg *g, ospg_node *n)
{
    for (size_t s = 0, ns = nsc(g, n->uni); s < ns; s++) {
        /* The serial chain wins a tie against any chain through a P-child. */
        if (n->best[s].len > n->ser[s].len)
            chain_move(&n->ser[s], &n->best[s]);
        chain_free(&n->best[s]);
    }
    uint32_t phase_of = barrier_phase_of(g, n);
    if (is_grain(n) || phase_of != OSPG_LOC_NONE)
        for (size_t s = 1; s < g->nscen; s++) {
            const ospg_scenario *sc = &g->scen[s];
            uint32_t at = is_grain(n) ? n->loc : phase_of;
            uint64_t b = !is_grain(n) ? sc->barrier_burden
                         : sc->grain_burden
                             ? sc->grain_burden(sc->grain_burden_arg, n->loc)
                             : 0;
            if (!b)
                continue;
            if (expand(g, n)) /* scenario s alone pays the burden */
                return gerr(g);
            /* before everything in the node: on every path through it */
            n->ser[s].len += b;
            if (cmap_add(&n->ser[s].crit, at, b))
                return fail(g, OSPG_ERR_NOMEM);
        }
    if (n->tm) /* each tag's longest of the two */
        for (size_t s = 0; s < g->nscen; s++) {
            if (cmap_max(&n->tm[s], &n->tm[g->nscen + s]))
                return fail(g, OSPG_ERR_NOMEM);
            cmap_free(&n->tm[g->nscen + s]);
        }
    if (stats_collapse(g, n))
        return gerr(g);
    if (n == g->root && stats_own(g, n, n))
        return gerr(g);
    return 0;
}

/* p's tag chains through it (its start, then its own) into its parent's
 * best ones and its finish event's. */
static int fold_p_tags(ospg *g, ospg_node *p)
{
    ospg_node *n = p->parent;
    dep_event *ev = p->event;
    cmap *best = tm_own(g, n, 1);
    if (!best)
        return gerr(g);
    if (ev && !(ev->fin_tm = calloc(g->nscen, sizeof(cmap))))
        return fail(g, OSPG_ERR_NOMEM);
    for (size_t s = 0; s < g->nscen; s++) {
        cmap sum;
        memset(&sum, 0, sizeof(sum));
        if ((p->tm_start && cmap_merge(&sum, &p->tm_start[s])) ||
            (p->tm && cmap_merge(&sum, &p->tm[s])) ||
            cmap_max(&best[s], &sum)) {
            cmap_free(&sum);
            return fail(g, OSPG_ERR_NOMEM);
        }
        if (ev)
            ev->fin_tm[s] = sum;
        else
            cmap_free(&sum);
    }
    return 0;
}

/* Folds a finished P-child into its parent's best chain. */
static int fold_p(ospg *g, ospg_node *p)
{
    ospg_node *n = p->parent;
    dep_event *ev = p->event;
    /* one scenario serves where the parent, p and p's start are uniform
     * and no finish event needs every scenario */
    if ((ev || !n->uni || !p->uni || !p->uni_start) &&
        (expand(g, n) || expand(g, p) || expand_start(g, p)))
        return gerr(g);
    if (ev) {
        ev->fin = calloc(g->nscen, sizeof(chain));
        if (!ev->fin)
            return fail(g, OSPG_ERR_NOMEM);
    }
    if ((p->tm || p->tm_start) && fold_p_tags(g, p))
        return gerr(g);
    for (size_t s = 0, ns = nsc(g, n->uni); s < ns; s++) {
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
    if (!is_grain(p))
        n->grain_own += p->grain_own;
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
static int seg_take_node(ospg *g, ospg_node *n, ospg_node *p);

static int fold_into_parent(ospg *g, ospg_node *n)
{
    ospg_node *parent = n->parent;
    if (!can_fold(n)) {
        if (n->kind == OSPG_P && n->finalized && !n->prefix_ready) {
            int rc = seg_take_node(g, parent, n);
            if (rc)
                return rc < 0 ? rc : 0; /* taken: n is released */
        }
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

static int submit(ospg *g, ospg_node *n, node_op *op, int *queued);

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
            if (n->partial && drain(g, n)) /* single-threaded */
                return gerr(g);
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
        node_op op = {.kind = OP_FOLD, .child = n, .finalizing = finalizing};
        if (submit(g, n->parent, &op, NULL))
            return gerr(g);
    }
    if (gerr(g))
        tc.nready = 0; /* a failed build keeps nothing queued */
    return gerr(g);
}

/* ---- Updates of a node, applied or combined ---- */

static int attach(ospg *g, ospg_node *parent, ospg_node *n,
                  const ospg_dep *deps, size_t ndeps);
static int child_admit(ospg *g, ospg_node *parent, uint64_t idx);

/* Parks a W-child or a leaf (type) that came before n's frontier reached
 * it (n locked): what op says of it, samples copied. */
static int park_op(ospg *g, ospg_node *n, const node_op *op, int type)
{
    park_item *it = park_alloc(g);
    if (!it)
        return fail(g, OSPG_ERR_NOMEM);
    it->idx = op->idx;
    it->type = type;
    it->work = op->work;
    it->loc = op->loc;
    it->region = op->region;
    it->wflags = op->flags;
    it->leaf_kind = op->leaf_kind;
    it->leaf_loc = op->leaf_loc;
    it->group = op->group;
    it->has_w = op->has_w;
    if (op->nsmp) {
        it->smp = malloc(op->nsmp * sizeof(*op->smp));
        if (!it->smp) {
            park_free(g, it);
            return fail(g, OSPG_ERR_NOMEM);
        }
        memcpy(it->smp, op->smp, op->nsmp * sizeof(*op->smp));
        it->nsmp = op->nsmp;
    }
    if (park(g, n, it)) {
        park_free(g, it);
        return gerr(g);
    }
    return 0;
}

/* ---- Segments ----
 *
 * A child waits in the parked list until the frontier reaches it: a task
 * still queued in the runtime holds back every later sibling's record, at
 * ~300 bytes each (a single that creates 10^6 tasks beside a busy
 * machine parked most of them).  A W-child or a leaf, though, changes its
 * parent in two ways: statistics, which are sums and may be added in any
 * order, and the chains, which need the serial chain before it.  A run of
 * consecutive such children needs no more than its own serial chain and
 * its best chain through one of its P-leaves, both counted from the run's
 * first child: where the frontier reaches the run, the parent's chain is
 * their prefix (seg_concat), exactly as if the children had come one by
 * one.  So such a child adds its statistics at once and joins the run it
 * extends, and memory grows with the gaps (the children still to come),
 * not with the children that came early.  A run keeps a chain pair per
 * scenario, uniform like a node's until a child's work differs by
 * scenario.  Only where every node keeps its location from its begin (the
 * profiler's promise: statistics are added at once), and for children
 * that carry no samples or tags; the rest park as before. */
#define SEG_WALK_MAX 64 /* runs passed looking for a child's place */
/* Children parked at a node before later ones join runs: a run costs a
 * chain copy more per P-leaf than a parked item (its best chain is
 * counted in the run, then in the node), which a few parked children at
 * a time, the common case, do not repay (BOTS nqueens -n 11 took 11%
 * more CPU when every early child joined a run). */
#define RUNS_AFTER 64

static size_t leaf_tags(ospg *g, const node_op *op, uint32_t *locs);
static int leaf_stats(ospg *g, ospg_node *n, const node_op *op, uint32_t loc,
                      const uint32_t *tags, size_t ntags, const uint64_t *ws,
                      const uint64_t *total);
static int leaf_crit(cmap *m, const node_op *op, uint32_t loc,
                     const uint32_t *tags, size_t ntags, uint64_t ws,
                     uint64_t burden);

static int seg_worth(const ospg *g, int follows, uint64_t idx,
                     const segment *left, const segment *right);
static int seg_slot(ospg *g, ospg_node *n, uint64_t idx, segment **left,
                    segment **right);
static int seg_insert(ospg *g, ospg_node *n, segment *u, segment *left,
                      segment *right);

static void seg_free(ospg *g, segment *sg)
{
    for (size_t s = 0; s < g->nscen; s++) {
        chain_free(&sg->ser[s]);
        chain_free(&sg->best[s]);
    }
    cmaps_free(sg->tm, g->nscen);
    pool_free(sg);
}

/* A run of child idx alone, its chains empty, or NULL when out of memory. */
static segment *seg_new(ospg *g, uint64_t idx)
{
    segment *sg = pool_alloc(POOL_SEG, seg_size(g));
    if (!sg)
        return NULL;
    memset(sg, 0, seg_size(g));
    sg->first = sg->last = idx;
    sg->uni = 1;
    sg->ser = (chain *)(sg + 1);
    sg->best = sg->ser + g->nscen;
    for (size_t s = 0; s < g->nscen; s++)
        sg->best[s].rank = RANK_NONE;
    return sg;
}

/* Makes sg's chains hold every scenario (the others are still empty). */
static int seg_expand(ospg *g, segment *sg)
{
    if (!sg->uni)
        return 0;
    sg->uni = 0;
    if (chains_spread(g, sg->ser) || chains_spread(g, sg->best))
        return gerr(g);
    return 0;
}

/* Chains (a_ser, a_best) followed by (b_ser, b_best): b's best counted
 * from a's serial chain, the serial chains summed. */
static int seg_concat(chain *a_ser, chain *a_best, const chain *b_ser,
                      const chain *b_best)
{
    if (b_best->rank != RANK_NONE) {
        uint64_t len = a_ser->len + b_best->len;
        if (chain_beats(len, b_best->rank, a_best) &&
            (chain_reset(a_best, len, b_best->rank, &a_ser->crit) ||
             cmap_merge(&a_best->crit, &b_best->crit)))
            return OSPG_ERR_NOMEM;
    }
    a_ser->len += b_ser->len;
    return cmap_merge(&a_ser->crit, &b_ser->crit) ? OSPG_ERR_NOMEM : 0;
}

/* Run b appended to run a, in every scenario a keeps. */
static int seg_join(ospg *g, segment *a, segment *b)
{
    if (a->uni && !b->uni && seg_expand(g, a))
        return gerr(g);
    for (size_t s = 0, ns = nsc(g, a->uni); s < ns; s++)
        if (seg_concat(&a->ser[s], &a->best[s], &b->ser[sc_at(b->uni, s)],
                       &b->best[sc_at(b->uni, s)]))
            return fail(g, OSPG_ERR_NOMEM);
    /* a's children add no tags: b's tag chains are counted from a's first
     * as they are from b's */
    if (b->tm && !a->tm) {
        a->tm = b->tm;
        b->tm = NULL;
    } else if (b->tm) {
        for (size_t s = 0; s < g->nscen; s++)
            if (cmap_max(&a->tm[s], &b->tm[s]))
                return fail(g, OSPG_ERR_NOMEM);
    }
    a->last = b->last;
    return 0;
}

/* The segment at n's frontier applied to n (n locked): as its children
 * one by one (apply_w, leaf_fold_p, leaf_fold_s). */
static int seg_apply(ospg *g, ospg_node *n, const segment *sg)
{
    if (n->lazy_list && materialize_lazy(g, n))
        return gerr(g);
    if (n->uni && !sg->uni && expand(g, n))
        return gerr(g);
    if ((n->tm || sg->tm) && sg->best[0].rank != RANK_NONE) {
        /* the tag chains through its P-children: n's so far (a P-leaf's
         * are its prefix's) and theirs */
        cmap *best = tm_own(g, n, 1);
        if (!best)
            return gerr(g);
        for (size_t s = 0; s < g->nscen; s++) {
            cmap sum;
            memset(&sum, 0, sizeof(sum));
            if (cmap_merge(&sum, &n->tm[s]) ||
                (sg->tm && cmap_merge(&sum, &sg->tm[s])) ||
                cmap_max(&best[s], &sum)) {
                cmap_free(&sum);
                return fail(g, OSPG_ERR_NOMEM);
            }
            cmap_free(&sum);
        }
    }
    for (size_t s = 0, ns = nsc(g, n->uni); s < ns; s++)
        if (seg_concat(&n->ser[s], &n->best[s], &sg->ser[sc_at(sg->uni, s)],
                       &sg->best[sc_at(sg->uni, s)]))
            return fail(g, OSPG_ERR_NOMEM);
    return 0;
}

/* Where child idx goes among n's segments: *left, the last one that
 * begins before idx (NULL: none), *right, the one after it.  0, 1 when
 * idx lies inside a segment (a child reported twice), -1 when the place
 * is too far to look for. */
static int seg_place(const ospg_node *n, uint64_t idx, segment **left,
                     segment **right)
{
    segment *head = n->segs, *tail = head ? head->prev : NULL, *sg;
    *left = *right = NULL;
    if (!head)
        return 0;
    if (idx < head->first) {
        *right = head;
        return 0;
    }
    unsigned walked = 0;
    for (sg = tail; sg->first > idx; sg = sg->prev)
        if (++walked > SEG_WALK_MAX)
            return -1;
    if (idx <= sg->last)
        return 1;
    *left = sg;
    *right = sg == tail ? NULL : sg->next;
    return 0;
}

/* W-child op of n as a run of its own, its statistics added to n. */
static int seg_unit_w(ospg *g, ospg_node *n, const node_op *op, segment *u)
{
    uint64_t *spans = tc.scratch;
    if (!w_spans(g, op->work, op->loc, op->region, spans) &&
        varies(g, spans)) {
        u->uni = 0;
        if (expand(g, n)) /* its skip_span takes every scenario's */
            return gerr(g);
    }
    for (size_t s = 0, ns = nsc(g, u->uni); s < ns; s++) {
        u->ser[s].len = spans[s];
        if (cmap_add(&u->ser[s].crit, op->loc, spans[s]))
            return fail(g, OSPG_ERR_NOMEM);
    }
    n->work += op->work;
    n->grain_own += op->work;
    return apply_w_stats(g, n, op->work, op->loc, op->flags, spans);
}

/* Leaf op of n (no tags) as a run of its own, its statistics added to n. */
static int seg_unit_leaf(ospg *g, ospg_node *n, const node_op *op,
                         segment *u)
{
    uint32_t loc = leaf_loc_of(op);
    int grain = op->leaf_kind == OSPG_P && loc != OSPG_LOC_NONE;
    uint64_t work = op->has_w ? op->work : 0;
    uint64_t *ws = tc.scratch, *total = tc.scratch + g->nscen;
    if (!leaf_spans(g, op, loc, ws, total) &&
        (varies(g, ws) || varies(g, total)))
        u->uni = 0;
    chain *c = op->leaf_kind == OSPG_P ? u->best : u->ser;
    for (size_t s = 0, ns = nsc(g, u->uni); s < ns; s++) {
        /* an S-leaf is in series (leaf_fold_s: no burden) */
        uint64_t burden = op->leaf_kind == OSPG_P ? total[s] - ws[s] : 0;
        c[s].len = ws[s] + burden;
        if (op->leaf_kind == OSPG_P)
            c[s].rank = op->idx;
        if (leaf_crit(&c[s].crit, op, loc, NULL, 0, ws[s], burden))
            return fail(g, OSPG_ERR_NOMEM);
    }
    n->nodes += 1 + (op->has_w ? 1 : 0);
    n->work += work;
    if (!grain)
        n->grain_own += work;
    return leaf_stats(g, n, op, loc, NULL, 0, ws, total);
}

/* Takes child op->idx of n (n locked, the frontier short of it), a W-child
 * (type PARK_W) or a leaf, into n's segments.  Returns 1 when taken, 0
 * when it must park as an item, or an error. */
static int seg_take(ospg *g, ospg_node *n, const node_op *op, int type)
{
    uint32_t tags[OSPG_MAX_TAGS];
    segment *left, *right;
    int rc = seg_slot(g, n, op->idx, &left, &right);
    if (rc <= 0)
        return rc;
    if (op->nsmp || (type == PARK_W ? op->region && g->region_tags
                                    : leaf_tags(g, op, tags) != 0))
        return 0;
    segment *u = seg_new(g, op->idx);
    if (!u)
        return fail(g, OSPG_ERR_NOMEM);
    rc = type == PARK_W ? seg_unit_w(g, n, op, u)
                        : seg_unit_leaf(g, n, op, u);
    if (rc) {
        seg_free(g, u);
        return gerr(g);
    }
    return seg_insert(g, n, u, left, right);
}

/* Whether a child reported early at n, at idx (left and right: its place,
 * seg_place), begins or joins a run.  With several scenarios a run is ~8x
 * a parked item: one begins only where children come in a row (a thread
 * that runs them in order while an older one is still missing), not at
 * every gap of children that alternate with the missing ones (the
 * analyzer's replay of two streams, one ahead of the other).  Tests that
 * set runs_after to 0 take runs at every gap. */
static int seg_worth(const ospg *g, int follows, uint64_t idx,
                     const segment *left, const segment *right)
{
    return g->nscen == 1 || !g->runs_after || follows ||
           (left && left->last + 1 == idx) || (right && idx + 1 == right->first);
}

/* Whether child idx of n, reported early, may join a run, and where
 * (*left, *right: seg_place): 1, 0 when it must park, or an error.  The
 * caller checks what the child itself must be. */
static int seg_slot(ospg *g, ospg_node *n, uint64_t idx, segment **left,
                    segment **right)
{
    int follows = n->early_next != 0 && n->early_next == idx;
    n->early_next = idx + 1;
    if (n->nparked < g->runs_after || !g->fixed_locs)
        return 0;
    int at = seg_place(n, idx, left, right);
    if (at < 0)
        return 0;
    if (at > 0)
        return fail(g, OSPG_ERR_INDEX);
    return seg_worth(g, follows, idx, *left, *right);
}

/* Puts run u of one child between n's runs left and right (seg_place),
 * joined to each it touches.  Returns 1, or an error. */
static int seg_insert(ospg *g, ospg_node *n, segment *u, segment *left,
                      segment *right)
{
    segment *into = u;
    int rc = 0;
    if (left && left->last + 1 == u->first) {
        into = left;
        rc = seg_join(g, left, u);
        seg_free(g, u);
    } else if (left) {
        DL_APPEND_ELEM(n->segs, left, u);
    } else {
        DL_PREPEND(n->segs, u);
    }
    if (!rc && right && into->last + 1 == right->first) {
        rc = seg_join(g, into, right);
        DL_DELETE(n->segs, right);
        seg_free(g, right);
    }
    if (!rc)
        atomic_fetch_add_explicit(&g->run_children, 1, memory_order_relaxed);
    return rc ? gerr(g) : 1;
}

/* Takes it out of n's parked children and frees it. */
static void park_remove(ospg *g, ospg_node *n, park_item *it)
{
    if (n->park_index) {
        park_key *k;
        HASH_FIND(hh, n->park_index, &it->idx, sizeof(it->idx), k);
        if (k) {
            HASH_DEL(n->park_index, k);
            free(k);
        }
    }
    DL_DELETE(n->parked, it);
    n->nparked--;
    park_free(g, it);
}

/* A finished P-child p of n (n locked) that the frontier has not reached:
 * a task that created tasks or ran region code is a node (0.3-1 KB with
 * its chains), and it waited whole.  Without depend items its chain is
 * its prefix's plus its own, like a P-leaf's: it joins n's runs as one,
 * its statistics are added now (as fold_p adds them) and its node is
 * released.  Returns 1 when taken, 0 when it must wait, or an error. */
static int seg_take_node(ospg *g, ospg_node *n, ospg_node *p)
{
    segment *left, *right;
    int rc = seg_slot(g, n, p->idx, &left, &right);
    if (rc <= 0)
        return rc;
    park_item *it = p->parked_as;
    if (!it || it->ndeps || p->event || p->tm_start)
        return 0;
    segment *u = seg_new(g, p->idx);
    if (!u)
        return fail(g, OSPG_ERR_NOMEM);
    n->work += p->work;
    if (!is_grain(p))
        n->grain_own += p->grain_own;
    n->nodes += p->nodes;
    stats_merge(g, n, &p->stats);
    if (stats_own(g, p, n)) {
        seg_free(g, u);
        return gerr(g);
    }
    u->uni = p->uni;
    for (size_t s = 0, ns = nsc(g, p->uni); s < ns; s++) {
        chain_move(&u->best[s], &p->ser[s]);
        u->best[s].rank = p->idx;
    }
    if (p->tm) { /* its final tag chains: tm[0..nscen) (finalize) */
        u->tm = calloc(g->nscen, sizeof(cmap));
        if (!u->tm) {
            seg_free(g, u);
            return fail(g, OSPG_ERR_NOMEM);
        }
        for (size_t s = 0; s < g->nscen; s++) {
            u->tm[s] = p->tm[s];
            memset(&p->tm[s], 0, sizeof(p->tm[s]));
        }
    }
    n->unfolded--;
    p->parked_as = NULL;
    park_remove(g, n, it);
    node_release(g, p);
    atomic_fetch_add_explicit(&g->run_nodes, 1, memory_order_relaxed);
    return seg_insert(g, n, u, left, right);
}

/* A W-child of n (n locked). */
static int add_work(ospg *g, ospg_node *n, const node_op *op)
{
    int rc = child_admit(g, n, op->idx);
    if (rc)
        return rc;
    n->nodes++;
    if (op->idx == n->frontier) {
        n->frontier++;
        if (apply_w(g, n, op->work, op->loc, op->region, op->flags, op->smp,
                    op->nsmp) ||
            drain(g, n))
            return gerr(g);
        return 0;
    }
    rc = seg_take(g, n, op, PARK_W);
    if (rc)
        return rc < 0 ? rc : 0;
    return park_op(g, n, op, PARK_W);
}

/* n ends with nchildren children (n locked). */
static int end_node(ospg *g, ospg_node *n, const node_op *op)
{
    if (n->ended)
        return fail(g, OSPG_ERR_STATE);
    if (op->nchildren < n->frontier ||
        (n->blocking && op->nchildren <= n->frontier) ||
        (n->parked && n->parked_max >= op->nchildren) ||
        (n->segs && n->segs->prev->last >= op->nchildren))
        return fail(g, OSPG_ERR_INDEX);
    if (op->loc != OSPG_LOC_NONE && n->drop_loc != OSPG_LOC_NONE &&
        op->loc != n->drop_loc)
        return fail(g, OSPG_ERR_LOC); /* see ospg_set_fixed_locations */
    n->ended = 1;
    n->nchildren = op->nchildren;
    if (op->loc != OSPG_LOC_NONE)
        n->loc = op->loc;
    if (subtree_done(n))
        return push_ready(g, n);
    return 0;
}

/* The tags of a leaf's W-child (its what-if region path), or 0. */
static size_t leaf_tags(ospg *g, const node_op *op, uint32_t *locs)
{
    if (!op->has_w || !op->region || !g->region_tags)
        return 0;
    size_t nl = g->region_tags(g->region_tags_arg, op->region, locs,
                               OSPG_MAX_TAGS);
    return nl < OSPG_MAX_TAGS ? nl : OSPG_MAX_TAGS;
}

/* What a leaf adds to n's statistics: its W-child's location and tags
 * (those of the leaf's own location dropped: the outermost-instance rule),
 * then the leaf as an instance of its location.  ws: the W-child's work
 * per scenario; total: the leaf's span. */
static int leaf_stats(ospg *g, ospg_node *n, const node_op *op, uint32_t loc,
                      const uint32_t *tags, size_t ntags, const uint64_t *ws,
                      const uint64_t *total)
{
    uint64_t work = op->has_w ? op->work : 0;
    if (op->has_w && op->loc != OSPG_LOC_NONE && op->loc != loc &&
        !dropped_above(n, op->loc) &&
        stats_add(g, n, op->loc, NULL, work, ws,
                  !(op->flags & OSPG_W_CONTINUES)))
        return gerr(g);
    for (size_t i = 0; i < ntags; i++) {
        if (loc != OSPG_LOC_NONE && tags[i] == loc)
            continue;
        if (stats_add(g, n, tags[i], NULL, work, ws, 0))
            return gerr(g);
        n->hot->tag = 1;
    }
    if (loc == OSPG_LOC_NONE)
        return 0;
    if (!dropped_above(n, loc) &&
        stats_add(g, n, loc, op->group, work, total, 1))
        return gerr(g);
    /* a P-leaf is a grain, whose own work is its W-child's */
    if (op->leaf_kind == OSPG_P && grain_add(loc, work))
        return fail(g, OSPG_ERR_NOMEM);
    return 0;
}

/* The leaf's critical-path attribution in one scenario (its W-child's
 * work ws, its tags, a grain's burden) added to map m. */
static int leaf_crit(cmap *m, const node_op *op, uint32_t loc,
                     const uint32_t *tags, size_t ntags, uint64_t ws,
                     uint64_t burden)
{
    if (op->has_w && cmap_add(m, op->loc, ws))
        return OSPG_ERR_NOMEM;
    for (size_t i = 0; i < ntags; i++)
        if (cmap_add(m, tags[i], ws))
            return OSPG_ERR_NOMEM;
    return cmap_add(m, loc, burden);
}

/* A P-leaf at n's frontier folds into n's best chain: the chain through
 * it is n's serial chain so far plus the leaf. */
static int leaf_fold_p(ospg *g, ospg_node *n, const node_op *op, uint32_t loc,
                       const uint32_t *tags, size_t ntags, const uint64_t *ws,
                       const uint64_t *total)
{
    for (size_t s = 0, ns = nsc(g, n->uni); s < ns; s++) {
        uint64_t len = n->ser[s].len + total[s];
        chain *b = &n->best[s];
        if (!chain_beats(len, op->idx, b))
            continue;
        if (chain_reset(b, len, op->idx, &n->ser[s].crit) ||
            leaf_crit(&b->crit, op, loc, tags, ntags, ws[s],
                      total[s] - ws[s]))
            return fail(g, OSPG_ERR_NOMEM);
    }
    if (!n->tm && !ntags)
        return 0;
    /* each tag's longest chain through the leaf */
    cmap *best = tm_own(g, n, 1);
    if (!best)
        return gerr(g);
    for (size_t s = 0; s < g->nscen; s++) {
        cmap sum;
        memset(&sum, 0, sizeof(sum));
        int rc = n->tm ? cmap_merge(&sum, &n->tm[s]) : 0;
        for (size_t i = 0; i < ntags && !rc; i++)
            rc = cmap_add(&sum, tags[i], ws[s]);
        if (rc || cmap_max(&best[s], &sum)) {
            cmap_free(&sum);
            return fail(g, OSPG_ERR_NOMEM);
        }
        cmap_free(&sum);
    }
    return 0;
}

/* An S-leaf at n's frontier: in series with n's chain so far. */
static int leaf_fold_s(ospg *g, ospg_node *n, const node_op *op, uint32_t loc,
                       const uint32_t *tags, size_t ntags, const uint64_t *ws)
{
    if (n->lazy_list && materialize_lazy(g, n))
        return gerr(g);
    for (size_t s = 0, ns = nsc(g, n->uni); s < ns; s++) {
        n->ser[s].len += ws[s];
        if (leaf_crit(&n->ser[s].crit, op, loc, tags, ntags, ws[s], 0))
            return fail(g, OSPG_ERR_NOMEM);
    }
    if (!ntags)
        return 0;
    cmap *ser = tm_own(g, n, 0);
    if (!ser)
        return gerr(g);
    for (size_t s = 0; s < g->nscen; s++)
        for (size_t i = 0; i < ntags; i++)
            if (cmap_add(&ser[s], tags[i], ws[s]))
                return fail(g, OSPG_ERR_NOMEM);
    return 0;
}

/* Folds a leaf (a node begun and ended at once, with at most a W-child)
 * at n's frontier straight into n (n locked; the caller moves the
 * frontier): as if it had been begun, given its W-child, ended,
 * finalized, linked and folded, but without a node of its own. */
static int leaf_apply(ospg *g, ospg_node *n, const node_op *op)
{
    uint32_t loc = leaf_loc_of(op);
    int grain = op->leaf_kind == OSPG_P && loc != OSPG_LOC_NONE;
    uint64_t work = op->has_w ? op->work : 0;
    uint64_t *ws = tc.scratch, *total = tc.scratch + g->nscen;
    int same = leaf_spans(g, op, loc, ws, total);
    uint32_t tags[OSPG_MAX_TAGS];
    size_t ntags = leaf_tags(g, op, tags);
    if (n->uni && (ntags || (!same && (varies(g, ws) || varies(g, total)))) &&
        expand(g, n))
        return gerr(g);
    n->nodes += 1 + (op->has_w ? 1 : 0);
    int rc = op->leaf_kind == OSPG_P
                 ? leaf_fold_p(g, n, op, loc, tags, ntags, ws, total)
                 : leaf_fold_s(g, n, op, loc, tags, ntags, ws);
    if (rc)
        return gerr(g);
    n->work += work;
    if (!grain)
        n->grain_own += work;
    return leaf_stats(g, n, op, loc, tags, ntags, ws, total);
}

/* A leaf reported as child op->idx of n (n locked): folded now at the
 * frontier, else parked, as small as a W-child, until the frontier
 * reaches it.  Most tasks of a task-parallel program are such leaves,
 * and siblings end in any order. */
static int add_leaf(ospg *g, ospg_node *n, const node_op *op)
{
    int rc = child_admit(g, n, op->idx);
    if (rc)
        return rc;
    if (op->idx == n->frontier) { /* child_admit: not blocked */
        n->frontier++;
        if (leaf_apply(g, n, op) || drain(g, n))
            return gerr(g);
        return 0;
    }
    rc = seg_take(g, n, op, PARK_LEAF);
    if (rc)
        return rc < 0 ? rc : 0;
    return park_op(g, n, op, PARK_LEAF);
}

/* Applies op to n, which the caller holds (or the builder is not
 * concurrent). */
static int apply_op(ospg *g, ospg_node *n, const node_op *op)
{
    if (gerr(g))
        return gerr(g);
    switch (op->kind) {
    case OP_ATTACH: return attach(g, n, op->child, op->deps, op->ndeps);
    case OP_WORK: return add_work(g, n, op);
    case OP_END: return end_node(g, n, op);
    case OP_LEAF: return add_leaf(g, n, op);
    case OP_WORK_END: {
        node_op end = {.kind = OP_END, .nchildren = op->nchildren,
                       .loc = op->end_loc};
        int rc = add_work(g, n, op);
        return rc ? rc : end_node(g, n, &end);
    }
    default: /* OP_FOLD */
        if (op->finalizing)
            op->child->finalized = 1; /* under n's lock: can_fold reads it */
        return fold_into_parent(g, op->child);
    }
}

static void op_free(node_op *op)
{
    free(op->deps);
    free(op->smp);
    pool_free(op);
}

/* Applies the updates of list (newest first) in the order queued;
 * returns how many. */
static size_t apply_list(ospg *g, ospg_node *n, node_op *list)
{
    node_op *fifo = NULL;
    size_t count = 0;
    while (list) {
        count++;
        node_op *next = list->next;
        list->next = fifo;
        fifo = list;
        list = next;
    }
    while (fifo) {
        node_op *next = fifo->next;
        apply_op(g, n, fifo);
        op_free(fifo);
        fifo = next;
    }
    return count;
}

/* Lets go of n, first applying what others queued meanwhile.  A thread
 * that keeps queueing updates of one node faster than the holder applies
 * them would hold the holder there for good: a single that creates a
 * million tasks kept the thread that took its scope's lock once applying
 * its updates, that thread never went back to run the tasks, and every
 * later update parked behind the first of them (600 MB).  So after
 * COMBINE_MAX updates of others in one hold, others wait for the holder
 * to let go (submit) and it applies only what was queued already. */
static void unlock_node(ospg *g, ospg_node *n)
{
    size_t applied = 0;
    uintptr_t st = atomic_load(&n->state);
    for (;;) {
        if (st == 1) {
            if (applied > g->combine_max)
                atomic_store_explicit(&n->crowded, 0, memory_order_relaxed);
            if (atomic_compare_exchange_weak(&n->state, &st, 0))
                return;
            continue;
        }
        if (atomic_compare_exchange_weak(&n->state, &st, 1)) {
            size_t before = applied;
            applied += apply_list(g, n, (node_op *)(st & ~(uintptr_t)1));
            if (applied > g->combine_max) {
                if (before <= g->combine_max)
                    atomic_fetch_add_explicit(&g->crowded_holds, 1,
                                              memory_order_relaxed);
                atomic_store_explicit(&n->crowded, 1, memory_order_relaxed);
            }
            st = atomic_load(&n->state);
        }
    }
}

/* One turn of waiting for a node that is crowded (unlock_node). */
static void crowd_wait(unsigned *tries)
{
    if (++*tries % 256 == 0)
        sched_yield();
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* Applies op to n now if n is free, else queues a copy of it for the
 * thread that holds n.  *queued (may be NULL) says which.  Returns the
 * error of an update applied now, else the builder's error. */
static int submit(ospg *g, ospg_node *n, node_op *op, int *queued)
{
    if (queued)
        *queued = 0;
    if (!g->concurrent)
        return apply_op(g, n, op);
    node_op *q = NULL;
    unsigned tries = 0;
    uintptr_t st = atomic_load(&n->state);
    for (;;) {
        if (!(st & 1)) {
            if (atomic_compare_exchange_weak(&n->state, &st, 1))
                break;
            continue;
        }
        if (atomic_load_explicit(&n->crowded, memory_order_relaxed)) {
            crowd_wait(&tries);
            st = atomic_load(&n->state);
            continue;
        }
        if (!q) {
            q = pool_alloc(POOL_OP, sizeof(*q));
            if (!q)
                return fail(g, OSPG_ERR_NOMEM);
            *q = *op;
            q->deps = NULL;
            q->smp = NULL;
            if (op->ndeps) {
                q->deps = malloc(op->ndeps * sizeof(*op->deps));
                if (!q->deps) {
                    pool_free(q);
                    return fail(g, OSPG_ERR_NOMEM);
                }
                memcpy(q->deps, op->deps, op->ndeps * sizeof(*op->deps));
            }
            if (op->nsmp) {
                q->smp = malloc(op->nsmp * sizeof(*op->smp));
                if (!q->smp) {
                    op_free(q);
                    return fail(g, OSPG_ERR_NOMEM);
                }
                memcpy(q->smp, op->smp, op->nsmp * sizeof(*op->smp));
            }
        }
        q->next = (node_op *)(st & ~(uintptr_t)1);
        if (atomic_compare_exchange_weak(&n->state, &st, (uintptr_t)q | 1)) {
            if (queued)
                *queued = 1;
            return gerr(g); /* n is the holder's now: not touched again */
        }
    }
    if (q)
        op_free(q);
    int rc = apply_op(g, n, op);
    unlock_node(g, n);
    return rc;
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
    g->combine_max = COMBINE_MAX;
    g->runs_after = RUNS_AFTER;
    g->gen = atomic_fetch_add(&builder_gen, 1) + 1;
    g->scen = calloc(nscen, sizeof(*g->scen));
    if (!g->scen) {
        free(g);
        return NULL;
    }
    g->uniform = nscen > 1; /* one scenario: nothing to spare */
    for (size_t s = 1; s < nscen; s++) {
        g->scen[s] = scen[s];
        g->scaled_by_loc |= scen[s].factor > 1.0 && scen[s].nlocs > 0;
        g->grain_burdens |= scen[s].grain_burden != NULL;
        if (scen[s].grain_burden || scen[s].barrier_burden)
            g->uniform = 0;
    }
    if (cache_bind(g) || !(g->root = node_alloc(g))) {
        ospg_free(g);
        return NULL;
    }
    g->root->kind = OSPG_S;
    g->root->loc = g->root->drop_loc = OSPG_LOC_PROGRAM;
    g->root->drop_mask = loc_bit(OSPG_LOC_PROGRAM);
    g->root->prefix_ready = 1;
    return g;
}

void ospg_set_concurrent(ospg *g)
{
    g->concurrent = 1;
}

void ospg_set_combine_max(ospg *g, size_t updates)
{
    g->combine_max = updates;
}

void ospg_set_runs_after(ospg *g, size_t parked)
{
    g->runs_after = parked;
}

uint64_t ospg_crowded_holds(const ospg *g)
{
    return atomic_load_explicit(&g->crowded_holds, memory_order_relaxed);
}

uint64_t ospg_run_children(const ospg *g)
{
    return atomic_load_explicit(&g->run_children, memory_order_relaxed);
}

uint64_t ospg_run_nodes(const ospg *g)
{
    return atomic_load_explicit(&g->run_nodes, memory_order_relaxed);
}

void ospg_set_fixed_locations(ospg *g)
{
    g->fixed_locs = 1;
}

void ospg_end_concurrent(ospg *g)
{
    /* every node is unlocked with nothing queued: a thread applies what
     * was queued on a node before it lets go of it */
    g->concurrent = 0;
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

void ospg_set_region_tags(ospg *g, ospg_region_tags_fn fn, void *arg)
{
    g->region_tags = fn;
    g->region_tags_arg = arg;
}

int ospg_node_under(const ospg_node *n, const ospg_node *anc)
{
    for (; n; n = n->parent)
        if (n == anc)
            return 1;
    return 0;
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
    /* Pushed without the owner's lock: the list is only read once the
     * owner's subtree is done, after every member (and so every group). */
    gr->next = atomic_load_explicit(&owner->groups, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(
        &owner->groups, &gr->next, gr, memory_order_release,
        memory_order_relaxed))
        ;
    return gr;
}

/* A child may come at idx (parent's lock held): then parent has seen
 * children up to it.  Returns 0 or the error. */
static int child_admit(ospg *g, ospg_node *parent, uint64_t idx)
{
    if (gerr(g))
        return gerr(g);
    if (parent->finalized)
        return fail(g, OSPG_ERR_STATE);
    if (parent->ended && idx >= parent->nchildren)
        return fail(g, OSPG_ERR_INDEX);
    if (idx < parent->frontier || (parent->blocking && idx == parent->frontier))
        return fail(g, OSPG_ERR_INDEX);
    if (idx >= parent->seen)
        parent->seen = idx + 1;
    return 0;
}

/* Links new node n as child idx of parent (parent's lock held). */
static int attach(ospg *g, ospg_node *parent, ospg_node *n,
                  const ospg_dep *deps, size_t ndeps)
{
    int rc = child_admit(g, parent, n->idx);
    if (rc)
        return rc;
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
    if (n->kind == OSPG_P)
        n->parked_as = it;
    return 0;
}

/* Whether group's owner is parent or above it.  Members must lie under the
 * owner, or the group would never close (and an untrusted trace could make
 * it dangle).  Parent links never change, and parent's ancestors are all
 * live. */
static int group_above(const ospg_node *parent, const ospg_group *group)
{
    const ospg_node *a = parent;
    while (a && a != group->owner)
        a = a->parent;
    return a != NULL;
}

/* A new node, not linked yet, or NULL with the builder's error set. */
static ospg_node *node_create(ospg *g, ospg_node *parent, uint64_t idx,
                              ospg_kind kind, uint32_t loc, ospg_group *group,
                              size_t ndeps)
{
    int rc = gerr(g) ? gerr(g) : cache_bind(g);
    if (!rc && !parent)
        rc = fail(g, OSPG_ERR_STATE);
    if (!rc && kind != OSPG_S && kind != OSPG_P)
        rc = fail(g, OSPG_ERR_ARG);
    if (!rc && (ndeps || group) && kind != OSPG_P)
        rc = fail(g, OSPG_ERR_ARG);
    if (!rc && group && !group_above(parent, group))
        rc = fail(g, OSPG_ERR_ARG);
    if (rc)
        return NULL;
    ospg_node *n = node_alloc(g);
    if (!n) {
        fail(g, OSPG_ERR_NOMEM);
        return NULL;
    }
    n->parent = parent;
    n->idx = idx;
    n->kind = kind;
    n->group = group;
    n->loc = (loc == OSPG_LOC_NONE && group) ? group->loc : loc;
    n->begin_loc = loc;
    n->drop_loc = g->fixed_locs ? n->loc : OSPG_LOC_NONE;
    n->drop_mask = parent->drop_mask | loc_bit(n->drop_loc);
    if (ndeps) {
        n->event = calloc(1, sizeof(*n->event));
        if (!n->event) {
            node_release(g, n);
            fail(g, OSPG_ERR_NOMEM);
            return NULL;
        }
        n->event->refs = 1;
        n->event->nscen = g->nscen;
        n->event->rank = idx + 1;
    }
    return n;
}

/* Links n, made by node_create, as its parent's child. */
static int node_link(ospg *g, ospg_node *n, const ospg_dep *deps,
                     size_t ndeps)
{
    node_op op = {.kind = OP_ATTACH, .child = n,
                  .deps = (ospg_dep *)deps, .ndeps = ndeps};
    int queued = 0;
    int rc = submit(g, n->parent, &op, &queued);
    /* Never linked, nobody else can know it; once queued it may be
     * (the error then fails the whole build, which frees it). */
    if (rc && !queued)
        node_release(g, n);
    return rc;
}

ospg_node *ospg_begin(ospg *g, ospg_node *parent, uint64_t idx, ospg_kind kind,
                      uint32_t loc, ospg_group *group, const ospg_dep *deps,
                      size_t ndeps, int *err)
{
    return ospg_begin_work(g, parent, idx, kind, loc, group, deps, ndeps,
                           NULL, err);
}

ospg_node *ospg_begin_work(ospg *g, ospg_node *parent, uint64_t idx,
                           ospg_kind kind, uint32_t loc, ospg_group *group,
                           const ospg_dep *deps, size_t ndeps,
                           const ospg_leaf_work *w, int *err)
{
    ospg_node *n = node_create(g, parent, idx, kind, loc, group, ndeps);
    int rc = n ? OSPG_OK : gerr(g);
    if (n && w) {
        /* Not linked yet: nobody else can see it, so no lock. */
        node_op op = {.kind = OP_WORK, .idx = 0, .work = w->work,
                      .loc = w->loc, .region = w->region, .flags = w->flags};
        if ((rc = add_work(g, n, &op))) {
            node_release(g, n);
            n = NULL;
        }
    }
    if (n)
        rc = node_link(g, n, deps, ndeps);
    if (!rc)
        rc = run(g);
    if (rc) {
        if (err)
            *err = rc;
        return NULL;
    }
    return n;
}

int ospg_leaf(ospg *g, ospg_node *parent, uint64_t idx, ospg_kind kind,
              uint32_t loc, ospg_group *group, const ospg_leaf_work *w)
{
    int rc = gerr(g) ? gerr(g) : cache_bind(g);
    if (rc)
        return rc;
    if (!parent)
        return fail(g, OSPG_ERR_STATE);
    if ((kind != OSPG_S && kind != OSPG_P) || (group && kind != OSPG_P) ||
        (group && !group_above(parent, group)))
        return fail(g, OSPG_ERR_ARG);
    /* one update of the parent: the leaf folds there (add_leaf) */
    node_op op = {.kind = OP_LEAF, .idx = idx, .leaf_kind = kind,
                  .leaf_loc = loc, .group = group, .has_w = w != NULL};
    if (w) {
        op.work = w->work;
        op.loc = w->loc;
        op.region = w->region;
        op.flags = w->flags;
    }
    rc = submit(g, parent, &op, NULL);
    return rc ? rc : run(g);
}

int ospg_work(ospg *g, ospg_node *parent, uint64_t idx, uint64_t work,
              uint32_t loc, uint32_t region, unsigned flags)
{
    return ospg_work_sampled(g, parent, idx, work, loc, region, flags, NULL,
                             0);
}

int ospg_work_sampled(ospg *g, ospg_node *parent, uint64_t idx,
                      uint64_t work, uint32_t loc, uint32_t region,
                      unsigned flags, const ospg_sample *smp, size_t nsmp)
{
    int rc = gerr(g) ? gerr(g) : cache_bind(g);
    if (rc)
        return rc;
    if (!parent)
        return fail(g, OSPG_ERR_STATE);
    node_op op = {.kind = OP_WORK, .idx = idx, .work = work, .loc = loc,
                  .region = region, .flags = flags,
                  .smp = (ospg_sample *)smp, .nsmp = smp ? nsmp : 0};
    rc = submit(g, parent, &op, NULL);
    return rc ? rc : run(g);
}

int ospg_end(ospg *g, ospg_node *n, uint64_t nchildren, uint32_t loc)
{
    int rc = gerr(g) ? gerr(g) : cache_bind(g);
    if (rc)
        return rc;
    if (!n)
        return fail(g, OSPG_ERR_STATE);
    node_op op = {.kind = OP_END, .nchildren = nchildren, .loc = loc};
    rc = submit(g, n, &op, NULL);
    return rc ? rc : run(g);
}

int ospg_work_end(ospg *g, ospg_node *n, uint64_t idx, uint64_t work,
                  uint32_t loc, uint32_t region, unsigned flags,
                  uint64_t nchildren, uint32_t end_loc)
{
    int rc = gerr(g) ? gerr(g) : cache_bind(g);
    if (rc)
        return rc;
    if (!n)
        return fail(g, OSPG_ERR_STATE);
    node_op op = {.kind = OP_WORK_END, .idx = idx, .work = work, .loc = loc,
                  .region = region, .flags = flags, .nchildren = nchildren,
                  .end_loc = end_loc};
    rc = submit(g, n, &op, NULL);
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
    for (home *h = g->homes; h; h = h->next_home)
        DL_FOREACH2(h->live, n, live_next) {
            if (n->dead)
                continue;
            n->partial = 1;
            /* a cut-short node takes its parked children lowest first */
            park_index_drop(n);
            if (!n->ended) {
                n->ended = 1;
                n->nchildren = n->seen > n->frontier ? n->seen : n->frontier;
            } else if (n->nchildren > n->seen && n->nchildren > n->frontier) {
                n->nchildren = n->seen > n->frontier ? n->seen : n->frontier;
            }
        }
    for (home *h = g->homes; h; h = h->next_home)
        DL_FOREACH2(h->live, n, live_next)
            if (!n->dead && push_ready(g, n))
                return gerr(g);
    if (run(g))
        return gerr(g);
    return build_profile(g, out);
}

/* The profile's row of loc (rows sorted by location), or NULL. */
static ospg_loc_stat *row_of(ospg_profile *out, uint32_t loc)
{
    size_t lo = 0, hi = out->nlocs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (out->locs[mid].loc < loc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < out->nlocs && out->locs[lo].loc == loc ? &out->locs[lo]
                                                       : NULL;
}

/* Every thread's grains, summed into the profile's rows (build_profile
 * gave each grain location one). */
static int merge_grains(ospg *g, ospg_profile *out)
{
    size_t with = 0, k = 0;
    grain_hist *e, *tmp;
    for (home *h = g->homes; h; h = h->next_home)
        HASH_ITER(hh, h->hists, e, tmp) {
            ospg_loc_stat *ls = row_of(out, e->loc);
            if (!ls || !e->grains)
                continue;
            if (!ls->grains || e->min < ls->grain_min)
                ls->grain_min = e->min;
            if (e->max > ls->grain_max)
                ls->grain_max = e->max;
            with += !ls->grains;
            ls->grains += e->grains;
            ls->grain_work += e->work;
        }
    if (!with)
        return 0;
    out->hist_storage_ = calloc(with * OSPG_HIST_BUCKETS, sizeof(uint64_t));
    if (!out->hist_storage_)
        return -1;
    for (size_t i = 0; i < out->nlocs; i++)
        if (out->locs[i].grains)
            out->locs[i].grain_hist =
                out->hist_storage_ + OSPG_HIST_BUCKETS * k++;
    for (home *h = g->homes; h; h = h->next_home)
        HASH_ITER(hh, h->hists, e, tmp) {
            ospg_loc_stat *ls = row_of(out, e->loc);
            if (!ls || !ls->grain_hist)
                continue;
            for (size_t b = 0; b < OSPG_HIST_BUCKETS; b++)
                ls->grain_hist[b] += e->count[b];
        }
    return 0;
}

/* The root's entry of loc (group 0), made if it has none; *n counts the
 * entries made. */
static int root_row(ospg *g, ospg_node *r, uint32_t loc, size_t *n)
{
    stat_key k = {0, loc, 0};
    stat_entry *e;
    HASH_FIND(hh, r->stats, &k, sizeof(k), e);
    if (e)
        return 0;
    if (!(e = stat_new(g, loc, NULL)))
        return fail(g, OSPG_ERR_NOMEM);
    HASH_ADD(hh, r->stats, key, sizeof(e->key), e);
    ++*n;
    return 0;
}

/* The profile from a finalized root; releases the root. */
static int build_profile(ospg *g, ospg_profile *out)
{
    ospg_node *r = g->root;
    if (!r || !r->finalized || live_total(g) != 1)
        return fail(g, OSPG_ERR_STATE);
    if (expand(g, r)) /* read in every scenario below */
        return gerr(g);

    /* Every location with an instance, a grain or critical work gets a
     * row. */
    stat_entry *e, *tmp;
    size_t n = HASH_COUNT(r->stats);
    for (size_t s = 0; s < g->nscen; s++)
        for (uint32_t i = 0; i < r->ser[s].crit.n; i++)
            if (root_row(g, r, cmap_citems(&r->ser[s].crit)[i].loc, &n))
                return gerr(g);
    for (home *h = g->homes; h; h = h->next_home) {
        grain_hist *gh, *gtmp;
        HASH_ITER(hh, h->hists, gh, gtmp)
            if (gh->grains && root_row(g, r, gh->loc, &n))
                return gerr(g);
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
        ls->tag = e->tag;
        ls->line = e->line;
        for (size_t s = 0; s < g->nscen; s++) {
            ls->critical[s] = cmap_get(&r->ser[s].crit, ls->loc);
            if (e->tag) /* its longest chain, not a sum */
                ls->span[s] = r->tm ? cmap_get(&r->tm[s], ls->loc) : 0;
        }
        i++;
    }
    out->nlocs = n;
    qsort(out->locs, n, sizeof(*out->locs), cmp_stat);
    if (merge_grains(g, out))
        return fail(g, OSPG_ERR_NOMEM);
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
    free(p->hist_storage_);
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
    for (home *h = g->homes; h; h = h->next_home) {
        ospg_node *n, *tmp;
        DL_FOREACH_SAFE2(h->live, n, tmp, live_next)
            if (!n->dead)
                node_release(g, n);
    }
    /* Every thread's recycled blocks; other threads notice at their next
     * use of a builder that theirs is gone (gen). */
    if (tc.gen == g->gen)
        cache_drop();
    for (home *h = g->homes, *next; h; h = next) {
        next = h->next_home;
        home_free(h);
    }
    free(g->scen);
    free(g);
}
