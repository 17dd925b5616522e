/* grains.c - every task and chunk counted (tests/e2e_grains.sh).
 *
 *   grains fib N        fib(N) with a task per call, no cutoff: tiny tasks
 *   grains empty        20000 tasks that do nothing
 *   grains coarse       100 tasks of 2 ms each, and 40 undeferred ones
 *   grains outlier      a dynamic loop of 16 chunks of 1 ms, one of 8 ms
 *   grains loops        a dynamic loop of 7-iteration chunks over 1000
 *                       iterations and a static one of 10-iteration chunks
 *
 * It counts what it created and times the coarse tasks' and the dynamic
 * chunks' code itself; on stderr:
 *   whatif-grains NAME COUNT [NS]   (NS: their measured work, summed)
 */
#include <omp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "selftime.h"

static _Atomic uint64_t fib_a, fib_b, coarse_n, coarse_ns, undef_n,
    dyn_n, dyn_ns;
static uint64_t empty_n;

static long fib(int n)
{
    if (n < 2)
        return n;
    long a, b;
#pragma omp task shared(a) /* FIB_A */
    {
        fib_a++;
        a = fib(n - 1);
    }
#pragma omp task shared(b) /* FIB_B */
    {
        fib_b++;
        b = fib(n - 2);
    }
#pragma omp taskwait
    return a + b;
}

static void coarse(void)
{
#pragma omp parallel
#pragma omp single
    {
        for (int i = 0; i < 100; i++)
#pragma omp task /* COARSE */
        {
            uint64_t ns = st_burn(2);
            coarse_n++;
            coarse_ns += ns;
        }
        for (int i = 0; i < 40; i++)
#pragma omp task if (0) /* UNDEFERRED */
            undef_n++;
    }
}

static void loops(void)
{
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 7) /* DYNAMIC */
        for (int i = 0; i < 1000; i++) {
            uint64_t ns = st_burn(0.05);
            dyn_ns += ns;
            if (i % 7 == 0)
                dyn_n++;
        }
#pragma omp for schedule(static, 10) /* STATIC */
        for (int i = 0; i < 1000; i++)
            st_sink += (unsigned long)i;
    }
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "loops";
    if (!strcmp(c, "fib")) {
        long r = 0;
        int n = argc > 2 ? atoi(argv[2]) : 20;
#pragma omp parallel
#pragma omp single
        r = fib(n);
        printf("fib %ld\n", r);
        fprintf(stderr, "whatif-grains FIB_A %llu\n",
                (unsigned long long)fib_a);
        fprintf(stderr, "whatif-grains FIB_B %llu\n",
                (unsigned long long)fib_b);
    } else if (!strcmp(c, "outlier")) {
#pragma omp parallel for schedule(dynamic, 1) /* OUTLIER */
        for (int i = 0; i < 16; i++)
            st_burn(i == 5 ? 8 : 1);
        printf("outlier\n");
    } else if (!strcmp(c, "empty")) {
#pragma omp parallel
#pragma omp single
        for (int i = 0; i < 20000; i++) {
#pragma omp task /* EMPTY */
            {
            }
            empty_n++;
        }
        printf("empty\n");
        fprintf(stderr, "whatif-grains EMPTY %llu\n",
                (unsigned long long)empty_n);
    } else if (!strcmp(c, "coarse")) {
        coarse();
        printf("coarse\n");
        fprintf(stderr, "whatif-grains COARSE %llu %llu\n",
                (unsigned long long)coarse_n, (unsigned long long)coarse_ns);
        fprintf(stderr, "whatif-grains UNDEFERRED %llu\n",
                (unsigned long long)undef_n);
    } else {
        loops();
        printf("loops\n");
        fprintf(stderr, "whatif-grains DYNAMIC %llu %llu\n",
                (unsigned long long)dyn_n, (unsigned long long)dyn_ns);
        fprintf(stderr, "whatif-grains STATIC 100\n");
    }
    return 0;
}
