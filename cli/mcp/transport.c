/* SPDX-License-Identifier: MIT */
/*
 * `psrun mcp`'s transport (docs/mcp.md, "Transport"): a reader thread takes
 * lines from stdin and queues them; workers (started as needed, up to
 * MAX_WORKERS) handle them at once, each writing its answer as one whole
 * line under out_lock, so answers come in any order, each with its id. A
 * notifications/cancelled is the reader's own: it raises the stop flag of
 * the request it names, which that request's exec, install or file write
 * acts on within 50 ms. A heartbeat thread sends notifications/progress
 * for every request that carries a progress token and has said nothing for
 * cfg.progress_ms, so that a client resetting its timeout on progress
 * survives a silent command.
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/mcp/server.h"
#include "common/cleanup.h"

static __thread struct job *current_job;

struct job *mcp_current_job(void)
{
        return current_job;
}

static uint64_t now_ms(void)
{
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t) ts.tv_sec * 1000 + (uint64_t) ts.tv_nsec / 1000000;
}

/* ---- cancellation (srv->lock held) ---- */

static void drop_first_cancel(struct server *srv)
{
        struct cancel *c = srv->cancels;
        srv->cancels = c->next;
        if (!srv->cancels)
                srv->cancels_tail = &srv->cancels;
        srv->n_cancels--;
        free(c);
}

/* The oldest line not yet answered (read_seq + 1 when all are). */
static uint64_t oldest_pending_locked(const struct server *srv)
{
        uint64_t min = srv->head ? srv->head->seq : srv->read_seq + 1;
        for (const struct job *j = srv->jobs; j; j = j->next)
                if (j->seq < min)
                        min = j->seq;
        return min;
}

/* Is the request with this id (raw JSON) cancelled? Forgets the cancels
 * that can only name requests already answered. */
static bool cancelled_locked(struct server *srv, const char *id, size_t len)
{
        uint64_t oldest = oldest_pending_locked(srv);
        while (srv->cancels && srv->cancels->upto < oldest)
                drop_first_cancel(srv);
        for (const struct cancel *c = srv->cancels; c; c = c->next)
                if (strlen(c->id) == len && memcmp(c->id, id, len) == 0)
                        return true;
        return false;
}

static void kill_job_locked(struct job *j)
{
        __atomic_store_n(&j->cancelled, 1, __ATOMIC_RELEASE);
        __atomic_store_n(&j->halt, 1, __ATOMIC_RELEASE);
}

static bool backend_cancelled(void *userdata, const struct mj *id)
{
        struct server *srv = userdata;
        pthread_mutex_lock(&srv->lock);
        bool r = cancelled_locked(srv, id->text, id->text_len);
        if (current_job) {
                /* The request is known now: a cancel finds it by its id. */
                if (!current_job->id)
                        current_job->id = strndup(id->text, id->text_len);
                if (r)
                        kill_job_locked(current_job);
        }
        pthread_mutex_unlock(&srv->lock);
        return r;
}

/* notifications/cancelled: stop the exec, install or file write of the
 * request it names if that one is running (its halt flag, which the
 * waiter looks at: no other thread touches its handle), and remember the
 * cancel so that the request gets no answer (proto.h) and, if still
 * queued, does not run. */
static void cancel(struct server *srv, const char *request_id)
{
        pthread_mutex_lock(&srv->lock);
        /* Everything read is answered: it names nothing in progress. */
        if (oldest_pending_locked(srv) > srv->read_seq)
                goto out;
        for (struct job *j = srv->jobs; j; j = j->next)
                if (j->id && strcmp(j->id, request_id) == 0)
                        kill_job_locked(j);
        pthread_cond_broadcast(&srv->changed); /* a job waiting for a slot */
        size_t len = strlen(request_id);
        struct cancel *c = malloc(sizeof(*c) + len + 1);
        if (!c) {
                fprintf(stderr, "psrun: mcp: out of memory for a cancel\n");
                goto out;
        }
        c->next = NULL;
        c->upto = srv->read_seq;
        memcpy(c->id, request_id, len + 1);
        *srv->cancels_tail = c;
        srv->cancels_tail = &c->next;
        if (++srv->n_cancels > MAX_CANCELS)
                drop_first_cancel(srv);
out:
        pthread_mutex_unlock(&srv->lock);
}

/* ---- exec slots ---- */

int mcp_slot_get(struct server *srv, struct sandbox *sb)
{
        struct job *j = current_job;
        int r = 0;
        pthread_mutex_lock(&srv->lock);
        for (;;) {
                if (j && j->cancelled) {
                        r = -ECANCELED;
                        break;
                }
                if (sb->dead) {
                        r = -ESRCH;
                        break;
                }
                if (sb->running < srv->cfg.max_execs) {
                        sb->running++;
                        break;
                }
                pthread_cond_wait(&srv->changed, &srv->lock);
        }
        pthread_mutex_unlock(&srv->lock);
        return r;
}

void mcp_slot_put(struct server *srv, struct sandbox *sb)
{
        pthread_mutex_lock(&srv->lock);
        sb->running--;
        pthread_cond_broadcast(&srv->changed);
        pthread_mutex_unlock(&srv->lock);
}

/* ---- progress ---- */

/* One progress line for j: out_lock held by the caller. */
static void job_progress_locked(struct server *srv, struct job *j, const char *msg, size_t len)
{
        pthread_mutex_lock(&srv->lock);
        bool send = j->token && !j->cancelled;
        unsigned long long n = send ? ++j->progress : 0;
        const struct mj *token = j->token;
        if (send)
                j->last_progress_ms = now_ms();
        pthread_mutex_unlock(&srv->lock);
        if (send)
                mcp_write_progress(srv->out, token, n, msg, len);
}

void mcp_job_progress(struct server *srv, const char *message, size_t len)
{
        if (!current_job)
                return;
        pthread_mutex_lock(&srv->out_lock);
        job_progress_locked(srv, current_job, message, len);
        pthread_mutex_unlock(&srv->out_lock);
}

/* Every request with a progress token that has been silent for
 * progress_ms gets a "still running" notification. */
static void *heartbeat(void *arg)
{
        struct server *srv = arg;
        uint64_t tick = srv->cfg.progress_ms / 4;
        if (tick < 50)
                tick = 50;
        if (tick > 1000)
                tick = 1000;
        pthread_mutex_lock(&srv->lock);
        while (!srv->eof || srv->jobs || srv->head) {
                struct timespec ts;
                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_sec += (time_t) (tick / 1000);
                ts.tv_nsec += (long) (tick % 1000) * 1000000;
                if (ts.tv_nsec >= 1000000000) {
                        ts.tv_sec++;
                        ts.tv_nsec -= 1000000000;
                }
                pthread_cond_timedwait(&srv->cond, &srv->lock, &ts);
                bool due = false;
                uint64_t now = now_ms();
                for (const struct job *j = srv->jobs; j; j = j->next)
                        due = due || (j->token && !j->cancelled &&
                                      now - j->last_progress_ms >= srv->cfg.progress_ms);
                if (!due)
                        continue;
                /* Lock order: out_lock first; the jobs stay while a worker
                 * that ends one needs srv->lock to unlink it. */
                pthread_mutex_unlock(&srv->lock);
                pthread_mutex_lock(&srv->out_lock);
                pthread_mutex_lock(&srv->lock);
                now = now_ms();
                for (struct job *j = srv->jobs; j; j = j->next) {
                        if (!j->token || j->cancelled ||
                            now - j->last_progress_ms < srv->cfg.progress_ms)
                                continue;
                        j->last_progress_ms = now;
                        char msg[64];
                        int n = snprintf(msg, sizeof(msg), "still running (%llus)",
                                         (unsigned long long) ((now - j->started_ms) / 1000));
                        mcp_write_progress(srv->out, j->token, ++j->progress, msg, (size_t) n);
                }
                pthread_mutex_unlock(&srv->lock);
                pthread_mutex_unlock(&srv->out_lock);
                pthread_mutex_lock(&srv->lock);
        }
        pthread_mutex_unlock(&srv->lock);
        return NULL;
}

/* ---- workers ---- */

static void *worker(void *arg)
{
        struct server *srv = arg;
        for (;;) {
                pthread_mutex_lock(&srv->lock);
                srv->idle++;
                while (!srv->head && !srv->eof)
                        pthread_cond_wait(&srv->cond, &srv->lock);
                srv->idle--;
                struct line *l = srv->head;
                struct job j = {.seq = l ? l->seq : 0};
                if (l) {
                        srv->head = l->next;
                        if (!srv->head)
                                srv->tail = &srv->head;
                        j.started_ms = j.last_progress_ms = now_ms();
                        j.next = srv->jobs;
                        srv->jobs = &j;
                }
                pthread_mutex_unlock(&srv->lock);
                if (!l)
                        return NULL;
                current_job = &j;
                _cleanup_free_ char *buf = NULL;
                size_t len = 0;
                FILE *mem = open_memstream(&buf, &len);
                int r = mem ? mcp_handle_message(&srv->proto, l->text, l->len, mem) : -ENOMEM;
                if (mem && fclose(mem) != 0)
                        r = -ENOMEM;
                current_job = NULL;
                pthread_mutex_lock(&srv->out_lock);
                if (r == 0 && len && (fwrite(buf, 1, len, srv->out) != len || fflush(srv->out)))
                        r = -EIO;
                pthread_mutex_lock(&srv->lock);
                for (struct job **p = &srv->jobs; *p; p = &(*p)->next)
                        if (*p == &j) {
                                *p = j.next;
                                break;
                        }
                pthread_mutex_unlock(&srv->lock);
                pthread_mutex_unlock(&srv->out_lock);
                free(j.id);
                free(l);
                if (r < 0)
                        fprintf(stderr, "psrun: mcp: stdout: %s\n", strerror(-r));
        }
}

/* Queue a line; start a worker when none is idle. */
static int enqueue(struct server *srv, const char *text, size_t n)
{
        struct line *l = malloc(sizeof(*l) + n + 1);
        if (!l)
                return -ENOMEM;
        l->next = NULL;
        l->len = n;
        memcpy(l->text, text, n);
        l->text[n] = '\0';
        pthread_mutex_lock(&srv->lock);
        l->seq = ++srv->read_seq;
        *srv->tail = l;
        srv->tail = &l->next;
        /* A worker for each queued line that no idle one will take (idle
         * ones may not have woken for the lines before). */
        size_t queued = 0;
        for (const struct line *q = srv->head; q; q = q->next)
                queued++;
        if (queued > srv->idle && srv->n_workers < MAX_WORKERS) {
                int r = pthread_create(&srv->workers[srv->n_workers], NULL, worker, srv);
                if (r == 0)
                        srv->n_workers++;
                else if (srv->n_workers == 0) {
                        pthread_mutex_unlock(&srv->lock);
                        return -r;
                }
        }
        pthread_cond_broadcast(&srv->cond);
        pthread_mutex_unlock(&srv->lock);
        return 0;
}

int mcp_serve(struct server *srv)
{
        srv->proto = (struct mcp_server){
                .backend = {.userdata = srv,
                            .call = mcp_backend_call,
                            .cancelled = backend_cancelled},
                .version = psrun_version(),
                .limits_note = srv->cfg.limits_note[0] ? srv->cfg.limits_note : NULL,
        };
        pthread_t hb;
        int r = pthread_create(&hb, NULL, heartbeat, srv);
        if (r != 0) {
                fprintf(stderr, "psrun: mcp: thread: %s\n", strerror(r));
                return EXIT_PSRUN;
        }
        char *buf = NULL;
        size_t cap = 0;
        ssize_t n;
        while ((n = getline(&buf, &cap, stdin)) >= 0) {
                while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
                        n--;
                if (n == 0)
                        continue;
                _cleanup_free_ char *id = NULL;
                if (mcp_cancel_request_id(buf, (size_t) n, &id) == 1) {
                        cancel(srv, id);
                        continue;
                }
                if ((r = enqueue(srv, buf, (size_t) n)) < 0) {
                        fprintf(stderr, "psrun: mcp: %s\n", strerror(-r));
                        break;
                }
        }
        free(buf);
        /* stdin closed: answer what was asked, then end every sandbox. */
        pthread_mutex_lock(&srv->lock);
        srv->eof = true;
        pthread_cond_broadcast(&srv->cond);
        size_t n_workers = srv->n_workers;
        pthread_mutex_unlock(&srv->lock);
        for (size_t i = 0; i < n_workers; i++)
                pthread_join(srv->workers[i], NULL);
        pthread_mutex_lock(&srv->lock);
        pthread_cond_broadcast(&srv->cond);
        pthread_mutex_unlock(&srv->lock);
        pthread_join(hb, NULL);
        for (struct line *l = srv->head, *next; l; l = next) {
                next = l->next;
                free(l);
        }
        while (srv->cancels)
                drop_first_cancel(srv);
        mcp_sandbox_free(srv->default_sb, true);
        for (size_t i = 0; i < MAX_SANDBOXES; i++)
                mcp_sandbox_free(srv->sandboxes[i], true);
        return 0;
}
