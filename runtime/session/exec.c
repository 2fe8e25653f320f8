/* SPDX-License-Identifier: MIT */
/*
 * psrun_exec and the exec handle: the client side of an exec. The command's
 * stdio are fds we pass to the supervisor; its output comes straight back
 * to us through pipes, so the supervisor never buffers any of it, and what
 * we keep is bounded: the first and the last output_limit/2 bytes.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "common/json.h"
#include "runtime/api-internal.h"
#include "runtime/session/session.h"

#define CHUNK (64 * 1024)

/* Head + ring-buffer tail of one stream. */
struct capture {
        uint64_t limit;
        char *head;
        size_t head_len, head_cap;
        char *tail;
        size_t tail_cap, tail_pos, tail_len; /* ring: next write at tail_pos */
        uint64_t total;
};

static int capture_init(struct capture *c, uint64_t limit)
{
        memset(c, 0, sizeof(*c));
        c->limit = limit;
        c->head_cap = (size_t) (limit / 2);
        c->tail_cap = (size_t) (limit - c->head_cap);
        /* Allocated as output arrives: most commands print little. */
        return 0;
}

static int capture_add(struct capture *c, const char *p, size_t n)
{
        c->total += n;
        if (c->head_len < c->head_cap) {
                size_t k = n < c->head_cap - c->head_len ? n : c->head_cap - c->head_len;
                if (!c->head && !(c->head = malloc(c->head_cap)))
                        return -ENOMEM;
                memcpy(c->head + c->head_len, p, k);
                c->head_len += k;
                p += k;
                n -= k;
        }
        if (n == 0 || c->tail_cap == 0)
                return 0;
        if (!c->tail && !(c->tail = malloc(c->tail_cap)))
                return -ENOMEM;
        if (n > c->tail_cap) {
                p += n - c->tail_cap;
                n = c->tail_cap;
        }
        while (n > 0) {
                size_t k = c->tail_cap - c->tail_pos < n ? c->tail_cap - c->tail_pos : n;
                memcpy(c->tail + c->tail_pos, p, k);
                c->tail_pos = (c->tail_pos + k) % c->tail_cap;
                c->tail_len = c->tail_len + k > c->tail_cap ? c->tail_cap : c->tail_len + k;
                p += k;
                n -= k;
        }
        return 0;
}

/* The kept text: everything, or head, one marker line, tail. */
static int capture_finish(struct capture *c, char **data, size_t *len, uint64_t *bytes,
                          int *truncated)
{
        uint64_t kept = c->head_len + c->tail_len;
        char marker[96] = "";
        *truncated = c->total > kept;
        if (*truncated) {
                bool nl = c->head_len > 0 && c->head[c->head_len - 1] == '\n';
                snprintf(marker, sizeof(marker), "%s[... %llu bytes omitted ...]\n", nl ? "" : "\n",
                         (unsigned long long) (c->total - kept));
        }
        size_t mlen = strlen(marker);
        char *out = malloc(kept + mlen + 1);
        if (!out)
                return -ENOMEM;
        size_t n = 0;
        if (c->head_len)
                memcpy(out, c->head, c->head_len);
        n += c->head_len;
        memcpy(out + n, marker, mlen);
        n += mlen;
        /* The ring's oldest byte is at tail_pos once it has wrapped. */
        size_t start = c->tail_len == c->tail_cap ? c->tail_pos : 0;
        for (size_t i = 0; i < c->tail_len; i++)
                out[n++] = c->tail[(start + i) % c->tail_cap];
        out[n] = '\0';
        *data = out;
        *len = n;
        *bytes = c->total;
        free(c->head);
        free(c->tail);
        c->head = c->tail = NULL;
        return 0;
}

struct psrun_exec_handle {
        int conn;
        int out[2]; /* read ends of stdout, stderr; -1: passed through or at EOF */
        int in_fd;  /* our end of the command's stdin; -1: none */
        bool close_in_when_done;
        const char *in_data; /* pending stdin */
        size_t in_len, in_off;
        struct capture cap[2];
        psrun_output_fn on_output;
        void *userdata;
        bool have_result;
        struct sess_reply rep;
        char *buf;
        bool install; /* an installer: its errors say "install" */
        /* Set by psrun_exec_cancel, maybe from another thread than the
         * one that waits. */
        _Atomic bool cancelled;
        /* The caller's cancel flag, read by the waiter (NULL: none). */
        const int *cancel_flag;
};

/* How often a waiter with a cancel flag looks at it. */
#define CANCEL_POLL_MS 50

static void handle_free(psrun_exec_handle *h)
{
        if (!h)
                return;
        safe_close(h->conn);
        safe_close(h->out[0]);
        safe_close(h->out[1]);
        safe_close(h->in_fd);
        free(h->cap[0].head);
        free(h->cap[0].tail);
        free(h->cap[1].head);
        free(h->cap[1].tail);
        free(h->buf);
        free(h);
}

static int build_payload(char *const argv[], const psrun_exec_options *o, char **ret, size_t *len,
                         uint32_t *argc, uint32_t *envc, psrun_error *err)
{
        const char *cwd = o->cwd ? o->cwd : "";
        if (cwd[0] && cwd[0] != '/')
                return psrun_error_set(err, EINVAL, "cwd: `%s` is not an absolute path", cwd);
        size_t n = strlen(cwd) + 1;
        uint32_t na = 0, ne = 0;
        for (; argv[na]; na++)
                n += strlen(argv[na]) + 1;
        for (; o->env && o->env[ne]; ne++) {
                const char *e = o->env[ne];
                if (e[0] == '=' || !strchr(e, '='))
                        return psrun_error_set(err, EINVAL, "env: `%s` is not NAME=value", e);
                n += strlen(e) + 1;
        }
        if (n > SESSION_MSG_MAX)
                return psrun_error_set(err, E2BIG,
                                       "argv: command and env too long (%zu bytes, at "
                                       "most %d)",
                                       n, SESSION_MSG_MAX);
        char *p = malloc(n);
        if (!p)
                return psrun_error_errno(err, ENOMEM, "exec");
        size_t off = 0;
        memcpy(p, cwd, strlen(cwd) + 1);
        off += strlen(cwd) + 1;
        for (uint32_t i = 0; i < na; i++) {
                memcpy(p + off, argv[i], strlen(argv[i]) + 1);
                off += strlen(argv[i]) + 1;
        }
        for (uint32_t i = 0; i < ne; i++) {
                memcpy(p + off, o->env[i], strlen(o->env[i]) + 1);
                off += strlen(o->env[i]) + 1;
        }
        *ret = p;
        *len = n;
        *argc = na;
        *envc = ne;
        return 0;
}

PSRUN_PUBLIC int psrun_exec_start(psrun_session *s, char *const argv[], const psrun_exec_options *o,
                                  psrun_exec_handle **ret, psrun_error *err)
{
        static const psrun_exec_options defaults = {0};
        if (!o)
                o = &defaults;
        if (!s || !ret)
                return psrun_error_set(err, EINVAL, "exec: no session or handle pointer given");
        *ret = NULL;
        if (!argv || !argv[0] || !argv[0][0])
                return psrun_error_set(err, EINVAL, "argv: no command given");
        _cleanup_free_ char *payload = NULL;
        size_t len = 0;
        struct sess_req req = {.op = SESS_OP_EXEC, .timeout_ms = o->timeout_ms};
        int r = build_payload(argv, o, &payload, &len, &req.argc, &req.envc, err);
        if (r < 0)
                return r;
        return session_exec_start(s, &req, payload, len, o, ret, err);
}

PSRUN_PUBLIC int psrun_exec_background(psrun_session *s, char *const argv[],
                                       const psrun_exec_options *o, uint32_t *id, psrun_error *err)
{
        static const psrun_exec_options defaults = {0};
        if (!o)
                o = &defaults;
        if (!s || !id)
                return psrun_error_set(err, EINVAL, "exec: no session or id pointer given");
        if (!argv || !argv[0] || !argv[0][0])
                return psrun_error_set(err, EINVAL, "argv: no command given");
        _cleanup_free_ char *payload = NULL;
        size_t len = 0;
        struct sess_req req = {
                .op = SESS_OP_EXEC, .timeout_ms = o->timeout_ms, .flags = SESS_REQ_BACKGROUND};
        int r = build_payload(argv, o, &payload, &len, &req.argc, &req.envc, err);
        if (r < 0)
                return r;
        struct sess_reply rep;
        r = session_call(session_dir(s), &req, payload, len, NULL, 0, &rep, NULL, NULL, err);
        if (r >= 0 && rep.kind != SESS_REPLY_STARTED)
                r = psrun_error_set(err, EPROTO, "exec: unexpected reply from the supervisor");
        if (r < 0)
                return r;
        *id = rep.proc.id;
        return 0;
}

int session_exec_start(psrun_session *s, const struct sess_req *req_in, const char *payload,
                       size_t len, const psrun_exec_options *o, psrun_exec_handle **ret,
                       psrun_error *err)
{
        struct sess_req req = *req_in;
        int r;
        if (o->cancel && __atomic_load_n(o->cancel, __ATOMIC_ACQUIRE))
                return psrun_error_set(err, ECANCELED, "%s: cancelled",
                                       req.op == SESS_OP_INSTALL ? "install" : "exec");
        /* The output is kept here, in the embedder's process, but the
         * policy's output_limit is its ceiling still: a per-call value may
         * narrow it, never widen it (the supervisor holds timeout_ms). */
        if (o->output_limit) {
                struct sess_req info = {.op = SESS_OP_INFO};
                struct sess_reply irep;
                r = session_call(session_dir(s), &info, NULL, 0, NULL, 0, &irep, NULL, NULL, err);
                if (r < 0)
                        return r;
                if (o->output_limit > irep.output_limit)
                        return psrun_error_set(err, EPERM,
                                               "output_limit: %" PRIu64
                                               " is above the policy's output_limit %" PRIu64,
                                               o->output_limit, irep.output_limit);
        }
        psrun_exec_handle *h = calloc(1, sizeof(*h));
        if (!h)
                return psrun_error_errno(err, ENOMEM, "exec");
        h->conn = h->out[0] = h->out[1] = h->in_fd = -1;
        h->on_output = o->on_output;
        h->userdata = o->userdata;
        h->cancel_flag = o->cancel;
        h->install = req.op == SESS_OP_INSTALL;
        /* The child's ends, closed once the supervisor has them. */
        _cleanup_close_ int child_in = -1, child_out = -1, child_err = -1;
        int fds[3];
        switch (o->stdin_mode) {
        case PSRUN_STDIN_NONE:
                child_in = open("/dev/null", O_RDONLY | O_CLOEXEC);
                fds[0] = child_in;
                break;
        case PSRUN_STDIN_BYTES:
        case PSRUN_STDIN_PIPE: {
                /* A socket, not a pipe: send(MSG_NOSIGNAL) cannot raise
                 * SIGPIPE in the embedding program when the command stops
                 * reading. */
                int sv[2];
                if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
                        handle_free(h);
                        return psrun_error_errno(err, errno, "exec: stdin");
                }
                (void) shutdown(sv[0], SHUT_RD);
                (void) shutdown(sv[1], SHUT_WR);
                h->in_fd = sv[0];
                child_in = sv[1];
                fds[0] = child_in;
                (void) fcntl(h->in_fd, F_SETFL, O_NONBLOCK);
                if (o->stdin_mode == PSRUN_STDIN_BYTES) {
                        h->in_data = o->stdin_data;
                        h->in_len = o->stdin_data ? o->stdin_len : 0;
                        h->close_in_when_done = true;
                }
                break;
        }
        case PSRUN_STDIN_FD:
                fds[0] = o->stdin_fd;
                break;
        default:
                handle_free(h);
                return psrun_error_set(err, EINVAL, "stdin: unknown mode %d", (int) o->stdin_mode);
        }
        if (o->pass_output) {
                fds[1] = o->stdout_fd;
                fds[2] = o->stderr_fd;
        } else {
                int p1[2], p2[2];
                if (pipe2(p1, O_CLOEXEC) < 0) {
                        handle_free(h);
                        return psrun_error_errno(err, errno, "exec: pipe");
                }
                if (pipe2(p2, O_CLOEXEC) < 0) {
                        close(p1[0]);
                        close(p1[1]);
                        handle_free(h);
                        return psrun_error_errno(err, errno, "exec: pipe");
                }
                h->out[0] = p1[0];
                h->out[1] = p2[0];
                child_out = p1[1];
                child_err = p2[1];
                fds[1] = child_out;
                fds[2] = child_err;
                (void) fcntl(h->out[0], F_SETFL, O_NONBLOCK);
                (void) fcntl(h->out[1], F_SETFL, O_NONBLOCK);
        }
        if (fds[0] < 0 || fds[1] < 0 || fds[2] < 0) {
                handle_free(h);
                return psrun_error_set(err, EBADF, "exec: stdio: not an open file descriptor");
        }
        struct sess_reply rep;
        r = session_call(session_dir(s), &req, payload, len, fds, 3, &rep, NULL, &h->conn, err);
        if (r >= 0 && rep.kind != SESS_REPLY_STARTED)
                r = psrun_error_set(err, EPROTO, "exec: unexpected reply from the supervisor");
        if (r < 0) {
                handle_free(h);
                return r;
        }
        uint64_t limit = o->output_limit ? o->output_limit : rep.output_limit;
        if (!limit)
                limit = 1 << 20;
        capture_init(&h->cap[0], limit);
        capture_init(&h->cap[1], limit);
        if (!(h->buf = malloc(CHUNK))) {
                handle_free(h);
                return psrun_error_errno(err, ENOMEM, "exec");
        }
        *ret = h;
        return 0;
}

/* One round of I/O: output in, pending stdin out, the supervisor's reply. */
static int pump(psrun_exec_handle *h, psrun_error *err)
{
        bool want_in = h->in_fd >= 0 && h->in_off < h->in_len;
        struct pollfd pfd[4] = {
                {h->out[0], POLLIN, 0},
                {h->out[1], POLLIN, 0},
                {want_in ? h->in_fd : -1, POLLOUT, 0},
                {h->have_result ? -1 : h->conn, POLLIN, 0},
        };
        if (h->cancel_flag && !atomic_load(&h->cancelled) &&
            __atomic_load_n(h->cancel_flag, __ATOMIC_ACQUIRE)) {
                int r = psrun_exec_cancel(h, err);
                if (r < 0)
                        return r;
        }
        if (poll(pfd, 4, h->cancel_flag ? CANCEL_POLL_MS : -1) < 0)
                return errno == EINTR ? 0 : psrun_error_errno(err, errno, "exec: poll");
        for (int i = 0; i < 2; i++) {
                if (!pfd[i].revents)
                        continue;
                ssize_t n = read(h->out[i], h->buf, CHUNK);
                if (n < 0 && (errno == EAGAIN || errno == EINTR))
                        continue;
                if (n <= 0) {
                        h->out[i] = safe_close(h->out[i]);
                        continue;
                }
                if (h->on_output)
                        h->on_output(h->userdata, i + 1, h->buf, (size_t) n);
                if (capture_add(&h->cap[i], h->buf, (size_t) n) < 0)
                        return psrun_error_errno(err, ENOMEM, "exec: output");
        }
        if (pfd[2].revents) {
                ssize_t n = send(h->in_fd, h->in_data + h->in_off, h->in_len - h->in_off,
                                 MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n > 0)
                        h->in_off += (size_t) n;
                else if (n < 0 && errno != EAGAIN && errno != EINTR) {
                        /* The command closed its stdin: the rest is dropped. */
                        h->in_off = h->in_len;
                        h->in_fd = safe_close(h->in_fd);
                        if (!h->close_in_when_done)
                                return -EPIPE;
                }
        }
        if (h->close_in_when_done && h->in_fd >= 0 && h->in_off >= h->in_len)
                h->in_fd = safe_close(h->in_fd);
        if (pfd[3].revents) {
                int r = session_recv_reply(h->conn, &h->rep, NULL, NULL);
                if (r < 0 || h->rep.kind != SESS_REPLY_RESULT)
                        return psrun_error_set(err, ESRCH,
                                               "exec: the session ended before the command did");
                h->have_result = true;
        }
        return 0;
}

PSRUN_PUBLIC int psrun_exec_write_stdin(psrun_exec_handle *h, const void *data, size_t len,
                                        psrun_error *err)
{
        if (!h || h->in_fd < 0 || h->close_in_when_done)
                return psrun_error_set(err, EBADF, "exec: stdin is not a pipe or is closed");
        h->in_data = data;
        h->in_len = len;
        h->in_off = 0;
        while (h->in_off < h->in_len && h->in_fd >= 0) {
                int r = pump(h, err);
                if (r == -EPIPE)
                        return psrun_error_set(err, EPIPE, "exec: the command closed its stdin");
                if (r < 0)
                        return r;
                if (h->have_result && h->in_off < h->in_len)
                        return psrun_error_set(err, EPIPE, "exec: the command has ended");
        }
        h->in_data = NULL;
        h->in_len = h->in_off = 0;
        return 0;
}

PSRUN_PUBLIC int psrun_exec_close_stdin(psrun_exec_handle *h)
{
        if (!h)
                return -EINVAL;
        h->in_fd = safe_close(h->in_fd);
        return 0;
}

PSRUN_PUBLIC int psrun_exec_signal(psrun_exec_handle *h, int sig, psrun_error *err)
{
        if (!h || sig <= 0 || sig >= 65)
                return psrun_error_set(err, EINVAL, "signal: `%d` is not a signal", sig);
        struct sess_req req = {.op = SESS_OP_SIGNAL, .sig = sig};
        session_hdr_init(&req.h, sizeof(req));
        if (send(h->conn, &req, sizeof(req), MSG_NOSIGNAL) < 0)
                return psrun_error_errno(err, errno, "exec: signal");
        return 0;
}

/* Kill it as a tree: the supervisor kills the exec's process, then what
 * is left in its cgroup, and frees an install's network before it sends
 * the result, so psrun_exec_wait returns only once all of it is gone. */
PSRUN_PUBLIC int psrun_exec_cancel(psrun_exec_handle *h, psrun_error *err)
{
        if (!h)
                return psrun_error_set(err, EINVAL, "cancel: no handle given");
        atomic_store(&h->cancelled, true);
        return psrun_exec_signal(h, SIGKILL, err);
}

static psrun_network_stats *network_to_public(const struct netns_stats *in)
{
        if (!in->active)
                return NULL;
        psrun_network_stats *out = calloc(1, sizeof(*out));
        if (!out)
                return NULL;
        out->allowed_queries = in->allowed_queries;
        out->denied_queries = in->denied_queries;
        out->denied_more = in->denied_more;
        for (size_t i = 0; i < in->n_denied && i < ARRAY_SIZE(out->denied); i++) {
                const struct netns_denied *d = &in->denied[i];
                psrun_network_denial *p = &out->denied[out->n_denied++];
                snprintf(p->name, sizeof(p->name), "%s", d->name);
                snprintf(p->addr, sizeof(p->addr), "%s", d->addr);
                snprintf(p->proto, sizeof(p->proto), "%s", d->proto);
                p->port = d->port;
                p->count = d->count;
        }
        return out;
}

static void setup_error_result(psrun_exec_result *res, const psrun_error *err)
{
        memset(res, 0, sizeof(*res));
        res->result.exit_code = 125;
        res->result.reason = "setup_error";
        snprintf(res->result.error, sizeof(res->result.error), "%s", err ? err->msg : "");
}

/* The result's rootless layers, between the supervisor's reply and the
 * public struct (the same strings, both ways). */
#define ROOTLESS_FIELDS(X) X(identity) X(memory) X(cpu) X(pids) X(disk) X(timeout)
static void rootless_to_public(const struct run_result *r, psrun_exec_result *res)
{
        res->rootless.active = r->rootless.active;
#define TO_PUBLIC(f)                                                                               \
        _Static_assert(sizeof(res->rootless.f) == sizeof(r->rootless.f), #f);                      \
        memcpy(res->rootless.f, r->rootless.f, sizeof(res->rootless.f));
        ROOTLESS_FIELDS(TO_PUBLIC)
#undef TO_PUBLIC
}

void session_result_layers(const struct run_result *r, psrun_exec_result *res)
{
        _Static_assert(sizeof(res->layers) == sizeof(r->layers), "layers");
        memcpy(&res->layers, &r->layers, sizeof(res->layers));
        rootless_to_public(r, res);
}

static void rootless_from_public(const psrun_exec_result *res, struct run_result *r)
{
        r->rootless.active = res->rootless.active != 0;
#define FROM_PUBLIC(f)                                                                             \
        memcpy(r->rootless.f, res->rootless.f, sizeof(r->rootless.f));                             \
        r->rootless.f[sizeof(r->rootless.f) - 1] = '\0';
        ROOTLESS_FIELDS(FROM_PUBLIC)
#undef FROM_PUBLIC
}

PSRUN_PUBLIC int psrun_exec_wait(psrun_exec_handle *h, psrun_exec_result *res, psrun_error *err)
{
        psrun_error local = {0};
        if (!err)
                err = &local;
        if (!h || !res) {
                handle_free(h);
                return psrun_error_set(err, EINVAL, "exec: no handle or result given");
        }
        int r = 0;
        while (r >= 0 && (!h->have_result || h->out[0] >= 0 || h->out[1] >= 0)) {
                r = pump(h, err);
                if (r == -EPIPE)
                        r = 0;
        }
        if (r < 0) {
                setup_error_result(res, err);
                handle_free(h);
                return r;
        }
        memset(res, 0, sizeof(*res));
        result_to_public(&h->rep.result, &res->result);
        session_result_layers(&h->rep.result, res);
        if (h->rep.result.network.active &&
            !(res->network = network_to_public(&h->rep.result.network))) {
                psrun_exec_result_free(res);
                handle_free(h);
                return psrun_error_errno(err, ENOMEM, "exec: result");
        }
        if (capture_finish(&h->cap[0], &res->stdout_data, &res->stdout_len, &res->stdout_bytes,
                           &res->stdout_truncated) < 0 ||
            capture_finish(&h->cap[1], &res->stderr_data, &res->stderr_len, &res->stderr_bytes,
                           &res->stderr_truncated) < 0) {
                psrun_exec_result_free(res);
                handle_free(h);
                return psrun_error_errno(err, ENOMEM, "exec: output");
        }
        bool cancelled = atomic_load(&h->cancelled);
        const char *what = h->install ? "install" : "exec";
        handle_free(h);
        /* Cancelled: even one that ended by itself meanwhile, its result
         * (filled above) says how. */
        if (cancelled)
                return psrun_error_set(err, ECANCELED, "%s: cancelled", what);
        return 0;
}

PSRUN_PUBLIC int psrun_exec(psrun_session *s, char *const argv[], const psrun_exec_options *o,
                            psrun_exec_result *res, psrun_error *err)
{
        psrun_exec_handle *h = NULL;
        int r = psrun_exec_start(s, argv, o, &h, err);
        if (r < 0) {
                if (res)
                        setup_error_result(res, err);
                return r;
        }
        return psrun_exec_wait(h, res, err);
}

PSRUN_PUBLIC int psrun_exec_shell(psrun_session *s, const char *command,
                                  const psrun_exec_options *o, psrun_exec_result *res,
                                  psrun_error *err)
{
        if (!command)
                return psrun_error_set(err, EINVAL, "argv: no command given");
        char *argv[] = {"/bin/sh", "-c", (char *) command, NULL};
        return psrun_exec(s, argv, o, res, err);
}

PSRUN_PUBLIC void psrun_exec_result_free(psrun_exec_result *res)
{
        if (!res)
                return;
        free(res->stdout_data);
        free(res->stderr_data);
        free(res->network);
        res->network = NULL;
        res->stdout_data = res->stderr_data = NULL;
        psrun_result_free(&res->result);
        res->stdout_len = res->stderr_len = 0;
}

static void write_stream(FILE *f, const char *key, const char *data, size_t len)
{
        fprintf(f, ",\"%s\":", key);
        json_write_bytes(f, data, len);
}

PSRUN_PUBLIC int psrun_exec_result_write_json(const psrun_exec_result *res, int fd)
{
        if (!res)
                return -EINVAL;
        FILE *f = fdopen_copy(fd, "w");
        if (!f)
                return -errno;
        /* psrun run's fields, from the one writer, then the exec's own. */
        struct run_result *r = calloc(1, sizeof(*r));
        if (!r) {
                fclose(f);
                return -ENOMEM;
        }
        result_from_public(&res->result, r);
        memcpy(&r->layers, &res->layers, sizeof(r->layers));
        rootless_from_public(res, r);
        if (res->network) {
                const psrun_network_stats *p = res->network;
                struct netns_stats *n = &r->network;
                *n = (struct netns_stats){
                        .active = true,
                        .allowed_queries = p->allowed_queries,
                        .denied_queries = p->denied_queries,
                        .denied_more = p->denied_more,
                };
                for (size_t i = 0; i < p->n_denied && i < NETNS_MAX_DENIED; i++) {
                        struct netns_denied *d = &n->denied[n->n_denied++];
                        snprintf(d->name, sizeof(d->name), "%s", p->denied[i].name);
                        snprintf(d->addr, sizeof(d->addr), "%s", p->denied[i].addr);
                        snprintf(d->proto, sizeof(d->proto), "%s", p->denied[i].proto);
                        d->port = p->denied[i].port;
                        d->count = p->denied[i].count;
                }
        }
        fputc('{', f);
        run_result_write_fields(r, f);
        free(r);
        write_stream(f, "stdout", res->stdout_data, res->stdout_len);
        write_stream(f, "stderr", res->stderr_data, res->stderr_len);
        fprintf(f,
                ",\"stdout_bytes\":%llu,\"stderr_bytes\":%llu,\"stdout_truncated\":%s,"
                "\"stderr_truncated\":%s",
                (unsigned long long) res->stdout_bytes, (unsigned long long) res->stderr_bytes,
                res->stdout_truncated ? "true" : "false", res->stderr_truncated ? "true" : "false");
        fputs("}\n", f);
        return fclose(f) == 0 ? 0 : -errno;
}
