/* SPDX-License-Identifier: GPL-2.0 */
#ifndef _SHIM_LINUX_STDDEF_H
#define _SHIM_LINUX_STDDEF_H
#include <stddef.h>
#include <stdbool.h>
#endif
