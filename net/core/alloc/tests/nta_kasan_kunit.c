// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite nta_kasan: KASAN sees NTA objects as it sees kmalloc()'s.
 *
 * Unlike the other NTA suites this file is instrumented.  Each case makes
 * one bad access to an NTA object and expects exactly one KASAN report of
 * the right kind, read from the console as mm/kasan/kasan_test_c.c does;
 * one case makes only good accesses, skb heads included, and expects none.
 *
 * A KASAN report taints the kernel, which switches lockdep off for the
 * rest of the boot, and without kasan_multi_shot only the first report
 * is printed.  So the suite runs only when kasan_multi_shot is on the
 * command line (run it in a boot of its own, e.g. with
 * kunit.filter_glob=nta_kasan) and skips otherwise.  The bad accesses run
 * in a work item, because a KASAN report in a KUnit test's own task fails
 * the test (mm/kasan/report.c); the console lines between
 * NTA-SPLAT-EXPECTED-BEGIN and -END are the ones the test provoked.
 */

#include <kunit/test.h>
#include <linux/init.h>
#include <linux/kasan.h>
#include <linux/mm.h>
#include <linux/nta.h>
#include <linux/skbuff.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/workqueue.h>
#include <trace/events/printk.h>

/* What the console said while a case ran. */
static struct {
	unsigned int reports;
	char first[64];
} nta_kseen;

static void nta_kprobe_console(void *ignore, const char *buf, size_t len)
{
	const char *p = strnstr(buf, "BUG: KASAN: ", len);

	if (!p)
		return;
	if (!nta_kseen.reports++) {
		len = min_t(size_t, buf + len - p, sizeof(nta_kseen.first) - 1);
		memcpy(nta_kseen.first, p, len);
		nta_kseen.first[len] = '\0';
	}
}

/* A scenario, run in a work item on one CPU. */
struct nta_kcase {
	struct work_struct work;
	void (*fn)(struct nta_kcase *kc);
	unsigned int size;
	int other;		/* a second CPU, or -1 */
	u8 *obj;
	bool freed;
	bool ran;
	s64 bad_frees;
};

static void nta_kcase_fn(struct work_struct *work)
{
	struct nta_kcase *kc = container_of(work, struct nta_kcase, work);

	kc->fn(kc);
}

static void nta_krun_on(struct nta_kcase *kc, unsigned int cpu,
			void (*fn)(struct nta_kcase *kc))
{
	kc->fn = fn;
	INIT_WORK_ONSTACK(&kc->work, nta_kcase_fn);
	schedule_work_on(cpu, &kc->work);
	flush_work(&kc->work);
	destroy_work_on_stack(&kc->work);
}

/*
 * Run @fn on this CPU between the markers and check the reports: exactly
 * one whose first line holds @kind, or none when @kind is NULL.
 */
static void nta_kexpect(struct kunit *test, struct nta_kcase *kc,
			void (*fn)(struct nta_kcase *kc), const char *kind)
{
	unsigned int cpu = raw_smp_processor_id();

	memset(&nta_kseen, 0, sizeof(nta_kseen));
	/* No markers when none is expected: any report is then unexpected. */
	if (kind)
		pr_info("NTA-SPLAT-EXPECTED-BEGIN %s\n", kind);
	nta_krun_on(kc, cpu, fn);
	if (kind)
		pr_info("NTA-SPLAT-EXPECTED-END\n");
	KUNIT_ASSERT_TRUE_MSG(test, kc->ran, "NTA had no object of %u bytes",
			      kc->size);
	if (!kind) {
		KUNIT_EXPECT_EQ_MSG(test, nta_kseen.reports, 0, "%s",
				    nta_kseen.first);
		return;
	}
	KUNIT_EXPECT_EQ(test, nta_kseen.reports, 1);
	KUNIT_EXPECT_NOT_NULL_MSG(test, strstr(nta_kseen.first, kind),
				  "want \"%s\", got \"%s\"", kind,
				  nta_kseen.first);
}

static s64 nta_kbad_frees(void)
{
	struct nta_stats st;

	nta_get_stats(&st, -1);
	return st.bad_frees;
}

static void nta_kread_past_end(struct nta_kcase *kc)
{
	u8 *p = nta_alloc(kc->size, GFP_KERNEL);

	if (!p)
		return;
	kc->ran = true;
	/* The last byte asked for is fine; the rounding tail is a redzone. */
	READ_ONCE(p[kc->size - 1]);
	READ_ONCE(p[kc->size]);
	nta_free(p, kc->size);
}

static void nta_kuse_after_free(struct nta_kcase *kc)
{
	u8 *p = nta_alloc(kc->size, GFP_KERNEL);

	if (!p)
		return;
	kc->ran = true;
	nta_free(p, kc->size);
	READ_ONCE(p[kc->size / 2]);
}

static void nta_kdouble_free(struct nta_kcase *kc)
{
	u8 *p = nta_alloc(kc->size, GFP_KERNEL);

	if (!p)
		return;
	kc->ran = true;
	nta_free(p, kc->size);
	kc->bad_frees = nta_kbad_frees();
	nta_free(p, kc->size);
	kc->bad_frees = nta_kbad_frees() - kc->bad_frees;
}

static void nta_kalloc_here(struct nta_kcase *kc)
{
	kc->obj = nta_alloc(kc->size, GFP_KERNEL);
}

static void nta_kfree_here(struct nta_kcase *kc)
{
	nta_free(kc->obj, kc->size);
}

/* Freed on another CPU: poisoned by the freer, before the owner drains. */
static void nta_kremote_use_after_free(struct nta_kcase *kc)
{
	struct nta_kcase other = { .obj = kc->obj, .size = kc->size };

	if (!kc->obj)
		return;
	kc->ran = true;
	nta_krun_on(&other, kc->other, nta_kfree_here);
	READ_ONCE(kc->obj[0]);
}

/*
 * The KASAN call the series adds, on a page of the page allocator's: the
 * poisoned range reports, its neighbours and the range once unpoisoned
 * do not.
 */
static void nta_kpoison_range(struct nta_kcase *kc)
{
	u8 *p = kc->obj;

	kc->ran = true;
	kasan_poison_range(p + 128, 64, kc->freed);
	READ_ONCE(p[127]);
	READ_ONCE(p[192]);
	READ_ONCE(p[160]);
	kasan_unpoison_range(p + 128, 64);
	READ_ONCE(p[128]);
	READ_ONCE(p[191]);
}

static const unsigned int nta_kclean_sizes[] = { 1, 64, 100, 1500, 4096 };

/* Every byte asked for, a reused binned object, and skb heads: no report. */
static void nta_kclean(struct nta_kcase *kc)
{
	struct sk_buff *skb;
	unsigned int i, n;
	u8 *p;

	for (i = 0; i < ARRAY_SIZE(nta_kclean_sizes); i++) {
		n = nta_kclean_sizes[i];
		p = nta_alloc(n, GFP_KERNEL);
		if (!p)
			return;
		memset(p, 0xa5, n);
		nta_free(p, n);
		/* From the bin it was just parked in, unpoisoned again. */
		p = nta_alloc(n, GFP_KERNEL | __GFP_ZERO);
		if (!p)
			return;
		if (memchr_inv(p, 0, n))
			return;
		memset(p, 0x5a, n);
		nta_free(p, n);
	}
	skb = alloc_skb(1500, GFP_KERNEL);
	/* A head from NTA, not from the kmalloc fallback. */
	if (!skb || !skb->__tsize) {
		kfree_skb(skb);
		return;
	}
	skb_put(skb, skb_tailroom(skb));
	memset(skb->data, 0x3c, skb->len);
	skb_shinfo(skb)->gso_size = 1;
	kfree_skb(skb);
	kc->ran = true;
}

static void nta_kneed(struct kunit *test)
{
	if (!IS_ENABLED(CONFIG_KASAN_GENERIC) || !kasan_enabled())
		/* Lower case: the console scan takes capitals for a report. */
		kunit_skip(test, "needs generic kasan");
	if (!strstr(saved_command_line, "kasan_multi_shot"))
		kunit_skip(test, "needs kasan_multi_shot on the command line");
	if (!nta_enabled())
		kunit_skip(test, "NTA is switched off");
	if (!IS_ENABLED(CONFIG_TRACEPOINTS))
		kunit_skip(test, "needs tracepoints to see the console");
}

static void nta_kasan_read_past_end(struct kunit *test)
{
	struct nta_kcase kc = { .size = 100 };

	nta_kneed(test);
	nta_kexpect(test, &kc, nta_kread_past_end, "slab-out-of-bounds in nta_kread_past_end");
}

static void nta_kasan_use_after_free(struct kunit *test)
{
	struct nta_kcase kc = { .size = 1500 };

	nta_kneed(test);
	nta_kexpect(test, &kc, nta_kuse_after_free, "use-after-free in nta_kuse_after_free");
}

static void nta_kasan_double_free(struct kunit *test)
{
	struct nta_kcase kc = { .size = 256 };

	nta_kneed(test);
	nta_kexpect(test, &kc, nta_kdouble_free,
		    "use-after-free in nta_kdouble_free");
	/* And NTA refused it. */
	KUNIT_EXPECT_EQ(test, kc.bad_frees, 1);
}

static void nta_kasan_remote_use_after_free(struct kunit *test)
{
	struct nta_kcase kc = { .size = 700 };
	unsigned int cpu;

	nta_kneed(test);
	cpu = raw_smp_processor_id();
	kc.other = cpumask_any_but(cpu_online_mask, cpu);
	if (kc.other >= nr_cpu_ids)
		kunit_skip(test, "needs two online CPUs");
	/* Allocated on this CPU, freed on the other one, read here. */
	nta_krun_on(&kc, cpu, nta_kalloc_here);
	nta_kexpect(test, &kc, nta_kremote_use_after_free,
		    "use-after-free in nta_kremote_use_after_free");
}

static void nta_kasan_poison_range_case(struct kunit *test, bool freed,
					const char *kind)
{
	struct nta_kcase kc = { .freed = freed };
	struct page *page;

	nta_kneed(test);	/* before the page: a skip ends the case */
	page = alloc_page(GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, page);
	kc.obj = page_address(page);
	nta_kexpect(test, &kc, nta_kpoison_range, kind);
	__free_page(page);
}

static void nta_kasan_poison_range_redzone(struct kunit *test)
{
	nta_kasan_poison_range_case(test, false,
				    "slab-out-of-bounds in nta_kpoison_range");
}

static void nta_kasan_poison_range_freed(struct kunit *test)
{
	nta_kasan_poison_range_case(test, true,
				    "use-after-free in nta_kpoison_range");
}

static void nta_kasan_no_false_reports(struct kunit *test)
{
	struct nta_kcase kc = {};

	nta_kneed(test);
	nta_kexpect(test, &kc, nta_kclean, NULL);
}

/*
 * nta_warn_bad_free stays on: the double free's KASAN report comes from
 * nta_complain(), with NTA's own WARN after it, both between the markers.
 */
/* Without tracepoints every case skips (nta_kneed()) rather than fail. */
static int nta_ksuite_init(struct kunit_suite *suite)
{
	if (!IS_ENABLED(CONFIG_TRACEPOINTS))
		return 0;
	return register_trace_console(nta_kprobe_console, NULL);
}

static void nta_ksuite_exit(struct kunit_suite *suite)
{
	if (!IS_ENABLED(CONFIG_TRACEPOINTS))
		return;
	unregister_trace_console(nta_kprobe_console, NULL);
	tracepoint_synchronize_unregister();
}

static struct kunit_case nta_kasan_cases[] = {
	KUNIT_CASE(nta_kasan_poison_range_redzone),
	KUNIT_CASE(nta_kasan_poison_range_freed),
	KUNIT_CASE(nta_kasan_read_past_end),
	KUNIT_CASE(nta_kasan_use_after_free),
	KUNIT_CASE(nta_kasan_double_free),
	KUNIT_CASE(nta_kasan_remote_use_after_free),
	KUNIT_CASE(nta_kasan_no_false_reports),
	{}
};

static struct kunit_suite nta_kasan_suite = {
	.name = "nta_kasan",
	.suite_init = nta_ksuite_init,
	.suite_exit = nta_ksuite_exit,
	.test_cases = nta_kasan_cases,
};

kunit_test_suite(nta_kasan_suite);

MODULE_DESCRIPTION("KUnit tests: KASAN and the network tree allocator");
MODULE_LICENSE("GPL");
