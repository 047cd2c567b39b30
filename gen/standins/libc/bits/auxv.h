/* SPDX-License-Identifier: MIT
 * Stand-in: elf.h includes it for AT_* macros only. */
