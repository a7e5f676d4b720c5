#!/usr/bin/env bash
# Static checks of the kernel side: W=1 and sparse builds without warnings,
# checkpatch --strict on every kernel and uapi file, a self-contained uapi
# header, sysfs attributes and feature bits documented, versions that agree.
#
# Usage: scripts/static-checks.sh [KVER]
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
kver=${1:-$(scripts/vm-kernel-version.sh)}
checkpatch=$top/build/linux-source/scripts/checkpatch.pl
TALLY_LOG_DIR=$top/build/check/static
mkdir -p "$TALLY_LOG_DIR"
# shellcheck source=lib/tally.sh
. "$top/scripts/lib/tally.sh"

# A build whose output has no compiler or sparse diagnostics.
build_without_warnings() {
	local out
	out=$(make -C kmod KVER="$kver" "$@" 2>&1)
	local rc=$?
	echo "$out"
	[ $rc -eq 0 ] || return 1
	! grep -E '(warning|error):' <<<"$out"
}

w1_build() { build_without_warnings W=1; }
sparse_build() { build_without_warnings C=2; }

checkpatch_file() {
	local out ignore=()
	# BIT_ULL() does not exist for userspace: uapi headers spell out shifts.
	case "$1" in uapi/*) ignore=(--ignore BIT_MACRO) ;; esac
	# The module's one version test (MCP_KERNEL_SINCE) lives here.
	case "$1" in kmod/mcp_compat.h) ignore=(--ignore LINUX_VERSION_CODE) ;; esac
	out=$(perl "$checkpatch" --no-tree --strict --terse "${ignore[@]}" -f "$1" 2>&1)
	echo "$out"
	! grep -qE '(ERROR|WARNING|CHECK):' <<<"$out"
}

uapi_compiles() {
	local lang=$1 std=$2
	echo '#include <linux/mcp.h>' |
		gcc -x "$lang" -std="$std" -Wall -Wextra -Werror -pedantic \
			-Iuapi -fsyntax-only -
}

# The ABI header may include only <linux/types.h> and <linux/ioctl.h>.
uapi_includes() {
	local bad
	bad=$(grep -E '^#include' uapi/linux/mcp.h |
		grep -v -E '<linux/(types|ioctl)\.h>')
	[ -z "$bad" ] || { echo "unexpected include: $bad"; return 1; }
}

# Every sysfs attribute the module defines has an entry in Documentation/ABI.
sysfs_documented() {
	local attr missing=0
	for attr in $(grep -ohE 'DEVICE_ATTR_(RO|RW|WO)\([a-z0-9_]+\)' kmod/*.c |
		sed -E 's/.*\(([a-z0-9_]+)\)/\1/' | sort -u); do
		if ! grep -rqE "^What:.*/$attr\$" Documentation/ABI; then
			echo "sysfs attribute '$attr' is not documented in Documentation/ABI"
			missing=1
		fi
	done
	return $missing
}

# Every MCP_FEAT_* bit of the uapi header is a row "BIT NAME meaning" of
# the features table in the ABI document, with the same bit number, and
# the table names no bit the header lacks.
features_documented() {
	local doc=Documentation/ABI/testing/sysfs-class-misc-mcp
	local name bit defined=0 bad=0
	while read -r name bit; do
		defined=$((defined + 1))
		if ! grep -qE "^[[:space:]]+${bit}[[:space:]]+${name}([[:space:]]|\$)" "$doc"; then
			echo "feature bit $bit $name of uapi/linux/mcp.h is not in $doc"
			bad=1
		fi
	done < <(sed -nE 's/^#define[[:space:]]+(MCP_FEAT_[A-Z0-9_]+)[[:space:]]+\(1ULL << ([0-9]+)\).*/\1 \2/p' \
		uapi/linux/mcp.h)
	if [ "$defined" -eq 0 ]; then
		echo "no MCP_FEAT_* bits found in uapi/linux/mcp.h"
		return 1
	fi
	for name in $(grep -oE '^[[:space:]]+[0-9]+[[:space:]]+MCP_FEAT_[A-Z0-9_]+' "$doc" |
		awk '{print $2}'); do
		if ! grep -qE "^#define[[:space:]]+${name}[[:space:]]" uapi/linux/mcp.h; then
			echo "$doc documents $name, which uapi/linux/mcp.h does not define"
			bad=1
		fi
	done
	echo "$defined feature bits checked"
	return $bad
}

versions_agree() {
	local v dkms_v
	v=$(cat VERSION)
	dkms_v=$(sed -n 's/^PACKAGE_VERSION="\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' dkms.conf)
	echo "VERSION=$v dkms.conf=$dkms_v"
	[ "$v" = "$dkms_v" ]
}

# The reStructuredText in Documentation/ parses without errors (docutils
# from Debian; Sphinx's toctree is the one directive plain docutils lacks).
docs_wellformed() {
	/usr/bin/python3 - Documentation/*.rst <<'EOF'
import io
import sys

import docutils.core

bad = 0
for path in sys.argv[1:]:
    messages = io.StringIO()
    with open(path, encoding="utf-8") as f:
        docutils.core.publish_doctree(
            f.read(), source_path=path,
            settings_overrides={"report_level": 3, "halt_level": 5,
                                "warning_stream": messages})
    for line in messages.getvalue().splitlines():
        if ("ERROR/" in line or "SEVERE/" in line) and '"toctree"' not in line:
            print(line)
            bad = 1
sys.exit(bad)
EOF
}

# Documentation/architecture.rst is the map: every source file of the
# module, libmcp and mcpctl is named in it (as ``file``).
docs_map() {
	local f missing=0 map=Documentation/architecture.rst
	for f in kmod/*.c lib/src/*.cpp tools/mcpctl/*.cpp; do
		case "$f" in *.mod.c) continue ;; esac
		if ! grep -qF "\`\`$(basename "$f")\`\`" "$map"; then
			echo "$f is not in the map, $map"
			missing=1
		fi
	done
	return $missing
}

# kernel-doc comments of the module and the uapi header, without warnings.
kernel_doc() {
	local out
	out=$(perl "$top/build/linux-source/scripts/kernel-doc" -none \
		$(ls kmod/*.c kmod/*.h | grep -v '\.mod\.c$') uapi/linux/mcp.h 2>&1)
	[ -z "$out" ] || { echo "$out"; return 1; }
}

tally_run kmod-w1-build w1_build
tally_run kmod-sparse sparse_build
for f in kmod/*.c kmod/*.h uapi/linux/mcp.h; do
	case "$f" in *.mod.c) continue ;; esac
	tally_run "checkpatch-$(basename "$f")" checkpatch_file "$f"
done
tally_run uapi-header-c11 uapi_compiles c c11
tally_run uapi-header-cxx20 uapi_compiles c++ c++20
tally_run uapi-header-includes uapi_includes
tally_run sysfs-attributes-documented sysfs_documented
tally_run feature-bits-documented features_documented
tally_run versions-agree versions_agree
tally_run docs-wellformed docs_wellformed
tally_run docs-map docs_map
tally_run kernel-doc kernel_doc
tally_summary static
