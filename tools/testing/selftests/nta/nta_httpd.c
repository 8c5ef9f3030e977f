// SPDX-License-Identifier: GPL-2.0
/*
 * nta_httpd - a small epoll HTTP/1.1 server that puts skb heads under load
 *
 * One worker thread per CPU of the process's affinity mask (or -t N), each
 * pinned to its CPU, each with its own SO_REUSEPORT listener and its own
 * level-triggered epoll set, so no state is shared between workers but
 * the read-only response body and the stop flag.  A connection belongs to
 * the worker that accepted it for its whole life.
 *
 * Requests are parsed from a fixed per-connection buffer; several requests
 * may be pipelined in one read.  Responses are served from memory: the
 * path picks the body size ("/64", "/1k", "/16k", "/128k", any "/<n>[k|m]"
 * up to the -m cap).  A response is one header plus a body streamed from
 * a shared pattern buffer; while it cannot be written in full the
 * connection stops reading (back-pressure) and waits for EPOLLOUT.
 * Malformed requests get 400 and the connection is closed with a
 * lingering close (shut down writes, drain input for up to two seconds)
 * so the client sees the response instead of a reset.
 *
 * Counters are per worker and summed once at exit; the last line printed
 * is machine readable:
 *	RESULT requests=N errors=N resets=N accepted=N timeouts=N bytes=N
 */

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <sched.h>
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

#define RBUF_SIZE	8192		/* request line + headers must fit */
#define HBUF_SIZE	512		/* response header */
#define BODY_CHUNK	(64 * 1024)	/* pattern buffer, bodies cycle in it */
#define MAX_IOV		8
#define MAX_EVENTS	256
#define MAX_ROUNDS	64		/* per event, then yield to others */
#define LINGER_SECS	2
#define DEFAULT_PORT	8080
#define DEFAULT_CAP	(64ULL << 20)
#define DEFAULT_IDLE	60

enum flush_ret { FLUSH_DONE, FLUSH_AGAIN, FLUSH_ERR };
enum parse_ret { PARSE_MORE, PARSE_OK, PARSE_BAD };

struct conn {
	int fd;
	struct conn *prev, *next;	/* worker's list, for idle scan */
	time_t last;			/* last input, for the idle timeout */
	uint32_t events;		/* current epoll interest */
	bool rd_eof;			/* peer shut down its side */
	bool close_after;		/* close once the response is out */
	bool lingering;			/* our side is shut, draining input */
	bool http10_keep;		/* HTTP/1.0 client asked for keep-alive */
	size_t rlen, rpos;		/* bytes in rbuf, bytes consumed */
	uint64_t discard;		/* request body bytes still to skip */
	size_t hlen, hoff;		/* response header, bytes sent */
	uint64_t blen, boff;		/* response body, bytes sent */
	char hbuf[HBUF_SIZE];
	char rbuf[RBUF_SIZE];
};

struct stats {
	unsigned long long requests;	/* 2xx responses */
	unsigned long long errors;	/* 4xx/5xx responses */
	unsigned long long resets;	/* connections lost to RST/EPIPE */
	unsigned long long accepted;
	unsigned long long timeouts;	/* idle keep-alive connections closed */
	unsigned long long bytes;	/* response bytes written */
};

struct worker {
	int id;
	int cpu;			/* -1: not pinned */
	int epfd;
	int lfd;
	int spare;			/* reserve fd for EMFILE */
	bool lfd_off;			/* listener paused after EMFILE */
	time_t date_sec;		/* second that date[] shows */
	char date[64];			/* "Date: ...\r\n", once a second */
	int nconns;
	struct conn *conns;
	struct stats st;
	pthread_t thread;
};

static struct {
	int port;
	int threads;
	int duration;
	int idle;
	bool pin;
	bool quiet;
	uint64_t cap;
	const char *addr;
} opt = {
	.port = DEFAULT_PORT,
	.idle = DEFAULT_IDLE,
	.pin = true,
	.cap = DEFAULT_CAP,
};

static atomic_int stop;
static char body[BODY_CHUNK];

static const char index_body[] =
	"nta_httpd: GET /<size> returns <size> bytes, e.g. /64 /1k /16k /128k /2m\n";

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&stop, 1);
}

static time_t now_sec(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec;
}

static int set_events(struct worker *w, struct conn *c, uint32_t events)
{
	struct epoll_event ev = { .events = events, .data.ptr = c };

	if (c->events == events)
		return 0;
	c->events = events;
	return epoll_ctl(w->epfd, EPOLL_CTL_MOD, c->fd, &ev);
}

static void conn_close(struct worker *w, struct conn *c, bool reset)
{
	if (reset)
		w->st.resets++;
	/* close() drops the epoll registration: the fd is never dup'ed */
	close(c->fd);
	if (c->prev)
		c->prev->next = c->next;
	else
		w->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	w->nconns--;
	free(c);
}

static bool is_reset(int err)
{
	return err == ECONNRESET || err == EPIPE || err == ETIMEDOUT ||
	       err == EHOSTUNREACH || err == ENETUNREACH;
}

/* Write as much of the pending response as the socket takes. */
static enum flush_ret conn_flush(struct worker *w, struct conn *c, bool more)
{
	while (c->hoff < c->hlen || c->boff < c->blen) {
		struct iovec iov[MAX_IOV];
		struct msghdr msg = { .msg_iov = iov };
		uint64_t boff = c->boff;
		int n = 0;
		ssize_t ret;

		if (c->hoff < c->hlen) {
			iov[n].iov_base = c->hbuf + c->hoff;
			iov[n++].iov_len = c->hlen - c->hoff;
		}
		while (n < MAX_IOV && boff < c->blen) {
			size_t off = boff % BODY_CHUNK;
			uint64_t len = BODY_CHUNK - off;

			if (len > c->blen - boff)
				len = c->blen - boff;
			iov[n].iov_base = body + off;
			iov[n++].iov_len = len;
			boff += len;
		}
		msg.msg_iovlen = n;
		ret = sendmsg(c->fd, &msg, MSG_NOSIGNAL |
			      (more && boff == c->blen ? MSG_MORE : 0));
		if (ret < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return FLUSH_AGAIN;
			if (is_reset(errno))
				w->st.resets++;
			return FLUSH_ERR;
		}
		w->st.bytes += ret;
		if (c->hoff < c->hlen) {
			size_t h = c->hlen - c->hoff;

			if ((size_t)ret < h) {
				c->hoff += ret;
				continue;
			}
			c->hoff = c->hlen;
			ret -= h;
		}
		c->boff += ret;
	}
	return FLUSH_DONE;
}

/* RFC 9110 6.6.1: an origin server with a clock sends Date. */
static const char *date_header(struct worker *w)
{
	time_t t = time(NULL);
	struct tm tm;

	if (t != w->date_sec && gmtime_r(&t, &tm)) {
		strftime(w->date, sizeof(w->date),
			 "Date: %a, %d %b %Y %H:%M:%S GMT\r\n", &tm);
		w->date_sec = t;
	}
	return w->date;
}

static void respond(struct worker *w, struct conn *c, int code,
		    const char *reason, uint64_t len, bool head,
		    const char *type, const char *extra)
{
	const char *conn = "";

	if (c->close_after)
		conn = "Connection: close\r\n";
	else if (c->http10_keep)
		conn = "Connection: keep-alive\r\n";
	c->hlen = snprintf(c->hbuf, sizeof(c->hbuf),
			   "HTTP/1.1 %d %s\r\n"
			   "Server: nta_httpd\r\n"
			   "%sContent-Type: %s\r\n"
			   "Content-Length: %llu\r\n"
			   "%s%s\r\n",
			   code, reason, date_header(w), type,
			   (unsigned long long)len, extra ? extra : "", conn);
	c->hoff = 0;
	c->blen = head ? 0 : len;
	c->boff = 0;
	if (code < 400)
		w->st.requests++;
	else
		w->st.errors++;
}

/* Short error body; it lives in hbuf right after the header. */
static void respond_error(struct worker *w, struct conn *c, int code,
			  const char *reason, bool head, const char *extra)
{
	char text[64];
	int len = snprintf(text, sizeof(text), "%d %s\n", code, reason);

	respond(w, c, code, reason, len, true, "text/plain", extra);
	if (!head && c->hlen + len < sizeof(c->hbuf)) {
		memcpy(c->hbuf + c->hlen, text, len);
		c->hlen += len;
	}
}

/* "/1k" -> 1024; false for anything that is not a size. */
static bool parse_size(const char *p, const char *end, uint64_t *size)
{
	uint64_t v = 0;

	if (p == end || *p < '0' || *p > '9')
		return false;
	for (; p < end && *p >= '0' && *p <= '9'; p++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (*p - '0');
	}
	if (p < end && (*p == 'k' || *p == 'K')) {
		v <<= 10;
		p++;
	} else if (p < end && (*p == 'm' || *p == 'M')) {
		v <<= 20;
		p++;
	}
	if (p != end || v > opt.cap)
		return false;
	*size = v;
	return true;
}

static bool is_tchar(char ch)
{
	return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
	       (ch >= '0' && ch <= '9') || (ch && strchr("!#$%&'*+-.^_`|~", ch));
}

/* Case-insensitive search for a token in a comma separated list. */
static bool has_token(const char *v, const char *end, const char *tok)
{
	size_t n = strlen(tok);

	while (v < end) {
		while (v < end && (*v == ' ' || *v == '\t' || *v == ','))
			v++;
		if ((size_t)(end - v) >= n && !strncasecmp(v, tok, n)) {
			const char *e = v + n;

			while (e < end && (*e == ' ' || *e == '\t'))
				e++;
			if (e == end || *e == ',')
				return true;
		}
		while (v < end && *v != ',')
			v++;
	}
	return false;
}

/* Find the blank line that ends a header block; returns its end or NULL. */
static const char *header_end(const char *p, const char *end)
{
	for (; p < end; p++) {
		if (*p != '\n')
			continue;
		if (p + 1 < end && p[1] == '\n')
			return p + 2;
		if (p + 2 < end && p[1] == '\r' && p[2] == '\n')
			return p + 3;
	}
	return NULL;
}

/* Next line in [p, end): sets *eol to the end of its text (before CR LF). */
static const char *next_line(const char *p, const char *end, const char **eol)
{
	const char *nl = memchr(p, '\n', end - p);

	if (!nl)
		nl = end;
	*eol = (nl > p && nl[-1] == '\r') ? nl - 1 : nl;
	return nl < end ? nl + 1 : end;
}

/*
 * Parse one request at rbuf[rpos] and set up its response.  PARSE_MORE:
 * the header is not complete yet.  PARSE_BAD: a response was set up and
 * the connection closes after it.
 */
static enum parse_ret parse_request(struct worker *w, struct conn *c)
{
	const char *start = c->rbuf + c->rpos, *end = c->rbuf + c->rlen;
	const char *hend, *p, *eol, *sp1, *sp2, *path, *pend, *q;
	bool head = false, get = false, http10, keep, cl_seen = false;
	bool has_host = false, conn_close = false, conn_keep = false;
	bool te = false;
	uint64_t clen = 0, size;

	/* RFC 9112 2.2: ignore empty lines before the request line */
	while (start < end && (*start == '\r' || *start == '\n'))
		start++;
	c->rpos = start - c->rbuf;
	if (start == end)
		return PARSE_MORE;
	hend = header_end(start, end);
	if (!hend) {
		if (c->rpos == 0 && c->rlen == RBUF_SIZE)
			goto too_large;
		return PARSE_MORE;
	}
	c->rpos = hend - c->rbuf;

	/* request-line = method SP request-target SP HTTP-version */
	p = next_line(start, hend, &eol);
	sp1 = memchr(start, ' ', eol - start);
	if (!sp1 || sp1 == start)
		goto bad;
	for (q = start; q < sp1; q++)
		if (!is_tchar(*q))
			goto bad;
	sp2 = memchr(sp1 + 1, ' ', eol - sp1 - 1);
	if (!sp2 || sp2 == sp1 + 1 || eol - sp2 != 9 ||
	    memcmp(sp2 + 1, "HTTP/", 5) || sp2[6] < '0' || sp2[6] > '9' ||
	    sp2[7] != '.' || sp2[8] < '0' || sp2[8] > '9')
		goto bad;
	if (sp2[6] != '1') {
		c->close_after = true;
		respond_error(w, c, 505, "HTTP Version Not Supported", false,
			      NULL);
		return PARSE_BAD;
	}
	http10 = sp2[8] == '0';
	for (q = sp1 + 1; q < sp2; q++)
		if ((unsigned char)*q <= ' ' || *q == 0x7f)
			goto bad;

	/* header fields */
	while (p < hend) {
		const char *name = p, *colon, *v, *vend;

		p = next_line(p, hend, &eol);
		if (eol == name)
			break;			/* the blank line */
		if (*name == ' ' || *name == '\t')
			goto bad;		/* obs-fold: RFC 9112 5.2 */
		colon = memchr(name, ':', eol - name);
		if (!colon || colon == name)
			goto bad;
		for (q = name; q < colon; q++)
			if (!is_tchar(*q))
				goto bad;
		for (v = colon + 1; v < eol && (*v == ' ' || *v == '\t'); v++)
			;
		for (vend = eol; vend > v && (vend[-1] == ' ' ||
					      vend[-1] == '\t'); vend--)
			;
		if (colon - name == 4 && !strncasecmp(name, "Host", 4)) {
			if (has_host)
				goto bad;
			has_host = true;
		} else if (colon - name == 10 &&
			   !strncasecmp(name, "Connection", 10)) {
			conn_close |= has_token(v, vend, "close");
			conn_keep |= has_token(v, vend, "keep-alive");
		} else if (colon - name == 14 &&
			   !strncasecmp(name, "Content-Length", 14)) {
			uint64_t n = 0;

			if (v == vend)
				goto bad;
			for (q = v; q < vend; q++) {
				if (*q < '0' || *q > '9' ||
				    n > (UINT64_MAX - 9) / 10)
					goto bad;
				n = n * 10 + (*q - '0');
			}
			if (cl_seen && n != clen)
				goto bad;
			cl_seen = true;
			clen = n;
		} else if (colon - name == 17 &&
			   !strncasecmp(name, "Transfer-Encoding", 17)) {
			te = true;
		}
	}
	if (!http10 && !has_host)
		goto bad;			/* RFC 9112 3.2 */
	if (te) {
		/* no chunked request bodies here: we could not skip them */
		c->close_after = true;
		respond_error(w, c, 501, "Not Implemented", false, NULL);
		return PARSE_BAD;
	}
	c->discard = clen;

	keep = http10 ? conn_keep && !conn_close : !conn_close;
	c->close_after = !keep;
	c->http10_keep = http10 && keep;

	if (sp1 - start == 3 && !memcmp(start, "GET", 3))
		get = true;
	else if (sp1 - start == 4 && !memcmp(start, "HEAD", 4))
		head = true;
	if (!get && !head) {
		respond_error(w, c, 405, "Method Not Allowed", false,
			      "Allow: GET, HEAD\r\n");
		return PARSE_OK;
	}

	/* origin-form "/x" or absolute-form "http://host/x" */
	path = sp1 + 1;
	pend = sp2;
	if (pend - path > 7 && !strncasecmp(path, "http://", 7)) {
		path = memchr(path + 7, '/', pend - path - 7);
		if (!path)
			path = pend;
	}
	if (path == pend || *path != '/')
		goto bad;
	q = memchr(path, '?', pend - path);
	if (q)
		pend = q;
	q = memchr(path, '#', pend - path);
	if (q)
		pend = q;

	if (pend - path == 1) {
		respond(w, c, 200, "OK", sizeof(index_body) - 1, true,
			"text/plain", NULL);
		if (!head) {
			memcpy(c->hbuf + c->hlen, index_body,
			       sizeof(index_body) - 1);
			c->hlen += sizeof(index_body) - 1;
		}
		return PARSE_OK;
	}
	if (!parse_size(path + 1, pend, &size)) {
		respond_error(w, c, 404, "Not Found", head, NULL);
		return PARSE_OK;
	}
	respond(w, c, 200, "OK", size, head, "application/octet-stream",
		NULL);
	return PARSE_OK;

too_large:
	c->rpos = c->rlen;
	c->close_after = true;
	respond_error(w, c, 431, "Request Header Fields Too Large", false,
		      NULL);
	return PARSE_BAD;
bad:
	c->close_after = true;
	respond_error(w, c, 400, "Bad Request", false, NULL);
	return PARSE_BAD;
}

/* Is another complete request waiting after the current one? */
static bool more_buffered(struct conn *c)
{
	return !c->discard && c->rpos < c->rlen &&
	       header_end(c->rbuf + c->rpos, c->rbuf + c->rlen);
}

static bool output_pending(struct conn *c)
{
	return c->hoff < c->hlen || c->boff < c->blen;
}

/* Shut our side down and drain the peer for a while, then close. */
static void conn_linger(struct worker *w, struct conn *c)
{
	shutdown(c->fd, SHUT_WR);
	c->lingering = true;
	c->rlen = 0;
	c->rpos = 0;
	c->last = now_sec();
	set_events(w, c, EPOLLIN | EPOLLRDHUP);
}

static void linger_read(struct worker *w, struct conn *c)
{
	for (;;) {
		ssize_t n = read(c->fd, c->rbuf, sizeof(c->rbuf));

		if (n > 0)
			continue;
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		conn_close(w, c, false);
		return;
	}
}

static void conn_event(struct worker *w, struct conn *c, uint32_t events)
{
	bool drained = false;
	int rounds;

	if (c->lingering) {
		linger_read(w, c);
		return;
	}
	if (events & EPOLLERR) {
		conn_close(w, c, true);
		return;
	}

	for (rounds = 0; rounds < MAX_ROUNDS; rounds++) {
		size_t room;
		ssize_t n;

		if (output_pending(c)) {
			switch (conn_flush(w, c, more_buffered(c))) {
			case FLUSH_AGAIN:
				/* back-pressure: no reading until it drains */
				set_events(w, c, EPOLLOUT);
				return;
			case FLUSH_ERR:
				conn_close(w, c, false);
				return;
			case FLUSH_DONE:
				break;
			}
			if (c->close_after) {
				conn_linger(w, c);
				return;
			}
		}

		/* skip a request body we do not use */
		if (c->discard && c->rpos < c->rlen) {
			uint64_t skip = c->rlen - c->rpos;

			if (skip > c->discard)
				skip = c->discard;
			c->rpos += skip;
			c->discard -= skip;
		}
		if (c->rpos == c->rlen) {
			c->rpos = 0;
			c->rlen = 0;
		}
		if (!c->discard && parse_request(w, c) != PARSE_MORE)
			continue;		/* send it, then the next one */

		if (c->rd_eof) {
			/* everything answered and the peer sends no more */
			conn_close(w, c, false);
			return;
		}
		/*
		 * A short read emptied the socket; level-triggered epoll
		 * reports the next input, so skip a read that would only
		 * return EAGAIN.
		 */
		if (drained)
			break;
		if (c->rpos && c->rlen == RBUF_SIZE) {
			memmove(c->rbuf, c->rbuf + c->rpos, c->rlen - c->rpos);
			c->rlen -= c->rpos;
			c->rpos = 0;
		}
		room = RBUF_SIZE - c->rlen;
		n = read(c->fd, c->rbuf + c->rlen, room);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				break;
			conn_close(w, c, is_reset(errno));
			return;
		}
		if (n == 0) {
			c->rd_eof = true;
			continue;
		}
		c->rlen += n;
		c->last = now_sec();
		drained = (size_t)n < room;
	}
	/*
	 * Out of rounds with work left: ask for EPOLLOUT too, which fires at
	 * once on a writable socket, so the rest is done on the next pass.
	 */
	if (rounds == MAX_ROUNDS)
		set_events(w, c, EPOLLIN | EPOLLOUT | EPOLLRDHUP);
	else
		set_events(w, c, EPOLLIN | EPOLLRDHUP);
}

static void pause_listener(struct worker *w, bool off)
{
	struct epoll_event ev = { .events = off ? 0 : EPOLLIN };

	w->lfd_off = off;
	epoll_ctl(w->epfd, EPOLL_CTL_MOD, w->lfd, &ev);
}

static void do_accept(struct worker *w)
{
	for (;;) {
		struct epoll_event ev;
		struct conn *c;
		int fd, one = 1;

		fd = accept4(w->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE) {
				/* refuse one connection rather than spin */
				if (w->spare >= 0) {
					close(w->spare);
					fd = accept(w->lfd, NULL, NULL);
					if (fd >= 0)
						close(fd);
					w->spare = open("/dev/null",
							O_RDONLY | O_CLOEXEC);
					continue;
				}
				pause_listener(w, true);
			}
			return;
		}
		c = calloc(1, sizeof(*c));
		if (!c) {
			close(fd);
			continue;
		}
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		c->fd = fd;
		c->last = now_sec();
		c->events = EPOLLIN | EPOLLRDHUP;
		ev.events = c->events;
		ev.data.ptr = c;
		if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, fd, &ev)) {
			close(fd);
			free(c);
			continue;
		}
		c->next = w->conns;
		if (w->conns)
			w->conns->prev = c;
		w->conns = c;
		w->nconns++;
		w->st.accepted++;
	}
}

/* Once a second: close idle keep-alive and finished lingering sockets. */
static void idle_scan(struct worker *w, time_t now)
{
	struct conn *c, *next;

	for (c = w->conns; c; c = next) {
		next = c->next;
		if (c->lingering && now - c->last >= LINGER_SECS) {
			conn_close(w, c, false);
		} else if (opt.idle && now - c->last >= opt.idle &&
			   !output_pending(c)) {
			w->st.timeouts++;
			conn_close(w, c, false);
		}
	}
	if (w->lfd_off)
		pause_listener(w, false);
}

static void *worker_main(void *arg)
{
	struct epoll_event evs[MAX_EVENTS], ev = { .events = EPOLLIN };
	struct worker *w = arg;
	time_t last_scan = now_sec();

	if (w->cpu >= 0) {
		cpu_set_t set;

		CPU_ZERO(&set);
		CPU_SET(w->cpu, &set);
		pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
	}
	ev.data.ptr = NULL;
	if (epoll_ctl(w->epfd, EPOLL_CTL_ADD, w->lfd, &ev)) {
		perror("epoll_ctl listener");
		atomic_store(&stop, 1);
		return NULL;
	}

	while (!atomic_load(&stop)) {
		int i, n = epoll_wait(w->epfd, evs, MAX_EVENTS, 200);
		time_t now;

		if (n < 0 && errno != EINTR) {
			perror("epoll_wait");
			break;
		}
		for (i = 0; i < n; i++) {
			if (!evs[i].data.ptr)
				do_accept(w);
			else
				conn_event(w, evs[i].data.ptr, evs[i].events);
		}
		now = now_sec();
		if (now != last_scan) {
			idle_scan(w, now);
			last_scan = now;
		}
	}

	while (w->conns)
		conn_close(w, w->conns, false);
	close(w->lfd);
	close(w->epfd);
	if (w->spare >= 0)
		close(w->spare);
	return NULL;
}

/* Numeric only: a static binary must not call into NSS. */
static bool parse_addr(const char *host, struct sockaddr_storage *ss,
		       socklen_t *len)
{
	struct sockaddr_in *sin = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		*len = sizeof(*sin);
		return true;
	}
	if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		*len = sizeof(*sin6);
		return true;
	}
	return false;
}

static int make_listener(const struct sockaddr_storage *addr, socklen_t alen,
			 int port)
{
	struct sockaddr_storage ss = *addr;
	int fd, one = 1;

	if (ss.ss_family == AF_INET6)
		((struct sockaddr_in6 *)&ss)->sin6_port = htons(port);
	else
		((struct sockaddr_in *)&ss)->sin_port = htons(port);

	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
		    0);
	if (fd < 0)
		return -1;
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEPORT, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, alen) ||
	    listen(fd, 4096)) {
		int err = errno;

		close(fd);
		errno = err;
		return -1;
	}
	return fd;
}

static int bound_port(int fd)
{
	struct sockaddr_storage ss;
	socklen_t len = sizeof(ss);

	if (getsockname(fd, (struct sockaddr *)&ss, &len))
		return -1;
	if (ss.ss_family == AF_INET6)
		return ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
	return ntohs(((struct sockaddr_in *)&ss)->sin_port);
}

static void print_usage(const char *prog)
{
	fprintf(stderr,
		"usage: %s [-p port] [-t threads] [-d seconds] [-a addr]\n"
		"          [-m max_body] [-i idle_seconds] [-P] [-q]\n"
		"  -p  TCP port (default %d; 0 picks one and prints it)\n"
		"  -t  worker threads (default: CPUs in the affinity mask)\n"
		"  -d  exit after this many seconds (default 0: on SIGINT/SIGTERM)\n"
		"  -a  bind address (default: any, IPv4)\n"
		"  -m  largest body served, bytes, k/m suffix (default 64m)\n"
		"  -i  close keep-alive connections idle this long (default %d, 0: never)\n"
		"  -P  do not pin worker i to the i-th allowed CPU\n"
		"  -q  no start-up line\n",
		prog, DEFAULT_PORT, DEFAULT_IDLE);
	exit(2);
}

static uint64_t parse_bytes(const char *s)
{
	char *end;
	uint64_t v = strtoull(s, &end, 10);

	if (*end == 'k' || *end == 'K')
		v <<= 10;
	else if (*end == 'm' || *end == 'M')
		v <<= 20;
	else if (*end == 'g' || *end == 'G')
		v <<= 30;
	return v;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct timespec t0, t1;
	struct sockaddr_storage addr;
	socklen_t alen;
	struct worker *ws;
	struct stats tot = { 0 };
	struct rlimit rl;
	cpu_set_t allowed;
	int i, ch, ncpu, cpu, open_conns = 0;

	while ((ch = getopt(argc, argv, "p:t:d:a:m:i:Pqh")) != -1) {
		switch (ch) {
		case 'p':
			opt.port = atoi(optarg);
			break;
		case 't':
			opt.threads = atoi(optarg);
			break;
		case 'd':
			opt.duration = atoi(optarg);
			break;
		case 'a':
			opt.addr = optarg;
			break;
		case 'm':
			opt.cap = parse_bytes(optarg);
			break;
		case 'i':
			opt.idle = atoi(optarg);
			break;
		case 'P':
			opt.pin = false;
			break;
		case 'q':
			opt.quiet = true;
			break;
		default:
			print_usage(argv[0]);
		}
	}
	if (optind != argc || opt.port < 0 || opt.port > 65535 ||
	    opt.threads < 0 || opt.duration < 0 || opt.idle < 0)
		print_usage(argv[0]);

	if (!opt.addr)
		opt.addr = "0.0.0.0";
	if (!parse_addr(opt.addr, &addr, &alen)) {
		fprintf(stderr, "nta_httpd: bad address %s (numeric only)\n",
			opt.addr);
		return 2;
	}

	signal(SIGPIPE, SIG_IGN);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	for (i = 0; i < BODY_CHUNK; i++)
		body[i] = "0123456789abcdefghijklmnopqrstuvwxyz\n"[i % 37];

	CPU_ZERO(&allowed);
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		CPU_SET(0, &allowed);
	ncpu = CPU_COUNT(&allowed);
	if (!opt.threads)
		opt.threads = ncpu;

	ws = calloc(opt.threads, sizeof(*ws));
	if (!ws) {
		perror("calloc");
		return 1;
	}
	cpu = -1;
	for (i = 0; i < opt.threads; i++) {
		struct worker *w = &ws[i];

		w->id = i;
		w->cpu = -1;
		if (opt.pin) {
			do {
				cpu = (cpu + 1) % CPU_SETSIZE;
			} while (!CPU_ISSET(cpu, &allowed));
			w->cpu = cpu;
		}
		w->lfd = make_listener(&addr, alen, opt.port);
		if (w->lfd < 0) {
			fprintf(stderr, "nta_httpd: listen on port %d: %s\n",
				opt.port, strerror(errno));
			return 1;
		}
		if (!opt.port)
			opt.port = bound_port(w->lfd);
		w->epfd = epoll_create1(EPOLL_CLOEXEC);
		if (w->epfd < 0) {
			perror("epoll_create1");
			return 1;
		}
		w->spare = open("/dev/null", O_RDONLY | O_CLOEXEC);
	}

	if (!opt.quiet) {
		printf("nta_httpd: listening on %s port %d threads %d%s\n",
		       opt.addr, opt.port, opt.threads,
		       opt.pin ? " pinned" : "");
		fflush(stdout);
	}

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (i = 0; i < opt.threads; i++) {
		if (pthread_create(&ws[i].thread, NULL, worker_main, &ws[i])) {
			fprintf(stderr, "nta_httpd: pthread_create failed\n");
			atomic_store(&stop, 1);
			opt.threads = i;
			break;
		}
	}

	while (!atomic_load(&stop)) {
		struct timespec ts = { 0, 100 * 1000 * 1000 };

		nanosleep(&ts, NULL);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		if (opt.duration && t1.tv_sec - t0.tv_sec >= opt.duration)
			atomic_store(&stop, 1);
	}

	for (i = 0; i < opt.threads; i++) {
		pthread_join(ws[i].thread, NULL);
		tot.requests += ws[i].st.requests;
		tot.errors += ws[i].st.errors;
		tot.resets += ws[i].st.resets;
		tot.accepted += ws[i].st.accepted;
		tot.timeouts += ws[i].st.timeouts;
		tot.bytes += ws[i].st.bytes;
		open_conns += ws[i].nconns;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("nta_httpd: %.1f s, %llu requests served, %llu error responses,",
	       (t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9,
	       tot.requests, tot.errors);
	printf(" %llu resets, %llu connections, %d left open\n",
	       tot.resets, tot.accepted, open_conns);
	printf("RESULT requests=%llu errors=%llu resets=%llu", tot.requests,
	       tot.errors, tot.resets);
	printf(" accepted=%llu timeouts=%llu bytes=%llu\n", tot.accepted,
	       tot.timeouts, tot.bytes);
	free(ws);
	return 0;
}
