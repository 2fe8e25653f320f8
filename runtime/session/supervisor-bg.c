/* SPDX-License-Identifier: MIT */
/*
 * A session supervisor's background processes (runtime/session/supervisor.h,
 * docs/sessions.md): execs that nobody's connection waits on. Each is an
 * exec slot like any other (its own cgroup, limits, deadline; killed with
 * the session), plus a record here that outlives it: the output it wrote,
 * kept in a bounded head and ring per stream, its result once it ended,
 * and at most one client waiting for that.
 *
 * Their output comes to the supervisor (nobody else is there to read it)
 * through pipes it drains as it serves: a flood costs the ring's size and
 * some of the supervisor's time, never more memory.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "runtime/session/supervisor.h"

static struct bg_proc *find_bg(struct supervisor *s, uint32_t id)
{
        for (size_t i = 0; i < MAX_BG; i++)
                if (s->bg[i].used && s->bg[i].info.id == id)
                        return &s->bg[i];
        return NULL;
}

static void bg_release(struct bg_proc *b)
{
        safe_close(b->out[0]);
        safe_close(b->out[1]);
        for (int w = 0; w < BG_WAITERS; w++)
                safe_close(b->waiter[w]);
        for (int i = 0; i < 2; i++) {
                free(b->ring[i].head);
                free(b->ring[i].tail);
        }
        memset(b, 0, sizeof(*b));
        b->out[0] = b->out[1] = -1;
        for (int w = 0; w < BG_WAITERS; w++)
                b->waiter[w] = -1;
}

static unsigned running_count(const struct supervisor *s)
{
        unsigned n = 0;
        for (size_t i = 0; i < MAX_BG; i++)
                n += s->bg[i].used && s->bg[i].running;
        return n;
}

/* A free record, or the oldest ended one's (background_limit is at most
 * half of MAX_BG, so there is one). */
static struct bg_proc *new_record(struct supervisor *s)
{
        struct bg_proc *oldest = NULL;
        for (size_t i = 0; i < MAX_BG; i++) {
                struct bg_proc *b = &s->bg[i];
                if (!b->used)
                        return b;
                if (!b->running && (!oldest || b->seq < oldest->seq))
                        oldest = b;
        }
        if (oldest)
                bg_release(oldest);
        return oldest;
}

/* ---- the rings ---- */

static int ring_add(struct bg_ring *r, const char *p, size_t n)
{
        if (r->head_len < r->head_cap) {
                size_t k = n < r->head_cap - r->head_len ? n : r->head_cap - r->head_len;
                if (!r->head && !(r->head = malloc(r->head_cap)))
                        return -ENOMEM;
                memcpy(r->head + r->head_len, p, k);
                r->head_len += k;
                r->total += k;
                p += k;
                n -= k;
        }
        if (n == 0 || r->tail_cap == 0) {
                r->total += n;
                return 0;
        }
        if (!r->tail && !(r->tail = malloc(r->tail_cap)))
                return -ENOMEM;
        if (n > r->tail_cap) {
                r->total += n - r->tail_cap;
                p += n - r->tail_cap;
                n = r->tail_cap;
        }
        /* The byte at stream offset o lives at tail[o % tail_cap]. */
        while (n > 0) {
                size_t at = (size_t) (r->total % r->tail_cap);
                size_t k = r->tail_cap - at < n ? r->tail_cap - at : n;
                memcpy(r->tail + at, p, k);
                r->total += k;
                r->tail_len = r->tail_len + k > r->tail_cap ? r->tail_cap : r->tail_len + k;
                p += k;
                n -= k;
        }
        return 0;
}

/* Up to max bytes from offset (or from the first kept byte after it). */
static size_t ring_read(const struct bg_ring *r, uint64_t offset, char *buf, size_t max,
                        uint64_t *start)
{
        if (offset < r->head_len) {
                size_t n =
                        r->head_len - (size_t) offset < max ? r->head_len - (size_t) offset : max;
                memcpy(buf, r->head + offset, n);
                *start = offset;
                return n;
        }
        uint64_t first = r->total - r->tail_len;
        if (offset < first)
                offset = first;
        if (offset >= r->total) {
                *start = r->total;
                return 0;
        }
        size_t n = r->total - offset < max ? (size_t) (r->total - offset) : max;
        for (size_t done = 0; done < n;) {
                size_t at = (size_t) ((offset + done) % r->tail_cap);
                size_t k = r->tail_cap - at < n - done ? r->tail_cap - at : n - done;
                memcpy(buf + done, r->tail + at, k);
                done += k;
        }
        *start = offset;
        return n;
}

/* What the pipe has now, into the ring; at EOF (or a read error) it is
 * closed. */
static void drain_stream(struct bg_proc *b, int i)
{
        static char buf[64 * 1024];
        /* A bounded number of reads per turn: a flood must not keep the
         * supervisor from its other clients. */
        for (int round = 0; round < 16 && b->out[i] >= 0; round++) {
                ssize_t n = read(b->out[i], buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        return;
                if (n <= 0) {
                        b->out[i] = safe_close(b->out[i]);
                        return;
                }
                if (ring_add(&b->ring[i], buf, (size_t) n) < 0)
                        b->ring[i].total += (uint64_t) n; /* counted, not kept */
                b->info.bytes[i] = b->ring[i].total;
        }
}

/* ---- starting one ---- */

static void command_line(char *const *argv, char *out, size_t size)
{
        size_t n = 0;
        out[0] = '\0';
        for (size_t i = 0; argv[i] && n + 1 < size; i++) {
                int w = snprintf(out + n, size - n, "%s%s", i ? " " : "", argv[i]);
                if (w < 0)
                        break;
                n += (size_t) w;
        }
}

int sup_start_background(struct supervisor *s, int conn, const struct sess_req *req, char *payload,
                         size_t len, psrun_error *err)
{
        if (s->set.background_limit == 0)
                return psrun_error_set(err, EPERM,
                                       "exec: background: not allowed in this session (policy "
                                       "background_limit: 0)");
        unsigned running = running_count(s);
        if (running >= s->set.background_limit)
                return psrun_error_set(err, EAGAIN,
                                       "exec: background: %u processes already running (policy "
                                       "background_limit: %u); wait for or kill one first",
                                       running, s->set.background_limit);
        char *cwd = NULL;
        _cleanup_free_ char **argv = NULL;
        _cleanup_free_ char **env = NULL;
        int r = sup_parse_exec(req, payload, len, &cwd, &argv, &env, err);
        if (r < 0)
                return r;
        struct bg_proc *b = new_record(s);
        if (!b)
                return psrun_error_set(err, EAGAIN, "exec: background: no room for another");
        _cleanup_close_ int null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
        int p1[2] = {-1, -1}, p2[2] = {-1, -1};
        if (null_fd < 0 || pipe2(p1, O_CLOEXEC) < 0 || pipe2(p2, O_CLOEXEC) < 0) {
                r = psrun_error_errno(err, errno, "exec: background: pipe");
                safe_close(p1[0]);
                safe_close(p1[1]);
                return r;
        }
        b->used = true;
        b->running = true;
        for (int w = 0; w < BG_WAITERS; w++)
                b->waiter[w] = -1;
        b->seq = ++s->bg_seq;
        b->out[0] = p1[0];
        b->out[1] = p2[0];
        (void) fcntl(p1[0], F_SETFL, O_NONBLOCK);
        (void) fcntl(p2[0], F_SETFL, O_NONBLOCK);
        for (int i = 0; i < 2; i++) {
                b->ring[i].head_cap = (size_t) (s->set.output_limit / 2);
                b->ring[i].tail_cap = (size_t) (s->set.output_limit - b->ring[i].head_cap);
        }
        b->info.id = ++s->next_proc_id;
        b->info.running = 1;
        b->info.started_unix = (uint64_t) time(NULL);
        command_line(argv, b->info.command, sizeof(b->info.command));
        struct exec_spec x = {
                .argv = argv, .env = env, .cwd = cwd, .timeout_ms = req->timeout_ms, .bg = b};
        int fds[3] = {null_fd, p1[1], p2[1]};
        r = sup_launch_exec(s, conn, &x, fds, err);
        /* The command has its ends (or nothing runs). */
        close(p1[1]);
        close(p2[1]);
        if (r < 0)
                bg_release(b);
        return r;
}

void sup_bg_finished(struct supervisor *s, struct bg_proc *b, const struct sess_reply *rep)
{
        /* What it wrote before it ended is there to be read at once. */
        drain_stream(b, 0);
        drain_stream(b, 1);
        b->running = false;
        b->info.running = 0;
        b->info.exit_code = rep->result.exit_code;
        b->info.signal = rep->result.signal;
        b->result = rep->result;
        static struct sess_reply out;
        out = *rep;
        out.proc = b->info;
        for (int w = 0; w < BG_WAITERS; w++) {
                if (b->waiter[w] < 0)
                        continue;
                (void) sup_send_reply(b->waiter[w], &out, -1);
                b->waiter[w] = safe_close(b->waiter[w]);
        }
}

/* ---- the requests ---- */

static int by_id(const void *a, const void *b)
{
        uint32_t x = (*(struct bg_proc *const *) a)->info.id;
        uint32_t y = (*(struct bg_proc *const *) b)->info.id;
        return x < y ? -1 : x > y;
}

static void reply_list(struct supervisor *s, int conn)
{
        struct bg_proc *list[MAX_BG];
        size_t n = 0;
        for (size_t i = 0; i < MAX_BG; i++)
                if (s->bg[i].used)
                        list[n++] = &s->bg[i];
        qsort(list, n, sizeof(list[0]), by_id);
        for (size_t i = 0; i < n; i++) {
                struct sess_reply rep = {.kind = SESS_REPLY_PROC, .proc = list[i]->info};
                if (sup_send_reply(conn, &rep, -1) < 0)
                        return;
        }
        struct sess_reply ok = {.kind = SESS_REPLY_OK};
        (void) sup_send_reply(conn, &ok, -1);
}

static int reply_output(int conn, struct bg_proc *b, const struct sess_req *req, psrun_error *err)
{
        if (req->stream != 1 && req->stream != 2)
                return psrun_error_set(err, EINVAL,
                                       "stream: %u is neither stdout (1) nor stderr (2)",
                                       req->stream);
        int i = (int) req->stream - 1;
        drain_stream(b, i);
        static char buf[SESS_PROC_CHUNK_MAX];
        size_t max = req->max && req->max < sizeof(buf) ? (size_t) req->max : sizeof(buf);
        struct sess_reply rep = {.kind = SESS_REPLY_OK, .proc = b->info};
        size_t n = ring_read(&b->ring[i], req->offset, buf, max, &rep.chunk_offset);
        rep.chunk_len = (uint32_t) n;
        rep.chunk_eof = b->out[i] < 0 && rep.chunk_offset + n >= b->ring[i].total;
        if (sup_send_reply(conn, &rep, -1) == 0 && n > 0)
                (void) send(conn, buf, n, MSG_NOSIGNAL);
        return 0;
}

static int signal_bg(struct supervisor *s, struct bg_proc *b, int sig, psrun_error *err)
{
        if (sig <= 0 || sig >= 65)
                return psrun_error_set(err, EINVAL, "signal: `%d` is not a signal", sig);
        for (size_t i = 0; i < MAX_EXECS && b->running; i++) {
                struct exec_slot *e = &s->execs[i];
                if (!e->used || e->bg != b)
                        continue;
                /* SIGKILL: the whole process tree, by its cgroup. */
                if (sig == SIGKILL)
                        s->backend->kill_exec(s, e);
                else
                        s->backend->signal_exec(s, e, sig);
                return 0;
        }
        return psrun_error_set(err, ESRCH, "process: background process %u has already ended",
                               b->info.id);
}

/* Answers and closes conn, or keeps it as the process's waiter (told OK
 * at once, RESULT at the end). */
void sup_proc_request(struct supervisor *s, int conn, const struct sess_req *req)
{
        psrun_error err = {0};
        int r = 0;
        if (req->op == SESS_OP_PROC_LIST) {
                reply_list(s, conn);
                safe_close(conn);
                return;
        }
        struct bg_proc *b = find_bg(s, req->proc_id);
        if (!b) {
                r = psrun_error_set(&err, ENOENT,
                                    "process: no background process %u in this session",
                                    req->proc_id);
        } else if (req->op == SESS_OP_PROC_OUTPUT) {
                r = reply_output(conn, b, req, &err);
        } else if (req->op == SESS_OP_PROC_SIGNAL) {
                r = signal_bg(s, b, req->sig, &err);
                if (r == 0) {
                        struct sess_reply ok = {.kind = SESS_REPLY_OK, .proc = b->info};
                        (void) sup_send_reply(conn, &ok, -1);
                }
        } else if (req->op == SESS_OP_PROC_WAIT && b->running) {
                int w = 0;
                while (w < BG_WAITERS && b->waiter[w] >= 0)
                        w++;
                if (w == BG_WAITERS) {
                        r = psrun_error_set(&err, EBUSY,
                                            "process: %d waits on background process %u already",
                                            BG_WAITERS, req->proc_id);
                } else {
                        b->waiter[w] = conn;
                        struct sess_reply ok = {.kind = SESS_REPLY_OK, .proc = b->info};
                        (void) sup_send_reply(conn, &ok, -1);
                        return;
                }
        } else if (req->op == SESS_OP_PROC_WAIT) {
                static struct sess_reply rep;
                rep = (struct sess_reply){.kind = SESS_REPLY_RESULT, .pid = b->info.pid};
                rep.result = b->result;
                rep.proc = b->info;
                (void) sup_send_reply(conn, &rep, -1);
        }
        if (r < 0)
                sup_reply_error(conn, &err);
        safe_close(conn);
}

void sup_bg_pollfds(struct supervisor *s, struct pollfd *p)
{
        for (size_t i = 0; i < MAX_BG; i++) {
                struct bg_proc *b = &s->bg[i];
                p[SUP_BG_FDS * i] = (struct pollfd){b->used ? b->out[0] : -1, POLLIN, 0};
                p[SUP_BG_FDS * i + 1] = (struct pollfd){b->used ? b->out[1] : -1, POLLIN, 0};
                for (int w = 0; w < BG_WAITERS; w++)
                        p[SUP_BG_FDS * i + 2 + w] =
                                (struct pollfd){b->used ? b->waiter[w] : -1, POLLIN, 0};
        }
}

void sup_bg_events(struct supervisor *s, const struct pollfd *p)
{
        for (size_t i = 0; i < MAX_BG; i++) {
                struct bg_proc *b = &s->bg[i];
                if (!b->used)
                        continue;
                if (p[SUP_BG_FDS * i].revents && b->out[0] >= 0)
                        drain_stream(b, 0);
                if (p[SUP_BG_FDS * i + 1].revents && b->out[1] >= 0)
                        drain_stream(b, 1);
                /* A waiter speaks only by going away (its timeout). */
                for (int w = 0; w < BG_WAITERS; w++)
                        if (p[SUP_BG_FDS * i + 2 + w].revents && b->waiter[w] >= 0)
                                b->waiter[w] = safe_close(b->waiter[w]);
        }
}
