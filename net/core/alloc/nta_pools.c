// SPDX-License-Identifier: GPL-2.0
/*
 * NTA pools: where blocks come from and where they go.
 *
 * Every CPU owns a pool (nta_core.c) under a local lock; there is no
 * shared lock anywhere on the allocation or free path.  A pool starts with
 * nta_reserve= bytes of blocks (at most 1/64 of its node's memory shared
 * by the node's CPUs, and no more than nta_max=), allocated when its CPU
 * comes online, or when NTA is switched on if it booted with nta=off, and
 * never given back: that reserve is what keeps network memory apart from
 * the rest of the system.  Beyond it, pools grow with the caller's page
 * allocation flags up to nta_max= and give a block back as soon as its last
 * object is freed, keeping some wholly free spares so that a pool whose
 * load swings does not churn the page allocator: NTA_SPARE_BLOCKS, more
 * (up to NTA_SPARE_MAX) while the pool keeps growing again after giving
 * blocks back, fewer again once it stops; the shrinker takes the spares
 * back under memory pressure.  net.core.nta_max_total bounds the pages of
 * all pools together: growth that would pass it is refused as at nta_max=.
 * Every block's pages count, while NTA holds them, in the node's
 * NR_SLAB_UNRECLAIMABLE_B, as kmalloc_large()'s do.
 *
 * A global bitmap with one bit per block-sized, block-aligned range of
 * the kernel's linear map says which ranges are NTA blocks, so a foreign
 * pointer is recognised with one bounds check and one bit test, without
 * reading memory NTA does not own and without borrowing a struct page
 * field.
 */

#define pr_fmt(fmt) "nta: " fmt

#include <kunit/static_stub.h>
#include <kunit/visibility.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/err.h>
#include <linux/gfp.h>
#include <linux/hash.h>
#include <linux/init.h>
#include <linux/irq_work.h>
#include <linux/kmemleak.h>
#include <linux/memblock.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/nodemask.h>
#include <linux/nta.h>
#include <linux/numa.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/tick.h>
#include <linux/timer.h>
#include <linux/vmalloc.h>
#include <linux/vmstat.h>
#include <linux/workqueue.h>

#include "nta_core_inline.h"
#include "nta_internal.h"

/*
 * No reserve by default: a pool holds what networking on its CPU uses, as
 * slab does, and a CPU that sends nothing holds nothing.  nta_reserve= sets
 * blocks aside for a system that wants heads kept apart from the rest.
 */
#define NTA_DEFAULT_RESERVE	0
#define NTA_DEFAULT_MAX		(64 * 1024 * 1024)
/* The reserves of a node's CPUs together take at most 1/64 of its memory. */
#define NTA_RESERVE_SHARE	64

unsigned int nta_reserve_blocks __read_mostly;
unsigned int nta_max_blocks __read_mostly;

atomic_long_t nta_held_pages = ATOMIC_LONG_INIT(0);
unsigned long nta_max_total_pages __read_mostly;

static bool nta_boot_enabled __initdata = true;
static unsigned long nta_reserve_bytes __initdata = NTA_DEFAULT_RESERVE;
static unsigned long nta_max_bytes __initdata = NTA_DEFAULT_MAX;

bool nta_ready __read_mostly;

/* One bit per NTA_BLOCK_SIZE range of the linear map: is it a block? */
unsigned long nta_block_map_bits __read_mostly;
unsigned long **nta_block_map __read_mostly;

/*
 * Where initialisation failed, if it did: the KUnit case nta_init_unwind
 * checks that nothing stayed behind and how much the unwind gave back.
 */
VISIBLE_IF_KUNIT enum nta_init_step nta_init_failed_at __ro_after_init;

static const char * const nta_init_step_names[] __initconst = {
	[NTA_INIT_OK] = "start",
	[NTA_INIT_MAP] = "block map",
	[NTA_INIT_DEAD] = "CPU-dead hotplug state",
	[NTA_INIT_ONLINE] = "CPU-online callback",
};

static void nta_drain_offline(struct work_struct *work);
DECLARE_WORK(nta_offline_work, nta_drain_offline);
/* Serialises the offline work and the shrinker on offline CPUs' pools. */
static DEFINE_MUTEX(nta_offline_mutex);

static int __init nta_setup(char *str)
{
	if (kstrtobool(str, &nta_boot_enabled)) {
		pr_warn("invalid nta=%s, expected on or off; keeping on\n", str);
		nta_boot_enabled = true;
	}
	return 1;
}
__setup("nta=", nta_setup);

/*
 * A size with an optional K/M/G/T suffix, from @min to 1T, else a message
 * and @def.  Rounded down to whole blocks later, by nta_init().
 */
static int __init nta_parse_bytes(const char *name, char *str,
				  unsigned long *bytes, unsigned long min,
				  unsigned long def)
{
	unsigned long long val;
	char *end;

	val = memparse(str, &end);
	if (end == str || *end || val < min || val > (1ULL << 40)) {
		pr_warn("invalid %s=%s, expected a size from %lu to 1T; using the default %lu KiB\n",
			name, str, min, def >> 10);
		*bytes = def;
	} else {
		*bytes = val;
	}
	return 1;
}

/* nta_reserve=0: no reserve, pools only hold what they grew. */
static int __init nta_reserve_setup(char *str)
{
	return nta_parse_bytes("nta_reserve", str, &nta_reserve_bytes, 0,
			       NTA_DEFAULT_RESERVE);
}
__setup("nta_reserve=", nta_reserve_setup);

static int __init nta_max_setup(char *str)
{
	return nta_parse_bytes("nta_max", str, &nta_max_bytes, NTA_BLOCK_SIZE,
			       NTA_DEFAULT_MAX);
}
__setup("nta_max=", nta_max_setup);

/**
 * nta_owns - is @ptr inside an NTA block?
 * @ptr: any pointer
 *
 * Reads only NTA's own block map, never the memory @ptr points to.
 *
 * Return: true when @ptr lies in a block that NTA currently owns.
 */
bool nta_owns(const void *ptr)
{
	return __nta_owns(ptr);
}

/*
 * Generations start random: a batched free that outlived a block given
 * back and taken again must not match a fresh hand-out.  A stale entry has
 * to miss (1 in 128), not to resist a guess, so one random word per block
 * spread over the units does, at a fraction of the cost of random bytes
 * for all of them.  Written a word of @meta at a time, length bytes
 * included: nta_pool_add_block() clears those and keeps the generations.
 */
static void nta_seed_gens(struct nta_block *blk)
{
	u64 seed = get_random_u64(), v;
	unsigned int i;

	BUILD_BUG_ON(sizeof(blk->meta) % sizeof(v));
	for (i = 0; i < sizeof(blk->meta); i += sizeof(v)) {
		v = seed + i * GOLDEN_RATIO_64;
		memcpy((u8 *)blk->meta + i, &v, sizeof(v));
	}
}

/*
 * The page allocator's part of a new block, where a KUnit test sees the
 * flags a pool grows with and makes growth fail (a static stub).
 */
VISIBLE_IF_KUNIT struct page *nta_block_pages(int node, gfp_t gfp)
{
	KUNIT_STATIC_STUB_REDIRECT(nta_block_pages, node, gfp);
	return alloc_pages_node(node, gfp, NTA_BLOCK_ORDER);
}

#define NTA_BLOCK_PAGES		BIT(NTA_BLOCK_ORDER)

/*
 * A block's pages in the node's statistics for as long as NTA holds them,
 * from the page allocator to the page allocator, as kmalloc_large()
 * counts its pages: NR_SLAB_UNRECLAIMABLE_B, the "SUnreclaim" of
 * /proc/meminfo and nr_slab_unreclaimable of /proc/vmstat.  NTA pages are
 * never charged to a memory cgroup, so this is a node counter.  Safe in
 * any context the free paths run in (it disables interrupts itself).
 */
static void nta_account_block(struct page *page, int sign)
{
	mod_lruvec_page_state(page, NR_SLAB_UNRECLAIMABLE_B,
			      sign * (int)NTA_BLOCK_SIZE);
}

/* The footprint lost a block: its pages went back to the page allocator. */
static void nta_uncharge_block(void)
{
	atomic_long_sub(NTA_BLOCK_PAGES, &nta_held_pages);
}

/*
 * Room for one more block under net.core.nta_max_total, taken before the
 * page allocator is asked, so that CPUs growing at once cannot pass the
 * limit together.  At the limit only a read: a pool that keeps missing
 * does not bounce the counter's cache line between CPUs.
 */
static bool nta_charge_grow(void)
{
	unsigned long max = READ_ONCE(nta_max_total_pages);

	if (!max) {
		atomic_long_add(NTA_BLOCK_PAGES, &nta_held_pages);
		return true;
	}
	if (atomic_long_read(&nta_held_pages) + NTA_BLOCK_PAGES > max)
		return false;
	if (atomic_long_add_return(NTA_BLOCK_PAGES, &nta_held_pages) <= max)
		return true;
	nta_uncharge_block();
	return false;
}

/*
 * Mark @mem a block in the map, making the bitmap of its chunk if this is
 * the chunk's first block.  False, with nothing changed, if @mem lies
 * beyond the memory the machine may have or the bitmap cannot be made.
 */
VISIBLE_IF_KUNIT bool nta_map_set(const void *mem, gfp_t gfp)
{
	unsigned long idx = nta_block_index(mem), **slot, *chunk;

	if (unlikely(idx >= nta_block_map_bits))
		return false;
	slot = &nta_block_map[idx / NTA_MAP_CHUNK_BITS];
	chunk = READ_ONCE(*slot);
	if (unlikely(!chunk)) {
		chunk = bitmap_zalloc(NTA_MAP_CHUNK_BITS,
				      (gfpflags_allow_blocking(gfp) ? GFP_KERNEL :
				       GFP_NOWAIT) | __GFP_NOWARN);
		if (!chunk)
			return false;
		/* Another CPU may have made it first; its bitmap stays. */
		if (cmpxchg(slot, NULL, chunk)) {
			bitmap_free(chunk);
			chunk = READ_ONCE(*slot);
		}
	}
	set_bit(idx % NTA_MAP_CHUNK_BITS, chunk);
	return true;
}

/* @mem is no block any more; its chunk's bitmap stays for the next one. */
VISIBLE_IF_KUNIT void nta_map_clear(const void *mem)
{
	unsigned long idx = nta_block_index(mem);

	clear_bit(idx % NTA_MAP_CHUNK_BITS,
		  nta_block_map[idx / NTA_MAP_CHUNK_BITS]);
}

/* A new block, already charged to nta_held_pages by the caller. */
static struct nta_block *__nta_new_block(int node, gfp_t gfp)
{
	struct page *page;
	void *mem;

	/*
	 * Compound, so that nothing but NTA frees part of it; hardened
	 * usercopy asks NTA for the object (nta_check_heap_object()).
	 * Never from the emergency reserves:
	 * those stay with the page allocator's own pfmemalloc logic.
	 */
	page = nta_block_pages(node, gfp | __GFP_COMP | __GFP_NOWARN |
				     __GFP_NOMEMALLOC);
	if (!page)
		return NULL;
	mem = page_address(page);
	/*
	 * Marked before anything else, so that undoing it is a page free:
	 * the bit is of no use before the block reaches a pool.
	 */
	if (unlikely(!nta_map_set(mem, gfp))) {
		__free_pages(page, NTA_BLOCK_ORDER);
		return NULL;
	}
	nta_account_block(page, 1);
	nta_hook_new_block(mem, gfp);
	nta_seed_gens(mem);
	return mem;
}

/*
 * A reserve block: counted in the footprint, but never refused for
 * net.core.nta_max_total, which cannot be set below the reserves.
 */
struct nta_block *nta_new_block(int node, gfp_t gfp)
{
	struct nta_block *blk;

	atomic_long_add(NTA_BLOCK_PAGES, &nta_held_pages);
	blk = __nta_new_block(node, gfp);
	if (!blk)
		nta_uncharge_block();
	return blk;
}

/*
 * A block for a pool that grows: NULL when the page allocator has none,
 * ERR_PTR(-ENOSPC) when NTA's pages over all CPUs would pass
 * net.core.nta_max_total (the caller falls back to kmalloc then, as at
 * nta_max=, without the rest a failure of the page allocator earns).
 */
struct nta_block *nta_grow_block(int node, gfp_t gfp)
{
	struct nta_block *blk;

	if (!nta_charge_grow())
		return ERR_PTR(-ENOSPC);
	blk = __nta_new_block(node, gfp);
	if (!blk)
		nta_uncharge_block();
	return blk;
}

/* The last of a block: its pages leave the statistics and go back. */
static void nta_free_block_pages(struct nta_block *blk)
{
	struct page *page = virt_to_page(blk);

	nta_block_clear_owner(blk);
	kmemleak_free(blk);
	nta_account_block(page, -1);
	__free_pages(page, NTA_BLOCK_ORDER);
	nta_uncharge_block();
}

void nta_free_block(struct nta_block *blk)
{
	nta_map_clear(blk);
	nta_free_block_pages(blk);
}

static void nta_free_block_rcu(struct rcu_head *rcu)
{
	nta_free_block_pages(container_of(rcu, struct nta_block, rcu));
}

/*
 * Give a block that was in a pool back to the page allocator.  No longer
 * NTA's for nta_owns() at once; the memory goes after a grace period, as
 * a remote freer may still read the header (nta_remote_free()), and is
 * counted as NTA's until then.
 */
static void nta_release_block(struct nta_block *blk)
{
	nta_map_clear(blk);
	call_rcu(&blk->rcu, nta_free_block_rcu);
}

/* Give back the blocks on @released; returns how many there were. */
unsigned int nta_release_blocks(struct list_head *released)
{
	struct nta_block *blk, *tmp;
	unsigned int n = 0;

	list_for_each_entry_safe(blk, tmp, released, link) {
		nta_release_block(blk);
		n++;
	}
	if (n)
		this_cpu_add(nta_cpu.stats.returns, n);
	return n;
}

/* Objects a bin holds at most at the base caps, by length in units. */
u8 nta_bin_base_cap[NTA_NR_LISTS] __ro_after_init;
static_assert(NTA_BIN_MAX <= U8_MAX);
static_assert((NTA_BIN_MAX << NTA_BIN_SHIFT_MAX) <= S16_MAX);	/* nta_bin.room, .cap */
unsigned long nta_link_secret __ro_after_init;

static void __init nta_init_bin_caps(void)
{
	unsigned int u;

	for (u = 1; u < NTA_NR_LISTS; u++)
		nta_bin_base_cap[u] = nta_bin_base_cap_of(u);
}

/* Bins to merge or extra spares to give back: the decay tick has work. */
static bool nta_decay_wanted(const struct nta_cpu *c)
{
	return READ_ONCE(c->bins.granted) || READ_ONCE(c->bins.shift) ||
	       READ_ONCE(c->pool.spares) > NTA_SPARE_BLOCKS;
}

/*
 * The pool grows: if it gave a block back since it last grew, its load
 * swings by more than its spares, and it keeps more (see NTA_SPARE_MAX).
 * Only automatic returns count (pool->released), not the shrinker's: a
 * pool trimmed under memory pressure does not raise its spares when it
 * grows again.  Caller holds the lock.
 */
void nta_spares_on_grow(struct nta_cpu *c)
{
	struct nta_pool *pool = &c->pool;
	unsigned int gave = pool->released - c->released_seen;

	c->spare_grows++;
	if (gave && pool->spares < NTA_SPARE_MAX) {
		pool->spares = min(pool->spares + max(pool->spares, gave),
				   NTA_SPARE_MAX);
		if (!timer_pending(&c->decay))
			mod_timer(&c->decay, jiffies + NTA_BIN_DECAY);
	}
	c->released_seen = pool->released;
}

/*
 * A decay tick: a pool that did not grow since the last one halves its
 * extra spares and gives back the wholly free blocks above them.  Caller
 * holds the lock and the mark.
 */
static void nta_spares_decay(struct nta_cpu *c, struct list_head *released)
{
	struct nta_pool *pool = &c->pool;

	if (!c->spare_grows && pool->spares > NTA_SPARE_BLOCKS) {
		pool->spares = max(pool->spares / 2, NTA_SPARE_BLOCKS);
		if (pool->whole > pool->spares)
			nta_pool_trim(pool, released,
				      pool->whole - pool->spares);
	}
	c->spare_grows = 0;
}

/*
 * Spares back to NTA_SPARE_BLOCKS and the bins' caps to theirs: on trim,
 * shrinker, switch-off and hotplug, after the bins were emptied.
 */
static void nta_spares_reset(struct nta_cpu *c)
{
	c->pool.spares = NTA_SPARE_BLOCKS;
	c->released_seen = c->pool.released;
	c->spare_grows = 0;
	if (c->bins.shift)
		nta_bins_set_shift(&c->bins, 0);
	c->bins.overflows = 0;
}

/*
 * Merge this CPU's bins a batch at a time, with interrupts on between
 * batches: all of them, or with @above_caps what they hold above caps a
 * decay tick has just lowered.  Bins that drains raised hold up to
 * 2^NTA_BIN_SHIFT_MAX times their base, thousands of objects, and merging
 * all of them under one hold of the lock keeps interrupts off for all of
 * it (nta_irqsoff.sh once found the decay tick's section the longest of
 * a round, under TCG).  At most as many batches as the bins held objects
 * at the start, should interrupts free into them meanwhile.  Not for
 * hardirq context, where interrupts stay off between batches.  Returns
 * the blocks that went back (merged objects may make blocks whole).
 */
static unsigned int nta_bins_merge_batched(bool above_caps)
{
	/* A bound, not the bins' count: read outside the lock. */
	struct nta_cpu *c = raw_cpu_ptr(&nta_cpu);
	unsigned int batches = nta_bins_units_seen(&c->bins) / NTA_FLUSH_BATCH + 1;
	unsigned int blocks = 0;
	unsigned long flags;
	bool has_mark, more;
	LIST_HEAD(released);

	do {
		c = nta_slow_lock(&flags, &has_mark);
		if (!has_mark)
			more = false;
		else if (above_caps)
			more = nta_bins_trim_some(&c->bins, &c->pool,
						  NTA_FLUSH_BATCH, &released);
		else
			more = nta_bins_flush_some(&c->bins, &c->pool,
						   NTA_FLUSH_BATCH, &released);
		nta_slow_unlock(c, has_mark, flags);
		nta_flush_reports();
		blocks += nta_release_blocks(&released);
		INIT_LIST_HEAD(&released);
	} while (more && --batches);
	return blocks;
}

/*
 * Bins that sit idle decay: a deferrable timer pinned to each CPU merges
 * them into the pool once a tick has passed without a fast-path allocation,
 * a batch at a time (nta_bins_merge_batched()), so that memory parked for a
 * length that went out of use is not held for ever (up to the bins' limit
 * per CPU); a busy CPU's bins are left alone, but for the grants they do
 * not use, which go back (nta_bins_reclaim()).  The same tick halves
 * spares raised by nta_spares_on_grow() and bin caps raised by
 * nta_bins_on_overflow().  The timer runs only while the bins are open or
 * caps or spares are raised: the first object a slow path parks in shut
 * bins opens them and starts it (nta_bin_push()), as does a raise; a tick
 * that finds them empty shuts them, and it stops once nothing is left, so a
 * CPU without NTA work takes no tick for it.  A CPU that sleeps keeps its
 * bins and spares until it wakes, as the timer is deferrable (the shrinker
 * takes the spares if memory is short first).  After its CPU went offline
 * the timer runs elsewhere and stops.
 */
static void nta_decay_fn(struct timer_list *t)
{
	struct nta_cpu *c = from_timer(c, t, decay);
	bool has_mark, idle, empty;
	LIST_HEAD(released);
	unsigned long flags;
	u64 seen;

	if (c != this_cpu_ptr(&nta_cpu))
		return;
	seen = READ_ONCE(c->fast.allocs);
	empty = !nta_bins_units_seen(&c->bins);
	idle = seen == c->decay_seen && !empty;
	c->decay_seen = seen;
	if (idle)
		nta_bins_merge_batched(false);
	/*
	 * Idle bins were merged above; what interrupts parked since waits
	 * for the next tick, rather than an unbounded flush here.  Every
	 * tick takes the lock: bins that hold objects have grants, and
	 * those they do not use go back, so that a busy CPU's budget
	 * follows the lengths it frees now.
	 */
	c = nta_slow_lock(&flags, &has_mark);
	if (has_mark) {
		nta_bins_lower(&c->bins);
		nta_bins_reclaim(&c->bins);
		nta_spares_decay(c, &released);
	}
	/* Empty: shut, so that the next free into them starts a tick. */
	if (has_mark && !nta_bins_units(&c->bins))
		nta_bins_shut(&c->bins);
	nta_slow_unlock(c, has_mark, flags);
	nta_flush_reports();
	nta_release_blocks(&released);
	/* Caps lowered, here or by a trim: what is above them goes. */
	if (READ_ONCE(c->bins.over_caps))
		nta_bins_merge_batched(true);
	/*
	 * Open bins need the tick, even empty: the fast path parks in them
	 * without starting it.  Only this tick shuts them, with the mark: if
	 * it interrupted a mark holder, it comes back.
	 */
	if (READ_ONCE(c->bins.open) || nta_decay_wanted(c))
		mod_timer(&c->decay, jiffies + NTA_BIN_DECAY);
}

/*
 * Drain this CPU's remote list and, with @trim, merge a batch of its bins
 * and, once they are empty or with @last, give back its spare blocks;
 * *@more says that bins are left, for another call (a batch per hold of
 * the lock: the kick runs in hardirq context).  Returns false when it ran
 * nested in a fast path (an irq_work kick can), which holds the bins: no
 * trim then.
 */
static bool nta_drain_this_cpu(bool trim, bool last, bool *more)
{
	LIST_HEAD(released);
	struct nta_cpu *c;
	unsigned long flags;
	bool has_mark;

	*more = false;
	c = nta_slow_lock(&flags, &has_mark);
	nta_drain_locked(c, has_mark, &released);
	if (trim && has_mark)
		*more = nta_bins_flush_some(&c->bins, &c->pool,
					    NTA_FLUSH_BATCH, &released);
	/* The caps go back to their base only once the bins are in them. */
	if (trim && has_mark && !*more)
		nta_spares_reset(c);
	if (trim && has_mark && (!*more || last))
		nta_pool_trim(&c->pool, &released, UINT_MAX);
	nta_slow_unlock(c, has_mark, flags);
	nta_flush_reports();
	nta_release_blocks(&released);
	return has_mark;
}

static void nta_kick_fn(struct irq_work *work)
{
	struct nta_cpu *c = this_cpu_ptr(&nta_cpu);
	bool online = cpu_online(smp_processor_id());
	bool trim = READ_ONCE(c->trim), last, more;

	/*
	 * A trim merges the bins a batch per run, as many runs as they held
	 * batches when it began (interrupts may park more meanwhile), and
	 * gives back the spares in its last.
	 */
	if (trim && !c->trim_runs)
		c->trim_runs = nta_bins_units_seen(&c->bins) /
			       NTA_FLUSH_BATCH + 1;
	last = !online || c->trim_runs <= 1;
	nta_drain_this_cpu(trim, last, &more);
	/* Cleared even when nested in a fast path: the next scan asks again. */
	if (trim && (!more || last)) {
		c->trim_runs = 0;
		WRITE_ONCE(c->trim, 0);
	} else if (trim) {
		c->trim_runs--;
	}
	/*
	 * A kick drains all: one drain's worth per run, interrupts on
	 * between.  Not on a CPU going down, whose self-IPI would be lost:
	 * the dead pool's work item drains the rest.
	 */
	if (online && (READ_ONCE(c->trim) || nta_has_queued(c)))
		irq_work_queue(work);
}

/*
 * nta_drain_all()'s work, on each CPU in process context, bound to it:
 * drain all that is queued, a bounded drain at a time with interrupts on
 * in between, then trim.  A fast path cannot be preempted, so the mark is
 * free (on PREEMPT_RT a preempted slow path holding it releases it before
 * the lock is ours).
 */
static long nta_trim_this_cpu(void *unused)
{
	struct nta_cpu *c = raw_cpu_ptr(&nta_cpu);
	unsigned int batches = 0, queue;
	bool more;

	/*
	 * A bounded drain takes up to NTA_DRAIN_BLOCKS blocks of the remote
	 * list and as many batches: enough drains for every block of the
	 * pool and every batch there is, so that what was queued is freed,
	 * and a bound, so that a CPU others keep freeing to does not keep
	 * its work item running.
	 */
	queue = READ_ONCE(c->pool.nr_blocks) +
		NTA_BATCHES_PER_CPU * num_possible_cpus();
	while (nta_has_queued(c) &&
	       batches++ < NTA_TRIM_BATCHES + queue / NTA_DRAIN_BLOCKS) {
		if (!nta_drain_this_cpu(false, false, &more))
			return -EBUSY;
		cond_resched();
	}
	/*
	 * The bins a batch at a time, as many as they held; the last gives
	 * back the spares even if interrupts parked more meanwhile.
	 */
	batches = nta_bins_units_seen(&c->bins) / NTA_FLUSH_BATCH + 1;
	do {
		if (!nta_drain_this_cpu(true, batches == 1, &more))
			return -EBUSY;
		cond_resched();
	} while (more && --batches);
	return 0;
}

/*
 * Drain a pool whose CPU is not running and give back every wholly free
 * block, its reserve included: the CPU takes a reserve again when it
 * comes back.  The caller excludes hotplug.
 */
static unsigned int nta_drain_dead_pool(unsigned int cpu)
{
	struct nta_cpu *c = per_cpu_ptr(&nta_cpu, cpu);
	LIST_HEAD(released);
	unsigned int n, blocks;

	/* What it had collected for other owners goes to them now. */
	nta_batch_publish_all(c, false);
	nta_bins_flush(&c->bins, &c->pool, &released);
	/* Its decay tick was deleted (nta_cpu_dead()). */
	nta_bins_shut(&c->bins);
	n = 0;
	do {
		n += nta_pool_drain(&c->pool, &released);
		n += nta_batch_drain(c, false, &released);
	} while (nta_has_queued(c));
	c->pool.reserve = 0;
	nta_pool_trim(&c->pool, &released, UINT_MAX);
	c->pool.reserve = nta_reserve_blocks;
	nta_spares_reset(c);
	nta_flush_reports();
	blocks = nta_release_blocks(&released);
	if (n) {
		this_cpu_inc(nta_cpu.stats.drains);
		this_cpu_add(nta_cpu.stats.frees, n);
	}
	return blocks;
}

static void nta_drain_offline(struct work_struct *work)
{
	unsigned int cpu;

	cpus_read_lock();
	mutex_lock(&nta_offline_mutex);
	for_each_possible_cpu(cpu)
		if (!cpu_online(cpu))
			nta_drain_dead_pool(cpu);
	mutex_unlock(&nta_offline_mutex);
	cpus_read_unlock();
}

/* nta_drain_all()'s first pass: publish what this CPU collected. */
static long nta_batch_publish_this_cpu(void *unused)
{
	unsigned long flags;
	struct nta_cpu *c;
	bool has_mark;

	c = nta_slow_lock(&flags, &has_mark);
	if (has_mark)
		nta_batch_publish_all(c, true);
	nta_slow_unlock(c, has_mark, flags);
	return has_mark ? 0 : -EBUSY;
}

/**
 * nta_drain_all - make every CPU free what others queued for it, and wait
 *
 * Every CPU first publishes the batches of remote frees it is filling.
 * Every online CPU also merges the objects parked in its bins and gives
 * back its spare blocks above the reserve, so that afterwards each pool
 * holds its reserve plus the blocks that still have live objects.  Used
 * by tests and by statistics readers that want exact block counts.
 *
 * Context: process context; may sleep.
 */
void nta_drain_all(void)
{
	unsigned int cpu;

	if (!nta_is_ready())
		return;
	cpus_read_lock();
	/* Every batch on its owner's list before any owner drains. */
	for_each_online_cpu(cpu)
		WARN_ON_ONCE(work_on_cpu(cpu, nta_batch_publish_this_cpu, NULL));
	for_each_online_cpu(cpu)
		WARN_ON_ONCE(work_on_cpu(cpu, nta_trim_this_cpu, NULL));
	cpus_read_unlock();
	schedule_work(&nta_offline_work);
	flush_work(&nta_offline_work);
}

/*
 * Give @cpu's pool its reserve blocks.  Runs on @cpu, in process context
 * (the hotplug callback or a work item of nta_fill_reserves()).
 */
static void nta_fill_reserve(unsigned int cpu)
{
	struct nta_cpu *c = per_cpu_ptr(&nta_cpu, cpu);
	struct nta_block *blk;
	unsigned long flags;

	while (READ_ONCE(c->pool.nr_blocks) < nta_reserve_blocks) {
		blk = nta_new_block(nta_block_node(cpu), GFP_KERNEL);
		if (!blk) {
			pr_warn("CPU %u: only %u of %u reserve blocks\n", cpu,
				c->pool.nr_blocks, nta_reserve_blocks);
			break;
		}
		local_lock_irqsave(&nta_cpu.lock, flags);
		nta_take_block(c, blk);
		local_unlock_irqrestore(&nta_cpu.lock, flags);
	}
}

static long nta_fill_reserve_fn(void *cpu)
{
	nta_fill_reserve((unsigned long)cpu);
	return 0;
}

/**
 * nta_fill_reserves - give every online CPU its reserve blocks
 *
 * A CPU that comes online while NTA is switched off takes no reserve
 * (so that nta=off costs no memory); the switch calls this after turning
 * NTA on.  Pools already at their reserve are left alone.
 *
 * Context: process context; may sleep.
 */
void nta_fill_reserves(void)
{
	unsigned int cpu;

	if (!nta_is_ready() || !nta_reserve_blocks)
		return;
	cpus_read_lock();
	for_each_online_cpu(cpu)
		work_on_cpu(cpu, nta_fill_reserve_fn, (void *)(unsigned long)cpu);
	cpus_read_unlock();
}

/*
 * Runs on @cpu itself as it comes online (CPUHP_AP_ONLINE_DYN), so the
 * local lock is the right one to take.
 */
static int nta_cpu_online(unsigned int cpu)
{
	struct nta_cpu *c = per_cpu_ptr(&nta_cpu, cpu);
	LIST_HEAD(released);
	unsigned long flags;

	/* Free what was queued while the CPU was away. */
	local_lock_irqsave(&nta_cpu.lock, flags);
	nta_drain_locked(c, false, &released);
	local_unlock_irqrestore(&nta_cpu.lock, flags);
	nta_flush_reports();
	nta_release_blocks(&released);

	/* Switched off: no reserve until nta_fill_reserves() (sysctl on). */
	if (static_key_enabled(&nta_enabled_key))
		nta_fill_reserve(cpu);
	return 0;
}

/*
 * A CPU is gone: free what others queued for it and give back its free
 * blocks; only blocks with live objects stay, until those are freed.
 */
static int nta_cpu_dead(unsigned int cpu)
{
	/*
	 * Still on the dead CPU's timer base (timers move later in the
	 * teardown): gone before they can move, so that a batch opened or
	 * a bin parked when the CPU is back arms them afresh, which may be
	 * before its online callback (interrupts run from
	 * CPUHP_AP_IRQ_AFFINITY_ONLINE on).  Its batches are published and
	 * its bins emptied here.
	 */
	timer_delete_sync(&per_cpu(nta_cpu, cpu).batch_timer);
	timer_delete_sync(&per_cpu(nta_cpu, cpu).decay);
	nta_drain_dead_pool(cpu);
	/* Trimmed: a kick that did not finish asks no more of it. */
	per_cpu(nta_cpu, cpu).trim_runs = 0;
	WRITE_ONCE(per_cpu(nta_cpu, cpu).trim, 0);
	return 0;
}

/*
 * Blocks a CPU's pool could give back now, read from anywhere: its wholly
 * free blocks above the reserve, all of them when the CPU is offline.
 */
static unsigned int nta_cpu_spare_blocks(unsigned int cpu)
{
	const struct nta_pool *pool = &per_cpu(nta_cpu, cpu).pool;
	unsigned int blocks = READ_ONCE(pool->nr_blocks);
	unsigned int whole = READ_ONCE(pool->whole);

	if (!cpu_online(cpu))
		return whole;
	return blocks > pool->reserve ? min(whole, blocks - pool->reserve) : 0;
}

/*
 * Pages a CPU holds in its bins above the base caps, read from anywhere:
 * a trim merges them, and the blocks they keep may go back with them.
 */
static unsigned int nta_cpu_raised_bin_pages(unsigned int cpu)
{
	const struct nta_cpu *c = per_cpu_ptr(&nta_cpu, cpu);
	unsigned long units = nta_bins_units_seen(&c->bins);

	/* Above the base caps: raised, or lowered and not trimmed yet. */
	if (units <= NTA_BINS_UNITS)
		return 0;
	return ((units - NTA_BINS_UNITS) * NTA_UNIT) >> PAGE_SHIFT;
}

/*
 * Frees queued for @cpu's objects that the shrinker's scan has drained:
 * an offline CPU's by nta_trim_offline(), an online CPU's by a kick, idle or
 * not (an idle owner is not kicked for them otherwise: nta_kick_wanted()),
 * but for a nohz_full CPU, whose isolation an IPI would break.
 */
static bool nta_shrink_drains(unsigned int cpu)
{
	return nta_has_queued(per_cpu_ptr(&nta_cpu, cpu)) &&
	       (!cpu_online(cpu) || !tick_nohz_full_cpu(cpu));
}

/*
 * A block's pages for such a CPU, read from anywhere: how many blocks the
 * frees would make whole is not known until they are freed, so the
 * shrinker counts one, that its scan has them drained.
 */
static unsigned int nta_cpu_queued_pages(unsigned int cpu)
{
	return nta_shrink_drains(cpu) ? NTA_BLOCK_PAGES : 0;
}

/**
 * nta_shrink_count - pages NTA could give back under memory pressure
 * @shrink: the shrinker
 * @sc: the request
 *
 * Return: pages in wholly free blocks above the reserves, in every wholly
 * free block of an offline CPU and in bins above their base caps, a block
 * for each CPU with frees queued, or SHRINK_EMPTY.
 */
VISIBLE_IF_KUNIT unsigned long nta_shrink_count(struct shrinker *shrink,
						struct shrink_control *sc)
{
	unsigned long n = 0;
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		n += nta_cpu_spare_blocks(cpu) * NTA_BLOCK_PAGES +
		     nta_cpu_raised_bin_pages(cpu) + nta_cpu_queued_pages(cpu);
	return n ?: SHRINK_EMPTY;
}

/* Give back up to @max spare blocks of this CPU's pool, bins merged first. */
static unsigned int nta_trim_local(unsigned int max)
{
	LIST_HEAD(released);
	struct nta_cpu *c;
	unsigned long flags;
	unsigned int n;
	bool has_mark;

	/* One CPU's bins and pool, though reclaim may sleep and move. */
	migrate_disable();
	/* Most of the bins with interrupts on between batches... */
	n = nta_bins_merge_batched(false);
	c = nta_slow_lock(&flags, &has_mark);
	nta_drain_locked(c, has_mark, &released);
	/* ...and what interrupts parked since, a batch at most. */
	if (has_mark && !nta_bins_flush_some(&c->bins, &c->pool,
					     NTA_FLUSH_BATCH, &released))
		nta_spares_reset(c);
	nta_pool_trim(&c->pool, &released, max);
	nta_slow_unlock(c, has_mark, flags);
	migrate_enable();
	nta_flush_reports();
	/*
	 * Count what the drain and the merges gave back too: objects they
	 * merge may make blocks above the spares whole, which go back at once.
	 */
	return n + nta_release_blocks(&released);
}

/*
 * Drain offline CPUs' pools, as their work item does (frees queued for
 * them freed, every wholly free block given back), until @max blocks went.
 */
static unsigned int nta_trim_offline(unsigned int max)
{
	unsigned int cpu, n = 0;

	/* Reclaim must not wait for hotplug or for the offline work. */
	if (!cpus_read_trylock())
		return 0;
	if (mutex_trylock(&nta_offline_mutex)) {
		for_each_possible_cpu(cpu)
			if (!cpu_online(cpu) && n < max)
				n += nta_drain_dead_pool(cpu);
		mutex_unlock(&nta_offline_mutex);
	}
	cpus_read_unlock();
	return n;
}

/**
 * nta_shrink_scan - give back pages under memory pressure
 * @shrink: the shrinker
 * @sc: the request; up to @sc->nr_to_scan pages are given back
 *
 * Only a pool's owner may touch it, so this frees synchronously what the
 * calling CPU's pool and the offline CPUs' pools can give, and asks the
 * other CPUs that hold spares or raised bins or have frees queued, once
 * each until they have trimmed, to drain and give back on their own (an
 * irq_work, idle CPUs included, nohz_full ones only for spares or bins):
 * no IPI to every CPU per scan.
 *
 * Return: the pages freed, or SHRINK_STOP when there were none.
 */
VISIBLE_IF_KUNIT unsigned long nta_shrink_scan(struct shrinker *shrink,
					       struct shrink_control *sc)
{
	unsigned int want = DIV_ROUND_UP(sc->nr_to_scan, NTA_BLOCK_PAGES);
	unsigned int n, cpu, me;

	n = nta_trim_local(want);
	if (n < want)
		n += nta_trim_offline(want - n);

	me = get_cpu();
	for_each_online_cpu(cpu) {
		struct nta_cpu *c = per_cpu_ptr(&nta_cpu, cpu);

		if (cpu != me && (nta_cpu_spare_blocks(cpu) ||
				  READ_ONCE(c->bins.shift) ||
				  nta_shrink_drains(cpu)) &&
		    !xchg(&c->trim, true))
			nta_kick_cpu(cpu);
	}
	put_cpu();
	return n ? (unsigned long)n * NTA_BLOCK_PAGES : SHRINK_STOP;
}

/*
 * The table of chunks, for all the memory the machine may have: what it
 * has now (high_memory) or, if more, what the firmware says may be
 * hot-added (max_possible_pfn).  A pointer per 128 MiB: 64 KiB for 1 TiB.
 */
static int __init nta_init_block_map(void)
{
	u64 end = max_t(u64, PFN_PHYS(max_possible_pfn),
			(unsigned long)high_memory - PAGE_OFFSET);
	unsigned long chunks = DIV_ROUND_UP_ULL(end, 1UL << NTA_MAP_CHUNK_SHIFT);

	nta_block_map = vcalloc(chunks, sizeof(*nta_block_map));
	if (!nta_block_map)
		return -ENOMEM;
	nta_block_map_bits = chunks * NTA_MAP_CHUNK_BITS;
	return 0;
}

/*
 * The node whose memory @cpu's blocks come from: its own, or for a CPU of
 * a memoryless node the nearest node with memory, where the page
 * allocator's zonelist falls back to.
 */
static int __init nta_cpu_memory_node(unsigned int cpu)
{
	int nid = cpu_to_node(cpu);

	return node_state(nid, N_MEMORY) ? nid : numa_nearest_node(nid, N_MEMORY);
}

/*
 * The reserves of the CPUs whose blocks come from a node take at most
 * 1/NTA_RESERVE_SHARE of that node's memory, so that no value of
 * nta_reserve= can eat a machine; every pool gets the smallest such share
 * over the nodes with memory.  A memoryless node's CPUs count against the
 * node they take memory from, not against their own empty one.
 */
static void __init nta_clamp_reserve(void)
{
	unsigned int cpu, ncpus, cap, want = nta_reserve_blocks;
	unsigned long pages;
	int nid;

	for_each_node_state(nid, N_MEMORY) {
		ncpus = 0;
		for_each_possible_cpu(cpu)
			if (nta_cpu_memory_node(cpu) == nid)
				ncpus++;
		if (!ncpus)
			continue;
		/* What the page allocator has, not holes or the kernel image. */
		pages = min(node_present_pages(nid), totalram_pages());
		cap = pages / NTA_RESERVE_SHARE / max(ncpus, 1U) /
		      (NTA_BLOCK_SIZE >> PAGE_SHIFT);
		if (nta_reserve_blocks <= cap)
			continue;
		nta_reserve_blocks = cap;
		pr_info("nta_reserve=%u KiB per CPU is more than 1/%u of node %d's %lu MiB shared by its %u CPUs; using %u KiB per CPU\n",
			want * (unsigned int)(NTA_BLOCK_SIZE >> 10),
			NTA_RESERVE_SHARE, nid, pages >> (20 - PAGE_SHIFT),
			ncpus, cap * (unsigned int)(NTA_BLOCK_SIZE >> 10));
	}
}

/*
 * Initialisation failed: undo all of it, so that no hotplug state stays
 * registered and no memory stays held.  No head was handed out, since
 * nta_ready was never set; a failed online callback has already been
 * unregistered by the hotplug core.
 */
static void __init nta_init_undo(int dead_state)
{
	unsigned long **map = nta_block_map, i;
	unsigned int cpu;

	nta_set_enabled(false);
	if (dead_state > 0)
		cpuhp_remove_state_nocalls(dead_state);
	for_each_possible_cpu(cpu)
		nta_drain_dead_pool(cpu);
	/* nta_owns() reads the size first: no index is in range any more. */
	i = nta_block_map_bits / NTA_MAP_CHUNK_BITS;
	WRITE_ONCE(nta_block_map_bits, 0);
	synchronize_rcu();
	nta_block_map = NULL;
	while (map && i--)
		bitmap_free(map[i]);
	vfree(map);
}

static int __init nta_init(void)
{
	struct shrinker *shrinker;
	int ret, dead = 0;
	unsigned int cpu;

	nta_max_blocks = nta_max_bytes / NTA_BLOCK_SIZE;
	nta_reserve_blocks = nta_reserve_bytes / NTA_BLOCK_SIZE;
	if (nta_reserve_blocks > nta_max_blocks) {
		pr_warn("nta_reserve=%lu KiB is above nta_max=%lu KiB; using a reserve of %u KiB\n",
			nta_reserve_bytes >> 10, nta_max_bytes >> 10,
			nta_max_blocks * (unsigned int)(NTA_BLOCK_SIZE >> 10));
		nta_reserve_blocks = nta_max_blocks;
	}
	nta_clamp_reserve();

	nta_init_kmalloc_units();
	nta_init_bin_caps();
	if (want_init_on_alloc(0) || want_init_on_free())
		static_branch_enable(&nta_wipes_key);
	if (IS_ENABLED(CONFIG_SLAB_FREELIST_HARDENED))
		nta_link_secret = get_random_long();
	for_each_possible_cpu(cpu) {
		struct nta_cpu *c = per_cpu_ptr(&nta_cpu, cpu);

		nta_pool_init(&c->pool, cpu, nta_reserve_blocks);
		c->home = &c->pool;
		c->pool.spares = NTA_SPARE_BLOCKS;
		c->pool.init_on_free = want_init_on_free();
		nta_bins_set_shift(&c->bins, 0);
		init_irq_work(&c->kick, nta_kick_fn);
		timer_setup(&c->decay, nta_decay_fn,
			    TIMER_DEFERRABLE | TIMER_PINNED);
		nta_batch_init(c, cpu);
	}
	/* After the per-CPU state, which the unwind goes through. */
	nta_init_failed_at = NTA_INIT_MAP;
	ret = nta_init_block_map();
	if (ret)
		goto fail;

	/* Before the online callback runs: nta=off takes no reserve. */
	nta_set_enabled(nta_boot_enabled);
	nta_init_failed_at = NTA_INIT_DEAD;
	dead = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "net/nta:dead",
					 NULL, nta_cpu_dead);
	ret = dead;
	if (ret < 0)
		goto fail;
	nta_init_failed_at = NTA_INIT_ONLINE;
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "net/nta:online",
				nta_cpu_online, NULL);
	if (ret < 0)
		goto fail;
	nta_init_failed_at = NTA_INIT_OK;

	/* Counts and frees in pages. */
	shrinker = shrinker_alloc(0, "nta");
	if (shrinker) {
		shrinker->count_objects = nta_shrink_count;
		shrinker->scan_objects = nta_shrink_scan;
		shrinker_register(shrinker);
	}

	/* Pairs with the acquire of every reader: pools, map and caps first. */
	smp_store_release(&nta_ready, true);
	pr_info("unit %u B, block %lu KiB, reserve %u and limit %u blocks per CPU, %s%s\n",
		NTA_UNIT, NTA_BLOCK_SIZE >> 10, nta_reserve_blocks,
		nta_max_blocks, nta_boot_enabled ? "on" : "off",
		nta_boot_enabled || !nta_reserve_blocks ? "" :
		" (reserve taken when switched on)");
	return 0;

fail:
	nta_init_undo(dead);
	pr_err("initialisation failed at the %s (%d), undone; skb heads use kmalloc\n",
	       nta_init_step_names[nta_init_failed_at], ret);
	return 0;
}
core_initcall(nta_init);
