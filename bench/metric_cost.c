/* metric_cost.c - cost of one read of each work metric on this machine.
 *
 *   metric_cost [READS]     prints ns per counter_read() for every metric
 *                           that can be opened here (median of 7 runs)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include "counter.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

int main(int argc, char **argv)
{
    long reads = argc > 1 ? atol(argv[1]) : 200000;
    /* "cputime-syscall": cputime without the switch page, as on a kernel
     * that does not allow perf_event_open */
    /* "-read": the PMU metric through read(2), as where the kernel does
     * not allow rdpmc */
    const char *names[] = {"monotonic", "cputime", "cputime-syscall",
                           "instructions", "instructions-read", "cycles",
                           "cycles-read"};
    printf("| metric | ns per read | note |\n|---|---:|---|\n");
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        int syscall_only = !strcmp(names[i], "cputime-syscall") ||
                           strstr(names[i], "-read") != NULL;
        char base[32];
        snprintf(base, sizeof(base), "%.*s",
                 (int)strcspn(names[i], "-"), names[i]);
        counter_metric m;
        counter_thread ct;
        char err[256];
        if (counter_choose(base, &m, err,
                           sizeof(err)) ||
            counter_thread_open(&m, &ct)) {
            printf("| %s | - | %s |\n", names[i], err);
            continue;
        }
        if (syscall_only && !strcmp(base, "cputime")) {
            counter_thread_close(&ct); /* leaves the plain clock reader */
        } else if (syscall_only && ct.page) {
            munmap(ct.page, ct.page_len); /* leaves read(2) */
            ct.page = NULL;
        }
        const char *note =
            !strcmp(m.name, "monotonic")
                ? (m.clock.tsc ? "TSC, scaled" : "clock_gettime (vDSO)")
            : !strcmp(m.name, "cputime")
                ? (ct.page ? (m.clock.tsc ? "TSC between context switches"
                                    : "monotonic between context switches")
                           : "clock_gettime(CLOCK_THREAD_CPUTIME_ID)")
                : (ct.page ? "rdpmc" : "read(2)");
        double runs[7];
        volatile uint64_t sink = 0;
        for (int r = 0; r < 7; r++) {
            double t0 = now_ns();
            for (long k = 0; k < reads; k++)
                sink += counter_read(&m, &ct);
            runs[r] = (now_ns() - t0) / (double)reads;
        }
        qsort(runs, 7, sizeof(runs[0]), cmp);
        printf("| %s | %.1f | %s |\n", names[i], runs[3], note);
        counter_thread_close(&ct);
    }
    return 0;
}
