/* SPDX-License-Identifier: MIT */
/* An empty library: linked into a drop-in under a SONAME its real library
 * needs, it leaves that name in the drop-in's DT_NEEDED (meson.build). */
typedef int lz_needed_stub_unused;
