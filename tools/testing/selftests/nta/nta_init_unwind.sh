#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_init_unwind.sh - NTA's initialisation made to fail leaves no trace
#
# In a boot where NTA's initialisation failed (a test setup injects the
# failure; the KUnit case nta.nta_init_unwind checks the pools): the
# failure is reported, no CPU hotplug state stays registered,
# net.core.nta refuses 1, and TCP runs on kmalloc heads.  SKIP when
# initialisation did not fail.

. "$(dirname "$0")/nta_lib.sh"

msg=$(dmesg | sed -n 's/.*nta: \(initialisation failed.*\)/\1/p')
[ -n "$msg" ] || tap_skip_all init_unwind "NTA's initialisation did not fail in this boot"

have iperf3 || tap_skip_all init_unwind "no iperf3 for the load"
nta_init 4
tap_note "init_unwind: $msg"
grep -q '^initialisation failed at the .*(-[0-9]*), undone; skb heads use kmalloc$' <<EOF
$msg
EOF
tap_check init_unwind_failure_reported $? "not a failure report of a step: $msg"

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
