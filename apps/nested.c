/* nested.c - nested parallel regions.
 *
 *   OMP_MAX_ACTIVE_LEVELS=2 nested     (inner regions active)
 *   OMP_MAX_ACTIVE_LEVELS=1 nested     (inner regions serialized)
 *
 * An outer region of 2 threads, each running an inner region of 4
 * threads; every inner thread runs the same body (replicated work, as a
 * parallel region does).  Expected: with both levels active the inner
 * parallel row shows parallelism ~4 with 2 instances and the outer ~8
 * (2 x 4); with the inner level serialized each inner region is a team of
 * one (row parallelism 1) and the outer ~2.  The program's parallelism is
 * lower by the serial set-up.  With clang -O2 the inner region's runtime
 * call is a tail call (its return address lies in libomp); its row is
 * named by the outlined body, which clang gives the directive's line.
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
