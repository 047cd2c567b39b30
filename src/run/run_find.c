/* SPDX-License-Identifier: MIT */
/* Where lazynccl-run's drop-in directory is (run_find.h). */
#include "run_find.h"
#include "run_path.h"
#include "common/lz_sitedirs.h"

#include <dirent.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

/* Written by meson.build: where the drop-ins are from the launcher's
 * directory in an install ("../lib/<arch>/lazynccl/dropin"; "dropin" in the
 * wheel's package directory), and the build tree's own directory. */
#ifndef RUN_DROPIN_REL
#error RUN_DROPIN_REL is defined by meson.build
#endif
#ifndef RUN_BUILD_DIR
#error RUN_BUILD_DIR is defined by meson.build
#endif

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
    if (run_path_fmt(out, size, "%s/../lazynccl/dropin", exe_dir) && run_path_is_dir(out))
        return 1;
    run_path_fmt(lib, sizeof lib, "%s/../lib", exe_dir);
    DIR *d = opendir(lib);
    if (!d)
        return 0;
    struct dirent *e;
    int found = 0;
    static const char *const site_dirs[LZ_NSITE_DIRS] = LZ_SITE_DIRS;
    while (!found && (e = readdir(d)))
        if (strncmp(e->d_name, "python3", 7) == 0)
            for (int i = 0; i < LZ_NSITE_DIRS && !found; i++) {
                run_path_fmt(out, size, "%s/%s/%s/lazynccl/dropin", lib, e->d_name, site_dirs[i]);
                found = run_path_is_dir(out);
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
        if (!run_path_fmt(p->dir, sizeof p->dir, "%s/%s", exe, rel[i]))
            continue;
        run_path_drop_dotdot(p->dir);
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
        run_path_fmt(why, whysize, "drop-in directory %s holds a space or colon: LD_PRELOAD cannot name it", p->dir);
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
        run_path_fmt(why, whysize, "drop-in directory %s cannot be read", p->dir);
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
        run_path_fmt(cand, sizeof cand, "%s", env);
        if (!run_path_is_dir(cand)) {
            run_path_fmt(why, whysize, "drop-in directory %s (LAZYNCCL_DROPIN_DIR) does not exist", env);
            return -1;
        }
    } else {
        char exe[PATH_MAX];
        if (own_dir(exe) < 0) {
            run_path_fmt(why, whysize, "cannot read /proc/self/exe to find the drop-ins: set LAZYNCCL_DROPIN_DIR");
            return -1;
        }
        int found = manifest_dir(p, exe, why, whysize);
        if (found < 0)
            return -1;
        if (found)
            return finish_dir(p, why, whysize);
        /* A directory without a manifest (made by hand): looked at whole. */
        run_path_fmt(cand, sizeof cand, "%s/%s", exe, RUN_DROPIN_REL);
        if (!run_path_is_dir(cand))
            run_path_fmt(cand, sizeof cand, "%s/src/dropin", exe); /* a build tree */
        if (!run_path_is_dir(cand) && !wheel_dir(exe, cand, sizeof cand)) {
            run_path_fmt(why, whysize, "no drop-in directory: neither $LAZYNCCL_DROPIN_DIR nor %s/%s exists",
                     exe, RUN_DROPIN_REL);
            return -1;
        }
    }
    if (!realpath(cand, p->dir)) {
        run_path_fmt(why, whysize, "drop-in directory %s cannot be resolved", cand);
        return -1;
    }
    return finish_dir(p, why, whysize);
}
