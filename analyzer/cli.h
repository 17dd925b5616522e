/* cli.h - the subcommands of the whatif command-line tool.
 *
 * Each returns the process exit status: 0 on success, 1 when the work
 * failed (a message was printed to stderr), 2 on a usage error.
 */
#ifndef WHATIF_CLI_H
#define WHATIF_CLI_H

int cmd_analyze(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_grains(int argc, char **argv);

typedef struct analyze_opts {
    const char *factors;  /* "2,4,inf"; NULL: the run's or the default */
    const char **specs;   /* --speedup locations */
    size_t nspecs;
    int opportunities;    /* write opportunities.csv */
    int partial;          /* a trace cut short: profile what was recorded */
    int silent_notes;     /* the notes were said already (--mode both) */
    unsigned jobs;        /* threads that replay the trace (0: one per
                           * stream, up to the CPUs; replay_hooks.threads) */
} analyze_opts;

/* Creates dir if needed and locks it against a second writer (a whatif
 * run or analyze writing there now).  Returns the lock's descriptor, to
 * close when done, or -1 after one line on stderr starting with who. */
int outdir_lock(const char *dir, const char *who);

/* Removes what an earlier run or analysis wrote into dir (its results,
 * never a trace), so that none of it is shown as the new one's. */
void outdir_clear_results(const char *dir);

/* Replays the trace in dir and writes the profile, the what-if scenarios
 * and the opportunities into outdir (notes and errors on stderr; the
 * caller prints the summary).  ao may be NULL (defaults).  Returns an exit
 * status. */
int analyze_trace(const char *dir, const char *outdir,
                  const analyze_opts *ao);

#endif
