# trawl - one non-recursive GNU Makefile.
#   make                 library (static + shared) and the trawl binary
#   make check           unit + end-to-end tests (installs Debian deps first),
#                        J=N files at a time (default: the CPUs), T=pattern
#   make adverse         the tests under nice 19, busy CPUs, one CPU, tracefs
#                        elsewhere and no TSC (ADVERSE="busy onecpu" for some)
#   make bench           benchmarks against the anchors (babeltrace2, ...)
#   make demo            a small cluster on this machine (namespaces), recorded, synchronized, shown
#   make fuzz            builds the fuzz targets (clang libFuzzer)
#   make fuzz-run        builds them and runs each for FUZZ_SECONDS (default
#                        60) on a copy of its corpus, one at a time; fails on
#                        a crash (FUZZ_TARGETS="stream config" for some)
#   make install PREFIX=/usr/local [DESTDIR=...]
# Options: O=DIR (out-of-tree build), V=1 (verbose), SAN=address,undefined
# or SAN=thread, WERROR=1 (warnings are errors; the default when CI=true).

VERSION := 0.1.0
SOVER := 0
PREFIX ?= /usr/local
O ?= build
SRC := $(patsubst %/,%,$(dir $(abspath $(lastword $(MAKEFILE_LIST)))))

CC ?= cc
OPT ?= -O2 -g
WARN := -Wall -Wextra -Wshadow -Wstrict-prototypes -Wmissing-prototypes \
	-Wno-unused-parameter -Wformat=2 -Wvla
# CI (which sets CI=true) treats warnings as errors.
ifeq ($(CI),true)
WERROR ?= 1
endif
ifeq ($(WERROR),1)
WARN += -Werror
endif
O_BASE := $(O)
comma := ,
ifneq ($(SAN),)
OPT := -O1 -g -fno-omit-frame-pointer
SANFLAGS := -fsanitize=$(SAN)
ifneq ($(findstring undefined,$(SAN)),)
SANFLAGS += -fno-sanitize-recover=undefined
endif
override O := $(O)-$(subst $(comma),-,$(SAN))
endif
CPPFLAGS += -I$(SRC)/include -I$(SRC)/lib -D_GNU_SOURCE -DTRAWL_VERSION='"$(VERSION)"'
CFLAGS ?=
CFLAGS += -std=gnu11 $(OPT) $(WARN) -fPIC -fvisibility=hidden -MMD -MP $(SANFLAGS)
LDFLAGS += $(SANFLAGS)
LDLIBS += -lpthread -lm

# Only the trawl binary (kernel recording, eBPF) links these; libtrawl stays
# free of them, so a traced application pulls in nothing more.
CLI_PKGS := libtracefs libtraceevent libbpf
CLI_PKG_CFLAGS := $(shell pkg-config --cflags $(CLI_PKGS) 2>/dev/null)
CLI_LDLIBS := $(shell pkg-config --libs $(CLI_PKGS) 2>/dev/null)
# trawl top's full screen (cli/top-tui.c): ncurses, in the binary only
TUI_CFLAGS := $(shell pkg-config --cflags ncurses 2>/dev/null)
TUI_LDLIBS := $(or $(shell pkg-config --libs ncurses 2>/dev/null),-lncurses)

ifeq ($(V),1)
Q :=
else
Q := @
endif

# lib/kern (the kernel recorder: libtracefs, libtraceevent, libbpf) is an
# archive of its own, libtrawl-kern.a, linked by the trawl binary and the
# tests: libtrawl itself stays free of those libraries, so a traced
# application pulls in nothing more. (*.bpf.c: eBPF programs, mk/bpf.mk)
KERN_SRCS := $(filter-out %.bpf.c,$(sort $(wildcard $(SRC)/lib/kern/*.c)))
# lib/view (trawl view: links zlib) is libtrawl-view.a, see mk/view.mk
VIEW_SRCS := $(sort $(wildcard $(SRC)/lib/view/*.c))
LIB_SRCS := $(filter-out $(KERN_SRCS) $(VIEW_SRCS) %.bpf.c,$(sort $(wildcard $(SRC)/lib/*/*.c)))
CLI_SRCS := $(sort $(wildcard $(SRC)/cli/*.c $(SRC)/cli/*/*.c))
UNIT_SRCS := $(sort $(wildcard $(SRC)/tests/unit/test-*.c))
BENCH_SRCS := $(sort $(wildcard $(SRC)/bench/*.c))
FUZZ_SRCS := $(sort $(wildcard $(SRC)/tests/fuzz/fuzz-*.c))
EXAMPLE_SRCS := $(sort $(wildcard $(SRC)/examples/*.c))

obj = $(patsubst $(SRC)/%.c,$(O)/obj/%.o,$(1))
LIB_OBJS := $(call obj,$(LIB_SRCS))
KERN_OBJS := $(call obj,$(KERN_SRCS))
CLI_OBJS := $(call obj,$(CLI_SRCS))
UNIT_BINS := $(patsubst $(SRC)/tests/unit/%.c,$(O)/tests/%,$(UNIT_SRCS))
BENCH_BINS := $(patsubst $(SRC)/bench/%.c,$(O)/bench/%,$(BENCH_SRCS))
FUZZ_BINS := $(patsubst $(SRC)/tests/fuzz/%.c,$(O)/fuzz/%,$(FUZZ_SRCS))
REPLAY_BINS := $(patsubst $(SRC)/tests/fuzz/fuzz-%.c,$(O)/tests/replay-fuzz-%,$(FUZZ_SRCS))
EXAMPLE_BINS := $(patsubst $(SRC)/examples/%.c,$(O)/examples/%,$(EXAMPLE_SRCS))

STATIC := $(O)/libtrawl.a
KSTATIC := $(O)/libtrawl-kern.a
VSTATIC := $(O)/libtrawl-view.a
SHARED := $(O)/libtrawl.so.$(SOVER)
TRAWL := $(O)/trawl

.PHONY: all bin check adverse test unit e2e bench bench-run demo demo-run fuzz fuzz-run install clean deps examples
all: $(STATIC) $(SHARED) $(TRAWL) $(O)/trawl.pc $(UNIT_BINS) $(REPLAY_BINS) $(EXAMPLE_BINS)

$(O)/obj/%.o: $(SRC)/%.c
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  CC      $*.c")
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

bin: $(TRAWL)

$(CLI_OBJS): CPPFLAGS += -I$(SRC)/cli $(CLI_PKG_CFLAGS)
$(call obj,$(SRC)/cli/top-tui.c): CPPFLAGS += $(TUI_CFLAGS)
# trawl help: the pages of the source tree built from, wherever O= put the binary
$(call obj,$(SRC)/cli/trawl.c): CPPFLAGS += -DTRAWL_SRC_MANDIR='"$(SRC)/docs/man"'
$(KERN_OBJS): CPPFLAGS += $(CLI_PKG_CFLAGS)

$(KSTATIC): $(KERN_OBJS)
	@$(if $(Q),echo "  AR      $(notdir $@)")
	$(Q)rm -f $@ && ar rcs $@ $^

$(STATIC): $(LIB_OBJS)
	@$(if $(Q),echo "  AR      $(notdir $@)")
	$(Q)rm -f $@ && ar rcs $@ $^

$(SHARED): $(LIB_OBJS) $(SRC)/lib/libtrawl.map
	@$(if $(Q),echo "  LD      $(notdir $@)")
	$(Q)$(CC) -shared -Wl,-soname,libtrawl.so.$(SOVER) -Wl,--version-script=$(SRC)/lib/libtrawl.map \
		$(LDFLAGS) -o $@ $(LIB_OBJS) $(LDLIBS)
	$(Q)ln -sf libtrawl.so.$(SOVER) $(O)/libtrawl.so

$(TRAWL): $(CLI_OBJS) $(KSTATIC) $(VSTATIC) $(STATIC)
	@$(if $(Q),echo "  LD      $(notdir $@)")
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(KSTATIC) $(VSTATIC) $(STATIC) $(CLI_LDLIBS) $(VIEW_LDLIBS) $(TUI_LDLIBS) $(LDLIBS)

$(O)/tests/%: $(SRC)/tests/unit/%.c $(STATIC) $(SRC)/tests/unit/tap.h
	@mkdir -p $(dir $@)
	@$(if $(Q),echo "  TEST    $*")
	$(Q)$(CC) $(CPPFLAGS) -I$(SRC)/tests/unit $(CFLAGS) $(LDFLAGS) -o $@ $< $(STATIC) $(LDLIBS)

# tests of lib/kern link libtrawl-kern.a: test-kpage (the page iterator against
# libtraceevent's), test-kfamily (the kernel event families, the converter),
# test-tcpcap (the eBPF TCP capture, embedded), test-pathjoin (the file names'
# join)
KERN_TESTS := $(addprefix $(O)/tests/,test-kpage test-kfamily test-tcpcap test-pathjoin)
$(KERN_TESTS): CPPFLAGS += $(CLI_PKG_CFLAGS)
$(KERN_TESTS): $(KSTATIC)
$(KERN_TESTS): LDLIBS := $(KSTATIC) $(STATIC) $(CLI_LDLIBS) $(LDLIBS)

# Fuzz targets of lib/kern link the one object they test (libtrawl-kern.a
# would bring libtracefs, libtraceevent and libbpf): FUZZ_KERN_name.
FUZZ_KERN_pathjoin := $(SRC)/lib/kern/pathjoin.c
$(O)/tests/replay-fuzz-pathjoin: $(call obj,$(FUZZ_KERN_pathjoin))
$(O)/fuzz/fuzz-pathjoin: $(FUZZ_KERN_pathjoin)

# (the target's own source last: -MMD keeps the last source's dependencies)
$(O)/tests/replay-fuzz-%: $(SRC)/tests/fuzz/fuzz-%.c $(SRC)/tests/fuzz/replay.c $(STATIC)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $(SRC)/tests/fuzz/replay.c \
		$(call obj,$(FUZZ_KERN_$*)) $< $(STATIC) $(LDLIBS)

# Benchmarks: loops aligned to 64 bytes (also lttng-ust's in bench/ust.sh),
# so that a nanosecond loop is not timed by where the linker put it.
BENCH_CFLAGS := -falign-loops=64
$(O)/bench/%: $(SRC)/bench/%.c $(STATIC)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(BENCH_CFLAGS) $(LDFLAGS) -o $@ $< $(STATIC) $(LDLIBS)

$(O)/examples/%: $(SRC)/examples/%.c $(STATIC)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) -o $@ $< $(STATIC) $(LDLIBS)

# Fuzz targets: clang with libFuzzer; `make fuzz` builds them, the test suite
# replays their seed corpora through the normal (sanitized) build instead.
FUZZ_CC ?= clang
$(O)/fuzz/%: $(SRC)/tests/fuzz/%.c $(LIB_SRCS)
	@mkdir -p $(dir $@)
	$(Q)$(FUZZ_CC) -g -O1 -fsanitize=fuzzer,address,undefined -I$(SRC)/include -I$(SRC)/lib \
		-D_GNU_SOURCE -DTRAWL_VERSION='"$(VERSION)"' -o $@ $< $(FUZZ_KERN_$(*:fuzz-%=%)) $(LIB_SRCS) -lpthread -lm
fuzz: $(FUZZ_BINS)
# (the corpus copies, logs and any crash input: $(O)/fuzz-run/NAME/)
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?=
fuzz-run: fuzz
	$(Q)sh $(SRC)/scripts/fuzz-run.sh $(O)/fuzz $(SRC)/tests/fuzz/corpus $(O)/fuzz-run \
		'$(FUZZ_SECONDS)' $(FUZZ_TARGETS)

$(O)/trawl.pc: $(SRC)/lib/trawl.pc.in
	@mkdir -p $(dir $@)
	$(Q)sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' $< > $@

deps:
	$(Q)sh $(SRC)/scripts/install-deps.sh

# The test suite: TAP unit programs and tNNNN-*.sh end-to-end scripts; prints
# "N passed, N failed, N skipped" and fails if anything failed.
check: deps
	$(Q)$(MAKE) --no-print-directory -f $(SRC)/Makefile O=$(O_BASE) all
	$(Q)TRAWL_BUILD=$(abspath $(O)) TRAWL_SRC=$(SRC) TRAWL_SAN=$(SAN) \
		TRAWL_MAKE_ARGS='O=$(abspath $(O_BASE)) SAN=$(SAN)' sh $(SRC)/tests/run.sh
test: check

# The suite under each adverse condition (nice 19, busy CPUs, one CPU,
# tracefs elsewhere, no TSC): tests/adverse.sh. Not part of check (~10 min).
adverse: deps
	$(Q)$(MAKE) --no-print-directory -f $(SRC)/Makefile O=$(O_BASE) all
	$(Q)TRAWL_BUILD=$(abspath $(O)) TRAWL_SRC=$(SRC) TRAWL_SAN=$(SAN) \
		TRAWL_MAKE_ARGS='O=$(abspath $(O_BASE)) SAN=$(SAN)' sh $(SRC)/tests/adverse.sh $(ADVERSE)

# bench: the reader, writer and sync figures (bench/run.sh), the user-space
# tracepoints against lttng-ust (bench/ust.sh), kernel recording against
# trace-cmd and perf (bench/kernel.sh); BENCH=run, ust or kernel runs one.
# Others, run by name (BENCH=analyze, state, view, export or cluster): the
# analyses against lttng-analyses, the state system's cost, the view in
# chromium against chrome://tracing JSON, the exports, the relay against
# lttng-relayd and the cluster's start (bench/README.md).
BENCH ?= run ust kernel
# (deps first, then a new make: pkg-config must see the installed packages)
bench: deps
	$(Q)$(MAKE) --no-print-directory -f $(SRC)/Makefile O=$(O_BASE) SAN=$(SAN) bench-run
bench-run: all $(BENCH_BINS)
	$(Q)for b in $(BENCH); do \
		TRAWL_BUILD=$(abspath $(O)) TRAWL_SRC=$(SRC) sh $(SRC)/bench/$$b.sh || exit 1; \
	done

demo: deps
	$(Q)$(MAKE) --no-print-directory -f $(SRC)/Makefile O=$(O_BASE) SAN=$(SAN) demo-run
demo-run: all
	$(Q)TRAWL_BUILD=$(abspath $(O)) TRAWL_SRC=$(SRC) sh $(SRC)/scripts/demo.sh

examples: $(EXAMPLE_BINS)

# systemd units (dist/systemd): the agent's and the relay's
SYSTEMDUNITDIR ?= $(PREFIX)/lib/systemd/system

install: all
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(PREFIX)/lib/pkgconfig \
		$(DESTDIR)$(PREFIX)/include/trawl $(DESTDIR)$(PREFIX)/share/man/man1 \
		$(DESTDIR)$(PREFIX)/share/man/man3
	install -m 755 $(TRAWL) $(DESTDIR)$(PREFIX)/bin/trawl
	install -m 644 $(STATIC) $(DESTDIR)$(PREFIX)/lib/
	install -m 755 $(SHARED) $(DESTDIR)$(PREFIX)/lib/
	ln -sf libtrawl.so.$(SOVER) $(DESTDIR)$(PREFIX)/lib/libtrawl.so
	install -m 644 $(SRC)/include/trawl/*.h $(DESTDIR)$(PREFIX)/include/trawl/
	sed -e 's|@PREFIX@|$(PREFIX)|g' -e 's|@VERSION@|$(VERSION)|g' $(SRC)/lib/trawl.pc.in \
		> $(DESTDIR)$(PREFIX)/lib/pkgconfig/trawl.pc
	install -m 644 $(SRC)/docs/man/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -m 644 $(SRC)/docs/man/*.3 $(DESTDIR)$(PREFIX)/share/man/man3/
	install -d $(DESTDIR)$(SYSTEMDUNITDIR)
	for u in $(SRC)/dist/systemd/*.service; do \
		sed -e 's|@PREFIX@|$(PREFIX)|g' $$u > $(DESTDIR)$(SYSTEMDUNITDIR)/$${u##*/} || exit 1; \
	done

clean:
	rm -rf $(O)

# Rules of parts with build steps of their own (generated files).
include $(sort $(wildcard $(SRC)/mk/*.mk))

-include $(shell find $(O)/obj $(O)/tests -name '*.d' 2>/dev/null)
