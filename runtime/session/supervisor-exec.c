/* SPDX-License-Identifier: MIT */
/*
 * A session supervisor's execs and installs (runtime/session/supervisor.h):
 * a request's argv and env, the backend's start, and at the end the
 * result: exit status, reason, accounting, network counts, violations.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statfs.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/run.h"
#include "runtime/session/supervisor.h"

void sup_drain_exec_messages(struct supervisor *s, struct exec_slot *e)
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
                if (m.kind == CHILD_MSG_EXIT) {
                        /* plan->exec_pidns: the command's status, from the
                         * pid 1 of its pid namespace, which exits 0. */
                        e->have_status = true;
                        e->status = m.status;
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
        res->wall_ms = monotonic_ms() - e->start_ms;
        run_result_set_status(res,
                              si->si_code == CLD_EXITED ? W_EXITCODE(si->si_status, 0)
                                                        : W_EXITCODE(0, si->si_status),
                              st);
        if (e->have_error) {
                res->reason = RUN_REASON_SETUP_ERROR;
                res->signal = 0;
                if (si->si_code != CLD_EXITED)
                        res->exit_code = CHILD_EXIT_SETUP;
                snprintf(res->error, sizeof(res->error), "%s", e->error);
                return;
        }
        run_result_set_limit_reason(res, st, e->timed_out, disk_full);
}

/* Every exec's watch target, for the audit records (NULL: a free slot). */
void sup_watch_targets(struct supervisor *s, struct vwatch_target **t)
{
        for (size_t i = 0; i < MAX_EXECS; i++)
                t[i] = s->execs[i].used ? &s->execs[i].watch : NULL;
}

static void report_violations(struct supervisor *s, struct exec_slot *e,
                              const struct cgroup_stats *st, bool disk_full, struct run_result *res)
{
        struct vwatch_target *targets[MAX_EXECS];
        sup_watch_targets(s, targets);
        vwatch_target_finish(&s->watch, &e->watch, targets, MAX_EXECS);
        const struct violation_limits limits = {
                .stats = st,
                .memory_limit = s->tmpl.reported.memory_bytes,
                .pids_limit = s->tmpl.reported.pids,
                .disk_limit = s->tmpl.reported.disk_bytes,
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
void sup_finish_exec(struct supervisor *s, struct exec_slot *e)
{
        siginfo_t si = {0};
        while (waitid((idtype_t) P_PIDFD, (id_t) e->l.pidfd, &si, WEXITED) < 0 && errno == EINTR)
                ;
        sup_drain_exec_messages(s, e);
        if (e->have_status && si.si_code == CLD_EXITED && si.si_status == 0) {
                si.si_code = WIFSIGNALED(e->status) ? CLD_KILLED : CLD_EXITED;
                si.si_status =
                        WIFSIGNALED(e->status) ? WTERMSIG(e->status) : WEXITSTATUS(e->status);
        }
        /* Background processes do not outlive their command. */
        struct cgroup_stats st = {0};
        if (e->cg) {
                /* Every process of an exec was born in its cgroup2 directory
                 * (CLONE_INTO_CGROUP), the only way into it: when that is
                 * empty, so is every other hierarchy. */
                if (cgroup_clone_fd(e->cg) < 0 || cgroup_populated(e->cg) != 0)
                        (void) cgroup_kill(e->cg, NULL);
                (void) cgroup_read_usage(e->cg, &st, NULL);
        }
        if (s->backend->exec_done)
                s->backend->exec_done(s, e, &si, &st);
        /* Static: with the network's counts it is large, and we are not
         * reentered. */
        static struct sess_reply rep;
        rep = (struct sess_reply){.kind = SESS_REPLY_RESULT, .pid = e->l.pid};
        bool disk_full = workspace_full(s->workspace_fd);
        fill_exec_result(e, &si, &st, disk_full, &rep.result);
        s->backend->exec_layers(s, &rep.result);
        snprintf(rep.result.backend, sizeof(rep.result.backend), "%s", s->backend->name);
        /* What the exec's network refused: an install's own (torn down now
         * that its processes are gone), or the session's while it ran. */
        dns_proxy_unwatch(s->net.proxy, &e->net);
        if (e->inet) {
                install_net_free(TAKE_PTR(e->inet), &rep.result.network);
                (void) sup_write_info(s, NULL);
        } else {
                rep.result.network = e->net;
        }
        report_violations(s, e, &st, disk_full, &rep.result);
        if (e->bg)
                sup_bg_finished(s, e->bg, &rep);
        e->bg = NULL;
        if (e->conn >= 0)
                (void) sup_send_reply(e->conn, &rep, -1);
        e->conn = safe_close(e->conn);
        launch_close(&e->l);
        /* Empty by now; removed while idle, not before the next request. */
        if (e->cg && s->n_trash < MAX_EXECS)
                s->trash[s->n_trash++] = e->cg;
        else
                cgroup_destroy(e->cg);
        e->cg = NULL;
        free(e->argv0);
        free(e->cwd);
        e->argv0 = e->cwd = NULL;
        e->used = false;
        s->n_running--;
        s->last_activity_ms = monotonic_ms();
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

/* Whether a request could start at all, checked before anything is built
 * for it (an install's network): the client is the embedder's process,
 * or anything that can reach the socket, so its timeout narrows the
 * policy's, never widens it; and a slot must be free. */
static int check_admissible(struct supervisor *s, uint64_t timeout_ms, psrun_error *err)
{
        int r = policy_check_ceiling(s->pol, "timeout", "timeout_ms", timeout_ms, err);
        if (r < 0)
                return r;
        if (!free_slot(s))
                return psrun_error_set(err, EAGAIN, "exec: too many concurrent execs (at most %d)",
                                       MAX_EXECS);
        return 0;
}

int sup_launch_exec(struct supervisor *s, int conn, struct exec_spec *x, int fds[3],
                    psrun_error *err)
{
        int r = check_admissible(s, x->timeout_ms, err);
        if (r < 0)
                return r;
        struct exec_slot *e = free_slot(s);
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
        r = s->backend->exec(s, e, &p, x->inet, fds, &cg, err);
        if (r < 0)
                return r;
        struct launch l = e->l;
        uint64_t timeout = x->timeout_ms ? x->timeout_ms : s->tmpl.reported.timeout_ms;
        *e = (struct exec_slot){
                .used = true,
                .conn = conn,
                .l = l,
                .cg = cg,
                .start_ms = monotonic_ms(),
                .timeout_ms = timeout,
                .argv0 = strdup(x->argv[0]),
                .cwd = x->cwd[0] ? strdup(x->cwd) : NULL,
                .inet = TAKE_PTR(x->inet),
                .bg = x->bg,
        };
        if (x->bg)
                e->conn = -1; /* nobody waits on the request's connection */
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
                .output_limit = s->set.output_limit,
        };
        if (x->bg) {
                x->bg->info.pid = l.pid;
                rep.proc = x->bg->info;
        }
        (void) sup_send_reply(conn, &rep, -1);
        return 0;
}

int sup_parse_exec(const struct sess_req *req, char *payload, size_t len, char **cwd, char ***argv,
                   char ***env, psrun_error *err)
{
        int r = split_payload(payload, len, req->argc, req->envc, cwd, argv, env, err);
        if (r < 0)
                return r;
        const char *bad = NULL;
        if ((*cwd)[0] && (*cwd)[0] != '/')
                r = psrun_error_set(err, EINVAL, "exec: cwd: `%s` is not an absolute path", *cwd);
        for (size_t i = 0; r == 0 && (*env)[i]; i++)
                if ((*env)[i][0] == '=' || !strchr((*env)[i], '='))
                        bad = (*env)[i];
        if (r == 0 && bad)
                r = psrun_error_set(err, EINVAL, "exec: env: `%s` is not NAME=value", bad);
        if (r < 0) {
                free(*argv);
                free(*env);
                *argv = *env = NULL;
        }
        return r;
}

int sup_start_exec(struct supervisor *s, int conn, const struct sess_req *req, char *payload,
                   size_t len, int fds[3], psrun_error *err)
{
        char *cwd = NULL;
        _cleanup_free_ char **argv = NULL;
        _cleanup_free_ char **env = NULL;
        int r = sup_parse_exec(req, payload, len, &cwd, &argv, &env, err);
        if (r < 0)
                return r;
        struct exec_spec x = {.argv = argv, .env = env, .cwd = cwd, .timeout_ms = req->timeout_ms};
        return sup_launch_exec(s, conn, &x, fds, err);
}

/*
 * An install: the installer as an exec, with the install network. The
 * checks here hold whatever the client is: a gated action without the
 * approver's yes, a spec that is not one package, or an install that no
 * network could serve are refused, and nothing runs.
 */
/* Rootless: an install's own network (install_network `restricted` or
 * `full`) needs the rootless router namespace, not built yet: refused in
 * one line naming the key, never an install on less than it asked for.
 * The one place to lift this with the session's (api.c). */
int sup_rootless_install_network(const struct supervisor *s, psrun_error *err)
{
        if (!s->tmpl.rootless.active || s->set.install_network == POLICY_NETWORK_NONE)
                return 0;
        return psrun_error_set(err, EOPNOTSUPP,
                               "install_network: `%s` needs root yet (a rootless session installs "
                               "only with `install_network: none`, docs/rootless.md)",
                               policy_network_to_string(s->set.install_network));
}

int sup_start_install(struct supervisor *s, int conn, const struct sess_req *req, char *payload,
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
        if ((s->set.approve & POLICY_ACTION_INSTALL) && !(req->flags & SESS_REQ_APPROVED))
                return psrun_error_set(err, EPERM,
                                       "install: `%s` (%s) needs approval (policy `approve: "
                                       "[install]`) and none was given",
                                       payload, tool_name);
        r = install_check_network(s->set.network, s->set.install_network, payload, err);
        if (r < 0)
                return r;
        _cleanup_strv_free_ char **argv = NULL;
        r = install_argv(&s->set.index, (enum install_tool) req->tool, payload, &argv, err);
        if (r < 0)
                return r;
        struct exec_spec x = {
                .argv = argv,
                .env = (char *const[]){NULL},
                .cwd = "/workspace",
                .timeout_ms = req->timeout_ms,
        };
        /* Refused for the request's own fault before a network is
         * leased for it: on a host whose resolv.conf names no
         * nameserver, a refused timeout is still that, not the
         * network's error. */
        r = check_admissible(s, req->timeout_ms, err);
        if (r < 0)
                return r;
        r = sup_rootless_install_network(s, err);
        if (r < 0)
                return r;
        r = install_net_prepare(s->pol, s->dir, &x.inet, err);
        if (r < 0)
                return r;
        r = sup_launch_exec(s, conn, &x, fds, err);
        install_net_free(x.inet, NULL); /* still ours on failure */
        if (r >= 0)
                (void) sup_write_info(s, NULL);
        return r;
}

void sup_empty_trash(struct supervisor *s)
{
        while (s->n_trash > 0)
                cgroup_destroy(s->trash[--s->n_trash]);
}
