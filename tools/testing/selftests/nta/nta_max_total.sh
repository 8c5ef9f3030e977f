#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_max_total.sh - net.core.nta_max_total takes sizes and refuses the rest
#
# The limit on NTA's pages over all CPUs: 0 (no limit) and any size that
# leaves room for the online CPUs' reserves are taken, counted in whole
# blocks; a value that is negative, not a number, empty, or below the
# reserves is refused with an error and leaves the limit as it was.  The
# summary's max_total_bytes follows the sysctl.  SKIP without the sysctl
# or NTA's debugfs summary (the reserves and the block size come from it).

. "$(dirname "$0")/nta_lib.sh"

MAXT=$(dirname "$NTA_SYSCTL")/nta_max_total
[ -w "$MAXT" ] || tap_skip_all max_total "no $MAXT"
nta_present || tap_skip_all max_total "no $NTA_SUMMARY"

nta_init 4
orig=$(cat "$MAXT")
restore_max_total() { echo "$orig" > "$MAXT"; }
nta_cleanup_hook=restore_max_total

bs=$(nta_stat block_size)
cpus=$(grep -c '^processor' /proc/cpuinfo)
online=$(awk -F, '{ n = 0; for (i = 1; i <= NF; i++) {
	if (split($i, r, "-") == 2) n += r[2] - r[1] + 1; else n++ } print n }' \
	/sys/devices/system/cpu/online 2>/dev/null)
[ -n "$online" ] || online=$cpus
least=$(($(nta_stat reserve_blocks) * online * bs))
[ "$least" -gt 0 ] || least=$bs
tap_note "max_total: was $orig; block $bs B, $online CPUs online, least $least B"

# A good value: taken, read back rounded down to whole blocks.
ok=0 why=""
for v in 0 "$least" $((least + bs + 1)) $((least * 4)); do
	want=$((v / bs * bs))
	if ! echo "$v" 2>/dev/null > "$MAXT"; then
		ok=1 why="$why $v refused;"
		continue
	fi
	got=$(cat "$MAXT") sum=$(nta_stat max_total_bytes)
	if [ "$got" != "$want" ] || [ "$sum" != "$want" ]; then
		ok=1 why="$why $v read back as $got (summary $sum), want $want;"
	fi
done
tap_check max_total_takes_sizes $ok "$why"

# A bad value: an error, and the limit that was set stays.
set_to=$((least * 2))
echo "$set_to" > "$MAXT"
ok=0 why=""
for v in -1 "-$bs" abc 12abc "" $((least - 1)) 1; do
	[ "$v" = 1 ] && [ "$least" -le 1 ] && continue
	if echo "$v" 2>/dev/null > "$MAXT"; then
		ok=1 why="$why '$v' taken;"
	fi
	if [ "$(cat "$MAXT")" != "$set_to" ]; then
		ok=1 why="$why '$v' left $(cat "$MAXT");"
	fi
done
tap_check max_total_refuses_bad_values $ok "$why"
dmesg | grep -q 'net.core.nta_max_total=.* below the reserves'
tap_check max_total_says_why $? "no 'below the reserves' message in dmesg"

# Set back: read as it was.
echo "$orig" > "$MAXT" && [ "$(cat "$MAXT")" = "$orig" ]
tap_check max_total_restored $? "reads $(cat "$MAXT") after writing $orig"
nta_done
