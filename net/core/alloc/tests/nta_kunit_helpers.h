/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers shared by the KUnit suites of the network tree allocator:
 * snapshots of a pool (nta_core and nta compare a pool before and after a
 * refused free), the per-CPU helpers of nta and nta_skb, and the
 * suite_init/suite_exit all three use.  The code is in nta_kunit_helpers.c.
 *
 * The suites compare exact counters, so they expect a quiet system (no
 * traffic), as at boot.  Run them with:
 *
 *   ./tools/testing/kunit/kunit.py run --kunitconfig=net/core/alloc \
 *	--arch=x86_64 --qemu_args='-smp 2'
 *
 * Without a second CPU the remote, kick and hotplug cases are skipped.
 */
#ifndef _NET_CORE_ALLOC_TESTS_NTA_KUNIT_HELPERS_H
#define _NET_CORE_ALLOC_TESTS_NTA_KUNIT_HELPERS_H

#include <kunit/test.h>
#include <linux/nta.h>
#include <linux/percpu.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include <net/hotdata.h>

#include "../nta_core_inline.h"
#include "../nta_internal.h"

/* ---------------------------------------------------------------------- */
/* Pool snapshots                                                         */

#define NTA_TSNAP_BLOCKS	128
#define NTA_TSNAP_CHUNKS	4096
#define NTA_TSNAP_REMOTE	256

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

struct nta_tsnap *nta_tsnap_alloc(struct kunit *test);
void nta_tsnap_take(const struct nta_pool *pool, struct nta_tsnap *s);
const char *nta_tsnap_diff(const struct nta_tsnap *a, const struct nta_tsnap *b,
			   char *buf, size_t len);

#define NTA_EXPECT_SNAP_EQ(test, a, b)					\
	do {								\
		char __buf[96];						\
		const char *__d = nta_tsnap_diff(a, b, __buf, sizeof(__buf)); \
									\
		KUNIT_EXPECT_TRUE_MSG(test, !__d, "pool changed: %s", __d); \
	} while (0)

/* The unit of its block @ptr lies in. */
static inline unsigned int nta_tunit(const void *ptr)
{
	return ((unsigned long)ptr & (NTA_BLOCK_SIZE - 1)) >> NTA_UNIT_SHIFT;
}

static inline void *nta_tunit_addr(const void *blk, unsigned int unit)
{
	return (void *)blk + unit * NTA_UNIT;
}

/* ---------------------------------------------------------------------- */
/* The per-CPU allocator (suites nta and nta_skb)                         */

unsigned int nta_tpin(struct kunit *test, int cpu);

static inline struct nta_cpu *nta_tcpu(unsigned int cpu)
{
	return per_cpu_ptr(&nta_cpu, cpu);
}

/* NTA's counters, all CPUs summed. */
static inline void nta_tstats(struct nta_stats *st)
{
	nta_get_stats(st, -1);
}

/* How far a counter moved from @a to @b; every field is 64 bits wide. */
static inline s64 nta_tdelta(const struct nta_stats *a,
			     const struct nta_stats *b, size_t offset)
{
	return *(const s64 *)((const void *)b + offset) -
	       *(const s64 *)((const void *)a + offset);
}

#define NTA_D(a, b, field) nta_tdelta(a, b, offsetof(struct nta_stats, field))

/* Skip the test when NTA has no pools (nta=off, or initialisation failed). */
static inline void nta_tneed_ready(struct kunit *test)
{
	if (!READ_ONCE(nta_ready))
		kunit_skip(test, "NTA is not initialised");
}

void nta_tneed_reserve(struct kunit *test);

/* The object size of skb_small_head_cache, which skb_init() tells NTA. */
static inline unsigned int nta_tsmall(void)
{
	return kmem_cache_size(net_hotdata.skb_small_head_cache);
}

int nta_tsuite_init(struct kunit_suite *suite);
void nta_tsuite_exit(struct kunit_suite *suite);

#endif /* _NET_CORE_ALLOC_TESTS_NTA_KUNIT_HELPERS_H */
