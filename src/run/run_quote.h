/* SPDX-License-Identifier: MIT
 * lazynccl-run --print-env's output (run_quote.c): assignments that a
 * shell's eval turns back into exactly the values given, whatever they hold
 * (quotes, $, backticks, newlines). */
#ifndef RUN_QUOTE_H
#define RUN_QUOTE_H

#include <stdio.h>

/* The shells whose syntax is written: POSIX (sh, bash, zsh, ksh, dash) and
 * fish. -1 for a name not known. */
int run_quote_shell(const char *name);
/* One assignment that exports name=value in shell (run_quote_shell's). */
void run_quote_export(FILE *out, int shell, const char *name, const char *value);
/* A comment line. */
void run_quote_comment(FILE *out, const char *text);

#endif
