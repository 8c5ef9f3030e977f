#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make initramfs: busybox, iperf3, wrk, the selftests of out/tree in /nta and
# scripts/nta-init as /init; the selftests' names in out/initramfs/tests.txt.
. "$(dirname "$0")/nta-lib.sh"

R=$NTA_OUT/initramfs/root OUTF=$NTA_OUT/initramfs.cpio.gz LIST=$NTA_OUT/initramfs/tests.txt
step_banner "initramfs"
rm -rf "$R"; mkdir -p "$R"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,root,etc,nta}

bb=$(command -v busybox) && file -L "$bb" | grep -q 'statically linked' ||
	die "a static busybox is needed (package busybox-static; scripts/nta-deps.sh installs it)"
cp "$bb" "$R/bin/busybox"
for a in $("$R/bin/busybox" --list-full); do
	[ -e "$R/$a" ] || ln -s /bin/busybox "$R/$a"
done

# add_bin BIN: BIN as /usr/bin/BIN, and every shared library ldd lists at its path.
add_bin() {
	local b lib
	b=$(readlink -f "$(command -v "$1")") || return 1
	cp "$b" "$R/usr/bin/$1"
	for lib in $(ldd "$b" | grep -oE '/[^ ]+'); do
		mkdir -p "$R$(dirname "$lib")"
		cp -L "$lib" "$R$lib"
	done
}
add_bin iperf3 || die "iperf3 is missing (scripts/nta-deps.sh installs it)"
add_bin wrk || true
echo "root:x:0:0:root:/root:/bin/sh" >"$R/etc/passwd"
echo "root:x:0:" >"$R/etc/group"
printf '127.0.0.1 localhost\n10.0.2.2 host\n' >"$R/etc/hosts"

sdir=$NTA_TREE/tools/testing/selftests/nta sb=$NTA_OUT/selftests-build slog=$NTA_LOGS/selftests-build.log
mkdir -p "$sb"
info "building selftests in ${sdir#$NTA_ROOT/} (log: $slog)"
{ make -C "$sdir" OUTPUT="$sb" -j"$(nproc)" && make -C "$sdir" OUTPUT="$sb" INSTALL_PATH="$R/nta" install; } >"$slog" 2>&1 ||
	fail_log "$slog" "building the selftests failed"
make -s -C "$sdir" OUTPUT="$sb" emit_tests 2>>"$slog" | sed -n 's/^[^:]*://p' >"$LIST"
[ -s "$LIST" ] || warn "the selftests Makefile lists no tests (emit_tests)"
# nta_lib.sh sources ../kselftest/ktap_helpers.sh.
install -D -m 644 "$NTA_TREE/tools/testing/selftests/kselftest/ktap_helpers.sh" "$R/kselftest/ktap_helpers.sh"
info "selftests: $(wc -w <"$LIST") tests: $(tr '\n' ' ' <"$LIST")"

# make demo's backlog benchmark, bench/nta_backlog.c: test apparatus, not in the series.
gcc -O2 -static -o "$R/nta/nta_backlog" "$NTA_ROOT/bench/nta_backlog.c" >>"$slog" 2>&1 ||
	fail_log "$slog" "building bench/nta_backlog.c failed"
install -m 755 "$NTA_ROOT/scripts/nta-init" "$R/init"
log=$NTA_LOGS/initramfs.log
(cd "$R" && find . -print0 | LC_ALL=C sort -z | cpio --null -o -H newc -R 0:0 2>"$log" | gzip -1 >"$OUTF") ||
	fail_log "$log" "cpio failed"
info "initramfs: ${OUTF#$NTA_ROOT/} ($(du -h "$OUTF" | cut -f1))"
