/* online.h - the on-the-fly profile, computed inside the profiled program.
 *
 * Each profiled thread appends its graph records to its own in-memory
 * queue, without a lock: a fixed-size record per event, published with
 * one release store.  Whichever thread fills a queue chunk then tries to
 * drain every thread's queue into the analysis core (the replay engine of
 * analyzer/replay.h, the code the offline analyzer runs); a thread that
 * finds the core busy carries on, unless its own queue has grown past a
 * bound, in which case it waits and drains.  A node folds into its parent
 * as soon as it completes, so memory stays bounded by the nodes live at
 * once plus the queued records, whatever the length of the run.  At the
 * end the profile is written like the offline analyzer writes it
 * (profile.csv, run.json, profile.db), by the same code.
 */
#ifndef WHATIF_ONLINE_H
#define WHATIF_ONLINE_H

#include <stddef.h>
#include <stdint.h>

#include "ospg.h"

/* Creates the builder with the measured profile plus, for each of the nf
 * factors, a what-if scenario speeding up every annotated region ("all").
 * Returns 0 or -1 (out of memory). */
int online_setup(const double *factors, size_t nf);

/* One thread's record queue, owned by that thread (records may be
 * appended by the owner only); it lives until the process ends.  NULL when
 * out of memory (the profile is then reported as failed). */
typedef struct online_queue online_queue;
online_queue *online_queue_open(uint32_t thread_index);

/* Graph records with the trace's node ids (trace.h; the root is
 * TRACE_ROOT_ID).  A group member names its group and the group's owner.
 * A failure is remembered and reported by online_finish. */
void online_begin(online_queue *q, uint64_t id, uint64_t parent,
                  uint64_t idx, ospg_kind kind, uint32_t loc, uint64_t group,
                  uint64_t owner, const ospg_dep *deps, size_t ndeps);
void online_work(online_queue *q, uint64_t parent, uint64_t idx,
                 uint64_t work, uint32_t loc, uint32_t region, unsigned flags);
void online_end(online_queue *q, uint64_t id, uint64_t nchildren,
                uint32_t loc);

void online_loc(uint32_t loc, const char *directive, const char *where);
void online_meta(const char *key, const char *value);
/* A note on a location (trace.h, trace_note), reported with the profile. */
void online_note(uint32_t loc, uint32_t note, uint64_t value);

/* Drains every queue, ends the program node and writes the profile into
 * dir.  partial: the run was cut short (exit() inside a construct): every
 * open node is closed as it stands.  Later records are ignored.  Returns
 * 0, or -1 with one line in err (on success err holds a warning or ""). */
int online_finish(uint64_t root_nchildren, int partial, const char *dir,
                  char *err, size_t errlen);

/* After online_finish: one line of advice for the user (the on-the-fly
 * fold took a large share of the run), or "". */
const char *online_hint(void);

#endif
