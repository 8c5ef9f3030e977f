#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make pahole [PAHOLE_CONFIG=x86_64_defconfig] (README.md): struct sk_buff
# of nta-base (a worktree) and branch nta, in out/pahole/, for two configs:
# PAHOLE_CONFIG as it is, and the same without CONFIG_NETWORK_SECMARK (and
# SELinux, which selects it).  skb->__tsize sits in the 4-byte hole after
# skb->end that the secmark field leaves on 64-bit; without it there is no
# hole and the struct grows by 8 bytes.  Fails when struct sk_buff grows with
# PAHOLE_CONFIG, or when the objects of skbuff_head_cache or
# skbuff_fclone_cache (SLAB_HWCACHE_ALIGN: 64-byte multiples on x86_64) grow
# in either config.
. "$(dirname "$0")/nta-lib.sh"

declare -A size fsize
cfg=${PAHOLE_CONFIG:-x86_64_defconfig} P=$NTA_OUT/pahole
step_banner "pahole: struct sk_buff, base vs series ($cfg; and without NETWORK_SECMARK)"
mkdir -p "$P"
rm -rf "$P/base-src"
T worktree prune
T worktree add -f --detach "$P/base-src" nta-base >/dev/null 2>&1 || die "git worktree add of nta-base failed"

# pahole_one TREE VARIANT: struct sk_buff and its fclone pair from skbuff.o.
pahole_one() {
	local v=$1 c=$2 f=$P/sk_buff-$1$2.txt
	pahole -C sk_buff "$P/$v/net/core/skbuff.o" >"$f"
	size[$v$c]=$(sed -nE 's|.*/\* size: ([0-9]+),.*|\1|p' "$f")
	fsize[$v$c]=$(pahole -C sk_buff_fclones "$P/$v/net/core/skbuff.o" |
		sed -nE 's|.*/\* size: ([0-9]+),.*|\1|p')
}

for v in base nta; do
	src=$NTA_TREE
	[ $v = base ] && src=$P/base-src
	info "$v: net/core/skbuff.o with -g, $cfg then without NETWORK_SECMARK (log: ${P#$NTA_ROOT/}/$v.log)"
	nta_kmake "$P/$v" "$src"
	("${kmake[@]}" -s "$cfg" && "${kmake[@]}" -s KCFLAGS=-g net/core/skbuff.o) \
		>"$P/$v.log" 2>&1 || fail_log "$P/$v.log" "building $v skbuff.o ($cfg) failed"
	pahole_one $v ""
	("$src/scripts/config" --file "$P/$v/.config" -d SECURITY_SELINUX -d NETWORK_SECMARK &&
		"${kmake[@]}" -s olddefconfig && ! grep -q '^CONFIG_NETWORK_SECMARK=y' "$P/$v/.config" &&
		"${kmake[@]}" -s KCFLAGS=-g net/core/skbuff.o) \
		>>"$P/$v.log" 2>&1 || fail_log "$P/$v.log" "building $v skbuff.o ($cfg, NETWORK_SECMARK=n) failed"
	pahole_one $v -nosecmark
done
T worktree remove -f "$P/base-src"
slot() { echo $(( ($1 + 63) / 64 * 64 )); }
bad=
for c in "" -nosecmark; do
	what=$cfg
	[ -n "$c" ] && what="$cfg, NETWORK_SECMARK=n"
	diff -u "$P/sk_buff-base$c.txt" "$P/sk_buff-nta$c.txt" | sed 's/^/    /'
	b=${size[base$c]} n=${size[nta$c]} fb=${fsize[base$c]} fn=${fsize[nta$c]}
	[ -n "$b" ] && [ -n "$n" ] && [ -n "$fb" ] && [ -n "$fn" ] || die "pahole found no struct sk_buff ($what)"
	info "struct sk_buff: $b bytes on the base, $n with the series;" \
		"sk_buff_fclones: $fb, $fn; slab objects $(slot "$b")/$(slot "$fb") and $(slot "$n")/$(slot "$fn") bytes ($what)"
	[ -n "$c" ] || [ "$b" = "$n" ] || bad+=" struct sk_buff changed size ($what);"
	[ "$(slot "$b")" = "$(slot "$n")" ] && [ "$(slot "$fb")" = "$(slot "$fn")" ] ||
		bad+=" the skbuff_head_cache or skbuff_fclone_cache objects grew ($what);"
done
[ -z "$bad" ] || die "${bad%;}"
