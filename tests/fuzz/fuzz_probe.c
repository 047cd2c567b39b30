/* SPDX-License-Identifier: MIT
 * libFuzzer target: the ELF probe on arbitrary bytes. Every input must give
 * a verdict (accepted or rejected with a reason), never a crash, a leak or
 * undefined behaviour. The bytes are served through a memfd, so the probe
 * reads them by path, as it reads candidates; the small reads of the
 * same bytes (lz_elfpeek.h); and a variable's value read from its
 * segments placed in memory (lz_elfimage.h). */
#include "elf/lz_elfimage.h"
#include "elf/lz_elfpeek.h"
#include "elf/lz_probe.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static const char *const sonames[] = {"libnccl.so.2", NULL};
static const char *const required[] = {"ncclGetVersion", NULL};
static lz_state state = LZ_STATE_INIT;
static const lz_lib fuzz_lib = {.id = "fuzz", .display = "fuzz", .shim = "lazyfuzz",
                                .env_var = "LAZYFUZZ_LIBPATH", .sonames = sonames,
                                .required = required, .prefix = "lazyfuzz",
                                .debug_env = "LAZYFUZZ_DEBUG", .strict_env = "LAZYFUZZ_STRICT", .require_env = "LAZYFUZZ_REQUIRE",
                                .probe = 1, .st = &state};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int fd = -1;
    if (fd < 0)
        fd = memfd_create("fuzz-elf", 0);
    if (fd < 0 || ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != (ssize_t)size)
        return 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    lz_probe p;
    int rc = lz_probe_file(&fuzz_lib, path, NULL, &p);
    if (rc == LZ_PROBE_OK) {
        (void)lz_probe_exports(&p, "ncclGetVersion");
        lz_probe_free(&p);
    } else if (rc == LZ_PROBE_REJECTED && !p.reason[0]) {
        __builtin_trap(); /* a rejection must say why */
    }
    /* Every name read (the tools' probe, a library with versioned names),
     * where a library's own probe only looks its names up: both readers,
     * and the two must agree on every name the lookup was asked. */
    lz_probe all;
    int rc_all = lz_probe_read(path, &all);
    if (rc_all == LZ_PROBE_OK) {
        if (rc == LZ_PROBE_OK && !lz_probe_exports(&all, "ncclGetVersion"))
            __builtin_trap(); /* the lookup found a name the full read did not */
        lz_probe_free(&all);
    } else if (!all.reason[0]) {
        __builtin_trap();
    }
    char version[128];
    (void)lz_probe_rodata_string(path, "NCCL version ", version, sizeof version);
    /* The small reads the audit module and the launcher make of a file:
     * ld.so's verdict on it, and a drop-in's note. */
    static lz_elfpeek_room room;
    char soname[256];
    (void)lz_elfpeek_native(&room, fd);
    /* A variable's resolver reading a file it cannot load: any bytes, a
     * verdict, never a read outside what it placed. */
    unsigned char value[8];
    (void)lz_elfimage_value(path, "ncclGetVersion", value, sizeof value);
    if (lz_elfpeek_dropin(&room, fd, soname, sizeof soname) && strlen(soname) >= sizeof soname)
        __builtin_trap();
    return 0;
}
