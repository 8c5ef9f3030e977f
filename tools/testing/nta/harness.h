/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NTA userspace harness: the embedder side of net/core/alloc/nta_core.c.
 *
 * The core is compiled unchanged against the shims in linux/ and asm/.
 * This file plays the per-CPU allocator's part (nta_pools.c,
 * nta_remote.c): "CPUs" are struct hcpu, each owning one pool that only
 * its thread touches (tests are single threaded unless they
 * say otherwise), blocks come from aligned_alloc(), blocks the core
 * releases go back to free().  h_free() decides like nta_free(): on the
 * owner, nta_check_free() (the full check, owner only) then merge; on any
 * other CPU, nta_remote_free(), which checks what a non-owner safely can
 * and queues the object; the owner's drain checks the size and reports a
 * mismatch through nta_report_bad_free().
 *
 * The pool checker is the core's own nta_pool_check(), compiled with
 * nta_core.c; tests add what they know about live objects on top.
 */
#ifndef _NTA_HARNESS_H
#define _NTA_HARNESS_H

#include <linux/kernel.h>
#include <linux/atomic.h>
#include <linux/bitmap.h>
#include <linux/list.h>
#include <linux/llist.h>
#include <stdio.h>
#include <stdlib.h>

#include "nta_core_inline.h"	/* -I$(CORE_DIR) */

#ifndef NTA_VARIANT
#define NTA_VARIANT "o2"
#endif

/* ---- test framework: one TAP line per test ---- */

#define T_DEBUG_ONLY	0x1	/* needs CONFIG_NTA_DEBUG */
#define T_BENCH		0x2	/* timing: only in the optimised, uninstrumented build */

struct test {
	const char *name;
	void (*fn)(void);
	unsigned int flags;
};

extern unsigned int t_failed;		/* failures in the running test */
void t_fail(const char *file, int line, const char *fmt, ...) __printf(3, 4);
/* A progress or result line, printed as a TAP comment. */
void t_note(const char *fmt, ...) __printf(1, 2);

#define EXPECT(cond, fmt, ...) ({					\
	bool __ok = !!(cond);						\
	if (unlikely(!__ok))						\
		t_fail(__FILE__, __LINE__, "%s: " fmt, #cond, ##__VA_ARGS__); \
	__ok; })
#define ASSERT(cond, fmt, ...) do {					\
	if (!EXPECT(cond, fmt, ##__VA_ARGS__))				\
		return;							\
} while (0)

/* Environment knobs: SEED=, OPS=, THREADS=. */
unsigned long env_ulong(const char *name, unsigned long def);
double now_sec(void);

/* ---- xorshift128+ ---- */

struct rng {
	u64 s[2];
};

void rng_seed(struct rng *r, u64 seed);

static inline u64 rng_next(struct rng *r)
{
	u64 x = r->s[0], y = r->s[1];

	r->s[0] = y;
	x ^= x << 23;
	r->s[1] = x ^ y ^ (x >> 17) ^ (y >> 26);
	return r->s[1] + y;
}

/* Uniform in [lo, hi]. */
static inline unsigned int rng_range(struct rng *r, unsigned int lo, unsigned int hi)
{
	return lo + (unsigned int)((rng_next(r) >> 11) % ((u64)hi - lo + 1));
}

/* Head sizes of typical skbs: SKB_DATA_ALIGN(data) + shinfo (320). */
extern const unsigned int skb_head_sizes[];
extern const unsigned int nr_skb_head_sizes;
unsigned int rng_skb_size(struct rng *r);

/* ---- embedder: CPUs, blocks, alloc and free ---- */

#define H_MAX_CPUS	16

struct hcpu {
	struct nta_pool pool;
	unsigned int max_blocks;	/* growth cap, 0 = none */
	/* Counters written by the owner only, except as noted. */
	unsigned long allocs, failures, frees, remote_frees, drained, drains;
	unsigned long grows, returns, bad_frees, kicks;
	atomic_t kicked;		/* set by remote freers, read by owner */
	/* Odd while this thread is inside nta_remote_free(): see h_release(). */
	unsigned long rcu_seq;
} ____cacheline_aligned;

extern struct hcpu h_cpus[H_MAX_CPUS];
extern atomic_t h_blocks_live;		/* blocks allocated, all pools */
extern atomic_t h_poison_reports;
/* nta_report_bad_free() calls (the owner's drain), and the last one's arguments. */
extern atomic_t h_bad_drain_reports;
extern const struct nta_pool *h_last_bad_pool;
extern const void *h_last_bad_ptr;
extern unsigned int h_last_bad_size;
extern enum nta_bad_free h_last_bad_why;
extern bool h_quiet_reports;		/* count reports without printing them */
extern const void *h_last_poison_chunk, *h_last_poison_bad;
extern unsigned int h_last_poison_units;

/* Called (single-threaded tests only) when a block joins or leaves a pool. */
extern void (*h_block_hook)(struct nta_block *blk, bool added);

void h_cpu_init(struct hcpu *c, unsigned int id, unsigned int reserve,
		unsigned int max_blocks);
/*
 * Drain, then give every block back, even blocks with objects left (the
 * pool is unusable after that); returns how many were not wholly free.
 */
unsigned int h_cpu_destroy(struct hcpu *c);
bool h_grow(struct hcpu *c);
void *h_alloc(struct hcpu *c, unsigned int size);
/* Free on CPU @c, which need not own @ptr (then it is a remote free). */
enum nta_bad_free h_free(struct hcpu *c, void *ptr, unsigned int size);
/*
 * An RCU read-side section for remote freers, keyed by the freeing
 * thread's hcpu: h_release() frees a block only after every thread that
 * was inside one when it started has left it, as nta_release_block()'s call_rcu() does.
 */
static inline void h_rcu_enter(struct hcpu *c)
{
	__atomic_add_fetch(&c->rcu_seq, 1, __ATOMIC_SEQ_CST);
}

static inline void h_rcu_exit(struct hcpu *c)
{
	__atomic_add_fetch(&c->rcu_seq, 1, __ATOMIC_SEQ_CST);
}

unsigned int h_drain(struct hcpu *c);
unsigned int h_drain_all(struct hcpu *c);
/*
 * What nta_kick_fn() does when asked to trim (shrinker,
 * nta_drain_all()): drain, then nta_pool_trim(); returns blocks given back.
 */
unsigned int h_trim(struct hcpu *c);
void h_release(struct hcpu *c, struct list_head *released);

/* ---- invariant checker ---- */

/* Figures of a sound pool, for tests that keep their own model. */
struct h_pool_stats {
	unsigned long objects, object_units;	/* live objects, their units */
	unsigned long free_blocks;		/* wholly free blocks */
	unsigned long pending;			/* remote frees not drained */
};

/*
 * Above the reserve at most one wholly free block (the spare): a block that
 * becomes wholly free is given back when the pool already has another.
 */
#define H_CHECK_RELEASE	0x1
#define H_CHECK_QUIET	0x2	/* no remote frees in flight */
/* After nta_pool_trim(): no wholly free block at all above the reserve. */
#define H_CHECK_TRIMMED	0x4

/*
 * nta_pool_check() (the core's validator, shared with KUnit and debugfs
 * nta/check) plus the policy in @flags; reports through t_fail() and
 * returns how many violations there were.  @st, if given, is filled in
 * when the pool passed nta_pool_check(), zeroed otherwise.
 */
unsigned int h_check_pool(const struct nta_pool *pool, unsigned int flags,
			  struct h_pool_stats *st);

/*
 * Cheap local checks after one operation: the object just allocated (by
 * h_check_live(), any live object: bits and length byte; by
 * h_check_alloc(), also cut from the start of a free chunk whose
 * remainder is listed), or the free chunk that now holds the units of the
 * object just freed.
 */
unsigned int h_check_live(const struct nta_pool *pool, const void *ptr,
			  unsigned int size);
unsigned int h_check_alloc(const struct nta_pool *pool, const void *ptr,
			   unsigned int size);
unsigned int h_check_freed(const struct nta_pool *pool, struct nta_block *blk,
			   unsigned int unit, unsigned int units);

/* Is the free chunk [unit, unit + len) of @blk on pool->free[len]? */
bool h_chunk_listed(const struct nta_pool *pool, const struct nta_block *blk,
		    unsigned int unit, unsigned int len);

static inline unsigned int h_unit(const void *ptr)
{
	return ((unsigned long)ptr & (NTA_BLOCK_SIZE - 1)) >> NTA_UNIT_SHIFT;
}

static inline void *h_unit_addr(struct nta_block *blk, unsigned int unit)
{
	return (char *)blk + ((unsigned long)unit << NTA_UNIT_SHIFT);
}

/* ---- snapshots: a pool and all its blocks, byte for byte ---- */

struct h_snapshot {
	struct nta_pool pool;
	unsigned int nr;
	void **addr;
	unsigned char *data;
};

void h_snapshot_take(struct h_snapshot *s, const struct nta_pool *pool);
/* True when @pool and its blocks are exactly as in @s; reports the first change. */
bool h_snapshot_same(const struct h_snapshot *s, const struct nta_pool *pool);
void h_snapshot_free(struct h_snapshot *s);

/* ---- test groups ---- */

extern const struct test unit_tests[], bad_tests[], model_tests[];
extern const struct test mt_tests[], frag_tests[], bench_tests[];

#endif /* _NTA_HARNESS_H */
