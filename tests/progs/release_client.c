/* SPDX-License-Identifier: MIT
 * Libraries released together, loaded in the order the arguments name
 * ("nvrtc", "nvjitlink", "cublaslt", "cublas"): each one's version function
 * called through its shim, then one line of what was loaded, from where,
 * and on failure why. "open=PATH" dlopens PATH (as named), "chdir=DIR"
 * changes the current directory. */
#include <dlfcn.h>
#include <unistd.h>
#include <cublasLt.h>
#include <cublas_api.h>
#include <lazynccl.h>
#include <nvJitLink.h>
#include <nvrtc.h>
#include <stdio.h>
#include <string.h>

static void say(const char *what, int rc, long version, const char *path, const char *step,
                const char *error)
{
    printf("%s rc=%d version=%ld loaded=%s step=%s", what, rc, version, path ? path : "(none)",
           step ? step : "(none)");
    if (rc)
        printf(" last_error=%s", error ? error : "(none)");
    printf("\n");
}

int main(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        int rc = 0;
        long v = 0;
        if (strncmp(argv[i], "open=", 5) == 0) {
            if (!dlopen(argv[i] + 5, RTLD_NOW | RTLD_GLOBAL))
                return 3;
        } else if (strncmp(argv[i], "chdir=", 6) == 0) {
            if (chdir(argv[i] + 6) != 0)
                return 4;
        } else if (strcmp(argv[i], "nvrtc") == 0) {
            int a = 0, b = 0;
            rc = nvrtcVersion(&a, &b);
            say("nvrtc", rc, a * 1000 + b * 10, lazynvrtc_loaded_path(), lazynvrtc_loaded_step(),
                lazynvrtc_last_error());
        } else if (strcmp(argv[i], "nvjitlink") == 0) {
            unsigned a = 0, b = 0;
            rc = nvJitLinkVersion(&a, &b);
            say("nvjitlink", rc, (long)(a * 1000 + b * 10), lazynvjitlink_loaded_path(),
                lazynvjitlink_loaded_step(), lazynvjitlink_last_error());
        } else if (strcmp(argv[i], "cublaslt") == 0) {
            v = (long)cublasLtGetVersion();
            say("cublaslt", v ? 0 : 1, v, lazycublaslt_loaded_path(), lazycublaslt_loaded_step(),
                lazycublaslt_last_error());
        } else if (strcmp(argv[i], "cublas") == 0) {
            int major = 0;
            rc = cublasGetProperty(MAJOR_VERSION, &major);
            say("cublas", rc, major, lazycublas_loaded_path(), lazycublas_loaded_step(),
                lazycublas_last_error());
        } else {
            fprintf(stderr, "unknown argument %s\n", argv[i]);
            return 2;
        }
    }
    return 0;
}
