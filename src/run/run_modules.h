/* SPDX-License-Identifier: MIT
 * The audit module and the redirector a launch names (run_modules.c):
 * beside the drop-ins, or where the user names them; what LD_AUDIT holds. */
#ifndef RUN_MODULES_H
#define RUN_MODULES_H

#include "run_find.h"

/* The audit module and the redirector beside the drop-ins (p->module,
 * p->redirector; "" when absent or not nameable in LD_AUDIT/LD_PRELOAD),
 * and what LD_AUDIT names (p->audit_entry, after p->quiet32). */
void run_modules_find(run_parts *p);
/* LD_AUDIT names the module's node copy (p->node_module) instead of the
 * module, where one can be had: not for a module the user named, nor for
 * the $LIB form. */
void run_modules_nodecopy(run_parts *p);

#endif
