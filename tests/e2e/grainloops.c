/* grainloops.c - loops whose chunking and load balance are known, for
 * tests/e2e_grain_graph.sh.
 *
 *   "dynamic": schedule(dynamic, 10) over 1000 iterations of 10 us:
 *   exactly 100 chunks, whichever thread takes them, each far longer
 *   than the code between two chunks (a chunk lies on the critical path).
 *   "static": schedule(static) over 2 x T iterations of a team of T
 *   threads: one chunk per thread, the first thread's iterations 3 times
 *   as long.  Each thread times its own chunk (selftime.h) and the program
 *   prints the load balance it measured, max over mean of the threads'
 *   work: "whatif-balance B".  Each thread also prints the wall time
 *   from its first iteration's start to its last one's end,
 *   "whatif-wall static NS": the chunk's grain holds it.
 *   "chunked": schedule(static, 2) over 8 x T iterations: 4 chunks per
 *   thread, which libomp does not report one by one (whatif rebuilds
 *   them); the wall time of each thread's part, "whatif-wall chunked NS".
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

int main(void)
{
    static double acc[1000];
#pragma omp parallel for schedule(dynamic, 10)
    for (int i = 0; i < 1000; i++) {
        st_burn(0.01);
        acc[i] += i * 0.5;
    }

    int T = omp_get_max_threads();
    uint64_t *took = calloc((size_t)T, sizeof(*took));
#pragma omp parallel num_threads(T)
    {
        uint64_t mine = 0, first = 0, last = 0;
#pragma omp for schedule(static)
        for (int i = 0; i < 2 * T; i++) {
            if (!first)
                first = wall_now();
            mine += st_burn(i < 2 ? 60 : 20);
            last = wall_now();
        }
        took[omp_get_thread_num()] = mine;
        fprintf(stderr, "whatif-wall static %llu\n",
                (unsigned long long)(last - first));
    }
#pragma omp parallel num_threads(T)
    {
        uint64_t first = 0, last = 0;
#pragma omp for schedule(static, 2)
        for (int i = 0; i < 8 * T; i++) {
            if (!first)
                first = wall_now();
            st_burn(2);
            last = wall_now();
        }
        fprintf(stderr, "whatif-wall chunked %llu\n",
                (unsigned long long)(last - first));
    }
    uint64_t total = 0, most = 0;
    for (int t = 0; t < T; t++) {
        total += took[t];
        if (took[t] > most)
            most = took[t];
    }
    fprintf(stderr, "whatif-balance %.4f\n",
            (double)most / ((double)total / T));
    printf("%g\n", acc[999]);
    free(took);
    return 0;
}
