/* trace.h - the offline trace: one binary stream per profiled thread.
 *
 * The writer is used inside the profiled program: it never allocates after
 * open, never locks, and writes a whole block with one write(2) when its
 * buffer fills.  The reader is used by the analyzer and by the fuzz target:
 * it never trusts a byte, never crashes, and reports every problem as one
 * line naming the file and the byte offset.  Format: docs/trace-format.md.
 */
#ifndef WHATIF_TRACE_H
#define WHATIF_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "ospg.h"

#define TRACE_MAGIC "WHATIFTR"
#define TRACE_VERSION 8u  /* written; the reader also reads versions 1-7 */
/* Version 8: the file header's flags.  This one says the recorder never
 * ends a node begun with a location (its own or its group's) with another
 * location: the analysis may then drop nested instances early
 * (ospg_set_fixed_locations).  An END that breaks it is an error. */
#define TRACE_FLAG_FIXED_LOCS 1u
#define TRACE_FLAGS_KNOWN TRACE_FLAG_FIXED_LOCS
/* Version 7: a block of graph records only (no LOC, META, REGION or NOTE)
 * sets this bit of its length, and its stored CRC is the payload's XOR
 * TRACE_GRAPH_ONLY_CRC, so that a damaged bit is a CRC mismatch.  A reader
 * after names only (trace_reader_skim) passes such a block unread. */
#define TRACE_BLOCK_GRAPH_ONLY 0x80000000u
#define TRACE_GRAPH_ONLY_CRC 0x67726166u /* "graf" */
#define TRACE_BLOCK_MAX (1u << 20) /* largest block payload a reader accepts */
#define TRACE_MAX_DEPS 65536u      /* most depend items one record may carry */
#define TRACE_MAX_SAMPLES 65536u   /* most sampled lines one WORK may carry */
#define TRACE_MAX_STR 65536u       /* longest string field */

/* Node id 0 is the root; it is begun implicitly and ended by an END record. */
#define TRACE_ROOT_ID 0u

/* Type 4 (a separate GROUP record in drafts of version 1) does not exist:
 * a group member's BEGIN names the group's owner itself, and the reader
 * rejects type 4 like any other unknown type. */
typedef enum trace_rec_type {
    TRACE_BEGIN = 1, /* id parent idx kind loc group [owner] ndeps
                      * {addr type}*; owner only when group != 0 */
    TRACE_WORK = 2,  /* parent idx work loc region flags (flags: version 2) */
    TRACE_END = 3,   /* id nchildren loc */
    TRACE_LOC = 5,   /* loc directive where */
    TRACE_META = 6,  /* key value */
    TRACE_REGION = 7, /* region parent loc factor_milli */
    TRACE_NOTE = 8,  /* loc note value (version 2) */
    TRACE_WAIT = 17, /* end_delta duration, coded like TIME (version 6):
                      * the stream's thread waited inside a task, at a
                      * taskwait or a taskgroup's end, running nothing */
    TRACE_LEAF = 13  /* parent idx kind loc group [owner] nchildren
                      * [work wloc region flags] (version 4): a node with
                      * no id whose only child, if nchildren is 1, is a
                      * W-node (ospg_leaf) */
} trace_rec_type;

/* Version 3 writes the commonest graph records in short forms, which the
 * reader returns as the records above (a trace_rec never has these types):
 * a BEGIN without group or depend items, its kind in the type; a WORK of
 * no what-if region and no flags; an END without a location. */
enum {
    TRACE_BEGIN_S0 = 9,  /* id parent idx loc: BEGIN of an S-node */
    TRACE_BEGIN_P0 = 10, /* id parent idx loc: BEGIN of a P-node */
    TRACE_WORK0 = 11,    /* parent idx work loc */
    TRACE_END0 = 12,     /* id nchildren */
    TRACE_LEAF_P0 = 14,  /* parent idx loc work: LEAF of a P-node, no group,
                          * one W-child of its own location, no what-if
                          * region, no flags (version 4) */
    TRACE_WORK_SAMPLED = 15, /* parent idx work loc region flags nsamples
                              * {loc count}*: a WORK with the samples its
                              * code took, by line (version 4) */
    TRACE_TIME = 16 /* end_delta duration: when the grain whose LEAF or END
                     * comes next ran (version 5); returned as that record's
                     * t_start, t_end, never as a record of its own */
};

/* A TIME record's clock is CLOCK_MONOTONIC, in units of 2^TRACE_TIME_SHIFT
 * ns: its end is a zigzag delta from the block's previous TIME's end (0 at
 * a block's start), its duration unsigned. */
#define TRACE_TIME_SHIFT 5u

/* What a NOTE record says about a location: a part of its profile that is
 * not exact, and why.  value is a number that goes with it (see each). */
typedef enum trace_note {
    TRACE_NOTE_ONE_THREAD_LOOP = 1, /* a loop ran in a team of one: its
                                     * chunks were not reported, so its
                                     * parallelism is a lower bound; value:
                                     * 1 */
    TRACE_NOTE_ORDERED_PREFIX = 2,  /* an ordered or doacross loop's chunks
                                     * are modeled as starting with the
                                     * barrier phase, though a thread ran
                                     * serial code before the loop; value:
                                     * the longest such code, metric units */
    TRACE_NOTE_ORDERED_STATIC = 3,  /* an ordered or doacross loop with a
                                     * static schedule: libomp reports one
                                     * chunk per thread, so a thread's
                                     * iterations form one chain; value:
                                     * instances */
    TRACE_NOTE_THREADS = 4,         /* threads the program created itself
                                     * ran OpenMP code: each is modeled as
                                     * parallel with the rest of the program
                                     * from where it started; value: the
                                     * number of such threads (on loc 0) */
    TRACE_NOTE_ORDERED_UNCHAINED = 5, /* an ordered block, sink or source
                                     * ran in a chunk whose node began
                                     * before the loop was known to be
                                     * ordered (another directive came
                                     * first): it is out of the chain, the
                                     * span may be short; value: 1 */
    TRACE_NOTE_TASKWAIT_OUTER = 6,  /* a taskwait inside a loop chunk or a
                                     * taskgroup, while tasks the task
                                     * created outside it had not been
                                     * joined: the graph does not join
                                     * them there, the span may be short;
                                     * value: 1 */
    TRACE_NOTE_DETACH_DEPS = 7,     /* a task with depend items and a
                                     * detach event ended its code before
                                     * the event was fulfilled: its
                                     * dependent tasks wait for the
                                     * fulfilling code too, which the
                                     * graph does not know; the span may
                                     * be short; value: 1 */
    TRACE_NOTE_MAX = 7
} trace_note;

typedef struct trace_rec {
    int type;          /* trace_rec_type */
    uint64_t id;       /* BEGIN, END: node */
    uint64_t parent;   /* BEGIN, WORK: parent node */
    uint64_t idx;      /* BEGIN, WORK, LEAF: index among the parent's
                        * children */
    uint64_t kind;     /* BEGIN, LEAF: ospg_kind */
    uint32_t loc;      /* BEGIN, END, LEAF: OSPG_LOC_NONE allowed; WORK,
                        * LOC */
    uint64_t group;    /* BEGIN, LEAF: group id, 0 = none */
    uint64_t owner;    /* BEGIN, LEAF with group != 0: the group's owner
                        * node (the node every member lies under); else 0 */
    uint64_t work;     /* WORK; LEAF: its W-child's */
    uint32_t region;   /* WORK; LEAF: its W-child's */
    uint32_t flags;    /* WORK: OSPG_W_* (0 in version 1); LEAF: its
                        * W-child's */
    size_t nsamples;   /* WORK: sampled lines, 0 for most */
    const ospg_sample *samples; /* WORK: owned by the reader, valid until
                                 * next; NULL when nsamples is 0 */
    uint32_t note;     /* NOTE: trace_note */
    uint64_t value;    /* NOTE */
    uint64_t nchildren;/* END; LEAF: 0 or 1 */
    uint32_t wloc;     /* LEAF with nchildren 1: the W-child's location */
    uint32_t region_id;    /* REGION: a what-if region path (> 0) */
    uint32_t region_parent;/* REGION: the enclosing path, 0 = none */
    uint64_t factor_milli; /* REGION: own factor in thousandths, 0 = none */
    size_t ndeps;      /* BEGIN */
    const ospg_dep *deps;  /* BEGIN: owned by the reader, valid until next */
    const char *str1;  /* LOC: directive kind; META: key (NUL-terminated) */
    const char *str2;  /* LOC: "file:line"; META: value */
    int timed;         /* LEAF, END: a TIME record came first */
    uint64_t t_start, t_end; /* when timed, and WAIT: CLOCK_MONOTONIC ns
                              * (multiples of 2^TRACE_TIME_SHIFT) */
} trace_rec;

/* ---- Writer ---- */

typedef struct trace_writer trace_writer;

/* Creates path and writes the file header, with flags (TRACE_FLAG_*).
 * buf_size is the block size (0: 256 KiB).  Returns NULL with errno set on
 * failure. */
trace_writer *trace_writer_open(const char *path, uint32_t stream,
                                size_t buf_size, uint64_t flags);

/* Appends one record.  Return 0, or -1 with errno set when a block could not
 * be written (the writer then drops further records and counts them).
 * A worksharing group has no record of its own: each member's BEGIN names
 * the group (group != 0) and its owner node (group_owner, an ancestor of
 * the member); group_owner is ignored when group == 0. */
int trace_write_begin(trace_writer *w, uint64_t id, uint64_t parent,
                      uint64_t idx, ospg_kind kind, uint32_t loc,
                      uint64_t group, uint64_t group_owner,
                      const ospg_dep *deps, size_t ndeps);
int trace_write_work(trace_writer *w, uint64_t parent, uint64_t idx,
                     uint64_t work, uint32_t loc, uint32_t region,
                     uint32_t flags);
/* A WORK whose code was sampled: smp[0..nsmp) are its lines and counts
 * (at most TRACE_MAX_SAMPLES, counts above 0); nsmp 0 is a plain WORK. */
int trace_write_work_sampled(trace_writer *w, uint64_t parent, uint64_t idx,
                             uint64_t work, uint32_t loc, uint32_t region,
                             uint32_t flags, const ospg_sample *smp,
                             size_t nsmp);
int trace_write_end(trace_writer *w, uint64_t id, uint64_t nchildren,
                    uint32_t loc);
/* A node begun and ended at once, with at most one child, a W-node (w, or
 * NULL for none): what BEGIN, WORK (index 0) and END would say, with no
 * node id (nothing can name it). */
int trace_write_leaf(trace_writer *w, uint64_t parent, uint64_t idx,
                     ospg_kind kind, uint32_t loc, uint64_t group,
                     uint64_t group_owner, const ospg_leaf_work *lw);
/* When the grain whose LEAF or END is written next ran: start_ns and end_ns
 * on CLOCK_MONOTONIC (start_ns <= end_ns; kept to 2^TRACE_TIME_SHIFT ns).
 * The record after it must be that LEAF or END. */
int trace_write_time(trace_writer *w, uint64_t start_ns, uint64_t end_ns);

/* A WAIT record: the writer's thread waited, running nothing, from
 * start_ns to end_ns inside a task (same clock and units as TIME). */
int trace_write_wait(trace_writer *w, uint64_t start_ns, uint64_t end_ns);
int trace_write_loc(trace_writer *w, uint32_t loc, const char *directive,
                    const char *where);
int trace_write_meta(trace_writer *w, const char *key, const char *value);
/* A what-if region path: id is region (loc, the BEGIN's location) entered
 * inside path parent; W records name the innermost path in `region`. */
int trace_write_region(trace_writer *w, uint32_t id, uint32_t parent,
                       uint32_t loc, uint64_t factor_milli);

/* A note about location loc (trace_note); the analyzer keeps, per
 * location and note, the largest value. */
int trace_write_note(trace_writer *w, uint32_t loc, uint32_t note,
                     uint64_t value);

/* Writes out the current block (records stay whole: a block never splits a
 * record).  Safe to call from an atexit handler. */
int trace_writer_flush(trace_writer *w);
uint64_t trace_writer_dropped(const trace_writer *w);
/* The errno of the write that failed, or 0. */
int trace_writer_errno(const trace_writer *w);
uint64_t trace_writer_bytes(const trace_writer *w);
/* Flushes, closes and frees.  Returns 0 or -1 if anything was lost. */
int trace_writer_close(trace_writer *w);

/* ---- Reader ---- */

typedef struct trace_reader trace_reader;

/* Opens a trace file (or a memory image, for the fuzz target) and checks
 * its header.  Returns NULL only when out of memory; otherwise check
 * trace_reader_error(): a bad header is reported there and the first
 * trace_reader_next() returns -1. */
trace_reader *trace_reader_open(const char *path);
trace_reader *trace_reader_open_mem(const void *buf, size_t len,
                                    const char *name);
void trace_reader_close(trace_reader *r);

/* Decodes the next record into *rec.  Returns 1 for a record, 0 at a clean
 * end of stream, -1 on any error (the message is in trace_reader_error() as
 * "NAME: byte OFFSET: what is wrong"; further calls keep returning -1). */
int trace_reader_next(trace_reader *r, trace_rec *rec);
const char *trace_reader_error(const trace_reader *r);
/* With on, trace_reader_next returns LOC, META, REGION and NOTE records
 * only: a fast first pass for names, metadata and regions.  The graph
 * records and WAITs it skips are checked only as far as finding their end
 * needs (and TIMEs and WAITs as read in full); a block's CRC is checked
 * when a record is returned from it or a fault found there (a full read
 * checks every block). */
void trace_reader_skim(trace_reader *r, int on);
uint32_t trace_reader_stream(const trace_reader *r);
/* The file header's flags (TRACE_FLAG_*; 0 before version 8). */
uint64_t trace_reader_flags(const trace_reader *r);
uint64_t trace_reader_offset(const trace_reader *r); /* of the next record */

#endif
