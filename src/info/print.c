/* SPDX-License-Identifier: MIT
 * lazynccl-info output: aligned text for people, JSON for tools
 * (schema in docs/reference/lazynccl-info.md). */
#include "info.h"
#include "base/lz_env.h"
#include "json.h"

#include <string.h>

#define GREEN "\033[32m"
#define RED "\033[31m"
#define YELLOW "\033[33m"
#define BOLD "\033[1m"
#define RESET "\033[0m"

static const char *paint(int color, const char *code)
{
    return color ? code : "";
}

#define COLUMNS 80

/* Print text from the current column (indent), wrapping at spaces so lines
 * stay within 80 columns; a word longer than a line (a path) stands alone. */
static void wrapped_rest(FILE *f, int indent, const char *text)
{
    int col = indent;
    while (*text) {
        size_t word = strcspn(text, " ");
        if (col > indent && col + 1 + (int)word > COLUMNS) {
            fprintf(f, "\n%*s", indent, "");
            col = indent;
        } else if (col > indent) {
            fputc(' ', f);
            col++;
        }
        fprintf(f, "%.*s", (int)word, text);
        col += (int)word;
        text += word;
        while (*text == ' ')
            text++;
    }
    fputc('\n', f);
}

static void wrapped(FILE *f, int indent, const char *text)
{
    fprintf(f, "%*s", indent, "");
    wrapped_rest(f, indent, text);
}

static const char *verdict_color(int verdict)
{
    return verdict == LZ_CHOSEN ? GREEN : verdict == LZ_REJECTED ? RED : "";
}

/* One finding of --doctor: its status, its message, and its fix. */
static void print_finding(FILE *f, const doctor_finding *x, int color)
{
    const char *c = strcmp(x->status, "problem") == 0 ? RED
                    : strcmp(x->status, "warning") == 0 ? YELLOW : GREEN;
    fprintf(f, "  %s%-8s%s ", paint(color, c), x->status, paint(color, RESET));
    wrapped_rest(f, 11, x->message);
    if (x->fix[0]) {
        fprintf(f, "  %-8s ", "fix:");
        wrapped_rest(f, 11, x->fix);
    }
}

/* The release policy every shim applies (docs/reference/search-order.md, "Released
 * together"), as the first library's spec names its variable. */
static const char *policy_line(const info_lib *libs, int nlibs, char *out, size_t size)
{
    const lz_lib *lib = nlibs ? libs[0].lib : NULL;
    if (!lib || !lib->release_env)
        return NULL;
    int bad;
    int p = lz_release_policy(lib, &bad);
    const char *v = lz_getenv(lib->release_env);
    snprintf(out, size, "%s (%s%s%s%s)", lz_release_policy_name(p), lib->release_env,
             v && *v ? "=" : " unset", v && *v ? v : "", bad ? ", not a policy: best_effort" : "");
    return out;
}

/* --doctor's lead: one line per library, one per finding that is not ok. */
static int print_verdicts(FILE *f, const info_lib *libs, int nlibs, const doctor_report *d,
                          int verbose, int color)
{
    int problems = 0, passed = 0;
    for (int l = 0; l < nlibs; l++)
        problems += !libs[l].would_load && libs[l].lib->must_load;
    for (int i = 0; d && i < d->n; i++)
        problems += strcmp(d->f[i].status, "problem") == 0;
    fprintf(f, "%sdoctor%s: %s%s%s\n", paint(color, BOLD), paint(color, RESET),
            paint(color, problems ? RED : GREEN), problems ? "problems found" : "ok",
            paint(color, RESET));
    for (int l = 0; l < nlibs; l++) {
        const info_lib *li = &libs[l];
        const char *st = li->would_load ? "ok" : li->lib->must_load ? "problem" : "absent";
        fprintf(f, "  %s%-8s%s %-18s %s%s%s",
                paint(color, li->would_load ? GREEN : li->lib->must_load ? RED : YELLOW), st,
                paint(color, RESET), li->lib->display, li->would_load ? li->chosen : "nothing would load",
                li->would_load ? " (found by: " : li->lib->must_load ? "" : " (not required)",
                li->would_load ? li->chosen_step : "");
        if (li->would_load)
            fputs(")", f);
        fputs("\n", f);
    }
    for (int i = 0; d && i < d->n; i++) {
        const doctor_finding *x = &d->f[i];
        if (strcmp(x->status, "ok") == 0) {
            passed++;
            continue;
        }
        print_finding(f, x, color);
    }
    char policy[256];
    if (policy_line(libs, nlibs, policy, sizeof policy))
        fprintf(f, "  release policy: %s\n", policy);
    fprintf(f, "  %d other check%s passed%s\n", passed, passed == 1 ? "" : "s",
            verbose ? "" : "; all of them: --doctor --verbose");
    return problems;
}

/* Why nothing would load, in one line: the first candidate's reason,
 * then the report's own remark ("LAZYNCCL_LIBPATH is set, so nothing else
 * was tried"; not its headings), else that no step had a candidate. */
static void why_nothing(const info_lib *li, char *out, size_t size)
{
    size_t n = 0;
    out[0] = '\0';
    for (int i = 0; i < li->ncands && !n; i++)
        if (li->cands[i].reason[0])
            n = (size_t)snprintf(out, size, "%s %s: %s", li->cands[i].step, li->cands[i].path,
                                 li->cands[i].reason);
    for (const char *line = strchr(li->report, '\n'); line && line[1]; line = strchr(line + 1, '\n')) {
        int len = (int)strcspn(line + 1, "\n");
        /* Candidates ("  [step] ...") and places ("    [step] ...") are not remarks. */
        if (len < 3 || line[3] == '[' || line[3] == ' ' || line[len] == ':')
            continue;
        if (n < size)
            snprintf(out + n, size - n, n ? " (%.*s)" : "%.*s", len - 2, line + 3);
        return;
    }
    if (!n)
        snprintf(out, size, "no candidate found in any step");
}

/* The first line of a failed load's report that names a file, else its first. */
static int first_reason(const char *report, const char **start)
{
    const char *line = strstr(report, "\n  [");
    *start = line ? line + 3 : report;
    return (int)strcspn(*start, "\n");
}

/* The short view: a line per library, what would load and the step that
 * found it, or why nothing would. */
static void print_short(FILE *f, const info_lib *libs, int nlibs, int color)
{
    int width = 0;
    for (int l = 0; l < nlibs; l++)
        if ((int)strlen(libs[l].lib->display) > width)
            width = (int)strlen(libs[l].lib->display);
    for (int l = 0; l < nlibs; l++) {
        const info_lib *li = &libs[l];
        fprintf(f, "%s%-*s%s  ", paint(color, BOLD), width, li->lib->display, paint(color, RESET));
        if (li->would_load)
            fprintf(f, "%s%s%s (%s)", paint(color, GREEN), li->chosen, paint(color, RESET), li->chosen_step);
        else {
            char why[600];
            why_nothing(li, why, sizeof why);
            fprintf(f, "%snothing%s: %s%s", paint(color, li->lib->must_load ? RED : YELLOW),
                    paint(color, RESET), why, li->lib->must_load ? "" : " (not required)");
        }
        if (li->loaded)
            fprintf(f, "; loaded, version %s", li->loaded_version);
        else if (li->load_error[0] && li->would_load) {
            const char *start;
            int len = first_reason(li->load_error, &start);
            fprintf(f, "; load failed: %.*s", len, start);
        }
        fputs("\n", f);
    }
    char policy[256];
    if (policy_line(libs, nlibs, policy, sizeof policy))
        fprintf(f, "release policy: %s\n", policy);
    fputs("every candidate and its verdict: --verbose\n", f);
}

void print_text(FILE *f, info_lib *libs, int nlibs, const doctor_report *d, int verbose, int color)
{
    if (d) {
        print_verdicts(f, libs, nlibs, d, verbose, color);
        if (!verbose)
            return;
        fputs("\n", f);
    } else if (!verbose) {
        print_short(f, libs, nlibs, color);
        return;
    }
    for (int l = 0; l < nlibs; l++) {
        info_lib *li = &libs[l];
        const lz_lib *lib = li->lib;
        fprintf(f, "%s%s%s (lib%s, ", paint(color, BOLD), lib->display, paint(color, RESET),
                lib->shim);
        for (const char *const *s = lib->sonames; *s; s++)
            fprintf(f, "%s%s", s == lib->sonames ? "" : ", ", *s);
        fprintf(f, ")\n");
        if (li->would_load)
            fprintf(f, "  would load: %s%s%s\n  found by:   %s\n", paint(color, GREEN), li->chosen,
                    paint(color, RESET), li->chosen_step);
        else {
            fprintf(f, "  would load: %snothing%s\n", paint(color, RED), paint(color, RESET));
            /* The report's own remarks ("... so nothing else was tried"). */
            for (const char *line = strchr(li->report, '\n'); line && line[1]; line = strchr(line + 1, '\n'))
                if (strncmp(line + 1, "  [", 3) != 0)
                    fprintf(f, "  %.*s\n", (int)strcspn(line + 3, "\n"), line + 3);
        }
        if (li->loaded)
            fprintf(f, "  loaded:     %s (%s), version %s\n", li->loaded_path, li->loaded_step,
                    li->loaded_version);
        else if (li->load_error[0])
            fprintf(f, "  load:       failed\n%s", li->load_error); /* the report's own lines */
        if (li->ncands == 0) {
            fprintf(f, "  no candidate found in any step\n\n");
            continue;
        }
        fprintf(f, "\n    %-20s %-12s %s\n", "step", "verdict", "candidate");
        for (int i = 0; i < li->ncands; i++) {
            info_candidate *c = &li->cands[i];
            fprintf(f, "  %s %-20s %s%-12s%s %s\n", c->verdict == LZ_CHOSEN ? "*" : " ", c->step,
                    paint(color, verdict_color(c->verdict)), info_verdicts[c->verdict],
                    paint(color, RESET), c->path[0] ? c->path : "(empty entry)");
            char facts[512] = "";
            size_t n = 0;
            if (c->soname[0])
                n += (size_t)snprintf(facts + n, sizeof facts - n, "SONAME %s", c->soname);
            if (c->machine[0] && n < sizeof facts)
                n += (size_t)snprintf(facts + n, sizeof facts - n, "%s%s", n ? ", " : "", c->machine);
            if (c->version[0] && n < sizeof facts)
                snprintf(facts + n, sizeof facts - n, "%sversion %s (%s)", n ? ", " : "", c->version,
                         c->version_from);
            if (facts[0])
                wrapped(f, 8, facts);
            if (c->reason[0])
                wrapped(f, 8, c->reason);
        }
        if (li->dropped)
            fprintf(f, "    (%d more candidates not shown: the tool keeps the first %d)\n",
                    li->dropped, INFO_MAX_CANDIDATES);
        fprintf(f, "\n");
    }
    char policy[256];
    if (!d && policy_line(libs, nlibs, policy, sizeof policy))
        fprintf(f, "release policy: %s\n", policy);
    if (!d || !verbose)
        return;
    fprintf(f, "%sdoctor's checks%s\n", paint(color, BOLD), paint(color, RESET));
    for (int i = 0; i < d->n; i++) {
        const doctor_finding *x = &d->f[i];
        print_finding(f, x, color);
    }
}

static const char *nonempty(const char *s)
{
    return s && *s ? s : NULL;
}

/* "key": value, after a comma unless first (value: a JSON string, or null). */
static void field(FILE *f, int first, const char *key, const char *value)
{
    fprintf(f, "%s\"%s\": ", first ? "" : ", ", key);
    info_json_string(f, value);
}

/* {"path": ..., "step": ...[, "version": ...]}, or null when absent. */
static void place(FILE *f, const char *key, int present, const char *path, const char *step,
                  const char *version)
{
    fprintf(f, ", \"%s\": ", key);
    if (!present) {
        fputs("null", f);
        return;
    }
    fputc('{', f);
    field(f, 1, "path", path);
    field(f, 0, "step", step);
    if (version)
        field(f, 0, "version", version);
    fputc('}', f);
}

void print_json(FILE *f, info_lib *libs, int nlibs, const char *const *unknown, int nunknown,
                const doctor_report *d)
{
    fputs("{\"schema\": \"lazynccl-info/2\", \"libraries\": [", f);
    for (int l = 0; l < nlibs; l++) {
        info_lib *li = &libs[l];
        const lz_lib *lib = li->lib;
        fputs(l ? ",\n  {" : "\n  {", f);
        field(f, 1, "id", lib->id);
        field(f, 0, "name", lib->display);
        field(f, 0, "shim", lib->shim);
        fputs(", \"sonames\": [", f);
        for (const char *const *s = lib->sonames; *s; s++) {
            fputs(s == lib->sonames ? "" : ", ", f);
            info_json_string(f, *s);
        }
        fprintf(f, "], \"served\": %s, \"would_load\": %s", li->served ? "true" : "false",
                li->would_load ? "true" : "false");
        place(f, "chosen", li->would_load, li->chosen, li->chosen_step, NULL);
        place(f, "loaded", li->loaded, li->loaded_path, li->loaded_step, li->loaded_version);
        field(f, 0, "error", li->would_load ? nonempty(li->load_error) : li->report);
        fputs(",\n   \"candidates\": [", f);
        for (int i = 0; i < li->ncands; i++) {
            info_candidate *c = &li->cands[i];
            fputs(i ? ",\n    {" : "\n    {", f);
            field(f, 1, "step", c->step);
            field(f, 0, "path", c->path);
            field(f, 0, "verdict", info_verdicts[c->verdict]);
            field(f, 0, "reason", nonempty(c->reason));
            field(f, 0, "soname", nonempty(c->soname));
            field(f, 0, "machine", nonempty(c->machine));
            field(f, 0, "version", nonempty(c->version));
            field(f, 0, "version_from", c->version[0] ? c->version_from : NULL);
            fputc('}', f);
        }
        fprintf(f, "],\n   \"candidates_not_shown\": %d}", li->dropped);
    }
    fputs("],\n ", f);
    field(f, 1, "release_policy", nlibs ? lz_release_policy_name(lz_release_policy(libs[0].lib, NULL))
                                        : NULL);
    fputs(",\n \"not_served\": [", f);
    for (int i = 0; i < nunknown; i++) {
        fputs(i ? ", " : "", f);
        info_json_string(f, unknown[i]);
    }
    fputc(']', f);
    if (d) {
        fputs(",\n \"doctor\": [", f);
        for (int i = 0; i < d->n; i++) {
            fputs(i ? ",\n  {" : "\n  {", f);
            field(f, 1, "check", d->f[i].check);
            field(f, 0, "status", d->f[i].status);
            field(f, 0, "message", d->f[i].message);
            field(f, 0, "fix", nonempty(d->f[i].fix));
            fputc('}', f);
        }
        fputc(']', f);
    }
    fputs("}\n", f);
}
