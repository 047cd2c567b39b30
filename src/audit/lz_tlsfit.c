/* SPDX-License-Identifier: MIT */
/* Static TLS for every audited process (lz_tlsfit.h; the rule, lz_tls.h).
 *
 * Why here and not in lazynccl-run: glibc fixes an audited process's static
 * TLS before it maps the process's libraries, from GLIBC_TUNABLES as the
 * process was started, so only whoever execs a program can size it — and
 * in a job that is srun's slurmstepd, mpirun's orted, torchrun, a shell,
 * none of which lazynccl-run sees. One size for the whole job would do, at
 * a price every thread of every process pays (docs/concepts/the-same-job.md, "Static
 * TLS", measures it). Instead each process checks itself as ld.so maps its
 * libraries (la_objopen comes before any relocation, so before glibc's
 * "cannot allocate memory in static TLS block") and, only where its TLS
 * would not fit, execs itself again, sized for exactly what it holds. No
 * constructor has run and no thread exists. The raised tunable stays in
 * the environment, so the process's children that hold the same libraries
 * (a job that preloads jemalloc everywhere) start sized, without a restart
 * of their own. The restart carries no marker: the restarted process finds
 * its TLS fits (the tunable it was given is what it needs), so it goes on
 * as it was started, its environment block as the kernel wrote it. */
#include "lz_tlsfit.h"
#include "lz_sbuf.h"
#include "common/lz_dropins.h"
#include "common/lz_tls.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <unistd.h>
#include <linux/limits.h> /* PATH_MAX: a freestanding <limits.h> (clang's) has none */
#include <link.h>
#include <string.h>

#define TUNABLES "GLIBC_TUNABLES"

static int counting = 1;        /* the start's objects are being mapped */
static unsigned long long need LZ_HOT_DATA; /* their TLS so far */
static int libc_seen LZ_HOT_DATA, has_tunable LZ_HOT_DATA;
static int acted LZ_HOT_DATA;

/* Where a script's own path can lie in argv: the kernel runs "#!" chains
 * five deep (binfmt_script, then four more), each adding its interpreter
 * and the one argument its line may give. */
#define LZ_SCRIPT_ARGS 11

static int starts(const char *s, const char *prefix)
{
    size_t n = strlen(prefix);
    return memcmp(s, prefix, n) == 0;
}


static int same_file(const char *path, const struct stat *running)
{
    struct stat st;
    return path && lz_sys_stat(path, &st) == 0 && st.st_dev == running->st_dev &&
           st.st_ino == running->st_ino;
}

/* N of an AT_EXECFN "/dev/fd/N" (fexecve) or "/dev/fd/N/name" (execveat
 * from a directory descriptor), and in *name what follows "N/" ("" for
 * fexecve); -1 for any other path. */
static long dev_fd(const char *fn, const char **name)
{
    const char *num = fn + sizeof "/dev/fd/" - 1, *p = num;
    long n = 0;
    if (!starts(fn, "/dev/fd/"))
        return -1;
    for (; *p >= '0' && *p <= '9' && n < 1 << 20; p++)
        n = n * 10 + (*p - '0');
    if (p == num || (*p && (*p != '/' || !p[1])))
        return -1;
    *name = *p ? p + 1 : "";
    return n;
}

/* A script started as fn: the kernel put each interpreter of its "#!"
 * chain (and the argument a line gives) before its path in argv, up to the
 * chain's depth's worth of entries; fn again with the arguments from its
 * path on. Returns only where fn is not among them. */
LZ_COLD static void exec_script(const char *fn, char **argv, char **envp)
{
    for (long i = 1; i < LZ_SCRIPT_ARGS && argv[i - 1] && argv[i]; i++)
        if (lz_sys_same(argv[i], fn)) {
            lz_sys_execve(fn, argv + i, envp);
            return;
        }
}

/* A program started by fexecve (AT_EXECFN "/dev/fd/N": a memfd, a file
 * opened close-on-exec) started so again, from descriptor N, so that its
 * AT_EXECFN and comm (the kernel's, from the file itself: "memfd:prog")
 * are a plain start's: N where it is still the running file, else the
 * running file opened there again, close-on-exec as it was. Returns only
 * where that cannot be done. */
LZ_COLD static void fexec_again(long n, char **argv, char **envp, const struct stat *running)
{
    struct stat st;
    if (fstat((int)n, &st) == 0) {
        if (st.st_dev == running->st_dev && st.st_ino == running->st_ino)
            lz_sys_fexecve((int)n, argv, envp);
        return;
    }
    int fd = lz_sys_open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    if (fd != n && lz_sys_dup_cloexec(fd, (int)n) == n) {
        lz_sys_fexecve((int)n, argv, envp);
        lz_sys_close((int)n);
    } else if (fd == n)
        lz_sys_fexecve(fd, argv, envp);
    lz_sys_close(fd);
}

/* A program started by execveat from a directory descriptor and a name
 * relative to it (AT_EXECFN "/dev/fd/N/name", comm the name's last part)
 * started so again: from N where it still holds that directory and name is
 * the running file there, else from the running file's directory opened
 * at N again, close-on-exec as it was (the file's path ending in name).
 * Returns only where that cannot be done. */
LZ_COLD static void execat_again(long n, const char *name, char **argv, char **envp, const struct stat *running)
{
    char path[PATH_MAX];
    lz_sbuf b = {path, 0, sizeof path, 0};
    struct stat st;
    if (fstat((int)n, &st) == 0) {
        lz_sbuf_put(&b, "/proc/self/fd/");
        lz_sbuf_put_num(&b, (unsigned long long)n);
        lz_sbuf_put(&b, "/");
        lz_sbuf_put(&b, name);
        if (S_ISDIR(st.st_mode) && !b.full && same_file(path, running))
            lz_sys_execveat((int)n, name, argv, envp);
        return;
    }
    long len = lz_sys_readlink("/proc/self/exe", path, sizeof path - 1);
    size_t nlen = strlen(name);
    if (len <= 0 || (size_t)len <= nlen || path[len - (long)nlen - 1] != '/' ||
        memcmp(path + len - (long)nlen, name, nlen) != 0)
        return;
    path[len - (long)nlen - 1] = '\0';
    int fd = lz_sys_open(len - (long)nlen - 1 ? path : "/", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        return;
    if (fd == n || lz_sys_dup_cloexec(fd, (int)n) == n)
        lz_sys_execveat((int)n, name, argv, envp);
    if (fd != n)
        lz_sys_close((int)n);
    lz_sys_close(fd);
}

/* Without /proc (a chroot, bwrap without --proc) the running file cannot
 * be compared with the one it was started as: the path the kernel was
 * given is taken as it (a file replaced there since is the one risk):
 * a descriptor of fexecve's still open, a script (its "#!": the kernel
 * puts its interpreter before the script again), or the program. Returns
 * only where none can be executed. */
LZ_COLD static void exec_without_proc(const char *fn, char **argv, char **envp)
{
    const char *name;
    if (starts(fn, "/dev/fd/")) {
        long n = dev_fd(fn, &name);
        struct stat st;
        if (n >= 0 && !*name && fstat((int)n, &st) == 0 && S_ISREG(st.st_mode))
            lz_sys_fexecve((int)n, argv, envp);
        return;
    }
    char head[2] = {0, 0};
    int fd = lz_sys_open(fn, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (pread(fd, head, sizeof head, 0) != (ssize_t)sizeof head)
            head[0] = 0;
        lz_sys_close(fd);
    }
    if (head[0] != '#' || head[1] != '!')
        lz_sys_execve(fn, argv, envp);
    else
        exec_script(fn, argv, envp);
}

/* Exec this process again as it was started, so that it is the same
 * process to everyone who looks (its comm, AT_EXECFN, /proc/self/exe and
 * argv are the kernel's from that path and those arguments): the file it
 * was started as (AT_EXECFN) with its arguments where that is the running
 * program; ld.so run as a command, by the path it was run by (its argv[0]:
 * ld.so has made AT_EXECFN the program's); for a script (AT_EXECFN is the
 * script, the running program its interpreter), the script with the
 * arguments from its path on, the kernel putting the interpreter before
 * them again; /proc/self/exe with the arguments as they are where none of
 * these can be had (the file moved). */
LZ_COLD static long exec_again(char **argv, char **envp)
{
    const char *fn = (const char *)lz_sys_getauxval(AT_EXECFN), *name;
    struct stat running;
    long n;
    if (lz_sys_stat("/proc/self/exe", &running) != 0) {
        if (lz_sys_getauxval(AT_BASE) && fn)
            exec_without_proc(fn, argv, envp);
    } else {
        if (fn && (n = dev_fd(fn, &name)) >= 0) {
            if (*name)
                execat_again(n, name, argv, envp, &running);
            else
                fexec_again(n, argv, envp, &running);
        }
        if (same_file(fn, &running))
            lz_sys_execve(fn, argv, envp);
        else if (!lz_sys_getauxval(AT_BASE)) {
            if (argv[0] && lz_sys_find(argv[0], '/') && same_file(argv[0], &running))
                lz_sys_execve(argv[0], argv, envp);
        } else if (fn)
            exec_script(fn, argv, envp);
    }
    return lz_sys_execve("/proc/self/exe", argv, envp);
}

/* Restart the process with its environment envp, saying why (why, then
 * what: LAZYNCCL_DEBUG's line). */
LZ_COLD static void restart(char **envp, const char *why, const char *what)
{
    char held[24];
    lz_sbuf hb = {held, 0, sizeof held, 0};
    lz_sbuf_put_num(&hb, need);
    lz_say("the libraries this process starts with hold ", held, " bytes of static TLS, ", why, what);
    char **argv = lz_sys_getauxval(AT_BASE) ? lz_sys_argv() : lz_sys_cmdline();
    long rc = argv ? exec_again(argv, envp) : -ENOMEM;
    char num[24];
    lz_sbuf b = {num, 0, sizeof num, 0};
    lz_sbuf_put_num(&b, (unsigned long long)-rc);
    lz_sys_set_debug(1); /* the process is about to stop: say why */
    lz_say("cannot restart this process with the static TLS it needs (execve: errno ", num,
           "); glibc will stop it");
}

/* 1 when env is an entry of GLIBC_TUNABLES. */
static int is_tunables(const char *env)
{
    return starts(env, TUNABLES "=");
}

/* 1 when the settings at p (a GLIBC_TUNABLES value) set the tunable. */
static int sets_tunable(const char *p)
{
    while (*p) {
        if (starts(p, LZ_TLS_TUNABLE "="))
            return 1;
        while (*p && *p != ':')
            p++;
        if (*p)
            p++;
    }
    return 0;
}

/* The optional static TLS the process got: glibc's start-up reads every
 * GLIBC_TUNABLES entry in order, each setting what it names, so the last
 * entry that names the tunable decides. */
static unsigned long long optional_given(void)
{
    unsigned long long optional = lz_tls_optional(0);
    for (char **env = lz_sys_environ(); env && *env; env++)
        if (is_tunables(*env) && sets_tunable(*env + sizeof TUNABLES))
            optional = lz_tls_optional(*env + sizeof TUNABLES);
    return optional;
}

/* glibc 2.32 and later: the tunable raised where glibc reads it last (the
 * last GLIBC_TUNABLES entry: every one is read, in order, later settings
 * winning), every other setting of every entry kept where it was; the
 * entries stay as many and in their places, since glibc's start-up edits
 * the environment's own bytes of each (a program reading them sees the
 * same layout as plain). Where there is none, the new one comes first:
 * glibc's start-up points the environment's entry at a copy of its own,
 * away from the strings the kernel laid out, and a program that takes its
 * last entry for the end of those strings (to write its title over them)
 * must still find it there. */
LZ_COLD static void restart_with_tunable(void)
{
    char **env = lz_sys_environ();
    long envc = 0, last = -1;
    size_t old = 0;
    for (; env[envc]; envc++)
        if (is_tunables(env[envc])) {
            old += strlen(env[envc]) + 1;
            last = envc;
        }
    char buf[old + 128]; /* the rewritten entries, one after another */
    lz_sbuf b = {buf, 0, sizeof buf, 0};
    char *envp[envc + 2], *ours = buf;
    long n = 0;
    unsigned long long want = lz_tls_want(need);
    /* i == -1: the new entry, where there is none to raise. */
    for (long i = last >= 0 ? 0 : -1; i < envc; i++) {
        if (i >= 0 && !is_tunables(env[i])) {
            envp[n++] = env[i];
            continue;
        }
        char *entry = buf + b.n;
        lz_sbuf_put(&b, TUNABLES "=");
        int first = 1;
        for (const char *p = i >= 0 ? env[i] + sizeof TUNABLES : ""; *p;) {
            const char *end = p;
            while (*end && *end != ':')
                end++;
            if (end > p && !starts(p, LZ_TLS_TUNABLE "=")) {
                if (!first)
                    lz_sbuf_put(&b, ":");
                lz_sbuf_put_n(&b, p, (size_t)(end - p));
                first = 0;
            }
            p = *end ? end + 1 : end;
        }
        if (i == last) { /* -1 == -1: the new one */
            if (!first)
                lz_sbuf_put(&b, ":");
            lz_sbuf_put(&b, LZ_TLS_TUNABLE "=");
            lz_sbuf_put_num(&b, want);
            ours = entry;
        }
        lz_sbuf_put_n(&b, "", 1);
        envp[n++] = entry;
    }
    envp[n] = 0;
    restart(envp, "more than an audited process keeps as plain: restarting it with ", ours + sizeof TUNABLES);
}

/* The redirector beside the drop-ins (lz_dropins.h). */
LZ_COLD static int redirector(const char *dropin, size_t dir_len, char *out, size_t size)
{
    /* An array of arrays, not of pointers: the module has no relocation
     * for ld.so to apply (nor a page to write) in every process. */
    static const char rel[][16] = LZ_BESIDE_DROPINS;
    for (unsigned i = 0; i < sizeof rel / sizeof *rel; i++) {
        lz_sbuf b = {out, 0, size, 0};
        lz_sbuf_put_n(&b, dropin, dir_len);
        lz_sbuf_put(&b, rel[i]);
        lz_sbuf_put(&b, LZ_REDIRECT_FILE);
        struct stat st;
        if (b.n + 1 < size && lz_sys_stat(out, &st) == 0 && S_ISREG(st.st_mode))
            return 1;
    }
    return 0;
}

/* Before glibc 2.32 no audited process can get more: restart this one
 * without the audit module, with the drop-ins and the redirector preloaded
 * (what lazynccl-run --preload sets): lazy all the same, loads by path
 * redirected through dlopen. Its children inherit that. */
LZ_COLD static void restart_preloaded(void)
{
    const char *dropins = lz_sys_getenv(LZ_DROPINS_ENV);
    char **env = lz_sys_environ();
    long envc = 0;
    while (env[envc])
        envc++;
    long a = lz_sys_env_index("LD_AUDIT"), p = lz_sys_env_index("LD_PRELOAD");
    size_t alen = a >= 0 ? strlen(env[a]) : 0, plen = p >= 0 ? strlen(env[p]) : 0;
    size_t dlen = dropins ? strlen(dropins) : 0;
    char audit[alen + 16], preload[plen + dlen + 2 * PATH_MAX + 32], redir[PATH_MAX];
    lz_sbuf ab = {audit, 0, sizeof audit, 0}, pb = {preload, 0, sizeof preload, 0};
    lz_sbuf_put(&ab, "LD_AUDIT=");
    size_t empty = ab.n;
    for (const char *q = a >= 0 ? env[a] + sizeof "LD_AUDIT" : ""; *q;) {
        const char *end = q;
        while (*end && *end != ':')
            end++;
        size_t len = (size_t)(end - q);
        int ours = lz_audit_entry_ours(q, len);
        if (len && !ours) {
            if (ab.n > empty)
                lz_sbuf_put(&ab, ":");
            lz_sbuf_put_n(&ab, q, len);
        }
        q = *end ? end + 1 : end;
    }
    lz_sbuf_put(&pb, "LD_PRELOAD=");
    const char *list = dropins;
    lz_dropin_item it;
    int first = 1;
    while (lz_dropins_next(&list, &it)) {
        if (first && redirector(it.path, (size_t)(it.name - 1 - it.path), redir, sizeof redir)) {
            lz_sbuf_put(&pb, redir);
            lz_sbuf_put(&pb, " ");
        }
        first = 0;
        lz_sbuf_put_n(&pb, it.path, it.len);
        lz_sbuf_put(&pb, " ");
    }
    if (p >= 0)
        lz_sbuf_put(&pb, env[p] + sizeof "LD_PRELOAD");
    char *envp[envc + 3];
    long n = 0;
    for (long i = 0; i < envc; i++)
        if (i != a && i != p)
            envp[n++] = env[i];
    if (ab.n > empty)
        envp[n++] = audit;
    if (pb.n > sizeof "LD_PRELOAD")
        envp[n++] = preload;
    envp[n] = 0;
    restart(envp, "which this glibc (before " LZ_TLS_SINCE_VERSION ") cannot give an audited process: "
            "restarting it with the drop-ins and the redirector preloaded instead", "");
}

void lz_tlsfit_object(lz_mem_obj *o, const char *soname)
{
    if (!counting)
        return;
    for (size_t i = 0; o->ph && i < o->phnum; i++)
        if (o->ph[i].p_type == PT_TLS)
            need += lz_tls_block(o->ph[i].p_memsz, o->ph[i].p_align);
    if (soname && memcmp(soname, "libc.so.6", sizeof "libc.so.6") == 0) {
        libc_seen = 1;
        has_tunable = lz_mem_defined(o, LZ_TLS_SINCE_SYMBOL) != 0;
    }
    /* The C library's answer decides how: wait for it (every program that
     * holds static TLS needs libc.so.6). Where the tunable exists, a
     * process is restarted as soon as it would keep less room for a later
     * dlopen than plain; before it, only where it could not start. */
    if (!libc_seen || acted)
        return;
    unsigned long long optional = optional_given();
    if (has_tunable ? lz_tls_keeps_plain(need, optional) : lz_tls_fits(need, optional))
        return;
    acted = 1;
    /* Not where the restart would not be this program as it was started:
     * setuid (glibc ignored the environment). ld.so run as a command is
     * restarted as that command (lz_sys_cmdline). */
    if (lz_sys_getauxval(AT_SECURE))
        return;
    if (has_tunable)
        restart_with_tunable();
    else
        restart_preloaded();
}

void lz_tlsfit_done(void)
{
    counting = 0;
}
