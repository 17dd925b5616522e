/* pmu.c - a program that counts its own instructions, for the default
 * (PMU) metric.
 *
 *   pmu
 *
 * Every fragment of the program's own code is counted by the program
 * with a perf_event counter of its own (user-mode instructions, as
 * whatif counts them): serial code before the first construct, each
 * thread's share of a parallel region, serial code between regions, four
 * tasks of different sizes created by a single, and serial code at the
 * end.  At the end it prints on stderr
 *
 *   whatif-expect work=W span=S first=F
 *
 * W the sum of all fragments, S the longest path (the serial fragments,
 * the longer thread share, the creator's code and the longest task),
 * F the serial code before the first construct.  Without a hardware
 * counter it prints "whatif-expect none" and runs the same code.
 */
#include <linux/perf_event.h>
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile unsigned long sink;

/* n iterations: the same instructions each call */
__attribute__((noinline)) static void spin(unsigned long n)
{
    for (unsigned long i = 0; i < n; i++)
        sink += i * 2654435761u;
}

static int counter_open(void)
{
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_HARDWARE;
    a.config = PERF_COUNT_HW_INSTRUCTIONS;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    return (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
}

static uint64_t counter_now(int fd)
{
    uint64_t v = 0;
    if (fd < 0 || read(fd, &v, sizeof(v)) != sizeof(v))
        return 0;
    return v;
}

/* each thread's own counter, opened at its first fragment */
static __thread int thread_fd = -1;

static uint64_t counted_spin(unsigned long n)
{
    if (thread_fd < 0)
        thread_fd = counter_open();
    uint64_t a = counter_now(thread_fd);
    spin(n);
    return counter_now(thread_fd) - a;
}

#define UNIT 4000000ul

/* The constructs are in functions of their own: clang asks the runtime
 * for the thread's number at the start of a function with a construct,
 * which would start the runtime (and the tool) before main's serial
 * code; started at the first construct, as here, the tool must still
 * count that code (it once counted it from the tool's start). */
__attribute__((noinline)) static void region_shares(uint64_t share[2])
{
#pragma omp parallel num_threads(2)
    {
        int me = omp_get_thread_num();
        share[me] = counted_spin((unsigned long)(me + 1) * UNIT);
    }
}

static const unsigned long task_units[4] = {1, 4, 2, 1};

__attribute__((noinline)) static void region_tasks(uint64_t task_work[4])
{
#pragma omp parallel num_threads(2)
#pragma omp single
    for (int i = 0; i < 4; i++) {
#pragma omp task firstprivate(i) shared(task_work)
        task_work[i] = counted_spin(task_units[i] * UNIT);
    }
}

int main(void)
{
    int fd = counter_open();
    uint64_t t0 = counter_now(fd);
    spin(3 * UNIT);
    uint64_t first = counter_now(fd) - t0;

    uint64_t share[2] = {0, 0};
    region_shares(share);

    uint64_t t1 = counter_now(fd);
    spin(2 * UNIT);
    uint64_t between = counter_now(fd) - t1;

    uint64_t task_work[4] = {0, 0, 0, 0};
    region_tasks(task_work);

    uint64_t t2 = counter_now(fd);
    spin(UNIT);
    uint64_t last = counter_now(fd) - t2;

    if (fd < 0 || !first) {
        fprintf(stderr, "whatif-expect none\n");
        printf("ok %lu\n", sink & 1);
        return 0;
    }
    uint64_t work = first + share[0] + share[1] + between + last;
    uint64_t longest = 0;
    for (int i = 0; i < 4; i++) {
        work += task_work[i];
        longest = task_work[i] > longest ? task_work[i] : longest;
    }
    uint64_t span = first + (share[0] > share[1] ? share[0] : share[1]) +
                    between + longest + last;
    fprintf(stderr, "whatif-expect work=%llu span=%llu first=%llu\n",
            (unsigned long long)work, (unsigned long long)span,
            (unsigned long long)first);
    printf("ok %lu\n", sink & 1);
    return 0;
}
