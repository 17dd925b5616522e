/* context_kern.h - a parallel loop in a header, inlined into its callers
 * (tests/e2e/context.c): without --context its rows from every caller are
 * one, with it one per call site. */
#ifndef WHATIF_TESTS_CONTEXT_KERN_H
#define WHATIF_TESTS_CONTEXT_KERN_H

#include "selftime.h"

/* Runs chunks chunks of ms each in a parallel loop; returns the
 * nanoseconds they took, measured. */
static inline uint64_t kern_loop(int chunks, double ms)
{
    uint64_t took = 0;
#pragma omp parallel for schedule(static, 1) reduction(+ : took) /* KERN */
    for (int i = 0; i < chunks; i++)
        took += st_burn(ms);
    return took;
}

/* The same with chunks handed out one at a time: the runtime call is
 * on the `for` line, the directive's line in its ident_t (whose own line
 * was once taken as a call site). */
static inline uint64_t kern_dyn(int chunks, double ms)
{
    uint64_t took = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : took) /* DKERN */
    for (int i = 0; i < chunks; i++)
        took += st_burn(ms);
    return took;
}

#endif
