/* whatif_calib.c - annotated programs whose what-if profiles are known.
 *
 *   whatif_calib CASE     units of C = 10 ms of thread CPU time
 *
 *   serial   region{4 units}; dynamic,1 loop of 8 x 1 unit; 1 unit
 *            speed-up f of the region: work 13, span 4/f + 1 + 1
 *   nested   outer{2 units; inner{2 units}}; the same loop; 1 unit
 *            all / outer by f: span 4/f + 2; inner by f: 2 + 2/f + 2
 *   own      region with own factor 4 {4 units}; loop; 1 unit
 *            expected: work 13, span 4/4 + 2
 *   loop     1 unit; region{dynamic,1 loop of 8 x 1 unit}; 1 unit
 *            every W-node inside counts, chunks too: span 2 + 1/f
 *   unbalanced  an END without BEGIN (one warning), then "serial"
 *
 * The units are timed (selftime.h), and the test computes each expected
 * value with the units' measured times in place of the counts above.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "selftime.h"
#include "whatif.h"

/* What the program measured of its own units (thread CPU time, ns): a
 * span is a maximum and picks up the VM's noise, so the test computes
 * each scenario's expected span from these rather than from unit counts
 * (printed on stderr as "whatif-calib KEY=NS ..."). */
static _Atomic unsigned long long loop_work, loop_max;

static unsigned long long unit(double n)
{
    return st_burn(n * 10.0);
}

static void loop8(void)
{
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < 8; i++) {
        unsigned long long ns = unit(1);
        loop_work += ns;
        unsigned long long seen = loop_max;
        while (ns > seen &&
               !atomic_compare_exchange_weak(&loop_max, &seen, ns))
            ;
    }
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "serial";
    /* outer: a region's units (nested: the outer region's own); inner:
     * the inner region's; first: a unit before everything ("loop") */
    unsigned long long outer = 0, inner = 0, first = 0;
    if (!strcmp(c, "unbalanced")) {
        __WHATIF_END__;
        c = "serial";
    }
    if (!strcmp(c, "serial")) {
        __WHATIF_BEGIN__;
        outer = unit(4);
        __WHATIF_END__;
        loop8();
    } else if (!strcmp(c, "nested")) {
        __WHATIF_BEGIN__;
        outer = unit(2);
        __WHATIF_BEGIN__;
        inner = unit(2);
        __WHATIF_END__;
        __WHATIF_END__;
        loop8();
    } else if (!strcmp(c, "own")) {
        __WHATIF_BEGIN_FACTOR__(4);
        outer = unit(4);
        __WHATIF_END__;
        loop8();
    } else if (!strcmp(c, "loop")) {
        first = unit(1);
        __WHATIF_BEGIN__;
        loop8();
        __WHATIF_END__;
    } else {
        fprintf(stderr, "whatif_calib: unknown case %s\n", c);
        return 2;
    }
    unsigned long long last = unit(1);
    fprintf(stderr,
            "whatif-calib outer=%llu inner=%llu first=%llu last=%llu "
            "loop_work=%llu loop_max=%llu\n",
            outer, inner, first, last, (unsigned long long)loop_work,
            (unsigned long long)loop_max);
    printf("ok %s\n", c);
    return 0;
}
