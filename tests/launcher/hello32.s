/* SPDX-License-Identifier: MIT
 * A 32-bit x86 program that needs the 32-bit dynamic linker and nothing
 * else (no 32-bit compiler or C library here: as --32 and ld -m elf_i386,
 * tests/test_launcher.py): it writes "hello 32" and exits 0. */
    .text
    .globl _start
_start:
    movl $1, %ebx
    call 1f
1:  popl %ecx
    addl $(msg - 1b), %ecx
    movl $9, %edx
    movl $4, %eax
    int $0x80
    movl $1, %eax
    xorl %ebx, %ebx
    int $0x80
    .section .rodata
msg: .ascii "hello 32\n"
    .section .note.GNU-stack, "", @progbits
