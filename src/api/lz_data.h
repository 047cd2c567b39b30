/* SPDX-License-Identifier: MIT
 * A library's exported variables, served by its shim or drop-in
 * (lz_data.c; docs/concepts/generator.md, "Exported variables").
 *
 * The generated <id>_data.c defines each variable with the header's type
 * (or the real library's size), zero, in a writable section, and registers
 * this table from a constructor. Programs bind to that definition, or to the
 * copy a copy relocation made of it in the executable; so does the real
 * library once loaded, since its own references go through the global
 * scope first. Loading fills each variable with the real library's initial
 * value where nobody has written it yet.
 *
 * A function-pointer variable starts as a trampoline: calling through it
 * loads the library and goes on to the function the library put there. Any
 * other variable cannot wait for a call: where a loaded object imports one,
 * the library is loaded by the constructor, before main. Where none does,
 * the library stays unloaded and each variable becomes an indirect function
 * in the shim's dynamic symbol table, so that an object loaded later (a
 * plugin) binds through its resolver: to the shim's variable as every
 * other object, filled first, while still zero, from a copy of the library
 * loaded by then (by the plugin's own dependency). */
#ifndef LZ_DATA_H
#define LZ_DATA_H

#include "base/lz_runtime.h"

/* A variable's definition: exported, in a writable section of its own
 * (const ones too: loading writes their value; one section each, as GCC
 * gives a named section one set of flags). */
#define LZ_VARIABLE(name, ...) \
    __attribute__((visibility("default"), section(".data.lz." #name))) __VA_ARGS__

typedef struct lz_datum {
    const char *name;
    void *addr;          /* &name as this code binds it: the copy programs use */
    size_t size;
    const void *tramp;   /* a function-pointer variable's trampoline; NULL for other data */
    /* What a call through it reaches without the library: its failure value
     * (the spec's, by the function's return type); NULL: the process stops
     * with the report (lz_stop), no value being known not to mean success. */
    lz_fn fail;
    /* Its resolver, once it is an indirect function: lz_data_bind for this
     * item (NULL for a function-pointer variable, which needs none). */
    void *(*resolve)(void);
} lz_datum;

/* One generated file's variables: the function pointers (each with its
 * trampoline) or the others, never both, so that a static program that
 * uses only function pointers does not link the constructor that loads. */
typedef struct lz_data {
    const lz_datum *items;
    size_t n;
    int hooks;           /* the function pointers' table */
    /* The names of the variables that are not trampolines, sorted (strcmp):
     * the imports that make the constructor load the library. */
    const char *const *loaded_at_start;
    size_t nstart;
    /* The SONAME of the shim or drop-in this table is built into; code
     * linked into another object (the static shim) was pulled in by a
     * reference to one of the variables. */
    const char *soname;
    /* Per item: once a resolver filled it from a copy of the library
     * (lz_data_bind), a mark of the bytes it wrote (0: not filled so): never
     * filled so again, and the load takes it for not written (fills it from
     * the library it loaded) only while it still holds those bytes (NULL for
     * the function pointers). */
    unsigned long long *filled;
} lz_data;

/* Registers data for lib, then loads lib where a variable that cannot wait
 * is referenced. Called once, by the generated constructor. From then on,
 * loading the library fills the variables before it is published (each
 * one still as the shim defined it takes the library's initial value), so
 * that no thread runs the library's code before they hold its values. */
LZ_HIDDEN void lz_data_start(const lz_lib *lib, const lz_data *data);

/* What a later reference to item i of lib's variables binds to (the
 * resolver's answer, lz_datum.resolve): the shim's variable, filled first,
 * once, where still zero and the shim has not loaded the library nor is
 * loading a file, from the bytes no relocation writes of a copy of the
 * library already loaded, where they are not all zero. Runs inside the
 * dynamic linker, under its lock. */
LZ_HIDDEN void *lz_data_bind(const lz_lib *lib, size_t i);

/* The function to go on to from trampoline i of the function pointers'
 * table (the assembly trampoline's helper): the library's, once loaded;
 * else its failure (lz_datum.fail), or the process stops with the report. */
LZ_HIDDEN lz_fn lz_data_call(const lz_lib *lib, size_t i);

#endif
