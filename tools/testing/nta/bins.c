// SPDX-License-Identifier: GPL-2.0
/*
 * The model of nta.c's per-CPU bins: see bins.h for what it follows and
 * what it leaves out.
 */
#include <string.h>

#include "bins.h"

/* nta_bins_set_shift() */
static void bins_set_shift(struct bins *b, unsigned int shift)
{
	b->shift = shift;
	b->limit = NTA_BINS_UNITS << shift;
}

void bins_init(struct bins *b)
{
	unsigned int u;

	memset(b, 0, offsetof(struct bins, obj));
	for (u = 1; u < NTA_NR_LISTS; u++)
		b->cap0[u] = bin_cap0(u);
	bins_set_shift(b, 0);
}

/* A binned object's first word, as nta_bin_set_next() writes it. */
static void bin_set_next(void *obj, const void *next)
{
	*(unsigned long *)obj = (unsigned long)next ^ nta_link_key(obj);
}

static void *bin_next(const void *obj)
{
	return (void *)(*(const unsigned long *)obj ^ nta_link_key(obj));
}

/* nta_bin_park(): no longer live (@cls 0), not merged either. */
void bin_push(struct bins *b, void *obj, unsigned int units)
{
	struct nta_block *blk = nta_block_of(obj);
	unsigned int nr = b->nr[units];

	nta_set_cls(blk, nta_unit_of(blk, obj), 0);
	bin_set_next(obj, nr ? b->obj[units][nr - 1] : NULL);
	b->obj[units][nr] = obj;
	b->nr[units]++;
	b->units += units;
	b->pushes++;
}

/* nta_bin_pop(): the newest object, live again with a new generation. */
void *bin_pop(struct bins *b, unsigned int units)
{
	struct nta_block *blk;
	void *obj, *older;

	if (!b->nr[units])
		return NULL;
	obj = b->obj[units][--b->nr[units]];
	older = b->nr[units] ? b->obj[units][b->nr[units] - 1] : NULL;
	/* nta.c would follow this link: it must be where the array says. */
	EXPECT(bin_next(obj) == older, "bin %u: %p links to %p, not %p",
	       units, obj, bin_next(obj), older);
	b->units -= units;
	b->pops++;
	blk = nta_block_of(obj);
	nta_mark_live(blk, nta_unit_of(blk, obj), units);
	return obj;
}

/* Merge one object the bins give up, as nta_bin_trim() does. */
static void bin_merge(struct hcpu *c, struct bins *b, void *obj,
		      unsigned int units)
{
	struct nta_block *blk = nta_block_of(obj);
	LIST_HEAD(released);

	nta_free_units(&c->pool, blk, nta_unit_of(blk, obj), units, &released);
	b->merged++;
	if (b->merged_hook)
		b->merged_hook(b, obj, units, !list_empty(&released));
	h_release(c, &released);
}

void bin_trim(struct hcpu *c, struct bins *b, unsigned int units,
	      unsigned int keep)
{
	void **bin = b->obj[units];
	unsigned int merge = b->nr[units] - min(keep, b->nr[units]), i;

	for (i = 0; i < merge; i++) {
		b->nr[units]--;
		b->units -= units;
		bin_merge(c, b, bin[i], units);
	}
	memmove(bin, bin + merge, b->nr[units] * sizeof(*bin));
	/* The oldest kept object ends the list, as in nta_bin_trim(). */
	if (merge && b->nr[units])
		bin_set_next(bin[0], NULL);
}

/* nta_bins_flush(): before the pool grows, on trim, hotplug, switch-off. */
void bins_flush(struct hcpu *c, struct bins *b)
{
	unsigned int u;

	for (u = 1; u < NTA_NR_LISTS && b->units; u++)
		if (b->nr[u])
			bin_trim(c, b, u, 0);
	b->flushes++;
}

/* nta_bins_flush() then nta_spares_reset(): trim, shrinker, hotplug, switch-off. */
void bins_reset(struct hcpu *c, struct bins *b)
{
	bins_flush(c, b);
	bins_set_shift(b, 0);
	b->overflows = 0;
}

/* nta_alloc()'s fast path, then nta_alloc_locked() and its growth. */
void *bins_alloc(struct hcpu *c, struct bins *b, unsigned int size)
{
	void *obj = bin_pop(b, nta_size_to_units(size));

	if (obj)
		return obj;
	obj = nta_pool_alloc(&c->pool, size);
	if (!obj && b->units) {
		/* Binned objects may merge into a big enough chunk. */
		bins_flush(c, b);
		obj = nta_pool_alloc(&c->pool, size);
	}
	return obj ?: h_alloc(c, size);
}

/* nta_free() on the owner, and nta_free_to_bin() when its bin is full. */
enum nta_bad_free bins_free(struct hcpu *c, struct bins *b, void *obj,
			    unsigned int size)
{
	unsigned int units = nta_size_to_units(size);
	enum nta_bad_free why;

	why = nta_check_object(nta_block_of(obj), obj, size);
	if (why)
		return why;
	if (b->nr[units] >= bin_cap(b, units))
		bin_trim(c, b, units, b->nr[units] / 2);
	/* Lengths that went out of use must not keep out current ones. */
	if (b->units + units > b->limit)
		bins_flush(c, b);
	if (b->units + units <= b->limit)
		bin_push(b, obj, units);
	else	/* longer than the CPU's cap: not with 4 KiB pages */
		bin_merge(c, b, obj, units);
	return NTA_FREE_OK;
}

/*
 * nta_rb_free_one(): into the bin if there is room, else merged on its
 * own, an overflow; a drain does not empty other bins to make room.
 */
enum nta_bad_free bins_free_drained(struct hcpu *c, struct bins *b, void *obj,
				    unsigned int size)
{
	unsigned int units = nta_size_to_units(size);
	enum nta_bad_free why;

	why = nta_check_object(nta_block_of(obj), obj, size);
	if (why)
		return why;
	if (bin_has_room(b, units)) {
		bin_push(b, obj, units);
		return NTA_FREE_OK;
	}
	/* Merged only because the bins are full: they will grow. */
	b->overflows++;
	b->drain_overflows++;
	bin_merge(c, b, obj, units);
	return NTA_FREE_OK;
}

/* nta_rb_drain()'s end, and nta_bins_on_overflow(). */
void bins_drain_end(struct bins *b)
{
	b->drains++;
	if (b->drain_overflows && b->shift < NTA_BIN_SHIFT_MAX) {
		bins_set_shift(b, b->shift + 1);
		b->raises++;
	}
	b->drain_overflows = 0;
}

/* nta_bins_decay() */
bool bins_decay(struct hcpu *c, struct bins *b)
{
	bool lower = !b->overflows && b->shift;
	unsigned int u;

	b->ticks++;
	if (lower) {
		bins_set_shift(b, b->shift - 1);
		b->lowerings++;
		for (u = 1; u < NTA_NR_LISTS; u++)
			if (b->nr[u] > bin_cap(b, u))
				bin_trim(c, b, u, bin_cap(b, u));
		if (b->units > b->limit)
			bins_flush(c, b);
	}
	b->overflows = 0;
	return lower;
}

unsigned int bin_check_obj(const struct hcpu *c, const void *obj,
			   unsigned int units, const void *older)
{
	const struct nta_block *blk = nta_block_of(obj);
	unsigned int unit = nta_unit_of(blk, obj), end = unit + units;

	if (blk->pool != &c->pool || ((unsigned long)obj & (NTA_UNIT - 1)) ||
	    unit < NTA_HDR_UNITS || end > NTA_BLOCK_UNITS) {
		t_fail(__FILE__, __LINE__, "bin %u: %p is no unit of this pool",
		       units, obj);
		return 1;
	}
	if (!test_bit(unit, blk->start) || nta_cls(blk, unit) ||
	    test_bit(unit, blk->pending) ||
	    find_next_zero_bit(blk->used, end, unit) != end ||
	    nta_object_units(blk, unit) != units) {
		t_fail(__FILE__, __LINE__,
		       "bin %u: %p not parked: start %d cls %u pending %d length %u",
		       units, obj, test_bit(unit, blk->start), nta_cls(blk, unit),
		       test_bit(unit, blk->pending), nta_object_units(blk, unit));
		return 1;
	}
	if (bin_next(obj) != older) {
		t_fail(__FILE__, __LINE__, "bin %u: %p links to %p, not %p",
		       units, obj, bin_next(obj), older);
		return 1;
	}
	return 0;
}

unsigned int bins_check(const struct hcpu *c, const struct bins *b)
{
	unsigned int u, i, errors = 0;
	unsigned long units = 0;

	if (b->shift > NTA_BIN_SHIFT_MAX ||
	    b->limit != (unsigned int)NTA_BINS_UNITS << b->shift) {
		t_fail(__FILE__, __LINE__, "bins at shift %u (max %u), limit %u",
		       b->shift, NTA_BIN_SHIFT_MAX, b->limit);
		return 1;
	}
	for (u = 1; u < NTA_NR_LISTS && errors < 5; u++) {
		if (b->nr[u] > bin_cap(b, u) || b->cap0[u] != bin_cap0(u)) {
			t_fail(__FILE__, __LINE__, "bin %u holds %u, cap %u (%u << %u)",
			       u, b->nr[u], bin_cap(b, u), b->cap0[u], b->shift);
			errors++;
			continue;
		}
		for (i = 0; i < b->nr[u] && errors < 5; i++)
			errors += bin_check_obj(c, b->obj[u][i], u,
						i ? b->obj[u][i - 1] : NULL);
		units += (unsigned long)b->nr[u] * u;
	}
	if (!errors && (units != b->units || b->units > b->limit)) {
		t_fail(__FILE__, __LINE__,
		       "bins hold %lu units, count %u, limit %u", units,
		       b->units, b->limit);
		errors++;
	}
	return errors;
}
