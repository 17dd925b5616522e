/* gentrace.c - writes synthetic offline traces of a given size.
 *
 * For the analyzer benchmark and the command-line tests: a program-shaped
 * OSPG (serial code, parallel regions with worksharing loops of many
 * chunks, recursive task trees with taskwait) written the way the profiler
 * writes it, one stream per thread, streamed straight to disk so that
 * traces of 10^7 nodes need no memory.
 *
 *   gentrace DIR NODES [THREADS] [SHAPE]     SHAPE: loops | tasks | mixed
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "trace.h"

enum { LOC_PAR = 1, LOC_LOOP = 2, LOC_TASK = 3, LOC_TASKWAIT = 4 };

typedef struct gen {
    trace_writer **w;
    unsigned threads;
    uint64_t *next_id; /* per stream */
    uint64_t next_group;
    uint64_t nodes;
    uint64_t rng;
} gen;

static uint64_t rnd(gen *g)
{
    g->rng ^= g->rng << 13;
    g->rng ^= g->rng >> 7;
    g->rng ^= g->rng << 17;
    return g->rng;
}

static uint64_t new_id(gen *g, unsigned t)
{
    return ((uint64_t)(t + 1) << 40) | g->next_id[t]++;
}

static int check(int rc)
{
    if (rc) {
        fprintf(stderr, "gentrace: write failed: %s\n", strerror(errno));
        exit(1);
    }
    return rc;
}

/* One parallel region with a loop of nchunks chunks, statically spread. */
static void region_loop(gen *g, uint64_t root_idx, unsigned nchunks)
{
    trace_writer *m = g->w[0];
    uint64_t par = new_id(g, 0), phase = new_id(g, 0);
    uint64_t grp = ++g->next_group;
    check(trace_write_begin(m, par, TRACE_ROOT_ID, root_idx, OSPG_S, LOC_PAR,
                            0, 0, NULL, 0));
    check(trace_write_begin(m, phase, par, 0, OSPG_S, OSPG_LOC_NONE, 0, 0,
                            NULL, 0));
    g->nodes += 2;
    for (unsigned t = 0; t < g->threads; t++) {
        trace_writer *w = g->w[t];
        uint64_t share = new_id(g, t), idx = 0;
        check(trace_write_begin(w, share, phase, t, OSPG_P, OSPG_LOC_NONE, 0, 0,
                                NULL, 0));
        check(trace_write_work(w, share, idx++, 50 + rnd(g) % 50, LOC_PAR, 0, 0));
        g->nodes += 2;
        for (unsigned c = t; c < nchunks; c += g->threads) {
            uint64_t chunk = new_id(g, t);
            check(trace_write_begin(w, chunk, share, idx++, OSPG_P, LOC_LOOP,
                                    grp, phase, NULL, 0));
            check(trace_write_work(w, chunk, 0, 1000 + rnd(g) % 1000,
                                   LOC_LOOP, 0, 0));
            check(trace_write_end(w, chunk, 1, OSPG_LOC_NONE));
            g->nodes += 2;
        }
        check(trace_write_end(w, share, idx, OSPG_LOC_NONE));
    }
    check(trace_write_end(m, phase, g->threads, OSPG_LOC_NONE));
    check(trace_write_end(m, par, 1, OSPG_LOC_NONE));
}

/* A fib-like task: W, taskwait scope {task, W, task, W}, W.  Written by
 * thread t; children alternate threads as if stolen. */
static void task_tree(gen *g, unsigned t, uint64_t parent, uint64_t idx,
                      unsigned depth)
{
    trace_writer *w = g->w[t];
    uint64_t task = new_id(g, t);
    check(trace_write_begin(w, task, parent, idx, OSPG_P, LOC_TASK, 0, 0,
                            NULL, 0));
    check(trace_write_work(w, task, 0, 20 + rnd(g) % 20, LOC_TASK, 0, 0));
    g->nodes += 2;
    if (depth == 0) {
        check(trace_write_end(w, task, 1, OSPG_LOC_NONE));
        return;
    }
    uint64_t scope = new_id(g, t);
    check(trace_write_begin(w, scope, task, 1, OSPG_S, OSPG_LOC_NONE, 0, 0,
                            NULL, 0));
    g->nodes++;
    task_tree(g, t, scope, 0, depth - 1);
    check(trace_write_work(w, scope, 1, 5, LOC_TASK, 0, 0));
    task_tree(g, (t + 1) % g->threads, scope, 2, depth - 1);
    check(trace_write_work(w, scope, 3, 5, LOC_TASK, 0, 0));
    check(trace_write_end(w, scope, 4, LOC_TASKWAIT));
    check(trace_write_work(w, task, 2, 10 + rnd(g) % 10, LOC_TASK, 0, 0));
    check(trace_write_end(w, task, 3, OSPG_LOC_NONE));
    g->nodes += 3;
}

static void region_tasks(gen *g, uint64_t root_idx, unsigned depth)
{
    trace_writer *m = g->w[0];
    uint64_t scope = new_id(g, 0);
    check(trace_write_begin(m, scope, TRACE_ROOT_ID, root_idx, OSPG_S,
                            OSPG_LOC_NONE, 0, 0, NULL, 0));
    g->nodes++;
    task_tree(g, 0, scope, 0, depth);
    check(trace_write_end(m, scope, 1, LOC_TASKWAIT));
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: gentrace DIR NODES [THREADS] [loops|tasks|"
                        "mixed]\n");
        return 2;
    }
    const char *dir = argv[1];
    uint64_t target = strtoull(argv[2], NULL, 10);
    unsigned threads = argc > 3 ? (unsigned)atoi(argv[3]) : 4;
    const char *shape = argc > 4 ? argv[4] : "mixed";
    if (threads == 0 || threads > 1024) {
        fprintf(stderr, "gentrace: THREADS must be 1..1024\n");
        return 2;
    }
    if (mkdir(dir, 0777) && errno != EEXIST) {
        fprintf(stderr, "gentrace: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    gen g = {0};
    g.threads = threads;
    g.rng = 0x9e3779b97f4a7c15ull;
    g.w = calloc(threads, sizeof(*g.w));
    g.next_id = calloc(threads, sizeof(*g.next_id));
    if (!g.w || !g.next_id)
        return 1;
    for (unsigned t = 0; t < threads; t++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/thread-%04u.wit", dir, t);
        g.w[t] = trace_writer_open(path, t, 0, 0);
        if (!g.w[t]) {
            fprintf(stderr, "gentrace: %s: %s\n", path, strerror(errno));
            return 1;
        }
    }
    trace_writer *m = g.w[0];
    check(trace_write_meta(m, "metric", "synthetic"));
    check(trace_write_meta(m, "command", "gentrace"));
    check(trace_write_loc(m, LOC_PAR, "parallel", "synthetic.c:10"));
    check(trace_write_loc(m, LOC_LOOP, "loop", "synthetic.c:12"));
    check(trace_write_loc(m, LOC_TASK, "task", "synthetic.c:30"));
    check(trace_write_loc(m, LOC_TASKWAIT, "taskwait", "synthetic.c:34"));

    uint64_t idx = 0;
    int do_loops = strcmp(shape, "tasks") != 0;
    int do_tasks = strcmp(shape, "loops") != 0;
    while (g.nodes < target) {
        check(trace_write_work(m, TRACE_ROOT_ID, idx++, 500 + rnd(&g) % 500,
                               OSPG_LOC_PROGRAM, 0, 0));
        g.nodes++;
        if (do_loops)
            region_loop(&g, idx++, 256);
        if (do_tasks) {
            check(trace_write_work(m, TRACE_ROOT_ID, idx++, 100,
                                   OSPG_LOC_PROGRAM, 0, 0));
            g.nodes++;
            region_tasks(&g, idx++, 10);
        }
    }
    check(trace_write_end(m, TRACE_ROOT_ID, idx, OSPG_LOC_NONE));
    uint64_t bytes = 0;
    for (unsigned t = 0; t < threads; t++) {
        if (trace_writer_flush(g.w[t]) == 0)
            bytes += trace_writer_bytes(g.w[t]);
        if (trace_writer_close(g.w[t])) {
            fprintf(stderr, "gentrace: closing stream %u failed\n", t);
            return 1;
        }
    }
    printf("%llu nodes %llu bytes\n", (unsigned long long)g.nodes,
           (unsigned long long)bytes);
    free(g.w);
    free(g.next_id);
    return 0;
}
