/* SPDX-License-Identifier: MIT
 * lazynccl-info: shared declarations of the tool's files. */
#ifndef LZ_INFO_H
#define LZ_INFO_H

#include "api/lz_api.h"
#include "elf/lz_probe.h"
#include "search/lz_linker.h"
#include "search/lz_release.h"

#include <stdio.h>

#define INFO_MAX_CANDIDATES 64

typedef struct info_candidate {
    char step[64];
    char path[PATH_MAX];
    int verdict;
    char reason[512];
    char soname[256];
    char machine[32];
    char version[128];       /* the version alone ("2.28.9+cuda13.0", "13.0"), or "" */
    const char *version_from; /* where it was read: INFO_FROM_* */
} info_candidate;

/* What the tool learned of one library. */
typedef struct info_lib {
    const lz_lib *lib;
    int served;             /* an installed shim of this installation (else built for tests) */
    int would_load;
    char chosen[PATH_MAX];
    char chosen_step[64];
    char report[LZ_MESSAGE_MAX];
    info_candidate cands[INFO_MAX_CANDIDATES];
    int ncands;
    int dropped;            /* verdicts past INFO_MAX_CANDIDATES, counted, not kept */
    /* with --load */
    int loaded;
    char loaded_path[PATH_MAX];
    char loaded_step[64];
    char loaded_version[64];
    char load_error[LZ_MESSAGE_MAX];
} info_lib;

typedef struct doctor_finding {
    const char *check;   /* "nccl-net", "nccl-net-plugin", "shadowing", "copies", "audit" */
    const char *status;  /* "ok", "problem", "warning", "info" */
    char message[1024];
    char fix[512];
} doctor_finding;

#define DOCTOR_MAX 32

typedef struct doctor_report {
    doctor_finding f[DOCTOR_MAX];
    int n;
} doctor_report;

/* Follow a library's search order without loading anything (inspect.c). */
void info_inspect(info_lib *out, const lz_lib *lib, const char *origin);
/* Where a candidate's version was read: the text after the spec's
 * version_marker in its .rodata ("NCCL version 2.28.9+cuda13.0" gives
 * 2.28.9+cuda13.0); the newest versioned names it exports (nvJitLink
 * 13.0); its file's own name beyond the soname (libcublas.so.13.0.2.14,
 * by its real path, gives 13.0.2.14). */
#define INFO_FROM_RODATA "rodata"
#define INFO_FROM_NAMES "versioned names"
#define INFO_FROM_FILE_NAME "file name"
/* A candidate's version alone into out ("" if unknown), and where it was
 * read (NULL if unknown). */
const char *info_version(const lz_lib *lib, const char *path, const lz_probe *p, char *out, size_t size);
/* Compare the first dotted numbers in two version texts: <0, 0, >0. */
int info_version_cmp(const char *a, const char *b);
/* Where the dynamic linker would find soname (LD_LIBRARY_PATH, cache, system). */
int info_find_soname(const char *soname, char *out, size_t size);

/* --check: the families target's closure needs, each judged with the
 * names it imports (check.c): 0 when all serve, 1 when not, 2 when the
 * target cannot be read. */
int check_target(FILE *f, const char *target, const lz_lib *const *libs, int named);

/* Each pair of libraries released together (lz_peer) whose chosen files
 * (chosen[i] of libs[i]; "" for none) are not of one release, under a
 * policy other than off: each(ctx, i, j, policy, text), text saying why
 * and what the policy does. The number of pairs (release.c). */
typedef void (*info_mismatch_fn)(void *ctx, int i, int j, int policy, const char *text);
int info_release_mismatches(const lz_lib *const *libs, const char *const *chosen, int n,
                            info_mismatch_fn each, void *ctx);

/* --cache FILE: the job's resolution cache, each entry checked against
 * the filesystem as it is now (jobcache.c): 0 when each gives the file the
 * dynamic linker would, 1 when one would not, 2 when refused. */
int cache_show(FILE *out, const char *path);
/* --reports DIR: the load reports of a job (reports.c): 0 when every
 * process loaded one file of each library, 1 when not (the outliers
 * named), 2 when they cannot be read. */
int reports_check(FILE *out, const char *dir, int verbose);

/* Environment checks (doctor.c). */
void doctor_run(doctor_report *r, info_lib *libs, int nlibs);

/* Output (print.c). */
/* d: --doctor's findings, printed first as verdicts (the per-candidate
 * tables then only when verbose). */
void print_text(FILE *f, info_lib *libs, int nlibs, const doctor_report *d, int verbose, int color);
/* unknown: the names asked for that no shim here serves. */
void print_json(FILE *f, info_lib *libs, int nlibs, const char *const *unknown, int nunknown,
                const doctor_report *d);

extern const char *const info_verdicts[];

#endif
