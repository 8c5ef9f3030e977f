/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NTA core: one pool's blocks, bitmaps and free lists.
 *
 * Nothing in here knows about CPUs, locks or the page allocator: a pool is
 * handed naturally aligned blocks by its caller, and every function below
 * expects the caller to serialise calls on one pool (the owner's local
 * lock in the kernel, one thread per pool in tools/testing/nta).  The only
 * exception is nta_remote_free(), which any context may call for any pool.
 */
#ifndef _NET_CORE_ALLOC_NTA_CORE_H
#define _NET_CORE_ALLOC_NTA_CORE_H

#include <linux/bitops.h>
#include <linux/cache.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/types.h>
#include <linux/atomic.h>
#include <asm/page.h>

/* One allocation unit: an L1 cache line, so heads stay line aligned. */
#define NTA_UNIT_SHIFT		L1_CACHE_SHIFT
#define NTA_UNIT		L1_CACHE_BYTES

/*
 * Blocks are 2^NTA_BLOCK_ORDER pages, allocated naturally aligned so that
 * masking an object's address finds its block header.
 */
#define NTA_BLOCK_ORDER		2
#define NTA_BLOCK_SIZE		(PAGE_SIZE << NTA_BLOCK_ORDER)
#define NTA_BLOCK_UNITS		(NTA_BLOCK_SIZE / NTA_UNIT)
#define NTA_BITMAP_LONGS	BITS_TO_LONGS(NTA_BLOCK_UNITS)

/**
 * struct nta_block - header at the start of every block
 * @link: entry on the owning pool's list of blocks
 * @pool: the pool that owns the block; only it allocates from or merges
 *	in the block
 * @free_units: units of the block on the pool's free lists
 * @used: one bit per unit that belongs to a live object or to this header
 * @start: one bit per unit where a live object begins
 * @pending: one bit per object whose remote free is in flight; set with
 *	an atomic bitop by any CPU, cleared by the owner when it drains
 *
 * A free chunk is a maximal run of clear bits in @used; because free
 * chunks are merged at once, two free chunks are never adjacent, so the
 * bitmap alone gives a free neighbour's extent.
 */
struct nta_block {
	struct list_head link;
	struct nta_pool *pool;
	unsigned int free_units;
	unsigned long used[NTA_BITMAP_LONGS];
	unsigned long start[NTA_BITMAP_LONGS];
	unsigned long pending[NTA_BITMAP_LONGS];
};

#define NTA_HDR_UNITS		DIV_ROUND_UP(sizeof(struct nta_block), NTA_UNIT)
#define NTA_DATA_UNITS		(NTA_BLOCK_UNITS - NTA_HDR_UNITS)
#define NTA_MAX_SIZE		(NTA_DATA_UNITS * NTA_UNIT)
/* List i holds free chunks of exactly i units, i in 1..NTA_DATA_UNITS. */
#define NTA_NR_LISTS		(NTA_DATA_UNITS + 1)

/* Remote frees an owner may have queued before a freer kicks it. */
#define NTA_KICK_THRESHOLD	64

/**
 * struct nta_pool - one CPU's allocator state
 * @nonempty: bit i set when @free[i] is not empty
 * @free: free chunks by size in units, linked through their first unit
 * @remote: objects freed by other CPUs; producers: any CPU through
 *	nta_remote_free(); consumer: the owner only, in nta_pool_drain()
 * @remote_count: objects pushed on @remote since the last drain
 * @blocks: every block the pool owns
 * @nr_blocks: length of @blocks
 * @reserve: blocks the pool keeps even when they are wholly free
 * @free_units: units on all free lists
 * @init_on_free: wipe objects as they are freed, on any CPU (init_on_free=1)
 * @id: owner (CPU number in the kernel, thread index in the harness)
 */
struct nta_pool {
	unsigned long nonempty[BITS_TO_LONGS(NTA_NR_LISTS)];
	struct list_head free[NTA_NR_LISTS];
	struct llist_head remote;
	atomic_t remote_count;
	struct list_head blocks;
	unsigned int nr_blocks;
	unsigned int reserve;
	unsigned long free_units;
	bool init_on_free;
	unsigned int id;
};

/* Why nta_check_free() refused a pointer. */
enum nta_bad_free {
	NTA_FREE_OK = 0,
	NTA_FREE_FOREIGN,	/* not in any NTA block */
	NTA_FREE_MISALIGNED,	/* not on a unit boundary, or in the header */
	NTA_FREE_NOT_ALLOCATED,	/* no live object starts there: double free */
	NTA_FREE_PENDING,	/* already freed remotely, not yet drained */
	NTA_FREE_WRONG_SIZE,	/* size does not match the object */
};

static inline struct nta_block *nta_block_of(const void *ptr)
{
	return (struct nta_block *)((unsigned long)ptr & ~(NTA_BLOCK_SIZE - 1));
}

static inline unsigned int nta_size_to_units(unsigned int size)
{
	return DIV_ROUND_UP(size, NTA_UNIT);
}

void nta_pool_init(struct nta_pool *pool, unsigned int id, unsigned int reserve);
void nta_pool_add_block(struct nta_pool *pool, void *mem);
bool nta_pool_remove_block(struct nta_pool *pool, struct nta_block *blk);
unsigned int nta_pool_trim(struct nta_pool *pool, struct list_head *released);
void *nta_pool_alloc(struct nta_pool *pool, unsigned int size);
enum nta_bad_free nta_check_free(const struct nta_block *blk, const void *ptr,
				 unsigned int size);
void nta_pool_free(struct nta_pool *pool, void *ptr, unsigned int size,
		   struct list_head *released);
enum nta_bad_free nta_pool_free_checked(struct nta_pool *pool, void *ptr,
					unsigned int size,
					struct list_head *released);
enum nta_bad_free nta_remote_free(struct nta_pool *owner, void *ptr,
				  unsigned int size, unsigned int *queued);
unsigned int nta_pool_drain(struct nta_pool *pool, struct list_head *released);
unsigned int nta_object_units(const struct nta_block *blk, unsigned int unit);
unsigned long nta_pool_largest_free(const struct nta_pool *pool);
const char *nta_bad_free_reason(enum nta_bad_free why);

/*
 * Provided by the code that embeds the core (nta.c in the kernel, the
 * harness in tools/testing/nta).  nta_report_poison() is called when
 * CONFIG_NTA_DEBUG finds a free chunk whose poison was overwritten, i.e. a
 * write after free; nta_report_bad_free() when the owner's drain finds an
 * object that another CPU queued with the wrong size.
 */
void nta_report_poison(const struct nta_pool *pool, const void *chunk,
		       unsigned int units, const void *bad);
void nta_report_bad_free(const struct nta_pool *pool, const void *ptr,
			 unsigned int size, enum nta_bad_free why);

#endif /* _NET_CORE_ALLOC_NTA_CORE_H */
