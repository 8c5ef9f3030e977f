#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_cross.sh - skb heads freed on a CPU that does not own them
#
# iperf3 receiver pinned to NTA_CROSS_RX_CPU and sender to NTA_CROSS_TX_CPU
# (taskset): loopback delivers on the sender's CPU, so heads are allocated
# there and freed by the receiver on the other CPU.  A TCP and a UDP flow
# run twice, with net.core.skb_defer_max=0 (mainline's deferred free off,
# every such free is an NTA remote free) and with the default (TCP heads
# mostly go back to their CPU through skb_attempt_defer_free(); UDP ones
# do not use that path).  Each mode reports the NTA counters that moved
# and passes when remote_frees and drains both rose:
#   cross_remote_defer0, cross_remote_default
# then cross_hotplug_under_load (the sender's CPU goes offline and comes
# back three times under a TCP flow: the flow ends well, no bad free, and
# in-use returns to its start value), leak_cross (in-use back to the start value) and
# cross_defer_max_restored (the sysctl has its old value again).
#
# Environment [default]:
#   NTA_IPERF_TIME    seconds per flow [2]
#   NTA_CROSS_RX_CPU  receiver CPU [0]
#   NTA_CROSS_TX_CPU  sender CPU [1]
#   NTA_UDP_BW        UDP target bitrate [100M]
#   and those of nta_lib.sh (NTA_DRAIN_WAIT, NTA_PORT_BASE, ...)

. "$(dirname "$0")/nta_lib.sh"

NTA_IPERF_TIME=${NTA_IPERF_TIME:-2}
NTA_CROSS_RX_CPU=${NTA_CROSS_RX_CPU:-0}
NTA_CROSS_TX_CPU=${NTA_CROSS_TX_CPU:-1}
NTA_UDP_BW=${NTA_UDP_BW:-100M}
PORT=$((NTA_PORT_BASE + 3))
DEFER=/proc/sys/net/core/skb_defer_max
TESTS="cross_remote_defer0 cross_remote_default cross_hotplug_under_load"
TESTS="$TESTS leak_cross cross_defer_max_restored"

nta_init 5

skip_all()
{
	for t in $TESTS; do
		tap_skip "$t" "$1"
	done
	nta_done
}

have iperf3 || skip_all "iperf3 not found"
have taskset || skip_all "taskset not found"
[ "$(nproc)" -ge 2 ] || skip_all "needs two CPUs"
for cpu in $NTA_CROSS_RX_CPU $NTA_CROSS_TX_CPU; do
	taskset -c "$cpu" true 2>/dev/null || skip_all "CPU $cpu not usable"
done

defer_orig=""
if [ -w "$DEFER" ]; then
	defer_orig=$(cat "$DEFER")
	tap_note "net.core.skb_defer_max default: $defer_orig"
fi

restore_defer()
{
	[ -n "$defer_orig" ] && echo "$defer_orig" > "$DEFER"
}
nta_cleanup_hook=restore_defer

nta_snap start
nta_set 1

# cross_mode NAME DEFER-VALUE
cross_mode()
{
	_name=$1
	if [ -n "$2" ]; then
		if [ -z "$defer_orig" ]; then
			tap_skip "$_name" "$DEFER missing"
			return
		fi
		echo "$2" > "$DEFER"
	fi
	tap_note "$_name: rx CPU $NTA_CROSS_RX_CPU, tx CPU $NTA_CROSS_TX_CPU," \
		"skb_defer_max=$(cat "$DEFER" 2>/dev/null)"
	_fail=""

	nta_snap "$_name.0"
	iperf_run "$_name.tcp" "$PORT" "taskset -c $NTA_CROSS_RX_CPU" \
		"taskset -c $NTA_CROSS_TX_CPU" -- -P 1 || _fail="$_fail tcp"
	nta_snap "$_name.1"
	tap_note "$_name: TCP $(iperf_mbps "$NTA_TMP/$_name.tcp.out" receiver) Mbit/s," \
		"remote_frees +$(nta_delta remote_frees "$_name.0" "$_name.1")," \
		"drains +$(nta_delta drains "$_name.0" "$_name.1")"

	iperf_run "$_name.udp" "$PORT" "taskset -c $NTA_CROSS_RX_CPU" \
		"taskset -c $NTA_CROSS_TX_CPU" -- -u -l 1400 -b "$NTA_UDP_BW" ||
		_fail="$_fail udp"
	nta_snap "$_name.2"
	iperf_udp "$NTA_TMP/$_name.udp.out"
	tap_note "$_name: UDP delivered $udp_got of $udp_sent datagrams," \
		"remote_frees +$(nta_delta remote_frees "$_name.1" "$_name.2")," \
		"drains +$(nta_delta drains "$_name.1" "$_name.2")"
	restore_defer

	if [ -n "$_fail" ]; then
		tap_note_file "$NTA_TMP/$_name.tcp.out"
		tap_note_file "$NTA_TMP/$_name.udp.out"
		tap_fail "$_name" "iperf3 failed:$_fail"
		return
	fi
	if ! nta_present; then
		tap_skip "$_name" "NTA not present"
		return
	fi
	nta_report "$_name.0" "$_name.2"
	_rf=$(nta_delta remote_frees "$_name.0" "$_name.2")
	_dr=$(nta_delta drains "$_name.0" "$_name.2")
	if [ "$_rf" -gt 0 ] && [ "$_dr" -gt 0 ]; then
		tap_pass "$_name"
	else
		tap_fail "$_name" "remote_frees +$_rf, drains +$_dr"
	fi
}

# cross_hotplug_under_load: offline and online the sender's CPU under load
cross_hotplug()
{
	_name=cross_hotplug_under_load
	_cpu=/sys/devices/system/cpu/cpu$NTA_CROSS_TX_CPU/online
	if [ ! -w "$_cpu" ]; then
		tap_skip "$_name" "CPU $NTA_CROSS_TX_CPU cannot go offline"
		return
	fi
	nta_snap "$_name.0"
	_cycles=0
	_time=$NTA_IPERF_TIME
	NTA_IPERF_TIME=$((_time + 6))
	iperf_start "$_name.tcp" "$PORT" "taskset -c $NTA_CROSS_RX_CPU" \
		"taskset -c $NTA_CROSS_TX_CPU" -- -P 1
	_started=$?
	for _i in 1 2 3; do
		sleep 1
		echo 0 > "$_cpu" || break
		sleep 1
		echo 1 > "$_cpu" || break
		_cycles=$((_cycles + 1))
	done
	[ "$(cat "$_cpu")" = 1 ] || echo 1 > "$_cpu"
	_iperf=1
	[ $_started -eq 0 ] && iperf_finish && _iperf=0
	NTA_IPERF_TIME=$_time
	tap_note "$_name: $_cycles offline/online cycles of CPU $NTA_CROSS_TX_CPU," \
		"TCP $(iperf_mbps "$NTA_TMP/$_name.tcp.out" receiver) Mbit/s"
	if [ $_cycles -ne 3 ] || [ $_iperf -ne 0 ]; then
		tap_note_file "$NTA_TMP/$_name.tcp.out"
		tap_fail "$_name" "$_cycles of 3 cycles, iperf3 status $_iperf"
		return
	fi
	nta_leak_check "$_name" "$_name.0"
}

cross_mode cross_remote_defer0 0
cross_mode cross_remote_default ""
cross_hotplug

[ -n "$nta_orig_sysctl" ] && echo "$nta_orig_sysctl" > "$NTA_SYSCTL"
nta_leak_check leak_cross start

if [ -z "$defer_orig" ]; then
	tap_skip cross_defer_max_restored "$DEFER missing"
elif [ "$(cat "$DEFER")" = "$defer_orig" ]; then
	tap_pass cross_defer_max_restored
else
	tap_fail cross_defer_max_restored "skb_defer_max is $(cat "$DEFER")"
fi

nta_done
