/* tasksort.c - a task-parallel merge sort (fine-grained tasks).
 *
 *   tasksort [N] [CUTOFF]     (default 2000000 elements, cutoff 2048)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void merge(long *a, long *tmp, size_t n, size_t mid)
{
    size_t i = 0, j = mid, k = 0;
    while (i < mid && j < n)
        tmp[k++] = a[i] <= a[j] ? a[i++] : a[j++];
    while (i < mid)
        tmp[k++] = a[i++];
    while (j < n)
        tmp[k++] = a[j++];
    memcpy(a, tmp, n * sizeof(*a));
}

static int cmp(const void *x, const void *y)
{
    long a = *(const long *)x, b = *(const long *)y;
    return (a > b) - (a < b);
}

static void sort(long *a, long *tmp, size_t n, size_t cutoff)
{
    if (n <= cutoff) {
        qsort(a, n, sizeof(*a), cmp);
        return;
    }
    size_t mid = n / 2;
#pragma omp task
    sort(a, tmp, mid, cutoff);
#pragma omp task
    sort(a + mid, tmp + mid, n - mid, cutoff);
#pragma omp taskwait
    merge(a, tmp, n, mid);
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 2000000;
    size_t cutoff = argc > 2 ? strtoul(argv[2], NULL, 10) : 2048;
    long *a = malloc(n * sizeof(*a)), *tmp = malloc(n * sizeof(*tmp));
    if (!a || !tmp)
        return 1;
    unsigned long x = 88172645463325252ul;
    for (size_t i = 0; i < n; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        a[i] = (long)(x % 1000000007ul);
    }
#pragma omp parallel
#pragma omp single
    sort(a, tmp, n, cutoff);
    for (size_t i = 1; i < n; i++)
        if (a[i - 1] > a[i]) {
            printf("not sorted\n");
            return 1;
        }
    printf("sorted %zu\n", n);
    free(a);
    free(tmp);
    return 0;
}
