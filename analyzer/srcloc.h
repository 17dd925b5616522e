/* srcloc.h - source locations for the code addresses the profiler records.
 */
#ifndef WHATIF_SRCLOC_H
#define WHATIF_SRCLOC_H

#include <inttypes.h>
#include <stddef.h>

#include "loctab.h"
#include "ospg.h"
#include "report.h"

/* Builds *out, a copy of in where every "module+0xOFFSET" location is
 * replaced by "file:line" from the module's debug information.  Locations
 * that stay unresolved keep "binary+0xOFFSET"; *unresolved counts them and
 * warn (may be NULL) gets one line saying why for the first: the module is
 * gone, was rebuilt since the run (its build-id differs from the one meta
 * records as "build-id PATH"; meta may be NULL), or has no line there (no
 * debug information).  Returns 0, or -1 when out of memory (*out
 * untouched). */
int srcloc_resolve(const loctab *in, const report_meta *meta, loctab **out,
                   size_t *unresolved, char *warn, size_t warnlen);

/* Merges the rows of locations that resolved to the same directive and
 * file:line (a compiler may emit one directive's runtime call twice): their
 * instances, work, spans and critical work add up under the first id.  An
 * instance nested in another of the other id is then counted twice (rare:
 * recursion through two copies of one call).  Returns the rows merged. */
int srcloc_merge_profile(ospg_profile *p, const loctab *lt);

#endif
