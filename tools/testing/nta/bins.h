/* SPDX-License-Identifier: GPL-2.0 */
/*
 * One harness CPU's bins: the kernel's struct nta_bins and its operations,
 * compiled unchanged from net/core/alloc/nta_bins.h, in front of the
 * harness CPU's pool.  bins.c adds only what the kernel has around that
 * header, each piece named after the kernel function it mirrors, and
 * counts what the tests read.
 *
 * Left out, as the harness has no per-CPU state, lock or timer: the
 * fast-path mark, the decay timer (the tests call bins_decay() for a
 * tick) and its flush of idle bins (the tests call bins_flush_idle()), frees
 * from another CPU before they reach the owner (batches, the pending bit:
 * bins_free_drained() starts where nta_batch_free_one() does, with the
 * object checked), NTA switched off, a drain nested in the fast path or
 * off the owner, and init_on_free.
 */
#ifndef _NTA_BINS_H
#define _NTA_BINS_H

#include "harness.h"
#include "nta_bins.h"		/* -I$(CORE_DIR) */

struct bins {
	struct nta_bins bins;			/* nta_cpu.bins */
	/*
	 * Blocks that merges gave back during one operation, freed at its
	 * end (h_release()), as the kernel's callers' @released.
	 */
	struct list_head released;
	/*
	 * In a drain: @bins.overflows when it began, and whether it took back
	 * unused grants (nta_batch_drain()'s @overflows and @reclaimed).
	 */
	bool draining, drain_reclaimed;
	unsigned int drain_overflows;
	/*
	 * @flushes: nta_bins_flush() called here (bins_flush(), bins_reset(),
	 * and before the pool grows), not inside nta_bins.h.
	 */
	unsigned long pushes, pops, merged, flushes;
	unsigned long drains, raises, ticks, lowerings;
	/*
	 * Called after a binned object was merged into the pool (@released:
	 * its block went wholly free and is about to be given back), so that
	 * a test's shadow can follow objects the bins give up.
	 */
	void (*merged_hook)(struct bins *b, void *obj, unsigned int units,
			    bool released);
};

void bins_init(struct bins *b);
/* Merge all but the @keep newest objects of the bin of @units units. */
void bin_trim(struct hcpu *c, struct bins *b, unsigned int units,
	      unsigned int keep);
void bins_flush(struct hcpu *c, struct bins *b);
/* The decay tick's flush of idle bins, a batch per hold of the lock. */
void bins_flush_idle(struct hcpu *c, struct bins *b);
/* The flush of trim, shrinker, hotplug, switch-off: also @shift back to 0. */
void bins_reset(struct hcpu *c, struct bins *b);
/* The end of one nta_batch_drain(): an overflow in it raises @shift. */
void bins_drain_end(struct bins *b);
/* One decay tick; true if it lowered @shift. */
bool bins_decay(struct hcpu *c, struct bins *b);
void *bins_alloc(struct hcpu *c, struct bins *b, unsigned int size);
/* The owner's free; @obj must be in @c's pool. */
enum nta_bad_free bins_free(struct hcpu *c, struct bins *b, void *obj,
			    unsigned int size);
/*
 * The owner frees an object another CPU freed (nta_batch_free_one()), as
 * part of a drain that bins_drain_end() closes.
 */
enum nta_bad_free bins_free_drained(struct hcpu *c, struct bins *b, void *obj,
				    unsigned int size);
/*
 * The bins as nta_bins.h leaves them: shift, limit and caps; each bin a
 * list of exactly the objects it holds (nta_bin_nr()), linked through
 * the word nta_bin_link_at() gives in each, every one in @c's pool and
 * parked there as nta_bin_park() parks it; @units their sum.  Returns how many violations were reported through t_fail().
 */
unsigned int bins_check(const struct hcpu *c, const struct bins *b);
/* One binned object: parked in @c's pool, linked to @older (or NULL). */
unsigned int bin_check_obj(const struct hcpu *c, const void *obj,
			   unsigned int units, const void *older);

#endif /* _NTA_BINS_H */
