// SPDX-License-Identifier: GPL-2.0
/*
 * nta_icount: a QEMU TCG plugin (x86-64 guest) that counts, per vCPU,
 * between two marker instructions of net/core/alloc/nta_bench.c, the guest
 * instructions executed, the interrupt-flag changes (cli, sti, popf), the
 * pushf (local_irq_save() reads the flags with it) and the locked
 * instructions (LOCK prefix, or xchg with memory, which is locked without
 * one), and the distinct 64-byte data cache lines that loads and stores
 * touch in each pair.  make bench-icount loads it (scripts/nta-boot.sh);
 * the report (scripts/nta-bench-report.py) turns the windows into figures
 * per pair.
 *
 * Markers: register exchanges that change nothing, which compilers do not
 * emit: 66 87 d2 (xchg %dx,%dx) and 66 87 f6 (xchg %si,%si) send a 0 or
 * a 1 bit of the next window's ID, most significant first; 66 87 db
 * (xchg %bx,%bx) opens the window, 66 87 c9 (xchg %cx,%cx) closes it;
 * 66 87 ff (xchg %di,%di), at the top of each pair of a timed loop (and
 * before each free of the cross-CPU consumer), ends the vCPU's current
 * segment and starts the next.  A window spans every vCPU (the xcpu rows
 * run on two): it reads all of their counters at the start and at the
 * stop marker, whichever vCPU runs them; the window counts what runs
 * strictly between the two markers.  The segment markers are not counted
 * as instructions, so the counts are those of the loops without them.
 * Each stop prints one line through qemu_plugin_outs() (-d plugin -D FILE):
 *
 *   nta-icount id=ID cpu=V v0=I,F,P,L v1=I,F,P,L all=I,F,P,L
 *              l0=D,S,M l1=D,S,M lall=D,S,M win=W
 *
 * (one line; V: the vCPU that opened it; I instructions, F irq-flag
 * changes, P pushf, L locked instructions; D the sum over the vCPU's
 * segments of the distinct lines each touched, S the part of D that lies
 * in the vCPU's stack, M the segment markers it ran; W the distinct lines
 * the whole window touched, all vCPUs together).
 *
 * Counting instructions: a callback before each executed instruction adds
 * its precomputed counts to its vCPU's (QEMU 7.2's inline adds have one
 * target for all vCPUs, so they could not tell the vCPUs apart).  Not one
 * per translation block: QEMU leaves some blocks before their end and goes
 * on in a block that starts inside them (seen at a static key's nop in
 * the free path, one instruction counted twice per pair, depending on
 * where the linker put the code), so a block's count taken at its entry
 * is not what ran.  Reading another vCPU's counters is safe only with one
 * TCG thread (-accel tcg,thread=single, which -icount implies).
 *
 * Counting cache lines: a memory callback on every instruction gets the
 * guest virtual (linear, segment base included) address and size of each
 * load and store; an access that straddles a line counts both.  Virtual
 * lines stand for physical ones: the kernel maps each physical line once
 * in the direct map and the per-CPU areas, which is where allocator state
 * lives.  A segment's lines go into a hash set that a segment marker
 * empties, so D / M is the mean working set of one pair: what a pair
 * touches, however many times, which is what decides its cost once the
 * lines are not in L1.  Lines in the stack are counted apart (S): a line
 * is in the stack when it lies in the THREAD_SIZE-aligned region (16 KiB,
 * x86-64 without KASAN) that the vCPU's last push, pop, call, ret, leave,
 * pushf or popf touched.  Instruction fetches are not counted.
 *
 * To see which lines a pair touches: NTA_ICOUNT_DUMP=ID[,ID...] in QEMU's
 * environment prints, for the 1000th pair of each window named, every
 * line it touches, with the address of the instruction that touched it
 * first (nta-icount-dump lines), to be read against System.map.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qemu_plugin.h"

QEMU_PLUGIN_EXPORT int qemu_plugin_version = QEMU_PLUGIN_VERSION;

#define LINE_SHIFT	6		/* 64-byte cache lines */
#define STACK_SIZE	(16 * 1024)	/* x86-64 THREAD_SIZE without KASAN */

struct counts {
	uint64_t insns, irqf, pushf, locked;
};

enum mark {
	MARK_NONE, MARK_BIT0, MARK_BIT1, MARK_START, MARK_STOP, MARK_SEG
};

/* A marker instruction: what it is. */
struct marker {
	enum mark kind;
};

/*
 * A set of line numbers, open addressing.  An entry belongs to the set
 * when its generation is the set's: emptying it is one increment, so that
 * a segment of a few lines costs a few probes, not a clear of the table.
 */
struct lineset {
	struct slot {
		uint64_t line;
		uint32_t gen;
	} *slot;
	uint32_t mask, gen, n;
};

/* What a window's segments on one vCPU touched, summed. */
struct lines {
	uint64_t distinct, stack, marks;
};

struct vcpu {
	struct counts now, base;
	uint32_t id;		/* bits of the next window's ID */
	uint64_t stack;		/* base of the stack of its last push/pop */
	struct lineset seg;	/* the lines of its current segment */
	uint64_t seg_stack;	/* how many of them are in the stack */
	struct lines sum;	/* its segments in the open window */
};

static struct vcpu *vcpus;
static unsigned int nr_vcpus;
static int open_cpu = -1;	/* the vCPU that opened the window, or -1 */
static uint32_t open_id;
static uint64_t windows, stray_stops;
static struct lineset win_lines;	/* the open window's, all vCPUs */
/*
 * NTA_ICOUNT_DUMP=ID[,ID...] in QEMU's environment: print each line that
 * the DUMP_PAIRth pair of these windows touches first, with the address of
 * the instruction that touched it, to be read against System.map.
 */
#ifndef DUMP_PAIR
#define DUMP_PAIR	1000
#endif
static uint8_t dump_ids[(1 << 16) / 8];	/* IDs are 16 bits */
/*
 * NTA_ICOUNT_PROF=ID[,ID...]: for these windows, print the instructions
 * each translation block ran in them, all vCPUs together (nta-icount-prof
 * lines, by the block's first address), to be summed per function against
 * System.map: where a row's instructions go.
 */
static uint8_t prof_ids[(1 << 16) / 8];

/* An instruction: what it adds to the counts, and its block. */
struct insn_info {
	struct counts c;
	struct tb_info *tb;
	int marker;		/* a marker: not in the profile */
};

/*
 * A translation block: where it starts, what it ran in a profiled window,
 * and its instructions.  One allocation per block, never freed: QEMU 7.2
 * does not tell a plugin when it drops a block.
 */
struct tb_info {
	uint64_t vaddr, prof;
	struct tb_info *next_ran;
	struct insn_info insn[];
};

static struct tb_info *prof_ran;	/* blocks that ran in the open window */

static void set_init(struct lineset *s, uint32_t size)
{
	s->slot = calloc(size, sizeof(*s->slot));
	if (!s->slot)
		abort();
	s->mask = size - 1;
	s->gen = 1;		/* calloc()'s zeroes are no one's */
	s->n = 0;
}

static void set_clear(struct lineset *s)
{
	s->n = 0;
	if (++s->gen)
		return;
	/* Wrapped: entries 2^32 clears old would look current. */
	memset(s->slot, 0, (s->mask + 1) * sizeof(*s->slot));
	s->gen = 1;
}

static uint32_t set_hash(uint64_t line, uint32_t mask)
{
	return (uint32_t)((line * 0x9e3779b97f4a7c15ULL) >> 32) & mask;
}

static int set_add(struct lineset *s, uint64_t line);

/* Twice the size, the current entries moved over. */
static void set_grow(struct lineset *s)
{
	struct lineset old = *s;
	uint32_t i;

	set_init(s, 2 * (old.mask + 1));
	for (i = 0; i <= old.mask; i++)
		if (old.slot[i].gen == old.gen)
			set_add(s, old.slot[i].line);
	free(old.slot);
}

/* Adds @line; returns 1 when it was not in the set yet. */
static int set_add(struct lineset *s, uint64_t line)
{
	uint32_t h;

	if (2 * (s->n + 1) > s->mask + 1)	/* at most half full */
		set_grow(s);
	for (h = set_hash(line, s->mask); s->slot[h].gen == s->gen;
	     h = (h + 1) & s->mask)
		if (s->slot[h].line == line)
			return 0;
	s->slot[h].line = line;
	s->slot[h].gen = s->gen;
	s->n++;
	return 1;
}

/* The vCPU's current segment is over: into the window's sums, emptied. */
static void seg_close(struct vcpu *v)
{
	v->sum.distinct += v->seg.n;
	v->sum.stack += v->seg_stack;
	set_clear(&v->seg);
	v->seg_stack = 0;
}

static void add(struct counts *a, const struct counts *b, int sign)
{
	a->insns += sign * b->insns;
	a->irqf += sign * b->irqf;
	a->pushf += sign * b->pushf;
	a->locked += sign * b->locked;
}

/* Whether opcode @op (after prefixes and REX) pushes or pops: stack data. */
static int stack_op(const uint8_t *p, size_t i, size_t len)
{
	uint8_t op = p[i], reg = i + 1 < len ? p[i + 1] >> 3 & 7 : 0;

	return (op >= 0x50 && op <= 0x5f) ||	/* push, pop reg */
		op == 0x68 || op == 0x6a ||	/* push imm */
		op == 0x9c || op == 0x9d ||	/* pushf, popf */
		op == 0xc2 || op == 0xc3 ||	/* ret */
		op == 0xc9 || op == 0xe8 ||	/* leave, call */
		op == 0x8f ||			/* pop r/m */
		(op == 0xff && (reg == 2 || reg == 6));	/* call, push r/m */
}

/*
 * What one x86-64 instruction is, from its bytes, added to @c; *@stack
 * says whether it pushes or pops.
 */
static enum mark classify(const uint8_t *p, size_t len, struct counts *c,
			  int *stack)
{
	static const uint8_t marks[] = { 0xd2, 0xf6, 0xdb, 0xc9, 0xff };
	size_t i = 0;
	int lock = 0;
	uint8_t op;

	*stack = 0;
	if (len == 3 && p[0] == 0x66 && p[1] == 0x87) {
		const uint8_t *m = memchr(marks, p[2], sizeof(marks));

		if (m) {
			/* Segment markers sit in the loops: not counted. */
			if (MARK_BIT0 + (m - marks) != MARK_SEG)
				c->insns++;
			return MARK_BIT0 + (m - marks);
		}
	}
	c->insns++;
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
	*stack = stack_op(p, i, len);
	c->irqf += op == 0xfa || op == 0xfb || op == 0x9d;
	c->pushf += op == 0x9c;
	/* xchg with a memory operand (ModRM.mod != 3) locks the bus implicitly. */
	c->locked += lock || ((op == 0x86 || op == 0x87) && i + 1 < len &&
			      p[i + 1] >> 6 != 3);
	return MARK_NONE;
}

static void insn_exec(unsigned int cpu, void *udata)
{
	struct insn_info *ii = udata;
	struct tb_info *t = ii->tb;

	if (cpu >= nr_vcpus)
		return;
	add(&vcpus[cpu].now, &ii->c, 1);
	if (open_cpu < 0 || ii->marker ||
	    !(prof_ids[open_id / 8] & 1 << open_id % 8))
		return;
	if (!t->prof) {
		t->next_ran = prof_ran;
		prof_ran = t;
	}
	t->prof += ii->c.insns;
}

/* Forget what blocks ran in a profiled window. */
static void prof_reset(void)
{
	struct tb_info *t;

	for (t = prof_ran; t; t = t->next_ran)
		t->prof = 0;
	prof_ran = NULL;
}

/* The profiled window's blocks, printed and reset. */
static void prof_print(void)
{
	struct tb_info *t;
	char buf[96];

	for (t = prof_ran; t; t = t->next_ran) {
		snprintf(buf, sizeof(buf), "nta-icount-prof id=%u pc=0x%llx insns=%llu\n",
			 open_id, (unsigned long long)t->vaddr,
			 (unsigned long long)t->prof);
		qemu_plugin_outs(buf);
		t->prof = 0;
	}
	prof_ran = NULL;
}

/*
 * A memory callback's udata: the instruction's address, shifted left by
 * one (canonical addresses lose nothing: bits 63..47 are equal), and in
 * bit 0 whether it pushes or pops.
 */
static void *insn_udata(uint64_t vaddr, int stack)
{
	return (void *)(uintptr_t)(vaddr << 1 | !!stack);
}

static void dump(unsigned int cpu, uint64_t line, int stack, void *udata)
{
	char buf[160];

	snprintf(buf, sizeof(buf),
		 "nta-icount-dump id=%u cpu=%u pair=%d line=0x%llx%s insn=0x%llx\n",
		 open_id, cpu, DUMP_PAIR, (unsigned long long)line << LINE_SHIFT,
		 stack ? " stack" : "",
		 (unsigned long long)((int64_t)(uintptr_t)udata >> 1));
	qemu_plugin_outs(buf);
}

/* A load or store: its lines into the vCPU's segment and the window. */
static void mem_exec(unsigned int cpu, qemu_plugin_meminfo_t info,
		     uint64_t vaddr, void *udata)
{
	uint64_t line, last;
	struct vcpu *v;
	int stack;

	if (cpu >= nr_vcpus)
		return;
	v = &vcpus[cpu];
	/* Tracked outside windows too: a window's first access may be on it. */
	if ((uintptr_t)udata & 1)
		v->stack = vaddr & ~(uint64_t)(STACK_SIZE - 1);
	if (open_cpu < 0)
		return;
	line = vaddr >> LINE_SHIFT;
	last = (vaddr + (1u << qemu_plugin_mem_size_shift(info)) - 1) >> LINE_SHIFT;
	for (; line <= last; line++) {
		if (set_add(&v->seg, line)) {
			stack = ((line << LINE_SHIFT) &
				 ~(uint64_t)(STACK_SIZE - 1)) == v->stack;
			v->seg_stack += stack;
			if (dump_ids[open_id / 8] & 1 << open_id % 8 &&
			    cpu == (unsigned int)open_cpu &&
			    v->sum.marks == DUMP_PAIR)
				dump(cpu, line, stack, udata);
		}
		set_add(&win_lines, line);
	}
}

static void window_stop(unsigned int cpu)
{
	char line[256 + 160 * 17], *s = line, *end = line + sizeof(line);
	struct counts all = { 0 }, d;
	struct lines lall = { 0 }, *l;
	unsigned int u;

	s += snprintf(s, end - s, "nta-icount id=%u cpu=%d", open_id, open_cpu);
	for (u = 0; u <= nr_vcpus; u++) {
		if (u < nr_vcpus) {
			d = vcpus[u].now;
			add(&d, &vcpus[u].base, -1);
			if (u == cpu)
				d.insns--;	/* the stop marker itself */
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
	for (u = 0; u <= nr_vcpus; u++) {
		if (u < nr_vcpus) {
			seg_close(&vcpus[u]);	/* the last segment ends here */
			l = &vcpus[u].sum;
			lall.distinct += l->distinct;
			lall.stack += l->stack;
			lall.marks += l->marks;
		} else {
			l = &lall;
		}
		if (end - s > 96)
			s += snprintf(s, end - s, u < nr_vcpus ? " l%u=" : " lall=", u);
		if (end - s > 96)
			s += snprintf(s, end - s, "%llu,%llu,%llu",
				      (unsigned long long)l->distinct,
				      (unsigned long long)l->stack,
				      (unsigned long long)l->marks);
	}
	snprintf(s, end - s, " win=%u\n", win_lines.n);
	qemu_plugin_outs(line);
	if (prof_ran)
		prof_print();
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
		for (u = 0; u < nr_vcpus; u++) {
			vcpus[u].base = vcpus[u].now;
			set_clear(&vcpus[u].seg);
			vcpus[u].seg_stack = 0;
			memset(&vcpus[u].sum, 0, sizeof(vcpus[u].sum));
		}
		set_clear(&win_lines);
		/* A window left open (a stop missed) profiles nothing here. */
		prof_reset();
		/* Only the last 16 bits: an interrupted ID leaves no high ones. */
		open_id = vcpus[cpu].id & 0xffff;
		vcpus[cpu].id = 0;
		open_cpu = cpu;
		break;
	case MARK_STOP:
		if (open_cpu < 0)
			stray_stops++;
		else
			window_stop(cpu);
		break;
	case MARK_SEG:
		if (open_cpu >= 0) {
			seg_close(&vcpus[cpu]);
			vcpus[cpu].sum.marks++;
		}
		break;
	default:
		break;
	}
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	struct tb_info *t = calloc(1, sizeof(*t) + n * sizeof(t->insn[0]));
	struct qemu_plugin_insn *insn;
	struct insn_info *ii;
	struct marker *m;
	enum mark kind;
	int stack;

	(void)id;
	if (!t)
		abort();
	t->vaddr = n ? qemu_plugin_insn_vaddr(qemu_plugin_tb_get_insn(tb, 0)) : 0;
	for (i = 0; i < n; i++) {
		insn = qemu_plugin_tb_get_insn(tb, i);
		ii = &t->insn[i];
		ii->tb = t;
		kind = classify(qemu_plugin_insn_data(insn),
				qemu_plugin_insn_size(insn), &ii->c, &stack);
		ii->marker = kind != MARK_NONE;
		/* Before the marker's callback: a stop marker counts itself. */
		if (ii->c.insns)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, insn_exec,
							       QEMU_PLUGIN_CB_NO_REGS,
							       ii);
		qemu_plugin_register_vcpu_mem_cb(insn, mem_exec,
						 QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW,
						 insn_udata(qemu_plugin_insn_vaddr(insn),
							    stack));
		if (kind == MARK_NONE)
			continue;
		m = calloc(1, sizeof(*m));
		if (!m)
			abort();
		m->kind = kind;
		qemu_plugin_register_vcpu_insn_exec_cb(insn, marker_exec,
						       QEMU_PLUGIN_CB_NO_REGS, m);
	}
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

/* ID[,ID...] into the bitmap @ids; stops at the first that is not one. */
static void parse_ids(const char *env, uint8_t *ids)
{
	char *end;
	long id;

	while (env && *env) {
		id = strtol(env, &end, 0);
		if (end == env || id < 0 || id > 0xffff)
			break;
		ids[id / 8] |= 1 << id % 8;
		env = *end == ',' ? end + 1 : end;
	}
}

QEMU_PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
					   const qemu_info_t *info,
					   int argc, char **argv)
{
	char line[160];
	unsigned int i;

	(void)argc;
	(void)argv;
	parse_ids(getenv("NTA_ICOUNT_DUMP"), dump_ids);
	parse_ids(getenv("NTA_ICOUNT_PROF"), prof_ids);
	if (!info->system_emulation || strcmp(info->target_name, "x86_64")) {
		fprintf(stderr, "nta_icount: needs qemu-system-x86_64, not %s\n",
			info->target_name);
		return -1;
	}
	nr_vcpus = info->system.max_vcpus;
	vcpus = calloc(nr_vcpus, sizeof(*vcpus));
	if (!vcpus)
		return -1;
	for (i = 0; i < nr_vcpus; i++)
		set_init(&vcpus[i].seg, 1024);
	set_init(&win_lines, 1 << 16);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	snprintf(line, sizeof(line),
		 "nta-icount: loaded (plugin API %d, QEMU's %d..%d), %u vCPUs\n",
		 QEMU_PLUGIN_VERSION, info->version.min, info->version.cur,
		 nr_vcpus);
	qemu_plugin_outs(line);
	return 0;
}
