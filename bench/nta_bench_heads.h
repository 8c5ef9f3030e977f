/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Benchmark only (bench/, not part of the posted series): the skb head
 * hook of nta_bench_heads.c, called from net/core/skbuff.c.
 */
#ifndef _NET_CORE_ALLOC_NTA_BENCH_HEADS_H
#define _NET_CORE_ALLOC_NTA_BENCH_HEADS_H

#include <linux/bits.h>
#include <linux/jump_label.h>
#include <linux/types.h>

/*
 * skb->__tsize of a head that did not come from NTA, while the benchmark
 * counts heads (nta/bench_heads is not "off"): NTA_BENCH_HEAD,
 * NTA_BENCH_SLAB when one of the slab classes holds it, and the bytes
 * asked for and the object's, in 64-byte units (both are multiples), so
 * that the free path counts it out without asking the slab allocator.
 * NTA's own sizes stay far below both bits, so skb_head_free() tells them
 * apart.
 */
#define NTA_BENCH_HEAD		BIT(31)
#define NTA_BENCH_SLAB		BIT(30)
#define NTA_BENCH_SHIFT		6
#define NTA_BENCH_BITS		15
#define NTA_BENCH_MASK		(BIT(NTA_BENCH_BITS) - 1)

DECLARE_STATIC_KEY_FALSE(nta_bench_count_key);
DECLARE_STATIC_KEY_FALSE(nta_bench_counted_key);
DECLARE_STATIC_KEY_FALSE(nta_bench_slab_key);

void *nta_bench_slab_alloc(unsigned int obj_size, unsigned int *size,
			   gfp_t flags, int node);
unsigned int nta_bench_head_count(const void *head, unsigned int req,
				  unsigned int size, bool slab);
void nta_bench_head_uncount(const void *head, unsigned int tsize);

#endif /* _NET_CORE_ALLOC_NTA_BENCH_HEADS_H */
