/* SPDX-License-Identifier: MIT */
/*
 * Layer decompression (image/decompress.c): the form from the magic, not
 * the label; gzip members in a row; corrupt and truncated streams refused;
 * the media type table.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "image/decompress.h"

TestSuite(decompress, .timeout = 30);

static int fd_of(const void *data, size_t len)
{
        int fd = memfd_create("layer", MFD_CLOEXEC);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, data, len), (ssize_t) len);
        lseek(fd, 0, SEEK_SET);
        return fd;
}

static size_t gzip_of(const void *in, size_t len, unsigned char *out, size_t cap)
{
        z_stream z = {0};
        cr_assert_eq(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
        z.next_in = (unsigned char *) in;
        z.avail_in = (uInt) len;
        z.next_out = out;
        z.avail_out = (uInt) cap;
        cr_assert_eq(deflate(&z, Z_FINISH), Z_STREAM_END);
        size_t n = cap - z.avail_out;
        deflateEnd(&z);
        return n;
}

/* All of the stream: its length, or the error. */
static ssize_t drain(int fd, unsigned char *out, size_t cap, enum layer_compression *kind,
                     psrun_error *err)
{
        struct decompressor *d = decompressor_new(fd);
        size_t got = 0;
        ssize_t n;
        while ((n = decompressor_read(d, out + got, cap - got > 1000 ? 1000 : cap - got, err)) > 0)
                got += (size_t) n;
        if (kind)
                *kind = decompressor_kind(d);
        decompressor_free(d);
        return n < 0 ? n : (ssize_t) got;
}

static unsigned char *pattern(size_t len)
{
        unsigned char *p = malloc(len);
        for (size_t i = 0; i < len; i++)
                p[i] = (unsigned char) ((i * 7) ^ (i >> 9));
        return p;
}

Test(decompress, gzip_zstd_and_plain_by_their_magic)
{
        size_t len = 300000;
        unsigned char *in = pattern(len), *c = malloc(len * 2), *out = malloc(len + 10);
        psrun_error err = {0};
        enum layer_compression kind;

        size_t n = gzip_of(in, len, c, len * 2);
        int fd = fd_of(c, n);
        cr_assert_eq(drain(fd, out, len + 10, &kind, &err), (ssize_t) len, "%s", err.msg);
        cr_assert_eq(kind, LAYER_GZIP);
        cr_assert_eq(memcmp(in, out, len), 0);
        close(fd);

        n = ZSTD_compress(c, len * 2, in, len, 3);
        cr_assert(!ZSTD_isError(n));
        fd = fd_of(c, n);
        cr_assert_eq(drain(fd, out, len + 10, &kind, &err), (ssize_t) len, "%s", err.msg);
        cr_assert_eq(kind, LAYER_ZSTD);
        cr_assert_eq(memcmp(in, out, len), 0);
        close(fd);

        fd = fd_of(in, len);
        cr_assert_eq(drain(fd, out, len + 10, &kind, &err), (ssize_t) len, "%s", err.msg);
        cr_assert_eq(kind, LAYER_PLAIN);
        cr_assert_eq(memcmp(in, out, len), 0);
        close(fd);
        free(in);
        free(c);
        free(out);
}

Test(decompress, gzip_members_in_a_row)
{
        unsigned char c[256], out[64];
        size_t n = gzip_of("first,", 6, c, sizeof(c));
        n += gzip_of("second", 6, c + n, sizeof(c) - n);
        int fd = fd_of(c, n);
        psrun_error err = {0};
        cr_assert_eq(drain(fd, out, sizeof(out), NULL, &err), 12, "%s", err.msg);
        cr_assert_eq(memcmp(out, "first,second", 12), 0);
        close(fd);
}

Test(decompress, truncated_and_corrupt_streams)
{
        size_t len = 100000;
        unsigned char *in = pattern(len), *c = malloc(len * 2), *out = malloc(len);
        psrun_error err = {0};

        size_t n = gzip_of(in, len, c, len * 2);
        int fd = fd_of(c, n - 20);
        cr_assert_eq(drain(fd, out, len, NULL, &err), -EPROTO);
        cr_assert(strstr(err.msg, "gzip: the stream is cut short"), "%s", err.msg);
        close(fd);

        c[n / 2] ^= 0xff;
        c[n / 2 + 1] ^= 0xff;
        fd = fd_of(c, n);
        cr_assert_eq(drain(fd, out, len, NULL, &err), -EPROTO);
        cr_assert(strstr(err.msg, "gzip: "), "%s", err.msg);
        close(fd);

        n = ZSTD_compress(c, len * 2, in, len, 3);
        fd = fd_of(c, n - 9);
        cr_assert_eq(drain(fd, out, len, NULL, &err), -EPROTO);
        cr_assert(strstr(err.msg, "zstd: "), "%s", err.msg);
        close(fd);

        /* gzip then garbage: the next member's header is refused. */
        n = gzip_of("x", 1, c, len * 2);
        memcpy(c + n, "garbage!", 8);
        fd = fd_of(c, n + 8);
        cr_assert_eq(drain(fd, out, len, NULL, &err), -EPROTO);
        close(fd);
        free(in);
        free(c);
        free(out);
}

Test(decompress, a_zstd_window_past_the_bound_is_refused)
{
        /* A frame header asking for a 2 GiB window (windowLog 31). */
        ZSTD_CCtx *cc = ZSTD_createCCtx();
        ZSTD_CCtx_setParameter(cc, ZSTD_c_windowLog, 31);
        ZSTD_CCtx_setParameter(cc, ZSTD_c_enableLongDistanceMatching, 1);
        size_t len = 1 << 20;
        unsigned char *in = pattern(len), *c = malloc(len * 2), *out = malloc(len);
        ZSTD_CCtx_setPledgedSrcSize(cc, ZSTD_CONTENTSIZE_UNKNOWN);
        /* In two calls, so that the size is not known when the header is
         * written and the window stays as asked. */
        ZSTD_inBuffer ib = {in, len / 2, 0};
        ZSTD_outBuffer ob = {c, len * 2, 0};
        size_t r = ZSTD_compressStream2(cc, &ob, &ib, ZSTD_e_continue);
        cr_assert(!ZSTD_isError(r));
        ib.size = len;
        r = ZSTD_compressStream2(cc, &ob, &ib, ZSTD_e_end);
        cr_assert(!ZSTD_isError(r) && r == 0);
        ZSTD_freeCCtx(cc);
        int fd = fd_of(c, ob.pos);
        psrun_error err = {0};
        cr_assert_eq(drain(fd, out, len, NULL, &err), -EPROTO);
        cr_assert(strstr(err.msg, "zstd: "), "%s", err.msg);
        close(fd);
        free(in);
        free(c);
        free(out);
}

Test(decompress, media_types)
{
        enum layer_compression c;
        psrun_error err = {0};
        cr_assert_eq(layer_media_type("application/vnd.oci.image.layer.v1.tar+zstd", &c, &err), 0);
        cr_assert_eq(c, LAYER_ZSTD);
        cr_assert_eq(
                layer_media_type("application/vnd.docker.image.rootfs.diff.tar.gzip", &c, &err), 0);
        cr_assert_eq(c, LAYER_GZIP);
        cr_assert_eq(layer_media_type(NULL, &c, &err), 0);
        cr_assert_eq(layer_media_type("application/vnd.oci.image.config.v1+json", &c, &err),
                     -EINVAL);
        cr_assert(strstr(err.msg, "is not a layer's"), "%s", err.msg);
        cr_assert_eq(layer_media_type("application/x\nevil", &c, &err), -EINVAL);
        cr_assert_null(strchr(err.msg, '\n'));
        cr_assert_str_eq(layer_compression_name(LAYER_ZSTD), "zstd");
}
