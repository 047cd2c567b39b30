/* SPDX-License-Identifier: MIT
 * The static-TLS rule, defined once for the audit module (which applies it
 * in every process of a wrapped job), lazynccl-run and lazynccl-info
 * --doctor (which explain it): docs/concepts/the-same-job.md, "Static TLS".
 *
 * With any audit module, glibc sets the static TLS block up before it maps
 * the program's libraries, so the initial-exec TLS of every library the
 * process starts with (libc's own 144 bytes, jemalloc's 2,632, TSan's
 * 786,304) must fit in the block's surplus (sourceware BZ#25051). glibc 2.32
 * and later size the surplus by a tunable; before 2.32 it cannot be raised.
 * Header-only and free of library calls: the audit module has no C library. */
#ifndef LZ_TLS_H
#define LZ_TLS_H

#define LZ_TLS_TUNABLE "glibc.rtld.optional_static_tls"
/* glibc's default for the tunable. */
#define LZ_TLS_DEFAULT_OPTIONAL 512ULL
/* What an audited process's surplus holds beyond the tunable's part: glibc
 * 2.36 fits 1,944 bytes of initial TLS by default (512 + 1,432, measured
 * with a preloaded library of each size); counted lower so that alignment
 * between blocks never makes a fit we promised fail. */
#define LZ_TLS_FIXED_SURPLUS 1280ULL
/* An audited process's surplus has one namespace's share more than a
 * plain one's (BZ#25051's contract: a libc's and one other library's
 * initial-exec TLS), and the libraries it starts with take theirs out of
 * it, where a plain process's start-up TLS is all its own: past that share,
 * a later dlopen of initial-exec TLS gets less room than plain. Measured
 * with glibc 2.36 on x86-64: with 288 bytes of start-up TLS (libc's 144 and
 * a library's 144) the largest such block a later dlopen gets is 1,696
 * bytes wrapped and plain; with 400, 1,440 wrapped against 1,696. */
#define LZ_TLS_AUDIT_SHARE 288ULL
/* The first glibc with the tunable, and a symbol its libc.so.6 defines from
 * that release on (where the version string cannot be asked for: inside the
 * dynamic linker, or from a static program). */
#define LZ_TLS_SINCE_VERSION "2.32"
#define LZ_TLS_SINCE_SYMBOL "__libc_single_threaded"

/* One block as glibc places it: its size rounded up to its alignment. */
static inline __attribute__((unused)) unsigned long long lz_tls_block(unsigned long long size, unsigned long long align)
{
    return align > 1 ? (size + align - 1) / align * align : size;
}

/* The tunable's value in a GLIBC_TUNABLES string (the last setting wins, as
 * in glibc), or the default. */
static inline __attribute__((unused)) unsigned long long lz_tls_optional(const char *tunables)
{
    static const char key[] = LZ_TLS_TUNABLE "=";
    unsigned long long value = LZ_TLS_DEFAULT_OPTIONAL;
    for (const char *p = tunables; p && *p;) {
        size_t i = 0;
        while (key[i] && p[i] == key[i])
            i++;
        if (!key[i]) {
            /* As glibc's _dl_strtoul reads it: blanks, a sign, then 0x
             * hexadecimal, 0 octal, else decimal, up to the first other
             * character. */
            unsigned long long v = 0;
            const char *d = p + i;
            int base = 10, negative = 0;
            while (*d == ' ' || *d == '\t')
                d++;
            if (*d == '-' || *d == '+')
                negative = *d++ == '-';
            if (d[0] == '0' && (d[1] == 'x' || d[1] == 'X'))
                base = 16, d += 2;
            else if (d[0] == '0')
                base = 8;
            for (;; d++) {
                int digit = *d >= '0' && *d <= (base == 8 ? '7' : '9') ? *d - '0'
                          : base == 16 && *d >= 'a' && *d <= 'f' ? *d - 'a' + 10
                          : base == 16 && *d >= 'A' && *d <= 'F' ? *d - 'A' + 10 : -1;
                if (digit < 0)
                    break;
                v = v * (unsigned)base + (unsigned)digit;
            }
            value = negative ? 0 - v : v;
        }
        while (*p && *p != ':')
            p++;
        if (*p)
            p++;
    }
    return value;
}

/* 1 when need bytes of initial TLS fit an audited process given the
 * tunable's value optional. */
static inline __attribute__((unused)) int lz_tls_fits(unsigned long long need, unsigned long long optional)
{
    return need <= optional + LZ_TLS_FIXED_SURPLUS;
}

/* 1 when need bytes of start-up TLS leave an audited process given the
 * tunable's value optional at least the room a plain process has with
 * glibc's default for a later dlopen of initial-exec TLS. */
static inline __attribute__((unused)) int lz_tls_keeps_plain(unsigned long long need, unsigned long long optional)
{
    return need + LZ_TLS_DEFAULT_OPTIONAL <= optional + LZ_TLS_AUDIT_SHARE;
}

/* The tunable's value that serves need bytes, keeping glibc's default room
 * for libraries loaded later with dlopen. */
static inline __attribute__((unused)) unsigned long long lz_tls_want(unsigned long long need)
{
    return need + LZ_TLS_DEFAULT_OPTIONAL;
}

#endif
