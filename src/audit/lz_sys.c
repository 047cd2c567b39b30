/* SPDX-License-Identifier: MIT */
/* System calls and string functions without a C library (lz_sys.h). The
 * string functions keep their C names: lz_elffile.c, shared with the
 * runtime, calls them, and here they resolve to these hidden copies. */
#include "lz_sys.h"

#include <elf.h>
#include <link.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <linux/limits.h> /* PATH_MAX: a freestanding <limits.h> (clang's) has none */
#include <sys/stat.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

/* ld.so's __libc_stack_end: the address of argc on the initial stack. */
static long *stack_end LZ_HOT_DATA;
/* The auxiliary vector, found once: the environment array may be edited
 * later (lz_tlsfit.c removes its own variable), which moves its end. */
static ElfW(auxv_t) *auxv LZ_HOT_DATA;

void lz_sys_set_stack_end(void *argc)
{
    stack_end = argc;
    char **env = lz_sys_environ();
    while (env && *env)
        env++;
    auxv = env ? (ElfW(auxv_t) *)(env + 1) : 0;
}

#if defined(__x86_64__)
static long sys6(long n, long a, long b, long c, long d, long e, long f)
{
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}
#elif defined(__aarch64__)
static long sys6(long n, long a, long b, long c, long d, long e, long f)
{
    register long x8 __asm__("x8") = n;
    register long x0 __asm__("x0") = a;
    register long x1 __asm__("x1") = b;
    register long x2 __asm__("x2") = c;
    register long x3 __asm__("x3") = d;
    register long x4 __asm__("x4") = e;
    register long x5 __asm__("x5") = f;
    __asm__ volatile("svc 0"
                     : "+r"(x0)
                     : "r"(x8), "r"(x1), "r"(x2), "r"(x3), "r"(x4), "r"(x5)
                     : "memory");
    return x0;
}
#else
/* Elsewhere the module links the C library (src/audit/meson.build). */
static long sys6(long n, long a, long b, long c, long d, long e, long f)
{
    return syscall(n, a, b, c, d, e, f);
}
#endif

#define SYS(n, a, b, c) sys6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)

int lz_sys_open(const char *path, int flags)
{
    long r = sys6(SYS_openat, AT_FDCWD, (long)path, flags, 0, 0, 0);
    return r < 0 ? -1 : (int)r;
}

int lz_sys_close(int fd)
{
    return SYS(SYS_close, fd, 0, 0) < 0 ? -1 : 0;
}

/* The kernel's struct stat is the C library's on x86-64 and AArch64. */
int lz_sys_stat(const char *path, struct stat *st)
{
    return sys6(SYS_newfstatat, AT_FDCWD, (long)path, (long)st, 0, 0, 0) < 0 ? -1 : 0;
}

LZ_COLD int lz_sys_write_all(int fd, const char *p, size_t n)
{
    while (n) {
        long r = lz_sys_write(fd, p, n);
        if (r <= 0)
            return 0;
        p += r, n -= (size_t)r;
    }
    return 1;
}

LZ_COLD int lz_sys_create(const char *path, int flags, unsigned mode)
{
    long r = sys6(SYS_openat, AT_FDCWD, (long)path, flags | O_CREAT | O_CLOEXEC, (long)mode, 0, 0);
    return r < 0 ? -1 : (int)r;
}

LZ_COLD int lz_sys_rename(const char *from, const char *to)
{
    return sys6(SYS_renameat2, AT_FDCWD, (long)from, AT_FDCWD, (long)to, 0, 0) < 0 ? -1 : 0;
}

LZ_COLD int lz_sys_lstat(const char *path, struct stat *st)
{
    return sys6(SYS_newfstatat, AT_FDCWD, (long)path, (long)st, AT_SYMLINK_NOFOLLOW, 0, 0) < 0 ? -1 : 0;
}

LZ_COLD long lz_sys_flock(int fd, int op)
{
    long r = SYS(SYS_flock, fd, op, 0);
    return r < 0 ? r : 0;
}

LZ_COLD void lz_sys_pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000};
    SYS(SYS_nanosleep, &ts, 0, 0);
}

LZ_COLD int lz_sys_mkdir(const char *path, unsigned mode)
{
    return sys6(SYS_mkdirat, AT_FDCWD, (long)path, (long)mode, 0, 0, 0) < 0 ? -1 : 0;
}

LZ_COLD int lz_sys_unlink(const char *path)
{
    return sys6(SYS_unlinkat, AT_FDCWD, (long)path, 0, 0, 0, 0) < 0 ? -1 : 0;
}

LZ_COLD int lz_sys_nodename(char *buf, size_t size)
{
    struct utsname u;
    if (SYS(SYS_uname, &u, 0, 0) < 0 || size == 0)
        return -1;
    size_t i = 0;
    for (; u.nodename[i] && i + 1 < size; i++)
        buf[i] = u.nodename[i];
    buf[i] = '\0';
    return 0;
}

long lz_sys_write(int fd, const void *buf, size_t len)
{
    return SYS(SYS_write, fd, buf, len);
}

LZ_COLD long lz_sys_readlink(const char *path, char *buf, size_t size)
{
    return sys6(SYS_readlinkat, AT_FDCWD, (long)path, (long)buf, (long)size, 0, 0);
}

long lz_sys_getcwd(char *buf, size_t size)
{
    return SYS(SYS_getcwd, buf, size, 0);
}

int lz_sys_gettid(void)
{
    return (int)SYS(SYS_gettid, 0, 0, 0);
}

int lz_sys_getpid(void)
{
    return (int)SYS(SYS_getpid, 0, 0, 0);
}

LZ_COLD long lz_sys_execve(const char *path, char *const argv[], char *const envp[])
{
    return SYS(SYS_execve, path, argv, envp);
}

/* execveat(2) of the file open at fd itself (AT_EMPTY_PATH): fexecve. */
LZ_COLD long lz_sys_fexecve(int fd, char *const argv[], char *const envp[])
{
    return sys6(SYS_execveat, fd, (long)"", (long)argv, (long)envp, AT_EMPTY_PATH, 0);
}

/* execveat(2) of name relative to the directory open at dirfd. */
LZ_COLD long lz_sys_execveat(int dirfd, const char *name, char *const argv[], char *const envp[])
{
    return sys6(SYS_execveat, dirfd, (long)name, (long)argv, (long)envp, 0, 0);
}

/* dup3(2) with O_CLOEXEC: the new descriptor, or a negative errno. */
LZ_COLD long lz_sys_dup_cloexec(int fd, int to)
{
    return SYS(SYS_dup3, fd, to, O_CLOEXEC);
}

/* Zeroed private memory, never freed: for the rare state that does not fit
 * the module's one page of data (lz_audit.c). 0 when refused. */
LZ_COLD void *lz_sys_alloc(size_t len)
{
    long r = sys6(SYS_mmap, 0, (long)len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return r < 0 && r > -4096 ? 0 : (void *)r;
}

LZ_COLD void lz_sys_free(void *p, size_t len)
{
    SYS(SYS_munmap, p, len, 0);
}

int lz_sys_mincore(void *start, size_t len, unsigned char *vec)
{
    return SYS(SYS_mincore, start, len, vec) < 0 ? -1 : 0;
}

/* What lz_elffile.c calls (pread and fstat may be pread64 and fstat64:
 * the C library's header names the definitions as it names the calls). */
ssize_t pread(int fd, void *buf, size_t len, off_t off)
{
    long r = sys6(SYS_pread64, fd, (long)buf, (long)len, (long)off, 0, 0);
    return r < 0 ? -1 : r;
}

int fstat(int fd, struct stat *sb)
{
    return SYS(SYS_fstat, fd, sb, 0) < 0 ? -1 : 0;
}

/* Every audited process copies and scans the drop-in list (700 bytes for
 * the fourteen drop-ins) and clears a few structures: a word at a time,
 * through a type that may alias anything and sit anywhere. */
typedef size_t __attribute__((may_alias, aligned(1))) lz_word;
#define WORD sizeof(size_t)
#define ONES ((size_t)-1 / 255)

void *memcpy(void *d, const void *s, size_t n)
{
    unsigned char *dp = d;
    const unsigned char *sp = s;
    for (; n >= WORD; n -= WORD, dp += WORD, sp += WORD)
        *(lz_word *)dp = *(const lz_word *)sp;
    while (n--)
        *dp++ = *sp++;
    return d;
}

void *memset(void *d, int c, size_t n)
{
    unsigned char *dp = d;
    size_t w = ONES * (unsigned char)c;
    for (; n >= WORD; n -= WORD, dp += WORD)
        *(lz_word *)dp = w;
    while (n--)
        *dp++ = (unsigned char)c;
    return d;
}

int memcmp(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (; n; n--, x++, y++)
        if (*x != *y)
            return *x - *y;
    return 0;
}

size_t strnlen(const char *s, size_t max)
{
    size_t n = 0;
    while (n < max && s[n])
        n++;
    return n;
}

size_t strlen(const char *s)
{
    return (size_t)(lz_sys_find(s, '\0') - s);
}

/* Aligned words never cross a page, so reading the whole word that holds
 * the string's end faults no more than reading the end does (the module is
 * never sanitized: src/audit/meson.build). */
const char *lz_sys_find(const char *s, char c)
{
    for (; (size_t)s % WORD; s++)
        if (*s == c || !*s)
            return s;
    const size_t highs = ONES * 128, cs = ONES * (unsigned char)c;
    for (;; s += WORD) {
        size_t w = *(const lz_word *)s, x = w ^ cs;
        if (((w - ONES) & ~w & highs) | ((x - ONES) & ~x & highs))
            break;
    }
    while (*s != c && *s)
        s++;
    return s;
}

static int debug LZ_HOT_DATA;

void lz_sys_set_debug(int on)
{
    debug = on;
}

LZ_COLD void lz_sys_say(const char *const *parts)
{
    if (!debug)
        return;
    /* Gathered by the kernel, not copied into a buffer: the module speaks
     * on the thread that called dlopen, whose stack may be 16 KiB. One
     * writev is one line among other processes' (lz_say's parts are few). */
    struct iovec iov[32];
    int n = 0;
    for (; *parts; parts++) {
        iov[n].iov_base = (void *)*parts;
        iov[n].iov_len = strlen(*parts);
        if (++n == 32 || !parts[1]) {
            (void)SYS(SYS_writev, 2, iov, n);
            n = 0;
        }
    }
}

/* The initial stack: argc, argv..., NULL, envp..., NULL, auxv pairs. */
char **lz_sys_argv(void)
{
    return stack_end ? (char **)(stack_end + 1) : 0;
}

char **lz_sys_environ(void)
{
    long *sp = stack_end;
    return sp ? (char **)(sp + 1 + sp[0] + 1) : 0;
}

long lz_sys_env_index(const char *name)
{
    char **env = lz_sys_environ();
    size_t len = strlen(name);
    for (long i = 0; env && env[i]; i++)
        if (memcmp(env[i], name, len) == 0 && env[i][len] == '=')
            return i;
    return -1;
}

const char *lz_sys_getenv(const char *name)
{
    long i = lz_sys_env_index(name);
    return i < 0 ? 0 : lz_sys_environ()[i] + strlen(name) + 1;
}

const char *lz_sys_getenv_last(const char *name)
{
    size_t len = strlen(name);
    const char *last = 0;
    for (char **env = lz_sys_environ(); env && *env; env++)
        if (memcmp(*env, name, len) == 0 && (*env)[len] == '=')
            last = *env + len + 1;
    return last;
}

unsigned long lz_sys_getauxval(unsigned long type)
{
    for (ElfW(auxv_t) *a = auxv; a && a->a_type != AT_NULL; a++)
        if (a->a_type == type)
            return a->a_un.a_val;
    return 0;
}

/* Read once: the strings stay where the first read put them. */
char **lz_sys_cmdline(void)
{
    static char **argv;
    enum { MAX = 1 << 20 };
    if (argv)
        return argv;
    char *buf = lz_sys_alloc(MAX);
    int fd = buf ? lz_sys_open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC) : -1;
    if (fd < 0)
        return 0;
    size_t n = 0;
    ssize_t r;
    while (n < MAX - 1 && (r = pread(fd, buf + n, MAX - 1 - n, (off_t)n)) > 0)
        n += (size_t)r;
    lz_sys_close(fd);
    if (!n || n >= MAX - 1)
        return 0;
    buf[n] = '\0';
    size_t count = 0;
    for (size_t i = 0; i < n; i++)
        count += !buf[i];
    char **list = lz_sys_alloc((count + 1) * sizeof *list);
    if (!list)
        return 0;
    size_t k = 0;
    for (size_t i = 0; i < n; i += strlen(buf + i) + 1)
        list[k++] = buf + i;
    list[k] = 0;
    return argv = list;
}
