/* regions.c - what-if regions as rows, and the program's serial code named
 * by the events around it (tests/e2e_regions.sh).
 *
 * The program's serial code comes in five timed phases between two
 * annotated regions and two parallel regions; one region holds serial
 * code, the other a parallel loop of timed chunks.  Every fragment is
 * timed with the thread's CPU clock and printed on stderr:
 *   whatif-frag NAME NS       a serial phase (FROM -> TO in the test)
 *   whatif-region NAME WORK SPAN
 * so the test compares whatif's rows with what the program measured.
 */
#include <omp.h>
#include <stdio.h>

#include "selftime.h"
#include "whatif.h"

#define CHUNKS 8

static uint64_t chunk_ns[CHUNKS];

int main(void)
{
    uint64_t start = st_burn(12);
    __WHATIF_BEGIN__; /* SERIAL_REGION */
    uint64_t serial = st_burn(20);
    __WHATIF_END__;
    uint64_t before_par = st_burn(8);
#pragma omp parallel /* PAR */
    st_burn(3);
    uint64_t before_loop = st_burn(16);
    __WHATIF_BEGIN__; /* LOOP_REGION */
#pragma omp parallel for schedule(dynamic, 1) /* LOOP */
    for (int i = 0; i < CHUNKS; i++)
        chunk_ns[i] = st_burn(6 + i % 3);
    __WHATIF_END__;
    uint64_t loop_work = 0, loop_span = 0;
    for (int i = 0; i < CHUNKS; i++) {
        loop_work += chunk_ns[i];
        loop_span = st_max(loop_span, chunk_ns[i]);
    }
    uint64_t end = st_burn(10);
    fprintf(stderr, "whatif-frag start %llu\n", (unsigned long long)start);
    fprintf(stderr, "whatif-frag serial %llu\n", (unsigned long long)serial);
    fprintf(stderr, "whatif-frag before_par %llu\n",
            (unsigned long long)before_par);
    fprintf(stderr, "whatif-frag before_loop %llu\n",
            (unsigned long long)before_loop);
    fprintf(stderr, "whatif-frag end %llu\n", (unsigned long long)end);
    fprintf(stderr, "whatif-region serial %llu %llu\n",
            (unsigned long long)serial, (unsigned long long)serial);
    fprintf(stderr, "whatif-region loop %llu %llu\n",
            (unsigned long long)loop_work, (unsigned long long)loop_span);
    return 0;
}
