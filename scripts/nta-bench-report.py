#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""NTA report: the console of make demo / make bench (scripts/nta-init's NTA-METRIC
lines) -> table.txt, summary.txt, results.json and results.svg; exit 1 when a round or
step failed.  For make check: --splats CONSOLE... (a TAP line each) and --kunit JSON TAG.

    nta-bench-report.py CONSOLE OUTDIR COMMAND   (rounds, steps: the console's command line)
"""

import json
import os
import re
import statistics
import subprocess
import sys

import nta_footprint

USER_HZ = 100

# Kernel splats, in kernel lines only (with a printk timestamp).
SPLAT_RE = re.compile(r'BUG:|WARNING:|KASAN|UBSAN|possible recursive locking|'
                      r'inconsistent lock state|Call Trace|Kernel panic|Oops|'
                      r'general protection fault|detected stall|^={20,}$')
KTIME_RE = re.compile(r'^.*?\[ *[0-9]+\.[0-9]+\] ?')
# Marks a test prints around what it provokes: while 'fpa' is on (fail_page_alloc
# armed, mem_pressure's churner that the OOM killer may take) a Call Trace is
# expected; while 'expected' is on (KASAN KUnit cases, usercopy) every splat is.
MARKS = {
    'nta_isolation: fail_page_alloc armed': ('fpa', True),
    'nta_isolation: fail_page_alloc disarmed': ('fpa', False),
    'nta_pressure: churn started': ('fpa', True),
    'nta_pressure: churn stopped': ('fpa', False),
    'NTA-SPLAT-EXPECTED-BEGIN': ('expected', True),
    'NTA-SPLAT-EXPECTED-END': ('expected', False),
}


def splat(line, state):
    """LINE's kernel message if an unexpected splat (STATE: the marks seen so far)."""
    if not KTIME_RE.match(line):
        return None
    msg = KTIME_RE.sub('', line, count=1)
    for mark, (key, on) in MARKS.items():
        if mark in msg:
            state[key] = on
    if not SPLAT_RE.search(msg) or state.get('expected') or \
            (state.get('fpa') and 'Call Trace' in msg):
        return None
    return msg.strip()


def kunit_tap(group, tag, path):
    """A TAP line per KUnit case of kunit.py's JSON, named [TAG] suite.case."""
    for g in group.get('sub_groups', []):
        kunit_tap(g, tag, path + [g['name']])
    for c in group.get('test_cases', []):
        st = c['status']
        good = st in ('PASS', 'SKIP')
        print(f"{'ok' if good else 'not ok'} - [{tag}] {'.'.join(path + [c['name']])}"
              f"{' # SKIP' if st == 'SKIP' else ''}{'' if good else ' (' + st + ')'}")


KCSAN_RE = re.compile(r'BUG: KCSAN: (.*)')
RULE_RE = re.compile(r'={20,}\s*$')


def kcsan_outside_nta(lines):
    """The lines and titles of the KCSAN reports (===== to =====) that involve no
    NTA function or file (make check lists, not fails, them)."""
    skip, titles = set(), []
    for i, line in enumerate(lines):
        m = KCSAN_RE.search(line)
        if not m:
            continue
        start = i - 1 if i and RULE_RE.search(lines[i - 1]) else i
        end = next((j for j in range(i + 1, min(len(lines), i + 200)) if RULE_RE.search(lines[j])), i)
        if not any(re.search(r'\bnta_|net/core/alloc/', x) for x in lines[start:end + 1]):
            skip.update(range(start, end + 1))
            titles.append(m.group(1).strip())
    return skip, titles


def scan_splats(logs):
    """make check: one TAP line per console log, the splat lines below it."""
    bad = 0
    for path in filter(os.path.exists, logs):
        state, seen = {}, []
        with open(path, errors='replace') as f:
            lines = [x.rstrip('\r\n') for x in f]
        skip, kcsan = kcsan_outside_nta(lines)
        for i, line in enumerate(lines):
            m = None if i in skip else splat(line, state)
            if m and m not in seen:
                seen.append(m)
        name = os.path.basename(path)
        other = (f'; {len(kcsan)} KCSAN reports outside NTA: ' + '; '.join(sorted(set(kcsan))[:6])
                 if kcsan else '')
        if seen:
            bad += 1
            print(f'not ok - [console] {name}: kernel splat ({len(seen)} lines){other}')
            print('\n'.join('      | ' + m for m in seen[:40]))
        else:
            print(f'ok - [console] {name}: no kernel splat '
                  f'(BUG/WARNING/KASAN/KCSAN/UBSAN/lockdep/panic){other}')
    return 1 if bad else 0


WORKLOADS = [
    # name, label, kind, plot label
    ('web_ka_64', 'web keep-alive 64 B (nta_load)', 'web', 'ka 64'),
    ('web_ka_1k', 'web keep-alive 1 KiB (nta_load)', 'web', 'ka 1k'),
    ('web_ka_16k', 'web keep-alive 16 KiB (nta_load)', 'web', 'ka 16k'),
    ('web_close_1k', 'web conn/request 1 KiB (nta_load)', 'web', 'close 1k'),
    ('web_close_16k', 'web conn/request 16 KiB (nta_load)', 'web', 'close 16k'),
    ('wrk_ka_1k', 'web keep-alive 1 KiB (wrk)', 'web', 'wrk 1k'),
    ('iperf_tcp', 'iperf3 TCP loopback', 'net', 'TCP'),
    ('iperf_udp_64', 'iperf3 UDP 64 B', 'net', 'UDP 64'),
    ('iperf_udp_1400', 'iperf3 UDP 1400 B', 'net', 'UDP 1400'),
    ('iperf_udp_8000', 'iperf3 UDP 8000 B', 'net', 'UDP 8000'),
]
SHORT = {w[0]: w[3] for w in WORKLOADS}


def parse_console(log):
    def num(v, float_ok=True):
        try:
            return float(v) if float_ok and '.' in v else int(v)
        except ValueError:
            return v
    rounds, pool, percpu, bench, steps, outside = [], {}, [], [], {}, []
    open_round, state = None, {}
    for n, line in enumerate((x.rstrip('\r') for x in log.split('\n')), 1):
        w = line.split()
        if line.startswith('NTA-ROUND-BEGIN '):
            open_round = []
        elif line.startswith('NTA-METRIC round '):
            head, _, why = line.partition(' why=')
            w = head.split()
            r = {'workload': w[2], 'line': n}
            for k, _, v in (kv.partition('=') for kv in w[3:]):
                r[k] = v if k in ('nta', 'status', 'unit') else num(v)
            r['why'] = [] if why.strip() in ('', '-') else [why.strip()]
            if r.get('status') != 'ok' and not r['why']:
                r['why'] = ['status ' + str(r.get('status'))]
            if open_round:
                r['why'].append('kernel splat on the console: ' + '; '.join(open_round[:2]))
            rounds.append(r)
            open_round = None
        elif line.startswith('NTA-METRIC pool ') and len(w) >= 4:
            pool[w[2]] = num(w[3], float_ok=False)
        elif line.startswith('NTA-PERCPU '):
            percpu.append(w[1:])
        elif line == 'NTA-BENCH' or line.startswith('NTA-BENCH '):
            bench.append(line[len('NTA-BENCH '):])
        elif line.startswith('NTA-TEST-END ') and len(w) >= 3:
            steps[w[1]] = int(w[2]) if w[2].lstrip('-').isdigit() else w[2]
        elif msg := splat(line, state):
            (open_round if open_round is not None else outside).append(f'line {n}: {msg}')
    return rounds, pool, percpu, bench, steps, outside


def fmt(v):
    if v is None:
        return '-'
    a = abs(v)
    return (f'{v:.0f}' if a >= 100 else f'{v:.1f}' if a >= 10 else f'{v:.2f}')


def cpu_key(w):
    return 'cpu_us_per_req' if w['kind'] == 'web' else 'cpu_s_per_gb'


def setting(rs):
    def stats(pairs):
        """pairs: (round number, value) of the rounds that have a value."""
        vals = [v for _, v in pairs]
        return vals and {'median': statistics.median(vals), 'min': min(vals),
                         'max': max(vals), 'n': len(vals), 'values': vals,
                         'round_numbers': [n for n, _ in pairs]} or None
    ok = [r for r in rs if not r['why']]
    cpu_s = lambda r: (r.get('sys', 0) + r.get('soft', 0)) / USER_HZ  # noqa: E731
    return rs and {
        'value': stats([(r.get('r'), float(r['val'])) for r in ok]),
        'unit': next((r['unit'] for r in ok if r.get('unit')), ''),
        'cpu_us_per_req': stats([(r.get('r'), cpu_s(r) * 1e6 / r['reqs'])
                                 for r in ok if r.get('reqs')]),
        'cpu_s_per_gb': stats([(r.get('r'), cpu_s(r) / (r['bytes'] / 1e9))
                               for r in ok if r.get('bytes')]),
        'rounds': len(rs), 'rounds_ok': len(ok)} or None


def build(rounds, outside):
    ratio = lambda a, b: a['median'] / b['median'] if a and b and b['median'] else None  # noqa: E731
    res = []
    present = {r['workload'] for r in rounds}
    known = [w[:3] for w in WORKLOADS if w[0] in present]
    known += [(w, w, 'net') for w in sorted(present) if w not in SHORT]
    for name, label, kind in known:
        rs = [r for r in rounds if r['workload'] == name]
        by = {v: setting([r for r in rs if r['nta'] == v]) for v in ('1', '0', '-')}
        w = {'name': name, 'label': label, 'kind': kind,
             'nta': by['1'], 'mainline': by['0'] or by['-'],
             'failed_rounds': [{'nta': r['nta'], 'round': r.get('r'), 'why': '; '.join(r['why']),
                                'console_line': r['line']} for r in rs if r['why']]}
        w['refused'] = bool(w['failed_rounds'] or outside)
        n, m = ({}, {}) if w['refused'] else (w['nta'] or {}, w['mainline'] or {})
        w['ratio'] = ratio(n.get('value'), m.get('value'))
        w['cpu_ratio'] = ratio(n.get(cpu_key(w)), m.get(cpu_key(w)))
        w['ahead'] = ahead(n.get('value'), m.get('value'), True)
        w['cpu_ahead'] = ahead(n.get(cpu_key(w)), m.get(cpu_key(w)), False)
        w['memory'] = mem_of([r for r in rs if r['nta'] == '1' and not r['why']])
        w['footprint'] = nta_footprint.footprint(rs)
        res.append(w)
    return res


def ahead(a, b, higher):
    """Of the rounds paired by number, how many NTA did better in: "k/n".

    Both rounds of a number run back to back, so a drift of the host between
    rounds moves both of a pair's figures, where it can move one median and
    not the other.  Rounds without a figure on either side are left out.
    """
    if not a or not b:
        return None
    other = dict(zip(b['round_numbers'], b['values']))
    pairs = [(x, other[n]) for n, x in zip(a['round_numbers'], a['values'])
             if n is not None and n in other]
    k = sum(x > y if higher else x < y for x, y in pairs)
    return f"{k}/{len(pairs)}" if pairs else None


def mem_of(nr):
    """skb head memory of the clean NTA rounds NR (sums of the samples)."""
    t = {k: sum(r.get(k, 0) for r in nr) for k in
         ('mreq', 'mres', 'mkm', 'mfree', 'mbin', 'nsamp', 'allocs', 'fallbacks', 'remote_frees', 'kicks', 'grows')}
    q, rv, k, al, fb, ns = (t[x] for x in ('mreq', 'mres', 'mkm', 'allocs', 'fallbacks', 'nsamp'))
    return {
        'pool_peak_bytes': max([r.get('mpool', 0) for r in nr] or [0]),
        'pool_avg_free_bytes': t['mfree'] / ns if ns and any('mfree' in r for r in nr) else None,
        'pool_avg_binned_bytes': t['mbin'] / ns if ns and any('mbin' in r for r in nr) else None,
        'samples': ns,
        'avg_live_requested': q / max(1, ns),
        'nta_reserved_per_requested': rv / q if q > 0 else None,
        'kmalloc_reserved_per_requested': k / q if q > 0 else None,
        'nta_over_kmalloc': rv / k if k > 0 else None,
        'nta_allocs': al, 'fallbacks': fb,
        'remote_frees': t['remote_frees'], 'kicks': t['kicks'], 'grows': t['grows'],
        'fallback_pct': 100.0 * fb / (al + fb) if al + fb else None,
    }


def order_of(rounds):
    """The order of the settings in the first workload's first two rounds."""
    name = {'1': 'on', '0': 'off', '-': 'mainline', 's': 'slab'}
    first = [r for r in rounds if rounds and r['workload'] == rounds[0]['workload']]
    return ', '.join(name.get(r['nta'], '?') for r in first[:6]) + ', ...'


def row(label, cells, widths):
    return f"{label:<34}" + ''.join(f" {c:>{w}}" for c, w in zip(cells, widths))


def table(res, pool, percpu, bench, problems, meta):
    out = [f"NTA vs mainline skb heads (net.core.nta=1 vs =0), {meta['command']}",
           f"machine: {meta['cpu_model']}, nproc {meta['nproc']}; guest: {meta['emulation']}, "
           f"{meta['guest_cpus']} vCPUs, 1 GiB, kernel {meta['guest_kernel']}",
           f"{meta['date']}, repository {meta['commit']}, {meta['qemu']}",
           f"{meta['rounds']} rounds per setting, {meta['secs']} s each, interleaved "
           f"({meta['order']}) in one boot;",
           "figures: median [min-max] of the rounds; NTA/main: ratio of the medians (under TCG"
           " emulation only the ratios mean something, not the absolute figures);",
           "ahead: in how many pairs of rounds (on and off of one round number) NTA did better."]
    p = out.append
    if 'icount' in meta['emulation']:
        p("-icount: the microbenchmark's figures are guest instructions per alloc+free pair, not ns "
          "(1 ns of guest time = 1 instruction), deterministic within a boot; xcpu rows count both vCPUs' instructions, spinning included.")
        p("-icount: req/s and Mbit/s are per second of guest time, that is per 10^9 guest "
          "instructions (when every vCPU idles, guest time jumps to the next timer); "
          "the CPU rows count /proc/stat ticks, coarse.")
    kib = lambda v, digits=0: f"{v / 1024:.{digits}f}"  # noqa: E731
    fmt_stat = lambda s: f"{fmt(s['median'])} [{fmt(s['min'])}-{fmt(s['max'])}]" if s else '-'  # noqa
    w5 = (7, 24, 24, 9, 6)
    for title, key, unit, rkey, akey in (
            ('Throughput (higher is better)', lambda w: 'value', None, 'ratio', 'ahead'),
            ('CPU cost: guest system+softirq time (lower is better)', cpu_key,
             lambda w: 'us/req' if w['kind'] == 'web' else 's/GB', 'cpu_ratio', 'cpu_ahead')):
        out += ['', title, row('workload', (f"{'unit':<7}", 'NTA', 'mainline', 'NTA/main', 'ahead'),
                               w5)]
        for w in res:
            n, m = w['nta'], w['mainline']
            u = unit(w) if unit else (n or m or {}).get('unit', '')
            p(row(w['label'], (f'{u:<7}', fmt_stat(n and n[key(w)]), fmt_stat(m and m[key(w)]),
                               'REFUSED' if w['refused'] else fmt(w[rkey]),
                               '-' if w['refused'] else w.get(akey) or '-'), w5))
    out += nta_footprint.lines([(w['label'], w['footprint']) for w in res] +
                               ([('UDP mix (64+1400+8000 B rounds)', meta['udp_fp'])] if 'udp_fp' in meta else []), row)
    out += ['', 'skb head object bytes in the NTA rounds (not footprint): bytes reserved per byte requested, live heads sampled',
            'every 0.5 s (kmalloc: what kmalloc_reserve() would hold for the same heads); fallback:',
            'heads NTA did not serve; pool peak: largest footprint sampled; avg free: mean free bytes',
            'in the pool; binned: the part of it parked in bins; remote: heads freed on another CPU;',
            'grows/k: blocks grown per 1000 heads']
    w8 = (8, 5, 7, 6, 8, 9, 8, 7, 6, 7)
    p(row('workload', ('avg live', 'NTA', 'kmalloc', 'NTA/km', 'fallback', 'pool peak', 'avg free',
                       'binned', 'remote', 'grows/k'), w8))
    rows = [(w['label'], w['memory']) for w in res]
    if 'udp_mix' in meta:
        rows.append(('UDP mix (64+1400+8000 B rounds)', meta['udp_mix']))
    k = lambda v: '-' if v is None else kib(v) + 'K'  # noqa: E731
    pc = lambda v: '-' if v is None else f"{v:.1f}%"  # noqa: E731
    for label, mm in rows:
        per = lambda k, f: f * mm[k] / mm['nta_allocs'] if mm['nta_allocs'] else None  # noqa: E731
        p(row(label, (k(mm['avg_live_requested'] if mm['samples'] else None),
                      fmt(mm['nta_reserved_per_requested']), fmt(mm['kmalloc_reserved_per_requested']),
                      fmt(mm['nta_over_kmalloc']), pc(mm['fallback_pct']), k(mm['pool_peak_bytes'] or None),
                      k(mm['pool_avg_free_bytes']), k(mm.get('pool_avg_binned_bytes')),
                      pc(per('remote_frees', 100.0)),
                      fmt(per('grows', 1000.0))), w8))
    if pool:
        g = lambda k: pool.get(k, '?')  # noqa: E731
        bb, fr = pool.get('block_bytes', 0), pool.get('free_bytes', 0)
        pct = lambda v: 100.0 * v / bb if bb else 0  # noqa: E731
        out += ['', f"NTA pool at the end (drained): {g('blocks')} blocks of "
                f"{pool.get('block_size', 0) // 1024} KiB = {kib(bb)} KiB footprint; live heads "
                f"{pool.get('inuse_objects', 0)} ({kib(pool.get('reserved_bytes', 0), 1)} KiB reserved); "
                f"free {kib(fr)} KiB ({pct(fr):.1f}%), largest free chunk "
                f"{kib(pool.get('largest_free', 0), 1)} KiB"]
        frag = fragmentation(pool, percpu)
        if frag is not None:
            p(f"fragmentation: free bytes in partly used blocks {'' if frag[1] else '>= '}"
              f"{kib(frag[0], 1)} KiB ({pct(frag[0]):.1f}% of the footprint; "
              f"{'exact' if frag[1] else 'lower bound'}, from the per-CPU free and largest-free figures)")
        p('since boot (KUnit at boot and nta/bench included): ' + ', '.join(
            f"{k.replace('_', ' ')} {g(k)}"
            for k in ('allocs', 'remote_frees', 'grows', 'returns', 'failures', 'fallbacks', 'bad_frees')))
    for title, lines in (('PROBLEMS (no ratio is printed for a workload with a failed round):', problems),
                         ('Microbenchmark (debugfs nta/bench, CONFIG_NTA_BENCH), verbatim:', bench)):
        if lines:
            out += ['', title] + ['  ' + x for x in lines]
    return '\n'.join(out) + '\n'


def icount(path, bench):
    """make bench-icount: the TCG plugin's windows (bench/icount/) per
    pair of the bench's rows (median of the rounds), as lines and as data."""
    if not os.path.exists(path):
        return [], None
    wins = {}
    with open(path, errors='replace') as f:
        for m in re.finditer(r'^nta-icount id=(\d+) cpu=(\d+) (.*)$', f.read(), re.M):
            v = {k: [int(x) for x in c.split(',')] for k, _, c in (kv.partition('=') for kv in m[3].split())}
            i = int(m[1])
            # instructions, irqf, pushf, lock, then (a plugin that counts cache
            # lines) the distinct lines of the pairs summed, outside and in the
            # stack, and the window's distinct lines
            lines = lambda k: [v[k][0] - v[k][1], v[k][1], v['win'][0]] if k in v else []  # noqa: E731
            wins[(i >> 7, i >> 2 & 31, i & 3)] = (v['v' + m[2]] + lines('l' + m[2]),
                                                   v['all'] + lines('lall'))
    pairs = int((re.findall(r'(\d+) pairs per figure', '\n'.join(bench)) or ['0'])[0])
    rows = [(x[:9].strip(), x[10:21].strip()) for x in bench
            if x.split(' ', 1)[0] in ('lifo', 'fifo64', 'fifo', 'xcpu', 'alloc_skb') and 'skipped' not in x]

    def per(seq, kind, n, xcpu=False):  # median per pair of the counted rounds
        vals = [w[xcpu] for (r, s, k), w in wins.items() if r == seq and k == kind and s]
        return vals and [statistics.median(v[c] for v in vals) / n for c in range(min(map(len, vals)))]

    def cell(x):
        if not x:
            return f" {'-':>9} {'-':>5} {'-':>5} {'-':>6} {'-':>5}"
        ln = f' {x[4]:6.2f} {x[5]:5.2f}' if len(x) > 5 else f" {'-':>6} {'-':>5}"
        return f' {x[0]:9.1f} {x[1]:5.2f} {x[3]:5.2f}' + ln
    out = ['', f'Exact counts per alloc+free pair (TCG plugin, {len(wins)} windows around the timed loops'
           ' of nta/bench; median of the rounds): ins instructions, irqf cli/sti/popf, lock LOCK-prefixed'
           ' or xchg with memory; xcpu: both vCPUs, the rest: the bench\'s vCPU',
           'lines: distinct 64 B data cache lines (guest virtual addresses) that the loads and stores of one'
           ' pair touch, outside the stack, the mean over the pairs (each pair\'s lines counted once however'
           ' often it touches them; xcpu: the consumer\'s frees counted apart, both added); stk: the same in'
           ' the stack; lines include the loop\'s own (the size sequence, FIFO queue slots): see bench/README.md',
           'contenders: NTA, mainline 6.12 skb head path, array = that path behind per-CPU arrays as 7.0\'s'
           ' slab sheaves (bench-only model; no alloc_skb rows)']
    fl = [(n, per(k, 3, 4 * pairs)) for k, n in enumerate(('empty loop', 'this_cpu_inc', 'irq save+inc+restore'))]
    out.append('floor per iteration (ins/irqf/pushf/lock[/lines/stk]): ' + '; '.join(
        f"{n} {'/'.join(fmt(x) for x in c[:6])}" for n, c in fl if c))
    names = ('nta', 'mainl.', 'array')
    out.append(f"{'test':<9} {'size':<11}" + ''.join(f" {k + ' ins':>9} {'irqf':>5} {'lock':>5} {'lines':>6} {'stk':>5}"
                                                       for k in names))
    data = []
    for seq, (test, arg) in enumerate(rows):
        c = [per(seq, k, pairs, test == 'xcpu') for k in range(3)]
        data.append({'test': test, 'size': arg, 'per_pair': dict(zip(('nta', 'mainline', 'array'), c))})
        out.append(f'{test:<9} {arg:<11}' + ''.join(cell(x) for x in c))
    return out, {'floor': dict(fl), 'rows': data,
                 'per_pair_fields': ['instructions', 'irqf', 'pushf', 'locked', 'lines', 'stack_lines',
                                     'window_lines']}


def summary(res, meta):
    """The cover letter's @RESULTS@: one line per workload, ratios only."""
    out = [f"{meta['date']}, {meta['rounds']} rounds of {meta['secs']} s per setting",
           row('workload', ('req/s, Mbit/s', 'CPU/work', 'fp/main', 'fp/slab', 'head bytes'),
               (13, 9, 8, 8, 10))]
    fpr = lambda fp, k: fmt(fp.get('ratios', {}).get('footprint_per_requested_nta_over_' + k))  # noqa: E731
    out += [row(w['label'], ('-' if w['refused'] else fmt(w['ratio']), '-' if w['refused'] else
                             fmt(w['cpu_ratio']), fpr(w['footprint'], 'mainline'), fpr(w['footprint'], 'slab'),
                             fmt(w['memory']['nta_over_kmalloc'])), (13, 9, 8, 8, 10))
            for w in res]
    if 'udp_mix' in meta:
        out.append(row('UDP mix (64+1400+8000 B)', ('-', '-', fpr(meta.get('udp_fp', {}), 'mainline'),
                                                    fpr(meta.get('udp_fp', {}), 'slab'),
                                                    fmt(meta['udp_mix']['nta_over_kmalloc'])), (13, 9, 8, 8, 10)))
    return ''.join(f'  {x}\n' for x in out)


def fragmentation(pool, percpu):
    """Free bytes in partly used blocks, summed over CPUs, and whether exact.
    Per CPU, with D = max_size, B blocks and F free bytes, U = B*D - F are used
    and the m partly used blocks hold m*D - U free: U = 0, none; largest_free
    < D (no wholly free block), all of F; else m >= ceil(U / D), a lower bound."""
    d = pool.get('max_size')
    if not d or len(percpu) < 2 or not {'free_bytes', 'largest_free', 'blocks'} <= set(percpu[0]):
        return None
    tot, exact = 0, True
    for cpu in (dict(zip(percpu[0], x)) for x in percpu[1:]):
        fr, lg, nb = (int(cpu.get(k, 0)) for k in ('free_bytes', 'largest_free', 'blocks'))
        used = nb * d - fr
        if used > 0 and lg < d:
            tot += fr
        elif used > 0:
            exact = False
            tot += -(-used // d) * d - used
    return tot, exact


def problem_lines(res, steps, outside, meta):
    out = [f"{w['name']} round {f['round']} (nta={f['nta']}): {f['why']} (console line {f['console_line']})"
           for w in res for f in w['failed_rounds']]
    out += [f"kernel splat outside any round, all ratios refused: {s}" for s in outside[:5]]
    for st, rc in ((st, steps.get(st)) for st in meta['steps_expected'] if steps.get(st) != 0):
        out.append(f"guest step {st} did not end (crash or boot timeout)" if rc is None else
                   f"guest step {st} ended with rc={rc}{' (killed by the timeout)' if rc == 137 else ''}")
    return out


PLOT = '''set termoption noenhanced
set multiplot layout 3,1 title "NTA vs mainline skb heads, one QEMU TCG boot: median, whiskers min-max, normalised to the mainline median"
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.6 border -1
set boxwidth 0.9
set grid ytics
set key top left
set xtics rotate by -20 noenhanced
set yrange [0:*]
'''
PANELS = (('throughput / mainline median', 'Throughput (higher is better)', 'mainline'),
          ('CPU time / mainline median', 'Guest CPU cost, system+softirq per request (web) or per GB (iperf3) '
           '(lower is better)', 'mainline'),
          ('bytes reserved / requested', 'skb head bytes reserved per byte requested, NTA rounds '
           '(kmalloc: what kmalloc_reserve() would hold for the same heads)', 'kmalloc'))


def plot(res, outdir):
    """results.dat (a block per panel) and results.gp, drawn by gnuplot as results.svg."""
    dat, script, svg = (os.path.join(outdir, 'results.' + x) for x in ('dat', 'gp', 'svg'))
    blocks = []
    for keyf in (lambda w: 'value', cpu_key):
        blocks.append([])
        for w in res:
            n, m, k = w['nta'], w['mainline'], keyf(w)
            if not w['refused'] and n and m and n[k] and m[k] and m[k]['median']:
                blocks[-1].append([SHORT.get(w['name'], w['name'])] + [
                    st[x] / m[k]['median'] for st in (n[k], m[k]) for x in ('median', 'min', 'max')])
    blocks.append([[SHORT.get(w['name'], w['name'])] + [mm['nta_reserved_per_requested']] * 3 +
                   [mm['kmalloc_reserved_per_requested']] * 3
                   for w in res if (mm := w['memory'])['nta_reserved_per_requested'] is not None])
    with open(dat, 'w') as f:
        for (yl, _, base), rows in zip(PANELS, blocks):
            f.write(f'# {yl}: label NTA NTA_min NTA_max {base} {base}_min {base}_max\n')
            f.writelines(f'"{r[0]}"' + ''.join(' %g' % v for v in r[1:]) + '\n' for r in rows)
            f.write('\n\n')
    with open(script, 'w') as f:
        f.write(f'set terminal svg size 1100,1100 dynamic font "sans,11"\nset output "{svg}"\n' + PLOT +
                ''.join(f'set ylabel "{yl}"\nset title "{t}"\nplot "{dat}" index {i} using 2:3:4:xtic(1) '
                        f'title "NTA" lc rgb "#2a7ab9", \\\n     "" index {i} using 5:6:7 title "{base}" '
                        f'lc rgb "#b0b0b0", 1 notitle lc rgb "black" dt 2\n'
                        for i, (yl, t, base) in enumerate(PANELS)) + 'unset multiplot\n')
    if not blocks[0] and not blocks[1]:
        return 'no clean workload with both settings: no plot'
    try:
        r = subprocess.run(['gnuplot', script], capture_output=True, text=True, timeout=60)
    except FileNotFoundError:
        return 'gnuplot not installed (package gnuplot-nox): no plot, data in results.dat'
    if r.returncode != 0:
        return 'gnuplot failed: ' + (r.stderr.strip().splitlines() or ['?'])[-1]
    return None


def main():
    def run(*cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return ''

    if sys.argv[1:2] == ['--splats']:
        return scan_splats(sys.argv[2:])
    if sys.argv[1:2] == ['--kunit']:
        with open(sys.argv[2]) as f:
            return kunit_tap(json.load(f), sys.argv[3], [])
    logf, outdir, command = sys.argv[1:4]
    with open(logf, errors='replace') as f:
        log = f.read()
    rounds, pool, percpu, bench, steps, outside = parse_console(log)
    cmdline = dict(re.findall(r'\b(nta[a-z]+)=(\S+)', (re.findall(r'Command line: (.*)', log) or [''])[0]))
    nrounds, _, secs = cmdline.get('ntademo', '?,?').partition(',')
    with open('/proc/cpuinfo') as f:
        cpu = re.search(r'^model name\s*:\s*(.*)$', f.read(), re.M)
    meta = {'command': command,
            'commit': run('git', '-C', os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                          'describe', '--always', '--dirty') or '?',
            'qemu': re.sub(r'^QEMU emulator version', 'QEMU',
                           (run('qemu-system-x86_64', '--version').splitlines() or ['?'])[0]),
            'nproc': os.cpu_count(), 'cpu_model': cpu.group(1).strip() if cpu else '?',
            'emulation': 'QEMU TCG' + (' -icount shift=0' if 'ntaicount' in cmdline else ''), 'guest_cpus': (re.findall(r'^# boot_smp: (\d+) CPUs online', log, re.M) or ['?'])[-1],
            'guest_kernel': (re.findall(r'Linux version (\S+)', log) or ['?'])[0],
            'rounds': nrounds, 'secs': secs, 'date': run('date', '-u', '+%Y-%m-%d %H:%M UTC'),
            'steps_expected': [s for s in cmdline.get('ntaplan', '').split(',') if s],
            'order': order_of(rounds)}
    res = build(rounds, outside)
    udp = [r for r in rounds if r['workload'].startswith('iperf_udp_') and r['nta'] == '1' and not r['why']]
    if udp:
        meta['udp_mix'] = mem_of(udp)
        meta['udp_fp'] = nta_footprint.footprint([r for r in rounds if r['workload'].startswith('iperf_udp_')])
    problems = problem_lines(res, steps, outside, meta)
    ic_lines, ic = icount(re.sub(r'\.log$', '', logf) + '.icount.txt', bench)
    bl_lines, bl = nta_footprint.backlog_lines(nta_footprint.backlog(log), row)
    txt = table(res, pool, percpu, bench, problems, meta) + ''.join(x + '\n' for x in bl_lines + ic_lines)
    for name, body in (('table.txt', txt), ('summary.txt', summary(res, meta))):
        with open(os.path.join(outdir, name), 'w') as f:
            f.write(body)
    sys.stdout.write(txt)
    if 'NTA-PLAN-DONE' not in log:
        problems.append('the boot did not finish its plan')
    frag = fragmentation(pool, percpu)
    doc = {'meta': meta, 'workloads': res, 'pool_end': pool,
           'pool_end_partial_free_bytes': frag and frag[0],
           'pool_end_partial_free_exact': frag and frag[1],
           'pool_end_percpu': percpu, 'bench': bench, 'bench_icount': ic, 'guest_steps': steps,
           'splats_outside_rounds': outside, 'problems': problems, 'rounds': rounds, 'backlog': bl}
    with open(os.path.join(outdir, 'results.json'), 'w') as f:
        json.dump(doc, f, indent=1)
    err = plot(res, outdir)
    if err:
        print('    plot: ' + err, file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
