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
 *                 a unit in ordered (the ordered blocks
 *                 chain in iteration order)               W 12  P 7
 *   doacross      dynamic,1 loop of 6: sink(i-1), a unit,
 *                 source: a chain                         W 6   P 6
 *   doacross2     dynamic,1 loop of 8: a unit, sink(i-2),
 *                 a unit, source: two chains of 4          W 16  P 5
 *   untied        12 untied tasks                         W 12  P 1
 *   mergeable     12 mergeable tasks                      W 12  P 1
 *   final         a final task making 4 tasks (included,
 *                 so in series)                           W 4   P 4
 *   exit          exit(3) inside a region after a barrier: the profile
 *                 still comes (marked incomplete), status 3 kept
 *   teams         a teams construct: reported unsupported, no profile
 * Regressions (each once a wrong profile or a crash):
 *   tg_deep       taskgroups nested 6 deep in one task, a task of a unit
 *                 in each, a unit innermost                W 7   P 1
 *   empty_iter    8 tasks with an empty depend iterator    W 8   P 1
 *   twdep         a(out x), b(in y), taskwait depend(in: x), a unit
 *                 (modeled as a full taskwait)             W 3   P 2
 *   detach        a detached task fulfilling its event     W 1   P 1
 *   testlock      4 threads, omp_test_lock on their own lock, a unit W 4 P 1
 *   nestlock      4 threads, a nest lock taken twice, a unit  W 4   P 1
 *   tgwait        a taskgroup of 2 tasks (its wait is no work) W 2  P 1
 *   taskred       parallel reduction(task, +): single makes 4
 *                 in_reduction tasks of a unit (the runtime's
 *                 own taskgroup, at the region's line)        W 4   P 1
 *   tgbar         taskgroup { omp for of 2 } in 2 threads  W 2   P 1
 *   allmem        a(out x), b(out y), c(inout: omp_all_memory),
 *                 d(in x): c after a and b, d after c       W 4   P 3
 *   nogroup       taskgroup { taskloop nogroup of 4 }      W 4   P 1
 *   manylocks     2 threads, 40 locks held around a unit   W 2   P 1
 *   orphans       100000 orphaned (serial) loops, then 1 unit: memory
 *                 stays bounded (prints the peak RSS)       W 1   P 1
 */
#include <omp.h>
#include <sys/resource.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "burn.h"
#include "selftime.h"
#include <stdatomic.h>

static double unit_ms;
static _Atomic unsigned long long measured_ns; /* of every unit, timed */
static _Atomic unsigned long long longest_ns;  /* the case's longest unit */

static void unit(void)
{
    unsigned long long ns = st_burn(unit_ms);
    measured_ns += ns;
    unsigned long long seen = longest_ns;
    while (ns > seen && !atomic_compare_exchange_weak(&longest_ns, &seen, ns))
        ;
}

static void tg_deep(int depth)
{
    if (depth == 0) {
        unit();
        return;
    }
#pragma omp taskgroup
    {
#pragma omp task
        unit();
        tg_deep(depth - 1);
    }
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
    } else if (!strcmp(c, "doacross")) {
#pragma omp parallel for ordered(1) schedule(dynamic, 1)
        for (int i = 0; i < 6; i++) {
#pragma omp ordered depend(sink : i - 1)
            unit();
#pragma omp ordered depend(source)
        }
    } else if (!strcmp(c, "doacross2")) {
#pragma omp parallel for ordered(1) schedule(dynamic, 1)
        for (int i = 0; i < 8; i++) {
            unit();
#pragma omp ordered depend(sink : i - 2)
            unit();
#pragma omp ordered depend(source)
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
    } else if (!strcmp(c, "tg_deep")) {
#pragma omp parallel
#pragma omp single
        tg_deep(6);
    } else if (!strcmp(c, "empty_iter")) {
        int n = 0, a[4] = {0};
#pragma omp parallel
#pragma omp single
        {
            for (int i = 0; i < 8; i++) {
#pragma omp task depend(iterator(k = 0 : n), inout : a[k])
                unit();
            }
#pragma omp taskwait
        }
    } else if (!strcmp(c, "twdep")) {
#pragma omp parallel
#pragma omp single
        {
#pragma omp task depend(out : x)
            unit();
#pragma omp task depend(in : y1)
            unit();
#pragma omp taskwait depend(in : x)
            unit();
#pragma omp taskwait
        }
    } else if (!strcmp(c, "detach")) {
#pragma omp parallel
#pragma omp single
        {
            omp_event_handle_t ev;
#pragma omp task detach(ev)
            {
                unit();
                omp_fulfill_event(ev);
            }
#pragma omp taskwait
        }
    } else if (!strcmp(c, "testlock")) {
        omp_lock_t l[4];
        for (int i = 0; i < 4; i++)
            omp_init_lock(&l[i]);
#pragma omp parallel num_threads(4)
        {
            omp_lock_t *mine = &l[omp_get_thread_num()];
            while (!omp_test_lock(mine))
                ;
            unit();
            omp_unset_lock(mine);
        }
        for (int i = 0; i < 4; i++)
            omp_destroy_lock(&l[i]);
    } else if (!strcmp(c, "nestlock")) {
        omp_nest_lock_t l;
        omp_init_nest_lock(&l);
#pragma omp parallel num_threads(4)
        {
            omp_set_nest_lock(&l);
            omp_set_nest_lock(&l);
            unit();
            omp_unset_nest_lock(&l);
            omp_unset_nest_lock(&l);
        }
        omp_destroy_nest_lock(&l);
    } else if (!strcmp(c, "taskred")) {
        long sum = 0;
#pragma omp parallel reduction(task, + : sum)
        {
#pragma omp single
            for (int i = 0; i < 4; i++) {
#pragma omp task in_reduction(+ : sum)
                {
                    unit();
                    sum += i;
                }
            }
        }
        if (sum != 6)
            return 1;
    } else if (!strcmp(c, "tgwait")) {
#pragma omp parallel num_threads(2)
#pragma omp single
#pragma omp taskgroup
        {
#pragma omp task
            unit();
#pragma omp task
            unit();
        }
    } else if (!strcmp(c, "tgbar")) {
#pragma omp parallel num_threads(2)
#pragma omp taskgroup
        {
#pragma omp for schedule(dynamic, 1)
            for (int i = 0; i < 2; i++)
                unit();
        }
    } else if (!strcmp(c, "allmem")) {
#pragma omp parallel
#pragma omp single
        {
#pragma omp task depend(out : x)
            unit();
#pragma omp task depend(out : y1)
            unit();
#pragma omp task depend(inout : omp_all_memory)
            unit();
#pragma omp task depend(in : x)
            unit();
#pragma omp taskwait
        }
    } else if (!strcmp(c, "nogroup")) {
#pragma omp parallel
#pragma omp single
#pragma omp taskgroup
        {
#pragma omp taskloop nogroup grainsize(1)
            for (int i = 0; i < 4; i++)
                unit();
        }
    } else if (!strcmp(c, "manylocks")) {
        omp_lock_t l[40];
        for (int i = 0; i < 40; i++)
            omp_init_lock(&l[i]);
#pragma omp parallel num_threads(2)
        {
            for (int i = 0; i < 40; i++)
                omp_set_lock(&l[i]);
            unit();
            for (int i = 39; i >= 0; i--)
                omp_unset_lock(&l[i]);
        }
        for (int i = 0; i < 40; i++)
            omp_destroy_lock(&l[i]);
    } else if (!strcmp(c, "orphans")) {
        long sum = 0;
        for (int r = 0; r < 100000; r++) {
#pragma omp for schedule(dynamic, 4)
            for (int i = 0; i < 8; i++)
                sum += i;
        }
        unit();
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        printf("maxrss %ld\n", ru.ru_maxrss);
        if (sum != 2800000)
            return 1;
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
    unsigned long long first = st_burn(unit_ms);
    int rc = run(argv[1]);
    unsigned long long last = st_burn(unit_ms);
    /* the work every unit took, measured: what whatif must find */
    st_expect_work(measured_ns + first + last);
    /* Where the case's units are all logically parallel (its span is one
     * unit), its span is the serial units' and the longest one's: the
     * script checks that case's parallelism against these, since a span
     * is a maximum and picks up the VM's noise (a maximum of 16 units
     * whose times vary by 10% is ~18% above their mean). */
    fprintf(stderr, "whatif-units serial=%llu longest=%llu\n", first + last,
            (unsigned long long)longest_ns);
    printf("ok %s\n", argv[1]);
    return rc;
}
