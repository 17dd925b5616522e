/* fold.c - how fast the graph builder folds, with 1, 2, ... threads.
 *
 *   fold [MAX_THREADS] [NODES_PER_THREAD]
 *
 * The on-the-fly profile has every profiled thread fold the subtrees it
 * completes into one concurrent builder (analyzer/ospg.c).  This measures
 * the builder alone, without a program or a runtime, in two shapes:
 *  - trees: each thread builds its own fib-like task tree (a task: a
 *    W-node, two child tasks, a taskwait scope) under one root; threads
 *    meet only at the root, as tasks of a task program mostly do;
 *  - siblings: all threads add children (a P-node with one W-node each)
 *    to one shared parent, as the chunks of one loop do: every fold into
 *    the parent takes its lock, the worst case for contention;
 *  - leaves: the same children, each added by one ospg_leaf call, as the
 *    profiler adds a task that creates nothing.
 * For each thread count it prints the graph nodes folded per second (all
 * threads together) and the speed-up over one thread.  On a machine with
 * fewer cores than threads the numbers say nothing about scaling.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "ospg.h"

#define LOC_TASK 1u
#define LOC_WORK 2u

typedef struct job {
    ospg *g;
    ospg_node *parent;
    uint64_t idx;     /* the thread's index under parent (trees) */
    unsigned thread, nthreads;
    uint64_t nodes;   /* target (trees) or children (siblings) */
    uint64_t done;
    int err;
} job;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* A fib-like task of the given depth under parent: its own W-node, two
 * children tasks in a taskwait scope.  Returns the nodes it made. */
static uint64_t task(ospg *g, ospg_node *parent, uint64_t idx, int depth,
                     int *err)
{
    ospg_node *t = ospg_begin(g, parent, idx, OSPG_P, LOC_TASK, NULL, NULL,
                              0, err);
    if (!t)
        return 0;
    uint64_t n = 2;
    *err = ospg_work(g, t, 0, 100, LOC_WORK, 0, 0);
    if (depth > 0 && !*err) {
        ospg_node *scope = ospg_begin(g, t, 1, OSPG_S, OSPG_LOC_NONE, NULL,
                                      NULL, 0, err);
        if (!scope)
            return n;
        n += 1 + task(g, scope, 0, depth - 1, err);
        if (!*err)
            n += task(g, scope, 1, depth - 1, err);
        if (!*err)
            n++, *err = ospg_work(g, scope, 2, 50, LOC_WORK, 0, 0);
        if (!*err)
            *err = ospg_end(g, scope, 3, OSPG_LOC_NONE);
        if (!*err)
            *err = ospg_end(g, t, 2, OSPG_LOC_NONE);
    } else if (!*err) {
        *err = ospg_end(g, t, 1, OSPG_LOC_NONE);
    }
    return n;
}

static void *run_tree(void *arg)
{
    job *j = arg;
    int depth = 1;
    while ((3ull << depth) < j->nodes)
        depth++;
    j->done = task(j->g, j->parent, j->idx, depth, &j->err);
    return NULL;
}

static void *run_leaves(void *arg)
{
    job *j = arg;
    ospg_leaf_work w = {100, LOC_WORK, 0, 0};
    for (uint64_t i = j->thread; i < j->nodes && !j->err; i += j->nthreads) {
        j->err = ospg_leaf(j->g, j->parent, i, OSPG_P, LOC_TASK, NULL, &w);
        j->done += 2;
    }
    return NULL;
}

static void *run_siblings(void *arg)
{
    job *j = arg;
    for (uint64_t i = j->thread; i < j->nodes && !j->err; i += j->nthreads) {
        ospg_node *c = ospg_begin(j->g, j->parent, i, OSPG_P, LOC_TASK, NULL,
                                  NULL, 0, &j->err);
        if (!c)
            break;
        j->err = ospg_work(j->g, c, 0, 100, LOC_WORK, 0, 0);
        if (!j->err)
            j->err = ospg_end(j->g, c, 1, OSPG_LOC_NONE);
        j->done += 2;
    }
    return NULL;
}

enum { TREES, SIBLINGS, LEAVES, NSHAPES };
static const char *const shape_names[NSHAPES] = {"trees", "siblings",
                                                 "leaves"};

/* Nodes per second with nthreads threads on one shape. */
static double measure(int shape, unsigned nthreads, uint64_t per_thread)
{
    int siblings = shape != TREES;
    ospg *g = ospg_new(1, NULL);
    if (!g)
        return 0;
    ospg_set_concurrent(g);
    int err = 0;
    ospg_node *top = ospg_begin(g, ospg_root(g), 0, OSPG_S, OSPG_LOC_NONE,
                                NULL, NULL, 0, &err);
    job jobs[64];
    pthread_t th[64];
    uint64_t children = siblings ? per_thread * nthreads / 2 : nthreads;
    double t0 = now();
    for (unsigned t = 0; t < nthreads; t++) {
        jobs[t] = (job){g, top, t, t, nthreads, siblings ? children
                                                         : per_thread, 0, 0};
        pthread_create(&th[t], NULL,
                       shape == TREES      ? run_tree
                       : shape == SIBLINGS ? run_siblings
                                           : run_leaves,
                       &jobs[t]);
    }
    uint64_t nodes = 0;
    for (unsigned t = 0; t < nthreads; t++) {
        pthread_join(th[t], NULL);
        nodes += jobs[t].done;
        err = err ? err : jobs[t].err;
    }
    ospg_profile prof;
    if (!err)
        err = ospg_end(g, top, children, OSPG_LOC_NONE);
    if (!err)
        err = ospg_finish(g, 1, &prof);
    double secs = now() - t0;
    if (!err)
        ospg_profile_free(&prof);
    ospg_free(g);
    if (err) {
        fprintf(stderr, "fold: %s\n", ospg_strerror(err));
        return 0;
    }
    return (double)nodes / secs;
}

int main(int argc, char **argv)
{
    unsigned maxt = argc > 1 ? (unsigned)atoi(argv[1]) : 2;
    uint64_t per = argc > 2 ? strtoull(argv[2], NULL, 10) : 2000000;
    if (maxt < 1 || maxt > 64)
        maxt = 2;
    printf("| shape | threads | M nodes/s | speed-up |\n|---|---:|---:|---:|\n");
    unsigned counts[16], ncounts = 0;
    for (unsigned t = 1; t < maxt && ncounts < 15; t *= 2)
        counts[ncounts++] = t;
    counts[ncounts++] = maxt;
    for (int shape = 0; shape < NSHAPES; shape++) {
        double one = 0;
        for (unsigned k = 0; k < ncounts; k++) {
            unsigned t = counts[k];
            double best = 0;
            for (int rep = 0; rep < 3; rep++) {
                double r = measure(shape, t, per);
                best = r > best ? r : best;
            }
            if (t == 1)
                one = best;
            printf("| %s | %u | %.1f | %.2fx |\n", shape_names[shape], t,
                   best / 1e6,
                   one > 0 ? best / one : 0);
        }
    }
    return 0;
}
