/* task_copy.cc - tasks that take a C++ object by value (firstprivate):
 * the creator copies it with its copy constructor, a heap allocation and
 * 32 KB copied each time, which is the creator's work.  The program times
 * the same copies itself first and prints "whatif-copy ns=N" on stderr. */
#include <cstdint>
#include <cstdio>
#include <ctime>
#include <vector>

static uint64_t now_ns()
{
    timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return uint64_t(t.tv_sec) * 1000000000u + uint64_t(t.tv_nsec);
}

int main()
{
    const int tasks = 20000;
    std::vector<double> v(4096, 1.0);
    double kept = 0;
    uint64_t t0 = now_ns();
    for (int t = 0; t < tasks; t++) {
        std::vector<double> copy(v);
        __asm__ volatile("" : : "r"(copy.data()) : "memory");
        kept += copy[t % 4096];
    }
    std::fprintf(stderr, "whatif-copy ns=%llu\n",
                 (unsigned long long)(now_ns() - t0));
    double sum = 0;
#pragma omp parallel
#pragma omp single
    for (int t = 0; t < tasks; t++) {
        v[t % 4096] += 1;
#pragma omp task firstprivate(v)
        {
#pragma omp atomic
            sum += v[t % 4096];
        }
    }
    std::printf("ok %d\n", sum > kept);
    return 0;
}
