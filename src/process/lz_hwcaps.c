/* SPDX-License-Identifier: MIT
 * The glibc-hwcaps subdirectories ld.so searches (lz_hwcaps.h), found as
 * glibc's _dl_important_hwcaps finds them: the prepended names, then the
 * built-in subdirectories its CPU check leaves active, masked. */
#include "process/lz_hwcaps.h"

#include "base/lz_dl.h"
#include "base/lz_path.h"
#include "elf/lz_elfmem.h"
#include "process/lz_objects.h"

#include <gnu/libc-version.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The names and their text, in one allocation sized for the prepended
 * list and the built-in names (glibc has no limit on either). */
typedef struct hwcaps_read {
    size_t used, n, max_names, max_text;
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

/* The C library's, not another object's of that name (a preloaded one). */
static int feature_cb(struct dl_phdr_info *info, size_t size, void *data)
{
    (void)size;
    lz_objview v;
    const ElfW(Sym) *s;
    const char *so;
    if (!lz_objects_view(info, &v) || !(so = lz_elfmem_soname(&v.m)) || strcmp(so, "libc.so.6") != 0 ||
        !(s = lz_elfmem_lookup(&v.m, "__x86_get_cpuid_feature_leaf")) || s->st_shndx == SHN_UNDEF ||
        ELF64_ST_TYPE(s->st_info) != STT_FUNC)
        return 0;
    *(uintptr_t *)data = info->dlpi_addr + s->st_value;
    return 1;
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
static void builtin(hwcaps_read *r, const char *mask)
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
    uintptr_t fn = 0;
    lz_dl_iterate_phdr(feature_cb, &fn);
    if (!fn)
        return;
    feature_leaf_fn leaf = (feature_leaf_fn)fn;
    int level = 0;
    if (all_set(leaf, fpu, 1, 1) && ALL_ACTIVE(leaf, base) && ALL_ACTIVE(leaf, v2))
        level = ALL_ACTIVE(leaf, v3) ? ALL_ACTIVE(leaf, v4) ? 4 : 3 : 2;
    static const char *const names[] = {"x86-64-v4", "x86-64-v3", "x86-64-v2"};
    for (int i = 4 - level; level && i < 3; i++)
        if (!mask || list_holds(mask, names[i]))
            add(r, names[i], strlen(names[i]));
}
#else
/* glibc defines built-in subdirectories for x86-64, POWER and s390x only;
 * on the others, only the prepended ones. */
static void builtin(hwcaps_read *r, const char *mask)
{
    (void)r, (void)mask;
}
#endif

/* glibc 2.33 or later, where ld.so has glibc-hwcaps. */
static int glibc_has_hwcaps(void)
{
    const char *v = gnu_get_libc_version();
    char *end;
    long major = strtol(v, &end, 10), minor = *end == '.' ? strtol(end + 1, NULL, 10) : 0;
    return major > 2 || (major == 2 && minor >= 33);
}

enum { BUILTIN_NAMES = 3, BUILTIN_TEXT = 32 };

static hwcaps_read *read_hwcaps(void)
{
    const lz_ldso_options *o = lz_objects_ldso_options();
    size_t len = o->hwcaps_prepend ? strlen(o->hwcaps_prepend) : 0;
    /* A name per colon, and one more; each name's text and its NUL. */
    size_t names = BUILTIN_NAMES + 1, text = len + 1 + BUILTIN_TEXT;
    for (size_t i = 0; i < len; i++)
        names += o->hwcaps_prepend[i] == ':';
    hwcaps_read *r = calloc(1, sizeof *r + (names + 1) * sizeof r->names[0] + text);
    if (!r)
        return NULL;
    r->max_names = names;
    r->max_text = text;
    r->text = (char *)&r->names[names + 1];
    if (!glibc_has_hwcaps())
        return r;
    /* The prepended names, empty elements skipped, as glibc splits them. */
    for (const char *p = o->hwcaps_prepend ? o->hwcaps_prepend : ""; *p;) {
        size_t n = lz_path_next(p, ":");
        add(r, p, n);
        p += n + (p[n] != '\0');
    }
    builtin(r, o->hwcaps_mask);
    return r;
}

const char *const *lz_hwcaps_subdirs(void)
{
    static const char *const none[] = {NULL};
    static hwcaps_read *published;
    hwcaps_read *r = __atomic_load_n(&published, __ATOMIC_ACQUIRE);
    if (r)
        return r->names;
    if (!(r = read_hwcaps()))
        return none;
    hwcaps_read *expect = NULL;
    if (!__atomic_compare_exchange_n(&published, &expect, r, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        free(r);
        return expect->names;
    }
    return r->names;
}

int lz_hwcaps_try(const char *dir, const char *const *names, lz_hwcaps_try_fn fn, void *ctx)
{
    const char *const *subs = lz_hwcaps_subdirs();
    char *caps = subs[0] ? lz_path_dup(dir, "glibc-hwcaps") : NULL;
    struct stat st;
    if (caps && stat(caps, &st) != 0) {
        free(caps);
        caps = NULL;
    }
    int rc = 0;
    for (const char *const *n = names; *n && !rc; n++) {
        for (const char *const *sub = subs; caps && *sub && !rc; sub++) {
            char *in = lz_path_dup(caps, *sub), *path = in ? lz_path_dup(in, *n) : NULL;
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
