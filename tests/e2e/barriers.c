/* barriers.c - a team passing a known number of barriers, for
 * tests/e2e_grain_graph.sh.
 *
 *   barriers plain [K]  one parallel region whose threads burn 1 ms each
 *                        and meet at an explicit barrier, K times (default
 *                        40): K + 1 barrier phases, the region's end the
 *                        last, every one of them on the critical path, so
 *                        the burdened span is the span plus K + 1 barrier
 *                        costs.
 *   barriers tasks [K]  K times, one thread creates 4 tasks of 1 ms that
 *                        the team runs inside the single's barrier: their
 *                        barriers waited for tasks and measure no barrier
 *                        cost.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "selftime.h"

int main(int argc, char **argv)
{
    int tasks = argc > 1 && !strcmp(argv[1], "tasks");
    int k = argc > 2 ? atoi(argv[2]) : 40;
#pragma omp parallel
    for (int i = 0; i < k; i++) {
        if (tasks) {
#pragma omp single
            for (int t = 0; t < 4; t++) {
#pragma omp task
                st_burn(1);
            }
        } else {
            st_burn(1);
#pragma omp barrier
        }
    }
    printf("%d barriers\n", k);
    return 0;
}
