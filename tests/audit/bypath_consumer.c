/* SPDX-License-Identifier: MIT
 * A PyTorch-style consumer: it loads the real library by
 * absolute path first, as torch's _preload_cuda_deps does with ctypes, then
 * an object that needs the library by SONAME (DT_NEEDED, as libtorch_cuda.so
 * does) and calls it.
 *
 *   bypath_consumer LIB_PATH NEEDER_SO FUNC [fork|threads|tool-*]
 *
 * FUNC is the needer's function: nccl_version, nvrtc_compile or jit_link
 * (an int: the answer, or negative on failure). Prints the real library
 * files mapped after each step ("real after X: a b" / "real after X: -")
 * and the answer; with "fork", a child makes the first call too and prints
 * what it mapped; with "threads", 16 threads make the first call together
 * and "threads agree N" counts those that got the main thread's answer;
 * with "tool-before" or "tool-after", a preloaded tool (tool_inject.c)
 * re-opens the library by path before the first call (LIB_PATH) or after
 * it (tool-after: the loaded file, as /proc/self/maps names it;
 * tool-same-string: LIB_PATH again; tool-canonical: LIB_PATH made real). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../progs/maps.h"

static void show(const char *when)
{
    static const char *const stems[] = {"/libnccl.so", "/libnvrtc.so", "/libnvrtc-builtins.so",
                                        "/libnvJitLink.so", NULL};
    lz_maps_print("real", when, stems);
}

static int (*call)(void);
static pthread_barrier_t go;

static void *racer(void *arg)
{
    pthread_barrier_wait(&go);
    *(int *)arg = call();
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 4)
        return 2;
    void *pre = dlopen(argv[1], RTLD_NOW | RTLD_GLOBAL);
    if (!pre) {
        printf("preload failed: %s\n", dlerror());
        return 3;
    }
    show("preload");
    void *needer = dlopen(argv[2], RTLD_NOW);
    if (!needer) {
        printf("needer failed: %s\n", dlerror());
        return 3;
    }
    show("needer");
    int (*fn)(void) = (int (*)(void))dlsym(needer, argv[3]);
    if (!fn)
        return 3;
    int forking = argc > 4 && strcmp(argv[4], "fork") == 0;
    if (argc > 4 && strcmp(argv[4], "threads") == 0) {
        enum { N = 16 };
        pthread_t th[N];
        int got[N];
        call = fn;
        pthread_barrier_init(&go, NULL, N);
        for (int i = 0; i < N; i++)
            pthread_create(&th[i], NULL, racer, &got[i]);
        for (int i = 0; i < N; i++)
            pthread_join(th[i], NULL);
        int same = 0, want = fn();
        for (int i = 0; i < N; i++)
            same += got[i] == want && want > 0;
        printf("threads agree %d\n", same);
    }
    if (forking) {
        fflush(stdout);
        pid_t c = fork();
        if (c == 0) {
            printf("child answer %d\n", fn());
            show("child call");
            _exit(0);
        }
        int st = 0;
        waitpid(c, &st, 0);
    }
    void (*tool)(const char *, const char *) =
        (void (*)(const char *, const char *))dlsym(RTLD_DEFAULT, "tool_hook");
    const char *when = argc > 4 ? argv[4] : "";
    const char *symbol = strstr(argv[1], "nvrtc") ? "nvrtcVersion"
                         : strstr(argv[1], "nvJitLink") ? "nvJitLinkVersion" : "ncclGetVersion";
    if (tool && strcmp(when, "tool-before") == 0)
        tool(argv[1], symbol);
    int v = fn();
    printf("answer %d\n", v);
    show("call");
    if (tool && strcmp(when, "tool-after") == 0) {
        /* As a tool finds it: the loaded file, by the kernel's name. */
        static const char *const stems[] = {"/libnccl.so", "/libnvrtc.so", "/libnvJitLink.so", NULL};
        char files[4][4096];
        if (lz_maps_real(stems, files, 4) >= 1)
            tool(files[0], symbol);
        show("tool");
    }
    if (tool && strcmp(when, "tool-same-string") == 0) {
        tool(argv[1], symbol);
        show("tool");
    }
    char canonical[4096];
    if (tool && strcmp(when, "tool-canonical") == 0 && realpath(argv[1], canonical)) {
        tool(canonical, symbol);
        show("tool");
    }
    if (v < 0) {
        const char *(*err)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "lazynccl_last_error");
        if (err && err())
            printf("error: %s\n", err());
    }
    return 0;
}
