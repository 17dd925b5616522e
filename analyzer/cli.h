/* cli.h - the subcommands of the whatif command-line tool.
 *
 * Each returns the process exit status: 0 on success, 1 when the work
 * failed (a message was printed to stderr), 2 on a usage error.
 */
#ifndef WHATIF_CLI_H
#define WHATIF_CLI_H

int cmd_analyze(int argc, char **argv);
int cmd_run(int argc, char **argv);

/* Replays the trace in dir and writes the profile into outdir; prints the
 * head of the profile unless quiet.  Returns an exit status. */
int analyze_trace(const char *dir, const char *outdir, int quiet);

#endif
