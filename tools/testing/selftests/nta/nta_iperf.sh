#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_iperf.sh - iperf3 over loopback with skb heads from NTA
#
# Figures (Mbit/s, datagrams delivered/sent) for TCP with 1 and 4 streams
# and UDP at 64/512/1400/8000 B over loopback, with whatever the NTA
# sysctl says (or NTA_SET); optional TCP runs over virtio-net from and to
# the host (iperf_tcp_virtio, iperf_tcp_virtio_tx); then the skb checks
# with NTA switched on:
#   skb_iperf_tcp_loopback, skb_iperf_udp_loopback: NTA's allocation
#	counter rises, fallbacks and bad frees stay 0, and once the sockets
#	are closed NTA's in-use objects/bytes return to the start value;
#   skb_toggle_under_load: net.core.nta flipped 1->0->1 repeatedly while
#	a TCP stream runs: iperf3 completes without error, no leak after;
#   leak_iperf: in-use back at the value before the whole script.
# Without NTA the loads run and report, the NTA assertions SKIP.
#
# Environment [default]:
#   NTA_IPERF_TIME    seconds per iperf3 run [2]
#   NTA_UDP_BW        UDP target bitrate, iperf3 -b [100M]
#   NTA_SKB_UDP_LEN   datagram size for skb_iperf_udp_loopback [1400]
#   NTA_TOGGLE_TIME   seconds of the toggle run [4]
#   NTA_TOGGLE_PERIOD seconds between flips [0.5]
#   NTA_HOST_PORT     guest port with a host forward (QEMU hostfwd): the
#                     guest serves, and prints "NTA-HOST-IPERF <port>
#                     tcp|tcp-r <secs>" on its console for whatever runs
#                     QEMU on the host to start an iperf3 client (tcp-r:
#                     with -R, the guest sends); the virtio tests use it
#   NTA_IPERF_HOST    otherwise: a host iperf3 server reachable over
#                     virtio-net; neither set: those two SKIP
#   NTA_SET           0 or 1: force net.core.nta for the iperf_* runs
#   and those of nta_lib.sh (NTA_DRAIN_WAIT, NTA_PORT_BASE, ...)

. "$(dirname "$0")/nta_lib.sh"

NTA_IPERF_TIME=${NTA_IPERF_TIME:-2}
NTA_UDP_BW=${NTA_UDP_BW:-100M}
NTA_SKB_UDP_LEN=${NTA_SKB_UDP_LEN:-1400}
NTA_TOGGLE_TIME=${NTA_TOGGLE_TIME:-4}
NTA_TOGGLE_PERIOD=${NTA_TOGGLE_PERIOD:-0.5}
PORT=$((NTA_PORT_BASE + 1))

nta_init 14

if ! have iperf3; then
	for t in iperf_tcp_1 iperf_tcp_4 iperf_udp_64 iperf_udp_512 \
		 iperf_udp_1400 iperf_udp_8000 iperf_tcp_virtio iperf_tcp_virtio_tx \
		 skb_iperf_tcp_loopback skb_iperf_udp_loopback \
		 skb_iperf_tcp_virtio skb_toggle_under_load leak_iperf; do
		tap_skip "$t" "iperf3 not found"
	done
	tap_skip iperf_cleanup "iperf3 not found"
	nta_done
fi

nta_snap start
[ -n "$NTA_SET" ] && nta_set "$NTA_SET"
nta_present && tap_note "iperf_* runs with net.core.nta=$(cat "$NTA_SYSCTL")"

# ---- figures ----------------------------------------------------------------

tcp_test()
{
	_name=$1
	shift
	nta_snap "$_name.0"
	iperf_run "$_name" "$PORT" "" "" -- "$@"
	_rc=$?
	nta_snap "$_name.1"
	_tx=$(iperf_mbps "$NTA_TMP/$_name.out" sender)
	_rx=$(iperf_mbps "$NTA_TMP/$_name.out" receiver)
	tap_note "$_name: $_rx Mbit/s received, $_tx Mbit/s sent (${NTA_IPERF_TIME} s)"
	nta_present && nta_report "$_name.0" "$_name.1"
	if [ "$_rc" -eq 0 ] && float_gt "$_rx" 0; then
		tap_pass "$_name"
	else
		tap_note_file "$NTA_TMP/$_name.out"
		tap_fail "$_name" "iperf3 status $_rc"
	fi
}

udp_test()
{
	_name=iperf_udp_$1
	nta_snap "$_name.0"
	iperf_run "$_name" "$PORT" "" "" -- -u -l "$1" -b "$NTA_UDP_BW"
	_rc=$?
	nta_snap "$_name.1"
	iperf_udp "$NTA_TMP/$_name.out"
	_rx=$(iperf_mbps "$NTA_TMP/$_name.out" receiver)
	tap_note "$_name: delivered $udp_got of $udp_sent datagrams" \
		"($(awk -v s="$udp_sent" -v d="$udp_got" \
			'BEGIN { printf "%.1f", s ? 100 * d / s : 0 }')%)," \
		"$_rx Mbit/s received"
	nta_present && nta_report "$_name.0" "$_name.1"
	if [ "$_rc" -eq 0 ] && [ "$udp_got" -gt 0 ]; then
		tap_pass "$_name"
	else
		tap_note_file "$NTA_TMP/$_name.out"
		tap_fail "$_name" "iperf3 status $_rc, $udp_got datagrams delivered"
	fi
}

tcp_test iperf_tcp_1 -P 1
tcp_test iperf_tcp_4 -P 4
for len in 64 512 1400 8000; do
	udp_test $len
done

# virtio_host_client NAME [tcp|tcp-r]: the guest runs the server on
# $NTA_HOST_PORT and asks the host (whatever runs QEMU and reads the
# console) for a client with a console marker; tcp: the host sends, so the
# guest's virtio-net driver builds the receive skbs; tcp-r: the guest
# sends.  Output in $NTA_TMP/NAME.out, status $?.
virtio_host_client()
{
	bg_start "$NTA_TMP/$1.out" iperf3 -s -1 -p "$NTA_HOST_PORT" -f m
	_vh_srv=$bg_pid
	if ! wait_listen "$NTA_HOST_PORT" 10; then
		bg_stop "$_vh_srv"
		return 1
	fi
	echo "NTA-HOST-IPERF $NTA_HOST_PORT ${2:-tcp} $NTA_IPERF_TIME"
	bg_wait "$_vh_srv" $((NTA_IPERF_TIME + 60))
}

# virtio_test NAME tcp|tcp-r: TCP over virtio-net; tcp: host -> guest (the
# guest's virtio-net driver builds the receive skbs), tcp-r: guest -> host.
# The host's client with NTA_HOST_PORT, else a client to NTA_IPERF_HOST;
# the run's status in $virtio_rc ("" when neither is set).
virtio_test()
{
	_vt_side=receiver _vt_dir="from the host to the guest" _vt_r=-R
	if [ "$2" = tcp-r ]; then
		_vt_side=sender _vt_dir="from the guest to the host" _vt_r=""
	fi
	virtio_rc=""
	nta_snap "$1.0"
	if [ -n "$NTA_HOST_PORT" ]; then
		virtio_host_client "$1" "$2"
		virtio_rc=$?
	elif [ -n "$NTA_IPERF_HOST" ]; then
		# shellcheck disable=SC2086 # no -R: no argument
		timeout -s KILL "$((NTA_IPERF_TIME + 20))" iperf3 -c "$NTA_IPERF_HOST" \
			-t "$NTA_IPERF_TIME" -f m $_vt_r > "$NTA_TMP/$1.out" 2>&1
		virtio_rc=$?
	else
		tap_skip "$1" "neither NTA_HOST_PORT nor NTA_IPERF_HOST set"
		return
	fi
	nta_snap "$1.1"
	_vt=$(iperf_mbps "$NTA_TMP/$1.out" $_vt_side)
	tap_note "$1: $_vt Mbit/s $_vt_dir"
	if [ "$virtio_rc" -eq 0 ] && float_gt "$_vt" 0; then
		tap_pass "$1"
	else
		tap_note_file "$NTA_TMP/$1.out"
		tap_fail "$1" "iperf3 status $virtio_rc, $_vt Mbit/s"
	fi
}

# host -> guest last: skb_iperf_tcp_virtio below checks that run
virtio_test iperf_tcp_virtio_tx tcp-r
virtio_test iperf_tcp_virtio tcp

# ---- skb checks, NTA on -----------------------------------------------------

# skb_check NAME IPERF-STATUS [TAP-NAME]: allocs rose, no fallback, no bad
# free, no leak, between snapshots NAME.0 and NAME.1
skb_check()
{
	_name=$1
	_tap=${3:-$1}
	_allocs=$(nta_delta allocs "$_name.0" "$_name.1")
	_fb=$(nta_delta fallbacks "$_name.0" "$_name.1")
	_bad=$(nta_delta bad_frees "$_name.0" "$_name.1")
	nta_report "$_name.0" "$_name.1"
	_why=""
	[ "$2" -ne 0 ] && _why="$_why iperf3 status $2;"
	[ "$_allocs" -le 0 ] && _why="$_why allocs did not rise;"
	[ "$_fb" -ne 0 ] && _why="$_why $_fb fallbacks;"
	[ "$_bad" -ne 0 ] && _why="$_why $_bad bad frees;"
	if [ -z "$_why" ]; then
		nta_leak_check "$_tap" "$_name.0"
	else
		tap_note_file "$NTA_TMP/$_name.out"
		tap_fail "$_tap" "$_why"
	fi
}

if nta_present; then
	nta_set 1
	nta_snap skb_iperf_tcp_loopback.0
	iperf_run skb_iperf_tcp_loopback "$PORT" "" "" -- -P 2
	rc=$?
	nta_snap skb_iperf_tcp_loopback.1
	mbps=$(iperf_mbps "$NTA_TMP/skb_iperf_tcp_loopback.out" receiver)
	tap_note "skb_iperf_tcp_loopback: $mbps Mbit/s"
	skb_check skb_iperf_tcp_loopback $rc

	nta_snap skb_iperf_udp_loopback.0
	iperf_run skb_iperf_udp_loopback "$PORT" "" "" -- -u \
		-l "$NTA_SKB_UDP_LEN" -b "$NTA_UDP_BW"
	rc=$?
	nta_snap skb_iperf_udp_loopback.1
	iperf_udp "$NTA_TMP/skb_iperf_udp_loopback.out"
	tap_note "skb_iperf_udp_loopback: delivered $udp_got of $udp_sent" \
		"datagrams of $NTA_SKB_UDP_LEN B"
	skb_check skb_iperf_udp_loopback $rc

	# the virtio run above, when NTA was on for it
	if [ -z "$virtio_rc" ]; then
		tap_skip skb_iperf_tcp_virtio "no virtio-net run"
	elif [ "$(nta_stat enabled "$NTA_TMP/iperf_tcp_virtio.0.snap")" != 1 ]; then
		tap_skip skb_iperf_tcp_virtio "net.core.nta was 0 for the run"
	else
		skb_check iperf_tcp_virtio "$virtio_rc" skb_iperf_tcp_virtio
	fi

	# flip the switch while a TCP stream runs; in-flight heads go back
	# to wherever they came from
	nta_snap skb_toggle_under_load.0
	_t=$NTA_IPERF_TIME
	NTA_IPERF_TIME=$NTA_TOGGLE_TIME
	iperf_start skb_toggle_under_load "$PORT" "" "" -- -P 2
	flips=0
	while [ -n "$iperf_cli" ] && ! pid_gone "$iperf_cli"; do
		sleep "$NTA_TOGGLE_PERIOD"
		nta_set 0
		sleep "$NTA_TOGGLE_PERIOD"
		nta_set 1
		flips=$((flips + 1))
	done
	iperf_finish
	rc=$?
	NTA_IPERF_TIME=$_t
	nta_set 1
	nta_snap skb_toggle_under_load.1
	tap_note "skb_toggle_under_load: $flips 1->0->1 cycles," \
		"$(iperf_mbps "$NTA_TMP/skb_toggle_under_load.out" receiver) Mbit/s"
	if [ "$flips" -lt 1 ]; then
		rc=1
		tap_note "skb_toggle_under_load: iperf3 ended before the first flip"
	fi
	# heads allocated while off are kmalloc'ed: fallbacks are not
	# asserted here, only errors, bad frees and leaks
	bad=$(nta_delta bad_frees skb_toggle_under_load.0 skb_toggle_under_load.1)
	nta_report skb_toggle_under_load.0 skb_toggle_under_load.1
	if [ "$rc" -eq 0 ] && [ "$bad" -eq 0 ]; then
		nta_leak_check skb_toggle_under_load skb_toggle_under_load.0
	else
		tap_note_file "$NTA_TMP/skb_toggle_under_load.out"
		tap_fail skb_toggle_under_load "iperf3 status $rc, $bad bad frees"
	fi
else
	tap_skip skb_iperf_tcp_loopback "NTA not present"
	tap_skip skb_iperf_udp_loopback "NTA not present"
	tap_skip skb_iperf_tcp_virtio "NTA not present"
	tap_skip skb_toggle_under_load "NTA not present"
fi

# restore the switch before the final leak check
[ -n "$nta_orig_sysctl" ] && echo "$nta_orig_sysctl" > "$NTA_SYSCTL"
nta_leak_check leak_iperf start

# iperf3 left nothing behind: no stray server on our port
if is_listening "$PORT"; then
	tap_fail iperf_cleanup "an iperf3 server still listens on $PORT"
else
	tap_pass iperf_cleanup
fi

nta_done
