/* SPDX-License-Identifier: MIT */
/* lazynccl-run --print-env's output (run_quote.h). */
#include "run_quote.h"

#include <string.h>

enum { SHELL_POSIX, SHELL_FISH };

int run_quote_shell(const char *name)
{
    static const char *const posix[] = {"sh", "bash", "zsh", "ksh", "dash", "posix"};
    for (unsigned i = 0; i < sizeof posix / sizeof *posix; i++)
        if (strcmp(name, posix[i]) == 0)
            return SHELL_POSIX;
    return strcmp(name, "fish") == 0 ? SHELL_FISH : -1;
}

/* POSIX single quotes take every byte literally but the quote itself, which
 * is closed, escaped and reopened ('\''); fish's single quotes also take a
 * backslash as an escape. */
static void quoted(FILE *out, int shell, const char *value)
{
    fputc('\'', out);
    for (const char *p = value; *p; p++) {
        if (*p == '\'')
            fputs(shell == SHELL_FISH ? "\\'" : "'\\''", out);
        else if (*p == '\\' && shell == SHELL_FISH)
            fputs("\\\\", out);
        else
            fputc(*p, out);
    }
    fputc('\'', out);
}

void run_quote_export(FILE *out, int shell, const char *name, const char *value)
{
    fputs(shell == SHELL_FISH ? "set -gx " : "export ", out);
    fputs(name, out);
    fputc(shell == SHELL_FISH ? ' ' : '=', out);
    quoted(out, shell, value);
    fputc('\n', out);
}

void run_quote_comment(FILE *out, const char *text)
{
    fputs("# ", out);
    for (const char *p = text; *p; p++) {
        fputc(*p, out);
        if (*p == '\n' && p[1])
            fputs("# ", out);
    }
    fputc('\n', out);
}
