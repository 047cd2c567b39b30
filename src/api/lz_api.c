/* SPDX-License-Identifier: MIT
 * What callers see of a library's state: the messages failing functions
 * report, the control API (<shim>_load, _last_error, ...) and the
 * inspection API tools use. The loading itself is lz_once.c's. */
#include "api/lz_api.h"
#include "base/lz_asked.h"
#include "base/lz_msg.h"
#include "base/lz_stop.h"
#include "load/lz_open.h"
#include "load/lz_once.h"
#include "base/lz_lock.h"
#include "common/lz_stepnames.h"
#include "base/lz_dl.h"
#include "base/lz_startenv.h"
#include "process/lz_ldlock.h"
#include "base/lz_report.h"
#include "search/lz_emit.h"

#include <errno.h> /* program_invocation_name */
#include <limits.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char out_of_memory[] = "could not be loaded (out of memory for its report)";

static const char *failure_message(const lz_lib *lib)
{
    lz_msg *m = __atomic_load_n(&lib->st->fail_msg, __ATOMIC_ACQUIRE);
    return m ? m->text : out_of_memory;
}

/* The one table of what a library's state says: the failure report, the
 * missing symbols' messages once loaded, or NULL where there is nothing to
 * report (loaded without a failure, or not tried). */
static const char *state_message(const lz_lib *lib, int status)
{
    if (status == LZ_FAILED)
        return failure_message(lib);
    /* Loaded: why a name is missing; untried: why a handle offered was refused. */
    lz_msg *m = __atomic_load_n(status == LZ_LOADED ? &lib->st->sym_msgs : &lib->st->refusals,
                                __ATOMIC_ACQUIRE);
    return m ? m->text : NULL;
}

/* A handle offered to <shim>_adopt and refused in this generation (after
 * a failed load, which a refusal does not undo). */
static const char *refusal(const lz_lib *lib)
{
    int cs = lz_lock(lib);
    unsigned g = __atomic_load_n(&lib->st->refused_gen, __ATOMIC_ACQUIRE), now = lib->st->gen;
    lz_unlock(lib, cs);
    lz_msg *m = __atomic_load_n(&lib->st->refusals, __ATOMIC_ACQUIRE);
    return m && g && g == now + 1 ? m->text : NULL;
}

const char *lz_message(const lz_lib *lib)
{
    int status = lz_status(lib);
    const char *m = state_message(lib, status);
    return m ? m : status == LZ_LOADED ? lib->no_error : lib->not_loaded;
}

static __attribute__((noreturn)) void stop(const lz_lib *lib, const char *head, int k, size_t size)
{
    lz_stop_with(lz_message(lib), head, k, size);
}

void lz_stop(const lz_lib *lib, const char *name)
{
    lz_stop_uncalled(lib, name, lz_message(lib));
}

void lz_stop_busy(const lz_lib *lib, const char *name)
{
    char head[768];
    int k = snprintf(head, sizeof head, "%s: %s was called while the dynamic linker's lock is held "
                     "by %s: %s cannot be loaded until it lets go, and this function has no "
                     "failure value to return; stopping rather than waiting for good (make a "
                     "first call before that thread takes the lock)\n", lib->prefix, name,
                     lz_ldlock_holder(), lib->display);
    stop(lib, head, k, sizeof head);
}

void lz_stop_variables(const lz_lib *lib, const char *who, const char *report)
{
    char head[512];
    int k = snprintf(head, sizeof head, "%s: %s cannot be loaded, and its variables are used (%s): "
                     "stopping, as the dynamic linker would have at start (error while loading "
                     "shared libraries: %s)\n", lib->prefix, lib->display, who, lib->sonames[0]);
    lz_stop_with(report ? report : lz_message(lib), head, k, sizeof head);
}

void lz_stop_unbound(const lz_lib *lib, const char *name, const char *who, const char *version)
{
    /* ld.so names the program by argv[0] as it is now (a program may have
     * set it), "<program name unknown>" where there is none, and the
     * object whose reference it is by its name, the program's being
     * argv[0]; an empty one is left out with its ": ". */
    long argc;
    char *const *argv = lz_start_argv(&argc);
    const char *prog = argv ? argv[0] : program_invocation_name;
    if (!prog)
        prog = "<program name unknown>";
    const char *obj = who ? who : prog;
    size_t size = strlen(prog) + strlen(obj) + strlen(name) + (version ? strlen(version) : 0) + 80;
    char small[1024], *head = size <= sizeof small ? small : malloc(size);
    if (!head) {
        head = small;
        size = sizeof small;
    }
    int k = snprintf(head, size, "%s: symbol lookup error: %s%sundefined symbol: %s%s%s\n", prog, obj,
                     obj[0] ? ": " : "", name, version ? ", version " : "", version ? version : "");
    stop(lib, head, k, size);
}

/* After a loaded library's first failed call, its own-answer functions go
 * through their wrappers (lz_thunk.h's LZ_ANSWER), which give our message
 * where the library's is empty; until then each is one jump into the real
 * library like every other export. Sequentially consistent with
 * lz_resolve's check after it installs a real function: one of the two
 * sees the other, so no slot is left on the bare function after a failure. */
void lz_failed_call(const lz_lib *lib)
{
    int none = 0;
    if (__atomic_load_n(&lib->st->failed_calls, __ATOMIC_RELAXED) ||
        !__atomic_compare_exchange_n(&lib->st->failed_calls, &none, 1, 0, __ATOMIC_SEQ_CST,
                                     __ATOMIC_SEQ_CST))
        return;
    if (lib->say_unavailable && lz_status(lib) == LZ_FAILED)
        lz_say_unavailable(lib, lz_message(lib));
    for (size_t i = 0; lib->answers && i < lib->nsyms; i++) {
        lz_fn answer = lz_fn_at(lib->answers, i);
        lz_fn real = answer ? __atomic_load_n(&lib->reals[i], __ATOMIC_SEQ_CST) : NULL;
        if (real)
            __atomic_compare_exchange_n(&lib->slots[i], &real, answer, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_SEQ_CST);
    }
}

const char *lz_fill_message(const lz_lib *lib, const char *real)
{
    if (real && *real)
        return real;
    const char *ours = __atomic_load_n(&lib->st->failed_calls, __ATOMIC_RELAXED)
                           ? lz_api_last_error(lib) : NULL;
    return ours ? ours : real;
}

int lz_api_load(const lz_lib *lib)
{
    lz_retry(lib);
    return lz_ensure_loaded(lib, NULL) == LZ_LOADED ? 0 : -1;
}

int lz_api_is_loaded(const lz_lib *lib)
{
    return lz_status(lib) == LZ_LOADED;
}

const char *lz_api_loaded_path(const lz_lib *lib)
{
    return lz_status(lib) == LZ_LOADED ? lib->st->path : NULL;
}

const char *lz_api_loaded_step(const lz_lib *lib)
{
    return lz_status(lib) == LZ_LOADED ? lib->st->step : NULL;
}

const char *lz_api_last_error(const lz_lib *lib)
{
    int status = lz_status(lib);
    const char *r = status == LZ_FAILED ? refusal(lib) : NULL;
    return r ? r : state_message(lib, status);
}

int lz_api_set_search_path(const lz_lib *lib, const char *list)
{
    lz_state *st = lib->st;
    int rc = -1;
    char *copy = list ? strdup(list) : NULL;
    int cs = lz_lock(lib);
    /* Not once loaded, nor from inside a load (a log callback, a
     * constructor): each search follows its own copy, but a list set there
     * would silently apply to no search. */
    if (lz_status(lib) != LZ_LOADED && !lz_self_loading(lib) && (!list || copy)) {
        char *old = st->search_list;
        st->search_list = copy;
        copy = old;
        rc = 0;
    }
    lz_unlock(lib, cs);
    free(copy);
    return rc;
}

int lz_api_require(const lz_lib *lib, const char *names)
{
    lz_state *st = lib->st;
    int rc = -1;
    int cs = lz_lock(lib);
    if (names && lz_status(lib) != LZ_LOADED && !lz_self_loading(lib)) {
        const char *old = __atomic_load_n(&st->required, __ATOMIC_ACQUIRE);
        size_t a = old ? strlen(old) : 0, b = strlen(names);
        char *both = malloc(a + b + 2);
        if (both) {
            memcpy(both, old ? old : "", a);
            both[a] = ',';
            memcpy(both + a + 1, names, b + 1);
            /* The old list stays: a search may be reading it. */
            __atomic_store_n(&st->required, both, __ATOMIC_RELEASE);
            rc = 0;
        }
    }
    lz_unlock(lib, cs);
    return rc;
}

void lz_api_set_log_callback(const lz_lib *lib, lz_log_fn fn, void *user)
{
    int cs = lz_lock(lib);
    lib->st->log_user = user;
    __atomic_store_n(&lib->st->log_fn, fn, __ATOMIC_RELEASE);
    lz_unlock(lib, cs);
}

int lz_inspect_search(const lz_lib *lib, const lz_request *req, lz_result *res, char *report,
                      size_t report_size)
{
    int lost;
    /* The search and its report on the heap: they hold paths, and the
     * caller's thread may have the smallest stack. */
    lz_search *w = malloc(sizeof *w);
    lz_report *rep = malloc(sizeof *rep);
    char *list = lz_search_list_copy(lib, &lost);
    if (!w) {
        free(rep);
        free(list);
        memset(res, 0, sizeof *res);
        if (report && report_size)
            snprintf(report, report_size, "%s: out of memory", lib->prefix);
        return 0;
    }
    lz_search_init(w, lib, req);
    if (rep && lz_report_init(rep, lib, report, report_size, 0)) {
        rep->in_linker = req->in_linker;
        lz_listen(w, lz_report_heard, rep);
    }
    w->req.dry_run = 1;
    w->req.search_list = list;
    char *chosen = NULL;
    if (!w->req.chosen && (chosen = lz_chosen_file(lib, &w->req.chosen_step, !req->in_linker)))
        w->req.chosen = chosen;
    if (!lost)
        lz_search_run(w);
    free(chosen);
    free(list);
    free(rep);
    *res = w->res;
    int found = w->res.found;
    free(w);
    return found;
}

int lz_inspect_loaded(const lz_lib *lib, char *path, size_t path_size, char *step,
                      size_t step_size)
{
    /* A loaded library's path and step never change (a retry only follows
     * a failure): the acquire load of the status is enough. */
    if (lz_status(lib) != LZ_LOADED || !path_size || !step_size)
        return 0;
    const char *p = lib->st->path, *s = lib->st->step ? lib->st->step : "";
    size_t n = strnlen(p, path_size - 1), m = strnlen(s, step_size - 1);
    memcpy(path, p, n);
    path[n] = '\0';
    memcpy(step, s, m);
    step[m] = '\0';
    return 1;
}

int lz_api_would_load(const lz_lib *lib, char *path, size_t size)
{
    if (lz_status(lib) == LZ_LOADED) {
        char step[64];
        if (path && size)
            lz_inspect_loaded(lib, path, size, step, sizeof step);
        return 1;
    }
    lz_request req = {0};
    /* The result on the heap (three paths): the caller's thread may have
     * the smallest stack. */
    lz_result *res = malloc(sizeof *res);
    if (!res) {
        if (path && size)
            snprintf(path, size, "%s: out of memory", lib->prefix);
        return 0;
    }
    int found = lz_inspect_search(lib, &req, res, path, size);
    /* Not found: path holds the report, every candidate and why, every place. */
    if (found && path && size)
        snprintf(path, size, "%s", res->path);
    free(res);
    return found;
}

void lz_api_set_chooser(const lz_lib *lib, lz_choose_fn fn, void *user)
{
    int cs = lz_lock(lib);
    lib->st->chooser = fn;
    lib->st->chooser_user = user;
    lz_unlock(lib, cs);
}

int lz_api_adopt(const lz_lib *lib, void *handle)
{
    char *path = malloc(PATH_MAX), *report = malloc(LZ_MESSAGE_MAX);
    int rc = -1;
    if (!path || !report)
        goto out;
    int n = snprintf(report, LZ_MESSAGE_MAX, "%s: the handle offered to %s_adopt was refused:\n",
                     lib->prefix, lib->shim);
    if (lz_self_loading(lib)) {
        snprintf(report + n, LZ_MESSAGE_MAX - (size_t)n, "  called from inside a search of %s "
                 "(its chooser, a constructor it ran)", lib->display);
    } else if (lz_status(lib) == LZ_LOADED) {
        /* The library this shim loaded: adopting it again changes nothing. */
        rc = lz_dl_path_of(handle, path, PATH_MAX) && strcmp(path, lib->st->path) == 0 ? 0 : -1;
        if (rc)
            snprintf(report + n, LZ_MESSAGE_MAX - (size_t)n, "  %s is loaded already (%s)",
                     lib->display, lib->st->path);
    } else if (!lz_dl_path_of(handle, path, PATH_MAX)) {
        snprintf(report + n, LZ_MESSAGE_MAX - (size_t)n, "  the dynamic linker names no file "
                 "for it (the program itself, or not a handle dlopen returned)");
    } else {
        /* Judged first, without loading anything, as a search would judge
         * it; then loaded through the search (one more reference to the
         * same object), which publishes it as any load is. */
        lz_request req = {.chosen = path, .chosen_step = LZ_STEP_ADOPTED};
        lz_result *res = malloc(sizeof *res);
        int ok = res && lz_inspect_search(lib, &req, res, report + n, LZ_MESSAGE_MAX - (size_t)n);
        free(res);
        if (ok) {
            /* Never freed: a search may be reading it. */
            char *keep = strdup(path);
            int cs = lz_lock(lib);
            if (keep && lz_status(lib) != LZ_LOADED && !lz_self_loading(lib)) {
                __atomic_store_n(&lib->st->adopted, keep, __ATOMIC_RELEASE);
                keep = NULL;
            }
            lz_unlock(lib, cs);
            free(keep);
            lz_retry(lib);
            rc = lz_ensure_loaded(lib, NULL) == LZ_LOADED &&
                 strcmp(lib->st->path, path) == 0 ? 0 : -1;
            free(report); /* the failure, if any, is the search's report */
            report = NULL;
        }
    }
out:
    if (rc && report) {
        lz_message_push(&lib->st->refusals, report);
        int cs = lz_lock(lib);
        __atomic_store_n(&lib->st->refused_gen, lib->st->gen + 1, __ATOMIC_RELEASE);
        lz_unlock(lib, cs);
    }
    free(report);
    free(path);
    return rc;
}

const char *lz_api_asked_path(const lz_lib *lib)
{
    return lz_asked_path(lib);
}

int lz_api_loaded_version(const lz_lib *lib, char *buf, size_t size)
{
    if (!buf || !size || !lib->version || lz_status(lib) != LZ_LOADED)
        return 0;
    return lib->version(buf, size) == 0;
}
