/* online.h - the on-the-fly profile, computed inside the profiled program.
 *
 * Every profiled thread applies its own graph events to one concurrent
 * builder (analyzer/ospg.h, ospg_set_concurrent) as they happen: a thread
 * folds the subtrees it completes, and threads meet only at the nodes they
 * share (a barrier phase, the scope a task was created in), each locked
 * for the few hundred nanoseconds an update takes.  There is no queue and
 * no serial drainer.  A node folds into its parent as soon as it completes,
 * so memory stays bounded by the nodes live at once, whatever the length
 * of the run.  At the end the profile is written like the offline analyzer
 * writes it (profile.csv, run.json, profile.db), by the same code.
 *
 * Nodes are named by the builder's own pointers: a node's begin must
 * return before any thread names it as a parent (the caller publishes the
 * pointer, as it publishes the node).
 */
#ifndef WHATIF_ONLINE_H
#define WHATIF_ONLINE_H

#include <stddef.h>
#include <stdint.h>

#include "ospg.h"

/* Creates the builder with the measured profile plus, for each of the nf
 * factors, a what-if scenario speeding up every annotated region ("all").
 * Returns 0 or -1 (out of memory). */
/* W-nodes of what-if regions are tagged with them (ospg.h, "Tags"); call
 * after online_setup. */
void online_set_region_tags(ospg_region_tags_fn fn, void *arg);

int online_setup(const double *factors, size_t nf);

/* One thread's handle, owned by that thread; it lives until the process
 * ends.  NULL when out of memory (the profile is then reported as
 * failed). */
typedef struct online_thread online_thread;
online_thread *online_thread_open(uint32_t thread_index);

/* The program root (the graph's root S-node). */
ospg_node *online_root(void);

/* Graph events.  A group member names its group (an id of the caller's,
 * created at its first member) and the group's owner.  A parent or node
 * of NULL (its begin failed) makes the profile fail; so does any error of
 * the builder, remembered and reported by online_finish.  online_begin
 * returns the new node, NULL when it could not be begun or the profile is
 * closed. */
ospg_node *online_begin(online_thread *t, ospg_node *parent, uint64_t idx,
                        ospg_kind kind, uint32_t loc, uint64_t group,
                        ospg_node *owner, const ospg_dep *deps, size_t ndeps);
/* online_begin with the node's first child, a W-node (ospg_begin_work). */
ospg_node *online_begin_work(online_thread *t, ospg_node *parent,
                             uint64_t idx, ospg_kind kind, uint32_t loc,
                             uint64_t group, ospg_node *owner,
                             const ospg_dep *deps, size_t ndeps,
                             const ospg_leaf_work *w);
void online_work(online_thread *t, ospg_node *parent, uint64_t idx,
                 uint64_t work, uint32_t loc, uint32_t region, unsigned flags);
/* online_work with the samples of the W-node's code (ospg_work_sampled). */
void online_work_sampled(online_thread *t, ospg_node *parent, uint64_t idx,
                         uint64_t work, uint32_t loc, uint32_t region,
                         unsigned flags, const ospg_sample *smp,
                         size_t nsmp);
void online_end(online_thread *t, ospg_node *node, uint64_t nchildren,
                uint32_t loc);
/* online_work then online_end of the same node, in one update of it. */
void online_work_end(online_thread *t, ospg_node *node, uint64_t idx,
                     uint64_t work, uint32_t loc, uint32_t region,
                     unsigned flags, uint64_t nchildren, uint32_t end_loc);
/* A node begun and ended at once with at most one child, a W-node
 * (ospg_leaf); w NULL for none. */
void online_leaf(online_thread *t, ospg_node *parent, uint64_t idx,
                 ospg_kind kind, uint32_t loc, uint64_t group,
                 ospg_node *owner, const ospg_leaf_work *w);

void online_loc(uint32_t loc, const char *directive, const char *where);
void online_meta(const char *key, const char *value);
/* A note on a location (trace.h, trace_note), reported with the profile. */
void online_note(uint32_t loc, uint32_t note, uint64_t value);

/* Stops every thread's events (a thread inside an event finishes it
 * first), ends the program node and writes the profile into dir.
 * partial: the run was cut short (exit() inside a construct): every open
 * node is closed as it stands.  Later events are ignored.  Returns 0, or
 * -1 with one line in err (on success err holds a warning or ""). */
int online_finish(uint64_t root_nchildren, int partial, const char *dir,
                  char *err, size_t errlen);

#endif
