#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_isolation.sh - does the network keep moving when atomic page
# allocations fail?  (Run it in a boot of its own; see below.)
#
# After a warm-up (NTA on, so its pools have grown), fail_page_alloc is
# set up through debugfs and armed while each flow moves data (its server
# and client are started and connected first, so that fork, exec and the
# control connection are not what is measured): probability 100,
# interval 1, a bounded number of
# failures ("times", re-armed for each phase), verbose 0, ignore-gfp-wait
# Y (only allocations that cannot sleep fail: softirq, GFP_ATOMIC),
# ignore-gfp-highmem N, min-order 0.  Then a UDP flow (and a TCP flow,
# reported only) runs with NTA on, then with NTA off, and each reports
# datagrams delivered against sent, the failures injected and NTA's
# counters.  The injection is then disarmed (also by a watchdog, and on
# any exit of this script) and a short TCP run checks recovery.
#   isolation_warmup       the flow without injection: the reference
#   isolation_udp_nta_on   passes when delivered/sent under injection is
#                          at least NTA_ISO_MIN_FRAC of the warm-up's
#   isolation_udp_nta_off  mainline's figure, whatever it is: passes when
#                          the system lives through it
#   isolation_recovery     TCP works again once the injection stops
#   isolation_leak         NTA in-use back to the value before the test
#
# Console: with verbose 0 the injector prints no stack of its own, but the
# page allocator's "page allocation failure: order:..." reports (with a
# stack dump, rate-limited; none for __GFP_NOWARN callers) are expected
# while the injection is armed.  The window is marked on the console by
# "nta_isolation: fail_page_alloc armed" and "... disarmed" lines written
# to /dev/kmsg; a splat check should accept "page allocation failure"
# reports inside that window and nothing else (no BUG, no KASAN, no
# lockdep, no WARNING other than those reports).
#
# Environment [default]:
#   NTA_IPERF_TIME     seconds per flow [2]
#   NTA_UDP_BW         UDP target bitrate [100M]
#   NTA_ISO_LEN        datagram size [1400]
#   NTA_FAIL_PROB      fail_page_alloc probability, percent [100]
#   NTA_FAIL_TIMES     failures allowed per phase [100000]
#   NTA_FAIL_IGNORE_WAIT  Y: only non-sleeping allocations fail [Y]
#   NTA_ISO_MIN_FRAC   NTA-on delivery ratio, relative to warm-up [0.5]
#   NTA_FPA_DIR        fail_page_alloc directory [/sys/kernel/debug/fail_page_alloc]
#   NTA_KMSG           where the console markers go [/dev/kmsg]
#   and those of nta_lib.sh (NTA_DRAIN_WAIT, NTA_PORT_BASE, ...)

. "$(dirname "$0")/nta_lib.sh"

NTA_IPERF_TIME=${NTA_IPERF_TIME:-2}
NTA_UDP_BW=${NTA_UDP_BW:-100M}
NTA_ISO_LEN=${NTA_ISO_LEN:-1400}
NTA_FAIL_PROB=${NTA_FAIL_PROB:-100}
NTA_FAIL_TIMES=${NTA_FAIL_TIMES:-100000}
NTA_FAIL_IGNORE_WAIT=${NTA_FAIL_IGNORE_WAIT:-Y}
NTA_ISO_MIN_FRAC=${NTA_ISO_MIN_FRAC:-0.5}
PORT=$((NTA_PORT_BASE + 5))
FPA=${NTA_FPA_DIR:-/sys/kernel/debug/fail_page_alloc}
KNOBS="probability interval times space verbose ignore-gfp-wait"
KNOBS="$KNOBS ignore-gfp-highmem min-order task-filter"

nta_init 5

if ! have iperf3; then
	for t in isolation_warmup isolation_udp_nta_on isolation_udp_nta_off \
		 isolation_recovery isolation_leak; do
		tap_skip "$t" "iperf3 not found"
	done
	nta_done
fi

kmsg()
{
	echo "nta_isolation: $*" >> "${NTA_KMSG:-/dev/kmsg}" 2>/dev/null
	tap_note "$*"
}

fpa_saved=""
fpa_save()
{
	for k in $KNOBS; do
		[ -r "$FPA/$k" ] && echo "$k $(cat "$FPA/$k")" >> "$NTA_TMP/fpa.saved"
	done
	fpa_saved=1
}

fpa_disarm()
{
	[ -n "$fpa_saved" ] || return 0
	echo 0 > "$FPA/probability"
	while read -r k v; do
		echo "$v" > "$FPA/$k" 2>/dev/null
	done < "$NTA_TMP/fpa.saved"
	fpa_saved=""
	kmsg "fail_page_alloc disarmed"
}
nta_cleanup_hook=fpa_disarm

fpa_arm()
{
	echo 0 > "$FPA/probability"
	echo 1 > "$FPA/interval"
	echo "$NTA_FAIL_TIMES" > "$FPA/times"
	echo 0 > "$FPA/space"
	echo 0 > "$FPA/verbose"
	echo N > "$FPA/task-filter"
	echo "$NTA_FAIL_IGNORE_WAIT" > "$FPA/ignore-gfp-wait"
	echo N > "$FPA/ignore-gfp-highmem"
	echo 0 > "$FPA/min-order"
}

# injecting PID: fail allocations while the flow of client PID runs; the
# processes are started and connected first, so that what is measured is
# the data path and not whether fork, exec or the control connection
# survived the injection
injecting()
{
	_ij_t=0
	# iperf3's control connection up (its output is block-buffered in a
	# file, so that cannot tell)
	while [ "$_ij_t" -lt 100 ] && ! pid_gone "$1" &&
	      ! tcp_port_in_state "$PORT" 01; do
		sleep 0.1
		_ij_t=$((_ij_t + 1))
	done
	# the data stream starts right after the control exchange
	sleep 0.5
	pid_gone "$1" && tap_note "the flow ended before the injection began"
	echo "$NTA_FAIL_PROB" > "$FPA/probability"
	bg_wait "$1" $((NTA_IPERF_TIME + 25))
	_ij_rc=$bg_rc
	echo 0 > "$FPA/probability"
	bg_wait "$iperf_srv" 10
	return $_ij_rc
}

alloc_reports()
{
	_ar=$(dmesg 2>/dev/null | grep -c 'page allocation failure')
	echo "${_ar:-0}"
}

ratio()
{
	awk -v s="$1" -v d="$2" 'BEGIN { printf "%.4f", s ? d / s : 0 }'
}

# udp_flow NAME: UDP flow, figures in $sent $got $rc
udp_flow()
{
	iperf_run "$1" "$PORT" "" "" -- -u -l "$NTA_ISO_LEN" -b "$NTA_UDP_BW"
	rc=$?
	iperf_udp "$NTA_TMP/$1.out"
	sent=$udp_sent
	got=$udp_got
}

nta_snap start
nta_set 1

# ---- warm-up: NTA's pools grow, and the reference figure -------------------

udp_flow warm
warm_ratio=$(ratio "$sent" "$got")
iperf_run warm_tcp "$PORT" "" "" -- -P 2
trc=$?
tap_note "isolation_warmup: UDP delivered $got of $sent ($warm_ratio)," \
	"TCP $(iperf_mbps "$NTA_TMP/warm_tcp.out" receiver) Mbit/s"
if [ "$rc" -eq 0 ] && [ "$trc" -eq 0 ] && [ "$got" -gt 0 ]; then
	tap_pass isolation_warmup
else
	tap_note_file "$NTA_TMP/warm.out"
	tap_fail isolation_warmup "iperf3 status $rc/$trc"
fi

# ---- under injection ------------------------------------------------------------

# phase NAME 0|1: one UDP and one TCP flow under injection
phase()
{
	_name=$1
	nta_set "$2"
	echo "$NTA_FAIL_TIMES" > "$FPA/times"
	_rep0=$(alloc_reports)
	nta_snap "$_name.0"
	sent=0 got=0 rc=1
	if iperf_start "$_name" "$PORT" "" "" -- -u -l "$NTA_ISO_LEN" -b "$NTA_UDP_BW"; then
		injecting "$iperf_cli"
		rc=$?
		iperf_udp "$NTA_TMP/$_name.out"
		sent=$udp_sent
		got=$udp_got
	fi
	_left=$(readnum "$FPA/times")
	_trc=1
	if iperf_start "$_name.tcp" "$PORT" "" "" -- -P 1; then
		injecting "$iperf_cli"
		_trc=$?
	fi
	nta_snap "$_name.1"
	_inj=$((NTA_FAIL_TIMES - _left))
	_tinj=$((_left - $(readnum "$FPA/times")))
	tap_note "$_name: UDP delivered $got of $sent ($(ratio "$sent" "$got"))," \
		"$_inj page allocations failed, iperf3 status $rc"
	tap_note "$_name: TCP $(iperf_mbps "$NTA_TMP/$_name.tcp.out" receiver) Mbit/s," \
		"$_tinj page allocations failed, iperf3 status $_trc"
	tap_note "$_name: $(($(alloc_reports) - _rep0))" \
		"'page allocation failure' reports on the console"
	nta_present && nta_report "$_name.0" "$_name.1"
	[ "$rc" -ne 0 ] && tap_note_file "$NTA_TMP/$_name.out"
}

if [ ! -w "$FPA/probability" ]; then
	tap_skip isolation_udp_nta_on "no $FPA (CONFIG_FAIL_PAGE_ALLOC, debugfs)"
	tap_skip isolation_udp_nta_off "no $FPA (CONFIG_FAIL_PAGE_ALLOC, debugfs)"
else
	fpa_save
	# a watchdog disarms the injector whatever happens to this script
	( sleep $((NTA_IPERF_TIME * 4 + 90)); echo 0 > "$FPA/probability" ) &
	nta_bg_pids="$nta_bg_pids $!"
	fpa_arm
	kmsg "fail_page_alloc armed: probability $NTA_FAIL_PROB while each flow" \
		"runs, times $NTA_FAIL_TIMES per phase, ignore-gfp-wait $NTA_FAIL_IGNORE_WAIT"

	if nta_present; then
		phase isolation_udp_nta_on 1
		min=$(awk -v r="$warm_ratio" -v f="$NTA_ISO_MIN_FRAC" \
			'BEGIN { printf "%.4f", r * f }')
		r=$(ratio "$sent" "$got")
		if [ "$_inj" -eq 0 ]; then
			tap_fail isolation_udp_nta_on \
				"no page allocation failed: the injection did not take"
		elif [ "$rc" -eq 0 ] && [ "$got" -gt 0 ] && ! float_gt "$min" "$r"; then
			tap_pass isolation_udp_nta_on
		else
			tap_fail isolation_udp_nta_on \
				"delivered ratio $r, want >= $min; iperf3 status $rc"
		fi
	else
		tap_skip isolation_udp_nta_on "NTA not present"
	fi

	phase isolation_udp_nta_off 0
	tap_note "isolation_udp_nta_off: mainline's figure is reported, not judged"
	tap_pass isolation_udp_nta_off
	fpa_disarm
fi

# ---- recovery ---------------------------------------------------------------------

[ -n "$nta_orig_sysctl" ] && echo "$nta_orig_sysctl" > "$NTA_SYSCTL"
iperf_run recovery "$PORT" "" "" -- -P 1
rc=$?
mbps=$(iperf_mbps "$NTA_TMP/recovery.out" receiver)
tap_note "isolation_recovery: TCP $mbps Mbit/s"
if [ "$rc" -eq 0 ] && float_gt "$mbps" 0; then
	tap_pass isolation_recovery
else
	tap_note_file "$NTA_TMP/recovery.out"
	tap_fail isolation_recovery "iperf3 status $rc"
fi

nta_leak_check isolation_leak start

nta_done
