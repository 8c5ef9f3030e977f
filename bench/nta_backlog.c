// SPDX-License-Identifier: GPL-2.0
/*
 * nta_backlog: the slow-consumer backlog benchmark of make demo (issue 28,
 * item 3).  Many AF_UNIX datagram and stream pairs and UDP sockets over
 * loopback, readers stopped; writers send a mix of message sizes until
 * each socket refuses (EAGAIN) or, for UDP, drops (SK_MEMINFO_DROPS of the
 * receiver).  Then the readers drain every other socket, the writers
 * refill those with another mix, and the readers drain all.  It counts
 * bytes and messages, not time, so an emulated guest is a fair referee.
 *
 *   nta_backlog [-n SOCKETS_PER_KIND] [-s SEED] MEASURE
 *
 * MEASURE is run through sh -c with the phase name as $1 at each point
 * (idle, fill, half, shift, drained); it prints what the memory looks like
 * then (scripts/nta-init: backlog_mem).  The counts go to stdout as
 * "NTA-BACKLOG phase=P kind=K socks=N msgs=M bytes=B refused=R".
 */

#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/sock_diag.h>
#include <linux/types.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SO_MEMINFO
#define SO_MEMINFO	55
#endif

enum { UNIX_DGRAM, UNIX_STREAM, UDP_LO, KINDS };
static const char * const kind_name[KINDS] = {
	"unix_dgram", "unix_stream", "udp_lo",
};

struct sock_pair {
	int kind;
	int tx, rx;
	int full;
	unsigned int drops;	/* the receiver's drops when filling began */
};

struct counts {
	unsigned long msgs, bytes, refused;
};

static struct sock_pair *pairs;
static int nr_pairs;
static unsigned char buf[65536];
static __u64 rng;

/*
 * The fill mix (perf-review-2.md 4.2): 40 % log lines of 100-400 B, 25 %
 * JSON events of 600-2000 B, 20 % datagrams of 1200-1400 B, 10 % 2-5 KiB,
 * 5 % 8 KiB.  The shift mix: events of 900-1100 B only, which the holes
 * the drained sockets left must take.
 */
static unsigned int rnd(unsigned int lo, unsigned int hi)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return lo + rng % (hi - lo + 1);
}

static unsigned int msg_size(int shift)
{
	unsigned int p = rnd(0, 99);

	if (shift)
		return rnd(900, 1100);
	if (p < 40)
		return rnd(100, 400);
	if (p < 65)
		return rnd(600, 2000);
	if (p < 85)
		return rnd(1200, 1400);
	if (p < 95)
		return rnd(2048, 5120);
	return 8192;
}

static void die(const char *what)
{
	perror(what);
	exit(1);
}

static unsigned int drops_of(int fd)
{
	__u32 mi[SK_MEMINFO_VARS];
	socklen_t len = sizeof(mi);

	if (getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mi, &len))
		die("SO_MEMINFO");
	return mi[SK_MEMINFO_DROPS];
}

static void open_pair(struct sock_pair *p, int kind)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int sv[2];

	p->kind = kind;
	if (kind != UDP_LO) {
		if (socketpair(AF_UNIX, kind == UNIX_DGRAM ? SOCK_DGRAM :
			       SOCK_STREAM, 0, sv))
			die("socketpair");
		p->tx = sv[0];
		p->rx = sv[1];
	} else {
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		p->rx = socket(AF_INET, SOCK_DGRAM, 0);
		p->tx = socket(AF_INET, SOCK_DGRAM, 0);
		if (p->rx < 0 || p->tx < 0)
			die("socket");
		if (bind(p->rx, (struct sockaddr *)&a, sizeof(a)) ||
		    getsockname(p->rx, (struct sockaddr *)&a, &len) ||
		    connect(p->tx, (struct sockaddr *)&a, sizeof(a)))
			die("udp setup");
	}
	if (fcntl(p->tx, F_SETFL, O_NONBLOCK) || fcntl(p->rx, F_SETFL, O_NONBLOCK))
		die("O_NONBLOCK");
}

/* One message to @p; false once it refuses (EAGAIN) or drops. */
static int send_one(struct sock_pair *p, int shift, struct counts *c)
{
	unsigned int n = msg_size(shift);
	ssize_t r;

	r = send(p->tx, buf, n, MSG_DONTWAIT);
	if (r < 0) {
		if (errno != EAGAIN && errno != ENOBUFS)
			die("send");
		c[p->kind].refused++;
		return 0;
	}
	if (p->kind == UDP_LO && drops_of(p->rx) != p->drops) {
		/* Dropped at the receiver: not queued. */
		c[p->kind].refused++;
		return 0;
	}
	c[p->kind].msgs++;
	c[p->kind].bytes += r;
	return 1;
}

/*
 * Fill the sockets with index % @step == @first until each refuses,
 * round robin, so that the heads of all sockets interleave in memory as
 * those of concurrent writers do.
 */
static void fill(int first, int step, int shift, struct counts *c)
{
	int i, left = 0;

	for (i = first; i < nr_pairs; i += step) {
		pairs[i].full = 0;
		if (pairs[i].kind == UDP_LO)
			pairs[i].drops = drops_of(pairs[i].rx);
		left++;
	}
	while (left) {
		for (i = first; i < nr_pairs; i += step) {
			if (pairs[i].full)
				continue;
			if (!send_one(&pairs[i], shift, c)) {
				pairs[i].full = 1;
				left--;
			}
		}
	}
}

static void drain(int first, int step)
{
	int i;

	for (i = first; i < nr_pairs; i += step)
		while (recv(pairs[i].rx, buf, sizeof(buf), MSG_DONTWAIT) > 0)
			;
}

static void report(const char *phase, const struct counts *c, int socks)
{
	int k;

	for (k = 0; k < KINDS; k++)
		printf("NTA-BACKLOG phase=%s kind=%s socks=%d msgs=%lu bytes=%lu refused=%lu\n",
		       phase, kind_name[k], socks, c[k].msgs, c[k].bytes, c[k].refused);
	fflush(stdout);
}

static void measure(const char *cmd, const char *phase)
{
	pid_t pid;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		die("fork");
	if (!pid) {
		execl("/bin/sh", "sh", "-c", cmd, "sh", phase, (char *)NULL);
		_exit(127);
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
}

int main(int argc, char **argv)
{
	struct counts c[KINDS] = {}, s[KINDS] = {};
	struct rlimit rl = { 65536, 65536 };
	int per = 128, opt, i;

	rng = 0x9e3779b97f4a7c15ULL;
	while ((opt = getopt(argc, argv, "n:s:")) != -1) {
		if (opt == 'n')
			per = atoi(optarg);
		else if (opt == 's')
			rng ^= strtoull(optarg, NULL, 0);
		else
			return 2;
	}
	if (optind + 1 != argc || per < 2) {
		fprintf(stderr, "usage: %s [-n SOCKETS_PER_KIND] [-s SEED] MEASURE\n", argv[0]);
		return 2;
	}
	setrlimit(RLIMIT_NOFILE, &rl);
	nr_pairs = per * KINDS;
	pairs = calloc(nr_pairs, sizeof(*pairs));
	if (!pairs)
		die("calloc");
	memset(buf, 'x', sizeof(buf));
	/* Kinds interleaved: socket i is of kind i % KINDS, halves alike. */
	for (i = 0; i < nr_pairs; i++)
		open_pair(&pairs[i], i % KINDS);

	measure(argv[optind], "idle");
	fill(0, 1, 0, c);
	report("fill", c, per);
	measure(argv[optind], "fill");
	/* Every other socket of each kind: step 2 * KINDS, both offsets. */
	for (i = 0; i < KINDS; i++)
		drain(KINDS + i, 2 * KINDS);
	measure(argv[optind], "half");
	for (i = 0; i < KINDS; i++)
		fill(KINDS + i, 2 * KINDS, 1, s);
	report("shift", s, per / 2);
	measure(argv[optind], "shift");
	drain(0, 1);
	measure(argv[optind], "drained");
	for (i = 0; i < nr_pairs; i++) {
		close(pairs[i].tx);
		close(pairs[i].rx);
	}
	return 0;
}
