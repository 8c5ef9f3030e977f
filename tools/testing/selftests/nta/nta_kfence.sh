#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_kfence.sh - KFENCE still samples skb heads with NTA on
#
# A head that KFENCE is about to sample (its allocation gate is open) comes
# from kmalloc instead of NTA, so that skb heads stay in KFENCE's sample.
# With NTA on, a UDP load over loopback (1400-byte datagrams: heads that
# NTA serves) runs for a few seconds; debugfs kfence/objects must then list
# kmalloc or skbuff_small_head objects allocated by __alloc_skb(), while
# NTA served the rest.  Run it in a boot of its own with
# kfence.sample_interval=1 (the "kfence" boot of make check-extra EXTRA=rt,
# whose config builds KFENCE in); not part of run_tests.  SKIP without
# KFENCE or NTA.

. "$(dirname "$0")/nta_lib.sh"

f=/sys/kernel/debug/kfence/objects
[ -r "$f" ] || tap_skip_all kfence "no $f (CONFIG_KFENCE, debugfs)"
iv=$(cat /sys/module/kfence/parameters/sample_interval 2>/dev/null)
[ "${iv:-0}" != 0 ] || tap_skip_all kfence "KFENCE is off (boot with kfence.sample_interval=1)"
nta_present || tap_skip_all kfence "NTA not present"
have iperf3 || tap_skip_all kfence "no iperf3 for the load"
nta_init 2
nta_set 1

# kfence/objects keeps its last 255 objects: count skb heads among them.
skb_heads()
{
	awk '/^kfence-#/ { n += head && skb; head = /cache=(kmalloc-|skbuff_small_head)/; skb = 0 }
	     /__alloc_skb/ { skb = 1 }
	     END { print n + (head && skb) }' "$f"
}

before=$(skb_heads)
nta_snap kfence0
mbps=$(iperf_lo kfence_udp 4 -u -b 0 -l 1400)
nta_snap kfence1
after=$(skb_heads)
allocs=$(nta_delta allocs kfence0 kfence1)
tap_note "kfence: sample_interval ${iv} ms; UDP over loopback ${mbps:-failed} Mbit/s;" \
	"skb heads among KFENCE's objects: $before before, $after after; NTA allocs +$allocs"
[ "$after" -gt 0 ]
tap_check kfence_samples_skb_heads $? "no skb head among KFENCE's objects after the load"
[ "$allocs" -gt 1000 ]
tap_check kfence_nta_served_the_rest $? "NTA served $allocs heads, want more than 1000"
nta_done
