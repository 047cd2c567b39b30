/* SPDX-License-Identifier: MIT */
/* JSON strings of arbitrary bytes (json.h); fuzzed by tests/fuzz/fuzz_json.c. */
#include "json.h"

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF), or 0. */
static int utf8_len(const unsigned char *s)
{
    int n = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] <= 0xdf ? 2 : s[0] >= 0xe0 && s[0] <= 0xef ? 3
            : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4 : 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80)
            return 0;
    if ((n == 3 && ((s[0] == 0xe0 && s[1] < 0xa0) || (s[0] == 0xed && s[1] >= 0xa0))) ||
        (n == 4 && ((s[0] == 0xf0 && s[1] < 0x90) || (s[0] == 0xf4 && s[1] >= 0x90))))
        return 0;
    return n;
}

void info_json_string(FILE *f, const char *text)
{
    if (!text) {
        fputs("null", f);
        return;
    }
    fputc('"', f);
    for (const unsigned char *s = (const unsigned char *)text; *s;) {
        int n = utf8_len(s);
        if (*s == '"' || *s == '\\')
            fprintf(f, "\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", f);
        else if (*s < 0x20 || *s == 0x7f || n == 0)
            fprintf(f, "\\u%04x", *s);
        else {
            fwrite(s, 1, (size_t)n, f);
            s += n;
            continue;
        }
        s++;
    }
    fputc('"', f);
}
