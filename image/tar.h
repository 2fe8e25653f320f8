/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * A streaming tar reader for image layers, which are untrusted input from
 * the network. It reads ustar and GNU headers, pax extended headers (path,
 * linkpath, size, uid, gid, mtime, SCHILY.xattr.*) and GNU long names and
 * link targets, from any byte source, one 512-byte block at a time: nothing
 * is held but the current entry, and every size it allocates for is bounded
 * below. Every field is validated (checksum, magic, octal or base-256
 * numbers in range, no NUL inside a name), and anything two readers could
 * read two ways is refused rather than guessed: a header-only entry (a
 * directory, a link) that declares data, two extended headers for one
 * entry, sparse and multi-volume GNU entries, unknown entry types.
 *
 * The reader only parses: the names it returns are as the archive spells
 * them (image/unpack.c decides what a name may be on disk).
 */

#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"

#define TAR_BLOCK 512
/* A name or link target, from any header form, is shorter than this (the
 * kernel's PATH_MAX, its NUL included): longer ones are refused. */
#define TAR_PATH_MAX 4096
/* One pax extended header (all its records), and a global one. */
#define TAR_PAX_MAX (1U << 20)
/* One extended attribute's value (the kernel's XATTR_SIZE_MAX) and name
 * (XATTR_NAME_MAX), and how many one entry may carry. */
#define TAR_XATTR_VALUE_MAX 65536
#define TAR_XATTR_NAME_MAX  255
#define TAR_XATTRS_MAX      128

enum tar_type {
        TAR_REG,
        TAR_HARDLINK,
        TAR_SYMLINK,
        TAR_CHAR,
        TAR_BLOCKDEV,
        TAR_DIR,
        TAR_FIFO,
};

struct tar_xattr {
        char *name;  /* NUL-terminated, 1..TAR_XATTR_NAME_MAX bytes */
        char *value; /* binary, `size` bytes */
        size_t size;
};

struct tar_entry {
        enum tar_type type;
        char *path;     /* 1..TAR_PATH_MAX-1 bytes, no NUL inside */
        char *linkpath; /* hardlinks and symlinks (non-empty); NULL otherwise */
        uint32_t mode;  /* permission bits, 07777 */
        uint32_t uid, gid;
        uint64_t size; /* bytes of data: regular files only, 0 for the rest */
        int64_t mtime;
        uint32_t mtime_nsec;
        uint32_t devmajor, devminor; /* char and block devices */
        struct tar_xattr *xattrs;
        size_t n_xattrs;
        uint64_t offset; /* where its first header starts in the stream */
};

/* A byte source: up to len bytes into buf, 0 at its end, or -errno with err
 * set. */
typedef ssize_t (*tar_read_fn)(void *ctx, void *buf, size_t len, psrun_error *err);

struct tar_reader;

/* NULL when out of memory. */
struct tar_reader *tar_reader_new(tar_read_fn read, void *ctx);
void tar_reader_free(struct tar_reader *r);

/* The next entry, after skipping what is left of the current one's data:
 * 1 with *entry set (the reader's, valid until the next call), 0 at the
 * archive's end (two zero blocks, or the stream ending between entries or
 * inside the last one's padding, as Go's reader takes it), or -errno with err naming the byte
 * offset and, once known, the name ("entry `a/b` (byte 1536): ..."). */
int tar_next(struct tar_reader *r, const struct tar_entry **entry, psrun_error *err);

/* Up to len bytes of the current entry's data: the count, 0 at its end, or
 * -errno (-EPROTO for a stream that ends inside the data). */
ssize_t tar_read_data(struct tar_reader *r, void *buf, size_t len, psrun_error *err);

/* Bytes consumed from the source so far. */
uint64_t tar_offset(const struct tar_reader *r);
