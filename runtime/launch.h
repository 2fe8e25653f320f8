/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The parent's half of starting a child from a plan, shared by `psrun run`
 * (runtime/run.c) and the OCI commands (runtime/oci/create.c):
 *
 *   launch_clone()     clone3() into the cgroup, with a pidfd and a sync socket
 *   launch_confine()   id maps, release 'M', join every cgroup hierarchy
 *   launch_release()   release 'C': the child may start the command
 *
 * Between launch_confine and launch_release the caller may do what must
 * happen before the command runs (OCI hooks, oom_score_adj).
 */

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "common/error.h"
#include "runtime/child.h"
#include "runtime/plan.h"

struct cgroup;
struct router;
struct netns_stats;

struct launch {
        pid_t pid;
        int pidfd;   /* -1 when not started */
        int sync_fd; /* the parent's end of the sync socket */
        /* A rootless sandbox's network (plan->rootless.router): the router
         * that cloned the sandbox and holds its network; NULL: none. */
        struct router *router;
};

#define LAUNCH_INIT                                                                                \
        {                                                                                          \
                .pid = 0, .pidfd = -1, .sync_fd = -1, .router = NULL                               \
        }

/* The child is ours until we exit; an OCI container's init then belongs to
 * the nearest subreaper (the containerd shim), as runc's does. */
int launch_clone(const struct plan *plan, struct cgroup *cg, struct launch *l, psrun_error *err);
int launch_confine(struct launch *l, const struct plan *plan, struct cgroup *cg, psrun_error *err);
int launch_release(struct launch *l, psrun_error *err);
/*
 * A session's exec made ahead of its request (plan->zygote, an exec plan:
 * no namespaces made, only joined): cloned into cg (CLONE_INTO_CGROUP), it
 * puts itself into cg's other hierarchies, joins, and waits; nothing of
 * the caller's is needed meanwhile. launch_zygote_request hands it its
 * command and stdio (the fds are the caller's still); from then on it is
 * an exec like one from launch_clone: its messages on sync_fd, its pidfd.
 * -E2BIG: a request larger than CHILD_REQUEST_MAX, -EMSGSIZE: larger
 * than the socket takes (the zygote stays usable); -EPIPE and the like: the zygote is gone.
 */
int launch_zygote(const struct plan *plan, struct cgroup *cg, struct launch *l, psrun_error *err);
int launch_zygote_request(struct launch *l, char *const argv[], char *const envp[], const char *cwd,
                          const char *path_env, const int fds[3], psrun_error *err);

/* Closes the fds; the process is left alone. A router (a rootless
 * sandbox's network) is ended: call this once the sandbox is gone. */
void launch_close(struct launch *l);

/* Whether the launch's network is its router's (runtime/router.h): then
 * the caller builds none (no netns_up), and takes it down with
 * launch_network_down once the sandbox is gone (the proxy's counts into
 * stats, when not NULL). Safe to call twice; no-op without a router. */
bool launch_has_router(const struct launch *l);
void launch_network_down(struct launch *l, struct netns_stats *stats);

/* One child message without waiting, and what may come with it: the fd a
 * CHILD_MSG_EXEC, _WORKSPACE or _SECCOMP carries (else -1) and, when the plan reports its exec
 * (SO_PASSCRED on the socket), the sender's pid as this process sees it
 * (else 0). Either may be NULL (an fd that comes is then closed). Returns
 * 1 for a message, 0 at EOF, -EAGAIN when none is waiting, -errno. */
int launch_recv_msg(int sync_fd, struct child_msg *m, int *fd, pid_t *sender);

/* Reads one child message, blocking until one comes, the socket closes
 * (-EPIPE) or the child exits (-ESRCH: its wait status is not reaped). */
int launch_read_msg(struct launch *l, struct child_msg *m);
/* The same, with the fd a CHILD_MSG_EXEC, _WORKSPACE or _SECCOMP brings in
 * *fd (-1: none; the caller closes it). */
int launch_read_msg_fd(struct launch *l, struct child_msg *m, int *fd);

/* Whether the child has exited (not reaping it), and if so how, for a
 * message: "was killed by signal 9 (KILL)", "exited with status 1". */
bool launch_child_died(const struct launch *l, char *buf, size_t size);

/* "rootfs: mount proc on /proc: Operation not permitted" from the child's
 * {step, errno, index} record. */
void launch_describe_error(const struct plan *plan, const struct child_msg *m, char *buf,
                           size_t len);
