/* counter.c - metric sources: perf_event PMU counters and clocks.
 *
 * Called from profiler callbacks: counter_read never allocates, never
 * locks, and on a PMU with user-space rdpmc never enters the kernel.
 *
 * Thread CPU time is a system call (CLOCK_THREAD_CPUTIME_ID has no vDSO
 * path; ~195 ns on the development VM, against ~19 ns for the vDSO's
 * CLOCK_MONOTONIC).  Between two context switches a thread's CPU time
 * advances exactly like the monotonic clock, and the kernel bumps the
 * sequence number of a perf_event mmap page at every switch of the thread
 * that owns the event, even for the no-op software event PERF_COUNT_SW_DUMMY
 * that needs no PMU.  So a read is the monotonic clock plus one load; the
 * system call is made only after a switch (to re-anchor) and when the
 * anchor is older than ANCHOR_SPAN_NS (to check the estimate, and to bound
 * what time stolen by a hypervisor can add).  A check every so many reads
 * instead cost more than the reads themselves where the system call is
 * slow: 256 reads of a task program take ~5 us, one such call on a
 * microVM 1.5 us.  Costs are measured by bench/metric_cost.c
 * (docs/performance.md).
 */
#include "counter.h"
#include "fdkeep.h"

#include <dlfcn.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

enum { K_CPUTIME = 1, K_MONOTONIC = 2, K_PERF = 3 };

static uint64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ---- The time stamp counter ----
 *
 * Where the kernel itself keeps time with the TSC (its clocksource is
 * "tsc": it found the counter invariant and synchronized across CPUs),
 * CLOCK_MONOTONIC is the TSC scaled; reading the TSC directly and scaling
 * it ourselves costs ~8 ns instead of the vDSO's ~19 ns (seqlock, ordered
 * read), and ~27 ns for a VM's kvm-clock.  The scale is measured against
 * CLOCK_MONOTONIC at start-up. */
#define TSC_SHIFT 32
#define TSC_CALIBRATION_NS 2000000u   /* at most */
#define TSC_CALIBRATION_MIN_NS 500000u
/* The calibration ends early, after TSC_CALIBRATION_MIN_NS, once its
 * scale is known to 1/TSC_SCALE_ERR (100 ppm, a fifth of what NTP may slew
 * CLOCK_MONOTONIC itself): each endpoint is off by at most half its
 * bracket.  The scale is common to all threads' readings, so ratios of
 * work and span do not see it; what it saves is start-up time.  Brackets
 * of 50 ns on average end it at the minimum (30-60 ns on the development
 * VM: 0.5-0.6 ms); wider ones take up to the 2 ms it always took before,
 * where the error is what it was then.  Measured there against one
 * calibration over 300 ms: 6 ppm off on average, 21 at worst, against
 * 1.5 and 8 for the fixed 2 ms (docs/performance.md). */
#define TSC_SCALE_ERR 10000u
#define TSC_PAIR_TRIES 64
#define TSC_PAIR_GOOD_NS 100u   /* a bracket this tight ends the tries */
#define TSC_PAIR_MAX_NS 20000u  /* none tighter: no TSC (the kernel's clock
                                 * is read instead) */

#if defined(__x86_64__)
#include <cpuid.h>
#include <x86intrin.h>

__extension__ typedef unsigned __int128 u128;

static int tsc_is_clocksource(void)
{
    char name[32] = "";
    FILE *f = fopen("/sys/devices/system/clocksource/clocksource0/"
                    "current_clocksource", "r");
    if (!f)
        return 0;
    int ok = fgets(name, sizeof(name), f) && !strcmp(name, "tsc\n");
    fclose(f);
    return ok;
}

/* The CPU says its TSC ticks at a constant rate in every power state
 * (CPUID 0x80000007, EDX bit 8). */
static int tsc_invariant(void)
{
    unsigned a, b, c, d;
    return __get_cpuid(0x80000007, &a, &b, &c, &d) && (d >> 8 & 1);
}

/* within_thread: the readings are only ever compared within one thread
 * between two context switches (cputime), so an invariant TSC serves even
 * where the kernel keeps time otherwise (a VM's kvm-clock): a thread that
 * moves to another CPU is switched, and re-anchored on the kernel's
 * clock.  Otherwise (monotonic) the TSC must be the kernel's clocksource,
 * synchronized across CPUs. */
/* A TSC reading and CLOCK_MONOTONIC at that instant: the TSC read between
 * two clock reads, the tightest of a few tries (a try the thread was
 * preempted or interrupted inside is useless: on a loaded machine one
 * such endpoint once put the scale a third off).  Returns the bracket's
 * width in ns. */
static uint64_t tsc_pair(uint64_t *ns, uint64_t *tsc)
{
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < TSC_PAIR_TRIES && best > TSC_PAIR_GOOD_NS; i++) {
        uint64_t a = clock_ns(CLOCK_MONOTONIC), t = __rdtsc();
        uint64_t b = clock_ns(CLOCK_MONOTONIC);
        if (b - a < best) {
            best = b - a;
            *ns = a + (b - a) / 2;
            *tsc = t;
        }
    }
    return best;
}

static void tsc_setup(counter_clock *c, int within_thread)
{
    if (!(within_thread ? tsc_invariant() : tsc_is_clocksource()))
        return;
    uint64_t ns0, t0, ns1, t1, w1;
    uint64_t w0 = tsc_pair(&ns0, &t0);
    if (w0 > TSC_PAIR_MAX_NS)
        return;
    do {
        if ((w1 = tsc_pair(&ns1, &t1)) > TSC_PAIR_MAX_NS)
            return;
    } while (ns1 - ns0 < TSC_CALIBRATION_NS &&
             (ns1 - ns0 < TSC_CALIBRATION_MIN_NS ||
              (w0 + w1) / 2 * TSC_SCALE_ERR > ns1 - ns0));
    if (t1 <= t0)
        return;
    c->tsc_mult = (uint64_t)((((u128)(ns1 - ns0))
                              << TSC_SHIFT) / (t1 - t0));
    c->tsc_base = t1;
    c->ns_base = ns1;
    c->tsc = c->tsc_mult > 0;
    c->per_cpu = c->tsc && within_thread && !tsc_is_clocksource();
}

/* CLOCK_MONOTONIC, from the TSC where that is what the kernel uses. */
static inline uint64_t mono_ns(const counter_clock *c)
{
    if (!c->tsc)
        return clock_ns(CLOCK_MONOTONIC);
    uint64_t ticks = __rdtsc() - c->tsc_base;
    return c->ns_base +
           (uint64_t)(((u128)ticks * c->tsc_mult) >>
                      TSC_SHIFT);
}
#else
static int tsc_is_clocksource(void)
{
    return 0;
}

static void tsc_setup(counter_clock *c, int within_thread)
{
    (void)c;
    (void)within_thread;
}

static inline uint64_t mono_ns(const counter_clock *c)
{
    (void)c;
    return clock_ns(CLOCK_MONOTONIC);
}
#endif

int counter_clock_setup(counter_clock *c, const counter_metric *m)
{
    memset(c, 0, sizeof(*c));
    int reads_mono = m && (m->kind == K_MONOTONIC ||
                           (m->kind == K_CPUTIME && m->cputime_switches)) &&
                     !m->clock.per_cpu;
    if (!tsc_is_clocksource())
        return reads_mono && !m->clock.tsc;
    /* the metric's scale, measured the same way, serves: a second
     * calibration would cost the start-up another 0.5-2 ms */
    if (m && m->clock.tsc) {
        *c = m->clock;
        return reads_mono;
    }
    tsc_setup(c, 0);
    return 0;
}

uint64_t counter_clock_ns(const counter_clock *c)
{
    return mono_ns(c);
}

/* An estimate this far ahead of the real CPU time is a miss: time the
 * hypervisor stole, or a switch that went unseen (a time slice is
 * milliseconds).  After MISSES_MAX misses the thread stops estimating. */
#define MISSED_SWITCH_NS 1000000u
#define MISSES_MAX 4
/* An estimate is never made this long after its anchor: a read that
 * comes later asks the kernel.  Time the hypervisor steals from a virtual
 * CPU moves the clock but is no guest context switch; the kernel's count
 * leaves it out.  A fragment longer than this thus ends on the kernel's
 * value, and its error is bounded by what could be stolen in this span
 * (measured: single fragments of 10-30 ms that gained ~9 ms on a loaded
 * VM), at one system call per ANCHOR_SPAN_NS of the thread's time. */
#define ANCHOR_SPAN_NS 200000u

/* The no-op software event whose mmap page reveals context switches. */
static int switches_open(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_DUMMY;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return fd_keep((int)syscall(SYS_perf_event_open, &a, 0, -1, -1,
                                PERF_FLAG_FD_CLOEXEC));
}

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
    return fd_keep((int)syscall(SYS_perf_event_open, &a, 0, -1, -1,
                                PERF_FLAG_FD_CLOEXEC));
}

/* libpfm4, opened only when a metric names a PMU event: loading it
 * applies ~47,000 relocations to its event tables (~290 page faults,
 * 4.5-5.7 ms on the development VM), a cost every profiled program and
 * every whatif command paid at start-up although the default metric
 * never uses it (docs/performance.md, "Start-up"). */
typedef pfm_err_t (*pfmlib_initialize_fn)(void);
typedef const char *(*pfmlib_strerror_fn)(int code);
typedef pfm_err_t (*pfmlib_encode_fn)(const char *name, int dfl_plm,
                                      pfm_os_t os, void *arg);
/* the header's prototypes, checked without a reference to the library */
_Static_assert(_Generic(&pfm_initialize, pfmlib_initialize_fn: 1,
                        default: 0) &&
                   _Generic(&pfm_strerror, pfmlib_strerror_fn: 1,
                            default: 0) &&
                   _Generic(&pfm_get_os_event_encoding, pfmlib_encode_fn: 1,
                            default: 0),
               "libpfm4's prototypes changed");

typedef struct {
    pfmlib_initialize_fn initialize;
    pfmlib_strerror_fn strerror;
    pfmlib_encode_fn get_os_event_encoding;
} pfmlib_api;

/* Fills api from libpfm.so.4; 0, or -1 with err set. */
static int pfmlib_open(pfmlib_api *api, char *err, size_t errlen)
{
    void *lib = dlopen("libpfm.so.4", RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        snprintf(err, errlen,
                 "a PMU event name needs libpfm4, which cannot be loaded "
                 "(%s); install libpfm4, or use cputime, monotonic, "
                 "instructions or cycles", dlerror());
        return -1;
    }
    api->initialize = (pfmlib_initialize_fn)dlsym(lib, "pfm_initialize");
    api->strerror = (pfmlib_strerror_fn)dlsym(lib, "pfm_strerror");
    api->get_os_event_encoding =
        (pfmlib_encode_fn)dlsym(lib, "pfm_get_os_event_encoding");
    if (!api->initialize || !api->strerror || !api->get_os_event_encoding) {
        snprintf(err, errlen, "libpfm.so.4 lacks pfm_initialize, "
                 "pfm_strerror or pfm_get_os_event_encoding; install a "
                 "libpfm4 that has them");
        dlclose(lib);
        return -1;
    }
    /* the library stays loaded: its strings back later error messages */
    return 0;
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
    pfmlib_api pfm;
    if (pfmlib_open(&pfm, err, errlen) < 0)
        return -1;
    int rc = pfm.initialize();
    if (rc != PFM_SUCCESS) {
        snprintf(err, errlen, "libpfm4 cannot start: %s", pfm.strerror(rc));
        return -1;
    }
    struct perf_event_attr attr;
    pfm_perf_encode_arg_t arg;
    memset(&attr, 0, sizeof(attr));
    memset(&arg, 0, sizeof(arg));
    arg.attr = &attr;
    arg.size = sizeof(arg);
    rc = pfm.get_os_event_encoding(name, PFM_PLM3, PFM_OS_PERF_EVENT, &arg);
    if (rc != PFM_SUCCESS) {
        snprintf(err, errlen,
                 "unknown metric '%s' (%s); use cputime, monotonic, "
                 "instructions, cycles or a libpfm4 event name", name,
                 pfm.strerror(rc));
        return -1;
    }
    m->perf_type = attr.type;
    m->perf_config = attr.config;
    m->perf_config1 = attr.config1;
    m->perf_config2 = attr.config2;
    snprintf(m->unit, sizeof(m->unit), "events");
    return 0;
}

/* Thread CPU time, estimated between context switches where this kernel
 * lets us see them, else read from the kernel every time. */
static void choose_cputime(counter_metric *m, const char *how,
                           const char *why)
{
    m->kind = K_CPUTIME;
    snprintf(m->name, sizeof(m->name), "cputime");
    snprintf(m->unit, sizeof(m->unit), "ns");
    int fd = switches_open();
    m->cputime_switches = fd >= 0;
    if (fd >= 0)
        close(fd);
    if (m->cputime_switches)
        tsc_setup(&m->clock, 1);
    snprintf(m->reason, sizeof(m->reason),
             "%s%s: thread CPU time, which excludes descheduled time: %s",
             how, why,
             !m->cputime_switches
                 ? "CLOCK_THREAD_CPUTIME_ID at every read (perf_event_open "
                   "is not allowed here)"
             : m->clock.tsc ? "the invariant TSC (scaled to ns) "
                        "between the thread's context switches (seen "
                        "through a perf_event software page), "
                        "CLOCK_THREAD_CPUTIME_ID after each switch"
                      : "CLOCK_MONOTONIC between the thread's context "
                        "switches (seen through a perf_event software "
                        "page), CLOCK_THREAD_CPUTIME_ID after each switch");
}

/* What one read of m costs here: the least of a few short batches (a
 * batch the thread was preempted in is only slower).  A trapped read
 * costs microseconds, so the batches stay short. */
static double pmu_read_cost(const counter_metric *m)
{
    counter_thread ct;
    if (counter_thread_open(m, &ct))
        return 0;
    enum { BATCHES = 4, READS = 16 };
    double best = 0;
    volatile uint64_t sink = 0;
    for (int b = 0; b < BATCHES; b++) {
        uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
        for (int i = 0; i < READS; i++)
            sink += counter_read(m, &ct);
        double per_read = (double)(clock_ns(CLOCK_MONOTONIC) - t0) / READS;
        if (b == 0 || per_read < best)
            best = per_read;
    }
    (void)sink;
    counter_thread_close(&ct);
    return best;
}

int counter_choose(const char *request, counter_metric *m, char *err,
                   size_t errlen)
{
    memset(m, 0, sizeof(*m));
    int dflt = !request || !*request || !strcmp(request, "default");
    if (!dflt && !strcmp(request, "cputime")) {
        choose_cputime(m, "requested", "");
        return 0;
    }
    if (!dflt && !strcmp(request, "monotonic")) {
        m->kind = K_MONOTONIC;
        snprintf(m->name, sizeof(m->name), "monotonic");
        snprintf(m->unit, sizeof(m->unit), "ns");
        tsc_setup(&m->clock, 0);
        snprintf(m->reason, sizeof(m->reason),
                 "requested: wall-clock time (CLOCK_MONOTONIC%s), includes "
                 "time the thread was descheduled",
                 m->clock.tsc ? ", read from the TSC, the kernel's clocksource"
                        : "");
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
            m->pmu_read_ns = pmu_read_cost(m);
            if (!dflt || m->pmu_read_ns <= COUNTER_SLOW_READ_NS) {
                snprintf(m->reason, sizeof(m->reason),
                         "%s: hardware counter via perf_event, user mode "
                         "only, %.0f ns per read",
                         dflt ? "default" : "requested", m->pmu_read_ns);
                return 0;
            }
            char why[400];
            snprintf(why, sizeof(why),
                     " (a hardware counter is reachable, but one read of "
                     "it costs %.1f us here, where an rdpmc takes tens of "
                     "ns: a virtual machine's PMU that traps every read; "
                     "--metric %s asks for it anyway)",
                     m->pmu_read_ns / 1000, pmu);
            memset(m, 0, sizeof(*m));
            choose_cputime(m, "default", why);
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
    char why[300];
    snprintf(why, sizeof(why), " (no hardware counter: %s)", perr);
    choose_cputime(m, "default", why);
    return 0;
}

int counter_check(const char *request, char *err, size_t errlen)
{
    /* these always work (the default falls back to cputime), and only
     * they calibrate the TSC: a PMU name is checked by opening it */
    if (!request || !*request || !strcmp(request, "default") ||
        !strcmp(request, "cputime") || !strcmp(request, "monotonic"))
        return 0;
    counter_metric m;
    return counter_choose(request, &m, err, errlen);
}

/* Maps the calling thread's switch page; without it reads use the system
 * call (still correct, only slower). */
static void switches_map(counter_thread *ct)
{
    int fd = switches_open();
    if (fd < 0)
        return;
    long psz = sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, (size_t)psz, PROT_READ, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        close(fd);
        return;
    }
    ct->fd = fd;
    ct->page = p;
    ct->page_len = (size_t)psz;
}

static uint64_t cputime_anchor(const counter_metric *m, counter_thread *ct,
                               uint32_t seq, uint64_t mono);

/* valgrind cannot run rdpmc (the program would die of SIGILL): its
 * preloaded core says it is there. */
static int under_valgrind(void)
{
    const char *pre = getenv("LD_PRELOAD");
    return pre && strstr(pre, "vgpreload") != NULL;
}

int counter_thread_open(const counter_metric *m, counter_thread *ct)
{
    memset(ct, 0, sizeof(*ct));
    ct->fd = -1;
    if (m->kind == K_CPUTIME && m->cputime_switches) {
        switches_map(ct);
        if (ct->page) /* the first anchor: no read may estimate from zero */
            cputime_anchor(m, ct, ~ct->anchor_seq, 0);
    }
    if (m->kind != K_PERF)
        return 0;
    ct->fd = perf_open(m);
    if (ct->fd < 0)
        return -1;
    long psz = sysconf(_SC_PAGESIZE);
    void *p = mmap(NULL, (size_t)psz, PROT_READ, MAP_SHARED, ct->fd, 0);
    if (p != MAP_FAILED) {
        struct perf_event_mmap_page *pc = p;
        if (pc->cap_user_rdpmc && !under_valgrind()) {
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

/* The slow path of a cputime read: the real value, a new anchor, and a
 * check of the estimate when no switch was seen. */
static uint64_t cputime_anchor(const counter_metric *m, counter_thread *ct,
                               uint32_t seq, uint64_t mono)
{
    const volatile struct perf_event_mmap_page *pc = ct->page;
    uint32_t now_seq = pc->lock;
    uint64_t cpu = clock_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t anchor_mono = mono_ns(&m->clock);
    if (seq == ct->anchor_seq && ct->anchor_mono) {
        uint64_t est = ct->anchor_cpu + (mono - ct->anchor_mono);
        /* One miss can be time the hypervisor stole; repeated misses
         * mean switches go unseen here: read the kernel from then on. */
        if (est > cpu + MISSED_SWITCH_NS && ++ct->misses >= MISSES_MAX) {
            munmap(ct->page, ct->page_len);
            close(ct->fd);
            ct->page = NULL;
            ct->fd = -1;
            return cpu;
        }
    }
    ct->anchor_seq = now_seq;
    ct->anchor_cpu = cpu;
    ct->anchor_mono = anchor_mono;
    return cpu;
}

static inline uint64_t cputime_read(const counter_metric *m,
                                    counter_thread *ct)
{
    if (!ct->page)
        return clock_ns(CLOCK_THREAD_CPUTIME_ID);
    uint64_t mono = mono_ns(&m->clock);
    ct->mono = mono;
    uint32_t seq = ((const volatile struct perf_event_mmap_page *)ct->page)
                       ->lock;
    if (seq == ct->anchor_seq && mono - ct->anchor_mono < ANCHOR_SPAN_NS)
        return ct->anchor_cpu + (mono - ct->anchor_mono);
    return cputime_anchor(m, ct, seq, mono);
}

uint64_t counter_read(const counter_metric *m, counter_thread *ct)
{
    switch (m->kind) {
    case K_MONOTONIC:
        return ct->mono = mono_ns(&m->clock);
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
        return cputime_read(m, ct);
    }
}

uint64_t counter_read_bias(const counter_metric *m, counter_thread *ct)
{
    uint64_t best = UINT64_MAX;
    /* a requested PMU metric whose reads trap: a few ms, not 30 */
    int pairs = m->pmu_read_ns > COUNTER_SLOW_READ_NS ? 100 : 2000;
    for (int i = 0; i < pairs; i++) {
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

int counter_is_event(const counter_metric *m)
{
    return m->kind == K_PERF;
}

const char *counter_names(void)
{
    return "default, cputime, monotonic, instructions, cycles, or a libpfm4 "
           "event name";
}
