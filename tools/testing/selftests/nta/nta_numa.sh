#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_numa.sh - every block of a CPU's pool is on that CPU's memory node
#
# On a machine with two or more memory nodes, debugfs nta/nodes is read
# while iperf3 loads both CPUs (make check boots with nta_reserve=0, so
# every block is one a pool grew by): the CPUs sit on two nodes, every
# pool's blocks are on its CPU's node, and every pool is intact.
# SKIP with fewer than two nodes.

. "$(dirname "$0")/nta_lib.sh"

nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
[ "$nodes" -ge 2 ] ||
	tap_skip_all numa "$nodes memory node(s): boot with two (CONFIG_NUMA)"

have iperf3 || tap_skip_all numa "no iperf3 for the load"
nta_present && [ -r "$NTA_DBG/nodes" ] || tap_skip_all numa "NTA or debugfs nta/nodes not present"
nta_init 3
nta_set 1
iperf_lo numa_tcp 4 >"$NTA_TMP/numa-mbps" &
lp=$!
sleep 3
tab=$(cat "$NTA_DBG/nodes")
if ! wait $lp; then
	tap_fail numa_cpus_on_two_nodes "iperf3 over loopback failed"
	nta_done
fi
echo "$tab" | sed 's/^/# /'
used=$(echo "$tab" | awk '{ print $3 }' | sort -u | wc -l)
mbps=$(cat "$NTA_TMP/numa-mbps")
tap_note "numa: $nodes nodes, the CPUs on $used of them; iperf3 $mbps Mbit/s"
[ "$used" -ge 2 ]
tap_check numa_cpus_on_two_nodes $? "the CPUs are on $used node(s), want 2"

bad=$(echo "$tab" | awk '$5 == 0 || $5 != $7 { print $1 }')
tap_note "numa: $(echo "$tab" | awk '{ printf "%s node %s %s blocks; ", $1, $3, $5 }')"
[ -z "$bad" ]
# shellcheck disable=SC2086 # the CPUs on one line
tap_check numa_blocks_on_cpu_node $? "blocks off their CPU's node (or none) on: $(echo $bad)"
nta_pools_check numa
nta_done
