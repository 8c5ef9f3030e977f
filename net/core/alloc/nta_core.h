/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NTA core: one pool's blocks, bitmaps and free lists.
 *
 * Nothing in here knows about CPUs, locks or the page allocator: a pool is
 * handed naturally aligned blocks by its caller, and every function below
 * expects the caller to serialise calls on one pool (the owner's local
 * lock in the kernel, one thread per pool in a userspace test harness).
 * The only exception is nta_remote_free(), which any context may call for
 * any pool.
 * The kernel glue also writes a block's length bytes (nta_unit_meta.cls)
 * under its per-CPU mark when it parks objects in, or takes them from, its
 * bins.
 */
#ifndef _NET_CORE_ALLOC_NTA_CORE_H
#define _NET_CORE_ALLOC_NTA_CORE_H

#include <linux/bitops.h>
#include <linux/cache.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/kasan.h>
#include <linux/minmax.h>
#include <linux/poison.h>
#include <linux/string.h>
#include <linux/swab.h>
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
 * struct nta_unit_meta - what a block header records about one of its units
 * @cls: the length in units of the live object that starts at the unit,
 *	0 anywhere else (free, inside an object, the header, or the start of
 *	an object parked in a per-CPU bin of the kernel glue)
 * @gen: bumped to its next even value each time an object that starts
 *	at the unit is freed (nta_mark_dead()): a free that waits in a batch
 *	(the kernel glue's batched remote frees) records it, so that the
 *	owner can tell a free of the object it was given from a late second
 *	free of an object that was freed, and maybe handed out again,
 *	meanwhile.  Its low bit, NTA_GEN_CLAIMED, is set while the object
 *	waits for its owner after a free through its pending bit
 *	(nta_remote_free()), and cleared when the owner frees it.
 */
struct nta_unit_meta {
	u8 cls;
	u8 gen;
};

#define NTA_GEN_CLAIMED		1

/*
 * Two units' bytes as one word: a remote free claims an object with one
 * compare-and-exchange of the aligned word that holds its length and
 * generation bytes (nta_unit_claim_remote()).
 */
union nta_meta_pair {
	u32 word;
	struct nta_unit_meta meta[2];
};

/**
 * struct nta_block - header at the start of every block
 * @pending: one bit per object another CPU has freed and the owner has
 *	not drained yet; set with an atomic by any CPU, taken by the owner
 * @pool: the pool that owns the block; only it allocates from or merges
 *	in the block
 * @remote: entry on the owner's @remote list while @queued is set
 * @queued: 1 while the block is on its owner's @remote list
 * @link: entry on the owning pool's list of blocks
 * @rcu: once the block has left its pool: its memory goes back to the
 *	page allocator only after a grace period, because a remote freer
 *	may still be reading this header (see nta_remote_free())
 * @free_units: units of the block on the pool's free lists
 * @used: one bit per unit that belongs to a live object or to this header
 * @start: one bit per unit where a live object begins
 * @meta: per unit, its length byte @cls and generation byte @gen (struct
 *	nta_unit_meta), side by side; first, so that a unit's bytes are at
 *	twice its index from the block's start, which a store addresses
 *	with the index alone (the entries of the header's own units are
 *	never used)
 *
 * A free chunk is a maximal run of clear bits in @used; because free
 * chunks are merged at once, two free chunks are never adjacent, so the
 * bitmap alone gives a free neighbour's extent.
 *
 * @meta keeps the size of every live object out of band: a free is checked
 * (start, size and double free) with one byte compare, and nothing is
 * written into an object before that check has passed.  A free from
 * another CPU writes nothing into the object at all: it claims the object
 * in @meta, sets its @pending bit and queues the block, and the owner
 * frees what it finds pending.  The other fields other CPUs write come
 * right after @meta and share their cache line with @pool, which every
 * free reads, and with @link, which changes when the block joins or leaves its pool,
 * not with the bitmaps the owner writes on every operation; a claim
 * writes the object's line of @meta, which only a double free makes the
 * owner touch at the same time.
 *
 * A free reads an object's length byte, a batched remote free its
 * generation byte too, and the owner's free writes both: as pairs in one
 * array, rather than two arrays, an object's two bytes share a cache line, so
 * each side touches one line of @meta per object, not two.
 */
struct nta_block {
	struct nta_unit_meta meta[NTA_BLOCK_UNITS];
	unsigned long pending[NTA_BITMAP_LONGS];
	struct nta_pool *pool;
	struct llist_node remote;
	unsigned long queued;
	union {
		struct list_head link;
		struct rcu_head rcu;
	};
	unsigned int free_units;
	unsigned long used[NTA_BITMAP_LONGS];
	unsigned long start[NTA_BITMAP_LONGS];
};

/*
 * A unit's length and generation bytes as any CPU may read them (a remote
 * free checks the one and records the other), and the owner's stores.
 * Other CPUs write them only to claim a live object, with cmpxchg() on
 * their word (nta_unit_claim_remote()).
 */
static __always_inline unsigned int nta_cls(const struct nta_block *blk,
					    unsigned int unit)
{
	return READ_ONCE(blk->meta[unit].cls);
}

static __always_inline u8 nta_gen(const struct nta_block *blk,
				  unsigned int unit)
{
	return READ_ONCE(blk->meta[unit].gen);
}

static __always_inline void nta_set_cls(struct nta_block *blk,
					unsigned int unit, unsigned int units)
{
	WRITE_ONCE(blk->meta[unit].cls, units);
}

static __always_inline void nta_set_gen(struct nta_block *blk,
					unsigned int unit, u8 gen)
{
	WRITE_ONCE(blk->meta[unit].gen, gen);
}

#define NTA_HDR_UNITS		DIV_ROUND_UP(sizeof(struct nta_block), NTA_UNIT)
#define NTA_DATA_UNITS		(NTA_BLOCK_UNITS - NTA_HDR_UNITS)
#define NTA_MAX_SIZE		(NTA_DATA_UNITS * NTA_UNIT)
/* List i holds free chunks of exactly i units, i in 1..NTA_DATA_UNITS. */
#define NTA_NR_LISTS		(NTA_DATA_UNITS + 1)

/* Blocks with remote frees an owner may have queued before a freer kicks it. */
#define NTA_KICK_BLOCKS		8
/* Blocks one nta_pool_drain() call takes on; the rest waits on the list. */
#define NTA_DRAIN_BLOCKS	16

/*
 * A free chunk, linked through its first unit onto the free list of its
 * length; a list's head is a chunk in the pool.  The links sit in free
 * memory beside packet data.  With CONFIG_SLAB_FREELIST_HARDENED each is
 * stored as SLUB stores its free pointers (freelist_ptr_encode() in
 * mm/slub.c): XORed with @nta_link_secret and with the byte-swapped
 * address of the word that holds it, so that bytes read past a
 * neighbouring head give no kernel address away and bytes written past
 * one cannot aim a link.  With that option or CONFIG_LIST_HARDENED, a
 * chunk is unlinked only once both its neighbours are seen to link back
 * to it (as __list_del_entry_valid() checks for list_del()); links found
 * overwritten are reported and left alone, and the pool is quarantined.
 */
struct nta_chunk {
	unsigned long next;
	unsigned long prev;
};

/* Links are checked where the kernel's list or freelist hardening is on. */
static __always_inline bool nta_links_checked(void)
{
	return IS_ENABLED(CONFIG_LIST_HARDENED) ||
	       IS_ENABLED(CONFIG_SLAB_FREELIST_HARDENED);
}

/* Set once before the first pool; provided by the embedder. */
extern unsigned long nta_link_secret;

static __always_inline unsigned long nta_link_key(const unsigned long *at)
{
	if (!IS_ENABLED(CONFIG_SLAB_FREELIST_HARDENED))
		return 0;
	return nta_link_secret ^ swab((unsigned long)at);
}

static __always_inline struct nta_chunk *nta_link_get(const unsigned long *at)
{
	return (struct nta_chunk *)(*at ^ nta_link_key(at));
}

static __always_inline void nta_link_set(unsigned long *at,
					 const struct nta_chunk *to)
{
	*at = (unsigned long)to ^ nta_link_key(at);
}

static __always_inline struct nta_chunk *
nta_chunk_next(const struct nta_chunk *chunk)
{
	return nta_link_get(&chunk->next);
}

static __always_inline struct nta_chunk *
nta_chunk_prev(const struct nta_chunk *chunk)
{
	return nta_link_get(&chunk->prev);
}

static inline void nta_flist_init(struct nta_chunk *head)
{
	nta_link_set(&head->next, head);
	nta_link_set(&head->prev, head);
}

static __always_inline bool nta_flist_empty(const struct nta_chunk *head)
{
	return nta_chunk_next(head) == head;
}

static inline unsigned int nta_flist_count(const struct nta_chunk *head)
{
	const struct nta_chunk *pos;
	unsigned int n = 0;

	for (pos = nta_chunk_next(head); pos != head; pos = nta_chunk_next(pos))
		n++;
	return n;
}

/**
 * struct nta_pool - one CPU's allocator state
 * @nonempty: bit i set when list i of @free is not empty
 * @free: free chunks by size in units, linked through their first unit
 * @remote: blocks holding objects that other CPUs freed; producers: any
 *	CPU through nta_remote_free(); consumer: the owner only, in
 *	nta_pool_drain()
 * @remote_blocks: blocks pushed on @remote since the last drain
 * @blocks: every block the pool owns
 * @nr_blocks: length of @blocks
 * @reserve: blocks the pool keeps even when they are wholly free
 * @spares: wholly free blocks kept above @reserve (at least 1)
 * @whole: wholly free blocks, the length of list NTA_DATA_UNITS of @free
 * @released: blocks given back because they were above @spares (a
 *	counter that wraps, for the embedder's spare policy)
 * @free_units: units on all free lists
 * @init_on_free: wipe objects as they are freed, on any CPU (init_on_free=1)
 * @broken: free-list links were found overwritten (nta_pool_quarantine())
 * @atomics: atomic operations the owner's drains made (for statistics)
 * @id: owner (CPU number in the kernel, thread index in the harness)
 */
struct nta_pool {
	unsigned long nonempty[BITS_TO_LONGS(NTA_NR_LISTS)];
	struct nta_chunk free[NTA_NR_LISTS];
	struct llist_head remote;
	atomic_t remote_blocks;
	struct list_head blocks;
	unsigned int nr_blocks;
	unsigned int reserve;
	unsigned int spares;
	unsigned int whole;
	unsigned int released;
	unsigned long free_units;
	bool init_on_free;
	bool broken;
	unsigned long atomics;
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
	NTA_FREE_BAD_HEADER,	/* the block header's owner was overwritten */
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
unsigned int nta_pool_trim(struct nta_pool *pool, struct list_head *released,
			   unsigned int max);
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
void nta_pool_quarantine(struct nta_pool *pool, const struct nta_chunk *chunk,
			 unsigned int units);
/* Built with CONFIG_NTA_POOL_CHECK; its callers are under the same options. */
unsigned int nta_pool_check(const struct nta_pool *pool, char *msg,
			    size_t len);

/*
 * Provided by the code that embeds the core (nta_report.c in the kernel, a
 * userspace test harness).  nta_report_poison() is called when
 * CONFIG_NTA_DEBUG finds a free chunk whose poison was overwritten, i.e. a
 * write after free (@bad the first byte found), and with @bad == @chunk
 * when a free chunk's links were found overwritten; nta_report_bad_free()
 * when the owner's drain finds an object that another CPU queued with the
 * wrong size.
 */
void nta_report_poison(const struct nta_pool *pool, const void *chunk,
		       unsigned int units, const void *bad);
void nta_report_bad_free(const struct nta_pool *pool, const void *ptr,
			 unsigned int size, enum nta_bad_free why);

#endif /* _NET_CORE_ALLOC_NTA_CORE_H */
