/* sym_cost.c - how long resolving return addresses to file:line takes.
 *
 *   sym_cost MODULE OFFSETS_FILE [--function] [--libdw]
 *
 * Resolves every hex offset of OFFSETS_FILE (one per line, as
 * "module+0xOFF" records carry them) in MODULE with analyzer/symbols.c,
 * the way the profiler does at first sight of a construct, and prints the
 * time of the first lookup (it opens the module and indexes its units),
 * the total, and how many resolved.  --function asks for function names
 * too; --libdw decodes line tables with libdw instead of linetab.c.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    int with_func = 0, libdw = 0;
    for (int i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--function"))
            with_func = 1;
        else if (!strcmp(argv[i], "--libdw"))
            libdw = 1;
        else
            argc = 0;
    }
    if (argc < 3) {
        fprintf(stderr, "usage: sym_cost MODULE OFFSETS_FILE [--function] "
                        "[--libdw]\n");
        return 2;
    }
    FILE *f = fopen(argv[2], "r");
    if (!f) {
        perror(argv[2]);
        return 1;
    }
    uint64_t off;
    size_t n = 0, ok = 0;
    double t0 = now(), first = 0;
    sym_table *t = sym_new();
    if (t && libdw)
        sym_use_libdw_lines(t);
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
    printf("%s: locations %zu resolved %zu first %.1f ms total %.1f ms "
           "(%.1f us each after the first)\n",
           libdw ? "libdw" : "linetab", n, ok, first * 1e3, total * 1e3,
           n > 1 ? (total - first) * 1e6 / (double)(n - 1) : 0.0);
    return ok == n ? 0 : 1;
}
