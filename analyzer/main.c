/* main.c - the whatif command: dispatches to a subcommand. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *f)
{
    fputs("usage: whatif COMMAND [ARGS]\n"
          "\n"
          "A parallelism profiler with what-if analyses for OpenMP programs.\n"
          "\n"
          "commands:\n"
          "  run [OPTIONS] -- PROGRAM [ARGS...]\n"
          "                 profile PROGRAM (built with -fopenmp -g) into\n"
          "                 DIR (default whatif-out): profile.csv, run.json,\n"
          "                 profile.db, report.html, ...\n"
          "  analyze [OPTIONS] DIR\n"
          "                 the profile of an offline trace again, with any\n"
          "                 what-if scenarios (--speedup, --opportunities)\n"
          "  report [-o FILE] DIR\n"
          "                 the profile as one self-contained web page\n"
          "  diff A B       two runs side by side (before and after a\n"
          "                 change), with the what-if prediction checked\n"
          "  grains DIR     every task and chunk of an offline run as a grain:\n"
          "                 grains.csv, the grain graph (GraphML, DOT)\n"
          "  dump TRACE_DIR print a trace's records as text\n"
          "  version        print the version\n"
          "  help           print this text\n"
          "\n"
          "whatif COMMAND --help tells more of each.\n",
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
    if (!strcmp(cmd, "diff"))
        return cmd_diff(argc - 1, argv + 1);
    if (!strcmp(cmd, "report"))
        return cmd_report(argc - 1, argv + 1);
    if (!strcmp(cmd, "grains"))
        return cmd_grains(argc - 1, argv + 1);
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
