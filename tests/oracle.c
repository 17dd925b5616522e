/* oracle.c - the expected profile of a gg_graph, computed by brute force.
 *
 * See oracle.h.  Steps, each a plain loop (nothing recurses):
 *  1. number the DAG's vertices depth-first in index order: entry(N), the
 *     children's vertices, exit(N); a W-node is one vertex.  Every edge of
 *     the model goes from a lower to a higher number, so this numbering is a
 *     topological order, and the vertices of N's subtree are exactly the
 *     range [entry(N), exit(N)];
 *  2. add the series-parallel edges of docs/model.md and the dependence
 *     edges resolved from the depend lists by the group rule;
 *  3. span(N) in every scenario: longest path from entry(N) over that range;
 *  4. the root's longest paths: one is walked back for the critical values,
 *     and a min/max pass over all of them tells whether they all attribute
 *     the same work to every location; then the path the model's tie rules
 *     pick is found on the tree (rule_path), its spans checked against the
 *     DAG's;
 *  5. instances: a node whose location no proper ancestor carries (a W-node
 *     flagged OSPG_W_CONTINUES adds its work and span but no instance); members
 *     of a group aggregate (work summed, span maxed) into one instance;
 *  6. grains: every P-node with a location counts, nested or not; a W-node's
 *     work goes to its nearest such ancestor;
 *  7. tags: per tag location, the same longest paths with only its W-nodes
 *     weighing, and its W-nodes' work (step 3-4 attributes their critical
 *     work along with their own location's).
 * A grain's burden (ospg_scenario.grain_burden) is the weight of its
 * entry vertex, attributed to the grain's location like a W-node's; a
 * barrier phase's (ospg_scenario.barrier_burden) is its entry vertex's
 * too, attributed to its parallel region's location.
 */
#include "oracle.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NOPATH UINT64_MAX

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "oracle: out of memory\n");
        abort();
    }
    return p;
}

uint64_t oracle_weight(const ospg_scenario *scen, size_t s, const gg_node *w)
{
    if (s == 0)
        return w->work;
    return ospg_scaled_work(&scen[s], w->work, w->loc, w->region);
}

/* A barrier phase's parallel region: the location its parent S-node (not
 * the root) carried when it began, for an S-node of two children or more;
 * else OSPG_LOC_NONE. */
static uint32_t phase_of(const gg_graph *g, const gg_node *N)
{
    if (N->kind != OSPG_S || N->nkids < 2 || N->parent <= 0 ||
        g->nodes[N->parent].kind != OSPG_S)
        return OSPG_LOC_NONE;
    return g->nodes[N->parent].begin_loc;
}

/* The location node N's burden counts for: a grain's own (a P-node with a
 * location), a barrier phase's region; else OSPG_LOC_NONE. */
static uint32_t burden_loc(const gg_graph *g, const gg_node *N)
{
    if (N->kind == OSPG_P)
        return N->loc;
    return phase_of(g, N);
}

/* The burden of node N in scenario s, weighing at its entry vertex: a
 * grain's where the scenario sets one, a barrier phase's barrier. */
static uint64_t burden(const gg_graph *g, const ospg_scenario *scen, size_t s,
                       const gg_node *N)
{
    if (s == 0 || N->kind == GG_W || burden_loc(g, N) == OSPG_LOC_NONE)
        return 0;
    if (N->kind == OSPG_S)
        return scen[s].barrier_burden;
    return scen[s].grain_burden
               ? scen[s].grain_burden(scen[s].grain_burden_arg, N->loc)
               : 0;
}

typedef struct edge {
    size_t u, v;
} edge;

typedef struct edges {
    edge *e;
    size_t n, cap;
} edges;

static void add_edge(edges *E, size_t u, size_t v)
{
    if (E->n == E->cap) {
        E->cap = E->cap ? 2 * E->cap : 256;
        E->e = realloc(E->e, E->cap * sizeof *E->e);
        if (!E->e) {
            fprintf(stderr, "oracle: out of memory\n");
            abort();
        }
    }
    E->e[E->n].u = u;
    E->e[E->n].v = v;
    E->n++;
}

/* One access of a P-child to an address, for dependence resolution. */
typedef struct access {
    uint64_t addr;
    uint32_t pos;   /* the child's index */
    uint32_t type;
    int32_t child;
} access;

static int cmp_access(const void *a, const void *b)
{
    const access *x = a, *y = b;
    if (x->addr != y->addr)
        return x->addr < y->addr ? -1 : 1;
    if (x->pos != y->pos)
        return x->pos < y->pos ? -1 : 1;
    return 0;
}

/* A run of in accesses is one group, a run of inoutset accesses is one
 * group, every other access (out, inout, mutexinoutset) is a group alone. */
static int dep_class(uint32_t type)
{
    if (type == OSPG_DEP_IN)
        return 1;
    if (type == OSPG_DEP_INOUTSET)
        return 2;
    return 0;
}

/* Adds, for node n's P-children, the dependence edges exit(q) -> entry(p)
 * to E, and the pairs (q, p) of node ids to D. */
static void dependence_edges(const gg_graph *g, int32_t n, const size_t *vin,
                             const size_t *vout, edges *E, edges *D)
{
    const gg_node *N = &g->nodes[n];
    size_t na = 0;
    for (uint32_t k = 0; k < N->nkids; k++)
        na += g->nodes[g->kids[N->kid_off + k]].ndeps;
    if (!na)
        return;
    access *acc = xcalloc(na, sizeof *acc);
    size_t i = 0;
    for (uint32_t k = 0; k < N->nkids; k++) {
        int32_t c = g->kids[N->kid_off + k];
        const gg_node *C = &g->nodes[c];
        for (uint32_t d = 0; d < C->ndeps; d++) {
            acc[i].addr = C->deps[d].addr;
            acc[i].pos = C->idx;
            acc[i].type = C->deps[d].type;
            acc[i].child = c;
            i++;
        }
    }
    qsort(acc, na, sizeof *acc, cmp_access);
    int32_t *prev = xcalloc(na, sizeof *prev);
    int32_t *cur = xcalloc(na, sizeof *cur);
    size_t a = 0;
    while (a < na) {
        size_t b = a;
        while (b < na && acc[b].addr == acc[a].addr)
            b++;
        size_t nprev = 0, ncur = 0;
        int cur_class = -1;
        for (size_t j = a; j < b; j++) {
            int cls = dep_class(acc[j].type);
            if (!(ncur && cls != 0 && cls == cur_class)) {
                /* a new group: the current one becomes the previous one */
                memcpy(prev, cur, ncur * sizeof *cur);
                nprev = ncur;
                ncur = 0;
                cur_class = cls;
            }
            cur[ncur++] = acc[j].child;
            for (size_t q = 0; q < nprev; q++) {
                add_edge(E, vout[prev[q]], vin[acc[j].child]);
                add_edge(D, (size_t)prev[q], (size_t)acc[j].child);
            }
        }
        a = b;
    }
    free(prev);
    free(cur);
    free(acc);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

static size_t loc_index(const uint32_t *locs, size_t n, uint32_t loc)
{
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (locs[mid] < loc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The tag locations of W-node w (explicit first, then its region path's
 * when g has region tags), without repeats; explicit[i] tells which. */
static size_t w_tags(const gg_graph *g, const gg_node *w, uint32_t *tags,
                     unsigned char *explicit_tag)
{
    size_t n = 0;
    for (uint32_t k = 0; k < w->ntags; k++) {
        tags[n] = w->tags[k];
        explicit_tag[n++] = 1;
    }
    uint32_t rl[OSPG_MAX_TAGS];
    size_t nr = gg_region_tags((void *)g, w->region, rl, OSPG_MAX_TAGS);
    for (size_t i = 0; i < nr; i++) {
        int dup = 0;
        for (size_t j = 0; j < n; j++)
            dup |= tags[j] == rl[i];
        if (!dup) {
            tags[n] = rl[i];
            explicit_tag[n++] = 0;
        }
    }
    return n;
}

#define W_TAGS_MAX (GG_MAXTAGS + OSPG_MAX_TAGS)

/* Does the W-node of vertex v carry tag location t? */
static int carries(const gg_graph *g, const int32_t *vnode, size_t v,
                   uint32_t t)
{
    if (vnode[v] < 0)
        return 0;
    uint32_t tags[W_TAGS_MAX];
    unsigned char ex[W_TAGS_MAX];
    size_t n = w_tags(g, &g->nodes[vnode[v]], tags, ex);
    for (size_t i = 0; i < n; i++)
        if (tags[i] == t)
            return 1;
    return 0;
}

const oracle_loc *oracle_find(const oracle_profile *p, uint32_t loc)
{
    size_t lo = 0, hi = p->nlocs;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (p->locs[mid].loc < loc)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < p->nlocs && p->locs[lo].loc == loc ? &p->locs[lo] : NULL;
}

/* Longest path from vertex lo to every vertex of [lo, hi] (NOPATH where
 * none), weights w, predecessor lists poff/pred. */
static void longest_from(size_t lo, size_t hi, const uint64_t *w,
                         const size_t *poff, const size_t *pred,
                         uint64_t *dist)
{
    dist[lo] = w[lo];
    for (size_t v = lo + 1; v <= hi; v++) {
        uint64_t best = NOPATH;
        for (size_t e = poff[v]; e < poff[v + 1]; e++) {
            size_t u = pred[e];
            if (u < lo || dist[u] == NOPATH)
                continue;
            if (best == NOPATH || dist[u] > best)
                best = dist[u];
        }
        dist[v] = best == NOPATH ? NOPATH : best + w[v];
    }
}

/* ---- The model's tie rules: which longest path the core reports ---- *
 *
 * Per node, over its children in index order: the serial prefix grows by
 * each W-child's weight and S-child's span; a P-child starts at the prefix
 * unless a dependence predecessor finishes strictly later (the lower index
 * wins among equal predecessors); the node's chain is the serial one unless
 * a P-child's start + span is strictly longer (the lower index wins among
 * P-children).  Lengths are checked against the DAG's spans; the chosen
 * path's W work per location goes to crit_rule. */
typedef struct rule_ctx {
    const gg_graph *g;
    const size_t *dpoff;   /* dependence predecessors per node, */
    const int32_t *dpred;  /* ascending index */
    uint64_t *w;           /* [nnodes] weight of W-nodes in the scenario */
    uint64_t *span, *start;
    int32_t *src, *choice;
    size_t *stack;
} rule_ctx;

static int rule_path(rule_ctx *c, const uint64_t *dag_span, size_t nscen,
                     size_t s, const uint32_t *locs, size_t nl,
                     oracle_loc *out)
{
    const gg_graph *g = c->g;
    size_t n = g->nnodes;
    for (size_t i = n; i-- > 0;) {
        const gg_node *N = &g->nodes[i];
        if (N->kind == GG_W) {
            c->span[i] = c->w[i];
            continue;
        }
        uint64_t prefix = 0;
        for (uint32_t k = 0; k < N->nkids; k++) {
            int32_t ch = g->kids[N->kid_off + k];
            const gg_node *C = &g->nodes[ch];
            if (C->kind != OSPG_P) {
                prefix += c->span[ch];
                continue;
            }
            uint64_t st = prefix;
            int32_t from = -1;
            for (size_t e = c->dpoff[ch]; e < c->dpoff[ch + 1]; e++) {
                int32_t q = c->dpred[e];
                uint64_t f = c->start[q] + c->span[q];
                if (f > st) {
                    st = f;
                    from = q;
                }
            }
            c->start[ch] = st;
            c->src[ch] = from;
        }
        uint64_t best = prefix;
        int32_t choice = -1;
        for (uint32_t k = 0; k < N->nkids; k++) {
            int32_t ch = g->kids[N->kid_off + k];
            if (g->nodes[ch].kind != OSPG_P)
                continue;
            uint64_t v = c->start[ch] + c->span[ch];
            if (v > best) {
                best = v;
                choice = ch;
            }
        }
        best += c->w[i]; /* a grain's burden, before all of it */
        c->span[i] = best;
        c->choice[i] = choice;
        if (best != dag_span[i * nscen + s]) {
            fprintf(stderr, "oracle: node %zu: tree span %llu != DAG span "
                    "%llu\n", i, (unsigned long long)best,
                    (unsigned long long)dag_span[i * nscen + s]);
            return -1;
        }
    }
    /* walk the chosen path: 2x = expand node x, 2x+1 = the start of P x */
    size_t sp = 0;
    c->stack[sp++] = 0;
    while (sp) {
        size_t item = c->stack[--sp];
        size_t x = item / 2;
        const gg_node *X = &g->nodes[x];
        const gg_node *owner;  /* whose serial children to take */
        uint32_t upto;         /* up to this index, exclusive */
        if (!(item & 1)) {
            if (X->kind == GG_W) {
                out[loc_index(locs, nl, X->loc)].crit_rule[s] += c->w[x];
                uint32_t tags[W_TAGS_MAX];
                unsigned char ex[W_TAGS_MAX];
                size_t nt = w_tags(g, X, tags, ex);
                for (size_t t = 0; t < nt; t++)
                    out[loc_index(locs, nl, tags[t])].crit_rule[s] += c->w[x];
                continue;
            }
            if (c->w[x]) /* a grain's or a barrier phase's burden */
                out[loc_index(locs, nl, burden_loc(g, X))].crit_rule[s] +=
                    c->w[x];
            if (c->choice[x] >= 0) {
                c->stack[sp++] = 2 * (size_t)c->choice[x];
                c->stack[sp++] = 2 * (size_t)c->choice[x] + 1;
                continue;
            }
            owner = X;
            upto = X->nkids;
        } else {
            if (c->src[x] >= 0) {
                c->stack[sp++] = 2 * (size_t)c->src[x];
                c->stack[sp++] = 2 * (size_t)c->src[x] + 1;
                continue;
            }
            owner = &g->nodes[X->parent];
            upto = X->idx;
        }
        for (uint32_t k = 0; k < upto; k++) {
            int32_t ch = g->kids[owner->kid_off + k];
            if (g->nodes[ch].kind != OSPG_P)
                c->stack[sp++] = 2 * (size_t)ch;
        }
    }
    return 0;
}

typedef struct loc_own {
    size_t l;     /* location index */
    uint64_t own; /* a grain's own work */
} loc_own;

static int cmp_loc_own(const void *a, const void *b)
{
    const loc_own *x = a, *y = b;
    if (x->l != y->l)
        return x->l < y->l ? -1 : 1;
    return x->own < y->own ? -1 : x->own > y->own;
}

/* Each location's lower median grain: every grain's own work sorted by
 * location, then the ceil(n/2)-th of each run. */
static void grain_medians(const gg_graph *g, const uint64_t *own,
                          const uint32_t *locs, size_t nl, oracle_loc *out)
{
    size_t n = g->nnodes, m = 0;
    loc_own *all = xcalloc(n, sizeof *all);
    for (size_t i = 1; i < n; i++)
        if (g->nodes[i].kind == OSPG_P && g->nodes[i].loc != OSPG_LOC_NONE)
            all[m++] = (loc_own){loc_index(locs, nl, g->nodes[i].loc),
                                 own[i]};
    qsort(all, m, sizeof *all, cmp_loc_own);
    for (size_t a = 0, b; a < m; a = b) {
        for (b = a; b < m && all[b].l == all[a].l; b++)
            ;
        uint64_t median = all[a + (b - a + 1) / 2 - 1].own;
        out[all[a].l].grain_median = ospg_hist_value(ospg_hist_bucket(median));
    }
    free(all);
}

int oracle_compute(const gg_graph *g, size_t nscen, const ospg_scenario *scen,
                   oracle_profile *out)
{
    memset(out, 0, sizeof *out);
    size_t n = g->nnodes;
    if (nscen < 1 || n < 1 || !g->kids) {
        fprintf(stderr, "oracle: empty graph or no scenario\n");
        return -1;
    }

    /* 1. depth-first numbering */
    size_t *vin = xcalloc(n, sizeof *vin);
    size_t *vout = xcalloc(n, sizeof *vout);
    int32_t *stack = xcalloc(n, sizeof *stack);
    uint32_t *next = xcalloc(n, sizeof *next);
    size_t nv = 0, sp = 0;
    stack[sp++] = 0;
    vin[0] = nv++;
    while (sp) {
        int32_t x = stack[sp - 1];
        const gg_node *X = &g->nodes[x];
        if (next[x] < X->nkids) {
            int32_t c = g->kids[X->kid_off + next[x]++];
            if (g->nodes[c].kind == GG_W) {
                vin[c] = vout[c] = nv++;
            } else {
                vin[c] = nv++;
                stack[sp++] = c;
            }
        } else {
            vout[x] = nv++;
            sp--;
        }
    }
    int32_t *vnode = xcalloc(nv, sizeof *vnode); /* W-node of a vertex, -1 */
    for (size_t v = 0; v < nv; v++)
        vnode[v] = -1;
    for (size_t i = 0; i < n; i++)
        if (g->nodes[i].kind == GG_W)
            vnode[vin[i]] = (int32_t)i;
    /* the location a vertex's weight counts for: a W-node's, or a grain's
     * at its entry (its burden) */
    uint32_t *vloc = xcalloc(nv, sizeof *vloc);
    unsigned char *vhas = xcalloc(nv, 1); /* vloc[v] holds one */
    for (size_t i = 0; i < n; i++) {
        uint32_t at = g->nodes[i].kind == GG_W ? g->nodes[i].loc
                                               : burden_loc(g, &g->nodes[i]);
        if (g->nodes[i].kind == GG_W || at != OSPG_LOC_NONE) {
            vloc[vin[i]] = at;
            vhas[vin[i]] = 1;
        }
    }

    /* 2. edges */
    edges E = {0}, D = {0};
    for (size_t i = 0; i < n; i++) {
        const gg_node *N = &g->nodes[i];
        if (N->kind == GG_W)
            continue;
        size_t cursor = vin[i];
        for (uint32_t k = 0; k < N->nkids; k++) {
            int32_t c = g->kids[N->kid_off + k];
            add_edge(&E, cursor, vin[c]);
            if (g->nodes[c].kind == OSPG_P)
                add_edge(&E, vout[c], vout[i]);
            else
                cursor = vout[c];
        }
        add_edge(&E, cursor, vout[i]);
        dependence_edges(g, (int32_t)i, vin, vout, &E, &D);
    }
    size_t *poff = xcalloc(nv + 1, sizeof *poff);
    size_t *pred = xcalloc(E.n, sizeof *pred);
    for (size_t e = 0; e < E.n; e++) {
        if (E.e[e].u >= E.e[e].v) {
            fprintf(stderr, "oracle: edge %zu -> %zu against the order\n",
                    E.e[e].u, E.e[e].v);
            abort();
        }
        poff[E.e[e].v + 1]++;
    }
    for (size_t v = 0; v < nv; v++)
        poff[v + 1] += poff[v];
    {
        size_t *fill = xcalloc(nv, sizeof *fill);
        for (size_t e = 0; e < E.n; e++) {
            size_t v = E.e[e].v;
            pred[poff[v] + fill[v]++] = E.e[e].u;
        }
        free(fill);
    }
    out->nvertices = nv;
    out->nedges = E.n;
    free(E.e);
    /* dependence predecessors per P-node, ascending index, no repeats */
    size_t *dpoff = xcalloc(n + 1, sizeof *dpoff);
    int32_t *dpred = xcalloc(D.n, sizeof *dpred);
    for (size_t e = 0; e < D.n; e++)
        dpoff[D.e[e].v + 1]++;
    for (size_t i = 0; i < n; i++)
        dpoff[i + 1] += dpoff[i];
    {
        size_t *fill = xcalloc(n, sizeof *fill);
        for (size_t e = 0; e < D.n; e++) {
            size_t v = D.e[e].v;
            dpred[dpoff[v] + fill[v]++] = (int32_t)D.e[e].u;
        }
        free(fill);
    }
    for (size_t i = 0; i < n; i++) {
        /* children of one parent: ids ascend with the index */
        int32_t *a = dpred + dpoff[i];
        size_t m = dpoff[i + 1] - dpoff[i];
        for (size_t x = 1; x < m; x++)
            for (size_t y = x; y > 0 && a[y - 1] > a[y]; y--) {
                int32_t tmp = a[y];
                a[y] = a[y - 1];
                a[y - 1] = tmp;
            }
    }
    free(D.e);

    /* locations: every one a node or a group carries */
    uint32_t *locs = xcalloc(n * (1 + W_TAGS_MAX) + g->ngroups, sizeof *locs);
    size_t nl = 0;
    for (size_t i = 0; i < n; i++) {
        if (g->nodes[i].loc != OSPG_LOC_NONE)
            locs[nl++] = g->nodes[i].loc;
        if (g->nodes[i].kind == GG_W) {
            unsigned char ex[W_TAGS_MAX];
            nl += w_tags(g, &g->nodes[i], locs + nl, ex);
        }
    }
    for (size_t i = 0; i < g->ngroups; i++)
        if (g->groups[i].loc != OSPG_LOC_NONE)
            locs[nl++] = g->groups[i].loc;
    qsort(locs, nl, sizeof *locs, cmp_u32);
    {
        size_t u = 0;
        for (size_t i = 0; i < nl; i++)
            if (u == 0 || locs[u - 1] != locs[i])
                locs[u++] = locs[i];
        nl = u;
    }

    out->nscen = nscen;
    out->nodes = n;
    out->nnodes = n;
    out->span = xcalloc(nscen, sizeof *out->span);
    out->crit_unique = xcalloc(nscen, sizeof *out->crit_unique);
    out->nlocs = nl;
    out->locs = xcalloc(nl, sizeof *out->locs);
    for (size_t l = 0; l < nl; l++) {
        oracle_loc *L = &out->locs[l];
        L->loc = locs[l];
        L->span = xcalloc(nscen, sizeof *L->span);
        L->critical = xcalloc(nscen, sizeof *L->critical);
        L->crit_min = xcalloc(nscen, sizeof *L->crit_min);
        L->crit_max = xcalloc(nscen, sizeof *L->crit_max);
        L->crit_rule = xcalloc(nscen, sizeof *L->crit_rule);
    }
    for (size_t i = 0; i < n; i++) {
        if (g->nodes[i].kind != GG_W)
            continue;
        uint32_t tags[W_TAGS_MAX];
        unsigned char ex[W_TAGS_MAX];
        size_t nt = w_tags(g, &g->nodes[i], tags, ex);
        for (size_t t = 0; t < nt; t++)
            out->locs[loc_index(locs, nl, tags[t])].tag = 1;
    }
    uint64_t *wt = xcalloc(nv, sizeof *wt); /* 7: a tag's weights */
    out->node_work = xcalloc(n, sizeof *out->node_work);
    out->node_span = xcalloc(n * nscen, sizeof *out->node_span);
    out->counted = xcalloc(n, sizeof *out->counted);

    /* work: children have higher ids than their parents */
    for (size_t i = n; i-- > 0;) {
        if (g->nodes[i].kind == GG_W)
            out->node_work[i] = g->nodes[i].work;
        if (i > 0)
            out->node_work[g->nodes[i].parent] += out->node_work[i];
    }
    out->work = out->node_work[0];

    /* 3. spans; 4. the root's critical path */
    uint64_t *w = xcalloc(nv, sizeof *w);
    uint64_t *fwd = xcalloc(nv, sizeof *fwd);
    uint64_t *bwd = xcalloc(nv, sizeof *bwd);
    uint64_t *mn = xcalloc(nv, sizeof *mn);
    uint64_t *mx = xcalloc(nv, sizeof *mx);
    unsigned char *onpath = xcalloc(nv, 1);
    unsigned char *locseen = xcalloc(nl, 1);
    rule_ctx rule = {
        .g = g, .dpoff = dpoff, .dpred = dpred,
        .w = xcalloc(n, sizeof(uint64_t)),
        .span = xcalloc(n, sizeof(uint64_t)),
        .start = xcalloc(n, sizeof(uint64_t)),
        .src = xcalloc(n, sizeof(int32_t)),
        .choice = xcalloc(n, sizeof(int32_t)),
        .stack = xcalloc(2 * n + 2, sizeof(size_t)),
    };
    int rc = 0;
    for (size_t s = 0; s < nscen && rc == 0; s++) {
        for (size_t v = 0; v < nv; v++)
            w[v] = vnode[v] >= 0 ? oracle_weight(scen, s, &g->nodes[vnode[v]])
                                 : 0;
        for (size_t i = 0; i < n; i++)
            if (g->nodes[i].kind != GG_W)
                w[vin[i]] = burden(g, scen, s, &g->nodes[i]);
        for (size_t i = 0; i < n; i++) {
            uint64_t sp_i;
            if (g->nodes[i].kind == GG_W) {
                sp_i = w[vin[i]];
            } else {
                longest_from(vin[i], vout[i], w, poff, pred, fwd);
                sp_i = fwd[vout[i]];
                if (sp_i == NOPATH) {
                    fprintf(stderr, "oracle: node %zu: exit unreachable\n", i);
                    rc = -1;
                    break;
                }
            }
            out->node_span[i * nscen + s] = sp_i;
        }
        if (rc)
            break;
        /* the root last: fwd holds its longest paths from entry(root) */
        longest_from(0, nv - 1, w, poff, pred, fwd);
        uint64_t total = fwd[nv - 1];
        out->span[s] = total;
        /* bwd[v]: longest path from v to exit(root), w[v] included */
        for (size_t v = 0; v < nv; v++)
            bwd[v] = NOPATH;
        bwd[nv - 1] = w[nv - 1];
        for (size_t v = nv; v-- > 0;) {
            if (bwd[v] == NOPATH)
                continue;
            for (size_t e = poff[v]; e < poff[v + 1]; e++) {
                size_t u = pred[e];
                uint64_t c = w[u] + bwd[v];
                if (bwd[u] == NOPATH || c > bwd[u])
                    bwd[u] = c;
            }
        }
        if (bwd[0] != total) {
            fprintf(stderr, "oracle: forward %llu != backward %llu\n",
                    (unsigned long long)total, (unsigned long long)bwd[0]);
            rc = -1;
            break;
        }
        memset(locseen, 0, nl);
        for (size_t v = 0; v < nv; v++) {
            onpath[v] = fwd[v] != NOPATH && bwd[v] != NOPATH &&
                        fwd[v] + bwd[v] - w[v] == total;
            if (onpath[v] && vhas[v] && w[v] > 0)
                locseen[loc_index(locs, nl, vloc[v])] = 1;
            if (onpath[v] && vnode[v] >= 0 && w[v] > 0) {
                uint32_t tags[W_TAGS_MAX];
                unsigned char ex[W_TAGS_MAX];
                size_t nt = w_tags(g, &g->nodes[vnode[v]], tags, ex);
                for (size_t t = 0; t < nt; t++)
                    locseen[loc_index(locs, nl, tags[t])] = 1;
            }
        }
        /* one longest path, walked back from exit(root) */
        for (size_t v = nv - 1; v != 0;) {
            if (vhas[v])
                out->locs[loc_index(locs, nl, vloc[v])].critical[s] += w[v];
            if (vnode[v] >= 0) {
                uint32_t tags[W_TAGS_MAX];
                unsigned char ex[W_TAGS_MAX];
                size_t nt = w_tags(g, &g->nodes[vnode[v]], tags, ex);
                for (size_t t = 0; t < nt; t++)
                    out->locs[loc_index(locs, nl, tags[t])].critical[s] +=
                        w[v];
            }
            size_t e = poff[v];
            for (; e < poff[v + 1]; e++) {
                size_t u = pred[e];
                if (fwd[u] != NOPATH && fwd[u] + w[v] == fwd[v])
                    break;
            }
            if (e == poff[v + 1]) {
                fprintf(stderr, "oracle: critical path walk lost at %zu\n", v);
                rc = -1;
                break;
            }
            v = pred[e];
        }
        if (rc)
            break;
        /* least and most work each location gets over all longest paths:
         * along the edges (u, v) with fwd[u] + bwd[v] == total */
        int unique = 1;
        for (size_t l = 0; l < nl; l++) {
            oracle_loc *L = &out->locs[l];
            if (!locseen[l]) {
                L->crit_min[s] = L->crit_max[s] = 0;
                continue;
            }
            mn[0] = mx[0] = 0;
            for (size_t v = 1; v < nv; v++) {
                if (!onpath[v])
                    continue;
                uint64_t a = NOPATH, b = 0;
                for (size_t e = poff[v]; e < poff[v + 1]; e++) {
                    size_t u = pred[e];
                    if (!onpath[u] || fwd[u] + bwd[v] != total)
                        continue;
                    if (a == NOPATH || mn[u] < a)
                        a = mn[u];
                    if (mx[u] > b)
                        b = mx[u];
                }
                uint64_t c = (vhas[v] && vloc[v] == L->loc) ||
                                     (L->tag && carries(g, vnode, v, L->loc))
                                 ? w[v] : 0;
                mn[v] = a + c;
                mx[v] = b + c;
            }
            L->crit_min[s] = mn[nv - 1];
            L->crit_max[s] = mx[nv - 1];
            if (L->crit_min[s] != L->crit_max[s])
                unique = 0;
        }
        out->crit_unique[s] = unique;
        /* 7. each tag's span: only its W-nodes weigh */
        for (size_t l = 0; l < nl; l++) {
            oracle_loc *L = &out->locs[l];
            if (!L->tag)
                continue;
            for (size_t v = 0; v < nv; v++)
                wt[v] = carries(g, vnode, v, L->loc) ? w[v] : 0;
            longest_from(0, nv - 1, wt, poff, pred, fwd);
            L->span[s] = fwd[nv - 1];
        }
        for (size_t i = 0; i < n; i++)
            rule.w[i] = g->nodes[i].kind == GG_W
                            ? oracle_weight(scen, s, &g->nodes[i])
                            : burden(g, scen, s, &g->nodes[i]);
        if (rule_path(&rule, out->node_span, nscen, s, locs, nl, out->locs))
            rc = -1;
    }
    free(rule.w);
    free(rule.span);
    free(rule.start);
    free(rule.src);
    free(rule.choice);
    free(rule.stack);
    free(dpoff);
    free(dpred);
    free(w);
    free(fwd);
    free(bwd);
    free(mn);
    free(mx);
    free(onpath);
    free(locseen);
    free(wt);

    /* 5. instances */
    uint64_t *gwork = xcalloc(g->ngroups, sizeof *gwork);
    uint64_t *gspan = xcalloc(g->ngroups * nscen, sizeof *gspan);
    uint64_t *gcount = xcalloc(g->ngroups, sizeof *gcount);
    for (size_t i = 0; i < n && rc == 0; i++) {
        const gg_node *X = &g->nodes[i];
        if (X->loc == OSPG_LOC_NONE)
            continue;
        int counted = 1;
        for (int32_t a = X->parent; a >= 0; a = g->nodes[a].parent)
            if (g->nodes[a].loc == X->loc) {
                counted = 0;
                break;
            }
        out->counted[i] = (unsigned char)counted;
        if (!counted)
            continue;
        if (X->group >= 0) {
            size_t k = (size_t)X->group;
            gcount[k]++;
            gwork[k] += out->node_work[i];
            for (size_t s = 0; s < nscen; s++)
                if (out->node_span[i * nscen + s] > gspan[k * nscen + s])
                    gspan[k * nscen + s] = out->node_span[i * nscen + s];
            continue;
        }
        oracle_loc *L = &out->locs[loc_index(locs, nl, X->loc)];
        /* a W-node continuing an instance adds to it, not a new one */
        if (!(X->kind == GG_W && (X->wflags & OSPG_W_CONTINUES)))
            L->instances++;
        L->work += out->node_work[i];
        for (size_t s = 0; s < nscen; s++)
            L->span[s] += out->node_span[i * nscen + s];
    }
    for (size_t k = 0; k < g->ngroups; k++) {
        if (!gcount[k] || g->groups[k].loc == OSPG_LOC_NONE)
            continue;
        oracle_loc *L = &out->locs[loc_index(locs, nl, g->groups[k].loc)];
        L->instances++;
        L->work += gwork[k];
        for (size_t s = 0; s < nscen; s++)
            L->span[s] += gspan[k * nscen + s];
    }
    free(gwork);
    free(gspan);
    free(gcount);

    /* 6. grains: P-nodes with a location, each counted; a W-node's work
     * belongs to its nearest such ancestor */
    uint64_t *own = xcalloc(n, sizeof *own); /* a grain's own work */
    for (size_t i = 1; i < n && rc == 0; i++) {
        const gg_node *X = &g->nodes[i];
        if (X->kind == OSPG_P && X->loc != OSPG_LOC_NONE)
            out->locs[loc_index(locs, nl, X->loc)].grains++;
        if (X->kind != GG_W)
            continue;
        for (int32_t a = X->parent; a > 0; a = g->nodes[a].parent) {
            const gg_node *A = &g->nodes[a];
            if (A->kind == OSPG_P && A->loc != OSPG_LOC_NONE) {
                out->locs[loc_index(locs, nl, A->loc)].grain_work += X->work;
                own[a] += X->work;
                break;
            }
        }
    }
    for (size_t i = 1; i < n && rc == 0; i++) {
        const gg_node *X = &g->nodes[i];
        oracle_loc *L = X->kind == OSPG_P && X->loc != OSPG_LOC_NONE
                            ? &out->locs[loc_index(locs, nl, X->loc)]
                            : NULL;
        if (L && own[i] > L->grain_max)
            L->grain_max = own[i];
        if (L && (!L->grain_seen || own[i] < L->grain_min))
            L->grain_min = own[i];
        if (L)
            L->grain_seen = 1;
    }
    grain_medians(g, own, locs, nl, out->locs);
    free(own);

    /* 7. tags: their W-nodes' work; an instance for each explicit one */
    for (size_t i = 0; i < n && rc == 0; i++) {
        const gg_node *X = &g->nodes[i];
        if (X->kind != GG_W)
            continue;
        uint32_t tags[W_TAGS_MAX];
        unsigned char ex[W_TAGS_MAX];
        size_t nt = w_tags(g, X, tags, ex);
        for (size_t t = 0; t < nt; t++) {
            oracle_loc *L = &out->locs[loc_index(locs, nl, tags[t])];
            L->work += X->work;
            L->instances += ex[t];
        }
    }

    free(locs);
    free(vin);
    free(vout);
    free(stack);
    free(next);
    free(vnode);
    free(vloc);
    free(vhas);
    free(poff);
    free(pred);
    if (rc)
        oracle_free(out);
    return rc;
}

void oracle_free(oracle_profile *p)
{
    for (size_t l = 0; l < p->nlocs; l++) {
        free(p->locs[l].span);
        free(p->locs[l].critical);
        free(p->locs[l].crit_min);
        free(p->locs[l].crit_max);
        free(p->locs[l].crit_rule);
    }
    free(p->locs);
    free(p->span);
    free(p->crit_unique);
    free(p->node_work);
    free(p->node_span);
    free(p->counted);
    memset(p, 0, sizeof *p);
}
