#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Run each harness binary given as an argument, pass its TAP through, and
# finish with the totals over all of them as "N passed, N failed".  A
# binary that dies before its summary, or exits non-zero with no failed
# test (a sanitizer report at exit, say), counts as one more failure.
pass=0
fail=0
for bin in "$@"; do
	out=$(mktemp)
	"$bin" | tee "$out"
	rc=${PIPESTATUS[0]}
	p=$(grep -c '^ok ' "$out")
	f=$(grep -c '^not ok ' "$out")
	if ! grep -q '^# [a-z0-9]*: [0-9]* passed, [0-9]* failed$' "$out"; then
		echo "not ok - $bin died before its summary (exit status $rc)"
		f=$((f + 1))
	elif [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "not ok - $bin exited with status $rc"
		f=$((f + 1))
	fi
	pass=$((pass + p))
	fail=$((fail + f))
	rm -f "$out"
done
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
