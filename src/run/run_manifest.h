/* SPDX-License-Identifier: MIT
 * The drop-in directory's manifest (run_manifest.c), written by the build
 * beside the drop-ins (src/dropin/lazynccl-dropins.in): what lazynccl-run
 * would otherwise learn by reading the directory and opening every drop-in
 * on every launch. One file read is the launcher's whole look at the
 * installation, so that a launch on a shared filesystem costs its metadata
 * server one open, not one lookup per drop-in and per library each needs. */
#ifndef RUN_MANIFEST_H
#define RUN_MANIFEST_H

#include <stddef.h>

#define RUN_MANIFEST_FILE "lazynccl-dropins"
#define RUN_MANIFEST_MAX (64 << 10)

typedef struct run_manifest {
    char *text;       /* the file, its lines split in place */
    char **names;     /* each drop-in's file name (its SONAME) */
    char **needs;     /* per drop-in: the drop-ins here it needs, space-separated */
    size_t n;
    const char *audit, *redirect; /* relative to the directory, or NULL */
} run_manifest;

/* The manifest of directory dir into m: 0; -1 when it cannot be opened
 * (errno set; nothing allocated), -2 when it does not parse (why says
 * which line). */
int run_manifest_read(const char *dir, run_manifest *m, char *why, size_t whysize);
/* The drop-ins drop-in i needs, space-separated ("" for none). */
const char *run_manifest_needs(const run_manifest *m, size_t i);

#endif
