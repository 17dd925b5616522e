/* test_ospg_cases.c - hand-checked graphs for the analysis core.
 *
 * Each case builds a small OSPG through the public API and asserts numbers
 * worked out by hand in the comment above it.  The regressions for every
 * defect of the prior prototype (docs/model.md) live here.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "ospg.h"

static int passed, failed;

#define CHECK(cond)                                                        \
    do {                                                                   \
        if (cond) {                                                        \
            passed++;                                                      \
        } else {                                                           \
            failed++;                                                      \
            fprintf(stderr, "%s:%d: %s: check failed: %s\n", __FILE__,     \
                    __LINE__, current, #cond);                             \
        }                                                                  \
    } while (0)

static const char *current = "";

static const ospg_loc_stat *stat_of(const ospg_profile *p, uint32_t loc)
{
    for (size_t i = 0; i < p->nlocs; i++)
        if (p->locs[i].loc == loc)
            return &p->locs[i];
    return NULL;
}

static uint64_t crit_of(const ospg_profile *p, uint32_t loc, size_t s)
{
    const ospg_loc_stat *ls = stat_of(p, loc);
    return ls ? ls->critical[s] : 0;
}

static uint64_t crit_sum(const ospg_profile *p, size_t s)
{
    uint64_t sum = 0;
    for (size_t i = 0; i < p->nlocs; i++)
        sum += p->locs[i].critical[s];
    return sum;
}

enum { PROG = 0, PAR = 1, LOOP = 2, TASK = 3, SINGLE = 4, TW = 5 };

/* root: W10; parallel{ phase{ P{W30} P{W20} } }; W100.
 * work 160, span 10+30+100 = 140; critical program 110, parallel 30;
 * parallel instance: work 50, span 30. */
static void case_parallel(void)
{
    current = "parallel";
    ospg *g = ospg_new(1, NULL);
    ospg_node *r = ospg_root(g);
    CHECK(ospg_work(g, r, 0, 10, PROG, 0, 0) == 0);
    ospg_node *par = ospg_begin(g, r, 1, OSPG_S, PAR, NULL, NULL, 0, NULL);
    ospg_node *ph = ospg_begin(g, par, 0, OSPG_S, OSPG_LOC_NONE, NULL, NULL, 0,
                               NULL);
    ospg_node *t1 = ospg_begin(g, ph, 1, OSPG_P, OSPG_LOC_NONE, NULL, NULL, 0,
                               NULL);
    ospg_node *t0 = ospg_begin(g, ph, 0, OSPG_P, OSPG_LOC_NONE, NULL, NULL, 0,
                               NULL);
    CHECK(ospg_work(g, t1, 0, 20, PAR, 0, 0) == 0);
    CHECK(ospg_work(g, t0, 0, 30, PAR, 0, 0) == 0);
    CHECK(ospg_end(g, t0, 1, OSPG_LOC_NONE) == 0);
    CHECK(ospg_end(g, ph, 2, OSPG_LOC_NONE) == 0);
    CHECK(ospg_end(g, par, 1, OSPG_LOC_NONE) == 0);
    CHECK(ospg_work(g, r, 2, 100, PROG, 0, 0) == 0); /* before t1 ends */
    CHECK(ospg_end(g, t1, 1, OSPG_LOC_NONE) == 0);
    ospg_profile p;
    CHECK(ospg_finish(g, 3, &p) == 0);
    CHECK(p.work == 160);
    CHECK(p.span[0] == 140);
    CHECK(crit_of(&p, PROG, 0) == 110);
    CHECK(crit_of(&p, PAR, 0) == 30);
    const ospg_loc_stat *ls = stat_of(&p, PAR);
    CHECK(ls && ls->instances == 1 && ls->work == 50 && ls->span[0] == 30);
    ls = stat_of(&p, PROG);
    CHECK(ls && ls->instances == 1 && ls->work == 160 && ls->span[0] == 140);
    CHECK(ospg_live_nodes(g) == 0);
    ospg_profile_free(&p);
    ospg_free(g);
}

/* Prior bug 1: the serial chain becomes critical again after a task chain
 * led.  root: W10, P{W50}, W60: P chain 60 < serial 70, so the critical
 * path is the serial chain alone, all program work: 70, percentages 100. */
static void case_serial_wins_back(void)
{
    current = "serial wins back";
    ospg *g = ospg_new(1, NULL);
    ospg_node *r = ospg_root(g);
    ospg_work(g, r, 0, 10, PROG, 0, 0);
    ospg_node *t = ospg_begin(g, r, 1, OSPG_P, TASK, NULL, NULL, 0, NULL);
    ospg_work(g, t, 0, 50, TASK, 0, 0);
    ospg_end(g, t, 1, OSPG_LOC_NONE);
    ospg_work(g, r, 2, 60, PROG, 0, 0);
    ospg_profile p;
    CHECK(ospg_finish(g, 3, &p) == 0);
    CHECK(p.span[0] == 70);
    CHECK(crit_of(&p, PROG, 0) == 70);
    CHECK(crit_of(&p, TASK, 0) == 0);
    CHECK(crit_sum(&p, 0) == p.span[0]);
    ospg_profile_free(&p);
    ospg_free(g);
}

/* Prior bugs 2 and 4: tasks a(out x) 40, b(no depend) 45, c(in x) 30 under
 * a taskwait scope, continuation W5 between each creation.
 * prefix(a)=0, prefix(b)=5, prefix(c)=10; finish a = 40, b = 50;
 * start c = max(10, 40) = 40, finish c = 70 (not 10+40+30 = 80).
 * serial chain = 15.  span 70: critical task 70 (a then c). */
static void case_dependences(void)
{
    current = "dependences";
    ospg *g = ospg_new(1, NULL);
    ospg_node *r = ospg_root(g);
    ospg_node *tw = ospg_begin(g, r, 0, OSPG_S, OSPG_LOC_NONE, NULL, NULL, 0,
                               NULL);
    ospg_dep out_x = {0x1000, OSPG_DEP_OUT}, in_x = {0x1000, OSPG_DEP_IN};
    ospg_node *a = ospg_begin(g, tw, 0, OSPG_P, TASK, NULL, &out_x, 1, NULL);
    ospg_work(g, tw, 1, 5, PROG, 0, 0);
    ospg_node *b = ospg_begin(g, tw, 2, OSPG_P, TASK, NULL, NULL, 0, NULL);
    ospg_work(g, tw, 3, 5, PROG, 0, 0);
    ospg_node *c = ospg_begin(g, tw, 4, OSPG_P, TASK, NULL, &in_x, 1, NULL);
    ospg_work(g, tw, 5, 5, PROG, 0, 0);
    /* c's body is reported before a finishes: it must wait for a. */
    ospg_work(g, c, 0, 30, TASK, 0, 0);
    ospg_end(g, c, 1, OSPG_LOC_NONE);
    ospg_work(g, b, 0, 45, TASK, 0, 0);
    ospg_end(g, b, 1, OSPG_LOC_NONE);
    ospg_work(g, a, 0, 40, TASK, 0, 0);
    ospg_end(g, a, 1, OSPG_LOC_NONE);
    ospg_end(g, tw, 6, TW);
    ospg_profile p;
    CHECK(ospg_finish(g, 1, &p) == 0);
    CHECK(p.work == 130);
    CHECK(p.span[0] == 70);
    CHECK(crit_of(&p, TASK, 0) == 70);
    CHECK(crit_of(&p, PROG, 0) == 0);
    const ospg_loc_stat *ls = stat_of(&p, TASK);
    CHECK(ls && ls->instances == 3 && ls->work == 115 && ls->span[0] == 115);
    ls = stat_of(&p, TW);
    CHECK(ls && ls->instances == 1 && ls->work == 130 && ls->span[0] == 70);
    ospg_profile_free(&p);
    ospg_free(g);
}

/* Prior bug 3: one loop run twice in one parallel region (two phases).
 * Each instance: 4 chunks 10,20,30,40 -> work 100, span 40.
 * Summed: instances 2, work 200, span 80 (parallelism 2.5, not 5). */
static void case_repeated_loop(void)
{
    current = "repeated loop";
    ospg *g = ospg_new(1, NULL);
    ospg_node *r = ospg_root(g);
    ospg_node *par = ospg_begin(g, r, 0, OSPG_S, PAR, NULL, NULL, 0, NULL);
    for (int phase = 0; phase < 2; phase++) {
        ospg_node *ph = ospg_begin(g, par, (uint64_t)phase, OSPG_S,
                                   OSPG_LOC_NONE, NULL, NULL, 0, NULL);
        ospg_group *loop = ospg_group_new(g, ph, LOOP);
        ospg_node *th[2];
        for (int t = 0; t < 2; t++)
            th[t] = ospg_begin(g, ph, (uint64_t)t, OSPG_P, OSPG_LOC_NONE,
                               NULL, NULL, 0, NULL);
        for (int c = 0; c < 4; c++) {
            ospg_node *ch = ospg_begin(g, th[c % 2], (uint64_t)(c / 2),
                                       OSPG_P, LOOP, loop, NULL, 0, NULL);
            ospg_work(g, ch, 0, (uint64_t)(10 * (c + 1)), LOOP, 0, 0);
            ospg_end(g, ch, 1, OSPG_LOC_NONE);
        }
        for (int t = 0; t < 2; t++)
            ospg_end(g, th[t], 2, OSPG_LOC_NONE);
        ospg_end(g, ph, 2, OSPG_LOC_NONE);
    }
    ospg_end(g, par, 2, OSPG_LOC_NONE);
    ospg_profile p;
    CHECK(ospg_finish(g, 1, &p) == 0);
    CHECK(p.span[0] == 80);
    const ospg_loc_stat *ls = stat_of(&p, LOOP);
    CHECK(ls && ls->instances == 2 && ls->work == 200 && ls->span[0] == 80);
    CHECK(crit_of(&p, LOOP, 0) == 80);
    ospg_profile_free(&p);
    ospg_free(g);
}

/* Recursion: fib-like tasks at one location nested three deep.  Only the
 * outermost task counts: instances 1, work = its subtree's work.
 * T{W1, S{T{W2, S{T{W4}}, W8}}, W16}: inner spans 4, 2+4+8 = 14,
 * outer 1+14+16 = 31; work 31. */
static void case_recursion(void)
{
    current = "recursion";
    ospg *g = ospg_new(1, NULL);
    ospg_node *r = ospg_root(g);
    ospg_node *t1 = ospg_begin(g, r, 0, OSPG_P, TASK, NULL, NULL, 0, NULL);
    ospg_work(g, t1, 0, 1, TASK, 0, 0);
    ospg_node *s1 = ospg_begin(g, t1, 1, OSPG_S, OSPG_LOC_NONE, NULL, NULL, 0,
                               NULL);
    ospg_node *t2 = ospg_begin(g, s1, 0, OSPG_P, TASK, NULL, NULL, 0, NULL);
    ospg_work(g, t2, 0, 2, TASK, 0, 0);
    ospg_node *s2 = ospg_begin(g, t2, 1, OSPG_S, OSPG_LOC_NONE, NULL, NULL, 0,
                               NULL);
    ospg_node *t3 = ospg_begin(g, s2, 0, OSPG_P, TASK, NULL, NULL, 0, NULL);
    ospg_work(g, t3, 0, 4, TASK, 0, 0);
    ospg_end(g, t3, 1, OSPG_LOC_NONE);
    ospg_end(g, s2, 1, TW);
    ospg_work(g, t2, 2, 8, TASK, 0, 0);
    ospg_end(g, t2, 3, OSPG_LOC_NONE);
    ospg_end(g, s1, 1, TW);
    ospg_work(g, t1, 2, 16, TASK, 0, 0);
    ospg_end(g, t1, 3, OSPG_LOC_NONE);
    ospg_profile p;
    CHECK(ospg_finish(g, 1, &p) == 0);
    CHECK(p.span[0] == 31);
    const ospg_loc_stat *ls = stat_of(&p, TASK);
    CHECK(ls && ls->instances == 1 && ls->work == 31 && ls->span[0] == 31);
    ls = stat_of(&p, TW);
    CHECK(ls && ls->instances == 1 && ls->work == 14 && ls->span[0] == 14);
    ospg_profile_free(&p);
    ospg_free(g);
}

/* Prior bug 5: a task created inside a single outlives it and the thread
 * that created it; its node is reported after its creator ended.
 * phase{P0{ single S{W5, P task{...}}, W1 }, P1{W2}}: task W100 reported
 * last.  single scope = 5 + 100; P0 = 105 + 1 = 106 = span; work 108. */
static void case_task_outlives(void)
{
    current = "task outlives";
    ospg *g = ospg_new(1, NULL);
    ospg_node *r = ospg_root(g);
    ospg_node *par = ospg_begin(g, r, 0, OSPG_S, PAR, NULL, NULL, 0, NULL);
    ospg_node *ph = ospg_begin(g, par, 0, OSPG_S, OSPG_LOC_NONE, NULL, NULL, 0,
                               NULL);
    ospg_node *p0 = ospg_begin(g, ph, 0, OSPG_P, OSPG_LOC_NONE, NULL, NULL, 0,
                               NULL);
    ospg_node *p1 = ospg_begin(g, ph, 1, OSPG_P, OSPG_LOC_NONE, NULL, NULL, 0,
                               NULL);
    ospg_node *sg = ospg_begin(g, p0, 0, OSPG_S, SINGLE, NULL, NULL, 0, NULL);
    ospg_work(g, sg, 0, 5, SINGLE, 0, 0);
    ospg_node *t = ospg_begin(g, sg, 1, OSPG_P, TASK, NULL, NULL, 0, NULL);
    ospg_end(g, sg, 2, OSPG_LOC_NONE);
    ospg_work(g, p0, 1, 1, PAR, 0, 0);
    ospg_end(g, p0, 2, OSPG_LOC_NONE);
    ospg_work(g, p1, 0, 2, PAR, 0, 0);
    ospg_end(g, p1, 1, OSPG_LOC_NONE);
    ospg_end(g, ph, 2, OSPG_LOC_NONE);
    ospg_end(g, par, 1, OSPG_LOC_NONE);
    CHECK(ospg_live_nodes(g) > 1);
    ospg_work(g, t, 0, 100, TASK, 0, 0);
    ospg_end(g, t, 1, OSPG_LOC_NONE);
    ospg_profile p;
    CHECK(ospg_finish(g, 1, &p) == 0);
    CHECK(p.work == 108);
    CHECK(p.span[0] == 106);
    CHECK(crit_of(&p, SINGLE, 0) == 5);
    CHECK(crit_of(&p, TASK, 0) == 100);
    CHECK(crit_of(&p, PAR, 0) == 1);
    CHECK(crit_sum(&p, 0) == 106);
    ospg_profile_free(&p);
    ospg_free(g);
}

/* What-if: root W100 (region 1), then P{W60}.  Measured: the task starts
 * after the W: span 160.  Factor 4 on region 1: 25 + 60 = 85.  Factor inf
 * on all regions: 0 + 60 = 60.  Work stays 160 in every scenario. */
static void case_whatif(void)
{
    current = "what-if";
    uint32_t regions[] = {1};
    ospg_scenario sc[3] = {
        {0},
        {.factor = 4.0, .regions = regions, .nregions = 1},
        {.factor = INFINITY, .all_regions = 1},
    };
    ospg *g = ospg_new(3, sc);
    ospg_node *r = ospg_root(g);
    ospg_work(g, r, 0, 100, PROG, 1, 0);
    ospg_node *t = ospg_begin(g, r, 1, OSPG_P, TASK, NULL, NULL, 0, NULL);
    ospg_work(g, t, 0, 60, TASK, 0, 0);
    ospg_end(g, t, 1, OSPG_LOC_NONE);
    ospg_profile p;
    CHECK(ospg_finish(g, 2, &p) == 0);
    CHECK(p.work == 160);
    CHECK(p.span[0] == 160 && p.span[1] == 85 && p.span[2] == 60);
    CHECK(crit_of(&p, PROG, 0) == 100 && crit_of(&p, TASK, 0) == 60);
    CHECK(crit_of(&p, PROG, 1) == 25 && crit_of(&p, TASK, 1) == 60);
    CHECK(crit_of(&p, TASK, 2) == 60 && crit_of(&p, PROG, 2) == 0);
    ospg_profile_free(&p);
    ospg_free(g);
}

/* Errors: a reused index, an end with too few children, an unfinished
 * graph at finish. */
static void case_errors(void)
{
    current = "errors";
    ospg *g = ospg_new(1, NULL);
    ospg_node *r = ospg_root(g);
    CHECK(ospg_work(g, r, 0, 1, PROG, 0, 0) == 0);
    CHECK(ospg_work(g, r, 0, 1, PROG, 0, 0) == OSPG_ERR_INDEX);
    ospg_free(g);

    g = ospg_new(1, NULL);
    r = ospg_root(g);
    ospg_node *t = ospg_begin(g, r, 0, OSPG_P, TASK, NULL, NULL, 0, NULL);
    CHECK(ospg_work(g, t, 3, 1, TASK, 0, 0) == 0);
    CHECK(ospg_end(g, t, 2, OSPG_LOC_NONE) == OSPG_ERR_INDEX);
    ospg_free(g);

    g = ospg_new(1, NULL);
    r = ospg_root(g);
    t = ospg_begin(g, r, 0, OSPG_P, TASK, NULL, NULL, 0, NULL);
    ospg_work(g, t, 0, 1, TASK, 0, 0);
    ospg_profile p;
    CHECK(ospg_finish(g, 1, &p) == OSPG_ERR_STATE);
    ospg_free(g);

    g = ospg_new(1, NULL);
    r = ospg_root(g);
    ospg_node *a = ospg_begin(g, r, 0, OSPG_S, OSPG_LOC_NONE, NULL, NULL, 0,
                              NULL);
    ospg_node *b = ospg_begin(g, r, 1, OSPG_S, OSPG_LOC_NONE, NULL, NULL, 0,
                              NULL);
    ospg_group *gr = ospg_group_new(g, a, LOOP);
    int err = 0;
    CHECK(ospg_begin(g, b, 0, OSPG_P, LOOP, gr, NULL, 0, &err) == NULL);
    CHECK(err == OSPG_ERR_ARG);
    ospg_free(g);

    /* fixed locations: a node begun with one may end with it or none;
     * one begun with none may end with any */
    g = ospg_new(1, NULL);
    ospg_set_fixed_locations(g);
    r = ospg_root(g);
    a = ospg_begin(g, r, 0, OSPG_S, OSPG_LOC_NONE, NULL, NULL, 0, NULL);
    t = ospg_begin(g, a, 0, OSPG_P, TASK, NULL, NULL, 0, NULL);
    CHECK(ospg_end(g, t, 0, TASK) == 0);
    CHECK(ospg_end(g, a, 1, TW) == 0);
    b = ospg_begin(g, r, 1, OSPG_P, TASK, NULL, NULL, 0, NULL);
    CHECK(ospg_end(g, b, 0, LOOP) == OSPG_ERR_LOC);
    ospg_free(g);
}

/* Reports W-children 1 .. 199 of t, child i's work i + 1: the odd ones
 * last first, then the even ones last first, each of which goes deeper
 * inside the parked list: past PARK_WALK_MAX a node indexes it (ospg.c). */
static void park_deep(ospg *g, ospg_node *t)
{
    for (uint64_t i = 199; i < 200; i -= 2) /* 199, 197, ..., 1 */
        CHECK(ospg_work(g, t, i, i + 1, TASK, 0, 0) == 0);
    for (uint64_t i = 198; i >= 2; i -= 2)
        CHECK(ospg_work(g, t, i, i + 1, TASK, 0, 0) == 0);
}

/* Children reported far out of order.  root: P task{200 W-children
 * (park_deep, then child 0)}, then a scope S{40 leaf tasks, leaf i's work
 * i + 1, reported last first}.  The task runs beside what follows it:
 * work 20100 + 820, span max(20100, 40) = 20100. */
static void case_many_parked(void)
{
    current = "many parked";
    ospg *g = ospg_new(1, NULL);
    ospg_node *r = ospg_root(g);
    ospg_node *t = ospg_begin(g, r, 0, OSPG_P, TASK, NULL, NULL, 0, NULL);
    park_deep(g, t);
    CHECK(ospg_live_nodes(g) == 2);
    CHECK(ospg_work(g, t, 0, 1, TASK, 0, 0) == 0);
    CHECK(ospg_end(g, t, 200, OSPG_LOC_NONE) == 0);
    ospg_node *sc = ospg_begin(g, r, 1, OSPG_S, TW, NULL, NULL, 0, NULL);
    for (uint64_t i = 40; i-- > 0;) {
        ospg_leaf_work w = {i + 1, TASK, 0, 0};
        CHECK(ospg_leaf(g, sc, i, OSPG_P, TASK, NULL, &w) == 0);
    }
    CHECK(ospg_end(g, sc, 40, OSPG_LOC_NONE) == 0);
    ospg_profile p;
    CHECK(ospg_finish(g, 2, &p) == 0);
    CHECK(p.work == 20100 + 820);
    CHECK(p.span[0] == 20100);
    CHECK(ospg_live_nodes(g) == 0);
    ospg_profile_free(&p);
    ospg_free(g);

    /* a child reported twice, once the node indexes its parked ones */
    g = ospg_new(1, NULL);
    r = ospg_root(g);
    t = ospg_begin(g, r, 0, OSPG_P, TASK, NULL, NULL, 0, NULL);
    park_deep(g, t);
    CHECK(ospg_work(g, t, 101, 1, TASK, 0, 0) == OSPG_ERR_INDEX);
    ospg_free(g);

    /* an end that counts fewer children than were parked */
    g = ospg_new(1, NULL);
    r = ospg_root(g);
    t = ospg_begin(g, r, 0, OSPG_P, TASK, NULL, NULL, 0, NULL);
    park_deep(g, t);
    CHECK(ospg_end(g, t, 199, OSPG_LOC_NONE) == OSPG_ERR_INDEX);
    ospg_free(g);

    /* cut short: children 1 .. 199 parked, 0 never came, the lowest
     * first: the task's chain is all of them */
    g = ospg_new(1, NULL);
    r = ospg_root(g);
    t = ospg_begin(g, r, 0, OSPG_P, TASK, NULL, NULL, 0, NULL);
    park_deep(g, t);
    CHECK(ospg_finish_partial(g, &p) == 0);
    CHECK(p.work == 20099 && p.span[0] == 20099);
    CHECK(ospg_live_nodes(g) == 0);
    ospg_profile_free(&p);
    ospg_free(g);
}

/* A run cut short inside a parallel region: root W10, parallel{phase{
 * P0{W30, P chunk{W5} (never ended)}, P1{W20} (never ended)}} and
 * children 3 and 4 of P0 never reported.  Partial finish: span 10 + 35,
 * work 65, nothing live afterwards. */
static void case_partial(void)
{
    current = "partial";
    ospg *g = ospg_new(1, NULL);
    ospg_node *r = ospg_root(g);
    ospg_work(g, r, 0, 10, PROG, 0, 0);
    ospg_node *par = ospg_begin(g, r, 1, OSPG_S, PAR, NULL, NULL, 0, NULL);
    ospg_node *ph = ospg_begin(g, par, 0, OSPG_S, OSPG_LOC_NONE, NULL, NULL, 0,
                               NULL);
    ospg_node *p0 = ospg_begin(g, ph, 0, OSPG_P, OSPG_LOC_NONE, NULL, NULL, 0,
                               NULL);
    ospg_node *p1 = ospg_begin(g, ph, 1, OSPG_P, OSPG_LOC_NONE, NULL, NULL, 0,
                               NULL);
    ospg_work(g, p0, 0, 30, PAR, 0, 0);
    ospg_node *ch = ospg_begin(g, p0, 1, OSPG_P, LOOP, NULL, NULL, 0, NULL);
    ospg_work(g, ch, 0, 5, LOOP, 0, 0);
    ospg_work(g, p0, 5, 1, PAR, 0, 0); /* after a gap: 2..4 never came */
    ospg_work(g, p1, 0, 20, PAR, 0, 0);
    ospg_profile p;
    CHECK(ospg_finish_partial(g, &p) == 0);
    CHECK(p.work == 66);
    CHECK(p.span[0] == 10 + 30 + 5 && p.span[0] >= 10 + 31);
    CHECK(crit_sum(&p, 0) == p.span[0]);
    CHECK(ospg_live_nodes(g) == 0);
    const ospg_loc_stat *ls = stat_of(&p, LOOP);
    CHECK(ls && ls->instances == 1 && ls->work == 5);
    ospg_profile_free(&p);
    ospg_free(g);
}

/* Early children in runs (ospg.c, "Segments"), whole and cut short, with
 * one scenario and with three (task work halved, and made free): a scope
 * S{child 0: W5 (or never reported), 1..40: P-leaves of task work i,
 * 41: a task node P{W500} that ends before child 0 comes, 42..50: W10
 * each}, every child from 1 on reported before child 0, each joining a
 * run.  Whole: work 1415, span max(95, 5 + task 500); cut short: work
 * 1410, span max(90, task 500), the missing child taken as empty. */
static void case_partial_runs(void)
{
    current = "partial runs";
    static const uint32_t task_locs[] = {TASK};
    ospg_scenario sc[3] = {
        {.factor = 1.0},
        {.factor = 2.0, .locs = task_locs, .nlocs = 1},
        {.factor = INFINITY, .locs = task_locs, .nlocs = 1},
    };
    for (size_t ns = 1; ns <= 3; ns += 2)
        for (int cut = 0; cut < 2; cut++) {
            ospg *g = ospg_new(ns, ns > 1 ? sc : NULL);
            ospg_set_fixed_locations(g);
            ospg_set_runs_after(g, 0);
            ospg_node *r = ospg_root(g);
            ospg_node *s = ospg_begin(g, r, 0, OSPG_S, TW, NULL, NULL, 0,
                                      NULL);
            for (uint64_t i = 1; i <= 40; i++) {
                ospg_leaf_work w = {i, TASK, 0, 0};
                CHECK(ospg_leaf(g, s, i, OSPG_P, TASK, NULL, &w) == 0);
            }
            ospg_node *t = ospg_begin(g, s, 41, OSPG_P, TASK, NULL, NULL, 0,
                                      NULL);
            CHECK(ospg_work(g, t, 0, 500, TASK, 0, 0) == 0);
            CHECK(ospg_end(g, t, 1, OSPG_LOC_NONE) == 0);
            for (uint64_t i = 42; i <= 50; i++)
                CHECK(ospg_work(g, s, i, 10, TW, 0, 0) == 0);
            CHECK(ospg_run_nodes(g) == 1);
            CHECK(ospg_run_children(g) == 50);
            ospg_profile p;
            if (cut) {
                CHECK(ospg_finish_partial(g, &p) == 0);
            } else {
                CHECK(ospg_work(g, s, 0, 5, TW, 0, 0) == 0);
                CHECK(ospg_end(g, s, 51, TW) == 0);
                CHECK(ospg_finish(g, 1, &p) == 0);
            }
            uint64_t first = cut ? 0 : 5;
            CHECK(p.work == first + 820 + 500 + 90);
            for (size_t k = 0; k < ns; k++) {
                uint64_t task = ospg_scaled_work(&sc[k], 500, TASK, 0);
                uint64_t want = first + 90 > first + task ? first + 90
                                                          : first + task;
                CHECK(p.span[k] == want);
                CHECK(crit_sum(&p, k) == p.span[k]);
            }
            CHECK(ospg_live_nodes(g) == 0);
            ospg_profile_free(&p);
            ospg_free(g);
        }
}

/* depend(inout: omp_all_memory): a(out x) 40, b(in y) 10, c(all) 5,
 * d(in z, an address first seen after c) 7, e(no depend) 30.  c waits
 * for a and b: finish 45; d waits for c: 52; e is free: 30.  Span 52
 * (a, c, d), work 92. */
static void case_all_memory(void)
{
    current = "all memory";
    ospg *g = ospg_new(1, NULL);
    ospg_node *r = ospg_root(g);
    ospg_node *tw = ospg_begin(g, r, 0, OSPG_S, OSPG_LOC_NONE, NULL, NULL, 0,
                               NULL);
    ospg_dep dx = {0x10, OSPG_DEP_OUT}, dy = {0x20, OSPG_DEP_IN},
             dall = {0, OSPG_DEP_ALL_MEMORY}, dz = {0x30, OSPG_DEP_IN};
    const ospg_dep *deps[5] = {&dx, &dy, &dall, &dz, NULL};
    uint64_t work[5] = {40, 10, 5, 7, 30};
    ospg_node *t[5];
    for (int i = 0; i < 5; i++)
        t[i] = ospg_begin(g, tw, (uint64_t)i, OSPG_P, TASK, NULL, deps[i],
                          deps[i] ? 1 : 0, NULL);
    for (int i = 4; i >= 0; i--) {
        ospg_work(g, t[i], 0, work[i], TASK, 0, 0);
        ospg_end(g, t[i], 1, OSPG_LOC_NONE);
    }
    ospg_end(g, tw, 5, TW);
    ospg_profile p;
    CHECK(ospg_finish(g, 1, &p) == 0);
    CHECK(p.work == 92);
    CHECK(p.span[0] == 52);
    CHECK(crit_of(&p, TASK, 0) == 52);
    ospg_profile_free(&p);
    ospg_free(g);
}

/* Samples split a W-node's work among source lines (A = 10, B = 11, C =
 * 12 are line locations).  root: W40 {A:1, B:3}; P task{W t {C:1}};
 * W60 {A:2}.
 * Task of 10: span 40 + 60 = 100, the task off the path: A critical
 * 10 + 60 = 70, B 30, C 0; work A 70, B 30, C 10; instances (samples)
 * A 3, B 3, C 1.  Task of 200: span 40 + 200 = 240, W60 off the path: A
 * critical 10, B 30, C 200; works unchanged.  In a scenario that makes
 * the task's location free (x inf), span 100 again and C 0.  The
 * directives' own critical work still sums to the span. */
static void case_samples(void)
{
    enum { A = 10, B = 11, C = 12 };
    static const uint32_t task_loc[] = {TASK};
    ospg_scenario sc[2];
    memset(sc, 0, sizeof sc);
    sc[1].factor = INFINITY;
    sc[1].locs = task_loc;
    sc[1].nlocs = 1;
    for (int big = 0; big < 2; big++) {
        current = big ? "samples, task critical" : "samples";
        uint64_t t = big ? 200 : 10;
        ospg *g = ospg_new(2, sc);
        ospg_node *r = ospg_root(g);
        ospg_sample s0[] = {{A, 1}, {B, 3}}, s1[] = {{C, 1}}, s2[] = {{A, 2}};
        /* the second time out of order: sampled W-nodes parked */
        if (big)
            CHECK(ospg_work_sampled(g, r, 2, 60, PROG, 0, 0, s2, 1) == 0);
        ospg_node *tk = ospg_begin(g, r, 1, OSPG_P, TASK, NULL, NULL, 0,
                                   NULL);
        CHECK(ospg_work_sampled(g, tk, 0, t, TASK, 0, 0, s1, 1) == 0);
        CHECK(ospg_end(g, tk, 1, OSPG_LOC_NONE) == 0);
        CHECK(ospg_work_sampled(g, r, 0, 40, PROG, 0, 0, s0, 2) == 0);
        if (!big)
            CHECK(ospg_work_sampled(g, r, 2, 60, PROG, 0, 0, s2, 1) == 0);
        ospg_profile p;
        CHECK(ospg_finish(g, 3, &p) == 0);
        CHECK(p.span[0] == (big ? 240 : 100));
        CHECK(crit_of(&p, A, 0) == (big ? 10 : 70));
        CHECK(crit_of(&p, B, 0) == 30);
        CHECK(crit_of(&p, C, 0) == (big ? 200 : 0));
        CHECK(p.span[1] == 100 && crit_of(&p, C, 1) == 0);
        CHECK(crit_of(&p, A, 1) == 70);
        const ospg_loc_stat *a = stat_of(&p, A), *b = stat_of(&p, B),
                            *c = stat_of(&p, C);
        CHECK(a && a->work == 70 && a->instances == 3);
        CHECK(b && b->work == 30 && b->instances == 3);
        CHECK(c && c->work == t && c->instances == 1);
        CHECK(crit_of(&p, PROG, 0) + crit_of(&p, TASK, 0) == p.span[0]);
        ospg_profile_free(&p);
        ospg_free(g);
    }
}

/* The grain histogram: every value's bucket stands for it within 1/16,
 * buckets follow the values' order, and the median is the lower one's. */
static void case_histogram(void)
{
    size_t prev = 0;
    int ok = 1;
    for (uint64_t v = 0; v < 200000 && ok; v++) {
        size_t b = ospg_hist_bucket(v);
        uint64_t r = ospg_hist_value(b);
        uint64_t d = r > v ? r - v : v - r;
        ok = b < OSPG_HIST_BUCKETS && b >= prev && 16 * d <= v &&
             ospg_hist_bucket(r) == b;
        prev = b;
    }
    CHECK(ok);
    for (unsigned e = 3; e < OSPG_HIST_TOP && ok; e++) {
        uint64_t v = (1ull << e) + (1ull << e) / 3, d;
        uint64_t r = ospg_hist_value(ospg_hist_bucket(v));
        d = r > v ? r - v : v - r;
        ok = 16 * d <= v;
    }
    CHECK(ok);
    CHECK(ospg_hist_bucket(UINT64_MAX) == OSPG_HIST_BUCKETS - 1);
    CHECK(ospg_hist_bucket(1ull << OSPG_HIST_TOP) == OSPG_HIST_BUCKETS - 1);
    CHECK(ospg_hist_bucket((1ull << OSPG_HIST_TOP) - 1) ==
          OSPG_HIST_BUCKETS - 1);
    uint64_t hist[OSPG_HIST_BUCKETS] = {0};
    CHECK(ospg_grain_median(hist) == 0);
    CHECK(ospg_grain_median(NULL) == 0);
    hist[ospg_hist_bucket(5)] += 2;   /* 5, 5, 1000, 1000: the lower is 5 */
    hist[ospg_hist_bucket(1000)] += 2;
    CHECK(ospg_grain_median(hist) == 5);
    hist[ospg_hist_bucket(1000)]++;   /* and a fifth: 1000's bucket */
    CHECK(ospg_grain_median(hist) == ospg_hist_value(ospg_hist_bucket(1000)));
    CHECK(ospg_hist_value(ospg_hist_bucket(1000)) >= 1000 - 1000 / 16 &&
          ospg_hist_value(ospg_hist_bucket(1000)) <= 1000 + 1000 / 16);
}

int main(void)
{
    case_histogram();
    case_many_parked();
    case_samples();
    case_all_memory();
    case_partial();
    case_partial_runs();
    case_parallel();
    case_serial_wins_back();
    case_dependences();
    case_repeated_loop();
    case_recursion();
    case_task_outlives();
    case_whatif();
    case_errors();
    printf("%d passed, %d failed\n", passed, failed);
    return failed != 0;
}
