/* SPDX-License-Identifier: MIT
 * The hand-written runtime shared by every generated shim.
 *
 * A generated shim (build/<lib>_stubs.c) describes its library with one
 * constant lz_lib; everything here works from that description, so a new
 * library needs a spec, never new runtime code. All symbols are hidden:
 * only the wrapped API and the control API leave a shared object. */
#ifndef LZ_RUNTIME_H
#define LZ_RUNTIME_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* LZ_HIDDEN declares runtime functions, LZ_DECL_DATA/LZ_DEF_DATA the
 * generated library descriptions, LZ_API what leaves the shim. In the
 * amalgamation (one .c for vendoring) everything internal is static and the
 * API is hidden unless LAZYNCCL_EXPORT_API is defined. */
#ifdef LZ_AMALGAMATION
#define LZ_HIDDEN static __attribute__((unused))
#define LZ_DECL_DATA static
#define LZ_DEF_DATA static
#ifdef LAZYNCCL_EXPORT_API
#define LZ_API __attribute__((visibility("default")))
#else
#define LZ_API __attribute__((visibility("hidden")))
#endif
#else
#define LZ_HIDDEN __attribute__((visibility("hidden")))
#define LZ_DECL_DATA extern __attribute__((visibility("hidden")))
#define LZ_DEF_DATA __attribute__((visibility("hidden")))
#define LZ_API __attribute__((visibility("default")))
#endif

typedef void (*lz_fn)(void);

/* A function named by its distance from the table entry that holds it (0:
 * none). The linker computes these, so a table of them is plain read-only
 * data: no relocation at start-up, no page of the shim written for it
 * (docs/concepts/performance.md, "Start-up"). Written by the generator as assembly
 * (".long f - ."), which C initialisers cannot express. */
typedef int32_t lz_fnrel;

static inline __attribute__((unused)) lz_fn lz_fn_at(const lz_fnrel *table, size_t i)
{
    return table[i] ? (lz_fn)((uintptr_t)&table[i] + (uintptr_t)(intptr_t)table[i]) : NULL;
}

/* For the few variables the constructor writes at start-up, and those every
 * first call writes (the lock registry, the dynamic linker's gate, the
 * mapped ld.so.cache): in .data, whose page the dynamic linker has written
 * already (relocations), not in a .bss page of their own that start-up or
 * the first call would fault in (one page each shim; docs/concepts/performance.md
 * "Start-up", "First calls"). */
#define LZ_STARTUP_DATA __attribute__((section(".data")))

/* One exported name. Versioned names belong to a family (nvJitLinkCreate)
 * and carry their version; major is -1 for the unversioned name. Names are
 * offsets into the library's lz_lib.names, not pointers: a table without
 * pointers needs no relocation, so its pages are never written at start-up
 * (a fresh page each, docs/concepts/performance.md "Start-up"). family 0: none; one
 * family has one offset. Read them with lz_sym_name and lz_sym_family. */
typedef struct lz_sym {
    unsigned name, family;
    int major, minor;
} lz_sym;

enum { LZ_UNTRIED = 0, LZ_LOADED = 1, LZ_FAILED = 2 };

#define LZ_MESSAGE_MAX 8192

typedef void (*lz_log_fn)(void *user, const char *message);
/* The program's chooser (<shim>_set_chooser): a handle to adopt, or NULL
 * with a path written (to load that file) or left empty (to search). */
typedef void *(*lz_choose_fn)(void *user, char *path, size_t size);

typedef struct lz_msg {
    struct lz_msg *next;
    char text[];
} lz_msg;

/* A thread running a search for a library (on its own stack): a call it
 * makes back into the shim while loading (a constructor) gets the failure
 * value instead of waiting for itself. */
typedef struct lz_loader {
    struct lz_loader *next;
    pthread_t thread;
} lz_loader;

/* Mutable state of one library, guarded by mu except where noted. mu is
 * held only for short sections that call nothing outside the runtime: never
 * across dlopen, dlsym, a constructor or a log callback (docs/concepts/reliability.md,
 * "The load protocol"). */
struct lz_lib;
struct lz_data;

/* What must be done before a loaded library is published, so that no thread
 * runs its code first (lz_data.c: its variables filled). A hook, so that
 * loading need not know of variables.
 *   prepare  in the searcher, outside mu (it calls into the dynamic linker):
 *            a plan for commit, or NULL when out of memory;
 *   commit   by the search that publishes, under mu, before the status says
 *            loaded; calls nothing that takes a lock. It may be run again
 *            on the same plan (a child forked half-way through it finishes
 *            it: lz_lock.c) and does each step once;
 *   discard  frees the plan. */
typedef struct lz_ready {
    void *(*prepare)(const struct lz_lib *lib, void *handle);
    void (*commit)(const struct lz_lib *lib, void *plan);
    void (*discard)(void *plan);
} lz_ready;

typedef struct lz_state {
    /* The small fields first, in one page: a first call writes a fresh
     * page for each one it touches (docs/concepts/performance.md, "First calls"). */
    pthread_mutex_t mu;
    int status;              /* atomic: LZ_UNTRIED / LZ_LOADED / LZ_FAILED */
    unsigned gen;            /* bumped by a retry: older searches are stale */
    int loaders;             /* searches running (atomic reads) */
    lz_loader *active;       /* the threads running them */
    void *handle;
    const char *step;        /* search step that found the library */
    char *search_list;       /* set by <shim>_set_search_path, or NULL */
    lz_log_fn log_fn;        /* atomic */
    void *log_user;
    /* The report of the failed load (atomic): every candidate and why it
     * was rejected. Never changed once published; a retry publishes anew. */
    struct lz_msg *fail_msg;
    /* Why the last symbol could not be resolved in a loaded library
     * (atomic; a list so that earlier messages stay valid). */
    struct lz_msg *sym_msgs;
    /* Set (atomic) once a function has returned its failure value: the
     * error APIs then explain it when the library itself has nothing to say. */
    int failed_calls;
    /* The names the program declared it needs (<shim>_require), ','
     * separated (atomic): replaced whole by each call, never freed, so a
     * search may read it without the lock. */
    const char *required;
    /* The program's chooser and its argument (both under mu), called at
     * the start of each search unless the override is set. */
    lz_choose_fn chooser;
    void *chooser_user;
    /* The file of a handle the program adopts (<shim>_adopt; atomic, never
     * freed): a search then judges that file alone. */
    const char *adopted;
    /* Why the last handle offered to <shim>_adopt was refused (atomic; a
     * list, so that earlier messages stay valid), and the generation it was
     * refused in, plus one (0: none): _last_error says it until a retry. */
    struct lz_msg *refusals;
    unsigned refused_gen;
    /* Whether companions are left to load (atomic): companion_files. */
    int companions_pending;
    /* Whether the loaded library exports every name of the spec (atomic;
     * 0 not asked yet, 1 yes, 2 no): only then can no later call fail, and
     * an own-answer function be bound to the real one (lz_bind.c). */
    int complete;
    /* Path of the loaded library, and the companions left to load before
     * the first call of a companions_for function ('\n'-separated files):
     * the search's own allocation, kept from the moment status is published
     * (never changed or freed after). Pointers, not PATH_MAX arrays: a
     * shim's .bss then fits in the last page of its data, and the dynamic
     * linker maps no zero pages for it (one mmap per shim fewer in every
     * process's start-up; docs/concepts/performance.md, "Start-up"). */
    const char *path;
    const char *companion_files;
    /* The file the program asked for by path, when lazynccl-run's audit
     * module redirected that load to this drop-in, and who asked: written by
     * the module (lz_note.h), in a drop-in only (NULL elsewhere). */
    struct lz_asked_box *asked;
    /* The exported variables (atomic), registered by the generated
     * constructor where the library has any (lz_data.h), and what the
     * search that publishes the library runs first: their filling. */
    const struct lz_data *data[2];  /* [0]: other variables; [1]: function pointers */
    const lz_ready *ready;          /* atomic; NULL: nothing to do */
    const struct lz_dry *dry;       /* atomic: the variables' last dry search (lz_data.c) */
    void *committing;               /* the plan whose commit runs (mu), for fork's child */
} lz_state;

#define LZ_STATE_INIT { .mu = PTHREAD_MUTEX_INITIALIZER }

/* A soname the spec knows and never loads, with what it is ("CUDA 11.x NVRTC"). */
typedef struct lz_unsupported {
    const char *soname, *what;
} lz_unsupported;

/* Another library released with this one (spec: released_with,
 * not_older_than): a copy of it already loaded decides which copy of this
 * one is of its release (lz_release.c). */
typedef struct lz_peer {
    const char *display, *shim;
    const char *scheme;             /* versions compare only within one scheme */
    int versioned;                  /* its names carry versions (__nvJitLinkCreate_13_0) */
    const char *const *sonames;     /* NULL-terminated */
    int relation;                   /* 0: one release; 1: this one not older than it; 2: not newer */
} lz_peer;

/* An environment variable naming a prefix, and the subdirectories searched
 * below it ({"CUDA_HOME", {"lib64", "lib"}}); {NULL} ends a list. */
typedef struct lz_root {
    const char *var;
    const char *const *subdirs;
} lz_root;

/* Constant description of one library, generated from its spec: everything
 * that differs between libraries is here, none of it in the runtime's code. */
typedef struct lz_lib {
    const char *id, *display, *shim;
    const char *prefix;             /* of messages and log lines ("lazynccl") */
    const char *env_var;            /* the override (LAZYNCCL_LIBPATH) */
    const char *debug_env;          /* logging to stderr (LAZYNCCL_DEBUG) */
    const char *strict_env;         /* no versioned-name fallback */
    const char *require_env;        /* names the program needs (LAZYNCCL_REQUIRE) */
    const char *release_env;        /* the release policy (LAZYNCCL_RELEASE_POLICY) */
    const char *scheme;             /* whose versions this library's compare with */
    const lz_peer *peers;           /* {NULL} terminated: released with it */
    const char *no_error, *not_loaded;  /* "lazynvrtc: no error", ... */
    const char *version_marker;     /* start of the version string in .rodata */
    const char *const *sonames;     /* NULL-terminated, preference order */
    const char *const *wheel_dirs;  /* below site-packages */
    const lz_root *roots_before;    /* searched before the dynamic linker's order */
    const lz_root *roots_after;     /* and after it */
    const char *const *default_dirs; /* last */
    const char *const *required;    /* a candidate must export these */
    const lz_unsupported *unsupported; /* {NULL} terminated */
    /* Files the library opens by bare name, loaded from its directory first:
     * the start of the name as its .rodata spells it ("libnvrtc-builtins.so."). */
    const char *const *companions;
    /* The functions before whose first call they are loaded (empty: with
     * the library): the library opens them only there (NVRTC's compile). */
    const char *const *companions_for;
    const lz_fnrel *answers;        /* own answers once loaded, or 0 entries */
    lz_fn *reals;                   /* the real functions behind them */
    /* A bit per sym (NULL: none): names the library's dependencies define
     * for it (ncurses' libtinfo, curses_version), which no candidate's own
     * table holds; dlsym finds them through the loaded library. */
    const unsigned char *from_deps;
    const lz_sym *syms;
    const char *names;              /* the syms' names, '\0'-separated */
    const uint32_t *by_name;        /* the syms' indices in their names' strcmp order */
    size_t nsyms;
    lz_fn *slots;                   /* what each thunk jumps through */
    const lz_fnrel *resolvers;      /* initial slot values */
    const lz_fnrel *fails;          /* what a slot holds when it cannot be had */
    /* Writes the loaded library's version as text: 0, or -1 (NULL: none). */
    int (*version)(char *out, size_t size);
    int probe;                      /* probe candidates with libelf first */
    int say_unavailable;            /* the first failed call says why on stderr */
    int must_load;                  /* lazynccl-info asked for nothing fails without it */
    /* Search only the override, loaded copies, ld.so.cache and the system
     * directories (spec: search = "system"): for a library loaded unprobed. */
    int system_only;
    int dlopen_flags;               /* added to RTLD_LAZY | RTLD_LOCAL (spec: dlopen_flags) */
    lz_state *st;
} lz_lib;

static inline __attribute__((unused)) const char *lz_sym_name(const lz_lib *lib, const lz_sym *s)
{
    return lib->names + s->name;
}

/* 1 when the library's dependencies define syms[i] for it (lz_lib.from_deps). */
static inline __attribute__((unused)) int lz_sym_from_deps(const lz_lib *lib, size_t i)
{
    return lib->from_deps && (lib->from_deps[i / 8] >> (i % 8) & 1);
}

/* 1 when a candidate serves syms[i] whatever its own table holds: the shim
 * answers it itself where the library lacks it (ncclGetLastError), or the
 * library's dependencies define it (judged by dlsym once loaded). The one
 * rule of the first call's judge (lz_candidate.c) and lazynccl-info --check. */
static inline __attribute__((unused)) int lz_sym_any_copy(const lz_lib *lib, size_t i)
{
    return (lib->answers && lz_fn_at(lib->answers, i)) || lz_sym_from_deps(lib, i);
}

/* NULL for a name of no family. */
static inline __attribute__((unused)) const char *lz_sym_family(const lz_lib *lib, const lz_sym *s)
{
    return s->family ? lib->names + s->family : NULL;
}

#endif
