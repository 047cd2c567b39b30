/* One-line-per-function building blocks for generated shims.
 *
 * The generated file defines LZ_LIB, the tables lz_slots/lz_fails and an
 * index LZ_I_<name> per export, then uses these macros once per function.
 * Each exported thunk is one indirect jump through its slot, as a PLT entry
 * is: on x86-64 a load is an acquire load, which pairs with the release
 * store in lz_resolve, so a thread that sees the resolved pointer sees the
 * loaded library too. No flag test and no lock stand on the hot path. */
#ifndef LZ_THUNK_H
#define LZ_THUNK_H

#include "lz_runtime.h"

/* In every macro, name is the header's function (its type) and sym the
 * symbol defined for it: the same for a public shim, prefixed for an
 * internal one. */
#define LZ_STR(x) #x
#define LZ_XSTR(x) LZ_STR(x)

/* LZ_SLOTS names the generated file's slot table, LZ_REALS the real
 * functions behind own answers. */
#define LZ_SLOT(sym) __atomic_load_n(&LZ_SLOTS[LZ_I_##sym], __ATOMIC_ACQUIRE)

/* The compiler checks each generated signature against the real header. */
#define LZ_CHECK(ret, name, params) \
    _Static_assert(__builtin_types_compatible_p(__typeof__(&name), ret(*) params), \
                   #name ": generated signature differs from the header");

/* A thunk in C: a tail call through the slot. */
#define LZ_C_THUNK(vis, ret, name, sym, params, call) \
    LZ_CHECK(ret, name, params) \
    vis ret sym params { call; }
#define LZ_C_CALL(name, sym, args) ((__typeof__(&name))LZ_SLOT(sym)) args

#if defined(LZ_AMALGAMATION) && !defined(LAZYNCCL_EXPORT_API)
#define LZ_PUBLIC_VIS(sym) ".hidden " #sym "\n\t"
#else
#define LZ_PUBLIC_VIS(sym) ""
#endif

#if defined(__x86_64__) && !defined(LZ_C_THUNKS)
/* Written in assembly: a C thunk with stack-passed arguments (more than six)
 * makes GCC copy them onto themselves before the jump. */
#define LZ_ASM_THUNK(sym, idx, extra) \
    __asm__(".pushsection .text\n\t.p2align 4\n\t.globl " #sym "\n\t" extra ".type " #sym \
            ",@function\n" #sym ":\n\tjmp *" LZ_XSTR(LZ_SLOTS) "+8*" #idx "(%rip)\n\t.size " \
            #sym ",.-" #sym "\n\t.popsection");
#define LZ_THUNK(ret, name, sym, idx, params, args) \
    LZ_CHECK(ret, name, params) LZ_ASM_THUNK(sym, idx, LZ_PUBLIC_VIS(sym))
#define LZ_THUNK_VOID LZ_THUNK
#else
#define LZ_THUNK(ret, name, sym, idx, params, args) \
    LZ_C_THUNK(LZ_API, ret, name, sym, params, return LZ_C_CALL(name, sym, args))
#define LZ_THUNK_VOID(ret, name, sym, idx, params, args) \
    LZ_C_THUNK(LZ_API, ret, name, sym, params, LZ_C_CALL(name, sym, args))
#endif

/* Internal shims (libelf): hidden; in the amalgamation, static C functions,
 * so that two vendored copies in one object never clash. */
#if defined(__x86_64__) && !defined(LZ_C_THUNKS) && !defined(LZ_AMALGAMATION)
#define LZ_THUNK_HIDDEN(ret, name, sym, idx, params, args) \
    LZ_CHECK(ret, name, params) LZ_ASM_THUNK(sym, idx, ".hidden " #sym "\n\t")
#else
#define LZ_THUNK_HIDDEN(ret, name, sym, idx, params, args) \
    LZ_C_THUNK(LZ_HIDDEN, ret, name, sym, params, return LZ_C_CALL(name, sym, args))
#endif
#define LZ_THUNK_VOID_HIDDEN LZ_THUNK_HIDDEN

#define LZ_RESOLVER(ret, name, sym, params, args) \
    static ret lz_r_##sym params \
    { return ((__typeof__(&name))lz_resolve(&LZ_LIB, LZ_I_##sym)) args; }
#define LZ_RESOLVER_VOID(ret, name, sym, params, args) \
    static ret lz_r_##sym params \
    { ((__typeof__(&name))lz_resolve(&LZ_LIB, LZ_I_##sym)) args; }

/* A failure function records that it ran, so the error APIs can explain it. */
#define LZ_FAIL(ret, sym, params, ...) \
    static ret lz_f_##sym params { lz_failed_call(&LZ_LIB); return __VA_ARGS__; }
#define LZ_FAIL_VOID(sym, params) static void lz_f_##sym params { lz_failed_call(&LZ_LIB); }
#define LZ_OWN_FAIL(ret, sym, params, value) static ret lz_f_##sym params { return value; }

/* An error-message function of the library, once loaded: the library's
 * answer, filled in with ours when it is empty and one of our calls failed. */
#define LZ_ANSWER(ret, name, sym, params, args) \
    static ret lz_a_##sym params \
    { \
        lz_fn real = __atomic_load_n(&LZ_REALS[LZ_I_##sym], __ATOMIC_ACQUIRE); \
        return lz_fill_message(&LZ_LIB, ((__typeof__(&name))real) args); \
    }

/* p is the whole prefix, underscore included ("lazynccl_"). */
#define LZ_CONTROL_API(p) \
    LZ_API int p##load(void) { return lz_api_load(&LZ_LIB); } \
    LZ_API int p##is_loaded(void) { return lz_api_is_loaded(&LZ_LIB); } \
    LZ_API const char *p##loaded_path(void) { return lz_api_loaded_path(&LZ_LIB); } \
    LZ_API const char *p##loaded_step(void) { return lz_api_loaded_step(&LZ_LIB); } \
    LZ_API const char *p##last_error(void) { return lz_api_last_error(&LZ_LIB); } \
    LZ_API int p##set_search_path(const char *list) \
    { return lz_api_set_search_path(&LZ_LIB, list); } \
    LZ_API void p##set_log_callback(void (*fn)(void *, const char *), void *user) \
    { lz_api_set_log_callback(&LZ_LIB, fn, user); } \
    LZ_API int p##would_load(char *path, size_t size) \
    { return lz_api_would_load(&LZ_LIB, path, size); }

/* ELF note "FDO"/0x407c0c0a holding JSON: the freedesktop dlopen metadata. */
#define LZ_DLOPEN_NOTE(id, json) \
    __attribute__((used, section(".note.dlopen"), aligned(4))) \
    static const struct { \
        unsigned namesz, descsz, type; \
        char name[4]; \
        char desc[(sizeof(json) + 3) & ~3u]; \
    } lz_dlopen_note_##id = { 4, sizeof(json), 0x407c0c0a, "FDO", json };

#endif
