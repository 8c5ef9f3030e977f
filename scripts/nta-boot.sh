#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make boot: boot a kernel + out/initramfs.cpio.gz in QEMU (TCG, 2 CPUs, 1 GiB)
# with virtio-net on user networking (restrict=on: the guest reaches nothing
# outside; hostfwd binds 127.0.0.1 only), under a hard timeout.
#
#   scripts/nta-boot.sh [-k bzImage] [-n name] [-d outdir] [-t seconds] [-p plan] [-a append] [-u] [-N] [-I]
#
# -N: two NUMA nodes of 512 MiB, CPU 0 on node 0 and CPU 1 on node 1, each
#     CPU its own socket (cores of one socket share a cache, which the
#     kernel refuses across nodes with a WARNING).
# -I: deterministic instruction counting (one TCG thread, -icount
#     shift=0,sleep=off): a guest nanosecond is one guest instruction.
#     For experiments: the microbenchmark ran out of memory 5 s into its
#     run under it (~950 MiB outside every counter, likely NTA blocks
#     waiting for their RCU grace period; not investigated yet).
# -u: netconsole.  The guest may send UDP to 10.0.2.2:<port>, which user
# networking hands to 127.0.0.1:<port> here (restrict=off for this boot, so
# that its UDP gets out at all); what arrives is written to
# <outdir>/<name>.netconsole.txt, and ntanetcons=<port> is on the command
# line for the guest.
#
# Without a plan: an interactive shell on the serial console (Ctrl-A X quits).
# With a plan: the console goes to <outdir>/<name>.log and is watched.
#
# Console protocol (guest /init = scripts/nta-init, this runner on the host):
#   NTA-TEST-START <test>             a test of the plan starts
#   ok/not ok ... (column 0)          the test's own TAP lines
#   NTA-METRIC <key> <value...>       a number for tables (demo, benchmarks)
#   NTA-TEST-END <test> <rc>          the test exited with rc (137: killed by timeout)
#   NTA-HOST-IPERF <gport> <tcp|tcp-r> <secs>
#       the guest started `iperf3 -s -1 -p <gport>` and asks the host for a
#       client.  The runner maps <gport> (5201 only) to its hostfwd port and
#       runs `iperf3 -c 127.0.0.1 -p <hostport> -t <secs>` in the background
#       (tcp-r adds -R: the guest sends), output
#       in <outdir>/<name>.host-<n>.txt.  The guest test asserts its server
#       moved data; the runner adds one TAP line per client run to
#       <outdir>/<name>.host.tap.
#   NTA-PLAN-DONE                     every test ran; the guest then dumps
#                                     dmesg (NTA-DMESG-BEGIN/END) and powers off
# Exit status: 0 when NTA-PLAN-DONE was seen, 1 otherwise (crash, timeout).
. "$(dirname "$0")/nta-lib.sh"

FLAVOUR=${FLAVOUR:-perf}
kernel=$NTA_OUT/build-$FLAVOUR/arch/x86/boot/bzImage
initrd=$NTA_OUT/initramfs.cpio.gz
name=boot outdir=$NTA_OUT/boot tmo=900 plan=${NTAPLAN:-} append= ucap= numa=()
accel=(-accel tcg) smp=2
while getopts k:i:n:d:t:p:a:uNI o; do
	case $o in
	k) kernel=$OPTARG ;; i) initrd=$OPTARG ;; n) name=$OPTARG ;; d) outdir=$OPTARG ;;
	t) tmo=$OPTARG ;; p) plan=$OPTARG ;; a) append=$OPTARG ;; u) ucap=1 ;;
	N) smp=2,sockets=2,cores=1,threads=1 numa=(-object memory-backend-ram,id=m0,size=512M -object memory-backend-ram,id=m1,size=512M
		 -numa node,nodeid=0,cpus=0,memdev=m0 -numa node,nodeid=1,cpus=1,memdev=m1) ;;
	I) accel=(-accel tcg,thread=single -icount shift=0,sleep=off) ;;
	*) die "usage: $0 [-k bzImage] [-i initrd] [-n name] [-d outdir] [-t seconds] [-p plan] [-a append] [-u] [-N] [-I]" ;;
	esac
done
[ -f "$kernel" ] || die "no kernel $kernel: run 'make kernel FLAVOUR=$FLAVOUR'"
[ -f "$initrd" ] || die "no initramfs $initrd: run 'make initramfs'"
command -v qemu-system-x86_64 >/dev/null || die "qemu-system-x86_64 missing (scripts/nta-deps.sh installs it)"
mkdir -p "$outdir"
step_banner "boot: ${kernel#$NTA_ROOT/}"

# A free TCP port on 127.0.0.1.
free_port() {
	local p used
	used=$(ss -Htan 2>/dev/null | awk '{print $5}' | sed -n 's/.*:\([0-9]\+\)$/\1/p' | sort -u)
	for _ in $(seq 200); do
		p=$((20000 + RANDOM % 30000))
		grep -qx "$p" <<<"$used" || { echo $p; return; }
	done
	die "no free port found"
}
hport=$(free_port)
restrict=on
if [ -n "$ucap" ]; then
	restrict=off uport=$(free_port)
	append="$append ntanetcons=$uport"
fi

qemu=(qemu-system-x86_64 "${accel[@]}" -smp $smp -m 1G "${numa[@]}" -no-reboot -nographic
	-kernel "$kernel" -initrd "$initrd"
	-netdev "user,id=n0,restrict=$restrict,hostfwd=tcp:127.0.0.1:$hport-:5201"
	-device virtio-net-pci,netdev=n0)
cmd="console=ttyS0 panic=-1 oops=panic${plan:+ ntaplan=$plan} $append"

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
	local line n=0 t tstart=$SECONDS gp proto secs hl
	while IFS= read -r line; do
		line=${line%$'\r'}
		printf '%s\n' "$line" >>"$log"
		case $line in
		NTA-TEST-START\ *)
			tstart=$SECONDS ;;
		NTA-TEST-END\ *)
			set -- $line
			info "  $(printf '%-24s' "$2") rc=$3 ($((SECONDS - tstart))s, at $(nta_elapsed))" ;;
		*"Run /init as init process"*)
			[ -n "${booted:-}" ] && continue
			booted=1
			info "  kernel booted to /init in $((SECONDS - t0))s" ;;
		NTA-HOST-IPERF\ *)
			set -- $line
			gp=$2 proto=$3 secs=${4:-3}
			n=$((n + 1)); hl=$outdir/$name.host-$n.txt
			if [ "$gp" != 5201 ]; then
				echo "not ok - host iperf3 client $n: guest port $gp has no hostfwd (only 5201)" >>"$htap"
				continue
			fi
			(
				r=; [ "$proto" = tcp-r ] && r=-R
				if iperf3 -c 127.0.0.1 -p "$hport" -t "$secs" --connect-timeout 10000 $r >"$hl" 2>&1; then
					echo "ok - host iperf3 client ($proto, ${secs}s) to guest via hostfwd 127.0.0.1:$hport" >>"$htap"
				else
					echo "not ok - host iperf3 client ($proto) to guest via 127.0.0.1:$hport failed (see $hl)" >>"$htap"
				fi
			) &
			;;
		esac
	done
	wait
}

# -u: what the guest's netconsole sends, one datagram after the other.
if [ -n "$ucap" ]; then
	: >"$outdir/$name.netconsole.txt"
	python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("127.0.0.1", int(sys.argv[1])))
with open(sys.argv[2], "ab", 0) as f:
    while True:
        f.write(s.recv(65535))
' "$uport" "$outdir/$name.netconsole.txt" &
	upid=$!
fi
timeout -k 10 "$tmo" "${qemu[@]}" -append "$cmd" </dev/null 2>&1 | watch_console
rc=${PIPESTATUS[0]}
[ -n "$ucap" ] && kill "$upid" 2>/dev/null
if grep -q '^NTA-PLAN-DONE' "$log"; then
	info "plan done in $((SECONDS - t0))s"
	exit 0
fi
[ "$rc" = 124 ] && echo "error: boot '$name' hit the ${tmo}s timeout" >&2 ||
	echo "error: boot '$name' ended (qemu rc=$rc) before the plan finished" >&2
echo "    console: $log; last 20 lines:" >&2
tail -n 20 "$log" | sed 's/^/    | /' >&2
exit 1
