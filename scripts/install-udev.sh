#!/usr/bin/env bash
# Installs the udev rule that gives /dev/mcp to group "mcp" with mode 0660,
# and creates that group.  With DESTDIR set, only the rule is staged.
#
# Usage: scripts/install-udev.sh [DESTDIR]
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
destdir=${1:-}

install -D -m 0644 "$top/kmod/60-mcp.rules" "$destdir/etc/udev/rules.d/60-mcp.rules"
if [ -z "$destdir" ]; then
	getent group mcp >/dev/null || groupadd --system mcp
	if command -v udevadm >/dev/null && [ -d /run/udev ]; then
		udevadm control --reload
		udevadm trigger --subsystem-match=misc --sysname-match=mcp || true
	fi
	echo "install-udev: /dev/mcp belongs to group mcp (mode 0660)"
fi
