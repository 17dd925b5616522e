/* analyze.c - `whatif analyze`: an offline trace in, a profile out.
 *
 * Replays the trace (replay.h), writes profile.csv, run.json and
 * profile.db, and prints the head of the profile as a table.  Every
 * failure is one line on stderr and exit status 1; nothing is written
 * unless the whole trace was read.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "loctab.h"
#include "replay.h"
#include "report.h"
#include "srcloc.h"

#define SHOW_ROWS 12

typedef struct meta_sink {
    report_meta *meta;
    int failed;
} meta_sink;

static void on_meta(void *arg, const char *key, const char *value)
{
    meta_sink *ms = arg;
    /* A key the writers compute themselves is not the trace's to set. */
    if (report_meta_reserved(key))
        return;
    if (report_meta_set(ms->meta, key, value) == -1)
        ms->failed = 1;
}

static int cmp_row(const void *a, const void *b)
{
    const ospg_loc_stat *x = *(ospg_loc_stat *const *)a;
    const ospg_loc_stat *y = *(ospg_loc_stat *const *)b;
    if (x->critical[0] != y->critical[0])
        return x->critical[0] < y->critical[0] ? 1 : -1;
    if (x->work != y->work)
        return x->work < y->work ? 1 : -1;
    return (x->loc > y->loc) - (x->loc < y->loc);
}

/* Prints the program row and the locations leading the critical path. */
static void print_table(const ospg_profile *p, const loctab *lt,
                        const char *metric)
{
    const ospg_loc_stat **rows = calloc(p->nlocs ? p->nlocs : 1,
                                        sizeof(*rows));
    size_t n = 0;
    if (!rows)
        return;
    for (size_t i = 0; i < p->nlocs; i++)
        if (p->locs[i].loc != OSPG_LOC_PROGRAM)
            rows[n++] = &p->locs[i];
    qsort(rows, n, sizeof(*rows), cmp_row);

    char par[REPORT_NUMBUF], pct[REPORT_NUMBUF];
    const ospg_loc_stat *prog = NULL;
    for (size_t i = 0; i < p->nlocs; i++)
        if (p->locs[i].loc == OSPG_LOC_PROGRAM)
            prog = &p->locs[i];
    report_format_parallelism(par, p->work, p->span[0]);
    printf("program: work %llu, span %llu, parallelism %s (metric: %s)\n",
           (unsigned long long)p->work, (unsigned long long)p->span[0], par,
           metric ? metric : "unknown");
    printf("%-28s %-10s %10s %12s %12s %8s\n", "location", "directive",
           "instances", "work", "span", "parall.");
    printf("%-28s %-10s %10s %12s %12s %8s %s\n", "", "", "", "", "", "",
           "critical%");
    for (size_t i = 0; i <= n && i <= SHOW_ROWS; i++) {
        const ospg_loc_stat *r = i == 0 ? prog : rows[i - 1];
        if (!r)
            continue;
        const loctab_entry *le = loctab_get(lt, r->loc);
        char where[64];
        snprintf(where, sizeof(where), "%s",
                 le ? le->where : "(unknown)");
        report_format_parallelism(par, r->work, r->span[0]);
        report_format_percent(pct, r->critical[0], p->span[0]);
        printf("%-28s %-10s %10llu %12llu %12llu %8s %8s\n", where,
               le ? le->directive : "unknown",
               (unsigned long long)r->instances,
               (unsigned long long)r->work, (unsigned long long)r->span[0],
               par, pct);
    }
    if (n > SHOW_ROWS)
        printf("... %zu more locations in profile.csv\n", n - SHOW_ROWS);
    free(rows);
}

int cmd_analyze(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *outdir = NULL;
    int quiet = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': outdir = optarg; break;
        case 'q': quiet = 1; break;
        case 'h':
            printf("usage: whatif analyze [-o OUTDIR] [-q] TRACE_DIR\n");
            return 0;
        default:
            fprintf(stderr, "usage: whatif analyze [-o OUTDIR] [-q] "
                            "TRACE_DIR\n");
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "whatif analyze: expected one trace directory "
                        "(usage: whatif analyze [-o OUTDIR] [-q] TRACE_DIR)\n");
        return 2;
    }
    return analyze_trace(argv[optind], outdir ? outdir : argv[optind], quiet);
}

int analyze_trace(const char *dir, const char *outdir, int quiet)
{
    int status = 1;
    loctab *named = NULL;
    char err[1024];
    ospg_profile prof = {0};
    replay_stats st = {0};
    loctab *lt = loctab_new();
    meta_sink ms = {report_meta_new(), 0};
    if (!lt || !ms.meta) {
        fprintf(stderr, "whatif analyze: out of memory\n");
        goto out;
    }
    int replayed = replay_dir(dir, 1, NULL, lt, on_meta, &ms, &prof, &st,
                              err, sizeof(err));
    if (report_meta_get(ms.meta, "unsupported")) {
        fprintf(stderr, "whatif analyze: %s: the program ran %s, which "
                        "whatif does not support: no profile\n", dir,
                report_meta_get(ms.meta, "unsupported"));
        goto out;
    }
    if (replayed) {
        fprintf(stderr, "whatif analyze: %s\n", err);
        goto out;
    }
    if (ms.failed) {
        fprintf(stderr, "whatif analyze: out of memory\n");
        goto out;
    }
    size_t unresolved = 0;
    if (srcloc_resolve(lt, &named, &unresolved, err, sizeof(err))) {
        fprintf(stderr, "whatif analyze: out of memory\n");
        goto out;
    }
    if (unresolved)
        fprintf(stderr, "whatif: warning: %s\n", err);
    loctab_free(lt);
    lt = named;
    named = NULL;
    srcloc_merge_profile(&prof, lt);
    char num[32];
    snprintf(num, sizeof(num), "%zu", st.streams);
    report_meta_set(ms.meta, "trace_streams", num);
    snprintf(num, sizeof(num), "%llu", (unsigned long long)st.bytes);
    report_meta_set(ms.meta, "trace_bytes", num);
    snprintf(num, sizeof(num), "%llu",
             (unsigned long long)st.peak_live_nodes);
    report_meta_set(ms.meta, "analyzer_peak_live_nodes", num);
    report_meta_set(ms.meta, "analyzer_version", WHATIF_VERSION);

    if (report_write_all(outdir, &prof, lt, ms.meta, err, sizeof(err))) {
        fprintf(stderr, "whatif analyze: %s\n", err);
        goto out;
    }
    if (!quiet) {
        print_table(&prof, lt, report_meta_get(ms.meta, "metric"));
        printf("wrote %s/profile.csv, run.json, profile.db\n", outdir);
    }
    status = 0;
out:
    ospg_profile_free(&prof);
    loctab_free(named);
    loctab_free(lt);
    report_meta_free(ms.meta);
    return status;
}
