/* SPDX-License-Identifier: MIT
 * The control API's choices on NCCL, one per argument, in order:
 *   choose-path=P     a chooser that writes P (counts its calls)
 *   choose-handle=P   a chooser that dlopens P and returns the handle
 *   choose-none       a chooser that answers nothing
 *   adopt=P           dlopen P and adopt the handle
 *   adopt-next        adopt RTLD_NEXT (no object)
 *   resolve-all       bind every export now
 *   version           ncclGetVersion
 * Each prints one line; the last line says what is loaded and how. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <lazynccl_control.h>
#include <nccl.h>
#include <stdio.h>
#include <string.h>

static int calls;

static void *choose_path(void *user, char *path, size_t size)
{
    calls++;
    snprintf(path, size, "%s", (const char *)user);
    return NULL;
}

static void *choose_handle(void *user, char *path, size_t size)
{
    (void)path;
    (void)size;
    calls++;
    return dlopen((const char *)user, RTLD_NOW | RTLD_LOCAL);
}

static void *choose_none(void *user, char *path, size_t size)
{
    (void)user;
    (void)path;
    (void)size;
    calls++;
    return NULL;
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = strchr(a, '=') ? strchr(a, '=') + 1 : "";
        if (strncmp(a, "choose-path=", 12) == 0) {
            lazynccl_set_chooser(choose_path, (void *)v);
        } else if (strncmp(a, "choose-handle=", 14) == 0) {
            lazynccl_set_chooser(choose_handle, (void *)v);
        } else if (strcmp(a, "choose-none") == 0) {
            lazynccl_set_chooser(choose_none, NULL);
        } else if (strncmp(a, "adopt=", 6) == 0) {
            void *h = dlopen(v, RTLD_NOW | RTLD_LOCAL);
            int rc = h ? lazynccl_adopt(h) : -2;
            const char *e = lazynccl_last_error();
            printf("adopt rc=%d%s%s\n", rc, rc ? " last_error=" : "", rc && e ? e : "");
        } else if (strcmp(a, "adopt-next") == 0) {
            int rc = lazynccl_adopt(RTLD_NEXT);
            const char *e = lazynccl_last_error();
            printf("adopt rc=%d last_error=%s\n", rc, e ? e : "(none)");
        } else if (strcmp(a, "resolve-all") == 0) {
            char missing[8192];
            int n = lazynccl_resolve_all(missing, sizeof missing);
            printf("resolve_all=%d %s\n", n, missing);
        } else if (strcmp(a, "version") == 0) {
            int ver = 0;
            ncclResult_t rc = ncclGetVersion(&ver);
            printf("version rc=%d nccl=%d\n", (int)rc, ver);
        } else {
            fprintf(stderr, "unknown argument %s\n", a);
            return 2;
        }
    }
    const char *e = lazynccl_last_error();
    printf("loaded=%s step=%s chooser_calls=%d last_error=%s\n",
           lazynccl_loaded_path() ? lazynccl_loaded_path() : "(none)",
           lazynccl_loaded_step() ? lazynccl_loaded_step() : "(none)", calls, e ? e : "(none)");
    return 0;
}
