// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit tests for the network tree allocator.
 *
 * Suite nta_core drives nta_core.c on private pools built from blocks the
 * tests allocate themselves, so every split, merge and refusal is
 * deterministic and is compared with a full snapshot of the pool (bitmaps,
 * free lists, remote list, counts) and with an allocate-everything pass.
 * Suite nta drives the per-CPU glue in nta.c through nta_alloc() and
 * nta_free() and checks deltas of nta_get_stats(): remote frees from a
 * kthread bound to another CPU, the kick of an idle owner, CPU hotplug,
 * growth, return and the cap.  Suite nta_skb follows skb heads through the
 * skb paths that allocate, share or free them and checks skb->__tsize,
 * truesize and that every head goes back to where it came from.
 *
 * The nta and nta_skb suites compare exact counters, so they expect a quiet
 * system (no traffic), as at boot.  Run everything with:
 *
 *   ./tools/testing/kunit/kunit.py run --kunitconfig=net/core/alloc \
 *	--arch=x86_64 --qemu_args='-smp 2'
 *
 * Without a second CPU the remote, kick and hotplug cases are skipped.
 */

#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/kasan.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/nta.h>
#include <linux/poison.h>
#include <linux/prandom.h>
#include <linux/sched.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/vmalloc.h>

#include <net/hotdata.h>

#include "nta_internal.h"

/* Private pools are owned by no CPU; this id shows up in poison reports. */
#define NTA_TEST_POOL_ID	999

#define NTA_TSNAP_BLOCKS	128
#define NTA_TSNAP_CHUNKS	4096
#define NTA_TSNAP_REMOTE	256

KUNIT_DEFINE_ACTION_WRAPPER(nta_tvfree, vfree, const void *);

/* ---------------------------------------------------------------------- */
/* Pool snapshots and invariants                                          */

struct nta_tsnap_block {
	const struct nta_block *blk;
	unsigned long free_units;
	unsigned long used[NTA_BITMAP_LONGS];
	unsigned long start[NTA_BITMAP_LONGS];
	unsigned long pending[NTA_BITMAP_LONGS];
	u8 cls[NTA_BLOCK_UNITS];
};

struct nta_tsnap_chunk {
	unsigned long addr;
	unsigned long units;
};

/* Everything that describes a pool; zeroed first so memcmp() works. */
struct nta_tsnap {
	unsigned long nonempty[BITS_TO_LONGS(NTA_NR_LISTS)];
	unsigned long free_units;
	unsigned int nr_blocks;
	unsigned int reserve;
	int remote_count;
	unsigned int nr_remote;
	unsigned int nr_chunks;
	unsigned int nr_snap_blocks;
	bool overflow;
	struct nta_tsnap_block block[NTA_TSNAP_BLOCKS];
	struct nta_tsnap_chunk chunk[NTA_TSNAP_CHUNKS];
	unsigned long remote[NTA_TSNAP_REMOTE];
};

static struct nta_tsnap *nta_tsnap_alloc(struct kunit *test)
{
	struct nta_tsnap *s = vzalloc(sizeof(*s));

	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, nta_tvfree, s), 0);
	return s;
}

/*
 * Copy @pool into @s.  Callable with interrupts off (no allocation, no
 * KUnit call), so per-CPU pools can be copied under their local lock.
 */
static void nta_tsnap_take(const struct nta_pool *pool, struct nta_tsnap *s)
{
	const struct nta_block *blk;
	struct llist_node *node;
	const struct nta_chunk *pos;
	unsigned int len;

	memset(s, 0, sizeof(*s));
	bitmap_copy(s->nonempty, pool->nonempty, NTA_NR_LISTS);
	s->free_units = pool->free_units;
	s->nr_blocks = pool->nr_blocks;
	s->reserve = pool->reserve;
	s->remote_count = atomic_read(&pool->remote_blocks);

	list_for_each_entry(blk, &pool->blocks, link) {
		struct nta_tsnap_block *b = &s->block[s->nr_snap_blocks];

		if (s->nr_snap_blocks == NTA_TSNAP_BLOCKS) {
			s->overflow = true;
			break;
		}
		b->blk = blk;
		b->free_units = blk->free_units;
		bitmap_copy(b->used, blk->used, NTA_BLOCK_UNITS);
		bitmap_copy(b->start, blk->start, NTA_BLOCK_UNITS);
		bitmap_copy(b->pending, blk->pending, NTA_BLOCK_UNITS);
		memcpy(b->cls, blk->cls, sizeof(b->cls));
		s->nr_snap_blocks++;
	}

	for (len = 1; len < NTA_NR_LISTS; len++) {
		const struct nta_chunk *head = &pool->free[len];

		for (pos = nta_chunk_next(head); pos != head;
		     pos = nta_chunk_next(pos)) {
			if (s->nr_chunks == NTA_TSNAP_CHUNKS) {
				s->overflow = true;
				break;
			}
			s->chunk[s->nr_chunks].addr = (unsigned long)pos;
			s->chunk[s->nr_chunks].units = len;
			s->nr_chunks++;
		}
	}

	for (node = READ_ONCE(pool->remote.first); node; node = node->next) {
		if (s->nr_remote == NTA_TSNAP_REMOTE) {
			s->overflow = true;
			break;
		}
		s->remote[s->nr_remote++] = (unsigned long)node;
	}
}

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

/* Describe the first difference between two snapshots, or return NULL. */
static const char *nta_tsnap_diff(const struct nta_tsnap *a,
				  const struct nta_tsnap *b,
				  char *buf, size_t len)
{
	unsigned int i;

	if (a->overflow || b->overflow)
		return "snapshot overflow: pool too big to compare";
	if (!bitmap_equal(a->nonempty, b->nonempty, NTA_NR_LISTS))
		return "non-empty list bitmap differs";
	if (a->free_units != b->free_units) {
		snprintf(buf, len, "free_units %lu -> %lu", a->free_units,
			 b->free_units);
		return buf;
	}
	if (a->nr_blocks != b->nr_blocks || a->reserve != b->reserve)
		return "block count or reserve differs";
	if (a->remote_count != b->remote_count || a->nr_remote != b->nr_remote)
		return "remote list length differs";
	for (i = 0; i < a->nr_remote; i++)
		if (a->remote[i] != b->remote[i])
			return "remote list differs";
	for (i = 0; i < a->nr_snap_blocks; i++) {
		const struct nta_tsnap_block *x = &a->block[i], *y = &b->block[i];

		if (x->blk != y->blk || x->free_units != y->free_units) {
			snprintf(buf, len, "block %u (%p) header differs", i, x->blk);
			return buf;
		}
		if (!bitmap_equal(x->used, y->used, NTA_BLOCK_UNITS) ||
		    !bitmap_equal(x->start, y->start, NTA_BLOCK_UNITS) ||
		    !bitmap_equal(x->pending, y->pending, NTA_BLOCK_UNITS) ||
		    memcmp(x->cls, y->cls, sizeof(x->cls))) {
			snprintf(buf, len, "block %u (%p) bitmaps differ", i, x->blk);
			return buf;
		}
	}
	if (a->nr_chunks != b->nr_chunks) {
		snprintf(buf, len, "%u free chunks -> %u", a->nr_chunks,
			 b->nr_chunks);
		return buf;
	}
	for (i = 0; i < a->nr_chunks; i++) {
		if (a->chunk[i].addr != b->chunk[i].addr ||
		    a->chunk[i].units != b->chunk[i].units) {
			snprintf(buf, len, "free chunk %u: %lx/%lu -> %lx/%lu", i,
				 a->chunk[i].addr, a->chunk[i].units,
				 b->chunk[i].addr, b->chunk[i].units);
			return buf;
		}
	}
	return NULL;
}

#define NTA_EXPECT_SNAP_EQ(test, a, b)					\
	do {								\
		char __buf[96];						\
		const char *__d = nta_tsnap_diff(a, b, __buf, sizeof(__buf)); \
									\
		KUNIT_EXPECT_TRUE_MSG(test, !__d, "pool changed: %s", __d); \
	} while (0)

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

static unsigned int nta_tunit(const void *ptr)
{
	return ((unsigned long)ptr & (NTA_BLOCK_SIZE - 1)) >> NTA_UNIT_SHIFT;
}

static void *nta_tunit_addr(const void *blk, unsigned int unit)
{
	return (void *)blk + unit * NTA_UNIT;
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

/* ---------------------------------------------------------------------- */
/* Per-CPU glue helpers                                                   */

/* Run on @cpu only from now on; return it (the current CPU if < 0). */
static unsigned int nta_tpin(struct kunit *test, int cpu)
{
	if (cpu < 0)
		cpu = raw_smp_processor_id();
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(cpu)), 0);
	KUNIT_ASSERT_EQ(test, raw_smp_processor_id(), cpu);
	return cpu;
}

static struct nta_cpu *nta_tcpu(unsigned int cpu)
{
	return per_cpu_ptr(&nta_cpu, cpu);
}

/* Units a CPU can hand out without growing: its free lists and bins. */
static unsigned long nta_tfree_units(unsigned int cpu)
{
	return READ_ONCE(nta_tcpu(cpu)->pool.free_units) +
	       READ_ONCE(nta_tcpu(cpu)->bin_units);
}

/* Another online CPU than @cpu, or -1. */
static int nta_tother_cpu(unsigned int cpu)
{
	unsigned int other = cpumask_any_but(cpu_online_mask, cpu);

	return other < nr_cpu_ids ? other : -1;
}

static void nta_trestore_batching(void *data)
{
	WRITE_ONCE(nta_remote_batching, !!data);
}

/*
 * Remote frees set pending bits for the rest of the test, instead of
 * going into batches; what batches held before is freed first.
 */
static void nta_tpending_path(struct kunit *test)
{
	void *was = (void *)(unsigned long)READ_ONCE(nta_remote_batching);

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, nta_trestore_batching,
							was), 0);
	WRITE_ONCE(nta_remote_batching, false);
	nta_drain_all();
}

/*
 * Pin the test to its CPU, the owner of what it allocates, and set *@other
 * to another online CPU; skip the test when there is none.  The tests that
 * use it are of the pending-bit path (nta_tpending_path()).
 */
static unsigned int nta_tpin_two(struct kunit *test, int *other)
{
	unsigned int owner = nta_tpin(test, -1);

	*other = nta_tother_cpu(owner);
	if (*other < 0)
		kunit_skip(test, "needs two online CPUs");
	nta_tpending_path(test);
	return owner;
}

static void nta_tstats(struct nta_stats *st)
{
	nta_get_stats(st, -1);
}

/* How far a counter moved from @a to @b; every field is 64 bits wide. */
static s64 nta_tdelta(const struct nta_stats *a, const struct nta_stats *b,
		      size_t offset)
{
	return *(const s64 *)((const void *)b + offset) -
	       *(const s64 *)((const void *)a + offset);
}

#define NTA_D(a, b, field) nta_tdelta(a, b, offsetof(struct nta_stats, field))

/* @after equals @before but for bad_frees, which moved by @bad. */
static void nta_texpect_stats_bad(struct kunit *test,
				  const struct nta_stats *before,
				  const struct nta_stats *after, u64 bad)
{
	struct nta_stats want = *before;

	want.bad_frees += bad;
	KUNIT_EXPECT_EQ(test, after->bad_frees, want.bad_frees);
	KUNIT_EXPECT_MEMEQ(test, after, &want, sizeof(want));
}

/* Copy this CPU's pool (the caller is pinned) under its lock. */
static void nta_tsnap_this_cpu(struct kunit *test, struct nta_tsnap *s)
{
	unsigned long flags;
	unsigned int errs;
	char msg[96] = "";

	local_lock_irqsave(&nta_cpu.lock, flags);
	nta_tsnap_take(&this_cpu_ptr(&nta_cpu)->pool, s);
	errs = nta_pool_check(&this_cpu_ptr(&nta_cpu)->pool, msg, sizeof(msg));
	local_unlock_irqrestore(&nta_cpu.lock, flags);
	KUNIT_EXPECT_EQ_MSG(test, errs, 0, "%s", msg);
	KUNIT_EXPECT_FALSE(test, s->overflow);
}

/*
 * Allocate one unit at a time from this CPU's pool with growth forbidden
 * until nta_alloc() says no, then free it all: return the count.
 */
static unsigned long nta_tcpu_fill_count(struct kunit *test)
{
	unsigned int saved = READ_ONCE(nta_max_blocks);
	unsigned long n = 0, cap;
	void **objs;
	void *p;

	cap = READ_ONCE(nta_tcpu(raw_smp_processor_id())->pool.free_units) + 1;
	objs = kvcalloc(cap, sizeof(*objs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	WRITE_ONCE(nta_max_blocks, 0);
	while (n < cap && (p = nta_alloc(1, GFP_KERNEL)))
		objs[n++] = p;
	WRITE_ONCE(nta_max_blocks, saved);
	cap = n;
	while (n--)
		nta_free(objs[n], 1);
	kvfree(objs);
	return cap;
}

struct nta_tcall {
	void (*fn)(void *arg);
	void *arg;
	struct completion done;
};

static int nta_tcall_thread(void *data)
{
	struct nta_tcall *call = data;

	call->fn(call->arg);
	complete(&call->done);
	return 0;
}

/*
 * Run @fn(@arg) in a kthread bound to @cpu and wait for it.  With @busy
 * the caller spins meanwhile instead of sleeping, so that its CPU does not
 * look idle: a remote free kicks an idle owner at once.
 */
static void nta_run_on(struct kunit *test, unsigned int cpu,
		       void (*fn)(void *arg), void *arg, bool busy)
{
	struct nta_tcall call = { .fn = fn, .arg = arg };
	struct task_struct *t;

	init_completion(&call.done);
	t = kthread_create_on_cpu(nta_tcall_thread, &call, cpu, "nta_kunit/%u");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wake_up_process(t);
	while (busy && !completion_done(&call.done))
		cpu_relax();
	wait_for_completion(&call.done);
}

struct nta_tobjs {
	void **obj;
	unsigned int size;
	unsigned int from, to;
	unsigned int cpu;	/* where the frees ran */
	int wait_idle;		/* CPU to wait for to go idle first, or -1 */
	bool was_idle;
};

static void nta_tfree_range(void *arg)
{
	struct nta_tobjs *o = arg;
	unsigned int i, us;

	if (o->wait_idle >= 0) {
		for (us = 0; us < USEC_PER_SEC && !idle_cpu(o->wait_idle); us += 10)
			usleep_range(10, 20);
		o->was_idle = idle_cpu(o->wait_idle);
	}
	for (i = o->from; i < o->to; i++)
		nta_free(o->obj[i], o->size);
	o->cpu = raw_smp_processor_id();
}

/* Free objects [@from, @to) on @cpu; @busy as for nta_run_on(). */
static void nta_tfree_on(struct kunit *test, unsigned int cpu,
			 struct nta_tobjs *o, unsigned int from,
			 unsigned int to, bool busy)
{
	o->from = from;
	o->to = to;
	o->wait_idle = -1;
	nta_run_on(test, cpu, nta_tfree_range, o, busy);
	KUNIT_EXPECT_EQ(test, o->cpu, cpu);
}

static struct nta_tobjs *nta_talloc_objs(struct kunit *test, unsigned int n,
					 unsigned int size)
{
	struct nta_tobjs *o = kunit_kzalloc(test, sizeof(*o), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, o);
	o->obj = kunit_kcalloc(test, n, sizeof(*o->obj), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, o->obj);
	o->size = size;
	for (i = 0; i < n; i++) {
		o->obj[i] = nta_alloc(size, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, o->obj[i]);
	}
	return o;
}

/* How many blocks objects @from..@to - 1 of @o lie in. */
static unsigned int nta_tnr_blocks(const struct nta_tobjs *o,
				   unsigned int from, unsigned int to)
{
	unsigned int i, j, n = 0;

	for (i = from; i < to; i++) {
		for (j = from; j < i; j++)
			if (nta_block_of(o->obj[j]) == nta_block_of(o->obj[i]))
				break;
		n += j == i;
	}
	return n;
}

static int nta_tremote_blocks(unsigned int cpu)
{
	return atomic_read(&nta_tcpu(cpu)->pool.remote_blocks);
}

static bool nta_tremote_empty(unsigned int cpu)
{
	return llist_empty(&nta_tcpu(cpu)->pool.remote);
}

static void nta_tneed_ready(struct kunit *test)
{
	if (!READ_ONCE(nta_ready))
		kunit_skip(test, "NTA is not initialised");
}

/* ---------------------------------------------------------------------- */
/* nta: the per-CPU allocator                                             */

/*
 * Booted with nta_fail_init=map|dead|online (make check boots one with
 * "online": the last CPU's online callback fails after the others took
 * their reserves, which the block allocation count shows): initialisation
 * was undone.  No block map, no block in any CPU's pool, NTA off for good
 * (the switch says -ENODEV), and skb heads come from kmalloc.  The boot's guest test checks that no
 * "net/nta" hotplug state is left registered.
 */
static void nta_init_unwind(struct kunit *test)
{
	struct sk_buff *skb;
	unsigned int cpu;

	if (!nta_fail_init)
		kunit_skip(test, "boot with nta_fail_init=map|dead|online to run");
	KUNIT_EXPECT_FALSE(test, READ_ONCE(nta_ready));
	KUNIT_EXPECT_FALSE(test, nta_enabled());
	KUNIT_EXPECT_EQ(test, READ_ONCE(nta_block_map_bits), 0);
	/* Not vacuous: the CPUs that came online first took their reserves. */
	if (nta_fail_init == NTA_INIT_ONLINE && num_online_cpus() > 1)
		KUNIT_EXPECT_GT(test, READ_ONCE(nta_tgrow.calls), 0);
	for_each_possible_cpu(cpu) {
		const struct nta_pool *pool = &nta_tcpu(cpu)->pool;

		KUNIT_EXPECT_EQ_MSG(test, pool->nr_blocks, 0, "CPU %u", cpu);
		KUNIT_EXPECT_EQ_MSG(test, pool->free_units, 0, "CPU %u", cpu);
		KUNIT_EXPECT_TRUE_MSG(test, list_empty(&pool->blocks), "CPU %u",
				      cpu);
	}
	skb = alloc_skb(256, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_EXPECT_FALSE(test, nta_owns(skb->head));
	KUNIT_EXPECT_EQ(test, skb->__tsize, 0);
	kfree_skb(skb);
}

struct nta_tsize {
	const char *name;
	unsigned int size;
	bool ok;
};

static const struct nta_tsize nta_tsizes[] = {
	{ "zero", 0, false },
	{ "one", 1, true },
	{ "unit-1", NTA_UNIT - 1, true },
	{ "unit", NTA_UNIT, true },
	{ "unit+1", NTA_UNIT + 1, true },
	{ "head_0", SKB_HEAD_ALIGN(0), true },
	{ "head_128", SKB_HEAD_ALIGN(128), true },
	{ "head_1500", SKB_HEAD_ALIGN(1500 + 64), true },
	{ "head_4096", SKB_HEAD_ALIGN(4096), true },
	{ "head_9000", SKB_HEAD_ALIGN(9000 + 64), true },
	{ "max-1", NTA_MAX_SIZE - 1, true },
	{ "max", NTA_MAX_SIZE, true },
	{ "max+1", NTA_MAX_SIZE + 1, false },
	{ "block", NTA_BLOCK_SIZE, false },
	{ "block+1", NTA_BLOCK_SIZE + 1, false },
	{ "uint_max", UINT_MAX, false },
};

static void nta_tsize_desc(const struct nta_tsize *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(nta_tsize, nta_tsizes, nta_tsize_desc);

/* The object size of skb_small_head_cache, which skb_init() tells NTA. */
static unsigned int nta_tsmall(void)
{
	return kmem_cache_size(net_hotdata.skb_small_head_cache);
}

/* What the mainline skb head path would hold for a request of @size. */
static unsigned int nta_tmainline_size(unsigned int size)
{
	return size <= nta_tsmall() ? nta_tsmall() : kmalloc_size_roundup(size);
}

static void nta_alloc_sizes(struct kunit *test)
{
	const struct nta_tsize *t = test->param_value;
	unsigned int size = t->size, rsize = round_up(size, NTA_UNIT);
	struct nta_stats s0, s1, s2;
	u8 *p;

	nta_tneed_ready(test);
	nta_tpin(test, -1);
	KUNIT_EXPECT_EQ(test, nta_max_size(), NTA_MAX_SIZE);
	KUNIT_EXPECT_EQ(test, nta_alloc_size(size), t->ok ? rsize : 0);

	nta_tstats(&s0);
	p = nta_alloc(size, GFP_KERNEL);
	nta_tstats(&s1);
	if (!t->ok) {
		KUNIT_EXPECT_NULL(test, p);
		KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, allocs), 0);
		KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, inuse_objects), 0);
		return;
	}
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_EXPECT_EQ(test, nta_object_size(size), rsize);
	KUNIT_EXPECT_TRUE(test, IS_ALIGNED((unsigned long)p, NTA_UNIT));
	KUNIT_EXPECT_TRUE(test, nta_owns(p));
	KUNIT_EXPECT_TRUE(test, nta_owns(p + size - 1));
	KUNIT_EXPECT_PTR_EQ(test, nta_block_of(p), nta_block_of(p + size - 1));
	KUNIT_EXPECT_EQ(test, nta_object_units(nta_block_of(p), nta_tunit(p)),
			rsize / NTA_UNIT);
	KUNIT_EXPECT_PTR_EQ(test, nta_block_of(p)->pool,
			    &nta_tcpu(raw_smp_processor_id())->pool);
	memset(p, 0xa5, size);

	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, allocs), 1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, failures), 0);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, inuse_objects), 1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, requested_bytes), size);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, reserved_bytes), rsize);
	if (IS_ENABLED(CONFIG_NTA_STATS))
		KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, kmalloc_bytes),
				nta_tmainline_size(size));

	nta_free(p, size);
	nta_tstats(&s2);
	KUNIT_EXPECT_EQ(test, NTA_D(&s1, &s2, frees), 1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s1, &s2, bad_frees), 0);
	KUNIT_EXPECT_EQ(test, s2.inuse_objects, s0.inuse_objects);
	KUNIT_EXPECT_EQ(test, s2.requested_bytes, s0.requested_bytes);
	KUNIT_EXPECT_EQ(test, s2.reserved_bytes, s0.reserved_bytes);
	KUNIT_EXPECT_EQ(test, s2.kmalloc_bytes, s0.kmalloc_bytes);
	KUNIT_EXPECT_EQ(test, s2.free_bytes, s0.free_bytes);
}

/* Neighbouring objects never overlap, whatever the sizes. */
static void nta_alloc_no_overlap(struct kunit *test)
{
	unsigned int n = 300, i, *sizes;
	struct nta_stats s0, s1;
	struct rnd_state rnd;
	u8 **objs;

	nta_tneed_ready(test);
	nta_tpin(test, -1);
	objs = kunit_kcalloc(test, n, sizeof(*objs), GFP_KERNEL);
	sizes = kunit_kcalloc(test, n, sizeof(*sizes), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	KUNIT_ASSERT_NOT_NULL(test, sizes);
	prandom_seed_state(&rnd, 6);
	nta_tstats(&s0);
	for (i = 0; i < n; i++) {
		sizes[i] = 1 + prandom_u32_state(&rnd) % 3000;
		objs[i] = nta_alloc(sizes[i], GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, objs[i]);
		memset(objs[i], i & 0xff, sizes[i]);
	}
	for (i = 0; i < n; i++) {
		KUNIT_EXPECT_NULL_MSG(test, memchr_inv(objs[i], i & 0xff, sizes[i]),
				      "object %u of %u bytes overwritten", i,
				      sizes[i]);
		/* Free every other one first to make holes, then the rest. */
		if (i & 1)
			nta_free(objs[i], sizes[i]);
	}
	for (i = 0; i < n; i += 2)
		nta_free(objs[i], sizes[i]);
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, allocs), n);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, frees), n);
	KUNIT_EXPECT_EQ(test, s1.inuse_objects, s0.inuse_objects);
	KUNIT_EXPECT_EQ(test, s1.reserved_bytes, s0.reserved_bytes);
}

static void nta_alloc_zero(struct kunit *test)
{
	unsigned int size = 1000;
	u8 *p, *q;

	nta_tneed_ready(test);
	nta_tpin(test, -1);
	p = nta_alloc(size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	memset(p, 0xff, size);
	nta_free(p, size);
	/* Most likely the dirty object itself comes back; zeroed anyway. */
	q = nta_alloc(size, GFP_KERNEL | __GFP_ZERO);
	KUNIT_ASSERT_NOT_NULL(test, q);
	KUNIT_EXPECT_NULL(test, memchr_inv(q, 0, size));
	nta_free(q, size);
}

enum nta_tgbad_kind {
	NTA_TG_MISALIGNED,
	NTA_TG_INSIDE,
	NTA_TG_HEADER,
	NTA_TG_DOUBLE,
	NTA_TG_SMALLER,
	NTA_TG_LARGER,
	NTA_TG_ZERO,
	NTA_TG_KMALLOC,
	NTA_TG_VMALLOC,
	NTA_TG_FAKE_BLOCK,
};

struct nta_tgbad {
	const char *name;
	enum nta_tgbad_kind kind;
};

static const struct nta_tgbad nta_tgbad_cases[] = {
	{ "misaligned", NTA_TG_MISALIGNED },
	{ "inside_object", NTA_TG_INSIDE },
	{ "block_header", NTA_TG_HEADER },
	{ "double_free", NTA_TG_DOUBLE },
	{ "size_smaller", NTA_TG_SMALLER },
	{ "size_larger", NTA_TG_LARGER },
	{ "size_zero", NTA_TG_ZERO },
	{ "foreign_kmalloc", NTA_TG_KMALLOC },
	{ "foreign_vmalloc", NTA_TG_VMALLOC },
	{ "foreign_fake_block", NTA_TG_FAKE_BLOCK },
};

static void nta_tgbad_desc(const struct nta_tgbad *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(nta_tgbad, nta_tgbad_cases, nta_tgbad_desc);

/*
 * nta_free() of something that is not a live object of that size: one
 * bad_frees more, every other counter and this CPU's whole pool unchanged,
 * and an allocate-everything pass finds every free unit still there.
 */
static void nta_free_bad_input(struct kunit *test)
{
	const struct nta_tgbad *t = test->param_value;
	struct nta_tsnap *s0 = nta_tsnap_alloc(test);
	struct nta_tsnap *s1 = nta_tsnap_alloc(test);
	unsigned int size = 2 * NTA_UNIT, bad_size = size;
	struct page *page = NULL;
	void *obj, *guard, *bad, *foreign = NULL;
	struct nta_stats st0, st1;
	struct nta_block *fake;
	unsigned long free_units;
	unsigned int cpu;

	nta_tneed_ready(test);
	cpu = nta_tpin(test, -1);
	obj = nta_alloc(size, GFP_KERNEL);
	guard = nta_alloc(NTA_UNIT, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, obj);
	KUNIT_ASSERT_NOT_NULL(test, guard);
	bad = obj;

	switch (t->kind) {
	case NTA_TG_MISALIGNED:
		bad = obj + 1;
		break;
	case NTA_TG_INSIDE:
		bad = obj + NTA_UNIT;
		bad_size = NTA_UNIT;
		break;
	case NTA_TG_HEADER:
		bad = nta_block_of(obj);
		break;
	case NTA_TG_DOUBLE:
		nta_free(obj, size);
		break;
	case NTA_TG_SMALLER:
		bad_size = NTA_UNIT;
		break;
	case NTA_TG_LARGER:
		bad_size = size + 1;
		break;
	case NTA_TG_ZERO:
		bad_size = 0;
		break;
	case NTA_TG_KMALLOC:
		foreign = kmalloc(size, GFP_KERNEL);
		bad = foreign;
		break;
	case NTA_TG_VMALLOC:
		foreign = vmalloc(size);
		bad = foreign;
		break;
	case NTA_TG_FAKE_BLOCK:
		/*
		 * Block-sized, block-aligned, with a header that claims to be
		 * this CPU's and an object start: only the block map can tell.
		 */
		page = alloc_pages(GFP_KERNEL | __GFP_COMP | __GFP_ZERO,
				   NTA_BLOCK_ORDER);
		KUNIT_ASSERT_NOT_NULL(test, page);
		fake = page_address(page);
		fake->pool = &nta_tcpu(cpu)->pool;
		bitmap_set(fake->used, 0, NTA_HDR_UNITS + 2);
		__set_bit(NTA_HDR_UNITS, fake->start);
		fake->cls[NTA_HDR_UNITS] = 2;
		bad = nta_tunit_addr(fake, NTA_HDR_UNITS);
		break;
	}
	if (t->kind == NTA_TG_KMALLOC || t->kind == NTA_TG_VMALLOC)
		KUNIT_ASSERT_NOT_NULL(test, foreign);
	KUNIT_EXPECT_FALSE(test, t->kind >= NTA_TG_KMALLOC && nta_owns(bad));

	nta_tsnap_this_cpu(test, s0);
	nta_tstats(&st0);
	nta_free(bad, bad_size);
	nta_tstats(&st1);
	nta_tsnap_this_cpu(test, s1);
	nta_texpect_stats_bad(test, &st0, &st1, 1);
	NTA_EXPECT_SNAP_EQ(test, s0, s1);

	/* Merge what sits in the bins: they may hold objects of any size. */
	nta_drain_all();
	KUNIT_EXPECT_EQ(test, READ_ONCE(nta_tcpu(cpu)->bin_units), 0);
	free_units = READ_ONCE(nta_tcpu(cpu)->pool.free_units);
	KUNIT_EXPECT_EQ(test, nta_tcpu_fill_count(test), free_units);

	if (t->kind != NTA_TG_DOUBLE)
		nta_free(obj, size);
	nta_free(guard, NTA_UNIT);
	if (t->kind == NTA_TG_KMALLOC)
		kfree(foreign);
	if (t->kind == NTA_TG_VMALLOC)
		vfree(foreign);
	if (page)
		__free_pages(page, NTA_BLOCK_ORDER);
	nta_tstats(&st0);
	KUNIT_EXPECT_EQ(test, st0.inuse_objects, st1.inuse_objects - 1 -
			(t->kind != NTA_TG_DOUBLE));
}

/*
 * Remote frees wait on the owner's list until its next call (the owner is
 * kept busy: an idle owner would be kicked at the first one).
 */
static void nta_remote_free_drain(struct kunit *test)
{
	unsigned int n = 8, owner;
	struct nta_stats s0, s1, s2;
	struct nta_tobjs *o;
	unsigned long free0;
	int other;
	void *p;

	nta_tneed_ready(test);
	owner = nta_tpin_two(test, &other);
	nta_drain_all();
	free0 = nta_tfree_units(owner);

	nta_tstats(&s0);
	o = nta_talloc_objs(test, n, 700);
	nta_tfree_on(test, other, o, 0, n, true);
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, allocs), n);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, remote_frees), n);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, frees), 0);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, kicks), 0);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, bad_frees), 0);
	/* The freer accounts the object gone; the owner still holds it. */
	KUNIT_EXPECT_EQ(test, s1.inuse_objects, s0.inuse_objects);
	KUNIT_EXPECT_FALSE(test, nta_tremote_empty(owner));
	KUNIT_EXPECT_EQ(test, nta_tremote_blocks(owner), nta_tnr_blocks(o, 0, n));
	KUNIT_EXPECT_LT(test, nta_tfree_units(owner), free0);

	/* The owner's next call merges them. */
	p = nta_alloc(1, GFP_KERNEL);
	KUNIT_EXPECT_NOT_NULL(test, p);
	nta_tstats(&s2);
	KUNIT_EXPECT_TRUE(test, nta_tremote_empty(owner));
	KUNIT_EXPECT_EQ(test, nta_tremote_blocks(owner), 0);
	KUNIT_EXPECT_EQ(test, NTA_D(&s1, &s2, frees), n);
	KUNIT_EXPECT_EQ(test, NTA_D(&s1, &s2, drains), 1);
	nta_free(p, 1);
	KUNIT_EXPECT_EQ(test, nta_tfree_units(owner), free0);
}

static void nta_tfree_twice(void *arg)
{
	struct nta_tobjs *o = arg;

	nta_free(o->obj[0], o->size);
	nta_free(o->obj[0], o->size);
	o->cpu = raw_smp_processor_id();
}

/* A remote double free is refused; the object is queued only once. */
static void nta_remote_double_free(struct kunit *test)
{
	struct nta_stats s0, s1;
	struct llist_node *first;
	struct nta_tobjs *o;
	unsigned int owner;
	int other;

	nta_tneed_ready(test);
	owner = nta_tpin_two(test, &other);
	nta_drain_all();
	o = nta_talloc_objs(test, 1, 300);
	nta_tstats(&s0);
	nta_run_on(test, other, nta_tfree_twice, o, true);
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, remote_frees), 1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, bad_frees), 1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, inuse_objects), -1);
	KUNIT_EXPECT_EQ(test, nta_tremote_blocks(owner), 1);
	first = READ_ONCE(nta_tcpu(owner)->pool.remote.first);
	KUNIT_ASSERT_PTR_EQ(test, first, &nta_block_of(o->obj[0])->remote);
	KUNIT_EXPECT_NULL(test, first->next);
	KUNIT_EXPECT_TRUE(test, test_bit(nta_tunit(o->obj[0]),
					 nta_block_of(o->obj[0])->pending));

	/* And the owner itself may not free it again either. */
	nta_free(o->obj[0], o->size);
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, bad_frees), 2);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, frees), 1);
	KUNIT_EXPECT_TRUE(test, nta_tremote_empty(owner));
	KUNIT_EXPECT_EQ(test, s1.inuse_objects, s0.inuse_objects - 1);
}

/*
 * A remote free with the wrong size is refused at once by the freer, which
 * checks the object's length byte; the object stays allocated, a correct
 * free still works, and the counters end where they started.
 */
static void nta_remote_wrong_size(struct kunit *test)
{
	struct nta_stats s0, s1, s2;
	struct nta_tobjs *o;
	unsigned int owner;
	int other;
	void *p;

	nta_tneed_ready(test);
	owner = nta_tpin_two(test, &other);
	nta_drain_all();
	nta_tstats(&s0);
	o = nta_talloc_objs(test, 1, 300);
	o->size = 100;		/* 2 units instead of 5 */
	nta_tfree_on(test, other, o, 0, 1, true);
	p = nta_alloc(1, GFP_KERNEL);	/* drains */
	KUNIT_EXPECT_NOT_NULL(test, p);
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, bad_frees), 1);
	KUNIT_EXPECT_TRUE(test, nta_tremote_empty(owner));
	KUNIT_EXPECT_EQ(test, nta_check_free(nta_block_of(o->obj[0]), o->obj[0],
					     300), NTA_FREE_OK);
	nta_free(p, 1);
	nta_free(o->obj[0], 300);
	nta_tstats(&s2);
	KUNIT_EXPECT_EQ(test, NTA_D(&s1, &s2, bad_frees), 0);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s2, frees), 2);
	KUNIT_EXPECT_EQ_MSG(test, s2.inuse_objects, s0.inuse_objects,
			    "the refused remote free stays counted as freed");
	KUNIT_EXPECT_EQ(test, s2.requested_bytes, s0.requested_bytes);
	KUNIT_EXPECT_EQ(test, s2.reserved_bytes, s0.reserved_bytes);
}

/* The other CPU's half of nta_double_free_race(). */
struct nta_tdf {
	void **x;
	int cur;	/* the round the owner opened, -1 when done */
	int acked;	/* the last round the other CPU finished */
	struct completion done;
};

static int nta_tdf_thread(void *data)
{
	struct nta_tdf *r = data;
	int i = 0, cur;

	/* Acquire: pairs with the owner's release that opens a round. */
	while ((cur = smp_load_acquire(&r->cur)) != -1) {
		if (cur != i) {
			cpu_relax();
			continue;
		}
		nta_free(r->x[i], NTA_UNIT);
		/* Release: this round's free is complete. */
		smp_store_release(&r->acked, i);
		i++;
	}
	complete(&r->done);
	return 0;
}

#define NTA_TDF_ROUNDS	512

/*
 * The owner and another CPU free the same object at the same moment, many
 * times.  Exactly one of the two frees is refused each round (at once, or
 * by the owner's drain when both checks passed), nothing is written into
 * the neighbours, and all memory comes back afterwards.
 */
static void nta_double_free_race(struct kunit *test)
{
	void **a, **x, **b, **junk;
	unsigned int owner, i, k = 0, nj = 0;
	struct nta_stats s0, s1, s2;
	unsigned long free0;
	struct task_struct *t;
	struct nta_tdf r;
	int other;

	nta_tneed_ready(test);
	owner = nta_tpin_two(test, &other);
	a = kunit_kcalloc(test, NTA_TDF_ROUNDS, sizeof(*a), GFP_KERNEL);
	x = kunit_kcalloc(test, NTA_TDF_ROUNDS, sizeof(*x), GFP_KERNEL);
	b = kunit_kcalloc(test, NTA_TDF_ROUNDS, sizeof(*b), GFP_KERNEL);
	junk = kunit_kcalloc(test, 3 * NTA_TDF_ROUNDS, sizeof(*junk), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, x);
	KUNIT_ASSERT_NOT_NULL(test, b);
	KUNIT_ASSERT_NOT_NULL(test, junk);
	nta_drain_all();
	free0 = nta_tfree_units(owner);
	nta_tstats(&s0);

	/* Triples of adjacent one-unit objects: neighbour, victim, neighbour. */
	for (i = 0; i < NTA_TDF_ROUNDS; i++) {
		a[k] = nta_alloc(NTA_UNIT, GFP_KERNEL);
		x[k] = nta_alloc(NTA_UNIT, GFP_KERNEL);
		b[k] = nta_alloc(NTA_UNIT, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, a[k]);
		KUNIT_ASSERT_NOT_NULL(test, x[k]);
		KUNIT_ASSERT_NOT_NULL(test, b[k]);
		if (x[k] == a[k] + NTA_UNIT && b[k] == x[k] + NTA_UNIT) {
			memset(a[k], 0xa0 ^ k, NTA_UNIT);
			memset(b[k], 0xb0 ^ k, NTA_UNIT);
			k++;
			continue;
		}
		junk[nj++] = a[k];
		junk[nj++] = x[k];
		junk[nj++] = b[k];
	}
	KUNIT_ASSERT_GE(test, k, NTA_TDF_ROUNDS / 2);

	r.x = x;
	r.cur = -2;
	r.acked = -1;
	init_completion(&r.done);
	t = kthread_create_on_cpu(nta_tdf_thread, &r, other, "nta_kunit/%u");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wake_up_process(t);
	for (i = 0; i < k; i++) {
		/* Release: opens round i; the other CPU frees x[i] too. */
		smp_store_release(&r.cur, i);
		nta_free(x[i], NTA_UNIT);
		/* Acquire: pairs with the other CPU's release of the round. */
		while (smp_load_acquire(&r.acked) != i)
			cpu_relax();
	}
	/* Release: the last round is over. */
	smp_store_release(&r.cur, -1);
	wait_for_completion(&r.done);
	nta_tstats(&s1);
	nta_drain_all();
	nta_tstats(&s2);
	kunit_info(test, "%u rounds: %lld frees refused at once, %lld by the owner's drain\n",
		   k, NTA_D(&s0, &s1, bad_frees), NTA_D(&s1, &s2, bad_frees));
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s2, bad_frees), k);

	for (i = 0; i < k; i++) {
		KUNIT_EXPECT_EQ(test, nta_check_free(nta_block_of(x[i]), x[i], NTA_UNIT),
				NTA_FREE_NOT_ALLOCATED);
		KUNIT_EXPECT_TRUE_MSG(test, !memchr_inv(a[i], 0xa0 ^ i, NTA_UNIT) &&
				      !memchr_inv(b[i], 0xb0 ^ i, NTA_UNIT),
				      "round %u: a neighbour was written", i);
		nta_free(a[i], NTA_UNIT);
		nta_free(b[i], NTA_UNIT);
	}
	for (i = 0; i < nj; i++)
		nta_free(junk[i], NTA_UNIT);
	nta_drain_all();
	KUNIT_EXPECT_EQ(test, nta_tfree_units(owner), free0);
}

struct nta_tgate {
	void *obj;
	unsigned int size;
	int go, done;
};

static int nta_tgate_thread(void *data)
{
	struct nta_tgate *g = data;

	/* Acquire: pairs with the release of @go by the frozen owner. */
	while (!smp_load_acquire(&g->go))
		cpu_relax();
	nta_free(g->obj, g->size);
	/* Release: the free is complete before the owner moves on. */
	smp_store_release(&g->done, 1);
	return 0;
}

/*
 * The owner allocating or freeing the neighbour that follows an object
 * passes through a state where the neighbour's units are used but its
 * start bit is not set (or no longer set).  A remote free of the object
 * that lands in that moment must still be accepted: freeze the owner there
 * (under its lock, as it would be) and free from another CPU.
 */
static void nta_remote_free_neighbour_busy(struct kunit *test)
{
	unsigned int i, unit = 0;
	struct nta_stats s0, s1, s2;
	void *o = NULL, *n = NULL;
	unsigned long flags, spins;
	struct nta_tgate *gate;
	struct task_struct *t;
	struct nta_block *blk;
	void *extra[32] = {};
	int other, done;

	nta_tneed_ready(test);
	nta_tpin_two(test, &other);
	nta_drain_all();
	/* Two adjacent one-unit objects. */
	for (i = 0; i < ARRAY_SIZE(extra); i++) {
		extra[i] = nta_alloc(NTA_UNIT, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, extra[i]);
		if (i && extra[i] == extra[i - 1] + NTA_UNIT) {
			o = extra[i - 1];
			n = extra[i];
			break;
		}
	}
	KUNIT_ASSERT_NOT_NULL(test, o);
	blk = nta_block_of(n);
	unit = nta_tunit(n);
	/* Not kunit memory: on a timeout the thread may still use it. */
	gate = kzalloc(sizeof(*gate), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, gate);
	gate->obj = o;
	gate->size = NTA_UNIT;
	t = kthread_create_on_cpu(nta_tgate_thread, gate, other, "nta_kunit/%u");
	if (IS_ERR(t))
		kfree(gate);
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wake_up_process(t);

	nta_tstats(&s0);
	local_lock_irqsave(&nta_cpu.lock, flags);
	__clear_bit(unit, blk->start);
	blk->cls[unit] = 0;
	/* Release: the bit is cleared before the other CPU frees. */
	smp_store_release(&gate->go, 1);
	for (spins = 0; spins < 1000000000UL; spins++) {
		/* Acquire: its free is complete when we restore the bit. */
		if (smp_load_acquire(&gate->done))
			break;
		cpu_relax();
	}
	__set_bit(unit, blk->start);
	blk->cls[unit] = 1;
	local_unlock_irqrestore(&nta_cpu.lock, flags);
	/* Acquire: pairs with the thread's release of @done. */
	done = smp_load_acquire(&gate->done);
	KUNIT_ASSERT_TRUE_MSG(test, done, "CPU %d never freed", other);
	kfree(gate);

	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, bad_frees), 0);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, remote_frees), 1);
	/* Clean up whichever way it went. */
	if (nta_check_free(blk, o, NTA_UNIT) == NTA_FREE_OK)
		nta_free(o, NTA_UNIT);
	for (i = 0; i < ARRAY_SIZE(extra) && extra[i]; i++)
		if (extra[i] != o)
			nta_free(extra[i], NTA_UNIT);
	nta_drain_all();
	nta_tstats(&s2);
	KUNIT_EXPECT_EQ(test, s2.inuse_objects, s0.inuse_objects - i);
}

#define NTA_TRACE_MAX	2000

struct nta_trace {
	void **o;
	unsigned int k;
	int cur;		/* object being freed; -2 before, -1 after */
	struct completion done;
};

static int nta_trace_thread(void *data)
{
	struct nta_trace *r = data;
	unsigned int i;

	for (i = 0; i < r->k; i++) {
		WRITE_ONCE(r->cur, i);
		udelay(2);
		nta_free(r->o[i], NTA_UNIT);
	}
	WRITE_ONCE(r->cur, -1);
	complete(&r->done);
	return 0;
}

/*
 * The real race behind the case above: the owner keeps freeing and
 * reallocating the neighbour of the object another CPU is freeing.  No
 * free may be refused, nothing may be lost.
 */
static void nta_remote_free_race(struct kunit *test)
{
	unsigned int i, k = 0, nj = 0;
	void **o, **n, **g, **junk, *p;
	struct nta_stats s0, s1, s2;
	unsigned long toggles = 0;
	struct task_struct *t;
	struct nta_trace r;
	int other, cur;

	nta_tneed_ready(test);
	nta_tpin_two(test, &other);
	o = kunit_kcalloc(test, NTA_TRACE_MAX, sizeof(*o), GFP_KERNEL);
	n = kunit_kcalloc(test, NTA_TRACE_MAX, sizeof(*n), GFP_KERNEL);
	g = kunit_kcalloc(test, NTA_TRACE_MAX, sizeof(*g), GFP_KERNEL);
	junk = kunit_kcalloc(test, 3 * NTA_TRACE_MAX, sizeof(*junk), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, o);
	KUNIT_ASSERT_NOT_NULL(test, n);
	KUNIT_ASSERT_NOT_NULL(test, g);
	KUNIT_ASSERT_NOT_NULL(test, junk);
	nta_drain_all();
	nta_tstats(&s0);

	/*
	 * Triples object, neighbour, guard, one unit each and adjacent; the
	 * few that straddle a block edge stay allocated until the end.
	 */
	for (i = 0; i < NTA_TRACE_MAX; i++) {
		o[k] = nta_alloc(NTA_UNIT, GFP_KERNEL);
		n[k] = nta_alloc(NTA_UNIT, GFP_KERNEL);
		g[k] = nta_alloc(NTA_UNIT, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, o[k]);
		KUNIT_ASSERT_NOT_NULL(test, n[k]);
		KUNIT_ASSERT_NOT_NULL(test, g[k]);
		if (n[k] == o[k] + NTA_UNIT && g[k] == n[k] + NTA_UNIT) {
			k++;
			continue;
		}
		junk[nj++] = o[k];
		junk[nj++] = n[k];
		junk[nj++] = g[k];
	}
	KUNIT_ASSERT_GE(test, k, NTA_TRACE_MAX / 2);

	r.o = o;
	r.k = k;
	r.cur = -2;
	init_completion(&r.done);
	t = kthread_create_on_cpu(nta_trace_thread, &r, other, "nta_kunit/%u");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wake_up_process(t);
	while ((cur = READ_ONCE(r.cur)) != -1) {
		if (cur < 0) {
			cpu_relax();
			continue;
		}
		nta_free(n[cur], NTA_UNIT);
		n[cur] = nta_alloc(NTA_UNIT, GFP_KERNEL);
		if (!n[cur])
			break;
		toggles++;
	}
	wait_for_completion(&r.done);

	nta_tstats(&s1);
	kunit_info(test, "%u remote frees, %lu neighbour reallocations\n", k,
		   toggles);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, bad_frees), 0);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, remote_frees), k);
	for (i = 0; i < k; i++) {
		p = o[i];
		if (nta_check_free(nta_block_of(p), p, NTA_UNIT) == NTA_FREE_OK)
			nta_free(p, NTA_UNIT);	/* a refused one */
		if (n[i])
			nta_free(n[i], NTA_UNIT);
		nta_free(g[i], NTA_UNIT);
	}
	for (i = 0; i < nj; i++)
		nta_free(junk[i], NTA_UNIT);
	nta_drain_all();
	nta_tstats(&s2);
	KUNIT_EXPECT_EQ(test, s2.inuse_objects, s0.inuse_objects);
	KUNIT_EXPECT_EQ(test, s2.requested_bytes, s0.requested_bytes);
}

/* The first remote free for an idle owner kicks it to drain at once. */
static void nta_remote_kick_idle(struct kunit *test)
{
	unsigned int owner, ms;
	struct nta_stats s0, s1;
	struct nta_tobjs *o;
	int other;

	nta_tneed_ready(test);
	owner = nta_tpin_two(test, &other);
	nta_drain_all();
	o = nta_talloc_objs(test, 1, 500);
	nta_tstats(&s0);
	o->from = 0;
	o->to = 1;
	o->wait_idle = owner;	/* the freer waits until we sleep */
	nta_run_on(test, other, nta_tfree_range, o, false);
	if (!o->was_idle)
		kunit_skip(test, "CPU %u did not go idle", owner);
	for (ms = 0; ms < 5000 && !nta_tremote_empty(owner); ms += 20)
		msleep(20);
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, kicks), 1);
	KUNIT_EXPECT_TRUE_MSG(test, nta_tremote_empty(owner),
			      "idle CPU %u did not drain within 5 s", owner);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, frees), 1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, drains), 1);
}

static void nta_tstranded_restore(void *data)
{
	WRITE_ONCE(nta_stranded_delay, (unsigned long)data);
}

/*
 * A free queued for a busy owner, below the kick threshold, is drained
 * within the stranded-free bound: the freer's timer kicks the owner.
 */
static void nta_remote_stranded(struct kunit *test)
{
	unsigned long t0, waited, saved;
	struct nta_stats s0, s1;
	struct nta_tobjs *o;
	unsigned int owner;
	int other;

	nta_tneed_ready(test);
	owner = nta_tpin_two(test, &other);
	nta_drain_all();
	saved = READ_ONCE(nta_stranded_delay);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, nta_tstranded_restore,
							(void *)saved), 0);
	WRITE_ONCE(nta_stranded_delay, NTA_STRANDED_DELAY);
	o = nta_talloc_objs(test, 2, 700);
	nta_tstats(&s0);
	/* The owner spins while the other CPU frees: no idle kick. */
	nta_tfree_on(test, other, o, 0, 2, true);
	t0 = jiffies;
	while (!nta_tremote_empty(owner) && time_before(jiffies, t0 + 5 * HZ))
		msleep(20);
	waited = jiffies - t0;
	nta_tstats(&s1);
	kunit_info(test, "drained after %u ms (bound %u ms)\n",
		   jiffies_to_msecs(waited), jiffies_to_msecs(NTA_STRANDED_DELAY));
	KUNIT_EXPECT_TRUE(test, nta_tremote_empty(owner));
	/* The bound plus a generous allowance for an emulated machine. */
	KUNIT_EXPECT_LE(test, waited, NTA_STRANDED_DELAY + HZ);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, frees), 2);
	KUNIT_EXPECT_GE(test, NTA_D(&s0, &s1, kicks), 1);
}

/*
 * A busy owner is kicked by the freer that queues the NTA_KICK_BLOCKS-th
 * block, and drains within a bounded time.
 */
static void nta_remote_kick_threshold(struct kunit *test)
{
	unsigned int n = NTA_KICK_BLOCKS, owner, ms;
	struct nta_stats s0, s1, s2;
	struct nta_tobjs *o;
	int other;

	nta_tneed_ready(test);
	owner = nta_tpin_two(test, &other);
	nta_drain_all();
	KUNIT_ASSERT_EQ(test, nta_tremote_blocks(owner), 0);
	/* One object per block. */
	o = nta_talloc_objs(test, n, nta_max_size());
	KUNIT_ASSERT_EQ(test, nta_tnr_blocks(o, 0, n), n);

	/* One short of the threshold: no kick, and the objects wait. */
	nta_tstats(&s0);
	nta_tfree_on(test, other, o, 0, n - 1, true);
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, kicks), 0);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, frees), 0);
	KUNIT_EXPECT_EQ(test, nta_tremote_blocks(owner), n - 1);

	/* The last one kicks the owner, which is busy spinning here. */
	nta_tfree_on(test, other, o, n - 1, n, true);
	for (ms = 0; ms < 5000 && !nta_tremote_empty(owner); ms += 20)
		msleep(20);
	nta_tstats(&s2);
	KUNIT_EXPECT_EQ(test, NTA_D(&s1, &s2, kicks), 1);
	KUNIT_EXPECT_TRUE_MSG(test, nta_tremote_empty(owner),
			      "owner CPU %u did not drain within 5 s", owner);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s2, frees), n);
	KUNIT_EXPECT_EQ(test, NTA_D(&s1, &s2, drains), 1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s2, remote_frees), n);
	KUNIT_EXPECT_EQ(test, s2.inuse_objects, s0.inuse_objects - n);
}

/*
 * init_on_free=1 promises that freed memory is wiped when it is freed,
 * however it is freed; a remote free must not leave the data behind on
 * the owner's list.
 */
static void nta_remote_init_on_free(struct kunit *test)
{
	unsigned int owner, size = 512;
	struct nta_tobjs *o;
	int other;

	nta_tneed_ready(test);
	if (!want_init_on_free())
		kunit_skip(test, "init_on_free is off");
	owner = nta_tpin_two(test, &other);
	nta_drain_all();
	o = nta_talloc_objs(test, 1, size);
	memset(o->obj[0], 0x5a, size);
	nta_tfree_on(test, other, o, 0, 1, true);
	/* Still queued (not drained): past the list link, nothing may remain. */
	KUNIT_EXPECT_FALSE(test, nta_tremote_empty(owner));
	KUNIT_EXPECT_NULL(test, memchr(o->obj[0] + 16, 0x5a, size - 16));
	nta_drain_all();
}

static bool nta_tinbox_empty(unsigned int cpu)
{
	return llist_empty(&nta_tcpu(cpu)->rb_inbox);
}

/* Pin the test to its CPU and find a second one; batching stays on. */
static unsigned int nta_tpin_batched(struct kunit *test, int *other)
{
	unsigned int owner = nta_tpin(test, -1);

	*other = nta_tother_cpu(owner);
	if (*other < 0)
		kunit_skip(test, "needs two online CPUs");
	if (!READ_ONCE(nta_remote_batching))
		kunit_skip(test, "remote batching is off");
	nta_drain_all();
	return owner;
}

/*
 * Batched remote frees: a freer collects them without telling the owner,
 * publishes a full batch with one atomic, and nta_drain_all() publishes
 * the rest; the owner frees them all.  At most one atomic per remote free,
 * both sides counted.
 */
static void nta_batch_free_drain(struct kunit *test)
{
	const unsigned int n = 2 * NTA_RB_MAX + 5;
	struct nta_stats s0, s1, s2;
	unsigned int owner;
	struct nta_tobjs *o;
	unsigned long free0;
	int other;

	nta_tneed_ready(test);
	owner = nta_tpin_batched(test, &other);
	free0 = nta_tfree_units(owner);
	nta_tstats(&s0);
	o = nta_talloc_objs(test, n, 700);

	/* One short of a full batch: nothing reaches the owner. */
	nta_tfree_on(test, other, o, 0, NTA_RB_MAX - 1, true);
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, remote_frees), NTA_RB_MAX - 1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, frees), 0);
	/*
	 * At most the batch timer's arming, and taking back batches its
	 * owners returned if the freer's stash ran dry.
	 */
	KUNIT_EXPECT_LE(test, NTA_D(&s0, &s1, remote_atomics), 2);
	KUNIT_EXPECT_TRUE(test, nta_tinbox_empty(owner));
	KUNIT_EXPECT_TRUE(test, nta_tremote_empty(owner));
	/* The freer counted them gone; the owner still holds them. */
	KUNIT_EXPECT_EQ(test, s1.inuse_objects - s0.inuse_objects,
			n - (NTA_RB_MAX - 1));
	KUNIT_EXPECT_LT(test, nta_tfree_units(owner), free0);

	/* Two batches fill up and are published; five frees stay open. */
	nta_tstats(&s2);
	nta_tfree_on(test, other, o, NTA_RB_MAX - 1, n, true);
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, remote_frees), n);
	/*
	 * Two llist_add()s, at most the stranded timer's arming and one
	 * llist_del_all() of returned batches.
	 */
	KUNIT_EXPECT_GE(test, NTA_D(&s2, &s1, remote_atomics), 2);
	KUNIT_EXPECT_LE(test, NTA_D(&s2, &s1, remote_atomics), 4);
	KUNIT_EXPECT_FALSE(test, nta_tinbox_empty(owner));
	KUNIT_EXPECT_TRUE(test, nta_tremote_empty(owner));

	nta_drain_all();
	nta_tstats(&s2);
	KUNIT_EXPECT_TRUE(test, nta_tinbox_empty(owner));
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s2, frees), n);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s2, bad_frees), 0);
	KUNIT_EXPECT_EQ(test, s2.inuse_objects, s0.inuse_objects);
	KUNIT_EXPECT_EQ(test, nta_tfree_units(owner), free0);
	/* Publishing 3 batches, one or two drains, sending 3 batches home. */
	KUNIT_EXPECT_LE(test, NTA_D(&s0, &s2, remote_atomics), n / 4);
	kunit_info(test, "%lld atomics for %u remote frees\n",
		   NTA_D(&s0, &s2, remote_atomics), n);
}

/*
 * A batched free of an object that its owner then frees and hands out
 * again is refused by the owner's drain: the object's new user keeps it,
 * its bytes and its neighbours' untouched, and the pool is intact.
 */
static void nta_batch_stale_double_free(struct kunit *test)
{
	struct nta_stats s0, s1;
	struct nta_tobjs *o;
	u8 *again;
	int other;

	nta_tneed_ready(test);
	nta_tpin_batched(test, &other);
	o = nta_talloc_objs(test, 3, 256);
	memset(o->obj[0], 0x11, 256);
	memset(o->obj[2], 0x22, 256);
	nta_tstats(&s0);

	/* Freed on the other CPU, into its open batch... */
	nta_tfree_on(test, other, o, 1, 2, true);
	/* ...and by mistake on the owner, which hands it out again. */
	nta_free(o->obj[1], 256);
	again = nta_alloc(256, GFP_KERNEL);
	KUNIT_ASSERT_PTR_EQ(test, (void *)again, o->obj[1]);
	memset(again, 0x33, 256);

	nta_drain_all();
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, bad_frees), 1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, remote_frees), 1);
	KUNIT_EXPECT_NULL(test, memchr_inv(again, 0x33, 256));
	KUNIT_EXPECT_NULL(test, memchr_inv(o->obj[0], 0x11, 256));
	KUNIT_EXPECT_NULL(test, memchr_inv(o->obj[2], 0x22, 256));
	nta_tsnap_this_cpu(test, nta_tsnap_alloc(test));	/* checks the pool */

	/* Still live for its new user, and freed once more without complaint. */
	nta_free(again, 256);
	nta_free(o->obj[0], 256);
	nta_free(o->obj[2], 256);
	nta_drain_all();
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, bad_frees), 1);
}

static void nta_trestore_rb_delay(void *data)
{
	WRITE_ONCE(nta_rb_delay, (unsigned long)data);
}

/*
 * A batch that never fills is published by the batch timer, and the
 * stranded-free timer kicks its sleeping owner: the objects are freed
 * within the two delays (50 ms each here), without an IPI from the free.
 */
static void nta_batch_timer(struct kunit *test)
{
	struct nta_stats s0, s1;
	unsigned int owner;
	struct nta_tobjs *o;
	unsigned long t0;
	int other;

	nta_tneed_ready(test);
	owner = nta_tpin_batched(test, &other);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, nta_trestore_rb_delay,
							(void *)READ_ONCE(nta_rb_delay)), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, nta_tstranded_restore,
							(void *)READ_ONCE(nta_stranded_delay)), 0);
	WRITE_ONCE(nta_rb_delay, msecs_to_jiffies(50));
	WRITE_ONCE(nta_stranded_delay, msecs_to_jiffies(50));
	/* Armed for an hour by an earlier test, it would not be re-armed. */
	timer_delete_sync(&nta_tcpu(other)->rb_timer);
	o = nta_talloc_objs(test, 3, 1500);
	nta_tstats(&s0);
	nta_tfree_on(test, other, o, 0, 3, false);
	t0 = jiffies;
	do {
		msleep(20);
		nta_tstats(&s1);
	} while (NTA_D(&s0, &s1, frees) < 3 && time_before(jiffies, t0 + 2 * HZ));
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, frees), 3);
	KUNIT_EXPECT_TRUE(test, nta_tinbox_empty(owner));
	KUNIT_EXPECT_LE(test, jiffies_to_msecs(jiffies - t0), 1000);
	kunit_info(test, "freed by the owner %u ms after the frees\n",
		   jiffies_to_msecs(jiffies - t0));
}

static void nta_tonline(void *data)
{
	unsigned int cpu = (unsigned long)data;

	if (!cpu_online(cpu))
		add_cpu(cpu);
}

/*
 * A CPU that can go offline (not the first online one) and the first
 * online CPU, which stays; skip the test when there is none.
 */
static void nta_thotplug_pair(struct kunit *test, unsigned int *victim,
			      unsigned int *survivor)
{
	unsigned int cpu;

	if (!IS_ENABLED(CONFIG_HOTPLUG_CPU))
		kunit_skip(test, "CONFIG_HOTPLUG_CPU is off");
	*survivor = cpumask_first(cpu_online_mask);
	*victim = nr_cpu_ids;
	for_each_online_cpu(cpu)
		if (cpu != *survivor && cpu_is_hotpluggable(cpu))
			*victim = cpu;
	if (*victim >= nr_cpu_ids)
		kunit_skip(test, "no second CPU that can go offline");
}

/*
 * Take a CPU down with objects queued for it and objects of its pool still
 * live, free those while it is down, bring it back: nothing is lost, the
 * dead pool keeps only blocks with live objects, and its pool works (with
 * its reserve) again.
 */
static void nta_cpu_hotplug(struct kunit *test)
{
	unsigned int n = 8, victim, survivor;
	struct nta_stats s0, s1;
	struct nta_tobjs *o;
	unsigned long free0;
	int ret;
	void *p;

	nta_tneed_ready(test);
	nta_thotplug_pair(test, &victim, &survivor);

	nta_tpending_path(test);
	nta_tpin(test, victim);
	nta_drain_all();
	free0 = nta_tfree_units(victim);
	nta_tstats(&s0);
	o = nta_talloc_objs(test, 3 * n, 1024);
	/* Queue n for the victim while it is busy (so not kicked)... */
	nta_tfree_on(test, survivor, o, 0, n, true);
	KUNIT_EXPECT_EQ(test, nta_tremote_blocks(victim), nta_tnr_blocks(o, 0, n));
	/* ...and leave it, with nothing to wake it up. */
	nta_tpin(test, survivor);

	ret = remove_cpu(victim);
	if (ret) {
		nta_tfree_on(test, survivor, o, n, 3 * n, false);
		nta_drain_all();
		kunit_skip(test, "remove_cpu(%u) failed: %d", victim, ret);
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, nta_tonline,
							(void *)(unsigned long)victim), 0);
	/* The dead callback drained what was queued. */
	nta_tstats(&s1);
	KUNIT_EXPECT_TRUE(test, nta_tremote_empty(victim));
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, frees), n);
	/* ...and gave back every block without a live object, reserve too. */
	KUNIT_EXPECT_EQ(test, READ_ONCE(nta_tcpu(victim)->pool.nr_blocks),
			nta_tnr_blocks(o, n, 3 * n));

	/* Frees for an offline owner are drained on its behalf. */
	nta_tfree_on(test, survivor, o, n, 2 * n, false);
	nta_drain_all();
	KUNIT_EXPECT_TRUE(test, nta_tremote_empty(victim));
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, frees), 2 * n);
	KUNIT_EXPECT_EQ(test, READ_ONCE(nta_tcpu(victim)->pool.nr_blocks),
			nta_tnr_blocks(o, 2 * n, 3 * n));

	/* And whatever is left queued when it returns is freed then. */
	nta_tfree_on(test, survivor, o, 2 * n, 3 * n, false);
	KUNIT_ASSERT_EQ(test, add_cpu(victim), 0);
	nta_drain_all();
	KUNIT_EXPECT_TRUE(test, nta_tremote_empty(victim));
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, frees), 3 * n);
	KUNIT_EXPECT_EQ(test, s1.inuse_objects, s0.inuse_objects);
	KUNIT_EXPECT_EQ(test, s1.bad_frees, s0.bad_frees);
	KUNIT_EXPECT_EQ(test, nta_tfree_units(victim), free0);
	KUNIT_EXPECT_GE(test, READ_ONCE(nta_tcpu(victim)->pool.nr_blocks),
			nta_reserve_blocks);

	nta_tpin(test, victim);
	p = nta_alloc(1024, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_EXPECT_PTR_EQ(test, nta_block_of(p)->pool, &nta_tcpu(victim)->pool);
	nta_free(p, 1024);
	KUNIT_EXPECT_EQ(test, nta_tfree_units(victim), free0);
}

/*
 * Batches across CPU hotplug: what a CPU going offline had collected for
 * another owner is published by the dead-CPU callback, and a batch for an
 * offline owner is drained on its behalf.  Nothing is lost or freed twice.
 */
static void nta_batch_hotplug(struct kunit *test)
{
	unsigned int n = 5, victim, survivor, i;
	struct nta_tobjs *mine, *theirs;
	unsigned long free0, t0;
	struct nta_stats s0, s1;
	int ret;

	nta_tneed_ready(test);
	if (!READ_ONCE(nta_remote_batching))
		kunit_skip(test, "remote batching is off");
	nta_thotplug_pair(test, &victim, &survivor);

	nta_tpin(test, victim);
	nta_drain_all();
	theirs = nta_talloc_objs(test, n, 1024);
	nta_tpin(test, survivor);
	free0 = nta_tfree_units(survivor);
	mine = nta_talloc_objs(test, n, 1024);
	nta_tstats(&s0);
	/* The victim collects frees of the survivor's objects... */
	nta_tfree_on(test, victim, mine, 0, n, true);
	/* ...and the survivor frees of the victim's. */
	for (i = 0; i < n; i++)
		nta_free(theirs->obj[i], theirs->size);
	KUNIT_EXPECT_TRUE(test, nta_tinbox_empty(survivor));
	KUNIT_EXPECT_TRUE(test, nta_tinbox_empty(victim));

	ret = remove_cpu(victim);
	if (ret) {
		nta_drain_all();
		kunit_skip(test, "remove_cpu(%u) failed: %d", victim, ret);
	}
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, nta_tonline,
							(void *)(unsigned long)victim), 0);
	/*
	 * The dead callback published the victim's batch to the survivor
	 * and kicked it: the survivor frees them without further help.
	 */
	t0 = jiffies;
	do {
		msleep(20);
		nta_tstats(&s1);
	} while (NTA_D(&s0, &s1, frees) < n && time_before(jiffies, t0 + HZ));
	KUNIT_EXPECT_GE(test, NTA_D(&s0, &s1, frees), n);
	/* The survivor's batch for the victim: drained by the offline work. */
	nta_drain_all();
	nta_tstats(&s1);
	KUNIT_EXPECT_TRUE(test, nta_tinbox_empty(survivor));
	KUNIT_EXPECT_TRUE(test, nta_tinbox_empty(victim));
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, frees), 2 * n);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, bad_frees), 0);
	KUNIT_EXPECT_EQ(test, nta_tfree_units(survivor), free0);
	/* The victim's pool kept no block: nothing of it is live. */
	KUNIT_EXPECT_EQ(test, READ_ONCE(nta_tcpu(victim)->pool.nr_blocks), 0);
	KUNIT_ASSERT_EQ(test, add_cpu(victim), 0);
}

/*
 * Whole-block objects beyond what the pool has force growth; freeing them
 * gives back every grown block, and the reserve stays.
 */
static void nta_grow_and_return(struct kunit *test)
{
	unsigned int cpu, blocks0, n, i;
	struct nta_stats s0, s1, s2;
	struct nta_pool *pool;
	void **objs;

	nta_tneed_ready(test);
	cpu = nta_tpin(test, -1);
	pool = &nta_tcpu(cpu)->pool;
	nta_drain_all();
	blocks0 = READ_ONCE(pool->nr_blocks);
	n = blocks0 + 2;
	objs = kunit_kcalloc(test, n, sizeof(*objs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);

	nta_tstats(&s0);
	for (i = 0; i < n; i++)
		objs[i] = nta_alloc(NTA_MAX_SIZE, GFP_KERNEL);
	nta_tstats(&s1);
	for (i = 0; i < n; i++)
		KUNIT_EXPECT_NOT_NULL(test, objs[i]);
	KUNIT_EXPECT_GE(test, NTA_D(&s0, &s1, grows), 2);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, failures), 0);
	KUNIT_EXPECT_GT(test, READ_ONCE(pool->nr_blocks), nta_reserve_blocks);
	KUNIT_EXPECT_EQ(test, READ_ONCE(pool->nr_blocks),
			blocks0 + NTA_D(&s0, &s1, grows));
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, blocks), NTA_D(&s0, &s1, grows));

	/*
	 * The reserve's blocks come free too, so no spare is kept beyond
	 * them (see nta_core_release_above_reserve for the spare).
	 */
	for (i = 0; i < n; i++)
		nta_free(objs[i], NTA_MAX_SIZE);
	nta_tstats(&s2);
	KUNIT_EXPECT_EQ(test, NTA_D(&s1, &s2, returns), NTA_D(&s0, &s1, grows));
	KUNIT_EXPECT_EQ(test, READ_ONCE(pool->nr_blocks), blocks0);
	nta_drain_all();
	nta_tstats(&s2);
	KUNIT_EXPECT_EQ(test, NTA_D(&s1, &s2, returns), NTA_D(&s0, &s1, grows));
	KUNIT_EXPECT_EQ(test, READ_ONCE(pool->nr_blocks), blocks0);
	KUNIT_EXPECT_GE(test, READ_ONCE(pool->nr_blocks), nta_reserve_blocks);
	/* Wholly free reserve blocks stay with the pool. */
	KUNIT_EXPECT_TRUE(test, test_bit(NTA_DATA_UNITS, pool->nonempty));
	KUNIT_EXPECT_EQ(test, s2.inuse_objects, s0.inuse_objects);
	KUNIT_EXPECT_EQ(test, s2.blocks, s0.blocks);
}

/* Allocate whole-block objects until the pool has grown once more. */
static void *nta_tgrow_once(struct kunit *test, gfp_t gfp, void **objs,
			    unsigned int *n, unsigned int max)
{
	unsigned long calls = READ_ONCE(nta_tgrow.calls);
	void *p;

	while (*n < max && READ_ONCE(nta_tgrow.calls) == calls) {
		p = nta_alloc(NTA_MAX_SIZE, gfp);
		if (!p)
			return NULL;
		objs[(*n)++] = p;
	}
	return READ_ONCE(nta_tgrow.calls) != calls ? objs[*n - 1] : NULL;
}

static void nta_tgrow_nofail(void *unused)
{
	WRITE_ONCE(nta_tgrow.fail, false);
}

/*
 * A pool grows with its caller's flags: a sleeping caller's allocation may
 * reclaim, an atomic caller's stays atomic, and neither may dip into the
 * emergency reserves.  After a failure, growth rests: the next request
 * does not ask the page allocator again until NTA_GROW_BACKOFF passed.
 */
static void nta_grow_flags(struct kunit *test)
{
	unsigned int n = 0, i, max;
	struct nta_stats s0, s1;
	unsigned long calls;
	void **objs, *p;
	gfp_t gfp;

	nta_tneed_ready(test);
	nta_tpin(test, -1);
	nta_drain_all();
	max = READ_ONCE(nta_tcpu(raw_smp_processor_id())->pool.nr_blocks) + 8;
	objs = kunit_kcalloc(test, max, sizeof(*objs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, nta_tgrow_nofail,
							NULL), 0);

	KUNIT_ASSERT_NOT_NULL(test, nta_tgrow_once(test, GFP_KERNEL, objs, &n, max));
	gfp = READ_ONCE(nta_tgrow.gfp);
	KUNIT_EXPECT_TRUE(test, gfp & __GFP_DIRECT_RECLAIM);
	KUNIT_EXPECT_TRUE(test, gfp & __GFP_NOMEMALLOC);
	KUNIT_EXPECT_TRUE(test, gfp & __GFP_NORETRY);
	KUNIT_EXPECT_FALSE(test, gfp & (__GFP_HIGH | __GFP_MEMALLOC | __GFP_ZERO));

	local_bh_disable();
	p = nta_tgrow_once(test, GFP_ATOMIC | __GFP_MEMALLOC, objs, &n, max);
	local_bh_enable();
	KUNIT_ASSERT_NOT_NULL(test, p);
	gfp = READ_ONCE(nta_tgrow.gfp);
	KUNIT_EXPECT_FALSE(test, gfp & __GFP_DIRECT_RECLAIM);
	KUNIT_EXPECT_FALSE(test, gfp & __GFP_MEMALLOC);
	KUNIT_EXPECT_TRUE(test, gfp & __GFP_NOMEMALLOC);
	/* GFP_ATOMIC's own __GFP_HIGH stays, as kmalloc() would use it. */
	KUNIT_EXPECT_EQ(test, gfp & __GFP_HIGH, GFP_ATOMIC & __GFP_HIGH);

	/* The page allocator says no: one failure, then a rest. */
	nta_tstats(&s0);
	WRITE_ONCE(nta_tgrow.fail, true);
	calls = READ_ONCE(nta_tgrow.calls);
	KUNIT_EXPECT_NULL(test, nta_tgrow_once(test, GFP_KERNEL, objs, &n, max));
	KUNIT_EXPECT_EQ(test, READ_ONCE(nta_tgrow.calls), calls + 1);
	WRITE_ONCE(nta_tgrow.fail, false);
	KUNIT_EXPECT_NULL(test, nta_alloc(NTA_MAX_SIZE, GFP_KERNEL));
	KUNIT_EXPECT_EQ_MSG(test, READ_ONCE(nta_tgrow.calls), calls + 1,
			    "growth asked the page allocator again at once");
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, failures), 2);
	msleep(jiffies_to_msecs(NTA_GROW_BACKOFF) + 20);
	p = nta_alloc(NTA_MAX_SIZE, GFP_KERNEL);
	KUNIT_EXPECT_NOT_NULL(test, p);
	KUNIT_EXPECT_EQ(test, READ_ONCE(nta_tgrow.calls), calls + 2);
	if (p)
		nta_free(p, NTA_MAX_SIZE);

	for (i = 0; i < n; i++)
		nta_free(objs[i], NTA_MAX_SIZE);
	nta_drain_all();
}

/*
 * The shrinker counts pages, and a scan frees what it says, synchronously,
 * up to nr_to_scan: here the spare blocks of the test's own CPU.
 */
static void nta_shrinker_contract(struct kunit *test)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL };
	unsigned int cpu, n = 0, i, max, spares, blocks, busy;
	struct nta_pool *pool;
	unsigned long pages;
	void **objs, *p;

	nta_tneed_ready(test);
	cpu = nta_tpin(test, -1);
	pool = &nta_tcpu(cpu)->pool;
	nta_drain_all();
	busy = READ_ONCE(pool->nr_blocks);
	max = busy + 4;
	objs = kunit_kcalloc(test, max, sizeof(*objs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	/*
	 * One whole-block object per block, four blocks past the reserve.
	 * The reserve's blocks stay busy, so that the last four, freed, are
	 * spares above the reserve (wholly free reserve blocks would count
	 * against the spares kept).
	 */
	while (n < max && (p = nta_alloc(NTA_MAX_SIZE, GFP_KERNEL)))
		objs[n++] = p;
	KUNIT_ASSERT_EQ(test, n, max);
	for (i = busy; i < n; i++)
		nta_free(objs[i], NTA_MAX_SIZE);
	blocks = READ_ONCE(pool->nr_blocks);
	spares = min(pool->whole, blocks - min(blocks, pool->reserve));
	KUNIT_ASSERT_GE_MSG(test, spares, 2,
			    "%u blocks, reserve %u, %u whole", blocks,
			    pool->reserve, pool->whole);

	pages = nta_shrink_count(NULL, &sc);
	KUNIT_EXPECT_NE(test, pages, SHRINK_EMPTY);
	KUNIT_EXPECT_GE(test, pages, (unsigned long)spares << NTA_BLOCK_ORDER);

	/*
	 * One page asked for: one block (its pages) given back, no more.  The
	 * scan merges the bins first, which may make more blocks whole.
	 */
	sc.nr_to_scan = 1;
	KUNIT_EXPECT_EQ(test, nta_shrink_scan(NULL, &sc), 1UL << NTA_BLOCK_ORDER);
	KUNIT_EXPECT_EQ(test, READ_ONCE(pool->nr_blocks), blocks - 1);
	KUNIT_EXPECT_EQ(test, nta_tcpu(cpu)->bin_units, 0);

	/* More asked for than there is: every spare above the reserve goes. */
	blocks = READ_ONCE(pool->nr_blocks);
	spares = min(pool->whole, blocks - min(blocks, pool->reserve));
	sc.nr_to_scan = (unsigned long)(spares + 2) << NTA_BLOCK_ORDER;
	KUNIT_EXPECT_EQ(test, nta_shrink_scan(NULL, &sc),
			spares ? (unsigned long)spares << NTA_BLOCK_ORDER :
				 SHRINK_STOP);
	KUNIT_EXPECT_EQ(test, READ_ONCE(pool->nr_blocks), blocks - spares);
	KUNIT_EXPECT_TRUE(test, pool->nr_blocks <= pool->reserve || !pool->whole);
	nta_tsnap_this_cpu(test, nta_tsnap_alloc(test));	/* checks the pool */
	for (i = 0; i < busy; i++)
		nta_free(objs[i], NTA_MAX_SIZE);
	nta_drain_all();
}

/* nta_usercopy_bad() for a copy of @n bytes from @p, "ok" when allowed. */
static const char *nta_tucopy(const void *p, unsigned long n,
			      unsigned long *off)
{
	return nta_usercopy_bad(p, n, off) ?: "ok";
}

/*
 * Hardened usercopy's bound is the live object a copy starts in, as NTA
 * set it aside, less the skb_shared_info at its end: not the block, not
 * a neighbour, not free memory.
 */
static void nta_usercopy_bound(struct kunit *test)
{
	const unsigned int tail = NTA_USERCOPY_TAIL;
	const unsigned int room = 1024 - tail;
	unsigned long off;
	u8 *a, *b;

	nta_tneed_ready(test);
	nta_tpin(test, -1);
	a = nta_alloc(1024, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	/* 100 bytes before the tail, rounded up: 128 bytes of room. */
	b = nta_alloc(100 + tail, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);

	KUNIT_EXPECT_STREQ(test, nta_tucopy(a, room, &off), "ok");
	KUNIT_EXPECT_EQ(test, off, 0);
	KUNIT_EXPECT_STREQ(test, nta_tucopy(a + 10, room - 10, &off), "ok");
	KUNIT_EXPECT_EQ(test, off, 10);
	KUNIT_EXPECT_STREQ(test, nta_tucopy(a + 10, room - 9, &off),
			   "skb_shared_info");
	KUNIT_EXPECT_EQ(test, off, 10);
	KUNIT_EXPECT_STREQ(test, nta_tucopy(a + room, 1, &off),
			   "skb_shared_info");
	KUNIT_EXPECT_STREQ(test, nta_tucopy(a + 1023, 1, &off),
			   "skb_shared_info");
	KUNIT_EXPECT_STREQ(test, nta_tucopy(a + 1023, 2, &off),
			   "past the object");
	KUNIT_EXPECT_STREQ(test, nta_tucopy(a, 1025, &off), "past the object");
	KUNIT_EXPECT_STREQ(test, nta_tucopy(b, 2 * NTA_UNIT, &off), "ok");
	KUNIT_EXPECT_STREQ(test, nta_tucopy(b + 64, NTA_UNIT + 1, &off),
			   "skb_shared_info");
	KUNIT_EXPECT_STREQ(test, nta_tucopy(nta_block_of(a), 8, &off),
			   "block header");
	KUNIT_EXPECT_STREQ(test,
			   nta_tucopy(nta_unit_addr(nta_block_of(a),
						    NTA_HDR_UNITS - 1), 1, &off),
			   "block header");

	/* Freed on its owner: in a bin or merged, it is free memory. */
	nta_free(b, 100 + tail);
	KUNIT_EXPECT_STREQ(test, nta_tucopy(b, 1, &off), "free memory");
	KUNIT_EXPECT_STREQ(test, nta_tucopy(b + 70, 1, &off), "free memory");
	nta_free(a, 1024);
	KUNIT_EXPECT_STREQ(test, nta_tucopy(a + 128, 1, &off), "free memory");
}

static void nta_trestore_max(void *data)
{
	WRITE_ONCE(nta_max_blocks, (unsigned long)data);
}

/* At the cap nta_alloc() fails and counts it; raising the cap heals. */
static void nta_cap(struct kunit *test)
{
	unsigned int cpu, blocks0, n = 0, i;
	struct nta_stats s0, s1, s2;
	struct nta_pool *pool;
	unsigned long saved;
	void **objs, *p;

	nta_tneed_ready(test);
	cpu = nta_tpin(test, -1);
	pool = &nta_tcpu(cpu)->pool;
	nta_drain_all();
	blocks0 = READ_ONCE(pool->nr_blocks);
	objs = kunit_kcalloc(test, blocks0 + 2, sizeof(*objs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	saved = READ_ONCE(nta_max_blocks);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, nta_trestore_max,
							(void *)saved), 0);

	nta_tstats(&s0);
	WRITE_ONCE(nta_max_blocks, blocks0);
	while (n <= blocks0 && (p = nta_alloc(NTA_MAX_SIZE, GFP_KERNEL)))
		objs[n++] = p;
	nta_tstats(&s1);
	KUNIT_EXPECT_LE(test, n, blocks0);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, failures), 1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, grows), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(pool->nr_blocks), blocks0);

	WRITE_ONCE(nta_max_blocks, blocks0 + 1);
	objs[n] = nta_alloc(NTA_MAX_SIZE, GFP_KERNEL);
	KUNIT_EXPECT_NOT_NULL(test, objs[n]);
	if (objs[n])
		n++;
	KUNIT_EXPECT_NULL(test, nta_alloc(NTA_MAX_SIZE, GFP_KERNEL));
	nta_tstats(&s2);
	KUNIT_EXPECT_EQ(test, NTA_D(&s1, &s2, grows), 1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s1, &s2, failures), 1);

	for (i = 0; i < n; i++)
		nta_free(objs[i], NTA_MAX_SIZE);
	nta_drain_all();
	KUNIT_EXPECT_EQ(test, READ_ONCE(pool->nr_blocks), blocks0);
	nta_tstats(&s2);
	KUNIT_EXPECT_EQ(test, s2.inuse_objects, s0.inuse_objects);
}

/* ---------------------------------------------------------------------- */
/* nta: the per-CPU bins and the fast path's exclusion                    */

static unsigned int nta_tbin_cap(unsigned int units)
{
	return clamp(NTA_BIN_BYTES / (units * NTA_UNIT), 1, NTA_BIN_MAX);
}

/* Objects in the bin of @units on this CPU, counted along the links. */
static unsigned int nta_tbin_walk(struct nta_cpu *c, unsigned int units)
{
	unsigned int n = 0;
	void *p;

	for (p = c->bin[units]; p && n <= NTA_BIN_MAX; p = nta_bin_next(p))
		n++;
	return n;
}

/*
 * The bin links: the object after a binned one is its first word,
 * decoded; with CONFIG_SLAB_FREELIST_HARDENED the raw word is not that
 * pointer, so what leaks from a free object gives no address away.
 */
static void nta_bin_link_hardened(struct kunit *test)
{
	unsigned int cpu, units = 2;
	unsigned long raw;
	struct nta_cpu *c;
	void *a, *b;

	nta_tneed_ready(test);
	if (!nta_enabled())
		kunit_skip(test, "NTA is switched off: frees do not fill the bins");
	cpu = nta_tpin(test, -1);
	c = nta_tcpu(cpu);
	nta_drain_all();
	a = nta_alloc(units * NTA_UNIT, GFP_KERNEL);
	b = nta_alloc(units * NTA_UNIT, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	KUNIT_ASSERT_NOT_NULL(test, b);
	nta_free(a, units * NTA_UNIT);
	nta_free(b, units * NTA_UNIT);
	KUNIT_ASSERT_PTR_EQ(test, c->bin[units], b);
	KUNIT_EXPECT_PTR_EQ(test, nta_bin_next(b), a);
	raw = *(unsigned long *)b;
	if (IS_ENABLED(CONFIG_SLAB_FREELIST_HARDENED))
		KUNIT_EXPECT_NE(test, raw, (unsigned long)a);
	else
		KUNIT_EXPECT_EQ(test, raw, (unsigned long)a);
	/* Handed out again in LIFO order through the decoded links. */
	KUNIT_EXPECT_PTR_EQ(test, nta_alloc(units * NTA_UNIT, GFP_KERNEL), b);
	KUNIT_EXPECT_PTR_EQ(test, nta_alloc(units * NTA_UNIT, GFP_KERNEL), a);
	nta_free(a, units * NTA_UNIT);
	nta_free(b, units * NTA_UNIT);
}

/*
 * Bins that sit idle decay: objects parked on a CPU that then makes no
 * fast-path allocation or free are merged into the pool within two
 * NTA_BIN_DECAY ticks.
 */
static void nta_bin_decay(struct kunit *test)
{
	unsigned int cpu, i, ms;
	struct nta_cpu *c;
	void *objs[4];

	nta_tneed_ready(test);
	if (!nta_enabled())
		kunit_skip(test, "NTA is switched off: frees do not fill the bins");
	cpu = nta_tpin(test, -1);
	c = nta_tcpu(cpu);
	nta_drain_all();
	for (i = 0; i < ARRAY_SIZE(objs); i++) {
		objs[i] = nta_alloc(300, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, objs[i]);
	}
	for (i = 0; i < ARRAY_SIZE(objs); i++)
		nta_free(objs[i], 300);
	KUNIT_ASSERT_GE(test, READ_ONCE(c->bin_units),
			ARRAY_SIZE(objs) * nta_size_to_units(300));

	/* This CPU now only sleeps: no allocation or free of its own. */
	for (ms = 0; ms < 5000 && READ_ONCE(c->bin_units); ms += 50)
		msleep(50);
	kunit_info(test, "bins merged after %u ms (tick %u ms)\n", ms,
		   jiffies_to_msecs(NTA_BIN_DECAY));
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->bin_units), 0);
	KUNIT_EXPECT_LE(test, ms, 2 * jiffies_to_msecs(NTA_BIN_DECAY) + 1000);
	nta_tsnap_this_cpu(test, nta_tsnap_alloc(test));	/* checks the pool */
}

/*
 * A freed object is parked in the bin for its length and handed out again
 * by the next allocation of that length; its length byte says "not live"
 * while it waits, and the gauges count it as free.
 */
static void nta_bin_reuse(struct kunit *test)
{
	unsigned int units = nta_size_to_units(1500), cpu;
	struct nta_stats s0, s1, s2;
	struct nta_cpu *c;
	void *p, *q;

	nta_tneed_ready(test);
	cpu = nta_tpin(test, -1);
	c = nta_tcpu(cpu);
	nta_drain_all();
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->bin_units), 0);
	nta_tstats(&s0);
	KUNIT_EXPECT_EQ(test, s0.binned_bytes, 0);

	p = nta_alloc(1500, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	nta_free(p, 1500);
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, s1.binned_bytes, units * NTA_UNIT);
	KUNIT_EXPECT_EQ(test, s1.free_bytes, s0.free_bytes);
	KUNIT_EXPECT_EQ(test, s1.inuse_objects, s0.inuse_objects);
	KUNIT_EXPECT_EQ(test, s1.reserved_bytes, s0.reserved_bytes);
	KUNIT_EXPECT_PTR_EQ(test, c->bin[units], p);
	KUNIT_EXPECT_EQ(test, nta_block_of(p)->cls[nta_tunit(p)], 0);
	/* A second free of a binned object is a double free. */
	nta_free(p, 1500);
	nta_tstats(&s2);
	KUNIT_EXPECT_EQ(test, NTA_D(&s1, &s2, bad_frees), 1);
	KUNIT_EXPECT_EQ(test, nta_tbin_walk(c, units), 1);

	q = nta_alloc(1480, GFP_KERNEL);	/* same length in units */
	KUNIT_EXPECT_PTR_EQ(test, q, p);
	KUNIT_EXPECT_EQ(test, nta_block_of(p)->cls[nta_tunit(p)], units);
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->bin_units), 0);
	nta_free(q, 1480);
	nta_drain_all();
	nta_tstats(&s2);
	KUNIT_EXPECT_EQ(test, s2.binned_bytes, 0);
	KUNIT_EXPECT_EQ(test, s2.free_bytes, s0.free_bytes);
	KUNIT_EXPECT_EQ(test, s2.inuse_objects, s0.inuse_objects);
}

/*
 * A bin holds at most its cap; freeing into a full bin merges its older
 * half.  All the bins of a CPU hold at most NTA_BINS_UNITS units.
 */
static void nta_bin_caps(struct kunit *test)
{
	static const unsigned int sizes[] = { 64, 704, 1500, 4000, 9000 };
	unsigned int cpu, i, j, n, units, cap;
	struct nta_stats s0, s1;
	struct nta_cpu *c;
	void **objs;

	nta_tneed_ready(test);
	cpu = nta_tpin(test, -1);
	c = nta_tcpu(cpu);
	objs = kunit_kcalloc(test, 2 * NTA_BIN_MAX, sizeof(*objs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	nta_drain_all();
	nta_tstats(&s0);
	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		units = nta_size_to_units(sizes[i]);
		cap = nta_tbin_cap(units);
		n = cap + 3;
		for (j = 0; j < n; j++) {
			objs[j] = nta_alloc(sizes[i], GFP_KERNEL);
			KUNIT_ASSERT_NOT_NULL(test, objs[j]);
		}
		for (j = 0; j < n; j++)
			nta_free(objs[j], sizes[i]);
		KUNIT_EXPECT_LE(test, READ_ONCE(c->bin_nr[units]), cap);
		KUNIT_EXPECT_EQ(test, nta_tbin_walk(c, units), c->bin_nr[units]);
		KUNIT_EXPECT_LE(test, READ_ONCE(c->bin_units), NTA_BINS_UNITS);
	}
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, s1.inuse_objects, s0.inuse_objects);
	KUNIT_EXPECT_EQ(test, s1.requested_bytes, s0.requested_bytes);
	KUNIT_EXPECT_EQ(test, s1.binned_bytes, READ_ONCE(c->bin_units) * NTA_UNIT);
	KUNIT_EXPECT_GT(test, s1.binned_bytes, 0);
	nta_drain_all();
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->bin_units), 0);
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, s1.free_bytes, s0.free_bytes);
	KUNIT_EXPECT_EQ(test, s1.blocks, s0.blocks);
}

/*
 * Binned objects never make the pool grow: with every block full but for
 * a binned object, an allocation of another length flushes the bins,
 * merges, and is served without a new block.
 */
static void nta_bin_flush_before_grow(struct kunit *test)
{
	unsigned int cpu, blocks0, n = 0, i;
	struct nta_stats s0, s1;
	struct nta_cpu *c;
	unsigned long saved;
	void **objs, *p;

	nta_tneed_ready(test);
	cpu = nta_tpin(test, -1);
	c = nta_tcpu(cpu);
	nta_drain_all();
	blocks0 = READ_ONCE(c->pool.nr_blocks);
	objs = kunit_kcalloc(test, blocks0 + 1, sizeof(*objs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	saved = READ_ONCE(nta_max_blocks);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, nta_trestore_max,
							(void *)saved), 0);
	WRITE_ONCE(nta_max_blocks, blocks0);
	while (n <= blocks0 && (p = nta_alloc(NTA_MAX_SIZE, GFP_KERNEL)))
		objs[n++] = p;
	KUNIT_ASSERT_GT(test, n, 0);
	/* The last free of a whole block parks it in its bin. */
	nta_free(objs[--n], NTA_MAX_SIZE);
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->bin_nr[NTA_DATA_UNITS]), 1);
	nta_tstats(&s0);
	p = nta_alloc(100, GFP_KERNEL);
	nta_tstats(&s1);
	KUNIT_EXPECT_NOT_NULL(test, p);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, grows), 0);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, failures), 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->bin_units), 0);
	if (p)
		nta_free(p, 100);
	for (i = 0; i < n; i++)
		nta_free(objs[i], NTA_MAX_SIZE);
	nta_drain_all();
}

struct nta_tnested {
	struct irq_work work;
	void *obj;
	bool freed;
	bool done;
};

/* An allocation and a free from hardirq context. */
static void nta_tnested_fn(struct irq_work *work)
{
	struct nta_tnested *n = container_of(work, struct nta_tnested, work);

	n->obj = nta_alloc(1500, GFP_ATOMIC);
	if (n->obj) {
		memset(n->obj, 0x5a, 1500);
		nta_free(n->obj, 1500);
		n->freed = true;
	}
	WRITE_ONCE(n->done, true);
}

/*
 * A context that nests inside the fast path on the same CPU (a hardirq,
 * here an irq_work, arriving while the mark is held) is served by the
 * slow path from the free lists and never touches the bins.
 */
static void nta_nested_fast_path(struct kunit *test)
{
	unsigned int units = nta_size_to_units(1500), cpu, bin_units;
	struct nta_tnested n = { };
	struct nta_stats s0, s1;
	struct nta_cpu *c;
	void *p, *head;
	u8 nr;

	nta_tneed_ready(test);
	/*
	 * On PREEMPT_RT this irq_work runs in a thread, which cannot run
	 * while this CPU spins with preemption off; and no hard interrupt
	 * allocates there (the local lock sleeps).
	 */
	if (IS_ENABLED(CONFIG_PREEMPT_RT))
		kunit_skip(test, "PREEMPT_RT: irq_work runs in a thread");
	cpu = nta_tpin(test, -1);
	c = nta_tcpu(cpu);
	nta_drain_all();
	/* One object of the length the nested context asks for, binned. */
	p = nta_alloc(1500, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	nta_free(p, 1500);
	nta_tstats(&s0);
	init_irq_work(&n.work, nta_tnested_fn);

	preempt_disable();
	WRITE_ONCE(c->busy, 1);		/* as if inside nta_alloc()'s fast path */
	head = c->bin[units];
	nr = c->bin_nr[units];
	bin_units = c->bin_units;
	irq_work_queue(&n.work);
	while (!READ_ONCE(n.done))
		cpu_relax();
	KUNIT_EXPECT_PTR_EQ(test, c->bin[units], head);
	KUNIT_EXPECT_EQ(test, c->bin_nr[units], nr);
	KUNIT_EXPECT_EQ(test, c->bin_units, bin_units);
	WRITE_ONCE(c->busy, 0);
	preempt_enable();
	irq_work_sync(&n.work);

	KUNIT_EXPECT_TRUE(test, n.freed);
	KUNIT_EXPECT_PTR_NE(test, n.obj, p);
	KUNIT_EXPECT_PTR_EQ(test, nta_block_of(n.obj)->pool, &c->pool);
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, allocs), 1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, frees), 1);
	KUNIT_EXPECT_EQ(test, s1.inuse_objects, s0.inuse_objects);
	KUNIT_EXPECT_EQ(test, s1.binned_bytes, s0.binned_bytes);
	/* The binned object is still the next one handed out. */
	KUNIT_EXPECT_PTR_EQ(test, nta_alloc(1500, GFP_KERNEL), p);
	nta_free(p, 1500);
	nta_drain_all();
}

/* ---------------------------------------------------------------------- */
/* nta_skb: heads through the skb paths                                   */

struct nta_tskb_ctx {
	struct nta_stats start;
};

static void nta_tkey_restore(void *data)
{
	if (data)
		static_branch_enable(&nta_enabled_key);
	else
		static_branch_disable(&nta_enabled_key);
}

static void nta_tkey_set(struct kunit *test, bool on)
{
	unsigned long was = static_key_enabled(&nta_enabled_key);

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, nta_tkey_restore,
							(void *)was), 0);
	if (on)
		static_branch_enable(&nta_enabled_key);
	else
		static_branch_disable(&nta_enabled_key);
}

/* Pin, turn NTA on for new heads, remember the counters. */
static void nta_tskb_begin(struct kunit *test, struct nta_stats *st)
{
	nta_tneed_ready(test);
	nta_tpin(test, -1);
	nta_tkey_set(test, true);
	nta_tstats(st);
}

/* Every head is back where it came from. */
static void nta_tskb_end(struct kunit *test, const struct nta_stats *st,
			 u64 nta_heads)
{
	struct nta_stats now;

	nta_tstats(&now);
	KUNIT_EXPECT_EQ(test, now.inuse_objects, st->inuse_objects);
	KUNIT_EXPECT_EQ(test, now.requested_bytes, st->requested_bytes);
	KUNIT_EXPECT_EQ(test, now.bad_frees, st->bad_frees);
	KUNIT_EXPECT_EQ(test, NTA_D(st, &now, allocs), nta_heads);
	KUNIT_EXPECT_EQ(test, NTA_D(st, &now, frees), nta_heads);
}

static unsigned int nta_tshinfo(void)
{
	return SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
}

/*
 * What NTA must have given a head of @size bytes, 0 when it cannot: small
 * heads take the size of skb_small_head_cache objects, as without NTA.
 */
static unsigned int nta_thead(unsigned int size)
{
	return nta_alloc_size(max_t(unsigned int, SKB_HEAD_ALIGN(size),
				    nta_tsmall()));
}

static void nta_texpect_head(struct kunit *test, const struct sk_buff *skb,
			     unsigned int tsize)
{
	KUNIT_EXPECT_EQ(test, skb->__tsize, tsize);
	KUNIT_EXPECT_EQ(test, nta_owns(skb->head), tsize != 0);
	if (tsize) {
		KUNIT_EXPECT_FALSE(test, skb->head_frag);
		KUNIT_EXPECT_EQ(test, skb_end_offset(skb), tsize - nta_tshinfo());
		KUNIT_EXPECT_EQ(test, nta_object_units(nta_block_of(skb->head),
						       nta_tunit(skb->head)),
				tsize / NTA_UNIT);
	}
}

static void nta_tfill_skb(struct sk_buff *skb, unsigned int len, u8 seed)
{
	u8 *p = skb_put(skb, len);
	unsigned int i;

	for (i = 0; i < len; i++)
		p[i] = seed + i * 7;
}

/* The bytes [off, off + len) of @skb match what nta_tfill_skb() wrote. */
static void nta_texpect_data(struct kunit *test, const struct sk_buff *skb,
			     unsigned int off, unsigned int len, u8 seed,
			     unsigned int seed_off)
{
	u8 *buf = kunit_kmalloc(test, len, GFP_KERNEL);
	unsigned int i, bad = 0;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_EQ(test, skb_copy_bits(skb, off, buf, len), 0);
	for (i = 0; i < len; i++)
		bad += buf[i] != (u8)(seed + (seed_off + i) * 7);
	KUNIT_EXPECT_EQ(test, bad, 0);
}

struct nta_tskb_size {
	const char *name;
	unsigned int size;
	gfp_t gfp;
	bool fclone;
};

static const struct nta_tskb_size nta_tskb_sizes[] = {
	{ "0", 0 },
	{ "64", 64 },
	{ "128", 128 },
	{ "256", 256 },
	{ "1024", 1024 },
	{ "1500", 1500 },
	{ "1500_fclone", 1500, 0, true },
	{ "2048", 2048 },
	{ "4096", 4096 },
	{ "9000", 9000 },
	{ "nta_max", NTA_MAX_SIZE - SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) },
	{ "nta_max+1", NTA_MAX_SIZE - SKB_DATA_ALIGN(sizeof(struct skb_shared_info)) + 1 },
	{ "64K", 65536 },
	{ "reclaimable", 512, __GFP_RECLAIMABLE },
};

static void nta_tskb_size_desc(const struct nta_tskb_size *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(nta_tskb_size, nta_tskb_sizes, nta_tskb_size_desc);

/* alloc_skb(): NTA serves what it can, the rest falls back and is counted. */
static void nta_skb_alloc(struct kunit *test)
{
	const struct nta_tskb_size *t = test->param_value;
	unsigned int tsize = t->gfp ? 0 : nta_thead(t->size);
	struct nta_stats st, mid;
	struct sk_buff *skb;

	nta_tskb_begin(test, &st);
	skb = __alloc_skb(t->size, GFP_KERNEL | t->gfp,
			  t->fclone ? SKB_ALLOC_FCLONE : 0, NUMA_NO_NODE);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	nta_tstats(&mid);
	nta_texpect_head(test, skb, tsize);
	KUNIT_EXPECT_EQ(test, skb->truesize, SKB_TRUESIZE(skb_end_offset(skb)));
	KUNIT_EXPECT_GE(test, skb_tailroom(skb), t->size);
	KUNIT_EXPECT_EQ(test, NTA_D(&st, &mid, fallbacks), tsize ? 0 : 1);
	KUNIT_EXPECT_EQ(test, NTA_D(&st, &mid, inuse_objects), tsize ? 1 : 0);
	KUNIT_EXPECT_EQ(test, NTA_D(&st, &mid, reserved_bytes), tsize);
	nta_tfill_skb(skb, t->size, 3);
	consume_skb(skb);
	nta_tskb_end(test, &st, tsize ? 1 : 0);
}

/* Clones share the head and its __tsize; the head is freed once. */
static void nta_skb_clone(struct kunit *test)
{
	struct sk_buff *skb, *fc, *clone, *clone2, *morph;
	struct nta_stats st, mid;
	unsigned int tsize;

	nta_tskb_begin(test, &st);
	tsize = nta_thead(1000);
	skb = alloc_skb(1000, GFP_KERNEL);
	fc = alloc_skb_fclone(1000, GFP_KERNEL);
	morph = alloc_skb(100, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_ASSERT_NOT_NULL(test, fc);
	KUNIT_ASSERT_NOT_NULL(test, morph);
	nta_tfill_skb(skb, 900, 1);
	nta_tfill_skb(fc, 900, 2);

	clone = skb_clone(skb, GFP_KERNEL);
	clone2 = skb_clone(fc, GFP_KERNEL);	/* the fclone companion */
	KUNIT_ASSERT_NOT_NULL(test, clone);
	KUNIT_ASSERT_NOT_NULL(test, clone2);
	KUNIT_EXPECT_PTR_EQ(test, clone->head, skb->head);
	KUNIT_EXPECT_EQ(test, clone->__tsize, tsize);
	KUNIT_EXPECT_EQ(test, clone2->__tsize, tsize);
	KUNIT_EXPECT_EQ(test, clone->truesize, skb->truesize);

	/* skb_morph() frees the target's own head and shares the source's. */
	KUNIT_EXPECT_PTR_EQ(test, skb_morph(morph, skb), morph);
	KUNIT_EXPECT_PTR_EQ(test, morph->head, skb->head);
	KUNIT_EXPECT_EQ(test, morph->__tsize, tsize);
	nta_tstats(&mid);
	KUNIT_EXPECT_EQ(test, NTA_D(&st, &mid, frees), 1);

	consume_skb(skb);
	consume_skb(morph);
	consume_skb(fc);
	nta_tstats(&mid);
	KUNIT_EXPECT_EQ(test, NTA_D(&st, &mid, frees), 1);
	nta_texpect_data(test, clone, 0, 900, 1, 0);
	nta_texpect_data(test, clone2, 0, 900, 2, 0);
	consume_skb(clone);
	consume_skb(clone2);
	nta_tskb_end(test, &st, 3);
}

/* __skb_unclone_keeptruesize(): a private head of the same size. */
static void nta_skb_unclone_keeptruesize(struct kunit *test)
{
	struct sk_buff *skb, *clone;
	unsigned int truesize, end;
	struct nta_stats st;
	void *old;

	nta_tskb_begin(test, &st);
	skb = alloc_skb(700, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	nta_tfill_skb(skb, 600, 4);
	clone = skb_clone(skb, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, clone);
	old = skb->head;
	truesize = skb->truesize;
	end = skb_end_offset(skb);
	KUNIT_EXPECT_EQ(test, skb_unclone_keeptruesize(skb, GFP_KERNEL), 0);
	KUNIT_EXPECT_PTR_NE(test, skb->head, old);
	nta_texpect_head(test, skb, nta_thead(700));
	KUNIT_EXPECT_EQ(test, skb->truesize, truesize);
	KUNIT_EXPECT_EQ(test, skb_end_offset(skb), end);
	nta_texpect_data(test, skb, 0, 600, 4, 0);
	consume_skb(clone);
	consume_skb(skb);
	nta_tskb_end(test, &st, 2);
}

struct nta_texpand {
	const char *name;
	bool cloned;
	unsigned int ntail;
};

static const struct nta_texpand nta_texpand_cases[] = {
	{ "uncloned", false, 128 },
	{ "cloned", true, 128 },
	{ "uncloned_past_nta", false, NTA_BLOCK_SIZE },
	{ "cloned_past_nta", true, NTA_BLOCK_SIZE },
};

static void nta_texpand_desc(const struct nta_texpand *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(nta_texpand, nta_texpand_cases, nta_texpand_desc);

/* pskb_expand_head(): new head sized by NTA (or kmalloc), old one freed. */
static void nta_skb_expand_head(struct kunit *test)
{
	const struct nta_texpand *t = test->param_value;
	unsigned int osize, tsize, headroom, old_tsize;
	struct sk_buff *skb, *clone = NULL;
	struct nta_stats st, mid, now;
	void *old;

	nta_tskb_begin(test, &st);
	skb = alloc_skb(200, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reserve(skb, 16);
	nta_tfill_skb(skb, 150, 5);
	if (t->cloned) {
		clone = skb_clone(skb, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, clone);
	}
	old = skb->head;
	old_tsize = skb->__tsize;
	osize = skb_end_offset(skb);
	headroom = skb_headroom(skb);
	tsize = nta_thead(osize + 64 + t->ntail);

	nta_tstats(&mid);
	KUNIT_ASSERT_EQ(test, pskb_expand_head(skb, 64, t->ntail, GFP_KERNEL), 0);
	KUNIT_EXPECT_PTR_NE(test, skb->head, old);
	nta_texpect_head(test, skb, tsize);
	KUNIT_EXPECT_EQ(test, skb_headroom(skb), headroom + 64);
	KUNIT_EXPECT_EQ(test, skb->truesize, SKB_TRUESIZE(skb_end_offset(skb)));
	KUNIT_EXPECT_FALSE(test, skb_cloned(skb));
	nta_texpect_data(test, skb, 0, 150, 5, 0);
	nta_tstats(&now);
	/* The old head goes now unless a clone still holds it. */
	KUNIT_EXPECT_EQ(test, NTA_D(&mid, &now, frees), t->cloned ? 0 : 1);
	KUNIT_EXPECT_EQ(test, NTA_D(&mid, &now, fallbacks), tsize ? 0 : 1);
	if (clone) {
		KUNIT_EXPECT_PTR_EQ(test, clone->head, old);
		KUNIT_EXPECT_EQ(test, clone->__tsize, old_tsize);
		nta_texpect_data(test, clone, 0, 150, 5, 0);
		consume_skb(clone);
	}
	consume_skb(skb);
	nta_tskb_end(test, &st, tsize ? 2 : 1);
}

/* pskb_extract() runs pskb_carve_inside_header/_nonlinear/_frag_list. */
static void nta_skb_carve(struct kunit *test)
{
	struct sk_buff *skb, *frag_skb, *a, *b, *c;
	unsigned int tsize, heads = 0;
	struct nta_stats st, mid, now;
	struct page *page;
	u8 *pd;
	int i;

	nta_tskb_begin(test, &st);
	skb = alloc_skb(256, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	heads++;
	nta_tfill_skb(skb, 200, 0);
	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	pd = page_address(page);
	for (i = 0; i < 1000; i++)
		pd[i] = ((200 + i) * 7) & 0xff;
	skb_add_rx_frag(skb, 0, page, 0, 1000, PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, skb->len, 1200);
	tsize = nta_thead(skb_end_offset(skb));

	/* Offset inside the linear part: pskb_carve_inside_header(). */
	a = pskb_extract(skb, 50, 100, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, a);
	heads++;
	KUNIT_EXPECT_PTR_NE(test, a->head, skb->head);
	nta_texpect_head(test, a, tsize);
	KUNIT_EXPECT_EQ(test, a->len, 100);
	nta_texpect_data(test, a, 0, 100, 0, 50);

	/* Offset in the page fragment: pskb_carve_inside_nonlinear(). */
	b = pskb_extract(skb, 300, 500, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, b);
	heads++;
	nta_texpect_head(test, b, tsize);
	KUNIT_EXPECT_EQ(test, b->len, 500);
	nta_texpect_data(test, b, 0, 500, 0, 300);

	/* Offset in a frag_list member: pskb_carve_frag_list() as well. */
	frag_skb = alloc_skb(600, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, frag_skb);
	heads++;
	nta_tfill_skb(frag_skb, 400, (1200 * 7) & 0xff);
	skb_shinfo(skb)->frag_list = frag_skb;
	skb->len += frag_skb->len;
	skb->data_len += frag_skb->len;
	skb->truesize += frag_skb->truesize;
	nta_tstats(&mid);
	c = pskb_extract(skb, 1300, 200, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c);
	nta_tstats(&now);
	/*
	 * c's own head and a carved copy of frag_skb; the trim at the end
	 * of pskb_extract() pulls that copy into c's head (skb_condense())
	 * and frees it at once.
	 */
	heads += 2;
	KUNIT_EXPECT_EQ(test, NTA_D(&mid, &now, allocs), 2);
	KUNIT_EXPECT_EQ(test, NTA_D(&mid, &now, frees), 1);
	nta_texpect_head(test, c, tsize);
	KUNIT_EXPECT_EQ(test, c->len, 200);
	nta_texpect_data(test, c, 0, 200, 0, 1300);

	consume_skb(a);
	consume_skb(b);
	consume_skb(c);
	consume_skb(skb);
	nta_tskb_end(test, &st, heads);
}

/* skb_copy(), skb_copy_expand(), __pskb_copy(): fresh NTA heads. */
static void nta_skb_copy(struct kunit *test)
{
	struct sk_buff *skb, *c1, *c2, *c3;
	struct nta_stats st;

	nta_tskb_begin(test, &st);
	skb = alloc_skb(500, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	skb_reserve(skb, 32);
	nta_tfill_skb(skb, 400, 9);

	c1 = skb_copy_expand(skb, 64, 128, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c1);
	nta_texpect_head(test, c1, nta_thead(64 + 400 + 128));
	KUNIT_EXPECT_EQ(test, c1->truesize, SKB_TRUESIZE(skb_end_offset(c1)));
	KUNIT_EXPECT_GE(test, skb_headroom(c1), 64);
	nta_texpect_data(test, c1, 0, 400, 9, 0);

	c2 = skb_copy(skb, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c2);
	nta_texpect_head(test, c2, nta_thead(skb_end_offset(skb)));
	nta_texpect_data(test, c2, 0, 400, 9, 0);

	c3 = pskb_copy(skb, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, c3);
	nta_texpect_head(test, c3, nta_thead(skb_headroom(skb) +
					     skb_headlen(skb)));
	nta_texpect_data(test, c3, 0, 400, 9, 0);

	consume_skb(c1);
	consume_skb(c2);
	consume_skb(c3);
	consume_skb(skb);
	nta_tskb_end(test, &st, 4);
}

/* Heads NTA did not allocate have __tsize 0 and never reach nta_free(). */
static void nta_skb_foreign_heads(struct kunit *test)
{
	unsigned int len = SKB_HEAD_ALIGN(500), tsize;
	struct sk_buff *skb;
	struct nta_stats st;
	void *data;

	nta_tskb_begin(test, &st);

	data = kmalloc(len, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, data);
	skb = slab_build_skb(data);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	nta_texpect_head(test, skb, 0);
	KUNIT_EXPECT_FALSE(test, skb->head_frag);
	nta_tfill_skb(skb, 300, 6);
	/* Growing it moves it to NTA; the kmalloc'd head goes to kfree(). */
	tsize = nta_thead(skb_end_offset(skb) + 100);
	KUNIT_ASSERT_EQ(test, pskb_expand_head(skb, 0, 100, GFP_KERNEL), 0);
	nta_texpect_head(test, skb, tsize);
	nta_texpect_data(test, skb, 0, 300, 6, 0);
	consume_skb(skb);

	data = netdev_alloc_frag(len);
	KUNIT_ASSERT_NOT_NULL(test, data);
	skb = build_skb(data, len);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	nta_texpect_head(test, skb, 0);
	KUNIT_EXPECT_TRUE(test, skb->head_frag);
	consume_skb(skb);

	/* Small netdev_alloc_skb() heads are page fragments. */
	skb = netdev_alloc_skb(NULL, 1000);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_EXPECT_TRUE(test, skb->head_frag);
	nta_texpect_head(test, skb, 0);
	consume_skb(skb);

	nta_tskb_end(test, &st, 1);
}

/*
 * net.core.nta off: new heads from kmalloc, heads allocated while it was
 * on still go back to NTA, and both kinds move between the allocators
 * through pskb_expand_head().
 */
static void nta_skb_runtime_switch(struct kunit *test)
{
	struct sk_buff *on, *off, *clone;
	struct nta_stats st, mid;
	unsigned int tsize;

	nta_tskb_begin(test, &st);
	on = alloc_skb(1000, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, on);
	nta_texpect_head(test, on, nta_thead(1000));
	nta_tfill_skb(on, 800, 7);
	clone = skb_clone(on, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, clone);

	static_branch_disable(&nta_enabled_key);
	KUNIT_EXPECT_FALSE(test, nta_enabled());
	off = alloc_skb(1000, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, off);
	nta_texpect_head(test, off, 0);
	nta_tfill_skb(off, 800, 8);
	nta_tstats(&mid);
	KUNIT_EXPECT_EQ(test, NTA_D(&st, &mid, fallbacks), 0);

	/* An NTA head replaced while off: the new one is kmalloc'd. */
	KUNIT_ASSERT_EQ(test, pskb_expand_head(on, 0, 64, GFP_KERNEL), 0);
	nta_texpect_head(test, on, 0);
	consume_skb(clone);	/* last user of the NTA head, freed to NTA */
	nta_tstats(&mid);
	KUNIT_EXPECT_EQ(test, NTA_D(&st, &mid, frees), 1);
	KUNIT_EXPECT_EQ(test, mid.inuse_objects, st.inuse_objects);

	static_branch_enable(&nta_enabled_key);
	/* A kmalloc'd head replaced while on: the new one is NTA's. */
	tsize = nta_thead(skb_end_offset(off) + 64);
	KUNIT_ASSERT_EQ(test, pskb_expand_head(off, 0, 64, GFP_KERNEL), 0);
	nta_texpect_head(test, off, tsize);
	nta_texpect_data(test, off, 0, 800, 8, 0);
	nta_texpect_data(test, on, 0, 800, 7, 0);
	consume_skb(on);
	consume_skb(off);
	nta_tskb_end(test, &st, 2);
}

/* ---------------------------------------------------------------------- */

static bool nta_tsaved_warn;
static unsigned long nta_tsaved_stranded, nta_tsaved_rb_delay;

static int nta_tsuite_init(struct kunit_suite *suite)
{
	/* Expected reports below are plain lines, not WARN splats. */
	nta_tsaved_warn = READ_ONCE(nta_warn_bad_free);
	WRITE_ONCE(nta_warn_bad_free, false);
	/*
	 * Tests count kicks and look at queues: the stranded-free timer
	 * waits an hour here, but in nta_remote_stranded.
	 */
	nta_tsaved_stranded = READ_ONCE(nta_stranded_delay);
	WRITE_ONCE(nta_stranded_delay, 3600 * HZ);
	/* Batches are published when the tests say so, or fill up. */
	nta_tsaved_rb_delay = READ_ONCE(nta_rb_delay);
	WRITE_ONCE(nta_rb_delay, 3600 * HZ);
	return 0;
}

static void nta_tsuite_exit(struct kunit_suite *suite)
{
	unsigned int cpu;

	/* Pinned: not moved here; the next open batch arms it afresh. */
	for_each_possible_cpu(cpu)
		timer_delete_sync(&nta_tcpu(cpu)->rb_timer);
	/*
	 * What the tests left in open batches goes to its owners, and reports
	 * recorded but not printed yet are printed, before the warning is on.
	 */
	nta_drain_all();
	WRITE_ONCE(nta_warn_bad_free, nta_tsaved_warn);
	WRITE_ONCE(nta_stranded_delay, nta_tsaved_stranded);
	WRITE_ONCE(nta_rb_delay, nta_tsaved_rb_delay);
	/* Timers armed for an hour here fire within the usual bound. */
	for_each_possible_cpu(cpu)
		if (timer_pending(&nta_tcpu(cpu)->stranded))
			timer_reduce(&nta_tcpu(cpu)->stranded,
				     jiffies + nta_tsaved_stranded);
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

static struct kunit_case nta_cases[] = {
	KUNIT_CASE(nta_init_unwind),
	KUNIT_CASE_PARAM(nta_alloc_sizes, nta_tsize_gen_params),
	KUNIT_CASE(nta_alloc_no_overlap),
	KUNIT_CASE(nta_alloc_zero),
	KUNIT_CASE_PARAM(nta_free_bad_input, nta_tgbad_gen_params),
	KUNIT_CASE(nta_remote_free_drain),
	KUNIT_CASE(nta_remote_double_free),
	KUNIT_CASE(nta_remote_wrong_size),
	KUNIT_CASE(nta_remote_free_neighbour_busy),
	KUNIT_CASE(nta_remote_free_race),
	KUNIT_CASE(nta_double_free_race),
	KUNIT_CASE(nta_remote_kick_idle),
	KUNIT_CASE(nta_remote_kick_threshold),
	KUNIT_CASE(nta_remote_stranded),
	KUNIT_CASE(nta_remote_init_on_free),
	KUNIT_CASE(nta_batch_free_drain),
	KUNIT_CASE(nta_batch_stale_double_free),
	KUNIT_CASE(nta_batch_timer),
	KUNIT_CASE(nta_cpu_hotplug),
	KUNIT_CASE(nta_batch_hotplug),
	KUNIT_CASE(nta_grow_and_return),
	KUNIT_CASE(nta_grow_flags),
	KUNIT_CASE(nta_shrinker_contract),
	KUNIT_CASE(nta_usercopy_bound),
	KUNIT_CASE(nta_cap),
	KUNIT_CASE(nta_bin_reuse),
	KUNIT_CASE(nta_bin_link_hardened),
	KUNIT_CASE(nta_bin_caps),
	KUNIT_CASE(nta_bin_flush_before_grow),
	KUNIT_CASE(nta_bin_decay),
	KUNIT_CASE(nta_nested_fast_path),
	{}
};

static struct kunit_suite nta_suite = {
	.name = "nta",
	.suite_init = nta_tsuite_init,
	.suite_exit = nta_tsuite_exit,
	.test_cases = nta_cases,
};

static struct kunit_case nta_skb_cases[] = {
	KUNIT_CASE_PARAM(nta_skb_alloc, nta_tskb_size_gen_params),
	KUNIT_CASE(nta_skb_clone),
	KUNIT_CASE(nta_skb_unclone_keeptruesize),
	KUNIT_CASE_PARAM(nta_skb_expand_head, nta_texpand_gen_params),
	KUNIT_CASE(nta_skb_carve),
	KUNIT_CASE(nta_skb_copy),
	KUNIT_CASE(nta_skb_foreign_heads),
	KUNIT_CASE(nta_skb_runtime_switch),
	{}
};

static struct kunit_suite nta_skb_suite = {
	.name = "nta_skb",
	.suite_init = nta_tsuite_init,
	.suite_exit = nta_tsuite_exit,
	.test_cases = nta_skb_cases,
};

kunit_test_suites(&nta_core_suite, &nta_suite, &nta_skb_suite);

MODULE_DESCRIPTION("KUnit tests for the network tree allocator");
MODULE_LICENSE("GPL");
