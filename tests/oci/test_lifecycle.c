/* SPDX-License-Identifier: MIT */
/* create / start / state / kill / delete, as runtime.md describes them. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci/oci_test.h"

TestSuite(oci_lifecycle, .init = bundle_setup, .fini = bundle_teardown, .timeout = 60);

Test(oci_lifecycle, create_start_state_kill_delete)
{
        struct out o;
        char pidfile[400], text[64];
        snprintf(pidfile, sizeof(pidfile), "%s/init.pid", B.dir);
        bundle_config("c1", &(struct cfg){.args = "[\"sh\",\"-c\",\"echo started; sleep 1000\"]"});
        cr_assert_eq(
                psrun(&o, NULL, "create", "--bundle", B.dir, "--pid-file", pidfile, "c1", NULL), 0,
                "%s", o.err);
        cr_expect_str_eq(oci_status("c1"), "created");
        /* create leaves init waiting: nothing of the user's ran yet. */
        cr_expect(!contains(o.out, "started"));
        cr_assert(read_text(pidfile, text, sizeof(text)));
        int pid = atoi(text);
        cr_expect_eq(pid, oci_pid("c1"));
        /* No psrun process stays between the caller (a subreaper, as the
         * shim is) and init. */
        char path[64], stat_line[512];
        snprintf(path, sizeof(path), "/proc/%d/stat", pid);
        cr_assert(read_text(path, stat_line, sizeof(stat_line)));
        int ppid = 0;
        sscanf(strrchr(stat_line, ')') + 2, "%*c %d", &ppid);
        cr_expect_eq(ppid, getpid(), "init's parent is %d, not the subreaper %d", ppid, getpid());

        cr_assert_eq(psrun(&o, NULL, "start", "c1", NULL), 0, "%s", o.err);
        cr_expect_str_eq(oci_status("c1"), "running");
        cr_assert_eq(psrun(&o, NULL, "state", "c1", NULL), 0);
        cr_expect(contains(o.out, "\"ociVersion\": \"1.2.0\""), "%s", o.out);
        cr_expect(contains(o.out, "\"id\": \"c1\""), "%s", o.out);
        cr_expect(contains(o.out, B.dir), "bundle missing: %s", o.out);
        cr_expect(contains(o.out, "\"created\": \""), "%s", o.out);

        cr_expect_neq(psrun(&o, NULL, "start", "c1", NULL), 0, "a second start must fail");
        cr_expect(contains(o.err, "not created"), "%s", o.err);

        cr_assert_eq(psrun(&o, NULL, "kill", "c1", "KILL", NULL), 0, "%s", o.err);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid, "the caller reaps init");
        cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
        cr_expect_str_eq(oci_status("c1"), "stopped");
        cr_expect_neq(psrun(&o, NULL, "kill", "c1", "TERM", NULL), 0);
        /* containerd's shim reads these words as "already finished". */
        cr_expect(contains(o.err, "container not running"), "%s", o.err);
        /* ... and kills init's orphans with --all after the exit: done. */
        cr_expect_eq(psrun(&o, NULL, "kill", "--all", "c1", "KILL", NULL), 0, "%s", o.err);
        cr_assert_eq(psrun(&o, NULL, "delete", "c1", NULL), 0, "%s", o.err);
        cr_expect_neq(psrun(&o, NULL, "state", "c1", NULL), 0);
        cr_expect(contains(o.err, "does not exist"), "%s", o.err);
        /* The shim deletes twice: --force on a gone container is done. */
        cr_expect_neq(psrun(&o, NULL, "delete", "c1", NULL), 0);
        cr_expect_eq(psrun(&o, NULL, "delete", "--force", "c1", NULL), 0, "%s", o.err);
        char dir[1024];
        snprintf(dir, sizeof(dir), "%s/c1", B.root);
        cr_expect_neq(access(dir, F_OK), 0, "state directory left behind");
}

Test(oci_lifecycle, exit_status_reaches_the_caller)
{
        struct out o;
        bundle_config("c1", &(struct cfg){.args = "[\"sh\",\"-c\",\"exit 3\"]"});
        cr_assert_eq(psrun(&o, NULL, "create", "--bundle", B.dir, "c1", NULL), 0, "%s", o.err);
        int pid = oci_pid("c1");
        cr_assert_eq(psrun(&o, NULL, "start", "c1", NULL), 0, "%s", o.err);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 3);
        cr_expect_str_eq(oci_status("c1"), "stopped");
        cr_expect_eq(psrun(&o, NULL, "delete", "c1", NULL), 0, "%s", o.err);
}

Test(oci_lifecycle, kill_created_container)
{
        struct out o;
        bundle_config("c1", NULL);
        cr_assert_eq(psrun(&o, NULL, "create", "--bundle", B.dir, "c1", NULL), 0, "%s", o.err);
        int pid = oci_pid("c1");
        cr_assert_eq(psrun(&o, NULL, "kill", "c1", "9", NULL), 0, "%s", o.err);
        cr_assert_eq(waitpid(pid, NULL, 0), pid);
        cr_expect_str_eq(oci_status("c1"), "stopped");
        cr_expect_neq(psrun(&o, NULL, "start", "c1", NULL), 0);
        cr_expect_eq(psrun(&o, NULL, "delete", "c1", NULL), 0, "%s", o.err);
}

Test(oci_lifecycle, delete_created_container_without_force)
{
        struct out o;
        bundle_config("c1", NULL);
        cr_assert_eq(psrun(&o, NULL, "create", "--bundle", B.dir, "c1", NULL), 0, "%s", o.err);
        int pid = oci_pid("c1");
        cr_expect_eq(psrun(&o, NULL, "delete", "c1", NULL), 0, "%s", o.err);
        cr_assert_eq(waitpid(pid, NULL, 0), pid);
        cr_expect_neq(psrun(&o, NULL, "state", "c1", NULL), 0);
}

Test(oci_lifecycle, delete_running_needs_force)
{
        struct out o;
        oci_up("c1", NULL);
        int pid = oci_pid("c1");
        char cg[1024];
        cr_assert(oci_cgroup_dir("c1", "pids", cg, sizeof(cg)) ||
                  oci_cgroup_dir("c1", "unified", cg, sizeof(cg)));
        cr_expect_neq(psrun(&o, NULL, "delete", "c1", NULL), 0);
        cr_expect(contains(o.err, "is running"), "%s", o.err);
        cr_expect_str_eq(oci_status("c1"), "running");
        cr_expect_eq(psrun(&o, NULL, "delete", "--force", "c1", NULL), 0, "%s", o.err);
        cr_assert_eq(waitpid(pid, NULL, 0), pid);
        struct stat st;
        cr_expect_neq(stat(cg, &st), 0, "cgroup %s left behind", cg);
}

Test(oci_lifecycle, kill_signal_names_and_all)
{
        struct out o;
        oci_up("c1", &(struct cfg){.args = "[\"sh\",\"-c\",\"trap 'exit 42' USR1; "
                                           "sleep 1000 & sleep 1000 & wait\"]"});
        int pid = oci_pid("c1");
        cr_expect_neq(psrun(&o, NULL, "kill", "c1", "NOTASIGNAL", NULL), 0);
        cr_expect(contains(o.err, "NOTASIGNAL"), "%s", o.err);
        usleep(200000);
        cr_assert_eq(psrun(&o, NULL, "kill", "c1", "SIGUSR1", NULL), 0, "%s", o.err);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 42, "status %x", status);

        oci_up("c2", NULL);
        pid = oci_pid("c2");
        cr_assert_eq(psrun(&o, NULL, "kill", "--all", "c2", "KILL", NULL), 0, "%s", o.err);
        cr_assert_eq(waitpid(pid, NULL, 0), pid);
        cr_expect(wait_status("c2", "stopped", 2000));
}

Test(oci_lifecycle, run_foreground_and_detached)
{
        struct out o;
        bundle_config("r1", &(struct cfg){.args = "[\"sh\",\"-c\",\"echo out; exit 7\"]"});
        cr_expect_eq(psrun(&o, NULL, "run", "--bundle", B.dir, "r1", NULL), 7, "%s", o.err);
        cr_expect(contains(o.out, "out"), "%s", o.out);
        cr_expect_neq(psrun(&o, NULL, "state", "r1", NULL), 0, "run deletes the container");

        bundle_config("r2", NULL);
        cr_assert_eq(psrun(&o, NULL, "run", "-d", "--bundle", B.dir, "r2", NULL), 0, "%s", o.err);
        cr_expect_str_eq(oci_status("r2"), "running");
        cr_expect_eq(psrun(&o, NULL, "delete", "-f", "r2", NULL), 0, "%s", o.err);
}

Test(oci_lifecycle, bad_ids_leave_nothing)
{
        struct out o;
        char long_id[300];
        memset(long_id, 'a', sizeof(long_id) - 1);
        long_id[sizeof(long_id) - 1] = '\0';
        const char *bad[] = {"", "..", ".", "a/b", "../x", long_id, "a b"};
        bundle_config("x", NULL);
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                cr_expect_neq(psrun(&o, NULL, "create", "--bundle", B.dir, bad[i], NULL), 0,
                              "id `%s` accepted", bad[i]);
                cr_expect(strchr(o.err, '\n') == strrchr(o.err, '\n'), "not one line: %s", o.err);
                cr_expect(contains(o.err, "id"), "%s", o.err);
        }
        cr_assert_eq(psrun(&o, NULL, "list", "-q", NULL), 0, "%s", o.err);
        cr_expect_str_eq(o.out, "", "containers were created: %s", o.out);
}

Test(oci_lifecycle, duplicate_id_and_missing_bundle)
{
        struct out o;
        oci_up("c1", NULL);
        int pid = oci_pid("c1");
        cr_expect_neq(psrun(&o, NULL, "create", "--bundle", B.dir, "c1", NULL), 0);
        cr_expect(contains(o.err, "already exists"), "%s", o.err);
        cr_expect_eq(oci_pid("c1"), pid, "the first container was touched");
        cr_expect_str_eq(oci_status("c1"), "running");

        cr_expect_neq(
                psrun(&o, NULL, "create", "--bundle", "/nonexistent-psrun-bundle", "c2", NULL), 0);
        cr_expect(contains(o.err, "/nonexistent-psrun-bundle"), "%s", o.err);
        cr_expect_neq(psrun(&o, NULL, "state", "c2", NULL), 0);
}

Test(oci_lifecycle, bad_config_names_the_field_and_leaves_nothing)
{
        struct out o;
        bundle_config("c1", &(struct cfg){.linux_extra = ",\"resources\":{\"memory\":{\"limit\":"
                                                         "\"lots\"}}"});
        cr_expect_neq(psrun(&o, NULL, "create", "--bundle", B.dir, "c1", NULL), 0);
        cr_expect(contains(o.err, "linux.resources.memory.limit"), "%s", o.err);
        cr_expect_neq(psrun(&o, NULL, "state", "c1", NULL), 0);

        /* A failure after the container exists (the program is missing)
         * removes it, its cgroup and its init. */
        bundle_config("c2", &(struct cfg){.args = "[\"/no/such/program\"]"});
        cr_expect_neq(psrun(&o, NULL, "create", "--bundle", B.dir, "c2", NULL), 0);
        cr_expect(contains(o.err, "exec: /no/such/program: no such file or directory"), "%s",
                  o.err);
        cr_expect_neq(psrun(&o, NULL, "state", "c2", NULL), 0);
        bundle_config("c3", &(struct cfg){.args = "[\"no-such-program\"]"});
        cr_expect_neq(psrun(&o, NULL, "create", "--bundle", B.dir, "c3", NULL), 0);
        cr_expect(contains(o.err, "no-such-program") &&
                          contains(o.err, "executable file not found in $PATH"),
                  "%s", o.err);
}

Test(oci_lifecycle, json_log_explains_failures)
{
        struct out o;
        char log[400], text[4096];
        snprintf(log, sizeof(log), "%s/log.json", B.dir);
        bundle_config("c1", &(struct cfg){.args = "[\"no-such-program\"]"});
        cr_expect_neq(psrun(&o, NULL, "--log", log, "--log-format", "json", "create", "--bundle",
                            B.dir, "c1", NULL),
                      0);
        /* Global options go before the command; the runner put --root first. */
        cr_assert(read_text(log, text, sizeof(text)), "no log written");
        const char *last = strrchr(text, '\n');
        last = last ? last + 1 : text;
        cr_expect(contains(last, "\"level\":\"error\""), "%s", last);
        cr_expect(contains(last, "executable file not found"), "%s", last);
        cr_expect(contains(last, "\"time\":\""), "%s", last);
}

Test(oci_lifecycle, global_and_create_options)
{
        struct out o;
        char cmd[2048], path[600], text[256];
        bundle_config("c1", &(struct cfg){.args = "[\"true\"]"});
        /* What psrun cannot honour is refused, not ignored. */
        cr_expect_neq(psrun(&o, NULL, "--systemd-cgroup", "create", "--bundle", B.dir, "c1", NULL),
                      0);
        cr_expect(contains(o.err, "--systemd-cgroup") && contains(o.err, "cgroupfs"), "%s", o.err);
        cr_expect_neq(psrun(&o, NULL, "--cgroup-manager", "bogus", "list", NULL), 0);
        cr_expect(contains(o.err, "--cgroup-manager"), "%s", o.err);
        cr_expect_neq(psrun(&o, NULL, "state", "c1", NULL), 0);

        /* --cgroup-manager disabled: no cgroup at all. */
        bundle_config("c2", &(struct cfg){.args = "[\"cat\",\"/proc/self/cgroup\"]"});
        cr_assert_eq(psrun(&o, NULL, "--cgroup-manager", "disabled", "run", "--bundle", B.dir, "c2",
                           NULL),
                     0, "%s", o.err);
        cr_expect(!contains(o.out, B.cgroup), "a cgroup was made: %s", o.out);

        /* --no-pivot, --preserve-fds, --keep, --config. */
        snprintf(path, sizeof(path), "%s/passed.txt", B.dir);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs("through fd 3\n", f);
        fclose(f);
        bundle_config("c3", &(struct cfg){.args = "[\"sh\",\"-c\",\"cat <&3\"]"});
        snprintf(cmd, sizeof(cmd),
                 "%s --root %s run --no-pivot --preserve-fds 1 --keep --bundle %s c3 3<%s",
                 test_psrun_path(), B.root, B.dir, path);
        FILE *p = popen(cmd, "r");
        cr_assert_not_null(p);
        size_t n = fread(text, 1, sizeof(text) - 1, p);
        text[n] = '\0';
        cr_expect_eq(pclose(p), 0);
        cr_expect(contains(text, "through fd 3"), "%s", text);
        cr_expect_str_eq(oci_status("c3"), "stopped", "--keep keeps the container");
        cr_expect_eq(psrun(&o, NULL, "delete", "c3", NULL), 0, "%s", o.err);

        snprintf(path, sizeof(path), "%s/config.json", B.dir);
        char other[600];
        snprintf(other, sizeof(other), "%s/other.json", B.dir);
        bundle_config("c4", &(struct cfg){.args = "[\"echo\",\"from the other config\"]"});
        cr_assert_eq(rename(path, other), 0);
        cr_expect_eq(psrun(&o, NULL, "run", "--config", other, "--bundle", B.dir, "c4", NULL), 0,
                     "%s", o.err);
        cr_expect(contains(o.out, "from the other config"), "%s", o.out);
}

Test(oci_lifecycle, exec_adds_capabilities)
{
        struct out o;
        oci_up("c1", &(struct cfg){.caps = "[\"CAP_KILL\"]"});
        cr_assert_eq(psrun(&o, NULL, "exec", "c1", "grep", "CapEff", "/proc/self/status", NULL), 0,
                     "%s", o.err);
        cr_expect(contains(o.out, "0000000000000020"), "%s", o.out);
        cr_assert_eq(psrun(&o, NULL, "exec", "--cap", "CAP_CHOWN", "c1", "grep", "CapEff",
                           "/proc/self/status", NULL),
                     0, "%s", o.err);
        cr_expect(contains(o.out, "0000000000000021"), "%s", o.out);
        cr_expect_neq(psrun(&o, NULL, "exec", "--cap", "CAP_NOPE", "c1", "true", NULL), 0);
        cr_expect(contains(o.err, "CAP_NOPE"), "%s", o.err);
}

/* A copy of psrun that uid 1000 can reach wherever the checkout is, run as
 * uid 1000 with `--root ROOT rootless create` (rootless: "--rootless=..."),
 * its output through a pipe into out; returns its wait status. */
static int create_as_uid_1000(const char *rootless, char *out, size_t size)
{
        char copy[400], root[64], cmd[1000];
        snprintf(copy, sizeof(copy), "%s/psrun", B.dir);
        snprintf(cmd, sizeof(cmd), "cp %s %s", test_psrun_path(), copy);
        cr_assert_eq(system(cmd), 0);
        snprintf(root, sizeof(root), "/tmp/psrun-oci-nonroot-%d", (int) getpid());
        bundle_config("c1", NULL);
        int fds[2];
        cr_assert_eq(pipe(fds), 0);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                dup2(fds[1], 1);
                dup2(fds[1], 2);
                if (setgroups(0, NULL) < 0 || setresgid(1000, 1000, 1000) < 0 ||
                    setresuid(1000, 1000, 1000) < 0)
                        _exit(99);
                execl(copy, copy, rootless, "--root", root, "create", "--bundle", B.dir, "c1",
                      (char *) NULL);
                _exit(98);
        }
        close(fds[1]);
        size_t n = 0;
        ssize_t k;
        while ((k = read(fds[0], out + n, size - 1 - n)) > 0)
                n += (size_t) k;
        out[n] = '\0';
        close(fds[0]);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        snprintf(cmd, sizeof(cmd), "rm -rf %s", root);
        cr_expect_eq(system(cmd), 0);
        return status;
}

Test(oci_lifecycle, non_root_with_rootless_false_is_refused)
{
        char out[1024] = "";
        int status = create_as_uid_1000("--rootless=false", out, sizeof(out));
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %#x: %s", status, out);
        cr_expect(contains(out, "needs root here (--rootless false)"), "%s", out);
}

Test(oci_lifecycle, non_root_without_a_user_namespace_is_refused)
{
        /* Rootless by default (auto): a config of root's, with no user
         * namespace, is refused in one line, as runc refuses it. */
        char out[1024] = "";
        int status = create_as_uid_1000("--rootless=auto", out, sizeof(out));
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 1, "status %#x: %s", status, out);
        cr_expect(contains(out, "a rootless container needs a user namespace"), "%s", out);
        cr_expect(!strchr(out, '\n') || !strchr(strchr(out, '\n') + 1, '\n'), "%s", out);
}

Test(oci_lifecycle, bad_paths_leave_nothing)
{
        struct out o;
        bundle_config("c1", NULL);
        cr_expect_neq(psrun(&o, NULL, "create", "--bundle", B.dir, "--pid-file",
                            "/nonexistent-psrun/init.pid", "c1", NULL),
                      0);
        cr_expect(contains(o.err, "pid file") && contains(o.err, "/nonexistent-psrun"), "%s",
                  o.err);
        cr_expect_neq(psrun(&o, NULL, "state", "c1", NULL), 0, "the failed create left c1");
        reap_children();

        bundle_config("c2", &(struct cfg){.terminal = true});
        cr_expect_neq(psrun(&o, NULL, "create", "--bundle", B.dir, "--console-socket",
                            "/nonexistent-psrun/console.sock", "c2", NULL),
                      0);
        cr_expect(contains(o.err, "console socket /nonexistent-psrun/console.sock"), "%s", o.err);
        cr_expect_neq(psrun(&o, NULL, "state", "c2", NULL), 0, "the failed create left c2");

        bundle_config("c3", &(struct cfg){.linux_extra = ",\"resources\":{\"memory\":{\"limit\":"
                                                         "4096}}"});
        int r = psrun(&o, NULL, "run", "--bundle", B.dir, "c3", NULL);
        cr_expect_neq(r, 0, "a 4 KiB memory limit ran");
        /* Issue 10: an init killed during set-up is said so, and how; not
         * "sync: release the child: Connection reset by peer". */
        cr_expect(!contains(o.err, "sync:") && !contains(o.err, "Connection reset"), "%s", o.err);
        cr_expect(!contains(o.err, "during set-up") || contains(o.err, "was killed by signal"),
                  "%s", o.err);
        cr_expect_neq(psrun(&o, NULL, "state", "c3", NULL), 0, "c3 left behind");
        cr_assert_eq(psrun(&o, NULL, "list", "-q", NULL), 0);
        cr_expect_str_eq(o.out, "", "containers left: %s", o.out);
}

/* A console socket whose listener never accepts (its backlog full): create
 * waited in connect() for ever. It must give up in bounded time, with one
 * error line, leaving nothing. */
Test(oci_lifecycle, console_socket_that_never_accepts_is_an_error)
{
        char sock[400];
        snprintf(sock, sizeof(sock), "%s/stuck.sock", B.dir);
        int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock);
        cr_assert_eq(bind(lfd, (struct sockaddr *) &addr, sizeof(addr)), 0, "%s", strerror(errno));
        cr_assert_eq(listen(lfd, 0), 0);
        /* Fill the backlog until a connect would wait. */
        int fill[8], n_fill = 0;
        for (; n_fill < 8; n_fill++) {
                fill[n_fill] = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
                if (connect(fill[n_fill], (struct sockaddr *) &addr, sizeof(addr)) < 0) {
                        close(fill[n_fill]);
                        break;
                }
        }
        cr_assert_lt(n_fill, 8, "the backlog never filled");
        bundle_config("c1", &(struct cfg){.terminal = true});
        struct out o;
        time_t start = time(NULL);
        int r = psrun(&o, NULL, "create", "--bundle", B.dir, "--console-socket", sock, "c1", NULL);
        time_t took = time(NULL) - start;
        for (int i = 0; i < n_fill; i++)
                close(fill[i]);
        close(lfd);
        cr_expect_neq(r, 0, "create with a stuck console socket succeeded");
        cr_expect_lt(took, 30, "create waited %ld s", (long) took);
        const char *nl = strchr(o.err, '\n');
        cr_expect(contains(o.err, "console socket") && nl && !nl[1], "one error line: %s", o.err);
        cr_assert_eq(psrun(&o, NULL, "list", "-q", NULL), 0);
        cr_expect_str_eq(o.out, "", "containers left: %s", o.out);
}

/* Issue 10 and 11 (item 10): --preserve-fds N with fewer than N fds open
 * passed psrun's own (the root, the container's lock, a cgroup directory)
 * to the waiting init, and state, start and delete then blocked on the
 * lock. As in crun, a range with holes is taken (crun's preserve-fds-some
 * asks for 100): the caller's fds in it reach the process, psrun's own that
 * landed in the holes never do, and init holds none of them while it waits. */
Test(oci_lifecycle, preserve_fds_never_passes_psrun_s_own)
{
        char cmd[1400], text[4096], log[300];
        snprintf(log, sizeof(log), "%s/create.out", B.dir);
        bundle_config("c5", &(struct cfg){.args = "[\"ls\",\"-l\",\"/proc/self/fd/\"]"});
        /* The shell closes 3..9 first (the test runner's own fds must not
         * fill the holes) and passes fds 3 and 7 only: psrun's first fds
         * land at 4, 5, 6, in the range 3..12. Output to a file: init keeps
         * its stdio. */
        snprintf(cmd, sizeof(cmd),
                 "exec 3<&- 4<&- 5<&- 6<&- 7<&- 8<&- 9<&-; exec timeout 20 %s --root %s "
                 "create --preserve-fds 10 --bundle %s c5 3</dev/null 7</dev/null </dev/null "
                 ">%s 2>&1",
                 test_psrun_path(), B.root, B.dir, log);
        int status = system(cmd);
        cr_assert_eq(status, 0, "%s", read_text(log, text, sizeof(text)) ? text : "");
        /* Neither blocks on a lock the waiting init would hold. */
        snprintf(cmd, sizeof(cmd), "timeout 10 %s --root %s state c5 >/dev/null 2>&1",
                 test_psrun_path(), B.root);
        cr_expect_eq(system(cmd), 0, "state blocked or failed");
        snprintf(cmd, sizeof(cmd), "timeout 10 %s --root %s start c5 >/dev/null 2>&1",
                 test_psrun_path(), B.root);
        cr_assert_eq(system(cmd), 0, "start blocked or failed");
        cr_expect(wait_status("c5", "stopped", 10000));
        cr_assert(read_text(log, text, sizeof(text)));
        /* The caller's 3 and 7; nothing of psrun's (its state root, the
         * lock, cgroup directories, sockets). */
        cr_expect(contains(text, " 3 -> /dev/null") && contains(text, " 7 -> /dev/null"),
                  "the caller's fds: %s", text);
        cr_expect(!contains(text, B.root) && !contains(text, "cgroup") &&
                          !contains(text, "socket:") && !contains(text, "pipe:"),
                  "an fd of psrun's passed on: %s", text);
        snprintf(cmd, sizeof(cmd), "timeout 10 %s --root %s delete --force c5 >/dev/null 2>&1",
                 test_psrun_path(), B.root);
        cr_expect_eq(system(cmd), 0, "delete blocked or failed");
        cr_expect_str_eq(oci_status("c5"), "");
}

/* A directory <own cgroup>/<B.cgroup>/<id> left in any hierarchy (v1
 * mounts named by their controllers, cgroup2 at unified or the top). */
static bool cgroup_left(const char *id, char *where, size_t len)
{
        FILE *f = fopen("/proc/self/cgroup", "re");
        char line[1024];
        bool left = false;
        cr_assert_not_null(f);
        while (!left && fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\n")] = '\0';
                char *c1 = strchr(line, ':'), *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
                if (!c2 || strncmp(c1 + 1, "name=", 5) == 0)
                        continue;
                *c2 = '\0';
                const char *own = strcmp(c2 + 1, "/") == 0 ? "" : c2 + 1;
                if (c1[1]) {
                        snprintf(where, len, "/sys/fs/cgroup/%s%s/%s/%s", c1 + 1, own, B.cgroup,
                                 id);
                } else {
                        snprintf(where, len, "/sys/fs/cgroup/unified%s/%s/%s", own, B.cgroup, id);
                        if (access("/sys/fs/cgroup/unified", F_OK) != 0)
                                snprintf(where, len, "/sys/fs/cgroup%s/%s/%s", own, B.cgroup, id);
                }
                left = access(where, F_OK) == 0;
        }
        fclose(f);
        return left;
}

/* The first entry of the state root (a container's directory, or a
 * temporary one), if any. */
static bool root_entry_left(char *name, size_t len)
{
        DIR *d = opendir(B.root);
        name[0] = '\0';
        if (!d)
                return false;
        struct dirent *de;
        while ((de = readdir(d)))
                if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
                        snprintf(name, len, "%s", de->d_name);
                        break;
                }
        closedir(d);
        return name[0] != '\0';
}

/* Issue 10: a create killed at any stage leaves a state from which delete
 * --force (and psrun gc, for one whose creator died) removes everything:
 * processes, every cgroup, the state directory. Before, a create killed
 * after making its cgroups left 9 directories behind. */
Test(oci_lifecycle, killed_create_leaves_nothing_after_delete_or_gc, .timeout = 120)
{
        static const char *const stages[] = {
                "create:temp",   "create:state", "create:planned",  "create:cgroups",
                "create:cloned", "create:pid",   "create:released", "create:ready",
        };
        struct out o;
        char dir[256];
        for (size_t i = 0; i < sizeof(stages) / sizeof(stages[0]); i++) {
                for (int use_gc = 0; use_gc < 2; use_gc++) {
                        bundle_config("k1", NULL);
                        setenv("PSRUN_TEST_KILL_AT", stages[i], 1);
                        int status = psrun(&o, NULL, "create", "--bundle", B.dir, "k1", NULL);
                        unsetenv("PSRUN_TEST_KILL_AT");
                        cr_expect_eq(status, 128 + SIGKILL, "%s: %s", stages[i], o.err);
                        if (use_gc) {
                                cr_expect_eq(psrun(&o, NULL, "gc", NULL), 0, "%s: %s", stages[i],
                                             o.err);
                                cr_expect(contains(o.out, ", 1 OCI container whose creator died"),
                                          "%s: %s", stages[i], o.out);
                        } else {
                                cr_expect_eq(psrun(&o, NULL, "delete", "--force", "k1", NULL), 0,
                                             "%s: %s", stages[i], o.err);
                        }
                        reap_children();
                        cr_expect_str_eq(oci_status("k1"), "", "%s: state left", stages[i]);
                        char left[256];
                        cr_expect(!root_entry_left(left, sizeof(left)),
                                  "%s (%s): %s left in the root", stages[i],
                                  use_gc ? "gc" : "delete --force", left);
                        cr_expect(!cgroup_left("k1", dir, sizeof(dir)), "%s (%s): %s left",
                                  stages[i], use_gc ? "gc" : "delete --force", dir);
                }
        }
}

/* What a create killed between making its temporary directory and renaming
 * it leaves: gc took such a directory only once it was 10 s old, so a gc or
 * a check right after the kill found it (the soak tier's random kills did).
 * A lock file is now seen only once held, so a free one means a dead create:
 * taken at once. Without a lock file (a create between its mkdir and its
 * lock, or killed there) or with a held one, the directory stays. */
Test(oci_lifecycle, gc_takes_a_dead_creates_temporary_directory_at_once)
{
        struct out o;
        bundle_config("t1", &(struct cfg){.args = "[\"true\"]"});
        cr_assert_eq(psrun(&o, NULL, "run", "--bundle", B.dir, "t1", NULL), 0, "%s", o.err);
        static const char *const names[] = {".new~00000000000000a1", ".new~00000000000000b2",
                                            ".new~00000000000000c3"};
        char path[512];
        for (size_t i = 0; i < 3; i++) {
                snprintf(path, sizeof(path), "%s/%s", B.root, names[i]);
                cr_assert_eq(mkdir(path, 0700), 0, "%s: %s", path, strerror(errno));
        }
        snprintf(path, sizeof(path), "%s/%s/lock", B.root, names[0]);
        int dead = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        cr_assert_geq(dead, 0);
        close(dead);
        snprintf(path, sizeof(path), "%s/%s/lock", B.root, names[2]);
        int held = open(path, O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
        cr_assert_geq(held, 0);
        cr_assert_eq(flock(held, LOCK_EX), 0);
        cr_expect_eq(psrun(&o, NULL, "gc", NULL), 0, "%s", o.err);
        bool left[3];
        for (size_t i = 0; i < 3; i++) {
                snprintf(path, sizeof(path), "%s/%s", B.root, names[i]);
                left[i] = access(path, F_OK) == 0;
        }
        close(held);
        cr_expect(!left[0], "a temporary directory with a free lock was left");
        cr_expect(left[1], "a young one without a lock (its create may be alive) was taken");
        cr_expect(left[2], "one whose lock is held was taken");
}

/* Issue 10: psrun gc removes OCI containers whose creator died, "without
 * touching live ones": a created container waiting for start, a running
 * one and a stopped one (its creator exited normally) keep their state,
 * cgroups and processes. */
Test(oci_lifecycle, gc_leaves_live_containers_alone)
{
        struct out o;
        char dir[256];
        bundle_config("waiting", NULL);
        cr_assert_eq(psrun(&o, NULL, "create", "--bundle", B.dir, "waiting", NULL), 0, "%s", o.err);
        oci_up("running", NULL);
        oci_up("stopped", &(struct cfg){.args = "[\"true\"]"});
        cr_assert(wait_status("stopped", "stopped", 10000), "%s", oci_status("stopped"));
        int waiting_pid = oci_pid("waiting"), running_pid = oci_pid("running");
        cr_assert_eq(psrun(&o, NULL, "gc", NULL), 0, "%s", o.err);
        cr_expect(contains(o.out, " 0 OCI containers whose creator died"),
                  "gc removed a live container: %s", o.out);
        cr_expect_str_eq(oci_status("waiting"), "created");
        cr_expect_str_eq(oci_status("running"), "running");
        cr_expect_str_eq(oci_status("stopped"), "stopped");
        cr_expect_eq(oci_pid("waiting"), waiting_pid);
        cr_expect_eq(kill(waiting_pid, 0), 0, "gc killed a created container's init");
        cr_expect_eq(kill(running_pid, 0), 0, "gc killed a running container's init");
        cr_expect(cgroup_left("waiting", dir, sizeof(dir)), "gc removed waiting's cgroups");
        cr_expect(cgroup_left("running", dir, sizeof(dir)), "gc removed running's cgroups");
        cr_expect_eq(psrun(&o, NULL, "start", "waiting", NULL), 0, "%s", o.err);
}

/* Issue 10: a config with ~4.5 MB of annotations was accepted, and then
 * state and delete --force failed ("state.json: larger than 4 MiB"). It
 * is refused at create, naming the field, and leaves nothing. */
Test(oci_lifecycle, oversize_annotations_refused_at_create)
{
        struct out o;
        char path[400], dir[256];
        bundle_config("big", NULL);
        snprintf(path, sizeof(path), "%s/config.json", B.dir);
        FILE *f = fopen(path, "r");
        cr_assert_not_null(f);
        char *config = NULL;
        size_t cap = 0;
        cr_assert_gt(getdelim(&config, &cap, '\0', f), 0);
        fclose(f);
        f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs("{\"annotations\":{", f);
        for (int i = 0; i < 45000; i++)
                fprintf(f, "%s\"org.example/k%05d\":\"%080d\"", i ? "," : "", i, i);
        fprintf(f, "},%s", strchr(config, '{') + 1);
        fclose(f);
        free(config);
        cr_expect_eq(psrun(&o, NULL, "create", "--bundle", B.dir, "big", NULL), 1);
        cr_expect(contains(o.err, "annotations: "), "%s", o.err);
        cr_expect(contains(o.err, "more than the 512 KiB psrun keeps"), "%s", o.err);
        cr_expect_str_eq(oci_status("big"), "");
        cr_expect(!cgroup_left("big", dir, sizeof(dir)), "%s left", dir);
        cr_expect_eq(psrun(&o, NULL, "list", "-q", NULL), 0, "%s", o.err);
        cr_expect_str_eq(o.out, "");
}

/* Issue 10: delete --force of a container in a frozen cgroup thaws and
 * kills, whether psrun paused it or someone froze it behind its back, and
 * whether init is still there or not. */
Test(oci_lifecycle, delete_force_of_frozen_container)
{
        struct out o;
        char freezer[256], dir[256], path[300];
        /* One process: a second one in the pid namespace would keep init
         * exiting until this test, its subreaper, reaps it, which it does
         * only after delete returns (the containerd shim reaps at once). */
        oci_up("f1", NULL);
        cr_assert_eq(psrun(&o, NULL, "pause", "f1", NULL), 0, "%s", o.err);
        cr_expect_str_eq(oci_status("f1"), "paused");
        cr_assert_eq(psrun(&o, NULL, "delete", "--force", "f1", NULL), 0, "%s", o.err);
        reap_children();
        cr_expect_str_eq(oci_status("f1"), "");
        cr_expect(!cgroup_left("f1", dir, sizeof(dir)), "%s left", dir);

        /* Frozen through the freezer directly, init killed while frozen. */
        oci_up("f2", NULL);
        if (!oci_cgroup_dir("f2", "freezer", freezer, sizeof(freezer))) {
                cr_log_warn("no v1 freezer: the direct-freeze half is skipped");
                return;
        }
        snprintf(path, sizeof(path), "%s/freezer.state", freezer);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs("FROZEN", f);
        fclose(f);
        kill(oci_pid("f2"), SIGKILL);
        cr_assert_eq(psrun(&o, NULL, "delete", "--force", "f2", NULL), 0, "%s", o.err);
        reap_children();
        cr_expect_str_eq(oci_status("f2"), "");
        cr_expect(!cgroup_left("f2", dir, sizeof(dir)), "%s left", dir);
}
