/* SPDX-License-Identifier: MIT
 * Released together, loaded together: a library's peers (cuBLAS and
 * cuBLASLt, NVRTC and nvJitLink, ...) work only with copies of one release,
 * and the dynamic linker reuses a peer already loaded whatever its release
 * (cuBLAS's DT_NEEDED on cuBLASLt is met by the cuBLASLt in memory). So a
 * candidate is judged against the peers the process has already loaded:
 * of one release when it lies beside one (its directory, or the wheel tree
 * it came from), or when the versions of one scheme agree. */
#include "search/lz_release.h"
#include "base/lz_env.h"
#include "process/lz_objects.h"
#include "elf/lz_probe.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int lz_release_policy(const lz_lib *lib, int *bad)
{
    const char *v = lib->release_env ? lz_getenv(lib->release_env) : NULL;
    if (bad)
        *bad = 0;
    if (!v || !*v || strcmp(v, "best_effort") == 0)
        return LZ_RELEASE_BEST_EFFORT;
    if (strcmp(v, "strict") == 0)
        return LZ_RELEASE_STRICT;
    if (strcmp(v, "off") == 0)
        return LZ_RELEASE_OFF;
    if (bad)
        *bad = 1;
    return LZ_RELEASE_BEST_EFFORT;
}

const char *lz_release_policy_name(int policy)
{
    return policy == LZ_RELEASE_STRICT ? "strict" : policy == LZ_RELEASE_OFF ? "off"
                                                                             : "best_effort";
}

/* "12.4.127" from "libnvrtc.so.12.4.127": what follows ".so." when it is
 * a version of at least two numbers. */
static int version_in_name(const char *real, char *out, size_t size)
{
    const char *base = strrchr(real, '/');
    const char *so = strstr(base ? base : real, ".so.");
    if (!so)
        return 0;
    const char *v = so + 4;
    size_t n = strspn(v, "0123456789.");
    if (n == 0 || v[n] || !strchr(v, '.') || v[n - 1] == '.' || n >= size)
        return 0;
    memcpy(out, v, n);
    out[n] = '\0';
    return 1;
}

/* "13.0" from __nvJitLinkCreate_13_0: the newest version of the library's
 * versioned names the file exports. */
static int version_in_exports(const lz_lib *lib, const char *path, char *out, size_t size)
{
    int major = -1, minor = -1, any = 0;
    for (size_t i = 0; i < lib->nsyms && !any; i++)
        any = lib->syms[i].major >= 0;
    lz_probe p;
    if (!any || lz_probe_read(path, &p) != LZ_PROBE_OK)
        return 0;
    for (size_t i = 0; i < lib->nsyms; i++) {
        const lz_sym *s = &lib->syms[i];
        if (s->major < 0 || (s->major < major || (s->major == major && s->minor <= minor)))
            continue;
        if (lz_probe_exports(&p, lz_sym_name(lib, s))) {
            major = s->major;
            minor = s->minor;
        }
    }
    lz_probe_free(&p);
    return major >= 0 && snprintf(out, size, "%d.%d", major, minor) < (int)size;
}

int lz_release_version(const lz_lib *lib, const char *path, char *out, size_t size)
{
    /* Not the spec's .rodata marker: reading .rodata takes libelf and the
     * whole section (tens of megabytes for NVRTC), on a first call's way. */
    char *real = realpath(path, NULL);
    int ok = real && version_in_name(real, out, size);
    free(real);
    return ok || version_in_exports(lib, path, out, size);
}

/* Major and minor of "12.4.127" (minor 0 when absent). */
static void major_minor(const char *v, long *major, long *minor)
{
    char *end;
    *major = strtol(v, &end, 10);
    *minor = *end == '.' ? strtol(end + 1, NULL, 10) : 0;
}

/* One release's place: one directory. */
static int same_dir(const char *a, const char *b)
{
    const char *sa = strrchr(a, '/'), *sb = strrchr(b, '/');
    return sa && sb && sa - a == sb - b && memcmp(a, b, (size_t)(sa - a)) == 0;
}

/* One wheel environment's nvidia/ tree (nvidia/cuda_nvrtc/lib beside
 * nvidia/nvjitlink/lib): separate packages, installed together, each of
 * its own version; where a version cannot be read, the tree stands for
 * the release pip resolved. */
static int same_tree(const char *a, const char *b)
{
    const char *ta = strstr(a, "/site-packages/nvidia/"), *tb = strstr(b, "/site-packages/nvidia/");
    return ta && tb && ta - a == tb - b && memcmp(a, b, (size_t)(ta - a)) == 0;
}

/* 1 when a and b are one file (a hard link, a copy named twice). */
static int same_file(const char *a, const char *b)
{
    struct stat x, y;
    return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev && x.st_ino == y.st_ino;
}

/* "13.0" from a loaded peer's newest versioned export (__nvJitLinkCreate_13_0),
 * for a peer whose names carry versions. */
static int peer_version_in_exports(const lz_peer *peer, const char *path, char *out, size_t size)
{
    lz_probe p;
    if (!peer->versioned || lz_probe_read(path, &p) != LZ_PROBE_OK)
        return 0;
    long major = -1, minor = -1;
    for (size_t i = 0; i < p.elf.nnames; i++) {
        const char *n = p.elf.names[i];
        size_t len = strlen(n);
        /* __nameMAJOR_MINOR: two numbers at the end, after underscores */
        const char *u2 = len > 4 && n[0] == '_' && n[1] == '_' ? strrchr(n, '_') : NULL;
        if (!u2 || !u2[1] || strspn(u2 + 1, "0123456789") != strlen(u2 + 1))
            continue;
        const char *u1 = u2 - 1;
        while (u1 > n && *u1 >= '0' && *u1 <= '9')
            u1--;
        if (*u1 != '_' || u1 + 1 == u2)
            continue;
        long x = strtol(u1 + 1, NULL, 10), y = strtol(u2 + 1, NULL, 10);
        if (x > major || (x == major && y > minor)) {
            major = x;
            minor = y;
        }
    }
    lz_probe_free(&p);
    return major >= 0 && snprintf(out, size, "%ld.%ld", major, minor) < (int)size;
}

struct found {
    char *path;              /* the first real copy of the peer */
};

static int first_copy(void *ctx, const char *path, const char *why)
{
    (void)why;
    struct found *f = ctx;
    if (!path)
        return 0;
    f->path = strdup(path);
    return 1;
}

/* The loaded copy of peer as the dynamic linker names it (malloc'd), or
 * NULL. */
static char *loaded_peer(const lz_peer *peer)
{
    char marker[160];
    lz_shim_marker(peer->shim, marker, sizeof marker);
    struct found f = {NULL};
    for (const char *const *s = peer->sonames; *s && !f.path; s++)
        lz_objects_real_with_soname(*s, marker, first_copy, &f);
    return f.path;
}

int lz_release_peer_dir(const lz_lib *lib, char *dir, size_t size)
{
    /* The directory as the dynamic linker names the peer: where it was
     * found (a directory of links, say), not where the links lead. */
    for (const lz_peer *peer = lib->peers; peer && peer->display; peer++) {
        char *at = loaded_peer(peer);
        char *slash = at ? strrchr(at, '/') : NULL;
        /* Never a relative name (dlopen("./x"), LD_LIBRARY_PATH=.): the
         * current directory may not be the one it was loaded from. */
        int ok = slash && at[0] == '/' && slash > at && (size_t)(slash - at) < size;
        if (ok) {
            memcpy(dir, at, (size_t)(slash - at));
            dir[slash - at] = '\0';
        }
        free(at);
        if (ok)
            return 1;
    }
    return 0;
}

int lz_release_compare(const lz_lib *lib, const lz_peer *peer, const char *path, const char *at,
                       char *why, size_t size)
{
    char *real = realpath(path, NULL), *at_real = at[0] == '/' ? realpath(at, NULL) : NULL;
    int r = LZ_RELEASE_MATCH;
    char mine[64], theirs[64];
    if (at[0] != '/') {
        snprintf(why, size, "%s is loaded by a relative name, %s, so where it lies cannot be told",
                 peer->display, at);
        r = LZ_RELEASE_UNKNOWN;
    } else if (!real || !at_real) {
        snprintf(why, size, "%s is loaded from %s, whose file %s", peer->display, at,
                 at_real ? "the candidate's path does not lead to a file" : "is gone");
        r = LZ_RELEASE_UNKNOWN;
    } else if (same_dir(path, at) || same_dir(real, at_real) || same_file(real, at_real)) {
        r = LZ_RELEASE_MATCH; /* one directory holds one release: nothing is read */
    } else if (strcmp(peer->scheme, lib->scheme) != 0 ||
               !(version_in_name(at_real, theirs, sizeof theirs) ||
                 peer_version_in_exports(peer, at_real, theirs, sizeof theirs))) {
        snprintf(why, size, "%s is loaded from %s, whose version cannot be read, and this copy "
                 "is not beside it", peer->display, at);
        r = same_tree(path, at) || same_tree(real, at_real) ? LZ_RELEASE_MATCH : LZ_RELEASE_UNKNOWN;
    } else if (!lz_release_version(lib, path, mine, sizeof mine)) {
        snprintf(why, size, "its version cannot be read, and it is not beside %s %s, loaded from "
                 "%s", peer->display, theirs, at);
        r = same_tree(path, at) || same_tree(real, at_real) ? LZ_RELEASE_MATCH : LZ_RELEASE_UNKNOWN;
    } else {
        long a, b, x, y;
        major_minor(mine, &a, &b);
        major_minor(theirs, &x, &y);
        int cmp = a != x ? (a < x ? -1 : 1) : b != y ? (b < y ? -1 : 1) : 0;
        const char *rule = peer->relation == 1 ? "older than"
                           : peer->relation == 2 ? "newer than" : "not of the release of";
        int bad = peer->relation == 1 ? cmp < 0 : peer->relation == 2 ? cmp > 0 : cmp != 0;
        if (bad) {
            snprintf(why, size, "version %s is %s %s %s, loaded from %s", mine, rule, peer->display,
                     theirs, at);
            r = LZ_RELEASE_MISMATCH;
        }
    }
    free(real);
    free(at_real);
    return r;
}

int lz_release_judge(const lz_lib *lib, const char *path, char *why, size_t size)
{
    int worst = LZ_RELEASE_MATCH;
    /* Each peer's reason on the heap (a first call may run on a small
     * thread stack); out of memory, the reasons go without words. */
    char *one = size ? malloc(size) : NULL;
    for (const lz_peer *peer = lib->peers; peer && peer->display; peer++) {
        char *at = loaded_peer(peer);
        int r = at ? lz_release_compare(lib, peer, path, at, one, one ? size : 0)
                   : LZ_RELEASE_MATCH;
        free(at);
        if (r > worst) {
            worst = r;
            snprintf(why, size, "%s", one ? one : "");
        }
    }
    free(one);
    return worst;
}
