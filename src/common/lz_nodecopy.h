/* SPDX-License-Identifier: MIT
 * The audit module's node copy, between lazynccl-run (which names it in
 * LD_AUDIT: src/run/run_nodecopy.c) and the audit module (which hands the
 * installed module to programs that start processes on other nodes). The
 * copy's path exists on its node alone: a process that another node starts
 * with this environment would get ld.so's "cannot be loaded as audit
 * interface" line and run unwrapped. Defined once here; a header of inline
 * code, as the audit module links no C library (lz_sys.h). */
#ifndef LZ_NODECOPY_H
#define LZ_NODECOPY_H

#include "common/lz_dropins.h"

#include <stddef.h>

/* Set by lazynccl-run beside an LD_AUDIT naming the node copy: the
 * installed module, which every node of a job sees. */
#define LZ_AUDIT_INSTALLED_ENV "LAZYNCCL_AUDIT_INSTALLED"

/* 1 when name (a program's file name, without its directory) is a launcher
 * that starts processes on other nodes and hands them its own environment:
 * Slurm's srun and sbatch, MPI's mpirun and mpiexec under their names
 * (mpiexec.hydra, mpirun.openmpi, orterun, prterun, prun, HPE MPT's
 * mpiexec_mpt, MVAPICH's mpirun_rsh), Flux, LSF's jsrun, bsub, blaunch and
 * lsrun, Cray's aprun, PBS's qsub and pbsdsh, Grid Engine's qrsh,
 * HTCondor's condor_submit. In one of them, LD_AUDIT names the installed
 * module instead of the node copy. A launcher that keeps the environment
 * to itself (ssh, pdsh) or that runs on one node (torchrun, salloc's
 * shell) is not one. */
static inline __attribute__((unused)) int lz_remote_launcher(const char *name)
{
    /* One string, not an array of pointers: the audit module has no
     * relocation (src/audit/meson.build). A name ending in '.' takes any
     * suffix after it (mpiexec.hydra, mpirun.openmpi), and not none. */
    static const char names[] = "srun\0sbatch\0mpirun\0mpiexec\0orterun\0prterun\0prun\0mpiexec_mpt\0"
                                "mpirun_rsh\0flux\0jsrun\0bsub\0blaunch\0lsrun\0aprun\0qsub\0pbsdsh\0qrsh\0"
                                "condor_submit\0mpirun.\0mpiexec.\0";
    for (const char *n = names; *n;) {
        const char *a = name, *b = n;
        while (*b && *a == *b)
            a++, b++;
        if (!*b && (b[-1] == '.' ? *a != '\0' : *a == '\0'))
            return 1;
        while (*n)
            n++;
        n++;
    }
    return 0;
}

/* 1 when the len bytes at v can stand for the installed module in LD_AUDIT:
 * an absolute path to a file named as the module, with no ':' (which would
 * add entries) and no '$' (a token, which a process expands itself). */
static inline __attribute__((unused)) int lz_nodecopy_installed_ok(const char *v, size_t len)
{
    if (!len || v[0] != '/' || !lz_audit_entry_ours(v, len))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (v[i] == ':' || v[i] == '$')
            return 0;
    return 1;
}

/* The bytes lz_nodecopy_rewrite may write for list when it puts an entry
 * of tlen bytes in place of some (its NUL included). */
static inline __attribute__((unused)) size_t lz_nodecopy_rewrite_size(const char *list, size_t tlen)
{
    size_t entries = 1, len = 0;
    for (; list[len]; len++)
        entries += list[len] == ':';
    return len + entries * tlen + 1;
}

/* The ':'-separated LD_AUDIT list into out, each entry that pick(ctx,
 * entry, its length) takes replaced by to (tlen bytes), the others as
 * they are: how many it replaced. */
static inline __attribute__((unused)) int lz_nodecopy_rewrite(const char *list,
                                                               int (*pick)(const char *ctx, const char *e, size_t n),
                                                               const char *ctx, const char *to, size_t tlen, char *out)
{
    size_t at = 0;
    int replaced = 0;
    for (const char *p = list;;) {
        size_t n = 0;
        while (p[n] && p[n] != ':')
            n++;
        int swap = pick(ctx, p, n);
        const char *from = swap ? to : p;
        for (size_t i = 0, k = swap ? tlen : n; i < k; i++)
            out[at++] = from[i];
        replaced += swap;
        if (!p[n])
            break;
        out[at++] = ':';
        p += n + 1;
    }
    out[at] = '\0';
    return replaced;
}

/* 1 when the n bytes at e are the string s. */
static inline __attribute__((unused)) int lz_nodecopy_is(const char *s, const char *e, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != e[i])
            return 0;
    return s[n] == '\0';
}

/* An entry that is a node copy's, given the installed module: lazynccl's,
 * a path of this node's (no '$' token, which each process expands), not
 * the installed module. */
static inline __attribute__((unused)) int lz_nodecopy_is_copy(const char *installed, const char *e, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (e[i] == '$')
            return 0;
    return lz_audit_entry_ours(e, n) && !lz_nodecopy_is(installed, e, n);
}

/* The LD_AUDIT list as it goes to other nodes, into out (at least
 * lz_nodecopy_rewrite_size(list, ilen) bytes): each node copy's entry
 * replaced by installed (ilen bytes, which lz_nodecopy_installed_ok
 * took). Returns how many it replaced. The audit module applies it in a
 * remote launcher (lz_remote.c), lazynccl-run where it prints its
 * variables or is told --no-node-copy under a parent that named a copy
 * (run_env.c). */
static inline __attribute__((unused)) int lz_nodecopy_handoff(const char *list, const char *installed,
                                                               size_t ilen, char *out)
{
    return lz_nodecopy_rewrite(list, lz_nodecopy_is_copy, installed, installed, ilen, out);
}

#endif
