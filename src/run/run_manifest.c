/* SPDX-License-Identifier: MIT */
/* The drop-in directory's manifest (run_manifest.h). */
#include "run_manifest.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The file whole, NUL-terminated, in at most RUN_MANIFEST_MAX bytes: read
 * until end of file, without an fstat (one syscall fewer a launch). */
static char *slurp(int fd, size_t *len)
{
    char *buf = malloc(RUN_MANIFEST_MAX + 1);
    size_t n = 0;
    while (buf && n < RUN_MANIFEST_MAX) {
        ssize_t r = read(fd, buf + n, RUN_MANIFEST_MAX - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r < 0) {
                free(buf);
                return NULL;
            }
            break;
        }
        n += (size_t)r;
    }
    if (buf)
        buf[n] = '\0';
    *len = n;
    return buf;
}

static int word(char **line, const char *w)
{
    size_t n = strlen(w);
    if (strncmp(*line, w, n) != 0 || (*line)[n] != ' ')
        return 0;
    *line += n + 1;
    return 1;
}

int run_manifest_read(const char *dir, run_manifest *m, char *why, size_t whysize)
{
    memset(m, 0, sizeof *m);
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, RUN_MANIFEST_FILE) >= sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t len = 0;
    m->text = slurp(fd, &len);
    close(fd);
    size_t lines = 1;
    for (size_t i = 0; m->text && i < len; i++)
        lines += m->text[i] == '\n';
    if (!m->text || len >= RUN_MANIFEST_MAX || memchr(m->text, '\0', len) ||
        !(m->names = calloc(lines, sizeof *m->names)) || !(m->needs = calloc(lines, sizeof *m->needs))) {
        snprintf(why, whysize, "%s: unreadable, over %d bytes or not text", path, RUN_MANIFEST_MAX);
        free(m->text), free(m->names), free(m->needs);
        memset(m, 0, sizeof *m);
        return -2;
    }
    size_t at = 0;
    for (char *line = m->text; line;) {
        char *nl = strchr(line, '\n');
        if (nl)
            *nl = '\0';
        at++;
        char *rest = line;
        if (!*line || *line == '#') {
            /* a comment or an empty line */
        } else if (word(&rest, "audit") && *rest) {
            m->audit = rest;
        } else if ((rest = line, word(&rest, "redirect")) && *rest) {
            m->redirect = rest;
        } else if ((rest = line, word(&rest, "dropin")) && *rest && *rest != ' ' && !strchr(rest, '/')) {
            char *sp = strchr(rest, ' ');
            if (sp)
                *sp = '\0';
            m->names[m->n] = rest;
            m->needs[m->n++] = sp ? sp + 1 : "";
        } else {
            snprintf(why, whysize, "%s, line %zu: not \"audit FILE\", \"redirect FILE\" or "
                                   "\"dropin SONAME [NEEDED...]\"", path, at);
            free(m->text), free(m->names), free(m->needs);
            memset(m, 0, sizeof *m);
            return -2;
        }
        line = nl ? nl + 1 : NULL;
    }
    return 0;
}

const char *run_manifest_needs(const run_manifest *m, size_t i)
{
    return i < m->n ? m->needs[i] : "";
}
