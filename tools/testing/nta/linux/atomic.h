/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shim: atomic_t and pointer xchg/cmpxchg on __atomic builtins.  Plain
 * read/set are relaxed; value-returning read-modify-writes are fully
 * ordered (seq_cst), as Documentation/atomic_t.txt requires.
 */
#ifndef _SHIM_LINUX_ATOMIC_H
#define _SHIM_LINUX_ATOMIC_H

#include <linux/types.h>
#include <asm/barrier.h>

#define atomic_read(v)		__atomic_load_n(&(v)->counter, __ATOMIC_RELAXED)
#define atomic_set(v, i)	__atomic_store_n(&(v)->counter, (i), __ATOMIC_RELAXED)
#define atomic_read_acquire(v)	__atomic_load_n(&(v)->counter, __ATOMIC_ACQUIRE)
#define atomic_set_release(v, i) __atomic_store_n(&(v)->counter, (i), __ATOMIC_RELEASE)

static inline void atomic_add(int i, atomic_t *v)
{
	__atomic_fetch_add(&v->counter, i, __ATOMIC_RELAXED);
}

static inline void atomic_sub(int i, atomic_t *v)
{
	__atomic_fetch_sub(&v->counter, i, __ATOMIC_RELAXED);
}

static inline void atomic_inc(atomic_t *v)
{
	atomic_add(1, v);
}

static inline void atomic_dec(atomic_t *v)
{
	atomic_sub(1, v);
}

static inline int atomic_add_return(int i, atomic_t *v)
{
	return __atomic_add_fetch(&v->counter, i, __ATOMIC_SEQ_CST);
}

static inline int atomic_sub_return(int i, atomic_t *v)
{
	return __atomic_sub_fetch(&v->counter, i, __ATOMIC_SEQ_CST);
}

static inline int atomic_inc_return(atomic_t *v)
{
	return atomic_add_return(1, v);
}

static inline int atomic_dec_return(atomic_t *v)
{
	return atomic_sub_return(1, v);
}

static inline bool atomic_dec_and_test(atomic_t *v)
{
	return atomic_dec_return(v) == 0;
}

static inline int atomic_fetch_add(int i, atomic_t *v)
{
	return __atomic_fetch_add(&v->counter, i, __ATOMIC_SEQ_CST);
}

static inline int atomic_xchg(atomic_t *v, int new)
{
	return __atomic_exchange_n(&v->counter, new, __ATOMIC_SEQ_CST);
}

static inline int atomic_cmpxchg(atomic_t *v, int old, int new)
{
	__atomic_compare_exchange_n(&v->counter, &old, new, false,
				    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
	return old;
}

static inline bool atomic_try_cmpxchg(atomic_t *v, int *old, int new)
{
	return __atomic_compare_exchange_n(&v->counter, old, new, false,
					   __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);
}

#define xchg(ptr, new)	__atomic_exchange_n((ptr), (new), __ATOMIC_SEQ_CST)
#define cmpxchg(ptr, old, new) ({					\
	__typeof__(*(ptr)) __old = (old);				\
	__atomic_compare_exchange_n((ptr), &__old, (new), false,	\
				    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED);\
	__old; })
#define try_cmpxchg(ptr, oldp, new)					\
	__atomic_compare_exchange_n((ptr), (oldp), (new), false,	\
				    __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)

#endif
