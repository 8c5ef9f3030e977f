#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Instructions per alloc+free pair from a callgrind run of the o2 harness's
# bench_alloc_free test (make prof): inclusive instruction counts of the
# harness embedder (h_alloc/h_free, i.e. nta_alloc()/nta_free() without the
# local lock and the kernel's statistics), of the core's two fast paths,
# and of glibc malloc/free, divided by the pairs each ran.
#
#   prof.sh CALLGRIND_OUT BENCH_PAIRS
out=$1
pairs=$2
batch=32
cells=6		# size sets in bench.c: 5 fixed sizes and the mix
# bench.c runs (BENCH_PAIRS / BATCH + 1) batches per cell, LIFO and FIFO.
n=$(( cells * 2 * (pairs / batch + 1) * batch ))
callgrind_annotate --inclusive=yes "$out" 2>/dev/null | awk -v n="$n" '
function show(label, v) { printf "# %-44s %7.1f\n", label, v / n }
$NF ~ /^\[/ { fn = $(NF - 1) } $NF !~ /^\[/ { fn = $NF }
{ v = $1; gsub(",", "", v) }
# A function appears once per source file of its inlined parts: the
# largest figure is the whole function.
function big(old, v) { return v + 0 > old + 0 ? v : old }
fn ~ /:h_alloc$/ { ha = big(ha, v) } fn ~ /:h_free$/ { hf = big(hf, v) }
fn ~ /:nta_pool_alloc$/ { pa = big(pa, v) }
fn ~ /:nta_pool_free_checked$/ { pf = big(pf, v) }
fn ~ /malloc\.c:malloc$/ { ma = big(ma, v) } fn ~ /malloc\.c:free$/ { mf = big(mf, v) }
END {
	printf "# instructions per alloc+free pair (callgrind, %d pairs, LIFO and FIFO, fixed sizes and the mix)\n", n
	show("NTA: h_alloc + h_free (embedder + core)", ha + hf)
	show("  core: nta_pool_alloc", pa)
	show("  core: nta_pool_free_checked", pf)
	show("glibc: malloc + free", ma + mf)
}'
