/* cli.h - the subcommands of the whatif command-line tool.
 *
 * Each returns the process exit status: 0 on success, 1 when the work
 * failed (a message was printed to stderr), 2 on a usage error.
 */
#ifndef WHATIF_CLI_H
#define WHATIF_CLI_H

int cmd_analyze(int argc, char **argv);

#endif
