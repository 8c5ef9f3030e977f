// SPDX-License-Identifier: GPL-2.0
/*
 * nta_noise - interrupts on an idle CPU whose skb heads another CPU frees
 *
 * A writer pinned to CPU W sends a burst of AF_UNIX datagrams (their skb
 * heads are allocated on W) and sleeps; a reader pinned to CPU R takes
 * them one at a time, spread over the writer's sleep, so that the heads
 * are freed on R while W is idle.  Every cycle repeats that for -t
 * seconds.  Printed at the end, from /proc/interrupts: what CPU W took
 * per second of the run, in all and for the interrupts another CPU or a
 * timer can cause (LOC local timer, IWI irq work, CAL function call, RES
 * rescheduling).  Whatever the allocator, the writer's bursts cost the
 * same; what differs is what the frees on R make W do.  The last line is
 * machine readable:
 *	RESULT secs=.. all=.. loc=.. iwi=.. cal=.. res=.. (per second)
 *
 * Usage: nta_noise [-w CPU] [-r CPU] [-t SECS] [-n MSGS] [-s BYTES]
 *	[-p MS]
 */

#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char usage[] =
	"usage: %s [-w CPU] [-r CPU] [-t SECS] [-n MSGS] [-s BYTES] [-p MS]\n";

enum { I_LOC, I_IWI, I_CAL, I_RES, I_ALL, I_NR };
static const char *const irq_names[] = { "LOC:", "IWI:", "CAL:", "RES:" };

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("sched_setaffinity");
		exit(1);
	}
}

/* Column @cpu of /proc/interrupts: the named rows, and the sum of all. */
static void read_irqs(int cpu, unsigned long long *v)
{
	char line[4096], *p, *end;
	unsigned long long x = 0;
	FILE *f;
	int i, col;

	memset(v, 0, I_NR * sizeof(*v));
	f = fopen("/proc/interrupts", "r");
	if (!f) {
		perror("/proc/interrupts");
		exit(1);
	}
	if (!fgets(line, sizeof(line), f))	/* the CPU header */
		exit(1);
	while (fgets(line, sizeof(line), f)) {
		p = strchr(line, ':');
		if (!p)
			continue;
		p++;
		for (col = 0; col <= cpu; col++) {
			x = strtoull(p, &end, 10);
			if (end == p)
				break;
			p = end;
		}
		if (col <= cpu)
			continue;	/* ERR:, MIS: have one column */
		v[I_ALL] += x;
		for (i = 0; i < I_ALL; i++)
			if (!strncmp(line + strspn(line, " "), irq_names[i],
				     strlen(irq_names[i])))
				v[i] = x;
	}
	fclose(f);
}

static void writer(int fd, int cpu, double secs, int msgs, int size,
		   int pause_ms)
{
	char *buf = calloc(1, size);
	double end = now() + secs;
	int i;

	pin(cpu);
	while (now() < end) {
		for (i = 0; i < msgs; i++)
			if (send(fd, buf, size, 0) < 0 && errno != EAGAIN) {
				perror("send");
				exit(1);
			}
		usleep(pause_ms * 1000);
	}
	exit(0);
}

static void reader(int fd, int cpu, double secs, int msgs, int size,
		   int pause_ms)
{
	/* A burst's messages spread over the writer's pause. */
	long gap_us = pause_ms * 1000L / (msgs + 1);
	char *buf = malloc(size);
	double end = now() + secs + 1;

	pin(cpu);
	while (now() < end) {
		if (recv(fd, buf, size, MSG_DONTWAIT) < 0) {
			if (errno != EAGAIN) {
				perror("recv");
				exit(1);
			}
			usleep(1000);
			continue;
		}
		usleep(gap_us);
	}
	exit(0);
}

int main(int argc, char **argv)
{
	int wcpu = 1, rcpu = 0, msgs = 64, size = 1000, pause_ms = 300;
	unsigned long long a[I_NR], b[I_NR];
	double secs = 10, t0, t1, d;
	int sv[2], opt, sb = 4 << 20;
	pid_t w, r;

	while ((opt = getopt(argc, argv, "w:r:t:n:s:p:")) != -1) {
		switch (opt) {
		case 'w':
			wcpu = atoi(optarg);
			break;
		case 'r':
			rcpu = atoi(optarg);
			break;
		case 't':
			secs = atof(optarg);
			break;
		case 'n':
			msgs = atoi(optarg);
			break;
		case 's':
			size = atoi(optarg);
			break;
		case 'p':
			pause_ms = atoi(optarg);
			break;
		default:
			fprintf(stderr, usage, argv[0]);
			return 2;
		}
	}
	if (msgs < 1 || size < 1 || pause_ms < 1 || secs <= 0) {
		fprintf(stderr, "%s: -n, -s, -p and -t must be positive\n", argv[0]);
		return 2;
	}
	if (socketpair(AF_UNIX, SOCK_DGRAM, 0, sv)) {
		perror("socketpair");
		return 1;
	}
	setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &sb, sizeof(sb));
	setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &sb, sizeof(sb));

	read_irqs(wcpu, a);
	t0 = now();
	w = fork();
	if (!w)
		writer(sv[0], wcpu, secs, msgs, size, pause_ms);
	r = fork();
	if (!r)
		reader(sv[1], rcpu, secs, msgs, size, pause_ms);
	if (w < 0 || r < 0) {
		perror("fork");
		return 1;
	}
	if (waitpid(w, NULL, 0) < 0 || waitpid(r, NULL, 0) < 0) {
		perror("waitpid");
		return 1;
	}
	t1 = now();
	read_irqs(wcpu, b);
	d = t1 - t0;
	printf("RESULT secs=%.1f all=%.1f loc=%.1f iwi=%.1f cal=%.1f res=%.1f\n",
	       d, (b[I_ALL] - a[I_ALL]) / d, (b[I_LOC] - a[I_LOC]) / d,
	       (b[I_IWI] - a[I_IWI]) / d, (b[I_CAL] - a[I_CAL]) / d,
	       (b[I_RES] - a[I_RES]) / d);
	return 0;
}
