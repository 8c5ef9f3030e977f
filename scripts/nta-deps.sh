#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The Debian packages the tooling needs, installed when missing (a non-root
# user gets the command).
. "$(dirname "$0")/nta-lib.sh"

pkgs=(
	gcc make libc6-dev git perl xz-utils	# toolchain, git
	python3 python3-ply python3-git		# checkpatch (spdxcheck.py)
	flex bison bc libelf-dev libssl-dev cpio dwarves ccache	# kernel build
	qemu-system-x86 busybox-static iperf3 rsync	# guest, its tests (kselftest install)
	wrk gnuplot-nox				# demo / benchmark
)
# The embedded base tree; a user's own tree (KERNEL_SRC) does not need it.
[ -n "${KERNEL_SRC:-}" ] || pkgs+=(linux-source-6.12)

missing=()
for p in "${pkgs[@]}"; do
	[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
done
[ ${#missing[@]} = 0 ] && { info "all ${#pkgs[@]} packages present"; exit 0; }
[ "$(id -u)" = 0 ] || die "these Debian packages are missing and installing them needs root:" \
	"${missing[*]}; run: sudo apt-get update && sudo apt-get install -y ${missing[*]}"
info "installing: ${missing[*]}"
log=$NTA_LOGS/deps.log
export DEBIAN_FRONTEND=noninteractive
{ apt-get update && apt-get install -y --no-install-recommends "${missing[@]}"; } >"$log" 2>&1 ||
	fail_log "$log" "apt-get install failed"
info "installed ${#missing[@]} packages (log: $log)"
