// SPDX-License-Identifier: GPL-2.0
/*
 * NTA statistics: each CPU's counters summed at read time, and the model
 * of what mainline's kmalloc path would hold for the same live objects
 * (the kmalloc_bytes gauge).  nta_ctl.c shows them in debugfs.
 */

#include <linux/cpumask.h>
#include <linux/init.h>
#include <linux/nta.h>
#include <linux/percpu.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "nta_internal.h"

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

/* Called by nta_init() and nta_model_small_cache(), whichever runs last. */
void __init nta_init_kmalloc_units(void)
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

/*
 * What the mainline path would hold for an object of @units units: the
 * gauge counts by units everywhere, so that an object counted in on one
 * path and out on another leaves it where it was.
 */
s64 nta_kmalloc_of_units(unsigned int units)
{
	return nta_kmalloc_units[units] ?: kmalloc_size_roundup(units * NTA_UNIT);
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
	if (nta_is_ready())
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

/*
 * Live objects of @units units counted on @cpu, or on every CPU for -1.
 * A CPU counts what it allocated of a length less what it freed, and an
 * object freed on another CPU is counted out there: a CPU that allocates
 * what another frees counts up for ever, the other down, each wrapping in
 * its u32.  Summed as they wrap, modulo 2^32, the counts still give the
 * objects live, which are fewer than 2^31; one CPU's count, read alone,
 * is what it allocated less what it freed, negative or not.
 */
static s32 nta_live_of(int cpu, unsigned int units)
{
	const struct nta_cpu *c;
	u32 n = 0;
	int i;

	for_each_possible_cpu(i) {
		if (cpu >= 0 && i != cpu)
			continue;
		c = per_cpu_ptr(&nta_cpu, i);
		n += READ_ONCE(c->bins.slot[units].live);
	}
	return (s32)n;
}

/* What the live objects counted per length in the bins' slots hold. */
static void nta_add_live_stats(struct nta_stats *st, int cpu)
{
	unsigned int u;
	s64 n;

	for (u = 1; u < NTA_NR_LISTS; u++) {
		n = nta_live_of(cpu, u);
		if (!n)
			continue;
		st->inuse_objects += n;
		st->reserved_bytes += n * u * NTA_UNIT;
		if (IS_ENABLED(CONFIG_NTA_KMALLOC_MODEL))
			st->kmalloc_bytes += n * nta_kmalloc_of_units(u);
	}
}

/*
 * The requested bytes that the holder of @c's mark allocated less those
 * it freed.  Two words where there was one: an allocation and its free
 * made between the two reads would show as a free alone.  So the
 * allocations are read again after the frees, and both again if they
 * moved, a few times at most; frees alone between the reads give the
 * state at the second.  Read live, as every counter here: the writer
 * orders nothing for the reader.
 */
static s64 nta_fast_requested(const struct nta_cpu *c)
{
	unsigned int tries;
	u64 alloc, freed;

	for (tries = 0; tries < 4; tries++) {
		alloc = READ_ONCE(c->fast.alloc_bytes);
		freed = READ_ONCE(c->fast.freed_bytes);
		if (READ_ONCE(c->fast.alloc_bytes) == alloc)
			break;
	}
	return (s64)(alloc - freed);
}

/* Add one CPU's counters, both sets, to @st: each is a 64-bit word. */
static void nta_add_counters(struct nta_stats *st, const struct nta_cpu *c)
{
	const s64 *slow = (const s64 *)&c->stats;
	s64 *sum = (s64 *)st;
	unsigned int i;

	for (i = 0; i < NTA_NR_COUNTERS; i++)
		sum[i] += READ_ONCE(slow[i]);
	st->allocs += READ_ONCE(c->fast.allocs);
	st->requested_bytes += nta_fast_requested(c);
}

static void nta_add_cpu_stats(struct nta_stats *st, unsigned int cpu)
{
	const struct nta_cpu *c = per_cpu_ptr(&nta_cpu, cpu);
	unsigned long largest, bin_units = nta_bins_units_seen(&c->bins);

	nta_add_counters(st, c);
	/* Plain increments by the owner: a reader may see one late. */
	st->remote_atomics += data_race(c->pool.atomics);
	st->blocks += READ_ONCE(c->pool.nr_blocks);
	st->block_bytes += (u64)READ_ONCE(c->pool.nr_blocks) * NTA_BLOCK_SIZE;
	st->free_bytes += ((u64)READ_ONCE(c->pool.free_units) + bin_units) * NTA_UNIT;
	st->binned_bytes += (u64)bin_units * NTA_UNIT;
	largest = nta_pool_largest_free(&c->pool);
	st->largest_free = max_t(u64, st->largest_free, largest);
}

/*
 * What owners freed themselves is not counted (a counter on the fast path
 * would cost every free an instruction): every object allocated on a CPU
 * is live, freed by that CPU, or freed by another (a remote free, counted
 * where it is made), so the local frees are what is left.  @frees holds
 * the drained frees, which owners count when they drain.  Read while the
 * CPUs work, the counters may each miss a different operation in flight:
 * never below 0.
 */
static void nta_derive_frees(struct nta_stats *st)
{
	s64 local = (s64)st->allocs - (s64)st->remote_frees - st->inuse_objects;

	st->frees += max_t(s64, local, 0);
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
	} else {
		for_each_possible_cpu(i)
			nta_add_cpu_stats(stats, i);
	}
	nta_add_live_stats(stats, cpu);
	nta_derive_frees(stats);
}
