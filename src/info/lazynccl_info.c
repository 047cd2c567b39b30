/* SPDX-License-Identifier: MIT
 * lazynccl-info: what would load, from where, and why not, without loading
 * anything (unless --load). Uses the runtime's own search (linked from the
 * static shims), so it cannot disagree with the shims. */
#include "info.h"
#include "search/lz_order.h"
#include "textout.h"

#include <stdlib.h>
#include <errno.h>
#include <string.h>
#include <unistd.h>

/* Every library built, and those this installation serves (its installed
 * shims and drop-ins; generated from the specs: lz_registry.c). */
extern const lz_lib *const lz_registry[];
extern const lz_lib *const lz_served[];

static const char usage[] =
    "usage: lazynccl-info [OPTIONS] [LIBRARY|all]...\n"
    "\n"
    "Shows, for each library, the file the lazynccl shims would load and the\n"
    "search step that found it, or why none would, a line each; --verbose\n"
    "adds every candidate file with its SONAME, machine and version, and the\n"
    "verdict (chosen / rejected / kept / not reached) with its reason. Nothing\n"
    "is loaded and no library constructor runs, unless --load is given.\n"
    "\n"
    "  --load         also load each library (as a first call would) and ask\n"
    "                 its version function\n"
    "  --json         one JSON document (schema lazynccl-info/2, see\n"
    "                 docs/reference/lazynccl-info.md)\n"
    "  --doctor       check the environment (each check named in --json's output):\n"
    "                 nccl-net (NCCL_NET's transport can be had), nccl-net-plugin\n"
    "                 (NCCL_NET_PLUGIN loads and exports a net API), shadowing\n"
    "                 (LD_LIBRARY_PATH hides a wheel's library), copies (several\n"
    "                 files of one library), audit (lazynccl-run's environment\n"
    "                 reached this process), static-tls (what a process whose\n"
    "                 libraries need static TLS does here), release (libraries\n"
    "                 released together would load of one release), wrapper\n"
    "                 (lazynccl-run's environment did not reach this process)\n"
    "  --verbose      each library's candidates and their verdicts; with\n"
    "                 --doctor, every check that applies too, passed ones\n"
    "                 included; with --reports: every library\n"
    "  --from PATH    search wheels as a shim at PATH would (e.g. the .so\n"
    "                 vendored in site-packages/<pkg>/)\n"
    "  --check FILE   a job's pre-flight: for the program or library FILE and\n"
    "                 the libraries it needs (found as the dynamic linker\n"
    "                 would), which file each library served would load and\n"
    "                 whether it exports every function they import from it;\n"
    "                 nothing is loaded. Exit status 1 when one would fail;\n"
    "                 given again, each FILE in turn\n"
    "  --cache FILE   a job's resolution cache (lazynccl-run --cache), each entry\n"
    "                 checked against the filesystem as it is now. Exit status 1\n"
    "                 when one would give another file than the dynamic linker,\n"
    "                 2 when it cannot be read or is refused\n"
    "  --reports DIR  a job's load reports (lazynccl-run --report): whether every\n"
    "                 process loaded the same file of each library, the outliers\n"
    "                 named (--verbose: every library). Exit status 1 when not\n"
    "  --steps        the search order's steps, in the order they run, as a\n"
    "                 Markdown table (docs/reference/search-order.md holds the same)\n"
    "  --help         this text\n"
    "\n"
    "Libraries: by default those this installation serves; 'all' adds those\n"
    "built for its tests. Exit status: 0 when every library named would load\n"
    "(named none: every required family, marked * below; the others are\n"
    "shown with the reason they would not load, not counted) and --doctor\n"
    "found no problem; 1 otherwise, a library it has no shim for included;\n"
    "2 for a usage error.\n"
    "\n"
    "Served:";

static const lz_lib *by_name(const char *name)
{
    for (const lz_lib *const *l = lz_registry; *l; l++)
        if (strcmp((*l)->id, name) == 0)
            return *l;
    return NULL;
}

static int served(const lz_lib *lib)
{
    for (const lz_lib *const *l = lz_served; *l; l++)
        if (*l == lib)
            return 1;
    return 0;
}

/* " nccl nvjitlink ...": the ids this installation serves; mark: the
 * required families with '*'. */
static void print_served(FILE *f, int mark)
{
    for (const lz_lib *const *l = lz_served; *l; l++)
        fprintf(f, " %s%s", (*l)->id, mark && (*l)->must_load ? "*" : "");
}

static void print_usage(FILE *f)
{
    fputs(usage, f);
    print_served(f, 1);
    int others = 0;
    for (const lz_lib *const *l = lz_registry; *l; l++)
        if (!served(*l))
            fprintf(f, "%s %s", others++ ? "" : "\nBuilt for the tests only:", (*l)->id);
    fputs("\n", f);
}

/* --load: load as a first call would, then ask the library's own version
 * (the spec's version_function, through the shim). */
static void load(info_lib *li)
{
    const lz_lib *lib = li->lib;
    int ok = lz_api_load(lib) == 0;
    if (ok && lib->version)
        ok = lib->version(li->loaded_version, sizeof li->loaded_version) == 0;
    else if (ok) /* the spec names none: said, not left empty */
        snprintf(li->loaded_version, sizeof li->loaded_version, "unknown (no version function)");
    li->loaded = ok && lz_inspect_loaded(lib, li->loaded_path, sizeof li->loaded_path,
                                         li->loaded_step, sizeof li->loaded_step);
    if (!li->loaded) {
        const char *e = lz_api_last_error(lib);
        snprintf(li->load_error, sizeof li->load_error, "%s", e ? e : "version call failed\n");
    }
}

/* --steps: the runtime's own table of steps (lz_order.c), one row each. */
static void step_row(void *ctx, int number, const char *name, const char *what)
{
    fprintf(ctx, "| %d | `%s` | %s |\n", number, name, what);
}

static void print_steps(FILE *f)
{
    fputs("| # | step | what it tries |\n| --- | --- | --- |\n", f);
    lz_order_each(step_row, f);
}

/* The real standard streams while the filtered ones stand for them. */
static FILE *real_stdout, *real_stderr;

/* Text views (all but --json) write through the filter that shows control
 * bytes as \xNN (textout.h); standard error always does. Where a filter
 * cannot be made, the stream is used as it is. */
static void filter_output(int json)
{
    FILE *err = info_text_stream(stderr, 0);
    if (err) {
        setvbuf(err, NULL, _IOLBF, 0);
        real_stderr = stderr;
        stderr = err;
    }
    FILE *out = json ? NULL : info_text_stream(stdout, isatty(STDOUT_FILENO) && !getenv("NO_COLOR"));
    if (out) {
        real_stdout = stdout;
        stdout = out;
    }
}

/* The real streams back (the tool also runs inside a Python process,
 * through ctypes); the filters' close writes what they held back. 0, or
 * -1 where standard output could not be written. */
static int unfilter_output(void)
{
    int rc = 0;
    if (real_stdout) {
        rc = fclose(stdout) != 0 ? -1 : 0;
        stdout = real_stdout;
        real_stdout = NULL;
    }
    if (real_stderr) {
        fclose(stderr);
        stderr = real_stderr;
        real_stderr = NULL;
    }
    return rc;
}

/* The status, or 2 where the output could not be written. */
static int finish(int status)
{
    if (fflush(stdout) != 0 || ferror(stdout) ||
        (real_stdout && (fflush(real_stdout) != 0 || ferror(real_stdout)))) {
        fprintf(stderr, "lazynccl-info: cannot write the output: %s\n", strerror(errno));
        return 2;
    }
    return status;
}

static int run(int argc, char **argv, int json)

{
    int doctor = 0, do_load = 0, verbose = 0, nlibs = 0;
    const char *origin = NULL, *cache = NULL, *reports = NULL;
    enum { MAX_LIBS = 32 };
    const char *checks[MAX_LIBS];
    int nchecks = 0;
    const lz_lib *want[MAX_LIBS];
    const char *unknown[MAX_LIBS];
    int nunknown = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--json") == 0)
            continue; /* read by main */
        else if (strcmp(a, "--doctor") == 0)
            doctor = 1;
        else if (strcmp(a, "--load") == 0)
            do_load = 1;
        else if (strcmp(a, "--verbose") == 0 || strcmp(a, "-v") == 0)
            verbose = 1;
        else if (strcmp(a, "--from") == 0 && i + 1 < argc)
            origin = argv[++i];
        else if (strcmp(a, "--from") == 0) {
            fprintf(stderr, "lazynccl-info: --from needs a PATH: where a shim would be (its .so)\n");
            return 2;
        } else if (strcmp(a, "--check") == 0 && i + 1 < argc && nchecks < MAX_LIBS)
            checks[nchecks++] = argv[++i];
        else if (strcmp(a, "--check") == 0 && i + 1 < argc) {
            fprintf(stderr, "lazynccl-info: at most %d --check FILEs at once\n", MAX_LIBS);
            return 2;
        } else if (strcmp(a, "--check") == 0) {
            fprintf(stderr, "lazynccl-info: --check needs a FILE: the program or library to check\n");
            return 2;
        }
        else if ((strcmp(a, "--cache") == 0 || strcmp(a, "--reports") == 0) && i + 1 < argc)
            *(a[2] == 'c' ? &cache : &reports) = argv[++i];
        else if (strcmp(a, "--cache") == 0 || strcmp(a, "--reports") == 0) {
            fprintf(stderr, "lazynccl-info: %s needs a %s\n", a, a[2] == 'c' ? "FILE" : "DIR");
            return 2;
        }
        else if (strcmp(a, "--steps") == 0 && argc == 2) {
            print_steps(stdout);
            return finish(0);
        } else if (strcmp(a, "--steps") == 0) {
            fprintf(stderr, "lazynccl-info: --steps goes alone\n");
            return 2;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            print_usage(stdout);
            return finish(0);
        } else if (strcmp(a, "all") == 0) {
            nlibs = 0;
            for (const lz_lib *const *l = lz_registry; *l && nlibs < MAX_LIBS; l++)
                want[nlibs++] = *l;
        } else if (by_name(a) && nlibs < MAX_LIBS) {
            int dup = 0;
            for (int k = 0; k < nlibs; k++)
                dup |= want[k] == by_name(a);
            if (!dup)
                want[nlibs++] = by_name(a);
        } else if (a[0] != '-' && a[0] != '\0' && nunknown < MAX_LIBS) {
            unknown[nunknown++] = a; /* asked for, and not served: said below, status 1 */
        } else {
            fprintf(stderr, "lazynccl-info: unknown argument '%s'\n\n", a);
            print_usage(stderr);
            return 2;
        }
    }
    for (int i = 0; nchecks && i < nunknown; i++) {
        fprintf(stderr, "lazynccl-info: '%s': this installation has no shim for it (it serves:",
                unknown[i]);
        print_served(stderr, 0);
        fputs(")\n", stderr);
    }
    if ((cache || reports) && (nchecks || json || doctor || do_load || origin || nlibs || nunknown || (cache && reports))) {
        fprintf(stderr, "lazynccl-info: --cache and --reports go alone (--reports takes --verbose)\n");
        return 2;
    }
    if (cache)
        return finish(cache_show(stdout, cache));
    if (reports)
        return finish(reports_check(stdout, reports, verbose));
    if (nchecks && (json || doctor || do_load || origin)) {
        fprintf(stderr, "lazynccl-info: --check takes none of --json, --doctor, --load, --from\n");
        return 2;
    }
    if (nchecks) {
        const lz_lib *chosen[MAX_LIBS + 1];
        int n = 0;
        for (int i = 0; i < nlibs; i++)
            chosen[n++] = want[i];
        for (const lz_lib *const *l = lz_served; !nlibs && *l && n < MAX_LIBS; l++)
            chosen[n++] = *l;
        chosen[n] = NULL;
        /* Each FILE in turn; the worst status: 2 (one could not be read)
         * over 1 (a problem found) over 0. */
        int worst = nunknown ? 1 : 0;
        for (int i = 0; i < nchecks; i++) {
            int rc = check_target(stdout, checks[i], chosen, nlibs > 0);
            worst = rc > worst ? rc : worst;
        }
        return finish(worst);
    }
    /* Asked for nothing: every served library is shown, with the reason
     * for each that would not load, and only the required families (the
     * specs' must_load: NCCL, NVRTC, nvJitLink) decide the status. A
     * library named is counted either way. */
    int by_default = nlibs == 0 && nunknown == 0;
    if (by_default)
        for (const lz_lib *const *l = lz_served; *l && nlibs < MAX_LIBS; l++)
            want[nlibs++] = *l;
    static info_lib libs[MAX_LIBS];
    int status = nunknown > 0;
    for (int i = 0; i < nunknown; i++) {
        fprintf(stderr, "lazynccl-info: '%s': this installation has no shim for it (it serves:",
                unknown[i]);
        print_served(stderr, 0);
        fputs(")\n", stderr);
    }
    for (int i = 0; i < nlibs; i++) {
        info_inspect(&libs[i], want[i], origin);
        libs[i].served = served(want[i]);
        if (do_load)
            load(&libs[i]);
        if ((!libs[i].would_load || (do_load && !libs[i].loaded)) && (!by_default || want[i]->must_load))
            status = 1;
    }
    static doctor_report d;
    if (doctor) {
        doctor_run(&d, libs, nlibs);
        for (int i = 0; i < d.n; i++)
            if (strcmp(d.f[i].status, "problem") == 0)
                status = 1;
    }
    if (json)
        print_json(stdout, libs, nlibs, unknown, nunknown, doctor ? &d : NULL);
    else
        print_text(stdout, libs, nlibs, doctor ? &d : NULL, verbose,
                   real_stdout && isatty(STDOUT_FILENO) && !getenv("NO_COLOR"));
    return finish(status);
}

int main(int argc, char **argv)
{
    int json = 0;
    for (int i = 1; i < argc; i++)
        json |= strcmp(argv[i], "--json") == 0;
    filter_output(json);
    int status = run(argc, argv, json);
    if (unfilter_output() != 0 && status != 2) {
        fprintf(stderr, "lazynccl-info: cannot write the output: %s\n", strerror(errno));
        status = 2;
    }
    return status;
}
