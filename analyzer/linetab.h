/* linetab.h - a DWARF line table (.debug_line), decoded in one pass.
 *
 * libdw decodes a compile unit's line program into linked rows, then sorts
 * them all: 60 ms for the 160,000 rows of a 7 MB C++ unit.  A lookup needs
 * less: each sequence's rows already ascend, so this decoder appends them
 * to one array and orders the sequences alone (about 20x faster).  It reads
 * DWARF 2 to 5 in 32- and 64-bit formats; a line program it does not
 * understand (VLIW operation indexes, an unknown form in a DWARF 5 file
 * table) makes linetab_read fail, and the caller falls back to libdw.
 */
#ifndef WHATIF_LINETAB_H
#define WHATIF_LINETAB_H

#include <stddef.h>
#include <stdint.h>

typedef struct linetab_row {
    uint64_t addr;
    uint32_t line;       /* 0: no source line */
    uint32_t file : 31;  /* index into linetab.files */
    uint32_t end_seq : 1; /* first address after a sequence */
} linetab_row;

typedef struct linetab {
    linetab_row *rows; /* sequences one after another, by start address */
    size_t nrows;
    char **files;      /* full paths as libdw builds them; may hold NULL */
    size_t nfiles;
} linetab;

/* The sections a line program refers to; a missing one has len 0. */
typedef struct linetab_sections {
    const unsigned char *line, *line_str, *str;
    size_t line_len, line_str_len, str_len;
} linetab_sections;

/* Decodes the line program at offset off of .debug_line into t, for a
 * unit of the given compilation directory (may be NULL).  Sequences that start at address 0 or at a tombstone (all
 * ones) are code the linker dropped and are left out.  Returns 0; -1 on
 * a malformed or unsupported program or out of memory, t then empty. */
int linetab_read(linetab *t, const linetab_sections *s, uint64_t off,
                 const char *comp_dir);

/* The index of the first row whose address is greater than addr. */
size_t linetab_upper(const linetab *t, uint64_t addr);

void linetab_free(linetab *t);

#endif
