/* calib.c - OpenMP programs whose inherent parallelism is known by
 * construction, for the end-to-end tests.
 *
 * Every fragment burns a fixed amount of thread CPU time, so with the
 * cputime metric work and span follow from the shape alone, whatever the
 * thread count and however the machine schedules the threads:
 *
 *   calib loop  S C K   serial S ms; parallel for schedule(dynamic,1) of K
 *                       iterations of C ms; serial S ms
 *                       work 2S + KC, span 2S + C, loop parallelism K
 *   calib tasks S C K   serial S ms; K tasks of C ms created by one thread
 *                       (single), taskwait; serial S ms
 *                       work 2S + KC, span 2S + C
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "burn.h"


int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: calib loop|tasks S C K\n");
        return 2;
    }
    double s = atof(argv[2]), c = atof(argv[3]);
    int k = atoi(argv[4]);
    burn_ms(s);
    if (!strcmp(argv[1], "loop")) {
#pragma omp parallel for schedule(dynamic, 1)
        for (int i = 0; i < k; i++)
            burn_ms(c);
    } else {
#pragma omp parallel
#pragma omp single
        {
            for (int i = 0; i < k; i++) {
#pragma omp task
                burn_ms(c);
            }
#pragma omp taskwait
        }
    }
    burn_ms(s);
    printf("done\n");
    return 0;
}
