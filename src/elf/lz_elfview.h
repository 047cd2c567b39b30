/* SPDX-License-Identifier: MIT
 * The bounded view of a shared object on disk that every ELF file reader
 * here shares (lz_elfview.c): its header, program headers and dynamic
 * segment, read with pread through a few cached windows, every offset and
 * length checked against the file before it is used. Section headers are
 * never read: ld.so does not need them, so neither does a check of what
 * ld.so would do. Depends on the C library only, so the rtld-audit module
 * (inside the dynamic linker's lock) uses it too. */
#ifndef LZ_ELFVIEW_H
#define LZ_ELFVIEW_H

#include <link.h>
#include <stddef.h>

/* Hidden in a shared object; file-local in an amalgamation, where two
 * vendored copies may be linked into one object. */
#ifdef LZ_AMALGAMATION
#define LZ_ELF_API static __attribute__((unused))
#else
#define LZ_ELF_API __attribute__((visibility("hidden")))
#endif

enum {
    LZ_ELF_MAX_PHDRS = 128,
    LZ_ELF_MAX_DYN = 4096,                 /* dynamic entries read (64 KiB) */
    LZ_ELF_MAX_TABLE = 256 << 20,          /* strings or symbols: a hostile file costs no more */
    LZ_ELF_RUN_PATH_MAX = 1 << 20,         /* a DT_RPATH or DT_RUNPATH read alone */
    /* Bytes cached per read. Not more: a larger window saves system calls
     * (a 24 KiB one holds the whole head of NCCL, NVRTC and nvJitLink: one
     * pread for five) but writes more fresh heap pages than the dlopen after
     * a search reuses (more page faults per first call than the reads it
     * saves cost; docs/concepts/performance.md, "First calls"). */
    LZ_ELF_WINDOW = 4096,
    /* Windows kept: a probe's reads go back and forth between the hash
     * table (beside the header), the symbols and the strings; with one
     * window each return was a pread (ten for NCCL; seven with two
     * windows). A probe asks every name the process needs from the
     * library, whose symbols span two windows of NCCL's: with five windows
     * NCCL is read in five preads (eight with three). Each refill takes
     * the window filled longest ago. The price: a fresh heap page per
     * window in the first call, which on the machine measured cost about
     * what a pread saved does (docs/data/firstcall-2026-11-25-6e7f8b1.txt). */
    LZ_ELF_WINDOWS = 5,
    LZ_ELF_MAX_SYMS = 1 << 22,          /* the largest real libraries have < 300,000 */
};

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define LZ_ELF_NATIVE_DATA ELFDATA2LSB
#else
#define LZ_ELF_NATIVE_DATA ELFDATA2MSB
#endif

#define LZ_ELF_NATIVE_CLASS (sizeof(void *) == 8 ? ELFCLASS64 : ELFCLASS32)

/* The file's head, its loadable segments and its dynamic segment. */
typedef struct lz_elfview {
    int fd;
    unsigned long long size;
    ElfW(Ehdr) eh;
    unsigned nph;
    const ElfW(Phdr) *dynamic;
    /* a cache of file bytes for the scattered reads (hash, symbols,
     * strings, versions): LZ_ELF_WINDOWS windows of win_cap bytes at win */
    unsigned char *win;
    size_t win_cap;
    unsigned long long win_off[LZ_ELF_WINDOWS];
    size_t win_len[LZ_ELF_WINDOWS];
    unsigned nwin;  /* windows at win (at most LZ_ELF_WINDOWS) */
    unsigned next; /* the window the next refill takes */
    /* the program headers, e_phnum of them: storage the caller gives
     * (lz_elfview_phdrs), sized to the file, so that a probe's heap holds no
     * unused array (each fresh page of it a page fault) */
    ElfW(Phdr) *ph;
} lz_elfview;

/* The dynamic entries ld.so reads to name, bind and version an object. */
typedef struct lz_elftags {
    unsigned long long strtab, strsz, symtab, syment, hash, gnu_hash, verneed, verneednum;
    unsigned long long soname;
    int has_strtab, has_soname, has_symtab, has_verneed;
} lz_elftags;

/* Start a view of fd: only these fields are read before they are written
 * (the header, the program headers and the windows are filled as read).
 * win holds nwin windows (1 to LZ_ELF_WINDOWS) of win_cap bytes. */
LZ_ELF_API void lz_elfview_init(lz_elfview *v, int fd, unsigned long long size, unsigned char *win,
                             size_t win_cap, unsigned nwin);
/* -1, with the reason formatted into why (when given and not the audit
 * module's build). */
LZ_ELF_API int lz_elfview_fail(char *why, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* len bytes of the file at off into buf: 0, or -1. */
LZ_ELF_API int lz_elfview_pread(int fd, void *buf, size_t len, unsigned long long off);
/* len bytes at off through the windows; NULL when they are not in the file. */
LZ_ELF_API const void *lz_elfview_at(lz_elfview *v, unsigned long long off, size_t len);
/* len bytes at off into out: from a window when one holds them, else read. */
LZ_ELF_API int lz_elfview_fill(lz_elfview *v, void *out, size_t len, unsigned long long off);
/* The file offset of len bytes at address addr: inside one loadable
 * segment's file image, or (unsigned long long)-1. */
LZ_ELF_API unsigned long long lz_elfview_offset(const lz_elfview *v, unsigned long long addr, unsigned long long len);
/* len bytes at address addr copied into out: 0, or -1 when they are not
 * in one loadable segment of the file. */
LZ_ELF_API int lz_elfview_copy(lz_elfview *v, unsigned long long addr, void *out, size_t len);
/* The ELF header, checked, its class and machine in *elf_class and
 * *machine: 1 for a file of another class or byte order, 0 for this
 * process's, -1 rejected (the reason in why). */
LZ_ELF_API int lz_elfview_head(lz_elfview *v, int *elf_class, unsigned *machine, char *why, size_t n);
/* The program headers into ph (e_phnum of them, as lz_elfview_head checked),
 * the static TLS block's size in *tls: 0, or -1 with the reason. */
LZ_ELF_API int lz_elfview_phdrs(lz_elfview *v, ElfW(Phdr) *ph, unsigned long long *tls, char *why, size_t n);
/* The dynamic entries into buf (at most max): how many, 0 when unreadable. */
LZ_ELF_API size_t lz_elfview_dynamic(lz_elfview *v, ElfW(Dyn) *buf, size_t max);
/* The tags of the entries that matter, into t. */
LZ_ELF_API void lz_elfview_tags(const ElfW(Dyn) *dyn, size_t count, lz_elftags *t);
/* This process's e_machine, as compiled (not dladdr: it takes the dynamic
 * linker's lock, which a search must never wait for outside lz_dl.c). */
LZ_ELF_API unsigned lz_elf_own_machine(void);

#endif
