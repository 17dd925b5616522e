/* summary.c - the head of a profile, as `whatif run` and `whatif analyze`
 * print it on stderr (the program's stdout stays the program's): the
 * program's work, span and parallelism, the leading rows, and whether the
 * profile covers the whole run.  Reads the files a run wrote, so both
 * commands print the same thing in every mode.
 */
#include "summary.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define SUMMARY_ROWS 12 /* rows after the program */

/* The value of key in run.json as text ("" when absent): a string
 * (quoted) or a number (bare). */
static void json_value(const char *path, const char *key, int quoted,
                       char *buf, size_t len)
{
    buf[0] = 0;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char line[8192], want[128];
    snprintf(want, sizeof(want), quoted ? "  \"%s\": \"" : "  \"%s\": ", key);
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, want, strlen(want))) {
            char *v = line + strlen(want), *end = quoted ? strrchr(v, '"')
                                                         : v + strcspn(v, ",\n");
            if (end)
                *end = 0;
            snprintf(buf, len, "%s", v);
            break;
        }
    fclose(f);
}

static void json_number(const char *path, const char *key, char *buf,
                        size_t len)
{
    json_value(path, key, 0, buf, len);
}

void summary_json_string(const char *path, const char *key, char *buf,
                       size_t len)
{
    json_value(path, key, 1, buf, len);
}

/* Splits a profile.csv line into its 8 fields (location may be quoted).
 * Returns the number of fields. */
static int csv_fields(char *line, char **f)
{
    int n = 0;
    char *p = line;
    while (n < 8 && *p && *p != '\n') {
        if (*p == '"') {
            f[n++] = ++p;
            char *w = p;
            while (*p && !(*p == '"' && p[1] != '"')) {
                if (*p == '"')
                    p++;
                *w++ = *p++;
            }
            *w = 0;
            if (*p)
                p++;
        } else {
            f[n++] = p;
            p += strcspn(p, ",\n");
        }
        if (*p == ',' || *p == '\n')
            *p++ = 0;
    }
    return n;
}

#define LINE_ROWS 5 /* sampled lines shown */

/* The source lines that hold most of the critical path, when sampled. */
static void summary_lines(const char *dir)
{
    char path[PATH_MAX + 64], line[8192];
    snprintf(path, sizeof(path), "%s/critical_lines.csv", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    int row = 0;
    while (fgets(line, sizeof(line), f) && row <= LINE_ROWS) {
        char *fl[8];
        if (row++ == 0)
            continue;
        if (csv_fields(line, fl) < 5 || !strcmp(fl[3], "0"))
            break;
        if (row == 2)
            fprintf(stderr, "whatif: critical path by source line "
                            "(sampled; critical_lines.csv):\n");
        fprintf(stderr, "  %-40s %-24s %8s%%\n", fl[0], fl[1], fl[4]);
    }
    fclose(f);
}

#define SERIAL_ROWS 3 /* serial fragments shown */

/* The program's serial fragments that hold most of the critical path, by
 * the events around them. */
static void summary_serial(const char *dir)
{
    char path[PATH_MAX + 64], line[8192];
    snprintf(path, sizeof(path), "%s/serial_fragments.csv", dir);
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    int row = 0;
    while (fgets(line, sizeof(line), f) && row <= SERIAL_ROWS) {
        char *fl[8];
        if (row++ == 0)
            continue;
        if (csv_fields(line, fl) < 6 || !strcmp(fl[4], "0"))
            break;
        if (row == 2)
            fprintf(stderr, "whatif: the program's serial code on the "
                            "critical path, between (serial_fragments.csv):\n");
        fprintf(stderr, "  %8s%%  %s -> %s\n", fl[5], fl[0], fl[1]);
    }
    fclose(f);
}

int summary_print(const char *dir)
{
    char csv[PATH_MAX + 64], json[PATH_MAX + 64], metric[128];
    snprintf(csv, sizeof(csv), "%s/profile.csv", dir);
    snprintf(json, sizeof(json), "%s/run.json", dir);
    FILE *f = fopen(csv, "r");
    if (!f)
        return -1;
    summary_json_string(json, "metric", metric, sizeof(metric));
    char line[8192], *fl[8];
    int row = 0;
    while (fgets(line, sizeof(line), f)) {
        if (row++ == 0)
            continue; /* the header */
        if (csv_fields(line, fl) < 8)
            continue;
        if (row == 2) {
            fprintf(stderr, "whatif: program: work %s, span %s, parallelism "
                            "%s (metric: %s)\n", fl[3], fl[4], fl[5],
                    metric[0] ? metric : "unknown");
            char bpar[64], cost[64], ccost[64], bcost[64], unit[64];
            json_number(json, "burdened_parallelism", bpar, sizeof(bpar));
            json_number(json, "task_create_cost", cost, sizeof(cost));
            json_number(json, "chunk_dispatch_cost", ccost, sizeof(ccost));
            json_number(json, "barrier_cost", bcost, sizeof(bcost));
            summary_json_string(json, "metric_unit", unit, sizeof(unit));
            if (bpar[0] && (cost[0] || ccost[0] || bcost[0]))
                fprintf(stderr, "whatif: burdened parallelism %s (each "
                                "task's path starting %s %s later, each "
                                "loop chunk's %s %s, each barrier phase's "
                                "%s %s: what creating a task, handing out "
                                "a chunk and a barrier cost)\n",
                        bpar, cost[0] ? cost : "0", unit,
                        ccost[0] ? ccost : "0", unit,
                        bcost[0] ? bcost : "0", unit);
            fprintf(stderr, "%-32s %-9s %9s %14s %8s %9s\n", "location",
                    "directive", "instances", "work", "parall.",
                    "critical%");
            continue;
        }
        if (row > SUMMARY_ROWS + 2)
            continue;
        fprintf(stderr, "%-32s %-9s %9s %14s %8s %9s\n", fl[0], fl[1], fl[2],
                fl[3], fl[5], fl[7]);
    }
    fclose(f);
    if (row > SUMMARY_ROWS + 2)
        fprintf(stderr, "... %d more rows\n", row - SUMMARY_ROWS - 2);
    summary_serial(dir);
    summary_lines(dir);
    char sample_note[512];
    summary_json_string(json, "sample_note", sample_note, sizeof(sample_note));
    if (sample_note[0])
        fprintf(stderr, "whatif: %s\n", sample_note);
    char complete[512];
    summary_json_string(json, "incomplete_why", complete, sizeof(complete));
    if (complete[0])
        fprintf(stderr, "whatif: the profile covers only part of the run: "
                        "%s\n", complete);
    char report[PATH_MAX + 32];
    snprintf(report, sizeof(report), "%s/report.html", dir);
    fprintf(stderr, "whatif: profile in %s/ (profile.csv, run.json, "
                    "profile.db%s)\n", dir,
            access(report, F_OK) ? "" : "; report.html to view");
    return 0;
}
