/* SPDX-License-Identifier: MIT */
/* The SNI and Host readers (netns/name-check.c): crafted bytes, the hostile
 * ones first. ClientHellos are built by hand here, not by a TLS library,
 * so each field can be wrong on its own. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#include "netns/name-check.h"

struct bytes {
        uint8_t *p;
        size_t len;
};

static void put(struct bytes *b, const void *s, size_t n)
{
        b->p = realloc(b->p, b->len + n + 1);
        cr_assert(b->p);
        memcpy(b->p + b->len, s, n);
        b->len += n;
}

static void put8(struct bytes *b, unsigned v)
{
        uint8_t c = (uint8_t) v;
        put(b, &c, 1);
}

static void put16(struct bytes *b, unsigned v)
{
        put8(b, v >> 8);
        put8(b, v);
}

/* One extension: type, then its data. */
static void ext(struct bytes *b, unsigned type, const void *data, size_t n)
{
        put16(b, type);
        put16(b, (unsigned) n);
        put(b, data, n);
}

/* server_name with one host_name entry. */
static void ext_sni(struct bytes *b, const char *name)
{
        struct bytes e = {0};
        size_t n = strlen(name);
        put16(&e, (unsigned) n + 3);
        put8(&e, 0);
        put16(&e, (unsigned) n);
        put(&e, name, n);
        ext(b, 0, e.p, e.len);
        free(e.p);
}

/* A ClientHello handshake message (its 4-byte header first) with the
 * extensions exts (NULL: the extensions block left out). */
static struct bytes hello(const struct bytes *exts)
{
        struct bytes body = {0};
        put16(&body, 0x0303);
        uint8_t random[32] = {7};
        put(&body, random, 32);
        put8(&body, 0);  /* session id */
        put16(&body, 2); /* cipher suites */
        put16(&body, 0x1301);
        put8(&body, 1); /* compression */
        put8(&body, 0);
        if (exts) {
                put16(&body, (unsigned) exts->len);
                put(&body, exts->p, exts->len);
        }
        struct bytes h = {0};
        put8(&h, 1);
        put8(&h, (unsigned) (body.len >> 16));
        put16(&h, (unsigned) body.len);
        put(&h, body.p, body.len);
        free(body.p);
        return h;
}

/* The handshake in records of at most rec bytes each. */
static struct bytes records(const struct bytes *hs, size_t rec)
{
        struct bytes r = {0};
        for (size_t off = 0; off < hs->len; off += rec) {
                size_t n = hs->len - off < rec ? hs->len - off : rec;
                put8(&r, 0x16);
                put16(&r, 0x0301);
                put16(&r, (unsigned) n);
                put(&r, hs->p + off, n);
        }
        return r;
}

static struct bytes hello_with_sni(const char *name)
{
        struct bytes e = {0};
        ext_sni(&e, name);
        ext(&e, 0x002b, "\x02\x03\x04", 3);
        struct bytes h = hello(&e);
        struct bytes r = records(&h, 16384);
        free(e.p);
        free(h.p);
        return r;
}

/* Feeds buf whole; the result, with f filled. */
static int tls(const struct bytes *b, struct name_found *f)
{
        struct name_tls t = {0};
        return name_check_tls(&t, b->p, b->len, f);
}

static void expect_refused(const struct bytes *b, const char *reason)
{
        struct name_found f;
        cr_expect_eq(tls(b, &f), NAME_REFUSED, "want refused (%s)", reason);
        if (f.reason)
                cr_expect_str_eq(f.reason, reason);
}

Test(name_check_tls, garbage_and_sslv2_are_refused_at_the_first_byte)
{
        struct name_found f;
        struct name_tls t = {0};
        cr_expect_eq(name_check_tls(&t, (const uint8_t *) "G", 1, &f), NAME_REFUSED);
        cr_expect_str_eq(f.reason, "not tls");
        /* SSLv2's CLIENT-HELLO: a length with the high bit set, then 1. */
        memset(&t, 0, sizeof(t));
        cr_expect_eq(name_check_tls(&t, (const uint8_t *) "\x80\x2e\x01\x00\x02", 5, &f),
                     NAME_REFUSED);
        /* A handshake record of another version, and an empty one. */
        memset(&t, 0, sizeof(t));
        cr_expect_eq(name_check_tls(&t, (const uint8_t *) "\x16\x02\x00\x00\x04", 5, &f),
                     NAME_REFUSED);
        memset(&t, 0, sizeof(t));
        cr_expect_eq(name_check_tls(&t, (const uint8_t *) "\x16\x03\x01\x00\x00", 5, &f),
                     NAME_REFUSED);
        cr_expect_str_eq(f.reason, "malformed record");
        /* A record past TLS's 16 KiB. */
        memset(&t, 0, sizeof(t));
        cr_expect_eq(name_check_tls(&t, (const uint8_t *) "\x16\x03\x01\x40\x01", 5, &f),
                     NAME_REFUSED);
}

Test(name_check_tls, no_sni_is_refused)
{
        struct bytes e = {0};
        ext(&e, 0x002b, "\x02\x03\x04", 3);
        struct bytes h = hello(&e), r = records(&h, 16384);
        expect_refused(&r, "no sni");
        free(h.p);
        free(r.p);
        h = hello(NULL);
        r = records(&h, 16384);
        expect_refused(&r, "no sni");
        free(e.p);
        free(h.p);
        free(r.p);
}

Test(name_check_tls, ip_literal_sni_is_refused_in_every_notation)
{
        const char *const literals[] = {"198.18.0.10", "3323068426", "0xc6.0x12.0.10", "198.18.10",
                                        "127.1"};
        for (size_t i = 0; i < sizeof(literals) / sizeof(literals[0]); i++) {
                struct bytes r = hello_with_sni(literals[i]);
                expect_refused(&r, "ip-literal sni");
                free(r.p);
        }
}

Test(name_check_tls, malformed_names_are_refused)
{
        const char *const names[] = {
                "allowed.test.",  ".allowed.test", "a..test",       "allowed test",
                "allowed.test\n", "[::1]",         "evil.test:443", ""};
        for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
                struct bytes r = hello_with_sni(names[i]);
                struct name_found f;
                cr_expect_eq(tls(&r, &f), NAME_REFUSED, "%s", names[i]);
                free(r.p);
        }
        /* A NUL inside: "allowed.test\0.evil" must not read as allowed.test. */
        struct bytes e = {0};
        struct bytes sn = {0};
        put16(&sn, 21);
        put8(&sn, 0);
        put16(&sn, 18);
        put(&sn, "allowed.test\0.evil", 18);
        ext(&e, 0, sn.p, sn.len);
        struct bytes h = hello(&e), r = records(&h, 16384);
        expect_refused(&r, "malformed sni");
        free(sn.p);
        free(e.p);
        free(h.p);
        free(r.p);
}

Test(name_check_tls, two_server_names_are_refused)
{
        /* Two extensions of type server_name. */
        struct bytes e = {0};
        ext_sni(&e, "allowed.test");
        ext_sni(&e, "other.test");
        struct bytes h = hello(&e), r = records(&h, 16384);
        expect_refused(&r, "duplicate extension");
        free(e.p);
        free(h.p);
        free(r.p);
        /* Two entries in one server_name list. */
        e = (struct bytes){0};
        struct bytes sn = {0};
        put16(&sn, 2 * 3 + 12 + 10);
        put8(&sn, 0);
        put16(&sn, 12);
        put(&sn, "allowed.test", 12);
        put8(&sn, 0);
        put16(&sn, 10);
        put(&sn, "other.test", 10);
        ext(&e, 0, sn.p, sn.len);
        h = hello(&e);
        r = records(&h, 16384);
        expect_refused(&r, "malformed sni");
        free(sn.p);
        free(e.p);
        free(h.p);
        free(r.p);
}

Test(name_check_tls, lengths_that_do_not_add_up_are_refused)
{
        struct bytes r = hello_with_sni("allowed.test");
        /* The extensions' length one more than there is. */
        size_t ext_len_at = 5 + 4 + 2 + 32 + 1 + 4 + 2;
        r.p[ext_len_at + 1]++;
        expect_refused(&r, "malformed hello");
        r.p[ext_len_at + 1] -= 2;
        expect_refused(&r, "malformed hello");
        free(r.p);
        /* Not a ClientHello: a ServerHello (2) from the client. */
        r = hello_with_sni("allowed.test");
        r.p[5] = 2;
        expect_refused(&r, "not a client hello");
        free(r.p);
        /* A handshake message after the hello, in the same record. */
        struct bytes e = {0};
        ext_sni(&e, "allowed.test");
        struct bytes h = hello(&e);
        put(&h, "\x14\x00\x00\x00", 4);
        r = records(&h, 16384);
        expect_refused(&r, "malformed record");
        free(e.p);
        free(h.p);
        free(r.p);
}

Test(name_check_tls, a_hello_past_64_kib_is_refused_before_it_is_all_there)
{
        /* The first record's first bytes say how large the hello is:
         * 65536 bytes of body, 4 past the bound with its header. */
        struct name_tls t = {0};
        struct name_found f;
        cr_expect_eq(
                name_check_tls(&t, (const uint8_t *) "\x16\x03\x01\x00\x04\x01\x01\x00\x00", 9, &f),
                NAME_REFUSED);
        cr_expect_str_eq(f.reason, "hello too large");
        /* One that fits waits for the rest. */
        memset(&t, 0, sizeof(t));
        cr_expect_eq(
                name_check_tls(&t, (const uint8_t *) "\x16\x03\x01\x00\x04\x01\x00\xff\xfc", 9, &f),
                NAME_MORE);
}

Test(name_check_tls, ech_is_flagged_and_its_outer_name_read)
{
        struct bytes e = {0};
        ext_sni(&e, "public.test");
        ext(&e, 0xfe0d, "\x00\x00\x01\x00\x01\x2a\x00\x00\x00\x00", 10);
        struct bytes h = hello(&e), r = records(&h, 16384);
        struct name_found f;
        cr_assert_eq(tls(&r, &f), NAME_FOUND);
        cr_expect_str_eq(f.name, "public.test");
        cr_expect(f.ech);
        free(e.p);
        free(h.p);
        free(r.p);
        e = (struct bytes){0};
        ext_sni(&e, "public.test");
        ext(&e, 0xffce, "\x00", 1);
        h = hello(&e);
        r = records(&h, 16384);
        expect_refused(&r, "esni");
        free(e.p);
        free(h.p);
        free(r.p);
}

Test(name_check_tls, the_name_is_read_lowercase)
{
        struct bytes r = hello_with_sni("Allowed.TEST");
        struct name_found f;
        cr_assert_eq(tls(&r, &f), NAME_FOUND);
        cr_expect_str_eq(f.name, "allowed.test");
        cr_expect_not(f.ech);
        free(r.p);
}

Test(name_check_tls, one_byte_segments_and_one_byte_records)
{
        struct bytes e = {0};
        ext_sni(&e, "allowed.test");
        struct bytes h = hello(&e);
        /* 1-byte records, fed one byte at a time. */
        struct bytes r = records(&h, 1);
        struct name_tls t = {0};
        struct name_found f;
        int res = NAME_MORE;
        size_t n = 0;
        while (res == NAME_MORE && n < r.len)
                res = name_check_tls(&t, r.p, ++n, &f);
        cr_expect_eq(res, NAME_FOUND);
        cr_expect_eq(n, r.len, "decided at %zu of %zu bytes", n, r.len);
        cr_expect_str_eq(f.name, "allowed.test");
        free(e.p);
        free(h.p);
        free(r.p);
}

Test(name_check_tls, a_64_kib_hello_is_read)
{
        struct bytes e = {0};
        ext_sni(&e, "allowed.test");
        uint8_t *pad = calloc(1, 65536);
        /* 4 (header) + 43 (the hello's fields) + 21 (sni) + 4 (padding's header) */
        ext(&e, 0x0015, pad, NAME_CHECK_HELLO_MAX - 72);
        struct bytes h = hello(&e);
        cr_assert_eq(h.len, NAME_CHECK_HELLO_MAX);
        struct bytes r = records(&h, 16384);
        struct name_found f;
        cr_expect_eq(tls(&r, &f), NAME_FOUND);
        cr_expect_str_eq(f.name, "allowed.test");
        /* One byte more is too large. */
        free(e.p);
        free(h.p);
        free(r.p);
        e = (struct bytes){0};
        ext_sni(&e, "allowed.test");
        ext(&e, 0x0015, pad, NAME_CHECK_HELLO_MAX - 72 + 1);
        h = hello(&e);
        r = records(&h, 16384);
        expect_refused(&r, "hello too large");
        free(pad);
        free(e.p);
        free(h.p);
        free(r.p);
}

Test(name_check_tls, records_that_never_complete_stay_undecided_until_the_raw_bound)
{
        /* A record header promising 16 KiB, then nothing: more, never a name. */
        struct name_tls t = {0};
        struct name_found f;
        cr_expect_eq(name_check_tls(&t, (const uint8_t *) "\x16\x03\x01\x40\x00\x01\x00", 7, &f),
                     NAME_MORE);
}

/* ---- HTTP ---- */

static int http(struct name_http *h, const char *s, size_t *used, struct name_found *f)
{
        return name_check_http(h, (const uint8_t *) s, strlen(s), used, f);
}

static void expect_http_refused(const char *req, const char *reason)
{
        struct name_http h = {0};
        struct name_found f;
        size_t used;
        cr_expect_eq(http(&h, req, &used, &f), NAME_REFUSED, "%s", req);
        if (f.reason)
                cr_expect_str_eq(f.reason, reason, "%s", req);
}

Test(name_check_http, ambiguous_requests_are_refused)
{
        expect_http_refused("GET / HTTP/1.1\r\nHost: allowed.test\r\nHost: other.test\r\n\r\n",
                            "two hosts");
        expect_http_refused("GET http://other.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
                            "two hosts");
        expect_http_refused("GET / HTTP/1.1\nHost: allowed.test\n\n", "malformed request");
        expect_http_refused("GET / HTTP/1.1\r\nHost: allowed.test\r\n other.test\r\n\r\n",
                            "malformed header");
        expect_http_refused("GET / HTTP/1.1\r\nHost : allowed.test\r\n\r\n", "malformed header");
        expect_http_refused("POST / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 5\r\n"
                            "Transfer-Encoding: chunked\r\n\r\n",
                            "bad transfer-encoding");
        expect_http_refused("POST / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 5\r\n"
                            "Content-Length: 5\r\n\r\n",
                            "bad content-length");
        expect_http_refused("POST / HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: +5\r\n\r\n",
                            "bad content-length");
        expect_http_refused("POST / HTTP/1.1\r\nHost: allowed.test\r\n"
                            "Transfer-Encoding: gzip, chunked\r\n\r\n",
                            "bad transfer-encoding");
        expect_http_refused("GET / HTTP/1.1\r\nHost: allowed.test\r\nX: a\x01z\r\n\r\n",
                            "malformed header");
}

Test(name_check_http, hosts_that_are_not_names_are_refused)
{
        expect_http_refused("GET / HTTP/1.1\r\n\r\n", "no host");
        expect_http_refused("GET / HTTP/1.0\r\n\r\n", "no host");
        expect_http_refused("GET / HTTP/1.1\r\nHost: 198.18.0.10\r\n\r\n", "ip-literal host");
        expect_http_refused("GET / HTTP/1.1\r\nHost: [2001:db8::1]:80\r\n\r\n", "ip-literal host");
        expect_http_refused("GET / HTTP/1.1\r\nHost: allowed.test.\r\n\r\n", "malformed host");
        expect_http_refused("GET / HTTP/1.1\r\nHost: allowed.test:x\r\n\r\n", "malformed host");
        expect_http_refused("GET / HTTP/1.1\r\nHost: user@allowed.test\r\n\r\n", "malformed host");
        expect_http_refused("GET http://a@allowed.test/ HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
                            "malformed request");
}

Test(name_check_http, tunnels_and_other_protocols_are_refused)
{
        expect_http_refused("CONNECT other.test:443 HTTP/1.1\r\nHost: other.test\r\n\r\n",
                            "connect");
        expect_http_refused("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", "not http/1");
        expect_http_refused("GET / HTTP/2\r\nHost: allowed.test\r\n\r\n", "not http/1");
        expect_http_refused("GET /\r\n", "malformed request"); /* HTTP/0.9 */
        /* Garbage fails at once, before any line ends. */
        expect_http_refused("\x16\x03\x01", "malformed request");
        expect_http_refused("\r\nGET / HTTP/1.1\r\n", "malformed request");
}

Test(name_check_http, a_head_past_the_bound_is_refused)
{
        size_t n = NAME_CHECK_HEAD_MAX + 16;
        char *s = malloc(n + 1);
        memcpy(s, "GET / HTTP/1.1\r\nX: ", 19);
        memset(s + 19, 'a', n - 19);
        s[n] = 0;
        expect_http_refused(s, "request head too large");
        free(s);
}

Test(name_check_http, the_host_of_each_request_on_a_kept_alive_connection)
{
        const char *stream = "GET / HTTP/1.1\r\nHost: Allowed.test:80\r\n\r\n"
                             "POST /x HTTP/1.1\r\nHost: allowed.test\r\nContent-Length: 4\r\n\r\n"
                             "GET "
                             "GET / HTTP/1.1\r\nHost: other.test\r\n\r\n";
        struct name_http h = {0};
        struct name_found f;
        size_t used, off = 0, len = strlen(stream);
        cr_assert_eq(name_check_http(&h, (const uint8_t *) stream, len, &used, &f), NAME_FOUND);
        cr_expect_str_eq(f.name, "allowed.test");
        off += used;
        cr_assert_eq(name_check_http(&h, (const uint8_t *) stream + off, len - off, &used, &f),
                     NAME_FOUND);
        cr_expect_str_eq(f.name, "allowed.test");
        off += used;
        /* The body, which looks like a request line, is a body. */
        cr_assert_eq(name_check_http(&h, (const uint8_t *) stream + off, len - off, &used, &f),
                     NAME_MORE);
        cr_expect_eq(used, 4);
        off += used;
        cr_assert_eq(name_check_http(&h, (const uint8_t *) stream + off, len - off, &used, &f),
                     NAME_FOUND);
        cr_expect_str_eq(f.name, "other.test");
}

Test(name_check_http, chunked_bodies_are_followed_and_bad_chunks_refused)
{
        const char *stream =
                "POST / HTTP/1.1\r\nHost: allowed.test\r\nTransfer-Encoding: chunked\r\n"
                "\r\n"
                "5;x=y\r\nGET /\r\n0\r\nTrailer: t\r\n\r\n"
                "GET / HTTP/1.1\r\nHost: other.test\r\n\r\n";
        struct name_http h = {0};
        struct name_found f;
        size_t used, off = 0, len = strlen(stream);
        int r;
        int found = 0;
        while (off < len && (r = name_check_http(&h, (const uint8_t *) stream + off, len - off,
                                                 &used, &f)) != NAME_REFUSED) {
                if (r == NAME_FOUND && ++found == 2)
                        break;
                cr_assert_gt(used, 0, "stuck at %zu", off);
                off += used;
        }
        cr_assert_eq(found, 2);
        cr_expect_str_eq(f.name, "other.test");

        const char *const bad[] = {"zz\r\n", "5\nabcde\r\n", "12345678901234567\r\n", "5 \r\n"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct name_http c = {.state = HTTP_CHUNK_SIZE};
                cr_expect_eq(http(&c, bad[i], &used, &f), NAME_REFUSED, "%s", bad[i]);
        }
        struct name_http c = {.state = HTTP_CHUNK_END};
        cr_expect_eq(http(&c, "xx", &used, &f), NAME_REFUSED);
        c = (struct name_http){.state = HTTP_TRAILERS};
        cr_expect_eq(http(&c, "Host: other.test\r\n", &used, &f), NAME_REFUSED);
}

Test(name_check_http, an_unfinished_head_is_more_not_a_guess)
{
        struct name_http h = {0};
        struct name_found f;
        size_t used = 99;
        cr_expect_eq(http(&h, "GET / HTTP/1.1\r\nHost: allowed.te", &used, &f), NAME_MORE);
        cr_expect_eq(used, 0);
        cr_expect_eq(http(&h, "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r", &used, &f), NAME_MORE);
        cr_expect_eq(http(&h, "GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n", &used, &f),
                     NAME_FOUND);
        cr_expect_str_eq(f.name, "allowed.test");
        cr_expect_eq(used, 38);
}

Test(name_check, hostnames)
{
        cr_expect_null(name_check_hostname("allowed.test"));
        cr_expect_null(name_check_hostname("a-b_c.example"));
        cr_expect_null(name_check_hostname("localhost"));
        cr_expect_str_eq(name_check_hostname("10.0.0.1"), "ip-literal");
        cr_expect_str_eq(name_check_hostname("a.123"), "ip-literal");
        cr_expect_str_eq(name_check_hostname("a.b."), "malformed");
        char long_label[70];
        memset(long_label, 'a', 64);
        long_label[64] = 0;
        cr_expect_str_eq(name_check_hostname(long_label), "malformed");
}
