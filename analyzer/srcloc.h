/* srcloc.h - source locations for the code addresses the profiler records.
 */
#ifndef WHATIF_SRCLOC_H
#define WHATIF_SRCLOC_H

#include <inttypes.h>
#include <stddef.h>

#include "loctab.h"
#include "ospg.h"

/* Builds *out, a copy of in where every "module+0xOFFSET" location is
 * replaced by "file:line" from the module's debug information.  Locations
 * without debug information keep "binary+0xOFFSET"; *unresolved counts
 * them and warn (may be NULL) gets one line about the first.  Returns 0, or
 * -1 when out of memory (*out untouched). */
int srcloc_resolve(const loctab *in, loctab **out, size_t *unresolved,
                   char *warn, size_t warnlen);

/* Merges the rows of locations that resolved to the same directive and
 * file:line (a compiler may emit one directive's runtime call twice): their
 * instances, work, spans and critical work add up under the first id.  An
 * instance nested in another of the other id is then counted twice (rare:
 * recursion through two copies of one call).  Returns the rows merged. */
int srcloc_merge_profile(ospg_profile *p, const loctab *lt);

#endif
