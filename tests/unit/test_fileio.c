/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/fileio.h"

/* A pipe holding n bytes of 'x', write end closed. */
static int pipe_with(size_t n)
{
        int fds[2];
        cr_assert_eq(pipe(fds), 0);
        char chunk[512];
        memset(chunk, 'x', sizeof(chunk));
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                close(fds[0]);
                while (n > 0) {
                        size_t k = n < sizeof(chunk) ? n : sizeof(chunk);
                        if (write(fds[1], chunk, k) != (ssize_t) k)
                                _exit(1);
                        n -= k;
                }
                _exit(0);
        }
        close(fds[1]);
        return fds[0];
}

Test(fileio, read_all_limits)
{
        static const struct {
                size_t size, max;
                int want;
        } cases[] = {
                {0, 10, 0},
                {10, 10, 0},
                {11, 10, -EFBIG},
                {5000, 10000, 0},
                {10000, 10000, 0},
                {10001, 10000, -EFBIG},
                {100000, 4095, -EFBIG},
                {4095, 4095, 0},
                {4096, 4095, -EFBIG},
                {1, 0, -EFBIG},
                {0, 0, 0},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
                int fd = pipe_with(cases[i].size);
                char *buf = NULL;
                size_t len = 12345;
                int r = read_all(fd, cases[i].max, &buf, &len);
                close(fd);
                cr_expect_eq(r, cases[i].want, "size %zu max %zu: %d", cases[i].size, cases[i].max,
                             r);
                if (r == 0) {
                        cr_expect_eq(len, cases[i].size);
                        cr_expect_eq(strlen(buf), cases[i].size);
                }
                free(buf);
        }
}

Test(fileio, read_into_truncates_and_terminates)
{
        int fd = pipe_with(100);
        char buf[10];
        cr_expect_eq(read_into(fd, buf, sizeof(buf)), 9);
        cr_expect_str_eq(buf, "xxxxxxxxx");
        close(fd);
        cr_expect_eq(read_into(-1, buf, sizeof(buf)), -EBADF);
        cr_expect_eq(read_into(0, buf, 0), -EINVAL);
}
