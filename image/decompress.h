/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A layer's bytes, decompressed as they stream: gzip (zlib, several members
 * in a row as gzip allows), zstd (libzstd, several frames, skippable ones
 * skipped) or none. The form is taken from the first bytes (the gzip and
 * zstd magic numbers), as containerd and containers/image do, since
 * registries and `docker save` label uncompressed layers `tar.gzip` and the
 * like; the media type is only checked to be a layer's.
 *
 * Memory is bounded: zlib's window is 32 KiB, and a zstd frame that asks
 * for a window past 2^DECOMPRESS_ZSTD_WINDOW_LOG bytes (128 MiB, libzstd's
 * own default ceiling) is refused. The output is not bounded here: the tar
 * reader's caller counts it (image/unpack.c, max_bytes).
 */

#include <sys/types.h>

#include "common/error.h"

#define DECOMPRESS_ZSTD_WINDOW_LOG 27

enum layer_compression {
        LAYER_PLAIN,
        LAYER_GZIP,
        LAYER_ZSTD,
};

/* 0 when media_type names a layer (OCI's tar, tar+gzip, tar+zstd and their
 * non-distributable forms, Docker's rootfs.diff.tar.gzip and
 * foreign.diff.tar.gzip) or is NULL or "" (not known: sniffed), setting
 * *declared; -EINVAL with err naming it otherwise. */
int layer_media_type(const char *media_type, enum layer_compression *declared, psrun_error *err);

const char *layer_compression_name(enum layer_compression c);

struct decompressor;

/* Reads fd (not owned) from where it is. NULL when out of memory. */
struct decompressor *decompressor_new(int fd);
void decompressor_free(struct decompressor *d);

/* Up to len decompressed bytes: the count, 0 at the end of the stream, or
 * -errno with err set ("gzip: ...", "zstd: ...", -EPROTO for corrupt or
 * truncated data). The first call sniffs the form. A tar_read_fn. */
ssize_t decompressor_read(void *d, void *buf, size_t len, psrun_error *err);

/* The form found (LAYER_PLAIN before the first read). */
enum layer_compression decompressor_kind(const struct decompressor *d);
