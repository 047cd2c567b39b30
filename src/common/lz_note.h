/* SPDX-License-Identifier: MIT
 * The .note.lazynccl contract, defined once: the generator's notes
 * (gen/emit_stubs.py emits them with these macros), the runtime that reads
 * its own box (lz_asked.c) and the audit module that writes it
 * (src/audit/lz_audit.c) all include this file.
 *
 * Notes (owner LZ_NOTE_OWNER, 4-byte aligned):
 *   LZ_NOTE_RUNTIME  every object holding a lazynccl runtime copy: the
 *                    sonames that copy may load, NUL-separated. A load asked
 *                    by such an object for one of them is its own and is
 *                    never redirected.
 *   LZ_NOTE_DROPIN   a drop-in: a 4-byte offset, from the start of the
 *                    description, to its lz_asked_box, then the SONAME it
 *                    stands for, NUL-terminated.
 *
 * Where notes cannot be read cheaply (a handle dlopen returned, a
 * candidate's hash table asked two or three names), an object is known as
 * a shim of a library by the symbol its control API exports, the shim's
 * name then LZ_MARKER_SUFFIX ("lazynccl_load"): every shim of the library
 * exports it (shared, static, drop-in) and the real library never does
 * (lz_shim_marker, elf/lz_probe.h).
 *
 * The box needs no relocation (no pointers) and lies in zero-filled data,
 * so the audit module can write it as soon as the drop-in is mapped, before
 * ld.so has relocated it; nothing here calls a function or a library. */
#ifndef LZ_NOTE_H
#define LZ_NOTE_H

#include <limits.h>
#include <stddef.h>
#ifndef PATH_MAX /* a freestanding <limits.h> (clang's) does not say it */
#include <linux/limits.h>
#endif

#define LZ_NOTE_OWNER "lazynccl"
#define LZ_NOTE_RUNTIME 1
#define LZ_NOTE_DROPIN 2
#define LZ_MARKER_SUFFIX "_load"
/* For the generator's assembly: the type numbers as text. */
#define LZ_NOTE_STR_(x) #x
#define LZ_NOTE_STR(x) LZ_NOTE_STR_(x)

enum { LZ_ASKED_NONE = 0, LZ_ASKED_WRITING = 1, LZ_ASKED_SET = 2 };
/* A slot per thread inside the drop-in's own load at once: with 16, the
 * 17th of 64 racing first calls (fidelity_racing_first_calls_through_a_
 * dlopen_wrapper, under ASan's slow dlopen) found none, the module took
 * its load for the program's and answered it with the drop-in, which
 * refused it, and that search published a failure for every call. */
enum { LZ_LOADING_SLOTS = 64 };

/* The file a program asked for by path, redirected to the drop-in, and the
 * object that asked. state goes NONE -> WRITING -> SET once: the first
 * request is kept, and a reader that sees SET (acquire) sees both strings. */
typedef struct lz_asked_box {
    int state;
    /* The threads inside the drop-in's own dlopen of the real library
     * (their kernel thread ids), 0 in a free slot: the module leaves those
     * loads alone even when an interceptor of dlopen (ASan's, TSan's, a
     * preloaded wrapper) is what ld.so sees as the asking object. A slot
     * per thread: first calls on several threads search and open at once. */
    int loading_tid[LZ_LOADING_SLOTS];
    char path[PATH_MAX];
    char by[PATH_MAX];
    /* For a request by name, the dynamic linker's step that would have
     * found path (lz_stepnames.h: "LD_LIBRARY_PATH", "run path", ...);
     * empty for a request by path. */
    char step[32];
} lz_asked_box;

/* Thread tid enters the drop-in's own load: the slot it took, or -1 where
 * all are taken (its load is then told apart only by its asker). No
 * library call, as below. */
static inline __attribute__((unused)) int lz_asked_box_enter(lz_asked_box *box, int tid)
{
    for (int i = 0; i < LZ_LOADING_SLOTS; i++) {
        int none = 0;
        if (__atomic_compare_exchange_n(&box->loading_tid[i], &none, tid, 0, __ATOMIC_RELAXED,
                                        __ATOMIC_RELAXED))
            return i;
    }
    return -1;
}

static inline __attribute__((unused)) void lz_asked_box_leave(lz_asked_box *box, int slot)
{
    if (slot >= 0)
        __atomic_store_n(&box->loading_tid[slot], 0, __ATOMIC_RELAXED);
}

/* 1 when thread tid is inside the drop-in's own load. */
static inline __attribute__((unused)) int lz_asked_box_loading(const lz_asked_box *box, int tid)
{
    for (int i = 0; i < LZ_LOADING_SLOTS; i++)
        if (__atomic_load_n(&box->loading_tid[i], __ATOMIC_RELAXED) == tid)
            return 1;
    return 0;
}

/* Record a request in the box: 1 recorded, 0 an earlier one is kept. No
 * library call: the audit module runs it inside the dynamic linker. */
static inline __attribute__((unused)) int lz_asked_box_put(lz_asked_box *box, const char *path, const char *by,
                                   const char *step)
{
    int none = LZ_ASKED_NONE;
    if (!__atomic_compare_exchange_n(&box->state, &none, LZ_ASKED_WRITING, 0, __ATOMIC_ACQUIRE,
                                     __ATOMIC_RELAXED))
        return 0;
    size_t i = 0;
    for (; path && path[i] && i + 1 < sizeof box->path; i++)
        box->path[i] = path[i];
    box->path[i] = '\0';
    for (i = 0; by && by[i] && i + 1 < sizeof box->by; i++)
        box->by[i] = by[i];
    box->by[i] = '\0';
    for (i = 0; step && step[i] && i + 1 < sizeof box->step; i++)
        box->step[i] = step[i];
    box->step[i] = '\0';
    __atomic_store_n(&box->state, LZ_ASKED_SET, __ATOMIC_RELEASE);
    return 1;
}

/* Each note of owner LZ_NOTE_OWNER among a PT_NOTE segment's bytes
 * [p, p + len), padded to the segment's alignment (align: p_align; 8 for
 * .note.gnu.property's, else 4, ours): fn(type, desc, desc's size, ctx)
 * until it returns non-zero, which is returned (0 when none did). Bounded:
 * a note that would end past len ends the walk. The one reading of notes,
 * for an object mapped (the audit module) and one read from its file. */
static inline __attribute__((unused)) int lz_note_each(const char *p, size_t len, unsigned long align,
                                                        int (*fn)(unsigned, const char *, size_t, void *),
                                                        void *ctx)
{
    struct { unsigned namesz, descsz, type; } nh; /* ElfW(Nhdr): the same in both classes */
    size_t pad = align == 8 ? 7 : 3;
    for (size_t at = 0; at + sizeof nh <= len;) {
        __builtin_memcpy(&nh, p + at, sizeof nh);
        size_t name = at + sizeof nh, desc = name + ((nh.namesz + pad) & ~pad);
        size_t next = desc + ((nh.descsz + pad) & ~pad);
        if (nh.namesz > len || nh.descsz > len || next > len || next <= at)
            break;
        if (nh.namesz == sizeof LZ_NOTE_OWNER && __builtin_memcmp(p + name, LZ_NOTE_OWNER, sizeof LZ_NOTE_OWNER) == 0) {
            int rc = fn(nh.type, p + desc, nh.descsz, ctx);
            if (rc)
                return rc;
        }
        at = next;
    }
    return 0;
}

/* The SONAME a LZ_NOTE_DROPIN description (size bytes at desc) names, its
 * length in *len; NULL where it is not NUL-terminated within the note. */
static inline __attribute__((unused)) const char *lz_note_dropin_soname(const char *desc, size_t size,
                                                                         size_t *len)
{
    size_t off = 4; /* the box's offset, an int32 */
    if (size <= off)
        return NULL;
    for (*len = 0; off + *len < size; ++*len)
        if (!desc[off + *len])
            return desc + off;
    return NULL;
}

#endif
