/* SPDX-License-Identifier: MIT
 * lazynccl-info --doctor: the environment traps users hit, each said in one
 * line with the fix in the next. */
#include "info.h"
#include "base/lz_env.h"
#include "common/lz_stepnames.h"
#include "base/lz_path.h"
#include "common/lz_tls.h"
#include "elf/lz_version.h"
#include "common/lz_dropins.h"

#include <ctype.h>
#include <dirent.h>
#include <gnu/libc-version.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static doctor_finding *add(doctor_report *r, const char *check, const char *status,
                           const char *fix, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static doctor_finding *add(doctor_report *r, const char *check, const char *status,
                           const char *fix, const char *fmt, ...)
{
    if (r->n == DOCTOR_MAX)
        return NULL;
    doctor_finding *f = &r->f[r->n++];
    f->check = check;
    f->status = status;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->message, sizeof f->message, fmt, ap);
    va_end(ap);
    snprintf(f->fix, sizeof f->fix, "%s", fix ? fix : "");
    return f;
}

/* NCCL_NET names a transport; the built-in IB transport needs libibverbs. */
static void check_net(doctor_report *r)
{
    const char *net = lz_getenv("NCCL_NET");
    char path[PATH_MAX];
    if (!net || !*net)
        return;
    if (strcasecmp(net, "IB") == 0) {
        if (info_find_soname("libibverbs.so.1", path, sizeof path))
            add(r, "nccl-net", "ok", NULL, "NCCL_NET=IB: libibverbs.so.1 found at %s", path);
        else
            add(r, "nccl-net", "problem",
                "install libibverbs1 (rdma-core), or set NCCL_NET=Socket",
                "NCCL_NET=IB, but libibverbs.so.1 is not installed");
    } else if (strcasecmp(net, "Socket") == 0) {
        add(r, "nccl-net", "ok", NULL, "NCCL_NET=Socket: built into NCCL");
    } else {
        add(r, "nccl-net", "warning", "set NCCL_NET_PLUGIN to the plugin that provides it",
            "NCCL_NET=%s is not built in (IB, Socket): a net plugin must provide it", net);
    }
}

/* The API versions a net plugin exports: ncclNetPlugin_vN, ncclNet_vN,
 * ncclCollNetPlugin_vN, ncclCollNet_vN. */
static void plugin_versions(const lz_probe *p, char *out, size_t size)
{
    static const char *const prefixes[] = {"ncclNetPlugin_v", "ncclNet_v", "ncclCollNetPlugin_v",
                                           "ncclCollNet_v", NULL};
    size_t len = 0;
    out[0] = '\0';
    for (size_t i = 0; i < p->elf.nnames; i++)
        for (const char *const *pre = prefixes; *pre; pre++) {
            size_t n = strlen(*pre);
            const char *s = p->elf.names[i];
            if (strncmp(s, *pre, n) == 0 && isdigit((unsigned char)s[n]) && len < size) {
                int m = snprintf(out + len, size - len, "%s%s", len ? ", " : "", s);
                len += m > 0 ? (size_t)m : 0;
            }
        }
}

static void check_plugin(doctor_report *r)
{
    const char *value = lz_getenv("NCCL_NET_PLUGIN");
    char name[256], path[PATH_MAX], versions[512];
    if (value && strcasecmp(value, "none") == 0)
        return;
    /* NCCL tries libnccl-net-<value>.so, then <value> itself; unset, libnccl-net.so. */
    const char *names[2] = {NULL, NULL};
    if (value && *value) {
        snprintf(name, sizeof name, "libnccl-net-%s.so", value);
        names[0] = name;
        names[1] = value;
    } else {
        names[0] = "libnccl-net.so";
    }
    for (int i = 0; i < 2 && names[i]; i++) {
        int found = names[i][0] == '/' ? access(names[i], R_OK) == 0 : 0;
        if (found)
            snprintf(path, sizeof path, "%s", names[i]);
        else if (!strchr(names[i], '/'))
            found = info_find_soname(names[i], path, sizeof path);
        if (!found)
            continue;
        lz_probe p;
        if (lz_probe_read(path, &p) != LZ_PROBE_OK) {
            add(r, "nccl-net-plugin", "problem", "replace the file with a working plugin build",
                "net plugin %s cannot be read: %s", path, p.reason);
            return;
        }
        plugin_versions(&p, versions, sizeof versions);
        lz_probe_free(&p);
        if (versions[0])
            add(r, "nccl-net-plugin", "ok", NULL, "net plugin %s exports %s", path, versions);
        else
            add(r, "nccl-net-plugin", "problem",
                "use a plugin built for this NCCL (it must export ncclNetPlugin_vN or ncclNet_vN)",
                "%s exports no net plugin API (no ncclNetPlugin_vN / ncclNet_vN symbol)", path);
        return;
    }
    if (value && *value)
        add(r, "nccl-net-plugin", "problem",
            "install the plugin or add its directory to LD_LIBRARY_PATH",
            "NCCL_NET_PLUGIN=%s, but libnccl-net-%s.so is not found", value, value);
}

/* An LD_LIBRARY_PATH copy older than the wheel's shadows it for every
 * program linked to the real library. */
static void check_shadowing(doctor_report *r, info_lib *libs, int nlibs)
{
    for (int l = 0; l < nlibs; l++)
        for (int i = 0; i < libs[l].ncands; i++) {
            info_candidate *a = &libs[l].cands[i];
            if (strcmp(a->step, LZ_STEP_LD_LIBRARY_PATH) != 0 || !a->version[0])
                continue;
            for (int j = 0; j < libs[l].ncands; j++) {
                info_candidate *b = &libs[l].cands[j];
                if (strcmp(b->step, LZ_STEP_WHEEL) != 0 || !b->version[0] ||
                    strcmp(a->soname, b->soname) != 0 || info_version_cmp(a->version, b->version) >= 0)
                    continue;
                char fix[512];
                snprintf(fix, sizeof fix, "drop %.*s from LD_LIBRARY_PATH",
                         (int)(strrchr(a->path, '/') - a->path), a->path);
                add(r, "shadowing", "problem", fix,
                    "LD_LIBRARY_PATH shadows the wheel's %s: %s (version %s) is older than %s (version %s)",
                    a->soname, a->path, a->version, b->path, b->version);
            }
        }
}

/* Several different files of one soname across the search order, and
 * which of them the search takes (the first acceptable one, by step). */
static void check_copies_of(doctor_report *r, const info_lib *il, const char *soname)
{
    char seen[INFO_MAX_CANDIDATES][PATH_MAX];
    int nseen = 0;
    char list[900] = "";
    size_t len = 0;
    for (int i = 0; i < il->ncands; i++) {
        const info_candidate *c = &il->cands[i];
        char real[PATH_MAX];
        if (strcmp(c->soname, soname) != 0 || c->verdict == LZ_REJECTED ||
            !realpath(c->path, real))
            continue;
        int dup = 0;
        for (int k = 0; k < nseen; k++)
            dup |= strcmp(seen[k], real) == 0;
        if (dup)
            continue;
        snprintf(seen[nseen++], PATH_MAX, "%s", real);
        int m = snprintf(list + len, sizeof list - len, "%s%s (%s%s)", len ? "; " : "", real,
                         c->version[0] ? "version " : "version unknown", c->version);
        len += m > 0 && (size_t)m < sizeof list - len ? (size_t)m : 0;
    }
    if (nseen < 2)
        return;
    char used[PATH_MAX + 128] = "none of them is used";
    if (il->would_load)
        snprintf(used, sizeof used, "used: %s (found by %s, the first step that has one)",
                 il->chosen, il->chosen_step);
    char fix[128];
    snprintf(fix, sizeof fix, "set %s to the one you mean", il->lib->env_var);
    add(r, "copies", "warning", fix, "%d copies of %s: %s; %s", nseen, soname, list, used);
}

/* lazynccl-run's variables (docs/concepts/the-same-job.md): the audit module in
 * LD_AUDIT and the drop-ins it names (LAZYNCCL_AUDIT_DROPINS), or drop-ins
 * preloaded without it (--no-audit). */
static int is_audit_module(const char *path)
{
    lz_probe p = {0};
    int yes = lz_probe_read(path, &p) == LZ_PROBE_OK && lz_probe_exports(&p, "la_objsearch") &&
              strstr(path, "lazynccl-audit") != NULL;
    lz_probe_free(&p);
    return yes;
}

/* Appends ", item" (or "item") to a bounded list. */
/* An item that does not fit ends the list with ", ..." (once): a list cut
 * says so. */
static void list_add(char *list, size_t size, size_t *len, const char *item)
{
    if (*len >= size)
        return; /* cut already */
    int m = snprintf(list + *len, size - *len, "%s%s", *len ? ", " : "", item);
    if (m > 0 && (size_t)m < size - *len) {
        *len += (size_t)m;
        return;
    }
    list[*len] = '\0';
    if (*len + 6 < size)
        memcpy(list + *len, ", ...", 6);
    *len = size;
}

/* The directory every path of a ", "-separated list is in, into dir: 1 when
 * there is one (a list cut by list_add has none). */
static int one_dir(const char *list, char *dir, size_t size)
{
    size_t dlen = 0;
    for (const char *p = list; *p;) {
        size_t n = strcspn(p, ",");
        const char *slash = memrchr(p, '/', n);
        if (!slash || (dlen && ((size_t)(slash - p) != dlen || memcmp(p, dir, dlen) != 0)) ||
            (size_t)(slash - p) >= size || (n == 3 && memcmp(p, "...", 3) == 0))
            return 0;
        if (!dlen) {
            dlen = (size_t)(slash - p);
            memcpy(dir, p, dlen);
            dir[dlen] = '\0';
        }
        p += n;
        p += strspn(p, ", ");
    }
    return dlen > 0;
}

/* The next non-empty entry of a list of files separated by any of seps
 * (LD_PRELOAD: " :", LD_AUDIT and LAZYNCCL_AUDIT_DROPINS: ":") into path:
 * 1 while there is one. $LIB is expanded as Debian's ld.so expands it for
 * this process (lazynccl-run names its audit module so where the system's
 * ld.so does: src/run/run_modules.c). */
static int next_file(const char **list, const char *seps, char *path, size_t size)
{
    while (*list && **list) {
        size_t n = lz_path_next(*list, seps);
        const char *tok = memmem(*list, n, "$LIB", 4);
        if (tok && *LZ_AUDIT_LIB64)
            snprintf(path, size, "%.*s%s%.*s", (int)(tok - *list), *list, LZ_AUDIT_LIB64,
                     (int)(n - (size_t)(tok - *list) - 4), tok + 4);
        else
            snprintf(path, size, "%.*s", (int)n, *list);
        *list += n + ((*list)[n] != '\0');
        if (path[0])
            return 1;
    }
    return 0;
}

/* The drop-ins among the files of a list (separated by any of seps). */
static void find_dropins(const char *files, const char *seps, info_lib *libs, int nlibs,
                         char *dropins, size_t dsize, size_t *dl, char *sonames, size_t ssize, size_t *sl)
{
    char path[PATH_MAX];
    while (next_file(&files, seps, path, sizeof path)) {
        lz_probe pr = {0};
        if (lz_probe_read(path, &pr) != LZ_PROBE_OK) {
            lz_probe_free(&pr);
            continue;
        }
        for (int l = 0; l < nlibs; l++) {
            char marker[128];
            if (!lz_probe_exports(&pr, lz_shim_marker(libs[l].lib->shim, marker, sizeof marker)))
                continue;
            list_add(dropins, dsize, dl, path);
            list_add(sonames, ssize, sl, pr.elf.soname);
            break;
        }
        lz_probe_free(&pr);
    }
}

/* lazynccl-run --preload's redirector among the preloaded objects. */
static int redirector_preloaded(void)
{
    const char *preload = lz_getenv("LD_PRELOAD");
    char path[PATH_MAX];
    while (next_file(&preload, " :", path, sizeof path)) {
        lz_probe p = {0};
        int yes = strstr(path, "lazynccl-redirect") && lz_probe_read(path, &p) == LZ_PROBE_OK &&
                  lz_probe_exports(&p, "dlopen");
        lz_probe_free(&p);
        if (yes)
            return 1;
    }
    return 0;
}

static void check_audit(doctor_report *r, info_lib *libs, int nlibs)
{
    const char *audit = lz_getenv("LD_AUDIT");
    char dropins[1024] = "", sonames[512] = "", preloaded[1024] = "", psonames[512] = "";
    char module[PATH_MAX] = "", others[1024] = "";
    size_t dl = 0, sl = 0, pl = 0, psl = 0, ol = 0;
    find_dropins(lz_getenv("LAZYNCCL_AUDIT_DROPINS"), ":", libs, nlibs, dropins, sizeof dropins, &dl,
                 sonames, sizeof sonames, &sl);
    find_dropins(lz_getenv("LD_PRELOAD"), " :", libs, nlibs, preloaded, sizeof preloaded, &pl,
                 psonames, sizeof psonames, &psl);
    char path[PATH_MAX];
    while (next_file(&audit, ":", path, sizeof path)) {
        if (!module[0] && is_audit_module(path))
            snprintf(module, sizeof module, "%s", path);
        else
            list_add(others, sizeof others, &ol, path);
    }
    char dir[PATH_MAX];
    int same = one_dir(dropins, dir, sizeof dir);
    if (module[0] && dropins[0])
        add(r, "audit", "ok", NULL,
            "requests for %s, by name or by path, get the drop-ins (%s%s) until the real library "
            "is loaded, then that copy, through the audit module %s%s%s; in a process, "
            "lazynccl.status() (or <shim>_loaded_path()) names the real file that serves, and "
            "LAZYNCCL_DEBUG=1 logs each redirect, who asked and for which path",
            sonames, same ? "in " : "", same ? dir : dropins, module,
            others[0] ? "; other audit modules kept: " : "", others);
    else if (module[0])
        add(r, "audit", "warning", "run the program with lazynccl-run (it sets both variables)",
            "the audit module %s is in LD_AUDIT but LAZYNCCL_AUDIT_DROPINS names no drop-in: "
            "nothing is redirected", module);
    else if (preloaded[0] && redirector_preloaded())
        add(r, "audit", "ok", NULL,
            "drop-ins preloaded for %s with the redirector (lazynccl-run --preload): loads by "
            "path are redirected through dlopen; in a process, lazynccl.status() names the real "
            "file that serves", psonames);
    else if (preloaded[0])
        add(r, "audit", "warning",
            "run the program with lazynccl-run (without --no-audit): it installs the audit module",
            "drop-ins preloaded for %s without the audit module: a program that loads the real "
            "library by path (PyTorch preloads nvidia/*/lib) maps it anyway", psonames);
    else
        /* Said where a launcher may have dropped the environment: a task of
         * srun or sbatch --export=NONE, a container's entry point. */
        add(r, "wrapper", "ok", NULL,
            "lazynccl-run's environment did not reach this process (no audit module in LD_AUDIT, "
            "no drop-in in LD_PRELOAD): the real libraries load as without it. Where a launcher "
            "drops the environment (srun or sbatch --export=NONE), put lazynccl-run in the task's "
            "command (srun lazynccl-run PROG): docs/guides/launchers.md");
}

/* The static TLS the preloaded libraries hold against what an audited
 * process gets (the rule is src/common/lz_tls.h's, which the audit module applies
 * in every process: docs/concepts/the-same-job.md, "Static TLS"). */
static void check_static_tls(doctor_report *r)
{
    const char *audit = lz_getenv("LD_AUDIT"), *preload = lz_getenv("LD_PRELOAD");
    unsigned long long need = 0;
    char names[1024] = "";
    size_t nl = 0;
    char path[PATH_MAX];
    while (next_file(&preload, " :", path, sizeof path)) {
        lz_probe pr = {0};
        if (lz_probe_read(path, &pr) == LZ_PROBE_OK && pr.elf.tls) {
            need += pr.elf.tls;
            char item[PATH_MAX + 32];
            snprintf(item, sizeof item, "%s (%llu bytes)", path, pr.elf.tls);
            list_add(names, sizeof names, &nl, item);
        }
        lz_probe_free(&pr);
    }
    if (!need)
        return;
    int ours = 0, audited = 0;
    while (next_file(&audit, ":", path, sizeof path)) {
        audited = 1;
        ours |= is_audit_module(path);
    }
    const char *ver = gnu_get_libc_version();
    int tunable = lz_version_cmp(ver, LZ_TLS_SINCE_VERSION) >= 0;
    unsigned long long have = lz_tls_optional(lz_getenv("GLIBC_TUNABLES"));
    char how[256];
    if (tunable)
        snprintf(how, sizeof how, "restarts such a process once with " LZ_TLS_TUNABLE "=%llu (or more: "
                 "the C library's and the program's other libraries count too)", lz_tls_want(need));
    else
        snprintf(how, sizeof how, "restarts such a process once without itself, with the drop-ins "
                 "and the redirector preloaded (glibc %s has no " LZ_TLS_TUNABLE ")", ver);
    if (!audited || ours)
        add(r, "static-tls", "ok", NULL,
            "the preloaded %s hold %llu bytes of static TLS, more than glibc gives an audited "
            "process by itself: under lazynccl-run the audit module %s", names, need, how);
    else if (tunable && lz_tls_fits(need, have))
        add(r, "static-tls", "ok", NULL,
            "the preloaded %s hold %llu bytes of static TLS, and GLIBC_TUNABLES gives audited "
            "processes %llu bytes of optional static TLS", names, need, have);
    else if (tunable) {
        char fix[160];
        snprintf(fix, sizeof fix, "run it with lazynccl-run (its audit module sizes each process), or "
                 "append " LZ_TLS_TUNABLE "=%llu to GLIBC_TUNABLES", lz_tls_want(need));
        add(r, "static-tls", "problem", fix,
            "LD_AUDIT is set and the preloaded %s hold %llu bytes of static TLS, more than glibc "
            "gives an audited process: it stops with \"cannot allocate memory in static TLS "
            "block\"", names, need);
    } else
        add(r, "static-tls", "problem",
            "run it with lazynccl-run, whose audit module restarts such a process with the "
            "drop-ins preloaded instead",
            "LD_AUDIT is set and the preloaded %s hold static TLS, which glibc %s cannot give a "
            "process with an audit module (no " LZ_TLS_TUNABLE " before " LZ_TLS_SINCE_VERSION "): it "
            "stops with \"cannot allocate memory in static TLS block\"", names, ver);
}

static void check_copies(doctor_report *r, info_lib *libs, int nlibs)
{
    for (int l = 0; l < nlibs; l++)
        for (const char *const *s = libs[l].lib->sonames; *s; s++)
            check_copies_of(r, &libs[l], *s);
}

/* Libraries released together: a finding per pair not of one release. */
struct release_ctx {
    doctor_report *r;
    info_lib *libs;
};

static void add_mismatch(void *ctx, int i, int j, int policy, const char *text)
{
    struct release_ctx *c = ctx;
    char fix[256];
    snprintf(fix, sizeof fix, "name copies of one release in %s and %s", c->libs[i].lib->env_var,
             c->libs[j].lib->env_var);
    add(c->r, "release", policy == LZ_RELEASE_STRICT ? "problem" : "warning", fix, "%s %s: %s",
        c->libs[i].lib->display, c->libs[i].chosen, text);
}

static void check_release(doctor_report *r, info_lib *libs, int nlibs)
{
    const lz_lib *l[64];
    const char *chosen[64];
    int n = nlibs < 64 ? nlibs : 64;
    for (int i = 0; i < n; i++) {
        l[i] = libs[i].lib;
        chosen[i] = libs[i].would_load ? libs[i].chosen : "";
    }
    struct release_ctx c = {r, libs};
    info_release_mismatches(l, chosen, n, add_mismatch, &c);
}

void doctor_run(doctor_report *r, info_lib *libs, int nlibs)
{
    memset(r, 0, sizeof *r);
    int has_nccl = 0;
    for (int i = 0; i < nlibs; i++)
        has_nccl |= strcmp(libs[i].lib->id, "nccl") == 0;
    if (has_nccl) {
        check_net(r);
        check_plugin(r);
    }
    check_shadowing(r, libs, nlibs);
    check_copies(r, libs, nlibs);
    check_release(r, libs, nlibs);
    check_audit(r, libs, nlibs);
    check_static_tls(r);
}
