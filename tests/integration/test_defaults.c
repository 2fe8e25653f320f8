/* SPDX-License-Identifier: MIT */
/* Each default of DESIGN.md's table, observed from inside the sandbox. */
#include <dirent.h>
#include <unistd.h>

#include "integration/common.h"
#include "policy/apparmor.h"

TestSuite(defaults, .init = test_require_root);

Test(defaults, identity_and_capabilities)
{
        struct test_run r;
        run_probe(&r, NULL, "status", NULL);
        cr_assert_eq(r.status, 0, "stderr: %s", r.err);
        cr_expect(strstr(r.out, "Uid:\t1000\t1000\t1000\t1000"), "%s", r.out);
        cr_expect(strstr(r.out, "Gid:\t1000\t1000\t1000\t1000"), "%s", r.out);
        cr_expect(strstr(r.out, "CapInh:\t0000000000000000"), "%s", r.out);
        cr_expect(strstr(r.out, "CapPrm:\t0000000000000000"), "%s", r.out);
        cr_expect(strstr(r.out, "CapEff:\t0000000000000000"), "%s", r.out);
        cr_expect(strstr(r.out, "CapBnd:\t0000000000000000"), "%s", r.out);
        cr_expect(strstr(r.out, "CapAmb:\t0000000000000000"), "%s", r.out);
        cr_expect(strstr(r.out, "NoNewPrivs:\t1"), "%s", r.out);
        cr_expect(strstr(r.out, "Seccomp:\t2"), "%s", r.out);
        expect_reason(&r, "exited");
        test_run_free(&r);
}

Test(defaults, root_is_read_only)
{
        static const char *const paths[] = {"/usr/psrun-test", "/etc/psrun-test", "/psrun-test",
                                            "/bin/psrun-test"};
        for (size_t i = 0; i < sizeof(paths) / sizeof(*paths); i++) {
                struct test_run r;
                run_probe(&r, NULL, "write", paths[i]);
                cr_expect_eq(r.status, 1, "%s: %s", paths[i], r.out);
                cr_expect_str_eq(r.out, "EROFS\n", "%s", paths[i]);
                test_run_free(&r);
        }
}

Test(defaults, workspace_is_home_cwd_and_writable)
{
        struct test_run r;
        run_probe(&r, NULL, "write", "/workspace/file");
        cr_expect_str_eq(r.out, "ok\n");
        test_run_free(&r);

        run_probe(&r, NULL, "cwd", NULL);
        cr_expect_str_eq(r.out, "/workspace\n");
        test_run_free(&r);

        run_probe(&r, NULL, "write", "/tmp/file");
        cr_expect_str_eq(r.out, "ok\n");
        test_run_free(&r);
}

Test(defaults, workspace_size_is_disk_limit)
{
        struct test_run r;
        const char *const opts[] = {"-o", "disk_limit=8M", NULL};
        run_probe(&r, opts, "fill", "/workspace/big");
        unsigned long long bytes = 0;
        char name[32] = "";
        cr_assert_eq(sscanf(r.out, "%31s %llu", name, &bytes), 2, "%s", r.out);
        cr_expect_str_eq(name, "ENOSPC");
        cr_expect(bytes > (7ULL << 20) && bytes <= (8ULL << 20), "wrote %llu", bytes);
        expect_reason(&r, "exited");
        test_run_free(&r);
}

Test(defaults, full_tmp_says_enospc_not_oom)
{
        /* /tmp is a quarter of the memory limit: it fills before memory does. */
        struct test_run r;
        const char *const opts[] = {"-o", "memory_limit=64M", NULL};
        run_probe(&r, opts, "fill", "/tmp/big");
        cr_expect(strncmp(r.out, "ENOSPC ", 7) == 0, "%s", r.out);
        cr_expect_eq(r.status, 1);
        expect_reason(&r, "exited");
        test_run_free(&r);
}

Test(defaults, host_secrets_absent)
{
        static const char *const paths[] = {"/etc/shadow", "/root",    "/home",     "/var",
                                            "/run",        "/etc/ssh", "/.oldroot", "/.dockerenv"};
        for (size_t i = 0; i < sizeof(paths) / sizeof(*paths); i++) {
                struct test_run r;
                run_probe(&r, NULL, "exists", paths[i]);
                cr_expect_str_eq(r.out, "ENOENT\n", "%s: %s", paths[i], r.out);
                test_run_free(&r);
        }
}

/* A masked /proc file reads as empty; where the host kernel has no such file
 * (e.g. built without CONFIG_PROC_KCORE) it is absent inside too. Where the
 * host has AppArmor, psrun-default may refuse the open before the mask is
 * even reached. */
static void expect_masked(const char *path)
{
        struct test_run r;
        run_probe(&r, NULL, "read", path);
        const char *want = access(path, F_OK) == 0 ? "0\n" : "ENOENT\n";
        if (!(apparmor_enabled() && strcmp(r.out, "EACCES\n") == 0))
                cr_expect_str_eq(r.out, want, "%s: %s", path, r.out);
        test_run_free(&r);
}

static void expect_read_only(const char *path)
{
        struct test_run r;
        run_probe(&r, NULL, "write", path);
        const char *want = access(path, F_OK) == 0 ? "EROFS\n" : "ENOENT\n";
        cr_expect_str_eq(r.out, want, "%s: %s", path, r.out);
        test_run_free(&r);
}

Test(defaults, proc_masked_and_read_only)
{
        expect_masked("/proc/kcore");
        expect_masked("/proc/keys");
        expect_masked("/proc/timer_list");
        expect_read_only("/proc/sys/kernel/hostname");
        expect_read_only("/proc/sysrq-trigger");
        cr_expect_eq(access("/proc/sys/kernel/hostname", F_OK), 0, "host lacks /proc/sys?");
}

/* A policy that binds the host's /sys gets psrun's /sys masks over it:
 * /sys/firmware (ACPI tables, DMI serials, EFI variables) is an empty
 * mask, not the host's. */
Test(defaults, a_bind_of_the_hosts_sys_is_masked)
{
        DIR *d = opendir("/sys/firmware");
        size_t host_entries = 0;
        for (struct dirent *e; d && (e = readdir(d));)
                host_entries += e->d_name[0] != '.';
        if (d)
                closedir(d);
        if (host_entries == 0)
                cr_skip_test("this host's /sys/firmware is empty: a mask would look the same");
        const char *argv[] = {"run",
                              "-o",
                              "mounts=[/sys:/sys:ro]",
                              "--",
                              "/bin/sh",
                              "-c",
                              "ls -A /sys/firmware; echo --; ls /sys/class",
                              NULL};
        struct test_run r;
        test_run_psrun(&r, argv);
        cr_assert_eq(r.status, 0, "stderr: %s", r.err);
        /* The bind is there (/sys/class listed), the mask empty. */
        cr_expect(strncmp(r.out, "--\n", 3) == 0, "/sys/firmware is the host's: %s", r.out);
        cr_expect(strstr(r.out, "\nnet\n"), "no host /sys/class: %s", r.out);
        test_run_free(&r);
}

/* The command sees its own cgroups as the root of every hierarchy: its
 * cgroup namespace was made only once psrun had put it in all of them
 * (the v1 ones after the clone, while the child built its root:
 * runtime/launch.c cgroupns_when_confined), and its quota still holds. */
Test(defaults, cgroup_namespace_root_is_the_sandboxs_cgroup_in_every_hierarchy)
{
        /* The quota too: capped as every other kind of namespace is. */
        const char *argv[] = {"run",
                              "-o",
                              "namespace_limit=3",
                              "--",
                              "cat",
                              "/proc/sys/user/max_cgroup_namespaces",
                              "/proc/self/cgroup",
                              NULL};
        struct test_run r;
        test_run_psrun(&r, argv);
        cr_assert_eq(r.status, 0, "stderr: %s", r.err);
        cr_assert_eq(strncmp(r.out, "3\n", 2), 0, "max_cgroup_namespaces: %s", r.out);
        int lines = 0;
        for (char *l = r.out + 2; *l; lines++) {
                char *end = strchr(l, '\n');
                cr_assert(end, "unterminated line: %s", l);
                cr_expect(end - l >= 2 && end[-1] == '/' && end[-2] == ':',
                          "not the namespace's root: %.*s\n(all: %s)", (int) (end - l), l, r.out);
                l = end + 1;
        }
        cr_expect_gt(lines, 0, "no /proc/self/cgroup lines");
        test_run_free(&r);
}

Test(defaults, only_loopback)
{
        struct test_run r;
        run_probe(&r, NULL, "ifaces", NULL);
        cr_expect_str_eq(r.out, "lo\n");
        test_run_free(&r);
}

Test(defaults, clean_environment)
{
        setenv("PSRUN_TEST_SECRET", "hunter2", 1);
        setenv("PSRUN_TEST_PASS", "passed-through", 1);
        struct test_run r;
        const char *const opts[] = {"-o", "env={FOO: bar, PSRUN_TEST_PASS: null}", NULL};
        run_probe(&r, opts, "env", NULL);
        cr_expect(strstr(r.out, "PATH=/usr/local/sbin:"), "%s", r.out);
        cr_expect(strstr(r.out, "HOME=/workspace\n"), "%s", r.out);
        cr_expect(strstr(r.out, "LANG=C.UTF-8\n"), "%s", r.out);
        cr_expect(strstr(r.out, "FOO=bar\n"), "%s", r.out);
        cr_expect(strstr(r.out, "PSRUN_TEST_PASS=passed-through\n"), "%s", r.out);
        cr_expect(!strstr(r.out, "hunter2"), "host env leaked: %s", r.out);
        int lines = 0;
        for (const char *p = r.out; *p; p++)
                lines += *p == '\n';
        cr_expect_eq(lines, 5, "%s", r.out);
        test_run_free(&r);
}

Test(defaults, no_host_fds)
{
        /* The harness gives psrun fd 3 (the result pipe); it must not arrive. */
        struct test_run r;
        run_probe(&r, NULL, "fds", NULL);
        cr_expect_str_eq(r.out, "0 1 2\n");
        test_run_free(&r);
}

Test(defaults, exit_codes_and_result)
{
        struct test_run r;
        run_probe(&r, NULL, "exit", "3");
        cr_expect_eq(r.status, 3);
        cr_expect_str_eq(field(&r, "exit_code"), "3");
        cr_expect_str_eq(field(&r, "signal"), "null");
        expect_reason(&r, "exited");
        cr_expect_neq(strcmp(field(&r, "wall_ms"), "(missing)"), 0);
        cr_expect_neq(strcmp(field(&r, "cpu_ms"), "(missing)"), 0);
        cr_expect(atoll(field(&r, "peak_memory_bytes")) > 0, "%s", r.result);
        test_run_free(&r);

        run_probe(&r, NULL, "kill", "9");
        cr_expect_eq(r.status, 137);
        cr_expect_str_eq(field(&r, "signal"), "9");
        expect_reason(&r, "signaled");
        test_run_free(&r);
}

Test(defaults, background_processes_die_with_the_command)
{
        struct test_run r;
        run_probe(&r, NULL, "daemon", NULL);
        cr_expect_eq(r.status, 0, "%s", r.err);
        /* test_run_psrun checked that the cgroup is gone, so nothing is left. */
        test_run_free(&r);
}
