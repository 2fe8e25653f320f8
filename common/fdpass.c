/* SPDX-License-Identifier: MIT */
/* Bytes with fds attached (common/fdpass.h). */
#include "common/fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

ssize_t fdpass_sendv(int sock, const struct iovec *iov, size_t n_iov, const int *fds, size_t n_fds,
                     int flags)
{
        if (n_fds > FDPASS_MAX)
                return -EINVAL;
        union {
                char buf[CMSG_SPACE(FDPASS_MAX * sizeof(int))];
                struct cmsghdr align;
        } u;
        memset(&u, 0, sizeof(u));
        struct msghdr msg = {.msg_iov = (struct iovec *) iov, .msg_iovlen = n_iov};
        if (n_fds > 0) {
                msg.msg_control = u.buf;
                msg.msg_controllen = CMSG_SPACE(n_fds * sizeof(int));
                struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(n_fds * sizeof(int));
                memcpy(CMSG_DATA(c), fds, n_fds * sizeof(int));
        }
        ssize_t n;
        do
                n = sendmsg(sock, &msg, flags | MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        return n < 0 ? -errno : n;
}

ssize_t fdpass_send(int sock, const void *buf, size_t len, const int *fds, size_t n_fds, int flags)
{
        struct iovec iov = {.iov_base = (void *) buf, .iov_len = len};
        return fdpass_sendv(sock, &iov, 1, fds, n_fds, flags);
}

ssize_t fdpass_recv(int sock, void *buf, size_t len, struct fdpass_in *in, int flags)
{
        *in = (struct fdpass_in){.n_fds = 0};
        for (size_t i = 0; i < FDPASS_MAX; i++)
                in->fds[i] = -1;
        union {
                char buf[CMSG_SPACE(FDPASS_MAX * sizeof(int)) + CMSG_SPACE(sizeof(struct ucred))];
                struct cmsghdr align;
        } u;
        struct iovec iov = {.iov_base = buf, .iov_len = len};
        struct msghdr msg = {.msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = u.buf,
                             .msg_controllen = sizeof(u.buf)};
        ssize_t n;
        do
                n = recvmsg(sock, &msg, flags | MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        bool dropped = false;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
                if (c->cmsg_level != SOL_SOCKET)
                        continue;
                if (c->cmsg_type == SCM_RIGHTS) {
                        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        for (size_t i = 0; i < k; i++) {
                                int fd;
                                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                                if (in->n_fds < FDPASS_MAX) {
                                        in->fds[in->n_fds++] = fd;
                                } else {
                                        close(fd);
                                        dropped = true;
                                }
                        }
                } else if (c->cmsg_type == SCM_CREDENTIALS &&
                           c->cmsg_len >= CMSG_LEN(sizeof(struct ucred))) {
                        struct ucred cred;
                        memcpy(&cred, CMSG_DATA(c), sizeof(cred));
                        in->sender = cred.pid;
                }
        }
        in->truncated = dropped || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) != 0;
        return n;
}

void fdpass_close(struct fdpass_in *in, size_t from)
{
        for (size_t i = from; i < in->n_fds; i++) {
                close(in->fds[i]);
                in->fds[i] = -1;
        }
        if (from < in->n_fds)
                in->n_fds = from;
}
