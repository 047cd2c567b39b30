/* SPDX-License-Identifier: MIT
 * Where lazynccl-run's pieces are (run_find.c): the drop-ins, the audit
 * module and the redirector, found from the launcher's own file (the
 * kernel's /proc/self/exe, never argv[0]) in a build tree, an install and
 * the wheel alike. */
#ifndef RUN_FIND_H
#define RUN_FIND_H

#include "run_manifest.h"

#include <limits.h>
#include <stddef.h>

#define RUN_MAX_DROPINS 32

typedef struct run_parts {
    char dir[PATH_MAX];      /* the drop-ins' directory, resolved */
    char module[PATH_MAX];   /* the audit module, or "" */
    char module_tried[PATH_MAX]; /* where it was looked for last */
    int quiet32;             /* --quiet-32bit: name the module through $LIB */
    int node_copy;           /* --node-copy: name the module's node copy */
    char audit_entry[PATH_MAX]; /* what LD_AUDIT names: the module, or with
                                 * quiet32 its $LIB form where there is one */
    char audit_lib_entry[PATH_MAX]; /* the module through $LIB, where its copies
                                     * are laid out as this ld.so expands it
                                     * (src/audit/meson.build) and a 32-bit
                                     * ld.so is installed; else "" */
    char node_module[PATH_MAX]; /* the module's node copy (run_nodecopy.h), or "" */
    char redirector[PATH_MAX]; /* the redirector, or "" */
    const char *dropins[RUN_MAX_DROPINS]; /* in dropin_text */
    int ndropins;
    /* The drop-ins' paths one after another: the pages a launch writes are
     * the ones its paths fill (an array of PATH_MAX each was a page, and on
     * a virtual machine a page fault, per drop-in: 14 of 59 of a launch). */
    size_t dropin_len;
    char dropin_text[RUN_MAX_DROPINS * PATH_MAX];
    char **names;            /* the drop-ins here: the manifest's, else the
                              * directory's entries, read once */
    size_t nnames;
    run_manifest manifest;   /* the directory's manifest, where it has one
                              * (manifest.text non-NULL): then no drop-in,
                              * module or directory is looked up */
} run_parts;

/* The drop-ins' directory into p->dir, and its entries: 0, or -1 with the
 * reason in why. */
int run_find_dir(run_parts *p, char *why, size_t whysize);
/* The drop-ins to serve: only (a comma-separated list of families and
 * drop-in file names), or NULL for every family whose drop-in is here, and
 * with them every drop-in here that one of them needs (DT_NEEDED). 0, or -1
 * with the reason. */
int run_find_dropins(run_parts *p, const char *only, char *why, size_t whysize);
/* 1 when the drop-ins' directory lies on a filesystem mounted noexec: the
 * dynamic linker cannot map them, so none may stand in. */
int run_find_unmappable(const run_parts *p);
/* The audit module and the redirector beside the drop-ins (p->module,
 * p->redirector; "" when absent or not nameable in LD_AUDIT/LD_PRELOAD),
 * and what LD_AUDIT names (p->audit_entry, after p->quiet32). */
void run_find_modules(run_parts *p);
/* LD_AUDIT names the module's node copy (p->node_module) instead of the
 * module, where one can be had: not for a module the user named, nor for
 * the $LIB form. */
void run_find_nodecopy(run_parts *p);
/* Every drop-in found is an ELF library of this machine, and so is the
 * audit module found (if any): 0, or -1 with why
 * naming the file. A broken installation is refused before the command
 * runs, rather than failing every process of the job. A directory with a
 * manifest is the build's word: only a module the user named is checked
 * (the audit module still never stands a broken drop-in in). */
int run_find_check(const run_parts *p, char *why, size_t whysize);
/* 1 when LD_AUDIT and LD_PRELOAD can name path: none of their separators
 * in it. */
int run_find_nameable(const char *path);
/* The families this launcher serves unasked (on_request 0), or only when
 * --only names them (1: the suite's test libraries), for messages: "nccl,
 * nvrtc, ..." ("" when none). */
const char *run_find_families(int on_request);

#endif
