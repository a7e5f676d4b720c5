#!/usr/bin/env bash
# Builds and installs mcp.ko for a kernel under /lib/modules/KVER/extra.
# With DESTDIR set, it goes under DESTDIR and the system is left alone
# (used by make check).
# Hosts that upgrade kernels should prefer DKMS (see README.md).
#
# Usage: scripts/install-module.sh KVER [DESTDIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kver=${1:?usage: install-module.sh KVER [DESTDIR]}
destdir=${2:-}
kdir=/lib/modules/$kver/build

if [ ! -d "$kdir" ]; then
	echo "install-module: no kernel headers in $kdir: install linux-headers-$kver" >&2
	exit 1
fi

# Build in a private copy so the tree's kmod/ (built for the VM kernel)
# is not clobbered.
work=$top/build/install-module/$kver
"$top/scripts/stage-module-source.sh" "$work"
make -C "$work/kmod" KVER="$kver"

mod_args=(-C "$kdir" M="$work/kmod" INSTALL_MOD_DIR=extra)
if [ -n "$destdir" ]; then
	mod_args+=(INSTALL_MOD_PATH="$destdir" DEPMOD=true)
fi
make "${mod_args[@]}" modules_install

if [ -z "$destdir" ]; then
	depmod -a "$kver"
	echo "install-module: installed mcp.ko for $kver; load it with 'sudo modprobe mcp'"
fi
