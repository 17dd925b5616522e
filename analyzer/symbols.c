/* symbols.c - file:line and function of code addresses, with libdw. */
#include "symbols.h"

#include "linetab.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <uthash.h>

#define LOOKBACK 48 /* bytes searched before an instruction without a line */

typedef struct cu_range {
    Dwarf_Addr start, end; /* [start, end) in DWARF addresses */
    Dwarf_Die cudie;
} cu_range;

/* A compile unit's decoded line table, keyed by the unit's DIE offset. */
typedef struct unit_lines {
    Dwarf_Off key;
    bool decoded; /* false: linetab could not read it, libdw does */
    linetab tab;
    UT_hash_handle hh;
} unit_lines;

typedef struct module {
    char *path;            /* the key */
    Dwfl *dwfl;            /* NULL: the module could not be opened */
    Dwfl_Module *mod;
    Dwarf *dw;             /* NULL: no debug information */
    Dwarf_Addr low;        /* where dwfl put the module's first segment */
    Dwarf_Addr bias;       /* dwfl address - DWARF address */
    cu_range *cus;         /* sorted by start */
    size_t ncus;
    linetab_sections sections;
    unit_lines *units;     /* decoded at a unit's first lookup */
    UT_hash_handle hh;
} module;

struct sym_table {
    module *modules;
    bool libdw_lines; /* tests: every line from libdw */
    char cwd[PATH_MAX];
};

static const Dwfl_Callbacks offline_callbacks = {
    .find_elf = dwfl_build_id_find_elf,
    .find_debuginfo = dwfl_standard_find_debuginfo,
    .section_address = dwfl_offline_section_address,
};

sym_table *sym_new(void)
{
    sym_table *t = calloc(1, sizeof(*t));
    if (t && !getcwd(t->cwd, sizeof(t->cwd)))
        t->cwd[0] = 0;
    return t;
}

void sym_use_libdw_lines(sym_table *t)
{
    t->libdw_lines = true;
}

void sym_line_stats(const sym_table *t, size_t *own, size_t *libdw)
{
    *own = *libdw = 0;
    for (const module *m = t->modules; m; m = m->hh.next)
        for (const unit_lines *u = m->units; u; u = u->hh.next)
            *(u->decoded ? own : libdw) += 1;
}

static void module_free(module *m)
{
    unit_lines *u, *tmp;
    HASH_ITER(hh, m->units, u, tmp) {
        HASH_DEL(m->units, u);
        linetab_free(&u->tab);
        free(u);
    }
    if (m->dwfl)
        dwfl_end(m->dwfl);
    free(m->cus);
    free(m->path);
    free(m);
}

void sym_free(sym_table *t)
{
    if (!t)
        return;
    module *m, *tmp;
    HASH_ITER(hh, t->modules, m, tmp) {
        HASH_DEL(t->modules, m);
        module_free(m);
    }
    free(t);
}

static int cmp_range(const void *a, const void *b)
{
    const cu_range *x = a, *y = b;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* Indexes the compile units of m by the address ranges they cover. */
static int index_units(module *m)
{
    size_t cap = 0;
    Dwarf_CU *cu = NULL, *next;
    Dwarf_Die cudie;
    uint8_t unit_type;
    while (dwarf_get_units(m->dw, cu, &next, NULL, &unit_type, &cudie,
                           NULL) == 0) {
        cu = next;
        if (unit_type != DW_UT_compile && unit_type != DW_UT_partial &&
            unit_type != DW_UT_skeleton)
            continue;
        Dwarf_Addr base, start, end;
        ptrdiff_t off = 0;
        while ((off = dwarf_ranges(&cudie, off, &base, &start, &end)) > 0) {
            if (end <= start)
                continue;
            if (m->ncus == cap) {
                size_t ncap = cap ? cap * 2 : 16;
                cu_range *r = realloc(m->cus, ncap * sizeof(*r));
                if (!r)
                    return -1;
                m->cus = r;
                cap = ncap;
            }
            m->cus[m->ncus].start = start;
            m->cus[m->ncus].end = end;
            m->cus[m->ncus].cudie = cudie;
            m->ncus++;
        }
    }
    qsort(m->cus, m->ncus, sizeof(*m->cus), cmp_range);
    return 0;
}

/* The contents of section name of elf, decompressed; NULL if absent. */
static const unsigned char *section_data(Elf *elf, const char *name,
                                         size_t *len)
{
    size_t shstrndx;
    *len = 0;
    if (elf_getshdrstrndx(elf, &shstrndx))
        return NULL;
    for (Elf_Scn *scn = NULL; (scn = elf_nextscn(elf, scn));) {
        GElf_Shdr shdr;
        const char *sname;
        if (!gelf_getshdr(scn, &shdr) ||
            !(sname = elf_strptr(elf, shstrndx, shdr.sh_name)) ||
            strcmp(sname, name))
            continue;
        /* libdw decompressed the sections it opened; this is a guard */
        if ((shdr.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0)
            return NULL;
        Elf_Data *data = elf_getdata(scn, NULL);
        if (!data || !data->d_buf)
            return NULL;
        *len = data->d_size;
        return data->d_buf;
    }
    return NULL;
}

static void find_sections(module *m)
{
    Elf *elf = dwarf_getelf(m->dw);
    linetab_sections *s = &m->sections;
    if (!elf)
        return;
    s->line = section_data(elf, ".debug_line", &s->line_len);
    s->line_str = section_data(elf, ".debug_line_str", &s->line_str_len);
    s->str = section_data(elf, ".debug_str", &s->str_len);
}

/* The module at path, opened at its first use (a module that cannot be
 * read is remembered as such).  NULL only when out of memory. */
static module *module_get(sym_table *t, const char *path)
{
    module *m;
    HASH_FIND_STR(t->modules, path, m);
    if (m)
        return m;
    if (!(m = calloc(1, sizeof(*m))) || !(m->path = strdup(path))) {
        free(m);
        return NULL;
    }
    HASH_ADD_KEYPTR(hh, t->modules, m->path, strlen(m->path), m);
    m->dwfl = dwfl_begin(&offline_callbacks);
    if (!m->dwfl)
        return m;
    m->mod = dwfl_report_offline(m->dwfl, path, path, -1);
    dwfl_report_end(m->dwfl, NULL, NULL);
    if (!m->mod)
        return m;
    dwfl_module_info(m->mod, NULL, &m->low, NULL, NULL, NULL, NULL, NULL);
    m->dw = dwfl_module_getdwarf(m->mod, &m->bias);
    if (m->dw)
        find_sections(m);
    if (m->dw && index_units(m)) {
        free(m->cus);
        m->cus = NULL;
        m->ncus = 0;
    }
    return m;
}

static const cu_range *find_unit(const module *m, Dwarf_Addr a)
{
    size_t lo = 0, hi = m->ncus;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (m->cus[mid].start <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Ranges of different units do not overlap, but a unit may list
     * several: the one starting last at or before a is the candidate. */
    for (size_t i = lo; i-- > 0;) {
        if (a < m->cus[i].end)
            return &m->cus[i];
        if (lo - i > 8)
            break;
    }
    return NULL;
}

/* The line table of the unit of cudie, decoded at its first use; NULL
 * when out of memory.  A table linetab cannot decode is left to libdw. */
static unit_lines *unit_lines_get(module *m, Dwarf_Die *cudie)
{
    Dwarf_Off key = dwarf_dieoffset(cudie);
    unit_lines *u;
    HASH_FIND(hh, m->units, &key, sizeof(key), u);
    if (u)
        return u;
    if (!(u = calloc(1, sizeof(*u))))
        return NULL;
    u->key = key;
    Dwarf_Attribute attr;
    Dwarf_Word off;
    if (m->sections.line &&
        dwarf_formudata(dwarf_attr(cudie, DW_AT_stmt_list, &attr), &off) == 0)
        u->decoded = linetab_read(&u->tab, &m->sections, off,
                                  dwarf_formstring(dwarf_attr(
                                      cudie, DW_AT_comp_dir, &attr))) == 0;
    HASH_ADD(hh, m->units, key, sizeof(u->key), u);
    return u;
}

/* The row of tab that covers a, or the closest earlier row of the same
 * sequence with a line (within LOOKBACK bytes), as line_of below does
 * with libdw's rows.  NULL if none. */
static const linetab_row *row_of(const linetab *tab, Dwarf_Addr a)
{
    Dwarf_Addr next_start = a + 1;
    for (size_t i = linetab_upper(tab, a); i-- > 0;) {
        const linetab_row *r = &tab->rows[i];
        if (r->end_seq || a - (next_start - 1) >= LOOKBACK)
            return NULL;
        if (r->line > 0)
            return r;
        next_start = r->addr;
    }
    return NULL;
}

/* The line row that covers a, or the closest earlier row of the same
 * sequence with a line (within LOOKBACK bytes).  NULL if none. */
static Dwarf_Line *line_of(Dwarf_Die *cudie, Dwarf_Addr a)
{
    Dwarf_Lines *lines;
    size_t n;
    if (dwarf_getsrclines(cudie, &lines, &n) || n == 0)
        return NULL;
    size_t lo = 0, hi = n;
    while (lo < hi) { /* first row with address > a */
        size_t mid = lo + (hi - lo) / 2;
        Dwarf_Addr la = 0;
        dwarf_lineaddr(dwarf_onesrcline(lines, mid), &la);
        if (la <= a)
            lo = mid + 1;
        else
            hi = mid;
    }
    /* Row i covers [its address, the next row's): the covering row, then
     * the rows covering the LOOKBACK bytes before a. */
    Dwarf_Addr next_start = a + 1;
    for (size_t i = lo; i-- > 0;) {
        Dwarf_Line *l = dwarf_onesrcline(lines, i);
        Dwarf_Addr la = 0;
        bool end_seq = false;
        int lineno = 0;
        dwarf_lineaddr(l, &la);
        dwarf_lineendsequence(l, &end_seq);
        if (end_seq || a - (next_start - 1) >= LOOKBACK)
            return NULL;
        if (dwarf_lineno(l, &lineno) == 0 && lineno > 0)
            return l;
        next_start = la;
    }
    return NULL;
}

/* file with "." and empty components dropped and "dir/.." folded (as
 * the compiler may join a directory and a relative include), into buf. */
static void normalize(const char *file, char *buf, size_t len)
{
    size_t o = 0;
    int abs = file[0] == '/';
    if (abs && len > 1)
        buf[o++] = '/';
    for (const char *p = file; *p;) {
        while (*p == '/')
            p++;
        const char *e = strchr(p, '/');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        if (!n)
            break;
        if (n == 1 && p[0] == '.') {
            /* dropped */
        } else if (n == 2 && p[0] == '.' && p[1] == '.' && o > (size_t)abs &&
                   !(o >= (size_t)abs + 2 && !strncmp(buf + o - 2, "..", 2) &&
                     (o == (size_t)abs + 2 || buf[o - 3] == '/'))) {
            while (o > (size_t)abs && buf[o - 1] != '/')
                o--;
            if (o > (size_t)abs)
                o--; /* the slash before it */
        } else if (o + n + 2 < len) {
            if (o > (size_t)abs)
                buf[o++] = '/';
            memcpy(buf + o, p, n);
            o += n;
        }
        p += n;
    }
    if (!o && len > 1)
        buf[o++] = '.';
    buf[o < len ? o : len - 1] = 0;
}

/* file as it is named in locations: normalized, relative to cwd when it
 * lies under it. */
static const char *shorten(const char *file, const char *cwd, char *buf,
                           size_t len)
{
    normalize(file, buf, len);
    size_t n = strlen(cwd);
    if (n && !strncmp(buf, cwd, n) && buf[n] == '/')
        return buf + n + 1;
    return buf;
}

void sym_file_name(const sym_table *t, const char *file, char *buf,
                   size_t len)
{
    char norm[PATH_MAX];
    snprintf(buf, len, "%s", shorten(file, t->cwd, norm, sizeof(norm)));
}

/* The directory a compile unit was compiled in, or NULL. */
static const char *unit_comp_dir(Dwarf_Die *cudie)
{
    Dwarf_Attribute attr;
    return dwarf_attr(cudie, DW_AT_comp_dir, &attr) ? dwarf_formstring(&attr)
                                                    : NULL;
}

int sym_unit_file(sym_table *t, const char *path, const char *file,
                  char *buf, size_t len)
{
    module *m = file[0] != '/' ? module_get(t, path) : NULL;
    if (!m || !m->dw)
        return -1;
    /* Each directory the module's units were compiled in gives a
     * candidate; a unit named file itself (the usual case: the construct
     * is in the unit's main file) outranks the others. */
    char found[PATH_MAX] = "", joined[PATH_MAX], norm[PATH_MAX];
    for (int pass = 0; pass < 2 && !found[0]; pass++) {
        for (size_t i = 0; i < m->ncus; i++) {
            Dwarf_Die cudie = m->cus[i].cudie;
            const char *dir = unit_comp_dir(&cudie);
            const char *name = dwarf_diename(&cudie);
            if (!dir || (pass == 0 && (!name || strcmp(name, file))))
                continue;
            if (snprintf(joined, sizeof(joined), "%s/%s", dir, file) >=
                (int)sizeof(joined))
                continue;
            normalize(joined, norm, sizeof(norm));
            if (pass == 1 && access(norm, F_OK))
                continue; /* several directories: only one that holds it */
            if (!found[0])
                snprintf(found, sizeof(found), "%s", norm);
            else if (strcmp(found, norm))
                return -1; /* two files of that name: neither is sure */
        }
    }
    if (!found[0])
        return -1;
    char shortened[PATH_MAX];
    snprintf(buf, len, "%s", shorten(found, t->cwd, shortened,
                                     sizeof(shortened)));
    return 0;
}

int sym_lookup(sym_table *t, const char *path, uint64_t off, char *where,
               size_t wlen, char *func, size_t flen)
{
    if (wlen)
        where[0] = 0;
    if (func && flen)
        func[0] = 0;
    module *m = module_get(t, path);
    if (!m || !m->mod)
        return -1;
    Dwarf_Addr a = m->low + off;
    if (func && flen) {
        const char *name = dwfl_module_addrname(m->mod, a);
        snprintf(func, flen, "%s", name ? name : "");
    }
    if (!m->dw)
        return -1;
    const cu_range *r = find_unit(m, a - m->bias);
    if (!r)
        return -1;
    Dwarf_Die cudie = r->cudie;
    unit_lines *u = t->libdw_lines ? NULL : unit_lines_get(m, &cudie);
    const char *file = NULL;
    int lineno = 0;
    if (u && u->decoded) {
        const linetab_row *row = row_of(&u->tab, a - m->bias);
        if (row) {
            file = u->tab.files[row->file];
            lineno = (int)row->line;
        }
    } else {
        Dwarf_Line *l = line_of(&cudie, a - m->bias);
        file = l ? dwarf_linesrc(l, NULL, NULL) : NULL;
        if (file && dwarf_lineno(l, &lineno))
            file = NULL;
    }
    if (!file || lineno <= 0)
        return -1;
    char norm[PATH_MAX];
    snprintf(where, wlen, "%s:%d",
             shorten(file, t->cwd, norm, sizeof(norm)), lineno);
    return 0;
}

int sym_inline_sites(sym_table *t, const char *path, uint64_t off,
                     char *buf, size_t len, int max)
{
    if (len)
        buf[0] = 0;
    module *m = module_get(t, path);
    if (!m || !m->mod || !m->dw || max <= 0)
        return 0;
    Dwarf_Addr a = m->low + off;
    const cu_range *r = find_unit(m, a - m->bias);
    if (!r)
        return 0;
    Dwarf_Die cudie = r->cudie, *scopes = NULL;
    char norm[PATH_MAX];
    int ns = dwarf_getscopes(&cudie, a - m->bias, &scopes);
    Dwarf_Files *files = NULL;
    size_t nfiles = 0;
    int n = 0;
    size_t used = 0;
    /* dwarf_getscopes follows an inlined instance to the lexical scopes
     * of what was inlined, not of its caller: the caller's scopes are
     * those that contain the instance's own DIE (dwarf_getscopes_die) */
    for (int i = 0; i < ns && n < max; i++) {
        if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine)
            continue;
        Dwarf_Die inl = scopes[i];
        free(scopes);
        scopes = NULL;
        ns = dwarf_getscopes_die(&inl, &scopes);
        i = 0; /* scopes[0] is inl: the next one is its caller's */
        Dwarf_Attribute at;
        Dwarf_Word fidx = 0, line = 0;
        if (dwarf_formudata(dwarf_attr(&inl, DW_AT_call_file, &at), &fidx) ||
            dwarf_formudata(dwarf_attr(&inl, DW_AT_call_line, &at), &line) ||
            line == 0)
            continue;
        if (!files && dwarf_getsrcfiles(&cudie, &files, &nfiles))
            break;
        const char *file = fidx < nfiles ? dwarf_filesrc(files, fidx, NULL,
                                                         NULL)
                                         : NULL;
        if (!file)
            continue;
        int w = snprintf(buf + used, len > used ? len - used : 0,
                         " < %s:%u",
                         shorten(file, t->cwd, norm, sizeof(norm)),
                         (unsigned)line);
        if (w < 0 || used + (size_t)w >= len)
            break;
        used += (size_t)w;
        n++;
    }
    free(scopes);
    return n;
}

int sym_build_id(sym_table *t, const char *path, char *hex, size_t len)
{
    if (len)
        hex[0] = 0;
    if (access(path, R_OK)) {
        errno = ENOENT;
        return -1;
    }
    module *m = module_get(t, path);
    const unsigned char *bits;
    GElf_Addr vaddr;
    int n = m && m->mod ? dwfl_module_build_id(m->mod, &bits, &vaddr) : -1;
    if (n <= 0 || len < 2 * (size_t)n + 1) {
        errno = 0;
        return -1;
    }
    for (int i = 0; i < n; i++)
        snprintf(hex + 2 * i, 3, "%02x", bits[i]);
    return 0;
}
