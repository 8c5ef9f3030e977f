/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Shim: min/max without the kernel's type checks (a kernel build checks
 * those); arguments are evaluated once.
 */
#ifndef _SHIM_LINUX_MINMAX_H
#define _SHIM_LINUX_MINMAX_H
#define min(x, y) ({ __typeof__(x) _mx = (x); __typeof__(y) _my = (y); \
		     _mx < _my ? _mx : _my; })
#define max(x, y) ({ __typeof__(x) _mx = (x); __typeof__(y) _my = (y); \
		     _mx > _my ? _mx : _my; })
#define min_t(t, x, y) ({ t _mx = (x); t _my = (y); _mx < _my ? _mx : _my; })
#define max_t(t, x, y) ({ t _mx = (x); t _my = (y); _mx > _my ? _mx : _my; })
#define min3(x, y, z) min(min(x, y), z)
#define clamp(v, lo, hi) min(max(v, lo), hi)
#define clamp_t(t, v, lo, hi) min_t(t, max_t(t, v, lo), hi)
#define swap(a, b) do { __typeof__(a) _st = (a); (a) = (b); (b) = _st; } while (0)
#endif
