// SPDX-License-Identifier: GPL-2.0
/*
 * NTA harness runtime: what the shims need at run time (printk, WARN, BUG),
 * the embedder that nta_core.c expects (CPUs with pools, blocks from
 * aligned_alloc(), nta_report_poison()), h_check_pool() around the core's
 * nta_pool_check(), local checks after one operation, and pool snapshots.
 * See harness.h for the model.
 */
#include <sched.h>
#include <stdarg.h>
#include <string.h>
#include <time.h>

#include "harness.h"

/* ---- shim runtime ---- */

unsigned long shim_printk_count;
int shim_printk_quiet;
unsigned long shim_warn_count;

int printk(const char *fmt, ...)
{
	char buf[512];
	const char *msg = buf;
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	__atomic_fetch_add(&shim_printk_count, 1, __ATOMIC_RELAXED);
	if (buf[0] == '<' && buf[1] && buf[2] == '>')
		msg += 3;
	if (!shim_printk_quiet)
		printf("# kernel: %s%s", msg,
		       n > 0 && buf[strlen(buf) - 1] == '\n' ? "" : "\n");
	return n;
}

void shim_warn(const char *file, int line, const char *cond)
{
	__atomic_fetch_add(&shim_warn_count, 1, __ATOMIC_RELAXED);
	printf("# kernel: WARNING at %s:%d: %s\n", file, line, cond);
}

void shim_bug(const char *file, int line, const char *cond)
{
	printf("# kernel: BUG at %s:%d: %s\n", file, line, cond);
	fflush(stdout);
	abort();
}

/* ---- framework ---- */

unsigned int t_failed;

void t_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	if (__atomic_fetch_add(&t_failed, 1, __ATOMIC_RELAXED) >= 10)
		return;
	printf("# FAIL %s:%d: ", file, line);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

void t_note(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

unsigned long env_ulong(const char *name, unsigned long def)
{
	const char *s = getenv(name);
	char *end;
	unsigned long v;

	if (!s || !*s)
		return def;
	v = strtoul(s, &end, 0);
	return *end ? def : v;
}

double now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

void rng_seed(struct rng *r, u64 seed)
{
	int i;

	/* splitmix64, so that small seeds still give well mixed state */
	for (i = 0; i < 2; i++) {
		u64 z = (seed += 0x9e3779b97f4a7c15ULL);

		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
		r->s[i] = z ^ (z >> 31);
	}
}

/*
 * skb heads: SKB_DATA_ALIGN(NET_SKB_PAD + frame) + SKB_DATA_ALIGN(320)
 * for a pure ACK, a small request, 1 KiB, a 1500 MTU frame with and
 * without headroom, 2 KiB and 4 KiB buffers, and a 9000 MTU jumbo frame.
 */
const unsigned int skb_head_sizes[] = {
	512, 640, 1024, 1664, 1920, 2368, 4416, 9320,
};
const unsigned int nr_skb_head_sizes = ARRAY_SIZE(skb_head_sizes);

unsigned int rng_skb_size(struct rng *r)
{
	return skb_head_sizes[rng_range(r, 0, nr_skb_head_sizes - 1)];
}

/* ---- embedder ---- */

struct hcpu h_cpus[H_MAX_CPUS];
unsigned long nta_link_secret;
atomic_t h_blocks_live;
atomic_t h_poison_reports;
const void *h_last_poison_chunk, *h_last_poison_bad;
unsigned int h_last_poison_units;
void (*h_block_hook)(struct nta_block *blk, bool added);

void nta_report_poison(const struct nta_pool *pool, const void *chunk,
		       unsigned int units, const void *bad)
{
	atomic_inc(&h_poison_reports);
	h_last_poison_chunk = chunk;
	h_last_poison_bad = bad;
	h_last_poison_units = units;
	printf("# nta_report_poison: pool %u chunk %p units %u: byte +%ld is %#x\n",
	       pool->id, chunk, units, (long)((const char *)bad - (const char *)chunk),
	       *(const unsigned char *)bad);
}

atomic_t h_bad_drain_reports;
const struct nta_pool *h_last_bad_pool;
const void *h_last_bad_ptr;
unsigned int h_last_bad_size;
enum nta_bad_free h_last_bad_why;
bool h_quiet_reports;

void nta_report_bad_free(const struct nta_pool *pool, const void *ptr,
			 unsigned int size, enum nta_bad_free why)
{
	/* Meaningful in single-thread tests; atomic so that owners may race. */
	__atomic_store_n(&h_last_bad_pool, pool, __ATOMIC_RELAXED);
	__atomic_store_n(&h_last_bad_ptr, ptr, __ATOMIC_RELAXED);
	__atomic_store_n(&h_last_bad_size, size, __ATOMIC_RELAXED);
	__atomic_store_n(&h_last_bad_why, why, __ATOMIC_RELAXED);
	atomic_inc(&h_bad_drain_reports);
	if (!__atomic_load_n(&h_quiet_reports, __ATOMIC_RELAXED))
		printf("# nta_report_bad_free: pool %u ptr %p size %u: %s\n",
	       pool ? pool->id : 0, ptr, size, nta_bad_free_reason(why));
}

bool h_grow(struct hcpu *c)
{
	void *mem;

	if (c->max_blocks && c->pool.nr_blocks >= c->max_blocks)
		return false;
	mem = aligned_alloc(NTA_BLOCK_SIZE, NTA_BLOCK_SIZE);
	if (!mem)
		return false;
	nta_pool_add_block(&c->pool, mem);
	atomic_inc(&h_blocks_live);
	c->grows++;
	if (h_block_hook)
		h_block_hook(mem, true);
	return true;
}

void h_cpu_init(struct hcpu *c, unsigned int id, unsigned int reserve,
		unsigned int max_blocks)
{
	unsigned int i;

	memset(c, 0, sizeof(*c));
	nta_pool_init(&c->pool, id, reserve);
	c->max_blocks = max_blocks;
	for (i = 0; i < reserve; i++)
		h_grow(c);
	c->grows = 0;
}

/* Wait until no thread is still in a remote free that began before now. */
static void h_rcu_synchronize(void)
{
	unsigned long seq[H_MAX_CPUS];
	unsigned int i;

	for (i = 0; i < H_MAX_CPUS; i++)
		seq[i] = __atomic_load_n(&h_cpus[i].rcu_seq, __ATOMIC_SEQ_CST);
	for (i = 0; i < H_MAX_CPUS; i++)
		while ((seq[i] & 1) &&
		       __atomic_load_n(&h_cpus[i].rcu_seq, __ATOMIC_SEQ_CST) == seq[i])
			sched_yield();
}

void h_release(struct hcpu *c, struct list_head *released)
{
	struct nta_block *blk, *tmp;

	if (!list_empty(released))
		h_rcu_synchronize();

	list_for_each_entry_safe(blk, tmp, released, link) {
		if (h_block_hook)
			h_block_hook(blk, false);
		free(blk);
		atomic_dec(&h_blocks_live);
		c->returns++;
	}
	INIT_LIST_HEAD(released);
}

unsigned int h_drain(struct hcpu *c)
{
	LIST_HEAD(released);
	unsigned int n;

	if (atomic_read(&c->kicked))
		atomic_set(&c->kicked, 0);
	n = nta_pool_drain(&c->pool, &released);
	if (n) {
		c->drains++;
		c->drained += n;
	}
	h_release(c, &released);
	return n;
}

/* Drain until nothing is queued, as nta_kick_fn() goes on after a bounded drain. */
unsigned int h_drain_all(struct hcpu *c)
{
	unsigned int n = 0;

	do {
		n += h_drain(c);
	} while (!llist_empty(&c->pool.remote));
	return n;
}

unsigned int h_trim(struct hcpu *c)
{
	LIST_HEAD(released);
	unsigned int n;

	h_drain_all(c);
	n = nta_pool_trim(&c->pool, &released, UINT_MAX);
	h_release(c, &released);
	return n;
}

/* As nta_drain_locked() does on every slow path: a drain costs one load when nothing is queued. */
static inline void h_drain_if_queued(struct hcpu *c)
{
	if (unlikely(!llist_empty(&c->pool.remote)))
		h_drain(c);
}

void *h_alloc(struct hcpu *c, unsigned int size)
{
	void *p;

	h_drain_if_queued(c);
	p = nta_pool_alloc(&c->pool, size);
	if (unlikely(!p) && size && size <= NTA_MAX_SIZE && h_grow(c))
		p = nta_pool_alloc(&c->pool, size);
	if (likely(p))
		c->allocs++;
	else
		c->failures++;
	return p;
}

enum nta_bad_free h_free(struct hcpu *c, void *ptr, unsigned int size)
{
	struct nta_block *blk = nta_block_of(ptr);
	LIST_HEAD(released);
	enum nta_bad_free why;

	if (likely(blk->pool == &c->pool)) {
		why = nta_pool_free_checked(&c->pool, ptr, size, &released);
		if (unlikely(why)) {
			c->bad_frees++;
			return why;
		}
		c->frees++;
	} else {
		struct hcpu *owner = container_of(blk->pool, struct hcpu, pool);
		unsigned int queued;

		h_rcu_enter(c);
		why = nta_remote_free(&owner->pool, ptr, size, &queued);
		h_rcu_exit(c);
		if (unlikely(why)) {
			c->bad_frees++;
			return why;
		}
		c->remote_frees++;
		if (queued == NTA_KICK_BLOCKS) {
			c->kicks++;
			atomic_set(&owner->kicked, 1);
		}
	}
	if (unlikely(!list_empty(&released)))
		h_release(c, &released);
	h_drain_if_queued(c);
	return NTA_FREE_OK;
}

unsigned int h_cpu_destroy(struct hcpu *c)
{
	struct nta_block *blk, *tmp;
	unsigned int busy = 0;

	h_drain(c);
	list_for_each_entry_safe(blk, tmp, &c->pool.blocks, link) {
		if (blk->free_units != NTA_DATA_UNITS) {
			/* A failed test leaked objects: drop the block anyway. */
			busy++;
			list_del(&blk->link);
			c->pool.nr_blocks--;
		} else if (!nta_pool_remove_block(&c->pool, blk)) {
			t_fail(__FILE__, __LINE__, "teardown: remove of wholly free block %p refused",
			       blk);
			busy++;
			list_del(&blk->link);
			c->pool.nr_blocks--;
		}
		if (h_block_hook)
			h_block_hook(blk, false);
		free(blk);
		atomic_dec(&h_blocks_live);
	}
	return busy;
}

/* ---- checker ---- */

/*
 * The pool invariants are nta_pool_check()'s, the same the KUnit suite and
 * debugfs nta/check hold a pool to; what is added here is the embedder's
 * policy (@flags) and the figures tests compare with their own model.
 */
unsigned int h_check_pool(const struct nta_pool *pool, unsigned int flags,
			  struct h_pool_stats *stp)
{
	struct h_pool_stats st = { 0 };
	const struct nta_block *blk;
	unsigned int errors, u;
	char msg[256];

	errors = nta_pool_check(pool, msg, sizeof(msg));
	if (errors) {
		t_fail(__FILE__, __LINE__, "pool %u: %u violations, first: %s",
		       pool->id, errors, msg);
		/* The block list may not be walkable: no figures. */
		if (stp)
			*stp = st;
		return errors;
	}

	list_for_each_entry(blk, &pool->blocks, link) {
		for (u = 0; u < NTA_BITMAP_LONGS; u++) {
			st.objects += hweight_long(blk->start[u]);
			st.object_units += hweight_long(blk->used[u]);
			st.pending += hweight_long(blk->pending[u]);
		}
		st.object_units -= NTA_HDR_UNITS;
		if (blk->free_units == NTA_DATA_UNITS)
			st.free_blocks++;
	}

#define BAD(fmt, ...) do {						\
	errors++;							\
	t_fail(__FILE__, __LINE__, "pool %u: " fmt, pool->id,		\
	       ##__VA_ARGS__);						\
} while (0)
	if ((flags & H_CHECK_RELEASE) && pool->nr_blocks > pool->reserve &&
	    st.free_blocks > 1)
		BAD("%lu wholly free blocks kept with %u blocks over a reserve of %u (one spare allowed)",
		    st.free_blocks, pool->nr_blocks, pool->reserve);
	if ((flags & H_CHECK_TRIMMED) && pool->nr_blocks > pool->reserve &&
	    st.free_blocks)
		BAD("%lu wholly free blocks kept after trim with %u blocks over a reserve of %u",
		    st.free_blocks, pool->nr_blocks, pool->reserve);
	if ((flags & H_CHECK_QUIET) &&
	    (!llist_empty(&pool->remote) || atomic_read(&pool->remote_blocks) ||
	     st.pending))
		BAD("remote frees in flight: list %s, count %d, pending bits %lu",
		    llist_empty(&pool->remote) ? "empty" : "not empty",
		    atomic_read(&pool->remote_blocks), st.pending);
#undef BAD

	if (stp)
		*stp = st;
	return errors;
}

bool h_chunk_listed(const struct nta_pool *pool, const struct nta_block *blk,
		    unsigned int unit, unsigned int len)
{
	const struct nta_chunk *node = h_unit_addr((struct nta_block *)blk, unit);
	const struct nta_chunk *lo = &pool->free[0], *hi = &pool->free[NTA_NR_LISTS];
	const struct nta_chunk *pos;
	unsigned int steps;

	if (!len || len > NTA_DATA_UNITS || !test_bit(len, pool->nonempty))
		return false;
	if (!nta_chunk_linked(pool, node))
		return false;
	/* Chunks go on the front of their list, so this is usually one step. */
	for (pos = nta_chunk_prev(node), steps = 0; steps < 4096;
	     pos = nta_chunk_prev(pos), steps++)
		if (pos >= lo && pos < hi)
			return pos == &pool->free[len];
	for (pos = nta_chunk_next(node), steps = 0; steps < 1u << 20;
	     pos = nta_chunk_next(pos), steps++)
		if (pos >= lo && pos < hi)
			return pos == &pool->free[len];
	return false;
}

#define BAD(fmt, ...) do {						\
	if (errors++ < 3)						\
		t_fail(__FILE__, __LINE__, fmt, ##__VA_ARGS__);		\
} while (0)

unsigned int h_check_live(const struct nta_pool *pool, const void *ptr,
			  unsigned int size)
{
	unsigned int units = nta_size_to_units(size), unit = h_unit(ptr), end;
	struct nta_block *blk = nta_block_of(ptr);
	unsigned int errors = 0;

	end = unit + units;
	if ((uintptr_t)ptr & (NTA_UNIT - 1) || unit < NTA_HDR_UNITS ||
	    end > NTA_BLOCK_UNITS) {
		BAD("alloc %u: %p (unit %u) outside the data area", size, ptr, unit);
		return errors;
	}
	if (blk->pool != pool)
		BAD("alloc %u: %p from a block of pool %p", size, ptr, blk->pool);
	if (!test_bit(unit, blk->start) || test_bit(unit, blk->pending))
		BAD("alloc %u: %p start %d pending %d", size, ptr,
		    test_bit(unit, blk->start), test_bit(unit, blk->pending));
	if (find_next_bit(blk->start, end, unit + 1) != end)
		BAD("alloc %u: %p has another start bit inside", size, ptr);
	if (find_next_zero_bit(blk->used, end, unit) != end)
		BAD("alloc %u: %p not all units used", size, ptr);
	if (nta_object_units(blk, unit) != units)
		BAD("alloc %u: %p object_units %u, want %u", size, ptr,
		    nta_object_units(blk, unit), units);
	if (nta_cls(blk, unit) != units)
		BAD("alloc %u: %p length byte %u, want %u", size, ptr,
		    nta_cls(blk, unit), units);
	return errors;
}

unsigned int h_check_alloc(const struct nta_pool *pool, const void *ptr,
			   unsigned int size)
{
	unsigned int units = nta_size_to_units(size), unit = h_unit(ptr), end;
	struct nta_block *blk = nta_block_of(ptr);
	unsigned int errors;

	end = unit + units;
	errors = h_check_live(pool, ptr, size);
	if (errors)
		return errors;
	if (!test_bit(unit - 1, blk->used))
		BAD("alloc %u: %p has free space on its left: chunk not taken from its start",
		    size, ptr);
	if (end < NTA_BLOCK_UNITS && !test_bit(end, blk->used)) {
		unsigned int edge = find_next_bit(blk->used, NTA_BLOCK_UNITS, end);

		if (!h_chunk_listed(pool, blk, end, edge - end))
			BAD("alloc %u: %p remainder %u..%u not on free[%u]", size,
			    ptr, end, edge - 1, edge - end);
	}
	return errors;
}

unsigned int h_check_freed(const struct nta_pool *pool, struct nta_block *blk,
			   unsigned int unit, unsigned int units)
{
	unsigned int errors = 0, left, right;

	if (test_bit(unit, blk->start) || test_bit(unit, blk->pending) ||
	    find_next_bit(blk->used, unit + units, unit) != unit + units) {
		BAD("freed %p units %u..%u still marked", h_unit_addr(blk, unit),
		    unit, unit + units - 1);
		return errors;
	}
	left = find_last_bit(blk->used, unit) + 1;
	right = find_next_bit(blk->used, NTA_BLOCK_UNITS, unit + units);
	if (!h_chunk_listed(pool, blk, left, right - left))
		BAD("freed %p: free run %u..%u is not one chunk on free[%u]",
		    h_unit_addr(blk, unit), left, right - 1, right - left);
	return errors;
}

/* ---- snapshots ---- */

void h_snapshot_take(struct h_snapshot *s, const struct nta_pool *pool)
{
	struct nta_block *blk;
	unsigned int i = 0;

	memcpy(&s->pool, pool, sizeof(*pool));
	s->nr = pool->nr_blocks;
	s->addr = calloc(s->nr + 1, sizeof(*s->addr));
	s->data = malloc((size_t)(s->nr + 1) * NTA_BLOCK_SIZE);
	list_for_each_entry(blk, &pool->blocks, link) {
		if (i == s->nr)
			break;
		s->addr[i] = blk;
		memcpy(s->data + (size_t)i * NTA_BLOCK_SIZE, blk, NTA_BLOCK_SIZE);
		i++;
	}
}

bool h_snapshot_same(const struct h_snapshot *s, const struct nta_pool *pool)
{
	struct nta_block *blk;
	unsigned int i = 0;

	if (memcmp(&s->pool, pool, sizeof(*pool))) {
		const unsigned char *a = (const void *)&s->pool, *b = (const void *)pool;
		size_t off = 0;

		while (a[off] == b[off])
			off++;
		t_fail(__FILE__, __LINE__, "pool struct changed at offset %zu", off);
		return false;
	}
	list_for_each_entry(blk, &pool->blocks, link) {
		const unsigned char *a = s->data + (size_t)i * NTA_BLOCK_SIZE;
		const unsigned char *b = (const void *)blk;

		if (i == s->nr || s->addr[i] != blk) {
			t_fail(__FILE__, __LINE__, "block list changed at %u", i);
			return false;
		}
		if (memcmp(a, b, NTA_BLOCK_SIZE)) {
			size_t off = 0;

			while (a[off] == b[off])
				off++;
			t_fail(__FILE__, __LINE__,
			       "block %p changed at offset %zu (unit %zu): %#x -> %#x",
			       blk, off, off / NTA_UNIT, a[off], b[off]);
			return false;
		}
		i++;
	}
	return true;
}

void h_snapshot_free(struct h_snapshot *s)
{
	free(s->addr);
	free(s->data);
	s->addr = NULL;
	s->data = NULL;
}
