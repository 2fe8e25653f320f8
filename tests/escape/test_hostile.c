/* SPDX-License-Identifier: MIT */
/* Hostile programs: each must be contained, reported with the right reason,
 * and leave nothing behind. */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "integration/common.h"

TestSuite(hostile, .init = test_require_root_or_rootless);

/* Rootless (the second runner) with no delegated cgroup, an asked limit
 * is refused at start (docs/rootless.md): skipped, saying so. Where the
 * user has a delegated subtree the test runs as root's. */
static void skip_rootless_without_cgroup(const struct test_run *r)
{
        if (test_rootless() && r->status == 125 && strstr(r->err, "needs a cgroup"))
                cr_skip_test("rootless: this limit needs a cgroup and this user has no delegated "
                             "cgroup v2 subtree: %s",
                             r->err);
}

/* Whether the run's limits were held by a cgroup (root's always are). */
static bool limits_in_cgroup(const struct test_run *r)
{
        return !test_rootless() || strstr(r->result, "\"cpu\":\"cgroup\"");
}

Test(hostile, fork_bomb_hits_pids_limit)
{
        struct test_run r;
        const char *const opts[] = {"-o", "pids_limit=32", "-o", "timeout=20", NULL};
        run_probe(&r, opts, "forkbomb", NULL);
        skip_rootless_without_cgroup(&r);
        cr_expect_str_eq(r.out, "EAGAIN\n", "%s", r.err);
        cr_expect_eq(r.status, 1);
        expect_reason(&r, "pids");
        test_run_free(&r);
}

Test(hostile, memory_hog_is_oom_killed)
{
        struct test_run r;
        const char *const opts[] = {"-o", "memory_limit=32M", NULL};
        run_probe(&r, opts, "hog", "256");
        skip_rootless_without_cgroup(&r);
        cr_expect_eq(r.status, 137, "stdout %s stderr %s", r.out, r.err);
        cr_expect_str_eq(field(&r, "signal"), "9");
        expect_reason(&r, "oom");
        cr_expect(atoll(field(&r, "peak_memory_bytes")) >= (24LL << 20), "%s", r.result);
        test_run_free(&r);
}

Test(hostile, infinite_loop_times_out)
{
        struct test_run r;
        const char *const opts[] = {"-o", "timeout=1", NULL};
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        run_probe(&r, opts, "spin", NULL);
        clock_gettime(CLOCK_MONOTONIC, &b);
        double secs = (double) (b.tv_sec - a.tv_sec) + (double) (b.tv_nsec - a.tv_nsec) / 1e9;
        expect_reason(&r, "timeout");
        cr_expect_eq(r.status, 137);
        cr_expect(secs < 2.0, "took %.2f s for a 1 s timeout", secs);
        long wall = atol(field(&r, "wall_ms"));
        cr_expect(wall >= 1000 && wall < 2000, "wall_ms %ld", wall);
        /* Accounted, not exact: the machine may be busy with other tests.
         * Without a cgroup (rootless, no delegated subtree) there is no
         * account: cpu_ms is 0, as docs/rootless.md says. */
        if (limits_in_cgroup(&r))
                cr_expect(atol(field(&r, "cpu_ms")) > 100, "a spinning second should use cpu: %s",
                          r.result);
        else
                cr_expect_eq(atol(field(&r, "cpu_ms")), 0, "%s", r.result);
        test_run_free(&r);
}

Test(hostile, timeout_kills_detached_tree)
{
        /* A shell that backgrounds a setsid'd sleeper and then loops: all of
         * it must go at the timeout. */
        struct test_run r;
        const char *const argv[] = {"run",
                                    "-o",
                                    "timeout=1",
                                    "--",
                                    "/bin/sh",
                                    "-c",
                                    "setsid sleep 1000 & while :; do :; done",
                                    NULL};
        test_run_psrun(&r, argv);
        expect_reason(&r, "timeout");
        test_run_free(&r);
}

static void expect_denied(const char *syscall_name)
{
        struct test_run r;
        run_probe(&r, NULL, "syscall", syscall_name);
        cr_expect_str_eq(r.out, "EPERM\n", "%s: %s %s", syscall_name, r.out, r.err);
        cr_expect_eq(r.status, 1, "%s", syscall_name);
        test_run_free(&r);
}

Test(hostile, denied_syscalls_fail_with_eperm)
{
        static const char *const denied[] = {
                "unshare-user", "unshare-net", "mount",           "bpf",
                "keyctl",       "ptrace",      "perf_event_open", "io_uring_setup",
                "userfaultfd",  "init_module", "setns",           "chroot",
        };
        for (size_t i = 0; i < sizeof(denied) / sizeof(*denied); i++)
                expect_denied(denied[i]);

        struct test_run r;
        run_probe(&r, NULL, "syscall", "getpid");
        cr_expect_str_eq(r.out, "ok\n");
        test_run_free(&r);
}

Test(hostile, foreign_abi_denied)
{
        /* i386 syscalls from a 64-bit process: denied by seccomp where the
         * kernel has IA32 emulation; where it has none they fault anyway. */
        char cmd[4200];
        snprintf(cmd, sizeof(cmd), "%s syscall int80", test_helper_path("probe"));
        FILE *p = popen(cmd, "r");
        cr_assert_not_null(p);
        char host[64] = "";
        if (!fgets(host, sizeof(host), p))
                host[0] = '\0';
        pclose(p);

        struct test_run r;
        run_probe(&r, NULL, "syscall", "int80");
        if (strcmp(host, "NOABI\n") == 0) {
                cr_expect_str_eq(r.out, "NOABI\n");
                test_run_free(&r);
                cr_skip_test("int $0x80 faults outside the sandbox too (no usable IA32 "
                             "emulation); seccomp/* checks the i386 rules in the BPF itself");
        } else {
                cr_expect_str_eq(host, "ok\n", "outside the sandbox int80 should work");
                cr_expect_str_eq(r.out, "EPERM\n", "%s", r.err);
        }
        test_run_free(&r);
}

static bool sandbox_started(pid_t psrun, char *why, size_t why_len)
{
        if (!test_no_cgroup_leftovers_of(psrun, why, why_len))
                return true;
        if (!test_rootless())
                return false;
        char path[64], buf[64] = "";
        snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int) psrun, (int) psrun);
        FILE *f = fopen(path, "re");
        if (f) {
                if (!fgets(buf, sizeof(buf), f))
                        buf[0] = '\0';
                fclose(f);
        }
        return buf[0] >= '1' && buf[0] <= '9';
}

Test(hostile, killing_psrun_kills_the_sandbox)
{
        /* psrun is SIGKILLed mid-run: the sandbox dies with it (parent-death
         * signal on pid 1), and the next psrun removes its cgroup. */
        char mount[4200];
        snprintf(mount, sizeof(mount), "mounts=%s:/probe:ro", test_helper_path("probe"));
        int out[2];
        cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                dup2(out[1], 1);
                execl(test_psrun_path(), "psrun", "run", "-o", mount, "--", "/probe", "sleep",
                      "600", (char *) NULL);
                _exit(127);
        }
        close(out[1]);
        /* Wait until the sandbox is running: its cgroup exists (rootless,
         * without one: psrun has its child, the sandbox's init). */
        char why[4200];
        for (int i = 0; i < 500 && !sandbox_started(pid, why, sizeof(why)); i++)
                usleep(10000);
        cr_assert(sandbox_started(pid, why, sizeof(why)), "sandbox never started");
        usleep(100000);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);

        /* The stdout pipe closes when the last sandbox process is gone. */
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        char buf[64];
        while (read(out[0], buf, sizeof(buf)) > 0)
                ;
        clock_gettime(CLOCK_MONOTONIC, &b);
        close(out[0]);
        cr_expect(b.tv_sec - a.tv_sec < 5, "sandbox outlived psrun");

        /* The cgroup of the dead run is left until the next run (or gc);
         * a run of a concurrent test may be that next run. */
        const char *const next[] = {"run", "--", "/bin/true", NULL};
        struct test_run r;
        test_run_psrun(&r, next);
        cr_expect_eq(r.status, 0, "%s", r.err);
        cr_expect(test_no_cgroup_leftovers_of(pid, why, sizeof(why)), "after a run: %s", why);
        test_run_free(&r);
        /* Rootless: an OCI root of the user's own (root's is not theirs). */
        char oci_root[64];
        test_tmp_template(oci_root, sizeof(oci_root), "psrun-escape-oci");
        cr_assert(mkdtemp(oci_root));
        const char *const gc[] = {"--root", oci_root, "gc", NULL};
        test_run_psrun(&r, gc);
        cr_expect_eq(r.status, 0, "%s", r.err);
        test_run_free(&r);
        rmdir(oci_root);
}

static void expect_probe(const char *const *opts, const char *cmd, const char *arg,
                         const char *want)
{
        struct test_run r;
        run_probe(&r, opts, cmd, arg);
        cr_expect_str_eq(r.out, want, "%s %s: %s", cmd, arg ? arg : "", r.err);
        test_run_free(&r);
}

Test(hostile, pid1_is_out_of_reach)
{
        /* The sandbox's init holds the namespaces: the command may not signal,
         * trace or read it, whether it runs as 1000 or as root inside. */
        static const char *const as_user[] = {NULL};
        static const char *const as_root[] = {"-o", "user=root", NULL};
        const char *const *who[] = {as_user, as_root};
        for (size_t i = 0; i < 2; i++) {
                expect_probe(who[i], "openrw", "/proc/1/mem", "EACCES\n");
                expect_probe(who[i], "openrw", "/proc/1/environ", "EACCES\n");
                expect_probe(who[i], "exists", "/proc/1/root/", "EACCES\n");
                expect_probe(who[i], "exists", "/proc/1/cwd/", "EACCES\n");
        }
        expect_probe(as_user, "signal", "1", "EPERM\n");

        /* Even where the command may send to pid 1, pid 1 of a pid namespace
         * ignores SIGKILL from inside: the sandbox lives on to report. */
        struct test_run r;
        char mount[4200];
        snprintf(mount, sizeof(mount), "mounts=%s:/probe:ro", test_helper_path("probe"));
        const char *const argv[] = {
                "run", "-o",     mount,    "-o", "user=root", "-o", "landlock=off",
                "--",  "/probe", "signal", "1",  "9",         NULL};
        test_run_psrun(&r, argv);
        cr_expect_eq(r.status, 0, "%s", r.err);
        expect_reason(&r, "exited");
        test_run_free(&r);
}

Test(hostile, no_device_nodes_or_raw_sockets)
{
        expect_probe(NULL, "mknod", "/tmp/mem", "EPERM\n");
        expect_probe(NULL, "socket", "packet", "EPERM\n");
        expect_probe(NULL, "socket", "vsock", "EPERM\n");
        expect_probe(NULL, "socket", "inet", "ok\n");
        /* The device nodes that are there are the harmless ones. */
        expect_probe(NULL, "exists", "/dev/mem", "ENOENT\n");
        expect_probe(NULL, "exists", "/dev/kmsg", "ENOENT\n");
        expect_probe(NULL, "exists", "/sys/kernel", "ENOENT\n");
}

static int count_lines(const char *path)
{
        FILE *f = fopen(path, "re");
        cr_assert_not_null(f);
        int n = 0, c;
        while ((c = fgetc(f)) != EOF)
                n += c == '\n';
        fclose(f);
        return n;
}

Test(hostile, host_mount_table_untouched)
{
        /* Everything psrun mounts lives in the sandbox's own mount namespace,
         * made private before the first mount: nothing may appear on the
         * host, not even while the sandbox runs. */
        int before = count_lines("/proc/self/mountinfo");
        struct test_run r;
        const char *const argv[] = {"run",
                                    "-o",
                                    "readonly_rootfs=false",
                                    "--",
                                    "/bin/sh",
                                    "-c",
                                    "cat /proc/self/mountinfo | wc -l",
                                    NULL};
        test_run_psrun(&r, argv);
        cr_expect_eq(r.status, 0, "%s", r.err);
        cr_expect_gt(atoi(r.out), 10, "the sandbox should have its own mounts: %s", r.out);
        test_run_free(&r);
        cr_expect_eq(count_lines("/proc/self/mountinfo"), before, "host mount table changed");
}
