/* SPDX-License-Identifier: GPL-2.0 */
/* Shim: no KASAN in the harness (its ASan build checks memory instead). */
#ifndef _SHIM_LINUX_KASAN_H
#define _SHIM_LINUX_KASAN_H

static inline void kasan_disable_current(void) {}
static inline void kasan_enable_current(void) {}

#endif
