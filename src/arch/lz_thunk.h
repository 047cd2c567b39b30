/* SPDX-License-Identifier: MIT
 * One-line-per-function building blocks for generated shims.
 *
 * The generated file defines LZ_LIB, the tables lz_slots/lz_fails and an
 * index LZ_I_<name> per export, then uses these macros once per function.
 * Each exported thunk is one indirect jump through its slot, as a PLT entry
 * is: on x86-64 a load is an acquire load, which pairs with the release
 * store in lz_resolve, so a thread that sees the resolved pointer sees the
 * loaded library too. No flag test and no lock stand on the hot path. */
#ifndef LZ_THUNK_H
#define LZ_THUNK_H

#include "api/lz_api.h"
#include "api/lz_resolve.h"

#include <errno.h>

/* In every macro, name is the header's function (its type) and sym the
 * symbol defined for it: the same for a public shim, prefixed for an
 * internal one. */
#define LZ_STR(x) #x
#define LZ_XSTR(x) LZ_STR(x)

/* LZ_SLOTS names the generated file's slot table, LZ_REALS the real
 * functions behind own answers. */
#define LZ_SLOT(sym) __atomic_load_n(&LZ_SLOTS[LZ_I_##sym], __ATOMIC_ACQUIRE)

/* The compiler checks each generated signature against the real header.
 * The function types are compared, not pointers to them: GCC counts
 * __attribute__((const)) and noreturn as qualifiers of a function type
 * (liblzma's lzma_attr_const), which __builtin_types_compatible_p ignores
 * only at the top level. */
#define LZ_CHECK(ret, name, params) \
    _Static_assert(__builtin_types_compatible_p(__typeof__(name), ret params), \
                   #name ": generated signature differs from the header");

/* A thunk in C: a tail call through the slot. The C function has an
 * internal name (pasted, so never macro-expanded); the symbol is the string
 * the generator wrote. */
#define LZ_C_CALL(name, sym, args) ((__typeof__(&name))LZ_SLOT(sym)) args
#define LZ_C_THUNK(ret, name, sym, str, params, call) \
    LZ_CHECK(ret, name, params) \
    LZ_API ret lz_t_##sym params __asm__(str); \
    LZ_API ret lz_t_##sym params { call; }

#if defined(LZ_AMALGAMATION) && !defined(LAZYNCCL_EXPORT_API)
#define LZ_PUBLIC_VIS(str) ".hidden " str "\n\t"
#else
#define LZ_PUBLIC_VIS(str) ""
#endif

#if defined(__x86_64__)
/* The landing pad an indirect branch needs where the code is built for
 * indirect branch tracking (-fcf-protection: the compiler then marks the
 * object as having one at every such target, the assembly's included):
 * the thunks (reached through a PLT entry or a function pointer), the
 * exports' indirect functions and each first call's entry (reached by the
 * thunk's jump). A no-op elsewhere. */
#if defined(__CET__) && (__CET__ & 1)
#define LZ_LANDING "endbr64\n\t"
#else
#define LZ_LANDING ""
#endif
/* Written in assembly: a C thunk with stack-passed arguments (more than six)
 * makes GCC copy them onto themselves before the jump, and one with "..."
 * cannot be written at all. */
#define LZ_ASM_THUNK(str, idx, extra) \
    __asm__(".pushsection .text\n\t.p2align 4\n\t.globl " str "\n\t" extra ".type " str \
            ",@function\n" str ":\n\t" LZ_LANDING "jmp *" LZ_XSTR(LZ_SLOTS) "+8*" #idx "(%rip)\n\t.size " \
            str ",.-" str "\n\t.popsection");
/* An own-answer export of a shared shim (LZ_IFUNC_EXPORTS, lz_bind.h): the
 * thunk under a local name, and the exported name a GNU indirect function
 * whose resolver asks lz_bind_pick which of the two a caller is bound to. */
#define LZ_ASM_EXPORT(str, idx) \
    __asm__(".pushsection .text\n\t.p2align 4\n\t.type " str ".lzj,@function\n" str ".lzj:\n\t" \
            LZ_LANDING "jmp *" LZ_XSTR(LZ_SLOTS) "+8*" #idx "(%rip)\n\t.size " str ".lzj,.-" str ".lzj\n\t" \
            ".globl " str "\n\t.type " str ",@gnu_indirect_function\n" str ":\n\t" \
            LZ_LANDING "lea " LZ_XSTR(LZ_LIB) "(%rip), %rdi\n\tmov $" #idx ", %esi\n\t" \
            "lea " str ".lzj(%rip), %rdx\n\tjmp lz_bind_pick\n\t.size " str ",.-" str \
            "\n\t.popsection");
/* The first call of a function served through the assembly forward (every
 * one but those passing vector registers or answered by the shim): every
 * argument register (and %al, the count of vector registers used) is
 * saved, the function is resolved, the registers are restored and the call
 * goes on as if made directly. One such routine per shim (a local label);
 * each function's own entry is two instructions that put its index in
 * %r11, which no argument uses. The helper gets the index and the call's
 * return address (the call site). Its unwind entry (.cfi_*) lets an
 * unwinder (a debugger's or a profiler's backtrace, a cancellation) pass
 * through it. */
#define LZ_ASM_FORWARD_COMMON(label, helper) \
    __asm__(".pushsection .text\n\t.p2align 4\n\t.type " label ",@function\n" label ":\n\t" \
            ".cfi_startproc\n\tpush %rbp\n\t.cfi_def_cfa_offset 16\n\t.cfi_offset %rbp, -16\n\t" \
            "mov %rsp, %rbp\n\t.cfi_def_cfa_register %rbp\n\tsub $192, %rsp\n\t" \
            "mov %rdi, 0(%rsp)\n\tmov %rsi, 8(%rsp)\n\tmov %rdx, 16(%rsp)\n\t" \
            "mov %rcx, 24(%rsp)\n\tmov %r8, 32(%rsp)\n\tmov %r9, 40(%rsp)\n\tmov %rax, 48(%rsp)\n\t" \
            "movaps %xmm0, 64(%rsp)\n\tmovaps %xmm1, 80(%rsp)\n\tmovaps %xmm2, 96(%rsp)\n\t" \
            "movaps %xmm3, 112(%rsp)\n\tmovaps %xmm4, 128(%rsp)\n\tmovaps %xmm5, 144(%rsp)\n\t" \
            "movaps %xmm6, 160(%rsp)\n\tmovaps %xmm7, 176(%rsp)\n\t" \
            "mov %r11, %rdi\n\tmov 8(%rbp), %rsi\n\tcall " helper "\n\tmov %rax, %r11\n\t" \
            "mov 0(%rsp), %rdi\n\tmov 8(%rsp), %rsi\n\tmov 16(%rsp), %rdx\n\t" \
            "mov 24(%rsp), %rcx\n\tmov 32(%rsp), %r8\n\tmov 40(%rsp), %r9\n\tmov 48(%rsp), %rax\n\t" \
            "movaps 64(%rsp), %xmm0\n\tmovaps 80(%rsp), %xmm1\n\tmovaps 96(%rsp), %xmm2\n\t" \
            "movaps 112(%rsp), %xmm3\n\tmovaps 128(%rsp), %xmm4\n\tmovaps 144(%rsp), %xmm5\n\t" \
            "movaps 160(%rsp), %xmm6\n\tmovaps 176(%rsp), %xmm7\n\t" \
            "leave\n\t.cfi_def_cfa %rsp, 8\n\t.cfi_restore %rbp\n\tjmp *%r11\n\t.cfi_endproc\n\t" \
            ".size " label ",.-" label "\n\t.popsection");
#define LZ_ASM_FORWARD(label, common, idx) \
    __asm__(".pushsection .text\n\t.globl " label "\n\t.hidden " label "\n\t.type " label \
            ",@function\n" label ":\n\t" LZ_LANDING "mov $" LZ_XSTR(idx) ", %r11d\n\tjmp " common "\n\t" \
            ".size " label ",.-" label "\n\t.popsection");
#elif defined(__aarch64__)
/* AArch64: the address of the slot (adrp + add), a load-acquire of it and a
 * branch: four instructions, a PLT entry's length. The acquire pairs with
 * lz_resolve's release store, so code reached through the new pointer sees
 * the library as the loading thread left it (a plain ldr would order
 * nothing: neither a branch nor the callee's own loads depend on the
 * loaded value as an address). x16 is the intra-procedure-call scratch
 * register the AAPCS64 gives veneers and PLT entries. */
/* The landing pad of an indirect branch under branch target identification
 * (-mbranch-protection: as on x86-64). "bti c" takes calls and the
 * branches through x16 and x17 that PLT entries and the thunks make. */
#if defined(__ARM_FEATURE_BTI_DEFAULT) && __ARM_FEATURE_BTI_DEFAULT
#define LZ_LANDING "bti c\n\t"
#else
#define LZ_LANDING ""
#endif
#define LZ_ASM_THUNK(str, idx, extra) \
    __asm__(".pushsection .text\n\t.p2align 4\n\t.globl " str "\n\t" extra ".type " str \
            ",%function\n" str ":\n\t" LZ_LANDING "adrp x16, " LZ_XSTR(LZ_SLOTS) "+8*" #idx "\n\t" \
            "add x16, x16, :lo12:" LZ_XSTR(LZ_SLOTS) "+8*" #idx "\n\tldar x16, [x16]\n\t" \
            "br x16\n\t.size " str ",.-" str "\n\t.popsection");
/* An own-answer export of a shared shim: as on x86-64. */
#define LZ_ASM_EXPORT(str, idx) \
    __asm__(".pushsection .text\n\t.p2align 4\n\t.type " str ".lzj,%function\n" str ".lzj:\n\t" \
            LZ_LANDING "adrp x16, " LZ_XSTR(LZ_SLOTS) "+8*" #idx "\n\t" \
            "add x16, x16, :lo12:" LZ_XSTR(LZ_SLOTS) "+8*" #idx "\n\tldar x16, [x16]\n\t" \
            "br x16\n\t.size " str ".lzj,.-" str ".lzj\n\t" \
            ".globl " str "\n\t.type " str ",%gnu_indirect_function\n" str ":\n\t" \
            LZ_LANDING "adrp x0, " LZ_XSTR(LZ_LIB) "\n\tadd x0, x0, :lo12:" LZ_XSTR(LZ_LIB) "\n\t" \
            "mov x1, #" #idx "\n\tadr x2, " str ".lzj\n\tb lz_bind_pick\n\t" \
            ".size " str ",.-" str "\n\t.popsection");
/* The first call of a function served through the assembly forward: x0-x7,
 * x8 (the indirect result register) and q0-q7 saved around the runtime's
 * resolution (with its unwind entry, as on x86-64), then a
 * branch to the function with everything as the caller left it. One such
 * routine per shim; each function's entry puts its index in x17 (IP1, a
 * scratch register no argument uses) and branches to it. The helper gets
 * the index and the call's return address (x30 as the caller left it). */
#define LZ_ASM_FORWARD_COMMON(label, helper) \
    __asm__(".pushsection .text\n\t.p2align 4\n\t.type " label ",%function\n" label ":\n\t" \
            ".cfi_startproc\n\tstp x29, x30, [sp, #-224]!\n\t.cfi_def_cfa_offset 224\n\t" \
            ".cfi_offset x29, -224\n\t.cfi_offset x30, -216\n\tmov x29, sp\n\t" \
            "stp x0, x1, [sp, #16]\n\tstp x2, x3, [sp, #32]\n\tstp x4, x5, [sp, #48]\n\t" \
            "stp x6, x7, [sp, #64]\n\tstr x8, [sp, #80]\n\t" \
            "stp q0, q1, [sp, #96]\n\tstp q2, q3, [sp, #128]\n\tstp q4, q5, [sp, #160]\n\t" \
            "stp q6, q7, [sp, #192]\n\t" \
            "mov x0, x17\n\tmov x1, x30\n\tbl " helper "\n\tmov x16, x0\n\t" \
            "ldp x0, x1, [sp, #16]\n\tldp x2, x3, [sp, #32]\n\tldp x4, x5, [sp, #48]\n\t" \
            "ldp x6, x7, [sp, #64]\n\tldr x8, [sp, #80]\n\t" \
            "ldp q0, q1, [sp, #96]\n\tldp q2, q3, [sp, #128]\n\tldp q4, q5, [sp, #160]\n\t" \
            "ldp q6, q7, [sp, #192]\n\t" \
            "ldp x29, x30, [sp], #224\n\t.cfi_def_cfa_offset 0\n\t.cfi_restore x29\n\t" \
            ".cfi_restore x30\n\tbr x16\n\t.cfi_endproc\n\t.size " label ",.-" label \
            "\n\t.popsection");
#define LZ_ASM_FORWARD(label, common, idx) \
    __asm__(".pushsection .text\n\t.globl " label "\n\t.hidden " label "\n\t.type " label \
            ",%function\n" label ":\n\t" LZ_LANDING "mov x17, #" LZ_XSTR(idx) "\n\tb " common "\n\t" \
            ".size " label ",.-" label "\n\t.popsection");
#endif

#ifdef LZ_ASM_THUNK
/* An own-answer function's exported thunk: an indirect function in a
 * shared shim built with glibc (musl has no indirect functions; a static
 * shim's would be resolved at start-up, before any load), else the thunk
 * itself. Only own answers: every other export's real function is one
 * jump behind its thunk already, and an indirect function defined under the
 * same name as the real library's trips gdb (docs/reference/limitations.md). */
#if defined(LZ_IFUNC_EXPORTS) && defined(__GLIBC__) && !defined(LZ_AMALGAMATION)
#define LZ_ASM_ANSWER(str, idx) LZ_ASM_EXPORT(str, idx)
#else
#define LZ_ASM_ANSWER(str, idx) LZ_ASM_THUNK(str, idx, LZ_PUBLIC_VIS(str))
#endif
/* Both architectures: an untyped function's thunk is the usual one, and its
 * assembly resolver asks this helper (LZ_VRESOLVE) for the function, with
 * every argument register saved around the call (LZ_ASM_FORWARD_COMMON,
 * once per shim, under the helper's name and "_fwd"). */
#define LZ_RESOLVER_VARIADIC(sym, idx) \
    extern __attribute__((visibility("hidden"))) void lz_r_##sym(void); \
    LZ_ASM_FORWARD("lz_r_" #sym, LZ_XSTR(LZ_VRESOLVE) "_fwd", idx)
#define LZ_THUNK_VARIADIC(ret, name, str, idx, params) \
    LZ_CHECK(ret, name, params) LZ_ASM_THUNK(str, idx, LZ_PUBLIC_VIS(str))
#define LZ_THUNK_VARIADIC_HIDDEN(ret, name, str, idx, params) \
    LZ_CHECK(ret, name, params) LZ_ASM_THUNK(str, idx, ".hidden " str "\n\t")
/* A function of the library no header declares: the same thunk, no type
 * to check (gen/emit_stubs.py, add_opaque). */
#define LZ_THUNK_OPAQUE(str, idx) LZ_ASM_THUNK(str, idx, LZ_PUBLIC_VIS(str))
#define LZ_VARIADIC_HELPER \
    __attribute__((used)) static lz_fn LZ_VRESOLVE(size_t i, const void *caller) \
    { return lz_resolve_from(&LZ_LIB, i, caller); } \
    LZ_ASM_FORWARD_COMMON(LZ_XSTR(LZ_VRESOLVE) "_fwd", LZ_XSTR(LZ_VRESOLVE))
#endif

#if defined(LZ_ASM_THUNK) && !defined(LZ_C_THUNKS)
#define LZ_THUNK(ret, name, sym, str, idx, params, args) \
    LZ_CHECK(ret, name, params) LZ_ASM_THUNK(str, idx, LZ_PUBLIC_VIS(str))
#define LZ_THUNK_VOID LZ_THUNK
#define LZ_THUNK_ANSWER(ret, name, sym, str, idx, params, args) \
    LZ_CHECK(ret, name, params) LZ_ASM_ANSWER(str, idx)
#else
#define LZ_THUNK(ret, name, sym, str, idx, params, args) \
    LZ_C_THUNK(ret, name, sym, str, params, return LZ_C_CALL(name, sym, args))
#define LZ_THUNK_VOID(ret, name, sym, str, idx, params, args) \
    LZ_C_THUNK(ret, name, sym, str, params, LZ_C_CALL(name, sym, args))
#define LZ_THUNK_ANSWER LZ_THUNK
#endif

/* Hidden shims (libelf, for the runtime itself): the runtime calls them by
 * their prefixed C names; in the amalgamation they are static C functions,
 * so that two vendored copies in one object never clash. */
#if defined(LZ_ASM_THUNK) && !defined(LZ_C_THUNKS) && !defined(LZ_AMALGAMATION)
#define LZ_THUNK_HIDDEN(ret, name, sym, str, idx, params, args) \
    LZ_CHECK(ret, name, params) LZ_ASM_THUNK(str, idx, ".hidden " str "\n\t")
#else
#define LZ_THUNK_HIDDEN(ret, name, sym, str, idx, params, args) \
    LZ_CHECK(ret, name, params) \
    LZ_HIDDEN ret sym params { return LZ_C_CALL(name, sym, args); }
#endif
#define LZ_THUNK_VOID_HIDDEN LZ_THUNK_HIDDEN

/* The instruction set the next function is compiled for (x86-64: a function
 * passing AVX vectors, gen/emit_stubs.py). */
#if defined(__x86_64__)
#define LZ_TARGET(isa) __attribute__((target(isa)))
#else
#define LZ_TARGET(isa)
#endif

/* used: the generated tables name them from assembly, which the compiler
 * does not see. Reached from a thunk's jump, a resolver's return address
 * is the call site (lz_resolve_from). */
#define LZ_RESOLVER(ret, name, sym, params, args) \
    __attribute__((used)) static ret lz_r_##sym params \
    { return ((__typeof__(&name))lz_resolve_from(&LZ_LIB, LZ_I_##sym, \
                                                   __builtin_return_address(0))) args; }
#define LZ_RESOLVER_VOID(ret, name, sym, params, args) \
    __attribute__((used)) static ret lz_r_##sym params \
    { ((__typeof__(&name))lz_resolve_from(&LZ_LIB, LZ_I_##sym, __builtin_return_address(0))) args; }

/* A failure function records that it ran, so the error APIs can explain it,
 * and leaves errno saying what failed: not whatever an earlier call left
 * there (a tool printing strerror(errno) after a NULL would send its user
 * looking for a file). ELIBACC, "Can not access a needed shared library":
 * the library, or the function in it, cannot be had. */
#define LZ_FAIL_ERRNO ELIBACC
#define LZ_FAIL(ret, sym, params, ...) \
    __attribute__((used)) static ret lz_f_##sym params \
    { lz_failed_call(&LZ_LIB); errno = LZ_FAIL_ERRNO; return __VA_ARGS__; }
#define LZ_FAIL_VOID(sym, params) \
    __attribute__((used)) static void lz_f_##sym params \
    { lz_failed_call(&LZ_LIB); errno = LZ_FAIL_ERRNO; }
/* Of a function whose type is unknown (no header declares it): the spec's
 * opaque_failure in the return register, the failure recorded. A function
 * whose API has no failure value for it (the spec gives its return type
 * none, or "@stop"; an unknown type without opaque_failure) has no failure
 * code at all: its entry in lz_fails is 0 and the runtime stops the process
 * with the report, as the dynamic linker would have at start (lz_stop),
 * rather than return a value the API never uses to say "failed". */
#define LZ_FAIL_OPAQUE(sym, value) \
    __attribute__((used)) static long lz_f_##sym(void) \
    { lz_failed_call(&LZ_LIB); errno = LZ_FAIL_ERRNO; return (long)(value); }
#define LZ_OWN_FAIL(ret, sym, params, value) \
    __attribute__((used)) static ret lz_f_##sym params { return value; }

/* A drop-in's hidden symbol version, name@node beside name@@newer
 * (gen/dropin_versions.py): a function of its own, with its own slot,
 * resolved with dlvsym on its first call, so that a program bound to the
 * old version gets the real library's old version. alias is the symbol the
 * .symver directive renames. */
#define LZ_VERSION_DECL(ret, alias, params) \
    __attribute__((visibility("default"), used)) ret alias params; \
    static lz_fn lz_vs_##alias
#define LZ_VERSION_FN(name, sym, alias, node) \
    ((__typeof__(&name))lz_resolve_version(&LZ_LIB, LZ_I_##sym, node, &lz_vs_##alias))
#define LZ_VERSION_THUNK(ret, name, sym, alias, node, params, args) \
    LZ_VERSION_DECL(ret, alias, params); \
    ret alias params { return LZ_VERSION_FN(name, sym, alias, node) args; }
#define LZ_VERSION_THUNK_VOID(ret, name, sym, alias, node, params, args) \
    LZ_VERSION_DECL(ret, alias, params); \
    ret alias params { LZ_VERSION_FN(name, sym, alias, node) args; }
/* A variadic function's hidden version cannot be forwarded from C: it is
 * an alias of the default version's thunk. */
#define LZ_VERSION_ALIAS(str, alias) \
    __asm__(".globl " #alias "\n\t.set " #alias ", " str);

/* An error-message function of the library, once loaded: the library's
 * answer, filled in with ours when it is empty and one of our calls failed. */
#define LZ_ANSWER(ret, name, sym, params, args) \
    __attribute__((used)) static ret lz_a_##sym params \
    { \
        lz_fn real = __atomic_load_n(&LZ_REALS[LZ_I_##sym], __ATOMIC_ACQUIRE); \
        return lz_fill_message(&LZ_LIB, ((__typeof__(&name))real) args); \
    }

#endif
