/* SPDX-License-Identifier: MIT */
/* zlib's first call on a thread of the smallest stack a program may ask
 * for (PTHREAD_STACK_MIN), through the static shim's small runtime: prints
 * what zlibVersion returned (the library's version, or the report). */
#include <stdio.h>
#include <zlib.h>

#include "small_thread.h"

static void *first_call(void *arg)
{
    (void)arg;
    printf("zlibVersion: %s\n", zlibVersion());
    return NULL;
}

int main(void)
{
    return on_smallest_stack(first_call);
}
