#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_memoryless.sh - a CPU on a memoryless node leaves every reserve alone
#
# Booted with two nodes, the second with a CPU and no memory, and a
# reserve (make check's "memless" boot, nta_reserve=256K): the per-CPU
# reserve is sized from the memory of the nodes that have some, so it is
# not zero, and every online CPU's pool holds its reserve, the
# memoryless node's CPU included (its blocks come from the nearest node).
# SKIP without a memoryless node that has a CPU.

. "$(dirname "$0")/nta_lib.sh"

memless=
for n in /sys/devices/system/node/node[0-9]*; do
	[ -r "$n/meminfo" ] || continue
	kb=$(awk '/MemTotal/ { print $4 }' "$n/meminfo")
	[ "$kb" = 0 ] && ls -d "$n"/cpu[0-9]* >/dev/null 2>&1 && memless=${n##*/}
done
[ -n "$memless" ] || tap_skip_all memoryless "no memoryless node with a CPU (boot with one)"
nta_present && [ -r "$NTA_DBG/nodes" ] ||
	tap_skip_all memoryless "NTA or debugfs nta/nodes not present"
nta_init 2

line=$(dmesg | grep -o 'nta: unit .* blocks per CPU' | head -1)
reserve=$(echo "$line" | sed -n 's/.* reserve \([0-9]*\) and limit .*/\1/p')
tap_note "memoryless: $memless; ${line:-no NTA init line in dmesg}"
[ -n "$reserve" ] && [ "$reserve" -gt 0 ]
tap_check memoryless_reserve_kept $? \
	"the per-CPU reserve is ${reserve:-unknown} blocks, want more than 0"

tab=$(cat "$NTA_DBG/nodes")
echo "$tab" | sed 's/^/# /'
short=$(echo "$tab" | awk -v r="${reserve:-1}" '$5 < r { print $1 }')
[ -z "$short" ]
# shellcheck disable=SC2086 # the CPUs on one line
tap_check memoryless_pools_hold_reserve $? \
	"pools below the reserve of $reserve blocks: $(echo $short)"
nta_done
