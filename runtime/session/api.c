/* SPDX-License-Identifier: MIT */
/*
 * The session half of the public API (include/psrun.h): handles, the
 * control-socket client, execs with captured or streamed output.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fdpass.h"
#include "common/json.h"
#include "runtime/api-internal.h"
#include "runtime/cgroup/cgroup.h"
#include "netns/netns.h"
#include "runtime/gc.h"
#include "runtime/gvisor/gvisor.h"
#include "runtime/session/session.h"

/* ---- the control socket ---- */

static int connect_control(const char *dir, int *ret)
{
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if ((size_t) snprintf(sa.sun_path, sizeof(sa.sun_path), "%s/control", dir) >=
            sizeof(sa.sun_path))
                return -ENAMETOOLONG;
        int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *) &sa, sizeof(sa)) < 0) {
                int r = -errno;
                close(fd);
                return r;
        }
        *ret = fd;
        return 0;
}

int session_recv_reply(int fd, struct sess_reply *rep, int *fd_out, psrun_error *err)
{
        struct fdpass_in in;
        ssize_t n = fdpass_recv(fd, rep, sizeof(*rep), &in, 0);
        bool keep = n > 0 && fd_out && *fd_out < 0 && in.n_fds > 0;
        if (keep)
                *fd_out = in.fds[0];
        fdpass_close(&in, keep ? 1 : 0);
        if (n < 0)
                return (int) n;
        if (n == 0)
                return -EPIPE;
        int r = session_check_hdr(rep, (size_t) n, sizeof(*rep), true, err);
        if (r < 0 && fd_out && *fd_out >= 0)
                *fd_out = safe_close(*fd_out);
        return r;
}

/* Until the reply is there: 0; -ECANCELED once *cancel is set (checked
 * every CANCEL_POLL_MS). */
#define CANCEL_POLL_MS 50
static int wait_reply(int fd, const int *cancel)
{
        for (;;) {
                if (__atomic_load_n(cancel, __ATOMIC_ACQUIRE))
                        return -ECANCELED;
                struct pollfd p = {.fd = fd, .events = POLLIN};
                int n = poll(&p, 1, CANCEL_POLL_MS);
                if (n < 0 && errno != EINTR)
                        return -errno;
                if (n > 0)
                        return 0;
        }
}

static int call(const char *dir, const struct sess_req *req, const char *payload,
                size_t payload_len, const int *fds, int n_fds, struct sess_reply *reply,
                int *fd_out, int *keep_fd, const int *cancel, const char *what, psrun_error *err)
{
        _cleanup_close_ int fd = -1;
        int r = connect_control(dir, &fd);
        if (r < 0)
                return psrun_error_errno(err, r == -ECONNREFUSED ? ESRCH : r,
                                         "session: connect to its supervisor");
        /* Bounded: a supervisor that does not answer is an error, not a
         * hang (its first reply comes at once; an exec's result is read
         * only once poll says it is there). */
        struct timeval tv = {.tv_sec = 30};
        (void) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
        struct sess_req hreq = *req;
        session_hdr_init(&hreq.h, sizeof(hreq));
        struct iovec iov[2] = {{&hreq, sizeof(hreq)}, {(void *) payload, payload_len}};
        ssize_t sent =
                fdpass_sendv(fd, iov, payload_len ? 2 : 1, fds, n_fds > 0 ? (size_t) n_fds : 0, 0);
        if (sent < 0)
                return psrun_error_errno(err, sent == -EMSGSIZE ? E2BIG : (int) sent,
                                         "session: send the request");
        if (fd_out)
                *fd_out = -1;
        if (cancel) {
                /* A cancellable request is answered when it is done,
                 * however long that takes; a cancel hangs up, which the
                 * other end sees (POLLRDHUP) and stops. */
                r = wait_reply(fd, cancel);
                if (r == -ECANCELED) {
                        (void) shutdown(fd, SHUT_RDWR);
                        return psrun_error_set(err, ECANCELED, "%s: cancelled", what);
                }
                if (r < 0)
                        return psrun_error_errno(err, r, "session: wait for the supervisor");
        }
        r = session_recv_reply(fd, reply, fd_out, err);
        if (r == -EPROTONOSUPPORT || r == -EPROTO)
                return r;
        if (r < 0)
                return psrun_error_errno(err, r == -EPIPE ? ESRCH : r,
                                         "session: the supervisor did not answer");
        if (reply->kind == SESS_REPLY_ERROR) {
                if (fd_out && *fd_out >= 0)
                        *fd_out = safe_close(*fd_out);
                if (err)
                        *err = reply->err;
                return -(reply->err.code ? reply->err.code : EIO);
        }
        if (keep_fd)
                *keep_fd = TAKE_FD(fd);
        return 0;
}

int session_call(const char *dir, const struct sess_req *req, const char *payload,
                 size_t payload_len, const int *fds, int n_fds, struct sess_reply *reply,
                 int *fd_out, int *keep_fd, psrun_error *err)
{
        return call(dir, req, payload, payload_len, fds, n_fds, reply, fd_out, keep_fd, NULL, NULL,
                    err);
}

int session_call_cancellable(const char *dir, const struct sess_req *req, const char *payload,
                             size_t payload_len, const int *fds, int n_fds,
                             struct sess_reply *reply, const int *cancel, const char *what,
                             psrun_error *err)
{
        return call(dir, req, payload, payload_len, fds, n_fds, reply, NULL, NULL, cancel, what,
                    err);
}

int session_alive(const char *dir)
{
        _cleanup_free_ char *lock = NULL;
        if (asprintf(&lock, "%s/lock", dir) < 0)
                return -ENOMEM;
        _cleanup_close_ int fd = open(lock, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        if (flock(fd, LOCK_SH | LOCK_NB) < 0)
                return errno == EWOULDBLOCK ? 1 : -errno;
        return 0;
}

int session_reap(const char *dir, psrun_error *err)
{
        _cleanup_free_ char *lock_path = NULL, *info_path = NULL;
        if (asprintf(&lock_path, "%s/lock", dir) < 0 || asprintf(&info_path, "%s/info", dir) < 0)
                return psrun_error_errno(err, ENOMEM, "session");
        /* Held for the whole removal: a supervisor starting with this id
         * meanwhile is impossible (its mkdir would fail), and two gc's do
         * not remove the same session at once. */
        _cleanup_close_ int lock = open(lock_path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
        if (lock >= 0 && flock(lock, LOCK_EX | LOCK_NB) < 0)
                return psrun_error_set(err, EBUSY, "session: its supervisor is alive");
        _cleanup_fclose_ FILE *f = fopen(info_path, "re");
        size_t n = 0;
        char *paths[32] = {0};
        char line[4096];
        while (f && n + 1 < ARRAY_SIZE(paths) && fgets(line, sizeof(line), f)) {
                line[strcspn(line, "\n")] = '\0';
                if (strncmp(line, "cgroup ", 7) == 0)
                        paths[n++] = strdup(line + 7);
                else if (strncmp(line, "net ", 4) == 0)
                        /* Its veth, table and lease, now that their owner
                         * is dead (the lease's lock is free). */
                        (void) netns_reap(line + 4, NULL);
        }
        int r = 0;
        if (n > 0) {
                struct cgroup *cg = NULL;
                r = cgroup_open(paths, &cg, NULL);
                if (r >= 0)
                        r = cgroup_remove(cg, err);
                else if (r == -ENOENT)
                        r = 0;
        }
        for (size_t i = 0; i < n; i++)
                free(paths[i]);
        if (r < 0)
                return r;
        _cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
        if (dfd >= 0)
                session_remove_files(dfd);
        if (rmdir(dir) < 0 && errno != ENOENT)
                return psrun_error_errno(err, errno, "session: remove %s", dir);
        return 0;
}

/* ---- handles ---- */

struct psrun_session {
        char id[SESSION_ID_MAX + 1];
        char *dir;
        psrun_approve_fn approve;
        void *approve_userdata;
};

const char *session_dir(const psrun_session *s)
{
        return s->dir;
}

psrun_approve_fn session_approver(const psrun_session *s, void **userdata)
{
        *userdata = s->approve_userdata;
        return s->approve;
}

PSRUN_PUBLIC void psrun_session_set_approver(psrun_session *s, psrun_approve_fn approve,
                                             void *userdata)
{
        if (!s)
                return;
        s->approve = approve;
        s->approve_userdata = approve ? userdata : NULL;
}

static int new_handle(const char *root, const char *id, psrun_session **ret, psrun_error *err)
{
        psrun_session *s = calloc(1, sizeof(*s));
        if (!s || asprintf(&s->dir, "%s/%s", root, id) < 0) {
                free(s);
                return psrun_error_errno(err, ENOMEM, "session");
        }
        snprintf(s->id, sizeof(s->id), "%s", id);
        *ret = s;
        return 0;
}

/*
 * Without root a session's network can only be `none` for now: `full` and
 * `restricted` need the rootless router namespace (pasta), which is not
 * built yet (docs/rootless.md). Refused at create, in one line naming the
 * key, never a session with less network isolation than asked (an
 * install's own network, install_network, is refused by the supervisor
 * when an install asks for it: sup_rootless_install_network). The one
 * place to lift this when rootless networks exist.
 */
static int session_check_rootless_network(const struct policy *pol, psrun_error *err)
{
        if (geteuid() == 0)
                return 0;
        if (pol->network != POLICY_NETWORK_NONE)
                return psrun_error_set(err, EOPNOTSUPP,
                                       "network: `%s` needs root for a session yet (rootless "
                                       "sessions have `network: none`, docs/rootless.md)",
                                       policy_network_to_string(pol->network));
        if (pol->backend != POLICY_BACKEND_NATIVE)
                return psrun_error_set(err, EPERM,
                                       "backend: %s needs root (rootless psrun runs only "
                                       "`backend: native` yet, docs/rootless.md)",
                                       policy_backend_to_string(pol->backend));
        return 0;
}

PSRUN_PUBLIC int psrun_session_create(const psrun_policy *pol, const psrun_session_options *o,
                                      psrun_session **ret, psrun_error *err)
{
        static const psrun_session_options defaults = {0};
        if (!o)
                o = &defaults;
        if (!pol || !ret)
                return psrun_error_set(err, EINVAL, "session: no policy or result pointer given");
        *ret = NULL;
        char id[SESSION_ID_MAX + 1];
        if (o->name) {
                if (!session_id_valid(o->name))
                        return psrun_error_set(err, EINVAL,
                                               "name: `%s` is not 1-64 of A-Z a-z 0-9 _ . - "
                                               "(not starting with . or -)",
                                               o->name);
                snprintf(id, sizeof(id), "%s", o->name);
        } else {
                uint8_t rnd[8];
                if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd))
                        return psrun_error_errno(err, errno, "session: getrandom");
                for (size_t i = 0; i < sizeof(rnd); i++)
                        snprintf(id + 2 * i, 3, "%02x", rnd[i]);
        }
        int r = policy_validate(&pol->p, err);
        if (r >= 0)
                r = session_check_rootless_network(&pol->p, err);
        if (r < 0)
                return r;
        _cleanup_close_ int tie = -1;
        if (o->tie_to_caller) {
                tie = (int) syscall(SYS_pidfd_open, getpid(), 0);
                if (tie < 0)
                        return psrun_error_errno(err, errno, "tie_to_caller: pidfd_open");
        }
        _cleanup_free_ char *root = NULL;
        r = session_root_open(o->state_dir, true, &root, err);
        if (r < 0)
                return r;
        r = session_spawn(&pol->p, root, id, o->cgroup_parent, tie, err);
        if (r < 0)
                return r;
        r = new_handle(root, id, ret, err);
        if (r >= 0)
                psrun_session_set_approver(*ret, o->approve, o->approve_userdata);
        return r;
}

PSRUN_PUBLIC int psrun_session_open(const char *id, const char *state_dir, psrun_session **ret,
                                    psrun_error *err)
{
        if (!ret)
                return psrun_error_set(err, EINVAL, "session: no result pointer given");
        *ret = NULL;
        if (!session_id_valid(id))
                return psrun_error_set(err, EINVAL, "id: `%s` is not a session id", id ? id : "");
        _cleanup_free_ char *root = NULL;
        int r = session_root_open(state_dir, false, &root, err);
        if (r == 0)
                return psrun_error_set(err, ENOENT, "id: no session `%s`", id);
        if (r < 0)
                return r;
        psrun_session *s = NULL;
        r = new_handle(root, id, &s, err);
        if (r < 0)
                return r;
        struct stat st;
        if (stat(s->dir, &st) < 0) {
                psrun_session_close(s);
                return psrun_error_set(err, ENOENT, "id: no session `%s`", id);
        }
        if (session_alive(s->dir) <= 0) {
                psrun_session_close(s);
                return psrun_error_set(err, ESRCH,
                                       "id: session `%s` is dead (its supervisor is gone; "
                                       "`psrun gc` removes it)",
                                       id);
        }
        *ret = s;
        return 0;
}

PSRUN_PUBLIC const char *psrun_session_id(const psrun_session *s)
{
        return s ? s->id : NULL;
}

PSRUN_PUBLIC void psrun_session_close(psrun_session *s)
{
        if (!s)
                return;
        free(s->dir);
        free(s);
}

/*
 * A supervisor of another psrun build cannot read our DESTROY: SIGTERM,
 * which every supervisor takes as destroy, and wait until it is gone (its
 * lock free). The pidfd is opened before the lock is checked: the lock
 * held then means the process behind the pid (written to info by the lock's
 * holder) is still that supervisor, not a later process with its pid.
 */
static int terminate_supervisor(const char *dir, psrun_error *err)
{
        _cleanup_free_ char *info = NULL;
        if (asprintf(&info, "%s/info", dir) < 0)
                return psrun_error_errno(err, ENOMEM, "session");
        _cleanup_fclose_ FILE *f = fopen(info, "re");
        int pid = 0;
        char line[256];
        while (f && fgets(line, sizeof(line), f))
                if (sscanf(line, "pid %d", &pid) == 1)
                        break;
        _cleanup_close_ int pidfd = pid > 0 ? (int) syscall(SYS_pidfd_open, pid, 0) : -1;
        if (pidfd < 0 || session_alive(dir) <= 0 ||
            syscall(SYS_pidfd_send_signal, pidfd, SIGTERM, NULL, 0) < 0)
                return psrun_error_set(err, ESRCH, "session: its supervisor could not be found");
        for (int i = 0; i < 1000 && session_alive(dir) > 0; i++)
                usleep(10000);
        if (session_alive(dir) > 0)
                return psrun_error_set(err, ETIMEDOUT,
                                       "session: its supervisor did not end after SIGTERM");
        return 0;
}

PSRUN_PUBLIC int psrun_session_destroy(psrun_session *s, psrun_error *err)
{
        if (!s)
                return psrun_error_set(err, EINVAL, "session: no session given");
        struct sess_req req = {.op = SESS_OP_DESTROY};
        struct sess_reply rep;
        psrun_error cerr = {0};
        int r = session_call(s->dir, &req, NULL, 0, NULL, 0, &rep, NULL, NULL, &cerr);
        if (r == -EPROTONOSUPPORT) {
                r = terminate_supervisor(s->dir, err);
                psrun_session_close(s);
                return r;
        }
        if (r < 0) {
                /* A dead supervisor: remove what it left, as gc would. */
                struct stat st;
                if (stat(s->dir, &st) < 0)
                        r = psrun_error_set(err, ENOENT, "id: no session `%s`", s->id);
                else
                        r = session_reap(s->dir, err);
        }
        psrun_session_close(s);
        return r < 0 ? r : 0;
}

static int cmp_info(const void *a, const void *b)
{
        return strcmp(((const psrun_session_info *) a)->id, ((const psrun_session_info *) b)->id);
}

PSRUN_PUBLIC int psrun_session_list(const char *state_dir, psrun_session_info **list, size_t *n,
                                    psrun_error *err)
{
        if (!list || !n)
                return psrun_error_set(err, EINVAL, "session: list: no result pointers given");
        *list = NULL;
        *n = 0;
        _cleanup_free_ char *root = NULL;
        int r = session_root_open(state_dir, false, &root, err);
        if (r <= 0)
                return r;
        DIR *d = opendir(root);
        if (!d)
                return errno == ENOENT ? 0 : psrun_error_errno(err, errno, "session: %s", root);
        psrun_session_info *out = NULL;
        size_t cap = 0, count = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                if (!session_id_valid(de->d_name))
                        continue;
                if (count == cap) {
                        cap = cap ? 2 * cap : 16;
                        psrun_session_info *grown = realloc(out, cap * sizeof(*out));
                        if (!grown) {
                                free(out);
                                closedir(d);
                                return psrun_error_errno(err, ENOMEM, "session: list");
                        }
                        out = grown;
                }
                psrun_session_info *i = &out[count++];
                memset(i, 0, sizeof(*i));
                snprintf(i->id, sizeof(i->id), "%s", de->d_name);
                _cleanup_free_ char *dir = NULL;
                if (asprintf(&dir, "%s/%s", root, de->d_name) < 0)
                        continue;
                i->alive = session_alive(dir) > 0;
                struct sess_req req = {.op = SESS_OP_INFO};
                struct sess_reply rep;
                if (i->alive &&
                    session_call(dir, &req, NULL, 0, NULL, 0, &rep, NULL, NULL, NULL) >= 0) {
                        i->supervisor_pid = rep.pid;
                        i->created_unix = rep.created_unix;
                        i->running_execs = rep.running_execs;
                }
        }
        closedir(d);
        if (count)
                qsort(out, count, sizeof(*out), cmp_info);
        *list = out;
        *n = count;
        return 0;
}

PSRUN_PUBLIC int psrun_session_gc(const char *state_dir, psrun_error *err)
{
        psrun_session_info *list;
        size_t n;
        int r = psrun_session_list(state_dir, &list, &n, err);
        /* A user with no XDG_RUNTIME_DIR (and no root named) has no
         * sessions to collect. */
        if (r == -ENOENT && geteuid() != 0) {
                psrun_error_clear(err);
                return 0;
        }
        if (r < 0)
                return r;
        int removed = 0;
        _cleanup_free_ char *root = NULL;
        if (n > 0 && (r = session_root_open(state_dir, false, &root, err)) <= 0) {
                free(list);
                return r;
        }
        for (size_t i = 0; i < n; i++) {
                if (list[i].alive)
                        continue;
                _cleanup_free_ char *dir = NULL;
                if (asprintf(&dir, "%s/%s", root, list[i].id) < 0)
                        continue;
                if (session_reap(dir, NULL) >= 0)
                        removed++;
        }
        free(list);
        /* A gVisor session's bundle and runsc state (GVISOR_STATE_DIR),
         * owned by its dead supervisor's pid. */
        (void) gvisor_gc(NULL);
        return removed;
}
