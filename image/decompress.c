/* SPDX-License-Identifier: MIT */
/* Streaming decompression of a layer (image/decompress.h). */
#include "image/decompress.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "common/cleanup.h"
#include "common/number.h"

#define IN_SIZE (128 * 1024)

struct decompressor {
        int fd;
        bool sniffed, in_eof, done;
        enum layer_compression kind;
        unsigned char *in;
        size_t in_pos, in_len;
        z_stream z;
        bool z_live;
        ZSTD_DCtx *zs;
        size_t zs_hint; /* ZSTD_decompressStream's last answer: 0 between frames */
};

static const struct {
        const char *media_type;
        enum layer_compression kind;
} media_types[] = {
        {"application/vnd.oci.image.layer.v1.tar", LAYER_PLAIN},
        {"application/vnd.oci.image.layer.v1.tar+gzip", LAYER_GZIP},
        {"application/vnd.oci.image.layer.v1.tar+zstd", LAYER_ZSTD},
        {"application/vnd.oci.image.layer.nondistributable.v1.tar", LAYER_PLAIN},
        {"application/vnd.oci.image.layer.nondistributable.v1.tar+gzip", LAYER_GZIP},
        {"application/vnd.oci.image.layer.nondistributable.v1.tar+zstd", LAYER_ZSTD},
        {"application/vnd.docker.image.rootfs.diff.tar", LAYER_PLAIN},
        {"application/vnd.docker.image.rootfs.diff.tar.gzip", LAYER_GZIP},
        {"application/vnd.docker.image.rootfs.foreign.diff.tar.gzip", LAYER_GZIP},
};

int layer_media_type(const char *media_type, enum layer_compression *declared, psrun_error *err)
{
        *declared = LAYER_PLAIN;
        if (!media_type || !*media_type)
                return 0;
        for (size_t i = 0; i < ARRAY_SIZE(media_types); i++)
                if (!strcmp(media_type, media_types[i].media_type)) {
                        *declared = media_types[i].kind;
                        return 0;
                }
        char shown[300];
        return psrun_error_set(err, EINVAL, "media type `%s` is not a layer's",
                               number_shown(media_type, shown, sizeof(shown)));
}

const char *layer_compression_name(enum layer_compression c)
{
        switch (c) {
        case LAYER_GZIP:
                return "gzip";
        case LAYER_ZSTD:
                return "zstd";
        case LAYER_PLAIN:
                break;
        }
        return "none";
}

struct decompressor *decompressor_new(int fd)
{
        struct decompressor *d = calloc(1, sizeof(*d));
        if (!d)
                return NULL;
        d->fd = fd;
        if (!(d->in = malloc(IN_SIZE))) {
                free(d);
                return NULL;
        }
        return d;
}

void decompressor_free(struct decompressor *d)
{
        if (!d)
                return;
        if (d->z_live)
                inflateEnd(&d->z);
        ZSTD_freeDCtx(d->zs);
        free(d->in);
        free(d);
}

enum layer_compression decompressor_kind(const struct decompressor *d)
{
        return d->kind;
}

/* More input into the buffer (whatever is unread moves to its start):
 * the bytes added, 0 at the fd's end, -errno. */
static ssize_t fill(struct decompressor *d, psrun_error *err)
{
        if (d->in_eof)
                return 0;
        if (d->in_pos > 0) {
                memmove(d->in, d->in + d->in_pos, d->in_len - d->in_pos);
                d->in_len -= d->in_pos;
                d->in_pos = 0;
        }
        for (;;) {
                ssize_t n = read(d->fd, d->in + d->in_len, IN_SIZE - d->in_len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return psrun_error_errno(err, errno, "read");
                if (n == 0)
                        d->in_eof = true;
                d->in_len += (size_t) n;
                return n;
        }
}

static int sniff(struct decompressor *d, psrun_error *err)
{
        while (d->in_len < 4 && !d->in_eof) {
                ssize_t n = fill(d, err);
                if (n < 0)
                        return (int) n;
        }
        static const unsigned char gz[] = {0x1f, 0x8b}, zs[] = {0x28, 0xb5, 0x2f, 0xfd};
        if (d->in_len >= 2 && !memcmp(d->in, gz, 2)) {
                d->kind = LAYER_GZIP;
                /* 15 + 16: a 32 KiB window, gzip framing only. */
                if (inflateInit2(&d->z, 15 + 16) != Z_OK)
                        return psrun_error_set(err, ENOMEM, "gzip: cannot start zlib");
                d->z_live = true;
        } else if (d->in_len >= 4 && !memcmp(d->in, zs, 4)) {
                d->kind = LAYER_ZSTD;
                if (!(d->zs = ZSTD_createDCtx()))
                        return psrun_error_set(err, ENOMEM, "zstd: cannot start libzstd");
                size_t r = ZSTD_DCtx_setParameter(d->zs, ZSTD_d_windowLogMax,
                                                  DECOMPRESS_ZSTD_WINDOW_LOG);
                if (ZSTD_isError(r))
                        return psrun_error_set(err, EINVAL, "zstd: %s", ZSTD_getErrorName(r));
        } else
                d->kind = LAYER_PLAIN;
        d->sniffed = true;
        return 0;
}

static ssize_t read_plain(struct decompressor *d, void *buf, size_t len, psrun_error *err)
{
        if (d->in_pos < d->in_len) {
                size_t n = d->in_len - d->in_pos < len ? d->in_len - d->in_pos : len;
                memcpy(buf, d->in + d->in_pos, n);
                d->in_pos += n;
                return (ssize_t) n;
        }
        if (d->in_eof)
                return 0;
        for (;;) {
                ssize_t n = read(d->fd, buf, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return psrun_error_errno(err, errno, "read");
                if (n == 0)
                        d->in_eof = true;
                return n;
        }
}

static ssize_t read_gzip(struct decompressor *d, void *buf, size_t len, psrun_error *err)
{
        if (len > UINT32_MAX)
                len = UINT32_MAX;
        d->z.next_out = buf;
        d->z.avail_out = (uInt) len;
        while (d->z.avail_out == len && !d->done) {
                if (d->in_pos == d->in_len) {
                        ssize_t n = fill(d, err);
                        if (n < 0)
                                return n;
                        if (n == 0)
                                return psrun_error_set(err, EPROTO,
                                                       "gzip: the stream is cut short");
                }
                d->z.next_in = d->in + d->in_pos;
                d->z.avail_in = (uInt) (d->in_len - d->in_pos);
                int r = inflate(&d->z, Z_NO_FLUSH);
                d->in_pos = d->in_len - d->z.avail_in;
                if (r == Z_STREAM_END) {
                        /* Another member may follow (gzip allows a series). */
                        if (d->in_pos == d->in_len) {
                                ssize_t n = fill(d, err);
                                if (n < 0)
                                        return n;
                        }
                        if (d->in_pos == d->in_len)
                                d->done = true;
                        else if (inflateReset(&d->z) != Z_OK)
                                return psrun_error_set(err, EPROTO, "gzip: cannot reset zlib");
                } else if (r == Z_MEM_ERROR)
                        return psrun_error_set(err, ENOMEM, "gzip: out of memory");
                else if (r != Z_OK && r != Z_BUF_ERROR)
                        return psrun_error_set(err, EPROTO, "gzip: %s",
                                               d->z.msg ? d->z.msg : "corrupt data");
        }
        return (ssize_t) (len - d->z.avail_out);
}

static ssize_t read_zstd(struct decompressor *d, void *buf, size_t len, psrun_error *err)
{
        ZSTD_outBuffer out = {.dst = buf, .size = len, .pos = 0};
        while (out.pos == 0 && !d->done) {
                if (d->in_pos == d->in_len) {
                        ssize_t n = fill(d, err);
                        if (n < 0)
                                return n;
                        if (n == 0 && d->zs_hint == 0) {
                                d->done = true; /* at a frame's end: the stream may end */
                                break;
                        }
                        if (n == 0) {
                                /* Inside a frame: output may be left to flush. */
                                ZSTD_inBuffer none = {.src = d->in, .size = 0, .pos = 0};
                                size_t r = ZSTD_decompressStream(d->zs, &out, &none);
                                if (ZSTD_isError(r))
                                        return psrun_error_set(err, EPROTO, "zstd: %s",
                                                               ZSTD_getErrorName(r));
                                d->zs_hint = r;
                                if (out.pos > 0)
                                        break;
                                return psrun_error_set(err, EPROTO,
                                                       "zstd: the stream is cut short");
                        }
                }
                ZSTD_inBuffer in = {.src = d->in, .size = d->in_len, .pos = d->in_pos};
                size_t r = ZSTD_decompressStream(d->zs, &out, &in);
                d->in_pos = in.pos;
                if (ZSTD_isError(r))
                        return psrun_error_set(err, EPROTO, "zstd: %s", ZSTD_getErrorName(r));
                d->zs_hint = r;
        }
        return (ssize_t) out.pos;
}

ssize_t decompressor_read(void *ctx, void *buf, size_t len, psrun_error *err)
{
        struct decompressor *d = ctx;
        if (len == 0)
                return 0;
        if (!d->sniffed) {
                int r = sniff(d, err);
                if (r < 0)
                        return r;
        }
        switch (d->kind) {
        case LAYER_GZIP:
                return read_gzip(d, buf, len, err);
        case LAYER_ZSTD:
                return read_zstd(d, buf, len, err);
        case LAYER_PLAIN:
                break;
        }
        return read_plain(d, buf, len, err);
}
