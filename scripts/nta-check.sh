#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make check (README.md): every test, one result line each, into
# out/check/results.tap; FLAVOUR=rt|kcsan (make check-extra): out/check-<flavour>/.
. "$(dirname "$0")/nta-lib.sh"

FLAVOUR=${FLAVOUR:-debug}
CHK=$NTA_OUT/check
[ "$FLAVOUR" = debug ] || CHK=$NTA_OUT/check-$FLAVOUR
mkdir -p "$CHK"
rm -f "$CHK"/*.log "$CHK"/*.tap
RES=$CHK/results.lines
: >"$RES"

result() {	# "ok|not ok" DESCRIPTION
	printf '%s - %s\n' "$1" "$2" >>"$RES"
	printf '    %s - %s\n' "$1" "$2"
}
# verdict RC OK-TEXT NOT-OK-TEXT: one result, ok when RC is 0; RC again.
verdict() { [ "$1" = 0 ] && result ok "$2" || { result "not ok" "$3"; return 1; }; }

# results: "ok - D" / "not ok - D" lines on stdin become results; others are shown.
results() {
	local l
	while IFS= read -r l; do
		[[ $l =~ ^((not )?ok)\ -\ (.*)$ ]] && result "${BASH_REMATCH[1]}" "${BASH_REMATCH[3]}" || echo "$l"
	done
}

# step NAME LOG CMD...: banner, run, time; 0/1 like the command.
step() {
	local name=$1 log=$2 t=$SECONDS rc; shift 2
	banner "$name"
	# sed -u: each line as it comes, also when stdout is a pipe (a log, CI).
	NTA_NO_BANNER=1 "$@" 2>&1 | tee "$log" | sed -u 's/^/  /'
	rc=${PIPESTATUS[0]}
	if [ "$rc" != 0 ]; then
		echo "    FAILED: $name (rc $rc, $((SECONDS - t))s)"
		log_tail "$log"
		return 1
	fi
	info "$name: done in $((SECONDS - t))s"
}

finish() {
	local pass fail skip
	{ echo "TAP version 13"; echo "1..$(wc -l <"$RES")"; awk '{ sub(/ - /, " " NR " - ") } 1' "$RES"; } >"$CHK/results.tap"
	fail=$(grep -c '^not ok' "$RES")
	skip=$(grep -c '^ok .*# SKIP' "$RES")
	pass=$(( $(grep -c '^ok' "$RES") - skip ))
	banner "results: ${CHK#$NTA_ROOT/}/results.tap, consoles: ${CHK#$NTA_ROOT/}/*.log"
	[ "$fail" = 0 ] || { echo "  failed:"; grep '^not ok' "$RES" | sed 's/^/    /'; }
	[ "$skip" = 0 ] || echo "  ($skip skipped)"
	echo "$pass passed, $fail failed"
	exit $((fail > 0))
}

abort() {	# WHAT: fatal, the rest cannot run
	result "not ok" "$1"
	result "not ok" "remaining steps not run (after: $1)"
	finish
}
# must NAME LOG CMD...: a step the rest needs.
must() { step "$@" || abort "$1 (log: $2)"; }

must "deps: Debian packages" "$NTA_LOGS/check-deps.log" "$NTA_ROOT/scripts/nta-deps.sh"
result ok "deps: Debian packages present"

hlog=$NTA_LOGS/check-harness.log
# Its fragmentation table replays the traces make traces recorded.
step "userspace harness: make -C tools/testing/nta run (NTA_TRACES=bench/traces)" "$hlog" \
	env NTA_TRACES="$NTA_ROOT/bench/traces" make -C "$NTA_ROOT/tools/testing/nta" run
hrc=$?
sed -nE 's/^(not )?ok [0-9]+ *-? */\1ok - [harness] /p' "$hlog" | results
summ=$(grep -oE '[0-9]+ passed, [0-9]+ failed' "$hlog" | tail -1)
[ "$hrc" = 0 ] && [[ $summ =~ ^[1-9][0-9]*\ passed,\ 0\ failed$ ]] && hrc=ok || hrc="not ok"
result "$hrc" "[harness] userspace allocator harness: ${summ:-no 'N passed, N failed' line} (log $hlog)"

must "tree: base kernel tree" "$NTA_LOGS/check-tree.log" "$NTA_ROOT/scripts/nta-tree.sh"
result ok "tree: base tree $(git -C "$NTA_TREE" log -1 --format=%s nta-base)"
must "series: assemble, format-patch, git am check" "$NTA_LOGS/check-series.log" \
	"$NTA_ROOT/scripts/nta-series.sh"
result ok "series: $(git -C "$NTA_TREE" rev-list --count nta-base..nta) patches on branch nta, exported to out/series/"
result ok "series: git am of out/series/ applies to a pristine base"

banner "checkpatch --strict on out/series/"
for p in "$NTA_OUT"/series/0*.patch; do
	b=$(basename "$p" .patch)
	[ "$b" = 0000-cover-letter ] && continue
	# Debian's python3 first: spdxcheck.py needs python3-ply and python3-git.
	(cd "$NTA_TREE" && PATH=/usr/bin:$PATH perl scripts/checkpatch.pl --strict --no-color "$p") \
		>"$CHK/checkpatch-$b.txt" 2>&1
	tot=$(sed -n 's/^total: \(.*\), [0-9]* lines checked$/\1/p' "$CHK/checkpatch-$b.txt" | tail -1)
	[ "$tot" = "0 errors, 0 warnings, 0 checks" ]
	verdict $? "checkpatch --strict $b: $tot" "checkpatch --strict $b: ${tot:-no total line} (out/check/checkpatch-$b.txt)" ||
		grep -E '^(ERROR|WARNING|CHECK):' "$CHK/checkpatch-$b.txt" | head -10 | sed 's/^/      /'
done

# The F: patterns of the NTA entry (git pathspecs) match every file the series adds.
added=$(git -C "$NTA_TREE" diff --name-only --diff-filter=A nta-base nta 2>/dev/null)
mapfile -t pats < <(git -C "$NTA_TREE" show nta:MAINTAINERS 2>/dev/null |
	awk '/^NETWORK TREE ALLOCATOR \(NTA\)$/ { e = 1; next } e && /^$/ { exit } e && /^F:/ { print $2 }')
uncovered=$(comm -23 <(sort <<<"$added") <(git -C "$NTA_TREE" ls-files -- "${pats[@]}" | sort))
[ ${#pats[@]} != 0 ] && [ -z "$uncovered" ]
verdict $? "MAINTAINERS: NTA entry covers the $(wc -l <<<"$added") files the series adds" \
	"MAINTAINERS: no NETWORK TREE ALLOCATOR (NTA) entry with F: lines on branch nta, or it misses: $(echo $uncovered)"

banner "kernel-doc -none -Wall on the files the series adds"
for f in $(grep -E '\.[ch]$' <<<"$added" | grep -v '^tools/'); do
	kd=$(cd "$NTA_TREE" && perl scripts/kernel-doc -none -Wall "$f" 2>&1)
	[ -z "$kd" ]
	verdict $? "kernel-doc $f: no warnings" "kernel-doc $f: $(grep -c . <<<"$kd") warnings" || head -10 <<<"$kd" | sed 's/^/      /'
done

step "pahole: skbuff.o with NET_NTA off" "$NTA_LOGS/check-pahole.log" "$NTA_ROOT/scripts/nta-pahole.sh"
verdict $? "pahole: skbuff.o builds with NET_NTA off (x86_64_defconfig, and without NETWORK_SECMARK), struct sk_buff keeps its size, its slab objects too without NETWORK_SECMARK" \
	"pahole: skbuff.o with NET_NTA off does not build, or struct sk_buff (x86_64_defconfig) or its slab objects (either config) grew"
klog=$NTA_LOGS/check-kernel-$FLAVOUR.log
if ! step "kernel: $FLAVOUR build" "$klog" "$NTA_ROOT/scripts/nta-kernel.sh" "$FLAVOUR"; then
	grep -q 'config options dropped' "$klog" && abort "kernel: $FLAVOUR config lost fragment options"
	abort "kernel: $FLAVOUR build (log: $NTA_LOGS/kernel-$FLAVOUR.log)"
fi
B=$NTA_OUT/build-$FLAVOUR
result ok "kernel: $FLAVOUR .config has every fragment option"
result ok "kernel: $FLAVOUR bzImage built"
[ ! -s "$B/warnings-touched.txt" ]
verdict $? "kernel: no compiler warnings in files the series touches" \
	"kernel: $(wc -l <"$B/warnings-touched.txt") compiler warnings in files the series touches"

# The initfail boot's kernel: the same config with check/'s fault injection
# on top of the series (check/README.md); the debug flavour only.
inject=none
if [ "$FLAVOUR" = debug ]; then
	step "kernel: inject build (debug + check/)" "$NTA_LOGS/check-kernel-inject.log" \
		"$NTA_ROOT/scripts/nta-kernel.sh" inject
	verdict $? "kernel: inject (debug config, series + check/'s fault injection) bzImage built" \
		"kernel: inject build failed (log: $NTA_LOGS/check-kernel-inject.log)" && inject=built
fi

must "initramfs" "$NTA_LOGS/check-initramfs.log" "$NTA_ROOT/scripts/nta-initramfs.sh"
result ok "initramfs: busybox, iperf3, $(wc -w <"$NTA_OUT/initramfs/tests.txt") selftests"

# upstream_netconsole_splat LOG: LOG has mainline's netconsole lockdep report (README.md).
upstream_netconsole_splat() {
	grep -qE 'WARNING: (HARDIRQ-safe -> HARDIRQ-unsafe lock order detected|inconsistent lock state)' "$1" &&
		grep -q '(target_list_lock){.*}, at: write_msg' "$1" && grep -q '(_xmit_ETHER' "$1"
}

# boot_plan NAME PLAN [APPEND [OPTS]]: boot the $FLAVOUR kernel (or
# $BOOT_FLAVOUR's) with PLAN (OPTS for nta-boot.sh) into $CHK/NAME.log;
# results for the boot, each test and the host client.  After
# upstream_netconsole_splat (lockdep is off) it boots again, up to twice:
# the report came on two boots in a row in one run of make check.
boot_plan() {
	local bname=$1 plan=$2 append=${3:-} opts=${4:-} ntests brc blog t try fl=${BOOT_FLAVOUR:-$FLAVOUR}
	ntests=$(tr ',' '\n' <<<"$plan" | wc -l)
	blog=$CHK/$bname.log
	for try in 1 2 3; do
		banner "boot: $fl kernel, plan $plan"
		NTA_NO_BANNER=1 FLAVOUR=$fl "$NTA_ROOT/scripts/nta-boot.sh" -n "$bname" -d "$CHK" -p "$plan" \
			-t $((240 + 240 * ntests)) -a "ntatimeout=240${append:+ $append}" $opts
		brc=$?
		[ $try != 3 ] && upstream_netconsole_splat "$blog" || break
		mv "$blog" "$CHK/$bname.upstream.txt"
		info "the upstream netconsole lock-order report (not NTA's; lockdep went off):" \
			"booting once more (first console: out/${CHK#$NTA_OUT/}/$bname.upstream.txt)"
	done
	verdict $brc "[boot] $fl kernel booted (2 CPUs, TCG) and ran the plan $plan" \
		"[boot] $fl kernel did not finish the plan $plan (console: out/${CHK#$NTA_OUT/}/$bname.log)"
	for t in $(tr ',' ' ' <<<"$plan"); do
		test_results "$t" "$blog"
	done | results
	[ -f "$CHK/$bname.host.tap" ] && sed 's/^\(\(not \)\{0,1\}ok - \)/\1[host] /' "$CHK/$bname.host.tap" | results
}

# test_results TEST LOG: "ok|not ok - [TEST] ..." lines for TEST in LOG
test_results() {
	awk -v t="$1" '
		$0 == "NTA-TEST-START " t { in_t = 1; started = 1; next }
		in_t && $1 == "NTA-TEST-END" && $2 == t { in_t = 0; ended = 1; rc = $3; next }
		in_t && /^(not )?ok / {
			bad = /^not ok/; n++; nbad += bad
			d = $0; sub(/^(not )?ok [0-9]* *-? */, "", d)
			printf "%s - [%s] %s\n", bad ? "not ok" : "ok", t, d
		}
		END {
			if (!started) { printf "not ok - [%s] did not run (the boot ended before it)\n", t; exit }
			if (!ended) { printf "not ok - [%s] did not finish (kernel crash or boot timeout)\n", t; exit }
			if (rc == 137) printf "not ok - [%s] killed by the per-test timeout\n", t
			else if (rc == 4 && !n) printf "ok - [%s] # SKIP (kselftest skip)\n", t
			else if (rc != 0 && rc != 4 && !nbad) printf "not ok - [%s] exited with status %s\n", t, rc
			else if (!n) printf "ok - [%s] exited with status 0\n", t
		}' "$2" 2>/dev/null
}

# One boot runs most tests; one that provokes splats or changes the machine has its own.
selftests=$(tr '\n' ',' <"$NTA_OUT/initramfs/tests.txt" | sed 's/,$//')
# nta_reserve=256K here, the default (none) in the boots below that set
# none: the isolation boot's KUnit run is parsed too, where the cases that
# count growth against a pool holding blocks give themselves a reserve
# (nta_tneed_reserve()).
boot_plan "boot-$FLAVOUR" "boot_smp${selftests:+,$selftests},nta_mem_pressure.sh" "nta_reserve=256K"
boot_plan "isolation-$FLAVOUR" nta_isolation.sh
boot_plan "bootparams-$FLAVOUR" nta_boot_params.sh "nta=off nta_reserve=1T nta_max=16K kunit.enable=0"
# nta.fail_init= is check/'s, in the inject kernel only: the last CPU's
# online callback fails after the first took its reserve.
if [ "$inject" = built ]; then
	BOOT_FLAVOUR=inject boot_plan "initfail-$FLAVOUR" nta_init_unwind.sh \
		"nta.fail_init=online nta_reserve=64K kunit.filter_glob=nta.nta_init_unwind"
	grep -q 'nta: initialisation failed at the CPU-online callback (-12), undone' "$CHK/initfail-$FLAVOUR.log"
	verdict $? "[initfail] the injected failure was reported: initialisation failed at the CPU-online callback, undone" \
		"[initfail] no 'initialisation failed at the CPU-online callback' on the console (out/check/initfail-$FLAVOUR.log)"
elif [ "$FLAVOUR" = debug ]; then
	result "not ok" "[initfail] not booted: the inject kernel did not build (log: $NTA_LOGS/check-kernel-inject.log)"
else
	result ok "[initfail] initialisation unwind # SKIP make check (debug) runs it, on the inject kernel"
fi
# -N also names 1 GiB that may be hot-added: the block map must span it.
boot_plan "numa-$FLAVOUR" nta_numa.sh "kunit.filter_glob=nta.nta_block_map_hotplug nta_reserve=0" -N
boot_plan "memless-$FLAVOUR" nta_memoryless.sh "kunit.enable=0 nta_reserve=256K" -M
# KFENCE is in the rt flavour's config only (make check-extra EXTRA=rt).
if grep -q '^CONFIG_KFENCE=y' "$B/.config"; then
	boot_plan "kfence-$FLAVOUR" nta_kfence.sh "kunit.enable=0 kfence.sample_interval=1"
else
	result ok "[kfence] KFENCE samples skb heads # SKIP CONFIG_KFENCE not set ($FLAVOUR kernel; make check-extra EXTRA=rt has it)"
fi
boot_plan "kasan-$FLAVOUR" nta_usercopy.sh "kasan_multi_shot kunit.filter_glob=nta_kasan"
# init_on_free=1: KUnit's cases that check the wipe of local, remote and merged frees.
boot_plan "wipe-$FLAVOUR" boot_smp "init_on_free=1 kunit.filter_glob=nta.*init_on_free"
boot_plan "leak-$FLAVOUR" nta_netconsole.sh,nta_kmemleak.sh "kmemleak=on" -u
nc=$CHK/leak-$FLAVOUR.netconsole.txt
if ! grep -q '^CONFIG_NETCONSOLE_DYNAMIC=y' "$B/.config"; then
	result ok "[host] netconsole # SKIP CONFIG_NETCONSOLE_DYNAMIC not set"
else
	grep -q 'NTA-NETCONSOLE-HELLO' "$nc" && grep -q 'nta: refusing free' "$nc" && grep -q 'nta: write after free' "$nc"
	verdict $? "[host] netconsole: $(grep -c 'nta: write after free' "$nc") poison and $(grep -c 'nta: refusing free' "$nc") bad-free reports from NTA arrived on the host" \
		"[host] netconsole: NTA's poison and bad-free reports did not both arrive on the host (out/check/leak-$FLAVOUR.netconsole.txt)"
fi 2>/dev/null

# kunit_results LOG TAG: the KUnit cases LOG printed before /init (the dmesg
# dump repeats them), parsed by the tree's kunit.py into TAG.json and TAG.txt.
kunit_results() {
	local kl
	sed -n '/^NTA-DMESG-BEGIN/q;p' "$1" |
		python3 "$NTA_TREE/tools/testing/kunit/kunit.py" parse --json="$CHK/$2.json" >"$CHK/$2.txt" 2>&1
	kl=$(python3 -B "$NTA_ROOT/scripts/nta-bench-report.py" --kunit "$CHK/$2.json" "$2" 2>/dev/null)
	if [ -n "$kl" ]; then
		results <<<"$kl"
	elif grep -q '^CONFIG_NTA_KUNIT_TEST=y' "$B/.config"; then
		result "not ok" "[$2] CONFIG_NTA_KUNIT_TEST=y but no KTAP results on the console (out/check/$2.txt)"
	else
		result ok "[$2] KUnit results # SKIP no KUnit suite built in (CONFIG_NTA_KUNIT_TEST not set)"
	fi
}
kunit_results "$CHK/boot-$FLAVOUR.log" kunit
kunit_results "$CHK/kasan-$FLAVOUR.log" kunit-kasan
[ "$inject" = built ] && kunit_results "$CHK/initfail-$FLAVOUR.log" kunit-initfail
kunit_results "$CHK/wipe-$FLAVOUR.log" kunit-wipe
kunit_results "$CHK/numa-$FLAVOUR.log" kunit-numa
kunit_results "$CHK/isolation-$FLAVOUR.log" kunit-default
# Skipped cases count as passed above: under init_on_free=1 all three must
# run, and nta_init_unwind in the initfail boot.
if grep -q '^CONFIG_NTA_KUNIT_TEST=y' "$B/.config"; then
	if [ "$FLAVOUR" = debug ]; then
		grep -q '^ok - \[kunit-initfail\] nta\.nta_init_unwind$' "$RES"
		verdict $? "[kunit-initfail] nta_init_unwind ran (not skipped) after the injected failure" \
			"[kunit-initfail] nta_init_unwind did not pass without a skip (out/check/kunit-initfail.txt)"
	fi
	n=$(grep -c '^ok - \[kunit-wipe\] .*init_on_free$' "$RES")
	verdict "$([ "$n" = 3 ]; echo $?)" "[kunit-wipe] all three init_on_free cases ran under init_on_free=1" \
		"[kunit-wipe] $n of 3 init_on_free cases passed without a skip under init_on_free=1"
fi

results < <(python3 -B "$NTA_ROOT/scripts/nta-bench-report.py" --splats "$CHK"/*.log)

finish
