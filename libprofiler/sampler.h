/* sampler.h - where a thread's serial code spends its time.
 *
 * Each profiled thread opens a perf_event software clock of its own CPU
 * time (no PMU needed; a VM allows it) that samples the thread's user-mode
 * instruction pointer every period of CPU time into a ring buffer mapped
 * in the process.  The tool drains the ring when it closes a fragment, so
 * every sample belongs to the W-node that ran when it was taken.  Nothing
 * here allocates or locks: a drain reads two words when no sample is
 * waiting.
 */
#ifndef WHATIF_SAMPLER_H
#define WHATIF_SAMPLER_H

#include <linux/perf_event.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sampler_thread {
    int fd;              /* meaningful only while ring is mapped */
    void *ring;          /* the perf mmap: a header page, then the data */
    size_t ring_len;
    uint64_t lost;       /* samples the kernel dropped (ring full) */
} sampler_thread;

/* Starts sampling the calling thread every period_ns of its CPU time.
 * Returns 0, or -1 with errno set (the thread then is not sampled). */
int sampler_open(sampler_thread *s, uint64_t period_ns);
void sampler_close(sampler_thread *s);

/* Where the ring stands now: sampler_drain_to(mark) takes the samples
 * written before this point only, those after stay. */
uint64_t sampler_mark(const sampler_thread *s);
size_t sampler_drain_to(sampler_thread *s, uint64_t mark,
                        void (*fn)(void *arg, uint64_t ip), void *arg);

/* Calls fn(arg, ip) for every sample taken since the last drain, oldest
 * first, and frees their room; returns how many there were.  Inline: the
 * tool drains at every fragment's start and end, and a sample is waiting
 * at few of them (a task program has thousands of fragments per sample). */
static inline size_t sampler_drain(sampler_thread *s,
                                   void (*fn)(void *arg, uint64_t ip),
                                   void *arg)
{
    const struct perf_event_mmap_page *pc = s->ring;
    if (!pc || __atomic_load_n(&pc->data_head, __ATOMIC_RELAXED) ==
                   pc->data_tail)
        return 0;
    return sampler_drain_to(s, UINT64_MAX, fn, arg);
}

#endif
