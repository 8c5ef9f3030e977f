// SPDX-License-Identifier: GPL-2.0
/*
 * NTA core: allocation, free and merge inside one pool.
 *
 * A pool owns blocks of NTA_BLOCK_SIZE bytes, each aligned to its size.
 * The first NTA_HDR_UNITS units of a block hold struct nta_block; the rest
 * is handed out in units of one cache line.  Two bitmaps describe a block:
 * @used marks the units of live objects (and of the header), @start marks
 * where each live object begins.  Every maximal run of clear @used bits is
 * one free chunk, linked through its first unit onto pool->free[length].
 * pool->nonempty has one bit per list, so the best fit for a request is a
 * single bit search over a few words, not a walk over the lists.
 *
 * The fast paths (allocation, and the owner's check, free and merge) are
 * inline in nta_core_inline.h, so that nta_alloc() and nta_free() make no
 * call on their way; this file holds the rest and the callable wrappers.
 *
 * Allocation takes the first chunk of the smallest non-empty list that
 * fits, marks its units used and puts the remainder back on its list.
 * Free clears the units and merges the chunk at once with the free runs on
 * either side, found through @used; so no two free chunks are ever
 * adjacent, and a block whose objects are all gone is one chunk again.
 *
 * An object freed on another CPU is marked in its block's @pending bitmap
 * and the block pushed on the owner's lock-less remote list; the owner
 * frees the marked objects when it drains the list.  Nothing but the
 * owner ever touches the lists, the @used and @start bitmaps or the
 * objects' memory.
 */

#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/bitops.h>
#include <linux/bug.h>
#include <linux/cache.h>
#include <linux/kernel.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/minmax.h>
#include <linux/poison.h>
#include <linux/printk.h>
#include <linux/sprintf.h>
#include <linux/stdarg.h>
#include <linux/string.h>
#include <linux/types.h>

#include "nta_core_inline.h"

static void nta_chunk_add(struct nta_pool *pool, struct nta_block *blk,
			  unsigned int unit, unsigned int units)
{
	nta_list_add(pool, blk, unit, units);
	blk->free_units += units;
	pool->free_units += units;
}

static bool nta_chunk_del(struct nta_pool *pool, struct nta_block *blk,
			  struct nta_chunk *chunk, unsigned int units)
{
	if (!nta_list_del(pool, chunk, units))
		return false;
	blk->free_units -= units;
	pool->free_units -= units;
	return true;
}

/**
 * nta_pool_init - set up an empty pool
 * @pool: the pool
 * @id: owner identifier, reported in messages
 * @reserve: blocks to keep even when they are wholly free
 */
void nta_pool_init(struct nta_pool *pool, unsigned int id, unsigned int reserve)
{
	unsigned int i;

	bitmap_zero(pool->nonempty, NTA_NR_LISTS);
	for (i = 0; i < NTA_NR_LISTS; i++)
		nta_flist_init(&pool->free[i]);
	init_llist_head(&pool->remote);
	atomic_set(&pool->remote_blocks, 0);
	INIT_LIST_HEAD(&pool->blocks);
	pool->nr_blocks = 0;
	pool->reserve = reserve;
	pool->spares = 1;
	pool->whole = 0;
	pool->released = 0;
	pool->free_units = 0;
	pool->init_on_free = false;
	pool->broken = false;
	pool->id = id;
}

/**
 * nta_pool_quarantine - stop using a pool whose free-list links were
 *	overwritten
 * @pool: the pool
 * @chunk: the free chunk found with bad links
 * @units: its length
 *
 * Its lists and bitmaps may no longer agree, and any further split, merge
 * or unlink could write through what the overwrite planted.  So from now
 * on the pool hands out nothing (heads come from the fallback), a free
 * into it only marks its object dead and leaves the units used, and it
 * is never trimmed: its memory is leaked, nothing is written through a
 * link again.  Reported as a poison hit with @bad == @chunk.
 */
void nta_pool_quarantine(struct nta_pool *pool, const struct nta_chunk *chunk,
			 unsigned int units)
{
	pool->broken = true;
	nta_report_poison(pool, chunk, units, chunk);
}

/*
 * Clear every unit's length byte and leave its generation byte, which the
 * embedder seeded: the two share @meta, so no memset() can do it.
 */
static void nta_clear_cls(struct nta_block *blk)
{
	unsigned int i;

	for (i = 0; i < NTA_BLOCK_UNITS; i++) {
		blk->meta[i].cls = 0;
		blk->meta[i].gen &= ~NTA_GEN_CLAIMED;
	}
}

/**
 * nta_pool_add_block - give a pool a new block
 * @pool: the pool
 * @mem: NTA_BLOCK_SIZE bytes aligned to NTA_BLOCK_SIZE
 *
 * The block becomes one free chunk of NTA_DATA_UNITS units.
 */
void nta_pool_add_block(struct nta_pool *pool, void *mem)
{
	struct nta_block *blk = mem;

	BUILD_BUG_ON(NTA_HDR_UNITS * NTA_UNIT < sizeof(struct nta_block));
	BUILD_BUG_ON(sizeof(struct nta_chunk) > NTA_UNIT);
	/* meta[].cls holds an object's length in units in a byte. */
	BUILD_BUG_ON(NTA_DATA_UNITS > U8_MAX);
	/* A remote free claims an object through an aligned word. */
	BUILD_BUG_ON(sizeof(union nta_meta_pair) != sizeof(u32));
	BUILD_BUG_ON(offsetof(struct nta_block, meta) %
		     sizeof(union nta_meta_pair));

	/* meta[].gen is left as the embedder set it (nta_pools.c: random bytes). */
	memset_after(blk, 0, meta);
	nta_clear_cls(blk);
	blk->pool = pool;
	bitmap_set(blk->used, 0, NTA_HDR_UNITS);
	list_add(&blk->link, &pool->blocks);
	pool->nr_blocks++;
	nta_poison(nta_unit_addr(blk, NTA_HDR_UNITS), NTA_MAX_SIZE);
	nta_chunk_add(pool, blk, NTA_HDR_UNITS, NTA_DATA_UNITS);
}

/**
 * nta_pool_remove_block - take a wholly free block away from its pool
 * @pool: the pool
 * @blk: a block of @pool with no live object
 *
 * The caller owns the block's memory afterwards.
 *
 * Return: false, and the pool untouched, if @blk still has live objects,
 * or if the pool is (or now, its chunk's links overwritten, becomes)
 * quarantined.  No WARN for a busy block: the caller holds the local
 * lock, under which printk() must not run (netconsole allocates skbs).
 */
bool nta_pool_remove_block(struct nta_pool *pool, struct nta_block *blk)
{
	if (pool->broken || blk->free_units != NTA_DATA_UNITS)
		return false;
	if (!nta_chunk_del(pool, blk, nta_unit_addr(blk, NTA_HDR_UNITS),
			   NTA_DATA_UNITS))
		return false;
	list_del(&blk->link);
	pool->nr_blocks--;
	return true;
}

/**
 * nta_pool_trim - give back wholly free blocks above the reserve
 * @pool: the pool
 * @released: where the blocks go; the caller frees their memory
 * @max: give back at most this many
 *
 * Return: the number of blocks moved to @released.
 */
unsigned int nta_pool_trim(struct nta_pool *pool, struct list_head *released,
			   unsigned int max)
{
	struct nta_chunk *head = &pool->free[NTA_DATA_UNITS];
	struct nta_chunk *chunk, *next;
	struct nta_block *blk;
	unsigned int n = 0;

	if (pool->broken)
		return 0;
	for (chunk = nta_chunk_next(head); chunk != head; chunk = next) {
		if (n >= max || pool->nr_blocks <= pool->reserve)
			break;
		/* Its link to the next is followed even if it stays. */
		if (nta_links_checked() && !nta_chunk_linked(pool, chunk)) {
			nta_pool_quarantine(pool, chunk, NTA_DATA_UNITS);
			break;
		}
		next = nta_chunk_next(chunk);
		blk = nta_block_of(chunk);
		/* Queued by a racing (bad) remote free: the drain releases it. */
		if (!nta_block_claim(blk))
			continue;
		if (!nta_pool_remove_block(pool, blk)) {
			nta_block_unclaim(blk);
			continue;
		}
		list_add(&blk->link, released);
		n++;
	}
	return n;
}

/**
 * nta_pool_alloc - allocate from a pool's free lists
 * @pool: the pool
 * @size: bytes, 1..NTA_MAX_SIZE
 *
 * Best fit: the first chunk of the smallest non-empty list that can hold
 * @size, split if it is larger.
 *
 * Return: a unit-aligned object, or NULL when no free chunk is big enough.
 */
void *nta_pool_alloc(struct nta_pool *pool, unsigned int size)
{
	return __nta_pool_alloc(pool, size);
}

/**
 * nta_object_units - length of the live object starting at @unit
 * @blk: its block
 * @unit: a unit with its @start bit set
 *
 * An object ends where the next one starts or where free space begins.
 * The neighbours' bits change as the owner works, so only the owner may
 * ask; it also works for objects parked in a bin, whose @cls is 0.
 *
 * Return: the object's length in units.
 */
unsigned int nta_object_units(const struct nta_block *blk, unsigned int unit)
{
	unsigned int next_start, next_free;

	next_start = find_next_bit(blk->start, NTA_BLOCK_UNITS, unit + 1);
	next_free = find_next_zero_bit(blk->used, NTA_BLOCK_UNITS, unit + 1);
	return min(next_start, next_free) - unit;
}

/**
 * nta_check_free - is (@ptr, @size) a live object of @blk?
 * @blk: the block @ptr points into; the caller has made sure it is one
 * @ptr: the pointer being freed
 * @size: the size it was allocated with
 *
 * The owner's check; other CPUs call nta_remote_free(), which makes the
 * same check and leaves the final word to the owner's drain.
 *
 * Return: NTA_FREE_OK, or why the free must be refused.
 */
enum nta_bad_free nta_check_free(const struct nta_block *blk, const void *ptr,
				 unsigned int size)
{
	return nta_check_object(blk, ptr, size);
}

/**
 * nta_pool_free - free an object of @pool on the owner
 * @pool: the pool that owns the object
 * @ptr: the object; nta_check_free() said NTA_FREE_OK for it
 * @size: its size
 * @released: where a block that became wholly free above the reserve goes
 */
void nta_pool_free(struct nta_pool *pool, void *ptr, unsigned int size,
		   struct list_head *released)
{
	nta_do_free(pool, ptr, size, released);
}

/**
 * nta_pool_free_checked - check and free an object of @pool on the owner
 * @pool: the pool that owns @ptr's block; the caller is its owner
 * @ptr: the pointer being freed, in a block of @pool
 * @size: the size it was allocated with
 * @released: where a block that became wholly free above the reserve goes
 *
 * nta_check_free() and, when it passes, nta_pool_free() in one call: the
 * owner's free path.  A refused free leaves the pool untouched.
 *
 * Return: NTA_FREE_OK when the object was freed, or why it was refused.
 */
enum nta_bad_free nta_pool_free_checked(struct nta_pool *pool, void *ptr,
					unsigned int size,
					struct list_head *released)
{
	return __nta_pool_free_checked(pool, ptr, size, released);
}

/**
 * nta_remote_free - queue an object for its owner to free
 * @owner: the pool that owns the object
 * @ptr: the object, in a block the caller has made sure is NTA's
 * @size: its size
 * @queued: set to the number of blocks queued for @owner, this one
 *	included, when this free queued the object's block; else 0
 *
 * Any context on any CPU may call this concurrently with the owner and
 * with other remote freers, inside an RCU read-side critical section.  It
 * checks the object's @cls byte (start and size) and writes nothing into
 * the object: it claims the object in the block header in the same atomic
 * step as the check (nta_unit_claim_remote(), which makes a second free of
 * the same object fail), sets its @pending bit for the owner's drain, and
 * queues the block on @owner's remote list unless it is there already.
 * Two atomics per object, three more per block queued.  Once the bit is
 * set the owner may free the object and give back the block before this
 * function reads @queued: the embedder frees a block's memory only after
 * an RCU grace period.
 *
 * Return: NTA_FREE_OK, or why the free must be refused.
 */
enum nta_bad_free nta_remote_free(struct nta_pool *owner, void *ptr,
				  unsigned int size, unsigned int *queued)
{
	struct nta_block *blk = nta_block_of(ptr);
	unsigned int unit = nta_unit_of(blk, ptr);
	struct nta_unit_meta seen;
	enum nta_bad_free why;

	*queued = 0;
	seen = nta_unit_seen(blk, unit);
	/* The bytes before the check: the claim wants the object it saw. */
	smp_rmb();
	why = nta_check_object(blk, ptr, size);
	if (why)
		return why;
	/* Freed, or freed and handed out again, since it was checked. */
	if (!nta_unit_claim_remote(blk, unit, seen))
		return nta_check_object(blk, ptr, size) ?: NTA_FREE_NOT_ALLOCATED;
	set_bit(unit, blk->pending);
	/* The bit before @queued is read, as below. */
	smp_mb__after_atomic();
	/*
	 * The bit is set, fully ordered, before @queued is read; the owner
	 * clears @queued, fully ordered, before it looks at @pending again
	 * (nta_drain_block()).  So the owner sees this bit, or this free
	 * queues the block, or both; a block the owner gives back has
	 * @queued set for good (nta_block_claim()), so it is never queued
	 * after its release.
	 */
	if (READ_ONCE(blk->queued) || xchg(&blk->queued, 1))
		return NTA_FREE_OK;
	/* Count before publishing, so the count never goes below the list. */
	*queued = atomic_inc_return(&owner->remote_blocks);
	llist_add(&blk->remote, &owner->remote);
	return NTA_FREE_OK;
}

/* Free the objects whose @pending bits are set in @blk, taking the bits. */
static unsigned int nta_drain_pending(struct nta_pool *pool,
				      struct nta_block *blk,
				      struct list_head *released)
{
	unsigned int i, unit, units, count = 0;
	unsigned long bits;
	u8 gen;

	for (i = 0; i < NTA_BITMAP_LONGS; i++) {
		if (!READ_ONCE(blk->pending[i]))
			continue;
		bits = xchg(&blk->pending[i], 0);
		pool->atomics++;
		for (; bits; bits &= bits - 1) {
			unit = i * BITS_PER_LONG + __ffs(bits);
			gen = nta_gen(blk, unit);
			units = nta_cls(blk, unit);
			/*
			 * No longer live, or freed (which cleared the claim)
			 * and handed out again: a double free that raced with
			 * the owner's own free of the object.  Report, and write
			 * nothing but the claim's bit on a unit that holds no
			 * live object.
			 */
			if (unlikely(!units || !(gen & NTA_GEN_CLAIMED))) {
				if (!units)
					nta_set_gen(blk, unit,
						    gen & ~NTA_GEN_CLAIMED);
				nta_report_bad_free(pool, nta_unit_addr(blk, unit),
						    0, NTA_FREE_NOT_ALLOCATED);
				continue;
			}
			/*
			 * Not live first: no other CPU can claim it again.
			 * A new generation clears the claim's bit.
			 */
			nta_mark_dead(blk, unit);
			/* Wiped only now that the owner has checked it. */
			if (pool->init_on_free)
				memset(nta_unit_addr(blk, unit), 0,
				       units * NTA_UNIT);
			nta_free_units(pool, blk, unit, units, released);
			count++;
		}
	}
	return count;
}

static bool nta_block_has_pending(const struct nta_block *blk)
{
	unsigned int i;

	for (i = 0; i < NTA_BITMAP_LONGS; i++)
		if (READ_ONCE(blk->pending[i]))
			return true;
	return false;
}

/*
 * Drain one block taken off the remote list.  @queued stays set while the
 * owner works, so no freer pushes the block again meanwhile; a freer that
 * sets a bit then leaves it to the owner, who looks again after clearing
 * @queued (both sides order the two with full barriers).  A block that
 * this drain emptied is given back only after @queued is clear and the
 * owner has claimed it again (nta_release_if_spare()), so the owner never
 * gives back a block that is on the list or that a freer may still push.
 * The price: a double free that races with the free of a block's last
 * object and finds the block given back is not reported.
 */
static unsigned int nta_drain_block(struct nta_pool *pool,
				    struct nta_block *blk,
				    struct list_head *released)
{
	unsigned int count = 0;

	for (;;) {
		count += nta_drain_pending(pool, blk, released);
		/* Ordered before the next look at @pending: nta_remote_free(). */
		smp_store_mb(blk->queued, 0);
		pool->atomics++;
		if (!nta_block_has_pending(blk))
			break;
		pool->atomics++;
		if (xchg(&blk->queued, 1))
			break;
	}
	/* Emptied while this drain held @queued: give it back now. */
	nta_release_if_spare(pool, blk, released);
	return count;
}

/**
 * nta_pool_drain - free what other CPUs queued for @pool
 * @pool: the pool; the caller is its owner
 * @released: where blocks that became wholly free above the reserve go
 *
 * Drains at most NTA_DRAIN_BLOCKS blocks, so that one call, made with
 * interrupts off, stays short however much is queued; the rest goes back
 * on the list, and the caller arranges to come back for it when the list
 * is not empty afterwards.  A queued object that is no longer live is
 * reported through nta_report_bad_free() and left alone.
 *
 * Return: the number of objects freed.
 */
unsigned int nta_pool_drain(struct nta_pool *pool, struct list_head *released)
{
	struct llist_node *head, *pos, *next;
	unsigned int count = 0, blocks = 0;
	struct nta_block *blk;

	if (llist_empty(&pool->remote))
		return 0;
	head = llist_del_all(&pool->remote);
	pool->atomics++;
	llist_for_each_safe(pos, next, head) {
		if (blocks == NTA_DRAIN_BLOCKS) {
			nta_llist_requeue(pos, &pool->remote);
			pool->atomics++;
			break;
		}
		blk = llist_entry(pos, struct nta_block, remote);
		blocks++;
		count += nta_drain_block(pool, blk, released);
	}
	atomic_sub(blocks, &pool->remote_blocks);
	pool->atomics++;
	return count;
}

/**
 * nta_pool_largest_free - the largest free chunk of a pool
 * @pool: the pool
 *
 * Return: its size in bytes, 0 when the pool has no free chunk.
 */
unsigned long nta_pool_largest_free(const struct nta_pool *pool)
{
	unsigned long len = find_last_bit(pool->nonempty, NTA_NR_LISTS);

	return len >= NTA_NR_LISTS ? 0 : len * NTA_UNIT;
}

/**
 * nta_bad_free_reason - text for a refused free
 * @why: the reason nta_check_free() or nta_remote_free() gave
 *
 * Return: a short description for log messages.
 */
const char *nta_bad_free_reason(enum nta_bad_free why)
{
	switch (why) {
	case NTA_FREE_OK:
		return "ok";
	case NTA_FREE_FOREIGN:
		return "not an NTA object";
	case NTA_FREE_MISALIGNED:
		return "misaligned pointer";
	case NTA_FREE_NOT_ALLOCATED:
		return "double free or never allocated";
	case NTA_FREE_PENDING:
		return "double free (already queued for its owner)";
	case NTA_FREE_WRONG_SIZE:
		return "size does not match the allocation";
	case NTA_FREE_BAD_HEADER:
		return "block header overwritten";
	}
	return "unknown";
}

#if IS_ENABLED(CONFIG_NTA_POOL_CHECK)
/*
 * The pool validator: the KUnit suite, debugfs nta/check and a userspace
 * test harness all hold a pool to these invariants, so that a check added
 * here runs in all three.  It only reads; it follows a
 * free-list link only once it has seen the link agree with its
 * neighbour's, and it bounds every walk, so that a corrupt pool is
 * reported rather than followed.  One walk of the lists and one of the
 * blocks, each chunk and unit looked at once, so that it stays quick on
 * pools of hundreds of blocks.
 */
struct nta_check {
	char *msg;
	size_t len;
	unsigned int errs;
	unsigned long chunks, units;	/* on the lists */
	unsigned long runs, free;	/* free runs and units in the bitmaps */
	unsigned long whole;		/* chunks on the wholly-free list */
};

/* The caller cannot print (it may hold a local lock): keep the first. */
static __printf(2, 3) void nta_check_bad(struct nta_check *ck,
					 const char *fmt, ...)
{
	va_list args;

	if (ck->errs++)
		return;
	va_start(args, fmt);
	vsnprintf(ck->msg, ck->len, fmt, args);
	va_end(args);
}

/* A chunk on list @units: a maximal free run of a block of @pool. */
static void nta_check_chunk(const struct nta_pool *pool, struct nta_check *ck,
			    const struct nta_chunk *chunk, unsigned int units)
{
	const struct nta_block *blk = nta_block_of(chunk);
	unsigned int unit = nta_unit_of(blk, chunk), end = unit + units;

	if (unit < NTA_HDR_UNITS || end > NTA_BLOCK_UNITS || blk->pool != pool) {
		nta_check_bad(ck, "chunk %p/%u out of place", chunk, units);
		return;
	}
	if (find_next_bit(blk->used, end, unit) < end)
		nta_check_bad(ck, "chunk %p/%u overlaps an object", chunk, units);
	else if (!test_bit(unit - 1, blk->used) ||
		 (end < NTA_BLOCK_UNITS && !test_bit(end, blk->used)))
		nta_check_bad(ck, "chunk %p/%u has a free neighbour", chunk,
			      units);
}

/*
 * The non-empty bits, and each list a ring through its head whose links
 * agree both ways, of chunks that are maximal free runs.  A chunk has one
 * pair of links, so none is on two lists or twice on one, and two
 * distinct maximal runs never overlap.
 *
 * Return: false when a list cannot be walked to its end.
 */
static bool nta_check_lists(const struct nta_pool *pool, struct nta_check *ck)
{
	const unsigned int nbits = BITS_TO_LONGS(NTA_NR_LISTS) * BITS_PER_LONG;
	/* Free runs are never adjacent: half a block's units at most. */
	const unsigned long max = ((unsigned long)pool->nr_blocks + 1) *
				  DIV_ROUND_UP(NTA_DATA_UNITS, 2);
	const struct nta_chunk *head, *pos;
	unsigned long before;
	unsigned int i;
	bool nonempty;

	if (test_bit(0, pool->nonempty) ||
	    find_next_bit(pool->nonempty, nbits, NTA_NR_LISTS) < nbits)
		nta_check_bad(ck, "non-empty bit outside lists 1..%u",
			      (unsigned int)NTA_DATA_UNITS);
	if (!nta_flist_empty(&pool->free[0]))
		nta_check_bad(ck, "list 0 in use");
	for (i = 1; i < NTA_NR_LISTS; i++) {
		head = &pool->free[i];
		before = ck->chunks;
		for (pos = head;;) {
			if (!nta_chunk_linked(pool, pos)) {
				nta_check_bad(ck, "list %u: chunk %p badly linked",
					      i, pos);
				return false;
			}
			pos = nta_chunk_next(pos);
			if (pos == head)
				break;
			if (pos >= pool->free && pos < pool->free + NTA_NR_LISTS) {
				nta_check_bad(ck, "list %u runs into list %u", i,
					      (unsigned int)(pos - pool->free));
				return false;
			}
			if (++ck->chunks > max) {
				nta_check_bad(ck, "list %u: more chunks than %u blocks hold",
					      i, pool->nr_blocks);
				return false;
			}
			ck->units += i;
			nta_check_chunk(pool, ck, pos, i);
		}
		nonempty = ck->chunks > before;
		if (nonempty != test_bit(i, pool->nonempty))
			nta_check_bad(ck, "list %u: non-empty bit is wrong", i);
		if (i == NTA_DATA_UNITS)
			ck->whole = ck->chunks - before;
	}
	return true;
}

/* One block's header, bitmaps and length bytes; counts its free runs. */
static void nta_check_block(const struct nta_pool *pool,
			    const struct nta_block *blk, struct nta_check *ck)
{
	unsigned int i, blk_free = 0;
	bool used, prev;

	/* Its chunks cannot be found through nta_block_of(): say so, stop. */
	if ((unsigned long)blk & (NTA_BLOCK_SIZE - 1)) {
		nta_check_bad(ck, "block %p: misaligned", blk);
		return;
	}
	if (blk->pool != pool)
		nta_check_bad(ck, "block %p: wrong pool", blk);
	for (i = 0; i < NTA_HDR_UNITS; i++)
		if (!test_bit(i, blk->used) || test_bit(i, blk->start))
			nta_check_bad(ck, "block %p: header unit %u not reserved",
				      blk, i);
	if (!bitmap_subset(blk->start, blk->used, NTA_BLOCK_UNITS))
		nta_check_bad(ck, "block %p: object start in free space", blk);
	if (!bitmap_subset(blk->pending, blk->start, NTA_BLOCK_UNITS))
		nta_check_bad(ck, "block %p: pending bit on no object", blk);
	/* A remote free sets its bit just before it queues the block. */
	if (!bitmap_empty(blk->pending, NTA_BLOCK_UNITS) &&
	    !READ_ONCE(blk->queued))
		nta_check_bad(ck, "block %p: remote frees pending, not queued",
			      blk);
	/*
	 * ... and just after it claimed the object.  A double free that
	 * raced with the owner's own free breaks this until the drain: the
	 * owner's new generation may wipe the claim (nta_mark_dead()).
	 */
	for_each_set_bit(i, blk->pending, NTA_BLOCK_UNITS)
		if (!(nta_gen(blk, i) & NTA_GEN_CLAIMED))
			nta_check_bad(ck, "block %p: pending bit on unclaimed unit %u",
				      blk, i);
	/* A length byte sits on an object's start and says its length. */
	for (i = 0; i < NTA_BLOCK_UNITS; i++)
		if (blk->meta[i].cls &&
		    (!test_bit(i, blk->start) ||
		     nta_object_units(blk, i) != blk->meta[i].cls))
			nta_check_bad(ck, "block %p: length byte %u at unit %u",
				      blk, blk->meta[i].cls, i);
	for (i = NTA_HDR_UNITS; i < NTA_BLOCK_UNITS; i++) {
		used = test_bit(i, blk->used);
		prev = test_bit(i - 1, blk->used);
		if (!used) {
			blk_free++;
			ck->runs += prev;
		} else if (!prev && !test_bit(i, blk->start)) {
			/* Objects in bins keep their start bits too. */
			nta_check_bad(ck, "block %p: unit %u used by no object",
				      blk, i);
		}
	}
	if (blk_free != blk->free_units)
		nta_check_bad(ck, "block %p: free_units %u, bitmap says %u",
			      blk, blk->free_units, blk_free);
	ck->free += blk_free;
}

/**
 * nta_pool_check - check every invariant the core relies on
 * @pool: the pool; the caller serialises with its owner (in the kernel:
 *	holds the owner's lock and mark)
 * @msg: where the first violation is described
 * @len: the size of @msg
 *
 * For the KUnit suite, CONFIG_NTA_DEBUG's nta/check and a userspace test
 * harness, at a moment when no remote free is in flight.  It prints
 * nothing, as it may run under a local lock.  Only the core's state is
 * checked: an object the kernel glue parks in a bin is a live object
 * whose length byte is 0, which the core allows.
 *
 * Every listed chunk is a maximal free run of one of the pool's blocks
 * and no two are the same, so as many chunks and units on the lists as
 * free runs and units in the blocks' bitmaps means that every free unit
 * is on exactly one list.
 *
 * Return: how many violations it found; 0 when the pool is sound.
 */
unsigned int nta_pool_check(const struct nta_pool *pool, char *msg,
			    size_t len)
{
	struct nta_check ck = { .msg = msg, .len = len };
	const struct nta_block *blk;
	unsigned long blocks = 0;

	if (pool->broken) {
		nta_check_bad(&ck, "quarantined: free-list links were overwritten");
		return ck.errs;
	}
	if (!nta_check_lists(pool, &ck))
		return ck.errs;
	list_for_each_entry(blk, &pool->blocks, link) {
		/* A cycle that misses the list head ends here. */
		if (++blocks > pool->nr_blocks) {
			nta_check_bad(&ck, "nr_blocks %u, list has more",
				      pool->nr_blocks);
			return ck.errs;
		}
		nta_check_block(pool, blk, &ck);
	}
	if (blocks != pool->nr_blocks)
		nta_check_bad(&ck, "nr_blocks %u, list has %lu",
			      pool->nr_blocks, blocks);
	if (ck.chunks != ck.runs || ck.units != ck.free)
		nta_check_bad(&ck, "lists hold %lu chunks of %lu units, blocks %lu runs of %lu",
			      ck.chunks, ck.units, ck.runs, ck.free);
	if (pool->free_units != ck.free)
		nta_check_bad(&ck, "free_units %lu, bitmaps say %lu",
			      pool->free_units, ck.free);
	if (pool->whole != ck.whole)
		nta_check_bad(&ck, "whole %u, list has %lu", pool->whole,
			      ck.whole);
	return ck.errs;
}
#endif /* CONFIG_NTA_POOL_CHECK */
