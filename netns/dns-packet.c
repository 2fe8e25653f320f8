/* SPDX-License-Identifier: MIT */
/* DNS messages, parsed and built in pure code (netns/dns-packet.h). */
#include "netns/dns-packet.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

#define FLAG_QR 0x8000
#define FLAG_TC 0x0200
#define FLAG_RD 0x0100
#define FLAG_RA 0x0080

/* At most this many compression pointers in one name: a loop or a chain
 * built to burn time ends here. */
#define MAX_POINTERS 16

static uint16_t get16(const uint8_t *p)
{
        return (uint16_t) (p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
        return (uint32_t) p[0] << 24 | (uint32_t) p[1] << 16 | (uint32_t) p[2] << 8 | p[3];
}

static void put16(uint8_t *p, uint16_t v)
{
        p[0] = (uint8_t) (v >> 8);
        p[1] = (uint8_t) v;
}

static void put32(uint8_t *p, uint32_t v)
{
        put16(p, (uint16_t) (v >> 16));
        put16(p + 2, (uint16_t) v);
}

/* Reads the name at *off into out (lowercase, dotted, no trailing dot) and
 * moves *off past it in the message (not past where pointers lead). */
static int read_name(const uint8_t *msg, size_t len, size_t *off, char out[DNS_NAME_MAX])
{
        size_t pos = *off, end = 0, n = 0;
        unsigned pointers = 0;
        bool jumped = false;
        for (;;) {
                if (pos >= len)
                        return -EBADMSG;
                uint8_t l = msg[pos];
                if ((l & 0xc0) == 0xc0) {
                        if (pos + 1 >= len || ++pointers > MAX_POINTERS)
                                return -EBADMSG;
                        size_t target = (size_t) (l & 0x3f) << 8 | msg[pos + 1];
                        /* Only backwards: no forward references, no loops. */
                        if (target >= pos)
                                return -EBADMSG;
                        if (!jumped)
                                end = pos + 2;
                        jumped = true;
                        pos = target;
                        continue;
                }
                if (l & 0xc0)
                        return -EBADMSG; /* the 0x40/0x80 label types are obsolete */
                pos++;
                if (l == 0)
                        break;
                if (pos + l > len || n + l + (n ? 1 : 0) >= DNS_NAME_MAX)
                        return -EBADMSG;
                if (n)
                        out[n++] = '.';
                for (size_t i = 0; i < l; i++) {
                        char c = (char) msg[pos + i];
                        /* Dots and NULs inside a label would let a name pass
                         * for another one in a text comparison. */
                        if (c == '.' || c == '\0')
                                return -EBADMSG;
                        out[n++] = (c >= 'A' && c <= 'Z') ? (char) (c - 'A' + 'a') : c;
                }
                pos += l;
        }
        out[n] = '\0';
        *off = jumped ? end : pos;
        return 0;
}

/* Writes name in wire form (no compression); returns its length or -1. */
static int write_name(const char *name, uint8_t *buf, size_t cap)
{
        size_t n = 0;
        const char *p = name;
        while (*p) {
                size_t l = strcspn(p, ".");
                if (l == 0 || l > 63 || n + 1 + l + 1 > cap)
                        return -1;
                buf[n++] = (uint8_t) l;
                memcpy(buf + n, p, l);
                n += l;
                p += l;
                if (*p == '.')
                        p++;
        }
        if (n + 1 > cap)
                return -1;
        buf[n++] = 0;
        return (int) n;
}

int dns_parse_query(const uint8_t *msg, size_t len, struct dns_query *q)
{
        if (len < DNS_HEADER_SIZE)
                return -EBADMSG;
        uint16_t flags = get16(msg + 2);
        memset(q, 0, sizeof(*q));
        q->id = get16(msg);
        q->rd = flags & FLAG_RD;
        if (flags & FLAG_QR)
                return -EPROTO;
        if (((flags >> 11) & 0xf) != 0)
                return -ENOTSUP;
        /* One question, no answers; the additional section may hold an
         * EDNS OPT record (dig, Go, systemd-resolved send one). */
        if (get16(msg + 4) != 1 || get16(msg + 6) != 0)
                return -EPROTO;
        size_t off = DNS_HEADER_SIZE;
        int r = read_name(msg, len, &off, q->name);
        if (r < 0)
                return r;
        if (off + 4 > len)
                return -EBADMSG;
        q->qtype = get16(msg + off);
        q->qclass = get16(msg + off + 2);
        q->question_end = off + 4;
        /* The additional section (an EDNS OPT) is not needed: the proxy
         * makes its own query and answers within 512 bytes or over TCP. */
        return 0;
}

int dns_build_query(uint16_t id, const char *name, uint16_t qtype, uint8_t *buf, size_t cap)
{
        if (cap < DNS_HEADER_SIZE)
                return -ENOSPC;
        memset(buf, 0, DNS_HEADER_SIZE);
        put16(buf, id);
        put16(buf + 2, FLAG_RD);
        put16(buf + 4, 1);
        put16(buf + 10, 1); /* the OPT record */
        int n = write_name(name, buf + DNS_HEADER_SIZE, cap - DNS_HEADER_SIZE);
        if (n < 0)
                return strlen(name) > DNS_NAME_MAX - 1 ? -EINVAL : -ENOSPC;
        size_t off = DNS_HEADER_SIZE + (size_t) n;
        if (off + 4 + 11 > cap)
                return -ENOSPC;
        put16(buf + off, qtype);
        put16(buf + off + 2, DNS_CLASS_IN);
        off += 4;
        /* OPT: root name, type, UDP payload size, ext-rcode/version/flags, rdlen 0 */
        buf[off] = 0;
        put16(buf + off + 1, DNS_TYPE_OPT);
        put16(buf + off + 3, DNS_UDP_MAX);
        put32(buf + off + 5, 0);
        put16(buf + off + 9, 0);
        return (int) (off + 11);
}

struct rr {
        char owner[DNS_NAME_MAX];
        uint16_t type, class_;
        uint32_t ttl;
        size_t rdata, rdlen;
};

static int read_rr(const uint8_t *msg, size_t len, size_t *off, struct rr *rr)
{
        int r = read_name(msg, len, off, rr->owner);
        if (r < 0)
                return r;
        if (*off + 10 > len)
                return -EBADMSG;
        rr->type = get16(msg + *off);
        rr->class_ = get16(msg + *off + 2);
        rr->ttl = get32(msg + *off + 4);
        rr->rdlen = get16(msg + *off + 8);
        rr->rdata = *off + 10;
        if (rr->rdata + rr->rdlen > len)
                return -EBADMSG;
        *off = rr->rdata + rr->rdlen;
        return 0;
}

int dns_parse_answer(const uint8_t *msg, size_t len, const char *name, uint16_t qtype,
                     struct dns_answer *a)
{
        memset(a, 0, sizeof(*a));
        if (len < DNS_HEADER_SIZE)
                return -EBADMSG;
        uint16_t flags = get16(msg + 2);
        if (!(flags & FLAG_QR))
                return -EBADMSG;
        a->id = get16(msg);
        a->rcode = flags & 0xf;
        a->truncated = flags & FLAG_TC;
        if (get16(msg + 4) != 1)
                return -EBADMSG;
        size_t off = DNS_HEADER_SIZE;
        char qname[DNS_NAME_MAX];
        if (read_name(msg, len, &off, qname) < 0 || off + 4 > len)
                return -EBADMSG;
        if (strcmp(qname, name) != 0 || get16(msg + off) != qtype)
                return -EBADMSG;
        off += 4;
        if (a->truncated)
                return 0;

        /* Collect the records first: a CNAME may come after what it points at. */
        enum { MAX_RRS = 64 };
        struct rr rrs[MAX_RRS];
        size_t n_rrs = 0, ancount = get16(msg + 6);
        for (size_t i = 0; i < ancount; i++) {
                struct rr rr;
                if (read_rr(msg, len, &off, &rr) < 0)
                        return -EBADMSG;
                if (rr.class_ == DNS_CLASS_IN && n_rrs < MAX_RRS &&
                    (rr.type == DNS_TYPE_CNAME || rr.type == qtype))
                        rrs[n_rrs++] = rr;
        }

        const char *current = name;
        uint32_t ttl = UINT32_MAX;
        for (bool hopped = true; hopped;) {
                hopped = false;
                for (size_t i = 0; i < n_rrs; i++) {
                        if (rrs[i].type != DNS_TYPE_CNAME || strcmp(rrs[i].owner, current) != 0)
                                continue;
                        if (a->n_cnames == DNS_MAX_CNAMES)
                                return -EBADMSG;
                        size_t roff = rrs[i].rdata;
                        char *target = a->cnames[a->n_cnames];
                        if (read_name(msg, rrs[i].rdata + rrs[i].rdlen, &roff, target) < 0)
                                return -EBADMSG;
                        /* A chain that comes back to a name it passed is a loop. */
                        if (strcmp(target, name) == 0)
                                return -EBADMSG;
                        for (size_t j = 0; j < a->n_cnames; j++)
                                if (strcmp(a->cnames[j], target) == 0)
                                        return -EBADMSG;
                        a->n_cnames++;
                        ttl = rrs[i].ttl < ttl ? rrs[i].ttl : ttl;
                        current = target;
                        hopped = true;
                        break;
                }
        }
        size_t want = qtype == DNS_TYPE_A ? 4 : qtype == DNS_TYPE_AAAA ? 16 : 0;
        for (size_t i = 0; i < n_rrs && want; i++) {
                if (rrs[i].type != qtype || strcmp(rrs[i].owner, current) != 0)
                        continue;
                if (rrs[i].rdlen != want)
                        return -EBADMSG;
                if (a->n_addrs == DNS_MAX_ADDRS)
                        break;
                struct dns_addr *d = &a->addrs[a->n_addrs++];
                d->family = want == 4 ? AF_INET : AF_INET6;
                memcpy(d->addr, msg + rrs[i].rdata, want);
                ttl = rrs[i].ttl < ttl ? rrs[i].ttl : ttl;
        }
        a->ttl = ttl == UINT32_MAX ? 0 : ttl;
        return 0;
}

int dns_build_reply(const struct dns_query *q, uint8_t rcode, const struct dns_addr *addrs,
                    size_t n_addrs, uint32_t ttl, uint8_t *buf, size_t cap)
{
        if (cap < DNS_HEADER_SIZE)
                return -ENOSPC;
        memset(buf, 0, DNS_HEADER_SIZE);
        put16(buf, q->id);
        put16(buf + 2, (uint16_t) (FLAG_QR | (q->rd ? FLAG_RD : 0) | FLAG_RA | (rcode & 0xf)));
        put16(buf + 4, 1);
        int n = write_name(q->name, buf + DNS_HEADER_SIZE, cap - DNS_HEADER_SIZE);
        if (n < 0)
                return -ENOSPC;
        size_t off = DNS_HEADER_SIZE + (size_t) n;
        if (off + 4 > cap)
                return -ENOSPC;
        put16(buf + off, q->qtype);
        put16(buf + off + 2, q->qclass);
        off += 4;
        size_t count = 0;
        for (size_t i = 0; i < n_addrs && rcode == DNS_RCODE_NOERROR; i++) {
                size_t alen = addrs[i].family == AF_INET ? 4 : 16;
                uint16_t type = alen == 4 ? DNS_TYPE_A : DNS_TYPE_AAAA;
                if (type != q->qtype)
                        continue;
                if (off + 12 + alen > cap)
                        break; /* what fits; 512 bytes hold 29 A records */
                put16(buf + off, 0xc000 | DNS_HEADER_SIZE); /* the question's name */
                put16(buf + off + 2, type);
                put16(buf + off + 4, DNS_CLASS_IN);
                put32(buf + off + 6, ttl);
                put16(buf + off + 10, (uint16_t) alen);
                memcpy(buf + off + 12, addrs[i].addr, alen);
                off += 12 + alen;
                count++;
        }
        put16(buf + 6, (uint16_t) count);
        return (int) off;
}

bool dns_name_matches(const char *name, const char *pattern)
{
        if (strncmp(pattern, "*.", 2) != 0)
                return strcmp(name, pattern) == 0;
        const char *base = pattern + 2;
        size_t nl = strlen(name), bl = strlen(base);
        /* strictly below: "x." + base, never base itself, and the label
         * boundary must be a dot ("evilexample.com" is not below). */
        return nl > bl + 1 && name[nl - bl - 1] == '.' && strcmp(name + nl - bl, base) == 0;
}
