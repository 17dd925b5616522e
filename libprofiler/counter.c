/* counter.c - metric sources: perf_event PMU counters and clocks.
 *
 * Called from profiler callbacks: counter_read never allocates, never
 * locks, and on a PMU with user-space rdpmc never enters the kernel.
 * Measured costs per read on the development VM (docs/measurement.md):
 * CLOCK_MONOTONIC ~24 ns, CLOCK_THREAD_CPUTIME_ID ~520 ns, perf read(2)
 * ~630 ns; rdpmc on bare metal is tens of ns.
 */
#include "counter.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { K_CPUTIME = 1, K_MONOTONIC = 2, K_PERF = 3 };

static int perf_open(const counter_metric *m)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = m->perf_type;
    a.config = m->perf_config;
    a.config1 = m->perf_config1;
    a.config2 = m->perf_config2;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1,
                        PERF_FLAG_FD_CLOEXEC);
}

/* Fills the perf attributes of a PMU metric; 0 or -1 with err set. */
static int perf_encode(const char *name, counter_metric *m, char *err,
                       size_t errlen)
{
    if (!strcmp(name, "instructions") || !strcmp(name, "cycles")) {
        m->perf_type = PERF_TYPE_HARDWARE;
        m->perf_config = !strcmp(name, "instructions")
                             ? PERF_COUNT_HW_INSTRUCTIONS
                             : PERF_COUNT_HW_CPU_CYCLES;
        snprintf(m->unit, sizeof(m->unit), "%s", name);
        return 0;
    }
    int rc = pfm_initialize();
    if (rc != PFM_SUCCESS) {
        snprintf(err, errlen, "libpfm4 cannot start: %s", pfm_strerror(rc));
        return -1;
    }
    struct perf_event_attr attr;
    pfm_perf_encode_arg_t arg;
    memset(&attr, 0, sizeof(attr));
    memset(&arg, 0, sizeof(arg));
    arg.attr = &attr;
    arg.size = sizeof(arg);
    rc = pfm_get_os_event_encoding(name, PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
    if (rc != PFM_SUCCESS) {
        snprintf(err, errlen,
                 "unknown metric '%s' (%s); use cputime, monotonic, "
                 "instructions, cycles or a libpfm4 event name", name,
                 pfm_strerror(rc));
        return -1;
    }
    m->perf_type = attr.type;
    m->perf_config = attr.config;
    m->perf_config1 = attr.config1;
    m->perf_config2 = attr.config2;
    snprintf(m->unit, sizeof(m->unit), "events");
    return 0;
}

int counter_choose(const char *request, counter_metric *m, char *err,
                   size_t errlen)
{
    memset(m, 0, sizeof(*m));
    int dflt = !request || !*request || !strcmp(request, "default");
    if (!dflt && !strcmp(request, "cputime")) {
        m->kind = K_CPUTIME;
        snprintf(m->name, sizeof(m->name), "cputime");
        snprintf(m->unit, sizeof(m->unit), "ns");
        snprintf(m->reason, sizeof(m->reason),
                 "requested: thread CPU time (CLOCK_THREAD_CPUTIME_ID), "
                 "excludes time the thread was descheduled");
        return 0;
    }
    if (!dflt && !strcmp(request, "monotonic")) {
        m->kind = K_MONOTONIC;
        snprintf(m->name, sizeof(m->name), "monotonic");
        snprintf(m->unit, sizeof(m->unit), "ns");
        snprintf(m->reason, sizeof(m->reason),
                 "requested: wall-clock time (CLOCK_MONOTONIC), includes "
                 "time the thread was descheduled");
        return 0;
    }
    const char *pmu = dflt ? "instructions" : request;
    char perr[256] = "";
    if (perf_encode(pmu, m, perr, sizeof(perr)) == 0) {
        int fd = perf_open(m);
        if (fd >= 0) {
            close(fd);
            m->kind = K_PERF;
            snprintf(m->name, sizeof(m->name), "%s", pmu);
            snprintf(m->reason, sizeof(m->reason),
                     "%s: hardware counter via perf_event, user mode only",
                     dflt ? "default" : "requested");
            return 0;
        }
        snprintf(perr, sizeof(perr), "perf_event_open(%s) failed: %s", pmu,
                 strerror(errno));
    }
    if (!dflt) {
        snprintf(err, errlen, "metric '%s' is not available here: %s",
                 request, perr);
        return -1;
    }
    m->kind = K_CPUTIME;
    snprintf(m->name, sizeof(m->name), "cputime");
    snprintf(m->unit, sizeof(m->unit), "ns");
    snprintf(m->reason, sizeof(m->reason),
             "default: no hardware counter (%s); using thread CPU time "
             "(CLOCK_THREAD_CPUTIME_ID), which excludes descheduled time",
             perr);
    return 0;
}

int counter_thread_open(const counter_metric *m, counter_thread *ct)
{
    memset(ct, 0, sizeof(*ct));
    ct->fd = -1;
    if (m->kind != K_PERF)
        return 0;
    ct->fd = perf_open(m);
    if (ct->fd < 0)
        return -1;
    long psz = sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, (size_t)psz, PROT_READ, MAP_SHARED, ct->fd, 0);
    if (p != MAP_FAILED) {
        struct perf_event_mmap_page *pc = p;
        if (pc->cap_user_rdpmc) {
            ct->page = p;
            ct->page_len = (size_t)psz;
        } else {
            munmap(p, (size_t)psz);
        }
    }
    return 0;
}

void counter_thread_close(counter_thread *ct)
{
    if (ct->page)
        munmap(ct->page, ct->page_len);
    if (ct->fd >= 0)
        close(ct->fd);
    memset(ct, 0, sizeof(*ct));
    ct->fd = -1;
}

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__)
static uint64_t rdpmc_read(struct perf_event_mmap_page *pc, int *ok)
{
    uint32_t seq, idx;
    uint64_t count;
    do {
        seq = pc->lock;
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
        idx = pc->index;
        count = (uint64_t)pc->offset;
        if (!idx) {
            *ok = 0;
            return 0;
        }
        uint32_t lo, hi;
        __asm__ volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(idx - 1));
        uint64_t pmc = ((uint64_t)hi << 32) | lo;
        unsigned shift = 64 - pc->pmc_width;
        count += (uint64_t)((int64_t)(pmc << shift) >> shift);
        __atomic_signal_fence(__ATOMIC_SEQ_CST);
    } while (pc->lock != seq);
    *ok = 1;
    return count;
}
#endif

uint64_t counter_read(const counter_metric *m, counter_thread *ct)
{
    switch (m->kind) {
    case K_MONOTONIC:
        return clock_ns(CLOCK_MONOTONIC);
    case K_PERF: {
#if defined(__x86_64__)
        if (ct->page) {
            int ok;
            uint64_t v = rdpmc_read(ct->page, &ok);
            if (ok)
                return v;
        }
#endif
        uint64_t v = 0;
        if (ct->fd < 0 || read(ct->fd, &v, sizeof(v)) != sizeof(v))
            return 0;
        return v;
    }
    default:
        return clock_ns(CLOCK_THREAD_CPUTIME_ID);
    }
}

uint64_t counter_read_bias(const counter_metric *m, counter_thread *ct)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < 2000; i++) {
        uint64_t a = counter_read(m, ct);
        uint64_t b = counter_read(m, ct);
        if (b >= a && b - a < best)
            best = b - a;
    }
    return best == UINT64_MAX ? 0 : best;
}

int counter_counts_from_thread_start(const counter_metric *m)
{
    return m->kind == K_CPUTIME;
}

const char *counter_names(void)
{
    return "default, cputime, monotonic, instructions, cycles, or a libpfm4 "
           "event name";
}
