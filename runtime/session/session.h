/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The client half of sessions (docs/sessions.md), in the embedding process:
 * requests over the control socket, handles, execs with captured or
 * streamed output, the approver. What it shares with the supervisor is
 * runtime/session/proto.h alone.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "runtime/session/proto.h"

/* One request, with up to 3 fds; reads the first reply. Returns the
 * connected socket (to read more replies) when keep_fd is set. */
int session_call(const char *dir, const struct sess_req *req, const char *payload,
                 size_t payload_len, const int *fds, int n_fds, struct sess_reply *reply,
                 int *fd_out, int *keep_fd, psrun_error *err);

/* The same without fds back, answered only when done: with *cancel set
 * meanwhile, the connection is shut (the supervisor's side sees the hang-up
 * and stops) and it returns -ECANCELED ("WHAT: cancelled"). */
int session_call_cancellable(const char *dir, const struct sess_req *req, const char *payload,
                             size_t payload_len, const int *fds, int n_fds,
                             struct sess_reply *reply, const int *cancel, const char *what,
                             psrun_error *err);

/* Reads one reply (and an fd passed with it into *fd_out, if asked):
 * -EPIPE at EOF, session_check_hdr's errors for a reply of another
 * version. */
int session_recv_reply(int fd, struct sess_reply *reply, int *fd_out, psrun_error *err);

/* An exec-like request (EXEC, INSTALL) with the options' stdio, output
 * capture and streaming: the handle psrun_exec_start returns. */
struct psrun_session;
struct psrun_exec_handle;
struct psrun_exec_options;
int session_exec_start(struct psrun_session *s, const struct sess_req *req, const char *payload,
                       size_t len, const struct psrun_exec_options *o,
                       struct psrun_exec_handle **ret, psrun_error *err);

/* An exec's result's layers (and a rootless session's, rootless) from the
 * supervisor's reply into the public result. */
struct run_result;
typedef struct psrun_exec_result psrun_exec_result;
void session_result_layers(const struct run_result *r, psrun_exec_result *res);

/* The state directory of a handle's session, and its approver. */
const char *session_dir(const struct psrun_session *s);
struct psrun_approval;
typedef int (*session_approve_fn)(void *userdata, struct psrun_approval *approval);
session_approve_fn session_approver(const struct psrun_session *s, void **userdata);

/* Whether the supervisor of the session in dir is alive (its lock held). */
int session_alive(const char *dir);
/* Remove what a dead supervisor left: cgroups and networks named in
 * info, the dir. */
int session_reap(const char *dir, psrun_error *err);
