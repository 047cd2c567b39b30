/* SPDX-License-Identifier: MIT */
/* The search steps' names: what lazynccl_loaded_step() returns, what the
 * report and the log print, and (in the comment after each, read by
 * gen/lazygen.py python-libraries into the Python package's _libraries.py)
 * what cuda.pathfinder's LoadedDL.found_via calls the same place. Steps
 * named by a variable (LAZYNCCL_LIBPATH, CONDA_PREFIX, CUDA_HOME, ...) take
 * the variable's name from the spec. One line per step: the generator reads
 * them so. */
#ifndef LZ_STEPNAMES_H
#define LZ_STEPNAMES_H

#define LZ_STEP_ADOPTED "adopted"                     /* found_via: adopted-handle */
#define LZ_STEP_CHOSEN "chosen by the program"        /* found_via: chosen-by-program */
#define LZ_STEP_SEARCH_LIST "search list"              /* found_via: search-list */
#define LZ_STEP_ASKED "asked by path"                  /* found_via: asked-by-path */
#define LZ_STEP_LOADED "already loaded"                /* found_via: was-already-loaded-from-elsewhere */
#define LZ_STEP_RELEASE "same release"                /* found_via: same-release */
#define LZ_STEP_WHEEL "wheel"                          /* found_via: site-packages */
#define LZ_STEP_LD_LIBRARY_PATH "LD_LIBRARY_PATH"      /* found_via: system-search */
#define LZ_STEP_RUN_PATH "run path"                    /* found_via: system-search */
#define LZ_STEP_LDCACHE "ld.so.cache"                  /* found_via: system-search */
#define LZ_STEP_SYSTEM_DIRS "system directories"       /* found_via: system-search */
#define LZ_STEP_LINKER "dynamic linker"                /* found_via: system-search */
#define LZ_STEP_DEFAULT_DIRS "default directories"     /* found_via: system-search */

#endif
