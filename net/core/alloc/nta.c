// SPDX-License-Identifier: GPL-2.0
/*
 * NTA per-CPU glue: which CPU owns what, where blocks come from, and how
 * frees from the wrong CPU find their way home.
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
 * back under memory pressure.
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
 *
 * An object freed on a CPU that does not own it goes into that CPU's
 * batch for the owner, published whole with one llist_add() (see "Batched
 * remote frees" below).  Without a batch at hand (a context nested in the
 * fast path, all batches in flight) it is marked pending in its block, and
 * the block pushed on the owner's lock-less remote list
 * (nta_remote_free()).  Neither writes into the object; the owner frees
 * what it finds batched or pending on its next slow path.  On the
 * pending path the freer that queues the NTA_KICK_BLOCKS-th block kicks
 * the owner with an irq_work, so an idle owner does not sit on freed
 * memory; below that, and for batches, a per-CPU timer armed by the freer
 * kicks it after nta_stranded_delay.  A drain takes at most
 * NTA_DRAIN_BLOCKS blocks (and as many batches); the owner's next slow
 * path takes the rest, else its stranded-free timer, and a kick drains
 * all, a drain per irq_work.  Blocks are freed after an RCU grace period,
 * as a remote freer may still be reading the header of a block its owner
 * gives back.  Pools of offline CPUs are drained, and give back every
 * wholly free block, reserve included, in the hotplug callback and,
 * afterwards, in a work item.
 *
 * A global bitmap with one bit per block-sized, block-aligned range of
 * the kernel's linear map says which ranges are NTA blocks, so a foreign
 * pointer is recognised with one bounds check and one bit test, without
 * reading memory NTA does not own and without borrowing a struct page
 * field.
 */

#define pr_fmt(fmt) "nta: " fmt

#include <kunit/visibility.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/gfp.h>
#include <linux/hash.h>
#include <linux/init.h>
#include <linux/irq_work.h>
#include <linux/kasan.h>
#include <linux/kmemleak.h>
#include <linux/kmsan-checks.h>
#include <linux/memblock.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/nta.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/rcupdate.h>
#include <linux/ratelimit.h>
#include <linux/sched.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timer.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "nta_core_inline.h"
#include "nta_internal.h"

#define NTA_DEFAULT_RESERVE	(256 * 1024)
#define NTA_DEFAULT_MAX		(64 * 1024 * 1024)
/* The reserves of a node's CPUs together take at most 1/64 of its memory. */
#define NTA_RESERVE_SHARE	64

DEFINE_PER_CPU(struct nta_cpu, nta_cpu) = {
	.lock = INIT_LOCAL_LOCK(lock),
};

DEFINE_STATIC_KEY_TRUE(nta_enabled_key);
/* No exports: every user (skbuff.c, the tests, the bench) is built in. */

unsigned int nta_reserve_blocks __read_mostly;
unsigned int nta_max_blocks __read_mostly;
bool nta_warn_bad_free __read_mostly = true;
atomic_t nta_poison_reports = ATOMIC_INIT(0);

static bool nta_boot_enabled __initdata = true;
static unsigned long nta_reserve_bytes __initdata = NTA_DEFAULT_RESERVE;
static unsigned long nta_max_bytes __initdata = NTA_DEFAULT_MAX;

bool nta_ready __read_mostly;

#if IS_ENABLED(CONFIG_NTA_KUNIT_TEST)
/* For the KUnit suite: block allocations seen, the last one's flags. */
struct nta_tgrow nta_tgrow;

/* Returns true when the test asks this allocation to fail. */
static bool nta_note_grow(gfp_t gfp)
{
	WRITE_ONCE(nta_tgrow.gfp, gfp);
	WRITE_ONCE(nta_tgrow.calls, nta_tgrow.calls + 1);
	return READ_ONCE(nta_tgrow.fail);
}
#else
static bool nta_note_grow(gfp_t gfp)
{
	return false;
}
#endif

/* One bit per NTA_BLOCK_SIZE range of the linear map: is it a block? */
VISIBLE_IF_KUNIT unsigned long nta_block_map_bits __read_mostly;
static unsigned long *nta_block_map __read_mostly;

/*
 * nta_fail_init=map|dead|online (KUnit builds) makes initialisation fail
 * at that step: the block map, the dead-CPU hotplug state, or the online
 * callback of the last CPU (after the others took their reserves).  The
 * KUnit case nta_init_unwind then checks that nothing stayed behind.
 */
VISIBLE_IF_KUNIT unsigned int nta_fail_init __ro_after_init;

static bool nta_init_fault(enum nta_init_step step)
{
	return IS_ENABLED(CONFIG_NTA_KUNIT_TEST) && nta_fail_init == step;
}

#if IS_ENABLED(CONFIG_NTA_KUNIT_TEST)
static int __init nta_fail_init_setup(char *str)
{
	static const char * const steps[] = { "map", "dead", "online" };
	int i = match_string(steps, ARRAY_SIZE(steps), str);

	if (i < 0)
		pr_warn("invalid nta_fail_init=%s, expected map, dead or online; ignored\n",
			str);
	else
		nta_fail_init = NTA_INIT_MAP + i;
	return 1;
}
__setup("nta_fail_init=", nta_fail_init_setup);
#endif

static void nta_drain_offline(struct work_struct *work);
static DECLARE_WORK(nta_offline_work, nta_drain_offline);
/* Serialises the offline work and the shrinker on offline CPUs' pools. */
static DEFINE_MUTEX(nta_offline_mutex);
static bool nta_kick_cpu(unsigned int cpu);

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

/*
 * NUMA policy, in one place: a CPU's blocks come from the memory nearest
 * to that CPU, because the owner is the only one that allocates from and
 * merges in them, and most heads are written by the CPU that receives.
 */
static int nta_block_node(unsigned int cpu)
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

	return likely(idx < nta_block_map_bits) && test_bit(idx, nta_block_map);
}

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

#if IS_ENABLED(CONFIG_HARDENED_USERCOPY) || IS_ENABLED(CONFIG_KUNIT)
/**
 * nta_usercopy_bad - is a copy to or from user space within one object?
 * @ptr: the start of the copy, in an NTA block
 * @n: its length
 * @offset: set to the offset of @ptr in its object, or in the block when
 *	it is in no live object
 *
 * The object is the nearest object start at or before @ptr in the block's
 * @start bitmap, if its length byte says it is live and long enough.  A
 * racing allocation or free on the owner changes other objects' bits and
 * bytes only, so another CPU may ask.  The copy must also end before the
 * object's last NTA_USERCOPY_TAIL bytes, its skb_shared_info.
 *
 * Return: NULL when the copy stays inside a live object's usercopy
 * region, else what it hit.
 */
VISIBLE_IF_KUNIT const char *nta_usercopy_bad(const void *ptr, unsigned long n,
					      unsigned long *offset)
{
	const struct nta_block *blk = nta_block_of(ptr);
	unsigned long off = ptr - (const void *)blk, size;
	unsigned int unit = off >> NTA_UNIT_SHIFT, u, len;

	*offset = off;
	if (unit < NTA_HDR_UNITS)
		return "block header";
	/* The owner writes other objects' bits with plain stores. */
	u = data_race(find_last_bit(blk->start, unit + 1));
	len = u <= unit ? nta_cls(blk, u) : 0;
	if (!len || u + len <= unit)
		return "free memory";
	*offset = off - ((unsigned long)u << NTA_UNIT_SHIFT);
	size = (unsigned long)len << NTA_UNIT_SHIFT;
	if (n > size - *offset)
		return "past the object";
	if (*offset + n > size - min_t(unsigned long, size, NTA_USERCOPY_TAIL))
		return "skb_shared_info";
	return NULL;
}
#endif

#ifdef CONFIG_HARDENED_USERCOPY

/**
 * nta_check_heap_object - hardened usercopy's check of a copy from NTA
 * @ptr: the start of the copy; nta_owns() is true for it
 * @n: its length
 * @to_user: the direction, for the report
 *
 * Called by check_heap_object() as it calls __check_heap_object() for a
 * slab: a copy must stay inside the live object it starts in, so that an
 * over-long copy from a head does not leak or overwrite its neighbours,
 * nor its own skb_shared_info (page pointers, destructor argument).  The
 * bound is the object NTA set aside (whole cache lines) less that tail:
 * skb_small_head_cache bounds small heads the same way, kmalloc's larger
 * heads only by their object.
 */
void nta_check_heap_object(const void *ptr, unsigned long n, bool to_user)
{
	const char *bad = NULL;
	unsigned long offset;

	/* A block given back is freed after a grace period: read it inside. */
	rcu_read_lock();
	if (__nta_owns(ptr))
		bad = nta_usercopy_bad(ptr, n, &offset);
	rcu_read_unlock();
	if (unlikely(bad))
		usercopy_abort("NTA object", bad, to_user, offset, n);
}
#endif

/*
 * Heap debugging sees NTA objects as it sees kmalloc()'s.  KASAN in its
 * generic mode only: nta.o and nta_core.o are not instrumented (as
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
 * Generations start random: a batched free that outlived a block given
 * back and taken again must not match a fresh hand-out.  A stale entry has
 * to miss (1 in 256), not to resist a guess, so one random word per block
 * spread over the units does: get_random_bytes() for all 256 bytes was a
 * third of the cost of a block's growth and return (6400 of 19600 guest
 * instructions, -icount).  Written a word of @meta at a time, length bytes
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

static struct nta_block *nta_new_block(int node, gfp_t gfp)
{
	struct page *page;
	void *mem;

	/*
	 * Compound, so that nothing but NTA frees part of it; hardened
	 * usercopy asks NTA for the object (nta_check_heap_object()).
	 * Never from the emergency reserves:
	 * those stay with the page allocator's own pfmemalloc logic.
	 */
	if (nta_note_grow(gfp))
		return NULL;
	page = alloc_pages_node(node,
				gfp | __GFP_COMP | __GFP_NOWARN | __GFP_NOMEMALLOC,
				NTA_BLOCK_ORDER);
	if (!page)
		return NULL;
	mem = page_address(page);
	if (unlikely(nta_block_index(mem) >= nta_block_map_bits)) {
		/* Memory hot-added after boot is not covered by the map. */
		__free_pages(page, NTA_BLOCK_ORDER);
		return NULL;
	}
	nta_hook_new_block(mem, gfp);
	nta_seed_gens(mem);
	set_bit(nta_block_index(mem), nta_block_map);
	return mem;
}

/*
 * Counters: the holder of the CPU's @busy mark (@mine) writes @fast with
 * plain stores; anyone else uses this_cpu_add() on @stats.  @off is the
 * counter's offset in struct nta_stats.
 */
static __always_inline void nta_count(struct nta_cpu *c, bool mine,
				      size_t off, u64 n)
{
	if (likely(mine))
		*(u64 *)((void *)&c->fast + off) += n;
	else
		this_cpu_add(*(u64 __percpu *)((void __percpu *)&nta_cpu.stats + off), n);
}

#define NTA_CTR(field)	offsetof(struct nta_stats, field)

static void nta_free_block(struct nta_block *blk)
{
	clear_bit(nta_block_index(blk), nta_block_map);
	kmemleak_free(blk);
	__free_pages(virt_to_page(blk), NTA_BLOCK_ORDER);
}

static void nta_free_block_rcu(struct rcu_head *rcu)
{
	struct nta_block *blk = container_of(rcu, struct nta_block, rcu);

	kmemleak_free(blk);
	__free_pages(virt_to_page(blk), NTA_BLOCK_ORDER);
}

/*
 * Give a block that was in a pool back to the page allocator.  No longer
 * NTA's for nta_owns() at once; the memory goes after a grace period, as
 * a remote freer may still read the header (nta_remote_free()).
 */
static void nta_release_block(struct nta_block *blk)
{
	clear_bit(nta_block_index(blk), nta_block_map);
	call_rcu(&blk->rcu, nta_free_block_rcu);
}

static void nta_release_blocks(struct list_head *released)
{
	struct nta_block *blk, *tmp;
	unsigned int n = 0;

	list_for_each_entry_safe(blk, tmp, released, link) {
		nta_release_block(blk);
		n++;
	}
	if (n)
		this_cpu_add(nta_cpu.stats.returns, n);
}

/*
 * What the caller's own path would hold for a request, by units, filled
 * at init: the small-object cache's size up to nta_small_cache_size (see
 * nta_model_small_cache()), else kmalloc_size_roundup().  Above 192 bytes
 * every kmalloc size (powers of two, then whole pages) is a multiple of
 * the unit, so all sizes of one unit count round up alike.  An entry of 0
 * (small sizes, where the 96 and 192 byte caches split a unit) means ask
 * kmalloc_size_roundup() itself.
 */
static unsigned int nta_kmalloc_units[NTA_NR_LISTS] __ro_after_init;
static unsigned int nta_small_cache_size __initdata;

/* Objects a bin holds at most at the base caps, by length in units. */
static u8 nta_bin_base_cap[NTA_NR_LISTS] __ro_after_init;
static_assert(NTA_BIN_MAX <= U8_MAX);
static_assert((NTA_BIN_MAX << NTA_BIN_SHIFT_MAX) <= U16_MAX);	/* bin_nr, bin_cap */
unsigned long nta_link_secret __ro_after_init;

/* Called by nta_init() and nta_model_small_cache(), whichever runs last. */
static void __init nta_init_kmalloc_units(void)
{
	unsigned int u, lo, hi;

	for (u = 1; u < NTA_NR_LISTS; u++) {
		lo = kmalloc_size_roundup((u - 1) * NTA_UNIT + 1);
		hi = kmalloc_size_roundup(u * NTA_UNIT);
		if (u * NTA_UNIT <= nta_small_cache_size)
			nta_kmalloc_units[u] = nta_small_cache_size;
		else
			nta_kmalloc_units[u] = lo == hi ? hi : 0;
	}
}

static void __init nta_init_bin_caps(void)
{
	unsigned int u;

	for (u = 1; u < NTA_NR_LISTS; u++)
		nta_bin_base_cap[u] = clamp(NTA_BIN_BYTES / (u * NTA_UNIT),
					    1, NTA_BIN_MAX);
}

/*
 * What the mainline path would hold for an object of @units units: the
 * gauge counts by units everywhere, so that an object counted in on one
 * path and out on another leaves it where it was.
 */
static s64 nta_kmalloc_of_units(unsigned int units)
{
	return nta_kmalloc_units[units] ?: kmalloc_size_roundup(units * NTA_UNIT);
}

/*
 * Live-object gauges.  The holder of @busy counts objects per length in
 * @live and the requested bytes; readers derive the rest from @live.
 * Everyone else keeps all four gauges in @stats.
 */
static __always_inline void nta_account(struct nta_cpu *c, bool mine,
					unsigned int size, int sign)
{
	unsigned int units = nta_size_to_units(size);

	if (likely(mine)) {
		c->live[units] += sign;
		c->fast.requested_bytes += sign * (s64)size;
		return;
	}
	this_cpu_add(nta_cpu.stats.inuse_objects, sign);
	this_cpu_add(nta_cpu.stats.requested_bytes, sign * (s64)size);
	this_cpu_add(nta_cpu.stats.reserved_bytes,
		     sign * (s64)(units * NTA_UNIT));
	if (IS_ENABLED(CONFIG_NTA_STATS))
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
 * false, preemption enabled again, when the mark is taken; else *@cp is
 * this CPU's state.
 */
static __always_inline bool nta_fast_enter(struct nta_cpu **cp)
{
	struct nta_cpu *c;

	preempt_disable();
	c = this_cpu_ptr(&nta_cpu);
	if (unlikely(READ_ONCE(c->busy))) {
		preempt_enable();
		return false;
	}
	WRITE_ONCE(c->busy, 1);
	barrier();
	*cp = c;
	return true;
}

/*
 * The mark is cleared through the per-CPU offset, not through @c: on x86
 * one %gs-relative store that needs no register, so the fast paths keep
 * theirs for the work.
 */
static __always_inline void nta_fast_exit(struct nta_cpu *c)
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

static __always_inline void nta_slow_drop_mark(struct nta_cpu *c, bool mine)
{
	if (mine) {
		barrier();
		WRITE_ONCE(c->busy, 0);
	}
}

/*
 * A slow path's entry and exit: this CPU's local lock, and its mark unless
 * the code the slow path interrupted holds it (*@mine says which).
 */
static __always_inline struct nta_cpu *nta_slow_lock(unsigned long *flags,
						     bool *mine)
{
	struct nta_cpu *c;

	local_lock_irqsave(&nta_cpu.lock, *flags);
	c = this_cpu_ptr(&nta_cpu);
	*mine = nta_slow_take_mark(c);
	return c;
}

static __always_inline void nta_slow_unlock(struct nta_cpu *c, bool mine,
					    unsigned long flags)
{
	nta_slow_drop_mark(c, mine);
	local_unlock_irqrestore(&nta_cpu.lock, flags);
}

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
static void nta_bins_set_shift(struct nta_cpu *c, unsigned int shift)
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
static void nta_bin_trim(struct nta_cpu *c, unsigned int units,
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
static void nta_bins_flush(struct nta_cpu *c, struct list_head *released)
{
	unsigned int u;

	for (u = 1; u < NTA_NR_LISTS && c->bin_units; u++)
		if (c->bin[u])
			nta_bin_trim(c, u, 0, released);
}

/*
 * A drain merged objects because the bins were full: double their caps
 * (see NTA_BIN_SHIFT_MAX).  Caller holds the lock and the mark.
 */
static void nta_bins_on_overflow(struct nta_cpu *c)
{
	if (c->bin_shift >= NTA_BIN_SHIFT_MAX)
		return;
	nta_bins_set_shift(c, c->bin_shift + 1);
	if (!timer_pending(&c->decay))
		mod_timer(&c->decay, jiffies + NTA_BIN_DECAY);
}

/*
 * A decay tick: bins that no drain overflowed since the last one halve
 * their caps and merge what is above them.  Caller holds the lock and the
 * mark.
 */
static void nta_bins_decay(struct nta_cpu *c, struct list_head *released)
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

static unsigned int nta_rb_drain(struct nta_cpu *c, bool mine,
				 struct list_head *released);

/* Something queued for this pool: blocks with pending bits, or batches. */
static __always_inline bool nta_has_queued(struct nta_cpu *c)
{
	return !llist_empty(&c->pool.remote) || !llist_empty(&c->rb_inbox);
}

static void nta_arm_stranded(struct nta_cpu *c);

static noinline void __nta_drain_locked(struct nta_cpu *c, bool mine,
					struct list_head *released)
{
	unsigned int n = nta_pool_drain(&c->pool, released);

	n += nta_rb_drain(c, mine, released);
	/*
	 * More than one drain's worth was queued: the next slow path takes
	 * the rest, or the stranded-free timer's kick if none comes first.
	 * Not a kick now: a self-IPI per such drain cost an owner that
	 * allocates what another CPU frees 0.18 more interrupt-flag changes
	 * per pair (make bench-icount, xcpu rem100%: 0.28, now 0.10).
	 */
	if (unlikely(nta_has_queued(c)))
		nta_arm_stranded(c);
	if (!n)
		return;
	nta_count(c, mine, NTA_CTR(drains), 1);
	nta_count(c, mine, NTA_CTR(frees), n);
}

/* Every slow path drains; when nothing is queued that is one load. */
static __always_inline void nta_drain_locked(struct nta_cpu *c, bool mine,
					     struct list_head *released)
{
	if (unlikely(nta_has_queued(c)))
		__nta_drain_locked(c, mine, released);
}

static DEFINE_RATELIMIT_STATE(nta_report_rs, 5 * HZ, 10);

/*
 * Print one report: every bad free and poison hit is counted; the first
 * ten in five seconds are printed, with a WARN's backtrace unless the
 * KUnit suite provoked them.  CONFIG_BUG_ON_DATA_CORRUPTION stops the
 * machine (CHECK_DATA_CORRUPTION()).
 */
static void __cold nta_print_report(const struct nta_report *r)
{
	bool warn = READ_ONCE(nta_warn_bad_free);

	/* The limit is on the noise, not on BUG_ON_DATA_CORRUPTION. */
	if (!__ratelimit(&nta_report_rs) &&
	    !(IS_ENABLED(CONFIG_BUG_ON_DATA_CORRUPTION) && warn))
		return;
	if (r->bad == r->ptr)
		pr_err("free-list links overwritten in free chunk %p (%u bytes)\n",
		       r->ptr, r->size);
	else if (r->bad)
		pr_err("write after free at %p in free chunk %p (%u bytes)\n",
		       r->bad, r->ptr, r->size);
	else
		pr_err("refusing free of %p size %u (block %p): %s\n",
		       r->ptr, r->size, nta_block_of(r->ptr),
		       nta_bad_free_reason(r->why));
	if (r->nr > 1)
		pr_err("and %u more found under the lock\n", r->nr - 1);
	/* As SLUB's reports do, mark the kernel as having seen corruption. */
	if (CHECK_DATA_CORRUPTION(warn, "nta: memory corruption detected\n"))
		add_taint(TAINT_BAD_PAGE, LOCKDEP_NOW_UNRELIABLE);
}

/*
 * Let KASAN say what it knows of a refused free: a double free is a
 * use-after-free report (a one-byte read at @ip, the caller of
 * nta_free()), where kfree() would say double-free.
 */
static void nta_kasan_check_free(const void *ptr, unsigned long ip)
{
#ifdef CONFIG_KASAN_GENERIC
	if (kasan_enabled())
		__kasan_check_byte(ptr, ip);
#endif
}

static noinline void __cold nta_complain(const void *ptr, unsigned int size,
					 enum nta_bad_free why, unsigned long ip)
{
	struct nta_report r = { .nr = 1, .ptr = ptr, .size = size, .why = why };

	this_cpu_inc(nta_cpu.stats.bad_frees);
	/* Not when the warning is off: tests that free badly on purpose. */
	if (why != NTA_FREE_FOREIGN && READ_ONCE(nta_warn_bad_free))
		nta_kasan_check_free(ptr, ip);
	nta_print_report(&r);
}

/*
 * Record a report found under the local lock (or in a dead CPU's pool);
 * nta_flush_reports() prints it once no lock is held.  Interrupts off,
 * so that a nested context of this CPU cannot tear the record.
 */
static void __cold nta_record_report(const void *ptr, const void *bad,
				     unsigned int size, enum nta_bad_free why)
{
	struct nta_report *r;
	unsigned long flags;

	local_irq_save(flags);
	r = this_cpu_ptr(&nta_cpu.report);
	if (!r->nr++) {
		r->ptr = ptr;
		r->bad = bad;
		r->size = size;
		r->why = why;
	}
	local_irq_restore(flags);
}

static noinline void __cold nta_print_reports(void)
{
	struct nta_report r;
	unsigned long flags;

	local_irq_save(flags);
	r = *this_cpu_ptr(&nta_cpu.report);
	this_cpu_ptr(&nta_cpu.report)->nr = 0;
	local_irq_restore(flags);
	if (r.nr)
		nta_print_report(&r);
}

/* After every slow path, with no lock held: one load when nothing waits. */
static __always_inline void nta_flush_reports(void)
{
	if (unlikely(raw_cpu_read(nta_cpu.report.nr)))
		nta_print_reports();
}

/*
 * Called by the owner's drain, under its lock, for a queued object that is
 * no longer live: a double free that raced with the owner's own free.
 * The statistics counted it out twice; they stay off by that object.
 */
void nta_report_bad_free(const struct nta_pool *pool, const void *ptr,
			 unsigned int size, enum nta_bad_free why)
{
	this_cpu_inc(nta_cpu.stats.bad_frees);
	nta_record_report(ptr, NULL, size, why);
}

/* Bins to merge or extra spares to give back: the decay tick has work. */
static bool nta_decay_wanted(const struct nta_cpu *c)
{
	return READ_ONCE(c->bin_units) || READ_ONCE(c->bin_shift) ||
	       READ_ONCE(c->pool.spares) > NTA_SPARE_BLOCKS;
}

/*
 * The pool grows: if it gave a block back since it last grew, its load
 * swings by more than its spares, and it keeps more (see NTA_SPARE_MAX).
 * Only automatic returns count (pool->released), not the shrinker's: a
 * pool trimmed under memory pressure does not raise its spares when it
 * grows again.  Caller holds the lock.
 */
static void nta_spares_on_grow(struct nta_cpu *c)
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
	if (c->bin_shift)
		nta_bins_set_shift(c, 0);
	c->bin_overflows = 0;
}

/*
 * Bins that sit idle decay: a deferrable timer pinned to each CPU merges
 * them into the pool once a tick has passed without a fast-path
 * allocation or free, so that memory parked for a length that went out of
 * use is not held for ever (up to nta_bins_limit() units per CPU); a busy CPU's
 * bins are left alone.  The same tick halves spares raised by
 * nta_spares_on_grow() and bin caps raised by nta_bins_on_overflow().
 * The timer runs only while the bins hold objects or caps or spares are
 * raised: the first object parked in empty bins starts it
 * (nta_bin_push()), as does a raise, and it stops once none is
 * left, so a CPU without NTA work takes no tick for it.  A CPU that
 * sleeps keeps its bins and spares until it wakes, as the timer is
 * deferrable (the shrinker takes the spares if memory is short first).
 * After its CPU went offline the timer runs elsewhere and stops.
 */
static void nta_decay_fn(struct timer_list *t)
{
	struct nta_cpu *c = from_timer(c, t, decay);
	LIST_HEAD(released);
	unsigned long flags;
	bool mine, idle;
	u64 seen;

	if (c != this_cpu_ptr(&nta_cpu))
		return;
	seen = READ_ONCE(c->fast.allocs) + READ_ONCE(c->fast.frees);
	idle = seen == c->decay_seen && READ_ONCE(c->bin_units);
	c->decay_seen = seen;
	if (idle || READ_ONCE(c->bin_shift) ||
	    READ_ONCE(c->pool.spares) > NTA_SPARE_BLOCKS) {
		c = nta_slow_lock(&flags, &mine);
		if (mine && idle)
			nta_bins_flush(c, &released);
		if (mine) {
			nta_bins_decay(c, &released);
			nta_spares_decay(c, &released);
		}
		nta_slow_unlock(c, mine, flags);
		nta_flush_reports();
		nta_release_blocks(&released);
	}
	/*
	 * A fast-path free that saw the bins empty with this timer pending
	 * parks its object after it ran: the mark held means this tick
	 * interrupted one, so come back rather than leave it parked.
	 */
	if (nta_decay_wanted(c) || READ_ONCE(c->busy))
		mod_timer(&c->decay, jiffies + NTA_BIN_DECAY);
}

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
 * freed, try the free lists, then the bins merged, then *@blk, a block
 * the caller allocated outside the lock (taken, and *@blk set to NULL,
 * when it is used).  Sets *@may_grow when the pool is below its cap.
 */
static void *nta_alloc_locked(unsigned int size, struct nta_block **blk,
			      bool *may_grow)
{
	LIST_HEAD(released);
	struct nta_cpu *c;
	unsigned long flags;
	void *obj;
	bool mine;

	c = nta_slow_lock(&flags, &mine);
	nta_drain_locked(c, mine, &released);
	/* The drain may have put objects of this length in their bin. */
	obj = mine ? nta_bin_pop(c, nta_size_to_units(size)) : NULL;
	if (!obj)
		obj = __nta_pool_alloc(&c->pool, size);
	if (unlikely(!obj) && mine && c->bin_units) {
		/* Binned objects may merge into a big enough chunk. */
		nta_bins_flush(c, &released);
		obj = __nta_pool_alloc(&c->pool, size);
	}
	*may_grow = c->pool.nr_blocks < nta_max_blocks &&
		    !nta_pool_broken(&c->pool);
	if (unlikely(!obj) && *blk && *may_grow) {
		nta_pool_add_block(&c->pool, *blk);
		*blk = NULL;
		nta_count(c, mine, NTA_CTR(grows), 1);
		nta_spares_on_grow(c);
		obj = __nta_pool_alloc(&c->pool, size);
	}
	if (likely(obj)) {
		nta_count(c, mine, NTA_CTR(allocs), 1);
		nta_account(c, mine, size, 1);
	}
	nta_slow_unlock(c, mine, flags);

	nta_flush_reports();
	if (unlikely(!list_empty(&released)))
		nta_release_blocks(&released);
	return obj;
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
	struct nta_block *blk;
	bool may_grow;
	void *obj;

	if (nta_grow_resting(raw_cpu_ptr(&nta_cpu)))
		return NULL;
	blk = nta_new_block(numa_mem_id(), nta_grow_gfp(gfp));
	if (!blk) {
		/* 0 means "never failed": a failure at jiffies 0 rests not. */
		WRITE_ONCE(raw_cpu_ptr(&nta_cpu)->grow_failed, jiffies);
		return NULL;
	}
	obj = nta_alloc_locked(size, &blk, &may_grow);
	/* Not needed after all (another context freed), or over the cap. */
	if (unlikely(blk))
		nta_free_block(blk);
	return obj;
}

static noinline void *nta_alloc_slow(unsigned int size, gfp_t gfp)
{
	struct nta_block *none = NULL;
	bool may_grow;
	void *obj;

	/* The local lock keeps out interrupts, not NMIs. */
	if (unlikely(!READ_ONCE(nta_ready) || in_nmi()))
		return NULL;

	obj = nta_alloc_locked(size, &none, &may_grow);
	if (unlikely(!obj) && may_grow)
		obj = nta_alloc_grow(size, gfp);
	if (unlikely(!obj)) {
		this_cpu_inc(nta_cpu.stats.failures);
		return NULL;
	}
	nta_hook_alloc(obj, size, gfp);
	if (want_init_on_alloc(gfp))
		memset(obj, 0, size);
	else if (want_init_on_free())
		memset(obj, 0, min_t(unsigned int, size, sizeof(struct nta_chunk)));
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
	unsigned int units = nta_size_to_units(size);
	struct nta_cpu *c;
	void *obj;

	if (unlikely(size - 1 >= NTA_MAX_SIZE))
		return NULL;
	if (unlikely(!nta_fast_enter(&c)))
		return nta_alloc_slow(size, gfp);
	obj = nta_bin_pop(c, units);
	if (unlikely(!obj)) {
		nta_fast_exit(c);
		return nta_alloc_slow(size, gfp);
	}
	c->fast.allocs++;
	nta_account(c, true, size, 1);
	nta_fast_exit(c);

	nta_hook_alloc(obj, size, gfp);
	/* memset() returns @obj: a tail call, no registers to save. */
	if (want_init_on_alloc(gfp))
		return memset(obj, 0, size);
	if (want_init_on_free())
		*(void **)obj = NULL;	/* the bin link, as SLUB's freepointer */
	return obj;
}

/*
 * A queued free must not wait for its owner for ever: an owner that keeps
 * to its fast path, or that NTA was switched off under, never drains.  A
 * CPU that queued a first block for some owner arms this timer; when it
 * fires, every owner that still has blocks queued is kicked.  Tests that
 * count kicks set a longer delay.
 */
unsigned long nta_stranded_delay __read_mostly = NTA_STRANDED_DELAY;

static void nta_stranded_fn(struct timer_list *t)
{
	unsigned int cpu;

	/* No CPU finishes going offline while preemption is off here. */
	preempt_disable();
	for_each_possible_cpu(cpu)
		if (nta_has_queued(per_cpu_ptr(&nta_cpu, cpu)) &&
		    nta_kick_cpu(cpu))
			this_cpu_inc(nta_cpu.stats.kicks);
	preempt_enable();
}

/* Armed, or brought forward if it was armed for later. */
static void nta_arm_stranded(struct nta_cpu *c)
{
	timer_reduce(&c->stranded, jiffies + READ_ONCE(nta_stranded_delay));
}

/*
 * Batched remote frees.  Setting an object's pending bit costs an atomic
 * per free, and queueing its block three more; a batch costs one
 * llist_add() for up to NTA_RB_MAX frees on the freeing CPU, and the
 * owner one llist_del_all() per drain and one llist_add() per batch it
 * sends home.  SLUB's sheaves (6.18) move objects between CPUs in arrays
 * for the same reason; like page_pool's ptr_ring, the arrays are owned
 * memory, allocated once, never on the free path.
 *
 * What waits in a batch is already freed for its caller but still live
 * for the owner, so its block is not given back meanwhile, unless the
 * caller freed the object twice.  A second free of such an object is
 * refused by the owner's drain, which writes nothing unless the object is
 * still NTA's and live with the length and generation the batch recorded:
 * also when the object was freed on its owner and handed out again before
 * the batch arrived (but for a multiple of 256 hand-outs: the generation
 * is a byte).
 */
bool nta_remote_batching __read_mostly = true;
unsigned long nta_rb_delay __read_mostly = NTA_RB_DELAY;

/* An idle batch of this CPU, taking those its owners sent back if need be. */
static struct nta_rbatch *nta_rb_take(struct nta_cpu *c)
{
	struct llist_node *node = c->rb_stash;

	if (unlikely(!node)) {
		if (llist_empty(&c->rb_returned))
			return NULL;
		node = llist_del_all(&c->rb_returned);
		nta_count(c, true, NTA_CTR(remote_atomics), 1);
	}
	c->rb_stash = node->next;
	return llist_entry(node, struct nta_rbatch, node);
}

/*
 * Publish an open batch on its owner.  The owner drains at its next slow
 * path, or when the stranded-free timer kicks it: no IPI from the free
 * path, not even to an idle owner.  Called by the holder of @c's mark, or
 * for a dead CPU (@mine false), whose owners are kicked at once.
 */
static void nta_rb_publish(struct nta_cpu *c, bool mine, unsigned int slot)
{
	struct nta_rbatch *b = c->rb_open[slot];
	unsigned int owner = b->owner;
	unsigned long when;

	c->rb_open[slot] = NULL;
	nta_count(c, mine, NTA_CTR(remote_atomics), 1);
	if (!llist_add(&b->node, &per_cpu(nta_cpu, owner).rb_inbox))
		return;
	if (!mine) {
		if (nta_kick_cpu(owner))
			nta_count(c, mine, NTA_CTR(kicks), 1);
		return;
	}
	when = jiffies + READ_ONCE(nta_stranded_delay);
	/* timer_reduce() locks only to arm the timer or bring it forward. */
	if (!timer_pending(&c->stranded) ||
	    time_after(READ_ONCE(c->stranded.expires), when))
		nta_count(c, mine, NTA_CTR(remote_atomics), 1);
	timer_reduce(&c->stranded, when);
}

static void nta_rb_publish_all(struct nta_cpu *c, bool mine)
{
	unsigned int slot;

	for (slot = 0; slot < NTA_RB_SLOTS; slot++)
		if (c->rb_open[slot])
			nta_rb_publish(c, mine, slot);
}

/*
 * Collect a free of @ptr, in @blk of another CPU's pool, in this CPU's open
 * batch for that CPU.  The caller holds @c's mark.  Returns false when no
 * batch is at hand; the free then sets the pending bit instead.
 */
/*
 * The slot of @c's open batch for @owner, else a free slot, else the slot
 * whose batch is published to make room.
 */
static unsigned int nta_rb_slot(const struct nta_cpu *c, unsigned int owner)
{
	unsigned int slot = owner % NTA_RB_SLOTS, free = NTA_RB_SLOTS;

	/* Where it usually is: a single compare on the free path. */
	if (c->rb_open[slot] && c->rb_open[slot]->owner == owner)
		return slot;
	for (slot = 0; slot < NTA_RB_SLOTS; slot++) {
		if (!c->rb_open[slot])
			free = min(free, slot);
		else if (c->rb_open[slot]->owner == owner)
			return slot;
	}
	return free < NTA_RB_SLOTS ? free : owner % NTA_RB_SLOTS;
}

static bool nta_rb_free(struct nta_cpu *c, struct nta_block *blk, void *ptr,
			unsigned int size, enum nta_bad_free *why)
{
	unsigned int owner = blk->pool->id, unit = nta_unit_of(blk, ptr);
	unsigned int slot = nta_rb_slot(c, owner);
	struct nta_rbatch *b = c->rb_open[slot];

	/* The same checks as nta_remote_free(), and nothing written. */
	*why = nta_check_object(blk, ptr, size);
	if (unlikely(*why))
		return true;
	if (unlikely(!b || b->owner != owner)) {
		if (b)
			nta_rb_publish(c, true, slot);
		b = nta_rb_take(c);
		if (unlikely(!b))
			return false;
		b->owner = owner;
		b->nr = 0;
		c->rb_open[slot] = b;
		if (!timer_pending(&c->rb_timer)) {
			nta_count(c, true, NTA_CTR(remote_atomics), 1);
			mod_timer(&c->rb_timer,
				  jiffies + READ_ONCE(nta_rb_delay));
		}
	}
	/* Poisoned before the owner can hand it out again. */
	nta_hook_free(ptr, size);
	b->gen[b->nr] = nta_gen(blk, unit);
	b->units[b->nr] = nta_size_to_units(size);
	b->obj[b->nr] = ptr;
	if (++b->nr == NTA_RB_MAX)
		nta_rb_publish(c, true, slot);
	return true;
}

/*
 * The owner frees one object of a batch, unless it is no longer live with
 * the length and generation the freer saw, or another CPU freed it again
 * through its pending bit: then it was freed twice, and handed out again
 * in between or not, so it is refused and nothing is written.  Only a
 * double free lets an object's block go while a batch holds it: the block
 * map says whether it is still NTA's, and blocks are freed after a grace
 * period, so the header may be read here (interrupts are off, or the
 * local lock is a spinlock that is an RCU reader on PREEMPT_RT).
 */
static unsigned int nta_rb_free_one(struct nta_cpu *c, bool mine, void *obj,
				    unsigned int units, u8 gen,
				    struct list_head *released)
{
	struct nta_block *blk = nta_block_of(obj);
	unsigned int unit = nta_unit_of(blk, obj);
	struct nta_pool *pool = &c->pool;

	if (unlikely(!__nta_owns(obj) || blk->pool != pool ||
		     blk->meta[unit].cls != units ||
		     blk->meta[unit].gen != gen ||
		     test_bit(unit, blk->pending))) {
		nta_report_bad_free(pool, obj, 0, NTA_FREE_NOT_ALLOCATED);
		return 0;
	}
	/*
	 * Into the bin for its length, so that the owner's next allocations
	 * of that length take the fast path: a CPU that allocates heads
	 * another CPU frees gets them back where it looks first.  Unlike a
	 * local free, an object that finds its bin or the CPU's bins full is
	 * merged on its own: a drain brings up to NTA_DRAIN_BLOCKS batches,
	 * and emptying every bin to make room for them (nta_free_to_bin())
	 * pushed most objects only to merge them at the next flush: 168
	 * guest instructions per drained object in the cross-CPU benchmark
	 * (-icount), 113 without.  A nested drain leaves the bins alone.  Wiped only now
	 * that the owner has checked it.
	 */
	if (pool->init_on_free)
		memset(obj, 0, units * NTA_UNIT);
	if (mine && nta_enabled()) {
		if (nta_bin_has_room(c, units)) {
			nta_bin_push(c, obj, units);
			return 1;
		}
		/* Merged only because the bins are full: they will grow. */
		c->bin_overflows++;
	}
	nta_free_units(pool, blk, unit, units, released);
	return 1;
}

/*
 * Free the objects of the batches published to @c, at most
 * NTA_DRAIN_BLOCKS batches per call (the rest waits for the next one),
 * and send each batch home.  The caller holds @c's lock, or owns a dead
 * CPU's pool.
 */
static unsigned int nta_rb_drain(struct nta_cpu *c, bool mine,
				 struct list_head *released)
{
	unsigned int n = 0, batches = 0, i, overflows = c->bin_overflows;
	struct llist_node *pos, *next;
	struct nta_rbatch *b;

	if (llist_empty(&c->rb_inbox))
		return 0;
	pos = llist_del_all(&c->rb_inbox);
	nta_count(c, mine, NTA_CTR(remote_atomics), 1);
	rcu_read_lock();
	for (; pos; pos = next) {
		if (batches++ == NTA_DRAIN_BLOCKS) {
			nta_llist_requeue(pos, &c->rb_inbox);
			nta_count(c, mine, NTA_CTR(remote_atomics), 1);
			break;
		}
		next = pos->next;
		b = llist_entry(pos, struct nta_rbatch, node);
		for (i = 0; i < b->nr; i++)
			n += nta_rb_free_one(c, mine, b->obj[i], b->units[i],
					     b->gen[i], released);
		llist_add(&b->node, &per_cpu(nta_cpu, b->home).rb_returned);
		nta_count(c, mine, NTA_CTR(remote_atomics), 1);
	}
	rcu_read_unlock();
	if (mine && c->bin_overflows != overflows)
		nta_bins_on_overflow(c);
	return n;
}

/*
 * NTA_RB_DELAY after a batch opened: publish what this CPU has collected.
 * Pinned, so it runs here unless the CPU went down, whose batches the
 * dead-CPU callback published; a fast path it interrupts holds them.
 */
static void nta_rb_timer_fn(struct timer_list *t)
{
	struct nta_cpu *c = from_timer(c, t, rb_timer);
	unsigned long flags;
	bool mine;

	if (c != raw_cpu_ptr(&nta_cpu))
		return;
	c = nta_slow_lock(&flags, &mine);
	if (mine)
		nta_rb_publish_all(c, true);
	else
		mod_timer(&c->rb_timer, jiffies + 1);
	nta_slow_unlock(c, mine, flags);
}

static void __init nta_rb_init(struct nta_cpu *c, unsigned int cpu)
{
	unsigned int i;

	/* @owner and @home are CPU numbers in 16 bits. */
	BUILD_BUG_ON(CONFIG_NR_CPUS > U16_MAX);

	for (i = 0; i < NTA_RB_PER_CPU; i++) {
		c->rb_mem[i].home = cpu;
		c->rb_mem[i].node.next = c->rb_stash;
		c->rb_stash = &c->rb_mem[i].node;
	}
	init_llist_head(&c->rb_inbox);
	init_llist_head(&c->rb_returned);
	timer_setup(&c->rb_timer, nta_rb_timer_fn, TIMER_PINNED);
}

/*
 * Queue the object for its owner: in a batch when the caller holds the
 * mark and batching is on, else with its pending bit.  The owner drains
 * on its next slow path, so it only needs a kick when it may not take one
 * soon: when it is idle and this is the first block queued, or when
 * NTA_KICK_BLOCKS blocks have piled up anyway; otherwise the
 * stranded-free timer is the bound.
 */
static enum nta_bad_free nta_queue_for_owner(struct nta_cpu *c, bool mine,
					     struct nta_block *blk, void *ptr,
					     unsigned int size)
{
	struct nta_pool *owner = blk->pool;
	enum nta_bad_free why;
	unsigned int queued;
	bool batched;

	/* The owner may give the block back while we look at its header. */
	rcu_read_lock();
	batched = mine && READ_ONCE(nta_remote_batching) &&
		  nta_rb_free(c, blk, ptr, size, &why);
	if (!batched) {
		/* Poisoned before the owner can see it pending. */
		if (NTA_KASAN && !nta_check_object(blk, ptr, size))
			nta_hook_free(ptr, size);
		why = nta_remote_free(owner, ptr, size, &queued);
	}
	rcu_read_unlock();
	if (unlikely(why))
		return why;
	nta_count(c, mine, NTA_CTR(remote_frees), 1);
	nta_account(c, mine, size, -1);
	if (batched)
		return NTA_FREE_OK;
	/* The pending bit; the block's queued flag, count and llist_add(). */
	nta_count(c, mine, NTA_CTR(remote_atomics), queued ? 4 : 1);
	if (likely(!queued))
		return NTA_FREE_OK;
	if (queued == NTA_KICK_BLOCKS || (queued == 1 && idle_cpu(owner->id))) {
		if (nta_kick_cpu(owner->id))
			nta_count(c, mine, NTA_CTR(kicks), 1);
	} else if (queued == 1) {
		nta_arm_stranded(c);
	}
	return NTA_FREE_OK;
}

/*
 * The owner's free that the fast path could not take: a full bin makes
 * room by merging its older half, bins at the CPU's cap are merged, and
 * the object is parked.  The caller has checked the object.
 */
static void nta_free_to_bin(struct nta_cpu *c, void *ptr, unsigned int size,
			    struct list_head *released)
{
	unsigned int units = nta_size_to_units(size);

	if (want_init_on_free())
		memset(ptr, 0, size);
	if (c->bin_nr[units] >= nta_bin_cap_of(c, units))
		nta_bin_trim(c, units, c->bin_nr[units] / 2, released);
	/*
	 * The CPU's bins are full of other lengths: merge them all rather
	 * than let lengths that went out of use keep out the current ones.
	 */
	if (c->bin_units + units > nta_bins_limit(c))
		nta_bins_flush(c, released);
	if (c->bin_units + units <= nta_bins_limit(c))
		nta_bin_push(c, ptr, units);
	else	/* an object longer than the cap: not with 4 KiB pages */
		nta_free_units(&c->pool, nta_block_of(ptr),
			       nta_unit_of(nta_block_of(ptr), ptr), units,
			       released);
}

/* @checked: the caller has found @ptr in the block map (nta_free()). */
static noinline void nta_free_slow(void *ptr, unsigned int size,
				   unsigned long ip, bool checked)
{
	struct nta_block *blk = nta_block_of(ptr);
	enum nta_bad_free why;
	LIST_HEAD(released);
	struct nta_cpu *c;
	unsigned long flags;
	bool mine;

	/* nta_free_trusted() leaves the block map to the paths off its fast one. */
	if (unlikely(!checked && !__nta_owns(ptr))) {
		nta_complain(ptr, size, NTA_FREE_FOREIGN, ip);
		return;
	}
	c = nta_slow_lock(&flags, &mine);
	if (likely(blk->pool == &c->pool)) {
		why = nta_check_object(blk, ptr, size);
		if (likely(!why)) {
			nta_hook_free(ptr, size);
			if (mine && nta_enabled())
				nta_free_to_bin(c, ptr, size, &released);
			else
				nta_do_free(&c->pool, ptr, size, &released);
			nta_count(c, mine, NTA_CTR(frees), 1);
			nta_account(c, mine, size, -1);
		}
	} else {
		why = nta_queue_for_owner(c, mine, blk, ptr, size);
	}
	nta_drain_locked(c, mine, &released);
	nta_slow_unlock(c, mine, flags);

	/* Reports print outside the lock: printk may allocate an skb. */
	nta_flush_reports();
	if (unlikely(why))
		nta_complain(ptr, size, why, ip);
	if (unlikely(!list_empty(&released)))
		nta_release_blocks(&released);
}

/*
 * The owner's free on its fast path, under the mark: unit aligned, live
 * with this length (which also means outside the header and not parked
 * in a bin), no remote free in flight, room in its bin, and the bins'
 * decay running.  Returns false, with nothing written, for the slow path.
 * Only nta_free_wiped() passes @wipe (init_on_free): the memset() is a
 * call, and without one nta_free() saves no registers.
 */
static __always_inline bool nta_free_fast(struct nta_cpu *c,
					  struct nta_block *blk, void *ptr,
					  unsigned int size, bool wipe)
{
	unsigned long off = ptr - (void *)blk;
	unsigned int units = nta_size_to_units(size);

	if (unlikely((off & (NTA_UNIT - 1)) ||
		     blk->meta[off >> NTA_UNIT_SHIFT].cls != units ||
		     test_bit(off >> NTA_UNIT_SHIFT, blk->pending) ||
		     !nta_bin_has_room(c, units) || nta_bins_idle(c)))
		return false;
	if (wipe)
		memset(ptr, 0, size);
	nta_hook_free(ptr, size);
	nta_bin_park(c, ptr, units);
	c->fast.frees++;
	nta_account(c, true, size, -1);
	return true;
}

/*
 * nta_free() or nta_free_trusted() on the owner under init_on_free; the
 * caller holds the mark.
 */
static noinline void nta_free_wiped(struct nta_cpu *c, void *ptr,
				    unsigned int size, unsigned long ip,
				    bool checked)
{
	bool done = nta_free_fast(c, nta_block_of(ptr), ptr, size, true);

	nta_fast_exit(c);
	if (!done)
		nta_free_slow(ptr, size, ip, checked);
}

/*
 * nta_free() on another CPU: queued for the owner, lock-free on its side,
 * so under the mark alone, which the caller holds.
 */
static noinline void nta_free_remote(struct nta_cpu *c, struct nta_block *blk,
				     void *ptr, unsigned int size,
				     unsigned long ip, bool checked)
{
	enum nta_bad_free why = NTA_FREE_FOREIGN;

	/* As in nta_free_slow(): a header is trusted only in a block of NTA's. */
	if (likely(checked || __nta_owns(ptr)))
		why = nta_queue_for_owner(c, true, blk, ptr, size);
	nta_fast_exit(c);
	if (unlikely(why))
		nta_complain(ptr, size, why, ip);
}

/*
 * nta_free() and nta_free_trusted() once @ptr is known (@checked), or
 * vouched for, to be NTA's.  The fast path reads the block header's @pool;
 * unless @checked, the remote and slow paths look @ptr up in the block map
 * before they read more of the header.
 */
static __always_inline void __nta_free(void *ptr, unsigned int size,
				       unsigned long ip, bool checked)
{
	struct nta_block *blk = nta_block_of(ptr);
	struct nta_cpu *c;
	bool done;

	/* Switched off: nothing allocates from the bins, so do not fill them. */
	if (unlikely(!nta_enabled()) || unlikely(!nta_fast_enter(&c)))
		goto slow;
	if (unlikely(blk->pool != &c->pool)) {
		nta_free_remote(c, blk, ptr, size, ip, checked);
		return;
	}
	if (want_init_on_free()) {
		nta_free_wiped(c, ptr, size, ip, checked);
		return;
	}
	done = nta_free_fast(c, blk, ptr, size, false);
	nta_fast_exit(c);
	if (likely(done))
		return;
slow:
	nta_free_slow(ptr, size, ip, checked);
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
		nta_complain(ptr, size, NTA_FREE_FOREIGN, _RET_IP_);
		return;
	}
	__nta_free(ptr, size, _RET_IP_, true);
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
	__nta_free(ptr, size, _RET_IP_, false);
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

/**
 * nta_model_small_cache - tell the statistics about a small-object cache
 * @size: object size of the cache the caller would use for requests up to
 *	@size without NTA (skb_small_head_cache for skb heads)
 *
 * The kmalloc_bytes statistic is what the caller's own path would hold
 * for NTA's live objects; without this it assumes kmalloc_size_roundup()
 * for every size.  @size is expected to be a multiple of the unit, as
 * cache-line aligned object sizes are.
 *
 * Context: process context, at boot, before the statistics are read.
 */
void __init nta_model_small_cache(unsigned int size)
{
	nta_small_cache_size = size;
	if (READ_ONCE(nta_ready))
		nta_init_kmalloc_units();
}

/**
 * nta_count_fallback - note a request NTA was asked to serve but did not
 *
 * Callers that fall back to another allocator while NTA is enabled call
 * this, so that the statistics show how often NTA was bypassed.
 *
 * Context: any context.
 */
void nta_count_fallback(void)
{
	this_cpu_inc(nta_cpu.stats.fallbacks);
}

/* What the live objects counted per length in @live hold. */
static void nta_add_live_stats(struct nta_stats *st, const struct nta_cpu *c)
{
	unsigned int u;
	s64 n;

	for (u = 1; u < NTA_NR_LISTS; u++) {
		n = READ_ONCE(c->live[u]);
		if (!n)
			continue;
		st->inuse_objects += n;
		st->reserved_bytes += n * u * NTA_UNIT;
		if (IS_ENABLED(CONFIG_NTA_STATS))
			st->kmalloc_bytes += n * nta_kmalloc_of_units(u);
	}
}

/* Add one CPU's counters, both sets, to @st: each is a 64-bit word. */
static void nta_add_counters(struct nta_stats *st, const struct nta_cpu *c)
{
	const s64 *fast = (const s64 *)&c->fast, *slow = (const s64 *)&c->stats;
	s64 *sum = (s64 *)st;
	unsigned int i;

	for (i = 0; i < NTA_NR_COUNTERS; i++)
		sum[i] += READ_ONCE(fast[i]) + READ_ONCE(slow[i]);
}

static void nta_add_cpu_stats(struct nta_stats *st, unsigned int cpu)
{
	const struct nta_cpu *c = per_cpu_ptr(&nta_cpu, cpu);
	unsigned long largest, bin_units = READ_ONCE(c->bin_units);

	nta_add_counters(st, c);
	/* Plain increments by the owner: a reader may see one late. */
	st->remote_atomics += data_race(c->pool.atomics);
	nta_add_live_stats(st, c);
	st->blocks += READ_ONCE(c->pool.nr_blocks);
	st->block_bytes += (u64)READ_ONCE(c->pool.nr_blocks) * NTA_BLOCK_SIZE;
	st->free_bytes += ((u64)READ_ONCE(c->pool.free_units) + bin_units) * NTA_UNIT;
	st->binned_bytes += (u64)bin_units * NTA_UNIT;
	largest = nta_pool_largest_free(&c->pool);
	st->largest_free = max_t(u64, st->largest_free, largest);
}

/**
 * nta_get_stats - read NTA's counters
 * @stats: filled in
 * @cpu: one CPU, or -1 for the sum over all possible CPUs
 *
 * The figures are read without stopping the allocator, so they are a
 * consistent picture only when the system is quiet.
 *
 * Context: any context.
 */
void nta_get_stats(struct nta_stats *stats, int cpu)
{
	unsigned int i;

	memset(stats, 0, sizeof(*stats));
	if (cpu >= 0) {
		nta_add_cpu_stats(stats, cpu);
		return;
	}
	for_each_possible_cpu(i)
		nta_add_cpu_stats(stats, i);
}

/*
 * Called under the lock by CONFIG_NTA_DEBUG's check of a free chunk, and
 * when free-list links are found overwritten (@bad == @chunk).
 */
void nta_report_poison(const struct nta_pool *pool, const void *chunk,
		       unsigned int units, const void *bad)
{
	atomic_inc(&nta_poison_reports);
	nta_record_report(chunk, bad, units * NTA_UNIT, NTA_FREE_OK);
}

/*
 * Drain this CPU's remote list and, with @trim, merge its bins and give
 * back its spare blocks.  Returns false when it ran nested in a fast path
 * (an irq_work kick can), which holds the bins: no trim then.
 */
static bool nta_drain_this_cpu(bool trim)
{
	LIST_HEAD(released);
	struct nta_cpu *c;
	unsigned long flags;
	bool mine;

	c = nta_slow_lock(&flags, &mine);
	nta_drain_locked(c, mine, &released);
	if (trim && mine) {
		nta_bins_flush(c, &released);
		nta_spares_reset(c);
		nta_pool_trim(&c->pool, &released, UINT_MAX);
	}
	nta_slow_unlock(c, mine, flags);
	nta_flush_reports();
	nta_release_blocks(&released);
	return mine;
}

#ifdef CONFIG_NTA_DEBUG
/**
 * nta_check_this_cpu - nta_pool_check() on this CPU's pool, for nta/check
 * @msg: where the first violation is described
 * @len: the size of @msg
 *
 * The caller is pinned to the CPU and in task context, so it cannot be
 * nested in this CPU's fast path.
 *
 * Return: how many violations there are.
 */
unsigned int nta_check_this_cpu(char *msg, size_t len)
{
	unsigned int errs = 1;
	unsigned long flags;
	struct nta_cpu *c;
	bool mine;

	c = nta_slow_lock(&flags, &mine);
	if (mine)
		errs = nta_pool_check(&c->pool, msg, len);
	else
		strscpy(msg, "called inside the fast path", len);
	nta_slow_unlock(c, mine, flags);
	return errs;
}

/**
 * nta_poison_test - provoke a poison report on this CPU's pool
 *
 * For nta/poison_test: take a free chunk of two units from this CPU's
 * pool and free it again, which poisons it; write a byte into it as a use
 * after free would; and run the check that handing the chunk out runs.
 * All under the local lock, so the report is recorded there and printed
 * after it, as a real one is.  The byte is put back before the lock is
 * dropped: nothing stays corrupted.  The caller is pinned to the CPU.
 *
 * Return: 0, or -ENOMEM when the pool has no free chunk of two units.
 */
int nta_poison_test(void)
{
	LIST_HEAD(released);
	unsigned long flags;
	struct nta_cpu *c;
	u8 *p = NULL;
	bool mine;

	c = nta_slow_lock(&flags, &mine);
	if (mine)
		p = nta_pool_alloc(&c->pool, 2 * NTA_UNIT);
	if (p) {
		nta_pool_free(&c->pool, p, 2 * NTA_UNIT, &released);
		p[NTA_UNIT] = ~POISON_FREE;
		nta_check_poison(&c->pool, p, 2);
		p[NTA_UNIT] = POISON_FREE;
	}
	nta_slow_unlock(c, mine, flags);
	nta_flush_reports();
	nta_release_blocks(&released);
	return p ? 0 : -ENOMEM;
}
#endif

/**
 * nta_blocks_this_cpu - where this CPU's blocks live, for nta/nodes
 * @local: set to how many are on this CPU's memory node (nta_block_node())
 *
 * The caller is pinned to the CPU and in task context.
 *
 * Return: how many blocks this CPU's pool holds.
 */
unsigned int nta_blocks_this_cpu(unsigned int *local)
{
	int nid = nta_block_node(smp_processor_id());
	const struct nta_block *blk;
	unsigned int n = 0;
	unsigned long flags;
	struct nta_cpu *c;
	bool mine;

	*local = 0;
	c = nta_slow_lock(&flags, &mine);
	list_for_each_entry(blk, &c->pool.blocks, link) {
		n++;
		if (page_to_nid(virt_to_page(blk)) == nid)
			(*local)++;
	}
	nta_slow_unlock(c, mine, flags);
	return n;
}

static void nta_kick_fn(struct irq_work *work)
{
	struct nta_cpu *c = this_cpu_ptr(&nta_cpu);
	bool trim = READ_ONCE(c->trim);

	/* Cleared even when nested in a fast path: the next scan asks again. */
	nta_drain_this_cpu(trim);
	if (trim)
		WRITE_ONCE(c->trim, 0);
	/*
	 * A kick drains all: one drain's worth per run, interrupts on
	 * between.  Not on a CPU going down, whose self-IPI would be lost:
	 * the dead pool's work item drains the rest.
	 */
	if (cpu_online(smp_processor_id()) && nta_has_queued(c))
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
	unsigned int batches = 0;

	while (nta_has_queued(raw_cpu_ptr(&nta_cpu)) &&
	       batches++ < NTA_TRIM_BATCHES)
		if (!nta_drain_this_cpu(false))
			return -EBUSY;
	return nta_drain_this_cpu(true) ? 0 : -EBUSY;
}

/*
 * Ask @cpu to drain its remote list.  An offline owner cannot run its
 * irq_work; its pool is drained from a work item instead.  Returns false
 * when a kick was already on its way.
 */
static bool nta_kick_cpu(unsigned int cpu)
{
	if (cpu_online(cpu))
		return irq_work_queue_on(&per_cpu(nta_cpu, cpu).kick, cpu);
	return schedule_work(&nta_offline_work);
}

/*
 * Drain a pool whose CPU is not running and give back every wholly free
 * block, its reserve included: the CPU takes a reserve again when it
 * comes back.  The caller excludes hotplug.
 */
static void nta_drain_dead_pool(unsigned int cpu)
{
	struct nta_cpu *c = per_cpu_ptr(&nta_cpu, cpu);
	LIST_HEAD(released);
	unsigned int n;

	/* What it had collected for other owners goes to them now. */
	nta_rb_publish_all(c, false);
	nta_bins_flush(c, &released);
	n = 0;
	do {
		n += nta_pool_drain(&c->pool, &released);
		n += nta_rb_drain(c, false, &released);
	} while (nta_has_queued(c));
	c->pool.reserve = 0;
	nta_pool_trim(&c->pool, &released, UINT_MAX);
	c->pool.reserve = nta_reserve_blocks;
	nta_spares_reset(c);
	nta_flush_reports();
	nta_release_blocks(&released);
	if (n) {
		this_cpu_inc(nta_cpu.stats.drains);
		this_cpu_add(nta_cpu.stats.frees, n);
	}
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
static long nta_rb_publish_this_cpu(void *unused)
{
	unsigned long flags;
	struct nta_cpu *c;
	bool mine;

	c = nta_slow_lock(&flags, &mine);
	if (mine)
		nta_rb_publish_all(c, true);
	nta_slow_unlock(c, mine, flags);
	return mine ? 0 : -EBUSY;
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

	if (!READ_ONCE(nta_ready))
		return;
	cpus_read_lock();
	/* Every batch on its owner's list before any owner drains. */
	for_each_online_cpu(cpu)
		WARN_ON_ONCE(work_on_cpu(cpu, nta_rb_publish_this_cpu, NULL));
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
		nta_pool_add_block(&c->pool, blk);
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

	if (!READ_ONCE(nta_ready) || !nta_reserve_blocks)
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

	if (nta_init_fault(NTA_INIT_ONLINE) && !READ_ONCE(nta_ready) &&
	    cpu == cpumask_last(cpu_online_mask))
		return -ENOMEM;

	/* Free what was queued while the CPU was away. */
	local_lock_irqsave(&nta_cpu.lock, flags);
	nta_drain_locked(c, false, &released);
	local_unlock_irqrestore(&nta_cpu.lock, flags);
	nta_flush_reports();
	nta_release_blocks(&released);

	/* Switched off: no reserve until nta_fill_reserves() (sysctl on). */
	if (static_key_enabled(&nta_enabled_key))
		nta_fill_reserve(cpu);

	/* It may still run where it moved when the CPU went down. */
	timer_delete_sync(&c->decay);
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
	 * teardown): gone before it can move, so that a batch opened when
	 * the CPU is back arms it afresh.  Its batches are published here.
	 */
	timer_delete_sync(&per_cpu(nta_cpu, cpu).rb_timer);
	nta_drain_dead_pool(cpu);
	return 0;
}

#define NTA_BLOCK_PAGES		BIT(NTA_BLOCK_ORDER)

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
	unsigned int units = READ_ONCE(c->bin_units);

	if (!READ_ONCE(c->bin_shift) || units <= NTA_BINS_UNITS)
		return 0;
	return ((units - NTA_BINS_UNITS) * NTA_UNIT) >> PAGE_SHIFT;
}

/**
 * nta_shrink_count - pages NTA could give back under memory pressure
 * @shrink: the shrinker
 * @sc: the request
 *
 * Return: pages in wholly free blocks above the reserves, in every wholly
 * free block of an offline CPU and in bins above their base caps, or
 * SHRINK_EMPTY.
 */
VISIBLE_IF_KUNIT unsigned long nta_shrink_count(struct shrinker *shrink,
						struct shrink_control *sc)
{
	unsigned long n = 0;
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		n += nta_cpu_spare_blocks(cpu) * NTA_BLOCK_PAGES +
		     nta_cpu_raised_bin_pages(cpu);
	return n ?: SHRINK_EMPTY;
}

/* Give back up to @max spare blocks of this CPU's pool, bins merged first. */
static unsigned int nta_trim_local(unsigned int max)
{
	LIST_HEAD(released);
	struct nta_cpu *c;
	unsigned long flags;
	unsigned int n;
	bool mine;

	c = nta_slow_lock(&flags, &mine);
	nta_drain_locked(c, mine, &released);
	if (mine) {
		nta_bins_flush(c, &released);
		nta_spares_reset(c);
	}
	n = nta_pool_trim(&c->pool, &released, max);
	nta_slow_unlock(c, mine, flags);
	nta_flush_reports();
	nta_release_blocks(&released);
	return n;
}

/* Give back up to @max wholly free blocks of offline CPUs' pools. */
static unsigned int nta_trim_offline(unsigned int max)
{
	unsigned int cpu, n = 0;
	LIST_HEAD(released);

	/* Reclaim must not wait for hotplug or for the offline work. */
	if (!cpus_read_trylock())
		return 0;
	if (mutex_trylock(&nta_offline_mutex)) {
		for_each_possible_cpu(cpu) {
			struct nta_pool *pool = &per_cpu(nta_cpu, cpu).pool;

			if (cpu_online(cpu) || n >= max)
				continue;
			pool->reserve = 0;
			n += nta_pool_trim(pool, &released, max - n);
			pool->reserve = nta_reserve_blocks;
		}
		mutex_unlock(&nta_offline_mutex);
	}
	cpus_read_unlock();
	nta_release_blocks(&released);
	return n;
}

/**
 * nta_shrink_scan - give back pages under memory pressure
 * @shrink: the shrinker
 * @sc: the request; up to @sc->nr_to_scan pages are given back
 *
 * Only a pool's owner may touch it, so this frees synchronously what the
 * calling CPU's pool and the offline CPUs' pools can give, and asks the
 * other CPUs that hold spares or raised bins, once each until they have
 * trimmed, to give them back on their own (an irq_work): no IPI to every
 * CPU per scan.
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
				  READ_ONCE(c->bin_shift)) &&
		    !xchg(&c->trim, true))
			nta_kick_cpu(cpu);
	}
	put_cpu();
	return n ? (unsigned long)n * NTA_BLOCK_PAGES : SHRINK_STOP;
}

static int __init nta_init_block_map(void)
{
	nta_block_map_bits = DIV_ROUND_UP((unsigned long)high_memory - PAGE_OFFSET,
					  NTA_BLOCK_SIZE);
	nta_block_map = vzalloc(BITS_TO_LONGS(nta_block_map_bits) *
				sizeof(unsigned long));
	return nta_block_map ? 0 : -ENOMEM;
}

/*
 * The reserves of the CPUs of a node take at most 1/NTA_RESERVE_SHARE of
 * that node's memory, so that no value of nta_reserve= can eat a machine;
 * every pool gets the smallest such share over the nodes that have CPUs.
 */
static void __init nta_clamp_reserve(void)
{
	unsigned int cpu, ncpus, cap, want = nta_reserve_blocks;
	unsigned long pages;
	int nid;

	for_each_node_with_cpus(nid) {
		ncpus = 0;
		for_each_possible_cpu(cpu)
			if (cpu_to_node(cpu) == nid)
				ncpus++;
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
	unsigned long *map = nta_block_map;
	unsigned int cpu;

	static_branch_disable(&nta_enabled_key);
	if (dead_state > 0)
		cpuhp_remove_state_nocalls(dead_state);
	for_each_possible_cpu(cpu)
		nta_drain_dead_pool(cpu);
	/* nta_owns() reads the size first: no index is in range any more. */
	WRITE_ONCE(nta_block_map_bits, 0);
	synchronize_rcu();
	nta_block_map = NULL;
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
	if (IS_ENABLED(CONFIG_SLAB_FREELIST_HARDENED))
		nta_link_secret = get_random_long();
	for_each_possible_cpu(cpu) {
		struct nta_cpu *c = per_cpu_ptr(&nta_cpu, cpu);

		nta_pool_init(&c->pool, cpu, nta_reserve_blocks);
		c->pool.spares = NTA_SPARE_BLOCKS;
		c->pool.init_on_free = want_init_on_free();
		nta_bins_set_shift(c, 0);
		init_irq_work(&c->kick, nta_kick_fn);
		timer_setup(&c->stranded, nta_stranded_fn, 0);
		timer_setup(&c->decay, nta_decay_fn,
			    TIMER_DEFERRABLE | TIMER_PINNED);
		nta_rb_init(c, cpu);
	}
	/* After the per-CPU state, which the unwind goes through. */
	ret = nta_init_fault(NTA_INIT_MAP) ? -ENOMEM : nta_init_block_map();
	if (ret)
		goto fail;

	/* Before the online callback runs: nta=off takes no reserve. */
	if (!nta_boot_enabled)
		static_branch_disable(&nta_enabled_key);
	dead = nta_init_fault(NTA_INIT_DEAD) ? -ENOSPC :
	       cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "net/nta:dead",
					 NULL, nta_cpu_dead);
	ret = dead;
	if (ret < 0)
		goto fail;
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "net/nta:online",
				nta_cpu_online, NULL);
	if (ret < 0)
		goto fail;

	/* Counts and frees in pages. */
	shrinker = shrinker_alloc(0, "nta");
	if (shrinker) {
		shrinker->count_objects = nta_shrink_count;
		shrinker->scan_objects = nta_shrink_scan;
		shrinker_register(shrinker);
	}

	WRITE_ONCE(nta_ready, true);
	pr_info("unit %u B, block %lu KiB, reserve %u and limit %u blocks per CPU, %s%s\n",
		NTA_UNIT, NTA_BLOCK_SIZE >> 10, nta_reserve_blocks,
		nta_max_blocks, nta_boot_enabled ? "on" : "off",
		nta_boot_enabled || !nta_reserve_blocks ? "" :
		" (reserve taken when switched on)");
	return 0;

fail:
	nta_init_undo(dead);
	pr_err("initialisation failed (%d), undone; skb heads use kmalloc\n",
	       ret);
	return 0;
}
core_initcall(nta_init);
