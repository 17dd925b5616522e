/* test_online.c - the on-the-fly builder under real concurrency.
 *
 * Plain pthreads stand in for an OpenMP team (so ThreadSanitizer can check
 * the concurrent builder without an instrumented runtime): the main thread
 * begins a sync scope, each worker begins its own parallel share under it,
 * all shares members of one group (created by whichever worker comes
 * first), and appends many W-nodes; one worker adds a task with thousands
 * of depend items.  The profile written by online_finish must give the
 * work and span known by construction, and the shares one instance.
 *
 * usage: test_online DIR [unbegun]
 *   unbegun: an event names a node whose begin failed; finishing must fail
 *   and say so.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "online.h"
#include "trace.h"

#define WORKERS 4
#define W_PER_WORKER 100000u
#define BIG_DEPS 6000u
#define SHARE_GROUP 77u

static int failures;

static void check(int ok, const char *what)
{
    printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok)
        failures++;
}

#define LOC_SCOPE 1u
#define LOC_SHARE 2u
#define LOC_WORK 3u

static ospg_node *scope;

static void *worker(void *arg)
{
    unsigned i = (unsigned)(uintptr_t)arg; /* 1..WORKERS */
    online_thread *t = online_thread_open(i);
    uint64_t kids = 0;
    ospg_node *share = online_begin(t, scope, i - 1, OSPG_P, LOC_SHARE,
                                    SHARE_GROUP, scope, NULL, 0);
    if (i == 1) {
        static ospg_dep deps[BIG_DEPS];
        for (unsigned k = 0; k < BIG_DEPS; k++) {
            deps[k].addr = 0x1000 + 8 * k;
            deps[k].type = OSPG_DEP_IN;
        }
        ospg_node *task = online_begin(t, share, kids++, OSPG_P, LOC_SHARE, 0,
                                       NULL, deps, BIG_DEPS);
        online_work(t, task, 0, 7, LOC_WORK, 0, 0);
        online_end(t, task, 1, OSPG_LOC_NONE);
    }
    for (unsigned k = 0; k < W_PER_WORKER; k++)
        online_work(t, share, kids++, i, LOC_WORK, 0, 0);
    online_end(t, share, kids, OSPG_LOC_NONE);
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

/* The instances of the row located at where, -1 if none. */
static long long read_instances(const char *dir, const char *where)
{
    char path[4200], line[1024];
    snprintf(path, sizeof(path), "%s/profile.csv", dir);
    FILE *f = fopen(path, "r");
    long long n = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof(line), f)) {
        char *comma = strchr(line, ',');
        if (comma && !strncmp(line, where, strlen(where)) &&
            comma == line + strlen(where))
            sscanf(strchr(comma + 1, ',') + 1, "%lld", &n);
    }
    fclose(f);
    return n;
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
    online_thread *t0 = online_thread_open(0);
    scope = online_begin(t0, online_root(), 0, OSPG_S, LOC_SCOPE, 0, NULL,
                         NULL, 0);
    check(scope != NULL, "scope begun");
    pthread_t th[WORKERS];
    for (unsigned i = 1; i <= WORKERS; i++)
        pthread_create(&th[i - 1], NULL, worker, (void *)(uintptr_t)i);
    for (unsigned i = 0; i < WORKERS; i++)
        pthread_join(th[i], NULL);
    online_end(t0, scope, WORKERS, OSPG_LOC_NONE);
    if (unbegun)
        online_work(t0, NULL, 0, 5, LOC_WORK, 0, 0);
    char err[1024];
    int rc = online_finish(1, 0, argv[1], err, sizeof(err));
    if (unbegun) {
        printf("finish: %s\n", err);
        check(rc != 0, "an event naming an unbegun node fails the profile");
        check(strstr(err, "begin failed") != NULL, "the error says why");
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
        check(read_instances(argv[1], "share.c:2") == 1,
              "the group of shares is one instance");
    }
    printf("%s\n", failures ? "FAILED" : "all passed");
    return failures ? 1 : 0;
}
