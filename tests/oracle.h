/* oracle.h - the expected profile of a gg_graph, computed by brute force.
 *
 * The oracle implements docs/model.md a second time, independently of
 * analyzer/ospg.c and as literally as it can: it expands the graph into an
 * explicit DAG (an entry and an exit vertex per intermediate node, one
 * weighted vertex per W-node), adds the dependence edges it resolves itself
 * from the depend lists, and computes every span as a longest path over that
 * DAG.  Only ospg_scaled_work() is shared with the core, on purpose, so that
 * what-if weights agree bit for bit.
 *
 * When the root has several longest paths whose location attributions
 * differ, the critical values are not determined by the graph alone (the
 * core picks one path by its tie rules): crit_unique[s] is then 0, and
 * crit_min / crit_max bound what any longest path can attribute to a
 * location.  crit_rule follows the tie rules of docs/model.md (serial
 * chain before a P-child, lower index first, a dependence start only when
 * strictly later) on the tree, a second computation whose spans must equal
 * the DAG's.
 *
 * Tags (a W-node's explicit ones, and those of its region path when the
 * graph says so): a tag location's work and instances are its W-nodes',
 * its span the longest path over the DAG where only its W-nodes weigh,
 * its critical values the work of its W-nodes along the root's paths.
 */
#ifndef WHATIF_TESTS_ORACLE_H
#define WHATIF_TESTS_ORACLE_H

#include <stddef.h>
#include <stdint.h>

#include "graphgen.h"
#include "ospg.h"

typedef struct oracle_loc {
    uint32_t loc;
    uint64_t instances;  /* counted (outermost) instances, a group as one */
    uint64_t work;       /* their measured work */
    uint64_t grains;     /* every P-node of this location, nested or not */
    uint64_t grain_work; /* the W-work whose nearest grain ancestor is one */
    uint64_t grain_max;  /* the most of it one grain holds */
    uint64_t grain_min;  /* the least (0 without grains) */
    int grain_seen;      /* grain_min holds one */
    uint64_t grain_median; /* the ceil(n/2)-th smallest own work, as its
                            * histogram bucket's value (ospg.h) */
    uint64_t *span;      /* [nscen] sum of their spans */
    uint64_t *critical;  /* [nscen] along one longest path of the root */
    uint64_t *crit_min;  /* [nscen] least over all longest paths */
    uint64_t *crit_max;  /* [nscen] most over all longest paths */
    uint64_t *crit_rule; /* [nscen] along the path the tie rules pick */
    int tag;             /* a tag location (ospg.h "Tags"): its span is the
                          * longest path weighing only its W-nodes */
} oracle_loc;

typedef struct oracle_profile {
    size_t nscen;
    uint64_t work;       /* program work */
    uint64_t *span;      /* [nscen] program span */
    int *crit_unique;    /* [nscen] all longest paths attribute alike */
    size_t nlocs;
    oracle_loc *locs;    /* sorted; every location a node or group carries */
    uint64_t nodes;      /* all nodes, the root and W-nodes included */
    /* per node, for diagnostics */
    size_t nnodes;
    uint64_t *node_work; /* [nnodes] */
    uint64_t *node_span; /* [nnodes * nscen], node-major */
    unsigned char *counted; /* [nnodes] is an instance of its location */
    /* the DAG's size, for statistics */
    size_t nvertices, nedges;
} oracle_profile;

/* Weight of W-node w in scenario s (scenario 0: the measured work). */
uint64_t oracle_weight(const ospg_scenario *scen, size_t s, const gg_node *w);

/* Computes the profile of a finalized graph for nscen scenarios (scen[0]
 * ignored; scen may be NULL when nscen == 1).  Returns 0, or -1 on a graph
 * the oracle cannot expand (message on stderr). */
int oracle_compute(const gg_graph *g, size_t nscen, const ospg_scenario *scen,
                   oracle_profile *out);
void oracle_free(oracle_profile *p);

/* The entry for loc, or NULL. */
const oracle_loc *oracle_find(const oracle_profile *p, uint32_t loc);

#endif
