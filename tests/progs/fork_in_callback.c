/* SPDX-License-Identifier: MIT */
/* A first call whose log callback (log) or chooser (chooser) forks with
 * _Fork, which runs no fork handler (glibc 2.34), at its first line or
 * call; parent and child both let the first call go on. Prints each one's
 * result, the child's first ("child: rc=R version=V"), then how the child
 * ended; a child still waiting after 5 s ends by SIGALRM. */
#define _GNU_SOURCE
#include <nccl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void lazynccl_set_log_callback(void (*fn)(void *user, const char *line), void *user);
void lazynccl_set_chooser(void *(*fn)(void *user, char *path, size_t size), void *user);
extern pid_t _Fork(void);

static int forked, child;
static pid_t kid;

static void fork_once(void)
{
    if (forked++)
        return;
    pid_t p = _Fork();
    if (p == 0) {
        child = 1;
        alarm(5);
    } else {
        kid = p;
    }
}

static void on_line(void *user, const char *line)
{
    (void)user, (void)line;
    fork_once();
}

static void *choose(void *user, char *path, size_t size)
{
    (void)user, (void)path, (void)size;
    fork_once();
    return NULL; /* no answer: the usual search */
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    if (strcmp(argv[1], "log") == 0)
        lazynccl_set_log_callback(on_line, NULL);
    else
        lazynccl_set_chooser(choose, NULL);
    int v = -1;
    int rc = ncclGetVersion(&v);
    if (child) {
        printf("child: rc=%d version=%d\n", rc, v);
        fflush(stdout);
        _exit(0);
    }
    int st = 0;
    if (kid)
        waitpid(kid, &st, 0);
    printf("parent: rc=%d version=%d\n", rc, v);
    printf("child: %s\n", !kid ? "none" : WIFSIGNALED(st) ? strsignal(WTERMSIG(st)) : "exited");
    return 0;
}
