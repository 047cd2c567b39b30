/* SPDX-License-Identifier: MIT
 * The dynamic linker's lock and who holds it (lz_ldlock.h).
 *
 * glibc keeps the lock that dlopen, dlclose and dlsym take (_dl_load_lock,
 * recursive) in ld.so's _rtld_global, right after the count of namespaces
 * and before the lock dl_iterate_phdr takes (_dl_load_write_lock, also
 * recursive). Its offset changes between glibc releases, so it is found by
 * that shape: a count of 1 to 16 followed by two recursive mutexes, which
 * nothing else in _rtld_global is. No match, no check: the call then waits
 * in dlopen, as before. */
#include "process/lz_ldlock.h"
#include "process/lz_objects.h"
#include "base/lz_dl.h"
#include "base/lz_log.h"

#include <dirent.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static pthread_mutex_t *find_lock(void)
{
    size_t size = 0;
    unsigned char *g = lz_objects_ldso_symbol("_rtld_global", &size);
    if (!g || size < sizeof(size_t) + 2 * sizeof(pthread_mutex_t)) /* none: a static program */
        return NULL;
    pthread_mutex_t *found = NULL;
    for (size_t off = 0; off + sizeof(size_t) + 2 * sizeof(pthread_mutex_t) <= size;
         off += sizeof(size_t)) {
        /* Relaxed atomic reads: other threads take and give the lock read
         * here meanwhile (lz_ldlock_take's fields are atomic too), and
         * _rtld_global is word-aligned. */
        size_t nns = __atomic_load_n((const size_t *)(g + off), __ATOMIC_RELAXED);
        pthread_mutex_t *a = (pthread_mutex_t *)(g + off + sizeof(size_t));
        /* Only fields no take or give writes: a window shifted into the
         * locks themselves reads a mutex's kind and spins as a count of
         * namespaces, and the lock words of the two locks after it as two
         * kinds while both are held; its robust-list words then hold the
         * next lock's kind and owner, where a real one's are NULL. */
        if (nns < 1 || nns > 16 ||
            __atomic_load_n(&a[0].__data.__kind, __ATOMIC_RELAXED) != PTHREAD_MUTEX_RECURSIVE_NP ||
            __atomic_load_n(&a[1].__data.__kind, __ATOMIC_RELAXED) != PTHREAD_MUTEX_RECURSIVE_NP ||
            __atomic_load_n(&a[0].__data.__list.__prev, __ATOMIC_RELAXED) ||
            __atomic_load_n(&a[0].__data.__list.__next, __ATOMIC_RELAXED) ||
            __atomic_load_n(&a[1].__data.__list.__prev, __ATOMIC_RELAXED) ||
            __atomic_load_n(&a[1].__data.__list.__next, __ATOMIC_RELAXED))
            continue;
        if (found)
            return NULL; /* two matches: the shape is not what it was */
        found = a;
    }
    return found;
}

/* The lock, found once and never changed after: a give must let go of
 * the lock its take took (a take that found it and a give that did not
 * would leave it held by a thread that ends, and every dlopen of the
 * process waiting for it). Threads that look at once may each search; the
 * first found is kept, and none is replaced by a later "none". */
static pthread_mutex_t *ld_lock(void)
{
    static pthread_mutex_t *lock;
    static int tried;
    pthread_mutex_t *found = __atomic_load_n(&lock, __ATOMIC_ACQUIRE);
    if (found || __atomic_load_n(&tried, __ATOMIC_ACQUIRE))
        return found;
    pthread_mutex_t *none = NULL, *mine = find_lock();
    if (mine && !__atomic_compare_exchange_n(&lock, &none, mine, 0, __ATOMIC_ACQ_REL,
                                             __ATOMIC_ACQUIRE))
        mine = none; /* another thread's, the same */
    __atomic_store_n(&tried, 1, __ATOMIC_RELEASE);
    return mine;
}

/* The start of /proc/self/task/TID/NAME into text (NUL-terminated): 0, or
 * -1 where it cannot be read. */
static int task_read(int tid, const char *name, char *text, size_t size)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/task/%d/%s", tid, name);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, text, size - 1);
    close(fd);
    if (n <= 0)
        return -1;
    text[n] = '\0';
    return 0;
}

/* The system call thread tid sleeps in, read from /proc/self/task/TID/syscall
 * (its number, then its arguments): 0 with the number and the first four
 * arguments, -1 when the thread runs or the file cannot be read. */
static int sleeping_in(int tid, long *nr, unsigned long long arg[4])
{
    char text[256];
    if (task_read(tid, "syscall", text, sizeof text) != 0)
        return -1;
    char *end;
    *nr = strtol(text, &end, 10);
    if (end == text || *nr < 0) /* "running", or -1: not in a system call */
        return -1;
    for (int k = 0; k < 4; k++)
        arg[k] = strtoull(end, &end, 16);
    return 0;
}

/* 1 when thread tid sleeps in a futex wait without a timeout on this
 * thread's own id word, which is what pthread_join (and a C++ join) waits
 * on until this thread ends. A timed join (pthread_timedjoin_np) ends by
 * itself, as plain. */
static int joins_me(int tid, int me)
{
    long nr;
    unsigned long long arg[4];
    if (sleeping_in(tid, &nr, arg) != 0 || nr != SYS_futex || arg[3] != 0)
        return 0;
    /* The word lies in this thread's descriptor and holds its id. */
    uintptr_t word = (uintptr_t)arg[0];
    uintptr_t self = (uintptr_t)pthread_self();
    return word >= self && word - self < 4096 && word % sizeof(int) == 0 &&
           __atomic_load_n((const int *)word, __ATOMIC_RELAXED) == me;
}

#ifndef FUTEX_LOCK_PI2
#define FUTEX_LOCK_PI2 13
#endif

/* 1 when thread tid sleeps in a private futex wait without a timeout (a
 * lock, a condition variable or a semaphore of this process): only another
 * thread of the process ends it. A process-shared wait (a join's among
 * them) may be ended by another process: not counted. */
static int waits_for_good(int tid)
{
    long nr;
    unsigned long long arg[4];
    if (sleeping_in(tid, &nr, arg) != 0 || nr != SYS_futex || arg[3] != 0 ||
        !(arg[1] & FUTEX_PRIVATE_FLAG))
        return 0;
    int op = (int)(arg[1] & FUTEX_CMD_MASK);
    return op == FUTEX_WAIT || op == FUTEX_WAIT_BITSET || op == FUTEX_LOCK_PI ||
           op == FUTEX_LOCK_PI2 || op == FUTEX_WAIT_REQUEUE_PI;
}

/* How long thread tid has run so far (ns, from schedstat's first field);
 * -1 where the kernel does not say. */
static long long ran(int tid)
{
    char text[128];
    return task_read(tid, "schedstat", text, sizeof text) == 0 ? strtoll(text, NULL, 10) : -1;
}

enum { MAX_THREADS = 4096 };

/* Every thread of the process but this one, with how long each has run,
 * into tid and time (at most MAX_THREADS); the count, or -1 where one of
 * them does not wait for good or there are more. */
static int asleep(int me, int *tid, long long *time)
{
    int fd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    DIR *dir = fdopendir(fd);
    if (!dir) {
        close(fd);
        return -1;
    }
    int n = 0;
    for (struct dirent *e; (e = readdir(dir));) {
        int t = atoi(e->d_name);
        if (t <= 0 || t == me)
            continue;
        if (n == MAX_THREADS || !waits_for_good(t)) {
            n = -1;
            break;
        }
        tid[n] = t;
        time[n++] = ran(t);
    }
    closedir(dir);
    return n;
}

/* 1 when every other thread of the process sleeps in a futex wait without
 * a timeout, and all of them still do, without having run, 10 ms later:
 * none of them can wake another, so only this thread could wake the
 * lock's holder, and it cannot get past the lock. A thread awake, in a
 * timed wait or in any other system call (a read, a poll: something from
 * outside may wake it) may yet wake the holder: no answer then. */
static int all_asleep(int me)
{
    int *tid = malloc(2 * MAX_THREADS * sizeof *tid);
    long long *time = malloc(2 * MAX_THREADS * sizeof *time);
    int found = 0;
    int n = tid && time ? asleep(me, tid, time) : -1;
    struct timespec pause = {0, 10000000};
    if (n > 0 && nanosleep(&pause, NULL) == 0 &&
        asleep(me, tid + MAX_THREADS, time + MAX_THREADS) == n) {
        found = 1;
        for (int k = 0; k < n && found; k++)
            found = tid[k] == tid[MAX_THREADS + k] && time[k] == time[MAX_THREADS + k];
    }
    free(tid);
    free(time);
    return found;
}

/* What the last -1 of this thread found, for its messages. */
static __thread const char *holder_waits;

const char *lz_ldlock_holder(void)
{
    return holder_waits ? holder_waits : "a thread that waits for this one";
}

/* How the lock's holder waits for this thread, for a message. */
enum { JOINS = 1, ASLEEP = 2 };

/* This thread's first refused take since lz_ldlock_clear: the holder's
 * thread id (0: none) and how it waits. Kept as numbers, the reason
 * formatted when asked: a buffer here would be static TLS of every process
 * the runtime starts in, and more of it makes lazynccl-run restart more
 * processes (docs/concepts/the-same-job.md, "Static TLS"). */
static __thread int refused_by, refused_how;

static void describe(char *why, size_t size, int owner, int how)
{
    snprintf(why, size, "the dynamic linker's lock is held by thread %d, which %s, so nothing "
             "can be loaded now; make a first call before that thread takes the lock (a "
             "constructor or destructor runs under it)", owner,
             how == JOINS ? "waits for this thread to end (pthread_join)"
                          : "sleeps in a futex wait (a condition variable or a lock) while every "
                            "other thread of the process sleeps too: only this thread could wake it");
}

/* A take refused: the first since lz_ldlock_clear is kept. */
static void keep_refusal(int owner, int how)
{
    if (!refused_by) {
        refused_by = owner;
        refused_how = how;
    }
}

/* glibc's trylock and unlock of a recursive mutex (pthread_mutex_trylock.c,
 * pthread_mutex_unlock.c, kind PTHREAD_MUTEX_RECURSIVE_NP, which find_lock
 * checked), on the same fields: the C library's pthread_mutex_trylock is
 * GLIBC_2.34's since libpthread moved into it, which a wheel built for
 * older glibc (manylinux2014) must not need. 0 taken, else busy. */
static int try_take(pthread_mutex_t *m, int me)
{
    /* The fields below the lock word are the holder's alone; relaxed
     * atomics all the same, because the dynamic linker takes and lets go
     * of this lock in the C library's own code, which a thread sanitizer
     * does not see, so it would see no order between two holders. */
    if (__atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED) == me) {
        unsigned count = __atomic_load_n(&m->__data.__count, __ATOMIC_RELAXED);
        if (count + 1 == 0)
            return -1;
        __atomic_store_n(&m->__data.__count, count + 1, __ATOMIC_RELAXED);
        return 0;
    }
    int unlocked = 0;
    if (!__atomic_compare_exchange_n(&m->__data.__lock, &unlocked, 1, 0, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return -1;
    __atomic_store_n(&m->__data.__owner, me, __ATOMIC_RELAXED);
    __atomic_store_n(&m->__data.__count, 1, __ATOMIC_RELAXED);
    __atomic_store_n(&m->__data.__nusers, __atomic_load_n(&m->__data.__nusers, __ATOMIC_RELAXED) + 1,
                     __ATOMIC_RELAXED);
    return 0;
}

static void give_back(pthread_mutex_t *m)
{
    unsigned count = __atomic_load_n(&m->__data.__count, __ATOMIC_RELAXED) - 1;
    __atomic_store_n(&m->__data.__count, count, __ATOMIC_RELAXED);
    if (count != 0)
        return;
    __atomic_store_n(&m->__data.__owner, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&m->__data.__nusers, __atomic_load_n(&m->__data.__nusers, __ATOMIC_RELAXED) - 1,
                     __ATOMIC_RELAXED);
    /* 2: a thread sleeps in the futex, waiting for it (lll_unlock). */
    if (__atomic_exchange_n(&m->__data.__lock, 0, __ATOMIC_RELEASE) > 1)
        syscall(SYS_futex, &m->__data.__lock, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

/* This thread's id, as the lock's owner field holds it: asked of the
 * kernel once per search, where each of the search's calls into the
 * dynamic linker takes the lock (a system call apiece), and again in each
 * new epoch of the thread (lz_dl_epoch) and after the program's log
 * callback returned (lz_log_callbacks): either may have forked with _Fork,
 * which runs no fork handler, and an id taken in the parent would hold the
 * child's lock for a thread it does not have: every dlopen of the child
 * would wait for it (fork_without_handlers_from_a_callback). */
static __thread int tid_kept;
static __thread unsigned tid_epoch;
static __thread unsigned long tid_callbacks;

int lz_ldlock_tid(void)
{
    unsigned e = lz_dl_epoch();
    unsigned long callbacks = __atomic_load_n(&lz_log_callbacks, __ATOMIC_RELAXED);
    if (tid_kept && tid_epoch == e && tid_callbacks == callbacks)
        return tid_kept;
    int tid = (int)syscall(SYS_gettid);
    tid_kept = lz_dl_in_search() ? tid : 0;
    tid_epoch = e;
    tid_callbacks = callbacks;
    return tid;
}

/* Until the lock is free (take: until this thread holds it, trylock
 * succeeding), or its holder waits for this thread for good: 1 taken, 0
 * free or this thread's (not taken), -1 with the reason in why. */
static int settle(pthread_mutex_t *lock, int take, char *why, size_t size)
{
    /* A free lock is waited for without this thread's id (a system call). */
    int me = take ? lz_ldlock_tid() : 0;
    long pause_ns = 100000;
    for (;;) {
        if (take && try_take(lock, me) == 0)
            return 1; /* recursive: this thread's own hold counts once more */
        int owner = __atomic_load_n(&lock->__data.__owner, __ATOMIC_ACQUIRE);
        if (!take && owner == 0)
            return 0;
        if (!me)
            me = lz_ldlock_tid();
        if (!take && owner == me)
            return 0;
        if (owner == me)
            return 0; /* this thread's, and no more holds fit: as it stands */
        if (owner == 0) {
            /* Let go between the try and the look, or taken and not yet
             * owned: try again, after giving the processor away, for a
             * taker between its two steps is starved by a spinning crowd
             * (64 first calls at once). */
            sched_yield();
            continue;
        }
        /* Seen twice, a millisecond apart, the lock still that thread's:
         * a holder that let go and then joined (a dlopen returned before
         * its caller's join) is no deadlock. */
        struct timespec ms = {0, 1000000};
        if (joins_me(owner, me) && nanosleep(&ms, NULL) == 0 &&
            __atomic_load_n(&lock->__data.__owner, __ATOMIC_ACQUIRE) == owner && joins_me(owner, me)) {
            holder_waits = "a thread that waits for this one to end (pthread_join)";
            describe(why, size, owner, JOINS);
            if (take)
                keep_refusal(owner, JOINS);
            return -1;
        }
        /* A holder that waits some other way (a condition variable, a
         * lock) for what only this thread would do: seen when no other
         * thread of the process is awake to do it. */
        if (waits_for_good(owner) && all_asleep(me) &&
            __atomic_load_n(&lock->__data.__owner, __ATOMIC_ACQUIRE) == owner) {
            holder_waits = "a thread asleep in a futex wait (a condition variable or a lock) "
                           "that only this one could end (every other thread is asleep too)";
            describe(why, size, owner, ASLEEP);
            if (take)
                keep_refusal(owner, ASLEEP);
            return -1;
        }
        /* Any other holder is loading or unloading: dlopen would wait
         * for it too. Polled, so that a holder that starts to join this
         * thread later is still seen. */
        struct timespec ts = {0, pause_ns};
        nanosleep(&ts, NULL);
        /* At most 2 ms: the call goes on soon after the holder lets go (a
         * dlopen of a large library holds it for tens of milliseconds). */
        if (pause_ns < 2000000)
            pause_ns = pause_ns * 2 < 2000000 ? pause_ns * 2 : 2000000;
    }
}

int lz_ldlock_wait(char *why, size_t size)
{
    pthread_mutex_t *lock = ld_lock();
    return lock ? settle(lock, 0, why, size) : 0;
}

int lz_ldlock_take(void)
{
    pthread_mutex_t *lock = ld_lock();
    if (!lock)
        return 0;
    char why[512];
    return settle(lock, 1, why, sizeof why);
}

void lz_ldlock_give(int taken)
{
    pthread_mutex_t *lock = ld_lock();
    if (taken > 0 && lock)
        give_back(lock);
}

int lz_ldlock_refused(char *why, size_t size)
{
    if (refused_by && why)
        describe(why, size, refused_by, refused_how);
    return refused_by != 0;
}

lz_ldlock_mark lz_ldlock_clear(void)
{
    lz_ldlock_mark was = {refused_by, refused_how};
    refused_by = 0;
    return was;
}

void lz_ldlock_restore(lz_ldlock_mark mark)
{
    refused_by = mark.by;
    refused_how = mark.how;
}

const lz_dl_guard *lz_ldlock_guard(void)
{
    static const lz_dl_guard guard = {lz_ldlock_take, lz_ldlock_give};
    return &guard;
}
