/* replay.h - turns an offline trace directory back into a profile.
 *
 * Reads every per-thread stream of a trace directory and feeds its records
 * to the analysis core (ospg.h) in an order that respects causality: a
 * record that names a node no stream has begun yet waits until one does.
 * Memory is bounded by the nodes live at once (begun, not yet folded), one
 * pending record and one block buffer per stream, never by trace length.
 */
#ifndef WHATIF_REPLAY_H
#define WHATIF_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "loctab.h"
#include "ospg.h"

#define REPLAY_STREAM_PREFIX "thread-"
#define REPLAY_STREAM_SUFFIX ".wit"

/* What the replay tells its caller besides the graph (all may be NULL). */
typedef struct replay_hooks {
    void (*meta)(void *arg, const char *key, const char *value);
    void (*region)(void *arg, uint32_t id, uint32_t parent, uint32_t loc,
                   uint64_t factor_milli);
    void *arg;
    int scan_only;  /* read names, metadata and regions; skip the graph */
} replay_hooks;

typedef struct replay_stats {
    uint64_t records;
    uint64_t bytes;
    size_t streams;
    uint64_t peak_live_nodes;
} replay_stats;

/* Replays the trace files paths[0..npaths) into a fresh builder with the
 * given scenarios, defines their locations in lt, passes META and REGION
 * records to the hooks (may be NULL), and computes *out (left empty with
 * hooks->scan_only).  Returns 0, or -1 with one line in err ("FILE: byte
 * N: what", or what is missing); *out is then empty. */
int replay_files(const char *const *paths, size_t npaths, size_t nscen,
                 const ospg_scenario *scen, loctab *lt,
                 const replay_hooks *hooks, ospg_profile *out,
                 replay_stats *stats, char *err, size_t errlen);

/* Lists the stream files of a trace directory (sorted by name) and replays
 * them.  A directory with no stream file is an error. */
int replay_dir(const char *dir, size_t nscen, const ospg_scenario *scen,
               loctab *lt, const replay_hooks *hooks, ospg_profile *out,
               replay_stats *stats, char *err, size_t errlen);

#endif
