// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite nta_core: the allocator core (nta_core.c) on private pools.
 *
 * The pools are built from blocks the tests allocate themselves and are
 * owned by no CPU, so every split, merge and refusal is deterministic and
 * is compared with a full snapshot of the pool (bitmaps, free lists,
 * remote list, counts) and with an allocate-everything pass: splits and
 * merges, best fit, bitmap word edges, release above the reserve, the
 * remote queue, bad frees of every kind, poisoning and the free-list link
 * checks.  Not instrumented by KASAN: it looks into free memory on purpose.
 */

#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/gfp.h>
#include <linux/kasan.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/poison.h>
#include <linux/prandom.h>
#include <linux/slab.h>
#include <linux/sort.h>

#include "nta_kunit_helpers.h"

/* Private pools are owned by no CPU; this id shows up in poison reports. */
#define NTA_TEST_POOL_ID	999

static int nta_tchunk_cmp(const void *a, const void *b)
{
	const struct nta_tsnap_chunk *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Forget the order of the free lists: LIFO order is not pool state. */
static void nta_tsnap_canonical(struct nta_tsnap *s)
{
	sort(s->chunk, s->nr_chunks, sizeof(s->chunk[0]), nta_tchunk_cmp, NULL);
}

#define NTA_EXPECT_POOL_OK(test, pool)					\
	do {								\
		char __msg[96] = "";					\
									\
		KUNIT_EXPECT_EQ_MSG(test, nta_pool_check(pool, __msg,	\
				    sizeof(__msg)), 0, "%s", __msg);	\
	} while (0)

/* ---------------------------------------------------------------------- */
/* Private pools                                                          */

struct nta_tpool {
	struct nta_pool pool;
};

static void nta_tfree_blocks(struct list_head *list)
{
	struct nta_block *blk, *tmp;

	list_for_each_entry_safe(blk, tmp, list, link) {
		list_del(&blk->link);
		__free_pages(virt_to_page(blk), NTA_BLOCK_ORDER);
	}
}

static void nta_tpool_destroy(void *data)
{
	struct nta_tpool *tp = data;

	nta_tfree_blocks(&tp->pool.blocks);
}

static void nta_tpool_add(struct kunit *test, struct nta_pool *pool)
{
	struct page *page;

	page = alloc_pages(GFP_KERNEL | __GFP_COMP, NTA_BLOCK_ORDER);
	KUNIT_ASSERT_NOT_NULL(test, page);
	nta_pool_add_block(pool, page_address(page));
}

static struct nta_pool *nta_tpool(struct kunit *test, unsigned int reserve,
				  unsigned int blocks)
{
	struct nta_tpool *tp;

	tp = kunit_kzalloc(test, sizeof(*tp), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tp);
	nta_pool_init(&tp->pool, NTA_TEST_POOL_ID, reserve);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, nta_tpool_destroy,
							tp), 0);
	while (blocks--)
		nta_tpool_add(test, &tp->pool);
	return &tp->pool;
}

/* Free on the owner; return how many blocks went back to the system. */
static unsigned int nta_tfree(struct nta_pool *pool, void *ptr,
			      unsigned int size)
{
	LIST_HEAD(released);
	unsigned int n;

	nta_pool_free(pool, ptr, size, &released);
	n = list_count_nodes(&released);
	nta_tfree_blocks(&released);
	return n;
}

/* The first chunk on list @units, or NULL. */
static void *nta_tlist_first(const struct nta_pool *pool, unsigned int units)
{
	if (nta_flist_empty(&pool->free[units]))
		return NULL;
	return nta_chunk_next(&pool->free[units]);
}

/*
 * Allocate one unit at a time until the pool is empty, then free it all
 * again in reverse: the count must be the pool's free units.
 */
static unsigned long nta_tfill_count(struct kunit *test, struct nta_pool *pool)
{
	unsigned long n = 0, i, cap = pool->free_units + 1;
	void **objs;
	void *p;

	objs = kvcalloc(cap, sizeof(*objs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	while (n < cap && (p = nta_pool_alloc(pool, 1)))
		objs[n++] = p;
	KUNIT_EXPECT_EQ(test, pool->free_units, 0);
	for (i = n; i-- > 0;)
		nta_tfree(pool, objs[i], 1);
	kvfree(objs);
	return n;
}

/* A full snapshot, the invariants and an allocate-everything pass agree. */
static void nta_tpool_expect_intact(struct kunit *test, struct nta_pool *pool,
				    const struct nta_tsnap *before)
{
	struct nta_tsnap *now = nta_tsnap_alloc(test);
	struct nta_tsnap *sorted = nta_tsnap_alloc(test);
	unsigned long free_units = pool->free_units;

	nta_tsnap_take(pool, now);
	NTA_EXPECT_SNAP_EQ(test, before, now);
	NTA_EXPECT_POOL_OK(test, pool);

	memcpy(sorted, now, sizeof(*now));
	nta_tsnap_canonical(sorted);
	KUNIT_EXPECT_EQ(test, nta_tfill_count(test, pool), free_units);
	nta_tsnap_take(pool, now);
	nta_tsnap_canonical(now);
	NTA_EXPECT_SNAP_EQ(test, sorted, now);
}

/* ---------------------------------------------------------------------- */
/* nta_core: the algorithm on private pools                               */

/*
 * Four neighbours a, b, c, d of 2, 3, 1 and 4 units at the start of a
 * block, then the free tail.  Each case frees some of them in order and
 * names the chunk that must result: its first object and its length.
 */
#define NTA_T4_UNITS	(2 + 3 + 1 + 4)
#define NTA_TAIL_UNITS	(NTA_DATA_UNITS - NTA_T4_UNITS)

struct nta_tmerge {
	const char *name;
	int order[4];		/* objects to free, -1 ends */
	int chunk_obj;		/* where the checked chunk starts */
	unsigned int chunk_units;
	unsigned int nr_chunks;	/* free chunks in the block afterwards */
};

static const struct nta_tmerge nta_tmerge_cases[] = {
	{ "none", { 1, -1 }, 1, 3, 2 },
	{ "left", { 1, 2, -1 }, 1, 4, 2 },
	{ "right", { 2, 1, -1 }, 1, 4, 2 },
	{ "right_tail", { 3, -1 }, 3, 4 + NTA_TAIL_UNITS, 1 },
	{ "both", { 1, 3, 2, -1 }, 1, 3 + 1 + 4 + NTA_TAIL_UNITS, 1 },
	{ "left_header", { 0, -1 }, 0, 2, 2 },
	{ "all", { 0, 2, 1, 3 }, 0, NTA_DATA_UNITS, 1 },
};

static void nta_tmerge_desc(const struct nta_tmerge *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(nta_tmerge, nta_tmerge_cases, nta_tmerge_desc);

static void nta_core_split_merge(struct kunit *test)
{
	static const unsigned int units[4] = { 2, 3, 1, 4 };
	const struct nta_tmerge *t = test->param_value;
	struct nta_pool *pool = nta_tpool(test, 1, 1);
	unsigned int i, next = NTA_HDR_UNITS, chunks;
	struct nta_block *blk = NULL;
	void *obj[4];
	void *first;

	for (i = 0; i < 4; i++) {
		obj[i] = nta_pool_alloc(pool, units[i] * NTA_UNIT);
		KUNIT_ASSERT_NOT_NULL(test, obj[i]);
		blk = nta_block_of(obj[i]);
		/* Splitting takes the front of the chunk: objects are packed. */
		KUNIT_EXPECT_EQ(test, nta_tunit(obj[i]), next);
		KUNIT_EXPECT_EQ(test, nta_object_units(blk, next), units[i]);
		next += units[i];
	}
	KUNIT_EXPECT_EQ(test, pool->free_units, NTA_TAIL_UNITS);
	KUNIT_EXPECT_PTR_EQ(test, nta_tlist_first(pool, NTA_TAIL_UNITS),
			    nta_tunit_addr(blk, next));
	NTA_EXPECT_POOL_OK(test, pool);

	for (i = 0; i < 4 && t->order[i] >= 0; i++) {
		KUNIT_EXPECT_EQ(test, nta_check_free(blk, obj[t->order[i]],
						     units[t->order[i]] * NTA_UNIT),
				NTA_FREE_OK);
		KUNIT_EXPECT_EQ(test, nta_tfree(pool, obj[t->order[i]],
						units[t->order[i]] * NTA_UNIT), 0);
		NTA_EXPECT_POOL_OK(test, pool);
	}

	/* The merged chunk went on its list's head (LIFO). */
	first = nta_tlist_first(pool, t->chunk_units);
	KUNIT_EXPECT_PTR_EQ(test, first, obj[t->chunk_obj]);
	chunks = 0;
	for (i = 1; i < NTA_NR_LISTS; i++)
		chunks += nta_flist_count(&pool->free[i]);
	KUNIT_EXPECT_EQ(test, chunks, t->nr_chunks);
	KUNIT_EXPECT_EQ(test, blk->free_units, pool->free_units);
}

/* A split that leaves exactly one unit; that unit is then the best fit. */
static void nta_core_one_unit_remainder(struct kunit *test)
{
	struct nta_pool *pool = nta_tpool(test, 1, 1);
	struct nta_block *blk;
	void *big, *last;

	big = nta_pool_alloc(pool, (NTA_DATA_UNITS - 1) * NTA_UNIT);
	KUNIT_ASSERT_NOT_NULL(test, big);
	blk = nta_block_of(big);
	KUNIT_EXPECT_EQ(test, pool->free_units, 1);
	KUNIT_EXPECT_EQ(test, find_first_bit(pool->nonempty, NTA_NR_LISTS), 1);
	KUNIT_EXPECT_PTR_EQ(test, nta_tlist_first(pool, 1),
			    nta_tunit_addr(blk, NTA_BLOCK_UNITS - 1));
	NTA_EXPECT_POOL_OK(test, pool);

	/* Two units do not fit anywhere; one does, in the block's last unit. */
	KUNIT_EXPECT_NULL(test, nta_pool_alloc(pool, NTA_UNIT + 1));
	last = nta_pool_alloc(pool, 1);
	KUNIT_EXPECT_PTR_EQ(test, last, nta_tunit_addr(blk, NTA_BLOCK_UNITS - 1));
	KUNIT_EXPECT_EQ(test, nta_object_units(blk, NTA_BLOCK_UNITS - 1), 1);
	KUNIT_EXPECT_EQ(test, pool->free_units, 0);
	KUNIT_EXPECT_NULL(test, nta_pool_alloc(pool, 1));
	KUNIT_EXPECT_EQ(test, nta_pool_largest_free(pool), 0);
	NTA_EXPECT_POOL_OK(test, pool);

	/* The last unit has no right neighbour: nothing to merge there. */
	nta_tfree(pool, last, 1);
	NTA_EXPECT_POOL_OK(test, pool);
	nta_tfree(pool, big, (NTA_DATA_UNITS - 1) * NTA_UNIT);
	KUNIT_EXPECT_PTR_EQ(test, nta_tlist_first(pool, NTA_DATA_UNITS),
			    nta_tunit_addr(blk, NTA_HDR_UNITS));
	KUNIT_EXPECT_EQ(test, nta_pool_largest_free(pool), NTA_MAX_SIZE);
	NTA_EXPECT_POOL_OK(test, pool);
}

/* The smallest chunk that fits wins, not the first or the biggest. */
static void nta_core_best_fit(struct kunit *test)
{
	static const unsigned int units[] = { 1, 3, 1, 5, 1 };
	struct nta_pool *pool = nta_tpool(test, 1, 1);
	void *o[ARRAY_SIZE(units)];
	void *a, *b, *c, *d;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(units); i++) {
		o[i] = nta_pool_alloc(pool, units[i] * NTA_UNIT);
		KUNIT_ASSERT_NOT_NULL(test, o[i]);
	}
	nta_tfree(pool, o[1], 3 * NTA_UNIT);	/* hole of 3 */
	nta_tfree(pool, o[3], 5 * NTA_UNIT);	/* hole of 5 */
	NTA_EXPECT_POOL_OK(test, pool);

	a = nta_pool_alloc(pool, 4 * NTA_UNIT);	/* from the 5, leaves 1 */
	KUNIT_EXPECT_PTR_EQ(test, a, o[3]);
	KUNIT_EXPECT_PTR_EQ(test, nta_tlist_first(pool, 1), o[3] + 4 * NTA_UNIT);
	b = nta_pool_alloc(pool, 3 * NTA_UNIT - 7);	/* exact fit: the 3 */
	KUNIT_EXPECT_PTR_EQ(test, b, o[1]);
	c = nta_pool_alloc(pool, 1);			/* the 1 left over */
	KUNIT_EXPECT_PTR_EQ(test, c, o[3] + 4 * NTA_UNIT);
	d = nta_pool_alloc(pool, 2 * NTA_UNIT);		/* only the tail fits */
	KUNIT_EXPECT_PTR_EQ(test, d, o[4] + NTA_UNIT);
	NTA_EXPECT_POOL_OK(test, pool);

	nta_tfree(pool, b, 3 * NTA_UNIT - 7);
	nta_tfree(pool, a, 4 * NTA_UNIT);
	nta_tfree(pool, d, 2 * NTA_UNIT);
	nta_tfree(pool, c, 1);
	for (i = 0; i < ARRAY_SIZE(units); i++)
		if (i != 1 && i != 3)
			nta_tfree(pool, o[i], units[i] * NTA_UNIT);
	KUNIT_EXPECT_EQ(test, pool->free_units, NTA_DATA_UNITS);
	NTA_EXPECT_POOL_OK(test, pool);
}

/*
 * Objects that straddle a word of the bitmaps, and the block's last unit:
 * an object of 2 units starts one unit before @edge; frees then merge
 * across the edge from both sides.
 */
static const unsigned int nta_tedges[] = {
	BITS_PER_LONG, 2 * BITS_PER_LONG, 3 * BITS_PER_LONG, NTA_BLOCK_UNITS - 2,
};

static void nta_tedge_desc(const unsigned int *edge, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "unit_%u", *edge);
}

KUNIT_ARRAY_PARAM(nta_tedge, nta_tedges, nta_tedge_desc);

static void nta_core_bitmap_edges(struct kunit *test)
{
	unsigned int edge = *(const unsigned int *)test->param_value;
	struct nta_pool *pool = nta_tpool(test, 1, 1);
	unsigned int fill = edge - 1 - NTA_HDR_UNITS;
	unsigned int rest = NTA_DATA_UNITS - fill - 2;
	struct nta_block *blk;
	void *f, *x, *y;

	f = nta_pool_alloc(pool, fill * NTA_UNIT);
	x = nta_pool_alloc(pool, 2 * NTA_UNIT);
	y = nta_pool_alloc(pool, rest * NTA_UNIT);
	KUNIT_ASSERT_NOT_NULL(test, f);
	KUNIT_ASSERT_NOT_NULL(test, x);
	KUNIT_ASSERT_NOT_NULL(test, y);
	blk = nta_block_of(x);
	KUNIT_EXPECT_EQ(test, nta_tunit(x), edge - 1);
	KUNIT_EXPECT_EQ(test, nta_object_units(blk, edge - 1), 2);
	KUNIT_EXPECT_EQ(test, nta_object_units(blk, edge + 1), rest);
	KUNIT_EXPECT_EQ(test, pool->free_units, 0);
	KUNIT_EXPECT_EQ(test, nta_check_free(blk, x, NTA_UNIT),
			NTA_FREE_WRONG_SIZE);
	KUNIT_EXPECT_EQ(test, nta_check_free(blk, x + NTA_UNIT, NTA_UNIT),
			NTA_FREE_NOT_ALLOCATED);

	/* No free neighbour; then one on the right of the edge; then left. */
	nta_tfree(pool, x, 2 * NTA_UNIT);
	KUNIT_EXPECT_PTR_EQ(test, nta_tlist_first(pool, 2), x);
	NTA_EXPECT_POOL_OK(test, pool);
	nta_tfree(pool, y, rest * NTA_UNIT);
	KUNIT_EXPECT_PTR_EQ(test, nta_tlist_first(pool, rest + 2), x);
	NTA_EXPECT_POOL_OK(test, pool);
	nta_tfree(pool, f, fill * NTA_UNIT);
	KUNIT_EXPECT_PTR_EQ(test, nta_tlist_first(pool, NTA_DATA_UNITS), f);
	NTA_EXPECT_POOL_OK(test, pool);
}

struct nta_tfill {
	const char *name;
	unsigned int max_units;	/* object sizes 1..max_units */
	u64 seed;
};

static const struct nta_tfill nta_tfill_cases[] = {
	{ "one_unit", 1, 1 },
	{ "mixed_1_to_8", 8, 2 },
	{ "mixed_1_to_40", 40, 3 },
};

static void nta_tfill_desc(const struct nta_tfill *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(nta_tfill, nta_tfill_cases, nta_tfill_desc);

/*
 * Fill a block completely, free everything in random order, checking
 * every invariant after each free: the block must be one chunk again.
 */
static void nta_core_fill_free_random(struct kunit *test)
{
	const struct nta_tfill *t = test->param_value;
	struct nta_pool *pool = nta_tpool(test, 1, 1);
	unsigned int *sizes, n = 0, i, bad = 0;
	struct rnd_state rnd;
	char msg[96] = "";
	void **objs;

	objs = kunit_kcalloc(test, NTA_DATA_UNITS, sizeof(*objs), GFP_KERNEL);
	sizes = kunit_kcalloc(test, NTA_DATA_UNITS, sizeof(*sizes), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	KUNIT_ASSERT_NOT_NULL(test, sizes);
	prandom_seed_state(&rnd, t->seed);

	while (pool->free_units) {
		unsigned int units = 1 + prandom_u32_state(&rnd) % t->max_units;

		units = min_t(unsigned int, units, pool->free_units);
		sizes[n] = units * NTA_UNIT - prandom_u32_state(&rnd) % NTA_UNIT;
		objs[n] = nta_pool_alloc(pool, sizes[n]);
		KUNIT_ASSERT_NOT_NULL(test, objs[n]);
		n++;
	}
	KUNIT_EXPECT_NULL(test, nta_pool_alloc(pool, 1));
	KUNIT_EXPECT_TRUE(test, bitmap_empty(pool->nonempty, NTA_NR_LISTS));
	KUNIT_EXPECT_TRUE(test, bitmap_full(nta_block_of(objs[0])->used,
					    NTA_BLOCK_UNITS));
	if (t->max_units == 1)
		KUNIT_EXPECT_EQ(test, n, NTA_DATA_UNITS);

	for (i = n - 1; i > 0; i--) {
		unsigned int j = prandom_u32_state(&rnd) % (i + 1);

		swap(objs[i], objs[j]);
		swap(sizes[i], sizes[j]);
	}
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, nta_check_free(nta_block_of(objs[i]),
						     objs[i], sizes[i]),
				NTA_FREE_OK);
		nta_tfree(pool, objs[i], sizes[i]);
		if (!bad)
			bad = nta_pool_check(pool, msg, sizeof(msg));
	}
	KUNIT_EXPECT_EQ_MSG(test, bad, 0, "%s", msg);
	KUNIT_EXPECT_EQ(test, pool->free_units, NTA_DATA_UNITS);
	KUNIT_EXPECT_EQ(test, bitmap_weight(pool->nonempty, NTA_NR_LISTS), 1);
	KUNIT_EXPECT_EQ(test, nta_flist_count(&pool->free[NTA_DATA_UNITS]), 1);
	KUNIT_EXPECT_EQ(test, bitmap_weight(nta_block_of(objs[0])->used,
					    NTA_BLOCK_UNITS), NTA_HDR_UNITS);
}

/*
 * Wholly free blocks above the reserve go back but for one spare; the
 * reserve stays; nta_pool_trim() gives back the spare too.
 */
static void nta_core_release_above_reserve(struct kunit *test)
{
	struct nta_pool *pool = nta_tpool(test, 1, 4);
	LIST_HEAD(released);
	void *big[4], *small;
	unsigned int i;

	for (i = 0; i < 4; i++) {
		big[i] = nta_pool_alloc(pool, NTA_MAX_SIZE);
		KUNIT_ASSERT_NOT_NULL(test, big[i]);
	}
	KUNIT_EXPECT_NULL(test, nta_pool_alloc(pool, 1));

	/* The first wholly free block above the reserve is the spare. */
	KUNIT_EXPECT_EQ(test, nta_tfree(pool, big[0], NTA_MAX_SIZE), 0);
	KUNIT_EXPECT_EQ(test, pool->nr_blocks, 4);
	KUNIT_EXPECT_EQ(test, nta_flist_count(&pool->free[NTA_DATA_UNITS]), 1);
	/* Further ones go back at once. */
	KUNIT_EXPECT_EQ(test, nta_tfree(pool, big[1], NTA_MAX_SIZE), 1);
	KUNIT_EXPECT_EQ(test, pool->nr_blocks, 3);
	KUNIT_EXPECT_EQ(test, nta_tfree(pool, big[2], NTA_MAX_SIZE), 1);
	KUNIT_EXPECT_EQ(test, pool->nr_blocks, 2);
	NTA_EXPECT_POOL_OK(test, pool);

	/* A block with a live object is never released, nor trimmed. */
	small = nta_pool_alloc(pool, NTA_UNIT);
	KUNIT_ASSERT_NOT_NULL(test, small);
	KUNIT_EXPECT_EQ(test, nta_pool_trim(pool, &released, UINT_MAX), 0);
	KUNIT_EXPECT_EQ(test, pool->nr_blocks, 2);

	/* Trim gives back the spare above the reserve, never the reserve. */
	nta_tfree(pool, small, NTA_UNIT);
	KUNIT_EXPECT_EQ(test, pool->nr_blocks, 2);
	KUNIT_EXPECT_EQ(test, nta_pool_trim(pool, &released, UINT_MAX), 1);
	KUNIT_EXPECT_EQ(test, pool->nr_blocks, 1);
	nta_tfree_blocks(&released);
	KUNIT_EXPECT_EQ(test, nta_tfree(pool, big[3], NTA_MAX_SIZE), 0);
	KUNIT_EXPECT_EQ(test, pool->nr_blocks, 1);
	KUNIT_EXPECT_EQ(test, nta_pool_trim(pool, &released, UINT_MAX), 0);
	KUNIT_EXPECT_EQ(test, pool->nr_blocks, 1);
	KUNIT_EXPECT_EQ(test, pool->free_units, NTA_DATA_UNITS);
	NTA_EXPECT_POOL_OK(test, pool);
}

/*
 * Remote frees: a pending bit each, the block queued once, nothing
 * written into the objects.
 */
static void nta_core_remote_queue(struct kunit *test)
{
	struct nta_pool *pool = nta_tpool(test, 1, 1);
	unsigned int n = 40, i, queued;
	LIST_HEAD(released);
	struct nta_block *blk;
	void **objs;

	objs = kunit_kcalloc(test, n, sizeof(*objs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	for (i = 0; i < n; i++) {
		objs[i] = nta_pool_alloc(pool, 100);
		KUNIT_ASSERT_NOT_NULL(test, objs[i]);
	}
	blk = nta_block_of(objs[0]);
	KUNIT_EXPECT_EQ(test, nta_pool_drain(pool, &released), 0);
	for (i = 0; i < n; i++)
		memset(objs[i], i + 1, 100);

	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_EQ(test, nta_remote_free(pool, objs[i], 100, &queued),
				NTA_FREE_OK);
		KUNIT_EXPECT_EQ(test, queued, i ? 0 : 1);
		KUNIT_EXPECT_TRUE(test, test_bit(nta_tunit(objs[i]), blk->pending));
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&pool->remote_blocks), 1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(blk->queued), 1);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_TRUE(test, !memchr_inv(objs[i], i + 1, 100));
	/* Queued objects are still allocated until the owner drains. */
	KUNIT_EXPECT_EQ(test, pool->free_units,
			NTA_DATA_UNITS - n * nta_size_to_units(100));
	KUNIT_EXPECT_EQ(test, nta_check_free(blk, objs[3], 100), NTA_FREE_PENDING);
	NTA_EXPECT_POOL_OK(test, pool);

	KUNIT_EXPECT_EQ(test, nta_pool_drain(pool, &released), n);
	KUNIT_EXPECT_TRUE(test, list_empty(&released));
	KUNIT_EXPECT_EQ(test, atomic_read(&pool->remote_blocks), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(blk->queued), 0);
	KUNIT_EXPECT_TRUE(test, llist_empty(&pool->remote));
	KUNIT_EXPECT_TRUE(test, bitmap_empty(blk->pending, NTA_BLOCK_UNITS));
	KUNIT_EXPECT_EQ(test, pool->free_units, NTA_DATA_UNITS);
	KUNIT_EXPECT_EQ(test, nta_check_free(blk, objs[3], 100),
			NTA_FREE_NOT_ALLOCATED);
	/* A drained object cannot be queued again. */
	KUNIT_EXPECT_EQ(test, nta_remote_free(pool, objs[3], 100, &queued),
			NTA_FREE_NOT_ALLOCATED);
	KUNIT_EXPECT_EQ(test, queued, 0);
	NTA_EXPECT_POOL_OK(test, pool);
}

/*
 * Bad frees seen by the core: each is refused with the right reason and
 * the pool is bit for bit what it was, down to its free list order.
 */
enum nta_tbad_kind {
	NTA_TBAD_DOUBLE,
	NTA_TBAD_NEVER,
	NTA_TBAD_SMALLER,
	NTA_TBAD_LARGER,
	NTA_TBAD_ZERO,
	NTA_TBAD_HUGE,
	NTA_TBAD_MISALIGNED,
	NTA_TBAD_INSIDE,
	NTA_TBAD_HEADER,
	NTA_TBAD_HEADER_UNIT,
	NTA_TBAD_PENDING,
	NTA_TBAD_PENDING_REMOTE,
	NTA_TBAD_REMOTE_SIZE,
};

struct nta_tbad {
	const char *name;
	enum nta_tbad_kind kind;
	enum nta_bad_free why;
};

static const struct nta_tbad nta_tbad_cases[] = {
	{ "double_free", NTA_TBAD_DOUBLE, NTA_FREE_NOT_ALLOCATED },
	{ "never_allocated", NTA_TBAD_NEVER, NTA_FREE_NOT_ALLOCATED },
	{ "size_smaller", NTA_TBAD_SMALLER, NTA_FREE_WRONG_SIZE },
	{ "size_larger", NTA_TBAD_LARGER, NTA_FREE_WRONG_SIZE },
	{ "size_zero", NTA_TBAD_ZERO, NTA_FREE_WRONG_SIZE },
	{ "size_huge", NTA_TBAD_HUGE, NTA_FREE_WRONG_SIZE },
	{ "misaligned", NTA_TBAD_MISALIGNED, NTA_FREE_MISALIGNED },
	{ "inside_object", NTA_TBAD_INSIDE, NTA_FREE_NOT_ALLOCATED },
	{ "block_header", NTA_TBAD_HEADER, NTA_FREE_MISALIGNED },
	{ "header_unit", NTA_TBAD_HEADER_UNIT, NTA_FREE_MISALIGNED },
	{ "pending_local", NTA_TBAD_PENDING, NTA_FREE_PENDING },
	{ "pending_remote", NTA_TBAD_PENDING_REMOTE, NTA_FREE_PENDING },
	{ "remote_wrong_size", NTA_TBAD_REMOTE_SIZE, NTA_FREE_WRONG_SIZE },
};

static void nta_tbad_desc(const struct nta_tbad *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(nta_tbad, nta_tbad_cases, nta_tbad_desc);

static void nta_core_bad_free(struct kunit *test)
{
	const struct nta_tbad *t = test->param_value;
	/* Reserve = blocks, so the fill pass cannot release a block. */
	struct nta_pool *pool = nta_tpool(test, 2, 2);
	struct nta_tsnap *before = nta_tsnap_alloc(test);
	unsigned int size = 3 * NTA_UNIT;
	struct nta_block *blk;
	void *a, *b, *c, *ptr;
	unsigned int queued;

	a = nta_pool_alloc(pool, 2 * NTA_UNIT);
	b = nta_pool_alloc(pool, size);
	c = nta_pool_alloc(pool, NTA_UNIT);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_NOT_NULL(test, c);
	blk = nta_block_of(b);
	nta_tfree(pool, a, 2 * NTA_UNIT);

	ptr = b;
	switch (t->kind) {
	case NTA_TBAD_DOUBLE:
		ptr = a;
		size = 2 * NTA_UNIT;
		break;
	case NTA_TBAD_NEVER:
		ptr = c + 5 * NTA_UNIT;
		size = NTA_UNIT;
		break;
	case NTA_TBAD_SMALLER:
		size = 2 * NTA_UNIT;
		break;
	case NTA_TBAD_LARGER:
		size = 3 * NTA_UNIT + 1;
		break;
	case NTA_TBAD_ZERO:
		size = 0;
		break;
	case NTA_TBAD_HUGE:
		size = NTA_BLOCK_SIZE + 3 * NTA_UNIT;
		break;
	case NTA_TBAD_MISALIGNED:
		ptr = b + 8;
		break;
	case NTA_TBAD_INSIDE:
		ptr = b + NTA_UNIT;
		break;
	case NTA_TBAD_HEADER:
		ptr = blk;
		break;
	case NTA_TBAD_HEADER_UNIT:
		ptr = nta_tunit_addr(blk, NTA_HDR_UNITS - 1);
		break;
	case NTA_TBAD_PENDING:
	case NTA_TBAD_PENDING_REMOTE:
		KUNIT_ASSERT_EQ(test, nta_remote_free(pool, b, size, &queued),
				NTA_FREE_OK);
		break;
	case NTA_TBAD_REMOTE_SIZE:
		break;
	}

	nta_tsnap_take(pool, before);
	NTA_EXPECT_POOL_OK(test, pool);
	if (t->kind != NTA_TBAD_REMOTE_SIZE)
		KUNIT_EXPECT_EQ(test, nta_check_free(blk, ptr, size), t->why);
	if (t->kind == NTA_TBAD_PENDING_REMOTE) {
		/* A second remote free must not link the object twice. */
		KUNIT_EXPECT_EQ(test, nta_remote_free(pool, b, size, &queued),
				NTA_FREE_PENDING);
		KUNIT_EXPECT_EQ(test, queued, 0);
	}
	if (t->kind == NTA_TBAD_REMOTE_SIZE) {
		LIST_HEAD(released);

		/*
		 * Another CPU reads the length byte before it writes
		 * anything: refused at once, nothing queued or written.
		 */
		KUNIT_EXPECT_EQ(test, nta_remote_free(pool, b, NTA_UNIT, &queued),
				NTA_FREE_WRONG_SIZE);
		KUNIT_EXPECT_EQ(test, queued, 0);
		KUNIT_EXPECT_EQ(test, nta_pool_drain(pool, &released), 0);
		KUNIT_EXPECT_TRUE(test, list_empty(&released));
		KUNIT_EXPECT_EQ(test, atomic_read(&pool->remote_blocks), 0);
	}
	nta_tpool_expect_intact(test, pool, before);

	if (t->kind == NTA_TBAD_PENDING || t->kind == NTA_TBAD_PENDING_REMOTE) {
		LIST_HEAD(released);

		KUNIT_EXPECT_EQ(test, nta_pool_drain(pool, &released), 1);
	} else {
		KUNIT_EXPECT_EQ(test, nta_check_free(blk, b, 3 * NTA_UNIT),
				NTA_FREE_OK);
		nta_tfree(pool, b, 3 * NTA_UNIT);
	}
	nta_tfree(pool, c, NTA_UNIT);
	KUNIT_EXPECT_EQ(test, pool->free_units, 2 * NTA_DATA_UNITS);
	NTA_EXPECT_POOL_OK(test, pool);
}

/* CONFIG_NTA_DEBUG: free chunks are poisoned and checked on allocation. */
static void nta_core_poison(struct kunit *test)
{
	struct nta_pool *pool;
	void *p, *guard, *q;
	int reports;

	if (!IS_ENABLED(CONFIG_NTA_DEBUG))
		kunit_skip(test, "CONFIG_NTA_DEBUG is off");
	pool = nta_tpool(test, 1, 1);
	p = nta_pool_alloc(pool, 4 * NTA_UNIT);
	guard = nta_pool_alloc(pool, NTA_UNIT);
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_ASSERT_NOT_NULL(test, guard);
	memset(p, 0x11, 4 * NTA_UNIT);
	nta_tfree(pool, p, 4 * NTA_UNIT);
	/* The free list link lives in the first bytes; the rest is poison. */
	kasan_disable_current();
	KUNIT_EXPECT_NULL(test, memchr_inv(p + 16, POISON_FREE,
					   4 * NTA_UNIT - 16));
	kasan_enable_current();

	/* A clean reuse reports nothing. */
	reports = atomic_read(&nta_poison_reports);
	q = nta_pool_alloc(pool, 4 * NTA_UNIT);
	KUNIT_EXPECT_PTR_EQ(test, q, p);
	KUNIT_EXPECT_EQ(test, atomic_read(&nta_poison_reports), reports);
	nta_tfree(pool, q, 4 * NTA_UNIT);

	/* A write after free is reported when the chunk is handed out. */
	kasan_disable_current();
	((u8 *)p)[3 * NTA_UNIT + 5] = 0x42;
	kasan_enable_current();
	q = nta_pool_alloc(pool, 4 * NTA_UNIT);
	KUNIT_EXPECT_PTR_EQ(test, q, p);
	KUNIT_EXPECT_EQ(test, atomic_read(&nta_poison_reports), reports + 1);
	nta_tfree(pool, q, 4 * NTA_UNIT);
	nta_tfree(pool, guard, NTA_UNIT);
	NTA_EXPECT_POOL_OK(test, pool);
}

/*
 * Aim @chunk's links at @next and @prev, as an overflow would; encoded, as
 * if the writer knew the secret (a plain pointer decodes to garbage, and
 * following that faults before any check could refuse it).
 */
static void nta_tplant_links(struct nta_chunk *chunk, const void *next,
			     const void *prev)
{
	kasan_disable_current();
	nta_link_set(&chunk->next, next);
	nta_link_set(&chunk->prev, prev);
	kasan_enable_current();
}

static void nta_trestore_links(struct nta_chunk *chunk,
			       const struct nta_chunk *saved)
{
	kasan_disable_current();
	*chunk = *saved;
	kasan_enable_current();
}

/* A pool of one block: @a (2 units), @guard (1), @b (3), the free tail. */
static struct nta_pool *nta_tlinks_pool(struct kunit *test, void **a,
					void **guard, void **b)
{
	struct nta_pool *pool = nta_tpool(test, 1, 1);

	*a = nta_pool_alloc(pool, 2 * NTA_UNIT);
	*guard = nta_pool_alloc(pool, NTA_UNIT);
	*b = nta_pool_alloc(pool, 3 * NTA_UNIT);
	KUNIT_ASSERT_NOT_NULL(test, *a);
	KUNIT_ASSERT_NOT_NULL(test, *guard);
	KUNIT_ASSERT_NOT_NULL(test, *b);
	return pool;
}

/*
 * After links were refused: quarantined, the pool hands out nothing and
 * a free into it writes through no link; its check says so.
 */
static void nta_texpect_quarantined(struct kunit *test, struct nta_pool *pool,
				    void *live, unsigned int size,
				    const unsigned long *victim)
{
	LIST_HEAD(released);
	char msg[64];

	KUNIT_EXPECT_TRUE(test, pool->broken);
	KUNIT_EXPECT_NULL(test, nta_pool_alloc(pool, NTA_UNIT));
	KUNIT_EXPECT_NULL(test, nta_pool_alloc(pool, NTA_MAX_SIZE));
	if (live) {
		KUNIT_EXPECT_EQ(test, nta_pool_free_checked(pool, live, size,
							    &released),
				NTA_FREE_OK);
		/* Dead, so a second free is refused. */
		KUNIT_EXPECT_EQ(test, nta_check_free(nta_block_of(live), live,
						     size),
				NTA_FREE_NOT_ALLOCATED);
	}
	KUNIT_EXPECT_EQ(test, victim[0] | victim[1], 0);
	KUNIT_EXPECT_EQ(test, nta_pool_check(pool, msg, sizeof(msg)), 1);
	KUNIT_EXPECT_STREQ(test, msg,
			   "quarantined: free-list links were overwritten");
	KUNIT_EXPECT_EQ(test, nta_pool_trim(pool, &released, UINT_MAX), 0);
	KUNIT_EXPECT_TRUE(test, list_empty(&released));
}

/*
 * Free-list links in free memory: encoded with CONFIG_SLAB_FREELIST_HARDENED,
 * and links that an overflow rewrote are refused where they would be
 * written through: taking a chunk off its list (allocation), merging with
 * it (a neighbour freed) and putting a chunk in front of it (a free).
 * Each is reported, neither the planted target nor the pool changes, and
 * the pool is quarantined.
 */
static void nta_core_links_hardened(struct kunit *test)
{
	struct nta_tsnap *before = nta_tsnap_alloc(test);
	unsigned long victim[2] = { 0, 0 }, plain;
	struct nta_tsnap *now = nta_tsnap_alloc(test);
	struct nta_chunk *chunk, saved;
	struct nta_pool *pool;
	void *a, *guard, *b, *c;
	int reports;

	if (!nta_links_checked())
		kunit_skip(test, "CONFIG_LIST_HARDENED and CONFIG_SLAB_FREELIST_HARDENED are off");
	/* @a freed: between the header and @guard, alone on the list of 2. */
	pool = nta_tlinks_pool(test, &a, &guard, &b);
	nta_tfree(pool, a, 2 * NTA_UNIT);
	chunk = a;
	KUNIT_ASSERT_PTR_EQ(test, nta_chunk_next(&pool->free[2]), chunk);
	KUNIT_ASSERT_PTR_EQ(test, nta_chunk_prev(&pool->free[2]), chunk);
	KUNIT_EXPECT_TRUE(test, nta_chunk_linked(pool, chunk));
	kasan_disable_current();
	saved = *chunk;
	kasan_enable_current();
	if (IS_ENABLED(CONFIG_SLAB_FREELIST_HARDENED)) {
		KUNIT_EXPECT_NE(test, saved.next, (unsigned long)&pool->free[2]);
		KUNIT_EXPECT_NE(test, saved.prev, (unsigned long)&pool->free[2]);
		KUNIT_EXPECT_NE(test, saved.next, saved.prev);
		/* A plain pointer written as a link does not decode to itself. */
		plain = (unsigned long)victim;
		KUNIT_EXPECT_PTR_NE(test, nta_link_get(&plain),
				    (struct nta_chunk *)victim);
	} else {
		KUNIT_EXPECT_EQ(test, saved.next, (unsigned long)&pool->free[2]);
		KUNIT_EXPECT_EQ(test, saved.prev, (unsigned long)&pool->free[2]);
	}
	nta_tsnap_take(pool, before);

	/* Allocation: links aimed at @victim, the chunk refused. */
	nta_tplant_links(chunk, victim, &pool->free[2]);
	reports = atomic_read(&nta_poison_reports);
	KUNIT_EXPECT_NULL(test, nta_pool_alloc(pool, 2 * NTA_UNIT));
	KUNIT_EXPECT_EQ(test, atomic_read(&nta_poison_reports), reports + 1);
	KUNIT_EXPECT_PTR_EQ(test, nta_chunk_next(chunk),
			    (struct nta_chunk *)victim);
	nta_trestore_links(chunk, &saved);
	nta_tsnap_take(pool, now);
	NTA_EXPECT_SNAP_EQ(test, before, now);
	nta_texpect_quarantined(test, pool, b, 3 * NTA_UNIT, victim);

	/* Merge: @guard freed next to the chunk, the merge refused. */
	pool = nta_tlinks_pool(test, &a, &guard, &b);
	nta_tfree(pool, a, 2 * NTA_UNIT);
	chunk = a;
	nta_tplant_links(chunk, &pool->free[2], victim);
	reports = atomic_read(&nta_poison_reports);
	nta_tfree(pool, guard, NTA_UNIT);
	KUNIT_EXPECT_EQ(test, atomic_read(&nta_poison_reports), reports + 1);
	KUNIT_EXPECT_PTR_EQ(test, nta_chunk_prev(chunk),
			    (struct nta_chunk *)victim);
	KUNIT_EXPECT_TRUE(test, nta_flist_empty(&pool->free[1]));
	nta_texpect_quarantined(test, pool, b, 3 * NTA_UNIT, victim);

	/* Insertion: @a heads the list of 2 with a bad back link; @c freed. */
	pool = nta_tlinks_pool(test, &a, &guard, &b);
	c = nta_pool_alloc(pool, 2 * NTA_UNIT);
	KUNIT_ASSERT_NOT_NULL(test, c);
	KUNIT_ASSERT_NOT_NULL(test, nta_pool_alloc(pool, NTA_UNIT));
	nta_tfree(pool, a, 2 * NTA_UNIT);
	chunk = a;
	nta_tplant_links(chunk, &pool->free[2], victim);
	reports = atomic_read(&nta_poison_reports);
	nta_tfree(pool, c, 2 * NTA_UNIT);
	KUNIT_EXPECT_EQ(test, atomic_read(&nta_poison_reports), reports + 1);
	KUNIT_EXPECT_PTR_EQ(test, nta_chunk_next(&pool->free[2]), chunk);
	nta_texpect_quarantined(test, pool, b, 3 * NTA_UNIT, victim);
}

static struct kunit_case nta_core_cases[] = {
	KUNIT_CASE_PARAM(nta_core_split_merge, nta_tmerge_gen_params),
	KUNIT_CASE(nta_core_one_unit_remainder),
	KUNIT_CASE(nta_core_best_fit),
	KUNIT_CASE_PARAM(nta_core_bitmap_edges, nta_tedge_gen_params),
	KUNIT_CASE_PARAM(nta_core_fill_free_random, nta_tfill_gen_params),
	KUNIT_CASE(nta_core_release_above_reserve),
	KUNIT_CASE(nta_core_remote_queue),
	KUNIT_CASE_PARAM(nta_core_bad_free, nta_tbad_gen_params),
	KUNIT_CASE(nta_core_poison),
	KUNIT_CASE(nta_core_links_hardened),
	{}
};

static struct kunit_suite nta_core_suite = {
	.name = "nta_core",
	.suite_init = nta_tsuite_init,
	.suite_exit = nta_tsuite_exit,
	.test_cases = nta_core_cases,
};

kunit_test_suite(nta_core_suite);

MODULE_DESCRIPTION("KUnit tests of the network tree allocator core");
MODULE_LICENSE("GPL");
