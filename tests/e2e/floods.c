/* floods.c - a single that creates many small tasks as fast as it can,
 * whose records arrive ahead of the oldest ones when a thread is kept off
 * its core (tests/e2e_memory.sh).  Cases (argv[1]):
 *   region   10^6 tasks, each one increment inside a what-if region
 *            (its fragments are several W-nodes: each task is a node)
 *   nested   500,000 tasks, each creating one task of one increment and
 *            waiting for it, then one more increment
 * Prints "ok CASE N", N the increments made. */
#include <stdio.h>
#include <string.h>

#include <whatif.h>

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    long done = 0;
    if (!strcmp(c, "region")) {
#pragma omp parallel
#pragma omp single
        for (int i = 0; i < 1000000; i++) {
#pragma omp task
            {
                __WHATIF_BEGIN__;
#pragma omp atomic
                done++;
                __WHATIF_END__;
            }
        }
    } else if (!strcmp(c, "nested")) {
#pragma omp parallel
#pragma omp single
        for (int i = 0; i < 500000; i++) {
#pragma omp task
            {
#pragma omp task
                {
#pragma omp atomic
                    done++;
                }
#pragma omp taskwait
#pragma omp atomic
                done++;
            }
        }
    } else {
        fprintf(stderr, "usage: floods region|nested\n");
        return 2;
    }
    printf("ok %s %ld\n", c, done);
    return 0;
}
