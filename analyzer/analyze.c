/* analyze.c - `whatif analyze`: an offline trace in, a profile out.
 *
 * Replays the trace (replay.h), writes profile.csv, run.json and
 * profile.db, and prints the head of the profile as a table.  Every
 * failure is one line on stderr and exit status 1; nothing is written
 * unless the whole trace was read.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "loctab.h"
#include <math.h>

#include "html.h"
#include "ranks.h"
#include "replay.h"
#include "report.h"
#include "scenario.h"
#include "srcloc.h"
#include "summary.h"

#define SHOW_ROWS 12

typedef struct meta_sink {
    report_meta *meta;
    int failed;
    scen_set *ss;       /* regions go here */
    report_notes *notes;
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



#define MAX_SPECS 64
#define MAX_CANDIDATES 12 /* opportunities: locations tried, by critical work */

static const char usage_text[] =
    "usage: whatif analyze [OPTIONS] DIR\n"
    "\n"
    "Computes the profile of an offline trace again, with any what-if\n"
    "scenarios, without running the program: DIR is a run's directory\n"
    "(its trace/ is read and its results replaced) or a trace directory.\n"
    "The summary goes to stderr.\n"
    "\n"
    "  -o OUTDIR          write the results there instead\n"
    "  --factors LIST     what-if speed-ups (default: the run's, else\n"
    "                     2,4,8,16,64,inf)\n"
    "  --speedup WHERE    a what-if scenario for the directive or region at\n"
    "                     WHERE (file:line as profile.csv names it, or\n"
    "                     program); repeatable\n"
    "  --opportunities    also rank what speeding up each leading location\n"
    "                     would buy (opportunities.csv)\n"
    "  --partial          a trace cut short: profile what was recorded,\n"
    "                     marked incomplete\n"
    "  -j, --jobs N       threads that replay the trace (default: one per\n"
    "                     trace stream, up to the CPUs this process may use;\n"
    "                     one for a trace under 1 MiB)\n"
    "  -q, --quiet        no summary\n"
    "  -h, --help         this text\n";

/* The ranks of an MPI run (ranks.h): each rank's trace analyzed again
 * where it has one, then the ranks side by side into outdir (dir unless
 * -o). */
static int analyze_ranks(const char *dir, const char *outdir, char **ranks,
                         size_t n, const analyze_opts *ao, int quiet)
{
    for (size_t k = 0; k < n; k++) {
        char trace[PATH_MAX + 16];
        struct stat sb;
        snprintf(trace, sizeof(trace), "%s/trace", ranks[k]);
        if (stat(trace, &sb) || !S_ISDIR(sb.st_mode))
            continue;
        int lock = outdir_lock(ranks[k], "whatif analyze");
        if (lock < 0)
            return 1;
        int rc = analyze_trace(trace, ranks[k], ao);
        close(lock);
        if (rc)
            return rc;
    }
    if (!outdir)
        outdir = dir;
    int lock = outdir_lock(outdir, "whatif analyze");
    if (lock < 0)
        return 1;
    outdir_clear_results(outdir);
    char err[PATH_MAX + 256] = "";
    int rc = ranks_analyze(dir, quiet, err, sizeof(err));
    if (rc)
        fprintf(stderr, "whatif analyze: %s\n", err);
    close(lock);
    return rc ? 1 : 0;
}

int cmd_analyze(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"quiet", no_argument, NULL, 'q'},
        {"factors", required_argument, NULL, 'f'},
        {"speedup", required_argument, NULL, 's'},
        {"opportunities", no_argument, NULL, 'O'},
        {"no-opportunities", no_argument, NULL, 'n'},
        {"partial", no_argument, NULL, 'p'},
        {"jobs", required_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    analyze_opts ao = {0};
    int quiet = 0;
    const char *outdir = NULL;
    const char *specs[MAX_SPECS];
    int c;
    ao.specs = specs;
    optind = 1;
    opterr = 0; /* its messages are ours, one line each */
    while ((c = getopt_long(argc, argv, ":o:qj:h", opts, NULL)) != -1) {
        switch (c) {
        case 'o': outdir = optarg; break;
        case 'q': quiet = 1; break;
        case 'f': ao.factors = optarg; break;
        case 'O': ao.opportunities = 1; break;
        case 'n': ao.opportunities = 0; break; /* the old default's opt-out */
        case 'p': ao.partial = 1; break;
        case 'j': {
            char *end;
            errno = 0;
            unsigned long n = strtoul(optarg, &end, 10);
            if (errno || end == optarg || *end || optarg[0] == '-' || n < 1 ||
                n > 1024) {
                fprintf(stderr, "whatif analyze: --jobs %s: expected a "
                                "number of threads from 1 to 1024\n", optarg);
                return 2;
            }
            ao.jobs = (unsigned)n;
            break;
        }
        case 's':
            if (ao.nspecs == MAX_SPECS) {
                fprintf(stderr, "whatif analyze: at most %d --speedup\n",
                        MAX_SPECS);
                return 2;
            }
            specs[ao.nspecs++] = optarg;
            break;
        case 'h': fputs(usage_text, stdout); return 0;
        default:
            fprintf(stderr, "whatif analyze: %s %s (see whatif analyze "
                            "--help)\n", argv[optind - 1],
                    c == ':' ? "needs a value" : "is not an option");
            return 2;
        }
    }
    if (optind != argc - 1) {
        fprintf(stderr, "whatif analyze: expected one run or trace directory "
                        "(see whatif analyze --help)\n");
        return 2;
    }
    /* a run's directory (its trace/ is read, its results replaced), or
     * a trace directory (results next to it, unless -o) */
    char trace[PATH_MAX];
    struct stat sb;
    int run_dir = snprintf(trace, sizeof(trace), "%s/trace", argv[optind]) <
                      (int)sizeof(trace) &&
                  stat(trace, &sb) == 0 && S_ISDIR(sb.st_mode);
    char **ranks;
    size_t nranks = run_dir ? 0 : ranks_list(argv[optind], &ranks);
    if (nranks) {
        int rc = analyze_ranks(argv[optind], outdir, ranks, nranks, &ao,
                               quiet);
        ranks_free(ranks, nranks);
        return rc;
    }
    if (!run_dir)
        snprintf(trace, sizeof(trace), "%s", argv[optind]);
    if (!outdir)
        outdir = argv[optind];
    int lock = outdir_lock(outdir, "whatif analyze");
    if (lock < 0)
        return 1;
    /* the results are replaced whole: an earlier run's opportunities or
     * report must not stay beside the new profile */
    outdir_clear_results(outdir);
    int rc = analyze_trace(trace, outdir, &ao);
    char err[PATH_MAX + 256] = "";
    if (rc == 0 && html_report(outdir, NULL, err, sizeof(err))) {
        fprintf(stderr, "whatif analyze: the report could not be written: "
                        "%s\n", err);
        rc = 1;
    }
    if (rc == 0 && !quiet)
        summary_print(outdir);
    close(lock);
    return rc;
}

static void on_region(void *arg, uint32_t id, uint32_t parent, uint32_t loc,
                      uint64_t factor_milli)
{
    meta_sink *ms = arg;
    if (scen_add_path(ms->ss, id, parent, loc, factor_milli))
        ms->failed = 1;
}

static void on_meta_hook(void *arg, const char *key, const char *value)
{
    on_meta(arg, key, value);
}

static void on_note(void *arg, uint32_t loc, uint32_t note, uint64_t value)
{
    meta_sink *ms = arg;
    if (report_notes_add(ms->notes, loc, note, value))
        ms->failed = 1;
}

static double parallelism(uint64_t work, uint64_t span)
{
    return span ? (double)work / (double)span : (work ? INFINITY : 0.0);
}

/* The location leading scenario s's critical path. */
static uint32_t leader(const ospg_profile *p, size_t s)
{
    uint32_t best = OSPG_LOC_PROGRAM;
    uint64_t most = 0;
    for (size_t i = 0; i < p->nlocs; i++)
        /* a sampled line's or a serial tag's critical work is also its
         * construct's (or the program's): never the leader */
        if (!p->locs[i].line && !p->locs[i].tag &&
            p->locs[i].critical[s] > most) {
            most = p->locs[i].critical[s];
            best = p->locs[i].loc;
        }
    return best;
}

typedef struct opp_row {
    uint32_t loc;
    size_t first;      /* its first scenario */
    double gain;       /* parallelism at the largest factor / now */
} opp_row;

static int cmp_opp(const void *a, const void *b)
{
    const opp_row *x = a, *y = b;
    return x->gain < y->gain ? 1 : x->gain > y->gain ? -1
                                                   : (x->loc > y->loc) -
                                                         (x->loc < y->loc);
}

/* opportunities.csv: each candidate's program parallelism per factor, the
 * factor where it saturates (within 5% of the last factor's), and the
 * location that then leads the critical path. */
static int write_opportunities(const char *path, const ospg_profile *base,
                               const ospg_profile *p, const loctab *lt,
                               const uint32_t *cand, size_t ncand,
                               const double *f, size_t nf, char *err,
                               size_t errlen)
{
    opp_row *rows = calloc(ncand ? ncand : 1, sizeof(*rows));
    char tmp[4200];
    FILE *out = rows ? report_open_tmp(path, tmp, sizeof(tmp), err, errlen)
                     : NULL;
    if (!rows || !out) {
        if (!rows)
            snprintf(err, errlen, "%s: out of memory", path);
        free(rows);
        return -1;
    }
    double now = parallelism(base->work, base->span[0]);
    for (size_t i = 0; i < ncand; i++) {
        rows[i].loc = cand[i];
        rows[i].first = 1 + i * nf;
        rows[i].gain = parallelism(p->work, p->span[rows[i].first + nf - 1]) /
                       (now > 0 ? now : 1);
    }
    qsort(rows, ncand, sizeof(*rows), cmp_opp);
    fprintf(out, "rank,location,directive,critical_percent,parallelism");
    for (size_t k = 0; k < nf; k++) {
        char fac[REPORT_NUMBUF];
        report_format_factor(fac, f[k]);
        fprintf(out, ",parallelism_x%s", fac);
    }
    fprintf(out, ",saturation_factor,leader_at_saturation,leader_directive\n");
    char pct[REPORT_NUMBUF], par[REPORT_NUMBUF];
    for (size_t i = 0; i < ncand; i++) {
        const opp_row *r = &rows[i];
        const loctab_entry *e = loctab_get(lt, r->loc);
        uint64_t crit = 0;
        for (size_t j = 0; j < base->nlocs; j++)
            if (base->locs[j].loc == r->loc)
                crit = base->locs[j].critical[0];
        report_format_percent(pct, crit, base->span[0]);
        report_format_parallelism(par, base->work, base->span[0]);
        fprintf(out, "%zu,\"%s\",%s,%s,%s", i + 1, e ? e->where : "?",
                e ? e->directive : "unknown", pct, par);
        double last = parallelism(p->work, p->span[r->first + nf - 1]);
        size_t sat = nf - 1;
        for (size_t k = 0; k < nf; k++) {
            report_format_parallelism(par, p->work, p->span[r->first + k]);
            fprintf(out, ",%s", par);
            if (sat == nf - 1 &&
                parallelism(p->work, p->span[r->first + k]) >= 0.95 * last)
                sat = k;
        }
        char fac[REPORT_NUMBUF];
        report_format_factor(fac, f[sat]);
        const loctab_entry *le = loctab_get(lt, leader(p, r->first + sat));
        fprintf(out, ",%s,\"%s\",%s\n", fac, le ? le->where : "?",
                le ? le->directive : "unknown");
    }
    free(rows);
    return report_close_tmp(out, tmp, path, !ferror(out), err, errlen);
}

/* Candidates for opportunities: the locations holding critical work (the
 * most first), then every annotated region. */
static size_t candidates(const ospg_profile *p, const loctab *lt,
                         uint32_t *out, size_t cap)
{
    size_t n = 0;
    while (n < cap) {
        uint64_t best = 0;
        uint32_t pick = 0;
        int found = 0;
        for (size_t i = 0; i < p->nlocs; i++) {
            uint64_t cw = p->locs[i].critical[0];
            const loctab_entry *le = loctab_get(lt, p->locs[i].loc);
            /* a sampled line or a serial fragment's tag: no scenario can
             * select it (its code is some location's) */
            if (p->locs[i].tag || p->locs[i].line ||
                (le && (report_is_line(le->directive) ||
                        report_is_serial(le->directive))))
                continue;
            int taken = 0;
            for (size_t j = 0; j < n; j++)
                taken |= out[j] == p->locs[i].loc;
            if (!taken && cw > best) {
                best = cw;
                pick = p->locs[i].loc;
                found = 1;
            }
        }
        if (!found)
            break;
        out[n++] = pick;
    }
    for (const loctab_entry *e = loctab_first(lt); e && n < 2 * cap;
         e = loctab_next(lt, e)) {
        int taken = 0;
        for (size_t j = 0; j < n; j++)
            taken |= out[j] == e->id;
        if (!taken && !strcmp(e->directive, "region"))
            out[n++] = e->id;
    }
    return n;
}

/* Every id named like loc (the compiler may emit a directive twice). */
static size_t same_name(const loctab *lt, uint32_t loc, uint32_t *ids,
                        size_t cap)
{
    const loctab_entry *e = loctab_get(lt, loc);
    size_t n = 0;
    if (!e) {
        ids[0] = loc;
        return 1;
    }
    for (const loctab_entry *f = loctab_first(lt); f && n < cap;
         f = loctab_next(lt, f))
        if (!strcmp(f->where, e->where) && !strcmp(f->directive, e->directive))
            ids[n++] = f->id;
    return n;
}

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Records how long a pass took, in run.json. */
static void note_seconds(report_meta *meta, const char *key, double since)
{
    char num[32];
    snprintf(num, sizeof(num), "%.6f", seconds_now() - since);
    report_meta_set(meta, key, num);
}

/* A runtime cost the run measured (run.json), in ns; 0 when it has none. */
static uint64_t meta_cost(const report_meta *meta, const char *key)
{
    const char *v = report_meta_get(meta, key);
    return v ? strtoull(v, NULL, 10) : 0;
}

/* The burdened scenario's program span and parallelism, in run.json. */
static int note_burdened(report_meta *meta, const ospg_profile *p,
                         const scen_set *ss)
{
    for (size_t s = 1; s < ss->n && s < p->nscen; s++) {
        if (strcmp(ss->names[s], "burdened"))
            continue;
        char num[32];
        snprintf(num, sizeof(num), "%llu", (unsigned long long)p->span[s]);
        if (report_meta_set(meta, "burdened_span", num))
            return -1;
        snprintf(num, sizeof(num), "%.3f",
                 p->span[s] ? (double)p->work / (double)p->span[s] : 0.0);
        return report_meta_set(meta, "burdened_parallelism", num);
    }
    return 0;
}

/* The replay's message, with what to do when the trace's data is cut or
 * damaged and the analysis was not already partial. */
static void say_replay_error(const char *err, int partial)
{
    int damaged = strstr(err, "truncated") || strstr(err, "CRC mismatch");
    fprintf(stderr, "whatif analyze: %s%s\n", err,
            damaged && !partial ? " (whatif analyze --partial profiles what "
                                  "was recorded before it)"
                                : "");
}

int analyze_trace(const char *dir, const char *outdir,
                  const analyze_opts *ao)
{
    int status = 1;
    loctab *named = NULL;
    char err[8192] = "";
    ospg_profile prof = {0}, opp = {0};
    replay_stats st = {0};
    loctab *lt = loctab_new();
    scen_set ss, os;
    int have_ss = 0, have_os = 0;
    double *factors = NULL;
    size_t nf = 0;
    meta_sink ms = {report_meta_new(), 0, &ss, report_notes_new()};
    if (!lt || !ms.meta || !ms.notes || scen_init(&ss)) {
        fprintf(stderr, "whatif analyze: out of memory\n");
        goto out;
    }
    have_ss = 1;

    /* Pass 1: names, metadata and what-if regions. */
    double t_scan = seconds_now();
    int partial = ao && ao->partial;
    replay_hooks scan = {.meta = on_meta_hook, .region = on_region,
                         .note = on_note, .arg = &ms, .scan_only = 1,
                         .allow_partial = partial,
                         .progress = "reading the trace's names"};
    replay_stats scan_st = {0};
    int replayed = replay_dir(dir, 1, NULL, lt, &scan, &prof, &scan_st, err,
                              sizeof(err));
    if (report_meta_get(ms.meta, "unsupported")) {
        fprintf(stderr, "whatif analyze: %s: the program ran %s, which "
                        "whatif does not support: no profile\n", dir,
                report_meta_get(ms.meta, "unsupported"));
        goto out;
    }
    if (replayed) {
        say_replay_error(err, partial);
        goto out;
    }
    note_seconds(ms.meta, "analyzer_scan_seconds", t_scan);
    size_t unresolved = 0;
    if (ms.failed || srcloc_resolve(lt, ms.meta, &named, &unresolved, err,
                                    sizeof(err))) {
        fprintf(stderr, "whatif analyze: out of memory\n");
        goto out;
    }
    if (unresolved)
        fprintf(stderr, "whatif: warning: %s\n", err);

    const char *flist = ao && ao->factors ? ao->factors
                        : report_meta_get(ms.meta, "factors")
                            ? report_meta_get(ms.meta, "factors")
                            : SCEN_DEFAULT_FACTORS;
    if (scen_parse_factors(flist, &factors, &nf, err, sizeof(err))) {
        fprintf(stderr, "whatif analyze: --factors: %s\n", err);
        status = 2;
        goto out;
    }
    /* the run's metadata says which factors its results hold */
    if (ao && ao->factors && report_meta_set(ms.meta, "factors", flist)) {
        fprintf(stderr, "whatif analyze: out of memory\n");
        goto out;
    }
    /* burdened: measured task creation on every task's path, handing out
     * a chunk on every chunk's, a barrier on every barrier phase's (the
     * costs are in ns: only a time metric can take them) */
    const char *unit = report_meta_get(ms.meta, "metric_unit");
    int in_ns = unit && !strcmp(unit, "ns");
    uint64_t burden = in_ns ? meta_cost(ms.meta, "task_create_cost") : 0;
    uint64_t chunk_burden =
        in_ns ? meta_cost(ms.meta, "chunk_dispatch_cost") : 0;
    uint64_t barrier_burden = in_ns ? meta_cost(ms.meta, "barrier_cost") : 0;
    int burdened = burden || chunk_burden || barrier_burden;
    if (scen_add_all_regions(&ss, factors, nf) ||
        scen_add_each_region(&ss, named, factors, nf) ||
        scen_add_expected(&ss) ||
        (burdened && scen_add_burdened(&ss, named, burden, chunk_burden,
                                       barrier_burden))) {
        fprintf(stderr, "whatif analyze: out of memory\n");
        goto out;
    }
    for (size_t i = 0; ao && i < ao->nspecs; i++)
        if (scen_add_spec(&ss, ao->specs[i], named, factors, nf, err,
                          sizeof(err))) {
            fprintf(stderr, "whatif analyze: %s\n", err);
            status = 2;
            goto out;
        }

    /* Pass 2: the profile, in every scenario. */
    double t_profile = seconds_now();
    replay_hooks none = {.allow_partial = partial,
                         .region_tags = scen_region_tags,
                         .region_tags_arg = &ss,
                         .progress = "computing the profile",
                         .threads = ao ? ao->jobs : 0};
    if (replay_dir(dir, ss.n, ss.scen, lt, &none, &prof, &st, err,
                   sizeof(err))) {
        say_replay_error(err, partial);
        goto out;
    }
    /* names the first pass could not read are names this profile lacks */
    if (scan_st.partial && !st.partial) {
        st.partial = 1;
        snprintf(st.partial_why, sizeof(st.partial_why), "%s",
                 scan_st.partial_why);
    }
    if (st.partial && prof.nodes <= 1 && prof.work == 0) {
        /* damage before the first work (a bad block) is not a run that
         * ended early */
        if (strstr(st.partial_why, "CRC mismatch") ||
            strstr(st.partial_why, "truncated"))
            fprintf(stderr, "whatif analyze: %s: no work of the program "
                            "could be read before the trace's damage: %s\n",
                    dir, st.partial_why);
        else
            fprintf(stderr, "whatif analyze: %s: the trace holds no work of "
                            "the program (it ended before any record was "
                            "written: killed by SIGKILL, left by a raw "
                            "exit_group system call, or at its very "
                            "start)\n", dir);
        goto out;
    }
    if (st.partial) {
        char why[8192];
        snprintf(why, sizeof(why), "no: the trace ends before the program "
                 "did (%s)%s", st.partial_why,
                 st.lost_records ? "; records of nodes whose begin was lost "
                                   "were left out" : "");
        report_meta_set(ms.meta, "complete", why);
        fprintf(stderr, "whatif: warning: the trace is incomplete (the "
                        "program did not end normally, or records could not "
                        "be written): the profile covers what was recorded\n");
    }
    note_seconds(ms.meta, "analyzer_profile_seconds", t_profile);
    if (burdened && note_burdened(ms.meta, &prof, &ss)) {
        fprintf(stderr, "whatif analyze: out of memory\n");
        goto out;
    }
    srcloc_merge_profile(&prof, named);
    report_notes_fine_grains(ms.notes, &prof, named, ms.meta);
    report_notes_outliers(ms.notes, &prof, named);
    char num[32];
    snprintf(num, sizeof(num), "%zu", st.streams);
    report_meta_set(ms.meta, "trace_streams", num);
    snprintf(num, sizeof(num), "%llu", (unsigned long long)st.bytes);
    report_meta_set(ms.meta, "trace_bytes", num);
    snprintf(num, sizeof(num), "%u", st.solo ? 1 : st.threads);
    report_meta_set(ms.meta, "analyzer_threads", num);
    snprintf(num, sizeof(num), "%llu",
             (unsigned long long)st.peak_live_nodes);
    report_meta_set(ms.meta, "analyzer_peak_live_nodes", num);
    report_meta_set(ms.meta, "analyzer_version", WHATIF_VERSION);

    if (report_write_all(outdir, &prof, named, ms.meta, ms.notes,
                         (const char *const *)ss.names, ss.factors, err,
                         sizeof(err))) {
        fprintf(stderr, "whatif analyze: %s\n", err);
        goto out;
    }
    char path[4096];
    if (ss.n > 1) {
        snprintf(path, sizeof(path), "%s/whatif.csv", outdir);
        if (report_write_whatif_csv(path, &prof, named,
                                    (const char *const *)ss.names, ss.factors,
                                    err, sizeof(err))) {
            fprintf(stderr, "whatif analyze: %s\n", err);
            goto out;
        }
    }

    /* Pass 3: automatic opportunities. */
    if (!ao || ao->opportunities) {
        uint32_t cand[2 * MAX_CANDIDATES];
        size_t nc = candidates(&prof, named, cand, MAX_CANDIDATES);
        if (scen_init(&os)) {
            fprintf(stderr, "whatif analyze: out of memory\n");
            goto out;
        }
        have_os = 1;
        for (size_t i = 0; i < nc; i++) {
            for (size_t p = 1; p < ss.npaths; p++)
                if (ss.paths[p].defined &&
                    scen_add_path(&os, (uint32_t)p, ss.paths[p].parent,
                                  ss.paths[p].loc, 0))
                    goto nomem;
            const loctab_entry *e = loctab_get(named, cand[i]);
            uint32_t ids[64];
            size_t nids = same_name(named, cand[i], ids, 64);
            if (e && !strcmp(e->directive, "region")) {
                if (scen_add_spec(&os, e->where, named, factors, nf, err,
                                  sizeof(err)))
                    goto nomem;
            } else if (scen_add_locs(&os, e ? e->where : "?", ids, nids,
                                     factors, nf)) {
                goto nomem;
            }
        }
        none.progress = "computing the opportunities";
        if (nc && replay_dir(dir, os.n, os.scen, lt, &none, &opp, NULL, err,
                             sizeof(err)) == 0) {
            snprintf(path, sizeof(path), "%s/opportunities.csv", outdir);
            if (write_opportunities(path, &prof, &opp, named, cand, nc,
                                    factors, nf, err, sizeof(err)))
                fprintf(stderr, "whatif analyze: %s\n", err);
        }
    }

    if (!ao || !ao->silent_notes)
        report_notes_print(stderr, ms.notes, named,
                           report_meta_get(ms.meta, "metric_unit"));
    status = 0;
    goto out;
nomem:
    fprintf(stderr, "whatif analyze: out of memory\n");
out:
    ospg_profile_free(&prof);
    ospg_profile_free(&opp);
    if (have_ss)
        scen_free(&ss);
    if (have_os)
        scen_free(&os);
    free(factors);
    loctab_free(named);
    loctab_free(lt);
    report_meta_free(ms.meta);
    report_notes_free(ms.notes);
    return status;
}
