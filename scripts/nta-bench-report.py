#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""NTA demo/bench report: the guest console of make demo / make bench ->
table.txt, results.json, results.dat + results.gp -> results.svg (gnuplot).

    nta-bench-report.py --log CONSOLE --out DIR --command CMD [--rounds N --secs S]
    nta-bench-report.py --splats CONSOLE...   (make check: a TAP line per console)
    nta-bench-report.py --kunit JSON          (make check: kunit.py parse --json -> TAP lines)

The console carries, per round (scripts/nta-init, demo_round):
    NTA-ROUND-BEGIN <workload> nta=<v> r=<i>
    NTA-METRIC round <workload> nta=<v> r=<i> status=.. key=value... why=<text>
and NTA-METRIC pool <key> <value>, NTA-PERCPU <row>, NTA-BENCH <line>,
NTA-TEST-END <step> <rc>.  A kernel splat between a round's BEGIN and its
METRIC line fails that round; a failed round refuses its workload's ratio.
Exit status: 0 when every round is clean and every step ended with rc 0.
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys

USER_HZ = 100

# Kernel splats, in kernel lines only (with a printk timestamp): make check
# and make demo both scan with splat().
SPLAT_RE = re.compile(r'BUG:|WARNING:|KASAN|UBSAN|possible recursive locking|'
                      r'inconsistent lock state|Call Trace|Kernel panic|Oops|'
                      r'general protection fault|detected stall|^={20,}$')
KTIME_RE = re.compile(r'^.*?\[ *[0-9]+\.[0-9]+\] ?')
# Marks a test prints around what it provokes: (state key, on/off).
MARKS = {
    'nta_isolation: fail_page_alloc armed': ('fpa', True),
    'nta_isolation: fail_page_alloc disarmed': ('fpa', False),
    'nta_pressure: churn started': ('fpa', True),
    'nta_pressure: churn stopped': ('fpa', False),
    'NTA-SPLAT-EXPECTED-BEGIN': ('expected', True),
    'NTA-SPLAT-EXPECTED-END': ('expected', False),
}


def splat(line, state):
    """The kernel message of LINE if it is a splat, else None.  Between
    nta_isolation.sh's "fail_page_alloc armed" and "disarmed" lines the page
    allocator's failure reports are expected: their "Call Trace" is accepted
    there, and only there; so is the OOM killer's between mem_pressure's
    "nta_pressure: churn started" and "stopped" (its churner is the
    victim it offers; the test fails if another process is killed).  Between NTA-SPLAT-EXPECTED-BEGIN and -END, which
    the KASAN KUnit cases and the usercopy test print around the reports
    they provoke, every splat is expected (state: a dict kept across the
    lines of a log)."""
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


def kunit_tap(group, path):
    """A TAP line per KUnit case of kunit.py's JSON, named suite.case."""
    for g in group.get('sub_groups', []):
        kunit_tap(g, path + [g['name']])
    for c in group.get('test_cases', []):
        st = c['status']
        print(f"{'ok' if st in ('PASS', 'SKIP') else 'not ok'} - [kunit] "
              f"{'.'.join(path + [c['name']])}{' # SKIP' if st == 'SKIP' else ''}"
              f"{'' if st in ('PASS', 'SKIP') else ' (' + st + ')'}")


KCSAN_RE = re.compile(r'BUG: KCSAN: (.*)')
NTA_RE = re.compile(r'\bnta_|net/core/alloc/')


def kcsan_outside_nta(lines):
    """The line numbers of LINES inside KCSAN reports that involve no NTA
    function or file (from the ===== line before "BUG: KCSAN:" to the
    ===== line after it), and those reports' titles.  A KCSAN kernel finds
    data races all over the kernel; the KCSAN flavour of make check fails
    on the ones in NTA, and lists the others."""
    skip, titles = set(), []
    for i, line in enumerate(lines):
        m = KCSAN_RE.search(line)
        if not m:
            continue
        start = i - 1 if i and re.search(r'={20,}\s*$', lines[i - 1]) else i
        end = next((j for j in range(i + 1, min(len(lines), i + 200))
                    if re.search(r'={20,}\s*$', lines[j])), i)
        if not any(NTA_RE.search(x) for x in lines[start:end + 1]):
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
        other = ''
        if kcsan:
            other = (f'; {len(kcsan)} KCSAN reports outside NTA: ' +
                     '; '.join(sorted(set(kcsan))[:6]))
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


def num(v, float_ok=True):
    """V as an int (or a float when it has a point), else unchanged."""
    try:
        return float(v) if float_ok and '.' in v else int(v)
    except ValueError:
        return v


def parse_console(path):
    rounds, pool, percpu, bench, steps = [], {}, [], [], {}
    splats_outside = []
    open_round = None
    with open(path, errors='replace') as f:
        lines = [l.rstrip('\r\n') for l in f]
    state = {}
    for n, line in enumerate(lines, 1):
        if line.startswith('NTA-ROUND-BEGIN '):
            open_round = {'begin': n, 'splats': []}
            continue
        if line.startswith('NTA-METRIC round '):
            head, _, why = line.partition(' why=')
            w = head.split()
            r = {'workload': w[2]}
            for k, _, v in (kv.partition('=') for kv in w[3:]):
                r[k] = v if k in ('nta', 'status', 'unit') else num(v)
            r['why'] = [] if why.strip() in ('', '-') else [why.strip()]
            if r.get('status') != 'ok' and not r['why']:
                r['why'] = ['status ' + str(r.get('status'))]
            if open_round and open_round['splats']:
                r['why'].append('kernel splat on the console: ' +
                                '; '.join(open_round['splats'][:2]))
            r['line'] = n
            rounds.append(r)
            open_round = None
            continue
        if line.startswith('NTA-METRIC pool '):
            w = line.split()
            if len(w) >= 4:
                pool[w[2]] = num(w[3], float_ok=False)
            continue
        if line.startswith('NTA-PERCPU '):
            percpu.append(line[len('NTA-PERCPU '):].split())
            continue
        if line.startswith('NTA-BENCH '):
            bench.append(line[len('NTA-BENCH '):])
            continue
        if line == 'NTA-BENCH':
            bench.append('')
            continue
        if line.startswith('NTA-TEST-END '):
            w = line.split()
            if len(w) >= 3:
                steps[w[1]] = int(w[2]) if w[2].lstrip('-').isdigit() else w[2]
            continue
        msg = splat(line, state)
        if msg:
            (open_round['splats'] if open_round is not None else splats_outside).append(
                f'line {n}: {msg}')
    return rounds, pool, percpu, bench, steps, splats_outside


def stats(vals):
    if not vals:
        return None
    return {'median': statistics.median(vals), 'min': min(vals),
            'max': max(vals), 'n': len(vals), 'values': vals}


def cpu_s(r):
    return (r.get('sys', 0) + r.get('soft', 0)) / USER_HZ


def per_req_us(r):
    return cpu_s(r) * 1e6 / r['reqs'] if r.get('reqs') else None


def per_gb_s(r):
    return cpu_s(r) / (r['bytes'] / 1e9) if r.get('bytes') else None


def fmt(v, unit=''):
    if v is None:
        return '-'
    a = abs(v)
    return (f'{v:.0f}' if a >= 100 else f'{v:.1f}' if a >= 10 else f'{v:.2f}') + unit


def fmt_stat(st):
    if not st:
        return '-'
    return f"{fmt(st['median'])} [{fmt(st['min'])}-{fmt(st['max'])}]"


def ratio(a, b):
    if not a or not b or not b['median']:
        return None
    return a['median'] / b['median']


def build(rounds, pool, percpu, steps, splats_outside):
    res = []
    present = {r['workload'] for r in rounds}
    known = [w[:3] for w in WORKLOADS if w[0] in present]
    known += [(w, w, 'net') for w in sorted(present) if w not in SHORT]
    for name, label, kind in known:
        rs = [r for r in rounds if r['workload'] == name]
        failed = [r for r in rs if r['why']]
        by = {}
        for setting in ('1', '0', '-'):
            ok = [r for r in rs if r['nta'] == setting and not r['why']]
            if not [r for r in rs if r['nta'] == setting]:
                continue
            unit = next((r['unit'] for r in ok if r.get('unit')), '')
            by[setting] = {
                'value': stats([float(r['val']) for r in ok]),
                'unit': unit,
                'cpu_us_per_req': stats([v for v in map(per_req_us, ok) if v is not None]),
                'cpu_s_per_gb': stats([v for v in map(per_gb_s, ok) if v is not None]),
                'rounds': len([r for r in rs if r['nta'] == setting]),
                'rounds_ok': len(ok),
            }
        w = {'name': name, 'label': label, 'kind': kind,
             'nta': by.get('1'), 'mainline': by.get('0') or by.get('-'),
             'failed_rounds': [{'nta': r['nta'], 'round': r.get('r'),
                                'why': '; '.join(r['why']), 'console_line': r['line']}
                               for r in failed]}
        refused = bool(failed) or bool(splats_outside)
        if w['nta'] and w['mainline'] and not refused:
            w['ratio'] = ratio(w['nta']['value'], w['mainline']['value'])
            w['cpu_ratio'] = ratio(w['nta']['cpu_us_per_req' if kind == 'web' else 'cpu_s_per_gb'],
                                   w['mainline']['cpu_us_per_req' if kind == 'web' else 'cpu_s_per_gb'])
        else:
            w['ratio'] = w['cpu_ratio'] = None
        w['refused'] = refused
        # skb head memory, NTA rounds: time-averaged live heads
        nr = [r for r in rs if r['nta'] == '1' and not r['why']]
        w['memory'] = mem_of(nr)
        res.append(w)
    return res


def mem_of(nr):
    """skb head memory of the clean NTA rounds NR (sums of the samples)."""
    q = sum(r.get('mreq', 0) for r in nr)
    rv = sum(r.get('mres', 0) for r in nr)
    k = sum(r.get('mkm', 0) for r in nr)
    al = sum(r.get('allocs', 0) for r in nr)
    fb = sum(r.get('fallbacks', 0) for r in nr)
    ns = sum(r.get('nsamp', 0) for r in nr)
    return {
        'pool_peak_bytes': max([r.get('mpool', 0) for r in nr] or [0]),
        'pool_avg_free_bytes': (sum(r.get('mfree', 0) for r in nr) / ns
                                if ns and any('mfree' in r for r in nr) else None),
        'samples': sum(r.get('nsamp', 0) for r in nr),
        'avg_live_requested': q / max(1, sum(r.get('nsamp', 0) for r in nr)),
        'nta_reserved_per_requested': rv / q if q > 0 else None,
        'kmalloc_reserved_per_requested': k / q if q > 0 else None,
        'nta_over_kmalloc': rv / k if k > 0 else None,
        'nta_allocs': al, 'fallbacks': fb,
        'remote_frees': sum(r.get('remote_frees', 0) for r in nr),
        'kicks': sum(r.get('kicks', 0) for r in nr),
        'grows': sum(r.get('grows', 0) for r in nr),
        'fallback_pct': 100.0 * fb / (al + fb) if al + fb else None,
    }


def table(res, pool, percpu, bench, steps, splats_outside, meta):
    out = []
    p = out.append
    p(f"NTA vs mainline skb heads (net.core.nta=1 vs =0), {meta['command']}")
    p(f"machine: {meta['cpu_model']}, nproc {meta['nproc']}; guest: QEMU TCG, "
      f"{meta['guest_cpus']} vCPUs, 1 GiB, kernel {meta.get('guest_kernel', '?')}")
    p(f"{meta['date']}, repository {meta['commit']}, {meta['qemu']}")
    p(f"{meta['rounds']} rounds per setting, {meta['secs']} s each, interleaved "
      f"(on, off, on, off, ...) in one boot;")
    p("figures: median [min-max] of the rounds; NTA/main: ratio of the medians.")
    p("Under TCG emulation only the ratios mean something, not the absolute figures.")
    p('')
    hdr = f"{'workload':<34} {'unit':<7} {'NTA':>24} {'mainline':>24} {'NTA/main':>9}"
    p('Throughput (higher is better)')
    p(hdr)
    for w in res:
        n, m = w['nta'], w['mainline']
        unit = (n or m or {}).get('unit', '')
        rt = 'REFUSED' if w['refused'] else fmt(w['ratio'])
        p(f"{w['label']:<34} {unit:<7} {fmt_stat(n and n['value']):>24} "
          f"{fmt_stat(m and m['value']):>24} {rt:>9}")
    p('')
    p('CPU cost: guest system+softirq time (lower is better)')
    p(hdr)
    for w in res:
        key = 'cpu_us_per_req' if w['kind'] == 'web' else 'cpu_s_per_gb'
        unit = 'us/req' if w['kind'] == 'web' else 's/GB'
        n, m = w['nta'], w['mainline']
        rt = 'REFUSED' if w['refused'] else fmt(w['cpu_ratio'])
        p(f"{w['label']:<34} {unit:<7} {fmt_stat(n and n[key]):>24} "
          f"{fmt_stat(m and m[key]):>24} {rt:>9}")
    p('')
    p('skb head memory in the NTA rounds: bytes reserved per byte requested, live heads')
    p('sampled every 0.5 s (kmalloc = what kmalloc_reserve() would hold for the same heads:')
    p('skb_small_head_cache objects up to their size, else kmalloc_size_roundup()); fallback:')
    p('heads NTA did not serve; pool peak: largest NTA footprint sampled; avg free:')
    p('free bytes in the pool, mean of the samples')
    p(f"{'workload':<34} {'avg live':>8} {'NTA':>5} {'kmalloc':>7} {'NTA/km':>6} {'fallback':>8}"
      f" {'pool peak':>9} {'avg free':>8}")
    rows = [(w['label'], w['memory']) for w in res]
    if 'udp_mix' in meta:
        rows.append(('UDP mix (64+1400+8000 B rounds)', meta['udp_mix']))
    for label, mm in rows:
        live = f"{mm['avg_live_requested'] / 1024:.0f}K" if mm['samples'] else '-'
        fb = '-' if mm['fallback_pct'] is None else f"{mm['fallback_pct']:.1f}%"
        peak = f"{mm['pool_peak_bytes'] / 1024:.0f}K" if mm['pool_peak_bytes'] else '-'
        avf = '-' if mm['pool_avg_free_bytes'] is None else f"{mm['pool_avg_free_bytes'] / 1024:.0f}K"
        p(f"{label:<34} {live:>8} {fmt(mm['nta_reserved_per_requested']):>5} "
          f"{fmt(mm['kmalloc_reserved_per_requested']):>7} {fmt(mm['nta_over_kmalloc']):>6} {fb:>8}"
          f" {peak:>9} {avf:>8}")
    if any('kicks' in r for r in meta.get('all_rounds', [])):
        p('')
        p('NTA activity in the NTA rounds (where the time may go): heads per request or per MB,')
        p('share freed on another CPU (queued to the owner), owner kicks and block grows per 1000 heads')
        p(f"{'workload':<34} {'heads':>12} {'remote':>7} {'kicks/k':>8} {'grows/k':>8}")
        for w in res:
            mm = w['memory']
            nr = [r for r in meta['all_rounds'] if r['workload'] == w['name'] and r['nta'] == '1'
                  and not r['why']]
            al = mm['nta_allocs']
            if not al:
                continue
            reqs = sum(r.get('reqs', 0) for r in nr)
            mb = sum(r.get('bytes', 0) for r in nr) / 1e6
            per = f"{al / reqs:.1f}/req" if w['kind'] == 'web' and reqs else (
                f"{al / mb:.1f}/MB" if mb else '-')
            p(f"{w['label']:<34} {per:>12} {100.0 * mm['remote_frees'] / al:>6.1f}% "
              f"{1000.0 * mm['kicks'] / al:>8.2f} {1000.0 * mm['grows'] / al:>8.2f}")
    if pool:
        bb = pool.get('block_bytes', 0)
        fr = pool.get('free_bytes', 0)
        p('')
        p(f"NTA pool at the end (drained): {pool.get('blocks', '?')} blocks of "
          f"{pool.get('block_size', 0) // 1024} KiB = {bb / 1024:.0f} KiB footprint; live heads "
          f"{pool.get('inuse_objects', 0)} ({pool.get('reserved_bytes', 0) / 1024:.1f} KiB reserved); "
          f"free {fr / 1024:.0f} KiB ({100.0 * fr / bb if bb else 0:.1f}%), largest free chunk "
          f"{pool.get('largest_free', 0) / 1024:.1f} KiB")
        frag = fragmentation(pool, percpu)
        if frag is not None:
            p(f"fragmentation: free bytes in partly used blocks {'' if frag[1] else '>= '}"
              f"{frag[0] / 1024:.1f} KiB ({100.0 * frag[0] / bb if bb else 0:.1f}% of the footprint; "
              f"{'exact' if frag[1] else 'lower bound'}, from the per-CPU free and largest-free figures)")
        p(f"since boot (KUnit at boot and nta/bench included): allocs {pool.get('allocs', '?')}, remote frees {pool.get('remote_frees', '?')}, "
          f"grows {pool.get('grows', '?')}, returns {pool.get('returns', '?')}, failures "
          f"{pool.get('failures', '?')}, fallbacks {pool.get('fallbacks', '?')}, bad frees "
          f"{pool.get('bad_frees', '?')}")
    problems = problem_lines(res, steps, splats_outside, meta)
    if problems:
        p('')
        p('PROBLEMS (no ratio is printed for a workload with a failed round):')
        out.extend('  ' + x for x in problems)
    if bench:
        p('')
        p('Microbenchmark (debugfs nta/bench, CONFIG_NTA_BENCH), verbatim:')
        out.extend('  ' + b for b in bench)
    return '\n'.join(out) + '\n'


def summary(res, meta):
    """The cover letter's @RESULTS@: one line per workload, ratios only."""
    out = [f"  {meta['date']}, {meta['rounds']} rounds of {meta['secs']} s per setting",
           f"  {'workload':<34} {'req/s, Mbit/s':>13} {'CPU/work':>9} {'head bytes':>10}"]
    rows = [(w['label'], None if w['refused'] else w['ratio'],
             None if w['refused'] else w['cpu_ratio'], w['memory']['nta_over_kmalloc'])
            for w in res]
    if 'udp_mix' in meta:
        rows.append(('UDP mix (64+1400+8000 B)', None, None, meta['udp_mix']['nta_over_kmalloc']))
    for label, t, c, m in rows:
        out.append(f"  {label:<34} {fmt(t):>13} {fmt(c):>9} {fmt(m):>10}")
    return '\n'.join(out) + '\n'


def fragmentation(pool, percpu):
    """Free bytes in partly used blocks (blocks holding a live or queued
    object), summed over CPUs.  Per CPU, with D = max_size (the data bytes of
    a block), B blocks and F free bytes, the used bytes are U = B*D - F and
    the m partly used blocks hold m*D - U free bytes.  U = 0: none (exact);
    largest_free < D: no block is wholly free, so all of F (exact); else m is
    at least ceil(U / D), a lower bound.  Returns (bytes, exact) or None."""
    d = pool.get('max_size')
    if not d or not percpu or len(percpu) < 2:
        return None
    hdr = percpu[0]
    try:
        fi, li, bi = hdr.index('free_bytes'), hdr.index('largest_free'), hdr.index('blocks')
    except ValueError:
        return None
    tot, exact = 0, True
    for row in percpu[1:]:
        try:
            fr, lg, nb = int(row[fi]), int(row[li]), int(row[bi])
        except (ValueError, IndexError):
            continue
        used = nb * d - fr
        if used <= 0:
            continue
        if lg < d:
            tot += fr
        else:
            exact = False
            tot += -(-used // d) * d - used
    return tot, exact


def problem_lines(res, steps, splats_outside, meta):
    out = []
    for w in res:
        for f in w['failed_rounds']:
            out.append(f"{w['name']} round {f['round']} (nta={f['nta']}): {f['why']} "
                       f"(console line {f['console_line']})")
    for s in splats_outside[:5]:
        out.append(f"kernel splat outside any round, all ratios refused: {s}")
    for st in meta['steps_expected']:
        rc = steps.get(st)
        if rc is None:
            out.append(f"guest step {st} did not end (crash or boot timeout)")
        elif rc != 0:
            why = ' (killed by the per-step timeout)' if rc == 137 else ''
            out.append(f"guest step {st} ended with rc={rc}{why}")
    have = {w['name'] for w in res}
    for name, *_ in WORKLOADS:
        step = ('demo_web' if name.startswith(('web_', 'wrk_')) else
                'demo_udp' if name.startswith('iperf_udp') else 'demo_iperf')
        if step not in meta['steps_expected'] or name in have:
            continue
        if name == 'wrk_ka_1k' and meta.get('no_wrk'):
            continue
        out.append(f"workload {name}: no rounds in the console")
    return out


def plot(res, outdir):
    gp = shutil.which('gnuplot')
    dat = os.path.join(outdir, 'results.dat')
    rows = []
    with open(dat, 'w') as f:
        for block, keyf in (('throughput', lambda w: 'value'),
                            ('cpu', lambda w: 'cpu_us_per_req' if w['kind'] == 'web' else 'cpu_s_per_gb')):
            f.write(f'# {block}: label nta nta_lo nta_hi main main_lo main_hi (normalised to the mainline median)\n')
            for w in res:
                n, m = w['nta'], w['mainline']
                if w['refused'] or not n or not m:
                    continue
                k = keyf(w)
                if not n[k] or not m[k] or not m[k]['median']:
                    continue
                b = m[k]['median']
                f.write('"%s" %g %g %g 1 %g %g\n' % (
                    SHORT.get(w['name'], w['name']), n[k]['median'] / b, n[k]['min'] / b,
                    n[k]['max'] / b, m[k]['min'] / b, m[k]['max'] / b))
                rows.append(w['name'])
            f.write('\n\n')
        f.write('# memory: label nta_reserved/requested kmalloc_reserved/requested (NTA rounds)\n')
        for w in res:
            mm = w['memory']
            if mm['nta_reserved_per_requested'] is None:
                continue
            a, b = mm['nta_reserved_per_requested'], mm['kmalloc_reserved_per_requested']
            f.write('"%s" %g %g %g %g %g %g\n' % (SHORT.get(w['name'], w['name']), a, a, a, b, b, b))
        f.write('\n\n')
    script = os.path.join(outdir, 'results.gp')
    svg = os.path.join(outdir, 'results.svg')
    with open(script, 'w') as f:
        f.write(f'''# gnuplot {os.path.basename(script)}: written by scripts/nta-bench-report.py
set terminal svg size 1100,1100 dynamic font "sans,11"
set output "{svg}"
set termoption noenhanced
set multiplot layout 3,1 title "NTA vs mainline skb heads, one QEMU TCG boot: median, whiskers min-max, normalised to the mainline median"
set style data histogram
set style histogram errorbars gap 2 lw 1
set style fill solid 0.6 border -1
set boxwidth 0.9
set grid ytics
set key top left
set xtics rotate by -20 noenhanced
set yrange [0:*]
set ylabel "throughput / mainline median"
set title "Throughput (higher is better)"
plot "{dat}" index 0 using 2:3:4:xtic(1) title "NTA" lc rgb "#2a7ab9", \\
     "" index 0 using 5:6:7 title "mainline" lc rgb "#b0b0b0", 1 notitle lc rgb "black" dt 2
set ylabel "CPU time / mainline median"
set title "Guest CPU cost, system+softirq per request (web) or per GB (iperf3) (lower is better)"
plot "{dat}" index 1 using 2:3:4:xtic(1) title "NTA" lc rgb "#2a7ab9", \\
     "" index 1 using 5:6:7 title "mainline" lc rgb "#b0b0b0", 1 notitle lc rgb "black" dt 2
set ylabel "bytes reserved / requested"
set title "skb head bytes reserved per byte requested, NTA rounds (kmalloc: what kmalloc_reserve() would hold for the same heads)"
plot "{dat}" index 2 using 2:3:4:xtic(1) title "NTA" lc rgb "#2a7ab9", \\
     "" index 2 using 5:6:7 title "kmalloc" lc rgb "#b0b0b0", 1 notitle lc rgb "black" dt 2
unset multiplot
''')
    if not rows:
        return 'no clean workload with both settings: no plot'
    if not gp:
        return 'gnuplot not installed (package gnuplot-nox): no plot, data in results.dat'
    for f in (svg, svg[:-4] + '.png'):
        if os.path.exists(f):
            os.unlink(f)
    r = subprocess.run([gp, script], capture_output=True, text=True, timeout=60)
    if r.returncode != 0 or not os.path.exists(svg):
        return 'gnuplot failed: ' + (r.stderr.strip().splitlines() or ['?'])[-1]
    # the same as PNG, for viewers without SVG (pngcairo, else gd's png)
    png = svg[:-4] + '.png'
    with open(script) as f:
        body = f.read().replace(svg, png)
    for term in ('pngcairo size 1100,1100 font "sans,10"', 'png size 1100,1100'):
        t = re.sub(r'^set terminal .*$', 'set terminal ' + term, body, count=1, flags=re.M)
        r = subprocess.run([gp], input=t, capture_output=True, text=True, timeout=60)
        if r.returncode == 0 and os.path.exists(png):
            break
    return None


def main():
    if sys.argv[1:2] == ['--splats']:
        return scan_splats(sys.argv[2:])
    if sys.argv[1:2] == ['--kunit']:
        with open(sys.argv[2]) as f:
            kunit_tap(json.load(f), [])
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument('--log', required=True)
    ap.add_argument('--out', required=True)
    ap.add_argument('--command', required=True)
    ap.add_argument('--rounds', default='?')
    ap.add_argument('--secs', default='?')
    ap.add_argument('--steps', default='')
    ap.add_argument('--boot-ok', type=int, default=1)
    a = ap.parse_args()

    rounds, pool, percpu, bench, steps, splats_outside = parse_console(a.log)
    cpu_model = '?'
    try:
        with open('/proc/cpuinfo') as f:
            for l in f:
                if l.startswith('model name'):
                    cpu_model = l.split(':', 1)[1].strip()
                    break
    except OSError:
        pass
    guest_kernel = '?'
    no_wrk = False
    guest_cpus = '?'
    with open(a.log, errors='replace') as f:
        for l in f:
            m = re.search(r'Linux version (\S+)', l)
            if m and guest_kernel == '?':
                guest_kernel = m.group(1)
            if l.startswith('# wrk is not in the initramfs'):
                no_wrk = True
            m = re.search(r'ok 1 boot_smp: (\d+) CPUs online', l)
            if m:
                guest_cpus = m.group(1)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    commit = subprocess.run(['git', '-C', root, 'describe', '--always', '--dirty'],
                            capture_output=True, text=True).stdout.strip() or '?'
    qemu = '?'
    try:
        qemu = subprocess.run(['qemu-system-x86_64', '--version'], capture_output=True,
                              text=True, timeout=10).stdout.splitlines()[0].strip()
        qemu = re.sub(r'^QEMU emulator version', 'QEMU', qemu)
    except (OSError, IndexError, subprocess.SubprocessError):
        pass
    date = subprocess.run(['date', '-u', '+%Y-%m-%d %H:%M UTC'], capture_output=True,
                          text=True).stdout.strip()
    meta = {'command': a.command, 'commit': commit, 'qemu': qemu, 'nproc': os.cpu_count(), 'cpu_model': cpu_model,
            'emulation': 'QEMU TCG', 'guest_cpus': guest_cpus, 'guest_kernel': guest_kernel,
            'rounds': a.rounds, 'secs': a.secs, 'date': date,
            'steps_expected': [s for s in a.steps.split(',') if s],
            'no_wrk': no_wrk}
    res = build(rounds, pool, percpu, steps, splats_outside)
    meta['all_rounds'] = rounds
    udp = [r for r in rounds if r['workload'].startswith('iperf_udp_') and r['nta'] == '1'
           and not r['why']]
    if udp:
        meta['udp_mix'] = mem_of(udp)
    txt = table(res, pool, percpu, bench, steps, splats_outside, meta)
    with open(os.path.join(a.out, 'table.txt'), 'w') as f:
        f.write(txt)
    with open(os.path.join(a.out, 'summary.txt'), 'w') as f:
        f.write(summary(res, meta))
    sys.stdout.write(txt)
    problems = problem_lines(res, steps, splats_outside, meta)
    if not a.boot_ok:
        problems.append('the boot did not finish its plan')
    frag = fragmentation(pool, percpu)
    meta.pop('all_rounds', None)
    doc = {'meta': meta, 'workloads': res, 'pool_end': pool,
           'pool_end_partial_free_bytes': frag and frag[0],
           'pool_end_partial_free_exact': frag and frag[1],
           'pool_end_percpu': percpu, 'bench': bench, 'guest_steps': steps,
           'splats_outside_rounds': splats_outside, 'problems': problems,
           'rounds': rounds}
    with open(os.path.join(a.out, 'results.json'), 'w') as f:
        json.dump(doc, f, indent=1)
    err = plot(res, a.out)
    if err:
        print('    plot: ' + err, file=sys.stderr)
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
