/* SPDX-License-Identifier: MIT */
/* A fork made from inside a first call (NCCL's log callback forks), in a
 * program whose own child fork handler, registered before the shims' (a
 * constructor that runs first), makes the first call of another library
 * (NVRTC) in the child. Prints the child's NVRTC answer, then NCCL's in
 * the parent and how the child ended; a child still waiting after 5 s
 * ends by SIGALRM. */
#define _GNU_SOURCE
#include <nccl.h>
#include <nvrtc.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void lazynccl_set_log_callback(void (*fn)(void *user, const char *line), void *user);

static int forked;
static pid_t kid = -1;

static void in_child(void)
{
    alarm(5);
    int major = 0, minor = 0;
    nvrtcResult rc = nvrtcVersion(&major, &minor);
    printf("child: nvrtc rc=%d major>0=%d\n", (int)rc, major > 0);
    fflush(stdout);
    _exit(0);
}

/* Before the shims' constructors (which run at the default priority). */
__attribute__((constructor(101))) static void early(void)
{
    pthread_atfork(NULL, NULL, in_child);
}

static void on_line(void *user, const char *line)
{
    (void)user, (void)line;
    if (!forked++)
        kid = fork();
}

int main(void)
{
    lazynccl_set_log_callback(on_line, NULL);
    int v = -1;
    int rc = ncclGetVersion(&v);
    int st = 0;
    if (kid > 0)
        waitpid(kid, &st, 0);
    printf("parent: rc=%d version=%d\n", rc, v);
    printf("child: %s\n", kid <= 0 ? "none" : WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "exited");
    return 0;
}
