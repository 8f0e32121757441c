# mk/bpf.mk - the eBPF program of `trawl tcpcap` (lib/kern/tcpcap.bpf.c):
# compiled with clang for the BPF target, stripped of DWARF (BTF kept, CO-RE
# needs it) and embedded as a libbpf skeleton, $(O)/gen/tcpcap.skel.h
# (generated, never committed), in lib/kern/tcpcap.o (libtrawl-kern.a), so
# trawl stays one file. Without clang, bpftool or the libbpf headers (or with
# NO_BPF=1), lib/kern/tcpcap.c is built without eBPF support and `trawl
# tcpcap` says so.

BPF_CLANG ?= clang
BPFTOOL ?= $(or $(shell command -v bpftool 2>/dev/null),$(wildcard /usr/sbin/bpftool))
BPF_ARCH := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/i.86/x86/' -e 's/aarch64/arm64/' \
	-e 's/ppc64.*/powerpc/' -e 's/s390x/s390/' -e 's/riscv64/riscv/')
BPF_MULTIARCH := $(shell $(CC) -print-multiarch 2>/dev/null)
BPF_LIBBPF_INC := $(or $(shell pkg-config --variable=includedir libbpf 2>/dev/null),/usr/include)

ifneq ($(NO_BPF),1)
ifneq ($(BPFTOOL),)
ifneq ($(shell command -v $(BPF_CLANG) 2>/dev/null),)
ifneq ($(wildcard $(BPF_LIBBPF_INC)/bpf/bpf_helpers.h),)
TCPCAP_BPF := 1
endif
endif
endif
endif

ifeq ($(TCPCAP_BPF),1)
TCPCAP_GEN := $(O)/gen
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(BPF_ARCH) -Wall \
	-I$(BPF_LIBBPF_INC) $(if $(BPF_MULTIARCH),-I/usr/include/$(BPF_MULTIARCH))

$(TCPCAP_GEN)/tcpcap.bpf.o: $(SRC)/lib/kern/tcpcap.bpf.c $(SRC)/lib/kern/tcpcap-bpf.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  BPF     lib/kern/tcpcap.bpf.c")
	$(Q)$(BPF_CLANG) $(BPF_CFLAGS) -c -o $@.raw $<
	$(Q)$(BPFTOOL) gen object $@ $@.raw
	$(Q)rm -f $@.raw

$(TCPCAP_GEN)/tcpcap.skel.h: $(TCPCAP_GEN)/tcpcap.bpf.o
	@$(if $(Q),echo "  SKEL    tcpcap.skel.h")
	$(Q)$(BPFTOOL) gen skeleton $< name tcpcap_bpf > $@.tmp && mv $@.tmp $@

$(call obj,$(SRC)/lib/kern/tcpcap.c): $(TCPCAP_GEN)/tcpcap.skel.h
$(call obj,$(SRC)/lib/kern/tcpcap.c): CPPFLAGS += -DTRAWL_HAVE_BPF -I$(TCPCAP_GEN)
endif

# The path names of `trawl record -k syscalls` (lib/kern/pathnames.bpf.c,
# docs/kernel.md "File names"): built and embedded the same way, in
# lib/kern/pathnames.o; without eBPF support the recorder writes the
# pointers, as before, and says why.
ifeq ($(TCPCAP_BPF),1)
$(TCPCAP_GEN)/pathnames.bpf.o: $(SRC)/lib/kern/pathnames.bpf.c $(SRC)/lib/kern/pathnames-bpf.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  BPF     lib/kern/pathnames.bpf.c")
	$(Q)$(BPF_CLANG) $(BPF_CFLAGS) -c -o $@.raw $<
	$(Q)$(BPFTOOL) gen object $@ $@.raw
	$(Q)rm -f $@.raw

$(TCPCAP_GEN)/pathnames.skel.h: $(TCPCAP_GEN)/pathnames.bpf.o
	@$(if $(Q),echo "  SKEL    pathnames.skel.h")
	$(Q)$(BPFTOOL) gen skeleton $< name pathnames_bpf > $@.tmp && mv $@.tmp $@

$(call obj,$(SRC)/lib/kern/pathnames.c): $(TCPCAP_GEN)/pathnames.skel.h
$(call obj,$(SRC)/lib/kern/pathnames.c): CPPFLAGS += -DTRAWL_HAVE_BPF -I$(TCPCAP_GEN)
endif
