# SPDX-License-Identifier: GPL-2.0
"""The footprint rows of make demo / make bench (nta-bench-report.py): what each contender
took from the page allocator for skb heads, per byte of live heads asked for.

The guest (scripts/nta-init, fp_* and mem_sample) sums over a round's samples, taken
every 0.5 s: fpblk, NTA's blocks (nta/summary block_bytes: headers, free chunks, bins,
spares, reserve, live objects); fpslab, the pages of the slab caches that hold heads
(skbuff_small_head, kmalloc-1k..8k, the slab classes), above their state after a shrink
at the start of the round; fplarge, kmalloc_large() heads above the same start; mreq and
mres, NTA's requested_bytes and reserved_bytes; hreq and hobj, the bytes asked for and
the object bytes of the heads NTA did not serve (nta/bench_heads).  A round's setting:
1 NTA, 0 mainline, s the slab classes of bench/nta_bench_heads.c.  NTA's rounds count
the heads it did not serve on its side: their slab pages and the bytes they asked for.
"""

SETTINGS = (('1', 'NTA'), ('0', 'mainline'), ('s', 'slab classes'))


def _sums(nr, v):
    s = lambda k: sum(r.get(k, 0) for r in nr)  # noqa: E731
    nta = v == '1'
    slab = None if any(r.get('fpslab') == '-' for r in nr) else s('fpslab')
    req = s('hreq') + (s('mreq') if nta else 0)
    fp = None if slab is None else slab + s('fplarge') + (s('fpblk') if nta else 0)
    return req, fp, s('hobj') + (s('mres') if nta else 0), s('nsamp'), slab


def footprint(rounds):
    """Per setting, the clean rounds of ROUNDS (one workload or a mix): sums over all
    samples of all rounds, and each round's own footprint per requested byte."""
    out = {}
    for v, _ in SETTINGS:
        nr = [r for r in rounds if r.get('nta') == v and not r['why'] and 'hreq' in r]
        if not nr:
            out[v] = None
            continue
        req, fp, obj, ns, slab = _sums(nr, v)
        per_round = []
        for r in nr:
            q, f = _sums([r], v)[:2]
            if q > 0 and f is not None:
                per_round.append(f / q)
        out[v] = {
            'rounds': len(nr), 'samples': ns,
            'avg_live_requested': req / ns if ns else None,
            'avg_footprint': fp / ns if ns and fp is not None else None,
            'avg_nta_blocks': sum(r.get('fpblk', 0) for r in nr) / ns if ns and v == '1' else None,
            'avg_slab_pages': slab / ns if ns and slab is not None else None,
            'avg_large_pages': sum(r.get('fplarge', 0) for r in nr) / ns if ns else None,
            'footprint_per_requested': fp / req if req > 0 and fp is not None else None,
            'object_per_requested': obj / req if req > 0 else None,
            'footprint_per_requested_rounds': per_round,
        }
    for key in ('footprint_per_requested', 'object_per_requested'):
        n = out['1'] and out['1'][key]
        for v, name in (('0', 'mainline'), ('s', 'slab')):
            d = out[v] and out[v][key]
            out.setdefault('ratios', {})[f'{key}_nta_over_{name}'] = n / d if n and d else None
    return out


def _f(v):
    return '-' if v is None else f'{v:.2f}' if v < 10 else f'{v:.1f}'


def _rng(st):
    """The setting's figure with the min-max of its rounds."""
    if not st or st['footprint_per_requested'] is None:
        return '-'
    r = st['footprint_per_requested_rounds']
    return f"{_f(st['footprint_per_requested'])} [{_f(min(r))}-{_f(max(r))}]" if len(r) > 1 else \
        _f(st['footprint_per_requested'])


def lines(rows, row):
    """The memory section's lead: ROWS (label, footprint()), ROW the report's row formatter."""
    w = (8, 22, 17, 17, 8, 8)
    out = ['', 'skb head footprint per live requested byte (lower is better): the bytes each allocator took',
           'from the page allocator for skb heads (NTA: all of its blocks, reserve and spares included,',
           'plus slab pages of heads it did not serve; mainline and slab classes: pages of the slab caches',
           'holding heads and kmalloc_large() heads, above the idle state after a shrink at the start of',
           'each round) over the bytes the skb layer asked for (SKB_HEAD_ALIGN() of each head), sampled every',
           '0.5 s; sums over all samples of the clean rounds, [min-max] of the rounds; slab classes:',
           'bench-only kmem_caches, 4 per power of two from 768 B to 16 KiB (bench/nta_bench_heads.c)',
           row('workload', ('avg live', 'NTA', 'mainline', 'slab classes', 'NTA/main', 'NTA/slab'), w)]
    kib = lambda v: '-' if v is None else f'{v / 1024:.0f}K'  # noqa: E731
    for label, fp in rows:
        live = next((fp[v]['avg_live_requested'] for v, _ in SETTINGS if fp.get(v)), None)
        rt = fp.get('ratios', {})
        out.append(row(label, (kib(live),) + tuple(_rng(fp.get(v)) for v, _ in SETTINGS) +
                       (_f(rt.get('footprint_per_requested_nta_over_mainline')),
                        _f(rt.get('footprint_per_requested_nta_over_slab'))), w))
    out += ['', 'the same footprint, average bytes (NTA: its blocks + slab pages + kmalloc_large pages)',
            row('workload', ('', 'NTA', 'mainline', 'slab classes', '', ''), w)]
    for label, fp in rows:
        n = fp.get('1')
        nta = n and n['avg_footprint'] is not None and (
            f"{kib(n['avg_footprint'])} ({kib(n['avg_nta_blocks'])}+{kib(n['avg_slab_pages'])}"
            f"+{kib(n['avg_large_pages'])})")
        out.append(row(label, ('', nta or '-') + tuple(kib(fp[v] and fp[v]['avg_footprint'])
                                                      for v in ('0', 's')) + ('', ''), w).rstrip())
    out += ['', 'skb head object bytes per live requested byte (not footprint: the objects alone, without',
            'free space in blocks or slabs; NTA: whole units; mainline: kmalloc sizes; slab classes: class sizes)',
            row('workload', ('', 'NTA', 'mainline', 'slab classes', 'NTA/main', 'NTA/slab'), w)]
    for label, fp in rows:
        rt = fp.get('ratios', {})
        out.append(row(label, ('',) + tuple(_f(fp[v] and fp[v]['object_per_requested']) for v, _ in SETTINGS) +
                       (_f(rt.get('object_per_requested_nta_over_mainline')),
                        _f(rt.get('object_per_requested_nta_over_slab'))), w))
    return out


def backlog(log):
    """make demo's backlog step (bench/nta_backlog.c, nta-init t_demo_backlog): per
    setting, the figures of each round from its NTA-BACKLOG and NTA-METRIC backlog lines."""
    mem, cnt, ends = {}, {}, {}
    cur = {}
    for line in log.split('\n'):
        w = line.strip().split()
        if not w:
            continue
        kv = dict(x.split('=', 1) for x in w[1:] if '=' in x)
        if line.startswith('NTA-METRIC backlog ') or w[:2] == ['NTA-METRIC', 'backlog']:
            key = (kv.get('nta'), kv.get('r'))
            cur = key
            mem.setdefault(key, {})[kv.get('phase')] = {
                k: (None if v == '-' else int(v)) for k, v in kv.items() if k not in ('nta', 'r', 'phase')}
        elif w[:2] == ['NTA-METRIC', 'backlog-end']:
            ends[(kv.get('nta'), kv.get('r'))] = int(kv.get('rc', 1))
        elif w[0] == 'NTA-BACKLOG' and cur:
            cnt.setdefault(cur, {}).setdefault(kv['phase'], {})[kv['kind']] = {
                k: int(kv[k]) for k in ('socks', 'msgs', 'bytes', 'refused')}
    out = {}
    for key, ph in mem.items():
        v = key[0]
        if ends.get(key) != 0 or not {'idle', 'fill', 'half', 'shift', 'drained'} <= set(ph):
            continue
        i = ph['idle']

        def fp(p, i=i, v=v):
            m = ph[p]
            if m.get('slab') is None or i.get('slab') is None:
                return None
            return (m['blk'] if v == '1' else 0) + m['slab'] - i['slab'] + m['large'] - i['large']

        def mf(p, i=i):
            return i['memfree'] - ph[p]['memfree']
        c = cnt.get(key, {})
        fill = c.get('fill', {})
        shift = c.get('shift', {})
        pay = sum(x['bytes'] for x in fill.values())
        pay2 = sum(x['bytes'] for x in shift.values())
        r = {'payload_fill': pay, 'payload_shift': pay2,
             'msgs_per_socket': {k: x['msgs'] / x['socks'] for k, x in fill.items() if x['socks']},
             'msgs_per_socket_all': sum(x['msgs'] for x in fill.values()) /
             max(1, sum(x['socks'] for x in fill.values())),
             'footprint_fill': fp('fill'), 'memfree_fill': mf('fill'),
             'fp_per_payload': fp('fill') / pay if pay and fp('fill') is not None else None,
             'memfree_per_payload': mf('fill') / pay if pay else None,
             'shift_extra_fp': None if fp('shift') is None else fp('shift') - fp('half'),
             'shift_fp_per_payload': None if fp('shift') is None or not pay2 else
             (fp('shift') - fp('half')) / pay2,
             'shift_extra_memfree': mf('shift') - mf('half'),
             'left_fp': fp('drained'), 'left_memfree': mf('drained'),
             'nta_blocks_idle': i['blk'], 'nta_blocks_drained': ph['drained']['blk']}
        out.setdefault(v, []).append(r)
    return out


def _median(vals):
    vals = sorted(x for x in vals if x is not None)
    if not vals:
        return None
    n = len(vals)
    return vals[n // 2] if n % 2 else (vals[n // 2 - 1] + vals[n // 2]) / 2


def backlog_lines(bl, row):
    """The backlog table: medians of the rounds per setting, ratios NTA/other."""
    if not bl:
        return [], None
    keys = ('fp_per_payload', 'memfree_per_payload', 'msgs_per_socket_all', 'shift_fp_per_payload', 'shift_extra_fp',
            'shift_extra_memfree', 'left_fp', 'left_memfree')
    med = {v: {k: _median([r[k] for r in bl.get(v, [])]) for k in keys} for v, _ in SETTINGS if bl.get(v)}
    kinds = sorted({k for rs in bl.values() for r in rs for k in r['msgs_per_socket']})
    for v in med:
        for k in kinds:
            med[v]['msgs_' + k] = _median([r['msgs_per_socket'].get(k) for r in bl[v]])
    w = (8,) * (8 + len(kinds))
    kib = lambda x: '-' if x is None else f'{x / 1024:.0f}K'  # noqa: E731
    out = ['', 'Slow-consumer backlog (bench/nta_backlog.c on CPU 0: AF_UNIX dgram and stream pairs, UDP sockets over',
           'loopback and over a veth pair into a network namespace, readers stopped, filled with a mix of 100 B-8',
           'KiB messages until EAGAIN or a drop; then half drained and refilled with 900-1100 B messages; then all',
           'drained and the shrinkers run), median of the rounds: kernel bytes per queued payload byte by footprint',
           '(as above) and by MemFree; messages accepted per socket; extra bytes the shifted mix took (footprint,',
           'per refilled payload byte and in all; MemFree); bytes left after drain and shrink (footprint: NTA all of',
           'its blocks, idle -> after below, the others above the idle state before the round; MemFree: below the',
           'idle state)',
           row('setting', ('fp/pay', 'mf/pay', 'msgs/so') + tuple(k[:8] for k in kinds) +
               ('shift/pay', 'shift fp', 'shift mf', 'left fp', 'left mf'), w)]
    for v, name in SETTINGS:
        m = med.get(v)
        if not m:
            continue
        cells = (_f(m['fp_per_payload']), _f(m['memfree_per_payload']), _f(m['msgs_per_socket_all'])) + \
            tuple(_f(m['msgs_' + k]) for k in kinds) + \
            (_f(m['shift_fp_per_payload']), kib(m['shift_extra_fp']), kib(m['shift_extra_memfree']),
             kib(m['left_fp']), kib(m['left_memfree']))
        out.append(row(name, cells, w))
    if '1' in med:
        for v, name in (('0', 'mainline'), ('s', 'slab classes')):
            if v in med:
                rt = lambda k: (_f(med['1'][k] / med[v][k])  # noqa: E731
                                if med['1'][k] is not None and med[v][k] else '-')
                out.append(row(f'NTA/{name}', (rt('fp_per_payload'), rt('memfree_per_payload'),
                                               rt('msgs_per_socket_all')) + ('',) * len(kinds) +
                               (rt('shift_fp_per_payload'),), w))
        nb = [(r['nta_blocks_idle'], r['nta_blocks_drained']) for r in bl['1']]
        out.append('NTA blocks idle -> after drain and shrink, per round: ' +
                   ', '.join(f'{kib(a)} -> {kib(b)}' for a, b in nb))
    return out, {'rounds': bl, 'medians': med}
