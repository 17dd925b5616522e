/* scenario.h - the what-if scenarios an analysis computes.
 *
 * A scenario set starts with scenario 0, the measured profile, and grows by
 * one scenario per (selection, factor): every annotated region together
 * ("all"), one region, a location named on the command line, or each
 * region's own factor ("expected").  Selections of regions are turned into
 * the region-path ids that the W-nodes carry (a path selects when any
 * region on it is selected).  The set owns every array its scenarios point
 * to.
 */
#ifndef WHATIF_SCENARIO_H
#define WHATIF_SCENARIO_H

#include <stddef.h>
#include <stdint.h>

#include "loctab.h"
#include "ospg.h"

typedef struct region_path {
    uint32_t parent;        /* enclosing path, 0: none */
    uint32_t loc;           /* location of the region's BEGIN */
    double own_factor;      /* innermost own factor along the path, 0 none */
    int defined;
} region_path;

typedef struct scen_set {
    size_t n;
    ospg_scenario *scen;    /* [n] */
    char **names;           /* [n] */
    double *factors;        /* [n]; 0 for "own" factors */
    region_path *paths;     /* by path id */
    size_t npaths;
    uint32_t **owned;       /* selection arrays to free */
    size_t nowned;
    const loctab *burden_names; /* the "burdened" scenario's: directives */
    uint64_t task_burden;       /* of every task */
    uint64_t chunk_burden;      /* of every loop chunk and section */
} scen_set;

#define SCEN_DEFAULT_FACTORS "2,4,8,16,64,inf"

/* Parses "2,4,8,inf" (each > 1, "inf" allowed) into a new array.
 * Returns 0, or -1 with one line in err. */
int scen_parse_factors(const char *list, double **out, size_t *n, char *err,
                       size_t errlen);

/* An empty set holding the measured scenario.  Returns 0 or -1 (memory). */
int scen_init(scen_set *ss);
void scen_free(scen_set *ss);

/* Records a REGION record (from the trace or the profiler). */
int scen_add_path(scen_set *ss, uint32_t id, uint32_t parent, uint32_t loc,
                  uint64_t factor_milli);

/* Adds scenarios; each returns 0 or -1 (out of memory). */
int scen_add_all_regions(scen_set *ss, const double *f, size_t nf);
int scen_add_each_region(scen_set *ss, const loctab *lt, const double *f,
                         size_t nf);
int scen_add_expected(scen_set *ss);  /* only if a region has a factor */
int scen_add_locs(scen_set *ss, const char *name, const uint32_t *locs,
                  size_t nlocs, const double *f, size_t nf);

/* "burdened": every task's grain burdened with task_cost, every loop
 * chunk's (sections too) with chunk_cost and every barrier phase with
 * barrier_cost, what the run measured creating a task, handing out a chunk
 * and passing a barrier (any may be 0: not measured).  names gives the
 * directives of the locations (kept, not owned). */
int scen_add_burdened(scen_set *ss, const loctab *names, uint64_t task_cost,
                      uint64_t chunk_cost, uint64_t barrier_cost);

/* A location named on the command line: "file:line" (matched against the
 * end of resolved locations), "binary+0x..", or "program".  Selects the
 * W-nodes at that location, or in that region.  Returns 0, or -1 with one
 * line in err (no such location, out of memory). */
int scen_add_spec(scen_set *ss, const char *spec, const loctab *lt,
                  const double *f, size_t nf, char *err, size_t errlen);

/* The locations of the regions path lies in (itself and the paths it was
 * entered from, each location once), as ospg_region_tags_fn wants them
 * (arg: the scen_set). */
size_t scen_region_tags(void *arg, uint32_t path, uint32_t *locs,
                        size_t max);

/* The regions' own factors, as ospg_scenario.region_factor wants them. */
double scen_own_factor(void *arg, uint32_t path);

#endif
