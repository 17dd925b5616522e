/* test_report.c - tests of the location table and of the result writers
 * (analyzer/loctab.c, analyzer/report.c): exact CSV and JSON bytes, JSON
 * escaping round trips, the SQLite database read back with SELECT.
 * Profiles are built by hand here (no dependence on ospg.c).
 * Prints failures on stderr and "N passed, N failed" last on stdout; exits
 * nonzero when any check failed.
 */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <sqlite3.h>

#include "loctab.h"
#include "report.h"

static int npass, nfail;

#define CHECK(cond)                                                          \
    do {                                                                     \
        if (cond) {                                                          \
            npass++;                                                         \
        } else {                                                             \
            nfail++;                                                         \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, \
                    #cond);                                                  \
        }                                                                    \
    } while (0)

#define CHECK_STR(got, want) check_str(__FILE__, __LINE__, #got, got, want)

static void check_str(const char *file, int line, const char *expr,
                      const char *got, const char *want)
{
    if (got && want && !strcmp(got, want)) {
        npass++;
        return;
    }
    nfail++;
    fprintf(stderr, "%s:%d: %s\n--- got ---\n%s\n--- want ---\n%s\n---\n",
            file, line, expr, got ? got : "(null)", want ? want : "(null)");
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(2);
    }
    return p;
}

/* ---- Temporary files ---- */

static char tmpdir[64];
static char *created[64];
static size_t ncreated;

/* A path in the temporary directory, removed at the end. */
static const char *tmp_path(const char *name)
{
    for (size_t i = 0; i < ncreated; i++)
        if (!strcmp(strrchr(created[i], '/') + 1, name))
            return created[i];
    if (ncreated == sizeof created / sizeof *created)
        exit(2);
    char *p = xcalloc(strlen(tmpdir) + strlen(name) + 2, 1);
    sprintf(p, "%s/%s", tmpdir, name);
    created[ncreated++] = p;
    return p;
}

static void cleanup_tmp(void)
{
    for (size_t i = 0; i < ncreated; i++) {
        unlink(created[i]);
        free(created[i]);
    }
    rmdir(tmpdir);
}

/* Whole file as a NUL-terminated string (caller frees), NULL on error. */
static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    char *buf = xcalloc(cap, 1);
    size_t r;
    while ((r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (cap - n - 1 == 0) {
            cap *= 2;
            buf = realloc(buf, cap);
            if (!buf)
                exit(2);
        }
    }
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static void spit(const char *path, const char *text)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        exit(2);
    fputs(text, f);
    fclose(f);
}

/* ---- Hand-made profiles ---- */

typedef struct locspec {
    uint32_t loc;
    uint64_t instances, work;
    uint64_t span[2], crit[2];
} locspec;

static ospg_profile make_profile(size_t nscen, uint64_t work,
                                 const uint64_t *span, const locspec *ls,
                                 size_t n, uint64_t nodes)
{
    ospg_profile p;
    memset(&p, 0, sizeof p);
    p.nscen = nscen;
    p.work = work;
    p.span = xcalloc(nscen, sizeof *p.span);
    memcpy(p.span, span, nscen * sizeof *span);
    p.nlocs = n;
    p.locs = xcalloc(n, sizeof *p.locs);
    for (size_t i = 0; i < n; i++) {
        p.locs[i].loc = ls[i].loc;
        p.locs[i].instances = ls[i].instances;
        p.locs[i].work = ls[i].work;
        p.locs[i].span = xcalloc(nscen, sizeof(uint64_t));
        p.locs[i].critical = xcalloc(nscen, sizeof(uint64_t));
        for (size_t s = 0; s < nscen; s++) {
            p.locs[i].span[s] = ls[i].span[s];
            p.locs[i].critical[s] = ls[i].crit[s];
        }
    }
    p.nodes = nodes;
    return p;
}

static void free_profile(ospg_profile *p)
{
    for (size_t i = 0; i < p->nlocs; i++) {
        free(p->locs[i].span);
        free(p->locs[i].critical);
    }
    free(p->locs);
    free(p->span);
    memset(p, 0, sizeof *p);
}

/* Profile 1: one scenario, every ordering and formatting case. */
static const locspec prof1_locs[] = {
    { 0, 1, 1000, { 500 }, { 100 } },
    { 1, 2, 600, { 150 }, { 150 } },
    { 2, 2, 500, { 100 }, { 100 } },
    { 3, 3, 300, { 100 }, { 50 } },
    { 4, 1, 300, { 0 }, { 50 } },  /* span 0: inf */
    { 5, 0, 40, { 10 }, { 0 } },   /* neither instances nor critical */
    { 6, 1, 0, { 0 }, { 0 } },     /* not in the table; 0/0 */
    { 7, 0, 0, { 0 }, { 50 } },    /* critical only */
    { 8, 1, 5, { 3 }, { 0 } },
    { 9, 1, 7, { 7 }, { 0 } },     /* same location string as 10 */
    { 10, 1, 7, { 7 }, { 0 } },
};

static ospg_profile profile1(void)
{
    uint64_t span = 500;
    return make_profile(1, 1000, &span, prof1_locs,
                        sizeof prof1_locs / sizeof *prof1_locs, 42);
}

static loctab *table1(void)
{
    loctab *lt = loctab_new();
    if (!lt)
        exit(2);
    int r = 0;
    r |= loctab_set(lt, 1, "parallel", "a.c:10");
    r |= loctab_set(lt, 2, "loop", "a.c:12");
    r |= loctab_set(lt, 3, "task", "b,c.c:7");
    r |= loctab_set(lt, 4, "task", "q\"uote.c:1");
    r |= loctab_set(lt, 5, "single", "z.c:1");
    r |= loctab_set(lt, 7, "barrier", "e.c:9");
    r |= loctab_set(lt, 8, "sections", "n\nl.c:3");
    r |= loctab_set(lt, 9, "parallel", "d.c:4");
    r |= loctab_set(lt, 10, "loop", "d.c:4");
    CHECK(r == 0);
    return lt;
}

/* Profile 2: two scenarios; in scenario 1 the program span is 0. */
static const locspec prof2_locs[] = {
    { 0, 1, 100, { 50, 0 }, { 0, 0 } },
    { 1, 1, 70, { 35, 0 }, { 10, 0 } },
    { 2, 4, 30, { 30, 0 }, { 40, 5 } },
    { 3, 1, 0, { 0, 0 }, { 0, 0 } },
};

static ospg_profile profile2(void)
{
    uint64_t span[2] = { 50, 0 };
    return make_profile(2, 100, span, prof2_locs,
                        sizeof prof2_locs / sizeof *prof2_locs, 9);
}

static loctab *table2(void)
{
    loctab *lt = loctab_new();
    if (!lt)
        exit(2);
    CHECK(loctab_intern(lt, "loop", "x.c:1", NULL) == 1);
    CHECK(loctab_intern(lt, "task", "x.c:2", NULL) == 2);
    CHECK(loctab_intern(lt, "task", "x.c:3", NULL) == 3);
    return lt;
}

/* ---- loctab ---- */

static void test_loctab(void)
{
    loctab *lt = loctab_new();
    CHECK(lt != NULL);
    if (!lt)
        return;
    const loctab_entry *e = loctab_get(lt, 0);
    CHECK(e && e->id == 0 && !strcmp(e->directive, "program") &&
          !strcmp(e->where, "program"));
    CHECK(loctab_count(lt) == 1);

    int err = 99;
    CHECK(loctab_intern(lt, "parallel", "a.c:10", &err) == 1 && err == 0);
    CHECK(loctab_intern(lt, "parallel", "a.c:10", &err) == 1 && err == 0);
    CHECK(loctab_intern(lt, "loop", "a.c:10", &err) == 2);
    CHECK(loctab_intern(lt, "program", "program", &err) == 0);
    CHECK(loctab_count(lt) == 3);

    /* redefinitions */
    CHECK(loctab_set(lt, 2, "loop", "a.c:10") == LOCTAB_OK);
    CHECK(loctab_set(lt, 2, "loop", "a.c:11") == LOCTAB_ERR_CONFLICT);
    CHECK(loctab_set(lt, 2, "loopx", "a.c:10") == LOCTAB_ERR_CONFLICT);
    CHECK(loctab_set(lt, 0, "parallel", "program") == LOCTAB_ERR_CONFLICT);
    CHECK(loctab_set(lt, 0, "program", "program") == LOCTAB_OK);
    e = loctab_get(lt, 2);
    CHECK(e && !strcmp(e->where, "a.c:10") && !strcmp(e->directive, "loop"));
    /* the split between directive and where is part of the identity */
    CHECK(loctab_intern(lt, "loop", "a.c:1", NULL) == 3);
    CHECK(loctab_intern(lt, "loopa", ".c:1", NULL) == 4);
    CHECK(loctab_intern(lt, "", "", NULL) == 5);
    CHECK(loctab_intern(lt, "", "", NULL) == 5);

    /* explicit ids; intern continues after the largest */
    char dir[16] = "task", where[16] = "b.c:5";
    CHECK(loctab_set(lt, 10, dir, where) == LOCTAB_OK);
    strcpy(dir, "XXXX");
    strcpy(where, "YYYYY");
    e = loctab_get(lt, 10);
    CHECK(e && !strcmp(e->directive, "task") && !strcmp(e->where, "b.c:5"));
    CHECK(loctab_intern(lt, "single", "c.c:1", NULL) == 11);
    CHECK(loctab_set(lt, 7, "barrier", "c.c:2") == LOCTAB_OK);
    CHECK(loctab_intern(lt, "critical", "c.c:3", NULL) == 12);
    /* a second id for an existing pair: intern keeps the first */
    CHECK(loctab_set(lt, 20, "parallel", "a.c:10") == LOCTAB_OK);
    CHECK(loctab_intern(lt, "parallel", "a.c:10", NULL) == 1);
    e = loctab_get(lt, 20);
    CHECK(e && e->id == 20 && !strcmp(e->directive, "parallel"));
    CHECK(loctab_get(lt, 99) == NULL);
    CHECK(loctab_get(lt, LOCTAB_ID_NONE) == NULL);

    /* bad arguments leave the table unchanged */
    size_t before = loctab_count(lt);
    CHECK(loctab_set(lt, LOCTAB_ID_NONE, "x", "y") == LOCTAB_ERR_ARG);
    CHECK(loctab_set(lt, 30, NULL, "y") == LOCTAB_ERR_ARG);
    CHECK(loctab_set(lt, 30, "x", NULL) == LOCTAB_ERR_ARG);
    CHECK(loctab_intern(lt, NULL, "y", &err) == LOCTAB_ID_NONE &&
          err == LOCTAB_ERR_ARG);
    CHECK(loctab_set(NULL, 1, "x", "y") == LOCTAB_ERR_ARG);
    CHECK(loctab_intern(NULL, "x", "y", &err) == LOCTAB_ID_NONE &&
          err == LOCTAB_ERR_ARG);
    CHECK(loctab_count(lt) == before);

    /* iteration: definition order, every entry once */
    uint32_t want[] = { 0, 1, 2, 3, 4, 5, 10, 11, 7, 12, 20 };
    size_t nwant = sizeof want / sizeof *want, i = 0;
    int order_ok = 1;
    for (e = loctab_first(lt); e; e = loctab_next(lt, e), i++)
        if (i >= nwant || e->id != want[i])
            order_ok = 0;
    CHECK(order_ok && i == nwant && loctab_count(lt) == nwant);

    /* the id space runs out below LOCTAB_ID_NONE */
    CHECK(loctab_set(lt, UINT32_MAX - 1, "task", "last") == LOCTAB_OK);
    CHECK(loctab_intern(lt, "task", "new", &err) == LOCTAB_ID_NONE &&
          err == LOCTAB_ERR_FULL);
    CHECK(loctab_intern(lt, "task", "last", &err) == UINT32_MAX - 1 &&
          err == LOCTAB_OK);
    CHECK(loctab_intern(lt, "loop", "a.c:10", &err) == 2 && err == LOCTAB_OK);

    CHECK(!strcmp(loctab_strerror(LOCTAB_ERR_CONFLICT),
                  "location redefined with other text"));
    loctab_free(lt);
    loctab_free(NULL);

    /* many entries: lookups survive table growth */
    lt = loctab_new();
    char w[32];
    int many_ok = 1;
    for (uint32_t k = 1; k <= 5000; k++) {
        snprintf(w, sizeof w, "f.c:%u", (unsigned)k);
        if (loctab_intern(lt, k % 2 ? "loop" : "task", w, NULL) != k)
            many_ok = 0;
    }
    for (uint32_t k = 1; k <= 5000; k++) {
        snprintf(w, sizeof w, "f.c:%u", (unsigned)k);
        e = loctab_get(lt, k);
        if (!e || strcmp(e->where, w) ||
            loctab_intern(lt, k % 2 ? "loop" : "task", w, NULL) != k)
            many_ok = 0;
    }
    CHECK(many_ok && loctab_count(lt) == 5001);
    loctab_free(lt);
}

/* ---- Number formatting ---- */

static void test_format(void)
{
    char b[REPORT_NUMBUF];
#define PAR(w, s, want)                    \
    do {                                   \
        report_format_parallelism(b, w, s); \
        CHECK_STR(b, want);                \
    } while (0)
#define PCT(c, s, want)                \
    do {                               \
        report_format_percent(b, c, s); \
        CHECK_STR(b, want);            \
    } while (0)
    PAR(2, 3, "0.667");
    PAR(1, 3, "0.333");
    PAR(1, 2000, "0.001");  /* exactly half: up */
    PAR(1, 2001, "0.000");
    PAR(10005, 10000, "1.001"); /* exact, not the double 1.000499... */
    PAR(1999, 2000, "1.000");
    PAR(8, 8, "1.000");
    PAR(0, 7, "0.000");
    PAR(5, 0, "inf");
    PAR(0, 0, "0.000");
    PAR(UINT64_MAX, 1, "18446744073709551615.000");
    PAR(UINT64_MAX, UINT64_MAX, "1.000");
    PAR(1, UINT64_MAX, "0.000");
    PCT(1, 3, "33.333");
    PCT(2, 3, "66.667");
    PCT(3, 3, "100.000");
    PCT(1, 200000, "0.001");
    PCT(0, 9, "0.000");
    PCT(5, 0, "0.000");
    PCT(UINT64_MAX, 1, "1844674407370955161500.000");
#undef PAR
#undef PCT
}

/* ---- CSV ---- */

static const char csv_header[] =
    "location,directive,instances,work,span,parallelism,critical_work,"
    "critical_percent,grains,mean_grain_work,min_grain_work,max_grain_work,"
    "median_grain_work\n";

static void test_csv(void)
{
    char err[256];
    ospg_profile p = profile1();
    loctab *lt = table1();
    const char *path = tmp_path("p1.csv");

    CHECK(report_write_profile_csv(path, &p, 0, lt, err, sizeof err) == 0);
    CHECK_STR(err, "");
    char *got = slurp(path);
    char want[2048];
    snprintf(want, sizeof want, "%s%s", csv_header,
             "program,program,1,1000,500,2.000,100,20.000,0,0,0,0,0\n"
             "a.c:10,parallel,2,600,150,4.000,150,30.000,0,0,0,0,0\n"
             "a.c:12,loop,2,500,100,5.000,100,20.000,0,0,0,0,0\n"
             "\"b,c.c:7\",task,3,300,100,3.000,50,10.000,0,0,0,0,0\n"
             "\"q\"\"uote.c:1\",task,1,300,0,inf,50,10.000,0,0,0,0,0\n"
             "e.c:9,barrier,0,0,0,0.000,50,10.000,0,0,0,0,0\n"
             "d.c:4,loop,1,7,7,1.000,0,0.000,0,0,0,0,0\n"
             "d.c:4,parallel,1,7,7,1.000,0,0.000,0,0,0,0,0\n"
             "\"n\nl.c:3\",sections,1,5,3,1.667,0,0.000,0,0,0,0,0\n"
             "loc#6,unknown,1,0,0,0.000,0,0.000,0,0,0,0,0\n");
    CHECK_STR(got, want);
    free(got);

    /* no table: every location but the program is loc#N, sorted as text */
    CHECK(report_write_profile_csv(path, &p, 0, NULL, err, sizeof err) == 0);
    got = slurp(path);
    snprintf(want, sizeof want, "%s%s", csv_header,
             "program,program,1,1000,500,2.000,100,20.000,0,0,0,0,0\n"
             "loc#1,unknown,2,600,150,4.000,150,30.000,0,0,0,0,0\n"
             "loc#2,unknown,2,500,100,5.000,100,20.000,0,0,0,0,0\n"
             "loc#3,unknown,3,300,100,3.000,50,10.000,0,0,0,0,0\n"
             "loc#4,unknown,1,300,0,inf,50,10.000,0,0,0,0,0\n"
             "loc#7,unknown,0,0,0,0.000,50,10.000,0,0,0,0,0\n"
             "loc#10,unknown,1,7,7,1.000,0,0.000,0,0,0,0,0\n"
             "loc#9,unknown,1,7,7,1.000,0,0.000,0,0,0,0,0\n"
             "loc#8,unknown,1,5,3,1.667,0,0.000,0,0,0,0,0\n"
             "loc#6,unknown,1,0,0,0.000,0,0.000,0,0,0,0,0\n");
    CHECK_STR(got, want);
    free(got);

    /* the FILE version writes the same bytes */
    FILE *f = fopen(tmp_path("p1f.csv"), "w");
    CHECK(f && report_fprint_profile_csv(f, "p1f", &p, 0, lt, err,
                                         sizeof err) == 0);
    if (f)
        fclose(f);
    got = slurp(tmp_path("p1f.csv"));
    char *again = NULL;
    CHECK(report_write_profile_csv(path, &p, 0, lt, err, sizeof err) == 0);
    again = slurp(path);
    CHECK(got && again && !strcmp(got, again));
    free(got);
    free(again);

    /* a sampled line whose name was lost with its stream (loc 6 has no
     * LOC here) is no directive row: it goes with the lines */
    for (size_t i = 0; i < p.nlocs; i++)
        p.locs[i].line = p.locs[i].loc == 6;
    CHECK(report_write_profile_csv(path, &p, 0, lt, err, sizeof err) == 0);
    got = slurp(path);
    CHECK(got && !strstr(got, "loc#6") && strstr(got, "d.c:4,loop"));
    free(got);
    for (size_t i = 0; i < p.nlocs; i++)
        p.locs[i].line = 0;

    /* errors */
    CHECK(report_write_profile_csv(path, &p, 1, lt, err, sizeof err) == -1);
    CHECK(strstr(err, "scenario 1 out of range") != NULL);
    CHECK(!strncmp(err, path, strlen(path)));
    char bad[128];
    snprintf(bad, sizeof bad, "%s/no/such/dir.csv", tmpdir);
    CHECK(report_write_profile_csv(bad, &p, 0, lt, err, sizeof err) == -1);
    snprintf(want, sizeof want, "%s: %s", bad, strerror(ENOENT));
    CHECK_STR(err, want);
    /* a device is never written over (files are renamed into place) */
    CHECK(report_write_profile_csv("/dev/full", &p, 0, lt, err,
                                   sizeof err) == -1);
    CHECK_STR(err, "/dev/full: not a regular file");
    /* a symbolic link planted at the path is replaced, not followed */
    char target[160], link_path[160];
    snprintf(target, sizeof target, "%s/victim.txt", tmpdir);
    snprintf(link_path, sizeof link_path, "%s/linked.csv", tmpdir);
    FILE *vf = fopen(target, "w");
    CHECK(vf && fputs("keep", vf) >= 0 && fclose(vf) == 0);
    CHECK(symlink(target, link_path) == 0);
    CHECK(report_write_profile_csv(link_path, &p, 0, lt, err, sizeof err) ==
          0);
    char *victim = slurp(target);
    CHECK_STR(victim, "keep");
    free(victim);
    struct stat lsb;
    CHECK(lstat(link_path, &lsb) == 0 && S_ISREG(lsb.st_mode));
    CHECK(report_write_profile_csv(path, &p, 0, lt, NULL, 0) == 0);
    free_profile(&p);
    loctab_free(lt);

    /* two scenarios; in scenario 1 the program span is 0 */
    p = profile2();
    lt = table2();
    CHECK(report_write_profile_csv(path, &p, 0, lt, err, sizeof err) == 0);
    got = slurp(path);
    snprintf(want, sizeof want, "%s%s", csv_header,
             "program,program,1,100,50,2.000,0,0.000,0,0,0,0,0\n"
             "x.c:2,task,4,30,30,1.000,40,80.000,0,0,0,0,0\n"
             "x.c:1,loop,1,70,35,2.000,10,20.000,0,0,0,0,0\n"
             "x.c:3,task,1,0,0,0.000,0,0.000,0,0,0,0,0\n");
    CHECK_STR(got, want);
    free(got);
    CHECK(report_write_profile_csv(path, &p, 1, lt, err, sizeof err) == 0);
    got = slurp(path);
    snprintf(want, sizeof want, "%s%s", csv_header,
             "program,program,1,100,0,inf,0,0.000,0,0,0,0,0\n"
             "x.c:1,loop,1,70,0,inf,0,0.000,0,0,0,0,0\n"
             "x.c:2,task,4,30,0,inf,5,0.000,0,0,0,0,0\n"
             "x.c:3,task,1,0,0,0.000,0,0.000,0,0,0,0,0\n");
    CHECK_STR(got, want);
    free(got);
    CHECK(report_write_profile_csv(path, &p, 2, lt, err, sizeof err) == -1);
    CHECK(strstr(err, "scenario 2 out of range (profile has 2)") != NULL);
    free_profile(&p);

    /* no location-0 statistics: the program row is synthesized */
    static const locspec l3[] = { { 1, 1, 10, { 4 }, { 4 } } };
    uint64_t span3 = 4;
    p = make_profile(1, 10, &span3, l3, 1, 3);
    loctab *lt3 = loctab_new();
    CHECK(loctab_set(lt3, 1, "parallel", "a.c:10") == 0);
    CHECK(report_write_profile_csv(path, &p, 0, lt3, err, sizeof err) == 0);
    got = slurp(path);
    snprintf(want, sizeof want, "%s%s", csv_header,
             "program,program,1,10,4,2.500,0,0.000,0,0,0,0,0\n"
             "a.c:10,parallel,1,10,4,2.500,4,100.000,0,0,0,0,0\n");
    CHECK_STR(got, want);
    free(got);
    /* grains: counted, their mean own work rounded to the nearest unit;
     * a sampled line is no row of this file */
    p.locs[0].grains = 3; /* loc 1: the only entry */
    p.locs[0].grain_work = 11;
    p.locs[0].grain_min = 2;
    p.locs[0].grain_max = 5;
    uint64_t hist[OSPG_HIST_BUCKETS] = {0}; /* 2, 4 and 5: the median 4 */
    hist[2] = hist[4] = hist[5] = 1;
    p.locs[0].grain_hist = hist;
    CHECK(loctab_set(lt3, 2, "line:main", "a.c:11") == 0);
    CHECK(report_write_profile_csv(path, &p, 0, lt3, err, sizeof err) == 0);
    got = slurp(path);
    snprintf(want, sizeof want, "%s%s", csv_header,
             "program,program,1,10,4,2.500,0,0.000,0,0,0,0,0\n"
             "a.c:10,parallel,1,10,4,2.500,4,100.000,3,4,2,5,4\n");
    CHECK_STR(got, want);
    free(got);
    free_profile(&p);
    loctab_free(lt3);

    /* an empty profile */
    uint64_t zero = 0;
    p = make_profile(1, 0, &zero, NULL, 0, 0);
    CHECK(report_write_profile_csv(path, &p, 0, lt, err, sizeof err) == 0);
    got = slurp(path);
    snprintf(want, sizeof want, "%s%s", csv_header,
             "program,program,1,0,0,0.000,0,0.000,0,0,0,0,0\n");
    CHECK_STR(got, want);
    free(got);
    free_profile(&p);
    loctab_free(lt);
}

/* ---- A small JSON reader, for the round trips ---- */

typedef struct jpair {
    char *key;
    char *val;   /* decoded string, or the raw number / "null" text */
    int is_str;
} jpair;

typedef struct jreader {
    const char *s;
    int ok;
} jreader;

static void jws(jreader *r)
{
    while (*r->s == ' ' || *r->s == '\n' || *r->s == '\t' || *r->s == '\r')
        r->s++;
}

static void put_utf8(char **o, unsigned long cp)
{
    unsigned char *u = (unsigned char *)*o;
    if (cp < 0x80) {
        *u++ = (unsigned char)cp;
    } else if (cp < 0x800) {
        *u++ = (unsigned char)(0xC0 | (cp >> 6));
        *u++ = (unsigned char)(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
        *u++ = (unsigned char)(0xE0 | (cp >> 12));
        *u++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        *u++ = (unsigned char)(0x80 | (cp & 0x3F));
    } else {
        *u++ = (unsigned char)(0xF0 | (cp >> 18));
        *u++ = (unsigned char)(0x80 | ((cp >> 12) & 0x3F));
        *u++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3F));
        *u++ = (unsigned char)(0x80 | (cp & 0x3F));
    }
    *o = (char *)u;
}

static unsigned long hex4(jreader *r)
{
    unsigned long v = 0;
    for (int i = 0; i < 4; i++) {
        char c = *r->s++;
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned long)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned long)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned long)(c - 'A' + 10);
        else {
            r->ok = 0;
            return 0;
        }
    }
    return v;
}

/* Strict enough: raw control characters and bad escapes are errors. */
static char *jstring(jreader *r)
{
    if (*r->s != '"') {
        r->ok = 0;
        return NULL;
    }
    r->s++;
    char *buf = xcalloc(strlen(r->s) * 4 + 8, 1), *o = buf;
    while (r->ok && *r->s != '"') {
        unsigned char c = (unsigned char)*r->s;
        if (c == 0 || c < 0x20) {
            r->ok = 0;
            break;
        }
        if (c != '\\') {
            *o++ = (char)c;
            r->s++;
            continue;
        }
        r->s++;
        char e = *r->s++;
        switch (e) {
        case '"': *o++ = '"'; break;
        case '\\': *o++ = '\\'; break;
        case '/': *o++ = '/'; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            unsigned long cp = hex4(r);
            if (cp >= 0xD800 && cp <= 0xDBFF && r->s[0] == '\\' &&
                r->s[1] == 'u') {
                r->s += 2;
                unsigned long lo = hex4(r);
                cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
            }
            if (cp == 0)
                r->ok = 0; /* our strings never hold NUL */
            put_utf8(&o, cp);
            break;
        }
        default: r->ok = 0; break;
        }
    }
    if (r->ok)
        r->s++;
    *o = '\0';
    return buf;
}

/* Parses one object; returns the number of pairs, or -1. */
static int jparse(const char *text, jpair *pairs, int max)
{
    jreader r = { text, 1 };
    int n = 0;
    jws(&r);
    if (*r.s++ != '{')
        return -1;
    jws(&r);
    if (*r.s == '}') {
        r.s++;
    } else {
        for (;;) {
            if (n == max)
                return -1;
            jws(&r);
            pairs[n].key = jstring(&r);
            jws(&r);
            if (!r.ok || *r.s++ != ':')
                return -1;
            jws(&r);
            if (*r.s == '"') {
                pairs[n].val = jstring(&r);
                pairs[n].is_str = 1;
            } else {
                const char *b = r.s;
                while (*r.s && strchr("0123456789.-+eEnultrfas", *r.s))
                    r.s++;
                size_t len = (size_t)(r.s - b);
                pairs[n].val = xcalloc(len + 1, 1);
                memcpy(pairs[n].val, b, len);
                pairs[n].is_str = 0;
                if (len == 0)
                    r.ok = 0;
            }
            n++;
            if (!r.ok)
                return -1;
            jws(&r);
            if (*r.s == ',') {
                r.s++;
                continue;
            }
            if (*r.s++ != '}')
                return -1;
            break;
        }
    }
    jws(&r);
    return *r.s == '\0' ? n : -1;
}

static void jfree(jpair *pairs, int n)
{
    for (int i = 0; i < n; i++) {
        free(pairs[i].key);
        free(pairs[i].val);
    }
}

/* ---- JSON ---- */

static void test_json(void)
{
    char err[256];
    const char *path = tmp_path("run.json");
    ospg_profile p = profile1();
    report_meta *m = report_meta_new();
    CHECK(m != NULL);
    CHECK(report_meta_set(m, "metric", "ns") == 0);
    CHECK(report_meta_set(m, "threads", "4") == 0);
    CHECK(report_meta_set(m, "metric", "cycles") == 0); /* keeps its place */
    CHECK(report_meta_set(m, "nodes", "1") == -2);
    CHECK(report_meta_set(m, "program_span", "1") == -2);
    CHECK(report_meta_set(m, NULL, "1") == -1);
    CHECK(report_meta_set(m, "x", NULL) == -1);
    CHECK(report_meta_count(m) == 2);
    CHECK_STR(report_meta_get(m, "metric"), "cycles");
    CHECK(report_meta_get(m, "nodes") == NULL);
    CHECK_STR(report_meta_key(m, 1), "threads");
    CHECK_STR(report_meta_value(m, 1), "4");
    CHECK(report_meta_key(m, 2) == NULL);
    CHECK(report_meta_reserved("locations") && !report_meta_reserved("metric"));

    CHECK(report_write_run_json(path, m, &p, NULL, NULL, err, sizeof err) == 0);
    char *got = slurp(path);
    CHECK_STR(got, "{\n"
                   "  \"metric\": \"cycles\",\n"
                   "  \"threads\": 4,\n"
                   "  \"complete\": true,\n"
                   "  \"program_work\": 1000,\n"
                   "  \"program_span\": 500,\n"
                   "  \"program_parallelism\": 2.000,\n"
                   "  \"locations\": 11,\n"
                   "  \"nodes\": 42\n"
                   "}\n");
    free(got);
    free_profile(&p);
    report_meta_free(m);

    /* exact escaping */
    m = report_meta_new();
    CHECK(report_meta_set(m, "k\"\\", "a\"b\\c\n\x01\x1f\t\r\b\f/\x7f") == 0);
    CHECK(report_write_run_json(path, m, NULL, NULL, NULL, err, sizeof err) == 0);
    got = slurp(path);
    CHECK_STR(got, "{\n  \"k\\\"\\\\\": "
                   "\"a\\\"b\\\\c\\n\\u0001\\u001f\\t\\r\\b\\f/\x7f\"\n}\n");
    free(got);
    report_meta_free(m);

    /* a run cut short: complete is false, and why is said apart */
    m = report_meta_new();
    CHECK(report_meta_set(m, "complete", "no: killed") == 0);
    CHECK(report_write_run_json(path, m, NULL, NULL, NULL, err, sizeof err) == 0);
    got = slurp(path);
    CHECK_STR(got, "{\n  \"complete\": false,\n"
                   "  \"incomplete_why\": \"killed\"\n}\n");
    free(got);
    report_meta_free(m);

    /* nothing at all */
    CHECK(report_write_run_json(path, NULL, NULL, NULL, NULL, err, sizeof err) == 0);
    got = slurp(path);
    CHECK_STR(got, "{}\n");
    free(got);

    /* infinite parallelism is null; 0/0 is 0.000 */
    static const locspec l0[] = { { 0, 1, 5, { 0 }, { 0 } } };
    uint64_t zero = 0;
    p = make_profile(1, 5, &zero, l0, 1, 2);
    CHECK(report_write_run_json(path, NULL, &p, NULL, NULL, err, sizeof err) == 0);
    got = slurp(path);
    CHECK_STR(got, "{\n"
                   "  \"complete\": true,\n"
                   "  \"program_work\": 5,\n"
                   "  \"program_span\": 0,\n"
                   "  \"program_parallelism\": null,\n"
                   "  \"locations\": 1,\n"
                   "  \"nodes\": 2\n"
                   "}\n");
    free(got);
    p.work = 0;
    CHECK(report_write_run_json(path, NULL, &p, NULL, NULL, err, sizeof err) == 0);
    got = slurp(path);
    CHECK(got && strstr(got, "\"program_parallelism\": 0.000,\n") != NULL);
    free(got);
    free_profile(&p);

    /* round trip of nasty strings: what goes in comes out, except bytes
     * that are not UTF-8, which come out as U+FFFD each */
    static const struct {
        const char *key, *value, *decoded;
    } nasty[] = {
        { "quote", "say \"hi\"", NULL },
        { "backslash", "C:\\dir\\file \\\\ \\u0041", NULL },
        { "controls", "\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d"
                      "\x0e\x0f\x10\x11\x12\x13\x14\x15\x16\x17\x18\x19\x1a"
                      "\x1b\x1c\x1d\x1e\x1f\x20\x7f", NULL },
        { "utf8", "h\xc3\xa9llo \xe2\x9c\x93 \xf0\x9d\x84\x9e \xef\xbf\xbf "
                  "\xf4\x8f\xbf\xbf", NULL },
        { "", "", NULL },
        { "key with \"quotes\"\n and newline", "{\"json\": [1, 2]}", NULL },
        { "command", "./a.out --x='1, 2' \"$HOME\"\t|& tee log", NULL },
        { "bad1", "\xff", "\xef\xbf\xbd" },
        { "bad2", "a\xc0\x80z", "a\xef\xbf\xbd\xef\xbf\xbdz" },
        { "surrogate", "\xed\xa0\x80", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
        { "truncated", "x\xe2\x82", "x\xef\xbf\xbd\xef\xbf\xbd" },
        { "overlong3", "\xe0\x80\xaf", "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
        { "too_big", "\xf4\x90\x80\x80",
          "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd" },
        { "lone_cont\x80", "\x80\xbf", "\xef\xbf\xbd\xef\xbf\xbd" },
    };
    size_t nn = sizeof nasty / sizeof *nasty;
    m = report_meta_new();
    for (size_t i = 0; i < nn; i++)
        CHECK(report_meta_set(m, nasty[i].key, nasty[i].value) == 0);
    p = profile2();
    CHECK(report_write_run_json(path, m, &p, NULL, NULL, err, sizeof err) == 0);
    got = slurp(path);
    jpair pairs[64];
    int n = jparse(got ? got : "", pairs, 64);
    CHECK(n == (int)nn + 6);
    if (n == (int)nn + 6) {
        for (size_t i = 0; i < nn; i++) {
            const char *kw = !strcmp(nasty[i].key, "lone_cont\x80")
                                 ? "lone_cont\xef\xbf\xbd"
                                 : nasty[i].key;
            const char *vw = nasty[i].decoded ? nasty[i].decoded
                                              : nasty[i].value;
            CHECK_STR(pairs[i].key, kw);
            CHECK_STR(pairs[i].val, vw);
            CHECK(pairs[i].is_str);
        }
        static const char *const tail[][2] = {
            { "complete", "true" },
            { "program_work", "100" },      { "program_span", "50" },
            { "program_parallelism", "2.000" }, { "locations", "4" },
            { "nodes", "9" },
        };
        for (size_t i = 0; i < 6; i++) {
            CHECK_STR(pairs[nn + i].key, tail[i][0]);
            CHECK_STR(pairs[nn + i].val, tail[i][1]);
            CHECK(!pairs[nn + i].is_str);
        }
    }
    if (n > 0)
        jfree(pairs, n);
    /* the output itself holds no raw control character */
    int raw_ctl = 0;
    for (const char *c = got ? got : ""; *c; c++)
        if ((unsigned char)*c < 0x20 && *c != '\n')
            raw_ctl = 1;
    CHECK(!raw_ctl);
    free(got);
    free_profile(&p);
    report_meta_free(m);

    /* errors */
    char bad[128];
    snprintf(bad, sizeof bad, "%s/no/such/dir.json", tmpdir);
    CHECK(report_write_run_json(bad, NULL, NULL, NULL, NULL, err, sizeof err) == -1);
    char want[256];
    snprintf(want, sizeof want, "%s: %s", bad, strerror(ENOENT));
    CHECK_STR(err, want);
    CHECK(report_write_run_json("/dev/full", NULL, NULL, NULL, NULL, err,
                                sizeof err) == -1);
    CHECK_STR(err, "/dev/full: not a regular file");
}

/* ---- SQLite ---- */

static sqlite3 *db_open(const char *path)
{
    sqlite3 *db = NULL;
    if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) != SQLITE_OK) {
        fprintf(stderr, "cannot open %s: %s\n", path,
                db ? sqlite3_errmsg(db) : "?");
        sqlite3_close(db);
        return NULL;
    }
    return db;
}

/* The first column of the first row of sql; type SQLITE_NULL when there is
 * no row or the query fails (the failure is a failed check). */
typedef struct qval {
    int type;
    sqlite3_int64 i;
    double d;
    char text[256];
} qval;

static qval q(sqlite3 *db, const char *sql)
{
    qval v;
    memset(&v, 0, sizeof v);
    v.type = SQLITE_NULL;
    sqlite3_stmt *st = NULL;
    if (!db || sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
        fprintf(stderr, "query failed: %s: %s\n", sql,
                db ? sqlite3_errmsg(db) : "no db");
        nfail++;
        return v;
    }
    if (sqlite3_step(st) == SQLITE_ROW) {
        v.type = sqlite3_column_type(st, 0);
        v.i = sqlite3_column_int64(st, 0);
        v.d = sqlite3_column_double(st, 0);
        const unsigned char *t = sqlite3_column_text(st, 0);
        if (t)
            snprintf(v.text, sizeof v.text, "%s", (const char *)t);
    }
    sqlite3_finalize(st);
    return v;
}

static void test_db(void)
{
    char err[512];
    const char *path = tmp_path("whatif.db");
    ospg_profile p = profile1();
    loctab *lt = table1();
    report_meta *m = report_meta_new();
    CHECK(report_meta_set(m, "metric", "cycles") == 0);
    CHECK(report_meta_set(m, "command", "./a.out 'x' \"y\"") == 0);

    spit(path, "this is not a database, it gets overwritten\n");
    CHECK(report_write_db(path, &p, lt, m, NULL, NULL, NULL, err, sizeof err) == 0);
    CHECK_STR(err, "");
    sqlite3 *db = db_open(path);
    CHECK(db != NULL);
    CHECK_STR(q(db, "PRAGMA integrity_check").text, "ok");
    CHECK(q(db, "PRAGMA user_version").i == REPORT_SCHEMA_VERSION);
    CHECK(q(db, "SELECT version FROM schema_version").i == 5);
    CHECK(q(db, "SELECT count(*) FROM schema_version").i == 1);
    /* the table's 10 ids plus a placeholder for id 6 */
    CHECK(q(db, "SELECT count(*) FROM location").i == 11);
    CHECK_STR(q(db, "SELECT location || '|' || directive FROM location"
                    " WHERE id = 6").text, "loc#6|unknown");
    CHECK_STR(q(db, "SELECT location || '|' || directive FROM location"
                    " WHERE id = 0").text, "program|program");
    CHECK_STR(q(db, "SELECT location FROM location WHERE id = 8").text,
              "n\nl.c:3");
    CHECK_STR(q(db, "SELECT location FROM location WHERE id = 4").text,
              "q\"uote.c:1");
    CHECK(q(db, "SELECT count(*) FROM scenario").i == 1);
    CHECK_STR(q(db, "SELECT name FROM scenario WHERE id = 0").text,
              "measured");
    CHECK(q(db, "SELECT factor FROM scenario WHERE id = 0").d == 1.0);
    CHECK(q(db, "SELECT count(*) FROM profile").i == 11);
    CHECK(q(db, "SELECT count(*) FROM profile WHERE location_id <> 0 AND"
                " (instances > 0 OR critical_work > 0)").i == 9);
    CHECK(q(db, "SELECT work FROM profile WHERE location_id = 0").i == 1000);
    CHECK(q(db, "SELECT span FROM profile WHERE location_id = 0").i == 500);
    CHECK(q(db, "SELECT critical_work FROM profile WHERE location_id = 0").i ==
          100);
    CHECK(q(db, "SELECT critical_percent FROM profile WHERE"
                " location_id = 1").d == 30.0);
    CHECK(q(db, "SELECT parallelism FROM profile WHERE location_id = 2").d ==
          5.0);
    qval inf = q(db, "SELECT parallelism FROM profile WHERE location_id = 4");
    CHECK(inf.type == SQLITE_FLOAT && isinf(inf.d) && inf.d > 0);
    CHECK(q(db, "SELECT parallelism FROM profile WHERE location_id = 6").d ==
          0.0);
    CHECK(q(db, "SELECT typeof(work) FROM profile WHERE location_id = 1")
              .type == SQLITE_TEXT);
    CHECK_STR(q(db, "SELECT typeof(work) FROM profile WHERE location_id = 1")
                  .text, "integer");
    CHECK_STR(q(db, "SELECT group_concat(location_id) FROM (SELECT"
                    " location_id FROM profile_named WHERE scenario_name ="
                    " 'measured' AND location_id <> 0 AND (instances > 0 OR"
                    " critical_work > 0) ORDER BY critical_percent DESC,"
                    " work DESC, location, directive, location_id)").text,
              "1,2,3,4,7,10,9,8,6");
    CHECK_STR(q(db, "SELECT location || '|' || directive || '|' || instances"
                    " FROM profile_named WHERE location_id = 3").text,
              "b,c.c:7|task|3");
    CHECK(q(db, "SELECT sum(critical_percent) FROM profile WHERE"
                " scenario = 0").d > 99.999);
    CHECK(q(db, "SELECT count(*) FROM run").i == 2 + 5);
    CHECK_STR(q(db, "SELECT value FROM run WHERE key = 'metric'").text,
              "cycles");
    CHECK_STR(q(db, "SELECT value FROM run WHERE key = 'command'").text,
              "./a.out 'x' \"y\"");
    CHECK_STR(q(db, "SELECT value FROM run WHERE key = 'program_work'").text,
              "1000");
    CHECK_STR(q(db, "SELECT value FROM run WHERE key = 'program_span'").text,
              "500");
    CHECK_STR(q(db, "SELECT value FROM run WHERE"
                    " key = 'program_parallelism'").text, "2.000");
    CHECK_STR(q(db, "SELECT value FROM run WHERE key = 'locations'").text,
              "11");
    CHECK_STR(q(db, "SELECT value FROM run WHERE key = 'nodes'").text, "42");
    CHECK_STR(q(db, "SELECT key FROM run ORDER BY rowid LIMIT 1").text,
              "metric");
    sqlite3_close(db);
    free_profile(&p);
    loctab_free(lt);
    report_meta_free(m);

    /* overwrite with two named scenarios and fewer rows */
    p = profile2();
    lt = table2();
    const char *names[2] = { "baseline",
                             "loop x2" };
    double factors[2] = { 0.0, 2.0 };
    CHECK(report_write_db(path, &p, lt, NULL, NULL, names, factors, err,
                          sizeof err) == 0);
    db = db_open(path);
    CHECK_STR(q(db, "PRAGMA integrity_check").text, "ok");
    CHECK(q(db, "SELECT count(*) FROM scenario").i == 2);
    CHECK_STR(q(db, "SELECT name FROM scenario WHERE id = 0").text, names[0]);
    CHECK(q(db, "SELECT factor FROM scenario WHERE id = 0").d == 1.0);
    CHECK_STR(q(db, "SELECT name FROM scenario WHERE id = 1").text,
              "loop x2");
    CHECK(q(db, "SELECT factor FROM scenario WHERE id = 1").d == 2.0);
    CHECK(q(db, "SELECT count(*) FROM location").i == 4);
    CHECK(q(db, "SELECT count(*) FROM profile").i == 8);
    CHECK(q(db, "SELECT count(*) FROM run").i == 5);
    CHECK(q(db, "SELECT span FROM profile WHERE scenario = 1 AND"
                " location_id = 0").i == 0);
    inf = q(db, "SELECT parallelism FROM profile WHERE scenario = 1 AND"
                " location_id = 1");
    CHECK(inf.type == SQLITE_FLOAT && isinf(inf.d));
    CHECK(q(db, "SELECT critical_percent FROM profile WHERE scenario = 1 AND"
                " location_id = 2").d == 0.0);
    CHECK(q(db, "SELECT critical_work FROM profile WHERE scenario = 1 AND"
                " location_id = 2").i == 5);
    CHECK(q(db, "SELECT critical_percent FROM profile WHERE scenario = 0 AND"
                " location_id = 2").d == 80.0);
    CHECK(q(db, "SELECT count(*) FROM profile_named WHERE"
                " scenario_name = 'loop x2'").i == 4);
    CHECK_STR(q(db, "SELECT location FROM profile_named WHERE scenario = 1"
                    " AND location_id <> 0 ORDER BY critical_percent DESC,"
                    " work DESC LIMIT 1").text, "x.c:1");
    sqlite3_close(db);

    /* default names; infinite factor; no factors at all */
    double inff[2] = { 1.0, INFINITY };
    CHECK(report_write_db(path, &p, lt, NULL, NULL, NULL, inff, err,
                          sizeof err) == 0);
    db = db_open(path);
    CHECK_STR(q(db, "SELECT name FROM scenario WHERE id = 1").text,
              "scenario1");
    qval fi = q(db, "SELECT factor FROM scenario WHERE id = 1");
    CHECK(fi.type == SQLITE_FLOAT && isinf(fi.d));
    sqlite3_close(db);
    const char *some[2] = { NULL, "half" };
    CHECK(report_write_db(path, &p, lt, NULL, NULL, some, NULL, err,
                          sizeof err) == 0);
    db = db_open(path);
    CHECK_STR(q(db, "SELECT name FROM scenario WHERE id = 0").text,
              "measured");
    CHECK_STR(q(db, "SELECT name FROM scenario WHERE id = 1").text, "half");
    CHECK(q(db, "SELECT factor FROM scenario WHERE id = 1").type ==
          SQLITE_NULL);
    sqlite3_close(db);
    free_profile(&p);
    loctab_free(lt);

    /* no table; values above INT64_MAX are clamped */
    static const locspec big[] = {
        { 0, 1, UINT64_MAX, { 10 }, { 0 } },
        { 3, UINT64_MAX, UINT64_MAX, { (uint64_t)INT64_MAX + 1 }, { 10 } },
    };
    uint64_t span10 = 10;
    p = make_profile(1, UINT64_MAX, &span10, big, 2, 5);
    CHECK(report_write_db(path, &p, NULL, NULL, NULL, NULL, NULL, err,
                          sizeof err) == 0);
    db = db_open(path);
    CHECK(q(db, "SELECT count(*) FROM location").i == 2);
    CHECK_STR(q(db, "SELECT location || '|' || directive FROM location"
                    " WHERE id = 3").text, "loc#3|unknown");
    CHECK(q(db, "SELECT work FROM profile WHERE location_id = 0").i ==
          INT64_MAX);
    CHECK(q(db, "SELECT instances FROM profile WHERE location_id = 3").i ==
          INT64_MAX);
    CHECK(q(db, "SELECT span FROM profile WHERE location_id = 3").i ==
          INT64_MAX);
    CHECK(q(db, "SELECT critical_percent FROM profile WHERE"
                " location_id = 3").d == 100.0);
    CHECK_STR(q(db, "SELECT value FROM run WHERE key = 'program_work'").text,
              "18446744073709551615");
    sqlite3_close(db);

    /* An in-place update of the old file cut short (a process that died
     * inside its transaction, after SQLite spilled pages to the file)
     * leaves a hot journal next to it; the new database must not be
     * rolled back with the old file's pages by its first reader. */
    pid_t pid = fork();
    if (pid == 0) {
        sqlite3 *w = NULL;
        int ok = sqlite3_open(path, &w) == SQLITE_OK &&
                 sqlite3_exec(w,
                              "PRAGMA cache_size = 10; BEGIN;"
                              " CREATE TABLE filler(b);"
                              " WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL"
                              " SELECT i + 1 FROM n WHERE i < 4000)"
                              " INSERT INTO filler SELECT randomblob(200)"
                              " FROM n; DELETE FROM location;",
                              NULL, NULL, NULL) == SQLITE_OK;
        _exit(ok ? 0 : 1); /* no COMMIT: the journal stays hot */
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
          WEXITSTATUS(status) == 0);
    char journal[160];
    snprintf(journal, sizeof journal, "%s-journal", path);
    CHECK(access(journal, F_OK) == 0);
    CHECK(report_write_db(path, &p, NULL, NULL, NULL, NULL, NULL, err,
                          sizeof err) == 0);
    CHECK(access(journal, F_OK) != 0);
    db = db_open(path);
    CHECK_STR(q(db, "PRAGMA integrity_check").text, "ok");
    CHECK(q(db, "SELECT count(*) FROM location").i == 2);
    CHECK(q(db, "SELECT count(*) FROM sqlite_master WHERE name = 'filler'")
              .i == 0);
    sqlite3_close(db);

    /* errors */
    CHECK(report_write_db("/dev/null", &p, NULL, NULL, NULL, NULL, NULL, err,
                          sizeof err) == -1);
    CHECK_STR(err, "/dev/null: not a regular file");
    char bad[128];
    snprintf(bad, sizeof bad, "%s/no/such/dir.db", tmpdir);
    CHECK(report_write_db(bad, &p, NULL, NULL, NULL, NULL, NULL, err,
                          sizeof err) == -1);
    char want[256];
    snprintf(want, sizeof want, "%s: %s", bad, strerror(ENOENT));
    CHECK_STR(err, want);
    CHECK(report_write_db(path, NULL, NULL, NULL, NULL, NULL, NULL, err,
                          sizeof err) == -1);
    CHECK(strstr(err, "invalid argument") != NULL);
    /* a database is refused where a directory stands */
    CHECK(report_write_db(tmpdir, &p, NULL, NULL, NULL, NULL, NULL, err,
                          sizeof err) == -1);
    snprintf(want, sizeof want, "%s: not a regular file", tmpdir);
    CHECK_STR(err, want);
    free_profile(&p);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_report.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    test_loctab();
    test_format();
    test_csv();
    test_json();
    test_db();
    cleanup_tmp();
    printf("%d passed, %d failed\n", npass, nfail);
    return nfail ? 1 : 0;
}
