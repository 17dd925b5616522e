/* diff.h - `whatif diff A B`: two runs of a program side by side, before
 * and after a change.
 *
 * Rows are paired by location; rows whose line moved (code added above
 * them) are paired within their file, directive and calling context in
 * line order.  For every what-if region of A whose code B parallelized,
 * the program parallelism A predicted at the factor B achieved is set
 * beside the parallelism B reached.
 */
#ifndef WHATIF_DIFF_H
#define WHATIF_DIFF_H

#include <stddef.h>

/* Compares the profiles of run directories a and b, writes
 * outdir/diff.csv and outdir/diff.html and, unless quiet, a summary on
 * stderr.  Returns 0, or -1 with one line in err. */
int diff_runs(const char *a, const char *b, const char *outdir, int quiet,
              char *err, size_t errlen);

#endif
