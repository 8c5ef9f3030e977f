/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A model of nta.c's per-CPU bins, in front of one harness CPU's pool.
 *
 * The policy of nta_free(), nta_free_to_bin(), nta_alloc(),
 * nta_alloc_locked(), nta_rb_free_one(), nta_rb_drain()'s end and the
 * decay tick's nta_bins_decay(), with nta_internal.h's caps (NTA_BIN_MAX,
 * NTA_BIN_BYTES, NTA_BINS_UNITS, NTA_BIN_SHIFT_MAX: the build copies
 * their definitions from there into nta_bin_caps.h, so the model cannot
 * drift from them):
 *
 * - an object freed by its owner goes unmerged onto the LIFO bin for its
 *   length, which holds bin_cap() objects; a free into a full bin first
 *   merges the bin's older half (nta_bin_trim(), keeping the newer half),
 *   and one that would take the bins past their limit merges them all
 *   (nta_bins_flush());
 * - an object drained from another CPU's batch goes into its bin if there
 *   is room and is merged on its own otherwise (nta_rb_free_one()), which
 *   counts as an overflow;
 * - the caps follow the remote load (nta_bin_cap_of()): each bin's is
 *   its base cap (nta_bin_base_cap[]) << @shift, the CPU's limit NTA_BINS_UNITS
 *   << @shift; a drain (drained frees, then bins_drain_end()) that had an
 *   overflow raises @shift by one, up to NTA_BIN_SHIFT_MAX
 *   (nta_bins_on_overflow()); a decay tick (bins_decay()) with no
 *   overflow since the last one lowers it by one, merges each bin down to
 *   its new cap (keeping the newest) and flushes all of them if they are
 *   still above the new limit (nta_bins_decay()); bins_reset() is the
 *   flush of trim, the shrinker, hotplug and switch-off, which also puts
 *   @shift back to 0 (nta_spares_reset());
 * - an allocation takes the newest object of its length; failing that it
 *   asks the pool, and before the pool grows every bin is merged and the
 *   lists are tried again (that flush leaves @shift alone, as in nta.c);
 * - as in nta.c, a binned object stays allocated in the core (its @used
 *   and @start bits stay set) but its @cls byte is 0 (nta_bin_park()), so
 *   a second free of it is refused; nta_bin_pop() marks it live again (a
 *   new @gen); its first word links it to the next older object of its
 *   bin, encoded as nta.c encodes it (nta_bin_link());
 * - a merge is the core's nta_free_units(), as nta_bin_trim() calls it.
 *
 * Deliberately not modelled: the decay tick's flush of idle bins
 * (nta_decay_fn(), when no fast-path allocation or free happened since
 * the last tick; the tests flush with bins_flush() when they want idle
 * bins merged), the timer itself (the tests call bins_decay() when they
 * want a tick), frees from another CPU before they reach the owner
 * (batches, the pending bit, the stranded timer: bins_free_drained()
 * starts where nta_rb_free_one() does, with the object already checked
 * against its batch's @gen), NTA switched off (frees then bypass the
 * bins and count no overflow; the tests flush as the switch does), a
 * drain nested in the fast path or off the owner (which leaves the bins
 * alone), and init_on_free.  The bins are arrays, oldest first, beside
 * the links in the objects; bin_trim() merges the objects it gives back
 * oldest first, where nta_bin_trim() walks them newest first: the same
 * objects merge, but free chunks of one length may be filed in another
 * order, and so later allocations placed elsewhere.  test_frag's figures
 * were measured with this order (nta_bin_trim()'s moves udp+b to 13.2%
 * and web+b to 17.0% external fragmentation from 13.1% and 16.9%, o2,
 * 10^6 heads; its traces have no remote frees, so @shift stays 0 there);
 * bins_check() holds the links in the objects to the arrays.
 */
#ifndef _NTA_BINS_H
#define _NTA_BINS_H

#include "harness.h"
#include "nta_bin_caps.h"	/* generated from nta_internal.h */

/* The most objects a bin holds, with the caps raised all the way. */
#define BIN_OBJS_MAX	(NTA_BIN_MAX << NTA_BIN_SHIFT_MAX)

struct bins {
	unsigned int shift;			/* nta_cpu.bin_shift */
	unsigned int limit;			/* NTA_BINS_UNITS << @shift */
	unsigned int units;			/* units in all the bins */
	unsigned int overflows;			/* since the last tick */
	unsigned int drain_overflows;		/* in the drain under way */
	unsigned int nr[NTA_NR_LISTS];		/* objects in each bin */
	unsigned int cap0[NTA_NR_LISTS];	/* nta_bin_base_cap[] */
	unsigned long pushes, pops, merged, flushes;
	unsigned long drains, raises, ticks, lowerings;
	void *obj[NTA_NR_LISTS][BIN_OBJS_MAX];	/* oldest first */
	/*
	 * Called after a binned object was merged into the pool (@released:
	 * its block went wholly free and is about to be given back), so that
	 * a test's shadow can follow objects the bins give up.
	 */
	void (*merged_hook)(struct bins *b, void *obj, unsigned int units,
			    bool released);
};

/* Objects a bin holds at most at shift 0: nta_init_bin_caps(). */
static inline unsigned int bin_cap0(unsigned int units)
{
	return clamp(NTA_BIN_BYTES / (units * NTA_UNIT), 1u,
		     (unsigned int)NTA_BIN_MAX);
}

/* Objects a bin holds at most, as the bins stand: nta_bin_cap_of(). */
static inline unsigned int bin_cap(const struct bins *b, unsigned int units)
{
	return b->cap0[units] << b->shift;
}

/* nta_bin_has_room(): room in the bin and in the CPU's bins. */
static inline bool bin_has_room(const struct bins *b, unsigned int units)
{
	return b->nr[units] < bin_cap(b, units) &&
	       b->units + units <= b->limit;
}

void bins_init(struct bins *b);
void bin_push(struct bins *b, void *obj, unsigned int units);
void *bin_pop(struct bins *b, unsigned int units);
/* Merge all but the @keep newest objects of the bin of @units units. */
void bin_trim(struct hcpu *c, struct bins *b, unsigned int units,
	      unsigned int keep);
void bins_flush(struct hcpu *c, struct bins *b);
/* The flush of trim, shrinker, hotplug, switch-off: also @shift back to 0. */
void bins_reset(struct hcpu *c, struct bins *b);
/* The end of one nta_rb_drain(): an overflow in it raises @shift. */
void bins_drain_end(struct bins *b);
/* nta_bins_decay(), one tick; true if it lowered @shift. */
bool bins_decay(struct hcpu *c, struct bins *b);
void *bins_alloc(struct hcpu *c, struct bins *b, unsigned int size);
/* The owner's free; @obj must be in @c's pool. */
enum nta_bad_free bins_free(struct hcpu *c, struct bins *b, void *obj,
			    unsigned int size);
/*
 * The owner frees an object another CPU freed (nta_rb_free_one()), as
 * part of a drain that bins_drain_end() closes.
 */
enum nta_bad_free bins_free_drained(struct hcpu *c, struct bins *b, void *obj,
				    unsigned int size);
/*
 * The bins against their caps and the pool: counts, links, and every
 * binned object parked in @c's pool as nta.c parks it.  Returns how many
 * violations were reported through t_fail().
 */
unsigned int bins_check(const struct hcpu *c, const struct bins *b);
/* One binned object: parked in @c's pool, linked to @older (or NULL). */
unsigned int bin_check_obj(const struct hcpu *c, const void *obj,
			   unsigned int units, const void *older);

#endif /* _NTA_BINS_H */
