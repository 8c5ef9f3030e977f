#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make kernel FLAVOUR=perf|debug|rt|kcsan: x86_64 tinyconfig + the fragment(s)
# in tools/testing/selftests/nta/ (config, and config.<flavour> for the
# others), built out of tree in out/build-<flavour> from the assembled tree out/tree.
#
#   scripts/nta-kernel.sh FLAVOUR        configure, check the config, build bzImage
#   scripts/nta-kernel.sh FLAVOUR w1     rebuild net/core/alloc/ and net/core/skbuff.o
#                                        with W=1 (and C=1 with sparse); fail on warnings
# NTA_CONFIG_EXTRA=FILE adds one more fragment (for experiments).
. "$(dirname "$0")/nta-lib.sh"

flavour=${1:-${FLAVOUR:-perf}}
mode=${2:-build}
case $flavour in perf|debug|rt|kcsan) ;; *) die "FLAVOUR must be perf, debug, rt or kcsan, not '$flavour'" ;; esac
nta_base >/dev/null 2>&1 || die "no base tree in $NTA_TREE: run 'make tree' first"

B=$NTA_OUT/build-$flavour
step_banner "kernel: $flavour$([ "$mode" = build ] || echo " $mode") (${B#$NTA_ROOT/})"
mkdir -p "$B"
fragdir=$NTA_ROOT/tools/testing/selftests/nta
frags=("$fragdir/config")
[ $flavour = perf ] || frags+=("$fragdir/config.$flavour")
[ -n "${NTA_CONFIG_EXTRA:-}" ] && frags+=("$NTA_CONFIG_EXTRA")
for f in "${frags[@]}"; do [ -f "$f" ] || die "config fragment $f missing"; done

nta_kmake "$B"

# Files the series adds or changes: the ones whose warnings are ours.
touched_files() {
	git -C "$NTA_TREE" diff --name-only nta-base nta 2>/dev/null
}

# merge_config.sh without -m runs alldefconfig on tinyconfig's .config plus
# the fragments (the same as olddefconfig) and reports every requested value
# that did not take; one the fragments asked for stops the build.
configure() {
	local log=$NTA_LOGS/kernel-$flavour-config.log dropped='' s
	"${kmake[@]}" tinyconfig >"$log" 2>&1 || fail_log "$log" "make tinyconfig failed"
	(cd "$NTA_TREE" && scripts/kconfig/merge_config.sh -O "$B" "$B/.config" "${frags[@]}") >>"$log" 2>&1 ||
		fail_log "$log" "merge_config.sh failed"
	# Ours only; "is not set" is also met by a symbol absent from .config.
	for s in $(sed -n 's/^Value requested for \(CONFIG_[A-Za-z0-9_]*\) not in final .config$/\1/p' "$log"); do
		grep -qx "$s=.*" "${frags[@]}" ||
			{ grep -qx "# $s is not set" "${frags[@]}" && grep -q "^$s=" "$B/.config"; } && dropped+=" $s"
	done
	[ -z "$dropped" ] || fail_log "$log" "config options dropped (see 'Value requested' in the log):" $dropped
	info "config: every fragment option is in ${B#$NTA_ROOT/}/.config"
}

# Run a kernel make in the background; print the object count every 15 s.
build_with_progress() {	# LOG TARGET...
	local log=$1; shift
	local total pid n last=0 t0=$SECONDS
	total=$(cat "$B/.nta-objcount" 2>/dev/null || true)
	"${kmake[@]}" "$@" >"$log" 2>&1 &
	pid=$!
	while kill -0 $pid 2>/dev/null; do
		sleep 3
		if [ $((SECONDS - last)) -ge 15 ]; then
			last=$SECONDS
			n=$(grep -cE '^ +(CC|AS)  ' "$log")
			info "[$flavour] $n${total:+/~$total} objects compiled ($(nta_elapsed))"
		fi
	done
	wait $pid
}

build() {
	local log=$NTA_LOGS/kernel-$flavour.log n
	info "building bzImage in $B (log: $log)"
	build_with_progress "$log" bzImage || fail_log "$log" "kernel build ($flavour) failed"
	n=$(grep -cE '^ +(CC|AS)  ' "$log")
	[ "$n" -gt 200 ] && echo "$n" >"$B/.nta-objcount"
	# Warnings in files the series touches (the base tree has its own, not ours).
	grep -E 'warning:' "$log" | grep -F -f <(touched_files | grep . || echo /nonexistent/) \
		>"$B/warnings-touched.txt" || true
	info "bzImage: $(du -h "$B/arch/x86/boot/bzImage" | cut -f1), $n objects compiled this run," \
		"$(wc -l <"$B/warnings-touched.txt") warnings in touched files"
	[ -s "$B/warnings-touched.txt" ] && sed 's/^/    | /' "$B/warnings-touched.txt"
	return 0
}

w1() {
	local log=$NTA_LOGS/kernel-$flavour-w1.log targets=(net/core/skbuff.o) extra=()
	[ -f "$B/.config" ] || die "no $B/.config: run 'make kernel FLAVOUR=$flavour' first"
	[ -d "$NTA_TREE/net/core/alloc" ] && targets+=(net/core/alloc/)
	if command -v sparse >/dev/null 2>&1; then extra=(C=1); else info "sparse not installed: W=1 only"; fi
	info "W=1 ${extra[*]} rebuild of ${targets[*]} (log: $log)"
	"${kmake[@]}" W=1 "${extra[@]}" "${targets[@]}" >"$log" 2>&1 || fail_log "$log" "W=1 build failed"
	local warn
	warn=$(grep -E '(warning|error):' "$log" | grep -E 'net/core/alloc/|net/core/skbuff\.|include/linux/nta\.h' || true)
	if [ -n "$warn" ]; then
		echo "$warn" | sed 's/^/    | /'
		die "W=1: $(echo "$warn" | wc -l) warning(s) in NTA files"
	fi
	info "W=1: no warnings in ${targets[*]}"
}

main() {
	case $mode in
	build) configure; build ;;
	config) configure ;;
	w1) w1 ;;
	*) die "unknown mode '$mode'" ;;
	esac
}
main "$@"; exit	# read whole before it runs: safe to edit during a build
