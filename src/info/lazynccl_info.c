/* lazynccl-info: what would load, from where, and why not, without loading
 * anything (unless --load). Uses the runtime's own search (linked from the
 * static shims), so it cannot disagree with the shims. */
#include "info.h"

#include <lazynccl.h>
#include <nccl.h>
#define NVJITLINK_NO_INLINE
#include <nvJitLink.h>
#include <nvrtc.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern const lz_lib lz_lib_nccl, lz_lib_nvrtc, lz_lib_nvjitlink;

static const char usage[] =
    "usage: lazynccl-info [OPTIONS] [nccl|nvrtc|nvjitlink|all]...\n"
    "\n"
    "Shows, for each library, the search order of the lazynccl shims, every\n"
    "candidate file with its SONAME, machine and version, and the verdict\n"
    "(chosen / rejected / kept / not reached) with its reason. Nothing is\n"
    "loaded and no library constructor runs, unless --load is given.\n"
    "\n"
    "  --load         also load each library (as a first call would) and ask\n"
    "                 its version function\n"
    "  --json         one JSON document (schema lazynccl-info/1, see\n"
    "                 docs/lazynccl-info.md)\n"
    "  --doctor       check the environment: NCCL_NET, NCCL_NET_PLUGIN,\n"
    "                 LD_LIBRARY_PATH shadowing a wheel, several copies\n"
    "  --from PATH    search wheels as a shim at PATH would (e.g. the .so\n"
    "                 vendored in site-packages/<pkg>/)\n"
    "  --help         this text\n"
    "\n"
    "Exit status: 0 when every library asked for would load (and --doctor\n"
    "found no problem), 1 otherwise, 2 for a usage error.\n";

static const lz_lib *by_name(const char *name)
{
    if (strcmp(name, "nccl") == 0)
        return &lz_lib_nccl;
    if (strcmp(name, "nvrtc") == 0)
        return &lz_lib_nvrtc;
    if (strcmp(name, "nvjitlink") == 0)
        return &lz_lib_nvjitlink;
    return NULL;
}

/* --load: load as a first call would, then ask the library's own version. */
static void load(info_lib *li)
{
    const lz_lib *lib = li->lib;
    int ok;
    if (lib == &lz_lib_nccl) {
        int v = 0;
        ok = lazynccl_load() == 0 && ncclGetVersion(&v) == ncclSuccess;
        snprintf(li->loaded_version, sizeof li->loaded_version, "%d.%d.%d (%d)", v / 10000,
                 v / 100 % 100, v % 100, v);
    } else if (lib == &lz_lib_nvrtc) {
        int major = 0, minor = 0;
        ok = lazynvrtc_load() == 0 && nvrtcVersion(&major, &minor) == NVRTC_SUCCESS;
        snprintf(li->loaded_version, sizeof li->loaded_version, "%d.%d", major, minor);
    } else {
        unsigned major = 0, minor = 0;
        ok = lazynvjitlink_load() == 0 && nvJitLinkVersion(&major, &minor) == NVJITLINK_SUCCESS;
        snprintf(li->loaded_version, sizeof li->loaded_version, "%u.%u", major, minor);
    }
    li->loaded = ok;
    if (ok) {
        snprintf(li->loaded_path, sizeof li->loaded_path, "%s", lib->st->path);
        snprintf(li->loaded_step, sizeof li->loaded_step, "%s", lib->st->step);
    } else {
        const char *e = lz_api_last_error(lib);
        snprintf(li->load_error, sizeof li->load_error, "%s", e ? e : "version call failed\n");
    }
}

int main(int argc, char **argv)
{
    int json = 0, doctor = 0, do_load = 0, nlibs = 0;
    const char *origin = NULL;
    const lz_lib *want[3];
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--json") == 0)
            json = 1;
        else if (strcmp(a, "--doctor") == 0)
            doctor = 1;
        else if (strcmp(a, "--load") == 0)
            do_load = 1;
        else if (strcmp(a, "--from") == 0 && i + 1 < argc)
            origin = argv[++i];
        else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            fputs(usage, stdout);
            return 0;
        } else if (strcmp(a, "all") == 0) {
            nlibs = 0;
            want[nlibs++] = &lz_lib_nccl;
            want[nlibs++] = &lz_lib_nvrtc;
            want[nlibs++] = &lz_lib_nvjitlink;
        } else if (by_name(a) && nlibs < 3) {
            int dup = 0;
            for (int k = 0; k < nlibs; k++)
                dup |= want[k] == by_name(a);
            if (!dup)
                want[nlibs++] = by_name(a);
        } else {
            fprintf(stderr, "lazynccl-info: unknown argument '%s'\n\n%s", a, usage);
            return 2;
        }
    }
    if (nlibs == 0) {
        want[nlibs++] = &lz_lib_nccl;
        want[nlibs++] = &lz_lib_nvrtc;
        want[nlibs++] = &lz_lib_nvjitlink;
    }
    static info_lib libs[3];
    int status = 0;
    for (int i = 0; i < nlibs; i++) {
        info_inspect(&libs[i], want[i], origin);
        if (do_load)
            load(&libs[i]);
        if (!libs[i].would_load || (do_load && !libs[i].loaded))
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
        print_json(stdout, libs, nlibs, doctor ? &d : NULL);
    else
        print_text(stdout, libs, nlibs, doctor ? &d : NULL,
                   isatty(STDOUT_FILENO) && !getenv("NO_COLOR"));
    return status;
}
