/* timing.c - timed runs at several thread counts (timing.h). */
#include "timing.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "report.h"

int timing_parse(const char *list, timing_set *ts, char *err, size_t errlen)
{
    memset(ts, 0, sizeof(*ts));
    ts->threads[ts->n++] = 1;
    const char *p = list;
    while (*p) {
        char *end;
        if (*p < '0' || *p > '9') {
            snprintf(err, errlen, "'%s': use thread counts separated by "
                                  "commas, as in 1,2,4", list);
            return -1;
        }
        long v = strtol(p, &end, 10);
        if (v < 1 || v > 4096 || (*end && *end != ',') ||
            (*end == ',' && !end[1])) {
            snprintf(err, errlen, "'%s': each count from 1 to 4096, "
                                  "separated by commas", list);
            return -1;
        }
        int seen = 0;
        for (size_t i = 0; i < ts->n; i++)
            seen |= ts->threads[i] == v;
        if (seen && v != 1) {
            snprintf(err, errlen, "'%s': %ld twice", list, v);
            return -1;
        }
        if (!seen) {
            if (ts->n == TIMING_MAX) {
                snprintf(err, errlen, "'%s': at most %d counts", list,
                         TIMING_MAX);
                return -1;
            }
            size_t i = ts->n++;
            while (i > 0 && ts->threads[i - 1] > v) {
                ts->threads[i] = ts->threads[i - 1];
                i--;
            }
            ts->threads[i] = (int)v;
        }
        p = *end ? end + 1 : end;
    }
    return 0;
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* One run at threads; its wall time in *secs.  Returns its status. */
static int run_once(int threads, const char *path, char *const *argv,
                    const char *preload, double *secs)
{
    double t0 = now_seconds();
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        char n[16];
        snprintf(n, sizeof(n), "%d", threads);
        setenv("OMP_NUM_THREADS", n, 1);
        setenv("OMP_TOOL", "disabled", 1);
        if (preload)
            setenv("LD_PRELOAD", preload, 1);
        int null = open("/dev/null", O_RDWR);
        if (null >= 0) {
            dup2(null, 0);
            dup2(null, 1);
            dup2(null, 2);
        }
        execv(path, argv);
        _exit(127);
    }
    int wst;
    while (waitpid(pid, &wst, 0) < 0)
        if (errno != EINTR)
            return -1;
    *secs = now_seconds() - t0;
    if (WIFSIGNALED(wst))
        return 128 + WTERMSIG(wst);
    return WEXITSTATUS(wst);
}

int timing_run(timing_set *ts, const char *path, char *const *argv,
               const char *preload, char *err, size_t errlen)
{
    for (size_t i = 0; i < ts->n; i++) {
        int st = run_once(ts->threads[i], path, argv, preload,
                          &ts->seconds[i]);
        int why = errno;
        if (st) {
            snprintf(err, errlen, "the timed run at %d thread%s %s %d "
                                  "(its output went to /dev/null: run it "
                                  "alone to see why)",
                     ts->threads[i], ts->threads[i] > 1 ? "s" : "",
                     st < 0 ? "could not start, error" : "ended with status",
                     st < 0 ? why : st);
            return st < 0 ? 1 : st;
        }
    }
    return 0;
}

static int store_csv(const timing_set *ts, const char *dir, char *err,
                     size_t errlen)
{
    char path[PATH_MAX + 32], tmp[PATH_MAX + 64];
    snprintf(path, sizeof(path), "%s/timings.csv", dir);
    FILE *f = report_open_tmp(path, tmp, sizeof(tmp), err, errlen);
    if (!f)
        return -1;
    fputs("threads,wall_seconds,speedup\n", f);
    for (size_t i = 0; i < ts->n; i++)
        fprintf(f, "%d,%.6f,%.3f\n", ts->threads[i], ts->seconds[i],
                ts->seconds[0] / ts->seconds[i]);
    return report_close_tmp(f, tmp, path, !ferror(f), err, errlen);
}

int timing_store(const timing_set *ts, const char *dir, char *err,
                 size_t errlen)
{
    if (store_csv(ts, dir, err, errlen))
        return -1;
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/profile.db", dir);
    sqlite3 *db = NULL;
    sqlite3_stmt *ins = NULL;
    char *emsg = NULL;
    int rc = sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "BEGIN; DROP TABLE IF EXISTS timing;"
                              " CREATE TABLE timing(threads INTEGER PRIMARY"
                              " KEY, wall_seconds REAL NOT NULL);",
                          NULL, NULL, &emsg);
    if (rc == SQLITE_OK)
        rc = sqlite3_prepare_v2(db, "INSERT INTO timing VALUES (?, ?)", -1,
                                &ins, NULL);
    for (size_t i = 0; rc == SQLITE_OK && i < ts->n; i++) {
        sqlite3_bind_int(ins, 1, ts->threads[i]);
        sqlite3_bind_double(ins, 2, ts->seconds[i]);
        rc = sqlite3_step(ins) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
        sqlite3_reset(ins);
    }
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(db, "COMMIT", NULL, NULL, &emsg);
    if (rc != SQLITE_OK)
        snprintf(err, errlen, "%s: %s", path,
                 emsg ? emsg : db ? sqlite3_errmsg(db) : "cannot open");
    sqlite3_free(emsg);
    sqlite3_finalize(ins);
    sqlite3_close(db);
    return rc == SQLITE_OK ? 0 : -1;
}
