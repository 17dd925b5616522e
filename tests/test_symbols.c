/* test_symbols.c - linetab.c against libdw on whole binaries.
 *
 * For every byte (or, in a large binary, every STEP-th byte) of each
 * executable segment of each module given, the file:line that symbols.c
 * gives with its own line-table decoder must equal the one it gives with
 * libdw's.  A module where nothing resolves fails: a test that compares
 * two empty answers proves nothing, and so does a module whose units all
 * fell back to libdw; any fallback fails unless -f is given.
 * With -m, each module's .debug_line is mutated (bytes flipped, the
 * section cut short) thousands of times and decoded: under the sanitizers
 * a read out of bounds fails.
 * Usage: test_symbols [-f | -m] MODULE...
 */
#include "linetab.h"
#include "symbols.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_LOOKUPS 1500000

/* Executable ranges of path as offsets from its first loaded page. */
typedef struct span {
    uint64_t start, end;
} span;

static int exec_spans(const char *path, span *spans, int max)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return -1;
    Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
    size_t nph = 0;
    int n = 0;
    uint64_t base = UINT64_MAX;
    if (elf && elf_getphdrnum(elf, &nph) == 0) {
        for (size_t i = 0; i < nph; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
                ph.p_vaddr < base)
                base = ph.p_vaddr & ~(uint64_t)0xfff;
        }
        for (size_t i = 0; i < nph && n < max; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD &&
                (ph.p_flags & PF_X))
                spans[n++] = (span){ph.p_vaddr - base,
                                    ph.p_vaddr - base + ph.p_memsz};
        }
    }
    if (elf)
        elf_end(elf);
    close(fd);
    return n;
}

/* The uncompressed section name of elf; NULL if none. */
static Elf_Data *section(Elf *elf, const char *name)
{
    size_t shstrndx;
    if (!elf || elf_getshdrstrndx(elf, &shstrndx))
        return NULL;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr sh;
        const char *sname;
        if (gelf_getshdr(scn, &sh) &&
            (sname = elf_strptr(elf, shstrndx, sh.sh_name)) &&
            !strcmp(sname, name) && !(sh.sh_flags & SHF_COMPRESSED))
            return elf_getdata(scn, NULL);
    }
    return NULL;
}

/* Decodes mutated copies of the .debug_line section of path; the unit
 * offsets are found by walking the unmutated section. */
static int mutate_module(const char *path)
{
    int fd = open(path, O_RDONLY);
    Elf *elf = fd < 0 ? NULL : elf_begin(fd, ELF_C_READ, NULL);
    Elf_Data *data = section(elf, ".debug_line");
    Elf_Data *line_str = section(elf, ".debug_line_str");
    Elf_Data *str = section(elf, ".debug_str");
    if (!data || data->d_size < 16) {
        fprintf(stderr, "%s: no uncompressed .debug_line\n", path);
        return 1;
    }
    size_t len = data->d_size;
    unsigned char *copy = malloc(len);
    uint64_t units[64];
    int nunits = 0;
    for (uint64_t off = 0; off + 4 <= len && nunits < 64;) {
        uint32_t l;
        memcpy(&l, (unsigned char *)data->d_buf + off, 4);
        units[nunits++] = off;
        if (l >= 0xfffffff0u)
            break;
        off += 4 + (uint64_t)l;
    }
    unsigned seed = 12345, ok = 0, rounds = 4000;
    for (unsigned r = 0; r < rounds; r++) {
        memcpy(copy, data->d_buf, len);
        size_t cut = len;
        for (int k = 0; k < 1 + (int)(r % 4); k++) {
            seed = seed * 1103515245u + 12345u;
            copy[(seed >> 4) % len] ^= (unsigned char)(1u << (seed % 8));
        }
        if (r % 5 == 0) {
            seed = seed * 1103515245u + 12345u;
            cut = (seed >> 4) % len;
        }
        /* the cut copy lives at the end of a buffer of its own size, so
         * any read past it is out of bounds */
        unsigned char *sec = malloc(cut ? cut : 1);
        memcpy(sec, copy, cut);
        linetab_sections s = {.line = sec, .line_len = cut};
        if (line_str) {
            s.line_str = line_str->d_buf;
            s.line_str_len = line_str->d_size;
        }
        if (str) {
            s.str = str->d_buf;
            s.str_len = str->d_size;
        }
        linetab t;
        if (linetab_read(&t, &s, units[r % (unsigned)nunits], "/tmp") == 0) {
            ok++;
            for (size_t i = 0; i < t.nrows; i++)
                if (t.rows[i].file >= t.nfiles && t.nfiles) {
                    fprintf(stderr, "%s: row file out of range\n", path);
                    return 1;
                }
            linetab_free(&t);
        }
        free(sec);
    }
    free(copy);
    elf_end(elf);
    close(fd);
    printf("%s: %u mutated line tables, %u decoded, none read out of "
           "bounds\n", path, rounds, ok);
    return 0;
}

static int allow_fallback; /* -f: units linetab leaves to libdw are fine */

static int check_module(const char *path)
{
    span spans[16];
    int nspans = exec_spans(path, spans, 16);
    if (nspans <= 0) {
        fprintf(stderr, "%s: no executable segment\n", path);
        return 1;
    }
    uint64_t total = 0;
    for (int i = 0; i < nspans; i++)
        total += spans[i].end - spans[i].start;
    /* an odd step visits every alignment */
    uint64_t step = total > MAX_LOOKUPS ? (total / MAX_LOOKUPS) | 1 : 1;
    sym_table *own = sym_new(), *ref = sym_new();
    if (!own || !ref)
        return 1;
    sym_use_libdw_lines(ref);
    uint64_t looked = 0, resolved = 0, differ = 0;
    for (int i = 0; i < nspans; i++) {
        for (uint64_t off = spans[i].start; off < spans[i].end; off += step) {
            char a[4096], b[4096];
            int ra = sym_lookup(own, path, off, a, sizeof(a), NULL, 0);
            int rb = sym_lookup(ref, path, off, b, sizeof(b), NULL, 0);
            looked++;
            if (ra != rb || strcmp(a, b)) {
                if (differ++ < 5)
                    fprintf(stderr, "%s+0x%llx: linetab '%s', libdw '%s'\n",
                            path, (unsigned long long)off, a, b);
            } else if (ra == 0) {
                resolved++;
            }
        }
    }
    size_t decoded, fallback;
    sym_line_stats(own, &decoded, &fallback);
    sym_free(own);
    sym_free(ref);
    printf("%s: %llu addresses, %llu with a line, %llu differ; "
           "%zu units decoded, %zu left to libdw\n",
           path, (unsigned long long)looked, (unsigned long long)resolved,
           (unsigned long long)differ, decoded, fallback);
    return differ || resolved == 0 || decoded == 0 ||
           (!allow_fallback && fallback);
}

int main(int argc, char **argv)
{
    int first = 1, mutate = 0;
    if (argc > 1 && !strcmp(argv[1], "-f")) {
        allow_fallback = 1;
        first = 2;
    } else if (argc > 1 && !strcmp(argv[1], "-m")) {
        mutate = 1;
        first = 2;
    }
    if (argc <= first) {
        fprintf(stderr, "usage: test_symbols [-f | -m] MODULE...\n");
        return 2;
    }
    elf_version(EV_CURRENT);
    int failed = 0;
    for (int i = first; i < argc; i++)
        failed += mutate ? mutate_module(argv[i]) : check_module(argv[i]);
    return failed ? 1 : 0;
}
