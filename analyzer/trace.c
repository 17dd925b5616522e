/* trace.c - writes and reads the per-thread binary trace.
 *
 * The format is specified byte by byte in docs/trace-format.md; this file is
 * its only implementation.  The writer runs inside the profiled program, so
 * after trace_writer_open it allocates nothing, takes no lock and calls no
 * stdio: a record is encoded straight into the block buffer, and a full
 * block leaves with one write(2) (only a record larger than the whole
 * buffer is streamed out in pieces, see put_alone).  The reader runs on
 * untrusted bytes (the fuzz target feeds it anything), so every length and
 * value is checked before use and every problem becomes one
 * "NAME: byte OFFSET: message" line; its memory is bounded by the format's
 * limits, not the file's size.
 */
#define _POSIX_C_SOURCE 200809L

#include "trace.h"
#include "fdkeep.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FILE_HDR_LEN 24u
#define BLOCK_HDR_LEN 8u
#define DEFAULT_BLOCK (256u << 10)
#define VARINT_MAX 10u

/* The largest record the writer can produce (a BEGIN in a group with
 * TRACE_MAX_DEPS depend items, each a 10-byte address delta and a 1-byte
 * type: type, 5 ten-byte fields, kind, loc, ndeps, items).  It must fit one
 * block, or a record could never be written whole. */
#define REC_MAX (1u + 5u * VARINT_MAX + 1u + 5u + 3u + \
                 TRACE_MAX_DEPS * (VARINT_MAX + 1u))
_Static_assert(REC_MAX <= TRACE_BLOCK_MAX, "largest record must fit a block");
/* The largest LEAF or END (what a TIME may precede): a LEAF with type,
 * parent, idx, kind, loc, group, owner, nchildren and its W-child's work,
 * loc, region and flags. */
#define TIMED_REC_MAX (1u + 12u * VARINT_MAX)
_Static_assert(2u * (TRACE_MAX_STR + 3u) + 1u <= TRACE_BLOCK_MAX,
               "largest META/LOC record must fit a block");

/* ---- shared encoding helpers ---- */

/* CRC-32 (IEEE 802.3, reflected polynomial 0xEDB88320), as in zlib and
 * gzip.  The table is a constant so that writers on many threads never race
 * to build it. */
static const uint32_t crc_table[256] = {
    0x00000000u, 0x77073096u, 0xee0e612cu, 0x990951bau, 0x076dc419u, 0x706af48fu,
    0xe963a535u, 0x9e6495a3u, 0x0edb8832u, 0x79dcb8a4u, 0xe0d5e91eu, 0x97d2d988u,
    0x09b64c2bu, 0x7eb17cbdu, 0xe7b82d07u, 0x90bf1d91u, 0x1db71064u, 0x6ab020f2u,
    0xf3b97148u, 0x84be41deu, 0x1adad47du, 0x6ddde4ebu, 0xf4d4b551u, 0x83d385c7u,
    0x136c9856u, 0x646ba8c0u, 0xfd62f97au, 0x8a65c9ecu, 0x14015c4fu, 0x63066cd9u,
    0xfa0f3d63u, 0x8d080df5u, 0x3b6e20c8u, 0x4c69105eu, 0xd56041e4u, 0xa2677172u,
    0x3c03e4d1u, 0x4b04d447u, 0xd20d85fdu, 0xa50ab56bu, 0x35b5a8fau, 0x42b2986cu,
    0xdbbbc9d6u, 0xacbcf940u, 0x32d86ce3u, 0x45df5c75u, 0xdcd60dcfu, 0xabd13d59u,
    0x26d930acu, 0x51de003au, 0xc8d75180u, 0xbfd06116u, 0x21b4f4b5u, 0x56b3c423u,
    0xcfba9599u, 0xb8bda50fu, 0x2802b89eu, 0x5f058808u, 0xc60cd9b2u, 0xb10be924u,
    0x2f6f7c87u, 0x58684c11u, 0xc1611dabu, 0xb6662d3du, 0x76dc4190u, 0x01db7106u,
    0x98d220bcu, 0xefd5102au, 0x71b18589u, 0x06b6b51fu, 0x9fbfe4a5u, 0xe8b8d433u,
    0x7807c9a2u, 0x0f00f934u, 0x9609a88eu, 0xe10e9818u, 0x7f6a0dbbu, 0x086d3d2du,
    0x91646c97u, 0xe6635c01u, 0x6b6b51f4u, 0x1c6c6162u, 0x856530d8u, 0xf262004eu,
    0x6c0695edu, 0x1b01a57bu, 0x8208f4c1u, 0xf50fc457u, 0x65b0d9c6u, 0x12b7e950u,
    0x8bbeb8eau, 0xfcb9887cu, 0x62dd1ddfu, 0x15da2d49u, 0x8cd37cf3u, 0xfbd44c65u,
    0x4db26158u, 0x3ab551ceu, 0xa3bc0074u, 0xd4bb30e2u, 0x4adfa541u, 0x3dd895d7u,
    0xa4d1c46du, 0xd3d6f4fbu, 0x4369e96au, 0x346ed9fcu, 0xad678846u, 0xda60b8d0u,
    0x44042d73u, 0x33031de5u, 0xaa0a4c5fu, 0xdd0d7cc9u, 0x5005713cu, 0x270241aau,
    0xbe0b1010u, 0xc90c2086u, 0x5768b525u, 0x206f85b3u, 0xb966d409u, 0xce61e49fu,
    0x5edef90eu, 0x29d9c998u, 0xb0d09822u, 0xc7d7a8b4u, 0x59b33d17u, 0x2eb40d81u,
    0xb7bd5c3bu, 0xc0ba6cadu, 0xedb88320u, 0x9abfb3b6u, 0x03b6e20cu, 0x74b1d29au,
    0xead54739u, 0x9dd277afu, 0x04db2615u, 0x73dc1683u, 0xe3630b12u, 0x94643b84u,
    0x0d6d6a3eu, 0x7a6a5aa8u, 0xe40ecf0bu, 0x9309ff9du, 0x0a00ae27u, 0x7d079eb1u,
    0xf00f9344u, 0x8708a3d2u, 0x1e01f268u, 0x6906c2feu, 0xf762575du, 0x806567cbu,
    0x196c3671u, 0x6e6b06e7u, 0xfed41b76u, 0x89d32be0u, 0x10da7a5au, 0x67dd4accu,
    0xf9b9df6fu, 0x8ebeeff9u, 0x17b7be43u, 0x60b08ed5u, 0xd6d6a3e8u, 0xa1d1937eu,
    0x38d8c2c4u, 0x4fdff252u, 0xd1bb67f1u, 0xa6bc5767u, 0x3fb506ddu, 0x48b2364bu,
    0xd80d2bdau, 0xaf0a1b4cu, 0x36034af6u, 0x41047a60u, 0xdf60efc3u, 0xa867df55u,
    0x316e8eefu, 0x4669be79u, 0xcb61b38cu, 0xbc66831au, 0x256fd2a0u, 0x5268e236u,
    0xcc0c7795u, 0xbb0b4703u, 0x220216b9u, 0x5505262fu, 0xc5ba3bbeu, 0xb2bd0b28u,
    0x2bb45a92u, 0x5cb36a04u, 0xc2d7ffa7u, 0xb5d0cf31u, 0x2cd99e8bu, 0x5bdeae1du,
    0x9b64c2b0u, 0xec63f226u, 0x756aa39cu, 0x026d930au, 0x9c0906a9u, 0xeb0e363fu,
    0x72076785u, 0x05005713u, 0x95bf4a82u, 0xe2b87a14u, 0x7bb12baeu, 0x0cb61b38u,
    0x92d28e9bu, 0xe5d5be0du, 0x7cdcefb7u, 0x0bdbdf21u, 0x86d3d2d4u, 0xf1d4e242u,
    0x68ddb3f8u, 0x1fda836eu, 0x81be16cdu, 0xf6b9265bu, 0x6fb077e1u, 0x18b74777u,
    0x88085ae6u, 0xff0f6a70u, 0x66063bcau, 0x11010b5cu, 0x8f659effu, 0xf862ae69u,
    0x616bffd3u, 0x166ccf45u, 0xa00ae278u, 0xd70dd2eeu, 0x4e048354u, 0x3903b3c2u,
    0xa7672661u, 0xd06016f7u, 0x4969474du, 0x3e6e77dbu, 0xaed16a4au, 0xd9d65adcu,
    0x40df0b66u, 0x37d83bf0u, 0xa9bcae53u, 0xdebb9ec5u, 0x47b2cf7fu, 0x30b5ffe9u,
    0xbdbdf21cu, 0xcabac28au, 0x53b39330u, 0x24b4a3a6u, 0xbad03605u, 0xcdd70693u,
    0x54de5729u, 0x23d967bfu, 0xb3667a2eu, 0xc4614ab8u, 0x5d681b02u, 0x2a6f2b94u,
    0xb40bbe37u, 0xc30c8ea1u, 0x5a05df1bu, 0x2d02ef8du,
};

/* Byte-at-a-time CRC costs about as much as encoding the records, so
 * long runs go 8 bytes at a time through 8 derived tables ("slicing-by-8").
 * Those are built once, by the first thread to open a writer or reader;
 * the atomic flag (no lock) lets any thread that finds them not ready yet
 * use the constant table meanwhile, which gives the same CRC. */
static uint32_t crc_slice[8][256];
static atomic_int crc_slice_state; /* 0 not built, 1 building, 2 ready */

static void crc_prepare(void)
{
    int expect = 0;
    if (atomic_load_explicit(&crc_slice_state, memory_order_acquire) == 2 ||
        !atomic_compare_exchange_strong(&crc_slice_state, &expect, 1))
        return;
    for (int i = 0; i < 256; i++)
        crc_slice[0][i] = crc_table[i];
    for (int k = 1; k < 8; k++)
        for (int i = 0; i < 256; i++) {
            uint32_t c = crc_slice[k - 1][i];
            crc_slice[k][i] = (c >> 8) ^ crc_table[c & 0xffu];
        }
    atomic_store_explicit(&crc_slice_state, 2, memory_order_release);
}

/* Runs the CRC over more bytes; state starts at 0xFFFFFFFF and the final
 * CRC is its complement, so a CRC can be computed piecewise. */
static uint32_t crc_run(uint32_t state, const uint8_t *p, size_t n)
{
    if (n >= 16 &&
        atomic_load_explicit(&crc_slice_state, memory_order_acquire) == 2) {
        const uint32_t(*t)[256] = (const uint32_t(*)[256])crc_slice;
        for (; n >= 8; p += 8, n -= 8) {
            uint32_t a = state ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 |
                                  (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
            state = t[7][a & 0xffu] ^ t[6][(a >> 8) & 0xffu] ^
                    t[5][(a >> 16) & 0xffu] ^ t[4][a >> 24] ^ t[3][p[4]] ^
                    t[2][p[5]] ^ t[1][p[6]] ^ t[0][p[7]];
        }
    }
    for (size_t i = 0; i < n; i++)
        state = crc_table[(state ^ p[i]) & 0xffu] ^ (state >> 8);
    return state;
}

static uint32_t crc32_ieee(const uint8_t *p, size_t n)
{
    return ~crc_run(0xffffffffu, p, n);
}

static void put_le32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_le32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
           (uint32_t)p[3] << 24;
}

static uint64_t get_le64(const uint8_t *p)
{
    return (uint64_t)get_le32(p) | (uint64_t)get_le32(p + 4) << 32;
}

static void put_le64(uint8_t *p, uint64_t v)
{
    put_le32(p, (uint32_t)v);
    put_le32(p + 4, (uint32_t)(v >> 32));
}

/* Signed deltas become small unsigned numbers either way round, so that an
 * id slightly below the previous one is as cheap as one slightly above.
 * The arithmetic is modulo 2^64, which makes the mapping total. */
static uint64_t zigzag(uint64_t d) { return (d << 1) ^ (0 - (d >> 63)); }
static uint64_t unzigzag(uint64_t z) { return (z >> 1) ^ (0 - (z & 1)); }

/* OSPG_LOC_NONE is common and would cost 5 bytes as itself. */
static uint64_t loc_code(uint32_t loc)
{
    return loc == OSPG_LOC_NONE ? 0 : (uint64_t)loc + 1;
}

static uint8_t *varint_put(uint8_t *p, uint64_t v)
{
    while (v >= 0x80) {
        *p++ = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    *p++ = (uint8_t)v;
    return p;
}

static size_t varint_len(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

/* ---- Writer ---- */

struct trace_writer {
    int fd;
    char *path;        /* to open the file again (own_fd) */
    dev_t dev;         /* the file fd was opened on */
    ino_t ino;
    int failed;        /* a write failed: everything from then on is dropped */
    int err;           /* errno of that failure */
    uint8_t *buf;      /* BLOCK_HDR_LEN header bytes, then bsize payload */
    size_t bsize;      /* payload capacity: the block size */
    size_t used;       /* payload bytes in the current block */
    uint64_t prev;     /* node id coded last in the current block */
    uint64_t prev_time; /* TIME end coded last in the block, in units */
    uint64_t nrec;     /* records in the current block, lost if it is */
    int names;         /* the current block holds a LOC, META, REGION or
                        * NOTE: a reader after names reads it */
    uint64_t bytes;    /* bytes that reached the file */
    uint64_t dropped;  /* records that did not */
};

/* A record to encode: the public record plus string lengths. */
typedef struct wrec {
    trace_rec r;
    size_t n1, n2;
} wrec;

/* Every record is produced by one walker (emit) into a sink, so that the
 * size computation, the in-place encoding and the streamed encoding of an
 * oversized record can never disagree about the bytes. */
enum { SK_LEN, SK_MEM, SK_CRC, SK_OUT };

typedef struct sink {
    int mode;
    size_t n;        /* LEN: bytes so far; MEM: write position; CRC/OUT: fill */
    uint8_t *p;      /* MEM: destination; CRC/OUT: chunk buffer */
    size_t cap;      /* CRC/OUT: chunk capacity */
    uint32_t crc;    /* CRC: running state */
    trace_writer *w; /* OUT: where the chunks go */
    int failed;      /* OUT: a write failed */
    int err;         /* OUT: its errno */
} sink;

/* Writes all n bytes, riding out partial writes and EINTR.  Returns 0, or
 * -1 with errno set; bytes that did reach the file are counted either way. */
/* Whether w->fd is still the file it opened.  A program may close every
 * descriptor it did not open itself (a daemon, a launcher's child), and
 * open files of its own on the same numbers: the trace would then be
 * lost, or written into the program's file. */
static int fd_is_ours(const trace_writer *w)
{
    struct stat sb;
    return fstat(w->fd, &sb) == 0 && sb.st_dev == w->dev &&
           sb.st_ino == w->ino;
}

/* Makes w->fd the trace file again if the program took it away: the file
 * is opened anew by its path, to append (the number, closed or now the
 * program's, is left alone).  0, or -1 with errno. */
static int own_fd(trace_writer *w)
{
    if (fd_is_ours(w))
        return 0;
    int fd = fd_keep(open(w->path, O_WRONLY | O_APPEND | O_CLOEXEC));
    if (fd < 0)
        return -1;
    w->fd = fd;
    return 0;
}

static int write_all(trace_writer *w, const uint8_t *p, size_t n)
{
    if (own_fd(w) < 0)
        return -1;
    while (n > 0) {
        ssize_t k = write(w->fd, p, n);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (k == 0) { /* not expected from a file; do not spin */
            errno = EIO;
            return -1;
        }
        w->bytes += (uint64_t)k;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static void sk_drain(sink *s)
{
    if (s->mode == SK_CRC)
        s->crc = crc_run(s->crc, s->p, s->n);
    else if (s->mode == SK_OUT && !s->failed &&
             write_all(s->w, s->p, s->n) < 0) {
        s->failed = 1;
        s->err = errno;
    }
    s->n = 0;
}

static inline void sk_bytes(sink *s, const void *src, size_t n)
{
    const uint8_t *q = src;
    switch (s->mode) {
    case SK_LEN:
        s->n += n;
        return;
    case SK_MEM:
        if (n)
            memcpy(s->p + s->n, q, n);
        s->n += n;
        return;
    default:
        while (n > 0) {
            size_t k = s->cap - s->n;
            if (k > n)
                k = n;
            memcpy(s->p + s->n, q, k);
            s->n += k;
            q += k;
            n -= k;
            if (s->n == s->cap)
                sk_drain(s);
        }
    }
}

static inline void sk_varint(sink *s, uint64_t v)
{
    if (s->mode == SK_LEN) {
        s->n += varint_len(v);
    } else if (s->mode == SK_MEM) {
        s->n = (size_t)(varint_put(s->p + s->n, v) - s->p);
    } else {
        uint8_t t[VARINT_MAX];
        sk_bytes(s, t, (size_t)(varint_put(t, v) - t));
    }
}

static inline void sk_node(sink *s, uint64_t *prev, uint64_t id)
{
    sk_varint(s, zigzag(id - *prev));
    *prev = id;
}

static void sk_str(sink *s, const char *str, size_t n)
{
    sk_varint(s, n);
    sk_bytes(s, str, n);
}

/* Emits the record's bytes, coding node ids against *prev (the block's
 * delta state, updated). */
/* The type a record is written as: its short form where it has one. */
static inline uint8_t wire_type(const trace_rec *r)
{
    switch (r->type) {
    case TRACE_BEGIN:
        if (r->group || r->ndeps)
            return TRACE_BEGIN;
        return r->kind == OSPG_S ? TRACE_BEGIN_S0 : TRACE_BEGIN_P0;
    case TRACE_WORK:
        if (r->nsamples)
            return TRACE_WORK_SAMPLED;
        return r->region || r->flags ? TRACE_WORK : TRACE_WORK0;
    case TRACE_END:
        return r->loc == OSPG_LOC_NONE ? TRACE_END0 : TRACE_END;
    case TRACE_LEAF:
        return r->kind == OSPG_P && !r->group && r->nchildren == 1 &&
                       r->wloc == r->loc && !r->region && !r->flags
                   ? TRACE_LEAF_P0
                   : TRACE_LEAF;
    default:
        return (uint8_t)r->type;
    }
}

static inline void emit(sink *s, const wrec *w, uint64_t *prev)
{
    const trace_rec *r = &w->r;
    uint8_t t = wire_type(r);
    sk_bytes(s, &t, 1);
    switch (t) {
    case TRACE_BEGIN_S0:
    case TRACE_BEGIN_P0:
        sk_node(s, prev, r->id);
        sk_node(s, prev, r->parent);
        sk_varint(s, r->idx);
        sk_varint(s, loc_code(r->loc));
        break;
    case TRACE_WORK0:
        sk_node(s, prev, r->parent);
        sk_varint(s, r->idx);
        sk_varint(s, r->work);
        sk_varint(s, loc_code(r->loc));
        break;
    case TRACE_END0:
        sk_node(s, prev, r->id);
        sk_varint(s, r->nchildren);
        break;
    case TRACE_LEAF_P0:
        sk_node(s, prev, r->parent);
        sk_varint(s, r->idx);
        sk_varint(s, loc_code(r->loc));
        sk_varint(s, r->work);
        break;
    case TRACE_LEAF:
        sk_node(s, prev, r->parent);
        sk_varint(s, r->idx);
        sk_varint(s, r->kind);
        sk_varint(s, loc_code(r->loc));
        sk_varint(s, r->group);
        if (r->group)
            sk_node(s, prev, r->owner);
        sk_varint(s, r->nchildren);
        if (r->nchildren) {
            sk_varint(s, r->work);
            sk_varint(s, loc_code(r->wloc));
            sk_varint(s, r->region);
            sk_varint(s, r->flags);
        }
        break;
    case TRACE_BEGIN: {
        sk_node(s, prev, r->id);
        sk_node(s, prev, r->parent);
        sk_varint(s, r->idx);
        sk_varint(s, r->kind);
        sk_varint(s, loc_code(r->loc));
        sk_varint(s, r->group);
        if (r->group)
            sk_node(s, prev, r->owner);
        sk_varint(s, r->ndeps);
        uint64_t pa = 0; /* addresses of one record are often close */
        for (size_t i = 0; i < r->ndeps; i++) {
            sk_varint(s, zigzag(r->deps[i].addr - pa));
            pa = r->deps[i].addr;
            sk_varint(s, r->deps[i].type);
        }
        break;
    }
    case TRACE_WORK:
    case TRACE_WORK_SAMPLED:
        sk_node(s, prev, r->parent);
        sk_varint(s, r->idx);
        sk_varint(s, r->work);
        sk_varint(s, loc_code(r->loc));
        sk_varint(s, r->region);
        sk_varint(s, r->flags);
        if (t == TRACE_WORK_SAMPLED) {
            sk_varint(s, r->nsamples);
            for (size_t i = 0; i < r->nsamples; i++) {
                sk_varint(s, loc_code(r->samples[i].loc));
                sk_varint(s, r->samples[i].count);
            }
        }
        break;
    case TRACE_NOTE:
        sk_varint(s, loc_code(r->loc));
        sk_varint(s, r->note);
        sk_varint(s, r->value);
        break;
    case TRACE_END:
        sk_node(s, prev, r->id);
        sk_varint(s, r->nchildren);
        sk_varint(s, loc_code(r->loc));
        break;
    case TRACE_LOC:
        sk_varint(s, loc_code(r->loc));
        sk_str(s, r->str1, w->n1);
        sk_str(s, r->str2, w->n2);
        break;
    case TRACE_META:
        sk_str(s, r->str1, w->n1);
        sk_str(s, r->str2, w->n2);
        break;
    case TRACE_REGION:
        sk_varint(s, r->region_id);
        sk_varint(s, r->region_parent);
        sk_varint(s, loc_code(r->loc));
        sk_varint(s, r->factor_milli);
        break;
    }
}

/* A record the first pass of the analysis wants (trace version 7 marks
 * the blocks without one). */
static int is_name_record(int type)
{
    return type == TRACE_LOC || type == TRACE_META || type == TRACE_REGION ||
           type == TRACE_NOTE;
}

static void mark_failed(trace_writer *w, int err)
{
    w->failed = 1;
    w->err = err ? err : EIO;
}

/* Writes the current block, if any, with one write(2) (more only if the
 * kernel takes it in parts) and starts an empty one.  Returns 0, or -1 with
 * errno set: the writer is then failed and the block's records are counted
 * as dropped. */
static int flush_block(trace_writer *w)
{
    if (w->used == 0)
        return 0;
    uint32_t crc = crc32_ieee(w->buf + BLOCK_HDR_LEN, w->used);
    uint32_t len = (uint32_t)w->used;
    if (!w->names) {
        len |= TRACE_BLOCK_GRAPH_ONLY;
        crc ^= TRACE_GRAPH_ONLY_CRC;
    }
    put_le32(w->buf, len);
    put_le32(w->buf + 4, crc);
    int rc = write_all(w, w->buf, BLOCK_HDR_LEN + w->used);
    if (rc < 0) {
        mark_failed(w, errno);
        w->dropped += w->nrec;
    }
    w->used = 0;
    w->nrec = 0;
    w->names = 0;
    w->prev = 0;
    w->prev_time = 0;
    if (rc < 0)
        errno = w->err;
    return rc;
}

/* A record longer than the block size, written as a block of its own.  Its
 * bytes are produced twice through the writer's own buffer used as a chunk:
 * once for the CRC, once for the file.  This keeps the no-allocation
 * promise at the price of several write(2) calls for that one block, which
 * only huge depend lists or strings with a small block size ever pay.
 * The current block must be empty.  Returns 0, or -1 with errno set. */
static int put_alone(trace_writer *w, const wrec *rec, size_t len)
{
    uint64_t prev = 0;
    sink s = {.mode = SK_CRC, .p = w->buf, .cap = BLOCK_HDR_LEN + w->bsize,
              .crc = 0xffffffffu};
    emit(&s, rec, &prev);
    sk_drain(&s);

    uint8_t hdr[BLOCK_HDR_LEN];
    int graph_only = !is_name_record(rec->r.type);
    put_le32(hdr, (uint32_t)len | (graph_only ? TRACE_BLOCK_GRAPH_ONLY : 0));
    put_le32(hdr + 4, ~s.crc ^ (graph_only ? TRACE_GRAPH_ONLY_CRC : 0));
    sink o = {.mode = SK_OUT, .p = w->buf, .cap = BLOCK_HDR_LEN + w->bsize,
              .w = w};
    prev = 0;
    sk_bytes(&o, hdr, sizeof hdr);
    emit(&o, rec, &prev);
    sk_drain(&o);
    w->prev = 0;
    w->prev_time = 0;
    if (o.failed) {
        mark_failed(w, o.err);
        w->dropped++;
        errno = w->err;
        return -1;
    }
    return 0;
}

/* An upper bound on the record's encoded size, in O(1): with room for it
 * the exact size need not be computed first. */
static size_t rec_bound(const wrec *w)
{
    switch (w->r.type) {
    case TRACE_BEGIN:
        return 1 + 3 * VARINT_MAX + 1 + 5 + 2 * VARINT_MAX + 3 +
               w->r.ndeps * (VARINT_MAX + 1);
    case TRACE_WORK:
        return 1 + 3 * VARINT_MAX + 5 + 5 + 5 + 3 + w->r.nsamples * 10;
    case TRACE_NOTE:
        return 1 + 5 + 5 + VARINT_MAX;
    case TRACE_LOC:
        return 1 + 5 + 3 + w->n1 + 3 + w->n2;
    case TRACE_META:
        return 1 + 3 + w->n1 + 3 + w->n2;
    case TRACE_REGION:
        return 1 + 3 * 5 + VARINT_MAX;
    case TRACE_LEAF:
        return 1 + 6 * VARINT_MAX + 1 + 4 * 5;
    default: /* END */
        return 1 + 2 * VARINT_MAX + 5;
    }
}

/* Appends a validated record.  Returns 0, or -1 with errno set when the
 * writer has failed (now or before); the record is then counted dropped. */
static int put_rec(trace_writer *w, const wrec *rec)
{
    if (w->failed) {
        w->dropped++;
        errno = w->err;
        return -1;
    }
    int names = is_name_record(rec->r.type);
    if (w->used + rec_bound(rec) <= w->bsize) { /* the common case */
        sink m = {.mode = SK_MEM, .p = w->buf + BLOCK_HDR_LEN + w->used};
        emit(&m, rec, &w->prev);
        w->used += m.n;
        w->nrec++;
        w->names |= names;
        return 0;
    }
    /* near the block's end: whether it fits depends on the exact size */
    uint64_t prev = w->prev;
    sink s = {.mode = SK_LEN};
    emit(&s, rec, &prev);
    size_t len = s.n;
    if (w->used + len > w->bsize) {
        if (w->used > 0) {
            if (flush_block(w) < 0) {
                w->dropped++;
                return -1;
            }
            /* the new block restarts the id deltas, so the size changes */
            prev = 0;
            s.n = 0;
            emit(&s, rec, &prev);
            len = s.n;
        }
        if (len > w->bsize)
            return put_alone(w, rec, len);
    }
    sink m = {.mode = SK_MEM, .p = w->buf + BLOCK_HDR_LEN + w->used};
    emit(&m, rec, &w->prev);
    w->used += len;
    w->nrec++;
    w->names |= names;
    return 0;
}

/* A record the reader would reject must not reach the file: refusing it
 * here keeps the rest of the trace readable. */
static int reject(trace_writer *w)
{
    w->dropped++;
    errno = EINVAL;
    return -1;
}

trace_writer *trace_writer_open(const char *path, uint32_t stream,
                                size_t buf_size, uint64_t flags)
{
    if (!path) {
        errno = EINVAL;
        return NULL;
    }
    crc_prepare();
    size_t bsize = buf_size ? buf_size : DEFAULT_BLOCK;
    if (bsize > TRACE_BLOCK_MAX) /* a reader would refuse a larger block */
        bsize = TRACE_BLOCK_MAX;
    trace_writer *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->buf = malloc(BLOCK_HDR_LEN + bsize);
    if (!w->buf) {
        free(w);
        errno = ENOMEM;
        return NULL;
    }
    w->bsize = bsize;
    w->fd = fd_keep(open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
                         0644));
    struct stat sb;
    if (w->fd < 0 || fstat(w->fd, &sb) || !(w->path = strdup(path))) {
        int e = errno;
        if (w->fd >= 0)
            close(w->fd);
        free(w->buf);
        free(w);
        errno = e;
        return NULL;
    }
    w->dev = sb.st_dev;
    w->ino = sb.st_ino;
    uint8_t hdr[FILE_HDR_LEN] = {0};
    memcpy(hdr, TRACE_MAGIC, 8);
    put_le32(hdr + 8, TRACE_VERSION);
    put_le32(hdr + 12, stream);
    put_le64(hdr + 16, flags); /* all zero before version 8 */
    if (write_all(w, hdr, sizeof hdr) < 0) {
        int e = errno;
        close(w->fd);
        free(w->path);
        free(w->buf);
        free(w);
        errno = e;
        return NULL;
    }
    return w;
}

static inline uint8_t *fast_slot(trace_writer *w, size_t bound);
static inline uint8_t *put_node(trace_writer *w, uint8_t *p, uint64_t id);
static inline int fast_done(trace_writer *w, const uint8_t *start,
                            const uint8_t *end);

int trace_write_begin(trace_writer *w, uint64_t id, uint64_t parent,
                      uint64_t idx, ospg_kind kind, uint32_t loc,
                      uint64_t group, uint64_t group_owner,
                      const ospg_dep *deps, size_t ndeps)
{
    if (!w) {
        errno = EINVAL;
        return -1;
    }
    if ((kind != OSPG_S && kind != OSPG_P) || ndeps > TRACE_MAX_DEPS ||
        (ndeps > 0 && !deps))
        return reject(w);
    for (size_t i = 0; i < ndeps; i++)
        if (deps[i].type < OSPG_DEP_IN || deps[i].type > OSPG_DEP_ALL_MEMORY)
            return reject(w);
    uint8_t *p = ndeps ? NULL : fast_slot(w, 1 + 8 * VARINT_MAX), *start = p;
    if (p && !group) {
        *p++ = kind == OSPG_S ? TRACE_BEGIN_S0 : TRACE_BEGIN_P0;
        p = put_node(w, p, id);
        p = put_node(w, p, parent);
        p = varint_put(p, idx);
        p = varint_put(p, loc_code(loc));
        return fast_done(w, start, p);
    }
    if (p) {
        *p++ = TRACE_BEGIN;
        p = put_node(w, p, id);
        p = put_node(w, p, parent);
        p = varint_put(p, idx);
        p = varint_put(p, (uint64_t)kind);
        p = varint_put(p, loc_code(loc));
        p = varint_put(p, group);
        p = put_node(w, p, group_owner);
        *p++ = 0; /* no depend items */
        return fast_done(w, start, p);
    }
    wrec r = {.r = {.type = TRACE_BEGIN, .id = id, .parent = parent,
                    .idx = idx, .kind = (uint64_t)kind, .loc = loc,
                    .group = group, .owner = group ? group_owner : 0,
                    .deps = deps, .ndeps = ndeps}};
    return put_rec(w, &r);
}

/* The hot records (WORK, END, a plain BEGIN) are encoded straight into
 * the block when they surely fit: the same bytes emit() would produce,
 * without its per-field dispatch (test_trace checks both agree). */
static inline uint8_t *fast_slot(trace_writer *w, size_t bound)
{
    if (w->failed || w->used + bound > w->bsize)
        return NULL;
    return w->buf + BLOCK_HDR_LEN + w->used;
}

static inline uint8_t *put_node(trace_writer *w, uint8_t *p, uint64_t id)
{
    p = varint_put(p, zigzag(id - w->prev));
    w->prev = id;
    return p;
}

static inline int fast_done(trace_writer *w, const uint8_t *start,
                            const uint8_t *end)
{
    w->used += (size_t)(end - start);
    w->nrec++;
    return 0;
}

int trace_write_work(trace_writer *w, uint64_t parent, uint64_t idx,
                     uint64_t work, uint32_t loc, uint32_t region,
                     uint32_t flags)
{
    if (!w) {
        errno = EINVAL;
        return -1;
    }
    uint8_t *p = fast_slot(w, 1 + 6 * VARINT_MAX), *start = p;
    if (p) {
        *p++ = region || flags ? TRACE_WORK : TRACE_WORK0;
        p = put_node(w, p, parent);
        p = varint_put(p, idx);
        p = varint_put(p, work);
        p = varint_put(p, loc_code(loc));
        if (region || flags) {
            p = varint_put(p, region);
            p = varint_put(p, flags);
        }
        return fast_done(w, start, p);
    }
    wrec r = {.r = {.type = TRACE_WORK, .parent = parent, .idx = idx,
                    .work = work, .loc = loc, .region = region,
                    .flags = flags}};
    return put_rec(w, &r);
}

int trace_write_work_sampled(trace_writer *w, uint64_t parent, uint64_t idx,
                             uint64_t work, uint32_t loc, uint32_t region,
                             uint32_t flags, const ospg_sample *smp,
                             size_t nsmp)
{
    if (!w) {
        errno = EINVAL;
        return -1;
    }
    if (!nsmp)
        return trace_write_work(w, parent, idx, work, loc, region, flags);
    if (nsmp > TRACE_MAX_SAMPLES || !smp || (flags & ~OSPG_W_CONTINUES))
        return reject(w);
    wrec r = {.r = {.type = TRACE_WORK, .parent = parent, .idx = idx,
                    .work = work, .loc = loc, .region = region,
                    .flags = flags, .nsamples = nsmp, .samples = smp}};
    return put_rec(w, &r);
}

int trace_write_note(trace_writer *w, uint32_t loc, uint32_t note,
                     uint64_t value)
{
    if (!w) {
        errno = EINVAL;
        return -1;
    }
    if (note == 0 || note > TRACE_NOTE_MAX)
        return reject(w);
    wrec r = {.r = {.type = TRACE_NOTE, .loc = loc, .note = note,
                    .value = value}};
    return put_rec(w, &r);
}

int trace_write_end(trace_writer *w, uint64_t id, uint64_t nchildren,
                    uint32_t loc)
{
    if (!w) {
        errno = EINVAL;
        return -1;
    }
    uint8_t *p = fast_slot(w, 1 + 3 * VARINT_MAX), *start = p;
    if (p) {
        *p++ = loc == OSPG_LOC_NONE ? TRACE_END0 : TRACE_END;
        p = put_node(w, p, id);
        p = varint_put(p, nchildren);
        if (loc != OSPG_LOC_NONE)
            p = varint_put(p, loc_code(loc));
        return fast_done(w, start, p);
    }
    wrec r = {.r = {.type = TRACE_END, .id = id, .nchildren = nchildren,
                    .loc = loc}};
    return put_rec(w, &r);
}

int trace_write_leaf(trace_writer *w, uint64_t parent, uint64_t idx,
                     ospg_kind kind, uint32_t loc, uint64_t group,
                     uint64_t group_owner, const ospg_leaf_work *lw)
{
    if (!w) {
        errno = EINVAL;
        return -1;
    }
    if ((kind != OSPG_S && kind != OSPG_P) || (group && kind != OSPG_P) ||
        (lw && (lw->flags & ~OSPG_W_CONTINUES)))
        return reject(w);
    uint8_t *p = fast_slot(w, 1 + 4 * VARINT_MAX), *start = p;
    if (p && kind == OSPG_P && !group && lw && lw->loc == loc &&
        !lw->region && !lw->flags) {
        *p++ = TRACE_LEAF_P0;
        p = put_node(w, p, parent);
        p = varint_put(p, idx);
        p = varint_put(p, loc_code(loc));
        p = varint_put(p, lw->work);
        return fast_done(w, start, p);
    }
    wrec r = {.r = {.type = TRACE_LEAF, .parent = parent, .idx = idx,
                    .kind = (uint64_t)kind, .loc = loc, .group = group,
                    .owner = group ? group_owner : 0,
                    .nchildren = lw ? 1 : 0}};
    if (lw) {
        r.r.work = lw->work;
        r.r.wloc = lw->loc;
        r.r.region = lw->region;
        r.r.flags = lw->flags;
    }
    return put_rec(w, &r);
}

/* TIME and WAIT: an interval, its end coded from the block's last one. */
static int write_interval(trace_writer *w, uint8_t type, uint64_t start_ns,
                          uint64_t end_ns)
{
    if (!w) {
        errno = EINVAL;
        return -1;
    }
    if (start_ns > end_ns)
        return reject(w);
    /* a TIME and the LEAF or END it times go in one block: a reader
     * that skips blocks of graph records (the names pass) must not meet
     * a TIME whose record it skipped */
    enum { BOUND = 1 + 2 * VARINT_MAX };
    size_t room = type == TRACE_TIME ? BOUND + TIMED_REC_MAX : BOUND;
    if (!w->failed && w->used + room > w->bsize && flush_block(w) < 0) {
        w->dropped++;
        return -1;
    }
    uint8_t *p = fast_slot(w, BOUND), *start = p;
    if (!p) { /* failed before */
        w->dropped++;
        errno = w->err;
        return -1;
    }
    uint64_t end = end_ns >> TRACE_TIME_SHIFT;
    *p++ = type;
    p = varint_put(p, zigzag(end - w->prev_time));
    p = varint_put(p, end - (start_ns >> TRACE_TIME_SHIFT));
    w->prev_time = end;
    return fast_done(w, start, p);
}

int trace_write_time(trace_writer *w, uint64_t start_ns, uint64_t end_ns)
{
    return write_interval(w, TRACE_TIME, start_ns, end_ns);
}

int trace_write_wait(trace_writer *w, uint64_t start_ns, uint64_t end_ns)
{
    return write_interval(w, TRACE_WAIT, start_ns, end_ns);
}

/* NULL is written as the empty string; a string longer than TRACE_MAX_STR
 * is refused (strnlen keeps the check cheap on a runaway string). */
static int str_arg(const char **s, size_t *n)
{
    if (!*s)
        *s = "";
    *n = strnlen(*s, (size_t)TRACE_MAX_STR + 1);
    return *n <= TRACE_MAX_STR ? 0 : -1;
}

int trace_write_loc(trace_writer *w, uint32_t loc, const char *directive,
                    const char *where)
{
    if (!w) {
        errno = EINVAL;
        return -1;
    }
    size_t n1, n2;
    if (str_arg(&directive, &n1) < 0 || str_arg(&where, &n2) < 0)
        return reject(w);
    wrec r = {.r = {.type = TRACE_LOC, .loc = loc, .str1 = directive,
                    .str2 = where},
              .n1 = n1, .n2 = n2};
    return put_rec(w, &r);
}

int trace_write_region(trace_writer *w, uint32_t id, uint32_t parent,
                       uint32_t loc, uint64_t factor_milli)
{
    if (!w) {
        errno = EINVAL;
        return -1;
    }
    if (id == 0)
        return reject(w);
    wrec r = {.r = {.type = TRACE_REGION, .region_id = id,
                    .region_parent = parent, .loc = loc,
                    .factor_milli = factor_milli}};
    return put_rec(w, &r);
}

int trace_write_meta(trace_writer *w, const char *key, const char *value)
{
    if (!w) {
        errno = EINVAL;
        return -1;
    }
    size_t n1, n2;
    if (str_arg(&key, &n1) < 0 || str_arg(&value, &n2) < 0)
        return reject(w);
    wrec r = {.r = {.type = TRACE_META, .loc = OSPG_LOC_NONE, .str1 = key,
                    .str2 = value},
              .n1 = n1, .n2 = n2};
    return put_rec(w, &r);
}

/* Touches only the writer and write(2), so an atexit handler may call it
 * as long as no other thread is inside a call on the same writer.  Returns
 * -1 with errno set if the block could not be written or an earlier write
 * already failed. */
int trace_writer_flush(trace_writer *w)
{
    if (!w) {
        errno = EINVAL;
        return -1;
    }
    if (w->failed) {
        errno = w->err;
        return -1;
    }
    return flush_block(w);
}

uint64_t trace_writer_dropped(const trace_writer *w)
{
    return w ? w->dropped : 0;
}

int trace_writer_errno(const trace_writer *w)
{
    return w && w->failed ? w->err : 0;
}

uint64_t trace_writer_bytes(const trace_writer *w)
{
    return w ? w->bytes : 0;
}

/* Always releases the writer.  Returns -1 (errno set) if a write or the
 * close failed or any record was dropped, refused ones included. */
int trace_writer_close(trace_writer *w)
{
    if (!w)
        return 0;
    int rc = trace_writer_flush(w);
    int e = errno;
    /* a number the program took over is the program's to close */
    if (fd_is_ours(w) && close(w->fd) < 0 && rc == 0) {
        rc = -1;
        e = errno;
    }
    if (rc == 0 && w->dropped > 0) {
        rc = -1;
        e = w->failed ? w->err : EINVAL;
    }
    free(w->path);
    free(w->buf);
    free(w);
    if (rc < 0)
        errno = e;
    return rc;
}

/* ---- Reader ---- */

enum { RD_OK, RD_END, RD_ERR };

struct trace_reader {
    char *name;
    int fd;                 /* -1: decoding a memory image */
    const uint8_t *mem;
    size_t mem_len;
    uint64_t src_off;       /* file offset of the next byte not yet taken */
    uint64_t file_len;      /* file mode: the file's size when opened */
    int state;
    uint32_t stream;
    uint32_t version;       /* of the file: 1 to TRACE_VERSION */
    uint64_t flags;         /* of the file's header: TRACE_FLAG_* */
    uint8_t *blk;           /* file mode: the current block's payload */
    size_t blk_cap;
    const uint8_t *pay;     /* the current payload (blk or inside mem) */
    size_t pay_len, pos;
    uint64_t pay_off;       /* file offset of pay[0] */
    uint64_t prev;          /* node id decoded last in this block */
    uint64_t prev_time;     /* TIME end decoded last in this block, units */
    int timed;              /* a TIME was read: its grain's record is next */
    uint64_t t_start, t_end;
    uint64_t time_at;       /* the TIME's offset, for a message */
    ospg_dep *deps;
    size_t deps_cap;
    ospg_sample *smp;
    size_t smp_cap;
    char *str[2];
    size_t str_cap[2];
    char *err;
    size_t err_cap;
    int skim;               /* hand out LOC, META, REGION, NOTE only */
    /* The current block's CRC, checked at once, or by a skimming reader
     * only when it hands out a record from the block or finds a fault
     * there (check_payload) */
    int pay_checked;
    uint32_t pay_crc;
    uint64_t blk_off;       /* its header's offset */
};

/* Records the one error; the reader stays failed.  Returns -1. */
static int fail(trace_reader *r, uint64_t off, const char *fmt, ...)
{
    if (r->state == RD_ERR)
        return -1;
    r->state = RD_ERR;
    int k = snprintf(r->err, r->err_cap, "%s: byte %llu: ", r->name,
                     (unsigned long long)off);
    if (k < 0 || (size_t)k >= r->err_cap)
        return -1;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->err + k, r->err_cap - (size_t)k, fmt, ap);
    va_end(ap);
    return -1;
}

/* Grows *buf to hold at least n elements of size sz, never beyond max.
 * Returns 0, or -1 when out of memory (the old buffer stays). */
static int grow(void **buf, size_t *cap, size_t n, size_t max, size_t sz)
{
    if (n <= *cap)
        return 0;
    size_t c = *cap * 2 > n ? *cap * 2 : n;
    if (c > max)
        c = max;
    void *p = realloc(*buf, c * sz);
    if (!p)
        return -1;
    *buf = p;
    *cap = c;
    return 0;
}

/* Takes up to n bytes from the source: a memory image lends them in place,
 * a file reads them into dst.  Returns the count (short only at end of
 * input) or -1 with errno set on a read error. */
static ptrdiff_t src_get(trace_reader *r, uint8_t *dst, size_t n,
                         const uint8_t **out)
{
    if (r->fd < 0) {
        size_t avail = r->mem_len - (size_t)r->src_off;
        size_t k = n < avail ? n : avail;
        *out = r->mem + r->src_off;
        r->src_off += k;
        return (ptrdiff_t)k;
    }
    size_t got = 0;
    while (got < n) {
        ssize_t k = read(r->fd, dst + got, n - got);
        if (k < 0) {
            if (errno == EINTR)
                continue;
            return -1;
        }
        if (k == 0)
            break;
        got += (size_t)k;
    }
    *out = dst;
    r->src_off += got;
    return (ptrdiff_t)got;
}

/* Passes n bytes of the source unread (a block a skimming reader has no
 * use for).  Returns how many there were, at most n, or -1 on error. */
static ptrdiff_t src_skip(trace_reader *r, size_t n)
{
    uint64_t end = r->fd < 0 ? r->mem_len : r->file_len;
    uint64_t avail = end > r->src_off ? end - r->src_off : 0;
    size_t k = n < avail ? n : (size_t)avail;
    if (r->fd >= 0 && k > 0 && lseek(r->fd, (off_t)k, SEEK_CUR) < 0)
        return -1;
    r->src_off += k;
    return (ptrdiff_t)k;
}

static trace_reader *reader_new(const char *name)
{
    crc_prepare();
    trace_reader *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    if (!name)
        name = "<memory>";
    size_t n = strlen(name);
    r->name = malloc(n + 1);
    r->err_cap = n + 256; /* the longest message tail is far shorter */
    r->err = malloc(r->err_cap);
    if (!r->name || !r->err) {
        free(r->name);
        free(r->err);
        free(r);
        return NULL;
    }
    memcpy(r->name, name, n + 1);
    r->err[0] = '\0';
    r->fd = -1;
    return r;
}

static void check_header(trace_reader *r)
{
    uint8_t tmp[FILE_HDR_LEN];
    const uint8_t *h;
    ptrdiff_t n = src_get(r, tmp, sizeof tmp, &h);
    if (n < 0) {
        fail(r, 0, "read error: %s", strerror(errno));
        return;
    }
    if (n == 0) {
        fail(r, 0, "empty file: no header");
        return;
    }
    /* a short file that is not even a trace's prefix is better called by
     * what it is not */
    size_t m = (size_t)n < 8 ? (size_t)n : 8;
    if (memcmp(h, TRACE_MAGIC, m) != 0) {
        fail(r, 0, "bad magic: not a whatif trace");
        return;
    }
    if ((size_t)n < FILE_HDR_LEN) {
        fail(r, 0, "short header: %zu of %u bytes", (size_t)n, FILE_HDR_LEN);
        return;
    }
    uint32_t version = get_le32(h + 8);
    if (version < 1 || version > TRACE_VERSION) {
        fail(r, 8, "trace version %lu, this analyzer reads versions 1 to %u",
             (unsigned long)version, TRACE_VERSION);
        return;
    }
    r->version = version;
    uint64_t flags = get_le64(h + 16);
    uint64_t known = version >= 8 ? TRACE_FLAGS_KNOWN : 0;
    if (flags & ~known) {
        fail(r, 16, "header flags 0x%llx unknown to version %lu",
             (unsigned long long)(flags & ~known), (unsigned long)version);
        return;
    }
    r->flags = flags;
    r->stream = get_le32(h + 12);
}

trace_reader *trace_reader_open(const char *path)
{
    trace_reader *r = reader_new(path);
    if (!r)
        return NULL;
    if (!path) {
        fail(r, 0, "cannot open: no path");
        return r;
    }
    r->fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (r->fd < 0 || fstat(r->fd, &st) < 0) {
        fail(r, 0, "cannot open: %s", strerror(errno));
        return r;
    }
    r->file_len = (uint64_t)st.st_size;
    check_header(r);
    return r;
}

trace_reader *trace_reader_open_mem(const void *buf, size_t len,
                                    const char *name)
{
    trace_reader *r = reader_new(name);
    if (!r)
        return NULL;
    /* even an empty image needs a real address: NULL + 0 is undefined */
    r->mem = buf ? buf : (const uint8_t *)"";
    r->mem_len = buf ? len : 0;
    check_header(r);
    return r;
}

void trace_reader_close(trace_reader *r)
{
    if (!r)
        return;
    if (r->fd >= 0)
        close(r->fd);
    free(r->name);
    free(r->err);
    free(r->blk);
    free(r->deps);
    free(r->smp);
    free(r->str[0]);
    free(r->str[1]);
    free(r);
}

/* Checks the current block's payload against its CRC, once.  A mismatch
 * explains any fault found in the block before: it is the error then.
 * Returns 0 or -1. */
static int check_payload(trace_reader *r)
{
    if (r->pay_checked)
        return 0;
    r->pay_checked = 1;
    uint32_t actual = crc32_ieee(r->pay, r->pay_len);
    if (actual == r->pay_crc)
        return 0;
    r->state = RD_OK;
    r->pos = r->pay_len;
    return fail(r, r->blk_off, "CRC mismatch: block header says 0x%08lx, "
                "payload has 0x%08lx", (unsigned long)r->pay_crc,
                (unsigned long)actual);
}

/* Loads and checks the next block.  Returns 1, 0 at a clean end (no byte
 * left at a block boundary), -1 on error.  A skimming reader leaves the
 * CRC for later (check_payload): most blocks hold graph records only, which
 * it skips, and the full read checks every block. */
static int next_block(trace_reader *r)
{
    uint64_t off = r->src_off;
    uint8_t hb[BLOCK_HDR_LEN];
    const uint8_t *h;
    ptrdiff_t n = src_get(r, hb, sizeof hb, &h);
    if (n < 0)
        return fail(r, off, "read error: %s", strerror(errno));
    if (n == 0) {
        r->state = RD_END;
        return 0;
    }
    if ((size_t)n < BLOCK_HDR_LEN)
        return fail(r, off, "truncated: block header needs %u bytes, %zu remain",
                    BLOCK_HDR_LEN, (size_t)n);
    uint32_t len = get_le32(h);
    uint32_t crc = get_le32(h + 4);
    int graph_only = r->version >= 7 && (len & TRACE_BLOCK_GRAPH_ONLY);
    if (graph_only) {
        len &= ~TRACE_BLOCK_GRAPH_ONLY;
        crc ^= TRACE_GRAPH_ONLY_CRC;
    }
    if (len == 0 || len > TRACE_BLOCK_MAX)
        return fail(r, off, "block payload length %lu outside 1..%u",
                    (unsigned long)len, TRACE_BLOCK_MAX);
    if (graph_only && r->skim) {
        /* nothing here for a reader after names: its CRC is checked by
         * the full read */
        n = src_skip(r, len);
        if (n < 0)
            return fail(r, off, "read error: %s", strerror(errno));
        if ((size_t)n < len)
            return fail(r, off, "truncated: block claims %lu bytes, %zu "
                        "remain", (unsigned long)len, (size_t)n);
        r->pay_len = r->pos = 0;
        r->pay_checked = 1;
        /* a TIME that ended the block before was its first record's
         * (before trace writers kept the two in one block) */
        r->timed = 0;
        return 1;
    }
    if (r->fd >= 0 &&
        grow((void **)&r->blk, &r->blk_cap, len, TRACE_BLOCK_MAX, 1) < 0)
        return fail(r, off, "out of memory for a %lu-byte block",
                    (unsigned long)len);
    const uint8_t *p;
    n = src_get(r, r->blk, len, &p);
    if (n < 0)
        return fail(r, off, "read error: %s", strerror(errno));
    if ((size_t)n < len)
        return fail(r, off, "truncated: block claims %lu bytes, %zu remain",
                    (unsigned long)len, (size_t)n);
    r->pay = p;
    r->pay_len = len;
    r->pos = 0;
    r->pay_off = off + BLOCK_HDR_LEN;
    r->prev = 0;
    r->pay_crc = crc;
    r->blk_off = off;
    r->pay_checked = 0;
    if (!r->skim && check_payload(r) < 0)
        return -1;
    r->prev_time = 0;
    return 1;
}

/* Decodes one canonical unsigned LEB128 varint.  Returns its length, 0 if
 * it runs past avail, -1 overlong (a redundant final zero group), -2 more
 * than 10 bytes, -3 a value beyond 64 bits. */
static int varint_get(const uint8_t *p, size_t avail, uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < VARINT_MAX; i++) {
        if (i >= avail)
            return 0;
        uint8_t b = p[i];
        if (i == VARINT_MAX - 1 && b > 1)
            return (b & 0x80) ? -2 : -3;
        v |= (uint64_t)(b & 0x7f) << (7 * i);
        if (!(b & 0x80)) {
            if (b == 0 && i > 0)
                return -1;
            *out = v;
            return (int)i + 1;
        }
    }
    return -2; /* not reached: byte 10 either ends or fails above */
}

static uint64_t here(const trace_reader *r)
{
    return r->pay_off + r->pos;
}

static int get_u_slow(trace_reader *r, uint64_t *v);

/* Most fields fit one byte: decode those without the general loop. */
static inline int get_u(trace_reader *r, uint64_t *v)
{
    if (r->pos < r->pay_len && r->pay[r->pos] < 0x80) {
        *v = r->pay[r->pos++];
        return 0;
    }
    return get_u_slow(r, v);
}

static int get_u_slow(trace_reader *r, uint64_t *v)
{
    int k = varint_get(r->pay + r->pos, r->pay_len - r->pos, v);
    if (k > 0) {
        r->pos += (size_t)k;
        return 0;
    }
    switch (k) {
    case 0: return fail(r, here(r), "record runs past the end of its block");
    case -1: return fail(r, here(r), "overlong varint");
    case -2: return fail(r, here(r), "varint longer than 10 bytes");
    default: return fail(r, here(r), "varint overflows 64 bits");
    }
}

static int get_node(trace_reader *r, uint64_t *v)
{
    uint64_t z;
    if (get_u(r, &z) < 0)
        return -1;
    *v = r->prev + unzigzag(z);
    r->prev = *v;
    return 0;
}

static int get_u32(trace_reader *r, uint32_t *v, const char *what)
{
    uint64_t at = here(r), x;
    if (get_u(r, &x) < 0)
        return -1;
    if (x > UINT32_MAX)
        return fail(r, at, "%s %llu out of range", what,
                    (unsigned long long)x);
    *v = (uint32_t)x;
    return 0;
}

static int get_loc(trace_reader *r, uint32_t *loc)
{
    uint64_t at = here(r), c;
    if (get_u(r, &c) < 0)
        return -1;
    /* c - 1 == UINT32_MAX would be a second spelling of OSPG_LOC_NONE */
    if (c > UINT32_MAX)
        return fail(r, at, "location code %llu out of range",
                    (unsigned long long)c);
    *loc = c == 0 ? OSPG_LOC_NONE : (uint32_t)(c - 1);
    return 0;
}

static int get_str(trace_reader *r, int which, const char **out)
{
    uint64_t at = here(r), n;
    if (get_u(r, &n) < 0)
        return -1;
    if (n > TRACE_MAX_STR)
        return fail(r, at, "string of %llu bytes, longest allowed is %u",
                    (unsigned long long)n, TRACE_MAX_STR);
    if (n > r->pay_len - r->pos)
        return fail(r, at, "record runs past the end of its block");
    const uint8_t *s = r->pay + r->pos;
    if (memchr(s, 0, (size_t)n))
        return fail(r, at, "NUL byte inside a string");
    if (grow((void **)&r->str[which], &r->str_cap[which], (size_t)n + 1,
             (size_t)TRACE_MAX_STR + 1, 1) < 0)
        return fail(r, at, "out of memory");
    memcpy(r->str[which], s, (size_t)n);
    r->str[which][n] = '\0';
    r->pos += (size_t)n;
    *out = r->str[which];
    return 0;
}

static int get_deps(trace_reader *r, trace_rec *rec)
{
    uint64_t at = here(r), n;
    if (get_u(r, &n) < 0)
        return -1;
    if (n > TRACE_MAX_DEPS)
        return fail(r, at, "%llu depend items, most allowed is %u",
                    (unsigned long long)n, TRACE_MAX_DEPS);
    /* each item takes at least 2 bytes: refuse before allocating */
    if (n > (r->pay_len - r->pos) / 2)
        return fail(r, at, "record runs past the end of its block");
    if (grow((void **)&r->deps, &r->deps_cap, (size_t)n, TRACE_MAX_DEPS,
             sizeof *r->deps) < 0)
        return fail(r, at, "out of memory");
    uint64_t pa = 0;
    for (size_t i = 0; i < n; i++) {
        uint64_t z, t;
        if (get_u(r, &z) < 0)
            return -1;
        pa += unzigzag(z);
        uint64_t tat = here(r);
        if (get_u(r, &t) < 0)
            return -1;
        if (t < OSPG_DEP_IN || t > OSPG_DEP_ALL_MEMORY)
            return fail(r, tat, "depend type %llu, must be 1..6",
                        (unsigned long long)t);
        r->deps[i].addr = pa;
        r->deps[i].type = (uint32_t)t;
    }
    rec->ndeps = (size_t)n;
    rec->deps = n ? r->deps : NULL;
    return 0;
}

static int get_samples(trace_reader *r, trace_rec *rec)
{
    uint64_t at = here(r), n;
    if (get_u(r, &n) < 0)
        return -1;
    if (n == 0 || n > TRACE_MAX_SAMPLES)
        return fail(r, at, "%llu sampled lines, must be 1..%u",
                    (unsigned long long)n, TRACE_MAX_SAMPLES);
    /* each takes at least 2 bytes: refuse before allocating */
    if (n > (r->pay_len - r->pos) / 2)
        return fail(r, at, "record runs past the end of its block");
    if (grow((void **)&r->smp, &r->smp_cap, (size_t)n, TRACE_MAX_SAMPLES,
             sizeof *r->smp) < 0)
        return fail(r, at, "out of memory");
    for (size_t i = 0; i < n; i++) {
        if (get_loc(r, &r->smp[i].loc) < 0)
            return -1;
        if (get_u32(r, &r->smp[i].count, "sample count") < 0)
            return -1;
    }
    rec->nsamples = (size_t)n;
    rec->samples = r->smp;
    return 0;
}

/* Ticks beyond this would overflow when made ns (some 290 years). */
#define TIME_TICKS_MAX (UINT64_MAX >> (TRACE_TIME_SHIFT + 1))

/* A TIME or WAIT record's interval (its type taken), into *start, *end. */
static int get_interval(trace_reader *r, uint64_t at, const char *what,
                        uint64_t *start, uint64_t *end_ns)
{
    uint64_t z, dur;
    if (get_u(r, &z) < 0 || get_u(r, &dur) < 0)
        return -1;
    uint64_t end = r->prev_time + unzigzag(z);
    if (end > TIME_TICKS_MAX || dur > end)
        return fail(r, at, "%s ends at %llu units with duration %llu: "
                    "before the clock's 0 or beyond its range", what,
                    (unsigned long long)end, (unsigned long long)dur);
    r->prev_time = end;
    *end_ns = end << TRACE_TIME_SHIFT;
    *start = (end - dur) << TRACE_TIME_SHIFT;
    return 0;
}

/* A TIME record (its type taken): kept for the LEAF or END that follows. */
static int get_time(trace_reader *r, trace_rec *rec, uint64_t at)
{
    if (get_interval(r, at, "TIME", &r->t_start, &r->t_end))
        return -1;
    r->timed = 1;
    r->time_at = at;
    rec->type = TRACE_TIME;
    return 1;
}

/* The LEAF or END just decoded takes the TIME before it. */
static void take_time(trace_reader *r, trace_rec *rec)
{
    rec->timed = 1;
    rec->t_start = r->t_start;
    rec->t_end = r->t_end;
    r->timed = 0;
}

static int decode(trace_reader *r, trace_rec *rec)
{
    /* Only the fields a record type uses are set; zero the cheap rest. */
    rec->id = rec->parent = rec->idx = rec->kind = rec->group = 0;
    rec->region_id = rec->region_parent = 0;
    rec->factor_milli = 0;
    rec->owner = rec->work = rec->nchildren = 0;
    rec->region = rec->flags = rec->note = 0;
    rec->wloc = OSPG_LOC_NONE;
    rec->nsamples = 0;
    rec->samples = NULL;
    rec->value = 0;
    rec->ndeps = 0;
    rec->deps = NULL;
    rec->str1 = rec->str2 = NULL;
    rec->timed = 0;
    rec->t_start = rec->t_end = 0;
    uint64_t at = here(r);
    uint8_t t = r->pay[r->pos++];
    rec->type = t;
    rec->loc = OSPG_LOC_NONE;
    if ((t >= TRACE_BEGIN_S0 && t <= TRACE_END0 && r->version < 3) ||
        ((t == TRACE_LEAF || t == TRACE_LEAF_P0 || t == TRACE_WORK_SAMPLED) &&
         r->version < 4) ||
        (t == TRACE_TIME && r->version < 5) ||
        (t == TRACE_WAIT && r->version < 6))
        return fail(r, at, "unknown record type %u", (unsigned)t);
    if (r->timed && t != TRACE_LEAF && t != TRACE_LEAF_P0 &&
        t != TRACE_END && t != TRACE_END0)
        return fail(r, r->time_at, "a TIME record must come just before a "
                    "LEAF or END record");
    switch (t) {
    case TRACE_TIME:
        return get_time(r, rec, at);
    case TRACE_WAIT:
        return get_interval(r, at, "WAIT", &rec->t_start, &rec->t_end) ? -1
                                                                          : 1;
    case TRACE_LEAF_P0:
        rec->type = TRACE_LEAF;
        rec->kind = OSPG_P;
        rec->nchildren = 1;
        if (get_node(r, &rec->parent) < 0 || get_u(r, &rec->idx) < 0 ||
            get_loc(r, &rec->loc) < 0 || get_u(r, &rec->work) < 0)
            return -1;
        rec->wloc = rec->loc;
        break;
    case TRACE_LEAF: {
        if (get_node(r, &rec->parent) < 0 || get_u(r, &rec->idx) < 0)
            return -1;
        uint64_t kat = here(r);
        if (get_u(r, &rec->kind) < 0)
            return -1;
        if (rec->kind != OSPG_S && rec->kind != OSPG_P)
            return fail(r, kat, "node kind %llu, must be 1 (S) or 2 (P)",
                        (unsigned long long)rec->kind);
        if (get_loc(r, &rec->loc) < 0)
            return -1;
        uint64_t gat = here(r);
        if (get_u(r, &rec->group) < 0 ||
            (rec->group && get_node(r, &rec->owner) < 0))
            return -1;
        if (rec->group && rec->kind != OSPG_P)
            return fail(r, gat, "a group member must be a P-node");
        uint64_t nat = here(r);
        if (get_u(r, &rec->nchildren) < 0)
            return -1;
        if (rec->nchildren > 1)
            return fail(r, nat, "a leaf has %llu children, at most 1",
                        (unsigned long long)rec->nchildren);
        if (!rec->nchildren)
            break;
        if (get_u(r, &rec->work) < 0 || get_loc(r, &rec->wloc) < 0 ||
            get_u32(r, &rec->region, "region") < 0)
            return -1;
        uint64_t fat = here(r);
        if (get_u32(r, &rec->flags, "work flags") < 0)
            return -1;
        if (rec->flags & ~OSPG_W_CONTINUES)
            return fail(r, fat, "work flags 0x%x unknown",
                        (unsigned)rec->flags);
        break;
    }
    case TRACE_BEGIN_S0:
    case TRACE_BEGIN_P0:
        rec->type = TRACE_BEGIN;
        rec->kind = t == TRACE_BEGIN_S0 ? OSPG_S : OSPG_P;
        if (get_node(r, &rec->id) < 0 || get_node(r, &rec->parent) < 0 ||
            get_u(r, &rec->idx) < 0 || get_loc(r, &rec->loc) < 0)
            return -1;
        break;
    case TRACE_WORK0:
        rec->type = TRACE_WORK;
        if (get_node(r, &rec->parent) < 0 || get_u(r, &rec->idx) < 0 ||
            get_u(r, &rec->work) < 0 || get_loc(r, &rec->loc) < 0)
            return -1;
        break;
    case TRACE_END0:
        rec->type = TRACE_END;
        if (get_node(r, &rec->id) < 0 || get_u(r, &rec->nchildren) < 0)
            return -1;
        break;
    case TRACE_BEGIN: {
        if (get_node(r, &rec->id) < 0 || get_node(r, &rec->parent) < 0 ||
            get_u(r, &rec->idx) < 0)
            return -1;
        uint64_t kat = here(r);
        if (get_u(r, &rec->kind) < 0)
            return -1;
        if (rec->kind != OSPG_S && rec->kind != OSPG_P)
            return fail(r, kat, "node kind %llu, must be 1 (S) or 2 (P)",
                        (unsigned long long)rec->kind);
        if (get_loc(r, &rec->loc) < 0 || get_u(r, &rec->group) < 0 ||
            (rec->group && get_node(r, &rec->owner) < 0) ||
            get_deps(r, rec) < 0)
            return -1;
        break;
    }
    case TRACE_WORK:
    case TRACE_WORK_SAMPLED: {
        rec->type = TRACE_WORK;
        if (get_node(r, &rec->parent) < 0 || get_u(r, &rec->idx) < 0 ||
            get_u(r, &rec->work) < 0 || get_loc(r, &rec->loc) < 0 ||
            get_u32(r, &rec->region, "region") < 0)
            return -1;
        if (r->version < 2)
            break;
        uint64_t fat = here(r);
        if (get_u32(r, &rec->flags, "work flags") < 0)
            return -1;
        if (rec->flags & ~OSPG_W_CONTINUES)
            return fail(r, fat, "work flags 0x%x unknown",
                        (unsigned)rec->flags);
        if (t == TRACE_WORK_SAMPLED && get_samples(r, rec) < 0)
            return -1;
        break;
    }
    case TRACE_NOTE: {
        if (r->version < 2)
            return fail(r, at, "unknown record type %u", (unsigned)t);
        if (get_loc(r, &rec->loc) < 0)
            return -1;
        uint64_t nat = here(r);
        if (get_u32(r, &rec->note, "note") < 0 || get_u(r, &rec->value) < 0)
            return -1;
        if (rec->note == 0 || rec->note > TRACE_NOTE_MAX)
            return fail(r, nat, "note %u unknown", (unsigned)rec->note);
        break;
    }
    case TRACE_END:
        if (get_node(r, &rec->id) < 0 || get_u(r, &rec->nchildren) < 0 ||
            get_loc(r, &rec->loc) < 0)
            return -1;
        break;
    case TRACE_LOC:
        if (get_loc(r, &rec->loc) < 0 || get_str(r, 0, &rec->str1) < 0 ||
            get_str(r, 1, &rec->str2) < 0)
            return -1;
        break;
    case TRACE_META:
        if (get_str(r, 0, &rec->str1) < 0 || get_str(r, 1, &rec->str2) < 0)
            return -1;
        break;
    case TRACE_REGION: {
        uint64_t rat = here(r);
        if (get_u32(r, &rec->region_id, "region") < 0 ||
            get_u32(r, &rec->region_parent, "region") < 0 ||
            get_loc(r, &rec->loc) < 0 || get_u(r, &rec->factor_milli) < 0)
            return -1;
        if (rec->region_id == 0)
            return fail(r, rat, "region id 0");
        break;
    }
    default:
        return fail(r, at, "unknown record type %u", (unsigned)t);
    }
    if (r->timed)
        take_time(r, rec);
    return 1;
}

/* Skips n varints without decoding them; -1 if they run past the block.
 * A varint ends at each byte below 0x80: eight bytes are looked at at
 * once (the scan pass skips every graph record of a trace). */
static int skip_varints(trace_reader *r, uint64_t n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    while (n && r->pos + 8 <= r->pay_len) {
        uint64_t w;
        memcpy(&w, r->pay + r->pos, sizeof(w));
        uint64_t ends = ~w & 0x8080808080808080ull;
        uint64_t c = (uint64_t)__builtin_popcountll(ends);
        if (c < n) {
            n -= c;
            r->pos += 8;
            continue;
        }
        for (uint64_t i = 1; i < n; i++)
            ends &= ends - 1;
        r->pos += (size_t)(__builtin_ctzll(ends) >> 3) + 1;
        return 0;
    }
#endif
    for (uint64_t i = 0; i < n; i++) {
        while (r->pos < r->pay_len && (r->pay[r->pos] & 0x80))
            r->pos++;
        if (r->pos == r->pay_len)
            return fail(r, here(r), "record runs past the end of its block");
        r->pos++;
    }
    return 0;
}

/* Skips the graph record starting at r->pos.  Returns 1 when skipped, 0
 * when the record is of another type (left in place), -1 on error.  Only
 * what is needed to find the record's end is checked; a full read
 * (trace_reader_next without skimming) checks the rest. */
static int skim_record(trace_reader *r)
{
    uint8_t t = r->pay[r->pos];
    uint64_t group, ndeps;
    int shortform = t >= TRACE_BEGIN_S0 && t <= TRACE_END0 && r->version >= 3;
    int leaf = (t == TRACE_LEAF || t == TRACE_LEAF_P0 ||
                t == TRACE_WORK_SAMPLED) && r->version >= 4;
    int wait = t == TRACE_WAIT && r->version >= 6;
    if (t != TRACE_BEGIN && t != TRACE_WORK && t != TRACE_END && !shortform &&
        !leaf && !wait)
        return 0;
    if (r->timed && t != TRACE_LEAF && t != TRACE_LEAF_P0 && t != TRACE_END &&
        t != TRACE_END0)
        return fail(r, r->time_at, "a TIME record must come just before a "
                    "LEAF or END record");
    r->timed = 0; /* a skimmed record takes no TIME */
    uint64_t at = here(r);
    r->pos++;
    uint64_t nchildren;
    switch (t) {
    case TRACE_WAIT: { /* decoded: the next TIME counts from its end */
        uint64_t t_start, t_end;
        return get_interval(r, at, "WAIT", &t_start, &t_end) ? -1 : 1;
    }
    case TRACE_LEAF_P0:
        return skip_varints(r, 4) ? -1 : 1;
    case TRACE_WORK_SAMPLED:
        if (skip_varints(r, 6) || get_u(r, &nchildren) < 0) /* nsamples */
            return -1;
        if (nchildren > TRACE_MAX_SAMPLES)
            return fail(r, here(r), "%llu sampled lines, must be 1..%u",
                        (unsigned long long)nchildren, TRACE_MAX_SAMPLES);
        return skip_varints(r, 2 * nchildren) ? -1 : 1;
    case TRACE_LEAF:
        if (skip_varints(r, 4) || get_u(r, &group) < 0 ||
            skip_varints(r, group ? 1 : 0) || get_u(r, &nchildren) < 0)
            return -1;
        return skip_varints(r, nchildren ? 4 : 0) ? -1 : 1;
    case TRACE_BEGIN_S0:
    case TRACE_BEGIN_P0:
    case TRACE_WORK0:
        return skip_varints(r, 4) ? -1 : 1;
    case TRACE_END0:
        return skip_varints(r, 2) ? -1 : 1;
    case TRACE_WORK:
        return skip_varints(r, r->version < 2 ? 5 : 6) ? -1 : 1;
    case TRACE_END:
        return skip_varints(r, 3) ? -1 : 1;
    default:
        if (skip_varints(r, 5) || get_u(r, &group) < 0 ||
            skip_varints(r, group ? 1 : 0) || get_u(r, &ndeps) < 0)
            return -1;
        if (ndeps > TRACE_MAX_DEPS)
            return fail(r, here(r), "%llu depend items, most allowed is %u",
                        (unsigned long long)ndeps, TRACE_MAX_DEPS);
        return skip_varints(r, 2 * ndeps) ? -1 : 1;
    }
}

void trace_reader_skim(trace_reader *r, int on)
{
    if (!r)
        return;
    /* reading on in full, the block skimmed so far must be sound */
    if (r->skim && !on && r->state == RD_OK && r->pos < r->pay_len)
        check_payload(r);
    r->skim = on;
}

int trace_reader_next(trace_reader *r, trace_rec *rec)
{
    if (!r || !rec)
        return -1;
    for (;;) {
        if (r->state == RD_ERR)
            return -1;
        if (r->state == RD_END)
            return 0;
        while (r->pos == r->pay_len) {
            int k = next_block(r);
            if (k <= 0)
                return k;
        }
        if (r->skim) {
            int k = skim_record(r);
            if (k == 1)
                continue;
            if (k < 0) {
                check_payload(r); /* damage a CRC explains is the error */
                return -1;
            }
        }
        int k = decode(r, rec);
        if (k == 1 && rec->type == TRACE_TIME)
            continue;
        /* a skimming reader vouches for each block it hands out a record
         * from (or finds fault with) */
        if (r->skim && check_payload(r) < 0)
            return -1;
        return k;
    }
}

/* NULL while there is no error. */
const char *trace_reader_error(const trace_reader *r)
{
    return r && r->state == RD_ERR ? r->err : NULL;
}

uint64_t trace_reader_flags(const trace_reader *r)
{
    return r->flags;
}

uint32_t trace_reader_stream(const trace_reader *r)
{
    return r ? r->stream : 0;
}

/* Between blocks this is the next block header's offset. */
uint64_t trace_reader_offset(const trace_reader *r)
{
    if (!r)
        return 0;
    return r->pos < r->pay_len ? here(r) : r->src_off;
}
