// SPDX-License-Identifier: GPL-2.0
/*
 * NTA controls: the net.core.nta switch and the debugfs files.
 *
 * net.core.nta switches new skb heads between NTA and kmalloc at run time;
 * heads already allocated are freed to wherever they came from, so the
 * switch is safe under load and lets a benchmark compare both in one boot.
 * net.core.nta_max_total limits the bytes of blocks all CPUs' pools hold
 * together (0: no limit beyond nta_max= per CPU).
 *
 * debugfs nta/summary has one "name value" line per counter, summed over
 * CPUs; nta/percpu has the same as a table with a row per CPU; writing
 * anything to nta/drain makes every CPU free what others queued for it
 * and give back its free blocks, and waits until they are back with the
 * page allocator (after a grace period), so nta/summary read after it
 * shows what NTA still holds;
 * nta/nodes says where each CPU's blocks live.  The kmalloc_bytes gauge
 * models what the mainline path would hold for the same live objects
 * (nta_stats.c).  CONFIG_NTA_DEBUG's files are nta_debug.c's.
 */

#include <linux/cpu.h>
#include <linux/cpumask.h>
#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/kstrtox.h>
#include <linux/mutex.h>
#include <linux/nta.h>
#include <linux/preempt.h>
#include <linux/rcupdate.h>
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

/**
 * nta_blocks_this_cpu - where this CPU's blocks live, for nta/nodes
 * @local: set to how many are on this CPU's memory node (nta_block_node())
 *
 * The caller is pinned to the CPU and in task context.
 *
 * Return: how many blocks this CPU's pool holds.
 */
static unsigned int nta_blocks_this_cpu(unsigned int *local)
{
	int nid = nta_block_node(smp_processor_id());
	const struct nta_block *blk;
	unsigned int n = 0;
	unsigned long flags;
	struct nta_cpu *c;
	bool has_mark;

	*local = 0;
	c = nta_slow_lock(&flags, &has_mark);
	list_for_each_entry(blk, &c->pool.blocks, link) {
		n++;
		if (page_to_nid(virt_to_page(blk)) == nid)
			(*local)++;
	}
	nta_slow_unlock(c, has_mark, flags);
	return n;
}

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
		if (val && !nta_is_ready()) {
			ret = -ENODEV;
		} else if (val) {
			nta_set_enabled(true);
			/* nta=off at boot took no reserve: take it now. */
			nta_fill_reserves();
		} else {
			nta_set_enabled(false);
			/* Nothing new comes from NTA: give the bins back. */
			nta_drain_all();
		}
	}
	mutex_unlock(&nta_sysctl_mutex);
	return ret;
}

/*
 * The smallest net.core.nta_max_total but 0: the reserves of the online
 * CPUs (held now, or taken when NTA is switched on), and one block.
 */
static unsigned long nta_max_total_min(void)
{
	return max(1UL, (unsigned long)nta_reserve_blocks * num_online_cpus()) *
	       NTA_BLOCK_SIZE;
}

/*
 * net.core.nta_max_total, in bytes, counted in whole blocks (rounded
 * down); 0 for no limit.  A value that is not a number, is negative, or
 * would not leave room for the reserves is refused with EINVAL, and the
 * limit stays what it was.  Lowering it below what the pools hold takes
 * nothing back: they stop growing until they gave enough back.
 */
static int nta_sysctl_max_total(const struct ctl_table *table, int write,
				void *buffer, size_t *lenp, loff_t *ppos)
{
	struct ctl_table tmp = *table;
	unsigned long bytes, least;
	int ret;

	mutex_lock(&nta_sysctl_mutex);
	bytes = READ_ONCE(nta_max_total_pages) << PAGE_SHIFT;
	tmp.data = &bytes;
	ret = proc_doulongvec_minmax(&tmp, write, buffer, lenp, ppos);
	if (write && !ret) {
		least = nta_max_total_min();
		if (bytes && bytes < least) {
			pr_warn_ratelimited("nta: net.core.nta_max_total=%lu is below the reserves of the online CPUs, %lu; unchanged\n",
					    bytes, least);
			ret = -EINVAL;
		} else {
			WRITE_ONCE(nta_max_total_pages,
				   bytes / NTA_BLOCK_SIZE *
				   (NTA_BLOCK_SIZE >> PAGE_SHIFT));
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
	{
		.procname	= "nta_max_total",
		.maxlen		= sizeof(unsigned long),
		.mode		= 0644,
		.proc_handler	= nta_sysctl_max_total,
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
	seq_printf(m, "held_bytes %lu\n",
		   (unsigned long)atomic_long_read(&nta_held_pages) << PAGE_SHIFT);
	seq_printf(m, "max_total_bytes %lu\n",
		   READ_ONCE(nta_max_total_pages) << PAGE_SHIFT);
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
	rcu_barrier();
	return count;
}

static const struct file_operations nta_drain_fops = {
	.write	= nta_drain_write,
	.llseek	= noop_llseek,
};

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
		pr_warn("nta: cannot register net.core.nta and nta_max_total\n");

	dir = debugfs_create_dir("nta", NULL);
	debugfs_create_file("summary", 0444, dir, NULL, &nta_summary_fops);
	debugfs_create_file("percpu", 0444, dir, NULL, &nta_percpu_fops);
	debugfs_create_file("drain", 0200, dir, NULL, &nta_drain_fops);
	debugfs_create_file("nodes", 0444, dir, NULL, &nta_nodes_fops);
	if (IS_ENABLED(CONFIG_NTA_DEBUG))
		nta_debug_init(dir);
	return 0;
}
late_initcall(nta_ctl_init);
