/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Bytes with file descriptors attached (SCM_RIGHTS), the one way every part
 * of psrun sends an fd over a socket. Async-signal-safe (no allocation):
 * the child between clone3 and execve uses it.
 */
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

/* At most this many fds in one message. */
#define FDPASS_MAX 4

/* One sendmsg of the iov with fds[0..n_fds) attached (none when n_fds is
 * 0), retried on EINTR; flags as sendmsg's (MSG_NOSIGNAL is always
 * added). The bytes sent, or -errno (-EINVAL for more than FDPASS_MAX). */
ssize_t fdpass_sendv(int sock, const struct iovec *iov, size_t n_iov, const int *fds, size_t n_fds,
                     int flags);

/* The same for one buffer. */
ssize_t fdpass_send(int sock, const void *buf, size_t len, const int *fds, size_t n_fds, int flags);

/* What came with a message. */
struct fdpass_in {
        int fds[FDPASS_MAX]; /* in the order sent, close-on-exec; -1 past n_fds */
        size_t n_fds;
        pid_t sender;   /* SCM_CREDENTIALS (SO_PASSCRED on the socket): its pid here; 0 */
        bool truncated; /* the data or the fds did not all fit (MSG_TRUNC, MSG_CTRUNC) */
};

/* One recvmsg into buf, retried on EINTR; flags as recvmsg's
 * (MSG_CMSG_CLOEXEC is always added). Up to FDPASS_MAX fds are kept in
 * *in; any more are closed (here or by the kernel), and truncated says
 * so. The bytes received (0: end of file), or -errno with nothing kept. */
ssize_t fdpass_recv(int sock, void *buf, size_t len, struct fdpass_in *in, int flags);

/* Closes in's fds from index `from` on (0: all). */
void fdpass_close(struct fdpass_in *in, size_t from);
