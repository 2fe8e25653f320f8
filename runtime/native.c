/* SPDX-License-Identifier: MIT */
/* The native backend: the parent side of one sandbox of psrun's own child
 * (runtime/child.c): start it, supervise it, account for it, clean up after
 * it on every path. */

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/fault.h"
#include "netns/netns.h"
#include "runtime/backend.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/child.h"
#include "runtime/launch.h"
#include "runtime/plan.h"
#include "runtime/rootless.h"
#include "runtime/violations-watch.h"

struct supervisor {
        const struct plan *plan;
        struct cgroup *cg;
        pid_t pid;
        int pidfd;
        int sync_fd;
        int signal_fd;
        uint64_t deadline_ms; /* 0: none */
        bool timed_out;
        bool have_exit;
        int exit_status; /* the command's wait status, from init */
        bool have_error;
        struct child_msg error;
        bool sync_eof;        /* every end of the sync socket in the sandbox is closed */
        struct vwatch *watch; /* violations */
        struct vwatch_target *target;
};

static void drain_messages(struct supervisor *s)
{
        for (;;) {
                struct child_msg m;
                int fd = -1;
                pid_t sender = 0;
                int n = launch_recv_msg(s->sync_fd, &m, &fd, &sender);
                if (n == 0)
                        s->sync_eof = true;
                if (n <= 0)
                        return;
                if (m.kind == CHILD_MSG_WORKSPACE) {
                        vwatch_target_workspace(s->target, fd);
                } else if (m.kind == CHILD_MSG_EXEC) {
                        vwatch_target_start(s->watch, s->target, sender, fd, m.err);
                } else if (m.kind == CHILD_MSG_EXIT) {
                        s->have_exit = true;
                        s->exit_status = m.status;
                } else if (m.kind == CHILD_MSG_ERROR && !s->have_error) {
                        s->have_error = true;
                        s->error = m;
                }
        }
}

static void forward_signal(struct supervisor *s)
{
        struct signalfd_siginfo si;
        while (read(s->signal_fd, &si, sizeof(si)) == (ssize_t) sizeof(si))
                (void) syscall(SYS_pidfd_send_signal, s->pidfd, (int) si.ssi_signo, NULL, 0);
}

static void kill_sandbox(struct supervisor *s)
{
        /* SIGKILL to pid 1 takes the whole pid namespace down; the cgroup
         * kill also catches anything that is on its way in. */
        (void) syscall(SYS_pidfd_send_signal, s->pidfd, SIGKILL, NULL, 0);
        (void) cgroup_kill(s->cg, NULL);
}

/* Wait for pid 1 of the sandbox to exit; returns its wait status. */
static int supervise(struct supervisor *s)
{
        for (;;) {
                /* After EOF the socket would poll readable forever: drop it. */
                uint64_t now = monotonic_ms();
                struct pollfd pfd[5] = {
                        {s->pidfd, POLLIN, 0},
                        {s->sync_eof ? -1 : s->sync_fd, POLLIN, 0},
                        {s->signal_fd, POLLIN, 0},
                        {vwatch_target_fd(s->watch, s->target, now), POLLIN, 0},
                        {s->watch->audit_fd, POLLIN, 0},
                };
                int timeout = -1;
                bool deadline = false;
                if (s->deadline_ms && !s->timed_out) {
                        timeout = now >= s->deadline_ms ? 0 : (int) (s->deadline_ms - now);
                        deadline = true;
                }
                /* A throttled listener is polled again when its window ends. */
                int resume = vwatch_poll_timeout(s->watch, now);
                if (resume >= 0 && (timeout < 0 || resume < timeout)) {
                        timeout = resume;
                        deadline = false;
                }
                int n = poll(pfd, ARRAY_SIZE(pfd), timeout);
                if (n < 0 && errno != EINTR)
                        kill_sandbox(s);
                if (n == 0 && deadline) {
                        s->timed_out = true;
                        kill_sandbox(s);
                        continue;
                }
                if (n <= 0)
                        continue;
                /* The sync socket first: the command's exec message (its
                 * pid) comes before any record of what it did. */
                if (pfd[1].revents)
                        drain_messages(s);
                if (s->signal_fd >= 0 && pfd[2].revents)
                        forward_signal(s);
                if (pfd[3].revents)
                        vwatch_on_listener(s->watch, s->target, pfd[3].revents, monotonic_ms());
                if (pfd[4].revents)
                        vwatch_on_audit(s->watch, &s->target, 1);
                if (pfd[0].revents) {
                        siginfo_t si = {0};
                        if (waitid((idtype_t) P_PIDFD, (id_t) s->pidfd, &si, WEXITED) < 0) {
                                if (errno == EINTR)
                                        continue;
                                return W_EXITCODE(CHILD_EXIT_SETUP, 0);
                        }
                        drain_messages(s);
                        if (si.si_code == CLD_EXITED)
                                return W_EXITCODE(si.si_status, 0);
                        return si.si_status & 0x7f;
                }
        }
}

static void fill_result(struct supervisor *s, int init_status, const struct cgroup_stats *st,
                        struct run_result *res)
{
        run_result_set_status(res, s->have_exit ? s->exit_status : init_status, st);

        if (s->have_error) {
                /* The command never ran. */
                res->reason = RUN_REASON_SETUP_ERROR;
                res->signal = 0;
                launch_describe_error(s->plan, &s->error, res->error, sizeof(res->error));
                if (s->error.step == CHILD_STEP_EXEC)
                        res->exit_code =
                                s->error.err == ENOENT ? CHILD_EXIT_NOTFOUND : CHILD_EXIT_NOEXEC;
                else
                        res->exit_code = CHILD_EXIT_SETUP;
                return;
        }
        run_result_set_limit_reason(res, st, s->timed_out, false);
        if (!s->have_exit && res->reason != RUN_REASON_EXITED &&
            res->reason != RUN_REASON_SIGNALED) {
                /* pid 1 itself was killed: report the kill, as for the command. */
                res->signal = SIGKILL;
                res->exit_code = 128 + SIGKILL;
        }
}

/* The refusals the watch saw, and the limits and network refusals the run
 * read anyway. */
static void report_violations(struct supervisor *s, const struct cgroup_stats *st,
                              struct run_result *res)
{
        bool disk_full = vwatch_workspace_full(s->target->workspace_fd);
        vwatch_target_finish(s->watch, s->target, &s->target, 1);
        const struct violation_limits limits = {
                .stats = st,
                .memory_limit = s->plan->reported.memory_bytes,
                .pids_limit = s->plan->reported.pids,
                .disk_limit = s->plan->reported.disk_bytes,
                .timeout_ms = s->plan->reported.timeout_ms,
                .timed_out = s->timed_out,
                .disk_full = disk_full,
        };
        violations_add_limits(&res->violations, &limits);
        violations_add_network(&res->violations, &res->network);
}

static void vwatch_closep(struct vwatch *w)
{
        vwatch_close(w);
}

static void vwatch_target_closep(struct vwatch_target *t)
{
        vwatch_target_close(t);
}

/*
 * The network of the sandbox (netns/): the firewall, the veth and the DNS
 * proxy are built on a thread of their own, started as soon as the
 * sandbox's namespace exists, while this thread maps its ids and puts it in
 * its cgroups (on hybrid hosts a cgroup.procs write waits for an RCU grace
 * period) and the child builds its root. The child is released only after
 * both are done.
 */
struct network {
        const struct netns_plan *plan;
        struct netns_live live;
        pid_t child;
        pthread_t thread;
        bool started;
        int r;
        psrun_error err;
};

static void *network_main(void *arg)
{
        struct network *n = arg;
        n->r = netns_up(n->plan, n->child, &n->live, &n->err);
        return NULL;
}

static int network_start(struct network *n, const struct launch *l, psrun_error *err)
{
        /* A router (rootless) built it before the sandbox existed. */
        if (!n->plan->veth || launch_has_router(l))
                return 0;
        pid_t child = l->pid;
        n->child = child;
        /* It and the DNS proxy it starts take none of the caller's
         * signals: they are the caller's threads, running psrun's code. */
        sigset_t all, old;
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        int e = pthread_create(&n->thread, NULL, network_main, n);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (e != 0)
                return psrun_error_errno(err, e, "network: set-up thread");
        n->started = true;
        return 0;
}

/* Waits for the set-up: its result, and its error in *err. */
static int network_wait(struct network *n, psrun_error *err)
{
        if (!n->started)
                return 0;
        pthread_join(n->thread, NULL);
        n->started = false;
        if (n->r < 0 && err)
                *err = n->err;
        return n->r;
}

/* Once the sandbox is gone: the proxy's counts, then the table, early (see
 * netns_remove_table: the socket is closed last, in network_teardown). */
static void network_end(struct network *n, struct launch *l, struct netns_stats *stats)
{
        launch_network_down(l, stats);
        netns_down(&n->live, stats);
}

static void network_teardown(struct network *n)
{
        (void) network_wait(n, NULL);
        netns_live_close(&n->live);
}

/* A failure of psrun itself after `start`: the result says so. */
static int fail(struct run_result *res, psrun_error *err, int r, uint64_t start)
{
        res->wall_ms = monotonic_ms() - start;
        return run_result_setup_error(res, err, r);
}

/* The native backend: psrun's own child (runtime/child.c) under the
 * kernel's layers. */
static int native_run(const struct policy *pol, char *const argv[], const struct run_options *o,
                      struct run_result *res, psrun_error *err)
{
        uint64_t start = monotonic_ms();

        /* Released in reverse order: the launch, the signals, the cgroup,
         * the plan. */
        _cleanup_(plan_free) struct plan plan;
        const struct plan_options po = {.log = o->log, .log_userdata = o->log_userdata};
        int r = plan_from_policy(pol, argv, &po, &plan, err);
        if (r < 0)
                return run_result_setup_error(res, err, r);
        /* Torn down after everything else but the plan (by then the
         * sandbox is gone on every path); its table was deleted as soon as
         * the sandbox's last process was. */
        _cleanup_(network_teardown) struct network net = {.plan = &plan.net,
                                                          .live = NETNS_LIVE_INIT};
        /* What the violations report needs, before anything is cloned. */
        _cleanup_(vwatch_closep) struct vwatch watch = {.audit_fd = -1};
        vwatch_prepare(&watch, &plan);
        if (watch.landlock_audit)
                plan_log_landlock_denials(&plan);
        /* disk_full's tmpfs, from the command (a session has its own). */
        plan.report_workspace = plan.report_exec;
        _cleanup_(cgroup_destroyp) struct cgroup *cg = NULL;
        r = plan.rootless.active ? rootless_plan_limits(pol, &plan, o->cgroup_parent, &cg, err)
                                 : cgroup_create(o->cgroup_parent, &plan.limits, &cg, err);
        run_result_set_layers(res, &plan);
        if (r < 0)
                return run_result_setup_error(res, err, r);
        fault_point("run:cgroup");
        _cleanup_(vwatch_target_closep) struct vwatch_target target;
        vwatch_target_init(&watch, &target, &res->violations, cg);
        _cleanup_(run_unblock_signals) struct run_forwarding fwd = {.signal_fd = -1};
        if (o->forward_signals)
                (void) run_block_signals(&fwd);

        _cleanup_(launch_close) struct launch l = LAUNCH_INIT;
        uint64_t t0 = monotonic_ms();
        r = launch_clone(&plan, cg, &l, err);
        if (r < 0)
                return fail(res, err, r, start);
        fault_point("run:cloned");
        /* The network (firewall, veth, proxy) is built meanwhile: the
         * command starts with it in place, or not at all. */
        r = network_start(&net, &l, err);
        /* The child builds its root while we put it in its cgroups, and
         * starts the command only once it is in them: nothing of the command
         * runs unconfined. */
        if (r >= 0)
                r = launch_confine(&l, &plan, cg, err);
        if (r >= 0) {
                r = network_wait(&net, err);
        } else {
                psrun_error ignored;
                (void) network_wait(&net, &ignored);
        }
        if (r >= 0)
                fault_point("run:confined");
        if (r >= 0)
                r = launch_release(&l, err);
        if (r >= 0)
                fault_point("run:released");
        struct supervisor s = {
                .plan = &plan,
                .cg = cg,
                .pid = l.pid,
                .pidfd = l.pidfd,
                .sync_fd = l.sync_fd,
                .signal_fd = fwd.signal_fd,
                .deadline_ms = plan.timeout_ms ? t0 + plan.timeout_ms : 0,
                .watch = &watch,
                .target = &target,
        };
        /* Cgroups of psrun runs that were killed are removed while the
         * sandbox starts up (it runs on the other core meanwhile). */
        if (r >= 0 && cg)
                (void) cgroup_gc_siblings(cg, NULL);

        int init_status;
        if (r < 0) {
                /* If the child failed a setup step meanwhile, its own record
                 * explains more than what that did to our step. */
                kill_sandbox(&s);
                init_status = supervise(&s);
                if (!s.have_error)
                        return fail(res, err, r, start);
                psrun_error_clear(err);
        } else {
                init_status = supervise(&s);
        }
        res->wall_ms = monotonic_ms() - t0;
        /* What the network refused, counted until the sandbox ended. */
        network_end(&net, &l, &res->network);

        /* The fields a result and its violations read, each file once
         * (cgroup_read_stats reads runc's whole set, ~17 files on v1). */
        struct cgroup_stats st = {0};
        (void) cgroup_read_usage(cg, &st, NULL);
        fill_result(&s, init_status, &st, res);
        report_violations(&s, &st, res);
        return 0;
}

const struct backend_ops backend_native = {.name = "native", .run = native_run};
