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

/* Set by lazynccl-run beside an LD_AUDIT naming the node copy: the
 * installed module, which every node of a job sees. */
#define LZ_AUDIT_INSTALLED_ENV "LAZYNCCL_AUDIT_INSTALLED"

/* 1 when name (a program's file name, without its directory) is a launcher
 * that starts processes on other nodes and hands them its own environment:
 * Slurm's srun and sbatch, MPI's mpirun and mpiexec under their names
 * (mpiexec.hydra, mpirun.openmpi, orterun, prterun, prun), Flux, LSF's
 * jsrun, bsub and blaunch, Cray's aprun, PBS's qsub. In one of them,
 * LD_AUDIT names the installed module instead of the node copy. A launcher
 * that keeps the environment to itself (ssh, pdsh) or that runs on one node
 * (torchrun, salloc's shell) is not one. */
static inline __attribute__((unused)) int lz_remote_launcher(const char *name)
{
    /* One string, not an array of pointers: the audit module has no
     * relocation (src/audit/meson.build). A name ending in '.' takes any
     * suffix after it (mpiexec.hydra, mpirun.openmpi). */
    static const char names[] = "srun\0sbatch\0mpirun\0mpiexec\0orterun\0prterun\0prun\0flux\0jsrun\0"
                                "bsub\0blaunch\0aprun\0qsub\0mpirun.\0mpiexec.\0";
    for (const char *n = names; *n;) {
        const char *a = name, *b = n;
        while (*b && *a == *b)
            a++, b++;
        if (!*b && (!*a || (b[-1] == '.' && *a)))
            return 1;
        while (*n)
            n++;
        n++;
    }
    return 0;
}

#endif
