/* selftime.h - end-to-end programs that measure their own work.
 *
 * A fragment's CPU time on this VM varies by 3-40% from one run of the same
 * code to the next, so a test that expects an analytic value ("four units
 * of 10 ms") must leave margins that hide real defects.  These programs
 * time every serial fragment of their known structure themselves, with
 * CLOCK_THREAD_CPUTIME_ID, and compute the exact work and span of that
 * structure from those times; whatif measures the same fragments, so the
 * noise cancels and the test can ask for a tight agreement.
 *
 * Usage in a program: st_burn(ms) burns ms of thread CPU time and returns
 * the nanoseconds it really took; at the end, st_expect(work, span) prints
 * "whatif-expect work=W span=S" on stderr, and st_count(tag, n) prints
 * "whatif-count TAG N" (the number of dynamic instances of a construct,
 * which a location's instance count must not exceed).
 */
#ifndef WHATIF_TESTS_SELFTIME_H
#define WHATIF_TESTS_SELFTIME_H

#include <stdint.h>
#include <stdio.h>
#include <time.h>

static volatile unsigned long st_sink;

static inline uint64_t st_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Burns at least ms milliseconds of the calling thread's CPU time and
 * returns how many nanoseconds it took, measured. */
static inline uint64_t st_burn(double ms)
{
    uint64_t t0 = st_now(), t;
    uint64_t target = (uint64_t)(ms * 1e6);
    do {
        for (int i = 0; i < 500; i++)
            st_sink += (unsigned long)i * 2654435761u;
        t = st_now();
    } while (t - t0 < target);
    return t - t0;
}

static inline uint64_t st_max(uint64_t a, uint64_t b)
{
    return a > b ? a : b;
}

static inline void st_expect(uint64_t work, uint64_t span)
{
    fprintf(stderr, "whatif-expect work=%llu span=%llu\n",
            (unsigned long long)work, (unsigned long long)span);
}

/* Only the work: for programs whose span the test judges otherwise. */
static inline void st_expect_work(uint64_t work)
{
    fprintf(stderr, "whatif-expect work=%llu\n", (unsigned long long)work);
}

static inline void st_count(const char *tag, uint64_t n)
{
    fprintf(stderr, "whatif-count %s %llu\n", tag, (unsigned long long)n);
}

#endif
