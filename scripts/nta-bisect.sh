#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make check-bisect: every prefix of the series builds (vmlinux, perf config).
#
# Each commit of branch nta (as assembled by make series) is checked out in
# out/tree in turn and built in its own build directory, out/build-bisect,
# with the perf kernel's config (x86_64 tinyconfig + the fragment
# tools/testing/selftests/nta/config, as scripts/nta-kernel.sh does; it
# turns on every NTA option), so that every file of every patch is compiled
# once a patch has added it.  Kconfig runs again for each prefix: a symbol that
# does not exist yet is dropped by olddefconfig, which is the point.
#
# The builds are incremental: the last patch first, whose config and
# sources the perf kernel shares (ccache hits across clones), then the
# prefixes from the second to last down to the first.  Going down, only
# what a patch touches is rebuilt; the one expensive step is the skb patch
# (include/linux/skbuff.h).  A later run starts from the first prefix's
# objects and climbs back through ccache.  Branch nta is checked out again
# at the end, whatever happened.
#
# Output: one line per prefix, "ok K/N slug: ..." or "not ok K/N slug: ...",
# with compiler warnings in files the series touches counted as failures.
# Logs: out/logs/bisect-K.log.  Exit 1 when a prefix fails.
. "$(dirname "$0")/nta-lib.sh"

B=$NTA_OUT/build-bisect
step_banner "check-bisect: build every prefix of the series in ${B#$NTA_ROOT/}"
nta_base >/dev/null 2>&1 || die "no base tree in $NTA_TREE: run 'make series' first"
T() { git -C "$NTA_TREE" "$@"; }
T rev-parse -q --verify refs/heads/nta >/dev/null || die "no branch nta in $NTA_TREE: run 'make series' first"
[ -z "$(T status --porcelain -uno | head -1)" ] ||
	die "$NTA_TREE has uncommitted changes; commit or discard them first"

mapfile -t commits < <(T rev-list --reverse nta-base..nta)
N=${#commits[@]}
[ "$N" -gt 0 ] || die "branch nta has no commits: nothing to bisect"

mkdir -p "$B"
frag=$NTA_ROOT/tools/testing/selftests/nta/config
[ -f "$frag" ] || die "config fragment $frag missing"

nta_kmake "$B"

restore() { T checkout -q nta 2>/dev/null || warn "could not check out branch nta again in $NTA_TREE"; }
trap restore EXIT

# Files the whole series touches: warnings there are ours.
touched=$(T diff --name-only nta-base nta)

# say LINE...: print and keep in out/logs/bisect.txt
say() { printf '%s\n' "$*" | tee -a "$NTA_LOGS/bisect.txt"; }
: >"$NTA_LOGS/bisect.txt"

# build K: check out prefix K, configure, build vmlinux; one result line.
failed=0
build() {
	local k=$1 c=${commits[k - 1]} slug log t0=$SECONDS n w key
	slug=$(T notes --ref=refs/notes/nta-slug show "$c" 2>/dev/null | head -1)
	slug=${slug:-$(T log -1 --format=%s "$c")}
	log=$NTA_LOGS/bisect-$k.log
	info "[$(nta_elapsed)] $k/$N $slug: $(T log -1 --format=%s "$c")"
	T checkout -q --detach "$c" >"$log" 2>&1 || { say "not ok $k/$N $slug: checkout failed ($log)"; failed=1; return; }
	# Configure again only when a Kconfig file or a fragment changed since
	# the last configuration.  (Kbuild's per-option dependencies keep even a
	# rewritten .config incremental; this only saves the Kconfig runs.)
	key=$({ T ls-tree -r "$c" | grep -E '(^|/)Kconfig[^/]*$'; cat "$frag"; } | sha1sum | cut -c1-40)
	if [ "$key" != "$(cat "$B/.bisect-config-key" 2>/dev/null)" ] || [ ! -f "$B/.config" ]; then
		rm -f "$B/.bisect-config-key"
		{
			"${kmake[@]}" tinyconfig &&
			(cd "$NTA_TREE" && scripts/kconfig/merge_config.sh -m -O "$B" "$B/.config" "$frag") &&
			"${kmake[@]}" olddefconfig
		} >>"$log" 2>&1 || { say "not ok $k/$N $slug: configuration failed ($log)"; failed=1; return; }
		echo "$key" >"$B/.bisect-config-key"
	fi
	if ! "${kmake[@]}" vmlinux >>"$log" 2>&1; then
		say "not ok $k/$N $slug: build failed after $((SECONDS - t0))s ($log):"
		grep -E 'error:|Error [0-9]' "$log" | head -10 | sed 's/^/      | /'
		failed=1
		return
	fi
	n=$(grep -cE '^ +(CC|AS) ' "$log")
	w=$(grep -E 'warning:' "$log" | grep -F -f <(grep . <<<"$touched" || echo /nonexistent/) || true)
	if [ -n "$w" ]; then
		say "not ok $k/$N $slug: built, but $(grep -c . <<<"$w") warnings in files the series touches ($log)"
		head -5 <<<"$w" | sed 's/^/      | /'
		failed=1
		return
	fi
	say "ok $k/$N $slug: vmlinux built in $((SECONDS - t0))s ($n objects compiled," \
		"CONFIG_NET_NTA=$(grep -q '^CONFIG_NET_NTA=y' "$B/.config" && echo y || echo n)," \
		"$(grep -cE '^CONFIG_NTA_[A-Z_]+=y' "$B/.config") CONFIG_NTA_* on)"
}

main() {
	local k t_all=$SECONDS
	for ((k = N; k >= 1; k--)); do build "$k"; done
	info "check-bisect: $N prefixes in $((SECONDS - t_all))s (results also in ${NTA_LOGS#$NTA_ROOT/}/bisect.txt)"
	[ $failed = 0 ]
}
main "$@"; exit	# read whole before it runs: safe to edit during a build
