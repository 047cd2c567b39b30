/* SPDX-License-Identifier: MIT
 * Lists of messages read without a lock (lz_msg.c), of both runtimes. */
#ifndef LZ_MSG_H
#define LZ_MSG_H

#include "base/lz_runtime.h"

/* Add a copy of text to a list of messages, without a lock (earlier ones
 * stay valid: a caller may still be reading one; out of memory: not added). */
LZ_HIDDEN void lz_message_push(lz_msg **list, const char *text);

#endif
