/* SPDX-License-Identifier: MIT */
/* libFuzzer target: the layer tar reader (image/tar.c). Its input is a
 * layer from the network: any bytes must be entries or an error, never a
 * crash, a read out of bounds, an allocation past its bounds or a hang. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "image/tar.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct mem {
        const uint8_t *p;
        size_t len, pos;
};

static ssize_t mem_read(void *ctx, void *buf, size_t len, psrun_error *err)
{
        struct mem *m = ctx;
        size_t n = m->len - m->pos;
        if (n > len)
                n = len;
        /* Short reads, as a pipe gives them. */
        if (n > 1 && (m->pos & 1))
                n = n / 2;
        memcpy(buf, m->p + m->pos, n);
        m->pos += n;
        return (ssize_t) n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
        struct mem m = {.p = data, .len = size};
        struct tar_reader *r = tar_reader_new(mem_read, &m);
        if (!r)
                return 0;
        const struct tar_entry *e;
        psrun_error err = {0};
        int k;
        char buf[300];
        while ((k = tar_next(r, &e, &err)) == 1) {
                /* What an entry promises holds. */
                if (!e->path[0] || strlen(e->path) >= TAR_PATH_MAX || e->mode > 07777 ||
                    e->n_xattrs > TAR_XATTRS_MAX)
                        abort();
                if ((e->type == TAR_SYMLINK || e->type == TAR_HARDLINK) != (e->linkpath != NULL))
                        abort();
                if (e->type != TAR_REG && e->size != 0)
                        abort();
                if (e->path[0] & 1)
                        while (tar_read_data(r, buf, sizeof(buf), &err) > 0)
                                ;
        }
        if (k < 0 && (strchr(err.msg, '\n') || !err.msg[0]))
                abort(); /* one line, always */
        tar_reader_free(r);
        return 0;
}
