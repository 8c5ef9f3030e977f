#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make pahole [PAHOLE_CONFIG=x86_64_defconfig] (README.md): struct sk_buff
# of nta-base (a worktree) and branch nta, in out/pahole/.
. "$(dirname "$0")/nta-lib.sh"

declare -A size
cfg=${PAHOLE_CONFIG:-x86_64_defconfig} P=$NTA_OUT/pahole
step_banner "pahole: struct sk_buff, base vs series ($cfg)"
mkdir -p "$P"
rm -rf "$P/base-src"
T worktree prune
T worktree add -f --detach "$P/base-src" nta-base >/dev/null 2>&1 || die "git worktree add of nta-base failed"
for v in base nta; do
	src=$NTA_TREE
	[ $v = base ] && src=$P/base-src
	info "$v: net/core/skbuff.o with -g (log: ${P#$NTA_ROOT/}/$v.log)"
	nta_kmake "$P/$v" "$src"
	("${kmake[@]}" -s "$cfg" && "${kmake[@]}" -s KCFLAGS=-g net/core/skbuff.o) \
		>"$P/$v.log" 2>&1 || fail_log "$P/$v.log" "building $v skbuff.o failed"
	pahole -C sk_buff "$P/$v/net/core/skbuff.o" >"$P/sk_buff-$v.txt"
	size[$v]=$(sed -nE 's|.*/\* size: ([0-9]+),.*|\1|p' "$P/sk_buff-$v.txt")
done
T worktree remove -f "$P/base-src"
diff -u "$P/sk_buff-base.txt" "$P/sk_buff-nta.txt" | sed 's/^/    /'
info "struct sk_buff: ${size[base]} bytes on the base, ${size[nta]} bytes with the series ($cfg)"
[ -n "${size[base]}" ] && [ "${size[base]}" = "${size[nta]}" ] || die "struct sk_buff changed size"
