/* test_oracle_selfcheck.c - the oracle against profiles computed by hand.
 *
 * Small graphs whose work, span, instances and critical values were worked
 * out on paper from docs/model.md, so that the oracle the random
 * differential test trusts is itself checked.  Each hand number is asserted;
 * the last line is "N passed, N failed" and the exit status is nonzero on a
 * failure.  Built with -DSELFCHECK_OWN_SCALED_WORK it brings its own
 * ospg_scaled_work() (the header's contract) and needs no analyzer/ospg.c.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "graphgen.h"
#include "oracle.h"
#include "ospg.h"

#ifdef SELFCHECK_OWN_SCALED_WORK
static int in_sorted(const uint32_t *a, size_t n, uint32_t x)
{
    for (size_t i = 0; i < n; i++)
        if (a[i] == x)
            return 1;
    return 0;
}

uint64_t ospg_scaled_work(const ospg_scenario *s, uint64_t work, uint32_t loc,
                          uint32_t region)
{
    int sel = (s->all_regions && region != 0) ||
              (region != 0 && in_sorted(s->regions, s->nregions, region)) ||
              in_sorted(s->locs, s->nlocs, loc);
    if (!sel)
        return work;
    if (isinf(s->factor))
        return 0;
    return (uint64_t)floor((double)work / s->factor);
}
#endif

static int passed, failed;
static const char *current;

#define CHECK_EQ(got, want)                                                   \
    do {                                                                      \
        unsigned long long g_ = (unsigned long long)(got);                    \
        unsigned long long w_ = (unsigned long long)(want);                   \
        if (g_ == w_) {                                                       \
            passed++;                                                         \
        } else {                                                              \
            failed++;                                                         \
            printf("FAIL %s:%d [%s] %s = %llu, want %llu\n", __FILE__,        \
                   __LINE__, current, #got, g_, w_);                          \
        }                                                                     \
    } while (0)

static const oracle_loc *L(const oracle_profile *p, uint32_t loc)
{
    const oracle_loc *l = oracle_find(p, loc);
    if (!l) {
        printf("FAIL [%s] location %u missing\n", current, loc);
        failed++;
        static uint64_t zero[4];
        static oracle_loc none = {.span = zero, .critical = zero,
                                  .crit_min = zero, .crit_max = zero,
                                  .crit_rule = zero};
        return &none;
    }
    return l;
}

static void compute(gg_graph *g, size_t nscen, const ospg_scenario *sc,
                    oracle_profile *p)
{
    if (gg_finalize(g) || oracle_compute(g, nscen, sc, p)) {
        printf("FAIL [%s] graph rejected\n", current);
        failed++;
        exit(1);
    }
}

/* root { W3 (loc 0), P (loc 1) { W5 (loc 1) }, W2 (loc 0) }
 * entry -> W3 -> P { W5 } -> exit, and W3 -> W2 -> exit: span 3 + 5 = 8. */
static void serial_then_parallel(void)
{
    current = "serial_then_parallel";
    gg_graph g;
    gg_init(&g);
    gg_add_work(&g, 0, 3, 0, 0);
    int32_t p = gg_add_node(&g, 0, OSPG_P, 1);
    gg_add_work(&g, p, 5, 1, 0);
    gg_add_work(&g, 0, 2, 0, 0);
    oracle_profile o;
    compute(&g, 1, NULL, &o);
    CHECK_EQ(o.work, 10);
    CHECK_EQ(o.span[0], 8);
    CHECK_EQ(o.crit_unique[0], 1);
    CHECK_EQ(L(&o, 0)->instances, 1);
    CHECK_EQ(L(&o, 0)->work, 10);
    CHECK_EQ(L(&o, 0)->span[0], 8);
    CHECK_EQ(L(&o, 0)->critical[0], 3);
    CHECK_EQ(L(&o, 1)->instances, 1); /* P; its W is inside loc 1 already */
    CHECK_EQ(L(&o, 1)->work, 5);
    CHECK_EQ(L(&o, 1)->span[0], 5);
    CHECK_EQ(L(&o, 1)->critical[0], 5);
    CHECK_EQ(o.node_span[p], 5);
    CHECK_EQ(o.nodes, 5);
    oracle_free(&o);
    gg_free(&g);
}

/* root { P1 (1) { W4 (1) }, W1 (0), S (2) { W2 (2) }, P2 (3) { W1 (3) } }
 * paths: P1 = 4; W1 + S + P2 = 1 + 2 + 1 = 4: a tie with different
 * attributions. */
static void tie(void)
{
    current = "tie";
    gg_graph g;
    gg_init(&g);
    int32_t p1 = gg_add_node(&g, 0, OSPG_P, 1);
    gg_add_work(&g, p1, 4, 1, 0);
    gg_add_work(&g, 0, 1, 0, 0);
    int32_t s = gg_add_node(&g, 0, OSPG_S, 2);
    gg_add_work(&g, s, 2, 2, 0);
    int32_t p2 = gg_add_node(&g, 0, OSPG_P, 3);
    gg_add_work(&g, p2, 1, 3, 0);
    oracle_profile o;
    compute(&g, 1, NULL, &o);
    CHECK_EQ(o.span[0], 4);
    CHECK_EQ(o.crit_unique[0], 0);
    CHECK_EQ(L(&o, 1)->crit_min[0], 0);
    CHECK_EQ(L(&o, 1)->crit_max[0], 4);
    CHECK_EQ(L(&o, 2)->crit_min[0], 0);
    CHECK_EQ(L(&o, 2)->crit_max[0], 2);
    CHECK_EQ(L(&o, 0)->crit_max[0], 1);
    uint64_t sum = 0;
    for (size_t i = 0; i < o.nlocs; i++)
        sum += o.locs[i].critical[0];
    CHECK_EQ(sum, 4);
    /* the tie rules: serial 1 + 2 = 3 < 4; P1 = 4 first, P2 = 3 + 1 = 4
     * does not beat it */
    CHECK_EQ(L(&o, 1)->crit_rule[0], 4);
    CHECK_EQ(L(&o, 0)->crit_rule[0], 0);
    CHECK_EQ(L(&o, 2)->crit_rule[0], 0);
    CHECK_EQ(L(&o, 3)->crit_rule[0], 0);
    oracle_free(&o);
    gg_free(&g);
}

/* root { W2 (1), P { W3 (2) }, W3 (3) }: serial 5 ties with the P-child's
 * 2 + 3: the serial chain wins. */
static void tie_serial_wins(void)
{
    current = "tie_serial_wins";
    gg_graph g;
    gg_init(&g);
    gg_add_work(&g, 0, 2, 1, 0);
    int32_t p = gg_add_node(&g, 0, OSPG_P, OSPG_LOC_NONE);
    gg_add_work(&g, p, 3, 2, 0);
    gg_add_work(&g, 0, 3, 3, 0);
    oracle_profile o;
    compute(&g, 1, NULL, &o);
    CHECK_EQ(o.span[0], 5);
    CHECK_EQ(o.crit_unique[0], 0);
    CHECK_EQ(L(&o, 1)->crit_rule[0], 2);
    CHECK_EQ(L(&o, 2)->crit_rule[0], 0);
    CHECK_EQ(L(&o, 3)->crit_rule[0], 3);
    oracle_free(&o);
    gg_free(&g);
}

/* S { a: out A { W5 (1) }, W5 (2), b: in A { W1 (3) } }: b's prefix (5)
 * and a's finish (5) tie: the prefix wins, b ends at 6. */
static void tie_prefix_wins(void)
{
    current = "tie_prefix_wins";
    gg_graph g;
    gg_init(&g);
    int32_t s = gg_add_node(&g, 0, OSPG_S, OSPG_LOC_NONE);
    int32_t a = gg_add_node(&g, s, OSPG_P, OSPG_LOC_NONE);
    gg_add_dep(&g, a, 0xA, OSPG_DEP_OUT);
    gg_add_work(&g, a, 5, 1, 0);
    gg_add_work(&g, s, 5, 2, 0);
    int32_t b = gg_add_node(&g, s, OSPG_P, OSPG_LOC_NONE);
    gg_add_dep(&g, b, 0xA, OSPG_DEP_IN);
    gg_add_work(&g, b, 1, 3, 0);
    oracle_profile o;
    compute(&g, 1, NULL, &o);
    CHECK_EQ(o.span[0], 6);
    CHECK_EQ(o.crit_unique[0], 0);
    CHECK_EQ(L(&o, 1)->crit_rule[0], 0);
    CHECK_EQ(L(&o, 2)->crit_rule[0], 5);
    CHECK_EQ(L(&o, 3)->crit_rule[0], 1);
    oracle_free(&o);
    gg_free(&g);
}

/* A zero-weight W on one of two longest paths does not make a tie. */
static void zero_weight_no_tie(void)
{
    current = "zero_weight_no_tie";
    gg_graph g;
    gg_init(&g);
    int32_t p = gg_add_node(&g, 0, OSPG_P, OSPG_LOC_NONE);
    gg_add_work(&g, p, 4, 1, 0);
    gg_add_work(&g, p, 0, 2, 0);
    int32_t q = gg_add_node(&g, 0, OSPG_P, OSPG_LOC_NONE);
    gg_add_work(&g, q, 4, 1, 0);
    oracle_profile o;
    compute(&g, 1, NULL, &o);
    CHECK_EQ(o.span[0], 4);
    CHECK_EQ(o.crit_unique[0], 1);
    CHECK_EQ(L(&o, 1)->critical[0], 4);
    CHECK_EQ(L(&o, 1)->instances, 2); /* no ancestor carries 1: each W */
    CHECK_EQ(L(&o, 1)->span[0], 8);
    oracle_free(&o);
    gg_free(&g);
}

/* scope S { a: out A {W5}, b: in A {W3}, c: in A {W4}, d: out A {W1},
 *           e: {W7} }: groups {a} {b,c} {d}; span = 5 + 4 + 1 = 10. */
static void deps_in_out(void)
{
    current = "deps_in_out";
    gg_graph g;
    gg_init(&g);
    int32_t s = gg_add_node(&g, 0, OSPG_S, OSPG_LOC_NONE);
    uint64_t wk[5] = {5, 3, 4, 1, 7};
    uint32_t ty[5] = {OSPG_DEP_OUT, OSPG_DEP_IN, OSPG_DEP_IN, OSPG_DEP_OUT, 0};
    for (int i = 0; i < 5; i++) {
        int32_t t = gg_add_node(&g, s, OSPG_P, 1);
        if (ty[i])
            gg_add_dep(&g, t, 0xA0, ty[i]);
        gg_add_work(&g, t, wk[i], 1 + (uint32_t)i, 0);
    }
    oracle_profile o;
    compute(&g, 1, NULL, &o);
    CHECK_EQ(o.span[0], 10);
    CHECK_EQ(o.crit_unique[0], 1);
    CHECK_EQ(L(&o, 1)->instances, 5);
    CHECK_EQ(L(&o, 1)->work, 20);
    CHECK_EQ(L(&o, 1)->span[0], 20);
    CHECK_EQ(L(&o, 1)->critical[0], 5); /* W-nodes: locations 1..5 */
    CHECK_EQ(L(&o, 2)->critical[0], 0);
    CHECK_EQ(L(&o, 3)->critical[0], 4);
    CHECK_EQ(L(&o, 4)->critical[0], 1);
    CHECK_EQ(L(&o, 5)->critical[0], 0);
    CHECK_EQ(o.nedges > 0, 1);
    oracle_free(&o);
    gg_free(&g);
}

/* inoutset {W5}, inoutset {W3}, in {W4}, in {W2}, inoutset {W1}:
 * groups {5,3} {4,2} {1}: span = 5 + 4 + 1 = 10.
 * With mutexinoutset instead everywhere: a chain, 5+3+4+2+1 = 15. */
static void deps_sets(void)
{
    uint64_t wk[5] = {5, 3, 4, 2, 1};
    for (int variant = 0; variant < 3; variant++) {
        current = variant == 0 ? "deps_inoutset" : variant == 1
                                                       ? "deps_mutexinoutset"
                                                       : "deps_two_addrs";
        uint32_t t0[5] = {OSPG_DEP_INOUTSET, OSPG_DEP_INOUTSET, OSPG_DEP_IN,
                          OSPG_DEP_IN, OSPG_DEP_INOUTSET};
        gg_graph g;
        gg_init(&g);
        int32_t s = gg_add_node(&g, 0, OSPG_S, OSPG_LOC_NONE);
        for (int i = 0; i < 5; i++) {
            int32_t t = gg_add_node(&g, s, OSPG_P, OSPG_LOC_NONE);
            if (variant == 2) {
                /* A: out, -, in, -, -; B: -, out, -, in, -; last: none.
                 * 5 -> 4; 3 -> 2; 1 free: span max(9, 5) = 9 */
                if (i == 0)
                    gg_add_dep(&g, t, 0xA, OSPG_DEP_OUT);
                if (i == 2)
                    gg_add_dep(&g, t, 0xA, OSPG_DEP_IN);
                if (i == 1)
                    gg_add_dep(&g, t, 0xB, OSPG_DEP_OUT);
                if (i == 3)
                    gg_add_dep(&g, t, 0xB, OSPG_DEP_IN);
            } else {
                gg_add_dep(&g, t, 0xA,
                           variant == 0 ? t0[i] : OSPG_DEP_MUTEXINOUTSET);
            }
            gg_add_work(&g, t, wk[i], 1, 0);
        }
        oracle_profile o;
        compute(&g, 1, NULL, &o);
        CHECK_EQ(o.span[0], variant == 0 ? 10 : variant == 1 ? 15 : 9);
        oracle_free(&o);
        gg_free(&g);
    }
}

/* A dependence predecessor that finishes after the prefix: the start is the
 * maximum, not the sum.  S { a: out A {W10}, W1, W1, b: in A {W2} }:
 * b starts at max(2, 10) = 10, the span is 12 (not 14). */
static void dep_max_not_sum(void)
{
    current = "dep_max_not_sum";
    gg_graph g;
    gg_init(&g);
    int32_t s = gg_add_node(&g, 0, OSPG_S, 5);
    int32_t a = gg_add_node(&g, s, OSPG_P, 6);
    gg_add_dep(&g, a, 0xA, OSPG_DEP_OUT);
    gg_add_work(&g, a, 10, 6, 0);
    gg_add_work(&g, s, 1, 5, 0);
    gg_add_work(&g, s, 1, 5, 0);
    int32_t b = gg_add_node(&g, s, OSPG_P, 7);
    gg_add_dep(&g, b, 0xA, OSPG_DEP_IN);
    gg_add_work(&g, b, 2, 7, 0);
    oracle_profile o;
    compute(&g, 1, NULL, &o);
    CHECK_EQ(o.span[0], 12);
    CHECK_EQ(o.node_span[s], 12);
    CHECK_EQ(L(&o, 6)->critical[0], 10);
    CHECK_EQ(L(&o, 7)->critical[0], 2);
    CHECK_EQ(L(&o, 5)->critical[0], 0);
    CHECK_EQ(L(&o, 5)->span[0], 12);
    oracle_free(&o);
    gg_free(&g);
}

/* A later serial step becomes critical again:
 * root { W1 (1), P {W5 (2)}, W3 (3), W4 (4) }: P = 1 + 5 = 6;
 * serial = 1 + 3 + 4 = 8.  Critical: 1 -> 1, 3 -> 3, 4 -> 4, 2 -> 0. */
static void serial_wins_back(void)
{
    current = "serial_wins_back";
    gg_graph g;
    gg_init(&g);
    gg_add_work(&g, 0, 1, 1, 0);
    int32_t p = gg_add_node(&g, 0, OSPG_P, OSPG_LOC_NONE);
    gg_add_work(&g, p, 5, 2, 0);
    gg_add_work(&g, 0, 3, 3, 0);
    gg_add_work(&g, 0, 4, 4, 0);
    oracle_profile o;
    compute(&g, 1, NULL, &o);
    CHECK_EQ(o.span[0], 8);
    CHECK_EQ(L(&o, 1)->critical[0], 1);
    CHECK_EQ(L(&o, 2)->critical[0], 0);
    CHECK_EQ(L(&o, 3)->critical[0], 3);
    CHECK_EQ(L(&o, 4)->critical[0], 4);
    oracle_free(&o);
    gg_free(&g);
}

/* parallel (1) { phase { t0 { c (2) {W3}, c (2) {W4} }, t1 { c (2) {W6} } },
 *                phase { c (2) {W2}, c (2) {W2} } }
 * two groups owned by the phases, loc 2 run twice: instances 2, work 17,
 * span max(3,4,6) + max(2,2) = 8 (summed, not maxed).  Program span 6+2. */
static void loops_as_groups(void)
{
    current = "loops_as_groups";
    gg_graph g;
    gg_init(&g);
    int32_t par = gg_add_node(&g, 0, OSPG_S, 1);
    int32_t ph1 = gg_add_node(&g, par, OSPG_S, OSPG_LOC_NONE);
    int32_t g1 = gg_add_group(&g, ph1, 2);
    int32_t t0 = gg_add_node(&g, ph1, OSPG_P, OSPG_LOC_NONE);
    int32_t t1 = gg_add_node(&g, ph1, OSPG_P, OSPG_LOC_NONE);
    uint64_t w1[3] = {3, 4, 6};
    for (int i = 0; i < 3; i++) {
        int32_t c = gg_add_node(&g, i < 2 ? t0 : t1, OSPG_P, 2);
        gg_join_group(&g, c, g1);
        gg_add_work(&g, c, w1[i], 2, 0);
    }
    int32_t ph2 = gg_add_node(&g, par, OSPG_S, OSPG_LOC_NONE);
    int32_t g2 = gg_add_group(&g, ph2, 2);
    for (int i = 0; i < 2; i++) {
        int32_t c = gg_add_node(&g, ph2, OSPG_P, 2);
        gg_join_group(&g, c, g2);
        gg_add_work(&g, c, 2, 2, 0);
    }
    oracle_profile o;
    compute(&g, 1, NULL, &o);
    CHECK_EQ(o.work, 17);
    CHECK_EQ(o.span[0], 8);
    CHECK_EQ(L(&o, 1)->instances, 1);
    CHECK_EQ(L(&o, 1)->span[0], 8);
    CHECK_EQ(L(&o, 2)->instances, 2);
    CHECK_EQ(L(&o, 2)->work, 17);
    CHECK_EQ(L(&o, 2)->span[0], 8);
    CHECK_EQ(L(&o, 2)->critical[0], 8);
    oracle_free(&o);
    gg_free(&g);
}

/* Recursion: task (1) { W2, task (1) { W3 }, W1 }: only the outer task is an
 * instance: work 6, span 2 + max(3, 1) = 5.  And a taskwait scope whose
 * location (3) comes only at its end hides a task (3) below it. */
static void recursion(void)
{
    current = "recursion";
    gg_graph g;
    gg_init(&g);
    int32_t t = gg_add_node(&g, 0, OSPG_P, 1);
    gg_add_work(&g, t, 2, 1, 0);
    int32_t u = gg_add_node(&g, t, OSPG_P, 1);
    gg_add_work(&g, u, 3, 1, 0);
    gg_add_work(&g, t, 1, 1, 0);
    int32_t s = gg_add_node(&g, 0, OSPG_S, OSPG_LOC_NONE);
    gg_set_locs(&g, s, OSPG_LOC_NONE, 3);
    int32_t v = gg_add_node(&g, s, OSPG_P, 3);
    gg_add_work(&g, v, 7, 4, 0);
    gg_add_work(&g, s, 1, 0, 0);
    oracle_profile o;
    compute(&g, 1, NULL, &o);
    CHECK_EQ(L(&o, 1)->instances, 1);
    CHECK_EQ(L(&o, 1)->work, 6);
    CHECK_EQ(L(&o, 1)->span[0], 5);
    CHECK_EQ(L(&o, 3)->instances, 1);
    CHECK_EQ(L(&o, 3)->work, 8);
    CHECK_EQ(L(&o, 3)->span[0], 7);
    CHECK_EQ(L(&o, 4)->instances, 1);
    CHECK_EQ(o.span[0], 7); /* P t runs beside S: max(5, 7) */
    CHECK_EQ(L(&o, 0)->critical[0], 0);
    CHECK_EQ(L(&o, 4)->critical[0], 7);
    oracle_free(&o);
    gg_free(&g);
}

/* A group nested in a member of the same location is no instance:
 * chunk (1, group a) { S owner { chunk (1, group b) { W3 } } }. */
static void nested_same_loop(void)
{
    current = "nested_same_loop";
    gg_graph g;
    gg_init(&g);
    int32_t ph = gg_add_node(&g, 0, OSPG_S, OSPG_LOC_NONE);
    int32_t ga = gg_add_group(&g, ph, 1);
    int32_t c = gg_add_node(&g, ph, OSPG_P, 1);
    gg_join_group(&g, c, ga);
    int32_t inner = gg_add_node(&g, c, OSPG_S, OSPG_LOC_NONE);
    int32_t gb = gg_add_group(&g, inner, 1);
    int32_t d = gg_add_node(&g, inner, OSPG_P, 1);
    gg_join_group(&g, d, gb);
    gg_add_work(&g, d, 3, 2, 0);
    oracle_profile o;
    compute(&g, 1, NULL, &o);
    CHECK_EQ(L(&o, 1)->instances, 1);
    CHECK_EQ(L(&o, 1)->work, 3);
    CHECK_EQ(L(&o, 1)->span[0], 3);
    oracle_free(&o);
    gg_free(&g);
}

/* Scenarios: region 1 halved, location 9 made free.
 * root { W5 (loc 8, region 1), P { W7 (loc 9) }, W4 (loc 8, region 0) }
 * measured: span max(5 + 7, 5 + 4) = 12;
 * s1 (f = 2, region 1): W5 -> 2: max(2 + 7, 2 + 4) = 9;
 * s2 (f = inf, loc 9): W7 -> 0: max(5 + 0, 5 + 4) = 9. */
static void scenarios(void)
{
    current = "scenarios";
    static const uint32_t reg1[] = {1};
    static const uint32_t loc9[] = {9};
    ospg_scenario sc[3] = {
        {0},
        {.factor = 2, .regions = reg1, .nregions = 1},
        {.factor = INFINITY, .locs = loc9, .nlocs = 1},
    };
    gg_graph g;
    gg_init(&g);
    gg_add_work(&g, 0, 5, 8, 1);
    int32_t p = gg_add_node(&g, 0, OSPG_P, OSPG_LOC_NONE);
    gg_add_work(&g, p, 7, 9, 0);
    gg_add_work(&g, 0, 4, 8, 0);
    oracle_profile o;
    compute(&g, 3, sc, &o);
    CHECK_EQ(o.work, 16);
    CHECK_EQ(o.span[0], 12);
    CHECK_EQ(o.span[1], 9);
    CHECK_EQ(o.span[2], 9);
    CHECK_EQ(L(&o, 9)->critical[0], 7);
    CHECK_EQ(L(&o, 8)->critical[0], 5);
    CHECK_EQ(L(&o, 9)->critical[1], 7);
    CHECK_EQ(L(&o, 8)->critical[1], 2);
    CHECK_EQ(L(&o, 8)->critical[2], 9);
    CHECK_EQ(L(&o, 9)->critical[2], 0);
    CHECK_EQ(L(&o, 8)->work, 9);      /* work stays measured */
    CHECK_EQ(L(&o, 8)->span[1], 2 + 4);
    CHECK_EQ(L(&o, 9)->span[2], 0);
    oracle_free(&o);
    gg_free(&g);
}

/* Barrier phases: root { S par (5) { S { P { W3 (5) }, P { W4 (5) } },
 * S { P { W2 (5) } }, S { P { W1 (5) }, P { W1 (5) } } },
 * S (none) { S { P { W6 (7) }, P { W1 (7) } } } }.  The region's first and
 * third phases pay the barrier (10), attributed to the region; its second
 * has one thread, and the last S-node's parent carried no location. */
static void barrier_phases(void)
{
    current = "barrier_phases";
    ospg_scenario sc[2] = {{0}, {.factor = 1, .barrier_burden = 10}};
    gg_graph g;
    gg_init(&g);
    int32_t par = gg_add_node(&g, 0, OSPG_S, 5);
    int32_t ph = gg_add_node(&g, par, OSPG_S, OSPG_LOC_NONE);
    gg_add_work(&g, gg_add_node(&g, ph, OSPG_P, OSPG_LOC_NONE), 3, 5, 0);
    gg_add_work(&g, gg_add_node(&g, ph, OSPG_P, OSPG_LOC_NONE), 4, 5, 0);
    int32_t ph2 = gg_add_node(&g, par, OSPG_S, OSPG_LOC_NONE);
    gg_add_work(&g, gg_add_node(&g, ph2, OSPG_P, OSPG_LOC_NONE), 2, 5, 0);
    int32_t ph3 = gg_add_node(&g, par, OSPG_S, OSPG_LOC_NONE);
    gg_add_work(&g, gg_add_node(&g, ph3, OSPG_P, OSPG_LOC_NONE), 1, 5, 0);
    gg_add_work(&g, gg_add_node(&g, ph3, OSPG_P, OSPG_LOC_NONE), 1, 5, 0);
    int32_t tg = gg_add_node(&g, 0, OSPG_S, OSPG_LOC_NONE);
    int32_t in = gg_add_node(&g, tg, OSPG_S, OSPG_LOC_NONE);
    gg_add_work(&g, gg_add_node(&g, in, OSPG_P, OSPG_LOC_NONE), 6, 7, 0);
    gg_add_work(&g, gg_add_node(&g, in, OSPG_P, OSPG_LOC_NONE), 1, 7, 0);
    oracle_profile o;
    compute(&g, 2, sc, &o);
    CHECK_EQ(o.work, 18);
    CHECK_EQ(o.span[0], 4 + 2 + 1 + 6);
    CHECK_EQ(o.span[1], 14 + 2 + 11 + 6);
    CHECK_EQ(o.node_span[par * 2 + 1], 27);
    CHECK_EQ(o.node_span[ph2 * 2 + 1], 2);
    CHECK_EQ(o.node_span[tg * 2 + 1], 6);
    CHECK_EQ(L(&o, 5)->critical[0], 7);
    CHECK_EQ(L(&o, 5)->critical[1], 27);
    CHECK_EQ(L(&o, 5)->crit_rule[1], 27);
    CHECK_EQ(L(&o, 7)->critical[1], 6);
    CHECK_EQ(L(&o, 5)->work, 11); /* work stays measured */
    oracle_free(&o);
    gg_free(&g);
}

/* Empty intermediate nodes and a P-child last. */
static void empties(void)
{
    current = "empties";
    gg_graph g;
    gg_init(&g);
    gg_add_node(&g, 0, OSPG_S, 1);
    gg_add_node(&g, 0, OSPG_P, 2);
    gg_add_work(&g, 0, 0, 0, 0);
    oracle_profile o;
    compute(&g, 1, NULL, &o);
    CHECK_EQ(o.span[0], 0);
    CHECK_EQ(o.work, 0);
    CHECK_EQ(L(&o, 1)->instances, 1);
    CHECK_EQ(L(&o, 2)->instances, 1);
    CHECK_EQ(o.crit_unique[0], 1);
    oracle_free(&o);
    gg_free(&g);
}

/* The generator's graphs are valid and the oracle's sums agree. */
static void generated(void)
{
    current = "generated";
    for (uint64_t seed = 1; seed <= 300; seed++) {
        gg_params p = {.seed = seed,
                       .target_nodes = 10 + (size_t)(seed * 37 % 400),
                       .shape = (int)(seed % GG_NSHAPES),
                       .weights = (int)(seed % 3)};
        gg_graph g;
        if (gg_generate(&p, &g)) {
            printf("FAIL generator seed %llu\n", (unsigned long long)seed);
            failed++;
            continue;
        }
        oracle_profile o;
        if (oracle_compute(&g, 1, NULL, &o)) {
            printf("FAIL oracle seed %llu\n", (unsigned long long)seed);
            failed++;
            gg_free(&g);
            continue;
        }
        uint64_t sum = 0, rsum = 0, ok = 1;
        for (size_t i = 0; i < o.nlocs; i++) {
            /* a tag's W-nodes are counted at their own location too */
            sum += o.locs[i].tag ? 0 : o.locs[i].critical[0];
            rsum += o.locs[i].tag ? 0 : o.locs[i].crit_rule[0];
            if (o.locs[i].crit_rule[0] < o.locs[i].crit_min[0] ||
                o.locs[i].crit_rule[0] > o.locs[i].crit_max[0] ||
                (o.crit_unique[0] &&
                 o.locs[i].crit_rule[0] != o.locs[i].critical[0]))
                ok = 0;
            if (o.locs[i].critical[0] < o.locs[i].crit_min[0] ||
                o.locs[i].critical[0] > o.locs[i].crit_max[0])
                ok = 0;
        }
        CHECK_EQ(sum, o.span[0]);
        CHECK_EQ(rsum, o.span[0]);
        CHECK_EQ(ok, 1);
        CHECK_EQ(o.span[0] <= o.work, 1);
        CHECK_EQ(L(&o, 0)->work, o.work);
        CHECK_EQ(L(&o, 0)->instances, 1);
        oracle_free(&o);
        gg_free(&g);
    }
}

int main(void)
{
    serial_then_parallel();
    tie();
    tie_serial_wins();
    tie_prefix_wins();
    zero_weight_no_tie();
    deps_in_out();
    deps_sets();
    dep_max_not_sum();
    serial_wins_back();
    loops_as_groups();
    recursion();
    nested_same_loop();
    scenarios();
    barrier_phases();
    empties();
    generated();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
