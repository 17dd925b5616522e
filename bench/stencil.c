/* stencil.c - a 2-D Jacobi stencil with static loops (coarse grain).
 *
 *   stencil [N] [ITERS]      (default 1024 x 1024, 100 iterations)
 */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 1024;
    int iters = argc > 2 ? atoi(argv[2]) : 100;
    double *a = calloc((size_t)n * n, sizeof(double));
    double *b = calloc((size_t)n * n, sizeof(double));
    if (!a || !b)
        return 1;
    for (int i = 0; i < n; i++)
        a[i] = b[i] = 1.0;
    for (int it = 0; it < iters; it++) {
#pragma omp parallel for schedule(static)
        for (int i = 1; i < n - 1; i++)
            for (int j = 1; j < n - 1; j++)
                b[(size_t)i * n + j] =
                    0.25 * (a[(size_t)(i - 1) * n + j] +
                            a[(size_t)(i + 1) * n + j] +
                            a[(size_t)i * n + j - 1] + a[(size_t)i * n + j + 1]);
        double *t = a;
        a = b;
        b = t;
    }
    printf("center %.6f\n", a[(size_t)(n / 2) * n + n / 2]);
    free(a);
    free(b);
    return 0;
}
