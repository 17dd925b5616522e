/* report.c - writers of the results: profile CSV, run JSON, SQLite
 * database (see report.h; the formats are specified in docs/output.md).
 *
 * Numbers printed with decimals are computed with exact integer arithmetic
 * (128-bit), so the text never depends on floating-point rounding or on
 * the C locale.  The JSON emitter is hand-written: strings are escaped per
 * RFC 8259 and bytes that are not valid UTF-8 become U+FFFD.
 */
#define _POSIX_C_SOURCE 200809L

#include "report.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "trace.h"

#if defined(__GNUC__)
#define REPORT_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define REPORT_PRINTF(a, b)
#endif

/* ---- Messages ---- */

static void set_msg(char *err, size_t errlen, const char *fmt, ...)
    REPORT_PRINTF(3, 4);

static void set_msg(char *err, size_t errlen, const char *fmt, ...)
{
    if (!err || errlen == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
}

static void clear_msg(char *err, size_t errlen)
{
    if (err && errlen)
        err[0] = '\0';
}

/* ---- Run metadata ---- */

typedef struct meta_kv {
    char *key;
    char *value;
} meta_kv;

struct report_meta {
    meta_kv *kv;
    size_t n, cap;
};

static const char *const reserved_keys[] = {
    "program_work", "program_span", "program_parallelism", "locations",
    "nodes",
};

static char *dup_str(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

report_meta *report_meta_new(void)
{
    return calloc(1, sizeof(report_meta));
}

void report_meta_free(report_meta *m)
{
    if (!m)
        return;
    for (size_t i = 0; i < m->n; i++) {
        free(m->kv[i].key);
        free(m->kv[i].value);
    }
    free(m->kv);
    free(m);
}

int report_meta_reserved(const char *key)
{
    if (!key)
        return 0;
    for (size_t i = 0; i < sizeof reserved_keys / sizeof *reserved_keys; i++)
        if (!strcmp(key, reserved_keys[i]))
            return 1;
    return 0;
}

int report_meta_set(report_meta *m, const char *key, const char *value)
{
    if (!m || !key || !value)
        return -1;
    if (report_meta_reserved(key))
        return -2;
    char *v = dup_str(value);
    if (!v)
        return -1;
    for (size_t i = 0; i < m->n; i++) {
        if (!strcmp(m->kv[i].key, key)) {
            free(m->kv[i].value);
            m->kv[i].value = v;
            return 0;
        }
    }
    if (m->n == m->cap) {
        size_t cap = m->cap ? m->cap * 2 : 16;
        meta_kv *kv = realloc(m->kv, cap * sizeof *kv);
        if (!kv) {
            free(v);
            return -1;
        }
        m->kv = kv;
        m->cap = cap;
    }
    char *k = dup_str(key);
    if (!k) {
        free(v);
        return -1;
    }
    m->kv[m->n].key = k;
    m->kv[m->n].value = v;
    m->n++;
    return 0;
}

const char *report_meta_get(const report_meta *m, const char *key)
{
    if (!m || !key)
        return NULL;
    for (size_t i = 0; i < m->n; i++)
        if (!strcmp(m->kv[i].key, key))
            return m->kv[i].value;
    return NULL;
}

size_t report_meta_count(const report_meta *m)
{
    return m ? m->n : 0;
}

const char *report_meta_key(const report_meta *m, size_t i)
{
    return m && i < m->n ? m->kv[i].key : NULL;
}

const char *report_meta_value(const report_meta *m, size_t i)
{
    return m && i < m->n ? m->kv[i].value : NULL;
}

/* ---- Numbers ---- */

#ifndef __SIZEOF_INT128__
#error "report.c needs unsigned __int128 (GCC or Clang on a 64-bit target)"
#endif
__extension__ typedef unsigned __int128 u128;

/* num * mul / den with 3 decimals, rounded half up; den > 0. */
/* ---- Notes ---- */

typedef struct note_item {
    uint32_t loc, note;
    uint64_t value;
} note_item;

struct report_notes {
    note_item *v;
    size_t n, cap;
};

report_notes *report_notes_new(void)
{
    return calloc(1, sizeof(report_notes));
}

void report_notes_free(report_notes *ns)
{
    if (!ns)
        return;
    free(ns->v);
    free(ns);
}

int report_notes_add(report_notes *ns, uint32_t loc, uint32_t note,
                     uint64_t value)
{
    if (!ns || note == 0 || note > REPORT_NOTE_MAX)
        return -1;
    for (size_t i = 0; i < ns->n; i++)
        if (ns->v[i].loc == loc && ns->v[i].note == note) {
            if (value > ns->v[i].value)
                ns->v[i].value = value;
            return 0;
        }
    if (ns->n == ns->cap) {
        size_t cap = ns->cap ? 2 * ns->cap : 8;
        note_item *v = realloc(ns->v, cap * sizeof(*v));
        if (!v)
            return -1;
        ns->v = v;
        ns->cap = cap;
    }
    ns->v[ns->n++] = (note_item){loc, note, value};
    return 0;
}

size_t report_notes_count(const report_notes *ns)
{
    return ns ? ns->n : 0;
}

int report_notes_get(const report_notes *ns, size_t i, uint32_t *loc,
                     uint32_t *note, uint64_t *value)
{
    if (!ns || i >= ns->n)
        return -1;
    *loc = ns->v[i].loc;
    *note = ns->v[i].note;
    *value = ns->v[i].value;
    return 0;
}

const char *report_note_name(uint32_t note)
{
    switch (note) {
    case TRACE_NOTE_ONE_THREAD_LOOP: return "one_thread_loop";
    case TRACE_NOTE_ORDERED_PREFIX: return "ordered_prefix";
    case TRACE_NOTE_ORDERED_STATIC: return "ordered_static";
    case TRACE_NOTE_THREADS: return "program_threads";
    case TRACE_NOTE_ORDERED_UNCHAINED: return "ordered_unchained";
    case TRACE_NOTE_TASKWAIT_OUTER: return "taskwait_outer";
    case TRACE_NOTE_DETACH_DEPS: return "detach_deps";
    case REPORT_NOTE_FINE_GRAINS: return "fine_grains";
    case REPORT_NOTE_SPAN_OUTLIER: return "span_outlier";
    }
    return "unknown";
}

void report_note_text(char *buf, size_t len, uint32_t note, uint64_t value,
                      const char *unit)
{
    if (!unit)
        unit = "units";
    switch (note) {
    case TRACE_NOTE_ONE_THREAD_LOOP:
        (void)value;
        snprintf(buf, len, "ran in a team of one thread (a serialized "
                 "nested region, or outside any parallel region), where "
                 "libomp hands a loop out as a single chunk: its parallelism "
                 "here is a lower bound; give nested regions threads with "
                 "OMP_MAX_ACTIVE_LEVELS=2 (or more) to see it");
        break;
    case TRACE_NOTE_ORDERED_PREFIX:
        snprintf(buf, len, "ordered chain: chunks are modeled as free to start "
                 "with the barrier phase, but a thread ran up to %" PRIu64
                 " %s of code before the loop in that phase: the loop's span "
                 "may be short by up to that much", value, unit);
        break;
    case TRACE_NOTE_ORDERED_STATIC:
        snprintf(buf, len, "ordered chain under a static schedule: libomp "
                 "reports one chunk per thread, so each thread's iterations "
                 "are modeled as one serial chain (%" PRIu64 " instance(s)): "
                 "the span is an upper bound; schedule(dynamic) shows "
                 "every chunk", value);
        break;
    case TRACE_NOTE_THREADS:
        snprintf(buf, len, "%" PRIu64 " thread(s) the program created itself "
                 "ran OpenMP code: each is modeled as parallel with the rest "
                 "of the program from the moment it started; a join "
                 "(pthread_join) is not seen, so code after it may be "
                 "counted as parallel to the thread", value);
        break;
    case TRACE_NOTE_ORDERED_UNCHAINED:
        snprintf(buf, len, "an ordered block, sink or source ran in a chunk "
                 "whose first directive was another one, before the loop "
                 "was known to be ordered: it is left out of the chain, so "
                 "the loop's span may be short");
        break;
    case TRACE_NOTE_TASKWAIT_OUTER:
        snprintf(buf, len, "a taskwait inside a loop chunk or a taskgroup "
                 "also waits for tasks created before it outside them "
                 "(before the loop or taskgroup, or in earlier chunks); the "
                 "graph joins those later, so the code after it is modeled "
                 "as parallel with them: the span may be short");
        break;
    case TRACE_NOTE_DETACH_DEPS:
        snprintf(buf, len, "a task with depend items ended its code before "
                 "its detach event was fulfilled: its dependent tasks also "
                 "wait for the code that fulfills the event, but the graph "
                 "has them follow the task's own code only: the span may "
                 "be short");
        break;
    case REPORT_NOTE_FINE_GRAINS:
        snprintf(buf, len, "its tasks hold %" PRIu64 " %s of their own work "
                 "on average, less than the runtime spends creating one "
                 "(task_create_cost in run.json): fewer, larger tasks (a "
                 "cutoff, final, a coarser grainsize) would run faster",
                 value, unit);
        break;
    case REPORT_NOTE_SPAN_OUTLIER:
        snprintf(buf, len, "one of its grains holds %" PRIu64 " %s, over 4 "
                 "times their mean and a fifth or more of its span: if its "
                 "grains do the same work, that one was slowed by the "
                 "machine (run again, or --repeat); else they are "
                 "imbalanced", value, unit);
        break;
    default:
        snprintf(buf, len, "note %u", (unsigned)note);
    }
}

void report_notes_fine_grains(report_notes *ns, const ospg_profile *p,
                              const loctab *lt, const report_meta *meta)
{
    const char *cost = report_meta_get(meta, "task_create_cost");
    const char *unit = report_meta_get(meta, "metric_unit");
    /* the creation cost is time: comparable with work in ns only */
    if (!cost || !unit || strcmp(unit, "ns"))
        return;
    uint64_t c = strtoull(cost, NULL, 10);
    for (size_t i = 0; i < p->nlocs; i++) {
        const ospg_loc_stat *st = &p->locs[i];
        const loctab_entry *e = loctab_get(lt, st->loc);
        if (st->grains < 100 || !e ||
            (strcmp(e->directive, "task") && strcmp(e->directive, "taskloop")))
            continue;
        uint64_t mean = (st->grain_work + st->grains / 2) / st->grains;
        if (mean < c)
            report_notes_add(ns, st->loc, REPORT_NOTE_FINE_GRAINS, mean);
    }
}

void report_notes_outliers(report_notes *ns, const ospg_profile *p,
                           const loctab *lt)
{
    for (size_t i = 0; i < p->nlocs; i++) {
        const ospg_loc_stat *st = &p->locs[i];
        const loctab_entry *e = loctab_get(lt, st->loc);
        /* a loop's chunks share its code: one far above the rest was
         * slowed; tasks differ by nature */
        if (st->grains < 8 || st->tag || !e ||
            (strcmp(e->directive, "loop") && strcmp(e->directive, "taskloop")))
            continue;
        uint64_t mean = st->grain_work / st->grains;
        /* ... and it weighs in the program: 1% of its span or more */
        if (st->grain_max > 4 * mean && st->grain_max >= st->span[0] / 5 &&
            st->grain_max > 0 && st->grain_max >= p->span[0] / 100)
            report_notes_add(ns, st->loc, REPORT_NOTE_SPAN_OUTLIER,
                             st->grain_max);
    }
}

void report_notes_print(FILE *f, const report_notes *ns, const loctab *lt,
                        const char *unit)
{
    for (size_t i = 0; ns && i < ns->n; i++) {
        char text[512];
        const loctab_entry *e = loctab_get(lt, ns->v[i].loc);
        report_note_text(text, sizeof(text), ns->v[i].note, ns->v[i].value,
                         unit);
        fprintf(f, "whatif: note: %s (%s): %s\n", e ? e->where : "?",
                e ? e->directive : "unknown", text);
    }
}

static void fixed3(char buf[REPORT_NUMBUF], uint64_t num, uint64_t den,
                   unsigned mul)
{
    u128 units = (u128)num * mul * 1000u;
    u128 q = units / den, r = units % den;
    if (r >= (u128)den - r) /* 2r >= den without overflow */
        q++;
    unsigned frac = (unsigned)(q % 1000u);
    u128 ip = q / 1000u;
    char digits[48];
    size_t nd = 0;
    do {
        digits[nd++] = (char)('0' + (int)(ip % 10u));
        ip /= 10u;
    } while (ip);
    size_t o = 0;
    while (nd)
        buf[o++] = digits[--nd];
    snprintf(buf + o, REPORT_NUMBUF - o, ".%03u", frac);
}

void report_format_parallelism(char buf[REPORT_NUMBUF], uint64_t work,
                               uint64_t span)
{
    if (span == 0)
        snprintf(buf, REPORT_NUMBUF, "%s", work ? "inf" : "0.000");
    else
        fixed3(buf, work, span, 1);
}

void report_format_percent(char buf[REPORT_NUMBUF], uint64_t part,
                           uint64_t whole)
{
    if (whole == 0)
        snprintf(buf, REPORT_NUMBUF, "0.000");
    else
        fixed3(buf, part, whole, 100);
}

static double ratio_double(uint64_t num, uint64_t den)
{
    if (den == 0)
        return num ? INFINITY : 0.0;
    return (double)num / (double)den;
}

static double percent_double(uint64_t part, uint64_t whole)
{
    return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* ---- Location names ---- */

typedef struct loc_name {
    const char *where;
    const char *directive;
    char buf[24]; /* "loc#4294967295" */
} loc_name;

/* Fills n for loc; n->where may point into n->buf, so n must not move. */
static void resolve_name(const loctab *lt, uint32_t loc, loc_name *n)
{
    if (loc == OSPG_LOC_PROGRAM) {
        n->where = "program";
        n->directive = "program";
        return;
    }
    const loctab_entry *e = lt ? loctab_get(lt, loc) : NULL;
    if (e) {
        n->where = e->where;
        n->directive = e->directive;
        return;
    }
    snprintf(n->buf, sizeof n->buf, "loc#%" PRIu32, loc);
    n->where = n->buf;
    n->directive = "unknown";
}

static const ospg_loc_stat *program_stat(const ospg_profile *p)
{
    for (size_t i = 0; i < p->nlocs; i++)
        if (p->locs[i].loc == OSPG_LOC_PROGRAM)
            return &p->locs[i];
    return NULL;
}

/* ---- Output with the first error kept ---- */

typedef struct out {
    FILE *f;
    int err; /* errno of the first failure, 0 if none */
} out;

static void out_fail(out *o)
{
    if (!o->err)
        o->err = errno ? errno : EIO;
}

static void outs(out *o, const char *s)
{
    if (!o->err && fputs(s, o->f) == EOF)
        out_fail(o);
}

static void outc(out *o, int c)
{
    if (!o->err && putc(c, o->f) == EOF)
        out_fail(o);
}

static void outf(out *o, const char *fmt, ...) REPORT_PRINTF(2, 3);

static void outf(out *o, const char *fmt, ...)
{
    if (o->err)
        return;
    va_list ap;
    va_start(ap, fmt);
    int r = vfprintf(o->f, fmt, ap);
    va_end(ap);
    if (r < 0)
        out_fail(o);
}

/* Flushes and returns 0, or -1 with the message set. */
static int out_finish(out *o, const char *name, char *err, size_t errlen)
{
    errno = 0;
    if (!o->err && (fflush(o->f) == EOF || ferror(o->f)))
        out_fail(o);
    if (o->err) {
        set_msg(err, errlen, "%s: %s", name ? name : "output",
                strerror(o->err));
        return -1;
    }
    return 0;
}

/* ---- CSV ---- */

void report_csv_text(FILE *f, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        fputs(s, f);
        return;
    }
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void csv_field(out *o, const char *s)
{
    if (!strpbrk(s, ",\"\r\n")) {
        outs(o, s);
        return;
    }
    outc(o, '"');
    for (; *s; s++) {
        if (*s == '"')
            outc(o, '"');
        outc(o, (unsigned char)*s);
    }
    outc(o, '"');
}

/* The median grain's work, kept between the least and the most: a
 * bucket's value may lie a little outside the values in it. */
static uint64_t grain_median(const ospg_loc_stat *g)
{
    uint64_t m = ospg_grain_median(g->grain_hist);
    return m < g->grain_min ? g->grain_min : m > g->grain_max ? g->grain_max : m;
}

/* g: the row's grain statistics (NULL: none, the program's row) */
static void csv_row(out *o, const char *where, const char *directive,
                    uint64_t instances, uint64_t work, uint64_t span,
                    uint64_t critical, uint64_t program_span,
                    const ospg_loc_stat *g)
{
    uint64_t grains = g ? g->grains : 0, grain_work = g ? g->grain_work : 0;
    char par[REPORT_NUMBUF], pct[REPORT_NUMBUF];
    report_format_parallelism(par, work, span);
    report_format_percent(pct, critical, program_span);
    csv_field(o, where);
    outc(o, ',');
    csv_field(o, directive);
    outf(o, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s,%" PRIu64 ",%s,%" PRIu64
            ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n",
         instances, work, span, par, critical, pct, grains,
         grains ? (grain_work + grains / 2) / grains : 0,
         grains ? g->grain_min : 0, grains ? g->grain_max : 0,
         grains ? grain_median(g) : 0);
}

typedef struct csv_item {
    const ospg_loc_stat *st;
    uint64_t crit_key; /* critical, or 0 when the program span is 0 */
    loc_name name;
} csv_item;

static int cmp_u64_desc(uint64_t a, uint64_t b)
{
    return a > b ? -1 : a < b ? 1 : 0;
}

static int csv_cmp(const void *pa, const void *pb)
{
    const csv_item *a = *(const csv_item *const *)pa;
    const csv_item *b = *(const csv_item *const *)pb;
    int c = cmp_u64_desc(a->crit_key, b->crit_key);
    if (!c)
        c = cmp_u64_desc(a->st->work, b->st->work);
    if (!c)
        c = strcmp(a->name.where, b->name.where);
    if (!c)
        c = strcmp(a->name.directive, b->name.directive);
    if (!c)
        c = a->st->loc < b->st->loc ? -1 : a->st->loc > b->st->loc;
    return c;
}

int report_is_line(const char *directive)
{
    return directive && !strncmp(directive, "line", 4) &&
           (directive[4] == 0 || directive[4] == ':');
}

int report_is_serial(const char *directive)
{
    return directive && !strcmp(directive, "serial");
}

/* Which file a location's row goes to. */
enum { ROWS_DIRECTIVES, ROWS_LINES, ROWS_SERIAL };

static int row_kind(const char *directive)
{
    return report_is_line(directive)     ? ROWS_LINES
           : report_is_serial(directive) ? ROWS_SERIAL
                                         : ROWS_DIRECTIVES;
}

/* Which file a location's row goes to, for its statistics st.  A tag (a
 * sampled line, a serial fragment) whose LOC record was lost with its
 * stream (a program that ended inside a region: only the exiting
 * thread's stream is written) is a line still, never a directive row. */
static int stat_row_kind(const ospg_loc_stat *st, const loc_name *nm)
{
    if ((st->tag || st->line) && !strcmp(nm->directive, "unknown"))
        return ROWS_LINES;
    return row_kind(nm->directive);
}

/* The rows after the program row, in the contract's order, of one kind:
 * the directives' and regions', the sampled source lines' or the serial
 * fragments'.  *items and *order are the caller's to free.  Returns 0, or
 * -1 when out of memory. */
static int sorted_rows(const ospg_profile *p, size_t scen, const loctab *lt,
                       int kind, csv_item **items_out,
                       csv_item ***order_out, size_t *n_out)
{
    uint64_t pspan = p->span[scen];
    csv_item *items = NULL;
    csv_item **order = NULL;
    size_t n = 0;
    if (p->nlocs) {
        items = malloc(p->nlocs * sizeof *items);
        order = malloc(p->nlocs * sizeof *order);
        if (!items || !order) {
            free(items);
            free(order);
            return -1;
        }
    }
    for (size_t i = 0; i < p->nlocs; i++) {
        const ospg_loc_stat *st = &p->locs[i];
        if (st->loc == OSPG_LOC_PROGRAM)
            continue;
        if (st->instances == 0 && st->critical[scen] == 0 && !st->grains)
            continue;
        csv_item *it = &items[n];
        it->st = st;
        it->crit_key = pspan ? st->critical[scen] : 0;
        resolve_name(lt, st->loc, &it->name);
        if (stat_row_kind(st, &it->name) != kind)
            continue;
        order[n++] = it;
    }
    if (n > 1)
        qsort(order, n, sizeof *order, csv_cmp);
    *items_out = items;
    *order_out = order;
    *n_out = n;
    return 0;
}

/* Checks the arguments common to both CSV entry points. */
static int csv_check(const char *name, const ospg_profile *p, size_t scen,
                     char *err, size_t errlen)
{
    if (!p) {
        set_msg(err, errlen, "%s: invalid argument", name);
        return -1;
    }
    if (scen >= p->nscen) {
        set_msg(err, errlen, "%s: scenario %zu out of range (profile has %zu)",
                name, scen, p->nscen);
        return -1;
    }
    return 0;
}

int report_fprint_profile_csv(FILE *f, const char *name,
                              const ospg_profile *p, size_t scen,
                              const loctab *lt, char *err, size_t errlen)
{
    clear_msg(err, errlen);
    if (!name)
        name = "output";
    if (!f || csv_check(name, p, scen, err, errlen) != 0) {
        if (!f)
            set_msg(err, errlen, "%s: invalid argument", name);
        return -1;
    }
    uint64_t pspan = p->span[scen];
    csv_item *items;
    csv_item **order;
    size_t n;
    if (sorted_rows(p, scen, lt, ROWS_DIRECTIVES, &items, &order, &n)) {
        set_msg(err, errlen, "%s: out of memory", name);
        return -1;
    }

    out o = { f, 0 };
    outs(&o, "location,directive,instances,work,span,parallelism,"
             "critical_work,critical_percent,grains,mean_grain_work,"
             "min_grain_work,max_grain_work,median_grain_work\n");
    const ospg_loc_stat *ps = program_stat(p);
    csv_row(&o, "program", "program", ps ? ps->instances : 1, p->work, pspan,
            ps ? ps->critical[scen] : 0, pspan, NULL);
    for (size_t i = 0; i < n; i++) {
        const ospg_loc_stat *st = order[i]->st;
        csv_row(&o, order[i]->name.where, order[i]->name.directive,
                st->instances, st->work, st->span[scen], st->critical[scen],
                pspan, st);
    }
    free(items);
    free(order);
    return out_finish(&o, name, err, errlen);
}

/* ---- Writing a file whole ---- */

/* Refuses a path that holds something other than a regular file or a
 * symbolic link (a directory, a device): renaming over it would replace
 * it. */
static int check_target(const char *path, char *err, size_t errlen)
{
    struct stat sb;
    if (lstat(path, &sb) == 0) {
        if (!S_ISREG(sb.st_mode) && !S_ISLNK(sb.st_mode)) {
            set_msg(err, errlen, "%s: not a regular file", path);
            return -1;
        }
    } else if (errno != ENOENT) {
        set_msg(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    return 0;
}

FILE *report_open_tmp(const char *path, char *tmp, size_t tmplen, char *err,
                      size_t errlen)
{
    if (check_target(path, err, errlen))
        return NULL;
    if (snprintf(tmp, tmplen, "%s.tmp.XXXXXX", path) >= (int)tmplen) {
        set_msg(err, errlen, "%s: path too long", path);
        return NULL;
    }
    int fd = mkstemp(tmp);
    if (fd < 0) {
        set_msg(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    fchmod(fd, 0644);
    FILE *f = fdopen(fd, "w");
    if (!f) {
        set_msg(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        unlink(tmp);
    }
    return f;
}

int report_close_tmp(FILE *f, const char *tmp, const char *path, int ok,
                     char *err, size_t errlen)
{
    int written_errno = errno; /* a failed write's, when ok is 0 for it */
    int closed = fclose(f) == 0;
    if (ok && !closed)
        set_msg(err, errlen, "%s: %s", path, strerror(errno));
    if (ok && closed && rename(tmp, path) == 0)
        return 0;
    if (ok && closed)
        set_msg(err, errlen, "%s: %s", path, strerror(errno));
    /* a write that failed (a full disk) said nothing yet */
    if (!ok && err && errlen && !err[0])
        set_msg(err, errlen, "%s: cannot write it: %s", path,
                strerror(closed && written_errno ? written_errno
                         : !closed ? errno : EIO));
    unlink(tmp);
    return -1;
}

int report_write_profile_csv(const char *path, const ospg_profile *p,
                             size_t scen, const loctab *lt, char *err,
                             size_t errlen)
{
    clear_msg(err, errlen);
    if (!path) {
        set_msg(err, errlen, "(null): invalid argument");
        return -1;
    }
    if (csv_check(path, p, scen, err, errlen) != 0)
        return -1; /* before touching the file */
    char tmp[PATH_MAX + 32];
    FILE *f = report_open_tmp(path, tmp, sizeof(tmp), err, errlen);
    if (!f)
        return -1;
    int r = report_fprint_profile_csv(f, path, p, scen, lt, err, errlen);
    return report_close_tmp(f, tmp, path, r == 0, err, errlen);
}

/* ---- JSON ---- */

/* Length of the valid UTF-8 sequence at s (1-4), or 0 when invalid
 * (Unicode 15, table 3-7: no overlongs, surrogates or > U+10FFFF). */
static size_t utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    size_t n;
    unsigned lo = 0x80, hi = 0xBF;
    if (c >= 0xC2 && c <= 0xDF) {
        n = 2;
    } else if (c >= 0xE0 && c <= 0xEF) {
        n = 3;
        if (c == 0xE0)
            lo = 0xA0;
        else if (c == 0xED)
            hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
        n = 4;
        if (c == 0xF0)
            lo = 0x90;
        else if (c == 0xF4)
            hi = 0x8F;
    } else {
        return 0;
    }
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

static void json_string(out *o, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    outc(o, '"');
    while (*s) {
        unsigned c = *s;
        if (c == '"' || c == '\\') {
            outc(o, '\\');
            outc(o, (int)c);
            s++;
        } else if (c < 0x20) {
            switch (c) {
            case '\b': outs(o, "\\b"); break;
            case '\f': outs(o, "\\f"); break;
            case '\n': outs(o, "\\n"); break;
            case '\r': outs(o, "\\r"); break;
            case '\t': outs(o, "\\t"); break;
            default: outf(o, "\\u%04x", c); break;
            }
            s++;
        } else if (c < 0x80) {
            outc(o, (int)c);
            s++;
        } else {
            size_t n = utf8_len(s);
            if (n == 0) {
                outs(o, "\\ufffd");
                s++;
            } else {
                for (size_t i = 0; i < n; i++)
                    outc(o, s[i]);
                s += n;
            }
        }
    }
    outc(o, '"');
}

/* Metadata that is a count or a duration: a JSON number in run.json. */
static const char *const numeric_keys[] = {
    "threads", "metric_read_bias", "metric_read_ns", "peak_live_nodes",
    "trace_streams", "trace_bytes", "analyzer_peak_live_nodes",
    "analyzer_threads", "analyzer_scan_seconds", "analyzer_profile_seconds", "sample_rate_hz",
    "samples", "samples_lost", "task_create_cost", "chunk_dispatch_cost",
    "barrier_cost", "runtime_task_queries", "untied_first_parts",
    "clock_origin_ns", "context", "rank",
    "ranks", "pid", "burdened_span", "burdened_parallelism",
};

static int numeric_key(const char *key)
{
    for (size_t i = 0; i < sizeof(numeric_keys) / sizeof(*numeric_keys); i++)
        if (!strcmp(key, numeric_keys[i]))
            return 1;
    return 0;
}

/* A JSON number: -? digits (. digits)? ((e|E) (+|-)? digits)? */
static int is_json_number(const char *s)
{
    if (*s == '-')
        s++;
    if (!isdigit((unsigned char)*s))
        return 0;
    if (*s == '0' && isdigit((unsigned char)s[1]))
        return 0;
    while (isdigit((unsigned char)*s))
        s++;
    if (*s == '.') {
        if (!isdigit((unsigned char)*++s))
            return 0;
        while (isdigit((unsigned char)*s))
            s++;
    }
    if (*s == 'e' || *s == 'E') {
        s++;
        if (*s == '+' || *s == '-')
            s++;
        if (!isdigit((unsigned char)*s))
            return 0;
        while (isdigit((unsigned char)*s))
            s++;
    }
    return *s == 0;
}

int report_fprint_run_json(FILE *f, const char *name, const report_meta *meta,
                           const ospg_profile *p, const report_notes *notes,
                           const loctab *lt, char *err, size_t errlen)
{
    clear_msg(err, errlen);
    if (!name)
        name = "output";
    if (!f || (p && p->nscen == 0)) {
        set_msg(err, errlen, "%s: invalid argument", name);
        return -1;
    }
    out o = { f, 0 };
    const char *sep = "\n";
    outc(&o, '{');
    const char *incomplete = NULL; /* "no: why", when the run was cut */
    for (size_t i = 0; i < report_meta_count(meta); i++) {
        if (!strcmp(meta->kv[i].key, "complete")) {
            incomplete = meta->kv[i].value;
            continue;
        }
        outs(&o, sep);
        outs(&o, "  ");
        json_string(&o, meta->kv[i].key);
        outs(&o, ": ");
        if (numeric_key(meta->kv[i].key) && is_json_number(meta->kv[i].value))
            outs(&o, meta->kv[i].value);
        else
            json_string(&o, meta->kv[i].value);
        sep = ",\n";
    }
    if (p || incomplete) { /* a profile: of the whole run, or not */
        outs(&o, sep);
        outs(&o, incomplete ? "  \"complete\": false"
                            : "  \"complete\": true");
        sep = ",\n";
    }
    if (incomplete) {
        if (!strncmp(incomplete, "no: ", 4))
            incomplete += 4;
        outs(&o, ",\n  \"incomplete_why\": ");
        json_string(&o, incomplete);
    }
    if (p) {
        char par[REPORT_NUMBUF];
        if (p->span[0] == 0 && p->work > 0)
            snprintf(par, sizeof par, "null");
        else
            report_format_parallelism(par, p->work, p->span[0]);
        outs(&o, sep);
        outf(&o,
             "  \"program_work\": %" PRIu64 ",\n"
             "  \"program_span\": %" PRIu64 ",\n"
             "  \"program_parallelism\": %s,\n"
             "  \"locations\": %zu,\n"
             "  \"nodes\": %" PRIu64,
             p->work, p->span[0], par, p->nlocs, p->nodes);
        sep = ",\n";
    }
    if (report_notes_count(notes)) {
        const char *unit = report_meta_get(meta, "metric_unit");
        outs(&o, sep);
        outs(&o, "  \"notes\": [");
        for (size_t i = 0; i < notes->n; i++) {
            const note_item *it = &notes->v[i];
            loc_name nm;
            char text[512];
            resolve_name(lt, it->loc, &nm);
            report_note_text(text, sizeof(text), it->note, it->value, unit);
            outs(&o, i ? ",\n    {\"location\": " : "\n    {\"location\": ");
            json_string(&o, nm.where);
            outs(&o, ", \"directive\": ");
            json_string(&o, nm.directive);
            outs(&o, ", \"note\": ");
            json_string(&o, report_note_name(it->note));
            outf(&o, ", \"value\": %" PRIu64 ", \"text\": ", it->value);
            json_string(&o, text);
            outc(&o, '}');
        }
        outs(&o, "\n  ]");
        sep = ",\n";
    }
    outs(&o, sep[0] == ',' ? "\n}\n" : "}\n");
    return out_finish(&o, name, err, errlen);
}

int report_write_run_json(const char *path, const report_meta *meta,
                          const ospg_profile *p, const report_notes *notes,
                          const loctab *lt, char *err, size_t errlen)
{
    clear_msg(err, errlen);
    if (!path) {
        set_msg(err, errlen, "(null): invalid argument");
        return -1;
    }
    char tmp[PATH_MAX + 32];
    FILE *f = report_open_tmp(path, tmp, sizeof(tmp), err, errlen);
    if (!f)
        return -1;
    int r = report_fprint_run_json(f, path, meta, p, notes, lt, err, errlen);
    return report_close_tmp(f, tmp, path, r == 0, err, errlen);
}

/* ---- SQLite ---- */

static const char db_schema[] =
    "CREATE TABLE schema_version(version INTEGER NOT NULL);\n"
    "INSERT INTO schema_version(version) VALUES (5);\n"
    "CREATE TABLE run(key TEXT PRIMARY KEY, value TEXT);\n"
    "CREATE TABLE location(id INTEGER PRIMARY KEY, location TEXT NOT NULL,"
    " directive TEXT NOT NULL);\n"
    "CREATE TABLE scenario(id INTEGER PRIMARY KEY, name TEXT NOT NULL,"
    " factor REAL);\n"
    "CREATE TABLE profile(scenario INTEGER NOT NULL,"
    " location_id INTEGER NOT NULL, instances INTEGER NOT NULL,"
    " work INTEGER NOT NULL, span INTEGER NOT NULL, parallelism REAL,"
    " critical_work INTEGER NOT NULL, critical_percent REAL NOT NULL,"
    " grains INTEGER NOT NULL, grain_work INTEGER NOT NULL,"
    " grain_min INTEGER NOT NULL, grain_max INTEGER NOT NULL,"
    " grain_median INTEGER NOT NULL,"
    " PRIMARY KEY(scenario, location_id));\n"
    "CREATE VIEW profile_named AS SELECT p.scenario AS scenario,"
    " s.name AS scenario_name, s.factor AS factor,"
    " p.location_id AS location_id, l.location AS location,"
    " l.directive AS directive, p.instances AS instances, p.work AS work,"
    " p.span AS span, p.parallelism AS parallelism,"
    " p.critical_work AS critical_work,"
    " p.critical_percent AS critical_percent, p.grains AS grains,"
    " p.grain_work AS grain_work, p.grain_min AS grain_min,"
    " p.grain_max AS grain_max, p.grain_median AS grain_median"
    " FROM profile p JOIN scenario s ON s.id = p.scenario"
    " LEFT JOIN location l ON l.id = p.location_id;\n"
    "CREATE VIEW critical_line AS SELECT location,"
    " CASE WHEN directive LIKE 'line:%' THEN substr(directive, 6) ELSE ''"
    " END AS function, instances AS samples, critical_work,"
    " critical_percent, work FROM profile_named"
    " WHERE scenario = 0 AND (directive = 'line' OR directive LIKE 'line:%')"
    " ORDER BY critical_work DESC, samples DESC;\n"
    "CREATE TABLE note(location_id INTEGER NOT NULL, note TEXT NOT NULL,"
    " value INTEGER NOT NULL, text TEXT NOT NULL,"
    " PRIMARY KEY(location_id, note));\n"
    "CREATE TABLE serial_fragment(location_id INTEGER PRIMARY KEY,"
    " from_event TEXT NOT NULL, to_event TEXT NOT NULL);\n"
    "CREATE VIEW critical_serial AS SELECT f.from_event AS from_event,"
    " f.to_event AS to_event, p.instances AS fragments, p.work AS work,"
    " p.critical_work AS critical_work,"
    " p.critical_percent AS critical_percent"
    " FROM serial_fragment f JOIN profile p ON p.location_id = f.location_id"
    " WHERE p.scenario = 0 ORDER BY critical_work DESC, work DESC;\n"
    "PRAGMA user_version = 5;\n";

/* uint64 values above INT64_MAX are clamped (docs/output.md). */
static sqlite3_int64 clamp_i64(uint64_t v)
{
    return v > (uint64_t)INT64_MAX ? INT64_MAX : (sqlite3_int64)v;
}

typedef struct db_ctx {
    sqlite3 *db;
    sqlite3_stmt *run, *loc, *scen, *prof, *note, *serial;
} db_ctx;

/* Steps a bound statement to completion and resets it. */
static int db_step(sqlite3_stmt *st)
{
    int rc = sqlite3_step(st);
    sqlite3_reset(st);
    sqlite3_clear_bindings(st);
    return rc == SQLITE_DONE ? SQLITE_OK : rc;
}

static int db_run(db_ctx *c, const char *key, const char *value)
{
    int rc = sqlite3_bind_text(c->run, 1, key, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(c->run, 2, value, -1, SQLITE_STATIC);
    return rc == SQLITE_OK ? db_step(c->run) : rc;
}

static int db_loc(db_ctx *c, uint32_t id, const char *where,
                  const char *directive)
{
    int rc = sqlite3_bind_int64(c->loc, 1, id);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(c->loc, 2, where, -1, SQLITE_STATIC);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(c->loc, 3, directive, -1, SQLITE_STATIC);
    return rc == SQLITE_OK ? db_step(c->loc) : rc;
}

/* A serial fragment's events, as text. */
static int db_serial(db_ctx *c, const loctab *lt, const loctab_entry *e)
{
    char from[512], to[512];
    report_serial_text(lt, e->where, from, sizeof(from), to, sizeof(to));
    int rc = sqlite3_bind_int64(c->serial, 1, e->id);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(c->serial, 2, from, -1, SQLITE_TRANSIENT);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_text(c->serial, 3, to, -1, SQLITE_TRANSIENT);
    return rc == SQLITE_OK ? db_step(c->serial) : rc;
}

static int db_prof(db_ctx *c, size_t scen, uint32_t loc, uint64_t instances,
                   uint64_t work, uint64_t span, uint64_t critical,
                   uint64_t program_span, const ospg_loc_stat *g)
{
    uint64_t grains = g ? g->grains : 0;
    sqlite3_stmt *st = c->prof;
    int rc = sqlite3_bind_int64(st, 1, (sqlite3_int64)scen);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 2, loc);
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 3, clamp_i64(instances));
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 4, clamp_i64(work));
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 5, clamp_i64(span));
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_double(st, 6, ratio_double(work, span));
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 7, clamp_i64(critical));
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_double(st, 8, percent_double(critical, program_span));
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 9, clamp_i64(grains));
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 10, clamp_i64(g ? g->grain_work : 0));
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 11, clamp_i64(grains ? g->grain_min : 0));
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(st, 12, clamp_i64(grains ? g->grain_max : 0));
    if (rc == SQLITE_OK)
        rc = sqlite3_bind_int64(
            st, 13, clamp_i64(grains ? grain_median(g) : 0));
    return rc == SQLITE_OK ? db_step(st) : rc;
}

/* Table note: one row per (location, note), the largest value. */
static int db_notes(db_ctx *c, const report_notes *notes, const char *unit)
{
    int rc = SQLITE_OK;
    for (size_t i = 0; notes && i < notes->n && rc == SQLITE_OK; i++) {
        const note_item *it = &notes->v[i];
        char text[512];
        report_note_text(text, sizeof(text), it->note, it->value, unit);
        rc = sqlite3_bind_int64(c->note, 1, (sqlite3_int64)it->loc);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_text(c->note, 2, report_note_name(it->note), -1,
                                   SQLITE_STATIC);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_int64(c->note, 3, clamp_i64(it->value));
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_text(c->note, 4, text, -1, SQLITE_TRANSIENT);
        if (rc == SQLITE_OK)
            rc = db_step(c->note);
    }
    return rc;
}

static int db_fill(db_ctx *c, const ospg_profile *p, const loctab *lt,
                   const report_meta *meta, const report_notes *notes,
                   const char *const *scen_names, const double *scen_factors)
{
    int rc;
    sqlite3 *db = c->db;
    if ((rc = sqlite3_prepare_v2(db, "INSERT INTO run(key, value) VALUES (?, ?)",
                                 -1, &c->run, NULL)) != SQLITE_OK ||
        (rc = sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO location"
                                 "(id, location, directive) VALUES (?, ?, ?)",
                                 -1, &c->loc, NULL)) != SQLITE_OK ||
        (rc = sqlite3_prepare_v2(db, "INSERT INTO scenario(id, name, factor)"
                                 " VALUES (?, ?, ?)",
                                 -1, &c->scen, NULL)) != SQLITE_OK ||
        (rc = sqlite3_prepare_v2(db, "INSERT INTO profile(scenario,"
                                 " location_id, instances, work, span,"
                                 " parallelism, critical_work,"
                                 " critical_percent, grains, grain_work,"
                                 " grain_min, grain_max, grain_median)"
                                 " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
                                 " ?, ?)",
                                 -1, &c->prof, NULL)) != SQLITE_OK ||
        (rc = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO note(location_id,"
                                 " note, value, text) VALUES (?, ?, ?, ?)",
                                 -1, &c->note, NULL)) != SQLITE_OK ||
        (rc = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO serial_fragment("
                                 "location_id, from_event, to_event)"
                                 " VALUES (?, ?, ?)",
                                 -1, &c->serial, NULL)) != SQLITE_OK)
        return rc;
    if ((rc = db_notes(c, notes, report_meta_get(meta, "metric_unit"))) !=
        SQLITE_OK)
        return rc;

    /* run: the metadata, then the computed keys (as in run.json) */
    for (size_t i = 0; i < report_meta_count(meta); i++)
        if ((rc = db_run(c, meta->kv[i].key, meta->kv[i].value)) != SQLITE_OK)
            return rc;
    char num[REPORT_NUMBUF];
    snprintf(num, sizeof num, "%" PRIu64, p->work);
    if ((rc = db_run(c, "program_work", num)) != SQLITE_OK)
        return rc;
    snprintf(num, sizeof num, "%" PRIu64, p->span[0]);
    if ((rc = db_run(c, "program_span", num)) != SQLITE_OK)
        return rc;
    report_format_parallelism(num, p->work, p->span[0]);
    if ((rc = db_run(c, "program_parallelism", num)) != SQLITE_OK)
        return rc;
    snprintf(num, sizeof num, "%zu", p->nlocs);
    if ((rc = db_run(c, "locations", num)) != SQLITE_OK)
        return rc;
    snprintf(num, sizeof num, "%" PRIu64, p->nodes);
    if ((rc = db_run(c, "nodes", num)) != SQLITE_OK)
        return rc;

    /* location: the table's names, then placeholders for unnamed ids */
    if (!lt && (rc = db_loc(c, OSPG_LOC_PROGRAM, "program", "program")) !=
                   SQLITE_OK)
        return rc;
    for (const loctab_entry *e = loctab_first(lt); e; e = loctab_next(lt, e))
        if ((rc = db_loc(c, e->id, e->where, e->directive)) != SQLITE_OK ||
            (report_is_serial(e->directive) &&
             (rc = db_serial(c, lt, e)) != SQLITE_OK))
            return rc;
    for (size_t i = 0; i < p->nlocs; i++) {
        loc_name nm;
        resolve_name(lt, p->locs[i].loc, &nm);
        if ((rc = db_loc(c, p->locs[i].loc, nm.where, nm.directive)) !=
            SQLITE_OK)
            return rc;
    }

    /* scenario */
    for (size_t s = 0; s < p->nscen; s++) {
        char defname[32];
        const char *name = scen_names ? scen_names[s] : NULL;
        if (!name) {
            if (s == 0)
                snprintf(defname, sizeof defname, "measured");
            else
                snprintf(defname, sizeof defname, "scenario%zu", s);
            name = defname;
        }
        rc = sqlite3_bind_int64(c->scen, 1, (sqlite3_int64)s);
        if (rc == SQLITE_OK)
            rc = sqlite3_bind_text(c->scen, 2, name, -1, SQLITE_TRANSIENT);
        if (rc == SQLITE_OK) {
            if (s == 0)
                rc = sqlite3_bind_double(c->scen, 3, 1.0);
            else if (scen_factors)
                rc = sqlite3_bind_double(c->scen, 3, scen_factors[s]);
            else
                rc = sqlite3_bind_null(c->scen, 3);
        }
        if (rc == SQLITE_OK)
            rc = db_step(c->scen);
        if (rc != SQLITE_OK)
            return rc;
    }

    /* profile: per scenario, the program row, then every other location */
    const ospg_loc_stat *ps = program_stat(p);
    for (size_t s = 0; s < p->nscen; s++) {
        uint64_t pspan = p->span[s];
        rc = db_prof(c, s, OSPG_LOC_PROGRAM, ps ? ps->instances : 1, p->work,
                     pspan, ps ? ps->critical[s] : 0, pspan, NULL);
        if (rc != SQLITE_OK)
            return rc;
        for (size_t i = 0; i < p->nlocs; i++) {
            const ospg_loc_stat *st = &p->locs[i];
            if (st->loc == OSPG_LOC_PROGRAM)
                continue;
            rc = db_prof(c, s, st->loc, st->instances, st->work, st->span[s],
                         st->critical[s], pspan, st);
            if (rc != SQLITE_OK)
                return rc;
        }
    }
    return SQLITE_OK;
}

#define DB_PATH_MAX 500 /* below SQLite's 512-byte limit on a path */

/* Copies src over dst; 0, or -1 with errno set. */
static int copy_file(const char *src, const char *dst)
{
    FILE *in = fopen(src, "rb"), *out = in ? fopen(dst, "wb") : NULL;
    char buf[65536];
    size_t n;
    int rc = in && out ? 0 : -1;
    while (rc == 0 && (n = fread(buf, 1, sizeof(buf), in)) > 0)
        if (fwrite(buf, 1, n, out) != n)
            rc = -1;
    if (in && ferror(in))
        rc = -1;
    if (in)
        fclose(in);
    if (out && fclose(out))
        rc = -1;
    return rc;
}

int report_write_db(const char *path, const ospg_profile *p, const loctab *lt,
                    const report_meta *meta, const report_notes *notes,
                    const char *const *scen_names, const double *scen_factors,
                    char *err, size_t errlen)
{
    clear_msg(err, errlen);
    if (!path || !p || p->nscen == 0) {
        set_msg(err, errlen, "%s: invalid argument", path ? path : "(null)");
        return -1;
    }
    /* written under a temporary name, renamed when committed */
    char tmp[PATH_MAX + 32], built[PATH_MAX + 32];
    FILE *tf = report_open_tmp(path, tmp, sizeof(tmp), err, errlen);
    if (!tf)
        return -1;
    fclose(tf);
    /* SQLite opens no path longer than 512 bytes: such a database is
     * built in the temporary directory and copied over. */
    snprintf(built, sizeof(built), "%s", tmp);
    if (strlen(tmp) >= DB_PATH_MAX) {
        const char *td = getenv("TMPDIR");
        snprintf(built, sizeof(built), "%s/whatif-db.XXXXXX",
                 td && *td && strlen(td) < 256 ? td : "/tmp");
        int fd = mkstemp(built);
        if (fd < 0) {
            set_msg(err, errlen, "%s: %s", path, strerror(errno));
            unlink(tmp);
            return -1;
        }
        close(fd);
    }
    db_ctx c = { 0 };
    int rc = sqlite3_open_v2(built, &c.db,
                             SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL);
    if (rc != SQLITE_OK) {
        set_msg(err, errlen, "%s: %s", path,
                c.db ? sqlite3_errmsg(c.db) : sqlite3_errstr(rc));
        sqlite3_close(c.db);
        unlink(tmp);
        return -1;
    }
    int in_tx = 0;
    char *emsg = NULL;
    /* The database is built under a temporary name, renamed into place
     * when complete and removed on any failure, as the CSV files are: a
     * rollback journal and its syncs (four fdatasync calls, 2.4 ms on a
     * slow VM, at the end of every profiled run) protect nothing here. */
    rc = sqlite3_exec(c.db, "PRAGMA journal_mode = OFF; "
                            "PRAGMA synchronous = OFF",
                      NULL, NULL, &emsg);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(c.db, "BEGIN IMMEDIATE", NULL, NULL, &emsg);
    if (rc == SQLITE_OK) {
        in_tx = 1;
        rc = sqlite3_exec(c.db, db_schema, NULL, NULL, &emsg);
    }
    if (rc == SQLITE_OK)
        rc = db_fill(&c, p, lt, meta, notes, scen_names, scen_factors);
    if (rc == SQLITE_OK)
        rc = sqlite3_exec(c.db, "COMMIT", NULL, NULL, &emsg);

    int ret = 0;
    if (rc != SQLITE_OK) {
        set_msg(err, errlen, "%s: %s", path,
                emsg ? emsg : sqlite3_errmsg(c.db));
        ret = -1;
    }
    sqlite3_free(emsg);
    sqlite3_finalize(c.run);
    sqlite3_finalize(c.loc);
    sqlite3_finalize(c.scen);
    sqlite3_finalize(c.prof);
    sqlite3_finalize(c.note);
    sqlite3_finalize(c.serial);
    if (ret != 0 && in_tx && !sqlite3_get_autocommit(c.db))
        sqlite3_exec(c.db, "ROLLBACK", NULL, NULL, NULL);
    if (sqlite3_close(c.db) != SQLITE_OK && ret == 0) {
        set_msg(err, errlen, "%s: %s", path, sqlite3_errmsg(c.db));
        ret = -1;
    }
    if (ret == 0 && strcmp(built, tmp) && copy_file(built, tmp)) {
        set_msg(err, errlen, "%s: %s", path, strerror(errno));
        ret = -1;
    }
    if (strcmp(built, tmp))
        unlink(built);
    /* A journal left next to the path by an interrupted update of the old
     * file (whatif grains adds to it in place) would be rolled into the
     * new one by its first reader. */
    for (int i = 0; ret == 0 && i < 2; i++) {
        char side[PATH_MAX + 32];
        if (snprintf(side, sizeof(side), "%s%s", path,
                     i ? "-wal" : "-journal") < (int)sizeof(side))
            unlink(side);
    }
    if (ret == 0 && rename(tmp, path)) {
        set_msg(err, errlen, "%s: %s", path, strerror(errno));
        ret = -1;
    }
    if (ret != 0)
        unlink(tmp);
    return ret;
}

static int path_in(char *buf, size_t len, const char *dir, const char *name,
                   char *err, size_t errlen)
{
    int n = snprintf(buf, len, "%s/%s", dir, name);
    if (n < 0 || (size_t)n >= len) {
        if (err && errlen)
            snprintf(err, errlen, "%s: output path too long", dir);
        return -1;
    }
    return 0;
}

int report_write_lines_csv(const char *path, const ospg_profile *p,
                           const loctab *lt, char *err, size_t errlen)
{
    clear_msg(err, errlen);
    csv_item *items;
    csv_item **order;
    size_t n;
    if (!p || !p->nscen ||
        sorted_rows(p, 0, lt, ROWS_LINES, &items, &order, &n)) {
        set_msg(err, errlen, "%s: %s", path ? path : "(null)",
                p && p->nscen ? "out of memory" : "invalid argument");
        return -1;
    }
    char tmp[PATH_MAX + 32];
    FILE *f = report_open_tmp(path, tmp, sizeof(tmp), err, errlen);
    if (!f) {
        free(items);
        free(order);
        return -1;
    }
    out o = { f, 0 };
    outs(&o, "location,function,samples,critical_work,critical_percent,"
             "work\n");
    for (size_t i = 0; i < n; i++) {
        const ospg_loc_stat *st = order[i]->st;
        const char *fn = order[i]->name.directive + 4;
        char pct[REPORT_NUMBUF];
        report_format_percent(pct, st->critical[0], p->span[0]);
        csv_field(&o, order[i]->name.where);
        outc(&o, ',');
        csv_field(&o, *fn == ':' ? fn + 1 : "");
        outf(&o, ",%" PRIu64 ",%" PRIu64 ",%s,%" PRIu64 "\n", st->instances,
             st->critical[0], pct, st->work);
    }
    free(items);
    free(order);
    int rc = out_finish(&o, path, err, errlen);
    return report_close_tmp(f, tmp, path, rc == 0, err, errlen);
}

/* Whether p holds any row of a kind. */
static int has_rows(const ospg_profile *p, const loctab *lt, int kind)
{
    for (size_t i = 0; i < p->nlocs; i++) {
        loc_name nm;
        resolve_name(lt, p->locs[i].loc, &nm);
        if (stat_row_kind(&p->locs[i], &nm) == kind)
            return 1;
    }
    return 0;
}

/* ---- Serial fragments ----
 *
 * A serial fragment's tag (libprofiler/tool.c) is named
 * "begin|end:KIND:LOC>begin|end:KIND:LOC": the events before and after
 * it, LOC a location id of the same table. */

/* One event as text into buf. */
static void serial_event_text(const loctab *lt, const char *ev, size_t evlen,
                              char *buf, size_t len)
{
    char tmp[128];
    snprintf(tmp, sizeof(tmp), "%.*s", (int)(evlen < 127 ? evlen : 127), ev);
    char *k = strchr(tmp, ':'), *l = k ? strchr(k + 1, ':') : NULL;
    if (!k || !l) {
        snprintf(buf, len, "%s", tmp);
        return;
    }
    *k++ = 0;
    *l++ = 0;
    int end = !strcmp(tmp, "end");
    unsigned long id = strtoul(l, NULL, 10);
    const loctab_entry *e =
        lt && id ? loctab_get(lt, (uint32_t)id) : NULL;
    if (!strcmp(k, "program"))
        snprintf(buf, len, "program %s", end ? "end" : "start");
    else if (!strcmp(k, "thread"))
        snprintf(buf, len, "thread %s", end ? "end" : "start");
    else if (!strcmp(k, "event"))
        snprintf(buf, len, "an OpenMP event");
    else if (e)
        snprintf(buf, len, "%s of %s %s", end ? "end" : "start", k, e->where);
    else
        snprintf(buf, len, "%s of %s", end ? "end" : "start", k);
}

void report_serial_text(const loctab *lt, const char *where, char *from,
                        size_t flen, char *to, size_t tlen)
{
    const char *gt = strchr(where, '>');
    if (!gt) {
        snprintf(from, flen, "%s", where);
        snprintf(to, tlen, "?");
        return;
    }
    serial_event_text(lt, where, (size_t)(gt - where), from, flen);
    serial_event_text(lt, gt + 1, strlen(gt + 1), to, tlen);
}

int report_write_serial_csv(const char *path, const ospg_profile *p,
                            const loctab *lt, char *err, size_t errlen)
{
    clear_msg(err, errlen);
    csv_item *items;
    csv_item **order;
    size_t n;
    if (!p || !p->nscen ||
        sorted_rows(p, 0, lt, ROWS_SERIAL, &items, &order, &n)) {
        set_msg(err, errlen, "%s: %s", path ? path : "(null)",
                p && p->nscen ? "out of memory" : "invalid argument");
        return -1;
    }
    char tmp[PATH_MAX + 32];
    FILE *f = report_open_tmp(path, tmp, sizeof(tmp), err, errlen);
    if (!f) {
        free(items);
        free(order);
        return -1;
    }
    out o = { f, 0 };
    outs(&o, "from,to,fragments,work,critical_work,critical_percent\n");
    for (size_t i = 0; i < n; i++) {
        const ospg_loc_stat *st = order[i]->st;
        char from[512], to[512], pct[REPORT_NUMBUF];
        report_serial_text(lt, order[i]->name.where, from, sizeof(from), to,
                           sizeof(to));
        report_format_percent(pct, st->critical[0], p->span[0]);
        csv_field(&o, from);
        outc(&o, ',');
        csv_field(&o, to);
        outf(&o, ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%s\n", st->instances,
             st->work, st->critical[0], pct);
    }
    free(items);
    free(order);
    int rc = out_finish(&o, path, err, errlen);
    return report_close_tmp(f, tmp, path, rc == 0, err, errlen);
}

int report_write_all(const char *dir, const ospg_profile *p, const loctab *lt,
                     const report_meta *meta, const report_notes *notes,
                     const char *const *scen_names, const double *scen_factors,
                     char *err, size_t errlen)
{
    if (mkdir(dir, 0777) && errno != EEXIST) {
        if (err && errlen)
            snprintf(err, errlen, "%s: cannot create: %s", dir,
                     strerror(errno));
        return -1;
    }
    char path[4096];
    if (path_in(path, sizeof(path), dir, "profile.csv", err, errlen) ||
        report_write_profile_csv(path, p, 0, lt, err, errlen) ||
        path_in(path, sizeof(path), dir, "run.json", err, errlen) ||
        report_write_run_json(path, meta, p, notes, lt, err, errlen) ||
        path_in(path, sizeof(path), dir, "profile.db", err, errlen) ||
        report_write_db(path, p, lt, meta, notes, scen_names, scen_factors,
                        err, errlen))
        return -1;
    if (has_rows(p, lt, ROWS_LINES) &&
        (path_in(path, sizeof(path), dir, "critical_lines.csv", err,
                 errlen) ||
         report_write_lines_csv(path, p, lt, err, errlen)))
        return -1;
    if (has_rows(p, lt, ROWS_SERIAL) &&
        (path_in(path, sizeof(path), dir, "serial_fragments.csv", err,
                 errlen) ||
         report_write_serial_csv(path, p, lt, err, errlen)))
        return -1;
    return 0;
}

/* whatif.csv: one block of rows per what-if scenario (1 .. nscen-1). */
static void whatif_row(out *o, const char *scen_name, const char *factor,
                       const char *where, const char *directive,
                       uint64_t work, uint64_t span, uint64_t critical,
                       uint64_t program_span)
{
    char par[REPORT_NUMBUF], pct[REPORT_NUMBUF];
    report_format_parallelism(par, work, span);
    report_format_percent(pct, critical, program_span);
    csv_field(o, scen_name);
    outf(o, ",%s,", factor);
    csv_field(o, where);
    outc(o, ',');
    csv_field(o, directive);
    outf(o, ",%" PRIu64 ",%" PRIu64 ",%s,%" PRIu64 ",%s\n", work, span, par,
         critical, pct);
}

void report_format_factor(char buf[REPORT_NUMBUF], double factor)
{
    if (isinf(factor))
        snprintf(buf, REPORT_NUMBUF, "inf");
    else if (!(factor > 0))
        snprintf(buf, REPORT_NUMBUF, "own");
    else
        snprintf(buf, REPORT_NUMBUF, "%g", factor);
}

int report_write_whatif_csv(const char *path, const ospg_profile *p,
                            const loctab *lt, const char *const *names,
                            const double *factors, char *err, size_t errlen)
{
    clear_msg(err, errlen);
    char tmp[PATH_MAX + 32];
    FILE *f = report_open_tmp(path, tmp, sizeof(tmp), err, errlen);
    if (!f)
        return -1;
    out o = { f, 0 };
    outs(&o, "scenario,factor,location,directive,work,span,parallelism,"
             "critical_work,critical_percent\n");
    for (size_t s = 1; s < p->nscen; s++) {
        csv_item *items;
        csv_item **order;
        size_t n;
        if (sorted_rows(p, s, lt, ROWS_DIRECTIVES, &items, &order, &n)) {
            fclose(f);
            set_msg(err, errlen, "%s: out of memory", path);
            report_close_tmp(f, tmp, path, 0, NULL, 0);
            return -1;
        }
        char fac[REPORT_NUMBUF];
        report_format_factor(fac, factors ? factors[s] : 0);
        const char *name = names && names[s] ? names[s] : "scenario";
        const ospg_loc_stat *ps = program_stat(p);
        whatif_row(&o, name, fac, "program", "program", p->work, p->span[s],
                   ps ? ps->critical[s] : 0, p->span[s]);
        for (size_t i = 0; i < n; i++) {
            const ospg_loc_stat *st = order[i]->st;
            whatif_row(&o, name, fac, order[i]->name.where,
                       order[i]->name.directive, st->work, st->span[s],
                       st->critical[s], p->span[s]);
        }
        free(items);
        free(order);
    }
    int rc = out_finish(&o, path, err, errlen);
    return report_close_tmp(f, tmp, path, rc == 0, err, errlen);
}
