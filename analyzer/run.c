/* run.c - `whatif run`: profile an unmodified OpenMP program.
 *
 * Validates the options before the program starts (a bad option never
 * leaves a half-profiled run), attaches the shared tool through
 * OMP_TOOL_LIBRARIES, runs the program with its own stdin, stdout and
 * stderr, then analyzes the trace.  The exit status is the program's when
 * it failed, otherwise the analysis's.
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "counter.h"
#include "scenario.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: whatif run [-o DIR] [--mode online|offline|both] "
               "[--metric M] [--factors LIST] [--no-analyze] [-q] -- "
               "PROGRAM [ARGS...]\n"
               "  metrics: %s\n  factors: what-if speed-ups, default %s\n",
               counter_names(), SCEN_DEFAULT_FACTORS);
}

/* Prints the head of a profile.csv written by the profiled program.
 * Returns 0, or 1 when there is none (the program did not finish its
 * OpenMP runtime, or the profiler said why on stderr). */
static int show_profile_csv(const char *path, int quiet)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "whatif run: no profile written to %s (the "
                        "profiler said why above, or the program never "
                        "started the OpenMP runtime)\n", path);
        return 1;
    }
    char line[4096];
    for (int i = 0; !quiet && i < 14 && fgets(line, sizeof(line), f); i++)
        fputs(line, stdout);
    if (!quiet)
        printf("(profile: %s)\n", path);
    fclose(f);
    return 0;
}

/* The shared tool next to this executable: BIN/../lib/libwhatif.so. */
static int find_tool(char *buf, size_t len)
{
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0)
        return -1;
    exe[n] = 0;
    char *dir = dirname(exe);
    snprintf(buf, len, "%s/../lib/libwhatif.so", dir);
    if (access(buf, R_OK) == 0)
        return 0;
    snprintf(buf, len, "%s/libwhatif.so", dir);
    return access(buf, R_OK);
}

int cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"mode", required_argument, NULL, 'm'},
        {"metric", required_argument, NULL, 'M'},
        {"factors", required_argument, NULL, 'F'},
        {"no-analyze", no_argument, NULL, 'n'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out = "whatif-out", *metric_name = NULL, *mode = "online";
    const char *factors = NULL;
    int analyze = 1, quiet = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+o:qh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'm':
            if (strcmp(optarg, "online") && strcmp(optarg, "offline") &&
                strcmp(optarg, "both")) {
                fprintf(stderr, "whatif run: --mode %s: use online, offline "
                                "or both\n", optarg);
                return 2;
            }
            mode = optarg;
            break;
        case 'M': metric_name = optarg; break;
        case 'F': factors = optarg; break;
        case 'n': analyze = 0; break;
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default: usage(stderr); return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "whatif run: no program given\n");
        usage(stderr);
        return 2;
    }
    char err[512], tool[PATH_MAX + 32];
    counter_metric m;
    if (factors) {
        double *fv;
        size_t nf;
        if (scen_parse_factors(factors, &fv, &nf, err, sizeof(err))) {
            fprintf(stderr, "whatif run: --factors: %s\n", err);
            return 2;
        }
        free(fv);
    }
    if (counter_choose(metric_name, &m, err, sizeof(err))) {
        fprintf(stderr, "whatif run: --metric: %s\n", err);
        return 2;
    }
    if (find_tool(tool, sizeof(tool))) {
        fprintf(stderr, "whatif run: cannot find libwhatif.so next to the "
                        "whatif binary (expected ../lib/libwhatif.so): "
                        "reinstall or rebuild with ./setup.sh\n");
        return 1;
    }
    if (mkdir(out, 0777) && errno != EEXIST) {
        fprintf(stderr, "whatif run: %s: cannot create: %s\n", out,
                strerror(errno));
        return 1;
    }
    char trace_dir[PATH_MAX + 16];
    snprintf(trace_dir, sizeof(trace_dir), "%s/trace", out);

    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "whatif run: fork: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        /* Preloaded, the tool starts before main, so the program's work
         * is counted from there and the loading of libraries is not. */
        const char *pre = getenv("LD_PRELOAD");
        char preload[2 * PATH_MAX + 64];
        snprintf(preload, sizeof(preload), "%s%s%s", tool,
                 pre && *pre ? ":" : "", pre && *pre ? pre : "");
        setenv("LD_PRELOAD", preload, 1);
        setenv("WHATIF_PRELOAD", "1", 1);
        unsetenv("OMP_TOOL_LIBRARIES");
        setenv("OMP_TOOL", "enabled", 1);
        setenv("WHATIF_OUT", out, 1);
        setenv("WHATIF_MODE", mode, 1);
        if (metric_name)
            setenv("WHATIF_METRIC", metric_name, 1);
        else
            unsetenv("WHATIF_METRIC");
        if (factors)
            setenv("WHATIF_FACTORS", factors, 1);
        execvp(argv[optind], argv + optind);
        fprintf(stderr, "whatif run: %s: %s\n", argv[optind],
                strerror(errno));
        _exit(127);
    }
    /* The program owns the terminal's signals; we wait for it. */
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);
    int wst;
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
        ;
    int prog_status = WIFEXITED(wst) ? WEXITSTATUS(wst)
                      : WIFSIGNALED(wst) ? 128 + WTERMSIG(wst)
                                         : 1;
    if (WIFSIGNALED(wst))
        fprintf(stderr, "whatif run: %s was killed by signal %d\n",
                argv[optind], WTERMSIG(wst));
    if (prog_status == 127 && WIFEXITED(wst))
        return prog_status;
    int st = 0;
    if (!strcmp(mode, "online")) {
        /* The program wrote its own profile; show it. */
        char csv[PATH_MAX + 32];
        snprintf(csv, sizeof(csv), "%s/profile.csv", out);
        st = show_profile_csv(csv, quiet);
    } else if (analyze) {
        analyze_opts ao = {.quiet = quiet, .factors = factors,
                           .opportunities = 1};
        st = analyze_trace(trace_dir, out, &ao);
    }
    return prog_status ? prog_status : st;
}
