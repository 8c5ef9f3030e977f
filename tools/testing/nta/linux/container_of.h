/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SHIM_LINUX_CONTAINER_OF_H
#define _SHIM_LINUX_CONTAINER_OF_H
#include <stddef.h>
#define container_of(ptr, type, member) ({				\
	void *__mptr = (void *)(ptr);					\
	((type *)(__mptr - offsetof(type, member))); })
#endif
