#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_mem_pressure.sh - NTA's pools keep packets moving under memory pressure
#
# tmpfs takes what is available but ~96 MiB, a churner writes and removes
# a 40 MiB file in a loop (the page allocator near its watermarks); then
# UDP at a fixed rate and TCP over loopback, NTA on and off interleaved.
# NTA's pools are memory kept apart for packets: NTA on may lose no more
# datagrams than NTA off, 0.5 point of noise allowed.  The default
# 10 Mbit/s is well below what an emulated guest sends, and the receiver
# gets a socket buffer of about two seconds of it (NTA_PRESSURE_RCVBUF):
# with the default buffer, a tenth of a second, a reader the emulated
# machine did not run in time lost up to 255 datagrams a round, on either
# setting, all refused by the full buffer (Udp RcvbufErrors, noted per
# round).  So a loss is memory's doing more than the scheduler's.  It
# fills the machine's memory: make check runs it in its guest; it is not
# part of run_tests.
#
# Environment [default]: NTA_PRESSURE_RATE  UDP bitrate [10M]
#                        NTA_PRESSURE_RCVBUF  iperf3 -w, bytes [2097152]

. "$(dirname "$0")/nta_lib.sh"

nta_present || tap_skip_all mem_pressure "NTA not present"

rate=${NTA_PRESSURE_RATE:-10M}
rcvbuf=${NTA_PRESSURE_RCVBUF:-2097152}
# iperf3 -w sets both buffers, and fails unless both get what it asks
RMEM_MAX=/proc/sys/net/core/rmem_max WMEM_MAX=/proc/sys/net/core/wmem_max
rmem0= wmem0=
UPORT=$((NTA_PORT_BASE + 7))

# udp_lost SECS: "LOST TOTAL" of one iperf3 UDP run, from the receiver's line
udp_lost()
{
	NTA_IPERF_TIME=$1
	if ! iperf_run pressure_udp "$UPORT" "" "" -- -u -b "$rate" -l 1400 \
			-w "$rcvbuf"; then
		tap_note_file "$NTA_TMP/pressure_udp.out" >&2
		return 1
	fi
	sed -n 's|.* \([0-9][0-9]*\)/\([0-9][0-9]*\) (.*receiver$|\1 \2|p' \
		"$NTA_TMP/pressure_udp.out" | tail -1
}

# udp_rcvbuf_errors: Udp RcvbufErrors of /proc/net/snmp (this namespace:
# the test's iperf3 is the only UDP receiver), or nothing if unreadable
udp_rcvbuf_errors()
{
	awk '$1 == "Udp:" && !n { for (i = 2; i <= NF; i++) f[$i] = i; n = 1; next }
	     $1 == "Udp:" && ("RcvbufErrors" in f) { v = $f["RcvbufErrors"] }
	     END { if (v == "") exit 1; print v }' /proc/net/snmp
}

# refused OLD: datagrams refused by full receive buffers since OLD, or "?"
refused()
{
	_rf=$(udp_rcvbuf_errors) || _rf=
	case "$1,$_rf" in
	,*|*,|*[!0-9,]*) echo "?" ;;
	*) echo $((_rf - $1)) ;;
	esac
}

stop_churn()
{
	kill "$churn" 2>/dev/null
	wait "$churn" 2>/dev/null
	rm -f /run/hog/hog /run/hog/churn
	umount /run/hog
	echo "nta_pressure: churn stopped" >/dev/kmsg
	[ -n "$rmem0" ] && echo "$rmem0" >"$RMEM_MAX"
	[ -n "$wmem0" ] && echo "$wmem0" >"$WMEM_MAX"
	rmem0= wmem0=
}

have iperf3 || tap_skip_all mem_pressure "no iperf3 for the load"
# /tmp stops at half the memory: a tmpfs of its own, without a limit
# (without it the hog would fill the filesystem under /run instead).
mkdir -p /run/hog && mount -t tmpfs -o size=100% tmpfs /run/hog ||
	tap_skip_all mem_pressure "cannot mount a tmpfs on /run/hog"
nta_init 3
avail=$(sed -n 's/^MemAvailable: *\([0-9]*\) kB/\1/p' /proc/meminfo)
hog=$(( (avail - 96 * 1024) / 1024 ))
[ $hog -gt 0 ] && dd if=/dev/zero of=/run/hog/hog bs=1M count=$hog 2>/dev/null
# The churner is the OOM killer's first choice, should it come to that;
# the splat scanner accepts that report's Call Trace between the marks.
echo "nta_pressure: churn started" >/dev/kmsg
(
	echo 1000 >/proc/self/oom_score_adj
	while :; do
		dd if=/dev/zero of=/run/hog/churn bs=1M count=40 2>/dev/null
		rm -f /run/hog/churn
	done
) &
churn=$!
nta_cleanup_hook=stop_churn
# SO_RCVBUF and SO_SNDBUF are capped at these (the kernel doubles what
# it allows)
rmem0=$(cat "$RMEM_MAX") wmem0=$(cat "$WMEM_MAX")
[ "$rmem0" -lt "$rcvbuf" ] && echo "$rcvbuf" >"$RMEM_MAX"
[ "$wmem0" -lt "$rcvbuf" ] && echo "$rcvbuf" >"$WMEM_MAX"
tap_note "hog ${hog} MiB of ${avail} kB available;" \
	"$(grep -E '^(MemFree|MemAvailable)' /proc/meminfo | tr -s ' ' | tr '\n' ' ')"

lost_1=0 sent_1=0 lost_0=0 sent_0=0 runs=0
for round in 1 2 3; do
	for on in 1 0; do
		nta_set $on
		rb=$(udp_rcvbuf_errors) || rb=
		r=$(udp_lost 3) || continue
		rb=$(refused "$rb")
		mbps=$(iperf_lo pressure_tcp 2) || continue
		set -- $r
		[ -n "${2:-}" ] || continue
		runs=$((runs + 1))
		tap_note "round $round NTA $on: UDP $rate lost $1 of $2 datagrams" \
			"($rb refused by a full receive buffer), TCP $mbps Mbit/s"
		echo "NTA-METRIC pressure_nta${on}_r${round} lost=$1 sent=$2" \
			"rcvbuf_errors=$rb tcp_mbps=$mbps"
		eval "lost_$on=\$((lost_$on + $1)) sent_$on=\$((sent_$on + $2))"
	done
done
nta_cleanup_hook=
stop_churn

oom=$(dmesg | sed -n '/nta_pressure: churn started/,$p' | grep 'Out of memory: Killed process')
churner=$(echo "$oom" | grep -c 'oom_score_adj:1000')
others=$(echo "$oom" | grep -v '^$' | grep -vc 'oom_score_adj:1000')
tap_note "OOM kills: $churner of the churner, $others of others"
if [ "$others" != 0 ]; then
	tap_fail mem_pressure_rounds_completed "the OOM killer took another process"
else
	[ $runs = 6 ]
	tap_check mem_pressure_rounds_completed $? "$runs of 6 runs completed"
fi

tap_note "mem_pressure: UDP lost NTA on $lost_1/$sent_1, NTA off $lost_0/$sent_0"
echo "NTA-METRIC pressure_udp_lost on=$lost_1/$sent_1 off=$lost_0/$sent_0"
awk -v a=$lost_1 -v b=$sent_1 -v c=$lost_0 -v d=$sent_0 \
	'BEGIN { exit !(b && d && a / b <= c / d + 0.005) }'
tap_check mem_pressure_udp_loss $? "NTA on lost more"
nta_pools_check mem_pressure
nta_done
