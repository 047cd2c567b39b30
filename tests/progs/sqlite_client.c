/* SPDX-License-Identifier: MIT */
/* SQLite used as its programs use it (tests/test_libraries.py): its
 * variables read and written before any call, then a query. The same source
 * is linked to the shim and to -lsqlite3; the outputs must
 * match. argv[1]: a directory for sqlite3_temp_directory. */
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>

static int row(void *out, int n, char **values, char **names)
{
    (void)names;
    for (int i = 0; i < n; i++)
        fprintf(out, "%s%s", i ? "|" : "", values[i] ? values[i] : "NULL");
    fprintf(out, "\n");
    return 0;
}

int main(int argc, char **argv)
{
    /* Before any call: the library's own values must already be there. */
    printf("sqlite3_version %s\n", sqlite3_version);
    printf("temp_directory %s\n", sqlite3_temp_directory ? sqlite3_temp_directory : "NULL");
    sqlite3_temp_directory = argc > 1 ? argv[1] : "/tmp";
    const char *v = sqlite3_libversion(); /* NULL from the shim when SQLite cannot be had */
    printf("libversion matches %d\n", v && strcmp(v, sqlite3_version) == 0);
    printf("libversion_number %d\n", sqlite3_libversion_number() == SQLITE_VERSION_NUMBER);
    sqlite3 *db = NULL;
    if (sqlite3_open(":memory:", &db) != SQLITE_OK) {
        printf("open failed: %s\n", db ? sqlite3_errmsg(db) : "no memory");
        return 1;
    }
    char *err = NULL;
    /* The library reads the directory the program wrote. */
    int rc = sqlite3_exec(db, "PRAGMA temp_store_directory; CREATE TABLE t(x); "
                              "INSERT INTO t VALUES (1), (2), (40); SELECT sum(x), count(*) FROM t;",
                          row, stdout, &err);
    printf("exec rc %d %s\n", rc, err ? err : "");
    sqlite3_free(err);
    sqlite3_close(db);
    return 0;
}
