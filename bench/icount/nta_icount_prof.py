#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Where a row of make bench-icount spends its instructions, per function.

NTA_ICOUNT_PROF=ID[,ID...] make bench-icount makes the TCG plugin print,
for each window named, the instructions every translation block ran in it
(nta-icount-prof lines).  This sums them per function of the bench
kernel's System.map and divides by the window's pairs (the segment
markers the vCPU that opened it ran):

    bench/icount/nta_icount_prof.py ID [icount.txt [System.map]]
"""
import bisect
import signal
import collections
import re
import sys


def main():
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    wid = int(sys.argv[1], 0)
    path = sys.argv[2] if len(sys.argv) > 2 else 'out/bench-icount/bench-icount.icount.txt'
    smap = sys.argv[3] if len(sys.argv) > 3 else 'out/nta-bench/build-perf/System.map'
    syms = sorted((int(a, 16), n) for a, t, n in
                  (line.split()[:3] for line in open(smap)) if t in 'tTwW')
    addrs = [a for a, _ in syms]
    text = open(path, errors='replace').read()
    win = re.search(rf'^nta-icount id={wid} cpu=(\d+) .*$', text, re.M)
    if not win:
        sys.exit(f'no window {wid} in {path}')
    lines = dict(kv.split('=', 1) for kv in win[0].split()[1:])
    pairs = int(lines['l' + win[1]].split(',')[2])
    per = collections.Counter()
    for m in re.finditer(rf'^nta-icount-prof id={wid} pc=0x([0-9a-f]+) insns=(\d+)$', text, re.M):
        i = bisect.bisect_right(addrs, int(m[1], 16)) - 1
        per[syms[i][1] if i >= 0 else '?'] += int(m[2])
    if not per:
        sys.exit(f'window {wid} was not profiled (NTA_ICOUNT_PROF)')
    print(f'window {wid}: {pairs} pairs, {sum(per.values()) / pairs:.1f} instructions per pair')
    for name, n in per.most_common():
        if n / pairs >= 0.05:
            print(f'{n / pairs:8.1f}  {name}')


if __name__ == '__main__':
    main()
