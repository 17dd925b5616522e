/* regions.c - interning of what-if region paths.
 *
 * Entries live in blocks that never move, so a path id read by the folding
 * code stays valid while other threads add paths.
 */
#include "regions.h"

#include <elf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#define BLOCK 4096u
#define MAX_BLOCKS 4096u /* 16 M paths */

typedef struct path_key {
    uint32_t parent, loc;
    uint64_t factor_milli;
} path_key;

typedef struct path_entry {
    path_key key;
    uint32_t id;
    double eff_factor; /* innermost own factor along the path, 0: none */
    UT_hash_handle hh;
} path_entry;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static path_entry *by_key;
static _Atomic(path_entry *) blocks[MAX_BLOCKS];
static uint32_t next_id = 1;
static atomic_int have_factors;

static path_entry *entry(uint32_t id)
{
    if (id == 0 || id / BLOCK >= MAX_BLOCKS)
        return NULL;
    path_entry *b = atomic_load_explicit(&blocks[id / BLOCK],
                                         memory_order_acquire);
    return b ? &b[id % BLOCK] : NULL;
}

uint32_t regions_enter(uint32_t parent, uint32_t loc, uint64_t factor_milli,
                       int *is_new)
{
    path_key key;
    memset(&key, 0, sizeof(key));
    key.parent = parent;
    key.loc = loc;
    key.factor_milli = factor_milli;
    *is_new = 0;
    pthread_mutex_lock(&lock);
    path_entry *found;
    HASH_FIND(hh, by_key, &key, sizeof(key), found);
    uint32_t id = found ? found->id : 0;
    if (!found && next_id / BLOCK < MAX_BLOCKS) {
        uint32_t b = next_id / BLOCK;
        path_entry *blk = atomic_load_explicit(&blocks[b],
                                               memory_order_relaxed);
        if (!blk) {
            blk = calloc(BLOCK, sizeof(*blk));
            if (blk)
                atomic_store_explicit(&blocks[b], blk, memory_order_release);
        }
        if (blk) {
            path_entry *e = &blk[next_id % BLOCK];
            e->key = key;
            e->id = next_id++;
            path_entry *up = entry(parent);
            e->eff_factor = factor_milli ? (double)factor_milli / 1000.0
                                         : (up ? up->eff_factor : 0.0);
            if (factor_milli)
                atomic_store(&have_factors, 1);
            HASH_ADD(hh, by_key, key, sizeof(e->key), e);
            id = e->id;
            *is_new = 1;
        }
    }
    pthread_mutex_unlock(&lock);
    return id;
}

uint32_t regions_loc(uint32_t path)
{
    path_entry *e = entry(path);
    return e ? e->key.loc : 0;
}

uint32_t regions_parent(uint32_t path)
{
    path_entry *e = entry(path);
    return e ? e->key.parent : 0;
}

size_t regions_tags(void *arg, uint32_t path, uint32_t *locs, size_t max)
{
    (void)arg;
    size_t n = 0;
    for (path_entry *e = entry(path); e && n < max; e = entry(e->key.parent)) {
        int dup = 0;
        for (size_t i = 0; i < n; i++)
            dup |= locs[i] == e->key.loc;
        if (!dup)
            locs[n++] = e->key.loc;
    }
    return n;
}

int regions_on_path(uint32_t path, uint32_t loc)
{
    for (path_entry *e = entry(path); e; e = entry(e->key.parent))
        if (e->key.loc == loc)
            return 1;
    return 0;
}

double regions_factor(uint32_t path)
{
    path_entry *e = entry(path);
    return e ? e->eff_factor : 0.0;
}

int regions_have_factors(void)
{
    return atomic_load(&have_factors);
}

/* 1 when the executable calls omp_control_tool (whatif.h annotations):
 * its dynamic symbol table names it.  Read from /proc/self/exe once. */
int regions_program_annotated(void)
{
    FILE *f = fopen("/proc/self/exe", "rb");
    int found = 0;
    if (!f)
        return 0;
    Elf64_Ehdr eh;
    Elf64_Shdr *sh = NULL;
    char *names = NULL;
    Elf64_Sym *syms = NULL;
    if (fread(&eh, sizeof(eh), 1, f) != 1 || memcmp(eh.e_ident, ELFMAG, 4) ||
        eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_shentsize != sizeof(*sh) ||
        eh.e_shnum == 0 || eh.e_shnum > 4096)
        goto out;
    sh = calloc(eh.e_shnum, sizeof(*sh));
    if (!sh || fseek(f, (long)eh.e_shoff, SEEK_SET) ||
        fread(sh, sizeof(*sh), eh.e_shnum, f) != eh.e_shnum)
        goto out;
    for (unsigned i = 0; i < eh.e_shnum && !found; i++) {
        if (sh[i].sh_type != SHT_DYNSYM || sh[i].sh_link >= eh.e_shnum ||
            sh[i].sh_size > (64u << 20))
            continue;
        const Elf64_Shdr *st = &sh[sh[i].sh_link];
        if (st->sh_size > (64u << 20))
            continue;
        size_t nsym = sh[i].sh_size / sizeof(Elf64_Sym);
        free(syms);
        free(names);
        syms = malloc(sh[i].sh_size ? sh[i].sh_size : 1);
        names = malloc(st->sh_size + 1);
        if (!syms || !names || fseek(f, (long)sh[i].sh_offset, SEEK_SET) ||
            fread(syms, sizeof(Elf64_Sym), nsym, f) != nsym ||
            fseek(f, (long)st->sh_offset, SEEK_SET) ||
            fread(names, 1, st->sh_size, f) != st->sh_size)
            break;
        names[st->sh_size] = 0;
        for (size_t k = 0; k < nsym && !found; k++)
            found = syms[k].st_name < st->sh_size &&
                    !strcmp(names + syms[k].st_name, "omp_control_tool");
    }
out:
    free(syms);
    free(names);
    free(sh);
    fclose(f);
    return found;
}
