#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_irqsoff.sh - the longest sections with interrupts off, NTA on and off
#
# NTA's slow paths run with interrupts off (the per-CPU local lock): they
# merge bins, drain other CPUs' frees and grow or trim pools.  With the
# irqsoff tracer (CONFIG_IRQSOFF_TRACER) this measures the longest
# interrupts-off section of the whole kernel under loads like make demo's: a
# TCP flow, then UDP flows of 1400 B and 8000 B datagrams, each over
# loopback with the receiver on another CPU than the sender, so that heads
# are freed by a CPU that does not own them and the owners' drains and bins
# work (where NTA holds interrupts off longest).  On one CPU both ends share
# it: no remote frees, but no section spans another vCPU's turn either,
# which under QEMU's -icount (one vCPU at a time, guest time counted in
# instructions) makes the figures instruction counts.  After two warm-up
# rounds (not counted), one per setting, NTA on and off alternate,
# NTA_IRQSOFF_ROUNDS each, in turns that swap which setting goes first; a
# round's figure is the tracer's tracing_max_latency after its loads, with
# the functions where that section began and ended, and the task and first
# callers where it ended.  The tests:
# irqsoff_loads_ran, every flow finished; irqsoff_nta_not_longest, no NTA-on
# round's (warm-up included) longest section began or ended in a function
# of NTA's (nta_*): NTA opens no section longer than the rest of the
# kernel's.  The figures, NTA on against off, are reported, not checked:
# under QEMU TCG with a debug kernel (KASAN, lockdep) and two CPUs the
# longest section of a round is milliseconds long and set by when the host
# runs the vCPU's thread (or, under -icount, by the other vCPU's turn), so
# a difference of microseconds between the settings cannot be seen.
# Sections NTA's work extends but does not open, such as a kick's drain in
# a hard interrupt, are not told apart.  SKIP without the tracer, iperf3
# or taskset.
#
# Environment [default]:
#   NTA_IRQSOFF_ROUNDS  rounds per setting [3]
#   NTA_IRQSOFF_FIRST   the setting that goes first, in the warm-up and in
#                       the counted rounds, 1 (NTA on) or 0 [1]
#   NTA_IRQSOFF_SECS    seconds per flow [2]
#   NTA_UDP_BW          UDP target bitrate [100M]
#   and those of nta_lib.sh (NTA_DRAIN_WAIT, NTA_PORT_BASE, ...)

. "$(dirname "$0")/nta_lib.sh"

rounds=${NTA_IRQSOFF_ROUNDS:-3}
first=${NTA_IRQSOFF_FIRST:-1}
case $first in 0 | 1) ;; *) echo "NTA_IRQSOFF_FIRST=$first: 0 or 1" >&2; exit 1 ;; esac
secs=${NTA_IRQSOFF_SECS:-2}
NTA_UDP_BW=${NTA_UDP_BW:-100M}
NTA_IPERF_TIME=$secs
PORT=$((NTA_PORT_BASE + 8))
T=/sys/kernel/tracing

[ -d "$T/instances" ] || mount -t tracefs nodev "$T" 2>/dev/null
[ -r "$T/available_tracers" ] || T=/sys/kernel/debug/tracing
TESTS="irqsoff_loads_ran irqsoff_nta_not_longest"

nta_init 2

skip_all()
{
	for t in $TESTS; do
		tap_skip "$t" "$1"
	done
	nta_done
}

grep -qw irqsoff "$T/available_tracers" 2>/dev/null ||
	skip_all "no irqsoff tracer (CONFIG_IRQSOFF_TRACER)"
have iperf3 || skip_all "iperf3 not found"
have taskset || skip_all "taskset not found"
nta_present || skip_all "NTA not present"
# The sender's CPU: the last one, CPU 0 itself on one CPU.
send_cpu=$(($(nproc) - 1))

# irqsoff_loads: the flows of one round; receiver on CPU 0
irqsoff_loads()
{
	_il_ok=0
	iperf_run irq-tcp "$PORT" "taskset -c 0" "taskset -c $send_cpu" -- ||
		_il_ok=1
	for len in 1400 8000; do
		iperf_run "irq-udp$len" "$PORT" "taskset -c 0" \
			"taskset -c $send_cpu" \
			-- -u -b "$NTA_UDP_BW" -l "$len" || _il_ok=1
	done
	return $_il_ok
}

# irqsoff_where: where the recorded section began and ended
irqsoff_where()
{
	awk '/=> started at:/ { s = $NF } /=> ended at:/ { e = $NF }
		END { printf "%s -> %s", s ? s : "?", e ? e : "?" }' "$T/trace"
}

# irqsoff_stack: the task and the first callers where the section ended
# (the tracer's stack trace), to tell whose section it was
irqsoff_stack()
{
	awk '/\| task:/ { t = $4 }
		/<stack trace>/ { st = 1; next }
		st && /^ => / && n < 8 { f = f (n++ ? " < " : "") $2 }
		END { printf "%s: %s", t ? t : "?", f ? f : "no stack" }' \
		"$T/trace"
}

on_off()
{
	if [ "$1" = 1 ]; then echo on; else echo off; fi
}

# nta_opened SETTING ROUND: note an NTA-on round whose longest section
# began or ended in a function of NTA's, from $us and $where
nta_opened()
{
	case "$1 $where" in
	"1 nta_"* | "1 "*" -> nta_"*)
		nta_longest="$nta_longest $2: $us us ($where);" ;;
	esac
}

# irqsoff_round SETTING: one round's loads; its figure in $us and $where
irqsoff_round()
{
	nta_set "$1"
	echo 0 >"$T/tracing_max_latency"
	echo 1 >"$T/tracing_on"
	irqsoff_loads || loads_ok=1
	# Stopped while read, so that the figure and the trace agree.
	echo 0 >"$T/tracing_on"
	us=$(readnum "$T/tracing_max_latency")
	where=$(irqsoff_where)
	stack=$(irqsoff_stack)
}

# irqsoff_restore: the tracer as it was, however the test ends
irqsoff_restore()
{
	echo 0 >"$T/tracing_on" 2>/dev/null
	echo "$old_tracer" >"$T/current_tracer" 2>/dev/null
	echo "$old_thresh" >"$T/tracing_thresh" 2>/dev/null
	echo "$old_on" >"$T/tracing_on" 2>/dev/null
}

old_tracer=$(cat "$T/current_tracer")
old_thresh=$(cat "$T/tracing_thresh")
old_on=$(cat "$T/tracing_on")
nta_cleanup_hook=irqsoff_restore
echo 0 >"$T/tracing_on"
# A threshold would record the last section above it, not the longest.
echo 0 >"$T/tracing_thresh"
if ! echo irqsoff >"$T/current_tracer"; then
	irqsoff_restore
	skip_all "cannot select the irqsoff tracer"
fi
: >"$NTA_TMP/irqsoff-on"
: >"$NTA_TMP/irqsoff-off"
max_on=0
max_off=0
where_on="?"
where_off="?"
loads_ok=0
nta_longest=""
# The round after the first warm-up was still the longest of its setting
# in three runs of 6-12 rounds each, whichever setting it had (the second
# round of the boot): so each setting gets a warm-up round of its own.
# Their figures do not count, but NTA opening their longest section does.
for s in "$first" $((1 - first)); do
	irqsoff_round "$s"
	tap_note "irqsoff warm-up round, NTA $(on_off "$s") (not counted): longest $us us ($where)"
	nta_opened "$s" "warm-up"
done
i=0
while [ $i -lt "$rounds" ]; do
	order="$first $((1 - first))"
	[ $((i % 2)) = 0 ] || order="$((1 - first)) $first"
	for s in $order; do
		irqsoff_round $s
		m=$(on_off "$s")
		echo "$us" >>"$NTA_TMP/irqsoff-$m"
		tap_note "irqsoff round $i, NTA $m: longest $us us ($where)"
		tap_note "  in $stack"
		nta_opened "$s" "round $i"
		if [ $s = 1 ] && [ "$us" -gt "$max_on" ]; then
			max_on=$us
			where_on=$where
		elif [ $s = 0 ] && [ "$us" -gt "$max_off" ]; then
			max_off=$us
			where_off=$where
		fi
	done
	i=$((i + 1))
done
irqsoff_restore
nta_set 1
tap_note "irqsoff: longest NTA on $max_on us ($where_on)," \
	"off $max_off us ($where_off); medians of $rounds rounds:" \
	"on $(median "$NTA_TMP/irqsoff-on") us, off $(median "$NTA_TMP/irqsoff-off") us"
[ $loads_ok = 0 ]
tap_check irqsoff_loads_ran $? "an iperf3 flow did not finish"
[ -z "$nta_longest" ]
tap_check irqsoff_nta_not_longest $? \
	"NTA opened the longest interrupts-off section:$nta_longest"
nta_done
