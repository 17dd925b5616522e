/* loctab.c - the location table (see loctab.h).
 *
 * Every entry is one malloc'd item in two uthash tables: by id, and by the
 * (directive, where) pair.  The item owns one string buffer holding
 * "directive\0where\0"; the pair key is its first strlen(directive) + 1 +
 * strlen(where) bytes, which is unambiguous since neither string holds a
 * NUL.  uthash is built with non-fatal out-of-memory handling, so a failed
 * insertion is reported instead of exiting the process.
 */
#include "loctab.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define HASH_NONFATAL_OOM 1
#include <uthash.h>

typedef struct loc_item {
    loctab_entry pub;       /* first member: entry pointers are item ones */
    char *buf;              /* "directive\0where\0", owned */
    size_t keylen;          /* bytes of the pair key in buf */
    int in_pair;            /* also in the by-pair table */
    UT_hash_handle hh_id;   /* by pub.id; keeps definition order */
    UT_hash_handle hh_pair; /* by pair key; first definition only */
} loc_item;

struct loctab {
    loc_item *by_id;
    loc_item *by_pair;
    uint32_t next_id; /* one more than the largest id defined */
};

const char *loctab_strerror(int err)
{
    switch (err) {
    case LOCTAB_OK: return "success";
    case LOCTAB_ERR_NOMEM: return "out of memory";
    case LOCTAB_ERR_ARG: return "invalid argument";
    case LOCTAB_ERR_CONFLICT: return "location redefined with other text";
    case LOCTAB_ERR_FULL: return "no location id left";
    default: return "unknown location table error";
    }
}

static loc_item *find_id(const loctab *lt, uint32_t id)
{
    loc_item *head = lt->by_id, *out = NULL;
    HASH_FIND(hh_id, head, &id, sizeof id, out);
    return out;
}

static loc_item *find_pair(const loctab *lt, const char *key, size_t keylen)
{
    loc_item *head = lt->by_pair, *out = NULL;
    HASH_FIND(hh_pair, head, key, (unsigned)keylen, out);
    return out;
}

/* Builds "directive\0where\0" in a new buffer (caller frees).  Returns NULL
 * with *err set on failure. */
static char *make_key(const char *directive, const char *where,
                      size_t *keylen, int *err)
{
    if (!directive || !where) {
        *err = LOCTAB_ERR_ARG;
        return NULL;
    }
    size_t dl = strlen(directive), wl = strlen(where);
    if (dl > UINT_MAX / 4 || wl > UINT_MAX / 4) { /* uthash key lengths */
        *err = LOCTAB_ERR_ARG;
        return NULL;
    }
    char *buf = malloc(dl + wl + 2);
    if (!buf) {
        *err = LOCTAB_ERR_NOMEM;
        return NULL;
    }
    memcpy(buf, directive, dl + 1);
    memcpy(buf + dl + 1, where, wl + 1);
    *keylen = dl + 1 + wl;
    return buf;
}

static loctab_grain grain_of_directive(const char *directive)
{
    if (!strcmp(directive, "task") || !strcmp(directive, "taskloop"))
        return LOCTAB_GRAIN_TASK;
    if (!strcmp(directive, "loop") || !strcmp(directive, "sections"))
        return LOCTAB_GRAIN_CHUNK;
    return LOCTAB_GRAIN_NONE;
}

/* Adds a new item for id owning buf (taken over even on failure). */
static int add_item(loctab *lt, uint32_t id, char *buf, size_t keylen)
{
    loc_item *it = calloc(1, sizeof *it);
    if (!it) {
        free(buf);
        return LOCTAB_ERR_NOMEM;
    }
    it->pub.id = id;
    it->pub.directive = buf;
    it->pub.where = buf + strlen(buf) + 1;
    it->pub.grain = grain_of_directive(buf);
    it->buf = buf;
    it->keylen = keylen;
    HASH_ADD(hh_id, lt->by_id, pub.id, sizeof it->pub.id, it);
    if (!it->hh_id.tbl) { /* uthash could not allocate */
        free(buf);
        free(it);
        return LOCTAB_ERR_NOMEM;
    }
    if (!find_pair(lt, buf, keylen)) {
        HASH_ADD_KEYPTR(hh_pair, lt->by_pair, it->buf, (unsigned)keylen, it);
        if (!it->hh_pair.tbl) {
            HASH_DELETE(hh_id, lt->by_id, it);
            free(buf);
            free(it);
            return LOCTAB_ERR_NOMEM;
        }
        it->in_pair = 1;
    }
    if (id >= lt->next_id)
        lt->next_id = id + 1; /* id < UINT32_MAX, so no overflow */
    return LOCTAB_OK;
}

loctab *loctab_new(void)
{
    loctab *lt = calloc(1, sizeof *lt);
    if (!lt)
        return NULL;
    if (loctab_set(lt, 0, "program", "program") != LOCTAB_OK) {
        free(lt);
        return NULL;
    }
    return lt;
}

void loctab_free(loctab *lt)
{
    if (!lt)
        return;
    HASH_CLEAR(hh_pair, lt->by_pair);
    loc_item *it, *tmp;
    HASH_ITER(hh_id, lt->by_id, it, tmp) {
        HASH_DELETE(hh_id, lt->by_id, it);
        free(it->buf);
        free(it);
    }
    free(lt);
}

int loctab_set(loctab *lt, uint32_t id, const char *directive,
               const char *where)
{
    if (!lt || id == LOCTAB_ID_NONE)
        return LOCTAB_ERR_ARG;
    int err = LOCTAB_OK;
    size_t keylen = 0;
    char *buf = make_key(directive, where, &keylen, &err);
    if (!buf)
        return err;
    loc_item *old = find_id(lt, id);
    if (old) {
        int same = old->keylen == keylen && !memcmp(old->buf, buf, keylen);
        free(buf);
        return same ? LOCTAB_OK : LOCTAB_ERR_CONFLICT;
    }
    return add_item(lt, id, buf, keylen);
}

const loctab_entry *loctab_get(const loctab *lt, uint32_t id)
{
    if (!lt)
        return NULL;
    loc_item *it = find_id(lt, id);
    return it ? &it->pub : NULL;
}

uint32_t loctab_intern(loctab *lt, const char *directive, const char *where,
                       int *err)
{
    int e = LOCTAB_OK;
    uint32_t id = LOCTAB_ID_NONE;
    size_t keylen = 0;
    char *buf = NULL;
    if (!lt) {
        e = LOCTAB_ERR_ARG;
        goto out;
    }
    buf = make_key(directive, where, &keylen, &e);
    if (!buf)
        goto out;
    loc_item *old = find_pair(lt, buf, keylen);
    if (old) {
        free(buf);
        id = old->pub.id;
        goto out;
    }
    if (lt->next_id == LOCTAB_ID_NONE) {
        free(buf);
        e = LOCTAB_ERR_FULL;
        goto out;
    }
    uint32_t nid = lt->next_id;
    e = add_item(lt, nid, buf, keylen);
    if (e == LOCTAB_OK)
        id = nid;
out:
    if (err)
        *err = e;
    return id;
}

size_t loctab_count(const loctab *lt)
{
    if (!lt)
        return 0;
    loc_item *head = lt->by_id;
    return HASH_CNT(hh_id, head);
}

const loctab_entry *loctab_first(const loctab *lt)
{
    return lt && lt->by_id ? &lt->by_id->pub : NULL;
}

const loctab_entry *loctab_next(const loctab *lt, const loctab_entry *e)
{
    (void)lt;
    if (!e)
        return NULL;
    const loc_item *it = (const loc_item *)e;
    const loc_item *next = it->hh_id.next;
    return next ? &next->pub : NULL;
}

loctab_grain loctab_grain_of(const loctab_entry *e)
{
    return e ? e->grain : LOCTAB_GRAIN_NONE;
}
