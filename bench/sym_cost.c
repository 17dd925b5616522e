/* sym_cost.c - how long resolving return addresses to file:line takes.
 *
 *   sym_cost MODULE OFFSETS_FILE
 *
 * Resolves every hex offset of OFFSETS_FILE (one per line, as
 * "module+0xOFF" records carry them) in MODULE with analyzer/symbols.c,
 * the way the profiler does at first sight of a construct, and prints the
 * time of the first lookup (it opens the module and indexes its units),
 * the total, and how many resolved.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "symbols.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4) {
        fprintf(stderr, "usage: sym_cost MODULE OFFSETS_FILE [--function]\n");
        return 2;
    }
    int with_func = argc == 4;
    FILE *f = fopen(argv[2], "r");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    uint64_t off;
    size_t n = 0, ok = 0;
    double t0 = now(), first = 0;
    sym_table *t = sym_new();
    char where[4096], func[256];
    while (fscanf(f, "%" SCNx64, &off) == 1) {
        /* the profiler asks for the line only (the function name, for
         * reports, costs a symbol table search more) */
        if (sym_lookup(t, argv[1], off - 1, where, sizeof(where),
                       with_func ? func : NULL, sizeof(func)) == 0)
            ok++;
        if (n++ == 0)
            first = now() - t0;
    }
    double total = now() - t0;
    sym_free(t);
    fclose(f);
    printf("locations %zu resolved %zu first %.1f ms total %.1f ms "
           "(%.1f us each after the first)\n",
           n, ok, first * 1e3, total * 1e3,
           n > 1 ? (total - first) * 1e6 / (double)(n - 1) : 0.0);
    return ok == n ? 0 : 1;
}
