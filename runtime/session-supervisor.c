/* SPDX-License-Identifier: MIT */
/*
 * A session's supervisor: one small process per session, the parent of the
 * sandbox's init and of every exec, holder of the session's cgroups and
 * timers, answering the control socket in the state directory. No daemon:
 * it is started by session_spawn() and gone with the session.
 *
 * Its one thread does all of that; the only other threads are the DNS
 * proxies of its networks (runtime/session-net.c), which touch neither fds
 * 0-2 nor namespaces, so the main thread may change its own fds 0-2 around
 * a clone3 without locks. From start-up on, its children are born in the
 * sandbox's pid namespace (setns CLONE_NEWPID); a thread cannot be made
 * meanwhile, so it leaves that namespace for the moment it makes one.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/signals.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/install.h"
#include "runtime/gvisor.h"
#include "runtime/launch.h"
#include "runtime/run.h"
#include "runtime/session-net.h"
#include "runtime/session.h"
#include "runtime/violations-watch.h"

#define MAX_EXECS 64

struct exec_slot {
        bool used;
        int conn; /* -1: the client went away */
        struct launch l;
        struct cgroup *cg;
        uint64_t start_ms, deadline_ms, timeout_ms;
        bool timed_out;
        bool sync_eof;
        bool have_error;
        char error[512];
        char *argv0, *cwd;          /* for the error message */
        struct vwatch_target watch; /* what the layers refused, for its result */
        struct violations violations;
        struct install_net *inet; /* an install's own network, or NULL */
        struct netns_stats net;   /* what the session's network did meanwhile */
};

struct supervisor {
        const struct policy *pol;
        char *dir;
        int listen_fd;
        int tie_fd;
        int signal_fd; /* SIGTERM, SIGINT: destroy the session */
        int workspace_fd;
        struct cgroup *cg;      /* the session's: the policy's limits for everything */
        struct cgroup *init_cg; /* init's, below it */
        struct cgroup *spare;   /* the next exec's, made while idle */
        struct launch init;
        struct plan tmpl;       /* what every exec shares: joins, identity, layers */
        struct vwatch watch;    /* each exec is a target of it */
        struct session_net net; /* init's network, which every exec joins */
        int own_pidns;          /* ours, for the moments a thread is made (install_net_start) */
        uint64_t created_ms, created_unix, last_activity_ms;
        struct exec_slot execs[MAX_EXECS];
        unsigned n_running;
        const struct sess_backend *backend;
        struct gvisor_session *gvisor; /* backend: gvisor */
};

/*
 * What differs between the backends (STYLE.md §9): how the sandbox starts
 * (filling cg, init, workspace_fd and tmpl), how an exec starts, is
 * signalled and killed, and what is left to clean once it and the sandbox
 * are gone. native: psrun's init and execs that join its namespaces, each
 * in a cgroup of its own. gvisor: runtime/gvisor-session.c.
 */
struct sess_backend {
        const char *name;
        bool exec_cgroups; /* each exec in a cgroup of its own (the spare) */
        bool own_layers;   /* psrun's child applies seccomp, Landlock, AppArmor */
        int (*start)(struct supervisor *s, const char *cgroup_parent, psrun_error *err);
        int (*exec)(struct supervisor *s, struct exec_slot *e, const struct plan *p,
                    struct install_net *inet, int fds[3], struct cgroup **cg, psrun_error *err);
        void (*kill_exec)(struct supervisor *s, struct exec_slot *e);
        void (*signal_exec)(struct supervisor *s, struct exec_slot *e, int sig);
        /* The exec's process was reaped: fill in what the backend knows
         * (its status, its stats when it has no cgroup of its own). */
        void (*exec_done)(struct supervisor *s, struct exec_slot *e, siginfo_t *si,
                          struct cgroup_stats *st);
        void (*ending)(struct supervisor *s); /* shut_down begins */
        void (*stop)(struct supervisor *s);
};

static uint64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

static int send_reply(int fd, const struct sess_reply *rep, int pass_fd)
{
        struct iovec iov = {.iov_base = (void *) rep, .iov_len = sizeof(*rep)};
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u;
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
        if (pass_fd >= 0) {
                msg.msg_control = u.buf;
                msg.msg_controllen = sizeof(u.buf);
                struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(c), &pass_fd, sizeof(int));
        }
        return sendmsg(fd, &msg, MSG_NOSIGNAL) < 0 ? -errno : 0;
}

static void reply_error(int fd, const psrun_error *err)
{
        struct sess_reply rep = {.kind = SESS_REPLY_ERROR, .err = *err};
        (void) send_reply(fd, &rep, -1);
}

static int write_info(struct supervisor *s, psrun_error *err);

/* ---- execs ---- */

static void kill_exec_native(struct supervisor *s, struct exec_slot *e)
{
        (void) syscall(SYS_pidfd_send_signal, e->l.pidfd, SIGKILL, NULL, 0);
        if (e->cg)
                (void) cgroup_kill(e->cg, NULL);
}

static void signal_exec_native(struct supervisor *s, struct exec_slot *e, int sig)
{
        (void) syscall(SYS_pidfd_send_signal, e->l.pidfd, sig, NULL, 0);
}

static void drain_exec_messages(struct supervisor *s, struct exec_slot *e)
{
        for (;;) {
                struct child_msg m;
                int fd = -1;
                pid_t sender = 0;
                int n = launch_recv_msg(e->l.sync_fd, &m, &fd, &sender);
                if (n == 0)
                        e->sync_eof = true;
                if (n <= 0)
                        return;
                if (m.kind == CHILD_MSG_EXEC) {
                        vwatch_target_start(&s->watch, &e->watch, sender, fd, m.err);
                        continue;
                }
                if (m.kind == CHILD_MSG_ERROR && !e->have_error) {
                        /* The exec's plan is gone; what the message needs of
                         * it is the template's, with this exec's command. */
                        struct plan p = s->tmpl;
                        char *argv[] = {e->argv0 ? e->argv0 : "?", NULL};
                        p.argv = argv;
                        if (e->cwd)
                                p.workdir = e->cwd;
                        e->have_error = true;
                        launch_describe_error(&p, &m, e->error, sizeof(e->error));
                }
        }
}

static bool workspace_full(int ws_fd)
{
        struct statfs sf;
        return ws_fd >= 0 && fstatfs(ws_fd, &sf) == 0 && sf.f_bavail == 0;
}

static void fill_exec_result(struct exec_slot *e, const siginfo_t *si,
                             const struct cgroup_stats *st, bool disk_full, struct run_result *res)
{
        memset(res, 0, sizeof(*res));
        res->wall_ms = now_ms() - e->start_ms;
        res->cpu_ms = st->cpu_usec / 1000;
        res->peak_memory_bytes = st->memory_peak_bytes;
        if (si->si_code == CLD_EXITED) {
                res->exit_code = si->si_status;
                res->reason = RUN_REASON_EXITED;
        } else {
                res->signal = si->si_status;
                res->exit_code = 128 + si->si_status;
                res->reason = RUN_REASON_SIGNALED;
        }
        if (e->have_error) {
                res->reason = RUN_REASON_SETUP_ERROR;
                res->signal = 0;
                if (si->si_code != CLD_EXITED)
                        res->exit_code = CHILD_EXIT_SETUP;
                snprintf(res->error, sizeof(res->error), "%s", e->error);
                return;
        }
        if (res->exit_code == 0 && !e->timed_out)
                return;
        /* Most decisive first, as for psrun run. */
        if (st->oom_kills > 0)
                res->reason = RUN_REASON_OOM;
        else if (e->timed_out)
                res->reason = RUN_REASON_TIMEOUT;
        else if (st->pids_max_hits > 0)
                res->reason = RUN_REASON_PIDS;
        else if (disk_full)
                res->reason = RUN_REASON_DISK_FULL;
}

/* Every exec's watch target, for the audit records (NULL: a free slot). */
static void watch_targets(struct supervisor *s, struct vwatch_target **t)
{
        for (size_t i = 0; i < MAX_EXECS; i++)
                t[i] = s->execs[i].used ? &s->execs[i].watch : NULL;
}

static void report_violations(struct supervisor *s, struct exec_slot *e,
                              const struct cgroup_stats *st, bool disk_full, struct run_result *res)
{
        struct vwatch_target *targets[MAX_EXECS];
        watch_targets(s, targets);
        vwatch_target_finish(&s->watch, &e->watch, targets, MAX_EXECS);
        const struct violation_limits limits = {
                .stats = st,
                .memory_limit = s->pol->memory_limit,
                .pids_limit = s->pol->pids_limit,
                .disk_limit = s->pol->disk_limit,
                .timeout_ms = e->timeout_ms,
                .timed_out = e->timed_out,
                .disk_full = disk_full,
        };
        violations_add_limits(&e->violations, &limits);
        violations_add_network(&e->violations, &res->network);
        res->violations = e->violations;
}

/* The exec's process has ended (or is about to, killed): reap it, kill
 * what it left in its cgroup, report, clean up. */
static void finish_exec(struct supervisor *s, struct exec_slot *e)
{
        siginfo_t si = {0};
        while (waitid((idtype_t) P_PIDFD, (id_t) e->l.pidfd, &si, WEXITED) < 0 && errno == EINTR)
                ;
        drain_exec_messages(s, e);
        /* Background processes do not outlive their command. */
        struct cgroup_stats st = {0};
        if (e->cg) {
                (void) cgroup_kill(e->cg, NULL);
                (void) cgroup_read_stats(e->cg, &st, NULL);
        }
        if (s->backend->exec_done)
                s->backend->exec_done(s, e, &si, &st);
        /* Static: with the network's counts it is large, and we are not
         * reentered. */
        static struct sess_reply rep;
        rep = (struct sess_reply){.kind = SESS_REPLY_RESULT, .pid = e->l.pid};
        bool disk_full = workspace_full(s->workspace_fd);
        fill_exec_result(e, &si, &st, disk_full, &rep.result);
        snprintf(rep.result.backend, sizeof(rep.result.backend), "%s", s->backend->name);
        /* What the exec's network refused: an install's own (torn down now
         * that its processes are gone), or the session's while it ran. */
        dns_proxy_unwatch(s->net.proxy, &e->net);
        if (e->inet) {
                install_net_free(TAKE_PTR(e->inet), &rep.result.network);
                (void) write_info(s, NULL);
        } else {
                rep.result.network = e->net;
        }
        report_violations(s, e, &st, disk_full, &rep.result);
        if (e->conn >= 0)
                (void) send_reply(e->conn, &rep, -1);
        e->conn = safe_close(e->conn);
        launch_close(&e->l);
        cgroup_destroy(e->cg);
        e->cg = NULL;
        free(e->argv0);
        free(e->cwd);
        e->argv0 = e->cwd = NULL;
        e->used = false;
        s->n_running--;
        s->last_activity_ms = now_ms();
}

/* The request's strings: cwd, argv[argc], env[envc], each NUL-terminated,
 * nothing after. */
static int split_payload(char *buf, size_t len, uint32_t argc, uint32_t envc, char **cwd,
                         char ***argv, char ***env, psrun_error *err)
{
        if (argc == 0 || argc > 65536 || envc > 65536)
                return psrun_error_set(err, EINVAL, "exec: argv: no command given");
        if (len == 0 || buf[len - 1] != '\0')
                return psrun_error_set(err, EPROTO, "exec: malformed request");
        char **a = calloc(argc + 1, sizeof(char *));
        char **v = calloc(envc + 1, sizeof(char *));
        if (!a || !v) {
                free(a);
                free(v);
                return psrun_error_errno(err, ENOMEM, "exec");
        }
        size_t want = 1 + argc + envc, got = 0;
        char *p = buf, *end = buf + len;
        while (p < end && got < want) {
                if (got == 0)
                        *cwd = p;
                else if (got <= argc)
                        a[got - 1] = p;
                else
                        v[got - 1 - argc] = p;
                got++;
                p += strlen(p) + 1;
        }
        if (got != want || p != end || !a[0][0]) {
                free(a);
                free(v);
                return psrun_error_set(err, EPROTO, "exec: malformed request");
        }
        *argv = a;
        *env = v;
        return 0;
}

/* The template's environment with the request's NAME=value additions; the
 * strings stay where they are. */
static char **merge_env(char *const *base, char *const *add)
{
        size_t nb = 0, na = 0;
        while (base[nb])
                nb++;
        while (add[na])
                na++;
        char **out = calloc(nb + na + 1, sizeof(char *));
        if (!out)
                return NULL;
        size_t n = 0;
        for (size_t i = 0; i < nb; i++)
                out[n++] = base[i];
        for (size_t i = 0; i < na; i++) {
                size_t klen = strcspn(add[i], "=") + 1;
                size_t k = 0;
                while (k < n && strncmp(out[k], add[i], klen) != 0)
                        k++;
                out[k] = add[i];
                if (k == n)
                        n++;
        }
        out[n] = NULL;
        return out;
}

static struct exec_slot *free_slot(struct supervisor *s)
{
        for (size_t i = 0; i < MAX_EXECS; i++)
                if (!s->execs[i].used)
                        return &s->execs[i];
        return NULL;
}

/* What one exec runs. */
struct exec_spec {
        char *const *argv;
        char *const *env; /* NAME=value additions */
        const char *cwd;  /* "": the policy's workdir */
        uint64_t timeout_ms;
        struct install_net *inet; /* an install's network: the slot takes it */
};

/*
 * When the execs together fill the session's memory_limit, the OOM killer
 * picks by size in the session's cgroup, and init, a copy of the process
 * that created the session (an agent's Python, say), looks big: killed, it
 * would end the session. So init is exempt where we may lower its score
 * (CAP_SYS_RESOURCE; hosts may lack it), and every exec's processes are
 * raised to the top, which needs no privilege and also makes untrusted
 * commands the victims of a host-wide shortage before anything of the
 * host. Inherited by everything the exec starts.
 */
static int write_oom_score_adj(pid_t pid, const char *value)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/oom_score_adj", (int) pid);
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0 || write(fd, value, strlen(value)) != (ssize_t) strlen(value))
                return -errno;
        return 0;
}

static int exec_oom_first(pid_t pid, psrun_error *err)
{
        int r = write_oom_score_adj(pid, "1000");
        return r < 0 ? psrun_error_errno(err, r, "oom_score_adj") : 0;
}

/* An exec joins init's namespaces, in a cgroup of its own; an install's,
 * all but the network and mount ones (inet). */
static int exec_native(struct supervisor *s, struct exec_slot *e, const struct plan *tmpl,
                       struct install_net *inet, int fds[3], struct cgroup **cg_out,
                       psrun_error *err)
{
        struct plan p = *tmpl; /* shallow: only read, by us and the child */
        if (inet) {
                /* A network of its own, made by clone3 in psrun's user
                 * namespace (the sandbox's may make none), and a private
                 * copy of the mounts whose resolv.conf names its gateway
                 * (runtime/session-net.h). */
                p.clone_flags |= CLONE_NEWNET;
                p.join_flags &= ~(uint64_t) (CLONE_NEWNET | CLONE_NEWNS);
                p.private_resolv_fd = inet->resolv_tree;
        }
        /* Each exec gets its own cgroup with the policy's limits, below the
         * session's: a runaway exec is limited, accounted and killed as a
         * tree without touching init or the other execs. */
        struct cgroup_limits limits = {
                .memory_bytes = s->pol->memory_limit,
                .pids_max = s->pol->pids_limit,
                .cpus = s->pol->cpu_limit,
        };
        struct cgroup *cg = TAKE_PTR(s->spare);
        if (!cg && cgroup_create_child(s->cg, &limits, &cg, err) < 0)
                return psrun_error_prefix(err, "exec");

        /* The child starts with our 0-2: make them the client's for the
         * clone, then /dev/null again. */
        for (int i = 0; i < 3; i++)
                (void) dup2(fds[i], i);
        struct launch l = LAUNCH_INIT;
        int r = launch_clone(&p, cg, &l, err);
        int null_fd = open("/dev/null", O_RDWR | O_CLOEXEC);
        for (int i = 0; i < 3; i++)
                (void) dup2(null_fd, i);
        safe_close(null_fd);
        if (r >= 0)
                r = launch_confine(&l, &p, cg, err);
        if (r >= 0)
                r = exec_oom_first(l.pid, err);
        /* The install's network while its child waits, as psrun run's. Its
         * DNS proxy is a thread, which cannot be made while our children's
         * pid namespace is not our own: out of it for that moment. */
        if (r >= 0 && inet) {
                if (setns(s->own_pidns, CLONE_NEWPID) < 0)
                        r = psrun_error_errno(err, errno, "exec: leave the pid namespace");
                else {
                        r = install_net_start(inet, l.pid, err);
                        if (setns(s->init.pidfd, CLONE_NEWPID) < 0)
                                abort(); /* execs would be born outside the sandbox */
                }
        }
        if (r >= 0)
                r = launch_release(&l, err);
        if (r < 0) {
                if (l.pidfd >= 0) {
                        (void) syscall(SYS_pidfd_send_signal, l.pidfd, SIGKILL, NULL, 0);
                        siginfo_t si;
                        (void) waitid((idtype_t) P_PIDFD, (id_t) l.pidfd, &si, WEXITED);
                }
                launch_close(&l);
                (void) cgroup_kill(cg, NULL);
                cgroup_destroy(cg);
                return psrun_error_prefix(err, "exec");
        }
        e->l = l;
        *cg_out = cg;
        return 0;
}

static int launch_exec(struct supervisor *s, int conn, struct exec_spec *x, int fds[3],
                       psrun_error *err)
{
        struct exec_slot *e = free_slot(s);
        if (!e)
                return psrun_error_set(err, EAGAIN, "exec: too many concurrent execs (at most %d)",
                                       MAX_EXECS);
        _cleanup_free_ char **envp = merge_env(s->tmpl.envp, x->env);
        if (!envp)
                return psrun_error_errno(err, ENOMEM, "exec");

        struct plan p = s->tmpl; /* shallow: only read, by us and the child */
        p.argv = (char **) x->argv;
        p.envp = envp;
        p.path_env = NULL;
        for (size_t i = 0; envp[i]; i++)
                if (strncmp(envp[i], "PATH=", 5) == 0)
                        p.path_env = envp[i] + 5;
        if (x->cwd[0])
                p.workdir = (char *) x->cwd;

        struct cgroup *cg = NULL;
        int r = s->backend->exec(s, e, &p, x->inet, fds, &cg, err);
        if (r < 0)
                return r;
        struct launch l = e->l;
        uint64_t timeout = x->timeout_ms ? x->timeout_ms : s->pol->timeout_ms;
        *e = (struct exec_slot){
                .used = true,
                .conn = conn,
                .l = l,
                .cg = cg,
                .start_ms = now_ms(),
                .timeout_ms = timeout,
                .argv0 = strdup(x->argv[0]),
                .cwd = x->cwd[0] ? strdup(x->cwd) : NULL,
                .inet = TAKE_PTR(x->inet),
        };
        vwatch_target_init(&s->watch, &e->watch, &e->violations, cg);
        /* The session's network counts for this exec from now (not for an
         * install: it has its own). */
        if (!e->inet)
                (void) dns_proxy_watch(s->net.proxy, &e->net);
        e->deadline_ms = timeout ? e->start_ms + timeout : 0;
        s->n_running++;
        struct sess_reply rep = {
                .kind = SESS_REPLY_STARTED,
                .pid = l.pid,
                .output_limit = s->pol->output_limit,
        };
        (void) send_reply(conn, &rep, -1);
        return 0;
}

static int start_exec(struct supervisor *s, int conn, const struct sess_req *req, char *payload,
                      size_t len, int fds[3], psrun_error *err)
{
        char *cwd = NULL;
        _cleanup_free_ char **argv = NULL;
        _cleanup_free_ char **env = NULL;
        int r = split_payload(payload, len, req->argc, req->envc, &cwd, &argv, &env, err);
        if (r < 0)
                return r;
        if (cwd[0] && cwd[0] != '/')
                return psrun_error_set(err, EINVAL, "exec: cwd: `%s` is not an absolute path", cwd);
        for (size_t i = 0; env[i]; i++)
                if (env[i][0] == '=' || !strchr(env[i], '='))
                        return psrun_error_set(err, EINVAL, "exec: env: `%s` is not NAME=value",
                                               env[i]);
        struct exec_spec x = {.argv = argv, .env = env, .cwd = cwd, .timeout_ms = req->timeout_ms};
        return launch_exec(s, conn, &x, fds, err);
}

/*
 * An install: the installer as an exec, with the install network. The
 * checks here hold whatever the client is: a gated action without the
 * approver's yes, a spec that is not one package, or an install that no
 * network could serve are refused, and nothing runs.
 */
static int start_install(struct supervisor *s, int conn, const struct sess_req *req, char *payload,
                         size_t len, int fds[3], psrun_error *err)
{
        if (len == 0 || payload[len - 1] != '\0' || strlen(payload) + 1 != len)
                return psrun_error_set(err, EPROTO, "install: malformed request");
        const char *tool_name = install_tool_to_string((enum install_tool) req->tool);
        if (!tool_name)
                return psrun_error_set(err, EINVAL, "tool: unknown installer %u", req->tool);
        int r = install_check_spec((enum install_tool) req->tool, payload, err);
        if (r < 0)
                return r;
        if ((s->pol->approve & POLICY_ACTION_INSTALL) && !(req->flags & SESS_REQ_APPROVED))
                return psrun_error_set(err, EPERM,
                                       "install: `%s` (%s) needs approval (policy `approve: "
                                       "[install]`) and none was given",
                                       payload, tool_name);
        r = install_check_network(s->pol->network, s->pol->install_network, payload, err);
        if (r < 0)
                return r;
        _cleanup_strv_free_ char **argv = NULL;
        r = install_argv(s->pol, (enum install_tool) req->tool, payload, &argv, err);
        if (r < 0)
                return r;
        struct exec_spec x = {
                .argv = argv,
                .env = (char *const[]){NULL},
                .cwd = "/workspace",
                .timeout_ms = req->timeout_ms,
        };
        r = install_net_prepare(s->pol, s->dir, &x.inet, err);
        if (r < 0)
                return r;
        r = launch_exec(s, conn, &x, fds, err);
        install_net_free(x.inet, NULL); /* still ours on failure */
        if (r >= 0)
                (void) write_info(s, NULL);
        return r;
}

/* ---- the session ---- */

static void remove_state_dir(const char *dir)
{
        /* Only psrun writes here (0700, root's): info, control, lock, and
         * the install networks' resolv-<id> files. */
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return;
        session_remove_files(dfd);
        (void) rmdir(dir);
}

/* Kill everything, report to whoever waits, remove every trace, exit. */
static _Noreturn void shut_down(struct supervisor *s, int destroy_conn)
{
        if (s->backend->ending)
                s->backend->ending(s);
        /* Execs first: they are our children in init's pid namespace, and
         * init, dying, waits until every process of its namespace is
         * reaped (zap_pid_ns_processes) — so reap them before waiting for
         * init. */
        if (s->init.pidfd >= 0)
                (void) syscall(SYS_pidfd_send_signal, s->init.pidfd, SIGKILL, NULL, 0);
        for (size_t i = 0; i < MAX_EXECS; i++)
                if (s->execs[i].used)
                        kill_exec_native(s, &s->execs[i]);
        for (size_t i = 0; i < MAX_EXECS; i++)
                if (s->execs[i].used)
                        finish_exec(s, &s->execs[i]);
        if (s->init.pidfd >= 0) {
                siginfo_t si;
                while (waitid((idtype_t) P_PIDFD, (id_t) s->init.pidfd, &si, WEXITED) < 0 &&
                       errno == EINTR)
                        ;
        }
        launch_close(&s->init);
        /* The sandbox is gone: its network may go too. */
        session_net_stop(&s->net, NULL);
        netns_release(&s->tmpl.net);
        cgroup_destroy(s->spare);
        cgroup_destroy(s->init_cg);
        cgroup_destroy(s->cg);
        if (s->backend->stop)
                s->backend->stop(s);
        s->listen_fd = safe_close(s->listen_fd);
        remove_state_dir(s->dir);
        if (destroy_conn >= 0) {
                struct sess_reply rep = {.kind = SESS_REPLY_OK};
                (void) send_reply(destroy_conn, &rep, -1);
        }
        _exit(0);
}

static void handle_request(struct supervisor *s, int conn)
{
        /* Requests come from root only (the socket's directory is root's),
         * and in one message right after connecting. */
        struct timeval tv = {.tv_sec = 2};
        (void) setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        struct ucred cred;
        socklen_t cl = sizeof(cred);
        if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 || cred.uid != 0) {
                close(conn);
                return;
        }
        _cleanup_free_ char *buf = malloc(sizeof(struct sess_req) + SESSION_MSG_MAX);
        if (!buf) {
                close(conn);
                return;
        }
        struct iovec iov = {.iov_base = buf, .iov_len = sizeof(struct sess_req) + SESSION_MSG_MAX};
        union {
                char buf[CMSG_SPACE(3 * sizeof(int))];
                struct cmsghdr align;
        } u;
        struct msghdr msg = {.msg_iov = &iov,
                             .msg_iovlen = 1,
                             .msg_control = u.buf,
                             .msg_controllen = sizeof(u.buf)};
        ssize_t n = recvmsg(conn, &msg, MSG_CMSG_CLOEXEC);
        int fds[3] = {-1, -1, -1};
        int n_fds = 0;
        for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); n >= 0 && c; c = CMSG_NXTHDR(&msg, c))
                if (c->cmsg_level == SOL_SOCKET && c->cmsg_type == SCM_RIGHTS) {
                        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
                        for (size_t i = 0; i < k; i++) {
                                int fd;
                                memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
                                if (n_fds < 3)
                                        fds[n_fds++] = fd;
                                else
                                        close(fd);
                        }
                }
        s->last_activity_ms = now_ms();
        psrun_error err = {0};
        struct sess_req req;
        if (n < (ssize_t) sizeof(req) || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC))) {
                psrun_error_set(&err, EPROTO,
                                "session: malformed or too long request (at most "
                                "%d KiB of argv and env)",
                                SESSION_MSG_MAX / 1024);
                reply_error(conn, &err);
                close(conn);
                goto out;
        }
        memcpy(&req, buf, sizeof(req));
        switch (req.op) {
        case SESS_OP_EXEC:
                if (n_fds != 3) {
                        psrun_error_set(&err, EPROTO, "exec: stdin, stdout and stderr expected");
                } else if (start_exec(s, conn, &req, buf + sizeof(req), (size_t) n - sizeof(req),
                                      fds, &err) >= 0) {
                        conn = -1; /* the exec's now */
                        break;
                }
                reply_error(conn, &err);
                break;
        case SESS_OP_INSTALL:
                if (n_fds != 3) {
                        psrun_error_set(&err, EPROTO, "install: stdin, stdout and stderr expected");
                } else if (start_install(s, conn, &req, buf + sizeof(req), (size_t) n - sizeof(req),
                                         fds, &err) >= 0) {
                        conn = -1;
                        break;
                }
                reply_error(conn, &err);
                break;
        case SESS_OP_WORKSPACE:
        case SESS_OP_INFO: {
                struct sess_reply rep = {
                        .kind = SESS_REPLY_OK,
                        .pid = getpid(),
                        .uid = PSRUN_ID_BASE + s->pol->uid,
                        .gid = PSRUN_ID_BASE + s->pol->gid,
                        .disk_limit = s->pol->disk_limit,
                        .output_limit = s->pol->output_limit,
                        .created_unix = s->created_unix,
                        .running_execs = s->n_running,
                        .approve = s->pol->approve,
                        .network = (uint32_t) s->pol->network,
                        .install_network = (uint32_t) s->pol->install_network,
                };
                (void) send_reply(conn, &rep, req.op == SESS_OP_WORKSPACE ? s->workspace_fd : -1);
                break;
        }
        case SESS_OP_DESTROY:
                for (int i = 0; i < n_fds; i++)
                        close(fds[i]);
                shut_down(s, conn);
        default:
                psrun_error_set(&err, EPROTO, "session: unknown request %u", req.op);
                reply_error(conn, &err);
                break;
        }
        safe_close(conn);
out:
        for (int i = 0; i < n_fds; i++)
                close(fds[i]);
}

static void handle_exec_conn(struct supervisor *s, struct exec_slot *e)
{
        struct sess_req req;
        ssize_t n = recv(e->conn, &req, sizeof(req), MSG_DONTWAIT);
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return;
        if (n == (ssize_t) sizeof(req) && req.op == SESS_OP_SIGNAL) {
                if (req.sig > 0 && req.sig < 65)
                        s->backend->signal_exec(s, e, req.sig);
                return;
        }
        /* The client went away (or spoke nonsense): nobody waits for this
         * exec's result, so it must not go on running unobserved. */
        e->conn = safe_close(e->conn);
        s->backend->kill_exec(s, e);
}

/* The next exec's cgroup, made off its critical path. */
static void make_spare(struct supervisor *s)
{
        if (s->spare || !s->backend->exec_cgroups)
                return;
        struct cgroup_limits limits = {
                .memory_bytes = s->pol->memory_limit,
                .pids_max = s->pol->pids_limit,
                .cpus = s->pol->cpu_limit,
        };
        if (cgroup_create_child(s->cg, &limits, &s->spare, NULL) < 0)
                s->spare = NULL;
}

static int poll_timeout(struct supervisor *s, uint64_t now)
{
        uint64_t next = UINT64_MAX;
        for (size_t i = 0; i < MAX_EXECS; i++) {
                struct exec_slot *e = &s->execs[i];
                if (e->used && e->deadline_ms && !e->timed_out && e->deadline_ms < next)
                        next = e->deadline_ms;
        }
        if (s->pol->idle_timeout_ms && s->n_running == 0 &&
            s->last_activity_ms + s->pol->idle_timeout_ms < next)
                next = s->last_activity_ms + s->pol->idle_timeout_ms;
        if (s->pol->lifetime_ms && s->created_ms + s->pol->lifetime_ms < next)
                next = s->created_ms + s->pol->lifetime_ms;
        if (next == UINT64_MAX)
                return -1;
        if (next <= now)
                return 0;
        return next - now > 60000 ? 60000 : (int) (next - now);
}

static void check_deadlines(struct supervisor *s)
{
        uint64_t now = now_ms();
        if (s->pol->lifetime_ms && now >= s->created_ms + s->pol->lifetime_ms)
                shut_down(s, -1);
        if (s->pol->idle_timeout_ms && s->n_running == 0 &&
            now >= s->last_activity_ms + s->pol->idle_timeout_ms)
                shut_down(s, -1);
        for (size_t i = 0; i < MAX_EXECS; i++) {
                struct exec_slot *e = &s->execs[i];
                if (e->used && e->deadline_ms && !e->timed_out && now >= e->deadline_ms) {
                        e->timed_out = true;
                        s->backend->kill_exec(s, e);
                }
        }
}

static _Noreturn void serve(struct supervisor *s)
{
        /* pollfd layout: listen, init, tie, signals, audit, then 4 per exec
         * slot (its pidfd, sync socket, connection, seccomp listener). */
        enum { BASE = 5, PER_EXEC = 4 };
        struct pollfd pfd[BASE + PER_EXEC * MAX_EXECS];
        for (;;) {
                make_spare(s);
                uint64_t now = now_ms();
                pfd[0] = (struct pollfd){s->listen_fd, POLLIN, 0};
                pfd[1] = (struct pollfd){s->init.pidfd, POLLIN, 0};
                pfd[2] = (struct pollfd){s->tie_fd, POLLIN, 0};
                pfd[3] = (struct pollfd){s->signal_fd, POLLIN, 0};
                pfd[4] = (struct pollfd){s->watch.audit_fd, POLLIN, 0};
                for (size_t i = 0; i < MAX_EXECS; i++) {
                        struct exec_slot *e = &s->execs[i];
                        struct pollfd *p = &pfd[BASE + PER_EXEC * i];
                        p[0] = (struct pollfd){e->used ? e->l.pidfd : -1, POLLIN, 0};
                        p[1] = (struct pollfd){e->used && !e->sync_eof ? e->l.sync_fd : -1, POLLIN,
                                               0};
                        p[2] = (struct pollfd){e->used ? e->conn : -1, POLLIN, 0};
                        p[3] = (struct pollfd){e->used ? vwatch_target_fd(&s->watch, &e->watch, now)
                                                       : -1,
                                               POLLIN, 0};
                }
                struct vwatch_target *targets[MAX_EXECS];
                watch_targets(s, targets);
                int timeout = poll_timeout(s, now);
                int resume = vwatch_poll_timeout(&s->watch, now);
                if (resume >= 0 && (timeout < 0 || resume < timeout))
                        timeout = resume;
                int n = poll(pfd, ARRAY_SIZE(pfd), timeout);
                if (n < 0 && errno != EINTR)
                        shut_down(s, -1);
                check_deadlines(s);
                if (n <= 0)
                        continue;
                /* init died, the tied caller exited, or we were asked to end
                 * (SIGTERM: `kill` of the supervisor destroys the session as
                 * cleanly as destroy does). */
                if (pfd[1].revents || pfd[2].revents || pfd[3].revents)
                        shut_down(s, -1);
                /* Sync sockets first: an exec's message (its pid) comes before
                 * any record of what it did. */
                for (size_t i = 0; i < MAX_EXECS; i++)
                        if (s->execs[i].used && pfd[BASE + PER_EXEC * i + 1].revents)
                                drain_exec_messages(s, &s->execs[i]);
                if (pfd[4].revents)
                        vwatch_on_audit(&s->watch, targets, MAX_EXECS);
                for (size_t i = 0; i < MAX_EXECS; i++) {
                        struct exec_slot *e = &s->execs[i];
                        struct pollfd *p = &pfd[BASE + PER_EXEC * i];
                        if (!e->used)
                                continue;
                        if (p[3].revents)
                                vwatch_on_listener(&s->watch, &e->watch, p[3].revents, now_ms());
                        if (p[2].revents && e->conn >= 0)
                                handle_exec_conn(s, e);
                        if (p[0].revents)
                                finish_exec(s, e);
                }
                if (pfd[0].revents) {
                        int conn = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
                        if (conn >= 0)
                                handle_request(s, conn);
                }
        }
}

/* ---- start ---- */

static int write_info(struct supervisor *s, psrun_error *err)
{
        _cleanup_strv_free_ char **paths = NULL;
        int r = cgroup_paths(s->cg, &paths, err);
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
        for (char **p = paths; *p; p++)
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

static int open_workspace(struct supervisor *s, psrun_error *err)
{
        /* Opened once, before any command of the sandbox has run: the path
         * is init's root as init's setup left it. */
        char proc_root[64];
        snprintf(proc_root, sizeof(proc_root), "/proc/%d/root", (int) s->init.pid);
        _cleanup_close_ int root = open(proc_root, O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return psrun_error_errno(err, errno, "session: open the sandbox's root");
        struct open_how how = {
                .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_SYMLINKS,
        };
        int fd = (int) syscall(SYS_openat2, root, "workspace", &how, sizeof(how));
        if (fd < 0)
                return psrun_error_errno(err, errno, "session: open /workspace");
        struct statfs sf;
        if (fstatfs(fd, &sf) < 0 || sf.f_type != TMPFS_MAGIC) {
                close(fd);
                return psrun_error_set(err, EXDEV,
                                       "session: /workspace is not the sandbox's tmpfs");
        }
        s->workspace_fd = fd;
        return 0;
}

static bool policy_sets_env(const struct policy *pol, const char *name)
{
        for (size_t i = 0; i < pol->n_env; i++)
                if (strcmp(pol->env[i].name, name) == 0)
                        return true;
        return false;
}

/* Every exec finds what installs put in the workspace with no
 * configuration: PYTHONPATH, NODE_PATH, and the installers' bin
 * directories at the end of PATH, unless the policy's env sets them. */
static int add_install_env(const struct policy *pol, struct plan *t, psrun_error *err)
{
        size_t n = 0, extra = 0;
        while (t->envp[n])
                n++;
        while (install_env[extra])
                extra++;
        _cleanup_strv_free_ char **envp = calloc(n + extra + 1, sizeof(char *));
        if (!envp)
                return psrun_error_errno(err, ENOMEM, "session: env");
        size_t k = 0;
        for (size_t i = 0; i < n; i++) {
                bool path = strncmp(t->envp[i], "PATH=", 5) == 0 && !policy_sets_env(pol, "PATH");
                if (path) {
                        _cleanup_free_ char *v = install_path(t->envp[i] + 5);
                        if (!v || asprintf(&envp[k], "PATH=%s", v) < 0) {
                                envp[k] = NULL;
                                return psrun_error_errno(err, ENOMEM, "session: env");
                        }
                } else if (!(envp[k] = strdup(t->envp[i]))) {
                        return psrun_error_errno(err, ENOMEM, "session: env");
                }
                k++;
        }
        for (size_t i = 0; install_env[i]; i++) {
                _cleanup_free_ char *name = strndup(install_env[i], strcspn(install_env[i], "="));
                if (!name)
                        return psrun_error_errno(err, ENOMEM, "session: env");
                if (policy_sets_env(pol, name))
                        continue;
                if (!(envp[k++] = strdup(install_env[i])))
                        return psrun_error_errno(err, ENOMEM, "session: env");
        }
        strv_free(t->envp);
        t->envp = TAKE_PTR(envp);
        t->path_env = NULL;
        for (size_t i = 0; t->envp[i]; i++)
                if (strncmp(t->envp[i], "PATH=", 5) == 0)
                        t->path_env = t->envp[i] + 5;
        return 0;
}

/* The exec template: the init's plan minus what only init does. Execs join
 * init's namespaces (setns with its pidfd) instead of making new ones. */
static int make_template(struct supervisor *s, psrun_error *err)
{
        struct plan *t = &s->tmpl;
        int r = add_install_env(s->pol, t, err);
        if (r < 0)
                return r;
        uint64_t init_flags = t->clone_flags;
        t->clone_flags = 0;
        t->uid_map[0] = t->gid_map[0] = '\0';
        t->root = PLAN_ROOT_JOINED;
        t->use_init = false;
        t->init_only = false;
        t->loopback_up = false;
        t->n_user_quotas = 0; /* set by init in the user namespace execs join */
        /* We are a fork of whatever created the session: refusing the file
         * we run would refuse a Python agent's sandbox its own python3. The
         * guard is CVE-2019-5736's, a container writing the runtime's binary
         * through /proc/self/exe; here every command runs as an unprivileged
         * host id in the sandbox's user namespace with /usr bound read-only,
         * and magic links stay refused on the way (RESOLVE_NO_MAGICLINKS). */
        t->allow_exec_self = true;
        free(t->hostname);
        t->hostname = NULL;
        rootfs_plan_free(&t->rootfs);
        memset(&t->rootfs, 0, sizeof(t->rootfs));
        /* Every namespace init was made with but the pid one, which is
         * entered for our children below. */
        t->join_flags = init_flags & ~(uint64_t) CLONE_NEWPID;
        t->join_pidfd = fcntl(s->init.pidfd, F_DUPFD_CLOEXEC, 3);
        if (t->join_pidfd < 0)
                return psrun_error_errno(err, errno, "session: pidfd");
        /* Our children from now on are born in the sandbox's pid namespace
         * (and no thread can be made meanwhile: launch_exec leaves it for
         * an install's DNS proxy). */
        s->own_pidns = open("/proc/self/ns/pid", O_RDONLY | O_CLOEXEC);
        if (s->own_pidns < 0)
                return psrun_error_errno(err, errno, "session: open our pid namespace");
        if (setns(s->init.pidfd, CLONE_NEWPID) < 0)
                return psrun_error_errno(err, errno, "session: enter the pid namespace");
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

static int start(struct supervisor *s, const char *cgroup_parent, psrun_error *err)
{
        _cleanup_free_ char *lock_path = NULL;
        if (asprintf(&lock_path, "%s/lock", s->dir) < 0)
                return psrun_error_errno(err, ENOMEM, "session");
        /* Held until we exit; never closed, never inherited past execve. */
        int lock = open(lock_path, O_CREAT | O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0600);
        if (lock < 0 || flock(lock, LOCK_EX | LOCK_NB) < 0)
                return psrun_error_errno(err, errno, "session: lock %s", lock_path);

        struct run_options ro = {.cgroup_parent = cgroup_parent};
        char *argv[] = {"psrun-session-init", NULL};
        int r = plan_from_policy(s->pol, argv, &ro, &s->tmpl, err);
        /* Every exec's listener and Landlock log flags, the audit socket
         * the session's; under gVisor the sentry answers the sandbox's
         * syscalls itself, and psrun's layers are not what refuses them. */
        if (r >= 0 && s->backend->own_layers)
                r = vwatch_prepare(&s->watch, s->pol, &s->tmpl, err);
        else if (r >= 0)
                vwatch_prepare_elsewhere(&s->watch, s->pol, GVISOR_VIOLATIONS_WHY);
        if (r >= 0)
                r = s->backend->start(s, cgroup_parent, err);
        if (r >= 0)
                r = listen_control(s, err);
        if (r >= 0)
                r = write_info(s, err);
        return r;
}

/* psrun's init, in the session's cgroup's own sub-cgroup; execs join its
 * namespaces (make_template). */
static int start_native(struct supervisor *s, const char *cgroup_parent, psrun_error *err)
{
        s->tmpl.init_only = true;
        struct cgroup_limits limits = {
                .memory_bytes = s->pol->memory_limit,
                .pids_max = s->pol->pids_limit + 1, /* + init */
                .cpus = s->pol->cpu_limit,
        };
        int r = cgroup_create(cgroup_parent, &limits, &s->cg, err);
        if (r >= 0)
                r = cgroup_create_child(s->cg, NULL, &s->init_cg, err);
        if (r < 0)
                return r;
        r = launch_clone(&s->tmpl, s->init_cg, &s->init, err);
        if (r >= 0)
                r = launch_confine(&s->init, &s->tmpl, s->init_cg, err);
        /* Best effort, see write_oom_score_adj: without CAP_SYS_RESOURCE
         * the execs' raised scores are what protects init. */
        if (r >= 0)
                (void) write_oom_score_adj(s->init.pid, "-1000");
        /* The session's network (veth, firewall, DNS proxy) while init
         * waits, exactly as psrun run builds it: every exec joins init's
         * namespace, so no command of the session runs without it. */
        if (r >= 0)
                r = session_net_start(&s->net, &s->tmpl.net, s->init.pid, err);
        if (r >= 0)
                r = launch_release(&s->init, err);
        struct child_msg m = {0};
        if (r >= 0) {
                r = launch_read_msg(&s->init, &m);
                if (r >= 0 && m.kind == CHILD_MSG_ERROR) {
                        char what[512];
                        launch_describe_error(&s->tmpl, &m, what, sizeof(what));
                        r = psrun_error_set(err, m.err ? m.err : EIO, "session: %s", what);
                } else if (r < 0 || m.kind != CHILD_MSG_READY) {
                        r = psrun_error_set(err, EIO,
                                            "session: the sandbox's init died while "
                                            "starting");
                }
        }
        if (r >= 0)
                r = open_workspace(s, err);
        if (r >= 0)
                r = make_template(s, err);
        return r;
}

/* ---- the gVisor backend's adapters (runtime/gvisor-session.c) ---- */

static int start_gvisor(struct supervisor *s, const char *cgroup_parent, psrun_error *err)
{
        return gvisor_session_start(s->pol, &s->tmpl, cgroup_parent, &s->cg, &s->init,
                                    &s->workspace_fd, &s->gvisor, err);
}

static int exec_gvisor(struct supervisor *s, struct exec_slot *e, const struct plan *p,
                       struct install_net *inet, int fds[3], struct cgroup **cg, psrun_error *err)
{
        /* runsc's sandbox has one network namespace, the session's: an
         * install cannot have one of its own there. */
        if (inet)
                return psrun_error_set(err, EOPNOTSUPP,
                                       "install_network: backend: gvisor runs installs on the "
                                       "session's own network only (install_network: none)");
        *cg = NULL; /* the sandbox is one process tree: the session's cgroup */
        return gvisor_session_exec(s->gvisor, (unsigned) (e - s->execs), p, fds, &e->l, err);
}

static void kill_exec_gvisor(struct supervisor *s, struct exec_slot *e)
{
        /* The command's processes first (inside the sandbox), then the
         * runsc exec that waits for them. */
        gvisor_session_kill_exec(s->gvisor, (unsigned) (e - s->execs), e->l.pidfd);
        (void) syscall(SYS_pidfd_send_signal, e->l.pidfd, SIGKILL, NULL, 0);
}

static void signal_exec_gvisor(struct supervisor *s, struct exec_slot *e, int sig)
{
        /* runsc exec hands signals on to the command; SIGKILL it cannot. */
        if (sig == SIGKILL)
                kill_exec_gvisor(s, e);
        else
                (void) syscall(SYS_pidfd_send_signal, e->l.pidfd, sig, NULL, 0);
}

static void exec_done_gvisor(struct supervisor *s, struct exec_slot *e, siginfo_t *si,
                             struct cgroup_stats *st)
{
        char msg[400];
        int code = gvisor_session_exec_done(s->gvisor, (unsigned) (e - s->execs), st, msg,
                                            sizeof(msg));
        /* The sandbox was OOM-killed, or starved of host tasks, with the
         * exec in it (which ends the session): a kill, not runsc's
         * complaint about the sandbox being gone. */
        if (st->oom_kills > 0 || st->pids_max_hits > 0) {
                if (si->si_code == CLD_EXITED && si->si_status == 128) {
                        si->si_code = CLD_KILLED;
                        si->si_status = SIGKILL;
                }
                return;
        }
        /* runsc exec flattens a killed command's status to 128+N; a kill
         * of psrun's own is reported as natively. */
        if (e->timed_out && si->si_code == CLD_EXITED && si->si_status == 128 + SIGKILL) {
                si->si_code = CLD_KILLED;
                si->si_status = SIGKILL;
        }
        if (code && si->si_code == CLD_EXITED && si->si_status == 128 && !e->have_error) {
                e->have_error = true;
                snprintf(e->error, sizeof(e->error), "backend: gvisor: runsc: %s", msg);
                si->si_status = code;
        }
}

static void ending_gvisor(struct supervisor *s)
{
        gvisor_session_ending(s->gvisor);
}

static void stop_gvisor(struct supervisor *s)
{
        gvisor_session_stop(s->gvisor);
        s->gvisor = NULL;
}

static const struct sess_backend sess_backends[_POLICY_BACKEND_MAX] = {
        [POLICY_BACKEND_NATIVE] = {.name = "native",
                                   .exec_cgroups = true,
                                   .own_layers = true,
                                   .start = start_native,
                                   .exec = exec_native,
                                   .kill_exec = kill_exec_native,
                                   .signal_exec = signal_exec_native},
        [POLICY_BACKEND_GVISOR] = {.name = "gvisor",
                                   .start = start_gvisor,
                                   .exec = exec_gvisor,
                                   .kill_exec = kill_exec_gvisor,
                                   .signal_exec = signal_exec_gvisor,
                                   .exec_done = exec_done_gvisor,
                                   .ending = ending_gvisor,
                                   .stop = stop_gvisor},
};

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

static _Noreturn void supervisor_main(const struct policy *pol, char *dir, int ready_fd, int tie_fd,
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
                .own_pidns = -1,
                .init = LAUNCH_INIT,
                .watch = {.audit_fd = -1},
                .backend = &sess_backends[(unsigned) pol->backend < _POLICY_BACKEND_MAX
                                                  ? pol->backend
                                                  : POLICY_BACKEND_NATIVE],
        };
        plan_init(&s.tmpl);
        sigset_t term;
        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        sigaddset(&term, SIGINT);
        if (sigprocmask(SIG_BLOCK, &term, NULL) == 0)
                s.signal_fd = signalfd(-1, &term, SFD_CLOEXEC | SFD_NONBLOCK);
        s.created_ms = s.last_activity_ms = now_ms();
        s.created_unix = (uint64_t) time(NULL);
        struct {
                int32_t r;
                psrun_error err;
        } ready = {0};
        ready.r = start(&s, cgroup_parent, &ready.err);
        if (ready.r < 0) {
                if (s.init.pidfd >= 0)
                        (void) syscall(SYS_pidfd_send_signal, s.init.pidfd, SIGKILL, NULL, 0);
                siginfo_t si;
                if (s.init.pidfd >= 0)
                        (void) waitid((idtype_t) P_PIDFD, (id_t) s.init.pidfd, &si, WEXITED);
                session_net_stop(&s.net, NULL);
                netns_release(&s.tmpl.net);
                cgroup_destroy(s.init_cg);
                cgroup_destroy(s.cg);
                if (s.backend->stop)
                        s.backend->stop(&s);
                remove_state_dir(dir);
                (void) send(ready_fd, &ready, sizeof(ready), MSG_NOSIGNAL);
                _exit(1);
        }
        (void) send(ready_fd, &ready, sizeof(ready), MSG_NOSIGNAL);
        close(ready_fd);
        serve(&s);
}

static int mkdir_p(const char *path, mode_t mode)
{
        _cleanup_free_ char *copy = strdup(path);
        if (!copy)
                return -ENOMEM;
        for (char *p = copy + 1; *p; p++)
                if (*p == '/') {
                        *p = '\0';
                        if (mkdir(copy, 0755) < 0 && errno != EEXIST)
                                return -errno;
                        *p = '/';
                }
        if (mkdir(copy, mode) < 0 && errno != EEXIST)
                return -errno;
        return 0;
}

int session_spawn(const struct policy *pol, const char *root, const char *id,
                  const char *cgroup_parent, int tie_fd, psrun_error *err)
{
        int r = mkdir_p(root, 0700);
        if (r < 0)
                return psrun_error_errno(err, r, "session: create %s", root);
        struct stat st;
        if (stat(root, &st) < 0 || !S_ISDIR(st.st_mode) || st.st_uid != 0 || (st.st_mode & 0022))
                return psrun_error_set(err, EPERM,
                                       "session: %s must be a directory of root's that "
                                       "nobody else can write",
                                       root);
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
        /* Two forks: the supervisor is nobody's child in the caller's
         * process tree, so the caller has no zombie to reap later and the
         * session outlives it. (glibc's fork keeps malloc usable in the
         * child of a multi-threaded caller.) */
        pid_t pid = fork();
        if (pid == 0) {
                close(sv[0]);
                setsid();
                pid_t sup = fork();
                if (sup != 0)
                        _exit(sup < 0 ? 1 : 0);
                supervisor_main(pol, dir, sv[1], tie_fd, cgroup_parent);
        }
        close(sv[1]);
        if (pid < 0) {
                r = -errno;
                close(sv[0]);
                rmdir(dir);
                return psrun_error_errno(err, r, "session: fork");
        }
        int status;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
                ;
        struct {
                int32_t r;
                psrun_error err;
        } ready;
        ssize_t n;
        do
                n = recv(sv[0], &ready, sizeof(ready), 0);
        while (n < 0 && errno == EINTR);
        close(sv[0]);
        if (n != (ssize_t) sizeof(ready)) {
                remove_state_dir(dir);
                return psrun_error_set(err, EIO, "session: the supervisor died while starting");
        }
        if (ready.r < 0) {
                if (err)
                        *err = ready.err;
                return ready.r;
        }
        return 0;
}
