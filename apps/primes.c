/* primes.c - the example of the OMP-WHIP paper (Fig. 1): flag the primes
 * up to N with a dynamically scheduled parallel loop, then count them
 * serially.
 *
 * Expected profile: the loop's chunks are independent, so the loop's
 * parallelism is roughly the number of chunks weighted by their cost
 * (large numbers cost more: later chunks dominate); the serial
 * initialisation and count lie on the critical path and cap the program's
 * parallelism well below the loop's.
 *
 *   primes [N]      (default 200000)
 */
#include <stdio.h>
#include <stdlib.h>

static int is_prime(long n)
{
    if (n < 2)
        return 0;
    for (long d = 2; d * d <= n; d++)
        if (n % d == 0)
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 200000;
    char *flags = malloc((size_t)n + 1);
    if (!flags)
        return 1;
    for (long i = 0; i <= n; i++)
        flags[i] = 0;
#pragma omp parallel
    {
#pragma omp for schedule(dynamic, 1000)
        for (long i = 0; i <= n; i++)
            flags[i] = (char)is_prime(i);
    }
    long count = 0;
    for (long i = 0; i <= n; i++)
        count += flags[i];
    printf("%ld primes up to %ld\n", count, n);
    free(flags);
    return 0;
}
