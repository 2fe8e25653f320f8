/* SPDX-License-Identifier: MIT */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
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

Test(fileio, write_proc_file_is_one_write)
{
        /* /proc/<pid>/oom_score_adj takes a number in one write; a child's,
         * so this process keeps its own. */
        int go[2];
        cr_assert_eq(pipe(go), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                char c;
                close(go[1]);
                _exit(read(go[0], &c, 1) < 0);
        }
        close(go[0]);
        cr_expect_eq(write_proc_file(pid, "oom_score_adj", "123"), 0);
        char path[64], name[64] = "";
        snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int) pid);
        FILE *f = fopen(path, "re");
        cr_assert_not_null(f);
        cr_expect_not_null(fgets(name, sizeof(name), f));
        fclose(f);
        cr_expect_str_eq(name, "123\n");
        /* A file the kernel takes no write to (root may open it), and no
         * file. */
        int r = write_proc_file(pid, "stat", "x");
        cr_expect(r == -EINVAL || r == -EACCES || r == -EIO, "%d", r);
        cr_expect_eq(write_proc_file(pid, "no-such-file", "x"), -ENOENT);
        close(go[1]);
        waitpid(pid, NULL, 0);
}
