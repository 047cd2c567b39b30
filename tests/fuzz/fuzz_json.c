/* SPDX-License-Identifier: MIT
 * libFuzzer target: lazynccl-info's JSON string writer. For any bytes the
 * output must be one valid JSON string (RFC 8259: quoted, escapes well
 * formed, no raw control character, UTF-8 only) that decodes back to exactly
 * the input, reading each \u00XX (a control character) and each lone
 * surrogate \udcXX (a byte that is not UTF-8) as the byte XX. */
#include "info/json.h"
#include "utf8_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int hex(int c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
           : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *in = malloc(size + 1);
    if (!in)
        return 0;
    memcpy(in, data, size);
    in[size] = '\0';
    size_t inlen = strlen(in); /* the writer takes C strings */
    char *out = NULL;
    size_t outlen = 0;
    FILE *f = open_memstream(&out, &outlen);
    info_json_string(f, in);
    fclose(f);
    const unsigned char *o = (const unsigned char *)out;
    if (outlen < 2 || o[0] != '"' || o[outlen - 1] != '"')
        __builtin_trap();
    unsigned char *back = malloc(inlen + 1);
    size_t b = 0;
    for (size_t i = 1; i < outlen - 1;) {
        if (o[i] < 0x20 || o[i] == '"')
            __builtin_trap(); /* raw control character or unescaped quote */
        if (o[i] == '\\') {
            if (i + 1 >= outlen - 1)
                __builtin_trap();
            char e = (char)o[i + 1];
            if (e == '"' || e == '\\') { back[b++] = (unsigned char)e; i += 2; }
            else if (e == 'n') { back[b++] = '\n'; i += 2; }
            else if (e == 'u') {
                if (i + 5 >= outlen - 1 + 1 || hex(o[i + 4]) < 0 || hex(o[i + 5]) < 0)
                    __builtin_trap();
                int hi = hex(o[i + 2]) * 16 + hex(o[i + 3]);
                int byte = hex(o[i + 4]) * 16 + hex(o[i + 5]);
                /* U+00XX only for a control character, a lone surrogate
                 * U+DCXX only for a byte that is not UTF-8 */
                if (!(hi == 0 && (byte < 0x20 || byte == 0x7f)) && !(hi == 0xdc && byte >= 0x80))
                    __builtin_trap();
                back[b++] = (unsigned char)byte;
                i += 6;
            } else
                __builtin_trap();
        } else {
            unsigned cp;
            size_t n = utf8_check(o + i, outlen - 1 - i, &cp);
            if (!n)
                __builtin_trap(); /* not UTF-8 */
            if (b + n > inlen)
                __builtin_trap();
            memcpy(back + b, o + i, n);
            b += n;
            i += n;
        }
        if (b > inlen)
            __builtin_trap();
    }
    if (b != inlen || memcmp(back, in, inlen) != 0)
        __builtin_trap(); /* does not decode to the input */
    free(back);
    free(out);
    free(in);
    return 0;
}
