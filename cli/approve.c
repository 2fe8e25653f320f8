/* SPDX-License-Identifier: MIT */
/* An approver command (cli/approve.h). */
#include "cli/approve.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/fileio.h"

__attribute__((format(printf, 2, 3))) static int refuse(psrun_approval *a, const char *fmt, ...)
{
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(a->reason, sizeof(a->reason), fmt, ap);
        va_end(ap);
        return 0;
}

int approve_by_command(void *userdata, psrun_approval *a)
{
        const struct approve_cmd *ac = userdata;
        /* The command as messages show it: at most 80 characters. */
        char cmd[84];
        snprintf(cmd, sizeof(cmd), "%s", ac->cmd);
        if (strlen(ac->cmd) > 80)
                memcpy(cmd + 77, "...", 4);
        /* Its stdin a socket: the action is sent with MSG_NOSIGNAL, so an
         * approver that exits without reading it cannot SIGPIPE us. */
        int in[2], out[2];
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, in) < 0)
                return refuse(a, "the approver command `%s` could not start (pipe: %s)", cmd,
                              strerror(errno));
        if (pipe2(out, O_CLOEXEC) < 0) {
                close(in[0]);
                close(in[1]);
                return refuse(a, "the approver command `%s` could not start (pipe: %s)", cmd,
                              strerror(errno));
        }
        char *const argv[] = {"/bin/sh", "-c", (char *) ac->cmd, NULL};
        extern char **environ;
        int pidfd = -1;
        /* A plain fork: the child only moves fds and execs. Its own process
         * group, so a timeout kills whatever it started too. */
        pid_t pid = fork();
        if (pid == 0) {
                setpgid(0, 0);
                dup2(in[0], 0);
                dup2(out[1], 1);
                signal(SIGPIPE, SIG_DFL);
                execve(argv[0], argv, environ);
                _exit(127);
        }
        close(in[0]);
        close(out[1]);
        if (pid < 0) {
                close(in[1]);
                close(out[0]);
                return refuse(a, "the approver command `%s` could not start (fork: %s)", cmd,
                              strerror(errno));
        }
        pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        /* The action, then EOF: it fits the socket's buffer, so this cannot
         * block. */
        (void) send(in[1], a->json, strlen(a->json), MSG_NOSIGNAL);
        (void) send(in[1], "\n", 1, MSG_NOSIGNAL);
        close(in[1]);
        (void) fcntl(out[0], F_SETFL, O_NONBLOCK);
        char said[256];
        size_t got = 0;
        uint64_t deadline = monotonic_ms() + ac->timeout_ms;
        bool exited = false, timed_out = false;
        int out_fd = out[0];
        while (!exited) {
                uint64_t now = monotonic_ms();
                if (now >= deadline) {
                        timed_out = true;
                        break;
                }
                struct pollfd pfd[2] = {{pidfd, POLLIN, 0}, {out_fd, POLLIN, 0}};
                int n = poll(pfd, 2, (int) (deadline - now));
                if (n < 0 && errno != EINTR)
                        break;
                if (n <= 0)
                        continue;
                if (pfd[1].revents) {
                        char buf[512];
                        ssize_t k = read(out_fd, buf, sizeof(buf));
                        if (k > 0 && got < sizeof(said) - 1) {
                                size_t take = (size_t) k < sizeof(said) - 1 - got
                                                      ? (size_t) k
                                                      : sizeof(said) - 1 - got;
                                memcpy(said + got, buf, take);
                                got += take;
                        } else if (k == 0 || (k < 0 && errno != EAGAIN && errno != EINTR)) {
                                out_fd = -1; /* EOF: keep waiting for the exit */
                        }
                }
                if (pfd[0].revents)
                        exited = true;
        }
        if (!exited) {
                /* Its group while its leader is not reaped yet: the id
                 * cannot have been reused. */
                (void) kill(-pid, SIGKILL);
                (void) kill(pid, SIGKILL);
        }
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        close(out[0]);
        safe_close(pidfd);
        said[got] = '\0';
        said[strcspn(said, "\r\n")] = '\0';
        if (timed_out)
                return refuse(a, "the approver command `%s` did not answer within %llu s", cmd,
                              (unsigned long long) ((ac->timeout_ms + 999) / 1000));
        if (WIFSIGNALED(status))
                return refuse(a, "the approver command `%s` was killed by signal %d", cmd,
                              WTERMSIG(status));
        if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
                return 1;
        int code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        refuse(a, "the approver command `%s` refused (exit %d)", cmd, code);
        if (said[0]) {
                size_t len = strlen(a->reason);
                snprintf(a->reason + len, sizeof(a->reason) - len, ": %s", said);
        }
        return 0;
}
