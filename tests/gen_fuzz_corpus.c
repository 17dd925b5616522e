/* gen_fuzz_corpus.c - writes the fuzz target's seed traces with the real
 * writer, so that the seeds follow the format as trace.c implements it.
 *
 * Usage: gen_fuzz_corpus DIR   (writes DIR/seed-*.tr; exits 1 on failure)
 * Build: cc -std=c11 -Ianalyzer tests/gen_fuzz_corpus.c analyzer/trace.c
 * The seeds are small on purpose: libFuzzer mutates small inputs faster,
 * and each still reaches every record type and the block machinery.
 */
#define _POSIX_C_SOURCE 200809L

#include "trace.h"

#include <stdio.h>

static int fail(const char *what)
{
    perror(what);
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: %s DIR\n", argv[0]);
        return 2;
    }
    char p[4096];
    trace_writer *w;

    /* every record type in one block, as in docs/trace-format.md */
    snprintf(p, sizeof p, "%s/seed-tiny.tr", argv[1]);
    if (!(w = trace_writer_open(p, 3, 0, 0)))
        return fail(p);
    static const ospg_dep d1 = {0x1000, OSPG_DEP_IN};
    trace_write_meta(w, "k", "v");
    trace_write_loc(w, 5, "for", "a.c:3");
    trace_write_begin(w, 1, 0, 0, OSPG_P, 5, 7, 0, &d1, 1);
    trace_write_work(w, 1, 0, 100, 5, 0, OSPG_W_CONTINUES);
    trace_write_note(w, 5, TRACE_NOTE_ONE_THREAD_LOOP, 2);
    trace_write_end(w, 1, 1, OSPG_LOC_NONE);
    trace_write_end(w, 0, 1, 0);
    if (trace_writer_close(w) != 0)
        return fail(p);

    /* many small blocks: block boundaries and delta resets */
    snprintf(p, sizeof p, "%s/seed-blocks.tr", argv[1]);
    if (!(w = trace_writer_open(p, 1, 24, 0)))
        return fail(p);
    for (uint64_t i = 1; i <= 6; i++) {
        trace_write_begin(w, i, 0, i - 1, i % 2 ? OSPG_P : OSPG_S,
                          (uint32_t)i, 0, 0, NULL, 0);
        trace_write_work(w, i, 0, 1000 * i, (uint32_t)i, (uint32_t)(i % 2), 0);
        trace_write_end(w, i, 1, OSPG_LOC_NONE);
    }
    trace_write_end(w, 0, 6, 0);
    if (trace_writer_close(w) != 0)
        return fail(p);

    /* a group member with several depend items and extreme values */
    snprintf(p, sizeof p, "%s/seed-deps.tr", argv[1]);
    if (!(w = trace_writer_open(p, 0, 0, 0)))
        return fail(p);
    static const ospg_dep d5[5] = {{0, 1}, {UINT64_MAX, 2}, {8, 3},
                                   {0x7ffd0000, 4}, {0x7ffd0008, 5}};
    trace_write_begin(w, UINT64_MAX, 0, UINT64_MAX, OSPG_P, OSPG_LOC_NONE,
                      UINT64_MAX, UINT64_MAX, d5, 5);
    trace_write_work(w, UINT64_MAX, 0, UINT64_MAX, UINT32_MAX - 1,
                     UINT32_MAX, 0);
    trace_write_end(w, UINT64_MAX, 1, 0);
    if (trace_writer_close(w) != 0)
        return fail(p);

    /* a record larger than the block size, written as its own block */
    snprintf(p, sizeof p, "%s/seed-alone.tr", argv[1]);
    if (!(w = trace_writer_open(p, 2, 8, 0)))
        return fail(p);
    trace_write_meta(w, "command", "./a.out --size 1000");
    trace_write_loc(w, 1, "parallel", "main.c:12");
    trace_write_end(w, 0, 0, 0);
    if (trace_writer_close(w) != 0)
        return fail(p);

    /* version 4: leaves (short and long forms, a group member, none) and
     * a WORK with samples */
    snprintf(p, sizeof p, "%s/seed-leaf-v4.tr", argv[1]);
    if (!(w = trace_writer_open(p, 3, 0, 0)))
        return fail(p);
    static const ospg_leaf_work la = {100, 5, 0, 0},
                                lb = {30, 5, 2, OSPG_W_CONTINUES};
    trace_write_loc(w, 5, "task", "a.c:7");
    trace_write_begin(w, 1, 0, 0, OSPG_S, OSPG_LOC_NONE, 0, 0, NULL, 0);
    trace_write_leaf(w, 1, 0, OSPG_P, 5, 0, 0, &la);
    trace_write_leaf(w, 1, 1, OSPG_S, 5, 0, 0, &lb);
    trace_write_leaf(w, 1, 2, OSPG_P, 5, 9, 1, &la);
    trace_write_leaf(w, 1, 3, OSPG_P, 5, 0, 0, NULL);
    static const ospg_sample sm[2] = {{6, 3}, {7, 1}};
    trace_write_work_sampled(w, 1, 4, 400, 5, 0, 0, sm, 2);
    trace_write_end(w, 1, 5, OSPG_LOC_NONE);
    trace_write_end(w, 0, 1, 0);
    if (trace_writer_close(w) != 0)
        return fail(p);

    /* version 5: grains with their times, before a LEAF and an END */
    snprintf(p, sizeof p, "%s/seed-time-v5.tr", argv[1]);
    if (!(w = trace_writer_open(p, 4, 0, 0)))
        return fail(p);
    trace_write_loc(w, 5, "task", "a.c:7");
    trace_write_begin(w, 1, 0, 0, OSPG_S, OSPG_LOC_NONE, 0, 0, NULL, 0);
    trace_write_time(w, 1000000, 1004000);
    trace_write_leaf(w, 1, 0, OSPG_P, 5, 0, 0, &la);
    trace_write_begin(w, 2, 1, 1, OSPG_P, 5, 0, 0, NULL, 0);
    trace_write_work(w, 2, 0, 70, 5, 0, 0);
    trace_write_time(w, 999000, 1009000);
    trace_write_end(w, 2, 1, OSPG_LOC_NONE);
    trace_write_end(w, 1, 2, OSPG_LOC_NONE);
    trace_write_end(w, 0, 1, 0);
    if (trace_writer_close(w) != 0)
        return fail(p);

    /* version 6: a task's waits at its taskwait, around a timed child */
    snprintf(p, sizeof p, "%s/seed-wait-v6.tr", argv[1]);
    if (!(w = trace_writer_open(p, 5, 0, 0)))
        return fail(p);
    trace_write_loc(w, 5, "task", "a.c:7");
    trace_write_begin(w, 1, 0, 0, OSPG_P, 5, 0, 0, NULL, 0);
    trace_write_work(w, 1, 0, 30, 5, 0, 0);
    trace_write_begin(w, 2, 1, 1, OSPG_S, OSPG_LOC_NONE, 0, 0, NULL, 0);
    trace_write_wait(w, 1002000, 1005000);
    trace_write_time(w, 1005000, 1007000);
    trace_write_leaf(w, 2, 0, OSPG_P, 5, 0, 0, &la);
    trace_write_wait(w, 1007000, 1011000);
    trace_write_end(w, 2, 1, OSPG_LOC_NONE);
    trace_write_time(w, 1000000, 1012000);
    trace_write_end(w, 1, 2, OSPG_LOC_NONE);
    trace_write_end(w, 0, 1, 0);
    if (trace_writer_close(w) != 0)
        return fail(p);

    /* version 7: small blocks, some of graph records only (marked), some
     * with names between them */
    snprintf(p, sizeof p, "%s/seed-marked-v7.tr", argv[1]);
    if (!(w = trace_writer_open(p, 6, 24, 0)))
        return fail(p);
    trace_write_loc(w, 5, "task", "a.c:7");
    for (uint64_t i = 1; i <= 4; i++) {
        trace_write_begin(w, i, 0, i - 1, OSPG_P, 5, 0, 0, NULL, 0);
        trace_write_work(w, i, 0, 100 * i, 5, 0, 0);
        if (i == 2)
            trace_write_meta(w, "k", "v");
        trace_write_time(w, 1000 * i, 1000 * i + 500);
        trace_write_end(w, i, 1, OSPG_LOC_NONE);
    }
    trace_write_end(w, 0, 4, 0);
    if (trace_writer_close(w) != 0)
        return fail(p);
    return 0;
}
