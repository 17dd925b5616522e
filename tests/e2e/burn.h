/* burn.h - a known amount of work for the end-to-end programs.
 *
 * burn_ms() spins until the calling thread has used ms milliseconds of CPU
 * time: with the cputime metric, the work whatif measures for a fragment is
 * then known by construction, whatever else the machine is doing.
 */
#ifndef WHATIF_TESTS_BURN_H
#define WHATIF_TESTS_BURN_H

#include <time.h>

static volatile unsigned long burn_sink;

static inline void burn_ms(double ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    long target = (long)(ms * 1e6);
    for (;;) {
        for (int i = 0; i < 2000; i++)
            burn_sink += (unsigned long)i * 2654435761u;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000000000L + (t.tv_nsec - t0.tv_nsec) >=
            target)
            return;
    }
}

#endif
