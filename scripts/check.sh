#!/usr/bin/env bash
# make check: build everything, run the static checks, the host unit tests,
# the DKMS and install checks, and the VM selftests on three topologies.
# Ends with one line "N passed, N failed"; exits non-zero on any failure.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top" || exit 1
kver=$(scripts/vm-kernel-version.sh) || exit 1
kver612=$(scripts/vm-kernel-version.sh --612) || exit 1
TALLY_LOG_DIR=$top/build/check
rm -rf "$TALLY_LOG_DIR"
mkdir -p "$TALLY_LOG_DIR"
# shellcheck source=lib/tally.sh
. "$top/scripts/lib/tally.sh"

# Adds the counts from the last "LABEL: N passed, N failed" line of a log;
# a runner that died before printing one counts as one failure.
add_runner_counts() {
	local log=$1 line
	line=$(grep -E '^[A-Za-z0-9_-]+: [0-9]+ passed, [0-9]+ failed' "$log" | tail -n 1)
	if [ -z "$line" ]; then
		echo "not ok - ${log#"$top"/} has no result line"
		tally_add 0 1
		return
	fi
	read -r p f < <(sed -E 's/.*: ([0-9]+) passed, ([0-9]+) failed.*/\1 \2/' <<<"$line")
	tally_add "$p" "$f"
	if [[ $line =~ ([0-9]+)\ skipped ]]; then
		tally_skipped=$((tally_skipped + BASH_REMATCH[1]))
	fi
}

# Criterion prints "Synthesis: Tested: T | Passing: P | Failing: F | Crashing: C".
unit_tests() {
	local bin=$top/build/cmake/tests/unit/mcp_unit_tests log=$TALLY_LOG_DIR/unit.log
	if [ ! -x "$bin" ]; then
		echo "not ok - unit tests: $bin was not built"
		tally_add 0 1
		return
	fi
	"$bin" --verbose=0 >"$log" 2>&1
	local rc=$? synth
	synth=$(grep -E 'Synthesis: Tested: [0-9]+' "$log" | tail -n 1)
	if [ -z "$synth" ]; then
		echo "not ok - unit tests printed no synthesis (exit $rc)"
		tail -n 25 "$log"
		tally_add 0 1
		return
	fi
	local p f c
	p=$(sed -E 's/.*Passing: ([0-9]+).*/\1/' <<<"$synth")
	f=$(sed -E 's/.*Failing: ([0-9]+).*/\1/' <<<"$synth")
	c=$(sed -E 's/.*Crashing: ([0-9]+).*/\1/' <<<"$synth")
	grep -E '^\[(FAIL|----)\]' "$log" | head -n 40
	echo "unit: $p passed, $((f + c)) failed"
	tally_add "$p" $((f + c))
}

# make install into a staging DESTDIR, then build a program against the
# staged libmcp with pkg-config.
install_check() {
	local stage=$top/build/check/stage
	rm -rf "$stage"
	make -s install-userspace DESTDIR="$stage" PREFIX=/usr/local &&
		scripts/install-module.sh "$kver" "$stage" &&
		scripts/install-udev.sh "$stage" &&
		test -f "$stage/lib/modules/$kver/extra/mcp.ko" &&
		test -f "$stage/etc/udev/rules.d/60-mcp.rules" &&
		test -x "$stage/usr/local/bin/mcpctl" &&
		printf '#include <mcp/mcp.h>\nint main(void){return mcp_close == 0;}\n' |
		# libmcp from the stage, what it requires (libnl-genl-3.0)
		# from the system's pkg-config directories.
		PKG_CONFIG_SYSROOT_DIR=$stage \
			PKG_CONFIG_LIBDIR=$stage/usr/local/lib/pkgconfig:$stage/usr/local/lib/x86_64-linux-gnu/pkgconfig:/usr/lib/x86_64-linux-gnu/pkgconfig:/usr/share/pkgconfig \
			bash -c 'gcc -x c - -o '"$stage"'/consumer $(pkg-config --cflags --libs libmcp)'
}

echo "==> build"
tally_run build-module make -s module KVER="$kver"
tally_run build-userspace make -s userspace

echo "==> static checks"
scripts/static-checks.sh "$kver" | tee "$TALLY_LOG_DIR/static.log"
add_runner_counts "$TALLY_LOG_DIR/static.log"

echo "==> unit tests (host)"
unit_tests

echo "==> packaging"
tally_run dkms-build scripts/dkms-check.sh "$kver"
tally_run install-staged install_check

for topo in 2node 4node; do
	echo "==> VM selftests ($topo)"
	tests/vm/run-vm.py --topology "$topo" --mode selftests \
		2>&1 | tee "$TALLY_LOG_DIR/vm-$topo.log"
	add_runner_counts "$TALLY_LOG_DIR/vm-$topo.log"
done

# A memoryless node and uneven CPUs: the buffer, graph, placement and DMA
# suites and the memoryless-node tests only, with the cross-check (about
# 110 s of wall time; a whole suite would add about 6 minutes).
memless_binaries=mcp_bo_test,mcp_graph_test,mcp_place_test,mcp_dma_test,mcp_memless_test
echo "==> VM selftests (memless: $memless_binaries)"
tests/vm/run-vm.py --topology memless --mode selftests --binary "$memless_binaries" \
	--crosscheck 2>&1 | tee "$TALLY_LOG_DIR/vm-memless.log"
add_runner_counts "$TALLY_LOG_DIR/vm-memless.log"

# Named CPU models for the tuning registry (Documentation/tuning.rst):
# core2duo stores IA32_MISC_ENABLE (the writable path), Skylake-Server
# drops 0x1a4 writes (the read-back refusal).  The tuning tests only, about
# 50 s of wall time each; the runs above cover -cpu max (unsupported).
tune_binaries=mcp_tune_test,mcp_libmcp_tune_test
for model in core2duo:writable Skylake-Server:readback; do
	cpu=${model%%:*}
	echo "==> VM selftests (2node, -cpu $cpu: $tune_binaries)"
	tests/vm/run-vm.py --topology 2node --mode selftests --binary "$tune_binaries" \
		--cpu "$cpu" --env MCP_TUNE_EXPECT="${model##*:}" \
		2>&1 | tee "$TALLY_LOG_DIR/vm-tune-$cpu.log"
	add_runner_counts "$TALLY_LOG_DIR/vm-tune-$cpu.log"
done

# Debian's 6.12 kernel: the module built against its headers in a copy
# (build/kmod-6.12, so kmod/mcp.ko stays the 6.1 one), DKMS, and on 2node
# the binaries that cross mcp_compat.h's shims (vm_flags, pinning,
# eventfd, swiotlb), the cgroup, BPF CO-RE and netlink paths.
build_612_module() {
	local k=$top/build/kmod-6.12 f out
	rm -rf "$k"
	mkdir -p "$k/kmod"
	for f in kmod/*.c kmod/*.h kmod/Kbuild; do
		case $f in *.mod.c) ;; *) cp -p "$f" "$k/kmod/" || return 1 ;; esac
	done
	ln -sfn "$top/uapi" "$k/uapi" &&
		ln -sfn "$top/VERSION" "$k/VERSION" || return 1
	# W=1 means something only if a warning fails the build.
	out=$(make -s -C "/lib/modules/$kver612/build" M="$k/kmod" W=1 modules 2>&1) ||
		{ echo "$out"; return 1; }
	echo "$out"
	! grep -E '(warning|error):' <<<"$out"
}
echo "==> 6.12 ($kver612)"
tally_run build-module-6.12 build_612_module
tally_run dkms-build-6.12 scripts/dkms-check.sh "$kver612"
vm612_binaries=mcp_version_test,mcp_lifecycle_test,mcp_events_test,mcp_place_test
vm612_binaries+=,mcp_bo_test,mcp_dma_test,mcp_graph_test,mcp_charge_test,mcp_trace_test
echo "==> VM selftests (2node, $kver612: $vm612_binaries)"
tests/vm/run-vm.py --topology 2node --mode selftests --kver "$kver612" \
	--module "$top/build/kmod-6.12/kmod/mcp.ko" --binary "$vm612_binaries" \
	--log "$top/build/vm/vm-2node-6.12.log" 2>&1 | tee "$TALLY_LOG_DIR/vm-2node-6.12.log"
add_runner_counts "$TALLY_LOG_DIR/vm-2node-6.12.log"

tally_summary
