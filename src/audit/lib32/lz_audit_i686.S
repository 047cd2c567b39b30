/* SPDX-License-Identifier: MIT
 * The audit module of 32-bit x86 processes on an x86-64 host: it declines
 * (la_version returns 0), which glibc takes silently. lazynccl-run names the
 * module as <dir>/$LIB/liblazynccl-audit.so where ld.so expands $LIB as
 * Debian's does, so a 32-bit process under it ($LIB: lib32) finds this file
 * instead of the 64-bit module, which its ld.so would reject with "wrong ELF
 * class" on every start. Assembled and linked with binutils alone (as --32,
 * ld -m elf_i386): no 32-bit compiler or C library is needed. */
    .text
    .globl la_version
    .type la_version, @function
la_version:
    xorl %eax, %eax
    ret
    .size la_version, . - la_version
    .section .note.GNU-stack, "", @progbits
