/* schedules.c - one imbalanced loop under five schedules.
 *
 *   schedules [N]     (default 4000 iterations; iteration i costs ~i)
 *
 * Expected profile (per loop row, each its own line): schedule(static)
 * gives one chunk per thread, so its parallelism is capped by the thread
 * count and lowered further by the imbalance (the last block is the
 * heaviest); static,16 / dynamic,16 / guided make many chunks and reach a
 * far higher parallelism; dynamic,1 the highest.  The parallelism of the
 * static rows changes with the thread count, the others do not.
 */
#include <stdio.h>
#include <stdlib.h>

static volatile double sink;

static void work(int i)
{
    double x = 0;
    for (int k = 0; k < i * 40; k++)
        x += k * 0.5;
    sink = x;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 4000;
#pragma omp parallel
    {
#pragma omp for schedule(static)
        for (int i = 0; i < n; i++)
            work(i);
#pragma omp for schedule(static, 16)
        for (int i = 0; i < n; i++)
            work(i);
#pragma omp for schedule(dynamic, 16)
        for (int i = 0; i < n; i++)
            work(i);
#pragma omp for schedule(guided)
        for (int i = 0; i < n; i++)
            work(i);
#pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < n; i++)
            work(i);
    }
    printf("done %d\n", n);
    return 0;
}
