/* SPDX-License-Identifier: MIT
 * A planted libelf.so.1: its constructor logs (fake_ctor.h) and it exports
 * the names the probe needs, so only where it is found can keep it out. */
#include "fake_ctor.h"

int elf_version(int v) { return v; }
void *elf_begin(int fd, int cmd, void *ref) { (void)fd; (void)cmd; (void)ref; return 0; }
void *gelf_getsym(void *d, int n, void *s) { (void)d; (void)n; (void)s; return 0; }
