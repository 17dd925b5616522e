/* test_sampler.c - libprofiler/sampler.c on its own.
 *
 * A thread spins 100 ms of user-mode CPU time in one function, sampled
 * every 1 ms of its CPU time: the ring must hand back about 100 samples
 * (80..120: the clock's edges), every one inside that function, and a
 * second drain none.  Where perf_event_open is not allowed the test says
 * so and passes: the tool then profiles without samples.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "sampler.h"

static volatile unsigned long sink;

static uint64_t cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

__attribute__((noinline)) static void spin(uint64_t ns)
{
    uint64_t t0 = cpu_now();
    while (cpu_now() - t0 < ns)
        for (int i = 0; i < 100000; i++)
            sink += (unsigned long)i;
}
__attribute__((noinline)) static void spin_end(void) {}

typedef struct seen {
    size_t n, inside;
} seen;

static void count(void *arg, uint64_t ip)
{
    seen *s = arg;
    s->n++;
    /* spin's code lies between it and the next function; ip may also be
     * in the clock's code it calls (vDSO or libc) */
    if (ip >= (uint64_t)(uintptr_t)spin && ip < (uint64_t)(uintptr_t)spin_end)
        s->inside++;
}

int main(void)
{
    sampler_thread sm;
    if (sampler_open(&sm, 1000000)) {
        printf("perf_event_open not allowed here (%s): nothing to test\n",
               strerror(errno));
        return 0;
    }
    spin(100000000);
    seen s = {0, 0};
    size_t got = sampler_drain(&sm, count, &s);
    seen again = {0, 0};
    size_t more = sampler_drain(&sm, count, &again);
    uint64_t lost = sm.lost;
    sampler_close(&sm);
    int ok = got == s.n && got >= 80 && got <= 120 &&
             s.inside * 10 >= got * 9 && more <= 1;
    printf("%zu samples for 100 ms (%zu in the spinning function), then %zu,"
           " %llu lost: %s\n", got, s.inside, more,
           (unsigned long long)lost, ok ? "ok" : "FAIL");
    return !ok;
}
