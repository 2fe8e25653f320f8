/* SPDX-License-Identifier: MIT */
/*
 * A session's sandbox under gVisor (docs/sessions.md, "Backends"): the
 * supervisor keeps `runsc run` (attached) as its child for the session's
 * life, and each exec is a `runsc exec` joining it.
 *
 * - The sandbox's init is a shell that reports once and then only reaps
 *   (the processes execs leave behind are reparented to it). Its one line
 *   on a pipe says the sandbox is up: runsc exec works from then on. It
 *   runs as root with no capabilities and an empty environment, execs as
 *   the sandbox user: as natively, an exec can neither signal it (`kill -9
 *   1` is EPERM) nor trace it.
 * - runsc run is attached: if the supervisor dies (SIGKILL), runsc gets its
 *   parent-death signal and the sentry and gofer die with runsc, as the
 *   native init dies with the supervisor.
 * - /workspace is the host tmpfs psrun mounted in the launcher's mount
 *   namespace; the supervisor holds its fd, so the file API works on the
 *   host side exactly as natively.
 * - The sandbox's processes are the sentry's: a host cgroup per exec would
 *   hold only the runsc exec client. An exec's processes are told apart
 *   inside the sandbox instead: runsc starts each exec in a session of its
 *   own, and killing an exec (timeout, SIGKILL, client gone) kills every
 *   process of that session, from inside, as root with CAP_KILL. Memory,
 *   pids and CPU are limited for the whole sandbox by the session's cgroup.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/fileio.h"
#include "netns/netns.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/gvisor/gvisor.h"

#define MAX_EXECS        64
#define READY_TIMEOUT_MS 30000
#define KILL_TIMEOUT_MS  5000
#define READY_LINE       "psrun-ready\n"

/* The init: one line, then reap whatever is reparented to it. dash's
 * `wait` reaps every child, not only its jobs. */
static const char init_script[] = "echo psrun-ready; while :; do sleep 2147483647 & wait; done";

/* Kills every process of session $1 (an exec's): a few rounds, for those
 * forked meanwhile. Fields after "(comm) ": state ppid pgrp session. */
static const char kill_script[] =
        "sid=$1; for round in 1 2 3 4; do found=; for f in /proc/[0-9]*/stat; do "
        "read -r line < \"$f\" 2>/dev/null || continue; set -- ${line##*) }; "
        "if [ \"$4\" = \"$sid\" ]; then p=${f#/proc/}; kill -9 \"${p%/stat}\" 2>/dev/null "
        "&& found=1; fi; done; [ -n \"$found\" ] || break; done";

struct exec_files {
        char dir[160];
        int in[3], out[3];                 /* stdio as given, and as runsc got it */
        uint64_t oom_kills, pids_max_hits; /* the session cgroup's at the start */
        bool used;
};

struct gvisor_session {
        struct gvisor_sandbox gs;
        struct plan *tmpl;
        struct cgroup *cg;
        int netns_fd;          /* the launcher's: runsc's control socket is there */
        struct netns_live net; /* .plan NULL until it is up */
        struct exec_files execs[MAX_EXECS];
        unsigned kill_seq;
        bool ending; /* the sandbox is being killed: no more kill helpers */
};

/* Wait for the init's line; runsc exiting first is its error. */
static int wait_ready(struct gvisor_session *g, struct launch *init, int fd, psrun_error *err)
{
        char buf[64];
        size_t used = 0;
        uint64_t deadline = monotonic_ms() + READY_TIMEOUT_MS;
        while (used < strlen(READY_LINE)) {
                uint64_t now = monotonic_ms();
                struct pollfd pfd[2] = {{fd, POLLIN, 0}, {init->pidfd, POLLIN, 0}};
                int n = poll(pfd, 2, now >= deadline ? 0 : (int) (deadline - now));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n == 0)
                        return psrun_error_set(err, ETIMEDOUT,
                                               "session: backend: gvisor: the sandbox did not "
                                               "start within %d s",
                                               READY_TIMEOUT_MS / 1000);
                if (pfd[0].revents & POLLIN) {
                        ssize_t k = read(fd, buf + used, sizeof(buf) - 1 - used);
                        if (k > 0) {
                                used += (size_t) k;
                                continue;
                        }
                }
                if (pfd[1].revents || (pfd[0].revents & (POLLHUP | POLLERR))) {
                        char msg[400];
                        if (gvisor_read_error(g->gs.runsc_log, msg, sizeof(msg)) == 0)
                                return psrun_error_set(err, EIO,
                                                       "session: backend: gvisor: runsc: %s", msg);
                        return psrun_error_set(err, EIO,
                                               "session: backend: gvisor: runsc exited while "
                                               "the sandbox started");
                }
        }
        buf[used] = '\0';
        if (strcmp(buf, READY_LINE) != 0)
                return psrun_error_set(err, EPROTO,
                                       "session: backend: gvisor: the sandbox's init said "
                                       "something unexpected");
        return 0;
}

int gvisor_session_start(const struct policy *pol, struct plan *tmpl, const char *cgroup_parent,
                         struct cgroup **cg, struct launch *init, int *ws_fd,
                         struct gvisor_session **ret, psrun_error *err)
{
        int r = gvisor_check_policy(pol, err);
        struct gvisor_runtime rt;
        if (r >= 0)
                r = gvisor_runtime_resolve(pol, &rt, err);
        if (r < 0)
                return r;
        struct gvisor_session *g = calloc(1, sizeof(*g));
        if (!g)
                return psrun_error_errno(err, ENOMEM, "session");
        g->tmpl = tmpl;
        g->netns_fd = -1;
        *ret = g;
        r = gvisor_sandbox_create(&g->gs, &rt, tmpl, err);
        if (r < 0)
                return psrun_error_prefix(err, "session");
        /* + 1: the init. Host tasks, as for psrun run (runsc.c). */
        tmpl->limits = plan_limits_host_tasks(tmpl, 1, rt.pids_base, rt.pids_per_process);
        r = cgroup_create(cgroup_parent, &tmpl->limits, cg, err);
        if (r < 0)
                return r;
        g->cg = *cg;
        /*
         * A fork bomb that reaches the host's pids limit may leave the
         * sentry unable to make a thread, and the Go runtime then ends the
         * sentry, and with it the session. gVisor enforces RLIMIT_NPROC for
         * the sandbox's user, for every process of it in the sandbox: the
         * policy's pids_limit there makes such an exec fail to fork inside,
         * and the session lives on (the init and its sleep are root's, not
         * counted). The host limit stays behind it (for root, whom
         * RLIMIT_NPROC does not stop).
         */
        if (tmpl->n_rlimits < PLAN_MAX_RLIMITS)
                tmpl->rlimits[tmpl->n_rlimits++] = (struct plan_rlimit){
                        .resource = RLIMIT_NPROC,
                        .limit = {tmpl->reported.pids, tmpl->reported.pids},
                };

        struct plan p = *tmpl; /* shallow: the init's command only differs */
        char *init_argv[] = {"/bin/sh", "-c", (char *) init_script, NULL};
        p.argv = init_argv;
        /* Nothing in it to read: runsc 20221219's procfs shows
         * /proc/1/environ and maps to the sandbox user, root's init or not
         * (docs/security.md). dash's default PATH finds sleep. */
        char *init_envp[] = {NULL};
        p.envp = init_envp;
        char *sub[] = {"run", "--bundle", g->gs.dir, g->gs.id, NULL};
        _cleanup_strv_free_ char **rargv = gvisor_runsc_argv(&g->gs, g->gs.runsc_log, sub);
        if (!rargv)
                return psrun_error_errno(err, ENOMEM, "session");
        /* An image root: attached in the launcher's namespace, it lives as
         * long as runsc run, the session's (the plan holds the image). */
        _cleanup_close_ int root_fd = -1;
        r = gvisor_image_root(tmpl, &root_fd, err);
        if (r < 0)
                return psrun_error_prefix(err, "session");
        int pipefd[2];
        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return psrun_error_errno(err, errno, "session: pipe");
        struct gvisor_spawn sp = {
                .argv = rargv,
                .stdio = {-1, pipefd[1], -1},
                .cg = g->cg,
                .new_namespaces = true,
                .gs = &g->gs,
                .netns_fd = -1,
                .image_root = root_fd >= 0,
                .root_fd = root_fd,
        };
        r = gvisor_spawn(&sp, init, ws_fd, err);
        close(pipefd[1]);
        _cleanup_close_ int ready_fd = pipefd[0];
        if (r < 0)
                return psrun_error_prefix(err, "session");
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/ns/net", (int) init->pid);
        g->netns_fd = open(path, O_RDONLY | O_CLOEXEC);
        if (g->netns_fd < 0)
                return psrun_error_errno(err, errno, "session: backend: gvisor: %s", path);
        r = gvisor_make_workdir(*ws_fd, p.workdir, &p, err);
        if (r >= 0)
                r = netns_up(&tmpl->net, init->pid, &g->net, err);
        if (r >= 0)
                r = gvisor_write_bundle(&g->gs, &p, init->pid, tmpl->net.veth ? init->pid : 0,
                                        GVISOR_ROOT_NO_CAPS, err);
        if (r >= 0)
                r = gvisor_release(init, g->gs.rt.runsc, err);
        if (r >= 0)
                r = wait_ready(g, init, ready_fd, err);
        return r;
}

const char *gvisor_session_rootfs(const struct gvisor_session *g)
{
        return g->gs.rootfs;
}

static void exec_path(const struct gvisor_session *g, unsigned slot, const char *name, char *buf,
                      size_t size)
{
        snprintf(buf, size, "%s/exec-%u%s%s", g->gs.dir, slot, name ? "/" : "", name ? name : "");
}

int gvisor_session_exec(struct gvisor_session *g, unsigned slot, const struct plan *p,
                        const int fds[3], struct launch *l, psrun_error *err)
{
        if (slot >= MAX_EXECS)
                return psrun_error_set(err, EINVAL, "exec: slot %u", slot);
        struct exec_files *x = &g->execs[slot];
        char dir[sizeof(x->dir)];
        exec_path(g, slot, NULL, dir, sizeof(dir));
        memcpy(x->dir, dir, sizeof(dir));
        if (mkdir(x->dir, 0700) < 0 && errno != EEXIST)
                return psrun_error_errno(err, errno, "exec: backend: gvisor: mkdir %s", x->dir);
        char json[224], pidfile[224], log[224];
        exec_path(g, slot, "process.json", json, sizeof(json));
        exec_path(g, slot, "pid", pidfile, sizeof(pidfile));
        exec_path(g, slot, "runsc.log", log, sizeof(log));
        (void) unlink(json);
        (void) unlink(pidfile);
        (void) unlink(log);
        int r = gvisor_write_process(json, p->argv, p->envp, p->workdir, p, GVISOR_SANDBOX_USER,
                                     err);
        if (r < 0)
                return psrun_error_prefix(err, "exec");
        char *sub[] = {"exec", "--process", json, "--internal-pid-file", pidfile, g->gs.id, NULL};
        _cleanup_strv_free_ char **rargv = gvisor_runsc_argv(&g->gs, log, sub);
        if (!rargv)
                return psrun_error_errno(err, ENOMEM, "exec");
        memcpy(x->in, fds, sizeof(x->in));
        gvisor_stdio_open(x->in, x->out);
        x->used = true;
        /* What the exec hits shows as a change of the session's counts. */
        struct cgroup_stats st = {0};
        (void) cgroup_read_stats(g->cg, &st, NULL);
        x->oom_kills = st.oom_kills;
        x->pids_max_hits = st.pids_max_hits;
        struct gvisor_spawn sp = {
                .argv = rargv,
                .stdio = {x->out[0], x->out[1], x->out[2]},
                .cg = g->cg,
                .netns_fd = g->netns_fd,
        };
        r = gvisor_spawn(&sp, l, NULL, err);
        if (r >= 0)
                r = gvisor_release(l, g->gs.rt.runsc, err);
        if (r < 0) {
                if (l->pidfd >= 0) {
                        (void) syscall(SYS_pidfd_send_signal, l->pidfd, SIGKILL, NULL, 0);
                        siginfo_t si;
                        (void) waitid((idtype_t) P_PIDFD, (id_t) l->pidfd, &si, WEXITED);
                }
                launch_close(l);
                char unused[8];
                struct cgroup_stats ignored;
                (void) gvisor_session_exec_done(g, slot, &ignored, unused, sizeof(unused));
                return psrun_error_prefix(err, "exec");
        }
        return 0;
}

/* The exec's pid inside the sandbox, which runsc exec writes once the
 * process runs: waited for (bounded) while runsc exec lives. */
static bool exec_pid(struct gvisor_session *g, unsigned slot, int client_pidfd, char *pid,
                     size_t size)
{
        char pidfile[224];
        exec_path(g, slot, "pid", pidfile, sizeof(pidfile));
        uint64_t deadline = monotonic_ms() + KILL_TIMEOUT_MS;
        for (;;) {
                _cleanup_close_ int fd = open(pidfile, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
                if (fd >= 0 && read_into(fd, pid, size) > 0) {
                        pid[strspn(pid, "0123456789")] = '\0';
                        if (pid[0])
                                return true;
                }
                struct pollfd p = {client_pidfd, POLLIN, 0};
                if (monotonic_ms() >= deadline || poll(&p, 1, 10) != 0)
                        return false; /* gone, or never started inside */
        }
}

static void killer_path(const struct gvisor_session *g, unsigned seq, const char *ext, char *buf,
                        size_t size)
{
        snprintf(buf, size, "%s/kill-%u.%s", g->gs.dir, seq, ext);
}

static void killer_files_remove(const struct gvisor_session *g, unsigned seq)
{
        char path[224];
        killer_path(g, seq, "json", path, sizeof(path));
        (void) unlink(path);
        killer_path(g, seq, "log", path, sizeof(path));
        (void) unlink(path);
}

/* Starts `runsc exec` of the kill script for session pid (as root, with
 * CAP_KILL only); its files are named by seq. */
static int start_killer(struct gvisor_session *g, const char *pid, unsigned seq, struct launch *l)
{
        *l = (struct launch) LAUNCH_INIT;
        char json[224], log[224];
        killer_path(g, seq, "json", json, sizeof(json));
        killer_path(g, seq, "log", log, sizeof(log));
        killer_files_remove(g, seq);
        char *argv[] = {"/bin/sh", "-c", (char *) kill_script, "psrun-kill", (char *) pid, NULL};
        char *envp[] = {"PATH=/usr/sbin:/usr/bin:/sbin:/bin", NULL};
        int r = gvisor_write_process(json, argv, envp, "/", g->tmpl, GVISOR_ROOT_KILL, NULL);
        char *sub[] = {"exec", "--process", json, g->gs.id, NULL};
        _cleanup_strv_free_ char **rargv = r < 0 ? NULL : gvisor_runsc_argv(&g->gs, log, sub);
        if (!rargv)
                return -ENOMEM;
        struct gvisor_spawn sp = {
                .argv = rargv, .stdio = {-1, -1, -1}, .cg = NULL, .netns_fd = g->netns_fd};
        r = gvisor_spawn(&sp, l, NULL, NULL);
        if (r >= 0)
                r = gvisor_release(l, g->gs.rt.runsc, NULL);
        if (r < 0) {
                if (l->pidfd >= 0) {
                        (void) syscall(SYS_pidfd_send_signal, l->pidfd, SIGKILL, NULL, 0);
                        siginfo_t si;
                        (void) waitid((idtype_t) P_PIDFD, (id_t) l->pidfd, &si, WEXITED);
                }
                launch_close(l);
                killer_files_remove(g, seq);
        }
        return r;
}

/* Kills every process of the session whose leader is pid (an exec's), from
 * inside, and waits for the helper (bounded). */
static void kill_session_of(struct gvisor_session *g, const char *pid)
{
        struct launch l;
        unsigned seq = g->kill_seq++;
        if (start_killer(g, pid, seq, &l) < 0)
                return;
        struct pollfd p = {l.pidfd, POLLIN, 0};
        while (poll(&p, 1, KILL_TIMEOUT_MS) < 0 && errno == EINTR)
                ;
        (void) syscall(SYS_pidfd_send_signal, l.pidfd, SIGKILL, NULL, 0);
        siginfo_t si;
        (void) waitid((idtype_t) P_PIDFD, (id_t) l.pidfd, &si, WEXITED);
        launch_close(&l);
        killer_files_remove(g, seq);
}

void gvisor_session_kill_exec(struct gvisor_session *g, unsigned slot, int client_pidfd)
{
        if (slot >= MAX_EXECS || !g->execs[slot].used)
                return;
        char pid[24] = "";
        if (exec_pid(g, slot, client_pidfd, pid, sizeof(pid)))
                kill_session_of(g, pid);
}

/*
 * Natively, what an exec leaves running is killed with its cgroup when the
 * command ends, before the result is written: nothing of the exec writes
 * after it. Here its processes are the sentry's: the exec's session is
 * killed from inside, and the result waits for that (a runsc exec of the
 * kill helper), so that a background process cannot print after psrun's
 * result (a forged result line on `session exec --json`).
 */
static void kill_leftovers(struct gvisor_session *g, unsigned slot)
{
        char pidfile[224], pid[24] = "";
        exec_path(g, slot, "pid", pidfile, sizeof(pidfile));
        _cleanup_close_ int fd = open(pidfile, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0 || read_into(fd, pid, sizeof(pid)) <= 0)
                return;
        pid[strspn(pid, "0123456789")] = '\0';
        if (pid[0] && !g->ending)
                kill_session_of(g, pid);
}

int gvisor_session_exec_done(struct gvisor_session *g, unsigned slot, struct cgroup_stats *st,
                             char *msg, size_t size)
{
        memset(st, 0, sizeof(*st));
        if (slot >= MAX_EXECS || !g->execs[slot].used)
                return 0;
        struct exec_files *x = &g->execs[slot];
        struct cgroup_stats now = {0};
        (void) cgroup_read_stats(g->cg, &now, NULL);
        st->oom_kills = now.oom_kills - x->oom_kills;
        st->pids_max_hits = now.pids_max_hits - x->pids_max_hits;
        char log[224];
        exec_path(g, slot, "runsc.log", log, sizeof(log));
        int code = 0;
        if (gvisor_read_error(log, msg, size) == 0)
                code = gvisor_error_exit_code(msg);
        else
                kill_leftovers(g, slot);
        gvisor_stdio_done(x->in, x->out);
        static const char *const files[] = {"process.json", "pid", "runsc.log"};
        for (size_t i = 0; i < ARRAY_SIZE(files); i++) {
                char path[224];
                exec_path(g, slot, files[i], path, sizeof(path));
                (void) unlink(path);
        }
        (void) rmdir(x->dir);
        x->used = false;
        return code;
}

void gvisor_session_ending(struct gvisor_session *g)
{
        if (g)
                g->ending = true;
}

void gvisor_session_stop(struct gvisor_session *g)
{
        if (!g)
                return;
        netns_live_close(&g->net);
        /* The supervisor exits without freeing its plan: the address
         * lease goes back here. */
        if (g->tmpl)
                netns_release(&g->tmpl->net);
        safe_close(g->netns_fd);
        for (unsigned i = 0; i < MAX_EXECS; i++)
                if (g->execs[i].used)
                        gvisor_stdio_done(g->execs[i].in, g->execs[i].out);
        gvisor_sandbox_remove(&g->gs);
        free(g);
}
