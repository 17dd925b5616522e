/* test_trace.c - the trace format's contract, checked from both sides.
 *
 * Round trips write every record type with edge values through many block
 * sizes and compare what comes back field by field; a fixed byte image
 * trips when the format changes without docs/trace-format.md; and the error
 * tests feed the reader every kind of damage a file can suffer (cut at every
 * byte, one bit flipped anywhere, hand-made payloads with valid CRCs) to see
 * it report each one as "NAME: byte N: ..." and never misread or crash.
 * The CRC here is an independent bitwise implementation, so a wrong table in
 * trace.c cannot hide behind itself.  Last line: "N passed, N failed".
 */
#define _POSIX_C_SOURCE 200809L

#include "trace.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static int npass, nfail;
static char tmpdir[64];

static void check(int ok, int line, const char *fmt, ...)
{
    if (ok) {
        npass++;
        return;
    }
    nfail++;
    fprintf(stderr, "FAIL line %d: ", line);
    va_list ap;
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}
#define CHECK(c, ...) check(!!(c), __LINE__, __VA_ARGS__)

/* ---- helpers ---- */

static uint32_t ref_crc(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return ~c;
}

static void le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* A block header's payload length and payload CRC, without the
 * graph-only mark (version 7) that the writer folds into both. */
static int blk_graph_only(const uint8_t *h)
{
    return (rd32(h) & TRACE_BLOCK_GRAPH_ONLY) != 0;
}

static uint32_t blk_len(const uint8_t *h)
{
    return rd32(h) & ~TRACE_BLOCK_GRAPH_ONLY;
}

static uint32_t blk_crc(const uint8_t *h)
{
    return rd32(h + 4) ^ (blk_graph_only(h) ? TRACE_GRAPH_ONLY_CRC : 0);
}

/* Rewrites an image of this version as version v < 7 would hold it: no
 * graph-only marks. */
static void as_version(uint8_t *b, size_t n, uint8_t v)
{
    b[8] = v;
    for (size_t off = 24; off + 8 <= n; off += 8 + blk_len(b + off)) {
        uint32_t len = blk_len(b + off), crc = blk_crc(b + off);
        wr32(b + off, len);
        wr32(b + off + 4, crc);
    }
}

static uint64_t rng_state = 0x9e3779b97f4a7c15u;
static uint64_t rnd(void) /* splitmix64: deterministic across runs */
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static void path_of(char *out, size_t n, const char *name)
{
    snprintf(out, n, "%s/%s", tmpdir, name);
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    uint8_t *b = malloc(n > 0 ? (size_t)n : 1);
    if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return b;
}

static int spit(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    int ok = fwrite(p, 1, n, f) == n;
    return fclose(f) == 0 && ok ? 0 : -1;
}

/* Things the expected records point at, freed between tests. */
static void *pool[4096];
static size_t npool;
static void *keep(void *p)
{
    if (npool < sizeof pool / sizeof pool[0])
        pool[npool++] = p;
    return p;
}
static void pool_free(void)
{
    while (npool)
        free(pool[--npool]);
}

static char *mkstr(size_t n, unsigned seed)
{
    char *s = keep(malloc(n + 1));
    for (size_t i = 0; i < n; i++)
        s[i] = (char)(1 + (i * 131 + seed) % 255); /* every byte but NUL */
    s[n] = '\0';
    return s;
}

/* ---- expected records ---- */

/* owner is what the reader gives back: 0 unless group != 0. */
static trace_rec r_begin(uint64_t id, uint64_t parent, uint64_t idx, int kind,
                         uint32_t loc, uint64_t group, uint64_t owner,
                         const ospg_dep *deps, size_t n)
{
    return (trace_rec){.type = TRACE_BEGIN, .id = id, .parent = parent,
                       .idx = idx, .kind = (uint64_t)kind, .loc = loc,
                       .group = group, .owner = group ? owner : 0,
                       .ndeps = n, .deps = n ? deps : NULL};
}
static trace_rec r_work(uint64_t parent, uint64_t idx, uint64_t work,
                        uint32_t loc, uint32_t region)
{
    return (trace_rec){.type = TRACE_WORK, .parent = parent, .idx = idx,
                       .work = work, .loc = loc, .region = region};
}
static trace_rec r_workf(uint64_t parent, uint64_t idx, uint64_t work,
                         uint32_t loc, uint32_t region, uint32_t flags)
{
    trace_rec r = r_work(parent, idx, work, loc, region);
    r.flags = flags;
    return r;
}
static trace_rec r_works(uint64_t parent, uint64_t idx, uint64_t work,
                         uint32_t loc, uint32_t region, uint32_t flags,
                         const ospg_sample *smp, size_t n)
{
    trace_rec r = r_work(parent, idx, work, loc, region);
    r.flags = flags;
    r.nsamples = n;
    r.samples = n ? smp : NULL;
    return r;
}
static trace_rec r_note(uint32_t loc, uint32_t note, uint64_t value)
{
    return (trace_rec){.type = TRACE_NOTE, .loc = loc, .note = note,
                       .value = value};
}
static trace_rec r_end(uint64_t id, uint64_t nchildren, uint32_t loc)
{
    return (trace_rec){.type = TRACE_END, .id = id, .nchildren = nchildren,
                       .loc = loc};
}
/* A LEAF with one W-child (nchildren 1) or none (work etc. ignored). */
static trace_rec r_leaf(uint64_t parent, uint64_t idx, int kind, uint32_t loc,
                        uint64_t group, uint64_t owner, uint64_t nchildren,
                        uint64_t work, uint32_t wloc, uint32_t region,
                        uint32_t flags)
{
    trace_rec r = {.type = TRACE_LEAF, .parent = parent, .idx = idx,
                   .kind = (uint64_t)kind, .loc = loc, .group = group,
                   .owner = group ? owner : 0, .nchildren = nchildren,
                   .wloc = OSPG_LOC_NONE};
    if (nchildren) {
        r.work = work;
        r.wloc = wloc;
        r.region = region;
        r.flags = flags;
    }
    return r;
}
static trace_rec r_loc(uint32_t loc, const char *d, const char *w)
{
    return (trace_rec){.type = TRACE_LOC, .loc = loc, .str1 = d, .str2 = w};
}
static trace_rec r_meta(const char *k, const char *v)
{
    return (trace_rec){.type = TRACE_META, .loc = OSPG_LOC_NONE, .str1 = k,
                       .str2 = v};
}

static int write_rec(trace_writer *w, const trace_rec *r)
{
    switch (r->type) {
    case TRACE_BEGIN:
        return trace_write_begin(w, r->id, r->parent, r->idx,
                                 (ospg_kind)r->kind, r->loc, r->group,
                                 r->owner, r->deps, r->ndeps);
    case TRACE_WORK:
        return trace_write_work_sampled(w, r->parent, r->idx, r->work, r->loc,
                                        r->region, r->flags, r->samples,
                                        r->nsamples);
    case TRACE_NOTE:
        return trace_write_note(w, r->loc, r->note, r->value);
    case TRACE_END:
        return trace_write_end(w, r->id, r->nchildren, r->loc);
    case TRACE_LEAF: {
        ospg_leaf_work lw = {r->work, r->wloc, r->region, r->flags};
        return trace_write_leaf(w, r->parent, r->idx, (ospg_kind)r->kind,
                                r->loc, r->group, r->owner,
                                r->nchildren ? &lw : NULL);
    }
    case TRACE_LOC:
        return trace_write_loc(w, r->loc, r->str1, r->str2);
    case TRACE_META:
        return trace_write_meta(w, r->str1, r->str2);
    }
    return -1;
}

static int str_eq(const char *a, const char *b)
{
    if (!a || !b)
        return a == b;
    return strcmp(a, b) == 0;
}

/* Compares every field; why gets the first difference. */
static int rec_eq(const trace_rec *g, const trace_rec *e, char *why, size_t n)
{
#define F(f)                                                                   \
    if (g->f != e->f) {                                                        \
        snprintf(why, n, "type %d field " #f ": got %llu want %llu", e->type,  \
                 (unsigned long long)g->f, (unsigned long long)e->f);          \
        return 0;                                                              \
    }
    F(type) F(id) F(parent) F(idx) F(kind) F(loc) F(group) F(owner) F(work)
    F(region) F(flags) F(note) F(value) F(nchildren) F(ndeps)
    if (e->type == TRACE_LEAF) {
        F(wloc)
    }
    F(nsamples)
    if ((g->samples == NULL) != (e->samples == NULL)) {
        snprintf(why, n, "samples pointer NULL mismatch");
        return 0;
    }
    for (size_t i = 0; i < e->nsamples; i++)
        if (g->samples[i].loc != e->samples[i].loc ||
            g->samples[i].count != e->samples[i].count) {
            snprintf(why, n, "sample %zu: got %u/%u want %u/%u", i,
                     g->samples[i].loc, g->samples[i].count,
                     e->samples[i].loc, e->samples[i].count);
            return 0;
        }
#undef F
    if ((g->deps == NULL) != (e->deps == NULL)) {
        snprintf(why, n, "deps pointer NULL mismatch");
        return 0;
    }
    for (size_t i = 0; i < e->ndeps; i++)
        if (g->deps[i].addr != e->deps[i].addr ||
            g->deps[i].type != e->deps[i].type) {
            snprintf(why, n, "dep %zu: got %llx/%u want %llx/%u", i,
                     (unsigned long long)g->deps[i].addr, g->deps[i].type,
                     (unsigned long long)e->deps[i].addr, e->deps[i].type);
            return 0;
        }
    if (!str_eq(g->str1, e->str1) || !str_eq(g->str2, e->str2)) {
        snprintf(why, n, "type %d strings differ", e->type);
        return 0;
    }
    return 1;
}

/* Reads everything; 1 if it is exactly exp[0..n) and a clean end. */
static int read_expect(trace_reader *r, const trace_rec *exp, size_t n,
                       char *why, size_t whyn)
{
    trace_rec got;
    for (size_t i = 0; i < n; i++) {
        int k = trace_reader_next(r, &got);
        if (k != 1) {
            snprintf(why, whyn, "record %zu: next=%d err=%s", i, k,
                     trace_reader_error(r) ? trace_reader_error(r) : "-");
            return 0;
        }
        char w2[200];
        if (!rec_eq(&got, &exp[i], w2, sizeof w2)) {
            snprintf(why, whyn, "record %zu: %s", i, w2);
            return 0;
        }
    }
    int k = trace_reader_next(r, &got);
    if (k != 0 || trace_reader_error(r)) {
        snprintf(why, whyn, "after %zu records: next=%d err=%s", n, k,
                 trace_reader_error(r) ? trace_reader_error(r) : "-");
        return 0;
    }
    return trace_reader_next(r, &got) == 0; /* the end stays the end */
}

/* Counts records until the end or an error: returns the count, and the
 * last next() result in *last. */
static size_t drain(trace_reader *r, int *last)
{
    trace_rec rec;
    size_t n = 0;
    int k;
    while ((k = trace_reader_next(r, &rec)) == 1)
        n++;
    *last = k;
    return n;
}

static size_t write_file(const char *path, uint32_t stream, size_t bsize,
                         const trace_rec *recs, size_t n, int *failures)
{
    trace_writer *w = trace_writer_open(path, stream, bsize, 0);
    *failures = 0;
    if (!w) {
        *failures = 1;
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if (write_rec(w, &recs[i]) != 0)
            (*failures)++;
    uint64_t bytes = 0;
    if (trace_writer_flush(w) != 0)
        (*failures)++;
    bytes = trace_writer_bytes(w);
    if (trace_writer_close(w) != 0)
        (*failures)++;
    return (size_t)bytes;
}

/* ---- the edge-value record set ---- */

static size_t build_edge_set(trace_rec *out, size_t cap)
{
    size_t n = 0;
    ospg_dep *few = keep(malloc(3 * sizeof *few));
    few[0] = (ospg_dep){0, OSPG_DEP_IN};
    few[1] = (ospg_dep){UINT64_MAX, OSPG_DEP_OUT};
    few[2] = (ospg_dep){1, OSPG_DEP_INOUTSET};
    size_t nmany = 1000;
    ospg_dep *many = keep(malloc(nmany * sizeof *many));
    for (size_t i = 0; i < nmany; i++) {
        uint64_t a = i % 4 == 0   ? 0
                     : i % 4 == 1 ? UINT64_MAX
                     : i % 4 == 2 ? rnd()
                                  : 0x7fff0000u + 8 * i;
        many[i] = (ospg_dep){a, (uint32_t)(1 + i % 5)};
    }
    size_t nmax = TRACE_MAX_DEPS;
    ospg_dep *maxd = keep(malloc(nmax * sizeof *maxd));
    for (size_t i = 0; i < nmax; i++)
        maxd[i] = (ospg_dep){i & 1 ? (uint64_t)1 << 63 : rnd(),
                             (uint32_t)(1 + (i * 7) % 5)};

    static const ospg_sample one_smp[1] = {{7, 1}};
    size_t nmany_smp = 300;
    ospg_sample *many_smp = keep(malloc(nmany_smp * sizeof *many_smp));
    for (size_t i = 0; i < nmany_smp; i++)
        many_smp[i] = (ospg_sample){i % 3 ? (uint32_t)i : UINT32_MAX - 1,
                                    i % 5 ? (uint32_t)(i % 7 ? 1 + i : 0)
                                          : UINT32_MAX};
    trace_rec fixed[] = {
        r_meta("", ""),
        r_meta("key", "value"),
        r_meta(mkstr(TRACE_MAX_STR, 1), "x"),
        r_meta("y", mkstr(TRACE_MAX_STR, 2)),
        r_meta(mkstr(300, 3), mkstr(200, 4)),
        r_loc(0, "parallel", "a.c:1"),
        r_loc(OSPG_LOC_NONE, "", ""),
        r_loc(UINT32_MAX - 1, mkstr(TRACE_MAX_STR, 5), mkstr(TRACE_MAX_STR, 6)),
        r_begin(0, 0, 0, OSPG_S, 0, 0, 0, NULL, 0),
        r_begin(UINT64_MAX, 0, UINT64_MAX, OSPG_P, OSPG_LOC_NONE, UINT64_MAX,
                UINT64_MAX, few, 3),
        r_begin(1, UINT64_MAX, 1, OSPG_P, UINT32_MAX - 1, 1, 0, few + 1, 1),
        r_begin(0, 1, 0, OSPG_S, 1, 0, 0, NULL, 0),
        r_begin(5, 4, 0, OSPG_P, 1, UINT64_MAX, UINT64_MAX, NULL, 0),
        r_begin(6, 5, 0, OSPG_P, 1, 1, 1ull << 63, NULL, 0),
        r_begin(12345678901234ull, 12345678901233ull, 7, OSPG_P, 42, 9,
                12345678901000ull, many, nmany),
        r_begin(2, 1, 3, OSPG_P, 5, 0, 0, maxd, nmax),
        r_begin(3, 2, 0, OSPG_P, 5, 2, 2, maxd, nmax),
        r_work(0, 0, 0, 0, 0),
        r_work(UINT64_MAX, UINT64_MAX, UINT64_MAX, OSPG_LOC_NONE, UINT32_MAX),
        r_work(1, 1, 1, 1, 1),
        r_work(0, 0, 1, UINT32_MAX - 1, 0),
        r_end(0, 0, 0),
        r_end(UINT64_MAX, UINT64_MAX, OSPG_LOC_NONE),
        r_end(1, 1, 1),
        r_end(0, 0, OSPG_LOC_NONE),
        r_works(1, 2, 300, 4, 0, 0, one_smp, 1),
        r_works(UINT64_MAX, UINT64_MAX, UINT64_MAX, OSPG_LOC_NONE, UINT32_MAX,
                OSPG_W_CONTINUES, many_smp, nmany_smp),
        r_leaf(0, 0, OSPG_P, 0, 0, 0, 1, 0, 0, 0, 0),        /* short form */
        r_leaf(UINT64_MAX, UINT64_MAX, OSPG_P, UINT32_MAX - 1, 0, 0, 1,
               UINT64_MAX, UINT32_MAX - 1, 0, 0),             /* short form */
        r_leaf(1, 2, OSPG_S, OSPG_LOC_NONE, 0, 0, 0, 0, 0, 0, 0),
        r_leaf(1, 2, OSPG_P, 3, 0, 0, 0, 0, 0, 0, 0),
        r_leaf(5, 0, OSPG_P, 1, UINT64_MAX, UINT64_MAX, 1, 9, 2,
               UINT32_MAX, OSPG_W_CONTINUES),
        r_leaf(7, 1, OSPG_S, 4, 0, 0, 1, 1, OSPG_LOC_NONE, 1, 0),
        r_leaf(7, 1, OSPG_P, 4, 0, 0, 1, 10, 4, 0, OSPG_W_CONTINUES),
    };
    for (size_t i = 0; i < sizeof fixed / sizeof fixed[0] && n < cap; i++)
        out[n++] = fixed[i];

    /* then a program-like stretch: nested nodes, ids climbing, all types */
    uint64_t next = 3, stack[64] = {0}, kids[64] = {0};
    int depth = 0;
    while (n < cap) {
        uint64_t top = stack[depth];
        switch (rnd() % 9) {
        case 8: { /* a leaf, usually in its short form */
            int sh = rnd() % 3 != 0;
            uint32_t loc = (uint32_t)(rnd() % 50);
            out[n++] = r_leaf(top, kids[depth]++, sh || rnd() % 2 ? OSPG_P
                                                                  : OSPG_S,
                              loc, 0, 0, sh || rnd() % 2, rnd() % 1000000,
                              sh ? loc : (uint32_t)(rnd() % 50),
                              sh ? 0 : (uint32_t)(rnd() % 3), 0);
            break;
        }
        case 0:
        case 1:
        case 6:
            if (depth < 63) {
                int kind = rnd() % 2 ? OSPG_P : OSPG_S;
                size_t nd = rnd() % 4;
                ospg_dep *d = NULL;
                if (nd) {
                    d = keep(malloc(nd * sizeof *d));
                    for (size_t i = 0; i < nd; i++)
                        d[i] = (ospg_dep){0x600000 + 8 * (rnd() % 64),
                                          (uint32_t)(1 + rnd() % 5)};
                }
                /* members (group 1, 2) name an ancestor as owner */
                uint64_t grp = rnd() % 3;
                out[n++] = r_begin(next, top, kids[depth]++, kind,
                                   (uint32_t)(rnd() % 50), grp,
                                   stack[rnd() % (unsigned)(depth + 1)], d,
                                   nd);
                stack[++depth] = next++;
                kids[depth] = 0;
            }
            break;
        case 2:
        case 3:
        case 4:
            out[n++] = r_work(top, kids[depth]++, rnd() % 1000000,
                              (uint32_t)(rnd() % 50), (uint32_t)(rnd() % 3));
            if (rnd() % 4 == 0) { /* sampled */
                size_t ns = 1 + rnd() % 4;
                ospg_sample *sm = keep(malloc(ns * sizeof *sm));
                for (size_t i = 0; i < ns; i++)
                    sm[i] = (ospg_sample){(uint32_t)(100 + rnd() % 50),
                                          (uint32_t)(rnd() % 10)}; /* 0: a tag */
                out[n - 1].nsamples = ns;
                out[n - 1].samples = sm;
            }
            break;
        case 5:
            if (depth > 0) {
                out[n++] = r_end(top, kids[depth], rnd() % 2
                                                       ? OSPG_LOC_NONE
                                                       : (uint32_t)(rnd() % 50));
                depth--;
            }
            break;
        default:
            out[n++] = rnd() % 2 ? r_loc((uint32_t)(rnd() % 50), "for", "b.c:9")
                                 : r_meta("threads", "8");
        }
    }
    return n;
}

/* ---- tests ---- */

static void test_ref_crc(void)
{
    CHECK(ref_crc((const uint8_t *)"123456789", 9) == 0xcbf43926u,
          "reference CRC-32 check value");
}

/* The example of docs/trace-format.md: one record of each kind (an END
 * without a location in its short form). */
static const uint8_t tiny_image[79] = {
    0x57, 0x48, 0x41, 0x54, 0x49, 0x46, 0x54, 0x52, /* "WHATIFTR" */
    0x08, 0x00, 0x00, 0x00,                         /* version 8 */
    0x03, 0x00, 0x00, 0x00,                         /* stream 3 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* flags */
    0x2f, 0x00, 0x00, 0x00,                         /* payload: 47 bytes */
    0xc3, 0xf9, 0x97, 0xd3,                         /* CRC 0xd397f9c3 */
    0x06, 0x01, 0x6b, 0x01, 0x76,                   /* META "k" "v" */
    0x05, 0x06, 0x03, 0x66, 0x6f, 0x72,             /* LOC 5 "for" */
    0x05, 0x61, 0x2e, 0x63, 0x3a, 0x33,             /*   "a.c:3" */
    0x01, 0x02, 0x01, 0x00, 0x02, 0x06, 0x07, 0x00, /* BEGIN 1 .. g7 owner 0 */
    0x01, 0x80, 0x40, 0x01,                         /*   1 dep: 0x1000 in */
    0x02, 0x02, 0x00, 0x64, 0x06, 0x00, 0x01,       /* WORK 1 0 100 5 0 cont */
    0x08, 0x06, 0x01, 0x02,                         /* NOTE 5 1 2 */
    0x0c, 0x00, 0x01,                               /* END0 1 1 */
    0x03, 0x01, 0x01, 0x01,                         /* END 0 1 loc 0 */
};
/* The same records as version 2 wrote them (no short forms). */
static const uint8_t tiny_image_v2[80] = {
    0x57, 0x48, 0x41, 0x54, 0x49, 0x46, 0x54, 0x52, /* "WHATIFTR" */
    0x02, 0x00, 0x00, 0x00,                         /* version 2 */
    0x03, 0x00, 0x00, 0x00,                         /* stream 3 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* flags */
    0x30, 0x00, 0x00, 0x00,                         /* payload: 48 bytes */
    0x1f, 0x7b, 0x32, 0x93,                         /* CRC 0x93327b1f */
    0x06, 0x01, 0x6b, 0x01, 0x76,                   /* META "k" "v" */
    0x05, 0x06, 0x03, 0x66, 0x6f, 0x72,             /* LOC 5 "for" */
    0x05, 0x61, 0x2e, 0x63, 0x3a, 0x33,             /*   "a.c:3" */
    0x01, 0x02, 0x01, 0x00, 0x02, 0x06, 0x07, 0x00, /* BEGIN 1 .. g7 owner 0 */
    0x01, 0x80, 0x40, 0x01,                         /*   1 dep: 0x1000 in */
    0x02, 0x02, 0x00, 0x64, 0x06, 0x00, 0x01,       /* WORK 1 0 100 5 0 cont */
    0x08, 0x06, 0x01, 0x02,                         /* NOTE 5 1 2 */
    0x03, 0x00, 0x01, 0x00,                         /* END 1 1 none */
    0x03, 0x01, 0x01, 0x01,                         /* END 0 1 loc 0 */
};
static const ospg_dep tiny_dep = {0x1000, OSPG_DEP_IN};

static size_t tiny_records(trace_rec *t)
{
    t[0] = r_meta("k", "v");
    t[1] = r_loc(5, "for", "a.c:3");
    t[2] = r_begin(1, 0, 0, OSPG_P, 5, 7, 0, &tiny_dep, 1);
    t[3] = r_workf(1, 0, 100, 5, 0, OSPG_W_CONTINUES);
    t[4] = r_note(5, TRACE_NOTE_ONE_THREAD_LOOP, 2);
    t[5] = r_end(1, 1, OSPG_LOC_NONE);
    t[6] = r_end(0, 1, 0);
    return 7;
}

/* Version 1 (no work flags, no NOTE) is still read: the same trace
 * without the note, its work flags read as 0. */
static const uint8_t tiny_image_v1[75] = {
    0x57, 0x48, 0x41, 0x54, 0x49, 0x46, 0x54, 0x52, /* "WHATIFTR" */
    0x01, 0x00, 0x00, 0x00,                         /* version 1 */
    0x03, 0x00, 0x00, 0x00,                         /* stream 3 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* flags */
    0x2b, 0x00, 0x00, 0x00,                         /* payload: 43 bytes */
    0xed, 0xc3, 0x3d, 0x0b,                         /* CRC 0x0b3dc3ed */
    0x06, 0x01, 0x6b, 0x01, 0x76,                   /* META "k" "v" */
    0x05, 0x06, 0x03, 0x66, 0x6f, 0x72,             /* LOC 5 "for" */
    0x05, 0x61, 0x2e, 0x63, 0x3a, 0x33,             /*   "a.c:3" */
    0x01, 0x02, 0x01, 0x00, 0x02, 0x06, 0x07, 0x00, /* BEGIN 1 .. g7 owner 0 */
    0x01, 0x80, 0x40, 0x01,                         /*   1 dep: 0x1000 in */
    0x02, 0x02, 0x00, 0x64, 0x06, 0x00,             /* WORK 1 0 100 5 0 */
    0x03, 0x00, 0x01, 0x00,                         /* END 1 1 none */
    0x03, 0x01, 0x01, 0x01,                         /* END 0 1 loc 0 */
};

static void test_version1(void)
{
    trace_rec t[8];
    tiny_records(t);
    t[3].flags = 0;
    t[4] = t[5];
    t[5] = t[6];
    char why[300] = "";
    trace_reader *r = trace_reader_open_mem(tiny_image_v1,
                                            sizeof tiny_image_v1, "v1");
    CHECK(r && read_expect(r, t, 6, why, sizeof why),
          "a version 1 trace still decodes: %s", why);
    trace_reader_close(r);
    /* a NOTE in a version 1 file is an unknown record */
    uint8_t b[24 + 8 + 9];
    memcpy(b, tiny_image_v1, 24);
    static const uint8_t pay[9] = {0x06, 0x01, 0x6b, 0x01, 0x76, /* META */
                                   0x08, 0x06, 0x01, 0x02};      /* NOTE */
    memcpy(b + 32, pay, sizeof pay);
    b[24] = sizeof pay;
    b[25] = b[26] = b[27] = 0;
    uint32_t crc = ref_crc(pay, sizeof pay);
    for (int i = 0; i < 4; i++)
        b[28 + i] = (uint8_t)(crc >> (8 * i));
    r = trace_reader_open_mem(b, sizeof b, "v1note");
    int last;
    size_t cnt = drain(r, &last);
    const char *e = trace_reader_error(r);
    CHECK(last == -1 && cnt == 1 &&
              e && strcmp(e, "v1note: byte 37: unknown record type 8") == 0,
          "version 1 has no NOTE record (%zu, %s)", cnt, e ? e : "-");
    trace_reader_close(r);
}

/* Leaves (version 4), the second example of docs/trace-format.md: a
 * task of one fragment in the short form, an undeferred one (S) of a
 * what-if region in the long form. */
static const uint8_t leaf_image[65] = {
    0x57, 0x48, 0x41, 0x54, 0x49, 0x46, 0x54, 0x52, /* "WHATIFTR" */
    0x08, 0x00, 0x00, 0x00,                         /* version 8 */
    0x03, 0x00, 0x00, 0x00,                         /* stream 3 */
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, /* flags */
    0x21, 0x00, 0x00, 0x00,                         /* payload: 33 bytes */
    0xa9, 0xad, 0xd6, 0xf8,                         /* CRC 0xf8d6ada9 */
    0x05, 0x06, 0x04, 0x74, 0x61, 0x73, 0x6b,       /* LOC 5 "task" */
    0x05, 0x61, 0x2e, 0x63, 0x3a, 0x37,             /*   "a.c:7" */
    0x0e, 0x00, 0x00, 0x06, 0x64,                   /* LEAF_P0 0 0 5 100 */
    0x0d, 0x00, 0x01, 0x01, 0x06, 0x00,             /* LEAF 0 1 S 5 g0 */
    0x01, 0x1e, 0x06, 0x02, 0x00,                   /*   1: 30 5 r2 0 */
    0x03, 0x00, 0x02, 0x01,                         /* END 0 2 loc 0 */
};

static void test_leaf_image(void)
{
    trace_rec t[4] = {
        r_loc(5, "task", "a.c:7"),
        r_leaf(0, 0, OSPG_P, 5, 0, 0, 1, 100, 5, 0, 0),
        r_leaf(0, 1, OSPG_S, 5, 0, 0, 1, 30, 5, 2, 0),
        r_end(0, 2, 0),
    };
    char p[128], why[300] = "";
    path_of(p, sizeof p, "leaf.tr");
    int fails;
    size_t bytes = write_file(p, 3, 0, t, 4, &fails);
    size_t n;
    uint8_t *b = slurp(p, &n);
    CHECK(fails == 0 && bytes == sizeof leaf_image && b &&
              n == sizeof leaf_image && memcmp(b, leaf_image, n) == 0,
          "known leaf trace has its known 65-byte image (got %zu bytes)", n);
    free(b);
    CHECK(ref_crc(leaf_image + 32, 33) == rd32(leaf_image + 28),
          "leaf image CRC agrees with the reference CRC");
    trace_reader *r = trace_reader_open_mem(leaf_image, sizeof leaf_image,
                                            "leaf");
    CHECK(r && read_expect(r, t, 4, why, sizeof why),
          "leaf image decodes: %s", why);
    trace_reader_close(r);
    /* leaves are version 4's: in a version 3 file they are unknown */
    uint8_t v3[sizeof leaf_image];
    memcpy(v3, leaf_image, sizeof v3);
    v3[8] = 3;
    r = trace_reader_open_mem(v3, sizeof v3, "v3leaf");
    int last;
    size_t got = drain(r, &last);
    const char *e = trace_reader_error(r);
    CHECK(last == -1 && got == 1 && e &&
              !strcmp(e, "v3leaf: byte 45: unknown record type 14"),
          "a leaf in a version 3 file is refused (%zu, %s)", got,
          e ? e : "-");
    trace_reader_close(r);
    /* and a version 3 file of the other records still reads */
    trace_rec tiny[8];
    size_t nt = tiny_records(tiny);
    uint8_t old[sizeof tiny_image];
    memcpy(old, tiny_image, sizeof old);
    old[8] = 3;
    r = trace_reader_open_mem(old, sizeof old, "v3");
    CHECK(r && read_expect(r, tiny, nt, why, sizeof why),
          "a version 3 trace still decodes: %s", why);
    trace_reader_close(r);
}

/* TIME records (version 5): the grain times of the LEAF or END after
 * them, kept to 32 ns, across blocks, and refused anywhere else. */
/* The error a reader of the file at p stops with when its header claims
 * version v (name: the reader's name for it): "" when none, "unreadable"
 * when the file cannot be read. */
static void error_as_version(const char *p, uint8_t v, const char *name,
                             char *out, size_t len)
{
    size_t n;
    uint8_t *b = slurp(p, &n);
    snprintf(out, len, "unreadable");
    if (b && n > 8) {
        int k;
        as_version(b, n, v);
        trace_reader *r = trace_reader_open_mem(b, n, name);
        drain(r, &k);
        const char *e = trace_reader_error(r);
        snprintf(out, len, "%s", e ? e : "");
        trace_reader_close(r);
    }
    free(b);
}

static void test_time_records(void)
{
    char p[128];
    path_of(p, sizeof p, "time.tr");
    /* a small block size: the records cross many blocks */
    trace_writer *w = trace_writer_open(p, 1, 64, 0);
    enum { N = 200 };
    uint64_t base = 123456789012345ull, s[N], e[N];
    int ok = w != NULL;
    for (int i = 0; w && i < N; i++) {
        /* nested (a parent ends after its children began), out of order
         * (a static chunk rebuilt after a later task), equal ends */
        s[i] = base + (uint64_t)i * 1000 - (i % 7) * 5000;
        e[i] = s[i] + (uint64_t)(i % 5) * 777 + (i % 3 ? 0 : 99999);
        ok &= trace_write_begin(w, (uint64_t)i + 1, 0, (uint64_t)i, OSPG_P,
                                1, 0, 0, NULL, 0) == 0;
        ok &= trace_write_time(w, s[i], e[i]) == 0;
        if (i % 2) {
            ok &= trace_write_end(w, (uint64_t)i + 1, 0, OSPG_LOC_NONE) == 0;
        } else {
            ospg_leaf_work lw = {5, 1, 0, 0};
            ok &= trace_write_end(w, (uint64_t)i + 1, 0, 2) == 0;
            ok &= trace_write_time(w, s[i], e[i]) == 0;
            ok &= trace_write_leaf(w, (uint64_t)i + 1, 0, OSPG_P, 1, 0, 0,
                                   &lw) == 0;
        }
    }
    ok &= w && trace_writer_close(w) == 0;
    CHECK(ok, "timed records written");
    trace_reader *r = trace_reader_open(p);
    trace_rec rec;
    int k, bad = 0, ends = 0, leaves = 0, untimed = 0;
    while (r && (k = trace_reader_next(r, &rec)) == 1) {
        if (rec.type == TRACE_BEGIN) {
            untimed += rec.timed;
            continue;
        }
        int i = (int)rec.id - 1;
        if (rec.type == TRACE_LEAF) {
            i = (int)rec.parent - 1;
            leaves++;
        } else {
            ends++;
        }
        if (i < 0 || i >= N || !rec.timed ||
            rec.t_start != (s[i] >> TRACE_TIME_SHIFT) << TRACE_TIME_SHIFT ||
            rec.t_end != (e[i] >> TRACE_TIME_SHIFT) << TRACE_TIME_SHIFT)
            bad++;
    }
    CHECK(r && k == 0 && bad == 0 && ends == N && leaves == N / 2 &&
              untimed == 0,
          "TIME records read back to 32 ns: %d bad, %d ends, %d leaves (%s)",
          bad, ends, leaves, r ? trace_reader_error(r) : "no reader");
    trace_reader_close(r);
    /* a TIME split from its LEAF by a block's end: long grouped leaves
     * in 64-byte blocks */
    path_of(p, sizeof p, "time-split.tr");
    w = trace_writer_open(p, 1, 64, 0);
    ok = w != NULL;
    for (int i = 0; w && i < 50; i++) {
        uint64_t big = 0x7000000000000000ull + (uint64_t)i * 0x10000000001ull;
        ospg_leaf_work lw = {big, 3, 9, 0};
        /* 26 bytes first: the TIME fits, its 45-byte leaf does not */
        ok &= trace_write_work(w, 1, 0, big, 2, 0, 0) == 0;
        ok &= trace_write_work(w, 1, 1, big, 2, 0, 0) == 0;
        ok &= trace_write_time(w, s[i], e[i]) == 0;
        ok &= trace_write_leaf(w, big, big >> 3, OSPG_P, 1, big >> 1, big,
                               &lw) == 0;
    }
    ok &= w && trace_writer_close(w) == 0;
    r = trace_reader_open(p);
    int nleaf = 0;
    bad = 0;
    while (ok && r && (k = trace_reader_next(r, &rec)) == 1) {
        if (rec.type == TRACE_WORK) {
            bad += rec.timed;
            continue;
        }
        bad += rec.type != TRACE_LEAF || !rec.timed ||
               rec.t_start != (s[nleaf] >> TRACE_TIME_SHIFT)
                                  << TRACE_TIME_SHIFT ||
               rec.t_end != (e[nleaf] >> TRACE_TIME_SHIFT)
                                << TRACE_TIME_SHIFT;
        nleaf++;
    }
    CHECK(ok && r && k == 0 && nleaf == 50 && bad == 0,
          "TIMEs split from their leaves by a block's end: %d leaves, %d "
          "bad (%s)",
          nleaf, bad, r ? trace_reader_error(r) : "no reader");
    trace_reader_close(r);

    /* skimming the graph records skips the TIMEs with them */
    r = trace_reader_open(p);
    trace_reader_skim(r, 1);
    size_t got = drain(r, &k);
    CHECK(r && k == 0 && got == 0, "skimmed: %zu records, last %d", got, k);
    trace_reader_close(r);

    /* a TIME before a BEGIN, and one in a version 4 file */
    path_of(p, sizeof p, "time-bad.tr");
    w = trace_writer_open(p, 1, 0, 0);
    CHECK(trace_write_time(w, 10, 9) == -1, "a TIME that ends before it "
                                            "starts is refused");
    trace_write_time(w, 100, 200);
    trace_write_begin(w, 1, 0, 0, OSPG_P, 1, 0, 0, NULL, 0);
    trace_writer_close(w);
    r = trace_reader_open(p);
    drain(r, &k);
    const char *err = trace_reader_error(r);
    CHECK(k == -1 && err && strstr(err, "byte 32: a TIME record must come "
                                        "just before a LEAF or END record"),
          "a TIME before a BEGIN: %s", err ? err : "-");
    trace_reader_close(r);
    r = trace_reader_open(p); /* the scan pass leaves it to the full read:
                                * its block holds graph records only */
    trace_reader_skim(r, 1);
    drain(r, &k);
    err = trace_reader_error(r);
    CHECK(k == 0 && !err, "a TIME before a BEGIN, skimmed: its block is "
                          "passed unread (%s)", err ? err : "-");
    trace_reader_close(r);
    size_t n6; /* without the mark (version 6) the scan pass checks it */
    uint8_t *b6 = slurp(p, &n6);
    if (b6)
        as_version(b6, n6, 6);
    r = b6 ? trace_reader_open_mem(b6, n6, "v6time") : NULL;
    trace_reader_skim(r, 1);
    drain(r, &k);
    err = trace_reader_error(r);
    CHECK(k == -1 && err && !strcmp(err, "v6time: byte 32: a TIME record "
                                         "must come just before a LEAF or "
                                         "END record"),
          "a TIME before a BEGIN in a version 6 file, skimmed: %s",
          err ? err : "-");
    trace_reader_close(r);
    free(b6);
    char as4[256];
    error_as_version(p, 4, "v4time", as4, sizeof as4);
    CHECK(!strcmp(as4, "v4time: byte 32: unknown record type 16"),
          "a TIME in a version 4 file: %s", as4);
}

/* The blocks of a trace file written by the writer: offsets of their
 * headers, at most max; returns how many. */
static size_t block_offsets(const uint8_t *b, size_t n, size_t *off,
                            size_t max)
{
    size_t k = 0, at = 24;
    while (k < max && at + 8 <= n) {
        uint32_t len = ((uint32_t)b[at] | (uint32_t)b[at + 1] << 8 |
                        (uint32_t)b[at + 2] << 16 |
                        (uint32_t)b[at + 3] << 24) & 0x7fffffffu;
        if (at + 8 + len > n)
            break;
        off[k++] = at;
        at += 8 + len;
    }
    return k;
}

/* Timed records read from the file header of b followed by the blocks
 * [from, to) of b (each block decodes alone: its deltas start afresh). */
static size_t timed_in(const uint8_t *b, size_t n, const size_t *off,
                       size_t nblk, size_t from, size_t to)
{
    size_t end = to < nblk ? off[to] : n;
    size_t len = 24 + (end - off[from]);
    uint8_t *one = malloc(len);
    if (!one)
        return 0;
    memcpy(one, b, 24);
    memcpy(one + 24, b + off[from], end - off[from]);
    trace_reader *r = trace_reader_open_mem(one, len, "blocks");
    trace_rec rec;
    size_t timed = 0;
    while (r && trace_reader_next(r, &rec) == 1)
        timed += rec.timed;
    trace_reader_close(r);
    free(one);
    return timed;
}

/* A TIME at the end of a block of names whose LEAF opens a block of graph
 * records only: the names pass skips that block, and once took the next
 * record it read for the TIME's (`whatif analyze` refused such traces, and
 * `whatif run` lost the names after it).  The writer now keeps the two in
 * one block wherever a block can hold both; the reader passes old ones. */
static void test_time_block_edge(void)
{
    /* An old trace's three blocks, spliced from three files: names then a
     * TIME; the LEAF (graph records only); a name. */
    char pa[128], pb[128], pc[128];
    path_of(pa, sizeof pa, "edge-a.tr");
    path_of(pb, sizeof pb, "edge-b.tr");
    path_of(pc, sizeof pc, "edge-c.tr");
    ospg_leaf_work lw = {12345, 3, 0, 0};
    trace_writer *w = trace_writer_open(pa, 1, 0, 0);
    int ok = w && trace_write_loc(w, 7, "task", "x.c:1") == 0 &&
             trace_write_work(w, 1, 0, 100, 2, 0, 0) == 0 &&
             trace_write_time(w, 1000, 2000) == 0;
    ok &= w && trace_writer_close(w) == 0;
    w = trace_writer_open(pb, 1, 0, 0);
    ok &= w && trace_write_leaf(w, 1, 1, OSPG_P, 3, 0, 0, &lw) == 0 &&
          trace_write_work(w, 1, 2, 100, 2, 0, 0) == 0;
    ok &= w && trace_writer_close(w) == 0;
    w = trace_writer_open(pc, 1, 0, 0);
    ok &= w && trace_write_loc(w, 8, "task", "x.c:2") == 0;
    ok &= w && trace_writer_close(w) == 0;
    size_t na, nb, nc;
    uint8_t *a = slurp(pa, &na), *b = slurp(pb, &nb), *c = slurp(pc, &nc);
    uint8_t *all = a && b && c ? malloc(na + nb + nc) : NULL;
    size_t n = 0;
    if (all) {
        memcpy(all, a, na);
        memcpy(all + na, b + 24, nb - 24);
        memcpy(all + na + nb - 24, c + 24, nc - 24);
        n = na + nb + nc - 48;
    }
    trace_reader *r = all ? trace_reader_open_mem(all, n, "spliced") : NULL;
    trace_reader_skim(r, 1);
    int k;
    size_t got = drain(r, &k);
    CHECK(ok && r && k == 0 && got == 2,
          "a TIME that ends a block of names, its leaf in a block passed "
          "unread: %zu names read (%s)", got,
          r && trace_reader_error(r) ? trace_reader_error(r) : "-");
    trace_reader_close(r);
    r = all ? trace_reader_open_mem(all, n, "spliced") : NULL;
    trace_rec rec;
    size_t timed = 0;
    while (r && (k = trace_reader_next(r, &rec)) == 1)
        timed += rec.type == TRACE_LEAF && rec.timed;
    CHECK(r && k == 0 && timed == 1, "read whole, the leaf takes the TIME "
          "of the block before (%zu)", timed);
    trace_reader_close(r);
    free(a);
    free(b);
    free(c);
    free(all);

    /* Blocks that can hold both: no TIME is parted from its record,
     * whatever fills the blocks (a LOC now and then, so that blocks of
     * names and of graph records alternate), and the names pass reads
     * every name. */
    for (size_t bsize = 256; bsize <= 4096; bsize *= 2) {
        char p[128];
        path_of(p, sizeof p, "time-fill.tr");
        w = trace_writer_open(p, 1, bsize, 0);
        ok = w != NULL;
        size_t nloc = 0;
        for (uint64_t i = 0; ok && i < 4000; i++) {
            ospg_leaf_work big = {i << 40, 3, (uint32_t)i % 5, 0};
            if (i % 37 == 0)
                ok &= trace_write_loc(w, (uint32_t)(10 + nloc++), "task",
                                      "x.c:3") == 0;
            ok &= trace_write_work(w, 1, i, i * 12345, 2, 0, 0) == 0;
            ok &= trace_write_time(w, i * 1000, i * 1000 + 500) == 0;
            ok &= (i % 3 ? trace_write_leaf(w, i << 30, i, OSPG_P, 1,
                                            i % 2 ? i : 0, i << 20, &big)
                         : trace_write_end(w, i << 30, i, 4)) == 0;
        }
        ok &= w && trace_writer_close(w) == 0;
        r = trace_reader_open(p);
        trace_reader_skim(r, 1);
        got = drain(r, &k);
        CHECK(ok && r && k == 0 && got == nloc,
              "bsize %zu: %zu of %zu names through the names pass (%s)",
              bsize, got, nloc,
              r && trace_reader_error(r) ? trace_reader_error(r) : "-");
        trace_reader_close(r);
        /* each block read alone keeps all its timings */
        size_t len, off[4096];
        uint8_t *img = slurp(p, &len);
        size_t nblk = img ? block_offsets(img, len, off, 4096) : 0;
        size_t whole = nblk ? timed_in(img, len, off, nblk, 0, nblk) : 0,
               apart = 0;
        for (size_t i = 0; i < nblk; i++)
            apart += timed_in(img, len, off, nblk, i, i + 1);
        CHECK(nblk > 2 && whole == 4000 && apart == whole,
              "bsize %zu: %zu blocks, %zu timed records, %zu with their "
              "TIME in their own block", bsize, nblk, whole, apart);
        free(img);
    }
}

/* WAIT records: intervals of their own, coded against the same previous
 * end as TIMEs, returned as records (skimming too); none in version 5,
 * none between a TIME and its LEAF or END. */
static void test_wait_records(void)
{
    char p[128];
    path_of(p, sizeof p, "wait.tr");
    trace_writer *w = trace_writer_open(p, 1, 64, 0);
    enum { N = 120 };
    uint64_t base = 987654321098765ull, s[N], e[N];
    int ok = w != NULL;
    for (int i = 0; w && i < N; i++) {
        s[i] = base + (uint64_t)i * 3000 - (i % 5) * 7000;
        e[i] = s[i] + 2000 + (uint64_t)(i % 4) * 999;
        ok &= trace_write_wait(w, s[i], e[i]) == 0;
        /* a timed leaf between two waits, on the same time chain */
        ospg_leaf_work lw = {7, 1, 0, 0};
        ok &= trace_write_time(w, e[i], e[i] + 500) == 0;
        ok &= trace_write_leaf(w, 0, (uint64_t)i, OSPG_P, 1, 0, 0, &lw) == 0;
    }
    ok &= w && trace_writer_close(w) == 0;
    CHECK(ok, "waits written");
    trace_reader *r = trace_reader_open(p);
    trace_rec rec;
    int k, bad = 0, waits = 0, leaves = 0;
    while (r && (k = trace_reader_next(r, &rec)) == 1) {
        if (rec.type == TRACE_WAIT) {
            int i = waits++;
            bad += i >= N || rec.timed ||
                   rec.t_start != (s[i] >> TRACE_TIME_SHIFT)
                                      << TRACE_TIME_SHIFT ||
                   rec.t_end != (e[i] >> TRACE_TIME_SHIFT) << TRACE_TIME_SHIFT;
        } else if (rec.type == TRACE_LEAF) {
            int i = leaves++;
            bad += !rec.timed ||
                   rec.t_start != (e[i] >> TRACE_TIME_SHIFT)
                                      << TRACE_TIME_SHIFT ||
                   rec.t_end != ((e[i] + 500) >> TRACE_TIME_SHIFT)
                                    << TRACE_TIME_SHIFT;
        } else {
            bad++;
        }
    }
    CHECK(r && k == 0 && bad == 0 && waits == N && leaves == N,
          "WAITs read back to 32 ns beside TIMEs: %d bad, %d waits, %d "
          "leaves (%s)",
          bad, waits, leaves, r ? trace_reader_error(r) : "no reader");
    trace_reader_close(r);
    /* skimmed: no record, yet the waits' ends are read, or the TIMEs
     * after them would count from the wrong end and fail */
    r = trace_reader_open(p);
    trace_reader_skim(r, 1);
    size_t got = drain(r, &k);
    CHECK(r && k == 0 && got == 0, "skimmed: %zu records, last %d (%s)", got,
          k, r ? trace_reader_error(r) : "-");
    trace_reader_close(r);
    /* a grain that ended long before the wait written before it: its TIME
     * counts back from the wait's end, skimmed too */
    path_of(p, sizeof p, "wait-back.tr");
    w = trace_writer_open(p, 1, 0, 0);
    ospg_leaf_work lw0 = {7, 1, 0, 0};
    ok = w && trace_write_wait(w, 5000000, 9000000) == 0 &&
         trace_write_time(w, 1000, 2000) == 0 &&
         trace_write_leaf(w, 0, 0, OSPG_P, 1, 0, 0, &lw0) == 0;
    ok &= w && trace_writer_close(w) == 0;
    r = trace_reader_open(p);
    got = drain(r, &k);
    CHECK(ok && r && k == 0 && got == 2, "a TIME before its WAIT: %zu "
          "records (%s)", got, r ? trace_reader_error(r) : "-");
    trace_reader_close(r);
    r = trace_reader_open(p);
    trace_reader_skim(r, 1);
    got = drain(r, &k);
    CHECK(r && k == 0 && got == 0, "a TIME before its WAIT, skimmed: %zu "
          "records (%s)", got, r ? trace_reader_error(r) : "-");
    trace_reader_close(r);

    /* a WAIT between a TIME and its END, and one in a version 5 file */
    path_of(p, sizeof p, "wait-bad.tr");
    w = trace_writer_open(p, 1, 0, 0);
    CHECK(trace_write_wait(w, 10, 9) == -1, "a WAIT that ends before it "
                                            "starts is refused");
    trace_write_time(w, 100, 200);
    trace_write_wait(w, 100, 200);
    trace_write_end(w, 1, 0, OSPG_LOC_NONE);
    trace_writer_close(w);
    r = trace_reader_open(p);
    drain(r, &k);
    const char *err = trace_reader_error(r);
    CHECK(k == -1 && err && strstr(err, "byte 32: a TIME record must come "
                                        "just before a LEAF or END record"),
          "a WAIT after a TIME: %s", err ? err : "-");
    trace_reader_close(r);
    char as5[256];
    error_as_version(p, 5, "v5wait", as5, sizeof as5);
    CHECK(!strcmp(as5, "v5wait: byte 35: unknown record type 17"),
          "a WAIT in a version 5 file: %s", as5);
}

static void test_header_and_image(void)
{
    char p[128];
    path_of(p, sizeof p, "empty.tr");
    trace_writer *w = trace_writer_open(p, 0xa1b2c3d4u, 0, 0);
    CHECK(w && trace_writer_bytes(w) == 24, "header is 24 bytes");
    CHECK(trace_writer_close(w) == 0, "close of empty trace");
    size_t n;
    uint8_t *b = slurp(p, &n);
    static const uint8_t hdr[24] = {'W', 'H', 'A', 'T', 'I', 'F', 'T', 'R',
                                    8,   0,   0,   0,   0xd4, 0xc3, 0xb2, 0xa1};
    CHECK(b && n == 24 && memcmp(b, hdr, 24) == 0,
          "empty trace is exactly the 24-byte header (got %zu bytes)", n);
    free(b);
    trace_reader *r = trace_reader_open(p);
    int last;
    CHECK(r && !trace_reader_error(r) &&
              trace_reader_stream(r) == 0xa1b2c3d4u && drain(r, &last) == 0 &&
              last == 0,
          "header-only trace reads as a clean empty stream");
    trace_reader_close(r);

    /* the tripwire: this image is the example in docs/trace-format.md */
    trace_rec t[8];
    size_t nt = tiny_records(t);
    path_of(p, sizeof p, "tiny.tr");
    int fails;
    size_t bytes = write_file(p, 3, 0, t, nt, &fails);
    b = slurp(p, &n);
    CHECK(fails == 0 && bytes == sizeof tiny_image && b &&
              n == sizeof tiny_image && memcmp(b, tiny_image, n) == 0,
          "known tiny trace has its known 79-byte image (got %zu bytes)", n);
    if (b && n == sizeof tiny_image)
        for (size_t i = 0; i < n; i++)
            if (b[i] != tiny_image[i]) {
                fprintf(stderr, "  first difference at byte %zu: %02x vs %02x\n",
                        i, b[i], tiny_image[i]);
                break;
            }
    free(b);
    CHECK(ref_crc(tiny_image + 32, 47) == rd32(tiny_image + 28),
          "tiny image CRC agrees with the reference CRC");

    char why[300] = "";
    r = trace_reader_open_mem(tiny_image, sizeof tiny_image, "tiny");
    CHECK(r && trace_reader_stream(r) == 3 &&
              read_expect(r, t, nt, why, sizeof why),
          "tiny image decodes: %s", why);
    trace_reader_close(r);
    r = trace_reader_open_mem(tiny_image_v2, sizeof tiny_image_v2, "tiny2");
    CHECK(r && read_expect(r, t, nt, why, sizeof why),
          "the version 2 image of the same records decodes: %s", why);
    trace_reader_close(r);
    /* short forms are version 3's: in a version 2 file they are unknown */
    uint8_t v2[sizeof tiny_image];
    memcpy(v2, tiny_image, sizeof v2);
    v2[8] = 2;
    r = trace_reader_open_mem(v2, sizeof v2, "v2short");
    size_t got = drain(r, &last);
    const char *e2 = trace_reader_error(r);
    CHECK(last == -1 && got == 5 && e2 &&
              !strcmp(e2, "v2short: byte 72: unknown record type 12"),
          "a short form in a version 2 file is refused (%zu, %s)", got,
          e2 ? e2 : "-");
    trace_reader_close(r);

    /* record offsets, as the reader reports them */
    static const uint64_t offs[] = {32, 37, 49, 61, 68, 72, 75, 79};
    r = trace_reader_open_mem(tiny_image, sizeof tiny_image, "tiny");
    int ok = trace_reader_offset(r) == 24; /* before the first block */
    trace_rec rec;
    for (size_t i = 0; i < nt; i++) {
        ok &= trace_reader_next(r, &rec) == 1;
        ok &= trace_reader_offset(r) == offs[i + 1];
    }
    CHECK(ok, "trace_reader_offset walks the record starts");
    trace_reader_close(r);
}

/* Walks the blocks of a file image independently of trace.c: checks each
 * CRC with the reference CRC, that no block exceeds the block size unless it
 * holds a single record, and that every block alone (behind a header)
 * decodes to the right stretch of records. */
static int check_blocks(const uint8_t *b, size_t n, size_t bsize,
                        const trace_rec *exp, size_t nexp, size_t *nblocks,
                        char *why, size_t whyn)
{
    size_t off = 24, done = 0;
    *nblocks = 0;
    uint8_t *img = malloc(24 + 8 + TRACE_BLOCK_MAX);
    memcpy(img, b, 24);
    int ok = 1;
    while (off < n && ok) {
        if (n - off < 8) {
            snprintf(why, whyn, "stray bytes at %zu", off);
            ok = 0;
            break;
        }
        uint32_t len = blk_len(b + off), crc = blk_crc(b + off);
        if (len == 0 || len > n - off - 8 || ref_crc(b + off + 8, len) != crc) {
            snprintf(why, whyn, "bad block at %zu", off);
            ok = 0;
            break;
        }
        memcpy(img + 24, b + off, 8 + len);
        trace_reader *r = trace_reader_open_mem(img, 32 + len, "block");
        int last;
        size_t k = drain(r, &last);
        trace_reader_close(r);
        if (last != 0 || k == 0 || done + k > nexp) {
            snprintf(why, whyn, "block at %zu alone: %zu records, last %d", off,
                     k, last);
            ok = 0;
            break;
        }
        /* marked graph-only exactly when it holds no name record */
        int names = 0;
        for (size_t i = done; i < done + k; i++)
            names |= exp[i].type == TRACE_LOC || exp[i].type == TRACE_META ||
                     exp[i].type == TRACE_REGION || exp[i].type == TRACE_NOTE;
        if (blk_graph_only(b + off) == names) {
            snprintf(why, whyn, "block at %zu: graph-only mark %d, names %d",
                     off, blk_graph_only(b + off), names);
            ok = 0;
            break;
        }
        if (len > bsize && k != 1) {
            snprintf(why, whyn, "block at %zu has %u bytes > %zu and %zu records",
                     off, len, bsize, k);
            ok = 0;
            break;
        }
        r = trace_reader_open_mem(img, 32 + len, "block");
        char w2[200];
        if (!read_expect(r, exp + done, k, w2, sizeof w2)) {
            snprintf(why, whyn, "block at %zu alone: %s", off, w2);
            ok = 0;
        }
        trace_reader_close(r);
        done += k;
        off += 8 + len;
        (*nblocks)++;
    }
    if (ok && done != nexp) {
        snprintf(why, whyn, "blocks hold %zu records, want %zu", done, nexp);
        ok = 0;
    }
    free(img);
    return ok;
}

/* REGION records: written and read back field by field. */
static void test_region_records(void)
{
    char path[128];
    path_of(path, sizeof path, "region.tr");
    trace_writer *w = trace_writer_open(path, 0, 64, 0);
    check(w != NULL, __LINE__, "open");
    if (!w)
        return;
    struct { uint32_t id, parent, loc; uint64_t f; } in[] = {
        {1, 0, 5, 0}, {2, 1, 6, 4000}, {UINT32_MAX, 2, OSPG_LOC_NONE,
                                         UINT64_MAX},
    };
    for (size_t i = 0; i < 3; i++)
        check(trace_write_region(w, in[i].id, in[i].parent, in[i].loc,
                                 in[i].f) == 0, __LINE__, "write %zu", i);
    check(trace_write_region(w, 0, 0, 1, 0) == -1, __LINE__,
          "region id 0 refused");
    trace_writer_close(w);
    trace_reader *r = trace_reader_open(path);
    trace_rec rec;
    for (size_t i = 0; i < 3; i++) {
        int rc = trace_reader_next(r, &rec);
        check(rc == 1 && rec.type == TRACE_REGION &&
                  rec.region_id == in[i].id &&
                  rec.region_parent == in[i].parent && rec.loc == in[i].loc &&
                  rec.factor_milli == in[i].f,
              __LINE__, "region %zu read back", i);
    }
    check(trace_reader_next(r, &rec) == 0, __LINE__, "clean end");
    trace_reader_close(r);
}

static void test_round_trip(void)
{
    size_t cap = 3000;
    trace_rec *recs = malloc(cap * sizeof *recs);
    size_t n = build_edge_set(recs, cap);
    static const size_t sizes[] = {0, 1, 2, 7, 9, 16, 33, 64, 100, 1000, 4096,
                                   65536, TRACE_BLOCK_MAX, TRACE_BLOCK_MAX * 2};
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        size_t bsize = sizes[s];
        size_t eff = bsize == 0                 ? 256u << 10
                     : bsize > TRACE_BLOCK_MAX ? TRACE_BLOCK_MAX
                                               : bsize;
        char p[128];
        snprintf(p, sizeof p, "%s/rt%zu.tr", tmpdir, bsize);
        int fails;
        size_t bytes = write_file(p, (uint32_t)s, bsize, recs, n, &fails);
        CHECK(fails == 0, "bsize %zu: %d writer failures", bsize, fails);

        char why[300] = "";
        trace_reader *r = trace_reader_open(p);
        CHECK(r && !trace_reader_error(r) &&
                  trace_reader_stream(r) == (uint32_t)s &&
                  read_expect(r, recs, n, why, sizeof why),
              "bsize %zu: file round trip of %zu records: %s", bsize, n, why);
        trace_reader_close(r);

        size_t len;
        uint8_t *b = slurp(p, &len);
        CHECK(b && len == bytes, "bsize %zu: bytes counted %zu, file %zu",
              bsize, bytes, len);
        r = trace_reader_open_mem(b, len, "mem");
        CHECK(r && read_expect(r, recs, n, why, sizeof why),
              "bsize %zu: memory round trip: %s", bsize, why);
        trace_reader_close(r);
        /* skimming hands out exactly the records that are not graph
         * records, in order */
        trace_rec *names = malloc(n * sizeof *names);
        size_t nn = 0;
        for (size_t i = 0; i < n; i++)
            if (recs[i].type != TRACE_BEGIN && recs[i].type != TRACE_WORK &&
                recs[i].type != TRACE_END && recs[i].type != TRACE_LEAF)
                names[nn++] = recs[i];
        r = trace_reader_open_mem(b, len, "mem");
        trace_reader_skim(r, 1);
        CHECK(r && nn > 0 && nn < n &&
                  read_expect(r, names, nn, why, sizeof why),
              "bsize %zu: skimming gives the %zu name records: %s", bsize,
              nn, why);
        trace_reader_close(r);
        free(names);
        size_t nblocks = 0;
        CHECK(b && check_blocks(b, len, eff, recs, n, &nblocks, why, sizeof why),
              "bsize %zu: blocks: %s", bsize, why);
        if (bsize && bsize <= 9)
            CHECK(nblocks > n / 2, "bsize %zu: %zu blocks for %zu records",
                  bsize, nblocks, n);
        free(b);
    }
    free(recs);
    pool_free();
}

/* Block packing is greedy and exact: a record goes in if it fits to the
 * byte, and the id deltas restart in each block. */
static void test_block_filling(void)
{
    char p[128];
    path_of(p, sizeof p, "fill.tr");
    trace_rec e = r_end(0, 0, 0); /* 03 00 00 01: 4 bytes */
    trace_rec seven[7] = {e, e, e, e, e, e, e};
    int fails;
    size_t bytes = write_file(p, 0, 12, seven, 7, &fails);
    size_t n;
    uint8_t *b = slurp(p, &n);
    CHECK(fails == 0 && bytes == 24 + 8 + 12 + 8 + 12 + 8 + 4 && b &&
              n == bytes && blk_len(b + 24) == 12 && blk_len(b + 44) == 12 &&
              blk_len(b + 64) == 4,
          "three 4-byte records fill a 12-byte block exactly (%zu bytes)", n);
    free(b);

    bytes = write_file(p, 0, 11, seven, 7, &fails);
    b = slurp(p, &n);
    CHECK(fails == 0 && bytes == 24 + 4 * 8 + 8 + 8 + 8 + 4 && b &&
              blk_len(b + 24) == 8 && blk_len(b + 40) == 8 && blk_len(b + 56) == 8 &&
              blk_len(b + 72) == 4,
          "one byte short: two records per block (%zu bytes)", n);
    free(b);

    /* a record exactly the block size goes in place; one byte more and it
     * is written alone by the streaming path: the bytes must not differ */
    trace_rec m = r_meta("ab", "cd"); /* 7 bytes */
    size_t n7, n6;
    write_file(p, 0, 7, &m, 1, &fails);
    uint8_t *b7 = slurp(p, &n7);
    int f2;
    write_file(p, 0, 6, &m, 1, &f2);
    uint8_t *b6 = slurp(p, &n6);
    CHECK(fails == 0 && f2 == 0 && b7 && b6 && n7 == 24 + 8 + 7 &&
              n6 == n7 && memcmp(b6, b7, n7) == 0,
          "record of exactly the block size vs one over: same bytes");
    free(b7);
    free(b6);

    ospg_dep *d = malloc(5000 * sizeof *d);
    for (size_t i = 0; i < 5000; i++)
        d[i] = (ospg_dep){rnd(), (uint32_t)(1 + i % 5)};
    trace_rec big = r_begin(77, 3, 2, OSPG_P, 9, 4, 3, d, 5000);
    uint8_t *imgs[4];
    size_t lens[4];
    static const size_t bs[4] = {0, 1, 100, 4096};
    int ok = 1;
    for (int i = 0; i < 4; i++) {
        write_file(p, 0, bs[i], &big, 1, &fails);
        ok &= fails == 0;
        imgs[i] = slurp(p, &lens[i]);
    }
    for (int i = 1; i < 4; i++)
        ok &= imgs[i] && imgs[0] && lens[i] == lens[0] &&
              memcmp(imgs[i], imgs[0], lens[0]) == 0;
    CHECK(ok, "a 5000-dep record streamed through 1/100/4096-byte buffers "
              "equals the in-place encoding");
    for (int i = 0; i < 4; i++)
        free(imgs[i]);
    free(d);

    /* ids restart from 0 in each block: both blocks carry the same bytes */
    trace_rec two[2] = {r_end(1000000, 2, 3), r_end(1000000, 2, 3)};
    write_file(p, 0, 6, two, 2, &fails); /* each END is 6 bytes alone */
    b = slurp(p, &n);
    CHECK(fails == 0 && b && n == 24 + 2 * (8 + 6) &&
              memcmp(b + 24, b + 38, 14) == 0 && b[33] == 0x80 &&
              b[34] == 0x89 && b[35] == 0x7a,
          "node id delta restarts at a block start");
    free(b);

    /* the largest block a reader accepts, filled exactly */
    size_t cnt = TRACE_BLOCK_MAX / 4 + 1;
    trace_writer *w = trace_writer_open(p, 0, TRACE_BLOCK_MAX, 0);
    ok = w != NULL;
    for (size_t i = 0; ok && i < cnt; i++)
        ok &= trace_write_end(w, 0, 0, 0) == 0;
    ok &= trace_writer_close(w) == 0;
    b = slurp(p, &n);
    CHECK(ok && b && n == 24 + 8 + TRACE_BLOCK_MAX + 8 + 4 &&
              blk_len(b + 24) == TRACE_BLOCK_MAX,
          "a block of exactly TRACE_BLOCK_MAX bytes");
    trace_reader *r = trace_reader_open_mem(b, n, "max");
    int last;
    CHECK(drain(r, &last) == cnt && last == 0, "it reads back whole");
    trace_reader_close(r);
    free(b);
}

/* Records that reach the writer's worst-case size bound (every varint at
 * full length) packed at every block size around it: a block may never
 * exceed the block size, not even by a byte. */
static void test_worst_case_packing(void)
{
    const uint64_t a = (uint64_t)1 << 62, b = 3 * ((uint64_t)1 << 62);
    trace_rec recs[36];
    size_t n = 0;
    for (int i = 0; i < 12; i++) {
        /* node ids alternate so that each delta is +-2^63: 10 bytes */
        recs[n++] = r_work(i % 2 ? b : a, UINT64_MAX, UINT64_MAX,
                           UINT32_MAX - 1, UINT32_MAX);
        recs[n++] = r_end(i % 2 ? a : b, UINT64_MAX, UINT32_MAX - 1);
        recs[n++] = r_begin(i % 2 ? b : a, i % 2 ? a : b, UINT64_MAX, OSPG_P,
                            UINT32_MAX - 1, UINT64_MAX, i % 2 ? b : a, NULL,
                            0);
    }
    char p[128];
    path_of(p, sizeof p, "worst.tr");
    int ok = 1;
    for (size_t bsize = 20; bsize <= 200 && ok; bsize++) {
        int fails;
        write_file(p, 0, bsize, recs, n, &fails);
        size_t len, nblocks;
        uint8_t *img = slurp(p, &len);
        char why[300] = "";
        if (fails || !img ||
            !check_blocks(img, len, bsize, recs, n, &nblocks, why, sizeof why)) {
            fprintf(stderr, "  bsize %zu: %s\n", bsize, why);
            ok = 0;
        }
        /* 58: the largest of these records, a BEGIN in a group */
        for (size_t off = 24; ok && bsize >= 58 && off + 8 <= len;
             off += 8 + blk_len(img + off))
            if (blk_len(img + off) > bsize) {
                fprintf(stderr, "  bsize %zu: block of %u bytes\n", bsize,
                        blk_len(img + off));
                ok = 0;
            }
        free(img);
    }
    CHECK(ok, "worst-case records at every block size 20..200");
}

static void test_writer_rejects(void)
{
    char p[128];
    path_of(p, sizeof p, "rej.tr");
    trace_writer *w = trace_writer_open(p, 0, 64, 0);
    ospg_dep bad0 = {1, 0}, bad6 = {1, 7}, good = {1, OSPG_DEP_IN};
    char *longs = malloc(TRACE_MAX_STR + 2);
    memset(longs, 'a', TRACE_MAX_STR + 1);
    longs[TRACE_MAX_STR + 1] = '\0';
    int ok = 1;
    errno = 0;
    ok &= trace_write_begin(w, 1, 0, 0, (ospg_kind)3, 0, 0, 0, NULL, 0) == -1 &&
          errno == EINVAL;
    ok &= trace_write_begin(w, 1, 0, 0, (ospg_kind)0, 0, 0, 0, NULL, 0) == -1;
    ok &= trace_write_begin(w, 1, 0, 0, OSPG_P, 0, 0, 0, &bad0, 1) == -1;
    ok &= trace_write_begin(w, 1, 0, 0, OSPG_P, 0, 0, 0, &bad6, 1) == -1;
    ok &= trace_write_begin(w, 1, 0, 0, OSPG_P, 0, 0, 0, NULL, 1) == -1;
    ok &= trace_write_begin(w, 1, 0, 0, OSPG_P, 0, 0, 0, &good,
                            TRACE_MAX_DEPS + 1) == -1;
    ok &= trace_write_meta(w, longs, "v") == -1;
    ok &= trace_write_loc(w, 1, "for", longs) == -1;
    CHECK(ok && trace_writer_dropped(w) == 8,
          "invalid records are refused with EINVAL and counted");
    ok = trace_write_meta(w, NULL, NULL) == 0 &&
         trace_write_loc(w, 2, NULL, "w") == 0 &&
         trace_write_end(w, 0, 0, 0) == 0;
    CHECK(ok, "the writer goes on after refusing");
    errno = 0;
    CHECK(trace_writer_close(w) == -1 && errno == EINVAL,
          "close reports the refused records");
    trace_rec exp[3] = {r_meta("", ""), r_loc(2, "", "w"), r_end(0, 0, 0)};
    char why[300] = "";
    trace_reader *r = trace_reader_open(p);
    CHECK(read_expect(r, exp, 3, why, sizeof why),
          "refusals leave a clean file; NULL strings read as \"\": %s", why);
    trace_reader_close(r);
    free(longs);

    CHECK(trace_write_end(NULL, 0, 0, 0) == -1 && trace_writer_close(NULL) == 0 &&
              trace_writer_flush(NULL) == -1,
          "NULL writer");
    errno = 0;
    CHECK(trace_writer_open("/nonexistent-dir/x.tr", 0, 0, 0) == NULL &&
              errno == ENOENT,
          "open in a missing directory fails with ENOENT");
}

/* A file size limit makes the kernel accept part of a block and then
 * refuse: the writer must loop over the partial write, then fail, count
 * the lost records and keep the file's good prefix readable. */
static void test_writer_io_error(void)
{
    char p[128];
    path_of(p, sizeof p, "ioerr.tr");
    struct rlimit old, lim;
    getrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_IGN);
    trace_writer *w = trace_writer_open(p, 0, 64, 0);
    lim = old;
    lim.rlim_cur = 100;
    setrlimit(RLIMIT_FSIZE, &lim);
    size_t total = 60, accepted = 0;
    int err = 0, failed_at = -1;
    for (size_t i = 0; i < total; i++) {
        if (trace_write_work(w, 1, i, 1000 + i, 3, 0, 0) == 0)
            accepted++;
        else if (failed_at < 0) {
            failed_at = (int)i;
            err = errno;
        }
    }
    uint64_t bytes = trace_writer_bytes(w), dropped = trace_writer_dropped(w);
    errno = 0;
    int fl = trace_writer_flush(w);
    int ferr = errno;
    int cl = trace_writer_close(w);
    setrlimit(RLIMIT_FSIZE, &old);
    signal(SIGXFSZ, SIG_DFL);
    CHECK(failed_at > 0 && err == EFBIG, "write fails with EFBIG (at %d)",
          failed_at);
    CHECK(bytes == 100, "bytes counts the partial write: %llu",
          (unsigned long long)bytes);
    CHECK(fl == -1 && ferr == EFBIG && cl == -1,
          "flush and close report the failure");
    trace_reader *r = trace_reader_open(p);
    int last;
    size_t got = drain(r, &last);
    CHECK(last == -1 && strstr(trace_reader_error(r), "truncated"),
          "the damaged tail is reported: %s",
          trace_reader_error(r) ? trace_reader_error(r) : "-");
    CHECK(got + dropped == total && got < accepted,
          "records read %zu + dropped %llu == written %zu", got,
          (unsigned long long)dropped, total);
    trace_reader_close(r);
}

static trace_writer *exit_writer;
static void flush_at_exit(void)
{
    trace_writer_flush(exit_writer);
}

static void test_atexit_flush(void)
{
    char p[128];
    path_of(p, sizeof p, "atexit.tr");
    fflush(NULL);
    pid_t pid = fork();
    if (pid == 0) {
        exit_writer = trace_writer_open(p, 9, 0, 0);
        if (!exit_writer)
            _exit(3);
        atexit(flush_at_exit);
        for (uint64_t i = 0; i < 10; i++)
            trace_write_work(exit_writer, 0, i, i * 10, 1, 0, 0);
        exit(0);
    }
    int st = 0;
    waitpid(pid, &st, 0);
    trace_rec exp[10];
    for (uint64_t i = 0; i < 10; i++)
        exp[i] = r_work(0, i, i * 10, 1, 0);
    char why[300] = "";
    trace_reader *r = trace_reader_open(p);
    CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0 &&
              read_expect(r, exp, 10, why, sizeof why),
          "an atexit flush saves the last block: %s", why);
    trace_reader_close(r);
}

static int has(const char *err, const char *s)
{
    return err && strstr(err, s) != NULL;
}

/* Opens an image, reads to the end: returns the error (or NULL), stores
 * the record count. */
static const char *mem_error(trace_reader **rp, const uint8_t *b, size_t n,
                             size_t *count)
{
    *rp = trace_reader_open_mem(b, n, "img.tr");
    int last;
    *count = drain(*rp, &last);
    return trace_reader_error(*rp);
}

static void test_header_errors(void)
{
    char p[128];
    path_of(p, sizeof p, "hdr.tr");
    char want[256];
    const char *e;
    trace_reader *r;
    trace_rec rec;

    spit(p, "", 0);
    r = trace_reader_open(p);
    snprintf(want, sizeof want, "%s: byte 0: empty file: no header", p);
    e = trace_reader_error(r);
    CHECK(e && strcmp(e, want) == 0, "empty file: %s", e ? e : "-");
    CHECK(trace_reader_next(r, &rec) == -1 && trace_reader_next(r, &rec) == -1,
          "an error sticks");
    trace_reader_close(r);

    size_t cnt;
    e = mem_error(&r, tiny_image, 23, &cnt);
    CHECK(e && strcmp(e, "img.tr: byte 0: short header: 23 of 24 bytes") == 0,
          "short header: %s", e ? e : "-");
    trace_reader_close(r);
    e = mem_error(&r, tiny_image, 1, &cnt);
    CHECK(has(e, "short header: 1 of 24"), "one-byte file: %s", e ? e : "-");
    trace_reader_close(r);
    e = mem_error(&r, (const uint8_t *)"hello", 5, &cnt);
    CHECK(has(e, "byte 0: bad magic"), "not a trace: %s", e ? e : "-");
    trace_reader_close(r);

    uint8_t b[sizeof tiny_image];
    memcpy(b, tiny_image, sizeof b);
    b[7] = 'X';
    e = mem_error(&r, b, sizeof b, &cnt);
    CHECK(e && strcmp(e, "img.tr: byte 0: bad magic: not a whatif trace") == 0,
          "bad magic: %s", e ? e : "-");
    trace_reader_close(r);

    memcpy(b, tiny_image, sizeof b);
    b[8] = 10;
    e = mem_error(&r, b, sizeof b, &cnt);
    CHECK(e && strcmp(e, "img.tr: byte 8: trace version 10, this analyzer "
                         "reads versions 1 to 8") == 0,
          "version 10: %s", e ? e : "-");
    trace_reader_close(r);
    b[8] = 0;
    e = mem_error(&r, b, sizeof b, &cnt);
    CHECK(has(e, "trace version 0"), "version 0: %s", e ? e : "-");
    trace_reader_close(r);
    b[8] = 9;
    spit(p, b, sizeof b);
    r = trace_reader_open(p);
    snprintf(want, sizeof want,
             "%s: byte 8: trace version 9, this analyzer reads versions 1 to "
             "8", p);
    e = trace_reader_error(r);
    CHECK(e && strcmp(e, want) == 0, "version 9 from a file: %s", e ? e : "-");
    trace_reader_close(r);

    memcpy(b, tiny_image, sizeof b);
    b[23] = 0x80;
    e = mem_error(&r, b, sizeof b, &cnt);
    CHECK(has(e, "byte 16: header flags 0x8000000000000000"),
          "unknown flags: %s", e ? e : "-");
    trace_reader_close(r);
    /* version 8 knows one flag, fixed locations; version 7 none */
    memcpy(b, tiny_image, sizeof b);
    b[16] = TRACE_FLAG_FIXED_LOCS;
    e = mem_error(&r, b, sizeof b, &cnt);
    CHECK(!e && trace_reader_flags(r) == TRACE_FLAG_FIXED_LOCS,
          "version 8 with fixed locations: %s", e ? e : "-");
    trace_reader_close(r);
    b[16] = 2;
    e = mem_error(&r, b, sizeof b, &cnt);
    CHECK(has(e, "byte 16: header flags 0x2 unknown to version 8"),
          "unknown flag of version 8: %s", e ? e : "-");
    trace_reader_close(r);
    b[8] = 7;
    b[16] = TRACE_FLAG_FIXED_LOCS;
    e = mem_error(&r, b, sizeof b, &cnt);
    CHECK(has(e, "byte 16: header flags 0x1 unknown to version 7"),
          "a flag in version 7: %s", e ? e : "-");
    trace_reader_close(r);

    path_of(p, sizeof p, "no-such-file.tr");
    r = trace_reader_open(p);
    snprintf(want, sizeof want, "%s: byte 0: cannot open: %s", p,
             strerror(ENOENT));
    e = trace_reader_error(r);
    CHECK(r && e && strcmp(e, want) == 0 && trace_reader_next(r, &rec) == -1,
          "missing file: %s", e ? e : "-");
    trace_reader_close(r);
    r = trace_reader_open_mem(NULL, 0, NULL);
    CHECK(has(trace_reader_error(r), "<memory>: byte 0: empty file"),
          "NULL image");
    trace_reader_close(r);
    CHECK(trace_reader_next(NULL, &rec) == -1 && !trace_reader_error(NULL),
          "NULL reader");
}

/* A multi-block image for the damage tests. */
static uint8_t *multi_image(size_t *n, size_t *nrec, size_t **bounds,
                            size_t **before, size_t *nb)
{
    char p[128];
    path_of(p, sizeof p, "multi.tr");
    static ospg_dep d[3] = {{0x1000, 1}, {0x1008, 2}, {0xfff0, 5}};
    trace_rec recs[] = {
        r_meta("k", "v"),      r_loc(5, "for", "a.c:3"),
        r_begin(1, 0, 0, OSPG_P, 5, 7, 0, d, 3),
        r_work(1, 0, 100, 5, 0), r_end(1, 1, OSPG_LOC_NONE),
        r_begin(2, 0, 1, OSPG_S, 6, 0, 0, NULL, 0),
        r_work(2, 0, 1u << 20, 6, 1),
        r_end(2, 1, 6),        r_end(0, 2, 0),
    };
    int fails;
    *nrec = sizeof recs / sizeof recs[0];
    write_file(p, 1, 24, recs, *nrec, &fails);
    uint8_t *b = slurp(p, n);
    /* block boundaries, and how many records lie before each */
    *bounds = malloc(64 * sizeof **bounds);
    *before = malloc(64 * sizeof **before);
    *nb = 0;
    size_t off = 24, k = 0;
    (*bounds)[*nb] = off;
    (*before)[(*nb)++] = 0;
    while (off < *n) {
        uint32_t len = blk_len(b + off);
        uint8_t *img = malloc(32 + len);
        memcpy(img, b, 24);
        memcpy(img + 24, b + off, 8 + len);
        trace_reader *r = trace_reader_open_mem(img, 32 + len, "x");
        int last;
        k += drain(r, &last);
        trace_reader_close(r);
        free(img);
        off += 8 + len;
        (*bounds)[*nb] = off;
        (*before)[(*nb)++] = k;
    }
    return b;
}

static void test_truncation(void)
{
    size_t n, nrec, *bounds, *before, nb;
    uint8_t *b = multi_image(&n, &nrec, &bounds, &before, &nb);
    CHECK(nb >= 4 && before[nb - 1] == nrec, "multi-block image: %zu blocks",
          nb - 1);
    int ok = 1;
    char p[128];
    path_of(p, sizeof p, "cut.tr");
    for (size_t len = 0; len <= n; len++) {
        size_t bi = nb;
        for (size_t i = 0; i < nb; i++)
            if (bounds[i] == len)
                bi = i;
        for (int file = 0; file < 2; file++) {
            trace_reader *r;
            size_t cnt;
            const char *e;
            if (file) {
                spit(p, b, len);
                r = trace_reader_open(p);
                int last;
                cnt = drain(r, &last);
                e = trace_reader_error(r);
            } else {
                e = mem_error(&r, b, len, &cnt);
            }
            const char *name = file ? p : "img.tr";
            if (bi < nb) {
                if (e || cnt != before[bi]) {
                    fprintf(stderr, "  cut at %zu (boundary): %zu records, %s\n",
                            len, cnt, e ? e : "no error");
                    ok = 0;
                }
            } else if (!e || strncmp(e, name, strlen(name)) != 0 ||
                       !strstr(e, ": byte ") ||
                       (len > 24 && !strstr(e, "truncated"))) {
                fprintf(stderr, "  cut at %zu: %s\n", len, e ? e : "no error");
                ok = 0;
            }
            trace_reader_close(r);
        }
    }
    CHECK(ok, "cut at every byte offset (%zu): clean end only at block "
              "boundaries, else a located error", n + 1);

    size_t cnt;
    trace_reader *r;
    const char *e = mem_error(&r, tiny_image, 50, &cnt);
    CHECK(e && strcmp(e, "img.tr: byte 24: truncated: block claims 47 bytes, "
                         "18 remain") == 0,
          "truncated payload message: %s", e ? e : "-");
    trace_reader_close(r);
    e = mem_error(&r, tiny_image, 28, &cnt);
    CHECK(e && strcmp(e, "img.tr: byte 24: truncated: block header needs 8 "
                         "bytes, 4 remain") == 0,
          "truncated block header message: %s", e ? e : "-");
    trace_reader_close(r);
    free(b);
    free(bounds);
    free(before);
}

static void test_bit_flips(void)
{
    size_t n, nrec, *bounds, *before, nb;
    uint8_t *b = multi_image(&n, &nrec, &bounds, &before, &nb);
    uint8_t *c = malloc(n);
    int crc_ok = 1, hdr_ok = 1, prefix_ok = 1, skim_ok = 1;
    size_t flips = 0, skim_clean = 0, skim_crc = 0;
    for (size_t bi = 0; bi + 1 < nb; bi++) {
        size_t start = bounds[bi], end = bounds[bi + 1];
        for (size_t pos = start; pos < end; pos++)
            for (int bit = 0; bit < 8; bit++) {
                memcpy(c, b, n);
                c[pos] ^= (uint8_t)(1u << bit);
                size_t cnt;
                trace_reader *r;
                const char *e = mem_error(&r, c, n, &cnt);
                char at[64];
                snprintf(at, sizeof at, "img.tr: byte %zu: ", start);
                if (pos >= start + 8) { /* payload */
                    flips++;
                    if (!e || strncmp(e, at, strlen(at)) != 0 ||
                        !strstr(e, "CRC mismatch")) {
                        fprintf(stderr, "  flip %zu.%d: %s\n", pos, bit,
                                e ? e : "no error");
                        crc_ok = 0;
                    }
                } else if (!e) { /* block header: some error, somewhere */
                    fprintf(stderr, "  header flip %zu.%d: no error\n", pos, bit);
                    hdr_ok = 0;
                }
                if (cnt < before[bi])
                    prefix_ok = 0;
                trace_reader_close(r);
                /* skimming checks a CRC only where it hands out a record
                 * or finds a fault: any error it reports for a payload flip
                 * is that block's CRC mismatch */
                r = trace_reader_open_mem(c, n, "img.tr");
                trace_reader_skim(r, 1);
                int last;
                drain(r, &last);
                e = trace_reader_error(r);
                if (pos >= start + 8 && e &&
                    (strncmp(e, at, strlen(at)) != 0 ||
                     !strstr(e, "CRC mismatch"))) {
                    fprintf(stderr, "  skimmed flip %zu.%d: %s\n", pos, bit,
                            e);
                    skim_ok = 0;
                }
                if (pos >= start + 8) {
                    skim_clean += !e;
                    skim_crc += e != NULL;
                }
                trace_reader_close(r);
            }
    }
    CHECK(crc_ok, "all %zu single-bit payload flips caught by the CRC", flips);
    CHECK(skim_ok && skim_crc > 0 && skim_clean > 0,
          "skimmed, payload flips are a CRC mismatch (%zu) or unseen (%zu, "
          "graph records only)", skim_crc, skim_clean);
    CHECK(hdr_ok, "every block-header bit flip is an error");
    CHECK(prefix_ok, "blocks before the damage still read");
    free(c);
    free(b);
    free(bounds);
    free(before);
}

/* A skimming reader checks the CRC of the blocks it hands out a record
 * from; a block of graph records only is left to the full read. */
static void test_skim_crc(void)
{
    size_t n, nrec, *bounds, *before, nb;
    uint8_t *b = multi_image(&n, &nrec, &bounds, &before, &nb);
    /* the block of the first name record, and the last block (an END) */
    size_t names = bounds[0], last = bounds[nb - 2];
    for (int which = 0; which < 2; which++) {
        size_t start = which ? last : names;
        /* the END's first field: it still skips as an END */
        size_t flip = which ? start + 9 : start + 8;
        b[flip] ^= 0x01;
        trace_reader *r = trace_reader_open_mem(b, n, "img.tr");
        trace_reader_skim(r, 1);
        int k;
        size_t got = drain(r, &k);
        const char *e = trace_reader_error(r);
        char at[64];
        snprintf(at, sizeof at, "img.tr: byte %zu: CRC mismatch", start);
        if (which)
            CHECK(k == 0 && got == 2, "skimmed past a damaged block of "
                  "graph records: %zu names, last %d (%s)", got, k,
                  e ? e : "-");
        else
            CHECK(k == -1 && e && !strncmp(e, at, strlen(at)) && got == 0,
                  "skimming a damaged block of names: %s", e ? e : "-");
        trace_reader_close(r);
        size_t cnt;
        e = mem_error(&r, b, n, &cnt);
        CHECK(e && !strncmp(e, at, strlen(at)), "read in full: %s",
              e ? e : "-");
        trace_reader_close(r);
        b[flip] ^= 0x01;
    }
    free(b);
    free(bounds);
    free(before);
}

/* Version 7's graph-only mark: set on the blocks without name records,
 * covered by the CRC, and used by a skimming reader to pass a block
 * unread, from memory and from a file. */
static void test_graph_only_mark(void)
{
    size_t n, nrec, *bounds, *before, nb;
    uint8_t *b = multi_image(&n, &nrec, &bounds, &before, &nb);
    size_t names = bounds[0], last = bounds[nb - 2];
    CHECK(!blk_graph_only(b + names) && blk_graph_only(b + last),
          "the names' block is unmarked, the last block (an END) marked");
    int k;
    for (int which = 0; which < 2; which++) {
        size_t at_blk = which ? last : names;
        b[at_blk + 3] ^= 0x80; /* the mark, cleared or set by damage */
        size_t cnt;
        char at[64];
        snprintf(at, sizeof at, "img.tr: byte %zu: CRC mismatch", at_blk);
        trace_reader *r;
        const char *e = mem_error(&r, b, n, &cnt);
        CHECK(e && !strncmp(e, at, strlen(at)),
              "a %s mark is a CRC mismatch when read in full: %s",
              which ? "cleared" : "forged", e ? e : "-");
        trace_reader_close(r);
        b[at_blk + 3] ^= 0x80;
    }
    /* damage inside a marked block (an unknown record type): a skimming
     * reader never reads it */
    uint8_t type = b[last + 8];
    b[last + 8] = 0xff;
    trace_reader *r = trace_reader_open_mem(b, n, "img.tr");
    trace_reader_skim(r, 1);
    size_t got = drain(r, &k);
    CHECK(k == 0 && got == 2 && trace_reader_offset(r) == n,
          "a marked block is passed unread: %zu names, last %d, at %llu of "
          "%zu", got, k, (unsigned long long)trace_reader_offset(r), n);
    trace_reader_close(r);
    b[last + 8] = type;
    /* cut inside a marked block */
    r = trace_reader_open_mem(b, n - 1, "img.tr");
    trace_reader_skim(r, 1);
    drain(r, &k);
    const char *e = trace_reader_error(r);
    char want[128];
    snprintf(want, sizeof want, "img.tr: byte %zu: truncated: block claims "
             "%u bytes, %zu remain", last, blk_len(b + last),
             (size_t)(n - 1 - last - 8));
    CHECK(k == -1 && e && !strcmp(e, want), "a cut marked block, skimmed: "
          "%s", e ? e : "-");
    trace_reader_close(r);
    /* from a file, where the block is passed by seeking */
    char p[128];
    path_of(p, sizeof p, "marked.tr");
    FILE *f = fopen(p, "wb");
    CHECK(f && fwrite(b, 1, n, f) == n && fclose(f) == 0, "write %s", p);
    r = trace_reader_open(p);
    trace_reader_skim(r, 1);
    got = drain(r, &k);
    CHECK(k == 0 && got == 2 && trace_reader_offset(r) == n,
          "from a file: %zu names, last %d, at %llu of %zu", got, k,
          (unsigned long long)trace_reader_offset(r), n);
    trace_reader_close(r);
    f = fopen(p, "wb");
    CHECK(f && fwrite(b, 1, n - 1, f) == n - 1 && fclose(f) == 0, "cut %s",
          p);
    r = trace_reader_open(p);
    trace_reader_skim(r, 1);
    drain(r, &k);
    e = trace_reader_error(r);
    CHECK(k == -1 && e && strstr(e, "truncated: block claims"),
          "a cut marked block in a file, skimmed: %s", e ? e : "-");
    trace_reader_close(r);
    free(b);
    free(bounds);
    free(before);
}

/* Hand-made payloads with a correct CRC: the decoder, not the CRC, must
 * catch these.  Each expects an exact offset and message. */
static void test_payload_errors(void)
{
    struct {
        const char *hex;  /* payload */
        size_t off;       /* expected error offset in the file */
        const char *msg;  /* expected message after "byte N: " */
    } cases[] = {
        {"03800001", 33, "overlong varint"},
        {"0300008000", 35, "overlong varint"},
        {"03ffffffffffffffffffff01", 33, "varint longer than 10 bytes"},
        {"0380808080808080808002", 33, "varint overflows 64 bits"},
        {"0300000112", 36, "unknown record type 18"},
        /* LEAF: parent idx kind loc group [owner] nchildren [...] */
        {"0d00000306000000", 35, "node kind 3, must be 1 (S) or 2 (P)"},
        {"0d0000010601070000", 37, "a group member must be a P-node"},
        {"0d00000206000200", 38, "a leaf has 2 children, at most 1"},
        {"0d000002060001640600", 42, "record runs past the end of its block"},
        {"0d00000206000164060002", 42, "work flags 0x2 unknown"},
        {"0e000006", 36, "record runs past the end of its block"},
        /* WORK with samples: ... flags nsamples {loc count}* */
        {"0f0000640600000000", 39, "0 sampled lines, must be 1..65536"},
        {"0f00006406000002070107", 39, "record runs past the end of its block"},
        {"08000000", 34, "note 0 unknown"},
        {"08000800", 34, "note 8 unknown"},
        {"080001", 35, "record runs past the end of its block"},
        {"02020064060002", 38, "work flags 0x2 unknown"},
        {"020200640600", 38, "record runs past the end of its block"},
        {"0700000000", 33, "region id 0"},
        {"07010200", 36, "record runs past the end of its block"},
        {"00", 32, "unknown record type 0"},
        {"04070006", 32, "unknown record type 4"}, /* the removed GROUP */
        {"01020000020607", 39, "record runs past the end of its block"},
        {"010200000206078000", 39, "overlong varint"}, /* the owner */
        {"ff", 32, "unknown record type 255"},
        {"0102000003060000", 36, "node kind 3, must be 1 (S) or 2 (P)"},
        {"0102000000060000", 36, "node kind 0, must be 1 (S) or 2 (P)"},
        {"01020000020600010000", 41, "depend type 0, must be 1..6"},
        {"01020000020600010007", 41, "depend type 7, must be 1..6"},
        {"01020000020600818004", 39, "65537 depend items, most allowed is 65536"},
        {"0102000002060005000101", 39, "record runs past the end of its block"},
        {"02020064808080801000", 36, "location code 4294967296 out of range"},
        {"02020064068080808010", 37, "region 4294967296 out of range"},
        {"020200", 35, "record runs past the end of its block"},
        {"0202", 34, "record runs past the end of its block"},
        {"03", 33, "record runs past the end of its block"},
        {"0601610262", 35, "record runs past the end of its block"},
        {"06026100016200", 33, "NUL byte inside a string"},
        {"068180040000", 33, "string of 65537 bytes, longest allowed is 65536"},
        {"0580808080100000", 33, "location code 4294967296 out of range"},
    };
    int ok = 1;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const char *h = cases[i].hex;
        size_t plen = strlen(h) / 2;
        uint8_t img[128];
        memcpy(img, tiny_image, 24);
        for (size_t k = 0; k < plen; k++) {
            unsigned v;
            sscanf(h + 2 * k, "%2x", &v);
            img[32 + k] = (uint8_t)v;
        }
        le32(img + 24, (uint32_t)plen);
        le32(img + 28, ref_crc(img + 32, plen));
        size_t cnt;
        trace_reader *r;
        const char *e = mem_error(&r, img, 32 + plen, &cnt);
        char want[200];
        snprintf(want, sizeof want, "img.tr: byte %zu: %s", cases[i].off,
                 cases[i].msg);
        if (!e || strcmp(e, want) != 0) {
            fprintf(stderr, "  payload %s: got \"%s\" want \"%s\"\n", h,
                    e ? e : "no error", want);
            ok = 0;
        }
        trace_reader_close(r);
    }
    CHECK(ok, "hand-made bad payloads with good CRCs: exact offsets/messages");

    /* edge values that are valid: the largest loc code, a 10-byte varint */
    uint8_t img[128];
    memcpy(img, tiny_image, 24);
    const char *h = "0300ffffffffffffffffff0100"; /* END 0 UINT64_MAX NONE */
    size_t plen = strlen(h) / 2;
    for (size_t k = 0; k < plen; k++) {
        unsigned v;
        sscanf(h + 2 * k, "%2x", &v);
        img[32 + k] = (uint8_t)v;
    }
    le32(img + 24, (uint32_t)plen);
    le32(img + 28, ref_crc(img + 32, plen));
    trace_reader *r = trace_reader_open_mem(img, 32 + plen, "ok");
    trace_rec rec;
    CHECK(trace_reader_next(r, &rec) == 1 && rec.nchildren == UINT64_MAX &&
              rec.loc == OSPG_LOC_NONE && trace_reader_next(r, &rec) == 0,
          "a 10-byte varint holding UINT64_MAX decodes");
    trace_reader_close(r);

    /* block length outside 1..TRACE_BLOCK_MAX (in version 7 the top bit
     * is the graph-only mark, not part of the length; in version 6 it is) */
    static const uint32_t lens[] = {0, TRACE_BLOCK_MAX + 1, UINT32_MAX,
                                    UINT32_MAX};
    for (int i = 0; i < 4; i++) {
        memcpy(img, tiny_image, sizeof tiny_image);
        le32(img + 24, lens[i]);
        if (i == 3)
            img[8] = 6;
        size_t cnt;
        const char *e = mem_error(&r, img, sizeof tiny_image, &cnt);
        char want[200];
        snprintf(want, sizeof want,
                 "img.tr: byte 24: block payload length %u outside 1..%u",
                 i == 2 ? lens[i] & ~TRACE_BLOCK_GRAPH_ONLY : lens[i],
                 TRACE_BLOCK_MAX);
        CHECK(e && strcmp(e, want) == 0, "block length %u: %s", lens[i],
              e ? e : "-");
        trace_reader_close(r);
    }
    memcpy(img, tiny_image, sizeof tiny_image);
    img[28] ^= 1;
    size_t cnt;
    const char *e = mem_error(&r, img, sizeof tiny_image, &cnt);
    CHECK(e && strcmp(e, "img.tr: byte 24: CRC mismatch: block header says "
                         "0xd397f9c2, payload has 0xd397f9c3") == 0,
          "CRC mismatch message: %s", e ? e : "-");
    trace_reader_close(r);
}

/* Sizes in a typical stream: a parallel loop's chunks as P-nodes with one
 * W-node each, tasks with two depend items, and barrier phases.  Printed
 * for the report; checked only loosely. */
static void test_typical_sizes(void)
{
    char p[128];
    path_of(p, sizeof p, "typical.tr");
    trace_writer *w = trace_writer_open(p, 0, 0, 0);
    uint64_t next = 1;
    for (int rep = 0; rep < 2000; rep++) {
        uint64_t phase = next++;
        trace_write_begin(w, phase, 0, (uint64_t)rep, OSPG_S, 10, 0, 0, NULL,
                          0);
        uint64_t g = (uint64_t)rep + 1;
        for (uint64_t c = 0; c < 16; c++) {
            uint64_t id = next++;
            trace_write_begin(w, id, phase, c, OSPG_P, 11, g, phase, NULL, 0);
            trace_write_work(w, id, 0, 20000 + rnd() % 200000, 11, 0, 0);
            trace_write_end(w, id, 1, OSPG_LOC_NONE);
        }
        for (uint64_t t = 0; t < 8; t++) {
            uint64_t id = next++;
            ospg_dep d[2] = {{0x7ffd1000 + 64 * t, OSPG_DEP_IN},
                             {0x7ffd1040 + 64 * t, OSPG_DEP_OUT}};
            trace_write_begin(w, id, phase, 16 + t, OSPG_P, 12, 0, 0, d, 2);
            trace_write_work(w, id, 0, 5000 + rnd() % 50000, 12, 0, 0);
            trace_write_end(w, id, 1, OSPG_LOC_NONE);
        }
        trace_write_end(w, phase, 24, OSPG_LOC_NONE);
    }
    trace_write_end(w, 0, 2000, 0);
    int ok = trace_writer_close(w) == 0;
    trace_reader *r = trace_reader_open(p);
    uint64_t bytes[8] = {0}, count[8] = {0};
    trace_rec rec;
    uint64_t at = trace_reader_offset(r);
    int k;
    while ((k = trace_reader_next(r, &rec)) == 1) {
        uint64_t nx = trace_reader_offset(r);
        /* the first record of a block also counts its 8-byte block header:
         * one in 256 KiB, too little to matter */
        int t = rec.type == TRACE_BEGIN && rec.ndeps   ? 7
                : rec.type == TRACE_BEGIN && rec.group ? 4
                                                       : rec.type;
        bytes[t] += nx - at;
        count[t]++;
        at = nx;
    }
    CHECK(ok && k == 0, "typical trace written and read");
    trace_reader_close(r);
    static const char *names[] = {"",      "BEGIN, no deps", "WORK",
                                  "END",   "BEGIN, member",  "",
                                  "",      "BEGIN, 2 deps"};
    for (int t = 1; t <= 7; t++)
        if (count[t])
            printf("  typical %-15s %.2f bytes/record\n", names[t],
                   (double)bytes[t] / (double)count[t]);
    CHECK(count[TRACE_WORK] && bytes[TRACE_WORK] / count[TRACE_WORK] <= 8,
          "WORK records stay small");
}

/* One writer per thread, as the profiler uses them; run first, so that
 * the threads also race to build trace.c's CRC tables (run under
 * -fsanitize=thread to see that race is clean). */
#define NTHREADS 8
#define PER_THREAD 20000u

static void *thread_writer(void *arg)
{
    uintptr_t t = (uintptr_t)arg;
    char p[128];
    snprintf(p, sizeof p, "%s/thread%u.tr", tmpdir, (unsigned)t);
    trace_writer *w = trace_writer_open(p, (uint32_t)t, 4096, 0);
    if (!w)
        return (void *)1;
    int bad = 0;
    for (uint64_t i = 0; i < PER_THREAD; i++)
        bad |= trace_write_work(w, t, i, i * t, (uint32_t)t, 0, 0);
    bad |= trace_writer_close(w);
    return (void *)(uintptr_t)(bad != 0);
}

static void test_threads(void)
{
    pthread_t th[NTHREADS];
    int ok = 1;
    for (uintptr_t t = 0; t < NTHREADS; t++)
        ok &= pthread_create(&th[t], NULL, thread_writer, (void *)t) == 0;
    for (uintptr_t t = 0; t < NTHREADS; t++) {
        void *rv = (void *)1;
        pthread_join(th[t], &rv);
        ok &= rv == NULL;
    }
    for (uintptr_t t = 0; t < NTHREADS && ok; t++) {
        char p[128];
        snprintf(p, sizeof p, "%s/thread%u.tr", tmpdir, (unsigned)t);
        trace_reader *r = trace_reader_open(p);
        trace_rec rec;
        uint64_t i = 0;
        ok &= trace_reader_stream(r) == t;
        while (trace_reader_next(r, &rec) == 1) {
            ok &= rec.type == TRACE_WORK && rec.parent == t && rec.idx == i &&
                  rec.work == i * t && rec.loc == t;
            i++;
        }
        ok &= i == PER_THREAD && !trace_reader_error(r);
        trace_reader_close(r);
    }
    CHECK(ok, "%d threads, one writer each, all streams read back",
          NTHREADS);
}

int main(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_trace.XXXXXX");
    if (!mkdtemp(tmpdir)) {
        perror("mkdtemp");
        return 2;
    }
    test_threads();
    test_ref_crc();
    test_header_and_image();
    test_version1();
    test_leaf_image();
    test_time_records();
    test_time_block_edge();
    test_wait_records();
    test_region_records();
    test_round_trip();
    test_block_filling();
    test_worst_case_packing();
    test_writer_rejects();
    test_writer_io_error();
    test_atexit_flush();
    test_header_errors();
    test_truncation();
    test_bit_flips();
    test_skim_crc();
    test_graph_only_mark();
    test_payload_errors();
    test_typical_sizes();

    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", tmpdir);
    printf("%d passed, %d failed\n", npass, nfail);
    return nfail ? 1 : 0;
}
