#!/usr/bin/env bash
# Prints the version of the Debian kernel the test VM boots: the newest
# /boot/vmlinuz-*-amd64 (installed by linux-image-amd64).
set -euo pipefail
kver=$(ls /boot/vmlinuz-*-amd64 2>/dev/null | sed 's|^/boot/vmlinuz-||' | sort -V | tail -n 1)
if [ -z "$kver" ]; then
	echo "vm-kernel-version: no /boot/vmlinuz-*-amd64; run scripts/install-deps.sh" >&2
	exit 1
fi
echo "$kver"
