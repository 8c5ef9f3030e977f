/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NTA kernel glue shared by the per-CPU allocator's files (nta.c,
 * nta_remote.c, nta_pools.c, nta_report.c, nta_stats.c), its controls
 * (nta_ctl.c, nta_debug.c) and the KUnit suite: the per-CPU state, the
 * fast-path mark and the slow paths' lock, the hooks every path shares,
 * and the knobs the tests turn.
 */
#ifndef _NET_CORE_ALLOC_NTA_INTERNAL_H
#define _NET_CORE_ALLOC_NTA_INTERNAL_H

#include <linux/irq_work.h>
#include <linux/kasan.h>
#include <linux/kmemleak.h>
#include <linux/kmsan-checks.h>
#include <linux/llist.h>
#include <linux/local_lock.h>
#include <linux/nta.h>
#include <linux/percpu.h>
#include <linux/shrinker.h>
#include <linux/skbuff.h>
#include <linux/timer.h>
#include <linux/workqueue.h>

#include "nta_bins.h"

/* Bins unused for this long are merged back into the pool. */
#define NTA_BIN_DECAY		HZ

/* Bounded drains nta_drain_all() lets a CPU run before it trims anyway. */
#define NTA_TRIM_BATCHES	64

/*
 * struct nta_stats from @allocs to @kmalloc_bytes: what each CPU counts
 * itself; the fields after them are read from the pools.  struct nta_cpu
 * keeps them in @stats, written only with this_cpu_*() operations, which
 * no interrupt can tear, but for what the holder of the CPU's @busy mark
 * counts with plain stores: the fast path's allocations and the requested
 * bytes in @fast (struct nta_fast_stats), the live objects per length in
 * the bins' slots.  Readers add them up.  Remote frees are counted on the
 * freeing CPU, so per-CPU gauges may go negative, their sum may not.  An
 * owner's local frees are not counted at all: readers derive them
 * (nta_derive_frees()), and @stats.frees counts only the drained ones.
 */
#define NTA_NR_COUNTERS	(offsetof(struct nta_stats, blocks) / sizeof(u64))
static_assert(offsetofend(struct nta_stats, kmalloc_bytes) ==
	      offsetof(struct nta_stats, blocks));

/*
 * Wholly free blocks a pool keeps above its reserve at rest (32 KiB per CPU
 * with 16 KiB blocks).  Few, because they are footprint no head uses; a
 * load that swings by more raises them (below) within one swing.
 */
#define NTA_SPARE_BLOCKS	2
/*
 * A pool that grows after it gave a block back since its last growth
 * swings by more than its spares: they grow by as many blocks as it
 * gave back, and at least double, up to NTA_SPARE_MAX (128 KiB per CPU
 * with 16 KiB blocks).  An NTA_BIN_DECAY tick without growth halves
 * them again.  The idea is the page allocator's per-CPU lists, whose
 * high mark follows the load (mm/page_alloc.c, nr_pcp_high()): a
 * consumer that frees a producer's heads in bursts would otherwise make
 * the pool grow and give a block back for nearly every block's worth of
 * heads.  Few: a pool whose heads each take more than half a block
 * (8000 B datagrams) gives a block back per head, and would keep as
 * many spares as it had heads in flight.
 */
#define NTA_SPARE_MAX		8

/* How long a queued free waits at most before its owner is kicked. */
#define NTA_STRANDED_DELAY	(HZ / 10)

/* How long growth rests after the page allocator said no. */
#define NTA_GROW_BACKOFF	(HZ / 10)

/*
 * Batched remote frees (nta_remote.c): a CPU collects the objects it frees
 * for another CPU in a batch per owner and publishes a full one (or one
 * that holds NTA_BATCH_UNITS) with a single llist_add(); the owner frees
 * the batch's objects in its next slow path and sends the batch home.  Each
 * CPU owns NTA_BATCHES_PER_CPU batches, so the free path allocates nothing;
 * NTA_BATCH_SLOTS of them may be open at once, for as many owners, each in the
 * slot of its number modulo NTA_BATCH_SLOTS when that one is free, where the
 * free path looks first.  An open batch waits at most NTA_BATCH_DELAY before it
 * is published half full.  A batch comes home only after its owner drained it,
 * so a freer that runs ahead of a busy owner needs enough of them, or it falls
 * back to the pending bit (five atomics a free).
 */
#define NTA_BATCH_MAX		24
/*
 * A batch is published at once when its objects reach this many units
 * (four blocks): until their owner drains them, they keep their blocks
 * from going back, and 24 heads of 8 KiB would keep 24 blocks.
 */
#define NTA_BATCH_UNITS		(4 * NTA_BLOCK_UNITS)
#define NTA_BATCH_SLOTS		4
#define NTA_BATCHES_PER_CPU	32
#define NTA_BATCH_DELAY		(HZ >= 100 ? HZ / 100 : 1)

/**
 * struct nta_batch - remote frees collected for one owner
 * @node: on the owner's @batch_inbox once published, on the home CPU's
 *	@batch_returned or @batch_stash when idle
 * @owner: the CPU whose objects it holds
 * @home: the CPU that owns the batch
 * @nr: objects collected
 * @held: their units (NTA_BATCH_UNITS)
 * @gen: each object's generation byte (struct nta_unit_meta) when freed
 * @units: and its length in units
 * @obj: the objects
 *
 * 256 bytes with 64-bit pointers, cache-line aligned: a batch moves between
 * CPUs, and shares no line with anything else.
 */
struct nta_batch {
	struct llist_node node;
	u16 owner;
	u16 home;
	u8 nr;
	u16 held;
	u8 gen[NTA_BATCH_MAX];
	u8 units[NTA_BATCH_MAX];
	void *obj[NTA_BATCH_MAX];
} ____cacheline_aligned_in_smp;

#if IS_ENABLED(CONFIG_KUNIT)
/*
 * Static without KUnit: tests of the pending-bit path turn batching off,
 * tests that count kicks or batches set the delays.
 */
extern bool nta_remote_batching;
extern unsigned long nta_batch_delay;
extern unsigned long nta_stranded_delay;
#endif

/**
 * struct nta_report - a report found under the local lock, printed after it
 * @nr: reports recorded since the last print; only the first is kept
 * @ptr: the pointer of a refused free, or the free chunk with bad poison
 * @bad: the first overwritten byte of a poison report; @ptr itself when a
 *	free chunk's links were found overwritten; else NULL
 * @size: the refused free's size (0 when not known) or the chunk's size
 * @why: why the free was refused
 *
 * printk() can allocate an skb (netconsole), which would re-enter NTA on
 * this CPU with its pool in the middle of an update: so what is found
 * under the lock is only recorded, and printed once the lock is dropped.
 */
struct nta_report {
	unsigned int nr;
	const void *ptr;
	const void *bad;
	unsigned int size;
	enum nta_bad_free why;
};

/**
 * struct nta_fast_stats - the counters the fast paths keep
 * @allocs: allocations served from the bins; also how the decay tick and
 *	the stranded-free timer tell that the CPU is busy
 * @alloc_bytes: bytes requested by the allocations the holder of the mark
 *	made
 * @freed_bytes: bytes requested by the objects the holder of the mark
 *	freed
 *
 * Plain words of the holder of the mark, beside it on the CPU's first
 * cache line; every other counter is in struct nta_stats.  No count of
 * frees is kept here: it follows from the others at read time.  The
 * requested bytes of live objects are @alloc_bytes less @freed_bytes,
 * read together (nta_stats.c): two counters that only grow, so that a
 * free adds its size as an allocation does, and negates nothing.
 */
struct nta_fast_stats {
	u64 allocs;
	u64 alloc_bytes;
	u64 freed_bytes;
};

/**
 * struct nta_cpu - one CPU's allocator
 * @bins: freed objects parked by length, for the fast path (nta_bins.h),
 *	and the live objects of each length; first, for the offsets of its
 *	slots (struct nta_bins)
 * @pool: the blocks and free lists
 * @busy: the fast path's exclusion mark, set with preemption off; whoever
 *	holds it owns @fast and @bins
 * @fast: counters of the holder of @busy
 * @home: &@pool, which the owner's free compares a block header's @pool
 *	with, read through the per-CPU offset as the bins are (nta_fast.h)
 * @lock: serialises @pool (but for @pool.remote) against this CPU's
 *	own contexts (task, softirq, hardirq); the slow paths take it
 * @stats: counters kept with this_cpu_*() operations
 * @kick: run on this CPU to drain @pool.remote when it may be idle
 * @trim: set by the shrinker: @kick also gives back spare blocks; an
 *	unsigned int for xchg()
 * @trim_runs: runs of @kick left for the trim it is doing, a batch of
 *	the bins each
 * @decay: idle-bin decay: every NTA_BIN_DECAY, bins that saw no fast-path
 *	allocation since the last tick are merged into the pool, and
 *	empty bins are shut (nta_bins_shut())
 * @decay_seen: @fast.allocs at the last tick
 * @queued_seen: @fast.allocs when another CPU last queued frees for this
 *	one: a stranded-free timer kicks it only if it allocated since
 *	(nta_owner_kept_busy()); written by those CPUs, a hint, not a count
 * @spare_grows: growths since the last tick (nta_spares_decay())
 * @released_seen: @pool.released at the last growth (nta_spares_on_grow())
 * @grow_failed: when growth last failed (jiffies), 0 if never: it rests
 *	for NTA_GROW_BACKOFF after
 * @stranded: armed when this CPU queued a first block for an owner: kicks
 *	owners that still have frees queued when it fires
 * @report: reports waiting to be printed outside the lock
 * @batch_open: batches this CPU is filling, by owner modulo NTA_BATCH_SLOTS;
 *	the holder of @busy owns them
 * @batch_stash: this CPU's idle batches, for the holder of @busy
 * @batch_timer: publishes the open batches NTA_BATCH_DELAY after one opened
 * @batch_inbox: batches of frees of this CPU's objects, published by others
 * @batch_returned: this CPU's batches, sent back by their owners
 * @batch_mem: the batches this CPU owns
 */
struct nta_cpu {
	struct nta_bins bins;
	struct nta_pool pool;
	u8 busy ____cacheline_aligned_in_smp;
	struct nta_fast_stats fast;
	struct nta_pool *home;
	local_lock_t lock;
	struct nta_stats stats;
	struct irq_work kick;
	unsigned int trim;
	unsigned int trim_runs;
	unsigned long grow_failed;
	struct timer_list stranded;
	struct timer_list decay;
	u64 decay_seen;
	u64 queued_seen;
	unsigned int spare_grows;
	unsigned int released_seen;
	struct nta_report report;
	struct nta_batch *batch_open[NTA_BATCH_SLOTS];
	struct llist_node *batch_stash;
	struct timer_list batch_timer;
	struct llist_head batch_inbox ____cacheline_aligned_in_smp;
	struct llist_head batch_returned;
	struct nta_batch batch_mem[NTA_BATCHES_PER_CPU];
};

DECLARE_PER_CPU(struct nta_cpu, nta_cpu);
/* A slot's offset in the CPU's area is its bin link's (nta_bin_link_at()). */
static_assert(offsetof(struct nta_cpu, bins.slot) == 0);

DECLARE_STATIC_KEY_FALSE(nta_wipes_key);

/*
 * init_on_alloc or init_on_free: boot parameters, fixed before nta_init()
 * sets the key, so that the inline allocation tests one key for both.
 */
static __always_inline bool nta_wipes(void)
{
	return static_branch_unlikely(&nta_wipes_key);
}

DECLARE_STATIC_KEY_TRUE(nta_plain_free_key);

/*
 * NTA is on and init_on_free is off: the inline free tests one key for
 * both (flipped with nta_enabled_key by nta_set_enabled()), as the inline
 * allocation tests one for its wipes (set by nta_init()).
 */
static __always_inline bool nta_plain_free(void)
{
	return static_branch_likely(&nta_plain_free_key);
}

void nta_set_enabled(bool on);

/* Per-CPU limits in blocks, from nta_reserve= and nta_max=. */
extern unsigned int nta_reserve_blocks;
extern unsigned int nta_max_blocks;

/*
 * NTA's footprint: the pages of every block it holds, over all CPUs, from
 * the page allocator until they go back to it (after the RCU grace period
 * of a released block), reserve and spares included.  A pool grows only
 * while that stays within nta_max_total_pages (net.core.nta_max_total),
 * 0 for no limit; reserves are always taken.
 */
extern atomic_long_t nta_held_pages;
extern unsigned long nta_max_total_pages;

/*
 * Bad frees and poison reports WARN (rate-limited), or BUG() with
 * CONFIG_BUG_ON_DATA_CORRUPTION; the KUnit suite provokes them on purpose
 * and turns this off, so that its expected reports are plain lines.
 */
extern bool nta_warn_bad_free;

/* Writes after free found by the poison checks and the free-list link checks. */
extern atomic_t nta_poison_reports;

/* The step of nta_init() that failed, if one did (KUnit nta_init_unwind). */
enum nta_init_step {
	NTA_INIT_OK,
	NTA_INIT_MAP,
	NTA_INIT_DEAD,
	NTA_INIT_ONLINE,
};

#if IS_ENABLED(CONFIG_KUNIT)
extern enum nta_init_step nta_init_failed_at;
#endif

/*
 * Bytes NTA sets aside for a request of @size bytes, or 0 when it cannot
 * serve it.  Only the KUnit suite asks; inline, so it costs nothing
 * without it.
 */
static inline unsigned int nta_alloc_size(unsigned int size)
{
	if (!size || size > NTA_MAX_SIZE)
		return 0;
	return nta_size_to_units(size) * NTA_UNIT;
}

/*
 * Every NTA object is an skb head, and skb_head_alloc() gives the whole
 * object to __build_skb_around(), so each ends with its skb_shared_info.
 * Hardened usercopy lets no copy reach it: the usercopy region of an NTA
 * object is what comes before, as skb_small_head_cache's is for small
 * heads (SKB_SMALL_HEAD_HEADROOM).
 */
#define NTA_USERCOPY_TAIL	SKB_DATA_ALIGN(sizeof(struct skb_shared_info))

#if IS_ENABLED(CONFIG_KUNIT)
struct page *nta_block_pages(int node, gfp_t gfp);
bool nta_map_set(const void *mem, gfp_t gfp);
void nta_map_clear(const void *mem);
unsigned long nta_shrink_count(struct shrinker *shrink,
			       struct shrink_control *sc);
unsigned long nta_shrink_scan(struct shrinker *shrink,
			      struct shrink_control *sc);
const char *nta_usercopy_bad(const void *ptr, unsigned long n,
			     unsigned long *offset);
#endif

/* Set once the pools exist; until then nta_alloc() declines politely. */
extern bool nta_ready;

static inline bool nta_is_ready(void)
{
	/* Pairs with nta_init()'s release: pools, map and caps set up. */
	return smp_load_acquire(&nta_ready);
}

void nta_fill_reserves(void);

/*
 * One bit per NTA_BLOCK_SIZE range of the linear map: is it a block?  A
 * bitmap per NTA_MAP_CHUNK_SHIFT bytes of the map, made when the first
 * block there is taken, under a table that spans all the memory the
 * machine may have (max_possible_pfn, ranges the firmware says may be
 * hot-added included): memory added after boot is covered, and a hole in
 * the physical layout costs a pointer, not its bits.
 */
#define NTA_MAP_CHUNK_SHIFT	27
#define NTA_MAP_CHUNK_BITS	(1UL << (NTA_MAP_CHUNK_SHIFT - PAGE_SHIFT - \
					 NTA_BLOCK_ORDER))
extern unsigned long nta_block_map_bits;
extern unsigned long **nta_block_map;

/*
 * NUMA policy, in one place: a CPU's blocks come from the memory nearest
 * to that CPU, because the owner is the only one that allocates from and
 * merges in them, and most heads are written by the CPU that receives.
 */
static inline int nta_block_node(unsigned int cpu)
{
	return cpu_to_mem(cpu);
}

/*
 * Blocks come from the page allocator without __GFP_HIGHMEM, so they live
 * in the kernel's linear map: a block's index is its offset from
 * PAGE_OFFSET in blocks.  Any other address, NULL included, is below
 * PAGE_OFFSET (and wraps to a huge index) or beyond the end of the linear
 * map (high_memory), so the bounds check alone keeps it out of the map,
 * without virt_addr_valid() on every free.
 */
static __always_inline unsigned long nta_block_index(const void *ptr)
{
	return ((unsigned long)ptr - PAGE_OFFSET) >> (PAGE_SHIFT + NTA_BLOCK_ORDER);
}

static __always_inline bool __nta_owns(const void *ptr)
{
	unsigned long idx = nta_block_index(ptr);
	unsigned long *chunk;

	if (unlikely(idx >= nta_block_map_bits))
		return false;
	/* Set before its first bit (nta_map_set()), never cleared. */
	chunk = READ_ONCE(nta_block_map[idx / NTA_MAP_CHUNK_BITS]);
	return chunk && test_bit(idx % NTA_MAP_CHUNK_BITS, chunk);
}

/*
 * A block's owning CPU, out of band: the private word of the block's head
 * page holds the CPU + 1 while a pool has the block, 0 otherwise.  The
 * header's @pool says the same in band, where a linear overflow from the
 * memory below the block can forge it; a free on another CPU would then
 * write through it (the owner's lists and counters).  So every path but
 * the owner's fast one, which only compares @pool with its own pool,
 * believes @pool only when the page agrees (nta_block_owner()).
 */
static inline void nta_block_set_owner(struct nta_block *blk,
				       const struct nta_cpu *c)
{
	set_page_private(virt_to_page(blk), c->pool.id + 1);
}

static inline void nta_block_clear_owner(struct nta_block *blk)
{
	set_page_private(virt_to_page(blk), 0);
}

/*
 * The CPU whose pool owns @blk, a block of NTA's (the caller checked the
 * block map, and holds off its release: the owner's lock, the mark of a
 * CPU that holds a live object in it, or rcu_read_lock()), or NULL when
 * the header's @pool was overwritten.
 */
static inline struct nta_cpu *nta_block_owner(const struct nta_block *blk)
{
	unsigned long id = page_private(virt_to_page(blk));
	struct nta_cpu *c;

	if (unlikely(!id || id > nr_cpu_ids))
		return NULL;
	c = per_cpu_ptr(&nta_cpu, id - 1);
	return likely(READ_ONCE(blk->pool) == &c->pool) ? c : NULL;
}

/* A pool takes a block: in band in its header, out of band in its page. */
static inline void nta_take_block(struct nta_cpu *c, struct nta_block *blk)
{
	nta_block_set_owner(blk, c);
	nta_pool_add_block(&c->pool, blk);
}

/*
 * Heap debugging sees NTA objects as it sees kmalloc()'s.  KASAN in its
 * generic mode only: the allocator's objects are not instrumented (as
 * mm/slub.o is not, and for the same reason: the allocator keeps its
 * links in free objects), which the tag-based modes cannot express.  A
 * block joins a pool poisoned as a redzone but for its header; an object
 * is unpoisoned to the size asked for, its rounding tail poisoned as a
 * redzone, and poisoned as freed when it is freed, into a bin or not.
 */
#define NTA_KASAN	IS_ENABLED(CONFIG_KASAN_GENERIC)

static __always_inline void nta_hook_new_block(struct nta_block *blk,
					       gfp_t gfp)
{
	if (NTA_KASAN)
		kasan_poison_range(nta_unit_addr(blk, NTA_HDR_UNITS),
				   NTA_MAX_SIZE, false);
	/* Scanned, never reported: what NTA heads point to is not a leak. */
	kmemleak_alloc(blk, NTA_BLOCK_SIZE, 0, gfp);
}

static __always_inline void nta_hook_alloc(void *obj, unsigned int size,
					   gfp_t gfp)
{
	if (NTA_KASAN) {
		kasan_poison_range(obj, nta_object_size(size), false);
		kasan_unpoison_range(obj, size);
	}
	/* Uninitialised for KMSAN until written, as kmalloc() memory is. */
	kmsan_poison_memory(obj, size, gfp);
}

static __always_inline void nta_hook_free(void *obj, unsigned int size)
{
	if (NTA_KASAN)
		kasan_poison_range(obj, nta_object_size(size), true);
}

/*
 * Counters of the slow and remote paths, with or without the mark: one
 * this_cpu_add() on @stats.  @off is the counter's offset in struct
 * nta_stats.
 */
static __always_inline void nta_count(size_t off, u64 n)
{
	this_cpu_add(*(u64 __percpu *)((void __percpu *)&nta_cpu.stats + off), n);
}

#define NTA_CTR(field)	offsetof(struct nta_stats, field)

/* What the mainline path would hold for an object of @units units. */
s64 nta_kmalloc_of_units(unsigned int units);

/*
 * Live-object gauges.  The holder of @busy counts objects per length in
 * the bins' slots (struct nta_bin, @live) and the requested bytes in
 * @fast; readers derive the rest from the slots.  Everyone else keeps all
 * four gauges in @stats.  The inline fast paths keep theirs with per-CPU
 * operations (nta_this_account() in nta_fast.h): keep the two in step.
 */
static __always_inline void nta_account(struct nta_cpu *c, bool has_mark,
					unsigned int size, int sign)
{
	unsigned int units = nta_size_to_units(size);

	if (likely(has_mark)) {
		c->bins.slot[units].live += sign;
		if (sign > 0)
			c->fast.alloc_bytes += size;
		else
			c->fast.freed_bytes += size;
		return;
	}
	this_cpu_add(nta_cpu.stats.inuse_objects, sign);
	this_cpu_add(nta_cpu.stats.requested_bytes, sign * (s64)size);
	this_cpu_add(nta_cpu.stats.reserved_bytes,
		     sign * (s64)(units * NTA_UNIT));
	if (IS_ENABLED(CONFIG_NTA_KMALLOC_MODEL))
		this_cpu_add(nta_cpu.stats.kmalloc_bytes,
			     sign * nta_kmalloc_of_units(units));
}

/*
 * The fast path's exclusion: local_trylock() of later kernels, open coded
 * for 6.12.  With preemption off only this CPU's own interrupts can run
 * here; they nest, so an interrupt that finds the mark clear finishes
 * before the code it interrupted resumes, and one that finds it set takes
 * the slow path, which leaves the bins alone.  The mark is never held
 * across a lock, so PREEMPT_RT sees no sleeping lock inside it.  Returns
 * false, preemption enabled again, when the mark is taken.
 */
static __always_inline bool nta_fast_take_mark(void)
{
	/*
	 * The mark is tested and set through the per-CPU offset, as it is
	 * cleared (nta_fast_drop_mark()): on x86 a %gs-relative compare and
	 * store, no register and no address of the CPU's.
	 */
	preempt_disable();
	if (unlikely(__this_cpu_read(nta_cpu.busy))) {
		preempt_enable();
		return false;
	}
	__this_cpu_write(nta_cpu.busy, 1);
	barrier();
	return true;
}

/* nta_fast_take_mark(), and *@cp this CPU's state, for the remote free. */
static __always_inline bool nta_fast_enter(struct nta_cpu **cp)
{
	if (!nta_fast_take_mark())
		return false;
	*cp = this_cpu_ptr(&nta_cpu);
	return true;
}

/* Through the per-CPU offset too: one %gs-relative store on x86. */
static __always_inline void nta_fast_drop_mark(void)
{
	barrier();
	__this_cpu_write(nta_cpu.busy, 0);
	preempt_enable();
}

/*
 * The slow paths hold the local lock; they take the mark too unless the
 * code they interrupted holds it.  Returns whether they did.  On
 * PREEMPT_RT the lock is a per-CPU sleeping lock: a task that preempts a slow
 * path holding the mark sees it set, takes the slow path too and waits
 * for the lock, so the mark is free again once it gets there.
 */
static __always_inline bool nta_slow_take_mark(struct nta_cpu *c)
{
	if (READ_ONCE(c->busy))
		return false;
	WRITE_ONCE(c->busy, 1);
	barrier();
	return true;
}

static __always_inline void nta_slow_drop_mark(struct nta_cpu *c, bool has_mark)
{
	if (has_mark) {
		barrier();
		WRITE_ONCE(c->busy, 0);
	}
}

/*
 * A slow path's entry and exit: this CPU's local lock, and its mark unless
 * the code the slow path interrupted holds it (*@has_mark says which).
 */
static __always_inline struct nta_cpu *nta_slow_lock(unsigned long *flags,
						     bool *has_mark)
{
	struct nta_cpu *c;

	local_lock_irqsave(&nta_cpu.lock, *flags);
	c = this_cpu_ptr(&nta_cpu);
	*has_mark = nta_slow_take_mark(c);
	return c;
}

static __always_inline void nta_slow_unlock(struct nta_cpu *c, bool has_mark,
					    unsigned long flags)
{
	nta_slow_drop_mark(c, has_mark);
	local_unlock_irqrestore(&nta_cpu.lock, flags);
}

/*
 * A slow path found the pool quarantined: close the bins too (the caller
 * holds the lock; only with the mark, which the bins need).
 */
static __always_inline void nta_bins_on_broken(struct nta_cpu *c,
					       bool has_mark)
{
	if (has_mark)
		nta_bins_pool_broken(&c->bins, &c->pool);
}

/*
 * nta_bin_park() on a slow path, which opens shut bins and starts their
 * decay tick: the fast path parks only in bins with a grant, which only
 * open bins have, so no object sits in a bin that no tick will look at
 * (nta_decay_fn()).
 */
static __always_inline void nta_bin_push(struct nta_cpu *c, void *ptr,
					 unsigned int units)
{
	if (unlikely(!c->bins.open)) {
		if (!timer_pending(&c->decay))
			mod_timer(&c->decay, jiffies + NTA_BIN_DECAY);
		nta_bins_open(&c->bins);
	}
	nta_bin_park(&c->bins, ptr, units);
}

/* Something queued for this pool: blocks with pending bits, or batches. */
static __always_inline bool nta_has_queued(struct nta_cpu *c)
{
	return !llist_empty(&c->pool.remote) || !llist_empty(&c->batch_inbox);
}

void __nta_drain_locked(struct nta_cpu *c, bool has_mark,
			struct list_head *released);

/* Every slow path drains; when nothing is queued that is one load. */
static __always_inline void nta_drain_locked(struct nta_cpu *c, bool has_mark,
					     struct list_head *released)
{
	if (unlikely(nta_has_queued(c)))
		__nta_drain_locked(c, has_mark, released);
}

void __cold nta_print_reports(void);

/* After every slow path, with no lock held: one load when nothing waits. */
static __always_inline void nta_flush_reports(void)
{
	if (unlikely(raw_cpu_read(nta_cpu.report.nr)))
		nta_print_reports();
}

/* nta_pools.c */
struct nta_block *nta_new_block(int node, gfp_t gfp);
struct nta_block *nta_grow_block(int node, gfp_t gfp);
void nta_free_block(struct nta_block *blk);
unsigned int nta_release_blocks(struct list_head *released);
void nta_spares_on_grow(struct nta_cpu *c);
/* Drains offline CPUs' pools; nta_kick_cpu() queues it. */
extern struct work_struct nta_offline_work;

/* nta_remote.c */
enum nta_bad_free nta_queue_for_owner(struct nta_cpu *c, bool has_mark,
				      struct nta_block *blk, void *ptr,
				      unsigned int size);
unsigned int nta_batch_drain(struct nta_cpu *c, bool has_mark,
			     struct list_head *released);
void nta_batch_publish_all(struct nta_cpu *c, bool has_mark);
void __init nta_batch_init(struct nta_cpu *c, unsigned int cpu);
bool nta_kick_wanted(unsigned int cpu);
bool nta_kick_cpu(unsigned int cpu);

/* nta_report.c */
/*
 * The caller of nta_free(), for KASAN's report of a refused free, its only
 * use (nta_complain()): without generic KASAN the free paths do not carry
 * it, and need a register less.
 */
#define NTA_RET_IP	(IS_ENABLED(CONFIG_KASAN_GENERIC) ? _RET_IP_ : 0UL)
void __cold nta_complain(const void *ptr, unsigned int size,
			 enum nta_bad_free why, unsigned long ip);

/* nta_stats.c */
void __init nta_init_kmalloc_units(void);

/* nta_debug.c */
struct dentry;
/* Built only with CONFIG_NTA_DEBUG: callers test IS_ENABLED() first. */
void __init nta_debug_init(struct dentry *dir);

#endif /* _NET_CORE_ALLOC_NTA_INTERNAL_H */
