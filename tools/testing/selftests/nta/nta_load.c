// SPDX-License-Identifier: GPL-2.0
/*
 * nta_load - HTTP/1.1 load client for the NTA selftests
 *
 * N connections spread over T threads, each thread with its own epoll set
 * and its own counters and latency histogram, merged once at the end.
 * Every connection runs a closed loop: send a GET, read the whole
 * response (Content-Length or close-delimited), record the latency, send
 * the next one on the same connection (-k, the default) or close and
 * open a new connection for every request (-c, "Connection: close"; the
 * latency then includes the connect).  -A sends a request and resets the
 * connection as soon as the response starts (for leak tests), counting
 * aborts, not errors.
 *
 * Latencies go into a log-linear histogram (exact below 128 us, then 64
 * sub-buckets per power of two: under 1.6% error, 18 KiB per thread).
 * Errors are non-200 responses, resets (RST, EPIPE, a close before the
 * response is complete), timeouts (-T), failed connects and responses
 * that do not parse.  Requests in flight when time is up are not counted.
 * The last line is machine readable:
 *	RESULT rps=.. bps=.. p50_us=.. p99_us=.. max_us=.. errors=.. ...
 * where bps is response bytes (headers and bodies) per second.
 */

#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#define HBUF_SIZE	8192		/* response header must fit */
#define SCRATCH_SIZE	(256 * 1024)	/* per-thread read buffer */
#define MAX_EVENTS	256
#define TICK_MS		10
#define RETRY_NS	(10 * 1000 * 1000ULL)

#define HIST_SUB_BITS	6
enum { HIST_SUB = 1 << HIST_SUB_BITS };
#define HIST_EXACT	(2 * HIST_SUB)	/* values below are exact */
#define HIST_MAX_MSB	40		/* 2^40 us: 12 days */
#define HIST_BUCKETS	(HIST_EXACT + (HIST_MAX_MSB - HIST_SUB_BITS) * HIST_SUB)

enum conn_state { C_IDLE, C_CONNECTING, C_WRITING, C_READING };

struct conn {
	int fd;
	enum conn_state state;
	uint32_t events;		/* current epoll interest */
	uint64_t t_start;		/* ns: request (or connect) start */
	uint64_t retry_at;		/* ns: next connect after a failure */
	size_t woff;			/* request bytes sent */
	size_t hlen;			/* header bytes in hbuf */
	bool hdr_done;
	bool close_delim;		/* body ends at EOF */
	bool resp_close;		/* server said Connection: close */
	int status;
	uint64_t body_left;
	char hbuf[HBUF_SIZE];
};

struct stats {
	unsigned long long requests;	/* complete responses */
	unsigned long long bytes;	/* response bytes read */
	unsigned long long non200;
	unsigned long long resets;
	unsigned long long timeouts;
	unsigned long long connect_err;
	unsigned long long parse_err;
	unsigned long long connects;
	unsigned long long aborts;
	uint64_t max_us;
	uint64_t hist[HIST_BUCKETS];
};

struct thread {
	int id;
	int epfd;
	int nconns;
	struct conn *conns;
	struct stats st;
	char *scratch;
	pthread_t thread;
};

static struct {
	const char *host;
	const char *port;
	const char *path;
	int conns;
	int threads;
	double duration;
	int timeout_ms;
	bool keepalive;
	bool abort;
	bool quiet;
} opt = {
	.host = "127.0.0.1",
	.port = "8080",
	.path = "/1k",
	.conns = 16,
	.duration = 5,
	.timeout_ms = 5000,
	.keepalive = true,
};

static struct sockaddr_storage srv;
static socklen_t srv_len;
static char request[1024];
static size_t request_len;
static uint64_t t_end;			/* ns, CLOCK_MONOTONIC */
static atomic_int stop;
static pthread_barrier_t barrier;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&stop, 1);
}

static unsigned int hist_index(uint64_t v)
{
	unsigned int msb;

	if (v < HIST_EXACT)
		return v;
	msb = 63 - __builtin_clzll(v);
	if (msb >= HIST_MAX_MSB)
		return HIST_BUCKETS - 1;
	return HIST_EXACT + (msb - HIST_SUB_BITS - 1) * HIST_SUB +
	       ((v >> (msb - HIST_SUB_BITS)) - HIST_SUB);
}

/* Highest value that falls into bucket i. */
static uint64_t hist_value(unsigned int i)
{
	unsigned int msb, sub;

	if (i < HIST_EXACT)
		return i;
	msb = (i - HIST_EXACT) / HIST_SUB + HIST_SUB_BITS + 1;
	sub = (i - HIST_EXACT) % HIST_SUB + HIST_SUB;
	return (((uint64_t)sub + 1) << (msb - HIST_SUB_BITS)) - 1;
}

static uint64_t hist_percentile(const struct stats *st, double p)
{
	uint64_t target = (uint64_t)(p * st->requests + 0.999999), seen = 0;
	unsigned int i;

	if (!st->requests)
		return 0;
	if (!target)
		target = 1;
	for (i = 0; i < HIST_BUCKETS; i++) {
		seen += st->hist[i];
		if (seen >= target)
			return hist_value(i) < st->max_us ? hist_value(i) :
							    st->max_us;
	}
	return st->max_us;
}

static void conn_reset(struct thread *t, struct conn *c, bool rst)
{
	if (c->fd >= 0) {
		if (rst) {
			struct linger l = { .l_onoff = 1, .l_linger = 0 };

			setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
		}
		close(c->fd);	/* also leaves the epoll set */
	}
	c->fd = -1;
	c->events = 0;
	c->state = C_IDLE;
	(void)t;
}

static void request_begin(struct conn *c, uint64_t now)
{
	c->state = C_WRITING;
	c->woff = 0;
	c->hlen = 0;
	c->hdr_done = false;
	c->close_delim = false;
	c->resp_close = false;
	c->status = 0;
	c->body_left = 0;
	c->t_start = now;
}

static int set_events(struct thread *t, struct conn *c, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = c };
	int op = c->events ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;

	if (c->events == events)
		return 0;
	c->events = events;
	return epoll_ctl(t->epfd, op, c->fd, &ev);
}

static void conn_open(struct thread *t, struct conn *c, uint64_t now)
{
	int one = 1;

	c->fd = socket(srv.ss_family,
		       SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		t->st.connect_err++;
		c->retry_at = now + RETRY_NS;
		return;
	}
	setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	request_begin(c, now);
	t->st.connects++;
	if (connect(c->fd, (struct sockaddr *)&srv, srv_len) == 0) {
		c->state = C_WRITING;
	} else if (errno == EINPROGRESS) {
		c->state = C_CONNECTING;
	} else {
		t->st.connect_err++;
		conn_reset(t, c, false);
		c->retry_at = now + RETRY_NS;
		return;
	}
	if (set_events(t, c, EPOLLOUT)) {
		t->st.connect_err++;
		conn_reset(t, c, false);
		c->retry_at = now + RETRY_NS;
	}
}

/* Close (or reset) and open the next connection right away. */
static void conn_next(struct thread *t, struct conn *c, bool rst)
{
	uint64_t now = now_ns();

	conn_reset(t, c, rst);
	c->retry_at = 0;
	if (now < t_end)
		conn_open(t, c, now);
}

static void conn_fail(struct thread *t, struct conn *c, int err)
{
	if (err == ECONNREFUSED || c->state == C_CONNECTING) {
		t->st.connect_err++;
		c->retry_at = now_ns() + RETRY_NS;
		conn_reset(t, c, true);
		return;
	}
	t->st.resets++;
	conn_next(t, c, true);
}

/* Send the request; on EAGAIN wait for EPOLLOUT. */
static void conn_send(struct thread *t, struct conn *c)
{
	while (c->woff < request_len) {
		ssize_t n = send(c->fd, request + c->woff,
				 request_len - c->woff, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				set_events(t, c, EPOLLOUT);
				return;
			}
			conn_fail(t, c, errno);
			return;
		}
		c->woff += n;
	}
	c->state = C_READING;
	set_events(t, c, EPOLLIN | EPOLLRDHUP);
}

static void response_done(struct thread *t, struct conn *c)
{
	uint64_t now = now_ns(), us;

	if (now > t_end)		/* finished after the bell: not counted */
		return;
	us = (now - c->t_start) / 1000;
	t->st.requests++;
	t->st.hist[hist_index(us)]++;
	if (us > t->st.max_us)
		t->st.max_us = us;
	if (c->status != 200)
		t->st.non200++;

	if (!opt.keepalive || c->resp_close || c->close_delim) {
		conn_next(t, c, false);
		return;
	}
	request_begin(c, now);
	conn_send(t, c);
}

/* Parse the status line and the headers we care about. */
static bool parse_header(struct conn *c)
{
	const char *p = c->hbuf, *end = c->hbuf + c->hlen, *eol;
	bool have_len = false;

	eol = memchr(p, '\n', end - p);
	if (!eol || eol - p < 12 || memcmp(p, "HTTP/1.", 7) || p[8] != ' ')
		return false;
	c->status = atoi(p + 9);
	if (c->status < 100 || c->status > 999)
		return false;
	if (p[7] == '0')
		c->resp_close = true;

	for (p = eol + 1; p < end; p = eol + 1) {
		const char *colon, *v;

		eol = memchr(p, '\n', end - p);
		if (!eol)
			break;
		colon = memchr(p, ':', eol - p);
		if (!colon)
			continue;
		for (v = colon + 1; *v == ' ' || *v == '\t'; v++)
			;
		if (colon - p == 14 && !strncasecmp(p, "Content-Length", 14)) {
			char *e;

			c->body_left = strtoull(v, &e, 10);
			if (e == v)
				return false;
			have_len = true;
		} else if (colon - p == 10 &&
			   !strncasecmp(p, "Connection", 10)) {
			if (!strncasecmp(v, "close", 5))
				c->resp_close = true;
			else if (!strncasecmp(v, "keep-alive", 10))
				c->resp_close = false;
		} else if (colon - p == 17 &&
			   !strncasecmp(p, "Transfer-Encoding", 17)) {
			return false;	/* chunked: not needed here */
		}
	}
	/* RFC 9112 6.3: no body for 1xx, 204, 304 */
	if (c->status < 200 || c->status == 204 || c->status == 304) {
		c->body_left = 0;
		have_len = true;
	}
	c->close_delim = !have_len;
	return true;
}

/* Feed n response bytes; true when this response is over. */
static bool conn_input(struct thread *t, struct conn *c, const char *buf,
		       size_t n)
{
	if (!c->hdr_done) {
		size_t room = HBUF_SIZE - c->hlen, take = n < room ? n : room;
		size_t old = c->hlen, i;
		char *hend = NULL;

		memcpy(c->hbuf + c->hlen, buf, take);
		c->hlen += take;
		/* search from a little before the old end for the blank line */
		for (i = old > 3 ? old - 3 : 0; i + 1 < c->hlen; i++) {
			if (c->hbuf[i] != '\n')
				continue;
			if (c->hbuf[i + 1] == '\n') {
				hend = c->hbuf + i + 2;
				break;
			}
			if (i + 2 < c->hlen && c->hbuf[i + 1] == '\r' &&
			    c->hbuf[i + 2] == '\n') {
				hend = c->hbuf + i + 3;
				break;
			}
		}
		if (!hend) {
			if (c->hlen < HBUF_SIZE)
				return false;
			t->st.parse_err++;
			conn_next(t, c, true);
			return true;
		}
		c->hlen = hend - c->hbuf;
		if (!parse_header(c)) {
			t->st.parse_err++;
			conn_next(t, c, true);
			return true;
		}
		c->hdr_done = true;
		/* the rest of this read is body */
		buf += c->hlen - old;
		n -= c->hlen - old;
	}
	if (c->close_delim)
		return false;
	if (n > c->body_left) {
		/* more than we asked for: nothing is pipelined */
		t->st.parse_err++;
		conn_next(t, c, true);
		return true;
	}
	c->body_left -= n;
	if (c->body_left)
		return false;
	response_done(t, c);
	return true;
}

static void conn_event(struct thread *t, struct conn *c, uint32_t events)
{
	if (c->state == C_CONNECTING) {
		int err = 0;
		socklen_t len = sizeof(err);

		getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &len);
		if (err) {
			conn_fail(t, c, err);
			return;
		}
		c->state = C_WRITING;
	}
	if (c->state == C_WRITING) {
		if (events & EPOLLERR) {
			conn_fail(t, c, ECONNRESET);
			return;
		}
		conn_send(t, c);
		return;			/* the response cannot be there yet */
	}
	if (c->state != C_READING)
		return;

	for (;;) {
		ssize_t n = read(c->fd, t->scratch, SCRATCH_SIZE);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN)
				return;
			conn_fail(t, c, errno);
			return;
		}
		if (n == 0) {
			if (c->hdr_done && c->close_delim) {
				response_done(t, c);
			} else {
				/* closed before the response was complete */
				conn_fail(t, c, ECONNRESET);
			}
			return;
		}
		t->st.bytes += n;
		if (opt.abort) {
			t->st.aborts++;
			conn_next(t, c, true);
			return;
		}
		if (conn_input(t, c, t->scratch, n))
			return;		/* the next one cannot be there yet */
		if ((size_t)n < SCRATCH_SIZE)
			return;		/* level-triggered: EPOLLIN again */
	}
}

/* Every tick: open idle connections, time out slow requests. */
static void tick(struct thread *t, uint64_t now)
{
	uint64_t limit = (uint64_t)opt.timeout_ms * 1000000ULL;
	int i;

	for (i = 0; i < t->nconns; i++) {
		struct conn *c = &t->conns[i];

		if (c->state == C_IDLE) {
			if (now >= c->retry_at)
				conn_open(t, c, now);
		} else if (opt.timeout_ms && now - c->t_start > limit) {
			t->st.timeouts++;
			conn_next(t, c, true);
		}
	}
}

static void *thread_main(void *arg)
{
	struct epoll_event evs[MAX_EVENTS];
	struct thread *t = arg;
	uint64_t now, last_tick = 0;
	int i;

	pthread_barrier_wait(&barrier);
	while (!atomic_load(&stop)) {
		int n;

		now = now_ns();
		if (now >= t_end)
			break;
		if (now - last_tick >= TICK_MS * 1000000ULL) {
			tick(t, now);
			last_tick = now;
		}
		n = epoll_wait(t->epfd, evs, MAX_EVENTS, TICK_MS);
		if (n < 0 && errno != EINTR) {
			perror("epoll_wait");
			break;
		}
		for (i = 0; i < n; i++)
			conn_event(t, evs[i].data.ptr, evs[i].events);
	}
	for (i = 0; i < t->nconns; i++)
		conn_reset(t, &t->conns[i], false);
	close(t->epfd);
	return NULL;
}

static void print_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-a host] [-p port] [-u path] [-n conns] [-t threads]\n"
		"          [-d seconds] [-k | -c | -A] [-T timeout_ms] [-q] [URL]\n"
		"  -a  server address (default 127.0.0.1)\n"
		"  -p  server port (default 8080)\n"
		"  -u  request path (default /1k)\n"
		"  -n  connections (default 16)\n"
		"  -t  threads (default: CPUs, at most one per connection)\n"
		"  -d  duration in seconds, fractions allowed (default 5)\n"
		"  -k  keep-alive: many requests per connection (default)\n"
		"  -c  one connection per request (Connection: close)\n"
		"  -A  abort: reset each connection when its response starts\n"
		"  -T  request timeout in ms, 0 for none (default 5000)\n"
		"  -q  only the RESULT line\n"
		"  URL http://host:port/path sets all three at once\n",
		prog);
	exit(2);
}

/*
 * Numeric addresses only: a static binary must not call into NSS, and the
 * guest has no resolver anyway.
 */
static bool parse_addr(const char *host, const char *port)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)&srv;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&srv;
	char *end;
	long p = strtol(port, &end, 10);

	if (*end || p <= 0 || p > 65535)
		return false;
	if (!strcmp(host, "localhost"))
		host = "127.0.0.1";
	memset(&srv, 0, sizeof(srv));
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons(p);
		srv_len = sizeof(*sin);
		return true;
	}
	if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(p);
		srv_len = sizeof(*sin6);
		return true;
	}
	return false;
}

/* http://host[:port][/path] */
static void parse_url(char *url)
{
	char *p, *slash, *colon;

	if (strncasecmp(url, "http://", 7)) {
		fprintf(stderr, "nta_load: only http:// URLs\n");
		exit(2);
	}
	p = url + 7;
	slash = strchr(p, '/');
	opt.path = "/";
	if (slash) {
		opt.path = strdup(slash);
		*slash = '\0';
	}
	if (*p == '[') {		/* [v6]:port */
		char *rb = strchr(p, ']');

		if (!rb)
			print_usage("nta_load");
		*rb = '\0';
		opt.host = p + 1;
		colon = rb[1] == ':' ? rb + 1 : NULL;
	} else {
		opt.host = p;
		colon = strchr(p, ':');
		if (colon)
			*colon = '\0';
	}
	opt.port = colon ? colon + 1 : "80";
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct stats tot = { 0 };
	struct thread *ts;
	struct rlimit rl;
	uint64_t t0, t1;
	double secs, rps, bps;
	int i, ch, err;

	while ((ch = getopt(argc, argv, "a:p:u:n:t:d:kcAT:qh")) != -1) {
		switch (ch) {
		case 'a':
			opt.host = optarg;
			break;
		case 'p':
			opt.port = optarg;
			break;
		case 'u':
			opt.path = optarg;
			break;
		case 'n':
			opt.conns = atoi(optarg);
			break;
		case 't':
			opt.threads = atoi(optarg);
			break;
		case 'd':
			opt.duration = atof(optarg);
			break;
		case 'k':
			opt.keepalive = true;
			break;
		case 'c':
			opt.keepalive = false;
			break;
		case 'A':
			opt.abort = true;
			break;
		case 'T':
			opt.timeout_ms = atoi(optarg);
			break;
		case 'q':
			opt.quiet = true;
			break;
		default:
			print_usage(argv[0]);
		}
	}
	if (optind < argc)
		parse_url(argv[optind++]);
	if (optind != argc || opt.conns < 1 || opt.threads < 0 ||
	    opt.duration <= 0 || opt.timeout_ms < 0 || opt.path[0] != '/')
		print_usage(argv[0]);
	if (!opt.threads) {
		cpu_set_t set;

		opt.threads = 1;
		if (!sched_getaffinity(0, sizeof(set), &set))
			opt.threads = CPU_COUNT(&set);
	}
	if (opt.threads > opt.conns)
		opt.threads = opt.conns;

	if (!parse_addr(opt.host, opt.port)) {
		fprintf(stderr, "nta_load: bad address %s port %s (numeric only)\n",
			opt.host, opt.port);
		return 2;
	}

	request_len = snprintf(request, sizeof(request),
			       "GET %s HTTP/1.1\r\nHost: %s:%s\r\n"
			       "User-Agent: nta_load\r\n%s\r\n",
			       opt.path, opt.host, opt.port,
			       opt.keepalive ? "" : "Connection: close\r\n");
	if (request_len >= sizeof(request)) {
		fprintf(stderr, "nta_load: path too long\n");
		return 2;
	}

	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}

	ts = calloc(opt.threads, sizeof(*ts));
	if (!ts) {
		perror("calloc");
		return 1;
	}
	pthread_barrier_init(&barrier, NULL, opt.threads + 1);
	for (i = 0; i < opt.threads; i++) {
		struct thread *t = &ts[i];
		int j;

		t->id = i;
		t->nconns = opt.conns / opt.threads +
			    (i < opt.conns % opt.threads);
		t->conns = calloc(t->nconns, sizeof(*t->conns));
		t->scratch = malloc(SCRATCH_SIZE);
		t->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (!t->conns || !t->scratch || t->epfd < 0) {
			perror("nta_load: setup");
			return 1;
		}
		for (j = 0; j < t->nconns; j++)
			t->conns[j].fd = -1;
		if (pthread_create(&t->thread, NULL, thread_main, t)) {
			fprintf(stderr, "nta_load: pthread_create failed\n");
			return 1;
		}
	}

	t0 = now_ns();
	t_end = t0 + (uint64_t)(opt.duration * 1e9);
	pthread_barrier_wait(&barrier);
	for (i = 0; i < opt.threads; i++) {
		struct thread *t = &ts[i];
		int j;

		pthread_join(t->thread, NULL);
		tot.requests += t->st.requests;
		tot.bytes += t->st.bytes;
		tot.non200 += t->st.non200;
		tot.resets += t->st.resets;
		tot.timeouts += t->st.timeouts;
		tot.connect_err += t->st.connect_err;
		tot.parse_err += t->st.parse_err;
		tot.connects += t->st.connects;
		tot.aborts += t->st.aborts;
		if (t->st.max_us > tot.max_us)
			tot.max_us = t->st.max_us;
		for (j = 0; j < HIST_BUCKETS; j++)
			tot.hist[j] += t->st.hist[j];
		free(t->conns);
		free(t->scratch);
	}
	t1 = now_ns();
	if (t1 > t_end)
		t1 = t_end;		/* nothing counted after the bell */
	secs = (t1 - t0) / 1e9;
	rps = secs > 0 ? tot.requests / secs : 0;
	bps = secs > 0 ? tot.bytes / secs : 0;
	err = tot.non200 + tot.resets + tot.timeouts + tot.connect_err +
	      tot.parse_err;

	if (!opt.quiet) {
		printf("nta_load: http://%s:%s%s %d connections, %d threads, %s, %.2f s\n",
		       opt.host, opt.port, opt.path, opt.conns, opt.threads,
		       opt.abort ? "abort" : opt.keepalive ? "keep-alive" :
		       "connection per request", secs);
		printf("  requests %llu (%.1f/s), bytes %llu (%.3f Gbit/s),",
		       tot.requests, rps, tot.bytes, bps * 8 / 1e9);
		printf(" connections opened %llu\n", tot.connects);
		printf("  latency us: p50 %llu p90 %llu p99 %llu p99.9 %llu max %llu\n",
		       (unsigned long long)hist_percentile(&tot, 0.50),
		       (unsigned long long)hist_percentile(&tot, 0.90),
		       (unsigned long long)hist_percentile(&tot, 0.99),
		       (unsigned long long)hist_percentile(&tot, 0.999),
		       (unsigned long long)tot.max_us);
		printf("  errors %d: non-200 %llu, resets %llu, timeouts %llu,",
		       err, tot.non200, tot.resets, tot.timeouts);
		printf(" connect %llu, parse %llu; aborts %llu\n",
		       tot.connect_err, tot.parse_err, tot.aborts);
	}
	printf("RESULT rps=%.1f bps=%.0f p50_us=%llu p99_us=%llu max_us=%llu errors=%d",
	       rps, bps, (unsigned long long)hist_percentile(&tot, 0.50),
	       (unsigned long long)hist_percentile(&tot, 0.99),
	       (unsigned long long)tot.max_us, err);
	printf(" requests=%llu bytes=%llu non200=%llu resets=%llu timeouts=%llu",
	       tot.requests, tot.bytes, tot.non200, tot.resets, tot.timeouts);
	printf(" connect_err=%llu parse_err=%llu connects=%llu aborts=%llu\n",
	       tot.connect_err, tot.parse_err, tot.connects, tot.aborts);
	free(ts);
	return tot.requests || tot.aborts ? 0 : 1;
}
