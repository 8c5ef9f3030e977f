/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NTA per-CPU bins: exact-length LIFO bins of freed objects in front of a
 * CPU's pool.  Included by nta_internal.h.
 *
 * In front of the pool sits a per-CPU fast path of exact-length bins: a
 * freed object of n units is parked, unmerged, in the LIFO bin for n, and
 * the next allocation of n units takes it back without a split, a merge,
 * a bitmap or a list.  The ideas are borrowed: per-length LIFO bins with
 * deferred coalescing are dlmalloc's fastbins; bins bounded in bytes per
 * length and per CPU are tcmalloc's per-CPU caches; a per-CPU cache that
 * needs no atomics because only its CPU touches it is page_pool's alloc
 * cache; and the exclusion, a per-CPU mark taken with preemption off that
 * a nested context finds set and then goes around, is what SLUB's sheaves
 * do with local_trylock() (6.15+).  No interrupt is disabled on the fast
 * path.  The bins are bounded (NTA_BIN_MAX objects and NTA_BIN_BYTES per
 * bin, NTA_BINS_UNITS per CPU, up to 16 times that for a CPU whose drains
 * of other CPUs' frees overflow them; a full bin merges its older half) and
 * emptied before the pool grows, on trim, shrinker and nta_drain_all(),
 * when a CPU dies and when net.core.nta is switched off, so coalescing
 * is deferred, never lost, and the bins do not make the pool grow (but for
 * a context nested in the fast path, which cannot empty them).  An object
 * in a bin is free for the statistics (free_bytes, binned_bytes), used
 * for the bitmaps, and its length byte (nta_unit_meta.cls) is 0, so a second
 * free of it is refused like any double free.
 */
#ifndef _NET_CORE_ALLOC_NTA_BINS_H
#define _NET_CORE_ALLOC_NTA_BINS_H

/* Objects the bin for @units units holds at most, as the bins stand now. */
static __always_inline unsigned int nta_bin_cap_of(const struct nta_cpu *c,
						   unsigned int units)
{
	return c->bin_cap[units];
}

/*
 * The bins' caps at 2^@shift times their base: each bin's and the CPU's
 * are worked out here, when the shift changes (a drain's overflow, a
 * decay tick, a reset), so that the fast path compares and shifts nothing.
 * Caller holds the mark, or owns a CPU that is not running (init, a dead
 * CPU's pool, the unwind of a failed init).
 */
static inline void nta_bins_set_shift(struct nta_cpu *c, unsigned int shift)
{
	unsigned int u;

	WRITE_ONCE(c->bin_shift, shift);
	c->bins_limit = NTA_BINS_UNITS << shift;
	for (u = 1; u < NTA_NR_LISTS; u++)
		c->bin_cap[u] = nta_bin_base_cap[u] << shift;
}

/* Room for one more object of @units units, in its bin and in the CPU's. */
static __always_inline bool nta_bin_has_room(const struct nta_cpu *c,
					     unsigned int units)
{
	return c->bin_nr[units] < nta_bin_cap_of(c, units) &&
	       c->bin_units + units <= nta_bins_limit(c);
}

/* An object goes into its bin: no longer live, but not merged yet either. */
static __always_inline void nta_bin_park(struct nta_cpu *c, void *ptr,
					 unsigned int units)
{
	struct nta_block *blk = nta_block_of(ptr);

	nta_set_cls(blk, nta_unit_of(blk, ptr), 0);
	nta_bin_set_next(ptr, c->bin[units]);
	c->bin[units] = ptr;
	c->bin_nr[units]++;
	c->bin_units += units;
}

/* The bins are empty and their decay is not running (nta_decay_fn()). */
static __always_inline bool nta_bins_idle(const struct nta_cpu *c)
{
	return unlikely(!c->bin_units) && !timer_pending(&c->decay);
}

/* nta_bin_park(), and the decay started if the bins were idle. */
static __always_inline void nta_bin_push(struct nta_cpu *c, void *ptr,
					 unsigned int units)
{
	if (nta_bins_idle(c))
		mod_timer(&c->decay, jiffies + NTA_BIN_DECAY);
	nta_bin_park(c, ptr, units);
}

/* The most recently binned object of @units units, handed out, or NULL. */
static __always_inline void *nta_bin_pop(struct nta_cpu *c,
					 unsigned int units)
{
	void *obj = c->bin[units];
	struct nta_block *blk;

	if (unlikely(!obj))
		return NULL;
	c->bin[units] = nta_bin_next(obj);
	c->bin_nr[units]--;
	c->bin_units -= units;
	blk = nta_block_of(obj);
	nta_mark_live(blk, nta_unit_of(blk, obj), units);
	return obj;
}

/*
 * Give all but the @keep most recently freed objects of a bin back to the
 * core, which merges them with their free neighbours.  Caller holds the
 * lock and the mark (or owns a dead CPU's pool).
 */
static inline void nta_bin_trim(struct nta_cpu *c, unsigned int units,
				unsigned int keep, struct list_head *released)
{
	void *obj = c->bin[units], *last = NULL, *next;
	struct nta_block *blk;

	while (keep-- && obj) {
		last = obj;
		obj = nta_bin_next(obj);
	}
	if (last)
		nta_bin_set_next(last, NULL);
	else
		c->bin[units] = NULL;
	for (; obj; obj = next) {
		next = nta_bin_next(obj);
		blk = nta_block_of(obj);
		nta_free_units(&c->pool, blk, nta_unit_of(blk, obj), units,
			       released);
		c->bin_nr[units]--;
		c->bin_units -= units;
	}
}

/*
 * Empty every bin: before the pool grows, on trim, hotplug and switch-off,
 * and when they sit idle (nta_decay_fn()).
 */
static inline void nta_bins_flush(struct nta_cpu *c,
				  struct list_head *released)
{
	unsigned int u;

	for (u = 1; u < NTA_NR_LISTS && c->bin_units; u++)
		if (c->bin[u])
			nta_bin_trim(c, u, 0, released);
}

/*
 * A decay tick: bins that no drain overflowed since the last one halve
 * their caps and merge what is above them.  Caller holds the lock and the
 * mark.
 */
static inline void nta_bins_decay(struct nta_cpu *c,
				  struct list_head *released)
{
	unsigned int u;

	if (!c->bin_overflows && c->bin_shift) {
		nta_bins_set_shift(c, c->bin_shift - 1);
		for (u = 1; u < NTA_NR_LISTS; u++)
			if (c->bin_nr[u] > nta_bin_cap_of(c, u))
				nta_bin_trim(c, u, nta_bin_cap_of(c, u),
					     released);
		if (c->bin_units > nta_bins_limit(c))
			nta_bins_flush(c, released);
	}
	c->bin_overflows = 0;
}

#endif /* _NET_CORE_ALLOC_NTA_BINS_H */
