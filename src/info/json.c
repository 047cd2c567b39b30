/* SPDX-License-Identifier: MIT */
/* JSON strings of arbitrary bytes (json.h); fuzzed by tests/fuzz/fuzz_json.c. */
#include "json.h"
#include "utf8.h"

void info_json_string(FILE *f, const char *text)
{
    if (!text) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        int n = info_utf8_len(s);
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", f);
        else if (*s < 0x20 || *s == 0x7f)
            fprintf(f, "\\u%04x", *s);
        else if (n == 0) /* not UTF-8: a lone surrogate, as Python's surrogateescape */
            fprintf(f, "\\udc%02x", *s);
        else {
            fwrite(s, 1, (size_t)n, f);
            s += n;
            continue;
        }
        s++;
    }
    fputc('"', f);
}
