/* SPDX-License-Identifier: MIT
 * Released together, loaded together (lz_release.c): whether a candidate
 * is of the release of the libraries released with it (the spec's peers)
 * that the process has already loaded, and what the policy makes of a
 * candidate that is not (docs/reference/search-order.md, "Released together"). */
#ifndef LZ_RELEASE_H
#define LZ_RELEASE_H

#include "base/lz_runtime.h"

enum { LZ_RELEASE_OFF, LZ_RELEASE_BEST_EFFORT, LZ_RELEASE_STRICT };
/* What a candidate is to a loaded peer, worst last. */
enum { LZ_RELEASE_MATCH, LZ_RELEASE_UNKNOWN, LZ_RELEASE_MISMATCH };

/* The policy lib's release_env names ("strict", "best_effort", "off");
 * best_effort when unset. An unknown value is taken as best_effort, and
 * *bad (when given) set. */
LZ_HIDDEN int lz_release_policy(const lz_lib *lib, int *bad);
LZ_HIDDEN const char *lz_release_policy_name(int policy);

/* The directory of the first loaded peer (the real library, not a
 * drop-in), written to dir: 1 when there is one. */
LZ_HIDDEN int lz_release_peer_dir(const lz_lib *lib, char *dir, size_t size);

/* Judge the file path against every loaded peer: LZ_RELEASE_MATCH when
 * there is none or each is of its release, else the worst finding, with
 * why ("version 12.4.127 is older than NVRTC 13.0.88, loaded from ..."). */
LZ_HIDDEN int lz_release_judge(const lz_lib *lib, const char *path, char *why, size_t size);
/* The same against one peer at the file at (loaded or not: lazynccl-info
 * compares the files each would load). */
LZ_HIDDEN int lz_release_compare(const lz_lib *lib, const lz_peer *peer, const char *path,
                                 const char *at, char *why, size_t size);

/* The version of the file path as its real name or its newest versioned
 * export says ("12.4.127", "13.0"); 0 when neither does. */
LZ_HIDDEN int lz_release_version(const lz_lib *lib, const char *path, char *out, size_t size);

#endif
