// SPDX-License-Identifier: GPL-2.0
/*
 * Randomized model test: millions of random allocs and frees on one pool,
 * against a shadow model that records, for every unit of every block,
 * which live object (by serial number) owns it.
 *
 * After every operation: the object just allocated is where the bitmaps
 * say, overlaps no live object (the shadow units were all unowned), and
 * its remainder is a listed chunk; the units just freed are one listed,
 * fully merged chunk with their free neighbours, or their block went back
 * whole.  Every CHECK= operations: the whole pool invariant (h_check_pool:
 * bitmaps match lists, nonempty bitmap matches lists, no adjacent free
 * chunks, counters right) plus shadow against bitmaps unit by unit, so
 * every data unit is in exactly one live object or one free chunk.
 *
 * The live set follows a target that changes every phase, sometimes to
 * zero, when the pool must shrink back to its reserve of wholly free
 * blocks (or one spare block if the reserve is 0): any leak of units or
 * missed merge shows there.  Every 4096 operations the pool is trimmed as
 * the shrinker would, after which no wholly free block is left above the
 * reserve; the shadow hook checks every block given back has no object.
 */
#include "harness.h"

struct shadow {
	struct shadow *next;
	struct nta_block *blk;
	u32 owner[NTA_BLOCK_UNITS];
};

struct obj {
	void *p;
	u32 size;
	u32 serial;
};

#define SH_BUCKETS	4096
static struct shadow *sh_hash[SH_BUCKETS];
static unsigned int sh_errors;
static struct nta_block *sh_released;

static unsigned int sh_bucket(const struct nta_block *blk)
{
	return ((uintptr_t)blk / NTA_BLOCK_SIZE) % SH_BUCKETS;
}

static struct shadow *sh_find(const struct nta_block *blk)
{
	struct shadow *s;

	for (s = sh_hash[sh_bucket(blk)]; s; s = s->next)
		if (s->blk == blk)
			return s;
	return NULL;
}

static void sh_hook(struct nta_block *blk, bool added)
{
	struct shadow **pp, *s;
	unsigned int u;

	if (added) {
		s = calloc(1, sizeof(*s));
		s->blk = blk;
		s->next = sh_hash[sh_bucket(blk)];
		sh_hash[sh_bucket(blk)] = s;
		return;
	}
	sh_released = blk;
	for (pp = &sh_hash[sh_bucket(blk)]; *pp; pp = &(*pp)->next) {
		if ((*pp)->blk != blk)
			continue;
		s = *pp;
		for (u = 0; u < NTA_BLOCK_UNITS; u++)
			if (s->owner[u] && !sh_errors++)
				t_fail(__FILE__, __LINE__,
				       "block %p released with live object %u at unit %u",
				       blk, s->owner[u], u);
		*pp = s->next;
		free(s);
		return;
	}
	if (!sh_errors++)
		t_fail(__FILE__, __LINE__, "unknown block %p released", blk);
}

static unsigned int model_size(struct rng *r)
{
	unsigned int x = rng_range(r, 0, 99);

	if (x < 45)
		return rng_skb_size(r);
	if (x < 55)
		return rng_range(r, 1, 1024);
	return rng_range(r, 1, NTA_MAX_SIZE);
}

static void tag(struct obj *o)
{
	unsigned char *p = o->p;

	memcpy(p, &o->serial, min(o->size - 1, 4u));
	p[o->size - 1] = (unsigned char)(o->serial >> 3) ^ 0x5a;
}

static bool tag_ok(const struct obj *o)
{
	const unsigned char *p = o->p;
	u32 s = 0, want = 0;

	memcpy(&s, p, min(o->size - 1, 4u));
	memcpy(&want, &o->serial, min(o->size - 1, 4u));
	if (s != want)
		return false;
	return p[o->size - 1] == ((unsigned char)(o->serial >> 3) ^ 0x5a);
}

/* Shadow against bitmaps, and every live object against the block. */
static unsigned int model_full_check(const struct nta_pool *pool, struct obj *live,
				     unsigned int nlive, unsigned long live_units)
{
	struct h_pool_stats st;
	unsigned int errors, i, b, u;
	unsigned long shadow_units = 0;

	errors = h_check_pool(pool, H_CHECK_QUIET | H_CHECK_RELEASE, &st);
	if (st.objects != nlive || st.object_units != live_units) {
		t_fail(__FILE__, __LINE__, "pool has %lu objects of %lu units, model %u of %lu",
		       st.objects, st.object_units, nlive, live_units);
		errors++;
	}
	for (i = 0; i < nlive && errors < 5; i++) {
		struct nta_block *blk = nta_block_of(live[i].p);
		unsigned int unit = h_unit(live[i].p);

		if (!test_bit(unit, blk->start) ||
		    nta_object_units(blk, unit) != nta_size_to_units(live[i].size) ||
		    !tag_ok(&live[i])) {
			t_fail(__FILE__, __LINE__, "live object %u (%p size %u) damaged",
			       live[i].serial, live[i].p, live[i].size);
			errors++;
		}
	}
	for (b = 0; b < SH_BUCKETS; b++) {
		struct shadow *s;

		for (s = sh_hash[b]; s; s = s->next) {
			for (u = NTA_HDR_UNITS; u < NTA_BLOCK_UNITS; u++) {
				if (!s->owner[u] != !test_bit(u, s->blk->used)) {
					if (errors++ < 5)
						t_fail(__FILE__, __LINE__,
						       "block %p unit %u: shadow owner %u, used %d",
						       s->blk, u, s->owner[u],
						       test_bit(u, s->blk->used));
				}
				shadow_units += !!s->owner[u];
			}
		}
	}
	if (shadow_units != live_units) {
		t_fail(__FILE__, __LINE__, "shadow holds %lu units, model %lu",
		       shadow_units, live_units);
		errors++;
	}
	return errors;
}

static void model_report(const char *when, unsigned long op, const struct nta_pool *pool,
			 unsigned int nlive, unsigned long req, unsigned long live_units)
{
	unsigned long foot = (unsigned long)pool->nr_blocks * NTA_BLOCK_SIZE;
	unsigned long free_b = pool->free_units * NTA_UNIT;

	t_note("model %s op %9lu: live %5u objs %6lu KiB req %6lu KiB held | %4u blocks %6lu KiB | req/footprint %.3f | free %.3f, largest %5lu B",
	       when, op, nlive, req >> 10, (live_units * NTA_UNIT) >> 10, pool->nr_blocks,
	       foot >> 10, foot ? (double)req / foot : 0.0,
	       foot ? (double)free_b / foot : 0.0, nta_pool_largest_free(pool));
}

static void test_model(void)
{
	const unsigned long def_ops = strcmp(NTA_VARIANT, "o2") ? 1000000 : 10000000;
	const unsigned long ops = env_ulong("OPS", def_ops);
	const unsigned long seed = env_ulong("SEED", (unsigned long)(now_sec() * 1e6));
	const unsigned long check_every = env_ulong("CHECK", 16384);
	const unsigned int max_live = 2000, phase = 1 << 15;
	struct hcpu *c = &h_cpus[0];
	unsigned long op, req = 0, live_units = 0, allocs = 0, frees = 0;
	unsigned long empties = 0, full_checks = 0, peak_blocks = 0, trims = 0;
	unsigned int nlive = 0, target = 0, errors = 0, b;
	struct obj *live = calloc(max_live * 2, sizeof(*live));
	u32 serial = 0;
	struct rng r;
	double t0 = now_sec();
	int poison0 = atomic_read(&h_poison_reports);

	t_note("model: SEED=%lu OPS=%lu CHECK=%lu", seed, ops, check_every);
	rng_seed(&r, seed);
	sh_errors = 0;
	h_block_hook = sh_hook;
	h_cpu_init(c, 0, 4, 0);

	for (op = 0; op < ops && !errors && !sh_errors; op++) {
		bool do_alloc;

		if (op % phase == 0) {
			target = rng_range(&r, 0, 9) ? rng_range(&r, 1, max_live) : 0;
		}
		if (!nlive)
			do_alloc = true;
		else if (nlive >= 2 * max_live - 1)
			do_alloc = false;
		else
			do_alloc = rng_range(&r, 0, 99) < (nlive < target ? 75u : 25u);

		if (do_alloc) {
			struct obj *o = &live[nlive];
			unsigned int unit, units, u;
			struct shadow *s;

			o->size = model_size(&r);
			o->p = h_alloc(c, o->size);
			if (!EXPECT(o->p, "op %lu: alloc %u failed", op, o->size))
				break;
			errors += h_check_alloc(&c->pool, o->p, o->size);
			o->serial = ++serial;
			unit = h_unit(o->p);
			units = nta_size_to_units(o->size);
			s = sh_find(nta_block_of(o->p));
			if (!EXPECT(s, "op %lu: %p in an unknown block", op, o->p))
				break;
			for (u = unit; u < unit + units; u++) {
				if (s->owner[u]) {
					t_fail(__FILE__, __LINE__,
					       "op %lu: new object %p (%u units) overlaps live object %u at unit %u",
					       op, o->p, units, s->owner[u], u);
					errors++;
					break;
				}
				s->owner[u] = o->serial;
			}
			tag(o);
			nlive++;
			req += o->size;
			live_units += units;
			allocs++;
		} else {
			unsigned int i = rng_range(&r, 0, 99) < 30 ? nlive - 1 :
					 rng_range(&r, 0, nlive - 1);
			struct obj o = live[i];
			struct nta_block *blk = nta_block_of(o.p);
			unsigned int unit = h_unit(o.p), units = nta_size_to_units(o.size), u;
			struct shadow *s = sh_find(blk);
			enum nta_bad_free why;

			if (!tag_ok(&o)) {
				t_fail(__FILE__, __LINE__, "op %lu: object %u (%p) overwritten",
				       op, o.serial, o.p);
				errors++;
			}
			for (u = unit; s && u < unit + units; u++) {
				if (s->owner[u] != o.serial && !errors++)
					t_fail(__FILE__, __LINE__, "op %lu: shadow lost object %u",
					       op, o.serial);
				s->owner[u] = 0;
			}
			live[i] = live[--nlive];
			req -= o.size;
			live_units -= units;
			sh_released = NULL;
			why = h_free(c, o.p, o.size);
			if (why) {
				t_fail(__FILE__, __LINE__, "op %lu: free %p size %u refused: %s",
				       op, o.p, o.size, nta_bad_free_reason(why));
				errors++;
			}
			if (sh_released != blk)
				errors += h_check_freed(&c->pool, blk, unit, units);
			frees++;
		}
		peak_blocks = max(peak_blocks, (unsigned long)c->pool.nr_blocks);

		if ((op & 4095) == 4095) {
			trims += h_trim(c);
			if (c->pool.nr_blocks > c->pool.reserve &&
			    !nta_flist_empty(&c->pool.free[NTA_DATA_UNITS])) {
				t_fail(__FILE__, __LINE__,
				       "op %lu: trim left a wholly free block, %u blocks over a reserve of %u",
				       op, c->pool.nr_blocks, c->pool.reserve);
				errors++;
			}
		}
		if (!nlive) {
			empties++;
			/*
			 * Everything merged back: only wholly free reserve blocks,
			 * or the one spare when there is no reserve.
			 */
			if (c->pool.nr_blocks > max(c->pool.reserve, 1u) ||
			    c->pool.free_units != (unsigned long)c->pool.nr_blocks * NTA_DATA_UNITS) {
				t_fail(__FILE__, __LINE__,
				       "op %lu: no live objects but %u blocks with %lu free units",
				       op, c->pool.nr_blocks, c->pool.free_units);
				errors++;
			}
		}
		if ((op + 1) % check_every == 0) {
			errors += model_full_check(&c->pool, live, nlive, live_units);
			full_checks++;
		}
		if ((op + 1) % (ops / 10 ? ops / 10 : 1) == 0)
			model_report("at", op + 1, &c->pool, nlive, req, live_units);
	}
	if (errors || sh_errors)
		t_note("model: FAILED at op %lu; reproduce with SEED=%lu OPS=%lu",
		       op, seed, op + 1);
	errors += model_full_check(&c->pool, live, nlive, live_units);
	t_note("model: SEED=%lu, %lu ops (%lu allocs, %lu frees) in %.2f s, %lu full checks, %lu ops at empty, peak %lu blocks (%lu KiB), %lu grows, %lu returns (%lu by trim)",
	       seed, op, allocs, frees, now_sec() - t0, full_checks, empties, peak_blocks,
	       peak_blocks * NTA_BLOCK_SIZE >> 10, c->grows, c->returns, trims);
	EXPECT(op == ops, "stopped after %lu of %lu ops", op, ops);
	EXPECT(atomic_read(&h_poison_reports) == poison0, "poison reports on clean use");
	while (nlive) {
		struct obj *o = &live[--nlive];
		struct shadow *s = sh_find(nta_block_of(o->p));

		for (b = h_unit(o->p); s && b < h_unit(o->p) + nta_size_to_units(o->size); b++)
			s->owner[b] = 0;
		EXPECT(h_free(c, o->p, o->size) == NTA_FREE_OK, "final free");
	}
	EXPECT(h_check_pool(&c->pool, H_CHECK_QUIET | H_CHECK_RELEASE, NULL) == 0, "end");
	EXPECT(h_cpu_destroy(c) == 0, "teardown");
	EXPECT(!sh_errors, "shadow errors");
	for (b = 0; b < SH_BUCKETS; b++)
		EXPECT(!sh_hash[b], "shadow left for a block");
	free(live);
}

const struct test model_tests[] = {
	{ "model_random", test_model, 0 },
	{ NULL, NULL, 0 }
};
