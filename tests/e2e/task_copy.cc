/* task_copy.cc - the creator's own code between a task's allocation and
 * its queueing, which is its work.  "vector": a std::vector of 32 KB
 * taken by value (a heap allocation and a copy; it has a destructor).
 * "ctor": a small object whose copy constructor reads 32 KB and whose
 * destructor is trivial.  "ifexpr": an if() clause that reads 32 KB where
 * it makes the task undeferred, every second task.  The program times the
 * same copies itself first and prints "whatif-copy ns=N" on stderr. */
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <vector>

static uint64_t now_ns()
{
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return uint64_t(t.tv_sec) * 1000000000u + uint64_t(t.tv_nsec);
}

/* The time since t0, as the test reads it: the code timed by the program
 * itself. */
static void report_since(uint64_t t0)
{
    std::fprintf(stderr, "whatif-copy ns=%llu\n",
                 (unsigned long long)(now_ns() - t0));
}

enum { TASKS = 20000, DOUBLES = 4096 };
static double table[DOUBLES];

struct Summed {
    const double *from;
    double sum;
    explicit Summed(const double *p) : from(p), sum(0) {}
    Summed(const Summed &o) : from(o.from), sum(0)
    {
        for (int i = 0; i < DOUBLES; i++)
            sum += from[i];
    }
};

static void vector_tasks()
{
    std::vector<double> v(DOUBLES, 1.0);
    double kept = 0;
    uint64_t t0 = now_ns();
    for (int t = 0; t < TASKS; t++) {
        std::vector<double> copy(v);
        __asm__ volatile("" : : "r"(copy.data()) : "memory");
        kept += copy[t % DOUBLES];
    }
    report_since(t0);
    double sum = 0;
#pragma omp parallel
#pragma omp single
    for (int t = 0; t < TASKS; t++) {
        v[t % DOUBLES] += 1;
#pragma omp task firstprivate(v)
        {
#pragma omp atomic
            sum += v[t % DOUBLES];
        }
    }
    std::printf("ok %d\n", sum > kept);
}

static void ctor_tasks()
{
    for (int i = 0; i < DOUBLES; i++)
        table[i] = i;
    Summed s(table);
    double kept = 0;
    uint64_t t0 = now_ns();
    for (int t = 0; t < TASKS; t++) {
        Summed copy(s);
        __asm__ volatile("" : : "r"(&copy) : "memory");
        kept += copy.sum;
    }
    report_since(t0);
    double sum = 0;
#pragma omp parallel
#pragma omp single
    for (int t = 0; t < TASKS; t++) {
#pragma omp task firstprivate(s)
        {
#pragma omp atomic
            sum += s.sum;
        }
    }
    std::printf("ok %d\n", sum == kept);
}

/* The if() clause's expression, run between the allocation and the
 * queueing: reading 32 KB where a task runs undeferred (every second
 * one), nothing where it is queued. */
static int deferred(int t)
{
    if (t % 2)
        return 1;
    double sum = 0;
    for (int i = 0; i < DOUBLES; i++)
        sum += table[i];
    __asm__ volatile("" : : "r"(&sum) : "memory");
    return sum < 0;
}

static void ifexpr_tasks()
{
    for (int i = 0; i < DOUBLES; i++)
        table[i] = i;
    int kept = 0;
    uint64_t t0 = now_ns();
    for (int t = 0; t < TASKS; t++)
        kept += deferred(t);
    report_since(t0);
    int ran = 0;
#pragma omp parallel
#pragma omp single
    for (int t = 0; t < TASKS; t++) {
#pragma omp task if (deferred(t))
        {
#pragma omp atomic
            ran++;
        }
    }
    std::printf("ok %d\n", ran == TASKS && kept == TASKS / 2);
}

int main(int argc, char **argv)
{
    if (argc > 1 && !std::strcmp(argv[1], "ctor"))
        ctor_tasks();
    else if (argc > 1 && !std::strcmp(argv[1], "ifexpr"))
        ifexpr_tasks();
    else
        vector_tasks();
    return 0;
}
