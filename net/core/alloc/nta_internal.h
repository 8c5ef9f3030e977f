/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NTA kernel glue shared by nta.c, nta_stats.c and the KUnit suite:
 * the per-CPU state and the knobs the tests turn.
 */
#ifndef _NET_CORE_ALLOC_NTA_INTERNAL_H
#define _NET_CORE_ALLOC_NTA_INTERNAL_H

#include <linux/irq_work.h>
#include <linux/local_lock.h>
#include <linux/nta.h>
#include <linux/percpu.h>

#include "nta_core.h"

/*
 * Counters a CPU bumps under its own local lock; remote frees are counted
 * on the freeing CPU, so per-CPU gauges may go negative, their sum may not.
 */
struct nta_pcpu_stats {
	u64 allocs;
	u64 frees;
	u64 remote_frees;
	u64 drains;
	u64 kicks;
	u64 grows;
	u64 returns;
	u64 failures;
	u64 bad_frees;
	u64 fallbacks;
	s64 inuse_objects;
	s64 requested_bytes;
	s64 reserved_bytes;
	s64 kmalloc_bytes;
};

/**
 * struct nta_cpu - one CPU's allocator
 * @lock: serialises everything but @pool.remote against this CPU's own
 *	contexts (task, softirq, hardirq)
 * @pool: the blocks and free lists
 * @stats: counters, summed on read
 * @kick: run on this CPU to drain @pool.remote when it may be idle
 * @trim: set by the shrinker: @kick also gives back spare blocks
 */
struct nta_cpu {
	local_lock_t lock;
	struct nta_pool pool;
	struct nta_pcpu_stats stats;
	struct irq_work kick;
	bool trim;
};

DECLARE_PER_CPU(struct nta_cpu, nta_cpu);

/* Per-CPU limits in blocks, from nta_reserve= and nta_max=. */
extern unsigned int nta_reserve_blocks;
extern unsigned int nta_max_blocks;

/*
 * Bad frees and poison reports WARN once by default; the KUnit suite
 * provokes them on purpose and turns this off, so that its expected
 * reports are not taken for bugs.
 */
extern bool nta_warn_bad_free;

/* Writes after free found by CONFIG_NTA_DEBUG's poison checks. */
extern atomic_t nta_poison_reports;

/* Set once the pools exist; until then nta_alloc() declines politely. */
extern bool nta_ready;

bool nta_kick_cpu(unsigned int cpu);
void nta_fill_reserves(void);

#endif /* _NET_CORE_ALLOC_NTA_INTERNAL_H */
