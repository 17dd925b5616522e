/* mpirank.h - the MPI rank of this process, from its launcher's
 * environment (Open MPI, MPICH/Hydra, PMIx, Slurm's srun).
 *
 * Used by `whatif run` (each rank profiles into its own directory) and by
 * the tool (run.json says which rank it profiled).  The launchers set
 * these before the process starts; no MPI library is needed.
 */
#ifndef WHATIF_MPIRANK_H
#define WHATIF_MPIRANK_H

#include <stdlib.h>

/* This process's rank, or -1 when no launcher started it; *size the
 * number of ranks when the launcher says (else 0). */
static inline long mpirank_get(long *size)
{
    /* the MPI launchers' own first: inside a Slurm job, SLURM_PROCID is
     * the task srun started, which mpirun's ranks all inherit */
    static const char *const ranks[][2] = {
        {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
        {"PMI_RANK", "PMI_SIZE"},
        {"PMIX_RANK", NULL},
        {"SLURM_PROCID", "SLURM_NTASKS"},
    };
    *size = 0;
    for (size_t i = 0; i < sizeof(ranks) / sizeof(ranks[0]); i++) {
        const char *v = getenv(ranks[i][0]);
        char *end;
        if (!v || !*v)
            continue;
        long r = strtol(v, &end, 10);
        if (*end || r < 0 || r > 9999999)
            continue;
        const char *s = ranks[i][1] ? getenv(ranks[i][1]) : NULL;
        long n = s ? strtol(s, &end, 10) : 0;
        *size = s && !*end && n > r ? n : 0;
        return r;
    }
    return -1;
}

#endif
