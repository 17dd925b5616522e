/* test_ospg_random.c - randomized differential test of analyzer/ospg.c.
 *
 * For thousands of seeds (from a fixed base): draw a graph (graphgen.c),
 * compute its profile by brute force (oracle.c), feed the same graph to the
 * real builder in a random valid order of events, and compare exactly:
 * program work, node count and span, and every location's instances, work,
 * span and critical values, in every scenario.  Critical values are
 * compared exactly when the oracle says all longest paths attribute alike;
 * on tied longest paths each must lie within the oracle's bounds over all
 * of them and equal what the model's tie rules pick (--no-tie-rule: bounds
 * only), and they must always sum to the span.
 *
 * The live-node count is checked after every event: never below the nodes
 * begun and not yet complete (the root included; a node completes when it
 * has ended and all its children are reported and complete), exactly that
 * count when the events come in program order, 1 (the root) after the last
 * event, 0 after ospg_finish (one summary failure); the peak never exceeds
 * the intermediate nodes, nor the depth in program order.  A few contract
 * checks (error codes, ospg_scaled_work) run first.
 *
 * Valid orders: a parent's begin comes before its children's begin or work
 * and before its own end; a node's end may come before its children's
 * events (the node stays a valid parent until its children are all
 * reported); children come in any index order; a group is created after
 * its owner's begin and before its members' begin (a group without members
 * before its owner's end, as its owner may fold at once).  The order
 * policies: uniform, ends first, ends last, reverse index, depth-first in
 * program order, depth-first shuffled with an early end.
 *
 * Half the seeds feed every node whose only child is a W-node (or that has
 * none) through ospg_leaf, in one call at its begin event; half (by another
 * draw) feed a W-node whose parent's end comes next as one ospg_work_end,
 * and a node whose first child, a W-node, comes next as one
 * ospg_begin_work.
 *
 * Usage: test_ospg_random [--count N] [--base B] [--seed S] [--dump]
 *                         [--shrink] [--no-live] [--no-tie-rule] [-v]
 * --seed S runs one seed (--dump prints the events, the graph and both
 * profiles; --shrink removes subtrees, depend lists and intermediate nodes
 * while the same kind of failure stays, and dumps the smallest graph);
 * --no-live skips the live-node checks, to triage profile differences.
 * Each failing seed prints a one-line repro; the last line is
 * "N passed, N failed"; the exit status is nonzero on a failure.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "graphgen.h"
#include "oracle.h"
#include "ospg.h"

#define DEFAULT_BASE 0x5eed0000ull
#define DEFAULT_COUNT 4000
#define MAX_MSGS 12

enum {
    FEED_UNIFORM = 0, FEED_ENDS_FIRST, FEED_ENDS_LAST, FEED_REVERSE,
    FEED_DFS, FEED_DFS_SHUFFLED, FEED_NMODES
};
static const char *feed_names[] = {"uniform", "ends-first", "ends-last",
                                   "reverse", "dfs", "dfs-shuffled"};

/* ---- what one seed draws ---- */

typedef struct trial {
    uint64_t seed;
    gg_params gp;
    int feed;
    int leaves;     /* nodes with at most one child, a W, go as ospg_leaf */
    int fuse;       /* a W followed at once by its parent's end: one
                     * ospg_work_end call */
    size_t nscen;
    ospg_scenario scen[4];
    uint32_t regs[4][8];
    uint32_t locs[4][8];
} trial;

static void draw_subset(gg_rng *r, uint32_t lo, uint32_t hi, uint32_t *out,
                        size_t *n, size_t max)
{
    *n = 0;
    for (uint32_t x = lo; x <= hi && *n < max; x++)
        if (gg_chance(r, 40))
            out[(*n)++] = x;
    if (*n == 0 && lo <= hi)
        out[(*n)++] = (uint32_t)gg_range(r, lo, hi);
}

/* Draws everything but the scenarios' location lists (they need the
 * graph). */
static void draw_trial(trial *t, uint64_t seed)
{
    memset(t, 0, sizeof *t);
    t->seed = seed;
    gg_rng r;
    gg_rng_seed(&r, gg_mix(seed, 0x747269616cull));
    unsigned x = (unsigned)gg_below(&r, 100);
    size_t size = x < 50   ? gg_range(&r, 10, 100)
                  : x < 80 ? gg_range(&r, 100, 400)
                  : x < 95 ? gg_range(&r, 400, 1000)
                           : gg_range(&r, 1000, 2000);
    x = (unsigned)gg_below(&r, 100);
    t->gp.seed = seed;
    t->gp.target_nodes = size;
    t->gp.shape = (int)gg_range(&r, 1, GG_NSHAPES - 1);
    t->gp.weights = x < 40 ? GG_WEIGHTS_SMALL : x < 80 ? GG_WEIGHTS_LARGE
                                                       : GG_WEIGHTS_MIXED;
    t->feed = (int)gg_below(&r, FEED_NMODES);
    x = (unsigned)gg_below(&r, 100);
    t->nscen = x < 35 ? 1 : x < 85 ? 3 : 4;
    t->leaves = gg_chance(&r, 50);
    t->fuse = (int)(seed >> 1 & 1); /* not drawn: the other draws stay */
}

/* Scenario 1: halve some regions; 2: make some W locations (or every
 * region) free; 3: a third of regions and locations together. */
/* Per-region factors for the random scenarios: 2, 5 or infinity by id,
 * none for every fourth region. */
static double region_factor_by_id(void *arg, uint32_t region)
{
    (void)arg;
    switch (region % 4) {
    case 0: return 0;
    case 1: return 2;
    case 2: return 5;
    default: return INFINITY;
    }
}

/* Grain burdens for the random scenarios: 0 to 40 by location, none for
 * one location in five. */
static uint64_t burden_by_loc(void *arg, uint32_t loc)
{
    (void)arg;
    uint32_t h = loc * 2654435761u;
    return (h >> 28) % 5 == 0 ? 0 : (h >> 8) % 41;
}

static void draw_scenarios(trial *t, const gg_graph *g)
{
    gg_rng r;
    gg_rng_seed(&r, gg_mix(t->seed, 0x7363656eull));
    uint32_t wl[64];
    size_t nwl = 0;
    for (size_t i = 0; i < g->nnodes && nwl < 64; i++)
        if (g->nodes[i].kind == GG_W && gg_chance(&r, 10)) {
            uint32_t l = g->nodes[i].loc;
            size_t k = 0;
            while (k < nwl && wl[k] != l)
                k++;
            if (k == nwl)
                wl[nwl++] = l;
        }
    for (size_t s = 1; s < t->nscen; s++) {
        ospg_scenario *sc = &t->scen[s];
        size_t nr = 0, nl = 0;
        uint32_t nreg = g->nregions ? g->nregions : 1;
        if (s == 1) {
            sc->factor = 2;
            draw_subset(&r, 1, nreg, t->regs[s], &nr, 8);
            if (gg_chance(&r, 30)) /* burdened, regions halved */
                sc->grain_burden = burden_by_loc;
            if (gg_chance(&r, 30)) /* and barriers */
                sc->barrier_burden = gg_range(&r, 1, 50);
        } else if (s == 2) {
            sc->factor = INFINITY;
            if (gg_chance(&r, 30) || nwl == 0) {
                sc->all_regions = 1;
            } else {
                for (size_t k = 0; k < nwl && nl < 3; k++)
                    if (gg_chance(&r, 50) || nl == 0)
                        t->locs[s][nl++] = wl[k];
            }
        } else {
            sc->factor = gg_chance(&r, 50) ? 3 : 1.5;
            /* half the time, per-region factors too (annotations) */
            if (gg_chance(&r, 50))
                sc->region_factor = region_factor_by_id;
            if (gg_chance(&r, 50))
                sc->grain_burden = burden_by_loc;
            if (gg_chance(&r, 30))
                sc->barrier_burden = gg_range(&r, 1, 50);
            draw_subset(&r, 1, nreg, t->regs[s], &nr, 8);
            for (size_t k = 0; k < nwl && nl < 8; k++)
                if (gg_chance(&r, 30))
                    t->locs[s][nl++] = wl[k];
        }
        /* sorted, as the header asks */
        for (size_t a = 1; a < nl; a++)
            for (size_t b = a; b > 0 && t->locs[s][b - 1] > t->locs[s][b];
                 b--) {
                uint32_t tmp = t->locs[s][b];
                t->locs[s][b] = t->locs[s][b - 1];
                t->locs[s][b - 1] = tmp;
            }
        sc->regions = nr ? t->regs[s] : NULL;
        sc->nregions = nr;
        sc->locs = nl ? t->locs[s] : NULL;
        sc->nlocs = nl;
    }
}

/* ---- the order of events ---- */

/* Event ids: 2i = begin (or work) of node i, 2i+1 = end of node i,
 * 2n + k = creation of group k. */
typedef struct sched {
    const gg_graph *g;
    size_t n;
    uint32_t *gown_off, *gown;   /* groups by owner */
    uint32_t *gmem_off, *gmem;   /* members by group */
} sched;

static void sched_init(sched *S, const gg_graph *g)
{
    size_t n = g->nnodes, ng = g->ngroups;
    S->g = g;
    S->n = n;
    S->gown_off = calloc(n + 1, sizeof *S->gown_off);
    S->gown = calloc(ng + 1, sizeof *S->gown);
    S->gmem_off = calloc(ng + 1, sizeof *S->gmem_off);
    S->gmem = calloc(n + 1, sizeof *S->gmem);
    if (!S->gown_off || !S->gown || !S->gmem_off || !S->gmem)
        abort();
    for (size_t k = 0; k < ng; k++)
        S->gown_off[g->groups[k].owner + 1]++;
    for (size_t i = 0; i < n; i++)
        S->gown_off[i + 1] += S->gown_off[i];
    for (size_t i = 0; i < n; i++)
        if (g->nodes[i].group >= 0)
            S->gmem_off[g->nodes[i].group + 1]++;
    for (size_t k = 0; k < ng; k++)
        S->gmem_off[k + 1] += S->gmem_off[k];
    uint32_t *f1 = calloc(n + 1, sizeof *f1), *f2 = calloc(ng + 1, sizeof *f2);
    if (!f1 || !f2)
        abort();
    for (size_t k = 0; k < ng; k++) {
        uint32_t o = (uint32_t)g->groups[k].owner;
        S->gown[S->gown_off[o] + f1[o]++] = (uint32_t)k;
    }
    for (size_t i = 0; i < n; i++) {
        int32_t k = g->nodes[i].group;
        if (k >= 0)
            S->gmem[S->gmem_off[k] + f2[k]++] = (uint32_t)i;
    }
    free(f1);
    free(f2);
}

static void sched_free(sched *S)
{
    free(S->gown_off);
    free(S->gown);
    free(S->gmem_off);
    free(S->gmem);
}

typedef struct evlist {
    size_t *e;
    size_t n;
} evlist;

/* Depth-first: begin, the groups it owns, its children (in index order or
 * shuffled), its end after all of them or at a random point among them. */
static void order_dfs(const sched *S, gg_rng *r, int shuffled, evlist *out)
{
    const gg_graph *g = S->g;
    size_t n = S->n;
    int32_t *perm = malloc((n + 1) * sizeof *perm);
    struct frame { int32_t node; uint32_t pos, endpos; int ended; } *st =
        malloc((n + 1) * sizeof *st);
    if (!perm || !st)
        abort();
    memcpy(perm, g->kids, (n ? n - 1 : 0) * sizeof *perm);
    size_t sp = 0;
    for (uint32_t q = S->gown_off[0]; q < S->gown_off[1]; q++)
        out->e[out->n++] = 2 * n + S->gown[q];
    st[sp++] = (struct frame){0, 0, g->nodes[0].nkids, 1};
    while (sp) {
        struct frame *f = &st[sp - 1];
        const gg_node *N = &g->nodes[f->node];
        if (!f->ended && f->pos == f->endpos) {
            out->e[out->n++] = 2 * (size_t)f->node + 1;
            f->ended = 1;
        }
        if (f->pos == N->nkids) {
            sp--;
            continue;
        }
        int32_t c = perm[N->kid_off + f->pos++];
        out->e[out->n++] = 2 * (size_t)c;
        const gg_node *C = &g->nodes[c];
        if (C->kind == GG_W)
            continue;
        for (uint32_t q = S->gown_off[c]; q < S->gown_off[c + 1]; q++)
            out->e[out->n++] = 2 * n + S->gown[q];
        if (shuffled) {
            for (uint32_t k = C->nkids; k > 1; k--) {
                uint32_t j = (uint32_t)gg_below(r, k);
                int32_t tmp = perm[C->kid_off + k - 1];
                perm[C->kid_off + k - 1] = perm[C->kid_off + j];
                perm[C->kid_off + j] = tmp;
            }
        }
        uint32_t endpos = shuffled ? (uint32_t)gg_below(r, C->nkids + 1)
                                   : C->nkids;
        st[sp++] = (struct frame){c, 0, endpos, 0};
    }
    free(perm);
    free(st);
}

/* A random topological order of the event constraints, picked by policy. */
static void order_random(const sched *S, gg_rng *r, int policy, evlist *out)
{
    const gg_graph *g = S->g;
    size_t n = S->n, ng = g->ngroups, ne = 2 * n + ng;
    uint32_t *indeg = calloc(ne, sizeof *indeg);
    size_t *rend = malloc((ne + 1) * sizeof *rend);
    size_t *roth = malloc((ne + 1) * sizeof *roth);
    size_t nend = 0, noth = 0;
    if (!indeg || !rend || !roth)
        abort();
    for (size_t i = 1; i < n; i++) {
        indeg[2 * i] = g->nodes[i].parent != 0;
        if (g->nodes[i].group >= 0)
            indeg[2 * i]++;
        indeg[2 * i + 1] = 1;
    }
    for (size_t k = 0; k < ng; k++) {
        indeg[2 * n + k] = g->groups[k].owner != 0;
        /* a group without members must come while its owner is live */
        if (S->gmem_off[k] == S->gmem_off[k + 1] && g->groups[k].owner != 0)
            indeg[2 * (size_t)g->groups[k].owner + 1]++;
    }
#define RELEASE(ev)                                                           \
    do {                                                                      \
        size_t ev_ = (ev);                                                    \
        if (--indeg[ev_] == 0) {                                              \
            if (ev_ < 2 * n && (ev_ & 1))                                     \
                rend[nend++] = ev_;                                           \
            else                                                              \
                roth[noth++] = ev_;                                           \
        }                                                                     \
    } while (0)
    for (size_t i = 1; i < n; i++)
        if (indeg[2 * i] == 0)
            roth[noth++] = 2 * i;
    for (size_t k = 0; k < ng; k++)
        if (indeg[2 * n + k] == 0)
            roth[noth++] = 2 * n + k;
    while (nend + noth) {
        size_t *from;
        size_t *cnt;
        size_t pick;
        int take_end;
        if (policy == FEED_ENDS_FIRST)
            take_end = nend > 0;
        else if (policy == FEED_ENDS_LAST)
            take_end = noth == 0;
        else
            take_end = gg_below(r, nend + noth) < nend;
        from = take_end ? rend : roth;
        cnt = take_end ? &nend : &noth;
        pick = (size_t)gg_below(r, *cnt);
        if (policy == FEED_REVERSE && !take_end) {
            /* of a few candidates, the highest index goes first */
            for (int k = 0; k < 3; k++) {
                size_t c = (size_t)gg_below(r, *cnt);
                size_t a = from[c], b = from[pick];
                uint32_t ia = a < 2 * n ? g->nodes[a / 2].idx : 0;
                uint32_t ib = b < 2 * n ? g->nodes[b / 2].idx : 0;
                if (ia > ib)
                    pick = c;
            }
        }
        size_t ev = from[pick];
        from[pick] = from[--*cnt];
        out->e[out->n++] = ev;
        if (ev >= 2 * n) {
            size_t k = ev - 2 * n;
            for (uint32_t q = S->gmem_off[k]; q < S->gmem_off[k + 1]; q++)
                RELEASE(2 * (size_t)S->gmem[q]);
            if (S->gmem_off[k] == S->gmem_off[k + 1] &&
                g->groups[k].owner != 0)
                RELEASE(2 * (size_t)g->groups[k].owner + 1);
        } else if (!(ev & 1)) {
            size_t i = ev / 2;
            const gg_node *N = &g->nodes[i];
            if (N->kind == GG_W)
                continue;
            RELEASE(2 * i + 1);
            for (uint32_t k = 0; k < N->nkids; k++)
                RELEASE(2 * (size_t)g->kids[N->kid_off + k]);
            for (uint32_t q = S->gown_off[i]; q < S->gown_off[i + 1]; q++)
                RELEASE(2 * n + S->gown[q]);
        }
    }
#undef RELEASE
    free(indeg);
    free(rend);
    free(roth);
}

/* The events of one graph: W-nodes have no end event, the root neither. */
static size_t event_count(const gg_graph *g)
{
    size_t c = g->ngroups;
    for (size_t i = 1; i < g->nnodes; i++)
        c += g->nodes[i].kind == GG_W ? 1 : 2;
    return c;
}

/* ---- one trial ---- */

typedef struct result {
    int fail;
    int nmsgs;
    char msgs[MAX_MSGS][240];
} result;

static void report(result *R, const char *fmt, ...)
{
    R->fail = 1;
    if (R->nmsgs < MAX_MSGS) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(R->msgs[R->nmsgs], sizeof R->msgs[0], fmt, ap);
        va_end(ap);
    }
    R->nmsgs++;
}

static int check_live = 1; /* --no-live: skip the live-node checks */
/* --no-tie-rule: on tied longest paths, only bound the critical values */
static int check_tie_rule = 1;

static struct {
    unsigned long long seeds, nodes, ties, tie_scen, redrawn, events;
    unsigned long long leaves; /* nodes fed through ospg_leaf */
    unsigned long long fixed;  /* feeds under ospg_set_fixed_locations */
    /* children taken into runs (ospg_run_children), with one scenario
     * and with several */
    unsigned long long runs_one, runs_many;
    unsigned long long run_nodes; /* of them, finished nodes */
    unsigned long long fused;  /* pairs fed as ospg_work_end or
                                * ospg_begin_work */
    unsigned long long shapes[GG_NSHAPES], feeds[FEED_NMODES];
    unsigned long long compared_crit, bounded_crit, peak_max;
    unsigned long long live_after_finish, live_after_finish_value;
    uint64_t live_after_finish_seed;
} stats;

static const char *ev_name(const gg_graph *g, size_t ev, char *buf,
                           size_t len)
{
    size_t n = g->nnodes;
    if (ev >= 2 * n)
        snprintf(buf, len, "group_new(g%zu)", ev - 2 * n);
    else if (ev & 1)
        snprintf(buf, len, "end(#%zu)", ev / 2);
    else if (g->nodes[ev / 2].kind == GG_W)
        snprintf(buf, len, "work(#%zu)", ev / 2);
    else
        snprintf(buf, len, "begin(#%zu)", ev / 2);
    return buf;
}

/* Feeds the graph; fills prof on success. */
static int feed(const gg_graph *g, const trial *t, const evlist *ev,
                ospg_profile *prof, uint64_t *peak, int dump, result *R)
{
    size_t n = g->nnodes;
    ospg *G = ospg_new(t->nscen, t->nscen > 1 ? t->scen : NULL);
    if (!G) {
        report(R, "ospg_new failed");
        return -1;
    }
    ospg_set_region_tags(G, gg_region_tags, (void *)g);
    /* half the seeds whose graph allows it drop nested instances early */
    if (t->seed >> 2 & 1 && gg_keeps_locs(g)) {
        ospg_set_fixed_locations(G);
        stats.fixed++;
    }
    /* and then half of those sum early W-children and leaves into runs
     * from the first one on (ospg.c, "Segments"), at any gap; a quarter
     * more from the second on, where a run begins only with children
     * that come in a row once there are several scenarios */
    if (t->seed >> 3 & 1)
        ospg_set_runs_after(G, 0);
    else if (t->seed >> 4 & 1)
        ospg_set_runs_after(G, 1);
    ospg_node **h = calloc(n, sizeof *h);
    ospg_group **gh = calloc(g->ngroups + 1, sizeof *gh);
    /* leaf[i]: node i goes in one ospg_leaf call at its begin event; its
     * W-child's and its own end events are skipped.  Such a node has no
     * child but one W, keeps its begin location and owns no group. */
    unsigned char *leaf = t->leaves ? gg_leaves(g) : calloc(n, 1);
    if (!leaf)
        abort();
    /* expected live nodes: begun, not folded (root included) */
    uint32_t *pending = calloc(n, sizeof *pending);
    unsigned char *ended = calloc(n, 1);
    if (!h || !gh || !pending || !ended)
        abort();
    for (size_t i = 0; i < n; i++)
        pending[i] = g->nodes[i].nkids;
    uint64_t live = 1, epeak = 1;
    int live_bad = 0;
    h[0] = ospg_root(G);
    int rc = 0;
    char buf[64];
    if (check_live && ospg_live_nodes(G) != live)
        report(R, "live nodes %llu after ospg_new, expected 1 (the root)",
               (unsigned long long)ospg_live_nodes(G));
    for (size_t q = 0; q < ev->n && rc == 0; q++) {
        size_t e = ev->e[q];
        int err = OSPG_OK;
        int32_t fold = -1; /* node that may fold now */
        if (dump)
            printf("  event %zu: %s\n", q, ev_name(g, e, buf, sizeof buf));
        if (e >= 2 * n) {
            size_t k = e - 2 * n;
            gh[k] = ospg_group_new(G, h[g->groups[k].owner], g->groups[k].loc);
            if (!gh[k])
                err = OSPG_ERR_NOMEM;
        } else if (e & 1 ? leaf[e / 2]
                         : g->nodes[e / 2].kind == GG_W &&
                               leaf[g->nodes[e / 2].parent]) {
            continue; /* done by the leaf's ospg_leaf */
        } else if (!(e & 1) && leaf[e / 2]) {
            size_t i = e / 2;
            const gg_node *N = &g->nodes[i];
            ospg_leaf_work w;
            if (N->nkids) {
                const gg_node *W = &g->nodes[g->kids[N->kid_off]];
                w = (ospg_leaf_work){W->work, W->loc, W->region, W->wflags};
            }
            err = ospg_leaf(G, h[N->parent], N->idx, (ospg_kind)N->kind,
                            N->begin_loc,
                            N->group >= 0 ? gh[N->group] : NULL,
                            N->nkids ? &w : NULL);
            /* a leaf never takes a node (it folds at once, or waits in
             * its parent as a parked item): not in the expected peak */
            live++;
            stats.leaves++;
            ended[i] = 1;
            pending[i] = 0;
            fold = (int32_t)i;
        } else if (e & 1) {
            size_t i = e / 2;
            err = ospg_end(G, h[i], g->nodes[i].nkids, g->nodes[i].end_loc);
            ended[i] = 1;
            fold = (int32_t)i;
        } else {
            size_t i = e / 2;
            const gg_node *N = &g->nodes[i];
            size_t p = (size_t)N->parent;
            if (N->kind == GG_W && t->fuse && q + 1 < ev->n &&
                ev->e[q + 1] == 2 * p + 1 && !leaf[p] && !N->ntags) {
                /* the W and its parent's end, in one update */
                err = ospg_work_end(G, h[p], N->idx, N->work, N->loc,
                                    N->region, N->wflags, g->nodes[p].nkids,
                                    g->nodes[p].end_loc);
                stats.fused++;
                q++;
                pending[p]--;
                ended[p] = 1;
                fold = (int32_t)p;
            } else if (N->kind == GG_W) {
                ospg_sample tags[GG_MAXTAGS];
                size_t nt = gg_tag_samples(N, tags);
                err = ospg_work_sampled(G, h[N->parent], N->idx, N->work,
                                        N->loc, N->region, N->wflags, tags,
                                        nt);
                fold = N->parent;
                pending[N->parent]--;
            } else {
                /* its first child a W-node that comes next: one call */
                const gg_node *W = NULL;
                if (t->fuse && N->nkids && q + 1 < ev->n &&
                    ev->e[q + 1] == 2 * (size_t)g->kids[N->kid_off]) {
                    W = &g->nodes[g->kids[N->kid_off]];
                    if (W->kind != GG_W || W->idx != 0 || W->ntags)
                        W = NULL;
                }
                ospg_leaf_work w0 = {0, 0, 0, 0};
                if (W)
                    w0 = (ospg_leaf_work){W->work, W->loc, W->region,
                                          W->wflags};
                h[i] = ospg_begin_work(G, h[N->parent], N->idx,
                                       (ospg_kind)N->kind, N->begin_loc,
                                       N->group >= 0 ? gh[N->group] : NULL,
                                       N->kind == OSPG_P ? N->deps : NULL,
                                       N->kind == OSPG_P ? N->ndeps : 0,
                                       W ? &w0 : NULL, &err);
                if (W) {
                    stats.fused++;
                    q++;
                    pending[i]--;
                }
                if (!h[i] && err == OSPG_OK)
                    err = OSPG_ERR_STATE;
                if (h[i])
                    err = OSPG_OK;
                live++;
                if (live > epeak)
                    epeak = live;
            }
        }
        if (err != OSPG_OK) {
            report(R, "event %zu %s: %s", q, ev_name(g, e, buf, sizeof buf),
                   ospg_strerror(err));
            rc = -1;
            break;
        }
        /* fold what completed, up the tree */
        while (fold > 0 && ended[fold] && pending[fold] == 0) {
            live--;
            ended[fold] = 2; /* folded */
            int32_t p = g->nodes[fold].parent;
            pending[p]--;
            fold = p;
        }
        /* no node folds before it is complete; in program order (depth
         * first, children in index order, ends last) each folds at once */
        uint64_t got = ospg_live_nodes(G);
        if (check_live && !live_bad &&
            (got < live || (t->feed == FEED_DFS && got != live))) {
            report(R, "after event %zu %s: live nodes %llu, expected %s%llu",
                   q, ev_name(g, e, buf, sizeof buf), (unsigned long long)got,
                   t->feed == FEED_DFS ? "" : "at least ",
                   (unsigned long long)live);
            live_bad = 1; /* the first difference only */
        }
    }
    if (rc == 0 && check_live && !live_bad && ospg_live_nodes(G) != 1)
        report(R, "live nodes %llu after the last event, expected 1 (the "
               "root)", (unsigned long long)ospg_live_nodes(G));
    if (rc == 0) {
        int err = ospg_finish(G, g->nodes[0].nkids, prof);
        if (err != OSPG_OK) {
            report(R, "ospg_finish: %s", ospg_strerror(err));
            rc = -1;
        } else {
            /* one summary failure at the end, not one per seed */
            if (check_live && ospg_live_nodes(G) != 0 &&
                stats.live_after_finish++ == 0) {
                stats.live_after_finish_value = ospg_live_nodes(G);
                stats.live_after_finish_seed = t->seed;
            }
            *peak = ospg_peak_live_nodes(G);
            if (check_live && (*peak < epeak ||
                               (t->feed == FEED_DFS && *peak != epeak)))
                report(R, "peak live nodes %llu, expected %s%llu",
                       (unsigned long long)*peak,
                       t->feed == FEED_DFS ? "" : "at least ",
                       (unsigned long long)epeak);
        }
    }
    stats.run_nodes += ospg_run_nodes(G);
    if (t->nscen == 1)
        stats.runs_one += ospg_run_children(G);
    else
        stats.runs_many += ospg_run_children(G);
    ospg_free(G);
    free(h);
    free(gh);
    free(pending);
    free(ended);
    free(leaf);
    return rc;
}

static const ospg_loc_stat *prof_find(const ospg_profile *p, uint32_t loc)
{
    for (size_t i = 0; i < p->nlocs; i++)
        if (p->locs[i].loc == loc)
            return &p->locs[i];
    return NULL;
}

static void compare(const gg_graph *g, const trial *t, const oracle_profile *o,
                    const ospg_profile *p, uint64_t peak, result *R)
{
    size_t ns = t->nscen;
    if (p->nscen != ns)
        report(R, "nscen %zu, expected %zu", p->nscen, ns);
    if (p->work != o->work)
        report(R, "program work %llu, expected %llu",
               (unsigned long long)p->work, (unsigned long long)o->work);
    if (p->nodes != o->nodes)
        report(R, "nodes %llu, expected %llu (the root and W-nodes included)",
               (unsigned long long)p->nodes, (unsigned long long)o->nodes);
    for (size_t s = 0; s < ns && p->nscen == ns; s++)
        if (p->span[s] != o->span[s])
            report(R, "scenario %zu: program span %llu, expected %llu", s,
                   (unsigned long long)p->span[s],
                   (unsigned long long)o->span[s]);
    for (size_t i = 1; i < p->nlocs; i++)
        if (p->locs[i - 1].loc >= p->locs[i].loc)
            report(R, "locations not sorted: %u before %u",
                   p->locs[i - 1].loc, p->locs[i].loc);
    if (p->nscen != ns)
        return;
    /* every oracle location, exactly */
    for (size_t l = 0; l < o->nlocs; l++) {
        const oracle_loc *ol = &o->locs[l];
        const ospg_loc_stat *pl = prof_find(p, ol->loc);
        if (!pl) {
            int any = ol->instances || ol->work || ol->grains;
            for (size_t s = 0; s < ns; s++)
                any |= ol->span[s] || ol->crit_max[s];
            if (any)
                report(R, "location %u missing (instances %llu work %llu)",
                       ol->loc, (unsigned long long)ol->instances,
                       (unsigned long long)ol->work);
            continue;
        }
        if (pl->tag != ol->tag)
            report(R, "loc %u: tag %d, expected %d", ol->loc, pl->tag,
                   ol->tag);
        if (pl->instances != ol->instances)
            report(R, "loc %u: instances %llu, expected %llu", ol->loc,
                   (unsigned long long)pl->instances,
                   (unsigned long long)ol->instances);
        if (pl->work != ol->work)
            report(R, "loc %u: work %llu, expected %llu", ol->loc,
                   (unsigned long long)pl->work,
                   (unsigned long long)ol->work);
        if (ospg_grain_median(pl->grain_hist) != ol->grain_median)
            report(R, "loc %u: median grain %llu, expected %llu", ol->loc,
                   (unsigned long long)ospg_grain_median(pl->grain_hist),
                   (unsigned long long)ol->grain_median);
        if (pl->grains != ol->grains || pl->grain_work != ol->grain_work ||
            pl->grain_max != ol->grain_max || pl->grain_min != ol->grain_min)
            report(R, "loc %u: grains %llu of work %llu (%llu to %llu), "
                   "expected %llu of %llu (%llu to %llu)",
                   ol->loc, (unsigned long long)pl->grains,
                   (unsigned long long)pl->grain_work,
                   (unsigned long long)pl->grain_min,
                   (unsigned long long)pl->grain_max,
                   (unsigned long long)ol->grains,
                   (unsigned long long)ol->grain_work,
                   (unsigned long long)ol->grain_min,
                   (unsigned long long)ol->grain_max);
        for (size_t s = 0; s < ns; s++) {
            if (pl->span[s] != ol->span[s])
                report(R, "loc %u scen %zu: span %llu, expected %llu",
                       ol->loc, s, (unsigned long long)pl->span[s],
                       (unsigned long long)ol->span[s]);
            if (o->crit_unique[s]) {
                stats.compared_crit++;
                if (pl->critical[s] != ol->critical[s])
                    report(R, "loc %u scen %zu: critical %llu, expected %llu",
                           ol->loc, s, (unsigned long long)pl->critical[s],
                           (unsigned long long)ol->critical[s]);
            } else {
                stats.bounded_crit++;
                if (pl->critical[s] < ol->crit_min[s] ||
                    pl->critical[s] > ol->crit_max[s])
                    report(R, "loc %u scen %zu: critical %llu outside "
                           "[%llu, %llu] of the longest paths", ol->loc, s,
                           (unsigned long long)pl->critical[s],
                           (unsigned long long)ol->crit_min[s],
                           (unsigned long long)ol->crit_max[s]);
                else if (check_tie_rule && pl->critical[s] != ol->crit_rule[s])
                    report(R, "tie rule: loc %u scen %zu: critical %llu, the "
                           "model's tie rules pick %llu", ol->loc, s,
                           (unsigned long long)pl->critical[s],
                           (unsigned long long)ol->crit_rule[s]);
            }
        }
    }
    /* no other location with anything in it */
    for (size_t i = 0; i < p->nlocs; i++) {
        const ospg_loc_stat *pl = &p->locs[i];
        if (oracle_find(o, pl->loc))
            continue;
        int any = pl->instances || pl->work;
        for (size_t s = 0; s < ns; s++)
            any |= pl->span[s] || pl->critical[s];
        if (any)
            report(R, "unexpected location %u (instances %llu work %llu)",
                   pl->loc, (unsigned long long)pl->instances,
                   (unsigned long long)pl->work);
    }
    /* the critical values sum to the span (a tag's are its W-nodes' again) */
    for (size_t s = 0; s < ns; s++) {
        uint64_t sum = 0;
        for (size_t i = 0; i < p->nlocs; i++)
            if (!p->locs[i].tag)
                sum += p->locs[i].critical[s];
        if (sum != p->span[s])
            report(R, "scenario %zu: critical values sum to %llu, span %llu",
                   s, (unsigned long long)sum, (unsigned long long)p->span[s]);
    }
    /* memory bound */
    if (!check_live)
        return;
    size_t ninter = 0;
    for (size_t i = 0; i < g->nnodes; i++)
        ninter += g->nodes[i].kind != GG_W;
    if (peak > ninter)
        report(R, "peak live nodes %llu > %zu intermediate nodes",
               (unsigned long long)peak, ninter);
    if (t->feed == FEED_DFS && peak > gg_intermediate_depth(g))
        report(R, "depth-first feed: peak live nodes %llu > depth %zu",
               (unsigned long long)peak, gg_intermediate_depth(g));
    if (peak > stats.peak_max)
        stats.peak_max = peak;
}

static void dump_trial(const gg_graph *g, const trial *t,
                       const oracle_profile *o, const ospg_profile *p)
{
    printf("trial seed=%llu shape=%s size=%zu weights=%d feed=%s nscen=%zu\n",
           (unsigned long long)t->seed, g->shape, g->nnodes, g->weights,
           feed_names[t->feed], t->nscen);
    for (size_t s = 1; s < t->nscen; s++) {
        const ospg_scenario *sc = &t->scen[s];
        printf("scenario %zu: factor %g all_regions %d burden %d barrier %llu "
               "regions", s, sc->factor, sc->all_regions,
               sc->grain_burden != NULL,
               (unsigned long long)sc->barrier_burden);
        for (size_t k = 0; k < sc->nregions; k++)
            printf(" %u", sc->regions[k]);
        printf(" locs");
        for (size_t k = 0; k < sc->nlocs; k++)
            printf(" %u", sc->locs[k]);
        printf("\n");
    }
    gg_dump(g, stdout);
    printf("oracle: work %llu", (unsigned long long)o->work);
    for (size_t s = 0; s < o->nscen; s++)
        printf(" span[%zu] %llu%s", s, (unsigned long long)o->span[s],
               o->crit_unique[s] ? "" : " (tie)");
    printf("\n");
    for (size_t l = 0; l < o->nlocs; l++) {
        const oracle_loc *ol = &o->locs[l];
        const ospg_loc_stat *pl = p ? prof_find(p, ol->loc) : NULL;
        printf("  loc %u: inst %llu work %llu", ol->loc,
               (unsigned long long)ol->instances,
               (unsigned long long)ol->work);
        if (pl)
            printf(" (got %llu %llu)", (unsigned long long)pl->instances,
                   (unsigned long long)pl->work);
        for (size_t s = 0; s < o->nscen; s++) {
            printf(" | s%zu span %llu crit %llu [%llu,%llu]", s,
                   (unsigned long long)ol->span[s],
                   (unsigned long long)ol->critical[s],
                   (unsigned long long)ol->crit_min[s],
                   (unsigned long long)ol->crit_max[s]);
            if (pl && pl->span && pl->critical)
                printf(" (got %llu %llu)", (unsigned long long)pl->span[s],
                       (unsigned long long)pl->critical[s]);
        }
        printf("\n");
    }
    if (p)
        for (size_t s = 0; s < p->nscen; s++)
            printf("got: span[%zu] %llu\n", s, (unsigned long long)p->span[s]);
    printf("node spans (oracle, scenario 0):");
    for (size_t i = 0; i < o->nnodes; i++)
        if (g->nodes[i].kind != GG_W)
            printf(" #%zu=%llu", i,
                   (unsigned long long)o->node_span[i * o->nscen]);
    printf("\n");
}

/* Oracle, order of events, feeding and comparison for one graph; the
 * failures land in R.  The order is drawn from order_seed. */
static void check_graph(const gg_graph *g, const trial *t, uint64_t order_seed,
                        int dump, int count_stats, result *R)
{
    memset(R, 0, sizeof *R);
    oracle_profile o;
    if (oracle_compute(g, t->nscen, t->scen, &o)) {
        report(R, "oracle rejected the graph");
        return;
    }
    if (count_stats) {
        stats.seeds++;
        stats.nodes += g->nnodes;
        stats.shapes[t->gp.shape]++;
        stats.feeds[t->feed]++;
        int tied = 0;
        for (size_t s = 0; s < t->nscen; s++)
            if (!o.crit_unique[s]) {
                stats.tie_scen++;
                tied = 1;
            }
        stats.ties += (unsigned long long)tied;
    }
    sched S;
    sched_init(&S, g);
    evlist ev = {malloc((event_count(g) + 1) * sizeof *ev.e), 0};
    if (!ev.e)
        abort();
    gg_rng r;
    gg_rng_seed(&r, gg_mix(order_seed, 0x6f72646572ull));
    if (t->feed == FEED_DFS || t->feed == FEED_DFS_SHUFFLED)
        order_dfs(&S, &r, t->feed == FEED_DFS_SHUFFLED, &ev);
    else
        order_random(&S, &r, t->feed, &ev);
    if (count_stats)
        stats.events += ev.n;
    if (ev.n != event_count(g))
        report(R, "test bug: %zu events scheduled of %zu", ev.n,
               event_count(g));
    ospg_profile p;
    memset(&p, 0, sizeof p);
    uint64_t peak = 0;
    int fed = R->fail ? -1 : feed(g, t, &ev, &p, &peak, dump, R);
    if (fed == 0)
        compare(g, t, &o, &p, peak, R);
    if (dump)
        dump_trial(g, t, &o, fed == 0 ? &p : NULL);
    if (fed == 0)
        ospg_profile_free(&p);
    free(ev.e);
    sched_free(&S);
    oracle_free(&o);
}

/* Draws the graph and scenarios of a seed (0 on success). */
static int make_trial(uint64_t seed, trial *t, gg_graph *g)
{
    draw_trial(t, seed);
    if (gg_generate(&t->gp, g))
        return -1;
    draw_scenarios(t, g);
    /* ties of the measured profile with improbable-tie weights: redraw */
    for (int k = 0; k < 2 && t->gp.weights != GG_WEIGHTS_SMALL; k++) {
        oracle_profile o;
        if (oracle_compute(g, 1, NULL, &o))
            return -1;
        int unique = o.crit_unique[0];
        oracle_free(&o);
        if (unique)
            break;
        gg_reweight(g, gg_mix(seed, (uint64_t)k + 1), GG_WEIGHTS_LARGE);
        stats.redrawn++;
    }
    return 0;
}

static void print_failure(const result *R)
{
    for (int i = 0; i < R->nmsgs && i < MAX_MSGS; i++)
        printf("    %s\n", R->msgs[i]);
    if (R->nmsgs > MAX_MSGS)
        printf("    ... %d more\n", R->nmsgs - MAX_MSGS);
}

static int run_trial(uint64_t seed, int dump, const char *argv0)
{
    trial t;
    gg_graph g;
    if (make_trial(seed, &t, &g)) {
        printf("FAIL seed %llu: generator or oracle\n",
               (unsigned long long)seed);
        return 1;
    }
    result R;
    check_graph(&g, &t, seed, dump, 1, &R);
    if (R.fail) {
        printf("FAIL seed %llu (shape %s, %zu nodes, feed %s, nscen %zu):\n",
               (unsigned long long)seed, g.shape, g.nnodes,
               feed_names[t.feed], t.nscen);
        print_failure(&R);
        printf("  repro: %s --seed %llu --dump   (smaller: --shrink)\n",
               argv0, (unsigned long long)seed);
    }
    gg_free(&g);
    return R.fail;
}

/* ---- shrinking a failing graph ---- */

/* The kind of a failure: its first message without the numbers. */
static void failure_kind(const result *R, char *out, size_t len)
{
    size_t k = 0;
    const char *m = R->nmsgs ? R->msgs[0] : "";
    for (; *m && k + 1 < len; m++)
        if (!(*m >= '0' && *m <= '9'))
            out[k++] = *m;
    out[k] = 0;
}

/* A copy of g without the subtree of node drop (0: none), without the
 * depend list of node nodeps (-1: none), and with node splice (0: none)
 * replaced by its children.  Rebuilt depth-first in index order, so the
 * copy's children keep their relative order. */
static void graph_without(const gg_graph *g, int32_t drop, int32_t nodeps,
                          int32_t splice, gg_graph *out)
{
    size_t n = g->nnodes;
    int32_t *map = malloc(n * sizeof *map);     /* new id, -1 dropped */
    int32_t *gmap = malloc((g->ngroups + 1) * sizeof *gmap);
    struct fr { int32_t node, attach; uint32_t pos; } *st =
        malloc((n + 1) * sizeof *st);
    if (!map || !gmap || !st)
        abort();
    for (size_t i = 0; i < n; i++)
        map[i] = -1;
    gg_init(out);
    out->shape = g->shape;
    out->weights = g->weights;
    map[0] = 0;
    size_t sp = 0;
    st[sp++] = (struct fr){0, 0, 0};
    while (sp) {
        struct fr *f = &st[sp - 1];
        const gg_node *N = &g->nodes[f->node];
        if (f->pos == N->nkids) {
            sp--;
            continue;
        }
        int32_t c = g->kids[N->kid_off + f->pos++];
        const gg_node *x = &g->nodes[c];
        int32_t attach = f->attach;
        if (c == drop)
            continue;
        if (x->kind == GG_W) {
            map[c] = gg_add_work(out, attach, x->work, x->loc, x->region);
            out->nodes[map[c]].wflags = x->wflags;
            continue;
        }
        if (c == splice) {
            map[c] = attach; /* its groups go to the new parent */
            st[sp++] = (struct fr){c, attach, 0};
            continue;
        }
        map[c] = gg_add_node(out, attach, x->kind, x->begin_loc);
        if (c != nodeps && x->kind == OSPG_P)
            for (uint32_t d = 0; d < x->ndeps; d++)
                gg_add_dep(out, map[c], x->deps[d].addr, x->deps[d].type);
        st[sp++] = (struct fr){c, map[c], 0};
    }
    for (size_t k = 0; k < g->ngroups; k++)
        gmap[k] = map[g->groups[k].owner] < 0
                      ? -1 : gg_add_group(out, map[g->groups[k].owner],
                                          g->groups[k].loc);
    for (size_t i = 1; i < n; i++) {
        const gg_node *x = &g->nodes[i];
        if (map[i] < 0 || x->kind == GG_W || (int32_t)i == splice)
            continue;
        if (x->group >= 0 && gmap[x->group] >= 0)
            gg_join_group(out, map[i], gmap[x->group]);
        gg_set_locs(out, map[i], x->begin_loc, x->end_loc);
    }
    free(map);
    free(gmap);
    free(st);
    if (gg_finalize(out)) {
        fprintf(stderr, "shrink: invalid graph\n");
        abort();
    }
}

/* Removes subtrees and depend lists, and splices intermediate nodes out
 * (their children take their place), while the same kind of failure stays;
 * prints the smallest graph found. */
static int shrink(uint64_t seed)
{
    trial t;
    gg_graph g;
    if (make_trial(seed, &t, &g))
        return 1;
    result R;
    check_graph(&g, &t, seed, 0, 0, &R);
    if (!R.fail) {
        printf("seed %llu does not fail\n", (unsigned long long)seed);
        gg_free(&g);
        return 0;
    }
    char kind[240], k2[240];
    failure_kind(&R, kind, sizeof kind);
    printf("shrinking seed %llu (%zu nodes): %s\n", (unsigned long long)seed,
           g.nnodes, R.msgs[0]);
    int progress = 1;
    while (progress) {
        progress = 0;
        /* 0: drop the subtree, 1: drop the depend list, 2: splice */
        for (int what = 0; what < 3; what++) {
            for (int32_t i = 1; (size_t)i < g.nnodes; i++) {
                if ((what == 1 && g.nodes[i].ndeps == 0) ||
                    (what == 2 && g.nodes[i].kind == GG_W))
                    continue;
                gg_graph h;
                graph_without(&g, what == 0 ? i : 0, what == 1 ? i : -1,
                              what == 2 ? i : 0, &h);
                check_graph(&h, &t, seed, 0, 0, &R);
                failure_kind(&R, k2, sizeof k2);
                if (R.fail && !strcmp(kind, k2)) {
                    gg_free(&g);
                    g = h;
                    progress = 1;
                    if (what != 1)
                        i--; /* another node now has this id */
                } else {
                    gg_free(&h);
                }
            }
        }
    }
    printf("smallest failing graph (%zu nodes), same scenarios and order "
           "policy:\n", g.nnodes);
    check_graph(&g, &t, seed, 1, 0, &R);
    print_failure(&R);
    gg_free(&g);
    return 1;
}

/* ---- a few contract checks of the error paths ---- */


static double region_factor_fixture(void *arg, uint32_t region)
{
    (void)arg;
    return region == 2 ? 4.0 : region == 5 ? INFINITY : 0.0;
}

static int contract_checks(void)
{
    int failed = 0, err = 0;
    /* a child index used twice */
    ospg *G = ospg_new(1, NULL);
    ospg_node *root = ospg_root(G);
    if (ospg_work(G, root, 0, 1, 0, 0, 0) != OSPG_OK ||
        ospg_work(G, root, 0, 1, 0, 0, 0) != OSPG_ERR_INDEX) {
        printf("FAIL contract: a reused child index is not OSPG_ERR_INDEX\n");
        failed++;
    }
    ospg_free(G);
    /* ospg_finish with a live node */
    G = ospg_new(1, NULL);
    root = ospg_root(G);
    ospg_node *x = ospg_begin(G, root, 0, OSPG_P, 1, NULL, NULL, 0, &err);
    ospg_profile p;
    memset(&p, 0, sizeof p);
    if (!x || ospg_finish(G, 1, &p) != OSPG_ERR_STATE) {
        printf("FAIL contract: ospg_finish on a truncated graph is not "
               "OSPG_ERR_STATE\n");
        failed++;
    }
    ospg_free(G);
    /* an index beyond the end count */
    G = ospg_new(1, NULL);
    root = ospg_root(G);
    x = ospg_begin(G, root, 0, OSPG_S, 1, NULL, NULL, 0, &err);
    if (!x || ospg_work(G, x, 3, 1, 1, 0, 0) != OSPG_OK ||
        ospg_end(G, x, 2, OSPG_LOC_NONE) != OSPG_ERR_INDEX) {
        printf("FAIL contract: index 3 of 2 children is not OSPG_ERR_INDEX\n");
        failed++;
    }
    ospg_free(G);
    /* ospg_scaled_work, which the oracle shares, against the header */
    static const uint32_t regs[] = {2, 5}, locs[] = {7};
    const ospg_scenario half = {.factor = 2, .regions = regs, .nregions = 2,
                                .locs = locs, .nlocs = 1};
    const ospg_scenario third = {.factor = 3, .all_regions = 1};
    const ospg_scenario free_ = {.factor = INFINITY, .locs = locs, .nlocs = 1};
    /* per-region factors: region 2 by 4, region 5 free, others by the
     * scenario's own selection (locations 7 by 2) */
    const ospg_scenario own = {.factor = 2, .locs = locs, .nlocs = 1,
                               .region_factor = region_factor_fixture};
    struct { const ospg_scenario *s; uint64_t w; uint32_t loc, region;
             uint64_t want; } sw[] = {
        {&half, 9, 1, 2, 4},    /* region selected: floor(9 / 2) */
        {&half, 9, 1, 5, 4},
        {&half, 9, 1, 3, 9},    /* region not selected */
        {&half, 9, 1, 0, 9},    /* no region */
        {&half, 9, 7, 0, 4},    /* location selected */
        {&third, 10, 1, 4, 3},  /* every region */
        {&third, 10, 1, 0, 10}, /* ... but not outside any */
        {&free_, UINT64_C(1) << 40, 7, 0, 0},
        {&free_, 5, 8, 1, 5},
        {&half, (UINT64_C(1) << 31) + 1, 1, 2, UINT64_C(1) << 30},
        {&own, 9, 1, 2, 2},     /* region's own factor 4 */
        {&own, 9, 7, 5, 0},     /* own factor infinity beats location */
        {&own, 9, 7, 3, 4},     /* no own factor: location by 2 */
        {&own, 9, 1, 3, 9},     /* neither */
        {&own, 9, 1, 0, 9},     /* outside regions: no callback */
    };
    for (size_t i = 0; i < sizeof sw / sizeof sw[0]; i++) {
        uint64_t got = ospg_scaled_work(sw[i].s, sw[i].w, sw[i].loc,
                                        sw[i].region);
        if (got != sw[i].want) {
            printf("FAIL contract: ospg_scaled_work case %zu: %llu, want "
                   "%llu\n", i, (unsigned long long)got,
                   (unsigned long long)sw[i].want);
            failed++;
        }
    }
    return failed;
}

#define NCONTRACT 13 /* checks in contract_checks() */

int main(int argc, char **argv)
{
    uint64_t base = DEFAULT_BASE, one = 0;
    long count = DEFAULT_COUNT;
    int dump = 0, have_one = 0, verbose = 0, do_shrink = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--count") && i + 1 < argc)
            count = strtol(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--base") && i + 1 < argc)
            base = strtoull(argv[++i], NULL, 0);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            one = strtoull(argv[++i], NULL, 0);
            have_one = 1;
        } else if (!strcmp(argv[i], "--dump"))
            dump = 1;
        else if (!strcmp(argv[i], "-v"))
            verbose = 1;
        else if (!strcmp(argv[i], "--shrink"))
            do_shrink = 1;
        else if (!strcmp(argv[i], "--no-live"))
            check_live = 0;
        else if (!strcmp(argv[i], "--no-tie-rule"))
            check_tie_rule = 0;
        else {
            fprintf(stderr, "usage: %s [--count N] [--base B] [--seed S] "
                    "[--dump] [--shrink] [--no-live] [--no-tie-rule] [-v]\n",
                    argv[0]);
            return 2;
        }
    }
    clock_t t0 = clock();
    int passed = 0, failed = 0;
    if (have_one && do_shrink) {
        failed += shrink(one);
    } else if (have_one) {
        if (run_trial(one, dump, argv[0]))
            failed++;
        else
            passed++;
    } else {
        int c = contract_checks();
        failed += c;
        passed += NCONTRACT - c;
        for (long k = 0; k < count; k++) {
            if (run_trial(base + (uint64_t)k, 0, argv[0]))
                failed++;
            else
                passed++;
        }
    }
    if (stats.live_after_finish) {
        printf("FAIL live nodes %llu after ospg_finish, expected 0, in %llu "
               "seeds (first: --seed %llu)\n", stats.live_after_finish_value,
               stats.live_after_finish,
               (unsigned long long)stats.live_after_finish_seed);
        failed++;
    }
    double secs = (double)(clock() - t0) / CLOCKS_PER_SEC;
    printf("seeds %llu, nodes %llu (%llu as leaves, %llu begin-or-end "
           "pairs fused with a W), events %llu, %.1f s; scenarios with "
           "tied critical paths %llu (in %llu seeds; %llu weight redraws); "
           "critical values compared exactly %llu, within bounds %llu; "
           "largest peak live nodes %llu; feeds with fixed locations "
           "%llu; children taken into runs %llu (one scenario), %llu "
           "(several), %llu of them finished nodes\n",
           stats.seeds, stats.nodes, stats.leaves, stats.fused, stats.events,
           secs, stats.tie_scen,
           stats.ties, stats.redrawn, stats.compared_crit, stats.bounded_crit,
           stats.peak_max, stats.fixed, stats.runs_one, stats.runs_many,
           stats.run_nodes);
    /* the mode must not go untested for want of graphs that allow it */
    if (stats.seeds >= 1000 && stats.fixed * 10 < stats.seeds) {
        printf("FAIL only %llu of %llu seeds fed with fixed locations\n",
               stats.fixed, stats.seeds);
        failed++;
    }
    if (stats.seeds >= 1000 && !stats.run_nodes) {
        printf("FAIL no finished node joined a run\n");
        failed++;
    }
    if (stats.seeds >= 1000 && (!stats.runs_one || !stats.runs_many)) {
        printf("FAIL no child joined a run with %s scenario\n",
               stats.runs_one ? "more than one" : "one");
        failed++;
    }
    if (verbose) {
        for (int s = 1; s < GG_NSHAPES; s++)
            printf("  shape %s: %llu\n", gg_shape_name(s), stats.shapes[s]);
        for (int f = 0; f < FEED_NMODES; f++)
            printf("  feed %s: %llu\n", feed_names[f], stats.feeds[f]);
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
