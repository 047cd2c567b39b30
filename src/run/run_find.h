/* SPDX-License-Identifier: MIT
 * Where lazynccl-run's drop-in directory is (run_find.c), found from the
 * launcher's own file (the kernel's /proc/self/exe, never argv[0]) in a
 * build tree, an install and the wheel alike, and the pieces a launch
 * gathers from it (run_parts: the drop-ins, run_dropins.h; the audit
 * module and the redirector, run_modules.h). */
#ifndef RUN_FIND_H
#define RUN_FIND_H

#include "run_manifest.h"
#include "run_nodecopy.h"

#include <limits.h>
#include <stddef.h>

#define RUN_MAX_DROPINS 32

typedef struct run_parts {
    char dir[PATH_MAX];      /* the drop-ins' directory, resolved */
    char module[PATH_MAX];   /* the audit module, or "" */
    char module_tried[PATH_MAX]; /* where it was looked for last */
    int quiet32;             /* --quiet-32bit: name the module through $LIB */
    enum run_node_copy node_copy; /* --node-copy, --no-node-copy or neither */
    int printing;            /* --print-env: the variables may serve other nodes */
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
/* 1 when LD_AUDIT and LD_PRELOAD can name path: none of their separators
 * in it. */
int run_find_nameable(const char *path);
#endif
