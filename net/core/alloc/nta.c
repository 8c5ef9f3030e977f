// SPDX-License-Identifier: GPL-2.0
/*
 * NTA per-CPU allocator: nta_alloc(), nta_free() and nta_free_trusted(),
 * each after the slow paths it falls back to.  Their fast paths are
 * inline in nta_fast.h, which skbuff.c's head helpers inline too.
 *
 * An allocation takes the most recently freed object of its length from
 * this CPU's bins (nta_bins.h) under the fast-path mark, with no
 * interrupt disabled; failing that it takes the local lock, drains what
 * other CPUs freed, and splits a chunk off the pool's free lists
 * (nta_core.c), growing the pool by a block if need be.  A free on the
 * owning CPU parks the object in its bin, or merges it with its free
 * neighbours when the bins are full.
 *
 * Where blocks come from and go is nta_pools.c; frees on a CPU that does
 * not own the object are nta_remote.c's; reports are nta_report.c's.
 * See Documentation/networking/nta.rst.
 */

#define pr_fmt(fmt) "nta: " fmt

#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/nta.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "nta_fast.h"

DEFINE_PER_CPU(struct nta_cpu, nta_cpu) = {
	.lock = INIT_LOCAL_LOCK(lock),
};

DEFINE_STATIC_KEY_TRUE(nta_enabled_key);
DEFINE_STATIC_KEY_FALSE_RO(nta_wipes_key);
DEFINE_STATIC_KEY_TRUE(nta_plain_free_key);
/* No exports: every user (skbuff.c, usercopy, the tests) is built in. */

/*
 * The page allocator flags for a new block, from the caller's: its rules
 * on sleeping, reclaim, I/O and FS, and through the page allocator its
 * cpuset and mempolicy, as kmalloc() would have used them.  Never the
 * emergency reserves (they stay with the page allocator's pfmemalloc
 * logic and kmalloc_reserve()), one reclaim attempt at most and no
 * warning: the caller falls back to kmalloc when this fails.
 */
static gfp_t nta_grow_gfp(gfp_t gfp)
{
	gfp &= ~(__GFP_ZERO | __GFP_MEMALLOC | __GFP_NOFAIL |
		 __GFP_RETRY_MAYFAIL);
	return gfp | __GFP_NORETRY | __GFP_NOWARN | __GFP_NOMEMALLOC;
}

/*
 * Allocate from this CPU's pool under its lock: drain what other CPUs
 * freed, try the free lists, then the bins merged (a bounded number of
 * batches: nta_bins_alloc_merged()), then *@blk, a block the caller
 * allocated outside the lock (taken, and *@blk set to NULL, when it is
 * used: once the bins are empty, or with @last).  Sets *@may_grow when
 * the pool is below its cap, and *@binned when the bins may still hold
 * objects to merge first (they keep grants until a merge empties them).
 */
static void *nta_alloc_locked(unsigned int size, struct nta_block **blk,
			      bool last, bool *may_grow, bool *binned)
{
	LIST_HEAD(released);
	struct nta_cpu *c;
	unsigned long flags;
	void *obj;
	bool has_mark;

	c = nta_slow_lock(&flags, &has_mark);
	nta_drain_locked(c, has_mark, &released);
	nta_bins_on_broken(c, has_mark);
	/* The drain may have put objects of this length in their bin. */
	obj = has_mark ? nta_bin_pop(&c->bins, nta_size_to_units(size)) : NULL;
	if (!obj)
		obj = __nta_pool_alloc(&c->pool, size);
	if (unlikely(!obj) && has_mark && c->bins.granted)
		obj = nta_bins_alloc_merged(&c->bins, &c->pool, size,
					    &released);
	*binned = has_mark && c->bins.granted;
	*may_grow = c->pool.nr_blocks < nta_max_blocks &&
		    !nta_pool_broken(&c->pool);
	if (unlikely(!obj) && *blk && *may_grow && (!*binned || last)) {
		nta_take_block(c, *blk);
		*blk = NULL;
		nta_count(NTA_CTR(grows), 1);
		nta_spares_on_grow(c);
		obj = __nta_pool_alloc(&c->pool, size);
	}
	if (likely(obj)) {
		nta_count(NTA_CTR(allocs), 1);
		nta_account(c, has_mark, size, 1);
	}
	nta_slow_unlock(c, has_mark, flags);

	nta_flush_reports();
	if (unlikely(!list_empty(&released)))
		nta_release_blocks(&released);
	return obj;
}

/*
 * Holds of the lock in which the slow path merges binned objects before
 * it takes a new block, interrupts on in between: one when its caller
 * keeps them off anyway, which then grows the pool rather than merge
 * more of the bins.
 */
static unsigned int nta_grow_merge_holds(void)
{
	return irqs_disabled() ? 1 : NTA_GROW_MERGE_HOLDS;
}

/*
 * Growth rests for NTA_GROW_BACKOFF after a failure.  A window, not a
 * deadline: jiffies start "before" 0 and wrap, and a deadline kept from
 * long ago would read as the future again.
 */
static bool nta_grow_resting(const struct nta_cpu *c)
{
	unsigned long failed = READ_ONCE(c->grow_failed);

	return failed && time_in_range(jiffies, failed,
				       failed + NTA_GROW_BACKOFF);
}

/*
 * The free lists had nothing big enough: a new block, allocated with the
 * caller's flags and outside the lock and the mark, so that a GFP_KERNEL
 * caller may sleep in reclaim (and come back on another CPU, whose pool
 * then takes the block).  After a failure, growth rests for
 * NTA_GROW_BACKOFF, so that while memory is short heads go straight to
 * the fallback instead of asking the page allocator twice per packet.
 */
static noinline void *nta_alloc_grow(unsigned int size, gfp_t gfp)
{
	unsigned int holds = nta_grow_merge_holds();
	struct nta_block *blk;
	bool may_grow, binned;
	void *obj;

	if (nta_grow_resting(raw_cpu_ptr(&nta_cpu)))
		return NULL;
	blk = nta_grow_block(numa_mem_id(), nta_grow_gfp(gfp));
	if (IS_ERR(blk))	/* net.core.nta_max_total: as at nta_max= */
		return NULL;
	if (!blk) {
		/* 0 means "never failed": a failure at jiffies 0 rests not. */
		WRITE_ONCE(raw_cpu_ptr(&nta_cpu)->grow_failed, jiffies);
		return NULL;
	}
	/* Interrupts may have parked objects, or this is another CPU. */
	do {
		obj = nta_alloc_locked(size, &blk, holds == 1, &may_grow,
				       &binned);
	} while (!obj && blk && binned && --holds);
	/* Not needed after all (another context freed), or over the cap. */
	if (unlikely(blk))
		nta_free_block(blk);
	return obj;
}

noinline void *nta_alloc_slow(unsigned int size, gfp_t gfp)
{
	unsigned int holds = nta_grow_merge_holds();
	struct nta_block *none = NULL;
	bool may_grow, binned;
	void *obj;

	/* A size of 0, which the inline path lets through (nta_fast_size()). */
	if (unlikely(size - 1 >= NTA_MAX_SIZE))
		return NULL;
	/* The local lock keeps out interrupts, not NMIs. */
	if (unlikely(!nta_is_ready() || in_nmi()))
		return NULL;

	do {
		obj = nta_alloc_locked(size, &none, false, &may_grow, &binned);
	} while (unlikely(!obj) && binned && --holds);
	if (unlikely(!obj) && may_grow)
		obj = nta_alloc_grow(size, gfp);
	if (unlikely(!obj)) {
		this_cpu_inc(nta_cpu.stats.failures);
		return NULL;
	}
	nta_hook_alloc(obj, size, gfp);
	/*
	 * init_on_free wiped every object when it was freed, but a chunk
	 * that absorbed free neighbours keeps their free-list and bin links
	 * at interior unit boundaries: only objects from the bins (whose one
	 * link nta_alloc_wipe() clears) are wholly zero already.
	 */
	if (want_init_on_alloc(gfp) || want_init_on_free())
		memset(obj, 0, size);
	return obj;
}

/**
 * nta_alloc - allocate network memory from this CPU's pool
 * @size: bytes wanted, at most nta_max_size()
 * @gfp: allocation flags: __GFP_ZERO, and the pool grows with them (but
 *	never into the emergency reserves)
 *
 * The object is aligned to a cache line and is freed with nta_free() and
 * the same @size, on any CPU.  An object of the same length freed on this
 * CPU is handed out again from its bin; anything else takes the slow path
 * into the split/merge core.
 *
 * Context: any context but NMI.
 * Return: the object, or NULL when @size is 0 or too large, or the pool is
 * at its limit and the page allocator has nothing; callers fall back.
 */
void *nta_alloc(unsigned int size, gfp_t gfp)
{
	return __nta_alloc(size, gfp);
}

/*
 * The owner's free that the fast path could not take: the bins make room
 * (nta_bins_make_room()) and the object is parked, or merged when a
 * bounded merge did not make room (bins above caps a tick has just
 * lowered).  The caller has checked the object.
 */
static void nta_free_to_bin(struct nta_cpu *c, void *ptr, unsigned int size,
			    struct list_head *released)
{
	unsigned int units = nta_size_to_units(size);

	if (want_init_on_free())
		memset(ptr, 0, size);
	if (nta_bins_make_room(&c->bins, &c->pool, units, released))
		nta_bin_push(c, ptr, units);
	else
		nta_free_units(&c->pool, nta_block_of(ptr),
			       nta_unit_of(nta_block_of(ptr), ptr), units,
			       released);
}

/*
 * nta_this_bin_pop() found the link of this CPU's bin of @units units
 * overwritten: drop the bin and report, under the mark, out of line.
 */
noinline void nta_this_bin_bad_link(void *obj, unsigned int units)
{
	nta_bin_drop(this_cpu_ptr(&nta_cpu.bins), units);
	nta_report_bad_bin(obj, units);
}

/*
 * An object from a bin, for a caller that wants it zeroed (init_on_alloc,
 * __GFP_ZERO), or with init_on_free, whose free wiped all of it but the
 * bin link, which is cleared as SLUB clears its free pointer.  Out of
 * line, so that the fast path keeps no address for it: a call and a
 * return more in front of the memset() where init_on_alloc is on.
 */
noinline void *nta_alloc_wipe(void *obj, unsigned int size, gfp_t gfp)
{
	if (want_init_on_alloc(gfp))
		return memset(obj, 0, size);
	if (want_init_on_free())
		*nta_bin_link_at(obj, nta_size_to_units(size)) = NULL;
	return obj;
}

/* @mapped: the caller has found @ptr in the block map (nta_free()). */
noinline void nta_free_slow(void *ptr, unsigned int size, unsigned long ip,
			    bool mapped)
{
	struct nta_block *blk = nta_block_of(ptr);
	enum nta_bad_free why;
	struct nta_cpu *c;
	LIST_HEAD(released);
	unsigned long flags;
	bool has_mark;

	/* nta_free_trusted() leaves the block map to the paths off its fast one. */
	if (unlikely(!mapped && !__nta_owns(ptr))) {
		nta_complain(ptr, size, NTA_FREE_FOREIGN, ip);
		return;
	}
	c = nta_slow_lock(&flags, &has_mark);
	/* Under the lock, our own block cannot go while its page is read. */
	if (likely(blk->pool == &c->pool && nta_block_owner(blk) == c)) {
		why = nta_check_object(blk, ptr, size);
		if (likely(!why)) {
			nta_hook_free(ptr, size);
			if (has_mark && nta_enabled())
				nta_free_to_bin(c, ptr, size, &released);
			else
				nta_do_free(&c->pool, ptr, size, &released);
			nta_account(c, has_mark, size, -1);
		}
	} else {
		why = nta_queue_for_owner(c, has_mark, blk, ptr, size);
	}
	nta_drain_locked(c, has_mark, &released);
	nta_bins_on_broken(c, has_mark);
	nta_slow_unlock(c, has_mark, flags);

	/* Reports print outside the lock: printk may allocate an skb. */
	nta_flush_reports();
	if (unlikely(why))
		nta_complain(ptr, size, why, ip);
	if (unlikely(!list_empty(&released)))
		nta_release_blocks(&released);
}

/**
 * nta_set_enabled - switch NTA on or off for new skb heads
 * @on: whether new heads should come from NTA
 *
 * The one place that flips nta_enabled_key (nta=, net.core.nta, a failed
 * init, the tests): the inline free's key must follow it, on exactly
 * when NTA is on and init_on_free (a boot parameter) is off.  A free that
 * runs between the two flips takes nta_free_not_plain(), which is correct
 * either way.  The mutex keeps two callers from leaving the keys apart.
 *
 * Context: process context; may sleep.
 */
void nta_set_enabled(bool on)
{
	static DEFINE_MUTEX(nta_keys_mutex);

	mutex_lock(&nta_keys_mutex);
	if (on) {
		static_branch_enable(&nta_enabled_key);
		if (!want_init_on_free())
			static_branch_enable(&nta_plain_free_key);
		else
			static_branch_disable(&nta_plain_free_key);
	} else {
		static_branch_disable(&nta_plain_free_key);
		static_branch_disable(&nta_enabled_key);
	}
	mutex_unlock(&nta_keys_mutex);
}

/*
 * nta_free() and nta_free_trusted() when the inline free's key is off: NTA
 * switched off (nothing allocates from the bins, so nothing is parked in
 * them), or init_on_free, under which the owner wipes what it parks.
 */
noinline void nta_free_not_plain(void *ptr, unsigned int size, unsigned long ip,
			     bool mapped)
{
	struct nta_block *blk = nta_block_of(ptr);
	bool done;

	if (unlikely(!nta_enabled()) || unlikely(!nta_fast_take_mark())) {
		nta_free_slow(ptr, size, ip, mapped);
		return;
	}
	if (unlikely(blk->pool != __this_cpu_read(nta_cpu.home))) {
		nta_free_remote(this_cpu_ptr(&nta_cpu), blk, ptr, size, ip,
				mapped);
		return;
	}
	done = nta_free_fast(blk, ptr, size, want_init_on_free());
	nta_fast_drop_mark();
	if (!done)
		nta_free_slow(ptr, size, ip, mapped);
}

/**
 * nta_free - free an object allocated with nta_alloc()
 * @ptr: the object
 * @size: the size passed to nta_alloc()
 *
 * On the owning CPU the object is parked in the bin for its length, from
 * where the next allocation of that length takes it, or merged with its
 * free neighbours when the bins are full; on any other CPU it is queued
 * for the owner.  Its start, size and state are checked against the
 * block's out-of-band length bytes before anything is written.  A pointer
 * NTA does not own, a double free, a wrong size or a misaligned pointer is
 * reported, counted, and otherwise ignored.
 *
 * Context: any context but NMI.
 */
void nta_free(void *ptr, unsigned int size)
{
	/* Before any header is read: @ptr may be anyone's. */
	if (unlikely(!__nta_owns(ptr))) {
		nta_complain(ptr, size, NTA_FREE_FOREIGN, NTA_RET_IP);
		return;
	}
	__nta_free(ptr, size, NTA_RET_IP, true);
}

/**
 * nta_free_trusted - nta_free() for a caller that recorded @ptr as NTA's
 * @ptr: the object
 * @size: the size passed to nta_alloc()
 *
 * For callers that keep their own record of which allocator served an
 * object, as skb->__tsize does for skb heads: the fast path skips the
 * block-map lookup and reads the word of the block header that names the
 * owning pool straight away.  A pointer whose "header" names another pool
 * goes to the remote or slow path, which look it up in the block map
 * before they read more, and is refused there.  One whose "header" names
 * this CPU's pool is believed as far as the fast path's checks of its
 * length byte and pending bit go, and may then be parked in a bin.  So
 * the record must be right: a pointer that never was NTA's must not get
 * here, as it must not get to kfree() either.
 *
 * Context: any context but NMI.
 */
void nta_free_trusted(void *ptr, unsigned int size)
{
	__nta_free(ptr, size, NTA_RET_IP, false);
}

/**
 * nta_max_size - the largest request NTA serves
 *
 * Return: the size in bytes; larger requests must go elsewhere.
 */
unsigned int nta_max_size(void)
{
	return NTA_MAX_SIZE;
}
