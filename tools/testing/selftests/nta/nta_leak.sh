#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_leak.sh - heads that leave by unusual exits come back to NTA
#
# With net.core.nta=1, loads whose skbs end on the less travelled free
# paths, each followed by a bounded wait for NTA's in-use objects and
# reserved bytes to return to their value before the load:
#   leak_web_churn      one TCP connection per request (nta_load -c,
#                       16 KiB): handshakes, FIN/TIME_WAIT, no keep-alive
#   leak_web_abort      clients reset as soon as a 128 KiB response
#                       starts: data purged from socket queues on RST
#   leak_udp_overflow   unpaced UDP into a 16 KiB receive buffer:
#                       datagrams dropped on a full queue
#   leak_bad_frees      NTA's bad_frees counter did not move while this
#                       script ran (not "since boot": KUnit's bad-input
#                       cases, when built in, refuse frees on purpose)
# Without NTA the loads run and report; the assertions SKIP.
#
# Environment [default]:
#   NTA_LEAK_TIME  seconds per load [2]
#   NTA_WEB_CONNS  connections [8]
#   and those of nta_lib.sh (NTA_DRAIN_WAIT, NTA_LEAK_SLACK, ...)

. "$(dirname "$0")/nta_lib.sh"

NTA_LEAK_TIME=${NTA_LEAK_TIME:-2}
NTA_WEB_CONNS=${NTA_WEB_CONNS:-8}
NTA_IPERF_TIME=$NTA_LEAK_TIME
PORT=$((NTA_PORT_BASE + 4))

HTTPD=$(nta_bin nta_httpd)
LOAD=$(nta_bin nta_load)

nta_init 4
nta_set 1
nta_snap leak_start

# web_leak NAME PATH EXPECT LOAD-ARGS...: a server for this load only,
# stopped before the check so that none of its sockets hold a head
web_leak()
{
	_name=$1
	_path=$2
	_expect=$3
	shift 3
	if [ -z "$HTTPD" ] || [ -z "$LOAD" ]; then
		tap_fail "$_name" "nta_httpd or nta_load not built"
		return
	fi
	nta_snap "$_name.0"
	bg_start "$NTA_TMP/$_name.srv" "$HTTPD" -p "$PORT" -i 30 \
		-d $((NTA_LEAK_TIME + 60))
	_srv=$bg_pid
	if ! wait_listen "$PORT" 10; then
		bg_stop "$_srv"
		tap_fail "$_name" "nta_httpd did not start"
		return
	fi
	"$LOAD" -p "$PORT" -n "$NTA_WEB_CONNS" -d "$NTA_LEAK_TIME" -T 10000 \
		-u "$_path" "$@" > "$NTA_TMP/$_name.out" 2>&1
	bg_stop "$_srv"
	nta_snap "$_name.1"
	sed 's/^/#   /' "$NTA_TMP/$_name.out"
	nta_present && nta_report "$_name.0" "$_name.1"
	_v=$(kv "$_expect" "$NTA_TMP/$_name.out")
	_err=$(kv errors "$NTA_TMP/$_name.out")
	if [ "${_v:-0}" -le 0 ] || [ "${_err:-1}" -ne 0 ]; then
		tap_fail "$_name" "load failed: $_expect=$_v errors=$_err"
		return
	fi
	nta_leak_check "$_name" "$_name.0"
}

web_leak leak_web_churn /16k requests -c
web_leak leak_web_abort /128k aborts -A

if have iperf3; then
	nta_snap leak_udp_overflow.0
	iperf_run leak_udp_overflow "$PORT" "" "" -- -u -l 1400 -b 0 -w 16K
	rc=$?
	nta_snap leak_udp_overflow.1
	iperf_udp "$NTA_TMP/leak_udp_overflow.out"
	tap_note "leak_udp_overflow: delivered $udp_got of $udp_sent datagrams"
	nta_present && nta_report leak_udp_overflow.0 leak_udp_overflow.1
	if [ "$rc" -eq 0 ] && [ "$udp_sent" -gt 0 ]; then
		nta_leak_check leak_udp_overflow leak_udp_overflow.0
	else
		tap_note_file "$NTA_TMP/leak_udp_overflow.out"
		tap_fail leak_udp_overflow "iperf3 status $rc"
	fi
else
	tap_skip leak_udp_overflow "iperf3 not found"
fi

if nta_present; then
	nta_snap leak_end
	bad=$(nta_delta bad_frees leak_start leak_end)
	tap_note "leak_bad_frees: this run: bad_frees=$bad" \
		"failures=$(nta_delta failures leak_start leak_end)" \
		"fallbacks=$(nta_delta fallbacks leak_start leak_end);" \
		"since boot: bad_frees=$(nta_stat bad_frees)"
	if [ "$bad" -eq 0 ]; then
		tap_pass leak_bad_frees
	else
		tap_fail leak_bad_frees "$bad bad frees while the loads ran"
	fi
else
	tap_skip leak_bad_frees "NTA not present"
fi

nta_done
