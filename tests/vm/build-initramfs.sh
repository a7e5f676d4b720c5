#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Builds the initramfs the MCP test VM boots (tests/vm/run-vm.py calls this;
# it can also be run by hand).  The image holds:
#
#   /bin/busybox + one symlink per applet     (busybox-static)
#   /init                                     (from tests/vm/init.sh)
#   /etc/mcp-run.conf                         (mode and filters for /init)
#   /lib/modules/mcp.ko                       (the module under test)
#   /opt/mcp/selftests/mcp_*_test             (kselftest-harness and Criterion
#                                             binaries, TAP on stdout)
#   /opt/mcp/onnx/*.onnx, *.npy               (the unit tests' ONNX models, inputs)
#   /opt/mcp/bin/mcpctl, /usr/bin/numactl     (when present on the host)
#   /usr/bin/lspci, /usr/share/misc/pci.ids   (pciutils)
#   /usr/bin/cyclictest, /usr/bin/hackbench   (rt-tests: peer workloads)
#   /usr/sbin/runqlat                         (libbpf-tools: the peer the
#                                             tracer tests and mcp_bpf_bench
#                                             compare with)
#   /lib/modules/vgem/*.ko + order            (vgem and its dependencies from
#                                             /lib/modules/<VM kernel>, for the
#                                             dma-buf tests; loaded by them)
#   /opt/mcp/bench/mcp_*_bench                (with -B BENCH_DIR)
#   every shared library those need (found with ldd) and the dynamic loader
#
# Usage: build-initramfs.sh -o OUT.cpio.gz [-m mcp.ko] [-s SELFTEST_DIR]
#                           [-c MCPCTL] [-M MODE] [-t TEST] [-b BINARY]
#                           [-k KVER] [-x] [-e EXTRA_FILE]...
#   -k KVER: the kernel release whose vgem modules are packed (default:
#            scripts/vm-kernel-version.sh, the 6.1 VM kernel)
#   -E NAME=VALUE: export NAME=VALUE to the selftests (repeatable)
#   -B BENCH_DIR: pack the benchmarks mcp_*_bench found there
#   -x: also run the mcpctl/numactl cross-check after the selftests
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
out="" kver="" module="" bench_dir="" selftest_dir="" mcpctl="" mode="selftests" test="" binary="" crosscheck=0
extra=()
envs=()

usage() {
	sed -n '/^# Usage:/,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
}

while getopts "o:m:s:c:M:t:b:e:E:B:k:xh" opt; do
	case "$opt" in
	o) out=$OPTARG ;;
	m) module=$OPTARG ;;
	s) selftest_dir=$OPTARG ;;
	c) mcpctl=$OPTARG ;;
	M) mode=$OPTARG ;;
	t) test=$OPTARG ;;
	b) binary=$OPTARG ;;
	e) extra+=("$OPTARG") ;;
	x) crosscheck=1 ;;
	E) envs+=("$OPTARG") ;;
	B) bench_dir=$OPTARG ;;
	k) kver=$OPTARG ;;
	*) usage ;;
	esac
done
[ -n "$out" ] || usage

busybox=$(command -v busybox || true)
[ -n "$busybox" ] || { echo "build-initramfs: busybox not found (apt install busybox-static)" >&2; exit 1; }
if ! file -L "$busybox" 2>/dev/null | grep -q 'statically linked'; then
	# A dynamic busybox works too as long as its libraries are copied.
	echo "build-initramfs: note: $busybox is not static; copying its libraries" >&2
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/mcp-initramfs.XXXXXX")
# mktemp makes it 0700, which would become the guest's / : tests that run
# commands as an unprivileged user need to traverse it.
chmod 0755 "$root"
trap 'rm -rf "$root"' EXIT

mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,etc,proc,sys,dev,tmp,root,lib/modules,opt/mcp/bin,opt/mcp/selftests}

# Copies a file to the same path inside the image (following symlinks).
copy_abs() {
	local src=$1 dst
	dst="$root$src"
	[ -e "$dst" ] && return 0
	mkdir -p "$(dirname "$dst")"
	cp -L "$src" "$dst"
}

# Copies the shared libraries and the loader an ELF binary needs.  A
# library from a build tree (libmcp, found through the binary's RUNPATH)
# goes to the loader's default directory: the tree's own path may be
# hidden in the guest (a clone under /tmp sits below the guest's tmpfs).
copy_libs() {
	local bin=$1 lib
	# "libx.so => /path (addr)", "/lib64/ld-linux-x86-64.so.2 (addr)"
	{ ldd "$bin" 2>/dev/null || true; } | awk '
		$2 == "=>" && $3 ~ /^\// { print $3 }
		$1 ~ /^\// { print $1 }' | while read -r lib; do
		case $lib in
		/lib/* | /lib64/* | /usr/lib/*) copy_abs "$lib" ;;
		*)
			mkdir -p "$root/usr/lib/x86_64-linux-gnu"
			cp -L "$lib" "$root/usr/lib/x86_64-linux-gnu/"
			;;
		esac
	done
}

cp "$busybox" "$root/bin/busybox"
copy_libs "$busybox"
for applet in $("$busybox" --list-full); do
	[ -e "$root/$applet" ] || ln -s /bin/busybox "$root/$applet"
done

install -m 0755 "$here/init.sh" "$root/init"

if [ -n "$module" ]; then
	if [ -f "$module" ]; then
		cp "$module" "$root/lib/modules/mcp.ko"
	else
		echo "build-initramfs: warning: module $module not found; the VM runs without it" >&2
	fi
fi

nr_tests=0
if [ -n "$selftest_dir" ] && [ -d "$selftest_dir" ]; then
	for t in "$selftest_dir"/mcp_*_test; do
		[ -x "$t" ] || continue
		cp "$t" "$root/opt/mcp/selftests/"
		copy_libs "$t"
		nr_tests=$((nr_tests + 1))
	done
fi
[ "$nr_tests" -gt 0 ] || echo "build-initramfs: warning: no selftest binaries in '${selftest_dir}'" >&2

# The ONNX test models the unit tests' build generates (tests/onnx/
# gen_models.py) and their .npy inputs, for mcp_libmcp_graph_test's
# imported-model runs and mcp_mcpctl_test's graph run.
onnx_dir=${selftest_dir:+$selftest_dir/../unit/onnx}
if [ -n "$onnx_dir" ] && [ -d "$onnx_dir" ]; then
	mkdir -p "$root/opt/mcp/onnx"
	cp "$onnx_dir"/*.onnx "$root/opt/mcp/onnx/"
	cp "$onnx_dir"/*.npy "$root/opt/mcp/onnx/" 2>/dev/null || true
fi

if [ -n "$mcpctl" ] && [ -x "$mcpctl" ]; then
	cp "$mcpctl" "$root/opt/mcp/bin/mcpctl"
	copy_libs "$mcpctl"
	# libmcp may live in the build tree (RPATH); ldd found it above.
fi

if [ -n "$bench_dir" ]; then
	mkdir -p "$root/opt/mcp/bench"
	for b in "$bench_dir"/mcp_*_bench; do
		[ -x "$b" ] || continue
		cp "$b" "$root/opt/mcp/bench/"
		copy_libs "$b"
	done
fi

# libmcp dlopen()s OpenBLAS on a graph's first MATMUL, which ldd cannot
# see: copy it under the name the loader's cache gives (Debian's
# alternatives symlink, resolved by copy_abs) and what it needs.
# awk reads to the end: exiting early would kill ldconfig with SIGPIPE,
# which pipefail turns into a failed build under run-vm.py.
blas=$(ldconfig -p | awk '$1 == "libopenblas.so.0" && /x86-64/ && !found { found = $NF } END { print found }')
if [ -n "$blas" ]; then
	copy_abs "$blas"
	copy_libs "$blas"
else
	echo "build-initramfs: warning: libopenblas.so.0 not found (apt install libopenblas-dev); graph MATMUL nodes fail with EOPNOTSUPP" >&2
fi

# vgem, the dma-buf exporter the BO selftests share buffers with, and the
# modules it depends on, dependencies first.  The tests load them.
vgem_kver=${kver:-$("$here/../../scripts/vm-kernel-version.sh" 2>/dev/null || true)}
vgem_order=()
add_kmod() {
	local name=$1 dep file
	case " ${vgem_order[*]} " in *" $name "*) return 0 ;; esac
	for dep in $(modinfo -k "$vgem_kver" -F depends "$name" 2>/dev/null | tr ',' ' '); do
		add_kmod "$dep" || return 1
	done
	file=$(modinfo -k "$vgem_kver" -n "$name" 2>/dev/null) || return 1
	case $file in
	(builtin) return 0 ;;
	(*.ko) cp "$file" "$root/lib/modules/vgem/$name.ko" ;;
	(*.ko.xz) xz -dc "$file" > "$root/lib/modules/vgem/$name.ko" ;;
	(*) return 1 ;;
	esac
	vgem_order+=("$name")
}
mkdir -p "$root/lib/modules/vgem"
if [ -n "$vgem_kver" ] && add_kmod vgem; then
	printf '%s.ko\n' "${vgem_order[@]}" > "$root/lib/modules/vgem/order"
else
	rm -rf "$root/lib/modules/vgem"
	echo "build-initramfs: warning: no vgem module for kernel '${vgem_kver}'; the vgem tests skip" >&2
fi

numactl=$(command -v numactl || true)
if [ -n "$numactl" ]; then
	cp "$numactl" "$root/usr/bin/numactl"
	copy_libs "$numactl"
fi

# lspci (pciutils): the device selftests compare MCP_IOC_DEV_INFO with
# "lspci -vv -n"; pci.ids gives names to the plain "lspci" a person runs.
lspci=$(command -v lspci || true)
if [ -n "$lspci" ]; then
	cp "$lspci" "$root/usr/bin/lspci"
	copy_libs "$lspci"
	[ -f /usr/share/misc/pci.ids ] && copy_abs /usr/share/misc/pci.ids
else
	echo "build-initramfs: warning: lspci not found (apt install pciutils)" >&2
fi

# runqlat (libbpf-tools, CO-RE: libelf, libz): the trace peer tests and
# mcp_bpf_bench run it beside MCP's sched tracer.  ~0.6 MB with its
# libraries, so every image gets it.
if [ -x /usr/sbin/runqlat ]; then
	copy_abs /usr/sbin/runqlat
	copy_libs /usr/sbin/runqlat
else
	echo "build-initramfs: warning: /usr/sbin/runqlat not found (apt install libbpf-tools)" >&2
fi

# cyclictest and hackbench (rt-tests): workloads of the trace peer tests.
for f in /usr/bin/cyclictest /usr/bin/hackbench; do
	if [ -x "$f" ]; then
		copy_abs "$f"
		copy_libs "$f"
	else
		echo "build-initramfs: warning: $f not found (apt install rt-tests)" >&2
	fi
done

for f in "${extra[@]}"; do
	cp "$f" "$root/opt/mcp/bin/"
	copy_libs "$f"
done

# Settings for /init: plain shell assignments, values single-quoted.
q() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }
{
	echo "MCP_MODE=$(q "$mode")"
	echo "MCP_TEST=$(q "$test")"
	echo "MCP_BINARY=$(q "$binary")"
	echo "MCP_CROSSCHECK=$crosscheck"
	for kv in "${envs[@]}"; do
		case "$kv" in
		[A-Za-z_]*=*) echo "export ${kv%%=*}=$(q "${kv#*=}")" ;;
		*) echo "build-initramfs: bad -E $kv" >&2; exit 2 ;;
		esac
	done
} > "$root/etc/mcp-run.conf"

mkdir -p "$(dirname "$out")"
(cd "$root" && find . -print0 | sort -z | cpio --null -o -H newc --quiet) | gzip -1 > "$out.tmp"
mv "$out.tmp" "$out"
echo "build-initramfs: $out ($(du -h "$out" | cut -f1), $nr_tests selftest binaries)"
