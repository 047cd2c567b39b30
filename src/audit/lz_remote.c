/* SPDX-License-Identifier: MIT */
/* LD_AUDIT as a remote launcher hands it on (lz_remote.h). */
#include "lz_remote.h"
#include "lz_sys.h"
#include "common/lz_dropins.h"
#include "common/lz_nodecopy.h"

#include <elf.h>
#include <string.h>

/* The file name of the program the kernel ran (AT_EXECFN, the path execve
 * was given: no system call); for ld.so run as a command, ld.so's own,
 * which is no launcher. */
static const char *program_name(void)
{
    const char *path = (const char *)lz_sys_getauxval(AT_EXECFN), *name = path;
    for (const char *p = path; p && *p; p++)
        if (*p == '/')
            name = p + 1;
    return name;
}

void lz_remote_name_installed(void)
{
    const char *installed = lz_sys_getenv(LZ_AUDIT_INSTALLED_ENV);
    const char *name = installed && installed[0] == '/' ? program_name() : 0;
    if (!name || !lz_remote_launcher(name))
        return;
    size_t ilen = strlen(installed);
    char **env = lz_sys_environ();
    /* Every LD_AUDIT entry of the array: the program reads the first,
     * and hands on all of them. */
    for (long i = 0; env && env[i]; i++) {
        if (memcmp(env[i], "LD_AUDIT=", 9) != 0)
            continue;
        const char *old = env[i] + 9;
        /* Each of lazynccl's entries becomes the installed module; the
         * others stay as they are. At most as long as ilen per entry. */
        size_t entries = 1, len = strlen(old);
        for (const char *p = old; *p; p++)
            entries += *p == ':';
        size_t size = 9 + len + entries * ilen + 1;
        char *v = lz_sys_alloc(size);
        if (!v)
            return;
        memcpy(v, "LD_AUDIT=", 9);
        size_t at = 9;
        int changed = 0;
        for (const char *p = old;;) {
            size_t n = (size_t)(lz_sys_find(p, ':') - p);
            int swap = lz_audit_entry_ours(p, n) && !(n == ilen && memcmp(p, installed, n) == 0);
            memcpy(v + at, swap ? installed : p, swap ? ilen : n);
            at += swap ? ilen : n;
            changed |= swap;
            if (!p[n])
                break;
            v[at++] = ':';
            p += n + 1;
        }
        v[at] = '\0';
        if (!changed) {
            lz_sys_free(v, size);
            continue;
        }
        env[i] = v;
        lz_say("LD_AUDIT names the installed module in ", name, ", which starts processes on other nodes");
    }
}
