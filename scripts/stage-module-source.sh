#!/usr/bin/env bash
# Copies what DKMS needs to build mcp.ko (dkms.conf, VERSION, kmod/, uapi/)
# into DEST, without build products.  Used by dkms-check and install-module.
#
# Usage: scripts/stage-module-source.sh DEST
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
dest=${1:?usage: stage-module-source.sh DEST}

rm -rf "$dest"
mkdir -p "$dest/kmod" "$dest/uapi/linux"
cp "$top/dkms.conf" "$top/VERSION" "$dest/"
cp "$top/uapi/linux/mcp.h" "$dest/uapi/linux/"
for f in "$top"/kmod/Kbuild "$top"/kmod/Makefile "$top"/kmod/*.rules \
	"$top"/kmod/*.c "$top"/kmod/*.h; do
	case "$f" in
	*.mod.c) ;;
	*) cp "$f" "$dest/kmod/" ;;
	esac
done
