#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make series / make refresh: patches/ <-> branch nta of out/tree.  The model
# (README.md): new files are kept whole in their FINAL state; patches/<slug>.diff
# changes files that exist at that point (base files or new files of an EARLIER
# patch).  series: S_N = base + every diff + all new files; S_{k-1} = S_k less
# diff k and patch k's new files; S_0 must be the base.  S_1..S_N are committed
# on branch nta, exported to out/series/ and checked with git am.  refresh: per
# commit, its added files become the patch's new files (content from the tip),
# the rest of its diff the .diff, its message the .msg; what is already
# equivalent is left alone, so series -> refresh changes nothing.  Slugs travel
# as git notes (refs/notes/nta-slug).
# bench: branch nta-bench = nta + one commit made from bench/ (not part of the
# series), checked out in out/nta-bench/tree for the benchmark kernels; check:
# branch nta-check = nta + check/ (make check's fault injection), in
# out/nta-check/tree.
#   scripts/nta-series.sh series|refresh|cover|bench|check   (cover: a new @RESULTS@)
. "$(dirname "$0")/nta-lib.sh"

P=$NTA_ROOT/patches
SERIES_OUT=$NTA_OUT/series
AMWT=$NTA_OUT/am-verify
STAMP=$NTA_OUT/series.stamp	# "<input hash> <nta commit>" of the last assembly
NOTES=refs/notes/nta-slug

series_entries() { sed -e 's/#.*//' -e 's/[[:space:]]\+/ /g' -e 's/^ //' -e 's/ $//' "$P/series" | grep -v '^$'; }

# Parse the series into slugs[] and nfiles[] (space-separated new files), all in $allnew.
load_series() {
	slugs=() nfiles=() allnew=" "
	local slug rest f
	while read -r slug rest; do
		[[ $slug =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] || die "patches/series: bad slug '$slug'"
		[[ " ${slugs[*]} " != *" $slug "* ]] || die "patches/series: slug '$slug' listed twice"
		slugs+=("$slug") nfiles+=("$rest")
		for f in $rest; do
			[[ $allnew != *" $f "* ]] || die "patches/series: $f is added by two patches"
			allnew+="$f "
		done
	done < <(series_entries)
}

diff_paths() { sed -n 's|^diff --git a/\([^ ]*\) b/\([^ ]*\)$|\1\n\2|p' "$1" | sort -u; }	# both sides

# The identity the series is written by: NAME, MAIL, IDENT="NAME <MAIL>".
identity() {
	NAME=${GIT_AUTHOR_NAME:-$(git -C "$NTA_ROOT" config user.name)}
	MAIL=${GIT_AUTHOR_EMAIL:-$(git -C "$NTA_ROOT" config user.email)}
	if [ -z "$NAME" ] || [ -z "$MAIL" ]; then
		NAME="NTA Developer" MAIL=nta@localhost
		warn "no git identity (git config user.name/user.email): patches are from and" \
			"signed off by '$NAME <$MAIL>', not for posting"
	fi
	IDENT="$NAME <$MAIL>"
}

with_author() { awk -v i="$IDENT" '{ gsub(/@AUTHOR@/, i); print }' "$1"; }	# FILE

input_hash() {	# of all a series is made of
	local f
	{
		nta_base; echo "$IDENT"; tail -n +1 "$P"/*
		for f in $allnew; do echo "== $f $(stat -c %a "$NTA_ROOT/$f")"; cat "$NTA_ROOT/$f"; done
	} | sha1sum | cut -d' ' -f1
}

# Refuse to throw away work done in out/tree that was not refreshed back.
guard_tree() {
	[ -n "${FORCE:-}" ] && return 0
	[ -z "$(T status --porcelain -uno 2>/dev/null | head -1)" ] ||
		die "$NTA_TREE has uncommitted changes; commit them on branch nta and run 'make refresh'," \
			"or discard them (FORCE=1 make series)"
	local tip
	tip=$(T rev-parse -q --verify refs/heads/nta) || return 0
	[ "$tip" = "$(nta_base)" ] || [ "$tip" = "$(cut -d' ' -f2 "$STAMP" 2>/dev/null)" ] ||
		die "branch nta in $NTA_TREE has commits that are not in the repository;" \
			"run 'make refresh' first (or FORCE=1 make series to drop them)"
}

TI() { GIT_INDEX_FILE=$W/index T "$@"; }

# apply_or_die DIFF WHAT ARGS...: git apply ARGS to the scratch index, or the reason and exit.
apply_or_die() {
	local p=$1 what=$2 out; shift 2
	out=$(TI apply --cached -v --whitespace=nowarn "$@" "$p" 2>&1) && return 0
	echo "error: $what:" >&2
	sed 's/^/    | /' <<<"$out" >&2
	exit 1
}

cmd_series() {
	load_series
	identity
	local N=${#slugs[@]} k s f p m hash date c=nta-base trees=() excl=() log=$NTA_LOGS/series.log
	local -x GIT_AUTHOR_NAME=$NAME GIT_AUTHOR_EMAIL=$MAIL GIT_COMMITTER_NAME=$NAME GIT_COMMITTER_EMAIL=$MAIL
	: >"$log"
	for ((k = 0; k < N; k++)); do
		s=${slugs[k]}
		[ -f "$P/$s.msg" ] || die "patches/$s.msg missing (commit message of patch '$s')"
		for f in ${nfiles[k]}; do
			T cat-file -e "nta-base:$f" 2>/dev/null &&
				die "patches/series: $f (patch '$s') exists in the base tree; its changes belong in patches/$s.diff"
		done
	done
	hash=$(input_hash)
	if [ "$(cat "$STAMP" 2>/dev/null)" = "$hash $(T rev-parse -q --verify refs/heads/nta)" ] &&
	   [ -d "$SERIES_OUT" ] && [ "$(T symbolic-ref -q --short HEAD)" = nta ]; then
		info "series up to date: $N patches on branch nta, $SERIES_OUT/"
		return 0
	fi
	guard_tree
	W=$(mktemp -d "${TMPDIR:-/tmp}/nta-series.XXXXXX")
	trap 'rm -rf "$W"' EXIT
	# S_N on a scratch index: every diff applied in order to the base, then the new files.
	TI read-tree nta-base
	for f in $allnew; do excl+=(--exclude="$f"); done
	for ((k = 0; k < N; k++)); do
		s=${slugs[k]} p=$W/${slugs[k]}.diff
		[ -f "$P/$s.diff" ] || continue
		with_author "$P/$s.diff" >"$p"
		for f in ${nfiles[k]}; do
			diff_paths "$p" | grep -qx "$f" &&
				die "patches/$s.diff changes $f, a file the same patch adds; edit the file itself"
		done
		apply_or_die "$p" "patches/$s.diff (patch $((k + 1))/$N '$s') does not apply to the base tree" "${excl[@]}"
	done
	for f in $allnew; do
		m=100644 && [ -x "$NTA_ROOT/$f" ] && m=100755
		TI update-index --add --cacheinfo "$m,$(T hash-object -w "$NTA_ROOT/$f"),$f" ||
			die "patches/series adds $f, which is not in the repository"
	done
	trees[N]=$(TI write-tree)
	# Backwards: S_{k-1} = S_k - diff k - new files of k; S_0 must be the base.
	for ((k = N; k >= 1; k--)); do
		s=${slugs[k - 1]} p=$W/${slugs[k - 1]}.diff
		[ -f "$p" ] && apply_or_die "$p" "patches/$s.diff (patch $k/$N) does not reverse-apply to the state after it;
does it change a new file of a later patch, or do the new files not contain its changes?" -R
		[ -z "${nfiles[k - 1]}" ] || TI update-index --force-remove -- ${nfiles[k - 1]}
		trees[k - 1]=$(TI write-tree)
	done
	if [ "${trees[0]}" != "$(T rev-parse 'nta-base^{tree}')" ]; then
		echo "error: undoing the series does not give back the base tree (a diff that applies twice?):" >&2
		T diff --stat nta-base "${trees[0]}" | head -20 | sed 's/^/    | /' >&2
		exit 1
	fi
	# Forward: S_1..S_N committed on nta-base.  Checking out the tip rewrites
	# only the files that changed: the others keep their mtime (no rebuild).
	date=$(git -C "$NTA_ROOT" log -1 --format=%ct 2>/dev/null || T log -1 --format=%ct nta-base)
	for ((k = 1; k <= N; k++)); do
		s=${slugs[k - 1]}
		[ "${trees[k]}" != "${trees[k - 1]}" ] || die "patch $k '$s' changes nothing"
		git interpret-trailers --trailer "Signed-off-by: $IDENT" "$P/$s.msg" >"$W/msg"
		c=$(GIT_AUTHOR_DATE="@$((date + k)) +0000" GIT_COMMITTER_DATE="@$((date + k)) +0000" \
			T commit-tree "${trees[k]}" -p "$c" -F "$W/msg" 2>>"$log") || fail_log "$log" "commit $k failed"
		T notes --ref=$NOTES add -f -m "$s" "$c" >>"$log" 2>&1
		info "$(printf '%2d/%d' $k $N) $s: $(T log -1 --format=%s "$c") ($(T diff --shortstat "$c^" "$c" | sed 's/^ //'))"
	done
	T checkout -q -f -B nta "$c" >>"$log" 2>&1 || fail_log "$log" "cannot check out branch nta in $NTA_TREE"
	export_series "$N"
	echo "$hash $(T rev-parse nta)" >"$STAMP"
	verify
}

# Who the cover letter is copied to: netdev, and the slab allocator's
# maintainers, reviewers and list (linux-mm) as the base's MAINTAINERS names
# them; one "Cc: " header line each.
cover_cc() {
	local cc
	cc=$(awk '/^SLAB ALLOCATOR$/ { s = 1; next } s && /^$/ { exit }
		s && /^[LMR]:/ { sub(/^[LMR]:[ \t]*/, ""); print }' "$NTA_TREE/MAINTAINERS" | grep @)
	[ -n "$cc" ] || die "no SLAB ALLOCATOR entry in $NTA_TREE/MAINTAINERS for the cover letter's Cc"
	{ echo netdev@vger.kernel.org; grep -v '<' <<<"$cc"; grep '<' <<<"$cc"; } |
		awk '!seen[$0]++ { print "Cc: " $0 }'
}

# The cover letter without git's " create mode" lines, its Cc (cover_cc),
# patches/cover-letter.txt its body, the newest make demo / make bench
# summary for @RESULTS@.  The From: and sign-off are the user's git identity.
export_series() {
	local cover=$SERIES_OUT/0000-cover-letter.patch results cc
	cc=$(cover_cc) || exit 1
	rm -rf "$SERIES_OUT"; mkdir -p "$SERIES_OUT"
	# RFC while the base is 6.12.y: net-next patches must apply to net-next.
	T -c user.name="$NAME" -c user.email="$MAIL" format-patch -q --cover-letter \
		--subject-prefix='RFC PATCH net-next' -o "$SERIES_OUT" nta-base..nta \
		>>"$NTA_LOGS/series.log" 2>&1 || fail_log "$NTA_LOGS/series.log" "git format-patch failed"
	results=$(ls -t "$NTA_OUT"/demo/summary.txt "$NTA_OUT"/bench/summary.txt 2>/dev/null | head -1)
	NTA_CC=$cc awk -v body="$P/cover-letter.txt" -v results="$results" '
		!hdr && /^$/ { print ENVIRON["NTA_CC"]; hdr = 1 }
		/^ create mode [0-7]+ / { next }
		/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, "net: network tree allocator (NTA)") }
		/^\*\*\* BLURB HERE \*\*\*$/ {
			while ((getline line < body) > 0)
				if (line != "@RESULTS@") print line
				else while (results != "" && (getline r < results) > 0) print r
			next
		}
		{ print }' "$cover" >"$cover.new" && mv "$cover.new" "$cover"
	info "exported $1 patches + cover letter to ${SERIES_OUT#$NTA_ROOT/}/"
}

# git am of out/series onto a pristine worktree of the base; same tree as nta?
verify() {
	local log=$NTA_LOGS/am-verify.log patches=()
	mapfile -t patches < <(ls "$SERIES_OUT"/[0-9]*.patch | grep -v /0000-cover-letter.patch)
	: >"$log"
	[ -e "$AMWT/.git" ] || { T worktree prune && T worktree add -f --detach "$AMWT" nta-base; } >>"$log" 2>&1 ||
		fail_log "$log" "git worktree add failed"
	git -C "$AMWT" am --abort >/dev/null 2>&1	# of a failed run before
	{ git -C "$AMWT" checkout -q -f --detach nta-base && git -C "$AMWT" clean -q -f -d -x; } >>"$log" 2>&1 ||
		fail_log "$log" "cannot reset $AMWT to nta-base"
	git -C "$AMWT" -c user.name=nta-verify -c user.email=nta@localhost am --whitespace=nowarn \
		"${patches[@]}" >>"$log" 2>&1 || fail_log "$log" "out/series/ does not apply with git am to a pristine base"
	[ "$(git -C "$AMWT" rev-parse 'HEAD^{tree}')" = "$(T rev-parse 'nta^{tree}')" ] ||
		die "git am of out/series/ gives a different tree than branch nta"
	info "git am verification: ${#patches[@]} patches apply to a pristine base, same tree as branch nta"
}

slug_from_subject() {
	tr 'A-Z' 'a-z' <<<"${1#net: nta: }" | sed 's/[^a-z0-9]\+/-/g; s/^-//' | cut -c1-40 | sed 's/-$//'
}

write_if_changed() {	# DEST (content on stdin); 1 when DEST already had it
	local tmp
	tmp=$(mktemp)
	cat >"$tmp"
	cmp -s "$tmp" "$1" 2>/dev/null && { rm -f "$tmp"; return 1; }
	mkdir -p "$(dirname "$1")"
	mv "$tmp" "$1"; chmod 644 "$1"
}

# unsign: a commit message on stdin without its last line if that is IDENT's sign-off.
unsign() {
	awk -v s="Signed-off-by: $IDENT" '{ l[NR] = $0 } END {
		n = NR; if (l[n] == s) { n--; while (n > 0 && l[n] == "") n-- }
		for (i = 1; i <= n; i++) print l[i] }'
}

wrote() { info "$*"; changed=1; }

cmd_refresh() {
	load_series
	[ -z "$(T status --porcelain -uno | head -1)" ] ||
		die "$NTA_TREE has uncommitted changes: commit them on branch nta first (git -C $NTA_TREE commit)"
	T merge-base --is-ancestor nta-base nta || die "branch nta is not based on nta-base"
	local commits=() c k s subj seen=" " newf changed=0 f dp mode W new newslugs=() newfiles=()
	mapfile -t commits < <(T rev-list --reverse --topo-order nta-base..nta)
	[ -z "$(T rev-list --min-parents=2 nta-base..nta)" ] || die "branch nta has merges; keep it linear"
	# The sign-off to drop and the identity to turn back into @AUTHOR@: the series'.
	IDENT=$(T log -1 --format='%an <%ae>' "${commits[0]:-nta}")
	# Old entries by slug, and old slugs by subject.
	declare -A oldfiles bysubj
	for ((k = 0; k < ${#slugs[@]}; k++)); do
		oldfiles[${slugs[k]}]=${nfiles[k]}
		[ -f "$P/${slugs[k]}.msg" ] && bysubj[$(head -1 "$P/${slugs[k]}.msg")]=${slugs[k]}
	done
	W=$(mktemp)	# a scratch index
	for c in "${commits[@]}"; do
		subj=$(T log -1 --format=%s "$c")
		s=$(T notes --ref=$NOTES show "$c" 2>/dev/null | head -1)
		: "${s:=${bysubj[$subj]:-$(slug_from_subject "$subj")}}" "${s:=patch}"
		[[ $seen != *" $s "* ]] || s=$s-$((${#newslugs[@]} + 1))
		seen+="$s "
		mapfile -t newf < <(T diff-tree -r --no-commit-id --name-only --no-renames --diff-filter=A "$c^" "$c")
		# Keep the series' file order when the set is unchanged.
		[ -n "${oldfiles[$s]+x}" ] &&
			[ "$(printf '%s\n' ${oldfiles[$s]} | sort)" = "$(printf '%s\n' "${newf[@]}" | grep . | sort)" ] &&
			read -ra newf <<<"${oldfiles[$s]}"
		newslugs+=("$s") newfiles+=("${newf[*]}")
		# Commit message, byte for byte, without the runner's sign-off.
		T cat-file commit "$c" | sed '1,/^$/d' | unsign | write_if_changed "$P/$s.msg" && wrote "wrote patches/$s.msg"
		# The rest of the commit's diff, unless the old .diff still says the same.
		local excl=(.) dp=$P/$s.diff
		for f in "${newf[@]}"; do [ -n "$f" ] && excl+=(":(exclude)$f"); done
		if T diff --quiet "$c^" "$c" -- "${excl[@]}"; then
			[ -f "$dp" ] && rm -f "$dp" && wrote "removed patches/$s.diff (no changes to existing files)"
		elif ! { [ -f "$dp" ] && GIT_INDEX_FILE=$W T read-tree "$c^" &&
			with_author "$dp" | GIT_INDEX_FILE=$W T apply --cached --whitespace=nowarn 2>/dev/null &&
			GIT_INDEX_FILE=$W T diff-index --cached --quiet "$c" -- "${excl[@]}"; }; then
			T -c core.abbrev=12 diff --no-color --no-ext-diff --no-renames "$c^" "$c" -- "${excl[@]}" |
				awk -v i="$IDENT" '{ while ((p = index($0, i)) > 0)
					$0 = substr($0, 1, p - 1) "@AUTHOR@" substr($0, p + length(i)); print }' >"$dp"
			wrote "wrote patches/$s.diff"
		fi
		# New files: final content and mode from the branch tip.
		for f in "${newf[@]}"; do
			[ -n "$f" ] || continue
			mode=$(T ls-tree nta -- "$f" | cut -d' ' -f1)
			[ -n "$mode" ] || die "$f, added by '$s', is deleted later on branch nta; fold that into one patch"
			T cat-file blob "nta:$f" | write_if_changed "$NTA_ROOT/$f" && wrote "wrote $f"
			[[ $mode != 100* ]] || chmod "${mode:3}" "$NTA_ROOT/$f"
		done
	done
	rm -f "$W"
	# The series file, rewritten only when the entries changed (comments kept).
	new=$(for ((k = 0; k < ${#newslugs[@]}; k++)); do echo "${newslugs[k]}${newfiles[k]:+ ${newfiles[k]}}"; done)
	if [ "$(series_entries)" != "$new" ]; then
		{ awk '/^[[:space:]]*(#|$)/ { print; next } { exit }' "$P/series"; [ -n "$new" ] && echo "$new"; } |
			write_if_changed "$P/series"
		wrote "rewrote patches/series (${#newslugs[@]} patches)"
	fi
	for s in "${slugs[@]}"; do
		[[ $seen == *" $s "* ]] || warn "patch '$s' is no longer on branch nta; patches/$s.* and its files are left in place"
	done
	echo "refreshed $(T rev-parse nta)" >"$STAMP"
	[ $changed = 1 ] && info "refreshed the repository from branch nta (${#commits[@]} commits); review with git diff" ||
		info "repository already matches branch nta (${#commits[@]} commits)"
}

# An overlay: one commit on top of branch nta, made from a folder of this
# repository that is not part of the series (bench/, check/), on branch
# BRANCH and checked out detached in OUT/tree.  Same inputs, same commit;
# the worktree is checked out again only where files changed (no rebuild
# of the rest), and made again when out/tree was.
# overlay_current BRANCH OUT HASH: 0 when OUT/tree is that commit already.
overlay_current() {
	local br=$1 bt=$2/tree stamp=$2/tree.stamp hash=$3 old dirty head src=${1#nta-}
	old=$(cut -d' ' -f2 "$stamp" 2>/dev/null)
	mkdir -p "$2"
	bench_wt_ok "$bt" || return 1
	dirty=$(git -C "$bt" status --porcelain -uno | head -1) head=$(git -C "$bt" rev-parse HEAD)
	if [ -z "${FORCE:-}" ]; then
		[ -z "$dirty" ] ||
			die "${bt#$NTA_ROOT/} has uncommitted changes: make them in $src/ (FORCE=1 discards them)"
		[ -z "$old" ] || [ "$head" = "$old" ] ||
			die "${bt#$NTA_ROOT/} is not at the commit made from $src/: carry its changes into $src/" \
				"(FORCE=1 discards them)"
	fi
	[ -z "$dirty" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$hash $head" ] &&
		[ "$(T rev-parse -q --verify "refs/heads/$br")" = "$head" ] || return 1
	info "$src tree up to date: branch $br (nta + $src/) in ${bt#$NTA_ROOT/}"
}

# overlay_commit BRANCH OUT HASH MSG LOG: commit the scratch index (TI) on
# top of nta with message MSG, as BRANCH, checked out in OUT/tree.
overlay_commit() {
	local br=$1 bt=$2/tree hash=$3 log=$5 src=${1#nta-} c date
	git interpret-trailers --trailer "Signed-off-by: $IDENT" "$4" >"$W/msg"
	date=$(($(T log -1 --format=%ct nta) + 1))
	c=$(GIT_AUTHOR_NAME=$NAME GIT_AUTHOR_EMAIL=$MAIL GIT_COMMITTER_NAME=$NAME GIT_COMMITTER_EMAIL=$MAIL \
		GIT_AUTHOR_DATE="@$date +0000" GIT_COMMITTER_DATE="@$date +0000" \
		T commit-tree "$(TI write-tree)" -p nta -F "$W/msg" 2>>"$log") || fail_log "$log" "commit of $src/ failed"
	T update-ref "refs/heads/$br" "$c" >>"$log" 2>&1 || fail_log "$log" "cannot update branch $br"
	if bench_wt_ok "$bt"; then
		git -C "$bt" checkout -q -f --detach "$c" >>"$log" 2>&1
	else
		rm -rf "$bt" && T worktree prune && T worktree add -f --detach "$bt" "$c" >>"$log" 2>&1
	fi || fail_log "$log" "cannot check out $br in ${bt#$NTA_ROOT/}"
	echo "$hash $c" >"$2/tree.stamp"
	info "branch $br: nta + '$(T log -1 --format=%s "$c")' ($(T diff --shortstat nta "$c" | sed 's/^ //'))," \
		"checked out in ${bt#$NTA_ROOT/}"
}

# The benchmark's overlay (bench/README.md): bench/*.c and *.h added to
# net/core/alloc/, Kconfig.append and Makefile.append appended to
# net/core/alloc/Kconfig and Makefile (no context to go stale when the
# series changes them), bench/*.diff applied (the hooks the benchmark
# needs in files of the series), bench.msg its message.
BENCH_SRC=$NTA_ROOT/bench
BENCH_FILES="nta_bench.c Kconfig.append Makefile.append bench.msg"
BENCH_NEW="nta_bench.c nta_bench_heads.c nta_bench_heads.h"
BENCH_DIFFS="skbuff.diff"
cmd_bench() {
	local log=$NTA_LOGS/bench-tree.log nta hash f d=net/core/alloc
	nta=$(T rev-parse -q --verify refs/heads/nta) || die "no branch nta in $NTA_TREE: run make series first"
	for f in $BENCH_FILES $BENCH_NEW $BENCH_DIFFS; do [ -f "$BENCH_SRC/$f" ] || die "bench/$f missing"; done
	identity 2>/dev/null
	hash=$({ echo "$nta $IDENT"; cd "$BENCH_SRC" && tail -n +1 $BENCH_FILES $BENCH_NEW $BENCH_DIFFS; } |
		sha1sum | cut -d' ' -f1)
	: >"$log"
	overlay_current nta-bench "$NTA_BENCH_OUT" "$hash" && return 0
	! T cat-file -e "nta:$d/nta_bench.c" 2>/dev/null && ! T grep -q '^config NTA_BENCH$' nta -- "$d/Kconfig" ||
		die "branch nta already has the benchmark ($d/nta_bench.c or config NTA_BENCH): it belongs in bench/ only"
	W=$(mktemp -d "${TMPDIR:-/tmp}/nta-bench.XXXXXX")
	trap 'rm -rf "$W"' EXIT
	TI read-tree nta
	for f in $BENCH_NEW; do
		TI update-index --add --cacheinfo "100644,$(T hash-object -w "$BENCH_SRC/$f"),$d/$f"
	done
	for f in $BENCH_DIFFS; do
		TI apply --cached "$BENCH_SRC/$f" 2>>"$log" || fail_log "$log" "bench/$f does not apply to branch nta"
	done
	for f in Kconfig Makefile; do
		T cat-file blob "nta:$d/$f" >"$W/$f" 2>>"$log" || die "branch nta has no $d/$f"
		cat "$BENCH_SRC/$f.append" >>"$W/$f"
		TI update-index --cacheinfo "100644,$(T hash-object -w "$W/$f"),$d/$f"
	done
	overlay_commit nta-bench "$NTA_BENCH_OUT" "$hash" "$BENCH_SRC/bench.msg" "$log"
}

# make check's fault injection (check/README.md): check/*.diff applied on
# top of nta, check.msg its message, for the kernel of the initfail boot.
CHECK_SRC=$NTA_ROOT/check
cmd_check() {
	local log=$NTA_LOGS/check-tree.log nta hash f diffs
	nta=$(T rev-parse -q --verify refs/heads/nta) || die "no branch nta in $NTA_TREE: run make series first"
	diffs=$(cd "$CHECK_SRC" && ls ./*.diff) && [ -f "$CHECK_SRC/check.msg" ] || die "check/*.diff or check/check.msg missing"
	identity 2>/dev/null
	hash=$({ echo "$nta $IDENT"; cd "$CHECK_SRC" && tail -n +1 check.msg $diffs; } | sha1sum | cut -d' ' -f1)
	: >"$log"
	overlay_current nta-check "$NTA_CHECK_OUT" "$hash" && return 0
	W=$(mktemp -d "${TMPDIR:-/tmp}/nta-check.XXXXXX")
	trap 'rm -rf "$W"' EXIT
	TI read-tree nta
	for f in $diffs; do
		TI apply --cached "$CHECK_SRC/$f" 2>>"$log" || fail_log "$log" "check/${f#./} does not apply to branch nta"
	done
	overlay_commit nta-check "$NTA_CHECK_OUT" "$hash" "$CHECK_SRC/check.msg" "$log"
}

# bench_wt_ok DIR: DIR is a worktree of out/tree (not one of a removed out/tree).
bench_wt_ok() {
	[ -e "$1/.git" ] &&
		[ "$(git -C "$1" rev-parse --path-format=absolute --git-common-dir 2>/dev/null)" = \
		  "$(T rev-parse --path-format=absolute --git-common-dir)" ]
}

case ${1:-series} in
bench) step_banner "bench tree: branch nta-bench (nta + bench/) in ${NTA_BENCH_OUT#$NTA_ROOT/}/tree"; cmd_bench ;;
check) step_banner "check tree: branch nta-check (nta + check/) in ${NTA_CHECK_OUT#$NTA_ROOT/}/tree"; cmd_check ;;
series|refresh|cover) step_banner "${1:-series}: patches/series <-> branch nta of ${NTA_TREE#$NTA_ROOT/}" ;;&
series) cmd_series ;;
refresh) cmd_refresh ;;
cover) load_series; identity; [ -d "$SERIES_OUT" ] && export_series ${#slugs[@]} ;;	# after make demo
*) die "usage: $0 series|refresh|cover|bench|check" ;;
esac
