/* SPDX-License-Identifier: MIT
 * The rule lazynccl-run applies to a request for a library a drop-in
 * stands for, defined once for the two places that apply it: the audit
 * module (la_objsearch, lz_audit.c) and the preload redirector (dlopen,
 * lz_redirect.c). tests/model/load.pml models it; docs/concepts/the-same-job.md says it
 * to users. A header of one inline function: the audit module links no C
 * library (lz_sys.h). */
#ifndef LZ_RULE_H
#define LZ_RULE_H

/* What is known about one request, whoever asks it. */
typedef struct lz_rule_request {
    int own;         /* asked by an object holding a lazynccl runtime that may
                      * load this soname (its LZ_NOTE_RUNTIME, lz_note.h) */
    int loading;     /* a drop-in is loading its real library in this thread
                      * (its box's loading_tid): the load and its library's
                      * own dependencies */
    int real_loaded; /* a real copy of the soname is loaded */
} lz_rule_request;

typedef enum lz_rule_answer {
    LZ_RULE_LEAVE,   /* to the dynamic linker, as asked */
    LZ_RULE_REAL,    /* the real copy loaded: one copy for everyone */
    LZ_RULE_DROPIN,  /* the drop-in; by path, it is told the path asked for */
} lz_rule_answer;

static inline lz_rule_answer lz_rule(const lz_rule_request *q)
{
    if (q->own || q->loading)
        return LZ_RULE_LEAVE;
    return q->real_loaded ? LZ_RULE_REAL : LZ_RULE_DROPIN;
}

#endif
