/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Bytes with file descriptors attached (SCM_RIGHTS), the one way every part
 * of psrun sends an fd over a socket. Async-signal-safe (no allocation):
 * the child between clone3 and execve uses it.
 */
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
