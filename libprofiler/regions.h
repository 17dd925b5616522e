/* regions.h - the what-if region paths of a profiled run.
 *
 * An annotated region (__WHATIF_BEGIN__ ... __WHATIF_END__) entered inside
 * another gets its own path id, so that a W-node names one path and a
 * scenario speeding up a region can select every path through it.  Paths
 * are interned once (under a mutex, at the first entry of that nesting);
 * the lookups made while folding the graph take no lock.
 */
#ifndef WHATIF_REGIONS_H
#define WHATIF_REGIONS_H

#include <stddef.h>
#include <stdint.h>

/* The path of region loc (own factor in thousandths, 0: none) entered
 * inside path parent (0: none).  *is_new tells a first sight, whose REGION
 * record the caller writes.  Returns 0 when out of memory or ids. */
uint32_t regions_enter(uint32_t parent, uint32_t loc, uint64_t factor_milli,
                       int *is_new);

/* The location of path's innermost region (0: none). */
uint32_t regions_loc(uint32_t path);

/* The path a region was entered from (0 at the outside). */
uint32_t regions_parent(uint32_t path);

/* The locations of the regions path lies in (its own and those it was
 * entered from, each once), as ospg_region_tags_fn wants them (arg
 * unused).  Lock-free. */
size_t regions_tags(void *arg, uint32_t path, uint32_t *locs, size_t max);

/* 1 when loc is one of the regions path lies in.  Lock-free. */
int regions_on_path(uint32_t path, uint32_t loc);

/* The own factor that applies to W-nodes of path: the innermost region on
 * it that has one; 0 when none.  Lock-free. */
double regions_factor(uint32_t path);

/* 1 once any region has an own factor. */
int regions_have_factors(void);

/* 1 when the program calls omp_control_tool, i.e. uses whatif.h. */
int regions_program_annotated(void);

#endif
