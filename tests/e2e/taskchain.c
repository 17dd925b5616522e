/* taskchain.c - a chain of DEPTH nested tasks, each creating the next and
 * waiting for it, for tests/e2e_grain_graph.sh: every task lies on the
 * critical path, so the burdened span is the span plus DEPTH task
 * burdens, and the grains form one chain of depths 1 to DEPTH.
 *
 *   taskchain [DEPTH]   (default 200)
 */
#include <stdio.h>
#include <stdlib.h>

#include "burn.h"

static void chain(int d)
{
    burn_ms(0.05);
    if (d == 0)
        return;
#pragma omp task
    chain(d - 1);
#pragma omp taskwait
}

int main(int argc, char **argv)
{
    int depth = argc > 1 ? atoi(argv[1]) : 200;
#pragma omp parallel
#pragma omp single
    chain(depth);
    printf("chain of %d\n", depth);
    return 0;
}
