/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Network tree allocator (NTA): a per-CPU allocator for skb head data.
 *
 * Memory comes in naturally aligned blocks of pages owned by one CPU.
 * Requests are rounded up to a cache line ("unit"), not to a power of
 * two; free chunks are kept on per-size lists and merged with their free
 * neighbours as soon as they are freed.  See
 * Documentation/networking/nta.rst.
 */
#ifndef _LINUX_NTA_H
#define _LINUX_NTA_H

#include <linux/align.h>
#include <linux/cache.h>
#include <linux/init.h>
#include <linux/types.h>
#include <linux/gfp_types.h>
#include <linux/jump_label.h>

/**
 * DOC: network tree allocator
 *
 * The network tree allocator (NTA) is a per-CPU allocator for the head
 * data of socket buffers: the linear area that ``skb->head`` points to,
 * followed by ``struct skb_shared_info``.  It serves one user, the skb
 * layer, through skb_head_alloc() and skb_head_free() in
 * ``net/core/skbuff.c``.
 *
 * kmalloc() rounds every request up to its next size class: a 1500 byte
 * frame with its ``skb_shared_info`` gets a 2 KiB object, a 9000 byte
 * jumbo frame a 16 KiB one, and the rounding is charged to the socket as
 * ``truesize``.  skb heads also share the slab and page allocators with
 * the rest of the system, so a burst of allocations elsewhere empties the
 * memory the next packet needs.
 *
 * NTA gives each CPU naturally aligned blocks of pages cut into cache-line
 * units.  A request is rounded up to a unit, not to a power of two; an
 * object freed into the pool is merged with its free neighbours at once,
 * so the pool defragments itself; an object freed on another CPU goes
 * back to the CPU that owns it; and with ``nta_reserve=`` each CPU keeps
 * a reserve of blocks, first come, first served for every alloc_skb()
 * user on that CPU.
 * NIC receive heads built on page fragments or page_pool pages never come
 * from NTA.  In front of the pool, per-CPU bins of exact lengths serve the
 * common case without disabling interrupts.  When NTA cannot serve a
 * request, the skb layer falls back to kmalloc_reserve() exactly as
 * without NTA.  A kernel built with NTA boots with it on (``nta=off``
 * turns it off), and the ``net.core.nta`` sysctl switches new allocations
 * between NTA and kmalloc at run time.
 */

/**
 * struct nta_stats - allocator counters, summed over CPUs or for one CPU
 * @allocs: successful nta_alloc() calls
 * @frees: objects freed by their owner, parked in a bin or merged into
 *	their block: drained ones, counted, and local ones, derived when
 *	read (@allocs less @remote_frees less @inuse_objects)
 * @remote_frees: nta_free() calls made on a CPU that does not own the object
 * @remote_atomics: atomic operations that remote frees cost, on the
 *	freeing CPU and on the owner, counted where they are made
 * @drains: times an owner emptied its remote-free list and found work
 * @kicks: times an owner was asked to drain the remote frees queued for
 *	it (an irq_work; a work item for an offline owner): by remote freers
 *	and their timer only when it is neither idle nor nohz_full, and when
 *	a dead CPU's batches are published
 * @grows: blocks added beyond the reserve
 * @returns: blocks given back to the page allocator
 * @failures: nta_alloc() calls that returned NULL
 * @bad_frees: nta_free() calls rejected as invalid (pool left untouched)
 * @fallbacks: heads the skb layer allocated elsewhere while NTA was on
 * @inuse_objects: live objects
 * @requested_bytes: bytes asked for by live objects
 * @reserved_bytes: bytes NTA holds for live objects (whole units)
 * @kmalloc_bytes: bytes the mainline path would hold for the same live
 *	objects: kmalloc_size_roundup(), or the small-object cache size set
 *	with nta_model_small_cache() for requests that fit it
 * @blocks: blocks owned
 * @block_bytes: bytes of all blocks owned
 * @free_bytes: bytes on the free lists and in the per-CPU bins
 * @binned_bytes: bytes of freed objects parked in the per-CPU bins,
 *	not merged yet (part of @free_bytes)
 * @largest_free: largest free chunk in bytes
 */
struct nta_stats {
	u64 allocs;
	u64 frees;
	u64 remote_frees;
	u64 remote_atomics;
	u64 drains;
	u64 kicks;
	u64 grows;
	u64 returns;
	u64 failures;
	u64 bad_frees;
	u64 fallbacks;
	s64 inuse_objects;
	s64 requested_bytes;
	s64 reserved_bytes;
	s64 kmalloc_bytes;
	u64 blocks;
	u64 block_bytes;
	u64 free_bytes;
	u64 binned_bytes;
	u64 largest_free;
};

#ifdef CONFIG_NET_NTA

DECLARE_STATIC_KEY_TRUE(nta_enabled_key);

/**
 * nta_enabled - should new skb heads come from NTA?
 *
 * Follows the ``nta=`` boot parameter and the ``net.core.nta`` sysctl.
 * Objects allocated while NTA was on are freed to NTA whatever the
 * switch says later; callers remember where each object came from.
 *
 * Return: true when new allocations should be served by NTA.
 */
static inline bool nta_enabled(void)
{
	return static_branch_likely(&nta_enabled_key);
}

void *nta_alloc(unsigned int size, gfp_t gfp);
void nta_free(void *ptr, unsigned int size);
void nta_free_trusted(void *ptr, unsigned int size);

/**
 * nta_object_size - bytes NTA set aside for an object it handed out
 * @size: the size the object was allocated with
 *
 * What NTA sets aside for a request nta_alloc() has served, inline for
 * the skb head path: NTA rounds up to a cache line.
 *
 * Return: @size rounded up to whole units.
 */
static inline unsigned int nta_object_size(unsigned int size)
{
	return ALIGN(size, L1_CACHE_BYTES);
}

unsigned int nta_max_size(void);
bool nta_owns(const void *ptr);
void nta_check_heap_object(const void *ptr, unsigned long n, bool to_user);
void nta_count_fallback(void);
void __init nta_model_small_cache(unsigned int size);
void nta_get_stats(struct nta_stats *stats, int cpu);
void nta_drain_all(void);

#else /* CONFIG_NET_NTA */

static inline bool nta_enabled(void)
{
	return false;
}

static inline void *nta_alloc(unsigned int size, gfp_t gfp)
{
	return NULL;
}

static inline void nta_free(void *ptr, unsigned int size)
{
}

static inline void nta_free_trusted(void *ptr, unsigned int size)
{
}

static inline unsigned int nta_object_size(unsigned int size)
{
	return size;
}

static inline unsigned int nta_max_size(void)
{
	return 0;
}

static inline bool nta_owns(const void *ptr)
{
	return false;
}

static inline void nta_check_heap_object(const void *ptr, unsigned long n,
					 bool to_user)
{
}

static inline void nta_count_fallback(void)
{
}

static inline void nta_model_small_cache(unsigned int size)
{
}

static inline void nta_drain_all(void)
{
}

#endif /* CONFIG_NET_NTA */

#endif /* _LINUX_NTA_H */
