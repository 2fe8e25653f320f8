/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Netlink messages built by hand, for rtnetlink (netns/veth.c, the address
 * pool's route check) and nf_tables (netns/nft.c): a growing buffer of
 * messages and attributes, sent in one sendmsg(), every message asking for
 * its own ack. No library: libnl and libnftables cost more to load, and
 * libnftables to parse and to fetch its cache, than the few dozen messages
 * a sandbox's network needs (docs/benchmarks.md).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct nlbuf {
        char *data;
        size_t len, cap;
        bool failed;    /* out of memory: the buffer is never sent */
        uint32_t seq;   /* the last message's sequence number */
        unsigned acked; /* messages that asked for an ack */
};

#define NLBUF_INIT                                                                                 \
        {                                                                                          \
                0                                                                                  \
        }

void nlbuf_free(struct nlbuf *b);

/* Appends a message (with NLM_F_REQUEST and, when ack, NLM_F_ACK) and its
 * fixed header; returns its offset for nl_end(). */
size_t nl_begin(struct nlbuf *b, uint16_t type, uint16_t flags, bool ack, const void *hdr,
                size_t hdr_len);
void nl_end(struct nlbuf *b, size_t msg);

/* Bytes that are not an attribute (a fixed header inside one), aligned. */
void nl_raw(struct nlbuf *b, const void *data, size_t len);
void nl_put(struct nlbuf *b, uint16_t type, const void *data, size_t len);
void nl_put_str(struct nlbuf *b, uint16_t type, const char *s);
void nl_put_u8(struct nlbuf *b, uint16_t type, uint8_t v);
void nl_put_u32(struct nlbuf *b, uint16_t type, uint32_t v); /* host order */
void nl_put_be16(struct nlbuf *b, uint16_t type, uint16_t v);
void nl_put_be32(struct nlbuf *b, uint16_t type, uint32_t v);
void nl_put_be64(struct nlbuf *b, uint16_t type, uint64_t v);
/* A nested attribute: its offset, for nl_nest_end(). */
size_t nl_nest(struct nlbuf *b, uint16_t type);
void nl_nest_end(struct nlbuf *b, size_t nest);

/* A netlink socket of protocol in the calling thread's network namespace,
 * bound, with short acks (NETLINK_CAP_ACK) and extended ones; -errno. */
int nl_open(int protocol);
/* Closes fd without waiting for the kernel. The kernel makes the close of
 * the last reference to any nf_tables socket (NETLINK_NETFILTER: nft,
 * NFLOG) wait until what a transaction of that namespace deleted is freed,
 * an RCU grace period later (8-12 ms here); the caller, done with the
 * socket, need not wait, so that last reference is left to the kernel's
 * AF_UNIX garbage collector (netlink.c says how). */
void nl_close_later(int fd);
/* Sends b in one sendmsg() and reads an ack for every message that asked
 * for one. 0, or the first error (-errno) with the index of the message
 * that failed (0-based, counting every message of b) in *failed. The kernel
 * answers a request inside sendmsg(), so every ack is queued by the time it
 * returns. */
int nl_transact(int fd, struct nlbuf *b, unsigned *failed);
/* A dump request (NLM_F_DUMP) of b's one message: calls fn for every
 * message of the answer until NLMSG_DONE. 0 or -errno. */
struct nlmsghdr;
typedef void (*nl_dump_fn)(const struct nlmsghdr *h, void *arg);
int nl_dump(int fd, struct nlbuf *b, nl_dump_fn fn, void *arg);
