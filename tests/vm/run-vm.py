#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Boot the MCP test VM and report its results.

Builds an initramfs (tests/vm/build-initramfs.sh) with mcp.ko, the
kselftest binaries, mcpctl, numactl and lspci, boots Debian's kernel under
qemu-system-x86_64 (TCG) with the NUMA topology named by --topology,
captures the whole serial console to build/vm/vm-<topology>-<mode>.log and
parses it:

  * every TAP line "ok N name" / "not ok N name" of every selftest binary is
    one test; a binary that dies before printing its whole plan fails;
  * every command of the demo is one test (exit status 0 passes);
  * the cross-check (mcpctl info --json against numactl --hardware: nodes,
    CPUs, distances, memory sizes) is one test;
  * the kernel-log check is one test: it fails on BUG:, WARNING:, Oops,
    general protection, refcount_t, list_del corruption, slab corruption,
    hung tasks, RCU stalls, KASAN and UBSAN reports, lockdep splats
    (circular, recursive, inconsistent locking, suspicious RCU usage),
    sleeping in atomic context and debugobjects (ODEBUG) reports;
  * with --leak-check (implied by --fault-inject), the live-object
    counters of /sys/kernel/debug/mcp/counters after the selftests are one
    test (all must be zero) and the final unload another;
  * with --fault-inject, the selftests run with failslab and
    fail_page_alloc failing some of their allocations (debug kernel only,
    scripts/build-debug-kernel.sh): their results are printed but do not
    count; the verdict is the kernel log, the leak check and the unload;
  * a VM that does not power off within --timeout is killed and fails.

The last line is "vm-<topology>: N passed, M failed"; the exit status is 0
only when nothing failed.  See Documentation/testing-vm.rst.
"""

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# name -> (nodes: list of (cpus "a-b" or "a", mem MiB, 0 for none), distance
# matrix)
TOPOLOGIES = {
    # 2 nodes x 2 CPUs, 1 GiB each, remote distance 21 (DESIGN.md section 6).
    "2node": ([("0-1", 1024), ("2-3", 1024)],
              [[10, 21],
               [21, 10]]),
    # 4 nodes x 1 CPU, 512 MiB each, a chain with growing and asymmetric
    # distances (i->j != j->i below the diagonal): every row and column
    # differs, so a transposed or misindexed matrix shows.  Linux 6.1 takes
    # an asymmetric SLIT without a warning.
    "4node": ([("0", 512), ("1", 512), ("2", 512), ("3", 512)],
              [[10, 16, 22, 28],
               [17, 10, 16, 22],
               [23, 17, 10, 16],
               [29, 23, 17, 10]]),
    # Uneven CPUs and a memoryless node, as CPU-only sockets, CXL or HBM
    # layouts have: node 0 CPU 0 + 1 GiB, node 1 CPUs 1-3 + 1 GiB, node 2
    # CPUs 4-5 and no memory.  Node 2's nearest node with memory is node 1
    # (17), then node 0 (24); nodes 0 and 1 are far apart (31).
    "memless": ([("0", 1024), ("1-3", 1024), ("4-5", 0)],
                [[10, 31, 24],
                 [31, 10, 17],
                 [24, 17, 10]]),
}

# Kernel log lines that fail the run.
KERNEL_BAD = [
    re.compile(p) for p in (
        r"BUG:", r"WARNING:", r"\bOops\b", r"general protection",
        r"refcount_t", r"list_del corruption", r"list_add corruption",
        r"Poison overwritten", r"Redzone", r"Object padding",
        r"Freepointer corrupt", r"Object already free",
        r"BUG \S+ \(.*\): ", r"hung_task", r"blocked for more than",
        r"Kernel panic", r"kernel BUG", r"UBSAN:", r"KASAN:",
        r"Call Trace:",
        # The debug kernel's checkers; most also print "WARNING:" or
        # "BUG:", but a line of its own is caught even when that is lost.
        r"possible circular locking", r"possible recursive locking",
        r"inconsistent lock state", r"lock inversion", r"suspicious RCU usage",
        r"sleeping function called from invalid context", r"ODEBUG:",
        r"DEBUG_LOCKS_WARN_ON", r"detected stalls? on", r"self-detected stall",
        r"soft lockup",
    )
]
# Kernel log lines that match KERNEL_BAD but are notices, not splats:
# booted with an Intel --cpu model (Skylake-Server) the guest reports its
# Spectre mitigations with pr_warn("...WARNING: ...") at boot.
KERNEL_BENIGN = [
    re.compile(p) for p in (
        r"RETBleed: WARNING: Spectre v2 mitigation leaves CPU vulnerable to RETBleed attacks",
    )
]
# Under fault injection the page allocator prints a stack ("page allocation
# failure" ... "Call Trace:") for every failed allocation without
# __GFP_NOWARN: expected then, so only the other patterns count.
KERNEL_BAD_FAULTS = [p for p in KERNEL_BAD if p.pattern != r"Call Trace:"]
# Counters of /sys/kernel/debug/mcp/counters that count live objects: all
# zero once every selftest has ended (the rest are totals, and
# device_objects follows the bound devices).
LIVE_COUNTERS = (
    "open_files", "placed_tasks", "device_files", "bar_mappings", "irq_eventfds",
    "bo_objects", "bo_kernel_pages", "bo_pinned_pages", "bo_mappings", "bo_exports",
    "bo_imports", "dma_jobs_in_flight", "graph_objects", "graph_execs_in_flight",
    "graph_workers", "tune_sessions",
)
KERNEL_LINE = re.compile(r"\[\s*\d+\.\d{6}\]")
# Criterion's TAP (the Criterion selftests, e.g. mcp_trace_peers_test) has
# "-" for the number and the duration after the name: "ok - s::t  (0.30s)".
TAP_RESULT = re.compile(r"^(not )?ok (\d+|-)\s*(.*?)\s*(?:\(\d+\.\d+s\))?\s*"
                        r"(?:#\s*(SKIP|TODO)\b\s*(.*))?$")
# "#  RUN           fixture.test ...": names a result the 6.1 harness prints
# without one ("ok 5 # SKIP reason").
TAP_RUN = re.compile(r"^#\s+RUN\s+(\S+) \.\.\.")
TAP_PLAN = re.compile(r"^1\.\.(\d+)")
BEGIN = re.compile(r"@@MCP-BEGIN (\S+) (\S+)@@")
END = re.compile(r"@@MCP-END (\S+) (\S+) rc=(-?\d+)@@")


def kernel_version(*opts):
    out = subprocess.run([os.path.join(REPO, "scripts", "vm-kernel-version.sh"), *opts],
                         check=True, capture_output=True, text=True)
    return out.stdout.strip()


def resolve_kver(kver):
    """--kver: a release, or 6.1/6.12 for that series' newest image."""
    if kver in (None, "6.1", "6.12"):
        try:
            return kernel_version(*(["--612"] if kver == "6.12" else []))
        except (subprocess.CalledProcessError, OSError):
            return None
    return kver


def qemu_command(topology, kernel, initrd, tcg_thread="single", cpu="max",
                 kernel_args=""):
    nodes, dist = TOPOLOGIES[topology]
    cpus, _ = expected_topology(topology)
    ncpus = sum(len(c) for c in cpus)
    mem_mib = sum(mib for _, mib in nodes)
    cmd = ["qemu-system-x86_64",
           "-accel", "tcg,thread=%s" % tcg_thread, "-cpu", cpu,
           "-m", "%dM" % mem_mib,
           # One socket per CPU: CPUs of one socket spread over several
           # nodes make the guest print a topology_sane WARNING.
           "-smp", "%d,sockets=%d,cores=1,threads=1" % (ncpus, ncpus),
           "-net", "none", "-nographic", "-no-reboot"]
    for i, (_, mib) in enumerate(nodes):
        if mib:
            cmd += ["-object", "memory-backend-ram,id=m%d,size=%dM" % (i, mib)]
    # A node without memdev is memoryless: CPUs only (SRAT has no memory
    # range for it; Linux brings it up with N_CPU and not N_MEMORY).
    for i, (spec, mib) in enumerate(nodes):
        cmd += ["-numa", "node,nodeid=%d,cpus=%s%s" % (i, spec, ",memdev=m%d" % i if mib else "")]
    # Every ordered pair, so QEMU never has to guess a missing distance.
    for i in range(len(nodes)):
        for j in range(len(nodes)):
            if i != j:
                cmd += ["-numa", "dist,src=%d,dst=%d,val=%d" % (i, j, dist[i][j])]
    cmd += ["-device", "edu,dma_mask=0xffffffff",
            # A second, different function for the generic (no backend)
            # path, bound through new_id by the device selftests: BAR0 4 KiB
            # MMIO, BAR1 256 I/O ports, BAR2 (membar) 1 MiB 64-bit
            # prefetchable; no interrupt pin.  Alone behind its own bridge
            # so it can be reset (secondary bus reset).  PCI devices do not
            # change the NUMA layout.
            "-device", "pci-bridge,id=mcp_br0,chassis_nr=1,shpc=off",
            "-device", "pci-testdev,bus=mcp_br0,addr=0x0,membar=1M",
            "-kernel", kernel, "-initrd", initrd,
            "-append", ("console=ttyS0 quiet panic=-1 slub_debug=FZPU " + kernel_args).strip()]
    return cmd


def expected_topology(topology):
    nodes, dist = TOPOLOGIES[topology]
    cpus = []
    for spec, _ in nodes:
        a, _, b = spec.partition("-")
        cpus.append(list(range(int(a), int(b or a) + 1)))
    return cpus, dist


class Results:
    def __init__(self):
        self.items = []  # (name, passed, detail)

    def add(self, name, passed, detail=""):
        self.items.append((name, passed, detail))

    @property
    def passed(self):
        return sum(1 for _, p, d in self.items if p and not d.startswith("SKIP"))

    @property
    def failed(self):
        return sum(1 for _, p, _ in self.items if not p)

    @property
    def skipped(self):
        return sum(1 for _, p, d in self.items if p and d.startswith("SKIP"))


def split_blocks(lines):
    """Returns [(kind, name, rc or None, [lines])] for every marked block."""
    blocks, cur = [], None
    for line in lines:
        m = BEGIN.search(line)
        if m:
            if cur:
                blocks.append(cur)
            cur = [m.group(1), m.group(2), None, []]
            continue
        m = END.search(line)
        if m and cur and m.group(1) == cur[0] and m.group(2) == cur[1]:
            cur[2] = int(m.group(3))
            blocks.append(cur)
            cur = None
            continue
        if cur:
            cur[3].append(line)
    if cur:
        blocks.append(cur)
    return [tuple(b) for b in blocks]


def parse_selftest(res, name, rc, lines):
    plan, seen, failed, running = None, 0, 0, "?"
    for line in lines:
        line = line.rstrip()
        m = TAP_RUN.match(line)
        if m:
            running = m.group(1)
            continue
        m = TAP_PLAN.match(line)
        if m and plan is None:
            plan = int(m.group(1))
            continue
        m = TAP_RESULT.match(line)
        if not m:
            continue
        seen += 1
        ok = m.group(1) is None
        directive, reason = m.group(4), m.group(5) or ""
        tname = "%s:%s" % (name, m.group(3).strip() or running)
        if directive == "SKIP":
            res.add(tname, True, "SKIP " + reason)
        else:
            res.add(tname, ok)
            failed += not ok
    if rc is None:
        res.add("%s:(exit)" % name, False, "binary did not finish (hang, crash or time-out)")
    elif plan is None:
        res.add("%s:(plan)" % name, False, "no TAP plan printed (rc=%d)" % rc)
    elif seen < plan:
        res.add("%s:(plan)" % name, False, "%d of %d results printed" % (seen, plan))
    elif rc not in (0, 4) and failed == 0:
        res.add("%s:(exit)" % name, False, "exit status %d without a failing test" % rc)
    return seen


def parse_numactl(text):
    """numactl --hardware -> (cpus per node id, size MiB per node id, distances)."""
    cpus, size, dist, order = {}, {}, {}, None
    for line in text.splitlines():
        m = re.match(r"node (\d+) cpus:(.*)$", line)
        if m:
            cpus[int(m.group(1))] = [int(x) for x in m.group(2).split()]
            continue
        m = re.match(r"node (\d+) size: (\d+) MB", line)
        if m:
            size[int(m.group(1))] = int(m.group(2))
            continue
        m = re.match(r"node\s+((?:\d+\s*)+)$", line)
        if m and "distances" not in line:
            order = [int(x) for x in m.group(1).split()]
            continue
        m = re.match(r"\s*(\d+):\s+((?:\d+\s*)+)$", line)
        if m and order is not None:
            dist[int(m.group(1))] = dict(zip(order, (int(x) for x in m.group(2).split())))
    return cpus, size, dist


def crosscheck(json_text, numactl_text, topology):
    """Returns a list of disagreements (empty when all agree)."""
    problems = []
    try:
        start = json_text.index("{")
        info = json.loads(json_text[start:json_text.rindex("}") + 1])
    except (ValueError, json.JSONDecodeError) as e:
        return ["mcpctl info --json is not JSON: %s" % e]
    ncpus, nsize, ndist = parse_numactl(numactl_text)
    if not ncpus:
        return ["numactl --hardware printed no nodes"]
    try:
        jnodes = info["nodes"]
        jids = [n["id"] for n in jnodes]
        jcpus = {n["id"]: sorted(n["cpus"]) for n in jnodes}
        jdist = info["distances"]
    except (KeyError, TypeError) as e:
        return ["mcpctl info --json lacks %s" % e]
    if sorted(jids) != sorted(ncpus):
        problems.append("nodes: mcpctl %s, numactl %s" % (jids, sorted(ncpus)))
    for nid in sorted(set(jids) & set(ncpus)):
        if jcpus[nid] != sorted(ncpus[nid]):
            problems.append("node %d cpus: mcpctl %s, numactl %s" % (nid, jcpus[nid], ncpus[nid]))
    if len(jdist) != len(jids) or any(len(r) != len(jids) for r in jdist):
        problems.append("distances: not a %dx%d matrix: %s" % (len(jids), len(jids), jdist))
    else:
        for a, ida in enumerate(jids):
            for b, idb in enumerate(jids):
                want = ndist.get(ida, {}).get(idb)
                if jdist[a][b] != want:
                    problems.append("distance %d->%d: mcpctl %s, numactl %s"
                                    % (ida, idb, jdist[a][b], want))
    for n in jnodes:
        nid = n["id"]
        if nid in nsize:
            mib = n.get("mem_total_bytes", -1) >> 20
            # numactl prints MemTotal of the node's meminfo, truncated to MiB.
            if abs(mib - nsize[nid]) > 1:
                problems.append("node %d size: mcpctl %d MiB, numactl %d MB" % (nid, mib, nsize[nid]))
            free = n.get("mem_free_bytes", -1)
            total = n.get("mem_total_bytes", -1)
            # A memoryless node has nothing, free or not.
            if not (0 < free <= total or free == total == 0):
                problems.append("node %d mem_free_bytes %d not in (0, total]" % (nid, free))
    want_cpus, want_dist = expected_topology(topology)
    if info.get("cpus_online") != sum(len(c) for c in want_cpus):
        problems.append("cpus_online %s, VM has %d" % (info.get("cpus_online"),
                                                       sum(len(c) for c in want_cpus)))
    if sorted(ncpus) == list(range(len(want_cpus))):
        if [sorted(ncpus[i]) for i in sorted(ncpus)] != want_cpus:
            problems.append("numactl cpus differ from the QEMU topology %s" % want_cpus)
        if [[ndist.get(i, {}).get(j) for j in sorted(ncpus)] for i in sorted(ncpus)] != want_dist:
            problems.append("numactl distances differ from the QEMU topology %s" % want_dist)
    else:
        problems.append("numactl nodes %s differ from the QEMU topology" % sorted(ncpus))
    return problems


def kernel_log_check(lines, blocks, patterns=KERNEL_BAD):
    bad = []
    dmesg = [l for k, _, _, ls in blocks if k == "dmesg" for l in ls]
    # Console lines printed by the kernel carry a "[ seconds.micro]" stamp;
    # test output does not, so a test named *WARNING* cannot trip this.
    candidates = dmesg + [l for l in lines if KERNEL_LINE.search(l)]
    seen = set()
    for line in candidates:
        if any(p.search(line) for p in patterns) and \
                not any(p.search(line) for p in KERNEL_BENIGN):
            key = line.strip()
            if key not in seen:
                seen.add(key)
                bad.append(key)
    return bad, bool(dmesg)


def leak_check(text):
    """The live counters that are not zero in a counters dump, or a problem."""
    vals = {}
    for line in text.splitlines():
        m = re.match(r"^(\w+) (-?\d+)$", line.strip())
        if m:
            vals[m.group(1)] = int(m.group(2))
    missing = [c for c in LIVE_COUNTERS if c not in vals]
    if missing:
        return ["counters missing: %s" % " ".join(missing)]
    return ["%s %d" % (c, vals[c]) for c in LIVE_COUNTERS if vals[c] != 0]


def run_qemu(cmd, log_path, timeout, verbose):
    """Runs QEMU, tees the console to log_path; returns (lines, timed_out, secs)."""
    lines = []
    t0 = time.monotonic()
    with open(log_path, "w", errors="replace") as log:
        log.write("# " + " ".join(cmd) + "\n")
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)

        def reader():
            for raw in proc.stdout:
                line = raw.decode("utf-8", "replace").replace("\r", "")
                lines.append(line.rstrip("\n"))
                log.write(line)
                log.flush()
                if verbose:
                    sys.stdout.write(line)
                    sys.stdout.flush()

        th = threading.Thread(target=reader, daemon=True)
        th.start()
        timed_out = False
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        th.join(5)
        secs = time.monotonic() - t0
        if timed_out:
            log.write("\n# run-vm: TIME-OUT after %.0f s, QEMU killed\n" % secs)
    return lines, timed_out, secs, proc.returncode


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--topology", choices=sorted(TOPOLOGIES), default="2node")
    ap.add_argument("--mode", choices=["selftests", "demo", "crosscheck", "bench", "all"],
                    default="selftests",
                    help="selftests: every selftest binary (and the cross-check when "
                         "mcpctl is built and no filter is given); demo: mcpctl/numactl "
                         "demo plus the cross-check; crosscheck: only the cross-check; "
                         "bench: the benchmarks of bench/ (results also in build/vm/bench-TOPOLOGY.txt); "
                         "all: selftests and demo")
    ap.add_argument("--kver", metavar="RELEASE",
                    help="Debian kernel to boot: a release (6.12.118+deb12-amd64) or "
                         "6.1 / 6.12 for that series' newest image (default: 6.1); "
                         "the initramfs carries its vgem modules")
    ap.add_argument("--kernel", help="kernel image (default: /boot/vmlinuz-KVER)")
    ap.add_argument("--module", default=os.path.join(REPO, "kmod", "mcp.ko"))
    ap.add_argument("--build-dir", default=os.path.join(REPO, "build", "cmake"))
    ap.add_argument("--selftest-dir", help="default: BUILD_DIR/tests/selftests")
    ap.add_argument("--mcpctl", help="default: BUILD_DIR/tools/mcpctl/mcpctl")
    ap.add_argument("--bench-dir", help="default: BUILD_DIR/bench")
    ap.add_argument("--test", help="run only the selftest named NAME (or FIXTURE.NAME)")
    ap.add_argument("--binary", help="run only this selftest binary (e.g. mcp_version_test), "
                    "or these, comma-separated (mcp_bo_test,mcp_dma_test)")
    ap.add_argument("--crosscheck", action="store_true",
                    help="with --test or --binary, still run the cross-check")
    ap.add_argument("--env", action="append", default=[], metavar="NAME=VALUE",
                    help="environment for the selftests in the VM (e.g. MCP_FUZZ_SEED=7)")
    # One host thread for all vCPUs: multi-threaded TCG left vCPUs that
    # never answered a text_poke_bp() IPI (Documentation/testing-vm.rst).
    ap.add_argument("--tcg-multi", action="store_true",
                    help="one host thread per vCPU (-accel tcg,thread=multi) instead "
                         "of one for all (thread=single, the default)")
    ap.add_argument("--tcg-single", action="store_true",
                    help="the default; kept so older command lines still work")
    ap.add_argument("--cpu", default="max", help="QEMU -cpu model (default: max)")
    ap.add_argument("--kernel-arg", action="append", default=[], metavar="ARG",
                    help="append ARG to the guest kernel command line (repeatable; "
                         "later ones win, e.g. slub_debug=FZP)")
    ap.add_argument("--clock", choices=["kernel", "tsc"],
                    help="guest clocksource: 'kernel', its own choice (the emulated HPET, as "
                         "TCG's TSC looks unsynchronized), or 'tsc' (tsc=reliable: the TSC, as "
                         "on a real host, so clock_gettime() stays in the vDSO); default: tsc "
                         "for --mode bench, kernel otherwise")
    ap.add_argument("--timeout", type=int, default=900,
                    help="seconds before QEMU is killed (default 900: module loads bind edu, "
                         "which takes seconds each, see Documentation/testing-vm.rst)")
    ap.add_argument("--fault-inject", nargs="?", const="10,100,100000",
                    metavar="PROBABILITY,INTERVAL,TIMES",
                    help="selftests mode on the debug kernel: fail PROBABILITY %% of the "
                         "selftests' slab and page allocations (failslab, fail_page_alloc "
                         "with a task filter; every INTERVAL-th, at most TIMES; default "
                         "10,100,100000: one allocation in a thousand); implies --leak-check; "
                         "test results do not count")
    ap.add_argument("--leak-check", action="store_true",
                    help="after the selftests, fail unless mcp.ko's live-object counters "
                         "are zero and the module unloads")
    ap.add_argument("--log", help="console log (default build/vm/vm-TOPOLOGY-MODE.log)")
    ap.add_argument("-v", "--verbose", action="store_true", help="echo the console live")
    args = ap.parse_args()
    if args.fault_inject is not None:
        if args.mode != "selftests":
            print("run-vm: --fault-inject needs --mode selftests", file=sys.stderr)
            return 2
        if not re.fullmatch(r"\d+(,\d+(,-?\d+)?)?", args.fault_inject):
            print("run-vm: --fault-inject takes PROBABILITY[,INTERVAL[,TIMES]]",
                  file=sys.stderr)
            return 2
        args.leak_check = True

    kver = resolve_kver(args.kver)
    if not args.kernel and kver:
        args.kernel = "/boot/vmlinuz-" + kver
    if not args.kernel or not os.path.exists(args.kernel):
        print("run-vm: kernel %s not found (scripts/install-deps.sh)" % args.kernel, file=sys.stderr)
        return 2
    selftest_dir = args.selftest_dir or os.path.join(args.build_dir, "tests", "selftests")
    mcpctl = args.mcpctl or os.path.join(args.build_dir, "tools", "mcpctl", "mcpctl")
    bench_dir = args.bench_dir or os.path.join(args.build_dir, "bench")
    vm_dir = os.path.join(REPO, "build", "vm")
    os.makedirs(vm_dir, exist_ok=True)
    tag = "%s-%s" % (args.topology, args.mode)
    # One image per run, so runs in parallel never pack over each other.
    initrd = os.path.join(vm_dir, "initramfs-%s-%d.cpio.gz" % (tag, os.getpid()))
    log_path = args.log or os.path.join(vm_dir, "vm-%s.log" % tag)
    if not os.path.exists(args.module):
        print("run-vm: warning: %s not built (make -C kmod)" % args.module, file=sys.stderr)
    elif args.kver and kver:
        # A module built for another release fails insmod in the guest.
        r = subprocess.run(["modinfo", "-F", "vermagic", args.module],
                           capture_output=True, text=True)
        built = (r.stdout.split() or [""])[0]
        if built != kver:
            print("run-vm: %s is built for %s, not %s (make -C kmod KVER=%s)"
                  % (args.module, built or "an unknown kernel", kver, kver), file=sys.stderr)
            return 2
    if args.mode != "selftests" and not os.access(mcpctl, os.X_OK):
        print("run-vm: warning: %s not built" % mcpctl, file=sys.stderr)

    build = [os.path.join(HERE, "build-initramfs.sh"), "-o", initrd, "-m", args.module,
             "-s", selftest_dir, "-c", mcpctl, "-M", args.mode,
             "-t", args.test or "", "-b", args.binary or "", "-k", kver or ""]
    if args.mode == "bench":
        build += ["-B", bench_dir]
    # A plain selftests run includes the cross-check when mcpctl is built;
    # a run filtered to one test or binary does not, unless --crosscheck.
    want_cross = args.mode in ("demo", "crosscheck", "all") or (
        args.mode == "selftests" and (args.crosscheck or not (args.test or args.binary))
        and os.access(mcpctl, os.X_OK))
    for kv in args.env:
        build += ["-E", kv]
    if args.fault_inject is not None:
        build += ["-E", "MCP_FAULT_INJECT=" + args.fault_inject]
    if args.leak_check:
        build += ["-E", "MCP_LEAK_CHECK=1"]
    if args.mode == "selftests" and want_cross:
        build.append("-x")
    elif args.mode == "selftests" and not args.test and not args.binary:
        print("run-vm: note: no mcpctl, cross-check skipped", file=sys.stderr)
    r = subprocess.run(build, capture_output=True, text=True)
    sys.stderr.write(r.stderr)
    if r.returncode:
        print("run-vm: initramfs build failed", file=sys.stderr)
        return 2

    kernel_args = list(args.kernel_arg)
    clock = args.clock or ("tsc" if args.mode == "bench" else "kernel")
    if clock == "tsc":
        kernel_args.insert(0, "tsc=reliable")
    cmd = qemu_command(args.topology, args.kernel, initrd,
                       tcg_thread="multi" if args.tcg_multi else "single", cpu=args.cpu,
                       kernel_args=" ".join(kernel_args))
    print("run-vm: booting %s (%s), log %s" % (args.topology, args.mode,
                                                os.path.relpath(log_path, os.getcwd())))
    lines, timed_out, secs, qrc = run_qemu(cmd, log_path, args.timeout, args.verbose)
    os.unlink(initrd)

    res = Results()
    blocks = split_blocks(lines)
    booted = next((l for l in lines if "@@MCP-BOOTED" in l), None)
    done = next((l for l in lines if "@@MCP-DONE" in l), None)
    if timed_out:
        res.add("vm:timeout", False, "no power-off within %d s; QEMU killed" % args.timeout)
    if not booted:
        res.add("vm:boot", False, "/init never ran (QEMU rc %s)" % qrc)
    elif not done:
        res.add("vm:done", False, "/init did not finish")

    ntap = 0
    cmds = {}
    bench_out = []
    # Under fault injection the selftests' own results are only reported.
    tap = Results() if args.fault_inject is not None else res
    for kind, name, rc, blines in blocks:
        if kind == "selftest":
            ntap += parse_selftest(tap, name, rc, blines)
        elif kind == "bench":
            res.add("bench:" + name, rc == 0, "" if rc == 0 else "exit %s" % rc)
            bench_out.append("\n".join(blines))
        elif kind == "cmd":
            cmds[name] = (rc, "\n".join(blines))
            res.add("cmd:" + name, rc == 0,
                    "" if rc == 0 else "exit %s: %s" % (rc, " | ".join(blines[-3:])))
    if args.mode in ("selftests", "all") and booted and ntap == 0:
        what = ("test %r" % args.test) if args.test else ("binary %r" % args.binary) \
            if args.binary else "any test"
        res.add("selftests:none", False, "no TAP result for %s" % what)

    if want_cross and booted:
        j, n = cmds.get("mcpctl-info-json"), cmds.get("numactl-hardware")
        if not j or not n:
            res.add("crosscheck:mcpctl-vs-numactl", False, "outputs missing")
        else:
            problems = crosscheck(j[1], n[1], args.topology)
            res.add("crosscheck:mcpctl-vs-numactl", not problems, "; ".join(problems))

    if args.mode == "bench":
        if not bench_out:
            res.add("bench:none", False, "no benchmark ran")
        text = "\n".join(bench_out) + "\n"
        sys.stdout.write(text)
        with open(os.path.join(vm_dir, "bench-%s.txt" % args.topology), "w") as f:
            f.write(text)

    if args.fault_inject is not None:
        for name, passed, det in tap.items:
            if not passed:
                print("fault-inject: FAIL %s%s" % (name, ": " + det if det else ""))
        injected = " ".join(l.strip() for l in cmds.get("fault-report", (0, ""))[1].splitlines()
                            if "injected" in l)
        print("fault-inject: selftests %d passed, %d failed, %d skipped (not counted); %s"
              % (tap.passed, tap.failed, tap.skipped, injected or "no fault report"))
        if "fault-report" not in cmds:
            res.add("fault-inject:report", False, "no fault report (setup failed?)")

    if args.leak_check and booted:
        c = cmds.get("counters")
        if not c:
            res.add("leak-check:counters", False, "no counters dump")
        else:
            problems = leak_check(c[1])
            res.add("leak-check:counters", not problems, "; ".join(problems))
        u = cmds.get("final-rmmod")
        res.add("leak-check:unload", bool(u) and u[0] == 0,
                "" if u and u[0] == 0 else ("rmmod exit %s" % u[0] if u else "no final rmmod"))

    bad, had_dmesg = kernel_log_check(lines, blocks, KERNEL_BAD_FAULTS
                                      if args.fault_inject is not None else KERNEL_BAD)
    detail = "; ".join(bad[:20])
    if not had_dmesg:
        detail = (detail + "; " if detail else "") + "no dmesg dump (console lines only)"
    res.add("kernel-log", not bad, detail)

    if args.mode in ("demo", "all"):
        # The demo is for people: show each command and its output as the
        # VM printed them.
        for kind, name, rc, blines in blocks:
            if kind == "cmd":
                print("\n".join(l.rstrip() for l in blines))
                print()
        print("kernel log: %s" % ("clean" if not bad else "NOT clean: " + detail))

    for name, passed, det in res.items:
        if not passed:
            print("FAIL %s%s" % (name, ": " + det if det else ""))
        elif det.startswith("SKIP") or args.verbose:
            print("%s %s%s" % ("ok  " if not det else "skip", name, "" if not det else ": " + det))
    m = re.search(r"uptime=([\d.]+)s", booted or "")
    d = re.search(r"uptime=([\d.]+)s", done or "")
    print("run-vm: %s: wall %.1f s, guest boot-to-init %s s, init-to-done %s s"
          % (args.topology, secs, m.group(1) if m else "?",
             "%.1f" % (float(d.group(1)) - float(m.group(1))) if m and d else "?"))
    print("vm-%s: %d passed, %d failed, %d skipped"
          % (args.topology, res.passed, res.failed, res.skipped))
    return 0 if res.failed == 0 and res.passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
