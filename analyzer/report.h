/* report.h - writers of the results: the profile CSV, the run JSON and the
 * SQLite database.  The formats are specified in docs/output.md; this is
 * their only implementation.
 *
 * Every writer returns 0, or -1 with a one-line message in the caller's
 * buffer err (errlen bytes, truncated to fit; err may be NULL): the path and
 * strerror(), or the path and SQLite's message.  Nothing is printed.  The
 * writers never take ownership of their arguments.
 */
#ifndef WHATIF_REPORT_H
#define WHATIF_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "loctab.h"
#include "ospg.h"
#include "trace.h"

#define REPORT_SCHEMA_VERSION 5 /* PRAGMA user_version of the database */

/* ---- Run metadata ----
 *
 * An ordered list of key/value string pairs describing the run (metric,
 * metric_unit, metric_reason, command, threads, runtime, mode, date,
 * tool_version, trace_dir, ... whatever the caller sets).  Keys are unique;
 * the order is the order of first setting.  The keys the writers compute
 * themselves are reserved (report_meta_reserved). */
typedef struct report_meta report_meta;

/* Creates an empty list; NULL when out of memory.  Caller frees it. */
report_meta *report_meta_new(void);
/* Frees the list and its strings; NULL is allowed. */
void report_meta_free(report_meta *m);

/* Sets key to value (both copied).  A key already present keeps its place
 * and gets the new value.  Returns 0; -1 for a NULL argument or when out of
 * memory (the list is then unchanged); -2 for a reserved key. */
int report_meta_set(report_meta *m, const char *key, const char *value);
/* The value of key, or NULL; owned by the list (valid until it changes). */
const char *report_meta_get(const report_meta *m, const char *key);
/* Number of pairs, and the pair at position i (NULL when out of range). */
size_t report_meta_count(const report_meta *m);
const char *report_meta_key(const report_meta *m, size_t i);
const char *report_meta_value(const report_meta *m, size_t i);
/* 1 for the keys the writers add themselves: program_work, program_span,
 * program_parallelism, locations, nodes; else 0. */
int report_meta_reserved(const char *key);

/* ---- Notes: what in a profile is not exact ----
 *
 * The profiler attaches notes to locations (trace.h, trace_note) where the
 * runtime does not report enough to model a construct exactly.  The list
 * keeps, per location and note, the largest value; the writers put them in
 * run.json ("notes") and profile.db (table note), and report_notes_print
 * gives the user one line each. */
typedef struct report_notes report_notes;

/* Notes the analysis itself finds (no trace holds them), numbered after
 * the trace's. */
enum {
    REPORT_NOTE_FINE_GRAINS = TRACE_NOTE_MAX + 1, /* a task directive's
                                     * tasks hold less work on average than
                                     * the runtime spends creating one
                                     * (run.json: task_create_cost); value:
                                     * their mean own work */
    REPORT_NOTE_SPAN_OUTLIER = TRACE_NOTE_MAX + 2, /* one grain of a
                                     * directive holds over 4 times its
                                     * grains' mean and a fifth of its span:
                                     * noise, or an imbalance; value: that
                                     * grain's work */
    REPORT_NOTE_MAX = REPORT_NOTE_SPAN_OUTLIER
};

report_notes *report_notes_new(void); /* NULL when out of memory */
void report_notes_free(report_notes *ns);
/* Adds a fine_grains note to every task directive (of 100 tasks or more)
 * whose tasks hold less own work on average than meta's task_create_cost,
 * when the metric is time (ns). */
void report_notes_fine_grains(report_notes *ns, const ospg_profile *p,
                              const loctab *lt, const report_meta *meta);
/* Adds a span_outlier note to every loop and taskloop of 8 grains or
 * more one of which holds over 4 times their mean own work, a fifth or
 * more of the directive's span and 1% or more of the program's (scenario
 * 0). */
void report_notes_outliers(report_notes *ns, const ospg_profile *p,
                           const loctab *lt);

/* Records note (1 .. REPORT_NOTE_MAX) on loc with value; 0, or -1 when out
 * of memory or for an unknown note (the list is then unchanged). */
int report_notes_add(report_notes *ns, uint32_t loc, uint32_t note,
                     uint64_t value);
size_t report_notes_count(const report_notes *ns);
/* The i-th note: its location, kind and value; -1 when out of range. */
int report_notes_get(const report_notes *ns, size_t i, uint32_t *loc,
                     uint32_t *note, uint64_t *value);
/* Short name of a note kind ("one_thread_loop", ...) and one sentence
 * saying what it means for the row, with value in unit. */
const char *report_note_name(uint32_t note);
void report_note_text(char *buf, size_t len, uint32_t note, uint64_t value,
                      const char *unit);
/* One line per note on f: "whatif: note: WHERE (DIRECTIVE): TEXT". */
void report_notes_print(FILE *f, const report_notes *ns, const loctab *lt,
                        const char *unit);

/* ---- Numbers as the CSV writes them ---- */

#define REPORT_NUMBUF 48 /* enough for every number below */

/* work / span with 3 decimals, rounded half up from the exact quotient;
 * "inf" when span is 0 and work > 0, "0.000" when both are 0. */
void report_format_parallelism(char buf[REPORT_NUMBUF], uint64_t work,
                               uint64_t span);
/* 100 * part / whole with 3 decimals, rounded half up from the exact
 * quotient; "0.000" when whole is 0. */
void report_format_percent(char buf[REPORT_NUMBUF], uint64_t part,
                           uint64_t whole);

/* ---- Writing a file whole ----
 *
 * Every output file is written under a temporary name in its directory
 * (PATH.tmp.XXXXXX) and renamed over PATH once complete: a reader never
 * sees half a file, and a symbolic link planted at PATH is replaced, never
 * followed.  Something at PATH that is neither a regular file nor a link
 * is refused.  open returns NULL with err set; close renames when ok (else
 * removes the temporary file) and returns 0, or -1 with err set. */
/* s as one CSV field: quoted (RFC 4180) when it holds a comma, a quote
 * or a line break. */
void report_csv_text(FILE *f, const char *s);

FILE *report_open_tmp(const char *path, char *tmp, size_t tmplen, char *err,
                      size_t errlen);
int report_close_tmp(FILE *f, const char *tmp, const char *path, int ok,
                     char *err, size_t errlen);

/* ---- Writers ---- */

/* The profile of scenario scen as CSV (docs/output.md, "profile.csv"):
 * the header, the program row, then every other location with instances
 * or critical work, by critical_percent descending, work descending,
 * location ascending (then directive, then id).  lt may be NULL: every
 * location other than 0 is then "loc#N" with directive "unknown".
 * Fails on scen >= p->nscen, when out of memory, or on an I/O error (the
 * file may then be incomplete).  The path version creates or truncates the
 * file; the FILE version writes at f's position and uses name (may be NULL)
 * in messages, flushing f but not closing it. */
int report_write_profile_csv(const char *path, const ospg_profile *p,
                             size_t scen, const loctab *lt, char *err,
                             size_t errlen);
int report_fprint_profile_csv(FILE *f, const char *name,
                              const ospg_profile *p, size_t scen,
                              const loctab *lt, char *err, size_t errlen);

/* The run summary as one JSON object (docs/output.md, "run.json"): the
 * metadata pairs in order, all as strings, then program_work, program_span,
 * program_parallelism (scenario 0), locations (p->nlocs) and nodes, then
 * "notes", an array with one object per note (named through lt) when notes
 * holds any.  meta, notes and lt may be NULL; p may be NULL (metadata
 * only).  Fails on an I/O error (the file may then be incomplete). */
int report_write_run_json(const char *path, const report_meta *meta,
                          const ospg_profile *p, const report_notes *notes,
                          const loctab *lt, char *err, size_t errlen);
int report_fprint_run_json(FILE *f, const char *name, const report_meta *meta,
                           const ospg_profile *p, const report_notes *notes,
                           const loctab *lt, char *err, size_t errlen);

/* The whole result as an SQLite database (docs/output.md, "profile.db"):
 * every scenario and every location of p, the location names of lt (may be
 * NULL) plus "loc#N"/"unknown" for ids it lacks, and meta (may be NULL)
 * plus the computed keys in table run.  scen_names and scen_factors may be
 * NULL, and so may any name: the defaults are "measured" for scenario 0,
 * "scenarioN" for the others, and no factor (NULL); scenario 0's factor is
 * always 1.  An existing regular file at path is overwritten (truncated
 * first); anything else there is refused.  All rows are written in one
 * transaction: on failure the file holds no tables (or is empty). */
int report_write_db(const char *path, const ospg_profile *p, const loctab *lt,
                    const report_meta *meta, const report_notes *notes,
                    const char *const *scen_names, const double *scen_factors,
                    char *err, size_t errlen);

/* whatif.csv (docs/output.md): for every scenario 1 .. p->nscen-1 its
 * program row, then its locations in the profile's order, with columns
 * scenario,factor,location,directive,work,span,parallelism,critical_work,
 * critical_percent.  names[s] and factors[s] label scenario s (a factor of
 * 0 prints "own": the regions' own factors).  Returns 0 or -1 with err. */
int report_write_whatif_csv(const char *path, const ospg_profile *p,
                            const loctab *lt, const char *const *names,
                            const double *factors, char *err, size_t errlen);
/* A factor as whatif.csv prints it: "2", "64", "inf", "own". */
void report_format_factor(char buf[REPORT_NUMBUF], double factor);

/* 1 when a location's directive names a sampled source line ("line" or
 * "line:FUNCTION"), not a directive: such rows are left out of profile.csv
 * and whatif.csv and make critical_lines.csv. */
int report_is_line(const char *directive);

/* 1 when a location is a serial fragment of the program's, named by the
 * events around it (directive "serial"): such rows are left out of
 * profile.csv and whatif.csv and make serial_fragments.csv. */
int report_is_serial(const char *directive);

/* The two events of a serial fragment's name (its location's where) as
 * text: "program start", "end of parallel a.c:34", ... */
void report_serial_text(const loctab *lt, const char *where, char *from,
                        size_t flen, char *to, size_t tlen);

/* serial_fragments.csv (docs/output.md): the program's serial fragments
 * of scenario 0 by the events around them, by critical work.  Returns 0
 * or -1 with err. */
int report_write_serial_csv(const char *path, const ospg_profile *p,
                            const loctab *lt, char *err, size_t errlen);

/* critical_lines.csv (docs/output.md): the sampled source lines of
 * scenario 0, by critical work.  Returns 0 or -1 with err. */
int report_write_lines_csv(const char *path, const ospg_profile *p,
                           const loctab *lt, char *err, size_t errlen);

/* The three outputs of a run into dir (created if missing): profile.csv
 * (scenario 0), run.json and profile.db, and critical_lines.csv when the
 * profile holds sampled lines.  Returns 0, or -1 with one line
 * in err; earlier files may then exist. */
int report_write_all(const char *dir, const ospg_profile *p, const loctab *lt,
                     const report_meta *meta, const report_notes *notes,
                     const char *const *scen_names, const double *scen_factors,
                     char *err, size_t errlen);

#endif
