/* graphgen.h - deterministic random OSPG graphs as plain arrays, for tests.
 *
 * A gg_graph is a whole OSPG (docs/model.md) held in memory: node 0 is the
 * root S-node (location 0), every other node has a parent, an index among
 * its siblings, a kind (W, S or P), the locations passed to ospg_begin and
 * ospg_end (and the resulting final one), an optional worksharing group, the
 * depend list of a P-node, and the work and what-if region of a W-node.
 * Node ids grow from parents to children (parent < child).
 *
 * gg_generate() draws one graph from a seed alone (own PRNG, splitmix64), so
 * a failing seed is a complete reproduction.  The shapes are realistic
 * OpenMP structures (nested parallel regions, worksharing loops and
 * sections as groups, taskwait scopes, taskgroups, fib-like recursive tasks
 * reusing their locations, dependence chains, diamonds and mixes) and fully
 * random trees.  The small builder (gg_init / gg_add_*) also serves the
 * hand-written graphs of tests/test_oracle_selfcheck.c.
 */
#ifndef WHATIF_TESTS_GRAPHGEN_H
#define WHATIF_TESTS_GRAPHGEN_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ospg.h"

/* ---- PRNG ---- */

typedef struct gg_rng {
    uint64_t s;
} gg_rng;

void gg_rng_seed(gg_rng *r, uint64_t seed);
uint64_t gg_next(gg_rng *r);
uint64_t gg_below(gg_rng *r, uint64_t n);           /* uniform in [0, n) */
uint64_t gg_range(gg_rng *r, uint64_t lo, uint64_t hi); /* [lo, hi] */
int gg_chance(gg_rng *r, unsigned percent);         /* true percent% */
uint64_t gg_mix(uint64_t a, uint64_t b);            /* hash two words */

/* ---- The graph ---- */

enum { GG_W = 0 }; /* W-node kind; S and P use OSPG_S and OSPG_P */

#define GG_MAXDEPS 4
#define GG_MAXTAGS 2

/* Tag locations (ospg.h, "Tags") lie apart from the graph's own: a W-node's
 * explicit tags are GG_TAG_LOC(k), k < 4; a what-if region r's tag is
 * GG_REGION_LOC(r), and a W-node of region r lies in the regions r, r / 2,
 * r / 4, ... (>= 1). */
#define GG_TAG_LOC(k) (0x40000000u + (uint32_t)(k))
#define GG_REGION_LOC(r) (0x40000100u + (uint32_t)(r))

typedef struct gg_node {
    int kind;            /* GG_W, OSPG_S or OSPG_P */
    int32_t parent;      /* -1 for the root */
    uint32_t idx;        /* index among the parent's children */
    uint32_t loc;        /* final location (OSPG_LOC_NONE: none) */
    uint32_t begin_loc;  /* as passed to ospg_begin (intermediate nodes) */
    uint32_t end_loc;    /* as passed to ospg_end (intermediate nodes) */
    int32_t group;       /* -1, or the group this node is a member of */
    uint64_t work;       /* W only */
    uint32_t region;     /* W only */
    uint32_t wflags;     /* W only: OSPG_W_CONTINUES, drawn by gg_generate */
    uint32_t ntags;      /* W only: explicit tags (count 0 samples) */
    uint32_t tags[GG_MAXTAGS];
    uint32_t ndeps;      /* P only */
    ospg_dep deps[GG_MAXDEPS];
    uint32_t nkids;      /* children, W included */
    uint32_t kid_off;    /* into gg_graph.kids (valid after gg_finalize) */
} gg_node;

typedef struct gg_group {
    int32_t owner;       /* node holding every member in its subtree */
    uint32_t loc;
} gg_group;

typedef struct gg_graph {
    gg_node *nodes;
    size_t nnodes, capnodes;
    int32_t *kids;       /* per node, its children in index order */
    gg_group *groups;
    size_t ngroups, capgroups;
    uint32_t nlocs;      /* locations used are < nlocs (besides NONE) */
    uint32_t nregions;   /* regions used are <= nregions */
    int region_tags;     /* W-nodes are tagged by their region path: feed
                          * with ospg_set_region_tags(gg_region_tags, g) */
    const char *shape;   /* what gg_generate drew, for messages */
    int weights;         /* GG_WEIGHTS_* drawn */
} gg_graph;

/* Builder.  gg_init makes the root (node 0).  Children are appended to their
 * parent in program order: the index is the parent's child count so far. */
void gg_init(gg_graph *g);
void gg_free(gg_graph *g);
int32_t gg_add_node(gg_graph *g, int32_t parent, int kind, uint32_t loc);
int32_t gg_add_work(gg_graph *g, int32_t parent, uint64_t work, uint32_t loc,
                    uint32_t region);
void gg_add_dep(gg_graph *g, int32_t node, uint64_t addr, uint32_t type);
int32_t gg_add_group(gg_graph *g, int32_t owner, uint32_t loc);
/* Makes node a member of group and gives it the group's location. */
void gg_join_group(gg_graph *g, int32_t node, int32_t group);
/* Location passed at begin / at end (final location: end's unless NONE). */
void gg_set_locs(gg_graph *g, int32_t node, uint32_t begin_loc,
                 uint32_t end_loc);
/* Fills kids[] and checks the invariants; returns 0, or -1 (message on
 * stderr) for an invalid graph. */
int gg_finalize(gg_graph *g);

/* ---- Random graphs ---- */

enum {
    GG_SHAPE_ANY = 0,      /* draw one of the shapes below */
    GG_SHAPE_PARALLEL,     /* nested parallel regions, loops, sections */
    GG_SHAPE_TASKS,        /* task trees, taskwait scopes, taskgroups */
    GG_SHAPE_FIB,          /* recursive tasks reusing their locations */
    GG_SHAPE_DEPS,         /* dependence chains, diamonds, mixes */
    GG_SHAPE_MIXED,        /* all of the constructs, mixed */
    GG_SHAPE_RANDOM,       /* fully random tree, random groups and deps */
    GG_NSHAPES
};

enum {
    GG_WEIGHTS_SMALL = 0,  /* 0..5: ties frequent */
    GG_WEIGHTS_LARGE,      /* about 2^30: ties improbable */
    GG_WEIGHTS_MIXED       /* either, per W-node */
};

typedef struct gg_params {
    uint64_t seed;
    size_t target_nodes;   /* approximate size, 10..2000 */
    int shape;             /* GG_SHAPE_* */
    int weights;           /* GG_WEIGHTS_* */
} gg_params;

/* Draws a graph; returns 0, or -1 when out of memory / generator bug. */
int gg_generate(const gg_params *p, gg_graph *out);

/* Redraws the work of every W-node (same structure). */
void gg_reweight(gg_graph *g, uint64_t seed, int weights);

const char *gg_shape_name(int shape);

/* One line per node, then the groups. */
void gg_dump(const gg_graph *g, FILE *f);

/* The tags of region path region, as ospg_region_tags_fn (arg: the
 * gg_graph). */
size_t gg_region_tags(void *arg, uint32_t region, uint32_t *locs, size_t max);

/* Node w's explicit tags as ospg_sample items (count 0); returns their
 * number (<= GG_MAXTAGS). */
size_t gg_tag_samples(const gg_node *w, ospg_sample *out);

/* Which nodes may be fed through ospg_leaf: an array of nnodes flags (the
 * caller frees it; NULL when out of memory), set for every node but the
 * root whose children are at most one W-node without explicit tags, with
 * no depend items, no location given at its end and no group it owns. */
unsigned char *gg_leaves(const gg_graph *g);

/* Whether every node begun with a location (its own or its group's) ends
 * with that one or none: what ospg_set_fixed_locations promises. */
int gg_keeps_locs(const gg_graph *g);

/* Longest chain of intermediate nodes from the root down (root counts 1). */
size_t gg_intermediate_depth(const gg_graph *g);

#endif
