/* SPDX-License-Identifier: MIT */
/* Well-formed UTF-8, the one rule the JSON and the text views share (utf8.c). */
#ifndef LZ_INFO_UTF8_H
#define LZ_INFO_UTF8_H

/* Length of the well-formed UTF-8 sequence at s (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF), or 0. Reads no further than a byte
 * that ends it: a NUL ends every sequence. */
int info_utf8_len(const unsigned char *s);

#endif
