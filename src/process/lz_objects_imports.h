/* SPDX-License-Identifier: MIT
 * The names the loaded objects import from a library (lz_objects_imports.c):
 * what the loaded library will have to serve. */
#ifndef LZ_OBJECTS_IMPORTS_H
#define LZ_OBJECTS_IMPORTS_H

#include "base/lz_runtime.h"

/* Mark in marks[i] (lib->nsyms entries) every name of lib that a loaded
 * object needing the library (one of its sonames, or this shim, in its
 * DT_NEEDED) imports: an undefined, non-weak symbol of its dynamic symbol
 * table. The names the loaded library will have to serve. */
LZ_HIDDEN void lz_objects_imports(const lz_lib *lib, unsigned char *marks);
/* The first such object importing name (malloc'd), or NULL; the object
 * holding caller first, where caller (a call's return address: the call
 * site, whose object ld.so's lazy binding names) is not NULL and that
 * object imports it; version (or
 * NULL): the version its reference asks for (malloc'd; NULL for none);
 * program (or NULL): whether that object is the program; lazy (or NULL):
 * whether it was loaded at start (the program's DT_NEEDED closure, or
 * LD_PRELOAD's) without DF_BIND_NOW or DF_1_NOW, so that ld.so binds its
 * calls when first made (an object dlopen loaded was bound in a mode not
 * known here: Python's RTLD_NOW). */
LZ_HIDDEN char *lz_objects_importer(const lz_lib *lib, const char *name, const void *caller,
                                    char **version, int *program, int *lazy);

/* The first loaded object other than this code's that needs soname
 * (DT_NEEDED) and imports one of names (n, sorted by strcmp): its name as
 * the dynamic linker has it ("the program" for the executable), NULL for
 * none. */
LZ_HIDDEN const char *lz_objects_import_any(const char *soname, const char *const *names, size_t n);

#endif
