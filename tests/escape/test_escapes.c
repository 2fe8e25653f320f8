/* SPDX-License-Identifier: MIT */
/*
 * The escapes of issue 9 in `psrun run`: each test names the layer that stops
 * the attack and, where a second layer also holds, a variant with the first
 * one off shows the second.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "integration/common.h"

TestSuite(escapes, .init = test_require_root, .timeout = 60);

/* A world-readable file on the host, outside anything psrun binds. */
static void make_marker(char *path, size_t len)
{
        test_tmp_template(path, len, "psrun-escape-marker");
        int fd = mkstemp(path);
        cr_assert_geq(fd, 0, "mkstemp: %s", strerror(errno));
        cr_assert_eq(write(fd, "HOST-SECRET\n", 12), 12);
        fchmod(fd, 0644);
        close(fd);
}

/* workdir=/proc/self/fd/N for every N the child might hold, then a climb
 * to the host's root and a read of the marker by its path relative to it. */
static void workdir_fd_climb(const char *landlock)
{
        char marker[64];
        make_marker(marker, sizeof(marker));
        char script[256];
        snprintf(script, sizeof(script), "cd ../../../../../../../../..; cat .%s; pwd", marker);
        int escaped = 0, started = 0;
        for (int n = 3; n <= 14; n++) {
                char workdir[64];
                snprintf(workdir, sizeof(workdir), "workdir=/proc/self/fd/%d", n);
                const char *argv[] = {"run", "-o",      workdir, "-o",   landlock,
                                      "--",  "/bin/sh", "-c",    script, NULL};
                struct test_run r;
                test_run_psrun(&r, argv);
                if (strstr(r.out, "HOST-SECRET")) {
                        escaped++;
                        cr_log_error("workdir /proc/self/fd/%d reached the host: %s", n, r.out);
                }
                if (r.status != 125)
                        started++;
                else
                        cr_expect(strstr(r.err, "chdir: /proc/self/fd/"),
                                  "the refusal names the step and the path: %s", r.err);
                test_run_free(&r);
        }
        unlink(marker);
        cr_expect_eq(escaped, 0, "%d working directories were host directories", escaped);
        cr_expect_eq(started, 0, "%d commands started in a /proc/self/fd/N working directory",
                     started);
}

/* Layer: the working directory is resolved inside the root without magic
 * links and verified (runtime/child.c step_chdir). Landlock would also stop
 * the read; the next test turns it off. */
Test(escapes, workdir_proc_self_fd_is_refused)
{
        workdir_fd_climb("landlock=auto");
}

/* The same with Landlock off: the working directory check alone holds. */
Test(escapes, workdir_proc_self_fd_is_refused_without_landlock)
{
        workdir_fd_climb("landlock=off");
}

/* Layer: the child wipes its copy of psrun's arguments before anything of
 * the sandbox can see it (runtime/child.c step_proctitle). */
Test(escapes, init_cmdline_is_neutral)
{
        const char *argv[] = {"run",     "-o", "hostname=psrun-cmdline-test",      "--",
                              "/bin/sh", "-c", "tr '\\000' '|' < /proc/1/cmdline", NULL};
        struct test_run r;
        test_run_psrun(&r, argv);
        cr_assert_eq(r.status, 0, "%s", r.err);
        cr_expect_str_eq(r.out, "init|", "pid 1's command line: %s", r.out);
        test_run_free(&r);
}

/* --json: the result line starts on a line of its own, even after a
 * command left an unterminated JSON fragment on the same stderr. */
Test(escapes, json_result_line_after_partial_stderr)
{
        const char *argv[] = {"run",     "--json", "--",
                              "/bin/sh", "-c",     "printf '{\"partial\": [1, ' >&2; exit 3",
                              NULL};
        struct test_run r;
        test_run_psrun(&r, argv);
        cr_assert_eq(r.status, 3, "%s", r.err);
        char *line = strstr(r.err, "\n{\"");
        cr_assert_not_null(line, "no result line of its own: %s", r.err);
        line++;
        cr_expect(strstr(r.err, "{\"partial\": [1, \n"), "stderr: %s", r.err);
        char *code = test_json_field(line, "exit_code");
        cr_expect(code && strcmp(code, "3") == 0, "result line: %s", line);
        free(code);
        test_run_free(&r);
}
