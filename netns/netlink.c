/* SPDX-License-Identifier: MIT */
/* Netlink messages built by hand (netns/netlink.h). */
#include "netns/netlink.h"

#include <endian.h>
#include <errno.h>
#include <linux/netlink.h>
#include <poll.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/fdpass.h"

#ifndef NETLINK_CAP_ACK
#define NETLINK_CAP_ACK 10
#endif
#ifndef NETLINK_EXT_ACK
#define NETLINK_EXT_ACK 11
#endif

void nlbuf_free(struct nlbuf *b)
{
        free(b->data);
        *b = (struct nlbuf) NLBUF_INIT;
}

/* Room for n more bytes, zeroed; NULL (and b->failed) when out of memory. */
static void *reserve(struct nlbuf *b, size_t n)
{
        if (b->failed)
                return NULL;
        if (b->len + n > b->cap) {
                size_t cap = b->cap ? b->cap : 4096;
                while (cap < b->len + n)
                        cap *= 2;
                char *d = realloc(b->data, cap);
                if (!d) {
                        b->failed = true;
                        return NULL;
                }
                b->data = d;
                b->cap = cap;
        }
        void *p = b->data + b->len;
        memset(p, 0, n);
        b->len += n;
        return p;
}

size_t nl_begin(struct nlbuf *b, uint16_t type, uint16_t flags, bool ack, const void *hdr,
                size_t hdr_len)
{
        size_t off = b->len;
        struct nlmsghdr *h = reserve(b, NLMSG_HDRLEN);
        if (!h)
                return off;
        h->nlmsg_type = type;
        h->nlmsg_flags = (uint16_t) (flags | NLM_F_REQUEST | (ack ? NLM_F_ACK : 0));
        h->nlmsg_seq = ++b->seq;
        if (ack)
                b->acked++;
        void *p = reserve(b, NLMSG_ALIGN(hdr_len));
        if (p && hdr_len)
                memcpy(p, hdr, hdr_len);
        return off;
}

void nl_end(struct nlbuf *b, size_t msg)
{
        if (b->failed)
                return;
        ((struct nlmsghdr *) (b->data + msg))->nlmsg_len = (uint32_t) (b->len - msg);
}

void nl_raw(struct nlbuf *b, const void *data, size_t len)
{
        void *p = reserve(b, NLA_ALIGN(len));
        if (p)
                memcpy(p, data, len);
}

void nl_put(struct nlbuf *b, uint16_t type, const void *data, size_t len)
{
        struct nlattr *a = reserve(b, NLA_HDRLEN + NLA_ALIGN(len));
        if (!a)
                return;
        a->nla_type = type;
        a->nla_len = (uint16_t) (NLA_HDRLEN + len);
        if (len)
                memcpy((char *) a + NLA_HDRLEN, data, len);
}

void nl_put_str(struct nlbuf *b, uint16_t type, const char *s)
{
        nl_put(b, type, s, strlen(s) + 1);
}

void nl_put_u8(struct nlbuf *b, uint16_t type, uint8_t v)
{
        nl_put(b, type, &v, sizeof(v));
}

void nl_put_u32(struct nlbuf *b, uint16_t type, uint32_t v)
{
        nl_put(b, type, &v, sizeof(v));
}

void nl_put_be16(struct nlbuf *b, uint16_t type, uint16_t v)
{
        v = htobe16(v);
        nl_put(b, type, &v, sizeof(v));
}

void nl_put_be32(struct nlbuf *b, uint16_t type, uint32_t v)
{
        v = htobe32(v);
        nl_put(b, type, &v, sizeof(v));
}

void nl_put_be64(struct nlbuf *b, uint16_t type, uint64_t v)
{
        v = htobe64(v);
        nl_put(b, type, &v, sizeof(v));
}

size_t nl_nest(struct nlbuf *b, uint16_t type)
{
        size_t off = b->len;
        struct nlattr *a = reserve(b, NLA_HDRLEN);
        if (a)
                a->nla_type = (uint16_t) (type | NLA_F_NESTED);
        return off;
}

void nl_nest_end(struct nlbuf *b, size_t nest)
{
        if (b->failed)
                return;
        ((struct nlattr *) (b->data + nest))->nla_len = (uint16_t) (b->len - nest);
}

int nl_open(int protocol)
{
        int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, protocol);
        if (fd < 0)
                return -errno;
        int one = 1;
        struct sockaddr_nl self = {.nl_family = AF_NETLINK};
        /* Short acks: an error does not echo the whole message back (a
         * batch of many errors would overflow the receive queue). */
        (void) setsockopt(fd, SOL_NETLINK, NETLINK_CAP_ACK, &one, sizeof(one));
        (void) setsockopt(fd, SOL_NETLINK, NETLINK_EXT_ACK, &one, sizeof(one));
        if (bind(fd, (struct sockaddr *) &self, sizeof(self)) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        return fd;
}

void nl_close_later(int fd)
{
        if (fd < 0)
                return;
        /* The socket goes into a datagram in flight to a socket that only
         * that datagram references (the pair's other end is closed): a
         * cycle nothing can reach, which the kernel's AF_UNIX garbage
         * collector frees from a worker of its own, and the wait for the
         * grace period happens there. Where the collector runs in the
         * closing process (older kernels), or the handoff fails (too many
         * fds in flight for this user), the close waits here: slower,
         * never wrong. */
        int pair[2];
        if (socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, pair) == 0) {
                int fds[2] = {fd, pair[0]};
                char byte = 0;
                (void) fdpass_send(pair[1], &byte, 1, fds, 2, MSG_DONTWAIT);
                /* In this order: our own reference to fd, then pair[0]'s,
                 * and only then pair[1], whose release starts the collector
                 * when the rest is already garbage. */
                close(fd);
                close(pair[0]);
                close(pair[1]);
                return;
        }
        close(fd);
}

/* Reads what is queued; counts acks and keeps the first error. */
static int read_acks(int fd, unsigned *acks, int *first, uint32_t *first_seq, int flags)
{
        char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
        for (;;) {
                ssize_t n = recv(fd, buf, sizeof(buf), flags);
                if (n < 0)
                        return errno == EINTR ? 0 : -errno;
                size_t left = (size_t) n;
                for (struct nlmsghdr *h = (struct nlmsghdr *) buf; NLMSG_OK(h, left);
                     h = NLMSG_NEXT(h, left)) {
                        if (h->nlmsg_type != NLMSG_ERROR)
                                continue;
                        if (h->nlmsg_len < NLMSG_LENGTH(sizeof(struct nlmsgerr)))
                                return -EPROTO;
                        const struct nlmsgerr *e = NLMSG_DATA(h);
                        (*acks)++;
                        if (e->error && !*first) {
                                *first = e->error;
                                *first_seq = e->msg.nlmsg_seq;
                        }
                }
                flags |= MSG_DONTWAIT;
        }
}

int nl_transact(int fd, struct nlbuf *b, unsigned *failed)
{
        if (failed)
                *failed = 0;
        if (b->failed)
                return -ENOMEM;
        struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
        struct iovec iov = {.iov_base = b->data, .iov_len = b->len};
        struct msghdr msg = {
                .msg_name = &kernel,
                .msg_namelen = sizeof(kernel),
                .msg_iov = &iov,
                .msg_iovlen = 1,
        };
        ssize_t n;
        do
                n = sendmsg(fd, &msg, 0);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if ((size_t) n != b->len)
                return -EMSGSIZE;
        unsigned acks = 0;
        int first = 0;
        uint32_t first_seq = 0;
        /* Answered inside sendmsg(): all of it is queued already, but wait
         * a little should a kernel ever answer later. */
        int r = read_acks(fd, &acks, &first, &first_seq, MSG_DONTWAIT);
        while (r == -EAGAIN && !first && acks < b->acked) {
                struct pollfd pfd = {fd, POLLIN, 0};
                if (poll(&pfd, 1, 5000) <= 0)
                        return -ETIMEDOUT;
                r = read_acks(fd, &acks, &first, &first_seq, 0);
        }
        if (r < 0 && r != -EAGAIN)
                return r;
        if (first) {
                if (failed && first_seq)
                        *failed = first_seq - 1;
                return first > 0 ? -first : first;
        }
        return acks >= b->acked ? 0 : -EPROTO;
}

int nl_dump(int fd, struct nlbuf *b, nl_dump_fn fn, void *arg)
{
        if (b->failed)
                return -ENOMEM;
        struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
        if (sendto(fd, b->data, b->len, 0, (struct sockaddr *) &kernel, sizeof(kernel)) < 0)
                return -errno;
        char buf[16384] __attribute__((aligned(NLMSG_ALIGNTO)));
        for (;;) {
                ssize_t n = recv(fd, buf, sizeof(buf), 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        return n < 0 ? -errno : -EPROTO;
                size_t left = (size_t) n;
                for (struct nlmsghdr *h = (struct nlmsghdr *) buf; NLMSG_OK(h, left);
                     h = NLMSG_NEXT(h, left)) {
                        if (h->nlmsg_type == NLMSG_DONE)
                                return 0;
                        if (h->nlmsg_type == NLMSG_ERROR) {
                                const struct nlmsgerr *e = NLMSG_DATA(h);
                                if (h->nlmsg_len < NLMSG_LENGTH(sizeof(*e)))
                                        return -EPROTO;
                                if (e->error)
                                        return e->error;
                                continue;
                        }
                        fn(h, arg);
                }
        }
}
