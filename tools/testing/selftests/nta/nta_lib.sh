# SPDX-License-Identifier: GPL-2.0
#
# nta_lib.sh - helpers for the NTA selftests; sourced, never run.
#
# Written for busybox ash (a minimal guest may have only busybox-static,
# iperf3 and the programs of this directory): POSIX sh, no bash-isms.
#
#   KTAP:    nta_init PLAN, tap_pass, tap_fail, tap_skip, tap_check,
#            tap_skip_all, tap_note, nta_done (a test's name is stable
#            snake_case; its figures go to tap_note lines)
#            (on top of kselftest/ktap_helpers.sh)
#   NTA:     nta_present, nta_stat, nta_snap, nta_delta, nta_set,
#            nta_leak_check, nta_pools_check, nta_cmdline
#   helpers: wait_for, wait_listen, bg_start, bg_stop, iperf_*, kv
#
# Environment common to every test (defaults in brackets):
#   NTA_SUMMARY      debugfs summary file [/sys/kernel/debug/nta/summary]
#   NTA_DBG          debugfs directory of NTA [the summary's]
#   NTA_SYSCTL       run-time switch [/proc/sys/net/core/nta]
#   NTA_DRAIN_WAIT   seconds to wait for in-use bytes to come back [10]
#   NTA_LEAK_SLACK   reserved bytes tolerated above the start value [0]
#   NTA_LEAK_SLACK_OBJS  in-use objects tolerated above it [0]
#   NTA_PORT_BASE    first TCP/UDP port the tests use [18000]
#   NTA_TMPDIR       keep scratch files (iperf3/nta_load output) here
#                    instead of a temporary directory removed at exit

NTA_DIR=${NTA_DIR:-$(cd "$(dirname "$0")" && pwd)}
NTA_SUMMARY=${NTA_SUMMARY:-/sys/kernel/debug/nta/summary}
NTA_SYSCTL=${NTA_SYSCTL:-/proc/sys/net/core/nta}
NTA_DRAIN_WAIT=${NTA_DRAIN_WAIT:-10}
NTA_LEAK_SLACK=${NTA_LEAK_SLACK:-0}
NTA_LEAK_SLACK_OBJS=${NTA_LEAK_SLACK_OBJS:-0}
NTA_PORT_BASE=${NTA_PORT_BASE:-18000}
NTA_DBG=${NTA_DBG:-$(dirname "$NTA_SUMMARY")}

# shellcheck source=../kselftest/ktap_helpers.sh
. "$NTA_DIR/../kselftest/ktap_helpers.sh"

nta_bg_pids=""
nta_orig_sysctl=""
nta_cleanup_hook=""
nta_tmp_owned=""

# ---- KTAP output ----------------------------------------------------------

tap_note()
{
	echo "# $*"
}

# Indent a file's lines as KTAP diagnostics.
tap_note_file()
{
	[ -r "$1" ] && sed 's/^/#   /' "$1"
}

tap_pass()
{
	ktap_test_pass "$1"
}

# tap_fail NAME [REASON], tap_skip NAME REASON
tap_fail()
{
	[ -n "$2" ] && tap_note "$1: $2"
	ktap_test_fail "$1"
}

tap_skip()
{
	__ktap_test ok "$1" "SKIP $2"
	KTAP_CNT_SKIP=$((KTAP_CNT_SKIP + 1))
}

# tap_skip_all NAME REASON: a test that cannot run here: one SKIP line
tap_skip_all()
{
	nta_init 1
	tap_skip "$1" "$2"
	nta_done
}

# tap_check NAME STATUS [REASON]: pass when STATUS is 0; returns 0 or 1
tap_check()
{
	if [ "$2" -eq 0 ]; then
		tap_pass "$1"
		return 0
	fi
	tap_fail "$1" "$3"
	return 1
}

nta_cleanup()
{
	[ -n "$nta_cleanup_hook" ] && $nta_cleanup_hook
	for p in $nta_bg_pids; do
		kill "$p" 2>/dev/null
	done
	for p in $nta_bg_pids; do
		wait "$p" 2>/dev/null
	done
	nta_bg_pids=""
	if [ -n "$nta_orig_sysctl" ] && [ -w "$NTA_SYSCTL" ]; then
		echo "$nta_orig_sysctl" > "$NTA_SYSCTL"
	fi
	if [ -n "$nta_tmp_owned" ] && [ -d "$NTA_TMP" ]; then
		rm -rf "$NTA_TMP"
		nta_tmp_owned=""
	fi
}

# nta_init PLAN: header, plan, scratch dir, clean-up traps
nta_init()
{
	ktap_print_header
	ktap_set_plan "$1"
	NTA_TMP=$NTA_TMPDIR
	if [ -z "$NTA_TMP" ]; then
		mkdir -p "${TMPDIR:-/tmp}" 2>/dev/null
		NTA_TMP=$(mktemp -d "${TMPDIR:-/tmp}/nta.XXXXXX")
		nta_tmp_owned=1
	fi
	if [ -z "$NTA_TMP" ] || ! mkdir -p "$NTA_TMP"; then
		echo "Bail out! no scratch directory (set NTA_TMPDIR)"
		exit $KSFT_FAIL
	fi
	trap nta_cleanup EXIT
	trap 'nta_cleanup; exit 1' INT TERM HUP
	if nta_present; then
		nta_orig_sysctl=$(cat "$NTA_SYSCTL")
		tap_note "NTA present: sysctl net.core.nta=$nta_orig_sysctl"
	else
		tap_note "NTA not present ($NTA_SYSCTL or $NTA_SUMMARY missing):" \
			"NTA assertions SKIP, loads still run"
	fi
	tap_note "kernel $(uname -r), $(nproc) CPUs"
}

nta_done()
{
	while [ "$KTAP_TESTNO" -le "$KSFT_NUM_TESTS" ]; do
		tap_fail "missing_test_$KTAP_TESTNO" "script ended early"
	done
	ktap_print_totals
	nta_cleanup
	trap - EXIT
	if [ "$KTAP_CNT_FAIL" -ne 0 ]; then
		exit $KSFT_FAIL
	elif [ "$KTAP_CNT_PASS" -eq 0 ] && [ "$KTAP_CNT_SKIP" -ne 0 ]; then
		exit $KSFT_SKIP
	fi
	exit $KSFT_PASS
}

# ---- generic helpers ------------------------------------------------------

# nta_bin NAME: path of one of our programs (next to the script, or PATH)
nta_bin()
{
	if [ -x "$NTA_DIR/$1" ]; then
		echo "$NTA_DIR/$1"
	else
		command -v "$1"
	fi
}

have()
{
	command -v "$1" >/dev/null 2>&1
}

# nc_cmd: "nc", or "busybox nc" where there is no nc command, or nothing
nc_cmd()
{
	if have nc; then
		echo nc
	elif busybox --list 2>/dev/null | grep -qx nc; then
		echo busybox nc
	fi
}

# wait_for SECONDS CMD...: poll CMD every 0.2 s; status 0 once it succeeds
wait_for()
{
	_wf_left=$(($1 * 5))
	shift
	while ! "$@"; do
		[ "$_wf_left" -le 0 ] && return 1
		_wf_left=$((_wf_left - 1))
		sleep 0.2
	done
	return 0
}

# is_listening PORT [tcp|udp]: a socket bound to PORT (TCP: in LISTEN)
is_listening()
{
	if [ "${2:-tcp}" = udp ]; then
		cat /proc/net/udp /proc/net/udp6 2>/dev/null |
			grep -q ":$(printf '%04X' "$1") "
	else
		tcp_port_in_state "$1" 0A
	fi
}

# tcp_port_in_state PORT STATE: a TCP socket with local port PORT in STATE
# (the hex code of /proc/net/tcp: 01 established, 0A listen)
tcp_port_in_state()
{
	cat /proc/net/tcp /proc/net/tcp6 2>/dev/null |
		grep -q ":$(printf '%04X' "$1") [0-9A-F:]* $2 "
}

wait_listen()
{
	wait_for "${2:-10}" is_listening "$1"
}

# bg_start OUTFILE CMD...: run CMD in the background; its pid in $bg_pid
bg_start()
{
	_bg_out=$1
	shift
	"$@" > "$_bg_out" 2>&1 &
	bg_pid=$!
	nta_bg_pids="$nta_bg_pids $bg_pid"
}

# bg_wait PID [SECONDS]: wait for PID to exit on its own (bounded), then
# kill it; its exit status in $bg_rc
bg_wait()
{
	_bw_pid=$1
	wait_for "${2:-10}" pid_gone "$_bw_pid" || kill "$_bw_pid" 2>/dev/null
	wait "$_bw_pid" 2>/dev/null
	bg_rc=$?
	_bw_rest=""
	for p in $nta_bg_pids; do
		[ "$p" != "$_bw_pid" ] && _bw_rest="$_bw_rest $p"
	done
	nta_bg_pids=$_bw_rest
	return $bg_rc
}

bg_stop()
{
	kill "$1" 2>/dev/null
	bg_wait "$1" 5
}

pid_gone()
{
	! kill -0 "$1" 2>/dev/null || grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null
}

# kv KEY FILE: value of KEY=value on the last RESULT line of FILE
kv()
{
	grep '^RESULT ' "$2" 2>/dev/null | tail -n 1 |
		tr ' ' '\n' | sed -n "s/^$1=//p"
}

# readnum FILE: the integer in FILE, 0 when it is missing or not a number
readnum()
{
	_rn=$(cat "$1" 2>/dev/null)
	case "$_rn" in
	''|*[!0-9-]*|?*-*)
		echo 0 ;;
	*)
		echo "$_rn" ;;
	esac
}

# median FILE: the median of the numbers in FILE, one a line (0 if none)
median()
{
	sort -n "$1" | awk '{ v[NR] = $1 }
		END { print NR ? (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) : 0 }'
}

# float_gt A B: A > B for decimal numbers
float_gt()
{
	awk -v a="$1" -v b="$2" 'BEGIN { exit !(a + 0 > b + 0) }'
}

# ---- NTA statistics -------------------------------------------------------

# nta_cmdline NAME: the value of NAME= on the kernel command line
nta_cmdline()
{
	for _cl in $(cat /proc/cmdline); do
		case $_cl in
		"$1"=*)
			echo "${_cl#*=}"
			return ;;
		esac
	done
}

# nta_pools_check PREFIX: the TAP line PREFIX_pools_intact from debugfs
# nta/check, which checks every online CPU's pool on that CPU (SKIP
# without CONFIG_NTA_DEBUG)
nta_pools_check()
{
	if [ ! -e "$NTA_DBG/check" ]; then
		tap_skip "$1_pools_intact" "no nta/check (CONFIG_NTA_DEBUG)"
		return 0
	fi
	_pc=$(cat "$NTA_DBG/check" 2>&1)
	# shellcheck disable=SC2086 # one line of the per-CPU verdicts
	tap_note "$1: pool check:" $_pc
	[ -n "$_pc" ] && ! echo "$_pc" | grep -qv ' ok$'
	tap_check "$1_pools_intact" $? "a pool check failed"
}

nta_present()
{
	[ -r "$NTA_SUMMARY" ] && [ -w "$NTA_SYSCTL" ]
}

# nta_stat NAME [SNAPSHOT]: one value from the summary (or a saved copy)
nta_stat()
{
	awk -v n="$1" '$1 == n && $2 ~ /^-?[0-9]+$/ { v = $2 }
		END { print v + 0 }' "${2:-$NTA_SUMMARY}" 2>/dev/null || echo 0
}

# nta_snap NAME: save the summary as $NTA_TMP/NAME.snap
nta_snap()
{
	if nta_present; then
		cat "$NTA_SUMMARY" > "$NTA_TMP/$1.snap"
	else
		: > "$NTA_TMP/$1.snap"
	fi
}

# nta_delta STAT OLD NEW: counter difference between two snapshots
nta_delta()
{
	echo $(($(nta_stat "$1" "$NTA_TMP/$3.snap") - \
		$(nta_stat "$1" "$NTA_TMP/$2.snap")))
}

# nta_report OLD NEW: the counters that moved, on one comment line
nta_report()
{
	_nr=""
	for s in allocs frees remote_frees drains kicks grows returns \
		 failures bad_frees fallbacks; do
		_nr="$_nr $s=$(nta_delta "$s" "$1" "$2")"
	done
	tap_note "  nta deltas:$_nr"
}

# nta_set 0|1: switch new skb heads (no-op without NTA)
nta_set()
{
	nta_present && echo "$1" > "$NTA_SYSCTL"
}

# nta_flush_defer: mainline's skb_attempt_defer_free() parks skbs on the
# CPU that allocated them until that CPU next runs NET_RX; on an idle CPU
# they stay there.  A loopback ping pinned to each CPU raises NET_RX there
# and empties the list, so what is left in use is really in use.
nta_flush_defer()
{
	_fd_n=$(grep -c '^processor' /proc/cpuinfo 2>/dev/null)
	_fd_c=0
	while [ "$_fd_c" -lt "${_fd_n:-1}" ]; do
		taskset -c "$_fd_c" ping -c 1 -W 1 127.0.0.1 >/dev/null 2>&1
		_fd_c=$((_fd_c + 1))
	done
}

_nta_inuse_back()
{
	nta_flush_defer
	_ib_obj=$(nta_stat inuse_objects)
	_ib_res=$(nta_stat reserved_bytes)
	[ "$_ib_obj" -le $((_ib_base_obj + NTA_LEAK_SLACK_OBJS)) ] &&
		[ "$_ib_res" -le $((_ib_base_res + NTA_LEAK_SLACK)) ]
}

# nta_leak_check NAME BASE-SNAPSHOT: wait (bounded) until inuse_objects
# and reserved_bytes are back at or below BASE, then one TAP line
nta_leak_check()
{
	if ! nta_present; then
		tap_skip "$1" "NTA not present"
		return
	fi
	_ib_base_obj=$(nta_stat inuse_objects "$NTA_TMP/$2.snap")
	_ib_base_res=$(nta_stat reserved_bytes "$NTA_TMP/$2.snap")
	_lc_t0=$(date +%s)
	wait_for "$NTA_DRAIN_WAIT" _nta_inuse_back
	_lc_rc=$?
	tap_note "$1: inuse_objects $_ib_base_obj -> $(nta_stat inuse_objects)," \
		"reserved_bytes $_ib_base_res -> $(nta_stat reserved_bytes)," \
		"requested_bytes $(nta_stat requested_bytes)" \
		"(waited $(($(date +%s) - _lc_t0)) s, limit $NTA_DRAIN_WAIT s)"
	if [ $_lc_rc -eq 0 ]; then
		_lc_bad=$(($(nta_stat bad_frees) - \
			$(nta_stat bad_frees "$NTA_TMP/$2.snap")))
		if [ $_lc_bad -ne 0 ]; then
			tap_fail "$1" "$_lc_bad bad frees during the load"
			return
		fi
	fi
	tap_check "$1" $_lc_rc "NTA in-use bytes did not return to the start value"
}

# ---- iperf3 ---------------------------------------------------------------

# iperf_start NAME PORT SERVER-PREFIX CLIENT-PREFIX -- CLIENT-ARGS...
# A one-off server (so its sockets are gone when the run ends) and a client
# bounded by `timeout`, both in the background: $iperf_srv, $iperf_cli;
# output in $NTA_TMP/NAME.{srv,out}.  The prefixes are commands such as
# "taskset -c 0", or "" (they are word-split).
iperf_start()
{
	_ir_name=$1
	_ir_port=$2
	_ir_spre=$3
	_ir_cpre=$4
	shift 5
	# shellcheck disable=SC2086 # the prefixes are meant to be split
	bg_start "$NTA_TMP/$_ir_name.srv" $_ir_spre iperf3 -s -1 -p "$_ir_port"
	iperf_srv=$bg_pid
	iperf_cli=""
	if ! wait_listen "$_ir_port" 10; then
		bg_stop "$iperf_srv"
		echo "iperf3 server did not start" > "$NTA_TMP/$_ir_name.out"
		return 1
	fi
	# shellcheck disable=SC2086
	bg_start "$NTA_TMP/$_ir_name.out" timeout -s KILL \
		"$((NTA_IPERF_TIME + 20))" $_ir_cpre iperf3 -c 127.0.0.1 \
		-p "$_ir_port" -t "$NTA_IPERF_TIME" -f m "$@"
	iperf_cli=$bg_pid
}

# iperf_finish: wait for the client and the server; the client's status
iperf_finish()
{
	[ -n "$iperf_cli" ] || return 1
	bg_wait "$iperf_cli" $((NTA_IPERF_TIME + 25))
	_if_rc=$bg_rc
	bg_wait "$iperf_srv" 10
	return $_if_rc
}

# iperf_run NAME PORT SERVER-PREFIX CLIENT-PREFIX -- CLIENT-ARGS...: both
iperf_run()
{
	iperf_start "$@" || return 1
	iperf_finish
}

# iperf_mbps FILE sender|receiver: bitrate of the summary line (SUM if any)
iperf_mbps()
{
	awk -v side="$2" '
		$NF == side {
			for (i = 2; i <= NF; i++)
				if ($i == "Mbits/sec")
					v = $(i - 1)
			if ($1 == "[SUM]")
				sum = v
			else
				one = v
		}
		END { print (sum != "" ? sum : (one != "" ? one : 0)) }' "$1"
}

# iperf_lo NAME SECONDS [CLIENT-ARGS...]: one iperf3 run of SECONDS over
# loopback on port NTA_PORT_BASE + 6 (NTA_IPERF_TIME is left as it was);
# prints the receiver's Mbit/s, or the client's output as comments and
# status 1
iperf_lo()
{
	_il_name=$1
	_il_time=$NTA_IPERF_TIME
	NTA_IPERF_TIME=$2
	shift 2
	_il_rc=1
	if iperf_run "$_il_name" $((NTA_PORT_BASE + 6)) "" "" -- "$@"; then
		_il=$(iperf_mbps "$NTA_TMP/$_il_name.out" receiver)
		[ "$_il" != 0 ] && echo "$_il" && _il_rc=0
	fi
	NTA_IPERF_TIME=$_il_time
	[ $_il_rc = 0 ] || tap_note_file "$NTA_TMP/$_il_name.out" >&2
	return $_il_rc
}

# iperf_udp FILE: datagrams sent and delivered, from the UDP summary
# lines, into $udp_sent and $udp_got
iperf_udp()
{
	# shellcheck disable=SC2034 # results for the caller
	read -r udp_sent udp_got <<-EOF
	$(_iperf_udp_awk "$1")
	EOF
}

_iperf_udp_awk()
{
	awk '
		$NF == "sender" || $NF == "receiver" {
			for (i = 1; i <= NF; i++)
				if ($i ~ /^[0-9]+\/[0-9]+$/) {
					split($i, a, "/")
					if ($NF == "sender")
						sent = a[2]
					else
						got = a[2] - a[1]
				}
		}
		END { print (sent + 0) " " (got + 0) }' "$1"
}

# iperf_note NAME: the summary lines as comments
iperf_note()
{
	grep -E '(sender|receiver)$' "$NTA_TMP/$1.out" | sed 's/^/#   /'
}
