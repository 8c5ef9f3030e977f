// SPDX-License-Identifier: GPL-2.0
/*
 * NTA reports: bad frees and writes after free, recorded under the local
 * lock and printed after it; and hardened usercopy's check of a copy
 * from an NTA object.
 */

#define pr_fmt(fmt) "nta: " fmt

#include <kunit/visibility.h>
#include <linux/bug.h>
#include <linux/kasan.h>
#include <linux/nta.h>
#include <linux/percpu.h>
#include <linux/printk.h>
#include <linux/ratelimit.h>
#include <linux/rcupdate.h>
#include <linux/uaccess.h>

#include "nta_core_inline.h"
#include "nta_internal.h"

bool nta_warn_bad_free __read_mostly = true;
atomic_t nta_poison_reports = ATOMIC_INIT(0);

static DEFINE_RATELIMIT_STATE(nta_report_rs, 5 * HZ, 10);

/*
 * Print one report: every bad free and poison hit is counted; the first
 * ten in five seconds are printed, with a WARN's backtrace unless the
 * KUnit suite provoked them.  CONFIG_BUG_ON_DATA_CORRUPTION stops the
 * machine (CHECK_DATA_CORRUPTION()).
 */
static void __cold nta_print_report(const struct nta_report *r)
{
	bool warn = READ_ONCE(nta_warn_bad_free);

	/* The limit is on the noise, not on BUG_ON_DATA_CORRUPTION. */
	if (!__ratelimit(&nta_report_rs) &&
	    !(IS_ENABLED(CONFIG_BUG_ON_DATA_CORRUPTION) && warn))
		return;
	if (r->bad == r->ptr)
		pr_err("free-list links overwritten in free chunk %p (%u bytes)\n",
		       r->ptr, r->size);
	else if (r->bad)
		pr_err("write after free at %p in free chunk %p (%u bytes)\n",
		       r->bad, r->ptr, r->size);
	else
		pr_err("refusing free of %p size %u (block %p): %s\n",
		       r->ptr, r->size, nta_block_of(r->ptr),
		       nta_bad_free_reason(r->why));
	if (r->nr > 1)
		pr_err("and %u more found under the lock\n", r->nr - 1);
	/* As SLUB's reports do, mark the kernel as having seen corruption. */
	if (CHECK_DATA_CORRUPTION(warn, "nta: memory corruption detected\n"))
		add_taint(TAINT_BAD_PAGE, LOCKDEP_NOW_UNRELIABLE);
}

/*
 * Let KASAN say what it knows of a refused free: a double free is a
 * use-after-free report (a one-byte read at @ip, the caller of
 * nta_free()), where kfree() would say double-free.
 */
static void nta_kasan_check_free(const void *ptr, unsigned long ip)
{
#ifdef CONFIG_KASAN_GENERIC
	if (kasan_enabled())
		__kasan_check_byte(ptr, ip);
#endif
}

noinline void __cold nta_complain(const void *ptr, unsigned int size,
				  enum nta_bad_free why, unsigned long ip)
{
	struct nta_report r = { .nr = 1, .ptr = ptr, .size = size, .why = why };

	this_cpu_inc(nta_cpu.stats.bad_frees);
	/* Not when the warning is off: tests that free badly on purpose. */
	if (why != NTA_FREE_FOREIGN && READ_ONCE(nta_warn_bad_free))
		nta_kasan_check_free(ptr, ip);
	nta_print_report(&r);
}

/*
 * Record a report found under the local lock (or in a dead CPU's pool);
 * nta_flush_reports() prints it once no lock is held.  Interrupts off,
 * so that a nested context of this CPU cannot tear the record.
 */
static void __cold nta_record_report(const void *ptr, const void *bad,
				     unsigned int size, enum nta_bad_free why)
{
	struct nta_report *r;
	unsigned long flags;

	local_irq_save(flags);
	r = this_cpu_ptr(&nta_cpu.report);
	if (!r->nr++) {
		r->ptr = ptr;
		r->bad = bad;
		r->size = size;
		r->why = why;
	}
	local_irq_restore(flags);
}

noinline void __cold nta_print_reports(void)
{
	struct nta_report r;
	unsigned long flags;

	local_irq_save(flags);
	r = *this_cpu_ptr(&nta_cpu.report);
	this_cpu_ptr(&nta_cpu.report)->nr = 0;
	local_irq_restore(flags);
	if (r.nr)
		nta_print_report(&r);
}

/*
 * Called by the owner's drain, under its lock, for a queued object that is
 * no longer live: a double free that raced with the owner's own free.
 * The statistics counted it out twice; they stay off by that object.
 */
void nta_report_bad_free(const struct nta_pool *pool, const void *ptr,
			 unsigned int size, enum nta_bad_free why)
{
	this_cpu_inc(nta_cpu.stats.bad_frees);
	nta_record_report(ptr, NULL, size, why);
}

/*
 * Called by nta_bin_pop() and nta_this_bin_bad_link() under the fast-path
 * mark, for a bin whose link was overwritten (a write after free); the
 * slow path that follows prints.
 */
void nta_report_bad_bin(const void *obj, unsigned int units)
{
	atomic_inc(&nta_poison_reports);
	nta_record_report(obj, obj, units * NTA_UNIT, NTA_FREE_OK);
}

/*
 * Called under the lock by CONFIG_NTA_DEBUG's check of a free chunk, and
 * when free-list links are found overwritten (@bad == @chunk).
 */
void nta_report_poison(const struct nta_pool *pool, const void *chunk,
		       unsigned int units, const void *bad)
{
	atomic_inc(&nta_poison_reports);
	nta_record_report(chunk, bad, units * NTA_UNIT, NTA_FREE_OK);
}

#if IS_ENABLED(CONFIG_HARDENED_USERCOPY) || IS_ENABLED(CONFIG_KUNIT)
/**
 * nta_usercopy_bad - is a copy to or from user space within one object?
 * @ptr: the start of the copy, in an NTA block
 * @n: its length
 * @offset: set to the offset of @ptr in its object, or in the block when
 *	it is in no live object
 *
 * The object is the nearest object start at or before @ptr in the block's
 * @start bitmap, if its length byte says it is live and long enough.  A
 * racing allocation or free on the owner changes other objects' bits and
 * bytes only, so another CPU may ask.  The copy must also end before the
 * object's last NTA_USERCOPY_TAIL bytes, its skb_shared_info.
 *
 * Return: NULL when the copy stays inside a live object's usercopy
 * region, else what it hit.
 */
VISIBLE_IF_KUNIT const char *nta_usercopy_bad(const void *ptr, unsigned long n,
					      unsigned long *offset)
{
	const struct nta_block *blk = nta_block_of(ptr);
	unsigned long off = ptr - (const void *)blk, size;
	unsigned int unit = off >> NTA_UNIT_SHIFT, u, len;

	*offset = off;
	if (unit < NTA_HDR_UNITS)
		return "block header";
	/* The owner writes other objects' bits with plain stores. */
	u = data_race(find_last_bit(blk->start, unit + 1));
	len = u <= unit ? nta_cls(blk, u) : 0;
	if (!len || u + len <= unit)
		return "free memory";
	*offset = off - ((unsigned long)u << NTA_UNIT_SHIFT);
	size = (unsigned long)len << NTA_UNIT_SHIFT;
	if (n > size - *offset)
		return "past the object";
	if (*offset + n > size - min_t(unsigned long, size, NTA_USERCOPY_TAIL))
		return "skb_shared_info";
	return NULL;
}
#endif

#ifdef CONFIG_HARDENED_USERCOPY

/**
 * nta_check_heap_object - hardened usercopy's check of a copy from NTA
 * @ptr: the start of the copy; nta_owns() is true for it
 * @n: its length
 * @to_user: the direction, for the report
 *
 * Called by check_heap_object() as it calls __check_heap_object() for a
 * slab: a copy must stay inside the live object it starts in, so that an
 * over-long copy from a head does not leak or overwrite its neighbours,
 * nor its own skb_shared_info (page pointers, destructor argument).  The
 * bound is the object NTA set aside (whole cache lines) less that tail:
 * skb_small_head_cache bounds small heads the same way, kmalloc's larger
 * heads only by their object.
 */
void nta_check_heap_object(const void *ptr, unsigned long n, bool to_user)
{
	const char *bad = NULL;
	unsigned long offset;

	/* A block given back is freed after a grace period: read it inside. */
	rcu_read_lock();
	if (__nta_owns(ptr))
		bad = nta_usercopy_bad(ptr, n, &offset);
	rcu_read_unlock();
	if (unlikely(bad))
		usercopy_abort("NTA object", bad, to_user, offset, n);
}
#endif
