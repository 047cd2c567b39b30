/* SPDX-License-Identifier: MIT
 * Running a test's body on a thread of the smallest stack a program may
 * ask for (PTHREAD_STACK_MIN), as a runtime's worker pool may. */
#ifndef LZ_TEST_SMALL_THREAD_H
#define LZ_TEST_SMALL_THREAD_H

#include <limits.h>
#include <pthread.h>
#include <stddef.h>

/* body on such a thread, joined: 0, or 3 when the thread cannot be made. */
static inline int on_smallest_stack(void *(*body)(void *))
{
    pthread_attr_t attr;
    pthread_t thread;
    if (pthread_attr_init(&attr) != 0 || pthread_attr_setstacksize(&attr, PTHREAD_STACK_MIN) != 0 ||
        pthread_create(&thread, &attr, body, NULL) != 0)
        return 3;
    pthread_join(thread, NULL);
    return 0;
}

#endif
