/* stream.c - per-thread trace streams and location interning. */
#include "stream.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <uthash.h>

static const char *const dir_names[DIR_COUNT] = {
    "parallel", "loop", "sections", "single", "masked", "critical", "lock",
    "ordered", "task", "taskloop", "taskgroup", "taskwait", "region",
};

typedef struct loc_key {
    const void *code;
    int kind;
    int pad;
} loc_key;

typedef struct loc_entry {
    loc_key key;
    uint32_t id;
    UT_hash_handle hh;
} loc_entry;

static char out_dir[4096];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static loc_entry *locs;
static uint32_t next_loc = 1;
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
    st->w = trace_writer_open(path, st->index, 0);
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

/* "module+0xOFFSET" of the instruction before a return address. */
static void describe(const void *code, char *buf, size_t len)
{
    Dl_info info;
    uintptr_t pc = (uintptr_t)code - 1;
    if (code && dladdr((const void *)pc, &info) && info.dli_fname) {
        snprintf(buf, len, "%s+0x%lx", info.dli_fname,
                 (unsigned long)(pc - (uintptr_t)info.dli_fbase));
    } else {
        snprintf(buf, len, "unknown+0x%lx", (unsigned long)pc);
    }
}

uint32_t stream_loc(stream_thread *st, const void *code, int kind)
{
    unsigned slot = (unsigned)(((uintptr_t)code >> 2) ^ (unsigned)kind) %
                    STREAM_LOC_CACHE;
    if (st->cache[slot].code == code && st->cache[slot].kind == kind &&
        st->cache[slot].loc)
        return st->cache[slot].loc;
    loc_key key;
    memset(&key, 0, sizeof(key));
    key.code = code;
    key.kind = kind;
    loc_entry *e;
    pthread_mutex_lock(&lock);
    HASH_FIND(hh, locs, &key, sizeof(key), e);
    if (!e) {
        e = calloc(1, sizeof(*e));
        if (!e) {
            pthread_mutex_unlock(&lock);
            return OSPG_LOC_PROGRAM;
        }
        e->key = key;
        e->id = next_loc++;
        HASH_ADD(hh, locs, key, sizeof(e->key), e);
        char where[4352];
        describe(code, where, sizeof(where));
        /* Written under the lock so the definition precedes any reuse
         * of the id by this thread. */
        if (st->w)
            trace_write_loc(st->w, e->id, dir_names[kind], where);
        if (loc_hook)
            loc_hook(e->id, dir_names[kind], where);
    }
    uint32_t id = e->id;
    pthread_mutex_unlock(&lock);
    st->cache[slot].code = code;
    st->cache[slot].kind = kind;
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

uint64_t stream_flush_all(void)
{
    uint64_t dropped = 0;
    pthread_mutex_lock(&lock);
    for (size_t i = 0; i < nwriters; i++) {
        trace_writer_flush(writers[i]);
        dropped += trace_writer_dropped(writers[i]);
    }
    pthread_mutex_unlock(&lock);
    return dropped;
}
