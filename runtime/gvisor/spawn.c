/* SPDX-License-Identifier: MIT */
/*
 * Starting runsc: every runsc process psrun starts (run, exec, the kill
 * helper, the probes) is a child of this launcher, which is born in the
 * sandbox's cgroup (CLONE_INTO_CGROUP, or attached before it may go on, on
 * v1), so runsc, its gofer and the sentry are limited, accounted and killed
 * as one tree with the sandbox; runsc itself is told --ignore-cgroups.
 *
 * A sandbox's launcher also gets a new mount and network namespace:
 *   - the root skeleton is a small tmpfs there, which psrun fills, or,
 *     for an image, the image's overlay psrun made (bundle.c);
 *   - the workspace tmpfs (sized by disk_limit, owned by the sandbox user's
 *     host ids) is mounted there only, on the state directory's workspace/
 *     mount point, and given to runsc as a bind mount; psrun keeps an O_PATH
 *     fd of it for the file API. Nothing is mounted in the host's
 *     namespace, so nothing is left mounted when psrun is killed;
 *   - runsc, its gofer and the sentry never see the host's network; for
 *     full and restricted, psrun moves the veth into this namespace.
 * The child between clone3 and execve is async-signal-safe (no malloc, no
 * stdio): it may be a copy of a multi-threaded embedder. A failing step is
 * one {step, errno} record on the sync socket.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/clone.h"
#include "common/fdpass.h"
#include "common/signals.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/gvisor/gvisor.h"

enum spawn_step {
        SPAWN_PDEATHSIG,
        SPAWN_MOUNT_PRIVATE,
        SPAWN_ROOTFS,
        SPAWN_WORKSPACE,
        SPAWN_PROC,
        SPAWN_HIDE_NET_CORE,
        SPAWN_NETNS,
        SPAWN_READY,
        SPAWN_STDIO,
        SPAWN_EXEC,
        _SPAWN_STEP_MAX,
};

static const char *const step_names[_SPAWN_STEP_MAX] = {
        [SPAWN_PDEATHSIG] = "parent-death signal",
        [SPAWN_MOUNT_PRIVATE] = "make the mounts private",
        [SPAWN_ROOTFS] = "mount the root (the skeleton's tmpfs or the image)",
        [SPAWN_WORKSPACE] = "mount the workspace tmpfs",
        [SPAWN_PROC] = "mount a procfs",
        [SPAWN_HIDE_NET_CORE] = "hide /proc/sys/net/core",
        [SPAWN_NETNS] = "join the network namespace",
        [SPAWN_READY] = "report",
        [SPAWN_STDIO] = "stdio",
        [SPAWN_EXEC] = "execute",
};

enum { MSG_READY = 1, MSG_ERROR = 2 };

struct spawn_msg {
        uint32_t kind;
        uint32_t step;
        int32_t err;
};

static const char *const runsc_env[] = {
        "PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
        NULL,
};

static _Noreturn void child_fail(int sock, enum spawn_step step, int e)
{
        struct spawn_msg m = {.kind = MSG_ERROR, .step = step, .err = e};
        (void) send(sock, &m, sizeof(m), MSG_NOSIGNAL);
        _exit(125);
}

static int send_ready(int sock, int fd)
{
        struct spawn_msg m = {.kind = MSG_READY};
        ssize_t n = fdpass_send(sock, &m, sizeof(m), &fd, fd >= 0 ? 1 : 0, 0);
        return n < 0 ? (int) n : 0;
}

/*
 * runsc 20221219 decides that it runs in the host's network namespace, and
 * refuses --network=sandbox, when /proc/sys/net/core/rmem_default exists,
 * which kernels since 6.x show in every namespace ("cannot run with network
 * enabled in root network namespace"). psrun has already put runsc in a
 * fresh namespace of its own, so the check is made to see what it means to
 * see: an empty read-only tmpfs over /proc/sys/net/core, in this mount and
 * network namespace only. The kernel then lets the sandbox mount a procfs
 * of its own only while some procfs is fully visible (mount_too_revealing),
 * so a second, untouched one is mounted on the state directory's proc/.
 */
static void hide_net_core(int sock, const struct gvisor_sandbox *gs)
{
        if (mount("proc", gs->proc, "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
                child_fail(sock, SPAWN_PROC, errno);
        if (mount("tmpfs", "/proc/sys/net/core", "tmpfs",
                  MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                  "size=4k,nr_inodes=2,mode=0555") < 0)
                child_fail(sock, SPAWN_HIDE_NET_CORE, errno);
}

static _Noreturn void launcher_main(const struct gvisor_spawn *sp, int sock, pid_t parent)
{
        /* runsc dies with psrun, and the sandbox with runsc (runsc run
         * starts the sentry and the gofer --attached). */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                child_fail(sock, SPAWN_PDEATHSIG, errno);
        if (getppid() != parent)
                _exit(125);
        int ws_fd = -1;
        if (sp->new_namespaces) {
                const struct gvisor_sandbox *gs = sp->gs;
                if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                        child_fail(sock, SPAWN_MOUNT_PRIVATE, errno);
                /* The root skeleton psrun writes next (a few small files,
                 * no devices, no setuid ones). No nosuid/nodev flags: the
                 * gofer remounts the root read-only from its own user
                 * namespace, where flags set here would be locked. */
                if (sp->image_root) {
                        /* An image root: the overlay psrun made, attached
                         * here, in this namespace only (it goes with it). */
                        if (move_mount(sp->root_fd, "", AT_FDCWD, gs->rootfs,
                                       MOVE_MOUNT_F_EMPTY_PATH) < 0)
                                child_fail(sock, SPAWN_ROOTFS, errno);
                } else if (mount("tmpfs", gs->rootfs, "tmpfs", 0,
                                 "mode=0755,size=1m,nr_inodes=4096") < 0) {
                        child_fail(sock, SPAWN_ROOTFS, errno);
                }
                if (mount("tmpfs", gs->workspace, "tmpfs", MS_NOSUID | MS_NODEV,
                          gs->workspace_data) < 0)
                        child_fail(sock, SPAWN_WORKSPACE, errno);
                ws_fd = open(gs->workspace, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (ws_fd < 0)
                        child_fail(sock, SPAWN_WORKSPACE, errno);
                if (gs->netstack)
                        hide_net_core(sock, gs);
        }
        if (sp->netns_fd >= 0 && setns(sp->netns_fd, CLONE_NEWNET) < 0)
                child_fail(sock, SPAWN_NETNS, errno);
        if (send_ready(sock, ws_fd) < 0)
                _exit(125);
        char go;
        if (recv(sock, &go, 1, 0) != 1)
                _exit(125);

        /* stdio: moved above 2 first, so that dup2 never overwrites a source
         * it still needs. */
        int moved[3];
        for (int i = 0; i < 3; i++) {
                int src = sp->stdio[i] >= 0 ? sp->stdio[i] : open("/dev/null", O_RDWR | O_CLOEXEC);
                moved[i] = src < 0 ? -1 : fcntl(src, F_DUPFD_CLOEXEC, 3);
                if (moved[i] < 0)
                        child_fail(sock, SPAWN_STDIO, errno);
        }
        for (int i = 0; i < 3; i++)
                if (dup2(moved[i], i) < 0)
                        child_fail(sock, SPAWN_STDIO, errno);
        signals_reset_dispositions();
        /* runsc's files as runsc expects them, whatever psrun's umask. */
        umask(022);
        sigset_t none;
        sigemptyset(&none);
        (void) sigprocmask(SIG_SETMASK, &none, NULL);
        /* Everything above 2 but the sync socket, which is close-on-exec. */
        if (sock > 3)
                (void) syscall(SYS_close_range, 3, (unsigned) sock - 1, 0);
        (void) syscall(SYS_close_range, (unsigned) sock + 1, ~0U, 0);
        execve(sp->argv[0], sp->argv, (char *const *) runsc_env);
        child_fail(sock, SPAWN_EXEC, errno);
}

static void kill_and_reap(struct launch *l)
{
        if (l->pidfd < 0)
                return;
        (void) syscall(SYS_pidfd_send_signal, l->pidfd, SIGKILL, NULL, 0);
        siginfo_t si;
        while (waitid((idtype_t) P_PIDFD, (id_t) l->pidfd, &si, WEXITED) < 0 && errno == EINTR)
                ;
}

/* One message from the launcher, and the fd passed with it. */
static int read_msg(int sock, struct spawn_msg *m, int *fd)
{
        struct fdpass_in in;
        ssize_t n = fdpass_recv(sock, m, sizeof(*m), &in, 0);
        if (n < 0)
                return (int) n;
        bool keep = fd && *fd < 0 && in.n_fds > 0;
        if (keep)
                *fd = in.fds[0];
        fdpass_close(&in, keep ? 1 : 0);
        return n == (ssize_t) sizeof(*m) ? 0 : -EPIPE;
}

int gvisor_spawn(const struct gvisor_spawn *sp, struct launch *l, int *ws_fd, psrun_error *err)
{
        *l = (struct launch) LAUNCH_INIT;
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return psrun_error_errno(err, errno, "backend: gvisor: socketpair");
        int cgfd = sp->cg ? cgroup_clone_fd(sp->cg) : -1;
        int pidfd = -1;
        struct clone_args_v2 args = {
                .flags = CLONE_PIDFD | (cgfd >= 0 ? CLONE_INTO_CGROUP : 0) |
                         (sp->new_namespaces ? CLONE_NEWNS | CLONE_NEWNET : 0),
                .pidfd = (uint64_t) (uintptr_t) &pidfd,
                .exit_signal = SIGCHLD,
                .cgroup = cgfd >= 0 ? (uint64_t) cgfd : 0,
        };
        pid_t parent = getpid();
        pid_t pid = (pid_t) syscall(SYS_clone3, &args, sizeof(args));
        if (pid == 0) {
                close(sv[0]);
                launcher_main(sp, sv[1], parent);
        }
        close(sv[1]);
        if (pid < 0) {
                int r = -errno;
                close(sv[0]);
                return psrun_error_errno(err, r, "backend: gvisor: clone3");
        }
        *l = (struct launch){.pid = pid, .pidfd = pidfd, .sync_fd = sv[0]};
        int r = 0;
        /* v1 hierarchies: before runsc starts, so all it starts is inside. */
        if (sp->cg && cgroup_attach_after_clone(sp->cg))
                r = cgroup_attach(sp->cg, pid, err);
        struct spawn_msg m = {0};
        int fd = -1;
        if (r >= 0 && (r = read_msg(l->sync_fd, &m, ws_fd ? &fd : NULL)) < 0)
                psrun_error_errno(err, r, "backend: gvisor: the launcher died while starting");
        if (r >= 0 && m.kind == MSG_ERROR)
                r = psrun_error_errno(err, m.err ? m.err : EIO, "backend: gvisor: launcher: %s",
                                      m.step < _SPAWN_STEP_MAX ? step_names[m.step] : "?");
        if (r < 0) {
                safe_close(fd);
                kill_and_reap(l);
                launch_close(l);
                return r;
        }
        if (ws_fd)
                *ws_fd = fd;
        return 0;
}

int gvisor_release(struct launch *l, const char *runsc, psrun_error *err)
{
        char go = 'G';
        if (send(l->sync_fd, &go, 1, MSG_NOSIGNAL) != 1)
                return psrun_error_errno(err, errno, "backend: gvisor: release the launcher");
        /* execve closes the socket (close-on-exec): EOF means runsc runs. */
        struct spawn_msg m = {0};
        int r = read_msg(l->sync_fd, &m, NULL);
        l->sync_fd = safe_close(l->sync_fd);
        if (r == 0 && m.kind == MSG_ERROR)
                return psrun_error_errno(err, m.err ? m.err : EIO, "backend: gvisor: %s %s",
                                         m.step == SPAWN_EXEC ? "execute" : "launcher:",
                                         m.step == SPAWN_EXEC       ? runsc
                                         : m.step < _SPAWN_STEP_MAX ? step_names[m.step]
                                                                    : "?");
        return 0;
}

/* Wait for the child, SIGKILLing it (and its cgroup) at the deadline;
 * pipe_fd, when >= 0, is drained into buf meanwhile. */
static int wait_child(struct launch *l, struct cgroup *cg, uint64_t timeout_ms, int pipe_fd,
                      char *buf, size_t size, bool *timed_out)
{
        uint64_t deadline = monotonic_ms() + timeout_ms;
        size_t used = 0;
        bool exited = false;
        while (!exited || pipe_fd >= 0) {
                uint64_t now = monotonic_ms();
                int t = now >= deadline ? 0 : (int) (deadline - now);
                struct pollfd pfd[2] = {{exited ? -1 : l->pidfd, POLLIN, 0}, {pipe_fd, POLLIN, 0}};
                int n = poll(pfd, 2, t);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n == 0 && !*timed_out) {
                        *timed_out = true;
                        if (cg)
                                (void) cgroup_kill(cg, NULL);
                        (void) syscall(SYS_pidfd_send_signal, l->pidfd, SIGKILL, NULL, 0);
                        deadline = monotonic_ms() + 5000;
                        continue;
                }
                if (n == 0)
                        break; /* killed and still not gone: give up reading */
                if (pfd[1].revents) {
                        char tmp[4096];
                        ssize_t k = read(pipe_fd, tmp, sizeof(tmp));
                        if (k > 0 && used + 1 < size) {
                                size_t take =
                                        (size_t) k < size - 1 - used ? (size_t) k : size - 1 - used;
                                memcpy(buf + used, tmp, take);
                                used += take;
                        }
                        if (k == 0 || (k < 0 && errno != EINTR && errno != EAGAIN))
                                pipe_fd = -1;
                }
                if (pfd[0].revents)
                        exited = true;
        }
        if (buf && size)
                buf[used] = '\0';
        siginfo_t si = {0};
        while (waitid((idtype_t) P_PIDFD, (id_t) l->pidfd, &si, WEXITED) < 0)
                if (errno != EINTR)
                        return -errno;
        return si.si_code == CLD_EXITED ? W_EXITCODE(si.si_status, 0) : si.si_status & 0x7f;
}

int gvisor_spawn_wait(const struct gvisor_spawn *sp, uint64_t timeout_ms, psrun_error *err)
{
        struct launch l;
        int r = gvisor_spawn(sp, &l, NULL, err);
        if (r >= 0)
                r = gvisor_release(&l, sp->argv[0], err);
        if (r < 0) {
                kill_and_reap(&l);
                launch_close(&l);
                return r;
        }
        bool timed_out = false;
        r = wait_child(&l, sp->cg, timeout_ms, -1, NULL, 0, &timed_out);
        launch_close(&l);
        if (r >= 0 && timed_out)
                return psrun_error_set(err, ETIMEDOUT, "%s did not finish within %llu ms",
                                       sp->argv[0], (unsigned long long) timeout_ms);
        return r < 0 ? psrun_error_errno(err, r, "backend: gvisor: wait for %s", sp->argv[0]) : r;
}

int gvisor_capture(char *const argv[], char *buf, size_t size, uint64_t timeout_ms,
                   psrun_error *err)
{
        int p[2];
        if (pipe2(p, O_CLOEXEC) < 0)
                return psrun_error_errno(err, errno, "backend: gvisor: pipe");
        struct gvisor_spawn sp = {.argv = argv, .stdio = {-1, p[1], -1}, .netns_fd = -1};
        struct launch l;
        int r = gvisor_spawn(&sp, &l, NULL, err);
        if (r >= 0)
                r = gvisor_release(&l, argv[0], err);
        close(p[1]);
        if (r < 0) {
                close(p[0]);
                kill_and_reap(&l);
                launch_close(&l);
                return r;
        }
        bool timed_out = false;
        r = wait_child(&l, NULL, timeout_ms, p[0], buf, size, &timed_out);
        close(p[0]);
        launch_close(&l);
        if (r >= 0 && timed_out)
                return psrun_error_set(err, ETIMEDOUT, "did not finish within %llu ms",
                                       (unsigned long long) timeout_ms);
        if (r < 0)
                return psrun_error_errno(err, r, "wait");
        if (!WIFEXITED(r) || WEXITSTATUS(r) != 0)
                return psrun_error_set(err, EIO, "exited with %s %d",
                                       WIFEXITED(r) ? "status" : "signal",
                                       WIFEXITED(r) ? WEXITSTATUS(r) : WTERMSIG(r));
        return 0;
}

void gvisor_stdio_open(const int in[3], int out[3])
{
        for (int i = 0; i < 3; i++) {
                out[i] = in[i];
                struct stat st;
                int fl;
                if (i == 0 || in[i] < 0 || fstat(in[i], &st) < 0 || !S_ISREG(st.st_mode) ||
                    (fl = fcntl(in[i], F_GETFL)) < 0 || (fl & O_APPEND))
                        continue;
                char path[40];
                snprintf(path, sizeof(path), "/proc/self/fd/%d", in[i]);
                int fd = open(path, O_WRONLY | O_APPEND | O_NOCTTY | O_CLOEXEC);
                if (fd >= 0)
                        out[i] = fd;
        }
}

void gvisor_stdio_done(const int in[3], int out[3])
{
        for (int i = 0; i < 3; i++)
                if (out[i] != in[i]) {
                        (void) lseek(in[i], 0, SEEK_END);
                        out[i] = safe_close(out[i]);
                        out[i] = in[i];
                }
}
