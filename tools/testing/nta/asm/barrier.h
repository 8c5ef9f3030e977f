/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SHIM_ASM_BARRIER_H
#define _SHIM_ASM_BARRIER_H
#define mb()		__atomic_thread_fence(__ATOMIC_SEQ_CST)
#define rmb()		__atomic_thread_fence(__ATOMIC_SEQ_CST)
#define wmb()		__atomic_thread_fence(__ATOMIC_SEQ_CST)
#define smp_mb()	__atomic_thread_fence(__ATOMIC_SEQ_CST)
#define smp_rmb()	__atomic_thread_fence(__ATOMIC_ACQUIRE)
#define smp_wmb()	__atomic_thread_fence(__ATOMIC_RELEASE)
#define smp_mb__before_atomic()	smp_mb()
#define smp_mb__after_atomic()	smp_mb()
#define smp_store_mb(var, value)	\
	do { __atomic_store_n(&(var), (value), __ATOMIC_RELAXED); smp_mb(); } while (0)
#define smp_load_acquire(p)	__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define smp_store_release(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)
#endif
