/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Sessions (docs/sessions.md): a long-lived sandbox whose plan comes from a
 * policy, with one supervisor process per session answering a control
 * socket in the session's state directory:
 *
 *   <root>/<id>/lock      flock'ed by the supervisor for its whole life:
 *                         free means the supervisor is dead (`psrun gc`)
 *   <root>/<id>/info      "key value" lines: pid, created, cgroups (for gc)
 *   <root>/<id>/control   SOCK_SEQPACKET, mode 0600 in a 0700 dir of the
 *                         supervisor's user, who alone (and root) may talk
 *                         to it (SO_PEERCRED)
 *
 * One connection per request. A request is one message (struct sess_req and
 * its strings), with fds by SCM_RIGHTS; the replies are struct sess_reply.
 * An exec's connection stays open until its result: closing it kills the
 * exec; SESS_OP_SIGNAL on it signals the exec.
 *
 * Both start with struct sess_hdr, the one layout every version keeps: a
 * client and a supervisor of different psrun builds (a session made by an
 * older psrun, used through a newer libpsrun) must say so instead of
 * misreading each other's structs. A supervisor answers a request of
 * another version with its header alone; either side turns a header of
 * another version into one line naming both (session_check_hdr).
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/error.h"
#include "policy/policy.h"
#include "runtime/result.h"

#define SESSION_ROOT_DEFAULT "/run/psrun-sessions"
#define SESSION_ROOT_ENV     "PSRUN_SESSION_ROOT"
#define SESSION_ID_MAX       64
#define SESSION_MSG_MAX      (192 * 1024) /* argv + env + cwd of one exec */

/* "PSSN" in the first four bytes; protocol 1 was the unversioned one,
 * whose structs began with op and kind. Bump the version whenever struct
 * sess_req, struct sess_reply or what they carry (struct run_result,
 * psrun_error) change. */
#define SESS_PROTO_MAGIC   0x4e535350U
#define SESS_PROTO_VERSION 5

struct sess_hdr {
        uint32_t magic;
        uint32_t version;
        uint32_t size; /* of the sender's struct: sess_req or sess_reply */
        uint32_t reserved;
};

enum sess_op {
        SESS_OP_EXEC = 1,      /* fds: stdin, stdout, stderr */
        SESS_OP_SIGNAL = 2,    /* on an exec's connection */
        SESS_OP_WORKSPACE = 3, /* reply: an O_PATH fd of /workspace */
        SESS_OP_DESTROY = 4,
        SESS_OP_INFO = 5,
        SESS_OP_INSTALL = 6, /* an exec of the installer: fds and replies as EXEC */
        /* The payload: the path (path_len bytes and a NUL), then data_len
         * bytes of data, or none and a memfd holding them (fd 0). Done by
         * the supervisor's file writer, in the session's cgroup. */
        SESS_OP_WRITE = 7,
        /* Background processes (docs/sessions.md): an EXEC with
         * SESS_REQ_BACKGROUND has no fds and one reply (STARTED, proc_id);
         * the others name it by proc_id. */
        SESS_OP_PROC_LIST = 8,    /* replies: one PROC each, then OK */
        SESS_OP_PROC_OUTPUT = 9,  /* stream, offset, max: OK, then the bytes in one message */
        SESS_OP_PROC_SIGNAL = 10, /* sig */
        SESS_OP_PROC_WAIT = 11,   /* RESULT when it has ended (the connection waits) */
        /* A rootless session's file operations (files_remote), done by the
         * file writer in the sandbox's user namespace; the payload is the
         * path (path_len bytes and a NUL). READ: OK with an fd of the
         * regular file, open for reading. LIST (SESS_REQ_RECURSIVE; max:
         * entries, offset: bytes of names): OK with a memfd of list_n
         * entries (ws_listing_write). REMOVE: OK. */
        SESS_OP_READ = 12,
        SESS_OP_LIST = 13,
        SESS_OP_REMOVE = 14,
};

/* The most data a WRITE carries in its message; more comes in a memfd. */
#define SESS_WRITE_INLINE_MAX (64 * 1024)

/* sess_req.flags */
#define SESS_REQ_APPROVED   1U /* INSTALL: the embedder's approver said yes */
#define SESS_REQ_BACKGROUND 2U /* EXEC: a background process */
#define SESS_REQ_RECURSIVE  4U /* LIST */

/* The most bytes one PROC_OUTPUT reply carries. */
#define SESS_PROC_CHUNK_MAX (64 * 1024)

struct sess_req {
        struct sess_hdr h; /* filled in by session_call and psrun_exec_signal */
        uint32_t op;
        uint32_t argc;       /* EXEC: strings after the header: cwd, argv..., env... */
        uint32_t envc;       /* NAME=value additions */
        int32_t sig;         /* SIGNAL */
        uint64_t timeout_ms; /* EXEC, INSTALL: 0: the policy's */
        uint32_t tool;       /* INSTALL: enum install_tool; the payload is the spec */
        uint32_t flags;      /* SESS_REQ_* */
        uint32_t mode;       /* WRITE: the file's permission bits */
        uint32_t path_len;   /* WRITE */
        uint64_t data_len;   /* WRITE */
        uint32_t proc_id;    /* PROC_*: the background process */
        uint32_t stream;     /* PROC_OUTPUT: 1 stdout, 2 stderr */
        uint64_t offset;     /* PROC_OUTPUT: the first byte wanted */
        uint64_t max;        /* PROC_OUTPUT: at most this many (and SESS_PROC_CHUNK_MAX) */
};

enum sess_reply_kind {
        SESS_REPLY_OK = 1,      /* WORKSPACE (with the fd), DESTROY, INFO */
        SESS_REPLY_STARTED = 2, /* EXEC: the command's pid (in the supervisor's view) */
        SESS_REPLY_RESULT = 3,  /* EXEC: the end */
        SESS_REPLY_ERROR = 4,   /* err holds the message */
        SESS_REPLY_PROC = 5,    /* PROC_LIST: one background process */
};

/* A background process as PROC_LIST, PROC_OUTPUT and STARTED tell it. */
struct sess_proc {
        uint32_t id;
        int32_t pid; /* in the sandbox's pid namespace */
        uint32_t running;
        int32_t exit_code, signal; /* once it has ended */
        uint64_t started_unix;
        uint64_t bytes[2]; /* written so far to stdout, stderr */
        char command[128]; /* argv, space-separated, cut */
};

struct sess_reply {
        struct sess_hdr h; /* filled in by the supervisor's sup_send_reply */
        uint32_t kind;
        int32_t pid;
        struct run_result result;
        psrun_error err;
        struct sess_proc proc; /* PROC, OUTPUT, a background STARTED */
        /* PROC_OUTPUT: the bytes that follow start at chunk_offset (past
         * the requested offset when those were dropped from the middle),
         * chunk_len of them; chunk_eof: the stream is closed and nothing
         * is left from there. */
        uint64_t chunk_offset;
        uint32_t chunk_len, chunk_eof;
        /* INFO / WORKSPACE */
        uint32_t uid, gid; /* host ids of the sandbox user */
        uint64_t disk_limit;
        uint64_t output_limit;
        uint64_t created_unix;
        uint32_t running_execs;
        uint32_t approve;                  /* the policy's gated actions (POLICY_ACTION_*) */
        uint32_t network, install_network; /* enum policy_network */
        /* WORKSPACE: file operations go through READ, LIST, REMOVE and
         * WRITE, not the fd (a rootless session's) */
        uint32_t files_remote;
        /* LIST */
        uint32_t list_truncated;
        uint64_t list_n;
        /* INFO: the policy's pip_index_url and npm_registry ("": the
         * tool's default), for what an approver is shown. */
        char pip_index_url[POLICY_URL_MAX + 1];
        char npm_registry[POLICY_URL_MAX + 1];
};

/* This build's header for a struct of size bytes. */
void session_hdr_init(struct sess_hdr *h, size_t size);
/* Whether the n bytes at buf begin with this build's header for a struct
 * of size bytes: 0, or -EPROTONOSUPPORT naming both versions ("the
 * session's supervisor speaks session protocol 1, this psrun 2 ...";
 * from_supervisor: who sent it, for the message), or -EPROTO for what is
 * no header at all. */
int session_check_hdr(const void *buf, size_t n, size_t size, bool from_supervisor,
                      psrun_error *err);

/* Ids: 1-64 of [A-Za-z0-9_.-], not starting with '.' or '-'. */
int session_id_valid(const char *id);
/* The sessions' root (runtime/session/root.c): the given one,
 * $PSRUN_SESSION_ROOT, root's SESSION_ROOT_DEFAULT or a user's
 * $XDG_RUNTIME_DIR/psrun/sessions, into *ret (allocated). It must be a
 * directory of the caller's that nobody else can write, not a symbolic
 * link (nor, for a user's, its psrun/ or $XDG_RUNTIME_DIR); with create
 * it is made (0700) where missing. 1: there and sound, 0: absent (not
 * create), else -errno with the line naming the directory. */
int session_root_open(const char *given, bool create, char **ret, psrun_error *err);

/* Unlink every file of a state directory (psrun's own: 0700, root's). */
void session_remove_files(int dir_fd);

/* Start the supervisor of a new session (a grandchild that outlives the
 * caller) in root (checked by session_root_open) and wait until it answers
 * or fails. tie_fd: a pidfd whose exit
 * destroys the session, or -1. */
int session_spawn(const struct policy *policy, const char *root, const char *id,
                  const char *cgroup_parent, int tie_fd, psrun_error *err);
