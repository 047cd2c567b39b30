/* SPDX-License-Identifier: MIT
 * The job's resolution cache in the audit module (lz_cache.c; the file,
 * lz_cachefile.h): a request by name whose key the cache holds opens the
 * recorded file directly, where that file is still the one recorded; any
 * other is left to ld.so, and what ld.so maps for it is recorded. The
 * contract (docs/guides/large-jobs.md): the library directories do
 * not change during the job. */
#ifndef LZ_CACHE_H
#define LZ_CACHE_H

#include <stddef.h>

/* The cache at path (LAZYNCCL_CACHE), read once: a file that is not the
 * user's own, is writable by others or does not parse turns the cache off
 * for this process (said under LAZYNCCL_DEBUG); one that does not exist yet
 * is an empty cache. cpu_record: ld.so's _dl_x86_get_cpu_features (NULL
 * where it has none), read for the node's id in place of CPUID. */
void lz_cache_open(const char *path, void *cpu_record);
int lz_cache_on(void);

/* What decides a request by name: its asker's run paths and origin (the
 * asker's file; "" for the program) and the program's. */
#define LZ_CACHE_CHAIN 8
typedef struct lz_cache_asker {
    const char *runpath, *rpath, *origin_of; /* the asker's DT_RUNPATH, DT_RPATH, file */
    /* Where the asker has no DT_RUNPATH, ld.so searches the DT_RPATH of the
     * objects that loaded it, up to the program, too (each without a
     * DT_RUNPATH of its own): theirs, with their files, in that order. */
    const char *chain[LZ_CACHE_CHAIN], *chain_of[LZ_CACHE_CHAIN];
    int nchain;
    const char *exe_rpath;                   /* the program's DT_RPATH, where it has no DT_RUNPATH */
} lz_cache_asker;

/* A request for name: the recorded file (and *step, its step) where the
 * cache holds the request and the file is still there, the same file;
 * else NULL, and the request is remembered until lz_cache_learn or the
 * next request. */
const char *lz_cache_lookup(const char *name, const lz_cache_asker *a, const char **step);
/* A candidate ld.so is about to try for the current request: 0 to skip it
 * unopened, where the cache holds that ld.so finds none for the request;
 * else 1. */
int lz_cache_candidate(const char *path);
/* The remembered request's answer ("-": none found): the file ld.so (or a drop-in's
 * stand-in decision) found, at step. */
void lz_cache_learn(const char *path, const char *step);
/* The remembered request was not the dynamic linker's to answer (a
 * drop-in stood in): nothing to learn from the object mapped. */
void lz_cache_forget(void);
/* The current request ended (a new one begins, or the start's or a
 * dlopen's end): where ld.so found nothing for it, that is recorded. */
void lz_cache_request_ended(void);
/* 1 while a request is remembered. */
int lz_cache_waiting(void);
/* What this process learnt, merged into the file (atomic replace): at the
 * end of the start and of each dlopen. */
void lz_cache_flush(void);

#endif
