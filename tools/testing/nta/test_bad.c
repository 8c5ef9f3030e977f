// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input: every refused free gives the right reason and leaves the pool
 * exactly as it was (pool struct and every block byte for byte), through
 * both nta_check_free() and the embedder path h_free() built like nta.c's
 * nta_free().  And, with CONFIG_NTA_DEBUG, a write after free is reported
 * once, on the next allocation of the chunk.
 */
#include "harness.h"

static struct hcpu *c = &h_cpus[0];
static struct hcpu *other = &h_cpus[1];

/*
 * Both the bare check and the full free path refuse (@ptr, @size) with
 * @want, and the pool does not change by a single byte.
 */
static void expect_refused(const char *what, void *ptr, unsigned int size,
			   enum nta_bad_free want)
{
	struct nta_block *blk = nta_block_of(ptr);
	struct h_snapshot snap;
	enum nta_bad_free got;

	h_snapshot_take(&snap, &c->pool);
	got = nta_check_free(blk, ptr, size);
	EXPECT(got == want, "%s: nta_check_free says \"%s\", want \"%s\"", what,
	       nta_bad_free_reason(got), nta_bad_free_reason(want));
	got = h_free(c, ptr, size);
	EXPECT(got == want, "%s: local free says \"%s\"", what, nta_bad_free_reason(got));
	got = h_free(other, ptr, size);
	EXPECT(got == want, "%s: remote free says \"%s\"", what, nta_bad_free_reason(got));
	EXPECT(h_snapshot_same(&snap, &c->pool), "%s: pool changed", what);
	h_snapshot_free(&snap);
}

static void test_bad_free(void)
{
	struct nta_block *blk;
	char *a, *b, *cc, *d, *e, *end;
	unsigned long bad;
	struct h_snapshot snap;
	bool kick;

	h_cpu_init(c, 0, 1, 1);
	h_cpu_init(other, 1, 0, 0);
	blk = list_first_entry(&c->pool.blocks, struct nta_block, link);
	a = h_alloc(c, 640);		/* 10 units */
	b = h_alloc(c, 100);		/* 2 units */
	cc = h_alloc(c, 64);		/* 1 unit */
	d = h_alloc(c, 3000);		/* 47 units */
	e = h_alloc(c, 1);		/* 1 unit; the rest of the block is free */
	ASSERT(a && b && cc && d && e && nta_block_of(e) == blk, "setup");
	ASSERT(h_free(c, cc, 64) == NTA_FREE_OK, "free c");
	end = (char *)blk + NTA_BLOCK_SIZE - NTA_UNIT;
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET, NULL) == 0, "setup pool");

	expect_refused("double free", cc, 64, NTA_FREE_NOT_ALLOCATED);
	expect_refused("free of free space", end, 64, NTA_FREE_NOT_ALLOCATED);
	expect_refused("interior unit", a + NTA_UNIT, 64, NTA_FREE_NOT_ALLOCATED);
	expect_refused("last unit of an object", d + 46 * NTA_UNIT, 64,
		       NTA_FREE_NOT_ALLOCATED);
	expect_refused("misaligned +1", a + 1, 640, NTA_FREE_MISALIGNED);
	expect_refused("misaligned +63", a + 63, 640, NTA_FREE_MISALIGNED);
	expect_refused("misaligned in free space", end + 8, 64, NTA_FREE_MISALIGNED);
	expect_refused("block start", (char *)blk, 64, NTA_FREE_MISALIGNED);
	expect_refused("header unit 1", (char *)blk + NTA_UNIT, 64, NTA_FREE_MISALIGNED);
	expect_refused("header last byte", (char *)blk + NTA_HDR_UNITS * NTA_UNIT - 1,
		       64, NTA_FREE_MISALIGNED);
	expect_refused("size too small", a, 576, NTA_FREE_WRONG_SIZE);
	expect_refused("size too big", a, 641 + NTA_UNIT, NTA_FREE_WRONG_SIZE);
	expect_refused("size of the neighbour too", a, 640 + 100, NTA_FREE_WRONG_SIZE);
	expect_refused("size 0", a, 0, NTA_FREE_WRONG_SIZE);
	expect_refused("size UINT_MAX", a, UINT_MAX, NTA_FREE_WRONG_SIZE);
	expect_refused("size NTA_MAX_SIZE + 1", a, NTA_MAX_SIZE + 1, NTA_FREE_WRONG_SIZE);
	expect_refused("1-unit object, 2-unit size", e, 65, NTA_FREE_WRONG_SIZE);
	expect_refused("47 units, 48-unit size", d, 47 * NTA_UNIT + 1, NTA_FREE_WRONG_SIZE);
	/* Sizes are checked in units: the same units are the same object. */
	EXPECT(nta_check_free(blk, a, 577) == NTA_FREE_OK, "577 is 10 units too");

	/* Remote double free: the pending bit refuses the second one. */
	EXPECT(h_free(other, b, 100) == NTA_FREE_OK, "first remote free");
	EXPECT(other->remote_frees == 1, "counted");
	expect_refused("remote double free", b, 100, NTA_FREE_PENDING);
	h_snapshot_take(&snap, &c->pool);
	EXPECT(nta_remote_free(&c->pool, b, 100, &kick) == NTA_FREE_PENDING && !kick,
	       "nta_remote_free twice");
	EXPECT(h_snapshot_same(&snap, &c->pool), "second remote free changed the pool");
	h_snapshot_free(&snap);
	EXPECT(h_drain(c) == 1, "owner drains the first free only");
	expect_refused("free after remote free drained", b, 100, NTA_FREE_NOT_ALLOCATED);
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET, NULL) == 0, "pool after drain");

	bad = c->bad_frees + other->bad_frees;
	EXPECT(bad == 2 * 20 + 2, "%lu bad frees counted", bad);
	EXPECT(c->frees == 1 && other->remote_frees == 1 && c->drained == 1,
	       "only the good frees happened");
	EXPECT(h_free(c, a, 577) == NTA_FREE_OK && h_free(c, d, 3000) == NTA_FREE_OK &&
	       h_free(other, e, 1) == NTA_FREE_OK, "good frees");
	EXPECT(h_drain(c) == 1, "drain e");
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET | H_CHECK_RELEASE, NULL) == 0,
	       "pool at the end");
	EXPECT(c->pool.free_units == NTA_DATA_UNITS, "everything free");
	EXPECT(h_cpu_destroy(c) == 0 && h_cpu_destroy(other) == 0, "teardown");
}

/* CONFIG_NTA_DEBUG: a write after free is reported on the next alloc. */
static void test_debug_poison(void)
{
	int before = atomic_read(&h_poison_reports);
	char *a, *b, *cc, *d, *p;
	struct nta_block *blk;

	h_cpu_init(c, 0, 1, 1);
	blk = list_first_entry(&c->pool.blocks, struct nta_block, link);

	/* Clean use raises nothing. */
	a = h_alloc(c, 640);
	b = h_alloc(c, 640);
	ASSERT(a && b, "alloc");
	memset(a, 0xa5, 640);
	EXPECT(h_free(c, a, 640) == NTA_FREE_OK, "free a");
	a = h_alloc(c, 640);
	EXPECT(atomic_read(&h_poison_reports) == before, "no report on clean reuse");

	/* A byte written into a freed, unmerged chunk. */
	EXPECT(h_free(c, a, 640) == NTA_FREE_OK, "free a again");
	a[100] = 0;
	p = h_alloc(c, 640);
	EXPECT(p == a, "the same chunk comes back");
	EXPECT(atomic_read(&h_poison_reports) == before + 1, "%d reports, want 1",
	       atomic_read(&h_poison_reports) - before);
	EXPECT(h_last_poison_chunk == a && h_last_poison_bad == a + 100 &&
	       h_last_poison_units == 10, "report names chunk, units and byte");
	/* The last byte of a chunk. */
	EXPECT(h_free(c, a, 640) == NTA_FREE_OK, "free a, 3rd");
	a[639] = 1;
	p = h_alloc(c, 640);
	EXPECT(p == a && atomic_read(&h_poison_reports) == before + 2 &&
	       h_last_poison_bad == a + 639, "last byte of the chunk");
	EXPECT(h_free(c, p, 640) == NTA_FREE_OK && h_free(c, b, 640) == NTA_FREE_OK,
	       "free");

	/* A write into the middle of a chunk that merged on both sides. */
	before = atomic_read(&h_poison_reports);
	a = h_alloc(c, 640);
	b = h_alloc(c, 640);
	cc = h_alloc(c, 640);
	d = h_alloc(c, 640);
	ASSERT(a == (char *)blk + NTA_HDR_UNITS * NTA_UNIT && b == a + 640 &&
	       cc == b + 640 && d == cc + 640, "four adjacent objects");
	EXPECT(h_free(c, a, 640) == NTA_FREE_OK && h_free(c, cc, 640) == NTA_FREE_OK &&
	       h_free(c, b, 640) == NTA_FREE_OK, "free a, c, b");
	b[0] = 0x11;		/* b was never a list head */
	cc[3] = 0x22;		/* c's list link was poisoned when it merged */
	p = h_alloc(c, 3 * 640);
	EXPECT(p == a, "the merged chunk");
	EXPECT(atomic_read(&h_poison_reports) == before + 1 && h_last_poison_bad == b,
	       "one report, first bad byte");
	EXPECT(h_free(c, p, 3 * 640) == NTA_FREE_OK && h_free(c, d, 640) == NTA_FREE_OK,
	       "free");

	/* The remainder of a split keeps its poison checked too. */
	before = atomic_read(&h_poison_reports);
	a = h_alloc(c, 640);
	ASSERT(a, "alloc");
	a[640 + 200] = 0;	/* in the free remainder after a */
	p = h_alloc(c, 640);
	EXPECT(p == a + 640 && atomic_read(&h_poison_reports) == before + 1,
	       "write into the remainder caught");
	EXPECT(h_free(c, p, 640) == NTA_FREE_OK && h_free(c, a, 640) == NTA_FREE_OK,
	       "free");
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET, NULL) == 0, "pool");
	EXPECT(h_cpu_destroy(c) == 0, "teardown");
}

const struct test bad_tests[] = {
	{ "bad_free", test_bad_free, 0 },
	{ "debug_poison", test_debug_poison, T_DEBUG_ONLY },
	{ NULL, NULL, 0 }
};
