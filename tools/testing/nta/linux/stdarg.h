/* SPDX-License-Identifier: GPL-2.0 */
/* Shim: va_list and friends are the compiler's. */
#ifndef _SHIM_LINUX_STDARG_H
#define _SHIM_LINUX_STDARG_H

#include <stdarg.h>

#endif
