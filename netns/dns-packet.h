/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * DNS messages (RFC 1035, EDNS per RFC 6891), parsed and built without a
 * syscall: the sandbox and the upstream are both untrusted, so every offset
 * is checked, compression pointers may only point backwards and are
 * followed a bounded number of times, and a malformed message is an error,
 * never a crash. Unit-tested and fuzzed (tests/fuzz/fuzz_dns.c).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define DNS_NAME_MAX    254 /* 253 characters and the NUL */
#define DNS_MAX_ADDRS   16
#define DNS_MAX_CNAMES  8
#define DNS_UDP_MAX     1232 /* what we accept and offer with EDNS */
#define DNS_TCP_MAX     65535
#define DNS_HEADER_SIZE 12

enum {
        DNS_TYPE_A = 1,
        DNS_TYPE_CNAME = 5,
        DNS_TYPE_AAAA = 28,
        DNS_TYPE_OPT = 41,
        DNS_CLASS_IN = 1,
        DNS_RCODE_NOERROR = 0,
        DNS_RCODE_FORMERR = 1,
        DNS_RCODE_SERVFAIL = 2,
        DNS_RCODE_NXDOMAIN = 3,
        DNS_RCODE_NOTIMP = 4,
        DNS_RCODE_REFUSED = 5,
};

/* A question from a client: one question, a standard query. */
struct dns_query {
        uint16_t id;
        bool rd;
        char name[DNS_NAME_MAX]; /* lowercase, no trailing dot; "" for the root */
        uint16_t qtype, qclass;
        size_t question_end; /* offset just past the question, for echoing it */
};

struct dns_addr {
        int family; /* AF_INET or AF_INET6 */
        uint8_t addr[16];
};

/* An upstream answer to one question, its CNAME chain followed. */
struct dns_answer {
        uint16_t id;
        uint8_t rcode;
        bool truncated;
        char cnames[DNS_MAX_CNAMES][DNS_NAME_MAX]; /* the chain's hops, in order */
        size_t n_cnames;
        struct dns_addr addrs[DNS_MAX_ADDRS]; /* of the chain's last name */
        size_t n_addrs;
        uint32_t ttl; /* the smallest TTL along the chain */
};

/* 0, or -EBADMSG (malformed), -EPROTO (not a query, or not one question:
 * answer FORMERR), -ENOTSUP (opcode other than QUERY: answer NOTIMP). */
int dns_parse_query(const uint8_t *msg, size_t len, struct dns_query *q);

/* A query for name/qtype with id, RD set and an EDNS OPT record; returns
 * its length or -ENOSPC / -EINVAL. */
int dns_build_query(uint16_t id, const char *name, uint16_t qtype, uint8_t *buf, size_t cap);

/* Parses the reply to (name, qtype): the question must match, the answer
 * section is walked, CNAMEs from name onwards collected, and the addresses
 * of qtype that belong to the chain's end kept. 0 or -EBADMSG. */
int dns_parse_answer(const uint8_t *msg, size_t len, const char *name, uint16_t qtype,
                     struct dns_answer *a);

/* The reply to q: rcode, and for NOERROR the addresses (of q->qtype) as
 * records of q->name with ttl. The question is echoed from q. Returns the
 * length or -ENOSPC. */
int dns_build_reply(const struct dns_query *q, uint8_t rcode, const struct dns_addr *addrs,
                    size_t n_addrs, uint32_t ttl, uint8_t *buf, size_t cap);

/* "a.b.example.com" matches the pattern "example.com" exactly, and
 * "*.example.com" for any name strictly below example.com. */
bool dns_name_matches(const char *name, const char *pattern);
