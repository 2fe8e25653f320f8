/* SPDX-License-Identifier: MIT */
/*
 * The tar reader (image/tar.h): one header block at a time, extended
 * headers (pax 'x', GNU 'L'/'K') gathered into the entry they precede.
 */
#include "image/tar.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/number.h"

/* The ustar header's fields (POSIX.1-1988 and GNU's variant). */
#define H_NAME     0
#define H_MODE     100
#define H_UID      108
#define H_GID      116
#define H_SIZE     124
#define H_MTIME    136
#define H_CHKSUM   148
#define H_TYPE     156
#define H_LINKNAME 157
#define H_MAGIC    257
#define H_VERSION  263
#define H_DEVMAJOR 329
#define H_DEVMINOR 337
#define H_PREFIX   345

/* What an entry's extended headers said, before its real header comes. */
struct pending {
        char *path, *linkpath;
        bool has_size, has_uid, has_gid, has_mtime;
        uint64_t size, uid, gid;
        int64_t mtime;
        uint32_t mtime_nsec;
        bool pax, longname, longlink;
};

struct tar_reader {
        tar_read_fn read;
        void *ctx;
        uint64_t offset;
        uint64_t data_left; /* of the current entry */
        uint32_t pad_left;
        bool ended;
        struct tar_entry entry;
        struct pending pend;
        char shown[300];
};

struct tar_reader *tar_reader_new(tar_read_fn read, void *ctx)
{
        struct tar_reader *r = calloc(1, sizeof(*r));
        if (!r)
                return NULL;
        r->read = read;
        r->ctx = ctx;
        return r;
}

static void entry_clear(struct tar_entry *e)
{
        free(e->path);
        free(e->linkpath);
        for (size_t i = 0; i < e->n_xattrs; i++) {
                free(e->xattrs[i].name);
                free(e->xattrs[i].value);
        }
        free(e->xattrs);
        memset(e, 0, sizeof(*e));
}

static void pending_clear(struct pending *p)
{
        free(p->path);
        free(p->linkpath);
        memset(p, 0, sizeof(*p));
}

void tar_reader_free(struct tar_reader *r)
{
        if (!r)
                return;
        entry_clear(&r->entry);
        pending_clear(&r->pend);
        free(r);
}

uint64_t tar_offset(const struct tar_reader *r)
{
        return r->offset;
}

/* Exactly len bytes, or fewer at the source's end: the count or -errno. */
static ssize_t read_full(struct tar_reader *r, void *buf, size_t len, psrun_error *err)
{
        size_t got = 0;
        while (got < len) {
                ssize_t n = r->read(r->ctx, (char *) buf + got, len - got, err);
                if (n < 0)
                        return n;
                if (n == 0)
                        break;
                got += (size_t) n;
                r->offset += (uint64_t) n;
        }
        return (ssize_t) got;
}

static int skip(struct tar_reader *r, uint64_t len, psrun_error *err)
{
        char buf[16384];
        while (len > 0) {
                size_t chunk = len < sizeof(buf) ? (size_t) len : sizeof(buf);
                ssize_t n = read_full(r, buf, chunk, err);
                if (n < 0)
                        return (int) n;
                if ((size_t) n < chunk)
                        return psrun_error_set(err, EPROTO,
                                               "byte %" PRIu64 ": the stream ends inside an entry",
                                               r->offset);
                len -= chunk;
        }
        return 0;
}

static uint32_t padding(uint64_t size)
{
        return (uint32_t) ((TAR_BLOCK - size % TAR_BLOCK) % TAR_BLOCK);
}

/* A header's numeric field: octal digits (leading spaces, then digits,
 * then spaces or NULs), or GNU's base-256 (high bit set, big-endian, the
 * next bit the sign). 0, or -EINVAL (not a number), -ERANGE (negative or
 * above max: `neg_ok` lets a base-256 negative through, for mtime). */
static int parse_numeric(const unsigned char *f, size_t len, uint64_t max, bool neg_ok,
                         int64_t *ret)
{
        if (f[0] & 0x80) {
                bool neg = f[0] & 0x40;
                uint64_t v = f[0] & 0x3f;
                if (neg)
                        v ^= 0x3f; /* two's complement: invert, add one at the end */
                for (size_t i = 1; i < len; i++) {
                        if (v >> 55)
                                return -ERANGE;
                        v = (v << 8) | (neg ? (uint8_t) ~f[i] : f[i]);
                }
                if (neg) {
                        if (!neg_ok || v > (uint64_t) INT64_MAX - 1)
                                return -ERANGE;
                        *ret = -(int64_t) v - 1;
                        return 0;
                }
                if (v > max || v > (uint64_t) INT64_MAX)
                        return -ERANGE;
                *ret = (int64_t) v;
                return 0;
        }
        size_t i = 0, end = len;
        while (i < len && (f[i] == ' ' || f[i] == '\0'))
                i++;
        while (end > i && (f[end - 1] == ' ' || f[end - 1] == '\0'))
                end--;
        uint64_t v = 0;
        for (; i < end; i++) {
                if (f[i] < '0' || f[i] > '7')
                        return -EINVAL;
                if (v >> 60)
                        return -ERANGE;
                v = v * 8 + (uint64_t) (f[i] - '0');
        }
        if (v > max)
                return -ERANGE;
        *ret = (int64_t) v;
        return 0;
}

/* The stored checksum against the sum of the block with its checksum
 * field as spaces: unsigned, as POSIX says, or signed, as some old tars
 * wrote it. */
static bool checksum_ok(const unsigned char *h)
{
        int64_t want;
        if (parse_numeric(h + H_CHKSUM, 8, 0777777, false, &want) < 0)
                return false;
        uint64_t usum = 0;
        int64_t ssum = 0;
        for (size_t i = 0; i < TAR_BLOCK; i++) {
                unsigned char c = (i >= H_CHKSUM && i < H_CHKSUM + 8) ? ' ' : h[i];
                usum += c;
                ssum += (signed char) c;
        }
        return (int64_t) usum == want || ssum == want;
}

static bool all_zero(const unsigned char *b, size_t len)
{
        for (size_t i = 0; i < len; i++)
                if (b[i])
                        return false;
        return true;
}

static const char *shown(struct tar_reader *r, const char *name)
{
        return number_shown(name, r->shown, sizeof(r->shown));
}

/* Up to 64 bytes of a counted, untrusted string as a message may show
 * it (control characters escaped). */
static const char *shown_n(struct tar_reader *r, const char *p, size_t len)
{
        char tmp[65];
        if (len > 64)
                len = 64;
        memcpy(tmp, p, len);
        tmp[len] = '\0';
        return number_shown(tmp, r->shown, sizeof(r->shown));
}

/* "entry `name` (byte N)" or "header at byte N" for messages. */
#define FAIL(r, name, code, fmt, ...)                                                              \
        ((name) ? psrun_error_set(err, code, "entry `%s` (byte %" PRIu64 "): " fmt,                \
                                  shown(r, name), (r)->entry.offset, ##__VA_ARGS__)                \
                : psrun_error_set(err, code, "header at byte %" PRIu64 ": " fmt,                   \
                                  (r)->entry.offset, ##__VA_ARGS__))

/* A NUL-terminated copy of a fixed field, up to its first NUL. */
static size_t field_len(const unsigned char *f, size_t len)
{
        const unsigned char *z = memchr(f, '\0', len);
        return z ? (size_t) (z - f) : len;
}

/* The data of an extended header, whole, into a new buffer (NUL after). */
static int read_ext(struct tar_reader *r, uint64_t size, uint64_t max, char **ret, psrun_error *err)
{
        if (size > max)
                return FAIL(r, NULL, E2BIG,
                            "an extended header of %" PRIu64 " bytes (at most %" PRIu64 ")", size,
                            max);
        _cleanup_free_ char *buf = malloc((size_t) size + 1);
        if (!buf)
                return psrun_error_errno(err, ENOMEM, "extended header");
        ssize_t n = read_full(r, buf, (size_t) size, err);
        if (n < 0)
                return (int) n;
        if ((uint64_t) n < size)
                return FAIL(r, NULL, EPROTO, "the stream ends inside an extended header");
        buf[size] = '\0';
        int k = skip(r, padding(size), err);
        if (k < 0)
                return k;
        *ret = TAKE_PTR(buf);
        return 0;
}

/* A GNU long name or link target: the name, then NULs only. */
static int read_gnu_long(struct tar_reader *r, uint64_t size, char **slot, psrun_error *err)
{
        if (*slot)
                return FAIL(r, NULL, EPROTO, "two GNU long names for one entry");
        if (size > TAR_PATH_MAX)
                return FAIL(r, NULL, ENAMETOOLONG,
                            "a GNU long name of %" PRIu64 " bytes (at most %d)", size,
                            TAR_PATH_MAX - 1);
        _cleanup_free_ char *buf = NULL;
        int k = read_ext(r, size, TAR_PATH_MAX, &buf, err);
        if (k < 0)
                return k;
        size_t len = strlen(buf);
        if (!all_zero((unsigned char *) buf + len, (size_t) size - len))
                return FAIL(r, NULL, EINVAL, "a NUL inside a GNU long name");
        if (len == 0)
                return FAIL(r, NULL, EINVAL, "an empty GNU long name");
        if (len >= TAR_PATH_MAX)
                return FAIL(r, NULL, ENAMETOOLONG, "a GNU long name of %zu bytes", len);
        *slot = TAKE_PTR(buf);
        return 0;
}

static int add_xattr(struct tar_reader *r, const char *name, size_t name_len, const char *value,
                     size_t value_len, psrun_error *err)
{
        struct tar_entry *e = &r->entry;
        if (name_len == 0 || name_len > TAR_XATTR_NAME_MAX || memchr(name, '\0', name_len))
                return FAIL(r, NULL, EINVAL,
                            "an extended attribute name that is empty, too long "
                            "or holds a NUL");
        if (value_len > TAR_XATTR_VALUE_MAX)
                return FAIL(r, NULL, E2BIG, "extended attribute `%s` of %zu bytes (at most %d)",
                            shown_n(r, name, name_len), value_len, TAR_XATTR_VALUE_MAX);
        for (size_t i = 0; i < e->n_xattrs; i++)
                if (strlen(e->xattrs[i].name) == name_len &&
                    !memcmp(e->xattrs[i].name, name, name_len))
                        return FAIL(r, NULL, EINVAL, "extended attribute `%s` given twice",
                                    shown_n(r, name, name_len));
        if (e->n_xattrs >= TAR_XATTRS_MAX)
                return FAIL(r, NULL, E2BIG, "more than %d extended attributes", TAR_XATTRS_MAX);
        struct tar_xattr *v = realloc(e->xattrs, (e->n_xattrs + 1) * sizeof(*v));
        if (!v)
                return psrun_error_errno(err, ENOMEM, "extended attribute");
        e->xattrs = v;
        struct tar_xattr *x = &v[e->n_xattrs];
        x->name = strndup(name, name_len);
        x->value = malloc(value_len ? value_len : 1);
        if (!x->name || !x->value) {
                free(x->name);
                free(x->value);
                return psrun_error_errno(err, ENOMEM, "extended attribute");
        }
        memcpy(x->value, value, value_len);
        x->size = value_len;
        e->n_xattrs++;
        return 0;
}

/* A pax decimal: digits only, at most max. */
static int pax_u64(const char *v, size_t len, uint64_t max, uint64_t *ret)
{
        char buf[32];
        if (len == 0 || len >= sizeof(buf))
                return -EINVAL;
        memcpy(buf, v, len);
        buf[len] = '\0';
        return number_parse_u64(buf, max, ret);
}

/* A pax time: [-]seconds[.fraction], the fraction cut to nanoseconds. */
static int pax_time(const char *v, size_t len, int64_t *sec, uint32_t *nsec)
{
        bool neg = len > 0 && v[0] == '-';
        size_t i = neg ? 1 : 0, dot = len;
        for (size_t j = i; j < len; j++)
                if (v[j] == '.') {
                        dot = j;
                        break;
                }
        uint64_t s;
        if (pax_u64(v + i, dot - i, INT64_MAX, &s) < 0)
                return -EINVAL;
        uint32_t ns = 0;
        size_t digits = 0;
        for (size_t j = dot + 1; j < len; j++) {
                if (v[j] < '0' || v[j] > '9')
                        return -EINVAL;
                if (digits++ < 9)
                        ns = ns * 10 + (uint32_t) (v[j] - '0');
        }
        for (; digits < 9; digits++)
                ns *= 10;
        if (neg && ns) {
                /* -1.25 is 1.25 s before the epoch: -2 s + 0.75 s. */
                *sec = -(int64_t) s - 1;
                *nsec = 1000000000U - ns;
        } else {
                *sec = neg ? -(int64_t) s : (int64_t) s;
                *nsec = ns;
        }
        return 0;
}

static int pax_string(struct tar_reader *r, const char *key, const char *v, size_t len, char **slot,
                      psrun_error *err)
{
        if (memchr(v, '\0', len))
                return FAIL(r, NULL, EINVAL, "pax %s holds a NUL", key);
        if (len >= TAR_PATH_MAX)
                return FAIL(r, NULL, ENAMETOOLONG, "pax %s of %zu bytes (at most %d)", key, len,
                            TAR_PATH_MAX - 1);
        char *s = strndup(v, len);
        if (!s)
                return psrun_error_errno(err, ENOMEM, "pax %s", key);
        free(*slot);
        *slot = s;
        return 0;
}

#define XATTR_PREFIX "SCHILY.xattr."

/* One record's key and value (the value binary, not NUL-terminated). An
 * empty value unsets the key (POSIX), i.e. the header's field is used. */
static int pax_apply(struct tar_reader *r, const char *key, size_t klen, const char *v, size_t vlen,
                     bool global, psrun_error *err)
{
        struct pending *p = &r->pend;
#define KEY_IS(s) (klen == strlen(s) && !memcmp(key, s, klen))
        if (klen >= 11 && !memcmp(key, "GNU.sparse.", 11))
                return FAIL(r, NULL, EOPNOTSUPP, "a GNU sparse file (no image builder writes one)");
        if (global)
                return 0; /* validated; a global header names no entry */
        if (KEY_IS("path")) {
                if (vlen == 0) {
                        free(p->path);
                        p->path = NULL;
                        return 0;
                }
                return pax_string(r, "path", v, vlen, &p->path, err);
        }
        if (KEY_IS("linkpath")) {
                if (vlen == 0) {
                        free(p->linkpath);
                        p->linkpath = NULL;
                        return 0;
                }
                return pax_string(r, "linkpath", v, vlen, &p->linkpath, err);
        }
        if (KEY_IS("size") || KEY_IS("uid") || KEY_IS("gid")) {
                bool *has = KEY_IS("size")  ? &p->has_size
                            : KEY_IS("uid") ? &p->has_uid
                                            : &p->has_gid;
                uint64_t *val = KEY_IS("size") ? &p->size : KEY_IS("uid") ? &p->uid : &p->gid;
                uint64_t max = KEY_IS("size") ? (uint64_t) INT64_MAX : UINT32_MAX - 1;
                *has = vlen > 0;
                if (vlen > 0 && pax_u64(v, vlen, max, val) < 0)
                        return FAIL(r, NULL, ERANGE, "pax %.*s `%s` is not a number in range",
                                    (int) klen, key, shown_n(r, v, vlen));
                return 0;
        }
        if (KEY_IS("mtime")) {
                p->has_mtime = vlen > 0;
                if (vlen > 0 && pax_time(v, vlen, &p->mtime, &p->mtime_nsec) < 0)
                        return FAIL(r, NULL, EINVAL, "pax mtime `%s` is not a time",
                                    shown_n(r, v, vlen));
                return 0;
        }
        if (klen > strlen(XATTR_PREFIX) && !memcmp(key, XATTR_PREFIX, strlen(XATTR_PREFIX)))
                return add_xattr(r, key + strlen(XATTR_PREFIX), klen - strlen(XATTR_PREFIX), v,
                                 vlen, err);
        /* atime, ctime, uname, gname, charset, comment, vendor keys: not used. */
        return 0;
#undef KEY_IS
}

/* Records "LEN KEY=VALUE\n", LEN counting the whole record in decimal. */
static int pax_parse(struct tar_reader *r, const char *buf, size_t size, bool global,
                     psrun_error *err)
{
        size_t pos = 0;
        while (pos < size) {
                size_t i = pos, len = 0;
                while (i < size && buf[i] >= '0' && buf[i] <= '9' && i - pos < 8)
                        len = len * 10 + (size_t) (buf[i++] - '0');
                if (i == pos || i >= size || buf[i] != ' ' || buf[pos] == '0' || len > size - pos ||
                    len < (i - pos) + 4)
                        return FAIL(r, NULL, EINVAL, "pax record at %zu: bad length", pos);
                const char *rec = buf + i + 1, *end = buf + pos + len - 1;
                if (*end != '\n')
                        return FAIL(r, NULL, EINVAL, "pax record at %zu: not ended by a newline",
                                    pos);
                const char *eq = memchr(rec, '=', (size_t) (end - rec));
                if (!eq || eq == rec || memchr(rec, '\0', (size_t) (eq - rec)))
                        return FAIL(r, NULL, EINVAL, "pax record at %zu: no key", pos);
                int k = pax_apply(r, rec, (size_t) (eq - rec), eq + 1, (size_t) (end - eq - 1),
                                  global, err);
                if (k < 0)
                        return k;
                pos += len;
        }
        return 0;
}

/* The entry the real header describes, with what extended headers said. */
static int build_entry(struct tar_reader *r, const unsigned char *h, bool gnu, psrun_error *err)
{
        struct tar_entry *e = &r->entry;
        struct pending *p = &r->pend;
        char type = (char) h[H_TYPE];

        /* The name first, so that what follows can name it. */
        if (p->path)
                e->path = TAKE_PTR(p->path);
        else {
                size_t nlen = field_len(h + H_NAME, 100);
                size_t plen = gnu ? 0 : field_len(h + H_PREFIX, 155);
                if (!(e->path = malloc(nlen + plen + 2)))
                        return psrun_error_errno(err, ENOMEM, "entry name");
                size_t o = 0;
                if (plen) {
                        memcpy(e->path, h + H_PREFIX, plen);
                        e->path[plen] = '/';
                        o = plen + 1;
                }
                memcpy(e->path + o, h + H_NAME, nlen);
                e->path[o + nlen] = '\0';
        }
        if (!e->path[0])
                return FAIL(r, NULL, EINVAL, "an empty name");

        switch (type) {
        case '0':
        case '7':
                e->type = TAR_REG;
                break;
        case '\0':
                /* The pre-POSIX form: a directory is a name ending in '/'. */
                e->type = e->path[strlen(e->path) - 1] == '/' ? TAR_DIR : TAR_REG;
                break;
        case '1':
                e->type = TAR_HARDLINK;
                break;
        case '2':
                e->type = TAR_SYMLINK;
                break;
        case '3':
                e->type = TAR_CHAR;
                break;
        case '4':
                e->type = TAR_BLOCKDEV;
                break;
        case '5':
                e->type = TAR_DIR;
                break;
        case '6':
                e->type = TAR_FIFO;
                break;
        case 'S':
                return FAIL(r, e->path, EOPNOTSUPP,
                            "a GNU sparse file (no image builder writes one)");
        default:
                if (type >= 0x21 && type < 0x7f)
                        return FAIL(r, e->path, EOPNOTSUPP,
                                    "entry type `%c` is not one an image has", type);
                return FAIL(r, e->path, EOPNOTSUPP, "entry type 0x%02x is not one an image has",
                            (unsigned char) type);
        }

        int64_t v;
        if (parse_numeric(h + H_MODE, 8, 07777777, false, &v) < 0)
                return FAIL(r, e->path, EINVAL, "bad mode field");
        e->mode = (uint32_t) v & 07777;
        if (p->has_uid)
                e->uid = (uint32_t) p->uid;
        else if (parse_numeric(h + H_UID, 8, UINT32_MAX - 1, false, &v) < 0)
                return FAIL(r, e->path, ERANGE, "bad uid field");
        else
                e->uid = (uint32_t) v;
        if (p->has_gid)
                e->gid = (uint32_t) p->gid;
        else if (parse_numeric(h + H_GID, 8, UINT32_MAX - 1, false, &v) < 0)
                return FAIL(r, e->path, ERANGE, "bad gid field");
        else
                e->gid = (uint32_t) v;
        uint64_t size;
        if (parse_numeric(h + H_SIZE, 12, INT64_MAX, false, &v) < 0)
                return FAIL(r, e->path, ERANGE,
                            "bad size field (negative, too large or not a "
                            "number)");
        size = p->has_size ? p->size : (uint64_t) v;
        if (p->has_mtime) {
                e->mtime = p->mtime;
                e->mtime_nsec = p->mtime_nsec;
        } else if (parse_numeric(h + H_MTIME, 12, INT64_MAX, true, &v) < 0)
                return FAIL(r, e->path, ERANGE, "bad mtime field");
        else
                e->mtime = v;

        if (e->type == TAR_CHAR || e->type == TAR_BLOCKDEV) {
                if (parse_numeric(h + H_DEVMAJOR, 8, UINT32_MAX, false, &v) < 0)
                        return FAIL(r, e->path, ERANGE, "bad devmajor field");
                e->devmajor = (uint32_t) v;
                if (parse_numeric(h + H_DEVMINOR, 8, UINT32_MAX, false, &v) < 0)
                        return FAIL(r, e->path, ERANGE, "bad devminor field");
                e->devminor = (uint32_t) v;
        }

        if (e->type == TAR_HARDLINK || e->type == TAR_SYMLINK) {
                if (p->linkpath)
                        e->linkpath = TAKE_PTR(p->linkpath);
                else {
                        size_t llen = field_len(h + H_LINKNAME, 100);
                        if (!(e->linkpath = strndup((const char *) h + H_LINKNAME, llen)))
                                return psrun_error_errno(err, ENOMEM, "link target");
                }
                if (!e->linkpath[0])
                        return FAIL(r, e->path, EINVAL, "a link with an empty target");
        }

        /* Data only where a reader would look for it: a directory or link
         * that declares data is read two ways by two readers (Go's skips
         * nothing, others skip the data), so it is refused. */
        if (e->type != TAR_REG && size != 0)
                return FAIL(r, e->path, EINVAL, "a %s declaring %" PRIu64 " bytes of data",
                            e->type == TAR_DIR ? "directory" : "header-only entry", size);
        e->size = size;
        r->data_left = size;
        r->pad_left = padding(size);
        pending_clear(p);
        return 0;
}

int tar_next(struct tar_reader *r, const struct tar_entry **entry, psrun_error *err)
{
        if (r->ended)
                return 0;
        int k = skip(r, r->data_left, err);
        if (k < 0)
                return k;
        r->data_left = 0;
        /* The stream may end inside the last entry's padding: its data is
         * whole, and Go's reader takes that as the end (Debian's umoci
         * 0.4.7 writes such layers, without padding or end marker). */
        unsigned char pad[TAR_BLOCK];
        ssize_t got = read_full(r, pad, r->pad_left, err);
        if (got < 0)
                return (int) got;
        if ((size_t) got < r->pad_left) {
                r->ended = true;
                return 0;
        }
        r->pad_left = 0;
        entry_clear(&r->entry);
        pending_clear(&r->pend);

        unsigned char h[TAR_BLOCK];
        bool first = true;
        for (;;) {
                uint64_t at = r->offset;
                if (first)
                        r->entry.offset = at;
                ssize_t n = read_full(r, h, sizeof(h), err);
                if (n < 0)
                        return (int) n;
                if (n == 0 && first) {
                        r->ended = true;
                        return 0;
                }
                if (n < TAR_BLOCK)
                        return FAIL(r, NULL, EPROTO, "the stream ends inside a header");
                if (all_zero(h, sizeof(h))) {
                        if (!first)
                                return FAIL(r, NULL, EPROTO,
                                            "a zero block after an extended header");
                        n = read_full(r, h, sizeof(h), err);
                        if (n < 0)
                                return (int) n;
                        if (n != 0 && (n < TAR_BLOCK || !all_zero(h, sizeof(h))))
                                return FAIL(r, NULL, EPROTO,
                                            "a lone zero block inside the archive");
                        r->ended = true;
                        return 0;
                }
                if (!checksum_ok(h))
                        return FAIL(r, NULL, EINVAL, "bad header checksum");
                bool gnu;
                if (!memcmp(h + H_MAGIC, "ustar\0", 6) && !memcmp(h + H_VERSION, "00", 2))
                        gnu = false;
                else if (!memcmp(h + H_MAGIC, "ustar  \0", 8))
                        gnu = true;
                else
                        return FAIL(r, NULL, EINVAL, "not a ustar header (bad magic)");
                first = false;

                char type = (char) h[H_TYPE];
                if (type != 'x' && type != 'g' && type != 'L' && type != 'K') {
                        k = build_entry(r, h, gnu, err);
                        if (k < 0)
                                return k;
                        *entry = &r->entry;
                        return 1;
                }
                int64_t size;
                if (parse_numeric(h + H_SIZE, 12, INT64_MAX, false, &size) < 0)
                        return FAIL(r, NULL, ERANGE, "bad size field in an extended header");
                if (type == 'L' || type == 'K') {
                        bool *seen = type == 'L' ? &r->pend.longname : &r->pend.longlink;
                        char **slot = type == 'L' ? &r->pend.path : &r->pend.linkpath;
                        if (*seen)
                                return FAIL(r, NULL, EPROTO, "two GNU long names for one entry");
                        /* A pax path given before wins over the GNU name. */
                        _cleanup_free_ char *given = TAKE_PTR(*slot);
                        k = read_gnu_long(r, (uint64_t) size, slot, err);
                        if (k < 0)
                                return k;
                        *seen = true;
                        if (given) {
                                free(*slot);
                                *slot = TAKE_PTR(given);
                        }
                        continue;
                }
                if (type == 'x' && r->pend.pax)
                        return FAIL(r, NULL, EPROTO, "two pax headers for one entry");
                _cleanup_free_ char *buf = NULL;
                k = read_ext(r, (uint64_t) size, TAR_PAX_MAX, &buf, err);
                if (k < 0)
                        return k;
                k = pax_parse(r, buf, (size_t) size, type == 'g', err);
                if (k < 0)
                        return k;
                if (type == 'g')
                        first = true; /* a global header stands alone */
                else
                        r->pend.pax = true;
        }
}

ssize_t tar_read_data(struct tar_reader *r, void *buf, size_t len, psrun_error *err)
{
        if (r->data_left == 0)
                return 0;
        if (len > r->data_left)
                len = (size_t) r->data_left;
        ssize_t n = r->read(r->ctx, buf, len, err);
        if (n < 0)
                return n;
        if (n == 0)
                return FAIL(r, r->entry.path, EPROTO, "the stream ends inside the data");
        r->offset += (uint64_t) n;
        r->data_left -= (uint64_t) n;
        return n;
}
