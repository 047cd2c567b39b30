/* SPDX-License-Identifier: MIT */
/* lz_ldlock.c's search for the dynamic linker's lock, run on a copy of
 * this process's _rtld_global: as it is, then with the two locks that
 * follow the one it finds held (lock word, count, owner and users set, as
 * while a dl_iterate_phdr and a thread's TLS set-up run at once). The
 * lock must be found at the same place both times. Prints "as it is OFF,
 * held OFF" (offsets into _rtld_global; -1: none found). */
#define _GNU_SOURCE
#include "process/lz_ldlock.c"

#include <dlfcn.h>

static unsigned char *copy;
static size_t copy_size;

/* The thread's epoch and the log's callbacks (base/lz_dl.c, lz_log.c). */
unsigned lz_dl_epoch(void)
{
    return 0;
}

int lz_dl_in_search(void)
{
    return 0;
}

unsigned long lz_log_callbacks;

/* The runtime's lookup, answered with the copy. */
void *lz_objects_ldso_symbol(const char *name, size_t *size)
{
    (void)name;
    *size = copy_size;
    return copy;
}

static long offset_found(void)
{
    pthread_mutex_t *m = find_lock();
    return m ? (long)((unsigned char *)m - copy) : -1;
}

int main(void)
{
    Dl_info info;
    const ElfW(Sym) *sym = NULL;
    void *real = dlsym(RTLD_DEFAULT, "_rtld_global");
    if (!real || !dladdr1(real, &info, (void **)&sym, RTLD_DL_SYMENT) || !sym)
        return 2;
    copy_size = sym->st_size;
    copy = malloc(copy_size);
    if (!copy)
        return 2;
    memcpy(copy, real, copy_size);
    long as_is = offset_found();
    if (as_is < 0)
        return 3;
    for (int k = 1; k <= 2; k++) {
        pthread_mutex_t *next = (pthread_mutex_t *)(copy + as_is) + k;
        next->__data.__lock = 1;
        next->__data.__count = 1;
        next->__data.__owner = 4242 + k;
        next->__data.__nusers = 1;
    }
    printf("as it is %ld, held %ld\n", as_is, offset_found());
    return 0;
}
