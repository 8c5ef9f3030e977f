/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shim: WARN* print once per call site (for the _ONCE forms) like the
 * kernel, and count every time their condition is true, so tests can
 * assert that a check fired.  BUG() aborts.
 */
#ifndef _SHIM_LINUX_BUG_H
#define _SHIM_LINUX_BUG_H

#include <stdbool.h>
#include <linux/compiler.h>
#include <linux/printk.h>

extern unsigned long shim_warn_count;
void shim_warn(const char *file, int line, const char *cond);
void shim_bug(const char *file, int line, const char *cond) __attribute__((__noreturn__));

#define WARN_ON(condition) ({						\
	int __ret_warn_on = !!(condition);				\
	if (unlikely(__ret_warn_on))					\
		shim_warn(__FILE__, __LINE__, #condition);		\
	unlikely(__ret_warn_on);					\
})

#define WARN(condition, fmt...) ({					\
	int __ret_warn_on = !!(condition);				\
	if (unlikely(__ret_warn_on)) {					\
		printk(fmt);						\
		shim_warn(__FILE__, __LINE__, #condition);		\
	}								\
	unlikely(__ret_warn_on);					\
})

#define WARN_ON_ONCE(condition) ({					\
	static bool __warned;						\
	int __ret_warn_once = !!(condition);				\
	if (unlikely(__ret_warn_once)) {				\
		if (!__warned) {					\
			__warned = true;				\
			shim_warn(__FILE__, __LINE__, #condition);	\
		} else {						\
			shim_warn_count++;				\
		}							\
	}								\
	unlikely(__ret_warn_once);					\
})

#define WARN_ONCE(condition, fmt...) ({					\
	static bool __warned;						\
	int __ret_warn_once = !!(condition);				\
	if (unlikely(__ret_warn_once)) {				\
		if (!__warned) {					\
			__warned = true;				\
			printk(fmt);					\
			shim_warn(__FILE__, __LINE__, #condition);	\
		} else {						\
			shim_warn_count++;				\
		}							\
	}								\
	unlikely(__ret_warn_once);					\
})

#define BUG() shim_bug(__FILE__, __LINE__, "BUG()")
#define BUG_ON(condition) do {						\
	if (unlikely(condition))					\
		shim_bug(__FILE__, __LINE__, #condition);		\
} while (0)

#define BUILD_BUG_ON(condition)						\
	do { _Static_assert(!(condition), "BUILD_BUG_ON(" #condition ")"); } while (0)
#define BUILD_BUG_ON_MSG(condition, msg)				\
	do { _Static_assert(!(condition), msg); } while (0)

#endif
