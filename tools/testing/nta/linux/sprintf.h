/* SPDX-License-Identifier: GPL-2.0 */
/* Shim: snprintf() and vsnprintf() are libc's. */
#ifndef _SHIM_LINUX_SPRINTF_H
#define _SHIM_LINUX_SPRINTF_H

#include <stdio.h>

#endif
