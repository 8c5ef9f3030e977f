// SPDX-License-Identifier: GPL-2.0
/*
 * nta_backlog: the slow-consumer backlog benchmark of make demo (issue 28,
 * item 3).  Many AF_UNIX datagram and stream pairs, UDP sockets over
 * loopback and UDP sockets over a veth pair into a network namespace,
 * readers stopped; writers send a mix of message sizes until
 * each socket refuses (EAGAIN) or, for UDP, drops (SK_MEMINFO_DROPS of the
 * receiver).  Then the readers drain every other socket, the writers
 * refill those with another mix, and the readers drain all.  It counts
 * bytes and messages, not time, so an emulated guest is a fair referee.
 *
 *   nta_backlog [-n SOCKETS_PER_KIND] [-s SEED] [-m VETH_MTU] MEASURE
 *
 * VETH_MTU is the veth pair's MTU, 68-65535, 1500 by default (veth's own):
 * over it a datagram above 1472 B goes as IP fragments, a head each.
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
#include <linux/if_link.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/types.h>
#include <linux/veth.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
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

enum { UNIX_DGRAM, UNIX_STREAM, UDP_LO, UDP_VETH, KINDS };
static const char * const kind_name[KINDS] = {
	"unix_dgram", "unix_stream", "udp_lo", "udp_veth",
};

/*
 * The veth pair: VETH_TX in this namespace, VETH_RX in a namespace of its
 * own, where the UDP_VETH receivers are bound to VETH_RX_ADDR.
 */
#define VETH_TX		"ntabl0"
#define VETH_RX		"ntabl1"
#define VETH_TX_ADDR	"10.217.0.1"
#define VETH_RX_ADDR	"10.217.0.2"

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

static int netns_home = -1, netns_veth = -1;
static unsigned int veth_mtu = 1500;

struct nl_req {
	struct nlmsghdr n;
	struct ifinfomsg i;
	char attrs[512];
};

static struct rtattr *rta_put(struct nl_req *req, int type, const void *data,
			      int len)
{
	struct rtattr *rta = (void *)&req->n + NLMSG_ALIGN(req->n.nlmsg_len);

	if (NLMSG_ALIGN(req->n.nlmsg_len) + RTA_SPACE(len) > sizeof(*req)) {
		fprintf(stderr, "nta_backlog: netlink request too long\n");
		exit(1);
	}
	rta->rta_type = type;
	rta->rta_len = RTA_LENGTH(len);
	if (len)
		memcpy(RTA_DATA(rta), data, len);
	req->n.nlmsg_len = NLMSG_ALIGN(req->n.nlmsg_len) + RTA_ALIGN(rta->rta_len);
	return rta;
}

/* Close a nest that rta_put() opened: it spans what was put since. */
static void rta_end(struct nl_req *req, struct rtattr *nest)
{
	nest->rta_len = (void *)&req->n + req->n.nlmsg_len - (void *)nest;
}

/*
 * One rtnetlink request.  Return: the kernel's answer from its ack (0 or
 * -errno), or -errno of a local failure.  It does not exit: veth_del()
 * calls it from atexit().
 */
static int rtnl_talk(struct nl_req *req)
{
	union {
		struct nlmsghdr h;
		char buf[1024];
	} ack;
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	ssize_t r;

	if (fd < 0)
		return -errno;
	req->n.nlmsg_flags |= NLM_F_REQUEST | NLM_F_ACK;
	if (send(fd, &req->n, req->n.nlmsg_len, 0) != (ssize_t)req->n.nlmsg_len) {
		r = -errno;
		close(fd);
		return r ? r : -EIO;
	}
	r = recv(fd, &ack, sizeof(ack), 0);
	close(fd);
	if (r < (ssize_t)NLMSG_LENGTH(sizeof(struct nlmsgerr)) ||
	    ack.h.nlmsg_type != NLMSG_ERROR)
		return -EPROTO;
	return ((struct nlmsgerr *)NLMSG_DATA(&ack.h))->error;
}

/*
 * ip link add VETH_TX mtu veth_mtu type veth peer name VETH_RX mtu
 * veth_mtu netns @peer_ns
 */
static int veth_add(int peer_ns)
{
	struct nl_req req = {
		.n.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)),
		.n.nlmsg_type = RTM_NEWLINK,
		.n.nlmsg_flags = NLM_F_CREATE | NLM_F_EXCL,
	};
	struct ifinfomsg peer = { 0 };
	struct rtattr *info, *data, *p;
	__u32 fd = peer_ns;

	rta_put(&req, IFLA_IFNAME, VETH_TX, sizeof(VETH_TX));
	rta_put(&req, IFLA_MTU, &veth_mtu, sizeof(veth_mtu));
	info = rta_put(&req, IFLA_LINKINFO, NULL, 0);
	rta_put(&req, IFLA_INFO_KIND, "veth", sizeof("veth"));
	data = rta_put(&req, IFLA_INFO_DATA, NULL, 0);
	/* The peer's attributes follow an ifinfomsg of its own. */
	p = rta_put(&req, VETH_INFO_PEER, &peer, sizeof(peer));
	rta_put(&req, IFLA_IFNAME, VETH_RX, sizeof(VETH_RX));
	rta_put(&req, IFLA_MTU, &veth_mtu, sizeof(veth_mtu));
	rta_put(&req, IFLA_NET_NS_FD, &fd, sizeof(fd));
	rta_end(&req, p);
	rta_end(&req, data);
	rta_end(&req, info);
	return rtnl_talk(&req);
}

/* ip link del VETH_TX, from this process's own namespace: the peer goes too. */
static void veth_del(void)
{
	struct nl_req req = {
		.n.nlmsg_len = NLMSG_LENGTH(sizeof(struct ifinfomsg)),
		.n.nlmsg_type = RTM_DELLINK,
	};
	int err;

	if (netns_home >= 0)
		setns(netns_home, CLONE_NEWNET);
	req.i.ifi_index = if_nametoindex(VETH_TX);
	if (!req.i.ifi_index)
		return;
	err = rtnl_talk(&req);
	/* -ENODEV: the namespace's teardown took it meanwhile. */
	if (err && err != -ENODEV)
		fprintf(stderr, "nta_backlog: could not delete %s: %s\n",
			VETH_TX, strerror(-err));
}

static void in_netns(int ns)
{
	if (setns(ns, CLONE_NEWNET))
		die("setns");
}

static void run_ip(const char *cmds)
{
	if (system(cmds)) {
		fprintf(stderr, "nta_backlog: '%s' failed\n", cmds);
		exit(1);
	}
}

/*
 * A network namespace with the receiving end of a veth pair, VETH_TX_ADDR
 * here and VETH_RX_ADDR there, both up.  The namespace lives while
 * @netns_veth or a socket made in it is open (all are close-on-exec, so
 * no MEASURE child keeps it); veth_del() takes the pair away at exit.
 */
static void veth_setup(void)
{
	int err, tries = 0;

	netns_home = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (netns_home < 0 || unshare(CLONE_NEWNET))
		die("a network namespace for the veth peer");
	netns_veth = open("/proc/self/ns/net", O_RDONLY | O_CLOEXEC);
	if (netns_veth < 0)
		die("/proc/self/ns/net");
	in_netns(netns_home);
	atexit(veth_del);
	/*
	 * A pair left by a run that was killed: delete it, and wait for a
	 * namespace teardown that is still taking it (EEXIST) for up to 5 s.
	 */
	veth_del();
	while ((err = veth_add(netns_veth)) == -EEXIST && ++tries < 50)
		usleep(100000);
	if (err) {
		errno = -err;
		die("veth pair (CONFIG_VETH, CONFIG_NET_NS)");
	}
	run_ip("ip addr add " VETH_TX_ADDR "/24 dev " VETH_TX
	       " && ip link set " VETH_TX " up");
	in_netns(netns_veth);
	run_ip("ip link set lo up && ip addr add " VETH_RX_ADDR "/24 dev "
	       VETH_RX " && ip link set " VETH_RX " up");
	in_netns(netns_home);
}

static void open_pair(struct sock_pair *p, int kind)
{
	struct sockaddr_in a = { .sin_family = AF_INET };
	socklen_t len = sizeof(a);
	int sv[2];

	p->kind = kind;
	if (kind == UNIX_DGRAM || kind == UNIX_STREAM) {
		if (socketpair(AF_UNIX, (kind == UNIX_DGRAM ? SOCK_DGRAM :
			       SOCK_STREAM) | SOCK_CLOEXEC, 0, sv))
			die("socketpair");
		p->tx = sv[0];
		p->rx = sv[1];
	} else {
		/* A socket belongs to the namespace it was made in. */
		if (kind == UDP_VETH) {
			in_netns(netns_veth);
			inet_pton(AF_INET, VETH_RX_ADDR, &a.sin_addr);
		} else {
			a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		}
		p->rx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
		if (kind == UDP_VETH)
			in_netns(netns_home);
		p->tx = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
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

static int is_udp(const struct sock_pair *p)
{
	return p->kind == UDP_LO || p->kind == UDP_VETH;
}

/*
 * One datagram through the veth pair and out of its receiver, so that the
 * neighbour entry is resolved before the fill: datagrams queued behind an
 * unresolved one may be dropped where no socket counts them.
 */
static void veth_warm(const struct sock_pair *p)
{
	struct pollfd pfd = { .fd = p->rx, .events = POLLIN };

	if (send(p->tx, buf, 1, 0) != 1 || poll(&pfd, 1, 5000) != 1 ||
	    recv(p->rx, buf, sizeof(buf), 0) != 1) {
		fprintf(stderr, "nta_backlog: nothing came through the veth pair\n");
		exit(1);
	}
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
	if (is_udp(p) && drops_of(p->rx) != p->drops) {
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
		if (is_udp(&pairs[i]))
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
	int per = 80, opt, i;

	rng = 0x9e3779b97f4a7c15ULL;
	while ((opt = getopt(argc, argv, "n:s:m:")) != -1) {
		if (opt == 'n')
			per = atoi(optarg);
		else if (opt == 'm')
			veth_mtu = strtoul(optarg, NULL, 0);
		else if (opt == 's')
			rng ^= strtoull(optarg, NULL, 0);
		else
			return 2;
	}
	if (optind + 1 != argc || per < 2 || veth_mtu < 68 || veth_mtu > 65535) {
		fprintf(stderr, "usage: %s [-n SOCKETS_PER_KIND] [-s SEED] [-m VETH_MTU] MEASURE\n",
			argv[0]);
		return 2;
	}
	setrlimit(RLIMIT_NOFILE, &rl);
	nr_pairs = per * KINDS;
	pairs = calloc(nr_pairs, sizeof(*pairs));
	if (!pairs)
		die("calloc");
	memset(buf, 'x', sizeof(buf));
	veth_setup();
	/* Kinds interleaved: socket i is of kind i % KINDS, halves alike. */
	for (i = 0; i < nr_pairs; i++)
		open_pair(&pairs[i], i % KINDS);
	veth_warm(&pairs[UDP_VETH]);

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
