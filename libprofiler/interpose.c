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

#define EXPORT __attribute__((visibility("default")))

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
    tool_runtime_span sp;
    tool_runtime_enter(&sp);
    void *t = real(loc, gtid, flags, task_size, shareds_size, entry);
    tool_runtime_leave(&sp);
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
    tool_runtime_span sp;
    tool_runtime_enter(&sp);
    int32_t r = real(loc, gtid, task);
    tool_runtime_leave(&sp);
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
    tool_runtime_span sp;
    tool_runtime_enter(&sp);
    int32_t r = real(loc, gtid, task, ndeps, deps, ndeps_noalias,
                     noalias_deps);
    tool_runtime_leave(&sp);
    return r;
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
 * on: the wrapper is a few instructions of assembly that save the
 * argument registers, let the tool close the caller's fragment (so the
 * runtime's work before the parallel-begin event, up to hundreds of
 * microseconds for a team's first fork, stays out of it), restore them
 * and jump to the runtime's entry with the caller's frame untouched. */
#if defined(__x86_64__)
void *tool_fork_enter(void);

void *tool_fork_enter(void)
{
    REAL(void *, __kmpc_fork_call)
    tool_fork_enters();
    return real;
}

__asm__(".text\n"
        ".globl __kmpc_fork_call\n"
        ".type __kmpc_fork_call, @function\n"
        "__kmpc_fork_call:\n"
        "    endbr64\n"
        "    pushq %rbp\n"
        "    movq %rsp, %rbp\n"
        "    subq $192, %rsp\n"          /* 6 GPRs, %rax, 8 xmm, aligned */
        "    movq %rdi, 0(%rsp)\n"
        "    movq %rsi, 8(%rsp)\n"
        "    movq %rdx, 16(%rsp)\n"
        "    movq %rcx, 24(%rsp)\n"
        "    movq %r8, 32(%rsp)\n"
        "    movq %r9, 40(%rsp)\n"
        "    movq %rax, 48(%rsp)\n"
        "    movdqu %xmm0, 48+8(%rsp)\n"
        "    movdqu %xmm1, 64+8(%rsp)\n"
        "    movdqu %xmm2, 80+8(%rsp)\n"
        "    movdqu %xmm3, 96+8(%rsp)\n"
        "    movdqu %xmm4, 112+8(%rsp)\n"
        "    movdqu %xmm5, 128+8(%rsp)\n"
        "    movdqu %xmm6, 144+8(%rsp)\n"
        "    movdqu %xmm7, 160+8(%rsp)\n"
        "    call tool_fork_enter\n"
        "    movq %rax, %r11\n"          /* the runtime's entry */
        "    movq 0(%rsp), %rdi\n"
        "    movq 8(%rsp), %rsi\n"
        "    movq 16(%rsp), %rdx\n"
        "    movq 24(%rsp), %rcx\n"
        "    movq 32(%rsp), %r8\n"
        "    movq 40(%rsp), %r9\n"
        "    movq 48(%rsp), %rax\n"
        "    movdqu 48+8(%rsp), %xmm0\n"
        "    movdqu 64+8(%rsp), %xmm1\n"
        "    movdqu 80+8(%rsp), %xmm2\n"
        "    movdqu 96+8(%rsp), %xmm3\n"
        "    movdqu 112+8(%rsp), %xmm4\n"
        "    movdqu 128+8(%rsp), %xmm5\n"
        "    movdqu 144+8(%rsp), %xmm6\n"
        "    movdqu 160+8(%rsp), %xmm7\n"
        "    leave\n"
        "    jmp *%r11\n"
        ".size __kmpc_fork_call, .-__kmpc_fork_call\n");
#endif
