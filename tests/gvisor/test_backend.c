/* SPDX-License-Identifier: MIT */
/*
 * The gVisor backend's own cases: what it refuses and how it says so, what
 * it leaves behind (nothing, also after psrun is killed), and its result.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>

#include "gvisor/common.h"

static const char *const true_cmd[] = {"true", NULL};

static void expect_one_line(const struct test_run *r)
{
        const char *nl = strchr(r->err, '\n');
        cr_expect(nl && nl[1] == '\0', "not one line: %s", r->err);
}

/* No runsc: one line naming the key and how to get one; never native. */
Test(gvisor_errors, missing_runsc)
{
        test_require_root();
        struct test_run r;
        setenv("PSRUN_RUNSC", "/nonexistent", 1);
        gv_run(&r, "gvisor", NULL, true_cmd);
        cr_expect_eq(r.status, 125);
        cr_expect_str_eq(r.err, "psrun: backend: gvisor: PSRUN_RUNSC=/nonexistent: no such file\n");
        gv_expect_reason(&r, "setup_error");
        test_run_free(&r);

        /* Not in PATH either. */
        unsetenv("PSRUN_RUNSC");
        const char *path = getenv("PATH");
        char *saved = path ? strdup(path) : NULL;
        setenv("PATH", "/nonexistent", 1);
        gv_run(&r, "gvisor", NULL, true_cmd);
        if (saved)
                setenv("PATH", saved, 1);
        free(saved);
        cr_expect_eq(r.status, 125);
        cr_expect_str_eq(r.err, "psrun: backend: gvisor: runsc not found in PATH "
                                "(scripts/install-deps.sh installs it, or set PSRUN_RUNSC)\n");
        test_run_free(&r);

        /* A directory is not a runsc. */
        setenv("PSRUN_RUNSC", "/usr", 1);
        gv_run(&r, "gvisor", NULL, true_cmd);
        unsetenv("PSRUN_RUNSC");
        cr_expect_eq(r.status, 125);
        cr_expect(strstr(r.err, "PSRUN_RUNSC=/usr: not an executable file"), "%s", r.err);
        expect_one_line(&r);
        test_run_free(&r);
}

/* A platform name psrun does not know is the parser's error; one this
 * runsc does not have is the backend's. */
Test(gvisor_errors, bad_platform)
{
        test_require_root();
        struct test_run r;
        static const char *const bogus[] = {"-o", "gvisor_platform=hypervisor", NULL};
        gv_run(&r, "gvisor", bogus, true_cmd);
        cr_expect_eq(r.status, 125);
        cr_expect(strstr(r.err, "gvisor_platform: `hypervisor` is not one of auto, systrap, kvm, "
                                "ptrace"),
                  "%s", r.err);
        expect_one_line(&r);
        test_run_free(&r);

        FILE *p = popen("runsc help platforms 2>/dev/null", "r");
        char offered[256] = "";
        if (p) {
                size_t n = fread(offered, 1, sizeof(offered) - 1, p);
                offered[n] = '\0';
                pclose(p);
        }
        if (!offered[0])
                cr_skip_test("runsc not installed: no platform list to check against");
        if (strstr(offered, "systrap"))
                cr_skip_test("this runsc has systrap: no platform it lacks to ask for");
        static const char *const systrap[] = {"-o", "gvisor_platform=systrap", NULL};
        gv_run(&r, "gvisor", systrap, true_cmd);
        cr_expect_eq(r.status, 125);
        cr_expect(strstr(r.err, "psrun: backend: gvisor: gvisor_platform: `systrap` is not a "
                                "platform of "),
                  "%s", r.err);
        expect_one_line(&r);
        test_run_free(&r);
}

/* Layers the backend cannot apply fail closed, naming the key. */
Test(gvisor_errors, refused_keys)
{
        test_require_root();
        static const struct {
                const char *opt, *want;
        } cases[] = {
                {"landlock=required",
                 "psrun: landlock: `required` cannot hold with backend: gvisor"},
                {"apparmor=required",
                 "psrun: apparmor: `required` cannot hold with backend: gvisor"},
                {"readonly_rootfs=false",
                 "psrun: readonly_rootfs: `false` is not supported with backend: gvisor"},
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                struct test_run r;
                const char *extra[] = {"-o", cases[i].opt, NULL};
                gv_run(&r, "gvisor", extra, true_cmd);
                cr_expect_eq(r.status, 125, "%s", cases[i].opt);
                cr_expect(strncmp(r.err, cases[i].want, strlen(cases[i].want)) == 0, "%s: %s",
                          cases[i].opt, r.err);
                expect_one_line(&r);
                test_run_free(&r);
        }
}

/* The result's layers: the policy's seccomp profile holds (inside the
 * sentry), gVisor stands in for Landlock. */
Test(gvisor_run, result_shape)
{
        gv_require();
        struct test_run r;
        gv_run(&r, "gvisor", NULL, true_cmd);
        cr_expect_eq(r.status, 0);
        cr_expect(strstr(r.result, "\"backend\":\"gvisor\",\"layers\":{\"seccomp\":\"on\","
                                   "\"landlock\":\"gvisor\",\"apparmor\":\"off\"}"),
                  "%s", r.result);
        test_run_free(&r);
}

/* A run leaves no mount in the host's namespace, no state, no cgroup. */
Test(gvisor_run, nothing_left_behind)
{
        gv_require();
        FILE *f = fopen("/proc/self/mountinfo", "re");
        cr_assert_not_null(f);
        int before = 0;
        char line[4096];
        while (fgets(line, sizeof(line), f))
                before++;
        fclose(f);
        struct test_run r;
        static const char *const cmd[] = {"/bin/sh", "-c", "echo x > /workspace/x", NULL};
        gv_run(&r, "gvisor", NULL, cmd);
        cr_expect_eq(r.status, 0, "%s", r.err);
        char why[512];
        cr_expect(gv_no_state_of(r.pid, why, sizeof(why)), "state left: %s", why);
        test_run_free(&r);
        f = fopen("/proc/self/mountinfo", "re");
        cr_assert_not_null(f);
        int after = 0;
        while (fgets(line, sizeof(line), f)) {
                after++;
                cr_expect(!strstr(line, "psrun-gvisor"), "host mount left: %s", line);
        }
        fclose(f);
        cr_expect_eq(after, before);
}

/* psrun killed while runsc runs: runsc and the sandbox die with it (parent
 * death signals), and `psrun gc` removes the state directory and cgroup. */
Test(gvisor_run, killed_run_then_gc)
{
        gv_require();
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR);
                dup2(null, 0);
                dup2(null, 1);
                dup2(null, 2);
                setenv("PSRUN_TEST_KILL_AT", "gvisor:released", 1);
                execl(test_psrun_path(), "psrun", "run", "-o", "backend=gvisor", "--", "sleep",
                      "60", (char *) NULL);
                _exit(127);
        }
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "psrun was not killed at the point (status %#x)", status);
        /* The sandbox goes with its runsc (bounded wait). */
        char cmd[128];
        snprintf(cmd, sizeof(cmd), "pgrep -f '[/]run/psrun-gvisor/%d-' | head -1", (int) pid);
        bool gone = false;
        for (int i = 0; i < 100 && !gone; i++) {
                FILE *ps = popen(cmd, "r");
                char line[32] = "";
                gone = !ps || !fgets(line, sizeof(line), ps);
                if (ps)
                        pclose(ps);
                if (!gone)
                        usleep(50000);
        }
        cr_expect(gone, "runsc outlived the psrun that started it");
        char why[512];
        cr_expect(!gv_no_state_of(pid, why, sizeof(why)), "a killed run left no state to gc");
        struct test_run r;
        static const char *const gc[] = {"gc", NULL};
        test_run_psrun(&r, gc);
        cr_expect_eq(r.status, 0, "%s", r.err);
        test_run_free(&r);
        cr_expect(gv_no_state_of(pid, why, sizeof(why)), "gc left %s", why);
        cr_expect(test_no_cgroup_leftovers_of(pid, why, sizeof(why)), "%s", why);
}
