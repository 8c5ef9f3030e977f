/* SPDX-License-Identifier: GPL-2.0 */
/* Shim: compiler attributes and ONCE accessors. */
#ifndef _SHIM_LINUX_COMPILER_H
#define _SHIM_LINUX_COMPILER_H

#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)
#undef __always_inline
#define __always_inline		inline __attribute__((__always_inline__))
#define noinline		__attribute__((__noinline__))
#define __maybe_unused		__attribute__((__unused__))
#define __always_unused		__attribute__((__unused__))
#define __must_check		__attribute__((__warn_unused_result__))
#define __cold			__attribute__((__cold__))
#define __printf(a, b)		__attribute__((__format__(printf, a, b)))
#define __aligned(x)		__attribute__((__aligned__(x)))
#define __packed		__attribute__((__packed__))
#define __pure			__attribute__((__pure__))
#define fallthrough		__attribute__((__fallthrough__))
#define __init
#define __exit
#define __read_mostly
#define __rcu

#define barrier()		__asm__ __volatile__("" : : : "memory")

/*
 * Relaxed atomic accesses: a single, untorn load or store the compiler
 * may not elide or repeat, like the kernel's volatile accesses, and
 * visible to ThreadSanitizer as atomic.
 */
#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)
#define WRITE_ONCE(x, val)	__atomic_store_n(&(x), (val), __ATOMIC_RELAXED)

/*
 * A plain access that races by design (the kernel's data_race(), which
 * KCSAN ignores): ThreadSanitizer is told to ignore it too.
 */
#ifdef __SANITIZE_THREAD__
void AnnotateIgnoreReadsBegin(const char *file, int line);
void AnnotateIgnoreReadsEnd(const char *file, int line);
void AnnotateIgnoreWritesBegin(const char *file, int line);
void AnnotateIgnoreWritesEnd(const char *file, int line);
#define data_race(expr) ({						\
	AnnotateIgnoreReadsBegin(__FILE__, __LINE__);			\
	AnnotateIgnoreWritesBegin(__FILE__, __LINE__);			\
	__auto_type __v = (expr);					\
	AnnotateIgnoreWritesEnd(__FILE__, __LINE__);			\
	AnnotateIgnoreReadsEnd(__FILE__, __LINE__);			\
	__v;								\
})
#else
#define data_race(expr)		(expr)
#endif

#ifndef static_assert
#define static_assert(expr, ...) _Static_assert(expr, #expr)
#endif

#endif
