/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NTA core fast paths, inline: nta_core.c, the per-CPU allocator and the
 * white-box tests include this; others use the wrappers in nta_core.h.
 */
#ifndef _NET_CORE_ALLOC_NTA_CORE_INLINE_H
#define _NET_CORE_ALLOC_NTA_CORE_INLINE_H

#include "nta_core.h"

/*
 * The fast paths: allocation from the lists, and the owner's check, free
 * and merge.  They are inline so that nta_alloc() and nta_free() in the
 * per-CPU glue make no call into the core on their way; nta_core.c wraps
 * them as nta_pool_alloc() and nta_pool_free_checked() for everyone else.
 */

static inline void *nta_unit_addr(struct nta_block *blk, unsigned int unit)
{
	return (void *)blk + ((unsigned long)unit << NTA_UNIT_SHIFT);
}

static inline unsigned int nta_unit_of(const struct nta_block *blk,
				       const void *ptr)
{
	return (ptr - (const void *)blk) >> NTA_UNIT_SHIFT;
}

/*
 * Put the nodes from @first on, taken off @head by llist_del_all() and
 * not all consumed, back on it: one llist_add_batch().
 */
static inline void nta_llist_requeue(struct llist_node *first,
				     struct llist_head *head)
{
	struct llist_node *last = first;

	while (last->next)
		last = last->next;
	llist_add_batch(first, last, head);
}

/*
 * The object of @units units at @unit is handed out: its length byte says
 * so.  Its generation is the one its unit's last free left
 * (nta_mark_dead()).
 */
static __always_inline void nta_mark_live(struct nta_block *blk,
					  unsigned int unit, unsigned int units)
{
	nta_set_cls(blk, unit, units);
}

/*
 * The object at @unit is freed, into the pool or a bin: not live, and a
 * new generation, up to the next even value, with the claim of a double
 * free that raced with this free cleared.  A free that waits in a batch
 * recorded the old one, so that its owner refuses it once the object was
 * freed (and handed out again, or not) meanwhile.  Other CPUs claim only
 * live objects, and this one is not live any more (its length byte is
 * 0), so the owner is the only writer of the generation here.  The fast
 * free bumps it itself (nta_unit_claim()).
 *
 * Released after the length byte: a claim that sees the new generation
 * sees the byte 0 too, and fails, also where stores may be seen out of
 * order.  One that saw the old byte and generation is wiped by the new
 * generation (the drain refuses its free).
 */
static __always_inline void nta_mark_dead(struct nta_block *blk,
					  unsigned int unit)
{
	u8 gen = nta_gen(blk, unit);

	nta_set_cls(blk, unit, 0);
	/* Seen after the length byte by any claim that sees it. */
	smp_store_release(&blk->meta[unit].gen, (gen | NTA_GEN_CLAIMED) + 1);
}

static inline void nta_poison(void *start, unsigned int len)
{
	if (IS_ENABLED(CONFIG_NTA_DEBUG))
		memset(start, POISON_FREE, len);
}

/*
 * Bitmap helpers for the fast paths.  A block's bitmaps are a handful of
 * words (four with 16 KiB blocks and 64-byte units), so open-coded word
 * loops that the compiler inlines beat the out-of-line find_next_bit(),
 * find_last_bit(), __bitmap_set() and __bitmap_clear() they stand for.
 */

/* First set bit of @map at or after @from, or @nbits when there is none. */
static __always_inline unsigned int nta_next_bit(const unsigned long *map,
						 unsigned int nbits,
						 unsigned int from)
{
	unsigned int i = BIT_WORD(from);
	unsigned long w;

	if (unlikely(from >= nbits))
		return nbits;
	w = map[i] & BITMAP_FIRST_WORD_MASK(from);
	while (!w) {
		if (++i >= BITS_TO_LONGS(nbits))
			return nbits;
		w = map[i];
	}
	return min_t(unsigned int, i * BITS_PER_LONG + __ffs(w), nbits);
}

/*
 * Last unit below @before that is used.  The header's units are always
 * used, so for any @before above them there is one.
 */
static __always_inline unsigned int nta_prev_used(const struct nta_block *blk,
						  unsigned int before)
{
	unsigned int i = BIT_WORD(before - 1);
	unsigned long w = blk->used[i] & BITMAP_LAST_WORD_MASK(before);

	while (!w)
		w = blk->used[--i];
	return i * BITS_PER_LONG + __fls(w);
}

/* First used unit at or after @from, NTA_BLOCK_UNITS if none. */
static __always_inline unsigned int nta_next_used(const struct nta_block *blk,
						  unsigned int from)
{
	return nta_next_bit(blk->used, NTA_BLOCK_UNITS, from);
}

/* Set or clear the @units bits of @map from @unit on (@units >= 1). */
static __always_inline void nta_mark(unsigned long *map, unsigned int unit,
				     unsigned int units, bool set)
{
	unsigned long *p = map + BIT_WORD(unit);
	unsigned long *last = map + BIT_WORD(unit + units - 1);
	unsigned long mask = BITMAP_FIRST_WORD_MASK(unit);

	for (; p < last; p++, mask = ~0UL) {
		if (set)
			*p |= mask;
		else
			*p &= ~mask;
	}
	mask &= BITMAP_LAST_WORD_MASK(unit + units);
	if (set)
		*p |= mask;
	else
		*p &= ~mask;
}

/*
 * A link worth following: a list head of @pool, or a unit boundary.  A
 * link overwritten without the secret decodes to an arbitrary address,
 * which this refuses 63 times in 64 before anything reads through it.
 */
static __always_inline bool nta_link_plausible(const struct nta_pool *pool,
					       const struct nta_chunk *to)
{
	return !((unsigned long)to & (NTA_UNIT - 1)) ||
	       (to >= pool->free && to < pool->free + NTA_NR_LISTS);
}

/* Both neighbours of @chunk are plausible and link back to it. */
static __always_inline bool nta_chunk_linked(const struct nta_pool *pool,
					     const struct nta_chunk *chunk)
{
	const struct nta_chunk *next = nta_chunk_next(chunk);
	const struct nta_chunk *prev = nta_chunk_prev(chunk);

	return nta_link_plausible(pool, next) &&
	       nta_link_plausible(pool, prev) &&
	       nta_chunk_prev(next) == chunk && nta_chunk_next(prev) == chunk;
}

/* Quarantined; only ever when links are checked, else compiled away. */
static __always_inline bool nta_pool_broken(const struct nta_pool *pool)
{
	return nta_links_checked() && pool->broken;
}

/*
 * Free-list links, without the unit counts: the fast paths settle those
 * once per operation, not once per list they touch.  The list's first
 * chunk must link back to the head before the new one goes in front of
 * it; if it does not, the pool is quarantined and the chunk stays off
 * the lists.
 */
static __always_inline void nta_list_add(struct nta_pool *pool,
					 struct nta_block *blk,
					 unsigned int unit, unsigned int units)
{
	struct nta_chunk *chunk = nta_unit_addr(blk, unit);
	struct nta_chunk *head = &pool->free[units];
	struct nta_chunk *first = nta_chunk_next(head);

	if (nta_links_checked() &&
	    unlikely(!nta_link_plausible(pool, first) ||
		     nta_chunk_prev(first) != head)) {
		nta_pool_quarantine(pool, first, units);
		return;
	}
	/* LIFO: the chunk freed last is the one most likely still in cache. */
	nta_link_set(&chunk->next, first);
	nta_link_set(&chunk->prev, head);
	nta_link_set(&first->prev, chunk);
	nta_link_set(&head->next, chunk);
	__set_bit(units, pool->nonempty);
	if (units == NTA_DATA_UNITS)
		pool->whole++;
}

/*
 * Return: false, nothing written and the pool quarantined, when @chunk's
 * links were overwritten.
 */
static __always_inline bool nta_list_del(struct nta_pool *pool,
					 struct nta_chunk *chunk,
					 unsigned int units)
{
	struct nta_chunk *next, *prev;

	if (nta_links_checked() && unlikely(!nta_chunk_linked(pool, chunk))) {
		nta_pool_quarantine(pool, chunk, units);
		return false;
	}
	next = nta_chunk_next(chunk);
	prev = nta_chunk_prev(chunk);
	nta_link_set(&prev->next, next);
	nta_link_set(&next->prev, prev);
	/* Only in a list of the head and @chunk are both neighbours one. */
	if (next == prev)
		__clear_bit(units, pool->nonempty);
	if (units == NTA_DATA_UNITS)
		pool->whole--;
	/* The links are inside an object or a merged chunk now: poison them. */
	nta_poison(chunk, sizeof(*chunk));
	return true;
}

static inline void nta_check_poison(const struct nta_pool *pool, void *obj,
				    unsigned int units)
{
	unsigned int skip = sizeof(struct nta_chunk);
	void *bad;

	if (!IS_ENABLED(CONFIG_NTA_DEBUG))
		return;
	/* memchr_inv() is instrumented, and the chunk poisoned for KASAN. */
	if (IS_ENABLED(CONFIG_KASAN_GENERIC))
		kasan_disable_current();
	bad = memchr_inv(obj + skip, POISON_FREE, units * NTA_UNIT - skip);
	if (IS_ENABLED(CONFIG_KASAN_GENERIC))
		kasan_enable_current();
	if (bad)
		nta_report_poison(pool, obj, units, bad);
}

/* nta_pool_alloc(), for the caller that serialises on the pool. */
static __always_inline void *__nta_pool_alloc(struct nta_pool *pool,
					      unsigned int size)
{
	unsigned int units, len, unit;
	struct nta_chunk *chunk;
	struct nta_block *blk;

	if (unlikely(!size || size > NTA_MAX_SIZE || nta_pool_broken(pool)))
		return NULL;
	units = nta_size_to_units(size);
	len = nta_next_bit(pool->nonempty, NTA_NR_LISTS, units);
	if (unlikely(len >= NTA_NR_LISTS))
		return NULL;

	chunk = nta_chunk_next(&pool->free[len]);
	if (unlikely(!nta_list_del(pool, chunk, len)))
		return NULL;
	blk = nta_block_of(chunk);
	unit = nta_unit_of(blk, chunk);
	if (len > units)
		nta_list_add(pool, blk, unit + units, len - units);
	blk->free_units -= units;
	pool->free_units -= units;
	nta_check_poison(pool, chunk, units);

	nta_mark(blk->used, unit, units, true);
	__set_bit(unit, blk->start);
	nta_mark_live(blk, unit, units);
	return chunk;
}

/*
 * The checks any CPU can make: the object's own @cls byte, which does not
 * change while it is live, and whether another CPU freed it through its
 * pending bit (NTA_GEN_CLAIMED).  A live object's @cls is its length, so
 * one compare says that @ptr starts an object, that @size is its size,
 * and that it was not freed already.  Another CPU's read races with the
 * owner only when the free is bad anyway; the owner checks again when it
 * drains.
 */
static __always_inline enum nta_bad_free
nta_check_object(const struct nta_block *blk, const void *ptr,
		 unsigned int size)
{
	unsigned long off = ptr - (const void *)blk;
	unsigned int unit = off >> NTA_UNIT_SHIFT;
	unsigned int cls;

	if (unlikely((off & (NTA_UNIT - 1)) || unit < NTA_HDR_UNITS))
		return NTA_FREE_MISALIGNED;
	cls = nta_cls(blk, unit);
	if (unlikely(!cls))
		return NTA_FREE_NOT_ALLOCATED;
	if (unlikely(nta_gen(blk, unit) & NTA_GEN_CLAIMED))
		return NTA_FREE_PENDING;
	if (unlikely(cls != nta_size_to_units(size) || size > NTA_MAX_SIZE))
		return NTA_FREE_WRONG_SIZE;
	return NTA_FREE_OK;
}

/*
 * nta_check_object()'s verdict without its reason, for a caller that sends
 * a refusal to a path that checks again and reports, and that read the
 * object's generation @gen first (@blk is @ptr's block, so @ptr's offset
 * in it comes from the address alone).  A length byte that equals the
 * object's length, never 0, says what the two tests on it say.
 */
static __always_inline bool nta_object_ok(const struct nta_block *blk,
					  const void *ptr, unsigned int size,
					  u8 gen)
{
	unsigned long off = (unsigned long)ptr & (NTA_BLOCK_SIZE - 1);
	unsigned int unit = off >> NTA_UNIT_SHIFT;

	return !(off & (NTA_UNIT - 1)) && unit >= NTA_HDR_UNITS &&
	       size - 1 < NTA_MAX_SIZE && !(gen & NTA_GEN_CLAIMED) &&
	       nta_cls(blk, unit) == nta_size_to_units(size);
}

/* @unit's length and generation bytes, as a remote free first sees them. */
static __always_inline struct nta_unit_meta
nta_unit_seen(const struct nta_block *blk, unsigned int unit)
{
	const union nta_meta_pair *pair = (const void *)&blk->meta[unit & ~1U];
	union nta_meta_pair seen = { .word = READ_ONCE(pair->word) };

	return seen.meta[unit & 1];
}

/*
 * Another CPU claims the object at @unit for its owner to free: it sets
 * NTA_GEN_CLAIMED in the object's generation if the unit's length and
 * generation bytes are still @seen, read before the free was checked, in
 * one compare-and-exchange of the aligned word that holds them.  So an
 * object that the owner freed and handed out again since (a new
 * generation) is not claimed in its place.  The word also holds a
 * neighbour's bytes, which the owner may change meanwhile: then try again.
 * The length byte is left alone: the owner writes it with stores that
 * are atomic only on its own CPU (the fast free's cmpxchg_local()).
 * Returns false, with nothing written, when the unit's bytes changed.
 */
static __always_inline bool nta_unit_claim_remote(struct nta_block *blk,
						  unsigned int unit,
						  struct nta_unit_meta seen)
{
	union nta_meta_pair *pair = (void *)&blk->meta[unit & ~1U];
	unsigned int i = unit & 1;
	union nta_meta_pair old, new;

	old.word = READ_ONCE(pair->word);
	do {
		if (old.meta[i].cls != seen.cls || old.meta[i].gen != seen.gen)
			return false;
		new = old;
		new.meta[i].gen |= NTA_GEN_CLAIMED;
	} while (!try_cmpxchg(&pair->word, &old.word, new.word));
	return true;
}

/*
 * A wholly free block leaves its pool only once the owner has claimed it
 * by setting @queued, for good: a remote freer whose pending bit the
 * owner's drain has already taken may still be about to look at @queued,
 * and must not push a block that is on its way back to the page
 * allocator.  The claim fails while the block is queued or being drained;
 * the block then stays, for the end of the drain or a later trim.
 */
static __always_inline bool nta_block_claim(struct nta_block *blk)
{
	return !READ_ONCE(blk->queued) && !xchg(&blk->queued, 1);
}

/* The block stays after all: remote frees may queue it again. */
static __always_inline void nta_block_unclaim(struct nta_block *blk)
{
	/* Release: what the failed removal read, before others may queue it. */
	smp_store_release(&blk->queued, 0);
}

/*
 * Above the reserve, keep up to @spares wholly free blocks and give back
 * the rest: releasing every empty block at once would make a pool whose
 * load swings by a few blocks (a socket queue of jumbo heads filling and
 * draining) allocate and free pages on every few packets.
 */
static __always_inline void nta_release_if_spare(struct nta_pool *pool,
						 struct nta_block *blk,
						 struct list_head *released)
{
	if (blk->free_units != NTA_DATA_UNITS ||
	    pool->nr_blocks <= pool->reserve || pool->whole <= pool->spares ||
	    !nta_block_claim(blk))
		return;
	if (!nta_pool_remove_block(pool, blk)) {
		nta_block_unclaim(blk);
		return;
	}
	list_add(&blk->link, released);
	pool->released++;
}

/*
 * Give back the object of @units units at @unit, live or parked in a bin
 * (marked dead then already): clear its bits, merge it with the free
 * chunks on either side and file the result.  A block that
 * is wholly free again goes to @released when the pool holds more blocks
 * than its reserve and more than @spares wholly free blocks.
 */
static __always_inline void nta_free_units(struct nta_pool *pool,
					   struct nta_block *blk,
					   unsigned int unit, unsigned int units,
					   struct list_head *released)
{
	unsigned int first = unit, end = unit + units, edge;

	/* A binned object was marked dead once, when it was parked. */
	if (nta_cls(blk, unit))
		nta_mark_dead(blk, unit);
	__clear_bit(unit, blk->start);
	/* Quarantined: the object is dead, its units stay used (leaked). */
	if (unlikely(nta_pool_broken(pool)))
		return;
	nta_mark(blk->used, unit, units, false);
	nta_poison(nta_unit_addr(blk, unit), units * NTA_UNIT);

	/* Free chunks are maximal runs of clear bits: find the neighbours. */
	edge = nta_next_used(blk, end);
	if (edge > end) {
		if (unlikely(!nta_list_del(pool, nta_unit_addr(blk, end),
					   edge - end)))
			return;
		end = edge;
	}
	/* The header's units are always used, so first - 1 exists. */
	if (!test_bit(first - 1, blk->used)) {
		edge = nta_prev_used(blk, first) + 1;
		if (unlikely(!nta_list_del(pool, nta_unit_addr(blk, edge),
					   first - edge)))
			return;
		first = edge;
	}
	nta_list_add(pool, blk, first, end - first);
	blk->free_units += units;
	pool->free_units += units;

	if (unlikely(end - first == NTA_DATA_UNITS))
		nta_release_if_spare(pool, blk, released);
}

static __always_inline void nta_do_free(struct nta_pool *pool, void *ptr,
					unsigned int size,
					struct list_head *released)
{
	struct nta_block *blk = nta_block_of(ptr);

	if (pool->init_on_free)
		memset(ptr, 0, size);
	nta_free_units(pool, blk, nta_unit_of(blk, ptr),
		       nta_size_to_units(size), released);
}

/* nta_pool_free_checked(): the owner's free path. */
static __always_inline enum nta_bad_free
__nta_pool_free_checked(struct nta_pool *pool, void *ptr, unsigned int size,
			struct list_head *released)
{
	const struct nta_block *blk = nta_block_of(ptr);
	enum nta_bad_free why;

	why = nta_check_object(blk, ptr, size);
	if (unlikely(why))
		return why;
	nta_do_free(pool, ptr, size, released);
	return NTA_FREE_OK;
}

#endif /* _NET_CORE_ALLOC_NTA_CORE_INLINE_H */
