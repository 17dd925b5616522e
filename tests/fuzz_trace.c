/* fuzz_trace.c - libFuzzer target for the trace reader.
 *
 * The reader is the one piece of whatif that parses bytes from outside, so
 * it must survive anything: this feeds arbitrary images to
 * trace_reader_open_mem and decodes until the end or the first error.
 * Random mutations nearly always break a block's CRC, which would keep the
 * fuzzer at the block layer, so each input is also decoded a second time
 * with every block's CRC recomputed: that copy reaches the record decoder
 * with whatever payload the fuzzer made, once decoding every record and
 * once skimming (skipping graph records, as the analyzer's first pass).
 * Beyond "no crash, no leak, no undefined behaviour" (the sanitizers' job)
 * it checks the reader's own promises, aborting so the fuzzer keeps the
 * input: an error is one line that starts with the name and carries
 * "byte N", errors and ends stick, and every record it hands out is within
 * the format's limits.  Seeds: tests/fuzz_corpus/ (made by
 * tests/gen_fuzz_corpus.c).
 *
 * Build: clang-19 -g -O1 -fsanitize=fuzzer,address,undefined -Ianalyzer
 *        tests/fuzz_trace.c analyzer/trace.c -o /tmp/fuzz_trace
 */
#include "trace.h"

#include <stdlib.h>
#include <string.h>

static void require(int ok)
{
    if (!ok)
        abort();
}

static void check_rec(const trace_rec *r)
{
    require((r->type >= TRACE_BEGIN && r->type <= TRACE_NOTE &&
             r->type != 4) || /* 4: the removed GROUP record */
            r->type == TRACE_LEAF || r->type == TRACE_WAIT);
    /* an interval: a timed LEAF or END, or a WAIT */
    require(!r->timed || r->type == TRACE_LEAF || r->type == TRACE_END);
    require(r->timed || r->type == TRACE_WAIT ||
            (r->t_start == 0 && r->t_end == 0));
    require(r->t_start <= r->t_end);
    require(r->type == TRACE_NOTE ||
            (r->note == 0 && r->value == 0));
    require(r->type != TRACE_NOTE ||
            (r->note >= 1 && r->note <= TRACE_NOTE_MAX));
    require(r->type == TRACE_WORK || r->type == TRACE_LEAF || r->flags == 0);
    require((r->flags & ~OSPG_W_CONTINUES) == 0);
    require(r->type != TRACE_REGION || r->region_id != 0);
    require(r->type == TRACE_REGION ||
            (r->region_id == 0 && r->region_parent == 0 &&
             r->factor_milli == 0));
    require(r->owner == 0 ||
            ((r->type == TRACE_BEGIN || r->type == TRACE_LEAF) &&
             r->group != 0));
    require(r->type == TRACE_WORK ||
            (r->nsamples == 0 && r->samples == NULL));
    require((r->nsamples == 0) == (r->samples == NULL));
    require(r->nsamples <= TRACE_MAX_SAMPLES);
    if (r->type == TRACE_LEAF) {
        require(r->kind == OSPG_S || r->kind == OSPG_P);
        require(r->group == 0 || r->kind == OSPG_P);
        require(r->nchildren <= 1);
        require(r->nchildren == 1 ||
                (r->work == 0 && r->region == 0 && r->flags == 0 &&
                 r->wloc == OSPG_LOC_NONE));
        require(r->id == 0 && r->ndeps == 0 && r->deps == NULL);
    }
    if (r->type == TRACE_BEGIN) {
        require(r->kind == OSPG_S || r->kind == OSPG_P);
        require(r->ndeps <= TRACE_MAX_DEPS);
        require((r->ndeps == 0) == (r->deps == NULL));
        for (size_t i = 0; i < r->ndeps; i++)
            require(r->deps[i].type >= 1 && r->deps[i].type <= 6);
    }
    if (r->type == TRACE_LOC || r->type == TRACE_META) {
        require(r->str1 && r->str2);
        require(strlen(r->str1) <= TRACE_MAX_STR);
        require(strlen(r->str2) <= TRACE_MAX_STR);
    } else {
        require(!r->str1 && !r->str2);
    }
}

static uint32_t crc32_bitwise(const uint8_t *p, size_t n)
{
    uint32_t c = 0xffffffffu;
    for (size_t i = 0; i < n; i++) {
        c ^= p[i];
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1u)));
    }
    return ~c;
}

/* Rewrites each block's CRC field to match its payload, as far as the
 * block lengths make sense; the reader must judge the rest. */
static void fix_crcs(uint8_t *b, size_t n)
{
    size_t off = 24;
    while (off + 8 <= n) {
        uint32_t len = (uint32_t)b[off] | (uint32_t)b[off + 1] << 8 |
                       (uint32_t)b[off + 2] << 16 | (uint32_t)b[off + 3] << 24;
        if (len == 0 || len > n - off - 8)
            return;
        uint32_t c = crc32_bitwise(b + off + 8, len);
        for (int i = 0; i < 4; i++)
            b[off + 4 + i] = (uint8_t)(c >> (8 * i));
        off += 8 + (size_t)len;
    }
}

static void run(const uint8_t *data, size_t size, int skim)
{
    trace_reader *r = trace_reader_open_mem(data, size, "fuzz");
    if (!r)
        return;
    trace_reader_skim(r, skim);
    trace_rec rec;
    int k;
    uint64_t last_off = 0;
    while ((k = trace_reader_next(r, &rec)) == 1) {
        check_rec(&rec);
        require(!skim || (rec.type != TRACE_BEGIN && rec.type != TRACE_WORK &&
                          rec.type != TRACE_END && rec.type != TRACE_LEAF));
        uint64_t off = trace_reader_offset(r);
        require(off > last_off && off <= size);
        last_off = off;
    }
    const char *e = trace_reader_error(r);
    if (k < 0) {
        require(e != NULL);
        require(strncmp(e, "fuzz: byte ", 11) == 0);
        require(strchr(e, '\n') == NULL);
    } else {
        require(k == 0 && e == NULL);
    }
    require(trace_reader_next(r, &rec) == k); /* the outcome sticks */
    trace_reader_close(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    run(data, size, 0);
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    fix_crcs(copy, size);
    run(copy, size, 0);
    run(copy, size, 1); /* the scan pass's fast skipping */
    free(copy);
    return 0;
}
