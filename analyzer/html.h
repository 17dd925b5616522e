/* html.h - `whatif report`: one self-contained HTML page from a run.
 *
 * The page is written from the run directory's profile.db (and its
 * opportunities.csv when there is one): a summary, the composition of the
 * critical path, the what-if curves, the speedup the work/span laws
 * allow at 1 to 256 cores with the measured speedups of timed runs, the
 * sortable profile table and the source around its leading rows.  No
 * network: styles, script and plots (SVG) are all in the file.
 */
#ifndef WHATIF_HTML_H
#define WHATIF_HTML_H

#include <stddef.h>
#include <stdio.h>

/* Writes the report of run directory dir to out (dir/report.html when
 * NULL).  Returns 0, or -1 with one line in err. */
int html_report(const char *dir, const char *out, char *err, size_t errlen);

/* For other pages (the diff): the document's start up to <body>, with
 * the report's style, and text with &, <, > and " escaped. */
void html_begin(FILE *f, const char *title);
void html_escape(FILE *f, const char *s);
/* A table cell of v with decimals ("-" for NaN, "inf"). */
void html_num_cell(FILE *f, double v, int decimals);

/* The grain section (html_grains.c): the aggregated grain graph and what
 * it flags, when whatif grains stored them; nothing otherwise. */
struct profdb;
void html_grains(FILE *f, const struct profdb *pg);

#endif
