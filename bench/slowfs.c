/* SPDX-License-Identifier: MIT
 * slowfs: a FUSE passthrough of one directory that waits a set time on every
 * metadata operation (lookup, getattr, open, readdir, readlink, access,
 * create, rename, unlink, ...) and counts the operations it serves: the
 * stand-in for a loaded parallel filesystem's metadata server in
 * bench/scale (docs/concepts/performance.md, "Loading at scale"). Data reads and
 * writes pass through without a wait. libfuse3's high-level API.
 *
 *   slowfs BACKING MOUNTPOINT --delay-us N --counts FILE [--cache SECONDS]
 *
 * --cache: how long the kernel (the client) may keep names, attributes and
 * failed lookups (0: it asks every time). FILE: two 64-bit counters,
 * metadata operations then data operations, shared (mmap'd) with whoever
 * reads it. Runs in the foreground until unmounted (fusermount3 -u, or
 * umount). */
#define FUSE_USE_VERSION 31
#define _GNU_SOURCE
#include <fuse.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static int backing = -1;        /* the backing directory, open */
static long delay_us;
static double cache_s;
static _Atomic uint64_t *counts; /* [0] metadata, [1] data */

/* The backing path of a mount path ("/a/b" -> "a/b", "/" -> "."). */
static const char *rel(const char *path)
{
    return path[1] ? path + 1 : ".";
}

static void meta(void)
{
    atomic_fetch_add(&counts[0], 1);
    if (delay_us > 0) {
        struct timespec ts = {delay_us / 1000000, (delay_us % 1000000) * 1000};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
    }
}

static void *sf_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
    (void)conn;
    cfg->use_ino = 1;
    cfg->entry_timeout = cache_s;
    cfg->attr_timeout = cache_s;
    cfg->negative_timeout = cache_s;
    cfg->kernel_cache = cache_s > 0;
    return NULL;
}

static int sf_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
    meta();
    int rc = fi ? fstat((int)fi->fh, st) : fstatat(backing, rel(path), st, AT_SYMLINK_NOFOLLOW);
    return rc == 0 ? 0 : -errno;
}

static int sf_access(const char *path, int mask)
{
    meta();
    return faccessat(backing, rel(path), mask, 0) == 0 ? 0 : -errno;
}

static int sf_readlink(const char *path, char *buf, size_t size)
{
    meta();
    ssize_t n = readlinkat(backing, rel(path), buf, size - 1);
    if (n < 0)
        return -errno;
    buf[n] = '\0';
    return 0;
}

static int sf_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
                      struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
    (void)off, (void)fi, (void)flags;
    meta();
    int fd = openat(backing, rel(path), O_RDONLY | O_DIRECTORY);
    DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
    if (!d) {
        int err = errno;
        if (fd >= 0)
            close(fd);
        return -err;
    }
    struct dirent *e;
    while ((e = readdir(d)))
        if (fill(buf, e->d_name, NULL, 0, 0))
            break;
    closedir(d);
    return 0;
}

static int sf_open(const char *path, struct fuse_file_info *fi)
{
    meta();
    int fd = openat(backing, rel(path), fi->flags & ~O_NOFOLLOW);
    if (fd < 0)
        return -errno;
    fi->fh = (uint64_t)fd;
    fi->keep_cache = cache_s > 0;
    return 0;
}

static int sf_create(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    meta();
    int fd = openat(backing, rel(path), fi->flags | O_CREAT, mode);
    if (fd < 0)
        return -errno;
    fi->fh = (uint64_t)fd;
    return 0;
}

static int sf_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)path;
    atomic_fetch_add(&counts[1], 1);
    ssize_t n = pread((int)fi->fh, buf, size, off);
    return n < 0 ? -errno : (int)n;
}

static int sf_write(const char *path, const char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
    (void)path;
    atomic_fetch_add(&counts[1], 1);
    ssize_t n = pwrite((int)fi->fh, buf, size, off);
    return n < 0 ? -errno : (int)n;
}

static int sf_release(const char *path, struct fuse_file_info *fi)
{
    (void)path;
    close((int)fi->fh);
    return 0;
}

static int sf_rename(const char *from, const char *to, unsigned int flags)
{
    meta();
    return renameat2(backing, rel(from), backing, rel(to), flags) == 0 ? 0 : -errno;
}

static int sf_unlink(const char *path)
{
    meta();
    return unlinkat(backing, rel(path), 0) == 0 ? 0 : -errno;
}

static int sf_mkdir(const char *path, mode_t mode)
{
    meta();
    return mkdirat(backing, rel(path), mode) == 0 ? 0 : -errno;
}

static int sf_chmod(const char *path, mode_t mode, struct fuse_file_info *fi)
{
    meta();
    int rc = fi ? fchmod((int)fi->fh, mode) : fchmodat(backing, rel(path), mode, 0);
    return rc == 0 ? 0 : -errno;
}

static int sf_truncate(const char *path, off_t size, struct fuse_file_info *fi)
{
    meta();
    int rc;
    if (fi) {
        rc = ftruncate((int)fi->fh, size);
    } else {
        int fd = openat(backing, rel(path), O_WRONLY);
        rc = fd < 0 ? -1 : ftruncate(fd, size);
        if (fd >= 0)
            close(fd);
    }
    return rc == 0 ? 0 : -errno;
}

static int sf_utimens(const char *path, const struct timespec tv[2], struct fuse_file_info *fi)
{
    meta();
    int rc = fi ? futimens((int)fi->fh, tv) : utimensat(backing, rel(path), tv, AT_SYMLINK_NOFOLLOW);
    return rc == 0 ? 0 : -errno;
}

static int sf_statfs(const char *path, struct statvfs *st)
{
    (void)path;
    meta();
    return fstatvfs(backing, st) == 0 ? 0 : -errno;
}

static const struct fuse_operations ops = {
    .init = sf_init, .getattr = sf_getattr, .access = sf_access, .readlink = sf_readlink,
    .readdir = sf_readdir, .open = sf_open, .create = sf_create, .read = sf_read, .write = sf_write,
    .release = sf_release, .rename = sf_rename, .unlink = sf_unlink, .mkdir = sf_mkdir,
    .chmod = sf_chmod, .truncate = sf_truncate, .utimens = sf_utimens, .statfs = sf_statfs,
};

static void usage(void)
{
    fprintf(stderr, "usage: slowfs BACKING MOUNTPOINT --delay-us N --counts FILE [--cache SECONDS]\n");
}

int main(int argc, char **argv)
{
    const char *back = NULL, *mnt = NULL, *count_file = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--delay-us") == 0 && i + 1 < argc)
            delay_us = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--counts") == 0 && i + 1 < argc)
            count_file = argv[++i];
        else if (strcmp(argv[i], "--cache") == 0 && i + 1 < argc)
            cache_s = strtod(argv[++i], NULL);
        else if (!back)
            back = argv[i];
        else if (!mnt)
            mnt = argv[i];
        else {
            usage();
            return 2;
        }
    }
    if (!back || !mnt || !count_file) {
        usage();
        return 2;
    }
    backing = open(back, O_RDONLY | O_DIRECTORY);
    int cf = open(count_file, O_RDWR | O_CREAT, 0644);
    if (backing < 0 || cf < 0 || ftruncate(cf, 2 * sizeof(uint64_t)) != 0) {
        perror("slowfs");
        return 1;
    }
    counts = mmap(NULL, 2 * sizeof(uint64_t), PROT_READ | PROT_WRITE, MAP_SHARED, cf, 0);
    if (counts == MAP_FAILED) {
        perror("slowfs: mmap");
        return 1;
    }
    /* Foreground, multithreaded, readable by every user, as a shared
     * filesystem is. */
    char *fargv[] = {argv[0], (char *)mnt, "-f", "-o", "allow_other,default_permissions", NULL};
    return fuse_main(5, fargv, &ops, NULL);
}
