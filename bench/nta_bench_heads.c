// SPDX-License-Identifier: GPL-2.0
/*
 * Benchmark only (bench/, not part of the posted series): the skb heads
 * NTA does not serve, counted, and the slab alternative to NTA as a third
 * contender in the same boot.
 *
 * The slab alternative is what reviewers propose instead of NTA: more
 * kmem_caches for skb heads.  Here it has fine size classes, four per
 * power of two (the spacing of jemalloc and tcmalloc) from above
 * skb_small_head_cache's 704 bytes to 16 KiB: 768, 896, 1024, 1280, ...,
 * 14336, 16384.  "echo slab > nta/bench_heads" (with net.core.nta=0)
 * takes new heads of those sizes from them; "echo kmalloc" goes back to
 * mainline's path.  Small heads keep skb_small_head_cache and larger
 * ones kmalloc, as in mainline, so the three contenders differ only where
 * NTA does.  "echo off" (the default) stops counting too: the skb layer
 * is then the series' own, as the KUnit tests of a boot expect.
 *
 * To weigh an allocator's footprint against the bytes the skb layer asked
 * for, the memory rows of make demo need those bytes for the heads of
 * every allocator.  NTA counts its own (requested_bytes in nta/summary);
 * skbuff.c's bench hook counts the rest here, unless nta/bench_heads is
 * "off".  It keeps what it asked for in skb->__tsize (nta_bench_heads.h),
 * because the head's size alone does not say it.  Reading nta/bench_heads
 * gives the live heads so counted: the bytes asked for (the same measure
 * as NTA's requested_bytes), the bytes of their objects, and those of
 * kmalloc_large() pages among them, which no slab cache's figures include.
 */

#define pr_fmt(fmt) "nta_bench: " fmt

#include <linux/debugfs.h>
#include <linux/init.h>
#include <linux/jump_label.h>
#include <linux/kernel.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/xarray.h>

#include "nta_bench_heads.h"

/*
 * Four classes per power of two, p + p/4 to 2p, from the first above the
 * small cache's 704 bytes (512 + 2 * 128) up to NB_CLASS_MAX.
 */
#define NB_STEP_SHIFT	2
#define NB_POW_MIN	512
#define NB_CLASS_MIN	768
#define NB_CLASS_MAX	16384
#define NB_NR_CLASSES	19
#define NB_UNIT		64

DEFINE_STATIC_KEY_FALSE(nta_bench_count_key);
/*
 * Set the first time heads are counted and never cleared: skb_head_free()
 * looks at a head's tag only once there can be tagged heads, so that a
 * boot that never counts (make bench-icount) runs the series' free path.
 */
DEFINE_STATIC_KEY_FALSE(nta_bench_counted_key);
DEFINE_STATIC_KEY_FALSE(nta_bench_slab_key);

static struct kmem_cache *nb_caches[NB_NR_CLASSES];
static unsigned int nb_class_size[NB_NR_CLASSES];
static const char *nb_class_name[NB_NR_CLASSES];
/* Class index by size in 64-byte units: the alloc path does no search. */
static u8 nb_class_of[NB_CLASS_MAX / NB_UNIT + 1];

/* Live heads counted by the hook; this_cpu_*() is irq safe. */
struct nb_head_stats {
	s64 objects;
	s64 requested_bytes;
	s64 object_bytes;
	s64 large_bytes;
	s64 slab_objects;
};

static DEFINE_PER_CPU(struct nb_head_stats, nb_head_stats);
static DEFINE_MUTEX(nb_heads_mutex);

/**
 * nta_bench_slab_alloc - a head from the slab classes
 * @obj_size: SKB_HEAD_ALIGN() of the linear size, above the small cache's
 * @size: set to the object's size on success
 * @flags: the caller's gfp flags, no DMA or memcg bits
 * @node: the caller's node
 *
 * Never from the emergency reserves: kmalloc_reserve(), which the caller
 * falls back to, has the pfmemalloc logic.
 *
 * Return: the head, or NULL when @obj_size has no class or the cache
 * could not serve it.
 */
void *nta_bench_slab_alloc(unsigned int obj_size, unsigned int *size,
			   gfp_t flags, int node)
{
	unsigned int i;
	void *data;

	if (obj_size > NB_CLASS_MAX)
		return NULL;
	i = nb_class_of[DIV_ROUND_UP(obj_size, NB_UNIT)];
	data = kmem_cache_alloc_node(nb_caches[i], flags | __GFP_NOMEMALLOC |
				     __GFP_NOWARN, node);
	if (data)
		*size = nb_class_size[i];
	return data;
}

static void nb_count(unsigned int req, unsigned int size, bool slab, int sign)
{
	this_cpu_add(nb_head_stats.objects, sign);
	this_cpu_add(nb_head_stats.requested_bytes, sign * (s64)req);
	this_cpu_add(nb_head_stats.object_bytes, sign * (s64)size);
	if (slab)
		this_cpu_add(nb_head_stats.slab_objects, sign);
	else if (size > KMALLOC_MAX_CACHE_SIZE)
		this_cpu_add(nb_head_stats.large_bytes, sign * (s64)size);
}

/*
 * A recorded trace of the counted heads (nta/bench_trace), for the
 * userspace harness, whose fragmentation table replays it through NTA and
 * a model of slab (tools/testing/nta, bench/traces/).  Writing N starts
 * recording the next N heads counted (at most NB_TRACE_MAX), 0 stops.
 * Each head gets the number of its allocation, kept by its address until
 * its free records its life: the heads allocated from its own allocation
 * to its free, the harness's clock (at least 1).  Reading, once stopped,
 * gives "bytes life" per head in allocation order: the bytes asked for, as
 * requested_bytes counts them, and the life, -1 for a head still live at
 * the stop.  The heads of all CPUs make one trace.
 */
#define NB_TRACE_MAX	BIT(20)

struct nb_trace_rec {
	u32 req;
	s32 life;
};

static struct nb_trace_rec *nb_trace;
static unsigned int nb_trace_cap;
static atomic_long_t nb_trace_seq;
static atomic_t nb_trace_unkept;
static bool nb_trace_on;
static DEFINE_XARRAY_FLAGS(nb_trace_xa, XA_FLAGS_LOCK_IRQ);

/* By address, in units: heads are cache-line aligned. */
static unsigned long nb_trace_index(const void *head)
{
	return (unsigned long)head / NB_UNIT;
}

/* In an RCU read section: a stop waits for it before freeing @nb_trace. */
static void nb_trace_alloc(const void *head, unsigned int req)
{
	struct nb_trace_rec *rec;
	unsigned long flags, seq;

	guard(rcu)();
	/* Acquire: @nb_trace and @nb_trace_cap as the start set them. */
	if (!smp_load_acquire(&nb_trace_on))
		return;
	seq = atomic_long_inc_return(&nb_trace_seq) - 1;
	if (seq >= nb_trace_cap)
		return;
	rec = &nb_trace[seq];
	WRITE_ONCE(rec->req, req);
	WRITE_ONCE(rec->life, -1);
	xa_lock_irqsave(&nb_trace_xa, flags);
	/* No memory for the entry: the head stays "live" in the trace. */
	if (xa_is_err(__xa_store(&nb_trace_xa, nb_trace_index(head),
				 xa_mk_value(seq), GFP_NOWAIT | __GFP_NOWARN)))
		atomic_inc(&nb_trace_unkept);
	xa_unlock_irqrestore(&nb_trace_xa, flags);
}

static void nb_trace_free(const void *head)
{
	unsigned long flags, seq;
	void *entry;

	guard(rcu)();
	/* Acquire: pairs with nb_trace_start()'s release, as above. */
	if (!smp_load_acquire(&nb_trace_on))
		return;
	xa_lock_irqsave(&nb_trace_xa, flags);
	entry = __xa_erase(&nb_trace_xa, nb_trace_index(head));
	xa_unlock_irqrestore(&nb_trace_xa, flags);
	if (!xa_is_value(entry))
		return;
	seq = xa_to_value(entry);
	WRITE_ONCE(nb_trace[seq].life,
		   min(atomic_long_read(&nb_trace_seq) - seq, (unsigned long)S32_MAX));
}

/**
 * nta_bench_head_count - count a head that did not come from NTA
 * @head: the head
 * @req: bytes skb_head_alloc() asked for
 * @size: bytes of the object it got
 * @slab: from the slab classes (else from kmalloc_reserve())
 *
 * Return: the head's skb->__tsize, or 0 (not counted) when the sizes do
 * not fit in it.
 */
unsigned int nta_bench_head_count(const void *head, unsigned int req,
				  unsigned int size, bool slab)
{
	unsigned int r = req >> NTA_BENCH_SHIFT, s = size >> NTA_BENCH_SHIFT;

	if ((req | size) & (BIT(NTA_BENCH_SHIFT) - 1) ||
	    r > NTA_BENCH_MASK || s > NTA_BENCH_MASK)
		return 0;
	nb_count(req, size, slab, 1);
	nb_trace_alloc(head, req);
	return NTA_BENCH_HEAD | (slab ? NTA_BENCH_SLAB : 0) |
	       s << NTA_BENCH_BITS | r;
}

/**
 * nta_bench_head_uncount - a counted head is being freed
 * @head: the head
 * @tsize: its skb->__tsize
 */
void nta_bench_head_uncount(const void *head, unsigned int tsize)
{
	nb_count((tsize & NTA_BENCH_MASK) << NTA_BENCH_SHIFT,
		 (tsize >> NTA_BENCH_BITS & NTA_BENCH_MASK) << NTA_BENCH_SHIFT,
		 tsize & NTA_BENCH_SLAB, -1);
	nb_trace_free(head);
}

static unsigned int nb_trace_len(void)
{
	return min_t(unsigned long, atomic_long_read(&nb_trace_seq), nb_trace_cap);
}

/* Stop recording; the caller holds nb_heads_mutex. */
static void nb_trace_stop(void)
{
	if (!READ_ONCE(nb_trace_on))
		return;
	WRITE_ONCE(nb_trace_on, false);
	synchronize_rcu();
	/* The heads still live keep no entry: their lives stay -1. */
	xa_destroy(&nb_trace_xa);
	pr_info("trace: %ld heads allocated, %u recorded, %u of them not kept by address (no memory): live in the trace\n",
		atomic_long_read(&nb_trace_seq), nb_trace_len(),
		atomic_read(&nb_trace_unkept));
}

/* Start recording @cap heads afresh; the caller holds nb_heads_mutex. */
static int nb_trace_start(unsigned int cap)
{
	struct nb_trace_rec *buf;

	nb_trace_stop();
	buf = vcalloc(cap, sizeof(*buf));
	if (!buf)
		return -ENOMEM;
	vfree(nb_trace);
	nb_trace = buf;
	nb_trace_cap = cap;
	atomic_long_set(&nb_trace_seq, 0);
	atomic_set(&nb_trace_unkept, 0);
	/* Release: the hooks that see it on see the buffer and its size. */
	smp_store_release(&nb_trace_on, true);
	return 0;
}

/* Only once stopped: a head counted but not yet written reads as 0 0. */
static void *nb_trace_seq_start(struct seq_file *m, loff_t *pos)
{
	mutex_lock(&nb_heads_mutex);
	if (READ_ONCE(nb_trace_on))
		return ERR_PTR(-EBUSY);
	return *pos < nb_trace_len() ? &nb_trace[*pos] : NULL;
}

static void *nb_trace_seq_next(struct seq_file *m, void *v, loff_t *pos)
{
	++*pos;
	return *pos < nb_trace_len() ? &nb_trace[*pos] : NULL;
}

static void nb_trace_seq_stop(struct seq_file *m, void *v)
{
	mutex_unlock(&nb_heads_mutex);
}

static int nb_trace_seq_show(struct seq_file *m, void *v)
{
	const struct nb_trace_rec *rec = v;

	seq_printf(m, "%u %d\n", READ_ONCE(rec->req), READ_ONCE(rec->life));
	return 0;
}

static const struct seq_operations nb_trace_seq_ops = {
	.start	= nb_trace_seq_start,
	.next	= nb_trace_seq_next,
	.stop	= nb_trace_seq_stop,
	.show	= nb_trace_seq_show,
};

static int nb_trace_open(struct inode *inode, struct file *file)
{
	return seq_open(file, &nb_trace_seq_ops);
}

static ssize_t nb_trace_write(struct file *file, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	unsigned int cap;
	int err;

	err = kstrtouint_from_user(ubuf, count, 0, &cap);
	if (err)
		return err;
	if (cap > NB_TRACE_MAX)
		return -EINVAL;
	mutex_lock(&nb_heads_mutex);
	if (cap)
		err = nb_trace_start(cap);
	else
		nb_trace_stop();
	mutex_unlock(&nb_heads_mutex);
	return err ?: count;
}

static const struct file_operations nb_trace_fops = {
	.open		= nb_trace_open,
	.read		= seq_read,
	.write		= nb_trace_write,
	.llseek		= seq_lseek,
	.release	= seq_release,
};

static int nb_heads_show(struct seq_file *m, void *v)
{
	struct nb_head_stats sum = {};
	const s64 *p;
	s64 *s = (s64 *)&sum;
	unsigned int cpu, i;

	for_each_possible_cpu(cpu) {
		p = (const s64 *)per_cpu_ptr(&nb_head_stats, cpu);
		for (i = 0; i < sizeof(sum) / sizeof(s64); i++)
			s[i] += READ_ONCE(p[i]);
	}
	seq_printf(m, "mode %s\n", static_key_enabled(&nta_bench_slab_key) ?
		   "slab" : static_key_enabled(&nta_bench_count_key) ?
		   "kmalloc" : "off");
	seq_printf(m, "objects %lld\nrequested_bytes %lld\nobject_bytes %lld\n",
		   sum.objects, sum.requested_bytes, sum.object_bytes);
	seq_printf(m, "large_bytes %lld\nslab_objects %lld\n",
		   sum.large_bytes, sum.slab_objects);
	/* The caches' names, for a reader of /sys/kernel/slab. */
	seq_puts(m, "caches");
	for (i = 0; i < NB_NR_CLASSES; i++)
		seq_printf(m, " %s", nb_class_name[i]);
	seq_putc(m, '\n');
	return 0;
}

static int nb_heads_open(struct inode *inode, struct file *file)
{
	return single_open(file, nb_heads_show, NULL);
}

static ssize_t nb_heads_write(struct file *file, const char __user *ubuf,
			      size_t count, loff_t *ppos)
{
	char buf[16];
	size_t n = min(count, sizeof(buf) - 1);
	ssize_t ret = count;

	if (copy_from_user(buf, ubuf, n))
		return -EFAULT;
	buf[n] = '\0';
	mutex_lock(&nb_heads_mutex);
	if (sysfs_streq(buf, "slab")) {
		static_branch_enable(&nta_bench_counted_key);
		static_branch_enable(&nta_bench_count_key);
		static_branch_enable(&nta_bench_slab_key);
	} else if (sysfs_streq(buf, "kmalloc")) {
		static_branch_disable(&nta_bench_slab_key);
		static_branch_enable(&nta_bench_counted_key);
		static_branch_enable(&nta_bench_count_key);
	} else if (sysfs_streq(buf, "off")) {
		static_branch_disable(&nta_bench_slab_key);
		static_branch_disable(&nta_bench_count_key);
	} else {
		ret = -EINVAL;
	}
	mutex_unlock(&nb_heads_mutex);
	return ret;
}

static const struct file_operations nb_heads_fops = {
	.open		= nb_heads_open,
	.read		= seq_read,
	.write		= nb_heads_write,
	.llseek		= seq_lseek,
	.release	= single_release,
};

static int __init nta_bench_heads_init(void)
{
	unsigned int i = 0, p, k, u, size;
	struct dentry *dir, *found;
	char *name;

	for (p = NB_POW_MIN; p < NB_CLASS_MAX; p *= 2) {
		for (k = 1; k <= 1 << NB_STEP_SHIFT; k++) {
			size = p + k * (p >> NB_STEP_SHIFT);
			if (size < NB_CLASS_MIN)
				continue;
			if (WARN_ON_ONCE(i == NB_NR_CLASSES))
				return -EINVAL;
			/* Never freed: kmem_cache_create() keeps the name. */
			name = kasprintf(GFP_KERNEL, "nta_bench_head-%u", size);
			/*
			 * Usercopy as far as the object goes, as kmalloc's
			 * caches are; not merged with them, so that their
			 * slabs hold only skb heads and show on their own.
			 */
			nb_caches[i] = name ? kmem_cache_create_usercopy(name,
					size, NB_UNIT, SLAB_NO_MERGE, 0, size,
					NULL) : NULL;
			if (!nb_caches[i]) {
				pr_err("no cache for %u byte heads\n", size);
				return -ENOMEM;
			}
			nb_class_name[i] = name;
			nb_class_size[i++] = size;
		}
	}
	for (u = 0, i = 0; u <= NB_CLASS_MAX / NB_UNIT; u++) {
		while (nb_class_size[i] < u * NB_UNIT)
			i++;
		nb_class_of[u] = i;
	}

	found = debugfs_lookup("nta", NULL);
	dir = found ?: debugfs_create_dir("nta", NULL);
	debugfs_create_file("bench_heads", 0600, dir, NULL, &nb_heads_fops);
	debugfs_create_file("bench_trace", 0600, dir, NULL, &nb_trace_fops);
	dput(found);
	return 0;
}
late_initcall_sync(nta_bench_heads_init);
