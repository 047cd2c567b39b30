/* SPDX-License-Identifier: MIT */
/* The environment lazynccl-run gives a command (run_env.h). */
#include "run_env.h"
#include "common/lz_dropins.h"
#include "common/lz_nodecopy.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* valgrind: under any audit module glibc's exit-time __libc_freeres frees
 * memory the dynamic linker's start-up allocator gave out, and memcheck
 * reports two invalid frees that plain runs do not have. Not running it
 * (a user's own VALGRIND_OPTS, which come after, may say otherwise)
 * leaves the C library's few blocks "still reachable" instead. */
#define VALGRIND_FREERES "--run-libc-freeres=no"

/* 1 when item is one of list's entries (separated by any of seps). */
static int has_entry(const char *list, const char *seps, const char *item)
{
    size_t len = strlen(item);
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, seps);
        if (n == len && strncmp(p, item, len) == 0)
            return 1;
        p += n;
        p += strspn(p, seps);
    }
    return 0;
}

/* 1 when the inherited LD_AUDIT holds lazynccl's module under any of its
 * names (the install's, the node copy a parent made, its $LIB form). */
static int held_ours(const char *list)
{
    for (const char *p = list; p && *p;) {
        size_t n = strcspn(p, ":");
        if (lz_audit_entry_ours(p, n))
            return 1;
        p += n;
        p += strspn(p, ":");
    }
    return 0;
}

static int set(run_env *e, const char *name, char *value)
{
    if (!value)
        return -1;
    e->vars[e->n].name = name;
    e->vars[e->n++].value = value;
    return 0;
}

/* head, then old after sep unless old is empty. */
static char *joined(const char *head, const char *sep, const char *old)
{
    size_t n = strlen(head) + strlen(sep) + (old ? strlen(old) : 0) + 1;
    char *v = malloc(n);
    if (v)
        snprintf(v, n, "%s%s%s", head, old && *old && *head ? sep : "", old && *old ? old : "");
    return v;
}

/* list with each entry that is from replaced by to; malloc'd. */
static char *replaced(const char *list, const char *from, const char *to)
{
    size_t tlen = strlen(to);
    char *v = malloc(lz_nodecopy_rewrite_size(list, tlen));
    if (v)
        lz_nodecopy_rewrite(list, lz_nodecopy_is, from, to, tlen, v);
    return v;
}

/* list as it goes to other nodes (common/lz_nodecopy.h); malloc'd. */
static char *handed_on(const char *list, const char *installed)
{
    size_t ilen = strlen(installed);
    char *v = malloc(lz_nodecopy_rewrite_size(list, ilen));
    if (v)
        lz_nodecopy_handoff(list, installed, ilen, v);
    return v;
}

/* items joined by sep, leaving out those already entries of skip_in
 * (separated by any of skip_seps); malloc'd. */
static char *join_items(const char *const *items, int k, char sep, const char *skip_in,
                        const char *skip_seps)
{
    size_t n = 1;
    for (int i = 0; i < k; i++)
        n += strlen(items[i]) + 1;
    char *v = malloc(n);
    if (!v)
        return NULL;
    size_t at = 0;
    for (int i = 0; i < k; i++) {
        if (has_entry(skip_in, skip_seps, items[i]))
            continue;
        if (at)
            v[at++] = sep;
        size_t len = strlen(items[i]);
        memcpy(v + at, items[i], len);
        at += len;
    }
    v[at] = '\0';
    return v;
}

/* The drop-ins' paths (run_find.h), the redirector first when given. */
static int items_of(const run_parts *p, const char *redirector, const char **items)
{
    int k = 0;
    if (*redirector)
        items[k++] = redirector;
    for (int i = 0; i < p->ndropins; i++)
        items[k++] = p->dropins[i];
    return k;
}

static char *dropin_list(const run_parts *p)
{
    const char *items[RUN_MAX_DROPINS + 1];
    return join_items(items, items_of(p, "", items), LZ_DROPINS_SEP[0], NULL, "");
}

/* LD_PRELOAD: the redirector (when given) and the drop-ins ahead of what
 * was there, each only once. */
static char *preload_value(const run_parts *p, const char *redirector)
{
    const char *old = getenv("LD_PRELOAD");
    const char *items[RUN_MAX_DROPINS + 1];
    char *head = join_items(items, items_of(p, redirector, items), ' ', old, " :");
    char *v = head ? joined(head, " ", old) : NULL;
    free(head);
    return v;
}

int run_env_build(const run_parts *p, enum run_mode mode, run_env *e)
{
    memset(e, 0, sizeof *e);
    if (mode == RUN_AUDIT && (!p->module[0] || !run_find_nameable(p->module))) {
        if (!p->module[0])
            fprintf(stderr, "lazynccl-run: no audit module at %s: the drop-ins and the redirector are "
                            "preloaded instead\n", p->module_tried);
        else
            fprintf(stderr, "lazynccl-run: the audit module's path %s holds a space or colon (LD_AUDIT "
                            "cannot name it): the drop-ins and the redirector are preloaded instead\n",
                    p->module);
        mode = RUN_PRELOAD;
    }
    if (mode == RUN_PRELOAD && !p->redirector[0])
        fprintf(stderr, "lazynccl-run: no redirector (liblazynccl-redirect.so) above %s: the drop-ins "
                        "are preloaded alone, and loads by path are not redirected\n", p->dir);
    int rc = 0;
    if (mode == RUN_AUDIT) {
        const char *old = getenv("LD_AUDIT");
        /* Under a wrapped parent, its entry stays whichever form it took. */
        int held = has_entry(old, ":", p->module) || held_ours(old) ||
                   (p->audit_lib_entry[0] && has_entry(old, ":", p->audit_lib_entry));
        int copied = p->node_module[0] && strcmp(p->audit_entry, p->node_module) == 0;
        /* Under a wrapped parent, its entry stays whichever form it took,
         * but for the installed module's where this launch names the node
         * copy (a task under a job script's --print-env: its processes stay
         * on this node). */
        int swap = held && copied && has_entry(old, ":", p->module);
        /* A parent's node copy goes where the copy may not be: into
         * printed variables, and where --no-node-copy is asked for. */
        const char *installed = getenv(LZ_AUDIT_INSTALLED_ENV);
        int back = held && !swap && (p->printing || p->node_copy == RUN_NODE_COPY_OFF) && installed &&
                   lz_nodecopy_installed_ok(installed, strlen(installed));
        rc |= set(e, "LD_AUDIT", swap   ? replaced(old, p->module, p->node_module)
                                 : back ? handed_on(old, installed)
                                 : held ? strdup(old)
                                        : joined(p->audit_entry, ":", old));
        /* The node copy's path exists on this node alone: what a remote
         * launcher below hands on instead (common/lz_nodecopy.h). */
        if (copied && (!held || swap))
            rc |= set(e, LZ_AUDIT_INSTALLED_ENV, strdup(p->module));
        rc |= set(e, LZ_DROPINS_ENV, dropin_list(p));
        const char *vg = getenv("VALGRIND_OPTS");
        rc |= set(e, "VALGRIND_OPTS", has_entry(vg, " \t\n", VALGRIND_FREERES) ? strdup(vg)
                                                                                : joined(VALGRIND_FREERES, " ", vg));
    } else {
        const char *redirector = mode == RUN_PRELOAD ? p->redirector : "";
        rc |= set(e, "LD_PRELOAD", preload_value(p, redirector));
        if (*redirector)
            rc |= set(e, LZ_DROPINS_ENV, dropin_list(p));
    }
    return rc;
}

int run_env_add(run_env *e, const char *name, const char *value)
{
    return e->n < RUN_MAX_VARS ? set(e, name, strdup(value)) : -1;
}
