/* SPDX-License-Identifier: MIT */
/* Policy knobs, observed from inside the sandbox. */
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <sys/stat.h>
#include <unistd.h>

#include "integration/common.h"
#include "policy/apparmor.h"

TestSuite(knobs, .init = test_require_root);

Test(knobs, user_root_is_root_only_inside)
{
        struct test_run r;
        const char *const opts[] = {"-o", "user=root", NULL};
        run_probe(&r, opts, "status", NULL);
        cr_expect(strstr(r.out, "Uid:\t0\t0\t0\t0"), "%s", r.out);
        cr_expect(strstr(r.out, "CapEff:\t0000000000000000"), "%s", r.out);
        test_run_free(&r);

        /* Root inside cannot write what host root owns, even where mounted rw. */
        char dir[64];
        test_tmp_template(dir, sizeof(dir), "psrun-test");
        cr_assert_not_null(mkdtemp(dir));
        chmod(dir, 0755);
        char mount[256], target[300];
        snprintf(mount, sizeof(mount), "mounts=%s:/data:rw", dir);
        const char *const opts2[] = {"-o", "user=root", "-o", mount, NULL};
        snprintf(target, sizeof(target), "/data/x");
        run_probe(&r, opts2, "write", target);
        cr_expect_str_eq(r.out, "EACCES\n", "%s", r.err);
        test_run_free(&r);
        rmdir(dir);
}

Test(knobs, user_numeric)
{
        struct test_run r;
        const char *const opts[] = {"-o", "user=4242:4343", NULL};
        run_probe(&r, opts, "status", NULL);
        cr_expect(strstr(r.out, "Uid:\t4242\t4242\t4242\t4242"), "%s", r.out);
        cr_expect(strstr(r.out, "Gid:\t4343\t4343\t4343\t4343"), "%s", r.out);
        test_run_free(&r);
}

Test(knobs, read_write_and_read_only_mounts)
{
        char dir[64];
        test_tmp_template(dir, sizeof(dir), "psrun-test");
        cr_assert_not_null(mkdtemp(dir));
        chmod(dir, 0777); /* the sandbox's uid is an unprivileged host uid */
        char rw[300], ro[300], file[300];
        snprintf(rw, sizeof(rw), "mounts=[{source: %s, target: /workspace/out, readonly: false}]",
                 dir);
        snprintf(ro, sizeof(ro), "mounts=%s:/data:ro", dir);

        struct test_run r;
        const char *const opts_rw[] = {"-o", rw, NULL};
        run_probe(&r, opts_rw, "write", "/workspace/out/result.txt");
        cr_expect_str_eq(r.out, "ok\n", "%s", r.err);
        test_run_free(&r);
        snprintf(file, sizeof(file), "%s/result.txt", dir);
        cr_expect_eq(access(file, F_OK), 0, "the write did not reach the host dir");

        const char *const opts_ro[] = {"-o", ro, NULL};
        run_probe(&r, opts_ro, "write", "/data/other.txt");
        cr_expect_str_eq(r.out, "EROFS\n", "%s", r.err);
        test_run_free(&r);

        unlink(file);
        rmdir(dir);
}

Test(knobs, writable_root_stays_in_the_sandbox)
{
        struct test_run r;
        const char *const opts[] = {"-o", "readonly_rootfs=false", "-o", "user=root", NULL};
        run_probe(&r, opts, "write", "/etc/psrun-test-file");
        cr_expect_str_eq(r.out, "ok\n", "%s", r.err);
        test_run_free(&r);
        run_probe(&r, opts, "write", "/usr/psrun-test-file");
        cr_expect_str_eq(r.out, "ok\n", "%s", r.err);
        test_run_free(&r);
        cr_expect_neq(access("/usr/psrun-test-file", F_OK), 0, "a sandbox wrote to the host /usr");
        cr_expect_neq(access("/etc/psrun-test-file", F_OK), 0, "a sandbox wrote to the host /etc");
}

Test(knobs, cpu_limit_throttles)
{
        /* Half a CPU for ~1.5 s of spinning: cpu time ≈ half the wall time. */
        struct test_run r;
        const char *const opts[] = {"-o", "cpu_limit=0.5", "-o", "timeout=1.5", NULL};
        run_probe(&r, opts, "spin", NULL);
        expect_reason(&r, "timeout");
        double cpu = atof(field(&r, "cpu_ms")), wall = atof(field(&r, "wall_ms"));
        cr_expect(cpu > 0.3 * wall && cpu < 0.7 * wall, "cpu %.0f ms in %.0f ms", cpu, wall);
        test_run_free(&r);
}

Test(knobs, policy_file_and_option_order)
{
        char path[64];
        test_tmp_template(path, sizeof(path), "psrun-policy");
        int fd = mkstemp(path);
        cr_assert_geq(fd, 0);
        const char *yaml = "# a policy\n"
                           "memory_limit: 256M\n"
                           "timeout: 30\n"
                           "env:\n"
                           "  GREETING: from-file\n"
                           "workdir: /tmp\n";
        cr_assert_eq(write(fd, yaml, strlen(yaml)), (ssize_t) strlen(yaml));
        close(fd);

        struct test_run r;
        const char *const opts[] = {"--policy", path, "-o", "env={GREETING: from-option}", NULL};
        run_probe(&r, opts, "env", NULL);
        cr_expect(strstr(r.out, "GREETING=from-option\n"), "%s %s", r.out, r.err);
        test_run_free(&r);

        const char *const opts2[] = {"--policy", path, NULL};
        run_probe(&r, opts2, "cwd", NULL);
        cr_expect_str_eq(r.out, "/tmp\n", "%s", r.err);
        test_run_free(&r);
        unlink(path);
}

Test(knobs, hostname)
{
        struct test_run r;
        const char *const argv[] = {"run", "-o",       "hostname=agent-7",
                                    "--",  "/bin/cat", "/proc/sys/kernel/hostname",
                                    NULL};
        test_run_psrun(&r, argv);
        cr_expect_str_eq(r.out, "agent-7\n", "%s", r.err);
        test_run_free(&r);
}

Test(knobs, python_runs)
{
        if (access("/usr/bin/python3", X_OK) != 0)
                cr_skip_test("no /usr/bin/python3 on this host");
        struct test_run r;
        const char *const argv[] = {
                "run",
                "--",
                "python3",
                "-c",
                "import os, json; print(json.dumps([os.getuid(), os.getcwd()]))",
                NULL};
        test_run_psrun(&r, argv);
        cr_expect_str_eq(r.out, "[1000, \"/workspace\"]\n", "%s", r.err);
        test_run_free(&r);
}

Test(knobs, apparmor_layer)
{
        struct test_run r;
        const char *const argv[] = {"run", "-o",       "apparmor=required",
                                    "--",  "/bin/cat", "/proc/self/attr/current",
                                    NULL};
        test_run_psrun(&r, argv);
        if (apparmor_enabled()) {
                cr_expect_eq(r.status, 0, "%s", r.err);
                cr_expect(strstr(r.out, "psrun-default"), "not confined: %s", r.out);
        } else {
                /* Fails closed when the policy requires it and the host lacks it. */
                cr_expect_eq(r.status, 125);
                cr_expect(strstr(r.err, "apparmor: required by the policy"), "%s", r.err);
        }
        test_run_free(&r);

        const char *const off[] = {"run", "-o", "apparmor=off", "--", "/bin/true", NULL};
        test_run_psrun(&r, off);
        cr_expect_eq(r.status, 0, "%s", r.err);
        cr_expect(!strstr(r.err, "apparmor"), "apparmor=off still talks about it: %s", r.err);
        test_run_free(&r);
}

Test(knobs, signals_are_forwarded)
{
        /* SIGTERM to psrun reaches the command (as `docker stop` would); the
         * result says it was signalled. */
        char mount[4200];
        snprintf(mount, sizeof(mount), "mounts=%s:/probe:ro", test_helper_path("probe"));
        int res[2];
        cr_assert_eq(pipe(res), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                dup2(res[1], 3);
                execl(test_psrun_path(), "psrun", "run", "--result-fd", "3", "-o", mount, "--",
                      "/probe", "sleep", "60", (char *) NULL);
                _exit(127);
        }
        close(res[1]);
        char why[4200];
        for (int i = 0; i < 500 && test_no_cgroup_leftovers_of(pid, why, sizeof(why)); i++)
                usleep(10000);
        usleep(200000); /* the command is running by now */
        kill(pid, SIGTERM);
        char buf[512] = "";
        ssize_t n = read(res[0], buf, sizeof(buf) - 1);
        close(res[0]);
        int st;
        waitpid(pid, &st, 0);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 128 + SIGTERM, "status %d", st);
        cr_expect(n > 0 && strstr(buf, "\"signal\":15,\"reason\":\"signaled\""), "%s", buf);
        cr_expect(test_no_cgroup_leftovers_of(pid, why, sizeof(why)), "%s", why);
}

Test(knobs, relative_mount_source)
{
        /* Resolved against psrun's working directory: reach a temp dir as
         * ../../tmp/... from wherever the tests run. */
        char dir[64];
        test_tmp_template(dir, sizeof(dir), "psrun-rel");
        cr_assert_not_null(mkdtemp(dir));
        chmod(dir, 0755); /* the sandbox's uid is "other" to it */
        char file[64];
        snprintf(file, sizeof(file), "%s/marker", dir);
        FILE *f = fopen(file, "w");
        cr_assert_not_null(f);
        fclose(f);

        char cwd[4096], rel[8192] = "", opt[8300];
        cr_assert_not_null(getcwd(cwd, sizeof(cwd)));
        for (const char *c = cwd; *c; c++)
                if (*c == '/' && c[1])
                        strcat(rel, "../");
        strcat(rel, dir + 1);
        snprintf(opt, sizeof(opt), "mounts=%s:/workspace/src", rel);

        struct test_run r;
        const char *const opts[] = {"-o", opt, NULL};
        run_probe(&r, opts, "exists", "/workspace/src/marker");
        cr_expect_str_eq(r.out, "present\n", "%s: %s %s", opt, r.out, r.err);
        test_run_free(&r);
        unlink(file);
        rmdir(dir);
}
