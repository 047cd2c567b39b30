/* SPDX-License-Identifier: MIT
 * What one process of a wrapped job pays (docs/concepts/performance.md, "Process
 * trees"), closer than a shell's loop can tell: ROUNDS rounds, each
 * spawning CMD once under every environment given, in a rotated order,
 * from a parent none of them reaches. Prints each variant's median and the
 * median of its rounds' own ratios to the first variant; never passes or
 * fails.
 *   spawnpair ROUNDS CMD [ARGS...] -- LABEL=VARS LABEL=VARS...
 * VARS: NAME=VALUE assignments separated by '|' (nothing: a bare
 * environment); every variant gets PATH=/usr/bin:/bin and nothing else. */
#include "measure.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_VARIANTS 16
#define MAX_VARS 16

/* Microseconds from spawn to exit; negative when the command failed. */
static double spawn_us(char **argv, char **envp)
{
    return spawn_ns(argv, envp) / 1e3;
}

int main(int argc, char **argv)
{
    int sep = 3;
    while (sep < argc && strcmp(argv[sep], "--") != 0)
        sep++;
    int nv = argc - sep - 1;
    if (sep >= argc || nv < 2 || nv > MAX_VARIANTS || atoi(argv[1]) < 1) {
        fprintf(stderr, "usage: spawnpair ROUNDS CMD [ARGS...] -- LABEL=VARS LABEL=VARS... (2 to %d variants)\n",
                MAX_VARIANTS);
        return 2;
    }
    int rounds = atoi(argv[1]);
    char **cmd = argv + 2;
    argv[sep] = NULL; /* the command's argument list ends there */
    argv += sep - 2; /* variants at argv[3...] as before */
    const char *label[MAX_VARIANTS];
    char *envs[MAX_VARIANTS][MAX_VARS + 2];
    for (int v = 0; v < nv; v++) {
        char *spec = strdup(argv[v + 3]), *eq = strchr(spec, '=');
        if (!eq) {
            fprintf(stderr, "spawnpair: %s: LABEL=VARS expected\n", argv[v + 3]);
            return 2;
        }
        *eq = '\0';
        label[v] = spec;
        int k = 0;
        envs[v][k++] = "PATH=/usr/bin:/bin";
        for (char *save, *a = strtok_r(eq + 1, "|", &save); a && k <= MAX_VARS; a = strtok_r(NULL, "|", &save))
            envs[v][k++] = a;
        envs[v][k] = NULL;
    }
    double *t[MAX_VARIANTS], *r[MAX_VARIANTS];
    for (int v = 0; v < nv; v++)
        if (!(t[v] = calloc((size_t)rounds, sizeof **t)) || !(r[v] = calloc((size_t)rounds, sizeof **r)))
            return 2;
    srand(1);
    for (int i = 0; i < 20; i++) /* warm the page cache and the CPU's frequency */
        for (int v = 0; v < nv; v++)
            spawn_us(cmd, envs[v]);
    for (int i = 0; i < rounds; i++) {
        int first = rand() % nv;
        for (int j = 0; j < nv; j++) {
            int v = (first + j) % nv;
            if ((t[v][i] = spawn_us(cmd, envs[v])) < 0) {
                fprintf(stderr, "spawnpair: %s under %s failed\n", cmd[0], label[v]);
                return 1;
            }
        }
        for (int v = 0; v < nv; v++)
            r[v][i] = t[v][i] / t[0][i];
    }
    printf("%d rounds of", rounds);
    for (char **a = cmd; *a; a++)
        printf(" %s", *a);
    printf("; each ratio the median of the rounds' own ratios to %s\n", label[0]);
    for (int v = 0; v < nv; v++)
        printf("  %-58s %8.1f us  %.4fx\n", label[v], median(t[v], rounds), median(r[v], rounds));
    return 0;
}
