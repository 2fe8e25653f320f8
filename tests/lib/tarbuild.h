/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Tar archives built byte by byte in memory, for the tests of the layer
 * reader and unpacker (tests/unit/test_tar.c, tests/image/): every field
 * is written as the test says, so a hostile header is one call and a poke.
 * Aborts on out of memory.
 */

#include <stddef.h>
#include <stdint.h>

struct tarbuf {
        unsigned char *data;
        size_t len, cap;
};

/* A ustar header ("ustar\0" "00"), octal fields, checksum filled in; name
 * and linkname are cut to their 100-byte fields. Returns the header's
 * offset in b->data (to poke at, then tb_fix_checksum). */
size_t tb_header(struct tarbuf *b, const char *name, char type, uint64_t size, const char *linkname,
                 unsigned mode, unsigned uid, unsigned gid);
void tb_fix_checksum(struct tarbuf *b, size_t header);
/* len bytes of data, then NULs to the next 512-byte block. */
void tb_data(struct tarbuf *b, const void *data, size_t len);
/* A regular file with its content, mode 0644, owner 0:0. */
void tb_file(struct tarbuf *b, const char *name, const char *content);
void tb_dir(struct tarbuf *b, const char *name);
void tb_symlink(struct tarbuf *b, const char *name, const char *target);
void tb_hardlink(struct tarbuf *b, const char *name, const char *target);
/* A pax extended header ('x', or 'g' for global) holding `records`
 * ("LEN key=value\n"...; tb_pax_record builds one). */
void tb_pax(struct tarbuf *b, char type, const char *records, size_t len);
/* One "LEN key=value\n" record, value of vlen bytes (may hold NULs),
 * appended to rec (a malloc'd buffer of *rlen bytes, grown). */
void tb_pax_record(char **rec, size_t *rlen, const char *key, const char *value, size_t vlen);
/* A GNU long name ('L') or link target ('K') of len bytes. */
void tb_gnu_long(struct tarbuf *b, char type, const void *name, size_t len);
/* The end marker: two zero blocks. */
void tb_end(struct tarbuf *b);
void tb_free(struct tarbuf *b);

/* The archive written whole to a new temporary file (unlinked), gzip-
 * compressed when gzip is set: an fd at offset 0. */
int tb_to_fd(const struct tarbuf *b, int gzip);
