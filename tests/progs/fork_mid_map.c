/* SPDX-License-Identifier: MIT
 * A fork while another thread is inside dlopen's mapping phase, held there
 * for as long as the test likes: HELD is a library whose dependency is a
 * FIFO, so ld.so has marked r_debug RT_ADD and waits in open() for a writer.
 *
 *   fork_mid_map parent HELD FIFO    the parent holds a dlopen; the child,
 *                                    which never called NCCL in the parent,
 *                                    makes its first call
 *   fork_mid_map parent-threaded HELD FIFO   the same, the child running a
 *                                    second thread when it calls
 *   fork_mid_map child HELD FIFO     a child forked with the linker at rest
 *                                    holds a dlopen in one thread, calls
 *                                    NCCL in another, and a third lets the
 *                                    dlopen end 300 ms after it began
 * Each child prints its call's result; the parent prints its own. */
#include <lazynccl.h>
#include <nccl.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *held, *fifo;
/* How the held dlopen ended: 1 loaded, 0 failed, -1 not yet. Not dlerror's
 * string: it belongs to the thread, and is freed when the thread ends. */
static int held_loaded = -1;

/* r_debug as the dynamic linker updates it (through DT_DEBUG: a reference
 * to _r_debug would give this program a stale copy). */
static const struct r_debug *linker_state(void)
{
    for (const ElfW(Dyn) *d = _DYNAMIC; d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_DEBUG)
            return (const struct r_debug *)d->d_un.d_ptr;
    return NULL;
}

static void wait_mid_change(void)
{
    const struct r_debug *r = linker_state();
    while (r && __atomic_load_n(&r->r_state, __ATOMIC_ACQUIRE) == RT_CONSISTENT)
        usleep(1000);
}

static void *hold(void *arg)
{
    (void)arg;
    held_loaded = dlopen(held, RTLD_NOW) != NULL;
    return NULL;
}

/* Let the held dlopen go on: it reads an empty file and fails. */
static void release(void)
{
    int fd = open(fifo, O_WRONLY | O_CLOEXEC);
    if (fd >= 0)
        close(fd);
}

/* Started before the dlopen it ends (pthread_create waits for a dlopen). */
static void *release_later(void *arg)
{
    (void)arg;
    wait_mid_change();
    usleep(300 * 1000);
    release();
    return NULL;
}

static void *idle(void *arg)
{
    (void)arg;
    pause();
    return NULL;
}

static void call(const char *who)
{
    int v = -1;
    ncclResult_t rc = ncclGetVersion(&v);
    const char *e = lazynccl_last_error();
    printf("%s: rc=%d version=%d error=%s\n", who, (int)rc, v, rc == ncclSuccess ? "none" : e ? e : "?");
    fflush(stdout);
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    const char *mode = argv[1];
    held = argv[2];
    fifo = argv[3];
    pthread_t holder, helper;
    if (strcmp(mode, "child") == 0) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(20);
            pthread_create(&helper, NULL, release_later, NULL);
            pthread_create(&holder, NULL, hold, NULL);
            wait_mid_change();
            call("child");
            pthread_join(holder, NULL);
            pthread_join(helper, NULL);
            printf("child: held dlopen ended: %s\n", held_loaded == 0 ? "failed" : "loaded");
            fflush(stdout);
            _exit(0);
        }
        int st;
        waitpid(pid, &st, 0);
        printf("parent: child status %d\n", st);
        return 0;
    }
    pthread_create(&holder, NULL, hold, NULL);
    wait_mid_change();
    pid_t pid = fork();
    if (pid == 0) {
        alarm(20);
        if (strcmp(mode, "parent-threaded") == 0)
            pthread_create(&helper, NULL, idle, NULL);
        call("child");
        _exit(0);
    }
    int st;
    waitpid(pid, &st, 0);
    release();
    pthread_join(holder, NULL);
    printf("parent: child status %d, held dlopen %s\n", st, held_loaded == 0 ? "failed" : "loaded");
    call("parent");
    return 0;
}
