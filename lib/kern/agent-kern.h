/* SPDX-License-Identifier: MIT */
/*
 * lib/kern/agent-kern.h - the kernel recorder (krec.h) as an agent's kernel
 * table (struct trawl_agent_kernel, include/trawl/agent.h): what the trawl
 * program passes to its agent, so that `enable -k` sessions record kernel
 * events while libtrawl itself stays free of libtracefs. In libtrawl-kern.a.
 */
#ifndef TRAWL_KERN_AGENT_KERN_H
#define TRAWL_KERN_AGENT_KERN_H

#include "trawl/agent.h"

/*
 * check: root, tracefs mounted, and SYSTEM:EVENT (globs allowed), a bare
 * event name or a preset (sched, syscalls, irq, block, net, kvm) that this
 * kernel offers; create: a krec with the state dump and the tid context;
 * start: the reader thread born with every signal blocked.
 */
extern const struct trawl_agent_kernel trawl_kern_agent_ops;

#endif
