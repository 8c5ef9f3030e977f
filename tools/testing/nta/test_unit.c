// SPDX-License-Identifier: GPL-2.0
/*
 * Boundary tests of the core: first and last unit of a block, bitmap word
 * edges, whole-block objects, sizes around a unit, 1-unit split
 * remainders, merges on either side, best fit, the reserve, the spare
 * block and nta_pool_trim(), and the remote-free path driven from one
 * thread.
 *
 * Most tests fill a block with 1-unit objects, then free chosen units to
 * carve free chunks of known position and size, so they do not depend on
 * which end of a chunk the allocator splits from.
 */
#include "harness.h"

#define U_END	NTA_BLOCK_UNITS		/* one past the last unit */

static struct hcpu *c = &h_cpus[0];
static void *objs[NTA_BLOCK_UNITS];

static struct nta_block *u_setup(unsigned int reserve)
{
	h_cpu_init(c, 0, reserve, 0);
	memset(objs, 0, sizeof(objs));
	return reserve ? list_first_entry(&c->pool.blocks, struct nta_block, link) : NULL;
}

static void u_check(void)
{
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET, NULL) == 0, "pool invariants");
}

static void u_teardown(void)
{
	u_check();
	EXPECT(h_cpu_destroy(c) == 0, "blocks still in use at teardown");
	EXPECT(c->bad_frees == 0, "%lu refused frees", c->bad_frees);
}

static void *u_alloc(unsigned int size)
{
	void *p = nta_pool_alloc(&c->pool, size);

	if (p)
		h_check_alloc(&c->pool, p, size);
	return p;
}

static void u_free(void *p, unsigned int size)
{
	struct nta_block *blk = nta_block_of(p);
	bool keep = c->pool.nr_blocks <= c->pool.reserve;
	enum nta_bad_free why = h_free(c, p, size);

	EXPECT(why == NTA_FREE_OK, "free %p size %u: %s", p, size,
	       nta_bad_free_reason(why));
	if (keep)
		h_check_freed(&c->pool, blk, h_unit(p), nta_size_to_units(size));
}

/* Allocate 1-unit objects until the pool is full; objs[] maps unit -> object. */
static bool u_fill(struct nta_block *blk)
{
	unsigned int n = 0;
	void *p;

	while ((p = u_alloc(1))) {
		if (nta_block_of(p) != blk || objs[h_unit(p)])
			return EXPECT(0, "fill: %p twice or in another block", p);
		objs[h_unit(p)] = p;
		n++;
	}
	return EXPECT(n == NTA_DATA_UNITS && c->pool.free_units == 0,
		      "fill made %u objects, %lu units left", n, c->pool.free_units);
}

static void u_free_unit(unsigned int u)
{
	u_free(objs[u], 1);
	objs[u] = NULL;
}

/* [unit, unit + len) is one maximal free chunk, on free[len]. */
static bool u_chunk(struct nta_block *blk, unsigned int unit, unsigned int len)
{
	return EXPECT(find_next_bit(blk->used, unit + len, unit) == unit + len &&
		      test_bit(unit - 1, blk->used) &&
		      (unit + len == U_END || test_bit(unit + len, blk->used)) &&
		      h_chunk_listed(&c->pool, blk, unit, len),
		      "want free chunk %u..%u", unit, unit + len - 1);
}

static bool u_list_empty(unsigned int len)
{
	return EXPECT(nta_flist_empty(&c->pool.free[len]) &&
		      !test_bit(len, c->pool.nonempty),
		      "free[%u] should be empty", len);
}

/* Allocate @units units; it must land at @unit. */
static void *u_alloc_at(struct nta_block *blk, unsigned int units, unsigned int unit)
{
	void *p = u_alloc(units * NTA_UNIT);

	EXPECT(p == h_unit_addr(blk, unit), "alloc %u units: %p (unit %u), want unit %u",
	       units, p, p ? h_unit(p) : 0, unit);
	return p;
}

static void test_whole_block(void)
{
	struct nta_block *blk = u_setup(1);
	struct h_snapshot snap;
	void *p;

	EXPECT(NTA_HDR_UNITS * NTA_UNIT >= sizeof(struct nta_block), "header fits");
	EXPECT(c->pool.free_units == NTA_DATA_UNITS, "new block is free");
	u_chunk(blk, NTA_HDR_UNITS, NTA_DATA_UNITS);
	EXPECT(nta_pool_largest_free(&c->pool) == NTA_MAX_SIZE, "largest free");

	/* Too big, zero, and sizes whose unit count would overflow. */
	h_snapshot_take(&snap, &c->pool);
	EXPECT(!nta_pool_alloc(&c->pool, NTA_MAX_SIZE + 1), "NTA_MAX_SIZE + 1");
	EXPECT(!nta_pool_alloc(&c->pool, 0), "size 0");
	EXPECT(!nta_pool_alloc(&c->pool, UINT_MAX), "UINT_MAX");
	EXPECT(!nta_pool_alloc(&c->pool, UINT_MAX - NTA_UNIT + 2), "UINT_MAX - 62");
	EXPECT(h_snapshot_same(&snap, &c->pool), "refused allocs left the pool alone");
	h_snapshot_free(&snap);

	p = u_alloc_at(blk, NTA_DATA_UNITS, NTA_HDR_UNITS);
	ASSERT(p, "whole block");
	EXPECT(nta_object_units(blk, NTA_HDR_UNITS) == NTA_DATA_UNITS, "object units");
	EXPECT(c->pool.free_units == 0 && bitmap_empty(c->pool.nonempty, NTA_NR_LISTS),
	       "pool is full");
	EXPECT(nta_pool_largest_free(&c->pool) == 0, "nothing free");
	EXPECT(!nta_pool_alloc(&c->pool, 1), "full pool refuses");
	u_check();
	u_free(p, NTA_MAX_SIZE);
	EXPECT(c->pool.nr_blocks == 1, "reserve block kept");
	u_chunk(blk, NTA_HDR_UNITS, NTA_DATA_UNITS);
	u_teardown();
}

static void test_first_last_unit(void)
{
	struct nta_block *blk = u_setup(1);
	const unsigned int first = NTA_HDR_UNITS, last = U_END - 1;
	unsigned int u;

	ASSERT(u_fill(blk), "fill");
	for (u = first; u < U_END; u++)
		EXPECT(objs[u] && nta_object_units(blk, u) == 1, "unit %u", u);
	u_check();

	/* Neither end merges with anything: the header and the block end. */
	u_free_unit(first);
	u_chunk(blk, first, 1);
	u_free_unit(last);
	u_chunk(blk, last, 1);
	u_chunk(blk, first, 1);
	u_check();
	objs[first] = u_alloc(NTA_UNIT);
	objs[last] = u_alloc(1);
	EXPECT(objs[first] && objs[last] && objs[first] != objs[last] &&
	       (h_unit(objs[first]) == first || h_unit(objs[first]) == last) &&
	       (h_unit(objs[last]) == first || h_unit(objs[last]) == last),
	       "the two end units are handed out again");
	if (objs[first] && h_unit(objs[first]) == last)
		swap(objs[first], objs[last]);
	EXPECT(!nta_pool_alloc(&c->pool, 1), "full again");

	/* The last two units, then an object ending exactly at the block end. */
	u_free_unit(last);
	u_free_unit(last - 1);
	u_chunk(blk, last - 1, 2);
	objs[last - 1] = u_alloc_at(blk, 2, last - 1);
	EXPECT(nta_object_units(blk, last - 1) == 2, "object to the end");
	u_check();
	u_free(objs[last - 1], 2 * NTA_UNIT);
	objs[last - 1] = NULL;
	u_chunk(blk, last - 1, 2);

	for (u = first; u < U_END; u++)
		if (objs[u])
			u_free_unit(u);
	u_chunk(blk, first, NTA_DATA_UNITS);
	u_teardown();
}

static void test_sizes(void)
{
	static const struct { unsigned int size, units; } cases[] = {
		{ 1, 1 }, { 63, 1 }, { 64, 1 }, { 65, 2 }, { 127, 2 }, { 128, 2 },
		{ 129, 3 }, { 640, 10 }, { 4095, 64 }, { 4096, 64 }, { 4097, 65 },
		{ NTA_MAX_SIZE - NTA_UNIT, NTA_DATA_UNITS - 1 },
		{ NTA_MAX_SIZE - 1, NTA_DATA_UNITS }, { NTA_MAX_SIZE, NTA_DATA_UNITS },
	};
	struct nta_block *blk = u_setup(1);
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		void *p = u_alloc_at(blk, cases[i].units, NTA_HDR_UNITS);

		if (!p)
			continue;
		EXPECT(nta_object_units(blk, h_unit(p)) == cases[i].units,
		       "size %u: %u units", cases[i].size, cases[i].units);
		EXPECT(c->pool.free_units == NTA_DATA_UNITS - cases[i].units,
		       "size %u: free units", cases[i].size);
		if (cases[i].units < NTA_DATA_UNITS)
			u_chunk(blk, NTA_HDR_UNITS + cases[i].units,
				NTA_DATA_UNITS - cases[i].units);
		u_free(p, cases[i].size);
		u_chunk(blk, NTA_HDR_UNITS, NTA_DATA_UNITS);
	}
	u_teardown();
}

/* Objects and merges across bitmap word boundaries (units 63/64/65 ...). */
static void test_word_edges(void)
{
	static const unsigned int edges[] = { 64, 128, 192 };
	struct nta_block *blk = u_setup(1);
	unsigned int i, u;
	void *p;

	BUILD_BUG_ON(NTA_BLOCK_UNITS != 256);
	ASSERT(u_fill(blk), "fill");
	for (i = 0; i < ARRAY_SIZE(edges); i++) {
		unsigned int e = edges[i];

		/* e-1 and e+1, then e: one 3-unit chunk across the edge. */
		u_free_unit(e - 1);
		u_free_unit(e + 1);
		u_free_unit(e);
		u_chunk(blk, e - 1, 3);
		u_list_empty(1);
		p = u_alloc_at(blk, 3, e - 1);
		EXPECT(p && nta_object_units(blk, e - 1) == 3, "edge %u object", e);
		u_free(p, 3 * NTA_UNIT);
		u_chunk(blk, e - 1, 3);
		/* Two units across the edge, a 1-unit remainder after it. */
		p = u_alloc_at(blk, 2, e - 1);
		u_chunk(blk, e + 1, 1);
		objs[e + 1] = u_alloc_at(blk, 1, e + 1);
		EXPECT(p && nta_object_units(blk, e - 1) == 2 &&
		       nta_object_units(blk, e + 1) == 1, "adjacent objects at edge %u", e);
		u_free(p, 2 * NTA_UNIT);
		u_chunk(blk, e - 1, 2);
		objs[e - 1] = u_alloc_at(blk, 1, e - 1);
		objs[e] = u_alloc_at(blk, 1, e);
		u_check();
	}

	/* Exactly one bitmap word, then one word plus a unit on either side. */
	for (u = 64; u < 128; u++)
		u_free_unit(u ^ 0x15);		/* scrambled order, same set */
	u_chunk(blk, 64, 64);
	p = u_alloc_at(blk, 64, 64);
	EXPECT(p && nta_object_units(blk, 64) == 64, "word-sized object");
	u_free(p, 64 * NTA_UNIT);
	u_free_unit(128);
	u_chunk(blk, 64, 65);
	u_free_unit(63);
	u_chunk(blk, 63, 66);
	p = u_alloc_at(blk, 66, 63);
	EXPECT(p && nta_object_units(blk, 63) == 66, "66 units over two edges");
	u_check();
	u_free(p, 66 * NTA_UNIT);
	u_chunk(blk, 63, 66);

	/* The last word: an object ending at the last unit of the block. */
	for (u = 192; u < U_END; u++)
		u_free_unit(u);
	u_chunk(blk, 192, 64);
	p = u_alloc_at(blk, 64, 192);
	EXPECT(p && nta_object_units(blk, 192) == 64, "object in the last word");
	u_check();
	u_free(p, 64 * NTA_UNIT);

	for (u = 0; u < U_END; u++)
		if (objs[u])
			u_free_unit(u);
	u_chunk(blk, NTA_HDR_UNITS, NTA_DATA_UNITS);
	u_teardown();
}

static void test_split_remainder(void)
{
	struct nta_block *blk = u_setup(1);
	unsigned int u;
	void *p, *q;

	ASSERT(u_fill(blk), "fill");
	for (u = 100; u < 105; u++)
		u_free_unit(u);
	u_chunk(blk, 100, 5);
	p = u_alloc_at(blk, 4, 100);
	u_list_empty(5);
	u_list_empty(4);
	u_chunk(blk, 104, 1);
	EXPECT(c->pool.free_units == 1, "one unit left");
	q = u_alloc_at(blk, 1, 104);
	u_list_empty(1);
	EXPECT(bitmap_empty(c->pool.nonempty, NTA_NR_LISTS), "no free chunk at all");
	u_check();
	u_free(p, 4 * NTA_UNIT);
	u_free(q, 1);
	u_chunk(blk, 100, 5);
	for (u = 0; u < U_END; u++)
		if (objs[u])
			u_free_unit(u);
	u_teardown();
}

static void test_merges(void)
{
	struct nta_block *blk = u_setup(1);
	unsigned int u;

	ASSERT(u_fill(blk), "fill");
	/* Left neighbour free. */
	u_free_unit(14);
	u_free_unit(15);
	u_chunk(blk, 14, 2);
	u_list_empty(1);
	/* Right neighbour free. */
	u_free_unit(21);
	u_free_unit(20);
	u_chunk(blk, 20, 2);
	u_list_empty(1);
	/* Both. */
	u_free_unit(30);
	u_free_unit(32);
	u_free_unit(31);
	u_chunk(blk, 30, 3);
	u_list_empty(1);
	/* Both, long runs: 40..49 + 50 + 51..60. */
	for (u = 40; u < 50; u++)
		u_free_unit(u);
	for (u = 60; u > 50; u--)
		u_free_unit(u);
	u_chunk(blk, 40, 10);
	u_chunk(blk, 51, 10);
	u_free_unit(50);
	u_chunk(blk, 40, 21);
	u_list_empty(10);
	/* Next to the header: never merges left. */
	u_free_unit(NTA_HDR_UNITS + 1);
	u_free_unit(NTA_HDR_UNITS);
	u_chunk(blk, NTA_HDR_UNITS, 2);
	/* At the block end: never merges right. */
	u_free_unit(U_END - 1);
	u_free_unit(U_END - 2);
	u_chunk(blk, U_END - 2, 2);
	u_check();
	/* Chunks of one size: several on a list, all found. */
	EXPECT(test_bit(2, c->pool.nonempty), "free[2] has three chunks");
	u_chunk(blk, 14, 2);
	u_chunk(blk, 20, 2);
	/* Merge a run that swallows three chunks of two different lists. */
	for (u = 16; u < 20; u++)
		u_free_unit(u);
	u_chunk(blk, 14, 8);
	for (u = 22; u < 30; u++)
		u_free_unit(u);
	u_chunk(blk, 14, 19);
	u_check();
	for (u = 0; u < U_END; u++)
		if (objs[u])
			u_free_unit(u);
	u_chunk(blk, NTA_HDR_UNITS, NTA_DATA_UNITS);
	u_list_empty(1);
	u_list_empty(2);
	u_teardown();
}

static void test_best_fit(void)
{
	struct nta_block *blk = u_setup(1);
	unsigned int u;
	void *a, *b, *d;

	ASSERT(u_fill(blk), "fill");
	for (u = 12; u < 14; u++)
		u_free_unit(u);			/* 2 units at 12 */
	for (u = 20; u < 25; u++)
		u_free_unit(u);			/* 5 units at 20 */
	for (u = 40; u < 49; u++)
		u_free_unit(u);			/* 9 units at 40 */
	u_free_unit(60);			/* 1 unit at 60 */
	u_check();
	EXPECT(nta_pool_largest_free(&c->pool) == 9 * NTA_UNIT, "largest is 9 units");
	a = u_alloc_at(blk, 4, 20);		/* smallest fit is 5 */
	u_chunk(blk, 24, 1);
	b = u_alloc_at(blk, 6, 40);		/* smallest fit is 9 */
	u_chunk(blk, 46, 3);
	EXPECT(!nta_pool_alloc(&c->pool, 10 * NTA_UNIT), "nothing holds 10 units");
	d = u_alloc_at(blk, 2, 12);		/* exact fit */
	u_list_empty(2);
	u_check();
	u_free(a, 4 * NTA_UNIT);
	u_free(b, 6 * NTA_UNIT);
	u_free(d, 2 * NTA_UNIT);
	for (u = 0; u < U_END; u++)
		if (objs[u])
			u_free_unit(u);
	u_teardown();
}

/*
 * Above the reserve, a block that becomes wholly free goes back only when
 * the pool already has another wholly free block: one spare is kept.
 */
static void test_reserve_release(void)
{
	/* Freeing blocks 0..4 of 5 with a reserve of 2: 0 stays as the spare. */
	static const bool released_want[5] = { false, true, true, true, false };
	struct nta_block *blks[5];
	LIST_HEAD(released);
	void *p[5];
	unsigned int i;

	u_setup(2);
	for (i = 0; i < 5; i++) {
		p[i] = h_alloc(c, NTA_MAX_SIZE);
		ASSERT(p[i], "alloc %u", i);
		blks[i] = nta_block_of(p[i]);
	}
	EXPECT(c->pool.nr_blocks == 5 && c->grows == 3, "5 blocks, 3 grown");
	u_check();
	for (i = 0; i < 5; i++) {
		struct nta_block *blk;

		EXPECT(nta_check_free(blks[i], p[i], NTA_MAX_SIZE) == NTA_FREE_OK, "check");
		nta_pool_free(&c->pool, p[i], NTA_MAX_SIZE, &released);
		if (released_want[i]) {
			EXPECT(list_is_singular(&released) &&
			       list_first_entry(&released, struct nta_block, link) == blks[i],
			       "free %u: block released", i);
			list_for_each_entry(blk, &c->pool.blocks, link)
				EXPECT(blk != blks[i], "released block still in the pool");
		} else {
			EXPECT(list_empty(&released), "free %u: block kept (%s)", i,
			       i ? "reserve" : "spare above the reserve");
			u_chunk(blks[i], NTA_HDR_UNITS, NTA_DATA_UNITS);
		}
		h_release(c, &released);
		EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET | H_CHECK_RELEASE, NULL) == 0,
		       "pool after free %u", i);
	}
	EXPECT(c->pool.nr_blocks == 2 && c->pool.free_units == 2 * NTA_DATA_UNITS &&
	       c->returns == 3, "the reserve is left: %u blocks, %lu returns",
	       c->pool.nr_blocks, c->returns);
	EXPECT(h_trim(c) == 0 && c->pool.nr_blocks == 2, "trim keeps the reserve");

	/* The embedder may take a wholly free block away by hand. */
	EXPECT(nta_pool_remove_block(&c->pool, blks[0]), "remove a wholly free block");
	free(blks[0]);
	atomic_dec(&h_blocks_live);
	EXPECT(c->pool.nr_blocks == 1 && c->pool.free_units == NTA_DATA_UNITS,
	       "remove_block: %u blocks, %lu free units", c->pool.nr_blocks,
	       c->pool.free_units);
	u_chunk(blks[4], NTA_HDR_UNITS, NTA_DATA_UNITS);
	u_check();
	u_teardown();

	/* Reserve 0: the only block stays as the spare until a trim. */
	u_setup(0);
	EXPECT(!nta_pool_alloc(&c->pool, 1), "empty pool");
	p[0] = h_alloc(c, 100);
	ASSERT(p[0], "grow from nothing");
	u_free(p[0], 100);
	EXPECT(c->pool.nr_blocks == 1 && c->returns == 0 &&
	       c->pool.free_units == NTA_DATA_UNITS, "spare kept: %u blocks, %lu returns",
	       c->pool.nr_blocks, c->returns);
	p[0] = h_alloc(c, 100);
	EXPECT(p[0] && c->grows == 1, "the spare serves the next alloc: %lu grows", c->grows);
	u_free(p[0], 100);
	EXPECT(h_trim(c) == 1, "trim gives the spare back");
	EXPECT(c->pool.nr_blocks == 0 && c->returns == 1 && c->pool.free_units == 0 &&
	       bitmap_empty(c->pool.nonempty, NTA_NR_LISTS) && list_empty(&c->pool.blocks),
	       "block returned");
	EXPECT(h_trim(c) == 0, "nothing left to trim");
	u_teardown();
}

/* Is @blk on @pool's block list? */
static bool u_has_block(const struct nta_block *blk)
{
	const struct nta_block *b;

	list_for_each_entry(b, &c->pool.blocks, link)
		if (b == blk)
			return true;
	return false;
}

/*
 * The spare rule in detail, the hysteresis it buys, and nta_pool_trim():
 * every wholly free block above the reserve goes, nothing else does.
 */
static void test_spare_trim(void)
{
	struct nta_block *a, *b;
	LIST_HEAD(released);
	void *p, *q, *r;
	unsigned int i;

	/* The older spare stays, the block that just became free goes. */
	u_setup(0);
	p = h_alloc(c, NTA_MAX_SIZE);
	q = h_alloc(c, NTA_MAX_SIZE);
	ASSERT(p && q && c->pool.nr_blocks == 2, "two blocks");
	a = nta_block_of(p);
	b = nta_block_of(q);
	nta_pool_free(&c->pool, p, NTA_MAX_SIZE, &released);
	EXPECT(list_empty(&released) && u_has_block(a), "first empty block kept as spare");
	nta_pool_free(&c->pool, q, NTA_MAX_SIZE, &released);
	EXPECT(list_is_singular(&released) &&
	       list_first_entry(&released, struct nta_block, link) == b,
	       "second empty block released");
	h_release(c, &released);
	EXPECT(c->pool.nr_blocks == 1 && u_has_block(a) && !u_has_block(b), "spare is a");
	u_chunk(a, NTA_HDR_UNITS, NTA_DATA_UNITS);
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET | H_CHECK_RELEASE, NULL) == 0, "pool");
	p = h_alloc(c, NTA_MAX_SIZE);
	EXPECT(p && nta_block_of(p) == a && c->grows == 2, "the spare is used again");
	u_free(p, NTA_MAX_SIZE);
	EXPECT(c->pool.nr_blocks == 1, "and kept again");
	EXPECT(h_trim(c) == 1 && c->pool.nr_blocks == 0 && c->returns == 2, "trimmed");
	u_teardown();

	/* A pool hovering at a block boundary grows once, not every time. */
	u_setup(1);
	p = h_alloc(c, NTA_MAX_SIZE);		/* fills the reserve block */
	ASSERT(p, "fill");
	for (i = 0; i < 1000; i++) {
		q = h_alloc(c, 1 + i % 2000);
		if (!EXPECT(q, "alloc %u", i))
			break;
		u_free(q, 1 + i % 2000);
	}
	EXPECT(c->grows == 1 && c->returns == 0 && c->pool.nr_blocks == 2,
	       "1000 alloc+free over the boundary: %lu grows, %lu returns", c->grows,
	       c->returns);
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET | H_CHECK_RELEASE, NULL) == 0, "pool");
	EXPECT(h_trim(c) == 1 && c->pool.nr_blocks == 1 && u_has_block(nta_block_of(p)),
	       "trim returns the spare, not the busy reserve block");
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET | H_CHECK_TRIMMED, NULL) == 0, "trimmed");
	u_free(p, NTA_MAX_SIZE);
	EXPECT(c->pool.nr_blocks == 1 && h_trim(c) == 0, "the reserve block stays");
	u_teardown();

	/*
	 * Wholly free blocks above the reserve (added by the embedder, as
	 * nta_cpu_online() does, or left when the reserve is lowered): trim
	 * takes them down to the reserve, and never a busy block.
	 */
	u_setup(3);
	ASSERT(h_grow(c) && c->pool.nr_blocks == 4, "4 blocks");
	/* One object in one block, two in another; two blocks stay free. */
	p = h_alloc(c, NTA_MAX_SIZE);
	q = h_alloc(c, 1);
	r = h_alloc(c, 1);
	ASSERT(p && q && r && nta_block_of(p) != nta_block_of(q) &&
	       nta_block_of(q) == nta_block_of(r), "objects in two blocks");
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET, NULL) == 0, "pool");
	/* A remote free in flight keeps its block busy for nta_pool_trim(). */
	h_cpu_init(&h_cpus[1], 1, 0, 0);
	EXPECT(h_free(&h_cpus[1], q, 1) == NTA_FREE_OK, "remote free");
	EXPECT(nta_pool_trim(&c->pool, &released, UINT_MAX) == 1, "trim: one block above the reserve");
	i = 0;
	list_for_each_entry(a, &released, link) {
		EXPECT(a != nta_block_of(p) && a != nta_block_of(q), "busy block %p trimmed", a);
		i++;
	}
	EXPECT(i == 1, "%u blocks on the released list", i);
	h_release(c, &released);
	EXPECT(c->pool.nr_blocks == 3 && c->returns == 1, "%u blocks", c->pool.nr_blocks);
	EXPECT(h_check_pool(&c->pool, H_CHECK_RELEASE | H_CHECK_TRIMMED, NULL) == 0, "pool");
	EXPECT(nta_pool_trim(&c->pool, &released, UINT_MAX) == 0, "at the reserve: nothing to trim");
	/* With the reserve lowered to 0 the last wholly free block goes too. */
	c->pool.reserve = 0;
	EXPECT(nta_pool_trim(&c->pool, &released, UINT_MAX) == 1, "the last wholly free block");
	h_release(c, &released);
	EXPECT(c->pool.nr_blocks == 2 && u_has_block(nta_block_of(p)) &&
	       u_has_block(nta_block_of(q)), "busy blocks stay");
	EXPECT(h_check_pool(&c->pool, H_CHECK_TRIMMED, NULL) == 0, "pool");
	/* Freeing r drains q as well: their block becomes the spare. */
	u_free(r, 1);
	EXPECT(c->pool.nr_blocks == 2 && c->returns == 2, "spare kept");
	EXPECT(h_trim(c) == 1, "trim the spare");
	EXPECT(c->pool.nr_blocks == 1 && u_has_block(nta_block_of(p)), "one block");
	u_free(p, NTA_MAX_SIZE);
	EXPECT(c->pool.nr_blocks == 1, "the last block is the spare");
	EXPECT(h_trim(c) == 1 && c->pool.nr_blocks == 0, "trim to nothing");
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET | H_CHECK_TRIMMED, NULL) == 0, "empty");
	EXPECT(h_cpu_destroy(&h_cpus[1]) == 0, "other");
	u_teardown();
}

/* Two blocks: objects go back to their own block and merge there only. */
static void test_two_blocks(void)
{
	struct nta_block *b0, *b1;
	void *p, *q, *r;

	u_setup(2);
	p = u_alloc(NTA_MAX_SIZE);
	q = u_alloc(NTA_MAX_SIZE - NTA_UNIT);
	ASSERT(p && q && nta_block_of(p) != nta_block_of(q), "one per block");
	b0 = nta_block_of(p);
	b1 = nta_block_of(q);
	r = u_alloc_at(b1, 1, U_END - 1);
	EXPECT(!nta_pool_alloc(&c->pool, 1), "both full");
	u_free(q, NTA_MAX_SIZE - NTA_UNIT);
	u_chunk(b1, NTA_HDR_UNITS, NTA_DATA_UNITS - 1);
	u_free(p, NTA_MAX_SIZE);
	u_chunk(b0, NTA_HDR_UNITS, NTA_DATA_UNITS);
	u_free(r, 1);
	u_chunk(b1, NTA_HDR_UNITS, NTA_DATA_UNITS);
	u_teardown();
}

/* Remote frees from this thread to another pool, with kick and drain. */
#define RSIZE(i)	(1 + (i) * 3)	/* 14 objects of 1..1 units: one block */
#define RBLOCKS		(NTA_DRAIN_BLOCKS + 4)
static void test_remote_drain(void)
{
	struct hcpu *other = &h_cpus[1];
	unsigned int i, n = 14, kicks = 0;
	unsigned long returns;
	void *p[RBLOCKS];
	LIST_HEAD(released);

	u_setup(1);
	for (i = 0; i < n; i++) {
		p[i] = h_alloc(c, RSIZE(i));
		ASSERT(p[i], "alloc");
	}
	h_cpu_init(other, 1, 0, 0);
	/* Objects of one block: the first free queues the block, once. */
	for (i = 0; i < n; i++) {
		unsigned int queued = ~0u;

		EXPECT(nta_check_free(nta_block_of(p[i]), p[i], RSIZE(i)) == NTA_FREE_OK,
		       "check %u", i);
		EXPECT(nta_remote_free(&c->pool, p[i], RSIZE(i), &queued) == NTA_FREE_OK,
		       "remote free %u", i);
		EXPECT(queued == (i ? 0 : 1), "remote free %u: queued %u", i, queued);
		EXPECT(nta_check_free(nta_block_of(p[i]), p[i], RSIZE(i)) ==
		       NTA_FREE_PENDING, "pending %u", i);
	}
	EXPECT(atomic_read(&c->pool.remote_blocks) == 1, "remote_blocks");
	EXPECT(h_check_pool(&c->pool, 0, NULL) == 0, "pool with frees in flight");
	EXPECT(nta_pool_drain(&c->pool, &released) == n, "drained all");
	EXPECT(list_empty(&released) && c->pool.nr_blocks == 1, "one reserve block");
	EXPECT(nta_pool_drain(&c->pool, &released) == 0, "nothing left");
	EXPECT(atomic_read(&c->pool.remote_blocks) == 0, "remote_blocks back to 0");
	u_chunk(nta_block_of(p[0]), NTA_HDR_UNITS, NTA_DATA_UNITS);
	for (i = 0; i < n; i++)
		EXPECT(nta_check_free(nta_block_of(p[0]), p[i], RSIZE(i)) ==
		       NTA_FREE_NOT_ALLOCATED, "gone %u", i);

	/* One object per block: nta_queue_for_owner() kicks when the threshold-th is queued. */
	for (i = 0; i < RBLOCKS; i++) {
		p[i] = h_alloc(c, NTA_MAX_SIZE);
		ASSERT(p[i], "alloc block %u", i);
	}
	for (i = 0; i < RBLOCKS; i++) {
		unsigned int queued = ~0u;

		EXPECT(nta_remote_free(&c->pool, p[i], NTA_MAX_SIZE, &queued) ==
		       NTA_FREE_OK && queued == i + 1, "block %u: queued %u", i, queued);
		if (queued == NTA_KICK_BLOCKS)
			kicks++;
	}
	EXPECT(kicks == 1, "%u kicks", kicks);
	/* One drain takes NTA_DRAIN_BLOCKS blocks on; the rest stays queued. */
	EXPECT(nta_pool_drain(&c->pool, &released) == NTA_DRAIN_BLOCKS,
	       "first drain bounded");
	EXPECT(atomic_read(&c->pool.remote_blocks) == RBLOCKS - NTA_DRAIN_BLOCKS &&
	       !llist_empty(&c->pool.remote), "the rest still queued");
	EXPECT(h_check_pool(&c->pool, 0, NULL) == 0, "pool between drains");
	EXPECT(nta_pool_drain(&c->pool, &released) == RBLOCKS - NTA_DRAIN_BLOCKS,
	       "second drain takes the rest");
	EXPECT(atomic_read(&c->pool.remote_blocks) == 0, "remote_blocks back to 0");
	h_release(c, &released);

	/* The count starts again at 1: the owner has nothing pending. */
	{
		unsigned int queued = ~0u;

		p[0] = h_alloc(c, 640);
		ASSERT(p[0], "alloc");
		EXPECT(nta_remote_free(&c->pool, p[0], 640, &queued) == NTA_FREE_OK &&
		       queued == 1, "first queued after a drain: %u", queued);
		EXPECT(h_drain(c) == 1, "drain it");
	}

	/*
	 * A drain that empties two blocks above the reserve of 1: one of them
	 * is given back, the other stays as the spare.
	 */
	returns = c->returns;
	p[0] = h_alloc(c, NTA_MAX_SIZE);
	p[1] = h_alloc(c, NTA_MAX_SIZE);
	ASSERT(p[0] && p[1] && c->pool.nr_blocks == 2, "two blocks");
	EXPECT(h_free(other, p[0], NTA_MAX_SIZE) == NTA_FREE_OK, "remote 0");
	EXPECT(h_free(other, p[1], NTA_MAX_SIZE) == NTA_FREE_OK, "remote 1");
	EXPECT(other->remote_frees == 2, "counted on the freer");
	EXPECT(h_drain(c) == 2 && c->pool.nr_blocks == 1 && c->returns == returns + 1,
	       "drain released one block: %u blocks, %lu returns", c->pool.nr_blocks,
	       c->returns - returns);
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET | H_CHECK_RELEASE, NULL) == 0, "pool");
	u_check();
	EXPECT(h_cpu_destroy(other) == 0, "other");
	u_teardown();
}

/* Small random workload in one block, full check after every operation. */
static void test_random_small(void)
{
	struct { void *p; unsigned int size; } live[NTA_DATA_UNITS];
	unsigned int nlive = 0, op, errors = 0;
	struct rng r;

	u_setup(1);
	c->max_blocks = 1;
	rng_seed(&r, 42);
	for (op = 0; op < 20000 && !errors; op++) {
		if (nlive && (rng_next(&r) & 1)) {
			unsigned int i = rng_range(&r, 0, nlive - 1);

			u_free(live[i].p, live[i].size);
			live[i] = live[--nlive];
		} else {
			unsigned int size = rng_range(&r, 1, op & 1 ? 300 : 3000);
			void *p = u_alloc(size);

			if (p) {
				live[nlive].p = p;
				live[nlive++].size = size;
			}
		}
		errors = h_check_pool(&c->pool, H_CHECK_QUIET, NULL);
	}
	EXPECT(!errors, "after op %u", op);
	while (nlive--)
		u_free(live[nlive].p, live[nlive].size);
	u_teardown();
}

const struct test unit_tests[] = {
	{ "unit_whole_block", test_whole_block, 0 },
	{ "unit_first_last_unit", test_first_last_unit, 0 },
	{ "unit_sizes", test_sizes, 0 },
	{ "unit_word_edges", test_word_edges, 0 },
	{ "unit_split_remainder_1", test_split_remainder, 0 },
	{ "unit_merges", test_merges, 0 },
	{ "unit_best_fit", test_best_fit, 0 },
	{ "unit_reserve_release", test_reserve_release, 0 },
	{ "unit_spare_trim", test_spare_trim, 0 },
	{ "unit_two_blocks", test_two_blocks, 0 },
	{ "unit_remote_drain", test_remote_drain, 0 },
	{ "unit_random_small", test_random_small, 0 },
	{ NULL }
};
