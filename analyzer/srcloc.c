/* srcloc.c - turns the "module+0xOFFSET" locations a profile still holds
 * into file:line, and merges rows that name the same directive.
 *
 * The profiler resolves each construct's address when it first sees it
 * (symbols.h); what it could not resolve (no debug information in the
 * run, a module gone since) is tried again here, once per module.
 */
#include "srcloc.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbols.h"

/* Why module path has no line for a location: one clause. */
static void why_unresolved(sym_table *syms, const report_meta *meta,
                           const char *path, char *buf, size_t len)
{
    char key[PATH_MAX + 16], now[129];
    snprintf(key, sizeof(key), "build-id %s", path);
    const char *then = meta ? report_meta_get(meta, key) : NULL;
    int rc = sym_build_id(syms, path, now, sizeof(now));
    if (rc && errno == ENOENT)
        snprintf(buf, len, "%s is gone (it is where the run's code was)",
                 path);
    else if (then && strcmp(then, "none") && (rc || strcmp(then, now)))
        snprintf(buf, len, "%s was rebuilt since the run (its build-id "
                 "differs): run the program again to see its lines", path);
    else
        snprintf(buf, len, "no debug information for %s (build with -g)",
                 path);
}

int srcloc_resolve(const loctab *in, const report_meta *meta, loctab **out,
                   size_t *unresolved, char *warn, size_t warnlen)
{
    *unresolved = 0;
    if (warn && warnlen)
        warn[0] = 0;
    loctab *lt = loctab_new();
    sym_table *syms = sym_new();
    if (!lt || !syms)
        goto fail;
    for (const loctab_entry *e = loctab_first(in); e; e = loctab_next(in, e)) {
        char where[PATH_MAX + 64];
        snprintf(where, sizeof(where), "%s", e->where);
        char *plus = strrchr(where, '+');
        uint64_t off;
        if (e->id != 0 && plus && !strncmp(plus, "+0x", 3) && plus[3] &&
            strspn(plus + 3, "0123456789abcdefABCDEF") == strlen(plus + 3) &&
            sscanf(plus + 1, "%" SCNx64, &off) == 1) {
            *plus = 0;
            char resolved[PATH_MAX + 128] = "";
            /* a rebuilt binary's lines would be the new code's */
            char key[PATH_MAX + 16], now[129];
            snprintf(key, sizeof(key), "build-id %s", where);
            const char *then = meta ? report_meta_get(meta, key) : NULL;
            if (!then || !strcmp(then, "none") ||
                (sym_build_id(syms, where, now, sizeof(now)) == 0 &&
                 !strcmp(then, now)))
                sym_lookup(syms, where, off, resolved, sizeof(resolved),
                           NULL, 0);
            if (resolved[0]) {
                if (loctab_set(lt, e->id, e->directive, resolved))
                    goto fail;
                continue;
            }
            /* libomp reports some constructs (taskloop) at an address of
             * its own: no user line exists, and no rebuild would help. */
            const char *mod = strrchr(where, '/');
            mod = mod ? mod + 1 : where;
            int runtime = !strncmp(mod, "libomp", 6) ||
                          !strncmp(mod, "libiomp", 7);
            if (!runtime)
                (*unresolved)++;
            if (!runtime && warn && !warn[0]) {
                char why[PATH_MAX + 128];
                why_unresolved(syms, meta, where, why, sizeof(why));
                snprintf(warn, warnlen, "%s: its locations stay "
                         "binary+offset", why);
            }
            /* Name it by its binary, not its full path. */
            const char *base_name = strrchr(where, '/');
            char shortname[PATH_MAX + 128];
            snprintf(shortname, sizeof(shortname), "%s+0x%" PRIx64,
                     base_name ? base_name + 1 : where, off);
            if (loctab_set(lt, e->id, e->directive, shortname))
                goto fail;
            continue;
        }
        if (loctab_set(lt, e->id, e->directive, e->where))
            goto fail;
    }
    sym_free(syms);
    *out = lt;
    return 0;
fail:
    sym_free(syms);
    loctab_free(lt);
    return -1;
}

/* Finds the first id named like e (same directive and where). */
static uint32_t first_with_name(const loctab *lt, const loctab_entry *e)
{
    for (const loctab_entry *f = loctab_first(lt); f; f = loctab_next(lt, f))
        if (!strcmp(f->directive, e->directive) && !strcmp(f->where, e->where))
            return f->id;
    return e->id;
}

int srcloc_merge_profile(ospg_profile *p, const loctab *lt)
{
    size_t out = 0;
    for (size_t i = 0; i < p->nlocs; i++) {
        ospg_loc_stat *ls = &p->locs[i];
        const loctab_entry *e = loctab_get(lt, ls->loc);
        uint32_t canon = e ? first_with_name(lt, e) : ls->loc;
        ospg_loc_stat *into = NULL;
        for (size_t j = 0; j < out && !into; j++)
            if (p->locs[j].loc == canon)
                into = &p->locs[j];
        if (!into) {
            p->locs[out] = *ls;
            p->locs[out].loc = canon;
            out++;
            continue;
        }
        into->instances += ls->instances;
        into->work += ls->work;
        if (ls->grains && (!into->grains || ls->grain_min < into->grain_min))
            into->grain_min = ls->grain_min;
        into->grains += ls->grains;
        into->grain_work += ls->grain_work;
        if (ls->grain_max > into->grain_max)
            into->grain_max = ls->grain_max;
        if (!into->grain_hist) /* the profile's storage holds both */
            into->grain_hist = ls->grain_hist;
        else if (ls->grain_hist)
            for (size_t b = 0; b < OSPG_HIST_BUCKETS; b++)
                into->grain_hist[b] += ls->grain_hist[b];
        for (size_t s = 0; s < p->nscen; s++) {
            /* a tag's span is a longest chain: of two, the longer, a lower
             * bound of theirs together (the profiler interns both under
             * one name from the start: only unresolved traces get here) */
            if (ls->tag || into->tag)
                into->span[s] = ls->span[s] > into->span[s] ? ls->span[s]
                                                           : into->span[s];
            else
                into->span[s] += ls->span[s];
            into->critical[s] += ls->critical[s];
        }
        into->tag |= ls->tag;
        into->line |= ls->line;
    }
    int merged = (int)(p->nlocs - out);
    p->nlocs = out;
    return merged;
}
