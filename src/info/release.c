/* SPDX-License-Identifier: MIT
 * lazynccl-info: libraries released together (docs/reference/search-order.md), the
 * file each would load judged against the file its peer would load, as if
 * the peer loaded first; shared by --check and --doctor. */
#include "info.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

int info_release_mismatches(const lz_lib *const *libs, const char *const *chosen, int n,
                            info_mismatch_fn each, void *ctx)
{
    int found = 0;
    for (int i = 0; i < n; i++) {
        int policy = lz_release_policy(libs[i], NULL);
        for (const lz_peer *peer = libs[i]->peers;
             policy != LZ_RELEASE_OFF && chosen[i][0] && peer && peer->display; peer++)
            for (int j = i + 1; j < n; j++) {
                char why[2 * PATH_MAX + 256], text[sizeof why + 256];
                if (!chosen[j][0] || strcmp(libs[j]->shim, peer->shim) != 0 ||
                    lz_release_compare(libs[i], peer, chosen[i], chosen[j], why, sizeof why) ==
                        LZ_RELEASE_MATCH)
                    continue;
                snprintf(text, sizeof text, "%s (%s=%s: %s)", why, libs[i]->release_env,
                         lz_release_policy_name(policy),
                         policy == LZ_RELEASE_STRICT ? "refused when it loads second"
                                                     : "another copy is preferred if one is found");
                each(ctx, i, j, policy, text);
                found++;
            }
    }
    return found;
}
