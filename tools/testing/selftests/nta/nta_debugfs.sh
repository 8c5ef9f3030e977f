#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# nta_debugfs.sh - every readable file of debugfs nta/ reads cleanly
#
# Each file but the *_test ones, which act, is read as a user would (a
# splat it causes shows on the console), then nta/check checks every
# CPU's pool (SKIP without it: CONFIG_NTA_DEBUG).  SKIP without NTA's
# debugfs directory.

. "$(dirname "$0")/nta_lib.sh"

[ -d "$NTA_DBG" ] || tap_skip_all debugfs "no $NTA_DBG"

nta_init 2
nf=0 bad="" read=""
for f in "$NTA_DBG"/*; do
	# *_test files act when read (usercopy_test copies out an skb).
	case ${f##*/} in *_test) continue ;; esac
	case $(ls -l "$f") in -r*) ;; *) continue ;; esac
	nf=$((nf + 1)) read="$read ${f##*/}"
	cat "$f" >/dev/null 2>&1 || bad="$bad ${f##*/}"
done
tap_note "debugfs: the $nf readable files of nta/:$read"
[ "$nf" -gt 0 ] && [ -z "$bad" ]
tap_check debugfs_files_read $? "failed:${bad:- none found}"
nta_pools_check debugfs
nta_done
