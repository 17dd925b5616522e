/* nested.c - nested parallel regions.
 *
 *   OMP_MAX_ACTIVE_LEVELS=2 nested     (inner regions active)
 *   OMP_MAX_ACTIVE_LEVELS=1 nested     (inner regions serialized)
 *
 * An outer region of 2 threads, each running an inner region of 4
 * threads over an equal share of work.  Expected: with both levels
 * active the program's parallelism approaches 8 (2 x 4) minus the serial
 * set-up; with the inner level serialized each inner region is a team of
 * one and the parallelism approaches 2.  The inner parallel row reports
 * its own parallelism (4 or 1) with 2 instances.
 */
#include <stdio.h>

static volatile double sink;

static void work(int units)
{
    double x = 0;
    for (long k = 0; k < units * 2000000L; k++)
        x += k * 0.5;
    sink = x;
}

int main(void)
{
    work(1);
#pragma omp parallel num_threads(2)
    {
#pragma omp parallel num_threads(4)
        work(4);
    }
    printf("done\n");
    return 0;
}
