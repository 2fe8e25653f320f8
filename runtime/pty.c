/* SPDX-License-Identifier: MIT */
/*
 * The child's half of a container terminal (--console-socket, see
 * runtime/pty.h): make a pty in the container's devpts, send its master to
 * the socket, make the slave the controlling terminal. Runs between clone3()
 * and execve(): syscalls and string functions only.
 */
#include "runtime/pty.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/openat2.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <termios.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fdpass.h"

#ifndef TIOCGPTPEER
#define TIOCGPTPEER _IO('T', 0x41)
#endif

/* Async-signal-safe. The data must not be empty: on a stream socket, an
 * fd sent with zero bytes is dropped. */
static int send_fd(int sock, int fd, const char *data)
{
        size_t len = strlen(data), off = 0;
        bool fd_sent = false;
        while (off < len) {
                /* MSG_NOSIGNAL (fdpass adds it): a peer that went away is an
                 * error, not a SIGPIPE killing the container's init. */
                ssize_t n = fdpass_send(sock, data + off, len - off, &fd, fd_sent ? 0 : 1, 0);
                if (n < 0)
                        return (int) n;
                fd_sent = true;
                off += (size_t) n;
        }
        return 0;
}

int oci_console_setup(int socket_fd, const char *ptmx_path, const struct oci_console_size *size,
                      int *ret_slave)
{
        _cleanup_close_ int sock = socket_fd;
        int unlock = 0;

        if (!ptmx_path || !ptmx_path[0])
                return -EINVAL;
        /* The image may have made /dev/ptmx a link: no magic links (no
         * /proc/self/fd/N of a host fd this process holds), and it must be
         * the pty multiplexer, 5:2, whatever path reached it. */
        struct open_how how = {.flags = O_RDWR | O_NOCTTY | O_CLOEXEC,
                               .resolve = RESOLVE_NO_MAGICLINKS};
        _cleanup_close_ int master =
                (int) syscall(SYS_openat2, AT_FDCWD, ptmx_path, &how, sizeof(how));
        if (master < 0)
                return -errno;
        struct stat st;
        if (fstat(master, &st) < 0)
                return -errno;
        if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(5, 2))
                return -ENODEV;
        if (ioctl(master, TIOCSPTLCK, &unlock) < 0)
                return -errno;
        /* The peer of this very master (Linux 4.13+; psrun needs 5.3 for
         * clone3 anyway): no path lookup in a devpts the container could
         * have replaced. */
        _cleanup_close_ int slave = ioctl(master, TIOCGPTPEER, O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (slave < 0)
                return -errno;
        if (size) {
                struct winsize ws = {.ws_row = size->height, .ws_col = size->width};
                if (ioctl(slave, TIOCSWINSZ, &ws) < 0)
                        return -errno;
        }
        int r = send_fd(sock, master, ptmx_path);
        if (r < 0)
                return r;
        *ret_slave = TAKE_FD(slave);
        return 0;
}

int oci_console_attach(int slave_fd)
{
        /* A fresh clone is never a session leader; init of a new pid
         * namespace sees getsid(0) == 0 (its session is outside). */
        if (getsid(0) != getpid() && setsid() < 0)
                return -errno;
        if (ioctl(slave_fd, TIOCSCTTY, 0) < 0)
                return -errno;
        for (int target = 0; target <= 2; target++) {
                if (target == slave_fd) {
                        /* dup2() onto itself would keep O_CLOEXEC. */
                        if (fcntl(target, F_SETFD, 0) < 0)
                                return -errno;
                } else if (dup2(slave_fd, target) < 0) {
                        return -errno;
                }
        }
        if (slave_fd > 2)
                close(slave_fd);
        return 0;
}
