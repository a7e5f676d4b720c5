#!/usr/bin/env bash
# Builds mcp.ko through DKMS (dkms add + dkms build) in a private DKMS tree
# under build/dkms, so the check never touches the system's /var/lib/dkms.
#
# Usage: scripts/dkms-check.sh [KVER]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kver=${1:-$("$top/scripts/vm-kernel-version.sh")}
version=$(cat "$top/VERSION")
work=$top/build/dkms
src=$work/source
tree=$work/tree

rm -rf "$work"
mkdir -p "$src" "$tree" "$work/install"
"$top/scripts/stage-module-source.sh" "$src/mcp-$version"

dkms_args=(-m mcp -v "$version" --dkmstree "$tree" --sourcetree "$src"
	--installtree "$work/install")
dkms add "${dkms_args[@]}"
dkms build "${dkms_args[@]}" -k "$kver"

built=$(find "$tree/mcp/$version/$kver" -name 'mcp.ko*' | head -n 1)
if [ -z "$built" ]; then
	echo "dkms-check: dkms build left no mcp.ko under $tree/mcp/$version/$kver" >&2
	exit 1
fi
vermagic=$(modinfo -F vermagic "$built")
case "$vermagic" in
"$kver "*) ;;
*)
	echo "dkms-check: $built has vermagic '$vermagic', expected $kver" >&2
	exit 1
	;;
esac
echo "dkms-check: built $built for $kver"
