/* SPDX-License-Identifier: GPL-2.0 */
/* Shim: the poison values of include/linux/poison.h. */
#ifndef _SHIM_LINUX_POISON_H
#define _SHIM_LINUX_POISON_H
#define POISON_POINTER_DELTA	0
#define LIST_POISON1		((void *)0x100 + POISON_POINTER_DELTA)
#define LIST_POISON2		((void *)0x122 + POISON_POINTER_DELTA)
#define POISON_INUSE		0x5a
#define POISON_FREE		0x6b
#define POISON_END		0xa5
#endif
