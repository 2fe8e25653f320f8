/* SPDX-License-Identifier: MIT */
/* Starting a child from a plan: clone3, id maps, cgroups, release. */
#include "runtime/launch.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clone.h"
#include "common/fdpass.h"
#include "common/fileio.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/rootless.h"
#include "runtime/router.h"

/*
 * A new cgroup namespace's root is the cgroup its creator is in at that
 * moment. CLONE_INTO_CGROUP (v2) puts the child in its cgroup before the
 * namespaces are made; without it (v1), the child would be created in
 * psrun's cgroup and moved later, and every hierarchy's root in the
 * container would be psrun's cgroup, not the container's own. Then the child
 * makes the namespace itself, once the parent has attached it.
 */
static bool cgroupns_after_attach(const struct plan *plan, struct cgroup *cg)
{
        return (plan->clone_flags & CLONE_NEWCGROUP) && cgroup_attach_after_clone(cg);
}

/* Whether the child may make that namespace only once it is confined, at
 * the end of its set-up: nothing of its root shows the namespace (no
 * cgroup file system is mounted in it), so the attach (a v1 cgroup.procs
 * write waits for an RCU grace period: 0.2 ms idle, milliseconds on a busy
 * host) overlaps the child's root instead of coming before it. Not for an
 * OCI bundle: its prestart and createRuntime hooks, which run before that
 * release, see the container's namespaces as runc makes them. */
static bool cgroupns_when_confined(const struct plan *plan, struct cgroup *cg)
{
        return cgroupns_after_attach(plan, cg) && plan->root != PLAN_ROOT_BUNDLE &&
               !rootfs_plan_mounts_cgroupfs(&plan->rootfs);
}

/* The sync socket; with the command's pid on its messages when the plan
 * reports its exec (runtime/violations-watch.h). */
static int sync_pair(const struct plan *plan, int sv[2], psrun_error *err)
{
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
                return psrun_error_errno(err, errno, "socketpair");
        int on = 1;
        if (plan->report_exec && setsockopt(sv[0], SOL_SOCKET, SO_PASSCRED, &on, sizeof(on)) < 0) {
                int r = -errno;
                close(sv[0]);
                close(sv[1]);
                return psrun_error_errno(err, r, "sync: SO_PASSCRED");
        }
        return 0;
}

/* clone3 with a pidfd, into cg's cgroup2 directory when there is one
 * (CLONE_INTO_CGROUP): fork's return, -1 with errno on failure. */
static pid_t clone_into(uint64_t flags, struct cgroup *cg, int *pidfd)
{
        int cgfd = cg ? cgroup_clone_fd(cg) : -1;
        struct clone_args_v2 args = {
                .flags = flags | CLONE_PIDFD | (cgfd >= 0 ? CLONE_INTO_CGROUP : 0),
                .pidfd = (uint64_t) (uintptr_t) pidfd,
                .exit_signal = SIGCHLD,
                .cgroup = cgfd >= 0 ? (uint64_t) cgfd : 0,
        };
        return (pid_t) syscall(SYS_clone3, &args, sizeof(args));
}

int launch_clone(const struct plan *plan, struct cgroup *cg, struct launch *l, psrun_error *err)
{
        struct plan late;
        if (cgroupns_after_attach(plan, cg)) {
                /* The child's copy says so; the caller's plan is unchanged. */
                late = *plan;
                late.clone_flags &= ~(uint64_t) CLONE_NEWCGROUP;
                late.unshare_cgroupns = true;
                late.cgroupns_confined = cgroupns_when_confined(plan, cg);
                plan = &late;
        }
        /* Bind sources and device nodes, opened here with the caller's ids
         * and in its namespaces; the child inherits them. */
        _cleanup_(rootfs_sources_close) struct rootfs_sources sources = ROOTFS_SOURCES_INIT;
        int r = rootfs_sources_open(&plan->rootfs, &sources, err);
        if (r < 0)
                return r;
        int sv[2];
        r = sync_pair(plan, sv, err);
        if (r < 0)
                return r;

        int pidfd = -1;
        if (plan->rootless.router) {
                /* The router clones it into the network it holds. */
                pid_t pid = 0;
                struct router *rt = NULL;
                r = router_clone(plan, cg, &sources, sv[0], sv[1], &rt, &pid, &pidfd, err);
                close(sv[1]);
                if (r < 0) {
                        close(sv[0]);
                        return r;
                }
                *l = (struct launch){.pid = pid, .pidfd = pidfd, .sync_fd = sv[0], .router = rt};
                return 0;
        }
        pid_t pid = clone_into(plan->clone_flags, cg, &pidfd);
        if (pid == 0) {
                close(sv[0]);
                child_main(plan, sv[1], sources.n ? &sources : NULL);
        }
        close(sv[1]);
        if (pid < 0) {
                r = -errno;
                close(sv[0]);
                return psrun_error_errno(err, r, "clone3");
        }
        *l = (struct launch){.pid = pid, .pidfd = pidfd, .sync_fd = sv[0]};
        return 0;
}

bool launch_child_died(const struct launch *l, char *buf, size_t size)
{
        siginfo_t si = {0};
        /* WNOWAIT: whoever reaps it later still gets its status. */
        if (l->pidfd < 0 ||
            waitid((idtype_t) P_PIDFD, (id_t) l->pidfd, &si, WEXITED | WNOHANG | WNOWAIT) < 0 ||
            si.si_pid == 0)
                return false;
        if (si.si_code == CLD_EXITED)
                snprintf(buf, size, "exited with status %d", si.si_status);
        else
                snprintf(buf, size, "was killed by signal %d (%s)", si.si_status,
                         sigabbrev_np(si.si_status) ? sigabbrev_np(si.si_status) : "?");
        return true;
}

static int release(struct launch *l, char what, psrun_error *err)
{
        /* A child that failed a setup step has closed its end: not our error
         * to report, the caller reads the child's record. */
        if (send(l->sync_fd, &what, 1, MSG_NOSIGNAL) == 1 || errno == EPIPE)
                return 0;
        int r = -errno;
        /* ECONNRESET: it died without a record (killed from outside): say
         * that, and how, rather than what it did to the socket. */
        char how[64];
        for (int i = 0; i < 20 && !launch_child_died(l, how, sizeof(how)); i++)
                usleep(5000);
        if (launch_child_died(l, how, sizeof(how)))
                return psrun_error_set(err, ECHILD, "the sandbox's init %s during set-up", how);
        return psrun_error_errno(err, r, "sync: release the child");
}

/* Rootless: the user's subordinate ranges through the setuid helpers, or
 * the one id the user may map itself once setgroups is off. Root: the maps
 * as they are. */
static int write_id_maps(pid_t pid, const struct plan *plan, psrun_error *err)
{
        int r;
        /* A router's sandbox: the router wrote them (they are below its
         * ids). No user namespace of its own: a session's exec joins
         * init's. */
        if (plan->rootless.router || (!plan->uid_map[0] && !plan->gid_map[0]))
                return 0;
        if (plan->rootless.subids)
                return idmap_apply_helpers(pid, plan, err);
        if (plan->rootless.setgroups_deny && (r = write_proc_file(pid, "setgroups", "deny")) < 0)
                return psrun_error_errno(err, r, "identity: write setgroups");
        if (plan->uid_map[0] && (r = write_proc_file(pid, "uid_map", plan->uid_map)) < 0)
                return psrun_error_errno(err, r, "identity: write uid_map");
        if (plan->gid_map[0] && (r = write_proc_file(pid, "gid_map", plan->gid_map)) < 0)
                return psrun_error_errno(err, r, "identity: write gid_map");
        return 0;
}

int launch_confine(struct launch *l, const struct plan *plan, struct cgroup *cg, psrun_error *err)
{
        /* The child waits until its ids are mapped; it then builds its root
         * while we put it in its cgroups. */
        int r = write_id_maps(l->pid, plan, err);
        if (r < 0)
                return r;
        /* The child makes its cgroup namespace right after this release,
         * unless it can wait for the next (cgroupns_when_confined): it must
         * be in its cgroups by then. */
        bool first = cgroupns_after_attach(plan, cg) && !cgroupns_when_confined(plan, cg);
        if (first && (r = cgroup_attach(cg, l->pid, err)) < 0)
                return r;
        r = release(l, CHILD_SYNC_MAPPED, err);
        if (r >= 0 && cg && !first)
                r = cgroup_attach(cg, l->pid, err);
        return r;
}

int launch_release(struct launch *l, psrun_error *err)
{
        /* A router's sandbox: the command starts with pasta's link up. */
        int r = router_wait_linked(l->router, err);
        return r < 0 ? r : release(l, CHILD_SYNC_CONFINED, err);
}

void launch_close(struct launch *l)
{
        l->pidfd = safe_close(l->pidfd);
        l->sync_fd = safe_close(l->sync_fd);
        router_close(l->router);
        l->router = NULL;
}

bool launch_has_router(const struct launch *l)
{
        return l->router != NULL;
}

void launch_network_down(struct launch *l, struct netns_stats *stats)
{
        router_down(l->router, stats);
}

int launch_recv_msg(int sync_fd, struct child_msg *m, int *fd, pid_t *sender)
{
        if (fd)
                *fd = -1;
        if (sender)
                *sender = 0;
        struct fdpass_in in;
        ssize_t n = fdpass_recv(sync_fd, m, sizeof(*m), &in, MSG_DONTWAIT);
        if (n < 0)
                return (int) n;
        if (sender)
                *sender = in.sender;
        bool keep = fd && in.n_fds > 0 && n == (ssize_t) sizeof(*m) && !in.truncated &&
                    (m->kind == CHILD_MSG_EXEC || m->kind == CHILD_MSG_WORKSPACE ||
                     m->kind == CHILD_MSG_SECCOMP || m->kind == CHILD_MSG_READY ||
                     m->kind == CHILD_MSG_SPAWNED || m->kind == CHILD_MSG_NAMESPACE);
        if (keep)
                *fd = in.fds[0];
        fdpass_close(&in, keep ? 1 : 0);
        if (n == 0)
                return 0;
        if (n != (ssize_t) sizeof(*m) || in.truncated)
                return -EPROTO;
        return 1;
}

int launch_read_msg_fd(struct launch *l, struct child_msg *m, int *fd)
{
        for (;;) {
                int n = launch_recv_msg(l->sync_fd, m, fd, NULL);
                if (n == 1)
                        return 0;
                if (n == 0)
                        return -EPIPE;
                if (n != -EAGAIN && n != -EINTR)
                        return n;
                struct pollfd pfd[2] = {{l->sync_fd, POLLIN, 0}, {l->pidfd, POLLIN, 0}};
                if (poll(pfd, 2, -1) < 0 && errno != EINTR)
                        return -errno;
                /* The child's last words come before its exit: read them. */
                if (!(pfd[0].revents & POLLIN) && (pfd[1].revents & POLLIN))
                        return launch_recv_msg(l->sync_fd, m, fd, NULL) == 1 ? 0 : -ESRCH;
        }
}

int launch_read_msg(struct launch *l, struct child_msg *m)
{
        return launch_read_msg_fd(l, m, NULL);
}

/* strerror, lower-cased as Go's errors are: Docker turns "no such file or
 * directory" and "permission denied" in a runtime's message into the exit
 * codes 127 and 126. */
static void lower_strerror(int err, char *buf, size_t len)
{
        snprintf(buf, len, "%s", strerror(err));
        if (buf[0] >= 'A' && buf[0] <= 'Z' && buf[1] >= 'a' && buf[1] <= 'z')
                buf[0] = (char) (buf[0] - 'A' + 'a');
}

void launch_describe_error(const struct plan *p, const struct child_msg *m, char *buf, size_t len)
{
        char what[512] = "";
        switch (m->step) {
        case CHILD_STEP_MOUNT:
                if (m->index < p->rootfs.n_steps)
                        mount_step_describe(&p->rootfs.steps[m->index], what, sizeof(what));
                break;
        case CHILD_STEP_EXEC: {
                char reason[128];
                if (m->err == ENOENT && !strchr(p->argv[0], '/')) {
                        snprintf(buf, len, "exec: \"%s\": executable file not found in $PATH",
                                 p->argv[0]);
                        return;
                }
                lower_strerror(m->err, reason, sizeof(reason));
                snprintf(buf, len, "exec: %s: %s", p->argv[0], reason);
                return;
        }
        case CHILD_STEP_USER_QUOTAS:
                if (m->index < p->n_user_quotas)
                        snprintf(what, sizeof(what), "%s", p->user_quotas[m->index].path);
                break;
        case CHILD_STEP_SCHEDULER:
                if (m->err == EPERM)
                        snprintf(what, sizeof(what),
                                 "a real-time policy needs CAP_SYS_NICE and real-time runtime "
                                 "in the container's cgroup");
                break;
        case CHILD_STEP_CHDIR:
                snprintf(what, sizeof(what), "%s", p->workdir ? p->workdir : "/");
                break;
        case CHILD_STEP_ROOT_BUNDLE:
                snprintf(what, sizeof(what), "%s", p->rootfs_dir ? p->rootfs_dir : "");
                break;
        case CHILD_STEP_JOIN:
                if (m->index < p->n_joins)
                        snprintf(what, sizeof(what), "%s",
                                 oci_namespace_to_string(p->joins[m->index].type));
                else
                        snprintf(what, sizeof(what), "the container's namespaces");
                break;
        case CHILD_STEP_LANDLOCK:
                if (m->index < p->landlock.n_rules)
                        snprintf(what, sizeof(what), "rule for %s",
                                 p->landlock.rules[m->index].path);
                else
                        snprintf(what, sizeof(what), "restrict_self");
                break;
        case CHILD_STEP_RLIMIT:
                if (m->index < p->n_rlimits) {
                        const char *name = oci_rlimit_to_string(p->rlimits[m->index].resource);
                        snprintf(what, sizeof(what), "%s", name ? name : "?");
                }
                break;
        default:
                break;
        }
        snprintf(buf, len, "%s%s%s: %s", child_step_name(m->step), what[0] ? ": " : "", what,
                 strerror(m->err));
}

int launch_zygote(const struct plan *plan, struct cgroup *cg, struct launch *l, psrun_error *err)
{
        if (!plan->zygote || plan->clone_flags)
                return psrun_error_set(err, EINVAL, "zygote: not a plan of an exec that joins");
        struct child_attach attach = {.n = 0};
        int r = cgroup_attach_fds(cg, attach.fds, ARRAY_SIZE(attach.fds), err);
        if (r < 0)
                return r;
        attach.n = (size_t) r;
        int sv[2];
        r = sync_pair(plan, sv, err);
        if (r >= 0) {
                int pidfd = -1;
                pid_t pid = clone_into(0, cg, &pidfd);
                if (pid == 0) {
                        close(sv[0]);
                        child_main_zygote(plan, sv[1], &attach);
                }
                r = pid < 0 ? psrun_error_errno(err, errno, "clone3") : 0;
                close(sv[1]);
                if (pid < 0)
                        close(sv[0]);
                else
                        *l = (struct launch){.pid = pid, .pidfd = pidfd, .sync_fd = sv[0]};
        }
        for (size_t i = 0; i < attach.n; i++)
                close(attach.fds[i]);
        return r;
}

int launch_zygote_request(struct launch *l, char *const argv[], char *const envp[], const char *cwd,
                          const char *path_env, const int fds[3], psrun_error *err)
{
        size_t argc = 0, envc = 0;
        while (argv[argc])
                argc++;
        while (envp[envc])
                envc++;
        size_t slots = argc + 1 + envc + 1;
        size_t len = sizeof(struct child_request) + slots * sizeof(uintptr_t);
        size_t strings = len;
        for (size_t i = 0; i < argc; i++)
                len += strlen(argv[i]) + 1;
        for (size_t i = 0; i < envc; i++)
                len += strlen(envp[i]) + 1;
        if (cwd)
                len += strlen(cwd) + 1;
        if (len > CHILD_REQUEST_MAX)
                return psrun_error_set(err, E2BIG, "zygote: a request of %zu bytes", len);
        _cleanup_free_ char *buf = malloc(len);
        if (!buf)
                return psrun_error_errno(err, ENOMEM, "zygote");
        struct child_request h = {
                .argc = (uint32_t) argc,
                .envc = (uint32_t) envc,
                .cwd = CHILD_REQUEST_NONE,
                .path = CHILD_REQUEST_NONE,
                .len = (uint32_t) len,
        };
        uintptr_t *slot = (uintptr_t *) (void *) (buf + sizeof(h));
        size_t off = strings;
        for (size_t i = 0; i < slots; i++) {
                const char *s = i < argc                    ? argv[i]
                                : i > argc && i < slots - 1 ? envp[i - argc - 1]
                                                            : NULL;
                if (!s) {
                        slot[i] = (uintptr_t) CHILD_REQUEST_NONE;
                        continue;
                }
                size_t n = strlen(s) + 1;
                memcpy(buf + off, s, n);
                slot[i] = off;
                /* PATH's value, as path_env points into envp. */
                if (path_env && path_env >= s && path_env < s + n)
                        h.path = (uint32_t) (off + (size_t) (path_env - s));
                off += n;
        }
        if (cwd) {
                h.cwd = (uint32_t) off;
                memcpy(buf + off, cwd, strlen(cwd) + 1);
        }
        memcpy(buf, &h, sizeof(h));
        ssize_t n = fdpass_send(l->sync_fd, buf, len, fds, 3, MSG_DONTWAIT);
        if (n < 0)
                return psrun_error_errno(err, (int) n, "zygote: send the request");
        return 0;
}
