/* run.c - `whatif run`: profile an unmodified OpenMP program.
 *
 * Everything that can fail is checked before the program starts: the
 * options, the output directory (made absolute, created with its parents,
 * locked against a second run into it, cleared of an earlier run's
 * results) and the tool.  The program then runs with its own stdin, stdout
 * and stderr, with the tool preloaded for this process only (WHATIF_PID:
 * its children are left alone unless --children profile); a program built
 * against GNU libgomp runs on libomp, which has the tools interface.
 * SIGTERM and SIGHUP are passed on to the program, and whatif waits for
 * it.  Afterwards the trace is analyzed (partially, when the program did
 * not end normally) and a summary goes to stderr, never into the program's
 * stdout.  The exit status is the program's when it failed, else 0 with a
 * profile and 1 without one.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "html.h"
#include "mpirank.h"
#include "repeat.h"
#include "timing.h"
#include "summary.h"
#include "counter.h"
#include "scenario.h"


static void usage(FILE *f)
{
    fprintf(f,
        "usage: whatif run [OPTIONS] -- PROGRAM [ARGS...]\n"
        "\n"
        "Runs PROGRAM (built with -fopenmp -g) under the profiler and writes\n"
        "its parallelism profile: DIR/profile.csv, run.json, profile.db,\n"
        "critical_lines.csv, serial_fragments.csv, whatif.csv (with what-if\n"
        "regions) and report.html; a summary goes to stderr.  Exits with the\n"
        "program's status when it failed, else 0 with a profile, 1 without.\n"
        "\n"
        "  -o DIR             output directory (default whatif-out)\n"
        "  --mode MODE        online (default: computed as the program runs),\n"
        "                     offline (a trace in DIR/trace, analyzed after),\n"
        "                     both (DIR/online/ and DIR/, identical)\n"
        "  --metric M         what work is: %s;\n"
        "                     default instructions where the PMU is\n"
        "                     reachable and a read costs under 1 us,\n"
        "                     else cputime (run.json says why)\n"
        "  --factors LIST     what-if speed-ups (default %s)\n"
        "  --opportunities    offline: also rank what speeding up each\n"
        "                     leading location would buy (opportunities.csv)\n"
        "  --sample-rate HZ   samples per second of each thread's CPU time for\n"
        "                     critical_lines.csv (default 1000)\n"
        "  --no-sample        no sampling\n"
        "  --context N        name constructs by their call path too, N call\n"
        "                     sites (1-16; default 0: file:line only)\n"
        "  --repeat N         N runs: the one of median span is the profile,\n"
        "                     every row's median and range in repeat.csv\n"
        "  --threads LIST     first time the program unprofiled at each\n"
        "                     thread count (1 added) for the report's measured\n"
        "                     speedups (timings.csv); profile at the largest\n"
        "  --children WHAT    ignore (default) or profile child processes\n"
        "                     (each exec'ed child into DIR/child-PID/)\n"
        "  --no-report        do not write report.html\n"
        "  --no-analyze       offline: keep the trace, analyze it later\n"
        "  -q, --quiet        no summary\n"
        "  -h, --help         this text\n"
        "\n"
        "Under an MPI launcher (mpirun -np N whatif run -o DIR -- PROGRAM;\n"
        "Open MPI, MPICH, srun) each rank writes DIR/rank-NNNNN/;\n"
        "whatif analyze DIR then sets the ranks side by side.\n"
        "\n"
        "Docs: README.md, docs/output.md (every file and column).\n",
        counter_names(), SCEN_DEFAULT_FACTORS);
}

/* ---- The output directory ---- */

/* The files a run writes into its directory (and into online/ and
 * child-PID/): removed before a run, so that no earlier result is ever
 * shown as this run's. */
static const char *const result_files[] = {
    "profile.csv", "run.json",      "profile.db", "whatif.csv",
    "opportunities.csv", "report.html", "critical_lines.csv",
    "serial_fragments.csv", "repeat.csv", "timings.csv", "ranks.csv",
    "rank_locations.csv", "diff.csv", "diff.html", ".whatif-started",
    ".whatif-child-started", ".whatif-tool-disabled",
};

void outdir_clear_results(const char *dir)
{
    char p[PATH_MAX + 64];
    for (size_t i = 0; i < sizeof(result_files) / sizeof(*result_files);
         i++) {
        snprintf(p, sizeof(p), "%s/%s", dir, result_files[i]);
        unlink(p);
    }
}

static void clear_results(const char *dir)
{
    char p[PATH_MAX + 64];
    outdir_clear_results(dir);
    snprintf(p, sizeof(p), "%s/trace", dir);
    DIR *d = opendir(p);
    if (!d)
        return;
    struct dirent *de;
    while ((de = readdir(d))) {
        size_t n = strlen(de->d_name);
        if (n > 11 && !strncmp(de->d_name, "thread-", 7) &&
            !strcmp(de->d_name + n - 4, ".wit")) {
            char f[2 * PATH_MAX];
            snprintf(f, sizeof(f), "%s/%s", p, de->d_name);
            unlink(f);
        }
    }
    closedir(d);
}

/* mkdir -p.  Returns 0, or -1 with errno set. */
static int make_dirs(const char *path)
{
    char p[PATH_MAX];
    if (snprintf(p, sizeof(p), "%s", path) >= (int)sizeof(p)) {
        errno = ENAMETOOLONG;
        return -1;
    }
    for (char *s = p + 1; *s; s++) {
        if (*s != '/')
            continue;
        *s = 0;
        if (mkdir(p, 0777) && errno != EEXIST)
            return -1;
        *s = '/';
    }
    if (mkdir(p, 0777) && errno != EEXIST)
        return -1;
    struct stat sb;
    if (stat(p, &sb))
        return -1;
    if (!S_ISDIR(sb.st_mode)) {
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

int outdir_lock(const char *dir, const char *who)
{
    char lock[PATH_MAX + 32];
    if (make_dirs(dir)) {
        fprintf(stderr, "%s: %s: cannot create the directory: %s\n", who,
                dir, strerror(errno));
        return -1;
    }
    snprintf(lock, sizeof(lock), "%s/.whatif.lock", dir);
    int fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        fprintf(stderr, "%s: %s: cannot write into the directory: %s\n",
                who, dir, strerror(errno));
        return -1;
    }
    if (flock(fd, LOCK_EX | LOCK_NB)) {
        fprintf(stderr, "%s: %s: another whatif run or analyze is writing "
                        "into this directory (or a program it started still "
                        "runs); wait for it or choose another -o\n", who,
                dir);
        close(fd);
        return -1;
    }
    return fd;
}

/* Removes a subdirectory that holds a run's results (what whatif wrote
 * there; anything else keeps it). */
static void remove_results_dir(const char *sub)
{
    clear_results(sub);
    char t[PATH_MAX + 320];
    snprintf(t, sizeof(t), "%s/trace", sub);
    rmdir(t);
    snprintf(t, sizeof(t), "%s/online", sub);
    clear_results(t);
    rmdir(t);
    snprintf(t, sizeof(t), "%s/.whatif.lock", sub);
    unlink(t);
    rmdir(sub);
}

/* A directory of ranks, as rank 0 finds it: results of an earlier run
 * there, and the directories of ranks at or above nranks (when known),
 * are removed. */
static void clear_ranks(const char *out, long nranks)
{
    clear_results(out);
    DIR *d = opendir(out);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char *end;
        if (strncmp(e->d_name, "rank-", 5))
            continue;
        long r = strtol(e->d_name + 5, &end, 10);
        if (*end || nranks <= 0 || r < nranks)
            continue;
        char p[PATH_MAX + 300];
        snprintf(p, sizeof(p), "%s/%s", out, e->d_name);
        remove_results_dir(p);
    }
    if (d)
        closedir(d);
}

/* Makes out absolute (the program may change directory), creates it and
 * locks it for this run.  Returns the lock's descriptor, or -1 after one
 * line on stderr. */
static int prepare_dir(const char *out, char *abs, size_t len)
{
    char cwd[PATH_MAX];
    if (out[0] == '/') {
        snprintf(abs, len, "%s", out);
    } else if (!getcwd(cwd, sizeof(cwd)) ||
               snprintf(abs, len, "%s/%s", cwd, out) >= (int)len) {
        fprintf(stderr, "whatif run: -o %s: path too long\n", out);
        return -1;
    }
    if (strlen(abs) > PATH_MAX - 64) {
        fprintf(stderr, "whatif run: -o %s: path too long (at most %d "
                        "characters)\n", out, PATH_MAX - 64);
        return -1;
    }
    if (make_dirs(abs)) {
        fprintf(stderr, "whatif run: -o %s: cannot create the directory: "
                        "%s\n", out, strerror(errno));
        return -1;
    }
    int fd = outdir_lock(abs, "whatif run");
    if (fd < 0)
        return -1;
    clear_results(abs);
    char sub[PATH_MAX + 300];
    snprintf(sub, sizeof(sub), "%s/online", abs);
    clear_results(sub);
    /* and an earlier run's children and repetitions */
    DIR *d = opendir(abs);
    struct dirent *de;
    while (d && (de = readdir(d))) {
        if (strncmp(de->d_name, "child-", 6) &&
            strncmp(de->d_name, "run-", 4))
            continue;
        snprintf(sub, sizeof(sub), "%s/%s", abs, de->d_name);
        remove_results_dir(sub);
    }
    if (d)
        closedir(d);
    return fd;
}

/* ---- The program ---- */

/* The file execvp would run for name. */
static int find_program(const char *name, char *path, size_t len)
{
    if (strchr(name, '/'))
        return snprintf(path, len, "%s", name) < (int)len &&
                       access(path, X_OK) == 0
                   ? 0
                   : -1;
    const char *env = getenv("PATH");
    char dirs[8192];
    snprintf(dirs, sizeof(dirs), "%s", env && *env ? env : "/usr/bin:/bin");
    for (char *save, *d = strtok_r(dirs, ":", &save); d;
         d = strtok_r(NULL, ":", &save)) {
        if (snprintf(path, len, "%s/%s", *d ? d : ".", name) < (int)len &&
            access(path, X_OK) == 0)
            return 0;
    }
    return -1;
}

/* 1 when the ELF file needs GNU libgomp (built with gcc -fopenmp). */
static int needs_libgomp(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
    if (fd < 0)
        return 0;
    elf_version(EV_CURRENT);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    Elf_Scn *scn = NULL;
    while (e && !found && (scn = elf_nextscn(e, scn))) {
        GElf_Shdr sh;
        if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNAMIC)
            continue;
        Elf_Data *data = elf_getdata(scn, NULL);
        for (size_t i = 0; data && i < sh.sh_size / sh.sh_entsize; i++) {
            GElf_Dyn dyn;
            if (!gelf_getdyn(data, (int)i, &dyn) || dyn.d_tag != DT_NEEDED)
                continue;
            const char *lib = elf_strptr(e, sh.sh_link, dyn.d_un.d_val);
            if (lib && !strncmp(lib, "libgomp.so", 10))
                found = 1;
        }
    }
    if (e)
        elf_end(e);
    close(fd);
    return found;
}

/* 1 when the ELF file is statically linked (no program interpreter):
 * LD_PRELOAD cannot put the tool into it. */
static int is_static_elf(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC), interp = 0, elf = 0;
    if (fd < 0)
        return 0;
    elf_version(EV_CURRENT);
    Elf *e = elf_begin(fd, ELF_C_READ, NULL);
    size_t n = 0;
    if (e && elf_kind(e) == ELF_K_ELF && elf_getphdrnum(e, &n) == 0) {
        elf = 1;
        for (size_t i = 0; i < n; i++) {
            GElf_Phdr ph;
            if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
                interp = 1;
        }
    }
    if (e)
        elf_end(e);
    close(fd);
    return elf && !interp;
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
    /* installed (the library directory as the install placed it, a
     * multiarch one under /usr), then the build tree's layout */
    snprintf(buf, len, "%s/%s/libwhatif.so", dir, WHATIF_TOOL_RELDIR);
    if (access(buf, R_OK) == 0)
        return 0;
    snprintf(buf, len, "%s/../lib/libwhatif.so", dir);
    if (access(buf, R_OK) == 0)
        return 0;
    snprintf(buf, len, "%s/libwhatif.so", dir);
    return access(buf, R_OK);
}

/* The LLVM OpenMP runtime to run a libgomp program on. */
static int find_libomp(char *buf, size_t len)
{
    static const char *const cand[] = {
        "/usr/lib/x86_64-linux-gnu/libomp.so.5",
        "/usr/lib/llvm-19/lib/libomp.so.5",
        "/usr/lib/aarch64-linux-gnu/libomp.so.5",
    };
    const char *env = getenv("WHATIF_LIBOMP");
    if (env && *env) {
        snprintf(buf, len, "%s", env);
        return access(buf, R_OK);
    }
    for (size_t i = 0; i < sizeof(cand) / sizeof(*cand); i++)
        if (access(cand[i], R_OK) == 0) {
            snprintf(buf, len, "%s", cand[i]);
            return 0;
        }
    return -1;
}

/* LD_PRELOAD splits its list at spaces and colons, and has no escape: a
 * library whose path holds one is reached through a symbolic link in a
 * private directory.  link_dir is made when needed (caller removes it). */
static int preloadable(const char *lib, char *out, size_t len,
                       char *link_dir, size_t dirlen)
{
    if (!strpbrk(lib, " :\t")) {
        snprintf(out, len, "%s", lib);
        return 0;
    }
    if (!link_dir[0]) {
        const char *tmp = getenv("TMPDIR");
        snprintf(link_dir, dirlen, "%s/whatif-XXXXXX",
                 tmp && *tmp && !strpbrk(tmp, " :\t") ? tmp : "/tmp");
        if (!mkdtemp(link_dir)) {
            link_dir[0] = 0;
            return -1;
        }
    }
    const char *base = strrchr(lib, '/');
    snprintf(out, len, "%s/%s", link_dir, base ? base + 1 : lib);
    return symlink(lib, out);
}

static volatile pid_t child_pid;

/* SIGTERM or SIGHUP sent to whatif: the program gets it, whatif waits. */
static void forward_signal(int sig)
{
    if (child_pid > 0)
        kill(child_pid, sig);
}

/* --children profile, offline: each child's trace gets its profile in
 * its own directory, child-PID. */
/* --opportunities: the offline analysis also ranks what-if speed-ups of
 * the leading locations (one more replay with a scenario per factor and
 * location: several times the profile's cost, so only when asked). */
static int want_opportunities;

static int exists(const char *dir, const char *name);

/* Each child's profile in child-PID/: offline, its trace analyzed first.
 * Returns the number of children with a profile. */
static int children_profiles(const char *dir, const char *factors,
                             int offline)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    struct dirent *de;
    int n = 0;
    while ((de = readdir(d))) {
        if (strncmp(de->d_name, "child-", 6))
            continue;
        char kid[PATH_MAX + 64], trace[PATH_MAX + 80];
        snprintf(kid, sizeof(kid), "%s/%s", dir, de->d_name);
        snprintf(trace, sizeof(trace), "%s/trace", kid);
        analyze_opts ao = {.factors = factors,
                           .opportunities = want_opportunities,
                           .partial = 1};
        if (offline && access(trace, F_OK) == 0)
            analyze_trace(trace, kid, &ao);
        if (exists(kid, "profile.csv")) {
            fprintf(stderr, "whatif: a child's profile in %s/\n", kid);
            n++;
        }
    }
    closedir(d);
    return n;
}

/* The markers the tool leaves for this command, once read. */
static void remove_markers(const char *dir)
{
    static const char *const marks[] = {".whatif-started",
                                        ".whatif-ended",
                                        ".whatif-child-started",
                                        ".whatif-tool-disabled"};
    char p[PATH_MAX + 64];
    for (size_t i = 0; i < sizeof(marks) / sizeof(*marks); i++) {
        snprintf(p, sizeof(p), "%s/%s", dir, marks[i]);
        unlink(p);
    }
}

static int exists(const char *dir, const char *name)
{
    char p[PATH_MAX + 64];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

static int regular_file(const char *dir, const char *name)
{
    char p[PATH_MAX + 64];
    struct stat sb;
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

/* ---- One run ---- */

typedef struct run_cfg {
    const char *prog, *prog_path;
    char *const *argv;             /* the program's, argv[0] included */
    const char *pre_tool, *pre_omp; /* what LD_PRELOAD names */
    int gomp;                      /* run on libomp in libgomp's place */
    const char *children, *mode, *metric_name, *factors, *sample_hz;
    const char *context;           /* --context N, or NULL */
    const timing_set *timings;     /* --threads: the timed runs, or NULL */
    int report;                    /* write report.html */
    int analyze, quiet;
    int lock;                      /* the output directory's lock */
} run_cfg;

/* Runs the program once with the tool writing into dir, then analyzes
 * what it left (no summary: the caller prints it).  *have says whether a
 * whole profile is in dir.  Returns the exit status of the run: the
 * program's when it failed, else 0 with a profile and 1 without. */
static int profile_once(const run_cfg *c, const char *dir, int *have_out)
{
    const char *prog = c->prog, *mode = c->mode, *factors = c->factors;
    int analyze = c->analyze, quiet = c->quiet;
    *have_out = 0;
    char trace_dir[PATH_MAX + 16];
    snprintf(trace_dir, sizeof(trace_dir), "%s/trace", dir);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "whatif run: fork: %s\n", strerror(errno));
        return 1;
    }
    if (pid == 0) {
        /* The program holds the directory's lock too, out of its way on a
         * high descriptor: killed, whatif run leaves a program still
         * writing there, and no new run may start into it meanwhile. */
        int held = fcntl(c->lock, F_DUPFD, 512);
        if (held >= 0)
            close(c->lock);
        /* Preloaded, the tool starts before main, so the program's work
         * is counted from there and the loading of libraries is not. */
        signal(SIGINT, SIG_DFL);
        signal(SIGQUIT, SIG_DFL);
        signal(SIGTERM, SIG_DFL);
        signal(SIGHUP, SIG_DFL);
        const char *pre = getenv("LD_PRELOAD");
        char preload[4 * PATH_MAX];
        snprintf(preload, sizeof(preload), "%s%s%s%s%s", c->pre_tool,
                 c->gomp ? ":" : "", c->gomp ? c->pre_omp : "",
                 pre && *pre ? ":" : "", pre && *pre ? pre : "");
        char me[32];
        snprintf(me, sizeof(me), "%ld", (long)getpid());
        setenv("LD_PRELOAD", preload, 1);
        setenv("WHATIF_PRELOAD", "1", 1);
        setenv("WHATIF_PID", me, 1);
        setenv("WHATIF_CHILDREN", c->children, 1);
        if (c->gomp)
            setenv("WHATIF_GOMP", "1", 1);
        unsetenv("OMP_TOOL_LIBRARIES");
        setenv("OMP_TOOL", "enabled", 1);
        setenv("WHATIF_OUT", dir, 1);
        setenv("WHATIF_MODE", mode, 1);
        if (c->metric_name)
            setenv("WHATIF_METRIC", c->metric_name, 1);
        else
            unsetenv("WHATIF_METRIC");
        if (factors)
            setenv("WHATIF_FACTORS", factors, 1);
        else
            unsetenv("WHATIF_FACTORS");
        if (c->sample_hz)
            setenv("WHATIF_SAMPLE_HZ", c->sample_hz, 1);
        else
            unsetenv("WHATIF_SAMPLE_HZ");
        if (c->context)
            setenv("WHATIF_CONTEXT", c->context, 1);
        else
            unsetenv("WHATIF_CONTEXT");
        execv(c->prog_path, c->argv);
        fprintf(stderr, "whatif run: %s: %s\n", prog, strerror(errno));
        _exit(127);
    }
    child_pid = pid;
    int wst;
    while (waitpid(pid, &wst, 0) < 0 && errno == EINTR)
        ;
    child_pid = 0;
    int signaled = WIFSIGNALED(wst);
    int prog_status = WIFEXITED(wst) ? WEXITSTATUS(wst)
                      : signaled     ? 128 + WTERMSIG(wst)
                                     : 1;
    if (signaled)
        fprintf(stderr, "whatif run: %s was killed by signal %d (%s)\n",
                prog, WTERMSIG(wst), strsignal(WTERMSIG(wst)));
    if (prog_status == 127 && WIFEXITED(wst))
        return prog_status;

    int follow = !strcmp(c->children, "profile");
    if (!exists(dir, ".whatif-started")) {
        int kids = follow ? children_profiles(dir, factors,
                                              strcmp(mode, "online") != 0)
                          : 0;
        if (exists(dir, ".whatif-tool-disabled"))
            fprintf(stderr, "whatif run: %s turned the OpenMP tools "
                            "interface off itself (it sets OMP_TOOL=disabled): "
                            "whatif cannot see its constructs; remove that "
                            "setting to profile it\n", prog);
        else if (kids)
            fprintf(stderr, "whatif run: %s ran no OpenMP construct itself; "
                            "the profiles of the processes it started are "
                            "above\n", prog);
        else if (exists(dir, ".whatif-child-started"))
            fprintf(stderr, "whatif run: %s ran no OpenMP construct itself, "
                            "but a process it started did: profile such "
                            "processes with --children profile\n", prog);
        else if (is_static_elf(c->prog_path))
            fprintf(stderr, "whatif run: %s is statically linked, so whatif "
                            "cannot load its tool into it: build it without "
                            "-static, or link the tool in (clang -fopenmp "
                            "with libwhatif.a, README \"Usage\")\n", prog);
        else
            fprintf(stderr, "whatif run: %s ran no OpenMP construct (the "
                            "OpenMP runtime never started): there is nothing "
                            "to profile%s\n", prog,
                    c->gomp ? "" : "; if it uses OpenMP, was it built with "
                                "-fopenmp?");
        remove_markers(dir);
        return prog_status ? prog_status : kids ? 0 : 1;
    }
    int have = 0;
    /* The tool says it saw the end (its exit handler or the runtime's
     * shutdown); a program that left without either (a raw exit_group
     * system call) took the on-the-fly profile and the last records with
     * it. */
    int unseen_end = !signaled && !exists(dir, ".whatif-ended");
    if (unseen_end)
        fprintf(stderr, "whatif run: %s ended without running its exit "
                        "handlers (a raw exit_group system call?): the "
                        "profile lacks its end%s\n", prog,
                strcmp(mode, "online") ? ""
                                       : "; on the fly it is written at "
                                         "exit, so there is none (--mode "
                                         "offline keeps what was recorded)");
    if (strcmp(mode, "online")) { /* offline or both: the trace */
        if (analyze) {
            /* The run is ours: a trace cut short (a crash, a kill, _exit)
             * still gives the profile of what was recorded, marked
             * incomplete. */
            /* both: the on-the-fly profile has said the notes */
            analyze_opts ao = {
                .factors = factors,
                .opportunities = want_opportunities, .partial = 1,
                .silent_notes = !strcmp(mode, "both") &&
                                exists(dir, "online/profile.csv")};
            have = analyze_trace(trace_dir, dir, &ao) == 0;
        } else {
            have = exists(trace_dir, "thread-0000.wit");
            if (have && !quiet)
                fprintf(stderr, "whatif: trace in %s/ (whatif analyze %s)\n",
                        trace_dir, trace_dir);
        }
    } else {
        have = exists(dir, "profile.csv");
        if (!have && signaled)
            fprintf(stderr, "whatif run: the on-the-fly profile is written "
                            "when the program ends; killed, it left none "
                            "(--mode offline keeps what was recorded)\n");
    }
    /* A profile is all of its files: one that could not be written (a
     * full disk) leaves the run incomplete, and says so. */
    char missing[128] = "";
    if (analyze) {
        static const char *const need[] = {"profile.csv", "run.json",
                                           "profile.db"};
        size_t n = sizeof(need) / sizeof(*need), found = 0;
        for (size_t i = 0; i < n; i++)
            if (regular_file(dir, need[i]))
                found++;
            else
                snprintf(missing + strlen(missing),
                         sizeof(missing) - strlen(missing), "%s%s",
                         missing[0] ? ", " : "", need[i]);
        if (!found)
            missing[0] = 0; /* none at all: no profile, said below */
        else
            have = 1;
    }
    if (follow && analyze)
        children_profiles(dir, factors, strcmp(mode, "online") != 0);
    if (missing[0])
        fprintf(stderr, "whatif run: the profile is incomplete: %s could not "
                        "be written (the profiler said why above)\n",
                missing);
    else if (!have && !unseen_end && !(strcmp(mode, "online") && !analyze))
        fprintf(stderr, "whatif run: no profile written (the profiler "
                        "said why above)\n");
    remove_markers(dir);
    *have_out = have && !missing[0];
    return prog_status ? prog_status : have && !missing[0] ? 0 : 1;
}

/* What a profile in dir gets beside it: the timed runs' wall times and
 * the HTML report.  Returns 0, or 1 after one line on stderr. */
static int finish_outputs(const run_cfg *c, const char *dir)
{
    char err[PATH_MAX + 256] = "";
    if (c->timings && timing_store(c->timings, dir, err, sizeof(err))) {
        fprintf(stderr, "whatif run: the profile is incomplete: %s\n", err);
        return 1;
    }
    if (c->report && html_report(dir, NULL, err, sizeof(err))) {
        fprintf(stderr, "whatif run: the HTML report could not be written "
                        "(%s); the profile's other files are whole\n", err);
        return 1;
    }
    return 0;
}

/* ---- Repeated runs (--repeat N) ---- */

/* N runs into dir/run-K; the one of median program span becomes the
 * profile in dir, and every row's median and range across the runs go to
 * repeat.csv and profile.db (repeat.c). */
static int profile_repeated(const run_cfg *c, const char *dir, int n)
{
    for (int k = 1; k <= n; k++) {
        char sub[PATH_MAX + 32];
        snprintf(sub, sizeof(sub), "%s/run-%d", dir, k);
        if (mkdir(sub, 0777) && errno != EEXIST) {
            fprintf(stderr, "whatif run: %s: %s\n", sub, strerror(errno));
            return 1;
        }
        if (!c->quiet)
            fprintf(stderr, "whatif: run %d of %d\n", k, n);
        int have = 0;
        int status = profile_once(c, sub, &have);
        if (status && have) {
            fprintf(stderr, "whatif run: run %d of %d: the program failed "
                            "(exit status %d): the runs stop there (its "
                            "profile is in %s)\n", k, n, status, sub);
            return status;
        }
        if (status || !have) {
            fprintf(stderr, "whatif run: run %d of %d gave no profile: the "
                            "runs stop there\n", k, n);
            return status ? status : 1;
        }
    }
    if (!c->analyze) {
        if (!c->quiet)
            fprintf(stderr, "whatif: %d traces in %s/run-*/trace/\n", n, dir);
        return 0;
    }
    char err[1024] = "";
    if (repeat_combine(dir, n, err, sizeof(err))) {
        fprintf(stderr, "whatif run: %s\n", err);
        return 1;
    }
    if (finish_outputs(c, dir))
        return 1;
    if (!c->quiet) {
        summary_print(dir);
        repeat_summary(dir);
    }
    return 0;
}

int cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"mode", required_argument, NULL, 'm'},
        {"metric", required_argument, NULL, 'M'},
        {"factors", required_argument, NULL, 'F'},
        {"children", required_argument, NULL, 'c'},
        {"no-analyze", no_argument, NULL, 'n'},
        {"opportunities", no_argument, NULL, 'O'},
        {"sample-rate", required_argument, NULL, 'S'},
        {"no-sample", no_argument, NULL, 'N'},
        {"repeat", required_argument, NULL, 'R'},
        {"context", required_argument, NULL, 'C'},
        {"threads", required_argument, NULL, 'T'},
        {"no-report", no_argument, NULL, 'P'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    const char *out = "whatif-out", *metric_name = NULL, *mode = "online";
    const char *factors = NULL, *children = "ignore", *sample_hz = NULL;
    const char *context = NULL;
    int analyze = 1, quiet = 0, repeat = 1, report = 1, c;
    timing_set timings;
    int timed = 0;
    optind = 1;
    opterr = 0; /* its messages are ours, one line each */
    while ((c = getopt_long(argc, argv, "+:o:qh", opts, NULL)) != -1) {
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
        case 'c':
            if (strcmp(optarg, "ignore") && strcmp(optarg, "profile")) {
                fprintf(stderr, "whatif run: --children %s: use ignore or "
                                "profile\n", optarg);
                return 2;
            }
            children = optarg;
            break;
        case 'n': analyze = 0; break;
        case 'O': want_opportunities = 1; break;
        case 'S': {
            char *end;
            long hz = strtol(optarg, &end, 10);
            if (!*optarg || *end || hz < 1 || hz > 100000) {
                fprintf(stderr, "whatif run: --sample-rate %s: use 1 to "
                                "100000 samples per second (--no-sample for "
                                "none)\n", optarg);
                return 2;
            }
            if (sample_hz) {
                fprintf(stderr, "whatif run: --no-sample and --sample-rate "
                                "contradict each other: give one\n");
                return 2;
            }
            sample_hz = optarg;
            break;
        }
        case 'N':
            if (sample_hz) {
                fprintf(stderr, "whatif run: --no-sample and --sample-rate "
                                "contradict each other: give one\n");
                return 2;
            }
            sample_hz = "0";
            break;
        case 'P': report = 0; break;
        case 'T': {
            char err[256] = "";
            if (timing_parse(optarg, &timings, err, sizeof(err))) {
                fprintf(stderr, "whatif run: --threads %s\n", err);
                return 2;
            }
            timed = 1;
            break;
        }
        case 'C': {
            char *end;
            long d = strtol(optarg, &end, 10);
            if (!*optarg || *end || d < 0 || d > 16) {
                fprintf(stderr, "whatif run: --context %s: use 0 (none) to "
                                "16 call sites\n", optarg);
                return 2;
            }
            context = optarg;
            break;
        }
        case 'R': {
            char *end;
            long r = strtol(optarg, &end, 10);
            if (!*optarg || *end || r < 1 || r > 100) {
                fprintf(stderr, "whatif run: --repeat %s: use 1 to 100 "
                                "runs\n", optarg);
                return 2;
            }
            repeat = (int)r;
            break;
        }
        case 'q': quiet = 1; break;
        case 'h': usage(stdout); return 0;
        default:
            if (c == ':')
                fprintf(stderr, "whatif run: %s needs a value (see whatif "
                                "run --help)\n", argv[optind - 1]);
            else
                fprintf(stderr, "whatif run: unknown option %s (see whatif "
                                "run --help)\n", argv[optind - 1]);
            return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "whatif run: no program given: whatif run [OPTIONS] "
                        "-- PROGRAM [ARGS...] (see whatif run --help)\n");
        return 2;
    }
    const char *prog = argv[optind];
    char err[1024], tool[PATH_MAX + 32], dir[PATH_MAX];
    if (factors) {
        double *fv;
        size_t nf;
        if (scen_parse_factors(factors, &fv, &nf, err, sizeof(err))) {
            fprintf(stderr, "whatif run: --factors: %s\n", err);
            return 2;
        }
        free(fv);
    }
    if (counter_check(metric_name, err, sizeof(err))) {
        fprintf(stderr, "whatif run: --metric: %s\n", err);
        return 2;
    }
    char prog_path[PATH_MAX];
    if (find_program(prog, prog_path, sizeof(prog_path))) {
        int here = !strchr(prog, '/') && access(prog, X_OK) == 0;
        fprintf(stderr, "whatif run: %s: no such program (or not "
                        "executable)%s%s%s\n", prog,
                here ? "; the one in this directory is ./" : "",
                here ? prog : "", here ? " (commands are looked up in "
                                         "PATH, as a shell does)" : "");
        return 127;
    }
    if (find_tool(tool, sizeof(tool))) {
        fprintf(stderr, "whatif run: cannot find libwhatif.so next to the "
                        "whatif binary (expected ../lib/libwhatif.so): "
                        "reinstall or rebuild with ./setup.sh\n");
        return 1;
    }
    /* A program built with gcc runs on libgomp, which has no tools
     * interface: libomp implements libgomp's entry points, and preloaded
     * it takes their place. */
    char libomp[PATH_MAX] = "";
    int gomp = needs_libgomp(prog_path);
    if (gomp && find_libomp(libomp, sizeof(libomp))) {
        fprintf(stderr, "whatif run: %s is built with GCC's OpenMP "
                        "(libgomp), which whatif cannot observe, and no "
                        "LLVM libomp was found to run it on: install "
                        "libomp5-19 (or set WHATIF_LIBOMP), or rebuild with "
                        "clang -fopenmp\n", prog);
        return 1;
    }
    /* Under an MPI launcher every rank profiles into a directory of its
     * own; rank 0 clears what a run with more ranks left. */
    long nranks, rank = mpirank_get(&nranks);
    const char *ranks_dir = NULL;
    char rank_out[PATH_MAX + 32];
    if (rank >= 0 && timed) {
        fprintf(stderr, "whatif run: --threads times the program alone, "
                        "which an MPI rank cannot be: time the MPI job "
                        "itself at each thread count instead\n");
        return 2;
    }
    if (rank >= 0) {
        if (make_dirs(out)) {
            fprintf(stderr, "whatif run: -o %s: cannot create the directory: "
                            "%s\n", out, strerror(errno));
            return 1;
        }
        if (rank == 0)
            clear_ranks(out, nranks);
        snprintf(rank_out, sizeof(rank_out), "%s/rank-%05ld", out, rank);
        ranks_dir = out;
        out = rank_out;
        /* one summary for the run, rank 0's, not one per rank */
        if (rank > 0)
            quiet = 1;
    }
    int lock = prepare_dir(out, dir, sizeof(dir));
    if (lock < 0)
        return 1;
    char link_dir[PATH_MAX] = "", pre_tool[PATH_MAX], pre_omp[PATH_MAX];
    if (preloadable(tool, pre_tool, sizeof(pre_tool), link_dir,
                    sizeof(link_dir)) ||
        (gomp && preloadable(libomp, pre_omp, sizeof(pre_omp), link_dir,
                             sizeof(link_dir)))) {
        fprintf(stderr, "whatif run: cannot link the tool into a path "
                        "LD_PRELOAD can name: %s\n", strerror(errno));
        return 1;
    }
    run_cfg cfg = {
        .prog = prog, .prog_path = prog_path, .argv = argv + optind,
        .pre_tool = pre_tool, .pre_omp = pre_omp, .gomp = gomp,
        .children = children, .mode = mode, .metric_name = metric_name,
        .factors = factors, .sample_hz = sample_hz, .context = context,
        .timings = timed ? &timings : NULL, .report = report && analyze,
        .analyze = analyze,
        .quiet = quiet, .lock = lock};

    /* SIGINT and SIGQUIT reach the program from the terminal; whatif
     * outlives them to report.  SIGTERM and SIGHUP it passes on. */
    struct sigaction sa;
    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = forward_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGHUP, &sa, NULL);
    signal(SIGINT, SIG_IGN);
    signal(SIGQUIT, SIG_IGN);

    int status = 0;
    if (timed) {
        char err[PATH_MAX + 256] = "";
        if (!quiet)
            fprintf(stderr, "whatif: timing %s unprofiled at %zu thread "
                            "counts\n", prog, timings.n);
        status = timing_run(&timings, prog_path, argv + optind,
                            gomp ? pre_omp : NULL, err, sizeof(err));
        if (status)
            fprintf(stderr, "whatif run: %s\n", err);
        else if (!quiet)
            for (size_t i = 0; i < timings.n; i++)
                fprintf(stderr, "  %4d thread%s %9.3f s  speedup %.2f\n",
                        timings.threads[i], timings.threads[i] > 1 ? "s" : " ",
                        timings.seconds[i],
                        timings.seconds[0] / timings.seconds[i]);
        /* the profile at the most threads timed */
        char n[16];
        snprintf(n, sizeof(n), "%d", timings.threads[timings.n - 1]);
        setenv("OMP_NUM_THREADS", n, 1);
    }
    if (status) {
        /* a timed run failed: said above */
    } else if (repeat <= 1) {
        int have = 0;
        status = profile_once(&cfg, dir, &have);
        if (have && analyze && finish_outputs(&cfg, dir))
            status = 1;
        else if (have && analyze && !quiet)
            summary_print(dir);
        if (have && ranks_dir && !quiet)
            fprintf(stderr, "whatif: that was rank %ld of an MPI run; "
                            "whatif analyze %s sets its ranks side by "
                            "side\n", rank, ranks_dir);
    } else {
        status = profile_repeated(&cfg, dir, repeat);
    }
    if (link_dir[0]) {
        char p[2 * PATH_MAX];
        snprintf(p, sizeof(p), "%s/%s", link_dir, basename(tool));
        unlink(p);
        if (gomp) {
            snprintf(p, sizeof(p), "%s/%s", link_dir, basename(libomp));
            unlink(p);
        }
        rmdir(link_dir);
    }
    close(lock);
    return status;
}
