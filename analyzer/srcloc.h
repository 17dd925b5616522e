/* srcloc.h - source locations for the code addresses the profiler records.
 */
#ifndef WHATIF_SRCLOC_H
#define WHATIF_SRCLOC_H

#include <inttypes.h>
#include <stddef.h>

#include "loctab.h"

/* Builds *out, a copy of in where every "module+0xOFFSET" location is
 * replaced by "file:line" from the module's debug information.  Locations
 * without debug information keep "binary+0xOFFSET"; *unresolved counts
 * them and warn (may be NULL) gets one line about the first.  Returns 0, or
 * -1 when out of memory (*out untouched). */
int srcloc_resolve(const loctab *in, loctab **out, size_t *unresolved,
                   char *warn, size_t warnlen);

#endif
