/* SPDX-License-Identifier: MIT
 * Print what src/elf/lz_elffile.c reads of a file, for comparison with binutils:
 *   elffile_dump FILE  ->  class=C machine=M native=N soname=S glibc=G
 *                          then one defined dynamic symbol per line
 *   or: error=REASON (exit 1)
 *   elffile_dump --ask FILE  ->  the same first line, read by looking names
 *                          up (the probe of a library without versioned
 *                          names); then "NAME 0|1" for each name on stdin */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "elf/lz_elffile.h"
#include "elf/lz_elfpeek.h"

static void head(int fd, const lz_elffile *d)
{
    static lz_elfpeek_room room;
    char soname[256] = "";
    int has = lz_elfpeek_soname(&room, fd, soname, sizeof soname);
    printf("class=%d machine=%u native=%d soname=%s glibc=%s soname_only=%s\n", d->elf_class,
           d->machine, d->native, d->soname[0] ? d->soname : "-", d->glibc[0] ? d->glibc : "-",
           has ? soname : "-");
}

/* The names on stdin asked 63 at a time (a list holds at most 64). */
static int ask(int fd, off_t size)
{
    static char lines[64][4096];
    const char *batch[64];
    int n = 0, first = 1, more = 1;
    while (more) {
        more = fgets(lines[n], sizeof lines[n], stdin) != NULL;
        if (more) {
            lines[n][strcspn(lines[n], "\n")] = '\0';
            batch[n] = lines[n];
            n++;
        }
        if (n < 63 && more)
            continue;
        batch[n] = NULL;
        lz_elffile d;
        char why[512];
        if (lz_elffile_read(fd, size, batch, &d, why, sizeof why) != 0) {
            printf("error=%s\n", why);
            return 1;
        }
        if (d.names || d.strings)
            return 3; /* a lookup must read no name table */
        if (first)
            head(fd, &d);
        first = 0;
        for (int i = 0; i < n; i++)
            printf("%s %d\n", batch[i], (int)((d.answers >> i) & 1));
        n = 0;
    }
    return 0;
}

int main(int argc, char **argv)
{
    int asking = argc == 3 && strcmp(argv[1], "--ask") == 0;
    if (argc != 2 && !asking)
        return 2;
    if (asking)
        argv++;
    int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        perror(argv[1]);
        return 2;
    }
    if (asking)
        return ask(fd, sb.st_size);
    lz_elffile d;
    char why[512];
    if (lz_elffile_read(fd, sb.st_size, NULL, &d, why, sizeof why) != 0) {
        printf("error=%s\n", why);
        return 1;
    }
    head(fd, &d);
    for (size_t i = 0; i < d.nnames; i++)
        printf("%s\n", d.names[i]);
    lz_elffile_free(&d);
    close(fd);
    return 0;
}
