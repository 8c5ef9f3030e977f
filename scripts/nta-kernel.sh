#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make kernel FLAVOUR=perf|debug|rt|kcsan|bench|inject, make w1 (README.md): tinyconfig +
# tools/testing/selftests/nta/config (+ config.<flavour> but for perf) in
# out/build-<flavour>.  bench, the kernel of make demo and make bench*: the
# perf config + bench/config on branch nta-bench (the series + bench/), in
# out/nta-bench/build-perf.  inject, make check's initfail kernel: the debug
# config on branch nta-check (the series + check/), in out/nta-check/build-debug.
#   scripts/nta-kernel.sh FLAVOUR [w1]
. "$(dirname "$0")/nta-lib.sh"

flavour=${1:-${FLAVOUR:-perf}}
case $flavour in perf|debug|rt|kcsan|bench|inject) ;; *) die "FLAVOUR must be perf, debug, rt, kcsan, bench or inject, not '$flavour'" ;; esac
{	# in braces: read whole before it runs, so safe to edit during a build
B=$(nta_build_dir "$flavour") rev=nta
step_banner "kernel: $flavour${2:+ $2} (${B#$NTA_ROOT/})"
if [ $flavour = bench ]; then
	NTA_NO_BANNER=1 "$NTA_ROOT/scripts/nta-series.sh" bench || exit 1
	NTA_TREE=$NTA_BENCH_OUT/tree rev=nta-bench
elif [ $flavour = inject ]; then
	NTA_NO_BANNER=1 "$NTA_ROOT/scripts/nta-series.sh" check || exit 1
	NTA_TREE=$NTA_CHECK_OUT/tree rev=nta-check
fi
mkdir -p "$B"
nta_kmake "$B"

if [ "${2:-}" = w1 ]; then
	log=$NTA_LOGS/kernel-$flavour-w1.log extra=()
	command -v sparse >/dev/null && extra=(C=1) || info "sparse not installed: W=1 only"
	info "W=1 ${extra[*]} rebuild of net/core/skbuff.o net/core/alloc/ (log: $log)"
	"${kmake[@]}" W=1 "${extra[@]}" net/core/skbuff.o net/core/alloc/ >"$log" 2>&1 || fail_log "$log" "W=1 build failed"
	warns=$(grep -E '(warning|error):' "$log" | grep -E 'net/core/alloc/|net/core/skbuff\.|include/linux/nta\.h')
	[ -z "$warns" ] || { sed 's/^/    | /' <<<"$warns"; die "W=1: $(wc -l <<<"$warns") warning(s) in NTA files"; }
	info "W=1: no warnings in net/core/skbuff.o net/core/alloc/"
	exit 0
fi

frags=("$NTA_ROOT/tools/testing/selftests/nta/config")
case $flavour in
perf) ;;
bench) frags+=("$NTA_ROOT/bench/config") ;;
inject) frags+=("${frags[0]}.debug") ;;
*) frags+=("${frags[0]}.$flavour") ;;
esac
log=$NTA_LOGS/kernel-$flavour-config.log
nta_config "$B" "$log" tinyconfig "${frags[@]}"

log=$NTA_LOGS/kernel-$flavour.log
info "building bzImage in $B (log: $log)"
nta_build "$flavour" "$log" bzImage || fail_log "$log" "kernel build ($flavour) failed"
n=$(nta_objs "$log")
touched_warnings "$log" $rev >"$B/warnings-touched.txt"
info "bzImage: $(du -h "$B/arch/x86/boot/bzImage" | cut -f1), $n objects compiled this run," \
	"$(wc -l <"$B/warnings-touched.txt") warnings in touched files"
sed 's/^/    | /' "$B/warnings-touched.txt"
exit 0
}
