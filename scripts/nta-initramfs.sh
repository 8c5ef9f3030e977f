#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make initramfs: out/initramfs.cpio.gz with busybox-static, iperf3 (and wrk)
# with the shared libraries they need, the selftests (tools/testing/selftests/nta,
# built and installed into /nta), and scripts/nta-init as /init.  Writes out/initramfs/tests.txt: the selftests'
# test names (kselftest emit_tests), used by make check as the guest plan.
. "$(dirname "$0")/nta-lib.sh"

R=$NTA_OUT/initramfs/root
OUTF=$NTA_OUT/initramfs.cpio.gz
LIST=$NTA_OUT/initramfs/tests.txt
log=$NTA_LOGS/initramfs.log
step_banner "initramfs"
: >"$log"
rm -rf "$R"; mkdir -p "$R"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,root,etc,nta}
: >"$LIST"

bb=$(command -v busybox || true)
[ -n "$bb" ] && file -L "$bb" | grep -q 'statically linked' ||
	die "a static busybox is needed (package busybox-static; scripts/nta-deps.sh installs it)"
cp "$bb" "$R/bin/busybox"
for a in $("$R/bin/busybox" --list-full); do
	[ -e "$R/$a" ] || ln -s /bin/busybox "$R/$a"
done

# BIN: the binary as /usr/bin/BIN (wherever PATH found it, a symlink farm
# included) and every shared library ldd lists, at the same paths.
add_bin() {
	local b lib
	b=$(command -v "$1") || return 1
	b=$(readlink -f "$b")
	mkdir -p "$R/usr/bin"
	cp -L "$b" "$R/usr/bin/$1"
	for lib in $(ldd "$b" 2>/dev/null | grep -oE '/[^ ]+'); do
		[ -e "$R$lib" ] && continue
		mkdir -p "$R$(dirname "$lib")"
		cp -L "$lib" "$R$lib"
	done
}
add_bin iperf3 || die "iperf3 is missing (scripts/nta-deps.sh installs it)"
add_bin wrk || true
echo "root:x:0:0:root:/root:/bin/sh" >"$R/etc/passwd"
echo "root:x:0:" >"$R/etc/group"
printf '127.0.0.1 localhost\n10.0.2.2 host\n' >"$R/etc/hosts"

# Selftests: from the assembled tree when the series has them (kselftest's
# lib.mk is there), else the repository's copy placed in the tree.
# An untracked copy there is refreshed from the repository on every run.
sdir=$NTA_TREE/tools/testing/selftests/nta
if ! git -C "$NTA_TREE" ls-files --error-unmatch tools/testing/selftests/nta/Makefile >/dev/null 2>&1 &&
   [ -f "$NTA_ROOT/tools/testing/selftests/nta/Makefile" ]; then
	info "selftests not in the series yet: building the repository's copy inside ${NTA_TREE#$NTA_ROOT/}"
	rm -rf "$sdir"
	mkdir -p "$sdir"
	cp -a "$NTA_ROOT/tools/testing/selftests/nta/." "$sdir/"
fi
if [ -f "$sdir/Makefile" ]; then
	sb=$NTA_OUT/selftests-build
	mkdir -p "$sb"
	slog=$NTA_LOGS/selftests-build.log
	info "building selftests in ${sdir#$NTA_ROOT/} (log: $slog)"
	make -C "$sdir" OUTPUT="$sb" -j"$(nproc_jobs)" >"$slog" 2>&1 &&
	make -C "$sdir" OUTPUT="$sb" INSTALL_PATH="$R/nta" install >>"$slog" 2>&1 ||
		fail_log "$slog" "building the selftests failed"
	make -s -C "$sdir" OUTPUT="$sb" emit_tests 2>>"$slog" | sed -n 's/^[^:]*://p' >"$LIST"
	[ -s "$LIST" ] || warn "the selftests Makefile lists no tests (emit_tests)"
	for t in $(cat "$LIST"); do
		[ -x "$R/nta/$t" ] || die "selftest $t is listed but not installed as an executable in /nta"
	done
	# nta_lib.sh sources ../kselftest/ktap_helpers.sh.
	install -D -m 644 "$NTA_TREE/tools/testing/selftests/kselftest/ktap_helpers.sh" "$R/kselftest/ktap_helpers.sh"
	info "selftests: $(wc -w <"$LIST") tests: $(tr '\n' ' ' <"$LIST")"
fi

install -m 755 "$NTA_ROOT/scripts/nta-init" "$R/init"
(cd "$R" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc -R 0:0 2>>"$log" | gzip -1 >"$OUTF") ||
	fail_log "$log" "cpio failed"
info "initramfs: ${OUTF#$NTA_ROOT/} ($(du -h "$OUTF" | cut -f1))"
