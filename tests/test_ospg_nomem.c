/* test_ospg_nomem.c - the builder out of memory: every allocation of a
 * small what-if build made to fail in turn, each in a child process.  A
 * failure must end in an error code (or in uthash's own exit on a failed
 * table allocation, older than this test), never in a crash: a node
 * half-expanded from uniform to every scenario must still be freed
 * cleanly (under ASan, a bad free aborts).
 *
 * malloc, calloc and realloc are wrapped at link time (-Wl,--wrap). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ospg.h"

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t n);

static long fail_at = -1; /* allocations to let through before one fails */
static int failed;        /* the failure happened */

static int fail_now(void)
{
    if (fail_at < 0 || fail_at-- > 0)
        return 0;
    failed = 1;
    return 1;
}

void *__wrap_malloc(size_t n)
{
    return fail_now() ? NULL : __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t size)
{
    return fail_now() ? NULL : __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t n)
{
    return fail_now() ? NULL : __real_realloc(p, n);
}

static const uint32_t region_one[] = {1};

/* The build: a root whose serial chain crosses more locations than a
 * map holds inline, then work in region 1 (scaled in scenarios 1 and 2:
 * the root expands), a task with the same under it, and the end.
 * Returns 0 when every call succeeded and the span is the expected one. */
static int build(void)
{
    ospg_scenario sc[3];
    memset(sc, 0, sizeof(sc));
    for (int s = 1; s < 3; s++) {
        sc[s].factor = 2.0 * s;
        sc[s].regions = region_one;
        sc[s].nregions = 1;
    }
    ospg *g = ospg_new(3, sc);
    if (!g)
        return -1;
    ospg_node *root = ospg_root(g);
    uint64_t idx = 0;
    int rc = 0;
    for (uint32_t loc = 11; loc <= 14 && !rc; loc++)
        rc = ospg_work(g, root, idx++, 100, loc, 0, 0);
    if (!rc)
        rc = ospg_work(g, root, idx++, 100, 15, 1, 0);
    ospg_node *task = NULL;
    if (!rc && !(task = ospg_begin(g, root, idx++, OSPG_P, 20, NULL, NULL, 0,
                                   &rc)))
        rc = rc ? rc : -1;
    if (!rc)
        rc = ospg_work(g, task, 0, 400, 21, 0, 0);
    if (!rc)
        rc = ospg_work(g, task, 1, 400, 22, 1, 0);
    if (!rc)
        rc = ospg_end(g, task, 2, OSPG_LOC_NONE);
    if (!rc)
        rc = ospg_work(g, root, idx++, 100, 16, 0, 0);
    ospg_profile p;
    memset(&p, 0, sizeof(p));
    if (!rc)
        rc = ospg_finish(g, idx, &p);
    /* measured: 500 + 800 in series after the prefix; scenario 1: the
     * region halves 100 and 400 */
    if (!rc && (p.span[0] != 1300 || p.span[1] != 1050))
        rc = -2;
    if (!rc)
        ospg_profile_free(&p);
    ospg_free(g);
    return rc;
}

int main(void)
{
    if (build() != 0) {
        printf("the build without failures did not give the expected span\n");
        return 1;
    }
    int crashes = 0, points = 0;
    for (long k = 0; k < 100000; k++) {
        fflush(stdout);
        pid_t pid = fork();
        if (pid < 0) {
            perror("fork");
            return 1;
        }
        if (!pid) {
            fail_at = k;
            int rc = build();
            /* 3: every allocation went through (no more points) */
            _exit(!failed ? 3 : rc != 0 ? 0 : 2);
        }
        int st;
        if (waitpid(pid, &st, 0) != pid) {
            perror("waitpid");
            return 1;
        }
        if (WIFEXITED(st) && WEXITSTATUS(st) == 3)
            break;
        points++;
        /* 0: an error code; 255: uthash's exit(-1); anything else is a
         * crash (a sanitizer reports and exits 1) or a failure unseen */
        if (WIFSIGNALED(st)) {
            printf("allocation %ld failing: killed by signal %d\n", k,
                   WTERMSIG(st));
            crashes++;
        } else if (WEXITSTATUS(st) != 0 && WEXITSTATUS(st) != 255) {
            printf("allocation %ld failing: exit status %d%s\n", k,
                   WEXITSTATUS(st),
                   WEXITSTATUS(st) == 2 ? " (the build said it succeeded)"
                                        : "");
            crashes++;
        }
    }
    printf("%d allocation failures tried, %d crashed or went unnoticed\n",
           points, crashes);
    return crashes || points < 10;
}
