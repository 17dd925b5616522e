/* ranks.h - the ranks of an MPI program side by side.
 *
 * Under an MPI launcher every rank's `whatif run` writes DIR/rank-NNNNN/
 * (run.c).  These put the ranks' profiles together: per rank its
 * program's work, span and parallelism (ranks.csv); per location, how its
 * work and parallelism spread over the ranks and how unbalanced its work
 * is (rank_locations.csv); the rank whose OpenMP span is longest; and
 * one HTML page of it all.
 */
#ifndef WHATIF_RANKS_H
#define WHATIF_RANKS_H

#include <stddef.h>

/* The rank-NNNNN subdirectories of dir, in rank order (malloc'd array
 * of malloc'd full paths).  Returns how many (0: none, or out of
 * memory). */
size_t ranks_list(const char *dir, char ***paths);
void ranks_free(char **paths, size_t n);

/* Writes dir/ranks.csv and dir/rank_locations.csv from the ranks'
 * profiles and, unless quiet, the summary on stderr.  Returns 0, or -1
 * with one line in err. */
int ranks_analyze(const char *dir, int quiet, char *err, size_t errlen);

/* Writes the ranks' page (dir/report.html unless out).  Returns 0, or -1
 * with one line in err. */
int ranks_report(const char *dir, const char *out, char *err, size_t errlen);

#endif
