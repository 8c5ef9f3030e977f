// SPDX-License-Identifier: GPL-2.0
/*
 * Bad input: every refused free gives the right reason and leaves the pool
 * exactly as it was (pool struct and every block byte for byte).  On the
 * owner nta_check_free() refuses at once; off the owner nta_remote_free()
 * refuses at once what it can check from the object's own bits, and
 * queues a wrong size, which the owner's drain reports once through
 * nta_report_bad_free() and leaves allocated.  nta_pool_remove_block()
 * refuses a block with live objects (WARN, counted by the shim).  And,
 * with CONFIG_NTA_DEBUG, a write after free is reported once, on the next
 * allocation of the chunk.  And nta_pool_check() finds corruption planted
 * in a pool's fields, bitmaps, length bytes and links.
 */
#include "harness.h"

static struct hcpu *c = &h_cpus[0];
static struct hcpu *other = &h_cpus[1];

/* What expect_refused() made the harness count. */
static unsigned long exp_local_bad, exp_remote_bad, exp_queued, exp_reports;

/*
 * The owner's check and free refuse (@ptr, @size) with @want, and so does
 * a free from another CPU, at once: the object's length byte is read
 * before anything is written, so the pool does not change by a single
 * byte.
 */
static void expect_refused(const char *what, void *ptr, unsigned int size,
			   enum nta_bad_free want)
{
	struct nta_block *blk = nta_block_of(ptr);
	struct h_snapshot snap;
	enum nta_bad_free got;
	unsigned int queued;

	h_snapshot_take(&snap, &c->pool);
	got = nta_check_free(blk, ptr, size);
	EXPECT(got == want, "%s: nta_check_free says \"%s\", want \"%s\"", what,
	       nta_bad_free_reason(got), nta_bad_free_reason(want));
	got = h_free(c, ptr, size);
	EXPECT(got == want, "%s: local free says \"%s\"", what, nta_bad_free_reason(got));
	exp_local_bad++;
	EXPECT(h_snapshot_same(&snap, &c->pool), "%s: pool changed by the owner", what);

	{
		queued = ~0u;
		got = nta_remote_free(&c->pool, ptr, size, &queued);
		EXPECT(got == want && queued == 0, "%s: nta_remote_free says \"%s\", queued %u",
		       what, nta_bad_free_reason(got), queued);
		got = h_free(other, ptr, size);
		EXPECT(got == want, "%s: remote free says \"%s\"", what,
		       nta_bad_free_reason(got));
		exp_remote_bad++;
		EXPECT(h_snapshot_same(&snap, &c->pool), "%s: pool changed", what);
	}
	h_snapshot_free(&snap);
}

static void test_bad_free(void)
{
	struct nta_block *blk;
	char *a, *b, *cc, *d, *e, *end;
	int reports0 = atomic_read(&h_bad_drain_reports);
	struct h_snapshot snap;
	unsigned int queued;

	exp_local_bad = exp_remote_bad = exp_queued = exp_reports = 0;
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
	expect_refused("size NTA_MAX_SIZE", a, NTA_MAX_SIZE, NTA_FREE_WRONG_SIZE);
	expect_refused("1-unit object, 2-unit size", e, 65, NTA_FREE_WRONG_SIZE);
	expect_refused("47 units, 48-unit size", d, 47 * NTA_UNIT + 1, NTA_FREE_WRONG_SIZE);
	/* Sizes are checked in units: the same units are the same object. */
	EXPECT(nta_check_free(blk, a, 577) == NTA_FREE_OK, "577 is 10 units too");

	/* Remote double free: the pending bit refuses the second one. */
	EXPECT(h_free(other, b, 100) == NTA_FREE_OK, "first remote free");
	EXPECT(other->remote_frees == exp_queued + 1, "counted");
	expect_refused("remote double free", b, 100, NTA_FREE_PENDING);
	expect_refused("remote double free, wrong size", b, 200, NTA_FREE_PENDING);
	h_snapshot_take(&snap, &c->pool);
	EXPECT(nta_remote_free(&c->pool, b, 100, &queued) == NTA_FREE_PENDING && !queued,
	       "nta_remote_free twice");
	EXPECT(h_snapshot_same(&snap, &c->pool), "second remote free changed the pool");
	h_snapshot_free(&snap);
	EXPECT(h_drain(c) == 1, "owner drains the first free only");
	expect_refused("free after remote free drained", b, 100, NTA_FREE_NOT_ALLOCATED);
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET, NULL) == 0, "pool after drain");

	EXPECT(c->bad_frees == exp_local_bad && other->bad_frees == exp_remote_bad,
	       "bad frees counted: owner %lu (want %lu), other %lu (want %lu)",
	       c->bad_frees, exp_local_bad, other->bad_frees, exp_remote_bad);
	EXPECT(atomic_read(&h_bad_drain_reports) - reports0 == (int)exp_reports,
	       "%d drain reports, want %lu", atomic_read(&h_bad_drain_reports) - reports0,
	       exp_reports);
	EXPECT(c->frees == 1 && other->remote_frees == exp_queued + 1 && c->drained == 1,
	       "only the good frees happened");
	EXPECT(h_free(c, a, 577) == NTA_FREE_OK && h_free(c, d, 3000) == NTA_FREE_OK &&
	       h_free(other, e, 1) == NTA_FREE_OK, "good frees");
	EXPECT(h_drain(c) == 1, "drain e");
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET | H_CHECK_RELEASE, NULL) == 0,
	       "pool at the end");
	EXPECT(c->pool.free_units == NTA_DATA_UNITS, "everything free");
	EXPECT(h_cpu_destroy(c) == 0 && h_cpu_destroy(other) == 0, "teardown");
}

static void fill(void *p, unsigned int size, unsigned char v)
{
	memset(p, v, size);
}

static bool filled(const void *p, unsigned int from, unsigned int size, unsigned char v)
{
	const unsigned char *q = p;
	unsigned int i;

	for (i = from; i < size; i++)
		if (q[i] != v)
			return false;
	return true;
}

/*
 * A remote free with the wrong size is refused at once: the freer reads
 * the object's length byte before it writes anything, so nothing is
 * queued and no byte of the object or the pool changes.  The owner's
 * drain checks again, for a free that raced with the owner's own (here
 * simulated by clearing the length byte while the object is queued).
 * With init_on_free, which wipes a freed object, as the worst case.
 */
static void test_bad_remote_size(void)
{
	int reports0 = atomic_read(&h_bad_drain_reports);
	struct h_snapshot snap;
	struct nta_block *blk;
	char *a, *b, *d, *e;
	unsigned int queued, ua;

	h_cpu_init(c, 0, 1, 1);
	h_cpu_init(other, 1, 0, 0);
	a = h_alloc(c, 640);		/* 10 units */
	b = h_alloc(c, 100);		/* 2 units, right after a */
	d = h_alloc(c, 1000);		/* 16 units */
	e = h_alloc(c, 1);
	ASSERT(a && b == a + 640 && d && e, "setup");
	blk = nta_block_of(a);
	ua = h_unit(a);
	fill(a, 640, 0xaa);
	fill(b, 100, 0xbb);
	fill(d, 1000, 0xdd);
	fill(e, 1, 0xee);
	c->pool.init_on_free = true;

	h_snapshot_take(&snap, &c->pool);
	queued = ~0u;
	EXPECT(nta_remote_free(&c->pool, a, 700, &queued) == NTA_FREE_WRONG_SIZE && !queued,
	       "wrong size refused, queued %u", queued);
	EXPECT(nta_remote_free(&c->pool, a, 640 + 100, &queued) == NTA_FREE_WRONG_SIZE,
	       "a + b's size refused");
	EXPECT(nta_remote_free(&c->pool, d, 2000, &queued) == NTA_FREE_WRONG_SIZE,
	       "d, twice its size, refused");
	EXPECT(!test_bit(ua, blk->pending) && atomic_read(&c->pool.remote_blocks) == 0,
	       "nothing pending or queued");
	EXPECT(filled(a, 0, 640, 0xaa) && filled(b, 0, 100, 0xbb) &&
	       filled(d, 0, 1000, 0xdd) && filled(e, 0, 1, 0xee), "no byte written");
	EXPECT(h_snapshot_same(&snap, &c->pool), "pool changed");
	h_snapshot_free(&snap);

	/* A free that raced with the owner's own free: the drain refuses it. */
	EXPECT(nta_remote_free(&c->pool, a, 640, &queued) == NTA_FREE_OK && queued == 1,
	       "a queued");
	EXPECT(nta_check_free(blk, a, 640) == NTA_FREE_PENDING &&
	       h_free(c, a, 640) == NTA_FREE_PENDING, "owner sees it pending");
	EXPECT(blk->meta[ua].cls == 10 && (blk->meta[ua].gen & NTA_GEN_CLAIMED),
	       "claimed: the generation's low bit set, the length byte kept");
	blk->meta[ua].cls = 0;
	EXPECT(h_drain(c) == 0, "the drain frees nothing");
	EXPECT(atomic_read(&h_bad_drain_reports) == reports0 + 1 && h_last_bad_ptr == a &&
	       h_last_bad_why == NTA_FREE_NOT_ALLOCATED, "reported once");
	EXPECT(!(blk->meta[ua].gen & NTA_GEN_CLAIMED), "the claim's bit cleared");
	blk->meta[ua].cls = 10;
	EXPECT(!test_bit(ua, blk->pending) && nta_check_free(blk, a, 640) == NTA_FREE_OK &&
	       filled(a, 0, 640, 0xaa), "a allocated, not pending, not a byte written");
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET, NULL) == 0, "pool");

	/*
	 * The same race, as the owner's free leaves it when its new
	 * generation lands after the claim: the claim wiped, and the object
	 * handed out again before the drain, live and unclaimed with its
	 * pending bit set.  The drain refuses the free and leaves it live.
	 */
	{
		u8 gen;

		EXPECT(nta_remote_free(&c->pool, a, 640, &queued) == NTA_FREE_OK,
		       "a queued again");
		gen = blk->meta[ua].gen;
		EXPECT(gen & NTA_GEN_CLAIMED, "claimed");
		blk->meta[ua].gen = (gen | NTA_GEN_CLAIMED) + 1;
		EXPECT(h_drain(c) == 0, "the drain frees nothing");
		EXPECT(atomic_read(&h_bad_drain_reports) == reports0 + 2 &&
		       h_last_bad_ptr == a, "reported");
		EXPECT(!test_bit(ua, blk->pending) && blk->meta[ua].cls == 10 &&
		       blk->meta[ua].gen == (u8)((gen | NTA_GEN_CLAIMED) + 1) &&
		       nta_check_free(blk, a, 640) == NTA_FREE_OK &&
		       filled(a, 0, 640, 0xaa), "a live, its bytes and generation kept");
		EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET, NULL) == 0, "pool");
	}

	/*
	 * A remote claim takes the object that its check saw, not one freed
	 * and handed out again at the same place since (review L2).
	 */
	{
		unsigned int ub = h_unit(b);
		struct nta_unit_meta seen = nta_unit_seen(blk, ub);
		u8 gen0 = blk->meta[ub].gen;

		EXPECT(h_free(c, b, 100) == NTA_FREE_OK, "b freed");
		ASSERT(h_alloc(c, 100) == b, "b handed out again");
		EXPECT(blk->meta[ub].gen != gen0, "a new generation");
		EXPECT(!nta_unit_claim_remote(blk, ub, seen) &&
		       !(blk->meta[ub].gen & NTA_GEN_CLAIMED),
		       "the claim of the old object refused, nothing written");
		seen = nta_unit_seen(blk, ub);
		EXPECT(nta_unit_claim_remote(blk, ub, seen) &&
		       (blk->meta[ub].gen & NTA_GEN_CLAIMED) && blk->meta[ub].cls == 2,
		       "the new object claimed");
		blk->meta[ub].gen &= ~NTA_GEN_CLAIMED;
	}

	/* Correct frees afterwards work, remote and local. */
	EXPECT(h_free(other, a, 640) == NTA_FREE_OK && h_free(other, e, 1) == NTA_FREE_OK,
	       "correct remote frees");
	EXPECT(h_drain(c) == 2 && nta_check_free(blk, a, 640) == NTA_FREE_NOT_ALLOCATED,
	       "a and e freed");
	EXPECT(h_free(c, b, 100) == NTA_FREE_OK && h_free(c, d, 1000) == NTA_FREE_OK,
	       "correct local frees");
	EXPECT(c->pool.free_units == NTA_DATA_UNITS, "everything free");
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET | H_CHECK_RELEASE, NULL) == 0, "end");
	EXPECT(h_cpu_destroy(c) == 0 && h_cpu_destroy(other) == 0, "teardown");
}

/*
 * What a non-owner can check is refused at once: nothing is queued, no
 * bit or list changes, and the owner's drain has nothing to report.
 */
static void test_bad_remote_refused(void)
{
	static const struct {
		const char *what;
		long off;		/* from the object, or the block if < 0 */
		unsigned int size;
		enum nta_bad_free want;
	} cases[] = {
		{ "never allocated (free space)", 2 * 640, 640, NTA_FREE_NOT_ALLOCATED },
		{ "freed, then freed again", 640, 640, NTA_FREE_NOT_ALLOCATED },
		{ "inside a live object", NTA_UNIT, 64, NTA_FREE_NOT_ALLOCATED },
		{ "misaligned +8", 8, 640, NTA_FREE_MISALIGNED },
		{ "misaligned in free space", 2 * 640 + 1, 640, NTA_FREE_MISALIGNED },
		{ "block header", -1, 64, NTA_FREE_MISALIGNED },
		{ "size 0", 0, 0, NTA_FREE_WRONG_SIZE },
		{ "size NTA_MAX_SIZE + 1", 0, NTA_MAX_SIZE + 1, NTA_FREE_WRONG_SIZE },
	};
	int reports0 = atomic_read(&h_bad_drain_reports);
	struct h_snapshot snap;
	struct nta_block *blk;
	char *a, *b, *p;
	unsigned int i, queued;

	h_cpu_init(c, 0, 1, 1);
	h_cpu_init(other, 1, 0, 0);
	a = h_alloc(c, 640);
	b = h_alloc(c, 640);
	ASSERT(a && b == a + 640, "setup");
	blk = nta_block_of(a);
	EXPECT(h_free(c, b, 640) == NTA_FREE_OK, "free b");
	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		p = cases[i].off < 0 ? (char *)blk + NTA_UNIT : a + cases[i].off;
		h_snapshot_take(&snap, &c->pool);
		queued = ~0u;
		EXPECT(nta_remote_free(&c->pool, p, cases[i].size, &queued) == cases[i].want,
		       "%s: want \"%s\"", cases[i].what, nta_bad_free_reason(cases[i].want));
		EXPECT(queued == 0, "%s: queued %u", cases[i].what, queued);
		EXPECT(llist_empty(&c->pool.remote) &&
		       !atomic_read(&c->pool.remote_blocks), "%s: queued", cases[i].what);
		EXPECT(h_snapshot_same(&snap, &c->pool), "%s: pool changed", cases[i].what);
		EXPECT(h_drain(c) == 0, "%s: drained", cases[i].what);
		EXPECT(h_snapshot_same(&snap, &c->pool), "%s: drain changed the pool",
		       cases[i].what);
		h_snapshot_free(&snap);
	}
	EXPECT(atomic_read(&h_bad_drain_reports) == reports0, "drain reports");
	EXPECT(h_free(other, a, 640) == NTA_FREE_OK && h_drain(c) == 1, "a still frees");
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET | H_CHECK_RELEASE, NULL) == 0, "end");
	EXPECT(h_cpu_destroy(c) == 0 && h_cpu_destroy(other) == 0, "teardown");
}

/*
 * nta_pool_remove_block() on @blk with live objects: false, one WARN, the
 * pool untouched.  If the core removes it anyway, put it back so that the
 * test can tear down.
 */
static void expect_remove_refused(const char *what, struct nta_block *blk)
{
	unsigned long warns = shim_warn_count;
	struct h_snapshot snap;
	bool removed;

	h_snapshot_take(&snap, &c->pool);
	removed = nta_pool_remove_block(&c->pool, blk);
	EXPECT(!removed, "%s: busy block (free_units %u) removed", what, blk->free_units);
	/* Refused quietly: the kernel's caller holds the local lock. */
	EXPECT(shim_warn_count == warns, "%s: %lu WARNs, want none", what,
	       shim_warn_count - warns);
	if (removed) {
		list_add(&blk->link, &c->pool.blocks);
		c->pool.nr_blocks++;
	} else {
		EXPECT(h_snapshot_same(&snap, &c->pool), "%s: pool changed", what);
	}
	h_snapshot_free(&snap);
}

static void test_bad_remove_busy(void)
{
	struct nta_block *blk;
	char *p, *q;

	h_cpu_init(c, 0, 1, 1);
	h_cpu_init(other, 1, 0, 0);
	blk = list_first_entry(&c->pool.blocks, struct nta_block, link);
	p = h_alloc(c, 640);
	ASSERT(p, "alloc");
	expect_remove_refused("one object", blk);
	expect_remove_refused("again", blk);
	q = h_alloc(c, NTA_MAX_SIZE - 640 - NTA_UNIT);
	ASSERT(q, "alloc");
	expect_remove_refused("one unit free", blk);
	EXPECT(h_free(c, q, NTA_MAX_SIZE - 640 - NTA_UNIT) == NTA_FREE_OK, "free q");
	EXPECT(h_free(other, p, 640) == NTA_FREE_OK, "remote free p");
	expect_remove_refused("only a pending object", blk);
	EXPECT(h_drain(c) == 1, "drain");
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET, NULL) == 0, "pool");
	EXPECT(h_cpu_destroy(c) == 0 && h_cpu_destroy(other) == 0, "teardown");
}

/* A block with no free unit at all is busy too (free_units == 0). */
static void test_bad_remove_full(void)
{
	struct nta_block *blk;
	char *p;

	h_cpu_init(c, 0, 1, 1);
	blk = list_first_entry(&c->pool.blocks, struct nta_block, link);
	p = h_alloc(c, NTA_MAX_SIZE);
	ASSERT(p && nta_block_of(p) == blk && !blk->free_units, "fill the block");
	expect_remove_refused("full block", blk);
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET, NULL) == 0, "pool");
	EXPECT(h_free(c, p, NTA_MAX_SIZE) == NTA_FREE_OK, "free");
	EXPECT(h_cpu_destroy(c) == 0, "teardown");
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

/*
 * nta_pool_check(), the validator the KUnit suite and debugfs nta/check
 * share with this harness, finds each planted corruption, says so first,
 * and is quiet again once the field is put back.
 */
static unsigned int pc_planted;

static void pc_expect(const char *what, const char *want, bool only)
{
	char msg[256] = "";
	unsigned int errs = nta_pool_check(&c->pool, msg, sizeof(msg));

	pc_planted++;
	EXPECT(errs && (!only || errs == 1) && strstr(msg, want),
	       "%s: %u violations, first \"%s\", want \"%s\"", what, errs, msg,
	       want);
}

/* Set @lval to @val, expect @want first (and alone with @only), restore. */
#define PLANT(lval, val, want, only) do {				\
	__typeof__(lval) __saved = (lval);				\
									\
	(lval) = (val);							\
	pc_expect(#lval " = " #val, want, only);			\
	(lval) = __saved;						\
} while (0)

/* The word of bitmap @map that holds @unit, with that bit flipped. */
#define FLIP(map, unit)		(map)[BIT_WORD(unit)]
#define FLIPPED(map, unit)	((map)[BIT_WORD(unit)] ^ BIT_MASK(unit))

static void test_bad_pool_check(void)
{
	unsigned int ub, ucc, ud, last = NTA_BLOCK_UNITS - 1;
	struct nta_block *blk;
	struct nta_chunk *hole;
	char msg[256] = "";
	char *a, *b, *cc, *d;

	pc_planted = 0;
	h_cpu_init(c, 0, 2, 2);
	a = h_alloc(c, 640);		/* 10 units */
	b = h_alloc(c, 128);		/* 2 units */
	cc = h_alloc(c, 64);		/* 1 unit, freed: a hole on list 1 */
	d = h_alloc(c, 64);		/* 1 unit; the rest of the block is free */
	ASSERT(a && b && cc && d && h_free(c, cc, 64) == NTA_FREE_OK, "setup");
	blk = nta_block_of(a);
	ASSERT(nta_block_of(d) == blk, "one block");
	ub = h_unit(b);
	ucc = h_unit(cc);
	ud = h_unit(d);
	hole = (struct nta_chunk *)cc;
	EXPECT(nta_pool_check(&c->pool, msg, sizeof(msg)) == 0, "setup: %s", msg);

	/* The pool's own fields. */
	PLANT(c->pool.broken, true, "quarantined", true);
	PLANT(c->pool.free_units, c->pool.free_units + 1, "free_units", true);
	PLANT(c->pool.whole, c->pool.whole + 1, "whole", true);
	PLANT(c->pool.nr_blocks, c->pool.nr_blocks + 1, "nr_blocks", true);
	PLANT(c->pool.nr_blocks, c->pool.nr_blocks - 1, "nr_blocks", false);
	PLANT(FLIP(c->pool.nonempty, 1), FLIPPED(c->pool.nonempty, 1),
	      "list 1: non-empty bit is wrong", true);
	PLANT(FLIP(c->pool.nonempty, 2), FLIPPED(c->pool.nonempty, 2),
	      "list 2: non-empty bit is wrong", true);
	PLANT(FLIP(c->pool.nonempty, 0), FLIPPED(c->pool.nonempty, 0),
	      "non-empty bit outside", true);

	/* A block's header and bitmaps. */
	PLANT(blk->pool, &other->pool, "out of place", false);
	PLANT(blk->free_units, blk->free_units - 1, "free_units", true);
	PLANT(FLIP(blk->used, 0), FLIPPED(blk->used, 0), "header unit 0", true);
	PLANT(FLIP(blk->start, ucc), FLIPPED(blk->start, ucc),
	      "object start in free space", false);
	PLANT(FLIP(blk->pending, ucc), FLIPPED(blk->pending, ucc),
	      "pending bit on no object", false);
	/* b is live: its length byte stands and nothing claimed it either. */
	PLANT(FLIP(blk->pending, ub), FLIPPED(blk->pending, ub),
	      "remote frees pending, not queued", false);
	blk->queued = 1;
	PLANT(FLIP(blk->pending, ub), FLIPPED(blk->pending, ub),
	      "pending bit on unclaimed unit", true);
	blk->queued = 0;
	PLANT(blk->meta[ub].cls, 3, "length byte 3", true);
	PLANT(blk->meta[ucc].cls, 1, "length byte 1", true);
	/* A used unit inside a free chunk, at its end: not merged either. */
	PLANT(FLIP(blk->used, last), FLIPPED(blk->used, last),
	      "overlaps an object", false);
	/* d without its start bit or length byte: units of no object. */
	blk->meta[ud].cls = 0;
	PLANT(FLIP(blk->start, ud), FLIPPED(blk->start, ud), "used by no object",
	      true);
	blk->meta[ud].cls = 1;
	/* b's start bit gone: a and b look like one object of 12 units. */
	PLANT(FLIP(blk->start, ub), FLIPPED(blk->start, ub), "length byte 10",
	      false);

	/* The free list links. */
	PLANT(hole->next, hole->next ^ NTA_UNIT, "badly linked", true);
	PLANT(hole->prev, hole->prev ^ NTA_UNIT, "badly linked", true);

	EXPECT(nta_pool_check(&c->pool, msg, sizeof(msg)) == 0, "restored: %s", msg);
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET, NULL) == 0, "pool");
	t_note("pool check: %u planted corruptions found", pc_planted);
	EXPECT(h_free(c, a, 640) == NTA_FREE_OK && h_free(c, b, 128) == NTA_FREE_OK &&
	       h_free(c, d, 64) == NTA_FREE_OK, "free");
	EXPECT(h_cpu_destroy(c) == 0, "teardown");
}

const struct test bad_tests[] = {
	{ "bad_free", test_bad_free, 0 },
	{ "bad_remote_size", test_bad_remote_size, 0 },
	{ "bad_remote_refused", test_bad_remote_refused, 0 },
	{ "bad_remove_busy_block", test_bad_remove_busy, 0 },
	{ "bad_remove_full_block", test_bad_remove_full, 0 },
	{ "bad_pool_check", test_bad_pool_check, 0 },
	{ "debug_poison", test_debug_poison, T_DEBUG_ONLY },
	{ NULL, NULL, 0 }
};
