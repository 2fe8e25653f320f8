/* SPDX-License-Identifier: MIT */
/*
 * OCI hooks: one child per hook, fed the state JSON on a pipe, watched with
 * its pidfd and the pipes in one poll() loop so that a hook that does not
 * read, floods its output or never exits can stall nothing but its own
 * timeout. The contract is in oci-hooks.h.
 */
#include "runtime/oci/hooks.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/clone.h"
#include "common/signals.h"

#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* The tail of one output stream of the hook. */
struct capture {
        int fd; /* read end, non-blocking; -1 once at EOF */
        size_t len;
        char buf[OCI_HOOK_OUTPUT_MAX];
};

/* What the child needs, prepared by the parent: the child only reads it. */
struct hook_exec {
        const char *path;
        char *const *argv;
        char *const *envp;
        int stdin_fd, stdout_fd, stderr_fd; /* become 0, 1, 2 */
        int status_fd;                      /* gets errno if execve fails */
        /* In the container's namespaces: path opened (O_PATH) in ours, then
         * setns(ns_pidfd, ns_flags), then execveat() of that fd. */
        int path_fd;  /* -1: execve(path) */
        int ns_pidfd; /* -1: stay in ours */
        unsigned ns_flags;
        /* createContainer: the runtime's root and working directory, taken
         * again after the setns (runtime-spec: the hook runs before the
         * pivot, so it sees the runtime's files; psrun's init has pivoted
         * already). -1: the container's root. */
        int root_fd, cwd_fd;
};

struct hook_run {
        pid_t pid; /* 0: none, or reaped */
        int pidfd;
        int stdin_fd;  /* write end, non-blocking; -1 once closed */
        int status_fd; /* read end */
        int child_fds[4];
        struct capture out, err;
};

#define HOOK_RUN_INIT                                                                              \
        {                                                                                          \
                .pidfd = -1, .stdin_fd = -1, .status_fd = -1, .child_fds = {-1, -1, -1, -1},       \
                .out.fd = -1, .err.fd = -1,                                                        \
        }

static void close_fd(int *fd)
{
        closep(fd);
        *fd = -1;
}

static void kill_hook(struct hook_run *r)
{
        /* The group first: the hook's own children die with it. Then the
         * hook itself, should it have moved to another group. The pidfd
         * holds the pid, so neither can hit a recycled process. */
        (void) kill(-r->pid, SIGKILL);
        (void) syscall(SYS_pidfd_send_signal, r->pidfd, SIGKILL, NULL, 0);
}

static int reap_hook(struct hook_run *r, siginfo_t *si)
{
        memset(si, 0, sizeof(*si));
        while (waitid((idtype_t) P_PIDFD, (id_t) r->pidfd, si, WEXITED) < 0) {
                if (errno != EINTR) {
                        int e = errno;
                        r->pid = 0; /* nothing more we can do for it */
                        return -e;
                }
        }
        r->pid = 0;
        return 0;
}

/* Error paths leave no process behind and no zombie. */
static void hook_run_done(struct hook_run *r)
{
        siginfo_t si;

        if (r->pid > 0) {
                kill_hook(r);
                (void) reap_hook(r, &si);
        }
        close_fd(&r->pidfd);
        close_fd(&r->stdin_fd);
        close_fd(&r->status_fd);
        for (size_t i = 0; i < ARRAY_SIZE(r->child_fds); i++)
                close_fd(&r->child_fds[i]);
        close_fd(&r->out.fd);
        close_fd(&r->err.fd);
}

/* A pipe whose ends are both >= 3, so that the child's dup2() onto 0-2
 * cannot clobber one of them when the caller runs with 0-2 closed. */
static int pipe_above_stdio(int p[2])
{
        if (pipe2(p, O_CLOEXEC) < 0)
                return -errno;
        for (int i = 0; i < 2; i++) {
                if (p[i] >= 3)
                        continue;
                int moved = fcntl(p[i], F_DUPFD_CLOEXEC, 3);
                int e = errno;
                close(p[i]);
                p[i] = moved;
                if (moved < 0) {
                        close_fd(&p[!i]);
                        return -e;
                }
        }
        return 0;
}

/* open(), the fd moved to 5 or above: the hook's child puts the status
 * pipe on 3 and the program on 4 while it still needs these. */
static int open_above(const char *path, int flags)
{
        int fd = open(path, flags | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        if (fd >= 5)
                return fd;
        int moved = fcntl(fd, F_DUPFD_CLOEXEC, 5);
        int e = errno;
        close(fd);
        return moved < 0 ? -e : moved;
}

static int set_nonblocking(int fd)
{
        int flags = fcntl(fd, F_GETFL);
        if (flags < 0 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
                return -errno;
        return 0;
}

static void close_fds_from(int first)
{
        if (syscall(SYS_close_range, (unsigned) first, ~0U, 0) == 0)
                return;
        /* Kernels before 5.9. */
        struct rlimit rl;
        int max = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 65536 ? (int) rl.rlim_cur
                                                                            : 65536;
        for (int fd = first; fd < max; fd++)
                (void) close(fd);
}

/* Between clone3() and execve(): async-signal-safe only. */
static __attribute__((noreturn)) void hook_child(const struct hook_exec *x)
{
        sigset_t none;
        int status_fd = x->status_fd;

        /* Its own process group, so a timeout kills what the hook started. */
        (void) setpgid(0, 0);
        /* SIG_IGN and the mask survive execve(); the hook must start clean.
         * (Signals are all blocked until the handlers are gone: the
         * parent's handlers must not run in this copy of it.) */
        signals_reset_dispositions();
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);

        /* All four fds are >= 3 (pipe_above_stdio), so no dup2() here
         * overwrites a source still to be used. */
        if (dup2(x->stdin_fd, 0) < 0 || dup2(x->stdout_fd, 1) < 0 || dup2(x->stderr_fd, 2) < 0)
                goto fail;
        if (status_fd != 3) {
                if (dup3(status_fd, 3, O_CLOEXEC) < 0)
                        goto fail;
                status_fd = 3;
        }
        if (x->ns_pidfd >= 0 && x->path_fd < 0) {
                /* startContainer: the path is the container's, looked up
                 * once in its namespaces (and its root). */
                if (setns(x->ns_pidfd, (int) x->ns_flags) < 0)
                        goto fail;
                close_fds_from(4);
                execve(x->path, x->argv, x->envp);
                goto fail;
        }
        if (x->ns_pidfd >= 0) {
                /* The program was opened in the runtime's namespaces (where
                 * the spec resolves its path); the fd stays open across
                 * execveat, as a script's interpreter needs it. The root is
                 * the runtime's again, as before a pivot, so a dynamically
                 * linked host program finds its loader and libraries. */
                if (setns(x->ns_pidfd, (int) x->ns_flags) < 0)
                        goto fail;
                if (x->root_fd >= 0 &&
                    (fchdir(x->root_fd) < 0 || chroot(".") < 0 || fchdir(x->cwd_fd) < 0))
                        goto fail;
                if (dup2(x->path_fd, 4) < 0)
                        goto fail;
                close_fds_from(5);
                syscall(SYS_execveat, 4, "", x->argv, x->envp, AT_EMPTY_PATH);
                goto fail;
        }
        close_fds_from(4);
        execve(x->path, x->argv, x->envp);
fail:;
        int e = errno;
        (void) !write(status_fd, &e, sizeof(e));
        _exit(127);
}

static void capture_append(struct capture *c, const char *data, size_t n)
{
        if (n >= sizeof(c->buf)) {
                memcpy(c->buf, data + n - sizeof(c->buf), sizeof(c->buf));
                c->len = sizeof(c->buf);
                return;
        }
        if (c->len + n > sizeof(c->buf)) {
                size_t drop = c->len + n - sizeof(c->buf);
                memmove(c->buf, c->buf + drop, c->len - drop);
                c->len -= drop;
        }
        memcpy(c->buf + c->len, data, n);
        c->len += n;
}

/* Reads what is there, at most max_reads chunks: a process the hook left
 * behind may keep writing after the hook exited. */
static void capture_read(struct capture *c, int max_reads)
{
        char chunk[4096];

        for (int i = 0; c->fd >= 0 && i < max_reads; i++) {
                ssize_t n = read(c->fd, chunk, sizeof(chunk));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return;
                if (n <= 0) {
                        close_fd(&c->fd);
                        return;
                }
                capture_append(c, chunk, (size_t) n);
        }
}

static bool is_blank(char ch)
{
        return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\v' || ch == '\f';
}

/* The last non-empty line, made printable so the message stays one line. */
static void capture_last_line(const struct capture *c, char *buf, size_t size)
{
        size_t end = c->len, start, n = 0;

        while (end > 0 && is_blank(c->buf[end - 1]))
                end--;
        start = end;
        while (start > 0 && c->buf[start - 1] != '\n' && c->buf[start - 1] != '\r')
                start--;
        while (start < end && is_blank(c->buf[start]))
                start++;
        for (size_t i = start; i < end && n + 1 < size; i++) {
                unsigned char ch = (unsigned char) c->buf[i];
                buf[n++] = ch == '\t' ? ' ' : ch < 0x20 || ch == 0x7f ? '?' : (char) ch;
        }
        buf[n] = '\0';
}

/* Writes what the pipe takes now; closes it once all is written (the hook
 * sees EOF) or the hook closed its end (EPIPE: it may ignore its stdin). */
static void feed_stdin(struct hook_run *r, const char *data, size_t len, size_t *off)
{
        while (r->stdin_fd >= 0 && *off < len) {
                ssize_t n = write(r->stdin_fd, data + *off, len - *off);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return;
                if (n < 0)
                        break;
                *off += (size_t) n;
        }
        close_fd(&r->stdin_fd);
}

/* Until the hook exits (0) or the deadline (-1: none) passes (*timed_out). */
static int supervise(struct hook_run *r, const char *data, size_t len, int64_t deadline,
                     bool *timed_out)
{
        size_t off = 0;

        *timed_out = false;
        feed_stdin(r, data, len, &off);
        for (;;) {
                struct pollfd p[] = {
                        {.fd = r->pidfd, .events = POLLIN},
                        {.fd = r->stdin_fd, .events = POLLOUT},
                        {.fd = r->out.fd, .events = POLLIN},
                        {.fd = r->err.fd, .events = POLLIN},
                };
                int timeout_ms = -1;

                if (deadline >= 0) {
                        int64_t left = deadline - (int64_t) monotonic_ms();
                        if (left <= 0) {
                                *timed_out = true;
                                return 0;
                        }
                        timeout_ms = left > INT_MAX ? INT_MAX : (int) left;
                }
                if (poll(p, ARRAY_SIZE(p), timeout_ms) < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (p[1].revents)
                        feed_stdin(r, data, len, &off);
                if (p[2].revents)
                        capture_read(&r->out, 16);
                if (p[3].revents)
                        capture_read(&r->err, 16);
                if (p[0].revents) {
                        /* What it wrote before exiting is in the pipes. */
                        capture_read(&r->out, 16);
                        capture_read(&r->err, 16);
                        return 0;
                }
        }
}

static int start_hook(struct hook_run *r, const struct hook_exec *x)
{
        struct clone_args_v2 args = {
                .flags = CLONE_PIDFD,
                .pidfd = (uint64_t) (uintptr_t) &r->pidfd,
                .exit_signal = SIGCHLD,
        };
        sigset_t all, saved;

        /* No handler of ours may run in the child before it resets them. */
        sigfillset(&all);
        pthread_sigmask(SIG_SETMASK, &all, &saved);
        pid_t pid = (pid_t) syscall(SYS_clone3, &args, CLONE_ARGS_SIZE_VER0);
        if (pid == 0)
                hook_child(x);
        int e = errno;
        pthread_sigmask(SIG_SETMASK, &saved, NULL);
        if (pid < 0)
                return -e;
        r->pid = pid;
        /* Also from here, so that a timeout finds the group even if the
         * child has not run yet (EACCES once it has exec'd: harmless). */
        (void) setpgid(pid, pid);
        for (size_t i = 0; i < ARRAY_SIZE(r->child_fds); i++)
                close_fd(&r->child_fds[i]);
        return 0;
}

static int run_blocked(const char *what, const struct oci_hook *hook, bool path_in_container,
                       const char *state_json, size_t len, int ns_pidfd, unsigned ns_flags,
                       psrun_error *err)
{
        _cleanup_close_ int path_fd = -1, root_fd = -1, cwd_fd = -1;
        if (ns_pidfd >= 0 && !path_in_container) {
                if ((path_fd = open_above(hook->path, O_PATH)) < 0)
                        return psrun_error_errno(err, path_fd, "%s: exec", what);
                if ((root_fd = open_above("/", O_PATH | O_DIRECTORY)) < 0 ||
                    (cwd_fd = open_above(".", O_PATH | O_DIRECTORY)) < 0)
                        return psrun_error_errno(err, root_fd < 0 ? root_fd : cwd_fd,
                                                 "%s: the runtime's root", what);
        }
        _cleanup_(hook_run_done) struct hook_run r = HOOK_RUN_INIT;
        char *default_argv[] = {hook->path, NULL};
        char *empty_env[] = {NULL};
        int p[4][2], n;

        for (n = 0; n < 4; n++) {
                int e = pipe_above_stdio(p[n]);
                if (e < 0) {
                        while (n-- > 0) {
                                close_fd(&p[n][0]);
                                close_fd(&p[n][1]);
                        }
                        return psrun_error_errno(err, e, "%s: pipe", what);
                }
        }
        r.child_fds[0] = p[0][0];
        r.stdin_fd = p[0][1];
        r.out.fd = p[1][0];
        r.child_fds[1] = p[1][1];
        r.err.fd = p[2][0];
        r.child_fds[2] = p[2][1];
        r.status_fd = p[3][0];
        r.child_fds[3] = p[3][1];

        int e = set_nonblocking(r.stdin_fd);
        if (e == 0)
                e = set_nonblocking(r.out.fd);
        if (e == 0)
                e = set_nonblocking(r.err.fd);
        if (e < 0)
                return psrun_error_errno(err, e, "%s: fcntl", what);

        const struct hook_exec x = {
                .path = hook->path,
                .argv = hook->args && hook->args[0] ? hook->args : default_argv,
                .envp = hook->env ? hook->env : empty_env,
                .stdin_fd = r.child_fds[0],
                .stdout_fd = r.child_fds[1],
                .stderr_fd = r.child_fds[2],
                .status_fd = r.child_fds[3],
                .path_fd = path_fd,
                .ns_pidfd = ns_pidfd,
                .ns_flags = ns_flags,
                .root_fd = root_fd,
                .cwd_fd = cwd_fd,
        };
        e = start_hook(&r, &x);
        if (e < 0)
                return psrun_error_errno(err, e, "%s: clone3", what);

        int64_t deadline = -1;
        if (hook->timeout.set && hook->timeout.value > 0) {
                int64_t now = (int64_t) monotonic_ms();
                if (hook->timeout.value < (INT64_MAX - now) / 1000)
                        deadline = now + hook->timeout.value * 1000;
        }
        bool timed_out;
        e = supervise(&r, state_json, len, deadline, &timed_out);
        if (e < 0)
                return psrun_error_errno(err, e, "%s: poll", what);
        if (timed_out)
                kill_hook(&r);

        siginfo_t si;
        e = reap_hook(&r, &si);
        if (e < 0)
                return psrun_error_errno(err, e, "%s: wait", what);
        if (timed_out)
                return psrun_error_set(err, ETIMEDOUT, "%s: timed out after %lld s", what,
                                       (long long) hook->timeout.value);

        int exec_errno = 0;
        while (read(r.status_fd, &exec_errno, sizeof(exec_errno)) < 0 && errno == EINTR)
                ;
        if (exec_errno)
                return psrun_error_errno(err, exec_errno, "%s: exec", what);

        if (si.si_code == CLD_EXITED && si.si_status == 0)
                return 0;

        char line[256];
        capture_last_line(&r.err, line, sizeof(line));
        if (!line[0])
                capture_last_line(&r.out, line, sizeof(line));
        const char *sep = line[0] ? ": " : "";
        if (si.si_code == CLD_EXITED)
                return psrun_error_set(err, EPROTO, "%s: exited with status %d%s%s", what,
                                       si.si_status, sep, line);
        const char *abbrev = sigabbrev_np(si.si_status);
        if (abbrev)
                return psrun_error_set(err, EPROTO, "%s: killed by SIG%s%s%s", what, abbrev, sep,
                                       line);
        return psrun_error_set(err, EPROTO, "%s: killed by signal %d%s%s", what, si.si_status, sep,
                               line);
}

static int hook_run(enum oci_hook_kind kind, size_t index, const struct oci_hook *hook,
                    const char *state_json, size_t len, int ns_pidfd, unsigned ns_flags,
                    psrun_error *err)
{
        const char *kind_name = oci_hook_kind_to_string(kind);
        char what[PSRUN_ERROR_MSG_MAX];
        sigset_t pipe_set, pending, old_mask;

        snprintf(what, sizeof(what), "hooks: %s[%zu] %s", kind_name ? kind_name : "?", index,
                 hook && hook->path ? hook->path : "(null)");
        if (!hook || !hook->path || !hook->path[0])
                return psrun_error_set(err, EINVAL, "%s: no path", what);
        if (!state_json)
                len = 0;

        /* A hook may close its stdin unread: the write then fails with EPIPE,
         * and the SIGPIPE that comes with it must not kill the caller. */
        sigemptyset(&pipe_set);
        sigaddset(&pipe_set, SIGPIPE);
        sigpending(&pending);
        bool was_pending = sigismember(&pending, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe_set, &old_mask);

        /* runtime-spec: startContainer's path resolves in the container's
         * mount namespace; every other kind's in the runtime's. */
        int r = run_blocked(what, hook, kind == OCI_HOOK_START_CONTAINER, state_json, len, ns_pidfd,
                            ns_flags, err);

        if (!was_pending && sigpending(&pending) == 0 && sigismember(&pending, SIGPIPE)) {
                const struct timespec zero = {0};
                while (sigtimedwait(&pipe_set, NULL, &zero) < 0 && errno == EINTR)
                        ;
        }
        pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
        return r;
}

int oci_hook_run(enum oci_hook_kind kind, size_t index, const struct oci_hook *hook,
                 const char *state_json, size_t len, psrun_error *err)
{
        return hook_run(kind, index, hook, state_json, len, -1, 0, err);
}

int oci_hooks_run_in(enum oci_hook_kind kind, const struct oci_hook_list *list,
                     const char *state_json, size_t len, int ns_pidfd, unsigned ns_flags,
                     psrun_error *err)
{
        if (!list)
                return 0;
        for (size_t i = 0; i < list->n; i++) {
                int r = hook_run(kind, i, &list->hooks[i], state_json, len, ns_pidfd, ns_flags,
                                 err);
                if (r < 0)
                        return r;
        }
        return 0;
}

int oci_hooks_run(enum oci_hook_kind kind, const struct oci_hook_list *list, const char *state_json,
                  size_t len, psrun_error *err)
{
        return oci_hooks_run_in(kind, list, state_json, len, -1, 0, err);
}
