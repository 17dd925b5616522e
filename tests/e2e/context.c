/* context.c - constructs reached from several call paths, for --context
 * (tests/e2e_context.sh).  A loop in a header (context_kern.h) inlined
 * into two callers; a function of tasks called from two places; a
 * recursion of tasks, whose context must not grow with its depth; a
 * dynamic loop in the header called from two more places.  The
 * program times the work under each call site itself and prints
 * "whatif-ctx TAG NS" on stderr. */
#include <stdio.h>

#include "context_kern.h"

static uint64_t task_took;

__attribute__((noinline)) static void tasks(int n, double ms)
{
    task_took = 0;
#pragma omp parallel /* TASKS_PAR */
#pragma omp single
    for (int i = 0; i < n; i++) {
#pragma omp task /* TASK */
        {
            uint64_t t = st_burn(ms);
#pragma omp atomic
            task_took += t;
        }
    }
}

static void rec(int depth)
{
    if (depth == 0) {
        st_burn(0.05);
        return;
    }
#pragma omp task /* REC */
    rec(depth - 1);
#pragma omp task
    rec(depth - 1);
#pragma omp taskwait
}

__attribute__((noinline)) static uint64_t site_a(void)
{
    return kern_loop(8, 2); /* SITE_A */
}

__attribute__((noinline)) static uint64_t site_b(void)
{
    return kern_loop(8, 6); /* SITE_B */
}

__attribute__((noinline)) static uint64_t site_c(void)
{
    return kern_dyn(8, 2); /* SITE_C */
}

__attribute__((noinline)) static uint64_t site_d(void)
{
    return kern_dyn(8, 4); /* SITE_D */
}

int main(void)
{
    uint64_t a = 0, b = 0, c = 0, d = 0, ta = 0, tb = 0;
    for (int r = 0; r < 3; r++) {
        a += site_a();
        b += site_b();
        c += site_c();
        d += site_d();
        tasks(16, 1); /* TASKS_A */
        ta += task_took;
        tasks(16, 3); /* TASKS_B */
        tb += task_took;
    }
#pragma omp parallel
#pragma omp single
    rec(6);
    fprintf(stderr, "whatif-ctx SITE_A %llu\nwhatif-ctx SITE_B %llu\n"
                    "whatif-ctx SITE_C %llu\nwhatif-ctx SITE_D %llu\n"
                    "whatif-ctx TASKS_A %llu\nwhatif-ctx TASKS_B %llu\n",
            (unsigned long long)a, (unsigned long long)b,
            (unsigned long long)c, (unsigned long long)d,
            (unsigned long long)ta, (unsigned long long)tb);
    return 0;
}
