/* online.h - the on-the-fly profile, computed inside the profiled program.
 *
 * The profiler's graph records go straight into the analysis core
 * (analyzer/ospg.h) instead of a trace: a node folds into its parent as
 * soon as it completes, so memory is bounded by the nodes live at once,
 * whatever the length of the run.  At the end the profile is written like
 * the offline analyzer writes it (profile.csv, run.json, profile.db), by
 * the same code.  One lock serializes the core; every call here takes it,
 * so callers must not hold it.  Node handles are the core's own.
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

/* The root node (the program). */
ospg_node *online_root(void);

/* Graph records, as in trace.h but with core node handles.  group, when
 * not 0, is created at its first member under owner.  A failure is
 * remembered and reported by online_finish; these return NULL / nothing. */
ospg_node *online_begin(ospg_node *parent, uint64_t idx, ospg_kind kind,
                        uint32_t loc, uint64_t group, ospg_node *owner,
                        const ospg_dep *deps, size_t ndeps);
void online_work(ospg_node *parent, uint64_t idx, uint64_t work,
                 uint32_t loc, uint32_t region);
void online_end(ospg_node *node, uint64_t nchildren, uint32_t loc);
void online_loc(uint32_t loc, const char *directive, const char *where);
void online_meta(const char *key, const char *value);

/* Ends the program node and writes the profile into dir.  partial: the
 * run was cut short (exit() inside a construct): every open node is
 * closed as it stands.  Later records are ignored.  Returns 0, or -1 with
 * one line in err (on success err holds a warning or ""). */
int online_finish(uint64_t root_nchildren, int partial, const char *dir,
                  char *err, size_t errlen);

#endif
