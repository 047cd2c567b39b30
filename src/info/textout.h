/* SPDX-License-Identifier: MIT */
/* The text views' output stream, safe for a terminal (textout.c). */
#ifndef LZ_INFO_TEXTOUT_H
#define LZ_INFO_TEXTOUT_H

#include <stdio.h>

/* A stream that writes to `to` every byte of well-formed UTF-8 and every
 * newline and tab as they are, and shows each other byte as \xNN: the
 * control characters (C0, DEL, the C1 ones U+0080-U+009F) and the bytes
 * that are not UTF-8, which a path or a variable may hold, and which would
 * otherwise steer the terminal. With color, the five SGR codes the views
 * paint with pass too (an attacker's path can at most change a colour).
 * Closing it writes out what it held back and flushes `to`; NULL where it
 * cannot be made (the caller writes to `to` then). */
FILE *info_text_stream(FILE *to, int color);

#endif
