/* SPDX-License-Identifier: MIT */
/*
 * The layer tar reader (image/tar.c) on archives crafted byte by byte
 * (tests/lib/tarbuild.c): the hostile header first — cut short, a bad
 * checksum, negative and overflowing sizes, base-256 numbers, huge and
 * malformed pax records, NULs inside names, sparse and unknown types —
 * each refused with one line; then what it must read.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "image/tar.h"
#include "lib/tarbuild.h"

TestSuite(tar, .timeout = 30);

struct mem {
        const unsigned char *p;
        size_t len, pos;
        size_t chunk; /* at most this per read: short reads on purpose */
};

static ssize_t mem_read(void *ctx, void *buf, size_t len, psrun_error *err)
{
        struct mem *m = ctx;
        size_t n = m->len - m->pos;
        if (n > len)
                n = len;
        if (m->chunk && n > m->chunk)
                n = m->chunk;
        if (n)
                memcpy(buf, m->p + m->pos, n);
        m->pos += n;
        return (ssize_t) n;
}

/* Reads every entry and its data; returns the first error (0 at a clean
 * end) and how many entries came. */
static int read_all_entries(const struct tarbuf *b, size_t *count, psrun_error *err)
{
        struct mem m = {.p = b->data, .len = b->len, .chunk = 7};
        struct tar_reader *r = tar_reader_new(mem_read, &m);
        cr_assert(r);
        const struct tar_entry *e;
        int k;
        size_t n = 0;
        char buf[100];
        while ((k = tar_next(r, &e, err)) == 1) {
                n++;
                ssize_t got;
                while ((got = tar_read_data(r, buf, sizeof(buf), err)) > 0)
                        ;
                if (got < 0) {
                        k = (int) got;
                        break;
                }
        }
        tar_reader_free(r);
        if (count)
                *count = n;
        return k;
}

/* The archive is refused with code, one line holding `what`. */
static void expect_refused(struct tarbuf *b, int code, const char *what)
{
        psrun_error err = {0};
        int k = read_all_entries(b, NULL, &err);
        cr_assert_eq(k, -code, "want -%d, got %d (%s)", code, k, err.msg);
        cr_assert(strstr(err.msg, what), "message `%s` lacks `%s`", err.msg, what);
        cr_assert_null(strchr(err.msg, '\n'), "a multi-line message: %s", err.msg);
        tb_free(b);
}

Test(tar, truncated_header)
{
        struct tarbuf b = {0};
        tb_file(&b, "a", "x");
        b.len = 512 + 512 + 300; /* half of a second header's block */
        tb_header(&b, "b", '0', 0, NULL, 0644, 0, 0);
        b.len = 1024 + 300;
        expect_refused(&b, EPROTO, "ends inside a header");
}

Test(tar, truncated_data)
{
        struct tarbuf b = {0};
        tb_header(&b, "a", '0', 5000, NULL, 0644, 0, 0);
        tb_data(&b, "abc", 3);
        expect_refused(&b, EPROTO, "ends inside");
}

Test(tar, bad_checksum)
{
        struct tarbuf b = {0};
        size_t h = tb_header(&b, "a", '0', 0, NULL, 0644, 0, 0);
        b.data[h + 1] = 'b'; /* the name changed, the checksum not */
        tb_end(&b);
        expect_refused(&b, EINVAL, "bad header checksum");
}

Test(tar, bad_magic)
{
        struct tarbuf b = {0};
        size_t h = tb_header(&b, "a", '0', 0, NULL, 0644, 0, 0);
        memcpy(b.data + h + 257, "star\0\0\0\0", 8);
        tb_fix_checksum(&b, h);
        tb_end(&b);
        expect_refused(&b, EINVAL, "bad magic");
}

Test(tar, negative_base256_size)
{
        struct tarbuf b = {0};
        size_t h = tb_header(&b, "a", '0', 0, NULL, 0644, 0, 0);
        memset(b.data + h + 124, 0xff, 12); /* -1 in base-256 */
        tb_fix_checksum(&b, h);
        tb_end(&b);
        expect_refused(&b, ERANGE, "bad size field");
}

Test(tar, overflowing_base256_size)
{
        struct tarbuf b = {0};
        size_t h = tb_header(&b, "a", '0', 0, NULL, 0644, 0, 0);
        b.data[h + 124] = 0x80;
        memset(b.data + h + 125, 0xff, 11); /* 2^88 - 1 */
        tb_fix_checksum(&b, h);
        tb_end(&b);
        expect_refused(&b, ERANGE, "bad size field");
}

Test(tar, overflowing_octal_size)
{
        struct tarbuf b = {0};
        size_t h = tb_header(&b, "a", '0', 0, NULL, 0644, 0, 0);
        memcpy(b.data + h + 124, "99999999999", 11); /* not octal */
        tb_fix_checksum(&b, h);
        tb_end(&b);
        expect_refused(&b, ERANGE, "bad size field");
}

Test(tar, base256_size_and_uid_are_read)
{
        struct tarbuf b = {0};
        size_t h = tb_header(&b, "a", '0', 0, NULL, 0644, 0, 0);
        memset(b.data + h + 124, 0, 12);
        b.data[h + 124] = 0x80;
        b.data[h + 135] = 5;
        memset(b.data + h + 108, 0, 8);
        b.data[h + 108] = 0x80;
        b.data[h + 113] = 0x01; /* 65536 << 0: bytes 113..115 = 01 00 00 */
        tb_fix_checksum(&b, h);
        tb_data(&b, "hello", 5);
        tb_end(&b);
        struct mem m = {.p = b.data, .len = b.len};
        struct tar_reader *r = tar_reader_new(mem_read, &m);
        const struct tar_entry *e;
        psrun_error err = {0};
        cr_assert_eq(tar_next(r, &e, &err), 1, "%s", err.msg);
        cr_assert_eq(e->size, 5);
        cr_assert_eq(e->uid, 65536);
        char buf[16];
        cr_assert_eq(tar_read_data(r, buf, sizeof(buf), &err), 5);
        cr_assert_eq(memcmp(buf, "hello", 5), 0);
        cr_assert_eq(tar_next(r, &e, &err), 0, "%s", err.msg);
        tar_reader_free(r);
        tb_free(&b);
}

Test(tar, negative_base256_mtime_is_before_the_epoch)
{
        struct tarbuf b = {0};
        size_t h = tb_header(&b, "a", '0', 0, NULL, 0644, 0, 0);
        memset(b.data + h + 136, 0xff, 12);
        b.data[h + 147] = 0xfe; /* -2 */
        tb_fix_checksum(&b, h);
        tb_end(&b);
        struct mem m = {.p = b.data, .len = b.len};
        struct tar_reader *r = tar_reader_new(mem_read, &m);
        const struct tar_entry *e;
        psrun_error err = {0};
        cr_assert_eq(tar_next(r, &e, &err), 1, "%s", err.msg);
        cr_assert_eq(e->mtime, -2);
        tar_reader_free(r);
        tb_free(&b);
}

Test(tar, uid_past_32_bits)
{
        struct tarbuf b = {0};
        size_t h = tb_header(&b, "a", '0', 0, NULL, 0644, 0, 0);
        memset(b.data + h + 108, 0, 8);
        b.data[h + 108] = 0x80;
        b.data[h + 111] = 0x01; /* 2^32 */
        tb_fix_checksum(&b, h);
        tb_end(&b);
        expect_refused(&b, ERANGE, "bad uid field");
}

Test(tar, mode_not_octal)
{
        struct tarbuf b = {0};
        size_t h = tb_header(&b, "a", '0', 0, NULL, 0644, 0, 0);
        memcpy(b.data + h + 100, "00006x4", 7);
        tb_fix_checksum(&b, h);
        tb_end(&b);
        expect_refused(&b, EINVAL, "bad mode field");
}

Test(tar, huge_pax_header)
{
        struct tarbuf b = {0};
        /* Declares 2 GiB of records: refused at the header, nothing read. */
        tb_header(&b, "PaxHeaders/a", 'x', 2ULL << 30, NULL, 0644, 0, 0);
        tb_end(&b);
        expect_refused(&b, E2BIG, "an extended header of 2147483648 bytes");
}

Test(tar, huge_pax_record_length)
{
        struct tarbuf b = {0};
        const char rec[] = "99999999999999999999 path=a\n";
        tb_pax(&b, 'x', rec, strlen(rec));
        tb_file(&b, "a", "");
        tb_end(&b);
        expect_refused(&b, EINVAL, "bad length");
}

Test(tar, pax_record_past_its_header)
{
        struct tarbuf b = {0};
        const char rec[] = "40 path=a\n";
        tb_pax(&b, 'x', rec, strlen(rec));
        tb_file(&b, "a", "");
        tb_end(&b);
        expect_refused(&b, EINVAL, "bad length");
}

Test(tar, pax_record_without_newline)
{
        struct tarbuf b = {0};
        const char rec[] = "10 path=ab";
        tb_pax(&b, 'x', rec, strlen(rec));
        tb_file(&b, "a", "");
        tb_end(&b);
        expect_refused(&b, EINVAL, "newline");
}

Test(tar, nul_in_pax_path)
{
        struct tarbuf b = {0};
        char *rec = NULL;
        size_t rlen = 0;
        tb_pax_record(&rec, &rlen, "path", "ok\0../../etc/passwd", 19);
        tb_pax(&b, 'x', rec, rlen);
        free(rec);
        tb_file(&b, "a", "");
        tb_end(&b);
        expect_refused(&b, EINVAL, "pax path holds a NUL");
}

Test(tar, nul_in_gnu_long_name)
{
        struct tarbuf b = {0};
        tb_gnu_long(&b, 'L', "ok\0../../x", 11);
        tb_file(&b, "a", "");
        tb_end(&b);
        expect_refused(&b, EINVAL, "a NUL inside a GNU long name");
}

Test(tar, gnu_long_name_past_path_max)
{
        struct tarbuf b = {0};
        char *name = malloc(5000);
        memset(name, 'a', 5000);
        tb_gnu_long(&b, 'L', name, 5000);
        free(name);
        tb_file(&b, "a", "");
        tb_end(&b);
        expect_refused(&b, ENAMETOOLONG, "GNU long name of 5000 bytes");
}

Test(tar, pax_path_past_path_max)
{
        struct tarbuf b = {0};
        char *name = malloc(5000), *rec = NULL;
        size_t rlen = 0;
        memset(name, 'a', 5000);
        tb_pax_record(&rec, &rlen, "path", name, 5000);
        tb_pax(&b, 'x', rec, rlen);
        free(name);
        free(rec);
        tb_file(&b, "a", "");
        tb_end(&b);
        expect_refused(&b, ENAMETOOLONG, "pax path of 5000 bytes");
}

Test(tar, directory_declaring_data)
{
        struct tarbuf b = {0};
        tb_header(&b, "d/", '5', 512, NULL, 0755, 0, 0);
        tb_data(&b, "x", 1);
        tb_end(&b);
        expect_refused(&b, EINVAL, "directory declaring 512 bytes");
}

Test(tar, symlink_declaring_data)
{
        struct tarbuf b = {0};
        tb_header(&b, "l", '2', 10, "t", 0777, 0, 0);
        tb_data(&b, "0123456789", 10);
        tb_end(&b);
        expect_refused(&b, EINVAL, "header-only entry declaring 10 bytes");
}

Test(tar, gnu_sparse_type)
{
        struct tarbuf b = {0};
        tb_header(&b, "s", 'S', 0, NULL, 0644, 0, 0);
        tb_end(&b);
        expect_refused(&b, EOPNOTSUPP, "sparse");
}

Test(tar, pax_sparse_keys)
{
        struct tarbuf b = {0};
        char *rec = NULL;
        size_t rlen = 0;
        tb_pax_record(&rec, &rlen, "GNU.sparse.major", "1", 1);
        tb_pax(&b, 'x', rec, rlen);
        free(rec);
        tb_file(&b, "s", "");
        tb_end(&b);
        expect_refused(&b, EOPNOTSUPP, "sparse");
}

Test(tar, unknown_type)
{
        struct tarbuf b = {0};
        tb_header(&b, "v", 'V', 0, NULL, 0644, 0, 0);
        tb_end(&b);
        expect_refused(&b, EOPNOTSUPP, "entry type `V`");
}

Test(tar, two_pax_headers)
{
        struct tarbuf b = {0};
        const char rec[] = "10 path=a\n";
        tb_pax(&b, 'x', rec, strlen(rec));
        tb_pax(&b, 'x', rec, strlen(rec));
        tb_file(&b, "a", "");
        tb_end(&b);
        expect_refused(&b, EPROTO, "two pax headers");
}

Test(tar, lone_zero_block)
{
        struct tarbuf b = {0};
        tb_file(&b, "a", "x");
        tb_data(&b, "", 0);
        b.len += 0;
        unsigned char zero[512] = {0};
        tb_data(&b, zero, 512);
        tb_file(&b, "b", "y");
        tb_end(&b);
        expect_refused(&b, EPROTO, "lone zero block");
}

Test(tar, empty_link_target)
{
        struct tarbuf b = {0};
        tb_symlink(&b, "l", "");
        tb_end(&b);
        expect_refused(&b, EINVAL, "empty target");
}

Test(tar, duplicate_xattr)
{
        struct tarbuf b = {0};
        char *rec = NULL;
        size_t rlen = 0;
        tb_pax_record(&rec, &rlen, "SCHILY.xattr.user.a", "1", 1);
        tb_pax_record(&rec, &rlen, "SCHILY.xattr.user.a", "2", 1);
        tb_pax(&b, 'x', rec, rlen);
        free(rec);
        tb_file(&b, "a", "");
        tb_end(&b);
        expect_refused(&b, EINVAL, "given twice");
}

Test(tar, xattr_value_too_large)
{
        struct tarbuf b = {0};
        char *rec = NULL, *v = calloc(1, 70000);
        size_t rlen = 0;
        tb_pax_record(&rec, &rlen, "SCHILY.xattr.user.big", v, 70000);
        tb_pax(&b, 'x', rec, rlen);
        free(rec);
        free(v);
        tb_file(&b, "a", "");
        tb_end(&b);
        expect_refused(&b, E2BIG, "70000 bytes");
}

Test(tar, the_end_forms)
{
        /* Two zero blocks, or the stream ending between entries: an end. */
        struct tarbuf b = {0};
        tb_file(&b, "a", "x");
        size_t count;
        psrun_error err = {0};
        cr_assert_eq(read_all_entries(&b, &count, &err), 0, "%s", err.msg);
        cr_assert_eq(count, 1);
        tb_end(&b);
        tb_file(&b, "after-the-end", "never read");
        cr_assert_eq(read_all_entries(&b, &count, &err), 0, "%s", err.msg);
        cr_assert_eq(count, 1);
        /* Cut inside the last entry's padding (Debian's umoci writes it so):
         * its data is whole, so an end; cut inside its data: refused. */
        tb_free(&b);
        tb_file(&b, "a", "xyz");
        b.len = 512 + 3;
        cr_assert_eq(read_all_entries(&b, &count, &err), 0, "%s", err.msg);
        cr_assert_eq(count, 1);
        b.len = 512 + 2;
        cr_assert_eq(read_all_entries(&b, &count, &err), -EPROTO);
        tb_free(&b);
        /* An empty stream is an empty layer. */
        cr_assert_eq(read_all_entries(&b, &count, &err), 0);
        cr_assert_eq(count, 0);
}

Test(tar, pax_and_gnu_fields_are_applied)
{
        struct tarbuf b = {0};
        char *rec = NULL;
        size_t rlen = 0;
        char longname[300];
        memset(longname, 'n', sizeof(longname) - 1);
        longname[sizeof(longname) - 1] = '\0';
        tb_pax_record(&rec, &rlen, "path", longname, strlen(longname));
        tb_pax_record(&rec, &rlen, "mtime", "1700000000.25", 13);
        tb_pax_record(&rec, &rlen, "uid", "70000", 5);
        tb_pax_record(&rec, &rlen, "size", "3", 1);
        tb_pax_record(&rec, &rlen, "SCHILY.xattr.security.capability", "\x01\x00\x00\x02", 4);
        tb_pax_record(&rec, &rlen, "SCHILY.xattr.user.k", "", 0);
        tb_pax_record(&rec, &rlen, "comment", "ignored", 7);
        tb_pax(&b, 'x', rec, rlen);
        free(rec);
        tb_header(&b, "short", '0', 0, NULL, 04755, 0, 0); /* size 0 here, 3 in pax */
        tb_data(&b, "abc", 3);
        /* A GNU long link target, and a ustar prefix. */
        char target[200];
        memset(target, 't', sizeof(target) - 1);
        target[sizeof(target) - 1] = '\0';
        tb_gnu_long(&b, 'K', target, strlen(target) + 1);
        tb_symlink(&b, "link", "cut");
        size_t h = tb_header(&b, "name", '0', 0, NULL, 0600, 0, 0);
        memcpy(b.data + h + 345, "the/prefix", 10);
        tb_fix_checksum(&b, h);
        tb_end(&b);

        struct mem m = {.p = b.data, .len = b.len, .chunk = 100};
        struct tar_reader *r = tar_reader_new(mem_read, &m);
        const struct tar_entry *e;
        psrun_error err = {0};
        cr_assert_eq(tar_next(r, &e, &err), 1, "%s", err.msg);
        cr_assert_str_eq(e->path, longname);
        cr_assert_eq(e->mtime, 1700000000);
        cr_assert_eq(e->mtime_nsec, 250000000);
        cr_assert_eq(e->uid, 70000);
        cr_assert_eq(e->size, 3);
        cr_assert_eq(e->mode, 04755);
        cr_assert_eq(e->n_xattrs, 2);
        cr_assert_str_eq(e->xattrs[0].name, "security.capability");
        cr_assert_eq(e->xattrs[0].size, 4);
        cr_assert_eq(memcmp(e->xattrs[0].value, "\x01\x00\x00\x02", 4), 0);
        cr_assert_eq(e->xattrs[1].size, 0);
        cr_assert_eq(tar_next(r, &e, &err), 1, "%s", err.msg); /* data left unread: skipped */
        cr_assert_eq(e->type, TAR_SYMLINK);
        cr_assert_str_eq(e->linkpath, target);
        cr_assert_eq(tar_next(r, &e, &err), 1, "%s", err.msg);
        cr_assert_str_eq(e->path, "the/prefix/name");
        cr_assert_eq(tar_next(r, &e, &err), 0, "%s", err.msg);
        tar_reader_free(r);
        tb_free(&b);
}

Test(tar, pax_path_wins_over_gnu_long_name)
{
        struct tarbuf b = {0};
        char *rec = NULL;
        size_t rlen = 0;
        tb_pax_record(&rec, &rlen, "path", "from-pax", 8);
        tb_pax(&b, 'x', rec, rlen);
        free(rec);
        tb_gnu_long(&b, 'L', "from-gnu", 9);
        tb_file(&b, "from-ustar", "");
        tb_end(&b);
        struct mem m = {.p = b.data, .len = b.len};
        struct tar_reader *r = tar_reader_new(mem_read, &m);
        const struct tar_entry *e;
        psrun_error err = {0};
        cr_assert_eq(tar_next(r, &e, &err), 1, "%s", err.msg);
        cr_assert_str_eq(e->path, "from-pax");
        tar_reader_free(r);
        tb_free(&b);
}

Test(tar, a_global_header_names_no_entry)
{
        struct tarbuf b = {0};
        const char rec[] = "14 path=ghost\n";
        tb_pax(&b, 'g', rec, strlen(rec));
        tb_file(&b, "real", "");
        tb_end(&b);
        struct mem m = {.p = b.data, .len = b.len};
        struct tar_reader *r = tar_reader_new(mem_read, &m);
        const struct tar_entry *e;
        psrun_error err = {0};
        cr_assert_eq(tar_next(r, &e, &err), 1, "%s", err.msg);
        cr_assert_str_eq(e->path, "real");
        cr_assert_eq(tar_next(r, &e, &err), 0, "%s", err.msg);
        tar_reader_free(r);
        tb_free(&b);
}
