/* waiting.c - tasks that wait at their taskwait while their child runs on
 * the other thread, for tests/e2e_grain_graph.sh.
 *
 * K times (default 10), a task creates a child of 20 ms of CPU, works 3
 * ms itself, then waits for the child at a taskwait.  With two threads
 * the other one has long taken the child: the waiting task's thread runs
 * nothing until the child ends.  The program times each such wait on
 * CLOCK_MONOTONIC (the trace's clock), where the child did run on the
 * other thread, and prints it: "whatif-wait START END" (ns).
 *
 *   waiting [K]
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>

#include "selftime.h"

static uint64_t wall_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

int main(int argc, char **argv)
{
    int k = argc > 1 ? atoi(argv[1]) : 10;
#pragma omp parallel num_threads(2)
#pragma omp single
    for (int i = 0; i < k; i++) {
#pragma omp task
        {
            int child_on = -1, me = omp_get_thread_num();
#pragma omp task shared(child_on)
            {
                child_on = omp_get_thread_num();
                st_burn(20);
            }
            st_burn(3);
            uint64_t t0 = wall_now();
#pragma omp taskwait
            uint64_t t1 = wall_now();
            if (child_on != me)
                fprintf(stderr, "whatif-wait %llu %llu\n",
                        (unsigned long long)t0, (unsigned long long)t1);
        }
#pragma omp taskwait
    }
    printf("%d tasks waited\n", k);
    return 0;
}
