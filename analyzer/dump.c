/* dump.c - `whatif dump`: a trace's records as text, one per line.
 *
 * For looking inside a trace when a profile is missing or surprising, and
 * for bug reports: every record of every stream (or of the files named),
 * in file order, with its byte offset.  A damaged stream prints up to the
 * damage, then the reader's one-line error; the exit status is then 1.
 */
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "replay.h"
#include "trace.h"

static const char *kind_name(uint64_t kind)
{
    return kind == OSPG_S ? "S" : kind == OSPG_P ? "P" : "?";
}

static void print_loc(uint32_t loc)
{
    if (loc == OSPG_LOC_NONE)
        fputs(" loc=-", stdout);
    else
        printf(" loc=%" PRIu32, loc);
}

static void print_rec(uint64_t off, const trace_rec *r)
{
    printf("%8" PRIu64 " ", off);
    switch (r->type) {
    case TRACE_BEGIN:
        printf("BEGIN id=%" PRIu64 " parent=%" PRIu64 " idx=%" PRIu64 " %s",
               r->id, r->parent, r->idx, kind_name(r->kind));
        print_loc(r->loc);
        if (r->group)
            printf(" group=%" PRIu64 " owner=%" PRIu64, r->group, r->owner);
        for (size_t i = 0; i < r->ndeps; i++)
            printf(" dep=%#" PRIx64 ":%" PRIu32, r->deps[i].addr,
                   r->deps[i].type);
        break;
    case TRACE_WORK:
        printf("WORK parent=%" PRIu64 " idx=%" PRIu64 " work=%" PRIu64,
               r->parent, r->idx, r->work);
        print_loc(r->loc);
        if (r->region)
            printf(" region=%" PRIu32, r->region);
        if (r->flags & OSPG_W_CONTINUES)
            fputs(" continues", stdout);
        for (size_t i = 0; i < r->nsamples; i++)
            printf(" sample=%" PRIu32 "x%" PRIu32, r->samples[i].loc,
                   r->samples[i].count);
        break;
    case TRACE_END:
        printf("END id=%" PRIu64 " children=%" PRIu64, r->id, r->nchildren);
        print_loc(r->loc);
        break;
    case TRACE_LEAF:
        printf("LEAF parent=%" PRIu64 " idx=%" PRIu64 " %s", r->parent,
               r->idx, kind_name(r->kind));
        print_loc(r->loc);
        if (r->group)
            printf(" group=%" PRIu64 " owner=%" PRIu64, r->group, r->owner);
        if (r->nchildren) {
            printf(" work=%" PRIu64, r->work);
            if (r->wloc != r->loc) {
                fputs(" work", stdout);
                print_loc(r->wloc);
            }
            if (r->region)
                printf(" region=%" PRIu32, r->region);
            if (r->flags & OSPG_W_CONTINUES)
                fputs(" continues", stdout);
        } else {
            fputs(" children=0", stdout);
        }
        break;
    case TRACE_LOC:
        printf("LOC %" PRIu32 " %s %s", r->loc, r->str1, r->str2);
        break;
    case TRACE_META:
        printf("META %s=%s", r->str1, r->str2);
        break;
    case TRACE_REGION:
        printf("REGION %" PRIu32 " parent=%" PRIu32, r->region_id,
               r->region_parent);
        print_loc(r->loc);
        printf(" factor_milli=%" PRIu64, r->factor_milli);
        break;
    case TRACE_NOTE:
        printf("NOTE note=%" PRIu32 " value=%" PRIu64, r->note, r->value);
        print_loc(r->loc);
        break;
    case TRACE_WAIT:
        printf("WAIT %" PRIu64 "..%" PRIu64 "ns", r->t_start, r->t_end);
        break;
    default:
        printf("type %d", r->type);
    }
    if (r->timed)
        printf(" ran=%" PRIu64 "..%" PRIu64 "ns", r->t_start, r->t_end);
    putchar('\n');
}

/* Prints one stream; 0, or -1 after printing its error. */
static int dump_file(const char *path)
{
    trace_reader *rd = trace_reader_open(path);
    if (!rd) {
        fprintf(stderr, "whatif dump: out of memory\n");
        return -1;
    }
    printf("== %s (stream %" PRIu32 ")\n", path, trace_reader_stream(rd));
    trace_rec r;
    int rc;
    uint64_t off = trace_reader_offset(rd);
    while ((rc = trace_reader_next(rd, &r)) == 1) {
        print_rec(off, &r);
        off = trace_reader_offset(rd);
    }
    if (rc < 0)
        fprintf(stderr, "whatif dump: %s\n", trace_reader_error(rd));
    trace_reader_close(rd);
    return rc < 0 ? -1 : 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The stream files of a trace directory, sorted; NULL on error. */
static char **list_streams(const char *dir, size_t *n)
{
    DIR *d = opendir(dir);
    char **v = NULL;
    size_t cap = 0;
    *n = 0;
    if (!d) {
        perror(dir);
        return NULL;
    }
    struct dirent *de;
    size_t plen = strlen(REPLAY_STREAM_PREFIX);
    size_t slen = strlen(REPLAY_STREAM_SUFFIX);
    while ((de = readdir(d))) {
        size_t len = strlen(de->d_name);
        if (len <= plen + slen ||
            strncmp(de->d_name, REPLAY_STREAM_PREFIX, plen) ||
            strcmp(de->d_name + len - slen, REPLAY_STREAM_SUFFIX))
            continue;
        if (*n == cap) {
            cap = cap ? 2 * cap : 16;
            char **nv = realloc(v, cap * sizeof(*nv));
            if (!nv)
                break;
            v = nv;
        }
        size_t need = strlen(dir) + len + 2;
        if (!(v[*n] = malloc(need)))
            break;
        snprintf(v[*n], need, "%s/%s", dir, de->d_name);
        (*n)++;
    }
    closedir(d);
    if (*n)
        qsort(v, *n, sizeof(*v), cmp_str);
    return v;
}

int cmd_dump(int argc, char **argv)
{
    if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
        fputs("usage: whatif dump TRACE_DIR | STREAM_FILE...\n"
              "\n"
              "Prints the records of an offline trace (a run's trace/\n"
              "directory, or single thread-NNNN.wit streams) as text, one\n"
              "per line: for a surprising profile, or a bug report.  The\n"
              "format is docs/trace-format.md.\n",
              argc < 2 ? stderr : stdout);
        return argc < 2 ? 2 : 0;
    }
    int status = 0;
    for (int i = 1; i < argc; i++) {
        struct stat sb;
        if (stat(argv[i], &sb) == 0 && S_ISDIR(sb.st_mode)) {
            size_t n;
            char **v = list_streams(argv[i], &n);
            if (!n) {
                fprintf(stderr, "whatif dump: %s: no trace streams in this "
                                "directory\n", argv[i]);
                status = 1;
            }
            for (size_t k = 0; k < n; k++) {
                if (dump_file(v[k]))
                    status = 1;
                free(v[k]);
            }
            free(v);
        } else if (dump_file(argv[i])) {
            status = 1;
        }
    }
    return status;
}
