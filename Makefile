# MCP: the entry point.
#
#   make               build the kernel module and userspace
#   make check         install deps, build, static checks, unit tests, DKMS
#                      build, VM selftests; ends with "N passed, N failed"
#   make demo          install deps, build, boot the edge-host VM, show MCP
#   make install       install module, udev rule, libmcp and mcpctl on this host
#   make dkms-install  install the module through DKMS for the running kernel
#   make dkms-check    build the module through DKMS in a private tree
#   make bench         run the benchmarks of bench/ in the VM (2 and 4 nodes)
#   make check-debug   every selftest under the debug kernel (lockdep, KASAN,
#                      debug objects; built once into build/debug-kernel,
#                      tens of minutes) with a leak check; not in `make check`
#   make check-faults  the selftests under the debug kernel with failslab and
#                      fail_page_alloc: clean log, no leak, module unloads
#
# KVER is the kernel the module is built for; by default the Debian kernel
# the test VM boots.  `make install` builds for the running kernel instead.

SHELL := /bin/bash
TOP := $(CURDIR)
BUILD := $(TOP)/build
CMAKE_BUILD := $(BUILD)/cmake
KVER ?= $(shell $(TOP)/scripts/vm-kernel-version.sh 2>/dev/null)
INSTALL_KVER ?= $(shell uname -r)
PREFIX ?= /usr/local
DESTDIR ?=
JOBS ?= $(shell nproc)

.PHONY: all deps module userspace check demo install install-module \
	install-userspace install-udev dkms-install dkms-check static-check unit-test \
	vm-test bench clean debug-kernel debug-module check-debug check-faults

all: module userspace

deps:
	$(TOP)/scripts/install-deps.sh $(BUILD)

module:
	$(MAKE) -C kmod KVER=$(KVER)

userspace:
	cmake -S $(TOP) -B $(CMAKE_BUILD) -DCMAKE_INSTALL_PREFIX=$(PREFIX) >/dev/null
	cmake --build $(CMAKE_BUILD) -j$(JOBS)

check: deps
	$(TOP)/scripts/check.sh

demo: deps
	@echo "==> building mcp.ko for $(KVER), libmcp and mcpctl"
	@$(MAKE) -s --no-print-directory all >$(BUILD)/demo-build.log 2>&1 || \
		{ tail -n 30 $(BUILD)/demo-build.log; exit 1; }
	@echo "==> booting the edge-host VM: 2 NUMA nodes x 2 CPUs, distance 21 (QEMU TCG)"
	@$(TOP)/tests/vm/run-vm.py --topology 2node --mode demo

static-check: module
	$(TOP)/scripts/static-checks.sh

unit-test: userspace
	ctest --test-dir $(CMAKE_BUILD) --output-on-failure

bench: all
	$(TOP)/tests/vm/run-vm.py --topology 2node --mode bench
	$(TOP)/tests/vm/run-vm.py --topology 4node --mode bench

vm-test: all
	$(TOP)/tests/vm/run-vm.py --topology 2node --mode selftests
	$(TOP)/tests/vm/run-vm.py --topology 4node --mode selftests

dkms-check:
	$(TOP)/scripts/dkms-check.sh $(KVER)

install: install-module install-udev install-userspace

dkms-install:
	$(TOP)/scripts/dkms-install.sh $(INSTALL_KVER)

install-udev:
	$(TOP)/scripts/install-udev.sh "$(DESTDIR)"

install-module:
	$(TOP)/scripts/install-module.sh $(INSTALL_KVER) "$(DESTDIR)"

install-userspace: userspace
	DESTDIR="$(DESTDIR)" cmake --install $(CMAKE_BUILD) --prefix $(PREFIX)

# The debug kernel (scripts/build-debug-kernel.sh, cached) and mcp.ko built
# against it in a copy of kmod/, so kmod/mcp.ko (Debian's kernel) stays.
DEBUG_KDIR := $(BUILD)/debug-kernel
DEBUG_KMOD := $(BUILD)/debug-kmod
DEBUG_TIMEOUT ?= 7200
DEBUG_VM := $(TOP)/tests/vm/run-vm.py --topology 2node --mode selftests \
	--kernel $(DEBUG_KDIR)/arch/x86/boot/bzImage --module $(DEBUG_KMOD)/kmod/mcp.ko \
	--build-dir $(CMAKE_BUILD) --timeout $(DEBUG_TIMEOUT)

debug-kernel:
	$(TOP)/scripts/build-debug-kernel.sh -o $(DEBUG_KDIR)

debug-module: debug-kernel
	mkdir -p $(DEBUG_KMOD)/kmod
	cp -p $(filter-out %.mod.c,$(wildcard $(TOP)/kmod/*.c)) $(TOP)/kmod/*.h \
		$(TOP)/kmod/Kbuild $(DEBUG_KMOD)/kmod/
	ln -sfn $(TOP)/uapi $(DEBUG_KMOD)/uapi
	ln -sfn $(TOP)/VERSION $(DEBUG_KMOD)/VERSION
	$(MAKE) -C $(DEBUG_KDIR) M=$(DEBUG_KMOD)/kmod modules

check-debug: debug-module userspace
	$(DEBUG_VM) --leak-check --log $(BUILD)/vm/vm-2node-debug.log

check-faults: debug-module userspace
	$(DEBUG_VM) --fault-inject --log $(BUILD)/vm/vm-2node-faults.log

clean:
	$(MAKE) -C kmod KVER=$(KVER) clean
	rm -rf $(CMAKE_BUILD) $(BUILD)/vm $(BUILD)/dkms $(BUILD)/check $(BUILD)/debug-kmod
