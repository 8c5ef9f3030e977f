# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
# Shared helpers for the NTA tooling scripts.  Sourced, not executed.

set -o pipefail

NTA_ROOT=${NTA_ROOT:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}
NTA_OUT=${NTA_OUT:-$NTA_ROOT/out}
NTA_LOGS=$NTA_OUT/logs
NTA_TREE=${NTA_TREE:-$NTA_OUT/tree}
: "${NTA_T0:=$(date +%s)}"
export NTA_ROOT NTA_OUT NTA_TREE NTA_T0
mkdir -p "$NTA_LOGS"

nta_elapsed() { local s=$(($(date +%s) - NTA_T0)); printf '%dm%02ds' $((s / 60)) $((s % 60)); }

banner() { printf '==> [%s] %s\n' "$(nta_elapsed)" "$*"; }
# The banner a script prints for itself, unless make check's step() already did.
step_banner() { [ -n "${NTA_NO_BANNER:-}" ] || banner "$@"; }
info() { printf '    %s\n' "$*"; }
warn() { printf '    warning: %s\n' "$*" >&2; }
die() { printf 'error: %s\n' "$*" >&2; exit 1; }

log_tail() { printf '    full log: %s; last 20 lines:\n' "$1"; tail -n 20 "$1" | sed 's/^/    | /'; }
# fail_log LOG MSG: report a failed step with the tail of its log, then exit.
fail_log() {
	printf 'error: %s\n' "${*:2}" >&2
	[ -f "$1" ] && log_tail "$1" >&2
	exit 1
}

T() { git -C "$NTA_TREE" "$@"; }
nta_base() { T rev-parse -q --verify 'refs/tags/nta-base^{commit}'; }

# The benchmark kernels (bench/README.md): branch nta-bench of out/tree (nta
# + one commit made from bench/) checked out in out/nta-bench/tree, built in
# out/nta-bench/build-perf and build-uml.  A build dir is a sibling of a tree/,
# as out/build-* are: with CCACHE_BASEDIR, ccache sees the same relative paths
# and serves the objects that builds of the series compiled.
NTA_BENCH_OUT=$NTA_OUT/nta-bench
# make check's initfail kernel (check/README.md): the debug config on branch
# nta-check (nta + the fault injection of check/), in out/nta-check/.
NTA_CHECK_OUT=$NTA_OUT/nta-check
# nta_build_dir FLAVOUR: where make kernel FLAVOUR=... builds.
nta_build_dir() {
	case $1 in
	bench) echo "$NTA_BENCH_OUT/build-perf" ;;
	inject) echo "$NTA_CHECK_OUT/build-debug" ;;
	*) echo "$NTA_OUT/build-$1" ;;
	esac
}

# nta_kmake BUILD-DIR [SOURCE-DIR]: the array kmake, make for an out-of-tree build
# (with ccache: paths below out/ are hashed relative, so another clone hits the cache).
nta_kmake() {
	export ARCH=x86_64 KBUILD_BUILD_USER=nta KBUILD_BUILD_HOST=nta \
		KBUILD_BUILD_TIMESTAMP="${KBUILD_BUILD_TIMESTAMP:-Thu Jan  1 00:00:00 UTC 2025}"
	kmake=(make -C "${2:-$NTA_TREE}" O="$1" -j"$(nproc)")
	if command -v ccache >/dev/null 2>&1; then
		export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$NTA_OUT} CCACHE_NOHASHDIR=1
		kmake+=(CC="ccache gcc")
	fi
}

# nta_config BUILD-DIR LOG BASE FRAGMENT...: make BASE ("": Kconfig's defaults)
# and the fragments merged by merge_config.sh; fails when a fragment option did
# not take ("is not set" is also met by a symbol absent from .config), unless
# NTA_CONFIG_LAX is set (check-bisect: early prefixes lack NTA's symbols).
nta_config() {
	local b=$1 log=$2 base=$3 s bad=(); shift 3
	: >"$b/.config"
	{ [ -z "$base" ] || "${kmake[@]}" "$base"; } >"$log" 2>&1 &&
	(cd "$NTA_TREE" && scripts/kconfig/merge_config.sh -O "$b" "$b/.config" "$@") >>"$log" 2>&1 ||
		fail_log "$log" "configuring $b failed"
	for s in $(sed -n 's/^Value requested for \(CONFIG_[A-Za-z0-9_]*\) not in final .config$/\1/p' "$log"); do
		grep -qx "$s=.*" "$@" || { grep -qx "# $s is not set" "$@" && grep -q "^$s=" "$b/.config"; } && bad+=("$s")
	done
	[ ${#bad[@]} = 0 ] || [ -n "${NTA_CONFIG_LAX:-}" ] ||
		fail_log "$log" "config options dropped (see 'Value requested' in the log):" "${bad[@]}"
	info "config: every fragment option is in ${b#$NTA_ROOT/}/.config"
}

nta_objs() { grep -cE '^ +(CC|AS) ' "$1"; }	# LOG: objects compiled

# nta_build LABEL LOG TARGET...: the kernel make in the background, the
# count of objects compiled every 15 s.
nta_build() {
	local label=$1 log=$2 pid; shift 2
	"${kmake[@]}" "$@" >"$log" 2>&1 &
	pid=$!
	while ! timeout 15 tail --pid=$pid -f /dev/null; do
		info "[$label] $(nta_objs "$log") objects compiled ($(nta_elapsed))"
	done
	wait $pid
}

# touched_warnings LOG [REV]: compiler warnings in files the series (up to
# REV, default nta; nta-bench for the benchmark kernels) adds or changes.
touched_warnings() {
	grep -E 'warning:' "$1" | grep -F -f <(T diff --name-only nta-base "${2:-nta}" | grep . || echo /nonexistent/)
}
