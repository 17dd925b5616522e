/* timeline.h - instantaneous parallelism: how many grains run at once.
 *
 * Grains are added as time intervals on the thread that ran them.  On one
 * thread a grain that runs inside another (a task executed at its
 * parent's taskwait) is not a second grain running: each thread counts as
 * busy over the union of its intervals, so the count at any moment is at
 * most the number of threads.  Waits are intervals in which a thread
 * ran nothing although a grain of it had started and not ended (a task
 * at a taskwait whose children run elsewhere): they are cut out of that
 * thread's union.  The result is a step function, reported in equal bins
 * of time: the mean count over each bin and its maximum.
 * Memory: 16 bytes a grain or wait until timeline_bins.
 */
#ifndef WHATIF_TIMELINE_H
#define WHATIF_TIMELINE_H

#include <stddef.h>
#include <stdint.h>

typedef struct timeline timeline;

typedef struct timeline_bin {
    uint64_t start, end; /* [start, end), the clock's ns */
    double mean;         /* grains running, averaged over the bin */
    uint32_t max;        /* the most running at once inside it */
} timeline_bin;

typedef struct timeline_summary {
    uint64_t first, last; /* the first busy instant, the last busy one's end */
    uint64_t busy;        /* ns of thread time inside some grain, waits
                           * left out */
    uint32_t max;         /* the most grains running at once */
    uint32_t threads;     /* threads that ran a timed grain */
    double mean;          /* busy / (last - first): running on average */
} timeline_summary;

timeline *timeline_new(void);
void timeline_free(timeline *t);

/* A grain ran on thread from start to end (ns).  Returns 0, or -1 when
 * out of memory; an empty interval (start >= end) and a thread >=
 * TIMELINE_THREADS_MAX are ignored (0). */
#define TIMELINE_THREADS_MAX 65536u
int timeline_add(timeline *t, uint32_t thread, uint64_t start, uint64_t end);

/* Thread ran nothing from start to end (ns); the same rules. */
int timeline_add_wait(timeline *t, uint32_t thread, uint64_t start,
                      uint64_t end);

/* The step function in nbins equal bins from the first start to the last
 * end (fewer when that span has fewer ns), malloc'd into *bins (NULL and 0
 * when no grain was added), and the summary.  The intervals are consumed:
 * call once.  Returns 0, or -1 when out of memory. */
int timeline_bins(timeline *t, size_t nbins, timeline_bin **bins,
                  size_t *nout, timeline_summary *sum);

#endif
