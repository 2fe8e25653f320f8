/* SPDX-License-Identifier: MIT */
/*
 * linux.seccomp.listenerPath: a seccomp agent (a child of the test) gets
 * each process's listener with the container process state, and answers
 * the notifications; the container's processes never hold the listener.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "oci/oci_test.h"

TestSuite(oci_seccomp_agent, .init = bundle_setup, .fini = bundle_teardown, .timeout = 60);

static char agent_sock[400], agent_log[400];
static pid_t agent_pid;

/* Answers every notification with EXDEV, so that the command shows it was
 * the agent's answer; logs each connection's message, one per line. */
static void agent_loop(int lfd, FILE *log)
{
        struct pollfd p[9] = {{lfd, POLLIN, 0}};
        size_t n = 1;
        for (;;) {
                if (poll(p, n, -1) < 0)
                        _exit(1);
                if (p[0].revents && n < 9) {
                        int c = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
                        char buf[65536] = "";
                        char ctl[CMSG_SPACE(sizeof(int))];
                        struct iovec iov = {buf, sizeof(buf) - 1};
                        struct msghdr mh = {.msg_iov = &iov,
                                            .msg_iovlen = 1,
                                            .msg_control = ctl,
                                            .msg_controllen = sizeof(ctl)};
                        ssize_t len = c >= 0 ? recvmsg(c, &mh, MSG_CMSG_CLOEXEC) : -1;
                        struct cmsghdr *cm = len > 0 ? CMSG_FIRSTHDR(&mh) : NULL;
                        int fd = -1;
                        if (cm && cm->cmsg_type == SCM_RIGHTS)
                                memcpy(&fd, CMSG_DATA(cm), sizeof(fd));
                        fprintf(log, "%s fd=%s\n", len > 0 ? buf : "", fd >= 0 ? "yes" : "no");
                        fflush(log);
                        if (fd >= 0)
                                p[n++] = (struct pollfd){fd, POLLIN, 0};
                        if (c >= 0)
                                close(c);
                }
                for (size_t i = 1; i < n; i++) {
                        if (!(p[i].revents & POLLIN))
                                continue;
                        struct seccomp_notif req;
                        memset(&req, 0, sizeof(req));
                        if (ioctl(p[i].fd, SECCOMP_IOCTL_NOTIF_RECV, &req) < 0)
                                continue;
                        struct seccomp_notif_resp resp = {.id = req.id, .error = -EXDEV};
                        (void) ioctl(p[i].fd, SECCOMP_IOCTL_NOTIF_SEND, &resp);
                }
        }
}

static void agent_start(void)
{
        snprintf(agent_sock, sizeof(agent_sock), "%s/agent.sock", B.dir);
        snprintf(agent_log, sizeof(agent_log), "%s/agent.log", B.dir);
        int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", agent_sock);
        cr_assert_eq(bind(lfd, (struct sockaddr *) &sa, sizeof(sa)), 0, "%s", strerror(errno));
        cr_assert_eq(listen(lfd, 8), 0);
        FILE *log = fopen(agent_log, "we");
        cr_assert_not_null(log);
        agent_pid = fork();
        cr_assert_geq(agent_pid, 0);
        if (agent_pid == 0)
                agent_loop(lfd, log);
        fclose(log);
        close(lfd);
}

static void agent_stop(void)
{
        if (agent_pid > 0) {
                kill(agent_pid, SIGKILL);
                waitpid(agent_pid, NULL, 0);
        }
        agent_pid = 0;
}

static const char *agent_said(void)
{
        static char text[65536];
        if (!read_text(agent_log, text, sizeof(text)))
                text[0] = '\0';
        return text;
}

/* The config's seccomp: allow all, mkdir and mkdirat to the agent. */
static const char *seccomp_with(const char *listener)
{
        static char extra[1024];
        snprintf(extra, sizeof(extra),
                 ",\"seccomp\":{\"defaultAction\":\"SCMP_ACT_ALLOW\",%s"
                 "\"syscalls\":[{\"names\":[\"mkdir\",\"mkdirat\"],"
                 "\"action\":\"SCMP_ACT_NOTIFY\"}]}",
                 listener);
        return extra;
}

Test(oci_seccomp_agent, the_agent_answers_and_gets_the_process_state)
{
        agent_start();
        char listener[600];
        snprintf(listener, sizeof(listener),
                 "\"listenerPath\":\"%s\",\"listenerMetadata\":\"meta-1\",", agent_sock);
        bundle_config("c1", &(struct cfg){.args = "[\"sh\",\"-c\",\"mkdir /tmp/x 2>&1; echo rc=$?; "
                                                  "ls -l /proc/self/fd/\"]",
                                          .linux_extra = seccomp_with(listener)});
        struct out o;
        int r = psrun(&o, NULL, "run", "--bundle", B.dir, "c1", NULL);
        const char *said = agent_said();
        agent_stop();
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "Invalid cross-device link") && contains(o.out, "rc=1"),
                  "not the agent's answer: %s", o.out);
        cr_expect(!contains(o.out, "seccomp"), "the container holds a listener: %s", o.out);
        cr_expect(contains(said, "\"fds\":[\"seccompFd\"]") &&
                          contains(said, "\"metadata\":\"meta-1\"") &&
                          contains(said, "\"status\": \"creating\"") &&
                          contains(said, "\"id\": \"c1\"") && contains(said, " fd=yes"),
                  "%s", said);
        char bundle[300];
        snprintf(bundle, sizeof(bundle), "\"bundle\": \"%s\"", B.dir);
        cr_expect(contains(said, bundle), "%s", said);
}

Test(oci_seccomp_agent, an_exec_s_listener_goes_to_the_agent_too)
{
        agent_start();
        char listener[600];
        snprintf(listener, sizeof(listener), "\"listenerPath\":\"%s\",", agent_sock);
        oci_up("c1", &(struct cfg){.linux_extra = seccomp_with(listener)});
        struct out o;
        int r = psrun(&o, NULL, "exec", "c1", "sh", "-c", "mkdir /tmp/y 2>&1; echo rc=$?", NULL);
        const char *said = agent_said();
        struct out k;
        (void) psrun(&k, NULL, "delete", "--force", "c1", NULL);
        agent_stop();
        cr_assert_eq(r, 0, "%s", o.err);
        cr_expect(contains(o.out, "Invalid cross-device link") && contains(o.out, "rc=1"), "%s",
                  o.out);
        cr_expect(contains(said, "\"status\": \"creating\"") &&
                          contains(said, "\"status\": \"running\""),
                  "one message per process: %s", said);
}

Test(oci_seccomp_agent, no_agent_and_no_listener_are_errors)
{
        char listener[600];
        snprintf(listener, sizeof(listener), "\"listenerPath\":\"%s/none.sock\",", B.dir);
        bundle_config("c1",
                      &(struct cfg){.args = "[\"true\"]", .linux_extra = seccomp_with(listener)});
        struct out o;
        int r = psrun(&o, NULL, "create", "--bundle", B.dir, "c1", NULL);
        cr_expect_neq(r, 0);
        cr_expect(contains(o.err, "linux.seccomp.listenerPath: connect to the seccomp agent"), "%s",
                  o.err);
        cr_expect_str_eq(oci_status("c1"), "", "a container is left");
        reap_children();

        bundle_config("c2", &(struct cfg){.args = "[\"true\"]", .linux_extra = seccomp_with("")});
        r = psrun(&o, NULL, "create", "--bundle", B.dir, "c2", NULL);
        cr_expect_neq(r, 0);
        cr_expect(contains(o.err, "SCMP_ACT_NOTIFY needs a listener"), "%s", o.err);
        cr_expect_str_eq(oci_status("c2"), "");
}

Test(oci_seccomp_agent, an_agent_that_never_accepts_is_a_timeout_not_a_hang)
{
        /* Backlog 0 and one connection already waiting: the next connect
         * would wait for an accept that never comes. */
        snprintf(agent_sock, sizeof(agent_sock), "%s/stuck.sock", B.dir);
        int lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", agent_sock);
        cr_assert_eq(bind(lfd, (struct sockaddr *) &sa, sizeof(sa)), 0, "%s", strerror(errno));
        cr_assert_eq(listen(lfd, 0), 0);
        int filler = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        cr_assert_eq(connect(filler, (struct sockaddr *) &sa, sizeof(sa)), 0, "%s",
                     strerror(errno));
        char listener[600];
        snprintf(listener, sizeof(listener), "\"listenerPath\":\"%s\",", agent_sock);
        bundle_config("c1",
                      &(struct cfg){.args = "[\"true\"]", .linux_extra = seccomp_with(listener)});
        struct out o;
        time_t t0 = time(NULL);
        int r = psrun(&o, NULL, "create", "--bundle", B.dir, "c1", NULL);
        time_t took = time(NULL) - t0;
        close(filler);
        close(lfd);
        cr_expect_neq(r, 0);
        cr_expect(contains(o.err, "connect to the seccomp agent") && contains(o.err, "timed out"),
                  "%s", o.err);
        cr_expect(took < 30, "took %lds", (long) took);
        cr_expect_str_eq(oci_status("c1"), "", "a container is left");
        reap_children();
}
