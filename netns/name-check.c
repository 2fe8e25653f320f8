/* SPDX-License-Identifier: MIT */
/*
 * The SNI of a TLS ClientHello and the Host of HTTP/1.x requests, read from
 * hostile bytes (netns/name-check.h). Nothing here allocates but the one
 * copy of a ClientHello spread over several records; nothing makes a
 * syscall.
 */
#include "netns/name-check.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#define TLS_RECORD_HANDSHAKE 0x16
#define TLS_RECORD_MAX       16384
#define TLS_CLIENT_HELLO     1
#define TLS_EXT_SNI          0
#define TLS_EXT_ECH          0xfe0d
#define TLS_EXT_ESNI         0xffce /* the ECH drafts' predecessor */
#define TLS_SNI_HOST_NAME    0

static int refuse(struct name_found *out, const char *reason)
{
        out->reason = reason;
        return NAME_REFUSED;
}

const char *name_check_hostname(const char *s)
{
        size_t n = strlen(s), label = 0;
        if (n == 0 || n > 253 || s[0] == '.' || s[n - 1] == '.')
                return "malformed";
        bool digits_only = true; /* of the last label */
        for (size_t i = 0; i < n; i++) {
                char c = s[i];
                if (c == '.') {
                        if (label == 0)
                                return "malformed";
                        label = 0;
                        digits_only = true;
                        continue;
                }
                if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_'))
                        return "malformed";
                if (++label > 63)
                        return "malformed";
                digits_only &= c >= '0' && c <= '9';
        }
        /* 10.1, 0x7f.1, 3232235521: inet_aton reads them all as addresses,
         * and so would a server or a library behind it. No top-level
         * domain is all digits either. */
        struct in_addr a;
        if (digits_only || inet_aton(s, &a))
                return "ip-literal";
        return NULL;
}

/* Copies a name of len bytes (not NUL-terminated), lowercased, and checks
 * it; the reason it is refused, or NULL. */
static const char *take_name(struct name_found *out, const uint8_t *s, size_t len)
{
        if (len == 0 || len >= sizeof(out->name))
                return "malformed";
        for (size_t i = 0; i < len; i++) {
                if (s[i] == 0)
                        return "malformed";
                out->name[i] = (char) tolower(s[i]);
        }
        out->name[len] = 0;
        return name_check_hostname(out->name);
}

/* ---- TLS ---- */

static uint16_t be16(const uint8_t *p)
{
        return (uint16_t) (p[0] << 8 | p[1]);
}

/* A cursor over a ClientHello's body. */
struct cur {
        const uint8_t *p;
        size_t left;
};

static bool take(struct cur *c, size_t n, const uint8_t **at)
{
        if (c->left < n)
                return false;
        *at = c->p;
        c->p += n;
        c->left -= n;
        return true;
}

/* A vector with a 1- or 2-byte length in front, as a cursor of its own. */
static bool take_vec(struct cur *c, size_t len_bytes, struct cur *v)
{
        const uint8_t *l;
        if (!take(c, len_bytes, &l))
                return false;
        size_t n = len_bytes == 1 ? l[0] : be16(l);
        const uint8_t *at;
        if (!take(c, n, &at))
                return false;
        *v = (struct cur){at, n};
        return true;
}

/* server_name: exactly one host_name entry. */
static int parse_sni(struct cur ext, struct name_found *out)
{
        struct cur list, name;
        const uint8_t *type;
        if (!take_vec(&ext, 2, &list) || ext.left != 0 || !take(&list, 1, &type) ||
            !take_vec(&list, 2, &name) || list.left != 0)
                return refuse(out, "malformed sni");
        if (type[0] != TLS_SNI_HOST_NAME)
                return refuse(out, "malformed sni");
        const char *why = take_name(out, name.p, name.left);
        if (why)
                return refuse(out,
                              strcmp(why, "ip-literal") == 0 ? "ip-literal sni" : "malformed sni");
        return NAME_FOUND;
}

static int parse_client_hello(const uint8_t *body, size_t len, struct name_found *out)
{
        struct cur c = {body, len}, v;
        const uint8_t *at;
        if (!take(&c, 2, &at) || at[0] != 3)
                return refuse(out, "malformed hello");
        if (!take(&c, 32, &at) || !take_vec(&c, 1, &v) || v.left > 32)
                return refuse(out, "malformed hello");
        if (!take_vec(&c, 2, &v) || v.left < 2 || v.left % 2)
                return refuse(out, "malformed hello");
        if (!take_vec(&c, 1, &v) || v.left < 1)
                return refuse(out, "malformed hello");
        if (c.left == 0)
                return refuse(out, "no sni");
        struct cur exts;
        if (!take_vec(&c, 2, &exts) || c.left != 0)
                return refuse(out, "malformed hello");
        /* Every type at most once (RFC 8446 4.2): two server_names would
         * be read one way here and maybe the other way there. */
        uint8_t seen[65536 / 8] = {0};
        bool sni = false;
        while (exts.left) {
                const uint8_t *type;
                struct cur ext;
                if (!take(&exts, 2, &type) || !take_vec(&exts, 2, &ext))
                        return refuse(out, "malformed hello");
                uint16_t t = be16(type);
                if (seen[t / 8] & (1u << (t % 8)))
                        return refuse(out, "duplicate extension");
                seen[t / 8] |= (uint8_t) (1u << (t % 8));
                if (t == TLS_EXT_SNI) {
                        int r = parse_sni(ext, out);
                        if (r < 0)
                                return r;
                        sni = true;
                } else if (t == TLS_EXT_ECH) {
                        out->ech = true;
                } else if (t == TLS_EXT_ESNI) {
                        return refuse(out, "esni");
                }
        }
        return sni ? NAME_FOUND : refuse(out, "no sni");
}

int name_check_tls(struct name_tls *t, const uint8_t *buf, size_t len, struct name_found *out)
{
        memset(out, 0, sizeof(*out));
        /* SSLv2 (a high bit first), plain text, anything but a handshake:
         * at once, not after the deadline. */
        if (len >= 1 && buf[0] != TLS_RECORD_HANDSHAKE)
                return refuse(out, "not tls");
        while (t->hs_need == 0 || t->hs_have < t->hs_need) {
                if (len - t->off < 5)
                        break;
                const uint8_t *h = buf + t->off;
                if (h[0] != TLS_RECORD_HANDSHAKE)
                        return refuse(out, "not tls");
                if (h[1] != 3 || h[2] > 4)
                        return refuse(out, "not tls");
                size_t rlen = be16(h + 3);
                if (rlen == 0 || rlen > TLS_RECORD_MAX)
                        return refuse(out, "malformed record");
                if (len - t->off - 5 < rlen)
                        break;
                for (size_t i = 0; t->hs_have + i < 4 && i < rlen; i++)
                        t->hs_head[t->hs_have + i] = h[5 + i];
                t->hs_have += rlen;
                t->off += 5 + rlen;
                if (t->hs_need == 0 && t->hs_have >= 4) {
                        if (t->hs_head[0] != TLS_CLIENT_HELLO)
                                return refuse(out, "not a client hello");
                        size_t n = (size_t) t->hs_head[1] << 16 | (size_t) t->hs_head[2] << 8 |
                                   t->hs_head[3];
                        if (n + 4 > NAME_CHECK_HELLO_MAX)
                                return refuse(out, "hello too large");
                        t->hs_need = n + 4;
                }
        }
        if (t->hs_need == 0 || t->hs_have < t->hs_need) {
                if (len >= NAME_CHECK_TLS_RAW)
                        return refuse(out, "hello too large");
                return NAME_MORE;
        }
        /* Another handshake message after the hello, in its last record:
         * no client sends one before the server answers. */
        if (t->hs_have != t->hs_need)
                return refuse(out, "malformed record");
        uint8_t *hello = malloc(t->hs_need);
        if (!hello)
                return refuse(out, "out of memory");
        size_t got = 0;
        for (size_t off = 0; off < t->off;) {
                size_t rlen = be16(buf + off + 3);
                memcpy(hello + got, buf + off + 5, rlen);
                got += rlen;
                off += 5 + rlen;
        }
        int r = parse_client_hello(hello + 4, t->hs_need - 4, out);
        free(hello);
        return r;
}

/* ---- HTTP ---- */

static bool is_tchar(uint8_t c)
{
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* The end of the line that starts at buf (the offset past its CRLF), 0 if
 * it has not arrived, -1 for a bare LF, a NUL or a CR alone, -2 for no
 * CRLF within max bytes. */
static long line_end(const uint8_t *buf, size_t len, size_t max)
{
        for (size_t i = 0; i < len && i < max; i++) {
                if (buf[i] == '\n' || buf[i] == 0)
                        return -1;
                if (buf[i] == '\r') {
                        if (i + 1 == len)
                                return 0;
                        return buf[i + 1] == '\n' ? (long) (i + 2) : -1;
                }
        }
        return len >= max ? -2 : 0;
}

static bool ieq(const uint8_t *s, size_t n, const char *word)
{
        return strlen(word) == n && strncasecmp((const char *) s, word, n) == 0;
}

/* host[:port] of a Host header or an absolute URI's authority. */
static const char *take_authority(struct name_found *out, const uint8_t *s, size_t n)
{
        if (n && s[0] == '[')
                return "ip-literal";
        size_t host = n;
        for (size_t i = 0; i < n; i++)
                if (s[i] == ':') {
                        host = i;
                        break;
                }
        if (host < n) {
                size_t digits = n - host - 1;
                if (digits == 0 || digits > 5)
                        return "malformed";
                for (size_t i = host + 1; i < n; i++)
                        if (s[i] < '0' || s[i] > '9')
                                return "malformed";
        }
        return take_name(out, s, host);
}

struct head {
        bool http10, host, length, chunked;
        uint64_t content_length;
        char target_host[254]; /* an absolute-form target's host, or "" */
};

static int parse_request_line(const uint8_t *s, size_t n, struct head *h, struct name_found *out)
{
        size_t i = 0;
        while (i < n && is_tchar(s[i]))
                i++;
        if (i == 0 || i == n || s[i] != ' ')
                return refuse(out, "malformed request");
        if (ieq(s, i, "CONNECT"))
                return refuse(out, "connect");
        if (ieq(s, i, "PRI"))
                return refuse(out, "not http/1");
        size_t t0 = ++i;
        while (i < n && s[i] > 0x20 && s[i] < 0x7f)
                i++;
        if (i == t0 || i == n || s[i] != ' ')
                return refuse(out, "malformed request");
        const uint8_t *target = s + t0;
        size_t tlen = i - t0;
        const uint8_t *v = s + i + 1;
        size_t vlen = n - i - 1;
        if (vlen != 8 || memcmp(v, "HTTP/1.", 7) != 0 || (v[7] != '0' && v[7] != '1'))
                return refuse(out, "not http/1");
        h->http10 = v[7] == '0';
        if (target[0] == '/' || (tlen == 1 && target[0] == '*'))
                return NAME_MORE;
        /* absolute-form: its host is the request's (RFC 9112 3.2.2), so it
         * must be the Host header's too. */
        size_t skip = tlen > 7 && strncasecmp((const char *) target, "http://", 7) == 0    ? 7
                      : tlen > 8 && strncasecmp((const char *) target, "https://", 8) == 0 ? 8
                                                                                           : 0;
        if (!skip)
                return refuse(out, "malformed request");
        size_t a = skip;
        while (a < tlen && target[a] != '/' && target[a] != '?' && target[a] != '#')
                a++;
        struct name_found f = {0};
        for (size_t k = skip; k < a; k++)
                if (target[k] == '@')
                        return refuse(out, "malformed request");
        const char *why = take_authority(&f, target + skip, a - skip);
        if (why)
                return refuse(out, strcmp(why, "ip-literal") == 0 ? "ip-literal host"
                                                                  : "malformed host");
        memcpy(h->target_host, f.name, sizeof(h->target_host));
        return NAME_MORE;
}

static int parse_header(const uint8_t *s, size_t n, struct head *h, struct name_found *out)
{
        size_t i = 0;
        /* obs-fold, or whitespace before the colon: read two ways. */
        while (i < n && is_tchar(s[i]))
                i++;
        if (i == 0 || i == n || s[i] != ':')
                return refuse(out, "malformed header");
        const uint8_t *name = s;
        size_t name_len = i++;
        while (i < n && (s[i] == ' ' || s[i] == '\t'))
                i++;
        size_t end = n;
        while (end > i && (s[end - 1] == ' ' || s[end - 1] == '\t'))
                end--;
        for (size_t k = i; k < end; k++)
                if ((s[k] < 0x20 && s[k] != '\t') || s[k] == 0x7f)
                        return refuse(out, "malformed header");
        const uint8_t *val = s + i;
        size_t vlen = end - i;
        if (ieq(name, name_len, "host")) {
                if (h->host)
                        return refuse(out, "two hosts");
                h->host = true;
                const char *why = take_authority(out, val, vlen);
                if (why)
                        return refuse(out, strcmp(why, "ip-literal") == 0 ? "ip-literal host"
                                                                          : "malformed host");
        } else if (ieq(name, name_len, "content-length")) {
                if (h->length || vlen == 0 || vlen > 15)
                        return refuse(out, "bad content-length");
                h->length = true;
                for (size_t k = 0; k < vlen; k++) {
                        if (val[k] < '0' || val[k] > '9')
                                return refuse(out, "bad content-length");
                        h->content_length = h->content_length * 10 + (uint64_t) (val[k] - '0');
                }
        } else if (ieq(name, name_len, "transfer-encoding")) {
                if (h->chunked || !ieq(val, vlen, "chunked"))
                        return refuse(out, "bad transfer-encoding");
                h->chunked = true;
        }
        return NAME_MORE;
}

static int parse_head(struct name_http *st, const uint8_t *buf, size_t len, size_t *used,
                      struct name_found *out)
{
        struct head h = {0};
        size_t off = 0;
        bool first = true;
        for (;;) {
                long e = line_end(buf + off, len - off, NAME_CHECK_HEAD_MAX - off);
                if (e < 0)
                        return refuse(out,
                                      e == -2 ? "request head too large" : "malformed request");
                if (e == 0) {
                        /* Nothing yet to say, but what is there may already be wrong:
                         * a line that cannot start a request fails now. */
                        if (first && len - off > 0 && !is_tchar(buf[off]))
                                return refuse(out, "malformed request");
                        return NAME_MORE;
                }
                size_t n = (size_t) e - 2;
                if (n == 0)
                        break;
                int r = first ? parse_request_line(buf + off, n, &h, out)
                              : parse_header(buf + off, n, &h, out);
                if (r < 0)
                        return r;
                first = false;
                off += (size_t) e;
        }
        if (first)
                return refuse(out, "malformed request"); /* an empty line first */
        off += 2;
        if (!h.host)
                return refuse(out, "no host");
        if (h.target_host[0] && strcmp(h.target_host, out->name) != 0)
                return refuse(out, "two hosts");
        if (h.chunked && (h.length || h.http10))
                return refuse(out, "bad transfer-encoding");
        st->state = h.chunked ? HTTP_CHUNK_SIZE : h.content_length ? HTTP_BODY : HTTP_HEAD;
        st->left = h.content_length;
        st->trailers = 0;
        *used = off;
        return NAME_FOUND;
}

static int hexval(uint8_t c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        c = (uint8_t) tolower(c);
        return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* chunk-size [; extensions] CRLF */
static int parse_chunk_size(struct name_http *st, const uint8_t *buf, size_t len, size_t *used,
                            struct name_found *out)
{
        long e = line_end(buf, len, NAME_CHECK_LINE_MAX);
        if (e < 0)
                return refuse(out, "bad chunk");
        if (e == 0)
                return NAME_MORE;
        size_t n = (size_t) e - 2, i = 0;
        uint64_t size = 0;
        for (; i < n && hexval(buf[i]) >= 0; i++) {
                if (i >= 15)
                        return refuse(out, "bad chunk");
                size = size << 4 | (uint64_t) hexval(buf[i]);
        }
        if (i == 0 || (i < n && buf[i] != ';'))
                return refuse(out, "bad chunk");
        for (; i < n; i++)
                if (buf[i] < 0x20 || buf[i] == 0x7f)
                        return refuse(out, "bad chunk");
        *used = (size_t) e;
        st->left = size;
        st->state = size ? HTTP_CHUNK_DATA : HTTP_TRAILERS;
        return NAME_MORE;
}

int name_check_http(struct name_http *st, const uint8_t *buf, size_t len, size_t *used,
                    struct name_found *out)
{
        memset(out, 0, sizeof(*out));
        *used = 0;
        switch (st->state) {
        case HTTP_HEAD:
                return parse_head(st, buf, len, used, out);
        case HTTP_BODY:
        case HTTP_CHUNK_DATA:
                *used = len < st->left ? len : (size_t) st->left;
                st->left -= *used;
                if (st->left == 0)
                        st->state = st->state == HTTP_BODY ? HTTP_HEAD : HTTP_CHUNK_END;
                return NAME_MORE;
        case HTTP_CHUNK_SIZE:
                return parse_chunk_size(st, buf, len, used, out);
        case HTTP_CHUNK_END:
                if (len < 2)
                        return len == 1 && buf[0] != '\r' ? refuse(out, "bad chunk") : NAME_MORE;
                if (buf[0] != '\r' || buf[1] != '\n')
                        return refuse(out, "bad chunk");
                *used = 2;
                st->state = HTTP_CHUNK_SIZE;
                return NAME_MORE;
        case HTTP_TRAILERS: {
                long e = line_end(buf, len, NAME_CHECK_LINE_MAX);
                if (e < 0 || st->trailers + (size_t) e > NAME_CHECK_HEAD_MAX)
                        return refuse(out, "bad trailer");
                if (e == 0)
                        return NAME_MORE;
                if (e == 2) {
                        st->state = HTTP_HEAD;
                } else {
                        struct head h = {0};
                        struct name_found f;
                        if (parse_header(buf, (size_t) e - 2, &h, &f) < 0 || h.host || h.length ||
                            h.chunked)
                                return refuse(out, "bad trailer");
                }
                st->trailers += (size_t) e;
                *used = (size_t) e;
                return NAME_MORE;
        }
        }
        return refuse(out, "malformed request");
}
