/* test_timeline.c - instantaneous parallelism (analyzer/timeline.c)
 * against a brute-force count, instant by instant, on random intervals:
 * nested and overlapping ones on one thread (a thread counts once), ends
 * that meet starts, empty intervals, bins of uneven width, and waits (a
 * thread inside a grain that runs nothing) inside, across and outside its
 * grains.  Also known answers by hand.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "timeline.h"

static int npass, nfail;

#define CHECK(cond, ...)                                                     \
    do {                                                                     \
        if (cond) {                                                          \
            npass++;                                                         \
        } else {                                                             \
            nfail++;                                                         \
            printf("FAIL %s:%d: ", __FILE__, __LINE__);                      \
            printf(__VA_ARGS__);                                             \
            putchar('\n');                                                   \
        }                                                                    \
    } while (0)

#define MAXT 6
#define MAXI 40
#define HORIZON 300

typedef struct iv {
    uint32_t thread;
    uint64_t start, end;
    int wait;  /* a wait, not a grain */
} iv;

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* Threads inside some grain and no wait at instant x: [start, end) covers
 * x. */
static uint32_t running_at(const iv *v, size_t n, uint64_t x)
{
    int on[MAXT] = {0}, off[MAXT] = {0};
    for (size_t i = 0; i < n; i++)
        if (v[i].start <= x && x < v[i].end)
            (v[i].wait ? off : on)[v[i].thread] = 1;
    for (int t = 0; t < MAXT; t++)
        on[t] &= !off[t];
    uint32_t c = 0;
    for (int t = 0; t < MAXT; t++)
        c += (uint32_t)on[t];
    return c;
}

static void random_case(uint64_t seed)
{
    uint64_t s = seed * 2654435761u + 1;
    size_t n = (size_t)(rnd(&s) % MAXI) + 1;
    uint32_t threads = (uint32_t)(rnd(&s) % MAXT) + 1;
    iv v[MAXI];
    timeline *t = timeline_new();
    uint64_t base = 1000000 + rnd(&s) % 1000;
    unsigned wait_pct = (unsigned)(rnd(&s) % 3) * 20; /* 0, 20, 40% */
    for (size_t i = 0; i < n; i++) {
        v[i].thread = (uint32_t)(rnd(&s) % threads);
        v[i].start = base + rnd(&s) % HORIZON;
        v[i].end = v[i].start + rnd(&s) % (HORIZON / 3);
        v[i].wait = rnd(&s) % 100 < wait_pct;
        if ((v[i].wait ? timeline_add_wait : timeline_add)(
                t, v[i].thread, v[i].start, v[i].end)) {
            CHECK(0, "seed %llu: out of memory", (unsigned long long)seed);
            timeline_free(t);
            return;
        }
    }
    size_t want_bins = (size_t)(rnd(&s) % 12) + 1;
    timeline_bin *b;
    size_t nb;
    timeline_summary sum;
    int rc = timeline_bins(t, want_bins, &b, &nb, &sum);
    timeline_free(t);
    CHECK(rc == 0, "seed %llu: timeline_bins failed",
          (unsigned long long)seed);
    if (rc)
        return;
    uint64_t first = UINT64_MAX, last = 0, busy = 0;
    uint32_t used[MAXT] = {0}, nthreads = 0, most = 0;
    for (uint64_t x = base; x < base + 2 * HORIZON; x++)
        for (uint32_t th = 0; th < threads; th++) {
            iv one[MAXI];
            size_t m = 0;
            for (size_t i = 0; i < n; i++)
                if (v[i].thread == th)
                    one[m++] = v[i];
            if (running_at(one, m, x)) { /* th is busy at x */
                first = x < first ? x : first;
                last = x + 1 > last ? x + 1 : last;
                used[th] = 1;
            }
        }
    int ok = 1;
    if (first == UINT64_MAX) { /* only empty intervals */
        ok &= sum.busy == 0 && sum.max == 0;
        CHECK(ok, "seed %llu: empty intervals: busy %llu max %u",
              (unsigned long long)seed, (unsigned long long)sum.busy,
              sum.max);
        free(b);
        return;
    }
    for (int k = 0; k < MAXT; k++)
        nthreads += used[k];
    for (uint64_t x = first; x < last; x++) {
        uint32_t c = running_at(v, n, x);
        busy += c;
        most = c > most ? c : most;
    }
    ok &= sum.busy == busy && sum.max == most && sum.max <= threads;
    CHECK(ok, "seed %llu: busy %llu (brute %llu), max %u (brute %u)",
          (unsigned long long)seed, (unsigned long long)sum.busy,
          (unsigned long long)busy, sum.max, most);
    /* bins tile [first start, last end) of the intervals that are not
     * empty */
    ok = nb >= 1 && nb <= want_bins && b[0].start == first &&
         b[nb - 1].end == last && sum.first == first && sum.last == last;
    for (size_t k = 1; k < nb; k++)
        ok &= b[k].start == b[k - 1].end && b[k].end > b[k].start;
    CHECK(ok, "seed %llu: %zu bins do not tile the run",
          (unsigned long long)seed, nb);
    if (!ok) { /* no brute force over a bogus range */
        free(b);
        return;
    }
    CHECK(sum.threads == nthreads,
          "seed %llu: %u threads, brute %u", (unsigned long long)seed,
          sum.threads, nthreads);
    for (size_t k = 0; k < nb; k++) {
        uint64_t tot = 0;
        uint32_t bmax = 0;
        for (uint64_t x = b[k].start; x < b[k].end; x++) {
            uint32_t c = running_at(v, n, x);
            tot += c;
            bmax = c > bmax ? c : bmax;
        }
        double mean = (double)tot / (double)(b[k].end - b[k].start);
        if (fabs(mean - b[k].mean) > 1e-9 || bmax != b[k].max) {
            CHECK(0, "seed %llu bin %zu [%llu,%llu): mean %.6f max %u, "
                     "brute %.6f %u",
                  (unsigned long long)seed, k,
                  (unsigned long long)b[k].start,
                  (unsigned long long)b[k].end, b[k].mean, b[k].max, mean,
                  bmax);
            break;
        }
    }
    free(b);
}

static void known_answers(void)
{
    /* two threads, the second inside its own nested interval: 1, then 2,
     * then 1 grain running */
    timeline *t = timeline_new();
    timeline_add(t, 0, 100, 400);
    timeline_add(t, 1, 200, 300);
    timeline_add(t, 1, 220, 280); /* nested on thread 1: not a third */
    timeline_bin *b;
    size_t nb;
    timeline_summary s;
    timeline_bins(t, 3, &b, &nb, &s);
    timeline_free(t);
    CHECK(nb == 3 && s.first == 100 && s.last == 400 && s.busy == 400 &&
              s.max == 2 && s.threads == 2 && fabs(s.mean - 4.0 / 3) < 1e-12,
          "nested: %zu bins, busy %llu, max %u, mean %.4f", nb,
          (unsigned long long)s.busy, s.max, s.mean);
    CHECK(nb == 3 && b[0].mean == 1 && b[1].mean == 2 && b[2].mean == 1 &&
              b[1].max == 2 && b[0].max == 1,
          "nested bins: %.3f %.3f %.3f", nb ? b[0].mean : -1,
          nb > 1 ? b[1].mean : -1, nb > 2 ? b[2].mean : -1);
    free(b);
    /* a thread that stops as another starts: never two at once */
    t = timeline_new();
    timeline_add(t, 0, 0, 10);
    timeline_add(t, 1, 10, 20);
    timeline_bins(t, 1, &b, &nb, &s);
    timeline_free(t);
    CHECK(s.max == 1 && nb == 1 && b[0].mean == 1, "handover: max %u",
          s.max);
    free(b);
    /* fib at two threads: a task waits at its taskwait while its child
     * runs on the other thread: one running, not two */
    t = timeline_new();
    timeline_add(t, 0, 0, 300);      /* the parent, start to end */
    timeline_add_wait(t, 0, 100, 200); /* its taskwait, nothing to run */
    timeline_add(t, 1, 100, 200);    /* the child */
    timeline_add_wait(t, 1, 250, 260); /* a wait outside any grain */
    timeline_bins(t, 3, &b, &nb, &s);
    timeline_free(t);
    CHECK(s.busy == 300 && s.max == 1 && nb == 3 && b[1].mean == 1 &&
              s.first == 0 && s.last == 300,
          "wait: busy %llu, max %u", (unsigned long long)s.busy, s.max);
    free(b);
    /* nothing added: no bins */
    t = timeline_new();
    CHECK(timeline_bins(t, 10, &b, &nb, &s) == 0 && !b && nb == 0 &&
              s.busy == 0,
          "empty timeline");
    timeline_free(t);
    /* a thread number no profiler writes is ignored */
    t = timeline_new();
    CHECK(timeline_add(t, TIMELINE_THREADS_MAX, 0, 10) == 0 &&
              timeline_bins(t, 4, &b, &nb, &s) == 0 && nb == 0,
          "thread beyond the limit");
    timeline_free(t);
}

int main(void)
{
    known_answers();
    for (uint64_t seed = 1; seed <= 3000; seed++)
        random_case(seed);
    printf("test_timeline: %d passed, %d failed\n", npass, nfail);
    return nfail ? 1 : 0;
}
