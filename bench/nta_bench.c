// SPDX-License-Identifier: GPL-2.0
/*
 * NTA microbenchmark: "echo run > /sys/kernel/debug/nta/bench" times
 * allocation + free pairs of three contenders in one boot (the write
 * returns when the run is over) and reading nta/bench prints the table of
 * the last run, or says that there was none: NTA as skbuff.c's head
 * helpers call it (nta_head_alloc()/nta_head_free(): the fast paths
 * inline, the free trusted as skb->__tsize makes it), mainline's skb head
 * path (what
 * kmalloc_reserve() does: skb_small_head_cache for heads that fit it, else
 * kmalloc() of kmalloc_size_roundup(); skb_head_free() frees both with
 * kfree()) and that path behind a per-CPU array cache built as Linux 7.0's
 * slab sheaves ("array", below): NTA / mainline 6.12 / array.
 *
 * Patterns: LIFO (free right after allocation), FIFO (a queue of live
 * objects: allocate one, free the oldest) at depths 64, 10, 10^3 and 10^5,
 * producer/consumer across two CPUs with 0, 50 or 100% of the frees on the
 * consumer, and alloc_skb() + consume_skb() with net.core.nta on and off.
 * Each figure is the median of bench_rounds rounds; within a round the
 * contenders run back to back in an order that rotates from round to
 * round (A/B interleaved), after one warm-up round that is not counted.
 * Floor rows (an empty loop, a per-CPU counter, an irq-off section) show
 * how close to the limit of the machine a figure is.
 *
 * echo N > bench_scale multiplies the pairs per figure (default 1, about
 * 30 s under QEMU TCG); echo N > bench_rounds sets the rounds (odd, <= 31).
 * "echo run lifo,xcpu > bench" runs only the rows of the tests named (as
 * the table's first column names them: lifo, fifo64, fifo, xcpu,
 * alloc_skb), e.g. to leave out the deep FIFO queues where memory is short
 * or RCU is slow to return their blocks (QEMU -icount); "run" runs all.
 *
 * The FIFO queues keep their objects live for a whole figure: a queue
 * whose objects would take more than a share of the memory available
 * when the run starts (1/NB_MEM_SHARE, 1/NB_MEM_SHARE_KASAN with KASAN's
 * redzones and quarantine) is made shorter, and the table says so.
 * Allocations never dip into the atomic reserves (GFP_NOWAIT).
 */

#define pr_fmt(fmt) "nta_bench: " fmt

#include <linux/bitops.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/ctype.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/fs.h>
#include <linux/init.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/nta.h>
#include <linux/percpu.h>
#include <linux/prandom.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/seq_buf.h>
#include <linux/skbuff.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/utsname.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>
#include <net/hotdata.h>
#include <net/tcp.h>

#include "nta_fast.h"

#define NB_PAIRS	20000		/* pairs per figure at scale 1 */
#define NB_MAX_ROUNDS	31
#define NB_SEQ		4096		/* length of a size sequence */
#define NB_RING		512		/* producer/consumer ring slots */
#define NB_OUT_SIZE	(64 * 1024)
#define NB_GFP		(GFP_NOWAIT | __GFP_NOWARN)
#define NB_MAX_LIVE	100000		/* deepest FIFO queue */
#define NB_MEM_SHARE	4		/* live sets: 1/4 of available memory */
#define NB_MEM_SHARE_KASAN 16

enum nb_kind { NB_NTA, NB_MAIN, NB_ARRAY, NB_KINDS };

/* The tests "run name,..." selects, by the names the table prints. */
enum nb_test {
	NB_T_LIFO, NB_T_FIFO64, NB_T_FIFO, NB_T_XCPU, NB_T_SKB, NB_TESTS
};

static const char * const nb_tests[NB_TESTS] = {
	"lifo", "fifo64", "fifo", "xcpu", "alloc_skb",
};

static u32 nb_scale = 1;
static u32 nb_rounds = 7;
static unsigned long nb_selected;	/* BIT(enum nb_test), under nb_mutex */
static DEFINE_MUTEX(nb_mutex);
static DEFINE_PER_CPU(u64, nb_counter);

/*
 * Exact counts under QEMU (make bench-icount): the TCG plugin in the NTA
 * repository's bench/icount/ counts the instructions, interrupt-flag changes
 * and locked instructions that all CPUs execute between a start and a stop
 * marker around each timed loop.  The markers are register exchanges that
 * change nothing (and no lock: a register xchg is not locked), which
 * compilers never emit: a few cycles each on hardware, outside the loops.
 * The window's ID goes first, NB_WIN_BITS markers of one bit each, so that
 * the report can tell which row, round and contender a window belongs to.
 * The "memory" clobbers keep the compiler from moving the loops' memory
 * accesses across the markers.
 */
#define NB_WIN_BITS	16
#define NB_WIN_FLOOR	3		/* the "kind" of a floor loop's window */

static unsigned int nb_win_id(unsigned int row, unsigned int slot,
			      unsigned int kind)
{
	/* slot 0: the warm-up round, 1..NB_MAX_ROUNDS the counted ones */
	return (row * 32 + slot) * 4 + kind;
}

#ifdef CONFIG_X86
/* Out of line: the ID's loop stays out of the timed loops' code. */
static noinline void nb_win_send_id(unsigned int id)
{
	int b;

	for (b = NB_WIN_BITS - 1; b >= 0; b--) {
		if (id & BIT(b))
			asm volatile("xchg %%si, %%si" ::: "memory");
		else
			asm volatile("xchg %%dx, %%dx" ::: "memory");
	}
}

static __always_inline void nb_win_start(unsigned int id)
{
	nb_win_send_id(id);
	asm volatile("xchg %%bx, %%bx" ::: "memory");
}

static __always_inline void nb_win_stop(void)
{
	asm volatile("xchg %%cx, %%cx" ::: "memory");
}

/*
 * At the top of each pair (and before each free of the cross-CPU
 * consumer): the plugin's cache-line sets run from one to the next, so it
 * counts the lines each pair touches, and does not count the marker as an
 * instruction.  No "memory" clobber: one would make the compiler reload
 * the loop's state every pair and so change the instruction counts; what
 * the compiler may move across it is the loop's own bookkeeping, at most a
 * line from one pair's set to the next's.
 */
static __always_inline void nb_win_pair(void)
{
	asm volatile("xchg %%di, %%di" :);
}
#else
static inline void nb_win_start(unsigned int id) { }
static inline void nb_win_stop(void) { }
static inline void nb_win_pair(void) { }
#endif

static bool nb_wants(enum nb_test test)
{
	return nb_selected & BIT(test);
}

/* Object size of skb_small_head_cache, i.e. SKB_SMALL_HEAD_CACHE_SIZE. */
static unsigned int nb_small_size;

#define NB_HEAD_GFP	(NB_GFP | __GFP_NOMEMALLOC)

/*
 * The third contender, "array": mainline's skb head path with a per-CPU
 * array of objects in front of the slab, as Linux 7.0's slab sheaves put
 * one in front of every cache, skb_small_head_cache and the kmalloc caches
 * included (alloc_from_pcs() and free_to_pcs() there): the baseline that
 * NTA meets once rebased, which 6.12 does not have.  Under a mark taken
 * with preemption off (local_trylock() there, a busy byte as NTA's fast
 * path has), an allocation pops and a free pushes; an empty array is
 * refilled with half its capacity from the slab in one
 * kmem_cache_alloc_bulk(), a full one gives its older half back in one
 * kmem_cache_free_bulk(); the slab work runs with the mark released, as
 * sheaves refill and flush.  A free pushes on the freeing CPU's array,
 * whichever CPU allocated the object, as a sheaf takes any object of its
 * node.
 *
 * One array per class: skb_small_head_cache, kmalloc-1k, -2k, -4k and -8k
 * (heads above SKB_SMALL_HEAD_CACHE_SIZE are kmalloc'ed at a power of two
 * from 1 KiB up), with 7.0's sheaf capacities (calculate_sheaf_capacity():
 * 28 objects from 256 B up to 1 KiB, 26 rounded up to fill a kmalloc
 * bucket, 12 from 1 KiB up to 4 KiB, 4 from 4 KiB).  Heads above
 * 8 KiB are page allocations in 7.0 too: no array.  Simpler than sheaves:
 * no spare sheaf and no per-node barn of full and empty sheaves, so a
 * CPU holds at most one array's worth per class, and the cross-CPU rows
 * go through the slab once per half array where sheaves trade whole
 * sheaves through the barn.
 */
#define NB_ARR_CLASSES	5
#define NB_ARR_MAX	28

static const u8 nb_arr_caps[NB_ARR_CLASSES] = { 28, 12, 12, 4, 4 };

struct nb_arr {
	unsigned int nr;		/* objects in @objs */
	unsigned int cap;		/* nb_arr_caps[] of the class */
	void *objs[NB_ARR_MAX];
};

struct nb_arr_cpu {
	u8 busy;			/* the mark */
	struct nb_arr cls[NB_ARR_CLASSES];
};

static DEFINE_PER_CPU_ALIGNED(struct nb_arr_cpu, nb_arr_cpu);
static struct kmem_cache *nb_arr_cache[NB_ARR_CLASSES];

/*
 * The class of a head of @size: 0 for skb_small_head_cache, else its
 * kmalloc bucket's, 1 (1 KiB) to 4 (8 KiB); NB_ARR_CLASSES or more above.
 */
static __always_inline unsigned int nb_arr_class(unsigned int size)
{
	if (size <= nb_small_size)
		return 0;
	return max(fls(size - 1), 10) - 9;
}

/* The mark, as nta_fast_enter()/nta_fast_exit() take NTA's. */
static __always_inline struct nb_arr_cpu *nb_arr_lock(void)
{
	struct nb_arr_cpu *c;

	preempt_disable();
	c = this_cpu_ptr(&nb_arr_cpu);
	if (unlikely(READ_ONCE(c->busy))) {
		preempt_enable();
		return NULL;
	}
	WRITE_ONCE(c->busy, 1);
	barrier();
	return c;
}

static __always_inline void nb_arr_unlock(void)
{
	barrier();
	__this_cpu_write(nb_arr_cpu.busy, 0);
	preempt_enable();
}

/*
 * The array of this CPU is empty (or the mark is held by the code this
 * interrupted: then one object from the slab, as sheaves fall back to it).
 * Half an array from the slab, outside the mark; one of them for the
 * caller, the rest pushed on the array of the CPU we are on now, what does
 * not fit any more back to the slab.
 */
static noinline void *nb_arr_refill(unsigned int cls, bool busy)
{
	struct kmem_cache *s = nb_arr_cache[cls];
	void *objs[NB_ARR_MAX / 2 + 1];
	unsigned int n, i = 0;
	struct nb_arr_cpu *c;
	struct nb_arr *a;

	if (busy)
		return kmem_cache_alloc(s, NB_HEAD_GFP);
	n = kmem_cache_alloc_bulk(s, NB_HEAD_GFP, nb_arr_caps[cls] / 2 + 1,
				  objs);
	if (!n)
		return NULL;
	c = nb_arr_lock();
	if (c) {
		a = &c->cls[cls];
		for (; i < n - 1 && a->nr < a->cap; i++)
			a->objs[a->nr++] = objs[i];
		nb_arr_unlock();
	}
	if (i < n - 1)
		kmem_cache_free_bulk(s, n - 1 - i, objs + i);
	return objs[n - 1];
}

static __always_inline void *nb_arr_alloc(unsigned int size)
{
	unsigned int cls = 0;
	struct nb_arr_cpu *c;
	struct nb_arr *a;
	void *obj;

	if (size > nb_small_size) {
		/* kmalloc_reserve() rounds up (the truesize) in 7.0 as well. */
		size = kmalloc_size_roundup(size);
		cls = nb_arr_class(size);
		if (unlikely(cls >= NB_ARR_CLASSES))
			return kmalloc_node_track_caller(size, NB_HEAD_GFP,
							 NUMA_NO_NODE);
	}
	c = nb_arr_lock();
	if (unlikely(!c))
		return nb_arr_refill(cls, true);
	a = &c->cls[cls];
	if (unlikely(!a->nr)) {
		nb_arr_unlock();
		return nb_arr_refill(cls, false);
	}
	obj = a->objs[--a->nr];
	nb_arr_unlock();
	return obj;
}

/*
 * The array of this CPU is full: its older half goes back to the slab in
 * one batch, outside the mark, which the caller holds and this releases;
 * @p takes the first free place.
 */
static noinline void nb_arr_flush(struct nb_arr *a, unsigned int cls, void *p)
{
	void *objs[NB_ARR_MAX / 2];
	unsigned int n = a->cap / 2;

	memcpy(objs, a->objs, n * sizeof(*objs));
	a->nr -= n;
	memmove(a->objs, a->objs + n, a->nr * sizeof(*objs));
	a->objs[a->nr++] = p;
	nb_arr_unlock();
	kmem_cache_free_bulk(nb_arr_cache[cls], n, objs);
}

static __always_inline void nb_arr_free(void *p, unsigned int size)
{
	unsigned int cls = nb_arr_class(size);
	struct nb_arr_cpu *c;
	struct folio *folio;
	struct nb_arr *a;

	if (unlikely(cls >= NB_ARR_CLASSES)) {
		kfree(p);
		return;
	}
	/*
	 * 7.0's kfree() and kmem_cache_free() read the object's slab before
	 * free_to_pcs(): its cache, its node and whether it came from the
	 * reserves (slab_test_pfmemalloc(), PG_active of a slab folio).
	 * Objects of another node or of the reserves go back to the slab.
	 */
	folio = virt_to_folio(p);
	if (unlikely(folio_test_active(folio) ||
		     (IS_ENABLED(CONFIG_NUMA) && folio_nid(folio) != numa_mem_id()))) {
		kfree(p);
		return;
	}
	c = nb_arr_lock();
	if (unlikely(!c)) {
		kfree(p);
		return;
	}
	a = &c->cls[cls];
	if (unlikely(a->nr == a->cap)) {
		nb_arr_flush(a, cls, p);
		return;
	}
	a->objs[a->nr++] = p;
	nb_arr_unlock();
}

/* The classes' caches and capacities, before the first run. */
static void nb_arr_setup(void)
{
	unsigned int cls, cpu;

	nb_arr_cache[0] = net_hotdata.skb_small_head_cache;
	for (cls = 1; cls < NB_ARR_CLASSES; cls++)
		nb_arr_cache[cls] = kmalloc_caches[KMALLOC_NORMAL]
					[__kmalloc_index(512 << cls, false)];
	for_each_possible_cpu(cpu)
		for (cls = 0; cls < NB_ARR_CLASSES; cls++)
			per_cpu_ptr(&nb_arr_cpu, cpu)->cls[cls].cap =
				nb_arr_caps[cls];
}

static __always_inline void *nb_alloc(enum nb_kind kind, unsigned int size)
{
	switch (kind) {
	case NB_NTA:
		/* As skb_head_alloc(): the fast path inline. */
		return nta_head_alloc(size, NB_GFP);
	case NB_MAIN:
		/* kmalloc_reserve() for a head of @size = SKB_HEAD_ALIGN(len) */
		if (size <= nb_small_size)
			return kmem_cache_alloc_node(net_hotdata.skb_small_head_cache,
						     NB_HEAD_GFP, NUMA_NO_NODE);
		return kmalloc_node_track_caller(kmalloc_size_roundup(size),
						 NB_HEAD_GFP, NUMA_NO_NODE);
	default:
		return nb_arr_alloc(size);
	}
}

static __always_inline void nb_free(enum nb_kind kind, void *p,
				    unsigned int size)
{
	if (kind == NB_NTA)
		nta_head_free(p, size);	/* as skb_head_free(): trusted, inline */
	else if (kind == NB_MAIN)
		kfree(p);	/* as skb_head_free() for both head caches */
	else
		nb_arr_free(p, size);
}

/* One figure: how to run it, and what it measured. */
struct nb_job {
	enum nb_kind kind;
	const unsigned int *sizes;	/* NB_SEQ sizes, used in turn */
	unsigned int pairs;
	unsigned int depth;		/* FIFO depth, 0 for LIFO */
	unsigned int share;		/* cross-CPU: % freed on the consumer */
	unsigned int skb_len;		/* alloc_skb() rows: linear size */
	void **live;			/* depth objects */
	unsigned int *live_size;
	unsigned int fails;
	unsigned int win;		/* nb_win_id() of its window */
};

static u64 nb_lifo(struct nb_job *j)
{
	unsigned int i, size;
	u64 t0;
	void *p;

	t0 = ktime_get_ns();
	nb_win_start(j->win);
	for (i = 0; i < j->pairs; i++) {
		nb_win_pair();
		size = j->sizes[i % NB_SEQ];
		p = nb_alloc(j->kind, size);
		if (unlikely(!p)) {
			j->fails++;
			continue;
		}
		nb_free(j->kind, p, size);
	}
	nb_win_stop();
	return ktime_get_ns() - t0;
}

static u64 nb_fifo(struct nb_job *j)
{
	unsigned int i, slot = 0, size;
	u64 t0, ns;

	/* Fill the queue (not timed); sizes continue the same sequence. */
	for (i = 0; i < j->depth; i++) {
		j->live_size[i] = j->sizes[(i * 7) % NB_SEQ];
		j->live[i] = nb_alloc(j->kind, j->live_size[i]);
		if (!j->live[i])
			j->fails++;
		if (!(i & 1023))
			cond_resched();
	}

	t0 = ktime_get_ns();
	nb_win_start(j->win);
	for (i = 0; i < j->pairs; i++) {
		nb_win_pair();
		if (likely(j->live[slot]))
			nb_free(j->kind, j->live[slot], j->live_size[slot]);
		size = j->sizes[i % NB_SEQ];
		j->live[slot] = nb_alloc(j->kind, size);
		j->live_size[slot] = size;
		if (unlikely(!j->live[slot]))
			j->fails++;
		if (++slot == j->depth)
			slot = 0;
	}
	nb_win_stop();
	ns = ktime_get_ns() - t0;

	for (i = 0; i < j->depth; i++) {
		if (j->live[i])
			nb_free(j->kind, j->live[i], j->live_size[i]);
		if (!(i & 1023))
			cond_resched();
	}
	return ns;
}

/* alloc_skb() + consume_skb(); NB_NTA means net.core.nta on. */
static u64 nb_skb(struct nb_job *j)
{
	struct sk_buff *skb;
	unsigned int i;
	u64 t0;

	nta_set_enabled(j->kind == NB_NTA);
	t0 = ktime_get_ns();
	nb_win_start(j->win);
	for (i = 0; i < j->pairs; i++) {
		nb_win_pair();
		skb = alloc_skb(j->skb_len, NB_GFP);
		if (unlikely(!skb)) {
			j->fails++;
			continue;
		}
		consume_skb(skb);
	}
	nb_win_stop();
	return ktime_get_ns() - t0;
}

/* Producer/consumer across two CPUs through a single-producer ring. */
struct nb_xfer {
	struct nb_job *job;
	struct completion start;
	struct completion done[2];
	atomic_t ready;
	u64 ns;
	void *slot[NB_RING];
	unsigned int slot_size[NB_RING];
	unsigned int head ____cacheline_aligned_in_smp;	/* producer's */
	int prod_done;
	unsigned int tail ____cacheline_aligned_in_smp;	/* consumer's */
};

/*
 * The ring's spin-waits: cpu_relax(), unless bench_pause is 0.  Under
 * QEMU's multi-threaded TCG a PAUSE leaves the vCPU's loop and takes
 * QEMU's global lock, which the other vCPU needs for every interrupt and
 * IPI, so two waiting vCPUs slowed each other down more than either
 * allocator did (a guest RIP profile of xcpu rem100%: 60-80 % of samples
 * on the two PAUSEs, both CPUs at once) and rounds of one row differed up
 * to tenfold: scripts/nta-init sets 0 there.  On hardware, and under
 * single-threaded TCG (make bench-icount), where a vCPU that spins
 * without it runs out its time slice instead of yielding, PAUSE stays.
 */
static u32 nb_pause = 1;

static __always_inline void nb_spin(void)
{
	if (READ_ONCE(nb_pause))
		cpu_relax();
	else
		barrier();
}

static bool nb_remote(unsigned int i, unsigned int share)
{
	return (i * share) % 100 < share;
}

static int nb_producer(void *data)
{
	struct nb_xfer *x = data;
	struct nb_job *j = x->job;
	unsigned int i, head = 0, size;
	u64 t0;
	void *p;

	atomic_inc(&x->ready);
	wait_for_completion(&x->start);
	t0 = ktime_get_ns();
	/* The window spans both CPUs: the consumer's frees and spinning too. */
	nb_win_start(j->win);
	for (i = 0; i < j->pairs; i++) {
		nb_win_pair();
		size = j->sizes[i % NB_SEQ];
		p = nb_alloc(j->kind, size);
		if (unlikely(!p)) {
			j->fails++;
			continue;
		}
		if (!nb_remote(i, j->share)) {
			nb_free(j->kind, p, size);
			continue;
		}
		/* Acquire: the consumer is done with the slot we reuse. */
		while (head - smp_load_acquire(&x->tail) >= NB_RING)
			nb_spin();
		x->slot[head % NB_RING] = p;
		x->slot_size[head % NB_RING] = size;
		/* Release: publish the slot before the index. */
		smp_store_release(&x->head, ++head);
	}
	/* Release: the consumer sees every slot before it sees "done". */
	smp_store_release(&x->prod_done, 1);
	/*
	 * The pair is complete when its free is: wait for the consumer
	 * (acquire pairs with its release of @tail).
	 */
	while (smp_load_acquire(&x->tail) != head)
		nb_spin();
	nb_win_stop();
	x->ns = ktime_get_ns() - t0;
	complete(&x->done[0]);
	return 0;
}

static int nb_consumer(void *data)
{
	struct nb_xfer *x = data;
	struct nb_job *j = x->job;
	unsigned int head, tail = 0, i;
	int done;

	atomic_inc(&x->ready);
	wait_for_completion(&x->start);
	while (j->share) {
		/* Acquire: pairs with the producer's release of @head. */
		head = smp_load_acquire(&x->head);
		if (head == tail) {
			/* Acquire: pairs with the release of "done"... */
			done = smp_load_acquire(&x->prod_done);
			/* ...and nothing came in after it was set. */
			if (done && smp_load_acquire(&x->head) == tail)
				break;
			nb_spin();
			continue;
		}
		for (; tail != head; tail++) {
			nb_win_pair();
			i = tail % NB_RING;
			nb_free(j->kind, x->slot[i], x->slot_size[i]);
		}
		/* Release: the slots are free for the producer again. */
		smp_store_release(&x->tail, tail);
	}
	complete(&x->done[1]);
	return 0;
}

static unsigned int nb_cpu_a, nb_cpu_b;

static u64 nb_xcpu(struct nb_job *j)
{
	struct task_struct *t[2];
	struct nb_xfer *x;
	u64 ns = 0;

	x = kzalloc(sizeof(*x), GFP_KERNEL);
	if (!x)
		goto fail;
	x->job = j;
	init_completion(&x->start);
	init_completion(&x->done[0]);
	init_completion(&x->done[1]);
	t[0] = kthread_create_on_cpu(nb_producer, x, nb_cpu_a, "nta_bench_p/%u");
	if (IS_ERR(t[0]))
		goto fail;
	t[1] = kthread_create_on_cpu(nb_consumer, x, nb_cpu_b, "nta_bench_c/%u");
	if (IS_ERR(t[1])) {
		/* The producer has not run yet: let it run an empty job. */
		j->pairs = 0;
		wake_up_process(t[0]);
		complete_all(&x->start);
		wait_for_completion(&x->done[0]);
		goto fail;
	}
	wake_up_process(t[0]);
	wake_up_process(t[1]);
	while (atomic_read(&x->ready) < 2)
		usleep_range(1000, 2000);
	complete_all(&x->start);
	wait_for_completion(&x->done[0]);
	wait_for_completion(&x->done[1]);
	ns = x->ns;
	kfree(x);
	return ns;
fail:
	kfree(x);
	j->fails = j->pairs ?: 1;
	return 0;
}

enum nb_pattern { NB_LIFO, NB_FIFO, NB_XCPU, NB_SKB };

/*
 * test, size, then per contender median and range, ratios NTA/mainline and
 * NTA/array, Mop/s, grows
 */
#define NB_COLS "%-9s %-11s %7s %-13s %7s %-13s %7s %-13s %5s %5s %6s %6s "

struct nb_row {
	const char *test;
	char arg[20];
	enum nb_pattern pattern;
	const unsigned int *sizes;
	unsigned int depth, share, skb_len;
	unsigned int kinds;		/* contenders that run: NB_KINDS or 2 */
	unsigned int seq;		/* its place in the table, from 0 */
	u64 ns10[NB_KINDS][NB_MAX_ROUNDS];	/* 0.1 ns per pair */
	unsigned int fails[NB_KINDS];
	u64 nta_grows;			/* blocks NTA grew in the counted rounds */
	u64 nta_remote_frees;		/* and its remote frees... */
	u64 nta_remote_atomics;		/* ...and the atomics they cost */
};

/*
 * Atomic operations per remote free in NTA's counted rounds, as NTA counts
 * them where it makes them (remote_atomics: the freer's and the owner's),
 * in hundredths.
 */
static void nb_print_atomics(struct seq_buf *s, const struct nb_row *row)
{
	u64 per100;

	if (!row->nta_remote_frees)
		return;
	per100 = div64_u64(row->nta_remote_atomics * 100,
			   row->nta_remote_frees);
	seq_buf_printf(s,
		       "          nta: %llu.%02llu atomics per remote free (%llu remote frees)\n",
		       div_u64(per100, 100), per100 % 100,
		       row->nta_remote_frees);
}

static int nb_cmp_u64(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static u64 nb_run_one(struct nb_row *row, enum nb_kind kind,
		      unsigned int slot, unsigned int pairs, void **live,
		      unsigned int *live_size)
{
	struct nb_job j = {
		.kind = kind, .sizes = row->sizes, .pairs = pairs,
		.depth = row->depth, .share = row->share,
		.skb_len = row->skb_len, .live = live, .live_size = live_size,
		.win = nb_win_id(row->seq, slot, kind),
	};
	struct nta_stats st0, st1;
	u64 ns;

	nta_get_stats(&st0, -1);
	switch (row->pattern) {
	case NB_LIFO:
		ns = nb_lifo(&j);
		break;
	case NB_FIFO:
		ns = nb_fifo(&j);
		break;
	case NB_XCPU:
		ns = nb_xcpu(&j);
		break;
	default:
		ns = nb_skb(&j);
		break;
	}
	nta_get_stats(&st1, -1);
	if (kind == NB_NTA) {
		row->nta_grows += st1.grows - st0.grows;
		row->nta_remote_frees += st1.remote_frees - st0.remote_frees;
		row->nta_remote_atomics += st1.remote_atomics -
					   st0.remote_atomics;
	}
	row->fails[kind] += j.fails;
	cond_resched();
	return div_u64(ns * 10, pairs);
}

static void nb_run_row(struct nb_row *row, unsigned int pairs, void **live,
		       unsigned int *live_size)
{
	unsigned int r, k;

	/* Warm-up: caches, pools and slabs settle; not counted. */
	for (k = 0; k < row->kinds; k++)
		nb_run_one(row, k, 0, pairs, live, live_size);
	memset(row->fails, 0, sizeof(row->fails));
	row->nta_grows = 0;
	row->nta_remote_frees = 0;
	row->nta_remote_atomics = 0;
	for (r = 0; r < nb_rounds; r++) {
		for (k = 0; k < row->kinds; k++) {
			enum nb_kind kind = (r + k) % row->kinds;

			row->ns10[kind][r] = nb_run_one(row, kind, r + 1, pairs,
							live, live_size);
		}
	}
	for (k = 0; k < row->kinds; k++)
		sort(row->ns10[k], nb_rounds, sizeof(u64), nb_cmp_u64, NULL);
}

static u64 nb_median(const struct nb_row *row, enum nb_kind k)
{
	return row->ns10[k][nb_rounds / 2];
}

/* "12.3" from tenths */
static void nb_fmt10(char *buf, size_t len, u64 v10)
{
	snprintf(buf, len, "%llu.%llu", v10 / 10, v10 % 10);
}

/* "0.87", the ratio of the medians of contenders @a and @b, or "-" */
static void nb_fmt_ratio(char *buf, size_t len, const struct nb_row *row,
			 enum nb_kind a, enum nb_kind b)
{
	u64 x = nb_median(row, a), y = nb_median(row, b), r;

	if (b >= row->kinds || row->fails[a] || row->fails[b] || !y) {
		strscpy(buf, "-", len);
		return;
	}
	r = div64_u64(x * 100 + y / 2, y);
	snprintf(buf, len, "%llu.%02llu", r / 100, r % 100);
}

static void nb_print_row(struct seq_buf *s, const struct nb_row *row)
{
	char med[NB_KINDS][24], range[NB_KINDS][48], lo[24], hi[24];
	char ratio[2][24], mops[2][24] = { "-", "-" };
	unsigned int k;
	u64 b;

	for (k = 0; k < NB_KINDS; k++) {
		strscpy(med[k], "-", sizeof(med[k]));
		range[k][0] = '\0';
		if (k >= row->kinds)
			continue;
		if (row->fails[k]) {
			snprintf(med[k], sizeof(med[k]), "fail%u", row->fails[k]);
			continue;
		}
		nb_fmt10(med[k], sizeof(med[k]), nb_median(row, k));
		nb_fmt10(lo, sizeof(lo), row->ns10[k][0]);
		nb_fmt10(hi, sizeof(hi), row->ns10[k][nb_rounds - 1]);
		snprintf(range[k], sizeof(range[k]), "%s-%s", lo, hi);
	}
	nb_fmt_ratio(ratio[0], sizeof(ratio[0]), row, NB_NTA, NB_MAIN);
	nb_fmt_ratio(ratio[1], sizeof(ratio[1]), row, NB_NTA, NB_ARRAY);
	for (k = 0; k < 2; k++) {
		b = nb_median(row, k);
		/* Mops/s = 1000 / ns = 10000 / ns10 */
		if (b && !row->fails[k])
			snprintf(mops[k], sizeof(mops[k]), "%llu.%02llu",
				 div64_u64(1000000, b) / 100,
				 div64_u64(1000000, b) % 100);
	}
	seq_buf_printf(s, NB_COLS "%6llu\n",
		       row->test, row->arg, med[0], range[0], med[1], range[1],
		       med[2], range[2], ratio[0], ratio[1], mops[0], mops[1],
		       row->nta_grows);
}

static u64 nb_floor(unsigned int kind, unsigned int n, unsigned int round)
{
	unsigned long flags;
	unsigned int i;
	u64 t0;

	t0 = ktime_get_ns();
	nb_win_start(nb_win_id(kind, round + 1, NB_WIN_FLOOR));
	for (i = 0; i < n; i++) {
		nb_win_pair();
		switch (kind) {
		case 0:
			barrier();
			break;
		case 1:
			this_cpu_inc(nb_counter);
			break;
		default:
			local_irq_save(flags);
			this_cpu_inc(nb_counter);
			local_irq_restore(flags);
			break;
		}
	}
	nb_win_stop();
	return div_u64((ktime_get_ns() - t0) * 10, n);
}

static void nb_print_floor(struct seq_buf *s, unsigned int pairs)
{
	static const char * const names[] = {
		"empty loop", "this_cpu_inc", "irq save+inc+restore",
	};
	u64 v[NB_MAX_ROUNDS];
	unsigned int k, r;
	char med[24];

	seq_buf_puts(s, "floor (ns per iteration, median):");
	for (k = 0; k < ARRAY_SIZE(names); k++) {
		for (r = 0; r < nb_rounds; r++)
			v[r] = nb_floor(k, pairs * 4, r);
		sort(v, nb_rounds, sizeof(u64), nb_cmp_u64, NULL);
		nb_fmt10(med, sizeof(med), v[nb_rounds / 2]);
		seq_buf_printf(s, " %s %s;", names[k], med);
	}
	seq_buf_putc(s, '\n');
}

/* Head sizes of a plausible skb mix: see the header line it prints. */
static unsigned int nb_mixed_size(struct rnd_state *rnd)
{
	u32 x = prandom_u32_state(rnd) % 100;

	if (x < 30)		/* ACKs and other control packets */
		return SKB_HEAD_ALIGN(MAX_TCP_HEADER);
	if (x < 40)		/* small datagrams */
		return SKB_HEAD_ALIGN(256);
	if (x < 70)		/* MTU frames copied or built linear */
		return SKB_HEAD_ALIGN(1500 + NET_SKB_PAD + NET_IP_ALIGN);
	if (x < 80)		/* UDP of any size up to 2 KiB */
		return SKB_HEAD_ALIGN(64 + prandom_u32_state(rnd) % 1984);
	if (x < 90)		/* large linear transmits */
		return SKB_HEAD_ALIGN(4096);
	return SKB_HEAD_ALIGN(9000 + NET_SKB_PAD + NET_IP_ALIGN);	/* jumbo */
}

static void nb_print_header(struct seq_buf *s, unsigned int pairs)
{
	seq_buf_printf(s,
		       "NTA microbenchmark: ns per alloc+free pair, median of %u rounds (min-max), contenders interleaved, %u pairs per figure (bench_scale %u)\n",
		       nb_rounds, pairs, nb_scale);
	seq_buf_printf(s, "kernel %s %s, %u CPUs online, HZ %d, preempt %s\n",
		       init_utsname()->release, init_utsname()->machine,
		       num_online_cpus(), HZ,
		       preempt_model_none() ? "none" :
		       preempt_model_voluntary() ? "voluntary" : "full");
	seq_buf_printf(s,
		       "slab: SLUB, SLUB_TINY=%c SLUB_CPU_PARTIAL=%c SLAB_FREELIST_HARDENED=%c SLAB_FREELIST_RANDOM=%c RANDOM_KMALLOC_CACHES=%c SLUB_DEBUG_ON=%c kasan=%c; init_on_alloc=%d init_on_free=%d\n",
		       IS_ENABLED(CONFIG_SLUB_TINY) ? 'y' : 'n',
		       IS_ENABLED(CONFIG_SLUB_CPU_PARTIAL) ? 'y' : 'n',
		       IS_ENABLED(CONFIG_SLAB_FREELIST_HARDENED) ? 'y' : 'n',
		       IS_ENABLED(CONFIG_SLAB_FREELIST_RANDOM) ? 'y' : 'n',
		       IS_ENABLED(CONFIG_RANDOM_KMALLOC_CACHES) ? 'y' : 'n',
		       IS_ENABLED(CONFIG_SLUB_DEBUG_ON) ? 'y' : 'n',
		       IS_ENABLED(CONFIG_KASAN) ? 'y' : 'n',
		       want_init_on_alloc(GFP_KERNEL), want_init_on_free());
	if (IS_ENABLED(CONFIG_SLUB_TINY))
		seq_buf_puts(s,
			     "note: SLUB_TINY has no per-CPU caches; this mainline baseline is not what users run\n");
	seq_buf_printf(s,
		       "nta: unit %u B, block %lu KiB, largest object %u B, reserve %u / cap %u blocks per CPU, NTA_DEBUG=%c NTA_KMALLOC_MODEL=%c, net.core.nta %s\n",
		       NTA_UNIT, NTA_BLOCK_SIZE >> 10, nta_max_size(),
		       nta_reserve_blocks, nta_max_blocks,
		       IS_ENABLED(CONFIG_NTA_DEBUG) ? 'y' : 'n',
		       IS_ENABLED(CONFIG_NTA_KMALLOC_MODEL) ? 'y' : 'n',
		       nta_enabled() ? "on" : "off");
	seq_buf_printf(s,
		       "mainline head path: skb_small_head_cache (%u B) up to %u B, else kmalloc(kmalloc_size_roundup()); sizes are head sizes, SKB_HEAD_ALIGN() included\n",
		       nb_small_size, nb_small_size);
	seq_buf_printf(s,
		       "array: that path behind per-CPU arrays as 7.0's sheaves (no spare, no barn): %u, %u, %u, %u, %u objects (skb_small_head_cache, kmalloc-1k..8k), refilled and flushed half at a time; above 8 KiB as mainline; no alloc_skb rows\n",
		       nb_arr_caps[0], nb_arr_caps[1], nb_arr_caps[2],
		       nb_arr_caps[3], nb_arr_caps[4]);
	seq_buf_printf(s,
		       "mixed: 30%% %lu (TCP ACK), 10%% %lu (small), 30%% %lu (MTU), 10%% %lu..%lu (UDP), 10%% %lu (4 KiB), 10%% %lu (jumbo)\n",
		       SKB_HEAD_ALIGN(MAX_TCP_HEADER), SKB_HEAD_ALIGN(256),
		       SKB_HEAD_ALIGN(1500 + NET_SKB_PAD + NET_IP_ALIGN),
		       SKB_HEAD_ALIGN(64), SKB_HEAD_ALIGN(2047),
		       SKB_HEAD_ALIGN(4096),
		       SKB_HEAD_ALIGN(9000 + NET_SKB_PAD + NET_IP_ALIGN));
}

struct nb_ctx {
	struct seq_buf s;
	struct completion done;
};

/*
 * How deep a FIFO queue of @want mixed heads may be: its objects (at
 * their kmalloc size, which is at least NTA's) and its slots must fit in
 * @budget bytes.  Says so in the table when it is less than @want.
 */
static unsigned int nb_live_depth(struct seq_buf *s, const unsigned int *mixed,
				  unsigned int want, unsigned long budget)
{
	unsigned long per = 0, depth;
	unsigned int i;

	for (i = 0; i < NB_SEQ; i++)
		per += kmalloc_size_roundup(mixed[i]);
	per = per / NB_SEQ + sizeof(void *) + sizeof(unsigned int);
	depth = budget / per;
	if (depth >= want)
		return want;
	seq_buf_printf(s,
		       "note: fifo mix live%u would hold %lu MiB, more than the %lu MiB this run may use (1/%u of available memory); running live%lu\n",
		       want, want * per >> 20, budget >> 20,
		       IS_ENABLED(CONFIG_KASAN) ? NB_MEM_SHARE_KASAN : NB_MEM_SHARE,
		       depth);
	return depth;
}

static const unsigned int nb_fixed[] = { 64, 256, 640, 1024, 1600, 2048, 4096, 9000 };

static int nb_main(void *data)
{
	static const unsigned int live_depths[] = { 10, 1000, NB_MAX_LIVE };
	static const unsigned int shares[] = { 0, 50, 100 };
	static const unsigned int skb_lens[] = { 128, 1500, 9000 };
	unsigned int depths[ARRAY_SIZE(live_depths)], max_depth = 64;
	unsigned int pairs = NB_PAIRS * max_t(u32, nb_scale, 1);
	unsigned int saved_max = nta_max_blocks, *live_size = NULL;
	unsigned long budget;
	bool key_was = static_key_enabled(&nta_enabled_key);
	unsigned int *fixed = NULL, *mixed = NULL, i, k;
	unsigned int seq = 0;		/* rows run, for nb_win_id() */
	struct nb_ctx *ctx = data;
	struct seq_buf *s = &ctx->s;
	struct nta_stats st0, st1;
	struct rnd_state rnd;
	struct nb_row *row;
	void **live = NULL;

	row = kzalloc(sizeof(*row), GFP_KERNEL);
	fixed = kvmalloc_array(NB_SEQ, sizeof(*fixed), GFP_KERNEL);
	mixed = kvmalloc_array(NB_SEQ, sizeof(*mixed), GFP_KERNEL);
	if (!row || !fixed || !mixed) {
		seq_buf_puts(s, "nta_bench: out of memory\n");
		goto out;
	}
	prandom_seed_state(&rnd, 2006);
	for (i = 0; i < NB_SEQ; i++)
		mixed[i] = nb_mixed_size(&rnd);

	nta_drain_all();
	nb_print_header(s, pairs);
	if (nb_selected != BIT(NB_TESTS) - 1) {
		seq_buf_puts(s, "tests run (others not selected):");
		for_each_set_bit(i, &nb_selected, NB_TESTS)
			seq_buf_printf(s, " %s", nb_tests[i]);
		seq_buf_putc(s, '\n');
	}
	/* What the live sets may take, of what is available now. */
	budget = (unsigned long)si_mem_available() << PAGE_SHIFT;
	budget /= IS_ENABLED(CONFIG_KASAN) ? NB_MEM_SHARE_KASAN : NB_MEM_SHARE;
	for (i = 0; nb_wants(NB_T_FIFO) && i < ARRAY_SIZE(live_depths); i++) {
		depths[i] = nb_live_depth(s, mixed, live_depths[i], budget);
		max_depth = max(max_depth, depths[i]);
	}
	live = kvmalloc_array(max_depth, sizeof(*live), GFP_KERNEL);
	live_size = kvmalloc_array(max_depth, sizeof(*live_size), GFP_KERNEL);
	if (!live || !live_size) {
		seq_buf_puts(s, "nta_bench: out of memory\n");
		goto out;
	}
	nta_get_stats(&st0, -1);
	/* Room for the live sets in NTA's pool; restored at the end. */
	WRITE_ONCE(nta_max_blocks,
		   max_t(unsigned long, saved_max,
			 min(65536UL, 2 * budget / NTA_BLOCK_SIZE)));
	nb_print_floor(s, pairs);
	seq_buf_printf(s, NB_COLS "%6s\n",
		       "test", "size", "nta", "(min-max)", "mainl.", "(min-max)",
		       "array", "(min-max)", "ratio", "ratio", "Mop/s", "Mop/s",
		       "nta");
	seq_buf_printf(s, NB_COLS "%6s\n",
		       "", "", "ns", "", "ns", "", "ns", "", "nta/m", "nta/a",
		       "nta", "mainl.", "grows");

	for (i = 0; i <= ARRAY_SIZE(nb_fixed); i++) {
		const unsigned int *sizes = mixed;

		if (i < ARRAY_SIZE(nb_fixed)) {
			for (k = 0; k < NB_SEQ; k++)
				fixed[k] = nb_fixed[i];
			sizes = fixed;
		}
		for (k = 0; k < 2; k++) {
			if (!nb_wants(k ? NB_T_FIFO64 : NB_T_LIFO))
				continue;
			memset(row, 0, sizeof(*row));
			row->test = nb_tests[k ? NB_T_FIFO64 : NB_T_LIFO];
			row->pattern = k ? NB_FIFO : NB_LIFO;
			row->depth = 64;
			row->sizes = sizes;
			row->kinds = NB_KINDS;
			row->seq = seq++;
			if (sizes == fixed)
				snprintf(row->arg, sizeof(row->arg), "%u", nb_fixed[i]);
			else
				strscpy(row->arg, "mixed", sizeof(row->arg));
			nb_run_row(row, pairs, live, live_size);
			nb_print_row(s, row);
		}
	}

	for (i = 0; nb_wants(NB_T_FIFO) && i < ARRAY_SIZE(live_depths); i++) {
		if (!depths[i] || (i && depths[i] <= depths[i - 1])) {
			seq_buf_printf(s, "fifo      mix live%u skipped: not enough memory\n",
				       live_depths[i]);
			continue;
		}
		memset(row, 0, sizeof(*row));
		row->test = "fifo";
		row->pattern = NB_FIFO;
		row->depth = depths[i];
		row->sizes = mixed;
		row->kinds = NB_KINDS;
		row->seq = seq++;
		snprintf(row->arg, sizeof(row->arg), "mix live%u", depths[i]);
		nb_run_row(row, pairs, live, live_size);
		nb_print_row(s, row);
	}

	if (nb_wants(NB_T_XCPU) && num_online_cpus() < 2) {
		seq_buf_puts(s, "xcpu      skipped: needs two online CPUs\n");
	} else if (nb_wants(NB_T_XCPU)) {
		nb_cpu_a = cpumask_first(cpu_online_mask);
		nb_cpu_b = cpumask_next(nb_cpu_a, cpu_online_mask);
		for (i = 0; i < ARRAY_SIZE(shares); i++) {
			memset(row, 0, sizeof(*row));
			row->test = "xcpu";
			row->pattern = NB_XCPU;
			row->share = shares[i];
			row->sizes = mixed;
			row->kinds = NB_KINDS;
			row->seq = seq++;
			snprintf(row->arg, sizeof(row->arg), "mix rem%u%%",
				 shares[i]);
			nb_run_row(row, pairs, live, live_size);
			nb_print_row(s, row);
			nb_print_atomics(s, row);
		}
	}

	/* Whole skbs: "nta" is net.core.nta on, "mainline" is off. */
	for (i = 0; nb_wants(NB_T_SKB) && i < ARRAY_SIZE(skb_lens); i++) {
		memset(row, 0, sizeof(*row));
		row->test = "alloc_skb";
		row->pattern = NB_SKB;
		row->skb_len = skb_lens[i];
		row->sizes = mixed;
		row->kinds = 2;
		row->seq = seq++;
		snprintf(row->arg, sizeof(row->arg), "len %u", skb_lens[i]);
		nb_run_row(row, pairs, live, live_size);
		nb_print_row(s, row);
	}
	nta_set_enabled(key_was);

	WRITE_ONCE(nta_max_blocks, saved_max);
	nta_drain_all();
	nta_get_stats(&st1, -1);
	seq_buf_printf(s,
		       "nta during the run: %llu grows, %llu returns, %llu remote frees, %llu kicks, %llu failures, %llu bad frees, %lld objects left live; blocks %llu now\n",
		       st1.grows - st0.grows, st1.returns - st0.returns,
		       st1.remote_frees - st0.remote_frees,
		       st1.kicks - st0.kicks, st1.failures - st0.failures,
		       st1.bad_frees - st0.bad_frees,
		       st1.inuse_objects - st0.inuse_objects, st1.blocks);
out:
	kvfree(live_size);
	kvfree(live);
	kvfree(mixed);
	kvfree(fixed);
	kfree(row);
	complete(&ctx->done);
	return 0;
}

struct nb_out {
	size_t len;
	char buf[];
};

/* The table of the last run, under nb_mutex; NULL before the first. */
static struct nb_out *nb_last;

static int nb_run(void)
{
	struct task_struct *t;
	struct nb_out *out;
	struct nb_ctx ctx;

	if (!READ_ONCE(nta_ready))
		return -ENODEV;
	out = kvzalloc(sizeof(*out) + NB_OUT_SIZE, GFP_KERNEL);
	if (!out)
		return -ENOMEM;
	seq_buf_init(&ctx.s, out->buf, NB_OUT_SIZE);
	init_completion(&ctx.done);
	nb_small_size = kmem_cache_size(net_hotdata.skb_small_head_cache);
	nb_arr_setup();
	nb_rounds = clamp_t(u32, nb_rounds | 1, 1, NB_MAX_ROUNDS);

	/* Run pinned on the first online CPU, in a kthread of our own. */
	t = kthread_create_on_cpu(nb_main, &ctx, cpumask_first(cpu_online_mask),
				  "nta_bench/%u");
	if (IS_ERR(t)) {
		kvfree(out);
		return PTR_ERR(t);
	}
	wake_up_process(t);
	/* Wake up now and then: a long run must not look like a hung task. */
	while (!wait_for_completion_timeout(&ctx.done, HZ))
		;

	out->len = seq_buf_used(&ctx.s);
	kvfree(nb_last);
	nb_last = out;
	return 0;
}

/*
 * "run" (every test) or "run NAME,..." (those tests): the tests of @cmd as
 * a mask of BIT(enum nb_test) in @sel; -EINVAL for anything else.
 */
static int nb_parse(char *cmd, unsigned long *sel)
{
	char *name;
	int i;

	cmd = strim(cmd);
	if (strncmp(cmd, "run", 3) || (cmd[3] && !isspace(cmd[3])))
		return -EINVAL;
	cmd = skip_spaces(cmd + 3);
	if (!*cmd) {
		*sel = BIT(NB_TESTS) - 1;
		return 0;
	}
	*sel = 0;
	while ((name = strsep(&cmd, ","))) {
		i = match_string(nb_tests, NB_TESTS, name);
		if (i < 0)
			return -EINVAL;
		*sel |= BIT(i);
	}
	return 0;
}

/* "run [NAME,...]": run now; the write returns when the run is over. */
static ssize_t nb_write(struct file *file, const char __user *ubuf,
			size_t count, loff_t *ppos)
{
	unsigned long sel;
	char cmd[64];
	int ret;

	if (count >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, count))
		return -EFAULT;
	cmd[count] = '\0';
	ret = nb_parse(cmd, &sel);
	if (ret)
		return ret;
	if (!mutex_trylock(&nb_mutex))
		return -EBUSY;
	nb_selected = sel;
	ret = nb_run();
	mutex_unlock(&nb_mutex);
	return ret ?: count;
}

static const char nb_none[] =
	"no run yet: echo run > /sys/kernel/debug/nta/bench, then read it\n";

static ssize_t nb_read(struct file *file, char __user *ubuf, size_t count,
		       loff_t *ppos)
{
	ssize_t ret;

	if (mutex_lock_interruptible(&nb_mutex))
		return -EINTR;
	if (nb_last)
		ret = simple_read_from_buffer(ubuf, count, ppos, nb_last->buf,
					      nb_last->len);
	else
		ret = simple_read_from_buffer(ubuf, count, ppos, nb_none,
					      sizeof(nb_none) - 1);
	mutex_unlock(&nb_mutex);
	return ret;
}

static const struct file_operations nb_fops = {
	.open		= simple_open,
	.read		= nb_read,
	.write		= nb_write,
	.llseek		= default_llseek,
};

/*
 * nta/bench_blocks: a census of each CPU's blocks, taken on that CPU under
 * its lock, one line per CPU: blocks, wholly free ones, blocks with an
 * object that has its length byte (live, or freed by another CPU into a
 * batch, which the block cannot tell apart), those objects and their
 * units, pending bits, and the units used but not by such an object or
 * the header (binned objects); then the objects in the CPU's open batches
 * (of any owner) and in the batches published to it that it has not
 * drained yet.  It shows what holds the blocks that the gauges count
 * neither live nor free.
 */
struct nb_census {
	unsigned long blocks, whole, objblocks, objs, objunits, pending;
	unsigned long opened, inbox;
	long binunits;
};

static long nb_census_cpu(void *arg)
{
	struct nb_census *r = arg;
	const struct nta_block *blk;
	struct llist_node *node;
	unsigned long flags;
	struct nta_cpu *c;
	unsigned int u;
	bool has_mark;

	c = nta_slow_lock(&flags, &has_mark);
	/* Only this CPU takes from its inbox; others only push in front. */
	for (node = READ_ONCE(c->batch_inbox.first); node; node = node->next)
		r->inbox += llist_entry(node, struct nta_batch, node)->nr;
	for (u = 0; u < NTA_BATCH_SLOTS; u++)
		if (c->batch_open[u])
			r->opened += c->batch_open[u]->nr;
	list_for_each_entry(blk, &c->pool.blocks, link) {
		unsigned int objs = 0, units = 0;

		for (u = NTA_HDR_UNITS; u < NTA_BLOCK_UNITS; u++) {
			unsigned int cls = nta_cls(blk, u);

			objs += !!cls;
			units += cls;
		}
		r->blocks++;
		r->whole += blk->free_units == NTA_DATA_UNITS;
		r->objblocks += !!objs;
		r->objs += objs;
		r->objunits += units;
		/* Set by other CPUs with atomics: a snapshot is enough. */
		r->pending += data_race(bitmap_weight(blk->pending,
						      NTA_BLOCK_UNITS));
		r->binunits += (long)bitmap_weight(blk->used, NTA_BLOCK_UNITS) -
			       NTA_HDR_UNITS - units;
	}
	nta_slow_unlock(c, has_mark, flags);
	return 0;
}

static int nb_census_show(struct seq_file *m, void *v)
{
	unsigned int cpu;

	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct nb_census r = {};

		work_on_cpu(cpu, nb_census_cpu, &r);
		seq_printf(m, "cpu%u blocks %lu whole %lu objblocks %lu objs %lu",
			   cpu, r.blocks, r.whole, r.objblocks, r.objs);
		seq_printf(m, " objunits %lu pending %lu binunits %ld",
			   r.objunits, r.pending, r.binunits);
		seq_printf(m, " opened %lu inbox %lu\n", r.opened, r.inbox);
	}
	cpus_read_unlock();
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(nb_census);

static int __init nta_bench_init(void)
{
	struct dentry *dir, *found;

	/* nta_ctl.c made nta/ at late_initcall; make it if it did not. */
	found = debugfs_lookup("nta", NULL);
	dir = found ?: debugfs_create_dir("nta", NULL);
	if (IS_ERR(dir))
		return 0;
	debugfs_create_file("bench", 0600, dir, NULL, &nb_fops);
	debugfs_create_file("bench_blocks", 0400, dir, NULL, &nb_census_fops);
	debugfs_create_u32("bench_scale", 0600, dir, &nb_scale);
	debugfs_create_u32("bench_rounds", 0600, dir, &nb_rounds);
	debugfs_create_u32("bench_pause", 0600, dir, &nb_pause);
	dput(found);
	return 0;
}
late_initcall_sync(nta_bench_init);
