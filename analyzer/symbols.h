/* symbols.h - source lines and function names of code addresses.
 *
 * Reads a module's DWARF with elfutils' libdw (separate debug files found
 * by build id or debuglink too), in the calling process.  The profiler
 * calls it at the first sight of a construct's return address, so that
 * every copy of one directive the compiler emitted gets one location (and
 * the on-the-fly profile needs no lookup at exit); the analyzer calls it
 * for what a trace left as "module+0xOFFSET".
 *
 * A module is opened once, at its first lookup, and its compile units are
 * indexed by address range: clang 19 writes no .debug_aranges, which
 * libdw's own address lookup needs.  A lookup is then a binary search and,
 * the first time a unit is hit, the decoding of its line table (linetab.c,
 * libdw where that cannot read it).  Not
 * thread-safe: callers serialize.
 */
#ifndef WHATIF_SYMBOLS_H
#define WHATIF_SYMBOLS_H

#include <stddef.h>
#include <stdint.h>

typedef struct sym_table sym_table;

/* A table with no module open yet; paths are shortened against the
 * current directory as it is now.  NULL when out of memory. */
sym_table *sym_new(void);
void sym_free(sym_table *t);

/* Makes t read line tables with libdw alone (linetab.c is the default):
 * the reference the tests compare linetab with. */
void sym_use_libdw_lines(sym_table *t);

/* How many compile units' line tables t decoded itself (*own) and left
 * to libdw (*libdw) so far. */
void sym_line_stats(const sym_table *t, size_t *own, size_t *libdw);

/* The source line of the instruction at offset off of module path (the
 * distance from the address the module's first segment is loaded at, as
 * dladdr's dli_fbase gives it).  Optimized code often gives a call into
 * the runtime line 0: the closest earlier instruction of the same
 * sequence with a line, at most 48 bytes back, stands in.  On success
 * where holds "file:line" (the file relative to the current directory
 * when below it) and func, when not NULL, the enclosing function's symbol
 * ("" if the module has no symbol there); returns 0.  Returns -1 with
 * where empty when the module cannot be read or has no line there. */
int sym_lookup(sym_table *t, const char *path, uint64_t off, char *where,
               size_t wlen, char *func, size_t flen);

/* file (a source file as a compiler named it) as sym_lookup names files,
 * into buf: normalized, relative to the current directory when below it. */
void sym_file_name(const sym_table *t, const char *file, char *buf,
                   size_t len);

/* file, a relative source file name as a compiler was given it (the
 * ident_t of a construct in module path), named as sym_lookup names
 * files: joined to the directory the module's compile unit of that name
 * was compiled in.  Returns 0; -1 when file is absolute, the module has
 * no debug information or the directory is ambiguous. */
int sym_unit_file(sym_table *t, const char *path, const char *file,
                  char *buf, size_t len);

/* The call sites the instruction at offset off of module path was
 * inlined from, innermost first, at most max: " < file:line" each,
 * appended in buf.  Returns how many (0 when none or unknown). */
int sym_inline_sites(sym_table *t, const char *path, uint64_t off,
                     char *buf, size_t len, int max);

/* The GNU build-id of module path as hex in hex (len >= 2 * 20 + 1 for
 * the usual SHA-1 id).  Returns 0; -1 when the file cannot be read (errno
 * ENOENT when it is gone) or has no build-id. */
int sym_build_id(sym_table *t, const char *path, char *hex, size_t len);

#endif
