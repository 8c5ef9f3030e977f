#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make demo: base tree, series, perf kernel, initramfs, one boot that runs
# iperf3 over loopback with net.core.nta=1 and =0 (interleaved, when the
# sysctl exists) and over virtio-net from a host client, then a table.
# Console and numbers land in out/demo/.  (The benchmark proper, with web
# load and plots, comes with a later issue.)
. "$(dirname "$0")/nta-lib.sh"

D=$NTA_OUT/demo
mkdir -p "$D"
"$NTA_ROOT/scripts/nta-deps.sh" || exit 1
"$NTA_ROOT/scripts/nta-tree.sh" || exit 1
"$NTA_ROOT/scripts/nta-series.sh" series || exit 1
"$NTA_ROOT/scripts/nta-kernel.sh" perf || exit 1
"$NTA_ROOT/scripts/nta-initramfs.sh" || exit 1
FLAVOUR=perf "$NTA_ROOT/scripts/nta-boot.sh" -n demo -d "$D" -t 600 -p boot_smp,demo_iperf,iperf_host || exit 1

banner "demo: results (console: ${D#$NTA_ROOT/}/demo.log)"
grep '^NTA-METRIC' "$D/demo.log" >"$D/metrics.txt"
{
	printf '%-40s %12s\n' "test (3 s iperf3 each)" "Mbit/s"
	printf '%-40s %12s\n' "----" "------"
	awk '$2 == "demo_iperf_lo" {
		n = ($3 == "nta=-") ? "mainline (no net.core.nta)" : ($3 == "nta=1" ? "NTA on" : "NTA off")
		printf "%-40s %12s\n", "loopback TCP, " n ", round " (++r[$3]), $4 }
	     $2 ~ /^iperf_host_/ { k = $2; sub(/^iperf_host_/, "", k); sub(/_mbps$/, "", k)
		printf "%-40s %12s\n", (k == "tcp-r" ? "guest -> host" : "host -> guest") " virtio-net TCP", $3 }' "$D/metrics.txt"
} | tee "$D/table.txt"
grep -q 'nta=-' "$D/metrics.txt" &&
	info "/proc/sys/net/core/nta is absent in this kernel: NTA on/off rows appear once the series adds it"
info "full numbers: ${D#$NTA_ROOT/}/metrics.txt; table: ${D#$NTA_ROOT/}/table.txt"
