# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared helpers for the NTA tooling scripts.  Sourced, not executed.
#
# Every step prints a one-line banner with the elapsed time of the whole run
# (NTA_T0 is inherited from the first script that sources this file), sends
# its full output to out/logs/<step>.log, and on failure names that log and
# prints its last 20 lines.

set -o pipefail

NTA_ROOT=${NTA_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
NTA_OUT=${NTA_OUT:-$NTA_ROOT/out}
NTA_LOGS=$NTA_OUT/logs
NTA_TREE=${NTA_TREE:-$NTA_OUT/tree}
# Where the series description lives; NTA_PATCHES may point at a scratch copy.
NTA_PATCHES=${NTA_PATCHES:-$NTA_ROOT/patches}
# Directory whose kernel-path files the series adds (the repo itself by default).
NTA_SRC=${NTA_SRC:-$NTA_ROOT}
export NTA_ROOT NTA_OUT NTA_TREE NTA_PATCHES NTA_SRC
: "${NTA_T0:=$(date +%s)}"
export NTA_T0
mkdir -p "$NTA_LOGS"

nta_elapsed() {
	local s=$(( $(date +%s) - NTA_T0 ))
	printf '%dm%02ds' $((s / 60)) $((s % 60))
}

# banner TEXT: one line, elapsed time of the whole run in front.
banner() { printf '==> [%s] %s\n' "$(nta_elapsed)" "$*"; }
info() { printf '    %s\n' "$*"; }
warn() { printf '    warning: %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

# fail_log LOG MSG: report a failed step with the tail of its log, then exit.
fail_log() {
	local log=$1; shift
	printf 'error: %s\n' "$*" >&2
	if [ -f "$log" ]; then
		printf '    full log: %s; last 20 lines:\n' "$log" >&2
		tail -n 20 "$log" | sed 's/^/    | /' >&2
	fi
	exit 1
}

# run_logged NAME CMD...: run CMD with all output in out/logs/NAME.log.
run_logged() {
	local name=$1; shift
	local log=$NTA_LOGS/$name.log
	if ! "$@" >"$log" 2>&1; then
		fail_log "$log" "step '$name' failed: $*"
	fi
}

# Parse patches/series: prints "slug file..." lines, comments and blanks removed.
series_entries() {
	local f=$NTA_PATCHES/series
	[ -f "$f" ] || return 0
	sed -e 's/#.*//' -e 's/[[:space:]]\+/ /g' -e 's/^ //' -e 's/ $//' "$f" | grep -v '^$' || true
}

# The base commit of out/tree.
nta_base() { git -C "$NTA_TREE" rev-parse -q --verify 'refs/tags/nta-base^{commit}'; }

nproc_jobs() { nproc 2>/dev/null || echo 2; }

# The banner a script prints for itself, unless make check's step() already did.
step_banner() { [ -n "${NTA_NO_BANNER:-}" ] || banner "$@"; }

# nta_kmake BUILD-DIR [SOURCE-DIR]: the kernel make command for an
# out-of-tree build, in the array kmake (with ccache when present: paths
# below out/ are hashed relative, so another clone hits the cache).
nta_kmake() {
	export ARCH=x86_64 KBUILD_BUILD_USER=nta KBUILD_BUILD_HOST=nta \
		KBUILD_BUILD_TIMESTAMP="${KBUILD_BUILD_TIMESTAMP:-Thu Jan  1 00:00:00 UTC 2025}"
	kmake=(make -C "${2:-$NTA_TREE}" O="$1" -j"$(nproc_jobs)")
	if command -v ccache >/dev/null 2>&1; then
		export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$NTA_OUT} CCACHE_NOHASHDIR=1
		kmake+=(CC="ccache gcc")
	fi
}
