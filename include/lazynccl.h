/* lazynccl: control API of the lazy NCCL, NVRTC and nvJitLink shims.
 *
 * Each shim library exports the wrapped API (nccl.h, nvrtc.h, nvJitLink.h)
 * plus one set of the functions below, named with its own prefix:
 * lazynccl_* in liblazynccl, lazynvrtc_* in liblazynvrtc, lazynvjitlink_* in
 * liblazynvjitlink. Include this header only for the control API; the
 * wrapped API comes from the library's own header. See docs/api.md.
 *
 * Costs: "one load" means one atomic load, no lock, no system call.
 * All functions are thread-safe. None aborts, exits or prints (except the
 * log, when LAZYNCCL_DEBUG=1 or a callback asks for it). */
#ifndef LAZYNCCL_H
#define LAZYNCCL_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LAZYNCCL_DECLARE_CONTROL_API(p)                                          \
    /* Load now (search, probe, load): 0 on success, -1 on failure (see       \
     * p##_last_error). Takes the library's lock; after a failure it searches  \
     * again, so a fixed environment can recover. Cost: the search, once. */   \
    int p##_load(void);                                                         \
    /* 1 when the library is loaded, else 0. Never loads. Cost: one load. */  \
    int p##_is_loaded(void);                                                    \
    /* The path of the loaded library, or NULL. Cost: one load. */             \
    const char *p##_loaded_path(void);                                          \
    /* The search step that found it ("LAZYNCCL_LIBPATH", "dynamic linker",  \
     * ...), or NULL when not loaded. Cost: one load. */                       \
    const char *p##_loaded_step(void);                                          \
    /* Why the last load failed, with every candidate tried and the reason   \
     * it was rejected; or why a function is missing from the loaded library; \
     * NULL when nothing failed. The string stays valid. Cost: one load. */    \
    const char *p##_last_error(void);                                           \
    /* Replace the default search order by a ':'-separated list of absolute   \
     * files or directories (NULL restores the default). The environment       \
     * override, when set, still wins. 0 on success, -1 when the library is  \
     * already loaded. Cost: a lock and a copy. */                             \
    int p##_set_search_path(const char *list);                                  \
    /* Receive log lines (each search step and candidate) instead of stderr. \
     * NULL turns it off. Cost: a lock. */                                     \
    void p##_set_log_callback(void (*fn)(void *user, const char *line),         \
                              void *user);                                      \
    /* 1 when a call would load a library now, writing its path; 0 if not.    \
     * Probes only: nothing is loaded and no constructor runs. Cost: the      \
     * search with file probes. */                                              \
    int p##_would_load(char *path, size_t size);

LAZYNCCL_DECLARE_CONTROL_API(lazynccl)
LAZYNCCL_DECLARE_CONTROL_API(lazynvrtc)
LAZYNCCL_DECLARE_CONTROL_API(lazynvjitlink)

#ifdef __cplusplus
}
#endif

#endif
