/* srcloc.c - turns "module+0xOFFSET" locations into file:line.
 *
 * The profiler records code addresses only (resolving DWARF inside the
 * profiled program would cost it time and memory); the analyzer resolves
 * them here, once per module, with binutils' addr2line, which reads clang
 * 19's DWARF 5.  PIE executables and shared objects are mapped at offset
 * 0; a non-PIE executable's offsets are relative to its first PT_LOAD.
 */
#include "srcloc.h"

#include <elf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>
#include <string.h>
#include <unistd.h>

/* The address addr2line expects for offset off in module path. */
static int module_base(const char *path, uint64_t *base)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return -1;
    Elf64_Ehdr eh;
    int rc = -1;
    if (fread(&eh, sizeof(eh), 1, f) != 1 ||
        memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
        eh.e_ident[EI_CLASS] != ELFCLASS64)
        goto out;
    *base = 0;
    if (eh.e_type == ET_EXEC) {
        for (unsigned i = 0; i < eh.e_phnum; i++) {
            Elf64_Phdr ph;
            if (fseek(f, (long)(eh.e_phoff + (uint64_t)i * eh.e_phentsize),
                      SEEK_SET) ||
                fread(&ph, sizeof(ph), 1, f) != 1)
                goto out;
            if (ph.p_type == PT_LOAD) {
                *base = ph.p_vaddr & ~(uint64_t)0xfff;
                break;
            }
        }
    }
    rc = 0;
out:
    fclose(f);
    return rc;
}

/* Shortens an absolute source path to one relative to the working
 * directory when it lies below it. */
static const char *shorten(const char *file, const char *cwd)
{
    size_t n = strlen(cwd);
    if (n && !strncmp(file, cwd, n) && file[n] == '/')
        return file + n + 1;
    return file;
}

static void quote(char *dst, size_t len, const char *src)
{
    size_t j = 0;
    if (len < 3)
        return;
    dst[j++] = '\'';
    for (; *src && j + 5 < len; src++) {
        if (*src == '\'') {
            memcpy(dst + j, "'\\''", 4);
            j += 4;
        } else {
            dst[j++] = *src;
        }
    }
    dst[j++] = '\'';
    dst[j] = 0;
}

#define LOOKBACK 48 /* bytes searched before a call without a line */

/* file:line of the instruction at addr, or of the closest instruction
 * before it that has a line: optimized code often gives the call into the
 * runtime line 0.  resolved stays empty when nothing is found. */
static void lookup(const char *module, uint64_t addr, const char *cwd,
                   char *resolved, size_t len)
{
    char cmd[2 * PATH_MAX + 128], q[2 * PATH_MAX];
    char tmp[] = "/tmp/whatif-addr-XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "w");
    if (!f) {
        close(fd);
        unlink(tmp);
        return;
    }
    for (uint64_t k = 0; k < LOOKBACK && k <= addr; k++)
        fprintf(f, "0x%" PRIx64 "\n", addr - k);
    fclose(f);
    quote(q, sizeof(q), module);
    snprintf(cmd, sizeof(cmd), "addr2line -e %s < %s 2>/dev/null", q, tmp);
    FILE *p = popen(cmd, "r");
    if (p) {
        char line[PATH_MAX + 64];
        while (!resolved[0] && fgets(line, sizeof(line), p)) {
            line[strcspn(line, " \n")] = 0;
            char *colon = strrchr(line, ':');
            if (line[0] == '?' || !colon || !strcmp(colon, ":0") ||
                !strcmp(colon, ":?"))
                continue;
            snprintf(resolved, len, "%s", shorten(line, cwd));
        }
        pclose(p);
    }
    unlink(tmp);
}

int srcloc_resolve(const loctab *in, loctab **out, size_t *unresolved,
                   char *warn, size_t warnlen)
{
    *unresolved = 0;
    if (warn && warnlen)
        warn[0] = 0;
    loctab *lt = loctab_new();
    if (!lt)
        return -1;
    char cwd[PATH_MAX] = "";
    if (!getcwd(cwd, sizeof(cwd)))
        cwd[0] = 0;
    for (const loctab_entry *e = loctab_first(in); e; e = loctab_next(in, e)) {
        char where[PATH_MAX + 64];
        snprintf(where, sizeof(where), "%s", e->where);
        char *plus = strrchr(where, '+');
        uint64_t off, base;
        if (e->id != 0 && plus && !strncmp(plus, "+0x", 3) &&
            sscanf(plus + 1, "%" SCNx64, &off) == 1) {
            *plus = 0;
            char resolved[PATH_MAX + 128] = "";
            if (module_base(where, &base) == 0)
                lookup(where, base + off, cwd, resolved, sizeof(resolved));
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
            if (!runtime && warn && !warn[0])
                snprintf(warn, warnlen,
                         "no debug information for %s: locations stay "
                         "binary+offset (build with -g)", where);
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
    *out = lt;
    return 0;
fail:
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
        for (size_t s = 0; s < p->nscen; s++) {
            into->span[s] += ls->span[s];
            into->critical[s] += ls->critical[s];
        }
    }
    int merged = (int)(p->nlocs - out);
    p->nlocs = out;
    return merged;
}
