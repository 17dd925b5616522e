/* tool.c - the OMPT tool: builds the OSPG of an unmodified program.
 *
 * Callbacks of the stock libomp (19) are turned into graph records
 * (seeds/001 section III-B): a parallel region is an S-node holding one
 * S-node per barrier phase, each holding one P-node per thread; loop chunks
 * are P-nodes of one group; tasks are P-nodes under a taskwait scope S;
 * undeferred tasks are S-nodes; single, masked, critical and lock bodies
 * split W-nodes.  Work between two callbacks is measured with the chosen
 * metric; waiting (barriers, taskwait, lock acquisition) is never work, and
 * the tool's own time falls outside every fragment.
 *
 * State hangs off ompt_data_t: regions in parallel_data, contexts in
 * task_data, the per-thread stream in a __thread block.  Callbacks never
 * print, never exit and never take a lock except at phase changes and the
 * first sight of a location.
 */
#include <dlfcn.h>
#include <link.h>
#include <sys/auxv.h>
#include <execinfo.h>
#include <omp-tools.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "counter.h"
#include "mpirank.h"
#include "online.h"
#include "regions.h"
#include "sampler.h"
#include "scenario.h"
#include "spin.h"
#include "stream.h"
#include "tool.h"

#ifndef MADV_POPULATE_READ
#define MADV_POPULATE_READ 22 /* Linux 5.14 */
#endif

#define LOC_STACK 32
#define FRAG_LINES 16 /* sampled lines a fragment keeps (more are rare) */
#define SERIAL_CACHE 4 /* event pairs a thread remembers (serial_tag) */

/* ---- Serial fragments of the program, named by their events ----
 *
 * The program's own serial code (W-nodes of OSPG_LOC_PROGRAM) is where a
 * critical path often lies, and its fragments belong to no directive.
 * Each is tagged (ospg.h, "Tags") with the pair of OpenMP events around
 * it: a location of directive "serial" whose place reads "FROM>TO", each
 * event "begin|end:KIND:LOC" (KIND a directive's name, "program",
 * "thread", or "event" when unknown; LOC a location id, 0 for none), which
 * the reports spell out ("end of parallel primes.c:34").  Each callback
 * that may close or open such a fragment says which event it is (ev_code,
 * ev_loc: two stores; enter() forgets it); the pair is interned when the
 * fragment's W-node is made, outside its time. */
enum { FEV_NONE = DIR_COUNT, FEV_PROGRAM, FEV_THREAD };

typedef struct frag_event {
    const void *code, *ident; /* the directive's code address, or NULL */
    uint32_t loc;             /* its location when code is NULL */
    uint8_t kind;             /* DIR_* or EV_* */
    uint8_t end;              /* 1: the end of the construct, program... */
} frag_event;
#define DEP_BUF 64

typedef struct cnode {
    uint64_t id;             /* in the trace */
    uint64_t nkids;
    ospg_node *on;           /* in the on-the-fly builder (NULL: the root,
                              * or not begun there) */
    /* A task's node whose begin is not recorded yet: the task that owes it
     * (see "Leaves" below).  Never set in a copy. */
    struct tctx *lazy;
    /* A grain's (task, chunk) start on CLOCK_MONOTONIC, for the trace's
     * TIME record at its end; 0: not a grain, or on the fly only. */
    uint64_t t0;
} cnode;

/* The node of one ordered or doacross loop instance that has an ordered
 * chain (see "Ordered and doacross loops" below): a P-child of the barrier
 * phase, member of the loop's group, whose children are the pieces of the
 * loop's chunks, chained through dependences.  Shared by the team. */
typedef struct ordloop {
    cnode L;
    atomic_uint_fast64_t nkids;      /* pieces begun: their indices */
    uint64_t group;                  /* the loop's group id: the key */
    uint32_t loc;
    atomic_uint_fast64_t work;       /* measured in its pieces */
    atomic_uint_fast64_t max_prefix; /* longest code before the loop */
    atomic_int static_chained;       /* a thread's part held more chunks */
    struct ordloop *next;
} ordloop;

typedef struct region {
    cnode par;
    cnode phase;             /* the current barrier phase */
    unsigned phase_extra;    /* its children beyond the shares (lock) */
    ordloop *ordloops;       /* the phase's ordered loops (lock) */
    _Atomic(ordloop *) ordloops_seen; /* non-NULL once one was created */
    uint64_t phase_no;
    _Atomic unsigned team;
    /* The barrier cost (barrier_arrive, barrier_sample): arrivals at the
     * current barrier (phase << 24 | count), when the last one came, and
     * which phase that was and which phase ran a task inside its barrier
     * (phase + 1; 0: none). */
    atomic_uint_fast64_t bar_arrivals, bar_last_ns, bar_last_phase;
    atomic_uint_fast64_t bar_task_phase;
    uint32_t loc;
    uint64_t uid;
    spin_lock lock;          /* phase changes */
    uint32_t path;           /* what-if region path its threads inherit */
    uint32_t chain;          /* its calling context, its threads' too */
    const void *code;        /* its call site (contexts of its threads) */
    struct tctx *parent;     /* the encountering task */
    /* By thread index, the phase (+ 1; 0: none) of the last share it
     * claimed (under the lock) and of the last it began.  With
     * cancellation a barrier lets threads out before all have left the
     * one before: a thread can still be claiming or beginning its share
     * of a phase another thread ends, or have left for the region's end
     * and begin no share in the phases after (unclaimed_shares). */
    _Atomic uint64_t *share_phase, *share_begun;
    unsigned share_cap;
} region;

enum { CTX_INITIAL = 1, CTX_IMPLICIT, CTX_EXPLICIT };

/* A container opened inside a task: a loop chunk (P) or a taskgroup (S).
 * New children go to the innermost container, or to its open taskwait
 * scope (the S-node that collects tasks until a taskwait). */
typedef struct frame {
    cnode node;
    cnode scope;
    int has_scope;
    int unjoined;            /* see tctx.unjoined */
    int direct;              /* see tctx.direct */
    int is_chunk;
    const void *code;        /* taskgroup: its address */
    int taskloop;            /* taskgroup of a taskloop */
    int fresh;               /* taskgroup: no event since it began */
    int is_loopscope;        /* the S-node around an orphaned loop */
    int is_piece;            /* a chunk cut into pieces of an ordloop */
} frame;

#define FRAMES_INLINE 4
#define REOPEN_MAX 8 /* taskgroups carried across one barrier */
#define SHARES_MAX 65536 /* threads of a team whose shares are tracked */

typedef struct tctx {
    int kind;
    cnode node;              /* root, thread share P, task P or S */
    cnode scope;             /* the node's open taskwait scope */
    int has_scope;
    /* Its scope holds tasks no taskwait has joined, directly or in a
     * chunk that ended (a taskwait inside a chunk or a taskgroup above
     * does not join them in the graph: noted) */
    int unjoined;
    /* Its scope holds tasks created directly in it: a taskwait at this
     * level joins them even where a taskwait inside a taskgroup or chunk
     * has waited for them already (it could not join them in the graph,
     * and cleared unjoined) */
    int direct;
    frame *fr;               /* containers, innermost last */
    int nfr, capfr;
    int nreopen;             /* entries of reopen[] */
    int share_open;          /* implicit: node begun, not ended */
    int waiting;             /* no user code runs: no fragment */
    int at_barrier;          /* waiting at a barrier, not a taskwait */
    int idle_taskwait;       /* inside a taskwait with nothing to join */
    /* inside wrapped runtime calls it made (tool_runtime_enter): a
     * fragment of its that begins there is the runtime's, not work */
    int in_runtime;
    /* explicit, offline: inside a taskwait or a taskgroup's end (in_wait),
     * and since when it runs nothing there (wait_t0; 0: it runs a task) */
    int in_wait;
    uint64_t wait_t0;
    region *region;
    /* The parallel region this task encountered and is suspended in.
     * parallel_end must find it here: libomp 19 frees a nested team to
     * its pool before the parallel_end callback, and the team's
     * parallel_data (our region pointer) may by then belong to another
     * thread's new region. */
    region *encountered;
    uint64_t phase_no;
    unsigned index;
    uint32_t base_loc;
    uint32_t locs[LOC_STACK];
    int nlocs;
    /* bit k: the construct at locs[k] has had a W-node already, so the
     * next one continues its instance (OSPG_W_CONTINUES) */
    uint32_t loc_begun;
    uint64_t ws_seq;
    int loop_static;         /* current loop: one chunk per thread */
    /* schedule(static[, c]): this thread's part, held back while its
     * body runs without directives, to be split into its chunks */
    int lazy_block;
    int have_dispatch;
    uint64_t trip, first_iters;
    int in_loop;
    /* a dynamic chunk whose node waits for the first event inside it:
     * an ordered block first makes it pieces of the loop's chain */
    int chunk_lazy;
    ordloop *ol;             /* the current loop's chain, once it has one */
    uint64_t chain;          /* the current chunk's chain address */
    uint64_t chunk_seq;      /* chunks this thread cut into pieces */
    uint64_t chunk_t0;       /* when the current chunk or static part began
                              * (grain_clock; 0 on the fly only) */
    uint64_t share_work;     /* W-node work in the current share */
    uint64_t loop_prefix;    /* share_work when the loop began */
    uint64_t loop_group;
    cnode loop_owner;
    uint32_t loop_loc;
    uint32_t taskloop_loc;
    const void *taskloop_code; /* its call site (contexts of its tasks) */
    /* A task created by a taskloop: its location.  libomp splits a large
     * taskloop into helper tasks that create the loop's tasks on other
     * threads in the name of the encountering task; the helper is one of
     * these, and the tasks it creates take this location. */
    uint32_t spawn_loc;
    /* A helper of the split: it creates tasks of its taskloop, so it is
     * the runtime's, no task of the program's (no grain, no member). */
    int helper;
    /* A taskloop without a taskgroup (nogroup): its tasks form a group,
     * one instance (owner: the scope they are created in); 0 otherwise. */
    uint64_t taskloop_group, spawn_group;
    cnode taskloop_owner, spawn_owner;
    uint32_t path;           /* innermost what-if region path, 0: none */
    uint32_t base_path;      /* the path the task started in */
    /* --context: the calling context of the construct that started the
     * task (stream_chain), the context of the code it runs */
    uint32_t ctx_chain;
    const void *ctx_code;    /* that construct's call site */
    /* explicit tasks whose begin record waits for their depend items:
     * BEGIN_PENDING until the creator's dependences callback or the task's
     * own start claims it (BEGIN_WRITING), then BEGIN_DONE */
    atomic_int begin_state;
    atomic_int refs;         /* the task's life, + the creator's hold */
    cnode pend_parent;
    uint64_t pend_idx;
    ospg_kind pend_kind;
    /* An undeferred task: its creator waits for it, so it is a P-node
     * alone in an S-node of its own (in series, and a grain like any
     * task), which ends with it. */
    cnode alone;
    int has_alone;
    struct tstate *home;     /* the thread whose spares it returns to */
    struct tctx *next_root;  /* extra roots: the open ones (roots_lock) */
    void *rt_task;           /* the runtime's kmp_task_t (interpose.c) */
    int untied;              /* may move between threads */
    int started;             /* has run (on_task_schedule) */
    /* untied, from its first start until its first part ends: the
     * thread's frag_opens after its fragment opened (0: not in it) */
    uint64_t first_part_opens;
    int has_deps;            /* created with depend items */
    struct tctx *sched_prior; /* explicit: the task it interrupted on the
                              * thread running it, resumed when it ends */
    /* node.lazy: the work of its own code so far (one W-node to be),
     * inside what-if region lazy_region */
    uint64_t lazy_work;
    uint32_t lazy_region;
    int lazy_nw;             /* lazy_work holds a W-node */
    struct tctx *next_spare;
    /* Not cleared for a new task (ctx_alloc): read only below nfr and
     * nreopen, and a frame is cleared where it is pushed.  Most tasks
     * open no container; clearing these was 43% of the context's
     * memset, about 60 instructions a task. */
    frame fr_inline[FRAMES_INLINE];
    /* implicit: taskgroups open at a barrier, reopened in the next share */
    struct { const void *code; int taskloop; } reopen[REOPEN_MAX];
} tctx;

#define TCTX_CLEARED offsetof(tctx, fr_inline)

#define CTX_CACHE 1024 /* free task contexts a thread keeps for reuse */
#define NOTED_MAX 8    /* notes a thread remembers having written */

/* Task constructs whose code between allocation and queueing a thread
 * remembers (tool_alloc_leave), by a hash of their address */
#define GAP_SITES 64
/* The program's code between an allocation whose span closed at its
 * return and the queueing (the copy of the task's data, an if() or depend
 * expression, a copy constructor) is measured on each thread's first
 * TOOL_RT_ALL creations and one in TOOL_RT_SAMPLE after (tool_task_enter):
 * where it took longer than this (metric units: 1 us of CPU time, or
 * 1,000 instructions) twice in a row at a construct, the construct's
 * allocations keep their own spans, until it is measured shorter.  Twice:
 * one gap can hold the metric's own re-anchoring (a system call, 1-2 us
 * on a VM). */
#define ALLOC_GAP_MAX 1000u
#define ALLOC_GAP_STRIKES 2u
/* ... or longer than this many allocations, the fastest the thread was
 * measured (where the machine is slow: under valgrind the code between
 * the calls takes microseconds, as the allocations take tens) */
#define ALLOC_GAP_ALLOCS 8u
/* How the metric measures that code: as time, scaled by the allocations
 * (1); as instructions or cycles, against ALLOC_GAP_MAX only (0); or not
 * at all (-1: an event count says nothing of its length, and every span
 * closes) */
static int alloc_gap_scaled;

typedef struct tstate {
    stream_thread st;
    /* Free task contexts, so that tasks need no malloc.  A task often
     * ends on another thread than the one that created it; its context
     * goes back to its creator through `returned` (pushed by any thread,
     * emptied at once by the owner only), never to the allocator, whose
     * cross-thread frees contend on a lock. */
    tctx *spare;
    int nspare;
    _Atomic(tctx *) returned;
    counter_thread ct;
    sampler_thread sm;       /* where its code is, sampled (sm.ring NULL:
                              * not sampled) */
    /* the samples of the fragment frag_take ended last, by line, until a
     * W-node carries them */
    ospg_sample frag_smp[FRAG_LINES + 1]; /* + a serial fragment's tag */
    int nfrag_smp;
    /* The event at hand, the one that opened the running fragment, and
     * the two around the fragment frag_take ended last (serial_tag). */
    frag_event ev, frag_from, took_from, took_to;
    struct {
        frag_event from, to;
        uint32_t loc;
    } serial_cache[SERIAL_CACHE];
    unsigned serial_next;
    int carry_pre;           /* main_pre_ips belong to the next fragment */
    /* the runtime's own time creating tasks, left out of the fragments
     * around it, and the tasks created (tool_task_runtime), the thread's
     * first task aside (task_rt_started) */
    uint64_t task_rt, task_rt_tasks;
    /* untied tasks whose first part ended here (first_part_ends), until
     * handed over to first_parts_total */
    uint64_t first_parts;
    int task_rt_started;
    /* the runtime's time handing out chunks, and the chunk grains the
     * thread recorded (tool_chunk_runtime) */
    uint64_t chunk_rt, chunk_grains;
    int ok;                  /* stream open */
    online_thread *q;        /* on the fly: this thread's handle */
    /* On the fly, the W-node of a fragment just closed, held back within
     * one callback (hold_w: the callback allows it, and lets it go with
     * held_release) so that its node's END, when the callback ends that
     * node next, goes to the builder in the same update. */
    int hold_w;
    struct {
        ospg_node *node;
        uint64_t idx, work;
        uint32_t loc, region;
        unsigned flags;
        int on;
    } held;
    int in_frag;
    uint64_t frag_start;
    /* Inside a wrapped runtime call: when the call began, and so where the
     * running fragment ends if a callback inside the call closes it (0:
     * not inside one, or a fragment began inside it). */
    uint64_t frag_cut;
    uint64_t frag_opens;     /* fragments opened: tool_runtime_leave */
    /* The grain clock as the read that began the running callback found
     * it (0: none; see grain_now()) */
    uint64_t grain_at;
    /* The innermost wrapped runtime call on the thread measures nothing
     * after a callback inside it (tool_runtime_enter): a fragment that
     * begins inside such a call starts where the call returns, and its
     * start is not read (frag_unread) */
    int rt_skip_read;
    int frag_unread;
    uint32_t rt_calls;       /* TOOL_RT_SAMPLED calls, for the sample
                              * (wraps after 2^32: a sample still) */
    uint64_t task_rt_pending; /* an allocation's time, until its creation
                               * is measured */
    /* An allocation whose span goes on into the task's queueing
     * (tool_alloc_leave): frag_opens then (0: none) and when it began; the
     * running fragment stays cut there (frag_cut) */
    uint64_t alloc_opens;
    uint64_t alloc_start;
    struct gap_site *alloc_site;
    /* An allocation's span closed at its return (measured): frag_opens
     * then (0: none), the metric there and its construct's entry in
     * gap_sites, to time the program's code up to the queueing */
    uint64_t gap_opens;
    uint64_t gap_from;
    uint64_t alloc_fastest; /* the shortest allocation measured (0: none) */
    struct gap_site *gap_site;
    struct gap_site {
        const void *loc;       /* the construct (ident_t), or NULL */
        unsigned long_gaps;    /* consecutive measured gaps over the max */
        int unqueued;          /* a span of its was not queued: its
                                * allocations keep their own spans */
    } gap_sites[GAP_SITES];
    int frag_rt;             /* the running fragment began inside a
                              * wrapped runtime call of its task: no work */
    tctx *ctx;
    tctx *pending;           /* created task awaiting its dependences */
    void *last_alloc;        /* the task the runtime allocated last */
    tctx *requeued;          /* the untied task whose part ended in
                              * tool_task_requeued: the runtime's switch
                              * event for it comes next */
    void *crash_stack;       /* the thread's signal stack, or NULL */
    struct { uint32_t loc, note; } noted[NOTED_MAX]; /* note_once */
    int noted_next;
    struct tstate *all_next; /* every_thread's list */
} tstate;

/* Every thread's state, owned for the life of the process: the tasks a
 * thread made keep pointers to it after the thread ends (home), and a
 * hard pause ends the threads without their end events. */
static _Atomic(tstate *) every_thread;

static tstate *thread_state_new(void)
{
    tstate *ts = calloc(1, sizeof(*ts));
    if (!ts)
        return NULL;
    ts->all_next = atomic_load(&every_thread);
    while (!atomic_compare_exchange_weak(&every_thread, &ts->all_next, ts))
        ;
    return ts;
}

/* initial-exec: every callback reads it, and the default model for a
 * shared library calls __tls_get_addr each time. */
static __thread tstate *self __attribute__((tls_model("initial-exec")));
static uint64_t read_bias;       /* counter_read_bias() at start-up */
/* Sampling (sampler.h): the period in ns of a thread's CPU time, 0 for
 * none; the main thread's sampler, opened before main; the tool's own
 * code, whose samples are not the program's (a preloaded tool only). */
static uint64_t sample_period;
static sampler_thread main_sampler;
/* The main thread's samples from the program's start to the runtime's
 * (taken at the first fork, before the runtime and the tool start up):
 * they go to its first fragment, the start-up's samples do not. */
#define PRE_IPS 512
static uint64_t main_pre_ips[PRE_IPS];
static int main_pre_n, main_pre_taken;
static uintptr_t self_text_lo, self_text_hi;
static atomic_uint_fast64_t samples_taken, samples_lost;
/* times a thread asked the runtime which task it runs (resync_untied) */
static atomic_uint_fast64_t runtime_task_queries;
static atomic_uint_fast64_t task_rt_total, task_rt_count; /* handed over */
static atomic_uint_fast64_t first_parts_total; /* handed over */
static atomic_uint_fast64_t chunk_rt_total, chunk_rt_count; /* likewise */
static atomic_uint_fast64_t barrier_rt_total, barrier_rt_count;
static atomic_int counter_failures; /* threads whose counter did not open */
static int mode_offline, mode_online;
static char out_dir[4096];
static counter_metric metric;
static counter_clock grain_clk; /* grain_clock() */
static int grain_from_reads;    /* a metric read also reads grain_clk */
static int active;
static atomic_uint_fast64_t region_uid;
static atomic_uint_fast64_t task_group_seq;

/* Group ids of taskloops' tasks: the top bit keeps them apart from loop
 * groups, (region uid << 24 | worksharing number). */
static uint64_t new_group_id(void)
{
    return (1ull << 63) | (atomic_fetch_add(&task_group_seq, 1) + 1);
}
static tctx initial_ctx;          /* the main thread's: the program root */
static int main_began;            /* the main thread started OpenMP */
/* The program root's children are added by the main thread and by every
 * thread the program created that runs OpenMP (an extra root each). */
static atomic_uint_fast64_t root_kids;
static pthread_mutex_t roots_lock = PTHREAD_MUTEX_INITIALIZER;
static struct tctx *extra_roots;  /* open ones (roots_lock) */
static int extra_root_count;      /* ever begun (roots_lock) */
static atomic_int setup_done;     /* the first initial thread's set-up */
/* The root's child index kept for the main thread's next serial fragment:
 * a thread of the program's that starts while the main thread runs serial
 * code comes after that whole fragment (a serial prefix, as the code a
 * program runs before it starts threads and after it joins them is; the
 * join itself is not seen).  UINT64_MAX: none kept. */
static _Atomic uint64_t main_pending_idx = UINT64_MAX;
static int finalized;
static char cmdline[4096];
static char runtime_name[256];
static char factor_list[256];
static uint64_t cpu_before_tool; /* initial thread's CPU ns at tool start */
static const void *init_site;    /* the program's call that started libomp */
#define INIT_SITE_SLACK 64       /* bytes of code between it and a construct */
static int main_first_event = 1; /* the main thread's first construct */
static uint64_t cpu_origin;      /* ... when the program proper began */
/* The main thread's CPU ns when it entered the fork that started the
 * runtime (interpose.c), 0 when none did: its serial work ends there. */
static uint64_t cpu_runtime_entry;
/* ... or when it called the OpenMP API function that started it (an
 * omp_get_max_threads() before any construct), 0 when none did. */
static uint64_t cpu_api_entry;
/* The calling thread entered a fork before the runtime knew it: its
 * initial task, begun inside that fork, has no program code to measure
 * before the region. */
static __thread int fork_registers __attribute__((tls_model("initial-exec")));

/* The program's call site of the fork this thread is inside (the
 * wrapper's), NULL outside any. */
static __thread const void *fork_site __attribute__((tls_model("initial-exec")));
static __thread const void *fork_ident
    __attribute__((tls_model("initial-exec")));

/* code as the program's call site: the fork wrapper's landing address
 * stands for the call that entered it. */
static const void *user_code(const void *code)
{
    if (code == (const void *)tool_fork_landing && fork_site)
        return fork_site;
    return tool_call_site(code);
}

/* The ident_t of the wrapped runtime call code stands for, or NULL. */
static const void *user_ident(const void *code)
{
    if (code == (const void *)tool_fork_landing && fork_site)
        return fork_ident;
    return tool_call_ident(code);
}

static void read_cmdline(void);

/* The clock of grain start and end times (trace only) and of barrier
 * costs: one clock for all threads, so that grains on different threads
 * can be lined up.  A task program reads it about five times per task:
 * the TSC where the kernel keeps time with it, ~8 ns against the vDSO's
 * ~17 (counter.h). */
static uint64_t grain_clock(void)
{
    return counter_clock_ns(&grain_clk);
}

/* The grain clock inside a callback that set ts->grain_at: a task
 * program's schedule event ends one grain and starts the next, and the
 * metric read that closed the running fragment has read the clock
 * already; the instant it gives is the callback's start.  For a grain's
 * start and end only: a wait's start may be set by another thread after
 * that instant (wait_cut). */
static uint64_t grain_now(const tstate *ts)
{
    return ts->grain_at ? ts->grain_at : grain_clock();
}

static uint64_t thread_cpu_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* A PMU metric counts from where its counter was opened: the main
 * thread's is opened before main (on_load), so that its serial code
 * before the runtime starts is measured as it is with thread CPU time,
 * and its state adopts it (main_ct_owner) when the runtime starts. */
static int metric_chosen;
static int main_ct_early;
static counter_thread main_ct;
static tstate *main_ct_owner;

/* 1 when the main thread's work since the program began can be read:
 * cpu_origin and the runtime entries below are in the metric's unit. */
static int main_counts_from_origin(void)
{
    return counter_counts_from_thread_start(&metric) || main_ct_early;
}

/* The main thread's metric reading for cpu_origin and the runtime
 * entries: its CPU time, or its early PMU counter; 0 (unknown) for the
 * counter read from another thread. */
static uint64_t main_metric_now(void)
{
    if (!main_ct_early)
        return thread_cpu_ns();
    if (gettid() != getpid())
        return 0;
    return counter_read(&metric, main_ct_owner ? &main_ct_owner->ct
                                               : &main_ct);
}

static volatile unsigned char prefault_sink;
/* The runtime's code: a fork called from there is a tail call of the
 * program's (see fork_call_site). */
static uintptr_t runtime_text_lo, runtime_text_hi;

static int prefault_object(struct dl_phdr_info *info, size_t size, void *base)
{
    (void)size;
    if (info->dlpi_addr != (uintptr_t)base)
        return 0;
    long page = sysconf(_SC_PAGESIZE);
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_R))
            continue;
        uintptr_t a = (info->dlpi_addr + ph->p_vaddr) & ~(uintptr_t)(page - 1);
        uintptr_t end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
        if (ph->p_flags & PF_X) {
            lo = a < lo ? a : lo;
            hi = end > hi ? end : hi;
        }
        /* one system call maps the segment's pages as a read of each
         * would (0.1-0.2 ms against 0.6-1.1 ms for libomp's 1.2 MB on
         * the development VM); before Linux 5.14 (EINVAL), the reads.  A
         * range it cannot map (another error) would fault the reads too. */
        size_t len = (end - a + (uintptr_t)page - 1) & ~(uintptr_t)(page - 1);
        if (!madvise((void *)a, len, MADV_POPULATE_READ) || errno != EINVAL)
            continue;
        for (; a < end; a += (uintptr_t)page)
            prefault_sink += *(volatile const unsigned char *)a;
    }
    if (hi) {
        runtime_text_lo = lo;
        runtime_text_hi = hi;
    }
    return 1;
}

/* The OpenMP runtime initializes itself inside the program's first
 * construct, and most of that time goes to page faults on its code and
 * data, which the program's serial work would include: they are taken
 * here, before the program starts, by reading each page of the runtime's
 * file once.  (RTLD_NEXT: the preloaded tool defines __kmpc_fork_call
 * itself.) */
static void prefault_runtime(void)
{
    Dl_info info;
    void *entry = dlsym(RTLD_NEXT, "__kmpc_fork_call");
    if (!entry)
        entry = dlsym(RTLD_DEFAULT, "__kmpc_fork_call");
    if (entry && dladdr(entry, &info) && info.dli_fbase)
        dl_iterate_phdr(prefault_object, info.dli_fbase);
}

void tool_program_starts(void)
{
    cpu_origin = main_metric_now();
}

/* Runs before main when the tool is preloaded (`whatif run`) or linked
 * in: the program's work starts here, after the dynamic loader (preloaded,
 * later still: preload.c).  Loaded later by libomp (OMP_TOOL_LIBRARIES),
 * the origin stays the thread's start, so loading counts as serial work
 * (docs/limits.md). */
/* ---- The process: children, forks, crashes ---- */

/* A child of the process `whatif run` started (it exported WHATIF_PID):
 * left alone unless WHATIF_CHILDREN=profile, then profiled into a
 * directory of its own.  Decided once, before anything else. */
static int not_ours;
static char child_dir[64];        /* "child-PID" for a followed child */

static void decide_process(void)
{
    const char *want = getenv("WHATIF_PID");
    if (!want || !*want || strtol(want, NULL, 10) == (long)getpid())
        return;
    const char *follow = getenv("WHATIF_CHILDREN");
    if (follow && !strcmp(follow, "profile"))
        snprintf(child_dir, sizeof(child_dir), "child-%ld", (long)getpid());
    else
        not_ours = 1;
}

/* fork() without exec: the child has the parent's tool state, open trace
 * files and queued records.  It must never write them: every callback and
 * exit handler does nothing in it from now on. */
static volatile int forked_child;
static pid_t tool_pid; /* the profiled process (a vfork child shares our
                        * memory but runs no atfork handler) */

static void on_fork_child(void)
{
    forked_child = 1;
    /* The thread's state holds perf_event pages, which a fork does not
     * copy (the counter's, the sampler's ring): nothing may read them. */
    self = NULL;
    active = 0;
    main_sampler.ring = NULL;
}

/* A program killed by a fatal signal keeps, offline, every record its
 * threads completed: the streams are written out (write(2) only, which a
 * signal handler may call), then the signal takes its default course.
 * Installed only where the program left the signal's default. */
/* Every signal whose default action ends the process: a Ctrl-C, a broken
 * pipe or a timer's alarm ends a run as surely as a crash. */
static const int fatal_signals[] = {
    SIGSEGV, SIGBUS, SIGILL,  SIGFPE,  SIGABRT,   SIGTERM,  SIGHUP,
    SIGINT,  SIGQUIT, SIGPIPE, SIGALRM, SIGUSR1,   SIGUSR2,  SIGXCPU,
    SIGXFSZ, SIGVTALRM, SIGPROF, SIGSYS, SIGPWR,   SIGSTKFLT};

static void on_fatal_signal(int sig)
{
    if (!forked_child && mode_offline)
        stream_flush_all_unlocked();
    signal(sig, SIG_DFL);
    raise(sig);
}

static void install_crash_flush(void)
{
    for (size_t i = 0; i < sizeof(fatal_signals) / sizeof(*fatal_signals);
         i++) {
        struct sigaction old;
        if (sigaction(fatal_signals[i], NULL, &old) == 0 &&
            old.sa_handler == SIG_DFL && !(old.sa_flags & SA_SIGINFO)) {
            struct sigaction sa;
            memset(&sa, 0, sizeof(sa));
            sa.sa_handler = on_fatal_signal;
            sigemptyset(&sa.sa_mask);
            sa.sa_flags = SA_RESETHAND | SA_NODEFER | SA_ONSTACK;
            sigaction(fatal_signals[i], &sa, NULL);
        }
    }
}

/* A stack overflow raises SIGSEGV on a stack with no room left: each
 * profiled thread gets a small signal stack, so that the handler above
 * still runs (unless the program set one up itself).  Returns it (NULL:
 * none), freed by crash_stack_drop when the thread ends normally. */
#define CRASH_STACK (64u << 10)

static void *crash_stack_setup(void)
{
    stack_t old;
    if (!mode_offline || sigaltstack(NULL, &old) ||
        !(old.ss_flags & SS_DISABLE))
        return NULL;
    stack_t st;
    st.ss_sp = malloc(CRASH_STACK);
    st.ss_size = CRASH_STACK;
    st.ss_flags = 0;
    if (st.ss_sp && sigaltstack(&st, NULL)) {
        free(st.ss_sp);
        return NULL;
    }
    return st.ss_sp;
}

static void crash_stack_drop(void *mem)
{
    stack_t st;
    memset(&st, 0, sizeof(st));
    st.ss_flags = SS_DISABLE;
    if (mem && sigaltstack(&st, NULL) == 0)
        free(mem);
}

/* The tool's own code (self: where the preloaded library begins; NULL
 * when it is linked into the program, whose code it shares). */
static int find_text(struct dl_phdr_info *info, size_t size, void *self)
{
    (void)size;
    if ((void *)info->dlpi_addr != self)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        if (ph->p_type == PT_LOAD && (ph->p_flags & PF_X)) {
            self_text_lo = info->dlpi_addr + ph->p_vaddr;
            self_text_hi = self_text_lo + ph->p_memsz;
        }
    }
    return 1;
}

/* WHATIF_SAMPLE_HZ: samples per second of a thread's CPU time, 0 for
 * none (default SAMPLE_HZ_DEFAULT); a bad value turns sampling off with
 * one line. */
#define SAMPLE_HZ_DEFAULT 1000
/* Cores this process may run on. */
static long online_cores(void)
{
    cpu_set_t set;
    if (!sched_getaffinity(0, sizeof(set), &set))
        return CPU_COUNT(&set);
    return sysconf(_SC_NPROCESSORS_ONLN);
}

static char sample_off_note[160]; /* why sampling is off, or "" */

static void sampling_setup(void *self)
{
    const char *hz = getenv("WHATIF_SAMPLE_HZ");
    long rate = SAMPLE_HZ_DEFAULT;
    if (hz && *hz) {
        char *end;
        rate = strtol(hz, &end, 10);
        if (*end || rate < 0 || rate > 100000) {
            fprintf(stderr, "whatif: WHATIF_SAMPLE_HZ=%s: use 0 (no "
                            "sampling) to 100000; sampling off\n", hz);
            rate = 0;
        }
    }
    /* More threads than cores: threads switch all the time, and the
     * kernel restarts a thread's sampling timer at every switch, which
     * on a VM cost 2.5x the run (fib at 4 threads on 2 cores).  Unless
     * asked for, sampling is off then, and the run says so. */
    long threads = 0, cores = online_cores();
    const char *nt = getenv("OMP_NUM_THREADS");
    if (nt)
        threads = strtol(nt, NULL, 10);
    if (!(hz && *hz) && rate && cores > 0 && threads > cores) {
        rate = 0;
        snprintf(sample_off_note, sizeof(sample_off_note),
                 "sampling off: %ld threads on %ld cores (a sampling timer "
                 "restarted at every thread switch would slow the run "
                 "several times); --sample-rate turns it on", threads,
                 cores);
    }
    sample_period = rate ? 1000000000ull / (uint64_t)rate : 0;
    if (sample_period && self)
        dl_iterate_phdr(find_text, self);
}

__attribute__((constructor)) static void on_load(void)
{
    decide_process();
    if (not_ours)
        return;
    tool_pid = getpid();
    /* the command line before the program can rewrite its argv */
    read_cmdline();
    pthread_atfork(NULL, NULL, on_fork_child);
    Dl_info self_info, exe_info;
    uintptr_t exe_phdr = (uintptr_t)getauxval(AT_PHDR);
    int linked_in = exe_phdr && dladdr((void *)on_load, &self_info) &&
                    dladdr((void *)exe_phdr, &exe_info) &&
                    self_info.dli_fbase == exe_info.dli_fbase;
    const char *pre = getenv("WHATIF_PRELOAD");
    int early = linked_in || (pre && !strcmp(pre, "1"));
    if (early)
        prefault_runtime();
    /* a PMU metric: the main thread's counter from here (a bad
     * WHATIF_METRIC is reported when the runtime starts the tool).
     * Before the sampler opens: choosing times 64 PMU reads, up to ~1 ms
     * where they trap, whose samples are not the program's. */
    char err[512];
    if (early && !counter_choose(getenv("WHATIF_METRIC"), &metric, err,
                                 sizeof(err))) {
        metric_chosen = 1;
        main_ct_early = counter_is_event(&metric) &&
                        !counter_thread_open(&metric, &main_ct);
    }
    sampling_setup(linked_in ? NULL : self_info.dli_fbase);
    /* the main thread's serial code before the runtime starts is sampled
     * too: its sampler waits for its state */
    if (sample_period && early &&
        sampler_open(&main_sampler, sample_period))
        memset(&main_sampler, 0, sizeof(main_sampler));
    /* the program's work begins after the tool's own set-up */
    if (early)
        cpu_origin = main_metric_now();
}

static void touch_marker(const char *name);

/* Tells `whatif run` that the program's end reached the tool (a program
 * that leaves with a raw exit_group system call never gets here). */
static void seen_end(void)
{
    const char *run = getenv("WHATIF_PID");
    if (!child_dir[0] && run && strtol(run, NULL, 10) == (long)getpid())
        touch_marker(".whatif-ended");
}

/* An empty file name in the output directory, for `whatif run`. */
static void touch_marker(const char *name)
{
    const char *out = getenv("WHATIF_OUT");
    char mark[4300];
    if (!out || !*out ||
        snprintf(mark, sizeof(mark), "%s/%s", out, name) >= (int)sizeof(mark))
        return;
    int fd = open(mark, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd >= 0)
        close(fd);
}

/* The program ends without the runtime ever starting the tool: when the
 * program turned the tools interface off itself (`whatif run` sets
 * OMP_TOOL=enabled), `whatif run` should say that, not "no OpenMP". */
__attribute__((destructor)) static void on_unload(void)
{
    const char *run = getenv("WHATIF_PID"), *omp_tool = getenv("OMP_TOOL");
    if (active || not_ours || forked_child || !run ||
        strtol(run, NULL, 10) != (long)getpid())
        return;
    if (omp_tool && !strcmp(omp_tool, "disabled"))
        touch_marker(".whatif-tool-disabled");
}

/* ---- Fragments ---- */

static void drop_sample(void *arg, uint64_t ip)
{
    (void)arg;
    (void)ip;
}

/* A sample of the fragment ending now: its line, counted. */
static void take_sample(void *arg, uint64_t ip)
{
    tstate *ts = arg;
    if (ip >= self_text_lo && ip < self_text_hi)
        return; /* the tool's own code: not the program's */
    uint32_t loc = stream_line(&ts->st, ip);
    for (int i = 0; i < ts->nfrag_smp; i++)
        if (ts->frag_smp[i].loc == loc) {
            ts->frag_smp[i].count++;
            return;
        }
    if (ts->nfrag_smp < FRAG_LINES)
        ts->frag_smp[ts->nfrag_smp++] = (ospg_sample){loc, 1};
}

/* Starts a fragment.  keep: the samples taken so far belong to it (the
 * main thread's code since the program began); otherwise they were the
 * tool's or the runtime's, between fragments. */
static inline void frag_begin(tstate *ts, int keep)
{
    ts->frag_from = ts->ev;
    ts->frag_cut = 0;
    ts->frag_rt = ts->ctx && ts->ctx->in_runtime;
    /* begun inside a wrapped call that measures nothing after it: the
     * fragment's work starts where the call returns, read there */
    ts->frag_unread = ts->frag_rt && ts->rt_skip_read;
    ts->frag_start = ts->frag_unread ? 0 : counter_read(&metric, &ts->ct);
    ts->in_frag = 1;
    ts->frag_opens++;
    if (ts->sm.ring && !keep)
        sampler_drain(&ts->sm, drop_sample, NULL);
}

static inline void frag_open(tstate *ts)
{
    frag_begin(ts, 0);
}

static inline frame *top(tctx *c)
{
    return c->nfr ? &c->fr[c->nfr - 1] : NULL;
}

/* The innermost container: where chunks, scopes and taskgroups go. */
static inline cnode *ins(tctx *c)
{
    return c->nfr ? &top(c)->node : &c->node;
}

static inline int *scope_open(tctx *c)
{
    return c->nfr ? &top(c)->has_scope : &c->has_scope;
}

static inline int *scope_unjoined(tctx *c)
{
    return c->nfr ? &top(c)->unjoined : &c->unjoined;
}

static inline int *scope_direct(tctx *c)
{
    return c->nfr ? &top(c)->direct : &c->direct;
}

static inline cnode *scope_node(tctx *c)
{
    return c->nfr ? &top(c)->scope : &c->scope;
}

/* Where W-nodes and new tasks go now. */
static inline cnode *cur(tctx *c)
{
    return *scope_open(c) ? scope_node(c) : ins(c);
}

static inline int in_chunk(tctx *c)
{
    return c->nfr && top(c)->is_chunk;
}

static inline int in_taskgroup(tctx *c)
{
    return c->nfr && !top(c)->is_chunk && !top(c)->is_loopscope;
}

/* The container just below the innermost one, where a container pushed
 * last was begun.  Used after push_frame(), which may move the frames. */
static cnode *below_top(tctx *c)
{
    return c->nfr >= 2 ? &c->fr[c->nfr - 2].node : &c->node;
}

/* Where the code of the level below the innermost container goes now
 * (its open scope, or itself): the parent of a taskgroup pushed last. */
static cnode *below_cur(tctx *c)
{
    if (c->nfr >= 2) {
        frame *f = &c->fr[c->nfr - 2];
        return f->has_scope ? &f->scope : &f->node;
    }
    return c->has_scope ? &c->scope : &c->node;
}

/* Pushes an empty container; NULL when out of memory (then ignored).
 * Pointers into the frames are invalid afterwards. */
static frame *push_frame(tctx *c)
{
    if (!c->fr) {
        c->fr = c->fr_inline;
        c->capfr = FRAMES_INLINE;
    }
    if (c->nfr == c->capfr) {
        frame *f = malloc(2 * (size_t)c->capfr * sizeof(*f));
        if (!f)
            return NULL;
        memcpy(f, c->fr, (size_t)c->nfr * sizeof(*f));
        if (c->fr != c->fr_inline)
            free(c->fr);
        c->fr = f;
        c->capfr *= 2;
    }
    frame *f = &c->fr[c->nfr++];
    memset(f, 0, sizeof(*f));
    return f;
}

static void free_frames(tctx *c)
{
    if (c->fr && c->fr != c->fr_inline)
        free(c->fr);
    c->fr = NULL;
    c->nfr = c->capfr = 0;
}

static inline uint32_t cur_loc(const tctx *c)
{
    /* Deeper than LOC_STACK, the deepest stored location stands in. */
    int n = c->nlocs < LOC_STACK ? c->nlocs : LOC_STACK;
    return n ? c->locs[n - 1] : c->base_loc;
}

/* p's node in the on-the-fly builder. */
static inline ospg_node *online_node(const cnode *p)
{
    return p->id == TRACE_ROOT_ID ? online_root() : p->on;
}

/* ---- Leaves ----
 *
 * Most tasks of a task-heavy program create nothing: a task of one
 * fragment (or of a few, split by a childless taskwait or by the parts of
 * an untied task) would cost a BEGIN, a WORK per fragment and an END, and
 * as many updates of the graph.  So a task without depend items starts
 * lazy: its begin is owed (node.lazy), and the work of its own code adds
 * up in the task.  The first child index taken in its node (a task, a
 * scope, a region, a W-node of other code) records the begin and the work
 * so far first; a task that ends still lazy becomes one LEAF (ospg_leaf),
 * which the analysis folds as BEGIN, WORK and END would.  The task alone
 * touches its node, on whatever thread runs it, so this needs no lock;
 * nothing may copy a lazy node (child_idx first, then copy). */

static void lazy_flush(tstate *ts, cnode *n);

/* The next child index of p. */
static inline uint64_t child_idx(cnode *p)
{
    if (p->id == TRACE_ROOT_ID)
        return atomic_fetch_add_explicit(&root_kids, 1, memory_order_relaxed);
    if (p->lazy)
        lazy_flush(self, p);
    return p->nkids++;
}

static inline void ev_code(tstate *ts, int kind, int end, const void *code,
                           const void *ident)
{
    ts->ev = (frag_event){code, ident, 0, (uint8_t)kind, (uint8_t)end};
}

static inline void ev_loc(tstate *ts, int kind, int end, uint32_t loc)
{
    ts->ev = (frag_event){NULL, NULL, loc, (uint8_t)kind, (uint8_t)end};
}

static int ev_same(const frag_event *a, const frag_event *b)
{
    return a->code == b->code && a->ident == b->ident && a->loc == b->loc &&
           a->kind == b->kind && a->end == b->end;
}

/* "begin|end:KIND:LOC" of e. */
static void ev_name(tstate *ts, const frag_event *e, char *buf, size_t len)
{
    uint32_t loc = 0;
    const char *kind = e->kind == FEV_PROGRAM  ? "program"
                       : e->kind == FEV_THREAD ? "thread"
                                              : stream_dir_name(e->kind);
    if (e->kind < DIR_COUNT)
        loc = e->code ? stream_loc_ident(&ts->st, e->code, e->ident, e->kind)
                      : e->loc;
    snprintf(buf, len, "%s:%s:%u", e->end ? "end" : "begin", kind,
             (unsigned)loc);
}

/* The tag of the program's serial fragment frag_take ended last. */
static uint32_t serial_tag(tstate *ts)
{
    for (unsigned i = 0; i < SERIAL_CACHE; i++)
        if (ts->serial_cache[i].loc &&
            ev_same(&ts->serial_cache[i].from, &ts->took_from) &&
            ev_same(&ts->serial_cache[i].to, &ts->took_to))
            return ts->serial_cache[i].loc;
    char from[64], to[64], where[160];
    ev_name(ts, &ts->took_from, from, sizeof(from));
    ev_name(ts, &ts->took_to, to, sizeof(to));
    snprintf(where, sizeof(where), "%s>%s", from, to);
    uint32_t loc = stream_name(&ts->st, "serial", where);
    unsigned k = ts->serial_next++ % SERIAL_CACHE;
    ts->serial_cache[k].from = ts->took_from;
    ts->serial_cache[k].to = ts->took_to;
    ts->serial_cache[k].loc = loc;
    return loc;
}

static void emit_work_in(tstate *ts, cnode *p, uint64_t work, uint32_t loc,
                         uint32_t region, unsigned flags,
                         const ospg_sample *smp, size_t nsmp)
{
    uint64_t idx = UINT64_MAX;
    if (p->id == TRACE_ROOT_ID &&
        atomic_load_explicit(&main_pending_idx, memory_order_relaxed) !=
            UINT64_MAX)
        idx = atomic_exchange(&main_pending_idx, UINT64_MAX);
    if (idx == UINT64_MAX)
        idx = child_idx(p);
    if (mode_offline && ts->ok)
        trace_write_work_sampled(ts->st.w, p->id, idx, work, loc, region,
                                 flags, smp, nsmp);
    if (!mode_online)
        return;
    if (ts->hold_w && !nsmp && !ts->held.on) {
        ts->held.node = online_node(p);
        ts->held.idx = idx;
        ts->held.work = work;
        ts->held.loc = loc;
        ts->held.region = region;
        ts->held.flags = flags;
        ts->held.on = 1;
        return;
    }
    online_work_sampled(ts->q, online_node(p), idx, work, loc, region, flags,
                        smp, nsmp);
}

/* Hands the W-node held back to the builder, if any: the callback that
 * allowed holding one is about to return. */
static void held_release(tstate *ts)
{
    ts->hold_w = 0;
    if (!ts->held.on)
        return;
    ts->held.on = 0;
    online_work_sampled(ts->q, ts->held.node, ts->held.idx, ts->held.work,
                        ts->held.loc, ts->held.region, ts->held.flags, NULL,
                        0);
}

/* Closes the running fragment like frag_close, holding its W-node back
 * on the fly until held_release, for an END of its node to take along. */
static void frag_close(tstate *ts);
static void frag_close_held(tstate *ts)
{
    ts->hold_w = mode_online;
    frag_close(ts);
}

/* Adds a W-node under p, inside the running task's what-if region, with
 * the samples of the fragment just ended. */
static void emit_work(tstate *ts, cnode *p, uint64_t work, uint32_t loc,
                      unsigned flags)
{
    uint32_t region = ts->ctx ? ts->ctx->path : 0;
    tctx *t = p->lazy;
    if (t && loc == t->base_loc && !flags && !ts->nfrag_smp &&
        (!t->lazy_nw || region == t->lazy_region)) {
        /* the task's own code, next to its earlier code: one W-node */
        t->lazy_work += work;
        t->lazy_region = region;
        t->lazy_nw = 1;
        return;
    }
    uint32_t tag = loc == OSPG_LOC_PROGRAM && work ? serial_tag(ts) : 0;
    if (tag) /* 0: out of memory, no tag */
        ts->frag_smp[ts->nfrag_smp++] = (ospg_sample){tag, 0};
    int nsmp = ts->nfrag_smp;
    ts->nfrag_smp = 0; /* one W-node carries them */
    emit_work_in(ts, p, work, loc, region, flags, ts->frag_smp, (size_t)nsmp);
}

static void write_task_begin(tstate *ts, struct tctx *t,
                             const ompt_dependence_t *deps, int ndeps,
                             const ospg_leaf_work *w);

/* Records the begin a lazy node owes, then the work of its task so far
 * (on the fly, in the same call: the node is not linked yet). */
static void lazy_flush(tstate *ts, cnode *n)
{
    tctx *t = n->lazy;
    n->lazy = NULL;
    ospg_leaf_work w = {t->lazy_work, t->base_loc, t->lazy_region, 0};
    write_task_begin(ts, t, NULL, 0, t->lazy_nw ? &w : NULL);
    if (t->lazy_nw) {
        t->lazy_nw = 0;
        uint64_t idx = child_idx(n); /* 0 */
        if (mode_offline && ts->ok)
            trace_write_work_sampled(ts->st.w, n->id, idx, w.work, w.loc,
                                     w.region, 0, NULL, 0);
    }
}

/* The TIME record of a grain that began at t0 (0: untimed) and ends now,
 * written just before its LEAF or END. */
static void grain_time(tstate *ts, uint64_t t0)
{
    if (!t0 || !mode_offline || !ts->ok)
        return;
    /* a grain that began on another CPU: their TSCs may differ by a few
     * ns, and an end before the start would be refused */
    uint64_t end = grain_now(ts);
    trace_write_time(ts->st.w, t0, end > t0 ? end : t0);
}

/* ---- Waits inside tasks ----
 *
 * A task at a taskwait or at its taskgroup's end has started and not
 * ended, yet its thread may run nothing there (its children run on other
 * threads).  Offline, such stretches become WAIT records, which the
 * instantaneous parallelism leaves out; the stretches in which the thread
 * runs another task are not waits.  Waits shorter than WAIT_MIN_NS are
 * not written (the trace stays small; they weigh little at any scale the
 * timeline shows). */
#define WAIT_MIN_NS 2000u

static void wait_begin(tctx *c)
{
    if (!mode_offline || c->kind != CTX_EXPLICIT)
        return;
    c->in_wait = 1;
    c->wait_t0 = grain_clock();
}

/* The task runs something again (another task), or its wait ended. */
static void wait_cut(tstate *ts, tctx *c)
{
    if (!c->wait_t0)
        return;
    /* read here, not at the callback's start (grain_now): the wait may
     * have begun on another thread after this callback began */
    uint64_t now = grain_clock();
    if (now > c->wait_t0 && now - c->wait_t0 >= WAIT_MIN_NS && ts->ok)
        trace_write_wait(ts->st.w, c->wait_t0, now);
    c->wait_t0 = 0;
}

static void wait_end(tstate *ts, tctx *c)
{
    wait_cut(ts, c);
    c->in_wait = 0;
}

/* A node begun and ended at once, at most a W-node inside: one record.
 * t0: when it began, a grain (0: untimed). */
static void record_leaf(tstate *ts, const cnode *parent, uint64_t idx,
                        ospg_kind kind, uint32_t loc, uint64_t group,
                        const cnode *owner, const ospg_leaf_work *w,
                        uint64_t t0)
{
    grain_time(ts, t0);
    if (mode_offline && ts->ok)
        trace_write_leaf(ts->st.w, parent->id, idx, kind, loc, group,
                         owner ? owner->id : 0, w);
    if (mode_online)
        online_leaf(ts->q, online_node(parent), idx, kind, loc, group,
                    owner ? online_node(owner) : NULL, w);
}

/* A lazy task ends: its node in one record. */
static void emit_leaf(tstate *ts, cnode *n)
{
    tctx *t = n->lazy;
    n->lazy = NULL;
    ospg_leaf_work w = {t->lazy_work, t->base_loc, t->lazy_region, 0};
    record_leaf(ts, &t->pend_parent, t->pend_idx, t->pend_kind, t->base_loc,
                t->spawn_group, t->spawn_group ? &t->spawn_owner : NULL,
                t->lazy_nw ? &w : NULL, n->t0);
    n->t0 = 0;
}

/* A W-node of the program's serial code at a given index of node id. */
static void record_work_at(tstate *ts, uint64_t id, uint64_t idx,
                           uint64_t work)
{
    /* named by the events of the last fragment taken (serial_tag) */
    ospg_sample tag = {work ? serial_tag(ts) : 0, 0};
    size_t ntag = tag.loc ? 1 : 0;
    if (mode_offline && ts->ok)
        trace_write_work_sampled(ts->st.w, id, idx, work, OSPG_LOC_PROGRAM, 0,
                                 0, &tag, ntag);
    if (mode_online && id == TRACE_ROOT_ID)
        online_work_sampled(ts->q, online_root(), idx, work,
                            OSPG_LOC_PROGRAM, 0, 0, &tag, ntag);
}

/* The flags of a W-node of the innermost construct on c's location stack:
 * a single, critical or lock body split by directives inside it is one
 * instance, whose first W-node counts it. */
static unsigned loc_flags(tctx *c)
{
    int k = c->nlocs - 1;
    if (k < 0 || k >= LOC_STACK)
        return 0;
    uint32_t bit = 1u << k;
    unsigned flags = (c->loc_begun & bit) ? OSPG_W_CONTINUES : 0;
    c->loc_begun |= bit;
    return flags;
}

/* An allocation's span left open (tool_alloc_leave) that no queueing
 * took over: the fragment ends where the allocation began.  What ran
 * since (an if(0) task's copy and if() expression, up to its creation
 * event) is lost, so the construct's allocations keep their own spans
 * from now on. */
static __attribute__((noinline, cold)) void alloc_unqueued(tstate *ts)
{
    if (ts->alloc_opens == ts->frag_opens)
        ts->alloc_site->unqueued = 1;
    ts->alloc_opens = 0;
}

/* Ends the running fragment and returns its work (0: none). */
static uint64_t frag_take(tstate *ts)
{
    if (!ts->in_frag)
        return 0;
    /* The runtime's own code between two of its events inside one call
     * (a taskloop creating its tasks) is not the program's: no read. */
    uint64_t now = ts->frag_rt ? 0
                   : ts->frag_cut ? ts->frag_cut
                                  : counter_read(&metric, &ts->ct);
    if (ts->alloc_opens)
        alloc_unqueued(ts);
    ts->in_frag = 0;
    ts->nfrag_smp = 0;
    ts->took_from = ts->frag_from;
    ts->took_to = ts->ev;
    if (ts->carry_pre) {
        ts->carry_pre = 0;
        for (int i = 0; i < main_pre_n; i++)
            take_sample(ts, main_pre_ips[i]);
        atomic_fetch_add_explicit(&samples_taken, (uint64_t)main_pre_n,
                                  memory_order_relaxed);
        main_pre_n = 0;
    }
    if (ts->sm.ring) {
        size_t n = sampler_drain(&ts->sm, take_sample, ts);
        if (n)
            atomic_fetch_add_explicit(&samples_taken, n,
                                      memory_order_relaxed);
    }
    if (ts->frag_rt)
        return 0;
    /* Leave out what the two reads themselves added. */
    return now > ts->frag_start + read_bias ? now - ts->frag_start - read_bias
                                            : 0;
}

static void materialize_block(tstate *ts, tctx *c, int ordered);
static void materialize_chunk(tstate *ts, tctx *c, int ordered);
static void close_regions(tctx *c);
static inline int in_pieces(tctx *c);

static void frag_emit(tstate *ts, uint64_t work);

/* Ends the running fragment: its work becomes a W-node. */
static void frag_close(tstate *ts)
{
    frag_emit(ts, frag_take(ts));
}

/* A fragment's work, taken, becomes a W-node where the task stands. */
static void frag_emit(tstate *ts, uint64_t work)
{
    tctx *c = ts->ctx;
    if (!c)
        return;
    /* Any directive inside a held-back static part or a chunk not begun
     * yet begins its node. */
    if (c->lazy_block)
        materialize_block(ts, c, 0);
    if (c->chunk_lazy)
        materialize_chunk(ts, c, 0);
    if (c->nfr && top(c)->fresh)
        top(c)->fresh = 0;
    if (!work) {
        /* an index kept for the main thread's fragment must be filled */
        if (c == &initial_ctx && cur(c)->id == TRACE_ROOT_ID &&
            atomic_load_explicit(&main_pending_idx, memory_order_relaxed) !=
                UINT64_MAX)
            emit_work(ts, cur(c), 0, OSPG_LOC_PROGRAM, 0);
        return;
    }
    if (c->kind == CTX_IMPLICIT)
        c->share_work += work;
    if (c->ol && in_pieces(c))
        atomic_fetch_add_explicit(&c->ol->work, work, memory_order_relaxed);
    /* A taskloop's helper task runs the runtime's split of the loop: its
     * code is the taskloop's work, but no instance of it (the loop's tasks
     * are, one group without a taskgroup, one taskgroup with). */
    unsigned flags = loc_flags(c) | (c->helper ? OSPG_W_CONTINUES : 0);
    emit_work(ts, cur(c), work, cur_loc(c), flags);
}

static void push_loc(tctx *c, uint32_t loc)
{
    if (c->nlocs < LOC_STACK) {
        c->locs[c->nlocs] = loc;
        c->loc_begun &= ~(1u << c->nlocs);
    }
    c->nlocs++;
}

static void pop_loc(tctx *c)
{
    if (c->nlocs > 0)
        c->nlocs--;
}

/* ---- Calling contexts (--context N) ----
 *
 * With WHATIF_CONTEXT=N a construct is named by its call path too: the
 * sites its call was inlined from, then the program's frames above it on
 * the stack (a walk, 2-5 us), up to the runtime's: code inside a parallel
 * region's body or a task continues with the context of the construct
 * that started it (tctx.ctx_chain), so every thread of a region names its
 * constructs alike.  The system's libraries are left out of the path. */
#define CTX_WALK 64

enum { FRAME_PROGRAM, FRAME_SYSTEM, FRAME_RUNTIME };

static int frame_kind(const void *ra)
{
    uintptr_t a = (uintptr_t)ra - 1;
    Dl_info info;
    if ((a >= runtime_text_lo && a < runtime_text_hi))
        return FRAME_RUNTIME;
    if (a >= self_text_lo && a < self_text_hi)
        return FRAME_SYSTEM; /* the tool's own */
    if (!dladdr((const void *)a, &info) || !info.dli_fname)
        return FRAME_SYSTEM;
    const char *base = strrchr(info.dli_fname, '/');
    base = base ? base + 1 : info.dli_fname;
    if (!strncmp(base, "libomp", 6) || !strncmp(base, "libiomp", 7) ||
        !strncmp(base, "libgomp", 7))
        return FRAME_RUNTIME;
    const char *f = info.dli_fname;
    if (!strncmp(f, "/lib/", 5) || !strncmp(f, "/lib64/", 7) ||
        !strncmp(f, "/usr/lib/", 9) || !strncmp(f, "/usr/lib64/", 11))
        return FRAME_SYSTEM;
    return FRAME_PROGRAM;
}

/* The calling context of a construct at return address code, met in task
 * c (0 when contexts are off). */
static uint32_t context_of(tstate *ts, const tctx *c, const void *code,
                           const void *ident, int kind)
{
    if (!stream_context())
        return 0;
    void *fr[CTX_WALK];
    int n = backtrace(fr, CTX_WALK), i = 0;
    while (i < n && fr[i] != code)
        i++;
    /* A loop's runtime call is never a tail call (the loop follows it):
     * its code, on the stack, is the construct's own even on another
     * line (a dynamic loop's call is on its `for` line).  Other calls
     * may be, through the preloaded wrapper too, whose return address
     * is then the caller's. */
    int tail = i == n || (kind != DIR_LOOP && kind != DIR_SECTIONS);
    if (i == n) {
        /* a tail call (code named by its ident_t): no frame returns to
         * it; its function's caller is the first program frame */
        for (i = 0; i < n && frame_kind(fr[i]) != FRAME_PROGRAM; i++)
            ;
        i--;
    }
    const void *keep[STREAM_CHAIN_FRAMES];
    int nk = 0;
    for (i++; i < n && nk < STREAM_CHAIN_FRAMES; i++) {
        int k = frame_kind(fr[i]);
        if (k == FRAME_RUNTIME)
            break;
        if (k == FRAME_PROGRAM)
            keep[nk++] = fr[i];
    }
    return stream_chain(&ts->st, code, ident, tail, keep, nk,
                        c ? c->ctx_chain : 0,
                        c ? c->ctx_code : NULL);
}

/* The location of a construct at code met in task c: with its calling
 * context when asked. */
static uint32_t construct_loc(tstate *ts, const tctx *c, const void *code,
                              const void *ident, int kind)
{
    if (!stream_context())
        return stream_loc_ident(&ts->st, code, ident, kind);
    return stream_loc_ctx(&ts->st, code, ident, kind,
                          context_of(ts, c, code, ident, kind));
}

/* ---- Node records ---- */

/* Begins n in the on-the-fly builder (n->on).  Done before n can be seen
 * by another thread: a node shared by the team (a barrier phase, an
 * ordered loop's node) is begun there under the lock that publishes it. */
static void online_begin_node(tstate *ts, cnode *n, const cnode *parent,
                              uint64_t idx, ospg_kind kind, uint32_t loc,
                              uint64_t group, const cnode *owner,
                              const ospg_dep *deps, size_t ndeps)
{
    n->on = online_begin(ts->q, online_node(parent), idx, kind, loc, group,
                         owner ? online_node(owner) : NULL, deps, ndeps);
}

/* Records a node's begin in the trace and/or the on-the-fly builder.
 * owner is the group's owner (NULL without a group); n->id must be set.
 * online: 0 when n was begun on the fly already (online_begin_node). */
static void record_begin_as(tstate *ts, cnode *n, const cnode *parent,
                            uint64_t idx, ospg_kind kind, uint32_t loc,
                            uint64_t group, const cnode *owner,
                            const ospg_dep *deps, size_t ndeps, int online)
{
    if (mode_offline && ts->ok)
        trace_write_begin(ts->st.w, n->id, parent->id, idx, kind, loc, group,
                          owner ? owner->id : 0, deps, ndeps);
    if (mode_online && online)
        online_begin_node(ts, n, parent, idx, kind, loc, group, owner, deps,
                          ndeps);
}

static void record_begin(tstate *ts, cnode *n, const cnode *parent,
                         uint64_t idx, ospg_kind kind, uint32_t loc,
                         uint64_t group, const cnode *owner,
                         const ospg_dep *deps, size_t ndeps)
{
    record_begin_as(ts, n, parent, idx, kind, loc, group, owner, deps, ndeps,
                    1);
}

static void begin_node(tstate *ts, cnode *n, const cnode *parent,
                       uint64_t idx, ospg_kind kind, uint32_t loc,
                       uint64_t group, const cnode *owner)
{
    n->id = stream_new_id(&ts->st);
    n->nkids = 0;
    n->on = NULL;
    n->t0 = 0;
    record_begin(ts, n, parent, idx, kind, loc, group, owner, NULL, 0);
}

static void end_node(tstate *ts, cnode *n, uint32_t loc)
{
    if (n->lazy) {
        if (loc == OSPG_LOC_NONE) {
            emit_leaf(ts, n);
            return;
        }
        lazy_flush(ts, n);
    }
    grain_time(ts, n->t0);
    n->t0 = 0;
    if (mode_offline && ts->ok)
        trace_write_end(ts->st.w, n->id, n->nkids, loc);
    if (!mode_online)
        return;
    ospg_node *on = online_node(n);
    if (ts->held.on && on && ts->held.node == on) {
        ts->held.on = 0;
        online_work_end(ts->q, on, ts->held.idx, ts->held.work,
                        ts->held.loc, ts->held.region, ts->held.flags,
                        n->nkids, loc);
        return;
    }
    online_end(ts->q, on, n->nkids, loc);
}

/* Ends the innermost open taskwait scope. */
static void end_scope(tstate *ts, tctx *c, uint32_t loc)
{
    if (!*scope_open(c))
        return;
    end_node(ts, scope_node(c), loc);
    *scope_open(c) = 0;
    *scope_unjoined(c) = 0;
    *scope_direct(c) = 0;
}

/* Opens the innermost container's taskwait scope, if it has none open:
 * the S-node that collects the tasks (and chunks that may hold tasks)
 * which the next taskwait joins.  Inlined: a task's creation opens one
 * (a call there cost its path 1%). */
static inline __attribute__((always_inline)) void open_scope(tstate *ts,
                                                           tctx *c)
{
    if (*scope_open(c))
        return;
    cnode *p = ins(c);
    begin_node(ts, scope_node(c), p, child_idx(p), OSPG_S, OSPG_LOC_NONE, 0,
               NULL);
    *scope_open(c) = 1;
}

static void end_chunk(tstate *ts, tctx *c)
{
    if (c->chunk_lazy) { /* nothing happened in it: no node */
        c->chunk_lazy = 0;
        pop_loc(c);
        return;
    }
    if (!in_chunk(c))
        return;
    /* Its tasks join with it in the graph, but really at the thread's
     * next taskwait or barrier, which the level's scope holding the
     * chunk stands for. */
    int unjoined = top(c)->unjoined && !top(c)->is_piece;
    end_scope(ts, c, OSPG_LOC_NONE);
    end_node(ts, &top(c)->node, OSPG_LOC_NONE);
    c->nfr--;
    pop_loc(c);
    if (unjoined && *scope_open(c))
        *scope_unjoined(c) = 1;
}

static void note_once(tstate *ts, uint32_t loc, uint32_t note);

static int begin_chunk_node(tstate *ts, tctx *c);

/* A taskwait inside a loop chunk or a section also waits for the tasks
 * its task created before (before the loop, or in its earlier chunks),
 * which the scope holding the chunk collects.  The chunk's node ends
 * there, that scope with it, and the chunk goes on in a node of its own
 * after them.  Only where that scope is the one level holding such tasks;
 * returns 0 when it did not split. */
static int taskwait_splits_chunk(tstate *ts, tctx *c, uint32_t loc)
{
    frame *f = top(c);
    if (!f->is_chunk || f->is_piece)
        return 0;
    int below_open = c->nfr >= 2 ? c->fr[c->nfr - 2].has_scope
                                 : c->has_scope;
    int below_unjoined = c->nfr >= 2 ? c->fr[c->nfr - 2].unjoined
                                     : c->unjoined;
    int deeper = c->nfr >= 2 && c->unjoined;
    for (int i = 0; i + 2 < c->nfr; i++)
        deeper |= c->fr[i].unjoined;
    if (!below_open || !below_unjoined || deeper)
        return 0;
    end_scope(ts, c, loc);
    end_node(ts, &f->node, OSPG_LOC_NONE);
    c->nfr--;
    end_scope(ts, c, loc);
    if (begin_chunk_node(ts, c))
        pop_loc(c); /* no node (out of memory): the loop's code ends */
    else
        ins(c)->t0 = mode_offline ? grain_clock() : 0;
    return 1;
}

/* A taskwait joins the tasks of the innermost scope.  A scope that holds
 * none (only chunks whose tasks were joined, or none: the scope a chunk
 * with a critical section opened) stays open: the chunks in it are not
 * the taskwait's to wait for, and stay parallel with the code after it. */
static void taskwait_scope(tstate *ts, tctx *c, uint32_t loc)
{
    if (*scope_unjoined(c) || *scope_direct(c))
        end_scope(ts, c, loc);
}

/* A taskwait inside a chunk or a taskgroup also waits for the tasks the
 * task created outside it (before the loop or the taskgroup, or in
 * earlier chunks); the graph joins those where their own scope ends, so
 * the code after this taskwait is parallel with them there: noted. */
static void note_outer_tasks(tstate *ts, tctx *c, uint32_t loc)
{
    /* this taskwait really joins them: a later one waits for none */
    int outer = c->unjoined;
    c->unjoined = 0;
    for (int i = 0; i + 1 < c->nfr; i++) {
        outer |= c->fr[i].unjoined;
        c->fr[i].unjoined = 0;
    }
    if (outer)
        note_once(ts, loc, TRACE_NOTE_TASKWAIT_OUTER);
}

/* Ends every container still open (a task or share ending early). */
static void end_frames(tstate *ts, tctx *c)
{
    while (c->nfr) {
        end_scope(ts, c, OSPG_LOC_NONE);
        if (top(c)->is_chunk)
            pop_loc(c);
        end_node(ts, &top(c)->node, OSPG_LOC_NONE);
        c->nfr--;
    }
}

/* Hands a thread's chunk costs over now and then: a worker's thread_end
 * may come after the program's end is written. */
static void chunk_handover(tstate *ts)
{
    atomic_fetch_add_explicit(&chunk_rt_total, ts->chunk_rt,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&chunk_rt_count, ts->chunk_grains,
                              memory_order_relaxed);
    ts->chunk_rt = ts->chunk_grains = 0;
}

/* One more chunk grain recorded (what the chunk costs are shared by). */
static void chunk_counted(tstate *ts)
{
    if (++ts->chunk_grains >= 64)
        chunk_handover(ts);
}

/* Opens a chunk container; the caller has pushed the loop's location.
 * The chunk goes where its level puts new code: into the level's open
 * taskwait scope, if any, so that it stays parallel with the tasks in
 * that scope (created before the loop, or by other chunks) and joins
 * where they do. */
static int begin_chunk_node(tstate *ts, tctx *c)
{
    frame *f = push_frame(c);
    if (!f)
        return -1;
    cnode *p = below_cur(c);
    f->is_chunk = 1;
    begin_node(ts, &f->node, p, child_idx(p), OSPG_P, c->loop_loc,
               c->loop_group, &c->loop_owner);
    chunk_counted(ts);
    f->node.t0 = c->chunk_t0;
    return 0;
}

static int pieces_start(tstate *ts, tctx *c, int ordered);

/* A chunk with a directive inside may create tasks, children of the
 * thread's task, which a taskwait after a nowait loop waits for: the
 * chunk begins in the level's taskwait scope, which that taskwait (or
 * the barrier) ends, so that the code after the taskwait follows the
 * chunk and its tasks.  Begun beside the scope, it would join only at
 * the barrier. */
static int begin_chunk_in_scope(tstate *ts, tctx *c)
{
    open_scope(ts, c);
    return begin_chunk_node(ts, c);
}

/* A directive inside a static loop's body: its part becomes one chunk,
 * or the first piece of the loop's ordered chain (ordered: the directive
 * is an ordered block, a sink or a source). */
static void materialize_block(tstate *ts, tctx *c, int ordered)
{
    c->lazy_block = 0;
    if (pieces_start(ts, c, ordered) == 0)
        return;
    if (begin_chunk_in_scope(ts, c))
        pop_loc(c); /* no chunk (out of memory): its location goes too */
}

/* The first event inside a dynamic chunk: its node begins now. */
static void materialize_chunk(tstate *ts, tctx *c, int ordered)
{
    c->chunk_lazy = 0;
    if (pieces_start(ts, c, ordered) == 0)
        return;
    if (begin_chunk_in_scope(ts, c))
        pop_loc(c);
}

#define MAX_SPLIT 4096 /* reconstructed chunks per thread and loop */

/* The chunks of schedule(static, c) that libomp did not report: thread
 * i of T gets chunks i, i+T, ... of first_iters iterations out of trip.
 * The part's measured work is shared in proportion to iterations (the
 * work of one chunk is estimated, the total is measured). */
static void emit_static_chunks(tstate *ts, tctx *c, uint64_t work)
{
    uint64_t T = c->region ? atomic_load(&c->region->team) : 1;
    uint64_t n = c->trip, ch = c->first_iters, i = c->index;
    uint64_t nchunks = 0, total = 0;
    if (T == 0)
        T = 1;
    if (c->have_dispatch && ch > 0 && n > 0 && i * ch < n) {
        nchunks = ((n + ch - 1) / ch - i + T - 1) / T;
        total = 0;
        for (uint64_t k = i; k * ch < n; k += T)
            total += n - k * ch < ch ? n - k * ch : ch;
    }
    if (nchunks <= 1 || total == 0) {
        if (!work || begin_chunk_node(ts, c))
            return;
        emit_work(ts, ins(c), work, c->loop_loc, 0);
        end_node(ts, ins(c), OSPG_LOC_NONE);
        c->nfr--;
        return;
    }
    /* More chunks than MAX_SPLIT are merged in runs of equal count.  Their
     * times, like their work, are the part's shared by iterations. */
    uint64_t per = (nchunks + MAX_SPLIT - 1) / MAX_SPLIT;
    uint64_t given = 0, done_iters = 0, k = i;
    uint64_t t_first = c->chunk_t0, t_span = 0, t_at = t_first;
    if (t_first) {
        uint64_t now = grain_clock();
        t_span = now > t_first ? now - t_first : 0;
    }
    while (k * ch < n) {
        uint64_t iters = 0;
        for (uint64_t r = 0; r < per && k * ch < n; r++, k += T)
            iters += n - k * ch < ch ? n - k * ch : ch;
        done_iters += iters;
        uint64_t upto = (uint64_t)((unsigned __int128)work * done_iters /
                                   total);
        if (begin_chunk_node(ts, c))
            return;
        if (upto > given)
            emit_work(ts, ins(c), upto - given, c->loop_loc, 0);
        given = upto;
        uint64_t t_end = t_first + (uint64_t)((unsigned __int128)t_span *
                                              done_iters / total);
        if (t_first && mode_offline && ts->ok)
            trace_write_time(ts->st.w, t_at, t_end);
        t_at = t_end;
        ins(c)->t0 = 0; /* timed above */
        end_node(ts, ins(c), OSPG_LOC_NONE);
        c->nfr--;
    }
}

/* A chunk starts.  Its node begins at the first event inside it, when it
 * is known whether the chunk is cut into pieces of an ordered chain. */
static ordloop *ordloop_get(tstate *ts, tctx *c, int create);

/* A dynamic chunk ends with no event inside it (the common case): like a
 * task that creates nothing, it is one leaf, a member of its loop's group
 * (Leaves), unless its loop has an ordered chain, whose chunks are pieces.
 * Returns 1 when it took the chunk's fragment. */
static int chunk_leaf(tstate *ts, tctx *c)
{
    if (!c->chunk_lazy || !ts->in_frag || ordloop_get(ts, c, 0))
        return 0;
    uint64_t work = frag_take(ts);
    if (ts->nfrag_smp) { /* its W-node carries samples: a node of its own */
        c->chunk_lazy = 0; /* no directive inside: opens no scope */
        if (begin_chunk_node(ts, c))
            pop_loc(c);
        frag_emit(ts, work);
        return 1;
    }
    c->chunk_lazy = 0;
    if (c->kind == CTX_IMPLICIT)
        c->share_work += work;
    cnode *p = cur(c);
    uint64_t idx = child_idx(p);
    ospg_leaf_work w = {work, c->loop_loc, c->path, 0};
    record_leaf(ts, p, idx, OSPG_P, c->loop_loc, c->loop_group,
                &c->loop_owner, work ? &w : NULL, c->chunk_t0);
    chunk_counted(ts);
    pop_loc(c);
    return 1;
}

static void begin_chunk(tstate *ts, tctx *c)
{
    end_chunk(ts, c);
    /* Only code inside a chunk is the loop's; scheduling between chunks
     * stays with the enclosing construct. */
    push_loc(c, c->loop_loc);
    c->chunk_lazy = 1;
    c->chunk_t0 = mode_offline ? grain_clock() : 0;
}

/* ---- Ordered and doacross loops ----
 *
 * The ordered blocks of a loop run in iteration order, and a doacross
 * iteration waits at depend(sink) for the depend(source) of another: chains
 * between code of different chunks, which a series-parallel tree cannot
 * hold.  Such a loop instance gets a node L of its own (an ordloop): a
 * P-child of the barrier phase and a member of the loop's group, created by
 * the first thread that meets an ordered block, sink or source in it.  Each
 * chunk of the loop is then cut into pieces, P-children of L, at every
 * ordered block, sink and source, and the chains become dependences between
 * L's children, which the core resolves exactly:
 *   - the pieces of one chunk follow each other (inout on the chunk's
 *     address), since a chunk is one serial grain;
 *   - the ordered blocks follow each other in the order they ran, which
 *     the runtime makes the iteration order (inout on the loop's address);
 *   - the piece after a sink depends on a marker piece that a source
 *     leaves for its iteration (out, then in, on the iteration's address).
 * L's span, the loop's, is then the longest path through its chunks and
 * chains.  Two limits are noted on the loop's row (trace_note): L starts
 * with the barrier phase, so a thread's code before the loop does not
 * delay its chunks in the model; and libomp reports one chunk per thread
 * for a static schedule, so a thread's whole part is one chain. */

#define ADDR_CHAIN (1ull << 62)   /* | stream << 40 | chunk: a chunk's */
#define ADDR_ORDERED (2ull << 62) /* the ordered blocks of a loop */
#define ADDR_ITER (3ull << 62)    /* | hash: a doacross iteration */

static void tool_note(tstate *ts, uint32_t loc, uint32_t note,
                      uint64_t value)
{
    if (mode_offline && ts->ok)
        trace_write_note(ts->st.w, loc, note, value);
    if (mode_online)
        online_note(loc, note, value);
}

/* A note that holds for every instance of a location: written once per
 * thread and location (the last few are remembered). */
static void note_once(tstate *ts, uint32_t loc, uint32_t note)
{
    for (int i = 0; i < NOTED_MAX; i++)
        if (ts->noted[i].loc == loc && ts->noted[i].note == note)
            return;
    ts->noted[ts->noted_next].loc = loc;
    ts->noted[ts->noted_next].note = note;
    ts->noted_next = (ts->noted_next + 1) % NOTED_MAX;
    tool_note(ts, loc, note, 1);
}

static void atomic_max(atomic_uint_fast64_t *a, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(a, memory_order_relaxed);
    while (v > cur && !atomic_compare_exchange_weak_explicit(
                          a, &cur, v, memory_order_relaxed,
                          memory_order_relaxed))
        ;
}

/* The ordloop of c's current loop: found, or created when create is set.
 * NULL outside a team of several threads (a loop of one thread is one
 * chunk: its chain is its serial code) or when out of memory. */
static ordloop *ordloop_get(tstate *ts, tctx *c, int create)
{
    region *r = c->region;
    if (c->ol)
        return c->ol;
    if (!r || atomic_load_explicit(&r->team, memory_order_relaxed) <= 1 ||
        (!create && !atomic_load_explicit(&r->ordloops_seen,
                                          memory_order_acquire)))
        return NULL;
    ordloop *ol;
    cnode phase = {0};
    uint64_t idx = 0;
    int fresh = 0;
    spin_acquire(&r->lock);
    for (ol = r->ordloops; ol && ol->group != c->loop_group; ol = ol->next)
        ;
    if (!ol && create && (ol = calloc(1, sizeof(*ol)))) {
        /* untimed: its pieces run on every thread of the team, and it
         * closes with the barrier phase */
        ol->L.id = stream_new_id(&ts->st);
        ol->group = c->loop_group;
        ol->loc = c->loop_loc;
        idx = atomic_load(&r->team) + r->phase_extra++;
        phase = r->phase;
        if (mode_online) /* before another thread can find it */
            online_begin_node(ts, &ol->L, &phase, idx, OSPG_P, ol->loc,
                              ol->group, &c->loop_owner, NULL, 0);
        ol->next = r->ordloops;
        r->ordloops = ol;
        atomic_store_explicit(&r->ordloops_seen, ol, memory_order_release);
        fresh = 1;
    }
    spin_release(&r->lock);
    if (!ol)
        return NULL;
    /* The trace's record outside the lock, like a barrier phase's. */
    if (fresh)
        record_begin_as(ts, &ol->L, &phase, idx, OSPG_P, ol->loc, ol->group,
                        &c->loop_owner, NULL, 0, 0);
    c->ol = ol;
    atomic_max(&ol->max_prefix, c->loop_prefix);
    return ol;
}

static inline int in_pieces(tctx *c)
{
    return c->nfr && top(c)->is_piece;
}

/* Begins the next piece of the running chunk: after the chunk's previous
 * piece, and after or before whatever extra names. */
static void piece_begin(tstate *ts, tctx *c, const ospg_dep *extra)
{
    frame *f = top(c);
    ospg_dep d[2] = {{c->chain, OSPG_DEP_INOUT}};
    size_t n = 1;
    if (extra)
        d[n++] = *extra;
    f->node.id = stream_new_id(&ts->st);
    f->node.nkids = 0;
    f->has_scope = 0;
    uint64_t idx = atomic_fetch_add_explicit(&c->ol->nkids, 1,
                                             memory_order_relaxed);
    record_begin(ts, &f->node, &c->ol->L, idx, OSPG_P, OSPG_LOC_NONE, 0,
                 NULL, d, n);
}

static void piece_end(tstate *ts, tctx *c)
{
    end_scope(ts, c, OSPG_LOC_NONE);
    end_node(ts, &top(c)->node, OSPG_LOC_NONE);
}

/* The chunks of this thread's static part: more than one means the part,
 * cut into pieces, is one chain where the schedule had several. */
static uint64_t static_part_chunks(const tctx *c)
{
    uint64_t T = c->region ? atomic_load(&c->region->team) : 1;
    uint64_t n = c->trip, ch = c->first_iters, i = c->index;
    if (!c->have_dispatch || ch == 0 || T == 0 || i * ch >= n)
        return 1;
    return ((n + ch - 1) / ch - i + T - 1) / T;
}

/* Cuts the chunk beginning now into pieces of the loop's ordloop, when
 * ordered says an ordered block, sink or source comes first or another
 * thread already made the ordloop.  Returns 0 when it did, -1 when the
 * chunk is an ordinary one. */
static int pieces_start(tstate *ts, tctx *c, int ordered)
{
    if (!ordloop_get(ts, c, ordered))
        return -1;
    frame *f = push_frame(c);
    if (!f)
        return -1;
    f->is_chunk = 1;
    f->is_piece = 1;
    c->chain = ADDR_CHAIN | ((uint64_t)ts->st.index << 40) |
               (++c->chunk_seq & ((1ull << 40) - 1));
    if (c->loop_static && static_part_chunks(c) > 1)
        atomic_store_explicit(&c->ol->static_chained, 1,
                              memory_order_relaxed);
    piece_begin(ts, c, NULL);
    return 0;
}

/* Ends the ordloops of a barrier phase that ended: their pieces are all
 * begun (every thread reached the barrier), and what was not exact in
 * them is noted on the loop's row. */
static void close_ordloops(tstate *ts, ordloop *ol)
{
    while (ol) {
        ordloop *next = ol->next;
        uint64_t prefix = atomic_load(&ol->max_prefix);
        uint64_t work = atomic_load(&ol->work);
        /* under 1% of the loop's work, the overlap cannot matter */
        if (prefix > work / 100)
            tool_note(ts, ol->loc, TRACE_NOTE_ORDERED_PREFIX, prefix);
        if (atomic_load(&ol->static_chained))
            tool_note(ts, ol->loc, TRACE_NOTE_ORDERED_STATIC, 1);
        cnode L = {ol->L.id, atomic_load(&ol->nkids), ol->L.on, NULL,
                   ol->L.t0};
        end_node(ts, &L, OSPG_LOC_NONE);
        free(ol);
        ol = next;
    }
}

/* An ordered block, a sink or a source inside a chunk: the chunk is cut
 * into pieces from here, if it can still be.  Returns 1 when the chunk is
 * in pieces. */
static int ordered_event(tstate *ts, tctx *c)
{
    if (!c->in_loop)
        return 0;
    if (c->chunk_lazy)
        materialize_chunk(ts, c, 1);
    else if (c->lazy_block)
        materialize_block(ts, c, 1);
    if (in_pieces(c))
        return 1;
    /* The chunk began as an ordinary one (another directive came first):
     * this block stays out of the chain. */
    if (in_chunk(c) && c->region &&
        atomic_load_explicit(&c->region->team, memory_order_relaxed) > 1)
        tool_note(ts, c->loop_loc, TRACE_NOTE_ORDERED_UNCHAINED, 1);
    return 0;
}

static uint64_t iteration_addr(const ompt_dependence_t *deps, int ndeps)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int i = 0; i < ndeps; i++)
        h = (h ^ deps[i].variable.value) * 0xff51afd7ed558ccdull;
    return ADDR_ITER | ((h ^ (h >> 29)) & ((1ull << 62) - 1));
}

/* depend(sink: vec) returned, or depend(source) is posted: the chunk's
 * piece ends here and the next one waits for, or is waited for by, the
 * iteration's marker. */
static void doacross(tstate *ts, tctx *c, const ompt_dependence_t *deps,
                     int ndeps)
{
    int sink = deps[0].dependence_type == ompt_dependence_type_sink;
    int pieces = ordered_event(ts, c);
    frag_close(ts);
    if (!pieces) {
        c->waiting = 0;
        frag_open(ts);
        return;
    }
    piece_end(ts, c);
    ospg_dep d = {iteration_addr(deps, ndeps),
                  sink ? OSPG_DEP_IN : OSPG_DEP_OUT};
    piece_begin(ts, c, &d);
    if (!sink) { /* the marker: nothing inside */
        piece_end(ts, c);
        piece_begin(ts, c, NULL);
    }
    c->waiting = 0;
    frag_open(ts);
}

enum { BEGIN_DONE = 0, BEGIN_PENDING, BEGIN_WRITING };

/* A zeroed task context, from the thread's spares when it has one. */
static tctx *ctx_alloc(tstate *ts)
{
    tctx *t = NULL;
    if (ts) {
        if (!ts->spare) {
            ts->spare = atomic_exchange_explicit(&ts->returned, NULL,
                                                 memory_order_acquire);
            ts->nspare = 0; /* unknown: only the cap needs it */
        }
        if ((t = ts->spare)) {
            ts->spare = t->next_spare;
            if (ts->nspare > 0)
                ts->nspare--;
            memset(t, 0, TCTX_CLEARED);
        }
    }
    if (!t && !(t = calloc(1, sizeof(tctx))))
        return NULL;
    t->home = ts;
    return t;
}

/* Gives a context back to the thread that allocated it. */
static void ctx_free(tctx *t)
{
    tstate *ts = self, *home = t->home;
    free_frames(t);
    if (!home) {
        free(t);
    } else if (home == ts) {
        if (ts->nspare >= CTX_CACHE) {
            free(t);
            return;
        }
        t->next_spare = ts->spare;
        ts->spare = t;
        ts->nspare++;
    } else {
        t->next_spare = atomic_load_explicit(&home->returned,
                                             memory_order_relaxed);
        while (!atomic_compare_exchange_weak_explicit(
            &home->returned, &t->next_spare, t, memory_order_release,
            memory_order_relaxed))
            ;
    }
}

static void task_release(tctx *t)
{
    /* The last holder needs no locked decrement: nothing else can change
     * the count (the acquire orders the other holder's release). */
    if (atomic_load_explicit(&t->refs, memory_order_acquire) == 1 ||
        atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1)
        ctx_free(t);
}

/* Writes a task's begin record once: whoever claims it first. */
static int claim_begin(tctx *t)
{
    int expect = BEGIN_PENDING;
    return atomic_compare_exchange_strong(&t->begin_state, &expect,
                                          BEGIN_WRITING);
}

/* The task starts running: its begin record must be out first (libomp
 * skips the dependences callback for an empty depend list). */
static void ensure_begun(tstate *ts, tctx *t)
{
    if (atomic_load_explicit(&t->begin_state, memory_order_acquire) ==
        BEGIN_DONE)
        return;
    if (claim_begin(t)) {
        write_task_begin(ts, t, NULL, 0, NULL);
        return;
    }
    while (atomic_load_explicit(&t->begin_state, memory_order_acquire) !=
           BEGIN_DONE)
        ; /* the creator is writing it right now */
}

/* A created task's begin record, once its depend items are known. */
static void flush_pending(tstate *ts, const ompt_dependence_t *deps,
                          int ndeps)
{
    tctx *t = ts->pending;
    if (!t)
        return;
    ts->pending = NULL;
    if (claim_begin(t))
        write_task_begin(ts, t, deps, ndeps, NULL);
    task_release(t);
}

/* w: the task's first child, a W-node of its own code (NULL: none). */
static void write_task_begin(tstate *ts, tctx *t,
                             const ompt_dependence_t *deps, int ndeps,
                             const ospg_leaf_work *w)
{
    ospg_dep buf[DEP_BUF];
    ospg_dep *d = buf;
    size_t n = 0;
    if (ndeps > DEP_BUF)
        d = malloc((size_t)ndeps * sizeof(*d));
    for (int i = 0; d && i < ndeps; i++) {
        uint32_t type;
        switch (deps[i].dependence_type) {
        case ompt_dependence_type_in: type = OSPG_DEP_IN; break;
        case ompt_dependence_type_out: type = OSPG_DEP_OUT; break;
        case ompt_dependence_type_inout: type = OSPG_DEP_INOUT; break;
        case ompt_dependence_type_mutexinoutset:
            type = OSPG_DEP_MUTEXINOUTSET;
            break;
        case ompt_dependence_type_inoutset: type = OSPG_DEP_INOUTSET; break;
        case ompt_dependence_type_out_all_memory:
        case ompt_dependence_type_inout_all_memory:
            type = OSPG_DEP_ALL_MEMORY;
            break;
        default: continue; /* doacross source/sink: not a task edge */
        }
        d[n].addr = (uint64_t)(uintptr_t)deps[i].variable.ptr;
        d[n].type = type;
        n++;
    }
    uint64_t group = t->helper ? 0 : t->spawn_group;
    const cnode *owner = group ? &t->spawn_owner : NULL;
    uint32_t loc = t->helper ? OSPG_LOC_NONE : t->base_loc;
    record_begin_as(ts, &t->node, &t->pend_parent, t->pend_idx, t->pend_kind,
                    loc, group, owner, d ? d : buf, d ? n : 0, 0);
    if (mode_online)
        t->node.on = online_begin_work(
            ts->q, online_node(&t->pend_parent), t->pend_idx, t->pend_kind,
            loc, group, owner ? online_node(owner) : NULL, d ? d : buf,
            d ? n : 0, w);
    if (d != buf)
        free(d);
    atomic_store_explicit(&t->begin_state, BEGIN_DONE, memory_order_release);
}

/* Set once a construct the profiler cannot model runs (teams, target):
 * from then on nothing is recorded and no profile is written, rather than
 * a wrong one. */
static atomic_int unsupported;
static char unsupported_what[4480];
static int exec_replaced; /* an earlier image of the process ran OpenMP */

static void mark_unsupported(const char *construct, const void *code)
{
    if (atomic_exchange(&unsupported, 1))
        return;
    char where[4352];
    if (code) {
        stream_where(code, where, sizeof(where));
        snprintf(unsupported_what, sizeof(unsupported_what), "%s at %s",
                 construct, where);
    } else {
        snprintf(unsupported_what, sizeof(unsupported_what), "%s",
                 construct);
    }
}

static ompt_get_task_info_t get_task_info;

/* An untied task may have left this thread with no event: libomp ends
 * a part of it silently (__kmp_task_finish, "partially done") and resumes
 * the task below it, while another thread may run the next part.  Before
 * this thread records anything, the runtime is asked which task it runs
 * now (only while the thread thinks it runs an untied task). */
static void resync_untied(tstate *ts)
{
    ompt_data_t *td = NULL;
    int type = 0;
    atomic_fetch_add_explicit(&runtime_task_queries, 1, memory_order_relaxed);
    if (!get_task_info || !get_task_info(0, &type, &td, NULL, NULL, NULL) ||
        !td)
        return;
    tctx *now = td->ptr;
    if (now && now != ts->ctx)
        ts->ctx = now;
}

/* The start of a callback.  running: the task the callback says this
 * thread runs (NULL: it names none, or one the tool does not follow).
 * Where it names the task the thread already thinks it runs, the runtime
 * is not asked again: that question (a thread-id lookup in the runtime's
 * TLS) was 5% of an untied task program's profiled run. */
static tstate *enter_from(const tctx *running)
{
    tstate *ts = self;
    if (atomic_load_explicit(&unsupported, memory_order_relaxed) ||
        forked_child)
        return NULL;
    if (ts) {
        ts->ev.kind = FEV_NONE; /* until the callback says which */
        ts->requeued = NULL;
    }
    if (ts && ts->pending)
        flush_pending(ts, NULL, 0);
    if (ts && ts->ctx && ts->ctx->untied && running != ts->ctx)
        resync_untied(ts);
    return ts;
}

static tstate *enter(void)
{
    return enter_from(NULL);
}

/* ---- Threads ---- */

static void write_meta(void);

static void on_thread_begin(ompt_thread_t type, ompt_data_t *thread_data)
{
    thread_data->ptr = NULL;
    /* A forked child is never profiled: its threads must not open streams
     * (they would truncate the parent's files of the same numbers). */
    if (forked_child)
        return;
    tstate *ts = thread_state_new();
    if (!ts)
        return;
    ts->ok = stream_thread_open(&ts->st) == 0;
    if (mode_online)
        ts->q = online_thread_open(ts->st.index);
    if (main_ct_early && !main_ct_owner && gettid() == getpid()) {
        ts->ct = main_ct; /* opened before main */
        main_ct_owner = ts;
    } else if (counter_thread_open(&metric, &ts->ct)) {
        atomic_fetch_add(&counter_failures, 1);
    }
    if (sample_period) {
        if (main_sampler.ring && gettid() == getpid()) {
            ts->sm = main_sampler; /* opened before main */
            memset(&main_sampler, 0, sizeof(main_sampler));
        } else if (sampler_open(&ts->sm, sample_period)) {
            memset(&ts->sm, 0, sizeof(ts->sm));
        }
    }
    ts->crash_stack = crash_stack_setup();
    thread_data->ptr = ts;
    self = ts;
    /* The first initial thread sets the run up; the program's own threads
     * that run OpenMP are initial threads too. */
    if (type == ompt_thread_initial && !atomic_exchange(&setup_done, 1)) {
        read_bias = counter_read_bias(&metric, &ts->ct);
        write_meta();
    }
}

static void on_thread_end(ompt_data_t *thread_data)
{
    tstate *ts = thread_data->ptr;
    if (ts && ts->ok && !forked_child)
        trace_writer_flush(ts->st.w);
    if (ts) {
        crash_stack_drop(ts->crash_stack);
        ts->crash_stack = NULL;
        atomic_fetch_add(&samples_lost, ts->sm.lost);
        sampler_close(&ts->sm);
        atomic_fetch_add(&task_rt_total, ts->task_rt);
        atomic_fetch_add(&task_rt_count, ts->task_rt_tasks);
        ts->task_rt = ts->task_rt_tasks = 0;
        atomic_fetch_add(&first_parts_total, ts->first_parts);
        ts->first_parts = 0;
        chunk_handover(ts);
    }
}

/* ---- Parallel regions and implicit tasks ---- */

/* Where the main thread's serial code before the runtime ended: its
 * entry into the fork that started the runtime when the wrapper saw it,
 * else the tool's start (the runtime's set-up before that included). */
static uint64_t main_runtime_entry(void)
{
    return cpu_runtime_entry ? cpu_runtime_entry
           : cpu_api_entry   ? cpu_api_entry
                             : cpu_before_tool;
}

/* The main thread's first fragment runs from the program's start.  When
 * its first construct is the very call that started the runtime (or is a
 * few instructions after it), the
 * fragment's end since the tool started is the runtime's initialization
 * (topology, threads, the tool's own set-up), never program code: it is
 * left out, the fragment ending where the runtime was entered (as near as
 * can be seen: when the tool started). */
static void start_work(tstate *ts, tctx *c, const void *code)
{
    /* only while the fragment opened at the initial task's begin is the
     * one still open (an API call such as omp_control_tool may have
     * started the runtime and cut it already) */
    if (c != &initial_ctx || !main_first_event)
        return;
    main_first_event = 0;
    if (ts->frag_opens != 1)
        return;
    /* The same call, or one a few instructions before it (clang calls
     * __kmpc_push_num_threads just before __kmpc_fork_call): no more than
     * argument set-up of the program's ran in between. */
    uintptr_t a = (uintptr_t)code, b = (uintptr_t)init_site;
    int same_call = cpu_runtime_entry ||
                    (code && init_site && a >= b && a - b <= INIT_SITE_SLACK);
    uint64_t entry = main_runtime_entry();
    if (same_call && ts->in_frag &&
        main_counts_from_origin() && entry > cpu_origin) {
        ts->frag_start = counter_read(&metric, &ts->ct) -
                         (entry - cpu_origin);
        ts->frag_unread = 0;
    }
    /* the samples since the fragment began are the runtime's start-up
     * (the program's own were set apart when it entered the runtime) */
    if (same_call && ts->in_frag && ts->sm.ring)
        sampler_drain(&ts->sm, drop_sample, NULL);
}

static void on_parallel_begin(ompt_data_t *enc_data, const ompt_frame_t *frame,
                              ompt_data_t *parallel_data, unsigned requested,
                              int flags, const void *code)
{
    (void)frame;
    parallel_data->ptr = NULL;
    const void *ident = user_ident(code);
    code = user_code(code);
    if (flags & ompt_parallel_league) {
        mark_unsupported("teams", code);
        return;
    }
    tstate *ts = enter();
    tctx *c = enc_data ? enc_data->ptr : NULL;
    if (!ts || !c)
        return;
    start_work(ts, c, code);
    ev_code(ts, DIR_PARALLEL, 0, code, ident);
    frag_close(ts);
    region *r = calloc(1, sizeof(*r));
    if (!r)
        return;
    r->share_cap = requested < SHARES_MAX ? requested : SHARES_MAX;
    r->share_phase = calloc(2 * (size_t)(r->share_cap ? r->share_cap : 1),
                            sizeof(*r->share_phase));
    if (!r->share_phase)
        r->share_cap = 0;
    r->share_begun = r->share_phase + r->share_cap;
    r->uid = atomic_fetch_add(&region_uid, 1) + 1;
    r->chain = context_of(ts, c, code, ident, DIR_PARALLEL);
    r->code = code;
    r->loc = stream_loc_ctx(&ts->st, code, ident, DIR_PARALLEL, r->chain);
    r->team = requested;
    r->parent = c;
    r->path = c->path;
    cnode *p = cur(c);
    begin_node(ts, &r->par, p, child_idx(p), OSPG_S, r->loc, 0, NULL);
    begin_node(ts, &r->phase, &r->par, r->par.nkids++, OSPG_S, OSPG_LOC_NONE,
               0, NULL);
    c->waiting = 1;
    c->encountered = r;
    parallel_data->ptr = r;
}

/* A share of phase that thread i never claims: an empty one stands in,
 * so that the phase has all its children. */
static void fill_share(tstate *ts, cnode *phase, unsigned i)
{
    cnode share = {0};
    begin_node(ts, &share, phase, i, OSPG_P, OSPG_LOC_NONE, 0, NULL);
    end_node(ts, &share, OSPG_LOC_NONE);
}

/* The shares of the region's last phase that threads never claimed: with
 * cancellation, a thread can leave for the region's end while the others
 * pass a barrier (libomp's cancellable barrier, as GCC's code calls it),
 * so it begins no share in the phases after. */
static void fill_skipped_shares(tstate *ts, region *r)
{
    unsigned team = atomic_load(&r->team);
    for (unsigned i = 0; i < team && i < r->share_cap; i++)
        if (atomic_load(&r->share_phase[i]) != r->phase_no + 1)
            fill_share(ts, &r->phase, i);
}

static void on_parallel_end(ompt_data_t *parallel_data, ompt_data_t *enc_data,
                            int flags, const void *code)
{
    (void)parallel_data;
    (void)flags;
    (void)code;
    tstate *ts = enter();
    tctx *enc = enc_data ? enc_data->ptr : NULL;
    region *r = enc ? enc->encountered : NULL;
    if (!ts || !r)
        return;
    enc->encountered = NULL;
    ev_loc(ts, DIR_PARALLEL, 1, r->loc);
    frag_close(ts);
    fill_skipped_shares(ts, r);
    r->phase.nkids = r->team + r->phase_extra;
    close_ordloops(ts, r->ordloops);
    end_node(ts, &r->phase, OSPG_LOC_NONE);
    end_node(ts, &r->par, OSPG_LOC_NONE);
    tctx *c = r->parent;
    c->waiting = 0;
    ts->ctx = c;
    free(r->share_phase);
    free(r);
    frag_open(ts);
}

/* A thread the program created starts OpenMP: its initial task is an
 * extra root, a P-child of the program root from this moment on (its
 * joining the main thread later is not seen). */
static void root_begin(tstate *ts, ompt_data_t *task_data)
{
    tctx *c = calloc(1, sizeof(*c));
    task_data->ptr = c;
    if (!c)
        return;
    c->kind = CTX_INITIAL;
    c->base_loc = OSPG_LOC_PROGRAM;
    cnode root = {TRACE_ROOT_ID, 0, NULL, NULL, 0};
    pthread_mutex_lock(&roots_lock);
    if (atomic_load(&main_pending_idx) == UINT64_MAX)
        atomic_store(&main_pending_idx, child_idx(&root));
    pthread_mutex_unlock(&roots_lock);
    begin_node(ts, &c->node, &root, child_idx(&root), OSPG_P, OSPG_LOC_NONE,
               0, NULL);
    pthread_mutex_lock(&roots_lock);
    c->next_root = extra_roots;
    extra_roots = c;
    extra_root_count++;
    pthread_mutex_unlock(&roots_lock);
    ts->ctx = c;
    if (fork_registers) { /* runtime code up to the region's begin */
        fork_registers = 0;
        return;
    }
    ev_loc(ts, FEV_THREAD, 0, 0);
    frag_open(ts);
}

/* Closes an extra root as it stands; roots_lock held. */
static void root_close(tstate *ts, tctx *c)
{
    end_frames(ts, c);
    end_scope(ts, c, OSPG_LOC_NONE);
    end_node(ts, &c->node, OSPG_LOC_NONE);
    for (tctx **p = &extra_roots; *p; p = &(*p)->next_root)
        if (*p == c) {
            *p = c->next_root;
            break;
        }
}

static void root_end(tstate *ts, ompt_data_t *task_data)
{
    tctx *c = task_data->ptr;
    if (!c || c == &initial_ctx || c->kind != CTX_INITIAL)
        return;
    ev_loc(ts, FEV_THREAD, 1, 0);
    frag_close(ts);
    pthread_mutex_lock(&roots_lock);
    root_close(ts, c);
    pthread_mutex_unlock(&roots_lock);
    if (ts->ctx == c)
        ts->ctx = NULL;
    task_data->ptr = NULL;
    free(c);
}

static void end_share(tstate *ts, tctx *c)
{
    if (!c->share_open)
        return;
    /* A taskgroup can hold a barrier (taskgroup { omp for }): it ends with
     * this share and goes on in the next one. */
    c->nreopen = 0;
    for (int i = 0; i < c->nfr && c->nreopen < REOPEN_MAX; i++)
        if (!c->fr[i].is_chunk && !c->fr[i].is_loopscope) {
            c->reopen[c->nreopen].code = c->fr[i].code;
            c->reopen[c->nreopen].taskloop = c->fr[i].taskloop;
            c->nreopen++;
        }
    end_frames(ts, c);
    end_scope(ts, c, OSPG_LOC_NONE);
    end_node(ts, &c->node, OSPG_LOC_NONE);
    c->share_open = 0;
}

static void on_implicit_task(ompt_scope_endpoint_t endpoint,
                             ompt_data_t *parallel_data,
                             ompt_data_t *task_data, unsigned actual,
                             unsigned index, int flags)
{
    tstate *ts = enter();
    if (!ts)
        return;
    if (flags & ompt_task_initial) {
        if (endpoint == ompt_scope_begin && gettid() == getpid()) {
            pthread_mutex_lock(&roots_lock);
            main_began = 1;
            pthread_mutex_unlock(&roots_lock);
            initial_ctx.kind = CTX_INITIAL;
            initial_ctx.node.id = TRACE_ROOT_ID;
            initial_ctx.base_loc = OSPG_LOC_PROGRAM;
            task_data->ptr = &initial_ctx;
            ts->ctx = &initial_ctx;
            /* from where the program began: its samples up to the
             * runtime's start, where they were set apart */
            ev_loc(ts, FEV_PROGRAM, 0, 0);
            frag_begin(ts, !main_pre_taken);
            ts->carry_pre = main_pre_taken;
            /* libomp starts the tool at its first construct: the serial
             * code before it is still the program's work, the runtime's
             * and the tool's start-up since then is not. */
            uint64_t entry = main_runtime_entry();
            if (main_counts_from_origin() &&
                entry > cpu_origin)
                ts->frag_start -= entry - cpu_origin;
        } else if (endpoint == ompt_scope_begin) {
            root_begin(ts, task_data);
        } else {
            root_end(ts, task_data);
        }
        return;
    }
    if (endpoint == ompt_scope_begin) {
        region *r = parallel_data ? parallel_data->ptr : NULL;
        task_data->ptr = NULL;
        if (!r)
            return;
        tctx *c = ctx_alloc(ts);
        if (!c)
            return;
        c->kind = CTX_IMPLICIT;
        c->region = r;
        c->path = c->base_path = r->path;
        c->ctx_chain = r->chain;
        c->ctx_code = r->code;
        c->index = index;
        c->base_loc = r->loc;
        atomic_store(&r->team, actual);
        spin_acquire(&r->lock);
        c->phase_no = r->phase_no;
        cnode phase = r->phase;
        if (index < r->share_cap)
            atomic_store(&r->share_phase[index], c->phase_no + 1);
        spin_release(&r->lock);
        begin_node(ts, &c->node, &phase, index, OSPG_P, OSPG_LOC_NONE, 0,
                   NULL);
        if (index < r->share_cap)
            atomic_store(&r->share_begun[index], c->phase_no + 1);
        c->share_open = 1;
        task_data->ptr = c;
        ts->ctx = c;
        frag_open(ts);
    } else {
        tctx *c = task_data->ptr;
        if (!c || c->kind != CTX_IMPLICIT)
            return;
        frag_close(ts);
        end_share(ts, c);
        close_regions(c);
        if (ts->ctx == c)
            ts->ctx = NULL;
        task_data->ptr = NULL;
        ctx_free(c);
    }
}

/* ---- Synchronization ---- */

static int is_barrier(ompt_sync_region_t kind)
{
    return kind == ompt_sync_region_barrier_explicit ||
           kind == ompt_sync_region_barrier_implementation ||
           kind == ompt_sync_region_barrier_implicit_workshare ||
           kind == ompt_sync_region_barrier_implicit_parallel ||
           (int)kind == 1 || (int)kind == 2;
}

/* ---- The barrier cost ----
 *
 * What a barrier costs beyond waiting for the last thread: from the last
 * thread's arrival to the release of the team's primary thread (whose
 * end event comes at once; a worker's may come only when it is reused),
 * on CLOCK_MONOTONIC.  Barriers inside which a task ran are left out:
 * their release waited for the task too. */
#define BAR_COUNT_BITS 24

/* A team member arrives at the barrier that ends its phase ph. */
static void barrier_arrive(region *r, uint64_t ph)
{
    uint64_t team = atomic_load_explicit(&r->team, memory_order_relaxed);
    if (team < 2 || team >= (1u << BAR_COUNT_BITS))
        return;
    uint64_t seen = atomic_load_explicit(&r->bar_arrivals,
                                         memory_order_relaxed);
    uint64_t next;
    do {
        next = seen >> BAR_COUNT_BITS == ph ? seen + 1
                                            : ph << BAR_COUNT_BITS | 1;
    } while (!atomic_compare_exchange_weak_explicit(
        &r->bar_arrivals, &seen, next, memory_order_relaxed,
        memory_order_relaxed));
    if ((next & ((1u << BAR_COUNT_BITS) - 1)) != team)
        return;
    atomic_store_explicit(&r->bar_last_ns, grain_clock(),
                          memory_order_relaxed);
    atomic_store_explicit(&r->bar_last_phase, ph + 1, memory_order_release);
}

/* The primary thread leaves the barrier that ended phase ph. */
static void barrier_sample(region *r, uint64_t ph)
{
    if (atomic_load_explicit(&r->bar_last_phase, memory_order_acquire) !=
            ph + 1 ||
        atomic_load_explicit(&r->bar_task_phase, memory_order_relaxed) ==
            ph + 1)
        return;
    uint64_t now = grain_clock();
    uint64_t last = atomic_load_explicit(&r->bar_last_ns,
                                         memory_order_relaxed);
    if (now < last)
        return;
    atomic_fetch_add_explicit(&barrier_rt_total, now - last,
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&barrier_rt_count, 1, memory_order_relaxed);
}

/* A task starts while the implicit task below it waits at a barrier. */
static void barrier_ran_task(const tctx *below)
{
    region *r = below->region;
    uint64_t mark = below->phase_no + 1;
    if (r && atomic_load_explicit(&r->bar_task_phase,
                                  memory_order_relaxed) != mark)
        atomic_store_explicit(&r->bar_task_phase, mark, memory_order_relaxed);
}

/* The first thread out of a barrier ends the phase before it, which
 * needs every share of the phase begun.  Without cancellation all are:
 * every thread began its share before it reached this barrier.  A
 * cancelled barrier lets a thread out early: a thread still leaving the
 * barrier before may have claimed its share of the phase and not begun
 * it yet (waited for), or not claimed it (it will claim the next phase's
 * instead: an empty share stands in).  Called under the region's lock;
 * returns the threads to fill, in *fill (malloc'd; NULL: none). */
static unsigned unclaimed_shares(region *r, uint64_t ended_no,
                                 unsigned **fill)
{
    unsigned n = 0, cap = 0, team = atomic_load(&r->team);
    *fill = NULL;
    for (unsigned i = 0; i < team && i < r->share_cap; i++) {
        if (atomic_load(&r->share_phase[i]) == ended_no + 1)
            continue;
        if (n == cap) {
            unsigned *f = realloc(*fill, (cap ? 2 * cap : 8) * sizeof(*f));
            if (!f)
                break; /* its phase stays incomplete */
            *fill = f;
            cap = cap ? 2 * cap : 8;
        }
        (*fill)[n++] = i;
    }
    return n;
}

/* Waits until every thread that claimed a share of the phase ended_no
 * (all but fill's) has begun it. */
static void await_shares(region *r, uint64_t ended_no, const unsigned *fill,
                         unsigned nfill)
{
    unsigned team = atomic_load(&r->team), k = 0;
    for (unsigned i = 0; i < team && i < r->share_cap; i++) {
        if (k < nfill && fill[k] == i) {
            k++;
            continue;
        }
        for (unsigned spins = 0;
             atomic_load(&r->share_begun[i]) < ended_no + 1; spins++)
            if (spins > 64)
                sched_yield();
    }
}

static void barrier_leave(tstate *ts, tctx *c)
{
    region *r = c->region;
    cnode ended = {0};
    uint64_t phase_idx = 0, ended_no = 0;
    unsigned *fill = NULL, nfill = 0;
    ordloop *ols = NULL;
    spin_acquire(&r->lock);
    int first = r->phase_no == c->phase_no;
    if (first) {
        /* First thread out: every thread has begun its share (or claimed
         * it, or will claim none: unclaimed_shares), and the pieces of
         * the phase's ordered loops. */
        ended_no = r->phase_no;
        nfill = unclaimed_shares(r, ended_no, &fill);
        ended = r->phase;
        ended.nkids = r->team + r->phase_extra;
        ols = r->ordloops;
        r->ordloops = NULL;
        r->phase_extra = 0;
        atomic_store_explicit(&r->ordloops_seen, NULL, memory_order_release);
        r->phase.id = stream_new_id(&ts->st);
        r->phase.nkids = 0;
        phase_idx = r->par.nkids++;
        r->phase_no++;
        if (mode_online) /* before any share can name it */
            online_begin_node(ts, &r->phase, &r->par, phase_idx, OSPG_S,
                              OSPG_LOC_NONE, 0, NULL, NULL, 0);
    }
    c->phase_no = r->phase_no;
    cnode phase = r->phase;
    if (c->index < r->share_cap)
        atomic_store(&r->share_phase[c->index], c->phase_no + 1);
    spin_release(&r->lock);
    c->share_work = 0;
    /* The trace's record is written outside the lock (a stream names
     * the new phase before its BEGIN only as the analyzer allows). */
    if (first) {
        close_ordloops(ts, ols);
        await_shares(r, ended_no, fill, nfill);
        for (unsigned k = 0; k < nfill; k++)
            fill_share(ts, &ended, fill[k]);
        free(fill);
        end_node(ts, &ended, OSPG_LOC_NONE);
        record_begin_as(ts, &phase, &r->par, phase_idx, OSPG_S,
                        OSPG_LOC_NONE, 0, NULL, NULL, 0, 0);
    }
    begin_node(ts, &c->node, &phase, c->index, OSPG_P, OSPG_LOC_NONE, 0,
               NULL);
    if (c->index < r->share_cap)
        atomic_store(&r->share_begun[c->index], c->phase_no + 1);
    c->share_open = 1;
    for (int i = 0; i < c->nreopen; i++) {
        frame *f = push_frame(c);
        if (!f)
            break;
        cnode *p = below_top(c);
        f->code = c->reopen[i].code;
        f->taskloop = c->reopen[i].taskloop;
        begin_node(ts, &f->node, p, child_idx(p), OSPG_S, OSPG_LOC_NONE, 0,
                   NULL);
    }
    c->nreopen = 0;
}

static void on_sync_region(ompt_sync_region_t kind,
                           ompt_scope_endpoint_t endpoint,
                           ompt_data_t *parallel_data, ompt_data_t *task_data,
                           const void *code)
{
    (void)parallel_data;
    const void *ident = user_ident(code); /* a taskwait is wrapped */
    code = user_code(code);
    tstate *ts = enter_from(task_data ? task_data->ptr : NULL);
    tctx *c = task_data ? task_data->ptr : NULL;
    if (!ts || !c)
        return;
    if (is_barrier(kind)) {
        if (endpoint == ompt_scope_begin) {
            frag_close_held(ts);
            if (c->kind == CTX_IMPLICIT)
                end_share(ts, c);
            else
                end_scope(ts, c, OSPG_LOC_NONE);
            held_release(ts);
            c->waiting = 1;
            c->at_barrier = 1;
            if (c->kind == CTX_IMPLICIT && c->region)
                barrier_arrive(c->region, c->phase_no);
        } else {
            c->waiting = 0;
            c->at_barrier = 0;
            if (c->kind == CTX_IMPLICIT && c->region && c->index == 0)
                barrier_sample(c->region, c->phase_no);
            if (kind == ompt_sync_region_barrier_implicit_parallel)
                return;
            if (c->kind == CTX_IMPLICIT && c->region)
                barrier_leave(ts, c);
            ts->ctx = c;
            frag_open(ts);
        }
        return;
    }
    if (kind == ompt_sync_region_taskwait) {
        /* A taskwait that follows no child task (since the last one,
         * outside any container) joins nothing: no node, and the task's
         * fragment goes on across it.  Only inside the runtime's wrapper,
         * which leaves the call's time out of the fragment all the same,
         * and which still does if a child the scopes missed holds it up
         * (the thread then runs tasks there as in any wait).  A leaf task
         * of a recursion that ends every task with a taskwait saves two
         * fragment boundaries, a location lookup and, offline, two clock
         * reads. */
        if (endpoint == ompt_scope_begin && c->in_runtime && !c->nfr &&
            !c->has_scope && !c->waiting) {
            c->idle_taskwait = 1;
            return;
        }
        if (endpoint != ompt_scope_begin && c->idle_taskwait) {
            c->idle_taskwait = 0;
            return;
        }
        ev_code(ts, DIR_TASKWAIT, endpoint != ompt_scope_begin, code, ident);
        if (endpoint == ompt_scope_begin) {
            frag_close_held(ts);
            uint32_t loc = construct_loc(ts, c, code, ident, DIR_TASKWAIT);
            if (c->nfr && !taskwait_splits_chunk(ts, c, loc))
                note_outer_tasks(ts, c, loc);
            taskwait_scope(ts, c, loc);
            held_release(ts);
            c->waiting = 1;
            wait_begin(c);
        } else {
            c->waiting = 0;
            wait_end(ts, c);
            ts->ctx = c;
            frag_open(ts);
        }
        return;
    }
    if (kind == ompt_sync_region_taskgroup) {
        /* libomp 19 reports a taskgroup at its start (begin) and after its
         * wait (end): it is a container S-node of its own.  The one of a
         * reduction(task) clause is the runtime's own call, at its own
         * address: it stands at the clause's construct. */
        const void *red_site = tool_taskred_site();
        if (red_site)
            code = red_site;
        ev_code(ts, DIR_TASKGROUP, endpoint != ompt_scope_begin, code, NULL);
        if (endpoint == ompt_scope_begin)
            frag_close(ts);
        else
            frag_close_held(ts);
        if (endpoint == ompt_scope_begin) {
            frame *f = push_frame(c);
            if (f) {
                cnode *p = below_cur(c);
                f->code = code;
                f->fresh = 1;
                begin_node(ts, &f->node, p, child_idx(p), OSPG_S,
                           OSPG_LOC_NONE, 0, NULL);
            }
        } else if (in_taskgroup(c)) {
            frame *f = top(c);
            end_scope(ts, c, OSPG_LOC_NONE);
            end_node(ts, &f->node,
                     construct_loc(ts, c, f->code, NULL,
                                   f->taskloop ? DIR_TASKLOOP
                                               : DIR_TASKGROUP));
            c->nfr--;
        }
        held_release(ts);
        c->waiting = 0;
        wait_end(ts, c);
        ts->ctx = c;
        frag_open(ts);
    }
}

/* The wait at a taskgroup's end is reported only as a sync-region wait;
 * the other waits are inside sync_region begin/end already. */
static void on_sync_region_wait(ompt_sync_region_t kind,
                                ompt_scope_endpoint_t endpoint,
                                ompt_data_t *parallel_data,
                                ompt_data_t *task_data, const void *code)
{
    (void)parallel_data;
    if (kind != ompt_sync_region_taskgroup || endpoint != ompt_scope_begin)
        return;
    tstate *ts = enter_from(task_data ? task_data->ptr : NULL);
    tctx *c = task_data ? task_data->ptr : NULL;
    if (!ts || !c)
        return;
    ev_code(ts, DIR_TASKGROUP, 1, code, NULL);
    frag_close(ts);
    c->waiting = 1; /* until the taskgroup's end (on_sync_region) */
    wait_begin(c);
}

static int mutex_dir(ompt_mutex_t kind)
{
    switch (kind) {
    case ompt_mutex_critical: return DIR_CRITICAL;
    case ompt_mutex_ordered: return DIR_ORDERED;
    default: return DIR_LOCK;
    }
}

static void on_mutex_acquire(ompt_mutex_t kind, unsigned hint, unsigned impl,
                             ompt_wait_id_t wait_id, const void *code)
{
    (void)hint;
    (void)impl;
    (void)wait_id;
    tstate *ts = enter();
    /* A test lock does not wait, and may fail: no acquired follows. */
    if (!ts || !ts->ctx || kind == ompt_mutex_atomic ||
        kind == ompt_mutex_test_lock || kind == ompt_mutex_test_nest_lock)
        return;
    tctx *c = ts->ctx;
    int pieces = kind == ompt_mutex_ordered && ordered_event(ts, c);
    ev_code(ts, mutex_dir(kind), 0, code, NULL);
    frag_close(ts);
    if (pieces)
        piece_end(ts, c);
    c->waiting = 1;
}

/* A nest lock taken again by its owner: libomp reports nest_lock begin
 * instead of acquired (and end for an inner release). */
static void on_nest_lock(ompt_scope_endpoint_t endpoint,
                         ompt_wait_id_t wait_id, const void *code)
{
    (void)wait_id;
    tstate *ts = enter();
    if (!ts || !ts->ctx || endpoint != ompt_scope_begin ||
        !ts->ctx->waiting)
        return;
    ts->ctx->waiting = 0;
    ev_code(ts, DIR_LOCK, 0, code, NULL);
    frag_open(ts);
}

static void on_mutex_acquired(ompt_mutex_t kind, ompt_wait_id_t wait_id,
                              const void *code)
{
    (void)wait_id;
    tstate *ts = enter();
    if (!ts || !ts->ctx || kind == ompt_mutex_atomic)
        return;
    ev_code(ts, mutex_dir(kind), 0, code, NULL);
    if (kind == ompt_mutex_test_lock || kind == ompt_mutex_test_nest_lock)
        frag_close(ts); /* no acquire closed it: the test succeeded */
    tctx *c = ts->ctx;
    c->waiting = 0;
    /* Ordered blocks run one after the other, in iteration order. */
    if (kind == ompt_mutex_ordered && in_pieces(c)) {
        ospg_dep d = {ADDR_ORDERED, OSPG_DEP_INOUT};
        piece_begin(ts, c, &d);
    }
    push_loc(c, construct_loc(ts, c, code, NULL, mutex_dir(kind)));
    frag_open(ts);
}

static void on_mutex_released(ompt_mutex_t kind, ompt_wait_id_t wait_id,
                              const void *code)
{
    (void)wait_id;
    tstate *ts = enter();
    if (!ts || !ts->ctx || kind == ompt_mutex_atomic)
        return;
    tctx *c = ts->ctx;
    ev_code(ts, mutex_dir(kind), 1, code, NULL);
    frag_close(ts);
    pop_loc(c);
    if (kind == ompt_mutex_ordered && in_pieces(c)) {
        piece_end(ts, c);
        piece_begin(ts, c, NULL);
    }
    frag_open(ts);
}

/* ---- Worksharing ---- */

#define CALL_SITE_FRAMES 16

/* The return address into the program's code of the runtime call that
 * reported code, an address inside the runtime: libomp reports a taskloop
 * without a taskgroup (nogroup) at an address of its own.  The stack is
 * walked (a few microseconds) and the first frame past the runtime's
 * frames taken; code itself when none is found.  When the call came
 * through the preloaded tool's wrapper, that frame is the wrapper's, which
 * stands for the call site it recorded (tool_call_site). */
static const void *user_call_site(const void *code)
{
    Dl_info rt;
    void *frames[CALL_SITE_FRAMES];
    if (!code || !dladdr(code, &rt) || !rt.dli_fbase)
        return code;
    int n = backtrace(frames, CALL_SITE_FRAMES);
    int seen_runtime = 0;
    for (int i = 1; i < n; i++) {
        Dl_info fi;
        int in_rt = dladdr(frames[i], &fi) && fi.dli_fbase == rt.dli_fbase;
        if (in_rt)
            seen_runtime = 1;
        else if (seen_runtime)
            return tool_call_site(frames[i]);
    }
    return code;
}

static void loop_begin(tstate *ts, tctx *c, const void *code,
                       const void *ident, int dir, int one_chunk,
                       uint64_t count)
{
    /* A taskwait scope open here stays open: tasks created before the
     * loop go on in parallel with its chunks (begin_chunk_node). */
    c->ws_seq++;
    uint64_t uid = c->region ? c->region->uid : 0;
    c->loop_group = (uid << 24) | (c->ws_seq & 0xffffff);
    if (c->region) {
        c->loop_owner = c->region->phase;
    } else {
        /* An orphaned loop (a team of one): an S-node of its own owns the
         * group, so that the group is freed when the loop is done. */
        frame *f = push_frame(c);
        if (f) {
            cnode *p = below_cur(c);
            f->is_loopscope = 1;
            begin_node(ts, &f->node, p, child_idx(p), OSPG_S, OSPG_LOC_NONE, 0,
                       NULL);
        }
        cnode *o = ins(c); /* the frame, or the task if it failed */
        if (o->lazy)
            lazy_flush(ts, o);
        c->loop_owner = *o;
    }
    c->loop_loc = construct_loc(ts, c, code, ident, dir);
    /* In a team of one libomp reports no chunks: the loop looks serial. */
    if (count > 1 && (!c->region || atomic_load_explicit(
                                        &c->region->team,
                                        memory_order_relaxed) <= 1))
        note_once(ts, c->loop_loc, TRACE_NOTE_ONE_THREAD_LOOP);
    c->loop_static = one_chunk;
    c->in_loop = 1;
    c->ol = NULL;
    c->chunk_seq = 0;
    c->loop_prefix = c->share_work;
    c->have_dispatch = 0;
    c->first_iters = 0;
    if (dir == DIR_LOOP && one_chunk) {
        c->lazy_block = 1;
        c->chunk_t0 = mode_offline ? grain_clock() : 0;
        push_loc(c, c->loop_loc);
    } else if (one_chunk) {
        begin_chunk(ts, c);
    }
}

static void loop_end(tstate *ts, tctx *c)
{
    if (!c->in_loop)
        return;
    /* before the barrier, so before the program's end is written */
    if (ts->chunk_grains)
        chunk_handover(ts);
    if (c->lazy_block) {
        c->lazy_block = 0;
        emit_static_chunks(ts, c, frag_take(ts));
        pop_loc(c);
    } else {
        frag_close(ts);
        end_chunk(ts, c);
    }
    if (c->nfr && top(c)->is_loopscope) {
        end_scope(ts, c, OSPG_LOC_NONE);
        end_node(ts, &top(c)->node, OSPG_LOC_NONE);
        c->nfr--;
    }
    c->in_loop = 0;
    c->ol = NULL;
}

/* The directive kind of a worksharing event. */
static int work_dir(ompt_work_t type)
{
    switch ((int)type) {
    case ompt_work_sections: return DIR_SECTIONS;
    case ompt_work_single_executor:
    case ompt_work_single_other: return DIR_SINGLE;
    case ompt_work_taskloop: return DIR_TASKLOOP;
    default: return DIR_LOOP;
    }
}

static void on_work(ompt_work_t type, ompt_scope_endpoint_t endpoint,
                    ompt_data_t *parallel_data, ompt_data_t *task_data,
                    uint64_t count, const void *code)
{
    (void)parallel_data;
    tctx *c = task_data ? task_data->ptr : NULL;
    /* GCC merges a parallel region whose body is one loop into one call
     * (GOMP_parallel_loop_*): libomp passes its address to the primary
     * thread's loop events only, and none to the others'.  That call is
     * the region's: its site names the loop for every thread. */
    if (!code && c && c->kind == CTX_IMPLICIT && c->region)
        code = c->region->code;
    const void *ident = user_ident(code);
    code = user_code(code);
    tstate *ts = enter_from(c);
    if (!ts || !c)
        return;
    int begin = endpoint == ompt_scope_begin;
    /* A taskloop's own taskgroup began just before it (nogroup: none). */
    int tg_fresh = in_taskgroup(c) && top(c)->fresh;
    ev_code(ts, work_dir(type), !begin, tg_fresh ? top(c)->code : code,
            tg_fresh ? NULL : ident);
    /* A held-back static part takes its last fragment itself; a dynamic
     * loop's last chunk may be a leaf. */
    if (begin || (!c->lazy_block && !(c->in_loop && chunk_leaf(ts, c))))
        frag_close(ts);
    if (begin && type == ompt_work_loop_static)
        c->trip = count;
    switch ((int)type) {
    case ompt_work_loop_static:
    case ompt_work_sections:
        if (begin)
            loop_begin(ts, c, code, ident,
                       type == ompt_work_sections ? DIR_SECTIONS : DIR_LOOP,
                       1, count);
        else
            loop_end(ts, c);
        break;
    case ompt_work_loop:
    case ompt_work_loop_dynamic:
    case ompt_work_loop_guided:
    case ompt_work_loop_other:
        if (begin)
            loop_begin(ts, c, code, ident, DIR_LOOP, 0, count);
        else
            loop_end(ts, c);
        break;
    case ompt_work_single_executor:
        if (begin)
            push_loc(c, construct_loc(ts, c, code, NULL, DIR_SINGLE));
        else
            pop_loc(c);
        break;
    case ompt_work_taskloop:
        /* libomp gives the taskloop an address of its own; the implicit
         * taskgroup around it has the user's. */
        c->taskloop_loc = 0;
        c->taskloop_group = 0;
        if (begin && tg_fresh) {
            top(c)->taskloop = 1;
            c->taskloop_code = top(c)->code;
            c->taskloop_loc =
                construct_loc(ts, c, top(c)->code, NULL, DIR_TASKLOOP);
        } else if (begin) {
            c->taskloop_code = user_call_site(code);
            c->taskloop_loc = construct_loc(ts, c, c->taskloop_code, NULL,
                                            DIR_TASKLOOP);
            /* No taskgroup holds the loop's tasks: a group makes them
             * one instance, owned by the scope they are created in. */
            open_scope(ts, c);
            c->taskloop_group = new_group_id();
            c->taskloop_owner = *scope_node(c);
        }
        break;
    default:
        break;
    }
    frag_open(ts);
}

static void on_dispatch(ompt_data_t *parallel_data, ompt_data_t *task_data,
                        ompt_dispatch_t kind, ompt_data_t instance)
{
    (void)parallel_data;
    tstate *ts = enter_from(task_data ? task_data->ptr : NULL);
    tctx *c = task_data ? task_data->ptr : NULL;
    if (!ts || !c || kind != ompt_dispatch_ws_loop_chunk || !c->in_loop)
        return;
    if (c->loop_static) {
        /* Only a static loop's first chunk per thread is reported. */
        const ompt_dispatch_chunk_t *chunk = instance.ptr;
        if (!c->have_dispatch && chunk) {
            c->have_dispatch = 1;
            c->first_iters = chunk->iterations;
        }
        return;
    }
    /* The runtime's time handing out this chunk up to here (its call
     * began at frag_cut); the rest, after this callback, the wrapper
     * measures (offline: only the burdened span uses it). */
    if (mode_offline && ts->frag_cut) {
        uint64_t now = counter_read(&metric, &ts->ct);
        if (now > ts->frag_cut)
            ts->chunk_rt += now - ts->frag_cut;
    }
    if (!chunk_leaf(ts, c))
        frag_close(ts);
    begin_chunk(ts, c);
    frag_open(ts);
}

static void on_masked(ompt_scope_endpoint_t endpoint,
                      ompt_data_t *parallel_data, ompt_data_t *task_data,
                      const void *code)
{
    (void)parallel_data;
    tstate *ts = enter_from(task_data ? task_data->ptr : NULL);
    tctx *c = task_data ? task_data->ptr : NULL;
    if (!ts || !c)
        return;
    ev_code(ts, DIR_MASKED, endpoint != ompt_scope_begin, code, NULL);
    frag_close(ts);
    if (endpoint == ompt_scope_begin)
        push_loc(c, construct_loc(ts, c, code, NULL, DIR_MASKED));
    else
        pop_loc(c);
    frag_open(ts);
}

/* ---- Tasks ---- */

static void on_task_create(ompt_data_t *enc_data, const ompt_frame_t *frame,
                           ompt_data_t *new_data, int flags, int has_deps,
                           const void *code)
{
    (void)frame;
    const void *ident = user_ident(code);
    code = user_code(code);
    tstate *ts = enter_from(enc_data ? enc_data->ptr : NULL);
    new_data->ptr = NULL;
    tctx *c = enc_data ? enc_data->ptr : NULL;
    if (!ts || !c || !(flags & (ompt_task_explicit | ompt_task_taskwait)))
        return;
    /* libomp's taskloop split (__kmp_taskloop_recur) runs helper tasks
     * that create the rest of the loop's tasks while naming the taskloop's
     * encountering task as their creator, from whatever thread runs the
     * helper.  The task really running here created them: they go under
     * the helper, which is itself a task of the taskloop, so every task of
     * the loop stays logically parallel with the others and joins at the
     * taskloop's taskgroup. */
    tctx *running = ts->ctx;
    uint32_t spawn_loc = 0;
    if (running && running != c && running->kind == CTX_EXPLICIT &&
        running->spawn_loc) {
        c = running;
        spawn_loc = running->spawn_loc;
        c->helper = 1; /* before its begin is written, at its first child */
    }
    if (flags & ompt_task_taskwait)
        ev_code(ts, DIR_TASKWAIT, 0, code, NULL);
    else if (spawn_loc || c->taskloop_loc)
        ev_loc(ts, DIR_TASKLOOP, 0, spawn_loc ? spawn_loc : c->taskloop_loc);
    else
        ev_code(ts, DIR_TASK, 0, code, ident);
    frag_close(ts);
    /* taskwait depend(...) comes as a task of its own kind */
    if (flags & ompt_task_taskwait) {
        /* taskwait with depend: modeled as a full taskwait; the task
         * waits until the taskwait_complete schedule event. */
        uint32_t loc = construct_loc(ts, c, code, NULL, DIR_TASKWAIT);
        if (c->nfr && !taskwait_splits_chunk(ts, c, loc))
            note_outer_tasks(ts, c, loc);
        taskwait_scope(ts, c, loc);
        c->waiting = 1;
        return;
    }
    tctx *t = ctx_alloc(ts);
    if (!t) {
        frag_open(ts);
        return;
    }
    t->kind = CTX_EXPLICIT;
    t->untied = (flags & ompt_task_untied) != 0;
    t->has_deps = has_deps;
    t->rt_task = ts->last_alloc;
    ts->last_alloc = NULL;
    t->path = t->base_path = c->path;
    if (!spawn_loc) {
        spawn_loc = c->taskloop_loc;
        t->ctx_code = c->taskloop_code;
        t->spawn_group = c->taskloop_group;
        t->spawn_owner = c->taskloop_owner;
    } else {
        t->spawn_group = c->spawn_group;
        t->spawn_owner = c->spawn_owner;
        t->ctx_code = c->ctx_code;
    }
    t->spawn_loc = spawn_loc;
    t->ctx_chain = spawn_loc ? c->ctx_chain
                             : context_of(ts, c, code, ident, DIR_TASK);
    if (!spawn_loc)
        t->ctx_code = code;
    t->base_loc = spawn_loc ? spawn_loc
                            : stream_loc_ctx(&ts->st, code, ident, DIR_TASK,
                                             t->ctx_chain);
    cnode *parent;
    t->region = c->region;
    /* libomp flags every task of a one-thread team undeferred; that says
     * nothing about the program's parallelism, so only an undeferred task
     * of a real team (if(0), included in a final task) is serial. */
    int serial_team =
        !c->region ||
        atomic_load_explicit(&c->region->team, memory_order_relaxed) <= 1;
    if ((flags & ompt_task_undeferred) && !serial_team) {
        /* The creator waits for it: in series. */
        cnode *p = cur(c);
        begin_node(ts, &t->alone, p, child_idx(p), OSPG_S, OSPG_LOC_NONE, 0,
                   NULL);
        t->has_alone = 1;
        t->pend_kind = OSPG_P;
        parent = &t->alone;
    } else {
        t->pend_kind = OSPG_P;
        open_scope(ts, c);
        *scope_unjoined(c) = 1;
        *scope_direct(c) = 1;
        parent = scope_node(c);
    }
    t->node.id = stream_new_id(&ts->st);
    t->pend_idx = child_idx(parent); /* first: a lazy parent begins here */
    t->pend_parent = *parent;
    new_data->ptr = t;
    if (has_deps) {
        /* the dependences callback follows; the creator holds the task
         * until then, since it may start and end on another thread */
        /* relaxed: the runtime publishes the task only after we return */
        atomic_store_explicit(&t->refs, 2, memory_order_relaxed);
        atomic_store_explicit(&t->begin_state, BEGIN_PENDING,
                              memory_order_relaxed);
        ts->pending = t;
    } else {
        atomic_store_explicit(&t->refs, 1, memory_order_relaxed);
        /* owed by the task itself (Leaves) */
        atomic_store_explicit(&t->begin_state, BEGIN_DONE,
                              memory_order_relaxed);
        t->node.lazy = t;
    }
    frag_open(ts);
}

static void on_dependences(ompt_data_t *task_data,
                           const ompt_dependence_t *deps, int ndeps)
{
    tstate *ts = self;
    tctx *t = task_data ? task_data->ptr : NULL;
    if (!ts || !t)
        return;
    /* doacross: the running task's own depend(sink) or depend(source) */
    if (ndeps > 0 &&
        (deps[0].dependence_type == ompt_dependence_type_sink ||
         deps[0].dependence_type == ompt_dependence_type_source)) {
        if (enter() && ts->ctx == t)
            doacross(ts, t, deps, ndeps);
        return;
    }
    if (ts->pending != t)
        return;
    flush_pending(ts, deps, ndeps);
}

/* The construct's code address for a fork entered from call_site.  A
 * directive whose outlined body is nothing but another parallel region
 * tail-calls the fork: the return address then lies in the runtime (the
 * caller of the outer body), and the inner body itself (the microtask)
 * is the best address left that belongs to the construct. */
static const void *fork_call_site(const void *call_site, const void *microtask)
{
    uintptr_t a = (uintptr_t)call_site;
    if (microtask && a >= runtime_text_lo && a < runtime_text_hi)
        return (const char *)microtask + 1; /* as a return address */
    return call_site;
}

/* Where the main thread's ring stood when it entered a wrapper that may
 * start the runtime (tool_sample_mark); pre_mark_set: it was taken. */
static __thread uint64_t pre_mark __attribute__((tls_model("initial-exec")));
static __thread int pre_mark_set __attribute__((tls_model("initial-exec")));

void tool_sample_mark(void)
{
    if (!active && main_sampler.ring && !main_pre_taken) {
        pre_mark = sampler_mark(&main_sampler);
        pre_mark_set = 1;
    }
}

static void keep_pre_ip(void *arg, uint64_t ip)
{
    (void)arg;
    if (main_pre_n < PRE_IPS)
        main_pre_ips[main_pre_n++] = ip;
}

/* The main thread enters the runtime before it started: its serial work
 * so far ends here, and its samples so far are kept for its first
 * fragment. */
static void main_enters_runtime(uint64_t *entry)
{
    if (*entry || gettid() != getpid())
        return;
    *entry = main_metric_now();
    if (main_sampler.ring) {
        sampler_drain_to(&main_sampler, pre_mark_set ? pre_mark : UINT64_MAX,
                         keep_pre_ip, NULL);
        sampler_drain(&main_sampler, drop_sample, NULL);
        main_pre_taken = 1;
    }
}

int tool_api_enters(void)
{
    if (active || forked_child || cpu_runtime_entry || cpu_api_entry)
        return 0;
    main_enters_runtime(&cpu_api_entry);
    return cpu_api_entry != 0;
}

void tool_api_returns(void)
{
    /* The runtime started inside the call (its initial task began there,
     * and it set itself up after that too): the main thread's fragment is
     * its code from the program's start to the call, and goes on from
     * here. */
    tstate *ts = self;
    if (!active || !ts || ts->ctx != &initial_ctx || !main_first_event ||
        ts->frag_opens != 1 || !ts->in_frag ||
        !main_counts_from_origin() ||
        cpu_api_entry <= cpu_origin)
        return;
    main_first_event = 0;
    ts->frag_start = counter_read(&metric, &ts->ct) -
                     (cpu_api_entry - cpu_origin);
    ts->frag_unread = 0;
}

void tool_fork_enters(tool_runtime_span *sp, const void *call_site,
                      const void *microtask, const void *ident)
{
    tstate *ts = self;
    sp->prev_site = fork_site;
    sp->prev_ident = fork_ident;
    fork_site = fork_call_site(call_site, microtask);
    fork_ident = ident;
    if (forked_child) {
        sp->active = 0;
        return;
    }
    /* any fragment open at the return was opened inside the call */
    sp->active = 1;
    sp->opens = ts ? ts->frag_opens : UINT64_MAX;
    sp->start = 0;
    /* A thread without state registers with the runtime inside this
     * fork, even while the runtime is still starting up (threads of the
     * program's own racing to their first construct): that is not work. */
    if (!ts)
        fork_registers = 1;
    if (!active || !ts) {
        /* the runtime starts inside this fork: the program's work so far
         * ends here (the main thread's, while it is the first) */
        if (!active && !cpu_api_entry)
            main_enters_runtime(&cpu_runtime_entry);
        return;
    }
    if (atomic_load_explicit(&unsupported, memory_order_relaxed) || !ts->ctx)
        return;
    if (ts->pending)
        flush_pending(ts, NULL, 0);
    ev_code(ts, DIR_PARALLEL, 0, fork_site, fork_ident);
    frag_close(ts);
    sp->opens = ts->frag_opens;
}

void tool_fork_returns(const tool_runtime_span *sp)
{
    tstate *ts = self;
    fork_site = sp->prev_site;
    fork_ident = sp->prev_ident;
    if (!sp->active || !active || !ts || !ts->in_frag ||
        ts->frag_opens == sp->opens)
        return;
    ts->frag_start = counter_read(&metric, &ts->ct);
    ts->frag_unread = 0;
}

/* A sink is about to wait (interpose.c): the fragment ends before the
 * runtime spins.  Returns 1 when the wait is the tool's to close. */
int tool_doacross_wait_begin(void)
{
    tstate *ts = active ? enter() : NULL;
    tctx *c = ts ? ts->ctx : NULL;
    if (!c || !c->in_loop || c->waiting)
        return 0;
    ordered_event(ts, c);
    frag_close(ts);
    c->waiting = 1;
    return 1;
}

/* The sink returned.  No callback came (a sink outside the iteration
 * space, a team of one): the code goes on in the same piece. */
void tool_doacross_wait_end(void)
{
    tstate *ts = self;
    tctx *c = ts ? ts->ctx : NULL;
    if (c && c->waiting) {
        c->waiting = 0;
        frag_open(ts);
    }
}

static int rt_sampled(uint32_t k)
{
    return k < TOOL_RT_ALL || k % TOOL_RT_SAMPLE == 0;
}

/* An allocation's span left open (tool_alloc_leave) when the thread
 * enters a wrapped call that does not queue the task (a taskloop's): the
 * fragment resumes now (the program's code since the allocation counts as
 * the runtime's), its cut is cleared, and the construct's allocations
 * keep their own spans from now on. */
static __attribute__((noinline, cold)) void alloc_settle(tstate *ts)
{
    int same = ts->alloc_opens == ts->frag_opens;
    ts->alloc_opens = 0;
    if (!same) /* a fragment began since: frag_begin cleared the cut */
        return;
    ts->alloc_site->unqueued = 1;
    if (ts->in_frag) {
        uint64_t now = counter_read(&metric, &ts->ct);
        if (now > ts->alloc_start)
            ts->frag_start += now - ts->alloc_start;
    }
    ts->frag_cut = 0;
}

/* The bookkeeping of entering a wrapped call, all but where its span
 * starts: returns whether a fragment runs (the span is then active). */
static inline int span_enter(tstate *ts, tool_runtime_span *sp, int timing)
{
    sp->ctx = ts ? ts->ctx : NULL;
    if (sp->ctx)
        ((tctx *)sp->ctx)->in_runtime++;
    sp->prev_skip = 0;
    if (ts) {
        sp->prev_skip = (unsigned char)ts->rt_skip_read;
        uint32_t k = timing == TOOL_RT_SAMPLED ? ts->rt_calls++ : 0;
        ts->rt_skip_read = timing == TOOL_RT_UNTIMED ||
                           (timing == TOOL_RT_SAMPLED && !rt_sampled(k));
    }
    sp->active = ts && ts->in_frag;
    if (sp->active)
        sp->opens = ts->frag_opens;
    return sp->active;
}

void tool_runtime_enter(tool_runtime_span *sp, int timing)
{
    tstate *ts = active ? self : NULL;
    if (ts && ts->alloc_opens)
        alloc_settle(ts);
    if (!span_enter(ts, sp, timing))
        return;
    sp->start = counter_read(&metric, &ts->ct);
    sp->prev_cut = ts->frag_cut;
    ts->frag_cut = sp->start;
}

void tool_task_enter(tool_runtime_span *sp)
{
    tstate *ts = active ? self : NULL;
    if (ts && ts->alloc_opens) {
        if (ts->alloc_opens == ts->frag_opens && ts->in_frag) {
            /* the span begun at the allocation; this call is not
             * measured (tool_alloc_leave), and frag_cut is alloc_start */
            ts->alloc_opens = 0;
            span_enter(ts, sp, TOOL_RT_SAMPLED);
            sp->start = ts->alloc_start;
            sp->prev_cut = 0;
            return;
        }
        alloc_settle(ts);
    }
    tool_runtime_enter(sp, TOOL_RT_SAMPLED);
    if (ts && ts->gap_opens) {
        struct gap_site *g = ts->gap_site;
        if (ts->gap_opens == ts->frag_opens && sp->active) {
            uint64_t max = alloc_gap_scaled ? ALLOC_GAP_ALLOCS * ts->alloc_fastest
                                            : 0;
            if (max < ALLOC_GAP_MAX)
                max = ALLOC_GAP_MAX;
            int long_gap = sp->start > ts->gap_from &&
                           sp->start - ts->gap_from > max;
            g->long_gaps = long_gap ? (g->long_gaps < ALLOC_GAP_STRIKES
                                           ? g->long_gaps + 1
                                           : g->long_gaps)
                                    : 0;
        }
        ts->gap_opens = 0;
    }
}

/* A task's allocation returns.  clang's code then copies the task's data
 * in and queues it (__kmpc_omp_task), with no event between: where that
 * queueing will not be measured (tool_task_runtime), the allocation's
 * span is left open and goes on into it (tool_task_enter), which saves a
 * metric read at each end; the code between (the copy, an if() or depend
 * expression) then counts as the runtime's, as part of the task's
 * creation.  So only where that code is short: not for a task whose data
 * has destructors (C++ objects, copied by their copy constructors) or is
 * larger than ALLOC_GOES_ON_BYTES with its descriptor, nor at a construct
 * where the code was measured long (tool_task_enter), nor with a metric
 * that cannot tell.  Anything else that comes first ends the fragment
 * where the allocation began (frag_cut: an if(0) task's creation event,
 * alloc_unqueued) or resumes it (a taskloop's wrapper, alloc_settle), and
 * the construct's allocations keep their own spans from then on. */
#define KMP_TASK_DESTRUCTORS 0x8 /* kmp_tasking_flags_t's destructors_thunk */
#define ALLOC_GOES_ON_BYTES 296  /* kmp_task_t (40; a taskloop's 80) + data */
#define ALLOC_GOES_ON_SHARED 256 /* the pointers to shared data */
/* The thread's entry for the construct at loc, or NULL where another
 * construct that carries a mark holds its slot (the allocation's span
 * then closes, as where it is marked).  An unmarked holder gives way. */
static struct gap_site *gap_site_of(tstate *ts, const void *loc)
{
    uint64_t h = (uint64_t)(uintptr_t)loc * 0x9e3779b97f4a7c15u;
    struct gap_site *g = &ts->gap_sites[h >> 58]; /* 64 slots */
    if (g->loc != loc) {
        if (g->loc && (g->long_gaps || g->unqueued))
            return NULL;
        g->loc = loc;
        g->long_gaps = 0;
        g->unqueued = 0;
    }
    return g;
}

/* tool_alloc_leave where the span closes: measured as any wrapped call,
 * and the code up to the queueing timed (tool_task_enter). */
static __attribute__((noinline)) uint64_t
alloc_leave_closed(tstate *ts, const tool_runtime_span *sp, const void *loc)
{
    uint64_t rt = tool_runtime_leave(sp);
    if (ts && sp->active && ts->in_frag && ts->frag_opens == sp->opens &&
        rt != TOOL_RT_UNMEASURED) {
        ts->gap_site = gap_site_of(ts, loc);
        ts->gap_opens = ts->gap_site ? sp->opens : 0;
        ts->gap_from = sp->start + rt;
        if (rt && (!ts->alloc_fastest || rt < ts->alloc_fastest))
            ts->alloc_fastest = rt;
    }
    return rt;
}

uint64_t tool_alloc_leave(const tool_runtime_span *sp, const void *loc,
                          int32_t flags, size_t task_size,
                          size_t shareds_size)
{
    tstate *ts = self;
    tctx *c = sp->ctx;
    if (!ts || !sp->active || !ts->in_frag || ts->frag_opens != sp->opens ||
        ts->frag_rt || sp->prev_cut || rt_sampled(ts->rt_calls) ||
        ts->ctx != c || (flags & KMP_TASK_DESTRUCTORS) ||
        task_size > ALLOC_GOES_ON_BYTES ||
        shareds_size > ALLOC_GOES_ON_SHARED || alloc_gap_scaled < 0)
        return alloc_leave_closed(ts, sp, loc);
    struct gap_site *g = gap_site_of(ts, loc);
    if (!g || g->long_gaps >= ALLOC_GAP_STRIKES || g->unqueued)
        return alloc_leave_closed(ts, sp, loc);
    if (c)
        c->in_runtime--;
    ts->rt_skip_read = sp->prev_skip;
    ts->alloc_opens = sp->opens;
    ts->alloc_start = sp->start;
    ts->alloc_site = g;
    return TOOL_RT_UNMEASURED;
}

uint64_t tool_runtime_leave(const tool_runtime_span *sp)
{
    tstate *ts = self;
    tctx *c = sp->ctx;
    if (c)
        c->in_runtime--;
    if (!ts)
        return 0;
    ts->rt_skip_read = sp->prev_skip;
    /* a fragment of the caller's that began inside the call is its code
     * from here on */
    int rt_open = c && ts->in_frag && ts->frag_rt && ts->ctx == c &&
                  !c->in_runtime;
    if (rt_open)
        ts->frag_rt = 0;
    if (!sp->active) {
        if (rt_open) {
            ts->frag_start = counter_read(&metric, &ts->ct);
            ts->frag_unread = 0;
        }
        return 0;
    }
    uint64_t left_out = 0;
    if (ts->frag_opens == sp->opens) {
        /* no fragment began inside: the one running skips the call */
        ts->frag_cut = sp->prev_cut;
        if (ts->in_frag) {
            uint64_t now = counter_read(&metric, &ts->ct);
            left_out = now > sp->start ? now - sp->start : 0;
            ts->frag_start += left_out;
        }
    } else if (ts->in_frag) {
        uint64_t now = counter_read(&metric, &ts->ct); /* began inside */
        left_out = ts->frag_unread          ? TOOL_RT_UNMEASURED
                   : now > ts->frag_start ? now - ts->frag_start
                                          : 0;
        ts->frag_start = now;
        ts->frag_unread = 0;
    }
    return left_out;
}

void tool_chunk_runtime(uint64_t ns)
{
    tstate *ts = active ? self : NULL;
    if (ts && ns != TOOL_RT_UNMEASURED)
        ts->chunk_rt += ns;
}

void tool_task_runtime(uint64_t ns, int created)
{
    tstate *ts = active ? self : NULL;
    if (!ts)
        return;
    /* A thread's first task costs the runtime its allocator's set-up
     * (30-170 us): not what creating a task costs. */
    if (!ts->task_rt_started) {
        ts->task_rt_started = created;
        return;
    }
    /* A creation counts with its allocation when its queueing was
     * measured (one in TOOL_RT_SAMPLE), so the mean stays a creation's. */
    if (ns == TOOL_RT_UNMEASURED) {
        ts->task_rt_pending = 0;
        return;
    }
    if (!created) {
        ts->task_rt_pending += ns;
        return;
    }
    ts->task_rt += ts->task_rt_pending + ns;
    ts->task_rt_pending = 0;
    ts->task_rt_tasks++;
    /* A worker's thread_end may come after the program's end is written:
     * what it measured is handed over every few tasks. */
    if (ts->task_rt_tasks >= 32) {
        atomic_fetch_add_explicit(&task_rt_total, ts->task_rt,
                                  memory_order_relaxed);
        atomic_fetch_add_explicit(&task_rt_count, ts->task_rt_tasks,
                                  memory_order_relaxed);
        ts->task_rt = ts->task_rt_tasks = 0;
    }
}

static void on_task_schedule(ompt_data_t *prior_data,
                             ompt_task_status_t status,
                             ompt_data_t *next_data)
{
    tstate *ts = self;
    /* libomp reports an untied task's requeue (tool_task_requeued, which
     * ended the part) as a switch from the task to itself, or to the
     * task below it: nothing more happens here.  Taken as a switch to
     * itself, it would put the task back on this thread, and the code
     * below it would run as the task's until the next event. */
    if (ts && ts->requeued && status == ompt_task_switch && prior_data &&
        prior_data->ptr == ts->requeued && next_data &&
        (next_data->ptr == ts->ctx || next_data->ptr == ts->requeued)) {
        ts->requeued = NULL;
        return;
    }
    tctx *p = prior_data ? prior_data->ptr : NULL;
    tctx *next = next_data ? next_data->ptr : NULL;
    /* An untied task that resumes on the thread that requeued it comes
     * as a switch from itself; the thread comes from the task it went
     * back to at the requeue. */
    if (ts && status == ompt_task_switch && p && next == p && p->untied &&
        ts->ctx && ts->ctx != p)
        p = ts->ctx;
    ts = enter_from(p);
    if (!ts)
        return;
    /* a task starts or resumes: its code begins */
    if (next && next->kind == CTX_EXPLICIT)
        ev_loc(ts, DIR_TASK, 0, next->base_loc);
    ts->ct.mono = 0;
    frag_close_held(ts);
    ts->grain_at = grain_from_reads ? ts->ct.mono : 0;
    int ended = p && p->kind == CTX_EXPLICIT &&
                (status == ompt_task_complete || status == ompt_task_cancel ||
                 status == ompt_task_detach);
    /* ... or one ends, and the code below it resumes */
    if (ended)
        ev_loc(ts, DIR_TASK, 1, p->base_loc);
    /* the task the runtime returns to when the next one's part ends */
    tctx *below = ended ? p->sched_prior : p;
    if (ended) {
        /* Its completion waits for its event, fulfilled later by other
         * code, which its dependent tasks therefore follow too: the graph
         * has them follow its code only. */
        if (status == ompt_task_detach && p->has_deps)
            note_once(ts, p->base_loc, TRACE_NOTE_DETACH_DEPS);
        if (p->helper) /* the runtime's, not a grain: no time */
            p->node.t0 = 0;
        end_frames(ts, p);
        end_scope(ts, p, OSPG_LOC_NONE);
        end_node(ts, &p->node, OSPG_LOC_NONE);
        if (p->has_alone)
            end_node(ts, &p->alone, OSPG_LOC_NONE);
        close_regions(p);
        prior_data->ptr = NULL;
        if (ts->ctx == p)
            ts->ctx = NULL;
        task_release(p);
    }
    held_release(ts);
    /* No next task (a fulfilled detach event, the end of a taskwait with
     * depend): the running task goes on. */
    tctx *n = next_data ? next_data->ptr : ts->ctx;
    if (status == ompt_taskwait_complete && n)
        n->waiting = 0;
    /* a waiting task's thread runs another task, or comes back to it */
    if (below && below != n && below->wait_t0)
        wait_cut(ts, below);
    if (n && n->in_wait && n->waiting && !n->wait_t0 && n != p)
        n->wait_t0 = grain_clock();
    if (n && n->kind == CTX_EXPLICIT) {
        if (below && below->kind == CTX_IMPLICIT && below->at_barrier)
            barrier_ran_task(below);
        if (!n->node.t0 && mode_offline) /* its first start */
            n->node.t0 = grain_now(ts);
        ensure_begun(ts, n);
        if (n != below) /* a start, not a return to it */
            n->sched_prior = below;
    }
    ts->grain_at = 0;
    ts->ctx = n;
    if (n && !n->waiting) {
        frag_open(ts);
        if (n->kind == CTX_EXPLICIT && n->untied && !n->started)
            n->first_part_opens = ts->frag_opens;
    }
    if (n)
        n->started = 1;
}

void tool_task_allocated(void *task)
{
    tstate *ts = active ? self : NULL;
    if (ts)
        ts->last_alloc = task;
}

/* clang's code for an untied task: the runtime's kmp_task_t, whose
 * part_id the task's code sets before it queues the task again (the part
 * that runs next). */
typedef struct kmp_task_head {
    void *shareds;
    void *routine;
    int32_t part_id;
} kmp_task_head;

/* clang begins every untied task with a part that holds none of the
 * program's code: it sets part_id to 1 and queues the task again.  Its
 * "work" would be the runtime's start of the task and the tool's time
 * around the two events (BOTS fib: 26 ns a task, added to the task's
 * work), and it would cost a clock read. */
static int first_part_ends(const tstate *ts, const tctx *c, void *task)
{
    return c->first_part_opens && c->first_part_opens == ts->frag_opens &&
           ts->in_frag && !ts->frag_rt && ts->frag_start &&
           ((const kmp_task_head *)task)->part_id == 1;
}

/* clang ends each part of an untied task by queueing the task again
 * (__kmpc_omp_task on itself) and returning; libomp then resumes the task
 * below it with no event, and any thread may run the next part.  So the
 * part ends here: the thread goes back to the task it ran before. */
int tool_task_requeued(void *task)
{
    tstate *ts = active ? self : NULL;
    /* a task this thread just allocated is being created, not requeued */
    if (!ts || task == ts->last_alloc)
        return 0;
    tctx *c = ts->ctx && ts->ctx->rt_task == task ? ts->ctx : NULL;
    ts = enter_from(c);
    c = ts ? ts->ctx : NULL;
    if (!c || c->kind != CTX_EXPLICIT || !task || c->rt_task != task)
        return 0;
    int first = first_part_ends(ts, c, task);
    c->first_part_opens = 0;
    if (first)
        ts->frag_cut = ts->frag_start; /* ends where it began: no work */
    frag_close(ts);
    if (first) {
        ts->frag_cut = 0;
        /* counted for run.json, handed over as task_rt is */
        if (++ts->first_parts >= 32) {
            atomic_fetch_add_explicit(&first_parts_total, ts->first_parts,
                                      memory_order_relaxed);
            ts->first_parts = 0;
        }
    }
    ts->ctx = c->sched_prior;
    ts->requeued = c;
    if (ts->ctx && !ts->ctx->waiting)
        frag_open(ts);
    /* back to a task waiting there, without a schedule event */
    if (ts->ctx && ts->ctx->in_wait && ts->ctx->waiting &&
        !ts->ctx->wait_t0)
        ts->ctx->wait_t0 = grain_clock();
    return 1;
}

/* ---- What-if regions (include/whatif.h) ---- */

#define WHATIF_CMD_BEGIN 0x5747
#define WHATIF_CMD_END 0x5748

static atomic_int warned_unbalanced;

/* One line, once per run: annotations are the user's, never fatal. */
static void warn_unbalanced(const char *what, const void *code)
{
    if (atomic_exchange(&warned_unbalanced, 1))
        return;
    char where[4352];
    if (code) {
        stream_where(code, where, sizeof(where));
        fprintf(stderr, "whatif: warning: %s (%s); further ones are not "
                        "reported\n", what, where);
    } else
        fprintf(stderr, "whatif: warning: %s; further ones are not "
                        "reported\n", what);
}

/* A task ends with a region still open: close it quietly but say so. */
static void close_regions(tctx *c)
{
    if (c->path != c->base_path) {
        warn_unbalanced("a task or thread ended inside a __WHATIF_BEGIN__ "
                        "region without __WHATIF_END__", NULL);
        c->path = c->base_path;
    }
}

static void record_region(tstate *ts, uint32_t path, uint32_t parent,
                          uint32_t loc, uint64_t factor_milli)
{
    if (mode_offline && ts->ok)
        trace_write_region(ts->st.w, path, parent, loc, factor_milli);
}

static int on_control_tool(uint64_t command, uint64_t modifier, void *arg,
                           const void *code)
{
    (void)arg;
    if (command != WHATIF_CMD_BEGIN && command != WHATIF_CMD_END)
        return 0;
    tstate *ts = enter();
    tctx *c = ts ? ts->ctx : NULL;
    if (!c)
        return 0;
    /* an END is named by its region (its BEGIN's location) */
    if (command == WHATIF_CMD_END && c->path != c->base_path)
        ev_loc(ts, DIR_REGION, 1, regions_loc(c->path));
    else
        ev_code(ts, DIR_REGION, command == WHATIF_CMD_END, code, NULL);
    frag_close(ts);
    if (command == WHATIF_CMD_BEGIN) {
        int is_new;
        uint32_t loc = construct_loc(ts, c, code, NULL, DIR_REGION);
        uint64_t factor = (int64_t)modifier > 0 ? modifier : 0;
        uint32_t path = regions_enter(c->path, loc, factor, &is_new);
        if (is_new)
            record_region(ts, path, c->path, loc, factor);
        /* An instance of the region, unless entered again inside itself
         * (recursion): a W-node of no work at its location marks it (the
         * region's row counts its instances; its code is tagged). */
        int outermost = path && !regions_on_path(c->path, loc);
        if (path)
            c->path = path;
        if (outermost)
            emit_work(ts, cur(c), 0, loc, 0);
    } else if (c->path == c->base_path) {
        warn_unbalanced("__WHATIF_END__ without a matching __WHATIF_BEGIN__ "
                        "in the same task", code);
    } else {
        c->path = regions_parent(c->path);
    }
    frag_open(ts);
    return 0;
}

/* ---- Start-up and shutdown ---- */

/* Writes the on-the-fly profile; partial for a run cut short. */
static void write_online(int partial)
{
    char dir[4200], err[8192];
    snprintf(dir, sizeof(dir), "%s%s", out_dir, mode_offline ? "/online" : "");
    if (partial)
        fprintf(stderr, "whatif: the program exited inside an OpenMP "
                        "construct: the profile covers the work measured "
                        "until then\n");
    if (online_finish(atomic_load(&root_kids), partial, dir, err,
                      sizeof(err)))
        fprintf(stderr, "whatif: the on-the-fly profile failed: %s\n", err);
    else if (err[0])
        fprintf(stderr, "whatif: %s\n", err);
}

static void report_unsupported(void)
{
    tstate *ts = self;
    fprintf(stderr, "whatif: %s is not supported (teams and target are "
                    "not modeled): no profile written\n", unsupported_what);
    if (ts)
        stream_meta(&ts->st, "unsupported", unsupported_what);
}

static void on_target(ompt_target_t kind, ompt_scope_endpoint_t endpoint,
                      int device_num, ompt_data_t *task_data,
                      ompt_data_t *target_task_data, ompt_data_t *target_data,
                      const void *code)
{
    (void)kind;
    (void)endpoint;
    (void)device_num;
    (void)task_data;
    (void)target_task_data;
    (void)target_data;
    mark_unsupported("target", code);
}

/* The main thread's state, made now if it never ran OpenMP (the program
 * ran OpenMP only in threads it created): the end records need a stream. */
static tstate *main_thread_state(void)
{
    tstate *ts = self;
    if (ts || !(ts = thread_state_new()))
        return ts;
    ts->ok = stream_thread_open(&ts->st) == 0;
    if (mode_online)
        ts->q = online_thread_open(ts->st.index);
    self = ts;
    return ts;
}

/* A runtime cost per event (creating a task, handing out a chunk, a
 * barrier): the runtime's time over the events, when there were at least
 * enough to say. */
static void write_cost(tstate *ts, const char *key, uint64_t total,
                       uint64_t events, uint64_t enough)
{
    if (events < enough)
        return;
    char cost[32];
    snprintf(cost, sizeof(cost), "%llu", (unsigned long long)(total / events));
    stream_meta(&ts->st, key, cost);
    if (mode_online)
        online_meta(key, cost);
}

/* Ends the program: closes what the main thread has open and the program
 * root, then writes the on-the-fly profile.  Threads the program created
 * that are still inside OpenMP make the profile partial. */
static void finish(void)
{
    tstate *ts = self;
    if (finalized || forked_child)
        return;
    finalized = 1;
    if (atomic_load(&unsupported)) {
        seen_end();
        report_unsupported();
        stream_flush_all();
        return;
    }
    if (main_began ? !(ts && ts->ctx == &initial_ctx) : gettid() != getpid()) {
        seen_end();
        stream_flush_all();
        return;
    }
    if (!(ts = main_thread_state())) {
        seen_end();
        stream_flush_all();
        return;
    }
    cnode root = {TRACE_ROOT_ID, 0, NULL, NULL, 0};
    if (main_began) {
        ev_loc(ts, FEV_PROGRAM, 1, 0);
        frag_close(ts);
        end_scope(ts, &initial_ctx, OSPG_LOC_NONE);
        /* an index kept for a fragment that never came to the root */
        uint64_t kept = atomic_exchange(&main_pending_idx, UINT64_MAX);
        if (kept != UINT64_MAX)
            record_work_at(ts, TRACE_ROOT_ID, kept, 0);
    } else {
        /* The main thread's own serial code, never cut by a construct:
         * its CPU time since the program began, where the clock tells. */
        uint64_t now = main_metric_now(), work = 0;
        if (main_counts_from_origin() && now > cpu_origin)
            work = now - cpu_origin;
        uint64_t idx = atomic_exchange(&main_pending_idx, UINT64_MAX);
        ts->took_from = (frag_event){NULL, NULL, 0, FEV_PROGRAM, 0};
        ts->took_to = (frag_event){NULL, NULL, 0, FEV_PROGRAM, 1};
        record_work_at(ts, TRACE_ROOT_ID,
                       idx != UINT64_MAX ? idx : child_idx(&root), work);
    }
    seen_end(); /* after the program's last fragment: not its work */
    char n[32];
    snprintf(n, sizeof(n), "%u", stream_count());
    stream_meta(&ts->st, "threads", n);
    if (mode_online)
        online_meta("threads", n);
    write_cost(ts, "task_create_cost",
               atomic_load(&task_rt_total) + ts->task_rt,
               atomic_load(&task_rt_count) + ts->task_rt_tasks, 100);
    chunk_handover(ts);
    write_cost(ts, "chunk_dispatch_cost", atomic_load(&chunk_rt_total),
               atomic_load(&chunk_rt_count), 100);
    write_cost(ts, "barrier_cost", atomic_load(&barrier_rt_total),
               atomic_load(&barrier_rt_count), 10);
    snprintf(n, sizeof(n), "%llu",
             (unsigned long long)atomic_load(&runtime_task_queries));
    stream_meta(&ts->st, "runtime_task_queries", n);
    if (mode_online)
        online_meta("runtime_task_queries", n);
    snprintf(n, sizeof(n), "%llu",
             (unsigned long long)(atomic_load(&first_parts_total) +
                                  ts->first_parts));
    stream_meta(&ts->st, "untied_first_parts", n);
    if (mode_online)
        online_meta("untied_first_parts", n);
    if (sample_period) {
        char hz[32], got[32], lost[32];
        snprintf(hz, sizeof(hz), "%llu",
                 (unsigned long long)(1000000000ull / sample_period));
        snprintf(got, sizeof(got), "%llu",
                 (unsigned long long)atomic_load(&samples_taken));
        snprintf(lost, sizeof(lost), "%llu",
                 (unsigned long long)(atomic_load(&samples_lost) +
                                      ts->sm.lost));
        const char *kv[][2] = {{"sample_rate_hz", hz}, {"samples", got},
                               {"samples_lost", lost}};
        for (size_t i = 0; i < 3; i++) {
            stream_meta(&ts->st, kv[i][0], kv[i][1]);
            if (mode_online)
                online_meta(kv[i][0], kv[i][1]);
        }
    }
    long nranks, rank = mpirank_get(&nranks);
    if (rank >= 0) { /* under an MPI launcher: which rank, where */
        char r[24], n[24], host[256], pid[24];
        snprintf(r, sizeof(r), "%ld", rank);
        snprintf(n, sizeof(n), "%ld", nranks);
        snprintf(pid, sizeof(pid), "%ld", (long)getpid());
        if (gethostname(host, sizeof(host)))
            snprintf(host, sizeof(host), "?");
        host[sizeof(host) - 1] = 0;
        const char *kv[][2] = {{"rank", r}, {"ranks", nranks ? n : NULL},
                               {"host", host}, {"pid", pid}};
        for (size_t i = 0; i < 4; i++) {
            if (!kv[i][1])
                continue;
            stream_meta(&ts->st, kv[i][0], kv[i][1]);
            if (mode_online)
                online_meta(kv[i][0], kv[i][1]);
        }
    }
    if (sample_off_note[0]) {
        stream_meta(&ts->st, "sample_note", sample_off_note);
        if (mode_online)
            online_meta("sample_note", sample_off_note);
    }
    int failures = atomic_load(&counter_failures);
    if (failures) {
        char msg[160];
        snprintf(msg, sizeof(msg), "%d threads could not open the %s "
                 "counter: their work reads as 0", failures, metric.name);
        fprintf(stderr, "whatif: warning: %s\n", msg);
        stream_meta(&ts->st, "metric_failures", msg);
        if (mode_online)
            online_meta("metric_failures", msg);
    }
    pthread_mutex_lock(&roots_lock);
    int still_open = extra_roots != NULL;
    if (extra_root_count)
        tool_note(ts, OSPG_LOC_PROGRAM, TRACE_NOTE_THREADS,
                  (uint64_t)extra_root_count);
    pthread_mutex_unlock(&roots_lock);
    if (still_open) {
        /* a thread of the program's is still inside OpenMP: its part
         * is cut where it stands */
        stream_meta(&ts->st, "complete", "no: a thread the program created "
                    "was still running OpenMP code when the program ended");
        if (mode_online)
            write_online(1);
        stream_flush_all();
        return;
    }
    if (mode_offline && ts->ok)
        trace_write_end(ts->st.w, TRACE_ROOT_ID, atomic_load(&root_kids),
                        OSPG_LOC_NONE);
    if (mode_online)
        write_online(0);
    stream_flush_all();
}

static atomic_int hard_paused; /* tool_hard_pause() */

void tool_hard_pause(void)
{
    atomic_store(&hard_paused, 1);
}

static void on_finalize(ompt_data_t *tool_data)
{
    (void)tool_data;
    tstate *ts = self;
    if (atomic_load(&hard_paused) && !finalized && !forked_child && ts) {
        static const char why[] =
            "no: the program paused the OpenMP runtime hard "
            "(omp_pause_resource_all or omp_pause_resource with "
            "omp_pause_hard), which ends the runtime's tools interface: "
            "the profile covers the program up to that call";
        fprintf(stderr, "whatif: warning: %s\n", why + 4);
        stream_meta(&ts->st, "complete", why);
        if (mode_online)
            online_meta("complete", why);
    }
    finish();
}

/* exit() inside a parallel region never reaches finalize.  On the fly,
 * the graph is closed as it stands and its profile written; offline, only
 * the exiting thread's stream can be flushed safely (the others may still
 * be writing), and the analysis will report the trace incomplete. */
static void at_exit(void)
{
    tstate *ts = self;
    if (!active || finalized || forked_child || getpid() != tool_pid)
        return;
    if (atomic_load(&unsupported)) {
        finish();
        return;
    }
    /* Our handler may run before libomp's own shutdown: an exit from the
     * program's serial code is the normal end of the run. */
    if (main_began ? ts && ts->ctx == &initial_ctx && !initial_ctx.waiting &&
                         initial_ctx.nfr == 0
                   : gettid() == getpid()) {
        finish();
        return;
    }
    finalized = 1;
    if (ts)
        frag_close(ts);
    seen_end();
    if (mode_online)
        write_online(1);
    if (ts && ts->ok && ts->st.w)
        trace_writer_flush(ts->st.w);
}

void tool_thread_returns(void)
{
    tstate *ts = self;
    tctx *c = ts ? ts->ctx : NULL;
    if (!active || forked_child || !c || c == &initial_ctx ||
        c->kind != CTX_INITIAL || c->waiting || c->nfr)
        return;
    ev_loc(ts, FEV_THREAD, 1, 0);
    frag_close(ts);
}

void tool_program_exits(void)
{
    if (getpid() == tool_pid)
        at_exit();
}

#define REGISTER(event, fn)                                                \
    set_cb(event, (ompt_callback_t)(fn))

static int on_initialize(ompt_function_lookup_t lookup, int device,
                         ompt_data_t *tool_data)
{
    (void)device;
    (void)tool_data;
    ompt_set_callback_t set_cb =
        (ompt_set_callback_t)lookup("ompt_set_callback");
    if (!set_cb)
        return 0;
    get_task_info = (ompt_get_task_info_t)lookup("ompt_get_task_info");
    REGISTER(ompt_callback_thread_begin, on_thread_begin);
    REGISTER(ompt_callback_thread_end, on_thread_end);
    REGISTER(ompt_callback_parallel_begin, on_parallel_begin);
    REGISTER(ompt_callback_parallel_end, on_parallel_end);
    REGISTER(ompt_callback_implicit_task, on_implicit_task);
    REGISTER(ompt_callback_sync_region, on_sync_region);
    REGISTER(ompt_callback_work, on_work);
    REGISTER(ompt_callback_dispatch, on_dispatch);
    REGISTER(ompt_callback_masked, on_masked);
    REGISTER(ompt_callback_task_create, on_task_create);
    REGISTER(ompt_callback_dependences, on_dependences);
    REGISTER(ompt_callback_task_schedule, on_task_schedule);
    REGISTER(ompt_callback_mutex_acquire, on_mutex_acquire);
    REGISTER(ompt_callback_mutex_acquired, on_mutex_acquired);
    REGISTER(ompt_callback_mutex_released, on_mutex_released);
    REGISTER(ompt_callback_target_emi, on_target);
    REGISTER(ompt_callback_control_tool, on_control_tool);
    REGISTER(ompt_callback_nest_lock, on_nest_lock);
    REGISTER(ompt_callback_sync_region_wait, on_sync_region_wait);
    active = 1;
    atexit(at_exit);
    at_quick_exit(at_exit);
    return 1;
}

/* The command line as a shell would take it back: arguments that hold
 * anything but plain characters are single-quoted. */
static void read_cmdline(void)
{
    char raw[4096];
    FILE *f = fopen("/proc/self/cmdline", "rb");
    if (!f)
        return;
    size_t n = fread(raw, 1, sizeof(raw) - 1, f), o = 0, i = 0;
    /* more than fits: the command line ends in a mark that says so */
    int cut = n == sizeof(raw) - 1 && fgetc(f) != EOF;
    fclose(f);
    raw[n] = 0;
    while (i < n && o + 8 < sizeof(cmdline)) {
        const char *arg = raw + i;
        size_t len = strlen(arg);
        int plain = len > 0 &&
                    strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOP"
                                "QRSTUVWXYZ0123456789-_./=:,+@%") == len;
        if (o)
            cmdline[o++] = ' ';
        if (!plain)
            cmdline[o++] = '\'';
        size_t k = 0;
        for (; k < len && o + 6 < sizeof(cmdline); k++) {
            if (arg[k] == '\'' && !plain) { /* ' -> '\'' */
                memcpy(cmdline + o, "'\\''", 4);
                o += 4;
            } else {
                cmdline[o++] = arg[k];
            }
        }
        cut |= k < len;
        if (!plain)
            cmdline[o++] = '\'';
        i += len + 1;
    }
    static const char more[] = " [cut]";
    if (cut || i < n) {
        if (o > sizeof(cmdline) - sizeof(more))
            o = sizeof(cmdline) - sizeof(more);
        memcpy(cmdline + o, more, sizeof(more) - 1);
        o += sizeof(more) - 1;
    }
    cmdline[o] = 0;
}

/* Writes the run's metadata into the first stream. */
static void write_meta(void)
{
    tstate *ts = self;
    if (!ts)
        return;
    char buf[64];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
    char bias[32];
    snprintf(bias, sizeof(bias), "%llu", (unsigned long long)read_bias);
    char read_ns[32]; /* a PMU metric's measured read cost */
    snprintf(read_ns, sizeof(read_ns), "%.0f", metric.pmu_read_ns);
    /* relative source paths are relative to it (the report reads them) */
    char cwd[PATH_MAX];
    if (!getcwd(cwd, sizeof(cwd)))
        cwd[0] = 0;
    /* the origin of the grains' start and end times */
    char origin[32];
    snprintf(origin, sizeof(origin), "%llu",
             (unsigned long long)grain_clock());
    const char *pairs[][2] = {
        {"clock_origin_ns", mode_offline ? origin : NULL},
        {"grain_clock", grain_clk.tsc
                            ? "CLOCK_MONOTONIC, read from the TSC (the "
                              "kernel's clocksource) with a scale measured "
                              "at start-up"
                            : "CLOCK_MONOTONIC"},
        {"metric_read_bias", bias},
        {"metric_read_ns", metric.pmu_read_ns > 0 ? read_ns : NULL},
        {"metric", metric.name},
        {"metric_unit", metric.unit},
        {"metric_reason", metric.reason},
        {"mode", mode_online ? (mode_offline ? "both" : "online")
                             : "offline"},
        {"command", cmdline},
        {"cwd", cwd[0] ? cwd : NULL},
        {"date", buf},
        {"tool_version", WHATIF_VERSION},
        {"runtime", runtime_name},
        {"runtime_note", getenv("WHATIF_GOMP")
                             ? "built with GCC's OpenMP (libgomp); run on "
                               "LLVM libomp, which implements its entry "
                               "points and the tools interface"
                             : NULL},
        {"exec_note", exec_replaced
                          ? "the program replaced itself (exec) after it "
                            "ran OpenMP: this profile is of its last image "
                            "only"
                          : NULL},
    };
    for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
        if (!pairs[i][1])
            continue;
        stream_meta(&ts->st, pairs[i][0], pairs[i][1]);
        if (mode_online)
            online_meta(pairs[i][0], pairs[i][1]);
    }
    if (factor_list[0]) {
        stream_meta(&ts->st, "factors", factor_list);
        if (mode_online)
            online_meta("factors", factor_list);
    }
    if (stream_context()) {
        char depth[16];
        snprintf(depth, sizeof(depth), "%d", stream_context());
        stream_meta(&ts->st, "context", depth);
        if (mode_online)
            online_meta("context", depth);
    }
}

static ompt_start_tool_result_t result = {on_initialize, on_finalize, {0}};

/* The return address of the program's call into the runtime that is
 * starting it now (the first frame past the runtime's on the stack).  When
 * the first construct the main thread reports is that same call, the
 * runtime's initialization ran inside it, not program code (start_work).
 * backtrace() also loads its unwinder here, not in a callback. */
static void find_init_site(void)
{
    void *frames[CALL_SITE_FRAMES];
    int n = backtrace(frames, CALL_SITE_FRAMES);
    Dl_info rt, fi;
    if (n < 3 || !dladdr(frames[1], &rt))
        return;
    for (int i = 2; i < n; i++)
        if (dladdr(frames[i], &fi) && fi.dli_fbase != rt.dli_fbase) {
            init_site = frames[i];
            return;
        }
}

/* Reads WHATIF_* once.  A bad value disables profiling with one line on
 * stderr; the program itself runs unchanged. */
__attribute__((visibility("default"))) ompt_start_tool_result_t *
ompt_start_tool(unsigned int omp_version,
                                          const char *runtime_version)
{
    if (not_ours) /* a child left alone: `whatif run` may say it ran */
        touch_marker(".whatif-child-started");
    if (not_ours || forked_child)
        return NULL;
    if (!tool_pid)
        tool_pid = getpid();
    snprintf(runtime_name, sizeof(runtime_name), "%s (OpenMP %u)",
             runtime_version ? runtime_version : "unknown runtime",
             omp_version);
    cpu_before_tool = main_metric_now();
    char err[8192] = "";
    const char *mode = getenv("WHATIF_MODE");
    if (!mode || !*mode || !strcmp(mode, "online")) {
        mode_online = 1;
    } else if (!strcmp(mode, "offline")) {
        mode_offline = 1;
    } else if (!strcmp(mode, "both")) {
        mode_online = mode_offline = 1;
    } else {
        fprintf(stderr,
                "whatif: WHATIF_MODE=%s: use online, offline or both; "
                "profiling disabled\n", mode);
        return NULL;
    }
    if (!metric_chosen &&
        counter_choose(getenv("WHATIF_METRIC"), &metric, err, sizeof(err))) {
        fprintf(stderr, "whatif: WHATIF_METRIC: %s; profiling disabled\n",
                err);
        return NULL;
    }
    if (metric.pmu_read_ns > COUNTER_SLOW_READ_NS)
        fprintf(stderr,
                "whatif: note: one read of %s costs %.1f us here (a virtual "
                "machine's PMU traps every read; an rdpmc takes tens of "
                "ns): the program will run much slower than usual; the "
                "default metric, thread CPU time, costs ~0.02 us\n",
                metric.name, metric.pmu_read_ns / 1000);
    grain_from_reads = counter_clock_setup(&grain_clk, &metric);
    alloc_gap_scaled = !strcmp(metric.unit, "ns")             ? 1
                       : !strcmp(metric.unit, "instructions") ||
                               !strcmp(metric.unit, "cycles") ? 0
                                                              : -1;
    const char *out = getenv("WHATIF_OUT");
    if (!out || !*out)
        out = "whatif-out";
    /* A relative directory is taken from where the program stands now:
     * one that changes directory later still writes its profile here. */
    char cwd[2048] = "";
    if (out[0] != '/' && (!getcwd(cwd, sizeof(cwd)) || cwd[0] != '/'))
        cwd[0] = 0;
    if (snprintf(out_dir, sizeof(out_dir), "%s%s%s%s%s", cwd,
                 cwd[0] ? "/" : "", out, child_dir[0] ? "/" : "",
                 child_dir) >= (int)sizeof(out_dir)) {
        fprintf(stderr, "whatif: WHATIF_OUT is too long; profiling "
                        "disabled\n");
        return NULL;
    }
    out = out_dir;
    char dir[4200];
    snprintf(dir, sizeof(dir), "%s/trace", out);
    if ((mkdir(out, 0777) && errno != EEXIST) ||
        stream_setup(mode_offline ? dir : NULL, err, sizeof(err))) {
        if (errno && !err[0])
            snprintf(err, sizeof(err), "%s: %s", out, strerror(errno));
        fprintf(stderr, "whatif: WHATIF_OUT: %s; profiling disabled\n", err);
        return NULL;
    }
    /* Tells `whatif run` that the runtime started: a run that leaves no
     * such file ran no OpenMP construct. */
    char mark[4300];
    snprintf(mark, sizeof(mark), "%s/.whatif-started", out);
    /* Already there: an earlier image of this process ran OpenMP and
     * replaced itself (exec), leaving no profile of its own. */
    if (access(mark, F_OK) == 0) {
        exec_replaced = 1;
        fprintf(stderr, "whatif: note: the program replaced itself (exec) "
                        "after it ran OpenMP: only its last image is "
                        "profiled\n");
    }
    int mfd = open(mark, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (mfd >= 0)
        close(mfd);
    /* What-if factors: asked for, or the default sweep when the program
     * carries whatif.h annotations. */
    const char *flist = getenv("WHATIF_FACTORS");
    double *factors = NULL;
    size_t nf = 0;
    if ((flist && *flist) || regions_program_annotated()) {
        if (!flist || !*flist)
            flist = SCEN_DEFAULT_FACTORS;
        if (scen_parse_factors(flist, &factors, &nf, err, sizeof(err))) {
            fprintf(stderr, "whatif: WHATIF_FACTORS: %s; profiling "
                            "disabled\n", err);
            return NULL;
        }
        snprintf(factor_list, sizeof(factor_list), "%s", flist);
    }
    int setup_failed = mode_online && online_setup(factors, nf);
    free(factors);
    if (setup_failed) {
        fprintf(stderr, "whatif: out of memory; profiling disabled\n");
        return NULL;
    }
    if (mode_online)
        online_set_region_tags(regions_tags, NULL);
    if (mode_online) {
        stream_set_loc_hook(online_loc);
        stream_set_meta_hook(online_meta);
    }
    const char *ctx = getenv("WHATIF_CONTEXT");
    if (ctx && *ctx) {
        char *end;
        long depth = strtol(ctx, &end, 10);
        if (*end || depth < 0 || depth > STREAM_CHAIN_FRAMES) {
            fprintf(stderr, "whatif: WHATIF_CONTEXT=%s: use 0 (none) to %d "
                            "call sites; profiling disabled\n", ctx,
                    STREAM_CHAIN_FRAMES);
            return NULL;
        }
        stream_set_context((int)depth);
    }
    if (!cmdline[0])
        read_cmdline();
    if (mode_offline)
        install_crash_flush();
    find_init_site();
    return &result;
}
