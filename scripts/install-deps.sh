#!/bin/sh
# Installs the Debian 12 packages trawl needs to build, test, benchmark and
# run its demo. Safe to run again: it installs only what is missing.
set -eu
pkgs="gcc g++ make pkg-config libc6-dev binutils time clang llvm libclang-rt-14-dev
libtracefs-dev libtraceevent-dev libbpf-dev libelf-dev zlib1g-dev bpftool iproute2
nettle-dev libncurses-dev tmux
rt-tests trace-cmd linux-perf
babeltrace2 lttng-tools liblttng-ust-dev python3
protobuf-compiler python3-lttnganalyses babeltrace
chromium nodejs
prometheus"
missing=""
for p in $pkgs; do
	dpkg -s "$p" >/dev/null 2>&1 || missing="$missing $p"
done
# the browser tests' npm (tests/browser): Debian's, unless node brings its own
command -v npm >/dev/null 2>&1 || missing="$missing npm"
[ -z "$missing" ] && exit 0
SUDO=""
[ "$(id -u)" = 0 ] || SUDO=sudo
echo "install-deps: installing:$missing" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing >&2
