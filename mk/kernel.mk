# mk/kernel.mk - the kernel recorder's generated syscall-name table:
# $(O)/gen/kernel-syscalls.h, one `[NR] = "name",` line per __NR_ macro of
# this machine's kernel headers, included by lib/kern/syscalls.c.
KERNEL_SYSCALLS_H := $(O)/gen/kernel-syscalls.h

$(KERNEL_SYSCALLS_H):
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  GEN     gen/kernel-syscalls.h")
	$(Q)echo '#include <asm/unistd.h>' | $(CC) -E -dM -x c - | \
		sed -n 's/^#define __NR_\([a-z0-9_]*\) \([0-9][0-9]*\)$$/\t[\2] = "\1",/p' | \
		sort -t'[' -k2 -n > $@.tmp && mv $@.tmp $@

$(call obj,$(SRC)/lib/kern/syscalls.c): $(KERNEL_SYSCALLS_H)
$(call obj,$(SRC)/lib/kern/syscalls.c): CPPFLAGS += -I$(O)/gen
