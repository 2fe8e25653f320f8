/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The MCP server's protocol layer (docs/mcp.md): JSON-RPC 2.0 messages in,
 * one response line out, both protocol eras (the initialize handshake of
 * 2025-03-26 .. 2025-11-25 and the stateless 2026-07-28 revision), the tool
 * table and the checking of tool arguments. Pure: it never touches a
 * sandbox itself; the tools run through a backend (cli/mcp/server.c, or a fake in
 * the unit tests).
 */

#include <stdbool.h>
#include <stdio.h>

#include "cli/mcp/json.h"
#include "common/error.h"

#define MCP_STATELESS_VERSION "2026-07-28"
#define MCP_LATEST_LEGACY     "2025-11-25"
#define MCP_META_VERSION      "io.modelcontextprotocol/protocolVersion"
#define MCP_META_CLIENT_CAPS  "io.modelcontextprotocol/clientCapabilities"
#define MCP_META_SERVER_INFO  "io.modelcontextprotocol/serverInfo"

/* JSON-RPC and MCP error codes. */
enum {
        MCP_PARSE_ERROR = -32700,
        MCP_INVALID_REQUEST = -32600,
        MCP_METHOD_NOT_FOUND = -32601,
        MCP_INVALID_PARAMS = -32602,
        MCP_INTERNAL_ERROR = -32603,
        MCP_UNSUPPORTED_VERSION = -32022,
};

enum mcp_tool {
        MCP_TOOL_EXEC,
        MCP_TOOL_READ_FILE,
        MCP_TOOL_WRITE_FILE,
        MCP_TOOL_LIST_FILES,
        MCP_TOOL_INSTALL,
        MCP_TOOL_CREATE,
        MCP_TOOL_DESTROY,
        MCP_TOOL_PROCESS_LIST,
        MCP_TOOL_PROCESS_OUTPUT,
        MCP_TOOL_PROCESS_KILL,
        MCP_TOOL_PROCESS_WAIT,
        MCP_N_TOOLS,
};

struct mcp_call {
        enum mcp_tool tool;
        const struct mj *args;           /* an object (maybe empty), checked against the table */
        const struct mj *id;             /* the request's id */
        const struct mj *progress_token; /* params._meta.progressToken, NULL if none */
};

/*
 * What the server returns to a model is bounded in bytes as JSON (docs/mcp.md,
 * "Bounds"): each text content item at most MCP_TEXT_MAX (the tools keep
 * under it; past it proto.c cuts with a marker), a sandbox_read_file part at
 * most MCP_READ_MAX bytes of the file, a listing at most MCP_LIST_MAX
 * entries.
 */
#define MCP_TEXT_MAX      (4U << 20)
#define MCP_READ_MAX      (256U << 10)
#define MCP_READ_MAX_TEXT "262144 bytes"
#define MCP_OFFSET_MAX    9007199254740991.0 /* 2^53 - 1: exact as a JSON number */
#define MCP_LIST_MAX      1000
#define MCP_LIST_MAX_TEXT "1000"
#define MCP_MORE_TEXT     2   /* text content items after the first */
#define MCP_WAIT_MAX      600 /* sandbox_process_wait's timeout, in seconds, at most */

/* What a tool returns: text for the model, one JSON object for programs.
 * psrun's own words go first (text); what the sandbox wrote (a command's
 * stdout and stderr, a file) in items of their own (more), so that it
 * cannot pass for psrun's. */
struct mcp_tool_out {
        FILE *text;                /* the first text content item */
        FILE *more[MCP_MORE_TEXT]; /* more items, in order; left empty: none */
        FILE *structured;          /* one JSON object (structuredContent) */
        bool is_error;             /* the command or file operation failed */
};

struct mcp_backend {
        void *userdata;
        /* 0: out is filled (is_error or not). -EINVAL: the arguments are
         * wrong (JSON-RPC -32602 with err's message); other -errno: -32603. */
        int (*call)(void *userdata, const struct mcp_call *call, struct mcp_tool_out *out,
                    psrun_error *err);
        /* Has the client cancelled the request with this id? Then it gets
         * no answer: the 2026-07-28 stdio binding says a server MUST NOT
         * send anything more for a cancelled request (2025: SHOULD NOT).
         * Asked before a request runs and after a tool returns. NULL: no
         * request is ever cancelled. */
        bool (*cancelled)(void *userdata, const struct mj *id);
};

struct mcp_server {
        struct mcp_backend backend;
        const char *version;     /* serverInfo.version */
        const char *limits_note; /* ends sandbox_exec's and install's descriptions; NULL: none */
        bool initialized;        /* notifications/initialized seen */
        char legacy_version[16]; /* what initialize negotiated, "" before */
};

const char *mcp_tool_name(enum mcp_tool tool);

/* Handle one message (a line, without its newline). Writes at most one
 * response line to out; notifications get none. Returns 0, or -errno when
 * out could not be written. */
int mcp_handle_message(struct mcp_server *s, const char *msg, size_t len, FILE *out);

/* For the reader thread: is msg a notifications/cancelled? Then 1, with
 * *request_id set to the raw JSON text of its requestId (malloc'd). */
int mcp_cancel_request_id(const char *msg, size_t len, char **request_id);

/* A notifications/progress line for token (a raw JSON value). */
void mcp_write_progress(FILE *out, const struct mj *token, unsigned long long progress,
                        const char *message, size_t message_len);
