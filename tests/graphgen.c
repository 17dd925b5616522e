/* graphgen.c - deterministic random OSPG graphs as plain arrays, for tests.
 *
 * See graphgen.h.  Everything is drawn from one splitmix64 stream seeded by
 * gg_params.seed, so a seed (with the size, shape and weight knobs it also
 * determines in the test) reproduces a graph exactly, with any compiler: no
 * expression draws twice where C leaves the order of evaluation open.  The realistic shapes
 * are built by a small recursive descent whose depth is bounded (a few
 * dozen levels at most); the fully random trees are built iteratively.
 */
#include "graphgen.h"

#include <stdlib.h>
#include <string.h>

/* ---- PRNG ---- */

void gg_rng_seed(gg_rng *r, uint64_t seed) { r->s = seed; }

uint64_t gg_next(gg_rng *r)
{
    uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

uint64_t gg_below(gg_rng *r, uint64_t n)
{
    if (n <= 1)
        return 0;
    /* rejection sampling: no modulo bias */
    uint64_t lim = UINT64_MAX - UINT64_MAX % n;
    uint64_t x;
    do
        x = gg_next(r);
    while (x >= lim);
    return x % n;
}

uint64_t gg_range(gg_rng *r, uint64_t lo, uint64_t hi)
{
    return lo + gg_below(r, hi - lo + 1);
}

int gg_chance(gg_rng *r, unsigned percent)
{
    return gg_below(r, 100) < percent;
}

uint64_t gg_mix(uint64_t a, uint64_t b)
{
    gg_rng r;
    gg_rng_seed(&r, a ^ (b * 0xd1b54a32d192ed03ull));
    gg_next(&r);
    return gg_next(&r);
}

/* ---- Builder ---- */

static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n);
    if (!q) {
        fprintf(stderr, "graphgen: out of memory\n");
        abort();
    }
    return q;
}

static int32_t new_node(gg_graph *g)
{
    if (g->nnodes == g->capnodes) {
        g->capnodes = g->capnodes ? 2 * g->capnodes : 64;
        g->nodes = xrealloc(g->nodes, g->capnodes * sizeof *g->nodes);
    }
    gg_node *n = &g->nodes[g->nnodes];
    memset(n, 0, sizeof *n);
    n->parent = -1;
    n->group = -1;
    n->loc = n->begin_loc = n->end_loc = OSPG_LOC_NONE;
    return (int32_t)g->nnodes++;
}

void gg_init(gg_graph *g)
{
    memset(g, 0, sizeof *g);
    int32_t r = new_node(g);
    g->nodes[r].kind = OSPG_S;
    g->nodes[r].loc = g->nodes[r].begin_loc = OSPG_LOC_PROGRAM;
    g->shape = "hand";
}

void gg_free(gg_graph *g)
{
    free(g->nodes);
    free(g->kids);
    free(g->groups);
    memset(g, 0, sizeof *g);
}

static int32_t append_child(gg_graph *g, int32_t parent, int kind)
{
    int32_t id = new_node(g);
    gg_node *n = &g->nodes[id];
    n->kind = kind;
    n->parent = parent;
    n->idx = g->nodes[parent].nkids++;
    return id;
}

int32_t gg_add_node(gg_graph *g, int32_t parent, int kind, uint32_t loc)
{
    int32_t id = append_child(g, parent, kind);
    g->nodes[id].loc = g->nodes[id].begin_loc = loc;
    return id;
}

int32_t gg_add_work(gg_graph *g, int32_t parent, uint64_t work, uint32_t loc,
                    uint32_t region)
{
    int32_t id = append_child(g, parent, GG_W);
    g->nodes[id].loc = loc;
    g->nodes[id].work = work;
    g->nodes[id].region = region;
    return id;
}

void gg_add_dep(gg_graph *g, int32_t node, uint64_t addr, uint32_t type)
{
    gg_node *n = &g->nodes[node];
    if (n->ndeps < GG_MAXDEPS) {
        n->deps[n->ndeps].addr = addr;
        n->deps[n->ndeps].type = type;
        n->ndeps++;
    }
}

int32_t gg_add_group(gg_graph *g, int32_t owner, uint32_t loc)
{
    if (g->ngroups == g->capgroups) {
        g->capgroups = g->capgroups ? 2 * g->capgroups : 16;
        g->groups = xrealloc(g->groups, g->capgroups * sizeof *g->groups);
    }
    g->groups[g->ngroups].owner = owner;
    g->groups[g->ngroups].loc = loc;
    return (int32_t)g->ngroups++;
}

void gg_join_group(gg_graph *g, int32_t node, int32_t group)
{
    gg_node *n = &g->nodes[node];
    n->group = group;
    n->loc = n->begin_loc = g->groups[group].loc;
    n->end_loc = OSPG_LOC_NONE;
}

void gg_set_locs(gg_graph *g, int32_t node, uint32_t begin_loc,
                 uint32_t end_loc)
{
    gg_node *n = &g->nodes[node];
    n->begin_loc = begin_loc;
    n->end_loc = end_loc;
    n->loc = end_loc != OSPG_LOC_NONE ? end_loc : begin_loc;
}

int gg_finalize(gg_graph *g)
{
    size_t n = g->nnodes;
    free(g->kids);
    g->kids = xrealloc(NULL, (n ? n : 1) * sizeof *g->kids);
    uint32_t off = 0;
    uint32_t maxloc = 0;
    uint32_t maxreg = 0;
    for (size_t i = 0; i < n; i++) {
        g->nodes[i].kid_off = off;
        off += g->nodes[i].nkids;
        if (g->nodes[i].loc != OSPG_LOC_NONE && g->nodes[i].loc > maxloc)
            maxloc = g->nodes[i].loc;
        if (g->nodes[i].region > maxreg)
            maxreg = g->nodes[i].region;
    }
    for (size_t i = 0; i < g->ngroups; i++)
        if (g->groups[i].loc != OSPG_LOC_NONE && g->groups[i].loc > maxloc)
            maxloc = g->groups[i].loc;
    g->nlocs = maxloc + 1;
    g->nregions = maxreg;
    if (off != n - 1) {
        fprintf(stderr, "graphgen: %u children for %zu nodes\n", off, n);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        g->kids[i] = -1;
    for (size_t i = 1; i < n; i++) {
        const gg_node *c = &g->nodes[i];
        if (c->parent < 0 || (size_t)c->parent >= i) {
            fprintf(stderr, "graphgen: node %zu has parent %d\n", i,
                    c->parent);
            return -1;
        }
        const gg_node *p = &g->nodes[c->parent];
        if (p->kind == GG_W || c->idx >= p->nkids) {
            fprintf(stderr, "graphgen: node %zu: bad parent/index\n", i);
            return -1;
        }
        int32_t *slot = &g->kids[p->kid_off + c->idx];
        if (*slot != -1) {
            fprintf(stderr, "graphgen: node %zu: index reused\n", i);
            return -1;
        }
        *slot = (int32_t)i;
        if (c->kind == GG_W && c->loc == OSPG_LOC_NONE) {
            fprintf(stderr, "graphgen: W-node %zu has no location\n", i);
            return -1;
        }
        if (c->kind != OSPG_P && c->ndeps) {
            fprintf(stderr, "graphgen: non-P node %zu has deps\n", i);
            return -1;
        }
        for (uint32_t a = 0; a < c->ndeps; a++)
            for (uint32_t b = 0; b < a; b++)
                if (c->deps[a].addr == c->deps[b].addr) {
                    fprintf(stderr, "graphgen: node %zu lists an address "
                            "twice\n", i);
                    return -1;
                }
        if (c->group >= 0) {
            if ((size_t)c->group >= g->ngroups || c->kind == GG_W) {
                fprintf(stderr, "graphgen: node %zu: bad group\n", i);
                return -1;
            }
            int32_t owner = g->groups[c->group].owner;
            int32_t a = c->parent;
            while (a >= 0 && a != owner)
                a = g->nodes[a].parent;
            if (a != owner) {
                fprintf(stderr, "graphgen: member %zu not under owner %d\n",
                        i, owner);
                return -1;
            }
        }
    }
    if (g->nodes[0].kind != OSPG_S || g->nodes[0].loc != OSPG_LOC_PROGRAM) {
        fprintf(stderr, "graphgen: bad root\n");
        return -1;
    }
    return 0;
}

unsigned char *gg_leaves(const gg_graph *g)
{
    unsigned char *leaf = calloc(g->nnodes ? g->nnodes : 1, 1);
    if (!leaf)
        return NULL;
    for (size_t i = 1; i < g->nnodes; i++) {
        const gg_node *N = &g->nodes[i];
        leaf[i] = N->kind != GG_W && N->ndeps == 0 && N->nkids <= 1 &&
                  (N->nkids == 0 ||
                   (g->nodes[g->kids[N->kid_off]].kind == GG_W &&
                    g->nodes[g->kids[N->kid_off]].ntags == 0)) &&
                  N->end_loc == OSPG_LOC_NONE;
    }
    for (size_t k = 0; k < g->ngroups; k++)
        if (g->groups[k].owner > 0)
            leaf[g->groups[k].owner] = 0;
    return leaf;
}

int gg_keeps_locs(const gg_graph *g)
{
    for (size_t i = 1; i < g->nnodes; i++) {
        const gg_node *N = &g->nodes[i];
        uint32_t begun = N->begin_loc;
        if (N->kind == GG_W)
            continue;
        if (begun == OSPG_LOC_NONE && N->group >= 0)
            begun = g->groups[N->group].loc;
        if (begun != OSPG_LOC_NONE && N->end_loc != OSPG_LOC_NONE &&
            N->end_loc != begun)
            return 0;
    }
    return 1;
}

size_t gg_region_tags(void *arg, uint32_t region, uint32_t *locs, size_t max)
{
    const gg_graph *g = arg;
    size_t n = 0;
    if (!g->region_tags)
        return 0;
    for (uint32_t r = region; r >= 1 && n < max; r /= 2)
        locs[n++] = GG_REGION_LOC(r);
    return n;
}

size_t gg_tag_samples(const gg_node *w, ospg_sample *out)
{
    size_t n = 0;
    for (uint32_t k = 0; k < w->ntags && k < GG_MAXTAGS; k++)
        out[n++] = (ospg_sample){w->tags[k], 0};
    return n;
}

size_t gg_intermediate_depth(const gg_graph *g)
{
    size_t n = g->nnodes, best = 0;
    size_t *d = xrealloc(NULL, (n ? n : 1) * sizeof *d);
    for (size_t i = 0; i < n; i++) {
        if (g->nodes[i].kind == GG_W) {
            d[i] = 0;
            continue;
        }
        d[i] = i == 0 ? 1 : d[g->nodes[i].parent] + 1;
        if (d[i] > best)
            best = d[i];
    }
    free(d);
    return best;
}

/* ---- Dump ---- */

static const char *kind_name(int k)
{
    return k == GG_W ? "W" : k == OSPG_S ? "S" : k == OSPG_P ? "P" : "?";
}

static void put_loc(FILE *f, uint32_t loc)
{
    if (loc == OSPG_LOC_NONE)
        fputs("-", f);
    else
        fprintf(f, "%u", loc);
}

void gg_dump(const gg_graph *g, FILE *f)
{
    static const char *dep_names[] = {"?", "in", "out", "inout",
                                      "mutexinoutset", "inoutset"};
    fprintf(f, "graph shape=%s nodes=%zu groups=%zu\n", g->shape, g->nnodes,
            g->ngroups);
    /* depth-first, in index order, indented by depth */
    size_t n = g->nnodes;
    int32_t *stack = xrealloc(NULL, (n + 1) * sizeof *stack);
    size_t *depth = xrealloc(NULL, (n + 1) * sizeof *depth);
    size_t sp = 0;
    stack[sp++] = 0;
    depth[0] = 0;
    for (size_t i = 1; i < n; i++)
        depth[i] = depth[g->nodes[i].parent] + 1;
    while (sp) {
        int32_t id = stack[--sp];
        const gg_node *x = &g->nodes[id];
        fprintf(f, "%*s#%d %s idx=%u loc=", (int)(2 * depth[id]), "", id,
                kind_name(x->kind), x->idx);
        put_loc(f, x->loc);
        if (x->kind != GG_W && id != 0) {
            fputs(" begin=", f);
            put_loc(f, x->begin_loc);
            fputs(" end=", f);
            put_loc(f, x->end_loc);
        }
        if (x->group >= 0)
            fprintf(f, " group=%d", x->group);
        if (x->kind == GG_W)
            fprintf(f, " work=%llu region=%u%s", (unsigned long long)x->work,
                    x->region, x->wflags ? " cont" : "");
        for (uint32_t k = 0; x->kind == GG_W && k < x->ntags; k++)
            fprintf(f, " tag=%#x", x->tags[k]);
        if (x->ndeps) {
            fputs(" deps=", f);
            for (uint32_t d = 0; d < x->ndeps; d++)
                fprintf(f, "%s%s:%#llx", d ? "," : "",
                        x->deps[d].type <= 5 ? dep_names[x->deps[d].type]
                                             : "?",
                        (unsigned long long)x->deps[d].addr);
        }
        if (x->kind != GG_W)
            fprintf(f, " nkids=%u", x->nkids);
        fputc('\n', f);
        if (g->kids && x->kind != GG_W)
            for (uint32_t k = x->nkids; k-- > 0;)
                stack[sp++] = g->kids[x->kid_off + k];
    }
    for (size_t i = 0; i < g->ngroups; i++) {
        fprintf(f, "group %zu owner=#%d loc=", i, g->groups[i].owner);
        put_loc(f, g->groups[i].loc);
        fputc('\n', f);
    }
    free(stack);
    free(depth);
}

const char *gg_shape_name(int shape)
{
    static const char *names[] = {"any", "parallel", "tasks", "fib", "deps",
                                  "mixed", "random"};
    return shape >= 0 && shape < GG_NSHAPES ? names[shape] : "?";
}

/* ---- Random generation ---- */

typedef struct gen {
    gg_graph *g;
    gg_rng r;
    long budget;        /* nodes still wanted */
    int weights;
    uint32_t nextloc;   /* next fresh location */
    uint32_t nregions;
    unsigned allow;     /* constructs allowed (bit per C_*) */
    uint32_t recent_loop_loc; /* for loops nested in their own recursion */
    int maxdepth;
} gen;

enum {
    C_W = 0, C_PAR, C_TASKWAIT, C_TASKGROUP, C_BARETASK, C_FIB, C_DEPS,
    C_REGION, C_NC
};

static uint64_t draw_work(gg_rng *r, int weights)
{
    if (weights == GG_WEIGHTS_MIXED)
        weights = gg_chance(r, 50) ? GG_WEIGHTS_SMALL : GG_WEIGHTS_LARGE;
    if (weights == GG_WEIGHTS_SMALL)
        return gg_below(r, 6);
    return (UINT64_C(1) << 30) + gg_below(r, UINT64_C(1) << 30);
}

static uint32_t fresh_loc(gen *G) { return G->nextloc++; }

/* A location already used (recursion, repeated constructs), or a fresh one. */
static uint32_t some_loc(gen *G, unsigned reuse_percent)
{
    if (G->nextloc > 1 && gg_chance(&G->r, reuse_percent))
        return (uint32_t)gg_range(&G->r, 1, G->nextloc - 1);
    return fresh_loc(G);
}

static int32_t W(gen *G, int32_t parent, uint32_t loc, uint32_t region)
{
    G->budget--;
    return gg_add_work(G->g, parent, draw_work(&G->r, G->weights), loc,
                       region);
}

/* An intermediate node whose location is given at begin, at end, or both. */
static int32_t inode(gen *G, int32_t parent, int kind, uint32_t loc,
                     unsigned at_end_percent)
{
    G->budget--;
    int32_t id = gg_add_node(G->g, parent, kind, loc);
    if (loc == OSPG_LOC_NONE)
        return id;
    unsigned x = (unsigned)gg_below(&G->r, 100);
    if (x < at_end_percent)
        gg_set_locs(G->g, id, OSPG_LOC_NONE, loc);
    else if (x < at_end_percent + (100 - at_end_percent) / 4)
        gg_set_locs(G->g, id, loc, loc);
    return id;
}

static void body(gen *G, int32_t parent, uint32_t ctxloc, uint32_t region,
                 int depth, int items);

static void task_body(gen *G, int32_t task, uint32_t tloc, uint32_t region,
                      int depth)
{
    if (depth < G->maxdepth && G->budget > 0 && gg_chance(&G->r, 40))
        body(G, task, tloc, region, depth + 1, (int)gg_range(&G->r, 1, 3));
    else {
        int k = (int)gg_range(&G->r, 0, 2);
        for (int i = 0; i < k; i++)
            W(G, task, tloc, region);
    }
}

/* Worksharing loop chunks (members of one group) under parent. */
static void chunks(gen *G, int32_t parent, int32_t grp, uint32_t lloop,
                   uint32_t region, int depth, int n)
{
    for (int c = 0; c < n; c++) {
        G->budget--;
        int32_t ch = gg_add_node(G->g, parent, OSPG_P, lloop);
        gg_join_group(G->g, ch, grp);
        if (gg_chance(&G->r, 15))
            gg_set_locs(G->g, ch, OSPG_LOC_NONE, lloop);
        int k = (int)gg_range(&G->r, 1, 2);
        for (int i = 0; i < k; i++) {
            if (depth < G->maxdepth && G->budget > 0 && gg_chance(&G->r, 8))
                body(G, ch, lloop, region, depth + 1, 1); /* tasks, nesting */
            else
                W(G, ch, lloop, region);
        }
    }
}

static void parallel(gen *G, int32_t parent, uint32_t region, int depth)
{
    gg_rng *r = &G->r;
    uint32_t lpar = some_loc(G, 20);
    int32_t par = inode(G, parent, OSPG_S, lpar, 20);
    int nthreads = (int)gg_range(r, 1, G->budget > 200 ? 6 : 3);
    int nphases = (int)gg_range(r, 1, 3);
    uint32_t lloop = G->recent_loop_loc && gg_chance(r, 30)
                         ? G->recent_loop_loc : fresh_loc(G);
    uint32_t lloop2 = fresh_loc(G);
    uint32_t lsec = fresh_loc(G);
    uint32_t lbar = fresh_loc(G);
    for (int ph = 0; ph < nphases; ph++) {
        uint32_t phloc = gg_chance(r, 60) ? OSPG_LOC_NONE : lbar;
        int32_t phase = inode(G, par, OSPG_S, phloc, 30);
        int shape = (int)gg_below(r, 5);
        if (G->budget <= 0)
            shape = 0;
        uint32_t tloc = gg_chance(r, 70) ? OSPG_LOC_NONE : lpar;
        switch (shape) {
        case 0: /* plain: each thread runs some code */
            for (int t = 0; t < nthreads; t++) {
                int32_t th = inode(G, phase, OSPG_P, tloc, 0);
                if (depth < G->maxdepth && G->budget > 0)
                    body(G, th, lpar, region, depth + 1,
                         (int)gg_range(r, 1, 3));
                else
                    W(G, th, lpar, region);
            }
            break;
        case 1: { /* loops whose chunks the threads run (nowait: 1 or 2) */
            int nloops = gg_chance(r, 25) ? 2 : 1;
            int32_t grp[2];
            uint32_t gl[2] = {lloop, gg_chance(r, 50) ? lloop : lloop2};
            for (int l = 0; l < nloops; l++) {
                grp[l] = gg_add_group(G->g, phase, gl[l]);
                G->recent_loop_loc = gl[l];
            }
            for (int t = 0; t < nthreads; t++) {
                int32_t th = inode(G, phase, OSPG_P, tloc, 0);
                if (gg_chance(r, 50))
                    W(G, th, lpar, region);
                for (int l = 0; l < nloops; l++) {
                    chunks(G, th, grp[l], gl[l], region, depth,
                           (int)gg_range(r, 0, 3));
                    if (gg_chance(r, 40))
                        W(G, th, lpar, region);
                }
                if (depth < G->maxdepth && G->budget > 0 && gg_chance(r, 20))
                    body(G, th, lpar, region, depth + 1, 1);
            }
            break;
        }
        case 2: { /* chunks straight under the phase */
            int32_t grp = gg_add_group(G->g, phase, lloop);
            G->recent_loop_loc = lloop;
            if (gg_chance(r, 30))
                W(G, phase, lpar, region);
            int n = (int)gg_range(r, 1, G->budget > 100 ? 12 : 4);
            if (G->budget > 400 && gg_chance(r, 30)) /* a wide loop */
                n = (int)gg_range(r, 20, 120);
            chunks(G, phase, grp, lloop, region, depth, n);
            break;
        }
        case 3: { /* sections, one group */
            int32_t grp = gg_add_group(G->g, phase, lsec);
            int n = (int)gg_range(r, 1, 4);
            int32_t th = gg_chance(r, 50) ? inode(G, phase, OSPG_P, tloc, 0)
                                          : phase;
            for (int s = 0; s < n; s++) {
                G->budget--;
                int32_t sec = gg_add_node(G->g, th, OSPG_P, lsec);
                gg_join_group(G->g, sec, grp);
                task_body(G, sec, lsec, region, depth);
            }
            break;
        }
        default: /* single: one thread makes tasks, the others wait */
            for (int t = 0; t < nthreads; t++) {
                int32_t th = inode(G, phase, OSPG_P, tloc, 0);
                if (t == 0 && depth < G->maxdepth) {
                    uint32_t lsingle = fresh_loc(G);
                    int32_t s1 = inode(G, th, OSPG_P, lsingle, 0);
                    body(G, s1, lsingle, region, depth + 1,
                         (int)gg_range(r, 1, 3));
                } else if (gg_chance(r, 50)) {
                    W(G, th, lpar, region);
                }
            }
            break;
        }
    }
}

/* A taskwait scope (location known at end) or a taskgroup. */
static void taskscope(gen *G, int32_t parent, uint32_t ctxloc, uint32_t region,
                      int depth, int taskgroup)
{
    gg_rng *r = &G->r;
    uint32_t sloc = some_loc(G, 15);
    int32_t sc = inode(G, parent, OSPG_S, sloc, taskgroup ? 10 : 80);
    uint32_t tl1 = some_loc(G, 25), tl2 = some_loc(G, 25);
    int n = (int)gg_range(r, 1, 5);
    for (int i = 0; i < n; i++) {
        if (gg_chance(r, 60))
            W(G, sc, ctxloc, region);
        uint32_t tl = gg_chance(r, 70) ? tl1 : tl2;
        int32_t t = inode(G, sc, OSPG_P, tl, 5);
        task_body(G, t, tl, region, depth);
    }
    if (gg_chance(r, 50))
        W(G, sc, ctxloc, region);
}

/* Tasks created with no taskwait: they join at the end of the parent. */
static void baretasks(gen *G, int32_t parent, uint32_t region, int depth)
{
    gg_rng *r = &G->r;
    uint32_t tl = some_loc(G, 30);
    int n = (int)gg_range(r, 1, 3);
    for (int i = 0; i < n; i++) {
        int32_t t = inode(G, parent, OSPG_P, tl, 0);
        if (gg_chance(r, 20)) {
            /* one draw per statement: argument order is unspecified */
            uint64_t addr = 0x1000 + 8 * gg_below(r, 2);
            gg_add_dep(G->g, t, addr, (uint32_t)gg_range(r, 1, 5));
        }
        task_body(G, t, tl, region, depth);
    }
}

/* fib(n): task { taskwait scope { W, task fib(n-1), W, task fib(n-2), W } W }
 * Every task reuses one location, every scope another: recursion. */
typedef struct fibctx {
    uint32_t ltask, ltw, region;
    int inline_second; /* second call runs inline sometimes */
} fibctx;

static void fib_body(gen *G, int32_t node, int n, const fibctx *fc, int depth);

static void fib_task(gen *G, int32_t parent, int n, const fibctx *fc,
                     int depth)
{
    int32_t t = inode(G, parent, OSPG_P, fc->ltask, 5);
    fib_body(G, t, n, fc, depth + 1);
}

static void fib_body(gen *G, int32_t node, int n, const fibctx *fc, int depth)
{
    gg_rng *r = &G->r;
    if (n < 2 || depth > 40) {
        W(G, node, fc->ltask, fc->region);
        return;
    }
    int32_t sc = inode(G, node, OSPG_S, fc->ltw, 85);
    W(G, sc, fc->ltask, fc->region);
    fib_task(G, sc, n - 1, fc, depth);
    if (gg_chance(r, 50))
        W(G, sc, fc->ltask, fc->region);
    if (fc->inline_second && gg_chance(r, 30))
        fib_body(G, sc, n - 2, fc, depth + 1);
    else
        fib_task(G, sc, n - 2, fc, depth);
    if (gg_chance(r, 50))
        W(G, sc, fc->ltask, fc->region);
    W(G, node, fc->ltask, fc->region);
}

static void fib(gen *G, int32_t parent, uint32_t ctxloc, uint32_t region,
                int depth)
{
    /* T(n): nodes of fib_task(n), about 1 + 5 + T(n-1) + T(n-2) */
    long t[32];
    t[0] = t[1] = 2;
    int n = 1;
    for (int i = 2; i < 32; i++) {
        t[i] = 6 + t[i - 1] + t[i - 2];
        if (t[i] <= G->budget)
            n = i;
    }
    if (n > 2)
        n = (int)gg_range(&G->r, n > 4 ? n - 2 : 2, n);
    fibctx fc = {
        .ltask = some_loc(G, 10),
        .ltw = fresh_loc(G),
        .region = region,
        .inline_second = gg_chance(&G->r, 50),
    };
    if (gg_chance(&G->r, 50)) { /* the outermost call inside a scope */
        int32_t sc = inode(G, parent, OSPG_S, fc.ltw, 85);
        W(G, sc, ctxloc, region);
        fib_task(G, sc, n, &fc, depth);
    } else {
        fib_task(G, parent, n, &fc, depth);
    }
}

/* A scope of sibling tasks with depend clauses on a few addresses. */
static void deps_scope(gen *G, int32_t parent, uint32_t ctxloc,
                       uint32_t region, int depth)
{
    gg_rng *r = &G->r;
    int taskgroup = gg_chance(r, 30);
    int32_t sc = inode(G, parent, OSPG_S, some_loc(G, 10),
                       taskgroup ? 10 : 80);
    uint32_t tl = some_loc(G, 20);
    uint64_t base = 0x10000 + 0x100 * gg_below(r, 4);
    uint64_t A = base, B = base + 8, C = base + 16, D = base + 24;
    int pattern = (int)gg_below(r, 7);
    struct { int n; uint64_t a[3]; uint32_t t[3]; } plan[32];
    int np = 0;
#define T0() (plan[np].n = 0, np++)
#define T1(a0, t0)                                                            \
    (plan[np].n = 1, plan[np].a[0] = (a0), plan[np].t[0] = (t0), np++)
#define T2(a0, t0, a1, t1)                                                    \
    (plan[np].n = 2, plan[np].a[0] = (a0), plan[np].t[0] = (t0),              \
     plan[np].a[1] = (a1), plan[np].t[1] = (t1), np++)
    switch (pattern) {
    case 0: { /* chain */
        int n = (int)gg_range(r, 2, 8);
        uint32_t ty = gg_chance(r, 50) ? OSPG_DEP_INOUT
                                       : (uint32_t)gg_range(r, 2, 4);
        for (int i = 0; i < n; i++)
            T1(A, ty);
        break;
    }
    case 1: /* diamond */
        T1(A, OSPG_DEP_OUT);
        T2(A, OSPG_DEP_IN, B, OSPG_DEP_OUT);
        T2(A, OSPG_DEP_IN, C, OSPG_DEP_OUT);
        T2(B, OSPG_DEP_IN, C, OSPG_DEP_IN);
        break;
    case 2: { /* fan out and in */
        T1(A, OSPG_DEP_OUT);
        int n = (int)gg_range(r, 1, 6);
        for (int i = 0; i < n; i++)
            T1(A, OSPG_DEP_IN);
        T1(A, gg_chance(r, 50) ? OSPG_DEP_INOUT : OSPG_DEP_OUT);
        if (gg_chance(r, 50))
            T1(A, OSPG_DEP_IN);
        break;
    }
    case 3: { /* inoutset sets between in runs */
        int n = (int)gg_range(r, 3, 10);
        for (int i = 0; i < n; i++) {
            uint32_t ty = gg_chance(r, 50) ? OSPG_DEP_INOUTSET
                                           : gg_chance(r, 60) ? OSPG_DEP_IN
                                                              : OSPG_DEP_OUT;
            T1(A, ty);
        }
        break;
    }
    case 4: { /* mutexinoutset among others */
        int n = (int)gg_range(r, 2, 8);
        for (int i = 0; i < n; i++)
            T1(gg_chance(r, 70) ? A : B,
               gg_chance(r, 60) ? OSPG_DEP_MUTEXINOUTSET
                                : (uint32_t)gg_range(r, 1, 5));
        break;
    }
    case 5: { /* independent siblings between dependent ones */
        int n = (int)gg_range(r, 3, 8);
        for (int i = 0; i < n; i++) {
            if (gg_chance(r, 40))
                T0();
            else
                T1(A, gg_chance(r, 50) ? OSPG_DEP_INOUT : OSPG_DEP_IN);
        }
        break;
    }
    default: { /* random mix on up to four addresses */
        int n = (int)gg_range(r, 2, G->budget > 200 && gg_chance(r, 30) ? 24
                                                                         : 12);
        uint64_t addrs[4] = {A, B, C, D};
        for (int i = 0; i < n; i++) {
            int k = gg_chance(r, 20) ? 0 : (int)gg_range(r, 1, 3);
            plan[np].n = k;
            uint64_t first = gg_below(r, 4);
            for (int j = 0; j < k; j++) {
                plan[np].a[j] = addrs[(first + (uint64_t)j) % 4];
                plan[np].t[j] = (uint32_t)gg_range(r, 1, 5);
            }
            np++;
        }
        break;
    }
    }
#undef T0
#undef T1
#undef T2
    for (int i = 0; i < np; i++) {
        if (gg_chance(r, 35))
            W(G, sc, ctxloc, region);
        int32_t t = inode(G, sc, OSPG_P, tl, 5);
        for (int j = 0; j < plan[i].n; j++)
            gg_add_dep(G->g, t, plan[i].a[j], plan[i].t[j]);
        task_body(G, t, tl, region, depth);
    }
    if (gg_chance(r, 50))
        W(G, sc, ctxloc, region);
}

static void body(gen *G, int32_t parent, uint32_t ctxloc, uint32_t region,
                 int depth, int items)
{
    static const unsigned weight[C_NC] = {
        [C_W] = 30, [C_PAR] = 8, [C_TASKWAIT] = 10, [C_TASKGROUP] = 5,
        [C_BARETASK] = 6, [C_FIB] = 3, [C_DEPS] = 8, [C_REGION] = 4,
    };
    gg_rng *r = &G->r;
    for (int i = 0; i < items; i++) {
        unsigned wt[C_NC], total = 0;
        for (int c = 0; c < C_NC; c++) {
            wt[c] = G->allow & (1u << c) ? weight[c] : 0;
            if (c == C_W && depth == 0)
                wt[c] /= 3; /* the program: mostly constructs */
            total += wt[c];
        }
        unsigned x = (unsigned)gg_below(r, total);
        int c = 0;
        for (; c < C_NC; c++) {
            if (x < wt[c])
                break;
            x -= wt[c];
        }
        if (G->budget <= 0 || depth >= G->maxdepth)
            c = C_W;
        switch (c) {
        case C_PAR:
            parallel(G, parent, region, depth);
            break;
        case C_TASKWAIT:
        case C_TASKGROUP:
            taskscope(G, parent, ctxloc, region, depth, c == C_TASKGROUP);
            break;
        case C_BARETASK:
            baretasks(G, parent, region, depth);
            break;
        case C_FIB:
            fib(G, parent, ctxloc, region, depth);
            break;
        case C_DEPS:
            deps_scope(G, parent, ctxloc, region, depth);
            break;
        case C_REGION:
            region = (uint32_t)gg_below(r, G->nregions + 1);
            W(G, parent, ctxloc, region);
            break;
        default:
            W(G, parent, ctxloc, region);
            break;
        }
    }
}

/* Fully random tree, then random groups and depend lists. */
static void random_tree(gen *G, size_t target)
{
    gg_graph *g = G->g;
    gg_rng *r = &G->r;
    uint32_t K = (uint32_t)gg_range(r, 2, 8);
    G->nextloc = K;
    int32_t recent[8] = {0};
    int nrecent = 1;
    int32_t *inter = xrealloc(NULL, (target + 1) * sizeof *inter);
    size_t ninter = 1;
    inter[0] = 0;
    unsigned pw = (unsigned)gg_range(r, 30, 60); /* W share */
    unsigned ps = (unsigned)gg_range(r, 10, 40); /* S share of the rest */
    for (size_t i = 1; i < target; i++) {
        int32_t parent = gg_chance(r, 70)
                             ? recent[gg_below(r, (uint64_t)nrecent)]
                             : inter[gg_below(r, ninter)];
        if (gg_chance(r, pw)) {
            uint64_t work = draw_work(r, G->weights);
            uint32_t wloc = (uint32_t)gg_below(r, K);
            gg_add_work(g, parent, work, wloc,
                        (uint32_t)gg_below(r, G->nregions + 1));
            continue;
        }
        int kind = gg_chance(r, ps) ? OSPG_S : OSPG_P;
        uint32_t loc = gg_chance(r, 35) ? OSPG_LOC_NONE
                                        : (uint32_t)gg_below(r, K);
        int32_t id = gg_add_node(g, parent, kind, loc);
        if (loc != OSPG_LOC_NONE) {
            unsigned x = (unsigned)gg_below(r, 100);
            if (x < 25)
                gg_set_locs(g, id, OSPG_LOC_NONE, loc);
            else if (x < 40)
                gg_set_locs(g, id, loc, loc);
            else if (x < 50) /* begin with another one, replaced at end */
                gg_set_locs(g, id,
                            (loc + 1 + (uint32_t)gg_below(r, K - 1)) % K, loc);
        }
        if (kind == OSPG_P && gg_chance(r, 35)) {
            int k = (int)gg_range(r, 1, 3);
            uint64_t first = gg_below(r, 3);
            for (int j = 0; j < k; j++)
                gg_add_dep(g, id, 0x2000 + 8 * ((first + (uint64_t)j) % 3),
                           (uint32_t)gg_range(r, 1, 5));
        }
        inter[ninter++] = id;
        if (nrecent < 8)
            recent[nrecent++] = id;
        else
            recent[gg_below(r, 8)] = id;
    }
    /* groups: an owner and some of the P-nodes under it, not nested */
    size_t ngroups = gg_below(r, target / 25 + 2);
    for (size_t k = 0; k < ngroups; k++) {
        int32_t owner = inter[gg_below(r, ninter)];
        int32_t grp = -1;
        for (size_t i = (size_t)owner + 1; i < g->nnodes; i++) {
            gg_node *x = &g->nodes[i];
            if (x->kind != OSPG_P || x->group >= 0 || !gg_chance(r, 50))
                continue;
            /* under owner, and no member of this group above it */
            int32_t a = x->parent;
            int ok = 1;
            while (a > owner) {
                if (g->nodes[a].group == grp && grp >= 0)
                    ok = 0;
                a = g->nodes[a].parent;
            }
            if (a != owner || !ok)
                continue;
            if (grp < 0)
                grp = gg_add_group(g, owner, fresh_loc(G));
            gg_join_group(g, (int32_t)i, grp);
            if (gg_chance(r, 20))
                gg_set_locs(g, (int32_t)i, OSPG_LOC_NONE, g->groups[grp].loc);
        }
        /* sometimes a node between the owner and a member (no member
         * itself) carries the group's location: that member is no longer
         * counted, the others still are */
        if (grp >= 0 && gg_chance(r, 40)) {
            for (size_t i = g->nnodes; i-- > (size_t)owner + 1;) {
                if (g->nodes[i].group != grp || !gg_chance(r, 50))
                    continue;
                int32_t a = g->nodes[i].parent;
                while (a != owner && (g->nodes[a].group >= 0 ||
                                      gg_chance(r, 50)))
                    a = g->nodes[a].parent;
                if (a != owner) {
                    uint32_t l = g->groups[grp].loc;
                    if (gg_chance(r, 50))
                        gg_set_locs(g, a, l, OSPG_LOC_NONE);
                    else
                        gg_set_locs(g, a, OSPG_LOC_NONE, l);
                }
                break;
            }
        }
    }
    free(inter);
}

int gg_generate(const gg_params *p, gg_graph *out)
{
    gen G;
    memset(&G, 0, sizeof G);
    gg_init(out);
    G.g = out;
    gg_rng_seed(&G.r, gg_mix(p->seed, 0x6772617068ull));
    G.weights = p->weights;
    G.nextloc = 1;
    G.nregions = (uint32_t)gg_range(&G.r, 1, 4);
    size_t target = p->target_nodes < 2 ? 2 : p->target_nodes;
    G.budget = (long)target - 1;
    G.maxdepth = 12;
    int shape = p->shape;
    if (shape <= GG_SHAPE_ANY || shape >= GG_NSHAPES)
        shape = (int)gg_range(&G.r, 1, GG_NSHAPES - 1);
    out->shape = gg_shape_name(shape);
    out->weights = p->weights;
    const unsigned ALL = (1u << C_NC) - 1;
    switch (shape) {
    case GG_SHAPE_PARALLEL:
        G.allow = 1u << C_W | 1u << C_PAR | 1u << C_REGION;
        break;
    case GG_SHAPE_TASKS:
        G.allow = 1u << C_W | 1u << C_TASKWAIT | 1u << C_TASKGROUP |
                  1u << C_BARETASK | 1u << C_REGION;
        break;
    case GG_SHAPE_FIB:
        G.allow = 1u << C_W | 1u << C_FIB;
        break;
    case GG_SHAPE_DEPS:
        G.allow = 1u << C_W | 1u << C_DEPS | 1u << C_BARETASK;
        break;
    default:
        G.allow = ALL;
        break;
    }
    if (shape == GG_SHAPE_RANDOM) {
        random_tree(&G, target);
    } else if (shape == GG_SHAPE_FIB) {
        while (G.budget > 0) {
            if (gg_chance(&G.r, 30))
                W(&G, 0, 0, 0);
            fib(&G, 0, 0, (uint32_t)gg_below(&G.r, G.nregions + 1), 0);
        }
    } else {
        /* the program: serial code and constructs until the budget is spent */
        uint32_t region = 0;
        while (G.budget > 0) {
            if (gg_chance(&G.r, 20))
                region = (uint32_t)gg_below(&G.r, G.nregions + 1);
            body(&G, 0, OSPG_LOC_PROGRAM, region, 0, 1);
        }
    }
    /* Some W-nodes continue an instance (a single's body split by a task
     * creation): drawn from a stream of their own, so the shapes above
     * stay what they were for every seed. */
    gg_rng cr;
    gg_rng_seed(&cr, gg_mix(p->seed, 0x636f6e74ull));
    for (size_t i = 0; i < out->nnodes; i++)
        if (out->nodes[i].kind == GG_W && gg_chance(&cr, 20))
            out->nodes[i].wflags = OSPG_W_CONTINUES;
    /* Tags, in half the graphs, and region tags in half: a stream of their
     * own too. */
    gg_rng tr;
    gg_rng_seed(&tr, gg_mix(p->seed, 0x74616773ull));
    if (gg_chance(&tr, 50))
        for (size_t i = 0; i < out->nnodes; i++) {
            gg_node *x = &out->nodes[i];
            if (x->kind != GG_W || !gg_chance(&tr, 30))
                continue;
            x->tags[x->ntags++] = GG_TAG_LOC(gg_below(&tr, 4));
            uint32_t t2 = GG_TAG_LOC(gg_below(&tr, 4));
            if (gg_chance(&tr, 20) && t2 != x->tags[0])
                x->tags[x->ntags++] = t2;
        }
    out->region_tags = gg_chance(&tr, 50);
    return gg_finalize(out);
}

void gg_reweight(gg_graph *g, uint64_t seed, int weights)
{
    gg_rng r;
    gg_rng_seed(&r, gg_mix(seed, 0x7765696768ull));
    for (size_t i = 0; i < g->nnodes; i++)
        if (g->nodes[i].kind == GG_W)
            g->nodes[i].work = draw_work(&r, weights);
    g->weights = weights;
}
