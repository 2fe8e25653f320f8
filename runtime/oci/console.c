/* SPDX-License-Identifier: MIT */
/*
 * The --console-socket contract (see console.h): connect in the parent and
 * receive the master on the other side. The child's half (make the pty, send
 * its master, attach the slave) is runtime/pty.c.
 */
#include "runtime/oci/console.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/time.h>
#include <sys/un.h>
#include <termios.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fdpass.h"

/* Every ptmx, whatever devpts instance it belongs to, is this device. */
#define PTMX_MAJOR 5
#define PTMX_MINOR 2

/* How long connecting to --console-socket may wait for its listener. */
#define CONSOLE_CONNECT_TIMEOUT_S 5

int oci_console_connect(const char *socket_path, int *ret_fd, psrun_error *err)
{
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        _cleanup_close_ int path_fd = -1;
        char proc_path[64];
        const char *target = socket_path;

        if (!socket_path || !socket_path[0])
                return psrun_error_set(err, EINVAL, "console socket: empty path");
        _cleanup_close_ int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return psrun_error_errno(err, errno, "console socket %s: socket", socket_path);
        if (strlen(socket_path) >= sizeof(addr.sun_path)) {
                /* sun_path holds 108 bytes. The magic link to an O_PATH fd
                 * of the socket file resolves to the same inode, without
                 * chdir() (which would race with other threads). */
                path_fd = open(socket_path, O_PATH | O_CLOEXEC);
                if (path_fd < 0)
                        return psrun_error_errno(err, errno, "console socket %s: connect",
                                                 socket_path);
                snprintf(proc_path, sizeof(proc_path), "/proc/self/fd/%d", path_fd);
                target = proc_path;
        }
        /* A listener that never accepts (its backlog full) would keep
         * connect() waiting for ever: a unix socket's connect waits at most
         * the send timeout. */
        struct timeval wait = {.tv_sec = CONSOLE_CONNECT_TIMEOUT_S};
        if (setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &wait, sizeof(wait)) < 0)
                return psrun_error_errno(err, errno, "console socket %s: socket", socket_path);
        size_t len = strlen(target);
        memcpy(addr.sun_path, target, len);
        while (connect(fd, (struct sockaddr *) &addr,
                       (socklen_t) (offsetof(struct sockaddr_un, sun_path) + len + 1)) < 0) {
                if (errno == EAGAIN)
                        return psrun_error_set(err, ETIMEDOUT,
                                               "console socket %s: connect: nobody accepted "
                                               "within %d s",
                                               socket_path, CONSOLE_CONNECT_TIMEOUT_S);
                if (errno != EINTR)
                        return psrun_error_errno(err, errno, "console socket %s: connect",
                                                 socket_path);
        }
        *ret_fd = TAKE_FD(fd);
        return 0;
}

static int recv_connected(int sock, int *ret_master, char *name, size_t name_len, psrun_error *err)
{
        char data[4096];
        struct fdpass_in in;
        struct stat st;

        ssize_t n = fdpass_recv(sock, data, sizeof(data), &in, 0);
        if (n < 0)
                return psrun_error_errno(err, (int) n, "console socket: receive");
        const int *fds = in.fds;
        size_t n_fds = in.n_fds;
        if (in.truncated) {
                fdpass_close(&in, 0);
                return psrun_error_set(
                        err, EPROTO, "console socket: too many fds or too long a message received");
        }
        if (n == 0 && n_fds == 0)
                return psrun_error_set(err, ECONNRESET,
                                       "console socket: closed before a terminal was sent");
        if (n_fds != 1) {
                fdpass_close(&in, 0);
                return psrun_error_set(err, EPROTO,
                                       "console socket: expected one terminal fd, got %zu", n_fds);
        }
        if (fstat(fds[0], &st) < 0 || !S_ISCHR(st.st_mode) || major(st.st_rdev) != PTMX_MAJOR ||
            minor(st.st_rdev) != PTMX_MINOR) {
                close(fds[0]);
                return psrun_error_set(err, EPROTO,
                                       "console socket: the fd received is not a pty master");
        }
        if (name && name_len) {
                size_t k = (size_t) n < name_len - 1 ? (size_t) n : name_len - 1;
                memcpy(name, data, k);
                name[k] = '\0';
        }
        *ret_master = fds[0];
        return 0;
}

int oci_console_recv(int fd, int *ret_master, char *name, size_t name_len, psrun_error *err)
{
        int listening = 0;
        socklen_t len = sizeof(listening);

        if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) < 0)
                return psrun_error_errno(err, errno, "console socket");
        if (!listening)
                return recv_connected(fd, ret_master, name, name_len, err);

        _cleanup_close_ int conn = -1;
        while ((conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC)) < 0)
                if (errno != EINTR)
                        return psrun_error_errno(err, errno, "console socket: accept");
        return recv_connected(conn, ret_master, name, name_len, err);
}
