// SPDX-License-Identifier: GPL-2.0
/*
 * Micro-benchmark, reported and not asserted: ns per alloc+free pair for
 * NTA (through the harness embedder, i.e. nta_alloc()/nta_free() without
 * the local lock) and for glibc malloc()/free(), single threaded, in
 * batches of BATCH objects freed in LIFO (reverse) or FIFO (same) order.
 * NTA's pool has enough reserve blocks that no block is grown or returned
 * during the timed loops.  Only the -O2 build runs it.
 */
#include "harness.h"

#define BATCH	32
#define NSIZES	4096			/* power of two */

static void *volatile sink;

static void escape(void *p)
{
	__asm__ __volatile__("" : : "r"(p) : "memory");
}

static double run_nta(const unsigned int *sizes, bool fifo, unsigned long pairs)
{
	struct hcpu *c = &h_cpus[0];
	void *p[BATCH];
	unsigned long round, rounds = pairs / BATCH, k = 0;
	unsigned int i, bad = 0;
	double t0 = now_sec();

	for (round = 0; round <= rounds; round++) {
		if (round == 1)
			t0 = now_sec();		/* round 0 warms up */
		for (i = 0; i < BATCH; i++) {
			p[i] = h_alloc(c, sizes[(k + i) & (NSIZES - 1)]);
			escape(p[i]);
		}
		for (i = 0; i < BATCH; i++) {
			unsigned int j = fifo ? i : BATCH - 1 - i;

			bad += h_free(c, p[j], sizes[(k + j) & (NSIZES - 1)]) != NTA_FREE_OK;
		}
		k += BATCH;
	}
	EXPECT(!bad && !c->failures && !c->grows, "nta bench: %u bad, %lu failures, %lu grows",
	       bad, c->failures, c->grows);
	return (now_sec() - t0) * 1e9 / (rounds * BATCH);
}

static double run_malloc(const unsigned int *sizes, bool fifo, unsigned long pairs)
{
	void *p[BATCH];
	unsigned long round, rounds = pairs / BATCH, k = 0;
	unsigned int i;
	double t0 = now_sec();

	for (round = 0; round <= rounds; round++) {
		if (round == 1)
			t0 = now_sec();
		for (i = 0; i < BATCH; i++) {
			p[i] = malloc(sizes[(k + i) & (NSIZES - 1)]);
			escape(p[i]);
		}
		for (i = 0; i < BATCH; i++)
			free(p[fifo ? i : BATCH - 1 - i]);
		k += BATCH;
	}
	sink = p[0];
	return (now_sec() - t0) * 1e9 / (rounds * BATCH);
}

static void test_bench(void)
{
	static const unsigned int fixed[] = { 64, 640, 1920, 4416, 9320 };
	const unsigned long pairs = env_ulong("BENCH_PAIRS", 1 << 20);
	unsigned int *sizes = malloc(NSIZES * sizeof(*sizes));
	struct hcpu *c = &h_cpus[0];
	unsigned int s, i;
	struct rng r;

	h_cpu_init(c, 0, 64, 0);
	t_note("bench: ns per alloc+free pair, batches of %u, %lu pairs per cell", BATCH, pairs);
	t_note("size      NTA LIFO  malloc LIFO   NTA FIFO  malloc FIFO");
	for (s = 0; s <= ARRAY_SIZE(fixed); s++) {
		double v[4];
		char name[16];

		rng_seed(&r, 7);
		for (i = 0; i < NSIZES; i++)
			sizes[i] = s < ARRAY_SIZE(fixed) ? fixed[s] :
				   rng_range(&r, 0, 1) ? rng_skb_size(&r) :
				   rng_range(&r, 1, NTA_MAX_SIZE);
		if (s < ARRAY_SIZE(fixed))
			snprintf(name, sizeof(name), "%u", fixed[s]);
		else
			snprintf(name, sizeof(name), "mixed");
		v[0] = run_nta(sizes, false, pairs);
		v[1] = run_malloc(sizes, false, pairs);
		v[2] = run_nta(sizes, true, pairs);
		v[3] = run_malloc(sizes, true, pairs);
		t_note("%-6s %10.1f %12.1f %10.1f %12.1f", name, v[0], v[1], v[2], v[3]);
	}
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET, NULL) == 0, "pool");
	EXPECT(h_cpu_destroy(c) == 0, "teardown");
	free(sizes);
}

const struct test bench_tests[] = {
	{ "bench_alloc_free", test_bench, T_BENCH },
	{ NULL, NULL, 0 }
};
