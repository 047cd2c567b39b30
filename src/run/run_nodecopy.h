/* SPDX-License-Identifier: MIT
 * The audit module's node copy (run_nodecopy.c): ld.so opens the module
 * in every process of a wrapped job, and where the install lies on a
 * shared filesystem each open is a round trip to its servers (without a
 * client cache, one per path component). A copy on the node's memory
 * filesystem, made once per node and version, costs those processes
 * nothing of the shared filesystem. */
#ifndef RUN_NODECOPY_H
#define RUN_NODECOPY_H

#include <stddef.h>

/* The variable naming the directory the copy is kept under (which asks
 * for the copy, as --node-copy does). */
#define RUN_NODE_DIR_ENV "LAZYNCCL_NODE_DIR"

/* Whether a launch wants the copy: --node-copy (or $LAZYNCCL_NODE_DIR
 * set), --no-node-copy, or neither: then where the launcher runs as a task
 * a launcher started on this node (srun lazynccl-run CMD), whose
 * processes stay on this node. */
enum run_node_copy { RUN_NODE_COPY_DEFAULT, RUN_NODE_COPY_ASKED, RUN_NODE_COPY_OFF };

/* The node copy of module (an absolute path) into out: 1; or 0 where none
 * is wanted or none can be had (no memory filesystem of this user's alone,
 * one mounted noexec, a copy that failed): then the module is named where
 * it is, and where one was asked for, why says why (else it is ""). Never
 * fails the launch. The copy's path exists on this node alone: a remote
 * launcher below hands on the installed module (common/lz_nodecopy.h). */
int run_nodecopy(const char *module, enum run_node_copy want, char *out, size_t size, char *why, size_t whysize);

#endif
