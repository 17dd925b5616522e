/* micro.c - EPCC-style micro-benchmarks: the cost of one construct.
 *
 *   micro CONSTRUCT [REPS]    prints "ns_per_instance X"
 *
 * CONSTRUCT: parallel, barrier, static, static_c (chunk 16), dynamic1,
 * dynamic16, dynamic1024, guided, task, taskwait, taskgroup, critical,
 * fibtree (a tree of FIB_TASKS tasks, each a call of a recursive
 * Fibonacci that waits for its two children: an instance is a tree).
 * Each repetition does one instance (a loop instance has 4096 iterations
 * of a tiny body); the time is the median of 5 batches.
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static volatile int sink;

static void body(void)
{
    sink++;
}

/* fib(FIB_N) makes 2 * F(FIB_N + 1) - 2 tasks */
#define FIB_N 12

static long fib(int n)
{
    long x, y;
    if (n < 2)
        return n;
#pragma omp task shared(x)
    x = fib(n - 1);
#pragma omp task shared(y)
    y = fib(n - 2);
#pragma omp taskwait
    return x + y;
}

static double run(const char *c, int reps)
{
    double t0 = omp_get_wtime();
    if (!strcmp(c, "parallel")) {
        for (int r = 0; r < reps; r++) {
#pragma omp parallel
            body();
        }
    } else if (!strcmp(c, "barrier")) {
#pragma omp parallel
        for (int r = 0; r < reps; r++) {
#pragma omp barrier
        }
    } else if (!strcmp(c, "critical")) {
#pragma omp parallel
        for (int r = 0; r < reps; r++) {
#pragma omp critical
            body();
        }
    } else if (!strcmp(c, "task")) {
#pragma omp parallel
#pragma omp single
        for (int r = 0; r < reps; r++) {
#pragma omp task
            body();
        }
    } else if (!strcmp(c, "taskwait")) {
#pragma omp parallel
#pragma omp single
        for (int r = 0; r < reps; r++) {
#pragma omp task
            body();
#pragma omp taskwait
        }
    } else if (!strcmp(c, "fibtree")) {
#pragma omp parallel
#pragma omp single
        for (int r = 0; r < reps; r++)
            sink += (int)fib(FIB_N);
    } else if (!strcmp(c, "taskgroup")) {
#pragma omp parallel
#pragma omp single
        for (int r = 0; r < reps; r++) {
#pragma omp taskgroup
            {
#pragma omp task
                body();
            }
        }
    } else {
#pragma omp parallel
        for (int r = 0; r < reps; r++) {
            if (!strcmp(c, "static")) {
#pragma omp for schedule(static)
                for (int i = 0; i < 4096; i++)
                    body();
            } else if (!strcmp(c, "static_c")) {
#pragma omp for schedule(static, 16)
                for (int i = 0; i < 4096; i++)
                    body();
            } else if (!strcmp(c, "dynamic1")) {
#pragma omp for schedule(dynamic, 1)
                for (int i = 0; i < 4096; i++)
                    body();
            } else if (!strcmp(c, "dynamic16")) {
#pragma omp for schedule(dynamic, 16)
                for (int i = 0; i < 4096; i++)
                    body();
            } else if (!strcmp(c, "dynamic1024")) {
#pragma omp for schedule(dynamic, 1024)
                for (int i = 0; i < 4096; i++)
                    body();
            } else if (!strcmp(c, "guided")) {
#pragma omp for schedule(guided)
                for (int i = 0; i < 4096; i++)
                    body();
            }
        }
    }
    return omp_get_wtime() - t0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: micro CONSTRUCT [REPS]\n");
        return 2;
    }
    int reps = argc > 2 ? atoi(argv[2]) : 2000;
    double t[5];
    run(argv[1], reps / 10 + 1); /* warm-up */
    for (int b = 0; b < 5; b++)
        t[b] = run(argv[1], reps);
    qsort(t, 5, sizeof(t[0]), cmp);
    printf("ns_per_instance %.1f\n", t[2] / reps * 1e9);
    return 0;
}
