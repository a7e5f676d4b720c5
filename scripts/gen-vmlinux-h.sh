#!/usr/bin/env bash
# Generates vmlinux.h for the CO-RE programs of bpf/ from the BTF of the
# kernel the test VM boots (/boot/vmlinuz-$(scripts/vm-kernel-version.sh)),
# falling back to the running kernel's /sys/kernel/btf/vmlinux.  The output
# lives in the build directory and is never committed.
#
# Usage: scripts/gen-vmlinux-h.sh OUT.h [BPFTOOL]
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
out=${1:?usage: gen-vmlinux-h.sh OUT.h [BPFTOOL]}
bpftool=${2:-bpftool}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/mcp-vmlinux.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# extract-vmlinux comes from the kernel source (scripts/install-deps.sh
# extracts it into build/linux-source) or a headers package that has it.
find_extract_vmlinux() {
	local c
	for c in "$top/build/linux-source/scripts/extract-vmlinux" \
		/usr/src/linux-headers-*/scripts/extract-vmlinux; do
		if [ -x "$c" ]; then
			echo "$c"
			return 0
		fi
	done
	return 1
}

src=""
kver=$("$top/scripts/vm-kernel-version.sh" 2>/dev/null || true)
image=/boot/vmlinuz-$kver
if [ -n "$kver" ] && [ -r "$image" ]; then
	if extract=$(find_extract_vmlinux) &&
		"$extract" "$image" >"$tmp/vmlinux" 2>/dev/null &&
		"$bpftool" btf dump file "$tmp/vmlinux" format c >"$tmp/vmlinux.h" 2>/dev/null; then
		src="$image"
	else
		echo "gen-vmlinux-h: no BTF from $image (extract-vmlinux missing?" \
			"run scripts/install-deps.sh); trying /sys/kernel/btf/vmlinux" >&2
	fi
fi
if [ -z "$src" ]; then
	if [ ! -r /sys/kernel/btf/vmlinux ]; then
		echo "gen-vmlinux-h: no kernel BTF: neither $image nor /sys/kernel/btf/vmlinux" >&2
		exit 1
	fi
	"$bpftool" btf dump file /sys/kernel/btf/vmlinux format c >"$tmp/vmlinux.h"
	src=/sys/kernel/btf/vmlinux
fi

mkdir -p "$(dirname "$out")"
# Rewrite only on change, so the programs are not rebuilt for nothing.
if ! cmp -s "$tmp/vmlinux.h" "$out"; then
	mv "$tmp/vmlinux.h" "$out"
fi
echo "gen-vmlinux-h: $out from $src"
