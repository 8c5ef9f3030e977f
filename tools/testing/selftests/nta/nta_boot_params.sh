#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_boot_params.sh - boot parameters that must not hurt
#
# Booted with NTA parameters that are off, clamped or invalid (make check:
# nta=off nta_reserve=1T nta_max=16K):
#   boot_params: NTA initialised        nta_init() printed its unit line
#   ... a message for every clamped or invalid parameter
#   ... NTA off, no pool blocks taken   (SKIP without nta=off)
#   ... NTA on, pools hold the reserve  of every CPU once switched on
#   ... iperf3 over loopback            TCP through NTA
# SKIP when the kernel was booted with none of nta=, nta_reserve=, nta_max=.

. "$(dirname "$0")/nta_lib.sh"

grep -qE '(^| )nta(_reserve|_max)?=' /proc/cmdline ||
	tap_skip_all boot_params "boot with nta=, nta_reserve= or nta_max="
nta_present || tap_skip_all boot_params "NTA not present"

have iperf3 || tap_skip_all boot_params "no iperf3 for the load"
nta_init 5
dmesg | grep -E '(^|\] )nta: ' | sed 's/^/# /'
dmesg | grep -q 'nta: unit '
tap_verdict $? "boot_params: NTA initialised: $(dmesg | sed -n 's/.*nta: unit /unit /p')" \
	"boot_params: no 'nta: unit' line from nta_init()"

bad=
for w in $(cat /proc/cmdline); do
	case $w in
	nta_reserve=1T)
		dmesg | grep -qE 'nta: nta_reserve=.* (is above nta_max|is more than 1/64)' ||
			bad="$bad $w" ;;
	nta=on|nta=off|nta_reserve=*[0-9]|nta_reserve=*[0-9][KMG]) ;;
	nta_max=*[0-9]|nta_max=*[0-9][KMGT]) ;;
	nta=*|nta_reserve=*|nta_max=*)
		dmesg | grep -q "nta: invalid ${w%%=*}=" || bad="$bad $w" ;;
	esac
done
[ -z "$bad" ]
tap_verdict $? "boot_params: a message for every clamped or invalid parameter" \
	"boot_params: no message for$bad"

blocks=$(nta_stat blocks)
reserve=$(nta_stat reserve_blocks)
if [ "$nta_orig_sysctl" = 0 ]; then
	[ "$blocks" = 0 ]
	held="reserve $reserve blocks per CPU on hold"
	tap_verdict $? "boot_params: NTA off, no pool blocks taken ($held)" \
		"boot_params: NTA off but the pools hold $blocks blocks"
else
	tap_skip "boot_params: NTA on at boot, pools hold $blocks blocks" "nta=off not given"
fi

nta_set 1
blocks=$(nta_stat blocks)
[ "$blocks" -ge $((reserve * $(nproc))) ]
tap_verdict $? "boot_params: NTA on, pools hold $blocks blocks (reserve $reserve x $(nproc) CPUs)" \
	"boot_params: NTA on, pools hold $blocks blocks, below reserve $reserve x $(nproc) CPUs"

a0=$(nta_stat allocs)
mbps=$(iperf_lo boot_params_tcp 2)
rc=$?
allocs="$(($(nta_stat allocs) - a0)) NTA allocations"
tap_verdict $rc "boot_params: iperf3 over loopback with NTA on: $mbps Mbit/s, $allocs" \
	"boot_params: iperf3 over loopback failed with NTA on"
nta_done
