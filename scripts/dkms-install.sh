#!/usr/bin/env bash
# Installs mcp.ko on this host through DKMS: copies the module source to
# /usr/src/mcp-VERSION, then dkms add, build and install for KVER.
#
# Usage: scripts/dkms-install.sh [KVER]    (default: the running kernel)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
kver=${1:-$(uname -r)}
version=$(cat "$top/VERSION")

if dkms status -m mcp -v "$version" | grep -q .; then
	dkms remove -m mcp -v "$version" --all
fi
"$top/scripts/stage-module-source.sh" "/usr/src/mcp-$version"
dkms add -m mcp -v "$version"
dkms install -m mcp -v "$version" -k "$kver"
echo "dkms-install: mcp $version installed for $kver; load it with 'sudo modprobe mcp'"
