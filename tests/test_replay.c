/* test_replay.c - the offline path end to end against the oracle.
 *
 * For many generated graphs: write the graph as a trace of 1 to 4 streams,
 * each stream a subsequence of one random causal order of events (as
 * threads would write it), replay the files, and require the profile to be
 * exactly the oracle's.  Then cut the trace short at random points and
 * require a clean one-line error naming the file, never a profile and never
 * a crash.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "graphgen.h"
#include "oracle.h"
#include "replay.h"
#include "trace.h"

#define NSTREAMS_MAX 4

static int passed, failed;

#define CHECK(cond, ...)                                                   \
    do {                                                                   \
        if (cond) {                                                        \
            passed++;                                                      \
        } else {                                                           \
            failed++;                                                      \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__,         \
                    __LINE__, #cond);                                      \
            fprintf(stderr, __VA_ARGS__);                                  \
            fputc('\n', stderr);                                           \
        }                                                                  \
    } while (0)

enum { EV_BEGIN = 1, EV_END = 2 };

typedef struct event {
    int type;
    int32_t x; /* node */
} event;

typedef struct order {
    event *ev;
    size_t n, cap;
} order;

static void push(order *o, int type, int32_t x)
{
    if (o->n == o->cap) {
        o->cap = o->cap ? o->cap * 2 : 256;
        o->ev = realloc(o->ev, o->cap * sizeof(*o->ev));
        if (!o->ev)
            abort();
    }
    o->ev[o->n].type = type;
    o->ev[o->n].x = x;
    o->n++;
}

/* A random causal order: a parent begins before its children, a node
 * before its end.  A group has no event of its own: each member's BEGIN
 * names the owner, which begins before it since it is an ancestor, and
 * whose END may come anywhere after its BEGIN, even before the members'. */
static void random_order(const gg_graph *g, gg_rng *rng, order *out)
{
    order ready = {0};
    for (size_t i = 1; i < g->nnodes; i++)
        if (g->nodes[i].parent == 0)
            push(&ready, EV_BEGIN, (int32_t)i);
    while (ready.n) {
        size_t pick = gg_below(rng, ready.n);
        event e = ready.ev[pick];
        ready.ev[pick] = ready.ev[--ready.n];
        push(out, e.type, e.x);
        if (e.type == EV_BEGIN) {
            const gg_node *nd = &g->nodes[e.x];
            if (nd->kind == GG_W)
                continue;
            push(&ready, EV_END, e.x);
            for (uint32_t k = 0; k < nd->nkids; k++)
                push(&ready, EV_BEGIN, g->kids[nd->kid_off + k]);
        }
    }
    free(ready.ev);
}

static unsigned long fixed_traces; /* written with TRACE_FLAG_FIXED_LOCS */

static int write_trace(const gg_graph *g, const order *o, unsigned nstreams,
                       gg_rng *rng, char paths[][256], const char *dir)
{
    trace_writer *w[NSTREAMS_MAX] = {0};
    for (unsigned s = 0; s < nstreams; s++) {
        snprintf(paths[s], 256, "%s/thread-%u.wit", dir, s);
        /* Small blocks: many block boundaries, as long traces have.  Half
         * the graphs that keep their locations say so (version 8). */
        int fixed = gg_keeps_locs(g) && g->nnodes % 2;
        fixed_traces += fixed && s == 0;
        w[s] = trace_writer_open(paths[s], s, 512,
                                 fixed ? TRACE_FLAG_FIXED_LOCS : 0);
        if (!w[s])
            return -1;
    }
    /* The location first: any cut then loses graph records. */
    int rc = trace_write_loc(w[0], 1, "loop", "a.c:1");
    for (size_t i = 0; i < o->n; i++) {
        trace_writer *tw = w[gg_below(rng, nstreams)];
        const event *e = &o->ev[i];
        const gg_node *nd = &g->nodes[e->x];
        if (nd->kind == GG_W) {
            ospg_sample tags[GG_MAXTAGS];
            size_t nt = gg_tag_samples(nd, tags);
            rc |= trace_write_work_sampled(tw, (uint64_t)nd->parent,
                                           nd->idx, nd->work, nd->loc,
                                           nd->region, nd->wflags, tags, nt);
        } else if (e->type == EV_BEGIN && nd->group >= 0) {
            /* The first member replayed creates the group with its own
             * location, so a member always carries one: one whose
             * location would come at its end gets the group's, which
             * the core gives it anyway. */
            const gg_group *gr = &g->groups[nd->group];
            uint32_t loc = nd->begin_loc != OSPG_LOC_NONE ? nd->begin_loc
                                                          : gr->loc;
            rc |= trace_write_begin(tw, (uint64_t)e->x, (uint64_t)nd->parent,
                                    nd->idx, (ospg_kind)nd->kind, loc,
                                    (uint64_t)nd->group + 1,
                                    (uint64_t)gr->owner, nd->deps,
                                    nd->ndeps);
        } else if (e->type == EV_BEGIN) {
            rc |= trace_write_begin(tw, (uint64_t)e->x, (uint64_t)nd->parent,
                                    nd->idx, (ospg_kind)nd->kind,
                                    nd->begin_loc, 0, 0, nd->deps,
                                    nd->ndeps);
        } else {
            rc |= trace_write_end(tw, (uint64_t)e->x, nd->nkids, nd->end_loc);
        }
    }
    rc |= trace_write_end(w[gg_below(rng, nstreams)], TRACE_ROOT_ID,
                          g->nodes[0].nkids, OSPG_LOC_NONE);
    for (unsigned s = 0; s < nstreams; s++)
        rc |= trace_writer_close(w[s]);
    return rc;
}

static void compare(const oracle_profile *op, const ospg_profile *p,
                    uint64_t seed)
{
    CHECK(p->work == op->work, "seed %llu work %llu vs %llu",
          (unsigned long long)seed, (unsigned long long)p->work,
          (unsigned long long)op->work);
    for (size_t s = 0; s < op->nscen; s++)
        CHECK(p->span[s] == op->span[s], "seed %llu scen %zu span %llu vs "
              "%llu", (unsigned long long)seed, s,
              (unsigned long long)p->span[s],
              (unsigned long long)op->span[s]);
    for (size_t i = 0; i < op->nlocs; i++) {
        const oracle_loc *ol = &op->locs[i];
        const ospg_loc_stat *ls = NULL;
        for (size_t j = 0; j < p->nlocs; j++)
            if (p->locs[j].loc == ol->loc)
                ls = &p->locs[j];
        uint64_t inst = ls ? ls->instances : 0, work = ls ? ls->work : 0;
        CHECK(inst == ol->instances && work == ol->work,
              "seed %llu loc %u instances %llu/%llu work %llu/%llu",
              (unsigned long long)seed, ol->loc, (unsigned long long)inst,
              (unsigned long long)ol->instances, (unsigned long long)work,
              (unsigned long long)ol->work);
        for (size_t s = 0; s < op->nscen; s++) {
            uint64_t span = ls ? ls->span[s] : 0;
            uint64_t crit = ls ? ls->critical[s] : 0;
            CHECK(span == ol->span[s], "seed %llu loc %u span %llu vs %llu",
                  (unsigned long long)seed, ol->loc,
                  (unsigned long long)span, (unsigned long long)ol->span[s]);
            CHECK(crit >= ol->crit_min[s] && crit <= ol->crit_max[s] &&
                      (!op->crit_unique[s] || crit == ol->critical[s]),
                  "seed %llu loc %u critical %llu not in [%llu, %llu]",
                  (unsigned long long)seed, ol->loc,
                  (unsigned long long)crit,
                  (unsigned long long)ol->crit_min[s],
                  (unsigned long long)ol->crit_max[s]);
        }
    }
}

static int replay_both_as(const char *const *pp, unsigned n, int partial,
                          ospg_profile *p, char *err, size_t errlen);

/* Cuts a copy of each stream at a random byte: replay must fail cleanly
 * unless the cut fell on the stream's end. */
static void truncated(char paths[][256], unsigned nstreams, gg_rng *rng,
                      const char *dir, uint64_t seed)
{
    char cut[NSTREAMS_MAX][256];
    const char *cp[NSTREAMS_MAX];
    unsigned victim = (unsigned)gg_below(rng, nstreams);
    for (unsigned s = 0; s < nstreams; s++) {
        snprintf(cut[s], sizeof(cut[s]), "%s/cut-%u.wit", dir, s);
        FILE *in = fopen(paths[s], "rb"), *out = fopen(cut[s], "wb");
        if (!in || !out)
            abort();
        fseek(in, 0, SEEK_END);
        long len = ftell(in);
        fseek(in, 0, SEEK_SET);
        long keep = s == victim ? (long)gg_below(rng, (uint64_t)len) : len;
        for (long i = 0; i < keep; i++)
            fputc(fgetc(in), out);
        fclose(in);
        fclose(out);
        cp[s] = cut[s];
    }
    loctab *lt = loctab_new();
    ospg_profile p;
    char err[512] = "";
    int rc = replay_files(cp, nstreams, 1, NULL, lt, NULL, &p, NULL,
                          err, sizeof(err));
    CHECK(rc == -1 && strstr(err, dir) && !strchr(err, '\n'),
          "seed %llu: truncated trace gave rc %d, message '%s'",
          (unsigned long long)seed, rc, err);
    if (rc == 0)
        ospg_profile_free(&p);
    loctab_free(lt);
    /* profiled as cut short: the same profile of what was recorded on one
     * thread and on several (which leave it to one) */
    if (replay_both_as(cp, nstreams, 1, &p, err, sizeof(err)) == 0)
        ospg_profile_free(&p);
    for (unsigned s = 0; s < nstreams; s++)
        unlink(cut[s]);
}

/* Replays pp on one thread and on three (at most one per stream): both
 * must agree (the profile's work and span, or the error message).
 * Returns the one-thread result (*p and err from it). */
static int replay_both_as(const char *const *pp, unsigned n, int partial,
                          ospg_profile *p, char *err, size_t errlen)
{
    char err2[512] = "";
    ospg_profile p2;
    replay_hooks one = {.threads = 1, .allow_partial = partial};
    replay_hooks three = {.threads = 3, .allow_partial = partial};
    loctab *lt = loctab_new(), *lt2 = loctab_new();
    int r = replay_files(pp, n, 1, NULL, lt, &one, p, NULL, err, errlen);
    int r2 = replay_files(pp, n, 1, NULL, lt2, &three, &p2, NULL, err2,
                          sizeof(err2));
    CHECK(r == r2, "one thread gave %d (%s), three %d (%s)", r, err, r2,
          err2);
    if (r == 0 && r2 == 0)
        CHECK(p->work == p2.work && p->span[0] == p2.span[0],
              "one thread: work %llu span %llu, three: %llu %llu",
              (unsigned long long)p->work, (unsigned long long)p->span[0],
              (unsigned long long)p2.work, (unsigned long long)p2.span[0]);
    else
        CHECK(!strcmp(err, err2), "one thread said '%s', three '%s'", err,
              err2);
    if (r2 == 0)
        ospg_profile_free(&p2);
    if (r == 0 && r2 != 0)
        ospg_profile_free(p);
    loctab_free(lt);
    loctab_free(lt2);
    return r == r2 ? r : -2;
}

static int replay_both(const char *const *pp, unsigned n, ospg_profile *p,
                       char *err, size_t errlen)
{
    return replay_both_as(pp, n, 0, p, err, errlen);
}

/* Two hand-written streams DIR/NAME-a.wit and DIR/NAME-b.wit (paths in pa,
 * pb), open for writing. */
static void open_pair(const char *dir, const char *name, char *pa, char *pb,
                      trace_writer **a, trace_writer **b)
{
    snprintf(pa, 256, "%s/%s-a.wit", dir, name);
    snprintf(pb, 256, "%s/%s-b.wit", dir, name);
    *a = trace_writer_open(pa, 0, 0, 0);
    *b = trace_writer_open(pb, 1, 0, 0);
    if (!*a || !*b)
        abort();
}

/* Hand-made two-stream traces around the group of a worksharing loop:
 * owner 1 (the phase) under the root, thread node 2 under it, chunk 3 a
 * member under 2.  Stream A writes the owner's BEGIN and END (and the
 * program's end); stream B the rest.  chunk_loc is the chunk's BEGIN
 * location, owner the owner it names; second_member adds chunk 4, which
 * names node 2 as the owner of the same group.  Returns replay_files'
 * result. */
static int group_case(const char *dir, uint32_t chunk_loc, uint64_t owner,
                      int second_member, ospg_profile *p, char *err,
                      size_t errlen)
{
    char pa[256], pb[256];
    trace_writer *a, *b;
    open_pair(dir, "grp", pa, pb, &a, &b);
    int rc = trace_write_begin(a, 1, 0, 0, OSPG_S, OSPG_LOC_NONE, 0, 0, NULL,
                               0);
    rc |= trace_write_begin(a, 2, 1, 0, OSPG_P, OSPG_LOC_NONE, 0, 0, NULL, 0);
    rc |= trace_write_end(a, 1, 1, OSPG_LOC_NONE);
    rc |= trace_write_end(a, 0, 1, OSPG_LOC_NONE);
    rc |= trace_write_begin(b, 3, 2, 0, OSPG_P, chunk_loc, 9, owner, NULL, 0);
    rc |= trace_write_work(b, 3, 0, 100, 5, 0, 0);
    rc |= trace_write_end(b, 3, 1, OSPG_LOC_NONE);
    uint64_t nkids = 1;
    if (second_member) {
        rc |= trace_write_begin(b, 4, 2, 1, OSPG_P, 5, 9, 2, NULL, 0);
        rc |= trace_write_work(b, 4, 0, 50, 5, 0, 0);
        rc |= trace_write_end(b, 4, 1, OSPG_LOC_NONE);
        nkids = 2;
    }
    rc |= trace_write_end(b, 2, nkids, OSPG_LOC_NONE);
    rc |= trace_writer_close(a);
    rc |= trace_writer_close(b);
    if (rc)
        abort();
    const char *pp[2] = {pa, pb};
    int r = replay_both(pp, 2, p, err, errlen);
    unlink(pa);
    unlink(pb);
    return r;
}

static void test_groups(const char *dir)
{
    ospg_profile p;
    char err[512] = "";
    /* The owner's END is replayed before the member's BEGIN (stream A
     * runs first): the owner is still live, and the group is created at
     * its first member. */
    int rc = group_case(dir, 5, 1, 0, &p, err, sizeof err);
    CHECK(rc == 0, "member after its owner's end: %s", err);
    if (rc == 0) {
        const ospg_loc_stat *ls = NULL;
        for (size_t j = 0; j < p.nlocs; j++)
            if (p.locs[j].loc == 5)
                ls = &p.locs[j];
        CHECK(p.work == 100 && ls && ls->instances == 1 && ls->work == 100,
              "member after its owner's end: work %llu",
              (unsigned long long)p.work);
        ospg_profile_free(&p);
    }
    rc = group_case(dir, OSPG_LOC_NONE, 1, 0, &p, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "grp-b.wit: byte 24: group member without "
                                  "a location"),
          "first member without a location: %s", err);
    if (rc == 0)
        ospg_profile_free(&p);
    rc = group_case(dir, 5, 77, 0, &p, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "grp-b.wit: byte 24: begin record names "
                                  "group owner node 77, which no stream "
                                  "begins"),
          "owner never begun: %s", err);
    if (rc == 0)
        ospg_profile_free(&p);
    rc = group_case(dir, 5, 1, 1, &p, err, sizeof err);
    CHECK(rc == -1 && strstr(err, "group 9 has owner 1, this member names "
                                  "owner 2"),
          "members naming different owners: %s", err);
    if (rc == 0)
        ospg_profile_free(&p);
}

/* A task begun at location 5 that ends naming location 6: allowed, unless
 * the stream's header promised fixed locations (trace version 8). */
static void test_fixed_locs(const char *dir)
{
    for (int fixed = 0; fixed < 2; fixed++) {
        char pa[256], err[512] = "";
        snprintf(pa, sizeof pa, "%s/fixed-%d.wit", dir, fixed);
        trace_writer *a =
            trace_writer_open(pa, 0, 0, fixed ? TRACE_FLAG_FIXED_LOCS : 0);
        if (!a)
            abort();
        int rc = trace_write_begin(a, 1, 0, 0, OSPG_P, 5, 0, 0, NULL, 0);
        rc |= trace_write_work(a, 1, 0, 100, 5, 0, 0);
        rc |= trace_write_end(a, 1, 1, 6);
        rc |= trace_write_end(a, 0, 1, OSPG_LOC_NONE);
        rc |= trace_writer_close(a);
        if (rc)
            abort();
        const char *pp[1] = {pa};
        ospg_profile p;
        int r = replay_both(pp, 1, &p, err, sizeof err);
        if (fixed)
            CHECK(r == -1 && strstr(err, "fixed-1.wit: byte ") &&
                      strstr(err, "end record: a node ends with another "
                                  "location than it began with"),
                  "a changed location under the promise: %s", err);
        else
            CHECK(r == 0, "a changed location without the promise: %s", err);
        if (r == 0)
            ospg_profile_free(&p);
        unlink(pa);
    }
}

/* Two-stream traces that no run writes, each of which names a node in a
 * way the other stream's records contradict.  With several threads each
 * check in replay.c that guards a node's memory must refuse it (under
 * ASan a miss is a use after free), and the message must be the one
 * thread's. */
enum { FORGE_EXTRA_CHILD, FORGE_END_TWICE, FORGE_OWNER_ELSEWHERE,
       FORGE_BEGUN_TWICE, FORGE_BEGUN_IN_BOTH, FORGE_LOC_TWICE,
       FORGE_AFTER_FOLD, FORGE_COUNT };

static void forged_case(const char *dir, int kind)
{
    char pa[256], pb[256];
    trace_writer *a, *b;
    open_pair(dir, "forge", pa, pb, &a, &b);
    int rc = trace_write_loc(a, 5, "loop", "f.c:5");
    switch (kind) {
    case FORGE_EXTRA_CHILD: /* node 1 says one child, two name it */
        rc |= trace_write_begin(a, 1, 0, 0, OSPG_P, OSPG_LOC_NONE, 0, 0,
                                NULL, 0);
        rc |= trace_write_end(a, 1, 1, OSPG_LOC_NONE);
        rc |= trace_write_work(b, 1, 0, 10, 5, 0, 0);
        rc |= trace_write_work(b, 1, 1, 10, 5, 0, 0);
        rc |= trace_write_end(b, 0, 1, OSPG_LOC_NONE);
        break;
    case FORGE_END_TWICE:
        rc |= trace_write_begin(a, 1, 0, 0, OSPG_P, OSPG_LOC_NONE, 0, 0,
                                NULL, 0);
        rc |= trace_write_work(a, 1, 0, 10, 5, 0, 0);
        rc |= trace_write_end(a, 1, 1, OSPG_LOC_NONE);
        rc |= trace_write_end(b, 1, 1, OSPG_LOC_NONE);
        rc |= trace_write_end(b, 0, 1, OSPG_LOC_NONE);
        break;
    case FORGE_OWNER_ELSEWHERE: /* the group's owner is a sibling */
        rc |= trace_write_begin(a, 1, 0, 0, OSPG_S, OSPG_LOC_NONE, 0, 0,
                                NULL, 0);
        rc |= trace_write_work(a, 1, 0, 10, 5, 0, 0);
        rc |= trace_write_begin(a, 2, 0, 1, OSPG_S, OSPG_LOC_NONE, 0, 0,
                                NULL, 0);
        rc |= trace_write_begin(b, 3, 2, 0, OSPG_P, 5, 9, 1, NULL, 0);
        rc |= trace_write_work(b, 3, 0, 100, 5, 0, 0);
        rc |= trace_write_end(b, 3, 1, OSPG_LOC_NONE);
        rc |= trace_write_end(b, 2, 1, OSPG_LOC_NONE);
        rc |= trace_write_end(a, 1, 1, OSPG_LOC_NONE);
        rc |= trace_write_end(a, 0, 2, OSPG_LOC_NONE);
        break;
    case FORGE_BEGUN_TWICE:
        rc |= trace_write_begin(a, 1, 0, 0, OSPG_P, OSPG_LOC_NONE, 0, 0,
                                NULL, 0);
        rc |= trace_write_begin(a, 1, 0, 1, OSPG_P, OSPG_LOC_NONE, 0, 0,
                                NULL, 0);
        rc |= trace_write_work(b, 1, 0, 10, 5, 0, 0);
        rc |= trace_write_end(b, 1, 1, OSPG_LOC_NONE);
        rc |= trace_write_end(b, 0, 2, OSPG_LOC_NONE);
        break;
    case FORGE_BEGUN_IN_BOTH: {
        /* one id live in both streams at once (tagged as the profiler tags
         * stream b's ids): with a map per stream, each copy would have
         * been profiled on its own.  Each copy is completed only after
         * the other stream has begun its own (ya, yb: each stream names a
         * node the other begins after x), so the copies overlap in every
         * order the threads apply the streams in. */
        uint64_t x = (2ull << 40) | 1, ya = (1ull << 40) | 2,
                 yb = (2ull << 40) | 3;
        rc |= trace_write_begin(a, x, 0, 0, OSPG_P, OSPG_LOC_NONE, 0, 0,
                                NULL, 0);
        rc |= trace_write_begin(a, ya, 0, 2, OSPG_P, OSPG_LOC_NONE, 0, 0,
                                NULL, 0);
        rc |= trace_write_work(a, yb, 0, 10, 5, 0, 0);
        rc |= trace_write_end(a, yb, 1, OSPG_LOC_NONE);
        rc |= trace_write_work(a, x, 0, 10, 5, 0, 0);
        rc |= trace_write_end(a, x, 1, OSPG_LOC_NONE);
        rc |= trace_write_begin(b, x, 0, 1, OSPG_P, OSPG_LOC_NONE, 0, 0,
                                NULL, 0);
        rc |= trace_write_begin(b, yb, 0, 3, OSPG_P, OSPG_LOC_NONE, 0, 0,
                                NULL, 0);
        rc |= trace_write_work(b, ya, 0, 10, 5, 0, 0);
        rc |= trace_write_end(b, ya, 1, OSPG_LOC_NONE);
        rc |= trace_write_work(b, x, 0, 10, 5, 0, 0);
        rc |= trace_write_end(b, x, 1, OSPG_LOC_NONE);
        rc |= trace_write_end(b, 0, 4, OSPG_LOC_NONE);
        break;
    }
    case FORGE_LOC_TWICE: /* location 5 defined differently by b */
        rc |= trace_write_loc(b, 5, "task", "g.c:9");
        rc |= trace_write_begin(a, 1, 0, 0, OSPG_P, 5, 0, 0, NULL, 0);
        rc |= trace_write_work(a, 1, 0, 10, 5, 0, 0);
        rc |= trace_write_end(a, 1, 1, OSPG_LOC_NONE);
        rc |= trace_write_end(b, 0, 1, OSPG_LOC_NONE);
        break;
    default: /* a child of node 1 after 1 completed and folded */
        rc |= trace_write_begin(a, 1, 0, 0, OSPG_P, OSPG_LOC_NONE, 0, 0,
                                NULL, 0);
        rc |= trace_write_work(a, 1, 0, 10, 5, 0, 0);
        rc |= trace_write_end(a, 1, 1, OSPG_LOC_NONE);
        for (uint64_t i = 2; i < 300; i++) /* stream A runs on meanwhile */
            rc |= trace_write_begin(a, i, 0, i - 1, OSPG_P, OSPG_LOC_NONE,
                                    0, 0, NULL, 0) |
                  trace_write_work(a, i, 0, 1, 5, 0, 0) |
                  trace_write_end(a, i, 1, OSPG_LOC_NONE);
        rc |= trace_write_work(b, 1, 0, 10, 5, 0, 0);
        rc |= trace_write_end(b, 0, 299, OSPG_LOC_NONE);
        break;
    }
    rc |= trace_writer_close(a);
    rc |= trace_writer_close(b);
    if (rc)
        abort();
    const char *pp[2] = {pa, pb};
    ospg_profile p;
    char err[512] = "";
    int r = replay_both(pp, 2, &p, err, sizeof err);
    CHECK(r == -1 && strstr(err, "forge-") && !strchr(err, '\n'),
          "forged trace %d: rc %d, '%s'", kind, r, err);
    if (r == 0)
        ospg_profile_free(&p);
    unlink(pa);
    unlink(pb);
}

/* Generated traces with one thing wrong in them (an event lost or
 * repeated, a parent, index, child count or group owner changed): one
 * thread and three must give the same profile or the same error, and
 * neither may crash or read freed memory (the sanitizer builds). */
enum { MANGLE_DROP, MANGLE_REPEAT, MANGLE_PARENT, MANGLE_INDEX, MANGLE_COUNT,
       MANGLE_OWNER, MANGLE_KINDS };

static void mangle(gg_graph *g, order *o, gg_rng *rng, int kind)
{
    size_t n = 1 + gg_below(rng, g->nnodes - 1); /* never the root */
    gg_node *nd = &g->nodes[n];
    size_t at = gg_below(rng, o->n);
    switch (kind) {
    case MANGLE_DROP:
        memmove(&o->ev[at], &o->ev[at + 1], (o->n - at - 1) * sizeof(event));
        o->n--;
        break;
    case MANGLE_REPEAT:
        push(o, o->ev[at].type, o->ev[at].x);
        break;
    case MANGLE_PARENT:
        nd->parent = (int32_t)gg_below(rng, g->nnodes);
        break;
    case MANGLE_INDEX:
        nd->idx = (uint32_t)gg_below(rng, nd->idx + 2);
        break;
    case MANGLE_COUNT:
        if (nd->kind != GG_W)
            nd->nkids = nd->nkids ? nd->nkids + (gg_below(rng, 2) ? 1 : -1u)
                                  : 1;
        break;
    default:
        if (g->ngroups)
            g->groups[gg_below(rng, g->ngroups)].owner =
                (int32_t)gg_below(rng, g->nnodes);
        break;
    }
}

static void test_mangled(const char *dir, unsigned rounds)
{
    for (unsigned i = 0; i < rounds; i++) {
        uint64_t seed = 0x3a9d0000u + i;
        gg_params gp = {seed, 20 + (size_t)(i % 20) * 10, GG_SHAPE_ANY,
                        GG_WEIGHTS_MIXED};
        gg_graph g;
        if (gg_generate(&gp, &g)) {
            failed++;
            continue;
        }
        gg_rng rng;
        gg_rng_seed(&rng, seed);
        order o = {0};
        random_order(&g, &rng, &o);
        mangle(&g, &o, &rng, (int)(i % MANGLE_KINDS));
        unsigned nstreams = 2 + (unsigned)gg_below(&rng, NSTREAMS_MAX - 1);
        char paths[NSTREAMS_MAX][256];
        const char *pp[NSTREAMS_MAX];
        if (write_trace(&g, &o, nstreams, &rng, paths, dir)) {
            failed++;
        } else {
            for (unsigned k = 0; k < nstreams; k++)
                pp[k] = paths[k];
            ospg_profile p;
            char err[512] = "";
            int rr = replay_both(pp, nstreams, &p, err, sizeof(err));
            if (rr == 0)
                ospg_profile_free(&p);
            for (unsigned k = 0; k < nstreams; k++)
                unlink(paths[k]);
        }
        free(o.ev);
        gg_free(&g);
    }
}

/* Long traces whose streams keep waiting on each other (each event on a
 * stream drawn at random): the threads give up and one goes on alone
 * (replay_stats.solo), and the profile is still the oracle's. */
static void test_solo(const char *dir, size_t nscen,
                      const ospg_scenario *scen)
{
    int solos = 0;
    for (unsigned i = 0; i < 4; i++) {
        uint64_t seed = 0x50100000u + i;
        gg_params gp = {seed, 40000, GG_SHAPE_ANY, GG_WEIGHTS_MIXED};
        gg_graph g;
        oracle_profile op;
        if (gg_generate(&gp, &g)) {
            failed++;
            continue;
        }
        if (oracle_compute(&g, nscen, scen, &op)) {
            failed++;
            gg_free(&g);
            continue;
        }
        gg_rng rng;
        gg_rng_seed(&rng, seed);
        order o = {0};
        random_order(&g, &rng, &o);
        char paths[NSTREAMS_MAX][256];
        const char *pp[NSTREAMS_MAX];
        if (write_trace(&g, &o, 2, &rng, paths, dir)) {
            failed++;
        } else {
            pp[0] = paths[0];
            pp[1] = paths[1];
            loctab *lt = loctab_new();
            ospg_profile p;
            replay_stats st;
            char err[512];
            replay_hooks hooks = {.region_tags = gg_region_tags,
                                  .region_tags_arg = &g, .threads = 2};
            int rc = replay_files(pp, 2, nscen, scen, lt, &hooks, &p, &st,
                                  err, sizeof(err));
            CHECK(rc == 0 && st.threads == 2, "solo seed %llu: %s",
                  (unsigned long long)seed, rc ? err : "one thread");
            if (rc == 0) {
                solos += st.solo;
                compare(&op, &p, seed);
                ospg_profile_free(&p);
            }
            loctab_free(lt);
            unlink(paths[0]);
            unlink(paths[1]);
        }
        free(o.ev);
        oracle_free(&op);
        gg_free(&g);
    }
    CHECK(solos > 0, "no long trace went on with one thread");
}

int main(int argc, char **argv)
{
    unsigned rounds = argc > 1 ? (unsigned)atoi(argv[1]) : 600;
    unsigned first = argc > 2 ? (unsigned)atoi(argv[2]) : 0;
    char dir[] = "/tmp/whatif-test-replay-XXXXXX";
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    uint32_t regions[] = {1, 2};
    uint32_t locs[] = {1, 3};
    ospg_scenario scen[3] = {
        {0},
        {.factor = 4.0, .regions = regions, .nregions = 2},
        {.factor = INFINITY, .locs = locs, .nlocs = 2},
    };
    test_groups(dir);
    test_fixed_locs(dir);
    for (int k = 0; k < FORGE_COUNT; k++)
        forged_case(dir, k);
    test_solo(dir, 3, scen);
    test_mangled(dir, rounds);
    for (unsigned i = first; i < first + rounds; i++) {
        uint64_t seed = 0x5eed0000u + i;
        gg_params gp = {seed, 20 + (size_t)(i % 40) * 10, GG_SHAPE_ANY,
                        GG_WEIGHTS_MIXED};
        gg_graph g;
        if (gg_generate(&gp, &g)) {
            fprintf(stderr, "seed %llu: generator failed\n",
                    (unsigned long long)seed);
            failed++;
            continue;
        }
        oracle_profile op;
        if (oracle_compute(&g, 3, scen, &op)) {
            failed++;
            gg_free(&g);
            continue;
        }
        gg_rng rng;
        gg_rng_seed(&rng, seed ^ 0xabcdef);
        order o = {0};
        random_order(&g, &rng, &o);
        unsigned nstreams = 1 + (unsigned)gg_below(&rng, NSTREAMS_MAX);
        if (getenv("REPLAY_DUMP")) {
            gg_dump(&g, stderr);
            for (size_t k = 0; k < o.n; k++)
                fprintf(stderr, "ev %zu: %s %d\n", k,
                        o.ev[k].type == EV_BEGIN ? "begin" : "end",
                        o.ev[k].x);
        }
        char paths[NSTREAMS_MAX][256];
        if (write_trace(&g, &o, nstreams, &rng, paths, dir)) {
            fprintf(stderr, "seed %llu: writing failed: %s\n",
                    (unsigned long long)seed, strerror(errno));
            failed++;
        } else {
            const char *pp[NSTREAMS_MAX];
            for (unsigned s = 0; s < nstreams; s++)
                pp[s] = paths[s];
            loctab *lt = loctab_new();
            ospg_profile p;
            replay_stats st;
            char err[512];
            /* one thread, and one per stream (forced, whatever the CPUs):
             * the threads must not have given up (st.threads) */
            for (unsigned nt = 1; nt <= 3; nt += 2) {
                replay_hooks hooks = {.region_tags = gg_region_tags,
                                      .region_tags_arg = &g,
                                      .threads = nt};
                unsigned want = nstreams < 2 ? 1 : nt < nstreams ? nt
                                                                 : nstreams;
                int rc = replay_files(pp, nstreams, 3, scen, lt, &hooks, &p,
                                      &st, err, sizeof(err));
                CHECK(rc == 0 && st.threads == want,
                      "seed %llu (%s, %u streams, %u threads): %s",
                      (unsigned long long)seed, g.shape, nstreams, nt,
                      rc ? err : "gave up");
                if (rc == 0) {
                    compare(&op, &p, seed);
                    CHECK(loctab_get(lt, 1) != NULL,
                          "seed %llu: location lost",
                          (unsigned long long)seed);
                    ospg_profile_free(&p);
                }
            }
            loctab_free(lt);
            if (i % 4 == 0)
                truncated(paths, nstreams, &rng, dir, seed);
            for (unsigned s = 0; s < nstreams; s++)
                unlink(paths[s]);
        }
        free(o.ev);
        oracle_free(&op);
        gg_free(&g);
    }
    rmdir(dir);
    CHECK(fixed_traces > 0, "no trace was written with fixed locations");
    printf("%d passed, %d failed (%lu traces with fixed locations)\n",
           passed, failed, fixed_traces);
    return failed != 0;
}
