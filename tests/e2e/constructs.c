/* constructs.c - one OpenMP construct per case, each with a known graph.
 *
 *   constructs CASE C      (C: milliseconds of CPU per unit of work)
 *
 * Every case is: burn(S) serially, the construct, burn(S) serially, with
 * S = C.  Each "unit" below burns C ms of thread CPU time, so with the
 * cputime metric the work W and span P of the construct follow from the
 * case alone (T = team size; tests/e2e_constructs.sh holds the numbers):
 *
 *   parallel      4 threads, one unit each                W 4   P 1
 *   barrier       4 threads, unit, barrier, unit          W 8   P 2
 *   nested        2 x 2 threads, one unit each            W 4   P 1 (active)
 *                                                         W 2   P 1 (serialized)
 *   if0           parallel if(0), one unit                W 1   P 1
 *   dynamic       12 iterations of one unit, dynamic,1    W 12  P 1
 *   static        12 iterations, schedule(static)         W 12  P 12/T
 *   nowait        4 threads: dynamic,1 loop of 8 nowait,
 *                 then one unit per thread                W 12  P 1
 *   sections      4 sections of one unit                  W 4   P 4/T
 *   single        one unit in single                      W 1   P 1
 *   masked        one unit in masked                      W 1   P 1
 *   critical      4 threads, one unit in critical each    W 4   P 1
 *   lock          4 threads, one unit under a lock each   W 4   P 1
 *   tasks         single creates 12 tasks of one unit     W 12  P 1
 *   taskgroup     the same inside a taskgroup             W 12  P 1
 *   undeferred    12 tasks with if(0)                     W 12  P 12
 *   chain         12 tasks, depend(inout: x)              W 12  P 12
 *   diamond       a -> b, c -> d through depend           W 4   P 3
 *   mixed_deps    a(out x), b (no depend), c(in x)        W 3   P 2
 *   taskloop      taskloop grainsize(1), 12 iterations    W 12  P 1
 *   tree          binary task tree, 16 leaves of a unit   W 16  P 1
 *   task_in_loop  dynamic,1 loop of 4; each chunk makes
 *                 2 tasks of a unit                       W 8   P 1
 *   reduction     dynamic,1 loop of 12 with reduction(+)  W 12  P 1
 *   static1       12 iterations, schedule(static, 1)      W 12  P 1
 *   static2       12 iterations, schedule(static, 2)      W 12  P 2
 *   runtime       schedule(runtime), OMP_SCHEDULE=dynamic,1 W 12 P 1
 *   collapse      collapse(2) 3 x 4, dynamic,1            W 12  P 1
 *   ordered       ordered dynamic,1 loop of 6: a unit, then
 *                 a unit in ordered (ordered is a W-node,
 *                 like critical)                          W 12  P 2
 *   untied        12 untied tasks                         W 12  P 1
 *   mergeable     12 mergeable tasks                      W 12  P 1
 *   final         a final task making 4 tasks (included,
 *                 so in series)                           W 4   P 4
 *   exit          exit(3) inside a region after a barrier: the profile
 *                 still comes (marked incomplete), status 3 kept
 *   teams         a teams construct: reported unsupported, no profile
 */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double unit_ms;
static volatile unsigned long sink;

static void burn_ms(double ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    long target = (long)(ms * 1e6);
    for (;;) {
        for (int i = 0; i < 2000; i++)
            sink += (unsigned long)i * 2654435761u;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) >=
            target)
            return;
    }
}

static void unit(void)
{
    burn_ms(unit_ms);
}

static void tree(int depth)
{
    if (depth == 0) {
        unit();
        return;
    }
#pragma omp task
    tree(depth - 1);
#pragma omp task
    tree(depth - 1);
#pragma omp taskwait
}

static int run(const char *c)
{
    int x = 0, y1 = 0, y2 = 0;
    if (!strcmp(c, "parallel")) {
#pragma omp parallel num_threads(4)
        unit();
    } else if (!strcmp(c, "barrier")) {
#pragma omp parallel num_threads(4)
        {
            unit();
#pragma omp barrier
            unit();
        }
    } else if (!strcmp(c, "nested")) {
#pragma omp parallel num_threads(2)
#pragma omp parallel num_threads(2)
        unit();
    } else if (!strcmp(c, "if0")) {
        int no = 0;
#pragma omp parallel if (no)
        unit();
    } else if (!strcmp(c, "dynamic")) {
#pragma omp parallel for schedule(dynamic, 1)
        for (int i = 0; i < 12; i++)
            unit();
    } else if (!strcmp(c, "static")) {
#pragma omp parallel for schedule(static)
        for (int i = 0; i < 12; i++)
            unit();
    } else if (!strcmp(c, "nowait")) {
#pragma omp parallel num_threads(4)
        {
#pragma omp for schedule(dynamic, 1) nowait
            for (int i = 0; i < 8; i++)
                unit();
            unit();
        }
    } else if (!strcmp(c, "sections")) {
#pragma omp parallel sections
        {
#pragma omp section
            unit();
#pragma omp section
            unit();
#pragma omp section
            unit();
#pragma omp section
            unit();
        }
    } else if (!strcmp(c, "single")) {
#pragma omp parallel
#pragma omp single
        unit();
    } else if (!strcmp(c, "masked")) {
#pragma omp parallel
#pragma omp masked
        unit();
    } else if (!strcmp(c, "critical")) {
#pragma omp parallel num_threads(4)
#pragma omp critical
        unit();
    } else if (!strcmp(c, "lock")) {
        omp_lock_t l;
        omp_init_lock(&l);
#pragma omp parallel num_threads(4)
        {
            omp_set_lock(&l);
            unit();
            omp_unset_lock(&l);
        }
        omp_destroy_lock(&l);
    } else if (!strcmp(c, "tasks")) {
#pragma omp parallel
#pragma omp single
        {
            for (int i = 0; i < 12; i++) {
#pragma omp task
                unit();
            }
#pragma omp taskwait
        }
    } else if (!strcmp(c, "taskgroup")) {
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup
        {
            for (int i = 0; i < 12; i++) {
#pragma omp task
                unit();
            }
        }
    } else if (!strcmp(c, "undeferred")) {
#pragma omp parallel
#pragma omp single
        {
            for (int i = 0; i < 12; i++) {
#pragma omp task if (0)
                unit();
            }
        }
    } else if (!strcmp(c, "chain")) {
#pragma omp parallel
#pragma omp single
        {
            for (int i = 0; i < 12; i++) {
#pragma omp task depend(inout : x)
                unit();
            }
#pragma omp taskwait
        }
    } else if (!strcmp(c, "diamond")) {
#pragma omp parallel
#pragma omp single
        {
#pragma omp task depend(out : x)
            unit();
#pragma omp task depend(in : x) depend(out : y1)
            unit();
#pragma omp task depend(in : x) depend(out : y2)
            unit();
#pragma omp task depend(in : y1, y2)
            unit();
#pragma omp taskwait
        }
    } else if (!strcmp(c, "mixed_deps")) {
#pragma omp parallel
#pragma omp single
        {
#pragma omp task depend(out : x)
            unit();
#pragma omp task
            unit();
#pragma omp task depend(in : x)
            unit();
#pragma omp taskwait
        }
    } else if (!strcmp(c, "taskloop")) {
#pragma omp parallel
#pragma omp single
#pragma omp taskloop grainsize(1)
        for (int i = 0; i < 12; i++)
            unit();
    } else if (!strcmp(c, "tree")) {
#pragma omp parallel
#pragma omp single
        tree(4);
    } else if (!strcmp(c, "task_in_loop")) {
#pragma omp parallel for schedule(dynamic, 1)
        for (int i = 0; i < 4; i++) {
#pragma omp task
            unit();
#pragma omp task
            unit();
        }
    } else if (!strcmp(c, "reduction")) {
        long sum = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : sum)
        for (int i = 0; i < 12; i++) {
            unit();
            sum += i;
        }
        if (sum != 66)
            return 1;
    } else if (!strcmp(c, "static1")) {
#pragma omp parallel for schedule(static, 1)
        for (int i = 0; i < 12; i++)
            unit();
    } else if (!strcmp(c, "static2")) {
#pragma omp parallel for schedule(static, 2)
        for (int i = 0; i < 12; i++)
            unit();
    } else if (!strcmp(c, "runtime")) {
#pragma omp parallel for schedule(runtime)
        for (int i = 0; i < 12; i++)
            unit();
    } else if (!strcmp(c, "collapse")) {
#pragma omp parallel for collapse(2) schedule(dynamic, 1)
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 4; j++)
                unit();
    } else if (!strcmp(c, "ordered")) {
#pragma omp parallel for ordered schedule(dynamic, 1)
        for (int i = 0; i < 6; i++) {
            unit();
#pragma omp ordered
            unit();
        }
    } else if (!strcmp(c, "untied")) {
#pragma omp parallel
#pragma omp single
        {
            for (int i = 0; i < 12; i++) {
#pragma omp task untied
                unit();
            }
#pragma omp taskwait
        }
    } else if (!strcmp(c, "mergeable")) {
#pragma omp parallel
#pragma omp single
        {
            for (int i = 0; i < 12; i++) {
#pragma omp task mergeable
                unit();
            }
#pragma omp taskwait
        }
    } else if (!strcmp(c, "final")) {
#pragma omp parallel
#pragma omp single
        {
#pragma omp task final(1)
            {
                for (int i = 0; i < 4; i++) {
#pragma omp task
                    unit();
                }
            }
#pragma omp taskwait
        }
    } else if (!strcmp(c, "exit")) {
        /* exit() inside the region, after a barrier: exit status 3 */
#pragma omp parallel num_threads(2)
        {
            unit();
#pragma omp barrier
            if (omp_get_thread_num() == 0)
                exit(3);
            unit();
        }
    } else if (!strcmp(c, "teams")) {
        /* not supported: the profiler must refuse, not mis-profile */
#pragma omp teams num_teams(2)
        unit();
    } else {
        fprintf(stderr, "constructs: unknown case %s\n", c);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: constructs CASE C_MS\n");
        return 2;
    }
    unit_ms = atof(argv[2]);
    burn_ms(unit_ms);
    int rc = run(argv[1]);
    burn_ms(unit_ms);
    printf("ok %s\n", argv[1]);
    return rc;
}
