/* SPDX-License-Identifier: MIT */
/* Bad input and failed setup: one clear line naming the step, exit 125 (or
 * 126/127 for the command), nothing left behind. */
#include <grp.h>
#include <sys/wait.h>
#include <unistd.h>

#include "integration/common.h"

TestSuite(errors, .init = test_require_root);

static void expect_error(const char *const *argv, int status, const char *needle)
{
        struct test_run r;
        test_run_psrun(&r, argv);
        cr_expect_eq(r.status, status, "exit %d, stderr: %s", r.status, r.err);
        cr_expect(strstr(r.err, needle), "stderr lacks `%s`: %s", needle, r.err);
        /* One line, always: notes about optional layers this host lacks
         * come only with --verbose (issue 10). */
        int lines = 0;
        for (const char *l = r.err; *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : "")
                lines++;
        cr_expect_eq(lines, 1, "not one line: %s", r.err);
        test_run_free(&r);
}

Test(errors, unknown_policy_key)
{
        const char *const argv[] = {"run", "-o", "network_mode=none", "--", "true", NULL};
        expect_error(argv, 125, "did you mean `network`?");
}

Test(errors, impossible_limit)
{
        const char *const argv[] = {"run", "-o", "memory_limit=12Q", "--", "true", NULL};
        expect_error(argv, 125, "memory_limit");
}

Test(errors, network_keys)
{
        /* Refused while parsing, before any veth or nft table exists (the
         * modes themselves are tested in a fake internet: tests/net). */
        const char *const argv[] = {
                "run", "-o", "network=full", "-o", "network_pool=10.0.0.0/33", "--", "true", NULL};
        expect_error(argv, 125, "network_pool: \"10.0.0.0/33\": prefix length must be 0 to 32");
}

Test(errors, command_not_found)
{
        const char *const argv[] = {"run", "--", "no-such-command-psrun", NULL};
        expect_error(argv, 127,
                     "psrun: exec: \"no-such-command-psrun\": executable file not found in $PATH");
}

Test(errors, command_not_executable)
{
        const char *const argv[] = {"run", "--", "/etc/passwd", NULL};
        expect_error(argv, 126, "exec: /etc/passwd: permission denied");
}

Test(errors, missing_workdir)
{
        const char *const argv[] = {"run", "-o", "workdir=/nonexistent", "--", "true", NULL};
        expect_error(argv, 125, "psrun: chdir: /nonexistent: No such file or directory");
}

Test(errors, missing_mount_source)
{
        const char *const argv[] = {"run", "-o",   "mounts=/nonexistent-psrun:/data",
                                    "--",  "true", NULL};
        expect_error(argv, 125, "mounts[0].source: /nonexistent-psrun: No such file or directory");
}

Test(errors, missing_policy_file)
{
        const char *const argv[] = {"run", "--policy", "/nonexistent.yaml", "--", "true", NULL};
        expect_error(argv, 125, "/nonexistent.yaml");
}

Test(errors, no_command)
{
        const char *const argv[] = {"run", NULL};
        expect_error(argv, 125, "no command given");
}

Test(errors, setup_error_result_json)
{
        struct test_run r;
        const char *const argv[] = {"run", "--", "no-such-command-psrun", NULL};
        test_run_psrun(&r, argv);
        expect_reason(&r, "setup_error");
        cr_expect(strstr(r.result, "\"error\":\"exec: \\\"no-such-command-psrun"), "%s", r.result);
        test_run_free(&r);
}

Test(errors, workdir_created_in_workspace)
{
        struct test_run r;
        char mount[4200];
        snprintf(mount, sizeof(mount), "mounts=%s:/probe:ro", test_helper_path("probe"));
        const char *const argv[] = {"run", "-o",     mount,   "-o", "workdir=/workspace/a/b",
                                    "--",  "/probe", "write", "x",  NULL};
        test_run_psrun(&r, argv);
        cr_expect_str_eq(r.out, "ok\n", "%s", r.err);
        test_run_free(&r);
}

Test(errors, not_root)
{
        /* Rootless runs only the native backend (docs/rootless.md): a clear
         * refusal for the others, not a failing step further down. */
        int err[2];
        cr_assert_eq(pipe(err), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                dup2(err[1], 2);
                if (setgroups(0, NULL) < 0 || setresgid(65534, 65534, 65534) < 0 ||
                    setresuid(65534, 65534, 65534) < 0)
                        _exit(99);
                execl(test_psrun_path(), "psrun", "run", "-o", "backend=gvisor", "--", "true",
                      (char *) NULL);
                _exit(98);
        }
        close(err[1]);
        char buf[1024] = "";
        ssize_t n = read(err[0], buf, sizeof(buf) - 1);
        close(err[0]);
        int st;
        waitpid(pid, &st, 0);
        cr_expect(WIFEXITED(st) && WEXITSTATUS(st) == 125, "status %d", st);
        cr_expect(n > 0 && strstr(buf, "backend: gvisor needs root"), "%s", buf);
}

/* Issue 10: a run's stderr carries nothing psrun did not have to say; the
 * layers it used or skipped are in the result, and notes need --verbose. */
Test(errors, quiet_stderr_and_layers_in_the_result)
{
        const char *const quiet[] = {"run", "--json", "--", "true", NULL};
        struct test_run r;
        test_run_psrun(&r, quiet);
        cr_expect_eq(r.status, 0, "%s", r.err);
        cr_expect_null(strstr(r.err, "psrun: note"), "a note without --verbose: %s", r.err);
        cr_expect(strstr(r.err, "\"layers\":{\"seccomp\":\"on\",\"landlock\":"), "%s", r.err);
        cr_expect(strstr(r.err, "\"apparmor\":"), "%s", r.err);
        /* Only the JSON line, which starts on a line of its own (issue 9). */
        const char *line = r.err + strspn(r.err, "\n");
        cr_expect_eq(line[0], '{', "%s", r.err);
        cr_expect_eq(strchr(line, '\n'), r.err + strlen(r.err) - 1, "%s", r.err);
        test_run_free(&r);

        const char *const off[] = {"run", "--json", "-o", "landlock=off", "--", "true", NULL};
        test_run_psrun(&r, off);
        cr_expect(strstr(r.err, "\"landlock\":\"off\""), "%s", r.err);
        test_run_free(&r);
}
