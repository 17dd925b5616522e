/* hybrid.c - MPI + OpenMP: every rank runs a serial phase, then a
 * parallel loop; the last rank's serial phase is three times as long, so
 * its parallelism is the lowest and its span the longest.
 *
 *   OMPI_CC=clang-19 mpicc -fopenmp -g -O2 apps/hybrid.c -o hybrid
 *   mpirun -np 4 -x OMP_NUM_THREADS=2 build/bin/whatif run -o out -- ./hybrid
 *   build/bin/whatif analyze out      # the ranks side by side
 *
 * Each rank times what it runs with CLOCK_THREAD_CPUTIME_ID (MPI_Init and
 * MPI_Finalize included: whatif counts MPI calls as serial work of the
 * calling thread) and prints on stderr the work and span whatif should
 * find: "hybrid: rank R work W span S" (docs/apps.md,
 * tests/e2e_mpi.sh).
 */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile unsigned long sink;

static uint64_t cpu_now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Burns ms milliseconds of the calling thread's CPU time. */
static void burn(double ms)
{
    uint64_t t0 = cpu_now();
    while (cpu_now() - t0 < (uint64_t)(ms * 1e6))
        for (int i = 0; i < 500; i++)
            sink += (unsigned long)i * 2654435761u;
}

int main(int argc, char **argv)
{
    uint64_t t0 = cpu_now();
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int chunks = argc > 1 ? atoi(argv[1]) : 16;
    double ms = argc > 2 ? atof(argv[2]) : 10;
    burn(rank == size - 1 ? 60 : 20); /* the serial phase */
    uint64_t serial = cpu_now() - t0, work = 0, longest = 0;
#pragma omp parallel for schedule(dynamic, 1) reduction(+ : work) \
    reduction(max : longest)
    for (int i = 0; i < chunks; i++) {
        uint64_t c0 = cpu_now();
        burn(ms);
        uint64_t c = cpu_now() - c0;
        work += c;
        if (c > longest)
            longest = c;
    }
    uint64_t t1 = cpu_now();
    double local = (double)work, total = 0;
    MPI_Reduce(&local, &total, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Finalize();
    serial += cpu_now() - t1;
    fprintf(stderr, "hybrid: rank %d work %llu span %llu\n", rank,
            (unsigned long long)(serial + work),
            (unsigned long long)(serial + longest));
    if (rank == 0)
        printf("hybrid: %d ranks, %.0f ns of parallel work in all\n", size,
               total);
    return 0;
}
