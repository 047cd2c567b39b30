/* SPDX-License-Identifier: MIT
 * A list of messages is pushed whole and never changed: a reader holds a
 * string that stays valid (_last_error's contract). */
#include "base/lz_msg.h"

#include <stdlib.h>
#include <string.h>

void lz_message_push(lz_msg **list, const char *text)
{
    size_t len = strlen(text);
    lz_msg *m = malloc(sizeof *m + len + 1);
    if (!m)
        return;
    memcpy(m->text, text, len + 1);
    m->next = __atomic_load_n(list, __ATOMIC_ACQUIRE);
    while (!__atomic_compare_exchange_n(list, &m->next, m, 1, __ATOMIC_RELEASE, __ATOMIC_ACQUIRE))
        ;
}
