#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_kmemleak.sh - kmemleak sees through NTA's blocks
#
# After TCP and UDP load, a kmemleak scan finds no leak that involves skbs
# or NTA: NTA's blocks are scanned, so what only an NTA head points to is
# not reported.  debugfs nta/kmemleak_test (CONFIG_NTA_DEBUG) plants two
# objects first: one only an NTA object points to (must not be reported)
# and one nothing points to (must be: the scan works).  SKIP without
# kmemleak (CONFIG_DEBUG_KMEMLEAK, booted with kmemleak=on).

. "$(dirname "$0")/nta_lib.sh"

have iperf3 || tap_skip_all kmemleak "no iperf3 for the load"
f=$NTA_DBG/../kmemleak
echo scan=off 2>/dev/null >"$f" ||
	tap_skip_all kmemleak "no kmemleak (CONFIG_DEBUG_KMEMLEAK, kmemleak=on)"
# Automatic scanning comes back on however the test ends.
kml_scan_on() { echo scan=on >"$f"; }
nta_cleanup_hook=kml_scan_on

nta_init 5
echo clear >"$f"
echo 1 >"$NTA_DBG/kmemleak_test" || tap_note "kmemleak: cannot plant objects"
mbps=$(iperf_lo kmemleak_tcp 3)
tap_check kmemleak_tcp_lo $? "iperf3 TCP over loopback failed" &&
	tap_note "kmemleak: iperf3 TCP over loopback, $mbps Mbit/s"
NTA_IPERF_TIME=3
iperf_run kmemleak_udp $((NTA_PORT_BASE + 7)) "" "" -- -u -b 200M -l 8000
urc=$?
# Objects younger than 5 s are never reported; two scans confirm.
sleep 6
echo scan >"$f"
echo scan >"$f"
cat "$f" >"$NTA_TMP/kmemleak.txt"
echo 0 >"$NTA_DBG/kmemleak_test"
all=$(grep -c '^unreferenced object' "$NTA_TMP/kmemleak.txt")
tap_check kmemleak_udp_lo $urc "iperf3 UDP 8000 B over loopback failed"

# Per report: the planted leak, the planted kept object, or other.
set -- $(awk 'function end() { if (leak) l++; else if (kept) k++; else if (hit) n++ }
	/^unreferenced object/ { end(); hit = leak = kept = 0 }
	/NTA-KMEMLEAK-LEA/ { leak = 1 }
	/NTA-KMEMLEAK-KEP/ { kept = 1 }
	/nta_|skb|kmalloc_reserve/ { hit = 1 }
	END { end(); print l + 0, k + 0, n + 0 }' "$NTA_TMP/kmemleak.txt")
tap_note "kmemleak: $all unreferenced objects: planted leak $1, planted kept $2," \
	"others with skbs or NTA $3"
[ "$1" = 1 ]
tap_check kmemleak_planted_leak_reported $? "reported $1 times, want 1"
[ "$2" = 0 ]
tap_check kmemleak_nta_referenced_not_reported $? \
	"the object only an NTA object points to is reported"
[ "$3" = 0 ]
tap_check kmemleak_no_skb_or_nta_report $? "$3 of $all reports involve skbs or NTA" ||
	sed -n '1,40s/^/# /p' "$NTA_TMP/kmemleak.txt"
nta_done
