#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make pahole [PAHOLE_CONFIG=x86_64_defconfig]: struct sk_buff on the
# pristine base and with the series applied, side by side.  Builds only
# net/core/skbuff.o (with -g) twice, from a worktree of tag nta-base and
# from out/tree (branch nta), in out/pahole/{base,nta}; prints the diff of
# `pahole -C sk_buff` and fails when the size changed.
. "$(dirname "$0")/nta-lib.sh"

cfg=${PAHOLE_CONFIG:-x86_64_defconfig}
P=$NTA_OUT/pahole
command -v pahole >/dev/null || die "pahole missing (Debian package dwarves; scripts/nta-deps.sh installs it)"
[ -n "$(nta_base)" ] || die "no base tree: run 'make tree'"
git -C "$NTA_TREE" rev-parse -q --verify nta >/dev/null || die "no branch nta: run 'make series'"
step_banner "pahole: struct sk_buff, base vs series ($cfg)"
mkdir -p "$P"
rm -rf "$P/base-src"
git -C "$NTA_TREE" worktree prune
git -C "$NTA_TREE" worktree add -f --detach "$P/base-src" nta-base >/dev/null 2>&1 ||
	die "git worktree add of nta-base failed"
for v in base nta; do
	src=$NTA_TREE
	[ $v = base ] && src=$P/base-src
	mkdir -p "$P/$v"
	info "$v: net/core/skbuff.o with -g (log: ${P#$NTA_ROOT/}/$v.log)"
	nta_kmake "$P/$v" "$src"
	("${kmake[@]}" -s "$cfg" && "${kmake[@]}" -s KCFLAGS=-g net/core/skbuff.o) \
		>"$P/$v.log" 2>&1 || fail_log "$P/$v.log" "building $v skbuff.o failed"
	pahole -C sk_buff "$P/$v/net/core/skbuff.o" >"$P/sk_buff-$v.txt"
done
git -C "$NTA_TREE" worktree remove -f "$P/base-src"
diff -u "$P/sk_buff-base.txt" "$P/sk_buff-nta.txt" | sed 's/^/    /'
sb=$(sed -nE 's|.*/\* size: ([0-9]+),.*|\1|p' "$P/sk_buff-base.txt")
sn=$(sed -nE 's|.*/\* size: ([0-9]+),.*|\1|p' "$P/sk_buff-nta.txt")
info "struct sk_buff: $sb bytes on the base, $sn bytes with the series ($cfg)"
[ -n "$sb" ] && [ "$sb" = "$sn" ] || die "struct sk_buff changed size"
