/* SPDX-License-Identifier: MIT */
/* Where lazynccl-run's pieces are (run_find.h). */
#include "run_find.h"
#include "run_nodecopy.h"
#include "common/lz_dropins.h"
#include "common/lz_sitedirs.h"
#include "elf/lz_elfpeek.h"

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h> /* ST_NOEXEC */
#include <unistd.h>

/* Written by meson.build: the families ("id=stem id=stem ...", the stem of
 * each first soname; "+id=stem" for one served only when --only names it:
 * the suite's own test libraries in a build tree) and where the drop-ins are from the
 * launcher's directory in an install ("../lib/<arch>/lazynccl/dropin";
 * "dropin" in the wheel's package directory). */
#ifndef RUN_FAMILIES
#error RUN_FAMILIES is defined by meson.build
#endif
#ifndef RUN_DROPIN_REL
#error RUN_DROPIN_REL is defined by meson.build
#endif
#ifndef RUN_BUILD_DIR
#error RUN_BUILD_DIR is defined by meson.build
#endif

/* snprintf that says whether it fit (a path cut short is no path). */
__attribute__((format(printf, 3, 4))) static int fmt(char *out, size_t size, const char *f, ...)
{
    va_list ap;
    va_start(ap, f);
    int n = vsnprintf(out, size, f, ap);
    va_end(ap);
    return n >= 0 && (size_t)n < size;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int is_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

int run_find_nameable(const char *path)
{
    return strpbrk(path, ": \t\n") == NULL;
}

/* The wheel's command lives in <prefix>/bin, its package in
 * <prefix>/lib/pythonX.Y/{site,dist}-packages/lazynccl (a venv, --user,
 * --prefix) or <target>/lazynccl (pip install --target). */
static int wheel_dir(const char *exe_dir, char *out, size_t size)
{
    char lib[PATH_MAX];
    if (fmt(out, size, "%s/../lazynccl/dropin", exe_dir) && is_dir(out))
        return 1;
    fmt(lib, sizeof lib, "%s/../lib", exe_dir);
    DIR *d = opendir(lib);
    if (!d)
        return 0;
    struct dirent *e;
    int found = 0;
    static const char *const site_dirs[LZ_NSITE_DIRS] = LZ_SITE_DIRS;
    while (!found && (e = readdir(d)))
        if (strncmp(e->d_name, "python3", 7) == 0)
            for (int i = 0; i < LZ_NSITE_DIRS && !found; i++) {
                fmt(out, size, "%s/%s/%s/lazynccl/dropin", lib, e->d_name, site_dirs[i]);
                found = is_dir(out);
            }
    closedir(d);
    return found;
}

/* The directory's regular files (and links), read once: every family's
 * newest major is looked up here. */
static int read_names(run_parts *p)
{
    DIR *d = opendir(p->dir);
    if (!d)
        return -1;
    size_t cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_type != DT_REG && e->d_type != DT_LNK && e->d_type != DT_UNKNOWN)
            continue;
        if (p->nnames == cap) {
            char **grown = realloc(p->names, (cap = cap ? 2 * cap : 64) * sizeof *grown);
            if (!grown)
                break;
            p->names = grown;
        }
        if (!(p->names[p->nnames] = strdup(e->d_name)))
            break;
        p->nnames++;
    }
    closedir(d);
    return 0;
}

/* path with its "dir/.." pairs taken out, in place: the drop-ins' directory
 * found from /proc/self/exe (the kernel's path: no link in it) needs no
 * realpath, whose readlink of every component is a round trip each to a
 * shared filesystem's metadata server. */
static void drop_dotdot(char *path)
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

/* The first of the layouts' directories (an install, a build tree) with a
 * manifest: one open each, and none after it. 1 when found, -1 when one
 * does not parse (why says where), 0 when none has one. */
static int manifest_dir(run_parts *p, const char *exe, char *why, size_t whysize)
{
    /* The build tree's launcher knows it is one by its directory (a string
     * compared, no lookup), so neither layout tries the other's first. */
    const char *rel[] = {RUN_DROPIN_REL, "src/dropin"};
    if (strcmp(exe, RUN_BUILD_DIR) == 0)
        rel[0] = "src/dropin", rel[1] = RUN_DROPIN_REL;
    for (unsigned i = 0; i < sizeof rel / sizeof *rel; i++) {
        if (!fmt(p->dir, sizeof p->dir, "%s/%s", exe, rel[i]))
            continue;
        drop_dotdot(p->dir);
        int rc = run_manifest_read(p->dir, &p->manifest, why, whysize);
        if (rc == 0)
            return 1;
        if (rc == -2)
            return -1;
    }
    p->dir[0] = '\0';
    return 0;
}

/* The directory found: its drop-ins, from its manifest where it has one. */
static int finish_dir(run_parts *p, char *why, size_t whysize)
{
    if (!run_find_nameable(p->dir)) {
        fmt(why, whysize, "drop-in directory %s holds a space or colon: LD_PRELOAD cannot name it", p->dir);
        return -1;
    }
    if (!p->manifest.text) {
        int rc = run_manifest_read(p->dir, &p->manifest, why, whysize);
        if (rc == -2)
            return -1;
    }
    if (p->manifest.text) {
        p->names = p->manifest.names;
        p->nnames = p->manifest.n;
        return 0;
    }
    if (read_names(p) < 0) {
        fmt(why, whysize, "drop-in directory %s cannot be read", p->dir);
        return -1;
    }
    return 0;
}

/* This program's directory, as the kernel has it (/proc/self/exe, never
 * argv[0]). Without /proc (a chroot, bwrap without --proc), the path the
 * kernel was given to exec it (AT_EXECFN: relative to the directory it
 * started in, which is still this one), resolved. Not dlinfo's
 * RTLD_DI_ORIGIN, though the C library's start-up read /proc/self/exe
 * already: where that failed, glibc keeps (char *)-1 as the origin and
 * dlinfo copies from it. 0, or -1. */
static int own_dir(char *out)
{
    ssize_t n = readlink("/proc/self/exe", out, PATH_MAX - 1);
    const char *execfn = (const char *)getauxval(AT_EXECFN);
    if (n > 0)
        out[n] = '\0';
    else if (!execfn || !realpath(execfn, out))
        return -1;
    *strrchr(out, '/') = '\0';
    return 0;
}

int run_find_dir(run_parts *p, char *why, size_t whysize)
{
    char cand[PATH_MAX] = "";
    const char *env = getenv("LAZYNCCL_DROPIN_DIR");
    if (env && *env) {
        fmt(cand, sizeof cand, "%s", env);
        if (!is_dir(cand)) {
            fmt(why, whysize, "drop-in directory %s (LAZYNCCL_DROPIN_DIR) does not exist", env);
            return -1;
        }
    } else {
        char exe[PATH_MAX];
        if (own_dir(exe) < 0) {
            fmt(why, whysize, "cannot read /proc/self/exe to find the drop-ins: set LAZYNCCL_DROPIN_DIR");
            return -1;
        }
        int found = manifest_dir(p, exe, why, whysize);
        if (found < 0)
            return -1;
        if (found)
            return finish_dir(p, why, whysize);
        /* A directory without a manifest (made by hand): looked at whole. */
        fmt(cand, sizeof cand, "%s/%s", exe, RUN_DROPIN_REL);
        if (!is_dir(cand))
            fmt(cand, sizeof cand, "%s/src/dropin", exe); /* a build tree */
        if (!is_dir(cand) && !wheel_dir(exe, cand, sizeof cand)) {
            fmt(why, whysize, "no drop-in directory: neither $LAZYNCCL_DROPIN_DIR nor %s/%s exists",
                     exe, RUN_DROPIN_REL);
            return -1;
        }
    }
    if (!realpath(cand, p->dir)) {
        fmt(why, whysize, "drop-in directory %s cannot be resolved", cand);
        return -1;
    }
    return finish_dir(p, why, whysize);
}

/* The newest version of stem present in the directory: libnvrtc.so.13 over
 * .12; a soname with a minor (libnvrtc-builtins.so.13.0) by major, then
 * minor. 1 when one is. */
static int newest(const run_parts *p, const char *stem, char *out, size_t size)
{
    size_t len = strlen(stem);
    long best = -1, best_minor = -1;
    for (size_t i = 0; i < p->nnames; i++) {
        const char *n = p->names[i], *v = n + len + 1;
        if (strncmp(n, stem, len) != 0 || n[len] != '.' || !*v ||
            strspn(v, "0123456789.") != strlen(v) || v[strlen(v) - 1] == '.')
            continue;
        char *end;
        long major = strtol(v, &end, 10), minor = *end == '.' ? strtol(end + 1, NULL, 10) : -1;
        if ((major > best || (major == best && minor > best_minor)) &&
            fmt(out, size, "%s/%s", p->dir, n)) {
            best = major;
            best_minor = minor;
        }
    }
    return best >= 0;
}

/* The stem of a family ("libcublas.so" for cublas), or 0. */
static int stem_of(const char *id, size_t idlen, char *out, size_t size)
{
    for (const char *p = RUN_FAMILIES; *p;) {
        const char *end = p + strcspn(p, " ");
        const char *eq = memchr(p, '=', (size_t)(end - p));
        if (*p == '+')
            p++;
        if (eq && (size_t)(eq - p) == idlen && strncmp(p, id, idlen) == 0) {
            fmt(out, size, "%.*s", (int)(end - eq - 1), eq + 1);
            return 1;
        }
        p = *end ? end + 1 : end;
    }
    return 0;
}

const char *run_find_families(int on_request)
{
    static char buf[2][1024];
    char *out = buf[on_request != 0];
    size_t n = 0, size = sizeof buf[0];
    out[0] = '\0';
    for (const char *p = RUN_FAMILIES; *p && n + 1 < size;) {
        const char *end = p + strcspn(p, " ");
        const char *eq = memchr(p, '=', (size_t)(end - p));
        int requested = *p == '+';
        if (requested != (on_request != 0)) {
            p = *end ? end + 1 : end;
            continue;
        }
        p += requested;
        size_t len = (size_t)((eq ? eq : end) - p);
        if (n + len + 3 > size)
            break;
        if (n)
            memcpy(out + n, ", ", 2), n += 2;
        memcpy(out + n, p, len);
        n += len;
        out[n] = '\0';
        p = *end ? end + 1 : end;
    }
    return out;
}

static int add(run_parts *p, const char *path)
{
    for (int i = 0; i < p->ndropins; i++)
        if (strcmp(p->dropins[i], path) == 0)
            return 0;
    size_t n = strlen(path) + 1;
    if (p->ndropins == RUN_MAX_DROPINS || n > sizeof p->dropin_text - p->dropin_len)
        return -1;
    char *at = p->dropin_text + p->dropin_len;
    memcpy(at, path, n);
    p->dropin_len += n;
    p->dropins[p->ndropins++] = at;
    return 0;
}

/* A drop-in needs what its real library needs: where that is a library
 * with a drop-in here (cuBLAS's cuBLASLt), it is served too, so that it
 * stays lazy rather than load at start because a served one needs it. */
static void serve_needed(void *ctx, const char *name)
{
    run_parts *p = ctx;
    char path[PATH_MAX];
    if (fmt(path, sizeof path, "%s/%s", p->dir, name) && is_file(path))
        add(p, path);
}

/* The manifest's entry for the drop-in name[0..len), or -1. */
static long listed(const run_parts *p, const char *name, size_t len)
{
    for (size_t k = 0; k < p->manifest.n; k++)
        if (strlen(p->manifest.names[k]) == len && strncmp(p->manifest.names[k], name, len) == 0)
            return (long)k;
    return -1;
}

/* The same from the manifest: what each drop-in needs, as the build read
 * it, no file opened. */
static void add_needed_listed(run_parts *p)
{
    for (int i = 0; i < p->ndropins; i++) { /* grows as it goes: the closure */
        const char *name = strrchr(p->dropins[i], '/') + 1;
        long k = listed(p, name, strlen(name));
        for (const char *w = k < 0 ? "" : run_manifest_needs(&p->manifest, (size_t)k); *w;) {
            size_t len = strcspn(w, " ");
            char path[PATH_MAX];
            if (listed(p, w, len) >= 0 && fmt(path, sizeof path, "%s/%.*s", p->dir, (int)len, w))
                add(p, path);
            w += len;
            w += strspn(w, " ");
        }
    }
}

static void add_needed(run_parts *p)
{
    if (p->manifest.text) {
        add_needed_listed(p);
        return;
    }
    for (int i = 0; i < p->ndropins; i++) { /* grows as it goes: the closure */
        /* Without blocking: a FIFO named like a drop-in is refused by the
         * check (run_find_check), never waited on here. */
        int fd = open(p->dropins[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
            lz_elfpeek_needed(fd, serve_needed, p);
        if (fd >= 0)
            close(fd);
    }
}

static int find_dropins(run_parts *p, const char *only, char *why, size_t whysize)
{
    char stem[256], path[PATH_MAX];
    p->ndropins = 0;
    p->dropin_len = 0;
    if (!only) {
        for (const char *f = RUN_FAMILIES; *f;) {
            const char *end = f + strcspn(f, " ");
            const char *eq = memchr(f, '=', (size_t)(end - f));
            if (*f != '+' && eq && stem_of(f, (size_t)(eq - f), stem, sizeof stem) &&
                newest(p, stem, path, sizeof path))
                add(p, path);
            f = *end ? end + 1 : end;
        }
        if (!p->ndropins) {
            fmt(why, whysize, "no drop-in of any family (%s) in %s", run_find_families(0), p->dir);
            return -1;
        }
        return 0;
    }
    if (!*only) {
        fmt(why, whysize, "--only: nothing to serve (an empty list)");
        return -1;
    }
    for (const char *item = only;;) {
        size_t len = strcspn(item, ",");
        if (!len) {
            fmt(why, whysize, "--only: empty item in '%s'", only);
            return -1;
        }
        if (len > 7 && strncmp(item, "lib", 3) == 0 && memmem(item, len, ".so.", 4)) {
            if (memchr(item, '/', len)) {
                fmt(why, whysize, "--only: %.*s: a drop-in file name, not a path", (int)len, item);
                return -1;
            }
            fmt(path, sizeof path, "%s/%.*s", p->dir, (int)len, item);
            if (!(p->manifest.text ? listed(p, item, len) >= 0 : is_file(path))) {
                fmt(why, whysize, "--only %.*s: no drop-in %s in %s", (int)len, item, path, p->dir);
                return -1;
            }
        } else if (!stem_of(item, len, stem, sizeof stem)) {
            const char *more = run_find_families(1);
            fmt(why, whysize, "--only: unknown item '%.*s' (known: %s%s%s, or a drop-in file name)",
                     (int)len, item, run_find_families(0), *more ? ", " : "", more);
            return -1;
        } else if (!newest(p, stem, path, sizeof path)) {
            fmt(why, whysize, "--only %.*s: no drop-in for %.*s in %s", (int)len, item, (int)len,
                     item, p->dir);
            return -1;
        }
        if (add(p, path) < 0) {
            fmt(why, whysize, "--only: more than %d drop-ins", RUN_MAX_DROPINS);
            return -1;
        }
        if (!item[len])
            break;
        item += len + 1;
    }
    return 0;
}

/* LD_PROFILE names an object by a name it was asked for (glibc's
 * _dl_name_match_p): a drop-in asked for by its SONAME would be the one
 * profiled, and the real library, loaded later under that name, never. A
 * library the user profiles is left to the dynamic linker, as plain. */
static void leave_profiled(run_parts *p)
{
    const char *profiled = getenv("LD_PROFILE");
    int k = 0;
    for (int i = 0; i < p->ndropins; i++) {
        const char *slash = strrchr(p->dropins[i], '/');
        if (!profiled || strcmp(slash ? slash + 1 : p->dropins[i], profiled) != 0)
            p->dropins[k++] = p->dropins[i];
    }
    p->ndropins = k;
}

int run_find_unmappable(const run_parts *p)
{
    struct statfs fs;
    return p->ndropins > 0 && statfs(p->dir, &fs) == 0 && (fs.f_flags & ST_NOEXEC);
}

int run_find_dropins(run_parts *p, const char *only, char *why, size_t whysize)
{
    int rc = find_dropins(p, only, why, whysize);
    if (rc == 0) {
        add_needed(p);
        leave_profiled(p);
    }
    return rc;
}

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
        fmt(cand, sizeof cand, "%s", given);
    } else if (p->manifest.text) {
        if (listed_rel && fmt(out, PATH_MAX, "%s/%s", p->dir, listed_rel))
            drop_dotdot(out);
        else
            out[0] = '\0';
        if (tried)
            fmt(tried, PATH_MAX, "%s", out[0] ? out : p->dir);
        return;
    } else
        for (unsigned i = 0; i < sizeof rel / sizeof *rel; i++)
            if (fmt(cand, sizeof cand, "%s%s%s", p->dir, rel[i], name) && is_file(cand))
                break;
    if (tried)
        memcpy(tried, cand, sizeof cand);
    if (is_file(cand) && !realpath(cand, out))
        out[0] = '\0';
}

void run_find_modules(run_parts *p)
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
    fmt(p->audit_entry, sizeof p->audit_entry, "%s", p->module);
    p->audit_lib_entry[0] = '\0';
    const char *given = getenv("LAZYNCCL_AUDIT_MODULE"), *inherited = getenv("LD_AUDIT");
    char *slash = strrchr(p->module, '/');
    char own[PATH_MAX], narrow[PATH_MAX];
    int wanted = p->quiet32 || (inherited && strstr(inherited, "$LIB"));
    if (RUN_HAS_LIB_DIR && wanted && p->module[0] && !(given && *given) && slash && access(RUN_LDSO32, F_OK) == 0 &&
        fmt(own, sizeof own, "%.*s/" LZ_AUDIT_LIB64 "%s", (int)(slash - p->module), p->module, slash) &&
        fmt(narrow, sizeof narrow, "%.*s/" LZ_AUDIT_LIB32 "%s", (int)(slash - p->module), p->module, slash) &&
        is_file(own) && is_file(narrow) && ldso_lib_is(LZ_AUDIT_LIB64))
        fmt(p->audit_lib_entry, sizeof p->audit_lib_entry, "%.*s/$LIB%s", (int)(slash - p->module), p->module,
            slash);
    if (p->quiet32 && p->audit_lib_entry[0])
        fmt(p->audit_entry, sizeof p->audit_entry, "%s", p->audit_lib_entry);
}

void run_find_nodecopy(run_parts *p)
{
    const char *given = getenv("LAZYNCCL_AUDIT_MODULE");
    if ((given && *given) || !p->module[0] || strcmp(p->audit_entry, p->module) != 0)
        return;
    char why[PATH_MAX + 256];
    if (run_nodecopy(p->module, p->node_copy, p->node_module, sizeof p->node_module, why, sizeof why))
        fmt(p->audit_entry, sizeof p->audit_entry, "%s", p->node_module);
    else
        p->node_module[0] = '\0';
    if (why[0])
        fprintf(stderr, "lazynccl-run: %s\n", why);
}

/* 1 when path is a regular file whose ELF header is a shared object's of
 * this process's kind: one read of its header (each launch pays it per
 * drop-in; the audit module checks a drop-in's SONAME itself, where it
 * first stands one in). */
static int object_of_this_machine(const char *path)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return 0;
    struct stat st;
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && lz_elfpeek_native(fd);
    close(fd);
    return ok;
}

/* 1 when path is a drop-in of this project's standing for soname, by its
 * note: a real library of that name in a directory the user named would
 * otherwise take every request by path. */
static int dropin_of(const char *path, const char *soname)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
    if (fd < 0)
        return 0;
    struct stat st;
    char stands[256];
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && lz_elfpeek_dropin(fd, stands, sizeof stands) &&
             strcmp(stands, soname) == 0;
    close(fd);
    return ok;
}

int run_find_check(const run_parts *p, char *why, size_t whysize)
{
    const char *given = getenv("LAZYNCCL_AUDIT_MODULE"), *named = getenv("LAZYNCCL_DROPIN_DIR");
    int user_dir = named && *named;
    if (p->manifest.text && !(given && *given) && !user_dir)
        return 0;
    for (int i = 0; i < p->ndropins && (!p->manifest.text || user_dir); i++) {
        const char *slash = strrchr(p->dropins[i], '/');
        const char *soname = slash ? slash + 1 : p->dropins[i];
        if (!object_of_this_machine(p->dropins[i])) {
            fmt(why, whysize, "drop-in %s (for %s) is unreadable or not a library of this machine: "
                              "the installation is broken (reinstall lazynccl, or name another "
                              "with LAZYNCCL_DROPIN_DIR)", p->dropins[i], soname);
            return -1;
        }
        if (!dropin_of(p->dropins[i], soname)) {
            fmt(why, whysize, "%s is not a lazynccl drop-in for %s (it has no drop-in note naming it): "
                              "refused, as every request for %s by path would load it%s",
                p->dropins[i], soname, soname, user_dir ? " (LAZYNCCL_DROPIN_DIR names its directory)" : "");
            return -1;
        }
    }
    if (p->module[0] && !object_of_this_machine(p->module)) {
        fmt(why, whysize, "audit module %s is unreadable or not a library of this machine: the "
                          "installation is broken (reinstall lazynccl, or name another with "
                          "LAZYNCCL_AUDIT_MODULE)", p->module);
        return -1;
    }
    return 0;
}
