/* process.c - a program that does what programs do around their OpenMP
 * code: start children, fork, crash, exit abruptly, change directory,
 * wait for a signal.  tests/e2e_run.sh profiles each.
 *
 *   process WHAT    (none, child, system, fork, forkexit, forkrace, crash,
 *                    abort, overflow, quickexit, cquickexit, exitgroup,
 *                    closefds, chdir, sleep, stdin, toolsoff; toolsoff needs
 *                    PROCESS_WHAT=toolsoff too)
 *
 * quickexit ends with _exit, cquickexit with C11's quick_exit, exitgroup
 * with a raw exit_group system call (no exit handler of anyone's runs).
 * closefds closes every descriptor from 3 up, as a daemon does, then
 * writes "mine" into own.txt, which it leaves open: it takes the number
 * of a descriptor the profiler had.
 *
 * stdin: a thread of the program's own runs a region and ends (its OpenMP
 * thread ends with it), then the program copies a line of its standard
 * input to its output: the profiler must leave the program's files alone.
 *
 * Every case but "child" runs a parallel region of 10 ms of CPU per
 * thread, does WHAT, then runs another; "child" is the program system()
 * starts, with a region of its own.  The program's own output is one line
 * on stdout; system, fork and forkexit print on stderr the work the parent
 * measured of itself ("whatif-expect work=").
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "selftime.h"

/* A forked child must end as it would without the profiler: status 0.
 * Returns 3 (the program's failure) otherwise. */
static int child_ok(int status)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return 0;
    fprintf(stderr, "process: the forked child ended with status %d%s\n",
            status, WIFSIGNALED(status) ? " (a signal)" : "");
    return 3;
}

/* What the parent's threads measured of their own regions' work. */
static uint64_t parent_burned;

static void region(double ms)
{
#pragma omp parallel
    {
        uint64_t ns = st_burn(ms);
        __atomic_fetch_add(&parent_burned, ns, __ATOMIC_RELAXED);
    }
}

static void *thread_region(void *arg)
{
    (void)arg;
    region(5);
    return NULL;
}

/* Recurses until the stack runs out: SIGSEGV with no stack left to run a
 * handler on, unless one has a signal stack. */
static int overflow(int depth)
{
    volatile char pad[4096];
    pad[0] = (char)depth;
    return overflow(depth + 1) + pad[0];
}

/* toolsoff: the program turns the tools interface off before the
 * runtime reads its settings (libomp does when it is loaded). */
__attribute__((constructor(101))) static void tools_off(void)
{
    const char *what = getenv("PROCESS_WHAT");
    if (what && !strcmp(what, "toolsoff"))
        setenv("OMP_TOOL", "disabled", 1);
}

int main(int argc, char **argv)
{
    const char *what = argc > 1 ? argv[1] : "none";
    if (!strcmp(what, "child")) {
        region(5);
        printf("child ok\n");
        return 0;
    }
    region(10);
    /* The fragment between the regions (a fork, a wait, a system()) is
     * the parent's work too; on a loaded VM it can weigh milliseconds. */
    uint64_t between = st_now();
    if (!strcmp(what, "system")) {
        char cmd[4096];
        snprintf(cmd, sizeof(cmd), "%s child", argv[0]);
        if (system(cmd))
            return 3;
    } else if (!strcmp(what, "fork")) {
        pid_t p = fork();
        if (p == 0) {
            region(5);
            _exit(0);
        }
        int st = 0;
        waitpid(p, &st, 0);
        if (child_ok(st))
            return 3;
    } else if (!strcmp(what, "forkrace")) {
        /* both processes start new threads after the fork: the child's
         * must not write the streams the parent's new threads write */
        pid_t p = fork();
        if (p == 0) {
            usleep(150000);
#pragma omp parallel num_threads(4)
            st_burn(1);
            _exit(0);
        }
        /* until the child is gone: long enough for the parent's new
         * threads to have written blocks the child could truncate */
        int st = 0;
        while (waitpid(p, &st, WNOHANG) == 0) {
#pragma omp parallel num_threads(4)
            st_sink++;
        }
        if (child_ok(st))
            return 3;
    } else if (!strcmp(what, "forkexit")) {
        pid_t p = fork();
        if (p == 0)
            exit(0); /* runs the exit handlers the parent registered */
        int st = 0;
        waitpid(p, &st, 0);
        if (child_ok(st))
            return 3;
    } else if (!strcmp(what, "crash")) {
        raise(SIGSEGV);
    } else if (!strcmp(what, "abort")) {
        abort();
    } else if (!strcmp(what, "overflow")) {
        overflow(1);
    } else if (!strcmp(what, "quickexit")) {
        fflush(stdout);
        _exit(0);
    } else if (!strcmp(what, "cquickexit")) {
        fflush(stdout);
        quick_exit(0);
    } else if (!strcmp(what, "exitgroup")) {
        fflush(stdout);
        syscall(SYS_exit_group, 0);
    } else if (!strcmp(what, "closefds")) {
        for (int fd = 3; fd < 1024; fd++)
            close(fd);
        int own = open("own.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (own < 0 || write(own, "mine\n", 5) != 5)
            return 7;
    } else if (!strcmp(what, "chdir")) {
        if (chdir("/"))
            return 4;
    } else if (!strcmp(what, "stdin")) {
        pthread_t t;
        char line[256];
        if (pthread_create(&t, NULL, thread_region, NULL) ||
            pthread_join(t, NULL))
            return 5;
        if (!fgets(line, sizeof(line), stdin))
            return 6;
        printf("read %s", line);
    } else if (!strcmp(what, "sleep")) {
        sleep(30);
    }
    between = st_now() - between;
    region(10);
    printf("parent ok\n");
    if (!strcmp(what, "system") || !strcmp(what, "fork") ||
        !strcmp(what, "forkexit"))
        st_expect_work(parent_burned + between);
    return 0;
}
