#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make boot: a kernel + out/initramfs.cpio.gz in QEMU (TCG, 2 CPUs, 1 GiB),
# virtio-net on user networking (restrict=on: the guest reaches nothing
# outside), under a hard timeout.  No plan: an interactive shell; with one,
# the console in <outdir>/<name>.log, exit 0 once NTA-PLAN-DONE was seen.
# -N: two NUMA nodes, a CPU (of its own socket: the kernel refuses a cache
# shared across nodes) on each, and 1 GiB more that may be hot-added
# (maxmem=: the firmware's SRAT names the range, no memory is added).
# -M: two nodes, the second with a CPU and no memory.  -u: the guest's
# netconsole (UDP to 10.0.2.2:<ntanetcons=port>) lands in
# <outdir>/<name>.netconsole.txt.
# NTA_ICOUNT=1: -icount shift=0 (one guest instruction per ns of guest time,
# deterministic), told to the guest as ntaicount=1, and the TCG plugin of
# bench/icount/ (built into out/icount/) counting the bench's
# windows into <outdir>/<name>.icount.txt.  NTA_SMP=N: N CPUs, not 2.
#
# Console protocol (guest /init = scripts/nta-init, this runner on the host):
#   NTA-TEST-START <test>, the test's TAP lines (column 0) and NTA-METRIC <key> <value...>
#   (numbers for the demo's tables), NTA-TEST-END <test> <rc> (137: killed by the timeout).
#   NTA-HOST-IPERF 5201 <tcp|tcp-r> <secs>: the guest's `iperf3 -s -1 -p 5201`
#       wants a client: the runner runs `iperf3 -c` (tcp-r: -R) through the
#       hostfwd, output in <name>.host-<n>.txt, a TAP line in <name>.host.tap.
#   NTA-PLAN-DONE: every test ran; the guest dumps dmesg (NTA-DMESG-BEGIN/END).
. "$(dirname "$0")/nta-lib.sh"

FLAVOUR=${FLAVOUR:-perf}
kernel=$(nta_build_dir "$FLAVOUR")/arch/x86/boot/bzImage
initrd=$NTA_OUT/initramfs.cpio.gz
name=boot outdir=$NTA_OUT/boot tmo=900 plan= append= ucap= numa=() smp=${NTA_SMP:-2} mem=1G accel=(-accel tcg)
[ -n "${NTA_ICOUNT:-}" ] && accel=(-accel "tcg,thread=single" -icount "shift=0,sleep=off")
# A kernel with CONFIG_JUMP_LABEL (the bench kernel) patches its text at run
# time (text_poke_bp()); under multi-threaded TCG (QEMU 7.2) the bench
# kernel died of "Oops: int3" in __inet_hash_connect(), at its first
# net_get_random_once() key flip, in two make demo runs of two (not tried
# without the series).  Such kernels run on single-threaded TCG.
[ -z "${NTA_ICOUNT:-}" ] && grep -qx CONFIG_JUMP_LABEL=y "${kernel%/arch/*}/.config" 2>/dev/null &&
	accel=(-accel "tcg,thread=single")
while getopts n:d:t:p:a:uNM o; do
	case $o in
	n) name=$OPTARG ;; d) outdir=$OPTARG ;; t) tmo=$OPTARG ;; p) plan=$OPTARG ;; a) append=$OPTARG ;; u) ucap=1 ;;
	N) smp=2,sockets=2,cores=1,threads=1 mem=1G,slots=2,maxmem=2G numa=(-object memory-backend-ram,id=m0,size=512M -object memory-backend-ram,id=m1,size=512M
		 -numa node,nodeid=0,cpus=0,memdev=m0 -numa node,nodeid=1,cpus=1,memdev=m1) ;;
	M) smp=2,sockets=2,cores=1,threads=1 numa=(-object memory-backend-ram,id=m0,size=1G
		 -numa node,nodeid=0,cpus=0,memdev=m0 -numa node,nodeid=1,cpus=1) ;;
	*) die "usage: $0 [-n name] [-d outdir] [-t seconds] [-p plan] [-a append] [-u] [-N] [-M]" ;;
	esac
done
mkdir -p "$outdir"
step_banner "boot: ${kernel#$NTA_ROOT/}"
if [ -n "${NTA_ICOUNT:-}" ]; then
	src=$NTA_ROOT/bench/icount plug=$NTA_OUT/icount/nta_icount.so
	[ "$plug" -nt "$src/nta_icount.c" ] && [ "$plug" -nt "$src/qemu_plugin.h" ] ||
		{ mkdir -p "${plug%/*}" && gcc -shared -fPIC -O2 -fvisibility=hidden -Wall -Wextra -Werror \
			-o "$plug" "$src/nta_icount.c"; } || die "building the TCG plugin $plug failed"
	rm -f "$outdir/$name.icount.txt"
	accel+=(-plugin "file=$plug" -d plugin -D "$outdir/$name.icount.txt")
fi

# free_port tcp|udp: a port of 127.0.0.1 the kernel picks as free.
free_port() {
	python3 -c 'import socket, sys; s = socket.socket(type=getattr(socket, sys.argv[1]))
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])' "$1"
}
hport=$(free_port SOCK_STREAM) restrict=on
if [ -n "$ucap" ]; then
	restrict=off uport=$(free_port SOCK_DGRAM)
	append="$append ntanetcons=$uport"
fi

qemu=(qemu-system-x86_64 "${accel[@]}" -smp $smp -m $mem "${numa[@]}" -no-reboot -nographic
	-kernel "$kernel" -initrd "$initrd"
	-netdev "user,id=n0,restrict=$restrict,hostfwd=tcp:127.0.0.1:$hport-:5201"
	-device virtio-net-pci,netdev=n0)
cmd="console=ttyS0 panic=-1 oops=panic${plan:+ ntaplan=$plan}${NTA_ICOUNT:+ ntaicount=1} $append"

if [ -z "$plan" ]; then
	info "interactive boot of ${kernel#$NTA_ROOT/} (host port $hport -> guest 5201); Ctrl-A X quits"
	exec timeout --foreground "$tmo" "${qemu[@]}" -append "$cmd"
fi

log=$outdir/$name.log
htap=$outdir/$name.host.tap
rm -f "$log" "$htap" "$outdir/$name".host-*.txt
info "booting ${kernel#$NTA_ROOT/} (plan: $plan; console: ${log#$NTA_ROOT/}; timeout ${tmo}s)"
t0=$SECONDS

# The watcher: reads the console line by line, shows progress, serves iperf.
watch_console() {
	local line n=0 tstart=$SECONDS proto secs hl
	while IFS= read -r line; do
		line=${line%$'\r'}
		printf '%s\n' "$line" >>"$log"
		case $line in
		NTA-TEST-START\ *) tstart=$SECONDS ;;
		NTA-TEST-END\ *)
			set -- $line
			info "  $(printf '%-24s' "$2") rc=$3 ($((SECONDS - tstart))s, at $(nta_elapsed))" ;;
		*"Run /init as init process"*)
			[ -z "${booted:-}" ] && booted=1 && info "  kernel booted to /init in $((SECONDS - t0))s" ;;
		NTA-HOST-IPERF\ *)
			read -r _ _ proto secs <<<"$line"
			n=$((n + 1)) secs=${secs:-3} hl=$outdir/$name.host-$n.txt
			( r="ok - host iperf3 client ($proto, ${secs}s) to the guest via hostfwd"
			  iperf3 -c 127.0.0.1 -p "$hport" -t "$secs" --connect-timeout 10000 \
				$([ "$proto" = tcp-r ] && echo -R) >"$hl" 2>&1 ||
				r="not ok - host iperf3 client ($proto) to the guest failed (see $hl)"
			  echo "$r" >>"$htap" ) &
			;;
		esac
	done
	wait
}

# -u: what the guest's netconsole sends, one datagram after the other.
if [ -n "$ucap" ]; then
	python3 -c 'import socket, sys; s = socket.socket(type=socket.SOCK_DGRAM); s.bind(("127.0.0.1", int(sys.argv[1])))
f = open(sys.argv[2], "wb", 0)
while True: f.write(s.recv(65535))' "$uport" "$outdir/$name.netconsole.txt" &
	upid=$!
fi
timeout -k 10 "$tmo" "${qemu[@]}" -append "$cmd" </dev/null 2>&1 | watch_console
rc=${PIPESTATUS[0]}
[ -n "$ucap" ] && kill "$upid" 2>/dev/null
grep -q '^NTA-PLAN-DONE' "$log" && { info "plan done in $((SECONDS - t0))s"; exit 0; }
[ "$rc" = 124 ] && fail_log "$log" "boot '$name' hit the ${tmo}s timeout"
fail_log "$log" "boot '$name' ended (qemu rc=$rc) before the plan finished"
