/* hotspot.c - serial code with a known hot spot, for critical_lines.csv.
 *
 *   hotspot
 *
 * main calls hot() twice, from two places, and cold() once, each in a
 * serial fragment of its own (parallel regions between them), so that a
 * fragment's samples all fall in one function.  hot() and cold() spend
 * their time on one source line each (HOT_LINE, COLD_LINE below: the
 * test finds them by these markers) and measure their own CPU time; at the
 * end the program prints "whatif-hot ns=H" and "whatif-cold ns=C" on
 * stderr.  The critical path is then hot's line (H), cold's line (C) and
 * the regions' own 2 x 5 ms.
 */
#include <stdint.h>
#include <stdio.h>

#include "selftime.h"

static volatile unsigned long sink;

/* Spins ms of CPU time on one line; reads the clock rarely, so that
 * nearly every sample falls on that line. */
__attribute__((noinline)) static uint64_t hot(double ms)
{
    uint64_t t0 = st_now(), t;
    do {
        for (int i = 0; i < 200000; i++) sink += (unsigned long)i * 2654435761u; /* HOT_LINE */
        t = st_now();
    } while (t - t0 < (uint64_t)(ms * 1e6));
    return t - t0;
}

__attribute__((noinline)) static uint64_t cold(double ms)
{
    uint64_t t0 = st_now(), t;
    do {
        for (int i = 0; i < 200000; i++) sink ^= (unsigned long)i * 40503u; /* COLD_LINE */
        t = st_now();
    } while (t - t0 < (uint64_t)(ms * 1e6));
    return t - t0;
}

static void region(void)
{
#pragma omp parallel
    st_burn(5);
}

int main(void)
{
    uint64_t h = hot(60);
    region();
    /* 50 ms: about 50 samples at 1 kHz, so that one sample that falls
     * on the clock read instead (a 20 ms fragment lost 5% to it) stays
     * well inside the test's 5% */
    uint64_t c = cold(50);
    region();
    h += hot(60);
    fprintf(stderr, "whatif-hot ns=%llu\nwhatif-cold ns=%llu\n",
            (unsigned long long)h, (unsigned long long)c);
    printf("ok %lu\n", sink & 1);
    return 0;
}
