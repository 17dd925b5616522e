/* main.c - the whatif command: dispatches to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
    fputs("usage: whatif COMMAND [ARGS]\n"
          "\n"
          "commands:\n"
          "  run [-o DIR] [--metric M] [--no-analyze] -- PROGRAM [ARGS...]\n"
          "                 profile PROGRAM (built with -fopenmp -g) and\n"
          "                 write DIR/profile.csv, run.json, profile.db\n"
          "                 (DIR defaults to whatif-out)\n"
          "  analyze [-o OUTDIR] [-q] [--partial] TRACE_DIR\n"
          "                 compute the parallelism profile of an offline\n"
          "                 trace: OUTDIR/profile.csv, run.json, profile.db\n"
          "  report [-o FILE] DIR\n"
          "                 write DIR/report.html: the profile as one\n"
          "                 self-contained web page\n"
          "  dump TRACE_DIR print a trace's records as text\n"
          "  version        print the version\n"
          "  help           print this text\n",
          f);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *cmd = argv[1];
    if (!strcmp(cmd, "analyze"))
        return cmd_analyze(argc - 1, argv + 1);
    if (!strcmp(cmd, "run"))
        return cmd_run(argc - 1, argv + 1);
    if (!strcmp(cmd, "report"))
        return cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "dump"))
        return cmd_dump(argc - 1, argv + 1);
    if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
        printf("whatif %s\n", WHATIF_VERSION);
        return 0;
    }
    if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
        usage(stdout);
        return 0;
    }
    fprintf(stderr, "whatif: unknown command '%s' (try 'whatif help')\n", cmd);
    return 2;
}
