/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shim: single-bit operations.  The __ forms are plain read-modify-write;
 * set_bit/clear_bit/test_and_*_bit are atomic (seq_cst __atomic builtins,
 * at least as strong as the kernel's fully ordered value-returning
 * atomics).
 */
#ifndef _SHIM_LINUX_BITOPS_H
#define _SHIM_LINUX_BITOPS_H

#include <linux/types.h>
#include <linux/bits.h>

static inline void __set_bit(unsigned long nr, volatile unsigned long *addr)
{
	unsigned long *p = (unsigned long *)addr + BIT_WORD(nr);

	*p |= BIT_MASK(nr);
}

static inline void __clear_bit(unsigned long nr, volatile unsigned long *addr)
{
	unsigned long *p = (unsigned long *)addr + BIT_WORD(nr);

	*p &= ~BIT_MASK(nr);
}

static inline bool test_bit(unsigned long nr, const volatile unsigned long *addr)
{
	const unsigned long *p = (const unsigned long *)addr + BIT_WORD(nr);

	return (__atomic_load_n(p, __ATOMIC_RELAXED) >> (nr % BITS_PER_LONG)) & 1;
}

static inline void set_bit(unsigned long nr, volatile unsigned long *addr)
{
	__atomic_fetch_or((unsigned long *)addr + BIT_WORD(nr), BIT_MASK(nr),
			  __ATOMIC_RELAXED);
}

static inline void clear_bit(unsigned long nr, volatile unsigned long *addr)
{
	__atomic_fetch_and((unsigned long *)addr + BIT_WORD(nr), ~BIT_MASK(nr),
			   __ATOMIC_RELAXED);
}

static inline bool test_and_set_bit(unsigned long nr, volatile unsigned long *addr)
{
	unsigned long old = __atomic_fetch_or((unsigned long *)addr + BIT_WORD(nr),
					      BIT_MASK(nr), __ATOMIC_SEQ_CST);

	return (old & BIT_MASK(nr)) != 0;
}

/* Release ordering: earlier accesses complete before the bit clears. */
static inline void clear_bit_unlock(unsigned long nr, volatile unsigned long *addr)
{
	__atomic_fetch_and(&addr[BIT_WORD(nr)], ~BIT_MASK(nr), __ATOMIC_RELEASE);
}

static inline bool test_and_clear_bit(unsigned long nr, volatile unsigned long *addr)
{
	unsigned long old = __atomic_fetch_and((unsigned long *)addr + BIT_WORD(nr),
					       ~BIT_MASK(nr), __ATOMIC_SEQ_CST);

	return (old & BIT_MASK(nr)) != 0;
}

static inline bool __test_and_set_bit(unsigned long nr, volatile unsigned long *addr)
{
	bool old = test_bit(nr, addr);

	__set_bit(nr, addr);
	return old;
}

static inline bool __test_and_clear_bit(unsigned long nr, volatile unsigned long *addr)
{
	bool old = test_bit(nr, addr);

	__clear_bit(nr, addr);
	return old;
}

/* Index of the lowest/highest set bit; undefined for 0, as in the kernel. */
static inline unsigned long __ffs(unsigned long word)
{
	return __builtin_ctzl(word);
}

static inline unsigned long __fls(unsigned long word)
{
	return BITS_PER_LONG - 1 - __builtin_clzl(word);
}

static inline unsigned long ffz(unsigned long word)
{
	return __ffs(~word);
}

static inline int fls(unsigned int x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

static inline int fls64(u64 x)
{
	return x ? 64 - __builtin_clzll(x) : 0;
}

static inline unsigned int hweight_long(unsigned long w)
{
	return __builtin_popcountl(w);
}

#endif
