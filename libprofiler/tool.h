/* tool.h - what the OMPT tool (tool.c) offers its own other modules. */
#ifndef WHATIF_TOOL_H
#define WHATIF_TOOL_H

#include <stddef.h>
#include <stdint.h>

/* The program proper begins now (called once, before main, by the
 * preloaded tool's __libc_start_main wrapper): its serial work is counted
 * from here. */
void tool_program_starts(void);

/* The program ends without its exit handlers (_exit): they run now. */
void tool_program_exits(void);

/* A thread the program created returns from its start routine (or calls
 * pthread_exit): its work ends here, before the runtime's teardown of the
 * thread, which runs in a thread-exit destructor. */
void tool_thread_returns(void);

/* The OpenMP runtime's entry points interpose.c wraps, when the tool is
 * preloaded or linked in: the runtime's own time inside them is left out
 * of the fragments around them.  enter and leave bracket the real call: a
 * fragment that a callback inside the call ends, ends where the call
 * began; one that began inside the call (or the caller's, when no
 * callback came) restarts where the call returns. */
typedef struct tool_runtime_span {
    unsigned char active;
    unsigned char prev_skip;   /* tool_runtime_enter: the enclosing call's */
    uint64_t opens;
    uint64_t start;
    union {
        uint64_t prev_cut;     /* tool_runtime_enter: the enclosing call's */
        const void *prev_site; /* tool_fork_enters: the enclosing fork's */
    };
    union {
        const void *prev_ident; /* tool_fork_enters: the enclosing fork's */
        void *ctx;              /* tool_runtime_enter: the calling task's */
    };
} tool_runtime_span;
/* The fork wrapper (interpose.c, assembly) keeps a span in 40 bytes of its
 * frame. */
_Static_assert(sizeof(tool_runtime_span) <= 40,
               "tool_runtime_span outgrew the fork wrapper's slot");
/* The program calls an OpenMP API function that may start the runtime
 * (interpose.c): if it has not started, the main thread's work ends here
 * (1: then tool_api_returns must follow the call). */
int tool_api_enters(void);
void tool_api_returns(void);
/* First thing in a wrapper that may start the runtime (before it looks
 * up the real function): the main thread's samples up to here are its
 * own code's, those after are the tool's and the runtime's start-up. */
void tool_sample_mark(void);

/* What the wrapper does with the runtime's time tool_runtime_leave
 * returns: nothing, sum it, or sum it for a thread's first TOOL_RT_ALL
 * calls and one in TOOL_RT_SAMPLE after (the time after a callback inside
 * the call costs a metric read only in the calls it is measured in). */
enum { TOOL_RT_UNTIMED, TOOL_RT_TIMED, TOOL_RT_SAMPLED };
#define TOOL_RT_ALL 256u
#define TOOL_RT_SAMPLE 16u
/* tool_runtime_leave's value for a call not measured */
#define TOOL_RT_UNMEASURED UINT64_MAX

void tool_runtime_enter(tool_runtime_span *sp, int timing);
/* Returns the runtime's time it left out of the fragments (metric units),
 * or TOOL_RT_UNMEASURED. */
uint64_t tool_runtime_leave(const tool_runtime_span *sp);
/* tool_runtime_leave for a task's allocation (the construct's ident_t,
 * the runtime's flags and sizes as the program passed them): its span may
 * go on into the call that queues the task (then TOOL_RT_UNMEASURED). */
uint64_t tool_alloc_leave(const tool_runtime_span *sp, const void *loc,
                          int32_t flags, size_t task_size,
                          size_t shareds_size);
/* tool_runtime_enter(sp, TOOL_RT_SAMPLED) for a call that queues a task:
 * the allocation's span goes on where tool_alloc_leave left it open. */
void tool_task_enter(tool_runtime_span *sp);
/* Creating a task (allocation, queueing) took the runtime ns of its own
 * time (TOOL_RT_UNMEASURED: the creation is not measured); created: the
 * task is now queued (one more task). */
void tool_task_runtime(uint64_t ns, int created);
/* Handing out loop chunks (a dynamic chunk's __kmpc_dispatch_next, a
 * static part's __kmpc_for_static_init) took the runtime ns of its own
 * time. */
void tool_chunk_runtime(uint64_t ns);

/* code as the program's call site: an address inside a wrapper of
 * interpose.c (the runtime reports its caller's return address) stands
 * for the program's call of the innermost wrapper running on this thread;
 * any other address is returned as it is. */
const void *tool_call_site(const void *code);
/* The ident_t (source location the compiler passed) of that call, or
 * NULL. */
const void *tool_call_ident(const void *code);

/* The runtime allocated task (a kmp_task_t): the creation event that
 * follows on this thread is its. */
void tool_task_allocated(void *task);
/* __kmpc_omp_task(task) is about to queue task: returns 1 when it is the
 * running untied task ending a part (the thread goes back to the task
 * below it). */
int tool_task_requeued(void *task);

/* The program enters __kmpc_fork_call: its fragment ends here, before the
 * runtime's own work towards the parallel-begin event.  tool_fork_returns
 * at the call's return: the fragment that the parallel-end event opened
 * starts again here.  call_site is the program's return address,
 * microtask the outlined body the fork runs. */
void tool_fork_enters(tool_runtime_span *sp, const void *call_site,
                      const void *microtask, const void *ident);
void tool_fork_returns(const tool_runtime_span *sp);
/* The wrapper calls the runtime's fork, which therefore reports the
 * wrapper's own return address as the construct's code address: the
 * address after that call (interpose.c), mapped back to the program's
 * call site on this thread. */
extern const char tool_fork_landing[];

/* depend(sink) waits inside the runtime before its callback: the wrapper
 * ends the fragment before the wait (begin returns 1 when it did) and
 * reopens it when no callback came. */
int tool_doacross_wait_begin(void);
void tool_doacross_wait_end(void);

/* The program pauses the runtime hard (omp_pause_resource[_all] with
 * omp_pause_hard): the runtime finalizes the tools interface inside the
 * call and sends no event after it. */
void tool_hard_pause(void);

/* Inside a reduction(task) clause's set-up or end, whose taskgroup the
 * runtime opens itself: the program's call site; NULL elsewhere. */
const void *tool_taskred_site(void);

#endif
