/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SHIM_LINUX_STRING_H
#define _SHIM_LINUX_STRING_H
#include <string.h>
#include <linux/stddef.h>
#include <linux/types.h>

/*
 * memchr_inv - find the first byte in [start, start + bytes) that is not
 * @c; NULL if there is none.  Word at a time, as the debug build checks
 * whole free chunks with it.
 */
static inline void *memchr_inv(const void *start, int c, size_t bytes)
{
	const u8 *p = start, *end = p + bytes;
	u64 pat = 0x0101010101010101ULL * (u8)c;

	while (p < end && ((uintptr_t)p & 7)) {
		if (*p != (u8)c)
			return (void *)p;
		p++;
	}
	while (end - p >= 8) {
		u64 w;

		memcpy(&w, p, 8);
		if (w != pat)
			break;
		p += 8;
	}
	for (; p < end; p++)
		if (*p != (u8)c)
			return (void *)p;
	return NULL;
}

/* As the kernel's: clear @obj from the end of @member to its own end. */
#define memset_after(obj, v, member)					\
	memset((u8 *)(obj) + offsetofend(typeof(*(obj)), member), (v),	\
	       sizeof(*(obj)) - offsetofend(typeof(*(obj)), member))
#endif
