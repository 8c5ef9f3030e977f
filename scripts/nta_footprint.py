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
           'each round) over the bytes the skb layer asked for (small heads count 704 B), sampled every',
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

