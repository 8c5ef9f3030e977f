#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_boot_params.sh - boot parameters that must not hurt
#
# Booted with NTA parameters that are off, clamped or invalid (make check:
# nta=off nta_reserve=1T nta_max=16K):
#   boot_params_initialised    nta_init() printed its unit line
#   boot_params_messages       a message for every clamped or invalid parameter
#   boot_params_off_no_blocks  NTA off, no pool blocks taken (SKIP without nta=off)
#   boot_params_on_reserve     once switched on, the pools hold every CPU's reserve
#   boot_params_tcp_lo         iperf3 over loopback, TCP through NTA
# SKIP when the kernel was booted with none of nta=, nta_reserve=, nta_max=.

. "$(dirname "$0")/nta_lib.sh"

grep -qE '(^| )nta(_reserve|_max)?=' /proc/cmdline ||
	tap_skip_all boot_params "boot with nta=, nta_reserve= or nta_max="
nta_present || tap_skip_all boot_params "NTA not present"

have iperf3 || tap_skip_all boot_params "no iperf3 for the load"
nta_init 5
dmesg | grep -E '(^|\] )nta: ' | sed 's/^/# /'
dmesg | grep -q 'nta: unit '
tap_check boot_params_initialised $? "no 'nta: unit' line from nta_init()"

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
tap_check boot_params_messages $? "no message for$bad"

blocks=$(nta_stat blocks)
reserve=$(nta_stat reserve_blocks)
tap_note "boot_params: NTA $nta_orig_sysctl at boot, pools hold $blocks blocks," \
	"reserve $reserve blocks per CPU"
if [ "$nta_orig_sysctl" = 0 ]; then
	[ "$blocks" = 0 ]
	tap_check boot_params_off_no_blocks $? "NTA off but the pools hold $blocks blocks"
else
	tap_skip boot_params_off_no_blocks "nta=off not given"
fi

nta_set 1
blocks=$(nta_stat blocks)
tap_note "boot_params: NTA on, pools hold $blocks blocks (reserve $reserve x $(nproc) CPUs)"
[ "$blocks" -ge $((reserve * $(nproc))) ]
tap_check boot_params_on_reserve $? "fewer blocks than the reserve of every CPU"

a0=$(nta_stat allocs)
mbps=$(iperf_lo boot_params_tcp 2)
tap_check boot_params_tcp_lo $? "iperf3 over loopback failed with NTA on" &&
	tap_note "boot_params: iperf3 over loopback with NTA on: $mbps Mbit/s," \
		"$(($(nta_stat allocs) - a0)) NTA allocations"
nta_done
