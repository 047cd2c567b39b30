/* SPDX-License-Identifier: MIT */
/* The audit module's node copy (run_nodecopy.h).
 *
 * Where: DIR/lazynccl-UID/KEY/liblazynccl-audit.so, DIR the first of
 * $LAZYNCCL_NODE_DIR (the user's word: any filesystem), $XDG_RUNTIME_DIR
 * and /dev/shm that is a memory filesystem (tmpfs or ramfs: node-local by
 * construction) not mounted noexec. KEY is the module's identity as this
 * node sees it (inode, size, mtime), so a reinstall gets a new copy and an
 * old one is never taken for it; the file keeps the module's name, by
 * which the module and a nested launcher know an entry of LD_AUDIT as
 * lazynccl's.
 *
 * Trust: DIR/lazynccl-UID must be a directory (not a link) of this user's
 * with no access for others, and the copy a file of this user's: /dev/shm
 * is writable by all, and a directory another user made first there would
 * otherwise hand that user every process of the job. A copy is written to a
 * temporary name and renamed into place, so that ranks of one node making
 * it at once each see a whole file. */
#include "run_nodecopy.h"
#include "common/lz_dropins.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/statvfs.h> /* ST_NOEXEC */
#include <unistd.h>

#define TMPFS_MAGIC_ 0x01021994
#define RAMFS_MAGIC_ 0x858458f6

/* dir is a directory of this user's that others cannot enter; made (0700)
 * when absent. Looked at first, so that the usual case fails no call. */
static int own_dir(const char *dir)
{
    struct stat st;
    if (lstat(dir, &st) != 0 && (errno != ENOENT || (mkdir(dir, 0700) != 0 && errno != EEXIST) ||
                                 lstat(dir, &st) != 0))
        return 0;
    return S_ISDIR(st.st_mode) && st.st_uid == geteuid() && (st.st_mode & 077) == 0;
}

/* 1 when no other user can change what path names: each of its
 * components, from the root, a directory (no link) of root's or this
 * user's that others cannot write to, or can only as /tmp and /dev/shm
 * (sticky: they cannot rename or remove what is not theirs). LD_AUDIT
 * names the copy by its path, opened by every process of the job: a
 * $XDG_RUNTIME_DIR inherited from another user (su, sudo -E) would
 * otherwise let that user swap in a module of theirs. */
static int trusted_path(const char *path)
{
    char prefix[4096];
    size_t n = strlen(path);
    if (n >= sizeof prefix)
        return 0;
    for (size_t end = 1; end <= n; end++) {
        if (end < n && path[end] != '/')
            continue;
        struct stat st;
        memcpy(prefix, path, end);
        prefix[end] = '\0';
        if (lstat(prefix, &st) != 0 || !S_ISDIR(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()) ||
            ((st.st_mode & 022) && !(st.st_mode & S_ISVTX)))
            return 0;
    }
    return 1;
}

/* A directory the copy may live under: one no other user can change, on a
 * memory filesystem (unless the user named it) that lets its files be
 * mapped executable. */
static int usable(const char *dir, int named)
{
    struct statfs fs;
    if (!dir || dir[0] != '/' || statfs(dir, &fs) != 0 || (fs.f_flags & ST_NOEXEC) || !trusted_path(dir))
        return 0;
    return named || fs.f_type == TMPFS_MAGIC_ || fs.f_type == (typeof(fs.f_type))RAMFS_MAGIC_;
}

/* from's bytes into a new file at to (mode 0500): 0; -1 when to could not
 * be made (another's, or none); -2 when it was made and not filled. */
static int copy(int from, const char *to)
{
    int fd = open(to, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0500);
    if (fd < 0)
        return -1;
    /* On the heap: a launcher started with a small stack (ulimit -s) must
     * not fault here. */
    size_t cap = 65536;
    char *buf = malloc(cap);
    ssize_t n;
    int rc = buf ? 0 : -2;
    while (rc == 0 && (n = read(from, buf, cap)) != 0) {
        if (n < 0) {
            rc = errno == EINTR ? 0 : -2;
            continue;
        }
        for (ssize_t at = 0; rc == 0 && at < n;) {
            ssize_t w = write(fd, buf + at, (size_t)(n - at));
            if (w < 0 && errno != EINTR)
                rc = -2;
            at += w > 0 ? w : 0;
        }
    }
    free(buf);
    if (close(fd) != 0)
        rc = -2;
    return rc;
}

static int same_file(const struct stat *a, const struct stat *b)
{
    return a->st_ino == b->st_ino && a->st_dev == b->st_dev && a->st_size == b->st_size &&
           a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* The copy of module (whose identity is src) under base, made if absent. */
static int copy_under(const char *base, const char *module, const struct stat *src, char *out, size_t size)
{
    char dir[4096], tmp[4096];
    if ((size_t)snprintf(dir, sizeof dir, "%s/lazynccl-%lu", base, (unsigned long)geteuid()) >= sizeof dir ||
        !own_dir(dir))
        return 0;
    size_t n = strlen(dir);
    struct stat st;
    if ((size_t)snprintf(dir + n, sizeof dir - n, "/%llx-%llx-%llx.%09ld", (unsigned long long)src->st_ino,
                         (unsigned long long)src->st_size, (unsigned long long)src->st_mtim.tv_sec,
                         (long)src->st_mtim.tv_nsec) >= sizeof dir - n ||
        (size_t)snprintf(out, size, "%s/" LZ_AUDIT_FILE, dir) >= size)
        return 0;
    /* The directory above is this user's alone: what is in it is too. */
    if (lstat(out, &st) == 0)
        return S_ISREG(st.st_mode) && st.st_uid == geteuid() && st.st_size == src->st_size;
    if (!own_dir(dir))
        return 0;
    if ((size_t)snprintf(tmp, sizeof tmp, "%s/.%ld.tmp", dir, (long)getpid()) >= sizeof tmp)
        return 0;
    int fd = open(module, O_RDONLY | O_CLOEXEC);
    int copied = fd >= 0 && fstat(fd, &st) == 0 && same_file(&st, src) ? copy(fd, tmp) : -1;
    int ok = copied == 0 && rename(tmp, out) == 0;
    if (fd >= 0)
        close(fd);
    if (!ok && copied != -1) /* ours, half-made or not renamed: never another's */
        unlink(tmp);
    return ok;
}

/* 1 when this launcher runs as a task that a launcher started on this node
 * (srun's, mpirun's: each marks its tasks): the job's processes below it
 * stay on this node, but for a remote launcher one of them starts, which
 * hands on the installed module (common/lz_nodecopy.h). */
static int in_task(void)
{
    static const char *const marks[] = {"SLURM_STEP_ID", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK",
                                        "FLUX_TASK_RANK"};
    for (unsigned i = 0; i < sizeof marks / sizeof *marks; i++) {
        const char *v = getenv(marks[i]);
        if (v && *v)
            return 1;
    }
    return 0;
}

int run_nodecopy(const char *module, enum run_node_copy want, char *out, size_t size, char *why, size_t whysize)
{
    const char *named = getenv(RUN_NODE_DIR_ENV);
    struct stat src;
    struct statfs fs;
    why[0] = '\0';
    if (named && !*named)
        named = NULL;
    int asked = want == RUN_NODE_COPY_ASKED || (want == RUN_NODE_COPY_DEFAULT && named);
    if (want == RUN_NODE_COPY_OFF || (!asked && !in_task()) || module[0] != '/' || stat(module, &src) != 0 ||
        !S_ISREG(src.st_mode))
        return 0;
    if (named) {
        if (usable(named, 1) && copy_under(named, module, &src, out, size))
            return 1;
        snprintf(why, whysize, RUN_NODE_DIR_ENV "=%s: %s: the installed module is named instead", named,
                 named[0] != '/' ? "not an absolute path"
                 : statfs(named, &fs) != 0 ? strerror(errno)
                 : (fs.f_flags & ST_NOEXEC) ? "mounted noexec"
                 : !trusted_path(named) ? "another user could change it (a directory on its path is a link, "
                                          "or another user's, or open to others without the sticky bit)"
                 : "no directory of this user's alone could hold the copy there (one of another user's, "
                   "open to others, or a link; or the copy could not be written)");
        return 0;
    }
    const char *bases[] = {getenv("XDG_RUNTIME_DIR"), "/dev/shm"};
    for (unsigned i = 0; i < sizeof bases / sizeof *bases; i++)
        if (usable(bases[i], 0) && copy_under(bases[i], module, &src, out, size))
            return 1;
    /* Said only where asked for: a task that cannot have one runs as
     * before, naming the installed module. */
    if (asked)
        snprintf(why, whysize, "--node-copy: no memory filesystem of this user's alone could hold the copy "
                               "($XDG_RUNTIME_DIR, /dev/shm): the installed module is named instead");
    return 0;
}
