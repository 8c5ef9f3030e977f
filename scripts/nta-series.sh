#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make series / make refresh: between the repository's series description and
# branch `nta` of the assembled tree out/tree.
#
# The model.  New kernel files live whole in the repository at their kernel
# paths, in their FINAL state.  patches/series lists the logical patches in
# order, one a line:
#
#     <slug> <new files this patch adds...>        (# starts a comment)
#
# patches/<slug>.msg is the commit message (subject, blank line, body).
# Author and Signed-off-by are the git identity of whoever runs make series
# (git config user.name / user.email, or GIT_AUTHOR_NAME / GIT_AUTHOR_EMAIL);
# @AUTHOR@ in a .diff (the MAINTAINERS entry) becomes "Name <mail>".
# patches/<slug>.diff, optional, is a unified git diff of the patch's changes
# to files that exist at that point: base-tree files, or new files of an
# EARLIER patch (e.g. the KUnit patch adding a line to net/core/alloc/Makefile).
# patches/cover-letter.txt, optional, is the cover letter's body.
#
# Assembly (series):  S_N = base + every diff, in order, applied to base-tree
# files only + all new files in their final state.  Then backwards:
# S_{k-1} = S_k with diff k reverse-applied and patch k's new files removed;
# S_0 must equal the base.  S_1..S_N are committed on branch nta on top of
# tag nta-base, exported with git format-patch --cover-letter to out/series/,
# and verified by git am on a pristine worktree of the base (out/am-verify).
#
# Refresh: branch nta, commit by commit: files a commit adds become that
# patch's new files (final content copied from the branch tip into the repo),
# the rest of the commit's diff becomes patches/<slug>.diff, its message the
# .msg.  A .diff or series file that is already equivalent is left untouched,
# so series -> refresh changes nothing.  Slugs travel with the commits as git
# notes (refs/notes/nta-slug; kept through amend and rebase).
#
#   scripts/nta-series.sh series|refresh|verify|cover
# (cover: export out/series/ again, for a new @RESULTS@ table; no assembly)
. "$(dirname "$0")/nta-lib.sh"

SERIES_OUT=$NTA_OUT/series
AMWT=$NTA_OUT/am-verify
STAMP=$NTA_OUT/series.stamp	# "<input hash> <nta commit>" of the last assembly
NOTES=refs/notes/nta-slug

T() { git -C "$NTA_TREE" "$@"; }

need_tree() {
	nta_base >/dev/null 2>&1 || die "no base tree in $NTA_TREE: run 'make tree' first"
}

# Parse the series into slugs[] and nfiles[] (space-separated new files).
load_series() {
	slugs=(); nfiles=()
	local slug rest seen=" " f
	while read -r slug rest; do
		[[ $slug =~ ^[A-Za-z0-9][A-Za-z0-9._-]*$ ]] || die "patches/series: bad slug '$slug'"
		case $seen in *" $slug "*) die "patches/series: slug '$slug' listed twice" ;; esac
		seen+="$slug "
		slugs+=("$slug"); nfiles+=("$rest")
	done < <(series_entries)
	allnew=" "
	for rest in "${nfiles[@]}"; do
		for f in $rest; do
			case $allnew in *" $f "*) die "patches/series: $f is added by two patches" ;; esac
			allnew+="$f "
		done
	done
}

# Paths a git diff touches (both sides).
diff_paths() {
	sed -n 's|^diff --git a/\([^ ]*\) b/\([^ ]*\)$|\1\n\2|p' "$1" | sort -u
}

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

# with_author FILE: FILE with @AUTHOR@ replaced by the identity.
with_author() { awk -v i="$IDENT" '{ gsub(/@AUTHOR@/, i); print }' "$1"; }

input_hash() {
	{
		nta_base
		echo "$IDENT"
		[ -f "$NTA_PATCHES/series" ] && cat "$NTA_PATCHES/series"
		local s f
		for s in "${slugs[@]}"; do
			for f in "$NTA_PATCHES/$s.msg" "$NTA_PATCHES/$s.diff"; do
				[ -f "$f" ] && { echo "== $f"; cat "$f"; }
			done
		done
		[ -f "$NTA_PATCHES/cover-letter.txt" ] && cat "$NTA_PATCHES/cover-letter.txt"
		for f in $allnew; do echo "== $f $(stat -c %a "$NTA_SRC/$f" 2>/dev/null)"; cat "$NTA_SRC/$f" 2>/dev/null; done
	} | sha1sum | cut -d' ' -f1
}

# Refuse to throw away work done in out/tree that was not refreshed back.
guard_tree() {
	[ -n "${FORCE:-}" ] && return 0
	if [ -n "$(T status --porcelain -uno 2>/dev/null | head -1)" ]; then
		die "$NTA_TREE has uncommitted changes; commit them on branch nta and run 'make refresh'," \
			"or discard them (FORCE=1 make series)"
	fi
	local tip recorded
	tip=$(T rev-parse -q --verify refs/heads/nta 2>/dev/null) || return 0
	[ "$tip" = "$(nta_base)" ] && return 0
	recorded=$(cut -d' ' -f2 "$STAMP" 2>/dev/null)
	[ "$tip" = "$recorded" ] ||
		die "branch nta in $NTA_TREE has commits that are not in the repository;" \
			"run 'make refresh' first (or FORCE=1 make series to drop them)"
}

cmd_series() {
	need_tree
	load_series
	identity
	local N=${#slugs[@]} k s f p hash log=$NTA_LOGS/series.log
	: >"$log"
	for ((k = 0; k < N; k++)); do
		s=${slugs[k]}
		[ -f "$NTA_PATCHES/$s.msg" ] || die "patches/$s.msg missing (commit message of patch '$s')"
		for f in ${nfiles[k]}; do
			[ -f "$NTA_SRC/$f" ] || die "patches/series: patch '$s' adds $f, which is not in the repository"
			T cat-file -e "nta-base:$f" 2>/dev/null &&
				die "patches/series: $f (patch '$s') exists in the base tree; its changes belong in patches/$s.diff"
		done
	done
	hash=$(input_hash)
	if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$hash $(T rev-parse -q --verify refs/heads/nta)" ] &&
	   [ -d "$SERIES_OUT" ] && [ "$(T symbolic-ref -q --short HEAD)" = nta ]; then
		info "series up to date: $N patches on branch nta, $SERIES_OUT/"
		return 0
	fi
	guard_tree

	local W snaps touched=()
	W=$(mktemp -d "${TMPDIR:-/tmp}/nta-series.XXXXXX")
	trap 'rm -rf "$W"' EXIT
	snaps=$W/snap
	mkdir -p "$W/s" "$snaps" "$W/d"
	git init -q "$W/s"
	for s in "${slugs[@]}"; do
		[ -f "$NTA_PATCHES/$s.diff" ] && with_author "$NTA_PATCHES/$s.diff" >"$W/d/$s.diff"
	done

	# Every path the series touches.
	mapfile -t touched < <({
		for f in $allnew; do echo "$f"; done
		for s in "${slugs[@]}"; do [ -f "$NTA_PATCHES/$s.diff" ] && diff_paths "$NTA_PATCHES/$s.diff"; done
	} | grep -v '^/dev/null$' | sort -u)

	# S_N: base files of the touched paths, every diff applied in order to them.
	local inbase=()
	[ ${#touched[@]} -gt 0 ] && mapfile -t inbase < <(T ls-tree -r --name-only nta-base -- "${touched[@]}")
	[ ${#inbase[@]} -gt 0 ] && { T archive nta-base -- "${inbase[@]}" | tar -x -C "$W/s"; }
	local excl=()
	for f in $allnew; do excl+=(--exclude="$f"); done
	for ((k = 0; k < N; k++)); do
		s=${slugs[k]}; p=$W/d/$s.diff
		[ -f "$p" ] || continue
		for f in ${nfiles[k]}; do
			diff_paths "$p" | grep -qx "$f" &&
				die "patches/$s.diff changes $f, a file the same patch adds; edit the file itself"
		done
		if ! git -C "$W/s" apply -v --whitespace=nowarn "${excl[@]}" "$p" >"$W/apply.out" 2>&1; then
			echo "error: patches/$s.diff (patch $((k + 1))/$N '$s') does not apply to the base tree:" >&2
			sed 's/^/    | /' "$W/apply.out" >&2
			exit 1
		fi
	done
	for f in $allnew; do
		mkdir -p "$W/s/$(dirname "$f")"
		cp -p "$NTA_SRC/$f" "$W/s/$f"
	done

	# Backwards: S_{k-1} = S_k - diff k - new files of k.
	for ((k = N; k >= 1; k--)); do
		s=${slugs[k - 1]}; p=$W/d/$s.diff
		mkdir -p "$snaps/$k"
		(cd "$W/s" && tar -c --exclude=./.git .) | tar -x -C "$snaps/$k"
		if [ -f "$p" ] && ! git -C "$W/s" apply -v -R --whitespace=nowarn "$p" >"$W/apply.out" 2>&1; then
			echo "error: patches/$s.diff (patch $k/$N) does not reverse-apply to the state after it;" \
				"does it change a new file of a later patch, or do the new files not contain its changes?" >&2
			sed 's/^/    | /' "$W/apply.out" >&2
			exit 1
		fi
		for f in ${nfiles[k - 1]}; do rm -f "$W/s/$f"; done
	done
	# S_0 must be the base again.
	mkdir -p "$W/base"
	[ ${#inbase[@]} -gt 0 ] && { T archive nta-base -- "${inbase[@]}" | tar -x -C "$W/base"; }
	find "$W/s" -depth -mindepth 1 -type d -empty -not -path '*/.git*' -delete
	if ! diff -r -x .git "$W/base" "$W/s" >"$W/s0.diff" 2>&1; then
		echo "error: undoing the series does not give back the base tree (a diff that applies twice?):" >&2
		head -20 "$W/s0.diff" | sed 's/^/    | /' >&2
		exit 1
	fi

	# Forward: commit S_1..S_N on branch nta.
	local date
	date=$(git -C "$NTA_ROOT" log -1 --format=%ct 2>/dev/null) || date=
	[ -n "$date" ] || date=$(T log -1 --format=%ct nta-base)
	# The files' content and mtime in the tree now, so that afterwards an
	# unchanged file keeps its mtime (no needless rebuild) and a changed
	# one gets the current time: copying with the repository's mtime could
	# leave a file older than an object built from its previous content.
	local f
	for f in "${touched[@]}"; do
		[ -f "$NTA_TREE/$f" ] &&
			printf '%s %s %s\n' "$(git hash-object "$NTA_TREE/$f")" \
				"$(stat -c %Y "$NTA_TREE/$f")" "$f"
	done >"$W/mtimes"
	T checkout -q -f -B nta nta-base >>"$log" 2>&1 || fail_log "$log" "cannot check out nta-base in $NTA_TREE"
	for ((k = 1; k <= N; k++)); do
		s=${slugs[k - 1]}
		for f in "${touched[@]}"; do
			if [ -e "$snaps/$k/$f" ]; then
				mkdir -p "$NTA_TREE/$(dirname "$f")"
				cp -p "$snaps/$k/$f" "$NTA_TREE/$f"
			else
				rm -f "$NTA_TREE/$f"
			fi
		done
		T update-index --add --remove -- "${touched[@]}" >>"$log" 2>&1 || fail_log "$log" "git update-index failed"
		T diff --cached --quiet && die "patch $k '$s' changes nothing"
		GIT_AUTHOR_NAME=$NAME GIT_AUTHOR_EMAIL=$MAIL GIT_COMMITTER_NAME=$NAME GIT_COMMITTER_EMAIL=$MAIL \
		GIT_AUTHOR_DATE="@$((date + k)) +0000" GIT_COMMITTER_DATE="@$((date + k)) +0000" \
			T commit -q --no-verify --signoff --cleanup=verbatim -F "$NTA_PATCHES/$s.msg" >>"$log" 2>&1 ||
			fail_log "$log" "commit of patch $k '$s' failed"
		T notes --ref=$NOTES add -f -m "$s" HEAD >>"$log" 2>&1
		info "$(printf '%2d/%d' $k $N) $s: $(T log -1 --format=%s HEAD) ($(T diff --shortstat HEAD^ HEAD | sed 's/^ //'))"
	done
	T checkout -q nta 2>/dev/null
	for f in "${touched[@]}"; do
		[ -f "$NTA_TREE/$f" ] || continue
		local old
		old=$(awk -v f="$f" -v h="$(git hash-object "$NTA_TREE/$f")" \
			'$3 == f && $1 == h { print $2 }' "$W/mtimes")
		if [ -n "$old" ]; then
			touch -d "@$old" "$NTA_TREE/$f"
		else
			touch "$NTA_TREE/$f"
		fi
	done

	export_series "$N"
	echo "$hash $(T rev-parse nta)" >"$STAMP"
	rm -rf "$W"; trap - EXIT
	verify "$N"
}

export_series() {
	local N=$1 log=$NTA_LOGS/series.log cover=$SERIES_OUT/0000-cover-letter.patch
	rm -rf "$SERIES_OUT"; mkdir -p "$SERIES_OUT"
	if [ "$N" = 0 ]; then
		info "the series is empty (patches/series lists no patch): nothing to export"
		return 0
	fi
	# RFC while the base is 6.12.y: net-next patches must apply to net-next.
	T -c user.name="$NAME" -c user.email="$MAIL" format-patch -q --cover-letter \
		--subject-prefix='RFC PATCH net-next' -o "$SERIES_OUT" nta-base..nta \
		>>"$log" 2>&1 || fail_log "$log" "git format-patch failed"
	local body=$NTA_PATCHES/cover-letter.txt
	# @RESULTS@ in the body: the ratio summary of the newest make demo / make bench.
	local results
	results=$(ls -t "$NTA_OUT"/demo/summary.txt "$NTA_OUT"/bench/summary.txt 2>/dev/null | head -1)
	awk -v body="$body" -v results="$results" '
		/\*\*\* SUBJECT HERE \*\*\*/ { sub(/\*\*\* SUBJECT HERE \*\*\*/, "net: network tree allocator (NTA)") }
		/^\*\*\* BLURB HERE \*\*\*$/ {
			if ((getline line < body) > 0) {
				do {
					if (line != "@RESULTS@") print line
					else if (results == "") print "  (no results yet: run make demo)"
					else while ((getline r < results) > 0) print r
				} while ((getline line < body) > 0)
			} else print "(cover letter placeholder: write patches/cover-letter.txt)"
			next
		}
		{ print }' "$cover" >"$cover.new" && mv "$cover.new" "$cover"
	info "exported $N patches + cover letter to ${SERIES_OUT#$NTA_ROOT/}/"
}

# git am of out/series onto a pristine worktree of the base; same tree as nta?
verify() {
	need_tree
	local N=${1:-$(ls "$SERIES_OUT"/[0-9]*.patch 2>/dev/null | grep -vc 0000-cover-letter)}
	local log=$NTA_LOGS/am-verify.log
	if [ "$N" = 0 ]; then
		info "git am verification: empty series, nothing to apply"
		return 0
	fi
	: >"$log"
	if [ ! -e "$AMWT/.git" ]; then
		T worktree prune
		T worktree add -f --detach "$AMWT" nta-base >>"$log" 2>&1 || fail_log "$log" "git worktree add failed"
	fi
	git -C "$AMWT" am --abort >/dev/null 2>&1
	git -C "$AMWT" checkout -q -f --detach nta-base >>"$log" 2>&1 &&
	git -C "$AMWT" clean -q -f -d -x >>"$log" 2>&1 || fail_log "$log" "cannot reset $AMWT to nta-base"
	local patches=()
	mapfile -t patches < <(ls "$SERIES_OUT"/[0-9][0-9][0-9][0-9]-*.patch | grep -v '/0000-cover-letter.patch$')
	if ! git -C "$AMWT" -c user.name=nta-verify -c user.email=nta@localhost am --whitespace=nowarn \
		"${patches[@]}" >>"$log" 2>&1; then
		git -C "$AMWT" am --abort >/dev/null 2>&1
		fail_log "$log" "out/series/ does not apply with git am to a pristine base ($(T log -1 --format=%h nta-base))"
	fi
	[ "$(git -C "$AMWT" rev-parse 'HEAD^{tree}')" = "$(T rev-parse 'nta^{tree}')" ] ||
		die "git am of out/series/ gives a different tree than branch nta"
	info "git am verification: ${#patches[@]} patches apply to a pristine base, same tree as branch nta"
}

slug_from_subject() {
	local s=${1#net: nta: }
	s=$(echo "$s" | tr 'A-Z' 'a-z' | sed -e 's/[^a-z0-9]\+/-/g' -e 's/^-//' -e 's/-$//' | cut -c1-40)
	echo "${s%-}"
}

write_if_changed() {	# DEST (content on stdin)
	local tmp
	tmp=$(mktemp)
	cat >"$tmp"
	if [ -f "$1" ] && cmp -s "$tmp" "$1"; then rm -f "$tmp"; return 1; fi
	mkdir -p "$(dirname "$1")"
	mv "$tmp" "$1"; chmod 644 "$1"
	return 0
}

# unsign: a commit message on stdin without its last line if that is IDENT's sign-off.
unsign() {
	awk -v s="Signed-off-by: $IDENT" '{ l[NR] = $0 } END {
		n = NR; if (l[n] == s) { n--; while (n > 0 && l[n] == "") n-- }
		for (i = 1; i <= n; i++) print l[i] }'
}

cmd_refresh() {
	need_tree
	load_series
	T rev-parse -q --verify refs/heads/nta >/dev/null || die "no branch nta in $NTA_TREE: run 'make series' first"
	[ -z "$(T status --porcelain -uno | head -1)" ] ||
		die "$NTA_TREE has uncommitted changes: commit them on branch nta first (git -C $NTA_TREE commit)"
	T merge-base --is-ancestor nta-base nta || die "branch nta is not based on nta-base"
	local commits=() c k=0 s subj seen=" " newf changed=0
	mapfile -t commits < <(T rev-list --reverse --topo-order nta-base..nta)
	# The sign-off to drop and the identity to turn back into @AUTHOR@: the series'.
	IDENT=$(T log -1 --format='%an <%ae>' "${commits[0]:-nta}")
	for c in "${commits[@]}"; do
		[ "$(T rev-list --parents -n1 "$c" | wc -w)" = 2 ] || die "commit $c on nta is a merge; keep the branch linear"
	done
	# Old entries by slug, and old slugs by subject.
	declare -A oldfiles bysubj
	for ((k = 0; k < ${#slugs[@]}; k++)); do
		oldfiles[${slugs[k]}]=${nfiles[k]}
		[ -f "$NTA_PATCHES/${slugs[k]}.msg" ] && bysubj[$(head -1 "$NTA_PATCHES/${slugs[k]}.msg")]=${slugs[k]}
	done
	local newslugs=() newfiles=() W
	W=$(mktemp)	# a scratch index
	for c in "${commits[@]}"; do
		subj=$(T log -1 --format=%s "$c")
		s=$(T notes --ref=$NOTES show "$c" 2>/dev/null | head -1)
		[ -n "$s" ] || s=${bysubj[$subj]:-}
		[ -n "$s" ] || s=$(slug_from_subject "$subj")
		[ -n "$s" ] || s=patch
		case $seen in *" $s "*) s=$s-$((${#newslugs[@]} + 1)) ;; esac
		seen+="$s "
		mapfile -t newf < <(T diff-tree -r --no-commit-id --name-only --no-renames --diff-filter=A "$c^" "$c")
		# Keep the series' file order when the set is unchanged.
		if [ -n "${oldfiles[$s]+x}" ] &&
		   [ "$(tr ' ' '\n' <<<"${oldfiles[$s]}" | grep . | sort)" = "$(printf '%s\n' "${newf[@]}" | grep . | sort)" ]; then
			read -ra newf <<<"${oldfiles[$s]}"
		fi
		newslugs+=("$s"); newfiles+=("${newf[*]}")

		# Commit message, byte for byte, without the runner's sign-off.
		T cat-file commit "$c" | sed '1,/^$/d' | unsign | write_if_changed "$NTA_PATCHES/$s.msg" &&
			{ info "wrote patches/$s.msg"; changed=1; }
		# The rest of the commit's diff.
		local excl=(.) f dp=$NTA_PATCHES/$s.diff
		for f in "${newf[@]}"; do [ -n "$f" ] && excl+=(":(exclude)$f"); done
		if T diff --quiet "$c^" "$c" -- "${excl[@]}"; then
			[ -f "$dp" ] && { rm -f "$dp"; info "removed patches/$s.diff (no changes to existing files)"; changed=1; }
		elif [ -f "$dp" ] && GIT_INDEX_FILE=$W T read-tree "$c^" &&	# the old diff still says the same:
			with_author "$dp" | GIT_INDEX_FILE=$W T apply --cached --whitespace=nowarn 2>/dev/null &&
			GIT_INDEX_FILE=$W T diff-index --cached --quiet "$c" -- "${excl[@]}"; then
			:	# keep it as written
		else
			T -c core.abbrev=12 diff --no-color --no-ext-diff --no-renames "$c^" "$c" -- "${excl[@]}" |
				awk -v i="$IDENT" '{ while ((p = index($0, i)) > 0)
					$0 = substr($0, 1, p - 1) "@AUTHOR@" substr($0, p + length(i)); print }' >"$dp"
			info "wrote patches/$s.diff"; changed=1
		fi
		# New files: final content from the branch tip.
		for f in "${newf[@]}"; do
			[ -n "$f" ] || continue
			local mode
			mode=$(T ls-tree nta -- "$f" | cut -d' ' -f1)
			[ -n "$mode" ] || die "$f, added by '$s', is deleted later on branch nta; fold that into one patch"
			if T cat-file blob "nta:$f" | write_if_changed "$NTA_SRC/$f"; then
				info "wrote $f"; changed=1
			fi
			[ "$mode" = 100755 ] && chmod 755 "$NTA_SRC/$f"
			[ "$mode" = 100644 ] && chmod 644 "$NTA_SRC/$f"
		done
	done
	rm -f "$W"
	# The series file, rewritten only when the entries changed (comments kept).
	local old new
	old=$(series_entries)
	new=$(for ((k = 0; k < ${#newslugs[@]}; k++)); do echo "${newslugs[k]}${newfiles[k]:+ ${newfiles[k]}}"; done)
	if [ "$old" != "$new" ]; then
		{
			[ -f "$NTA_PATCHES/series" ] && awk '/^[[:space:]]*(#|$)/ { print; next } { exit }' "$NTA_PATCHES/series"
			[ -n "$new" ] && echo "$new"
		} | write_if_changed "$NTA_PATCHES/series"
		info "rewrote patches/series (${#newslugs[@]} patches)"; changed=1
	fi
	for s in "${slugs[@]}"; do
		case $seen in *" $s "*) ;; *) warn "patch '$s' is no longer on branch nta; patches/$s.* and its files are left in place" ;; esac
	done
	echo "refreshed $(T rev-parse nta)" >"$STAMP"
	[ $changed = 1 ] && info "refreshed the repository from branch nta (${#commits[@]} commits); review with git diff" ||
		info "repository already matches branch nta (${#commits[@]} commits)"
}

step_banner "${1:-series}: ${NTA_PATCHES#$NTA_ROOT/}/series <-> branch nta of ${NTA_TREE#$NTA_ROOT/}"
case ${1:-series} in
series) cmd_series ;;
refresh) cmd_refresh ;;
verify) verify ;;
cover) need_tree; load_series; identity; [ -d "$SERIES_OUT" ] && export_series ${#slugs[@]} ;;	# after make demo
*) die "usage: $0 series|refresh|verify|cover" ;;
esac
