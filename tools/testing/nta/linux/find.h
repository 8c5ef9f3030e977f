/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shim: bitmap searches with the kernel's contract: the index of the
 * found bit, or @size when there is none (including offset >= size).
 * Bits at and beyond @size are never looked at.
 */
#ifndef _SHIM_LINUX_FIND_H
#define _SHIM_LINUX_FIND_H

#include <linux/bitops.h>

static inline unsigned long _shim_find_next(const unsigned long *addr,
					    unsigned long size,
					    unsigned long offset,
					    unsigned long invert)
{
	unsigned long idx, word;

	if (offset >= size)
		return size;
	idx = BIT_WORD(offset);
	word = (addr[idx] ^ invert) & (~0UL << (offset % BITS_PER_LONG));
	while (!word) {
		idx++;
		if (idx * BITS_PER_LONG >= size)
			return size;
		word = addr[idx] ^ invert;
	}
	offset = idx * BITS_PER_LONG + __ffs(word);
	return offset < size ? offset : size;
}

static inline unsigned long find_next_bit(const unsigned long *addr,
					  unsigned long size,
					  unsigned long offset)
{
	return _shim_find_next(addr, size, offset, 0UL);
}

static inline unsigned long find_next_zero_bit(const unsigned long *addr,
					       unsigned long size,
					       unsigned long offset)
{
	return _shim_find_next(addr, size, offset, ~0UL);
}

static inline unsigned long find_first_bit(const unsigned long *addr,
					   unsigned long size)
{
	return find_next_bit(addr, size, 0);
}

static inline unsigned long find_first_zero_bit(const unsigned long *addr,
						unsigned long size)
{
	return find_next_zero_bit(addr, size, 0);
}

static inline unsigned long find_last_bit(const unsigned long *addr,
					  unsigned long size)
{
	unsigned long idx, word;

	if (!size)
		return size;
	idx = BIT_WORD(size - 1);
	word = addr[idx];
	if ((size % BITS_PER_LONG) != 0)
		word &= ~0UL >> (BITS_PER_LONG - size % BITS_PER_LONG);
	for (;;) {
		if (word)
			return idx * BITS_PER_LONG + __fls(word);
		if (!idx)
			return size;
		word = addr[--idx];
	}
}

#define for_each_set_bit(bit, addr, size)				\
	for ((bit) = find_next_bit((addr), (size), 0);			\
	     (bit) < (size);						\
	     (bit) = find_next_bit((addr), (size), (bit) + 1))

#define for_each_clear_bit(bit, addr, size)				\
	for ((bit) = find_next_zero_bit((addr), (size), 0);		\
	     (bit) < (size);						\
	     (bit) = find_next_zero_bit((addr), (size), (bit) + 1))

#endif
