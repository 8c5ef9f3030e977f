/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shim: printk goes to stdout as a TAP comment ("# ..."), so kernel
 * messages interleave with the test lines, and is counted so a test can
 * assert that the code under test complained.
 */
#ifndef _SHIM_LINUX_PRINTK_H
#define _SHIM_LINUX_PRINTK_H

#include <linux/compiler.h>

#define KERN_EMERG	"<0>"
#define KERN_ALERT	"<1>"
#define KERN_CRIT	"<2>"
#define KERN_ERR	"<3>"
#define KERN_WARNING	"<4>"
#define KERN_NOTICE	"<5>"
#define KERN_INFO	"<6>"
#define KERN_DEBUG	"<7>"
#define KERN_CONT	"<c>"

#ifndef pr_fmt
#define pr_fmt(fmt) fmt
#endif

extern unsigned long shim_printk_count;
extern int shim_printk_quiet;
__printf(1, 2) int printk(const char *fmt, ...);

#define pr_emerg(fmt, ...)	printk(KERN_EMERG pr_fmt(fmt), ##__VA_ARGS__)
#define pr_alert(fmt, ...)	printk(KERN_ALERT pr_fmt(fmt), ##__VA_ARGS__)
#define pr_crit(fmt, ...)	printk(KERN_CRIT pr_fmt(fmt), ##__VA_ARGS__)
#define pr_err(fmt, ...)	printk(KERN_ERR pr_fmt(fmt), ##__VA_ARGS__)
#define pr_warn(fmt, ...)	printk(KERN_WARNING pr_fmt(fmt), ##__VA_ARGS__)
#define pr_notice(fmt, ...)	printk(KERN_NOTICE pr_fmt(fmt), ##__VA_ARGS__)
#define pr_info(fmt, ...)	printk(KERN_INFO pr_fmt(fmt), ##__VA_ARGS__)
#define pr_cont(fmt, ...)	printk(KERN_CONT fmt, ##__VA_ARGS__)
#define pr_debug(fmt, ...)	({ if (0) printk(KERN_DEBUG pr_fmt(fmt), ##__VA_ARGS__); 0; })
#define pr_err_once(fmt, ...)	({ static bool __pr_once; if (!__pr_once) { __pr_once = true; pr_err(fmt, ##__VA_ARGS__); } })
#define pr_warn_once(fmt, ...)	({ static bool __pr_once; if (!__pr_once) { __pr_once = true; pr_warn(fmt, ##__VA_ARGS__); } })
#define pr_warn_ratelimited	pr_warn
#define pr_err_ratelimited	pr_err

#endif
