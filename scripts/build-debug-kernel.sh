#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Builds the debug kernel `make check-debug` boots: Debian's linux-source-6.1
# (/usr/src/linux-source-6.1.tar.xz, scripts/install-deps.sh) configured by
# scripts/debug-kernel.config on top of allnoconfig: what the VM and the
# selftests need, built in (the VM loads only mcp.ko), plus lockdep
# (PROVE_LOCKING), KASAN (generic, inline), DEBUG_ATOMIC_SLEEP,
# DEBUG_OBJECTS and fault injection (failslab, fail_page_alloc,
# fail_function), no debug info.
#
# The tree is build/debug-kernel (or OUT); mcp.ko is built against it with
# `make -C build/debug-kernel M=<copy of kmod>`.  The build is skipped when
# OUT/.mcp-stamp names the same source and configuration (the tarball's
# SHA-256, and the SHA-256 of the fragment and this recipe).  A full build takes tens of minutes on two cores (see
# Documentation/testing-vm.rst); it runs under `nice`.
#
# Usage: build-debug-kernel.sh [-o OUT] [-j JOBS] [-f] [-c]
#   -o OUT   the kernel tree (default: build/debug-kernel)
#   -j JOBS  make -j (default: 2)
#   -f       build even when the stamp matches
#   -c       only unpack and configure (check the fragment)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
top=$(dirname "$here")
out=$top/build/debug-kernel
jobs=2
force=0
config_only=0
# Bump when the way the config is derived changes.
recipe=2

usage() {
	sed -n '/^# Usage:/,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

while getopts "o:j:fch" opt; do
	case "$opt" in
	o) out=$OPTARG ;;
	j) jobs=$OPTARG ;;
	f) force=1 ;;
	c) config_only=1 ;;
	*) usage ;;
	esac
done

tarball=/usr/src/linux-source-6.1.tar.xz
fragment=$here/debug-kernel.config
[ -f "$tarball" ] || { echo "build-debug-kernel: $tarball missing (scripts/install-deps.sh)" >&2; exit 1; }

src_hash=$(sha256sum "$tarball" | cut -d' ' -f1)
cfg_hash=$( { cat "$fragment"; echo "recipe=$recipe"; } | sha256sum | cut -d' ' -f1)
stamp_text="source=$src_hash config=$cfg_hash"
stamp=$out/.mcp-stamp
bzimage=$out/arch/x86/boot/bzImage

if [ $force = 0 ] && [ -f "$stamp" ] && [ -f "$bzimage" ] &&
	[ "$(cat "$stamp")" = "$stamp_text" ]; then
	echo "build-debug-kernel: $bzimage is up to date ($(cat "$out/include/config/kernel.release"))"
	exit 0
fi

# A new source (or none yet): unpack it afresh.  Same source, other config:
# keep the tree and let make rebuild what the config change touches.
if [ ! -f "$out/.mcp-source" ] || [ "$(cat "$out/.mcp-source")" != "$src_hash" ]; then
	echo "build-debug-kernel: unpacking $tarball into $out"
	rm -rf "$out"
	mkdir -p "$out"
	tar -xJf "$tarball" -C "$out" --strip-components=1
	echo "$src_hash" >"$out/.mcp-source"
fi
rm -f "$stamp"

# allnoconfig with the fragment forced (KCONFIG_ALLCONFIG).
grep -v '^#\|^$' "$fragment" >"$out/.mcp-allconfig"
grep '^# CONFIG_.* is not set$' "$fragment" >>"$out/.mcp-allconfig"
make -s -C "$out" KCONFIG_ALLCONFIG="$out/.mcp-allconfig" allnoconfig

# Every option of the fragment must have survived Kconfig's dependencies.
bad=0
while read -r line; do
	case "$line" in
	CONFIG_*=*)
		grep -qxF "$line" "$out/.config" || { echo "build-debug-kernel: Kconfig refused $line" >&2; bad=1; } ;;
	"# CONFIG_"*" is not set")
		opt=${line#\# }
		opt=${opt%% *}
		if grep -q "^$opt=" "$out/.config"; then
			echo "build-debug-kernel: Kconfig kept $opt on" >&2
			bad=1
		fi ;;
	esac
done <"$fragment"
if grep -q '=m$' "$out/.config"; then
	echo "build-debug-kernel: modules left in the config:" >&2
	grep '=m$' "$out/.config" >&2
	bad=1
fi
[ $bad = 0 ] || exit 1
[ $config_only = 0 ] || { echo "build-debug-kernel: $out/.config is ready"; exit 0; }

release=$(make -s -C "$out" kernelrelease)
echo "build-debug-kernel: building $release in $out (make -j$jobs, niced); log: $out/build.log"
t0=$(date +%s)
# `make all`: bzImage, and Module.symvers for the external mcp.ko.
if ! nice -n 10 make -C "$out" -j"$jobs" all >"$out/build.log" 2>&1; then
	tail -n 40 "$out/build.log" >&2
	echo "build-debug-kernel: build failed (see $out/build.log)" >&2
	exit 1
fi
t1=$(date +%s)
echo "$stamp_text" >"$stamp"
echo "build-debug-kernel: $bzimage ($release) built in $((t1 - t0)) s"
