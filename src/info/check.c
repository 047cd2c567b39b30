/* SPDX-License-Identifier: MIT
 * lazynccl-info --check PROGRAM|LIBRARY: a job's pre-flight, without
 * loading anything. The target's DT_NEEDED closure is followed as the
 * dynamic linker would follow it (DT_RPATH up the chain of loaders, unless
 * the object has DT_RUNPATH; LD_LIBRARY_PATH; DT_RUNPATH; ld.so.cache and
 * the system directories). For each library served, the names the closure
 * imports from it (from its shim, or from its own soname) decide, with the
 * runtime's own judge, which file it would load and whether that file has
 * them all: through the shim, its search; for an object that needs the
 * library itself, the dynamic linker's choice, which a drop-in under
 * lazynccl-run keeps, unless the library's override names another. */
#include "info.h"
#include "common/lz_stepnames.h"
#include "base/lz_env.h"
#include "base/lz_path.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CHECK_MAX_OBJECTS 1024

typedef struct check_obj {
    char *path;
    lz_probe p;
    int loader;              /* the object whose DT_NEEDED brought it (-1: the target) */
} check_obj;

typedef struct check_closure {
    check_obj o[CHECK_MAX_OBJECTS];
    int n;
    int missing;             /* sonames nothing resolves */
    int capped;              /* objects past CHECK_MAX_OBJECTS */
} check_closure;

static int readable(const char *path, lz_probe *p)
{
    return access(path, F_OK) == 0 && lz_probe_read(path, p) == LZ_PROBE_OK && p->elf.native &&
           p->elf.machine == lz_elf_own_machine();
}

/* A file the dynamic linker's search reaches: taken when ld.so could map
 * it (of this machine and class), as ld.so skips any other. */
struct found {
    char *out;
    lz_probe *p;
};

static int take_readable(void *ctx, const char *step, const char *path)
{
    (void)step;
    struct found *f = ctx;
    if (snprintf(f->out, PATH_MAX, "%s", path) >= PATH_MAX)
        return 0;
    lz_probe_free(f->p);
    return readable(f->out, f->p);
}

/* The directory of path, for $ORIGIN (malloc'd). */
static char *origin_of(const char *path)
{
    char *real = realpath(path, NULL);
    char *slash = real ? strrchr(real, '/') : NULL;
    if (slash)
        *slash = '\0';
    return real;
}

/* What ld.so's search for the libraries object i needs depends on, read
 * from the closure (asker_free frees the origins): LD_LIBRARY_PATH is this
 * environment's, its $ORIGIN the target's directory (the program's, for a
 * program). */
static void asker_of(const check_closure *c, int i, lz_linker_asker *a)
{
    memset(a, 0, sizeof *a);
    const lz_elffile *e = &c->o[i].p.elf;
    if (e->runpath) {
        a->runpath = e->runpath;
        a->runpath_origin = origin_of(c->o[i].path);
    } else
        for (int k = i; k >= 0 && a->nrpath < LZ_LINKER_CHAIN; k = c->o[k].loader)
            if (c->o[k].p.elf.rpath && !c->o[k].p.elf.runpath) {
                a->rpath[a->nrpath] = c->o[k].p.elf.rpath;
                a->rpath_origin[a->nrpath++] = origin_of(c->o[k].path);
            }
    a->llp = lz_getenv("LD_LIBRARY_PATH");
    a->llp_origin = origin_of(c->o[0].path);
    a->nodeflib = (e->flags_1 & DF_1_NODEFLIB) != 0;
}

static void asker_free(lz_linker_asker *a)
{
    free((char *)a->runpath_origin);
    free((char *)a->llp_origin);
    for (int k = 0; k < a->nrpath; k++)
        free((char *)a->rpath_origin[k]);
}

/* Where the dynamic linker finds soname for object i, in the runtime's
 * order (lz_linker.h): 1 with out and p. */
static int resolve(const check_closure *c, int i, const char *soname, char *out, lz_probe *p)
{
    if (strchr(soname, '/'))
        return snprintf(out, PATH_MAX, "%s", soname) < PATH_MAX && readable(out, p);
    const char *const sonames[] = {soname, NULL};
    struct found f = {out, p};
    lz_linker_hooks h = {take_readable, NULL, NULL, &f};
    lz_linker_asker a;
    asker_of(c, i, &a);
    int found = lz_linker_lookup_asker(sonames, &a, &h);
    asker_free(&a);
    return found;
}

/* The closure of the target, breadth first, one object per soname (the
 * first found wins, as in one process). */
static void follow(check_closure *c, FILE *f)
{
    for (int i = 0; i < c->n; i++) {
        for (size_t k = 0; k < c->o[i].p.elf.nneeded; k++) {
            const char *so = c->o[i].p.elf.needed[k];
            int seen = 0;
            for (int j = 0; j < c->n && !seen; j++) {
                const char *slash = strrchr(c->o[j].path, '/');
                seen = strcmp(c->o[j].p.elf.soname, so) == 0 ||
                       strcmp(slash ? slash + 1 : c->o[j].path, so) == 0;
            }
            if (seen)
                continue;
            if (c->n == CHECK_MAX_OBJECTS) {
                if (!c->capped++)
                    fprintf(f, "  more than %d objects: the rest of the closure is not read, and "
                            "what they need is not checked\n", CHECK_MAX_OBJECTS);
                continue;
            }
            char *out = malloc(PATH_MAX);
            check_obj *o = &c->o[c->n];
            if (out && resolve(c, i, so, out, &o->p)) {
                o->path = out;
                o->loader = i;
                c->n++;
            } else {
                free(out);
                lz_probe_free(&o->p); /* a file of another machine, last tried */
                /* glibc's own objects are always there; anything else missing is said */
                fprintf(f, "  %s, needed by %s: not found (the dynamic linker would stop)\n", so,
                        c->o[i].path);
                c->missing++;
            }
        }
    }
}

/* The judge's verdicts that kept a candidate (it lacks a name, or is of
 * another release): the file finally chosen is a problem when it is one. */
#define CHECK_MAX_KEPT 16
typedef struct check_seen {
    int nkept;
    char path[CHECK_MAX_KEPT][PATH_MAX];
    char reason[CHECK_MAX_KEPT][1024];
} check_seen;

static void on_event(void *ctx, const lz_event *ev)
{
    check_seen *s = ctx;
    if (ev->kind != LZ_EVENT_VERDICT || ev->verdict != LZ_KEPT || s->nkept == CHECK_MAX_KEPT)
        return;
    snprintf(s->path[s->nkept], PATH_MAX, "%s", ev->path);
    snprintf(s->reason[s->nkept], 1024, "%s", ev->reason ? ev->reason : "");
    s->nkept++;
}

/* The names marked that the file does not export (a versioned one served
 * by an older version of its major, and one any copy serves,
 * lz_sym_any_copy, are not missing), ", "-separated in out; and the first one's importer. */
static int missing_names(const lz_lib *lib, const unsigned char *marks, const char *path,
                         const check_closure *c, char *out, size_t size)
{
    lz_probe p;
    size_t len = 0;
    int n = 0;
    out[0] = '\0';
    if (lz_probe_read(path, &p) != LZ_PROBE_OK)
        return 0;
    for (size_t j = 0; j < lib->nsyms; j++) {
        const lz_sym *s = &lib->syms[j];
        if (!marks[j] || lz_probe_exports(&p, lz_sym_name(lib, s)) || lz_sym_any_copy(lib, j))
            continue;
        int older = 0;
        for (size_t k = 0; s->family && s->major >= 0 && k < lib->nsyms && !older; k++)
            older = lib->syms[k].family == s->family && lib->syms[k].major == s->major &&
                    lib->syms[k].minor < s->minor && lz_probe_exports(&p, lz_sym_name(lib, &lib->syms[k]));
        if (older)
            continue;
        const char *by = "";
        for (int i = 0; i < c->n && !*by; i++)
            for (size_t k = 0; k < c->o[i].p.elf.nimports && !*by; k++)
                if (strcmp(c->o[i].p.elf.imports[k], lz_sym_name(lib, s)) == 0)
                    by = c->o[i].path;
        int w = snprintf(out + len, size - len, "%s%s (imported by %s)", n ? ", " : "",
                         lz_sym_name(lib, s), by);
        if (w > 0 && len + (size_t)w < size)
            len += (size_t)w;
        n++;
    }
    lz_probe_free(&p);
    return n;
}

/* One family: 1 when it would load and serve every name. */
static int check_family(FILE *f, const lz_lib *lib, const check_closure *c, int named,
                        char *chosen, size_t chosen_size)
{
    char shim_soname[128];
    snprintf(shim_soname, sizeof shim_soname, "lib%s.so.0", lib->shim);
    unsigned char *marks = calloc(lib->nsyms ? lib->nsyms : 1, 1);
    int names = 0, via_shim = -1, direct = -1;
    for (int i = 0; marks && i < c->n; i++) {
        const lz_elffile *d = &c->o[i].p.elf;
        int shim = 0, real = 0;
        for (size_t k = 0; k < d->nneeded; k++) {
            shim |= strcmp(d->needed[k], shim_soname) == 0;
            for (const char *const *s = lib->sonames; *s; s++)
                real |= strcmp(d->needed[k], *s) == 0;
        }
        if (!shim && !real)
            continue;
        if (shim && via_shim < 0)
            via_shim = i;
        if (real && direct < 0)
            direct = i;
        for (size_t k = 0; k < d->nimports; k++)
            for (size_t j = 0; j < lib->nsyms; j++)
                if (!marks[j] && strcmp(d->imports[k], lz_sym_name(lib, &lib->syms[j])) == 0) {
                    marks[j] = 1;
                    names++;
                }
    }
    /* The names the environment requires (a static shim's calls are the
     * program's own: nothing imports them). */
    const char *env = lib->require_env ? lz_getenv(lib->require_env) : NULL;
    int required = 0;
    for (const char *e = env; marks && e && *e;) {
        size_t len = strcspn(e, ", ");
        for (size_t j = 0; len && j < lib->nsyms; j++) {
            const char *nm = lz_sym_name(lib, &lib->syms[j]);
            if (strlen(nm) == len && strncmp(nm, e, len) == 0 && !marks[j]) {
                marks[j] = 1;
                names++;
                required++;
            }
        }
        e += len;
        e += strspn(e, ", ");
    }
    if (via_shim < 0 && direct < 0 && !required) {
        if (named)
            fprintf(f, "%s: not needed: nothing in the closure needs %s or its shim, and %s names "
                    "nothing\n", lib->display, lib->sonames[0], lib->require_env);
        free(marks);
        return 1; /* the target does not need it */
    }
    /* The file the dynamic linker maps for the soname, where an object
     * needs the library itself. */
    char marker[160];
    lz_shim_marker(lib->shim, marker, sizeof marker);
    const char *linked = NULL, *shim_at = NULL;
    for (int i = 0; i < c->n; i++) {
        int is_shim = lz_probe_exports(&c->o[i].p, marker);
        if (is_shim && !shim_at)
            shim_at = c->o[i].path; /* a shim, or a drop-in on LD_LIBRARY_PATH: its search */
        for (const char *const *s = lib->sonames; *s && !linked && !is_shim && direct >= 0; s++)
            if (strcmp(c->o[i].p.elf.soname, *s) == 0)
                linked = c->o[i].path;
    }
    if (shim_at && via_shim < 0)
        via_shim = direct;
    const char *override = lz_getenv(lib->env_var);
    static check_seen seen;
    seen.nkept = 0;
    lz_request req = {.wanted = marks, .origin = shim_at, .on_event = on_event, .ctx = &seen};
    /* The shim's linker step, for the object that needs the shim. */
    lz_linker_asker asker;
    int asked = via_shim >= 0;
    if (asked) {
        asker_of(c, via_shim, &asker);
        req.asker = &asker;
    }
    int from_linker = via_shim < 0 && direct >= 0 && !(override && *override);
    if (from_linker) {
        if (!linked) {
            fprintf(f, "%s: problem: %s needs %s, which the dynamic linker does not find\n",
                    lib->display, c->o[direct].path, lib->sonames[0]);
            free(marks);
            return 0;
        }
        req.chosen = linked;
        req.chosen_step = LZ_STEP_LINKER;
    }
    static lz_result res;
    static char report[LZ_MESSAGE_MAX];
    int found = lz_inspect_search(lib, &req, &res, report, sizeof report);
    if (asked)
        asker_free(&asker);
    const char *how = from_linker ? "the dynamic linker's choice, which a drop-in under "
                                    "lazynccl-run keeps"
                                  : via_shim >= 0 ? "the shim's search"
                                  : override && *override ? "its override" : "its search";
    const char *kept = NULL;
    for (int k = 0; found && k < seen.nkept && !kept; k++)
        if (strcmp(seen.path[k], res.path) == 0)
            kept = seen.reason[k];
    static char lacks[LZ_MESSAGE_MAX];
    int nlacks = found ? missing_names(lib, marks, res.path, c, lacks, sizeof lacks) : 0;
    int ok = found && !kept && !nlacks;
    if (!found)
        fprintf(f, "%s: problem: nothing would load (%s)\n%s", lib->display, how, report);
    else if (nlacks)
        fprintf(f, "%s: problem: %s (%s) lacks %d of the %d functions the target needs: %s\n",
                lib->display, res.path, how, nlacks, names, lacks);
    else if (kept)
        fprintf(f, "%s: problem: %s (%s): %s\n", lib->display, res.path, how, kept);
    else if (names)
        fprintf(f, "%s: ok: %s (%s%s%s) exports all %d function%s the target needs\n",
                lib->display, res.path, how, from_linker ? "" : ", step ",
                from_linker ? "" : res.chosen.step, names, names == 1 ? "" : "s");
    else
        fprintf(f, "%s: ok: %s (%s%s%s); the target needs it and imports none of its "
                "functions\n", lib->display, res.path, how, from_linker ? "" : ", step ",
                from_linker ? "" : res.chosen.step);
    if (found)
        snprintf(chosen, chosen_size, "%s", res.path);
    free(marks);
    return ok;
}

/* A pair of files not of one release (info_release_mismatches). */
struct release_out {
    FILE *f;
    const lz_lib *const *libs;
    int strict;
};

static void print_mismatch(void *ctx, int i, int j, int policy, const char *text)
{
    (void)j;
    struct release_out *o = ctx;
    fprintf(o->f, "%s: %s: %s\n", o->libs[i]->display,
            policy == LZ_RELEASE_STRICT ? "problem" : "warning", text);
    o->strict += policy == LZ_RELEASE_STRICT;
}

int check_target(FILE *f, const char *target, const lz_lib *const *libs, int named)
{
    static check_closure c;
    memset(&c, 0, sizeof c);
    if (!readable(target, &c.o[0].p)) {
        lz_probe p;
        int rc = lz_probe_read(target, &p);
        fprintf(stderr, "lazynccl-info: --check %s: %s%s\n", target,
                rc == LZ_PROBE_OK ? "not an object of this machine" : p.reason,
                rc != LZ_PROBE_OK && strstr(p.reason, "ELF type 2")
                    ? " (a program linked without -pie: --check reads position-independent "
                      "programs and shared libraries)" : "");
        if (rc == LZ_PROBE_OK)
            lz_probe_free(&p);
        return 2;
    }
    if (!(c.o[0].path = strdup(target))) {
        lz_probe_free(&c.o[0].p);
        fprintf(stderr, "lazynccl-info: --check %s: out of memory\n", target);
        return 2;
    }
    c.o[0].loader = -1;
    c.n = 1;
    fprintf(f, "check: %s\n", target);
    follow(&c, f);
    fprintf(f, "  %d objects in its closure\n", c.n);
    int problems = c.missing, n = 0;
    static char chosen[64][PATH_MAX];
    for (const lz_lib *const *l = libs; *l && n < 64; l++, n++) {
        chosen[n][0] = '\0';
        problems += !check_family(f, *l, &c, named, chosen[n], PATH_MAX);
    }
    const char *names[64];
    for (int i = 0; i < n; i++)
        names[i] = chosen[i];
    struct release_out out = {f, libs, 0};
    info_release_mismatches(libs, names, n, print_mismatch, &out);
    problems += out.strict;
    fprintf(f, "verdict: %s\n", problems ? "problems found" : "ok");
    for (int i = 0; i < c.n; i++) {
        free(c.o[i].path);
        lz_probe_free(&c.o[i].p);
    }
    return problems ? 1 : 0;
}
