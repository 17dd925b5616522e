/* empty_tool.c - the overhead floor: an OMPT tool that registers the same
 * callbacks as whatif and does nothing but count them (per thread, summed
 * at the end and printed to stderr as "events N"), so the benchmark can
 * tell the runtime's cost of having a tool from whatif's own.
 *
 * Built with -DRECORD it is the floor of any tool that times every event:
 * each callback also reads a clock (the TSC on x86-64, which whatif reads
 * where it is the kernel's clocksource; CLOCK_MONOTONIC elsewhere) and
 * stores a 16-byte record of it in a per-thread ring of 64 KiB,
 * overwritten, never written out.  A thread's end reads its last record
 * into a checksum printed at the end ("checksum N"): with no reader the
 * compiler drops the stores.
 *
 * Built with -DRECORD -DRECORD_RT (and preloaded, LD_PRELOAD, as well as
 * named in OMP_TOOL_LIBRARIES) it is the floor of whatif's way of measuring
 * a task program: it reads the clock and stores a record where whatif
 * reads its metric on the task path, and nowhere else.  That is at a
 * task's start and end (task_schedule), before a task's allocation and
 * after its queueing (the runtime calls __kmpc_omp_task_alloc and
 * __kmpc_omp_task, wrapped here as whatif wraps them, so that the
 * runtime's time stays out of the fragments), and around a taskwait.  The
 * other callbacks only count.
 */
#if defined(RECORD_RT)
#ifndef RECORD
#error "RECORD_RT needs RECORD"
#endif
#define _GNU_SOURCE /* RTLD_NEXT */
#include <dlfcn.h>
#endif
#include <omp-tools.h>
#include <stdatomic.h>
#include <stdio.h>

static __thread unsigned long events;
static atomic_ulong total;

#ifdef RECORD
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
static uint64_t stamp(void) { return __rdtsc(); }
#else
static uint64_t stamp(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}
#endif
#define RING 4096 /* records of 16 bytes */
static atomic_ulong checksum;
typedef struct record { uint64_t when, what; } record;
/* as whatif keeps its thread state: a pointer in initial-exec TLS */
static __thread record *ring __attribute__((tls_model("initial-exec")));
static __thread unsigned long recorded
    __attribute__((tls_model("initial-exec")));
#define EVENT(kind)                                                          \
    do {                                                                     \
        if (ring) {                                                          \
            ring[recorded % RING] = (record){stamp(), (kind)};               \
            recorded++;                                                      \
        }                                                                    \
        events++;                                                            \
    } while (0)
/* the last record into the checksum, so that the stores stay */
static void ring_close(void)
{
    if (ring && recorded)
        atomic_fetch_add(&checksum, ring[(recorded - 1) % RING].when);
    free(ring);
    ring = NULL;
    recorded = 0;
}
#else
#define EVENT(kind) events++
#endif
/* a callback where whatif reads its metric */
#define READ_EVENT(kind) EVENT(kind)
#ifdef RECORD_RT /* the others only count */
#define CB_EVENT(kind) events++
#else
#define CB_EVENT(kind) EVENT(kind)
#endif

#define CB(name, ...)                                                        \
    static void name(__VA_ARGS__) { CB_EVENT(__LINE__); }

static void thread_begin(ompt_thread_t t, ompt_data_t *d)
{
    (void)t;
    (void)d;
#ifdef RECORD
    ring = calloc(RING, sizeof(*ring));
#endif
    EVENT(__LINE__);
}
static void thread_end(ompt_data_t *d)
{
    (void)d;
#ifdef RECORD
    ring_close();
#endif
    atomic_fetch_add(&total, events + 1);
    events = 0;
}
CB(parallel_begin, ompt_data_t *e, const ompt_frame_t *f, ompt_data_t *p,
   unsigned r, int fl, const void *c)
CB(parallel_end, ompt_data_t *p, ompt_data_t *e, int fl, const void *c)
CB(implicit_task, ompt_scope_endpoint_t ep, ompt_data_t *p, ompt_data_t *t,
   unsigned a, unsigned i, int fl)
CB(sync_region, ompt_sync_region_t k, ompt_scope_endpoint_t ep,
   ompt_data_t *p, ompt_data_t *t, const void *c)
CB(work, ompt_work_t w, ompt_scope_endpoint_t ep, ompt_data_t *p,
   ompt_data_t *t, uint64_t n, const void *c)
CB(dispatch, ompt_data_t *p, ompt_data_t *t, ompt_dispatch_t k,
   ompt_data_t i)
CB(masked, ompt_scope_endpoint_t ep, ompt_data_t *p, ompt_data_t *t,
   const void *c)
CB(task_create, ompt_data_t *e, const ompt_frame_t *f, ompt_data_t *n,
   int fl, int hd, const void *c)
CB(dependences, ompt_data_t *t, const ompt_dependence_t *d, int n)
static void task_schedule(ompt_data_t *p, ompt_task_status_t s,
                          ompt_data_t *n)
{
    (void)p;
    (void)s;
    (void)n;
    READ_EVENT(__LINE__);
}
CB(mutex_acquire, ompt_mutex_t k, unsigned h, unsigned i, ompt_wait_id_t w,
   const void *c)
CB(mutex, ompt_mutex_t k, ompt_wait_id_t w, const void *c)
CB(nest_lock, ompt_scope_endpoint_t ep, ompt_wait_id_t w, const void *c)

static int control_tool(uint64_t c, uint64_t m, void *a, const void *p)
{
    (void)c; (void)m; (void)a; (void)p;
    EVENT(0);
    return 0;
}

static int init(ompt_function_lookup_t lookup, int dev, ompt_data_t *td)
{
    (void)dev;
    (void)td;
    ompt_set_callback_t set = (ompt_set_callback_t)lookup("ompt_set_callback");
#define REG(e, f) set(e, (ompt_callback_t)(f))
    REG(ompt_callback_thread_begin, thread_begin);
    REG(ompt_callback_thread_end, thread_end);
    REG(ompt_callback_parallel_begin, parallel_begin);
    REG(ompt_callback_parallel_end, parallel_end);
    REG(ompt_callback_implicit_task, implicit_task);
    REG(ompt_callback_sync_region, sync_region);
    REG(ompt_callback_sync_region_wait, sync_region);
    REG(ompt_callback_work, work);
    REG(ompt_callback_dispatch, dispatch);
    REG(ompt_callback_masked, masked);
    REG(ompt_callback_task_create, task_create);
    REG(ompt_callback_dependences, dependences);
    REG(ompt_callback_task_schedule, task_schedule);
    REG(ompt_callback_mutex_acquire, mutex_acquire);
    REG(ompt_callback_mutex_acquired, mutex);
    REG(ompt_callback_mutex_released, mutex);
    REG(ompt_callback_nest_lock, nest_lock);
    REG(ompt_callback_control_tool, control_tool);
    return 1;
}

static void fini(ompt_data_t *td)
{
    (void)td;
    fprintf(stderr, "events %lu\n", atomic_load(&total) + events);
#ifdef RECORD
    ring_close();
    fprintf(stderr, "checksum %lu\n", atomic_load(&checksum));
#endif
}

ompt_start_tool_result_t *ompt_start_tool(unsigned v, const char *r)
{
    (void)v;
    (void)r;
    static ompt_start_tool_result_t res = {init, fini, {0}};
    return &res;
}

#ifdef RECORD_RT
/* The runtime calls whatif wraps on the task path, with its reads. */
typedef void *(*task_alloc_fn)(void *, int32_t, int32_t, size_t, size_t,
                               void *);
typedef int32_t (*task_fn)(void *, int32_t, void *);
typedef int32_t (*task_deps_fn)(void *, int32_t, void *, int32_t, void *,
                                int32_t, void *);
typedef int32_t (*taskwait_fn)(void *, int32_t);
#define REAL(type, name)                                                     \
    static _Atomic(type) real_##name;                                        \
    type real = atomic_load_explicit(&real_##name, memory_order_relaxed);    \
    if (!real) {                                                             \
        real = (type)dlsym(RTLD_NEXT, #name);                                \
        atomic_store_explicit(&real_##name, real, memory_order_relaxed);     \
    }

void *__kmpc_omp_task_alloc(void *loc, int32_t gtid, int32_t flags,
                            size_t task_size, size_t shareds_size,
                            void *entry)
{
    REAL(task_alloc_fn, __kmpc_omp_task_alloc);
    READ_EVENT(__LINE__);
    return real(loc, gtid, flags, task_size, shareds_size, entry);
}

int32_t __kmpc_omp_task(void *loc, int32_t gtid, void *task)
{
    REAL(task_fn, __kmpc_omp_task);
    int32_t r = real(loc, gtid, task);
    READ_EVENT(__LINE__);
    return r;
}

int32_t __kmpc_omp_task_with_deps(void *loc, int32_t gtid, void *task,
                                  int32_t ndeps, void *deps,
                                  int32_t ndeps_noalias, void *noalias_deps)
{
    /* no read on entry: as for __kmpc_omp_task, whatif's span from the
     * allocation goes on into the queueing */
    REAL(task_deps_fn, __kmpc_omp_task_with_deps);
    int32_t r = real(loc, gtid, task, ndeps, deps, ndeps_noalias,
                     noalias_deps);
    READ_EVENT(__LINE__);
    return r;
}

int32_t __kmpc_omp_taskwait(void *loc, int32_t gtid)
{
    REAL(taskwait_fn, __kmpc_omp_taskwait);
    READ_EVENT(__LINE__);
    int32_t r = real(loc, gtid);
    READ_EVENT(__LINE__);
    return r;
}
#endif
