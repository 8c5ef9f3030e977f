#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# make bench-uml (README.md): the in-kernel microbenchmark under User-Mode
# Linux, built on branch nta-bench (the series + bench/, in out/nta-bench/tree)
# from the fragment below and bench/config plus Kconfig defaults (as kunit.py
# does).  NTA_UML_MEM: the 10^5-live FIFO row needs about 1.5G at full
# depth; with less the bench shortens it and says so.
. "$(dirname "$0")/nta-lib.sh"

D=$NTA_OUT/bench-uml B=$NTA_BENCH_OUT/build-uml
scale=${NTA_BENCH_SCALE:-10} rounds=${NTA_BENCH_ROUNDS:-11} mem=${NTA_UML_MEM:-2G}
mkdir -p "$D" "$B"

"$NTA_ROOT/scripts/nta-series.sh" bench || exit 1
NTA_TREE=$NTA_BENCH_OUT/tree
banner "bench-uml: UML kernel (${B#$NTA_ROOT/})"
nta_kmake "$B"
export ARCH=um SUBARCH=x86_64
frag=$D/uml.config
printf 'CONFIG_%s\n' NET=y INET=y UNIX=y NET_NTA=y NTA_KMALLOC_MODEL=y DEBUG_FS=y HOSTFS=y \
	PROC_FS=y SYSFS=y BINFMT_ELF=y BINFMT_SCRIPT=y MAGIC_SYSRQ=y NULL_CHAN=y PRINTK=y SLUB=y \
	CC_OPTIMIZE_FOR_PERFORMANCE=y >"$frag"
printf '# CONFIG_%s is not set\n' SLUB_TINY CC_OPTIMIZE_FOR_SIZE NTA_DEBUG KUNIT >>"$frag"
# UML has no jump labels and no virtual memmap: those two lines of
# bench/config are for the x86 benchmark kernel only.
grep -v -e '^CONFIG_JUMP_LABEL=' -e '^CONFIG_SPARSEMEM_VMEMMAP=' "$NTA_ROOT/bench/config" >>"$frag"
log=$NTA_LOGS/bench-uml-config.log
nta_config "$B" "$log" "" "$frag"

log=$NTA_LOGS/bench-uml-build.log
info "building ${B#$NTA_ROOT/}/linux (log: ${log#$NTA_ROOT/})"
nta_build uml "$log" linux || fail_log "$log" "UML build failed"

# The guest's init: the host's own /bin/sh and tools, seen through hostfs.
init=$D/init
cat >"$init" <<EOS
#!/bin/sh
PATH=/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc && mount -t sysfs sysfs /sys && mount -t debugfs debugfs /sys/kernel/debug
b=/sys/kernel/debug/nta
echo "NTA-BENCH-BEGIN"
echo "uml: mem=$mem, bench_scale $scale, bench_rounds $rounds"
echo $scale >\$b/bench_scale && echo $rounds >\$b/bench_rounds && echo run >\$b/bench && cat \$b/bench && ok=OK
echo "NTA-BENCH-END"
echo "NTA-BENCH-\${ok:-FAILED}"
echo o >/proc/sysrq-trigger
sleep 10
EOS
chmod +x "$init"

banner "bench-uml: running the benchmark (console: ${D#$NTA_ROOT/}/console.log)"
info "linux mem=$mem root=/dev/root rootfstype=hostfs rootflags=/ ro init=${init#$NTA_ROOT/}"
t0=$SECONDS load=$(cut -d' ' -f1-3 /proc/loadavg)
timeout -k 10 1800 "$B/linux" mem="$mem" root=/dev/root rootfstype=hostfs rootflags=/ ro \
	init="$init" con=null con0=null,fd:1 loglevel=4 </dev/null >"$D/console.log" 2>&1
info "UML exited with status $? after $((SECONDS - t0)) s"
grep -q '^NTA-BENCH-OK' "$D/console.log" || fail_log "$D/console.log" "the benchmark did not run in UML"

# Kernel messages that reached the console meanwhile ("[  12.3] ...") are not the table's.
{
	echo "host: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) CPUs," \
		"load average before the run $load (other work on the host widens the min-max ranges)"
	sed -n '/^NTA-BENCH-BEGIN/,/^NTA-BENCH-END/{/^NTA-BENCH-/d;/^\[ *[0-9]*\.[0-9]*\] /d;p}' \
		"$D/console.log" | tr -d '\r'
} >"$D/table.txt"
grep -q '^lifo ' "$D/table.txt" || fail_log "$D/console.log" "no benchmark table in the UML console"
banner "bench-uml: results (${D#$NTA_ROOT/}/table.txt)"
cat "$D/table.txt"
