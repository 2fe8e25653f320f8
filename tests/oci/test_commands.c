/* SPDX-License-Identifier: MIT */
/* exec, pause/resume, update, ps, list, events, features, spec, hooks and
 * the console socket. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "oci/oci_test.h"

TestSuite(oci_commands, .init = bundle_setup, .fini = bundle_teardown, .timeout = 60);

Test(oci_commands, exec_with_flags_and_process_json)
{
        struct out o;
        oci_up("c1", NULL);
        cr_assert_eq(psrun(&o, NULL, "exec", "--env", "FOO=bar", "--cwd", "/tmp", "--user",
                           "1000:1000", "c1", "sh", "-c", "echo $FOO; pwd; id -u; exit 5", NULL),
                     5, "%s", o.err);
        cr_expect(contains(o.out, "bar\n/tmp\n1000"), "%s", o.out);

        /* The process is in the container's namespaces and cgroup. */
        cr_assert_eq(psrun(&o, NULL, "exec", "c1", "hostname", NULL), 0, "%s", o.err);
        cr_expect(contains(o.out, "oci-test"), "%s", o.out);

        char path[400];
        snprintf(path, sizeof(path), "%s/process.json", B.dir);
        FILE *f = fopen(path, "w");
        cr_assert_not_null(f);
        fputs("{\"args\":[\"sh\",\"-c\",\"echo from-json $X\"],\"env\":[\"X=y\",\"PATH=/bin\"],"
              "\"cwd\":\"/\",\"user\":{\"uid\":0,\"gid\":0}}",
              f);
        fclose(f);
        cr_assert_eq(psrun(&o, NULL, "exec", "--process", path, "c1", NULL), 0, "%s", o.err);
        cr_expect(contains(o.out, "from-json y"), "%s", o.out);

        cr_expect_neq(psrun(&o, NULL, "exec", "c1", "no-such-program", NULL), 0);
        cr_expect(contains(o.err, "executable file not found"), "%s", o.err);

        /* Detached: the pid file names a process of the container. */
        snprintf(path, sizeof(path), "%s/exec.pid", B.dir);
        cr_assert_eq(psrun(&o, NULL, "exec", "-d", "--pid-file", path, "c1", "sleep", "100", NULL),
                     0, "%s", o.err);
        char text[32];
        cr_assert(read_text(path, text, sizeof(text)));
        cr_assert_eq(psrun(&o, NULL, "ps", "--format", "json", "c1", NULL), 0, "%s", o.err);
        cr_expect(contains(o.out, text), "exec'd %s not in %s", text, o.out);
        cr_expect(contains(o.out, "["), "%s", o.out);
}

Test(oci_commands, pause_resume_and_state)
{
        struct out o;
        oci_up("c1", NULL);
        cr_assert_eq(psrun(&o, NULL, "pause", "c1", NULL), 0, "%s", o.err);
        cr_expect_str_eq(oci_status("c1"), "paused");
        char path[64], text[512];
        snprintf(path, sizeof(path), "/proc/%d/stat", oci_pid("c1"));
        cr_assert(read_text(path, text, sizeof(text)));
        cr_expect(contains(strrchr(text, ')'), ") D") || contains(strrchr(text, ')'), ") S"), "%s",
                  text);
        cr_assert_eq(psrun(&o, NULL, "resume", "c1", NULL), 0, "%s", o.err);
        cr_expect_str_eq(oci_status("c1"), "running");
        cr_assert_eq(psrun(&o, NULL, "exec", "c1", "true", NULL), 0, "%s", o.err);
}

Test(oci_commands, update_limits)
{
        struct out o;
        oci_up("c1", NULL);
        cr_assert_eq(psrun(&o, NULL, "update", "--pids-limit", "7", "c1", NULL), 0, "%s", o.err);
        char dir[1024], path[1200], text[64];
        bool v1 = oci_cgroup_dir("c1", "pids", dir, sizeof(dir));
        if (!v1)
                cr_assert(oci_cgroup_dir("c1", "unified", dir, sizeof(dir)));
        snprintf(path, sizeof(path), "%s/pids.max", dir);
        cr_assert(read_text(path, text, sizeof(text)));
        cr_expect_str_eq(text, "7");
        cr_assert_eq(psrun(&o, "{\"pids\":{\"limit\":9},\"memory\":{\"limit\":100000000}}",
                           "update", "--resources", "-", "c1", NULL),
                     0, "%s", o.err);
        cr_assert(read_text(path, text, sizeof(text)));
        cr_expect_str_eq(text, "9");
        cr_expect_neq(psrun(&o, "{\"pids\":{\"limit\":\"x\"}}", "update", "-r", "-", "c1", NULL),
                      0);
        cr_expect(contains(o.err, "pids.limit"), "%s", o.err);
}

Test(oci_commands, ps_list_events)
{
        struct out o;
        oci_up("c1", NULL);
        oci_up("c2", NULL);
        cr_assert_eq(psrun(&o, NULL, "ps", "c1", NULL), 0, "%s", o.err);
        cr_expect(contains(o.out, "PID") && contains(o.out, "sleep 1000"), "%s", o.out);
        cr_assert_eq(psrun(&o, NULL, "list", NULL), 0, "%s", o.err);
        cr_expect(contains(o.out, "c1") && contains(o.out, "c2") && contains(o.out, "running"),
                  "%s", o.out);
        cr_assert_eq(psrun(&o, NULL, "list", "--format", "json", NULL), 0, "%s", o.err);
        cr_expect(contains(o.out, "\"id\":\"c1\"") && contains(o.out, "\"status\":\"running\""),
                  "%s", o.out);
        cr_assert_eq(psrun(&o, NULL, "events", "--stats", "c1", NULL), 0, "%s", o.err);
        cr_expect(contains(o.out, "\"type\":\"stats\"") &&
                          contains(o.out, "\"pids\":{\"current\":1"),
                  "%s", o.out);
}

Test(oci_commands, features_and_spec)
{
        struct out o;
        cr_assert_eq(psrun(&o, NULL, "features", NULL), 0, "%s", o.err);
        cr_expect(contains(o.out, "\"ociVersionMax\"") && contains(o.out, "\"hooks\""), "%s",
                  o.out);
        char cmd[600];
        snprintf(cmd, sizeof(cmd), "rm -f %s/config.json", B.dir);
        cr_assert_eq(system(cmd), 0);
        cr_assert_eq(psrun(&o, NULL, "spec", "--bundle", B.dir, NULL), 0, "%s", o.err);
        cr_expect_neq(psrun(&o, NULL, "spec", "--bundle", B.dir, NULL), 0, "spec overwrote");
        /* The default spec runs: without a terminal, as a one-shot. */
        snprintf(cmd, sizeof(cmd),
                 "sed -i -e 's/\"terminal\": true/\"terminal\": false/' -e 's/\"sh\"$/\"true\"/' "
                 "%s/config.json",
                 B.dir);
        cr_assert_eq(system(cmd), 0);
        /* its cgroup goes below ours: the default would be below the caller's */
        cr_expect_eq(psrun(&o, NULL, "run", "--bundle", B.dir, "spec1", NULL), 0, "%s", o.err);
}

Test(oci_commands, hooks_in_order_with_state_on_stdin)
{
        /* Every hook appends "<kind> <hostname> <state>" to one file: by
         * its host path but for startContainer, which runs in the
         * container's root (createContainer, in the container's namespaces
         * too, runs as before a pivot: in the runtime's root). The bundle's static busybox runs
         * them all, found by its host path but for startContainer, whose path resolves in the
         * container (runtime-spec). */
        struct out o;
        char log[400], busybox[400], hooks[8192];
        snprintf(log, sizeof(log), "%s/rootfs/tmp/hooks.log", B.dir);
        snprintf(busybox, sizeof(busybox), "%s/rootfs/bin/busybox", B.dir);
        static const struct {
                const char *kind;
                bool in_container;
        } kinds[] = {{"prestart", false},      {"createRuntime", false}, {"createContainer", true},
                     {"startContainer", true}, {"poststart", false},     {"poststop", false}};
        size_t off = 0;
        for (size_t i = 0; i < 6; i++)
                off += (size_t) snprintf(
                        hooks + off, sizeof(hooks) - off,
                        "%s\"%s\":[{\"path\":\"%s\",\"args\":[\"sh\",\"-c\",\"echo %s "
                        "$(hostname) $(cat | tr -d ' \\\\n') >> %s\"]}]",
                        i ? "," : "", kinds[i].kind,
                        strcmp(kinds[i].kind, "startContainer") == 0 ? "/bin/busybox" : busybox,
                        kinds[i].kind,
                        strcmp(kinds[i].kind, "startContainer") == 0 ? "/tmp/hooks.log" : log);
        bundle_config("c1", &(struct cfg){.hooks = hooks});
        cr_assert_eq(psrun(&o, NULL, "create", "--bundle", B.dir, "c1", NULL), 0, "%s", o.err);
        cr_assert_eq(psrun(&o, NULL, "start", "c1", NULL), 0, "%s", o.err);
        cr_assert_eq(psrun(&o, NULL, "delete", "--force", "c1", NULL), 0, "%s", o.err);
        char text[16384];
        cr_assert(read_text(log, text, sizeof(text)), "no hook wrote %s", log);
        const char *at = text;
        for (size_t i = 0; i < 6; i++) {
                char word[64];
                snprintf(word, sizeof(word), "%s %s {", kinds[i].kind,
                         kinds[i].in_container ? "oci-test" : "");
                const char *found = strstr(at, word);
                if (!kinds[i].in_container)
                        found = strstr(at, kinds[i].kind);
                cr_expect_not_null(found, "%s missing, out of order or in the wrong namespace:\n%s",
                                   kinds[i].kind, text);
                if (found)
                        at = found;
        }
        cr_expect(contains(text, "prestart"), "%s", text);
        cr_expect(contains(text, "{\"ociVersion\":\"1.2.0\",\"id\":\"c1\",\"pid\":"), "%s", text);
        cr_expect(contains(text, "\"status\":\"creating\""), "%s", text);
        cr_expect(contains(text, "\"status\":\"stopped\""), "%s", text);

        /* A failing prestart hook fails create and leaves nothing. */
        bundle_config("c2", &(struct cfg){.hooks = "\"prestart\":[{\"path\":\"/bin/sh\","
                                                   "\"args\":[\"sh\",\"-c\",\"echo no network "
                                                   ">&2; exit 3\"]}]"});
        cr_expect_neq(psrun(&o, NULL, "create", "--bundle", B.dir, "c2", NULL), 0);
        cr_expect(contains(o.err, "prestart[0]") && contains(o.err, "no network"), "%s", o.err);
        cr_expect_neq(psrun(&o, NULL, "state", "c2", NULL), 0);
}

Test(oci_commands, console_socket_gets_the_pty)
{
        char sock[400];
        snprintf(sock, sizeof(sock), "%s/console.sock", B.dir);
        int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock);
        cr_assert_eq(bind(lfd, (struct sockaddr *) &addr, sizeof(addr)), 0, "%s", strerror(errno));
        cr_assert_eq(listen(lfd, 1), 0);
        struct out o;
        /* Device rules as Docker writes them: deny all, allow a few. The pty
         * devices are among those a runtime allows after the config's. */
        bundle_config("c1", &(struct cfg){.terminal = true,
                                          .args = "[\"sh\",\"-c\",\"tty; test -t 0 && echo "
                                                  "is-a-tty; sleep 1000\"]",
                                          .linux_extra = ",\"resources\":{\"devices\":["
                                                         "{\"allow\":false,\"access\":\"rwm\"},"
                                                         "{\"allow\":true,\"type\":\"c\","
                                                         "\"major\":1,\"minor\":3,"
                                                         "\"access\":\"rwm\"}]}"});
        cr_expect_neq(psrun(&o, NULL, "create", "--bundle", B.dir, "c1", NULL), 0);
        cr_expect(contains(o.err, "console-socket"), "%s", o.err);
        cr_assert_eq(
                psrun(&o, NULL, "create", "--bundle", B.dir, "--console-socket", sock, "c1", NULL),
                0, "%s", o.err);
        int conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        cr_assert_geq(conn, 0);
        char data[64];
        char cbuf[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {data, sizeof(data)};
        struct msghdr msg = {.msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = cbuf,
                             .msg_controllen = sizeof(cbuf)};
        cr_assert_gt(recvmsg(conn, &msg, 0), 0);
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        cr_assert_not_null(cm);
        int master;
        memcpy(&master, CMSG_DATA(cm), sizeof(int));
        cr_assert_eq(psrun(&o, NULL, "start", "c1", NULL), 0, "%s", o.err);
        char text[4096] = "";
        size_t len = 0;
        for (int i = 0; i < 50 && !strstr(text, "is-a-tty"); i++) {
                struct pollfd p = {master, POLLIN, 0};
                if (poll(&p, 1, 100) > 0) {
                        ssize_t n = read(master, text + len, sizeof(text) - 1 - len);
                        if (n > 0)
                                len += (size_t) n;
                        text[len] = '\0';
                }
        }
        cr_expect(contains(text, "/dev/pts/0"), "%s", text);
        cr_expect(contains(text, "is-a-tty"), "%s", text);
        close(master);
        close(conn);
        close(lfd);
}

/* exec into a container with a user namespace: the process is in every
 * namespace of the container's init (the pid namespace too, which the exec's
 * child enters only for the process it makes), as mapped root, and its pid
 * in the pid file is the host's view of it. */
Test(oci_commands, exec_joins_every_namespace_of_a_user_namespaced_container)
{
        oci_up("c1",
               &(struct cfg){
                       .namespaces = "[{\"type\":\"pid\"},{\"type\":\"network\"},{\"type\":"
                                     "\"ipc\"},{\"type\":\"uts\"},{\"type\":\"mount\"},"
                                     "{\"type\":\"user\"}]",
                       .linux_extra = ",\"uidMappings\":[{\"containerID\":0,\"hostID\":200000,"
                                      "\"size\":65536}],\"gidMappings\":[{\"containerID\":0,"
                                      "\"hostID\":200000,\"size\":65536}]",
               });
        int init = oci_pid("c1");
        cr_assert_gt(init, 0);
        char want[600] = "";
        static const char *const kinds[] = {"user", "mnt", "pid", "net", "ipc", "uts"};
        for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
                char link[64], target[64] = "";
                snprintf(link, sizeof(link), "/proc/%d/ns/%s", init, kinds[i]);
                ssize_t n = readlink(link, target, sizeof(target) - 1);
                cr_assert_gt(n, 0, "%s", link);
                target[n] = '\0';
                strncat(want, target, sizeof(want) - strlen(want) - 2);
                strcat(want, "\n");
        }
        char pid_file[300];
        snprintf(pid_file, sizeof(pid_file), "%s/exec.pid", B.dir);
        struct out o;
        int r = psrun(&o, NULL, "exec", "--pid-file", pid_file, "c1", "sh", "-c",
                      "for k in user mnt pid net ipc uts; do readlink /proc/self/ns/$k; done; "
                      "id -u; echo $$",
                      NULL);
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(strncmp(o.out, want, strlen(want)) == 0, "namespaces:\n%s\nwant:\n%s", o.out,
                  want);
        cr_expect(contains(o.out + strlen(want), "0\n"), "not root of the container: %s", o.out);
        char text[64];
        cr_assert(read_text(pid_file, text, sizeof(text)), "no pid file");
        int host_pid = atoi(text), inner = 0;
        const char *last = strrchr(o.out, '\n');
        while (last > o.out && last[-1] != '\n')
                last--;
        inner = atoi(last);
        cr_expect(host_pid > 0 && host_pid != inner,
                  "pid file %d, pid inside %d: the pid file is not the host's view", host_pid,
                  inner);
}

/* exec --tty: the process's terminal is a pty made in the container (its
 * master goes to the console socket), and exec exits with its status. */
Test(oci_commands, exec_tty_gets_a_pty_and_the_status)
{
        char sock[400];
        snprintf(sock, sizeof(sock), "%s/exec-console.sock", B.dir);
        int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", sock);
        cr_assert_eq(bind(lfd, (struct sockaddr *) &addr, sizeof(addr)), 0, "%s", strerror(errno));
        cr_assert_eq(listen(lfd, 1), 0);
        oci_up("c1", NULL);
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                int null = open("/dev/null", O_RDWR);
                dup2(null, 0);
                dup2(null, 1);
                dup2(null, 2);
                execl(test_psrun_path(), test_psrun_path(), "--root", B.root, "exec", "--tty",
                      "--console-socket", sock, "c1", "sh", "-c",
                      "tty; test -t 0 && echo is-a-tty; sleep 0.5; exit 4", (char *) NULL);
                _exit(127);
        }
        struct pollfd lp = {lfd, POLLIN, 0};
        cr_assert_gt(poll(&lp, 1, 20000), 0, "exec never connected to the console socket");
        int conn = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        cr_assert_geq(conn, 0);
        char data[64];
        char cbuf[CMSG_SPACE(sizeof(int))];
        struct iovec iov = {data, sizeof(data)};
        struct msghdr msg = {.msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = cbuf,
                             .msg_controllen = sizeof(cbuf)};
        cr_assert_gt(recvmsg(conn, &msg, 0), 0);
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        cr_assert_not_null(cm);
        int master;
        memcpy(&master, CMSG_DATA(cm), sizeof(int));
        char text[4096] = "";
        size_t len = 0;
        for (int i = 0; i < 100 && !strstr(text, "is-a-tty"); i++) {
                struct pollfd p = {master, POLLIN, 0};
                if (poll(&p, 1, 100) > 0) {
                        ssize_t n = read(master, text + len, sizeof(text) - 1 - len);
                        if (n > 0)
                                len += (size_t) n;
                        text[len] = '\0';
                }
        }
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        close(master);
        close(conn);
        close(lfd);
        cr_expect(contains(text, "/dev/pts/"), "%s", text);
        cr_expect(contains(text, "is-a-tty"), "%s", text);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 4, "exec status %d", status);
}

Test(oci_commands, events_until_stop_update_flags_ps_options_kill_all)
{
        struct out o;
        /* events without --stats: one event per interval until it stops. */
        oci_up("c1", &(struct cfg){.args = "[\"sleep\",\"1\"]"});
        cr_assert_eq(psrun(&o, NULL, "events", "--interval", "200ms", "c1", NULL), 0, "%s", o.err);
        int events = 0;
        for (const char *at = o.out; (at = strstr(at, "\"type\":\"stats\"")); at++)
                events++;
        cr_expect_geq(events, 2, "%d events in about a second: %s", events, o.out);

        /* The classic update flags, as sizes. */
        oci_up("c2", NULL);
        cr_assert_eq(
                psrun(&o, NULL, "update", "--memory", "64m", "--memory-swap", "-1", "c2", NULL), 0,
                "%s", o.err);
        char dir[1024], path[1200] = "", text[64];
        if (oci_cgroup_dir("c2", "memory", dir, sizeof(dir)))
                snprintf(path, sizeof(path), "%s/memory.limit_in_bytes", dir);
        else if (oci_cgroup_dir("c2", "unified", dir, sizeof(dir)))
                snprintf(path, sizeof(path), "%s/memory.max", dir);
        cr_assert(read_text(path, text, sizeof(text)), "%s", path);
        cr_expect_str_eq(text, "67108864");
        cr_expect_neq(psrun(&o, NULL, "update", "--memory", "lots", "c2", NULL), 0);
        cr_expect(contains(o.err, "--memory"), "%s", o.err);

        /* ps with ps(1)'s own options: the chosen columns, our pid only. */
        cr_assert_eq(psrun(&o, NULL, "ps", "c2", "-o", "pid,comm", NULL), 0, "%s", o.err);
        cr_expect(contains(o.out, "PID") && contains(o.out, "sleep") && !contains(o.out, "UID"),
                  "%s", o.out);

        /* kill --all with a signal other than KILL reaches every process. */
        oci_up("c3", &(struct cfg){.args = "[\"sh\",\"-c\",\"trap 'exit 7' TERM; sleep 1000 & "
                                           "wait\"]"});
        int pid = oci_pid("c3");
        usleep(200000);
        cr_assert_eq(psrun(&o, NULL, "kill", "--all", "c3", "TERM", NULL), 0, "%s", o.err);
        int status;
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 7, "status %#x", status);
        cr_expect(wait_status("c3", "stopped", 2000));
        cr_assert_eq(psrun(&o, NULL, "ps", "--format", "json", "c3", NULL), 0, "%s", o.err);
        cr_expect_str_eq(o.out, "[]\n", "processes left: %s", o.out);
}

/* Issue 10: every number from argv is read whole, in range, or refused
 * naming the option, and nothing runs. Before, `exec --user 4294967296`
 * ran as uid 0, `99999999999` as 1215752191 and `65536x` as 65536. */
Test(oci_commands, hostile_numbers_refused_naming_the_option)
{
        static const char *const hostile[] = {"4294967296",  "-1",  "4294967295", "0x3e8",
                                              "99999999999", "1e3", "65536x",     ""};
        struct out o;
        char user[64];
        oci_up("c1", NULL);
        for (size_t i = 0; i < sizeof(hostile) / sizeof(hostile[0]); i++) {
                const char *v = hostile[i];
                cr_expect_eq(psrun(&o, NULL, "exec", "--user", v, "c1", "id", "-u", NULL), 1,
                             "--user %s: %s", v, o.out);
                cr_expect(contains(o.err, "--user: uid"), "--user %s: %s", v, o.err);
                snprintf(user, sizeof(user), "0:%s", v);
                cr_expect_eq(psrun(&o, NULL, "exec", "--user", user, "c1", "id", "-u", NULL), 1,
                             "--user %s: %s", user, o.out);
                cr_expect(contains(o.err, "--user: gid"), "--user %s: %s", user, o.err);
                cr_expect_eq(psrun(&o, NULL, "exec", "--preserve-fds", v, "c1", "true", NULL), 1);
                cr_expect(contains(o.err, "--preserve-fds"), "%s: %s", v, o.err);
                cr_expect_eq(psrun(&o, NULL, "update", "--pids-limit", v, "c1", NULL),
                             strcmp(v, "-1") == 0 ? 0 : 1, "--pids-limit %s: %s", v, o.err);
                cr_expect_eq(psrun(&o, NULL, "update", "--cpu-shares", v, "c1", NULL), 1, "%s", v);
                cr_expect(contains(o.err, "--cpu-shares"), "%s: %s", v, o.err);
                cr_expect_eq(psrun(&o, NULL, "update", "--blkio-weight", v, "c1", NULL), 1, "%s",
                             v);
                cr_expect_eq(psrun(&o, NULL, "events", "--stats", "--interval", v, "c1", NULL), 1,
                             "%s", v);
                cr_expect(contains(o.err, "--interval"), "%s: %s", v, o.err);
                if (*v) {
                        cr_expect_eq(psrun(&o, NULL, "kill", "c1", v, NULL), 1, "kill %s", v);
                        cr_expect(contains(o.err, "signal"), "%s: %s", v, o.err);
                }
        }
        cr_expect_str_eq(oci_status("c1"), "running");
        /* The largest id is taken as what it says. */
        cr_assert_eq(
                psrun(&o, NULL, "exec", "--user", "4294967294:4294967294", "c1", "id", "-u", NULL),
                0, "%s", o.err);
        cr_expect(contains(o.out, "4294967294"), "%s", o.out);
}
