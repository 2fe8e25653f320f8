/* SPDX-License-Identifier: MIT */
/*
 * What differs between a session's backends (STYLE.md §9; the table in
 * runtime/session/supervisor.h): native, psrun's own init and execs that
 * join its namespaces, each in a cgroup of its own; gvisor, the adapters
 * of runtime/gvisor/session.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/gvisor/gvisor.h"
#include "runtime/rootless.h"
#include "runtime/run.h"
#include "runtime/session/supervisor.h"

/* ---- execs ---- */

/* The pid a pidfd names, in our pid namespace (its fdinfo's "Pid:"); 0
 * when it cannot be read. */
static pid_t pidfd_pid(int pidfd)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/self/fdinfo/%d", pidfd);
        _cleanup_fclose_ FILE *f = fopen(path, "re");
        char line[128];
        int pid = 0;
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "Pid: %d", &pid) == 1)
                        break;
        return pid > 0 ? (pid_t) pid : 0;
}

void sup_kill_exec_native(struct supervisor *s, struct exec_slot *e)
{
        (void) syscall(SYS_pidfd_send_signal, e->l.pidfd, SIGKILL, NULL, 0);
        if (e->cg)
                (void) cgroup_kill(e->cg, NULL);
}

static void signal_exec_native(struct supervisor *s, struct exec_slot *e, int sig)
{
        (void) syscall(SYS_pidfd_send_signal, e->l.pidfd, sig, NULL, 0);
}

/*
 * When the execs together fill the session's memory_limit, the OOM killer
 * picks by size in the session's cgroup: init must not be its choice, or
 * the session ends. So init is exempt where we may lower its score
 * (CAP_SYS_RESOURCE; hosts may lack it), and every exec's processes are
 * raised to the top (plan->oom_score_adj, written by each exec itself:
 * that needs no privilege), which also makes untrusted commands the
 * victims of a host-wide shortage before anything of the host. Inherited
 * by everything the exec starts.
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

static struct cgroup_limits exec_limits(const struct supervisor *s)
{
        /* Each exec gets its own cgroup with the policy's limits, below the
         * session's: a runaway exec is limited, accounted and killed as a
         * tree without touching init or the other execs. */
        return plan_limits_with(&s->tmpl, 0);
}

int sup_zygote_due(const struct supervisor *s, uint64_t now)
{
        if (!s->backend->zygotes || s->zygote.pidfd >= 0 || !s->ztmpl.zygote)
                return -1;
        uint64_t wait = s->zygote_retry_ms > now ? s->zygote_retry_ms - now : 0;
        return wait > 1000 ? 1000 : (int) wait;
}

void sup_make_zygote(struct supervisor *s)
{
        if (sup_zygote_due(s, monotonic_ms()) != 0)
                return;
        /* In two steps (its cgroup, then the process), each about 0.3-0.5
         * ms here, with the supervisor's poll between them: an exec that
         * ends meanwhile waits for one at most. */
        if (!s->zygote_cg) {
                struct cgroup_limits limits = exec_limits(s);
                if (cgroup_create_child(s->cg, &limits, &s->zygote_cg, NULL) < 0 ||
                    cgroup_open_usage(s->zygote_cg) < 0) {
                        cgroup_destroy(s->zygote_cg);
                        s->zygote_cg = NULL;
                        s->zygote_retry_ms = monotonic_ms() + 1000;
                }
                return;
        }
        if (launch_zygote(&s->ztmpl, s->zygote_cg, &s->zygote, NULL) < 0) {
                s->zygote = (struct launch) LAUNCH_INIT;
                sup_drop_zygote(s, true);
        }
}

void sup_drop_zygote(struct supervisor *s, bool failed)
{
        if (s->zygote.pidfd >= 0) {
                (void) syscall(SYS_pidfd_send_signal, s->zygote.pidfd, SIGKILL, NULL, 0);
                siginfo_t si;
                while (waitid((idtype_t) P_PIDFD, (id_t) s->zygote.pidfd, &si, WEXITED) < 0 &&
                       errno == EINTR)
                        ;
                launch_close(&s->zygote);
                s->zygote = (struct launch) LAUNCH_INIT;
        }
        cgroup_destroy(s->zygote_cg);
        s->zygote_cg = NULL;
        if (failed)
                s->zygote_retry_ms = monotonic_ms() + 1000;
}

/* The zygote becomes this exec: its request and the client's stdio. */
static int exec_zygote(struct supervisor *s, struct exec_slot *e, const struct plan *p, int fds[3],
                       struct cgroup **cg_out, psrun_error *err)
{
        int r = launch_zygote_request(&s->zygote, p->argv, p->envp, p->workdir, p->path_env, fds,
                                      err);
        if (r < 0) {
                /* A request too big for it, or for its socket's buffer,
                 * leaves it waiting for the next one: nothing was sent. */
                if (r != -E2BIG && r != -EMSGSIZE && r != -ENOBUFS)
                        sup_drop_zygote(s, true);
                return r;
        }
        e->l = s->zygote;
        *cg_out = TAKE_PTR(s->zygote_cg);
        s->zygote = (struct launch) LAUNCH_INIT;
        return 0;
}

/*
 * plan->exec_pidns: the exec's first process, in our pid namespace, made
 * the exec's process in the sandbox's (spawn_pidns_init in
 * runtime/child.c), our child, and sends its pid and pidfd before anything
 * else (or its error record): that is the exec's process from now on (what
 * we wait for, signal and kill), and the first one, which exits at once,
 * is reaped.
 */
static int take_pidns_init(const struct plan *p, struct launch *l, psrun_error *err)
{
        struct child_msg m;
        int fd = -1;
        int r = launch_read_msg_fd(l, &m, &fd);
        if (r >= 0 && m.kind == CHILD_MSG_ERROR) {
                char what[512];
                launch_describe_error(p, &m, what, sizeof(what));
                return psrun_error_set(err, m.err ? m.err : EIO, "%s", what);
        }
        if (r < 0 || m.kind != CHILD_MSG_SPAWNED || fd < 0) {
                safe_close(fd);
                if (r < 0)
                        return psrun_error_errno(err, r,
                                                 "the exec's process in the sandbox's pid "
                                                 "namespace did not start");
                return psrun_error_set(err, EPROTO,
                                       "the exec's first process sent message %d, not its pid",
                                       (int) m.kind);
        }
        siginfo_t si;
        while (waitid((idtype_t) P_PIDFD, (id_t) l->pidfd, &si, WEXITED) < 0 && errno == EINTR)
                ;
        safe_close(l->pidfd);
        l->pidfd = fd;
        /* Its pid as we see it (the message's is the sandbox's). */
        l->pid = pidfd_pid(fd);
        return 0;
}

static int exec_native(struct supervisor *s, struct exec_slot *e, const struct plan *tmpl,
                       struct install_net *inet, int fds[3], struct cgroup **cg_out,
                       psrun_error *err)
{
        struct plan p = *tmpl; /* shallow: only read, by us and the child */
        if (inet) {
                /* A network of its own, made by clone3 in psrun's user
                 * namespace (the sandbox's may make none), and a private
                 * copy of the mounts whose resolv.conf names its gateway
                 * (runtime/session/net.h). */
                p.clone_flags |= CLONE_NEWNET;
                p.join_flags &= ~(uint64_t) (CLONE_NEWNET | CLONE_NEWNS);
                p.private_resolv_fd = inet->resolv_tree;
        }
        /* A plain exec takes the zygote when there is one: everything but
         * its command is done already. An install needs namespaces of its
         * own, so it is made from scratch, as is an exec meanwhile. */
        if (!inet && s->zygote.pidfd >= 0 && exec_zygote(s, e, &p, fds, cg_out, NULL) >= 0)
                return 0;
        struct cgroup_limits limits = exec_limits(s);
        struct cgroup *cg = NULL;
        /* No cgroup (rootless, no delegated subtree): the exec's own pid
         * namespace holds its tree (plan->exec_pidns, allow_exec_pidns). */
        if (s->cg && cgroup_create_child(s->cg, &limits, &cg, err) < 0)
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
        /* The install's network while its child waits, as psrun run's. Its
         * DNS proxy is a thread, which cannot be made while our children's
         * pid namespace is not our own: out of it for that moment. */
        if (r >= 0 && inet) {
                if (setns(s->own_pidns, CLONE_NEWPID) < 0)
                        r = psrun_error_errno(err, errno, "exec: leave the pid namespace");
                else {
                        r = install_net_start(inet, l.pid, err);
                        /* Back into the sandbox's pid namespace, or execs
                         * would be born outside the sandbox: better none. */
                        if (setns(s->init.pidfd, CLONE_NEWPID) < 0)
                                abort(); /* layering: fail closed */
                }
        }
        if (r >= 0)
                r = launch_release(&l, err);
        if (r >= 0 && p.exec_pidns)
                r = take_pidns_init(&p, &l, err);
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

static int open_workspace(struct supervisor *s, psrun_error *err)
{
        /* Opened once, before any command of the sandbox has run, from
         * init's root as init's setup left it (sent with its READY). */
        int root = s->root_fd;
        if (root < 0)
                return psrun_error_set(err, EPROTO, "session: init sent no root with its READY");
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
        free(t->hostname);
        t->hostname = NULL;
        rootfs_plan_free(&t->rootfs);
        memset(&t->rootfs, 0, sizeof(t->rootfs));
        /* Every namespace init was made with but the pid one, which is
         * entered for our children below; rootless, where we may not
         * enter it, each exec enters it for its own children
         * (plan->exec_pidns). */
        t->exec_pidns = t->rootless.active;
        t->join_flags = t->exec_pidns ? 0 : init_flags & ~(uint64_t) CLONE_NEWPID;
        if (t->exec_pidns && t->n_joins != 7)
                return psrun_error_set(err, EPROTO,
                                       "session: the sandbox's init sent %zu of its 7 namespaces",
                                       t->n_joins);
        t->join_pidfd = fcntl(s->init.pidfd, F_DUPFD_CLOEXEC, 3);
        if (t->join_pidfd < 0)
                return psrun_error_errno(err, errno, "session: pidfd");
        /* write_oom_score_adj; not rootless: an exec's process may not
         * write its own /proc file once it is not dumpable (root's, then). */
        t->oom_score_adj = t->rootless.active ? NULL : "1000";
        /* The zygote's plan: the same, made ahead (sup_make_zygote); none
         * rootless (made ahead, it would be the command itself, outside
         * the sandbox's pid namespace). */
        s->ztmpl = *t;
        s->ztmpl.zygote = !t->exec_pidns;
        if (t->exec_pidns)
                return 0;
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

/*
 * Rootless, each exec gets a pid namespace of its own (plan->exec_pidns),
 * which holds its tree where no cgroup does (no delegated subtree) and
 * beside one where it does, made by its process in the sandbox's user
 * namespace, whose quota init sets. So that
 * quota allows one per exec slot for pid namespaces: the sandbox's own
 * code still makes none (no capability in any user namespace, none it may
 * make: max_user_namespaces stays the policy's, and seccomp refuses the
 * namespace flags).
 */
static void allow_exec_pidns(struct plan *p)
{
        for (size_t i = 0; i < p->n_user_quotas; i++) {
                struct plan_user_quota *q = &p->user_quotas[i];
                if (strcmp(q->path, "/proc/sys/user/max_pid_namespaces") != 0)
                        continue;
                unsigned long long v = strtoull(q->value, NULL, 10);
                if (v < MAX_EXECS)
                        snprintf(q->value, sizeof(q->value), "%d", MAX_EXECS);
        }
}

/* init's messages up to its READY (or an error): a rootless init's
 * namespaces, which the execs join by fd (CHILD_MSG_NAMESPACE), and its
 * root, with the READY. */
static int read_ready(struct supervisor *s, struct child_msg *m)
{
        for (;;) {
                int fd = -1;
                int r = launch_read_msg_fd(&s->init, m, &fd);
                if (r < 0)
                        return r;
                if (m->kind == CHILD_MSG_NAMESPACE && fd >= 0 && s->tmpl.n_joins < PLAN_MAX_JOINS) {
                        s->tmpl.joins[s->tmpl.n_joins++] =
                                (struct plan_join){.type = m->status, .fd = fd};
                        continue;
                }
                if (m->kind == CHILD_MSG_READY) {
                        s->root_fd = fd;
                        return 0;
                }
                safe_close(fd);
                if (m->kind != CHILD_MSG_NAMESPACE)
                        return 0;
        }
}

/* psrun's init, in the session's cgroup's own sub-cgroup; execs join its
 * namespaces (make_template). */
static int start_native(struct supervisor *s, const char *cgroup_parent, psrun_error *err)
{
        s->tmpl.init_only = true;
        /* + init, + the next exec waiting */
        struct cgroup_limits limits = plan_limits_with(&s->tmpl, 2);
        int r;
        if (s->tmpl.rootless.active) {
                /* Without root: a cgroup in the user's delegated subtree
                 * where there is one, else none, with the limits refused
                 * or made rlimits of every exec, as psrun run's
                 * (runtime/rootless.h). */
                s->tmpl.limits = limits;
                r = rootless_plan_limits(s->pol, &s->tmpl, cgroup_parent, &s->cg, err);
        } else {
                r = cgroup_create(cgroup_parent, &limits, &s->cg, err);
        }
        if (r >= 0 && s->cg)
                r = cgroup_create_child(s->cg, NULL, &s->init_cg, err);
        if (r < 0)
                return r;
        if (s->tmpl.rootless.active)
                allow_exec_pidns(&s->tmpl);
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
                r = netns_up(&s->tmpl.net, s->init.pid, &s->net, err);
        if (r >= 0)
                r = launch_release(&s->init, err);
        struct child_msg m = {0};
        if (r >= 0) {
                r = read_ready(s, &m);
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

/* ---- the gVisor backend's adapters (runtime/gvisor/session.c) ---- */

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

/* An exec is made from the session's template plan: its layers are the
 * plan's. */
static void exec_layers_native(struct supervisor *s, struct run_result *res)
{
        run_result_set_layers(res, &s->tmpl);
}

/* Under gVisor the sentry stands where Landlock and AppArmor stand; the
 * policy's seccomp profile is the sandbox's (its init's, config.json's
 * linux.seccomp), but `runsc exec` applies no profile to the processes it
 * starts: in an exec the policy's syscall refusals do not hold, and the
 * result says so ("not in execs", docs/security.md). */
static void exec_layers_gvisor(struct supervisor *s, struct run_result *res)
{
        snprintf(res->layers.seccomp, sizeof(res->layers.seccomp), "not in execs");
        snprintf(res->layers.landlock, sizeof(res->layers.landlock), "gvisor");
        snprintf(res->layers.apparmor, sizeof(res->layers.apparmor), "off");
}

static const struct sess_backend sess_backends[_POLICY_BACKEND_MAX] = {
        [POLICY_BACKEND_NATIVE] = {.name = "native",
                                   .exec_cgroups = true,
                                   .zygotes = true,
                                   .own_layers = true,
                                   .start = start_native,
                                   .exec = exec_native,
                                   .kill_exec = sup_kill_exec_native,
                                   .signal_exec = signal_exec_native,
                                   .exec_layers = exec_layers_native},
        [POLICY_BACKEND_GVISOR] = {.name = "gvisor",
                                   .start = start_gvisor,
                                   .exec = exec_gvisor,
                                   .kill_exec = kill_exec_gvisor,
                                   .signal_exec = signal_exec_gvisor,
                                   .exec_done = exec_done_gvisor,
                                   .exec_layers = exec_layers_gvisor,
                                   .ending = ending_gvisor,
                                   .stop = stop_gvisor},
};

const struct sess_backend *sup_backend(enum policy_backend backend)
{
        return &sess_backends[(unsigned) backend < _POLICY_BACKEND_MAX ? backend
                                                                       : POLICY_BACKEND_NATIVE];
}
