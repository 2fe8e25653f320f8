/* SPDX-License-Identifier: MIT */
/*
 * The client half of background processes (include/psrun.h,
 * docs/sessions.md): list, output, signal, wait, each one request to the
 * supervisor (runtime/session/supervisor-bg.c), which holds their state.
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include "common/cleanup.h"
#include "runtime/api-internal.h"
#include "runtime/session/session.h"

static void info_to_public(const struct sess_proc *in, psrun_process_info *out)
{
        *out = (psrun_process_info){
                .id = in->id,
                .pid = in->pid,
                .running = (int) in->running,
                .exit_code = in->exit_code,
                .signal = in->signal,
                .started_unix = in->started_unix,
                .stdout_bytes = in->bytes[0],
                .stderr_bytes = in->bytes[1],
        };
        memcpy(out->command, in->command, sizeof(out->command));
        out->command[sizeof(out->command) - 1] = '\0';
}

PSRUN_PUBLIC int psrun_process_list(psrun_session *s, psrun_process_info **list, size_t *n,
                                    psrun_error *err)
{
        if (!s || !list || !n)
                return psrun_error_set(err, EINVAL, "process: no session or list pointer given");
        *list = NULL;
        *n = 0;
        struct sess_req req = {.op = SESS_OP_PROC_LIST};
        struct sess_reply rep;
        _cleanup_close_ int fd = -1;
        int r = session_call(session_dir(s), &req, NULL, 0, NULL, 0, &rep, NULL, &fd, err);
        if (r < 0)
                return r;
        _cleanup_free_ psrun_process_info *out = NULL;
        size_t count = 0;
        while (rep.kind == SESS_REPLY_PROC) {
                psrun_process_info *grown = realloc(out, (count + 1) * sizeof(*out));
                if (!grown)
                        return psrun_error_errno(err, ENOMEM, "process: list");
                out = grown;
                info_to_public(&rep.proc, &out[count++]);
                r = session_recv_reply(fd, &rep, NULL, err);
                if (r < 0)
                        return psrun_error_errno(err, r == -EPIPE ? ESRCH : -r,
                                                 "process: list: the supervisor went away");
        }
        if (rep.kind != SESS_REPLY_OK)
                return psrun_error_set(err, EPROTO, "process: list: unexpected reply");
        *list = TAKE_PTR(out);
        *n = count;
        return 0;
}

PSRUN_PUBLIC int psrun_process_output(psrun_session *s, uint32_t id, int stream, uint64_t offset,
                                      void *buf, size_t size, psrun_process_chunk *chunk,
                                      psrun_error *err)
{
        if (!s || !chunk || (!buf && size))
                return psrun_error_set(err, EINVAL, "process: no session, buffer or chunk given");
        if (stream != 1 && stream != 2)
                return psrun_error_set(err, EINVAL,
                                       "stream: %d is neither stdout (1) nor stderr (2)", stream);
        memset(chunk, 0, sizeof(*chunk));
        struct sess_req req = {.op = SESS_OP_PROC_OUTPUT,
                               .proc_id = id,
                               .stream = (uint32_t) stream,
                               .offset = offset,
                               .max = size < SESS_PROC_CHUNK_MAX ? size : SESS_PROC_CHUNK_MAX};
        if (size == 0)
                req.max = 1; /* 0 would mean "all there is"; we read none of it */
        struct sess_reply rep;
        _cleanup_close_ int fd = -1;
        int r = session_call(session_dir(s), &req, NULL, 0, NULL, 0, &rep, NULL, &fd, err);
        if (r < 0)
                return r;
        size_t len = size ? rep.chunk_len : 0;
        if (len > size)
                return psrun_error_set(err, EPROTO, "process: output: a too long reply");
        if (rep.chunk_len > 0) {
                _cleanup_free_ char *tmp = malloc(rep.chunk_len);
                if (!tmp)
                        return psrun_error_errno(err, ENOMEM, "process: output");
                ssize_t got = recv(fd, tmp, rep.chunk_len, 0);
                if (got != (ssize_t) rep.chunk_len)
                        return psrun_error_set(err, EPROTO, "process: output: a short reply");
                memcpy(buf, tmp, len);
        }
        chunk->offset = rep.chunk_offset;
        chunk->len = len;
        chunk->eof = size ? (int) rep.chunk_eof : 0;
        chunk->total = rep.proc.bytes[stream - 1];
        return 0;
}

PSRUN_PUBLIC int psrun_process_signal(psrun_session *s, uint32_t id, int sig, psrun_error *err)
{
        if (!s)
                return psrun_error_set(err, EINVAL, "process: no session given");
        if (sig <= 0 || sig >= 65)
                return psrun_error_set(err, EINVAL, "signal: `%d` is not a signal", sig);
        struct sess_req req = {.op = SESS_OP_PROC_SIGNAL, .proc_id = id, .sig = sig};
        struct sess_reply rep;
        return session_call(session_dir(s), &req, NULL, 0, NULL, 0, &rep, NULL, NULL, err);
}

PSRUN_PUBLIC int psrun_process_wait(psrun_session *s, uint32_t id, int64_t timeout_ms,
                                    psrun_exec_result *res, psrun_error *err)
{
        if (!s || !res)
                return psrun_error_set(err, EINVAL, "process: no session or result given");
        memset(res, 0, sizeof(*res));
        struct sess_req req = {.op = SESS_OP_PROC_WAIT, .proc_id = id};
        /* On the heap: with the network's counts it is large. */
        struct sess_reply *rep = calloc(1, sizeof(*rep));
        if (!rep)
                return psrun_error_errno(err, ENOMEM, "process: wait");
        _cleanup_close_ int fd = -1;
        int r = session_call(session_dir(s), &req, NULL, 0, NULL, 0, rep, NULL, &fd, err);
        if (r >= 0 && rep->kind == SESS_REPLY_OK) {
                /* Running: the result comes on this connection at its end. */
                struct pollfd p = {fd, POLLIN, 0};
                int timeout = timeout_ms < 0            ? -1
                              : timeout_ms > 0x7fffffff ? 0x7fffffff
                                                        : (int) timeout_ms;
                do
                        r = poll(&p, 1, timeout);
                while (r < 0 && errno == EINTR);
                if (r == 0)
                        r = psrun_error_set(err, ETIMEDOUT,
                                            "process: background process %u still runs after "
                                            "%lld ms",
                                            id, (long long) timeout_ms);
                else
                        r = session_recv_reply(fd, rep, NULL, err);
                if (r == -EPIPE)
                        r = psrun_error_set(err, ESRCH,
                                            "process: the session ended before the process did");
        }
        if (r >= 0 && rep->kind != SESS_REPLY_RESULT)
                r = psrun_error_set(err, EPROTO, "process: wait: unexpected reply");
        if (r >= 0) {
                result_to_public(&rep->result, &res->result);
                session_result_layers(&rep->result, res);
        }
        free(rep);
        return r < 0 ? r : 0;
}
