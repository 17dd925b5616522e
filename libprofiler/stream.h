/* stream.h - the profiler's per-thread output: node ids, locations, records.
 *
 * Each profiled thread owns one trace stream (DIR/thread-NNNN.wit) and a
 * node-id counter; nothing here takes a lock on the fast path.  Locations
 * are interned once per (code address, directive) under a mutex and cached
 * per thread; a new location writes a LOC record "module+0xOFFSET" that the
 * analyzer resolves to file:line.
 */
#ifndef WHATIF_STREAM_H
#define WHATIF_STREAM_H

#include <stdint.h>

#include "ospg.h"
#include "trace.h"

#define STREAM_LOC_CACHE 64 /* even: pairs of ways */

typedef struct stream_thread {
    uint32_t index;          /* stream number */
    uint64_t next_seq;       /* node ids: (index + 1) << 40 | seq */
    trace_writer *w;
    struct {
        const void *code;
        const void *ident;
        int kind;
        uint32_t chain;
        uint32_t loc;
    } cache[STREAM_LOC_CACHE];
} stream_thread;

/* Starts the output in dir (created if missing; old streams removed), or
 * without files when dir is NULL (ids and locations only).  Returns 0 or
 * -1 with a message in err. */
int stream_setup(const char *dir, char *err, size_t errlen);

/* Opens the calling thread's stream; 0 or -1 (the thread then records
 * nothing and the run is reported incomplete). */
int stream_thread_open(stream_thread *st);

static inline uint64_t stream_new_id(stream_thread *st)
{
    return ((uint64_t)(st->index + 1) << 40) | st->next_seq++;
}

/* Directive kinds, as location names. */
enum {
    DIR_PARALLEL, DIR_LOOP, DIR_SECTIONS, DIR_SINGLE, DIR_MASKED,
    DIR_CRITICAL, DIR_LOCK, DIR_ORDERED, DIR_TASK, DIR_TASKLOOP,
    DIR_TASKGROUP, DIR_TASKWAIT, DIR_REGION,
    DIR_LINE, /* a source line where samples fell (not a directive) */
    DIR_COUNT
};

/* The location id of the directive at return address code. */
uint32_t stream_loc(stream_thread *st, const void *code, int kind);
/* The same, for a runtime call that passed ident (an ident_t, or NULL):
 * the construct's line is the one the compiler wrote there, where it
 * differs from the call's own. */
uint32_t stream_loc_ident(stream_thread *st, const void *code,
                          const void *ident, int kind);

/* The name of directive kind (DIR_*). */
const char *stream_dir_name(int kind);

/* The location named (directive, where), interned as any other: for names
 * the profiler makes itself (the events around a serial fragment).  0
 * (the program) when out of memory. */
uint32_t stream_name(stream_thread *st, const char *directive,
                     const char *where);

/* ---- Calling contexts (--context N) ---- */

#define STREAM_CHAIN_FRAMES 16 /* frames a context holds at most */

/* Names every construct by its calling context too, at most depth call
 * sites (0: none, the default).  Call once, before any location. */
void stream_set_context(int depth);
int stream_context(void);

/* The calling context of a construct whose call site is the return
 * address code, called from the program's frames (return addresses,
 * innermost first) in the task whose own context is parent and which the
 * construct at start began (NULL: the initial task): the sites code was
 * inlined from, then each frame's line and its inline sites, then
 * parent's, at most the depth set.  Sites at start's line are left out:
 * the compiler's outlined body is called from its directive's line, a
 * nesting, not a call.  A construct whose runtime call the compiler made
 * a tail call (tail: it may be one) is named by its ident_t: code then
 * returns into its function's caller, whose line is the first site where
 * it differs from the ident_t's; with tail 0 code's own line is never a
 * site (a dynamic loop's runtime call is on its `for` line, the ident_t's
 * on its directive's).  0 when contexts are off. */
uint32_t stream_chain(stream_thread *st, const void *code,
                      const void *ident, int tail,
                      const void *const *frames, int nframes,
                      uint32_t parent, const void *start);

/* stream_loc_ident, the name followed by the context chain's sites (a
 * chain of 0 is none). */
uint32_t stream_loc_ctx(stream_thread *st, const void *code,
                        const void *ident, int kind, uint32_t chain);

/* The location of the source line of a sampled instruction pointer: its
 * directive reads "line:FUNCTION" ("line" without a symbol), its place
 * "file:line", or the module's name where it has no debug information.
 * 0 (the program) when out of memory. */
uint32_t stream_line(stream_thread *st, uint64_t ip);

/* "file:line" (or "module+0xOFFSET") of the instruction before the return
 * address code, for a message.  Takes the location lock. */
void stream_where(const void *code, char *buf, size_t len);

/* Also tells fn about every new location (the on-the-fly profile). */
void stream_set_loc_hook(void (*fn)(uint32_t, const char *, const char *));

/* Also tells fn about the metadata the interning writes (the build-id of
 * every module seen: "build-id PATH" = hex or "none"). */
void stream_set_meta_hook(void (*fn)(const char *, const char *));

/* Writes key=value into the calling thread's stream. */
void stream_meta(stream_thread *st, const char *key, const char *value);

/* Number of streams (profiled threads) opened so far. */
uint32_t stream_count(void);

/* Flushes every stream (from finalize or atexit); returns the number of
 * records dropped on I/O errors. */
uint64_t stream_flush_all(void);

/* The same from a signal handler: no lock, write(2) only.  A writer that
 * another thread is appending to at that moment writes the records it had
 * completed. */
void stream_flush_all_unlocked(void);

#endif
