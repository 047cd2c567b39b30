/* SPDX-License-Identifier: MIT
 * Judging one candidate: probe it, score it against what the first call
 * asked for, and choose it when it is the one; the search opens it once
 * the search is over (lz_open.c's open_chosen), and checks it then. */
#include "process/lz_objects.h"
#include "base/lz_path.h"
#include "elf/lz_probe.h"
#include "search/lz_candidate.h"
#include "search/lz_companions.h"
#include "process/lz_needed.h"
#include "search/lz_emit.h"
#include "common/lz_note.h"
#include "search/lz_release.h"

#include <dirent.h>
#include <dlfcn.h>
#include <link.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <limits.h>
#include <fcntl.h>
#include <errno.h>
#include <sys/stat.h>

/* The search ends at the chosen candidate, except an exhaustive one. A real
 * load is only recorded here: the caller opens the file after the search. */
static int accept(lz_search *w, const char *step, const char *path, const lz_probe *p)
{
    w->res.found = 1;
    w->res.chosen.step = step;
    if (path != w->res.path) /* a candidate written there is the result as it is */
        lz_copy(w->res.path, sizeof w->res.path, path);
    if (w->req.dry_run)
        lz_verdict(w, step, path, LZ_CHOSEN, p, NULL);
    return !w->req.exhaustive;
}

/* 1 (and its verdict) when an earlier attempt of this search failed to open
 * the file dev/ino: it is rejected on sight, for that attempt's reason. */
static int skipped(lz_search *w, const char *step, const char *path, const lz_probe *p,
                   unsigned long long dev, unsigned long long ino)
{
    for (int i = 0; i < w->req.nskips; i++)
        if (w->req.skips[i].dev == dev && w->req.skips[i].ino == ino) {
            lz_verdict(w, step, path, LZ_REJECTED, p, "%s", w->req.skips[i].reason);
            return 1;
        }
    return 0;
}

/* dir/name (lz_path_dup) in a search, which says why when there is none. */
char *lz_join(lz_search *w, const char *step, const char *dir, const char *name)
{
    char *out = lz_path_dup(dir, name);
    if (out)
        return out;
    if (strlen(dir) + 1 + strlen(name) + 1 > PATH_MAX) {
        char shown[96];
        snprintf(shown, sizeof shown, "%.64s.../%.16s", dir, name);
        lz_verdict(w, step, shown, LZ_REJECTED, NULL, "path longer than PATH_MAX (%d)", PATH_MAX);
    } else
        lz_note(w, "out of memory: %s/%s was not tried", dir, name);
    return NULL;
}

char *lz_candidate_buffer(lz_search *w)
{
    return w->res.found ? NULL : w->res.path;
}

static void say_why_unused(lz_search *w, const char *step, const char *dir, int quiet);

/* Try every soname in a directory. quiet: a directory of the default order
 * that holds none is not worth a line in the report. Each candidate is
 * joined where the search's result lies (lz_candidate_buffer), so the one
 * accepted is not copied again; dir must not lie there. */
int lz_try_dir(lz_search *w, const char *step, const char *dir, int quiet)
{
    int any = 0, rc = 0;
    lz_looked(w, step, dir);
    for (const char *const *s = w->lib->sonames; *s && !rc; s++) {
        char *buf = lz_candidate_buffer(w);
        char *path = buf && lz_path_join(buf, PATH_MAX, dir, *s) ? buf : lz_join(w, step, dir, *s);
        if (path && lz_probe_exists(path)) {
            any = 1;
            rc = lz_try_file(w, step, path);
        }
        if (path != buf)
            free(path);
    }
    /* Its system calls only feed verdicts, which a silent search drops: a
     * $CONDA_PREFIX/lib or $CUDA_HOME/lib64 without the library cost every
     * first call a stat and a faccessat of it. */
    if (!any && lz_heard(w))
        say_why_unused(w, step, dir, quiet);
    return rc;
}

/* Say why a directory that was named could not be used: missing, a
 * dangling link, unreadable; the default steps' absent ones say nothing. */
__attribute__((noinline)) static void say_why_unused(lz_search *w, const char *step,
                                                     const char *dir, int quiet)
{
    struct stat sb;
    if (stat(dir, &sb) != 0) {
        if (!quiet || errno != ENOENT || lstat(dir, &sb) == 0)
            lz_verdict(w, step, dir, LZ_REJECTED, NULL, "%s",
                       lstat(dir, &sb) == 0 ? "a dangling symbolic link" : strerror(errno));
        return;
    }
    if (!S_ISDIR(sb.st_mode) || faccessat(AT_FDCWD, dir, R_OK | X_OK, AT_EACCESS) != 0) {
        lz_verdict(w, step, dir, LZ_REJECTED, NULL, "cannot be searched: %s",
                   S_ISDIR(sb.st_mode) ? strerror(errno) : "not a directory");
        return;
    }
    if (quiet)
        return;
    char names[512], also[512] = "";
    lz_soname_list(w->lib, names, sizeof names);
    /* A soname the spec knows it cannot serve (CUDA 11 NVRTC, say) is worth naming. */
    for (const lz_unsupported *u = w->lib->unsupported; u && u->soname; u++) {
        char *path = lz_join(w, step, dir, u->soname);
        int held = path && lz_probe_exists(path);
        free(path);
        if (held) {
            snprintf(also, sizeof also, " (it holds %s: %s, not supported by this shim)",
                     u->soname, u->what);
            break;
        }
    }
    lz_verdict(w, step, dir, LZ_REJECTED, NULL, "the directory holds no %s%s", names, also);
}

/* Choose a probed (or unprobeable) file: the search ends, and the caller
 * opens it (lz_open.c's open_chosen). 0 when it cannot be taken: the search goes on. */
static int load(lz_search *w, const char *step, const char *path, lz_probe *p)
{
    if (w->req.dry_run)
        return accept(w, step, path, p);
    struct stat sb;
    if (!p && (stat(path, &sb) != 0 || !S_ISREG(sb.st_mode))) {
        /* Unprobed (a spec with probe = false): dlopen would block on a FIFO. */
        lz_verdict(w, step, path, LZ_REJECTED, NULL, "not a regular file");
        return 0;
    }
    unsigned long long dev = p ? p->dev : (unsigned long long)sb.st_dev;
    unsigned long long ino = p ? p->ino : (unsigned long long)sb.st_ino;
    if (skipped(w, step, path, p, dev, ino))
        return 0;
    if (w->req.nskips >= LZ_MAX_SKIPS) {
        lz_verdict(w, step, path, LZ_REJECTED, p, "not opened: %d candidates before it failed to "
                   "load, so the search stops opening files", LZ_MAX_SKIPS);
        return 0;
    }
    lz_chosen *c = &w->res.chosen;
    if (w->lib->companions && w->lib->companions[0]) /* nothing to record elsewhere */
        lz_companions_record(w, step, path, p);
    c->probed = p != NULL;
    c->dev = dev;
    c->ino = ino;
    return accept(w, step, path, p);
}

/* How well a probed file serves one name: 2 exactly; 1 only through an
 * older version of the same major; 0 not at all (for a versioned name, not
 * that family's major). */
static int score_name(const lz_search *w, const lz_probe *p, const lz_sym *want)
{
    const lz_lib *lib = w->lib;
    if (lz_probe_exports(p, lz_sym_name(lib, want)) || lz_sym_any_copy(lib, (size_t)(want - lib->syms)))
        return 2;
    if (!want->family)
        return 0;
    int same_major = 0, any = 0;
    for (size_t j = 0; j < w->lib->nsyms; j++) {
        const lz_sym *s = &w->lib->syms[j];
        if (s->family != want->family || !lz_probe_exports(p, lz_sym_name(lib, s)))
            continue;
        any = 1;
        if (want->major >= 0 && s->major == want->major && s->minor < want->minor)
            same_major = 1;
    }
    if (want->major < 0)
        return any ? 2 : 0; /* the unversioned name: any member serves */
    return same_major;
}

/* How well a file serves the names asked for: the first call's name counts
 * most, then every name loaded objects import. *full: all served exactly;
 * else *worst is the first name that is not, and *worst_score its score. */
static long rank(const lz_search *w, const lz_probe *p, int *full, const lz_sym **worst,
                 int *worst_score)
{
    int first = w->req.want ? score_name(w, p, w->req.want) : 2;
    long sum = 0;
    *full = first == 2;
    *worst = first < 2 ? w->req.want : NULL;
    *worst_score = first;
    for (size_t j = 0; w->req.wanted && j < w->lib->nsyms; j++) {
        if (!w->req.wanted[j])
            continue;
        int s = score_name(w, p, &w->lib->syms[j]);
        sum += s;
        if (s < 2 && *full) {
            *full = 0;
            *worst = &w->lib->syms[j];
            *worst_score = s;
        }
    }
    return first * 100000L + sum;
}

/* 1 when some needed versioned name is of the major a soname stands for. */
static int wanted_major_of(const lz_search *w, const lz_probe *p)
{
    for (size_t j = 0; w->req.wanted && j < w->lib->nsyms; j++)
        if (w->req.wanted[j] && w->lib->syms[j].major >= 0 &&
            lz_probe_exports(p, lz_sym_name(w->lib, &w->lib->syms[j])))
            return 1;
    return 0;
}

/* The grades of a kept candidate beyond its names' rank, worst first: of
 * another release, of a release that cannot be told, of its peers' release
 * (or with none loaded; a full match of another major too). */
enum { LZ_KEEP_OTHER_RELEASE = 0, LZ_KEEP_RELEASE_UNKNOWN = 1, LZ_KEEP_OF_RELEASE = 2,
       LZ_KEEP_GRADES = 3 };

/* Keep a candidate in case no better one is found: names first (rank),
 * then grade. */
static void keep(lz_search *w, const char *step, const char *path, long rank_, int grade)
{
    long sc = rank_ * LZ_KEEP_GRADES + grade;
    if (sc > w->res.fallback_score) {
        w->res.fallback_score = sc;
        w->res.fallback_step = step;
        lz_copy(w->res.fallback_path, sizeof w->res.fallback_path, path);
    }
}

/* 1 when the file dev/ino (read by the probe: no stat of its own) is the
 * one holding this very code (a drop-in on its own search path). Its
 * identity is found once per search. */
static int is_self(lz_search *w, unsigned long long dev, unsigned long long ino)
{
    if (w->self_known == 0) {
        char *self = lz_objects_self_path();
        struct stat a;
        w->self_known = self && stat(self, &a) == 0 ? 1 : -1;
        if (w->self_known == 1) {
            w->self_dev = (unsigned long long)a.st_dev;
            w->self_ino = (unsigned long long)a.st_ino;
        }
        free(self);
    }
    return (dev || ino) && w->self_known == 1 && dev == w->self_dev && ino == w->self_ino;
}

/* A candidate judged against the libraries released with it that the
 * process has loaded (lz_release.c): LZ_KEEP_GRADES when it is of their
 * release (or there is none, or the policy is off); -1 when the policy is
 * strict and it is not (the verdict said); else the grade it is kept with
 * (best_effort: taken only if no candidate is of their release), with the
 * reason in *why (the caller frees it). A copy already loaded, and the file
 * a drop-in stands in for, are not judged: the process has the one, and
 * plain would have loaded the other. */
static int release_grade(lz_search *w, const char *step, const char *path, const lz_probe *p,
                         char **why)
{
    const lz_lib *lib = w->lib;
    *why = NULL;
    if (!lib->peers || !lib->peers[0].display || w->reusing || w->standing_in)
        return LZ_KEEP_GRADES;
    int policy = lz_release_policy(lib, NULL);
    if (policy == LZ_RELEASE_OFF)
        return LZ_KEEP_GRADES;
    /* On the heap, as every path-sized buffer of a search: a first call may
     * run on a thread stack of PTHREAD_STACK_MIN bytes. */
    size_t size = 2 * PATH_MAX + 256;
    *why = malloc(size);
    int r = lz_release_judge(lib, path, *why, *why ? size : 0);
    if (r == LZ_RELEASE_MATCH)
        return LZ_KEEP_GRADES;
    if (policy == LZ_RELEASE_STRICT) {
        lz_verdict(w, step, path, LZ_REJECTED, p, "%s (%s=strict)", *why ? *why : "out of memory",
                   lib->release_env);
        return -1;
    }
    return r == LZ_RELEASE_UNKNOWN ? LZ_KEEP_RELEASE_UNKNOWN : LZ_KEEP_OTHER_RELEASE;
}

int lz_try_file(lz_search *w, const char *step, const char *path)
{
    if (!w->lib->probe)
        return load(w, step, path, NULL);
    lz_probe p;
    int rc = lz_probe_file(w->lib, path, w->req.asks, &p);
    /* The probe only reads, so it may run first and hand over the file's
     * identity; the verdict on the shim itself comes before its own. Only
     * a file that exports a shim's marker can be this shim: a real
     * library's candidate costs no stat of this shim's file. */
    if (p.shim && is_self(w, p.dev, p.ino)) {
        lz_verdict(w, step, path, LZ_SELF, NULL, NULL);
        lz_probe_free(&p);
        return 0;
    }
    if (rc == LZ_PROBE_REJECTED) {
        lz_verdict(w, step, path, LZ_REJECTED, &p, "%s", p.reason);
        return 0;
    }
    if (w->res.found) { /* an exhaustive search, past the chosen one */
        lz_verdict(w, step, path, LZ_NOT_REACHED, &p, NULL);
        lz_probe_free(&p);
        return 0;
    }
    if (skipped(w, step, path, &p, p.dev, p.ino)) { /* before it can be kept */
        lz_probe_free(&p);
        return 0;
    }
    const lz_sym *worst;
    int full, worst_score;
    long r = rank(w, &p, &full, &worst, &worst_score);
    if (full && w->reusing && strcmp(p.elf.soname, w->lib->sonames[0]) != 0 &&
        !wanted_major_of(w, &p)) {
        /* A copy of another major that some other component loaded: the
         * shim's own major, if it can be found, comes first. */
        lz_verdict(w, step, path, LZ_KEPT, &p, "%s is loaded, but this shim prefers %s; "
                   "kept in case none is found", p.elf.soname, w->lib->sonames[0]);
        lz_probe_free(&p);
        keep(w, step, path, r, LZ_KEEP_OF_RELEASE);
        return 0;
    }
    char *rwhy;
    int grade = release_grade(w, step, path, &p, &rwhy);
    if (grade < 0) { /* strict: rejected */
        free(rwhy);
        lz_probe_free(&p);
        return 0;
    }
    if (full && grade < LZ_KEEP_GRADES) {
        lz_verdict(w, step, path, LZ_KEPT, &p, "%s; kept in case no candidate is of its release "
                   "(%s=best_effort)", rwhy ? rwhy : "out of memory", w->lib->release_env);
        free(rwhy);
        lz_probe_free(&p);
        keep(w, step, path, r, grade);
        return 0;
    }
    free(rwhy);
    /* A name's importer is looked for only to be said. */
    char *why = !full && lz_heard(w) ? malloc(PATH_MAX + 64) : NULL;
    if (why)
        lz_needed_why(w->lib, lz_sym_name(w->lib, worst), why, PATH_MAX + 64);
    if (!full && w->reusing && !worst->family) {
        /* The copy this process already has: a second copy of the library
         * would make two of it in one process, so it serves, lacking a name
         * or not (the call of that name then fails, saying so). */
        lz_note(w, "[%s] %s lacks %s, %s; taken: it is the copy this process has", step, path,
                lz_sym_name(w->lib, worst), why ? why : "");
        full = 1;
    }
    if (full) {
        free(why);
        rc = load(w, step, path, &p);
        lz_probe_free(&p);
        return rc;
    }
    lz_verdict(w, step, path, LZ_KEPT, &p, "lacks %s, %s%s", lz_sym_name(w->lib, worst),
               why ? why : "",
               worst_score ? " (an older version of its major serves); kept in case no candidate "
                             "serves every name"
                           : "; kept as a last resort");
    free(why);
    lz_probe_free(&p);
    keep(w, step, path, r, grade < LZ_KEEP_GRADES ? grade : LZ_KEEP_OF_RELEASE);
    return 0;
}

void lz_take_fallback(lz_search *w)
{
    if (w->res.found || w->res.fallback_score < 0)
        return;
    lz_note(w, "no candidate served every name and was of its release; taking the best one "
               "kept: %s",
            w->res.fallback_path);
    lz_probe p;
    if (lz_probe_file(w->lib, w->res.fallback_path, w->req.asks, &p) == LZ_PROBE_OK) {
        load(w, w->res.fallback_step, w->res.fallback_path, &p);
        lz_probe_free(&p);
    }
}
