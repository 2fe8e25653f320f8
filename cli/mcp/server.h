/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * `psrun mcp`'s server state, shared by its tools (cli/mcp/server.c) and its
 * transport (cli/mcp/transport.c: the reader, the workers that run requests
 * at once, cancellation and the progress heartbeat).
 *
 * Locks: out_lock serializes whole lines on stdout (a response, a progress
 * notification); lock guards everything else here (the sandboxes, the
 * queue, the jobs, the cancels). Order: out_lock, then lock; lock is never
 * held while writing, so the reader thread never waits for the client.
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <psrun.h>

#include "cli/approve.h"
#include "cli/mcp/json.h"
#include "cli/mcp/proto.h"

#define MAX_SANDBOXES        32    /* made by sandbox_create, alive at once */
#define MAX_WORKERS          64    /* requests handled at once */
#define MAX_CANCELS          1024  /* pending at once; past that the oldest are forgotten */
#define EXECS_DEFAULT        4     /* --max-execs: execs at once per sandbox */
#define PROGRESS_DEFAULT_MS  5000  /* --progress-interval */
#define RESULT_CHARS_DEFAULT 30000 /* --max-result-chars */

struct source {
        const char *file;      /* --policy FILE, or */
        const char *key_value; /* -o KEY=VALUE */
};

struct config {
        struct source *sources;
        size_t n_sources;
        const char **allowed; /* --allow-override KEY */
        size_t n_allowed;
        struct approve_cmd approve; /* --approve-cmd; cmd NULL: no approver */
        unsigned max_execs;         /* --max-execs */
        uint64_t progress_ms;       /* --progress-interval */
        size_t result_chars;        /* --max-result-chars: a stream's text for the model */
        char limits_note[320];      /* the effective limits, for the tool descriptions */
};

struct sandbox {
        char handle[33]; /* "" for the default sandbox */
        psrun_session *session;
        psrun_policy *policy; /* what it was made with: limits in messages, exec timeouts */
        unsigned refs;        /* calls using it (srv->lock) */
        unsigned running;     /* execs and installs running in it */
        bool dead;            /* out of the table: freed (destroyed) at the last put */
};

/* A request a worker is handling. */
struct job {
        struct job *next;
        uint64_t seq;                /* its line's number */
        char *id;                    /* the raw JSON of its id; NULL until known */
        const struct mj *token;      /* _meta.progressToken during a tools/call */
        struct sandbox *sb;          /* the sandbox its tool picked */
        int cancelled;               /* no more output for it, progress neither */
        int halt;                    /* its exec, install or file write stops (their cancel
                                      * flag): set atomically, by a cancel or a destroy */
        unsigned long long progress; /* the last progress number sent */
        uint64_t last_progress_ms;   /* when (CLOCK_MONOTONIC) */
        uint64_t started_ms;
};

struct line {
        struct line *next;
        uint64_t seq;
        size_t len;
        char text[];
};

/*
 * A notifications/cancelled naming a request that may still be queued or
 * running. That request was read before the cancel, so its line is at most
 * `upto`: once every line up to it is answered, the entry can go.
 */
struct cancel {
        struct cancel *next;
        uint64_t upto;
        char id[]; /* the raw JSON of the request's id */
};

struct server {
        struct config cfg;
        struct sandbox *default_sb;
        struct sandbox *sandboxes[MAX_SANDBOXES];
        FILE *out;

        pthread_mutex_t lock, out_lock;
        pthread_mutex_t create_lock; /* making the default sandbox */
        pthread_cond_t cond;         /* the queue, and the heartbeat's end */
        pthread_cond_t changed;      /* a sandbox's slot or refs, a cancel */

        struct job *jobs;
        struct cancel *cancels, **cancels_tail;
        size_t n_cancels;

        /* The request queue, reader -> workers. read_seq is the last line
         * read. */
        struct line *head, **tail;
        uint64_t read_seq;
        bool eof;
        pthread_t workers[MAX_WORKERS];
        size_t n_workers, idle;

        struct mcp_server proto;
};

/* The transport (transport.c). */
int mcp_serve(struct server *srv);
/* The job of the calling worker thread. */
struct job *mcp_current_job(void);
/* A progress notification for the calling thread's request, unless it has
 * no token or was cancelled. */
void mcp_job_progress(struct server *srv, const char *message, size_t len);
/* Wait for one of the sandbox's exec slots (cfg.max_execs): 0, or -ECANCELED
 * (the request was cancelled) or -ESRCH (the sandbox was destroyed). */
int mcp_slot_get(struct server *srv, struct sandbox *sb);
void mcp_slot_put(struct server *srv, struct sandbox *sb);

/* The tools (server.c). */
int mcp_backend_call(void *userdata, const struct mcp_call *call, struct mcp_tool_out *out,
                     psrun_error *err);
void mcp_sandbox_put(struct server *srv, struct sandbox *sb);
void mcp_sandbox_free(struct sandbox *sb, bool destroy);

/* For the tools in process.c (server.c's helpers). */
typedef int (*mcp_tool_fn)(struct server *srv, const struct mcp_call *call,
                           struct mcp_tool_out *out, psrun_error *err);
/* An isError result with this text; returns 0. */
__attribute__((format(printf, 2, 3))) int tool_error(struct mcp_tool_out *out, const char *fmt,
                                                     ...);
/* The sandbox a call's `handle` names, or the default one, held for the
 * call; NULL after writing an error result. */
struct sandbox *pick_sandbox(struct server *srv, const struct mcp_call *call,
                             struct mcp_tool_out *out);
/* A session-API error as a result (an ended sandbox said so); returns 0. */
int session_error(struct server *srv, struct sandbox *sb, struct mcp_tool_out *out,
                  const char *what, const psrun_error *err);
/* How many bytes at the end of data only begin a UTF-8 character. */
size_t split_character(const char *data, size_t len);

/* The calling request's stop flag (struct job): what its exec, install or
 * file write looks at, set by a cancel and by the sandbox's destroy; NULL
 * outside a request. */
const int *mcp_halt_flag(void);

/* The file tools (files.c), by enum mcp_tool; NULL for the others. */
extern const mcp_tool_fn mcp_file_tools[MCP_N_TOOLS];

/* Background processes (process.c). */
int mcp_exec_background(struct server *srv, struct sandbox *sb, char *const argv[],
                        const psrun_exec_options *o, struct mcp_tool_out *out);
/* The process tools, by enum mcp_tool; NULL for the others. */
extern const mcp_tool_fn mcp_process_tools[MCP_N_TOOLS];
