#!/usr/bin/env bash
# Prints the version of a Debian kernel the test VM boots: the newest
# /boot/vmlinuz-<series>.*-amd64 of one series.
#
# Usage: scripts/vm-kernel-version.sh [--612]
#   (none)  the 6.1 series (linux-image-amd64): the default kernel everywhere
#   --612   the 6.12 series (linux-image-6.12-amd64)
set -euo pipefail
series=6.1
case "${1:-}" in
'') ;;
--612) series=6.12 ;;
*)
	echo "usage: vm-kernel-version.sh [--612]" >&2
	exit 2
	;;
esac
kver=$( (ls /boot/vmlinuz-"$series".*-amd64 2>/dev/null || true) |
	sed 's|^/boot/vmlinuz-||' | sort -V | tail -n 1)
if [ -z "$kver" ]; then
	echo "vm-kernel-version: no /boot/vmlinuz-$series.*-amd64; run scripts/install-deps.sh" >&2
	exit 1
fi
echo "$kver"
