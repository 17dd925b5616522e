/* profdb.h - a run's profile.db read back: what the report and the diff
 * show.
 *
 * Scenario 0's rows (the program first, then by share of the critical
 * path), the sampled lines and serial fragments on the critical path, the
 * what-if curves (the run's scenarios and its opportunities.csv), the
 * notes and the timed runs, with the run's metadata.
 */
#ifndef WHATIF_PROFDB_H
#define WHATIF_PROFDB_H

#include <stddef.h>

typedef struct profdb_kv {
    char *key, *value;
} profdb_kv;

typedef struct profdb_row {           /* a row of the profile table */
    char *location, *directive;
    double instances, work, span, parallelism, critical_work,
        critical_percent, grains, grain_work;
} profdb_row;

typedef struct profdb_line {           /* a sampled line */
    char *location, *function;
    double samples, critical_work, critical_percent;
} profdb_line;

typedef struct profdb_serial {           /* a serial fragment */
    char *from, *to;
    double fragments, critical_percent;
} profdb_serial;

typedef struct profdb_curve {          /* program parallelism against a factor */
    char *name, *directive;     /* directive: NULL for a scenario group */
    double x[72], y[72];        /* x: the factor, INFINITY for "inf" */
    size_t n;
    double saturation;          /* the factor where it saturates */
    char *leader;               /* the next bottleneck there */
} profdb_curve;

typedef struct profdb_note {
    char *location, *directive, *text;
} profdb_note;

typedef struct profdb_timing {
    int threads;
    double seconds;
} profdb_timing;

typedef struct profdb_grain_group {   /* whatif grains: a location at a depth */
    char *location, *directive;
    double id, depth, grains, work, min_work, median_work, max_work,
        low_benefit;
} profdb_grain_group;

typedef struct profdb_grain_edge {
    double from, to, grains;
} profdb_grain_edge;

typedef struct profdb_grain_instance { /* a worksharing instance */
    char *location, *directive;
    double id, chunks, threads, work, load_balance;
} profdb_grain_instance;

typedef struct profdb_grain_bin {     /* grains running at once, a bin */
    double start_ns, end_ns, mean_running, max_running;
} profdb_grain_bin;

typedef struct profdb {
    profdb_kv *meta;
    size_t nmeta;
    profdb_row *rows;                 /* rows[0] is the program */
    size_t nrows;
    profdb_line *lines;
    size_t nlines;
    profdb_serial *serial;
    size_t nserial;
    profdb_curve *curves;
    size_t ncurves;
    profdb_note *notes;
    size_t nnotes;
    profdb_timing *timings;
    size_t ntimings;
    profdb_grain_group *groups;       /* none until whatif grains ran */
    size_t ngroups;
    profdb_grain_edge *gedges;
    size_t ngedges;
    profdb_grain_instance *instances; /* the least balanced first */
    size_t ninstances;
    profdb_grain_bin *timeline;       /* none without grain times */
    size_t ntimeline;
} profdb;

/* Reads dir/profile.db (and dir/opportunities.csv) into pg.  Returns 0,
 * or -1 with one line in err; pg is to be freed either way. */
int profdb_load(const char *dir, profdb *pg, char *err, size_t errlen);
void profdb_free(profdb *pg);

/* The value of metadata key, or NULL. */
const char *profdb_meta(const profdb *pg, const char *key);

#endif
