/* SPDX-License-Identifier: MIT */
/*
 * AppArmor layer. On a host without AppArmor only the paths that do not need
 * it run (the rest skip, saying so); the kernel-matrix VM (scripts/vm-check.sh)
 * boots with AppArmor and runs them all.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/testlib.h"
#include "policy/apparmor.h"
#include "policy/policy.h"

#define PROFILES_FILE "/sys/kernel/security/apparmor/profiles"
/* Bumped by the kernel on every policy load, replacement or removal in the
 * namespace: how a test sees whether apparmor_parser ran. */
#define REVISION_FILE "/sys/kernel/security/apparmor/policy/revision"

static void require_apparmor(void)
{
        test_require_root();
        if (!apparmor_enabled()) {
                /* The library's own note says what is missing:
                 * "apparmor: <why>; running without the AppArmor layer". */
                struct apparmor_plan plan;
                psrun_error err = {0};
                apparmor_plan_init(&plan, POLICY_LAYER_AUTO, "psrun-probe", &err);
                const char *why = err.msg;
                if (strncmp(why, "apparmor: ", 10) == 0)
                        why += 10;
                cr_skip_test("no AppArmor on this host (%.*s); the kernel-matrix VM "
                             "(scripts/vm-check.sh) runs this test",
                             (int) strcspn(why, ";"), why);
        }
}

static char *read_text(const char *path)
{
        FILE *f = fopen(path, "re");
        if (!f)
                return NULL;
        char *buf = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&buf, &len);
        cr_assert_not_null(mem);
        char chunk[4096];
        size_t n;
        while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
                fwrite(chunk, 1, n, mem);
        fclose(f);
        fclose(mem);
        return buf;
}

static long long policy_revision(void)
{
        /* One read(): the kernel blocks a read on this file until the
         * revision changes from the one this open file last returned (and
         * from 0 on a fresh open), so stdio's read-until-EOF would hang. */
        int fd = open(REVISION_FILE, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
        cr_assert_geq(fd, 0, "cannot open %s: %s", REVISION_FILE, strerror(errno));
        char buf[32] = "";
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        int saved = errno;
        close(fd);
        if (n < 0 && saved == EAGAIN)
                return 0; /* no policy loaded since boot */
        cr_assert_gt(n, 0, "read %s: %s", REVISION_FILE, strerror(saved));
        return strtoll(buf, NULL, 10);
}

static void init_default(struct apparmor_plan *plan)
{
        psrun_error err = {0};
        int r = apparmor_plan_init(plan, POLICY_LAYER_REQUIRED, NULL, &err);
        cr_assert_eq(r, 0, "apparmor_plan_init: %d %s", r, err.msg);
        cr_assert(plan->active);
}

Test(apparmor, off_is_inactive)
{
        struct apparmor_plan plan;
        psrun_error err = {0};
        cr_assert_eq(apparmor_plan_init(&plan, POLICY_LAYER_OFF, NULL, &err), 0);
        cr_assert_not(plan.active);
        cr_assert_eq(apparmor_plan_init(&plan, POLICY_LAYER_OFF, "no-such-profile", &err), 0);
        cr_assert_not(plan.active);
        /* An inactive plan must be a no-op in the child. */
        cr_assert_eq(apparmor_plan_apply(&plan), 0);
}

/* The attr file is looked up in the container's /proc, which an image or a
 * config may have replaced (no proc mount and a planted
 * /proc/self/attr/apparmor/exec, a volume over /proc/self): a write into an
 * ordinary file there "succeeded" and the command ran unconfined. The file
 * must be procfs's, reached without magic links (the CVE-2025-52881
 * class). Needs no AppArmor: the plan is built by hand. */
Test(apparmor, apply_refuses_an_attr_file_not_in_procfs)
{
        char path[64];
        test_tmp_template(path, sizeof(path), "psrun-apparmor-attr");
        int fd = mkstemp(path);
        cr_assert_geq(fd, 0, "mkstemp: %s", strerror(errno));
        struct apparmor_plan plan = {.active = true};
        snprintf(plan.attr_value, sizeof(plan.attr_value), "exec psrun-default");
        plan.attr_len = strlen(plan.attr_value);

        snprintf(plan.attr_path, sizeof(plan.attr_path), "%s", path);
        int r = apparmor_plan_apply(&plan);
        snprintf(plan.attr_path, sizeof(plan.attr_path), "/proc/self/fd/%d", fd);
        int through_fd = apparmor_plan_apply(&plan);
        struct stat st;
        cr_assert_eq(fstat(fd, &st), 0);
        close(fd);
        unlink(path);
        cr_expect_eq(r, -ENODEV, "a plain file as the attr file: %s", strerror(-r));
        cr_expect_eq(through_fd, -ELOOP, "the attr file through a magic link: %s",
                     strerror(-through_fd));
        cr_expect_eq(st.st_size, 0, "the profile request was written into an ordinary file");
}

Test(apparmor, profile_text)
{
        const char *text = apparmor_default_profile_text();
        static const char *const expected[] = {
                "profile psrun-default ",
                "deny /home/{,**} ",
                "deny /root/{,**} ",
                "deny /dev/mem ",
                "deny /dev/kmem ",
                "deny /dev/port ",
                "deny /proc/sysrq-trigger ",
                "deny /proc/sys/** w",
                "deny /sys/** w",
                "ptrace (trace, read, tracedby, readby) peer=psrun-default,",
        };
        for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++)
                cr_expect_not_null(strstr(text, expected[i]), "profile lacks `%s`:\n%s",
                                   expected[i], text);
        /* No allow rule may bring back what a deny rule takes away, and no
         * mount rule of any kind may appear: a deny-only mount rule set
         * switches mount mediation off with apparmor_parser 3.0. */
        static const char *const absent[] = {"allow ", "mount,", "umount,", "pivot_root,",
                                             "change_profile"};
        for (size_t i = 0; i < sizeof(absent) / sizeof(absent[0]); i++)
                cr_expect_null(strstr(text, absent[i]), "unexpected `%s`:\n%s", absent[i], text);
}

Test(apparmor, invalid_profile_name)
{
        struct apparmor_plan plan;
        psrun_error err = {0};
        int r = apparmor_plan_init(&plan, POLICY_LAYER_REQUIRED, "two words", &err);
        cr_assert_eq(r, -EINVAL, "got %d %s", r, err.msg);
        cr_assert_not_null(strstr(err.msg, "apparmor_profile"), "%s", err.msg);
        cr_assert_not(plan.active);
        r = apparmor_plan_init(&plan, POLICY_LAYER_AUTO, "", &err);
        cr_assert_eq(r, -EINVAL, "got %d %s", r, err.msg);
}

Test(apparmor, unavailable_host_is_eopnotsupp)
{
        if (apparmor_enabled())
                cr_skip_test("this host has AppArmor: the no-AppArmor path cannot be seen here");
        struct apparmor_plan plan;
        psrun_error err = {0};
        /* AUTO: the caller prints the note and goes on. */
        int r = apparmor_plan_init(&plan, POLICY_LAYER_AUTO, NULL, &err);
        cr_assert_eq(r, -EOPNOTSUPP, "got %d %s", r, err.msg);
        cr_assert_not_null(strstr(err.msg, "running without the AppArmor layer"), "%s", err.msg);
        cr_assert_null(strchr(err.msg, '\n'), "the note must be one line: %s", err.msg);
        cr_assert_not(plan.active);
        /* REQUIRED: same code, the caller fails closed; the message says why. */
        r = apparmor_plan_init(&plan, POLICY_LAYER_REQUIRED, NULL, &err);
        cr_assert_eq(r, -EOPNOTSUPP, "got %d %s", r, err.msg);
        cr_assert_not_null(strstr(err.msg, "required"), "%s", err.msg);
        cr_assert_not(plan.active);
}

Test(apparmor, default_profile_loads)
{
        require_apparmor();
        struct apparmor_plan plan;
        init_default(&plan);
        cr_assert_str_eq(plan.attr_value, "exec psrun-default");
        cr_assert_eq(plan.attr_len, strlen("exec psrun-default"));
        cr_assert(strcmp(plan.attr_path, "/proc/self/attr/apparmor/exec") == 0 ||
                          strcmp(plan.attr_path, "/proc/self/attr/exec") == 0,
                  "%s", plan.attr_path);
        char *profiles = read_text(PROFILES_FILE);
        cr_assert_not_null(profiles);
        cr_assert_not_null(strstr(profiles, "psrun-default (enforce)"), "profiles:\n%s", profiles);
        free(profiles);
}

Test(apparmor, unchanged_profile_not_reloaded)
{
        require_apparmor();
        struct apparmor_plan plan;
        init_default(&plan);

        long long before = policy_revision();
        init_default(&plan);
        init_default(&plan);
        cr_assert_eq(policy_revision(), before, "the unchanged profile was loaded again");

        /* Once psrun's record no longer matches (as after an upgrade changed
         * the text), the profile is compiled and loaded again. */
        FILE *f = fopen(APPARMOR_STATE_DIR "/" APPARMOR_DEFAULT_PROFILE, "we");
        cr_assert_not_null(f, "no state file: %s", strerror(errno));
        fputs("hash -\nprofile older-text {}\n", f);
        fclose(f);
        init_default(&plan);
        cr_assert_gt(policy_revision(), before, "a changed profile was not reloaded");
        long long after = policy_revision();
        init_default(&plan);
        cr_assert_eq(policy_revision(), after);
}

Test(apparmor, named_profile_must_be_loaded)
{
        require_apparmor();
        struct apparmor_plan plan;
        psrun_error err = {0};
        int r = apparmor_plan_init(&plan, POLICY_LAYER_REQUIRED, "psrun-test-no-such-profile",
                                   &err);
        cr_assert_eq(r, -ENOENT, "got %d %s", r, err.msg);
        cr_assert_not_null(strstr(err.msg, "psrun-test-no-such-profile"), "%s", err.msg);
        cr_assert_not(plan.active);

        /* A loaded profile given by name is used as it is. */
        init_default(&plan);
        r = apparmor_plan_init(&plan, POLICY_LAYER_AUTO, "psrun-default", &err);
        cr_assert_eq(r, 0, "%s", err.msg);
        cr_assert(plan.active);
        cr_assert_str_eq(plan.attr_value, "exec psrun-default");
}

static void write_file(const char *path, const char *text)
{
        int fd = open(path, O_WRONLY | O_CLOEXEC);
        cr_assert_geq(fd, 0, "open %s: %s", path, strerror(errno));
        cr_assert_eq(write(fd, text, strlen(text)), (ssize_t) strlen(text), "write %s: %s", path,
                     strerror(errno));
        close(fd);
}

/* Runs `script` with /bin/sh in a child that applied `plan` the way the
 * runtime's child does (no_new_privs first); returns stdout+stderr.
 * in_userns: the child is root in a new user, mount and UTS namespace, with
 * the capabilities a sandbox has during setup, so what the kernel would allow
 * there and the profile denies can be told apart. Otherwise the child only
 * gets a private UTS namespace: should confinement fail, the hostname the
 * scripts write changes nowhere else. */
static char *run_confined(const struct apparmor_plan *plan, const char *script, bool in_userns)
{
        int out_pipe[2], ready[2], go[2];
        cr_assert_eq(pipe2(out_pipe, O_CLOEXEC), 0);
        cr_assert_eq(pipe2(ready, O_CLOEXEC), 0);
        cr_assert_eq(pipe2(go, O_CLOEXEC), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                char c;
                dup2(out_pipe[1], 1);
                dup2(out_pipe[1], 2);
                if (unshare(in_userns ? CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWUTS : CLONE_NEWUTS) <
                    0) {
                        dprintf(2, "unshare: %s\n", strerror(errno));
                        _exit(126);
                }
                if (in_userns) {
                        /* The parent writes the id maps, then lets us go. */
                        if (write(ready[1], "r", 1) != 1 || read(go[0], &c, 1) != 1)
                                _exit(126);
                        /* Mounts of its own for the script to try umount
                         * and pivot_root on, made while still unconfined. */
                        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
                            mount("psrun-test", "/tmp", "tmpfs", 0, NULL) < 0 ||
                            mount("psrun-test", "/run", "tmpfs", 0, NULL) < 0 ||
                            mkdir("/run/old", 0700) < 0) {
                                dprintf(2, "test mounts: %s\n", strerror(errno));
                                _exit(126);
                        }
                }
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
                        dprintf(2, "no_new_privs: %s\n", strerror(errno));
                        _exit(126);
                }
                int r = apparmor_plan_apply(plan);
                if (r < 0) {
                        dprintf(2, "apparmor_plan_apply: %s\n", strerror(-r));
                        _exit(126);
                }
                execl("/bin/sh", "sh", "-c", script, (char *) NULL);
                dprintf(2, "exec /bin/sh: %s\n", strerror(errno));
                _exit(127);
        }
        close(out_pipe[1]);
        close(ready[1]);
        close(go[0]);
        if (in_userns) {
                char c, path[64];
                cr_assert_eq(read(ready[0], &c, 1), 1, "child died before its maps were written");
                snprintf(path, sizeof(path), "/proc/%d/uid_map", (int) pid);
                write_file(path, "0 0 1\n");
                snprintf(path, sizeof(path), "/proc/%d/setgroups", (int) pid);
                write_file(path, "deny\n");
                snprintf(path, sizeof(path), "/proc/%d/gid_map", (int) pid);
                write_file(path, "0 0 1\n");
                cr_assert_eq(write(go[1], "g", 1), 1);
        }
        close(ready[0]);
        close(go[1]);
        char *out = NULL;
        size_t len = 0;
        FILE *mem = open_memstream(&out, &len);
        cr_assert_not_null(mem);
        char chunk[4096];
        ssize_t n;
        while ((n = read(out_pipe[0], chunk, sizeof(chunk))) > 0)
                fwrite(chunk, 1, (size_t) n, mem);
        close(out_pipe[0]);
        fclose(mem);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status) && WEXITSTATUS(status) < 126, "child failed: %s", out);
        return out;
}

/* True when one line of `out` contains both strings. */
static bool line_has(const char *out, const char *a, const char *b)
{
        for (const char *p = out; p && *p;) {
                const char *end = strchr(p, '\n');
                size_t len = end ? (size_t) (end - p) : strlen(p);
                char *line = strndup(p, len);
                bool hit = strstr(line, a) && strstr(line, b);
                free(line);
                if (hit)
                        return true;
                p = end ? end + 1 : NULL;
        }
        return false;
}

/* The shell's message for a failed operation: "Permission denied" from
 * strerror(EACCES), capitalised or not depending on the tool. */
#define DENIED "ermission denied"

Test(apparmor, child_is_confined)
{
        require_apparmor();
        struct apparmor_plan plan;
        init_default(&plan);

        char *out =
                run_confined(&plan,
                             "cat /proc/self/attr/current\n"
                             "cat /proc/sys/kernel/ostype\n"
                             "echo psrun-test >/proc/sys/kernel/hostname && echo HOSTNAME-WRITTEN\n"
                             "ls /root >/dev/null && echo ROOT-LISTED\n"
                             "cat /proc/1/environ >/dev/null && echo PID1-READ\n"
                             "exit 0\n",
                             false);
        cr_assert_not_null(strstr(out, "psrun-default (enforce)"), "not confined:\n%s", out);
        /* Reads outside the denied paths still work. */
        cr_assert_not_null(strstr(out, "Linux"), "cannot read /proc/sys:\n%s", out);
        cr_assert_null(strstr(out, "HOSTNAME-WRITTEN"), "wrote /proc/sys/kernel:\n%s", out);
        cr_assert(line_has(out, "/proc/sys/kernel/hostname", DENIED),
                  "no EACCES writing /proc/sys/kernel/hostname:\n%s", out);
        cr_assert_null(strstr(out, "ROOT-LISTED"), "listed /root:\n%s", out);
        cr_assert(line_has(out, "/root", DENIED), "no EACCES listing /root:\n%s", out);
        /* Reading another process's environment is a ptrace "read": only
         * peers in psrun-default may be read, and pid 1 is not one. */
        cr_assert_null(strstr(out, "PID1-READ"), "read pid 1's environment:\n%s", out);
        cr_assert(line_has(out, "/proc/1/environ", DENIED), "no EACCES on /proc/1/environ:\n%s",
                  out);
        free(out);

        /* The denials are visible to the host's administrator. */
        int size = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
        cr_assert_gt(size, 0);
        char *log = calloc(1, (size_t) size + 1);
        cr_assert_not_null(log);
        int got = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, log, size);
        cr_assert_gt(got, 0, "klogctl: %s", strerror(errno));
        cr_expect(line_has(log, "apparmor=\"DENIED\"", "profile=\"psrun-default\""),
                  "no AppArmor denial in the kernel log");
        free(log);
}

Test(apparmor, unconfined_without_plan)
{
        require_apparmor();
        /* Control for child_is_confined: the same child without the plan is
         * unconfined, so the denials there come from the profile. */
        struct apparmor_plan plan = {0};
        char *out = run_confined(&plan,
                                 "cat /proc/self/attr/current; ls -d /root; "
                                 "cat /proc/1/environ >/dev/null && echo PID1-READ",
                                 false);
        cr_assert_not_null(strstr(out, "unconfined"), "%s", out);
        cr_assert_not_null(strstr(out, "PID1-READ"), "%s", out);
        cr_assert_null(strstr(out, DENIED), "%s", out);
        free(out);
}

/* As in the sandbox: the profile is requested from inside a user namespace
 * where the process holds every capability, so the kernel alone would let it
 * mount, unmount, pivot_root and set its hostname; the profile must not.
 * pivot_root comes last: where it succeeds, the shell loses its binaries. */
static const char userns_script[] =
        "cat /proc/self/attr/current\n"
        "mount -t tmpfs psrun-test2 /tmp && echo MOUNTED\n"
        "echo psrun-test >/proc/sys/kernel/hostname && echo HOSTNAME-WRITTEN\n"
        "umount /tmp && echo UNMOUNTED\n"
        "pivot_root /run /run/old && echo PIVOTED\n"
        "exit 0\n";

Test(apparmor, confined_in_user_namespace)
{
        require_apparmor();
        struct apparmor_plan plan;
        init_default(&plan);

        char *out = run_confined(&plan, userns_script, true);
        cr_assert_not_null(strstr(out, "psrun-default (enforce)"), "not confined:\n%s", out);
        cr_assert_null(strstr(out, "MOUNTED"), "mounted under the profile:\n%s", out);
        cr_assert(line_has(out, "mount", DENIED), "no EACCES from mount:\n%s", out);
        cr_assert_null(strstr(out, "HOSTNAME-WRITTEN"), "wrote /proc/sys/kernel:\n%s", out);
        cr_assert_null(strstr(out, "UNMOUNTED"), "unmounted under the profile:\n%s", out);
        cr_assert(line_has(out, "umount", DENIED), "no EACCES from umount:\n%s", out);
        cr_assert_null(strstr(out, "PIVOTED"), "pivot_root under the profile:\n%s", out);
        cr_assert(line_has(out, "pivot_root", DENIED), "no EACCES from pivot_root:\n%s", out);
        free(out);
}

Test(apparmor, user_namespace_control)
{
        require_apparmor();
        /* Control for confined_in_user_namespace: without the plan the same
         * child may mount, unmount and write its own hostname. */
        struct apparmor_plan plan = {0};
        char *out = run_confined(&plan, userns_script, true);
        cr_assert_not_null(strstr(out, "unconfined"), "%s", out);
        cr_assert_not_null(strstr(out, "MOUNTED"), "%s", out);
        cr_assert_not_null(strstr(out, "HOSTNAME-WRITTEN"), "%s", out);
        cr_assert_not_null(strstr(out, "UNMOUNTED"), "%s", out);
        free(out);
}
