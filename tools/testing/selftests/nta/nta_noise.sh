#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_noise.sh - no interrupts for an idle CPU whose heads another CPU frees
#
# nta_noise: a writer on CPU 1 allocates heads in bursts (AF_UNIX
# datagrams) and sleeps; a reader on CPU 0 frees them during the sleep,
# so every free is remote while their owner is idle.  NTA must not make
# the idle CPU take more interrupts than mainline does: no kick (irq_work
# IPI) to an idle owner, no timer of NTA's that wakes it.  NTA on and off
# alternate, NTA_NOISE_ROUNDS each of NTA_NOISE_SECS seconds; the check:
# the median of all interrupts per second on CPU 1 with NTA on is at most
# 1 above the median with NTA off, and the median round kicks no owner.
# SKIP with one CPU.

. "$(dirname "$0")/nta_lib.sh"

rounds=${NTA_NOISE_ROUNDS:-5}
secs=${NTA_NOISE_SECS:-6}
[ "$(nproc)" -ge 2 ] || tap_skip_all noise "needs two CPUs"
bin=$(nta_bin nta_noise) || tap_skip_all noise "no nta_noise binary"
nta_present || tap_skip_all noise "NTA not present"
nta_init 2

: >"$NTA_TMP/noise-on"
: >"$NTA_TMP/noise-off"
: >"$NTA_TMP/kicks-on"
i=0
while [ $i -lt "$rounds" ]; do
	for s in 1 0; do
		nta_set $s
		nta_snap noise0
		"$bin" -w 1 -r 0 -t "$secs" >"$NTA_TMP/noise.out" 2>&1 ||
			tap_note_file "$NTA_TMP/noise.out"
		nta_snap noise1
		m=on
		[ $s = 1 ] || m=off
		kv all "$NTA_TMP/noise.out" >>"$NTA_TMP/noise-$m"
		[ $s = 1 ] && nta_delta kicks noise0 noise1 >>"$NTA_TMP/kicks-on"
		tap_note "noise round $i, NTA $m: CPU 1 per second:" \
			"$(grep '^RESULT' "$NTA_TMP/noise.out" | cut -d' ' -f3-);" \
			"remote_frees +$(nta_delta remote_frees noise0 noise1)," \
			"kicks +$(nta_delta kicks noise0 noise1)"
	done
	i=$((i + 1))
done
nta_set 1
on=$(median "$NTA_TMP/noise-on")
off=$(median "$NTA_TMP/noise-off")
tap_note "noise: CPU 1 interrupts per second, median of $rounds: NTA on $on, off $off"
limit=$(awk -v o="$off" 'BEGIN { print o + 1 }')
[ "$(wc -l <"$NTA_TMP/noise-on")" = "$rounds" ] && ! float_gt "$on" "$limit"
tap_check noise_idle_owner_interrupts $? \
	"NTA on: $on interrupts/s on the idle owner, off: $off (want on <= off + 1)"
# A kick is an irq_work queued on the owner: CAL (or IWI) on x86.  The
# median of the rounds: a burst that meets a stranded-free timer is a busy
# owner, kicked by design, once in a while.
kicks=$(median "$NTA_TMP/kicks-on")
all=$(tr '\n' ' ' <"$NTA_TMP/kicks-on")
[ "$kicks" = 0 ]
tap_check noise_idle_owner_not_kicked $? \
	"NTA on: kicks per round $all (median $kicks), want a median of 0"
nta_done
