#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make bench-micro: the in-kernel microbenchmark (net/core/alloc/nta_bench.c)
# on the perf kernel.  Builds out/build-perf with CONFIG_NTA_BENCH=y added
# (NTA_CONFIG_EXTRA), boots it once (TCG, 2 CPUs) with the bench_micro step
# of scripts/nta-init, which prints the allocator options of the running
# kernel, writes "run" to /sys/kernel/debug/nta/bench and reads the table:
# ns per alloc+free pair of NTA, the mainline skb head path and kmalloc,
# medians of interleaved rounds, and the ratio NTA/mainline.
#
# Output: out/bench-micro/bench-micro.log (console), out/bench-micro/table.txt.
# NTA_BENCH_SCALE=N multiplies the pairs per figure, NTA_BENCH_ROUNDS=N
# sets the rounds (odd, at most 31); both go to the kernel command line.
. "$(dirname "$0")/nta-lib.sh"

D=$NTA_OUT/bench-micro
mkdir -p "$D"
frag=$D/bench.config
echo "CONFIG_NTA_BENCH=y" >"$frag"

"$NTA_ROOT/scripts/nta-deps.sh" || exit 1
"$NTA_ROOT/scripts/nta-tree.sh" || exit 1
"$NTA_ROOT/scripts/nta-series.sh" series || exit 1
NTA_CONFIG_EXTRA=$frag "$NTA_ROOT/scripts/nta-kernel.sh" perf || exit 1
"$NTA_ROOT/scripts/nta-initramfs.sh" || exit 1

append="ntatimeout=3000"
[ -n "${NTA_BENCH_SCALE:-}" ] && append+=" ntabenchscale=$NTA_BENCH_SCALE"
[ -n "${NTA_BENCH_ROUNDS:-}" ] && append+=" ntabenchrounds=$NTA_BENCH_ROUNDS"
FLAVOUR=perf "$NTA_ROOT/scripts/nta-boot.sh" -n bench-micro -d "$D" -t 3600 \
	-p boot_smp,bench_micro -a "$append" || exit 1

banner "bench-micro: results (console: ${D#$NTA_ROOT/}/bench-micro.log)"
# Kernel messages that reached the console meanwhile ("[  12.3] ...") are not the table's.
sed -n '/^NTA-BENCH-BEGIN/,/^NTA-BENCH-END/{/^NTA-BENCH-/d;/^\[ *[0-9]*\.[0-9]*\] /d;p}' \
	"$D/bench-micro.log" >"$D/table.txt"
[ -s "$D/table.txt" ] || die "no benchmark table in ${D#$NTA_ROOT/}/bench-micro.log"
cat "$D/table.txt"
grep -q '^ok 1 bench_micro' "$D/bench-micro.log" || die "bench_micro did not pass"
info "table: ${D#$NTA_ROOT/}/table.txt"
