/* SPDX-License-Identifier: MIT
 * libFuzzer target: the override list parser (LAZYNCCL_LIBPATH and
 * <shim>_set_search_path), through a dry-run walk of the real search code.
 * Any string must be walked to a verdict without a crash or a load. */
#include "base/lz_report.h"
#include "search/lz_emit.h"
#include "search/lz_order.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char *const sonames[] = {"libnccl.so.2", NULL};
static const char *const none[] = {NULL};
static lz_state state = LZ_STATE_INIT;
static const lz_lib fuzz_lib = {.id = "fuzz", .display = "fuzz", .shim = "lazyfuzz",
                                .env_var = "LAZYFUZZ_LIBPATH_UNSET", .sonames = sonames,
                                .wheel_dirs = none, .required = none, .prefix = "lazyfuzz",
                                .debug_env = "LAZYFUZZ_DEBUG", .strict_env = "LAZYFUZZ_STRICT", .require_env = "LAZYFUZZ_REQUIRE",
                                .probe = 1, .st = &state};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *list = malloc(size + 1);
    if (!list)
        return 0;
    memcpy(list, data, size);
    list[size] = '\0';
    char report[4096];
    static lz_report rep;
    lz_search w = {.lib = &fuzz_lib, .req = {.dry_run = 1, .search_list = list}};
    /* The report hears the walk, as a failing first call's does. */
    if (lz_report_init(&rep, &fuzz_lib, report, sizeof report, 0))
        lz_listen(&w, lz_report_heard, &rep);
    lz_order(&w);
    if (rep.len >= sizeof report)
        __builtin_trap();
    free(list);
    return 0;
}
