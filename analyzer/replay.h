/* replay.h - turns an offline trace directory back into a profile.
 *
 * Reads every per-thread stream of a trace directory and feeds its records
 * to the analysis core (ospg.h) in an order that respects causality: a
 * record that names a node no stream has begun yet waits until one does.
 * Memory is bounded by the nodes live at once (begun, not yet folded), one
 * pending record and one block buffer per stream, never by trace length.
 */
#ifndef WHATIF_REPLAY_H
#define WHATIF_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "loctab.h"
#include "ospg.h"
#include "trace.h"

#define REPLAY_STREAM_PREFIX "thread-"
#define REPLAY_STREAM_SUFFIX ".wit"

/* A grain: a task instance or a loop chunk (a P-node with a location),
 * reported when its whole subtree has folded.  Ids count grains in the
 * order their records were applied, from 1; 0 is the program. */
typedef struct replay_grain {
    uint64_t id;
    uint64_t parent;    /* the grain whose code created it (0: the program
                         * or an implicit task) */
    uint64_t scope;     /* the sync scope it joins (a taskwait, taskgroup,
                         * barrier phase: its nearest S-node ancestor),
                         * numbered like grains from 1; 0: the program's end */
    uint64_t instance;  /* the worksharing instance of a chunk (from 1), 0
                         * for a task */
    uint64_t work;      /* its own work: of the W-nodes it holds that no
                         * nested grain holds */
    uint64_t children;  /* grains whose parent it is */
    uint32_t loc;
    uint32_t parent_loc; /* the parent's location (OSPG_LOC_PROGRAM: 0) */
    uint32_t thread;    /* the stream (thread) that ended it */
    uint32_t depth;     /* 1 + its parent's (the program's grains: 1) */
    int timed;          /* start_ns, end_ns known (a trace of version 5) */
    uint64_t start_ns, end_ns; /* when it first started and when it ended,
                                * CLOCK_MONOTONIC */
} replay_grain;

/* What the replay tells its caller besides the graph (all may be NULL). */
typedef struct replay_hooks {
    void (*meta)(void *arg, const char *key, const char *value);
    void (*region)(void *arg, uint32_t id, uint32_t parent, uint32_t loc,
                   uint64_t factor_milli);
    void (*note)(void *arg, uint32_t loc, uint32_t note, uint64_t value);
    void *arg;
    /* what-if region tags of the W-nodes (ospg_set_region_tags), or NULL */
    ospg_region_tags_fn region_tags;
    void *region_tags_arg;
    int scan_only;  /* read names, metadata and regions; skip the graph */
    /* A trace cut short (the program crashed or was killed): a stream
     * that ends inside a block or is damaged from some point on (it ends
     * there), a record naming a node whose BEGIN was lost, and a missing
     * end of the program do not fail the replay; the profile is of what
     * was recorded (ospg_finish_partial). */
    int allow_partial;
    /* A pass longer than a second says how far it is on stderr, when that
     * is a terminal: "whatif: <progress> NN%" (NULL: never). */
    const char *progress;
    /* every grain, once its subtree has folded (costs a little memory per
     * live node; NULL: none tracked) */
    void (*grain)(void *arg, const replay_grain *g);
    /* the thread of stream `thread` waited inside a task, running
     * nothing, from start_ns to end_ns (a trace of version 6; NULL: none) */
    void (*wait)(void *arg, uint32_t thread, uint64_t start_ns,
                 uint64_t end_ns);
    /* Threads that apply the streams (replay_files): 0 picks one per
     * stream up to the CPUs this process may use (one for a trace under
     * 1 MiB), 1 applies them all on the caller's thread.  Several threads
     * are used only for a trace of several streams read in full, with no
     * hook but region_tags (which they call concurrently).  A trace they cannot replay (an error, a record
     * naming a node no stream begins, with allow_partial a trace cut
     * short) is replayed again on one thread, so the profile, errors and
     * their messages do not depend on it. */
    unsigned threads;
} replay_hooks;

typedef struct replay_stats {
    uint64_t records;
    uint64_t bytes;
    size_t streams;
    uint64_t peak_live_nodes;
    int partial;             /* allow_partial was needed */
    uint64_t lost_records;   /* records that named nodes never begun */
    unsigned threads;        /* threads that applied the records */
    int solo;                /* they stopped and one went on with every
                              * stream (the streams waited on each other) */
    char partial_why[4096];   /* the first reason, when partial */
} replay_stats;

/* ---- The engine: one record at a time ----
 *
 * Maps the records' node and group ids to the core's nodes and applies
 * them.  The caller decides the order; a record naming a node not begun
 * yet is refused (0) and must be offered again later.  The on-the-fly
 * profiler drives the same engine from in-memory queues. */
typedef struct replay_engine replay_engine;

/* A fresh builder with the given scenarios; locations go into lt, META
 * and REGION records to hooks (may be NULL).  unit names what a record's
 * position counts in messages ("byte").  NULL when out of memory. */
replay_engine *replay_engine_new(size_t nscen, const ospg_scenario *scen,
                                 loctab *lt, const replay_hooks *hooks,
                                 const char *unit);
void replay_engine_free(replay_engine *e);

/* Applies r, read from src at position off.  Returns 1 when applied, 0
 * when it names a node (a parent, or a group's owner) not begun yet, -1
 * on error (replay_engine_error(): "SRC: UNIT OFF: what"). */
int replay_engine_apply(replay_engine *e, const trace_rec *r,
                        const char *src, uint64_t off);

/* Sets the error for a record that can never be applied (nothing will
 * begin the node it waits on). */
void replay_engine_blocked(replay_engine *e, const trace_rec *r,
                           const char *src, uint64_t off);

/* Computes *out (ospg_finish, or ospg_finish_partial when partial); -1
 * with the error set ("N nodes never completed (why)"). */
int replay_engine_finish(replay_engine *e, int partial, ospg_profile *out);

/* The records come from this process's own profiler, whose node ids are
 * unique by construction: skips the check that a BEGIN's id is new. */
void replay_engine_trust(replay_engine *e);

const char *replay_engine_error(const replay_engine *e);
ospg *replay_engine_graph(replay_engine *e);
int replay_engine_root_ended(const replay_engine *e);

/* ---- Trace files ---- */

/* Replays the trace files paths[0..npaths) into a fresh builder with the
 * given scenarios, defines their locations in lt, passes META and REGION
 * records to the hooks (may be NULL), and computes *out (left empty with
 * hooks->scan_only).  Returns 0, or -1 with one line in err ("FILE: byte
 * N: what", or what is missing); *out is then empty. */
int replay_files(const char *const *paths, size_t npaths, size_t nscen,
                 const ospg_scenario *scen, loctab *lt,
                 const replay_hooks *hooks, ospg_profile *out,
                 replay_stats *stats, char *err, size_t errlen);

/* Lists the stream files of a trace directory (sorted by name) and replays
 * them.  A directory with no stream file is an error. */
int replay_dir(const char *dir, size_t nscen, const ospg_scenario *scen,
               loctab *lt, const replay_hooks *hooks, ospg_profile *out,
               replay_stats *stats, char *err, size_t errlen);

#endif
