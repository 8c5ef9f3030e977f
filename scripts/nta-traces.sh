#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make traces: record the skb heads of make demo's workloads (web, iperf3
# TCP, UDP of 64, 1400 and 8000 B, the slow-consumer backlog) in one boot
# of the bench kernel, with mainline's allocator (nta/bench_trace of
# bench/nta_bench_heads.c), into bench/traces/<workload>.trace.gz: one
# "bytes life" line per head, in allocation order; life counts the heads
# allocated from its allocation to its free, -1 for a head still live at
# the end.  The traces replace those in bench/traces/ only when every
# workload gave one.  The userspace
# harness's fragmentation table replays them (tools/testing/nta,
# NTA_TRACES=bench/traces).  NTA_TRACE_HEADS: heads per workload [262144].
. "$(dirname "$0")/nta-lib.sh"

heads=${NTA_TRACE_HEADS:-262144}
[[ $heads =~ ^[1-9][0-9]*$ ]] && [ "$heads" -le 1048576 ] ||
	die "NTA_TRACE_HEADS: 1..1048576, not '$heads'"
D=$NTA_OUT/traces
dest=$NTA_ROOT/bench/traces
mkdir -p "$D" "$dest"
banner "traces: $heads heads per workload, one boot of the bench kernel"
FLAVOUR=bench "$NTA_ROOT/scripts/nta-boot.sh" -n traces -d "$D" -t 2400 -p boot_smp,demo_trace \
	-a "ntademo=1,2 ntatrace=$heads ntatimeout=2000 kunit.enable=0" ||
	die "the boot failed: ${D#$NTA_ROOT/}/traces.log"

# Lines between the markers that are a trace's ("bytes life"); a kernel
# message that broke into one is dropped, and counted.
rc=0 kept=()
for w in web tcp udp64 udp1400 udp8000 backlog; do
	out=$D/$w.trace
	awk -v w="$w" -v out="$out" '
		$1 == "NTA-TRACE-BEGIN" && $2 == w { on = 1; next }
		$1 == "NTA-TRACE-END" && $2 == w { on = 0; st = $3; next }
		on && /^[0-9]+ -?[0-9]+$/ { print >out; n++; next }
		on { bad++ }
		END { printf "%s %d %d\n", st ? st : "missing", n, bad }' "$D/traces.log" >"$D/$w.st"
	read -r st n bad <"$D/$w.st"
	if [ "$st" != ok ] || [ "$n" = 0 ]; then
		warn "trace $w: status $st, $n heads: not kept"
		rc=1
		continue
	fi
	gzip -9n <"$out" >"$out.gz"
	kept+=("$w")
	info "trace $w: $n heads ($bad broken lines dropped)"
done
[ $rc = 0 ] || die "traces: some workloads failed, bench/traces/ left as it was (console: ${D#$NTA_ROOT/}/traces.log)"
for w in "${kept[@]}"; do
	cp "$D/$w.trace.gz" "$dest/$w.trace.gz"
done
banner "traces: done, bench/traces/ written; commit it to keep them"
