/* sampler.c - a thread's instruction pointer, sampled by perf_event.
 *
 * One PERF_COUNT_SW_TASK_CLOCK event per thread, counting only while the
 * thread runs, user mode only, overflowing every period: the kernel
 * writes a PERF_RECORD_SAMPLE with the instruction pointer into the
 * event's ring, which the thread reads itself (sampler.h).  Protocol of
 * the ring (linux/perf_event.h): the kernel advances data_head after it
 * wrote records; the reader reads records up to data_head (an acquire
 * load), then stores data_tail (a release store) to free their room.  A
 * record may wrap around the end of the ring.
 */
#include "sampler.h"
#include "fdkeep.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define RING_PAGES 8 /* data pages, a power of two: 32 KiB, ~2000 samples */

int sampler_open(sampler_thread *s, uint64_t period_ns)
{
    memset(s, 0, sizeof(*s));
    s->fd = -1;
    struct perf_event_attr a;
    memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_TASK_CLOCK;
    a.sample_period = period_ns;
    a.sample_type = PERF_SAMPLE_IP;
    a.exclude_kernel = 1;
    a.exclude_hv = 1;
    a.wakeup_events = 1u << 30; /* never wake anyone: nobody polls */
    int fd = fd_keep((int)syscall(SYS_perf_event_open, &a, 0, -1, -1,
                                  PERF_FLAG_FD_CLOEXEC));
    if (fd < 0)
        return -1;
    long page = sysconf(_SC_PAGESIZE);
    size_t len = (size_t)page * (1 + RING_PAGES);
    void *ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (ring == MAP_FAILED) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    s->fd = fd;
    s->ring = ring;
    s->ring_len = len;
    return 0;
}

void sampler_close(sampler_thread *s)
{
    /* Open means mapped: a sampler never opened may be all zeros, and its
     * fd 0 is the program's standard input, not ours to close. */
    if (s->ring) {
        munmap(s->ring, s->ring_len);
        close(s->fd);
    }
    memset(s, 0, sizeof(*s));
    s->fd = -1;
}

/* Copies n bytes at offset off of the data area (which wraps). */
static void ring_copy(const unsigned char *data, uint64_t size, uint64_t off,
                      void *dst, size_t n)
{
    uint64_t at = off & (size - 1);
    size_t first = at + n <= size ? n : (size_t)(size - at);
    memcpy(dst, data + at, first);
    memcpy((unsigned char *)dst + first, data, n - first);
}

uint64_t sampler_mark(const sampler_thread *s)
{
    if (!s->ring)
        return 0;
    const struct perf_event_mmap_page *pc = s->ring;
    return __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
}

size_t sampler_drain_to(sampler_thread *s, uint64_t mark,
                        void (*fn)(void *arg, uint64_t ip), void *arg)
{
    if (!s->ring)
        return 0;
    struct perf_event_mmap_page *pc = s->ring;
    uint64_t head = __atomic_load_n(&pc->data_head, __ATOMIC_ACQUIRE);
    if (mark < head)
        head = mark;
    uint64_t tail = pc->data_tail;
    if (head == tail)
        return 0;
    const unsigned char *data = (const unsigned char *)s->ring + pc->data_offset;
    uint64_t size = pc->data_size;
    size_t n = 0;
    while (tail + sizeof(struct perf_event_header) <= head) {
        struct perf_event_header h;
        ring_copy(data, size, tail, &h, sizeof(h));
        if (h.size < sizeof(h) || tail + h.size > head)
            break; /* cannot happen: records are whole */
        if (h.type == PERF_RECORD_SAMPLE &&
            h.size >= sizeof(h) + sizeof(uint64_t)) {
            uint64_t ip;
            ring_copy(data, size, tail + sizeof(h), &ip, sizeof(ip));
            fn(arg, ip);
            n++;
        } else if (h.type == PERF_RECORD_LOST &&
                   h.size >= sizeof(h) + 2 * sizeof(uint64_t)) {
            uint64_t lost[2]; /* id, count */
            ring_copy(data, size, tail + sizeof(h), lost, sizeof(lost));
            s->lost += lost[1];
        }
        tail += h.size;
    }
    __atomic_store_n(&pc->data_tail, tail, __ATOMIC_RELEASE);
    return n;
}
