// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers shared by the KUnit suites of the network tree allocator (see
 * nta_kunit_helpers.h): pool snapshots, pinning to a CPU, and the
 * suite_init/suite_exit of nta_core, nta and nta_skb.  Built without KASAN
 * instrumentation, like the suites: a snapshot walks free chunks.
 */

#include <kunit/test.h>
#include <linux/bitmap.h>
#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/llist.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/timer.h>
#include <linux/vmalloc.h>

#include "nta_kunit_helpers.h"

KUNIT_DEFINE_ACTION_WRAPPER(nta_tvfree, vfree, const void *);

struct nta_tsnap *nta_tsnap_alloc(struct kunit *test)
{
	struct nta_tsnap *s = vzalloc(sizeof(*s));

	KUNIT_ASSERT_NOT_NULL(test, s);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, nta_tvfree, s), 0);
	return s;
}

/* On the CPU itself, under its lock: the reserve its slow paths read. */
static long nta_tset_reserve_fn(void *blocks)
{
	unsigned long flags;

	local_lock_irqsave(&nta_cpu.lock, flags);
	this_cpu_ptr(&nta_cpu)->pool.reserve = (unsigned long)blocks;
	local_unlock_irqrestore(&nta_cpu.lock, flags);
	return 0;
}

static void nta_tset_reserve(unsigned int blocks)
{
	unsigned int cpu;

	cpus_read_lock();
	WRITE_ONCE(nta_reserve_blocks, blocks);
	for_each_online_cpu(cpu)
		work_on_cpu(cpu, nta_tset_reserve_fn,
			    (void *)(unsigned long)blocks);
	cpus_read_unlock();
}

/* The reserve the boot gave back, and the blocks above it trimmed. */
static void nta_treserve_restore(void *blocks)
{
	nta_tset_reserve((unsigned long)blocks);
	nta_drain_all();
}

/*
 * Cases that count growth, returns and free space against a pool that
 * holds blocks before they start: every online CPU gets a reserve of
 * 256 KiB for the case, as nta_reserve=256K would give (NTA's default is
 * none), and the reserve the boot gave back afterwards.
 */
void nta_tneed_reserve(struct kunit *test)
{
	unsigned int want = SZ_256K / NTA_BLOCK_SIZE, was = nta_reserve_blocks;
	unsigned int cpu;
	int ret;

	if (was >= want)
		return;
	ret = kunit_add_action_or_reset(test, nta_treserve_restore,
					(void *)(unsigned long)was);
	KUNIT_ASSERT_EQ(test, ret, 0);
	nta_tset_reserve(want);
	nta_fill_reserves();
	for_each_online_cpu(cpu)
		KUNIT_ASSERT_GE(test, READ_ONCE(nta_tcpu(cpu)->pool.nr_blocks),
				want);
}

/*
 * Copy @pool into @s.  Callable with interrupts off (no allocation, no
 * KUnit call), so per-CPU pools can be copied under their local lock.
 */
void nta_tsnap_take(const struct nta_pool *pool, struct nta_tsnap *s)
{
	const struct nta_block *blk;
	struct llist_node *node;
	const struct nta_chunk *pos;
	unsigned int len, u;

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
		for (u = 0; u < NTA_BLOCK_UNITS; u++)
			b->cls[u] = nta_cls(blk, u);
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

/* Describe the first difference between two snapshots, or return NULL. */
const char *nta_tsnap_diff(const struct nta_tsnap *a, const struct nta_tsnap *b,
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

/* Run on @cpu only from now on; return it (the current CPU if < 0). */
unsigned int nta_tpin(struct kunit *test, int cpu)
{
	if (cpu < 0)
		cpu = raw_smp_processor_id();
	KUNIT_ASSERT_EQ(test, set_cpus_allowed_ptr(current, cpumask_of(cpu)), 0);
	KUNIT_ASSERT_EQ(test, raw_smp_processor_id(), cpu);
	return cpu;
}

static bool nta_tsaved_warn;
static unsigned long nta_tsaved_stranded, nta_tsaved_batch_delay;

/*
 * suite_init and suite_exit of nta_core, nta and nta_skb: the knobs the
 * tests rely on, set for the suite and restored after it.
 */
int nta_tsuite_init(struct kunit_suite *suite)
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
	nta_tsaved_batch_delay = READ_ONCE(nta_batch_delay);
	WRITE_ONCE(nta_batch_delay, 3600 * HZ);
	return 0;
}

void nta_tsuite_exit(struct kunit_suite *suite)
{
	unsigned int cpu;

	/* Pinned: not moved here; the next open batch arms it afresh. */
	for_each_possible_cpu(cpu)
		timer_delete_sync(&nta_tcpu(cpu)->batch_timer);
	/*
	 * What the tests left in open batches goes to its owners, and reports
	 * recorded but not printed yet are printed, before the warning is on.
	 */
	nta_drain_all();
	WRITE_ONCE(nta_warn_bad_free, nta_tsaved_warn);
	WRITE_ONCE(nta_stranded_delay, nta_tsaved_stranded);
	WRITE_ONCE(nta_batch_delay, nta_tsaved_batch_delay);
	/* Timers armed for an hour here fire within the usual bound. */
	for_each_possible_cpu(cpu)
		if (timer_pending(&nta_tcpu(cpu)->stranded))
			timer_reduce(&nta_tcpu(cpu)->stranded,
				     jiffies + nta_tsaved_stranded);
}
