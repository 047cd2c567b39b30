/* SPDX-License-Identifier: MIT
 * lazynccl-run: run a command so that every program and library in its
 * process tree that asks for a served library (NCCL, NVRTC, nvJitLink, ...)
 * by SONAME or by path (PyTorch's preload) gets a lazy drop-in until the
 * real library is loaded, and that copy afterwards (docs/concepts/the-same-job.md).
 *
 * One native program, linked statically: the user's command is the next
 * and last exec (two in all), a debugger or profiler following every
 * process sees one short-lived process of ours, and under a wrapped parent
 * no audit module or preload is loaded into the launcher itself. It sets
 * the environment (run_env.c) and execs the command; everything else
 * happens in the command's processes, through the audit module. */
#include "run_env.h"
#include "run_dropins.h"
#include "run_family.h"
#include "run_find.h"
#include "run_modules.h"
#include "run_job.h"
#include "run_quote.h"
#include "elf/lz_elffile.h"
#include "elf/lz_elfpeek.h"
#include "elf/lz_ldcache.h"
#include "common/lz_cachefile.h"
#include "common/lz_loadreport.h"
#include "common/lz_tls.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *out)
{
    const char *more = run_family_names(1);
    fprintf(out,
        "usage: lazynccl-run [--only LIST] [--preload|--no-audit] [--quiet-32bit]\n"
        "                    [--node-copy|--no-node-copy] [--cache FILE] [--report DIR]\n"
        "                    [--] CMD [ARGS...]\n"
        "       lazynccl-run [OPTIONS] --print-env[=SHELL]\n"
        "Run CMD (and every process it starts) with lazy drop-ins of the NVIDIA libraries.\n"
        "  --only LIST    comma-separated library ids (each one's family: the newest\n"
        "                 major of its drop-ins here): %s%s%s,\n"
        "                 or drop-in file names such as libnvrtc.so.12;\n"
        "                 default: every family whose drop-in is here%s%s%s\n"
        "  --preload      preload the drop-ins and the redirector (which interposes\n"
        "                 dlopen) instead of installing the audit module\n"
        "  --no-audit     preload the drop-ins alone: a load of the real library by\n"
        "                 path (PyTorch's preload) then maps the real library\n"
        "  --quiet-32bit  name the audit module so that 32-bit x86 programs in the job\n"
        "                 find one that declines, instead of ld.so printing \"wrong ELF\n"
        "                 class\" for each; costs every process of the job a read of\n"
        "                 /proc/self/exe (docs/concepts/the-same-job.md)\n"
        "  --node-copy    name a copy of the audit module on this node's memory\n"
        "                 filesystem ($LAZYNCCL_NODE_DIR, else $XDG_RUNTIME_DIR or\n"
        "                 /dev/shm), so that no process opens it on a shared\n"
        "                 filesystem; the default in a task that srun or mpirun\n"
        "                 started (srun lazynccl-run CMD); srun, mpirun and the like\n"
        "                 below hand on the installed module, since the copy exists\n"
        "                 on this node alone (docs/guides/large-jobs.md)\n"
        "  --no-node-copy name the installed audit module, in a task too\n"
        "  --cache FILE   resolve each library once per job: the first process\n"
        "                 records where the dynamic linker found each library it\n"
        "                 loaded by name; later ones, on any node, open that file\n"
        "                 directly (the library directories must not change during\n"
        "                 the job; docs/guides/large-jobs.md)\n"
        "  --report DIR   each process appends what it loaded to DIR/HOST.PID.txt;\n"
        "                 lazynccl-info --reports DIR says whether every rank loaded\n"
        "                 the same file of each library\n"
        "  --print-env[=SHELL]\n"
        "                 print the variables lazynccl-run sets, as assignments for\n"
        "                 SHELL (sh, bash, zsh, ksh, dash: the default; or fish), and\n"
        "                 exit. The same with or without CMD: this is the job-script\n"
        "                 form, eval \"$(lazynccl-run --print-env)\", for processes that\n"
        "                 srun, mpirun or torchrun start (docs/concepts/the-same-job.md).\n"
        "Drop-ins are looked for in $LAZYNCCL_DROPIN_DIR, else from this program's\n"
        "own file: %s, or src/dropin in a build tree; the audit module\n"
        "(liblazynccl-audit.so) in $LAZYNCCL_AUDIT_MODULE, else above the drop-ins.\n"
        "Static TLS (jemalloc, TSan): a process whose libraries hold more than an\n"
        "audited process keeps as plain restarts itself once, sized, before it runs\n"
        "(glibc >= %s); with older glibc, one that could not start restarts with\n"
        "the drop-ins preloaded instead: docs/concepts/the-same-job.md.\n",
        run_family_names(0), *more ? ", " : "", more,
        *more ? ",\n                 but " : "", more, *more ? " (the suite's test libraries)" : "",
        RUN_DROPIN_REL, LZ_TLS_SINCE_VERSION);
}

static int fail(const char *why)
{
    fprintf(stderr, "lazynccl-run: %s\n", why);
    return 2;
}

/* Whether the C library programs here load (ld.so.cache's libc.so.6) has the
 * static-TLS tunable: 1, 0, or -1 when it cannot be read. This program is
 * static: its own C library says nothing of the system's. */
static int libc_has_tunable(void)
{
    /* No glibc-hwcaps subdirectory holds a C library (ldconfig lists
     * none): none passed. */
    char *path = lz_ldcache_path("/etc/ld.so.cache", "libc.so.6", NULL);
    int fd = path ? open(path, O_RDONLY | O_CLOEXEC) : -1;
    free(path);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    lz_elffile d = {0};
    char why[256];
    int rc = lz_elffile_read(fd, st.st_size, NULL, &d, why, sizeof why) == 0 ? 0 : -1;
    close(fd);
    for (size_t i = 0; rc == 0 && i < d.nnames; i++)
        if (strcmp(d.names[i], LZ_TLS_SINCE_SYMBOL) == 0)
            rc = 1;
    lz_elffile_free(&d);
    return rc;
}

static void print_env(const run_env *e, int shell)
{
    for (int i = 0; i < e->n; i++)
        run_quote_export(stdout, shell, e->vars[i].name, e->vars[i].value);
    if (libc_has_tunable() == 0)
        run_quote_comment(stdout,
            "This C library predates glibc " LZ_TLS_SINCE_VERSION " (no " LZ_TLS_TUNABLE "):\n"
            "a process whose libraries hold more static TLS than an audited process gets\n"
            "(jemalloc, TSan) restarts itself once with the drop-ins and the redirector\n"
            "preloaded instead of the audit module; to spare every rank that restart,\n"
            "use lazynccl-run --preload --print-env.");
}

int main(int argc, char **argv)
{
    const char *only = NULL, *cache = NULL, *report = NULL;
    int printing = 0, shell = 0;
    enum run_mode mode = RUN_AUDIT;
    int quiet32 = 0;
    enum run_node_copy node_copy = RUN_NODE_COPY_DEFAULT;
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--only") == 0) {
            if (i + 1 >= argc)
                return fail("--only needs a list (nccl,nvrtc,...)");
            only = argv[++i];
        } else if (strncmp(a, "--only=", 7) == 0) {
            only = a + 7;
        } else if (strcmp(a, "--print-env") == 0 || strncmp(a, "--print-env=", 12) == 0) {
            printing = 1;
            const char *name = a[11] == '=' ? a + 12 : (i + 1 < argc && run_quote_shell(argv[i + 1]) >= 0 ? argv[++i] : "sh");
            if ((shell = run_quote_shell(name)) < 0) {
                fprintf(stderr, "lazynccl-run: --print-env=%s: unknown shell (sh, bash, zsh, ksh, dash, fish)\n", name);
                return 2;
            }
        } else if (strcmp(a, "--cache") == 0 || strcmp(a, "--report") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "lazynccl-run: %s needs a %s\n", a, a[2] == 'c' ? "FILE" : "DIR");
                return 2;
            }
            *(a[2] == 'c' ? &cache : &report) = argv[++i];
        } else if (strcmp(a, "--preload") == 0) {
            mode = RUN_PRELOAD;
        } else if (strcmp(a, "--no-audit") == 0) {
            mode = RUN_NO_AUDIT;
        } else if (strcmp(a, "--quiet-32bit") == 0) {
            quiet32 = 1;
        } else if (strcmp(a, "--node-copy") == 0) {
            node_copy = RUN_NODE_COPY_ASKED;
        } else if (strcmp(a, "--no-node-copy") == 0) {
            node_copy = RUN_NODE_COPY_OFF;
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            return 0;
        } else if (strcmp(a, "--") == 0) {
            i++;
            break;
        } else if (a[0] == '-') {
            fprintf(stderr, "lazynccl-run: unknown option %s (try --help)\n", a);
            return 2;
        } else {
            break;
        }
    }
    if (!printing && i >= argc) {
        usage(stderr);
        return 2;
    }
    run_parts *p = calloc(1, sizeof *p);
    char why[PATH_MAX + 256];
    if (!p)
        return fail("out of memory");
    if (run_find_dir(p, why, sizeof why) < 0 || run_dropins_choose(p, only, why, sizeof why) < 0)
        return fail(why);
    if (run_dropins_unmappable(p)) {
        fprintf(stderr, "lazynccl-run: the drop-ins' directory %s is on a filesystem mounted noexec, where "
                        "the dynamic linker cannot map them: none stands in, and the command loads the real "
                        "libraries as it would plain\n", p->dir);
        p->ndropins = 0;
    }
    p->quiet32 = quiet32;
    p->node_copy = node_copy;
    p->printing = printing;
    run_modules_find(p);
    if (run_dropins_check(p, why, sizeof why) < 0)
        return fail(why);
    /* Printed variables may serve processes of other nodes, where no copy
     * was made: they name the module where it is. */
    if (!printing && mode == RUN_AUDIT)
        run_modules_nodecopy(p);
    run_env e;
    if (run_env_build(p, mode, &e) < 0)
        return fail("out of memory");
    char path[PATH_MAX];
    if (cache && mode != RUN_AUDIT)
        return fail("--cache needs the audit module (not --preload or --no-audit)");
    if (report && mode != RUN_AUDIT)
        return fail("--report needs the audit module (not --preload or --no-audit)");
    if (cache && (run_job_cache(cache, path, sizeof path, why, sizeof why) < 0 ||
                  run_env_add(&e, LZ_CACHE_ENV, path) < 0))
        return fail(why);
    if (report && (run_job_report(report, path, sizeof path, why, sizeof why) < 0 ||
                   run_env_add(&e, LZ_REPORT_ENV, path) < 0))
        return fail(why);
    if (printing) {
        print_env(&e, shell);
        return fflush(stdout) == 0 ? 0 : 1;
    }
    for (int v = 0; v < e.n; v++)
        if (setenv(e.vars[v].name, e.vars[v].value, 1) != 0)
            return fail("out of memory");
    execvp(argv[i], argv + i);
    int err = errno;
    fprintf(stderr, "lazynccl-run: %s: %s\n", argv[i], strerror(err));
    return err == ENOENT ? 127 : 126;
}
