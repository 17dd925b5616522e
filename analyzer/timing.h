/* timing.h - `whatif run --threads LIST`: the program's wall time at each
 * thread count, unprofiled, for the report's measured speedups.
 */
#ifndef WHATIF_TIMING_H
#define WHATIF_TIMING_H

#include <stddef.h>

#define TIMING_MAX 32 /* thread counts in one list */

typedef struct timing_set {
    int threads[TIMING_MAX];    /* ascending, 1 first */
    double seconds[TIMING_MAX]; /* wall time of the run at threads[i] */
    size_t n;
} timing_set;

/* Parses "1,2,4": distinct counts 1 to 4096, at most TIMING_MAX; 1 is
 * added when missing (speedups are over one thread).  Returns 0, or -1
 * with one line in err. */
int timing_parse(const char *list, timing_set *ts, char *err, size_t errlen);

/* Runs path with argv once per count in ts, with OMP_NUM_THREADS set and
 * the tools interface off (OMP_TOOL=disabled), stdin, stdout and stderr
 * on /dev/null, preloading preload when not NULL (a runtime in libgomp's
 * place), and records each wall time.  Returns 0, or the first failed
 * run's exit status (>0) with one line in err. */
int timing_run(timing_set *ts, const char *path, char *const *argv,
               const char *preload, char *err, size_t errlen);

/* Writes dir/timings.csv and the table timing(threads, wall_seconds) of
 * dir/profile.db.  Returns 0, or -1 with one line in err. */
int timing_store(const timing_set *ts, const char *dir, char *err,
                 size_t errlen);

#endif
