/* SPDX-License-Identifier: MIT
 * Inspecting one library with the runtime's own search (no second
 * implementation): an exhaustive dry-run search that records every verdict. */
#include "info.h"

#include <stdlib.h>
#include <string.h>

const char *const info_verdicts[] = {"chosen", "rejected", "kept", "not reached"};

/* The version its real file's name carries beyond the soname
 * (libcublas.so.13 -> libcublas.so.13.0.2.14: 13.0.2.14), or 0. */
static int version_of_name(const char *path, const char *soname, char *out, size_t size)
{
    char *real = soname[0] ? realpath(path, NULL) : NULL;
    const char *base = real ? strrchr(real, '/') + 1 : NULL;
    const char *so = strstr(soname, ".so.");
    size_t n = strlen(soname);
    /* Dotted numbers only: libnccl.so.2.19.3, not a backup's .bak. */
    const char *v = base && strncmp(base, soname, n) == 0 && base[n] == '.' ? base + n + 1 : NULL;
    int ok = so && v && *v >= '0' && *v <= '9' && strspn(v, "0123456789.") == strlen(v) &&
             v[strlen(v) - 1] != '.' && !strstr(v, "..");
    if (ok)
        snprintf(out, size, "%s", base + (so - soname) + 4);
    free(real);
    return ok;
}

const char *info_version(const lz_lib *lib, const char *path, const lz_probe *p, char *out, size_t size)
{
    out[0] = '\0';
    if (lib->version_marker && lz_probe_rodata_string(path, lib->version_marker, out, size)) {
        size_t m = strlen(lib->version_marker);
        if (strncmp(out, lib->version_marker, m) == 0)
            memmove(out, out + m, strlen(out + m) + 1);
        return INFO_FROM_RODATA;
    }
    if (!p)
        return NULL;
    /* Versioned families: the newest version whose names the file exports. */
    const lz_sym *best = NULL;
    for (size_t i = 0; i < lib->nsyms; i++) {
        const lz_sym *s = &lib->syms[i];
        if (s->major < 0 || !lz_probe_exports(p, lz_sym_name(lib, s)))
            continue;
        if (!best || s->major > best->major || (s->major == best->major && s->minor > best->minor))
            best = s;
    }
    if (best) {
        snprintf(out, size, "%d.%d", best->major, best->minor);
        return INFO_FROM_NAMES;
    }
    return version_of_name(path, p->elf.soname, out, size) ? INFO_FROM_FILE_NAME : NULL;
}

static void on_event(void *ctx, const lz_event *ev)
{
    info_lib *out = ctx;
    if (ev->kind != LZ_EVENT_VERDICT)
        return; /* the report's lines and places: the tool says its own */
    if (out->ncands == INFO_MAX_CANDIDATES) {
        out->dropped++;
        return;
    }
    info_candidate *c = &out->cands[out->ncands++];
    memset(c, 0, sizeof *c);
    snprintf(c->step, sizeof c->step, "%s", ev->step);
    snprintf(c->path, sizeof c->path, "%s", ev->path);
    c->verdict = ev->verdict == LZ_SELF ? LZ_REJECTED : ev->verdict;
    snprintf(c->reason, sizeof c->reason, "%s", ev->reason);
    const lz_probe *p = ev->probe;
    lz_probe extra;
    int have_extra = 0;
    if (!p && ev->path[0] == '/') { /* e.g. a copy already loaded: read it too */
        have_extra = lz_probe_read(ev->path, &extra) == LZ_PROBE_OK;
        p = have_extra ? &extra : NULL;
    }
    if (p) {
        snprintf(c->soname, sizeof c->soname, "%s", p->elf.soname);
        if (p->elf.machine)
            snprintf(c->machine, sizeof c->machine, "%s", lz_machine_name(p->elf.machine));
        if (ev->verdict != LZ_REJECTED || p->elf.soname[0])
            c->version_from = info_version(out->lib, ev->path, p, c->version, sizeof c->version);
    }
    if (have_extra)
        lz_probe_free(&extra);
}

void info_inspect(info_lib *out, const lz_lib *lib, const char *origin)
{
    memset(out, 0, sizeof *out);
    out->lib = lib;
    lz_request req = {.exhaustive = 1, .origin = origin, .on_event = on_event, .ctx = out};
    static lz_result res;
    out->would_load = lz_inspect_search(lib, &req, &res, out->report, sizeof out->report);
    if (out->would_load) {
        snprintf(out->chosen, sizeof out->chosen, "%s", res.path);
        snprintf(out->chosen_step, sizeof out->chosen_step, "%s", res.chosen.step);
    }
}

static const char *first_number(const char *s)
{
    while (*s && !(s[0] >= '0' && s[0] <= '9'))
        s++;
    return s;
}

int info_version_cmp(const char *a, const char *b)
{
    a = first_number(a);
    b = first_number(b);
    while (*a || *b) {
        char *ea, *eb;
        long x = strtol(a, &ea, 10), y = strtol(b, &eb, 10);
        if (x != y)
            return x < y ? -1 : 1;
        if (*ea != '.' || *eb != '.')
            return (*ea == '.') - (*eb == '.');
        a = ea + 1;
        b = eb + 1;
    }
    return 0;
}

struct first_file {
    char *out;
    size_t size;
};

static int take_first(void *ctx, const char *step, const char *path)
{
    struct first_file *f = ctx;
    (void)step;
    snprintf(f->out, f->size, "%s", path);
    return 1;
}

int info_find_soname(const char *soname, char *out, size_t size)
{
    struct first_file f = {out, size};
    const char *const sonames[] = {soname, NULL};
    lz_linker_hooks h = {take_first, NULL, NULL, &f};
    return lz_linker_lookup(sonames, &h);
}
