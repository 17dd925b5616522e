/* fib.c - recursive Fibonacci with one task per call above a cutoff.
 *
 *   fib [N] [CUTOFF]      (default 32 20)
 *
 * Expected profile: the task tree is balanced enough that the program's
 * parallelism grows like fib(N) / fib(CUTOFF)-ish, limited by the serial
 * leaves (calls below the cutoff run serially inside one task) and the
 * taskwait chain down the deepest branch.  The task row has one outermost
 * instance (the recursion is counted once).  With N 30 and CUTOFF 2 it
 * creates about 1.6 million tasks: the on-the-fly profile keeps only the
 * live part of the graph (run.json: peak_live_nodes).
 */
#include <stdio.h>
#include <stdlib.h>

static long fib_serial(int n)
{
    return n < 2 ? n : fib_serial(n - 1) + fib_serial(n - 2);
}

static long fib(int n, int cutoff)
{
    if (n < cutoff)
        return fib_serial(n);
    long a, b;
#pragma omp task shared(a)
    a = fib(n - 1, cutoff);
#pragma omp task shared(b)
    b = fib(n - 2, cutoff);
#pragma omp taskwait
    return a + b;
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 32;
    int cutoff = argc > 2 ? atoi(argv[2]) : 20;
    long r = 0;
#pragma omp parallel
#pragma omp single
    r = fib(n, cutoff);
    printf("fib(%d) = %ld\n", n, r);
    return 0;
}
