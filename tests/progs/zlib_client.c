/* SPDX-License-Identifier: MIT
 * A real zlib program, linked to the shim generated from tests/specs/zlib.toml
 * (or to -lz, for comparison). Prints what is mapped before and after.
 *
 *   zlib_client roundtrip DIR   compress/uncompress, then gzopen/gzprintf/gzgets
 *   zlib_client first-variadic  gzprintf(NULL, ...) as the very first call
 */
#include <zlib.h>

#include <stdio.h>
#include <string.h>

#include "maps.h"

#ifdef LZ_SHIM
const char *lazyzlib_last_error(void);
#endif

static int mapped(const char *what)
{
    int n = count_mapped("/libz.so");
    printf("%s: libz mappings %d\n", what, n);
    return n;
}

static int roundtrip(const char *dir)
{
    static const char text[] = "lazy lazy lazy lazy lazy lazy lazy lazy loading, zlib edition";
    unsigned char packed[256], back[256];
    uLongf plen = sizeof packed, blen = sizeof back;
    int rc = compress(packed, &plen, (const unsigned char *)text, sizeof text);
    printf("compress: rc=%d %lu -> %lu bytes\n", rc, (unsigned long)sizeof text, (unsigned long)plen);
    rc = uncompress(back, &blen, packed, plen);
    printf("uncompress: rc=%d same=%d\n", rc, blen == sizeof text && memcmp(back, text, blen) == 0);
    char path[4096];
    snprintf(path, sizeof path, "%s/t.gz", dir);
    gzFile g = gzopen(path, "wb");
    /* Variadic, with integers past the six argument registers and doubles
     * in vector registers: all must arrive untouched. */
    int n = gzprintf(g, "%d %d %d %d %d %d %d %d|%s|%.3f %.2f\n", 1, 2, 3, 4, 5, 6, 7, 8, "eight",
                     3.25, -0.5);
    printf("gzprintf: %d\n", n);
    gzclose(g);
    g = gzopen(path, "rb");
    char line[256] = "";
    printf("gzgets: %s", gzgets(g, line, sizeof line) ? line : "(null)\n");
    gzclose(g);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    mapped("before");
    if (strcmp(argv[1], "roundtrip") == 0 && argc == 3)
        roundtrip(argv[2]);
    else if (strcmp(argv[1], "first-variadic") == 0)
        printf("gzprintf(NULL): %d\n", gzprintf(NULL, "%d %s %f", 1, "x", 2.0));
    else
        return 2;
    printf("zlibVersion: %s\n", zlibVersion());
#ifdef LZ_SHIM
    const char *e = lazyzlib_last_error();
    printf("last_error: %s\n", e ? e : "(none)");
#endif
    mapped("after");
    return 0;
}
