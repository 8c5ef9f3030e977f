/* SPDX-License-Identifier: GPL-2.0 */
/* Shim: swab() of an unsigned long, as in include/uapi/linux/swab.h. */
#ifndef _SHIM_LINUX_SWAB_H
#define _SHIM_LINUX_SWAB_H

#define swab(x)	((unsigned long)__builtin_bswap64((unsigned long)(x)))

#endif
