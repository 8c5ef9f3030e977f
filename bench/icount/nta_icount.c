// SPDX-License-Identifier: GPL-2.0
/*
 * nta_icount: a QEMU TCG plugin (x86-64 guest) that counts, per vCPU,
 * between two marker instructions of net/core/alloc/nta_bench.c, the guest
 * instructions executed, the interrupt-flag changes (cli, sti, popf), the
 * pushf (local_irq_save() reads the flags with it) and the locked
 * instructions (LOCK prefix, or xchg with memory, which is locked without
 * one).  make bench-icount loads it (scripts/nta-boot.sh); the report
 * (scripts/nta-bench-report.py) turns the windows into figures per pair.
 *
 * Markers: register exchanges that change nothing, which compilers do not
 * emit: 66 87 d2 (xchg %dx,%dx) and 66 87 f6 (xchg %si,%si) send a 0 or
 * a 1 bit of the next window's ID, most significant first; 66 87 db
 * (xchg %bx,%bx) opens the window, 66 87 c9 (xchg %cx,%cx) closes it.
 * A window spans every vCPU (the xcpu rows run on two): it reads all of
 * their counters at the start and at the stop marker, whichever vCPU runs
 * them; the window counts what runs strictly between the two markers.
 * Each stop prints one line through qemu_plugin_outs() (-d plugin -D FILE):
 *
 *   nta-icount id=ID cpu=V v0=I,F,P,L v1=I,F,P,L all=I,F,P,L
 *
 * (V: the vCPU that opened it; I instructions, F irq-flag changes, P
 * pushf, L locked instructions).  Counting: one callback per executed
 * translation block adds the block's precomputed counts to its vCPU's
 * (QEMU 7.2's inline adds have one target for all vCPUs, so they could
 * not tell the vCPUs apart), and a marker inside a block corrects for the
 * part of the block after it.  A block left early by an exception counts
 * whole; the bench's loops take none.  Reading another vCPU's counters is
 * safe only with one TCG thread (-accel tcg,thread=single, which -icount
 * implies).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu_plugin.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

struct counts {
	uint64_t insns, irqf, pushf, locked;
};

enum mark { MARK_NONE, MARK_BIT0, MARK_BIT1, MARK_START, MARK_STOP };

/* A marker instruction: what it is, and the rest of its block after it. */
struct marker {
	enum mark kind;
	struct counts tail;
};

struct vcpu {
	struct counts now, base;
	uint32_t id;		/* bits of the next window's ID */
};

static struct vcpu *vcpus;
static unsigned int nr_vcpus;
static int open_cpu = -1;	/* the vCPU that opened the window, or -1 */
static uint32_t open_id;
static uint64_t windows, stray_stops;

static void add(struct counts *a, const struct counts *b, int sign)
{
	a->insns += sign * b->insns;
	a->irqf += sign * b->irqf;
	a->pushf += sign * b->pushf;
	a->locked += sign * b->locked;
}

/* What one x86-64 instruction is, from its bytes, added to @c. */
static enum mark classify(const uint8_t *p, size_t len, struct counts *c)
{
	static const uint8_t marks[] = { 0xd2, 0xf6, 0xdb, 0xc9 };
	size_t i = 0;
	int lock = 0;
	uint8_t op;

	c->insns++;
	if (len == 3 && p[0] == 0x66 && p[1] == 0x87) {
		const uint8_t *m = memchr(marks, p[2], sizeof(marks));

		if (m)
			return MARK_BIT0 + (m - marks);
	}
	/* Legacy prefixes in any order, then at most one REX. */
	for (; i < len; i++) {
		if (p[i] == 0xf0)
			lock = 1;
		else if (!memchr("\xf2\xf3\x2e\x36\x3e\x26\x64\x65\x66\x67", p[i], 10))
			break;
	}
	if (i < len && (p[i] & 0xf0) == 0x40)
		i++;
	if (i >= len)
		return MARK_NONE;
	op = p[i];
	c->irqf += op == 0xfa || op == 0xfb || op == 0x9d;
	c->pushf += op == 0x9c;
	/* xchg with a memory operand (ModRM.mod != 3) locks the bus implicitly. */
	c->locked += lock || ((op == 0x86 || op == 0x87) && i + 1 < len &&
			      p[i + 1] >> 6 != 3);
	return MARK_NONE;
}

static void tb_exec(unsigned int cpu, void *udata)
{
	if (cpu < nr_vcpus)
		add(&vcpus[cpu].now, udata, 1);
}

static void window_stop(unsigned int cpu, const struct counts *tail)
{
	char line[128 + 96 * 17], *s = line, *end = line + sizeof(line);
	struct counts all = { 0 }, d;
	unsigned int u;

	s += snprintf(s, end - s, "nta-icount id=%u cpu=%d", open_id, open_cpu);
	for (u = 0; u <= nr_vcpus; u++) {
		if (u < nr_vcpus) {
			d = vcpus[u].now;
			add(&d, &vcpus[u].base, -1);
			if (u == cpu) {
				add(&d, tail, -1);
				d.insns--;	/* the stop marker itself */
			}
			add(&all, &d, 1);
		} else {
			d = all;
		}
		if (end - s > 96)
			s += snprintf(s, end - s, u < nr_vcpus ? " v%u=" : " all=", u);
		if (end - s > 96)
			s += snprintf(s, end - s, "%llu,%llu,%llu,%llu",
				      (unsigned long long)d.insns,
				      (unsigned long long)d.irqf,
				      (unsigned long long)d.pushf,
				      (unsigned long long)d.locked);
	}
	snprintf(s, end - s, "\n");
	qemu_plugin_outs(line);
	windows++;
	open_cpu = -1;
}

static void marker_exec(unsigned int cpu, void *udata)
{
	const struct marker *m = udata;
	unsigned int u;

	if (cpu >= nr_vcpus)
		return;
	switch (m->kind) {
	case MARK_BIT0:
	case MARK_BIT1:
		vcpus[cpu].id = vcpus[cpu].id << 1 | (m->kind == MARK_BIT1);
		break;
	case MARK_START:
		for (u = 0; u < nr_vcpus; u++)
			vcpus[u].base = vcpus[u].now;
		/* The rest of this block was counted on entry, yet runs inside. */
		add(&vcpus[cpu].base, &m->tail, -1);
		/* Only the last 16 bits: an interrupted ID leaves no high ones. */
		open_id = vcpus[cpu].id & 0xffff;
		vcpus[cpu].id = 0;
		open_cpu = cpu;
		break;
	case MARK_STOP:
		if (open_cpu < 0)
			stray_stops++;
		else
			window_stop(cpu, &m->tail);
		break;
	default:
		break;
	}
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i, j;
	struct counts *sum = calloc(1, sizeof(*sum));
	struct qemu_plugin_insn *insn;
	struct marker *m;
	enum mark kind;

	(void)id;
	if (!sum)
		abort();
	for (i = 0; i < n; i++) {
		insn = qemu_plugin_tb_get_insn(tb, i);
		kind = classify(qemu_plugin_insn_data(insn),
				qemu_plugin_insn_size(insn), sum);
		if (kind == MARK_NONE)
			continue;
		m = calloc(1, sizeof(*m));
		if (!m)
			abort();
		m->kind = kind;
		qemu_plugin_register_vcpu_insn_exec_cb(insn, marker_exec,
						       QEMU_PLUGIN_CB_NO_REGS, m);
		for (j = i + 1; j < n; j++) {
			insn = qemu_plugin_tb_get_insn(tb, j);
			classify(qemu_plugin_insn_data(insn),
				 qemu_plugin_insn_size(insn), &m->tail);
		}
	}
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS,
					     sum);
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	char line[160];

	(void)id;
	(void)udata;
	snprintf(line, sizeof(line),
		 "nta-icount: %llu windows, %llu stops without a start%s\n",
		 (unsigned long long)windows, (unsigned long long)stray_stops,
		 open_cpu >= 0 ? ", one window left open" : "");
	qemu_plugin_outs(line);
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	char line[160];

	(void)argc;
	(void)argv;
	if (!info->system_emulation || strcmp(info->target_name, "x86_64")) {
		fprintf(stderr, "nta_icount: needs qemu-system-x86_64, not %s\n",
			info->target_name);
		return -1;
	}
	nr_vcpus = info->system.max_vcpus;
	vcpus = calloc(nr_vcpus, sizeof(*vcpus));
	if (!vcpus)
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	snprintf(line, sizeof(line),
		 "nta-icount: loaded (plugin API %d, QEMU's %d..%d), %u vCPUs\n",
		 QEMU_PLUGIN_VERSION, info->version.min, info->version.cur,
		 nr_vcpus);
	qemu_plugin_outs(line);
	return 0;
}
