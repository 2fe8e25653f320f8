/* SPDX-License-Identifier: MIT */
#include "lib/tarbuild.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

static void grow(struct tarbuf *b, size_t more)
{
        if (b->len + more <= b->cap)
                return;
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + more)
                cap *= 2;
        unsigned char *d = realloc(b->data, cap);
        if (!d)
                abort();
        b->data = d;
        b->cap = cap;
}

static void put_octal(unsigned char *f, size_t width, uint64_t v)
{
        char tmp[32];
        snprintf(tmp, sizeof(tmp), "%0*llo", (int) width - 1, (unsigned long long) v);
        memcpy(f, tmp, width - 1);
        f[width - 1] = '\0';
}

void tb_fix_checksum(struct tarbuf *b, size_t header)
{
        unsigned char *h = b->data + header;
        memset(h + 148, ' ', 8);
        unsigned sum = 0;
        for (size_t i = 0; i < 512; i++)
                sum += h[i];
        char tmp[16];
        snprintf(tmp, sizeof(tmp), "%06o", sum);
        memcpy(h + 148, tmp, 6);
        h[154] = '\0';
        h[155] = ' ';
}

size_t tb_header(struct tarbuf *b, const char *name, char type, uint64_t size, const char *linkname,
                 unsigned mode, unsigned uid, unsigned gid)
{
        grow(b, 512);
        size_t at = b->len;
        unsigned char *h = b->data + at;
        memset(h, 0, 512);
        strncpy((char *) h, name, 100);
        put_octal(h + 100, 8, mode);
        put_octal(h + 108, 8, uid);
        put_octal(h + 116, 8, gid);
        if (size < 077777777777ULL)
                put_octal(h + 124, 12, size);
        else {
                h[124] = 0x80;
                for (int i = 0; i < 8; i++)
                        h[135 - i] = (unsigned char) (size >> (8 * i));
        }
        put_octal(h + 136, 12, 1700000000);
        h[156] = (unsigned char) type;
        if (linkname)
                strncpy((char *) h + 157, linkname, 100);
        memcpy(h + 257,
               "ustar\0"
               "00",
               8);
        b->len += 512;
        tb_fix_checksum(b, at);
        return at;
}

void tb_data(struct tarbuf *b, const void *data, size_t len)
{
        size_t padded = (len + 511) / 512 * 512;
        grow(b, padded);
        memcpy(b->data + b->len, data, len);
        memset(b->data + b->len + len, 0, padded - len);
        b->len += padded;
}

void tb_file(struct tarbuf *b, const char *name, const char *content)
{
        tb_header(b, name, '0', strlen(content), NULL, 0644, 0, 0);
        tb_data(b, content, strlen(content));
}

void tb_dir(struct tarbuf *b, const char *name)
{
        tb_header(b, name, '5', 0, NULL, 0755, 0, 0);
}

void tb_symlink(struct tarbuf *b, const char *name, const char *target)
{
        tb_header(b, name, '2', 0, target, 0777, 0, 0);
}

void tb_hardlink(struct tarbuf *b, const char *name, const char *target)
{
        tb_header(b, name, '1', 0, target, 0644, 0, 0);
}

void tb_pax(struct tarbuf *b, char type, const char *records, size_t len)
{
        tb_header(b, "PaxHeaders/x", type, len, NULL, 0644, 0, 0);
        tb_data(b, records, len);
}

void tb_pax_record(char **rec, size_t *rlen, const char *key, const char *value, size_t vlen)
{
        size_t body = strlen(key) + 1 + vlen + 1; /* key=value\n */
        size_t len = body + 2, digits;
        for (;;) { /* the length counts its own digits */
                char tmp[32];
                digits = (size_t) snprintf(tmp, sizeof(tmp), "%zu", len);
                if (digits + 1 + body == len)
                        break;
                len = digits + 1 + body;
        }
        char *r = realloc(*rec, *rlen + len);
        if (!r)
                abort();
        char *p = r + *rlen;
        int n = sprintf(p, "%zu %s=", len, key);
        memcpy(p + n, value, vlen);
        p[n + vlen] = '\n';
        *rec = r;
        *rlen += len;
}

void tb_gnu_long(struct tarbuf *b, char type, const void *name, size_t len)
{
        size_t at = tb_header(b, "././@LongLink", type, len, NULL, 0644, 0, 0);
        memcpy(b->data + at + 257, "ustar  \0", 8);
        tb_fix_checksum(b, at);
        tb_data(b, name, len);
}

void tb_end(struct tarbuf *b)
{
        grow(b, 1024);
        memset(b->data + b->len, 0, 1024);
        b->len += 1024;
}

void tb_free(struct tarbuf *b)
{
        free(b->data);
        memset(b, 0, sizeof(*b));
}

int tb_to_fd(const struct tarbuf *b, int gzip)
{
        FILE *f = tmpfile();
        if (!f)
                abort();
        int fd = dup(fileno(f));
        fclose(f);
        if (!gzip) {
                if (write(fd, b->data, b->len) != (ssize_t) b->len)
                        abort();
        } else {
                gzFile g = gzdopen(dup(fd), "wb");
                if (!g || gzwrite(g, b->data, (unsigned) b->len) != (int) b->len)
                        abort();
                gzclose(g);
        }
        lseek(fd, 0, SEEK_SET);
        return fd;
}
