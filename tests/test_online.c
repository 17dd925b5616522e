/* test_online.c - the on-the-fly queues under real concurrency.
 *
 * Plain pthreads stand in for an OpenMP team (so ThreadSanitizer can
 * check the lock-free queues without an instrumented runtime): the main
 * thread begins a sync scope, each worker begins its own parallel share
 * under it and appends many W-nodes, so chunks fill, drains run from every
 * thread and queues hit their backlog bound; one record carries enough
 * depend items to need a chunk of its own.  The profile written by
 * online_finish must give the work and span known by construction.
 *
 * usage: test_online DIR [unbegun]
 *   unbegun: a record names a node nobody begins; finishing must fail and
 *   say which.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "online.h"
#include "trace.h"

#define WORKERS 4
#define W_PER_WORKER 100000u
#define BIG_DEPS 6000u /* 96 KB of depend items: more than one chunk */

static int failures;

static void check(int ok, const char *what)
{
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok)
        failures++;
}

#define SCOPE_ID 1u
#define LOC_SCOPE 1u
#define LOC_SHARE 2u
#define LOC_WORK 3u

static uint64_t worker_id(unsigned i, unsigned seq)
{
    return ((uint64_t)(i + 1) << 40) | seq;
}

static void *worker(void *arg)
{
    unsigned i = (unsigned)(uintptr_t)arg; /* 1..WORKERS */
    online_queue *q = online_queue_open(i);
    uint64_t share = worker_id(i, 1);
    uint64_t kids = 0;
    online_begin(q, share, SCOPE_ID, i - 1, OSPG_P, LOC_SHARE, 0, 0, NULL, 0);
    if (i == 1) {
        /* a task whose BEGIN does not fit in a normal chunk */
        static ospg_dep deps[BIG_DEPS];
        for (unsigned k = 0; k < BIG_DEPS; k++) {
            deps[k].addr = 0x1000 + 8 * k;
            deps[k].type = OSPG_DEP_IN;
        }
        uint64_t task = worker_id(i, 2);
        online_begin(q, task, share, kids++, OSPG_P, LOC_SHARE, 0, 0, deps,
                     BIG_DEPS);
        online_work(q, task, 0, 7, LOC_WORK, 0, 0);
        online_end(q, task, 1, OSPG_LOC_NONE);
    }
    for (unsigned k = 0; k < W_PER_WORKER; k++)
        online_work(q, share, kids++, i, LOC_WORK, 0, 0);
    online_end(q, share, kids, OSPG_LOC_NONE);
    return NULL;
}

/* The program row of DIR/profile.csv. */
static int read_program(const char *dir, unsigned long long *work,
                        unsigned long long *span)
{
    char path[4200], line[1024];
    snprintf(path, sizeof(path), "%s/profile.csv", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int found = 0;
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "program,program,1,%llu,%llu,", work, span) == 2)
            found = 1;
    fclose(f);
    return found ? 0 : -1;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_online DIR [unbegun]\n");
        return 2;
    }
    int unbegun = argc > 2 && !strcmp(argv[2], "unbegun");
    check(online_setup(NULL, 0) == 0, "setup");
    online_loc(LOC_SCOPE, "parallel", "scope.c:1");
    online_loc(LOC_SHARE, "parallel", "share.c:2");
    online_loc(LOC_WORK, "region", "work.c:3");
    online_queue *q0 = online_queue_open(0);
    online_begin(q0, SCOPE_ID, TRACE_ROOT_ID, 0, OSPG_S, LOC_SCOPE, 0, 0,
                 NULL, 0);
    pthread_t th[WORKERS];
    for (unsigned i = 1; i <= WORKERS; i++)
        pthread_create(&th[i - 1], NULL, worker, (void *)(uintptr_t)i);
    for (unsigned i = 0; i < WORKERS; i++)
        pthread_join(th[i], NULL);
    online_end(q0, SCOPE_ID, WORKERS, OSPG_LOC_NONE);
    if (unbegun)
        online_work(q0, 999, 0, 5, LOC_WORK, 0, 0);
    char err[1024];
    int rc = online_finish(1, 0, argv[1], err, sizeof(err));
    if (unbegun) {
        printf("finish: %s\n", err);
        check(rc != 0, "a record naming an unbegun node fails the profile");
        check(strstr(err, "thread 0") && strstr(err, "node 999"),
              "the error names the queue and the node");
    } else {
        if (rc)
            printf("finish: %s\n", err);
        check(rc == 0, "profile written");
        unsigned long long work = 0, span = 0;
        check(read_program(argv[1], &work, &span) == 0, "program row read");
        unsigned long long want_work =
            7ull + (unsigned long long)W_PER_WORKER * WORKERS *
                       (WORKERS + 1) / 2;
        unsigned long long want_span =
            (unsigned long long)W_PER_WORKER * WORKERS;
        printf("work %llu (expected %llu), span %llu (expected %llu)\n",
               work, want_work, span, want_span);
        check(work == want_work, "work is the sum of every W-node");
        check(span == want_span, "span is the longest share");
    }
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
