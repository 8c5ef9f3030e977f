#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make check-bisect (README.md): every prefix of the series builds vmlinux
# with the perf config, in out/build-bisect, last patch first; warnings in
# touched files fail a prefix.
. "$(dirname "$0")/nta-lib.sh"

B=$NTA_OUT/build-bisect
step_banner "check-bisect: build every prefix of the series in ${B#$NTA_ROOT/}"
[ -z "$(T status --porcelain -uno | head -1)" ] || die "$NTA_TREE has uncommitted changes; commit or discard them first"
mapfile -t commits < <(T rev-list --reverse nta-base..nta)
N=${#commits[@]}
[ "$N" -gt 0 ] || die "branch nta has no commits: nothing to bisect"
frag=$NTA_ROOT/tools/testing/selftests/nta/config
mkdir -p "$B"
nta_kmake "$B"
trap 'T checkout -q nta || warn "could not check out branch nta again in $NTA_TREE"' EXIT

say() { printf '%s\n' "$*" | tee -a "$NTA_LOGS/bisect.txt"; }
: >"$NTA_LOGS/bisect.txt"

# build K: check out prefix K, configure, build vmlinux; one result line.
build() {
	local k=$1 c=${commits[$1 - 1]} slug log=$NTA_LOGS/bisect-$1.log t0=$SECONDS w
	slug=$(T notes --ref=refs/notes/nta-slug show "$c" 2>/dev/null | head -1)
	slug=${slug:-$(T log -1 --format=%s "$c")}
	info "[$(nta_elapsed)] $k/$N $slug: $(T log -1 --format=%s "$c")"
	T checkout -q --detach "$c" >"$log" 2>&1 || { say "not ok $k/$N $slug: checkout failed ($log)"; return 1; }
	# Kconfig for each prefix: an earlier one lacks later patches' symbols (an
	# unchanged .config rebuilds nothing).
	(NTA_CONFIG_LAX=1 nta_config "$B" "$log.config" tinyconfig "$frag" >/dev/null) ||
		{ say "not ok $k/$N $slug: configuration failed ($log.config)"; return 1; }
	if ! "${kmake[@]}" vmlinux >>"$log" 2>&1; then
		say "not ok $k/$N $slug: build failed after $((SECONDS - t0))s ($log):"
		grep -E 'error:|Error [0-9]' "$log" | head -10 | sed 's/^/      | /'
		return 1
	fi
	w=$(touched_warnings "$log")
	if [ -n "$w" ]; then
		say "not ok $k/$N $slug: built, but $(wc -l <<<"$w") warnings in files the series touches ($log)"
		head -5 <<<"$w" | sed 's/^/      | /'
		return 1
	fi
	say "ok $k/$N $slug: vmlinux built in $((SECONDS - t0))s ($(nta_objs "$log") objects compiled," \
		"CONFIG_NET_NTA=$(grep -q '^CONFIG_NET_NTA=y' "$B/.config" && echo y || echo n)," \
		"$(grep -cE '^CONFIG_NTA_[A-Z_]+=y' "$B/.config") CONFIG_NTA_* on)"
}

{	# in braces: read whole before it runs, so safe to edit during a build
	failed=0 t_all=$SECONDS
	for ((k = N; k >= 1; k--)); do build "$k" || failed=1; done
	info "check-bisect: $N prefixes in $((SECONDS - t_all))s (results also in ${NTA_LOGS#$NTA_ROOT/}/bisect.txt)"
	exit $failed
}
