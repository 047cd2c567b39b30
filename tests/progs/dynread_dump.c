/* SPDX-License-Identifier: MIT
 * Print what src/lz_dynread.c reads of a file, for comparison with binutils:
 *   dynread_dump FILE  ->  class=C machine=M native=N soname=S glibc=G
 *                          then one defined dynamic symbol per line
 *   or: error=REASON (exit 1) */
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lz_dynread.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        return 2;
    int fd = open(argv[1], O_RDONLY | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0) {
        perror(argv[1]);
        return 2;
    }
    lz_dyn d;
    char why[512];
    if (lz_dyn_read(fd, sb.st_size, &d, why, sizeof why) != 0) {
        printf("error=%s\n", why);
        return 1;
    }
    char soname[256] = "";
    int has = lz_dyn_soname(fd, soname, sizeof soname);
    printf("class=%d machine=%u native=%d soname=%s glibc=%s soname_only=%s\n", d.elf_class,
           d.machine, d.native, d.soname[0] ? d.soname : "-", d.glibc[0] ? d.glibc : "-",
           has ? soname : "-");
    for (size_t i = 0; i < d.nnames; i++)
        printf("%s\n", d.names[i]);
    lz_dyn_free(&d);
    close(fd);
    return 0;
}
