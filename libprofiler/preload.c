/* preload.c - where the program begins, for the preloaded tool.
 *
 * Built into the shared tool only (`whatif run` preloads it).  It wraps
 * glibc's __libc_start_main, which the program's _start calls once every
 * shared library has been loaded and initialized: the program's own work
 * (its constructors, then main) starts there, and the time the dynamic
 * loader and the libraries' constructors took before it is left out.
 * The linked-in tool has no such wrapper: its constructor runs among the
 * program's own, just before main.
 *
 * It also wraps pthread_create, so that the end of a thread's start
 * routine is seen: libomp unregisters a thread it adopted in a
 * thread-exit destructor, whose time (spinning on the runtime's locks
 * while other threads exit) is no work of the program's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <unistd.h>

#include "tool.h"

typedef int (*main_fn)(int, char **, char **);
typedef int (*start_main_fn)(main_fn, int, char **, void (*)(void),
                             void (*)(void), void (*)(void), void *);

__attribute__((visibility("default"))) int
__libc_start_main(main_fn main, int argc, char **argv, void (*init)(void),
                  void (*fini)(void), void (*rtld_fini)(void),
                  void *stack_end)
{
    start_main_fn real = (start_main_fn)dlsym(RTLD_NEXT, "__libc_start_main");
    if (!real) { /* cannot happen in a dynamically linked program */
        static const char msg[] = "whatif: cannot find __libc_start_main\n";
        if (write(2, msg, sizeof(msg) - 1) < 0)
            _exit(127);
        _exit(127);
    }
    tool_program_starts();
    return real(main, argc, argv, init, fini, rtld_fini, stack_end);
}

/* _exit runs no exit handler: the profile of the run so far is written
 * first, as for exit() (partial when threads are still inside OpenMP). */
typedef void (*exit_fn)(int);

__attribute__((visibility("default"), noreturn)) void _exit(int status)
{
    exit_fn real = (exit_fn)dlsym(RTLD_NEXT, "_exit");
    tool_program_exits();
    if (real)
        real(status);
    for (;;) /* cannot happen: _exit is libc's */
        ;
}

__attribute__((visibility("default"), noreturn)) void _Exit(int status)
{
    exit_fn real = (exit_fn)dlsym(RTLD_NEXT, "_Exit");
    tool_program_exits();
    if (real)
        real(status);
    for (;;)
        ;
}

/* The thread the program asked for, run through run_thread. */
typedef struct thread_start {
    void *(*routine)(void *);
    void *arg;
} thread_start;

typedef int (*create_fn)(pthread_t *, const pthread_attr_t *,
                         void *(*)(void *), void *);
typedef void (*thread_exit_fn)(void *);

static void *run_thread(void *p)
{
    thread_start start = *(thread_start *)p;
    free(p);
    void *ret = start.routine(start.arg);
    tool_thread_returns();
    return ret;
}

__attribute__((visibility("default"))) int
pthread_create(pthread_t *thread, const pthread_attr_t *attr,
               void *(*routine)(void *), void *arg)
{
    create_fn real = (create_fn)dlsym(RTLD_NEXT, "pthread_create");
    if (!real)
        return EAGAIN;
    thread_start *start = malloc(sizeof(*start));
    if (!start) /* unwrapped: only the teardown is counted then */
        return real(thread, attr, routine, arg);
    start->routine = routine;
    start->arg = arg;
    int rc = real(thread, attr, run_thread, start);
    if (rc)
        free(start);
    return rc;
}

__attribute__((visibility("default"), noreturn)) void pthread_exit(void *ret)
{
    thread_exit_fn real = (thread_exit_fn)dlsym(RTLD_NEXT, "pthread_exit");
    tool_thread_returns();
    if (real)
        real(ret);
    abort(); /* cannot happen: pthread_exit is libc's */
}
