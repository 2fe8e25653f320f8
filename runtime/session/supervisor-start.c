/* SPDX-License-Identifier: MIT */
/*
 * Starting a session: session_spawn() makes the state directory and the
 * supervisor process, which detaches from its caller, starts the sandbox
 * through its backend, listens on the control socket and reports ready.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/signals.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/gvisor/gvisor.h"
#include "runtime/run.h"
#include "runtime/session/image.h"
#include "runtime/session/supervisor.h"

/* ---- start ---- */

int sup_write_info(struct supervisor *s, psrun_error *err)
{
        _cleanup_strv_free_ char **paths = NULL;
        /* No cgroup: rootless with no delegated subtree. */
        int r = s->cg ? cgroup_paths(s->cg, &paths, err) : 0;
        if (r < 0)
                return r;
        _cleanup_free_ char *tmp = NULL, *path = NULL;
        if (asprintf(&tmp, "%s/info.tmp", s->dir) < 0 || asprintf(&path, "%s/info", s->dir) < 0)
                return psrun_error_errno(err, ENOMEM, "session");
        _cleanup_fclose_ FILE *f = fopen(tmp, "we");
        if (!f)
                return psrun_error_errno(err, errno, "session: write %s", tmp);
        fprintf(f, "pid %d\ncreated %llu\ninit %d\n", (int) getpid(),
                (unsigned long long) s->created_unix, (int) s->init.pid);
        for (char **p = paths; p && *p; p++)
                fprintf(f, "cgroup %s\n", *p);
        /* The networks' ids: gc removes their veth, table and lease if we
         * are killed (netns_reap). */
        if (s->tmpl.net.veth)
                fprintf(f, "net %s\n", s->tmpl.net.id);
        for (size_t i = 0; i < MAX_EXECS; i++)
                if (s->execs[i].used && s->execs[i].inet)
                        fprintf(f, "net %s\n", s->execs[i].inet->plan.id);
        if (fflush(f) != 0 || rename(tmp, path) < 0)
                return psrun_error_errno(err, errno, "session: write %s", path);
        return 0;
}

static int listen_control(struct supervisor *s, psrun_error *err)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if ((size_t) snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/control", s->dir) >=
            sizeof(sa.sun_path))
                return psrun_error_set(err, ENAMETOOLONG,
                                       "session: state directory `%s` is too long for a socket",
                                       s->dir);
        s->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (s->listen_fd < 0)
                return psrun_error_errno(err, errno, "session: socket");
        if (bind(s->listen_fd, (struct sockaddr *) &sa, sizeof(sa)) < 0 ||
            chmod(sa.sun_path, 0600) < 0 || listen(s->listen_fd, 128) < 0)
                return psrun_error_errno(err, errno, "session: listen on %s", sa.sun_path);
        return 0;
}

/* `tools`: each named toolchain on the root's PATH, looked for in the
 * running sandbox's own root (its init's), so that a missing one fails the
 * create, never an exec. Under gVisor the bundle's root is the host's
 * /usr, checked from here, or the image's overlay, attached on the
 * bundle's rootfs/ in runsc run's mount namespace. */
static int check_tools(struct supervisor *s, psrun_error *err)
{
        char path[256];
        if (s->backend->own_layers && s->root_fd >= 0)
                snprintf(path, sizeof(path), "/proc/self/fd/%d", s->root_fd);
        else if (s->backend->own_layers)
                snprintf(path, sizeof(path), "/proc/%d/root", (int) s->init.pid);
        else if (s->pol->image)
                snprintf(path, sizeof(path), "/proc/%d/root%s", (int) s->init.pid,
                         gvisor_session_rootfs(s->gvisor));
        else
                snprintf(path, sizeof(path), "/");
        _cleanup_close_ int root = open(path, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return psrun_error_errno(err, errno, "tools: open the sandbox's root");
        return plan_check_tools(s->pol, root, s->tmpl.envp, err);
}

int sup_start(struct supervisor *s, const char *cgroup_parent, psrun_error *err)
{
        _cleanup_free_ char *lock_path = NULL;
        if (asprintf(&lock_path, "%s/lock", s->dir) < 0)
                return psrun_error_errno(err, ENOMEM, "session");
        /* Held until we exit; never closed, never inherited past execve. */
        int lock = open(lock_path, O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) < 0)
                return psrun_error_errno(err, errno, "session: lock %s", lock_path);

        char *argv[] = {"psrun-session-init", NULL};
        int r = plan_from_policy(s->pol, argv, NULL, &s->tmpl, err);
        /* Every exec's listener and Landlock log flags, the audit socket
         * the session's; under gVisor the sentry answers the sandbox's
         * syscalls itself, and psrun's layers are not what refuses them. */
        if (r >= 0 && s->backend->own_layers) {
                vwatch_prepare(&s->watch, &s->tmpl);
                if (s->watch.landlock_audit)
                        plan_log_landlock_denials(&s->tmpl);
        } else if (r >= 0) {
                vwatch_prepare_elsewhere(&s->watch, &s->tmpl, GVISOR_VIOLATIONS_WHY);
        }
        if (r >= 0)
                r = s->backend->start(s, cgroup_parent, err);
        if (r >= 0 && s->pol->n_tools)
                r = check_tools(s, err);
        if (r >= 0)
                r = listen_control(s, err);
        if (r >= 0)
                r = sup_write_info(s, err);
        return r;
}

static void detach_from_caller(int *ready_fd, int *tie_fd)
{
        /* Keep only the two fds we were given (as 3 and 4): nothing of the
         * embedding program (its pipes, its sockets) may be held open by a
         * process that outlives it. */
        int hi = (*ready_fd > *tie_fd ? *ready_fd : *tie_fd) + 1;
        int a = fcntl(*ready_fd, F_DUPFD_CLOEXEC, hi < 5 ? 5 : hi);
        int b = *tie_fd >= 0 ? fcntl(*tie_fd, F_DUPFD_CLOEXEC, hi < 5 ? 5 : hi) : -1;
        (void) dup3(a, 3, O_CLOEXEC);
        *ready_fd = 3;
        if (b >= 0) {
                (void) dup3(b, 4, O_CLOEXEC);
                *tie_fd = 4;
        } else {
                *tie_fd = -1;
        }
        (void) syscall(SYS_close_range, b >= 0 ? 5 : 4, ~0U, 0);
        int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        for (int i = 0; i < 3; i++)
                (void) dup2(null_fd, i);
        if (null_fd > 2)
                close(null_fd);
        signals_reset_dispositions();
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, NULL);
        signal(SIGPIPE, SIG_IGN);
        signal(SIGHUP, SIG_IGN);
        umask(077);
        (void) prctl(PR_SET_NAME, "psrun-session", 0, 0, 0);
}

void sup_settings_from_policy(const struct policy *pol, struct sup_settings *out)
{
        *out = (struct sup_settings){
                .lifetime_ms = pol->lifetime_ms,
                .idle_timeout_ms = pol->idle_timeout_ms,
                .output_limit = pol->output_limit,
                .background_limit = (uint32_t) pol->background_limit,
                .approve = pol->approve,
                .network = pol->network,
                .install_network = pol->install_network,
                .index = {.pip_index_url = pol->pip_index_url, .npm_registry = pol->npm_registry},
        };
}

_Noreturn void sup_main(const struct policy *pol, char *dir, int ready_fd, int tie_fd,
                        const char *cgroup_parent)
{
        detach_from_caller(&ready_fd, &tie_fd);
        static struct supervisor s;
        s = (struct supervisor){
                .pol = pol,
                .dir = dir,
                .listen_fd = -1,
                .tie_fd = tie_fd,
                .signal_fd = -1,
                .workspace_fd = -1,
                .root_fd = -1,
                .own_pidns = -1,
                .files_pidfd = -1,
                .files_sock = -1,
                .init = LAUNCH_INIT,
                .zygote = LAUNCH_INIT,
                .watch = {.audit_fd = -1},
                .backend = sup_backend(pol->backend),
        };
        sup_settings_from_policy(pol, &s.set);
        plan_init(&s.tmpl);
        sigset_t term;
        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        sigaddset(&term, SIGINT);
        if (sigprocmask(SIG_BLOCK, &term, NULL) == 0)
                s.signal_fd = signalfd(-1, &term, SFD_CLOEXEC | SFD_NONBLOCK);
        s.created_ms = s.last_activity_ms = monotonic_ms();
        s.created_unix = (uint64_t) time(NULL);
        struct sup_ready ready = {0};
        session_hdr_init(&ready.h, sizeof(ready));
        ready.r = sup_start(&s, cgroup_parent, &ready.err);
        if (ready.r < 0) {
                if (s.init.pidfd >= 0)
                        (void) syscall(SYS_pidfd_send_signal, s.init.pidfd, SIGKILL, NULL, 0);
                siginfo_t si;
                if (s.init.pidfd >= 0)
                        (void) waitid((idtype_t) P_PIDFD, (id_t) s.init.pidfd, &si, WEXITED);
                netns_live_close(&s.net);
                netns_release(&s.tmpl.net);
                cgroup_destroy(s.init_cg);
                cgroup_destroy(s.cg);
                if (s.backend->stop)
                        s.backend->stop(&s);
                sup_remove_state_dir(dir);
                (void) send(ready_fd, &ready, sizeof(ready), MSG_NOSIGNAL);
                _exit(1);
        }
        (void) send(ready_fd, &ready, sizeof(ready), MSG_NOSIGNAL);
        close(ready_fd);
        sup_serve(&s);
}

int session_spawn(const struct policy *pol, const char *root, const char *id,
                  const char *cgroup_parent, int tie_fd, psrun_error *err)
{
        /* root was checked by session_root_open (root.c). */
        int r;
        _cleanup_free_ char *dir = NULL;
        if (asprintf(&dir, "%s/%s", root, id) < 0)
                return psrun_error_errno(err, ENOMEM, "session");
        if (mkdir(dir, 0700) < 0) {
                if (errno == EEXIST)
                        return psrun_error_set(err, EEXIST, "name: a session `%s` exists already",
                                               id);
                return psrun_error_errno(err, errno, "session: create %s", dir);
        }
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
                r = -errno;
                rmdir(dir);
                return psrun_error_errno(err, r, "session: socketpair");
        }
        char image[PATH_MAX + 32] = "";
        r = sup_image_spawn(pol, dir, cgroup_parent, sv[1], tie_fd, image, sizeof(image), err);
        close(sv[1]);
        if (r < 0) {
                close(sv[0]);
                sup_remove_state_dir(dir);
                return r;
        }
        struct sup_ready ready;
        ssize_t n;
        do
                n = recv(sv[0], &ready, sizeof(ready), 0);
        while (n < 0 && errno == EINTR);
        close(sv[0]);
        if (n <= 0) {
                sup_remove_state_dir(dir);
                return psrun_error_set(err, EIO, "session: the supervisor (%s) died while starting",
                                       image);
        }
        if (session_check_hdr(&ready, (size_t) n, sizeof(ready), true, NULL) < 0) {
                sup_remove_state_dir(dir);
                return psrun_error_set(err, EPROTO,
                                       "session: the supervisor (%s) answered in another protocol",
                                       image);
        }
        if (ready.r < 0 && !ready.err.msg[0]) {
                /* It could not be executed at all (image.c). */
                sup_remove_state_dir(dir);
                return psrun_error_errno(err, ready.r, "session: execute the supervisor (%s)",
                                         image);
        }
        if (ready.r < 0) {
                if (err)
                        *err = ready.err;
                return ready.r;
        }
        return 0;
}
