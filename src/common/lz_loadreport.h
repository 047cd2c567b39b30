/* SPDX-License-Identifier: MIT
 * The load report (LAZYNCCL_REPORT_DIR; docs/guides/large-jobs.md):
 * each audited process of a job appends what it loaded to a file of its
 * own in the directory, which lazynccl-info --reports reads for the whole
 * job. Defined once here for the audit module (the writer) and
 * lazynccl-info (the reader). One object a line, fields apart by tabs:
 *
 *   HOST RANK PID SONAME PATH DEV INO
 *
 * RANK: the first of lz_report_rank_var's set, the most particular first
 * (torchrun's worker under srun, then Open MPI's, PMIx's, PMI's, Slurm's
 * task), else "-"; SONAME "-" for an object without one; DEV, INO in hex.
 * The file is named HOST.PID.txt, in a directory the first writer makes. */
#ifndef LZ_LOADREPORT_H
#define LZ_LOADREPORT_H

#define LZ_REPORT_ENV "LAZYNCCL_REPORT_DIR"
#define LZ_REPORT_FIELDS 7
/* In order; a function, not a table of pointers: the audit module has no
 * relocations. */
static inline __attribute__((unused)) const char *lz_report_rank_var(int i)
{
    switch (i) {
    case 0: return "RANK";
    case 1: return "OMPI_COMM_WORLD_RANK";
    case 2: return "PMIX_RANK";
    case 3: return "PMI_RANK";
    case 4: return "SLURM_PROCID";
    default: return 0;
    }
}

#endif
