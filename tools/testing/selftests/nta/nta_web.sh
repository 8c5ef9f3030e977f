#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_web.sh - the epoll web server (nta_httpd) under nta_load
#
# Requests/s, bytes/s and latency p50/p99/max from nta_load against
# nta_httpd on 127.0.0.1, keep-alive and one connection per request, for
# 64 B, 1 KiB and 16 KiB responses (web_keepalive_*, web_close_*); each
# passes with errors=0 and rps>0.  Then: a malformed request gets 400 and
# a close (web_malformed_400), two pipelined requests get two responses
# (web_pipelined), clients that reset mid-response do not hurt the server
# (web_client_resets), net.core.nta flipped on and off under keep-alive
# load gives no error response (web_toggle_under_load), wrk and nta_load
# agree on requests/s within NTA_WRK_TOL percent when wrk is installed
# (web_wrk_agree, else SKIP), the server's fd count returns to its idle
# value (leak_web_fds) and NTA in-use bytes to the start value (leak_web).
#
# Environment [default]:
#   NTA_WEB_TIME        seconds per load run [2]
#   NTA_WEB_CONNS       connections [8]
#   NTA_WEB_THREADS     client threads, 0 = one per CPU [0]
#   NTA_WEB_SRV_THREADS server threads, 0 = one per CPU [0]
#   NTA_WEB_TIMEOUT_MS  request timeout counted as an error [10000]
#   NTA_TOGGLE_PERIOD   seconds between flips [0.5]
#   NTA_WRK_TOL         allowed wrk/nta_load difference in percent [20]
#   NTA_WRK_ROUNDS      interleaved rounds of each, medians compared [5]
#   NTA_SET             0 or 1: force net.core.nta for the load runs
#   and those of nta_lib.sh (NTA_DRAIN_WAIT, NTA_PORT_BASE, ...)

. "$(dirname "$0")/nta_lib.sh"

NTA_WEB_TIME=${NTA_WEB_TIME:-2}
NTA_WEB_CONNS=${NTA_WEB_CONNS:-8}
NTA_WEB_THREADS=${NTA_WEB_THREADS:-0}
NTA_WEB_SRV_THREADS=${NTA_WEB_SRV_THREADS:-0}
NTA_WEB_TIMEOUT_MS=${NTA_WEB_TIMEOUT_MS:-10000}
NTA_TOGGLE_PERIOD=${NTA_TOGGLE_PERIOD:-0.5}
NTA_WRK_TOL=${NTA_WRK_TOL:-20}
NTA_WRK_ROUNDS=${NTA_WRK_ROUNDS:-5}
PORT=$((NTA_PORT_BASE + 2))

HTTPD=$(nta_bin nta_httpd)
LOAD=$(nta_bin nta_load)

nta_init 13

if [ -z "$HTTPD" ] || [ -z "$LOAD" ]; then
	for t in web_keepalive_64 web_keepalive_1k web_keepalive_16k \
		 web_close_64 web_close_1k web_close_16k web_malformed_400 \
		 web_pipelined web_client_resets web_toggle_under_load \
		 web_wrk_agree leak_web_fds leak_web; do
		tap_fail "$t" "nta_httpd or nta_load not built"
	done
	nta_done
fi

nta_snap start
[ -n "$NTA_SET" ] && nta_set "$NTA_SET"

# The server exits by itself at the latest after -d seconds, whatever
# happens to this script.
bg_start "$NTA_TMP/httpd.out" "$HTTPD" -p "$PORT" -t "$NTA_WEB_SRV_THREADS" \
	-i 30 -d $((NTA_WEB_TIME * 20 + 120))
SRV=$bg_pid
if ! wait_listen "$PORT" 10; then
	tap_note_file "$NTA_TMP/httpd.out"
	tap_fail web_keepalive_64 "nta_httpd did not start"
	nta_done
fi
tap_note_file "$NTA_TMP/httpd.out"
nta_present && tap_note "load runs with net.core.nta=$(cat "$NTA_SYSCTL")"

server_fds()
{
	# shellcheck disable=SC2012 # /proc/PID/fd names are numbers
	ls "/proc/$SRV/fd" 2>/dev/null | wc -l
}
FDS0=$(server_fds)

# load NAME LOAD-ARGS...: one nta_load run, figures as comments
load()
{
	_name=$1
	shift
	"$LOAD" -p "$PORT" -n "$NTA_WEB_CONNS" -t "$NTA_WEB_THREADS" \
		-d "$NTA_WEB_TIME" -T "$NTA_WEB_TIMEOUT_MS" "$@" \
		> "$NTA_TMP/$_name.out" 2>&1
	_load_rc=$?
	grep -v '^RESULT' "$NTA_TMP/$_name.out" | sed 's/^/#   /'
}

# load_check NAME: errors=0 and rps>0 on its RESULT line
load_check()
{
	_f="$NTA_TMP/$1.out"
	_err=$(kv errors "$_f")
	_rps=$(kv rps "$_f")
	tap_note "$1: rps=$_rps bps=$(kv bps "$_f") p50_us=$(kv p50_us "$_f")" \
		"p99_us=$(kv p99_us "$_f") max_us=$(kv max_us "$_f") errors=$_err"
	if [ "${_err:-1}" -eq 0 ] && float_gt "${_rps:-0}" 0 &&
	   ! pid_gone "$SRV"; then
		tap_pass "$1"
	else
		tap_fail "$1" "errors=${_err:-none} rps=${_rps:-none}"
	fi
}

for mode in keepalive close; do
	for size in 64 1k 16k; do
		name=web_${mode}_$size
		nta_snap "$name.0"
		if [ $mode = keepalive ]; then
			load "$name" -k -u "/$size"
		else
			load "$name" -c -u "/$size"
		fi
		nta_snap "$name.1"
		nta_present && nta_report "$name.0" "$name.1"
		load_check "$name"
	done
done

# ---- protocol checks with busybox nc ----------------------------------------

NC=$(nc_cmd)
# shellcheck disable=SC2086 # $NC may be "busybox nc"
if [ -n "$NC" ]; then
	printf 'BLAH\r\n\r\nGET /64 HTTP/1.1\r\nHost: x\r\n\r\n' |
		timeout 10 $NC 127.0.0.1 "$PORT" > "$NTA_TMP/bad.out" 2>&1
	n=$(grep -c 'HTTP/1.1' "$NTA_TMP/bad.out")
	if head -n 1 "$NTA_TMP/bad.out" | grep -q '^HTTP/1.1 400 ' &&
	   [ "$n" -eq 1 ]; then
		tap_pass web_malformed_400
	else
		tap_note_file "$NTA_TMP/bad.out"
		tap_fail web_malformed_400 "expected one 400 response, then close"
	fi

	req='GET /64 HTTP/1.1\r\nHost: x\r\n\r\n'
	req=$req'GET /1k HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'
	# shellcheck disable=SC2059 # the escapes are meant for printf
	printf "$req" |
		timeout 10 $NC 127.0.0.1 "$PORT" > "$NTA_TMP/pipe.out" 2>&1
	n=$(grep -o 'HTTP/1.1 200 OK' "$NTA_TMP/pipe.out" | wc -l)
	bytes=$(wc -c < "$NTA_TMP/pipe.out")
	tap_note "web_pipelined: $n responses, $bytes bytes"
	if [ "$n" -eq 2 ] && grep -q 'Content-Length: 1024' "$NTA_TMP/pipe.out"; then
		tap_pass web_pipelined
	else
		tap_fail web_pipelined "expected two 200 responses"
	fi
else
	tap_skip web_malformed_400 "nc not found"
	tap_skip web_pipelined "nc not found"
fi

# clients that reset as soon as a 128 KiB response starts
load web_client_resets -A -u /128k
aborts=$(kv aborts "$NTA_TMP/web_client_resets.out")
load web_after_resets -k -u /64
if [ "${aborts:-0}" -gt 0 ] && [ "$(kv errors "$NTA_TMP/web_after_resets.out")" = 0 ] &&
   ! pid_gone "$SRV"; then
	tap_note "web_client_resets: $aborts connections reset mid-response, server still serves"
	tap_pass web_client_resets
else
	errs=$(kv errors "$NTA_TMP/web_after_resets.out")
	tap_fail web_client_resets "aborts=$aborts, then $errs errors"
fi

# ---- the switch flipped under load -------------------------------------------

if nta_present; then
	nta_snap toggle.0
	bg_start "$NTA_TMP/web_toggle_under_load.out" "$LOAD" -p "$PORT" \
		-n "$NTA_WEB_CONNS" -t "$NTA_WEB_THREADS" -d "$NTA_WEB_TIME" \
		-T "$NTA_WEB_TIMEOUT_MS" -k -u /1k
	run=$bg_pid
	flips=0
	while ! pid_gone $run; do
		sleep "$NTA_TOGGLE_PERIOD"
		nta_set 0
		sleep "$NTA_TOGGLE_PERIOD"
		nta_set 1
		flips=$((flips + 1))
	done
	bg_wait $run 5
	nta_set "${NTA_SET:-$nta_orig_sysctl}"
	nta_snap toggle.1
	grep -v '^RESULT' "$NTA_TMP/web_toggle_under_load.out" | sed 's/^/#   /'
	tap_note "web_toggle_under_load: $flips 1->0->1 cycles"
	nta_report toggle.0 toggle.1
	load_check web_toggle_under_load
else
	tap_skip web_toggle_under_load "NTA not present"
fi

# ---- a second opinion: wrk --------------------------------------------------

if have wrk; then
	wthreads=$NTA_WEB_THREADS
	[ "$wthreads" -eq 0 ] && wthreads=$(nproc)
	[ "$wthreads" -gt "$NTA_WEB_CONNS" ] && wthreads=$NTA_WEB_CONNS
	# one unrecorded warm-up round of each client (under TCG and KASAN
	# wrk's first runs in a boot come out far slower than the later
	# ones), then interleaved rounds, ours then wrk; the median of each
	load wrk_ours_warmup -k -u /1k -t "$wthreads"
	timeout 60 wrk -t "$wthreads" -c "$NTA_WEB_CONNS" \
		-d "${NTA_WEB_TIME}s" "http://127.0.0.1:$PORT/1k" \
		> "$NTA_TMP/wrk_warmup.out" 2>&1
	tap_note "web_wrk_agree: warm-up (not counted): nta_load" \
		"$(kv rps "$NTA_TMP/wrk_ours_warmup.out") req/s, wrk" \
		"$(awk '$1 == "Requests/sec:" { print $2 }' "$NTA_TMP/wrk_warmup.out") req/s"
	: > "$NTA_TMP/wrk_ours.rps"
	: > "$NTA_TMP/wrk_theirs.rps"
	round=0
	while [ "$round" -lt "$NTA_WRK_ROUNDS" ]; do
		round=$((round + 1))
		load "wrk_ours_$round" -k -u /1k -t "$wthreads"
		kv rps "$NTA_TMP/wrk_ours_$round.out" >> "$NTA_TMP/wrk_ours.rps"
		timeout 60 wrk -t "$wthreads" -c "$NTA_WEB_CONNS" \
			-d "${NTA_WEB_TIME}s" "http://127.0.0.1:$PORT/1k" \
			> "$NTA_TMP/wrk_$round.out" 2>&1
		sed 's/^/#   /' "$NTA_TMP/wrk_$round.out"
		awk '$1 == "Requests/sec:" { print $2 }' "$NTA_TMP/wrk_$round.out" \
			>> "$NTA_TMP/wrk_theirs.rps"
	done
	ours=$(median "$NTA_TMP/wrk_ours.rps")
	theirs=$(median "$NTA_TMP/wrk_theirs.rps")
	diff=$(awk -v a="$ours" -v b="$theirs" \
		'BEGIN { d = a - b; if (d < 0) d = -d; m = a > b ? a : b;
			 printf "%.1f", m ? 100 * d / m : 100 }')
	tap_note "web_wrk_agree: nta_load $(tr '\n' ' ' < "$NTA_TMP/wrk_ours.rps")req/s," \
		"wrk $(tr '\n' ' ' < "$NTA_TMP/wrk_theirs.rps")req/s"
	tap_note "web_wrk_agree: medians nta_load $ours, wrk $theirs, differ by $diff%"
	if float_gt "$theirs" 0 && ! float_gt "$diff" "$NTA_WRK_TOL"; then
		tap_pass web_wrk_agree
	else
		tap_fail web_wrk_agree "more than $NTA_WRK_TOL% apart"
	fi
else
	tap_skip web_wrk_agree "wrk not installed"
fi

# ---- nothing left behind ----------------------------------------------------

# shellcheck disable=SC2317 # called through wait_for
fds_back()
{
	[ "$(server_fds)" -le "$FDS0" ]
}
wait_for 10 fds_back
rc=$?
tap_note "leak_web_fds: server fds idle $FDS0, now $(server_fds)"
tap_check leak_web_fds $rc "server holds more fds than when idle"

bg_stop "$SRV"
tap_note "nta_httpd: $(grep '^RESULT' "$NTA_TMP/httpd.out")"
[ -n "$nta_orig_sysctl" ] && echo "$nta_orig_sysctl" > "$NTA_SYSCTL"
nta_leak_check leak_web start

nta_done
