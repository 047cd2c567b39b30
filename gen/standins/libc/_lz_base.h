/* SPDX-License-Identifier: MIT
 * Shared base of the stand-ins: the scalar typedefs real headers expect. */
#ifndef LZ_STANDIN_BASE_H
#define LZ_STANDIN_BASE_H
typedef unsigned long size_t;
typedef long ssize_t;
typedef long ptrdiff_t;
typedef int wchar_t;
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long uint64_t;
typedef long intptr_t;
typedef unsigned long uintptr_t;
typedef long off_t;
typedef long off64_t;
typedef long time_t;
typedef int mode_t;
typedef unsigned int uid_t;
typedef unsigned int gid_t;
typedef int pid_t;
typedef struct __lz_va_list *va_list;
#define NULL ((void *)0)
#define INT_MIN (-2147483647 - 1)
#define INT_MAX 2147483647
#define UINT_MAX 4294967295U
#define LONG_MAX 9223372036854775807L
#define CHAR_BIT 8
#define PATH_MAX 4096
#endif
