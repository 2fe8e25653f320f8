/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The terminal of a container with process.terminal = true, as runc does it
 * for --console-socket:
 *
 *   parent  oci_console_connect(path) before clone; the fd goes to the child
 *           (keep it open across clone, close it in the parent afterwards).
 *   child   (runtime/pty.h) after the container's /dev/pts (devpts,
 *           newinstance) is mounted
 *           and before dropping privileges:
 *             oci_console_setup(fd, "/dev/ptmx", size, &slave)
 *               a pty of the container's own devpts; the master goes over the
 *               socket (SCM_RIGHTS, one fd, the data is ptmx_path as runc
 *               sends "/dev/ptmx"), then master and socket are closed here;
 *             oci_console_attach(slave)
 *               setsid() if needed, the slave becomes the controlling
 *               terminal and fds 0, 1 and 2.
 *   peer    (containerd's shim, `recvtty`, tests) oci_console_recv().
 *
 * The pty's termios are left as the kernel makes them (ONLCR on): runc leaves
 * them too, and its receiving side clears ONLCR if it wants.
 */

#include <stddef.h>

#include "common/error.h"
#include "runtime/pty.h"

/* Connects a SOCK_STREAM unix socket to socket_path (any length: a path that
 * does not fit in sun_path is reached through /proc/self/fd). *ret_fd is
 * O_CLOEXEC. Errors name the path: "console socket /x/y: connect: No such
 * file or directory". */
int oci_console_connect(const char *socket_path, int *ret_fd, psrun_error *err);

/* Receives the master sent by oci_console_setup. fd is a connected socket, or
 * a listening one: one connection is then accepted (and closed after). The
 * message data (NUL-terminated, truncated to fit) goes to name when not NULL.
 * *ret_master is O_CLOEXEC. -EPROTO if the peer sent no fd or more than one,
 * -ECONNRESET if it closed without sending. */
int oci_console_recv(int fd, int *ret_master, char *name, size_t name_len, psrun_error *err);
