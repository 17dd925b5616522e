/* repeat.h - `whatif run --repeat N`: one profile out of N runs.
 *
 * A span is a maximum, so one fragment the machine slowed moves it (a
 * loop's span 0.54-4.0 ms over four runs of one program).  N runs give
 * every row's median and range: the run of median program span becomes
 * the profile, and repeat.csv and profile.db (tables repeat_run and
 * repeat_stat) hold each row's median, least and most work, span,
 * parallelism and share of the critical path across the runs.
 */
#ifndef WHATIF_REPEAT_H
#define WHATIF_REPEAT_H

#include <stddef.h>

/* dir/run-1 .. dir/run-n each hold a profile: copies the one of median
 * program span into dir and writes dir/repeat.csv and the repeat tables
 * into dir/profile.db.  Returns 0, or -1 with one line in err. */
int repeat_combine(const char *dir, int n, char *err, size_t errlen);

/* The runs' ranges on stderr, after the profile's summary: the program's
 * parallelism and the leading rows, and the rows whose span varies more
 * than twofold. */
void repeat_summary(const char *dir);

#endif
