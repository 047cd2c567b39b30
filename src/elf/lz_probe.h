/* SPDX-License-Identifier: MIT
 * Probing a candidate file before loading it (lz_probe.c). */
#ifndef LZ_PROBE_H
#define LZ_PROBE_H

#include "elf/lz_elffile.h"
#include "base/lz_runtime.h"

enum {
    /* A lean probe's questions: the required names, the names the search
     * needs, the marker, the end (answers are bits of one word). */
    LZ_PROBE_ASK_MAX = 64,
    LZ_PROBE_OK = 0,          /* the file can serve */
    LZ_PROBE_REJECTED = 1,    /* it cannot; the reason says why */
};

/* What the probe read from the file: the file's own facts and the
 * verdict. elf.names are sorted (sorted: 1) where many names will be asked
 * for (a library with versioned names, and for tools). A library without
 * versioned names is asked only its required names, the names the search
 * needs (extra) and its shim marker where they fit: lean is that library,
 * and the file was asked those names alone (through its hash table:
 * elf.answers, no names read). */
typedef struct lz_probe {
    lz_elffile elf;
    int sorted;
    const lz_lib *lean;
    const char *const *extra; /* of a lean probe: the search's names (it outlives the probe) */
    int shim;                /* exports a shim's marker (read before judging) */
    char reason[512];
    unsigned long long dev, ino; /* the file that was read */
} lz_probe;

/* Read path as the dynamic linker would: a regular ELF shared object of this process's class
 * and machine, whose SONAME is one of lib's and which exports lib's required
 * symbols. Nothing is loaded; no constructor runs. extra (NULL-terminated,
 * or NULL): names the caller will ask lz_probe_exports about. */
LZ_HIDDEN int lz_probe_file(const lz_lib *lib, const char *path, const char *const *extra,
                            lz_probe *p);
/* Read any ELF shared object (a net plugin, say) into p without judging it
 * against a library's spec: LZ_PROBE_OK when it could be read. */
LZ_HIDDEN int lz_probe_read(const char *path, lz_probe *p);
/* 1 when path names something stat() sees, as ld.so's open would. */
LZ_HIDDEN int lz_probe_exists(const char *path);
/* The printable name of an ELF machine number ("x86-64"). */
LZ_HIDDEN const char *lz_machine_name(unsigned machine);
/* Copy the NUL-terminated string starting with marker found in the file's
 * .rodata (e.g. "NCCL version 2.28.9+cuda13.0"); 1 when found. */
LZ_HIDDEN int lz_probe_rodata_string(const char *path, const char *marker, char *out,
                                     size_t size);
/* The symbol every shim named shim exports and the real library never does
 * ("lazynccl_load", common/lz_note.h): how a drop-in is told from the
 * library it stands for. buf, cut to "" when too small. */
LZ_HIDDEN const char *lz_shim_marker(const char *shim, char *buf, size_t size);
/* "libnvrtc.so.13 or libnvrtc.so.12": every soname lib accepts. */
LZ_HIDDEN void lz_soname_list(const lz_lib *lib, char *out, size_t size);
/* 1 when the probed file exports name (of a lean probe: one of the names
 * it was asked, the required ones, the extra ones and the marker; any
 * other is 0). */
LZ_HIDDEN int lz_probe_exports(const lz_probe *p, const char *name);
LZ_HIDDEN void lz_probe_free(lz_probe *p);

#endif
