/* SPDX-License-Identifier: MIT
 * A plugin whose constructor calls NCCL: it runs in the
 * thread that dlopens it, with the dynamic linker's lock held. It tells the
 * program it has started, waits until the program's first NCCL call is
 * under way (so that call is waiting for the loader lock), then calls. */
#include <nccl.h>
#include <stdio.h>
#include <time.h>

extern volatile int plugin_started, main_calling; /* in the program */
int plugin_rc = -1, plugin_version;

static void pause_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

__attribute__((constructor)) static void plugin_init(void)
{
    __atomic_store_n(&plugin_started, 1, __ATOMIC_RELEASE);
    for (int i = 0; i < 2000 && !__atomic_load_n(&main_calling, __ATOMIC_ACQUIRE); i++)
        pause_ms(1);
    pause_ms(20); /* the program's first call is now inside its search */
    plugin_rc = ncclGetVersion(&plugin_version);
}
