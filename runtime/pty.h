/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The child's half of a container terminal (process.terminal with
 * --console-socket; the protocol is in runtime/oci/console.h). It runs in the
 * child between clone3() and execve(), so it lives beside the child and not
 * in runtime/oci/.
 */

#include <stdint.h>

/* process.consoleSize: the pty's window size. */
struct oci_console_size {
        uint16_t height;
        uint16_t width;
};

/* Child side, async-signal-safe (no allocation, no stdio, no locks). Opens
 * ptmx_path (O_RDWR|O_NOCTTY|O_CLOEXEC), unlocks the pty, opens its slave
 * with TIOCGPTPEER (no path lookup: the slave is of ptmx_path's devpts),
 * sets the window size when size is not NULL, sends the master over
 * socket_fd and closes it. Takes socket_fd: it is closed on
 * return, success or not. Returns 0 with *ret_slave (O_CLOEXEC), or -errno. */
int oci_console_setup(int socket_fd, const char *ptmx_path, const struct oci_console_size *size,
                      int *ret_slave);

/* Child side, async-signal-safe. Makes slave_fd the controlling terminal of
 * the calling process (setsid() first unless it leads its session already;
 * a process group leader that is not a session leader gets -EPERM) and dups
 * it onto 0, 1 and 2 (without O_CLOEXEC); slave_fd itself is closed if > 2. */
int oci_console_attach(int slave_fd);
