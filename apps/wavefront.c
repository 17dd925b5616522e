/* wavefront.c - a blocked 2-D wavefront with task dependences.
 *
 *   wavefront [NB] [BS]    (default 16 blocks per side, block 64x64)
 *
 * Block (i, j) needs its upper and left neighbours (depend(in:) on them,
 * depend(out:) on itself), so the blocks form anti-diagonal waves.  With
 * equal blocks the inherent parallelism is NB*NB / (2*NB - 1) (about 8.3
 * for NB 16): the task row's span is the longest dependence chain, 2NB-1
 * blocks, not the sum of the tasks.
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int nb = argc > 1 ? atoi(argv[1]) : 16;
    int bs = argc > 2 ? atoi(argv[2]) : 64;
    int n = nb * bs;
    double *a = calloc((size_t)(n + 1) * (size_t)(n + 1), sizeof(double));
    char *dep = calloc((size_t)nb * (size_t)nb, 1);
    if (!a || !dep)
        return 1;
    for (int i = 0; i <= n; i++)
        a[i] = a[(size_t)i * (size_t)(n + 1)] = 1.0;
#define A(i, j) a[(size_t)(i) * (size_t)(n + 1) + (size_t)(j)]
#define D(i, j) dep[(size_t)(i) * (size_t)nb + (size_t)(j)]
#pragma omp parallel
#pragma omp single
    for (int bi = 0; bi < nb; bi++)
        for (int bj = 0; bj < nb; bj++) {
            char *up = bi ? &D(bi - 1, bj) : &D(bi, bj);
            char *left = bj ? &D(bi, bj - 1) : &D(bi, bj);
#pragma omp task depend(in : up[0], left[0]) depend(out : D(bi, bj))
            for (int i = bi * bs + 1; i <= (bi + 1) * bs; i++)
                for (int j = bj * bs + 1; j <= (bj + 1) * bs; j++)
                    for (int r = 0; r < 20; r++)
                        A(i, j) = 0.5 * (A(i - 1, j) + A(i, j - 1)) + 1e-9 * r;
        }
    printf("a[n][n] = %g\n", A(n, n));
    free(a);
    free(dep);
    return 0;
}
