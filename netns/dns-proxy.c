/* SPDX-License-Identifier: MIT */
/*
 * The DNS proxy on the gateway: one thread of the supervising `psrun run`
 * process, in psrun's (the host's) network namespace, serving UDP and TCP 53
 * on the gateway address of one sandbox's veth.
 *
 * restricted: a name not on the allowlist gets NXDOMAIN here and is never
 * forwarded (no tunnelling through the upstream). An allowed name's A query
 * goes upstream (UDP, TCP when truncated); every CNAME hop must be allowed
 * too; addresses in private, loopback, link-local, CGNAT, metadata or pool
 * ranges are dropped unless allow_private covers them (rebinding); what is
 * left is pinned in the nft sets (address . each allowed port) BEFORE the
 * reply leaves, so the first connection already finds its pin. AAAA (IPv6
 * is off inside) and every other type: NODATA.
 * full: every query is relayed as it is (the id rewritten).
 *
 * Bounded: at most MAX_PENDING queries upstream and MAX_TCP clients, each
 * with a deadline; every socket is non-blocking; garbage is dropped.
 *
 * Bounded in time too: this thread's CPU is psrun's, not the sandbox's
 * cgroup's, so what a sandbox can make it do per second is limited twice.
 * The table's rules (netns/nft.c) drop DNS past NETNS_DNS_RATE and report
 * refusals only up to NETNS_LOG_RATE; here, at twice those (the second
 * line, for when the first does not hold), a token bucket gates the reads:
 * with none left the UDP socket is not read at all until the next token
 * (the kernel drops what overflows its queue, SO_RXQ_OVFL counts it), a TCP
 * query is dropped unread, and an NFLOG report past its bucket is counted,
 * not parsed or logged. What either held back is counted in the result as
 * a refusal of its own (NETNS_LIMITED_DNS, NETNS_LIMITED_LOG).
 */
#include "netns/dns-proxy-internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "netns/dns-packet.h"
#include "netns/dns-rules.h"
#include "netns/name-relay.h"
#include "netns/rate.h"

/* ---- pins ---- */

static bool same_addr(const struct dns_addr *a, const struct dns_addr *b)
{
        return a->family == b->family &&
               memcmp(a->addr, b->addr, a->family == AF_INET ? 4 : 16) == 0;
}

/* How long the pin of a has left, by our own record; 0 if none. Kept
 * conservative: a second of margin for the time the client needs. */
static uint64_t pin_left_ms(struct dns_proxy *p, const struct dns_addr *a, uint64_t now)
{
        for (size_t i = 0; i < PIN_CACHE; i++)
                if (p->pins[i].until_ms > now + 1000 && same_addr(&p->pins[i].addr, a))
                        return p->pins[i].until_ms - now - 1000;
        return 0;
}

static void pin_remember(struct dns_proxy *p, const struct dns_addr *a, uint64_t until)
{
        uint64_t now = monotonic_ms();
        size_t slot = PIN_CACHE;
        for (size_t i = 0; i < PIN_CACHE && slot == PIN_CACHE; i++)
                if (same_addr(&p->pins[i].addr, a) || p->pins[i].until_ms <= now)
                        slot = i;
        if (slot == PIN_CACHE)
                slot = p->next_pin++ % PIN_CACHE;
        p->pins[slot] = (struct pin){.addr = *a, .until_ms = until};
}

/* ---- replies ---- */

static void send_to_client(struct dns_proxy *p, int client_tcp, const struct sockaddr_storage *to,
                           socklen_t to_len, const uint8_t *msg, size_t len)
{
        if (client_tcp < 0) {
                (void) sendto(p->udp_fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL,
                              (const struct sockaddr *) to, to_len);
                return;
        }
        struct tcp_client *c = &p->tcp[client_tcp];
        if (c->fd < 0)
                return;
        uint8_t hdr[2] = {(uint8_t) (len >> 8), (uint8_t) len};
        struct iovec iov[2] = {{hdr, 2}, {(void *) msg, len}};
        struct msghdr mh = {.msg_iov = iov, .msg_iovlen = 2};
        /* A client that does not read its reply loses it: we never block. */
        (void) sendmsg(c->fd, &mh, MSG_DONTWAIT | MSG_NOSIGNAL);
        c->fd = safe_close(c->fd);
        c->waiting = false;
}

static void reply(struct dns_proxy *p, int client_tcp, const struct sockaddr_storage *to,
                  socklen_t to_len, const struct dns_query *q, uint8_t rcode,
                  const struct dns_addr *addrs, size_t n, uint32_t ttl)
{
        uint8_t buf[512];
        int len = dns_build_reply(q, rcode, addrs, n, ttl, buf, sizeof(buf));
        if (len > 0)
                send_to_client(p, client_tcp, to, to_len, buf, (size_t) len);
}

static void deny_name(struct dns_proxy *p, int client_tcp, const struct sockaddr_storage *to,
                      socklen_t to_len, const struct dns_query *q, const char *name, uint8_t rcode,
                      const char *reason)
{
        dnsp_count_query(p, false);
        dnsp_count_denial(p, name, NULL, 0, NULL);
        dnsp_log_query(p, q, "deny", reason, NULL, 0);
        reply(p, client_tcp, to, to_len, q, rcode, NULL, 0, 0);
}

/* ---- upstream ---- */

static void pending_free(struct pending *e)
{
        e->fd = safe_close(e->fd);
        free(e->tcp_buf);
        e->tcp_buf = NULL;
        e->used = false;
}

static int upstream_sockaddr(const struct netns_plan *plan, size_t i, struct sockaddr_storage *ss,
                             socklen_t *len)
{
        const struct cidr *u = &plan->upstream[i];
        memset(ss, 0, sizeof(*ss));
        if (u->family == AF_INET) {
                struct sockaddr_in *s = (struct sockaddr_in *) ss;
                s->sin_family = AF_INET;
                s->sin_port = htons(53);
                memcpy(&s->sin_addr, u->addr, 4);
                *len = sizeof(*s);
        } else {
                struct sockaddr_in6 *s = (struct sockaddr_in6 *) ss;
                s->sin6_family = AF_INET6;
                s->sin6_port = htons(53);
                memcpy(&s->sin6_addr, u->addr, 16);
                *len = sizeof(*s);
        }
        return u->family;
}

/* Sends e's query to upstream e->upstream, over TCP when tcp. */
static int upstream_send(struct dns_proxy *p, struct pending *e, bool tcp)
{
        struct sockaddr_storage ss;
        socklen_t len;
        int family = upstream_sockaddr(p->plan, e->upstream, &ss, &len);
        e->fd = safe_close(e->fd);
        e->fd = socket(family, (tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (e->fd < 0)
                return -errno;
        if (connect(e->fd, (struct sockaddr *) &ss, len) < 0 && errno != EINPROGRESS)
                return -errno;
        e->deadline = monotonic_ms() + UPSTREAM_TIMEOUT;
        e->tcp_sent = e->tcp_got = 0;
        if (tcp) {
                e->state = UP_TCP_CONNECT;
                return 0;
        }
        e->state = UP_UDP;
        return send(e->fd, e->query + 2, e->query_len, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

static void fail_pending(struct dns_proxy *p, struct pending *e, uint8_t rcode)
{
        struct dns_query q = e->q;
        q.id = e->client_id;
        reply(p, e->client_tcp, &e->client, e->client_len, &q, rcode, NULL, 0, 0);
        pending_free(e);
}

/* The upstream's answer to e (restricted mode). */
static void answer(struct dns_proxy *p, struct pending *e, const uint8_t *msg, size_t len)
{
        struct dns_answer a;
        struct dns_query q = e->q;
        q.id = e->client_id;
        if (dns_parse_answer(msg, len, e->q.name, e->q.qtype, &a) < 0 || a.id != e->up_id)
                return; /* not ours, or garbage: keep waiting until the deadline */
        if (a.truncated) {
                if (e->state == UP_UDP && upstream_send(p, e, true) == 0)
                        return;
                fail_pending(p, e, DNS_RCODE_SERVFAIL);
                return;
        }
        if (a.rcode != DNS_RCODE_NOERROR) {
                dnsp_count_query(p, true);
                dnsp_log_query(p, &q, "allow", a.rcode == DNS_RCODE_NXDOMAIN ? "nxdomain" : "error",
                               NULL, 0);
                reply(p, e->client_tcp, &e->client, e->client_len, &q, a.rcode, NULL, 0, 0);
                pending_free(e);
                return;
        }
        for (size_t i = 0; i < a.n_cnames; i++)
                if (!dns_name_allowed(p->plan, a.cnames[i])) {
                        deny_name(p, e->client_tcp, &e->client, e->client_len, &q, a.cnames[i],
                                  DNS_RCODE_REFUSED, "cname not allowed");
                        pending_free(e);
                        return;
                }
        struct dns_addr keep[DNS_MAX_ADDRS];
        size_t n = 0, refused = 0;
        for (size_t i = 0; i < a.n_addrs; i++) {
                if (dns_addr_refused(p->plan, &a.addrs[i]))
                        refused++;
                else
                        keep[n++] = a.addrs[i];
        }
        if (n == 0 && refused > 0) {
                deny_name(p, e->client_tcp, &e->client, e->client_len, &q, q.name,
                          DNS_RCODE_REFUSED, "private address");
                pending_free(e);
                return;
        }
        uint64_t t = (uint64_t) a.ttl * 1000;
        if (t < p->plan->min_ttl_ms)
                t = p->plan->min_ttl_ms;
        if (t > p->plan->max_ttl_ms)
                t = p->plan->max_ttl_ms;
        unsigned timeout_s = (unsigned) ((t + 999) / 1000);
        if (timeout_s < PIN_MIN_TIMEOUT_S)
                timeout_s = PIN_MIN_TIMEOUT_S;
        /* Pin first, answer second: the connection that follows the answer
         * must find its pin. A pin that fails is a SERVFAIL, not an answer.
         * An address pinned earlier with at least half of this timeout left
         * is not pinned again (an nft transaction per answer would cost a
         * commit each); the reply's TTL is then what the pin has left. */
        uint64_t now = monotonic_ms(), left_ms = (uint64_t) timeout_s * 1000;
        /* The names this answer holds for (the query's and each CNAME
         * hop's, all allowed): what a connection to its addresses may ask
         * for, as long as their pins last. */
        const char *names[1 + DNS_MAX_CNAMES] = {q.name};
        for (size_t i = 0; i < a.n_cnames; i++)
                names[1 + i] = a.cnames[i];
        for (size_t i = 0; i < n; i++) {
                uint64_t left = pin_left_ms(p, &keep[i], now);
                if (left >= (uint64_t) timeout_s * 500) {
                        left_ms = left < left_ms ? left : left_ms;
                        /* Our record keeps a second's margin: the kernel's
                         * pin lasts that much longer. */
                        name_relay_pinned(p->relay, names, 1 + a.n_cnames, &keep[i],
                                          now + left + 1000);
                        continue;
                }
                pthread_mutex_lock(&p->nft_lock);
                int r = nft_pin(p->nft, p->plan->table, keep[i].family, keep[i].addr,
                                p->plan->ports, p->plan->n_ports, timeout_s, NULL);
                pthread_mutex_unlock(&p->nft_lock);
                if (r < 0) {
                        dnsp_log_query(p, &q, "error", "pin failed", keep, n);
                        fail_pending(p, e, DNS_RCODE_SERVFAIL);
                        return;
                }
                pin_remember(p, &keep[i], now + (uint64_t) timeout_s * 1000);
                name_relay_pinned(p->relay, names, 1 + a.n_cnames, &keep[i],
                                  now + (uint64_t) timeout_s * 1000);
        }
        dnsp_count_query(p, true);
        dnsp_log_query(p, &q, "allow", "allowed", keep, n);
        uint32_t ttl_left = (uint32_t) (left_ms / 1000);
        uint32_t ttl = a.ttl < ttl_left ? a.ttl : ttl_left;
        reply(p, e->client_tcp, &e->client, e->client_len, &q, DNS_RCODE_NOERROR, keep, n, ttl);
        pending_free(e);
}

/* full mode: the upstream's reply, relayed with the client's id. */
static void relay(struct dns_proxy *p, struct pending *e, uint8_t *msg, size_t len)
{
        if (len < DNS_HEADER_SIZE || ((msg[0] << 8) | msg[1]) != e->up_id || !(msg[2] & 0x80))
                return;
        msg[0] = (uint8_t) (e->client_id >> 8);
        msg[1] = (uint8_t) e->client_id;
        dnsp_count_query(p, true);
        send_to_client(p, e->client_tcp, &e->client, e->client_len, msg, len);
        pending_free(e);
}

static void got_upstream(struct dns_proxy *p, struct pending *e, uint8_t *msg, size_t len)
{
        if (e->raw)
                relay(p, e, msg, len);
        else
                answer(p, e, msg, len);
}

static void upstream_ready(struct dns_proxy *p, struct pending *e, short revents)
{
        if (e->state == UP_UDP) {
                uint8_t buf[DNS_UDP_MAX * 4];
                ssize_t n = recv(e->fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (n > 0)
                        got_upstream(p, e, buf, (size_t) n);
                return;
        }
        if (e->state == UP_TCP_CONNECT) {
                /* The query with its length in front, as one write. */
                e->query[0] = (uint8_t) (e->query_len >> 8);
                e->query[1] = (uint8_t) e->query_len;
                ssize_t n = send(e->fd, e->query + e->tcp_sent, e->query_len + 2 - e->tcp_sent,
                                 MSG_DONTWAIT | MSG_NOSIGNAL);
                if (n < 0 && errno != EAGAIN) {
                        fail_pending(p, e, DNS_RCODE_SERVFAIL);
                        return;
                }
                if (n > 0)
                        e->tcp_sent += (size_t) n;
                if (e->tcp_sent == e->query_len + 2) {
                        e->tcp_buf = malloc(2 + DNS_TCP_MAX);
                        if (!e->tcp_buf) {
                                fail_pending(p, e, DNS_RCODE_SERVFAIL);
                                return;
                        }
                        e->state = UP_TCP_READ;
                }
                return;
        }
        if (e->state == UP_TCP_READ) {
                size_t want =
                        e->tcp_got < 2 ? 2 : 2 + (size_t) (e->tcp_buf[0] << 8 | e->tcp_buf[1]);
                ssize_t n = recv(e->fd, e->tcp_buf + e->tcp_got, want - e->tcp_got, MSG_DONTWAIT);
                if (n == 0 || (n < 0 && errno != EAGAIN)) {
                        fail_pending(p, e, DNS_RCODE_SERVFAIL);
                        return;
                }
                if (n > 0)
                        e->tcp_got += (size_t) n;
                if (e->tcp_got >= 2 &&
                    e->tcp_got == 2 + (size_t) (e->tcp_buf[0] << 8 | e->tcp_buf[1])) {
                        size_t len = e->tcp_got - 2;
                        got_upstream(p, e, e->tcp_buf + 2, len);
                        if (e->used) /* not an answer to us: give up */
                                fail_pending(p, e, DNS_RCODE_SERVFAIL);
                }
        }
}

/* ---- queries from the sandbox ---- */

static struct pending *new_pending(struct dns_proxy *p)
{
        for (size_t i = 0; i < MAX_PENDING; i++)
                if (!p->pending[i].used) {
                        struct pending *e = &p->pending[i];
                        memset(e, 0, sizeof(*e));
                        e->used = true;
                        e->fd = -1;
                        return e;
                }
        return NULL;
}

static void handle_query(struct dns_proxy *p, const uint8_t *msg, size_t len, int client_tcp,
                         const struct sockaddr_storage *from, socklen_t from_len)
{
        struct dns_query q;
        int r = dns_parse_query(msg, len, &q);
        if (r == -EBADMSG || len < DNS_HEADER_SIZE) {
                dnsp_count_query(p, false);
                if (client_tcp >= 0)
                        p->tcp[client_tcp].fd = safe_close(p->tcp[client_tcp].fd);
                return; /* garbage: no answer */
        }
        if (r < 0) {
                /* Several questions, an answer, another opcode: refuse
                 * without echoing what we did not understand. */
                struct dns_query bare = {.id = q.id, .rd = q.rd};
                /* Room for the empty question dns_build_reply writes; only
                 * the header is sent (it was DNS_HEADER_SIZE bytes, so the
                 * build failed and no FORMERR or NOTIMP ever went out). */
                uint8_t buf[DNS_HEADER_SIZE + 5];
                int n = dns_build_reply(&bare, r == -ENOTSUP ? DNS_RCODE_NOTIMP : DNS_RCODE_FORMERR,
                                        NULL, 0, 0, buf, sizeof(buf));
                dnsp_count_query(p, false);
                if (n > 0) {
                        buf[5] = 0; /* no question */
                        send_to_client(p, client_tcp, from, from_len, buf, DNS_HEADER_SIZE);
                }
                return;
        }
        bool raw = p->plan->mode == NETNS_MODE_FULL;
        if (!raw) {
                if (q.qclass != DNS_CLASS_IN || !dns_name_allowed(p->plan, q.name)) {
                        deny_name(p, client_tcp, from, from_len, &q, q.name, DNS_RCODE_NXDOMAIN,
                                  "not allowed");
                        return;
                }
                if (q.qtype != DNS_TYPE_A) {
                        /* AAAA: IPv6 is off inside. HTTPS, SVCB, TXT, ANY…: not
                         * needed to connect, and a channel out. */
                        dnsp_count_query(p, true);
                        dnsp_log_query(p, &q, "allow", "nodata", NULL, 0);
                        reply(p, client_tcp, from, from_len, &q, DNS_RCODE_NOERROR, NULL, 0, 0);
                        return;
                }
        }
        struct pending *e = new_pending(p);
        if (!e) {
                reply(p, client_tcp, from, from_len, &q, DNS_RCODE_SERVFAIL, NULL, 0, 0);
                return;
        }
        e->raw = raw;
        e->q = q;
        e->client_id = q.id;
        e->client_tcp = client_tcp;
        memcpy(&e->client, from, from_len);
        e->client_len = from_len;
        if (getrandom(&e->up_id, sizeof(e->up_id), 0) != (ssize_t) sizeof(e->up_id))
                e->up_id = (uint16_t) monotonic_ms();
        if (raw) {
                if (len > sizeof(e->query) - 2) {
                        pending_free(e);
                        return;
                }
                memcpy(e->query + 2, msg, len);
                e->query[2] = (uint8_t) (e->up_id >> 8);
                e->query[3] = (uint8_t) e->up_id;
                e->query_len = len;
        } else {
                int n = dns_build_query(e->up_id, q.name, q.qtype, e->query + 2,
                                        sizeof(e->query) - 2);
                if (n < 0) {
                        fail_pending(p, e, DNS_RCODE_FORMERR);
                        return;
                }
                e->query_len = (size_t) n;
        }
        if (upstream_send(p, e, client_tcp >= 0 && raw) < 0)
                fail_pending(p, e, DNS_RCODE_SERVFAIL);
}

static ssize_t udp_recv(struct dns_proxy *p, uint8_t *buf, size_t cap,
                        struct sockaddr_storage *from, socklen_t *from_len)
{
        *from_len = sizeof(*from);
        return recvfrom(p->udp_fd, buf, cap, MSG_DONTWAIT, (struct sockaddr *) from, from_len);
}

/* Up to 16 datagrams, one token each: with none left the rest waits in
 * the socket (proxy_main polls it again once a token is due). */
static void udp_ready(struct dns_proxy *p)
{
        for (int i = 0; i < 16 && bucket_take(&p->queries); i++) {
                uint8_t buf[DNS_UDP_MAX];
                struct sockaddr_storage from;
                socklen_t from_len;
                ssize_t n = udp_recv(p, buf, sizeof(buf), &from, &from_len);
                if (n < 0) {
                        p->queries.milli += 1000; /* not spent */
                        return;
                }
                handle_query(p, buf, (size_t) n, -1, &from, from_len);
        }
}

static void tcp_accept(struct dns_proxy *p)
{
        int fd = accept4(p->tcp_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
                return;
        for (size_t i = 0; i < MAX_TCP; i++)
                if (p->tcp[i].fd < 0) {
                        p->tcp[i] = (struct tcp_client){
                                .fd = fd, .deadline = monotonic_ms() + CLIENT_TIMEOUT};
                        return;
                }
        close(fd); /* too many at once */
}

static void tcp_client_ready(struct dns_proxy *p, size_t i)
{
        struct tcp_client *c = &p->tcp[i];
        size_t want = c->got < 2 ? 2 : 2 + (size_t) (c->buf[0] << 8 | c->buf[1]);
        if (want > sizeof(c->buf)) {
                c->fd = safe_close(c->fd);
                return;
        }
        ssize_t n = recv(c->fd, c->buf + c->got, want - c->got, MSG_DONTWAIT);
        if (n == 0 || (n < 0 && errno != EAGAIN)) {
                c->fd = safe_close(c->fd);
                return;
        }
        if (n > 0)
                c->got += (size_t) n;
        if (c->got >= 2 && c->got == 2 + (size_t) (c->buf[0] << 8 | c->buf[1])) {
                if (!bucket_take(&p->queries)) {
                        dnsp_count_limited(p, NETNS_LIMITED_DNS, 1);
                        c->fd = safe_close(c->fd);
                        return;
                }
                c->waiting = true;
                struct sockaddr_storage none = {0};
                handle_query(p, c->buf + 2, c->got - 2, (int) i, &none, 0);
        }
}

/* ---- the thread ---- */

static void expire(struct dns_proxy *p, uint64_t now)
{
        for (size_t i = 0; i < MAX_PENDING; i++) {
                struct pending *e = &p->pending[i];
                if (!e->used || now < e->deadline)
                        continue;
                /* The next upstream server, over the same transport. */
                bool tcp = e->state != UP_UDP;
                if (e->upstream + 1 < p->plan->n_upstream) {
                        e->upstream++;
                        if (upstream_send(p, e, tcp) == 0)
                                continue;
                }
                fail_pending(p, e, DNS_RCODE_SERVFAIL);
        }
        for (size_t i = 0; i < MAX_TCP; i++)
                if (p->tcp[i].fd >= 0 && !p->tcp[i].waiting && now >= p->tcp[i].deadline)
                        p->tcp[i].fd = safe_close(p->tcp[i].fd);
}

/* The kernel's NFLOG messages; also read by dns_proxy_unwatch, from the
 * supervisor's thread, so one reader at a time. */
static void read_refusals(struct dns_proxy *p)
{
        if (!p->nflog)
                return;
        pthread_mutex_lock(&p->read_lock);
        bucket_refill(&p->reports, monotonic_ms());
        size_t tokens = (size_t) (p->reports.milli / 1000), left = tokens;
        uint64_t skipped = nflog_read(p->nflog, &left, dnsp_refused, p);
        p->reports.milli -= (uint64_t) (tokens - left) * 1000;
        pthread_mutex_unlock(&p->read_lock);
        dnsp_count_limited(p, NETNS_LIMITED_LOG, skipped);
}

static void *proxy_main(void *arg)
{
        struct dns_proxy *p = arg;
        for (;;) {
                struct pollfd pfd[FIXED_FDS + MAX_TCP + MAX_PENDING];
                size_t map[MAX_TCP + MAX_PENDING];
                nfds_t n = 0;
                pfd[n++] = (struct pollfd){p->stop_fd, POLLIN, 0};
                uint64_t now = monotonic_ms(), next = now + 1000;
                /* No token: the socket is left alone until one is due. */
                uint64_t wait = bucket_wait_ms(&p->queries, now);
                pfd[n++] = (struct pollfd){wait ? -1 : p->udp_fd, POLLIN, 0};
                next = wait && now + wait < next ? now + wait : next;
                pfd[n++] = (struct pollfd){p->tcp_fd, POLLIN, 0};
                uint64_t wait_log = bucket_wait_ms(&p->reports, now);
                pfd[n++] =
                        (struct pollfd){p->nflog && !wait_log ? nflog_fd(p->nflog) : -1, POLLIN, 0};
                next = wait_log && now + wait_log < next ? now + wait_log : next;
                for (size_t i = 0; i < MAX_TCP; i++)
                        if (p->tcp[i].fd >= 0 && !p->tcp[i].waiting) {
                                map[n - FIXED_FDS] = i;
                                pfd[n++] = (struct pollfd){p->tcp[i].fd, POLLIN, 0};
                                next = p->tcp[i].deadline < next ? p->tcp[i].deadline : next;
                        }
                size_t first_pending = n;
                for (size_t i = 0; i < MAX_PENDING; i++)
                        if (p->pending[i].used) {
                                struct pending *e = &p->pending[i];
                                map[n - FIXED_FDS] = i;
                                pfd[n++] = (struct pollfd){
                                        e->fd, e->state == UP_TCP_CONNECT ? POLLOUT : POLLIN, 0};
                                next = e->deadline < next ? e->deadline : next;
                        }
                int timeout = next > now ? (int) (next - now) : 0;
                int r = poll(pfd, n, timeout);
                if (r < 0 && errno != EINTR)
                        break;
                if (pfd[0].revents)
                        break;
                if (r > 0) {
                        if (pfd[1].revents)
                                udp_ready(p);
                        if (pfd[2].revents)
                                tcp_accept(p);
                        if (pfd[3].revents)
                                read_refusals(p);
                        for (nfds_t i = FIXED_FDS; i < n; i++) {
                                if (!pfd[i].revents)
                                        continue;
                                if (i < first_pending)
                                        tcp_client_ready(p, map[i - FIXED_FDS]);
                                else if (p->pending[map[i - FIXED_FDS]].used &&
                                         p->pending[map[i - FIXED_FDS]].fd == pfd[i].fd)
                                        upstream_ready(p, &p->pending[map[i - FIXED_FDS]],
                                                       pfd[i].revents);
                        }
                }
                expire(p, monotonic_ms());
        }
        return NULL;
}

static int listen_on(const struct netns_plan *plan, int type, psrun_error *err)
{
        struct sockaddr_in sa = {
                .sin_family = AF_INET, .sin_port = htons(53), .sin_addr = plan->gateway};
        int fd = socket(AF_INET, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return psrun_error_errno(err, errno, "network: dns proxy: socket");
        int one = 1;
        (void) setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        /* Only the sandbox's veth: no one else may use this resolver. */
        if (setsockopt(fd, SOL_SOCKET, SO_BINDTODEVICE, plan->host_if,
                       (socklen_t) strlen(plan->host_if)) < 0 ||
            bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 ||
            (type == SOCK_STREAM && listen(fd, 16) < 0)) {
                int e = errno;
                close(fd);
                return psrun_error_errno(err, e, "network: dns proxy: listen on %s:53/%s",
                                         inet_ntoa(plan->gateway),
                                         type == SOCK_STREAM ? "tcp" : "udp");
        }
        return fd;
}

int dns_proxy_start(const struct netns_plan *plan, int nft, int relay_fd, struct dns_proxy **ret,
                    psrun_error *err)
{
        *ret = NULL;
        if (!plan->veth) {
                safe_close(relay_fd);
                return 0;
        }
        struct dns_proxy *p = calloc(1, sizeof(*p));
        if (!p) {
                safe_close(relay_fd);
                return psrun_error_errno(err, ENOMEM, "network: dns proxy");
        }
        p->plan = plan;
        p->nft = nft;
        p->stop_fd = p->udp_fd = p->tcp_fd = -1;
        p->stats.active = true;
        pthread_mutex_init(&p->lock, NULL);
        pthread_mutex_init(&p->read_lock, NULL);
        pthread_mutex_init(&p->nft_lock, NULL);
        bucket_init(&p->queries, QUERY_RATE, QUERY_BURST);
        bucket_init(&p->reports, REPORT_RATE, REPORT_BURST);
        for (size_t i = 0; i < MAX_TCP; i++)
                p->tcp[i].fd = -1;
        int r = 0;
        if (plan->log_path) {
                int fd = open(plan->log_path,
                              O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY,
                              0600);
                if (fd < 0 || !(p->log = fdopen(fd, "a"))) {
                        r = psrun_error_errno(err, errno, "network: network_log: open %s",
                                              plan->log_path);
                        if (fd >= 0)
                                close(fd);
                }
        }
        /* The group claimed with the lease (netns_lease), else our own. */
        if (r >= 0 && plan->nflog)
                p->nflog = plan->nflog;
        else if (r >= 0 && (r = nflog_open(plan->nflog_group, &p->nflog, err)) >= 0)
                p->own_nflog = true;
        if (r >= 0 && (p->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK)) < 0)
                r = psrun_error_errno(err, errno, "network: dns proxy: eventfd");
        if (r >= 0 && (p->udp_fd = listen_on(plan, SOCK_DGRAM, err)) < 0)
                r = p->udp_fd;
        if (r >= 0 && (p->tcp_fd = listen_on(plan, SOCK_STREAM, err)) < 0)
                r = p->tcp_fd;
        /* The name check before the proxy answers anything: every pin it
         * makes is told to the relay. */
        if (r >= 0 && relay_fd >= 0)
                r = name_relay_start(plan, TAKE_FD(relay_fd), dnsp_name_verdict, p, &p->relay, err);
        safe_close(relay_fd);
        if (r >= 0) {
                int e = pthread_create(&p->thread, NULL, proxy_main, p);
                if (e != 0)
                        r = psrun_error_errno(err, e, "network: dns proxy: thread");
                else
                        p->started = true;
        }
        if (r < 0) {
                dns_proxy_stop(p, NULL);
                return r;
        }
        *ret = p;
        return 0;
}

void dns_proxy_stop(struct dns_proxy *p, struct netns_stats *stats)
{
        if (!p)
                return;
        if (p->started) {
                uint64_t one = 1;
                (void) !write(p->stop_fd, &one, sizeof(one));
                pthread_join(p->thread, NULL);
        }
        /* Its verdicts go to the counts and the log: stopped before they do. */
        name_relay_stop(p->relay);
        p->relay = NULL;
        /* What the kernel logged until the sandbox ended, and what the
         * limits held back: the table's counters, and the queries still
         * queued or dropped at the socket's queue (never answered). */
        if (p->nflog) {
                read_refusals(p);
                /* What is queued still (at most the socket's buffer). */
                for (int i = 0; i < 64; i++) {
                        size_t budget = 64;
                        dnsp_count_limited(p, NETNS_LIMITED_LOG,
                                           nflog_read(p->nflog, &budget, dnsp_refused, p));
                        if (budget == 64)
                                break;
                }
        }
        if (p->started) {
                dnsp_sync_limited(p);
                uint8_t buf[DNS_UDP_MAX];
                struct sockaddr_storage from;
                socklen_t from_len;
                for (int i = 0; i < 4096 && udp_recv(p, buf, sizeof(buf), &from, &from_len) >= 0;
                     i++)
                        dnsp_count_limited(p, NETNS_LIMITED_DNS, 1);
        }
        if (p->nflog && p->own_nflog)
                nflog_close(p->nflog);
        for (size_t i = 0; i < MAX_PENDING; i++)
                if (p->pending[i].used)
                        pending_free(&p->pending[i]);
        for (size_t i = 0; i < MAX_TCP; i++)
                safe_close(p->tcp[i].fd);
        safe_close(p->stop_fd);
        safe_close(p->udp_fd);
        safe_close(p->tcp_fd);
        if (p->log)
                fclose(p->log);
        if (stats)
                *stats = p->stats;
        pthread_mutex_destroy(&p->lock);
        pthread_mutex_destroy(&p->read_lock);
        pthread_mutex_destroy(&p->nft_lock);
        free(p);
}

int dns_proxy_watch(struct dns_proxy *p, struct netns_stats *w)
{
        memset(w, 0, sizeof(*w));
        if (!p)
                return 0;
        w->active = true;
        /* What the limits held back until now is not this window's. */
        dnsp_sync_limited(p);
        int r = -EAGAIN;
        pthread_mutex_lock(&p->lock);
        for (size_t i = 0; i < DNS_PROXY_MAX_WATCHERS && r < 0; i++)
                if (!p->watchers[i]) {
                        p->watchers[i] = w;
                        r = 0;
                }
        pthread_mutex_unlock(&p->lock);
        return r;
}

void dns_proxy_unwatch(struct dns_proxy *p, struct netns_stats *w)
{
        if (!p)
                return;
        /* What the kernel logged until now counts still: the connection
         * refused just before the command exited is queued on the socket
         * already (NFLOG's queue threshold is one packet). */
        read_refusals(p);
        dnsp_sync_limited(p);
        pthread_mutex_lock(&p->lock);
        for (size_t i = 0; i < DNS_PROXY_MAX_WATCHERS; i++)
                if (p->watchers[i] == w)
                        p->watchers[i] = NULL;
        pthread_mutex_unlock(&p->lock);
}
