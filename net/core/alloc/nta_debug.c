// SPDX-License-Identifier: GPL-2.0
/*
 * NTA's CONFIG_NTA_DEBUG debugfs files, for test machines only:
 * nta/usercopy_test proves the usercopy bound,
 * nta/bad_free_test provokes refused frees, nta/poison_test a poison
 * report, nta/kmemleak_test plants objects for a kmemleak scan, and
 * nta/check checks every CPU's pool.
 */

#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/kstrtox.h>
#include <linux/mutex.h>
#include <linux/nta.h>
#include <linux/poison.h>
#include <linux/preempt.h>
#include <linux/seq_file.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>

#include "nta_core_inline.h"
#include "nta_internal.h"

/**
 * nta_check_this_cpu - nta_pool_check() on this CPU's pool, for nta/check
 * @msg: where the first violation is described
 * @len: the size of @msg
 *
 * The caller is pinned to the CPU and in task context, so it cannot be
 * nested in this CPU's fast path.
 *
 * Return: how many violations there are.
 */
static unsigned int nta_check_this_cpu(char *msg, size_t len)
{
	unsigned int errs = 1;
	unsigned long flags;
	struct nta_cpu *c;
	bool has_mark;

	c = nta_slow_lock(&flags, &has_mark);
	if (has_mark)
		errs = nta_pool_check(&c->pool, msg, len);
	else
		strscpy(msg, "called inside the fast path", len);
	nta_slow_unlock(c, has_mark, flags);
	return errs;
}

/**
 * nta_poison_test - provoke a poison report on this CPU's pool
 *
 * For nta/poison_test: take a free chunk of two units from this CPU's
 * pool and free it again, which poisons it; write a byte into it as a use
 * after free would; and run the check that handing the chunk out runs.
 * All under the local lock, so the report is recorded there and printed
 * after it, as a real one is.  The byte is put back before the lock is
 * dropped: nothing stays corrupted.  The caller is pinned to the CPU.
 *
 * Return: 0, or -ENOMEM when the pool has no free chunk of two units.
 */
static int nta_poison_test(void)
{
	LIST_HEAD(released);
	unsigned long flags;
	struct nta_cpu *c;
	u8 *p = NULL;
	bool has_mark;

	c = nta_slow_lock(&flags, &has_mark);
	if (has_mark)
		p = nta_pool_alloc(&c->pool, 2 * NTA_UNIT);
	if (p) {
		nta_pool_free(&c->pool, p, 2 * NTA_UNIT, &released);
		p[NTA_UNIT] = ~POISON_FREE;
		nta_check_poison(&c->pool, p, 2);
		p[NTA_UNIT] = POISON_FREE;
	}
	nta_slow_unlock(c, has_mark, flags);
	nta_flush_reports();
	nta_release_blocks(&released);
	return p ? 0 : -ENOMEM;
}

/*
 * CONFIG_NTA_DEBUG: nta/usercopy_test proves hardened usercopy's bound.
 * A read allocates an skb with a 256-byte linear area, its head from NTA,
 * and copies from the head: as many bytes as were written to the file as
 * a number before (once), else up to the head's skb_shared_info.  Armed
 * with more, the copy must be stopped by hardened usercopy ("Kernel
 * memory exposure attempt detected from NTA object 'skb_shared_info'"),
 * which BUG()s, killing the reader and leaking the skb: a test machine's
 * file, like LKDTM's usercopy tests.
 */
#define NTA_USERCOPY_TEST_SIZE	256

static unsigned int nta_usercopy_test_len;

static ssize_t nta_usercopy_test_write(struct file *file,
				       const char __user *buf, size_t count,
				       loff_t *ppos)
{
	unsigned int len;
	int ret;

	ret = kstrtouint_from_user(buf, count, 0, &len);
	if (ret)
		return ret;
	if (len > PAGE_SIZE)
		return -EINVAL;
	WRITE_ONCE(nta_usercopy_test_len, len);
	return count;
}

static ssize_t nta_usercopy_test_read(struct file *file, char __user *buf,
				      size_t count, loff_t *ppos)
{
	size_t n = xchg(&nta_usercopy_test_len, 0);
	struct sk_buff *skb;
	ssize_t ret;

	if (*ppos)
		return 0;
	skb = alloc_skb(NTA_USERCOPY_TEST_SIZE, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	/* net.core.nta=0, or NTA could not serve it: nothing to prove. */
	if (!skb->__tsize) {
		consume_skb(skb);
		return -ENODEV;
	}
	memset(skb->head, 'n', skb_end_offset(skb));
	n = min(n ?: skb_end_offset(skb), count);
	/* Past the end, the head's skb_shared_info would reach user space. */
	ret = copy_to_user(buf, skb->head, n) ? -EFAULT : n;
	consume_skb(skb);
	if (ret > 0)
		*ppos += ret;
	return ret;
}

static const struct file_operations nta_usercopy_test_fops = {
	.read	= nta_usercopy_test_read,
	.write	= nta_usercopy_test_write,
	.llseek	= noop_llseek,
};

/*
 * CONFIG_NTA_DEBUG: each write to nta/bad_free_test frees an object of its
 * CPU's pool with the wrong size, then frees its second unit, then frees
 * it twice: three refused frees, each reported after the local lock is
 * released.  With netconsole, the report's printk allocates skbs from NTA
 * on the same CPU.  The reports are plain lines, not WARNs, so that lockdep
 * stays on for what a test checks afterwards.
 */
#define NTA_BAD_FREE_TEST_SIZE	300

static ssize_t nta_bad_free_test_write(struct file *file,
				       const char __user *buf, size_t count,
				       loff_t *ppos)
{
	bool warn = READ_ONCE(nta_warn_bad_free);
	u8 *p;

	migrate_disable();
	p = nta_alloc(NTA_BAD_FREE_TEST_SIZE, GFP_KERNEL);
	if (p) {
		WRITE_ONCE(nta_warn_bad_free, false);
		nta_free(p, NTA_BAD_FREE_TEST_SIZE / 2);
		nta_free(p + NTA_UNIT, NTA_BAD_FREE_TEST_SIZE - NTA_UNIT);
		nta_free(p, NTA_BAD_FREE_TEST_SIZE);
		nta_free(p, NTA_BAD_FREE_TEST_SIZE);
		WRITE_ONCE(nta_warn_bad_free, warn);
	}
	migrate_enable();
	return p ? count : -ENOMEM;
}

static const struct file_operations nta_bad_free_test_fops = {
	.write	= nta_bad_free_test_write,
	.llseek	= noop_llseek,
};

/*
 * CONFIG_NTA_DEBUG: each write to nta/poison_test provokes one poison
 * report on its CPU's pool (nta_poison_test()), printed as a plain line
 * after the lock is released, as the bad-free test's reports are.
 */
static ssize_t nta_poison_test_write(struct file *file,
				     const char __user *buf, size_t count,
				     loff_t *ppos)
{
	bool warn = READ_ONCE(nta_warn_bad_free);
	int ret;

	migrate_disable();
	WRITE_ONCE(nta_warn_bad_free, false);
	ret = nta_poison_test();
	WRITE_ONCE(nta_warn_bad_free, warn);
	migrate_enable();
	return ret ?: count;
}

static const struct file_operations nta_poison_test_fops = {
	.write	= nta_poison_test_write,
	.llseek	= noop_llseek,
};

/*
 * CONFIG_NTA_DEBUG with kmemleak: writing 1 to nta/kmemleak_test plants
 * two kmalloc() objects, one referenced only from an NTA object, which a
 * scan must not report because NTA's blocks are scanned, and one
 * referenced from nowhere, which a scan must report: the control that
 * shows the scan would have seen the first.  Their first bytes say which
 * is which in kmemleak's hex dump.  Writing 0 frees the first; the second
 * stays leaked, as with kmemleak's own test module.
 */
#define NTA_KMEMLEAK_SIZE	64

static DEFINE_MUTEX(nta_kmemleak_mutex);
static void **nta_kmemleak_head;

static int nta_kmemleak_plant(void)
{
	char *kept, *leaked;
	void **head;

	head = nta_alloc(NTA_KMEMLEAK_SIZE, GFP_KERNEL);
	kept = kzalloc(NTA_KMEMLEAK_SIZE, GFP_KERNEL);
	leaked = kzalloc(NTA_KMEMLEAK_SIZE, GFP_KERNEL);
	if (!head || !kept || !leaked) {
		kfree(leaked);
		kfree(kept);
		if (head)
			nta_free(head, NTA_KMEMLEAK_SIZE);
		return -ENOMEM;
	}
	strscpy(kept, "NTA-KMEMLEAK-KEPT", NTA_KMEMLEAK_SIZE);
	strscpy(leaked, "NTA-KMEMLEAK-LEAKED", NTA_KMEMLEAK_SIZE);
	*head = kept;
	nta_kmemleak_head = head;
	return 0;
}

static ssize_t nta_kmemleak_test_write(struct file *file,
				       const char __user *buf, size_t count,
				       loff_t *ppos)
{
	bool plant;
	int ret;

	ret = kstrtobool_from_user(buf, count, &plant);
	if (ret)
		return ret;
	mutex_lock(&nta_kmemleak_mutex);
	if (plant && !nta_kmemleak_head) {
		ret = nta_kmemleak_plant();
	} else if (!plant && nta_kmemleak_head) {
		kfree(*nta_kmemleak_head);
		nta_free(nta_kmemleak_head, NTA_KMEMLEAK_SIZE);
		nta_kmemleak_head = NULL;
	}
	mutex_unlock(&nta_kmemleak_mutex);
	return ret ?: count;
}

static const struct file_operations nta_kmemleak_test_fops = {
	.write	= nta_kmemleak_test_write,
	.llseek	= noop_llseek,
};

#define NTA_CHECK_MSG	96

static long nta_check_fn(void *msg)
{
	return nta_check_this_cpu(msg, NTA_CHECK_MSG);
}

/*
 * CONFIG_NTA_DEBUG: nta/check runs the pool check of the KUnit suite on
 * every online CPU's pool, on that CPU: "cpuN ok", or how many invariants
 * are broken and the first.  For a quiet moment, after a test.
 */
static int nta_check_show(struct seq_file *m, void *v)
{
	char msg[NTA_CHECK_MSG];
	unsigned int cpu;
	long errs;

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		msg[0] = '\0';
		errs = work_on_cpu(cpu, nta_check_fn, msg);
		if (errs)
			seq_printf(m, "cpu%u %ld broken, first: %s\n", cpu, errs,
				   msg);
		else
			seq_printf(m, "cpu%u ok\n", cpu);
	}
	cpus_read_unlock();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nta_check);

/* Called by nta_ctl.c once nta/ exists in debugfs. */
void __init nta_debug_init(struct dentry *dir)
{
	debugfs_create_file("bad_free_test", 0200, dir, NULL,
			    &nta_bad_free_test_fops);
	debugfs_create_file("poison_test", 0200, dir, NULL,
			    &nta_poison_test_fops);
	debugfs_create_file("check", 0400, dir, NULL, &nta_check_fops);
	if (IS_ENABLED(CONFIG_DEBUG_KMEMLEAK))
		debugfs_create_file("kmemleak_test", 0200, dir, NULL,
				    &nta_kmemleak_test_fops);
	if (IS_ENABLED(CONFIG_HARDENED_USERCOPY))
		debugfs_create_file("usercopy_test", 0600, dir, NULL,
				    &nta_usercopy_test_fops);
}
