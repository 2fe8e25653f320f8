/* SPDX-License-Identifier: MIT */
/*
 * Reading the kernel's audit records (policy/audit.h). A record is
 * "audit(SECONDS.MS:SERIAL): key=value key=value ...". Values the kernel
 * takes from userspace (paths, names, comm) are printed either quoted,
 * when they hold nothing but printable characters other than space and
 * '"', or as upper-case hex: so a quoted value never contains a space or a
 * quote, and splitting on spaces cannot be steered by a file's name.
 */
#include "policy/audit.h"

#include <errno.h>
#include <linux/audit.h>
#include <linux/netlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "common/cleanup.h"

/* The kernel's largest record (MAX_AUDIT_MESSAGE_LENGTH) with its header. */
#define AUDIT_DATAGRAM_MAX 9216
/* Room for a burst of a few thousand records while the supervisor is busy. */
#define AUDIT_RCVBUF (4 << 20)

int audit_query(struct audit_state *st, psrun_error *err)
{
        _cleanup_close_ int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_AUDIT);
        if (fd < 0)
                return psrun_error_errno(err, errno, "audit: socket");
        struct timeval tv = {.tv_sec = 2};
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        struct nlmsghdr req = {
                .nlmsg_len = NLMSG_LENGTH(0),
                .nlmsg_type = AUDIT_GET,
                .nlmsg_flags = NLM_F_REQUEST,
                .nlmsg_seq = 1,
        };
        struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
        if (sendto(fd, &req, req.nlmsg_len, 0, (struct sockaddr *) &kernel, sizeof(kernel)) < 0)
                return psrun_error_errno(err, errno, "audit: query the kernel's audit state");
        for (;;) {
                union {
                        struct nlmsghdr h;
                        char buf[1024];
                } u;
                ssize_t n = recv(fd, u.buf, sizeof(u.buf), 0);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return psrun_error_errno(err, errno,
                                                 "audit: read the kernel's audit state");
                int left = (int) n;
                for (struct nlmsghdr *h = &u.h; NLMSG_OK(h, left); h = NLMSG_NEXT(h, left)) {
                        if (h->nlmsg_type == NLMSG_ERROR) {
                                const struct nlmsgerr *e = NLMSG_DATA(h);
                                if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(*e)) && e->error)
                                        return psrun_error_errno(
                                                err, -e->error,
                                                "audit: query the kernel's audit state");
                                continue;
                        }
                        if (h->nlmsg_type != AUDIT_GET ||
                            h->nlmsg_len < NLMSG_LENGTH(offsetof(struct audit_status, lost)))
                                continue;
                        const struct audit_status *s = NLMSG_DATA(h);
                        st->enabled = s->enabled != 0;
                        st->failure = s->failure;
                        return 0;
                }
        }
}

int audit_reader_open(int *ret, psrun_error *err)
{
        _cleanup_close_ int fd =
                socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_AUDIT);
        if (fd < 0)
                return psrun_error_errno(err, errno, "audit: socket");
        int size = AUDIT_RCVBUF;
        /* FORCE, as root, past net.core.rmem_max; the plain one as a fallback. */
        if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, sizeof(size)) < 0)
                (void) setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, sizeof(size));
        struct sockaddr_nl sa = {
                .nl_family = AF_NETLINK,
                .nl_groups = 1U << (AUDIT_NLGRP_READLOG - 1),
        };
        if (bind(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0)
                return psrun_error_errno(err, errno, "audit: join the read-only log group");
        *ret = TAKE_FD(fd);
        return 0;
}

/* ---- parsing ---- */

struct cursor {
        const char *p, *end;
};

/* The next "key=value" token: key and raw value (quotes kept). */
static bool next_token(struct cursor *c, const char **key, size_t *klen, const char **val,
                       size_t *vlen)
{
        while (c->p < c->end && *c->p == ' ')
                c->p++;
        if (c->p >= c->end)
                return false;
        const char *k = c->p;
        while (c->p < c->end && *c->p != '=' && *c->p != ' ')
                c->p++;
        *key = k;
        *klen = (size_t) (c->p - k);
        if (c->p >= c->end || *c->p != '=') {
                *val = c->p;
                *vlen = 0;
                return true;
        }
        c->p++;
        const char *v = c->p;
        if (c->p < c->end && *c->p == '"') {
                /* Quoted by the kernel's own format (AppArmor's info= may hold
                 * spaces); a quoted value from userspace has no quote in it. */
                c->p++;
                while (c->p < c->end && *c->p != '"')
                        c->p++;
                if (c->p < c->end)
                        c->p++;
        } else {
                while (c->p < c->end && *c->p != ' ')
                        c->p++;
        }
        *val = v;
        *vlen = (size_t) (c->p - v);
        return true;
}

static int hex_digit(char c)
{
        if (c >= '0' && c <= '9')
                return c - '0';
        if (c >= 'A' && c <= 'F')
                return c - 'A' + 10;
        if (c >= 'a' && c <= 'f')
                return c - 'a' + 10;
        return -1;
}

/* A value as the kernel printed it: "quoted", HEX, or a bare word (a
 * number, "(null)", "<too_long>"). Control characters of a hex value are
 * shown as '?', so the result is one printable line. */
static void decode_value(const char *v, size_t n, char *out, size_t size)
{
        size_t o = 0;
        if (size == 0)
                return;
        if (n >= 2 && v[0] == '"' && v[n - 1] == '"') {
                for (size_t i = 1; i + 1 < n && o + 1 < size; i++)
                        out[o++] = v[i];
        } else {
                bool hex = n > 0 && n % 2 == 0;
                for (size_t i = 0; hex && i < n; i++)
                        hex = hex_digit(v[i]) >= 0 && !(v[i] >= 'a' && v[i] <= 'f');
                for (size_t i = 0; i < n && o + 1 < size; i += hex ? 2 : 1) {
                        char ch = hex ? (char) (hex_digit(v[i]) << 4 | hex_digit(v[i + 1])) : v[i];
                        out[o++] = (unsigned char) ch < 0x20 || ch == 0x7f ? '?' : ch;
                }
        }
        out[o] = '\0';
}

static bool key_is(const char *k, size_t klen, const char *want)
{
        return strlen(want) == klen && memcmp(k, want, klen) == 0;
}

/* Decimal or, with base 16, hex; the whole value must be digits. */
static bool parse_u64(const char *v, size_t n, int base, uint64_t *ret)
{
        uint64_t x = 0;
        if (n == 0 || n > 20)
                return false;
        for (size_t i = 0; i < n; i++) {
                int d = base == 16 ? hex_digit(v[i])
                                   : (v[i] >= '0' && v[i] <= '9' ? v[i] - '0' : -1);
                if (d < 0 || x > (UINT64_MAX - (uint64_t) d) / (uint64_t) base)
                        return false;
                x = x * (uint64_t) base + (uint64_t) d;
        }
        *ret = x;
        return true;
}

static bool parse_pid(const char *v, size_t n, pid_t *ret)
{
        uint64_t x;
        if (!parse_u64(v, n, 10, &x) || x > 0x7fffffff)
                return false;
        *ret = (pid_t) x;
        return true;
}

/* Skips "audit(1700000000.123:456): ". */
static bool skip_header(struct cursor *c)
{
        static const char prefix[] = "audit(";
        if ((size_t) (c->end - c->p) < sizeof(prefix) - 1 ||
            memcmp(c->p, prefix, sizeof(prefix) - 1) != 0)
                return false;
        const char *close = memchr(c->p, ')', (size_t) (c->end - c->p));
        if (!close || close + 2 > c->end || close[1] != ':')
                return false;
        c->p = close + 2;
        return true;
}

static int parse_landlock(int type, struct cursor *c, struct audit_record *rec)
{
        const char *k, *v;
        size_t kl, vl;
        /* The first key is the domain, always; a record whose first key is
         * not is not one psrun understands. */
        if (!next_token(c, &k, &kl, &v, &vl) || !key_is(k, kl, "domain") ||
            !parse_u64(v, vl, 16, &rec->domain) || rec->domain == 0)
                return -EBADMSG;
        if (type == AUDIT_TYPE_LANDLOCK_ACCESS) {
                rec->kind = AUDIT_KIND_LANDLOCK_ACCESS;
                if (!next_token(c, &k, &kl, &v, &vl) || !key_is(k, kl, "blockers") || vl == 0)
                        return -EBADMSG;
                decode_value(v, vl, rec->blockers, sizeof(rec->blockers));
                while (next_token(c, &k, &kl, &v, &vl)) {
                        if ((key_is(k, kl, "path") || key_is(k, kl, "name")) && !rec->object[0])
                                decode_value(v, vl, rec->object, sizeof(rec->object));
                        else if (key_is(k, kl, "opid"))
                                (void) parse_pid(v, vl, &rec->object_pid);
                }
                return 0;
        }
        rec->kind = AUDIT_KIND_LANDLOCK_DOMAIN;
        char status[16] = "";
        while (next_token(c, &k, &kl, &v, &vl)) {
                uint64_t x;
                if (key_is(k, kl, "status"))
                        decode_value(v, vl, status, sizeof(status));
                else if (key_is(k, kl, "pid"))
                        (void) parse_pid(v, vl, &rec->pid);
                else if (key_is(k, kl, "uid") && parse_u64(v, vl, 10, &x) && x <= UINT32_MAX)
                        rec->uid = (uint32_t) x;
                else if (key_is(k, kl, "denials"))
                        (void) parse_u64(v, vl, 10, &rec->denials);
        }
        rec->allocated = strcmp(status, "allocated") == 0;
        rec->deallocated = strcmp(status, "deallocated") == 0;
        if ((rec->allocated && rec->pid <= 0) || (!rec->allocated && !rec->deallocated))
                return -EBADMSG;
        return 0;
}

static int parse_apparmor(struct cursor *c, struct audit_record *rec)
{
        const char *k, *v;
        size_t kl, vl;
        char verdict[16] = "";
        while (next_token(c, &k, &kl, &v, &vl)) {
                if (key_is(k, kl, "apparmor"))
                        decode_value(v, vl, verdict, sizeof(verdict));
                else if (key_is(k, kl, "operation"))
                        decode_value(v, vl, rec->operation, sizeof(rec->operation));
                else if (key_is(k, kl, "profile"))
                        decode_value(v, vl, rec->profile, sizeof(rec->profile));
                else if (key_is(k, kl, "name") && !rec->object[0])
                        decode_value(v, vl, rec->object, sizeof(rec->object));
                else if (key_is(k, kl, "pid") && !rec->pid)
                        (void) parse_pid(v, vl, &rec->pid);
                else if (key_is(k, kl, "denied_mask"))
                        decode_value(v, vl, rec->denied_mask, sizeof(rec->denied_mask));
        }
        /* SELinux's AVC records share the type; AppArmor's allowed and
         * audited ones are not refusals. */
        if (strcmp(verdict, "DENIED") != 0)
                return 0;
        if (rec->pid <= 0 || !rec->operation[0])
                return -EBADMSG;
        rec->kind = AUDIT_KIND_APPARMOR;
        return 0;
}

int audit_parse(int type, const char *text, size_t len, struct audit_record *rec)
{
        memset(rec, 0, sizeof(*rec));
        rec->kind = AUDIT_KIND_OTHER;
        if (type != AUDIT_TYPE_LANDLOCK_ACCESS && type != AUDIT_TYPE_LANDLOCK_DOMAIN &&
            type != AUDIT_TYPE_AVC)
                return 0;
        /* The kernel may count a trailing NUL in the length. */
        while (len > 0 && (text[len - 1] == '\0' || text[len - 1] == '\n'))
                len--;
        struct cursor c = {text, text + len};
        if (!skip_header(&c))
                return -EBADMSG;
        int r = type == AUDIT_TYPE_AVC ? parse_apparmor(&c, rec) : parse_landlock(type, &c, rec);
        if (r < 0)
                rec->kind = AUDIT_KIND_OTHER;
        return r;
}

int audit_read(int fd, void (*fn)(void *userdata, const struct audit_record *rec), void *userdata)
{
        _cleanup_free_ char *buf = malloc(AUDIT_DATAGRAM_MAX);
        _cleanup_free_ struct audit_record *rec = malloc(sizeof(*rec));
        if (!buf || !rec)
                return -ENOMEM;
        int result = 0;
        for (;;) {
                ssize_t n = recv(fd, buf, AUDIT_DATAGRAM_MAX, MSG_DONTWAIT);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == ENOBUFS) {
                        /* Overrun: what was lost is lost; go on reading. */
                        result = -ENOBUFS;
                        continue;
                }
                if (n < 0)
                        return errno == EAGAIN ? result : -errno;
                /* int, as the macros want: NLMSG_NEXT steps past the
                 * aligned length, which may exceed what is left. */
                int left = (int) n;
                for (struct nlmsghdr *h = (struct nlmsghdr *) (void *) buf; NLMSG_OK(h, left);
                     h = NLMSG_NEXT(h, left)) {
                        size_t tlen = h->nlmsg_len - NLMSG_HDRLEN;
                        if (audit_parse(h->nlmsg_type, NLMSG_DATA(h), tlen, rec) == 0 &&
                            rec->kind != AUDIT_KIND_OTHER)
                                fn(userdata, rec);
                }
        }
}
