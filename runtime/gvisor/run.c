/* SPDX-License-Identifier: MIT */
/*
 * psrun run with backend: gvisor. The plan is the native backend's
 * (runtime/plan-policy.c); bundle.c turns it into a bundle, and runsc runs
 * it inside psrun's cgroups and namespaces (spawn.c):
 *
 *   psrun                      launcher (cgroup, new mount + net namespace)
 *   state dir, cgroups
 *   clone3 ─────────────────►  mount the workspace tmpfs (its namespace only)
 *   ◄── workspace fd ───────   wait
 *   workdir, veth, DNS proxy,
 *   config.json
 *   'G' ────────────────────►  execve runsc run  ──► gofer, sentry (attached)
 *   supervise: pidfd, timeout
 *   (cgroup.kill), signals
 *   stats -> result; remove cgroups, network, state dir
 */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
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
#include "runtime/gvisor/gvisor.h"
#include "runtime/plan.h"
#include "runtime/result.h"
#include "runtime/violations.h"

static void sandbox_removep(struct gvisor_sandbox *gs)
{
        gvisor_sandbox_remove(gs);
}

static void kill_all(struct launch *l, struct cgroup *cg)
{
        (void) syscall(SYS_pidfd_send_signal, l->pidfd, SIGKILL, NULL, 0);
        (void) cgroup_kill(cg, NULL);
}

/* Until runsc exits: the wall-clock timeout kills the whole tree (runsc,
 * gofer, sentry: all in the cgroup), signals go to runsc, which hands them
 * to the command. Returns the wait status. */
static int supervise(struct launch *l, struct cgroup *cg, int signal_fd, uint64_t deadline,
                     bool *timed_out)
{
        for (;;) {
                struct pollfd pfd[2] = {{l->pidfd, POLLIN, 0}, {signal_fd, POLLIN, 0}};
                int timeout = -1;
                if (deadline && !*timed_out) {
                        uint64_t now = monotonic_ms();
                        timeout = now >= deadline ? 0 : (int) (deadline - now);
                }
                int n = poll(pfd, signal_fd >= 0 ? 2 : 1, timeout);
                if (n < 0 && errno != EINTR)
                        kill_all(l, cg);
                if (n == 0 && timeout >= 0) {
                        *timed_out = true;
                        kill_all(l, cg);
                        continue;
                }
                if (n <= 0)
                        continue;
                if (signal_fd >= 0 && pfd[1].revents) {
                        struct signalfd_siginfo si;
                        while (read(signal_fd, &si, sizeof(si)) == (ssize_t) sizeof(si))
                                (void) syscall(SYS_pidfd_send_signal, l->pidfd, (int) si.ssi_signo,
                                               NULL, 0);
                }
                if (pfd[0].revents) {
                        siginfo_t si = {0};
                        if (waitid((idtype_t) P_PIDFD, (id_t) l->pidfd, &si, WEXITED) < 0) {
                                if (errno == EINTR)
                                        continue;
                                return W_EXITCODE(125, 0);
                        }
                        return si.si_code == CLD_EXITED ? W_EXITCODE(si.si_status, 0)
                                                        : si.si_status & 0x7f;
                }
        }
}

/*
 * runsc's exit status is the command's, with one loss: runsc reports a
 * command killed by signal N as exit status 128+N (its wait status is
 * flattened), so such a command is "exited" with exit_code 128+N here,
 * where the native backend says "signaled". psrun's own kills (timeout,
 * OOM, pids) are known from the cgroup and reported as natively.
 */
static void fill_result(int status, bool timed_out, const struct cgroup_stats *st,
                        const struct gvisor_sandbox *gs, struct run_result *res)
{
        run_result_set_status(res, status, st);
        char msg[400];
        /* 128 is runsc's own failure; the command's is told by the log. A
         * sandbox that died of a limit was killed by it. */
        if (!timed_out && st->oom_kills == 0 && st->pids_max_hits == 0 && res->exit_code == 128 &&
            gvisor_read_error(gs->runsc_log, msg, sizeof(msg)) == 0) {
                res->reason = RUN_REASON_SETUP_ERROR;
                res->exit_code = gvisor_error_exit_code(msg);
                res->signal = 0;
                snprintf(res->error, sizeof(res->error), "backend: gvisor: runsc: %s", msg);
                return;
        }
        run_result_set_limit_reason(res, st, timed_out, false);
        if (res->reason == RUN_REASON_OOM || res->reason == RUN_REASON_TIMEOUT) {
                /* The tree was killed: report the kill, as natively. */
                res->signal = SIGKILL;
                res->exit_code = 128 + SIGKILL;
        }
}

/* seccomp "on": the policy's profile holds inside the sandbox (the bundle's
 * linux.seccomp, applied by the sentry to the command: bundle.c); "gvisor"
 * where gVisor stands in a layer's place: the gofer serves only the
 * bundle's mounts. */
static void fill_layers(struct run_result *res)
{
        snprintf(res->layers.seccomp, sizeof(res->layers.seccomp), "on");
        snprintf(res->layers.landlock, sizeof(res->layers.landlock), "gvisor");
        snprintf(res->layers.apparmor, sizeof(res->layers.apparmor), "off");
}

/* What refused what: the limits and the network report as natively; the
 * sandbox's system calls and files are the sentry's to refuse, and psrun
 * sees none of that. */
static void report_violations(const struct plan *plan, const struct cgroup_stats *st,
                              bool timed_out, struct run_result *res)
{
        violations_init(&res->violations, (enum policy_violations) plan->violations);
        static const enum violation_layer theirs[] = {VIOLATION_SECCOMP, VIOLATION_LANDLOCK,
                                                      VIOLATION_APPARMOR};
        for (size_t i = 0; i < ARRAY_SIZE(theirs); i++)
                violations_set_unavailable(&res->violations, theirs[i], "%s",
                                           GVISOR_VIOLATIONS_WHY);
        const struct violation_limits limits = {
                .stats = st,
                .memory_limit = plan->reported.memory_bytes,
                .pids_limit = plan->reported.pids,
                .disk_limit = plan->reported.disk_bytes,
                .timeout_ms = plan->reported.timeout_ms,
                .timed_out = timed_out,
        };
        violations_add_limits(&res->violations, &limits);
        violations_add_network(&res->violations, &res->network);
}

static int run_with(const struct policy *pol, char *const argv[], const struct run_options *o,
                    const struct gvisor_runtime *rt, const int stdio[3], struct run_result *res,
                    psrun_error *err)
{
        uint64_t start = monotonic_ms();
        _cleanup_(plan_free) struct plan plan;
        const struct plan_options po = {.log = o->log, .log_userdata = o->log_userdata};
        int r = plan_from_policy(pol, argv, &po, &plan, err);
        if (r < 0)
                return run_result_setup_error(res, err, r);
        fill_layers(res);
        _cleanup_(sandbox_removep) struct gvisor_sandbox gs = {0};
        r = gvisor_sandbox_create(&gs, rt, &plan, err);
        if (r < 0)
                return run_result_setup_error(res, err, r);
        /* The limits hold for runsc, its gofer and the sentry together;
         * pids count their host tasks (runsc.c). */
        plan.limits = plan_limits_host_tasks(&plan, 0, rt->pids_base, rt->pids_per_process);
        _cleanup_(cgroup_destroyp) struct cgroup *cg = NULL;
        r = cgroup_create(o->cgroup_parent, &plan.limits, &cg, err);
        if (r < 0)
                return run_result_setup_error(res, err, r);
        fault_point("gvisor:cgroup");
        char *sub[] = {"run", "--bundle", gs.dir, gs.id, NULL};
        _cleanup_strv_free_ char **rargv = gvisor_runsc_argv(&gs, gs.runsc_log, sub);
        if (!rargv)
                return run_result_setup_error(res, err,
                                              psrun_error_errno(err, ENOMEM, "backend: gvisor"));
        _cleanup_(run_unblock_signals) struct run_forwarding fwd = {.signal_fd = -1};
        if (o->forward_signals)
                (void) run_block_signals(&fwd);

        _cleanup_(launch_close) struct launch l = LAUNCH_INIT;
        _cleanup_(netns_live_close) struct netns_live net = NETNS_LIVE_INIT;
        _cleanup_close_ int ws_fd = -1, root_fd = -1;
        /* An image root: the overlay the native child would attach, made
         * here and attached by the launcher on the bundle's rootfs/. */
        if ((r = gvisor_image_root(&plan, &root_fd, err)) < 0)
                return run_result_setup_error(res, err, r);
        int fds[3];
        gvisor_stdio_open(stdio, fds);
        struct gvisor_spawn sp = {
                .argv = rargv,
                .stdio = {fds[0], fds[1], fds[2]},
                .cg = cg,
                .new_namespaces = true,
                .gs = &gs,
                .netns_fd = -1,
                .image_root = root_fd >= 0,
                .root_fd = root_fd,
        };
        uint64_t t0 = monotonic_ms();
        r = gvisor_spawn(&sp, &l, &ws_fd, err);
        if (r < 0) {
                gvisor_stdio_done(stdio, fds);
                res->wall_ms = monotonic_ms() - start;
                return run_result_setup_error(res, err, r);
        }
        fault_point("gvisor:cloned");
        r = gvisor_make_workdir(ws_fd, plan.workdir, &plan, err);
        /* The veth goes into the launcher's namespace, which runsc's sandbox
         * takes (config.json names it); the rules and the DNS proxy stay on
         * the host side, where the sentry's own netstack cannot touch
         * them. */
        if (r >= 0)
                r = netns_up(&plan.net, l.pid, &net, err);
        if (r >= 0)
                r = gvisor_write_bundle(&gs, &plan, l.pid, plan.net.veth ? l.pid : 0,
                                        GVISOR_SANDBOX_USER, err);
        if (r >= 0)
                r = gvisor_release(&l, rt->runsc, err);
        if (r >= 0)
                fault_point("gvisor:released");
        if (r < 0) {
                kill_all(&l, cg);
                siginfo_t si;
                (void) waitid((idtype_t) P_PIDFD, (id_t) l.pidfd, &si, WEXITED);
                gvisor_stdio_done(stdio, fds);
                res->wall_ms = monotonic_ms() - start;
                return run_result_setup_error(res, err, r);
        }
        (void) cgroup_gc_siblings(cg, NULL);
        bool timed_out = false;
        int status = supervise(&l, cg, fwd.signal_fd, plan.timeout_ms ? t0 + plan.timeout_ms : 0,
                               &timed_out);
        res->wall_ms = monotonic_ms() - t0;
        /* Everything that could write is gone with runsc (the sentry is
         * --attached); leftovers die with the cgroup. */
        (void) cgroup_kill(cg, NULL);
        gvisor_stdio_done(stdio, fds);
        struct cgroup_stats st = {0};
        (void) cgroup_read_stats(cg, &st, NULL);
        fill_result(status, timed_out, &st, &gs, res);
        netns_down(&net, &res->network);
        report_violations(&plan, &st, timed_out, res);
        return 0;
}

static int gvisor_run(const struct policy *pol, char *const argv[], const struct run_options *o,
                      struct run_result *res, psrun_error *err)
{
        int r = gvisor_check_policy(pol, err);
        if (r < 0)
                return run_result_setup_error(res, err, r);
        struct gvisor_runtime rt;
        r = gvisor_runtime_resolve(pol, &rt, err);
        if (r < 0)
                return run_result_setup_error(res, err, r);
        static const int stdio[3] = {0, 1, 2};
        return run_with(pol, argv, o, &rt, stdio, res, err);
}

const struct backend_ops backend_gvisor = {.name = "gvisor", .run = gvisor_run};

int gvisor_probe(const char *runsc, const char *platform, uint64_t timeout_ms, psrun_error *err)
{
        _cleanup_(policy_free) struct policy pol;
        if (policy_init(&pol) < 0)
                return psrun_error_errno(err, ENOMEM, "backend: gvisor: probe");
        pol.backend = POLICY_BACKEND_GVISOR;
        pol.timeout_ms = timeout_ms;
        struct gvisor_runtime rt = {.platform = platform, .pids_base = 64, .pids_per_process = 16};
        snprintf(rt.runsc, sizeof(rt.runsc), "%s", runsc);
        char *argv[] = {"true", NULL};
        static const int stdio[3] = {-1, -1, -1};
        struct run_options o = {0};
        struct run_result res = {0};
        int r = run_with(&pol, argv, &o, &rt, stdio, &res, err);
        if (r < 0)
                return r;
        if (res.reason == RUN_REASON_TIMEOUT)
                return psrun_error_set(err, ETIMEDOUT,
                                       "a sandbox running `true` did not finish within %llu ms",
                                       (unsigned long long) timeout_ms);
        if (res.reason == RUN_REASON_SETUP_ERROR)
                return psrun_error_set(err, EIO, "%s", res.error);
        if (res.exit_code != 0)
                return psrun_error_set(err, EIO, "a sandbox running `true` exited with %d",
                                       res.exit_code);
        return 0;
}
