#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_usercopy.sh - hardened usercopy bounds a copy from an NTA skb head
#
# A read of debugfs nta/usercopy_test (CONFIG_NTA_DEBUG) copies from the
# head of a new skb with a 256-byte linear area; hardened usercopy must
# allow the head less its skb_shared_info and nothing more.  The over-long
# read is stopped with a kernel BUG that kills the reader (and switches
# lockdep off), so panic_on_oops is lifted around it and the splat is
# bracketed by NTA-SPLAT-EXPECTED-BEGIN/-END lines in the kernel log.  Run
# it in a boot of its own; it is not part of run_tests.  SKIP without
# nta/usercopy_test.

. "$(dirname "$0")/nta_lib.sh"

f=$NTA_DBG/usercopy_test
[ -e "$f" ] || tap_skip_all usercopy "no $f (CONFIG_NTA_DEBUG, CONFIG_HARDENED_USERCOPY)"

nta_init 3
c=$(dd if="$f" bs=4096 count=1 2>/dev/null | wc -c)
tap_note "usercopy: a read of an NTA skb head copied $c bytes"
[ "$c" -ge 256 ] && [ "$c" -lt 4096 ]
tap_check usercopy_head_read $? "want 256 to 4095 bytes, up to skb_shared_info"

want="NTA object 'skb_shared_info' (offset 0, size $((c + 1)))"
oops=$(cat /proc/sys/kernel/panic_on_oops)
echo 0 >/proc/sys/kernel/panic_on_oops
echo "<4>NTA-SPLAT-EXPECTED-BEGIN usercopy" >/dev/kmsg
echo $((c + 1)) >"$f"
(dd if="$f" of="$NTA_TMP/usercopy" bs=4096 count=1 2>/dev/null)
rc=$?
echo "<4>NTA-SPLAT-EXPECTED-END" >/dev/kmsg
echo "$oops" >/proc/sys/kernel/panic_on_oops
got=$(wc -c <"$NTA_TMP/usercopy")
# Only between the marks: the KUnit suite may have provoked one at boot.
msg=$(dmesg | sed -n '/NTA-SPLAT-EXPECTED-BEGIN usercopy/,/NTA-SPLAT-EXPECTED-END/p' |
	grep -o 'usercopy: Kernel memory exposure attempt detected from NTA object.*' | head -1)
tap_note "usercopy: one byte more: ${msg:-no report}"
case $msg in *"$want"*) true ;; *) false ;; esac
tap_check usercopy_overread_reported $? "want a report of $want"
tap_note "usercopy: the reader got $got bytes (status $rc)"
[ "$rc" != 0 ] && [ "$got" = 0 ]
tap_check usercopy_reader_stopped $? "the reader was not stopped, or got bytes"
nta_done
