/* SPDX-License-Identifier: MIT */
#include "common/fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"

/* Read into buf[*len..limit) until it is full or EOF; 0 or -errno. */
static int fill(int fd, char *buf, size_t *len, size_t limit)
{
        while (*len < limit) {
                ssize_t n = read(fd, buf + *len, limit - *len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        break;
                *len += (size_t) n;
        }
        return 0;
}

ssize_t read_into(int fd, char *buf, size_t size)
{
        if (size == 0)
                return -EINVAL;
        size_t len = 0;
        int r = fill(fd, buf, &len, size - 1);
        if (r < 0)
                return r;
        buf[len] = '\0';
        return (ssize_t) len;
}

int read_all(int fd, size_t max, char **ret, size_t *ret_len)
{
        /* Room for max + 1 bytes (to tell "more than max") and the NUL. */
        size_t cap = max < 4096 ? max + 2 : 4096, len = 0;
        _cleanup_free_ char *buf = malloc(cap);
        if (!buf)
                return -ENOMEM;
        for (;;) {
                int r = fill(fd, buf, &len, cap - 1);
                if (r < 0)
                        return r;
                if (len < cap - 1 || cap == max + 2)
                        break; /* EOF, or read past max */
                size_t grown_cap = cap * 2 > max + 2 ? max + 2 : cap * 2;
                char *grown = realloc(buf, grown_cap);
                if (!grown)
                        return -ENOMEM;
                buf = grown;
                cap = grown_cap;
        }
        if (len > max)
                return -EFBIG;
        buf[len] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_len)
                *ret_len = len;
        return 0;
}

int write_all(int fd, const char *p, size_t len)
{
        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                p += n;
                len -= (size_t) n;
        }
        return 0;
}

int write_proc_file(pid_t pid, const char *name, const char *text)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/%s", (int) pid, name);
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        size_t len = strlen(text);
        ssize_t n = write(fd, text, len);
        int r = n < 0 ? -errno : (size_t) n == len ? 0 : -EIO;
        close(fd);
        return r;
}

FILE *fdopen_copy(int fd, const char *mode)
{
        int copy = fcntl(fd, F_DUPFD_CLOEXEC, 3);
        if (copy < 0)
                return NULL;
        FILE *f = fdopen(copy, mode);
        if (!f) {
                int e = errno;
                close(copy);
                errno = e;
        }
        return f;
}
