/* SPDX-License-Identifier: MIT */
/*
 * The escapes of issue 9 in `psrun run`: each test names the layer that stops
 * the attack and, where a second layer also holds, a variant with the first
 * one off shows the second.
 */
#include <criterion/criterion.h>
#include <pty.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <linux/landlock.h>
#include <stdbool.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "integration/common.h"

TestSuite(escapes, .init = test_require_root_or_rootless, .timeout = 60);

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

/* workdir=/proc/self/fd/N for every N the child might hold (before the fix,
 * 5 was a cgroup directory), then a climb to the host's root and a read of
 * the marker by its path relative to it. */
static void workdir_fd_climb(const char *landlock)
{
        char marker[64];
        make_marker(marker, sizeof(marker));
        char script[256];
        snprintf(script, sizeof(script), "cd ../../../../../../../../..; cat .%s; pwd", marker);
        int escaped = 0, started = 0;
        /* Then other spellings of the same magic links. */
        static const char *const forms[] = {"/proc/thread-self/fd/5", "/proc/1/cwd", "/dev/fd/5",
                                            "/proc/self/root"};
        for (int n = 3; n <= 8 + (int) (sizeof(forms) / sizeof(forms[0])); n++) {
                char workdir[64];
                if (n <= 8)
                        snprintf(workdir, sizeof(workdir), "workdir=/proc/self/fd/%d", n);
                else
                        snprintf(workdir, sizeof(workdir), "workdir=%s", forms[n - 9]);
                const char *argv[] = {"run", "-o",      workdir, "-o",   landlock,
                                      "--",  "/bin/sh", "-c",    script, NULL};
                struct test_run r;
                test_run_psrun(&r, argv);
                if (strstr(r.out, "HOST-SECRET")) {
                        escaped++;
                        cr_log_error("%s reached the host: %s", workdir, r.out);
                }
                if (r.status != 125)
                        started++;
                else
                        cr_expect(strstr(r.err, "chdir: ") && strstr(r.err, workdir + 8),
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

/* psrun run -o OPTS... -- /probe hold KIND, with stdin a pipe: returns
 * psrun's pid once the probe printed "COUNT ERRNO" (in line), holding what
 * it took until *hold_fd is closed. */
static pid_t start_holder(const char *kind, const char *const *opts, char *line, size_t len,
                          int *hold_fd)
{
        char mount[4200];
        snprintf(mount, sizeof(mount), "mounts=%s:/probe:ro", test_helper_path("probe"));
        const char *argv[32];
        size_t n = 0;
        argv[n++] = test_psrun_path();
        argv[n++] = "run";
        argv[n++] = "-o";
        argv[n++] = mount;
        argv[n++] = "-o";
        argv[n++] = "timeout=60";
        for (size_t i = 0; opts && opts[i]; i++)
                argv[n++] = opts[i];
        argv[n++] = "--";
        argv[n++] = "/probe";
        argv[n++] = "hold";
        argv[n++] = kind;
        argv[n++] = "50";
        argv[n] = NULL;
        int in[2], out[2];
        cr_assert_eq(pipe2(in, O_CLOEXEC), 0);
        cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                dup2(in[0], 0);
                dup2(out[1], 1);
                execv(argv[0], (char **) argv);
                _exit(127);
        }
        close(in[0]);
        close(out[1]);
        size_t got = 0;
        while (got + 1 < len) {
                ssize_t r = read(out[0], line + got, 1);
                if (r <= 0 || line[got] == '\n')
                        break;
                got++;
        }
        line[got] = '\0';
        close(out[0]);
        *hold_fd = in[1];
        return pid;
}

static int stop_holder(pid_t pid, int hold_fd)
{
        close(hold_fd);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Layer: user.max_inotify_instances capped in the sandbox's user namespace
 * (policy inotify_limit, runtime/child.c step_user_quotas). */
Test(escapes, inotify_instances_leave_host_root_some)
{
        char line[128];
        int hold;
        pid_t pid = start_holder("inotify", NULL, line, sizeof(line), &hold);
        int fd = inotify_init1(IN_CLOEXEC);
        int host_errno = errno;
        if (fd >= 0)
                close(fd);
        int status = stop_holder(pid, hold);
        long n = atol(line);
        cr_expect(fd >= 0, "host root got no inotify instance (%s) while a sandbox held %s",
                  strerror(host_errno), line);
        cr_expect(n > 0 && n <= 16, "the sandbox took %s inotify instances", line);
        cr_expect(strstr(line, "EMFILE"), "%s", line);
        cr_expect_eq(status, 0);
}

/* Every per-user-namespace quota this kernel has (/proc/sys/user/max_*) is
 * capped in the sandbox's namespace, not only the ones the tests above
 * exhaust: fanotify groups and marks, inotify watches, each kind of
 * namespace (seccomp refuses fanotify_init and namespace flags too; psrun
 * run has no switch to turn seccomp off, so that second layer is shown by
 * the values here), and RLIMIT_SIGPENDING. Non-default values show that
 * each key reaches its file. Layer: runtime/child.c step_user_quotas. */
Test(escapes, every_user_namespace_quota_is_capped)
{
        static const struct {
                const char *file, *option, *value;
        } quotas[] = {
                {"max_inotify_instances", "inotify_limit=11", "11"},
                {"max_inotify_watches", "inotify_watch_limit=1001", "1001"},
                {"max_fanotify_groups", "fanotify_limit=3", "3"},
                {"max_fanotify_marks", "fanotify_mark_limit=1002", "1002"},
                {"max_user_namespaces", "namespace_limit=2", "2"},
                {"max_mnt_namespaces", NULL, "2"},
                {"max_pid_namespaces", NULL, "2"},
                {"max_net_namespaces", NULL, "2"},
                {"max_ipc_namespaces", NULL, "2"},
                {"max_uts_namespaces", NULL, "2"},
                {"max_cgroup_namespaces", NULL, "2"},
                {"max_time_namespaces", NULL, "2"},
        };
        const char *argv[64];
        size_t n = 0;
        argv[n++] = "run";
        for (size_t i = 0; i < sizeof(quotas) / sizeof(quotas[0]); i++)
                if (quotas[i].option) {
                        argv[n++] = "-o";
                        argv[n++] = quotas[i].option;
                }
        argv[n++] = "-o";
        argv[n++] = "sigpending_limit=77";
        argv[n++] = "-o";
        argv[n++] = "msgqueue_limit=64K";
        argv[n++] = "--";
        argv[n++] = "/bin/sh";
        argv[n++] = "-c";
        argv[n++] = "for f in /proc/sys/user/*; do echo \"${f##*/}=$(cat $f)\"; done; "
                    "grep -E 'pending signals|msgqueue size' /proc/self/limits";
        argv[n] = NULL;
        struct test_run r;
        test_run_psrun(&r, argv);
        cr_assert_eq(r.status, 0, "%s", r.err);
        int missing = 0;
        for (size_t i = 0; i < sizeof(quotas) / sizeof(quotas[0]); i++) {
                char host[128], want[128];
                snprintf(host, sizeof(host), "/proc/sys/user/%s", quotas[i].file);
                if (access(host, F_OK) != 0) {
                        cr_log_warn("this kernel has no %s", host);
                        continue;
                }
                snprintf(want, sizeof(want), "%s=%s\n", quotas[i].file, quotas[i].value);
                if (!strstr(r.out, want)) {
                        missing++;
                        cr_log_error("not capped: %s (sandbox: %s)", want, r.out);
                }
        }
        /* A quota this list does not know is a new one to cap. */
        for (char *save = NULL, *l = strtok_r(r.out, "\n", &save); l;
             l = strtok_r(NULL, "\n", &save)) {
                if (strncmp(l, "Max pending signals", 19) == 0) {
                        cr_expect(strstr(l, " 77 "), "%s", l);
                        continue;
                }
                if (strncmp(l, "Max msgqueue size", 17) == 0) {
                        cr_expect(strstr(l, " 65536 "), "%s", l);
                        continue;
                }
                bool known = false;
                for (size_t i = 0; i < sizeof(quotas) / sizeof(quotas[0]); i++)
                        known = known || strncmp(l, quotas[i].file, strlen(quotas[i].file)) == 0;
                cr_expect(known, "a per-user-namespace quota psrun does not cap: %s", l);
        }
        cr_expect_eq(missing, 0);
        test_run_free(&r);
}

/* Layer: RLIMIT_SIGPENDING for the command (policy sigpending_limit). */
Test(escapes, queued_signals_leave_host_root_some)
{
        char line[128];
        int hold;
        pid_t pid = start_holder("sigqueue", NULL, line, sizeof(line), &hold);
        sigset_t rt, old;
        sigemptyset(&rt);
        sigaddset(&rt, SIGRTMIN);
        sigprocmask(SIG_BLOCK, &rt, &old);
        siginfo_t si = {.si_code = SI_QUEUE, .si_pid = getpid(), .si_uid = getuid()};
        si.si_signo = SIGRTMIN;
        long r = syscall(SYS_rt_sigqueueinfo, getpid(), SIGRTMIN, &si);
        int host_errno = errno;
        int status = stop_holder(pid, hold);
        /* Take the queued signal back before unblocking it. */
        struct timespec zero = {0};
        if (r == 0)
                sigtimedwait(&rt, NULL, &zero);
        sigprocmask(SIG_SETMASK, &old, NULL);
        long n = atol(line);
        cr_expect(r == 0, "host root could not queue a signal (%s) while a sandbox held %s",
                  strerror(host_errno), line);
        cr_expect(n > 0 && n <= 1024, "the sandbox queued %s signals", line);
        cr_expect_eq(status, 0);
}

/* POSIX message queues are charged to RLIMIT_MSGQUEUE up the user
 * namespaces, to host root's own count: with Landlock off (or a kernel
 * without it) a sandbox that made 9 queues left host root none. Layer:
 * RLIMIT_MSGQUEUE for the command (policy msgqueue_limit). With Landlock,
 * which refuses making the queue's file, no queue is made at all. */
static void message_queues_leave_host_root_some(const char *landlock, bool some)
{
        char line[128];
        int hold;
        const char *opts[] = {"-o", landlock, NULL};
        pid_t pid = start_holder("mqueue", opts, line, sizeof(line), &hold);
        char name[64];
        snprintf(name, sizeof(name), "/psrun-escape-test-%d", (int) getpid());
        long fd = syscall(SYS_mq_open, name + 1, O_CREAT | O_RDWR | O_CLOEXEC, 0600, NULL);
        int host_errno = errno;
        if (fd >= 0) {
                close((int) fd);
                syscall(SYS_mq_unlink, name + 1);
        }
        int status = stop_holder(pid, hold);
        long n = atol(line);
        cr_expect(fd >= 0, "host root could not make a message queue (%s) while a sandbox held %s",
                  strerror(host_errno), line);
        if (some)
                cr_expect(n >= 1 && n <= 2, "the sandbox made %s message queues", line);
        else
                cr_expect(n == 0 && strstr(line, "EACCES"), "the sandbox made %s", line);
        cr_expect_eq(status, 0);
}

Test(escapes, message_queues_leave_host_root_some)
{
        message_queues_leave_host_root_some("landlock=off", true);
}

Test(escapes, message_queues_need_no_cap_under_landlock)
{
        if (syscall(SYS_landlock_create_ruleset, NULL, 0, LANDLOCK_CREATE_RULESET_VERSION) < 0)
                cr_skip_test("this kernel has no Landlock");
        message_queues_leave_host_root_some("landlock=required", false);
}

/* Layer: the sandbox's devpts is a new instance with max= (policy
 * pty_limit): one sandbox taking every pty it can leaves a second some. */
Test(escapes, ptys_leave_other_sandboxes_some)
{
        char line[128], second[128];
        int hold, hold2;
        pid_t pid = start_holder("pty", NULL, line, sizeof(line), &hold);
        pid_t pid2 = start_holder("pty", NULL, second, sizeof(second), &hold2);
        int status2 = stop_holder(pid2, hold2);
        int status = stop_holder(pid, hold);
        cr_expect(atol(line) > 0 && atol(line) <= 64, "the first sandbox took %s ptys", line);
        cr_expect(strstr(line, "ENOSPC"), "%s", line);
        cr_expect(atol(second) > 0, "the second sandbox got no pty: %s", second);
        cr_expect_eq(status, 0);
        cr_expect_eq(status2, 0);
}

/* psrun run with a terminal on stdin (a real pty pair, as from an
 * interactive shell). Layer: the default seccomp profile allows only the
 * terminal ioctls programs need (policy/seccomp-default.c); psrun puts the
 * termios back when the command ends (cli). */
Test(escapes, host_terminal_is_not_reachable)
{
        int master, slave;
        struct winsize size = {.ws_row = 40, .ws_col = 100};
        cr_assert_eq(openpty(&master, &slave, NULL, NULL, &size), 0, "%s", strerror(errno));
        struct termios before, after;
        cr_assert_eq(tcgetattr(slave, &before), 0);
        cr_assert(before.c_lflag & ECHO);

        char mount[4200];
        snprintf(mount, sizeof(mount), "mounts=%s:/probe:ro", test_helper_path("probe"));
        int out[2];
        cr_assert_eq(pipe2(out, O_CLOEXEC), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                dup2(slave, 0);
                dup2(out[1], 1);
                execl(test_psrun_path(), test_psrun_path(), "run", "-o", mount, "--", "/probe",
                      "tty", (char *) NULL);
                _exit(127);
        }
        close(out[1]);
        char buf[512] = "";
        size_t got = 0;
        ssize_t n;
        while (got + 1 < sizeof(buf) && (n = read(out[0], buf + got, sizeof(buf) - 1 - got)) > 0)
                got += (size_t) n;
        buf[got] = '\0';
        close(out[0]);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status %d", status);

        int excl = -1, ldisc = -1;
        cr_assert_eq(ioctl(slave, TIOCGEXCL, &excl), 0);
        cr_assert_eq(ioctl(slave, TIOCGETD, &ldisc), 0);
        cr_assert_eq(tcgetattr(slave, &after), 0);
        close(slave);
        close(master);
        cr_expect(strstr(buf, "tcgets=OK winsz=OK excl=EPERM setd=EPERM sti=EPERM sti64=EPERM "
                              "xonc=EPERM cons=EPERM nxcl=EPERM tcsets=OK"),
                  "inside: %s", buf);
        cr_expect_eq(excl, 0, "the host terminal was made exclusive");
        cr_expect_eq(ldisc, 0, "the host terminal's line discipline is %d", ldisc);
        cr_expect(after.c_lflag & ECHO, "echo was left off on the host terminal");
}
