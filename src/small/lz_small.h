/* SPDX-License-Identifier: MIT
 * The small runtime (lz_small.c): the runtime of a small library's static
 * shim. The generated code of such a shim includes this header first when
 * it is compiled for the static archive (LZ_STATIC_SHIM, gen/emit_stubs.py
 * small_runtime): each entry point of the runtime that code calls is then
 * the small runtime's, under a name of its own, and the archive, which
 * holds both runtimes, gives the program only the small one. The same
 * declarations (api/lz_api.h, api/lz_resolve.h) check both. */
#ifndef LZ_SMALL_H
#define LZ_SMALL_H

#define lz_message lz_small_message
#define lz_failed_call lz_small_failed_call
#define lz_resolve_from lz_small_resolve_from
#define lz_api_load lz_small_api_load
#define lz_api_is_loaded lz_small_api_is_loaded
#define lz_api_loaded_path lz_small_api_loaded_path
#define lz_api_loaded_step lz_small_api_loaded_step
#define lz_api_last_error lz_small_api_last_error
#define lz_api_set_search_path lz_small_api_set_search_path
#define lz_api_require lz_small_api_require
#define lz_api_set_chooser lz_small_api_set_chooser
#define lz_api_adopt lz_small_api_adopt
#define lz_api_resolve_all lz_small_api_resolve_all
#define lz_api_set_log_callback lz_small_api_set_log_callback
#define lz_api_asked_path lz_small_api_asked_path
#define lz_api_loaded_version lz_small_api_loaded_version
#define lz_api_would_load lz_small_api_would_load

#include "api/lz_api.h"
#include "api/lz_resolve.h"

#endif
