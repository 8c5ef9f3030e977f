// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite nta: the per-CPU allocator (nta.c and its neighbours),
 * driven through nta_alloc() and nta_free() on the CPUs' own pools, with
 * deltas of nta_get_stats() checked: sizes and bad input, remote frees from a
 * kthread bound to another CPU and their races with the owner, kicks of
 * busy owners and none for idle ones, remote-free batches, CPU hotplug, growth, return, the
 * shrinker and the cap, the hardened usercopy bound, the per-CPU bins and
 * the fast path's exclusion.  Without a second CPU the remote, kick and
 * hotplug cases are skipped.  Not instrumented by KASAN: it looks into
 * free memory on purpose.
 */

#include <kunit/static_stub.h>
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/gfp.h>
#include <linux/irq_work.h>
#include <linux/kfence.h>
#include <linux/kthread.h>
#include <linux/memblock.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/prandom.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/vmstat.h>

#include "nta_kunit_helpers.h"

/* ---------------------------------------------------------------------- */
/* Per-CPU glue helpers                                                   */

/* Units a CPU can hand out without growing: its free lists and bins. */
static unsigned long nta_tfree_units(unsigned int cpu)
{
	return READ_ONCE(nta_tcpu(cpu)->pool.free_units) +
	       nta_bins_units_seen(&nta_tcpu(cpu)->bins);
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
 * Set by a test whose owner must keep to its fast path while it waits in
 * nta_run_on(): it then allocates and frees one binned unit in a loop
 * (nta_tfast_pairs of them), as an owner the stranded-free timer is for.
 */
static void *nta_tfast_obj;
static unsigned long nta_tfast_pairs;

/*
 * Run @fn(@arg) in a kthread bound to @cpu and wait for it.  With @busy
 * the caller spins meanwhile instead of sleeping, so that its CPU does not
 * look idle: a remote free leaves an idle owner alone.
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
	while (busy && !completion_done(&call.done)) {
		if (nta_tfast_obj) {
			nta_free(nta_tfast_obj, NTA_UNIT);
			nta_tfast_obj = nta_alloc(NTA_UNIT, GFP_ATOMIC);
			nta_tfast_pairs++;
		}
		cpu_relax();
	}
	wait_for_completion(&call.done);
}

struct nta_tobjs {
	void **obj;
	unsigned int size;
	unsigned int from, to;
	unsigned int cpu;	/* where the frees ran */
	int wait_idle;		/* CPU to wait for to go idle first, or -1 */
	bool was_idle;
	bool trusted;		/* free with nta_free_trusted() */
	int spin_for;		/* CPU + 1 whose queue the freer then spins on */
};

static bool nta_tremote_empty(unsigned int cpu)
{
	return llist_empty(&nta_tcpu(cpu)->pool.remote);
}

static bool nta_tinbox_empty(unsigned int cpu)
{
	return llist_empty(&nta_tcpu(cpu)->batch_inbox);
}

/* Frees queued for @owner: published batches or blocks on its list. */
static bool nta_tqueued(unsigned int owner)
{
	return !nta_tinbox_empty(owner) || !nta_tremote_empty(owner);
}

/*
 * Frees of this CPU's still on their way to @owner: in an open batch, in
 * its inbox or on its remote list.  A racy look, for polling only.
 */
static bool nta_tqueued_for(unsigned int owner)
{
	struct nta_cpu *c = this_cpu_ptr(&nta_cpu);
	unsigned int slot;

	for (slot = 0; slot < NTA_BATCH_SLOTS; slot++) {
		/* Read without the mark: a poll, retried until it settles. */
		if (data_race(c->batch_open[slot]))
			return true;
	}
	return nta_tqueued(owner);
}

static void nta_tfree_range(void *arg)
{
	struct nta_tobjs *o = arg;
	unsigned int i, us;
	unsigned long t0;

	if (o->wait_idle >= 0) {
		for (us = 0; us < USEC_PER_SEC && !idle_cpu(o->wait_idle); us += 10)
			usleep_range(10, 20);
		o->was_idle = idle_cpu(o->wait_idle);
	}
	for (i = o->from; i < o->to; i++) {
		if (o->trusted)
			nta_free_trusted(o->obj[i], o->size);
		else
			nta_free(o->obj[i], o->size);
	}
	o->cpu = raw_smp_processor_id();
	/* Busy, so that its deferrable timers fire (and publish, and kick). */
	for (t0 = jiffies; o->spin_for && nta_tqueued_for(o->spin_for - 1) &&
	     time_before(jiffies, t0 + 5 * HZ);)
		cpu_relax();
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

/* ---------------------------------------------------------------------- */
/* nta: the per-CPU allocator                                             */

/*
 * In a boot where initialisation failed (at the block map, the CPU-dead
 * hotplug state or a CPU's online callback, after the CPUs before it took
 * their reserves, which the unwind gave back: the returns counter shows
 * it), it was undone.  No block map, no block in any CPU's pool, NTA off
 * for good (the switch says -ENODEV), and skb heads come from kmalloc.
 * Skipped when initialisation did not fail.
 */
static void nta_init_unwind(struct kunit *test)
{
	struct sk_buff *skb;
	unsigned int cpu;

	if (nta_init_failed_at == NTA_INIT_OK)
		kunit_skip(test, "initialisation did not fail in this boot");
	KUNIT_EXPECT_FALSE(test, READ_ONCE(nta_ready));
	KUNIT_EXPECT_FALSE(test, nta_enabled());
	KUNIT_EXPECT_EQ(test, READ_ONCE(nta_block_map_bits), 0);
	/*
	 * Not vacuous: the CPUs that came online first took their reserves,
	 * which the unwind gave back.
	 */
	if (nta_init_failed_at == NTA_INIT_ONLINE && num_online_cpus() > 1) {
		struct nta_stats st;

		nta_get_stats(&st, -1);
		KUNIT_EXPECT_GT(test, st.returns, 0);
	}
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
	nta_tneed_reserve(test);
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
	if (IS_ENABLED(CONFIG_NTA_KMALLOC_MODEL))
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

/*
 * An object's generation moves on when it is freed, on the fast path or a
 * slow one, and not when it is handed out again: a free waiting in a
 * batch, which recorded the generation it saw, is refused once the object
 * was freed since, whether it was handed out again or not.  A length that
 * little else allocates, so that the freed object is the one handed out
 * next.
 */
static void nta_gen_moves_on_free(struct kunit *test)
{
	unsigned int size = 3008, i;
	struct nta_block *blk;
	u8 gen0, gen1;
	void *p, *q;

	nta_tneed_ready(test);
	if (!nta_enabled())
		kunit_skip(test, "NTA is switched off: a free may give the block back");
	nta_tpin(test, -1);
	/* The first free may open shut bins through a slow path: both. */
	for (i = 0; i < 2; i++) {
		p = nta_alloc(size, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, p);
		blk = nta_block_of(p);
		gen0 = nta_gen(blk, nta_tunit(p));
		KUNIT_EXPECT_FALSE(test, gen0 & NTA_GEN_CLAIMED);
		KUNIT_EXPECT_EQ(test, nta_cls(blk, nta_tunit(p)),
				nta_size_to_units(size));
		nta_free(p, size);
		/* Parked in its bin: the block stays. */
		gen1 = nta_gen(blk, nta_tunit(p));
		KUNIT_EXPECT_EQ(test, gen1, (u8)(gen0 + 2));
		KUNIT_EXPECT_EQ(test, nta_cls(blk, nta_tunit(p)), 0);
		q = nta_alloc(size, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, q);
		if (q != p) {
			nta_free(q, size);
			kunit_skip(test, "other traffic used this length meanwhile");
		}
		KUNIT_EXPECT_EQ(test, nta_gen(blk, nta_tunit(p)), gen1);
		KUNIT_EXPECT_EQ(test, nta_cls(blk, nta_tunit(p)),
				nta_size_to_units(size));
		nta_free(q, size);
	}
}

struct nta_tlive {
	unsigned int units;
	u32 add;
};

/* On the CPU whose count it is, under its lock and mark: no lost update. */
static long nta_tlive_add(void *arg)
{
	const struct nta_tlive *t = arg;
	unsigned long flags;
	struct nta_cpu *c;
	bool has_mark;

	c = nta_slow_lock(&flags, &has_mark);
	if (has_mark)
		c->bins.slot[t->units].live += t->add;
	nta_slow_unlock(c, has_mark, flags);
	return has_mark ? 0 : -EBUSY;
}

static long nta_tlive_on(unsigned int cpu, unsigned int units, u32 add)
{
	struct nta_tlive t = { .units = units, .add = add };

	return work_on_cpu(cpu, nta_tlive_add, &t);
}

/*
 * Live objects are counted per CPU as allocated there less freed there,
 * so a CPU that allocates what another frees counts up for ever and the
 * other down: after 2^31 objects both counts have wrapped.  The sum over
 * CPUs still says how many are live.  The test moves two CPUs' counts of
 * the longest length as 2^31 + 5 objects made on one and 2^31 - 3 of
 * them freed on the other would, and back, each on its own CPU.
 */
static void nta_stats_live_wraps(struct kunit *test)
{
	const u32 up = (1U << 31) + 5, down = (1U << 31) - 3;
	unsigned int units = NTA_DATA_UNITS, a, b, i;
	struct nta_stats s0, s1;
	s64 d = 0, r = 0;
	long ea = 0, eb = 0;

	nta_tneed_ready(test);
	cpus_read_lock();
	a = cpumask_first(cpu_online_mask);
	b = cpumask_next(a, cpu_online_mask);
	if (b >= nr_cpu_ids) {
		cpus_read_unlock();
		kunit_skip(test, "one CPU online: no count goes down");
	}
	/* Other traffic may move the gauges between two reads: retry. */
	for (i = 0; i < 5 && (d != 8 || r != 8LL * units * NTA_UNIT); i++) {
		nta_tstats(&s0);
		ea = nta_tlive_on(a, units, up);
		eb = nta_tlive_on(b, units, -down);
		nta_tstats(&s1);
		if (!ea)
			ea = nta_tlive_on(a, units, -up);
		if (!eb)
			eb = nta_tlive_on(b, units, down);
		if (ea || eb)
			break;
		d = NTA_D(&s0, &s1, inuse_objects);
		r = NTA_D(&s0, &s1, reserved_bytes);
	}
	cpus_read_unlock();
	KUNIT_ASSERT_EQ(test, ea, 0);
	KUNIT_ASSERT_EQ(test, eb, 0);
	KUNIT_EXPECT_EQ(test, d, 8);
	KUNIT_EXPECT_EQ(test, r, 8LL * units * NTA_UNIT);
}

enum nta_tgbad_kind {
	NTA_TG_MISALIGNED,
	NTA_TG_INSIDE,
	NTA_TG_HEADER,
	NTA_TG_DOUBLE,
	NTA_TG_SMALLER,
	NTA_TG_LARGER,
	NTA_TG_ZERO,
	NTA_TG_BYTE_WRAP,
	/* Live objects of NTA's whose block header was forged. */
	NTA_TG_FORGED,
	NTA_TG_FORGED_PENDING,
	NTA_TG_FORGED_OTHER,
	/* From here on, pointers NTA does not own. */
	NTA_TG_KMALLOC,
	NTA_TG_VMALLOC,
	NTA_TG_FAKE_BLOCK,
	NTA_TG_FAKE_OTHER,
	NTA_TG_FAKE_NESTED,
};

struct nta_tgbad {
	const char *name;
	enum nta_tgbad_kind kind;
	bool trusted;		/* through nta_free_trusted() */
};

static const struct nta_tgbad nta_tgbad_cases[] = {
	{ "misaligned", NTA_TG_MISALIGNED },
	{ "inside_object", NTA_TG_INSIDE },
	{ "block_header", NTA_TG_HEADER },
	{ "double_free", NTA_TG_DOUBLE },
	{ "size_smaller", NTA_TG_SMALLER },
	{ "size_larger", NTA_TG_LARGER },
	{ "size_zero", NTA_TG_ZERO },
	/* Beyond any object, and its units the object's modulo 256. */
	{ "size_byte_wrap", NTA_TG_BYTE_WRAP },
	{ "foreign_kmalloc", NTA_TG_KMALLOC },
	{ "foreign_vmalloc", NTA_TG_VMALLOC },
	{ "foreign_fake_block", NTA_TG_FAKE_BLOCK },
	/*
	 * A live object whose block header names a pool the block's page
	 * does not (as a linear overflow from below the block forges it):
	 * a decoy anywhere, through a batch or the pending bit, or another
	 * CPU's real pool.  Nothing is written through the header.
	 */
	{ "forged_owner", NTA_TG_FORGED },
	{ "forged_owner_pending", NTA_TG_FORGED_PENDING },
	{ "forged_owner_other_cpu", NTA_TG_FORGED_OTHER },
	/*
	 * nta_free_trusted() reads the header word naming the pool before
	 * the block map: not for a vmalloc() pointer, whose block-aligned
	 * base may be unmapped, nor for a forged header naming this CPU,
	 * which its fast path believes.  Forged headers that send it down
	 * the remote path (another CPU named) or the slow path (the fast
	 * path's mark held, as by a nested caller) must be refused there.
	 */
	{ "trusted_misaligned", NTA_TG_MISALIGNED, true },
	{ "trusted_inside_object", NTA_TG_INSIDE, true },
	{ "trusted_block_header", NTA_TG_HEADER, true },
	{ "trusted_double_free", NTA_TG_DOUBLE, true },
	{ "trusted_size_smaller", NTA_TG_SMALLER, true },
	{ "trusted_size_larger", NTA_TG_LARGER, true },
	{ "trusted_size_zero", NTA_TG_ZERO, true },
	{ "trusted_size_byte_wrap", NTA_TG_BYTE_WRAP, true },
	{ "trusted_foreign_kmalloc", NTA_TG_KMALLOC, true },
	{ "trusted_fake_block_other_cpu", NTA_TG_FAKE_OTHER, true },
	{ "trusted_fake_block_nested", NTA_TG_FAKE_NESTED, true },
	{ "trusted_forged_owner", NTA_TG_FORGED, true },
};

static void nta_tgbad_desc(const struct nta_tgbad *t, char *desc)
{
	strscpy(desc, t->name, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(nta_tgbad, nta_tgbad_cases, nta_tgbad_desc);

/*
 * nta_free() (or nta_free_trusted()) of something that is not a live object
 * of that size: one bad_frees more, every other counter and this CPU's
 * whole pool unchanged, and an allocate-everything pass finds every free
 * unit still there.
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
	struct nta_block *fake = NULL, *fake_copy = NULL;
	struct nta_pool *decoy = NULL, *decoy_copy = NULL, *pool = NULL;
	unsigned int cpu, other = 0;
	unsigned long free_units;

	nta_tneed_ready(test);
	cpu = nta_tpin(test, -1);
	if ((t->kind == NTA_TG_FAKE_OTHER || t->kind == NTA_TG_FORGED_OTHER) &&
	    nta_tother_cpu(cpu) < 0)
		kunit_skip(test, "one CPU online");
	if (t->kind == NTA_TG_FORGED_PENDING)
		nta_tpending_path(test);
	/* The slow path under a held mark takes a sleeping lock on RT. */
	if (t->kind == NTA_TG_FAKE_NESTED && IS_ENABLED(CONFIG_PREEMPT_RT))
		kunit_skip(test, "PREEMPT_RT");
	/* The block-aligned base of a kmalloc() page may be unmapped or uninit. */
	if (t->trusted && t->kind == NTA_TG_KMALLOC &&
	    (debug_pagealloc_enabled() || IS_ENABLED(CONFIG_KMSAN)))
		kunit_skip(test, "debug_pagealloc or KMSAN");
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
	case NTA_TG_BYTE_WRAP:
		bad_size = size + 256 * NTA_UNIT;
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
	case NTA_TG_FAKE_OTHER:
	case NTA_TG_FAKE_NESTED:
		/*
		 * Block-sized, block-aligned, with a header that claims to be
		 * this CPU's (or, to send nta_free_trusted() down its remote
		 * path, the other CPU's) and an object start: only the block
		 * map can tell.
		 */
		if (t->kind == NTA_TG_FAKE_OTHER)
			other = nta_tother_cpu(cpu);
		fake_copy = kunit_kmalloc(test, sizeof(*fake), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, fake_copy);
		page = alloc_pages(GFP_KERNEL | __GFP_COMP | __GFP_ZERO,
				   NTA_BLOCK_ORDER);
		KUNIT_ASSERT_NOT_NULL(test, page);
		fake = page_address(page);
		fake->pool = &nta_tcpu(t->kind == NTA_TG_FAKE_OTHER ? other : cpu)->pool;
		bitmap_set(fake->used, 0, NTA_HDR_UNITS + 2);
		__set_bit(NTA_HDR_UNITS, fake->start);
		fake->meta[NTA_HDR_UNITS].cls = 2;
		bad = nta_tunit_addr(fake, NTA_HDR_UNITS);
		memcpy(fake_copy, fake, sizeof(*fake));
		break;
	case NTA_TG_FORGED:
	case NTA_TG_FORGED_PENDING:
	case NTA_TG_FORGED_OTHER:
		/* A decoy whose id names CPU 0: a batch would go there. */
		decoy = kunit_kzalloc(test, sizeof(*decoy), GFP_KERNEL);
		decoy_copy = kunit_kzalloc(test, sizeof(*decoy), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, decoy);
		KUNIT_ASSERT_NOT_NULL(test, decoy_copy);
		if (t->kind == NTA_TG_FORGED_OTHER)
			pool = &nta_tcpu(nta_tother_cpu(cpu))->pool;
		else
			pool = decoy;
		break;
	}
	if (t->kind == NTA_TG_KMALLOC || t->kind == NTA_TG_VMALLOC)
		KUNIT_ASSERT_NOT_NULL(test, foreign);
	KUNIT_EXPECT_FALSE(test, t->kind >= NTA_TG_KMALLOC && nta_owns(bad));
	/* A KFENCE object's block-aligned base may be a guard page. */
	if (t->trusted && foreign && is_kfence_address(foreign)) {
		nta_free(obj, size);
		nta_free(guard, NTA_UNIT);
		kfree(foreign);
		kunit_skip(test, "kmalloc() returned a KFENCE object");
	}

	nta_tsnap_this_cpu(test, s0);
	nta_tstats(&st0);
	/* Forged between the snapshots, which check the header too. */
	if (pool)
		WRITE_ONCE(nta_block_of(obj)->pool, pool);
	if (t->kind == NTA_TG_FAKE_NESTED) {
		/* As a caller nested in this CPU's fast path finds it. */
		preempt_disable();
		__this_cpu_write(nta_cpu.busy, 1);
		nta_free_trusted(bad, bad_size);
		__this_cpu_write(nta_cpu.busy, 0);
		preempt_enable();
	} else if (t->trusted) {
		nta_free_trusted(bad, bad_size);
	} else {
		nta_free(bad, bad_size);
	}
	/* Nothing queued for any pool: remote_frees did not move. */
	if (pool)
		WRITE_ONCE(nta_block_of(obj)->pool, &nta_tcpu(cpu)->pool);
	nta_tstats(&st1);
	nta_tsnap_this_cpu(test, s1);
	nta_texpect_stats_bad(test, &st0, &st1, 1);
	NTA_EXPECT_SNAP_EQ(test, s0, s1);
	/* Nothing written into the forged block (no pending bit, no merge). */
	if (fake)
		KUNIT_EXPECT_EQ(test, memcmp(fake, fake_copy, sizeof(*fake)), 0);
	/* Nor into the decoy the forged header pointed at. */
	if (decoy)
		KUNIT_EXPECT_EQ(test, memcmp(decoy, decoy_copy, sizeof(*decoy)), 0);

	/* Merge what sits in the bins: they may hold objects of any size. */
	nta_drain_all();
	KUNIT_EXPECT_EQ(test, nta_bins_units_seen(&nta_tcpu(cpu)->bins), 0);
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
	nta_tneed_reserve(test);
	owner = nta_tpin_two(test, &other);
	nta_drain_all();
	free0 = nta_tfree_units(owner);

	nta_tstats(&s0);
	o = nta_talloc_objs(test, n, 700);
	/* Half through each entry point: the skb layer's frees are trusted. */
	nta_tfree_on(test, other, o, 0, n / 2, true);
	o->trusted = true;
	nta_tfree_on(test, other, o, n / 2, n, true);
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

/*
 * Allocate @rounds triples of one-unit objects into @a, @b and @c and keep
 * those that lie adjacent in that order (first, middle, last); the rest
 * go to @junk (*@nj of them), to be freed at the end of the test, so that
 * a later triple cannot reuse their units.  Returns the triples kept; the
 * test needs at least half of them.
 */
static unsigned int nta_talloc_triples(struct kunit *test, void **a,
				       void **b, void **c, unsigned int rounds,
				       void **junk, unsigned int *nj)
{
	unsigned int i, k = 0;

	for (i = 0; i < rounds; i++) {
		a[k] = nta_alloc(NTA_UNIT, GFP_KERNEL);
		b[k] = nta_alloc(NTA_UNIT, GFP_KERNEL);
		c[k] = nta_alloc(NTA_UNIT, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, a[k]);
		KUNIT_ASSERT_NOT_NULL(test, b[k]);
		KUNIT_ASSERT_NOT_NULL(test, c[k]);
		if (b[k] == a[k] + NTA_UNIT && c[k] == b[k] + NTA_UNIT) {
			k++;
			continue;
		}
		junk[(*nj)++] = a[k];
		junk[(*nj)++] = b[k];
		junk[(*nj)++] = c[k];
	}
	KUNIT_ASSERT_GE(test, k, rounds / 2);
	return k;
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
	unsigned int owner, i, k, nj = 0;
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
	k = nta_talloc_triples(test, a, x, b, NTA_TDF_ROUNDS, junk, &nj);
	for (i = 0; i < k; i++) {
		memset(a[i], 0xa0 ^ i, NTA_UNIT);
		memset(b[i], 0xb0 ^ i, NTA_UNIT);
	}

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
	blk->meta[unit].cls = 0;
	/* Release: the bit is cleared before the other CPU frees. */
	smp_store_release(&gate->go, 1);
	for (spins = 0; spins < 1000000000UL; spins++) {
		/* Acquire: its free is complete when we restore the bit. */
		if (smp_load_acquire(&gate->done))
			break;
		cpu_relax();
	}
	__set_bit(unit, blk->start);
	blk->meta[unit].cls = 1;
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
	unsigned int i, k, nj = 0;
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
	k = nta_talloc_triples(test, o, n, g, NTA_TRACE_MAX, junk, &nj);

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

static void nta_tstranded_restore(void *data)
{
	WRITE_ONCE(nta_stranded_delay, (unsigned long)data);
}

/*
 * From here the owner keeps to its fast path in nta_run_on(): one unit
 * allocated and freed first, so that its bin and the bins' decay are set
 * up and every later pair stays on the fast path.
 */
static void nta_tfast_start(struct kunit *test)
{
	void *p = nta_alloc(NTA_UNIT, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, p);
	nta_free(p, NTA_UNIT);
	nta_tfast_obj = nta_alloc(NTA_UNIT, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, nta_tfast_obj);
	nta_tfast_pairs = 0;
}

static void nta_tfast_stop(void)
{
	if (nta_tfast_obj)
		nta_free(nta_tfast_obj, NTA_UNIT);
	nta_tfast_obj = NULL;
}

/*
 * An idle owner is not interrupted for a remote free: neither by the free
 * nor by the freer's stranded-free timer (here due after one jiffy).
 * The free waits queued until the owner's next slow path drains it.
 */
static void nta_remote_idle_not_kicked(struct kunit *test)
{
	unsigned long saved = READ_ONCE(nta_stranded_delay);
	struct nta_stats s0, s1, s2;
	struct nta_tobjs *o;
	unsigned int owner;
	int other;
	void *p;

	nta_tneed_ready(test);
	owner = nta_tpin_two(test, &other);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, nta_tstranded_restore,
							(void *)saved), 0);
	WRITE_ONCE(nta_stranded_delay, 1);
	nta_drain_all();
	o = nta_talloc_objs(test, 1, 500);
	nta_tstats(&s0);
	o->from = 0;
	o->to = 1;
	o->wait_idle = owner;	/* the freer waits until we sleep */
	nta_run_on(test, other, nta_tfree_range, o, false);
	if (!o->was_idle)
		kunit_skip(test, "CPU %u did not go idle", owner);
	/* Idle all along, long past the stranded-free timer. */
	msleep(200);
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, kicks), 0);
	KUNIT_EXPECT_FALSE(test, nta_tremote_empty(owner));
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, frees), 0);
	/* Its next slow path (bins empty for this length) drains it. */
	p = nta_alloc(3 * NTA_UNIT, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	nta_tstats(&s2);
	KUNIT_EXPECT_TRUE(test, nta_tremote_empty(owner));
	KUNIT_EXPECT_EQ(test, NTA_D(&s1, &s2, frees), 1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s1, &s2, drains), 1);
	nta_free(p, 3 * NTA_UNIT);
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
	u64 drained;
	int other;

	nta_tneed_ready(test);
	owner = nta_tpin_two(test, &other);
	nta_drain_all();
	saved = READ_ONCE(nta_stranded_delay);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, nta_tstranded_restore,
							(void *)saved), 0);
	WRITE_ONCE(nta_stranded_delay, NTA_STRANDED_DELAY);
	o = nta_talloc_objs(test, 2, 700);
	nta_tfast_start(test);
	nta_tstats(&s0);
	/* The owner's own count of what it drained (the sum derives more). */
	drained = READ_ONCE(nta_tcpu(owner)->stats.frees);
	/*
	 * The owner keeps to its fast path while the other CPU frees and then
	 * spins until the owner drained: both busy, neither left alone.
	 */
	o->spin_for = owner + 1;
	t0 = jiffies;
	nta_tfree_on(test, other, o, 0, 2, true);
	waited = jiffies - t0;
	nta_tstats(&s1);
	drained = READ_ONCE(nta_tcpu(owner)->stats.frees) - drained;
	nta_tfast_stop();
	kunit_info(test, "drained after %u ms (bound %u ms)\n",
		   jiffies_to_msecs(waited), jiffies_to_msecs(NTA_STRANDED_DELAY));
	KUNIT_EXPECT_TRUE(test, nta_tremote_empty(owner));
	/* The bound plus a generous allowance for an emulated machine. */
	KUNIT_EXPECT_LE(test, waited, NTA_STRANDED_DELAY + HZ);
	KUNIT_EXPECT_EQ(test, drained, 2);
	/*
	 * Kicked by the timer, unless the owner drained on a slow path of its
	 * own first: its decay tick may shut its bins while the loop's object
	 * is out, and the next free then takes the slow path, which drains.
	 * Seen without a kick after 80 ms, and after 104 ms: past the timer's
	 * due time, but before the deferrable timer ran.  So the kick is not
	 * asserted; the bound above is, and a timer that never kicked would
	 * miss it whenever the owner keeps to its fast path.
	 */
	kunit_info(test, "%lld kicks\n", NTA_D(&s0, &s1, kicks));
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
 * nta_tpin_batched(), for tests that count what one drain does: the
 * stranded-free kick, which could split a drain in two, waits for an hour.
 */
static unsigned int nta_tpin_one_drain(struct kunit *test, int *other)
{
	unsigned int owner = nta_tpin_batched(test, other), cpu;

	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, nta_tstranded_restore,
							(void *)READ_ONCE(nta_stranded_delay)), 0);
	WRITE_ONCE(nta_stranded_delay, 3600 * HZ);
	/* Any CPU's timer armed before kicks every owner with work queued. */
	for_each_online_cpu(cpu)
		timer_delete_sync(&nta_tcpu(cpu)->stranded);
	return owner;
}

/*
 * Frees queued for an owner on twice as many blocks as NTA_TRIM_BATCHES
 * bounded drains take (whole-block objects: past the freer's batches, each
 * a block on the owner's remote list), the owner idle and not kicked:
 * nta_drain_all() frees all of them.  Then a short queue: the shrinker
 * counts a block for it, and its scan, on the other CPU, has the owner
 * drain it.
 */
static void nta_tshrink_on(void *arg)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL, .nr_to_scan = 1 };

	nta_shrink_scan(NULL, &sc);
}

static void nta_drain_long_queue(struct kunit *test)
{
	const unsigned int n = 2 * NTA_TRIM_BATCHES * NTA_DRAIN_BLOCKS;
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL };
	unsigned int owner, ms;
	struct nta_stats s0, s1;
	struct nta_tobjs *o;
	unsigned long free0;
	int other;

	nta_tneed_ready(test);
	if (READ_ONCE(nta_max_blocks) < 2 * n || READ_ONCE(nta_max_total_pages))
		kunit_skip(test, "needs nta_max= above %u blocks, no nta_max_total",
			   2 * n);
	owner = nta_tpin_one_drain(test, &other);
	free0 = nta_tfree_units(owner);
	nta_tstats(&s0);
	o = nta_talloc_objs(test, n, NTA_MAX_SIZE);
	nta_tfree_on(test, other, o, 0, n, false);
	KUNIT_ASSERT_GE(test, nta_tremote_blocks(owner),
			(NTA_TRIM_BATCHES + 2) * NTA_DRAIN_BLOCKS);
	KUNIT_EXPECT_GE(test, nta_shrink_count(NULL, &sc),
			1UL << NTA_BLOCK_ORDER);
	nta_drain_all();
	nta_tstats(&s1);
	KUNIT_EXPECT_FALSE(test, nta_tqueued(owner));
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, frees), n);
	KUNIT_EXPECT_EQ(test, s1.inuse_objects, s0.inuse_objects);
	KUNIT_EXPECT_EQ(test, nta_tfree_units(owner), free0);

	o = nta_talloc_objs(test, 2 * NTA_BATCH_MAX, NTA_UNIT);
	nta_tfree_on(test, other, o, 0, 2 * NTA_BATCH_MAX, false);
	KUNIT_ASSERT_TRUE(test, nta_tqueued(owner));
	KUNIT_EXPECT_GE(test, nta_shrink_count(NULL, &sc),
			1UL << NTA_BLOCK_ORDER);
	nta_run_on(test, other, nta_tshrink_on, NULL, false);
	for (ms = 0; ms < 1000 && nta_tqueued(owner); ms += 20)
		msleep(20);
	KUNIT_EXPECT_FALSE(test, nta_tqueued(owner));
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, s1.inuse_objects, s0.inuse_objects);
	nta_drain_all();
}

/*
 * Batched remote frees: a freer collects them without telling the owner,
 * publishes a full batch with one atomic, and nta_drain_all() publishes
 * the rest; the owner frees them all.  At most one atomic per remote free,
 * both sides counted.
 */
static void nta_batch_free_drain(struct kunit *test)
{
	const unsigned int n = 2 * NTA_BATCH_MAX + 5;
	struct nta_stats s0, s1, s2;
	unsigned int owner;
	struct nta_tobjs *o;
	unsigned long free0;
	int other;

	nta_tneed_ready(test);
	nta_tneed_reserve(test);
	owner = nta_tpin_batched(test, &other);
	free0 = nta_tfree_units(owner);
	nta_tstats(&s0);
	o = nta_talloc_objs(test, n, 700);

	/* One short of a full batch: nothing reaches the owner. */
	nta_tfree_on(test, other, o, 0, NTA_BATCH_MAX - 1, true);
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, remote_frees), NTA_BATCH_MAX - 1);
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
			n - (NTA_BATCH_MAX - 1));
	KUNIT_EXPECT_LT(test, nta_tfree_units(owner), free0);

	/* Two batches fill up and are published; five frees stay open. */
	nta_tstats(&s2);
	nta_tfree_on(test, other, o, NTA_BATCH_MAX - 1, n, true);
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

/* What this CPU's open batch for an owner held after one free. */
struct nta_tseen {
	bool open, usual;	/* open, in the slot the quick path reads */
	u8 obj[2], inside;	/* entries for obj[0], obj[1], obj[1] + 32 */
};

struct nta_tquick {
	void *obj[2];
	unsigned int size, owner, cpu;
	struct nta_tseen seen[4];	/* after each free */
	bool live, intact;		/* obj[1] after the refused frees */
};

#define NTA_TQUICK_FILL	0x5a

/*
 * Look at this CPU's open batch for @q->owner: the entries of the test's
 * pointers, whatever else other frees put there.
 */
static void nta_tquick_look(struct nta_tquick *q, struct nta_tseen *seen)
{
	struct nta_cpu *c = this_cpu_ptr(&nta_cpu);
	struct nta_batch *b = NULL;
	unsigned int slot, i;

	for (slot = 0; slot < NTA_BATCH_SLOTS && !b; slot++)
		if (c->batch_open[slot] && c->batch_open[slot]->owner == q->owner)
			b = c->batch_open[slot];
	if (!b)
		return;
	seen->open = true;
	seen->usual = b == c->batch_open[q->owner % NTA_BATCH_SLOTS];
	for (i = 0; i < b->nr; i++) {
		seen->obj[0] += b->obj[i] == q->obj[0];
		seen->obj[1] += b->obj[i] == q->obj[1];
		seen->inside += b->obj[i] == q->obj[1] + NTA_UNIT / 2;
	}
}

/* The other CPU's half of nta_batch_quick_refuses(). */
static void nta_tquick_frees(void *arg)
{
	struct nta_tquick *q = arg;
	void *bad = q->obj[1];

	/* The batch timer, a softirq, would publish the batch in between. */
	local_bh_disable();
	nta_free(q->obj[0], q->size);
	nta_tquick_look(q, &q->seen[0]);
	nta_free(bad, 100);				/* wrong size */
	nta_tquick_look(q, &q->seen[1]);
	nta_free(bad + NTA_UNIT / 2, q->size);		/* inside it */
	nta_tquick_look(q, &q->seen[2]);
	q->live = nta_check_free(nta_block_of(bad), bad, q->size) ==
		  NTA_FREE_OK;
	q->intact = !memchr_inv(bad, NTA_TQUICK_FILL, q->size);
	nta_free(bad, q->size);
	nta_tquick_look(q, &q->seen[3]);
	q->cpu = raw_smp_processor_id();
	local_bh_enable();
}

/* nta_batch_quick_refuses() with the objects on @owner, freed on @other. */
static void nta_tquick_on(struct kunit *test, unsigned int owner, int other)
{
	struct nta_tquick q = { .size = 700, .owner = owner };
	struct nta_stats s0, s1;
	int i;

	nta_tpin(test, owner);
	nta_drain_all();
	nta_tstats(&s0);
	for (i = 0; i < 2; i++) {
		q.obj[i] = nta_alloc(q.size, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, q.obj[i]);
		memset(q.obj[i], NTA_TQUICK_FILL, q.size);
	}
	nta_run_on(test, other, nta_tquick_frees, &q, true);
	KUNIT_ASSERT_EQ(test, q.cpu, other);
	for (i = 0; i < 4; i++) {
		kunit_info(test, "owner %u, free %d: batch %s, usual slot %d, entries %u %u %u\n",
			   owner, i, q.seen[i].open ? "open" : "not open", q.seen[i].usual,
			   q.seen[i].obj[0], q.seen[i].obj[1], q.seen[i].inside);
		KUNIT_EXPECT_TRUE(test, q.seen[i].open);
		KUNIT_EXPECT_TRUE(test, q.seen[i].usual);
		KUNIT_EXPECT_EQ(test, q.seen[i].obj[0], 1);
		/* The refused frees put nothing in the batch. */
		KUNIT_EXPECT_EQ(test, q.seen[i].obj[1], i == 3);
		KUNIT_EXPECT_EQ(test, q.seen[i].inside, 0);
	}
	KUNIT_EXPECT_TRUE(test, q.live);
	KUNIT_EXPECT_TRUE(test, q.intact);

	nta_drain_all();
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, bad_frees), 2);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, remote_frees), 2);
	KUNIT_EXPECT_EQ(test, s1.inuse_objects, s0.inuse_objects);
	KUNIT_EXPECT_EQ(test, s1.requested_bytes, s0.requested_bytes);
}

/*
 * Remote frees that find the owner's batch open take the quick path
 * (nta_batch_free_quick()).  One that fails a check there falls back to
 * nta_queue_for_owner(), which refuses and reports it: nothing of it goes
 * into the batch, nothing is written into the object, which stays live,
 * and the good frees before and after it are batched and drained as
 * usual.  Both ways round, so that the batch opens in its usual slot, the
 * one the quick path reads, for either owner.  The same results would
 * come from the fallback alone: what shows the quick path's own checks at
 * work is that removing them batches the bad pointers.
 */
static void nta_batch_quick_refuses(struct kunit *test)
{
	unsigned int owner;
	int other;

	nta_tneed_ready(test);
	owner = nta_tpin_batched(test, &other);
	nta_tquick_on(test, owner, other);
	nta_tquick_on(test, other, owner);
}

/*
 * A batch of large objects is published once it holds NTA_BATCH_UNITS,
 * long before NTA_BATCH_MAX objects: until the owner drains them, they
 * keep their blocks from going back.
 */
static void nta_batch_large_published(struct kunit *test)
{
	const unsigned int size = 8000, units = nta_size_to_units(size);
	const unsigned int k = DIV_ROUND_UP(NTA_BATCH_UNITS, units);
	struct nta_stats s0, s1;
	unsigned int owner;
	struct nta_tobjs *o;
	int other;

	nta_tneed_ready(test);
	nta_tneed_reserve(test);
	if (size > nta_max_size())
		kunit_skip(test, "objects of %u bytes are too large", size);
	KUNIT_ASSERT_LT(test, k, NTA_BATCH_MAX);
	owner = nta_tpin_batched(test, &other);
	nta_tstats(&s0);
	o = nta_talloc_objs(test, k, size);

	/* One short of the units: the batch stays with the freer. */
	nta_tfree_on(test, other, o, 0, k - 1, true);
	KUNIT_EXPECT_TRUE(test, nta_tinbox_empty(owner));
	/* The object that makes it hold NTA_BATCH_UNITS publishes it. */
	nta_tfree_on(test, other, o, k - 1, k, true);
	KUNIT_EXPECT_FALSE(test, nta_tinbox_empty(owner));

	nta_drain_all();
	nta_tstats(&s1);
	KUNIT_EXPECT_TRUE(test, nta_tinbox_empty(owner));
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, remote_frees), k);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, frees), k);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, bad_frees), 0);
	KUNIT_EXPECT_EQ(test, s1.inuse_objects, s0.inuse_objects);
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
	WRITE_ONCE(nta_batch_delay, (unsigned long)data);
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
							(void *)READ_ONCE(nta_batch_delay)), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, nta_tstranded_restore,
							(void *)READ_ONCE(nta_stranded_delay)), 0);
	WRITE_ONCE(nta_batch_delay, msecs_to_jiffies(50));
	WRITE_ONCE(nta_stranded_delay, msecs_to_jiffies(50));
	/* Armed for an hour by an earlier test, it would not be re-armed. */
	timer_delete_sync(&nta_tcpu(other)->batch_timer);
	o = nta_talloc_objs(test, 3, 1500);
	nta_tfast_start(test);
	nta_tstats(&s0);
	/*
	 * Both CPUs busy until the owner drained: the freer spins, and the
	 * owner keeps to its fast path, as an owner that does neither is
	 * left alone and the timers are deferrable.
	 */
	o->spin_for = owner + 1;
	t0 = jiffies;
	nta_tfree_on(test, other, o, 0, 3, true);
	nta_tstats(&s1);
	nta_tfast_stop();
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, frees), 3 + nta_tfast_pairs);
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
	nta_tneed_reserve(test);
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
 * Pin the test to a CPU and drain every pool; *@busy is then that CPU's
 * block count.  Returns an array for @busy + @extra whole-block objects.
 */
static void **nta_tblock_objs(struct kunit *test, struct nta_pool **pool,
			      unsigned int *busy, unsigned int extra)
{
	void **objs;

	*pool = &nta_tcpu(nta_tpin(test, -1))->pool;
	nta_drain_all();
	*busy = READ_ONCE((*pool)->nr_blocks);
	objs = kunit_kcalloc(test, *busy + extra, sizeof(*objs), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, objs);
	return objs;
}

/*
 * The block map spans the memory the machine may have, hot-pluggable
 * ranges included, and makes a chunk's bitmap with its first block.  The
 * second half needs such a range (make check's NUMA boot has one:
 * maxmem=): a block address in it, where there is no memory yet, is
 * taken into the map and given back as a hot-added block would be.
 */
static void nta_block_map_hotplug(struct kunit *test)
{
	u64 covered = (u64)READ_ONCE(nta_block_map_bits) <<
		      (PAGE_SHIFT + NTA_BLOCK_ORDER);
	unsigned long chunk, idx;
	void *fake;

	nta_tneed_ready(test);
	KUNIT_EXPECT_GE(test, covered, (u64)PFN_PHYS(max_possible_pfn));
	KUNIT_EXPECT_GE(test, covered,
			(u64)((unsigned long)high_memory - PAGE_OFFSET));
	if (max_possible_pfn <= max_pfn)
		kunit_skip(test, "no memory may be hot-added (boot with maxmem=)");

	/* A chunk all beyond the memory present: never a block in it. */
	chunk = DIV_ROUND_UP(PFN_PHYS(max_pfn), 1UL << NTA_MAP_CHUNK_SHIFT);
	idx = chunk * NTA_MAP_CHUNK_BITS;
	KUNIT_ASSERT_LT(test, idx, nta_block_map_bits);
	KUNIT_EXPECT_NULL(test, READ_ONCE(nta_block_map[chunk]));
	fake = (void *)(PAGE_OFFSET +
			((idx + 1) << (PAGE_SHIFT + NTA_BLOCK_ORDER)));
	KUNIT_EXPECT_FALSE(test, __nta_owns(fake));

	KUNIT_ASSERT_TRUE(test, nta_map_set(fake, GFP_KERNEL));
	KUNIT_EXPECT_NOT_NULL(test, READ_ONCE(nta_block_map[chunk]));
	KUNIT_EXPECT_TRUE(test, __nta_owns(fake));
	KUNIT_EXPECT_TRUE(test, __nta_owns(fake + NTA_BLOCK_SIZE - 1));
	KUNIT_EXPECT_FALSE(test, __nta_owns(fake - 1));
	KUNIT_EXPECT_FALSE(test, __nta_owns(fake + NTA_BLOCK_SIZE));
	nta_map_clear(fake);
	KUNIT_EXPECT_FALSE(test, __nta_owns(fake));
	/* The bitmap stays for the chunk's next block. */
	KUNIT_EXPECT_NOT_NULL(test, READ_ONCE(nta_block_map[chunk]));
}

/*
 * Whole-block objects beyond what the pool has force growth; freeing them
 * gives back every grown block, and the reserve stays.
 */
static void nta_grow_and_return(struct kunit *test)
{
	unsigned int blocks0, n, i;
	struct nta_stats s0, s1, s2;
	struct nta_pool *pool;
	void **objs;

	nta_tneed_ready(test);
	nta_tneed_reserve(test);
	objs = nta_tblock_objs(test, &pool, &blocks0, 2);
	n = blocks0 + 2;

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

/*
 * What nta_grow_flags() sees of block allocations: the flags of the last
 * one, how many there were, and whether to make them fail, as the page
 * allocator would when memory is short.
 */
static struct {
	gfp_t gfp;
	unsigned long calls;
	bool fail;
} nta_tgrow;

/*
 * nta_block_pages() under the test's static stub: it sees the flags the
 * page allocator is asked with for a new block.
 */
static struct page *nta_tblock_pages(int node, gfp_t gfp)
{
	WRITE_ONCE(nta_tgrow.gfp, gfp);
	WRITE_ONCE(nta_tgrow.calls, nta_tgrow.calls + 1);
	if (READ_ONCE(nta_tgrow.fail))
		return NULL;
	return alloc_pages_node(node, gfp, NTA_BLOCK_ORDER);
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
	memset(&nta_tgrow, 0, sizeof(nta_tgrow));
	/* Only this test's own allocations: it ends with the test. */
	kunit_activate_static_stub(test, nta_block_pages, nta_tblock_pages);

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

/* Objects in @bins, of every length. */
static unsigned int nta_tbin_objects(const struct nta_bins *bins)
{
	unsigned int i, n = 0;

	for (i = 0; i < NTA_NR_LISTS; i++)
		n += nta_bin_nr_seen(&bins->slot[i]);
	return n;
}

/*
 * The shrinker counts pages, and a scan frees what it says, synchronously,
 * up to nr_to_scan: here the spare blocks of the test's own CPU.
 */
static void nta_shrinker_contract(struct kunit *test)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL };
	unsigned int cpu, n = 0, i, max, spares, blocks, busy, binned;
	struct nta_pool *pool;
	unsigned long pages, freed;
	void **objs, *p;

	nta_tneed_ready(test);
	nta_tneed_reserve(test);
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
	 * One page asked for: one block (its pages) given back, and the blocks
	 * that the merge of the bins, before it, makes whole above the spares:
	 * at most one per object the bins held, of whatever size.  It says
	 * what it freed.
	 */
	binned = nta_tbin_objects(&nta_tcpu(cpu)->bins);
	sc.nr_to_scan = 1;
	freed = nta_shrink_scan(NULL, &sc) >> NTA_BLOCK_ORDER;
	KUNIT_EXPECT_GE(test, freed, 1);
	KUNIT_EXPECT_LE(test, freed, 1 + binned);
	KUNIT_EXPECT_EQ(test, READ_ONCE(pool->nr_blocks), blocks - freed);
	KUNIT_EXPECT_EQ(test, nta_bins_units_seen(&nta_tcpu(cpu)->bins), 0);

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

/*
 * Make @pool give back blocks and grow again: @extra whole-block objects
 * above the @busy that hold every block already there, freed (all but the
 * one the bin keeps merge, and the blocks above the spares go back) and
 * allocated again (the pool grows by as many).  Leaves them allocated.
 */
static void nta_tchurn(struct kunit *test, struct nta_pool *pool, void **objs,
		       unsigned int busy, unsigned int extra)
{
	unsigned int i;

	for (i = busy; i < busy + extra; i++)
		nta_free(objs[i], NTA_MAX_SIZE);
	for (i = busy; i < busy + extra; i++) {
		objs[i] = nta_alloc(NTA_MAX_SIZE, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, objs[i]);
	}
}

/*
 * Allocate @n whole-block objects on this CPU into @objs: the first
 * fill the blocks the pool has, the rest grow it.
 */
static void nta_tfill_blocks(struct kunit *test, void **objs, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++) {
		objs[i] = nta_alloc(NTA_MAX_SIZE, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, objs[i]);
	}
}

/*
 * The start of the spare tests: NTA on (frees go into the bins), this
 * CPU's pool at NTA_SPARE_BLOCKS spares, and @busy + @extra whole-block
 * objects allocated into the array returned, the last @extra grown.
 */
static void **nta_tspares_start(struct kunit *test, struct nta_pool **pool,
				unsigned int *busy, unsigned int extra)
{
	void **objs;

	nta_tneed_ready(test);
	if (!nta_enabled())
		kunit_skip(test, "NTA is switched off: frees do not fill the bins");
	objs = nta_tblock_objs(test, pool, busy, extra);
	KUNIT_ASSERT_EQ(test, (*pool)->spares, NTA_SPARE_BLOCKS);
	nta_tfill_blocks(test, objs, *busy + extra);
	return objs;
}

/*
 * A pool that gives blocks back and then grows again keeps more spares,
 * so the next swing of the same size costs no page allocation; ticks
 * without growth bring the spares, and the wholly free blocks above them,
 * back to NTA_SPARE_BLOCKS.
 */
static void nta_spares_follow_churn(struct kunit *test)
{
	const unsigned int extra = 2 * NTA_SPARE_BLOCKS + 1;
	unsigned int busy, i, ms, released;
	struct nta_pool *pool;
	void **objs;

	objs = nta_tspares_start(test, &pool, &busy, extra);
	KUNIT_EXPECT_EQ(test, pool->spares, NTA_SPARE_BLOCKS);

	/*
	 * Of the extra blocks, one still holds the object its bin keeps; of
	 * the others, those above the spares went back, and were taken again.
	 */
	released = pool->released;
	nta_tchurn(test, pool, objs, busy, extra);
	KUNIT_EXPECT_EQ(test, pool->released - released,
			extra - 1 - NTA_SPARE_BLOCKS);
	KUNIT_EXPECT_EQ(test, pool->spares, 2 * NTA_SPARE_BLOCKS);

	/* The same swing again: nothing goes back to the page allocator. */
	released = pool->released;
	nta_tchurn(test, pool, objs, busy, extra);
	KUNIT_EXPECT_EQ(test, pool->released - released, 0);
	KUNIT_EXPECT_EQ(test, pool->nr_blocks, busy + extra);

	/* Idle now: the decay ticks take the spares back down. */
	for (i = busy; i < busy + extra; i++)
		nta_free(objs[i], NTA_MAX_SIZE);
	KUNIT_EXPECT_GE(test, READ_ONCE(pool->whole), NTA_SPARE_BLOCKS + 1);
	for (ms = 0; ms < 5000 && (READ_ONCE(pool->spares) > NTA_SPARE_BLOCKS ||
				   READ_ONCE(pool->whole) > NTA_SPARE_BLOCKS);
	     ms += 50)
		msleep(50);
	kunit_info(test, "spares back to %u after %u ms (tick %u ms)\n",
		   pool->spares, ms, jiffies_to_msecs(NTA_BIN_DECAY));
	KUNIT_EXPECT_EQ(test, READ_ONCE(pool->spares), NTA_SPARE_BLOCKS);
	KUNIT_EXPECT_LE(test, READ_ONCE(pool->whole), NTA_SPARE_BLOCKS);
	KUNIT_EXPECT_LE(test, ms, 3 * jiffies_to_msecs(NTA_BIN_DECAY) + 1000);
	nta_tsnap_this_cpu(test, nta_tsnap_alloc(test));	/* checks the pool */
	for (i = 0; i < busy; i++)
		nta_free(objs[i], NTA_MAX_SIZE);
	nta_drain_all();
}

/*
 * The shrinker puts raised spares back to NTA_SPARE_BLOCKS, and the blocks
 * it takes do not count as a swing: growing after a shrink raises nothing.
 */
static void nta_spares_shrinker_resets(struct kunit *test)
{
	struct shrink_control sc = { .gfp_mask = GFP_KERNEL };
	const unsigned int extra = 2 * NTA_SPARE_BLOCKS + 1;
	unsigned int busy, i, released;
	struct nta_pool *pool;
	void **objs;

	nta_tneed_ready(test);
	objs = nta_tblock_objs(test, &pool, &busy, extra);
	nta_tfill_blocks(test, objs, busy + extra);
	nta_tchurn(test, pool, objs, busy, extra);
	KUNIT_ASSERT_EQ(test, pool->spares, 2 * NTA_SPARE_BLOCKS);

	for (i = busy; i < busy + extra; i++)
		nta_free(objs[i], NTA_MAX_SIZE);
	sc.nr_to_scan = (unsigned long)(busy + extra) << NTA_BLOCK_ORDER;
	KUNIT_EXPECT_NE(test, nta_shrink_scan(NULL, &sc), SHRINK_STOP);
	KUNIT_EXPECT_EQ(test, pool->spares, NTA_SPARE_BLOCKS);
	KUNIT_EXPECT_EQ(test, pool->whole, 0);

	/* Grown back by the shrinker's blocks: not a swing. */
	released = pool->released;
	nta_tfill_blocks(test, objs + busy, extra);
	KUNIT_EXPECT_EQ(test, pool->released, released);
	KUNIT_EXPECT_EQ(test, pool->spares, NTA_SPARE_BLOCKS);
	for (i = 0; i < busy + extra; i++)
		nta_free(objs[i], NTA_MAX_SIZE);
	nta_drain_all();
}

/*
 * Spares are raised no further than NTA_SPARE_MAX: a swing of twice that
 * many blocks raises them to the cap, and the next one gives back what is
 * above it again.
 */
static void nta_spares_capped(struct kunit *test)
{
	const unsigned int extra = 2 * NTA_SPARE_MAX;
	unsigned int busy, i, released;
	struct nta_pool *pool;
	void **objs;

	objs = nta_tspares_start(test, &pool, &busy, extra);

	/* One block keeps the object its bin holds; the rest swing. */
	released = pool->released;
	nta_tchurn(test, pool, objs, busy, extra);
	KUNIT_EXPECT_EQ(test, pool->released - released,
			extra - 1 - NTA_SPARE_BLOCKS);
	KUNIT_EXPECT_EQ(test, pool->spares, NTA_SPARE_MAX);

	released = pool->released;
	nta_tchurn(test, pool, objs, busy, extra);
	KUNIT_EXPECT_EQ(test, pool->released - released,
			extra - 1 - NTA_SPARE_MAX);
	KUNIT_EXPECT_EQ(test, pool->spares, NTA_SPARE_MAX);
	KUNIT_EXPECT_EQ(test, pool->nr_blocks, busy + extra);

	for (i = 0; i < busy + extra; i++)
		nta_free(objs[i], NTA_MAX_SIZE);
	nta_drain_all();
	KUNIT_EXPECT_EQ(test, pool->spares, NTA_SPARE_BLOCKS);
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

/*
 * NR_SLAB_UNRECLAIMABLE_B over all nodes, in bytes, per-CPU deltas
 * included: global_node_page_state() folds them in only now and then.
 * A fold that runs between the two reads is missed; the callers retry.
 */
static long nta_tslab_bytes(void)
{
	const enum node_stat_item item = NR_SLAB_UNRECLAIMABLE_B;
	struct pglist_data *pgdat;
	long pages = 0;
	unsigned int cpu;

	for_each_online_pgdat(pgdat) {
		pages += atomic_long_read(&pgdat->vm_stat[item]);
		for_each_possible_cpu(cpu)
			pages += per_cpu_ptr(pgdat->per_cpu_nodestats,
					     cpu)->vm_node_stat_diff[item];
	}
	return pages << PAGE_SHIFT;
}

static long nta_theld(void)
{
	return atomic_long_read(&nta_held_pages);
}

/* Attempts at a figure other slab users may have moved meanwhile. */
#define NTA_TTRIES	4
/* A block in bytes and in pages, signed like the figures they are compared with. */
#define NTA_TBLOCK_BYTES	((long)NTA_BLOCK_SIZE)
#define NTA_TBLOCK_PAGES	((long)(NTA_BLOCK_SIZE >> PAGE_SHIFT))

/*
 * A block's pages show in NR_SLAB_UNRECLAIMABLE_B (SUnreclaim in
 * /proc/meminfo) and in NTA's footprint from the moment a pool grows by it
 * until it is back with the page allocator, after its RCU grace period:
 * by exactly the block's bytes both ways.  The rest of the kernel's slab
 * moves the node counter too, so a cycle whose figures moved by anything
 * else is tried again.
 */
static void nta_block_vmstat(struct kunit *test)
{
	long slab0 = 0, slab1 = 0, slab2 = 0, held0 = 0, held1 = 0, held2 = 0;
	unsigned int blocks0, n = 0, i, try, max;
	struct nta_stats s0, s1;
	struct nta_pool *pool;
	void **objs, *p;

	nta_tneed_ready(test);
	objs = nta_tblock_objs(test, &pool, &blocks0, NTA_TTRIES);
	max = blocks0 + NTA_TTRIES;
	for (try = 0; try < NTA_TTRIES; try++) {
		/* Whole-block objects until one makes the pool grow. */
		do {
			nta_tstats(&s0);
			held0 = nta_theld();
			slab0 = nta_tslab_bytes();
			p = nta_alloc(NTA_MAX_SIZE, GFP_KERNEL);
			slab1 = nta_tslab_bytes();
			held1 = nta_theld();
			nta_tstats(&s1);
			KUNIT_ASSERT_NOT_NULL(test, p);
			objs[n++] = p;
		} while (!NTA_D(&s0, &s1, grows) && n < max);
		KUNIT_ASSERT_EQ(test, NTA_D(&s0, &s1, grows), 1);
		/* Back: kept as a spare, until the drain trims it. */
		nta_free(objs[--n], NTA_MAX_SIZE);
		nta_drain_all();
		rcu_barrier();
		slab2 = nta_tslab_bytes();
		held2 = nta_theld();
		if (slab1 - slab0 == NTA_TBLOCK_BYTES && slab2 == slab0)
			break;
	}
	kunit_info(test, "%u of %u tries", min(try + 1, NTA_TTRIES), NTA_TTRIES);
	KUNIT_EXPECT_EQ(test, slab1 - slab0, NTA_TBLOCK_BYTES);
	KUNIT_EXPECT_EQ(test, slab2 - slab0, 0);
	KUNIT_EXPECT_EQ(test, held1 - held0, NTA_TBLOCK_PAGES);
	KUNIT_EXPECT_EQ(test, held2, held0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(pool->nr_blocks), blocks0);
	for (i = 0; i < n; i++)
		nta_free(objs[i], NTA_MAX_SIZE);
	nta_drain_all();
}

/*
 * The block freed at once when the pool no longer needs it and the one
 * given back after a grace period both leave the node counter; a block
 * the page allocator could not place in the block map never entered it.
 */
static void nta_block_vmstat_free_paths(struct kunit *test)
{
	long slab0 = 0, slab1 = 0, slab2 = 0, slab3 = 0, held0, held1;
	struct nta_block *blk;
	unsigned int try;

	nta_tneed_ready(test);
	nta_tpin(test, -1);
	held0 = nta_theld();
	for (try = 0; try < NTA_TTRIES; try++) {
		LIST_HEAD(list);

		slab0 = nta_tslab_bytes();
		blk = nta_grow_block(numa_mem_id(), GFP_KERNEL);
		slab1 = nta_tslab_bytes();
		KUNIT_ASSERT_FALSE(test, IS_ERR_OR_NULL(blk));
		KUNIT_EXPECT_TRUE(test, nta_owns(blk));
		KUNIT_EXPECT_EQ(test, nta_theld() - held0,
				NTA_TBLOCK_PAGES);
		nta_free_block(blk);
		slab2 = nta_tslab_bytes();
		KUNIT_EXPECT_EQ(test, nta_theld(), held0);

		blk = nta_new_block(numa_mem_id(), GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, blk);
		held1 = nta_theld();
		list_add(&blk->link, &list);
		nta_release_blocks(&list);
		/* Still NTA's pages until the grace period ends. */
		KUNIT_EXPECT_EQ(test, nta_theld(), held1);
		rcu_barrier();
		slab3 = nta_tslab_bytes();
		KUNIT_EXPECT_EQ(test, nta_theld(), held0);
		if (slab1 - slab0 == NTA_TBLOCK_BYTES && slab2 == slab0 &&
		    slab3 == slab0)
			break;
	}
	kunit_info(test, "%u of %u tries", min(try + 1, NTA_TTRIES), NTA_TTRIES);
	KUNIT_EXPECT_EQ(test, slab1 - slab0, NTA_TBLOCK_BYTES);
	KUNIT_EXPECT_EQ(test, slab2 - slab0, 0);
	KUNIT_EXPECT_EQ(test, slab3 - slab0, 0);
}

static void nta_trestore_max_total(void *data)
{
	WRITE_ONCE(nta_max_total_pages, (unsigned long)data);
}

/*
 * With net.core.nta_max_total at NTA's footprint, a request that needs a
 * new block is not served (an skb head comes from kmalloc) and the
 * footprint stays; one block more of limit lets the pool grow by one.
 * Reserve blocks are not refused: the sysctl keeps the limit above them.
 */
static void nta_max_total(struct kunit *test)
{
	unsigned int blocks0, n = 0, i, hsize;
	struct nta_stats s0, s1, s2;
	struct nta_pool *pool;
	struct nta_block *blk;
	unsigned long failed0;
	struct sk_buff *skb;
	void **objs, *p;
	long held0;

	nta_tneed_ready(test);
	nta_tneed_reserve(test);
	if (!nta_enabled())
		kunit_skip(test, "net.core.nta is 0");
	objs = nta_tblock_objs(test, &pool, &blocks0, 2);
	KUNIT_ASSERT_EQ(test,
			kunit_add_action_or_reset(test, nta_trestore_max_total,
						  (void *)READ_ONCE(nta_max_total_pages)),
			0);
	held0 = nta_theld();
	WRITE_ONCE(nta_max_total_pages, held0);
	failed0 = READ_ONCE(nta_tcpu(raw_smp_processor_id())->grow_failed);

	nta_tstats(&s0);
	while (n <= blocks0 && (p = nta_alloc(NTA_MAX_SIZE, GFP_KERNEL)))
		objs[n++] = p;
	nta_tstats(&s1);
	KUNIT_EXPECT_LE(test, n, blocks0);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, grows), 0);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, failures), 1);
	KUNIT_EXPECT_EQ(test, nta_theld(), held0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(pool->nr_blocks), blocks0);
	/* Refused for the limit, not for memory: growth does not rest. */
	KUNIT_EXPECT_EQ(test,
			READ_ONCE(nta_tcpu(raw_smp_processor_id())->grow_failed),
			failed0);

	/* An skb head that needs a whole block falls back to kmalloc. */
	hsize = NTA_MAX_SIZE - SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	skb = alloc_skb(hsize, GFP_KERNEL);
	nta_tstats(&s2);
	KUNIT_ASSERT_NOT_NULL(test, skb);
	KUNIT_EXPECT_FALSE(test, nta_owns(skb->head));
	KUNIT_EXPECT_EQ(test, skb->__tsize, 0);
	KUNIT_EXPECT_EQ(test, NTA_D(&s1, &s2, fallbacks), 1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s1, &s2, grows), 0);
	KUNIT_EXPECT_EQ(test, nta_theld(), held0);
	kfree_skb(skb);

	/* Reserve blocks are taken whatever the limit. */
	blk = nta_new_block(numa_mem_id(), GFP_KERNEL);
	KUNIT_EXPECT_NOT_NULL(test, blk);
	if (blk)
		nta_free_block(blk);
	KUNIT_EXPECT_TRUE(test, IS_ERR(nta_grow_block(numa_mem_id(),
						      GFP_KERNEL)));

	/* One block of room: one growth, then the limit again. */
	WRITE_ONCE(nta_max_total_pages, held0 + NTA_TBLOCK_PAGES);
	objs[n] = nta_alloc(NTA_MAX_SIZE, GFP_KERNEL);
	KUNIT_EXPECT_NOT_NULL(test, objs[n]);
	if (objs[n])
		n++;
	KUNIT_EXPECT_NULL(test, nta_alloc(NTA_MAX_SIZE, GFP_KERNEL));
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s2, &s1, grows), 1);
	KUNIT_EXPECT_EQ(test, nta_theld() - held0, NTA_TBLOCK_PAGES);

	for (i = 0; i < n; i++)
		nta_free(objs[i], NTA_MAX_SIZE);
	nta_drain_all();
	rcu_barrier();
	KUNIT_EXPECT_EQ(test, READ_ONCE(pool->nr_blocks), blocks0);
	KUNIT_EXPECT_EQ(test, nta_theld(), held0);
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

	for (p = c->bins.slot[units].head; p && n <= NTA_BIN_MAX << NTA_BIN_SHIFT_MAX;
	     p = nta_bin_next(p, units))
		n++;
	return n;
}

/*
 * The bin links: the object after a binned one is the word a quarter
 * into it, decoded; with CONFIG_SLAB_FREELIST_HARDENED the raw word is not that
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
	KUNIT_ASSERT_PTR_EQ(test, c->bins.slot[units].head, b);
	KUNIT_EXPECT_PTR_EQ(test, nta_bin_next(b, units), a);
	raw = *(unsigned long *)nta_bin_link_at(b, units);
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
 * The start of the tests of checked links: NTA on, links checked (else a
 * skip), pinned, bins empty, and two live objects of @size in *@a, *@b.
 */
static struct nta_cpu *nta_tchecked_pair(struct kunit *test, unsigned int size,
					 void **a, void **b)
{
	unsigned int cpu;

	nta_tneed_ready(test);
	if (!nta_enabled())
		kunit_skip(test, "NTA is switched off: frees do not fill the bins");
	if (!nta_links_checked())
		kunit_skip(test, "links are checked with LIST_HARDENED or SLAB_FREELIST_HARDENED");
	cpu = nta_tpin(test, -1);
	nta_drain_all();
	*a = nta_alloc(size, GFP_KERNEL);
	*b = nta_alloc(size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, *a);
	KUNIT_ASSERT_NOT_NULL(test, *b);
	return nta_tcpu(cpu);
}

/*
 * A bin link overwritten (a write after free into a binned head) to a
 * pointer off a unit boundary: the allocation that would follow it drops
 * the bin and reports, and hands out neither the bad pointer nor the
 * objects the bin still held (they stay out of use, as a quarantined
 * pool's chunks do).
 */
static void nta_bin_link_overwritten(struct kunit *test)
{
	unsigned int units = 2, size = units * NTA_UNIT;
	void *a, *b, *p, **at;
	struct nta_cpu *c;
	int reports;

	c = nta_tchecked_pair(test, size, &a, &b);
	nta_free(a, size);
	nta_free(b, size);
	KUNIT_ASSERT_PTR_EQ(test, c->bins.slot[units].head, b);
	KUNIT_ASSERT_EQ(test, nta_bin_nr(&c->bins.slot[units]), 2);
	/* b's link now decodes to a + 1: encoded, so the check cannot miss. */
	at = nta_bin_link_at(b, units);
	*at = nta_bin_link(at, a + 1);
	reports = atomic_read(&nta_poison_reports);
	p = nta_alloc(size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	KUNIT_EXPECT_PTR_NE(test, p, a + 1);
	KUNIT_EXPECT_PTR_NE(test, p, b);
	KUNIT_EXPECT_PTR_NE(test, p, a);
	KUNIT_EXPECT_EQ(test, atomic_read(&nta_poison_reports), reports + 1);
	KUNIT_EXPECT_NULL(test, c->bins.slot[units].head);
	KUNIT_EXPECT_EQ(test, nta_bin_nr(&c->bins.slot[units]), 0);
	KUNIT_EXPECT_EQ(test, nta_bins_units_seen(&c->bins), 0);
	nta_free(p, size);
	/* Park the two again, under the mark, to be merged. */
	KUNIT_ASSERT_TRUE(test, nta_fast_enter(&c));
	nta_bin_push(c, a, units);
	nta_bin_push(c, b, units);
	nta_fast_drop_mark();
	nta_drain_all();
}

/*
 * A quarantined pool hands out nothing more: the first slow path or merge
 * of the bins that finds it broken closes the bins too, so an object
 * parked in them before is not handed out again, and allocations fail
 * (heads come from kmalloc).  Closing drops the bins without merging
 * them: the pool's free units do not change, and no bin link is followed.
 * The merge here is the decay tick's, a trim's and a dead CPU's.
 */
static void nta_bins_closed_on_quarantine(struct kunit *test)
{
	unsigned int units = 2, size = units * NTA_UNIT;
	unsigned long flags, free_units = 0;
	LIST_HEAD(released);
	struct nta_block *blk;
	bool has_mark, binned;
	struct nta_cpu *c;
	void *a, *b;

	c = nta_tchecked_pair(test, size, &a, &b);
	nta_free(b, size);
	/*
	 * Under the lock and the mark, so that no interrupt pops b (and a
	 * after it) between the overwrite and the close: b's link overwritten
	 * to name a, which is live (as a write after free would, with a
	 * plausible address), the pool marked broken, then a merge of the
	 * bins.  A merge or close that followed the bin's links would free a.
	 */
	c = nta_slow_lock(&flags, &has_mark);
	binned = has_mark && c->bins.slot[units].head == b;
	if (binned) {
		nta_bin_set_next(a, units, NULL);
		nta_bin_set_next(b, units, a);
		c->pool.broken = true;
		free_units = c->pool.free_units;
		nta_bins_flush_some(&c->bins, &c->pool, NTA_FLUSH_BATCH,
				    &released);
	}
	nta_slow_unlock(c, has_mark, flags);
	KUNIT_ASSERT_TRUE_MSG(test, binned, "b not at the head of its bin");
	KUNIT_EXPECT_TRUE(test, list_empty(&released));

	KUNIT_EXPECT_TRUE(test, c->bins.closed);
	KUNIT_EXPECT_EQ(test, nta_bins_units_seen(&c->bins), 0);
	KUNIT_EXPECT_NULL(test, c->bins.slot[units].head);
	KUNIT_EXPECT_EQ(test, c->pool.free_units, free_units);
	blk = nta_block_of(a);
	KUNIT_EXPECT_EQ(test, blk->meta[nta_unit_of(blk, a)].cls, units);
	KUNIT_EXPECT_FALSE(test, nta_bin_has_room(&c->bins, units));
	/* Allocations fail: the bins closed, the pool hands out nothing. */
	KUNIT_EXPECT_NULL(test, nta_alloc(5 * NTA_UNIT, GFP_KERNEL));
	/* b, binned before the quarantine, is not handed out again. */
	KUNIT_EXPECT_NULL(test, nta_alloc(size, GFP_KERNEL));

	/*
	 * Undo, under the lock and the mark (taken in that order, as a slow
	 * path does, also on PREEMPT_RT): the pool and bins as before, and b,
	 * dropped with the bins, live again (and counted in again, as its
	 * free counted it out) to be freed.
	 */
	c = nta_slow_lock(&flags, &has_mark);
	KUNIT_ASSERT_TRUE(test, has_mark);
	c->pool.broken = false;
	c->bins.closed = false;
	nta_bins_set_shift(&c->bins, c->bins.shift);
	blk = nta_block_of(b);
	nta_mark_live(blk, nta_unit_of(blk, b), units);
	nta_account(c, false, size, 1);
	nta_slow_unlock(c, has_mark, flags);
	nta_free(b, size);
	nta_free(a, size);
	nta_drain_all();
}

/*
 * The bins' tests: this CPU, pinned, its bins emptied, and @n objects of
 * @size in @objs; skipped with NTA off, whose frees fill no bin.
 */
static struct nta_cpu *nta_tbins_start(struct kunit *test, void **objs,
				       unsigned int n, unsigned int size)
{
	struct nta_cpu *c;
	unsigned int i;

	nta_tneed_ready(test);
	if (!nta_enabled())
		kunit_skip(test, "NTA is switched off: frees do not fill the bins");
	c = nta_tcpu(nta_tpin(test, -1));
	nta_drain_all();
	for (i = 0; i < n; i++) {
		objs[i] = nta_alloc(size, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, objs[i]);
	}
	return c;
}

/*
 * Bins that sit idle decay: objects parked on a CPU that then makes no
 * fast-path allocation are merged into the pool within two
 * NTA_BIN_DECAY ticks, and the tick that finds the bins empty shuts them:
 * the next free parks through a slow path, which opens them and starts
 * the tick again, so that no object waits in bins no tick looks at.
 */
static void nta_bin_decay(struct kunit *test)
{
	unsigned int i, ms;
	struct nta_cpu *c;
	void *objs[4], *p;

	c = nta_tbins_start(test, objs, ARRAY_SIZE(objs), 300);
	for (i = 0; i < ARRAY_SIZE(objs); i++)
		nta_free(objs[i], 300);
	KUNIT_ASSERT_GE(test, nta_bins_units_seen(&c->bins),
			ARRAY_SIZE(objs) * nta_size_to_units(300));

	/* This CPU now only sleeps: no allocation of its own. */
	for (ms = 0; ms < 5000 && nta_bins_units_seen(&c->bins); ms += 50)
		msleep(50);
	kunit_info(test, "bins merged after %u ms (tick %u ms)\n", ms,
		   jiffies_to_msecs(NTA_BIN_DECAY));
	KUNIT_EXPECT_EQ(test, nta_bins_units_seen(&c->bins), 0);
	KUNIT_EXPECT_LE(test, ms, 2 * jiffies_to_msecs(NTA_BIN_DECAY) + 1000);
	for (ms = 0; ms < 5000 && READ_ONCE(c->bins.open); ms += 50)
		msleep(50);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(c->bins.open));
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->bins.granted), 0);

	p = nta_alloc(300, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, p);
	nta_free(p, 300);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(c->bins.open));
	KUNIT_EXPECT_TRUE(test, timer_pending(&c->decay));
	KUNIT_EXPECT_EQ(test, nta_bins_units_seen(&c->bins), nta_size_to_units(300));
	KUNIT_EXPECT_PTR_EQ(test, c->bins.slot[nta_size_to_units(300)].head, p);
	nta_drain_all();
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
	nta_tneed_reserve(test);
	cpu = nta_tpin(test, -1);
	c = nta_tcpu(cpu);
	nta_drain_all();
	KUNIT_EXPECT_EQ(test, nta_bins_units_seen(&c->bins), 0);
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
	KUNIT_EXPECT_PTR_EQ(test, c->bins.slot[units].head, p);
	KUNIT_EXPECT_EQ(test, nta_cls(nta_block_of(p), nta_tunit(p)), 0);
	/* A second free of a binned object is a double free. */
	nta_free(p, 1500);
	nta_tstats(&s2);
	KUNIT_EXPECT_EQ(test, NTA_D(&s1, &s2, bad_frees), 1);
	KUNIT_EXPECT_EQ(test, nta_tbin_walk(c, units), 1);

	q = nta_alloc(1480, GFP_KERNEL);	/* same length in units */
	KUNIT_EXPECT_PTR_EQ(test, q, p);
	KUNIT_EXPECT_EQ(test, nta_cls(nta_block_of(p), nta_tunit(p)), units);
	KUNIT_EXPECT_EQ(test, nta_bins_units_seen(&c->bins), 0);
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
	/* The base caps: the trim put back any a drain had raised. */
	KUNIT_ASSERT_EQ(test, READ_ONCE(c->bins.shift), 0);
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
		KUNIT_EXPECT_LE(test, nta_bin_nr_seen(&c->bins.slot[units]), cap);
		KUNIT_EXPECT_EQ(test, nta_tbin_walk(c, units), nta_bin_nr(&c->bins.slot[units]));
		KUNIT_EXPECT_LE(test, nta_bins_units_seen(&c->bins), NTA_BINS_UNITS);
	}
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, s1.inuse_objects, s0.inuse_objects);
	KUNIT_EXPECT_EQ(test, s1.requested_bytes, s0.requested_bytes);
	KUNIT_EXPECT_EQ(test, s1.binned_bytes, nta_bins_units_seen(&c->bins) * NTA_UNIT);
	KUNIT_EXPECT_GT(test, s1.binned_bytes, 0);
	nta_drain_all();
	KUNIT_EXPECT_EQ(test, nta_bins_units_seen(&c->bins), 0);
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, s1.free_bytes, s0.free_bytes);
	KUNIT_EXPECT_EQ(test, s1.blocks, s0.blocks);
}

/*
 * This CPU's grants, read under the lock and the mark: whether they add
 * up (@granted is each slot's cap times its length), stay within the
 * limit and the caps at the shift and match @held, and the grant and
 * count of the bin of @units units.
 */
static bool nta_tgrants(struct kunit *test, unsigned int units,
			unsigned int *cap, unsigned int *nr)
{
	unsigned int u, granted, limit;
	unsigned long flags, sum = 0;
	struct nta_bins *b;
	struct nta_cpu *c;
	bool has_mark, ok;

	c = nta_slow_lock(&flags, &has_mark);
	b = &c->bins;
	for (u = 1; u < NTA_NR_LISTS; u++)
		sum += (unsigned long)b->slot[u].cap * u;
	granted = b->granted;
	limit = b->limit;
	/* Lowered caps are enforced a batch at a time: over them till then. */
	ok = has_mark && sum == granted && (granted <= limit || b->over_caps);
	for (u = 1; u < NTA_NR_LISTS; u++)
		ok &= b->slot[u].cap <= nta_bin_cap_max(b, u) &&
		      (nta_bin_nr(&b->slot[u]) <= b->slot[u].cap || b->over_caps) &&
		      !!b->slot[u].cap == test_bit(u, b->held);
	*cap = b->slot[units].cap;
	*nr = nta_bin_nr(&b->slot[units]);
	nta_slow_unlock(c, has_mark, flags);
	if (!ok)
		kunit_info(test, "grants: %lu summed, %u kept, limit %u\n", sum,
			   granted, limit);
	return ok;
}

/*
 * A bin is granted room as it fills, not at once: the first free after a
 * flush takes one object of the CPU's budget, and each free that finds
 * its bin full at its grant doubles it, up to the bin's cap, so that the
 * owner's frees take the fast path again after a few slow ones.  A flush
 * takes every grant back.
 */
static void nta_bin_grants(struct kunit *test)
{
	static const unsigned int want[] = { 1, 2, 4, 4, 8, 8, 8, 8, 16 };
	const unsigned int size = 300, units = nta_size_to_units(size);
	void *objs[ARRAY_SIZE(want)];
	unsigned int cpu, i, cap, nr;
	struct nta_cpu *c;

	nta_tneed_ready(test);
	if (!nta_enabled())
		kunit_skip(test, "NTA is switched off: frees do not fill the bins");
	cpu = nta_tpin(test, -1);
	c = nta_tcpu(cpu);
	KUNIT_ASSERT_GE(test, nta_tbin_cap(units), 16);
	for (i = 0; i < ARRAY_SIZE(objs); i++) {
		objs[i] = nta_alloc(size, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, objs[i]);
	}
	nta_drain_all();
	/* No tick meanwhile: it takes back the grants the bins do not use. */
	timer_delete_sync(&c->decay);
	KUNIT_EXPECT_TRUE(test, nta_tgrants(test, units, &cap, &nr));
	KUNIT_EXPECT_EQ(test, cap, 0);
	for (i = 0; i < ARRAY_SIZE(objs); i++) {
		nta_free(objs[i], size);
		KUNIT_EXPECT_TRUE(test, nta_tgrants(test, units, &cap, &nr));
		/* A softirq's head of this length would move the count. */
		if (nr != i + 1) {
			for (i++; i < ARRAY_SIZE(objs); i++)
				nta_free(objs[i], size);
			nta_drain_all();
			mod_timer(&c->decay, jiffies + NTA_BIN_DECAY);
			kunit_skip(test, "other traffic used this length meanwhile");
		}
		KUNIT_EXPECT_EQ_MSG(test, cap, want[i], "after free %u", i);
	}
	KUNIT_EXPECT_EQ(test, nta_tbin_walk(c, units), ARRAY_SIZE(objs));
	nta_drain_all();
	KUNIT_EXPECT_TRUE(test, nta_tgrants(test, units, &cap, &nr));
	KUNIT_EXPECT_EQ(test, cap, 0);
	KUNIT_EXPECT_EQ(test, nta_bins_units_seen(&c->bins), 0);
	mod_timer(&c->decay, jiffies + NTA_BIN_DECAY);
}

/*
 * Grants a bin does not use go back at the decay tick, on a CPU that
 * keeps allocating too (whose bins the tick does not merge as idle): a
 * bin whose objects are all handed out keeps no room for their return,
 * which the fast paths alone would never give back.  With the tick's
 * nta_bins_reclaim() removed this fails: the tick took the busy path.
 */
static void nta_bin_grants_back(struct kunit *test)
{
	const unsigned int size = 300, units = nta_size_to_units(size);
	unsigned int i, cap, nr, ticks = 0;
	unsigned long end;
	struct nta_cpu *c;
	void *objs[8], *p;

	c = nta_tbins_start(test, objs, ARRAY_SIZE(objs), size);
	for (i = 0; i < ARRAY_SIZE(objs); i++)
		nta_free(objs[i], size);
	/* Handed out again from the bin: its grant stays. */
	for (i = 0; i < ARRAY_SIZE(objs); i++) {
		objs[i] = nta_alloc(size, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, objs[i]);
	}
	/* No tick until the grant is counted: it would take it back. */
	timer_delete_sync(&c->decay);
	KUNIT_EXPECT_TRUE(test, nta_tgrants(test, units, &cap, &nr));
	if (nr) {
		for (i = 0; i < ARRAY_SIZE(objs); i++)
			nta_free(objs[i], size);
		mod_timer(&c->decay, jiffies + NTA_BIN_DECAY);
		kunit_skip(test, "other traffic used this length meanwhile");
	}
	KUNIT_EXPECT_GE(test, cap, ARRAY_SIZE(objs));
	KUNIT_EXPECT_TRUE(test, test_bit(units, c->bins.held));

	/* Busy meanwhile: an allocation on the fast path between ticks. */
	mod_timer(&c->decay, jiffies);
	end = jiffies + 3 * NTA_BIN_DECAY;
	while (cap && time_before(jiffies, end)) {
		p = nta_alloc(NTA_UNIT, GFP_KERNEL);
		if (p)
			nta_free(p, NTA_UNIT);
		msleep(20);
		KUNIT_EXPECT_TRUE(test, nta_tgrants(test, units, &cap, &nr));
		ticks++;
	}
	KUNIT_EXPECT_EQ_MSG(test, cap, 0, "after %u polls", ticks);
	KUNIT_EXPECT_FALSE(test, test_bit(units, c->bins.held));
	for (i = 0; i < ARRAY_SIZE(objs); i++)
		nta_free(objs[i], size);
	nta_drain_all();
}

/*
 * A drain that brings more objects of a length than its bin holds fills
 * that bin to its cap and merges the rest one by one; the bins of other
 * lengths keep what they hold.  Everything comes back afterwards.
 */
static void nta_batch_drain_keeps_bins(struct kunit *test)
{
	const unsigned int n = 2 * NTA_BATCH_MAX, size = 704, other_size = 192;
	unsigned int owner, units, other_units, cap, nr;
	struct nta_stats s0, s1;
	struct nta_tobjs *o, *k;
	unsigned long free0;
	struct nta_cpu *c;
	int other;
	void *p;

	nta_tneed_ready(test);
	nta_tneed_reserve(test);
	owner = nta_tpin_one_drain(test, &other);
	c = nta_tcpu(owner);
	units = nta_size_to_units(size);
	other_units = nta_size_to_units(other_size);
	cap = nta_tbin_cap(units);
	KUNIT_ASSERT_LT(test, cap, n);
	free0 = nta_tfree_units(owner);
	nta_tstats(&s0);

	/* Four objects of another length, freed here: into their bin. */
	k = nta_talloc_objs(test, 4, other_size);
	nta_tfree_on(test, owner, k, 0, 4, false);
	KUNIT_ASSERT_EQ(test, nta_bin_nr_seen(&c->bins.slot[other_units]), 4);
	KUNIT_ASSERT_EQ(test, nta_bin_nr_seen(&c->bins.slot[units]), 0);

	/* Two full batches of the first length, freed on the other CPU... */
	o = nta_talloc_objs(test, n, size);
	nta_tfree_on(test, other, o, 0, n, true);
	/* ...and drained by this CPU's next slow path (or a kick). */
	p = nta_alloc(2 * NTA_UNIT, GFP_KERNEL);
	KUNIT_EXPECT_NOT_NULL(test, p);
	KUNIT_EXPECT_TRUE(test, nta_tinbox_empty(owner));
	nr = nta_bin_nr(&c->bins.slot[units]);
	KUNIT_EXPECT_EQ(test, nr, cap);
	KUNIT_EXPECT_EQ(test, nta_tbin_walk(c, units), cap);
	nr = nta_bin_nr(&c->bins.slot[other_units]);
	KUNIT_EXPECT_EQ(test, nr, 4);
	KUNIT_EXPECT_EQ(test, nta_tbin_walk(c, other_units), 4);
	nr = nta_bins_units_seen(&c->bins);
	KUNIT_EXPECT_EQ(test, nr, cap * units + 4 * other_units);
	/* The objects merged for want of room raise the caps, once. */
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->bins.shift), 1);
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, bad_frees), 0);

	if (p)
		nta_free(p, 2 * NTA_UNIT);
	nta_drain_all();
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, nta_bins_units_seen(&c->bins), 0);
	KUNIT_EXPECT_EQ(test, s1.inuse_objects, s0.inuse_objects);
	KUNIT_EXPECT_EQ(test, nta_tfree_units(owner), free0);
}

/*
 * An allocation of a length nothing here frees, so it takes the slow path,
 * which drains what other CPUs freed; kept in *@p until the test frees it.
 */
static void nta_tslow_alloc(struct kunit *test, void **p)
{
	*p = nta_alloc(NTA_UNIT, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, *p);
}

/*
 * The first of @len bytes at @p that is not @c, or NULL: memchr_inv()
 * open coded, because it is instrumented and these look into free memory.
 */
static const u8 *nta_tbyte_not(const void *p, size_t len, u8 c)
{
	const u8 *b = p;

	for (; len; len--, b++)
		if (*b != c)
			return b;
	return NULL;
}

/* nta_tbyte_not(@obj, @size, 0) but for a binned object's link word. */
static const u8 *nta_tnonzero_but_link(const void *obj, unsigned int size)
{
	const void *link = nta_bin_link_at(obj, nta_size_to_units(size));
	const u8 *b = nta_tbyte_not(obj, link - obj, 0);

	return b ?: nta_tbyte_not(link + sizeof(void *),
				  obj + size - link - sizeof(void *), 0);
}

/*
 * init_on_free=1 promises that freed memory is wiped.  A batched remote
 * free is wiped by the owner once its drain has checked it (nta.rst),
 * before the object goes into the owner's bin: a full batch, drained by
 * the owner's next slow path, leaves every object binned, unmerged (so
 * not poisoned by CONFIG_NTA_DEBUG either) and zero but for its bin link.
 */
static void nta_remote_init_on_free(struct kunit *test)
{
	const unsigned int n = NTA_BATCH_MAX, size = 512;
	unsigned int units = nta_size_to_units(size), owner, i;
	struct nta_tobjs *o;
	struct nta_cpu *c;
	void *trig, *p;
	int other;

	nta_tneed_ready(test);
	if (!want_init_on_free())
		kunit_skip(test, "init_on_free is off");
	owner = nta_tpin_one_drain(test, &other);
	c = nta_tcpu(owner);
	KUNIT_ASSERT_LE(test, n, nta_tbin_cap(units));
	o = nta_talloc_objs(test, n, size);
	for (i = 0; i < n; i++)
		memset(o->obj[i], 0x5a, size);
	/* A full batch is published at once. */
	nta_tfree_on(test, other, o, 0, n, true);
	KUNIT_ASSERT_FALSE(test, nta_tinbox_empty(owner));
	nta_tslow_alloc(test, &trig);
	KUNIT_EXPECT_TRUE(test, nta_tinbox_empty(owner));
	KUNIT_EXPECT_EQ(test, nta_tbin_walk(c, units), n);
	for (i = 0; i < n; i++) {
		p = o->obj[i];
		KUNIT_EXPECT_EQ(test, nta_cls(nta_block_of(p), nta_tunit(p)), 0);
		KUNIT_EXPECT_NULL(test, nta_tnonzero_but_link(p, size));
	}
	nta_free(trig, NTA_UNIT);
	nta_drain_all();
}

/*
 * init_on_free=1 on the owner: nta_free() wipes the object before it is
 * parked in its bin, on the slow path (the bins idle: the first free
 * starts their decay) as on the fast one (nta_free_not_plain()).  Only the
 * word of the bin's link may be non-zero.
 */
static void nta_local_init_on_free(struct kunit *test)
{
	unsigned int size = 512, units = nta_size_to_units(size), cpu, i;
	struct nta_stats s0, s1;
	bool empty;
	struct nta_tobjs *o;
	struct nta_cpu *c;
	void **p;

	nta_tneed_ready(test);
	if (!want_init_on_free())
		kunit_skip(test, "init_on_free is off");
	cpu = nta_tpin(test, -1);
	c = nta_tcpu(cpu);
	nta_drain_all();
	o = nta_talloc_objs(test, 2, size);
	p = o->obj;
	for (i = 0; i < 2; i++)
		memset(p[i], 0x5a, size);
	/*
	 * Bins empty, shut and their timer stopped, as a decay tick that
	 * found them empty leaves them: the first free goes slow.
	 */
	timer_delete_sync(&c->decay);
	KUNIT_ASSERT_TRUE(test, nta_fast_enter(&c));
	/* Under the mark: a softirq may have parked a head meanwhile. */
	empty = !nta_bins_units(&c->bins);
	if (empty)
		nta_bins_shut(&c->bins);
	nta_fast_drop_mark();
	if (!empty) {
		mod_timer(&c->decay, jiffies + NTA_BIN_DECAY);
		kunit_skip(test, "other traffic parked heads on this CPU meanwhile");
	}
	nta_tstats(&s0);
	nta_free(p[0], size);
	KUNIT_EXPECT_TRUE(test, timer_pending(&c->decay));
	nta_free(p[1], size);
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, frees), 2);
	KUNIT_EXPECT_EQ(test, s1.binned_bytes - s0.binned_bytes,
			2 * units * NTA_UNIT);
	KUNIT_EXPECT_PTR_EQ(test, c->bins.slot[units].head, p[1]);
	for (i = 0; i < 2; i++)
		KUNIT_EXPECT_NULL(test, nta_tnonzero_but_link(p[i], size));
	nta_drain_all();
}

/*
 * init_on_free=1 and merged chunks: small objects freed and merged leave
 * free-list and bin links at what become interior unit boundaries of the
 * chunk; a larger object carved from it later (the slow path) must still
 * be zero throughout, as SLUB's objects are under init_on_free.
 */
static void nta_merged_init_on_free(struct kunit *test)
{
	const unsigned int n = 64, small = NTA_UNIT, big = 16 * NTA_UNIT;
	void *lo = NULL, *hi = NULL, *q[8];
	unsigned int i, overlaps = 0;
	struct nta_tobjs *o;

	nta_tneed_ready(test);
	if (!want_init_on_free())
		kunit_skip(test, "init_on_free is off");
	nta_tpin(test, -1);
	nta_drain_all();
	/*
	 * One more object stays live, so that the block is not wholly free
	 * after the frees and the trim does not give it back (no reserve).
	 */
	o = nta_talloc_objs(test, n + 1, small);
	for (i = 0; i < n; i++) {
		memset(o->obj[i], 0x5a, small);
		if (!lo || o->obj[i] < lo)
			lo = o->obj[i];
		if (!hi || o->obj[i] > hi)
			hi = o->obj[i];
	}
	for (i = 0; i < n; i++)
		nta_free(o->obj[i], small);
	/* Out of the bins, merged with each other and their neighbours. */
	nta_drain_all();
	for (i = 0; i < ARRAY_SIZE(q); i++) {
		q[i] = nta_alloc(big, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, q[i]);
		if (q[i] + big > lo && q[i] < hi + small)
			overlaps++;
		KUNIT_EXPECT_NULL(test, nta_tbyte_not(q[i], big, 0));
	}
	/* Else the check above looked at no merged memory at all. */
	KUNIT_EXPECT_GT(test, overlaps, 0);
	for (i = 0; i < ARRAY_SIZE(q); i++)
		nta_free(q[i], big);
	nta_free(o->obj[n], small);
	nta_drain_all();
}

/*
 * A slow path drains at most NTA_DRAIN_BLOCKS batches and leaves the rest
 * queued, without kicking its own CPU (a self-IPI per such drain): the
 * next slow path takes it, or a kick, which drains all.
 */
static void nta_batch_drain_rest_waits(struct kunit *test)
{
	const unsigned int extra = 2, size = 192;
	const unsigned int n = (NTA_DRAIN_BLOCKS + 2 * extra) * NTA_BATCH_MAX;
	struct nta_stats s0, s1, s2, s3;
	struct nta_tobjs *o;
	unsigned int owner;
	void *trig[2];
	int other;

	nta_tneed_ready(test);
	owner = nta_tpin_one_drain(test, &other);
	o = nta_talloc_objs(test, n, size);
	/* Whole batches only, all published; fewer than the freer has. */
	KUNIT_ASSERT_LE(test, n / NTA_BATCH_MAX, NTA_BATCHES_PER_CPU);
	nta_tfree_on(test, other, o, 0, n, true);
	KUNIT_ASSERT_FALSE(test, nta_tinbox_empty(owner));

	nta_tstats(&s0);
	nta_tslow_alloc(test, &trig[0]);
	nta_tstats(&s1);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, frees),
			NTA_DRAIN_BLOCKS * NTA_BATCH_MAX);
	/* Interrupts were on again before this: no kick took the rest. */
	KUNIT_EXPECT_FALSE(test, nta_tinbox_empty(owner));

	nta_tslow_alloc(test, &trig[1]);
	nta_tstats(&s2);
	KUNIT_EXPECT_EQ(test, NTA_D(&s1, &s2, frees), 2 * extra * NTA_BATCH_MAX);
	KUNIT_EXPECT_TRUE(test, nta_tinbox_empty(owner));

	/* A kick drains all that is queued, a drain per irq_work run. */
	nta_free(trig[0], NTA_UNIT);
	nta_free(trig[1], NTA_UNIT);
	o = nta_talloc_objs(test, n, size);
	nta_tstats(&s2);
	nta_tfree_on(test, other, o, 0, n, true);
	irq_work_queue_on(&nta_tcpu(owner)->kick, owner);
	irq_work_sync(&nta_tcpu(owner)->kick);
	nta_tstats(&s3);
	KUNIT_EXPECT_EQ(test, NTA_D(&s2, &s3, frees), n);
	/* At least two runs of the kick: a drain's worth, then the rest. */
	KUNIT_EXPECT_GE(test, NTA_D(&s2, &s3, drains), 2);
	KUNIT_EXPECT_TRUE(test, nta_tinbox_empty(owner));
}

/*
 * For the cases whose drains fill the owner's bins: NTA on, pinned to an
 * owner whose frees another CPU (*@other) queues in one drain.
 */
static unsigned int nta_tpin_bins_drain(struct kunit *test, int *other)
{
	nta_tneed_ready(test);
	if (!nta_enabled())
		kunit_skip(test, "NTA is switched off: drains do not fill the bins");
	return nta_tpin_one_drain(test, other);
}

/*
 * Bins that a drain overflows double their caps, so that a CPU allocating
 * what another CPU frees gets the objects back from its bins instead of
 * merging and splitting each; they stop at 2^NTA_BIN_SHIFT_MAX, do not
 * rise when the bins take a whole drain, come down a step per tick
 * without an overflowing drain, and reset on trim.  Each round must drain
 * in one go: the stranded-free kick, which could split a drain, waits for
 * an hour.
 */
static void nta_bins_follow_remote_load(struct kunit *test)
{
	unsigned int owner, units, cap, round, shift, want, nr, i, t = 0;
	const unsigned int n = 8 * NTA_BATCH_MAX, size = 704;
	void *trig[NTA_BIN_SHIFT_MAX + 3];
	unsigned long free0, free1;
	struct nta_tobjs *o;
	struct nta_cpu *c;
	int other, ms;

	owner = nta_tpin_bins_drain(test, &other);
	c = nta_tcpu(owner);
	units = nta_size_to_units(size);
	cap = nta_tbin_cap(units);
	KUNIT_ASSERT_EQ(test, READ_ONCE(c->bins.shift), 0);
	/* The last raise still overflows; at the top the bins take all. */
	KUNIT_ASSERT_LT(test, cap << (NTA_BIN_SHIFT_MAX - 1), n);
	KUNIT_ASSERT_GE(test, cap << NTA_BIN_SHIFT_MAX, n);
	free0 = nta_tfree_units(owner);
	o = nta_talloc_objs(test, n, size);

	for (round = 0; round <= NTA_BIN_SHIFT_MAX; round++) {
		shift = READ_ONCE(c->bins.shift);
		KUNIT_EXPECT_EQ(test, shift, round);
		nta_tfree_on(test, other, o, 0, n, true);
		/* The next slow path here drains them into the bins. */
		nta_tslow_alloc(test, &trig[t++]);
		want = min(n, cap << shift);
		nr = nta_bin_nr_seen(&c->bins.slot[units]);
		KUNIT_EXPECT_EQ(test, nr, want);
		KUNIT_EXPECT_EQ(test, nta_tbin_walk(c, units), want);
		KUNIT_EXPECT_LE(test, nta_bins_units_seen(&c->bins),
				c->bins.limit);
		/* Raised only when the bins overflowed, never past the cap. */
		KUNIT_EXPECT_EQ(test, READ_ONCE(c->bins.shift),
				want < n ? min_t(unsigned int, shift + 1,
						 NTA_BIN_SHIFT_MAX) : shift);
		free1 = READ_ONCE(c->pool.free_units);
		for (i = 0; i < n; i++) {
			o->obj[i] = nta_alloc(size, GFP_KERNEL);
			KUNIT_ASSERT_NOT_NULL(test, o->obj[i]);
		}
		/* Once the bins took them all, nothing was split again. */
		if (want == n)
			KUNIT_EXPECT_EQ(test, READ_ONCE(c->pool.free_units),
					free1);
	}
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->bins.shift), NTA_BIN_SHIFT_MAX);

	/* Idle: the ticks bring the caps back, and merge the bins. */
	nta_tfree_on(test, other, o, 0, n, true);
	nta_tslow_alloc(test, &trig[t++]);
	for (ms = 0; ms < 8000 && READ_ONCE(c->bins.shift); ms += 50)
		msleep(50);
	kunit_info(test, "caps back after %d ms (tick %u ms)\n", ms,
		   jiffies_to_msecs(NTA_BIN_DECAY));
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->bins.shift), 0);
	KUNIT_EXPECT_EQ(test, c->bins.limit, NTA_BINS_UNITS);
	KUNIT_EXPECT_LE(test, nta_bin_nr_seen(&c->bins.slot[units]), cap);

	/* Raised once more, then trimmed: back to the base caps at once. */
	o = nta_talloc_objs(test, n, size);
	nta_tfree_on(test, other, o, 0, n, true);
	nta_tslow_alloc(test, &trig[t++]);
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->bins.shift), 1);
	while (t)
		nta_free(trig[--t], NTA_UNIT);
	nta_drain_all();
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->bins.shift), 0);
	KUNIT_EXPECT_EQ(test, nta_bins_units_seen(&c->bins), 0);
	KUNIT_EXPECT_EQ(test, nta_tfree_units(owner), free0);
}

/*
 * A shrinker's kick of a CPU whose raised bins hold more than a batch
 * trims them in hard interrupt context one batch per run, queueing itself
 * again, and ends: the bins empty, their caps at the base, the trim flag
 * and the kick's run count clear.
 */
static void nta_kick_trims_in_batches(struct kunit *test)
{
	const unsigned int n = 8 * NTA_BATCH_MAX, size = 704;
	unsigned int owner, round, i, t = 0;
	void *trig[NTA_BIN_SHIFT_MAX + 2];
	struct nta_tobjs *o;
	struct nta_cpu *c;
	int other, ms;

	owner = nta_tpin_bins_drain(test, &other);
	c = nta_tcpu(owner);
	o = nta_talloc_objs(test, n, size);
	/* Drains that overflow the bins raise their caps (see above). */
	for (round = 0; round < NTA_BIN_SHIFT_MAX; round++) {
		nta_tfree_on(test, other, o, 0, n, true);
		nta_tslow_alloc(test, &trig[t++]);
		for (i = 0; i < n; i++) {
			o->obj[i] = nta_alloc(size, GFP_KERNEL);
			KUNIT_ASSERT_NOT_NULL(test, o->obj[i]);
		}
	}
	nta_tfree_on(test, other, o, 0, n, true);
	nta_tslow_alloc(test, &trig[t++]);
	KUNIT_ASSERT_GT(test, nta_bin_nr_seen(&c->bins.slot[nta_size_to_units(size)]),
			NTA_FLUSH_BATCH);

	WRITE_ONCE(c->trim, 1);
	KUNIT_ASSERT_TRUE(test, nta_kick_cpu(owner));
	for (ms = 0; ms < 2000 && READ_ONCE(c->trim); ms += 20)
		msleep(20);
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->trim), 0);
	KUNIT_EXPECT_EQ(test, c->trim_runs, 0);
	KUNIT_EXPECT_EQ(test, READ_ONCE(c->bins.shift), 0);
	KUNIT_EXPECT_EQ(test, nta_bins_units_seen(&c->bins), 0);
	while (t)
		nta_free(trig[--t], NTA_UNIT);
	nta_drain_all();
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
	nta_tneed_reserve(test);
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
	KUNIT_EXPECT_EQ(test, nta_bin_nr_seen(&c->bins.slot[NTA_DATA_UNITS]), 1);
	nta_tstats(&s0);
	p = nta_alloc(100, GFP_KERNEL);
	nta_tstats(&s1);
	KUNIT_EXPECT_NOT_NULL(test, p);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, grows), 0);
	KUNIT_EXPECT_EQ(test, NTA_D(&s0, &s1, failures), 0);
	KUNIT_EXPECT_EQ(test, nta_bins_units_seen(&c->bins), 0);
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
	head = c->bins.slot[units].head;
	nr = nta_bin_nr(&c->bins.slot[units]);
	bin_units = nta_bins_units_seen(&c->bins);
	irq_work_queue(&n.work);
	while (!READ_ONCE(n.done))
		cpu_relax();
	KUNIT_EXPECT_PTR_EQ(test, c->bins.slot[units].head, head);
	KUNIT_EXPECT_EQ(test, nta_bin_nr(&c->bins.slot[units]), nr);
	KUNIT_EXPECT_EQ(test, nta_bins_units_seen(&c->bins), bin_units);
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

static struct kunit_case nta_cases[] = {
	KUNIT_CASE(nta_init_unwind),
	KUNIT_CASE_PARAM(nta_alloc_sizes, nta_tsize_gen_params),
	KUNIT_CASE(nta_alloc_no_overlap),
	KUNIT_CASE(nta_alloc_zero),
	KUNIT_CASE(nta_gen_moves_on_free),
	KUNIT_CASE(nta_stats_live_wraps),
	KUNIT_CASE_PARAM(nta_free_bad_input, nta_tgbad_gen_params),
	KUNIT_CASE(nta_remote_free_drain),
	KUNIT_CASE(nta_remote_double_free),
	KUNIT_CASE(nta_remote_wrong_size),
	KUNIT_CASE(nta_remote_free_neighbour_busy),
	KUNIT_CASE(nta_remote_free_race),
	KUNIT_CASE(nta_double_free_race),
	KUNIT_CASE(nta_remote_idle_not_kicked),
	KUNIT_CASE(nta_remote_kick_threshold),
	KUNIT_CASE(nta_remote_stranded),
	KUNIT_CASE(nta_remote_init_on_free),
	KUNIT_CASE(nta_local_init_on_free),
	KUNIT_CASE(nta_merged_init_on_free),
	KUNIT_CASE(nta_batch_free_drain),
	KUNIT_CASE(nta_batch_large_published),
	KUNIT_CASE(nta_batch_quick_refuses),
	KUNIT_CASE(nta_drain_long_queue),
	KUNIT_CASE(nta_batch_stale_double_free),
	KUNIT_CASE(nta_batch_timer),
	KUNIT_CASE(nta_cpu_hotplug),
	KUNIT_CASE(nta_batch_hotplug),
	KUNIT_CASE(nta_block_map_hotplug),
	KUNIT_CASE(nta_grow_and_return),
	KUNIT_CASE(nta_grow_flags),
	KUNIT_CASE(nta_shrinker_contract),
	KUNIT_CASE(nta_usercopy_bound),
	KUNIT_CASE(nta_cap),
	KUNIT_CASE(nta_block_vmstat),
	KUNIT_CASE(nta_block_vmstat_free_paths),
	KUNIT_CASE(nta_max_total),
	KUNIT_CASE(nta_bin_reuse),
	KUNIT_CASE(nta_bin_link_hardened),
	KUNIT_CASE(nta_bin_link_overwritten),
	KUNIT_CASE(nta_bins_closed_on_quarantine),
	KUNIT_CASE(nta_bin_caps),
	KUNIT_CASE(nta_bin_grants),
	KUNIT_CASE(nta_bin_grants_back),
	KUNIT_CASE(nta_batch_drain_keeps_bins),
	KUNIT_CASE(nta_batch_drain_rest_waits),
	KUNIT_CASE_SLOW(nta_bins_follow_remote_load),
	KUNIT_CASE(nta_kick_trims_in_batches),
	KUNIT_CASE_SLOW(nta_spares_follow_churn),
	KUNIT_CASE(nta_spares_shrinker_resets),
	KUNIT_CASE(nta_spares_capped),
	KUNIT_CASE(nta_bin_flush_before_grow),
	KUNIT_CASE_SLOW(nta_bin_decay),
	KUNIT_CASE(nta_nested_fast_path),
	{}
};

static struct kunit_suite nta_suite = {
	.name = "nta",
	.suite_init = nta_tsuite_init,
	.suite_exit = nta_tsuite_exit,
	.test_cases = nta_cases,
};

kunit_test_suite(nta_suite);

MODULE_DESCRIPTION("KUnit tests of the per-CPU network tree allocator");
MODULE_LICENSE("GPL");
