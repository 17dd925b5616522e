/* online.c - feeds the analysis core from the profiler's callbacks. */
#include "online.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <uthash.h>

#include "loctab.h"
#include "report.h"
#include "spin.h"
#include "srcloc.h"

typedef struct group_entry {
    uint64_t id;
    ospg_group *group;
    UT_hash_handle hh;
} group_entry;

static spin_lock lock = SPIN_LOCK_INIT;
static ospg *graph;
static loctab *locs;
static report_meta *meta;
static group_entry *groups;
static int failed;            /* the first core error, sticky */
static int closed;            /* the profile is written: ignore the rest */
static char fail_what[128];

/* The core frees a group with its owner: forget its id then. */
static void on_release(void *arg, void *user)
{
    (void)arg;
    group_entry *e = user;
    HASH_DEL(groups, e);
    free(e);
}

static size_t nscen = 1;
static ospg_scenario *scen;
static const char **scen_names;
static double *scen_factors;

int online_setup(const double *factors, size_t nf)
{
    nscen = 1 + nf;
    scen = calloc(nscen, sizeof(*scen));
    scen_names = calloc(nscen, sizeof(*scen_names));
    scen_factors = calloc(nscen, sizeof(*scen_factors));
    if (!scen || !scen_names || !scen_factors)
        return -1;
    scen_names[0] = "measured";
    scen_factors[0] = 1;
    for (size_t i = 0; i < nf; i++) {
        scen[1 + i].factor = factors[i];
        scen[1 + i].all_regions = 1;
        scen_names[1 + i] = "all";
        scen_factors[1 + i] = factors[i];
    }
    graph = ospg_new(nscen, scen);
    locs = loctab_new();
    meta = report_meta_new();
    if (!graph || !locs || !meta)
        return -1;
    ospg_set_release_hook(graph, on_release, NULL);
    return 0;
}

ospg_node *online_root(void)
{
    return ospg_root(graph);
}

/* Remembers the first failure; called with the lock held. */
static void note_failure(const char *what, int rc)
{
    if (failed)
        return;
    failed = rc ? rc : OSPG_ERR_STATE;
    snprintf(fail_what, sizeof(fail_what), "%s: %s", what,
             ospg_strerror(failed));
}

ospg_node *online_begin(ospg_node *parent, uint64_t idx, ospg_kind kind,
                        uint32_t loc, uint64_t group, ospg_node *owner,
                        const ospg_dep *deps, size_t ndeps)
{
    ospg_node *n = NULL;
    spin_acquire(&lock);
    if (failed || closed || !parent)
        goto out;
    ospg_group *gr = NULL;
    if (group) {
        group_entry *e;
        HASH_FIND(hh, groups, &group, sizeof(group), e);
        if (!e) {
            e = calloc(1, sizeof(*e));
            if (!e || !(e->group = ospg_group_new(graph, owner, loc))) {
                free(e);
                note_failure("worksharing group", ospg_error(graph));
                goto out;
            }
            e->id = group;
            HASH_ADD(hh, groups, id, sizeof(e->id), e);
            ospg_group_set_user(e->group, e);
        }
        gr = e->group;
    }
    int rc = 0;
    n = ospg_begin(graph, parent, idx, kind, loc, gr, deps, ndeps, &rc);
    if (!n)
        note_failure("begin", rc);
out:
    spin_release(&lock);
    return n;
}

void online_work(ospg_node *parent, uint64_t idx, uint64_t work, uint32_t loc,
                 uint32_t region)
{
    spin_acquire(&lock);
    if (!failed && !closed) {
        int rc = parent ? ospg_work(graph, parent, idx, work, loc, region)
                        : OSPG_ERR_STATE;
        if (rc)
            note_failure("work", rc);
    }
    spin_release(&lock);
}

void online_end(ospg_node *node, uint64_t nchildren, uint32_t loc)
{
    spin_acquire(&lock);
    if (!failed && !closed) {
        int rc = node ? ospg_end(graph, node, nchildren, loc) : OSPG_ERR_STATE;
        if (rc)
            note_failure("end", rc);
    }
    spin_release(&lock);
}

void online_loc(uint32_t loc, const char *directive, const char *where)
{
    spin_acquire(&lock);
    loctab_set(locs, loc, directive, where);
    spin_release(&lock);
}

void online_meta(const char *key, const char *value)
{
    spin_acquire(&lock);
    if (!report_meta_reserved(key))
        report_meta_set(meta, key, value);
    spin_release(&lock);
}

int online_finish(uint64_t root_nchildren, int partial, const char *dir,
                  char *err, size_t errlen)
{
    int ret = -1;
    ospg_profile prof;
    loctab *named = NULL;
    memset(&prof, 0, sizeof(prof));
    spin_acquire(&lock);
    if (closed) {
        snprintf(err, errlen, "the profile was already written");
        goto out;
    }
    closed = 1;
    if (failed) {
        snprintf(err, errlen, "the graph could not be built (%s)", fail_what);
        goto out;
    }
    if (partial)
        report_meta_set(meta, "complete",
                        "no: the program exited inside an OpenMP construct; "
                        "constructs still open were closed as they stood");
    int rc = partial ? ospg_finish_partial(graph, &prof)
                     : ospg_finish(graph, root_nchildren, &prof);
    if (rc) {
        snprintf(err, errlen,
                 "the graph is incomplete: %llu nodes never completed (%s)",
                 (unsigned long long)(ospg_live_nodes(graph) - 1),
                 ospg_strerror(rc));
        goto out;
    }
    char num[32];
    snprintf(num, sizeof(num), "%llu",
             (unsigned long long)ospg_peak_live_nodes(graph));
    report_meta_set(meta, "peak_live_nodes", num);
    size_t unresolved = 0;
    char warn[512] = "";
    if (srcloc_resolve(locs, &named, &unresolved, warn, sizeof(warn))) {
        snprintf(err, errlen, "out of memory");
        goto out;
    }
    srcloc_merge_profile(&prof, named);
    if (report_write_all(dir, &prof, named, meta, scen_names, scen_factors,
                         err, errlen))
        goto out;
    if (nscen > 1) {
        char path[4200];
        snprintf(path, sizeof(path), "%s/whatif.csv", dir);
        if (report_write_whatif_csv(path, &prof, named, scen_names,
                                    scen_factors, err, errlen))
            goto out;
    }
    if (unresolved)
        snprintf(err, errlen, "warning: %s", warn);
    else
        err[0] = 0;
    ret = 0;
out:
    ospg_profile_free(&prof);
    loctab_free(named);
    spin_release(&lock);
    return ret;
}
