/* SPDX-License-Identifier: MIT */
/* The DNS parser and builder (netns/dns-packet.c): hostile messages first. */
#include <arpa/inet.h>
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#include "netns/dns-packet.h"

/* A query for name/type, built by hand so the builder is not tested by
 * itself. */
static size_t make_query(uint8_t *buf, uint16_t id, uint16_t flags, uint16_t qdcount,
                         const char *wire_name, size_t name_len, uint16_t qtype)
{
        uint8_t h[12] = {(uint8_t) (id >> 8),      (uint8_t) id,
                         (uint8_t) (flags >> 8),   (uint8_t) flags,
                         (uint8_t) (qdcount >> 8), (uint8_t) qdcount};
        memcpy(buf, h, 12);
        memcpy(buf + 12, wire_name, name_len);
        size_t off = 12 + name_len;
        buf[off++] = (uint8_t) (qtype >> 8);
        buf[off++] = (uint8_t) qtype;
        buf[off++] = 0;
        buf[off++] = 1;
        return off;
}

Test(dns_packet, query_parses)
{
        uint8_t buf[512];
        size_t len = make_query(buf, 0x1234, 0x0100, 1, "\7Example\3COM\0", 13, DNS_TYPE_A);
        struct dns_query q;
        cr_assert_eq(dns_parse_query(buf, len, &q), 0);
        cr_expect_eq(q.id, 0x1234);
        cr_expect(q.rd);
        cr_expect_str_eq(q.name, "example.com");
        cr_expect_eq(q.qtype, DNS_TYPE_A);
        cr_expect_eq(q.question_end, len);
}

Test(dns_packet, hostile_queries_are_errors)
{
        uint8_t buf[600] = {0};
        struct dns_query q;
        /* too short, a response, several questions, another opcode */
        cr_expect_eq(dns_parse_query(buf, 5, &q), -EBADMSG);
        size_t len = make_query(buf, 1, 0x8000, 1, "\1a\0", 3, 1);
        cr_expect_eq(dns_parse_query(buf, len, &q), -EPROTO);
        len = make_query(buf, 1, 0, 2, "\1a\0", 3, 1);
        cr_expect_eq(dns_parse_query(buf, len, &q), -EPROTO);
        len = make_query(buf, 1, 0x2800, 1, "\1a\0", 3, 1);
        cr_expect_eq(dns_parse_query(buf, len, &q), -ENOTSUP);
        /* a label running past the end */
        len = make_query(buf, 1, 0, 1, "\77ab", 3, 1);
        cr_expect_eq(dns_parse_query(buf, 15, &q), -EBADMSG);
        /* a compression pointer to itself, and one pointing forwards */
        len = make_query(buf, 1, 0, 1, "\xc0\x0c", 2, 1);
        cr_expect_eq(dns_parse_query(buf, len, &q), -EBADMSG);
        len = make_query(buf, 1, 0, 1, "\xc0\x20", 2, 1);
        cr_expect_eq(dns_parse_query(buf, len, &q), -EBADMSG);
        /* a dot or NUL inside a label: "evil.test" smuggled as one label */
        len = make_query(buf, 1, 0, 1, "\11evil.test\0", 11, 1);
        cr_expect_eq(dns_parse_query(buf, len, &q), -EBADMSG);
        len = make_query(buf, 1, 0, 1, "\3a\0b\0", 5, 1);
        cr_expect_eq(dns_parse_query(buf, len, &q), -EBADMSG);
        /* a name longer than 253 characters */
        char longname[320];
        size_t n = 0;
        for (int i = 0; i < 5; i++) {
                longname[n++] = 60;
                memset(longname + n, 'a', 60);
                n += 60;
        }
        longname[n++] = 0;
        len = make_query(buf, 1, 0, 1, longname, n, 1);
        cr_expect_eq(dns_parse_query(buf, len, &q), -EBADMSG);
        /* no room for the type and class */
        len = make_query(buf, 1, 0, 1, "\1a\0", 3, 1);
        cr_expect_eq(dns_parse_query(buf, len - 2, &q), -EBADMSG);
}

Test(dns_packet, query_round_trip_and_reply)
{
        uint8_t buf[512];
        int len = dns_build_query(0xbeef, "pypi.org", DNS_TYPE_A, buf, sizeof(buf));
        cr_assert_gt(len, 0);
        struct dns_query q;
        cr_assert_eq(dns_parse_query(buf, (size_t) len, &q), 0,
                     "a query with an EDNS OPT record is a query");
        cr_expect_str_eq(q.name, "pypi.org");
        cr_expect_eq(q.id, 0xbeef);
        cr_expect_eq(dns_build_query(1, "a..b", DNS_TYPE_A, buf, sizeof(buf)), -ENOSPC);
        cr_expect_lt(dns_build_query(1, "pypi.org", DNS_TYPE_A, buf, 20), 0);

        size_t qlen = make_query(buf, 7, 0x0100, 1, "\4pypi\3org\0", 10, DNS_TYPE_A);
        cr_assert_eq(dns_parse_query(buf, qlen, &q), 0);
        struct dns_addr addrs[2] = {{AF_INET, {192, 0, 2, 1}},
                                    {AF_INET6, {0x20, 0x01, 0x0d, 0xb8}}};
        uint8_t out[512];
        len = dns_build_reply(&q, DNS_RCODE_NOERROR, addrs, 2, 60, out, sizeof(out));
        cr_assert_gt(len, 0);
        struct dns_answer a;
        cr_assert_eq(dns_parse_answer(out, (size_t) len, "pypi.org", DNS_TYPE_A, &a), 0);
        cr_expect_eq(a.id, 7);
        cr_expect_eq(a.n_addrs, 1, "only the A record is an answer to an A question");
        cr_expect_eq(memcmp(a.addrs[0].addr, addrs[0].addr, 4), 0);
        cr_expect_eq(a.ttl, 60);
        /* the reply to a different name is not an answer to ours */
        cr_expect_eq(dns_parse_answer(out, (size_t) len, "evil.test", DNS_TYPE_A, &a), -EBADMSG);
        /* no room */
        cr_expect_eq(dns_build_reply(&q, 0, addrs, 2, 60, out, 11), -ENOSPC);
}

/* An answer with a CNAME chain: name -> mid -> end, end has an A record. */
static size_t make_cname_answer(uint8_t *buf, const char *end_wire, size_t end_len, bool loop)
{
        size_t len = make_query(buf, 9, 0x8180, 1, "\1a\4test\0", 8, DNS_TYPE_A);
        buf[7] = 3; /* ancount */
        size_t off = len;
        /* a.test CNAME mid.test (pointer to the question) */
        const uint8_t cname1[] = {0xc0, 12, 0,   5,   0,   1, 0,   0,   0,   30,  0,
                                  10,   3,  'm', 'i', 'd', 4, 't', 'e', 's', 't', 0};
        memcpy(buf + off, cname1, sizeof(cname1));
        size_t mid = off + 12;
        off += sizeof(cname1);
        /* mid.test CNAME end */
        const uint8_t hdr[] = {0xc0, (uint8_t) mid, 0, 5, 0, 1, 0, 0, 0, 20, 0, (uint8_t) end_len};
        memcpy(buf + off, hdr, sizeof(hdr));
        off += sizeof(hdr);
        size_t end = off;
        memcpy(buf + off, end_wire, end_len);
        off += end_len;
        /* end A 192.0.2.7 (or, for the loop, a.test again) */
        const uint8_t a[] = {
                0xc0, (uint8_t) (loop ? 12 : end), 0, 1, 0, 1, 0, 0, 0, 40, 0, 4, 192, 0, 2, 7};
        memcpy(buf + off, a, sizeof(a));
        return off + sizeof(a);
}

Test(dns_packet, cname_chain)
{
        uint8_t buf[512];
        size_t len = make_cname_answer(buf, "\3end\4test\0", 10, false);
        struct dns_answer a;
        cr_assert_eq(dns_parse_answer(buf, len, "a.test", DNS_TYPE_A, &a), 0);
        cr_assert_eq(a.n_cnames, 2);
        cr_expect_str_eq(a.cnames[0], "mid.test");
        cr_expect_str_eq(a.cnames[1], "end.test");
        cr_assert_eq(a.n_addrs, 1);
        cr_expect_eq(a.ttl, 20, "the smallest TTL along the chain");
        /* a chain back to the question is a loop */
        len = make_cname_answer(buf, "\1a\4test\0", 8, true);
        cr_expect_eq(dns_parse_answer(buf, len, "a.test", DNS_TYPE_A, &a), -EBADMSG);
}

Test(dns_packet, truncated_and_rcode)
{
        uint8_t buf[512];
        size_t len = make_query(buf, 3, 0x8380, 1, "\1a\4test\0", 8, DNS_TYPE_A);
        struct dns_answer a;
        cr_assert_eq(dns_parse_answer(buf, len, "a.test", DNS_TYPE_A, &a), 0);
        cr_expect(a.truncated);
        len = make_query(buf, 3, 0x8183, 1, "\1a\4test\0", 8, DNS_TYPE_A);
        cr_assert_eq(dns_parse_answer(buf, len, "a.test", DNS_TYPE_A, &a), 0);
        cr_expect_eq(a.rcode, DNS_RCODE_NXDOMAIN);
        /* an answer count the message does not hold */
        buf[7] = 5;
        buf[3] = 0x80;
        cr_expect_eq(dns_parse_answer(buf, len, "a.test", DNS_TYPE_A, &a), -EBADMSG);
        /* an A record with 5 bytes of data */
        len = make_query(buf, 3, 0x8180, 1, "\1a\4test\0", 8, DNS_TYPE_A);
        buf[7] = 1;
        const uint8_t bad[] = {0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 1, 0, 5, 1, 2, 3, 4, 5};
        memcpy(buf + len, bad, sizeof(bad));
        cr_expect_eq(dns_parse_answer(buf, len + sizeof(bad), "a.test", DNS_TYPE_A, &a), -EBADMSG);
}

Test(dns_packet, name_matching)
{
        cr_expect(dns_name_matches("pypi.org", "pypi.org"));
        cr_expect_not(dns_name_matches("www.pypi.org", "pypi.org"));
        cr_expect(dns_name_matches("a.b.zone.test", "*.zone.test"));
        cr_expect(dns_name_matches("a.zone.test", "*.zone.test"));
        cr_expect_not(dns_name_matches("zone.test", "*.zone.test"));
        cr_expect_not(dns_name_matches("zone.test.evil.test", "*.zone.test"));
        cr_expect_not(dns_name_matches("evilzone.test", "*.zone.test"));
        cr_expect_not(dns_name_matches(".zone.test", "*.zone.test"));
        cr_expect_not(dns_name_matches("pypi.org.evil.test", "pypi.org"));
}
