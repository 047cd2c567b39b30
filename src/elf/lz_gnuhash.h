/* SPDX-License-Identifier: MIT
 * The GNU hash table's lookup, defined once for the file reader
 * (lz_elffile.c, through pread) and the memory reader (lz_elfmem.c, the
 * audit module's too): how the dynamic linker finds a name. Header-only and
 * free of library calls: the audit module has no C library.
 *
 * The table: nbuckets, symoffset, bloom_size, bloom_shift, the Bloom
 * filter (bloom_size words of the class's size), nbuckets buckets, then one
 * chain word per symbol from symoffset on; a chain word is the symbol's
 * hash with bit 0 set on the last of its chain. */
#ifndef LZ_GNUHASH_H
#define LZ_GNUHASH_H

#include <stdint.h>

static inline __attribute__((unused)) uint32_t lz_gnuhash(const char *name)
{
    uint32_t h = 5381;
    for (const unsigned char *c = (const unsigned char *)name; *c; c++)
        h = h * 33 + *c;
    return h;
}

/* The index of the first symbol named name whose chain word matches and
 * that is (ctx, i) says is name (the caller compares the name, and may
 * refuse a symbol, a hidden version say); -1 when none. word(ctx, k, out)
 * reads the k-th 32-bit word after the Bloom filter (the buckets, then the
 * chains): 0, or -1 when it cannot be read. Symbol indexes stay below
 * limit, a bound a hostile chain without its end bit cannot push past. */
static inline __attribute__((unused)) long long lz_gnuhash_find(uint32_t nbuckets, uint32_t symoffset, const char *name,
                                        int (*word)(void *ctx, unsigned long long k, uint32_t *out),
                                        int (*is)(void *ctx, unsigned long long i), void *ctx,
                                        unsigned long long limit)
{
    uint32_t h = lz_gnuhash(name), w;
    if (!nbuckets || word(ctx, h % nbuckets, &w) || w < symoffset)
        return -1;
    for (unsigned long long i = w; i < limit; i++) {
        if (word(ctx, nbuckets + (i - symoffset), &w))
            return -1;
        if ((w | 1) == (h | 1) && is(ctx, i))
            return (long long)i;
        if (w & 1)
            return -1;
    }
    return -1;
}

#endif
