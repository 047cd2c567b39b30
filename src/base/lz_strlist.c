/* SPDX-License-Identifier: MIT
 * Lists of string pairs (lz_strlist.h). */
#include "base/lz_strlist.h"

#include <stdlib.h>
#include <string.h>

void lz_strlist_push(lz_strlist *l, const char *a, const char *b)
{
    size_t na = strlen(a) + 1, nb = strlen(b) + 1;
    if (l->len + na + nb > l->cap) {
        size_t cap = (l->cap ? l->cap * 2 : 256) + na + nb;
        char *grown = realloc(l->buf, cap);
        if (!grown) {
            l->oom = 1;
            return;
        }
        l->buf = grown;
        l->cap = cap;
    }
    memcpy(l->buf + l->len, a, na);
    memcpy(l->buf + l->len + na, b, nb);
    l->len += na + nb;
}

/* push, unless a pair already starts with a (a site directory
 * named by each of a framework's many objects is visited once). */
void lz_strlist_push_once(lz_strlist *l, const char *a, const char *b)
{
    for (size_t off = 0; off < l->len;) {
        const char *x = l->buf + off, *y = x + strlen(x) + 1;
        if (strcmp(x, a) == 0)
            return;
        off = (size_t)(y + strlen(y) + 1 - l->buf);
    }
    lz_strlist_push(l, a, b);
}

void lz_strlist_append(lz_strlist *l, lz_strlist *from)
{
    /* The same layout on both sides: from's bytes, as they are. */
    size_t need = l->len + from->len;
    char *buf = need > l->cap ? realloc(l->buf, need) : l->buf;
    if (from->len && !buf) {
        l->oom = 1;
    } else if (from->len) {
        memcpy(buf + l->len, from->buf, from->len);
        l->buf = buf;
        l->len = need;
        l->cap = need > l->cap ? need : l->cap;
    }
    l->oom |= from->oom;
    free(from->buf);
    *from = (lz_strlist){0};
}

/* Call visit on each pair of the list until it returns 1; free the list. */
int lz_strlist_visit(lz_strlist *l, lz_strlist_visit_fn visit, void *ctx)
{
    int rc = 0;
    for (size_t off = 0; off < l->len && !rc;) {
        const char *a = l->buf + off, *b = a + strlen(a) + 1;
        off = (size_t)(b + strlen(b) + 1 - l->buf);
        rc = visit(ctx, a[0] ? a : NULL, b);
    }
    free(l->buf);
    *l = (lz_strlist){0};
    return rc;
}
