/* SPDX-License-Identifier: GPL-2.0 */
/*
 * NTA's fast paths, inline: nta.c builds nta_alloc(), nta_free() and
 * nta_free_trusted() from them, and skbuff.c's head helpers inline them,
 * so that an skb head taken from or parked in a bin costs no call, no
 * frame and no saved register; the slow paths stay out of line in nta.c,
 * and the free of another CPU's object in nta_remote.c.
 *
 * An allocation takes the most recently freed object of its length from
 * this CPU's bins (nta_bins.h) under the fast-path mark, with no interrupt
 * disabled.  A free on the owning CPU checks the object against its
 * block's length byte, claims it and parks it in its bin.  Everything
 * else (an empty or full bin, the mark held by the code this interrupted,
 * an object of another CPU) goes to a slow path; NTA switched off or
 * init_on_free to an out-of-line copy of the free.
 *
 * Under generic KASAN the callers get the out-of-line copies in nta.o,
 * which KASAN does not instrument, as it does not mm/slub.o: the fast
 * paths read and write bin links inside free objects, which KASAN has
 * poisoned.
 */
#ifndef _NET_CORE_ALLOC_NTA_FAST_H
#define _NET_CORE_ALLOC_NTA_FAST_H

#include <linux/nta.h>

#ifdef CONFIG_NET_NTA

#include <linux/string.h>

#include "nta_core_inline.h"
#include "nta_internal.h"

void *nta_alloc_slow(unsigned int size, gfp_t gfp);
void nta_free_slow(void *ptr, unsigned int size, unsigned long ip,
		   bool mapped);
void nta_free_not_plain(void *ptr, unsigned int size, unsigned long ip,
			bool mapped);
void nta_free_remote(struct nta_cpu *c, struct nta_block *blk, void *ptr,
		     unsigned int size, unsigned long ip, bool mapped);

void *nta_alloc_wipe(void *obj, unsigned int size, gfp_t gfp);

/*
 * Sizes the fast paths serve: one compare, which lets 0 through.  A size
 * of 0 gives 0 units, whose bin is never granted room (its cap at most
 * is 0, nta_bin_cap_max()): the fast paths send it to the slow paths,
 * which refuse it.
 */
static __always_inline bool nta_fast_size(unsigned int size)
{
	return size <= NTA_MAX_SIZE;
}

void nta_this_bin_bad_link(void *obj, unsigned int units);

/*
 * The fast paths reach this CPU's bins with per-CPU operations, as they
 * reach the mark, so that they never work out the CPU's address.  The
 * helpers below are nta_bin_pop(), __nta_bin_park(), nta_bin_has_room()
 * (nta_bins.h) and nta_account() with the mark (nta_internal.h), which
 * the slow paths and the userspace harness use on a struct nta_bins:
 * keep each pair in step.  The caller holds the mark.
 */
#define nta_this_bin(units)	(nta_cpu.bins.slot[units])

/* nta_bin_pop() of this CPU's bins. */
static __always_inline void *nta_this_bin_pop(unsigned int units)
{
	void *obj = __this_cpu_read(nta_this_bin(units).head), *next;
	struct nta_block *blk;

	if (unlikely(!obj))
		return NULL;
	next = nta_bin_next(obj, units);
	if (nta_links_checked() &&
	    unlikely((unsigned long)next & (NTA_UNIT - 1))) {
		nta_this_bin_bad_link(obj, units);
		return NULL;
	}
	__this_cpu_write(nta_this_bin(units).head, next);
	__this_cpu_inc(nta_this_bin(units).room);
	blk = nta_block_of(obj);
	nta_mark_live(blk, nta_unit_of(blk, obj), units);
	return obj;
}

/* __nta_bin_park() into this CPU's bins. */
static __always_inline void nta_this_bin_park(void *ptr, unsigned int units)
{
	nta_bin_set_next(ptr, units, __this_cpu_read(nta_this_bin(units).head));
	__this_cpu_write(nta_this_bin(units).head, ptr);
	__this_cpu_dec(nta_this_bin(units).room);
}

/* nta_bin_has_room() in this CPU's bins. */
static __always_inline bool nta_this_bin_has_room(unsigned int units)
{
	return __this_cpu_read(nta_this_bin(units).room) > 0;
}

/* nta_account() by the holder of this CPU's mark: @alloc, or a free. */
static __always_inline void nta_this_account(unsigned int size, bool alloc)
{
	unsigned int units = nta_size_to_units(size);

	if (alloc) {
		__this_cpu_inc(nta_this_bin(units).live);
		__this_cpu_add(nta_cpu.fast.alloc_bytes, size);
	} else {
		__this_cpu_dec(nta_this_bin(units).live);
		__this_cpu_add(nta_cpu.fast.freed_bytes, size);
	}
}

/* nta_alloc(), inline. */
static __always_inline void *__nta_alloc(unsigned int size, gfp_t gfp)
{
	unsigned int units = nta_size_to_units(size);
	void *obj;

	if (unlikely(!nta_fast_size(size)))
		return NULL;
	if (unlikely(!nta_fast_take_mark()))
		return nta_alloc_slow(size, gfp);
	obj = nta_this_bin_pop(units);
	if (unlikely(!obj)) {
		nta_fast_drop_mark();
		return nta_alloc_slow(size, gfp);
	}
	__this_cpu_inc(nta_cpu.fast.allocs);
	nta_this_account(size, true);
	nta_fast_drop_mark();

	nta_hook_alloc(obj, size, gfp);
	/* One static key for init_on_alloc and init_on_free, both rare. */
	if (unlikely(nta_wipes() || (gfp & __GFP_ZERO)))
		return nta_alloc_wipe(obj, size, gfp);
	return obj;
}

/*
 * The owner takes back an object it handed out as @units units long: its
 * length byte goes from @units to 0, or the free is not the owner's to
 * make on its fast path.  The compare and the store are one
 * cmpxchg_local(), which no interrupt on this CPU can split: an interrupt
 * that frees @ptr again (a double free) finds the byte 0 and is refused,
 * or it frees first and this claim fails.  Another CPU that freed @ptr
 * through its pending bit and claimed it first (nta_unit_claim_remote())
 * is seen here: the length byte is put back for the owner's drain, and
 * the slow path refuses this free.  Else the object's generation moves
 * on, as nta_mark_dead() moves it on the slow paths, from the value just
 * read, so that a claim which raced with this one (not seen: no barrier
 * between the store and the load) is wiped rather than left on a freed
 * unit; the drain finds the length byte 0, or the claim's bit clear,
 * and refuses that free instead.  @units is at most NTA_DATA_UNITS: the
 * caller bounds the size.
 */
static __always_inline bool nta_unit_claim(struct nta_unit_meta *meta,
					   unsigned int units)
{
	u8 cls = units, gen;

	if (unlikely(!try_cmpxchg_local(&meta->cls, &cls, 0)))
		return false;
	gen = READ_ONCE(meta->gen);
	if (likely(!(gen & NTA_GEN_CLAIMED))) {
		/* As nta_mark_dead(): the bit is clear, so gen + 2. */
		smp_store_release(&meta->gen, gen + NTA_GEN_CLAIMED + 1);
		return true;
	}
	WRITE_ONCE(meta->cls, units);
	return false;
}

/*
 * The owner's free on its fast path, under the mark: a size NTA serves,
 * unit aligned, room in its bin's grant (shut bins have none: a slow path
 * opens them and grants), and live with this length (which also
 * means outside the header and not parked in a bin) and not freed by
 * another CPU, claimed last.  Returns false, with nothing changed, for
 * the slow path.  Only nta_free_not_plain() passes @wipe (init_on_free): the
 * memset() is a call, and without one a free saves no registers.
 */
static __always_inline bool nta_free_fast(struct nta_block *blk, void *ptr,
					  unsigned int size, bool wipe)
{
	/* Blocks are aligned to their size: the address alone gives both. */
	unsigned long addr = (unsigned long)ptr;
	unsigned int unit = (addr >> NTA_UNIT_SHIFT) & (NTA_BLOCK_UNITS - 1);
	unsigned int units = nta_size_to_units(size);

	/* The size first: the claim compares a byte, the bins index slots. */
	if (unlikely(!nta_fast_size(size) || (addr & (NTA_UNIT - 1)) ||
		     !nta_this_bin_has_room(units) ||
		     !nta_unit_claim(&blk->meta[unit], units)))
		return false;
	if (wipe)
		memset(ptr, 0, size);
	nta_hook_free(ptr, size);
	nta_this_bin_park(ptr, units);
	nta_this_account(size, false);
	return true;
}

/*
 * nta_free() and nta_free_trusted() once @ptr is known (@mapped), or
 * vouched for, to be NTA's.  The fast path reads the block header's @pool;
 * unless @mapped, the remote and slow paths look @ptr up in the block map
 * before they read more of the header.
 */
static __always_inline void __nta_free(void *ptr, unsigned int size,
				       unsigned long ip, bool mapped)
{
	struct nta_block *blk = nta_block_of(ptr);
	bool done;

	/* Switched off, or init_on_free: one key for both. */
	if (unlikely(!nta_plain_free())) {
		nta_free_not_plain(ptr, size, ip, mapped);
		return;
	}
	if (unlikely(!nta_fast_take_mark()))
		goto slow;
	if (unlikely(blk->pool != __this_cpu_read(nta_cpu.home))) {
		nta_free_remote(this_cpu_ptr(&nta_cpu), blk, ptr, size, ip,
				mapped);
		return;
	}
	done = nta_free_fast(blk, ptr, size, false);
	nta_fast_drop_mark();
	if (likely(done))
		return;
slow:
	nta_free_slow(ptr, size, ip, mapped);
}

/**
 * nta_head_alloc - nta_alloc(), its fast path inline
 * @size: bytes wanted, at most nta_max_size()
 * @gfp: allocation flags, as for nta_alloc()
 *
 * For skbuff.c's head helpers: an allocation from a bin costs no call.
 * Under generic KASAN, nta_alloc() itself, in nta.o, which KASAN does not
 * instrument.
 *
 * Context: any context but NMI.
 * Return: as nta_alloc().
 */
static __always_inline void *nta_head_alloc(unsigned int size, gfp_t gfp)
{
	if (IS_ENABLED(CONFIG_KASAN_GENERIC))
		return nta_alloc(size, gfp);
	return __nta_alloc(size, gfp);
}

/**
 * nta_head_free - nta_free_trusted(), its fast path inline
 * @ptr: the object, recorded by the caller as NTA's (skb->__tsize)
 * @size: the size passed to nta_alloc()
 *
 * For skbuff.c's head helpers: the owner's free into a bin costs no call.
 * Under generic KASAN, nta_free_trusted() itself, as nta_head_alloc().
 *
 * Context: any context but NMI.
 */
static __always_inline void nta_head_free(void *ptr, unsigned int size)
{
	if (IS_ENABLED(CONFIG_KASAN_GENERIC))
		nta_free_trusted(ptr, size);
	else
		__nta_free(ptr, size, 0, false);
}

#else /* !CONFIG_NET_NTA */

static inline void *nta_head_alloc(unsigned int size, gfp_t gfp)
{
	return NULL;
}

static inline void nta_head_free(void *ptr, unsigned int size)
{
}

#endif /* CONFIG_NET_NTA */

#endif /* _NET_CORE_ALLOC_NTA_FAST_H */
