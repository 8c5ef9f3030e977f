// SPDX-License-Identifier: GPL-2.0
/*
 * NTA harness driver: runs every test group, one TAP line per test, and
 * ends with "N passed, N failed" for this build variant.
 *
 * Environment: SEED= (model test seed), OPS= (model test operations),
 * ONLY= (run only tests whose name contains this string).
 */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"

static const struct test *groups[] = {
	unit_tests, bad_tests, model_tests, mt_tests, frag_tests, bench_tests,
};

static bool wanted(const struct test *t, const char *only)
{
	if ((t->flags & T_DEBUG_ONLY) && !IS_ENABLED(CONFIG_NTA_DEBUG))
		return false;
	if ((t->flags & T_BENCH) && strcmp(NTA_VARIANT, "o2"))
		return false;
	return !only || strstr(t->name, only);
}

int main(void)
{
	const char *only = getenv("ONLY");
	unsigned int i, total = 0, n = 0, passed = 0, failed = 0;
	const struct test *t;
	double t0 = now_sec();

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* As the kernel does once at boot: a secret for free-list links. */
	nta_link_secret = ((unsigned long)rand() << 33) ^ (unsigned long)time(NULL) ^
			  (unsigned long)&only;
	for (i = 0; i < ARRAY_SIZE(groups); i++)
		for (t = groups[i]; t->name; t++)
			total += wanted(t, only);
	printf("TAP version 13\n1..%u\n", total);
	t_note("variant %s: CONFIG_NTA_DEBUG=%d, CONFIG_SLAB_FREELIST_HARDENED=%d, block %lu B, unit %u B, header %lu units, max object %lu B",
	       NTA_VARIANT, IS_ENABLED(CONFIG_NTA_DEBUG),
	       IS_ENABLED(CONFIG_SLAB_FREELIST_HARDENED), NTA_BLOCK_SIZE, NTA_UNIT,
	       (unsigned long)NTA_HDR_UNITS, (unsigned long)NTA_MAX_SIZE);
	for (i = 0; i < ARRAY_SIZE(groups); i++) {
		for (t = groups[i]; t->name; t++) {
			unsigned long warns = shim_warn_count;
			double ts;

			if (!wanted(t, only))
				continue;
			t_failed = 0;
			ts = now_sec();
			t->fn();
			if (shim_warn_count != warns && !strstr(t->name, "bad"))
				t_fail(__FILE__, __LINE__, "%lu unexpected WARN(s)",
				       shim_warn_count - warns);
			if (atomic_read(&h_blocks_live))
				t_fail(__FILE__, __LINE__, "%d blocks not given back",
				       atomic_read(&h_blocks_live));
			atomic_set(&h_blocks_live, 0);
			h_block_hook = NULL;
			printf("%sok %u - %s/%s # %.2f s\n", t_failed ? "not " : "",
			       ++n, NTA_VARIANT, t->name, now_sec() - ts);
			if (t_failed)
				failed++;
			else
				passed++;
		}
	}
	t_note("variant %s done in %.1f s", NTA_VARIANT, now_sec() - t0);
	printf("# %s: %u passed, %u failed\n", NTA_VARIANT, passed, failed);
	return failed ? 1 : 0;
}
