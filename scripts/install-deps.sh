#!/usr/bin/env bash
# Installs everything MCP needs to build, test and demo on Debian 12.
# Idempotent: packages already present are left alone; the files extracted
# from linux-source-6.1 are refreshed only when missing.
#
# Usage: scripts/install-deps.sh [BUILD_DIR]    (default: ./build)
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$top/build}

sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then
	sudo_cmd=(sudo)
fi

export DEBIAN_FRONTEND=noninteractive

packages=(
	build-essential make cmake pkg-config git kmod bc flex bison xz-utils
	linux-image-amd64 linux-image-6.12-amd64
	qemu-system-x86 busybox-static cpio
	clang llvm bpftool libbpf-dev libelf-dev zlib1g-dev
	libbpf-tools rt-tests
	libnl-3-dev libnl-genl-3-dev libdrm-dev
	libcriterion-dev libcli11-dev nlohmann-json3-dev libfmt-dev libjansson-dev
	libopenblas-dev
	libonnx-dev libprotobuf-dev protobuf-compiler python3-onnx python3-numpy
	dkms sparse pciutils numactl libnuma-dev python3 python3-docutils file openssl
	linux-source-6.1
)

missing=()
for p in "${packages[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done

apt_updated=0
apt_install() {
	if [ "$apt_updated" -eq 0 ]; then
		"${sudo_cmd[@]}" apt-get update -qq
		apt_updated=1
	fi
	"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "$@"
}

if [ "${#missing[@]}" -gt 0 ]; then
	echo "install-deps: installing ${missing[*]}"
	apt_install "${missing[@]}"
fi

# The module is built for the kernels the test VM boots: the newest 6.1
# image (linux-image-amd64, the default everywhere) and the newest 6.12 image
# (linux-image-6.12-amd64), each with headers to match.
kver=$("$top/scripts/vm-kernel-version.sh")
kver612=$("$top/scripts/vm-kernel-version.sh" --612)
for k in "$kver" "$kver612"; do
	if ! dpkg-query -W -f='${Status}' "linux-headers-$k" 2>/dev/null |
		grep -q 'install ok installed'; then
		echo "install-deps: installing linux-headers-$k"
		apt_install "linux-headers-$k"
	fi
done

# kselftest harness headers and checkpatch.pl come from the kernel source
# package; they are extracted into the build directory, never committed.
ksrc=$build/linux-source
if [ ! -f "$ksrc/scripts/checkpatch.pl" ] ||
	[ ! -f "$ksrc/tools/testing/selftests/kselftest_harness.h" ]; then
	tarball=$(ls /usr/src/linux-source-6.1.tar.* | head -n 1)
	echo "install-deps: extracting kselftest headers and checkpatch.pl from $tarball"
	mkdir -p "$ksrc"
	tar -xf "$tarball" -C "$ksrc" --strip-components=1 --wildcards \
		'*/tools/testing/selftests/kselftest*.h' \
		'*/scripts/checkpatch.pl' \
		'*/scripts/spelling.txt' \
		'*/scripts/const_structs.checkpatch'
fi
# extract-vmlinux: bpf/ generates vmlinux.h from the VM kernel's BTF
# (scripts/gen-vmlinux-h.sh); linux-headers does not ship it.
if [ ! -x "$ksrc/scripts/extract-vmlinux" ]; then
	tarball=$(ls /usr/src/linux-source-6.1.tar.* | head -n 1)
	mkdir -p "$ksrc"
	tar -xf "$tarball" -C "$ksrc" --strip-components=1 --wildcards \
		'*/scripts/extract-vmlinux'
fi
# kernel-doc: the static checks run it over kmod/ and uapi/.
if [ ! -f "$ksrc/scripts/kernel-doc" ]; then
	tarball=$(ls /usr/src/linux-source-6.1.tar.* | head -n 1)
	mkdir -p "$ksrc"
	tar -xf "$tarball" -C "$ksrc" --strip-components=1 --wildcards \
		'*/scripts/kernel-doc'
fi

# Node and ONNX Runtime's Node binding: the reference that imported ONNX
# models' outputs are compared with.  nodejs from another
# repository already ships npm (Debian's npm conflicts with it), so npm is
# installed only when missing.  The binding's CPU provider is inside the
# package; ONNXRUNTIME_NODE_INSTALL=skip stops its install step from
# downloading a CUDA provider (which fails offline).
if ! command -v node >/dev/null 2>&1; then
	echo "install-deps: installing nodejs"
	apt_install nodejs
fi
if ! command -v npm >/dev/null 2>&1; then
	echo "install-deps: installing npm"
	apt_install npm
fi
ort_version=1.30.0
ort=$build/onnxruntime-node
if [ "$(node -p "require('$ort/node_modules/onnxruntime-node/package.json').version" 2>/dev/null)" != "$ort_version" ]; then
	echo "install-deps: installing onnxruntime-node@$ort_version into $ort"
	mkdir -p "$ort"
	ONNXRUNTIME_NODE_INSTALL=skip npm install --prefix "$ort" --no-audit --no-fund \
		--loglevel=error --save-exact "onnxruntime-node@$ort_version" >/dev/null
fi

echo "install-deps: ready (VM kernels $kver, $kver612)"
