/* ospg.h - the OpenMP series-parallel graph (OSPG) and its profile.
 *
 * This module owns the one implementation of the parallelism-profile
 * algorithm (OMP-WHIP, seeds/001 Fig. 4-5, with the fixes listed in
 * docs/model.md).  The on-the-fly profiler and the offline analyzer both
 * drive it through the same calls: begin an intermediate node, add a W-node,
 * end a node.  A node is folded into its parent as soon as it has ended and
 * its whole subtree is folded, so memory is bounded by the live nodes, never
 * by the length of the run.  Nothing here recurses over the tree.
 *
 * Children may be reported out of order (they carry their index among their
 * siblings); the result does not depend on the order of the calls, only on
 * the graph.  The builder is not thread-safe: concurrent callers serialize.
 */
#ifndef WHATIF_OSPG_H
#define WHATIF_OSPG_H

#include <stddef.h>
#include <stdint.h>

typedef enum ospg_kind {
    OSPG_S = 1, /* sync scope: its subtree runs in series with right siblings */
    OSPG_P = 2  /* parallel: its subtree runs in parallel with right siblings */
} ospg_kind;

/* Task dependence types on an address (OpenMP depend clause). */
typedef enum ospg_dep_type {
    OSPG_DEP_IN = 1,
    OSPG_DEP_OUT = 2,            /* same as inout */
    OSPG_DEP_INOUT = 3,
    OSPG_DEP_MUTEXINOUTSET = 4,  /* serialized in creation order, like inout */
    OSPG_DEP_INOUTSET = 5,       /* concurrent with its own set, else like out */
    OSPG_DEP_ALL_MEMORY = 6      /* inout on every address (omp_all_memory);
                                  * addr is ignored */
} ospg_dep_type;

typedef struct ospg_dep {
    uint64_t addr;
    uint32_t type; /* ospg_dep_type */
} ospg_dep;

/* Location id 0 is the whole program; the root carries it.  Other ids are
 * whatever the caller interned (the location table lives with the caller). */
#define OSPG_LOC_PROGRAM 0u
#define OSPG_LOC_NONE UINT32_MAX /* a node that is no directive instance */

/* A what-if scenario: the work of selected W-nodes is divided by factor,
 * total work is unchanged.  Scenario 0 is always the measured profile.
 * region_factor, when set, gives a W-node's own factor by its region
 * (> 1 selects it with that factor; anything else leaves it to the other
 * fields): per-region factors of annotations. */
typedef struct ospg_scenario {
    double factor;          /* > 1; INFINITY makes selected work free */
    int all_regions;        /* select every W-node inside any region */
    const uint32_t *regions; size_t nregions; /* sorted region ids */
    const uint32_t *locs; size_t nlocs;       /* sorted W-node locations */
    double (*region_factor)(void *arg, uint32_t region);
    void *region_factor_arg;
    /* Burdens, when set: what the runtime spends to start a grain (a
     * P-node with a location: a task, a chunk) of location loc, added to
     * the grain's span as if a W-node of its location ran before all of
     * its children (work is unchanged): burdened span and parallelism. */
    uint64_t (*grain_burden)(void *arg, uint32_t loc);
    void *grain_burden_arg;
    /* What a barrier costs beyond the wait for the last thread: added to
     * the span of every barrier phase as if a W-node of its parallel
     * region's location ran before all of the phase (every phase ends
     * with one barrier).  A barrier phase is an S-node with two children
     * or more whose parent is an S-node other than the root that carried
     * a location when it began (a parallel region; a team of one thread
     * has no barrier to pay). */
    uint64_t barrier_burden;
} ospg_scenario;

typedef struct ospg ospg;
typedef struct ospg_node ospg_node;
typedef struct ospg_group ospg_group;

/* Error codes; ospg_strerror() names them. */
typedef enum ospg_err {
    OSPG_OK = 0,
    OSPG_ERR_NOMEM = -1,
    OSPG_ERR_STATE = -2,    /* call not allowed in the node's state */
    OSPG_ERR_INDEX = -3,    /* child index reused or beyond the end count */
    OSPG_ERR_ARG = -4,
    OSPG_ERR_LOC = -5       /* an end changes a fixed location */
} ospg_err;

const char *ospg_strerror(int err);

/* Creates a builder with the measured scenario plus nscen-1 what-if ones
 * (scen[0] is ignored and may be NULL when nscen == 1).  The scenario
 * arrays must outlive the builder.  Returns NULL when out of memory. */
ospg *ospg_new(size_t nscen, const ospg_scenario *scen);
void ospg_free(ospg *g);
size_t ospg_nscen(const ospg *g);

/* Promises that a node begun with a location (its own or its group's)
 * is ended with that location or OSPG_LOC_NONE, never another: the
 * builder then drops an instance nested in one of its own location where
 * it folds, not at that ancestor (the outermost-instance rule).  An end
 * that breaks the promise fails with OSPG_ERR_LOC.  Call it before the
 * first ospg_begin. */
void ospg_set_fixed_locations(ospg *g);

/* Lets several threads call ospg_begin, ospg_work, ospg_end and
 * ospg_group_new at once (call it before any of them): each node is then
 * locked while it changes, and a thread folds what it completes.  Callers
 * must still report each node's begin before any of its children, and
 * nothing else (finish, free, the release hook's map) concurrently. */
void ospg_set_concurrent(ospg *g);

/* Concurrent builders: how many updates queued by other threads a thread
 * that holds a node applies in one hold before the others wait for it to
 * let go instead of queueing more (256; tests lower it to take that path
 * often), and how many holds reached that number. */
void ospg_set_combine_max(ospg *g, size_t updates);
uint64_t ospg_crowded_holds(const ospg *g);

/* How many children may wait at a node one by one before later W-children
 * and leaves join runs instead (ospg.c, "Segments": 64; tests lower it to
 * take runs often; 0 also lets a child begin a run at any gap), and how
 * many children joined runs. */
void ospg_set_runs_after(ospg *g, size_t parked);
uint64_t ospg_run_children(const ospg *g);
uint64_t ospg_run_nodes(const ospg *g); /* of them, finished nodes */

/* Back to one thread: call once no other thread is inside the builder or
 * will be again (their last calls must happen before this one, e.g. the
 * caller saw them stop through an atomic). */
void ospg_end_concurrent(ospg *g);

/* 1 when anc is n or one of n's ancestors.  Only n's ancestors are read
 * (anc is compared, not followed): a caller that holds n live may ask
 * about a node it cannot vouch for. */
int ospg_node_under(const ospg_node *n, const ospg_node *anc);

/* The root S-node (location OSPG_LOC_PROGRAM), live until ospg_finish(). */
ospg_node *ospg_root(ospg *g);

/* Loop chunks and sections of one worksharing instance form a group: the
 * instance's work is the sum of its members' and its span is their maximum.
 * owner is the node that holds every member in its subtree (the barrier
 * phase; a member whose parent is not owner or below it is refused); the
 * group is freed when owner folds.  Returns NULL on no memory. */
ospg_group *ospg_group_new(ospg *g, ospg_node *owner, uint32_t loc);

/* Begins an intermediate node as child number idx of parent (idx counts
 * every child, W-nodes included, from 0, in program order; it also breaks
 * ties between equally long paths: the lower index wins).  loc may be
 * OSPG_LOC_NONE and can still be set by ospg_end.  group is NULL unless the
 * node is a member.  deps are resolved against the earlier P-node siblings
 * (only for kind P).  Returns the node, or NULL with *err set. */
ospg_node *ospg_begin(ospg *g, ospg_node *parent, uint64_t idx, ospg_kind kind,
                      uint32_t loc, ospg_group *group, const ospg_dep *deps,
                      size_t ndeps, int *err);

/* W-node flags. */
#define OSPG_W_CONTINUES 1u /* a later fragment of the instance of loc that
                             * an earlier W-node began (a single, critical
                             * or lock body split by directives inside it):
                             * its work and span count, not an instance */

/* Adds a W-node of the given work as child number idx of parent.  region is
 * the innermost what-if region around it (0: none); flags: OSPG_W_*. */
int ospg_work(ospg *g, ospg_node *parent, uint64_t idx, uint64_t work,
              uint32_t loc, uint32_t region, unsigned flags);

/* What a W-node's work is also attributed to, besides its location.
 * count > 0: a sampled source line (loc: a location the caller interned
 * for that line; lines are locations of their own, which the caller tells
 * apart from directives when it reports) that took count samples while the
 * W-node ran: the W-node's work is split among its lines in proportion to
 * the counts.  A line's critical work is then its share of the critical
 * path (its W-nodes' shares where they lie on it), its work its share of
 * all work, its instances the samples and its span its work.
 * count == 0: a tag (loc: a location the caller interned for, say, the
 * pair of events around a serial fragment): the W-node's whole work goes
 * to loc too, and the W-node is one instance of it.  See "Tags" below. */
typedef struct ospg_sample {
    uint32_t loc;
    uint32_t count;
} ospg_sample;

/* ospg_work with what the W-node's work is also attributed to (smp,
 * copied): sampled lines and tags, in every scenario. */
int ospg_work_sampled(ospg *g, ospg_node *parent, uint64_t idx,
                      uint64_t work, uint32_t loc, uint32_t region,
                      unsigned flags, const ospg_sample *smp, size_t nsmp);

/* Tags.  A tag location gathers W-nodes that are no subtree: the serial
 * fragments between one pair of events, the code inside a what-if region.
 * Its statistics: instances (its tagged W-nodes; none for region tags),
 * work (theirs), critical work (theirs on the program's critical path) and
 * span: the longest chain of its W-nodes' work alone through the graph
 * (every other W-node weighing nothing), so work / span is the parallelism
 * of that code as it ran.  A tag location is never a node's location; it
 * may also be W-nodes' own location (they then add instances and work).
 *
 * Region tags: with fn set, every W-node of what-if region path region
 * (region != 0) is also tagged with the locations fn writes to locs (at
 * most OSPG_MAX_TAGS, no repeats; the regions the path passes through),
 * counting no instance. */
#define OSPG_MAX_TAGS 16
typedef size_t (*ospg_region_tags_fn)(void *arg, uint32_t region,
                                      uint32_t *locs, size_t max);
void ospg_set_region_tags(ospg *g, ospg_region_tags_fn fn, void *arg);

/* The work of a leaf's one W-child (see ospg_work). */
typedef struct ospg_leaf_work {
    uint64_t work;
    uint32_t loc, region;
    unsigned flags;
} ospg_leaf_work;

/* ospg_begin, then ospg_work(node, 0, w) for its first child, a W-node:
 * the W-node is added before the node is linked, when no other thread can
 * see it, so the pair costs one update of the parent and none of the
 * node's own (a task whose first child comes after some code of its own).
 * w NULL: ospg_begin. */
ospg_node *ospg_begin_work(ospg *g, ospg_node *parent, uint64_t idx,
                           ospg_kind kind, uint32_t loc, ospg_group *group,
                           const ospg_dep *deps, size_t ndeps,
                           const ospg_leaf_work *w, int *err);

/* Begins, fills and ends at once a node whose only child is a W-node (w),
 * or that has no child (w NULL): what ospg_begin, ospg_work(idx 0) and
 * ospg_end(1 or 0 children, loc unchanged) would do, in one update of the
 * parent.  The leaf never takes a node (nor counts in ospg_live_nodes):
 * reported when it is the parent's next child in index order (its
 * frontier) it folds straight into the parent; reported earlier, it waits
 * in the parent as a small item, like a W-node, until the frontier
 * reaches it.  It cannot be named afterwards, so it takes no depend items.
 * Returns OSPG_OK or an error. */
int ospg_leaf(ospg *g, ospg_node *parent, uint64_t idx, ospg_kind kind,
              uint32_t loc, ospg_group *group, const ospg_leaf_work *w);

/* Ends node: it has nchildren children in all.  loc, unless OSPG_LOC_NONE,
 * replaces the node's location (a taskwait scope learns it only here).  The
 * node, and any ancestors it completes, fold now or as soon as their last
 * child does.  The pointer stays valid as a parent until all nchildren
 * children are reported; after that it must not be used. */
int ospg_end(ospg *g, ospg_node *node, uint64_t nchildren, uint32_t loc);

/* ospg_work(node, idx, work, loc, region, flags) followed by
 * ospg_end(node, nchildren, end_loc), in one update of node: a fragment
 * that is its node's last child (the code before a taskwait, a task's
 * last code) costs the builder one lock of the node instead of two. */
int ospg_work_end(ospg *g, ospg_node *node, uint64_t idx, uint64_t work,
                  uint32_t loc, uint32_t region, unsigned flags,
                  uint64_t nchildren, uint32_t end_loc);

/* The first error the builder met (sticky), or OSPG_OK. */
int ospg_error(const ospg *g);

/* A caller that maps ids to nodes or groups (the trace replay) learns here
 * when one is freed: fn(arg, user) runs with the pointer it attached. */
typedef void (*ospg_release_fn)(void *arg, void *user);
void ospg_set_release_hook(ospg *g, ospg_release_fn fn, void *arg);
void ospg_node_set_user(ospg_node *n, void *user);
void ospg_group_set_user(ospg_group *gr, void *user);

/* Number of nodes begun and not yet folded (the memory bound). */
uint64_t ospg_live_nodes(const ospg *g);
uint64_t ospg_peak_live_nodes(const ospg *g);

/* ---- The profile ---- */

/* Grains' own work by bucket, for the median on the fly: values below 8
 * have a bucket each, then 8 buckets per power of two, so a bucket's
 * midpoint is within 1/16 of every value in it (values from 2^48 share the
 * last bucket).  The histogram's size does not grow with the grains. */
#define OSPG_HIST_SUB 8u
#define OSPG_HIST_TOP 48u
#define OSPG_HIST_BUCKETS (OSPG_HIST_SUB * (OSPG_HIST_TOP - 2u))

static inline size_t ospg_hist_bucket(uint64_t v)
{
    if (v < OSPG_HIST_SUB)
        return (size_t)v;
    unsigned e = 63u - (unsigned)__builtin_clzll(v); /* >= 3 */
    if (e >= OSPG_HIST_TOP)
        return OSPG_HIST_BUCKETS - 1;
    return OSPG_HIST_SUB * (e - 2u) + (size_t)((v >> (e - 3u)) & 7u);
}

/* The value a bucket stands for: its midpoint (its value below 8). */
static inline uint64_t ospg_hist_value(size_t b)
{
    if (b < OSPG_HIST_SUB)
        return b;
    unsigned e = (unsigned)(b / OSPG_HIST_SUB) + 2u;
    uint64_t width = 1ull << (e - 3u);
    uint64_t lo = (OSPG_HIST_SUB + b % OSPG_HIST_SUB) * width;
    return lo + (width - 1) / 2;
}

/* The median grain's own work to within 1/16: the bucket value of the
 * lower median (the ceil(n/2)-th smallest of n).  0 without grains. */
uint64_t ospg_grain_median(const uint64_t *hist);

typedef struct ospg_loc_stat {
    uint32_t loc;
    uint64_t instances;  /* counted dynamic instances (outermost only) */
    uint64_t work;       /* total work of those instances */
    uint64_t grains;     /* every instance of a grain (a P-node with this
                          * location: a task, a chunk), nested or not */
    uint64_t grain_work; /* the grains' own work: of the W-nodes they hold
                          * that no nested grain holds */
    uint64_t grain_max;  /* the largest own work of one grain */
    uint64_t grain_min;  /* the smallest (0 without grains) */
    uint64_t *grain_hist; /* [OSPG_HIST_BUCKETS] grains by own work (see
                           * ospg_hist_bucket); NULL without grains */
    uint64_t *span;      /* [nscen] sum of their spans */
    uint64_t *critical;  /* [nscen] program critical-path work of W-nodes
                          * located here */
    int tag;             /* a tag location: span is its longest chain */
    int line;            /* a sampled source line (ospg_sample counts) */
} ospg_loc_stat;

typedef struct ospg_profile {
    size_t nscen;
    uint64_t work;       /* program work */
    uint64_t *span;      /* [nscen] program span */
    size_t nlocs;
    ospg_loc_stat *locs; /* sorted by loc id; loc 0 (program) included */
    uint64_t nodes;      /* intermediate + W nodes seen */
    uint64_t *storage_;  /* private: backs the per-location arrays */
    uint64_t *hist_storage_; /* private: backs the histograms */
} ospg_profile;

/* Ends the root and computes the profile.  Fails with OSPG_ERR_STATE if any
 * node other than the root is still live (a truncated graph).  On success
 * *out owns its arrays (ospg_profile_free) and the builder is spent. */
int ospg_finish(ospg *g, uint64_t root_nchildren, ospg_profile *out);
void ospg_profile_free(ospg_profile *p);

/* For a run cut short (exit() inside a parallel region): ends every live
 * node as it stands, taking children never reported as empty, and computes
 * the profile of what was measured.  Same ownership as ospg_finish. */
int ospg_finish_partial(ospg *g, ospg_profile *out);

/* The work of a W-node in scenario s: what both the builder and the tests'
 * oracle use, so that what-if results compare exactly. */
uint64_t ospg_scaled_work(const ospg_scenario *s, uint64_t work, uint32_t loc,
                          uint32_t region);

#endif
