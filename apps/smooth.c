/* smooth.c - a before/after pair for the what-if analysis.
 *
 *   clang-19 -fopenmp -g -O2 -Iinclude apps/smooth.c -o smooth_before
 *   clang-19 -fopenmp -g -O2 -Iinclude -DPARALLEL_PREPARE apps/smooth.c \
 *       -o smooth_after
 *
 * Each of STEPS steps prepares a row-wise weight for an image serially
 * (annotated as a what-if region in the "before" build), then smooths the
 * image with a parallel loop.  The "after" build parallelizes the
 * preparation with `omp for schedule(dynamic, 8)`.
 *
 * Expected: before, the serial preparation dominates the critical path and
 * the what-if profile predicts the program's parallelism once it is sped up
 * by k; after, the program's measured parallelism matches the prediction
 * at the k the new loop actually achieves (its row's parallelism)
 * (docs/whatif.md, tests/e2e_whatif.sh).
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "whatif.h"

#define N 512
#define STEPS 4

static double img[N][N], out[N][N], weight[N];

static void prepare_row(int i)
{
    double w = 0;
    for (int j = 0; j < N; j++)
        for (int r = 0; r < 8; r++)
            w += sqrt(img[i][j] + r + 1.0);
    weight[i] = 1.0 / (1.0 + w / (N * 8));
}

int main(void)
{
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            img[i][j] = (double)((i * 31 + j * 17) % 255);
    for (int step = 0; step < STEPS; step++) {
#ifdef PARALLEL_PREPARE
#pragma omp parallel for schedule(dynamic, 8)
        for (int i = 0; i < N; i++)
            prepare_row(i);
#else
        __WHATIF_BEGIN__;
        for (int i = 0; i < N; i++)
            prepare_row(i);
        __WHATIF_END__;
#endif
#pragma omp parallel for schedule(dynamic, 8)
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                out[i][j] = weight[i] * (img[i - 1][j] + img[i + 1][j] +
                                         img[i][j - 1] + img[i][j + 1]) / 4;
        for (int i = 1; i < N - 1; i++)
            for (int j = 1; j < N - 1; j++)
                img[i][j] = 0.5 * img[i][j] + 0.5 * out[i][j];
    }
    double sum = 0;
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            sum += img[i][j];
    printf("checksum %.6f\n", sum);
    return 0;
}
