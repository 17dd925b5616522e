/* grains.h - every task and loop chunk of an offline run as a grain
 * (docs/grains.md): grains.csv, grain_groups.csv, instances.csv and the
 * grain graph (grains.graphml, grains.dot).
 */
#ifndef WHATIF_GRAINS_H
#define WHATIF_GRAINS_H

#include <stddef.h>
#include <stdint.h>

typedef struct grains_opts {
    int full;          /* every grain drawn, or fail when more than full_max */
    int aggregate;     /* groups drawn, however few grains */
    size_t full_max;   /* 0: the default (1000) */
    int partial;       /* a trace cut short: the grains recorded */
    const char *run_dir; /* the run's directory: its profile.db gets the
                          * grain tables, its report.html (if any) is
                          * written again; NULL: outdir */
} grains_opts;

typedef struct grains_result {
    uint64_t grains, groups, instances;
    uint64_t low_benefit;  /* tasks of parallel benefit below 1 */
    int full;              /* the graph holds every grain */
    int in_report;         /* the run's report.html shows them */
    int partial;
    /* instantaneous parallelism (parallelism.csv), from the timed grains */
    uint64_t timed;        /* grains with a start and end time */
    uint32_t threads;      /* threads that ran them */
    uint32_t max_running;  /* the most grains running at once */
    double mean_running;   /* averaged from the first start to the last end */
    double available;      /* the program's work / span */
} grains_result;

/* Replays the trace directory trace_dir and writes the grain files into
 * outdir (created if needed).  Returns 0, or -1 with one line in err. */
int grains_write(const char *trace_dir, const char *outdir,
                 const grains_opts *go, grains_result *res, char *err,
                 size_t errlen);

#endif
