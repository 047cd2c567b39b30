/* SPDX-License-Identifier: MIT
 * What a launcher that starts processes on other nodes hands them
 * (lz_remote.c; the rule, common/lz_nodecopy.h). */
#ifndef LZ_REMOTE_H
#define LZ_REMOTE_H

/* In a remote launcher (srun, mpirun, ...) started with LD_AUDIT naming
 * the module's node copy, LD_AUDIT in its environment names the installed
 * module instead, before the program reads its environment: the copy's
 * path exists on this node alone. Elsewhere, nothing. */
void lz_remote_name_installed(void);

#endif
