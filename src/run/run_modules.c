/* SPDX-License-Identifier: MIT */
/* The audit module and the redirector a launch names (run_modules.h). */
#include "run_modules.h"
#include "run_nodecopy.h"
#include "run_path.h"
#include "common/lz_dropins.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where x86-64's ld.so is, and where the 32-bit one is when 32-bit
 * programs can run here at all. */
#if defined(__x86_64__)
#define RUN_LDSO "/lib64/ld-linux-x86-64.so.2"
#define RUN_LDSO32 "/lib/ld-linux.so.2"
#define RUN_HAS_LIB_DIR 1
#else
#define RUN_LDSO ""
#define RUN_LDSO32 ""
#define RUN_HAS_LIB_DIR 0
#endif

/* 1 when the system's ld.so expands $LIB to dir: the value is compiled into
 * ld.so, a string of its own (the search paths it also holds begin and end
 * with '/'). */
static int ldso_lib_is(const char *dir)
{
    int fd = open(RUN_LDSO, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0 || st.st_size > (64 << 20)) {
        if (fd >= 0)
            close(fd);
        return 0;
    }
    char *data = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (data == MAP_FAILED)
        return 0;
    char needle[64];
    int n = snprintf(needle, sizeof needle, "%c%s%c", 0, dir, 0);
    int found = n > 0 && (size_t)n < sizeof needle && memmem(data, (size_t)st.st_size, needle, (size_t)n) != NULL;
    munmap(data, (size_t)st.st_size);
    return found;
}

/* name beside the drop-ins (lz_dropins.h), or where env names it; listed,
 * the manifest's file (rel), taken as the build wrote it: nothing looked up. */
static void beside(const run_parts *p, const char *env, const char *name, const char *listed_rel,
                   char *out, char *tried)
{
    static const char *const rel[] = LZ_BESIDE_DROPINS;
    char cand[PATH_MAX];
    const char *given = env ? getenv(env) : NULL;
    out[0] = '\0';
    if (given && *given) {
        run_path_fmt(cand, sizeof cand, "%s", given);
    } else if (p->manifest.text) {
        if (listed_rel && run_path_fmt(out, PATH_MAX, "%s/%s", p->dir, listed_rel))
            run_path_drop_dotdot(out);
        else
            out[0] = '\0';
        if (tried)
            run_path_fmt(tried, PATH_MAX, "%s", out[0] ? out : p->dir);
        return;
    } else
        for (unsigned i = 0; i < sizeof rel / sizeof *rel; i++)
            if (run_path_fmt(cand, sizeof cand, "%s%s%s", p->dir, rel[i], name) && run_path_is_file(cand))
                break;
    if (tried)
        memcpy(tried, cand, sizeof cand);
    if (run_path_is_file(cand) && !realpath(cand, out))
        out[0] = '\0';
}

void run_modules_find(run_parts *p)
{
    beside(p, "LAZYNCCL_AUDIT_MODULE", LZ_AUDIT_FILE, p->manifest.audit, p->module, p->module_tried);
    beside(p, NULL, LZ_REDIRECT_FILE, p->manifest.redirect, p->redirector, NULL);
    /* ld.so expands $LIB in LD_AUDIT to its own library directory, so a
     * 32-bit process finds the module that declines quietly instead of
     * ld.so printing "wrong ELF class". But any token in LD_AUDIT makes
     * ld.so read /proc/self/exe in every process (for $ORIGIN): 4 % of a
     * /bin/true (docs/concepts/performance.md, "Process trees"), in every process
     * of the job, for a kind of program a CUDA job hardly runs. So the
     * module is named directly unless --quiet-32bit asks for the token;
     * the token form is also found where the inherited LD_AUDIT holds a
     * token, so that a nested launcher recognises its parent's entry
     * (finding it reads ld.so's file: 4 of a launch's page faults, paid
     * only there). Only where 32-bit programs can run (a
     * 32-bit ld.so is installed), where this system's ld.so is seen to
     * expand it as the copies beside the module are laid out (Debian's
     * lib/x86_64-linux-gnu), and not for a module the user named. */
    run_path_fmt(p->audit_entry, sizeof p->audit_entry, "%s", p->module);
    p->audit_lib_entry[0] = '\0';
    const char *given = getenv("LAZYNCCL_AUDIT_MODULE"), *inherited = getenv("LD_AUDIT");
    char *slash = strrchr(p->module, '/');
    char own[PATH_MAX], narrow[PATH_MAX];
    int wanted = p->quiet32 || (inherited && strstr(inherited, "$LIB"));
    if (RUN_HAS_LIB_DIR && wanted && p->module[0] && !(given && *given) && slash && access(RUN_LDSO32, F_OK) == 0 &&
        run_path_fmt(own, sizeof own, "%.*s/" LZ_AUDIT_LIB64 "%s", (int)(slash - p->module), p->module, slash) &&
        run_path_fmt(narrow, sizeof narrow, "%.*s/" LZ_AUDIT_LIB32 "%s", (int)(slash - p->module), p->module, slash) &&
        run_path_is_file(own) && run_path_is_file(narrow) && ldso_lib_is(LZ_AUDIT_LIB64))
        run_path_fmt(p->audit_lib_entry, sizeof p->audit_lib_entry, "%.*s/$LIB%s", (int)(slash - p->module), p->module,
            slash);
    if (p->quiet32 && p->audit_lib_entry[0])
        run_path_fmt(p->audit_entry, sizeof p->audit_entry, "%s", p->audit_lib_entry);
}

void run_modules_nodecopy(run_parts *p)
{
    const char *given = getenv("LAZYNCCL_AUDIT_MODULE");
    if ((given && *given) || !p->module[0] || strcmp(p->audit_entry, p->module) != 0)
        return;
    char why[PATH_MAX + 256];
    if (run_nodecopy(p->module, p->node_copy, p->node_module, sizeof p->node_module, why, sizeof why))
        run_path_fmt(p->audit_entry, sizeof p->audit_entry, "%s", p->node_module);
    else
        p->node_module[0] = '\0';
    if (why[0])
        fprintf(stderr, "lazynccl-run: %s\n", why);
}
