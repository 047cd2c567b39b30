/* SPDX-License-Identifier: MIT
 * The dynamic linker's lock taken after a first call's search has opened
 * its file and before the library's variables are read (dlsym of each):
 * a worker's first call of SQLite through its shim says, in the log, that
 * it chose its file, and waits there until a plugin's constructor (under
 * the lock, in the main thread's dlopen) holds the lock; the constructor
 * then joins the worker. The main thread then uses SQLite, whose variables
 * must hold the library's values. Built twice:
 *   -DPLUGIN   the plugin: its constructor calls race_holding()
 *   (none)     join_prepare PLUGIN; with -DLZ_SHIM the worker's search is
 *              held as above, else (-lsqlite3) nothing waits
 * Prints what the worker and the main thread got. */
#define _GNU_SOURCE
#include <stdio.h>

#ifdef PLUGIN
void race_holding(void);

__attribute__((constructor)) static void at_load(void)
{
    race_holding();
}
#else
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <sqlite3.h>
#include <string.h>
#ifdef LZ_SHIM
#include <lazysqlite_control.h>
#endif

static sem_t chosen, holding;
static pthread_t worker;

#ifdef LZ_SHIM
static void log_line(void *user, const char *line)
{
    (void)user;
    if (strstr(line, ": chosen")) {
        sem_post(&chosen);
        sem_wait(&holding);
    }
}
#endif

__attribute__((visibility("default"))) void race_holding(void)
{
#ifdef LZ_SHIM
    sem_post(&holding);
    pthread_join(worker, NULL);
#endif
}

static void *work(void *arg)
{
    (void)arg;
    const char *v = sqlite3_libversion();
    printf("worker: %s\n", v ? v : "(null)");
    fflush(stdout);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    sem_init(&chosen, 0, 0);
    sem_init(&holding, 0, 0);
#ifdef LZ_SHIM
    lazysqlite_set_log_callback(log_line, NULL);
#endif
    if (pthread_create(&worker, NULL, work, NULL) != 0)
        return 3;
#ifdef LZ_SHIM
    sem_wait(&chosen);
#else
    pthread_join(worker, NULL);
#endif
    void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return 5;
#ifdef LZ_SHIM
    lazysqlite_set_log_callback(NULL, NULL);
#endif
    sqlite3 *db;
    sqlite3_stmt *st;
    sqlite3_open(":memory:", &db);
    int rc = sqlite3_prepare_v2(db, "select upper('lazy'), 6*7", -1, &st, NULL);
    if (rc)
        printf("main: prepare rc=%d: %s\n", rc, sqlite3_errmsg(db));
    else if (sqlite3_step(st) == SQLITE_ROW)
        printf("main: %s %d\n", sqlite3_column_text(st, 0), sqlite3_column_int(st, 1));
    printf("main: %s\n", sqlite3_libversion());
    return 0;
}
#endif
