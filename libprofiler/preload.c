/* preload.c - where the program begins, for the preloaded tool.
 *
 * Built into the shared tool only (`whatif run` preloads it).  It wraps
 * glibc's __libc_start_main, which the program's _start calls once every
 * shared library has been loaded and initialized: the program's own work
 * (its constructors, then main) starts there, and the time the dynamic
 * loader and the libraries' constructors took before it is left out.
 * The linked-in tool has no such wrapper: its constructor runs among the
 * program's own, just before main.
 */
#include <dlfcn.h>
#include <stddef.h>
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
