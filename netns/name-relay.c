/* SPDX-License-Identifier: MIT */
/*
 * The name check's relay (netns/name-relay.h): one thread, one poll loop,
 * at most MAX_CONNS connections of its sandbox at once.
 *
 * A connection goes through three phases: CHECK (the client's first bytes
 * are read into a buffer until the parser decides; nothing reaches the
 * destination before that), CONNECT (to the destination the sandbox
 * asked for, from psrun's namespace) and RELAY (the buffered bytes are
 * written as they were read, then splice(2) moves the rest both ways
 * through a pipe per direction; on port 80 the client's bytes keep going
 * through the HTTP parser, so every request of a kept-alive connection is
 * checked, and the server's are spliced).
 *
 * What a hostile sandbox can make the relay hold is bounded: MAX_CONNS
 * connections (past it a new one is reset), a buffer of at most
 * NAME_CHECK_TLS_RAW bytes (TLS) or HTTP_BUF bytes (HTTP) and two pipes of
 * PIPE_BYTES each per connection, CHECK_MS for the first decision, and
 * READ_RATE reads a second in the CHECK phase (a hello sent a byte at a
 * time costs psrun a read per byte; past the rate the sockets wait). New
 * connections come at most NETNS_CHECK_RATE a second (the table's limit).
 * A refused connection is reset (SO_LINGER 0), as the firewall's
 * refusals are.
 */
#include "netns/name-relay.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/netfilter_ipv4.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "netns/dns-rules.h"
#include "netns/name-check.h"
#include "netns/rate.h"

#define MAX_CONNS  64
#define CHECK_MS   5000 /* from accept to the first verdict */
#define CONNECT_MS 5000 /* to reach the destination */
#define PIPE_BYTES 65536
#define HTTP_BUF   (2 * NAME_CHECK_HEAD_MAX)
/* Reads before a verdict, all connections together: what a sandbox
 * sending its hellos a byte at a time makes the relay spend (each read a
 * poll over every connection and a parse of the head so far) stays a few
 * per cent of a core; an honest hello takes one or two reads. */
#define READ_RATE  400
#define READ_BURST 800
#define NAME_PINS  1024

enum phase { C_FREE, C_CHECK, C_CONNECT, C_RELAY };

struct conn {
        enum phase phase;
        bool http;
        int client, server;
        int up[2], down[2];          /* client -> server, server -> client */
        size_t up_bytes, down_bytes; /* in the pipes */
        bool client_eof, server_eof, up_shut, down_shut;
        struct sockaddr_in dst;
        char dst_text[INET_ADDRSTRLEN];
        uint64_t deadline;
        /* The client's bytes read but not yet relayed: [0, sent) written,
         * [sent, checked) may be, [checked, len) not yet parsed. */
        uint8_t *buf;
        size_t cap, len, checked, sent;
        struct name_tls tls;
        struct name_http hs;
};

struct name_pin {
        uint32_t addr;     /* network order */
        uint64_t until_ms; /* 0: free */
        char name[DNS_NAME_MAX];
};

struct name_relay {
        const struct netns_plan *plan;
        int listen_fd, stop_fd;
        pthread_t thread;
        bool started;
        name_relay_report_fn report;
        void *userdata;
        struct bucket reads;
        struct conn conns[MAX_CONNS];
        /* Written by the proxy's thread, read by the relay's. */
        pthread_mutex_t lock;
        struct name_pin pins[NAME_PINS];
        size_t next_pin;
};

/* ---- the names each address was pinned for ---- */

void name_relay_pinned(struct name_relay *r, const char *const *names, size_t n_names,
                       const struct dns_addr *addr, uint64_t until_ms)
{
        if (!r || addr->family != AF_INET)
                return;
        uint32_t a;
        memcpy(&a, addr->addr, 4);
        uint64_t now = monotonic_ms();
        pthread_mutex_lock(&r->lock);
        for (size_t k = 0; k < n_names; k++) {
                size_t slot = NAME_PINS;
                for (size_t i = 0; i < NAME_PINS; i++) {
                        struct name_pin *e = &r->pins[i];
                        if (e->until_ms > now && e->addr == a && strcmp(e->name, names[k]) == 0) {
                                slot = i;
                                break;
                        }
                        if (slot == NAME_PINS && e->until_ms <= now)
                                slot = i;
                }
                /* Full: the oldest slot in turn (a connection to it is
                 * then refused, never let through). */
                if (slot == NAME_PINS)
                        slot = r->next_pin++ % NAME_PINS;
                struct name_pin *e = &r->pins[slot];
                if (e->until_ms > until_ms && e->addr == a && strcmp(e->name, names[k]) == 0)
                        continue;
                e->addr = a;
                e->until_ms = until_ms;
                snprintf(e->name, sizeof(e->name), "%s", names[k]);
        }
        pthread_mutex_unlock(&r->lock);
}

/* NULL when name may be asked of c's destination, else why not. */
static const char *verify(struct name_relay *r, const struct conn *c, const char *name)
{
        if (!dns_name_allowed(r->plan, name))
                return "not allowed";
        uint64_t now = monotonic_ms();
        bool pinned = false;
        pthread_mutex_lock(&r->lock);
        for (size_t i = 0; i < NAME_PINS && !pinned; i++)
                pinned = r->pins[i].until_ms > now && r->pins[i].addr == c->dst.sin_addr.s_addr &&
                         strcmp(r->pins[i].name, name) == 0;
        pthread_mutex_unlock(&r->lock);
        return pinned ? NULL : "not pinned for the name";
}

/* ---- connections ---- */

static void report(struct name_relay *r, const struct conn *c, const char *name, const char *reason)
{
        struct name_relay_verdict v = {
                .proto = c->http ? "http" : "tls",
                .name = name ? name : "",
                .reason = reason,
                .addr = c->dst_text,
                .port = ntohs(c->dst.sin_port),
        };
        r->report(r->userdata, &v);
}

/* Closes a side with a reset, not a FIN: what the sandbox sees of a
 * refusal, and of a relay cut short. */
static int reset_close(int fd)
{
        if (fd < 0)
                return -1;
        struct linger l = {.l_onoff = 1, .l_linger = 0};
        (void) setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
        close(fd);
        return -1;
}

static void conn_free(struct conn *c, bool reset)
{
        if (reset) {
                c->client = reset_close(c->client);
                c->server = reset_close(c->server);
        } else {
                c->client = safe_close(c->client);
                c->server = safe_close(c->server);
        }
        for (int i = 0; i < 2; i++) {
                c->up[i] = safe_close(c->up[i]);
                c->down[i] = safe_close(c->down[i]);
        }
        free(c->buf);
        memset(c, 0, sizeof(*c));
        c->client = c->server = -1;
        c->up[0] = c->up[1] = c->down[0] = c->down[1] = -1;
}

static void refuse(struct name_relay *r, struct conn *c, const char *name, const char *reason)
{
        report(r, c, name, reason);
        conn_free(c, true);
}

static void accept_one(struct name_relay *r)
{
        struct sockaddr_in peer;
        socklen_t len = sizeof(peer);
        int fd = accept4(r->listen_fd, (struct sockaddr *) &peer, &len,
                         SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0)
                return;
        struct conn *c = NULL;
        for (size_t i = 0; i < MAX_CONNS && !c; i++)
                if (r->conns[i].phase == C_FREE)
                        c = &r->conns[i];
        /* Only the sandbox, only what the table redirected (its original
         * destination is what it asked for), and only so many at once. */
        struct sockaddr_in dst;
        socklen_t dlen = sizeof(dst);
        if (!c || peer.sin_addr.s_addr != r->plan->sandbox.s_addr ||
            getsockopt(fd, SOL_IP, SO_ORIGINAL_DST, &dst, &dlen) < 0 || dst.sin_family != AF_INET) {
                reset_close(fd);
                return;
        }
        c->phase = C_CHECK;
        c->client = fd;
        c->dst = dst;
        inet_ntop(AF_INET, &dst.sin_addr, c->dst_text, sizeof(c->dst_text));
        c->http = ntohs(dst.sin_port) == 80;
        c->deadline = monotonic_ms() + CHECK_MS;
        c->cap = c->http ? HTTP_BUF : NAME_CHECK_TLS_RAW;
}

/* The client's bytes: into the buffer, and parsed as far as they go.
 * 0 to go on, -1 when c was freed. */
static int parse_more(struct name_relay *r, struct conn *c)
{
        struct name_found f;
        if (!c->http) {
                if (c->phase != C_CHECK)
                        return 0;
                int res = name_check_tls(&c->tls, c->buf, c->len, &f);
                if (res == NAME_MORE)
                        return 0;
                if (res == NAME_REFUSED) {
                        refuse(r, c, NULL, f.reason);
                        return -1;
                }
                const char *why = verify(r, c, f.name);
                if (why) {
                        refuse(r, c, f.name, why);
                        return -1;
                }
                report(r, c, f.name, NULL);
                c->checked = c->len;
                return 0;
        }
        while (c->checked < c->len) {
                size_t used = 0;
                int res = name_check_http(&c->hs, c->buf + c->checked, c->len - c->checked, &used,
                                          &f);
                if (res == NAME_REFUSED) {
                        refuse(r, c, NULL, f.reason);
                        return -1;
                }
                if (res == NAME_FOUND) {
                        const char *why = verify(r, c, f.name);
                        if (why) {
                                refuse(r, c, f.name, why);
                                return -1;
                        }
                        report(r, c, f.name, NULL);
                }
                if (used == 0)
                        break;
                c->checked += used;
        }
        return 0;
}

static int start_connect(struct conn *c)
{
        c->server = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (c->server < 0)
                return -errno;
        if (connect(c->server, (struct sockaddr *) &c->dst, sizeof(c->dst)) < 0 &&
            errno != EINPROGRESS)
                return -errno;
        c->phase = C_CONNECT;
        c->deadline = monotonic_ms() + CONNECT_MS;
        return 0;
}

static void client_readable(struct name_relay *r, struct conn *c)
{
        if (!c->buf && !(c->buf = malloc(c->cap))) {
                conn_free(c, true);
                return;
        }
        /* Room first: what was relayed goes, what is unparsed moves up. */
        if (c->sent == c->checked && c->sent > 0) {
                memmove(c->buf, c->buf + c->sent, c->len - c->sent);
                c->len -= c->sent;
                c->checked -= c->sent;
                c->sent = 0;
        }
        ssize_t n = recv(c->client, c->buf + c->len, c->cap - c->len, MSG_DONTWAIT);
        if (n == 0) {
                c->client_eof = true;
                /* Nothing asked for: not a refusal, a client that went. */
                if (c->phase == C_CHECK)
                        conn_free(c, false);
                return;
        }
        if (n < 0) {
                if (errno != EAGAIN)
                        conn_free(c, true);
                return;
        }
        c->len += (size_t) n;
        if (parse_more(r, c) < 0)
                return;
        if (c->phase == C_CHECK && c->checked > 0 && start_connect(c) < 0)
                conn_free(c, true);
}

static bool want_client_read(const struct conn *c)
{
        if (c->client_eof)
                return false;
        if (c->phase == C_CHECK)
                return c->len < c->cap;
        if (c->phase != C_RELAY)
                return false;
        if (!c->http)
                return !c->buf && c->up_bytes < PIPE_BYTES;
        return c->sent == c->checked && (c->len < c->cap || c->sent > 0);
}

/* One splice of at most len bytes: how many moved, 0 for none now, -1 for
 * an error; *eof once in is at its end. */
static ssize_t move(int in, int out, size_t len, bool *eof)
{
        if (len == 0)
                return 0;
        ssize_t n = splice(in, NULL, out, NULL, len, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
        if (n == 0 && eof)
                *eof = true;
        if (n < 0)
                return errno == EAGAIN ? 0 : -1;
        return n;
}

/* Moves what each side has for the other until nothing moves (at most
 * PUMP_ROUNDS rounds: the other connections wait meanwhile), and ends the
 * connection once both directions are done. A return to poll per 64 KiB
 * would cost a third of the throughput. */
#define PUMP_ROUNDS 16
static void pump(struct conn *c)
{
        for (int round = 0; round < PUMP_ROUNDS; round++) {
                size_t moved = 0;
                ssize_t n;
                if (c->sent < c->checked) {
                        n = send(c->server, c->buf + c->sent, c->checked - c->sent,
                                 MSG_DONTWAIT | MSG_NOSIGNAL);
                        if (n < 0 && errno != EAGAIN)
                                goto reset;
                        if (n > 0) {
                                c->sent += (size_t) n;
                                moved += (size_t) n;
                        }
                }
                if (!c->http && c->buf && c->sent == c->checked) {
                        /* The hello and what came with it are out: the
                         * rest is spliced. */
                        free(c->buf);
                        c->buf = NULL;
                        c->len = c->checked = c->sent = 0;
                }
                if (!c->http && !c->buf && !c->client_eof) {
                        if ((n = move(c->client, c->up[1], PIPE_BYTES - c->up_bytes,
                                      &c->client_eof)) < 0)
                                goto reset;
                        c->up_bytes += (size_t) n;
                        moved += (size_t) n;
                }
                if ((n = move(c->up[0], c->server, c->up_bytes, NULL)) < 0)
                        goto reset;
                c->up_bytes -= (size_t) n;
                moved += (size_t) n;
                if (!c->server_eof) {
                        if ((n = move(c->server, c->down[1], PIPE_BYTES - c->down_bytes,
                                      &c->server_eof)) < 0)
                                goto reset;
                        c->down_bytes += (size_t) n;
                        moved += (size_t) n;
                }
                if ((n = move(c->down[0], c->client, c->down_bytes, NULL)) < 0)
                        goto reset;
                c->down_bytes -= (size_t) n;
                moved += (size_t) n;
                if (moved == 0)
                        break;
        }
        if (c->client_eof && !c->up_shut && !c->up_bytes && c->sent == c->checked) {
                shutdown(c->server, SHUT_WR);
                c->up_shut = true;
        }
        if (c->server_eof && !c->down_shut && !c->down_bytes) {
                shutdown(c->client, SHUT_WR);
                c->down_shut = true;
        }
        if (c->up_shut && c->down_shut)
                conn_free(c, false);
        return;
reset:
        conn_free(c, true);
}

static void connected(struct conn *c)
{
        int e = 0;
        socklen_t len = sizeof(e);
        if (getsockopt(c->server, SOL_SOCKET, SO_ERROR, &e, &len) < 0 || e != 0 ||
            pipe2(c->up, O_NONBLOCK | O_CLOEXEC) < 0 ||
            pipe2(c->down, O_NONBLOCK | O_CLOEXEC) < 0) {
                conn_free(c, true);
                return;
        }
        (void) fcntl(c->up[1], F_SETPIPE_SZ, PIPE_BYTES);
        (void) fcntl(c->down[1], F_SETPIPE_SZ, PIPE_BYTES);
        c->phase = C_RELAY;
        pump(c);
}

static void expire(struct name_relay *r, uint64_t now)
{
        for (size_t i = 0; i < MAX_CONNS; i++) {
                struct conn *c = &r->conns[i];
                if (c->phase == C_CHECK && now >= c->deadline)
                        refuse(r, c, NULL, c->http ? "request head timeout" : "hello timeout");
                else if (c->phase == C_CONNECT && now >= c->deadline)
                        conn_free(c, true);
        }
}

static void *relay_main(void *arg)
{
        struct name_relay *r = arg;
        struct pollfd pfd[2 + 2 * MAX_CONNS];
        size_t who[2 * MAX_CONNS];
        for (;;) {
                nfds_t n = 0;
                pfd[n++] = (struct pollfd){r->stop_fd, POLLIN, 0};
                pfd[n++] = (struct pollfd){r->listen_fd, POLLIN, 0};
                uint64_t now = monotonic_ms(), next = now + 1000;
                uint64_t wait = bucket_wait_ms(&r->reads, now);
                if (wait && now + wait < next)
                        next = now + wait;
                for (size_t i = 0; i < MAX_CONNS; i++) {
                        struct conn *c = &r->conns[i];
                        if (c->phase == C_FREE)
                                continue;
                        if (c->phase != C_RELAY && c->deadline < next)
                                next = c->deadline;
                        short ce = 0, se = 0;
                        if (want_client_read(c) && !(c->phase == C_CHECK && wait))
                                ce |= POLLIN;
                        if (c->down_bytes)
                                ce |= POLLOUT;
                        if (c->phase == C_CONNECT)
                                se |= POLLOUT;
                        if (c->phase == C_RELAY) {
                                if (!c->server_eof && c->down_bytes < PIPE_BYTES)
                                        se |= POLLIN;
                                if (c->up_bytes || c->sent < c->checked)
                                        se |= POLLOUT;
                        }
                        who[n - 2] = i;
                        pfd[n++] = (struct pollfd){ce ? c->client : -1, ce, 0};
                        who[n - 2] = i;
                        pfd[n++] = (struct pollfd){se && c->server >= 0 ? c->server : -1, se, 0};
                }
                int timeout = next > now ? (int) (next - now) : 0;
                int res = poll(pfd, n, timeout);
                if (res < 0 && errno != EINTR)
                        break;
                if (pfd[0].revents)
                        break;
                for (nfds_t k = 2; res > 0 && k < n; k++) {
                        struct conn *c = &r->conns[who[k - 2]];
                        short ev = pfd[k].revents;
                        if (!ev || c->phase == C_FREE || pfd[k].fd < 0)
                                continue;
                        bool client = (k - 2) % 2 == 0;
                        if (client && pfd[k].fd != c->client)
                                continue;
                        if (!client && pfd[k].fd != c->server)
                                continue;
                        if (c->phase == C_CHECK) {
                                if (bucket_take(&r->reads))
                                        client_readable(r, c);
                        } else if (c->phase == C_CONNECT) {
                                connected(c);
                        } else {
                                /* HTTP's requests go through the parser; the
                                 * rest is spliced by pump. */
                                if (client && c->http && (ev & (POLLIN | POLLHUP | POLLERR)))
                                        client_readable(r, c);
                                if (c->phase == C_RELAY)
                                        pump(c);
                        }
                }
                if (res > 0 && pfd[1].revents)
                        accept_one(r);
                expire(r, monotonic_ms());
        }
        return NULL;
}

int name_relay_listen(const struct netns_plan *plan, uint16_t *port, psrun_error *err)
{
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr = plan->gateway};
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return psrun_error_errno(err, errno, "network: name check: socket");
        int one = 1;
        socklen_t len = sizeof(sa);
        /* The gateway's address is made with the veth, after the table
         * that names this port: bound before it exists. */
        if (setsockopt(fd, SOL_IP, IP_FREEBIND, &one, sizeof(one)) < 0 ||
            bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 || listen(fd, 64) < 0 ||
            getsockname(fd, (struct sockaddr *) &sa, &len) < 0) {
                int e = errno;
                close(fd);
                return psrun_error_errno(err, e, "network: name check: listen on %s",
                                         inet_ntoa(plan->gateway));
        }
        *port = ntohs(sa.sin_port);
        return fd;
}

int name_relay_start(const struct netns_plan *plan, int listen_fd, name_relay_report_fn report_fn,
                     void *userdata, struct name_relay **ret, psrun_error *err)
{
        *ret = NULL;
        struct name_relay *r = calloc(1, sizeof(*r));
        if (!r) {
                close(listen_fd);
                return psrun_error_errno(err, ENOMEM, "network: name check");
        }
        r->plan = plan;
        r->listen_fd = listen_fd;
        r->report = report_fn;
        r->userdata = userdata;
        pthread_mutex_init(&r->lock, NULL);
        bucket_init(&r->reads, READ_RATE, READ_BURST);
        for (size_t i = 0; i < MAX_CONNS; i++) {
                r->conns[i].client = r->conns[i].server = -1;
                r->conns[i].up[0] = r->conns[i].up[1] = -1;
                r->conns[i].down[0] = r->conns[i].down[1] = -1;
        }
        int e = 0;
        r->stop_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (r->stop_fd < 0)
                e = errno;
        else if ((e = pthread_create(&r->thread, NULL, relay_main, r)) == 0)
                r->started = true;
        if (e) {
                name_relay_stop(r);
                return psrun_error_errno(err, e, "network: name check: thread");
        }
        *ret = r;
        return 0;
}

void name_relay_stop(struct name_relay *r)
{
        if (!r)
                return;
        if (r->started) {
                uint64_t one = 1;
                (void) !write(r->stop_fd, &one, sizeof(one));
                pthread_join(r->thread, NULL);
        }
        for (size_t i = 0; i < MAX_CONNS; i++)
                if (r->conns[i].phase != C_FREE)
                        conn_free(&r->conns[i], true);
        safe_close(r->stop_fd);
        safe_close(r->listen_fd);
        pthread_mutex_destroy(&r->lock);
        free(r);
}
