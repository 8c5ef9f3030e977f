/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NTA per-CPU bins: exact-length LIFO bins of freed objects in front of a
 * CPU's pool.  Plain data and the operations on it: no per-CPU state, no
 * timer, no lock, so that the userspace harness (tools/testing/nta)
 * compiles this file unchanged.  The caller excludes everyone else: the
 * CPU's fast-path mark (nta_internal.h), or a CPU that is not running.
 * The inline fast paths (nta_fast.h) run copies of the pop, the park and
 * the room test on this CPU's bins with per-CPU operations.
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
 * of other CPUs' frees overflow them; a full bin merges its older half,
 * NTA_FLUSH_BATCH objects at most).  The CPU's bound is kept by grants:
 * each bin may hold what it was granted of the CPU's budget, which the
 * slow paths hand out and take back, so that the fast paths test and
 * change one count (a bin's room under its grant) and keep no total.
 * The bins are
 * merged before the pool grows, on trim, shrinker and nta_drain_all(),
 * when a CPU dies and when net.core.nta is switched off, so coalescing
 * is deferred, never lost (but in a quarantined pool, which merges
 * nothing), and the bins do not make the pool grow (but for
 * a context nested in the fast path, which cannot empty them).  Those who
 * run with interrupts off merge them a bounded batch at a time
 * (nta_bins_flush_some(), nta_bins_trim_some()), so that raised caps do
 * not lengthen any section with interrupts off.  An object
 * in a bin is free for the statistics (free_bytes, binned_bytes), used
 * for the bitmaps, and its length byte (nta_unit_meta.cls) is 0, so a second
 * free of it is refused like any double free.
 */
#ifndef _NET_CORE_ALLOC_NTA_BINS_H
#define _NET_CORE_ALLOC_NTA_BINS_H

#include "nta_core_inline.h"

/*
 * Per-CPU bins: at most NTA_BIN_MAX objects and NTA_BIN_BYTES bytes per
 * bin, NTA_BINS_UNITS units granted to all the bins of one CPU.  A grant
 * covers a bin's objects out as well as those parked (a bin that handed
 * out its objects keeps room for their return), so the bins are granted
 * twice what they were allowed to hold when a total of parked units was
 * kept on the fast path (64 KiB): with 64 KiB of grants, a FIFO of mixed
 * lengths deeper than the budget took about twice the slow paths.  The
 * bins hold at most what they were granted, except while caps a decay
 * tick lowered are being enforced.
 */
#define NTA_BIN_MAX		32
#define NTA_BIN_BYTES		(16 * 1024)
#define NTA_BINS_UNITS		((128 * 1024) / NTA_UNIT)
/*
 * A drain that finds the bins full merges what they cannot take, and the
 * owner splits the same lengths off again for its next allocations: a CPU
 * that allocates what another CPU frees does both for every object.  So
 * the bins follow that load: each drain that had to merge doubles all
 * three caps, up to 2^NTA_BIN_SHIFT_MAX times (2 MiB per CPU), and an
 * NTA_BIN_DECAY tick without such a drain halves them again and trims
 * every bin to its lowered cap, then the bins to the CPU's, a batch at a
 * time.  A burst may raise them in a few drains; they come down by one
 * step a tick, so under a steady load they may swing between two steps.
 * page_pool's ptr_ring, which takes back the pages other CPUs free, holds
 * 1024 pages per queue by default for the same reason.  The cost: the
 * memory, which the shrinker counts and trims above the base caps.
 */
#define NTA_BIN_SHIFT_MAX	4

/**
 * struct nta_bin - one length's bin
 * @room: how many more objects the bin may take: @cap less the objects it
 *	holds (nta_bin_nr()), below 0 while caps a decay tick lowered are
 *	being enforced; the one count the fast paths test and change, so
 *	that a free compares one field with 0.  First, at the slot's own
 *	address, which the free's test and its decrement share
 * @cap: the most objects the bin may hold now: what it was granted of the
 *	CPU's @limit (nta_bin_grant()), at most its base cap at the bins'
 *	shift (nta_bin_cap_max()); changed with its @room (nta_bin_set_cap())
 * @room_cap: @room and @cap as one word
 * @live: objects of this length allocated on this CPU and not freed here
 *	yet, kept by whoever owns the bins (nta_account()); not the bins'
 *	own, but the fast path updates it with them.  Unsigned: a CPU that
 *	allocates what another frees counts up for ever, the other down,
 *	both wrapping; the counts are summed modulo 2^32 (nta_stats.c)
 * @head: a LIFO of freed objects of this length, linked through a word a
 *	quarter into each (nta_bin_link_at()), that the fast path hands out
 *	again as is
 *
 * Sixteen bytes on 64-bit, four to a cache line: an allocation or a free
 * of one length reads and writes one slot, not one line in each of four
 * arrays.  A new cap is stored with its room in one word, which other
 * CPUs read, so that they see the two in step.
 */
struct nta_bin {
	union {
		struct {
			s16 room;
			u16 cap;
		};
		u32 room_cap;
	};
	u32 live;
	void *head;
};

/* The objects a bin holds, for its owner. */
static inline unsigned int nta_bin_nr(const struct nta_bin *bin)
{
	return bin->cap - bin->room;
}

/*
 * The same for readers on other CPUs (statistics, the shrinker, tests),
 * from one load of @room_cap: the owner changes @room alone, or both
 * with one store (nta_bin_set_cap()).
 */
static inline unsigned int nta_bin_nr_seen(const struct nta_bin *bin)
{
	struct nta_bin seen = { .room_cap = READ_ONCE(bin->room_cap) };

	return nta_bin_nr(&seen);
}

/* A new cap: the objects the bin holds stay, its room follows. */
static inline void nta_bin_set_cap(struct nta_bin *bin, unsigned int cap)
{
	struct nta_bin new = {
		.room = (int)cap - (int)nta_bin_nr(bin),
		.cap = cap,
	};

	WRITE_ONCE(bin->room_cap, new.room_cap);
}

/**
 * struct nta_bins - one CPU's bins
 * @granted: units granted to the bins, each slot's @cap times its length
 *	summed: the most they may hold, except while lowered caps are being
 *	enforced (@over_caps); at most @limit, except then too
 * @shift: the caps are NTA_BIN_MAX, NTA_BIN_BYTES and NTA_BINS_UNITS times
 *	2^@shift; raised by drains that found the bins full, lowered by the
 *	decay tick (see NTA_BIN_SHIFT_MAX); @limit and the slots' caps
 *	follow it (nta_bins_set_shift())
 * @closed: the pool was quarantined: the bins were dropped and their caps
 *	stay 0 (nta_bins_close())
 * @over_caps: the caps were lowered and the bins may hold more than them,
 *	until nta_bins_trim_some() has merged what is above
 * @open: the bins may hold objects, and the CPU's decay tick runs; shut,
 *	they are empty, every cap is 0 and a free parks nothing without a
 *	slow path, which opens them and starts the tick (nta_bin_push())
 * @limit: the most units all the bins may be granted, at @shift
 * @overflows: objects drains merged since the last tick because the bins
 *	were full: a drain that saw one raises the caps (nta_bins_raise()),
 *	a tick without any lowers them (nta_bins_lower())
 * @held: the lengths whose bins have a grant (a cap above 0): the walks
 *	of the slow paths (reclaim, flush, count) visit only those
 * @slot: per object length in units, its bin; first, and struct nta_bins
 *	first in struct nta_cpu, so that the slot of @units units is @units
 *	times sizeof(struct nta_bin) into the CPU's per-CPU area: the offset
 *	of the bin link in an object of that length (nta_bin_link_at())
 */
struct nta_bins {
	struct nta_bin slot[NTA_NR_LISTS] __aligned(16);
	unsigned int granted;
	u8 shift;
	bool closed;
	bool open;
	bool over_caps;
	unsigned int limit;
	unsigned int overflows;
	DECLARE_BITMAP(held, NTA_NR_LISTS);
};

/*
 * Units parked in all the bins, counted, for their owner: the fast paths
 * keep no total (a free tests its bin's room under its cap, nothing
 * else), so this walks the slots.  For the slow paths that need the
 * figure; whether the bins may hold anything at all is @granted.
 */
static inline unsigned int nta_bins_units(const struct nta_bins *b)
{
	unsigned int units = 0, u;

	/* A bin that holds objects has a grant. */
	for_each_set_bit(u, b->held, NTA_NR_LISTS)
		units += nta_bin_nr(&b->slot[u]) * u;
	return units;
}

/*
 * The same, for readers on other CPUs (statistics, the shrinker): each
 * count read once, as the owner may change it meanwhile.
 */
static inline unsigned long nta_bins_units_seen(const struct nta_bins *b)
{
	unsigned long units = 0;
	unsigned int u;

	for (u = 1; u < NTA_NR_LISTS; u++)
		units += (unsigned long)nta_bin_nr_seen(&b->slot[u]) * u;
	return units;
}

/*
 * Provided by the code that embeds the bins (nta_report.c, the harness):
 * a bin's link was found overwritten, and the bin dropped.
 */
void nta_report_bad_bin(const void *obj, unsigned int units);

/* Objects a bin holds at most at the base caps, by length in units. */
extern u8 nta_bin_base_cap[NTA_NR_LISTS];

/* What nta_bin_base_cap[] holds for @units units, worked out at init. */
static inline unsigned int nta_bin_base_cap_of(unsigned int units)
{
	return clamp_t(unsigned int, NTA_BIN_BYTES / (units * NTA_UNIT), 1,
		       NTA_BIN_MAX);
}

/*
 * A binned object of @units units links it to the next object in its bin
 * through a word inside it, not its first, as SLUB has kept its free
 * pointer inside the object (in its middle) since 5.7: out of reach of a
 * write through a stale pointer to the object's start (an skb's
 * headroom) and of a small overflow of the object below (16 bytes of a
 * one-unit object, against SLUB's 32).  The word is @units times
 * sizeof(struct nta_bin) in, a quarter of the object with 64-byte units,
 * because that is also the offset of the length's slot in this CPU's
 * area (struct nta_bins), so that the fast paths work out one shift for
 * both.  The middle was no safer for skb heads: either lands in some
 * heads' struct skb_shared_info (the link in a 6-unit head lies on
 * @dataref, as the middle did in a 9-unit head).  The link is stored as
 * the core stores free-list links (struct nta_chunk): with
 * CONFIG_SLAB_FREELIST_HARDENED, XORed with a secret and with the
 * byte-swapped address of the word.
 */
static __always_inline void **nta_bin_link_at(const void *obj,
					      unsigned int units)
{
	return (void **)(obj + units * sizeof(struct nta_bin));
}

static __always_inline void *nta_bin_link(const void *at, const void *ptr)
{
	return (void *)((unsigned long)ptr ^ nta_link_key(at));
}

/* The object after @obj in its bin of @units units, or NULL. */
static __always_inline void *nta_bin_next(const void *obj, unsigned int units)
{
	void **at = nta_bin_link_at(obj, units);

	return nta_bin_link(at, *at);
}

static __always_inline void nta_bin_set_next(void *obj, unsigned int units,
					     const void *next)
{
	void **at = nta_bin_link_at(obj, units);

	*at = nta_bin_link(at, next);
}

/*
 * The most objects the bin of @units units may be granted: its base cap
 * at the bins' shift, 0 in closed bins.  The bin of 0 units has a base
 * cap of 0 and stays shut, which sends a size of 0 from the fast paths to
 * the slow ones (nta_fast_size()).
 */
static inline unsigned int nta_bin_cap_max(const struct nta_bins *b,
					   unsigned int units)
{
	return b->closed ? 0 : nta_bin_base_cap[units] << b->shift;
}

/* A bin gives back what it was granted above what it holds. */
static inline void nta_bin_cut(struct nta_bins *b, unsigned int units)
{
	struct nta_bin *bin = &b->slot[units];

	if (bin->room > 0) {
		b->granted -= bin->room * units;
		nta_bin_set_cap(bin, nta_bin_nr(bin));
		if (!bin->cap)
			__clear_bit(units, b->held);
	}
}

/*
 * Every bin gives back what it does not use: each decay tick, for shut
 * bins, for lowered caps, and once per drain that finds the budget spent
 * (nta_bin_grant_once()).  A walk of the bins that hold grants (@held).
 */
static inline void nta_bins_reclaim(struct nta_bins *b)
{
	unsigned int u;

	for_each_set_bit(u, b->held, NTA_NR_LISTS)
		nta_bin_cut(b, u);
}

/*
 * Every bin gives back half of what it does not use, rounded up: for the
 * owner's free that finds the budget spent.  Half, so that the bins of
 * lengths whose objects are out keep room for some of their return,
 * which would otherwise each take a slow path.
 */
static inline void nta_bins_reclaim_half(struct nta_bins *b)
{
	struct nta_bin *bin;
	unsigned int u, give;

	for_each_set_bit(u, b->held, NTA_NR_LISTS) {
		bin = &b->slot[u];
		if (bin->room <= 0)
			continue;
		give = (bin->room + 1) / 2;
		nta_bin_set_cap(bin, bin->cap - give);
		b->granted -= give * u;
		if (!bin->cap)
			__clear_bit(u, b->held);
	}
}

/*
 * The bins' caps at 2^@shift times their base, when the shift changes (a
 * drain's overflow, a decay tick, a reset): the CPU's limit follows, and
 * grants above a lowered cap go; if the bins were granted more than the
 * lowered limit, what they do not use goes too.  The rest, objects above
 * a cap or the limit, is merged a batch at a time (nta_bins_trim_some()).
 */
static inline void nta_bins_set_shift(struct nta_bins *b, unsigned int shift)
{
	unsigned int u, max;

	if (shift < b->shift)
		b->over_caps = true;
	WRITE_ONCE(b->shift, shift);
	b->limit = b->closed ? 0 : NTA_BINS_UNITS << shift;
	for_each_set_bit(u, b->held, NTA_NR_LISTS) {
		max = nta_bin_cap_max(b, u);
		if (b->slot[u].cap > max) {
			b->granted -= (b->slot[u].cap - max) * u;
			nta_bin_set_cap(&b->slot[u], max);
			if (!max)
				__clear_bit(u, b->held);
		}
	}
	if (b->granted > b->limit)
		nta_bins_reclaim(b);
}

/*
 * Open shut bins (empty, no grants): the caller has started the decay
 * tick, which shuts them again once they are empty and idle
 * (nta_bins_shut()).
 */
static inline void nta_bins_open(struct nta_bins *b)
{
	WRITE_ONCE(b->open, true);
}

/*
 * Shut empty bins: their grants go, so the fast path parks nothing, and
 * the decay tick stops.
 */
static inline void nta_bins_shut(struct nta_bins *b)
{
	nta_bins_reclaim(b);
	WRITE_ONCE(b->open, false);
}

/*
 * Room for one more object of @units units in its bin, within its grant:
 * the fast path's one test (nta_this_bin_has_room() in nta_fast.h, kept
 * in step).  The CPU's budget is kept by the grants.
 */
static __always_inline bool nta_bin_has_room(const struct nta_bins *b,
					     unsigned int units)
{
	return b->slot[units].room > 0;
}

/*
 * A bin full at its grant takes more of the CPU's budget, for a slow
 * path: as much again as it was granted (1 at first), at most what its
 * cap at the shift allows and what is left of the limit, so that a bin in
 * use reaches its cap in a few slow frees.  A bin above its cap (lowered
 * caps, not trimmed yet) gets nothing.  Returns whether it has room now.
 */
static inline bool nta_bin_grant(struct nta_bins *b, unsigned int units)
{
	struct nta_bin *bin = &b->slot[units];
	unsigned int add, max;

	if (bin->room > 0)
		return true;
	max = nta_bin_cap_max(b, units);
	/* Also for 0 units, whose cap at most is 0: no division by 0. */
	if (bin->room < 0 || bin->cap >= max ||
	    b->granted + units > b->limit)
		return false;
	add = min3(max - bin->cap,
		   max_t(unsigned int, bin->cap, 1),
		   (b->limit - b->granted) / units);
	__set_bit(units, b->held);
	nta_bin_set_cap(bin, bin->cap + add);
	b->granted += add * units;
	return true;
}

/*
 * nta_bin_grant() for one of a run of frees (a drain's) that takes back
 * unused grants at most once (*@reclaimed): the first free that finds
 * the budget spent walks the bins (nta_bins_reclaim()), and no other, so
 * that a drain walks them at most once however many objects it brings.
 */
static inline bool nta_bin_grant_once(struct nta_bins *b, unsigned int units,
				      bool *reclaimed)
{
	struct nta_bin *bin = &b->slot[units];

	if (nta_bin_grant(b, units))
		return true;
	/* Refused for want of budget only: full at a grant below its cap. */
	if (*reclaimed || bin->room ||
	    bin->cap >= nta_bin_cap_max(b, units))
		return false;
	*reclaimed = true;
	nta_bins_reclaim(b);
	return nta_bin_grant(b, units);
}

/*
 * An object whose free its caller has already marked (its length byte
 * cleared, a new generation: nta_mark_dead(), nta_unit_claim()) goes into
 * its bin: no longer live, but not merged yet either.  The fast free's
 * copy is nta_this_bin_park() (nta_fast.h): keep the two in step.
 */
static __always_inline void __nta_bin_park(struct nta_bins *b, void *ptr,
					   unsigned int units)
{
	struct nta_bin *bin = &b->slot[units];

	nta_bin_set_next(ptr, units, bin->head);
	bin->head = ptr;
	bin->room--;
}

/* An object goes into its bin; the caller has checked its length byte. */
static __always_inline void nta_bin_park(struct nta_bins *b, void *ptr,
					 unsigned int units)
{
	struct nta_block *blk = nta_block_of(ptr);

	nta_mark_dead(blk, nta_unit_of(blk, ptr));
	__nta_bin_park(b, ptr, units);
}

/*
 * Drop a bin whose link was overwritten: its objects stay out of use, as
 * a quarantined pool's free chunks do, rather than hand out an address
 * that came from a write after free.
 */
static inline void nta_bin_drop(struct nta_bins *b, unsigned int units)
{
	b->slot[units].room = b->slot[units].cap;
	b->slot[units].head = NULL;
	nta_bin_cut(b, units);
}

/*
 * The most recently binned object of @units units, handed out, or NULL.
 * Its link is followed only when it is plausible (as the core's free-list
 * links are, nta_link_plausible()): NULL or on a unit boundary.  The fast
 * allocation's copy is nta_this_bin_pop() (nta_fast.h): keep the two in
 * step.
 */
static __always_inline void *nta_bin_pop(struct nta_bins *b,
					 unsigned int units)
{
	void *obj = b->slot[units].head, *next;
	struct nta_block *blk;

	if (unlikely(!obj))
		return NULL;
	next = nta_bin_next(obj, units);
	if (nta_links_checked() &&
	    unlikely((unsigned long)next & (NTA_UNIT - 1))) {
		nta_bin_drop(b, units);
		nta_report_bad_bin(obj, units);
		return NULL;
	}
	b->slot[units].head = next;
	b->slot[units].room++;
	blk = nta_block_of(obj);
	nta_mark_live(blk, nta_unit_of(blk, obj), units);
	return obj;
}

/*
 * The pool was quarantined (its links were found overwritten): drop every
 * bin, as a bin with a bad link is dropped (nta_bin_drop()), and take no
 * more objects, so that nothing is handed out from a broken pool.  The
 * binned objects stay out of use with the pool's free chunks rather than
 * be merged: that would follow bin links in memory already known to be
 * written after free (a planted link could name a live object, which the
 * merge would mark free), and walk up to the bins' limit with interrupts
 * off.  Dropping follows no link: a few stores per length.
 */
static inline void nta_bins_close(struct nta_bins *b)
{
	unsigned int u;

	for (u = 1; u < NTA_NR_LISTS; u++)
		nta_bin_drop(b, u);
	b->closed = true;
	nta_bins_set_shift(b, b->shift);
}

/*
 * Whether @pool is quarantined, its bins closed first if they were not:
 * every merge of bins asks before it follows a link, so that the first of
 * them to find the pool broken closes the bins, whichever path it is
 * (an allocation or a free, the decay tick, a trim, the shrinker, a dead
 * CPU's flush).
 */
static inline bool nta_bins_pool_broken(struct nta_bins *b,
					const struct nta_pool *pool)
{
	if (likely(!nta_pool_broken(pool)))
		return false;
	if (!b->closed)
		nta_bins_close(b);
	return true;
}

/*
 * Give all but the @keep most recently freed objects of a bin back to
 * @pool, which merges them with their free neighbours.  The caller also
 * holds @pool's lock (or owns a dead CPU's pool).
 */
static inline void nta_bin_trim(struct nta_bins *b, struct nta_pool *pool,
				unsigned int units, unsigned int keep,
				struct list_head *released)
{
	void *obj = b->slot[units].head, *last = NULL, *next;
	struct nta_block *blk;

	while (keep-- && obj) {
		last = obj;
		obj = nta_bin_next(obj, units);
	}
	if (last)
		nta_bin_set_next(last, units, NULL);
	else
		b->slot[units].head = NULL;
	for (; obj; obj = next) {
		next = nta_bin_next(obj, units);
		blk = nta_block_of(obj);
		nta_free_units(pool, blk, nta_unit_of(blk, obj), units,
			       released);
		b->slot[units].room++;
		/* That merge found the pool's links overwritten: stop here. */
		if (nta_bins_pool_broken(b, pool))
			return;
	}
}

/*
 * Objects every merge of bins takes at once with interrupts off: the
 * flushes and trims below go a batch of them at a time.
 */
#define NTA_FLUSH_BATCH		64

/*
 * Merge at most @max binned objects, from the shortest length up, the
 * oldest of each bin first, for a caller that bounds its time with
 * interrupts off and flushes a batch per hold of the lock.  Each bin it
 * reaches gives back the grant it no longer uses, so that bins flushed
 * empty hold no budget.  Returns whether objects are left.
 */
static inline bool nta_bins_flush_some(struct nta_bins *b,
				       struct nta_pool *pool, unsigned int max,
				       struct list_head *released)
{
	unsigned int u, nr, take;

	if (nta_bins_pool_broken(b, pool))
		return false;
	/* A bin that holds objects has a grant, and its bit in @held. */
	for_each_set_bit(u, b->held, NTA_NR_LISTS) {
		nr = nta_bin_nr(&b->slot[u]);
		take = min(nr, max);
		if (nr && !take)
			return true;
		if (take)
			nta_bin_trim(b, pool, u, nr - take, released);
		nta_bin_cut(b, u);
		if (take < nr)
			return true;
		max -= take;
	}
	return false;
}

/*
 * Empty every bin at once, for a pool whose CPU is dead (everyone else
 * merges a batch at a time).
 */
static inline void nta_bins_flush(struct nta_bins *b, struct nta_pool *pool,
				  struct list_head *released)
{
	nta_bins_flush_some(b, pool, UINT_MAX, released);
}

/*
 * Batches nta_bins_make_room() merges at most for the CPU's cap: enough
 * for an object of the longest length when the bins were at the cap, as
 * a batch that leaves objects merged NTA_FLUSH_BATCH of a unit or more.
 */
#define NTA_ROOM_BATCHES	(NTA_NR_LISTS / NTA_FLUSH_BATCH + 1)

/*
 * Make room for the owner's free of an object of @units units that the
 * fast path could not park.  A bin full at its cap merges its older half
 * (at most NTA_FLUSH_BATCH objects).  A bin full at its grant takes more
 * (nta_bin_grant()); if the CPU's budget is spent, every bin first gives
 * back half of what it does not use (nta_bins_reclaim_half()), then bins
 * merge from the shortest length up, each giving back the grant it no
 * longer uses, until the object fits (at most NTA_ROOM_BATCHES batches;
 * a full bin's halving returns before any of them), rather than let
 * lengths that went out of use keep out the current ones: bounded, as
 * interrupts are off.  Returns whether the object fits now; it does not
 * when it is longer than the CPU's cap, or while the bins are still above
 * caps that a decay tick has just lowered (nta_bins_trim_some()).
 */
static inline bool nta_bins_make_room(struct nta_bins *b,
				      struct nta_pool *pool,
				      unsigned int units,
				      struct list_head *released)
{
	struct nta_bin *bin = &b->slot[units];
	unsigned int nr = nta_bin_nr(bin), batch;

	if (nta_bins_pool_broken(b, pool))
		return false;
	if (bin->room > 0)
		return true;
	if (bin->cap >= nta_bin_cap_max(b, units)) {
		nta_bin_trim(b, pool, units,
			     nr - min_t(unsigned int, nr - nr / 2,
					NTA_FLUSH_BATCH), released);
		return bin->room > 0;
	}
	if (b->granted + units > b->limit)
		nta_bins_reclaim_half(b);
	for (batch = 0; batch < NTA_ROOM_BATCHES; batch++) {
		if (b->granted + units <= b->limit ||
		    !nta_bins_flush_some(b, pool, NTA_FLUSH_BATCH, released))
			break;
	}
	return nta_bin_grant(b, units);
}

/*
 * Binned objects may merge into a chunk of @size bytes when the pool has
 * none: merge them a batch at a time, trying after each, and at most
 * NTA_GROW_FLUSH_BATCHES batches per hold of the lock, which bounds the
 * time spent with interrupts off.  The slow path takes the lock again
 * for more, interrupts on in between, at most NTA_GROW_MERGE_HOLDS times
 * (enough for bins at their highest cap) before the pool grows.
 */
#define NTA_GROW_FLUSH_BATCHES	4
#define NTA_GROW_MERGE_HOLDS						\
	((NTA_BINS_UNITS << NTA_BIN_SHIFT_MAX) /			\
	 (NTA_GROW_FLUSH_BATCHES * NTA_FLUSH_BATCH) + 1)

static inline void *nta_bins_alloc_merged(struct nta_bins *b,
					  struct nta_pool *pool,
					  unsigned int size,
					  struct list_head *released)
{
	unsigned int batches = NTA_GROW_FLUSH_BATCHES;
	void *obj = NULL;
	bool more = true;

	while (!obj && more && batches--) {
		more = nta_bins_flush_some(b, pool, NTA_FLUSH_BATCH, released);
		obj = __nta_pool_alloc(pool, size);
	}
	return obj;
}

/*
 * A drain merged objects because the bins were full: double their caps
 * (see NTA_BIN_SHIFT_MAX).  Returns false when they are at the top.
 */
static inline bool nta_bins_raise(struct nta_bins *b)
{
	if (b->shift >= NTA_BIN_SHIFT_MAX)
		return false;
	nta_bins_set_shift(b, b->shift + 1);
	return true;
}

/*
 * A decay tick: bins that no drain overflowed since the last one halve
 * their caps; the caller then merges what is above them while
 * @over_caps says so (nta_bins_trim_some()).  Returns whether it
 * lowered them.
 */
static inline bool nta_bins_lower(struct nta_bins *b)
{
	bool lower = !b->overflows && b->shift;

	if (lower)
		nta_bins_set_shift(b, b->shift - 1);
	b->overflows = 0;
	return lower;
}

/*
 * After the caps were lowered: merge what each bin holds above its cap,
 * its oldest objects, then, if the bins still hold more than the CPU's
 * cap, from the shortest length up what is left of @max (which may take
 * them below it); at most @max objects, for a caller that bounds its time
 * with interrupts off as for nta_bins_flush_some().  Returns whether more
 * is left above the caps; clears @over_caps when nothing is.
 */
static inline bool nta_bins_trim_some(struct nta_bins *b,
				      struct nta_pool *pool, unsigned int max,
				      struct list_head *released)
{
	unsigned int u, nr, over, take;

	if (nta_bins_pool_broken(b, pool)) {
		b->over_caps = false;
		return false;
	}
	/* A bin above its cap has one: a cap is 0 only in an empty bin. */
	for_each_set_bit(u, b->held, NTA_NR_LISTS) {
		if (b->slot[u].room >= 0)
			continue;
		if (!max)
			return true;
		nr = nta_bin_nr(&b->slot[u]);
		over = -b->slot[u].room;
		take = min(over, max);
		nta_bin_trim(b, pool, u, nr - take, released);
		if (take < over)
			return true;
		max -= take;
	}
	if (b->granted > b->limit && max)
		nta_bins_flush_some(b, pool, max, released);
	if (b->granted > b->limit)
		return true;
	b->over_caps = false;
	return false;
}

#endif /* _NET_CORE_ALLOC_NTA_BINS_H */
