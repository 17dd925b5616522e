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
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "burn.h"
#include "whatif.h"

static void unit(double n)
{
    burn_ms(n * 10.0);
}

static void loop8(void)
{
#pragma omp parallel for schedule(dynamic, 1)
    for (int i = 0; i < 8; i++)
        unit(1);
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "serial";
    if (!strcmp(c, "unbalanced")) {
        __WHATIF_END__;
        c = "serial";
    }
    if (!strcmp(c, "serial")) {
        __WHATIF_BEGIN__;
        unit(4);
        __WHATIF_END__;
        loop8();
    } else if (!strcmp(c, "nested")) {
        __WHATIF_BEGIN__;
        unit(2);
        __WHATIF_BEGIN__;
        unit(2);
        __WHATIF_END__;
        __WHATIF_END__;
        loop8();
    } else if (!strcmp(c, "own")) {
        __WHATIF_BEGIN_FACTOR__(4);
        unit(4);
        __WHATIF_END__;
        loop8();
    } else if (!strcmp(c, "loop")) {
        unit(1);
        __WHATIF_BEGIN__;
        loop8();
        __WHATIF_END__;
    } else {
        fprintf(stderr, "whatif_calib: unknown case %s\n", c);
        return 2;
    }
    unit(1);
    printf("ok %s\n", c);
    return 0;
}
