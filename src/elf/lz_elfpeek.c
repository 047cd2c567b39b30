/* SPDX-License-Identifier: MIT
 * The small reads of a file on disk (lz_elfpeek.h). */
#include "elf/lz_elfpeek.h"
#include "elf/lz_elfview.h"
#include "elf/lz_elfverify.h"
#include "common/lz_note.h"

#include <elf.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

_Static_assert(sizeof ((lz_elfpeek_room *)0)->dyn >= LZ_ELFPEEK_NOTE_MAX, "a note segment fits the room's entries");

/* The dynamic segment of an open file of this process's class, byte order
 * and machine, read into the caller's room: the number of entries, 0 when
 * none. */
static size_t peek_read(int fd, lz_elfpeek_room *s, lz_elftags *t)
{
    int elf_class;
    unsigned machine;
    unsigned long long tls;
    struct stat sb;
    if (fstat(fd, &sb) != 0 || sb.st_size <= 0)
        return 0;
    lz_elfview_init(&s->v, fd, (unsigned long long)sb.st_size, s->win, LZ_ELF_WINDOW, 1);
    if (lz_elfview_head(&s->v, &elf_class, &machine, NULL, 0) != 0 || machine != lz_elf_own_machine() ||
        lz_elfview_phdrs(&s->v, s->ph, &tls, NULL, 0) != 0)
        return 0;
    size_t count = lz_elfview_dynamic(&s->v, s->dyn, LZ_ELF_MAX_DYN);
    lz_elfview_tags(s->dyn, count, t);
    return t->has_strtab ? count : 0;
}

/* The string at offset at of the dynamic string table into out: 1 when it
 * fits whole. Through the view's window where it fits one: the names of
 * one object lie together, so a file's DT_NEEDED names cost one read, not
 * one each (a longer string, a run path, is read alone). */
static int peek_string(int fd, lz_elfpeek_room *s, const lz_elftags *t, unsigned long long at, char *out,
                           size_t size)
{
    if (at >= t->strsz || size < 2)
        return 0;
    size_t want = size - 1;
    if (want > t->strsz - at)
        want = (size_t)(t->strsz - at);
    unsigned long long off = lz_elfview_offset(&s->v, t->strtab + at, want);
    if (off == (unsigned long long)-1)
        return 0;
    const void *p = want <= sizeof s->win ? lz_elfview_at(&s->v, off, want) : NULL;
    if (p)
        memcpy(out, p, want);
    else if (want <= sizeof s->win || lz_elfview_pread(fd, out, want, off) != 0)
        return 0;
    out[want] = '\0';
    return strnlen(out, want) < want || want == t->strsz - at;
}

int lz_elfpeek_soname(lz_elfpeek_room *room, int fd, char *out, size_t size)
{
    lz_elftags t;
    return peek_read(fd, room, &t) && t.has_soname && peek_string(fd, room, &t, t.soname, out, size);
}

int lz_elfpeek_needed(lz_elfpeek_room *room, int fd, void (*each)(void *ctx, const char *name), void *ctx)
{
    lz_elftags t;
    size_t count = peek_read(fd, room, &t);
    int n = 0;
    for (size_t i = 0; i < count && room->dyn[i].d_tag != DT_NULL; i++)
        if (room->dyn[i].d_tag == DT_NEEDED) {
            char *name = room->name;
            each(ctx, peek_string(fd, room, &t, room->dyn[i].d_un.d_val, name, sizeof room->name) ? name : NULL);
            n++;
        }
    return n;
}

int lz_elfpeek_run_paths(lz_elfpeek_room *s, int fd, char **rpath, char **runpath)
{
    lz_elftags t;
    size_t count = peek_read(fd, s, &t);
    *rpath = *runpath = NULL;
    int ok = count > 0;
    for (size_t i = 0; i < count && s->dyn[i].d_tag != DT_NULL; i++) {
        char **out = s->dyn[i].d_tag == DT_RPATH ? rpath : s->dyn[i].d_tag == DT_RUNPATH ? runpath : NULL;
        unsigned long long at = s->dyn[i].d_un.d_val;
        if (!out || *out)
            continue;
        /* As long as the string table allows, within a bound a hostile
         * file cannot push past. */
        size_t size = at < t.strsz ? (size_t)(t.strsz - at) + 1 : 0;
        if (size > LZ_ELF_RUN_PATH_MAX)
            size = LZ_ELF_RUN_PATH_MAX;
        if (!size || !(*out = malloc(size)) || !peek_string(fd, s, &t, at, *out, size)) {
            free(*out);
            *out = NULL;
            ok = 0;
        }
    }
    if (!ok) {
        free(*rpath);
        free(*runpath);
        *rpath = *runpath = NULL;
    }
    return ok;
}

int lz_elfpeek_native(lz_elfpeek_room *room, int fd)
{
    ElfW(Ehdr) eh;
    ElfW(Phdr) *ph = room->ph;
    const char *words;
    if (lz_elfview_pread(fd, &eh, sizeof eh, 0) != 0 ||
        lz_elf_verify((const unsigned char *)&eh, sizeof eh, &words) != LZ_LD_MAPS || eh.e_phnum == 0 ||
        eh.e_phnum > LZ_ELF_MAX_PHDRS || lz_elfview_pread(fd, ph, eh.e_phnum * sizeof *ph, eh.e_phoff) != 0)
        return 0; /* ld.so: "object file has no loadable segments", "cannot read file data" */
    int load = 0, dynamic = 0;
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        load |= ph[i].p_type == PT_LOAD;
        dynamic |= ph[i].p_type == PT_DYNAMIC;
    }
    return load && dynamic;
}

struct dropin_query {
    char *soname;
    size_t size;
};

static int dropin_note(unsigned type, const char *desc, size_t size, void *ctx)
{
    struct dropin_query *q = ctx;
    size_t len;
    const char *name = type == LZ_NOTE_DROPIN ? lz_note_dropin_soname(desc, size, &len) : NULL;
    if (!name || len >= q->size)
        return 0;
    memcpy(q->soname, name, len + 1);
    return 1;
}

int lz_elfpeek_dropin(lz_elfpeek_room *s, int fd, char *soname, size_t size)
{
    int elf_class;
    unsigned machine;
    unsigned long long tls;
    struct stat sb;
    struct dropin_query q = {soname, size};
    if (size == 0 || fstat(fd, &sb) != 0 || sb.st_size <= 0)
        return 0;
    lz_elfview_init(&s->v, fd, (unsigned long long)sb.st_size, s->win, LZ_ELF_WINDOW, 1);
    if (lz_elfview_head(&s->v, &elf_class, &machine, NULL, 0) != 0 || machine != lz_elf_own_machine() ||
        lz_elfview_phdrs(&s->v, s->ph, &tls, NULL, 0) != 0)
        return 0;
    for (unsigned i = 0; i < s->v.nph; i++) {
        const ElfW(Phdr) *ph = &s->ph[i];
        /* Ours is a few dozen bytes; a segment past a page is not one. */
        char *note = (char *)s->dyn; /* not read for anything else here */
        if (ph->p_type == PT_NOTE && ph->p_filesz <= LZ_ELFPEEK_NOTE_MAX && ph->p_offset <= s->v.size &&
            ph->p_filesz <= s->v.size - ph->p_offset && lz_elfview_pread(fd, note, ph->p_filesz, ph->p_offset) == 0 &&
            lz_note_each(note, ph->p_filesz, ph->p_align, dropin_note, &q))
            return 1;
    }
    return 0;
}
