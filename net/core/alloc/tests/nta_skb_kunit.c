// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite nta_skb: skb heads through the skb paths that allocate,
 * share, copy or free them (alloc_skb(), clones, pskb_expand_head(),
 * pskb_extract(), the copies, heads NTA did not allocate, net.core.nta
 * switched with heads in flight).  Each case checks skb->__tsize and
 * truesize and that every head goes back to where it came from.  Not
 * instrumented by KASAN, like the other suites that use NTA's internals.
 */

#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/mm.h>
#include <linux/skbuff.h>
#include <linux/slab.h>

#include "nta_kunit_helpers.h"

/* ---------------------------------------------------------------------- */
/* nta_skb: heads through the skb paths                                   */

struct nta_tskb_ctx {
	struct nta_stats start;
};

static void nta_tkey_restore(void *data)
{
	nta_set_enabled(!!data);
}

static void nta_tkey_set(struct kunit *test, bool on)
{
	unsigned long was = static_key_enabled(&nta_enabled_key);

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, nta_tkey_restore,
							(void *)was), 0);
	nta_set_enabled(on);
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
 * What NTA must have given a head of @size bytes, 0 when it cannot: whole
 * units, small heads included (skb_small_head_cache's size is no floor).
 */
static unsigned int nta_thead(unsigned int size)
{
	return nta_alloc_size(SKB_HEAD_ALIGN(size));
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
	/* A small head is charged less than skb_small_head_cache's object. */
	if (tsize && SKB_HEAD_ALIGN(t->size) < nta_tsmall())
		KUNIT_EXPECT_LT(test, skb->truesize,
				SKB_TRUESIZE(SKB_WITH_OVERHEAD(nta_tsmall())));
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

/*
 * __skb_unclone_keeptruesize() between the allocators: a small NTA head
 * ends before SKB_SMALL_HEAD_HEADROOM, its replacement from
 * skb_small_head_cache (NTA switched off) ends at it, and skb->end must
 * still move back with skb_shinfo(); the other way round the ends agree.
 */
static void nta_skb_unclone_small_switch(struct kunit *test)
{
	bool nta_first = *(const bool *)test->param_value;
	unsigned int truesize, end;
	struct sk_buff *skb, *clone;
	struct nta_stats st;
	void *old;

	nta_tskb_begin(test, &st);
	if (!nta_first)
		nta_set_enabled(false);
	skb = alloc_skb(100, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	nta_texpect_head(test, skb, nta_first ? nta_thead(100) : 0);
	nta_tfill_skb(skb, 90, 9);
	skb_shinfo(skb)->gso_size = 1234;
	clone = skb_clone(skb, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, clone);
	old = skb->head;
	truesize = skb->truesize;
	end = skb_end_offset(skb);
	if (nta_first) {
		KUNIT_ASSERT_LT(test, end, SKB_WITH_OVERHEAD(nta_tsmall()));
		nta_set_enabled(false);
	} else {
		nta_set_enabled(true);
	}

	KUNIT_EXPECT_EQ(test, skb_unclone_keeptruesize(skb, GFP_KERNEL), 0);
	KUNIT_EXPECT_PTR_NE(test, skb->head, old);
	nta_texpect_head(test, skb, nta_first ? 0 : nta_thead(end));
	KUNIT_EXPECT_FALSE(test, skb_cloned(skb));
	KUNIT_EXPECT_EQ(test, skb_end_offset(skb), end);
	KUNIT_EXPECT_EQ(test, skb->truesize, truesize);
	KUNIT_EXPECT_EQ(test, skb_shinfo(skb)->gso_size, 1234);
	KUNIT_EXPECT_EQ(test, skb_shinfo(skb)->nr_frags, 0);
	nta_texpect_data(test, skb, 0, 90, 9, 0);
	nta_texpect_data(test, clone, 0, 90, 9, 0);
	consume_skb(clone);
	consume_skb(skb);
	nta_tskb_end(test, &st, 1);
}

static const bool nta_tunclone_nta_first[] = { true, false };

static void nta_tunclone_desc(const bool *nta_first, char *desc)
{
	strscpy(desc, *nta_first ? "nta_to_kmalloc" : "kmalloc_to_nta",
		KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(nta_tunclone, nta_tunclone_nta_first, nta_tunclone_desc);

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
	struct nta_stats st, pre, mid;
	unsigned int tsize;

	nta_tskb_begin(test, &st);
	/* The inline free's key: on exactly when NTA is, but for init_on_free. */
	KUNIT_EXPECT_EQ(test, static_key_enabled(&nta_plain_free_key),
			!want_init_on_free());
	on = alloc_skb(1000, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, on);
	nta_texpect_head(test, on, nta_thead(1000));
	nta_tfill_skb(on, 800, 7);
	clone = skb_clone(on, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, clone);

	nta_set_enabled(false);
	KUNIT_EXPECT_FALSE(test, nta_enabled());
	KUNIT_EXPECT_FALSE(test, static_key_enabled(&nta_plain_free_key));
	off = alloc_skb(1000, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, off);
	nta_texpect_head(test, off, 0);
	nta_tfill_skb(off, 800, 8);
	nta_tstats(&mid);
	KUNIT_EXPECT_EQ(test, NTA_D(&st, &mid, fallbacks), 0);

	/* An NTA head replaced while off: the new one is kmalloc'd. */
	KUNIT_ASSERT_EQ(test, pskb_expand_head(on, 0, 64, GFP_KERNEL), 0);
	nta_texpect_head(test, on, 0);
	nta_tstats(&pre);
	consume_skb(clone);	/* last user of the NTA head, freed to NTA */
	nta_tstats(&mid);
	KUNIT_EXPECT_EQ(test, NTA_D(&st, &mid, frees), 1);
	KUNIT_EXPECT_EQ(test, mid.inuse_objects, st.inuse_objects);
	/* Merged, not parked: nothing allocates from the bins while off. */
	KUNIT_EXPECT_LE(test, mid.binned_bytes, pre.binned_bytes);

	nta_set_enabled(true);
	KUNIT_EXPECT_EQ(test, static_key_enabled(&nta_plain_free_key),
			!want_init_on_free());
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

static struct kunit_case nta_skb_cases[] = {
	KUNIT_CASE_PARAM(nta_skb_alloc, nta_tskb_size_gen_params),
	KUNIT_CASE(nta_skb_clone),
	KUNIT_CASE(nta_skb_unclone_keeptruesize),
	KUNIT_CASE_PARAM(nta_skb_unclone_small_switch, nta_tunclone_gen_params),
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

kunit_test_suite(nta_skb_suite);

MODULE_DESCRIPTION("KUnit tests of skb heads from the network tree allocator");
MODULE_LICENSE("GPL");
