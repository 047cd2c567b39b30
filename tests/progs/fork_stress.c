/* SPDX-License-Identifier: MIT
 * fork() at spread moments of a real first load.
 *
 *   fork_stress nccl|nvrtc RUNS
 *
 * Times one first load, then RUNS times: a fresh worker process starts the
 * first call in a thread and, after a delay spread evenly over 0..1.25x that
 * time, forks; the child makes the call itself and checks the answer. Prints
 * "runs=N ok=N failed=N crashed=N load_ms=X" and the first failure, and
 * exits 0 only when every child answered right. */
#include <nccl.h>
#include <nvrtc.h>

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <lazynccl.h>

static int use_nvrtc;
static int want_version;

static int call(int *out)
{
    if (use_nvrtc) {
        int major = 0, minor = 0;
        nvrtcResult r = nvrtcVersion(&major, &minor);
        *out = major * 1000 + minor;
        return r == NVRTC_SUCCESS;
    }
    return ncclGetVersion(out) == ncclSuccess;
}

static const char *why(void)
{
    const char *e = use_nvrtc ? lazynvrtc_last_error() : lazynccl_last_error();
    return e ? e : "(no message)";
}

static void *first_call(void *arg)
{
    int v;
    (void)arg;
    call(&v);
    return NULL;
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* One worker: 0 ok, 1 the child's call failed, 2 the child crashed or hung. */
static int worker(long delay_us, int report)
{
    pthread_t t;
    pthread_create(&t, NULL, first_call, NULL);
    struct timespec ts = {delay_us / 1000000, (delay_us % 1000000) * 1000};
    nanosleep(&ts, NULL);
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        alarm(30); /* a hang is a crash */
        int v = -1;
        int ok = call(&v) && v == want_version;
        if (!ok && report)
            fprintf(stderr, "child (fork after %ld us): version %d, want %d: %s\n", delay_us, v,
                    want_version, why());
        _exit(ok ? 0 : 1);
    }
    int status = 0;
    waitpid(child, &status, 0);
    pthread_join(t, NULL);
    if (WIFSIGNALED(status)) {
        if (report)
            fprintf(stderr, "child (fork after %ld us): killed by signal %d\n", delay_us,
                    WTERMSIG(status));
        return 2;
    }
    return WEXITSTATUS(status) == 0 ? 0 : 1;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    use_nvrtc = strcmp(argv[1], "nvrtc") == 0;
    int runs = atoi(argv[2]);
    /* The answer and the time of a first load, in a fresh process. */
    int fds[2];
    if (pipe(fds) != 0)
        return 2;
    pid_t p = fork();
    if (p == 0) {
        double t0 = now_ms();
        int v = -1;
        int ok = call(&v);
        double ms = now_ms() - t0;
        int msg[2] = {ok ? v : -1, (int)(ms * 1000)};
        (void)!write(fds[1], msg, sizeof msg);
        _exit(0);
    }
    int msg[2] = {-1, 0};
    (void)!read(fds[0], msg, sizeof msg);
    waitpid(p, NULL, 0);
    want_version = msg[0];
    if (want_version < 0) {
        fprintf(stderr, "the first load failed: nothing to race\n");
        return 2;
    }
    long span_us = (long)msg[1] * 5 / 4 + 1;
    int counts[3] = {0, 0, 0}, reported = 0;
    for (int r = 0; r < runs; r++) {
        long delay = span_us * r / (runs > 1 ? runs - 1 : 1);
        pid_t w = fork();
        if (w == 0)
            _exit(worker(delay, reported < 5));
        int status = 0;
        waitpid(w, &status, 0);
        int verdict = WIFEXITED(status) ? WEXITSTATUS(status) : 2;
        counts[verdict > 2 ? 2 : verdict]++;
        reported += verdict != 0;
    }
    printf("runs=%d ok=%d failed=%d crashed=%d load_ms=%.1f\n", runs, counts[0], counts[1],
           counts[2], msg[1] / 1000.0);
    return counts[1] || counts[2] ? 1 : 0;
}
