/* SPDX-License-Identifier: MIT */
/*
 * common/fdpass: what is sent is what comes, fds in order and
 * close-on-exec, the sender's pid with SO_PASSCRED, and what does not fit
 * closed and said (truncated), never left open in the receiver.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/fdpass.h"

static void pair(int sv[2])
{
        cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv), 0);
}

static ino_t ino_of(int fd)
{
        struct stat st;
        cr_assert_eq(fstat(fd, &st), 0);
        return st.st_ino;
}

static int open_fds(void)
{
        int n = 0;
        for (int fd = 0; fd < 1024; fd++)
                if (fcntl(fd, F_GETFD) >= 0)
                        n++;
        return n;
}

Test(fdpass, bytes_and_fds_in_order)
{
        int sv[2], p[2], q[2];
        pair(sv);
        cr_assert_eq(pipe(p), 0);
        cr_assert_eq(pipe(q), 0);
        int send_fds[3] = {p[0], q[1], p[1]};
        cr_assert_eq(fdpass_send(sv[0], "hello", 5, send_fds, 3, 0), 5);
        char buf[16] = "";
        struct fdpass_in in;
        cr_assert_eq(fdpass_recv(sv[1], buf, sizeof(buf), &in, 0), 5);
        cr_expect_str_eq(buf, "hello");
        cr_assert_eq(in.n_fds, 3);
        cr_expect(!in.truncated);
        for (int i = 0; i < 3; i++) {
                cr_expect_eq(ino_of(in.fds[i]), ino_of(send_fds[i]), "fd %d out of order", i);
                cr_expect(fcntl(in.fds[i], F_GETFD) & FD_CLOEXEC);
        }
        cr_expect_eq(in.fds[3], -1);
        fdpass_close(&in, 0);
        cr_expect_eq(in.n_fds, 0);
        close(p[0]), close(p[1]), close(q[0]), close(q[1]), close(sv[0]), close(sv[1]);
}

Test(fdpass, no_fds_and_two_buffers)
{
        int sv[2];
        pair(sv);
        struct iovec iov[2] = {{"ab", 2}, {"cd", 2}};
        cr_assert_eq(fdpass_sendv(sv[0], iov, 2, NULL, 0, 0), 4);
        char buf[8] = "";
        struct fdpass_in in;
        cr_assert_eq(fdpass_recv(sv[1], buf, sizeof(buf), &in, 0), 4);
        cr_expect_str_eq(buf, "abcd");
        cr_expect_eq(in.n_fds, 0);
        cr_expect_eq(in.sender, 0);
        close(sv[0]), close(sv[1]);
}

Test(fdpass, more_than_the_maximum_is_refused_to_send)
{
        int sv[2];
        pair(sv);
        int fds[FDPASS_MAX + 1];
        for (int i = 0; i < FDPASS_MAX + 1; i++)
                fds[i] = sv[0];
        cr_expect_eq(fdpass_send(sv[0], "x", 1, fds, FDPASS_MAX + 1, 0), -EINVAL);
        close(sv[0]), close(sv[1]);
}

/* A peer that sends more fds than the receiver keeps: none stays open here
 * beyond those kept, and the message says it was cut. */
Test(fdpass, what_does_not_fit_is_closed_and_said)
{
        int sv[2];
        pair(sv);
        int before = open_fds();
        int many[8];
        for (int i = 0; i < 8; i++)
                many[i] = sv[0];
        char cbuf[CMSG_SPACE(sizeof(many))] = {0};
        struct iovec iov = {"y", 1};
        struct msghdr msg = {.msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = cbuf,
                             .msg_controllen = sizeof(cbuf)};
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(many));
        memcpy(CMSG_DATA(c), many, sizeof(many));
        cr_assert_eq(sendmsg(sv[0], &msg, 0), 1);
        char buf[1];
        struct fdpass_in in;
        cr_assert_eq(fdpass_recv(sv[1], buf, sizeof(buf), &in, 0), 1);
        cr_expect(in.truncated);
        cr_expect_eq(in.n_fds, FDPASS_MAX);
        cr_expect_eq(open_fds(), before + FDPASS_MAX);
        fdpass_close(&in, 0);
        cr_expect_eq(open_fds(), before);
        close(sv[0]), close(sv[1]);
}

Test(fdpass, the_senders_pid_with_passcred)
{
        int sv[2];
        pair(sv);
        int on = 1;
        cr_assert_eq(setsockopt(sv[1], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)), 0);
        cr_assert_eq(fdpass_send(sv[0], "z", 1, NULL, 0, 0), 1);
        char buf[1];
        struct fdpass_in in;
        cr_assert_eq(fdpass_recv(sv[1], buf, sizeof(buf), &in, 0), 1);
        cr_expect_eq(in.sender, getpid());
        close(sv[0]), close(sv[1]);
}

Test(fdpass, end_of_file_and_errors)
{
        int sv[2];
        pair(sv);
        close(sv[0]);
        char buf[1];
        struct fdpass_in in;
        cr_expect_eq(fdpass_recv(sv[1], buf, sizeof(buf), &in, 0), 0);
        cr_expect_eq(fdpass_recv(-1, buf, sizeof(buf), &in, 0), -EBADF);
        cr_expect_eq(fdpass_send(sv[1], "x", 1, NULL, 0, 0), -EPIPE, "no SIGPIPE, an error");
        close(sv[1]);
}
