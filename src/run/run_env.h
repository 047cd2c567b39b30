/* SPDX-License-Identifier: MIT
 * The environment lazynccl-run gives a command (run_env.c), computed from
 * the one it was given so that a launcher under a launcher adds nothing
 * that is already there: LD_AUDIT holds the module once, VALGRIND_OPTS and
 * LD_PRELOAD are not appended twice. Static TLS is not its business: the
 * audit module sizes each process itself (src/audit/lz_tlsfit.c). */
#ifndef RUN_ENV_H
#define RUN_ENV_H

#include "run_find.h"

enum run_mode {
    RUN_AUDIT,    /* the audit module (the default) */
    RUN_PRELOAD,  /* the drop-ins and the redirector preloaded */
    RUN_NO_AUDIT, /* the drop-ins alone preloaded */
};

#define RUN_MAX_VARS 8

typedef struct run_env {
    struct {
        const char *name;
        char *value; /* malloc'd */
    } vars[RUN_MAX_VARS];
    int n;
} run_env;

/* The variables to set for mode, into e. Where the audit module cannot be
 * used, says so once on stderr and falls back to RUN_PRELOAD. 0, or -1 when
 * out of memory. */
int run_env_build(const run_parts *p, enum run_mode mode, run_env *e);
/* A variable more (its value copied): 0, or -1. */
int run_env_add(run_env *e, const char *name, const char *value);

#endif
