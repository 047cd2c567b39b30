/* SPDX-License-Identifier: MIT
 * Static TLS for every process the audit module is loaded into
 * (lz_tlsfit.c; the rule is lz_tls.h's): the module adds up the TLS of the
 * libraries the process starts with as ld.so maps them, and where it would
 * not fit an audited process, restarts the process before anything of it
 * has run, sized for exactly that process. So a job's processes are sized
 * however they are started (srun, mpirun, a job script), and a process
 * that needs nothing pays nothing. */
#ifndef LZ_TLSFIT_H
#define LZ_TLSFIT_H

#include "lz_memobj.h"
#include "lz_sys.h"

/* Each object of the base namespace mapped while the process starts (the
 * program itself excepted: its TLS has a place anyway); soname may be NULL.
 * Restarts the process (execve) where their TLS cannot fit. */
LZ_SYS_API void lz_tlsfit_object(lz_mem_obj *o, const char *soname);
/* The start's objects are all mapped: nothing more is counted. */
LZ_SYS_API void lz_tlsfit_done(void);

#endif
