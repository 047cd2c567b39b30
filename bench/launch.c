/* SPDX-License-Identifier: MIT
 * What lazynccl-run costs before the command runs (docs/concepts/performance.md,
 * "Launcher"): ROUNDS pairs of spawns, `CMD` and `lazynccl-run CMD`, in a
 * drawn order each round, from a parent the wrapper has not reached.
 * Prints the median of each and the median of the pairs' differences;
 * never passes or fails.
 *   launch LAZYNCCL_RUN [ROUNDS] [CMD]      (CMD: /bin/true) */
#include "measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern char **environ;

/* Milliseconds from spawn to the child's exit; negative when it failed. */
static double spawn_ms(char **argv)
{
    return spawn_ns(argv, environ) / 1e6;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: launch LAZYNCCL_RUN [ROUNDS] [CMD]\n");
        return 2;
    }
    int rounds = argc > 2 ? atoi(argv[2]) : 500;
    char *cmd = argc > 3 ? argv[3] : "/bin/true";
    char *bare[] = {cmd, NULL}, *wrapped[] = {argv[1], cmd, NULL};
    double *b = calloc((size_t)rounds, sizeof *b), *w = calloc((size_t)rounds, sizeof *w),
           *d = calloc((size_t)rounds, sizeof *d);
    if (!b || !w || !d || rounds < 1)
        return 2;
    srand(1);
    for (int i = 0; i < 20; i++) /* warm the page cache and the CPU's frequency */
        spawn_ms(bare), spawn_ms(wrapped);
    for (int i = 0; i < rounds; i++) {
        int first = rand() & 1;
        double x = first ? spawn_ms(wrapped) : spawn_ms(bare);
        double y = first ? spawn_ms(bare) : spawn_ms(wrapped);
        b[i] = first ? y : x;
        w[i] = first ? x : y;
        if (b[i] < 0 || w[i] < 0) {
            fprintf(stderr, "launch: a spawn failed\n");
            return 1;
        }
        d[i] = w[i] - b[i];
    }
    double mb = median(b, rounds), mw = median(w, rounds), md = median(d, rounds);
    printf("%s %.3f ms\nlazynccl-run %s %.3f ms\ndifference %.3f ms\nratio %.3f\n", cmd, mb, cmd, mw, md,
           mw / mb);
    return 0;
}
