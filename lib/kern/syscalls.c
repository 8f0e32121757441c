/* SPDX-License-Identifier: MIT */
/*
 * lib/kern/syscalls.c - syscall numbers to names, for raw_syscalls
 * events (syscall_entry_<name>). The table is generated at build time from
 * this machine's kernel headers (mk/kernel.mk); a number it does not know
 * (a syscall newer than the headers) is written as syscall_entry_unknown.
 */
#include <stddef.h>

#include "kern/krec.h"

static const char *const names[] = {
#include "kernel-syscalls.h"
};

const char *tr_krec_syscall_name(long nr)
{
	if (nr < 0 || (size_t)nr >= sizeof(names) / sizeof(names[0]))
		return NULL;
	return names[nr];
}
