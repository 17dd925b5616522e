/* timeline.c - instantaneous parallelism from grain intervals (timeline.h).
 *
 * Each thread's intervals are sorted and merged into their union, and so
 * are its waits, which are then cut out of it; the resulting ends, sorted,
 * are swept once, and every stretch between two ends adds its count times
 * its length to the bins it covers.
 */
#include "timeline.h"

#include <stdlib.h>
#include <string.h>

typedef struct span {
    uint64_t start, end;
} span;

typedef struct lane { /* one thread's intervals */
    span *v;
    size_t n, cap;
} lane;

struct timeline {
    lane *lanes;  /* grains, by thread */
    uint32_t nlanes;
    lane *waits;  /* waits, by thread */
    uint32_t nwaits;
};

typedef struct edge { /* a union's start (+1) or end (-1) */
    uint64_t at;
    int delta;
} edge;

timeline *timeline_new(void)
{
    return calloc(1, sizeof(timeline));
}

void timeline_free(timeline *t)
{
    if (!t)
        return;
    for (uint32_t i = 0; i < t->nlanes; i++)
        free(t->lanes[i].v);
    for (uint32_t i = 0; i < t->nwaits; i++)
        free(t->waits[i].v);
    free(t->lanes);
    free(t->waits);
    free(t);
}

/* Adds [start, end) to thread's lane of *lanes (grown to hold it). */
static int lane_add(lane **lanes, uint32_t *nlanes, uint32_t thread,
                    uint64_t start, uint64_t end)
{
    /* an empty interval runs nothing: it would only stretch the run */
    if (thread >= TIMELINE_THREADS_MAX || start >= end)
        return 0;
    if (thread >= *nlanes) {
        lane *l = realloc(*lanes, (thread + 1) * sizeof(*l));
        if (!l)
            return -1;
        memset(l + *nlanes, 0, (thread + 1 - *nlanes) * sizeof(*l));
        *lanes = l;
        *nlanes = thread + 1;
    }
    lane *l = &(*lanes)[thread];
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 64;
        span *v = realloc(l->v, cap * sizeof(*v));
        if (!v)
            return -1;
        l->v = v;
        l->cap = cap;
    }
    l->v[l->n++] = (span){start, end};
    return 0;
}

int timeline_add(timeline *t, uint32_t thread, uint64_t start, uint64_t end)
{
    return lane_add(&t->lanes, &t->nlanes, thread, start, end);
}

int timeline_add_wait(timeline *t, uint32_t thread, uint64_t start,
                      uint64_t end)
{
    return lane_add(&t->waits, &t->nwaits, thread, start, end);
}

static int by_start(const void *a, const void *b)
{
    const span *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* The order of edges at one instant does not matter: only stretches of
 * positive length are counted. */
static int by_time(const void *a, const void *b)
{
    const edge *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Merges a lane into the union of its intervals, in place. */
static void merge(lane *l)
{
    if (!l->n)
        return;
    qsort(l->v, l->n, sizeof(*l->v), by_start);
    size_t k = 0;
    for (size_t i = 1; i < l->n; i++) {
        if (l->v[i].start <= l->v[k].end) {
            if (l->v[i].end > l->v[k].end)
                l->v[k].end = l->v[i].end;
        } else {
            l->v[++k] = l->v[i];
        }
    }
    l->n = k + 1;
}

/* Cuts the union of waits w (merged) out of the union l (merged): what
 * is left may be split, so it is rebuilt.  Returns 0, or -1 when out of
 * memory. */
static int cut(lane *l, const lane *w)
{
    if (!l->n || !w->n)
        return 0;
    span *out = malloc((l->n + w->n) * sizeof(*out));
    if (!out)
        return -1;
    size_t n = 0, j = 0;
    for (size_t i = 0; i < l->n; i++) {
        uint64_t from = l->v[i].start, to = l->v[i].end;
        while (j < w->n && w->v[j].end <= from)
            j++;
        for (size_t k = j; k < w->n && w->v[k].start < to; k++) {
            if (w->v[k].start > from)
                out[n++] = (span){from, w->v[k].start};
            if (w->v[k].end > from)
                from = w->v[k].end;
        }
        if (from < to)
            out[n++] = (span){from, to};
    }
    free(l->v);
    l->cap = l->n + w->n; /* what out holds */
    l->v = out;
    l->n = n;
    return 0;
}

/* Adds count over [from, to) to the bins, from bin *k on (bins are met in
 * time order, so *k only moves forward). */
static void cover(timeline_bin *bins, size_t nb, size_t *k, uint64_t from,
                  uint64_t to, uint32_t count)
{
    while (*k < nb && bins[*k].end <= from)
        (*k)++;
    for (size_t j = *k; j < nb && bins[j].start < to; j++) {
        uint64_t s = from > bins[j].start ? from : bins[j].start;
        uint64_t e = to < bins[j].end ? to : bins[j].end;
        if (e <= s)
            continue;
        bins[j].mean += (double)count * (double)(e - s);
        if (count > bins[j].max)
            bins[j].max = count;
    }
}

int timeline_bins(timeline *t, size_t nbins, timeline_bin **bins,
                  size_t *nout, timeline_summary *sum)
{
    memset(sum, 0, sizeof(*sum));
    *bins = NULL;
    *nout = 0;
    size_t nedges = 0;
    sum->first = UINT64_MAX;
    for (uint32_t i = 0; i < t->nlanes; i++) {
        lane *l = &t->lanes[i];
        merge(l);
        if (i < t->nwaits) {
            merge(&t->waits[i]);
            if (cut(l, &t->waits[i]))
                return -1;
        }
        if (!l->n)
            continue;
        sum->threads++;
        nedges += 2 * l->n;
        if (l->v[0].start < sum->first)
            sum->first = l->v[0].start;
        if (l->v[l->n - 1].end > sum->last)
            sum->last = l->v[l->n - 1].end;
        for (size_t j = 0; j < l->n; j++)
            sum->busy += l->v[j].end - l->v[j].start;
    }
    if (!nedges) {
        sum->first = 0;
        return 0;
    }
    edge *ev = malloc(nedges * sizeof(*ev));
    if (!ev)
        return -1;
    size_t m = 0;
    for (uint32_t i = 0; i < t->nlanes; i++)
        for (size_t j = 0; j < t->lanes[i].n; j++) {
            ev[m++] = (edge){t->lanes[i].v[j].start, +1};
            ev[m++] = (edge){t->lanes[i].v[j].end, -1};
        }
    qsort(ev, m, sizeof(*ev), by_time);
    uint64_t len = sum->last - sum->first;
    size_t nb = nbins < len ? nbins : (size_t)len;
    if (nb == 0)
        nb = 1;
    timeline_bin *b = calloc(nb, sizeof(*b));
    if (!b) {
        free(ev);
        return -1;
    }
    for (size_t k = 0; k < nb; k++) {
        b[k].start = sum->first + (uint64_t)((unsigned __int128)len * k / nb);
        b[k].end =
            sum->first + (uint64_t)((unsigned __int128)len * (k + 1) / nb);
    }
    uint32_t running = 0;
    uint64_t prev = sum->first;
    size_t k = 0;
    for (size_t i = 0; i < m; i++) {
        if (ev[i].at > prev && running)
            cover(b, nb, &k, prev, ev[i].at, running);
        prev = ev[i].at;
        running = (uint32_t)((int64_t)running + ev[i].delta);
    }
    free(ev);
    for (size_t j = 0; j < nb; j++) {
        uint64_t w = b[j].end - b[j].start;
        b[j].mean = w ? b[j].mean / (double)w : 0;
        if (b[j].max > sum->max)
            sum->max = b[j].max;
    }
    sum->mean = len ? (double)sum->busy / (double)len : 0;
    *bins = b;
    *nout = nb;
    return 0;
}
