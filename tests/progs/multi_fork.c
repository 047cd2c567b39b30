/* SPDX-License-Identifier: MIT
 * fork() while a thread makes the first calls of several shims.
 *
 *   multi_fork ORDER RUNS [CHILDREN [SPREAD_US [GAP_US]]]
 *
 * ORDER is a permutation of "ncv" (n NCCL, c NVRTC, v nvJitLink): the order
 * in which a thread makes the three first calls. Each of RUNS fresh worker
 * processes starts that thread, waits a delay spread over 0..SPREAD_US
 * (default 4000) and forks CHILDREN (default 8) children GAP_US (default
 * 300) apart; each child calls all three and checks the answers against
 * those of a fresh process, under a 5 s alarm. Which shim serves NCCL is
 * the build's choice: the shared shim, or an amalgamation compiled into
 * this program (-DAMALG_NCCL; its control API is app_lazynccl_*).
 * Prints "children=N ok=N refused=N wrong=N hung=N crashed=N" and the first
 * message of each kind, and exits 0 when nothing hung, crashed or was wrong. */
#include <nccl.h>
#include <nvJitLink.h>
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

#ifdef AMALG_NCCL
const char *app_lazynccl_last_error(void);
#define nccl_last_error app_lazynccl_last_error
#else
#define nccl_last_error lazynccl_last_error
#endif

enum { OK, REFUSED, WRONG, HUNG, CRASHED, NKINDS };
static const char *kind_name[NKINDS] = {"ok", "refused", "wrong", "hung", "crashed"};

static const char *order = "ncv";
static int want[3];

/* The answer of library c ('n', 'c', 'v'): -1 when the call failed. */
static int answer(char c)
{
    int v = -1, major = 0, minor = 0;
    switch (c) {
    case 'n':
        return ncclGetVersion(&v) == ncclSuccess ? v : -1;
    case 'c':
        return nvrtcVersion(&major, &minor) == NVRTC_SUCCESS ? major * 1000 + minor : -1;
    default:
        return nvJitLinkVersion(&major, &minor) == NVJITLINK_SUCCESS ? major * 1000 + minor
                                                                      : -1;
    }
}

static const char *why(char c)
{
    const char *e = c == 'n' ? nccl_last_error() : c == 'c' ? lazynvrtc_last_error()
                                                             : lazynvjitlink_last_error();
    return e ? e : "(no message)";
}

static void *first_calls(void *arg)
{
    (void)arg;
    for (const char *c = order; *c; c++)
        answer(*c);
    return NULL;
}

/* A child: exit code is the kind; the message goes to fd. */
static int child(int fd)
{
    alarm(getenv("MF_ALARM") ? (unsigned)atoi(getenv("MF_ALARM")) : 5);
    int kind = OK;
    char msg[600] = "";
    for (int i = 0; i < 3; i++) {
        char c = "ncv"[i];
        int v = answer(c);
        if (v == want[i])
            continue;
        const char *w = why(c);
        int refused = v < 0 && strstr(w, "forked") != NULL;
        if (kind == OK || (kind == REFUSED && !refused)) {
            kind = refused ? REFUSED : WRONG;
            snprintf(msg, sizeof msg, "%c: got %d, want %d: %.400s", c, v, want[i], w);
        }
    }
    for (char *q = msg; *q; q++)
        if (*q == '\n')
            *q = '|'; /* one line per child in the worker's report */
    if (kind != OK)
        (void)!write(fd, msg, strlen(msg));
    return kind;
}

static void sleep_us(long us)
{
    struct timespec ts = {us / 1000000, (us % 1000000) * 1000};
    nanosleep(&ts, NULL);
}

/* One worker process: counts[kind] per child; first messages into msgs. */
static void worker(long delay_us, int nchildren, long gap_us, int fd)
{
    pthread_t t;
    pthread_create(&t, NULL, first_calls, NULL);
    sleep_us(delay_us);
    pid_t kids[64];
    int pipes[64][2];
    for (int k = 0; k < nchildren; k++) {
        if (pipe(pipes[k]) != 0)
            _exit(100);
        fflush(NULL);
        kids[k] = fork();
        if (kids[k] == 0) {
            close(pipes[k][0]);
            _exit(child(pipes[k][1]));
        }
        close(pipes[k][1]);
        if (gap_us)
            sleep_us(gap_us);
    }
    for (int k = 0; k < nchildren; k++) {
        int status = 0;
        waitpid(kids[k], &status, 0);
        int kind = WIFEXITED(status) ? WEXITSTATUS(status)
                   : WTERMSIG(status) == SIGALRM ? HUNG : CRASHED;
        if (kind >= NKINDS)
            kind = CRASHED;
        char msg[600];
        ssize_t n = read(pipes[k][0], msg, sizeof msg - 1);
        msg[n > 0 ? n : 0] = '\0';
        close(pipes[k][0]);
        if (kind == CRASHED && !msg[0] && WIFSIGNALED(status))
            snprintf(msg, sizeof msg, "killed by signal %d", WTERMSIG(status));
        else if (kind == CRASHED && !msg[0])
            snprintf(msg, sizeof msg, "exit status %d (the dynamic linker's own failure exits 127)",
                     WEXITSTATUS(status));
        if (kind == HUNG)
            snprintf(msg, sizeof msg, "no answer within 5 s (fork %ld us after the first call)",
                     delay_us + k * gap_us);
        char line[700];
        int len = snprintf(line, sizeof line, "%d %s\n", kind, msg);
        (void)!write(fd, line, (size_t)len);
    }
    pthread_join(t, NULL);
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: multi_fork ORDER RUNS [CHILDREN [SPREAD_US [GAP_US]]]\n");
        return 2;
    }
    order = argv[1];
    int runs = atoi(argv[2]);
    int nchildren = argc > 3 ? atoi(argv[3]) : 8;
    long spread = argc > 4 ? atol(argv[4]) : 4000;
    long gap = argc > 5 ? atol(argv[5]) : 300;
    if (nchildren < 1 || nchildren > 64)
        return 2;
    /* The right answers, from a fresh process. */
    int fds[2];
    if (pipe(fds) != 0)
        return 2;
    pid_t p = fork();
    if (p == 0) {
        int v[3] = {answer('n'), answer('c'), answer('v')};
        (void)!write(fds[1], v, sizeof v);
        _exit(0);
    }
    close(fds[1]);
    if (read(fds[0], want, sizeof want) != sizeof want || want[0] < 0 || want[1] < 0 ||
        want[2] < 0) {
        fprintf(stderr, "a fresh process could not call all three: nothing to race\n");
        return 2;
    }
    close(fds[0]);
    waitpid(p, NULL, 0);
    int counts[NKINDS] = {0};
    char first[NKINDS][700] = {{0}};
    for (int r = 0; r < runs; r++) {
        long delay = runs > 1 ? spread * r / (runs - 1) : 0;
        if (pipe(fds) != 0)
            return 2;
        pid_t w = fork();
        if (w == 0) {
            close(fds[0]);
            worker(delay, nchildren, gap, fds[1]);
            _exit(0);
        }
        close(fds[1]);
        FILE *f = fdopen(fds[0], "r");
        char line[700];
        int seen = 0;
        while (f && fgets(line, sizeof line, f)) {
            int kind = atoi(line);
            if (kind < 0 || kind >= NKINDS)
                continue;
            counts[kind]++;
            seen++;
            if (!first[kind][0])
                snprintf(first[kind], sizeof first[kind], "%s", strchr(line, ' ') + 1);
        }
        if (f)
            fclose(f);
        int status = 0;
        waitpid(w, &status, 0);
        if (seen < nchildren) {
            counts[CRASHED] += nchildren - seen;
            if (!first[CRASHED][0])
                snprintf(first[CRASHED], sizeof first[CRASHED], "worker died (status %d)\n",
                         status);
        }
    }
    printf("children=%d ok=%d refused=%d wrong=%d hung=%d crashed=%d\n", runs * nchildren,
           counts[OK], counts[REFUSED], counts[WRONG], counts[HUNG], counts[CRASHED]);
    for (int k = 1; k < NKINDS; k++)
        if (first[k][0])
            printf("first %s: %s", kind_name[k], first[k]);
    return counts[WRONG] || counts[HUNG] || counts[CRASHED] ? 1 : 0;
}
