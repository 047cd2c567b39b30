/* SPDX-License-Identifier: MIT */
/* LD_AUDIT as a remote launcher hands it on (lz_remote.h). */
#include "lz_remote.h"
#include "lz_sys.h"
#include "common/lz_nodecopy.h"

#include <elf.h>
#include <string.h>

/* The file name of the program the kernel ran (AT_EXECFN, the path execve
 * was given: no system call); for ld.so run as a command, ld.so's own,
 * which is no launcher. */
static const char *program_name(void)
{
    const char *path = (const char *)lz_sys_getauxval(AT_EXECFN);
    return path ? lz_sys_base_name(path) : 0;
}

void lz_remote_name_installed(void)
{
    const char *installed = lz_sys_getenv(LZ_AUDIT_INSTALLED_ENV);
    size_t ilen = installed ? strlen(installed) : 0;
    const char *name = lz_nodecopy_installed_ok(installed, ilen) ? program_name() : 0;
    if (!name || !lz_remote_launcher(name))
        return;
    char **env = lz_sys_environ();
    /* Every LD_AUDIT entry of the array: the program reads the first,
     * and hands on all of them. */
    for (long i = 0; env && env[i]; i++) {
        if (memcmp(env[i], "LD_AUDIT=", 9) != 0)
            continue;
        size_t size = 9 + lz_nodecopy_rewrite_size(env[i] + 9, ilen);
        char *v = lz_sys_alloc(size);
        if (!v)
            return;
        memcpy(v, "LD_AUDIT=", 9);
        if (!lz_nodecopy_handoff(env[i] + 9, installed, ilen, v + 9)) {
            lz_sys_free(v, size);
            continue;
        }
        env[i] = v;
        lz_say("LD_AUDIT names the installed module in ", name, ", which starts processes on other nodes");
    }
}
