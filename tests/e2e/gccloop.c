/* gccloop.c - a parallel region whose whole body is one loop, which GCC
 * merges into one runtime call (GOMP_parallel_loop_*): every thread's
 * chunks belong to one loop row.  Prints the work it measured. */
#include <omp.h>
#include <stdio.h>

#include "selftime.h"

int main(void)
{
    uint64_t w = st_burn(2.0);
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 1) reduction(+ : w)
        for (int i = 0; i < 8; i++)
            w += st_burn(2.0);
    }
    st_expect_work(w);
    printf("ok\n");
    return 0;
}
