/* SPDX-License-Identifier: MIT */
/*
 * A session's supervisor: one small process per session, the parent of the
 * sandbox's init and of every exec, holder of the session's cgroups and
 * timers, answering the control socket in the state directory. No daemon:
 * it is started by session_spawn() and gone with the session.
 *
 * Its one thread does all of that; the only other threads are the DNS
 * proxies of its networks (runtime/session/net.c), which touch neither fds
 * 0-2 nor namespaces, so the main thread may change its own fds 0-2 around
 * a clone3 without locks. From start-up on, its children are born in the
 * sandbox's pid namespace (setns CLONE_NEWPID); a thread cannot be made
 * meanwhile, so it leaves that namespace for the moment it makes one.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/fdpass.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/run.h"
#include "runtime/session/supervisor.h"

int sup_send_reply(int fd, struct sess_reply *rep, int pass_fd)
{
        session_hdr_init(&rep->h, sizeof(*rep));
        ssize_t n = fdpass_send(fd, rep, sizeof(*rep), &pass_fd, pass_fd >= 0 ? 1 : 0, 0);
        return n < 0 ? (int) n : 0;
}

void sup_reply_error(int fd, const psrun_error *err)
{
        struct sess_reply rep = {.kind = SESS_REPLY_ERROR, .err = *err};
        (void) sup_send_reply(fd, &rep, -1);
}

/* ---- the session ---- */

void sup_remove_state_dir(const char *dir)
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
_Noreturn void sup_shut_down(struct supervisor *s, int destroy_conn)
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
                        sup_kill_exec_native(s, &s->execs[i]);
        for (size_t i = 0; i < MAX_EXECS; i++)
                if (s->execs[i].used)
                        sup_finish_exec(s, &s->execs[i]);
        sup_drop_zygote(s, false);
        sup_empty_trash(s);
        sup_files_stop(s);
        if (s->init.pidfd >= 0) {
                siginfo_t si;
                while (waitid((idtype_t) P_PIDFD, (id_t) s->init.pidfd, &si, WEXITED) < 0 &&
                       errno == EINTR)
                        ;
        }
        launch_close(&s->init);
        /* The sandbox is gone: its network may go too. */
        netns_live_close(&s->net);
        netns_release(&s->tmpl.net);
        cgroup_destroy(s->init_cg);
        cgroup_destroy(s->cg);
        if (s->backend->stop)
                s->backend->stop(s);
        s->listen_fd = safe_close(s->listen_fd);
        sup_remove_state_dir(s->dir);
        if (destroy_conn >= 0) {
                struct sess_reply rep = {.kind = SESS_REPLY_OK};
                (void) sup_send_reply(destroy_conn, &rep, -1);
        }
        _exit(0);
}

static void handle_request(struct supervisor *s, int conn)
{
        /* Requests come from the session's owner (our uid) or root only,
         * and in one message right after connecting. The socket's
         * directory is the owner's and 0700 already; the peer's
         * credentials hold even where that were not so (a socket passed
         * on, a directory opened up): another user, or the sandbox's ids,
         * get no answer. */
        struct timeval tv = {.tv_sec = 2};
        (void) setsockopt(conn, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        struct ucred cred;
        socklen_t cl = sizeof(cred);
        if (getsockopt(conn, SOL_SOCKET, SO_PEERCRED, &cred, &cl) < 0 ||
            (cred.uid != 0 && cred.uid != geteuid())) {
                close(conn);
                return;
        }
        /* One request at a time (one thread): read into one buffer, which
         * its strings are used from until the exec has started. */
        static char buf[sizeof(struct sess_req) + SESSION_MSG_MAX] __attribute__((aligned(16)));
        struct fdpass_in in;
        ssize_t n = fdpass_recv(conn, buf, sizeof(buf), &in, 0);
        /* At most three (the exec's stdio); any more are closed. */
        fdpass_close(&in, 3);
        int *fds = in.fds;
        int n_fds = (int) in.n_fds;
        s->last_activity_ms = monotonic_ms();
        psrun_error err = {0};
        struct sess_req req;
        if (n >= 0 && session_check_hdr(buf, (size_t) n < sizeof(req) ? (size_t) n : sizeof(req),
                                        sizeof(req), false, &err) == -EPROTONOSUPPORT) {
                /* Another build's client: our header alone, so that it can
                 * say which versions differ, whatever its structs are. */
                struct sess_hdr h;
                session_hdr_init(&h, sizeof(struct sess_reply));
                (void) send(conn, &h, sizeof(h), MSG_NOSIGNAL);
                close(conn);
                goto out;
        }
        if (n < (ssize_t) sizeof(req) || in.truncated) {
                psrun_error_set(&err, EPROTO,
                                "session: malformed or too long request (at most "
                                "%d KiB of argv and env)",
                                SESSION_MSG_MAX / 1024);
                sup_reply_error(conn, &err);
                close(conn);
                goto out;
        }
        memcpy(&req, buf, sizeof(req));
        switch (req.op) {
        case SESS_OP_EXEC:
                if (req.flags & SESS_REQ_BACKGROUND) {
                        /* Its stdio are the supervisor's: no fds. */
                        if (n_fds != 0)
                                psrun_error_set(&err, EPROTO, "exec: background: no fds expected");
                        else if (sup_start_background(s, conn, &req, buf + sizeof(req),
                                                      (size_t) n - sizeof(req), &err) >= 0)
                                break;
                        sup_reply_error(conn, &err);
                        break;
                }
                if (n_fds != 3) {
                        psrun_error_set(&err, EPROTO, "exec: stdin, stdout and stderr expected");
                } else if (sup_start_exec(s, conn, &req, buf + sizeof(req),
                                          (size_t) n - sizeof(req), fds, &err) >= 0) {
                        conn = -1; /* the exec's now */
                        break;
                }
                sup_reply_error(conn, &err);
                break;
        case SESS_OP_INSTALL:
                if (n_fds != 3) {
                        psrun_error_set(&err, EPROTO, "install: stdin, stdout and stderr expected");
                } else if (sup_start_install(s, conn, &req, buf + sizeof(req),
                                             (size_t) n - sizeof(req), fds, &err) >= 0) {
                        conn = -1;
                        break;
                }
                sup_reply_error(conn, &err);
                break;
        case SESS_OP_WORKSPACE:
        case SESS_OP_INFO: {
                struct sess_reply rep = {
                        .kind = SESS_REPLY_OK,
                        .pid = getpid(),
                        .uid = PSRUN_ID_BASE + s->tmpl.uid,
                        .gid = PSRUN_ID_BASE + s->tmpl.gid,
                        .disk_limit = s->tmpl.reported.disk_bytes,
                        .output_limit = s->set.output_limit,
                        .created_unix = s->created_unix,
                        .running_execs = s->n_running,
                        .approve = s->set.approve,
                        .network = (uint32_t) s->set.network,
                        .install_network = (uint32_t) s->set.install_network,
                        .files_remote = s->tmpl.rootless.active,
                };
                snprintf(rep.pip_index_url, sizeof(rep.pip_index_url), "%s",
                         s->set.index.pip_index_url ? s->set.index.pip_index_url : "");
                snprintf(rep.npm_registry, sizeof(rep.npm_registry), "%s",
                         s->set.index.npm_registry ? s->set.index.npm_registry : "");
                (void) sup_send_reply(conn, &rep,
                                      req.op == SESS_OP_WORKSPACE ? s->workspace_fd : -1);
                break;
        }
        case SESS_OP_WRITE:
        case SESS_OP_READ:
        case SESS_OP_LIST:
        case SESS_OP_REMOVE:
                if (sup_files_write(s, conn, buf, (size_t) n, fds, n_fds, &err) < 0)
                        sup_reply_error(conn, &err);
                break;
        case SESS_OP_PROC_LIST:
        case SESS_OP_PROC_OUTPUT:
        case SESS_OP_PROC_SIGNAL:
        case SESS_OP_PROC_WAIT:
                sup_proc_request(s, conn, &req); /* answers, closes or keeps conn */
                conn = -1;
                break;
        case SESS_OP_DESTROY:
                for (int i = 0; i < n_fds; i++)
                        close(fds[i]);
                sup_shut_down(s, conn);
        default:
                psrun_error_set(&err, EPROTO, "session: unknown request %u", req.op);
                sup_reply_error(conn, &err);
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
        if (n == (ssize_t) sizeof(req) &&
            session_check_hdr(&req, sizeof(req), sizeof(req), false, NULL) == 0 &&
            req.op == SESS_OP_SIGNAL) {
                if (req.sig > 0 && req.sig < 65)
                        s->backend->signal_exec(s, e, req.sig);
                return;
        }
        /* The client went away (or spoke nonsense): nobody waits for this
         * exec's result, so it must not go on running unobserved. */
        e->conn = safe_close(e->conn);
        s->backend->kill_exec(s, e);
}

static int poll_timeout(struct supervisor *s, uint64_t now)
{
        uint64_t next = UINT64_MAX;
        for (size_t i = 0; i < MAX_EXECS; i++) {
                struct exec_slot *e = &s->execs[i];
                if (e->used && e->deadline_ms && !e->timed_out && e->deadline_ms < next)
                        next = e->deadline_ms;
        }
        if (s->set.idle_timeout_ms && s->n_running == 0 &&
            s->last_activity_ms + s->set.idle_timeout_ms < next)
                next = s->last_activity_ms + s->set.idle_timeout_ms;
        if (s->set.lifetime_ms && s->created_ms + s->set.lifetime_ms < next)
                next = s->created_ms + s->set.lifetime_ms;
        if (next == UINT64_MAX)
                return -1;
        if (next <= now)
                return 0;
        return next - now > 60000 ? 60000 : (int) (next - now);
}

static void check_deadlines(struct supervisor *s)
{
        uint64_t now = monotonic_ms();
        if (s->set.lifetime_ms && now >= s->created_ms + s->set.lifetime_ms)
                sup_shut_down(s, -1);
        if (s->set.idle_timeout_ms && s->n_running == 0 &&
            now >= s->last_activity_ms + s->set.idle_timeout_ms)
                sup_shut_down(s, -1);
        for (size_t i = 0; i < MAX_EXECS; i++) {
                struct exec_slot *e = &s->execs[i];
                if (e->used && e->deadline_ms && !e->timed_out && now >= e->deadline_ms) {
                        e->timed_out = true;
                        s->backend->kill_exec(s, e);
                }
        }
}

_Noreturn void sup_serve(struct supervisor *s)
{
        /* pollfd layout: listen, init, tie, signals, audit, the zygote's
         * pidfd and sync socket, then 4 per exec slot (its pidfd, sync
         * socket, connection, seccomp listener), then the background
         * processes' records' (sup_bg_pollfds). */
        enum { BASE = 7, PER_EXEC = 4, BG = BASE + PER_EXEC * MAX_EXECS };
        struct pollfd pfd[BG + SUP_BG_FDS * MAX_BG];
        for (;;) {
                uint64_t now = monotonic_ms();
                pfd[0] = (struct pollfd){s->listen_fd, POLLIN, 0};
                pfd[1] = (struct pollfd){s->init.pidfd, POLLIN, 0};
                pfd[2] = (struct pollfd){s->tie_fd, POLLIN, 0};
                pfd[3] = (struct pollfd){s->signal_fd, POLLIN, 0};
                pfd[4] = (struct pollfd){s->watch.audit_fd, POLLIN, 0};
                pfd[5] = (struct pollfd){s->zygote.pidfd, POLLIN, 0};
                pfd[6] = (struct pollfd){s->zygote.sync_fd, POLLIN, 0};
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
                sup_bg_pollfds(s, &pfd[BG]);
                struct vwatch_target *targets[MAX_EXECS];
                sup_watch_targets(s, targets);
                int timeout = poll_timeout(s, now);
                int resume = vwatch_poll_timeout(&s->watch, now);
                if (resume >= 0 && (timeout < 0 || resume < timeout))
                        timeout = resume;
                /* What is done while there is nothing else to do, one step
                 * (0.2-0.5 ms) per turn, so that an exec's end or a request
                 * waits for one at most: the next exec, at once (on a cgroup
                 * v1 host it then waits for the kernel's cgroup lock, an RCU
                 * grace period, while the last exec runs, not in the next
                 * one's time); then the finished execs' cgroups, one by one. */
                int due = sup_zygote_due(s, now);
                if (due >= 0 && (timeout < 0 || due < timeout))
                        timeout = due;
                if (s->n_trash > 0)
                        timeout = 0;
                int n = poll(pfd, ARRAY_SIZE(pfd), timeout);
                if (n < 0 && errno != EINTR)
                        sup_shut_down(s, -1);
                check_deadlines(s);
                if (n == 0 && sup_zygote_due(s, monotonic_ms()) == 0)
                        sup_make_zygote(s);
                else if (n == 0 && s->n_trash > 0)
                        cgroup_destroy(s->trash[--s->n_trash]);
                if (n <= 0)
                        continue;
                /* init died, the tied caller exited, or we were asked to end
                 * (SIGTERM: `kill` of the supervisor destroys the session as
                 * cleanly as destroy does). */
                if (pfd[1].revents || pfd[2].revents || pfd[3].revents)
                        sup_shut_down(s, -1);
                /* Before anyone asked for it, the zygote died or had
                 * something to say (an error record): a new one later. */
                if (pfd[5].revents || pfd[6].revents)
                        sup_drop_zygote(s, true);
                /* Sync sockets first: an exec's message (its pid) comes before
                 * any record of what it did. */
                for (size_t i = 0; i < MAX_EXECS; i++)
                        if (s->execs[i].used && pfd[BASE + PER_EXEC * i + 1].revents)
                                sup_drain_exec_messages(s, &s->execs[i]);
                if (pfd[4].revents)
                        vwatch_on_audit(&s->watch, targets, MAX_EXECS);
                for (size_t i = 0; i < MAX_EXECS; i++) {
                        struct exec_slot *e = &s->execs[i];
                        struct pollfd *p = &pfd[BASE + PER_EXEC * i];
                        if (!e->used)
                                continue;
                        if (p[3].revents)
                                vwatch_on_listener(&s->watch, &e->watch, p[3].revents,
                                                   monotonic_ms());
                        if (p[2].revents && e->conn >= 0)
                                handle_exec_conn(s, e);
                        if (p[0].revents)
                                sup_finish_exec(s, e);
                }
                /* Background output (an ended one's was drained as it
                 * ended, sup_bg_finished), and waiters gone. */
                sup_bg_events(s, &pfd[BG]);
                if (pfd[0].revents) {
                        int conn = accept4(s->listen_fd, NULL, NULL, SOCK_CLOEXEC);
                        if (conn >= 0)
                                handle_request(s, conn);
                }
        }
}
