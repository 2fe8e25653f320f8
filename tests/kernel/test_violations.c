/* SPDX-License-Identifier: MIT */
/*
 * The kernel's side of the violations report that needs no host-wide
 * setting: Landlock takes psrun's log flags (ABI 7) and still refuses what
 * it refused; a command's exec message brings its listener and its pid as
 * the supervisor sees it, from inside a pid namespace.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "lib/testlib.h"
#include "policy/landlock.h"
#include "runtime/launch.h"

TestSuite(violations_kernel, .init = test_require_root);

Test(violations_kernel, landlock_takes_the_log_flags_and_still_refuses)
{
        int abi = landlock_abi();
        if (abi < LANDLOCK_LOG_ABI)
                cr_skip_test("Landlock ABI %d has no log flags (ABI %d, Linux 6.15)", abi,
                             LANDLOCK_LOG_ABI);
        char dir[64];
        test_tmp_template(dir, sizeof(dir), "psrun-llog");
        cr_assert_not_null(mkdtemp(dir));
        const char *writable[] = {NULL}; /* writes nowhere */
        struct landlock_plan plan;
        psrun_error err = {0};
        cr_assert_eq(landlock_plan_default(&plan, writable, &err), 0, "%s", err.msg);
        plan.restrict_flags =
                LANDLOCK_LOG_SAME_EXEC_OFF | LANDLOCK_LOG_NEW_EXEC_ON | LANDLOCK_LOG_SUBDOMAINS_OFF;
        pid_t pid = fork();
        cr_assert_geq(pid, 0);
        if (pid == 0) {
                int failed = -1;
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
                        _exit(10);
                if (landlock_plan_apply(&plan, &failed) < 0)
                        _exit(11);
                char path[128];
                snprintf(path, sizeof(path), "%s/x", dir);
                int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
                _exit(fd < 0 && errno == EACCES ? 0 : 12);
        }
        int st;
        cr_assert_eq(waitpid(pid, &st, 0), pid);
        cr_expect(WIFEXITED(st), "status 0x%x", st);
        cr_expect_neq(WEXITSTATUS(st), 11, "landlock_restrict_self refused the log flags");
        cr_expect_eq(WEXITSTATUS(st), 0, "the write was not refused (exit %d)", WEXITSTATUS(st));
        landlock_plan_free(&plan);
        rmdir(dir);
}

Test(violations_kernel, the_exec_message_brings_the_listener_and_the_callers_view_of_the_pid)
{
        int sv[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
        int on = 1;
        cr_assert_eq(setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)), 0);
        int pipefd[2];
        cr_assert_eq(pipe2(pipefd, O_CLOEXEC), 0);
        /* The sender is pid 1 of a new pid namespace; we must see its pid
         * in ours. */
        pid_t outer = fork();
        cr_assert_geq(outer, 0);
        if (outer == 0) {
                if (unshare(CLONE_NEWPID) < 0)
                        _exit(20);
                pid_t inner = fork();
                if (inner < 0)
                        _exit(21);
                if (inner == 0) {
                        if (getpid() != 1)
                                _exit(22);
                        struct child_msg m = {.kind = CHILD_MSG_EXEC};
                        struct iovec iov = {&m, sizeof(m)};
                        union {
                                char buf[CMSG_SPACE(sizeof(int))];
                                struct cmsghdr align;
                        } u;
                        struct msghdr msg = {.msg_iov = &iov,
                                             .msg_iovlen = 1,
                                             .msg_control = u.buf,
                                             .msg_controllen = sizeof(u.buf)};
                        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
                        c->cmsg_level = SOL_SOCKET;
                        c->cmsg_type = SCM_RIGHTS;
                        c->cmsg_len = CMSG_LEN(sizeof(int));
                        memcpy(CMSG_DATA(c), &pipefd[1], sizeof(int));
                        _exit(sendmsg(sv[1], &msg, 0) == sizeof(m) ? 0 : 23);
                }
                /* Tell the test the inner child's pid in its namespace. */
                int st;
                dprintf(pipefd[1], "%d\n", inner);
                _exit(waitpid(inner, &st, 0) == inner && WIFEXITED(st) ? WEXITSTATUS(st) : 24);
        }
        close(sv[1]);
        int st;
        cr_assert_eq(waitpid(outer, &st, 0), outer);
        cr_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0, "sender failed: 0x%x", st);
        char buf[32] = "";
        cr_assert_gt(read(pipefd[0], buf, sizeof(buf) - 1), 0);
        pid_t inner = (pid_t) atoi(buf);

        struct child_msg m;
        int fd = -1;
        pid_t sender = 0;
        cr_assert_eq(launch_recv_msg(sv[0], &m, &fd, &sender), 1);
        cr_expect_eq(m.kind, CHILD_MSG_EXEC);
        cr_expect_eq(sender, inner, "sender %d, the child is %d here", sender, inner);
        cr_expect_geq(fd, 0);
        cr_expect(fcntl(fd, F_GETFD) & FD_CLOEXEC, "a received fd must be close-on-exec");
        close(fd);
        /* Nothing else waiting; then EOF. */
        cr_expect_eq(launch_recv_msg(sv[0], &m, &fd, &sender), 0);
        close(sv[0]);
        close(pipefd[0]);
        close(pipefd[1]);
}
