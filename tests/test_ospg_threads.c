/* test_ospg_threads.c - the builder fed by several threads at once.
 *
 * For many seeds: draw a graph (graphgen.c), feed it to a builder in one
 * thread, then to a concurrent builder (ospg_set_concurrent) from THREADS
 * threads at once, and compare the two profiles exactly: program work,
 * nodes, span and every location's instances, work, span and critical
 * values, in every scenario.  The single-threaded builder is itself checked
 * against a brute-force oracle by test_ospg_random, so equality here proves
 * the concurrent one.
 *
 * The events come in a shuffled depth-first order (a node's begin, the
 * groups it owns, its children in a random order, its end at a random point
 * among them) and are dealt to the threads: a whole subtree usually to one
 * thread, as a task runs on one, sometimes a single event to any.  Each
 * thread takes its events in that order and waits, spinning, until what an
 * event names exists: the parent's begin, the group, the node to end (and
 * the groups that node owns).  The
 * events of the earliest waiting thread never wait on a later one, so the
 * feeding always progresses, while threads meet on shared parents (barrier
 * phases, task scopes) as they do in a profiled program.
 *
 * Every other seed feeds the nodes whose only child is a W-node (or that
 * have none) through ospg_leaf, as the profiler does for small tasks.
 * Every third lets a thread that holds a node apply no more than one list
 * of others' updates before the others wait for it (ospg_set_combine_max).
 *
 * Built twice: plainly, and under ThreadSanitizer (test_ospg_threads_tsan).
 * Usage: test_ospg_threads [--count N] [--threads T] [--seed S]
 */
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graphgen.h"
#include "ospg.h"

#define DEFAULT_COUNT 300
#define DEFAULT_THREADS 4
#define MAX_THREADS 16

typedef struct feed {
    const gg_graph *g;
    ospg *G;
    size_t nscen;
    /* events: 2i = begin or work of node i, 2i+1 = end of node i, 2n + k =
     * creation of group k */
    size_t *ev;
    size_t nev;
    unsigned *owner;               /* [nev]: the thread that feeds it */
    _Atomic(ospg_node *) *h;       /* [nnodes] */
    _Atomic(ospg_group *) *gh;     /* [ngroups] */
    unsigned char *leaf;           /* [nnodes] fed by ospg_leaf, or NULL */
    int fuse;  /* a W whose parent's end the same thread feeds next: one
                * ospg_work_end */
    atomic_int failed;
    char why[200];
} feed;

typedef struct worker {
    feed *f;
    unsigned id;
} worker;

static void fail_with(feed *f, const char *what, size_t ev, int err)
{
    int expect = 0;
    if (atomic_compare_exchange_strong(&f->failed, &expect, 1))
        snprintf(f->why, sizeof(f->why), "%s (event %zu): %s", what, ev,
                 ospg_strerror(err));
}

static ospg_node *wait_node(feed *f, size_t i)
{
    ospg_node *n;
    unsigned spins = 0;
    while (!(n = atomic_load_explicit(&f->h[i], memory_order_acquire)) &&
           !atomic_load(&f->failed))
        if (++spins % 64 == 0)
            sched_yield();
    return n;
}

static ospg_group *wait_group(feed *f, size_t k)
{
    ospg_group *gr;
    unsigned spins = 0;
    while (!(gr = atomic_load_explicit(&f->gh[k], memory_order_acquire)) &&
           !atomic_load(&f->failed))
        if (++spins % 64 == 0)
            sched_yield();
    return gr;
}

static void *work_events(void *arg)
{
    worker *w = arg;
    feed *f = w->f;
    const gg_graph *g = f->g;
    size_t n = g->nnodes;
    for (size_t q = 0; q < f->nev && !atomic_load(&f->failed); q++) {
        if (f->owner[q] != w->id)
            continue;
        size_t e = f->ev[q];
        int err = OSPG_OK;
        if (f->leaf && (e & 1 ? e < 2 * n && f->leaf[e / 2]
                              : e < 2 * n && g->nodes[e / 2].kind == GG_W &&
                                    f->leaf[g->nodes[e / 2].parent]))
            continue; /* done by the leaf's ospg_leaf */
        if (e >= 2 * n) {
            size_t k = e - 2 * n;
            ospg_node *o = wait_node(f, (size_t)g->groups[k].owner);
            ospg_group *gr = o ? ospg_group_new(f->G, o, g->groups[k].loc)
                               : NULL;
            if (!gr && o)
                fail_with(f, "group_new", q, ospg_error(f->G));
            atomic_store_explicit(&f->gh[k], gr, memory_order_release);
        } else if (e & 1) {
            size_t i = e / 2;
            ospg_node *node = wait_node(f, i);
            /* a group without members must exist before its owner may
             * fold */
            for (size_t k = 0; node && k < g->ngroups; k++)
                if ((size_t)g->groups[k].owner == i && !wait_group(f, k))
                    node = NULL;
            if (node)
                err = ospg_end(f->G, node, g->nodes[i].nkids,
                               g->nodes[i].end_loc);
            if (err)
                fail_with(f, "end", q, err);
        } else {
            size_t i = e / 2;
            const gg_node *N = &g->nodes[i];
            ospg_node *parent = wait_node(f, (size_t)N->parent);
            ospg_group *gr = N->group >= 0 ? wait_group(f, (size_t)N->group)
                                           : NULL;
            if (!parent || (N->group >= 0 && !gr))
                break;
            size_t p = (size_t)N->parent;
            int fuse = N->kind == GG_W && f->fuse && !N->ntags &&
                       q + 1 < f->nev && f->ev[q + 1] == 2 * p + 1 &&
                       f->owner[q + 1] == w->id &&
                       !(f->leaf && f->leaf[p]);
            for (size_t k = 0; fuse && k < g->ngroups; k++)
                if ((size_t)g->groups[k].owner == p)
                    fuse = 0; /* its end waits for its groups */
            if (fuse) {
                err = ospg_work_end(f->G, parent, N->idx, N->work, N->loc,
                                    N->region, N->wflags, g->nodes[p].nkids,
                                    g->nodes[p].end_loc);
                q++;
            } else if (N->kind == GG_W) {
                ospg_sample tags[GG_MAXTAGS];
                size_t nt = gg_tag_samples(N, tags);
                err = ospg_work_sampled(f->G, parent, N->idx, N->work, N->loc,
                                        N->region, N->wflags, tags, nt);
            } else if (f->leaf && f->leaf[i]) {
                ospg_leaf_work lw;
                if (N->nkids) {
                    const gg_node *W = &g->nodes[g->kids[N->kid_off]];
                    lw = (ospg_leaf_work){W->work, W->loc, W->region,
                                          W->wflags};
                }
                err = ospg_leaf(f->G, parent, N->idx, (ospg_kind)N->kind,
                                N->begin_loc, gr, N->nkids ? &lw : NULL);
            } else {
                ospg_node *node = ospg_begin(
                    f->G, parent, N->idx, (ospg_kind)N->kind, N->begin_loc, gr,
                    N->kind == OSPG_P ? N->deps : NULL,
                    N->kind == OSPG_P ? N->ndeps : 0, &err);
                if (node)
                    atomic_store_explicit(&f->h[i], node,
                                          memory_order_release);
                else if (!err)
                    err = OSPG_ERR_STATE;
            }
            if (err)
                fail_with(f, N->kind == GG_W ? "work" : "begin", q, err);
        }
    }
    return NULL;
}

/* The shuffled depth-first order, and who feeds each event. */
static void draw_order(const gg_graph *g, gg_rng *r, unsigned nthreads,
                       feed *f)
{
    size_t n = g->nnodes;
    size_t *gown_n = calloc(n, sizeof(size_t));
    int32_t *perm = malloc(n * sizeof(*perm));
    struct frame { int32_t node; uint32_t pos, endpos; int ended;
                   unsigned thread; } *st = malloc((n + 1) * sizeof(*st));
    if (!gown_n || !perm || !st)
        abort();
    memcpy(perm, g->kids, (n ? n - 1 : 0) * sizeof(*perm));
    f->nev = 0;
#define EMIT(e, t)                                                           \
    do {                                                                     \
        f->ev[f->nev] = (e);                                                 \
        f->owner[f->nev++] = gg_chance(r, 10) ? (unsigned)gg_below(r, nthreads) \
                                              : (t);                         \
    } while (0)
    for (size_t k = 0; k < g->ngroups; k++)
        if (g->groups[k].owner == 0)
            EMIT(2 * n + k, 0u);
    size_t sp = 0;
    st[sp++] = (struct frame){0, 0, g->nodes[0].nkids, 1, 0};
    while (sp) {
        struct frame *fr = &st[sp - 1];
        const gg_node *N = &g->nodes[fr->node];
        if (!fr->ended && fr->pos == fr->endpos) {
            EMIT(2 * (size_t)fr->node + 1, fr->thread);
            fr->ended = 1;
        }
        if (fr->pos == N->nkids) {
            sp--;
            continue;
        }
        int32_t c = perm[N->kid_off + fr->pos++];
        const gg_node *C = &g->nodes[c];
        /* a subtree stays on one thread, or moves (a task run elsewhere) */
        unsigned t = gg_chance(r, 30) ? (unsigned)gg_below(r, nthreads)
                                      : fr->thread;
        EMIT(2 * (size_t)c, t);
        if (C->kind == GG_W)
            continue;
        for (size_t k = 0; k < g->ngroups; k++)
            if (g->groups[k].owner == c)
                EMIT(2 * n + k, t);
        for (uint32_t k = C->nkids; k > 1; k--) {
            uint32_t j = (uint32_t)gg_below(r, k);
            int32_t tmp = perm[C->kid_off + k - 1];
            perm[C->kid_off + k - 1] = perm[C->kid_off + j];
            perm[C->kid_off + j] = tmp;
        }
        uint32_t endpos = (uint32_t)gg_below(r, C->nkids + 1);
        st[sp++] = (struct frame){c, 0, endpos, 0, t};
    }
#undef EMIT
    free(gown_n);
    free(perm);
    free(st);
}

static int same_profile(const ospg_profile *a, const ospg_profile *b,
                        char *why, size_t len)
{
    if (a->work != b->work || a->nodes != b->nodes || a->nlocs != b->nlocs) {
        snprintf(why, len, "work %llu/%llu nodes %llu/%llu locations %zu/%zu",
                 (unsigned long long)a->work, (unsigned long long)b->work,
                 (unsigned long long)a->nodes, (unsigned long long)b->nodes,
                 a->nlocs, b->nlocs);
        return 0;
    }
    for (size_t s = 0; s < a->nscen; s++)
        if (a->span[s] != b->span[s]) {
            snprintf(why, len, "span[%zu] %llu/%llu", s,
                     (unsigned long long)a->span[s],
                     (unsigned long long)b->span[s]);
            return 0;
        }
    for (size_t i = 0; i < a->nlocs; i++) {
        const ospg_loc_stat *x = &a->locs[i], *y = &b->locs[i];
        int same = x->loc == y->loc && x->instances == y->instances &&
                   x->work == y->work && x->grains == y->grains &&
                   x->grain_work == y->grain_work &&
                   x->grain_max == y->grain_max && x->tag == y->tag &&
                   !x->grain_hist == !y->grain_hist;
        for (size_t b = 0; same && x->grain_hist && b < OSPG_HIST_BUCKETS;
             b++)
            same = x->grain_hist[b] == y->grain_hist[b];
        for (size_t s = 0; same && s < a->nscen; s++)
            same = x->span[s] == y->span[s] && x->critical[s] == y->critical[s];
        if (!same) {
            snprintf(why, len, "location %u differs", x->loc);
            return 0;
        }
    }
    return 1;
}

/* A single-threaded feed in the same order: the reference. */
static int feed_serial(const gg_graph *g, const feed *f, size_t nscen,
                       const ospg_scenario *scen, ospg_profile *out)
{
    size_t n = g->nnodes;
    ospg *G = ospg_new(nscen, scen);
    if (G)
        ospg_set_region_tags(G, gg_region_tags, (void *)g);
    ospg_node **h = calloc(n, sizeof(*h));
    ospg_group **gh = calloc(g->ngroups + 1, sizeof(*gh));
    if (!G || !h || !gh)
        abort();
    h[0] = ospg_root(G);
    int err = 0;
    for (size_t q = 0; q < f->nev && !err; q++) {
        size_t e = f->ev[q];
        if (e >= 2 * n) {
            size_t k = e - 2 * n;
            gh[k] = ospg_group_new(G, h[g->groups[k].owner], g->groups[k].loc);
            err = gh[k] ? 0 : ospg_error(G);
        } else if (e & 1) {
            err = ospg_end(G, h[e / 2], g->nodes[e / 2].nkids,
                           g->nodes[e / 2].end_loc);
        } else {
            const gg_node *N = &g->nodes[e / 2];
            ospg_sample tags[GG_MAXTAGS];
            size_t nt = gg_tag_samples(N, tags);
            if (N->kind == GG_W)
                err = ospg_work_sampled(G, h[N->parent], N->idx, N->work,
                                        N->loc, N->region, N->wflags, tags,
                                        nt);
            else
                h[e / 2] = ospg_begin(G, h[N->parent], N->idx,
                                      (ospg_kind)N->kind, N->begin_loc,
                                      N->group >= 0 ? gh[N->group] : NULL,
                                      N->kind == OSPG_P ? N->deps : NULL,
                                      N->kind == OSPG_P ? N->ndeps : 0, &err);
        }
    }
    if (!err)
        err = ospg_finish(G, g->nodes[0].nkids, out);
    ospg_free(G);
    free(h);
    free(gh);
    return err;
}

static uint64_t crowded_holds; /* over all seeds (ospg_crowded_holds) */
/* children taken into runs over all seeds (ospg_run_children), with one
 * scenario and with several */
static uint64_t runs_one, runs_many;
static uint64_t run_nodes; /* of them, finished nodes (ospg_run_nodes) */

static int run_seed(uint64_t seed, unsigned nthreads)
{
    gg_params p = {.seed = seed, .target_nodes = 20 + seed % 1500,
                   .shape = GG_SHAPE_ANY, .weights = GG_WEIGHTS_MIXED};
    gg_graph g;
    if (gg_generate(&p, &g)) {
        fprintf(stderr, "seed %llu: generator failed\n",
                (unsigned long long)seed);
        return 1;
    }
    size_t n = g.nnodes;
    /* the measured profile, everything in regions x2, some locations x inf */
    static const uint32_t locs[] = {1, 2, 3};
    ospg_scenario scen[3];
    memset(scen, 0, sizeof(scen));
    scen[1].factor = 2;
    scen[1].all_regions = 1;
    scen[2].factor = INFINITY;
    scen[2].locs = locs;
    scen[2].nlocs = 3;
    feed f;
    memset(&f, 0, sizeof(f));
    f.g = &g;
    f.ev = malloc((2 * n + g.ngroups + 1) * sizeof(size_t));
    f.owner = malloc((2 * n + g.ngroups + 1) * sizeof(unsigned));
    f.h = calloc(n, sizeof(*f.h));
    f.gh = calloc(g.ngroups + 1, sizeof(*f.gh));
    /* every other seed feeds its leaf-shaped nodes through ospg_leaf */
    f.leaf = seed & 1 ? gg_leaves(&g) : NULL;
    /* and every other pair of seeds fuses a W with its parent's end */
    f.fuse = (int)(seed >> 1 & 1);
    if (!f.ev || !f.owner || !f.h || !f.gh || (seed & 1 && !f.leaf))
        abort();
    gg_rng r;
    gg_rng_seed(&r, seed ^ 0x7417ead5ull);
    draw_order(&g, &r, nthreads, &f);

    ospg_profile want, got;
    memset(&got, 0, sizeof(got));
    int rc = 0;
    /* a quarter of the seeds keep one scenario, as the profiler does
     * without what-if factors (where the locations are fixed, early
     * W-children and leaves are summed into runs either way: ospg.c,
     * "Segments") */
    size_t nscen = seed % 4 == 1 ? 1 : 3;
    if (feed_serial(&g, &f, nscen, scen, &want)) {
        fprintf(stderr, "seed %llu: the single-threaded feed failed\n",
                (unsigned long long)seed);
        rc = 1;
        goto out;
    }
    f.G = ospg_new(nscen, scen);
    if (!f.G)
        abort();
    ospg_set_concurrent(f.G);
    /* against the reference, which drops every nested instance at its
     * outermost one: half the seeds whose graph allows it drop them early */
    if (seed >> 2 & 1 && gg_keeps_locs(&g))
        ospg_set_fixed_locations(f.G);
    ospg_set_region_tags(f.G, gg_region_tags, &g);
    /* a third of the seeds make every thread that holds a node and
     * applies another's update stop the others queueing until it lets go */
    if (seed % 3 == 0)
        ospg_set_combine_max(f.G, 0);
    /* early W-children and leaves join runs from the first on (ospg.c,
     * "Segments"; with fixed locations) */
    if (seed >> 3 & 1)
        ospg_set_runs_after(f.G, 0);
    else if (seed >> 4 & 1) /* a run begins with children in a row */
        ospg_set_runs_after(f.G, 1);
    atomic_store(&f.h[0], ospg_root(f.G));
    pthread_t th[MAX_THREADS];
    worker w[MAX_THREADS];
    for (unsigned t = 0; t < nthreads; t++) {
        w[t] = (worker){&f, t};
        if (pthread_create(&th[t], NULL, work_events, &w[t]))
            abort();
    }
    for (unsigned t = 0; t < nthreads; t++)
        pthread_join(th[t], NULL);
    int err = atomic_load(&f.failed) ? -1 : ospg_finish(f.G, g.nodes[0].nkids,
                                                         &got);
    char why[200] = "";
    if (atomic_load(&f.failed)) {
        fprintf(stderr, "seed %llu (%s, %zu nodes): %s\n",
                (unsigned long long)seed, g.shape, n, f.why);
        rc = 1;
    } else if (err) {
        fprintf(stderr, "seed %llu (%s, %zu nodes): finish: %s\n",
                (unsigned long long)seed, g.shape, n, ospg_strerror(err));
        rc = 1;
    } else if (ospg_live_nodes(f.G) != 0) {
        fprintf(stderr, "seed %llu: %llu nodes live after finish\n",
                (unsigned long long)seed,
                (unsigned long long)ospg_live_nodes(f.G));
        rc = 1;
    } else if (!same_profile(&want, &got, why, sizeof(why))) {
        fprintf(stderr, "seed %llu (%s, %zu nodes): profiles differ: %s\n",
                (unsigned long long)seed, g.shape, n, why);
        rc = 1;
    }
    crowded_holds += ospg_crowded_holds(f.G);
    run_nodes += ospg_run_nodes(f.G);
    if (nscen == 1)
        runs_one += ospg_run_children(f.G);
    else
        runs_many += ospg_run_children(f.G);
    ospg_free(f.G);
    ospg_profile_free(&got);
    ospg_profile_free(&want);
out:
    free(f.ev);
    free(f.owner);
    free(f.h);
    free(f.gh);
    free(f.leaf);
    gg_free(&g);
    return rc;
}

/* Threads that each hold a few nodes open (fewer than the builder's
 * sampling interval of the peak) still count in the peak of live nodes. */
typedef struct peak_job {
    ospg *g;
    uint64_t first_idx;
    int err;
} peak_job;

enum { PEAK_NODES = 10, PEAK_THREADS = 3 };

static void *hold_nodes(void *arg)
{
    peak_job *j = arg;
    for (uint64_t i = 0; i < PEAK_NODES && !j->err; i++)
        if (!ospg_begin(j->g, ospg_root(j->g), j->first_idx + i, OSPG_P, 1,
                        NULL, NULL, 0, &j->err) && !j->err)
            j->err = -1;
    return NULL;
}

static int check_peak_of_few(void)
{
    ospg *g = ospg_new(1, NULL);
    if (!g)
        abort();
    ospg_set_concurrent(g);
    int bad = 0;
    /* one after another, so that the last one's count sees all of them */
    for (unsigned t = 0; t < PEAK_THREADS; t++) {
        peak_job j = {g, (uint64_t)t * PEAK_NODES, 0};
        pthread_t th;
        if (pthread_create(&th, NULL, hold_nodes, &j))
            abort();
        pthread_join(th, NULL);
        bad |= j.err != 0;
    }
    uint64_t want = 1 + PEAK_THREADS * PEAK_NODES; /* the root too */
    uint64_t peak = ospg_peak_live_nodes(g);
    if (bad || peak != want) {
        printf("peak of live nodes %llu, want %llu (threads holding %d "
               "nodes each)\n", (unsigned long long)peak,
               (unsigned long long)want, PEAK_NODES);
        bad = 1;
    }
    ospg_free(g);
    return bad;
}

int main(int argc, char **argv)
{
    unsigned long long count = DEFAULT_COUNT, one = 0;
    unsigned nthreads = DEFAULT_THREADS;
    int single = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--count") && i + 1 < argc)
            count = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
            nthreads = (unsigned)strtoul(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--seed") && i + 1 < argc) {
            one = strtoull(argv[++i], NULL, 0);
            single = 1;
        } else {
            fprintf(stderr, "usage: test_ospg_threads [--count N] "
                            "[--threads T] [--seed S]\n");
            return 2;
        }
    }
    if (nthreads < 1 || nthreads > MAX_THREADS)
        nthreads = DEFAULT_THREADS;
    unsigned long long passed = 0, failed = 0;
    if (!single && check_peak_of_few())
        failed++;
    for (unsigned long long k = 0; k < (single ? 1 : count); k++) {
        uint64_t seed = single ? one : 0x7e5d0000ull + k;
        if (run_seed(seed, nthreads))
            failed++;
        else
            passed++;
    }
    printf("%llu passed, %llu failed (%u threads), %llu crowded holds, "
           "%llu + %llu children taken into runs (one scenario + several; "
           "%llu finished nodes)\n",
           passed, failed, nthreads, (unsigned long long)crowded_holds,
           (unsigned long long)runs_one, (unsigned long long)runs_many,
           (unsigned long long)run_nodes);
    /* the waiting path was taken (a few hundred times in 100 seeds) */
    if (!single && count >= 100 && nthreads > 1 && !crowded_holds) {
        printf("no node was ever crowded: the waiting path went untested\n");
        return 1;
    }
    if (!single && count >= 100 && !run_nodes) {
        printf("no finished node joined a run: that path went untested\n");
        return 1;
    }
    if (!single && count >= 100 && (!runs_one || !runs_many)) {
        printf("no child joined a run with %s scenario: runs went "
               "untested\n", runs_one ? "more than one" : "one");
        return 1;
    }
    return failed ? 1 : 0;
}
