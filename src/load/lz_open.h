/* SPDX-License-Identifier: MIT
 * Finding a library and opening it: attempts of the search order, each
 * followed by the dlopen of its choice (lz_open.c). No lock, no state:
 * lz_once.c decides who searches and publishes what this returns. */
#ifndef LZ_OPEN_H
#define LZ_OPEN_H

#include "search/lz_search.h"

/* What a search ends with: the library opened (handle, and the path, step
 * and companions to publish, one allocation), or the failure report. */
typedef struct lz_outcome {
    void *handle;
    const char *step;
    char *path;              /* malloc'd: the path, '\0', then companions */
    const char *companions;  /* into path: '\n'-separated, to load later */
    lz_msg *report;          /* malloc'd, or NULL */
    int busy;                /* cut short: the dynamic linker's lock was refused */
} lz_outcome;

/* Search for lib and open what the search chose; out is zeroed by the
 * caller. list is the program's search list (a copy) or NULL. want (or
 * NULL) is the export whose first call asks. */
LZ_HIDDEN void lz_search_and_open(const lz_lib *lib, const lz_sym *want, const char *list,
                                lz_outcome *out);
/* The one file the program chose for a search, malloc'd, and its step
 * (*step): the file of a handle it adopts (<shim>_adopt), else, unless the
 * override is set or may_choose is 0 (a search inside the dynamic linker,
 * which calls no program code), its chooser's answer (<shim>_set_chooser);
 * NULL when there is none (the usual search). */
LZ_HIDDEN char *lz_chosen_file(const lz_lib *lib, const char **step, int may_choose);
/* Run the set-up search w (lz_search_init, its report and request filled in)
 * over the search order, with the marks of the versioned names loaded
 * objects import (what the library chosen must serve) where the request
 * brings none: the one way every search is run, a load's attempts and the
 * inspection API's dry runs alike. */
LZ_HIDDEN void lz_search_run(lz_search *w);

#endif
