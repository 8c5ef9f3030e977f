# SPDX-License-Identifier: GPL-2.0
# NTA (network tree allocator): the front door.  See README.md.
#
#   make check    every test; TAP in out/check/results.tap; ends "N passed, N failed"
#   make demo     bench kernel, one boot: web, iperf3, memory, CPU with NTA on/off
#                 interleaved; table, out/demo/results.json and results.svg (~10 min)
#   make bench    the same with longer rounds and more of them, into out/bench/
#                 (NTA_DEMO_ROUNDS, NTA_DEMO_SECS, NTA_DEMO_MICRO, NTA_DEMO_STEPS)
#   The bench kernel: the perf config with the microbenchmark of bench/ (a
#   patch on top of the series, not part of it: branch nta-bench, built in
#   out/nta-bench/); make check and make series never include it.
#
# Steps (each cached, each safe to re-run):
#   make deps                       install missing Debian packages
#   make tree [KERNEL_SRC=dir]      base tree in out/tree (tag nta-base)
#   make series                     branch nta + out/series/*.patch, git am checked
#   make refresh                    branch nta (edited in out/tree) -> repo files and patches/
#   make kernel FLAVOUR=perf|debug|rt|kcsan  out/build-<flavour>/arch/x86/boot/bzImage
#   make kernel FLAVOUR=bench       the bench kernel: out/nta-bench/build-perf/
#   make kernel FLAVOUR=inject      make check's initfail kernel: debug + check/
#                                   (fault injection, not in the series), out/nta-check/
#   make w1 [FLAVOUR=..]            W=1 (+C=1) rebuild of net/core/alloc/ and skbuff.o
#   make initramfs                  out/initramfs.cpio.gz
#   make boot [FLAVOUR=..] [PLAN=a,b]  QEMU boot; no PLAN: interactive shell
#   make pahole                     struct sk_buff size: base vs series (2 configs)
#   make check-bisect               every prefix of the series builds (vmlinux,
#                                   out/build-bisect); not part of make check
#   make check-extra [EXTRA=bisect|rt|kcsan]  check-bisect, then make check on a PREEMPT_RT kernel with lockdep and KFENCE
#                                   (out/check-rt/), then on a KCSAN kernel
#                                   (out/check-kcsan/); not part of make check
#   make bench-micro                bench kernel, in-kernel microbenchmark table only (out/bench-micro/)
#   make bench-uml                  the same microbenchmark under User-Mode Linux (leans toward NTA)
#   make bench-icount               the same in guest instructions per pair, deterministic (QEMU -icount)
#   make traces                     bench kernel, skb heads of the demo's workloads recorded into
#                                   bench/traces/ (the harness's fragmentation table replays them)
#   make clean / make distclean     remove builds / all of out/

FLAVOUR ?= perf
PLAN ?=
S := scripts
export NTA_T0 := $(shell date +%s)
export KERNEL_SRC

.PHONY: all help deps tree series refresh kernel w1 initramfs boot pahole check demo bench bench-micro bench-icount bench-uml traces clean distclean

all: help
help:
	@sed -n '2,/^$$/s/^# \{0,1\}//p' Makefile

deps:
	@$(S)/nta-deps.sh

tree: deps
	@$(S)/nta-tree.sh

series: tree
	@$(S)/nta-series.sh series

refresh: tree
	@$(S)/nta-series.sh refresh

kernel: series
	@$(S)/nta-kernel.sh $(FLAVOUR)

w1: kernel
	@$(S)/nta-kernel.sh $(FLAVOUR) w1

initramfs: series
	@$(S)/nta-initramfs.sh

boot: kernel initramfs
	@FLAVOUR=$(FLAVOUR) $(S)/nta-boot.sh $(if $(PLAN),-p $(PLAN))

pahole: series
	@$(S)/nta-pahole.sh

# Not part of check: a vmlinux per patch (incremental, but the skb patch
# rebuilds everything that includes skbuff.h).
.PHONY: check-bisect
check-bisect: series
	@$(S)/nta-bisect.sh

check:
	@$(S)/nta-check.sh

.PHONY: check-extra
EXTRA ?= bisect rt kcsan
check-extra: series
	@rc=0; for f in $(EXTRA); do \
		if [ $$f = bisect ]; then $(S)/nta-bisect.sh || rc=1; \
		else FLAVOUR=$$f $(S)/nta-check.sh || rc=1; fi; \
	done; exit $$rc

# The bench kernel (perf config + bench/) whatever FLAVOUR says.
demo bench bench-micro bench-icount: override FLAVOUR := bench
demo bench bench-micro bench-icount: kernel initramfs
	@$(S)/nta-demo.sh $@

traces: override FLAVOUR := bench
traces: kernel initramfs
	@$(S)/nta-traces.sh

bench-uml: series
	@$(S)/nta-bench-uml.sh

clean:
	rm -rf out/build-* out/nta-bench/build-* out/nta-check/build-* out/initramfs* out/selftests-build out/check out/demo out/bench out/boot

distclean:
	-git -C out/tree worktree remove -f ../am-verify 2>/dev/null
	rm -rf out
