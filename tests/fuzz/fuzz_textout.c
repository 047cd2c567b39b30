/* SPDX-License-Identifier: MIT
 * libFuzzer target: lazynccl-info's text stream (src/info/textout.c). The
 * input's first byte chooses colour and where the rest is cut into writes
 * (a sequence may straddle two); whatever the bytes, what reaches the
 * terminal is well-formed UTF-8 holding no control character but newline,
 * tab and, with colour, the five codes the views paint with; and no byte
 * is lost: each input byte comes out as itself or as its \xNN. */
#include "info/textout.h"
#include "utf8_check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const PAINT[] = {"\033[32m", "\033[31m", "\033[33m", "\033[1m", "\033[0m"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int color = data[0] & 1;
    size_t cut = data[0] >> 1; /* where the first write ends */
    const unsigned char *in = data + 1;
    size_t n = size - 1;
    char *out = NULL;
    size_t outlen = 0;
    FILE *to = open_memstream(&out, &outlen);
    FILE *f = info_text_stream(to, color);
    if (!f) {
        fclose(to);
        free(out);
        return 0;
    }
    setvbuf(f, NULL, _IONBF, 0); /* each fwrite reaches the filter as it is */
    size_t first = cut < n ? cut : n;
    fwrite(in, 1, first, f);
    fwrite(in + first, 1, n - first, f);
    if (fclose(f) != 0)
        __builtin_trap();
    fclose(to);
    const unsigned char *o = (const unsigned char *)out;
    size_t k = 0, i = 0; /* k: the output; i: the input it stands for */
    while (k < outlen) {
        if (i >= n)
            __builtin_trap(); /* more out than in */
        size_t len = 0;
        if (o[k] == 0x1b && color)
            for (size_t p = 0; p < sizeof PAINT / sizeof *PAINT && !len; p++)
                if (outlen - k >= strlen(PAINT[p]) && memcmp(o + k, PAINT[p], strlen(PAINT[p])) == 0)
                    len = strlen(PAINT[p]);
        if (len) { /* a colour code: the input had it as it is */
            if (n - i < len || memcmp(in + i, o + k, len) != 0)
                __builtin_trap();
            k += len, i += len;
            continue;
        }
        unsigned cp;
        size_t u = utf8_check(o + k, outlen - k, &cp);
        if (!u || (cp < 0x20 && cp != '\n' && cp != '\t') || (cp >= 0x7f && cp < 0xa0))
            __builtin_trap(); /* a control character or a stray byte reached the terminal */
        if (o[k] == '\\' && outlen - k >= 4 && o[k + 1] == 'x' && in[i] != '\\') {
            /* \xNN standing for one input byte */
            unsigned v;
            if (sscanf((const char *)o + k + 2, "%2x", &v) != 1 || v != in[i])
                __builtin_trap();
            k += 4, i += 1;
            continue;
        }
        if (n - i < u || memcmp(in + i, o + k, u) != 0)
            __builtin_trap(); /* not the input's own character */
        k += u, i += u;
    }
    if (i != n)
        __builtin_trap(); /* input lost */
    free(out);
    return 0;
}
