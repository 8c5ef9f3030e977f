// SPDX-License-Identifier: GPL-2.0
/*
 * Multi-thread tests: threads stand in for CPUs, each owning one pool.
 *
 * mt_remote_free: every thread allocates from its own pool and hands each
 * object to a random thread (itself included) through a locked inbox; the
 * receiver checks the object's tags and frees it with h_free(), which is a
 * remote free (nta_remote_free() on the owner's pool) unless it owns it.
 * One free in WRONG_EVERY is first made with a wrong size: on the owner it
 * is refused at once, off the owner it is queued and the owner's drain
 * reports it and clears its pending bit, so the receiver retries with the
 * right size until the object is no longer pending.  Owners drain on every
 * alloc and free and when kicked.  At the end every object is accounted
 * for (allocs = local frees + drained; remote frees = drained + wrong
 * ones; drain reports = wrong remote frees), and after a last drain every
 * pool is back to its reserve of wholly free blocks.
 *
 * mt_remote_free_race: the race the core had when a non-owner computed an
 * object's length from its neighbours' bits while the owner rewrote them.
 * The owner allocates an object, hands it to a freer thread and allocates
 * and frees the object's right-hand neighbour over and over while the
 * freer calls nta_remote_free() on it; then it drains.  The object is live
 * and its size right throughout, so the remote free must never refuse it,
 * and the drain must free it without a report.
 */
#include <pthread.h>
#include <sched.h>

#include "harness.h"

struct item {
	void *p;
	u32 size;
	u32 owner;
	u64 seq;
};

struct inbox {
	pthread_mutex_t lock;
	struct item *items;
	unsigned int n, cap;
} ____cacheline_aligned;

struct worker {
	unsigned int id;
	pthread_t th;
	struct rng r;
	unsigned long n_ops;
	atomic_t outstanding;		/* allocated, not yet freed by anyone */
	unsigned long tag_errors, refused, processed;
	/* wrong-size frees refused at once, queued, and pending retries */
	unsigned long wrong_local, wrong_remote, retries;
	struct item *batch;
	unsigned int batch_cap;
} ____cacheline_aligned;

#define OBJ_MAGIC	0x6e746121u
#define MAX_OUTSTANDING	256
#define WRONG_EVERY	512	/* one free in this many starts with a wrong size */

static struct inbox inboxes[H_MAX_CPUS];
static struct worker workers[H_MAX_CPUS];
static unsigned int nthreads;
static atomic_t producers_done;

struct obj_tag {
	u32 magic;
	u32 size;
	u64 seq;
};

static void push(unsigned int dst, const struct item *it)
{
	struct inbox *in = &inboxes[dst];

	pthread_mutex_lock(&in->lock);
	if (in->n == in->cap) {
		in->cap = in->cap ? in->cap * 2 : 256;
		in->items = realloc(in->items, in->cap * sizeof(*in->items));
	}
	in->items[in->n++] = *it;
	pthread_mutex_unlock(&in->lock);
}

/*
 * Free @it with a size of one unit more first.  Off the owner that is
 * queued, and the right free is refused as pending until the owner's drain
 * has reported the wrong one; keep draining our own pool meanwhile, so two
 * threads waiting for each other still make progress.
 */
static void wrong_free_first(struct worker *w, const struct item *it)
{
	struct hcpu *c = &h_cpus[w->id];
	unsigned int bad = it->size + NTA_UNIT;
	enum nta_bad_free why;

	if (bad > NTA_MAX_SIZE)
		bad = it->size - NTA_UNIT;
	if (!bad)
		bad = 2 * NTA_UNIT;
	why = h_free(c, it->p, bad);
	if (!EXPECT(why == NTA_FREE_WRONG_SIZE, "%s: wrong size gave \"%s\"",
		    it->owner == w->id ? "owner" : "remote", nta_bad_free_reason(why)))
		w->refused++;
	if (it->owner == w->id)
		w->wrong_local++;
	else
		w->wrong_remote++;
}

/* Free everything in this thread's inbox; returns how many. */
static unsigned int process_inbox(struct worker *w)
{
	struct inbox *in = &inboxes[w->id];
	struct hcpu *c = &h_cpus[w->id];
	unsigned int n, i, cap;
	struct item *items;

	pthread_mutex_lock(&in->lock);
	n = in->n;
	items = in->items;
	cap = in->cap;
	in->items = w->batch;
	in->cap = w->batch_cap;
	in->n = 0;
	pthread_mutex_unlock(&in->lock);
	w->batch = items;
	w->batch_cap = cap;

	for (i = 0; i < n; i++) {
		struct item *it = &items[i];
		struct obj_tag *t = it->p;
		u64 tail;
		enum nta_bad_free why;

		memcpy(&tail, (char *)it->p + it->size - 8, 8);
		if (t->magic != OBJ_MAGIC || t->size != it->size || t->seq != it->seq ||
		    tail != ~it->seq) {
			if (!w->tag_errors++)
				t_fail(__FILE__, __LINE__,
				       "thread %u: object %p of thread %u overwritten",
				       w->id, it->p, it->owner);
		}
		if (rng_range(&w->r, 0, WRONG_EVERY - 1) == 0)
			wrong_free_first(w, it);
		why = h_free(c, it->p, it->size);
		if (why) {
			if (!w->refused++)
				t_fail(__FILE__, __LINE__,
				       "thread %u: free of %p size %u (owner %u) refused: %s",
				       w->id, it->p, it->size, it->owner,
				       nta_bad_free_reason(why));
		}
		atomic_dec(&workers[it->owner].outstanding);
	}
	w->processed += n;
	return n;
}

static int all_outstanding(void)
{
	unsigned int i;
	int n = 0;

	for (i = 0; i < nthreads; i++)
		n += atomic_read(&workers[i].outstanding);
	return n;
}

static void *worker_fn(void *arg)
{
	struct worker *w = arg;
	struct hcpu *c = &h_cpus[w->id];
	unsigned long i;

	for (i = 0; i < w->n_ops; i++) {
		unsigned int size = rng_range(&w->r, 0, 3) ? rng_skb_size(&w->r) :
				    rng_range(&w->r, 64, NTA_MAX_SIZE);
		struct item it;
		struct obj_tag *t;
		u64 tail;

		it.p = h_alloc(c, size);
		if (!it.p) {
			t_fail(__FILE__, __LINE__, "thread %u: alloc %u failed", w->id, size);
			break;
		}
		it.size = size;
		it.owner = w->id;
		it.seq = ((u64)w->id << 48) | i;
		t = it.p;
		t->magic = OBJ_MAGIC;
		t->size = size;
		t->seq = it.seq;
		tail = ~it.seq;
		memcpy((char *)it.p + size - 8, &tail, 8);
		atomic_inc(&w->outstanding);
		push(rng_range(&w->r, 0, nthreads - 1), &it);

		process_inbox(w);
		if (atomic_read(&c->kicked))
			h_drain(c);
		while (atomic_read(&w->outstanding) > MAX_OUTSTANDING) {
			if (!process_inbox(w))
				sched_yield();
			h_drain(c);
		}
	}
	atomic_inc(&producers_done);
	/*
	 * Keep freeing what others send, and draining, until every object of
	 * every thread is freed: a receiver retrying a wrong-size free waits
	 * for the owner's drain.
	 */
	for (;;) {
		bool all_done = atomic_read(&producers_done) == (int)nthreads;

		if (!process_inbox(w)) {
			if (all_done && !all_outstanding())
				break;
			sched_yield();
		}
		h_drain(c);
	}
	return NULL;
}

static void test_mt_remote_free(void)
{
	const bool slow = strcmp(NTA_VARIANT, "o2");
	unsigned long ops = env_ulong("MT_OPS", slow ? 20000 : 200000);
	unsigned long allocs = 0, frees = 0, remote = 0, drained = 0, kicks = 0;
	unsigned long grows = 0, returns = 0, bad = 0, processed = 0;
	unsigned long wrong_local = 0, wrong_remote = 0;
	int reports0 = atomic_read(&h_bad_drain_reports);
	unsigned int i;
	double t0 = now_sec();
	int poison0 = atomic_read(&h_poison_reports);

	nthreads = env_ulong("THREADS", 4);
	if (nthreads < 2 || nthreads > H_MAX_CPUS)
		nthreads = 4;
	atomic_set(&producers_done, 0);
	for (i = 0; i < nthreads; i++) {
		struct worker *w = &workers[i];

		memset(w, 0, sizeof(*w));
		w->id = i;
		w->n_ops = ops;
		rng_seed(&w->r, 1000 + i);
		pthread_mutex_init(&inboxes[i].lock, NULL);
		inboxes[i].n = 0;
		h_cpu_init(&h_cpus[i], i, 2, 0);
	}
	h_quiet_reports = true;
	for (i = 0; i < nthreads; i++)
		pthread_create(&workers[i].th, NULL, worker_fn, &workers[i]);
	for (i = 0; i < nthreads; i++)
		pthread_join(workers[i].th, NULL);
	h_quiet_reports = false;

	/* The threads are gone: drain each pool as a CPU-dead callback would. */
	for (i = 0; i < nthreads; i++) {
		struct hcpu *c = &h_cpus[i];
		struct h_pool_stats st;

		h_drain_all(c);
		EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET | H_CHECK_RELEASE, &st) == 0,
		       "pool %u at the end", i);
		EXPECT(st.objects == 0 && c->pool.nr_blocks <= c->pool.reserve &&
		       st.free_blocks == c->pool.nr_blocks,
		       "pool %u: %lu objects, %u blocks, %lu wholly free", i,
		       st.objects, c->pool.nr_blocks, st.free_blocks);
		EXPECT(atomic_read(&workers[i].outstanding) == 0, "thread %u: %d outstanding",
		       i, atomic_read(&workers[i].outstanding));
		EXPECT(inboxes[i].n == 0, "inbox %u not empty", i);
		allocs += c->allocs;
		frees += c->frees;
		remote += c->remote_frees;
		drained += c->drained;
		kicks += c->kicks;
		grows += c->grows;
		returns += c->returns;
		bad += c->bad_frees;
		processed += workers[i].processed;
		wrong_local += workers[i].wrong_local;
		wrong_remote += workers[i].wrong_remote;
		EXPECT(!workers[i].tag_errors && !workers[i].refused,
		       "thread %u: %lu damaged objects, %lu refused frees", i,
		       workers[i].tag_errors, workers[i].refused);
	}
	EXPECT(allocs == ops * nthreads && processed == allocs, "%lu allocs, %lu freed",
	       allocs, processed);
	EXPECT(allocs == frees + drained, "allocs %lu != local frees %lu + drained %lu",
	       allocs, frees, drained);
	EXPECT(remote == drained, "remote frees %lu != drained %lu", remote, drained);
	/* The freer reads the length byte: a wrong size is never queued. */
	EXPECT(atomic_read(&h_bad_drain_reports) == reports0, "%d drain reports",
	       atomic_read(&h_bad_drain_reports) - reports0);
	EXPECT(bad == wrong_local + wrong_remote,
	       "%lu refused frees, %lu + %lu wrong sizes (owner + remote)", bad,
	       wrong_local, wrong_remote);
	EXPECT(wrong_remote > 0 || ops < 10 * WRONG_EVERY, "no wrong-size remote free made");
	t_note("mt: %u threads, %lu allocs, %lu local frees, %lu remote frees, %lu kicks, %lu grows, %lu returns, %lu+%lu wrong sizes (owner+remote) in %.2f s",
	       nthreads, allocs, frees, remote, kicks, grows, returns, wrong_local,
	       wrong_remote, now_sec() - t0);
	for (i = 0; i < nthreads; i++) {
		EXPECT(h_cpu_destroy(&h_cpus[i]) == 0, "teardown %u", i);
		free(inboxes[i].items);
		free(workers[i].batch);
		inboxes[i].items = NULL;
		inboxes[i].cap = 0;
		pthread_mutex_destroy(&inboxes[i].lock);
	}
	EXPECT(atomic_read(&h_poison_reports) == poison0, "poison reports");
}

/* ---- nta_remote_free() from another thread vs the owner's work ---- */

static struct {
	struct nta_pool *pool;
	void *obj;
	unsigned int size;
	unsigned long seq ____cacheline_aligned;	/* owner: object published */
	unsigned long done ____cacheline_aligned;	/* freer: remote free made */
	int stop;
	unsigned long frees, not_first, bad[NTA_FREE_WRONG_SIZE + 1];
} race;

static void *race_freer(void *arg)
{
	unsigned long seen = 0, seq, spins = 0;

	(void)arg;
	for (;;) {
		unsigned int queued;
		enum nta_bad_free why;

		seq = __atomic_load_n(&race.seq, __ATOMIC_ACQUIRE);
		if (seq == seen) {
			if (__atomic_load_n(&race.stop, __ATOMIC_ACQUIRE))
				break;
			/* Let a busy machine run the owner. */
			if (!(++spins & 4095))
				sched_yield();
			continue;
		}
		seen = seq;
		h_rcu_enter(&h_cpus[1]);
		why = nta_remote_free(race.pool, race.obj, race.size, &queued);
		h_rcu_exit(&h_cpus[1]);
		race.bad[why]++;
		race.frees++;
		/* The owner drained the last one before it published this one. */
		if (!why && queued != 1)
			race.not_first++;
		__atomic_store_n(&race.done, seq, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void test_mt_remote_free_race(void)
{
	const unsigned long max_rounds = env_ulong("RACE_OPS", 2000000);
	const double secs = strcmp(NTA_VARIANT, "o2") ? 0.5 : 1.0;
	int reports0 = atomic_read(&h_bad_drain_reports);
	unsigned long round, pairs = 0, wrong, undrained = 0, check_bad = 0;
	struct hcpu *c = &h_cpus[0];
	LIST_HEAD(released);
	struct rng r;
	pthread_t th;
	double t0 = now_sec();

	memset(&race, 0, sizeof(race));
	rng_seed(&r, 4242);
	h_cpu_init(c, 0, 1, 1);
	race.pool = &c->pool;
	pthread_create(&th, NULL, race_freer, NULL);
	for (round = 1; round <= max_rounds && now_sec() - t0 < secs; round++) {
		unsigned int size = rng_range(&r, 0, 1) ? rng_skb_size(&r) :
				    rng_range(&r, 1, 2048);
		unsigned int units = nta_size_to_units(size), j;
		char *obj = nta_pool_alloc(&c->pool, size);

		if (!EXPECT(obj, "round %lu: alloc %u", round, size))
			break;
		race.obj = obj;
		race.size = size;
		__atomic_store_n(&race.seq, round, __ATOMIC_RELEASE);
		/*
		 * The neighbour comes and goes right after the object until the
		 * freer is done, and a few times more.
		 */
		for (j = 0; j < 1000000; j++) {
			unsigned int nsize = 1 + ((round * 7 + j * 13) & 1023);
			char *n = nta_pool_alloc(&c->pool, nsize);

			if (!EXPECT(n == obj + units * NTA_UNIT, "neighbour at %p, want %p", n,
				    obj + units * NTA_UNIT))
				goto out;
			if (nta_check_free(nta_block_of(n), n, nsize))
				check_bad++;
			nta_pool_free(&c->pool, n, nsize, &released);
			pairs++;
			if (j >= 4 && __atomic_load_n(&race.done, __ATOMIC_ACQUIRE) == round)
				break;
			if (!(j & 4095) && j)
				sched_yield();	/* the freer may not be running */
		}
		/*
		 * On a loaded machine the freer may not have run at all in
		 * those pairs: wait for it (bounded), so that only a free it
		 * made and the drain lost counts as undrained.
		 */
		while (__atomic_load_n(&race.done, __ATOMIC_ACQUIRE) != round &&
		       now_sec() - t0 < secs + 10)
			sched_yield();
		if (nta_pool_drain(&c->pool, &released) != 1) {
			undrained++;
			/* Refused by the freer: free it here to go on. */
			if (!nta_check_free(nta_block_of(obj), obj, size))
				nta_pool_free(&c->pool, obj, size, &released);
		}
		if (!list_empty(&released))
			h_release(c, &released);
	}
out:
	__atomic_store_n(&race.stop, 1, __ATOMIC_RELEASE);
	pthread_join(th, NULL);
	wrong = race.frees - race.bad[NTA_FREE_OK];
	t_note("remote free race: %lu rounds, %lu owner neighbour alloc+free pairs, %lu remote frees, %lu refused (%lu wrong size, %lu not allocated, %lu pending) in %.2f s",
	       round - 1, pairs, race.frees, wrong, race.bad[NTA_FREE_WRONG_SIZE],
	       race.bad[NTA_FREE_NOT_ALLOCATED], race.bad[NTA_FREE_PENDING],
	       now_sec() - t0);
	EXPECT(wrong == 0,
	       "nta_remote_free() refused a live object of the right size %lu times out of %lu while the owner worked on its neighbour",
	       wrong, race.frees);
	EXPECT(undrained == 0, "%lu objects not freed by the drain", undrained);
	EXPECT(race.not_first == 0, "%lu remote frees saw others queued", race.not_first);
	EXPECT(check_bad == 0, "owner's nta_check_free() refused the neighbour %lu times",
	       check_bad);
	EXPECT(atomic_read(&h_bad_drain_reports) == reports0, "drain reported a bad free");
	EXPECT(round > 1, "not a single round");
	while (!llist_empty(&c->pool.remote))
		nta_pool_drain(&c->pool, &released);
	h_release(c, &released);
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET | H_CHECK_RELEASE, NULL) == 0, "pool");
	EXPECT(c->pool.free_units == NTA_DATA_UNITS, "everything free");
	EXPECT(h_cpu_destroy(c) == 0, "teardown");
}

const struct test mt_tests[] = {
	{ "mt_remote_free", test_mt_remote_free, 0 },
	{ "mt_remote_free_race", test_mt_remote_free_race, 0 },
	{ NULL, NULL, 0 }
};
