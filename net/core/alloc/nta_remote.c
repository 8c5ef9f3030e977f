// SPDX-License-Identifier: GPL-2.0
/*
 * NTA frees from other CPUs: how an object freed on a CPU that does not
 * own it finds its way home.
 *
 * An object freed on a CPU that does not own it goes into that CPU's
 * batch for the owner, published whole with one llist_add() (see "Batched
 * remote frees" below).  Without a batch at hand (a context nested in the
 * fast path, all batches in flight) it is marked pending in its block, and
 * the block pushed on the owner's lock-less remote list
 * (nta_remote_free()).  Neither writes into the object; the owner frees
 * what it finds batched or pending on its next slow path.  On the
 * pending path the freer that queues the NTA_KICK_BLOCKS-th block kicks
 * the owner with an irq_work, so an idle owner does not sit on freed
 * memory; below that, and for batches, a per-CPU timer armed by the freer
 * kicks it after nta_stranded_delay.  A drain takes at most
 * NTA_DRAIN_BLOCKS blocks (and as many batches); the owner's next slow
 * path takes the rest, else its stranded-free timer, and a kick drains
 * all, a drain per irq_work.  Blocks are freed after an RCU grace period,
 * as a remote freer may still be reading the header of a block its owner
 * gives back.  Pools of offline CPUs are drained, and give back every
 * wholly free block, reserve included, in the hotplug callback and,
 * afterwards, in a work item.
 *
 * The queues, who fills them and who empties them:
 *
 * queue                      producers                 consumer
 * owner's pool.remote        any CPU without a batch   the owner, under its
 *  (blocks, pending bits)    at hand, any context      lock (a slow path, the
 *                            but NMI                   kick, the shrinker)
 * owner's batch_inbox        a freeing CPU under its   the owner, under its
 *  (full or timed batches)   mark, its batch_timer,    lock, as above
 *                            the dead-CPU callback
 * home CPU's batch_returned  owners that drained the   the home CPU, under
 *  (drained batches)         batch, under their lock   its mark
 * batch_open[], batch_stash  the home CPU, under its mark only
 *
 * The three lists are llists: many producers, one consumer that takes
 * the whole list with llist_del_all().  A dead CPU's queues are emptied
 * by the hotplug callback or the offline work, which exclude each other.
 */

#define pr_fmt(fmt) "nta: " fmt

#include <kunit/visibility.h>
#include <linux/cpumask.h>
#include <linux/irq_work.h>
#include <linux/llist.h>
#include <linux/nta.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/tick.h>
#include <linux/timer.h>
#include <linux/workqueue.h>

#include "nta_core_inline.h"
#include "nta_fast.h"
#include "nta_internal.h"

/*
 * A queued free must not wait for its owner for ever: an owner that keeps
 * to its fast path, or that NTA was switched off under, never drains.  A
 * CPU that queued a first block for some owner arms this timer; when it
 * fires, every owner that still has blocks queued is kicked, unless it is
 * idle or nohz_full (nta_kick_wanted()).  The timer is deferrable: an
 * idle freeing CPU is not woken for it either.  Tests that count kicks
 * set a longer delay.
 */
VISIBLE_IF_KUNIT unsigned long nta_stranded_delay __read_mostly =
	NTA_STRANDED_DELAY;

/* Frees were queued for @o: note how far its fast path had allocated. */
static void nta_note_queued(struct nta_cpu *o)
{
	WRITE_ONCE(o->queued_seen, READ_ONCE(o->fast.allocs));
}

/*
 * The owner allocated on its fast path since frees were last queued for
 * it, and so may keep to it for ever, or NTA is switched off and it may
 * never take a slow path of NTA's again: the cases the stranded-free timer
 * is for.  An owner that allocated nothing since (asleep, or busy with
 * other work, which idle_cpu() cannot tell apart from NTA work: on
 * PREEMPT_RT a CPU is seldom idle when a timer thread looks) drains at its
 * next slow path; no interrupt for it.
 */
static bool nta_owner_kept_busy(struct nta_cpu *o)
{
	return READ_ONCE(o->fast.allocs) != READ_ONCE(o->queued_seen) ||
	       !nta_enabled();
}

static void nta_stranded_fn(struct timer_list *t)
{
	struct nta_cpu *o;
	unsigned int cpu;

	/* No CPU finishes going offline while preemption is off here. */
	preempt_disable();
	for_each_possible_cpu(cpu) {
		o = per_cpu_ptr(&nta_cpu, cpu);
		if (nta_has_queued(o) && nta_owner_kept_busy(o) &&
		    nta_kick_wanted(cpu) && nta_kick_cpu(cpu))
			this_cpu_inc(nta_cpu.stats.kicks);
	}
	preempt_enable();
}

/* Armed, or brought forward if it was armed for later. */
static void nta_arm_stranded(struct nta_cpu *c)
{
	timer_reduce(&c->stranded, jiffies + READ_ONCE(nta_stranded_delay));
}

/*
 * Batched remote frees.  Setting an object's pending bit costs an atomic
 * per free, and queueing its block three more; a batch costs one
 * llist_add() for up to NTA_BATCH_MAX frees on the freeing CPU, and the
 * owner one llist_del_all() per drain and one llist_add() per batch it
 * sends home.  SLUB's sheaves (6.18) move objects between CPUs in arrays
 * for the same reason; like page_pool's ptr_ring, the arrays are owned
 * memory, allocated once, never on the free path.
 *
 * What waits in a batch is already freed for its caller but still live
 * for the owner, so its block is not given back meanwhile, unless the
 * caller freed the object twice.  A second free of such an object is
 * refused by the owner's drain, which writes nothing unless the object is
 * still NTA's and live with the length and generation the batch recorded:
 * also when the object was freed on its owner and handed out again before
 * the batch arrived (but for a multiple of 128 frees: the generation
 * is the seven high bits of a byte, moved on once per free).
 */
VISIBLE_IF_KUNIT bool nta_remote_batching __read_mostly = true;
VISIBLE_IF_KUNIT unsigned long nta_batch_delay __read_mostly = NTA_BATCH_DELAY;

/* An idle batch of this CPU, taking those its owners sent back if need be. */
static struct nta_batch *nta_batch_take(struct nta_cpu *c)
{
	struct llist_node *node = c->batch_stash;

	if (unlikely(!node)) {
		if (llist_empty(&c->batch_returned))
			return NULL;
		node = llist_del_all(&c->batch_returned);
		nta_count(NTA_CTR(remote_atomics), 1);
	}
	c->batch_stash = node->next;
	return llist_entry(node, struct nta_batch, node);
}

/*
 * Publish an open batch on its owner.  The owner drains at its next slow
 * path, or when the stranded-free timer kicks it: no IPI from the free
 * path, not even to an idle owner.  Called by the holder of @c's mark, or
 * for a dead CPU (@has_mark false), whose owners are kicked at once.
 */
static void nta_batch_publish(struct nta_cpu *c, bool has_mark,
			      unsigned int slot)
{
	struct nta_batch *b = c->batch_open[slot];
	unsigned int owner = b->owner;
	struct nta_cpu *o = per_cpu_ptr(&nta_cpu, owner);
	unsigned long when;

	c->batch_open[slot] = NULL;
	nta_count(NTA_CTR(remote_atomics), 1);
	nta_note_queued(o);
	if (!llist_add(&b->node, &o->batch_inbox))
		return;
	if (!has_mark) {
		if (nta_kick_cpu(owner))
			nta_count(NTA_CTR(kicks), 1);
		return;
	}
	when = jiffies + READ_ONCE(nta_stranded_delay);
	/* timer_reduce() locks only to arm the timer or bring it forward. */
	if (!timer_pending(&c->stranded) ||
	    time_after(READ_ONCE(c->stranded.expires), when))
		nta_count(NTA_CTR(remote_atomics), 1);
	timer_reduce(&c->stranded, when);
}

void nta_batch_publish_all(struct nta_cpu *c, bool has_mark)
{
	unsigned int slot;

	for (slot = 0; slot < NTA_BATCH_SLOTS; slot++)
		if (c->batch_open[slot])
			nta_batch_publish(c, has_mark, slot);
}

/*
 * The slot of @c's open batch for @owner, else a free slot, the usual one
 * (@owner modulo NTA_BATCH_SLOTS) first, else the usual slot, whose batch
 * is published to make room.  A batch opens in its usual slot whenever
 * that is free, because the quick path (nta_batch_free_quick()) looks
 * only there.
 */
static unsigned int nta_batch_slot(const struct nta_cpu *c, unsigned int owner)
{
	unsigned int usual = owner % NTA_BATCH_SLOTS, free = NTA_BATCH_SLOTS;
	unsigned int slot;

	/* Where it usually is, and where nta_batch_free_quick() looks. */
	if (c->batch_open[usual] && c->batch_open[usual]->owner == owner)
		return usual;
	for (slot = 0; slot < NTA_BATCH_SLOTS; slot++) {
		if (!c->batch_open[slot])
			free = min(free, slot);
		else if (c->batch_open[slot]->owner == owner)
			return slot;
	}
	if (!c->batch_open[usual])
		return usual;
	return free < NTA_BATCH_SLOTS ? free : usual;
}

/* @ptr, freed as @units units long in generation @gen, joins batch @b. */
static __always_inline void nta_batch_add(struct nta_batch *b, void *ptr,
					  u8 gen, unsigned int units)
{
	b->gen[b->nr] = gen;
	b->units[b->nr] = units;
	b->obj[b->nr] = ptr;
	b->held += units;
	b->nr++;
}

/*
 * Collect a free of @ptr, in @blk of another CPU's pool, in this CPU's open
 * batch for that CPU.  The caller holds @c's mark.  Returns false when no
 * batch is at hand; the free then sets the pending bit instead.
 */
static bool nta_batch_free(struct nta_cpu *c, unsigned int owner,
			   struct nta_block *blk, void *ptr, unsigned int size,
			   enum nta_bad_free *why)
{
	unsigned int unit = nta_unit_of(blk, ptr);
	unsigned int slot = nta_batch_slot(c, owner);
	struct nta_batch *b = c->batch_open[slot];
	u8 gen;

	/*
	 * The same checks as nta_remote_free(), and nothing written.  The
	 * generation first: a claim that comes after the check changes it,
	 * and the owner then refuses this entry.
	 */
	gen = nta_gen(blk, unit);
	/* The generation before the length byte, as nta_remote_free(). */
	smp_rmb();
	*why = nta_check_object(blk, ptr, size);
	if (unlikely(*why))
		return true;
	if (unlikely(!b || b->owner != owner)) {
		if (b)
			nta_batch_publish(c, true, slot);
		b = nta_batch_take(c);
		if (unlikely(!b))
			return false;
		b->owner = owner;
		b->nr = 0;
		b->held = 0;
		c->batch_open[slot] = b;
		if (!timer_pending(&c->batch_timer)) {
			nta_count(NTA_CTR(remote_atomics), 1);
			mod_timer(&c->batch_timer,
				  jiffies + READ_ONCE(nta_batch_delay));
		}
	}
	/* Poisoned before the owner can hand it out again. */
	nta_hook_free(ptr, size);
	nta_batch_add(b, ptr, gen, nta_size_to_units(size));
	if (b->nr == NTA_BATCH_MAX || b->held >= NTA_BATCH_UNITS)
		nta_batch_publish(c, true, slot);
	return true;
}

/*
 * A drain merged objects because the bins were full: double their caps
 * (see NTA_BIN_SHIFT_MAX).  Caller holds the lock and the mark.
 */
static void nta_bins_on_overflow(struct nta_cpu *c)
{
	if (nta_bins_raise(&c->bins) && !timer_pending(&c->decay))
		mod_timer(&c->decay, jiffies + NTA_BIN_DECAY);
}

/*
 * A drained object merged with its free neighbours, out of line: the
 * drain's loop keeps its registers for the common case, the bins.
 */
static noinline void nta_batch_merge_one(struct nta_pool *pool,
					 struct nta_block *blk,
					 unsigned int unit, unsigned int units,
					 struct list_head *released)
{
	nta_free_units(pool, blk, unit, units, released);
}

/*
 * The owner frees one object of a batch, unless it is no longer live with
 * the length and generation the freer saw, or another CPU freed it again
 * through its pending bit: then it was freed twice, and handed out again
 * in between or not, so it is refused and nothing is written.  Only a
 * double free lets an object's block go while a batch holds it: the block
 * map says whether it is still NTA's, and blocks are freed after a grace
 * period, so the header may be read here (interrupts are off, or the
 * local lock is a spinlock that is an RCU reader on PREEMPT_RT).
 * @to_bins and @wipe are the drain's, read once for all its objects.
 */
static unsigned int nta_batch_free_one(struct nta_cpu *c, bool to_bins,
				       bool wipe, void *obj,
				       unsigned int units, u8 gen,
				       bool *reclaimed,
				       struct list_head *released)
{
	struct nta_block *blk = nta_block_of(obj);
	unsigned int unit = nta_unit_of(blk, obj);
	struct nta_pool *pool = &c->pool;

	/* A free through the pending bit set the claim's bit in @gen. */
	if (unlikely(!__nta_owns(obj) || blk->pool != pool ||
		     nta_cls(blk, unit) != units ||
		     nta_gen(blk, unit) != gen)) {
		nta_report_bad_free(pool, obj, 0, NTA_FREE_NOT_ALLOCATED);
		return 0;
	}
	/*
	 * Into the bin for its length, so that the owner's next allocations
	 * of that length take the fast path: a CPU that allocates heads
	 * another CPU frees gets them back where it looks first.  Unlike a
	 * local free, an object that finds its bin at its cap, or the CPU's
	 * grants spent once the drain has taken back those the bins do not
	 * use, is merged on its own: a drain brings up to NTA_DRAIN_BLOCKS
	 * batches, and merging bins to make room for them
	 * (nta_bins_make_room()) would push most objects only to merge them
	 * at the next flush.  A nested drain leaves the bins alone.
	 */
	/* Wiped only now that the owner has checked it. */
	if (unlikely(wipe))
		memset(obj, 0, units * NTA_UNIT);
	if (likely(to_bins)) {
		/* Within its grant, or a grant from what is left. */
		if (nta_bin_grant_once(&c->bins, units, reclaimed)) {
			nta_bin_push(c, obj, units);
			return 1;
		}
		/* Merged only because the bins are full: the caps will grow. */
		c->bins.overflows++;
	}
	nta_batch_merge_one(pool, blk, unit, units, released);
	return 1;
}

/*
 * Free the objects of the batches published to @c, at most
 * NTA_DRAIN_BLOCKS batches per call (the rest waits for the next one),
 * and send each batch home.  The caller holds @c's lock, or owns a dead
 * CPU's pool.
 */
unsigned int nta_batch_drain(struct nta_cpu *c, bool has_mark,
			     struct list_head *released)
{
	unsigned int n = 0, batches = 0, i, overflows = c->bins.overflows;
	/* A nested drain, or NTA switched off, leaves the bins alone. */
	bool to_bins = has_mark && nta_enabled();
	bool wipe = c->pool.init_on_free;
	struct llist_node *pos, *next;
	bool reclaimed = false;
	struct nta_batch *b;

	if (llist_empty(&c->batch_inbox))
		return 0;
	pos = llist_del_all(&c->batch_inbox);
	nta_count(NTA_CTR(remote_atomics), 1);
	rcu_read_lock();
	for (; pos; pos = next) {
		if (batches++ == NTA_DRAIN_BLOCKS) {
			nta_llist_requeue(pos, &c->batch_inbox);
			nta_count(NTA_CTR(remote_atomics), 1);
			break;
		}
		next = pos->next;
		b = llist_entry(pos, struct nta_batch, node);
		for (i = 0; i < b->nr; i++)
			n += nta_batch_free_one(c, to_bins, wipe, b->obj[i],
						b->units[i], b->gen[i],
						&reclaimed, released);
		llist_add(&b->node, &per_cpu(nta_cpu, b->home).batch_returned);
		nta_count(NTA_CTR(remote_atomics), 1);
	}
	rcu_read_unlock();
	if (has_mark && c->bins.overflows != overflows)
		nta_bins_on_overflow(c);
	return n;
}

/*
 * NTA_BATCH_DELAY after a batch opened: publish what this CPU has collected.
 * Pinned, so it runs here unless the CPU went down, whose batches the
 * dead-CPU callback published; a fast path it interrupts holds them.
 * Deferrable: a CPU that went idle with a batch open is not woken to
 * publish it; its next slow path, nta_drain_all() and hotplug do.
 */
static void nta_batch_timer_fn(struct timer_list *t)
{
	struct nta_cpu *c = from_timer(c, t, batch_timer);
	unsigned long flags;
	bool has_mark;

	if (c != raw_cpu_ptr(&nta_cpu))
		return;
	c = nta_slow_lock(&flags, &has_mark);
	if (has_mark)
		nta_batch_publish_all(c, true);
	else
		mod_timer(&c->batch_timer, jiffies + 1);
	nta_slow_unlock(c, has_mark, flags);
}

void __init nta_batch_init(struct nta_cpu *c, unsigned int cpu)
{
	unsigned int i;

	/* @owner and @home are CPU numbers in 16 bits. */
	BUILD_BUG_ON(CONFIG_NR_CPUS > U16_MAX);

	for (i = 0; i < NTA_BATCHES_PER_CPU; i++) {
		c->batch_mem[i].home = cpu;
		c->batch_mem[i].node.next = c->batch_stash;
		c->batch_stash = &c->batch_mem[i].node;
	}
	init_llist_head(&c->batch_inbox);
	init_llist_head(&c->batch_returned);
	timer_setup(&c->stranded, nta_stranded_fn, TIMER_DEFERRABLE);
	timer_setup(&c->batch_timer, nta_batch_timer_fn,
		    TIMER_PINNED | TIMER_DEFERRABLE);
}

/*
 * Queue the object for its owner: in a batch when the caller holds the
 * mark and batching is on, else with its pending bit.  The owner drains
 * on its next slow path; it is kicked only when NTA_KICK_BLOCKS blocks
 * have piled up anyway and it is neither idle nor nohz_full (an idle
 * owner takes a slow path when it next allocates, and SLUB's remote frees
 * wake nobody either); otherwise the stranded-free timer is the bound.
 */
enum nta_bad_free nta_queue_for_owner(struct nta_cpu *c, bool has_mark,
				      struct nta_block *blk, void *ptr,
				      unsigned int size)
{
	enum nta_bad_free why = NTA_FREE_BAD_HEADER;
	unsigned int owner = 0, queued;
	bool batched = false;
	struct nta_cpu *oc;

	/* The owner may give the block back while we look at its header. */
	rcu_read_lock();
	/* Nothing is written through a header its page does not back. */
	oc = nta_block_owner(blk);
	if (likely(oc)) {
		owner = oc->pool.id;
		batched = has_mark && READ_ONCE(nta_remote_batching) &&
			  nta_batch_free(c, owner, blk, ptr, size, &why);
	}
	if (likely(oc) && !batched) {
		/* Poisoned before the owner can see it pending. */
		if (NTA_KASAN && !nta_check_object(blk, ptr, size))
			nta_hook_free(ptr, size);
		why = nta_remote_free(&oc->pool, ptr, size, &queued);
	}
	rcu_read_unlock();
	if (unlikely(why))
		return why;
	nta_count(NTA_CTR(remote_frees), 1);
	nta_account(c, has_mark, size, -1);
	if (batched)
		return NTA_FREE_OK;
	/* The claim and the pending bit; queued flag, count and llist_add(). */
	nta_count(NTA_CTR(remote_atomics), queued ? 5 : 2);
	if (likely(!queued))
		return NTA_FREE_OK;
	nta_note_queued(oc);
	if (queued == NTA_KICK_BLOCKS && nta_kick_wanted(owner)) {
		if (nta_kick_cpu(owner))
			nta_count(NTA_CTR(kicks), 1);
	} else if (queued == 1) {
		nta_arm_stranded(c);
	}
	return NTA_FREE_OK;
}

/*
 * nta_batch_free() for the common case, inline in nta_free_remote(): the
 * open batch for the owner sits in its usual slot and this object does
 * not fill it, and the object passes the checks.  Returns false, with
 * nothing written, for anything else: nta_queue_for_owner() then opens,
 * publishes or falls back to the pending bit, and reports.  So the free
 * a producer's heads take on the consumer's CPU is a few loads, the checks
 * and a few stores; the rest, and its larger frame, stay out of line.
 */
static __always_inline bool nta_batch_free_quick(struct nta_cpu *c,
						 struct nta_block *blk,
						 void *ptr, unsigned int size)
{
	/* As nta_object_ok() finds it, so that the two share the work. */
	unsigned int unit = ((unsigned long)ptr & (NTA_BLOCK_SIZE - 1)) >>
			    NTA_UNIT_SHIFT;
	unsigned int units = nta_size_to_units(size);
	struct nta_batch *b;
	struct nta_cpu *o;
	u8 gen;

	if (unlikely(!READ_ONCE(nta_remote_batching)))
		return false;
	o = nta_block_owner(blk);
	if (unlikely(!o))
		return false;
	b = c->batch_open[o->pool.id % NTA_BATCH_SLOTS];
	/* As nta_batch_free(), which publishes the batch this would fill. */
	if (unlikely(!b || b->owner != o->pool.id ||
		     b->nr + 1 >= NTA_BATCH_MAX ||
		     b->held + units >= NTA_BATCH_UNITS))
		return false;
	gen = nta_gen(blk, unit);
	/* The generation before the length byte, as nta_batch_free(). */
	smp_rmb();
	if (unlikely(!nta_object_ok(blk, ptr, size, gen)))
		return false;
	nta_hook_free(ptr, size);
	nta_batch_add(b, ptr, gen, units);
	nta_count(NTA_CTR(remote_frees), 1);
	nta_account(c, true, size, -1);
	return true;
}

/*
 * nta_free() on another CPU: queued for the owner, lock-free on its side,
 * so under the mark alone, which the caller holds.
 */
noinline void nta_free_remote(struct nta_cpu *c, struct nta_block *blk,
			      void *ptr, unsigned int size, unsigned long ip,
			      bool mapped)
{
	enum nta_bad_free why = NTA_FREE_FOREIGN;
	bool quick;

	/* As in nta_free_slow(): a header is trusted only in a block of NTA's. */
	if (likely(mapped || __nta_owns(ptr))) {
		/* The owner may give the block back while we look at it. */
		rcu_read_lock();
		quick = nta_batch_free_quick(c, blk, ptr, size);
		rcu_read_unlock();
		why = quick ? NTA_FREE_OK :
			      nta_queue_for_owner(c, true, blk, ptr, size);
	}
	nta_fast_drop_mark();
	if (unlikely(why))
		nta_complain(ptr, size, why, ip);
}

/* Every slow path drains what other CPUs queued (nta_drain_locked()). */
noinline void __nta_drain_locked(struct nta_cpu *c, bool has_mark,
				struct list_head *released)
{
	unsigned int n = nta_pool_drain(&c->pool, released);

	n += nta_batch_drain(c, has_mark, released);
	/*
	 * More than one drain's worth was queued: the next slow path takes
	 * the rest, or the stranded-free timer's kick if none comes first.
	 * Not a kick now: a self-IPI per such drain would cost an owner
	 * that allocates what another CPU frees an interrupt per drain.
	 */
	if (unlikely(nta_has_queued(c)))
		nta_arm_stranded(c);
	if (!n)
		return;
	nta_count(NTA_CTR(drains), 1);
	nta_count(NTA_CTR(frees), n);
}

/*
 * Whether a kick of @cpu (nta_kick_cpu()) is worth its interrupt: not for
 * an idle CPU or a nohz_full one, whose isolation an IPI would break.  Its
 * queue waits for its next slow path, the shrinker (which kicks an idle
 * CPU, not a nohz_full one), nta_drain_all() or hotplug.  An offline CPU
 * is drained from a work item, no IPI.
 */
bool nta_kick_wanted(unsigned int cpu)
{
	return !cpu_online(cpu) || (!idle_cpu(cpu) && !tick_nohz_full_cpu(cpu));
}

/*
 * Ask @cpu to drain its remote list.  An offline owner cannot run its
 * irq_work; its pool is drained from a work item instead.  Returns false
 * when a kick was already on its way.  Preemption is off from the check
 * to the queueing, so that @cpu cannot finish going offline in between
 * (stop_machine() waits for us): on PREEMPT_RT a caller may be preemptible.
 */
bool nta_kick_cpu(unsigned int cpu)
{
	bool queued;

	preempt_disable();
	if (cpu_online(cpu))
		queued = irq_work_queue_on(&per_cpu(nta_cpu, cpu).kick, cpu);
	else
		queued = schedule_work(&nta_offline_work);
	preempt_enable();
	return queued;
}
