/* SPDX-License-Identifier: MIT */
/*
 * psrun run under both backends: what the sandbox lets the command see and
 * do, its limits and reasons, its exit codes. Each gvisor twin runs the
 * same body through runsc.
 */
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "gvisor/common.h"

static void expect_clean(const struct test_run *r)
{
        char why[512];
        cr_expect(gv_no_state_of(r->pid, why, sizeof(why)), "gVisor state left: %s", why);
}

#define PROBE(...) ((const char *const[]){"/probe", __VA_ARGS__, NULL})

/* The host's secrets and private directories are not in the sandbox at
 * all; its /etc is psrun's, not the host's. */
BOTH_BACKENDS(hostile, host_paths_out_of_reach)
{
        static const char *const absent[] = {"/etc/shadow", "/root",    "/home",       "/var",
                                             "/run",        "/etc/ssh", "/etc/sudoers"};
        for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++) {
                struct test_run r;
                gv_run(&r, backend, NULL, PROBE("exists", absent[i]));
                cr_expect_eq(r.status, 1, "%s: %s is visible (%s)", backend, absent[i], r.out);
                cr_expect(strstr(r.out, "ENOENT"), "%s: %s: %s", backend, absent[i], r.out);
                expect_clean(&r);
                test_run_free(&r);
        }
        /* /etc/passwd is the synthesized one: no host user in it. */
        struct test_run r;
        static const char *const cat[] = {"/bin/cat", "/etc/passwd", "/etc/hostname", NULL};
        gv_run(&r, backend, NULL, cat);
        cr_expect_eq(r.status, 0, "%s", r.err);
        cr_expect(strstr(r.out, "sandbox:x:1000:1000:"), "%s", r.out);
        cr_expect(!strstr(r.out, "daemon:") && !strstr(r.out, "www-data"), "host users: %s", r.out);
        cr_expect(strstr(r.out, "\nsandbox\n"), "hostname file: %s", r.out);
        test_run_free(&r);
}

/* Only /workspace and /tmp are writable; the host's /usr is read-only. */
BOTH_BACKENDS(hostile, usr_is_read_only)
{
        struct test_run r;
        gv_run(&r, backend, NULL, PROBE("write", "/usr/bin/psrun-planted"));
        cr_expect_eq(r.status, 1, "%s: wrote into /usr: %s", backend, r.out);
        cr_expect(strstr(r.out, "EROFS") || strstr(r.out, "EACCES"), "%s", r.out);
        test_run_free(&r);
        struct stat st;
        cr_expect(stat("/usr/bin/psrun-planted", &st) < 0, "the file reached the host");

        static const char *const ok[] = {"/bin/sh", "-c",
                                         "echo a > /workspace/a && echo b > /tmp/b && cat "
                                         "/workspace/a /tmp/b",
                                         NULL};
        gv_run(&r, backend, NULL, ok);
        cr_expect_eq(r.status, 0, "%s: %s", backend, r.err);
        cr_expect_str_eq(r.out, "a\nb\n");
        test_run_free(&r);
}

/* uid/gid 1000, no capabilities, psrun's environment, /workspace as cwd. */
BOTH_BACKENDS(identity, user_env_cwd)
{
        struct test_run r;
        gv_run(&r, backend, NULL, PROBE("status"));
        cr_expect_eq(r.status, 0, "%s", r.err);
        cr_expect(strstr(r.out, "Uid:\t1000\t1000\t1000\t1000"), "%s", r.out);
        cr_expect(strstr(r.out, "Gid:\t1000\t1000\t1000\t1000"), "%s", r.out);
        cr_expect(strstr(r.out, "CapEff:\t0000000000000000"), "%s", r.out);
        cr_expect(strstr(r.out, "CapBnd:\t0000000000000000"), "%s", r.out);
        test_run_free(&r);

        static const char *const extra[] = {"-o", "env={FOO: bar}", NULL};
        gv_run(&r, backend, extra, PROBE("env"));
        /* The same variables and nothing else (gVisor may order them
         * differently). */
        static const char *const vars[] = {
                "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin\n",
                "HOME=/workspace\n", "LANG=C.UTF-8\n", "FOO=bar\n"};
        size_t len = 0;
        for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
                cr_expect(strstr(r.out, vars[i]), "%s: %s missing: %s", backend, vars[i], r.out);
                len += strlen(vars[i]);
        }
        cr_expect_eq(strlen(r.out), len, "%s: more in the environment: %s", backend, r.out);
        test_run_free(&r);

        static const char *const wd[] = {"-o", "workdir=/workspace/deep/er", NULL};
        gv_run(&r, backend, wd, PROBE("cwd"));
        cr_expect_str_eq(r.out, "/workspace/deep/er\n", "%s: %s", backend, r.err);
        test_run_free(&r);

        static const char *const host[] = {"-o", "hostname=box-1", NULL};
        static const char *const name[] = {"/bin/hostname", NULL};
        gv_run(&r, backend, host, name);
        cr_expect_str_eq(r.out, "box-1\n", "%s", r.err);
        test_run_free(&r);
}

/* The result names the backend and carries the command's status. */
BOTH_BACKENDS(results, exit_codes)
{
        struct test_run r;
        gv_run(&r, backend, NULL, PROBE("exit", "7"));
        cr_expect_eq(r.status, 7);
        gv_expect_reason(&r, "exited");
        char want[32];
        snprintf(want, sizeof(want), "\"%s\"", backend);
        cr_expect_str_eq(gv_field(&r, "backend"), want, "%s", r.result);
        test_run_free(&r);

        static const char *const missing[] = {"no-such-command", NULL};
        gv_run(&r, backend, NULL, missing);
        cr_expect_eq(r.status, 127, "%s: %s", backend, r.err);
        gv_expect_reason(&r, "setup_error");
        test_run_free(&r);

        static const char *const zero[] = {"/bin/sh", "-c", "exit 0", NULL};
        gv_run(&r, backend, NULL, zero);
        cr_expect_eq(r.status, 0);
        gv_expect_reason(&r, "exited");
        expect_clean(&r);
        test_run_free(&r);
}

/* The wall clock kills the whole tree, a detached grandchild included. */
BOTH_BACKENDS(limits, timeout_kills_the_tree)
{
        struct test_run r;
        static const char *const extra[] = {"-o", "timeout=1s", NULL};
        static const char *const cmd[] = {"/bin/sh", "-c", "/probe daemon; exec /probe sleep 60",
                                          NULL};
        gv_run(&r, backend, extra, cmd);
        gv_expect_reason(&r, "timeout");
        cr_expect_eq(r.status, 137, "%s", r.result);
        cr_expect_str_eq(gv_field(&r, "signal"), "9");
        long wall = atol(gv_field(&r, "wall_ms"));
        cr_expect(wall >= 1000 && wall < 10000, "wall %ld ms", wall);
        /* test_run_psrun checked that the cgroup is gone: nothing lives. */
        expect_clean(&r);
        test_run_free(&r);
}

/* Memory over the limit ends in the kernel's OOM kill, reported as such. */
BOTH_BACKENDS(limits, memory_limit_is_oom)
{
        struct test_run r;
        static const char *const extra[] = {"-o", "memory_limit=128M", NULL};
        gv_run(&r, backend, extra, PROBE("hog", "600M"));
        gv_expect_reason(&r, "oom");
        cr_expect_eq(r.status, 137, "%s", r.result);
        test_run_free(&r);
}

/* A fork bomb stops at the pids limit, with reason pids. */
BOTH_BACKENDS(limits, fork_bomb_is_pids)
{
        struct test_run r;
        static const char *const extra[] = {"-o", "pids_limit=32", "-o", "timeout=30s", NULL};
        gv_run(&r, backend, extra, PROBE("forkbomb"));
        gv_expect_reason(&r, "pids");
        cr_expect_neq(r.status, 0);
        test_run_free(&r);
}

/* /workspace is disk_limit big. */
BOTH_BACKENDS(limits, workspace_is_disk_limit)
{
        struct test_run r;
        static const char *const extra[] = {"-o", "disk_limit=8M", NULL};
        gv_run(&r, backend, extra, PROBE("fill", "/workspace/big"));
        cr_expect_eq(r.status, 1);
        unsigned long long n = 0;
        cr_expect_eq(sscanf(r.out, "ENOSPC %llu", &n), 1, "%s", r.out);
        cr_expect(n > 6ULL << 20 && n <= 8ULL << 20, "%llu bytes", n);
        test_run_free(&r);
}

/* network: none leaves only the loopback interface. */
BOTH_BACKENDS(network, none_is_loopback_only)
{
        struct test_run r;
        gv_run(&r, backend, NULL, PROBE("ifaces"));
        cr_expect_eq(r.status, 0, "%s", r.err);
        cr_expect_str_eq(r.out, "lo\n", "%s", backend);
        test_run_free(&r);
}

/* stdout as a regular file: the command's output lands after what the
 * file held, and what the caller writes next lands after the command's. */
BOTH_BACKENDS(results, stdout_file_offset)
{
        test_require_root();
        char path[64];
        test_tmp_template(path, sizeof(path), "psrun-gv-out");
        int fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        cr_assert_eq(write(fd, "before\n", 7), 7);
        char be[32];
        snprintf(be, sizeof(be), "backend=%s", backend);
        pid_t pid = fork();
        if (pid == 0) {
                dup2(fd, 1);
                execl(test_psrun_path(), "psrun", "run", "-o", be, "--", "/bin/echo", "inside",
                      (char *) NULL);
                _exit(127);
        }
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0);
        cr_assert_eq(write(fd, "after\n", 6), 6);
        close(fd);
        char buf[128] = "";
        FILE *f = fopen(path, "re");
        cr_assert_not_null(f);
        size_t n = fread(buf, 1, sizeof(buf) - 1, f);
        buf[n] = '\0';
        fclose(f);
        unlink(path);
        cr_expect_str_eq(buf, "before\ninside\nafter\n", "%s", backend);
}
