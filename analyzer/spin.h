/* spin.h - a small spin lock for the profiler's short critical sections.
 *
 * A pthread mutex puts a contended thread to sleep; at a barrier, where all
 * threads of a team arrive together, every graph update then paid a futex
 * wake-up (tens of microseconds).  The sections guarded here last a few
 * hundred nanoseconds, so waiters spin, and yield the CPU after a while in
 * case the holder was descheduled (more threads than cores).
 */
#ifndef WHATIF_SPIN_H
#define WHATIF_SPIN_H

#include <sched.h>
#include <stdatomic.h>

typedef struct spin_lock {
    atomic_int held;
} spin_lock;

#define SPIN_LOCK_INIT {0}

static inline void spin_acquire(spin_lock *l)
{
    unsigned tries = 0;
    for (;;) {
        if (!atomic_exchange_explicit(&l->held, 1, memory_order_acquire))
            return;
        while (atomic_load_explicit(&l->held, memory_order_relaxed)) {
            if (++tries % 256 == 0)
                sched_yield();
#if defined(__x86_64__) || defined(__i386__)
            __builtin_ia32_pause();
#endif
        }
    }
}

/* Takes the lock if it is free; returns 1 when taken. */
static inline int spin_try_acquire(spin_lock *l)
{
    return !atomic_load_explicit(&l->held, memory_order_relaxed) &&
           !atomic_exchange_explicit(&l->held, 1, memory_order_acquire);
}

static inline void spin_release(spin_lock *l)
{
    atomic_store_explicit(&l->held, 0, memory_order_release);
}

#endif
