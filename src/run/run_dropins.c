/* SPDX-License-Identifier: MIT */
/* The drop-ins a launch serves (run_dropins.h). */
#include "run_dropins.h"
#include "run_family.h"
#include "run_path.h"
#include "elf/lz_elfpeek.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h> /* ST_NOEXEC */
#include <unistd.h>

/* The launcher reads one drop-in at a time, on its one thread. */
static lz_elfpeek_room peek_room;

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
            run_path_fmt(out, size, "%s/%s", p->dir, n)) {
            best = major;
            best_minor = minor;
        }
    }
    return best >= 0;
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
    if (name && run_path_fmt(path, sizeof path, "%s/%s", p->dir, name) && run_path_is_file(path))
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
            if (listed(p, w, len) >= 0 && run_path_fmt(path, sizeof path, "%s/%.*s", p->dir, (int)len, w))
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
         * check (run_dropins_check), never waited on here. */
        int fd = open(p->dropins[i], O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
        struct stat st;
        if (fd >= 0 && fstat(fd, &st) == 0 && S_ISREG(st.st_mode))
            lz_elfpeek_needed(&peek_room, fd, serve_needed, p);
        if (fd >= 0)
            close(fd);
    }
}

static int find_dropins(run_parts *p, const char *only, char *why, size_t whysize)
{
    char stem[RUN_FAMILY_STEM], path[PATH_MAX];
    p->ndropins = 0;
    p->dropin_len = 0;
    if (!only) {
        static char stems[RUN_MAX_DROPINS][RUN_FAMILY_STEM];
        for (int k = 0, n = run_family_stems(stems, RUN_MAX_DROPINS); k < n; k++)
            if (newest(p, stems[k], path, sizeof path))
                add(p, path);
        if (!p->ndropins) {
            run_path_fmt(why, whysize, "no drop-in of any family (%s) in %s", run_family_names(0), p->dir);
            return -1;
        }
        return 0;
    }
    if (!*only) {
        run_path_fmt(why, whysize, "--only: nothing to serve (an empty list)");
        return -1;
    }
    for (const char *item = only;;) {
        size_t len = strcspn(item, ",");
        if (!len) {
            run_path_fmt(why, whysize, "--only: empty item in '%s'", only);
            return -1;
        }
        if (len > 7 && strncmp(item, "lib", 3) == 0 && memmem(item, len, ".so.", 4)) {
            if (memchr(item, '/', len)) {
                run_path_fmt(why, whysize, "--only: %.*s: a drop-in file name, not a path", (int)len, item);
                return -1;
            }
            run_path_fmt(path, sizeof path, "%s/%.*s", p->dir, (int)len, item);
            if (!(p->manifest.text ? listed(p, item, len) >= 0 : run_path_is_file(path))) {
                run_path_fmt(why, whysize, "--only %.*s: no drop-in %s in %s", (int)len, item, path, p->dir);
                return -1;
            }
        } else if (!run_family_stem(item, len, stem, sizeof stem)) {
            const char *more = run_family_names(1);
            run_path_fmt(why, whysize, "--only: unknown item '%.*s' (known: %s%s%s, or a drop-in file name)",
                     (int)len, item, run_family_names(0), *more ? ", " : "", more);
            return -1;
        } else if (!newest(p, stem, path, sizeof path)) {
            run_path_fmt(why, whysize, "--only %.*s: no drop-in for %.*s in %s", (int)len, item, (int)len,
                     item, p->dir);
            return -1;
        }
        if (add(p, path) < 0) {
            run_path_fmt(why, whysize, "--only: more than %d drop-ins", RUN_MAX_DROPINS);
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

int run_dropins_unmappable(const run_parts *p)
{
    struct statfs fs;
    return p->ndropins > 0 && statfs(p->dir, &fs) == 0 && (fs.f_flags & ST_NOEXEC);
}

int run_dropins_choose(run_parts *p, const char *only, char *why, size_t whysize)
{
    int rc = find_dropins(p, only, why, whysize);
    if (rc == 0) {
        add_needed(p);
        leave_profiled(p);
    }
    return rc;
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
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && lz_elfpeek_native(&peek_room, fd);
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
    int ok = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && lz_elfpeek_dropin(&peek_room, fd, stands, sizeof stands) &&
             strcmp(stands, soname) == 0;
    close(fd);
    return ok;
}

int run_dropins_check(const run_parts *p, char *why, size_t whysize)
{
    const char *given = getenv("LAZYNCCL_AUDIT_MODULE"), *named = getenv("LAZYNCCL_DROPIN_DIR");
    int user_dir = named && *named;
    if (p->manifest.text && !(given && *given) && !user_dir)
        return 0;
    for (int i = 0; i < p->ndropins && (!p->manifest.text || user_dir); i++) {
        const char *slash = strrchr(p->dropins[i], '/');
        const char *soname = slash ? slash + 1 : p->dropins[i];
        if (!object_of_this_machine(p->dropins[i])) {
            run_path_fmt(why, whysize, "drop-in %s (for %s) is unreadable or not a library of this machine: "
                              "the installation is broken (reinstall lazynccl, or name another "
                              "with LAZYNCCL_DROPIN_DIR)", p->dropins[i], soname);
            return -1;
        }
        if (!dropin_of(p->dropins[i], soname)) {
            run_path_fmt(why, whysize, "%s is not a lazynccl drop-in for %s (it has no drop-in note naming it): "
                              "refused, as every request for %s by path would load it%s",
                p->dropins[i], soname, soname, user_dir ? " (LAZYNCCL_DROPIN_DIR names its directory)" : "");
            return -1;
        }
    }
    if (p->module[0] && !object_of_this_machine(p->module)) {
        run_path_fmt(why, whysize, "audit module %s is unreadable or not a library of this machine: the "
                          "installation is broken (reinstall lazynccl, or name another with "
                          "LAZYNCCL_AUDIT_MODULE)", p->module);
        return -1;
    }
    return 0;
}
