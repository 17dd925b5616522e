/* shapes.c - the shapes third-party programs have and calibrated tests
 * lacked: each once lost a profile or gave a wrong one.
 *
 *   shapes CASE
 *
 * Every case burns C ms serially before and after its construct and times
 * all of its fragments itself (selftime.h): it prints the exact work and
 * span of its structure ("whatif-expect"), and the number of dynamic
 * instances of the constructs a test checks ("whatif-count").
 *
 *   taskloop_split  single runs 3 taskloops grainsize(1) of 96 tasks: more
 *                   than 10 x threads, so libomp splits each recursively
 *                   through helper tasks that create tasks on other threads
 *   taskloop_nogroup  the same taskloops nogroup, each followed by a
 *                   taskwait: its tasks are one instance (a group), and
 *                   the helpers of the split none
 *   taskloop_huge   one taskloop grainsize(1000) over 3e6 iterations
 *   taskloop_rec    a task tree whose every task runs a taskloop
 *                   grainsize(1) (a parallel partition), then two tasks
 *   taskloop_nt     taskloop num_tasks(nt), nt = 60 ... 119, each in a
 *                   region of its own
 *   nest_deep       parallel num_threads(2) nested 8 deep (recursion)
 *   nest_wide       20 x parallel num_threads(8) { parallel num_threads(3) }
 *   dup             a task construct inlined twice into a recursion: two
 *                   runtime calls, one directive
 *   untied          a tree of untied tasks, each creating its children in
 *                   a function it calls (libomp moves such tasks between
 *                   threads, and ends a part of one with no event)
 *   untied_mix      untied tasks timed part by part: a taskgroup of
 *                   children with a taskyield after each creation, then
 *                   more code, often on another thread
 *   tw_tail         a taskwait that ends a parallel region's body (a
 *                   tail call into the runtime at -O2)
 *   nowait_tasks    rounds of a nowait loop (dynamic, static, guided) or
 *                   nowait sections whose iterations create tasks, then a
 *                   taskwait and code of the thread's own: that code waits
 *                   for the tasks the thread created, not for the others
 *   tasks_loop      rounds of a single nowait creating a task, then a loop
 *                   whose chunks run in parallel with that task
 *   loop_tasks_loop rounds of a nowait loop creating tasks, then a loop
 *                   whose chunks run in parallel with those tasks
 *   dir_nowait_tw   rounds of a nowait loop whose chunks hold a directive
 *                   (an empty taskgroup) but create no task, then a
 *                   taskwait and code of the thread's own: that code does
 *                   not wait for the chunks
 *   detach_deps     a detached task with a dependent task, its event
 *                   fulfilled after its code ended: noted
 *   pretask_tw      rounds of: each thread creates a task, then a static
 *                   nowait loop of one iteration per thread whose
 *                   iteration waits (taskwait) and burns: it waits for the
 *                   task its thread created before the loop
 *   tw_outer        a task created before a taskgroup inside which a
 *                   taskwait waits for it too, which the graph cannot join
 *                   there (noted); then a loop whose chunks each wait for
 *                   their own task only (no note)
 *   tw_outer_tg     a task, then a taskgroup whose taskwait waits for it
 *                   too (noted), then a taskwait and code after it, which
 *                   waits for the task: in a single, then in each of two
 *                   loop chunks
 *   pthreads        3 threads of the program's own each run a loop
 *   pthreads10      10 threads of the program's own each run a region
 *   inner_serial    a dynamic loop in a nested region that runs serialized
 *   tiny_chunks     20000 loops of 64 dynamic chunks of one increment each,
 *                   nowait: the runtime's hand-out of a chunk costs far
 *                   more than its code; prints the process's CPU time
 *                   ("whatif-cpu ns=N")
 *   task_flood      a single creates 10^6 tasks of one increment each;
 *                   prints how many ran
 *   many_kinds      a single creates 600 tasks, 600 if(0) tasks, then
 *                   600 tasks in a depend chain, burning between them
 *   task_copy       a single creates 20,000 tasks, each with 96 KB of
 *                   firstprivate data: the copies are the single's work
 *                   (prints "whatif-copy ns=N", the same copies timed)
 *   merged_a, _b    one of two parallel regions in the two branches of an
 *                   if: clang -O2 emits one __kmpc_fork_call for both,
 *                   whose debug line is one region's
 *   startup         main runs one parallel region and nothing else
 *   startup_api     main asks omp_get_max_threads(), which starts the
 *                   runtime, then runs one parallel region
 *   wtime_only      the program only calls omp_get_wtime (no construct)
 */
#include <omp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "selftime.h"

#define C_MS 10.0

static _Atomic uint64_t total_work; /* of everything but the serial ends */

static void add_work(uint64_t ns)
{
    atomic_fetch_add(&total_work, ns);
}

/* ---- taskloops ---- */

#define SPLIT_TASKS 96
#define SPLIT_LOOPS 3

/* The work and the span of SPLIT_LOOPS taskloops one after the other,
 * from their tasks' times t. */
static uint64_t split_span(uint64_t t[SPLIT_LOOPS][SPLIT_TASKS])
{
    uint64_t span = 0;
    for (int r = 0; r < SPLIT_LOOPS; r++) {
        uint64_t most = 0;
        for (int i = 0; i < SPLIT_TASKS; i++) {
            add_work(t[r][i]);
            most = st_max(most, t[r][i]);
        }
        span += most;
    }
    st_count("taskloop", SPLIT_LOOPS);
    return span;
}

static uint64_t taskloop_split(void)
{
    static uint64_t t[SPLIT_LOOPS][SPLIT_TASKS];
#pragma omp parallel
#pragma omp single
    for (int r = 0; r < SPLIT_LOOPS; r++) {
#pragma omp taskloop grainsize(1)
        for (int i = 0; i < SPLIT_TASKS; i++)
            t[r][i] = st_burn(0.5);
    }
    return split_span(t);
}

static uint64_t taskloop_nogroup(void)
{
    static uint64_t t[SPLIT_LOOPS][SPLIT_TASKS];
#pragma omp parallel
#pragma omp single
    for (int r = 0; r < SPLIT_LOOPS; r++) {
#pragma omp taskloop grainsize(1) nogroup
        for (int i = 0; i < SPLIT_TASKS; i++)
            t[r][i] = st_burn(0.5);
#pragma omp taskwait
    }
    return split_span(t);
}

static void taskloop_huge(void)
{
    static double v[3000000];
    double s = 0;
#pragma omp parallel
#pragma omp single
    {
#pragma omp taskloop grainsize(1000) reduction(+ : s)
        for (int i = 0; i < 3000000; i++) {
            v[i] = i * 0.5;
            s += v[i];
        }
    }
    st_count("taskloop", 1);
    if (s < 0)
        printf("%f\n", s);
}

#define REC_PARTS 16

/* A task of the tree: a taskloop over its parts, then two children.
 * Returns the span of its subtree. */
static uint64_t rec_node(int depth)
{
    uint64_t t[REC_PARTS], most = 0, c[2] = {0, 0};
#pragma omp taskloop grainsize(1) shared(t)
    for (int i = 0; i < REC_PARTS; i++)
        t[i] = st_burn(0.2);
    for (int i = 0; i < REC_PARTS; i++) {
        add_work(t[i]);
        most = st_max(most, t[i]);
    }
    if (depth > 0) {
        for (int k = 0; k < 2; k++) {
#pragma omp task shared(c)
            c[k] = rec_node(depth - 1);
        }
#pragma omp taskwait
    }
    return most + st_max(c[0], c[1]);
}

static uint64_t taskloop_rec(void)
{
    uint64_t span = 0;
#pragma omp parallel
#pragma omp single
    span = rec_node(3);
    st_count("taskloop", 15);
    return span;
}

static void taskloop_nt(void)
{
    double s = 0;
    for (int nt = 60; nt < 120; nt++) {
#pragma omp parallel
#pragma omp master
#pragma omp taskloop num_tasks(nt) reduction(+ : s)
        for (int i = 0; i < 1120; i++)
            s += i * 0.5;
    }
    st_count("taskloop", 60);
    if (s < 0)
        printf("%f\n", s);
}

/* ---- nesting ---- */

#define DEEP 8

/* Each level's two threads burn, then nest one level deeper; returns the
 * span of the level's region. */
static uint64_t deep(int level)
{
    uint64_t span[2] = {0, 0};
#pragma omp parallel num_threads(2)
    {
        int me = omp_get_thread_num();
        uint64_t own = st_burn(0.3);
        add_work(own);
        uint64_t below = level > 1 ? deep(level - 1) : 0;
        if (me < 2)
            span[me] = own + below;
    }
    return st_max(span[0], span[1]);
}

static uint64_t nest_wide(void)
{
    uint64_t span = 0;
    for (int r = 0; r < 20; r++) {
        _Atomic uint64_t most = 0;
        long hits = 0;
#pragma omp parallel num_threads(8)
#pragma omp parallel num_threads(3)
        {
            uint64_t own = st_burn(0.2);
            add_work(own);
            uint64_t m = atomic_load(&most);
            while (own > m && !atomic_compare_exchange_weak(&most, &m, own))
                ;
#pragma omp atomic
            hits++;
        }
        span += atomic_load(&most);
    }
    st_count("parallel", 20 * 9);
    return span;
}

/* ---- a directive the compiler emits twice ---- */

static uint64_t dup_rec(int depth);

static inline __attribute__((always_inline)) void dup_spawn(uint64_t *out,
                                                            int depth)
{
/* out is the inlined function's own: firstprivate, as by default */
#pragma omp task firstprivate(out)
    *out = dup_rec(depth);
}

static uint64_t dup_rec(int depth)
{
    uint64_t own = st_burn(0.3), c[2] = {0, 0};
    add_work(own);
    if (depth > 0) {
        if (depth & 1) {
            dup_spawn(&c[0], depth - 1);
            dup_spawn(&c[1], depth - 1);
        } else {
            dup_spawn(&c[1], depth - 1);
            dup_spawn(&c[0], depth - 1);
        }
#pragma omp taskwait
    }
    return own + st_max(c[0], c[1]);
}

static uint64_t dup(void)
{
    uint64_t span = 0;
#pragma omp parallel
#pragma omp single
    span = dup_rec(5);
    st_count("task", (1u << 6) - 2);
    return span;
}

/* ---- untied tasks ---- */

/* A binomial tree, as in unbalanced tree searches: the root has 300
 * children, every other node 8 with probability 1/8 (a hash of its id
 * decides), so the tree is narrow and deep and a chain of tasks stays
 * suspended in taskwait while threads steal around it: libomp then moves
 * untied tasks between threads, and ends a part of one with no event. */
#define UNTIED_ROOT_KIDS 300
#define UNTIED_KIDS 8
#define UNTIED_MAX_DEPTH 400

static _Atomic uint64_t untied_tasks;

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static uint64_t untied_node(uint64_t id, int depth)
{
    int kids = depth == 0 ? UNTIED_ROOT_KIDS
               : depth < UNTIED_MAX_DEPTH && mix(id) % 8 == 0 ? UNTIED_KIDS
                                                               : 0;
    uint64_t own = st_burn(0.001), c[UNTIED_ROOT_KIDS], most = 0;
    add_work(own);
    for (int k = 0; k < kids; k++) {
        atomic_fetch_add(&untied_tasks, 1);
#pragma omp task untied firstprivate(k) shared(c)
        c[k] = untied_node(mix(id * 31 + (uint64_t)k + 1), depth + 1);
    }
#pragma omp taskwait
    for (int k = 0; k < kids; k++)
        most = st_max(most, c[k]);
    return own + most;
}

/* Runs a tree of untied tasks from one untied root task (node(id, 0)) and
 * counts its tasks (the root and the *created it counted). */
static uint64_t untied_tree(uint64_t (*node)(uint64_t, int), uint64_t id,
                            _Atomic uint64_t *created)
{
    uint64_t span = 0;
#pragma omp parallel
#pragma omp single nowait
#pragma omp task untied shared(span)
    span = node(id, 0);
    st_count("task", atomic_load(created) + 1);
    return span;
}

static uint64_t untied(void)
{
    return untied_tree(untied_node, 1, &untied_tasks);
}

/* Untied tasks whose parts are timed: each task burns, creates its
 * children inside a taskgroup with a taskyield after each creation (a
 * scheduling point where libomp may requeue the task), then burns again
 * after the group, often on another thread.  Its span is its two burns
 * plus its longest child. */
#define MIX_ROOT_KIDS 24
#define MIX_KIDS 4
#define MIX_MAX_DEPTH 6

static _Atomic uint64_t mix_tasks;

static uint64_t mix_node(uint64_t id, int depth)
{
    int kids = depth == 0 ? MIX_ROOT_KIDS
               : depth < MIX_MAX_DEPTH && mix(id) % 3 == 0 ? MIX_KIDS
                                                           : 0;
    uint64_t before = st_burn(0.1), c[MIX_ROOT_KIDS] = {0}, most = 0;
    add_work(before);
#pragma omp taskgroup
    for (int k = 0; k < kids; k++) {
        atomic_fetch_add(&mix_tasks, 1);
#pragma omp task untied firstprivate(k) shared(c)
        c[k] = mix_node(mix(id * 37 + (uint64_t)k + 1), depth + 1);
#pragma omp taskyield
    }
    for (int k = 0; k < kids; k++)
        most = st_max(most, c[k]);
    uint64_t after = st_burn(0.1);
    add_work(after);
    return before + most + after;
}

static uint64_t untied_mix(void)
{
    return untied_tree(mix_node, 3, &mix_tasks);
}

/* ---- threads of the program's own ---- */

typedef struct pthread_arg {
    int region_only;
    uint64_t span;
} pthread_arg;

/* The thread is new to the runtime until its first construct: the code
 * before that construct is no OpenMP thread's, and not profiled. */
static void *pthread_body(void *p)
{
    pthread_arg *a = p;
    uint64_t t[8] = {0};
    st_burn(1);
    if (a->region_only) {
#pragma omp parallel
        t[omp_get_thread_num() & 7] = st_burn(1);
        uint64_t most = 0;
        for (int i = 0; i < 8; i++) {
            add_work(t[i]);
            most = st_max(most, t[i]);
        }
        a->span = most;
        return NULL;
    }
#pragma omp parallel for schedule(dynamic)
    for (int i = 0; i < 8; i++)
        t[i] = st_burn(1);
    uint64_t most = 0;
    for (int i = 0; i < 8; i++) {
        add_work(t[i]);
        most = st_max(most, t[i]);
    }
    uint64_t post = st_burn(2);
    add_work(post);
    a->span = most + post;
    return NULL;
}

/* The threads are modeled as parallel with the main thread's code, which
 * forms a serial prefix (docs/limits.md): the span is the main thread's
 * serial code plus the longest thread. */
static uint64_t main_serial; /* the main thread's own code in a case */

static uint64_t pthreads(int n, int region_only)
{
    pthread_t th[16];
    pthread_arg a[16];
    uint64_t span = 0, t0 = st_now();
    for (int i = 0; i < n; i++) {
        a[i].region_only = region_only;
        pthread_create(&th[i], NULL, pthread_body, &a[i]);
    }
    for (int i = 0; i < n; i++) {
        pthread_join(th[i], NULL);
        span = st_max(span, a[i].span);
    }
    /* creating and joining threads is serial work of the main thread's */
    main_serial += st_now() - t0;
    return span;
}

/* ---- many tasks of each kind ---- */

/* Past each thread's first 256 creations the tool leaves a task's
 * allocation span open into its queueing (tool_alloc_leave): a single
 * creates MANY_TASKS tasks, then as many if(0) tasks (never queued), then
 * as many in a depend(inout) chain, burning between creations. */
#define MANY_TASKS 600

static uint64_t many_kinds(void)
{
    static uint64_t c[MANY_TASKS], t[MANY_TASKS];
    uint64_t span = 0;
    int x = 0;
#pragma omp parallel
#pragma omp single
    {
        /* plain tasks: each starts after the creator's burns before it */
        uint64_t creator = 0, phase = 0;
        for (int i = 0; i < MANY_TASKS; i++) {
            creator += c[i] = st_burn(0.05);
#pragma omp task firstprivate(i)
            t[i] = st_burn(0.2);
        }
#pragma omp taskwait
        phase = creator;
        creator = 0;
        for (int i = 0; i < MANY_TASKS; i++) {
            creator += c[i];
            phase = st_max(phase, creator + t[i]);
            add_work(c[i] + t[i]);
        }
        span += phase;
        /* undeferred tasks: run by the creator, in series with it */
        for (int i = 0; i < MANY_TASKS; i++) {
            c[i] = st_burn(0.05);
#pragma omp task if (0) firstprivate(i)
            t[i] = st_burn(0.2);
        }
        for (int i = 0; i < MANY_TASKS; i++) {
            span += c[i] + t[i];
            add_work(c[i] + t[i]);
        }
        /* a chain: each task after the one before and after its creation */
        for (int i = 0; i < MANY_TASKS; i++) {
            c[i] = st_burn(0.05);
#pragma omp task depend(inout : x) firstprivate(i)
            {
                t[i] = st_burn(0.2);
                x++;
            }
        }
#pragma omp taskwait
        uint64_t done = 0;
        creator = 0;
        for (int i = 0; i < MANY_TASKS; i++) {
            creator += c[i];
            done = st_max(done, creator) + t[i];
            add_work(c[i] + t[i]);
        }
        span += st_max(done, creator);
    }
    return x == MANY_TASKS ? span : 0;
}

/* ---- the rest ---- */

static void inner_serial(void)
{
#pragma omp parallel num_threads(2)
    {
#pragma omp parallel for schedule(dynamic) num_threads(2)
        for (int i = 0; i < 8; i++)
            add_work(st_burn(1));
    }
}

/* A taskwait that ends a parallel region's body: at -O2 a tail call,
 * which returns into the runtime. */
/* ---- tasks beside worksharing loops ---- */

#define NW_ROUNDS 4
#define NW_THREADS 64

/* The longest task each thread created in each round, what the
 * thread's code after the round's taskwait took, and an atomic max. */
static _Atomic uint64_t nw_task[NW_ROUNDS][NW_THREADS];
static uint64_t nw_post[NW_ROUNDS][NW_THREADS];

static void atomic_max64(_Atomic uint64_t *a, uint64_t v)
{
    uint64_t m = atomic_load(a);
    while (v > m && !atomic_compare_exchange_weak(a, &m, v))
        ;
}

static void nw_spawn(int round, int creator, double ms)
{
#pragma omp task firstprivate(round, creator, ms)
    {
        uint64_t t = st_burn(ms);
        add_work(t);
        atomic_max64(&nw_task[round][creator], t);
    }
}

/* A taskwait waits for the children of the thread's implicit task, the
 * tasks its chunks created included: each thread's path is its rounds'
 * longest task followed by its code after the taskwait. */
static uint64_t nowait_tasks(void)
{
    int team = 1;
#pragma omp parallel
    {
        int me = omp_get_thread_num();
#pragma omp single nowait
        team = omp_get_num_threads();
        int n = 2 * omp_get_num_threads();
        for (int r = 0; r < NW_ROUNDS; r++) {
            if (r == 0) {
#pragma omp for schedule(dynamic, 1) nowait
                for (int i = 0; i < n; i++)
                    nw_spawn(r, me, 2.0 + i % 3);
            } else if (r == 1) {
#pragma omp for schedule(static) nowait
                for (int i = 0; i < n; i++)
                    nw_spawn(r, me, 2.0 + i % 3);
            } else if (r == 2) {
#pragma omp for schedule(guided) nowait
                for (int i = 0; i < n; i++)
                    nw_spawn(r, me, 2.0 + i % 3);
            } else {
#pragma omp sections nowait
                {
#pragma omp section
                    nw_spawn(r, me, 3.0);
#pragma omp section
                    nw_spawn(r, me, 4.0);
                }
            }
#pragma omp taskwait
            nw_post[r][me] = st_burn(1.5);
            add_work(nw_post[r][me]);
        }
    }
    uint64_t span = 0;
    for (int t = 0; t < team && t < NW_THREADS; t++) {
        uint64_t path = 0;
        for (int r = 0; r < NW_ROUNDS; r++)
            path += atomic_load(&nw_task[r][t]) + nw_post[r][t];
        span = st_max(span, path);
    }
    return span;
}

/* A task created before a loop runs in parallel with the loop's chunks;
 * the loop's barrier joins both. */
static uint64_t tasks_loop(void)
{
    _Atomic uint64_t most[NW_ROUNDS] = {0};
#pragma omp parallel
    for (int r = 0; r < NW_ROUNDS; r++) {
#pragma omp single nowait
        {
#pragma omp task firstprivate(r)
            {
                uint64_t t = st_burn(8.0);
                add_work(t);
                atomic_max64(&most[r], t);
            }
        }
#pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < omp_get_num_threads(); i++) {
            uint64_t t = st_burn(3.0);
            add_work(t);
            atomic_max64(&most[r], t);
        }
    }
    uint64_t span = 0;
    for (int r = 0; r < NW_ROUNDS; r++)
        span += atomic_load(&most[r]);
    return span;
}

/* Tasks created by a nowait loop's chunks run in parallel with the next
 * loop's chunks (no taskwait between them); that loop's barrier joins
 * both. */
static uint64_t loop_tasks_loop(void)
{
    _Atomic uint64_t most[NW_ROUNDS] = {0};
#pragma omp parallel
    for (int r = 0; r < NW_ROUNDS; r++) {
        int n = omp_get_num_threads();
#pragma omp for schedule(dynamic, 1) nowait
        for (int i = 0; i < n; i++) {
#pragma omp task firstprivate(r)
            {
                uint64_t t = st_burn(6.0);
                add_work(t);
                atomic_max64(&most[r], t);
            }
        }
#pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < n; i++) {
            uint64_t t = st_burn(3.0);
            add_work(t);
            atomic_max64(&most[r], t);
        }
    }
    uint64_t span = 0;
    for (int r = 0; r < NW_ROUNDS; r++)
        span += atomic_load(&most[r]);
    return span;
}

static uint64_t dw_chunk[NW_ROUNDS][NW_THREADS];

static uint64_t dir_nowait_tw(void)
{
    int team = 1;
    memset(nw_post, 0, sizeof(nw_post));
#pragma omp parallel
    {
        int me = omp_get_thread_num();
#pragma omp single nowait
        team = omp_get_num_threads();
        int n = 2 * omp_get_num_threads();
        for (int r = 0; r < NW_ROUNDS; r++) {
#pragma omp for schedule(dynamic, 1) nowait
            for (int i = 0; i < n; i++) {
                uint64_t t = st_burn(0.5);
#pragma omp taskgroup
                {
                }
                t += st_burn(2.0 + i % 3);
                add_work(t);
                dw_chunk[r][me] = st_max(dw_chunk[r][me], t);
            }
#pragma omp taskwait
            nw_post[r][me] = st_burn(1.5);
            add_work(nw_post[r][me]);
        }
    }
    /* A chunk follows its thread's code of the rounds before it; the
     * thread's code after each taskwait follows only that code. */
    uint64_t span = 0;
    for (int t = 0; t < team && t < NW_THREADS; t++) {
        uint64_t before = 0;
        for (int r = 0; r < NW_ROUNDS; r++) {
            span = st_max(span, before + dw_chunk[r][t]);
            before += nw_post[r][t];
        }
        span = st_max(span, before);
    }
    return span;
}

static void detach_deps(void)
{
    int x = 0;
    _Atomic int a_done = 0;
#pragma omp parallel num_threads(2)
#pragma omp single
    {
        omp_event_handle_t ev;
#pragma omp task detach(ev) depend(out : x) shared(a_done)
        {
            add_work(st_burn(1.0));
            atomic_store(&a_done, 1);
        }
#pragma omp task depend(in : x) shared(x)
        {
            add_work(st_burn(1.0));
            x++;
        }
        while (!atomic_load(&a_done)) {
#pragma omp taskyield
        }
        add_work(st_burn(2.0));
        omp_fulfill_event(ev);
    }
}

static uint64_t pretask_tw(void)
{
    int team = 1;
    memset(nw_post, 0, sizeof(nw_post));
    memset(nw_task, 0, sizeof(nw_task));
#pragma omp parallel
    {
        int me = omp_get_thread_num();
#pragma omp single nowait
        team = omp_get_num_threads();
        for (int r = 0; r < 2; r++) {
            nw_spawn(r, me, 4.0 + me % 2);
#pragma omp for schedule(static) nowait
            for (int i = 0; i < omp_get_num_threads(); i++) {
#pragma omp taskwait
                nw_post[r][me] = st_burn(2.0);
                add_work(nw_post[r][me]);
            }
#pragma omp barrier
        }
    }
    uint64_t span = 0;
    for (int r = 0; r < 2; r++) {
        uint64_t most = 0;
        for (int t = 0; t < team && t < NW_THREADS; t++)
            most = st_max(most, atomic_load(&nw_task[r][t]) + nw_post[r][t]);
        span += most;
    }
    return span;
}

static void tw_outer(void)
{
#pragma omp parallel
    {
#pragma omp single
        {
#pragma omp task
            add_work(st_burn(4.0));
#pragma omp taskgroup
            {
#pragma omp task
                add_work(st_burn(0.5));
#pragma omp taskwait
                add_work(st_burn(0.5));
            }
        }
#pragma omp for schedule(dynamic, 1) nowait
        for (int i = 0; i < 8; i++) {
#pragma omp task
            add_work(st_burn(0.5));
#pragma omp taskwait
            add_work(st_burn(0.5));
        }
    }
}

/* A task T, a taskgroup holding a task and a taskwait (which waits for T
 * too), a taskwait, then code that follows T: returns the path through
 * T. */
static uint64_t outer_tg_body(void)
{
    _Atomic uint64_t t_long = 0;
    uint64_t pre = st_burn(0.5);
    add_work(pre);
#pragma omp task shared(t_long)
    {
        uint64_t t = st_burn(4.0);
        add_work(t);
        atomic_store(&t_long, t);
    }
#pragma omp taskgroup
    {
#pragma omp task
        add_work(st_burn(0.5));
#pragma omp taskwait
    }
#pragma omp taskwait
    uint64_t post = st_burn(4.0);
    add_work(post);
    return pre + atomic_load(&t_long) + post;
}

static uint64_t tw_outer_tg(void)
{
    uint64_t single_path = 0, chunk_path[2] = {0, 0};
#pragma omp parallel
    {
#pragma omp single
        single_path = outer_tg_body();
#pragma omp for schedule(dynamic, 1)
        for (int i = 0; i < 2; i++)
            chunk_path[i] = outer_tg_body();
    }
    return single_path + st_max(chunk_path[0], chunk_path[1]);
}

static void tw_tail(void)
{
#pragma omp parallel num_threads(2)
    {
#pragma omp task
        add_work(st_burn(1));
#pragma omp taskwait
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: shapes CASE\n");
        return 2;
    }
    const char *c = argv[1];
    if (!strcmp(c, "wtime_only")) {
        double t = omp_get_wtime();
        printf("ok %s %d\n", c, t >= 0);
        return 0;
    }
    if (!strcmp(c, "tiny_chunks")) {
        static volatile int sink;
#pragma omp parallel
        for (int r = 0; r < 20000; r++) {
#pragma omp for schedule(dynamic, 1) nowait
            for (int i = 0; i < 64; i++)
                sink++;
        }
        struct rusage u;
        getrusage(RUSAGE_SELF, &u);
        fprintf(stderr, "whatif-cpu ns=%lld\n",
                (long long)(u.ru_utime.tv_sec + u.ru_stime.tv_sec) *
                        1000000000ll +
                    (long long)(u.ru_utime.tv_usec + u.ru_stime.tv_usec) *
                        1000ll);
        printf("ok %s\n", c);
        return 0;
    }
    if (!strcmp(c, "task_flood")) {
        long ran = 0;
#pragma omp parallel
#pragma omp single
        for (int i = 0; i < 1000000; i++) {
#pragma omp task
            {
#pragma omp atomic
                ran++;
            }
        }
        printf("ok %s %ld\n", c, ran);
        return 0;
    }
    if (!strcmp(c, "task_copy")) {
        /* Each task takes 96 KB of the creator's data (firstprivate):
         * copying it is the single's work.  The program times the same
         * copies itself first. */
        enum { COPY_TASKS = 20000, COPY_DOUBLES = 12288 };
        static double a[COPY_DOUBLES], b[COPY_DOUBLES];
        for (int i = 0; i < COPY_DOUBLES; i++)
            a[i] = i;
        uint64_t t0 = st_now();
        for (int t = 0; t < COPY_TASKS; t++) {
            memcpy(b, a, sizeof(a));
            __asm__ volatile("" : : "r"(b) : "memory");
        }
        fprintf(stderr, "whatif-copy ns=%llu\n",
                (unsigned long long)(st_now() - t0));
        double sum = 0;
#pragma omp parallel
#pragma omp single
        for (int t = 0; t < COPY_TASKS; t++) {
            a[t % COPY_DOUBLES] += 1;
#pragma omp task firstprivate(a)
            {
#pragma omp atomic
                sum += a[t % COPY_DOUBLES];
            }
        }
        printf("ok %s %d\n", c, sum > 0);
        return 0;
    }
    if (!strcmp(c, "merged_a") || !strcmp(c, "merged_b")) {
        int s = 0;
        if (c[7] == 'a') {
#pragma omp parallel reduction(+ : s)
            s += (int)st_burn(1.0);
        } else {
#pragma omp parallel reduction(+ : s)
            s += (int)st_burn(2.0);
        }
        printf("ok %s %d\n", c, s != 0);
        return 0;
    }
    if (!strcmp(c, "startup") || !strcmp(c, "startup_api")) {
        int s = c[7] ? omp_get_max_threads() > 0 : 0;
#pragma omp parallel reduction(+ : s)
        s += 1;
        printf("ok %s %d\n", c, s > 0);
        return 0;
    }
    /* The main thread's serial code: its CPU time since it began, which
     * whatif counts from main (a few microseconds of start-up aside). */
    uint64_t pre = st_burn(C_MS), span;
    if (!strcmp(c, "taskloop_split"))
        span = taskloop_split();
    else if (!strcmp(c, "taskloop_nogroup"))
        span = taskloop_nogroup();
    else if (!strcmp(c, "taskloop_rec"))
        span = taskloop_rec();
    else if (!strcmp(c, "nest_deep"))
        span = deep(DEEP);
    else if (!strcmp(c, "nest_wide"))
        span = nest_wide();
    else if (!strcmp(c, "dup"))
        span = dup();
    else if (!strcmp(c, "untied"))
        span = 0, untied(); /* microsecond tasks: only the shape is checked,
                             * their timing calls would weigh as much */
    else if (!strcmp(c, "untied_mix"))
        span = untied_mix();
    else if (!strcmp(c, "pthreads"))
        span = pthreads(3, 0);
    else if (!strcmp(c, "pthreads10"))
        span = pthreads(10, 1);
    else if (!strcmp(c, "tw_tail"))
        span = 0, tw_tail();
    else if (!strcmp(c, "dir_nowait_tw"))
        span = dir_nowait_tw();
    else if (!strcmp(c, "detach_deps"))
        span = 0, detach_deps();
    else if (!strcmp(c, "pretask_tw"))
        span = pretask_tw();
    else if (!strcmp(c, "tw_outer"))
        span = 0, tw_outer();
    else if (!strcmp(c, "tw_outer_tg"))
        span = tw_outer_tg();
    else if (!strcmp(c, "nowait_tasks"))
        span = nowait_tasks();
    else if (!strcmp(c, "tasks_loop"))
        span = tasks_loop();
    else if (!strcmp(c, "loop_tasks_loop"))
        span = loop_tasks_loop();
    else if (!strcmp(c, "inner_serial"))
        span = 0, inner_serial();
    else if (!strcmp(c, "taskloop_huge"))
        span = 0, taskloop_huge();
    else if (!strcmp(c, "taskloop_nt"))
        span = 0, taskloop_nt();
    else if (!strcmp(c, "many_kinds"))
        span = many_kinds();
    else {
        fprintf(stderr, "shapes: unknown case '%s'\n", c);
        return 2;
    }
    uint64_t post = st_burn(C_MS);
    /* Cases without a timed structure only check the profile's shape. */
    if (span)
        st_expect(pre + post + main_serial + atomic_load(&total_work),
                  pre + post + main_serial + span);
    printf("ok %s\n", c);
    return 0;
}
