/* gcccancel.c - a thread cancels the parallel region before a barrier the
 * others then leave at once (GCC calls libomp's cancellable barrier):
 * the cancelled thread begins no share after that barrier; then a region
 * whose threads pass a cancelled barrier before another has left the
 * barrier before it.  Run with OMP_CANCELLATION=true. */
#include <omp.h>
#include <stdio.h>

#include "selftime.h"

int main(void)
{
    /* not a reduction: a cancelled region combines none; and the code
     * after the barrier runs on no thread */
    uint64_t w = st_burn(2.0);
#pragma omp parallel
    {
        uint64_t own = st_burn(2.0);
#pragma omp atomic
        w += own;
        if (omp_get_thread_num() == 0) {
#pragma omp cancel parallel
        }
#pragma omp barrier
        own = st_burn(2.0);
#pragma omp atomic
        w += own;
    }
    /* a thread cancels between two barriers: the others may leave the
     * second before a slow one has left the first */
#pragma omp parallel num_threads(3)
    {
        uint64_t own = st_burn(1.0);
#pragma omp atomic
        w += own;
#pragma omp barrier
        if (omp_get_thread_num() == 1) {
#pragma omp cancel parallel
        }
#pragma omp barrier
        own = st_burn(1.0);
#pragma omp atomic
        w += own;
    }
    w += st_burn(2.0);
    st_expect_work(w);
    printf("ok\n");
    return 0;
}
