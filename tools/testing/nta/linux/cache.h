/* SPDX-License-Identifier: GPL-2.0 */
/* Shim: x86_64's 64-byte L1 cache line. */
#ifndef _SHIM_LINUX_CACHE_H
#define _SHIM_LINUX_CACHE_H
#include <asm/page.h>
#define L1_CACHE_SHIFT		6
#define L1_CACHE_BYTES		(1 << L1_CACHE_SHIFT)
#define SMP_CACHE_BYTES		L1_CACHE_BYTES
#define ____cacheline_aligned	__attribute__((__aligned__(SMP_CACHE_BYTES)))
#define ____cacheline_aligned_in_smp ____cacheline_aligned
#endif
