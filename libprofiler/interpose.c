/* interpose.c - entry points of the OpenMP runtime, wrapped.
 *
 * OMPT reports events, not the runtime's own time around them: libomp
 * allocates a task before it reports the task's creation and queues it
 * after, spins in depend(sink) before it reports the wait, and the first
 * time on each thread those allocations cost 30-80 us.  With no wrapper
 * that time is the work of the program's fragment that called the runtime.
 * When the tool is preloaded (`whatif run`) or linked in, these
 * definitions come before libomp's in symbol lookup: each brackets the
 * real entry point (found with dlsym(RTLD_NEXT)) and tells the tool
 * (tool.h), which leaves the runtime's time out.  Attached through
 * OMP_TOOL_LIBRARIES alone, the tool is loaded too late to interpose
 * (docs/limits.md).  Only entry points with a fixed argument list are
 * wrapped; a wrapper only forwards when the tool is not profiling.
 */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "tool.h"

/* Every C wrapper lives in a section of its own: the runtime reports a
 * construct's code address as its caller's return address, which inside a
 * wrapper is the wrapper's, so an address in [__start, __stop) of this
 * section stands for the program's call site that the innermost wrapper
 * running on the thread recorded (tool_call_site). */
#define EXPORT                                                              \
    __attribute__((visibility("default"), section("whatif_rtwrap"),        \
                   noinline))

extern const char __start_whatif_rtwrap[], __stop_whatif_rtwrap[];

#define INITIAL_EXEC __attribute__((tls_model("initial-exec")))
static __thread const void *wrap_site INITIAL_EXEC;
static __thread const void *wrap_ident INITIAL_EXEC;

static int in_wrapper(const void *code)
{
    const char *c = code;
    return c >= __start_whatif_rtwrap && c < __stop_whatif_rtwrap;
}

const void *tool_call_site(const void *code)
{
    return in_wrapper(code) && wrap_site ? wrap_site : code;
}

const void *tool_call_ident(const void *code)
{
    return in_wrapper(code) ? wrap_ident : NULL;
}

/* Brackets a wrapped runtime call: the program's call site for the
 * runtime's callbacks inside it, and the runtime's time out of the
 * caller's fragment. */
#define WRAP_ENTER_AS(ident, timing)                                        \
    const void *prev_site = wrap_site, *prev_ident = wrap_ident;            \
    wrap_site = __builtin_return_address(0);                                \
    wrap_ident = (ident);                                                   \
    tool_runtime_span sp;                                                   \
    tool_runtime_enter(&sp, (timing))
#define WRAP_ENTER(ident) WRAP_ENTER_AS(ident, TOOL_RT_UNTIMED)
/* The same for a call that queues a task (tool_task_enter). */
#define WRAP_ENTER_TASK(ident)                                              \
    const void *prev_site = wrap_site, *prev_ident = wrap_ident;            \
    wrap_site = __builtin_return_address(0);                                \
    wrap_ident = (ident);                                                   \
    tool_runtime_span sp;                                                   \
    tool_task_enter(&sp)
#define WRAP_LEAVE()                                                        \
    tool_runtime_leave(&sp);                                                \
    wrap_site = prev_site;                                                  \
    wrap_ident = prev_ident
/* The same, keeping the runtime's time left out of the fragments. */
#define WRAP_LEAVE_TIMED()                                                  \
    uint64_t rt_ns = tool_runtime_leave(&sp);                               \
    wrap_site = prev_site;                                                  \
    wrap_ident = prev_ident

/* The runtime's definition of name, looked up once. */
#define REAL(type, name)                                                    \
    static _Atomic(type) real_##name;                                       \
    type real = atomic_load_explicit(&real_##name, memory_order_relaxed);   \
    if (!real) {                                                            \
        real = (type)dlsym(RTLD_NEXT, #name);                               \
        atomic_store_explicit(&real_##name, real, memory_order_relaxed);    \
    }

typedef void *(*task_alloc_fn)(void *, int32_t, int32_t, size_t, size_t,
                               void *);
typedef int32_t (*task_fn)(void *, int32_t, void *);
typedef int32_t (*task_deps_fn)(void *, int32_t, void *, int32_t, void *,
                                int32_t, void *);
typedef void (*doacross_wait_fn)(void *, int, const int64_t *);

/* A task's allocation: all runtime time, before its creation event. */
EXPORT void *__kmpc_omp_task_alloc(void *loc, int32_t gtid, int32_t flags,
                                   size_t task_size, size_t shareds_size,
                                   void *entry)
{
    REAL(task_alloc_fn, __kmpc_omp_task_alloc)
    if (!real)
        return NULL;
    WRAP_ENTER_AS(loc, TOOL_RT_TIMED);
    void *t = real(loc, gtid, flags, task_size, shareds_size, entry);
    uint64_t rt_ns = tool_alloc_leave(&sp, loc, flags, task_size, shareds_size);
    wrap_site = prev_site;
    wrap_ident = prev_ident;
    tool_task_runtime(rt_ns, 0);
    tool_task_allocated(t);
    return t;
}

/* The creation event comes inside; queueing the task comes after it. */
EXPORT int32_t __kmpc_omp_task(void *loc, int32_t gtid, void *task)
{
    REAL(task_fn, __kmpc_omp_task)
    if (!real)
        return 0;
    if (tool_task_requeued(task))
        return real(loc, gtid, task);
    WRAP_ENTER_TASK(loc);
    int32_t r = real(loc, gtid, task);
    WRAP_LEAVE_TIMED();
    tool_task_runtime(rt_ns, 1);
    return r;
}

EXPORT int32_t __kmpc_omp_task_with_deps(void *loc, int32_t gtid, void *task,
                                         int32_t ndeps, void *deps,
                                         int32_t ndeps_noalias,
                                         void *noalias_deps)
{
    REAL(task_deps_fn, __kmpc_omp_task_with_deps)
    if (!real)
        return 0;
    WRAP_ENTER_TASK(loc);
    int32_t r = real(loc, gtid, task, ndeps, deps, ndeps_noalias,
                     noalias_deps);
    WRAP_LEAVE_TIMED();
    tool_task_runtime(rt_ns, 1);
    return r;
}

/* The OpenMP API functions a program commonly calls before its first
 * construct, which start the runtime when it has not started: its
 * start-up (hundreds of microseconds) is then no work of the program's.
 * Only functions not made to be called in hot loops are wrapped. */
#define API_GET(name)                                                       \
    typedef int (*name##_fn)(void);                                         \
    EXPORT int name(void)                                                   \
    {                                                                       \
        tool_sample_mark();                                                 \
        REAL(name##_fn, name)                                               \
        int starts = tool_api_enters();                                     \
        int r = real ? real() : 0;                                          \
        if (starts)                                                         \
            tool_api_returns();                                             \
        return r;                                                           \
    }
#define API_SET(name)                                                       \
    typedef void (*name##_fn)(int);                                         \
    EXPORT void name(int v)                                                 \
    {                                                                       \
        tool_sample_mark();                                                 \
        REAL(name##_fn, name)                                               \
        int starts = tool_api_enters();                                     \
        if (real)                                                           \
            real(v);                                                        \
        if (starts)                                                         \
            tool_api_returns();                                             \
    }
#define API_LOCK(name)                                                      \
    typedef void (*name##_fn)(void *);                                      \
    EXPORT void name(void *lock)                                            \
    {                                                                       \
        tool_sample_mark();                                                 \
        REAL(name##_fn, name)                                               \
        int starts = tool_api_enters();                                     \
        if (real)                                                           \
            real(lock);                                                     \
        if (starts)                                                         \
            tool_api_returns();                                             \
    }

/* A reduction(task, ...) clause on a parallel region or a worksharing
 * construct: libomp opens and closes a taskgroup of its own inside these
 * calls, and reports it at its own code's address.  Through the wrappers
 * it is located at the clause's construct (the call's ident_t line). */
static __thread int in_taskred INITIAL_EXEC;

const void *tool_taskred_site(void)
{
    return in_taskred ? wrap_site : NULL;
}

/* libomp's two layouts of reduction data (clang 19 uses the first) */
#define TASKRED_INIT(name)                                                  \
    typedef void *(*name##_fn)(void *, int, int, int, void *);              \
    EXPORT void *name(void *loc, int gtid, int is_ws, int num, void *data)  \
    {                                                                       \
        REAL(name##_fn, name)                                               \
        if (!real)                                                          \
            return NULL;                                                    \
        WRAP_ENTER(loc);                                                    \
        in_taskred++;                                                       \
        void *r = real(loc, gtid, is_ws, num, data);                        \
        in_taskred--;                                                       \
        WRAP_LEAVE();                                                       \
        return r;                                                           \
    }

TASKRED_INIT(__kmpc_taskred_modifier_init)
TASKRED_INIT(__kmpc_task_reduction_modifier_init)

typedef void (*taskred_fini_fn)(void *, int, int);
EXPORT void __kmpc_task_reduction_modifier_fini(void *loc, int gtid,
                                                int is_ws)
{
    REAL(taskred_fini_fn, __kmpc_task_reduction_modifier_fini)
    if (!real)
        return;
    WRAP_ENTER(loc);
    in_taskred++;
    real(loc, gtid, is_ws);
    in_taskred--;
    WRAP_LEAVE();
}

/* A hard pause shuts the runtime down, the tools interface included: the
 * profile can only cover the program up to it, and says so. */
#define OMP_PAUSE_HARD 2 /* omp_pause_resource_t's omp_pause_hard */
typedef int (*pause_all_fn)(int);
EXPORT int omp_pause_resource_all(int kind)
{
    REAL(pause_all_fn, omp_pause_resource_all)
    if (!real)
        return -1;
    if (kind == OMP_PAUSE_HARD)
        tool_hard_pause();
    return real(kind);
}

typedef int (*pause_fn)(int, int);
EXPORT int omp_pause_resource(int kind, int device)
{
    REAL(pause_fn, omp_pause_resource)
    if (!real)
        return -1;
    if (kind == OMP_PAUSE_HARD)
        tool_hard_pause();
    return real(kind, device);
}

API_GET(omp_get_max_threads)
API_GET(omp_get_num_procs)
API_GET(omp_get_thread_limit)
API_GET(omp_get_max_active_levels)
API_GET(omp_get_dynamic)
API_SET(omp_set_num_threads)
API_SET(omp_set_dynamic)
API_SET(omp_set_max_active_levels)
API_LOCK(omp_init_lock)
API_LOCK(omp_init_nest_lock)

/* A taskwait that is the last statement of a function is a tail call at
 * -O2 (a jump to the runtime): its return address is then the caller's
 * caller, at another line.  Through the wrapper the runtime reports the
 * wrapper's address, which stands for the call site and, with it, the
 * construct's ident_t, whose line is the taskwait's. */
typedef int32_t (*taskwait_fn)(void *, int32_t);
EXPORT int32_t __kmpc_omp_taskwait(void *loc, int32_t gtid)
{
    REAL(taskwait_fn, __kmpc_omp_taskwait)
    if (!real)
        return 0;
    WRAP_ENTER(loc);
    int32_t r = real(loc, gtid);
    WRAP_LEAVE();
    return r;
}

/* A taskloop creates all its tasks inside one call (splitting the range
 * through helper tasks when there are many): the runtime's code between
 * two of its task creations is not the program's work.  With more threads
 * than cores it can spin there for milliseconds on a queue's lock whose
 * holder was descheduled. */
typedef void (*taskloop_fn)(void *, int32_t, void *, int32_t, uint64_t *,
                            uint64_t *, int64_t, int32_t, int32_t, uint64_t,
                            void *);
EXPORT void __kmpc_taskloop(void *loc, int32_t gtid, void *task,
                            int32_t if_val, uint64_t *lb, uint64_t *ub,
                            int64_t st, int32_t nogroup, int32_t sched,
                            uint64_t grainsize, void *task_dup)
{
    REAL(taskloop_fn, __kmpc_taskloop)
    if (!real)
        return;
    WRAP_ENTER(loc);
    real(loc, gtid, task, if_val, lb, ub, st, nogroup, sched, grainsize,
         task_dup);
    WRAP_LEAVE();
}

typedef void (*taskloop5_fn)(void *, int32_t, void *, int32_t, uint64_t *,
                             uint64_t *, int64_t, int32_t, int32_t,
                             uint64_t, int32_t, void *);
EXPORT void __kmpc_taskloop_5(void *loc, int32_t gtid, void *task,
                              int32_t if_val, uint64_t *lb, uint64_t *ub,
                              int64_t st, int32_t nogroup, int32_t sched,
                              uint64_t grainsize, int32_t modifier,
                              void *task_dup)
{
    REAL(taskloop5_fn, __kmpc_taskloop_5)
    if (!real)
        return;
    WRAP_ENTER(loc);
    real(loc, gtid, task, if_val, lb, ub, st, nogroup, sched, grainsize,
         modifier, task_dup);
    WRAP_LEAVE();
}

/* Worksharing loops: the runtime hands out chunks (an atomic update of
 * the loop's shared state, contended between the team's threads) before
 * it reports them, and sets up and tears down the loop around its begin
 * and end events.  Measured at 0.1-0.3 us per chunk, this was the work of
 * the fragments around it: a loop of tiny dynamic chunks showed more work
 * than the whole program's CPU time. */
#define DISPATCH_INIT(suffix, T)                                            \
    typedef void (*dispatch_init##suffix##_fn)(void *, int32_t, int32_t, T, \
                                                T, T, T);                   \
    EXPORT void __kmpc_dispatch_init##suffix(void *loc, int32_t gtid,       \
                                             int32_t sched, T lb, T ub,     \
                                             T st, T chunk)                 \
    {                                                                       \
        REAL(dispatch_init##suffix##_fn, __kmpc_dispatch_init##suffix)      \
        if (!real)                                                          \
            return;                                                         \
        WRAP_ENTER(loc);                                                       \
        real(loc, gtid, sched, lb, ub, st, chunk);                          \
        WRAP_LEAVE();                                                       \
    }
#define DISPATCH_NEXT(suffix, T)                                            \
    typedef int (*dispatch_next##suffix##_fn)(void *, int32_t, int32_t *,   \
                                              T *, T *, T *);               \
    EXPORT int __kmpc_dispatch_next##suffix(void *loc, int32_t gtid,        \
                                            int32_t *last, T *lb, T *ub,    \
                                            T *st)                          \
    {                                                                       \
        REAL(dispatch_next##suffix##_fn, __kmpc_dispatch_next##suffix)      \
        if (!real)                                                          \
            return 0;                                                       \
        WRAP_ENTER_AS(loc, TOOL_RT_TIMED);                                     \
        int r = real(loc, gtid, last, lb, ub, st);                          \
        WRAP_LEAVE_TIMED();                                                 \
        tool_chunk_runtime(rt_ns);                                          \
        return r;                                                           \
    }
#define STATIC_INIT(suffix, T, S)                                           \
    typedef void (*static_init##suffix##_fn)(void *, int32_t, int32_t,      \
                                             int32_t *, T *, T *, S *, S,   \
                                             S);                            \
    EXPORT void __kmpc_for_static_init##suffix(                             \
        void *loc, int32_t gtid, int32_t sched, int32_t *last, T *lb,       \
        T *ub, S *stride, S incr, S chunk)                                  \
    {                                                                       \
        REAL(static_init##suffix##_fn, __kmpc_for_static_init##suffix)      \
        if (!real)                                                          \
            return;                                                         \
        WRAP_ENTER_AS(loc, TOOL_RT_TIMED);                                     \
        real(loc, gtid, sched, last, lb, ub, stride, incr, chunk);          \
        WRAP_LEAVE_TIMED();                                                 \
        tool_chunk_runtime(rt_ns);                                          \
    }

DISPATCH_INIT(_4, int32_t)
DISPATCH_INIT(_4u, uint32_t)
DISPATCH_INIT(_8, int64_t)
DISPATCH_INIT(_8u, uint64_t)
DISPATCH_NEXT(_4, int32_t)
DISPATCH_NEXT(_4u, uint32_t)
DISPATCH_NEXT(_8, int64_t)
DISPATCH_NEXT(_8u, uint64_t)
STATIC_INIT(_4, int32_t, int32_t)
STATIC_INIT(_4u, uint32_t, int32_t)
STATIC_INIT(_8, int64_t, int64_t)
STATIC_INIT(_8u, uint64_t, int64_t)

typedef void (*static_fini_fn)(void *, int32_t);
EXPORT void __kmpc_for_static_fini(void *loc, int32_t gtid)
{
    REAL(static_fini_fn, __kmpc_for_static_fini)
    if (!real)
        return;
    WRAP_ENTER(loc);
    real(loc, gtid);
    WRAP_LEAVE();
}

/* libomp reports depend(sink) only after it has spun waiting for the
 * source: the fragment must end before the wait. */
EXPORT void __kmpc_doacross_wait(void *loc, int gtid, const int64_t *vec)
{
    REAL(doacross_wait_fn, __kmpc_doacross_wait)
    int mine = tool_doacross_wait_begin();
    if (real)
        real(loc, gtid, vec);
    if (mine)
        tool_doacross_wait_end();
}

/* __kmpc_fork_call takes a variable argument list, which C cannot pass
 * on: the wrapper is a few instructions of assembly.  It saves the
 * argument registers and lets the tool close the caller's fragment (so the
 * runtime's work before the parallel-begin event, up to hundreds of
 * microseconds for a team's first fork, stays out of it); restores them,
 * copies the arguments passed on the stack (argc - 3 pointers: the
 * runtime's signature is (loc, argc, microtask, argc shared-variable
 * pointers)) and calls the runtime; then lets the tool restart the
 * fragment the parallel-end event opened, at the return (the join's
 * teardown after that event, a lock-protected team release that grows
 * under load, is the runtime's, not the caller's). */
#if defined(__x86_64__)
void *tool_fork_enter(tool_runtime_span *sp, const void *call_site,
                      const void *microtask, const void *ident);
void tool_fork_leave(const tool_runtime_span *sp);

void *tool_fork_enter(tool_runtime_span *sp, const void *call_site,
                      const void *microtask, const void *ident)
{
    tool_sample_mark();
    REAL(void *, __kmpc_fork_call)
    tool_fork_enters(sp, call_site, microtask, ident);
    return real;
}

void tool_fork_leave(const tool_runtime_span *sp)
{
    tool_fork_returns(sp);
}

/* Frame below %rbp: %rbx and %r12 (callee-saved, kept across the call),
 * then 224 bytes: the 6 argument registers at -240, %rax at -192, %xmm0-7
 * at -184, the tool's span (40 bytes) at -56. */
__asm__(".text\n"
        ".globl __kmpc_fork_call\n"
        ".type __kmpc_fork_call, @function\n"
        "__kmpc_fork_call:\n"
        "    .cfi_startproc\n"       /* so that a stack can be walked */
        "    endbr64\n"              /* through it (--context) */
        "    pushq %rbp\n"
        "    .cfi_def_cfa_offset 16\n"
        "    .cfi_offset %rbp, -16\n"
        "    movq %rsp, %rbp\n"
        "    .cfi_def_cfa_register %rbp\n"
        "    pushq %rbx\n"
        "    pushq %r12\n"
        "    .cfi_offset %rbx, -24\n"
        "    .cfi_offset %r12, -32\n"
        "    subq $224, %rsp\n"
        "    movq %rdi, -240(%rbp)\n"
        "    movq %rsi, -232(%rbp)\n"
        "    movq %rdx, -224(%rbp)\n"
        "    movq %rcx, -216(%rbp)\n"
        "    movq %r8, -208(%rbp)\n"
        "    movq %r9, -200(%rbp)\n"
        "    movq %rax, -192(%rbp)\n"
        "    movdqu %xmm0, -184(%rbp)\n"
        "    movdqu %xmm1, -168(%rbp)\n"
        "    movdqu %xmm2, -152(%rbp)\n"
        "    movdqu %xmm3, -136(%rbp)\n"
        "    movdqu %xmm4, -120(%rbp)\n"
        "    movdqu %xmm5, -104(%rbp)\n"
        "    movdqu %xmm6, -88(%rbp)\n"
        "    movdqu %xmm7, -72(%rbp)\n"
        "    leaq -56(%rbp), %rdi\n"
        "    movq 8(%rbp), %rsi\n"       /* the program's return address */
        "    movq -240(%rbp), %rcx\n"    /* the construct's ident_t */
        "    call tool_fork_enter\n"     /* %rdx: the microtask, as passed */
        "    movq %rax, %r12\n"          /* the runtime's entry */
        "    movslq -232(%rbp), %rbx\n"  /* argc */
        "    subq $3, %rbx\n"            /* pointers passed on the stack */
        "    jg 1f\n"
        "    xorl %ebx, %ebx\n"
        "1:  leaq 15(,%rbx,8), %rax\n"
        "    andq $-16, %rax\n"
        "    subq %rax, %rsp\n"          /* still 16-byte aligned */
        "    xorl %ecx, %ecx\n"
        "2:  cmpq %rbx, %rcx\n"
        "    jge 3f\n"
        "    movq 16(%rbp,%rcx,8), %rax\n"
        "    movq %rax, (%rsp,%rcx,8)\n"
        "    incq %rcx\n"
        "    jmp 2b\n"
        "3:  movq -240(%rbp), %rdi\n"
        "    movq -232(%rbp), %rsi\n"
        "    movq -224(%rbp), %rdx\n"
        "    movq -216(%rbp), %rcx\n"
        "    movq -208(%rbp), %r8\n"
        "    movq -200(%rbp), %r9\n"
        "    movq -192(%rbp), %rax\n"
        "    movdqu -184(%rbp), %xmm0\n"
        "    movdqu -168(%rbp), %xmm1\n"
        "    movdqu -152(%rbp), %xmm2\n"
        "    movdqu -136(%rbp), %xmm3\n"
        "    movdqu -120(%rbp), %xmm4\n"
        "    movdqu -104(%rbp), %xmm5\n"
        "    movdqu -88(%rbp), %xmm6\n"
        "    movdqu -72(%rbp), %xmm7\n"
        "    call *%r12\n"
        ".globl tool_fork_landing\n"
        ".hidden tool_fork_landing\n"
        "tool_fork_landing:\n"
        "    leaq -56(%rbp), %rdi\n"
        "    call tool_fork_leave\n"
        "    leaq -16(%rbp), %rsp\n"
        "    popq %r12\n"
        "    popq %rbx\n"
        "    popq %rbp\n"
        "    .cfi_def_cfa %rsp, 8\n"
        "    ret\n"
        "    .cfi_endproc\n"
        ".size __kmpc_fork_call, .-__kmpc_fork_call\n");
#endif
