/* SPDX-License-Identifier: MIT
 * 64 threads each dlopen libnccl.so.2 by name and call ncclGetVersion at
 * once; prints how many failed ("bad=N"). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
static int bad;
static void *w(void *a) { (void)a; void *h = dlopen("libnccl.so.2", RTLD_NOW); int (*g)(int *) = h ? (int (*)(int *))dlsym(h, "ncclGetVersion") : 0; int v = 0; if (!g || g(&v) != 0) __atomic_add_fetch(&bad, 1, __ATOMIC_RELAXED); return 0; }
int main(void) { pthread_t t[64]; for (int i = 0; i < 64; i++) pthread_create(&t[i], 0, w, 0); for (int i = 0; i < 64; i++) pthread_join(t[i], 0); printf("bad=%d\n", bad); return 0; }
