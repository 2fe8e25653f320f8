/* SPDX-License-Identifier: MIT */
/* Bytes with fds attached (common/fdpass.h). */
#include "common/fdpass.h"

#include <errno.h>
#include <string.h>
#include <sys/socket.h>

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
