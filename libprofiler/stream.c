/* stream.c - per-thread trace streams and location interning.
 *
 * A location is a directive at a source line.  The first sight of a
 * (return address, directive) pair resolves the address to file:line
 * (symbols.h) under the interning lock; every address that resolves to
 * the same line and directive shares one id, since a compiler may emit
 * one directive's runtime call several times and the outermost-instance
 * rule must hold per reported location.  Later sights hit a per-thread
 * cache, then a hash table.
 */
#include "stream.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uthash.h>

#include "symbols.h"

static const char *const dir_names[DIR_COUNT] = {
    "parallel", "loop", "sections", "single", "masked", "critical", "lock",
    "ordered", "task", "taskloop", "taskgroup", "taskwait", "region",
    "line",
};

typedef struct loc_key {
    const void *code;
    const void *ident;   /* the runtime call's ident_t, or NULL */
    int kind;
    uint32_t chain;      /* its calling context (stream_chain), 0: none */
} loc_key;

typedef struct loc_entry {
    loc_key key;
    uint32_t id;
    UT_hash_handle hh;
} loc_entry;

/* The modules whose build-id the trace records (key: path). */
typedef struct module_entry {
    char *path;
    UT_hash_handle hh;
} module_entry;
static module_entry *modules;
static void (*meta_hook)(const char *, const char *);

void stream_set_meta_hook(void (*fn)(const char *, const char *))
{
    meta_hook = fn;
}

/* The id of each (directive, where) pair: key is "directive where". */
typedef struct name_entry {
    char *key;
    uint32_t id;
    UT_hash_handle hh;
} name_entry;

static char out_dir[4096];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static loc_entry *locs;
static name_entry *names;
static sym_table *syms;      /* opened at the first location */
static int syms_failed;
static uint32_t next_loc = 1;
static int ctx_depth;        /* --context: call sites per name, 0: none */
static uint32_t next_stream;
static trace_writer **writers;
static int write_files;          /* offline: one trace file per thread */
static void (*loc_hook)(uint32_t, const char *, const char *);

void stream_set_loc_hook(void (*fn)(uint32_t, const char *, const char *))
{
    loc_hook = fn;
}
static size_t nwriters, capwriters;

int stream_setup(const char *dir, char *err, size_t errlen)
{
    if (!dir)
        return 0;
    write_files = 1;
    if (snprintf(out_dir, sizeof(out_dir), "%s", dir) >= (int)sizeof(out_dir)) {
        snprintf(err, errlen, "WHATIF_OUT is too long");
        return -1;
    }
    if (mkdir(dir, 0777) && errno != EEXIST) {
        snprintf(err, errlen, "%s: cannot create: %s", dir, strerror(errno));
        return -1;
    }
    /* A stale stream from an earlier run would be replayed with this one. */
    DIR *d = opendir(dir);
    if (!d) {
        snprintf(err, errlen, "%s: cannot open: %s", dir, strerror(errno));
        return -1;
    }
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n > 11 && !strncmp(de->d_name, "thread-", 7) &&
            !strcmp(de->d_name + n - 4, ".wit")) {
            char path[8192];
            snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
            unlink(path);
        }
    }
    closedir(d);
    return 0;
}

int stream_thread_open(stream_thread *st)
{
    memset(st, 0, sizeof(*st));
    pthread_mutex_lock(&lock);
    st->index = next_stream++;
    pthread_mutex_unlock(&lock);
    if (!write_files)
        return 0;
    char path[8192];
    snprintf(path, sizeof(path), "%s/thread-%04u.wit", out_dir, st->index);
    st->w = trace_writer_open(path, st->index, 0, TRACE_FLAG_FIXED_LOCS);
    if (!st->w)
        return -1;
    pthread_mutex_lock(&lock);
    if (nwriters == capwriters) {
        size_t cap = capwriters ? capwriters * 2 : 16;
        trace_writer **nw = realloc(writers, cap * sizeof(*nw));
        if (nw) {
            writers = nw;
            capwriters = cap;
        }
    }
    if (nwriters < capwriters)
        writers[nwriters++] = st->w;
    pthread_mutex_unlock(&lock);
    return 0;
}

/* The file of the module holding pc, and pc's offset from its base.
 * The main program is named by /proc/self/exe: dladdr gives it as it was
 * invoked (often relative, or empty). */
static int module_of(uintptr_t pc, char *path, size_t len, uint64_t *off)
{
    static uintptr_t exe_base;
    static char exe_path[PATH_MAX];
    Dl_info info;
    if (!exe_base) {
        Dl_info ei;
        uintptr_t phdr = (uintptr_t)getauxval(AT_PHDR);
        ssize_t n = readlink("/proc/self/exe", exe_path, sizeof(exe_path) - 1);
        if (phdr && n > 0 && dladdr((const void *)phdr, &ei)) {
            exe_path[n] = 0;
            exe_base = (uintptr_t)ei.dli_fbase;
        } else {
            exe_base = 1; /* unknown: dladdr's name stands */
        }
    }
    if (!dladdr((const void *)pc, &info) || !info.dli_fbase)
        return -1;
    *off = pc - (uintptr_t)info.dli_fbase;
    if ((uintptr_t)info.dli_fbase == exe_base)
        snprintf(path, len, "%s", exe_path);
    else
        snprintf(path, len, "%s", info.dli_fname ? info.dli_fname : "");
    return path[0] ? 0 : -1;
}

/* "file:line" of the instruction before a return address, or
 * "module+0xOFFSET" when the module has no line for it. */
static void describe(const void *code, char *buf, size_t len)
{
    uintptr_t pc = (uintptr_t)code - 1;
    char path[PATH_MAX];
    uint64_t off;
    if (!code || module_of(pc, path, sizeof(path), &off)) {
        snprintf(buf, len, "unknown+0x%lx", (unsigned long)pc);
        return;
    }
    if (!syms && !syms_failed && !(syms = sym_new()))
        syms_failed = 1;
    if (syms && sym_lookup(syms, path, off, buf, len, NULL, 0) == 0)
        return;
    snprintf(buf, len, "%s+0x%lx", path, (unsigned long)off);
}

void stream_where(const void *code, char *buf, size_t len)
{
    pthread_mutex_lock(&lock);
    describe(code, buf, len);
    pthread_mutex_unlock(&lock);
}

/* The file and line of a construct as the compiler wrote them into the
 * ident_t it passes the runtime (psource ";file;function;line;column;;"):
 * returns the line, *file and *flen the file, or 0 when unknown (no
 * ident; a build without debug information writes ";unknown;...;0;0;;"). */
static unsigned ident_line(const void *ident, const char **file,
                           size_t *flen)
{
    if (!ident)
        return 0;
    const char *p, *f, *fn;
    memcpy(&p, (const char *)ident + 16, sizeof(p)); /* ident_t.psource */
    if (!p || *p != ';' || !(fn = strchr(p + 1, ';')) ||
        !(f = strchr(fn + 1, ';')))
        return 0;
    unsigned line = 0;
    for (f++; *f >= '0' && *f <= '9' && line < 100000000u; f++)
        line = line * 10 + (unsigned)(*f - '0');
    *file = p + 1;
    *flen = (size_t)(fn - p - 1);
    return *f == ';' ? line : 0;
}

/* Whether the debug information's file name a (shown relative to the
 * working directory when under it) and the ident's b (as the compiler was
 * given it) name one file: equal, or the shorter a suffix of the longer
 * after a '/', leading "./" and "../" left out. */
static int same_file_name(const char *a, size_t alen, const char *b,
                          size_t blen)
{
    for (int k = 0; k < 2; k++) {
        const char **p = k ? &b : &a;
        size_t *n = k ? &blen : &alen;
        for (;;) {
            if (*n >= 2 && !memcmp(*p, "./", 2))
                *p += 2, *n -= 2;
            else if (*n >= 3 && !memcmp(*p, "../", 3))
                *p += 3, *n -= 3;
            else
                break;
        }
    }
    if (alen < blen) {
        const char *t = a;
        a = b;
        b = t;
        size_t tn = alen;
        alen = blen;
        blen = tn;
    }
    return blen > 0 && !memcmp(a + alen - blen, b, blen) &&
           (alen == blen || a[alen - blen - 1] == '/');
}

/* describe(), with the line the compiler gave the construct when it
 * differs from the call's: a compiler may merge the runtime calls of two
 * constructs (two parallel regions in the two branches of an if) into
 * one call instruction, whose debug line is one of theirs.  Only when the
 * debug information names the same file (an inlined call may not). */
static void describe_ident(const void *code, const void *ident, char *buf,
                           size_t len)
{
    describe(code, buf, len);
    const char *file;
    size_t flen;
    unsigned line = ident_line(ident, &file, &flen);
    if (!line)
        return;
    char *colon = strrchr(buf, ':');
    if (!colon || colon[1] < '0' || colon[1] > '9' ||
        strspn(colon + 1, "0123456789") != strlen(colon + 1)) {
        /* The call's address names no line: a construct that ends the
         * body of a parallel region is a tail call there, and returns
         * into the runtime.  The compiler's file and line name it. */
        char f[PATH_MAX], name[PATH_MAX];
        if (!syms || flen >= sizeof(f))
            return;
        memcpy(f, file, flen);
        f[flen] = 0;
        /* A relative name is relative to where the program was compiled:
         * the ident lies in the module, whose units say where. */
        char mod[PATH_MAX];
        uint64_t off;
        if (module_of((uintptr_t)ident, mod, sizeof(mod), &off) ||
            sym_unit_file(syms, mod, f, name, sizeof(name)))
            sym_file_name(syms, f, name, sizeof(name));
        snprintf(buf, len, "%s:%u", name, line);
        return;
    }
    if (same_file_name(buf, (size_t)(colon - buf), file, flen))
        snprintf(colon + 1, len - (size_t)(colon + 1 - buf), "%u", line);
}

/* The first time a module is seen: its build-id, so that an analysis of
 * the trace can tell a rebuilt binary from the one that ran.  Called under
 * the lock. */
static void note_module(stream_thread *st, const void *code)
{
    char path[PATH_MAX];
    uint64_t off;
    module_entry *m;
    if (!code || !syms || module_of((uintptr_t)code - 1, path, sizeof(path),
                                    &off))
        return;
    HASH_FIND_STR(modules, path, m);
    if (m || !(m = calloc(1, sizeof(*m))) || !(m->path = strdup(path))) {
        if (m && !m->path)
            free(m);
        return;
    }
    HASH_ADD_KEYPTR(hh, modules, m->path, strlen(m->path), m);
    char key[PATH_MAX + 16], hex[129];
    snprintf(key, sizeof(key), "build-id %s", path);
    if (sym_build_id(syms, path, hex, sizeof(hex)))
        snprintf(hex, sizeof(hex), "none");
    if (st->w)
        trace_write_meta(st->w, key, hex);
    if (meta_hook)
        meta_hook(key, hex);
}

/* The id of (kind, where): shared by every address that resolved to it.
 * Called under the lock; 0 (the program) when out of memory. */
static uint32_t intern_name(stream_thread *st, const char *directive,
                            const char *where)
{
    char key[4480];
    snprintf(key, sizeof(key), "%s %s", directive, where);
    name_entry *n;
    HASH_FIND_STR(names, key, n);
    if (n)
        return n->id;
    if (!(n = calloc(1, sizeof(*n))) || !(n->key = strdup(key))) {
        free(n);
        return OSPG_LOC_PROGRAM;
    }
    n->id = next_loc++;
    HASH_ADD_KEYPTR(hh, names, n->key, strlen(n->key), n);
    /* Written under the lock so the definition precedes any reuse of the
     * id by this thread. */
    if (st->w)
        trace_write_loc(st->w, n->id, directive, where);
    if (loc_hook)
        loc_hook(n->id, directive, where);
    return n->id;
}

const char *stream_dir_name(int kind)
{
    return kind >= 0 && kind < DIR_COUNT ? dir_names[kind] : "event";
}

uint32_t stream_name(stream_thread *st, const char *directive,
                     const char *where)
{
    pthread_mutex_lock(&lock);
    uint32_t id = intern_name(st, directive, where);
    pthread_mutex_unlock(&lock);
    return id;
}

/* The cache is two-way: a directive's nearby code addresses (a task's
 * creation and the taskwait after it, a few bytes apart) must not evict
 * each other, or every event would take the lock. */
static inline unsigned loc_slot(const void *code, const void *ident,
                                int kind)
{
    uint64_t h = ((uint64_t)(uintptr_t)code ^ ((uint64_t)kind << 56) ^
                  ((uint64_t)(uintptr_t)ident << 7)) *
                 0x9e3779b97f4a7c15ull;
    return (unsigned)(h >> 58) & (STREAM_LOC_CACHE - 2); /* even */
}

uint32_t stream_loc(stream_thread *st, const void *code, int kind)
{
    return stream_loc_ctx(st, code, NULL, kind, 0);
}

uint32_t stream_loc_ident(stream_thread *st, const void *code,
                          const void *ident, int kind)
{
    return stream_loc_ctx(st, code, ident, kind, 0);
}

static const char *chain_text(uint32_t chain);

uint32_t stream_loc_ctx(stream_thread *st, const void *code,
                        const void *ident, int kind, uint32_t chain)
{
    unsigned slot = loc_slot(code, ident, kind) ^ (chain & 0x3e);
    for (unsigned w = slot; w < slot + 2; w++)
        if (st->cache[w].code == code && st->cache[w].ident == ident &&
            st->cache[w].kind == kind && st->cache[w].chain == chain &&
            st->cache[w].loc)
            return st->cache[w].loc;
    loc_key key;
    memset(&key, 0, sizeof(key));
    key.code = code;
    key.ident = ident;
    key.kind = kind;
    key.chain = chain;
    loc_entry *e;
    pthread_mutex_lock(&lock);
    HASH_FIND(hh, locs, &key, sizeof(key), e);
    if (!e) {
        char where[8448];
        describe_ident(code, ident, where, 4352);
        if (chain) { /* its calling context after it, from the first
                      * site that is not its own line */
            const char *ct = chain_text(chain);
            size_t wl = strlen(where);
            if (!strncmp(ct, " < ", 3) && !strncmp(ct + 3, where, wl) &&
                (ct[3 + wl] == 0 || ct[3 + wl] == ' '))
                ct += 3 + wl;
            /* at most the depth asked for (a chain holds one more) */
            const char *end = ct;
            for (int k = 0; k < ctx_depth && *end; k++) {
                const char *next = strstr(end + 3, " < ");
                end = next ? next : end + strlen(end);
            }
            snprintf(where + wl, sizeof(where) - wl, "%.*s",
                     (int)(end - ct), ct);
        }
        note_module(st, code);
        uint32_t id = intern_name(st, dir_names[kind], where);
        if (id == OSPG_LOC_PROGRAM || !(e = calloc(1, sizeof(*e)))) {
            pthread_mutex_unlock(&lock);
            return OSPG_LOC_PROGRAM;
        }
        e->key = key;
        e->id = id;
        HASH_ADD(hh, locs, key, sizeof(e->key), e);
    }
    uint32_t id = e->id;
    pthread_mutex_unlock(&lock);
    st->cache[slot + 1] = st->cache[slot]; /* the older one goes */
    st->cache[slot].code = code;
    st->cache[slot].ident = ident;
    st->cache[slot].kind = kind;
    st->cache[slot].chain = chain;
    st->cache[slot].loc = id;
    return id;
}

/* ---- Calling contexts (--context N) ----
 *
 * A chain is the text " < file:line < file:line ..." of at most
 * ctx_depth call sites, outermost last: the sites a construct's code was
 * inlined from, then the program's frames that called it, then the chain
 * of the construct that started the task it runs in.  Chains are interned
 * twice: by what made them (code, frames, parent chain), so a repeated
 * event finds its chain without symbolizing, and by text, so that two
 * paths that agree on their first ctx_depth sites are one chain. */
typedef struct chain_key {
    const void *code, *start;
    const void *frames[STREAM_CHAIN_FRAMES];
    uint32_t nframes, parent;
    int tail;
} chain_key;

typedef struct chain_entry {
    chain_key key;
    uint32_t id;
    UT_hash_handle hh;
} chain_entry;

typedef struct chain_name {
    char *text;
    uint32_t id;
    UT_hash_handle hh;
} chain_name;

static chain_entry *chains;
static chain_name *chain_names;
static char **chain_texts; /* by id - 1 */
static uint32_t nchain_texts, capchain_texts;

void stream_set_context(int depth)
{
    ctx_depth = depth < 0 ? 0 : depth > STREAM_CHAIN_FRAMES
                                    ? STREAM_CHAIN_FRAMES
                                    : depth;
}

int stream_context(void)
{
    return ctx_depth;
}

/* Called under the lock. */
static const char *chain_text(uint32_t chain)
{
    return chain && chain <= nchain_texts ? chain_texts[chain - 1] : "";
}

/* A chain holds one site more than the depth asked for: the name of a
 * construct may drop the first, its own line (stream_loc_ctx). */
#define CHAIN_SITES (ctx_depth + 1)

/* Appends site (" < file:line") to buf unless it repeats the last one
 * there, or is skip's line (the enclosing construct: its outlined body is
 * called from the directive's line), or, first, own's (the construct's
 * own line, inlined). */
static void chain_site(const char *site, const char *own, const char *skip,
                       char *buf, size_t len, int *n)
{
    const char *prev = strstr(buf, " < ") ? strrchr(buf, '<') - 1 : NULL;
    if (prev ? !strcmp(prev, site) : !strcmp(site + 3, own))
        return;
    if (skip && *skip && !strcmp(site + 3, skip))
        return;
    size_t used = strlen(buf);
    snprintf(buf + used, len - used, "%s", site);
    (*n)++;
}

/* Appends the site of the call before return address ra and the sites it
 * was inlined from (inline_only: those alone), while fewer than ctx_depth
 * sites are in buf (*n counts them); a frame with no source line is left
 * out.  own is the construct's own "file:line".  Under the lock. */
static void chain_add(const void *ra, int inline_only, const char *own,
                      const char *skip, char *buf, size_t len, int *n)
{
    uintptr_t pc = (uintptr_t)ra - 1;
    char path[PATH_MAX], site[4400], sites[8192];
    uint64_t off;
    if (*n >= CHAIN_SITES || module_of(pc, path, sizeof(path), &off) ||
        !syms)
        return;
    if (!inline_only) {
        char where[4352];
        if (sym_lookup(syms, path, off, where, sizeof(where), NULL, 0))
            return; /* no line: _start, a stripped library */
        snprintf(site, sizeof(site), " < %s", where);
        chain_site(site, own, skip, buf, len, n);
    }
    if (*n >= CHAIN_SITES)
        return;
    sites[0] = 0;
    sym_inline_sites(syms, path, off, sites, sizeof(sites), CHAIN_SITES - *n);
    for (char *p = sites; *p && *n < CHAIN_SITES;) {
        char *next = strstr(p + 3, " < ");
        size_t l = next ? (size_t)(next - p) : strlen(p);
        snprintf(site, sizeof(site), "%.*s", (int)l, p);
        chain_site(site, own, skip, buf, len, n);
        p += l;
    }
}

uint32_t stream_chain(stream_thread *st, const void *code,
                      const void *ident, int tail,
                      const void *const *frames, int nframes,
                      uint32_t parent, const void *start)
{
    (void)st;
    if (!ctx_depth)
        return 0;
    chain_key key;
    memset(&key, 0, sizeof(key));
    key.code = code;
    key.nframes = nframes < 0 ? 0 : nframes > STREAM_CHAIN_FRAMES
                                        ? STREAM_CHAIN_FRAMES
                                        : (uint32_t)nframes;
    memcpy(key.frames, frames, key.nframes * sizeof(*frames));
    key.parent = parent;
    key.start = start;
    key.tail = tail;
    chain_entry *e;
    pthread_mutex_lock(&lock);
    HASH_FIND(hh, chains, &key, sizeof(key), e);
    if (e) {
        uint32_t id = e->id;
        pthread_mutex_unlock(&lock);
        return id;
    }
    if (!syms && !syms_failed && !(syms = sym_new()))
        syms_failed = 1;
    char buf[8192] = "", own[4352] = "", skip[4352] = "", at[4352] = "";
    int n = 0;
    if (code) {
        describe_ident(code, ident, own, sizeof(own));
        describe(code, at, sizeof(at));
    }
    if (start)
        describe(start, skip, sizeof(skip));
    /* code's own line is a site when it is not the construct's and the
     * call may be a tail call, which returns into the caller of the
     * construct's function */
    if (code)
        chain_add(code, !tail || !strcmp(own, at), own, skip, buf,
                  sizeof(buf), &n);
    for (uint32_t i = 0; i < key.nframes; i++)
        chain_add(key.frames[i], 0, own, skip, buf, sizeof(buf), &n);
    /* the parent's sites, as many as room is left */
    const char *p = chain_text(parent);
    while (*p && n < CHAIN_SITES) {
        const char *next = strstr(p + 3, " < ");
        size_t l = next ? (size_t)(next - p) : strlen(p);
        char site[4400];
        snprintf(site, sizeof(site), "%.*s", (int)l, p);
        chain_site(site, own, NULL, buf, sizeof(buf), &n);
        p += l;
    }
    uint32_t id = 0;
    chain_name *cn;
    HASH_FIND_STR(chain_names, buf, cn);
    if (cn) {
        id = cn->id;
    } else if (buf[0] && (cn = calloc(1, sizeof(*cn))) &&
               (cn->text = strdup(buf))) {
        if (nchain_texts == capchain_texts) {
            uint32_t cap = capchain_texts ? 2 * capchain_texts : 64;
            char **t = realloc(chain_texts, cap * sizeof(*t));
            if (t) {
                chain_texts = t;
                capchain_texts = cap;
            }
        }
        if (nchain_texts < capchain_texts) {
            chain_texts[nchain_texts++] = cn->text;
            cn->id = id = nchain_texts;
            HASH_ADD_KEYPTR(hh, chain_names, cn->text, strlen(cn->text), cn);
        } else {
            free(cn->text);
            free(cn);
        }
    } else if (cn) {
        free(cn);
    }
    if ((e = calloc(1, sizeof(*e)))) {
        e->key = key;
        e->id = id;
        HASH_ADD(hh, chains, key, sizeof(e->key), e);
    }
    pthread_mutex_unlock(&lock);
    return id;
}

/* The name of a sampled instruction: "file:line" and its function where
 * the module has debug information, else the module and the function's
 * symbol, so that code without lines still adds up per function. */
static void describe_sample(uint64_t ip, char *where, size_t wlen,
                            char *func, size_t flen)
{
    char path[PATH_MAX];
    uint64_t off;
    func[0] = 0;
    if (module_of((uintptr_t)ip, path, sizeof(path), &off)) {
        snprintf(where, wlen, "unknown");
        return;
    }
    /* The system's libraries (the runtime among them) are named by
     * function: their lines are not the program's to change, and reading
     * their debug information would cost megabytes. */
    int system_lib = !strncmp(path, "/lib/", 5) ||
                     !strncmp(path, "/lib64/", 7) ||
                     !strncmp(path, "/usr/lib/", 9) ||
                     !strncmp(path, "/usr/lib64/", 11);
    if (!system_lib && !syms && !syms_failed && !(syms = sym_new()))
        syms_failed = 1;
    if (!system_lib && syms &&
        sym_lookup(syms, path, off, where, wlen, func, flen) == 0)
        return;
    Dl_info info;
    const char *base = strrchr(path, '/');
    snprintf(where, wlen, "%s", base ? base + 1 : path);
    if (dladdr((const void *)(uintptr_t)ip, &info) && info.dli_sname)
        snprintf(func, flen, "%s", info.dli_sname);
}

uint32_t stream_line(stream_thread *st, uint64_t ip)
{
    /* cached as a code address, which names the instruction before it */
    const void *code = (const void *)(uintptr_t)(ip + 1);
    unsigned slot = loc_slot(code, NULL, DIR_LINE);
    for (unsigned w = slot; w < slot + 2; w++)
        if (st->cache[w].code == code && !st->cache[w].ident &&
            st->cache[w].kind == DIR_LINE && st->cache[w].loc)
            return st->cache[w].loc;
    loc_key key;
    memset(&key, 0, sizeof(key));
    key.code = code;
    key.kind = DIR_LINE;
    loc_entry *e;
    pthread_mutex_lock(&lock);
    HASH_FIND(hh, locs, &key, sizeof(key), e);
    if (!e) {
        char where[4352], func[512], directive[600];
        describe_sample(ip, where, sizeof(where), func, sizeof(func));
        snprintf(directive, sizeof(directive), "line%s%s", func[0] ? ":" : "",
                 func);
        uint32_t id = intern_name(st, directive, where);
        if (id == OSPG_LOC_PROGRAM || !(e = calloc(1, sizeof(*e)))) {
            pthread_mutex_unlock(&lock);
            return OSPG_LOC_PROGRAM;
        }
        e->key = key;
        e->id = id;
        HASH_ADD(hh, locs, key, sizeof(e->key), e);
    }
    uint32_t id = e->id;
    pthread_mutex_unlock(&lock);
    st->cache[slot + 1] = st->cache[slot];
    st->cache[slot].code = code;
    st->cache[slot].ident = NULL;
    st->cache[slot].kind = DIR_LINE;
    st->cache[slot].chain = 0;
    st->cache[slot].loc = id;
    return id;
}


void stream_meta(stream_thread *st, const char *key, const char *value)
{
    if (st->w)
        trace_write_meta(st->w, key, value);
}

uint32_t stream_count(void)
{
    pthread_mutex_lock(&lock);
    uint32_t n = next_stream;
    pthread_mutex_unlock(&lock);
    return n;
}

void stream_flush_all_unlocked(void)
{
    for (size_t i = 0; i < nwriters; i++)
        trace_writer_flush(writers[i]);
}

uint64_t stream_flush_all(void)
{
    uint64_t dropped = 0;
    int err = 0;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nwriters; i++) {
        trace_writer_flush(writers[i]);
        dropped += trace_writer_dropped(writers[i]);
        if (!err)
            err = trace_writer_errno(writers[i]);
    }
    pthread_mutex_unlock(&lock);
    /* A full disk, a removed directory: said once, here, since the trace
     * cannot say it. */
    static int told;
    if (dropped && !told) {
        told = 1;
        if (err)
            fprintf(stderr, "whatif: %llu trace records could not be "
                            "written to %s (%s): the trace is incomplete\n",
                    (unsigned long long)dropped, out_dir, strerror(err));
        else /* the writer refused them: out of range, a bug of ours */
            fprintf(stderr, "whatif: %llu trace records could not be "
                            "written to %s (the trace writer refused them "
                            "as invalid; please report it): the trace is "
                            "incomplete\n",
                    (unsigned long long)dropped, out_dir);
    }
    return dropped;
}
