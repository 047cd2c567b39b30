/* SPDX-License-Identifier: MIT */
/* The job's resolution cache in the audit module (lz_cache.h). It runs
 * inside the dynamic linker: no C library, no allocation but lz_sys's. */
#include "lz_cache.h"
#include "lz_sbuf.h"
#include "lz_sys.h"
#include "common/lz_cachefile.h"
#include "common/lz_pathlist.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <unistd.h>
#include <linux/limits.h>
#include <stdint.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif

#define LEARNT_MAX (256u << 10)
#define BEFORE_MAX (16u << 10)
#define TRIED_MAX (64u << 10)

typedef struct entry {
    uint64_t key;
    const char *path, *size, *mtime, *step; /* NUL-terminated in the file's copy */
} entry;

typedef struct cache {
    char path[PATH_MAX];
    const char *llp;     /* LD_LIBRARY_PATH as the process started (ld.so's) */
    char *text;          /* the file as read, split in place */
    entry *entries;
    size_t n;
    uint64_t node;       /* the node's id, once computed */
    int node_known;
    void *cpu_record;    /* ld.so's _dl_x86_get_cpu_features, or NULL */
    /* The request being answered by ld.so (a miss). */
    int waiting;
    /* Its candidates so far, each NUL-terminated (ntried bytes; -1 once
     * they do not fit): a request that ended without an object mapped is
     * recorded as found nowhere where ld.so tried some and none of them
     * exists (ld.so also ends a request at a file of the other class, or
     * at a copy already loaded under another name: files that exist). */
    char *tried;
    long ntried;
    /* The request is one the cache holds that ld.so finds nothing for:
     * every candidate is skipped. */
    int refusing;
    uint64_t key;
    char name[256];
    char before[BEFORE_MAX];
    /* Learnt lines, to be merged into the file. */
    char *learnt;
    size_t nlearnt;
} cache;

static cache *c LZ_HOT_DATA;

int lz_cache_on(void)
{
    return c != 0;
}

/* The file at path whole, NUL-terminated, into fresh memory (*len its
 * size): where it is a regular file of this user's, writable by nobody
 * else, of at most LZ_CACHE_MAX bytes. NULL with *len 0 when it does not
 * exist; NULL with *len 1 when refused (why names the reason). */
static char *read_own(const char *path, size_t *len, const char **why)
{
    *len = 0;
    int fd = lz_sys_open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    if (fd < 0)
        return 0;
    struct stat st;
    char *buf = 0;
    *len = 1;
    if (fstat(fd, &st) != 0)
        *why = "cannot be read";
    else if ((*why = lz_cache_refusal(&st, lz_sys_getauxval(AT_EUID))))
        ;
    else if (!(buf = lz_sys_alloc((size_t)st.st_size + 1)))
        *why = "no memory";
    else {
        size_t n = 0;
        long r;
        while (n < (size_t)st.st_size && (r = pread(fd, buf + n, (size_t)st.st_size - n, (off_t)n)) > 0)
            n += (size_t)r;
        buf[n] = '\0';
        *len = n;
        if (n != (size_t)st.st_size) {
            lz_sys_free(buf, (size_t)st.st_size + 1);
            buf = 0, *len = 1, *why = "cannot be read";
        }
    }
    lz_sys_close(fd);
    return buf;
}

static uint64_t parse_hex(const char *s)
{
    uint64_t v = 0;
    for (; *s; s++)
        v = v << 4 | (uint64_t)(*s <= '9' ? *s - '0' : *s - 'a' + 10);
    return v;
}

/* The file's lines into entries, split in place: 1, or 0 when a line is
 * not an entry (the whole cache is then refused: a file that is not ours
 * is never half used). An empty file is an empty cache. */
static int parse(cache *k, char *text, size_t len)
{
    size_t magic = sizeof LZ_CACHE_MAGIC - 1;
    if (len == 0)
        return 1;
    if (len < magic || memcmp(text, LZ_CACHE_MAGIC, magic) != 0)
        return 0;
    size_t lines = 0;
    for (size_t i = magic; i < len; i++)
        lines += text[i] == '\n';
    if (lines > LZ_CACHE_MAX_ENTRIES || (lines && !(k->entries = lz_sys_alloc(lines * sizeof *k->entries))))
        return 0;
    for (char *p = text + magic; *p;) {
        char *nl = (char *)lz_sys_find(p, '\n'), *f[LZ_CACHE_FIELDS];
        if (!*nl)
            return 0;
        *nl = '\0';
        if (!lz_cache_entry(p, f))
            return 0;
        entry *e = &k->entries[k->n++];
        e->key = parse_hex(f[0]);
        e->path = f[2], e->size = f[3], e->mtime = f[4], e->step = f[5];
        p = nl + 1;
    }
    return 1;
}

void lz_cache_open(const char *path, void *cpu_record)
{
    if (!path || path[0] != '/' || strlen(path) >= PATH_MAX) {
        if (path && *path)
            lz_say("cache ", path, ": not an absolute path: no cache");
        return;
    }
    /* ld.so run as a command takes its library path from its options,
     * and the program's $ORIGIN is not its own file's: not keyed. */
    if (!lz_sys_getauxval(AT_BASE)) {
        lz_say("cache ", path, ": ld.so run as a command: no cache");
        return;
    }
    cache *k = lz_sys_alloc(sizeof *k);
    if (!k)
        return;
    memcpy(k->path, path, strlen(path) + 1);
    k->cpu_record = cpu_record;
    /* The program may change its environment; ld.so read it at start. */
    const char *llp = lz_sys_getenv("LD_LIBRARY_PATH");
    if (llp) {
        size_t n = strlen(llp) + 1;
        char *copy = lz_sys_alloc(n);
        if (!copy)
            return;
        memcpy(copy, llp, n);
        k->llp = copy;
    }
    size_t len;
    const char *why = "";
    char *text = read_own(path, &len, &why);
    if (!text && len) {
        lz_say("cache ", path, " refused: ", why);
        return;
    }
    if (text && !parse(k, text, len)) {
        lz_say("cache ", path, " refused: a line of it is not an entry of a lazynccl cache");
        return;
    }
    k->text = text;
    c = k;
}

/* /etc/ld.so.cache's contents into h, eight bytes at a time: nodes of one
 * image hold the same file under their own times. */
static uint64_t ld_cache_id(uint64_t h)
{
    int fd = lz_sys_open("/etc/ld.so.cache", O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return h;
    char *buf = 0;
    size_t len = 0;
    if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 && (size_t)st.st_size <= LZ_CACHE_MAX &&
        (buf = lz_sys_alloc((size_t)st.st_size + 8))) {
        long r;
        while (len < (size_t)st.st_size && (r = pread(fd, buf + len, (size_t)st.st_size - len, (off_t)len)) > 0)
            len += (size_t)r;
    }
    lz_sys_close(fd);
    uint64_t x = h ^ len;
    for (size_t i = 0; i < len; i += 8) {
        uint64_t w;
        memcpy(&w, buf + i, 8); /* the 8 bytes past the end are the allocation's zeros */
        x = (x ^ w) * 0x9e3779b97f4a7c15ull;
        x ^= x >> 29;
    }
    if (buf)
        lz_sys_free(buf, (size_t)st.st_size + 8);
    return lz_fnv(h, (const char *)&x, sizeof x);
}

#if defined(__x86_64__)
/* The CPU's part of the node's id: CPUID leaves 1, 7 and 0x80000001, the
 * APIC id (another on every core) left out. From ld.so's record of them
 * where it has the layout of glibc 2.32 on (the vendor's kind, 1 to 4,
 * then four ints, then a leaf's registers and its usable bits a leaf):
 * CPUID itself traps to the hypervisor in a virtual machine, ~15 us each,
 * in every process of a job. Another layout gives another id (a miss on
 * another core at worst), never one shared with another CPU: the raw
 * registers are in the bytes hashed either way. */
static uint64_t cpu_id(uint64_t h)
{
    typedef const unsigned char *(*record_fn)(unsigned int);
    const unsigned char *rec = c->cpu_record ? ((record_fn)c->cpu_record)(0) : 0;
    int kind = 0;
    if (rec)
        memcpy(&kind, rec, sizeof kind);
    if (kind >= 1 && kind <= 4) {
        enum { BASIC = 20, LEAF = 32, APIC_BYTE = BASIC + 7 };
        unsigned char b[BASIC + 3 * LEAF];
        memcpy(b, rec, sizeof b);
        b[APIC_BYTE] = 0;
        return lz_fnv(h, (const char *)b, sizeof b);
    }
    unsigned r[12] = {0};
    __cpuid(1, r[0], r[1], r[2], r[3]);
    __cpuid_count(7, 0, r[4], r[5], r[6], r[7]);
    __cpuid(0x80000001u, r[8], r[9], r[10], r[11]);
    r[1] &= 0x00ffffffu; /* the APIC id: another on every core */
    return lz_fnv(h, (const char *)r, sizeof r);
}
#endif

/* The node's id: what decides ld.so's answer beside the request and its
 * directories. Its hardware capabilities (glibc-hwcaps subdirectories,
 * $PLATFORM), GLIBC_TUNABLES (which can mask them) and /etc/ld.so.cache's
 * contents (the one file the cache costs a process beside its own). */
static uint64_t node_id(void)
{
    if (c->node_known)
        return c->node;
    uint64_t h = LZ_FNV_START;
    unsigned long caps[2] = {lz_sys_getauxval(AT_HWCAP), lz_sys_getauxval(AT_HWCAP2)};
    h = lz_fnv(h, (const char *)caps, sizeof caps);
    const char *platform = (const char *)lz_sys_getauxval(AT_PLATFORM);
    if (platform)
        h = lz_fnv(h, platform, strlen(platform));
#if defined(__x86_64__)
    h = cpu_id(h);
#endif
    const char *tunables = lz_sys_getenv("GLIBC_TUNABLES");
    if (tunables)
        h = lz_fnv(h, tunables, strlen(tunables));
    h = ld_cache_id(h);
    c->node = h;
    c->node_known = 1;
    return h;
}

/* The directory of the file at path (the program's: /proc/self/exe, as
 * ld.so reads it for $ORIGIN). */
static size_t origin_of(const char *file, char *out, size_t size)
{
    const char *src = file;
    if (!file[0]) {
        long n = lz_sys_readlink("/proc/self/exe", out, size - 1);
        if (n <= 0)
            return 0;
        out[n] = '\0';
        src = out;
    }
    size_t dir = 0;
    for (size_t i = 0; src[i]; i++)
        if (src[i] == '/')
            dir = i;
    if (src != out)
        for (size_t i = 0; i < dir && i + 1 < size; i++)
            out[i] = src[i];
    out[dir < size ? dir : size - 1] = '\0';
    return dir;
}

/* Whether a search list names only absolute directories: an empty entry
 * or a relative one is the current directory's, which the key cannot hold
 * (the process may change it); seps, its separators. */
static int absolute_only(const char *list, const char *seps)
{
    for (const char *p = list;; p++) {
        if (*p != '/')
            return 0;
        p += lz_pathlist_entry(p, seps);
        if (!*p)
            return 1;
    }
}

/* A run path list with $ORIGIN and ${ORIGIN} made owner's directory: 0
 * where it holds an entry the key cannot (another token, a relative
 * directory). */
static int put_expanded(lz_sbuf *b, const char *list, const char *owner)
{
    char origin[PATH_MAX];
    int have = 0;
    size_t from = b->n;
    for (const char *p = list; *p;) {
        size_t skip = 0;
        if (p[0] == '$' && memcmp(p + 1, "ORIGIN", 6) == 0 && (p[7] == '/' || p[7] == ':' || !p[7]))
            skip = 7;
        else if (p[0] == '$' && memcmp(p + 1, "{ORIGIN}", 8) == 0)
            skip = 9;
        else if (p[0] == '$')
            return 0; /* $LIB, $PLATFORM: ld.so's, not the key's */
        if (!skip) {
            lz_sbuf_put_n(b, p++, 1);
            continue;
        }
        if (!have && !origin_of(owner, origin, sizeof origin))
            return 0;
        have = 1;
        lz_sbuf_put(b, origin);
        p += skip;
    }
    return !b->full && absolute_only(b->p + from, ":");
}

/* BEFORE (lz_cachefile.h) of a request from a: 0 where it cannot be keyed
 * (the request is then left to ld.so, unrecorded). */
static int before_of(const lz_cache_asker *a, lz_sbuf *b)
{
    const char *llp = c->llp && *c->llp ? c->llp : 0;
    if (llp && (!absolute_only(llp, ":;") || lz_sys_find(llp, '$')[0]))
        return 0; /* the current directory's entries, $ORIGIN of the program's */
    if (a->runpath) {
        lz_sbuf_put(b, "L:");
        if (llp)
            lz_sbuf_put(b, llp);
        lz_sbuf_put(b, "|U:");
        return put_expanded(b, a->runpath, a->origin_of);
    }
    lz_sbuf_put(b, "R:");
    if (a->rpath && !put_expanded(b, a->rpath, a->origin_of))
        return 0;
    for (int i = 0; i < a->nchain; i++) {
        lz_sbuf_put(b, "|C:");
        if (!put_expanded(b, a->chain[i], a->chain_of[i]))
            return 0;
    }
    lz_sbuf_put(b, "|E:");
    if (a->exe_rpath && !put_expanded(b, a->exe_rpath, ""))
        return 0;
    lz_sbuf_put(b, "|L:");
    if (llp)
        lz_sbuf_put(b, llp);
    return 1;
}

/* Whether any candidate of the request is there. */
static int any_tried(void)
{
    struct stat st;
    if (c->ntried < 0)
        return 1;
    for (long i = 0; i < c->ntried; i += (long)strlen(c->tried + i) + 1)
        if (lz_sys_stat(c->tried + i, &st) == 0)
            return 1;
    return 0;
}

void lz_cache_request_ended(void)
{
    if (!c)
        return;
    if (c->waiting && c->ntried > 0 && !any_tried())
        lz_cache_learn("-", "none");
    c->ntried = 0;
    c->waiting = 0;
    c->refusing = 0;
}

int lz_cache_candidate(const char *path)
{
    if (!c)
        return 1;
    if (c->refusing)
        return 0;
    size_t len = strlen(path);
    if (c->waiting && c->ntried >= 0) {
        if (!c->tried && !(c->tried = lz_sys_alloc(TRIED_MAX)))
            c->ntried = -1;
        else if ((size_t)c->ntried + len + 1 > TRIED_MAX)
            c->ntried = -1;
        else {
            memcpy(c->tried + c->ntried, path, len + 1);
            c->ntried += (long)len + 1;
        }
    }
    return 1;
}

const char *lz_cache_lookup(const char *name, const lz_cache_asker *a, const char **step)
{
    lz_cache_request_ended();
    size_t len = strlen(name);
    if (len >= sizeof c->name)
        return 0;
    lz_sbuf b = {c->before, 0, sizeof c->before, 0};
    c->before[0] = '\0';
    if (!before_of(a, &b) || b.full)
        return 0;
    for (size_t i = 0; i < b.n; i++)
        if (b.p[i] == '\t' || b.p[i] == '\n')
            return 0; /* a line of the file cannot hold it */
    uint64_t key = lz_fnv(lz_fnv(lz_fnv(LZ_FNV_START, name, len), b.p, b.n), (const char *)&(uint64_t){node_id()}, 8);
    for (size_t i = 0; i < c->n; i++) {
        const entry *e = &c->entries[i];
        if (e->key != key)
            continue;
        if (lz_sys_same(e->path, "-")) {
            /* ld.so found none: it fails the request as plain, its
             * candidates skipped unopened (la_objsearch's NULL). */
            c->refusing = 1;
            lz_say("cache: ", name, ": the dynamic linker finds none (recorded): no candidate is tried");
            return 0;
        }
        struct stat st;
        char size[24], mtime[24];
        lz_sbuf z = {size, 0, sizeof size, 0}, m = {mtime, 0, sizeof mtime, 0};
        /* The same file on any node: a regular file of the size and time
         * recorded (a device and inode differ from node to node, a
         * shared filesystem's too). */
        if (lz_sys_stat(e->path, &st) == 0 && S_ISREG(st.st_mode)) {
            lz_sbuf_put_hex(&z, (uint64_t)st.st_size);
            lz_sbuf_put_hex(&m, (uint64_t)st.st_mtim.tv_sec);
            if (lz_sys_same(size, e->size) && lz_sys_same(mtime, e->mtime)) {
                *step = e->step;
                lz_say("cache: ", name, " is ", e->path, " (", e->step, ")");
                return e->path;
            }
        }
        /* The contract broken for this file: ld.so's own search, never another file. */
        lz_say("cache: ", name, ": ", e->path, " is gone or another file now: the dynamic linker searches");
        return 0;
    }
    c->waiting = 1;
    c->key = key;
    memcpy(c->name, name, len + 1);
    return 0;
}

int lz_cache_waiting(void)
{
    return c && c->waiting;
}

void lz_cache_forget(void)
{
    if (c)
        c->waiting = 0, c->refusing = 0;
}

void lz_cache_learn(const char *path, const char *step)
{
    if (!c || !c->waiting)
        return;
    c->waiting = 0;
    struct stat st = {0};
    int none = lz_sys_same(path, "-");
    if (!none && (path[0] != '/' || lz_sys_stat(path, &st) != 0))
        return;
    for (const char *p = path; *p; p++)
        if (*p == '\t' || *p == '\n')
            return;
    if (!c->learnt && !(c->learnt = lz_sys_alloc(LEARNT_MAX)))
        return;
    lz_sbuf b = {c->learnt, c->nlearnt, LEARNT_MAX, 0};
    char key[16];
    lz_hex16(c->key, key);
    lz_sbuf_put_n(&b, key, 16);
    lz_sbuf_put(&b, "\t");
    lz_sbuf_put(&b, c->name);
    lz_sbuf_put(&b, "\t");
    lz_sbuf_put(&b, path);
    lz_sbuf_put(&b, "\t");
    lz_sbuf_put_hex(&b, (uint64_t)st.st_size);
    lz_sbuf_put(&b, "\t");
    lz_sbuf_put_hex(&b, (uint64_t)st.st_mtim.tv_sec);
    lz_sbuf_put(&b, "\t");
    lz_sbuf_put(&b, step);
    lz_sbuf_put(&b, "\t");
    lz_sbuf_put(&b, c->before);
    lz_sbuf_put(&b, "\n");
    if (!b.full)
        c->nlearnt = b.n;
}

/* 1 when text holds a line for key. */
static int holds(const char *text, size_t len, const char *key)
{
    for (size_t i = 0; i + 17 <= len; i++)
        if ((i == 0 || text[i - 1] == '\n') && memcmp(text + i, key, 16) == 0 && text[i + 16] == '\t')
            return 1;
    return 0;
}

/* An exclusive lock on path.lock, made if missing, for the merge: writers
 * one at a time, so that none replaces the file with a copy that lacks
 * what another wrote meanwhile. Tried for at most about 100 ms, never
 * waited on for good (a writer stopped by a debugger holding it must not
 * stop every process of the job). The descriptor; -1 where the filesystem
 * gives no lock (the merge goes on unlocked: at worst a line is learnt
 * again); -2 while another holds it (this process writes nothing: a later
 * one learns the same). */
static int lock(const char *path)
{
    char name[PATH_MAX + 8];
    lz_sbuf b = {name, 0, sizeof name, 0};
    lz_sbuf_put(&b, path);
    lz_sbuf_put(&b, ".lock");
    int fd = b.full ? -1 : lz_sys_create(name, O_RDWR | O_NOFOLLOW | O_NONBLOCK, 0644);
    for (int tries = 0; fd >= 0; tries++) {
        long rc = lz_sys_flock(fd, LOCK_EX | LOCK_NB);
        if (rc == 0)
            return fd;
        if (rc != -EWOULDBLOCK || tries == 50) {
            lz_sys_close(fd);
            return rc == -EWOULDBLOCK ? -2 : -1;
        }
        lz_sys_pause_ms(2);
    }
    return -1;
}

void lz_cache_flush(void)
{
    lz_cache_request_ended();
    if (!c || !c->nlearnt)
        return;
    size_t n = c->nlearnt;
    c->nlearnt = 0;
    /* A cache named through a symbolic link is read, never replaced (the
     * rename would replace the link). */
    struct stat link;
    int exists = lz_sys_lstat(c->path, &link) == 0;
    if (exists && !S_ISREG(link.st_mode)) {
        lz_say("cache ", c->path, " not written: not a regular file (a link?)");
        return;
    }
    int held = lock(c->path);
    if (held == -2) {
        lz_say("cache ", c->path, " not written: another process holds its lock");
        return;
    }
    /* What other processes wrote meanwhile is kept: the file as it is now,
     * then the lines it lacks. */
    size_t len;
    const char *why = "";
    char *now = read_own(c->path, &len, &why);
    size_t magic = sizeof LZ_CACHE_MAGIC - 1;
    char tmp[PATH_MAX + 32];
    lz_sbuf t = {tmp, 0, sizeof tmp, 0};
    lz_sbuf_put(&t, c->path);
    lz_sbuf_put(&t, ".tmp.");
    lz_sbuf_put_hex(&t, (uint64_t)lz_sys_getpid());
    int fd = -1;
    if ((!now && len) || (now && len && (len < magic || memcmp(now, LZ_CACHE_MAGIC, magic) != 0)))
        lz_say("cache ", c->path, " not written: it is ", now ? "not a lazynccl cache" : why);
    else if (t.full || (fd = lz_sys_create(tmp, O_WRONLY | O_EXCL | O_NOFOLLOW,
                                          exists ? (unsigned)link.st_mode & 0644 : 0644)) < 0)
        lz_say("cache ", c->path, " not written: cannot create ", tmp);
    if (fd >= 0) {
        int ok = now && len ? lz_sys_write_all(fd, now, len) : lz_sys_write_all(fd, LZ_CACHE_MAGIC, magic);
        size_t total = now && len ? len : magic, lines = 0;
        for (size_t i = magic; now && i < len; i++)
            lines += now[i] == '\n';
        for (size_t i = 0; ok && i < n;) {
            size_t end = i;
            while (end < n && c->learnt[end] != '\n')
                end++;
            end++;
            if (!(now && holds(now, len, c->learnt + i)) && total + (end - i) <= LZ_CACHE_MAX &&
                lines < LZ_CACHE_MAX_ENTRIES) {
                ok = lz_sys_write_all(fd, c->learnt + i, end - i);
                total += end - i;
                lines++;
            }
            i = end;
        }
        lz_sys_close(fd);
        if (!ok || lz_sys_rename(tmp, c->path) != 0) {
            lz_sys_unlink(tmp);
            lz_say("cache ", c->path, " not written: ", ok ? "cannot rename into place" : "write failed");
        }
    }
    if (now)
        lz_sys_free(now, len + 1);
    if (held >= 0)
        lz_sys_close(held);
}
