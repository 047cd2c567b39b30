/* SPDX-License-Identifier: MIT
 * Stand-in: nccl.h includes it for half types it does not use in signatures. */
