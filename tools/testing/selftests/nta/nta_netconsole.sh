#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_netconsole.sh - NTA's reports through netconsole, under load
#
# Poison reports and refused frees (debugfs nta/poison_test and
# nta/bad_free_test, CONFIG_NTA_DEBUG) while iperf3 loads NTA, with a
# netconsole target sending the kernel log to 10.0.2.2:<ntanetcons=>
# (QEMU user networking's gateway; the host keeps what arrives and looks
# for the reports there).  Each report is printed after NTA's lock is
# released, and its printk allocates skbs from NTA on the same CPU:
# lockdep must still be on at the end.  SKIP without ntanetcons= on the
# kernel command line, CONFIG_NETCONSOLE_DYNAMIC or nta/bad_free_test.

. "$(dirname "$0")/nta_lib.sh"

port=$(nta_cmdline ntanetcons)
d=/sys/kernel/config/netconsole/nta
mount -t configfs none /sys/kernel/config 2>/dev/null
if [ -z "$port" ] || [ ! -e "$NTA_DBG/bad_free_test" ] || ! mkdir "$d" 2>/dev/null; then
	tap_skip_all netconsole \
		"needs ntanetcons= (nta-boot.sh -u), CONFIG_NETCONSOLE_DYNAMIC and CONFIG_NTA_DEBUG"
fi
# The target goes away however the test ends.
nc_remove() { echo 0 2>/dev/null >"$d/enabled"; rmdir "$d"; }
nta_cleanup_hook=nc_remove

have iperf3 || tap_skip_all netconsole "no iperf3 for the load"
nta_init 6
echo eth0 >$d/dev_name
echo 10.0.2.15 >$d/local_ip
echo 10.0.2.2 >$d/remote_ip
echo "$port" >$d/remote_port
echo 52:55:0a:00:02:02 >$d/remote_mac
echo 1 >$d/enabled
tap_check netconsole_enabled $? "cannot enable the target" || nta_done
tap_note "netconsole: sending to 10.0.2.2:$port"
echo "<4>NTA-NETCONSOLE-HELLO" >/dev/kmsg
b0=$(nta_stat bad_frees)
iperf_lo netconsole_tcp 6 >"$NTA_TMP/nc-mbps" &
lp=$!
sleep 2
# Poison reports first: the rate limit allows ten in five seconds.
p=0
while [ $p -lt 4 ] && echo 1 >"$NTA_DBG/poison_test"; do p=$((p + 1)); done
b=0
while [ $b -lt 20 ] && echo 1 >"$NTA_DBG/bad_free_test"; do b=$((b + 1)); done
wait $lp
rc=$?
nbad=$(($(nta_stat bad_frees) - b0))
# Since the marker: the KUnit suite provoked one at boot.
pr=$(dmesg | sed -n '/NTA-NETCONSOLE-HELLO/,$p' | grep -c 'nta: write after free')
tap_note "netconsole: $p poison rounds, $pr poison reports printed"
[ $p = 4 ] && [ "$pr" = 4 ]
tap_check netconsole_poison_reports $? "want 4 of each"
# Three refused frees per write to bad_free_test (nta_debug.c).
tap_note "netconsole: $b bad-free rounds, $nbad refused frees counted," \
	"$(dmesg | grep -c 'nta: refusing free') reports printed (rate-limited)"
[ $nbad = $((b * 3)) ] && [ $b = 20 ]
tap_check netconsole_refused_frees $? "want 20 rounds and 3 refused frees each"
tap_check netconsole_tcp_lo $rc "iperf3 over loopback failed alongside" &&
	tap_note "netconsole: iperf3 over loopback alongside: $(cat "$NTA_TMP/nc-mbps") Mbit/s"
# Every CPU's pool, checked on its CPU once the load is over.
nta_pools_check netconsole
echo "<4>NTA-NETCONSOLE-DONE" >/dev/kmsg
grep -q 'debug_locks: *1' /proc/lockdep_stats 2>/dev/null
tap_check netconsole_lockdep_on $? "lockdep is off: $(grep debug_locks /proc/lockdep_stats 2>&1)"
nta_done
