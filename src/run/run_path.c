/* SPDX-License-Identifier: MIT */
/* Paths as the launcher builds and tests them (run_path.h). */
#include "run_path.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* snprintf that says whether it fit (a path cut short is no path). */
int run_path_fmt(char *out, size_t size, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(out, size, f, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < size;
}

int run_path_is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

int run_path_is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* path with its "dir/.." pairs taken out, in place: the drop-ins' directory
 * found from /proc/self/exe (the kernel's path: no link in it) needs no
 * realpath, whose readlink of every component is a round trip each to a
 * shared filesystem's metadata server. */
void run_path_drop_dotdot(char *path)
{
    char *out = path;
    for (const char *in = path; *in;) {
        const char *end = in + 1 + strcspn(in + 1, "/");
        if (end - in == 3 && in[1] == '.' && in[2] == '.' && out > path) {
            while (out > path && *--out != '/')
                ;
        } else if (!(end - in == 2 && in[1] == '.')) {
            memmove(out, in, (size_t)(end - in));
            out += end - in;
        }
        in = end;
    }
    if (out == path)
        *out++ = '/';
    *out = '\0';
}
