#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make tree [KERNEL_SRC=DIR] (README.md): the base tree as a git repository in
# out/tree, tagged nta-base: Debian's linux-source-6.12, or the HEAD of the
# git tree DIR (objects shared, nothing copied).
. "$(dirname "$0")/nta-lib.sh"

TARBALL=${NTA_TARBALL:-/usr/src/linux-source-6.12.tar.xz}
stampf=$NTA_OUT/tree.stamp
step_banner "tree: base kernel tree (${KERNEL_SRC:-Debian linux-source-6.12})"

check_version() {	# DIR: is it a 6.12 kernel tree?
	local v
	v=$(make -s -C "$1" kernelversion 2>/dev/null) ||
		die "$1 is not a kernel tree (no Makefile); KERNEL_SRC must point at a v6.12.y tree"
	[[ $v =~ ^6\.12(\.|$) ]] || die "$1 is Linux $v, the NTA series is for 6.12.y"
}

if [ -n "${KERNEL_SRC:-}" ]; then
	src=$(cd "$KERNEL_SRC" 2>/dev/null && pwd) || die "KERNEL_SRC=$KERNEL_SRC: no such directory"
	check_version "$src"
	[ "$(git -C "$src" rev-parse --show-toplevel 2>/dev/null)" = "$src" ] ||
		die "KERNEL_SRC=$KERNEL_SRC is not the top of a git tree (its HEAD is the base)"
	id="git $src $(git -C "$src" rev-parse HEAD)"
	[ -z "$(git -C "$src" status --porcelain -uno | head -1)" ] ||
		warn "$src has uncommitted changes; the base is its HEAD commit, without them"
else
	[ -f "$TARBALL" ] || "$NTA_ROOT/scripts/nta-deps.sh" || exit 1
	[ -f "$TARBALL" ] || die "$TARBALL missing after installing linux-source-6.12"
	id="tar $TARBALL $(stat -c '%s %Y' "$TARBALL")"
fi

if [ "$(cat "$stampf" 2>/dev/null)" = "$id" ] && nta_base >/dev/null 2>&1; then
	info "base tree cached: $NTA_TREE ($(T log -1 --format=%s nta-base))"
	exit 0
fi
[ -e "$NTA_TREE" ] && { info "base source changed, rebuilding $NTA_TREE"; rm -rf "$NTA_TREE"; }
rm -f "$stampf"
log=$NTA_LOGS/tree.log
: >"$log"
g() { T "$@" >>"$log" 2>&1; }

if [ -n "${src:-}" ]; then
	info "cloning $src (shared objects, HEAD $(git -C "$src" describe --tags --always HEAD 2>/dev/null))"
	git clone -q --shared --no-checkout "$src" "$NTA_TREE" >>"$log" 2>&1 || fail_log "$log" "git clone failed"
	base=$(git -C "$src" rev-parse HEAD)
	g checkout -q --detach "$base" || fail_log "$log" "checkout failed"
else
	info "unpacking $TARBALL ($(du -h "$TARBALL" | cut -f1)) into $NTA_TREE"
	mkdir -p "$NTA_TREE"
	tar -xJf "$TARBALL" --strip-components=1 -C "$NTA_TREE" >>"$log" 2>&1 || fail_log "$log" "unpacking $TARBALL failed"
	info "making the base commit (git add of $(find "$NTA_TREE" -type f | wc -l) files)"
	t="@$(stat -c %Y "$NTA_TREE/Makefile") +0000"
	# Debian's top-level .gitignore ignores everything: add with -f.
	g init -q && g config gc.auto 0 && g add -f . &&
		GIT_AUTHOR_DATE=$t GIT_COMMITTER_DATE=$t g -c user.name="NTA base" -c user.email=nta@localhost commit -q \
		--no-verify -m "Linux $(make -s -C "$NTA_TREE" kernelversion 2>/dev/null) (tar: $TARBALL)" ||
		fail_log "$log" "base commit failed"
	base=$(T rev-parse HEAD)
fi
g config gc.auto 0
g config user.name "NTA tooling"
g config user.email nta@localhost
# Keep each commit's series slug attached through amend and rebase.
g config notes.rewriteRef refs/notes/nta-slug
g tag -f nta-base "$base" || fail_log "$log" "tagging failed"
echo "$id" >"$stampf"
info "base: $(T log -1 --format='%h %s' nta-base)"
