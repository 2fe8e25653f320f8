/* SPDX-License-Identifier: MIT */
/*
 * The console socket: a forked child plays the container's init (setup +
 * attach, then writes on its stdout), the test plays containerd's shim
 * (receives the master and reads). One test mounts a devpts instance of its
 * own, as a container's /dev/pts: root.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "lib/testlib.h"
#include "runtime/oci/console.h"

static char tmp_dir[PATH_MAX];

static void setup(void)
{
        test_tmp_template(tmp_dir, sizeof(tmp_dir), "psrun-oci-console");
        cr_assert_not_null(mkdtemp(tmp_dir), "mkdtemp: %s", strerror(errno));
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
        (void) st;
        (void) flag;
        (void) ftw;
        return remove(path) < 0 && errno != ENOENT ? -1 : 0;
}

static void teardown(void)
{
        umount2(tmp_dir, MNT_DETACH);
        nftw(tmp_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
}

TestSuite(oci_console, .init = setup, .fini = teardown, .timeout = 30);

/* ---- the container side, in a forked child ---- */

enum child_fail {
        CHILD_OK,
        CHILD_SETUP,
        CHILD_DEVPTS,
        CHILD_ATTACH,
        CHILD_ISATTY,
        CHILD_DEV_TTY,
        CHILD_CTTY,
        CHILD_WINSIZE,
        CHILD_WRITE,
};

struct child_spec {
        const char *ptmx;
        const struct oci_console_size *size;
        dev_t want_dev; /* 0: don't check which devpts the slave is on */
        const char *say;
};

/* Exits with the first failed check, or CHILD_OK. */
static void __attribute__((noreturn)) container_side(int sock, const struct child_spec *spec)
{
        int slave;
        struct stat st;

        if (oci_console_setup(sock, spec->ptmx, spec->size, &slave) < 0)
                _exit(CHILD_SETUP);
        if (spec->want_dev && (fstat(slave, &st) < 0 || st.st_dev != spec->want_dev))
                _exit(CHILD_DEVPTS);
        if (oci_console_attach(slave) < 0)
                _exit(CHILD_ATTACH);
        if (!isatty(0) || !isatty(1) || !isatty(2))
                _exit(CHILD_ISATTY);
        /* /dev/tty opens only for a process with a controlling terminal. */
        int tty = open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
        if (tty < 0)
                _exit(CHILD_DEV_TTY);
        close(tty);
        if (tcgetsid(0) != getsid(0) || getsid(0) != getpid() || tcgetpgrp(0) != getpgrp())
                _exit(CHILD_CTTY);
        if (spec->size) {
                struct winsize ws;
                if (ioctl(1, TIOCGWINSZ, &ws) < 0 || ws.ws_row != spec->size->height ||
                    ws.ws_col != spec->size->width)
                        _exit(CHILD_WINSIZE);
        }
        size_t len = strlen(spec->say);
        if (write(1, spec->say, len) != (ssize_t) len)
                _exit(CHILD_WRITE);
        /* Stay until the parent has read: a pty loses unread output when its
         * last slave closes. */
        char c;
        (void) !read(0, &c, 1);
        _exit(CHILD_OK);
}

static pid_t fork_container(int sock, int other, const struct child_spec *spec)
{
        pid_t pid = fork();
        cr_assert_geq(pid, 0, "fork: %s", strerror(errno));
        if (pid == 0) {
                if (other >= 0)
                        close(other);
                container_side(sock, spec);
        }
        return pid;
}

/* Reads from the master until want shows up (true) or 5 s pass. */
static bool read_until(int master, const char *want, char *got, size_t size)
{
        size_t n = 0;
        got[0] = '\0';
        while (n + 1 < size) {
                struct pollfd p = {.fd = master, .events = POLLIN};
                if (poll(&p, 1, 5000) <= 0)
                        return false;
                ssize_t k = read(master, got + n, size - n - 1);
                if (k <= 0)
                        return false;
                n += (size_t) k;
                got[n] = '\0';
                if (strstr(got, want))
                        return true;
        }
        return false;
}

static void finish_container(pid_t pid, int master)
{
        int status;
        /* A line on the terminal releases the child's read(0). */
        cr_assert_eq(write(master, "\n", 1), 1);
        cr_assert_eq(waitpid(pid, &status, 0), pid);
        cr_assert(WIFEXITED(status), "status %#x", status);
        cr_assert_eq(WEXITSTATUS(status), CHILD_OK, "child failed check %d", WEXITSTATUS(status));
}

/* ---- tests ---- */

Test(oci_console, pty_over_socketpair)
{
        int sv[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        const struct oci_console_size size = {.height = 33, .width = 101};
        const struct child_spec spec = {.ptmx = "/dev/ptmx", .size = &size, .say = "hello\n"};
        pid_t pid = fork_container(sv[1], sv[0], &spec);
        close(sv[1]);

        psrun_error err = {0};
        int master = -1;
        char name[64];
        cr_assert_eq(oci_console_recv(sv[0], &master, name, sizeof(name), &err), 0, "%s", err.msg);
        close(sv[0]);
        cr_assert_str_eq(name, "/dev/ptmx");
        cr_assert(fcntl(master, F_GETFD) & FD_CLOEXEC);

        char got[256];
        cr_assert(read_until(master, "hello", got, sizeof(got)), "read \"%s\"", got);
        struct winsize ws;
        cr_assert_eq(ioctl(master, TIOCGWINSZ, &ws), 0);
        cr_assert_eq(ws.ws_row, 33);
        cr_assert_eq(ws.ws_col, 101);
        finish_container(pid, master);
        close(master);
}

Test(oci_console, without_size)
{
        int sv[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        const struct child_spec spec = {.ptmx = "/dev/ptmx", .say = "no size\n"};
        pid_t pid = fork_container(sv[1], sv[0], &spec);
        close(sv[1]);

        psrun_error err = {0};
        int master = -1;
        cr_assert_eq(oci_console_recv(sv[0], &master, NULL, 0, &err), 0, "%s", err.msg);
        char got[256];
        cr_assert(read_until(master, "no size", got, sizeof(got)), "read \"%s\"", got);
        finish_container(pid, master);
        close(master);
        close(sv[0]);
}

/* The container's own devpts: the slave is of that instance (its first pty),
 * not of the host's /dev/pts. */
Test(oci_console, own_devpts_instance)
{
        test_require_root();
        cr_assert_eq(unshare(CLONE_NEWNS), 0, "unshare: %s", strerror(errno));
        cr_assert_eq(mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL), 0);
        if (mount("devpts", tmp_dir, "devpts", MS_NOSUID | MS_NOEXEC,
                  "newinstance,ptmxmode=0666,mode=0620") < 0)
                cr_skip_test("mount devpts: %s", strerror(errno));
        struct stat st;
        cr_assert_eq(stat(tmp_dir, &st), 0);
        char ptmx[PATH_MAX];
        snprintf(ptmx, sizeof(ptmx), "%s/ptmx", tmp_dir);

        int sv[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        const struct oci_console_size size = {.height = 5, .width = 7};
        const struct child_spec spec = {
                .ptmx = ptmx, .size = &size, .want_dev = st.st_dev, .say = "inside\n"};
        pid_t pid = fork_container(sv[1], sv[0], &spec);
        close(sv[1]);

        psrun_error err = {0};
        int master = -1;
        char name[PATH_MAX];
        cr_assert_eq(oci_console_recv(sv[0], &master, name, sizeof(name), &err), 0, "%s", err.msg);
        cr_assert_str_eq(name, ptmx);
        unsigned int index = 99;
        cr_assert_eq(ioctl(master, TIOCGPTN, &index), 0);
        cr_assert_eq(index, 0, "the first pty of a fresh instance");
        char got[256];
        cr_assert(read_until(master, "inside", got, sizeof(got)), "read \"%s\"", got);
        finish_container(pid, master);
        close(master);
        close(sv[0]);
}

/* Binds a listening socket at a path of any length (the test's own trick:
 * bind through the directory's magic link). */
static int listen_at(const char *dir, const char *name)
{
        _cleanup_close_ int dfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        cr_assert_geq(dfd, 0, "open %s: %s", dir, strerror(errno));
        struct sockaddr_un addr = {.sun_family = AF_UNIX};
        snprintf(addr.sun_path, sizeof(addr.sun_path), "/proc/self/fd/%d/%s", dfd, name);
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        cr_assert_geq(fd, 0);
        cr_assert_eq(bind(fd, (struct sockaddr *) &addr, sizeof(addr)), 0, "bind: %s",
                     strerror(errno));
        cr_assert_eq(listen(fd, 1), 0);
        return fd;
}

static void connect_and_receive(const char *dir, const char *sock_path, const char *say)
{
        _cleanup_close_ int listen_fd = listen_at(dir, "console.sock");
        psrun_error err = {0};
        int fd = -1;
        cr_assert_eq(oci_console_connect(sock_path, &fd, &err), 0, "%s", err.msg);
        cr_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);

        /* The pty turns "\n" into "\r\n" (ONLCR): look for the words. */
        char line[128];
        snprintf(line, sizeof(line), "%s\n", say);
        const struct child_spec spec = {.ptmx = "/dev/ptmx", .say = line};
        pid_t pid = fork_container(fd, listen_fd, &spec);
        close(fd);

        int master = -1;
        char name[64];
        cr_assert_eq(oci_console_recv(listen_fd, &master, name, sizeof(name), &err), 0, "%s",
                     err.msg);
        cr_assert_str_eq(name, "/dev/ptmx");
        char got[256];
        cr_assert(read_until(master, say, got, sizeof(got)), "read \"%s\"", got);
        finish_container(pid, master);
        close(master);
}

Test(oci_console, listening_socket)
{
        char sock_path[PATH_MAX];
        snprintf(sock_path, sizeof(sock_path), "%s/console.sock", tmp_dir);
        connect_and_receive(tmp_dir, sock_path, "short path");
}

Test(oci_console, long_socket_path)
{
        char dir[PATH_MAX], sock_path[PATH_MAX];
        char a[81], b[81];
        memset(a, 'a', 80);
        a[80] = '\0';
        memset(b, 'b', 80);
        b[80] = '\0';
        snprintf(dir, sizeof(dir), "%s/%s", tmp_dir, a);
        cr_assert_eq(mkdir(dir, 0700), 0);
        snprintf(dir, sizeof(dir), "%s/%s/%s", tmp_dir, a, b);
        cr_assert_eq(mkdir(dir, 0700), 0);
        snprintf(sock_path, sizeof(sock_path), "%s/console.sock", dir);
        cr_assert_gt(strlen(sock_path), sizeof(((struct sockaddr_un *) 0)->sun_path));
        connect_and_receive(dir, sock_path, "long path");
}

Test(oci_console, missing_socket)
{
        char sock_path[PATH_MAX], want[PSRUN_ERROR_MSG_MAX];
        psrun_error err = {0};
        int fd = -1;

        snprintf(sock_path, sizeof(sock_path), "%s/nope.sock", tmp_dir);
        cr_assert_eq(oci_console_connect(sock_path, &fd, &err), -ENOENT);
        snprintf(want, sizeof(want), "console socket %s: connect: No such file or directory",
                 sock_path);
        cr_assert_str_eq(err.msg, want);
        cr_assert_eq(fd, -1);

        /* The same through the long-path route. */
        snprintf(sock_path, sizeof(sock_path), "%s/%0150d/nope.sock", tmp_dir, 0);
        cr_assert_eq(oci_console_connect(sock_path, &fd, &err), -ENOENT);
        snprintf(want, sizeof(want), "console socket %s: connect: No such file or directory",
                 sock_path);
        cr_assert_str_eq(err.msg, want);

        cr_assert_eq(oci_console_connect("", &fd, &err), -EINVAL);
        cr_assert_str_eq(err.msg, "console socket: empty path");
}

Test(oci_console, not_a_socket)
{
        char path[PATH_MAX];
        psrun_error err = {0};
        int fd = -1;

        snprintf(path, sizeof(path), "%s/file", tmp_dir);
        close(open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0600));
        cr_assert_eq(oci_console_connect(path, &fd, &err), -ECONNREFUSED);
        cr_assert(strstr(err.msg, path), "%s", err.msg);
}

Test(oci_console, setup_errors_close_the_socket)
{
        int sv[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        int slave = -1;
        cr_assert_eq(oci_console_setup(sv[1], "/nonexistent/ptmx", NULL, &slave), -ENOENT);
        cr_assert_eq(fcntl(sv[1], F_GETFD), -1, "socket left open");
        cr_assert_eq(slave, -1);

        /* The peer then sees the socket closed without a terminal. */
        psrun_error err = {0};
        int master = -1;
        cr_assert_eq(oci_console_recv(sv[0], &master, NULL, 0, &err), -ECONNRESET);
        cr_assert_str_eq(err.msg, "console socket: closed before a terminal was sent");
        close(sv[0]);
}

Test(oci_console, setup_peer_gone)
{
        int sv[2];
        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        close(sv[0]);
        int slave = -1;
        /* EPIPE, and no SIGPIPE killing the caller. */
        cr_assert_eq(oci_console_setup(sv[1], "/dev/ptmx", NULL, &slave), -EPIPE);
}

static void send_fds(int sock, const int *fds, size_t n, const char *data)
{
        char buf[CMSG_SPACE(sizeof(int) * 4)] = {0};
        struct iovec iov = {.iov_base = (char *) data, .iov_len = strlen(data)};
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
        if (n) {
                msg.msg_control = buf;
                msg.msg_controllen = CMSG_SPACE(sizeof(int) * n);
                struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * n);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * n);
        }
        cr_assert_eq(sendmsg(sock, &msg, 0), (ssize_t) strlen(data));
}

Test(oci_console, recv_rejects_bad_messages)
{
        psrun_error err = {0};
        int sv[2], master = -1;

        cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        send_fds(sv[1], NULL, 0, "/dev/ptmx");
        cr_assert_eq(oci_console_recv(sv[0], &master, NULL, 0, &err), -EPROTO);
        cr_assert_str_eq(err.msg, "console socket: expected one terminal fd, got 0");

        int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        send_fds(sv[1], &null_fd, 1, "/dev/null");
        cr_assert_eq(oci_console_recv(sv[0], &master, NULL, 0, &err), -EPROTO);
        cr_assert_str_eq(err.msg, "console socket: the fd received is not a pty master");

        int ptmx = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
        cr_assert_geq(ptmx, 0);
        int two[] = {ptmx, ptmx};
        send_fds(sv[1], two, 2, "/dev/ptmx");
        cr_assert_eq(oci_console_recv(sv[0], &master, NULL, 0, &err), -EPROTO);
        cr_assert_str_eq(err.msg, "console socket: expected one terminal fd, got 2");
        cr_assert_eq(master, -1);

        /* A name longer than the buffer is cut, NUL-terminated. */
        send_fds(sv[1], &ptmx, 1, "/dev/ptmx");
        char name[5];
        cr_assert_eq(oci_console_recv(sv[0], &master, name, sizeof(name), &err), 0, "%s", err.msg);
        cr_assert_str_eq(name, "/dev");
        close(master);
        close(ptmx);
        close(null_fd);
        close(sv[0]);
        close(sv[1]);
}

/* An image's /dev/ptmx that is a magic link (to an fd the child holds) or
 * another device: refused, never opened as the terminal. */
Test(oci_console, ptmx_link_or_other_device_refused)
{
        int held = open("/dev/ptmx", O_RDWR | O_NOCTTY | O_CLOEXEC);
        cr_assert_geq(held, 0);
        char magic[64];
        snprintf(magic, sizeof(magic), "/proc/self/fd/%d", held);
        const struct {
                const char *path;
                int err;
        } cases[] = {{magic, -ELOOP}, {"/dev/null", -ENODEV}};
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                int sv[2];
                cr_assert_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
                int slave = -1;
                cr_expect_eq(oci_console_setup(sv[1], cases[i].path, NULL, &slave), cases[i].err,
                             "%s", cases[i].path);
                cr_expect_eq(slave, -1);
                close(sv[0]);
        }
        close(held);
}
