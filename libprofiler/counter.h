/* counter.h - how the work of a W-node is measured.
 *
 * A metric is a monotone per-thread count read at the start and end of a
 * fragment.  Sources, in order of preference for the default:
 *   instructions  hardware instructions retired, user mode (perf_event),
 *                 read with rdpmc where the kernel allows, else read(2)
 *   cputime       ns the thread was on a CPU (CLOCK_THREAD_CPUTIME_ID;
 *                 between context switches, which a perf_event software
 *                 page reveals, the much cheaper CLOCK_MONOTONIC delta)
 *   monotonic     CLOCK_MONOTONIC, ns of wall time: cheap, but it also
 *                 counts time the thread was descheduled
 * plus cycles and any libpfm4 event name.  Opening never fakes a count: a
 * PMU event that cannot be opened is an error unless the caller asked for
 * the default, which then falls back to cputime and says why.
 */
#ifndef WHATIF_COUNTER_H
#define WHATIF_COUNTER_H

#include <stddef.h>
#include <stdint.h>

typedef struct counter_thread {
    int fd;                 /* perf event, -1 for clocks */
    void *page;             /* perf mmap page (rdpmc or switches), or NULL */
    size_t page_len;
    /* cputime between context switches: CPU time = anchor_cpu + the
     * CLOCK_MONOTONIC time since anchor_mono, while the page's sequence
     * number (bumped by the kernel at every switch) is anchor_seq */
    uint32_t anchor_seq;
    uint32_t misses;        /* checks that found the estimate far ahead */
    uint64_t anchor_cpu, anchor_mono;
    /* CLOCK_MONOTONIC as the last read found it, where the metric reads
     * that clock anyway (monotonic, cputime between switches) and its
     * readings compare across threads; else 0 */
    uint64_t mono;
} counter_thread;

/* CLOCK_MONOTONIC, or the TSC scaled to it where that is cheaper (tsc). */
typedef struct counter_clock {
    int tsc;                /* readings from the TSC, scaled: */
    int per_cpu;            /* the TSC is not the kernel's clocksource:
                             * readings compare within one thread only */
    uint64_t tsc_mult;      /* ns per tick << 32 */
    uint64_t tsc_base, ns_base; /* a tick count and its CLOCK_MONOTONIC */
} counter_clock;

typedef struct counter_metric {
    char name[64];          /* what run.json says: "cputime", "instructions" */
    char unit[32];          /* "ns", "instructions", "cycles", "events" */
    char reason[768];       /* why this metric (and what was tried first) */
    int kind;               /* internal: which reader */
    int cputime_switches;   /* cputime: context switches can be seen */
    counter_clock clock;    /* the clock the time metrics read */
    uint64_t perf_config;   /* perf_event attr for PMU metrics */
    uint32_t perf_type;
    uint64_t perf_config1, perf_config2;
    /* a PMU metric's measured cost of one read in ns (counter_choose),
     * else 0 */
    double pmu_read_ns;
} counter_metric;

/* Above this a PMU read is a trap, not an rdpmc (~20-40 ns on bare
 * metal, ~0.2-0.6 us as read(2)): a virtual machine's PMU, measured at
 * 1.7-8 us per read, would make a task program run tens of times slower,
 * so the default metric takes thread CPU time there. */
#define COUNTER_SLOW_READ_NS 1000.0

/* Chooses the metric for request (NULL or "" or "default": the best that
 * works here).  Returns 0, or -1 with a one-line message in err (an unknown
 * name, or a PMU event that cannot be opened on this machine). */
int counter_choose(const char *request, counter_metric *m, char *err,
                   size_t errlen);

/* Whether counter_choose would accept request here, without its start-up
 * work (the TSC's calibration): for a process that only passes the name
 * on.  0, or -1 with the same message in err. */
int counter_check(const char *request, char *err, size_t errlen);

/* Per-thread set-up and tear-down; the calling thread is the one measured.
 * Returns 0 or -1 (the thread then reads 0 and the run reports it). */
int counter_thread_open(const counter_metric *m, counter_thread *ct);
void counter_thread_close(counter_thread *ct);

/* The current count of the calling thread. */
uint64_t counter_read(const counter_metric *m, counter_thread *ct);

/* What one back-to-back pair of reads adds to a measured fragment (the
 * least of many tries), so that fragments can leave out the cost of
 * measuring them.  Measured on the calling thread. */
uint64_t counter_read_bias(const counter_metric *m, counter_thread *ct);

/* 1 when the metric counts from the thread's start (thread CPU time), so
 * the initial thread's work before the runtime started the tool is still
 * measurable from 0. */
int counter_counts_from_thread_start(const counter_metric *m);

/* 1 when m is a perf event (a PMU counter): it counts from where its
 * counter_thread was opened, so a count from the program's start needs
 * one opened there. */
int counter_is_event(const counter_metric *m);

/* The clock for times compared across threads (grain start and end
 * times, barrier costs): CLOCK_MONOTONIC, read from the TSC where the
 * kernel itself keeps time with it (synchronized across CPUs), else from
 * the vDSO.  Takes m's calibration when it has one.  Returns 1 when m's
 * reads leave their counter_thread.mono on this very clock. */
int counter_clock_setup(counter_clock *c, const counter_metric *m);
uint64_t counter_clock_ns(const counter_clock *c);

/* Names accepted by counter_choose, for --help. */
const char *counter_names(void);

#endif
