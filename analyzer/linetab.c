/* linetab.c - one-pass decoder of a DWARF line program (DWARF 2-5). */
#include "linetab.h"

#include <dwarf.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* A bounds-checked reader: any read past end sets bad and yields 0, so the
 * decoding loops stay flat and check once. */
typedef struct cursor {
    const unsigned char *p, *end;
    bool bad;
} cursor;

static uint64_t read_fixed(cursor *c, int n)
{
    if (c->bad || n < 0 || n > 8 || c->end - c->p < n) {
        c->bad = true;
        return 0;
    }
    uint64_t v = 0;
    for (int i = n; i-- > 0;) /* little-endian: the only order we run on */
        v = v << 8 | c->p[i];
    c->p += n;
    return v;
}

static uint64_t read_uleb(cursor *c)
{
    uint64_t v = 0;
    for (int shift = 0; c->p < c->end; shift += 7) {
        unsigned char b = *c->p++;
        if (shift < 64)
            v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return v;
    }
    c->bad = true;
    return 0;
}

static int64_t read_sleb(cursor *c)
{
    int64_t v = 0;
    int shift = 0;
    for (; c->p < c->end; shift += 7) {
        unsigned char b = *c->p++;
        if (shift < 64)
            v |= (int64_t)((uint64_t)(b & 0x7f) << shift);
        if (!(b & 0x80)) {
            if ((b & 0x40) && shift + 7 < 64)
                v |= (int64_t)(~(uint64_t)0 << (shift + 7));
            return v;
        }
    }
    c->bad = true;
    return 0;
}

static const char *read_cstr(cursor *c)
{
    const unsigned char *nul = c->bad ? NULL : memchr(c->p, 0, c->end - c->p);
    if (!nul) {
        c->bad = true;
        return NULL;
    }
    const char *s = (const char *)c->p;
    c->p = nul + 1;
    return s;
}

static void skip(cursor *c, uint64_t n)
{
    if (c->bad || (uint64_t)(c->end - c->p) < n)
        c->bad = true;
    else
        c->p += n;
}

/* The string at off of a string section, NULL when outside it. */
static const char *section_str(const unsigned char *sec, size_t len,
                               uint64_t off)
{
    if (off >= len || !memchr(sec + off, 0, len - off))
        return NULL;
    return (const char *)sec + off;
}

/* Decoding state for one unit. */
typedef struct decoder {
    const linetab_sections *sec;
    int offset_size; /* 4 or 8 */
    const char **dirs; /* borrowed strings */
    size_t ndirs;
    linetab *t;
    size_t rows_cap, files_cap;
} decoder;

/* One DWARF 5 entry attribute of the given form; sets *str for string
 * forms and *num for constants.  False for a form this decoder does not
 * read (the indexed strx forms need .debug_str_offsets). */
static bool read_form(decoder *d, cursor *c, uint64_t form, const char **str,
                      uint64_t *num)
{
    *str = NULL;
    *num = 0;
    switch (form) {
    case DW_FORM_string: *str = read_cstr(c); break;
    case DW_FORM_line_strp:
        *str = section_str(d->sec->line_str, d->sec->line_str_len,
                           read_fixed(c, d->offset_size));
        if (!*str)
            c->bad = true;
        break;
    case DW_FORM_strp:
        *str = section_str(d->sec->str, d->sec->str_len,
                           read_fixed(c, d->offset_size));
        if (!*str)
            c->bad = true;
        break;
    case DW_FORM_udata: *num = read_uleb(c); break;
    case DW_FORM_data1: *num = read_fixed(c, 1); break;
    case DW_FORM_data2: *num = read_fixed(c, 2); break;
    case DW_FORM_data4: *num = read_fixed(c, 4); break;
    case DW_FORM_data8: *num = read_fixed(c, 8); break;
    case DW_FORM_data16: skip(c, 16); break;
    case DW_FORM_block: skip(c, read_uleb(c)); break;
    default: return false;
    }
    return !c->bad;
}

static char *join_path(const char *dir, const char *name)
{
    size_t dl = strlen(dir), nl = strlen(name);
    char *s = malloc(dl + nl + 2);
    if (s) {
        memcpy(s, dir, dl);
        s[dl] = '/';
        memcpy(s + dl + 1, name, nl + 1);
    }
    return s;
}

/* Appends file name, in directory index dir, to the file table. */
static int add_file(decoder *d, const char *name, uint64_t dir)
{
    linetab *t = d->t;
    if (t->nfiles == d->files_cap) {
        size_t cap = d->files_cap ? 2 * d->files_cap : 16;
        char **f = realloc(t->files, cap * sizeof(*f));
        if (!f)
            return -1;
        t->files = f;
        d->files_cap = cap;
    }
    char *path;
    if (name[0] == '/' || dir >= d->ndirs || !d->dirs[dir] || !d->dirs[dir][0])
        path = strdup(name);
    else
        path = join_path(d->dirs[dir], name);
    if (!path)
        return -1;
    t->files[t->nfiles++] = path;
    return 0;
}

static int add_dir(decoder *d, const char *dir, size_t *cap)
{
    if (d->ndirs == *cap) {
        size_t ncap = *cap ? 2 * *cap : 16;
        const char **a = realloc(d->dirs, ncap * sizeof(*a));
        if (!a)
            return -1;
        d->dirs = a;
        *cap = ncap;
    }
    d->dirs[d->ndirs++] = dir;
    return 0;
}

/* DWARF 5: a table of entries, each a list of (content type, form). */
static int read_entry_table(decoder *d, cursor *c, bool files, size_t *cap)
{
    uint64_t formats[2 * 16];
    unsigned nformats = (unsigned)read_fixed(c, 1);
    if (nformats > 16)
        return -1;
    for (unsigned i = 0; i < 2 * nformats; i++)
        formats[i] = read_uleb(c);
    uint64_t count = read_uleb(c);
    for (uint64_t e = 0; e < count && !c->bad; e++) {
        const char *name = NULL;
        uint64_t dir = 0;
        for (unsigned i = 0; i < nformats; i++) {
            const char *s;
            uint64_t v;
            if (!read_form(d, c, formats[2 * i + 1], &s, &v))
                return -1;
            if (formats[2 * i] == DW_LNCT_path)
                name = s;
            else if (formats[2 * i] == DW_LNCT_directory_index)
                dir = v;
        }
        if (!name)
            return -1;
        if (files ? add_file(d, name, dir) : add_dir(d, name, cap))
            return -1;
    }
    return c->bad ? -1 : 0;
}

/* DWARF 2-4: include_directories and file_names, each ended by a 0 byte.
 * Directory 0 is the compilation directory and file indexes count from 1,
 * so file slot 0 is left empty. */
static int read_v4_tables(decoder *d, cursor *c, const char *comp_dir,
                          size_t *cap)
{
    if (add_dir(d, comp_dir ? comp_dir : "", cap))
        return -1;
    while (!c->bad && c->p < c->end && *c->p) {
        const char *dir = read_cstr(c);
        if (!dir || add_dir(d, dir, cap))
            return -1;
    }
    skip(c, 1);
    if (c->bad || add_file(d, "", 0))
        return -1;
    free(d->t->files[0]);
    d->t->files[0] = NULL;
    while (!c->bad && c->p < c->end && *c->p) {
        const char *name = read_cstr(c);
        uint64_t dir = read_uleb(c);
        read_uleb(c); /* modification time */
        read_uleb(c); /* length */
        if (c->bad || add_file(d, name, dir))
            return -1;
    }
    skip(c, 1);
    return c->bad ? -1 : 0;
}

static int add_row(decoder *d, uint64_t addr, uint64_t line, uint64_t file,
                   bool end_seq)
{
    linetab *t = d->t;
    if (t->nrows == d->rows_cap) {
        size_t cap = d->rows_cap ? 2 * d->rows_cap : 1024;
        linetab_row *r = realloc(t->rows, cap * sizeof(*r));
        if (!r)
            return -1;
        t->rows = r;
        d->rows_cap = cap;
    }
    linetab_row *r = &t->rows[t->nrows++];
    r->addr = addr;
    r->line = line > UINT32_MAX ? 0 : (uint32_t)line;
    r->file = file < t->nfiles ? (uint32_t)file : 0;
    r->end_seq = end_seq;
    return 0;
}

/* A sequence: rows [first, first + n) of the decoded order. */
typedef struct seq {
    uint64_t start;
    size_t first, n;
} seq;

static int cmp_seq(const void *a, const void *b)
{
    const seq *x = a, *y = b;
    if (x->start != y->start)
        return x->start < y->start ? -1 : 1;
    return x->first < y->first ? -1 : x->first > y->first;
}

/* Orders the sequences by start address, keeping each one's rows. */
static int order_sequences(linetab *t, seq *seqs, size_t nseqs)
{
    bool sorted = true;
    for (size_t i = 1; i < nseqs && sorted; i++)
        sorted = seqs[i - 1].start <= seqs[i].start;
    if (sorted)
        return 0;
    qsort(seqs, nseqs, sizeof(*seqs), cmp_seq);
    linetab_row *rows = malloc(t->nrows * sizeof(*rows));
    if (!rows)
        return -1;
    size_t n = 0;
    for (size_t i = 0; i < nseqs; i++) {
        memcpy(rows + n, t->rows + seqs[i].first, seqs[i].n * sizeof(*rows));
        n += seqs[i].n;
    }
    free(t->rows);
    t->rows = rows;
    t->nrows = n;
    return 0;
}

/* The header fields the line program needs. */
typedef struct header {
    unsigned version, min_inst, max_ops, opcode_base;
    bool default_is_stmt;
    int line_base;
    unsigned line_range;
    const unsigned char *opcode_lengths;
} header;

static int run_program(decoder *d, cursor *c, const header *h)
{
    seq *seqs = NULL;
    size_t nseqs = 0, seqs_cap = 0;
    uint64_t addr = 0, line = 1, file = 1;
    size_t seq_first = d->t->nrows;
    int rc = -1;
    while (c->p < c->end && !c->bad) {
        unsigned op = *c->p++;
        bool emit = false, end_seq = false;
        if (op >= h->opcode_base) {
            unsigned adj = op - h->opcode_base;
            addr += (uint64_t)(adj / h->line_range) * h->min_inst;
            line += (int64_t)h->line_base + adj % h->line_range;
            emit = true;
        } else if (op == 0) {
            uint64_t len = read_uleb(c);
            if (len == 0 || (uint64_t)(c->end - c->p) < len)
                goto out;
            const unsigned char *next = c->p + len;
            unsigned sub = *c->p++;
            if (sub == DW_LNE_end_sequence) {
                emit = end_seq = true;
            } else if (sub == DW_LNE_set_address) {
                addr = read_fixed(c, (int)(len - 1));
            } else if (sub == DW_LNE_define_file) {
                const char *name = read_cstr(c);
                uint64_t dir = read_uleb(c);
                if (c->bad || add_file(d, name, dir))
                    goto out;
            }
            c->p = next; /* discriminators and vendor opcodes skipped */
        } else {
            switch (op) {
            case DW_LNS_copy: emit = true; break;
            case DW_LNS_advance_pc: addr += read_uleb(c) * h->min_inst; break;
            case DW_LNS_advance_line: line += read_sleb(c); break;
            case DW_LNS_set_file: file = read_uleb(c); break;
            case DW_LNS_const_add_pc:
                addr += (uint64_t)((255 - h->opcode_base) / h->line_range) *
                        h->min_inst;
                break;
            case DW_LNS_fixed_advance_pc: addr += read_fixed(c, 2); break;
            case DW_LNS_negate_stmt:
            case DW_LNS_set_basic_block:
            case DW_LNS_set_prologue_end:
            case DW_LNS_set_epilogue_begin:
                break;
            default: /* set_column, set_isa and unknown: operands skipped */
                for (unsigned i = 0; i < h->opcode_lengths[op - 1]; i++)
                    read_uleb(c);
            }
        }
        if (!emit)
            continue;
        if (add_row(d, addr, line, file, end_seq))
            goto out;
        if (!end_seq)
            continue;
        uint64_t start = d->t->rows[seq_first].addr;
        bool dropped = start == 0 || start >= UINT64_MAX - 1;
        if (dropped) {
            d->t->nrows = seq_first;
        } else {
            if (nseqs == seqs_cap) {
                size_t cap = seqs_cap ? 2 * seqs_cap : 64;
                seq *s = realloc(seqs, cap * sizeof(*s));
                if (!s)
                    goto out;
                seqs = s;
                seqs_cap = cap;
            }
            seqs[nseqs++] = (seq){start, seq_first, d->t->nrows - seq_first};
        }
        seq_first = d->t->nrows;
        addr = 0;
        line = 1;
        file = 1;
    }
    if (c->bad)
        goto out;
    d->t->nrows = seq_first; /* rows of an unended sequence are no code */
    rc = order_sequences(d->t, seqs, nseqs);
out:
    free(seqs);
    return rc;
}

static int decode(decoder *d, uint64_t off, const char *comp_dir)
{
    const linetab_sections *s = d->sec;
    if (off >= s->line_len)
        return -1;
    cursor c = {s->line + off, s->line + s->line_len, false};
    uint64_t unit_len = read_fixed(&c, 4);
    d->offset_size = 4;
    if (unit_len == 0xffffffffu) {
        unit_len = read_fixed(&c, 8);
        d->offset_size = 8;
    }
    if (c.bad || unit_len > (uint64_t)(c.end - c.p))
        return -1;
    c.end = c.p + unit_len;
    header h = {0};
    h.version = (unsigned)read_fixed(&c, 2);
    if (h.version < 2 || h.version > 5)
        return -1;
    if (h.version >= 5) {
        read_fixed(&c, 1); /* address size: set_address says its own */
        if (read_fixed(&c, 1) != 0) /* segment selectors: not ours */
            return -1;
    }
    uint64_t header_len = read_fixed(&c, d->offset_size);
    if (c.bad || header_len > (uint64_t)(c.end - c.p))
        return -1;
    cursor program = {c.p + header_len, c.end, false};
    h.min_inst = (unsigned)read_fixed(&c, 1);
    h.max_ops = h.version >= 4 ? (unsigned)read_fixed(&c, 1) : 1;
    h.default_is_stmt = read_fixed(&c, 1) != 0;
    h.line_base = (int8_t)read_fixed(&c, 1);
    h.line_range = (unsigned)read_fixed(&c, 1);
    h.opcode_base = (unsigned)read_fixed(&c, 1);
    if (c.bad || h.max_ops != 1 || h.line_range == 0 || h.opcode_base == 0)
        return -1;
    h.opcode_lengths = c.p;
    skip(&c, h.opcode_base - 1);
    size_t dirs_cap = 0;
    int rc = h.version >= 5
                 ? (read_entry_table(d, &c, false, &dirs_cap) ||
                            read_entry_table(d, &c, true, NULL)
                        ? -1
                        : 0)
                 : read_v4_tables(d, &c, comp_dir, &dirs_cap);
    if (rc || c.bad)
        return -1;
    return run_program(d, &program, &h);
}

int linetab_read(linetab *t, const linetab_sections *s, uint64_t off,
                 const char *comp_dir)
{
    memset(t, 0, sizeof(*t));
    decoder d = {.sec = s, .t = t};
    int rc = decode(&d, off, comp_dir);
    free(d.dirs);
    if (rc)
        linetab_free(t);
    return rc;
}

size_t linetab_upper(const linetab *t, uint64_t addr)
{
    size_t lo = 0, hi = t->nrows;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (t->rows[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

void linetab_free(linetab *t)
{
    for (size_t i = 0; i < t->nfiles; i++)
        free(t->files[i]);
    free(t->files);
    free(t->rows);
    memset(t, 0, sizeof(*t));
}
