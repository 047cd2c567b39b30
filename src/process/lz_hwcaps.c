/* SPDX-License-Identifier: MIT
 * The glibc-hwcaps subdirectories ld.so searches (lz_hwcaps.h), found as
 * glibc's _dl_important_hwcaps finds them: the prepended names, then the
 * built-in subdirectories its CPU check leaves active, masked. */
#include "process/lz_hwcaps.h"

#include "base/lz_dl.h"
#include "base/lz_env.h"
#include "base/lz_path.h"
#include "elf/lz_elfmem.h"
#include "elf/lz_version.h"
#include "process/lz_dst.h"
#include "process/lz_objects.h"

#include <gnu/libc-version.h>
#if defined(__x86_64__)
#include <cpuid.h>
#endif
#include <sys/auxv.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The names and their text, in one allocation sized for the prepended
 * list and the built-in names (glibc has no limit on either). */
typedef struct hwcaps_read {
    size_t used, n, max_names, max_text, legacy;
    char *text;
    const char *names[];
} hwcaps_read;

static void add(hwcaps_read *r, const char *name, size_t len)
{
    if (!len || r->n == r->max_names || r->used + len + 1 > r->max_text)
        return;
    memcpy(r->text + r->used, name, len);
    r->text[r->used + len] = '\0';
    r->names[r->n++] = r->text + r->used;
    r->used += len + 1;
}

/* The glibc-hwcaps names end (their NULL, calloc'd); the legacy ones
 * follow it. */
static void end_list(hwcaps_read *r)
{
    r->legacy = r->n + 1;
    r->n++;
}

#if defined(__x86_64__)
/* 1 when the colon-separated list holds name (glibc's _dl_hwcaps_contains:
 * whole elements, compared exactly). */
static int list_holds(const char *list, const char *name)
{
    size_t len = strlen(name);
    for (const char *p = list; *p;) {
        size_t n = lz_path_next(p, ":");
        if (n == len && memcmp(p, name, n) == 0)
            return 1;
        p += n + (p[n] != '\0');
    }
    return 0;
}

/* glibc's public view of its CPU features (<sys/platform/x86.h>, glibc
 * 2.33): one leaf's CPUID registers and, beside them, the bits glibc
 * counts usable (the CPU has it, the kernel saves its state, no tunable
 * turns it off): what its ISA-level check reads. Found in the loaded C
 * library, not linked: a wheel's shim runs on older glibc too. */
struct cpuid_feature {
    unsigned int cpuid[4], active[4];
};
typedef const struct cpuid_feature *(*feature_leaf_fn)(unsigned int);

enum { EAX, EBX, ECX, EDX };
enum { LEAF_1, LEAF_7, LEAF_80000001 };
struct bit {
    unsigned char leaf, reg, bit;
};

/* The C library's leaf function, not another object's of that name (a
 * preloaded one). The C library is first looked for as the object holding
 * the string its gnu_get_libc_version answers, whose dynamic section alone
 * is then read; where that function is another object's (a preloaded
 * one), as the object whose SONAME is libc.so.6. */
struct leaf_query {
    const char *version; /* NULL: by SONAME */
    uintptr_t leaf;
    int found;
};

static int leaf_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    struct leaf_query *q = data;
    lz_objview v;
    const char *so;
    const ElfW(Sym) *s;
    if ((q->version && !lz_objects_mapped(info, (uintptr_t)q->version, 1)) || !lz_objects_view(info, &v) ||
        !(so = lz_elfmem_soname(&v.m)) || strcmp(so, "libc.so.6") != 0)
        return 0;
    if ((s = lz_elfmem_lookup(&v.m, "__x86_get_cpuid_feature_leaf")) && s->st_shndx != SHN_UNDEF &&
        ELF64_ST_TYPE(s->st_info) == STT_FUNC)
        q->leaf = info->dlpi_addr + s->st_value;
    q->found = 1;
    return 1;
}

static uintptr_t leaf_function(void)
{
    struct leaf_query q = {.version = gnu_get_libc_version()};
    lz_dl_iterate_phdr(leaf_cb, &q);
    if (!q.found) {
        q.version = NULL;
        lz_dl_iterate_phdr(leaf_cb, &q);
    }
    return q.leaf;
}

/* 1 when every bit is set: in the usable bits, or (present) in CPUID's. */
static int all_set(feature_leaf_fn leaf, const struct bit *bits, size_t n, int present)
{
    for (size_t i = 0; i < n; i++) {
        const struct cpuid_feature *f = leaf(bits[i].leaf);
        const unsigned int *regs = f ? (present ? f->cpuid : f->active) : NULL;
        if (!regs || !(regs[bits[i].reg] & (1u << bits[i].bit)))
            return 0;
    }
    return 1;
}
#define ALL_ACTIVE(leaf, bits) all_set(leaf, bits, sizeof bits / sizeof *bits, 0)

/* glibc's x86-64 ISA levels (sysdeps/x86/get-isa-level.h), best first:
 * none unless the baseline (FPU present; CMOV CX8 FXSR MMX SSE SSE2
 * usable); v2 CMPXCHG16B LAHF64_SAHF64 POPCNT SSE3 SSE4_1 SSE4_2 SSSE3; v3
 * AVX AVX2 BMI1 BMI2 F16C FMA LZCNT MOVBE (glibc 2.33 to 2.35 leave out
 * BMI1 and BMI2, which every CPU with AVX2 has); v4 AVX512F BW CD DQ VL.
 * Usable: the CPU has it, the kernel saves its state, and no
 * GLIBC_TUNABLES glibc.cpu.hwcaps entry turns it off. */
static void builtin(hwcaps_read *r, const char *mask, feature_leaf_fn leaf)
{
    static const struct bit fpu[] = {{LEAF_1, EDX, 0}};
    static const struct bit base[] = {{LEAF_1, EDX, 15}, {LEAF_1, EDX, 8},  {LEAF_1, EDX, 24},
                                      {LEAF_1, EDX, 23}, {LEAF_1, EDX, 25}, {LEAF_1, EDX, 26}};
    static const struct bit v2[] = {{LEAF_1, ECX, 13}, {LEAF_80000001, ECX, 0}, {LEAF_1, ECX, 23},
                                    {LEAF_1, ECX, 0},  {LEAF_1, ECX, 19},       {LEAF_1, ECX, 20},
                                    {LEAF_1, ECX, 9}};
    static const struct bit v3[] = {{LEAF_1, ECX, 28}, {LEAF_7, EBX, 5},        {LEAF_7, EBX, 3},
                                    {LEAF_7, EBX, 8},  {LEAF_1, ECX, 29},       {LEAF_1, ECX, 12},
                                    {LEAF_80000001, ECX, 5}, {LEAF_1, ECX, 22}};
    static const struct bit v4[] = {{LEAF_7, EBX, 16}, {LEAF_7, EBX, 30}, {LEAF_7, EBX, 28},
                                    {LEAF_7, EBX, 17}, {LEAF_7, EBX, 31}};
    if (!leaf)
        return;
    int level = 0;
    if (all_set(leaf, fpu, 1, 1) && ALL_ACTIVE(leaf, base) && ALL_ACTIVE(leaf, v2))
        level = ALL_ACTIVE(leaf, v3) ? ALL_ACTIVE(leaf, v4) ? 4 : 3 : 2;
    static const char *const names[] = {"x86-64-v4", "x86-64-v3", "x86-64-v2"};
    for (int i = 4 - level; level && i < 3; i++)
        if (!mask || list_holds(mask, names[i]))
            add(r, names[i], strlen(names[i]));
}

/* glibc's arch_kind_intel. Read from ld.so's record of the CPU (its
 * GLIBC_PRIVATE _dl_x86_get_cpu_features), where the vendor's kind is the
 * first member (struct cpu_features_basic, five ints, then the leaves:
 * glibc 2.32 on): trusted only where the public leaf function's first leaf
 * lies just after those five ints, as in the glibc versions that have that
 * function and still search the legacy subdirectories (2.33 to 2.36; older
 * ones have no leaf function, and their avx512_1 is not counted here).
 * Else the CPU's vendor string, by CPUID, which in a virtual machine traps
 * to the hypervisor. */
static int intel(feature_leaf_fn leaf)
{
    typedef const int *(*record_fn)(unsigned int);
    record_fn record = (record_fn)lz_objects_ldso_symbol("_dl_x86_get_cpu_features", NULL);
    const int *kind = record ? record(0) : NULL;
    enum { ARCH_KIND_INTEL = 1, ARCH_KIND_OTHER = 4 };
    if (kind && (const void *)leaf(0) == (const void *)(kind + 5) && *kind > 0 && *kind <= ARCH_KIND_OTHER)
        return *kind == ARCH_KIND_INTEL;
    unsigned a, b, c, d;
    return __get_cpuid(0, &a, &b, &c, &d) && b == 0x756e6547 && d == 0x49656e69 && c == 0x6c65746e;
}

/* The hwcap mask ld.so took, as glibc 2.36 takes it: glibc.cpu.hwcap_mask's
 * last setting in the GLIBC_TUNABLES entries (read from the environment,
 * which points at glibc's whole copies: its start-up cuts the strings the
 * kernel laid out), else the first LD_HWCAP_MASK, else HWCAP_IMPORTANT;
 * the value's leading number, 0 where there is none (_dl_strtoul, its end
 * not checked). Not in a secure-execution process, where glibc ignores
 * both. */
static unsigned long long hwcap_mask(unsigned long long important)
{
    static const char key[] = "glibc.cpu.hwcap_mask=", alias[] = "LD_HWCAP_MASK=";
    const char *found = NULL, *first_alias = NULL;
    for (char **e = lz_secure() ? NULL : environ; e && *e; e++) {
        /* The first byte before the rest: the environment holds dozens. */
        if (!first_alias && **e == 'L' && strncmp(*e, alias, sizeof alias - 1) == 0)
            first_alias = *e + sizeof alias - 1;
        if (**e != 'G' || strncmp(*e, "GLIBC_TUNABLES=", 15) != 0)
            continue;
        for (const char *p = *e + 15; *p;) {
            size_t n = lz_path_next(p, ":");
            if (n >= sizeof key - 1 && memcmp(p, key, sizeof key - 1) == 0)
                found = p + sizeof key - 1;
            p += n + (p[n] != '\0');
        }
    }
    if (!found)
        found = first_alias;
    return found ? strtoull(found, NULL, 0) : important;
}

/* The legacy subdirectories of glibc before 2.37 (dl-hwcaps.c's power set
 * of the hwcap names left by the mask, the platform and "tls"), best first,
 * as `ld.so --help` lists them "searched" and LD_DEBUG=libs shows them:
 * bit i of k stands for names[i], each subdirectory joined from the
 * highest bit down. The platform is the kernel's (AT_PLATFORM) except on
 * Intel CPUs, where glibc names it haswell or xeon_phi by their features,
 * and counts avx512_1 among the hwcaps (cpu-features.c). */
static void legacy(hwcaps_read *r, feature_leaf_fn leaf)
{
    static const struct bit avx512cd[] = {{LEAF_7, EBX, 28}}, avx512er[] = {{LEAF_7, EBX, 27}},
                            avx512pf[] = {{LEAF_7, EBX, 26}},
                            avx512_1[] = {{LEAF_7, EBX, 30}, {LEAF_7, EBX, 17}, {LEAF_7, EBX, 31}},
                            haswell[] = {{LEAF_7, EBX, 5}, {LEAF_1, ECX, 12}, {LEAF_7, EBX, 3},
                                         {LEAF_7, EBX, 8}, {LEAF_80000001, ECX, 5},
                                         {LEAF_1, ECX, 22}, {LEAF_1, ECX, 23}};
    enum { HWCAP_X86_64 = 1 << 1, HWCAP_X86_AVX512_1 = 1 << 2 };
    /* ld.so's own name for the platform, where its record can be read;
     * else glibc 2.36's rule from the kernel's. */
    const char *platform = lz_dst_platform();
    int named = platform != NULL;
    if (!named)
        platform = (const char *)getauxval(AT_PLATFORM);
    unsigned long long hwcap = HWCAP_X86_64;
    if (leaf && intel(leaf)) {
        const char *own = NULL;
        if (ALL_ACTIVE(leaf, avx512cd)) {
            if (ALL_ACTIVE(leaf, avx512er)) {
                if (ALL_ACTIVE(leaf, avx512pf))
                    own = "xeon_phi";
            } else if (ALL_ACTIVE(leaf, avx512_1)) {
                hwcap |= HWCAP_X86_AVX512_1;
            }
        }
        if (!own && ALL_ACTIVE(leaf, haswell))
            own = "haswell";
        if (own && !named)
            platform = own;
    }
    unsigned long long masked = hwcap & hwcap_mask(HWCAP_X86_64 | HWCAP_X86_AVX512_1);
    const char *names[4];
    int cnt = 0;
    if (masked & HWCAP_X86_64)
        names[cnt++] = "x86_64";
    if (masked & HWCAP_X86_AVX512_1)
        names[cnt++] = "avx512_1";
    if (platform && *platform)
        names[cnt++] = platform;
    names[cnt++] = "tls";
    for (unsigned k = (1u << cnt) - 1; k > 0; k--) {
        char sub[64];
        size_t len = 0;
        for (int i = cnt - 1; i >= 0; i--) {
            size_t n = strlen(names[i]);
            if (!(k & (1u << i)) || len + n + 2 > sizeof sub)
                continue;
            if (len)
                sub[len++] = '/';
            memcpy(sub + len, names[i], n);
            len += n;
        }
        add(r, sub, len);
    }
}

/* The built-in glibc-hwcaps names (builtin_on), the end of that list, then
 * the legacy names (legacy_on): the C library's CPU features looked up
 * once for both. */
static void cpu_subdirs(hwcaps_read *r, const char *mask, int builtin_on, int legacy_on)
{
    uintptr_t leaf = builtin_on || legacy_on ? leaf_function() : 0;
    if (builtin_on)
        builtin(r, mask, (feature_leaf_fn)leaf);
    end_list(r);
    if (legacy_on)
        legacy(r, (feature_leaf_fn)leaf);
}
#else
/* glibc defines built-in subdirectories for x86-64, POWER and s390x only;
 * on the others, only the prepended ones; the legacy ones are followed on
 * x86-64 alone. */
static void cpu_subdirs(hwcaps_read *r, const char *mask, int builtin_on, int legacy_on)
{
    (void)mask, (void)builtin_on, (void)legacy_on;
    end_list(r);
}
#endif

/* 1 when the running C library is glibc `since` ("2.33") or later;
 * compared without strtol, whose code and locale tables would be two pages
 * more that a first call touches. */
static int glibc_since(const char *since)
{
    return lz_version_cmp(gnu_get_libc_version(), since) >= 0;
}

/* glibc-hwcaps' built-in names; the legacy power set of at most four names
 * (15 subdirectories, each at most four names long). */
enum { BUILTIN_NAMES = 3, BUILTIN_TEXT = 32, LEGACY_NAMES = 15, LEGACY_TEXT = 15 * 48 };

static hwcaps_read *read_hwcaps(void)
{
    /* A static program's dlopen (the C library's own loader) searches no
     * subdirectory of either kind (glibc 2.36, LD_LIBRARY_PATH with
     * glibc-hwcaps/, tls/ and x86_64/ copies: the directory's own). */
    if (!lz_objects_ldso_base()) {
        hwcaps_read *none = calloc(1, sizeof *none + 2 * sizeof none->names[0]);
        return none;
    }
    const lz_ldso_options *o = lz_objects_ldso_options();
    size_t len = o->hwcaps_prepend ? strlen(o->hwcaps_prepend) : 0;
    /* A name per colon, and one more; each name's text and its NUL. */
    size_t names = BUILTIN_NAMES + 1 + LEGACY_NAMES + 1, text = len + 1 + BUILTIN_TEXT + LEGACY_TEXT;
    for (size_t i = 0; i < len; i++)
        names += o->hwcaps_prepend[i] == ':';
    hwcaps_read *r = calloc(1, sizeof *r + (names + 1) * sizeof r->names[0] + text);
    if (!r)
        return NULL;
    r->max_names = names;
    r->max_text = text;
    r->text = (char *)&r->names[names + 1];
    if (glibc_since("2.33")) {
        /* The prepended names, empty elements skipped, as glibc splits them. */
        for (const char *p = o->hwcaps_prepend ? o->hwcaps_prepend : ""; *p;) {
            size_t n = lz_path_next(p, ":");
            add(r, p, n);
            p += n + (p[n] != '\0');
        }
    }
    cpu_subdirs(r, o->hwcaps_mask, glibc_since("2.33"), !glibc_since("2.37"));
    return r;
}

static const hwcaps_read *hwcaps(void)
{
    static hwcaps_read *published;
    hwcaps_read *r = __atomic_load_n(&published, __ATOMIC_ACQUIRE);
    if (r || !(r = read_hwcaps()))
        return r;
    hwcaps_read *expect = NULL;
    if (!__atomic_compare_exchange_n(&published, &expect, r, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        free(r);
        return expect;
    }
    return r;
}

static const char *const none[] = {NULL};

const char *const *lz_hwcaps_subdirs(void)
{
    const hwcaps_read *r = hwcaps();
    return r ? r->names : none;
}

const char *const *lz_hwcaps_legacy(void)
{
    const hwcaps_read *r = hwcaps();
    return r ? r->names + r->legacy : none;
}

/* The legacy subdirectories of dir that exist, of legacy's (NULL-terminated):
 * a mark per name in have. ld.so tries each and, where the file is not
 * there, whether the subdirectory is, to pass over it from then on; here a
 * look at each first component ("tls", the platform, a hwcap name) comes
 * first, and at a whole subdirectory only where its first one is there, so
 * a directory without any costs one look per component. */
static int is_dir(const char *dir, const char *sub)
{
    struct stat st;
    char *path = lz_path_dup(dir, sub);
    int yes = path && stat(path, &st) == 0 && S_ISDIR(st.st_mode);
    free(path);
    return yes;
}

static void legacy_present(const char *dir, const char *const *legacy, unsigned char *have)
{
    /* The first components looked at (at most the four names) and whether
     * each is there. */
    char firsts[4][32];
    unsigned char there[4];
    size_t nfirst = 0;
    for (size_t i = 0; legacy[i]; i++) {
        size_t first = strcspn(legacy[i], "/"), k = 0;
        while (k < nfirst && !(strlen(firsts[k]) == first && memcmp(firsts[k], legacy[i], first) == 0))
            k++;
        if (k == nfirst) {
            if (nfirst == 4 || first >= sizeof firsts[0]) {
                have[i] = 0;
                continue;
            }
            memcpy(firsts[k], legacy[i], first);
            firsts[k][first] = '\0';
            there[k] = (unsigned char)is_dir(dir, firsts[k]);
            nfirst++;
        }
        have[i] = there[k] && (!legacy[i][first] || is_dir(dir, legacy[i]));
    }
}

int lz_hwcaps_try(const char *dir, const char *const *names, lz_hwcaps_try_fn fn, void *ctx)
{
    const char *const *subs = lz_hwcaps_subdirs(), *const *legacy = lz_hwcaps_legacy();
    char *caps = subs[0] ? lz_path_dup(dir, "glibc-hwcaps") : NULL;
    struct stat st;
    if (caps && stat(caps, &st) != 0) {
        free(caps);
        caps = NULL;
    }
    unsigned char have[16] = {0};
    if (legacy[0])
        legacy_present(dir, legacy, have);
    int rc = 0;
    for (const char *const *n = names; *n && !rc; n++) {
        for (const char *const *sub = subs; caps && *sub && !rc; sub++) {
            char *in = lz_path_dup(caps, *sub), *path = in ? lz_path_dup(in, *n) : NULL;
            rc = path ? fn(ctx, path) : 0;
            free(path);
            free(in);
        }
        for (size_t i = 0; legacy[i] && i < sizeof have && !rc; i++) {
            char *in = have[i] ? lz_path_dup(dir, legacy[i]) : NULL, *path = in ? lz_path_dup(in, *n) : NULL;
            rc = path ? fn(ctx, path) : 0;
            free(path);
            free(in);
        }
        char *path = rc ? NULL : lz_path_dup(dir, *n);
        if (path)
            rc = fn(ctx, path);
        free(path);
    }
    free(caps);
    return rc;
}
