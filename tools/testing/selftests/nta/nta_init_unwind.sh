#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_init_unwind.sh - NTA's initialisation made to fail leaves no trace
#
# Booted with nta.fail_init=map|dead|online (fault injection of a kernel
# with the KUnit suite built in; the KUnit case nta.nta_init_unwind checks
# the pools): the failure is reported, no CPU hotplug state stays
# registered, net.core.nta refuses 1, and TCP runs on kmalloc heads.
# SKIP without nta.fail_init=.

. "$(dirname "$0")/nta_lib.sh"

step=$(nta_cmdline nta.fail_init)
[ -n "$step" ] || tap_skip_all init_unwind "boot with nta.fail_init=map|dead|online"

have iperf3 || tap_skip_all init_unwind "no iperf3 for the load"
nta_init 4
msg=$(dmesg | sed -n 's/.*nta: \(initialisation failed.*\)/\1/p')
tap_note "init_unwind: nta.fail_init=$step: ${msg:-no 'initialisation failed' message}"
[ -n "$msg" ]
tap_check init_unwind_failure_reported $? "no 'initialisation failed' message"

st=$(grep 'net/nta' /sys/devices/system/cpu/hotplug/states 2>&1)
[ -z "$st" ] && [ -s /sys/devices/system/cpu/hotplug/states ]
tap_check init_unwind_no_hotplug_state $? "hotplug states: ${st:-file missing or empty}"

! echo 1 2>/dev/null >"$NTA_SYSCTL" && [ "$(cat "$NTA_SYSCTL")" = 0 ]
tap_check init_unwind_sysctl_refuses_on $? \
	"net.core.nta is $(cat "$NTA_SYSCTL") after writing 1"

mbps=$(iperf_lo init_unwind_tcp 2)
tap_check init_unwind_tcp_lo $? "iperf3 over loopback failed" &&
	tap_note "init_unwind: iperf3 over loopback on kmalloc heads: $mbps Mbit/s"
nta_done
