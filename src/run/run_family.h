/* SPDX-License-Identifier: MIT
 * The families this launcher serves, as meson.build wrote them into it
 * (run_family.c): each one's id and the stem of its drop-ins' file names. */
#ifndef RUN_FAMILY_H
#define RUN_FAMILY_H

#include <stddef.h>

#define RUN_FAMILY_STEM 256

/* The stem of family id[0..idlen) ("libcublas.so" for cublas) into out: 1,
 * or 0 for no such family. */
int run_family_stem(const char *id, size_t idlen, char *out, size_t size);
/* The stems of the families served unasked, at most max: their count. */
int run_family_stems(char stems[][RUN_FAMILY_STEM], int max);
/* The families this launcher serves unasked (on_request 0), or only when
 * --only names them (1: the suite's test libraries), for messages: "nccl,
 * nvrtc, ..." ("" when none). */
const char *run_family_names(int on_request);

#endif
