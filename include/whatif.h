/* whatif.h - what-if annotations for whatif, the OpenMP parallelism
 * profiler.  Header only: a program that includes it builds and links
 * without whatif (it needs only the OpenMP runtime it already uses) and
 * runs unchanged; each annotation then costs one call into the runtime
 * (~10 ns) that does nothing.
 *
 *   __WHATIF_BEGIN__;            ... code ...   __WHATIF_END__;
 *   __WHATIF_BEGIN_FACTOR__(8);  ... code ...   __WHATIF_END__;
 *
 * marks a region whose speed-up you want to evaluate before writing any
 * parallel code; the region's id is the file:line of its BEGIN.  Profiled
 * (whatif run, or the tool linked in), the boundaries split the serial
 * fragments there, so the region's work is measured exactly, and whatif
 * reports the program's parallelism with the regions' work divided by each
 * factor (whatif.csv).  A factor given in BEGIN_FACTOR is the region's own
 * expected speed-up (scenario "expected").
 *
 * Semantics: every serial fragment executed between BEGIN and END counts,
 * including the code of parallel regions and tasks started inside (their
 * threads and tasks inherit the region).  Regions nest: the inner one's
 * code belongs to both.  A region may be entered many times, by many
 * threads and tasks at once; each entry is measured.  BEGIN and END must be
 * paired in the same task: an END without BEGIN, or a task ending with a
 * region open, is reported once on stderr and otherwise ignored.
 *
 * The annotations use omp_control_tool(), the OpenMP way for a program to
 * talk to its tool, with commands 0x5747 and 0x5748 (tool-defined).
 */
#ifndef WHATIF_H
#define WHATIF_H

#include <omp.h>

#define WHATIF_CMD_BEGIN 0x5747
#define WHATIF_CMD_END 0x5748

/* libomp ignores omp_control_tool until its first parallel region; asking
 * for the processor count completes its start-up earlier (once per file). */
static inline void whatif_prepare_(void)
{
    static int ready;
    if (!ready) {
        (void)omp_get_num_procs();
        ready = 1;
    }
}

/* The factor travels as thousandths in the modifier; 0 means none. */
#define __WHATIF_BEGIN_FACTOR__(factor)                                       \
    do {                                                                      \
        whatif_prepare_();                                                    \
        (void)omp_control_tool(WHATIF_CMD_BEGIN,                              \
                               (int)((factor) * 1000.0 + 0.5), (void *)0);    \
    } while (0)

#define __WHATIF_BEGIN__ __WHATIF_BEGIN_FACTOR__(0)

#define __WHATIF_END__                                                        \
    do {                                                                      \
        whatif_prepare_();                                                    \
        (void)omp_control_tool(WHATIF_CMD_END, 0, (void *)0);                 \
    } while (0)

#endif
