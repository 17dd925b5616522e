/* loctab.h - the location table: names for the location ids of a profile.
 *
 * A location is a pair of strings: the directive kind ("parallel", "loop",
 * "task", ...) and where it is ("file:line", "binary+0x1a2b").  The OSPG
 * core only sees uint32 ids; this table maps each id to its pair and, for
 * whoever creates locations, hands out ids for new pairs (interning).
 *
 * Id 0 is always ("program", "program"), the whole program
 * (OSPG_LOC_PROGRAM).  Id UINT32_MAX (LOCTAB_ID_NONE, the same value as
 * OSPG_LOC_NONE) is never a location.  The table owns copies of all its
 * strings; entries stay valid, at the same address, until loctab_free().
 * Not thread-safe: concurrent callers serialize.
 */
#ifndef WHATIF_LOCTAB_H
#define WHATIF_LOCTAB_H

#include <stddef.h>
#include <stdint.h>

#define LOCTAB_ID_NONE UINT32_MAX /* == OSPG_LOC_NONE: not a location */

/* Error codes (0 is success); loctab_strerror() names them. */
enum {
    LOCTAB_OK = 0,
    LOCTAB_ERR_NOMEM = -1,
    LOCTAB_ERR_ARG = -2,      /* NULL string, id LOCTAB_ID_NONE, too long */
    LOCTAB_ERR_CONFLICT = -3, /* id already defined with different text */
    LOCTAB_ERR_FULL = -4      /* no id left to intern a new pair */
};

typedef struct loctab loctab;

/* What a grain of a location with this directive is, for what the runtime
 * pays to start it: a task (created), a chunk (handed out), or neither. */
typedef enum { LOCTAB_GRAIN_NONE, LOCTAB_GRAIN_TASK, LOCTAB_GRAIN_CHUNK } loctab_grain;

/* One location.  The strings belong to the table (read-only to callers). */
typedef struct loctab_entry {
    uint32_t id;
    const char *directive; /* "parallel", "loop", "task", "program", ... */
    const char *where;     /* "file:line", "binary+0x1a2b", "program" */
    loctab_grain grain;    /* what the directive's grains are, set once:
                            * asked once per grain in a burdened analysis */
} loctab_entry;

const char *loctab_strerror(int err);

/* Creates a table holding only id 0 ("program", "program").  Returns NULL
 * when out of memory.  The caller owns the table (loctab_free). */
loctab *loctab_new(void);

/* Frees the table and every string it holds; NULL is allowed. */
void loctab_free(loctab *lt);

/* Defines id as (directive, where); both strings are copied.  Defining an
 * id again with the same text is a no-op returning LOCTAB_OK; with other
 * text it returns LOCTAB_ERR_CONFLICT and leaves the first definition (id 0
 * can only be redefined as ("program", "program")).  Two ids may carry the
 * same pair; loctab_intern() then returns the one defined first.  Returns
 * LOCTAB_ERR_ARG for a NULL string or id LOCTAB_ID_NONE, LOCTAB_ERR_NOMEM
 * when out of memory (the table is unchanged on every error). */
int loctab_set(loctab *lt, uint32_t id, const char *directive,
               const char *where);

/* The entry of id, or NULL when id is not defined.  The pointer stays valid
 * until loctab_free(). */
const loctab_entry *loctab_get(const loctab *lt, uint32_t id);

/* e's grain kind (LOCTAB_GRAIN_NONE for NULL). */
loctab_grain loctab_grain_of(const loctab_entry *e);

/* The id of (directive, where): the existing one when the pair is already
 * defined, otherwise a new one (one more than the largest id defined so
 * far), with the strings copied.  Returns LOCTAB_ID_NONE on failure; *err,
 * when err is not NULL, then says why (NOMEM, ARG for a NULL string, FULL
 * when the largest id is UINT32_MAX - 1); it is LOCTAB_OK on success. */
uint32_t loctab_intern(loctab *lt, const char *directive, const char *where,
                       int *err);

/* Number of defined ids (at least 1: id 0). */
size_t loctab_count(const loctab *lt);

/* Iteration in definition order (id 0 first):
 *     for (e = loctab_first(lt); e; e = loctab_next(lt, e)) ...
 * Defining ids while iterating is allowed; the new ones come last. */
const loctab_entry *loctab_first(const loctab *lt);
const loctab_entry *loctab_next(const loctab *lt, const loctab_entry *e);

#endif
