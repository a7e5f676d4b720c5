#!/bin/sh
# SPDX-License-Identifier: GPL-2.0-only
#
# /init of the MCP test VM (packed by tests/vm/build-initramfs.sh).
#
# Mounts the pseudo file systems, loads mcp.ko, runs the mode named in
# /etc/mcp-run.conf and prints every result between markers on the serial
# console, which tests/vm/run-vm.py parses:
#
#   @@MCP-BEGIN <kind> <name>@@ ... @@MCP-END <kind> <name> rc=<N>@@
#
# then dumps the kernel log between @@MCP-BEGIN dmesg@@ / @@MCP-END dmesg@@
# and powers off.  Modes: selftests (plus the mcpctl/numactl outputs for the
# cross-check when MCP_CROSSCHECK=1), demo, crosscheck, bench (the
# benchmarks in /opt/mcp/bench), all (selftests+demo).

export PATH=/bin:/sbin:/usr/bin:/usr/sbin:/opt/mcp/bin
export HOME=/root

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev 2>/dev/null
mount -t debugfs debugfs /sys/kernel/debug
mount -t tmpfs tmpfs /tmp
# cgroup v2 for the QoS groups (mcpctl qos, mcpctl run --qos).
mount -t cgroup2 none /sys/fs/cgroup
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /dev/pts

# Show warnings (level <= 4) on the console too, so a WARNING is seen even
# when a later hang keeps the final dmesg dump from happening.
echo 5 > /proc/sys/kernel/printk
# Report a task stuck in the kernel after 30 s instead of 120 s, well
# before run-vm.py's time-out kills the VM.
echo 30 > /proc/sys/kernel/hung_task_timeout_secs 2>/dev/null

MCP_MODE=selftests MCP_TEST='' MCP_BINARY='' MCP_CROSSCHECK=0 MCP_FAULT_INJECT=''
MCP_LEAK_CHECK=0
# shellcheck source=/dev/null
[ -f /etc/mcp-run.conf ] && . /etc/mcp-run.conf

read -r up _ < /proc/uptime
echo "@@MCP-BOOTED uptime=${up}s nr_cpus=$(grep -c ^processor /proc/cpuinfo) mode=${MCP_MODE}@@"

begin() { echo "@@MCP-BEGIN $1 $2@@"; }
end() { echo "@@MCP-END $1 $2 rc=$3@@"; }

# Runs one command, printed before its output, between markers.
run_cmd() {
	name=$1
	shift
	begin cmd "$name"
	echo "\$ $*"
	"$@" 2>&1
	rc=$?
	end cmd "$name" "$rc"
	return $rc
}

load_module() {
	if [ ! -f /lib/modules/mcp.ko ]; then
		echo "MCP: /lib/modules/mcp.ko missing from the initramfs"
		return 1
	fi
	run_cmd insmod insmod /lib/modules/mcp.ko
}

# Fault injection (run-vm.py --fault-inject=PROBABILITY,INTERVAL,TIMES):
# failslab and fail_page_alloc fail that share of the slab and page
# allocations, sleeping ones included, of the selftest processes only
# (task-filter; every selftest starts with make-it-fail set, and its forks
# inherit it).  "times" counts down as failures are injected, so the
# report prints how many were.
FAULT_ATTRS="failslab fail_page_alloc"
fault_setup() {
	IFS=, read -r fi_prob fi_interval fi_times <<EOF_FI
$MCP_FAULT_INJECT
EOF_FI
	for attr in $FAULT_ATTRS; do
		d=/sys/kernel/debug/$attr
		if [ ! -d "$d" ]; then
			echo "MCP: fault injection: $d missing (not the debug kernel?)"
			return 1
		fi
		echo Y >"$d/task-filter"
		echo N >"$d/ignore-gfp-wait"
		echo 0 >"$d/space"
		# No message per failure: the page allocator's own warning
		# (with its stack) is enough, and the console is slow.
		echo 0 >"$d/verbose"
		echo "${fi_interval:-100}" >"$d/interval"
		echo "${fi_times:-100000}" >"$d/times"
		echo "${fi_prob:-10}" >"$d/probability"
	done
	echo N >/sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem
	echo 0 >/sys/kernel/debug/fail_page_alloc/min-order
	grep . /sys/kernel/debug/failslab/* /sys/kernel/debug/fail_page_alloc/* 2>/dev/null
}

# Stops injecting and prints how many failures each attribute injected.
fault_report() {
	for attr in $FAULT_ATTRS; do
		d=/sys/kernel/debug/$attr
		echo 0 >"$d/probability"
		left=$(cat "$d/times")
		echo "$attr: injected $((${fi_times:-100000} - left)) failures"
	done
}

# Runs a selftest binary with make-it-fail set when injecting faults.
run_test_bin() {
	if [ -n "$MCP_FAULT_INJECT" ]; then
		sh -c 'echo 1 >/proc/self/make-it-fail && exec "$0" "$@"' "$@"
	else
		"$@"
	fi
}

# The live-object counters of mcp.ko, after every selftest (run-vm.py
# --leak-check fails on any that is not zero), then the module must
# unload.  A module a test left unloaded is loaded again first, so the
# check always runs.
leak_check() {
	grep -q '^mcp ' /proc/modules || load_module
	run_cmd counters cat /sys/kernel/debug/mcp/counters
}

run_selftests() {
	for bin in /opt/mcp/selftests/mcp_*_test; do
		[ -x "$bin" ] || continue
		name=${bin##*/}
		# MCP_BINARY: one name, or several separated by commas.
		case ",$MCP_BINARY," in
		,,|*",$name,"*) ;;
		*) continue ;;
		esac
		set --
		[ -n "$MCP_TEST" ] && set -- -t "$MCP_TEST"
		begin selftest "$name"
		read -r t0 _ < /proc/uptime
		(cd /tmp && run_test_bin "$bin" "$@") 2>&1
		rc=$?
		read -r t1 _ < /proc/uptime
		echo "# $name: ${t0}s -> ${t1}s"
		end selftest "$name" "$rc"
	done
}

# mcpctl monitor --count 1 --json while a sleeping process is placed on
# node 0 (again every 0.2 s until the monitor, once subscribed, has seen it).
# A process whose memory sits on node 1 is placed next to it, and
# mcpctl monitor, started first, prints the placement event.
demo_place() {
	echo "\$ numactl --membind=1 sh -c 'x=\$(seq 1 400000); sleep 60; echo \${#x}' &"
	numactl --membind=1 sh -c 'x=$(seq 1 400000); echo ready; sleep 60; echo "${#x}"' >/tmp/demo-ready &
	victim=$!
	i=0
	until grep -q ready /tmp/demo-ready 2>/dev/null || [ $i -ge 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	echo "(pid $victim: $(grep Cpus_allowed_list /proc/$victim/status | tr -s '\t' ' '))"
	echo "\$ mcpctl monitor --count 1 --timeout 30 &"
	mcpctl monitor --count 1 --timeout 30 &
	mon=$!
	sleep 2
	echo "\$ mcpctl place -p $victim"
	mcpctl place -p "$victim"
	rc=$?
	wait "$mon" || rc=1
	echo "(pid $victim: $(grep Cpus_allowed_list /proc/$victim/status | tr -s '\t' ' '))"
	kill "$victim"
	return $rc
}

# Two busy shells sharing CPU 0 (so both wait in the run queue), shown by
# mcpctl top for three 1 s intervals, then one interval of mcpctl trace
# sched for one of them in JSON.
demo_top() {
	echo "\$ taskset -c 0 sh -c 'while :; do :; done' &    (twice)"
	taskset -c 0 sh -c 'while :; do :; done' &
	spin1=$!
	taskset -c 0 sh -c 'while :; do :; done' &
	spin2=$!
	# Through a file: on the serial console (a tty) top would redraw in
	# place, and run-vm.py replays the log on the user's terminal.
	echo "\$ mcpctl top -n 8 1 3 >/tmp/demo-top; cat /tmp/demo-top"
	mcpctl top -n 8 1 3 >/tmp/demo-top 2>&1
	rc=$?
	cat /tmp/demo-top
	echo "\$ mcpctl trace sched -p $spin1 1 1 --json"
	mcpctl trace sched -p "$spin1" 1 1 --json || rc=1
	kill "$spin1" "$spin2"
	wait "$spin1" "$spin2" 2>/dev/null
	return $rc
}

# The edu accelerator as mcpctl shows it: the device table (NUMA node, link
# status), the host's PCIe links, and edu's ID register read through an
# mcp BAR mapping (0x010000ed).
demo_devices() {
	edu=
	for d in /sys/bus/pci/devices/*; do
		[ "$(cat "$d/vendor")" = 0x1234 ] && [ "$(cat "$d/device")" = 0x11e8 ] && edu=${d##*/}
	done
	echo "\$ mcpctl devices"
	mcpctl devices || return 1
	echo "\$ mcpctl dev link"
	mcpctl dev link || return 1
	echo "\$ mcpctl dev info $edu"
	mcpctl dev info "$edu" || return 1
	echo "\$ mcpctl bar read $edu 0 0x0"
	mcpctl bar read "$edu" 0 0x0
}

# A buffer copied through edu's DMA engine (verified byte for byte), the
# engines of the device, and the cpu engine's throughput against memcpy and
# its zero-length jobs/s on the host context.
demo_dma() {
	echo "\$ mcpctl dma engines 0"
	mcpctl dma engines 0 || return 1
	echo "\$ mcpctl dma copy 0 --engine edu --size 64K"
	mcpctl dma copy 0 --engine edu --size 64K || return 1
	echo "\$ mcpctl bo create host --size 4M --node 1"
	mcpctl bo create host --size 4M --node 1 || return 1
	echo "\$ mcpctl dma bench host --sizes 64K,1M,16M --jobs 500"
	mcpctl dma bench host --sizes 64K,1M,16M --jobs 500
}

# The demo attention block as a binary graph: its nodes briefly, then 20
# iterations through the kernel and the worker threads with per-node
# engines, NUMA nodes and latencies, checked against run_inline; then 5
# with its buffers on the last node, where its worker nodes then run.
demo_graph() {
	echo "\$ mcpctl graph build --demo attention -o /tmp/demo.mgph"
	mcpctl graph build --demo attention -o /tmp/demo.mgph || return 1
	echo "\$ mcpctl graph show /tmp/demo.mgph | sed -n '/^NODE/,\$p' | head -12"
	mcpctl graph show /tmp/demo.mgph | sed -n '/^NODE/,$p' | head -12
	echo "\$ mcpctl graph run /tmp/demo.mgph --iterations 20 --inline"
	mcpctl graph run /tmp/demo.mgph --iterations 20 --inline || return 1
	# The buffers on the last node: its worker runs every worker node.
	last=$(ls -d /sys/devices/system/node/node* | sed 's/.*node//' | sort -n | tail -1)
	echo "\$ mcpctl graph run /tmp/demo.mgph --iterations 5 --node $last | sed -n '/^buffers/p;/^NODE/,\$p' | head -8"
	mcpctl graph run /tmp/demo.mgph --iterations 5 --node "$last" >/tmp/demo-node.out || return 1
	sed -n '/^buffers/p;/^NODE/,$p' /tmp/demo-node.out | head -8
}

# A tensor pool in 2 MiB huge pages (32 reserved for it, given back after)
# served in the background; a receiver and a sender attach and hand one
# 1 MiB tensor over (both print its checksum), and mcpctl pool stat --json
# shows the pool before and after.
demo_pool() {
	hugepages=$(cat /proc/sys/vm/nr_hugepages)
	echo "\$ echo 32 > /proc/sys/vm/nr_hugepages"
	echo 32 >/proc/sys/vm/nr_hugepages
	echo "\$ mcpctl pool serve @demo --size 64M --slots 32"
	mcpctl pool serve @demo --size 64M --slots 32 >/tmp/demo-pool-serve 2>&1
	rc=$?
	cat /tmp/demo-pool-serve
	server=$(sed -n 's/.*(pid \([0-9]*\)).*/\1/p' /tmp/demo-pool-serve)
	if [ $rc -ne 0 ] || [ -z "$server" ]; then
		echo "$hugepages" >/proc/sys/vm/nr_hugepages
		return 1
	fi
	echo "\$ mcpctl pool attach @demo --receive --timeout 30 &"
	mcpctl pool attach @demo --receive --timeout 30 >/tmp/demo-pool-recv 2>&1 &
	receiver=$!
	i=0
	until grep -q 'as client' /tmp/demo-pool-recv 2>/dev/null || [ $i -ge 300 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	peer=$(sed -n 's/.* as client \([0-9]*\)$/\1/p' /tmp/demo-pool-recv)
	echo "\$ mcpctl pool stat @demo --json"
	mcpctl pool stat @demo --json || rc=1
	echo "\$ mcpctl pool attach @demo --alloc 1M --fill hello --send $peer"
	mcpctl pool attach @demo --alloc 1M --fill hello --send "$peer" || rc=1
	wait "$receiver" || rc=1
	echo "(the receiver's output:)"
	cat /tmp/demo-pool-recv
	echo "\$ mcpctl pool stat @demo"
	mcpctl pool stat @demo || rc=1
	kill "$server"
	i=0
	# Not our child (mcpctl forked it): it may linger as a zombie.
	while [ -d "/proc/$server" ] && ! grep -q '^State:.*Z' "/proc/$server/status" 2>/dev/null &&
		[ $i -lt 100 ]; do
		sleep 0.1
		i=$((i + 1))
	done
	echo "$hugepages" >/proc/sys/vm/nr_hugepages
	return $rc
}

run_demo() {
	# The demo loads and unloads the module itself.
	grep -q '^mcp ' /proc/modules && rmmod mcp
	load_module
	run_cmd mcpctl-version mcpctl version
	run_cmd mcpctl-info mcpctl info
	run_cmd mcpctl-info-json mcpctl info --json
	run_cmd numactl-hardware numactl --hardware
	run_cmd sysfs grep . /sys/class/misc/mcp/abi_version \
		/sys/class/misc/mcp/features /sys/class/misc/mcp/open_fds
	run_cmd mcpctl-devices demo_devices
	run_cmd mcpctl-dma demo_dma
	run_cmd mcpctl-place demo_place
	run_cmd mcpctl-top demo_top
	run_cmd mcpctl-pool demo_pool
	run_cmd mcpctl-graph demo_graph
	run_cmd counters cat /sys/kernel/debug/mcp/counters
	run_cmd rmmod rmmod mcp
}

run_bench() {
	for bin in /opt/mcp/bench/mcp_*_bench; do
		[ -x "$bin" ] || continue
		begin bench "${bin##*/}"
		"$bin" 2>&1
		end bench "${bin##*/}" "$?"
	done
}

run_crosscheck() {
	grep -q '^mcp ' /proc/modules || load_module
	run_cmd mcpctl-info-json mcpctl info --json
	run_cmd numactl-hardware numactl --hardware
}

# The demo shows the load itself.
[ "$MCP_MODE" = demo ] || load_module

[ -n "$MCP_FAULT_INJECT" ] && { run_cmd fault-setup fault_setup || MCP_FAULT_INJECT=''; }

case "$MCP_MODE" in
selftests)	run_selftests
		[ -n "$MCP_FAULT_INJECT" ] && run_cmd fault-report fault_report
		[ "$MCP_CROSSCHECK" = 1 ] && run_crosscheck
		[ "$MCP_LEAK_CHECK" = 1 ] && leak_check ;;
demo)		run_demo ;;
crosscheck)	run_crosscheck ;;
bench)		run_bench ;;
all)		run_selftests; run_demo ;;
shell)		setsid cttyhack sh ;;
*)		echo "MCP: unknown mode '$MCP_MODE'" ;;
esac

# Anything still holding the module open is gone by now: a module that
# refuses to unload here leaked a reference.
if grep -q '^mcp ' /proc/modules; then
	run_cmd final-rmmod rmmod mcp
fi

read -r up _ < /proc/uptime
echo "@@MCP-DONE uptime=${up}s@@"
begin dmesg kernel
dmesg
end dmesg kernel 0
sync
poweroff -f
