/* pause.c - the program pauses the runtime hard between two regions
 * (omp_pause_resource_all(omp_pause_hard)), which ends the runtime's
 * tools interface: the profile must say it stops there. */
#include <omp.h>
#include <stdio.h>

int main(void)
{
    int n = 0;
#pragma omp parallel reduction(+ : n)
    n += 1;
    int r = omp_pause_resource_all(omp_pause_hard);
#pragma omp parallel reduction(+ : n)
    n += 1;
    printf("pause %d %d\n", r, n > 1);
    return 0;
}
