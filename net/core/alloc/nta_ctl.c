// SPDX-License-Identifier: GPL-2.0
/*
 * NTA controls: the net.core.nta switch and the debugfs files.
 *
 * net.core.nta switches new skb heads between NTA and kmalloc at run time;
 * heads already allocated are freed to wherever they came from, so the
 * switch is safe under load and lets a benchmark compare both in one boot.
 *
 * debugfs nta/summary has one "name value" line per counter, summed over
 * CPUs; nta/percpu has the same as a table with a row per CPU; writing
 * anything to nta/drain makes every CPU free what others queued for it.
 * With CONFIG_NTA_DEBUG, nta/usercopy_test proves the usercopy bound,
 * nta/bad_free_test provokes refused frees, nta/poison_test a poison
 * report, nta/kmemleak_test plants objects for a kmemleak scan, and
 * nta/check checks every CPU's pool.
 */

#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/kstrtox.h>
#include <linux/mutex.h>
#include <linux/nta.h>
#include <linux/preempt.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/skbuff.h>
#include <linux/string.h>
#include <linux/sysctl.h>
#include <linux/topology.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <net/net_namespace.h>

#include "nta_internal.h"

static DEFINE_MUTEX(nta_sysctl_mutex);

static int nta_sysctl_enabled(const struct ctl_table *table, int write,
			      void *buffer, size_t *lenp, loff_t *ppos)
{
	struct ctl_table tmp = *table;
	int val, ret;

	mutex_lock(&nta_sysctl_mutex);
	val = nta_enabled();
	tmp.data = &val;
	ret = proc_dointvec_minmax(&tmp, write, buffer, lenp, ppos);
	if (write && !ret && val != nta_enabled()) {
		if (val && !READ_ONCE(nta_ready)) {
			ret = -ENODEV;
		} else if (val) {
			static_branch_enable(&nta_enabled_key);
			/* nta=off at boot took no reserve: take it now. */
			nta_fill_reserves();
		} else {
			static_branch_disable(&nta_enabled_key);
			/* Nothing new comes from NTA: give the bins back. */
			nta_drain_all();
		}
	}
	mutex_unlock(&nta_sysctl_mutex);
	return ret;
}

static struct ctl_table nta_sysctl_table[] = {
	{
		.procname	= "nta",
		.maxlen		= sizeof(int),
		.mode		= 0644,
		.proc_handler	= nta_sysctl_enabled,
		.extra1		= SYSCTL_ZERO,
		.extra2		= SYSCTL_ONE,
	},
};

#define NTA_STAT(name)	{ #name, offsetof(struct nta_stats, name) }

static const struct {
	const char *name;
	size_t offset;
} nta_stat_fields[] = {
	NTA_STAT(allocs), NTA_STAT(frees), NTA_STAT(remote_frees),
	NTA_STAT(remote_atomics), NTA_STAT(drains), NTA_STAT(kicks),
	NTA_STAT(grows), NTA_STAT(returns), NTA_STAT(failures),
	NTA_STAT(bad_frees), NTA_STAT(fallbacks), NTA_STAT(inuse_objects),
	NTA_STAT(requested_bytes), NTA_STAT(reserved_bytes),
	NTA_STAT(kmalloc_bytes), NTA_STAT(blocks), NTA_STAT(block_bytes),
	NTA_STAT(free_bytes), NTA_STAT(binned_bytes), NTA_STAT(largest_free),
};

/* Every field is 64 bits wide; the gauges are signed. */
static s64 nta_stat_value(const struct nta_stats *st, unsigned int i)
{
	return *(const s64 *)((const void *)st + nta_stat_fields[i].offset);
}

static int nta_summary_show(struct seq_file *m, void *v)
{
	struct nta_stats st;
	unsigned int i;

	nta_get_stats(&st, -1);
	for (i = 0; i < ARRAY_SIZE(nta_stat_fields); i++)
		seq_printf(m, "%s %lld\n", nta_stat_fields[i].name,
			   nta_stat_value(&st, i));
	seq_printf(m, "enabled %d\n", nta_enabled());
	seq_printf(m, "unit %u\n", NTA_UNIT);
	seq_printf(m, "block_size %lu\n", NTA_BLOCK_SIZE);
	seq_printf(m, "max_size %u\n", nta_max_size());
	seq_printf(m, "reserve_blocks %u\n", nta_reserve_blocks);
	seq_printf(m, "max_blocks %u\n", nta_max_blocks);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nta_summary);

static int nta_percpu_show(struct seq_file *m, void *v)
{
	struct nta_stats st;
	unsigned int cpu, i;

	seq_puts(m, "cpu");
	for (i = 0; i < ARRAY_SIZE(nta_stat_fields); i++)
		seq_printf(m, " %s", nta_stat_fields[i].name);
	seq_putc(m, '\n');
	for_each_possible_cpu(cpu) {
		nta_get_stats(&st, cpu);
		seq_printf(m, "%u", cpu);
		for (i = 0; i < ARRAY_SIZE(nta_stat_fields); i++)
			seq_printf(m, " %lld", nta_stat_value(&st, i));
		seq_putc(m, '\n');
	}
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nta_percpu);

static ssize_t nta_drain_write(struct file *file, const char __user *buf,
			       size_t count, loff_t *ppos)
{
	nta_drain_all();
	return count;
}

static const struct file_operations nta_drain_fops = {
	.write	= nta_drain_write,
	.llseek	= noop_llseek,
};

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

static long nta_nodes_fn(void *local)
{
	return nta_blocks_this_cpu(local);
}

/*
 * nta/nodes: per online CPU, its memory node, the blocks its pool holds
 * and how many of them are on that node: all of them, unless the node had
 * no free memory when a block was allocated (the page allocator then takes
 * the nearest node that has).
 */
static int nta_nodes_show(struct seq_file *m, void *v)
{
	unsigned int cpu, local;
	long n;

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		n = work_on_cpu(cpu, nta_nodes_fn, &local);
		seq_printf(m, "cpu%u node %d blocks %ld local %u\n", cpu,
			   cpu_to_mem(cpu), n, local);
	}
	cpus_read_unlock();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nta_nodes);

static int __init nta_ctl_init(void)
{
	struct dentry *dir;

	/* A global knob, so it lives in init_net like netdev_max_backlog. */
	if (!register_net_sysctl(&init_net, "net/core", nta_sysctl_table))
		pr_warn("nta: cannot register net.core.nta\n");

	dir = debugfs_create_dir("nta", NULL);
	debugfs_create_file("summary", 0444, dir, NULL, &nta_summary_fops);
	debugfs_create_file("percpu", 0444, dir, NULL, &nta_percpu_fops);
	debugfs_create_file("drain", 0200, dir, NULL, &nta_drain_fops);
	debugfs_create_file("nodes", 0444, dir, NULL, &nta_nodes_fops);
	if (IS_ENABLED(CONFIG_NTA_DEBUG)) {
		debugfs_create_file("bad_free_test", 0200, dir, NULL,
				    &nta_bad_free_test_fops);
		debugfs_create_file("poison_test", 0200, dir, NULL,
				    &nta_poison_test_fops);
		debugfs_create_file("check", 0400, dir, NULL, &nta_check_fops);
	}
	if (IS_ENABLED(CONFIG_NTA_DEBUG) && IS_ENABLED(CONFIG_DEBUG_KMEMLEAK))
		debugfs_create_file("kmemleak_test", 0200, dir, NULL,
				    &nta_kmemleak_test_fops);
	if (IS_ENABLED(CONFIG_NTA_DEBUG) && IS_ENABLED(CONFIG_HARDENED_USERCOPY))
		debugfs_create_file("usercopy_test", 0600, dir, NULL,
				    &nta_usercopy_test_fops);
	return 0;
}
late_initcall(nta_ctl_init);
