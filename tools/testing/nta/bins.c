// SPDX-License-Identifier: GPL-2.0
/*
 * One harness CPU's bins: net/core/alloc/nta_bins.h, compiled unchanged,
 * and the kernel's glue around it; see bins.h.
 */
#include <string.h>

#include "harness.h"	/* nta_core_inline.h, with the real nta_free_units() */

static void bins_merge(struct nta_pool *pool, struct nta_block *blk,
		       unsigned int unit, unsigned int units,
		       struct list_head *released);

/*
 * nta_bins.h merges what the bins give up with nta_free_units(): here
 * with bins_merge(), which calls it, counts, and tells the tests.  Only
 * for nta_bins.h, which has not been included yet (bins.h includes it
 * again, a no-op then).
 */
#ifdef _NET_CORE_ALLOC_NTA_BINS_H
#error "nta_bins.h included before its nta_free_units() is redirected"
#endif
#define nta_free_units bins_merge
#include "nta_bins.h"
#undef nta_free_units

#include "bins.h"

/* Objects a bin holds at most at the base caps (nta_pools.c). */
u8 nta_bin_base_cap[NTA_NR_LISTS];

/*
 * @released is always a struct bins' own: every call into nta_bins.h
 * here passes &b->released.
 */
static void bins_merge(struct nta_pool *pool, struct nta_block *blk,
		       unsigned int unit, unsigned int units,
		       struct list_head *released)
{
	struct bins *b = container_of(released, struct bins, released);
	LIST_HEAD(gone);

	nta_free_units(pool, blk, unit, units, &gone);
	b->merged++;
	if (b->merged_hook)
		b->merged_hook(b, nta_unit_addr(blk, unit), units,
			       !list_empty(&gone));
	list_splice_init(&gone, released);
}

/* nta_init_bin_caps(), and the per-CPU part of nta_init(). */
void bins_init(struct bins *b)
{
	unsigned int u;

	for (u = 1; u < NTA_NR_LISTS; u++)
		nta_bin_base_cap[u] = nta_bin_base_cap_of(u);
	memset(b, 0, sizeof(*b));
	INIT_LIST_HEAD(&b->released);
	nta_bins_set_shift(&b->bins, 0);
}

/* nta_bin_push() (nta_internal.h), without the decay timer. */
static void bin_push(struct bins *b, void *obj, unsigned int units)
{
	if (!b->bins.open)
		nta_bins_open(&b->bins);
	nta_bin_park(&b->bins, obj, units);
	b->pushes++;
}

/* nta_bin_trim(), as nta_bins_make_room() halves a full bin. */
void bin_trim(struct hcpu *c, struct bins *b, unsigned int units,
	      unsigned int keep)
{
	nta_bin_trim(&b->bins, &c->pool, units, keep, &b->released);
	h_release(c, &b->released);
}

/* nta_bins_flush(), as a dead CPU's pool empties its bins. */
void bins_flush(struct hcpu *c, struct bins *b)
{
	nta_bins_flush(&b->bins, &c->pool, &b->released);
	b->flushes++;
	h_release(c, &b->released);
}

/*
 * nta_bins_merge_batched(): nta_bins_flush_some() a batch at a time, as the
 * decay tick merges idle bins, each batch at most NTA_FLUSH_BATCH objects
 * and all of them but the last.
 */
void bins_flush_idle(struct hcpu *c, struct bins *b)
{
	unsigned long merged;
	bool more;

	do {
		merged = b->merged;
		more = nta_bins_flush_some(&b->bins, &c->pool, NTA_FLUSH_BATCH,
					   &b->released);
		merged = b->merged - merged;
		EXPECT(more ? merged == NTA_FLUSH_BATCH :
			      merged <= NTA_FLUSH_BATCH,
		       "a batch merged %lu objects, more left: %d", merged,
		       more);
		h_release(c, &b->released);
	} while (more);
	EXPECT(!nta_bins_units(&b->bins) && !b->bins.granted,
	       "%u units left in the bins, %u granted",
	       nta_bins_units(&b->bins), b->bins.granted);
	b->flushes++;
}

/* nta_drain_this_cpu() with @trim: the flush, then nta_spares_reset(). */
void bins_reset(struct hcpu *c, struct bins *b)
{
	bins_flush(c, b);
	if (b->bins.shift)
		nta_bins_set_shift(&b->bins, 0);
	b->bins.overflows = 0;
}

/* nta_alloc()'s fast path, then nta_alloc_locked() and its growth. */
void *bins_alloc(struct hcpu *c, struct bins *b, unsigned int size)
{
	void *obj = nta_bin_pop(&b->bins, nta_size_to_units(size));
	unsigned int holds;

	if (obj) {
		b->pops++;
		return obj;
	}
	obj = nta_pool_alloc(&c->pool, size);
	/*
	 * nta_alloc_slow(): binned objects merged, a bounded batch per hold,
	 * NTA_GROW_MERGE_HOLDS holds at most before the pool grows.
	 */
	for (holds = 0; !obj && b->bins.granted &&
	     holds < NTA_GROW_MERGE_HOLDS; holds++) {
		unsigned long merged = b->merged;

		obj = nta_bins_alloc_merged(&b->bins, &c->pool, size,
					    &b->released);
		merged = b->merged - merged;
		EXPECT(merged <= NTA_GROW_FLUSH_BATCHES * NTA_FLUSH_BATCH,
		       "one hold before growth merged %lu objects", merged);
		h_release(c, &b->released);
	}
	return obj ?: h_alloc(c, size);
}

/*
 * The checks of nta_free_fast() and nta_free_slow() on the owner, then the
 * fast path's park into open bins with room, or nta_free_to_bin().
 */
enum nta_bad_free bins_free(struct hcpu *c, struct bins *b, void *obj,
			    unsigned int size)
{
	unsigned int units = nta_size_to_units(size);
	struct nta_block *blk = nta_block_of(obj);
	enum nta_bad_free why;
	unsigned long merged;
	bool fits;

	why = nta_check_object(blk, obj, size);
	if (why)
		return why;
	if (nta_bin_has_room(&b->bins, units)) {
		nta_bin_park(&b->bins, obj, units);
		b->pushes++;
		return NTA_FREE_OK;
	}
	merged = b->merged;
	fits = nta_bins_make_room(&b->bins, &c->pool, units, &b->released);
	merged = b->merged - merged;
	/* A full bin's halving (one batch) returns before any merge. */
	EXPECT(merged <= NTA_ROOM_BATCHES * NTA_FLUSH_BATCH,
	       "making room merged %lu objects", merged);
	if (fits)
		bin_push(b, obj, units);
	else	/* no room after the bounded merges: merged, not parked */
		bins_merge(&c->pool, blk, nta_unit_of(blk, obj), units,
			   &b->released);
	h_release(c, &b->released);
	return NTA_FREE_OK;
}

/*
 * nta_batch_free_one() on the owner, from the object's check on: into its
 * bin if there is room, else merged on its own, an overflow.
 */
enum nta_bad_free bins_free_drained(struct hcpu *c, struct bins *b, void *obj,
				    unsigned int size)
{
	unsigned int units = nta_size_to_units(size);
	struct nta_block *blk = nta_block_of(obj);
	enum nta_bad_free why;

	why = nta_check_object(blk, obj, size);
	if (why)
		return why;
	if (!b->draining) {	/* nta_batch_drain()'s @overflows */
		b->draining = true;
		b->drain_overflows = b->bins.overflows;
	}
	if (nta_bin_grant_once(&b->bins, units, &b->drain_reclaimed)) {
		bin_push(b, obj, units);
		return NTA_FREE_OK;
	}
	b->bins.overflows++;
	bins_merge(&c->pool, blk, nta_unit_of(blk, obj), units, &b->released);
	h_release(c, &b->released);
	return NTA_FREE_OK;
}

/* nta_batch_drain()'s end, and nta_bins_on_overflow() without the timer. */
void bins_drain_end(struct bins *b)
{
	b->drains++;
	if (b->draining && b->bins.overflows != b->drain_overflows &&
	    nta_bins_raise(&b->bins))
		b->raises++;
	b->draining = false;
	b->drain_reclaimed = false;
}

/*
 * nta_decay_fn() on the owner, without its flush of idle bins: the caps
 * lowered, unused grants taken back and empty bins shut under one hold,
 * then what is above the caps merged a batch at a time
 * (nta_bins_merge_batched()).
 */
bool bins_decay(struct hcpu *c, struct bins *b)
{
	unsigned int shift = b->bins.shift;
	unsigned long merged;
	bool more;

	nta_bins_lower(&b->bins);
	nta_bins_reclaim(&b->bins);
	if (!nta_bins_units(&b->bins))
		nta_bins_shut(&b->bins);
	if (b->bins.over_caps) {
		do {
			merged = b->merged;
			more = nta_bins_trim_some(&b->bins, &c->pool,
						  NTA_FLUSH_BATCH, &b->released);
			merged = b->merged - merged;
			EXPECT(more ? merged == NTA_FLUSH_BATCH :
				      merged <= NTA_FLUSH_BATCH,
			       "a trim batch merged %lu objects, more left: %d",
			       merged, more);
			h_release(c, &b->released);
		} while (more);
		EXPECT(!b->bins.over_caps, "bins still over their caps");
	}
	b->ticks++;
	b->lowerings += b->bins.shift != shift;
	return b->bins.shift != shift;
}

/* ---- checks ---- */

/* One binned object, in @c's pool: parked as nta_bin_park() parks it. */
static unsigned int bin_check_parked(const struct hcpu *c, const void *obj,
				     unsigned int units)
{
	const struct nta_block *blk = nta_block_of(obj);
	unsigned int unit = nta_unit_of(blk, obj), end = unit + units;

	if (blk->pool != &c->pool || ((unsigned long)obj & (NTA_UNIT - 1)) ||
	    unit < NTA_HDR_UNITS || end > NTA_BLOCK_UNITS) {
		t_fail(__FILE__, __LINE__, "bin %u: %p is no unit of this pool",
		       units, obj);
		return 1;
	}
	if (!test_bit(unit, blk->start) || nta_cls(blk, unit) ||
	    test_bit(unit, blk->pending) ||
	    find_next_zero_bit(blk->used, end, unit) != end ||
	    nta_object_units(blk, unit) != units) {
		t_fail(__FILE__, __LINE__,
		       "bin %u: %p not parked: start %d cls %u pending %d length %u",
		       units, obj, test_bit(unit, blk->start), nta_cls(blk, unit),
		       test_bit(unit, blk->pending), nta_object_units(blk, unit));
		return 1;
	}
	return 0;
}

unsigned int bin_check_obj(const struct hcpu *c, const void *obj,
			   unsigned int units, const void *older)
{
	if (bin_check_parked(c, obj, units))
		return 1;
	if (nta_bin_next(obj, units) != older) {
		t_fail(__FILE__, __LINE__, "bin %u: %p links to %p, not %p",
		       units, obj, nta_bin_next(obj, units), older);
		return 1;
	}
	return 0;
}

static int ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(void * const *)a;
	uintptr_t y = (uintptr_t)*(void * const *)b;

	return x < y ? -1 : x > y;
}

/*
 * One bin's list: @nr objects, the last linking to NULL, each in one of
 * the pool's @nr_blocks @blocks (sorted), before the link is followed.
 */
static unsigned int bin_check_list(const struct hcpu *c,
				   const struct nta_bins *nb, unsigned int u,
				   void **blocks, unsigned int nr_blocks)
{
	const void *obj = nb->slot[u].head;
	unsigned int i;

	for (i = 0; obj && i < nta_bin_nr(&nb->slot[u]); i++, obj = nta_bin_next(obj, u)) {
		void *blk = nta_block_of(obj);

		if (!bsearch(&blk, blocks, nr_blocks, sizeof(*blocks), ptr_cmp)) {
			t_fail(__FILE__, __LINE__,
			       "bin %u: object %u of %u, %p, is in no block of the pool",
			       u, i + 1, nta_bin_nr(&nb->slot[u]), obj);
			return 1;
		}
		if (bin_check_parked(c, obj, u))
			return 1;
	}
	if (i != nta_bin_nr(&nb->slot[u]) || obj) {
		t_fail(__FILE__, __LINE__, "bin %u: %s after %u objects, nr %u",
		       u, obj ? "no end" : "the end", i, nta_bin_nr(&nb->slot[u]));
		return 1;
	}
	return 0;
}

unsigned int bins_check(const struct hcpu *c, const struct bins *b)
{
	const struct nta_bins *nb = &b->bins;
	unsigned int u, i = 0, errors = 0;
	unsigned long units = 0, granted = 0;
	struct nta_block *blk;
	void **blocks;

	if (nb->shift > NTA_BIN_SHIFT_MAX ||
	    nb->limit != (unsigned int)NTA_BINS_UNITS << nb->shift) {
		t_fail(__FILE__, __LINE__, "bins at shift %u (max %u), limit %u",
		       nb->shift, NTA_BIN_SHIFT_MAX, nb->limit);
		return 1;
	}
	blocks = malloc((c->pool.nr_blocks + 1) * sizeof(*blocks));
	list_for_each_entry(blk, &c->pool.blocks, link)
		if (i < c->pool.nr_blocks)
			blocks[i++] = blk;
	qsort(blocks, i, sizeof(*blocks), ptr_cmp);
	for (u = 1; u < NTA_NR_LISTS && errors < 5; u++) {
		if (nb->slot[u].cap > nta_bin_base_cap_of(u) << nb->shift ||
		    nta_bin_nr(&nb->slot[u]) > nb->slot[u].cap ||
		    !!nb->slot[u].cap != test_bit(u, nb->held)) {
			t_fail(__FILE__, __LINE__, "bin %u holds %u, granted a cap of %u (at most %u << %u), %s",
			       u, nta_bin_nr(&nb->slot[u]), nb->slot[u].cap, nta_bin_base_cap_of(u), nb->shift,
			       test_bit(u, nb->held) ? "held" : "not held");
			errors++;
			continue;
		}
		errors += bin_check_list(c, nb, u, blocks, i);
		units += (unsigned long)nta_bin_nr(&nb->slot[u]) * u;
		granted += (unsigned long)nb->slot[u].cap * u;
	}
	free(blocks);
	if (!errors && (units != nta_bins_units(nb) || granted != nb->granted ||
			granted > nb->limit || (!nb->open && granted))) {
		t_fail(__FILE__, __LINE__,
		       "bins hold %lu units, count %u, granted %lu (kept %u), limit %u, %s",
		       units, nta_bins_units(nb), granted, nb->granted, nb->limit,
		       nb->open ? "open" : "shut");
		errors++;
	}
	return errors;
}

/* nta_bins.h: a bin's link found overwritten (nta_bin_pop()). */
void nta_report_bad_bin(const void *obj, unsigned int units)
{
	atomic_inc(&h_poison_reports);
	h_last_poison_chunk = obj;
	h_last_poison_bad = obj;
	h_last_poison_units = units;
	printf("# nta_report_bad_bin: bin %u: link of %p overwritten\n",
	       units, obj);
}
