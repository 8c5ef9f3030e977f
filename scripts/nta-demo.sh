#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make demo|bench|bench-micro|bench-icount (README.md): the bench kernel (perf
# config, series + bench/: make kernel FLAVOUR=bench), one boot running the
# guest steps demo_* of scripts/nta-init, the report of nta-bench-report.py
# into out/<mode>/, and the cover letter of out/series/ refreshed with it.
# NTA_DEMO_APPEND: more kernel parameters for the boot (e.g. nta_reserve=256K).
. "$(dirname "$0")/nta-lib.sh"

mode=${1:-demo}
case $mode in
demo)	rounds=${NTA_DEMO_ROUNDS:-5} secs=${NTA_DEMO_SECS:-2} micro=${NTA_DEMO_MICRO:-1,7} ;;
bench)	rounds=${NTA_DEMO_ROUNDS:-11} secs=${NTA_DEMO_SECS:-5} micro=${NTA_DEMO_MICRO:-3,11} ;;
bench-micro|bench-icount) rounds=1 secs=1 micro=${NTA_DEMO_MICRO:-1,7} NTA_DEMO_STEPS=bench ;;
*)	die "usage: $0 [demo|bench|bench-micro|bench-icount]" ;;
esac
# -icount without the deep FIFO rows: RCU stalls and their freed blocks pile up (OOM).
[ "$mode" = bench-icount ] && export NTA_ICOUNT=1 rows=lifo,fifo64,xcpu,alloc_skb
[[ $rounds,$secs,$micro =~ ^[1-9][0-9]*,[1-9][0-9]*,[1-9][0-9]*,[1-9][0-9]*$ ]] ||
	die "NTA_DEMO_ROUNDS, NTA_DEMO_SECS: positive integers; NTA_DEMO_MICRO: scale,rounds (e.g. 1,7)"
steps=${NTA_DEMO_STEPS:-web,iperf,udp,backlog,mem,bench}
[[ $steps =~ ^(web|iperf|udp|backlog|mem|bench)(,(web|iperf|udp|backlog|mem|bench))*$ ]] ||
	die "NTA_DEMO_STEPS must be a subset of web,iperf,udp,backlog,mem,bench, not '$steps'"
plan=boot_smp,demo_${steps//,/,demo_}

D=$NTA_OUT/$mode
mkdir -p "$D"
cmdline="make $mode"
for v in NTA_DEMO_ROUNDS NTA_DEMO_SECS NTA_DEMO_MICRO NTA_DEMO_STEPS; do
	cmdline="${!v:+$v=${!v} }$cmdline"
done

# Bounds: a round takes secs + ~1 s under TCG; allow secs + 8 s for each of
# the 10 workloads (6 in the web step) and 3 settings (NTA, mainline, slab
# classes), 900 s for the microbenchmark.
per=$((3 * rounds * (secs + 8)))
step_tmo=$((6 * per + 120 > 900 ? 6 * per + 120 : 900))
boot_tmo=$((10 * per + 1200))
banner "$mode: one boot, $rounds rounds per setting of ${secs}s per workload (steps: $steps; timeout ${boot_tmo}s)"
# Without KUnit at boot: its deliberate double frees count objects out
# twice, which would leave the live-head gauges the memory rows read off.
FLAVOUR=bench "$NTA_ROOT/scripts/nta-boot.sh" -n "$mode" -d "$D" -t "$boot_tmo" -p "$plan" \
	-a "ntademo=$rounds,$secs ntabench=$micro${rows:+ ntabenchtests=$rows} ntatimeout=$step_tmo kunit.enable=0${NTA_DEMO_APPEND:+ $NTA_DEMO_APPEND}"

banner "$mode: results (console: ${D#$NTA_ROOT/}/$mode.log)"
grep -a '^NTA-METRIC' "$D/$mode.log" >"$D/metrics.txt"
python3 -B "$NTA_ROOT/scripts/nta-bench-report.py" "$D/$mode.log" "$D" "$cmdline"
rc=$?
info "table: ${D#$NTA_ROOT/}/table.txt; data: results.json, metrics.txt; plot: results.svg"
"$NTA_ROOT/scripts/nta-series.sh" cover >/dev/null || warn "could not refresh the cover letter"
[ $rc = 0 ] || die "$mode: some rounds or steps failed (PROBLEMS above); their ratios are not printed"
banner "$mode: done"
