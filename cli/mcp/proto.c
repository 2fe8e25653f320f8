/* SPDX-License-Identifier: MIT */
#include "cli/mcp/proto.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/json.h"

/* Newest first: what server/discover and the -32022 error list. */
static const char *const supported_versions[] = {
        MCP_STATELESS_VERSION, "2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05",
};
#define N_VERSIONS   (sizeof(supported_versions) / sizeof(supported_versions[0]))
#define FIRST_LEGACY 1

static const char instructions[] =
        "Each tool runs in a psrun sandbox: no network unless the server's policy allows it, "
        "a read-only root, a writable /workspace that persists between calls of one sandbox. "
        "Without `handle` the tools share one default sandbox, created on first use. "
        "sandbox_create returns a handle for a separate sandbox; it lives until "
        "sandbox_destroy or until the server exits.";

struct request {
        const struct mj *msg, *id, *params;
        bool stateless;      /* the 2026-07-28 era: resultType on every result */
        const char *version; /* the revision it is answered in */
};

/*
 * What a revision's schema has, for a tools-only server: 2025-03-26 added
 * tool annotations and `instructions`; 2025-06-18 tool and server `title`,
 * `outputSchema` and `structuredContent`. An older client gets none of
 * what its revision lacks. (Dates compare as strings.)
 */
static bool since(const struct request *rq, const char *revision)
{
        return strcmp(rq->version, revision) >= 0;
}
#define HAS_ANNOTATIONS(rq) since(rq, "2025-03-26")
#define HAS_STRUCTURED(rq)  since(rq, "2025-06-18")

/* ---- the tool table: the order of tools/list ---- */

enum arg_type { ARG_STRING, ARG_NUMBER, ARG_INTEGER, ARG_OBJECT, ARG_BOOLEAN };

struct tool_arg {
        const char *name;
        enum arg_type type;
        bool required;
        const char *description;
        const char *const *choices; /* ARG_STRING: the allowed values, NULL: any */
        double min, max;            /* ARG_INTEGER: the range, both included */
};

#define MAX_ARGS 5
/* The tool annotations (2025-03-26 on), as they hold for psrun's tools. */
enum {
        HINT_READ_ONLY = 1,   /* changes nothing */
        HINT_DESTRUCTIVE = 2, /* may remove or replace what is there */
        HINT_IDEMPOTENT = 4,  /* calling it again with the same arguments adds nothing */
        HINT_OPEN_WORLD = 8,  /* may reach beyond the sandbox (the network, when the policy
                               * allows it) */
};

struct tool_def {
        const char *name;
        const char *title;
        const char *description;
        struct tool_arg args[MAX_ARGS];
        unsigned hints;
        bool limits; /* the description ends with the server's limits_note */
};

static const char *const encodings[] = {"utf-8", "base64", NULL};
static const char *const installers[] = {"python", "node", NULL};
static const char *const stream_names[] = {"stdout", "stderr", NULL};
/* What sandbox_process_kill sends (cli/mcp/process.c maps them). */
static const char *const signal_names[] = {"TERM", "KILL", "INT",  "HUP",
                                           "QUIT", "USR1", "USR2", NULL};

#define HANDLE_ARG                                                                                 \
        {                                                                                          \
                "handle", ARG_STRING, false,                                                       \
                        "a sandbox from sandbox_create; omitted: the default sandbox", NULL        \
        }

static const struct tool_def tools[MCP_N_TOOLS] = {
        [MCP_TOOL_EXEC] = {"sandbox_exec",
                           "Run a shell command",
                           "Run a command with /bin/sh -c in the sandbox (cwd /workspace) and "
                           "return its stdout, stderr, exit code and duration. A command that "
                           "runs past its timeout is killed with all its children. With "
                           "`background: true` it returns its process id at once and runs on "
                           "(stdin /dev/null; the next sandbox_exec reaches a server it started "
                           "over 127.0.0.1) until it ends, is killed, times out or the sandbox "
                           "is destroyed.",
                           {{"command", ARG_STRING, true, "the shell command", NULL},
                            {"timeout", ARG_NUMBER, false,
                             "seconds before the command is killed (default: the policy's)", NULL},
                            {"background", ARG_BOOLEAN, false,
                             "true: start it in the background and return its process id at once "
                             "(a server, a watcher); read it with sandbox_process_output, stop it "
                             "with sandbox_process_kill. At most the policy's background_limit "
                             "run at once",
                             NULL},
                            HANDLE_ARG},
                           HINT_DESTRUCTIVE | HINT_OPEN_WORLD,
                           true},
        [MCP_TOOL_READ_FILE] =
                {"sandbox_read_file",
                 "Read a file",
                 "Read a file of the sandbox's /workspace, or a part of it: "
                 "at most " MCP_READ_MAX_TEXT " per call; a longer file is "
                 "read in parts with `offset`. A first content item says "
                 "what is shown; the next one is the file's bytes, as UTF-8 "
                 "text or, for a binary file, base64.",
                 {{"file_path", ARG_STRING, true, "relative to /workspace, or absolute under it",
                   NULL},
                  {"offset", ARG_INTEGER, false, "the byte to start at (default 0)", NULL, 0,
                   MCP_OFFSET_MAX},
                  {"length", ARG_INTEGER, false,
                   "how many bytes to read at most (default and maximum " MCP_READ_MAX_TEXT ")",
                   NULL, 1, MCP_READ_MAX},
                  HANDLE_ARG},
                 HINT_READ_ONLY | HINT_IDEMPOTENT},
        [MCP_TOOL_WRITE_FILE] = {"sandbox_write_file",
                                 "Write a file",
                                 "Create or replace a file under /workspace (parent directories "
                                 "are created).",
                                 {{"file_path", ARG_STRING, true,
                                   "relative to /workspace, or absolute under it", NULL},
                                  {"content", ARG_STRING, true, "the file's content", NULL},
                                  {"encoding", ARG_STRING, false,
                                   "how content is encoded: utf-8 (default) or base64", encodings},
                                  HANDLE_ARG},
                                 HINT_DESTRUCTIVE | HINT_IDEMPOTENT},
        [MCP_TOOL_LIST_FILES] = {"sandbox_list_files",
                                 "List files",
                                 "List a directory of the sandbox's /workspace: one line per "
                                 "entry with its type and size, names escaped (\\n, \\xHH). "
                                 "At most " MCP_LIST_MAX_TEXT " entries: list a subdirectory "
                                 "to see more of a large tree.",
                                 {{"directory", ARG_STRING, false, "default /workspace", NULL},
                                  HANDLE_ARG},
                                 HINT_READ_ONLY | HINT_IDEMPOTENT},
        [MCP_TOOL_INSTALL] = {"sandbox_install_package",
                              "Install a package",
                              "Install one package into the sandbox's /workspace: python with "
                              "pip (importable by the next sandbox_exec), node with npm "
                              "(require() finds it). The install runs with the server's "
                              "install network; the sandbox's own commands keep theirs. It may "
                              "need the operator's approval.",
                              {{"package", ARG_STRING, true,
                                "one package with an optional version, e.g. requests==2.31 or "
                                "lodash@^4",
                                NULL},
                               {"tool", ARG_STRING, false, "python (default) or node", installers},
                               HANDLE_ARG},
                              HINT_OPEN_WORLD,
                              true},
        [MCP_TOOL_CREATE] = {"sandbox_create",
                             "Create a sandbox",
                             "Create a separate sandbox and return its handle (128 random "
                             "bits). It lives until sandbox_destroy or until this server "
                             "exits; pass the handle to the other tools.",
                             {{"policy", ARG_OBJECT, false,
                               "policy keys over the server's policy, e.g. {\"workdir\": "
                               "\"/workspace/app\"}; only the keys the server allows",
                               NULL}},
                             0},
        [MCP_TOOL_DESTROY] = {"sandbox_destroy",
                              "Destroy a sandbox",
                              "Kill every process of a sandbox made by sandbox_create and "
                              "remove it with its files.",
                              {{"handle", ARG_STRING, true, "what sandbox_create returned", NULL}},
                              HINT_DESTRUCTIVE | HINT_IDEMPOTENT},
        [MCP_TOOL_PROCESS_LIST] = {"sandbox_process_list",
                                   "List background processes",
                                   "List the sandbox's background processes (started by "
                                   "sandbox_exec with `background: true`), running and "
                                   "recently ended: id, pid, command, state, exit code or "
                                   "signal, output bytes so far. At most the policy's "
                                   "background_limit run at once.",
                                   {HANDLE_ARG},
                                   HINT_READ_ONLY | HINT_IDEMPOTENT},
        [MCP_TOOL_PROCESS_OUTPUT] =
                {"sandbox_process_output",
                 "Read a background process's output",
                 "Read what a background process wrote to stdout or stderr so far, from a "
                 "byte offset; returns `next_offset` (pass it as `offset` the next time) and "
                 "`eof` (the stream is closed and nothing follows). The session keeps the "
                 "first and last output_limit/2 bytes of each stream; from a dropped middle "
                 "the text starts later, at `offset` in the result.",
                 {{"id", ARG_INTEGER, true, "the process id sandbox_exec returned", NULL, 1,
                   4294967295.0},
                  {"stream", ARG_STRING, false, "stdout (default) or stderr", stream_names},
                  {"offset", ARG_INTEGER, false, "the byte to start at (default 0)", NULL, 0,
                   MCP_OFFSET_MAX},
                  {"max_chars", ARG_INTEGER, false,
                   "how many bytes to return at most (default and maximum: the server's "
                   "result cap)",
                   NULL, 1, MCP_OFFSET_MAX},
                  HANDLE_ARG},
                 HINT_READ_ONLY | HINT_IDEMPOTENT},
        [MCP_TOOL_PROCESS_KILL] = {"sandbox_process_kill",
                                   "Signal a background process",
                                   "Send a signal to a background process: TERM (default), "
                                   "KILL (its whole cgroup, children too), INT, HUP, QUIT, "
                                   "USR1 or USR2. Its output and result stay readable.",
                                   {{"id", ARG_INTEGER, true,
                                     "the process id sandbox_exec returned", NULL, 1, 4294967295.0},
                                    {"signal", ARG_STRING, false,
                                     "the signal's name (default TERM)", signal_names},
                                    HANDLE_ARG},
                                   HINT_DESTRUCTIVE | HINT_IDEMPOTENT},
        [MCP_TOOL_PROCESS_WAIT] = {"sandbox_process_wait",
                                   "Wait for a background process",
                                   "Wait until a background process ends, at most `timeout` "
                                   "seconds, and return its exit code, signal and why it "
                                   "ended; if it runs on, say so (it is not killed). Its "
                                   "output: sandbox_process_output.",
                                   {{"id", ARG_INTEGER, true,
                                     "the process id sandbox_exec returned", NULL, 1, 4294967295.0},
                                    {"timeout", ARG_NUMBER, false,
                                     "seconds to wait at most (default 30; at most the "
                                     "sandbox's timeout and 600)",
                                     NULL},
                                    HANDLE_ARG},
                                   HINT_READ_ONLY | HINT_IDEMPOTENT},
};

/* What each tool's structuredContent holds (the keys a program reads; more
 * may come): its outputSchema's properties. A failure may hold only
 * `error`, so nothing is required. */
#define OUT_ERROR "\"error\":{\"type\":\"string\"}"
#define OUT_EXEC                                                                                   \
        "\"exit_code\":{\"type\":\"integer\"},\"wall_ms\":{\"type\":\"integer\"},"                 \
        "\"stdout\":{\"type\":\"string\"},\"stderr\":{\"type\":\"string\"},"                       \
        "\"stdout_truncated\":{\"type\":\"boolean\"},\"stderr_truncated\":{\"type\":\"boolean\"}," \
        "\"violations\":{\"type\":\"array\"}," OUT_ERROR
#define OUT_PROCESS                                                                                \
        "\"id\":{\"type\":\"integer\"},\"pid\":{\"type\":\"integer\"},"                            \
        "\"command\":{\"type\":\"string\"},\"state\":{\"type\":\"string\",\"enum\":[\"running\","  \
        "\"exited\",\"signaled\"]},\"exit_code\":{\"type\":\"integer\"},"                          \
        "\"signal\":{\"type\":\"integer\"},\"started_unix\":{\"type\":\"integer\"},"               \
        "\"stdout_bytes\":{\"type\":\"integer\"},\"stderr_bytes\":{\"type\":\"integer\"}"
static const char *const output_schemas[MCP_N_TOOLS] = {
        [MCP_TOOL_EXEC] = OUT_EXEC ",\"id\":{\"type\":\"integer\"},\"pid\":{\"type\":\"integer\"}",
        [MCP_TOOL_READ_FILE] =
                "\"path\":{\"type\":\"string\"},\"size\":{\"type\":\"integer\"},"
                "\"offset\":{\"type\":\"integer\"},\"len\":{\"type\":\"integer\"},"
                "\"truncated\":{\"type\":\"boolean\"},\"encoding\":{\"type\":\"string\","
                "\"enum\":[\"utf-8\",\"base64\"]},\"content\":{\"type\":\"string\"}," OUT_ERROR,
        [MCP_TOOL_WRITE_FILE] =
                "\"path\":{\"type\":\"string\"},\"bytes\":{\"type\":\"integer\"}," OUT_ERROR,
        [MCP_TOOL_LIST_FILES] =
                "\"directory\":{\"type\":\"string\"},\"entries\":{\"type\":\"array\"},"
                "\"truncated\":{\"type\":\"boolean\"}," OUT_ERROR,
        [MCP_TOOL_INSTALL] =
                "\"package\":{\"type\":\"string\"},\"installed\":{\"type\":\"boolean\"},"
                "\"denied\":{\"type\":\"boolean\"}," OUT_EXEC,
        [MCP_TOOL_CREATE] = "\"handle\":{\"type\":\"string\"}," OUT_ERROR,
        [MCP_TOOL_DESTROY] =
                "\"handle\":{\"type\":\"string\"},\"destroyed\":{\"type\":\"boolean\"}," OUT_ERROR,
        [MCP_TOOL_PROCESS_LIST] = "\"processes\":{\"type\":\"array\",\"items\":{\"type\":"
                                  "\"object\",\"properties\":{" OUT_PROCESS "}}}," OUT_ERROR,
        [MCP_TOOL_PROCESS_OUTPUT] =
                "\"id\":{\"type\":\"integer\"},\"stream\":{\"type\":\"string\"},"
                "\"offset\":{\"type\":\"integer\"},\"next_offset\":{\"type\":\"integer\"},"
                "\"total\":{\"type\":\"integer\"},\"eof\":{\"type\":\"boolean\"},"
                "\"data\":{\"type\":\"string\"}," OUT_ERROR,
        [MCP_TOOL_PROCESS_KILL] = "\"id\":{\"type\":\"integer\"},\"signal\":{\"type\":"
                                  "\"string\"},\"sent\":{\"type\":\"boolean\"}," OUT_ERROR,
        [MCP_TOOL_PROCESS_WAIT] =
                "\"id\":{\"type\":\"integer\"},\"running\":{\"type\":\"boolean\"},"
                "\"exit_code\":{\"type\":\"integer\"},\"signal\":{\"type\":\"integer\"},"
                "\"reason\":{\"type\":\"string\"},\"wall_ms\":{\"type\":\"integer\"}," OUT_ERROR,
};

const char *mcp_tool_name(enum mcp_tool tool)
{
        return (size_t) tool < MCP_N_TOOLS ? tools[tool].name : NULL;
}

static const char *const arg_type_names[] = {
        [ARG_STRING] = "string", [ARG_NUMBER] = "number",   [ARG_INTEGER] = "integer",
        [ARG_OBJECT] = "object", [ARG_BOOLEAN] = "boolean",
};

static void write_tool(FILE *f, const struct mcp_server *s, const struct tool_def *t,
                       const struct request *rq)
{
        fputs("{\"name\":", f);
        json_write_string(f, t->name);
        if (HAS_STRUCTURED(rq)) {
                fputs(",\"title\":", f);
                json_write_string(f, t->title);
        }
        fputs(",\"description\":", f);
        if (t->limits && s->limits_note) {
                _cleanup_free_ char *d = NULL;
                if (asprintf(&d, "%s %s", t->description, s->limits_note) < 0)
                        d = NULL;
                json_write_string(f, d ? d : t->description);
        } else
                json_write_string(f, t->description);
        if (HAS_ANNOTATIONS(rq))
                fprintf(f,
                        ",\"annotations\":{\"readOnlyHint\":%s,\"destructiveHint\":%s,"
                        "\"idempotentHint\":%s,\"openWorldHint\":%s}",
                        t->hints & HINT_READ_ONLY ? "true" : "false",
                        t->hints & HINT_DESTRUCTIVE ? "true" : "false",
                        t->hints & HINT_IDEMPOTENT ? "true" : "false",
                        t->hints & HINT_OPEN_WORLD ? "true" : "false");
        fputs(",\"inputSchema\":{\"type\":\"object\",\"properties\":{", f);
        for (size_t i = 0; i < MAX_ARGS && t->args[i].name; i++) {
                const struct tool_arg *a = &t->args[i];
                fprintf(f, "%s", i ? "," : "");
                json_write_string(f, a->name);
                fprintf(f, ":{\"type\":\"%s\",\"description\":", arg_type_names[a->type]);
                json_write_string(f, a->description);
                if (a->choices) {
                        fputs(",\"enum\":[", f);
                        for (size_t k = 0; a->choices[k]; k++) {
                                fprintf(f, "%s", k ? "," : "");
                                json_write_string(f, a->choices[k]);
                        }
                        fputc(']', f);
                }
                if (a->type == ARG_NUMBER)
                        fputs(",\"exclusiveMinimum\":0", f);
                if (a->type == ARG_INTEGER)
                        fprintf(f, ",\"minimum\":%.0f,\"maximum\":%.0f", a->min, a->max);
                fputc('}', f);
        }
        fputs("},\"required\":[", f);
        bool first = true;
        for (size_t i = 0; i < MAX_ARGS && t->args[i].name; i++)
                if (t->args[i].required) {
                        fprintf(f, "%s", first ? "" : ",");
                        json_write_string(f, t->args[i].name);
                        first = false;
                }
        fputs("],\"additionalProperties\":false}", f);
        if (HAS_STRUCTURED(rq))
                fprintf(f, ",\"outputSchema\":{\"type\":\"object\",\"properties\":{%s}}",
                        output_schemas[t - tools]);
        fputc('}', f);
}

/* Add the value a model sent to err's message, escaped to one line and
 * cut, then "`". Returns -EINVAL. */
static int append_escaped(psrun_error *err, const char *v, size_t len)
{
        size_t used = strlen(err->msg);
        char *end = err->msg + used;
        size_t room = sizeof(err->msg) - used;
        for (size_t i = 0; i < len && room > 8 && i < 64; i++) {
                unsigned char c = (unsigned char) v[i];
                int n = c < 0x20 || c == 0x7f || c == '`' ? snprintf(end, room, "\\x%02x", c)
                                                          : snprintf(end, room, "%c", c);
                end += n;
                room -= (size_t) n;
        }
        if (room > 1)
                snprintf(end, room, "`");
        return -EINVAL;
}

/* 0, or -EINVAL with a message for the model (an isError result). */
static int check_args(const struct tool_def *t, const struct mj *args, psrun_error *err)
{
        for (size_t k = 0; k < args->len; k++) {
                const struct tool_arg *a = NULL;
                for (size_t i = 0; i < MAX_ARGS && t->args[i].name; i++)
                        if (strcmp(t->args[i].name, args->keys[k]) == 0)
                                a = &t->args[i];
                if (!a) {
                        char list[256] = "";
                        for (size_t i = 0; i < MAX_ARGS && t->args[i].name; i++)
                                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
                                         i ? ", " : "", t->args[i].name);
                        psrun_error_set(err, EINVAL, "%s: its arguments are %s; unknown argument `",
                                        t->name, list);
                        return append_escaped(err, args->keys[k], strlen(args->keys[k]));
                }
                static const enum mj_kind kinds[] = {
                        [ARG_STRING] = MJ_STRING,  [ARG_NUMBER] = MJ_NUMBER,
                        [ARG_INTEGER] = MJ_NUMBER, [ARG_OBJECT] = MJ_OBJECT,
                        [ARG_BOOLEAN] = MJ_BOOL,
                };
                const struct mj *v = &args->items[k];
                if (v->kind != kinds[a->type])
                        return psrun_error_set(
                                err, EINVAL, "%s: argument `%s` must be %s %s, not %s", t->name,
                                a->name,
                                a->type == ARG_INTEGER || a->type == ARG_OBJECT ? "an" : "a",
                                arg_type_names[a->type], mj_kind_name(v->kind));
                if (a->type == ARG_STRING && strlen(v->str) != v->len)
                        return psrun_error_set(err, EINVAL, "%s: argument `%s` holds a NUL byte",
                                               t->name, a->name);
                if (a->type == ARG_NUMBER && !(v->number > 0))
                        return psrun_error_set(err, EINVAL, "%s: argument `%s` must be above 0",
                                               t->name, a->name);
                if (a->type == ARG_INTEGER &&
                    (v->number != floor(v->number) || v->number < a->min || v->number > a->max))
                        return psrun_error_set(err, EINVAL,
                                               "%s: argument `%s` must be an integer from %.0f "
                                               "to %.0f",
                                               t->name, a->name, a->min, a->max);
                bool allowed = !a->choices;
                for (size_t c = 0; a->choices && a->choices[c]; c++)
                        allowed = allowed || strcmp(a->choices[c], v->str) == 0;
                if (!allowed) {
                        char list[256] = "";
                        for (size_t c = 0; a->choices[c]; c++)
                                snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
                                         c ? ", " : "", a->choices[c]);
                        psrun_error_set(err, EINVAL, "%s: argument `%s` must be one of %s, not `",
                                        t->name, a->name, list);
                        return append_escaped(err, v->str, v->len);
                }
        }
        for (size_t i = 0; i < MAX_ARGS && t->args[i].name; i++)
                if (t->args[i].required && !mj_get(args, t->args[i].name))
                        return psrun_error_set(err, EINVAL, "%s: missing argument `%s`", t->name,
                                               t->args[i].name);
        return 0;
}

/* ---- responses ---- */

static void begin_result(FILE *f, const struct request *rq)
{
        fputs("{\"jsonrpc\":\"2.0\",\"id\":", f);
        fwrite(rq->id->text, 1, rq->id->text_len, f);
        fputs(",\"result\":{", f);
}

/* Listing results (tools/list, server/discover) may be cached this long:
 * the tools and capabilities are fixed for the life of the process. */
#define LIST_TTL_MS 3600000

enum { RESULT_EMPTY = 1, RESULT_CACHEABLE = 2 };

static void write_server_info(FILE *f, const struct mcp_server *s, const struct request *rq)
{
        fputs(HAS_STRUCTURED(rq) ? "{\"name\":\"psrun\",\"title\":\"psrun sandbox\",\"version\":"
                                 : "{\"name\":\"psrun\",\"version\":",
              f);
        json_write_string(f, s->version ? s->version : "0");
        fputc('}', f);
}

/* The stateless revision puts on every result its type and the server's
 * identity (in _meta), and on the listing ones the caching hints of
 * SEP-2549 (required: the 2.x SDK rejects a tools/list without them).
 * "private": the list is this server's, not to be shared by a gateway with
 * servers run with another policy. */
static void end_result(FILE *f, const struct mcp_server *s, const struct request *rq,
                       unsigned flags)
{
        if (rq->stateless) {
                fputs(flags & RESULT_EMPTY ? "" : ",", f);
                fputs("\"resultType\":\"complete\",\"_meta\":{\"" MCP_META_SERVER_INFO "\":", f);
                write_server_info(f, s, rq);
                fputc('}', f);
                if (flags & RESULT_CACHEABLE)
                        fprintf(f, ",\"ttlMs\":%d,\"cacheScope\":\"private\"", LIST_TTL_MS);
        }
        fputs("}}\n", f);
}

static void write_error(FILE *f, const struct mj *id, int code, const char *msg)
{
        fputs("{\"jsonrpc\":\"2.0\",\"id\":", f);
        if (id)
                fwrite(id->text, 1, id->text_len, f);
        else
                fputs("null", f);
        fprintf(f, ",\"error\":{\"code\":%d,\"message\":", code);
        json_write_string(f, msg);
        fputs("}}\n", f);
}

static void write_versions(FILE *f, size_t from)
{
        fputc('[', f);
        for (size_t i = from; i < N_VERSIONS; i++) {
                fprintf(f, "%s", i > from ? "," : "");
                json_write_string(f, supported_versions[i]);
        }
        fputc(']', f);
}

static const char capabilities[] = "{\"tools\":{\"listChanged\":false}}";

/* ---- methods ---- */

static bool is_cancelled(const struct mcp_server *s, const struct request *rq)
{
        return s->backend.cancelled && s->backend.cancelled(s->backend.userdata, rq->id);
}

static int do_initialize(struct mcp_server *s, const struct request *rq, FILE *f)
{
        const char *asked = mj_get_string(rq->params, "protocolVersion");
        if (!asked) {
                write_error(f, rq->id, MCP_INVALID_PARAMS,
                            "initialize: params.protocolVersion (a string) is missing");
                return 0;
        }
        /* Negotiation is within the handshake era; anything else gets the
         * newest handshake version, and the client decides. */
        const char *chosen = MCP_LATEST_LEGACY;
        for (size_t i = FIRST_LEGACY; i < N_VERSIONS; i++)
                if (strcmp(asked, supported_versions[i]) == 0)
                        chosen = supported_versions[i];
        snprintf(s->legacy_version, sizeof(s->legacy_version), "%s", chosen);
        struct request answered = *rq;
        answered.version = chosen;
        rq = &answered;
        begin_result(f, rq);
        fputs("\"protocolVersion\":", f);
        json_write_string(f, chosen);
        fprintf(f, ",\"capabilities\":%s,\"serverInfo\":", capabilities);
        write_server_info(f, s, rq);
        if (HAS_ANNOTATIONS(rq)) {
                fputs(",\"instructions\":", f);
                json_write_string(f, instructions);
        }
        end_result(f, s, rq, 0);
        return 0;
}

static int do_discover(struct mcp_server *s, const struct request *rq, FILE *f)
{
        begin_result(f, rq);
        fputs("\"supportedVersions\":", f);
        write_versions(f, 0);
        fprintf(f, ",\"capabilities\":%s,\"serverInfo\":", capabilities);
        write_server_info(f, s, rq);
        fputs(",\"instructions\":", f);
        json_write_string(f, instructions);
        end_result(f, s, rq, RESULT_CACHEABLE);
        return 0;
}

static int do_ping(struct mcp_server *s, const struct request *rq, FILE *f)
{
        begin_result(f, rq);
        end_result(f, s, rq, RESULT_EMPTY);
        return 0;
}

static int do_tools_list(struct mcp_server *s, const struct request *rq, FILE *f)
{
        begin_result(f, rq);
        fputs("\"tools\":[", f);
        for (size_t i = 0; i < MCP_N_TOOLS; i++) {
                fprintf(f, "%s", i ? "," : "");
                write_tool(f, s, &tools[i], rq);
        }
        fputc(']', f);
        end_result(f, s, rq, RESULT_CACHEABLE);
        return 0;
}

/* One text content item, at most MCP_TEXT_MAX bytes as JSON whatever the
 * tool wrote: a backstop under the tools' own caps, cut with a marker. */
static void write_text_item(FILE *f, bool comma, const char *text, size_t len)
{
        fputs(comma ? ",{\"type\":\"text\",\"text\":\"" : "{\"type\":\"text\",\"text\":\"", f);
        size_t took = mj_write_escaped(f, text, len, MCP_TEXT_MAX);
        if (took < len)
                fprintf(f, "\\n[psrun mcp: cut here: this text was %zu bytes, %zu are shown]", len,
                        took);
        fputs("\"}", f);
}

/* What a tool writes: its text items and its structured object. */
#define N_BUFFERS (1 + MCP_MORE_TEXT + 1)
struct buffers {
        char *data[N_BUFFERS];
        size_t len[N_BUFFERS];
};

static void buffers_free(struct buffers *b)
{
        for (size_t i = 0; i < N_BUFFERS; i++)
                free(b->data[i]);
}

/* A tool's arguments were wrong: an isError result saying what to change,
 * with the message in structuredContent's `error` too. */
static int write_argument_error(const struct mcp_server *s, const struct request *rq, FILE *f,
                                const char *msg)
{
        _cleanup_free_ char *text = NULL;
        if (asprintf(&text, "Invalid arguments: %s. Correct them and call the tool again.", msg) <
            0)
                return -ENOMEM;
        begin_result(f, rq);
        fputs("\"content\":[", f);
        write_text_item(f, false, text, strlen(text));
        fputc(']', f);
        if (HAS_STRUCTURED(rq)) {
                fputs(",\"structuredContent\":{\"error\":", f);
                json_write_string(f, msg);
                fputc('}', f);
        }
        fputs(",\"isError\":true", f);
        end_result(f, s, rq, 0);
        return 0;
}

static int do_tools_call(struct mcp_server *s, const struct request *rq, FILE *f)
{
        const char *name = mj_get_string(rq->params, "name");
        if (!name) {
                write_error(f, rq->id, MCP_INVALID_PARAMS,
                            "tools/call: params.name (a string) is missing");
                return 0;
        }
        size_t t = 0;
        while (t < MCP_N_TOOLS && strcmp(tools[t].name, name) != 0)
                t++;
        psrun_error err = {0};
        if (t == MCP_N_TOOLS) {
                psrun_error_set(&err, EINVAL, "Unknown tool: %s", name);
                write_error(f, rq->id, MCP_INVALID_PARAMS, err.msg);
                return 0;
        }
        static const struct mj no_args = {.kind = MJ_OBJECT};
        const struct mj *args = mj_get(rq->params, "arguments");
        if (args && args->kind == MJ_NULL)
                args = NULL;
        if (args && args->kind != MJ_OBJECT) {
                write_error(f, rq->id, MCP_INVALID_PARAMS,
                            "tools/call: params.arguments must be an object");
                return 0;
        }
        /* Arguments that do not fit the tool's schema are the model's to
         * correct: a tool result with isError (2025-11-25, "Error
         * Handling"), not a protocol error. */
        if (check_args(&tools[t], args ? args : &no_args, &err) < 0)
                return write_argument_error(s, rq, f, err.msg);
        struct mcp_call call = {
                .tool = (enum mcp_tool) t,
                .args = args ? args : &no_args,
                .id = rq->id,
                .progress_token = mj_get(mj_get(rq->params, "_meta"), "progressToken"),
        };
        /* The text items, then the structured object. */
        _cleanup_(buffers_free) struct buffers b = {0};
        FILE *streams[N_BUFFERS];
        bool opened = true;
        for (size_t i = 0; i < N_BUFFERS; i++)
                opened = (streams[i] = open_memstream(&b.data[i], &b.len[i])) && opened;
        struct mcp_tool_out out = {.text = streams[0], .structured = streams[N_BUFFERS - 1]};
        for (size_t i = 0; i < MCP_MORE_TEXT; i++)
                out.more[i] = streams[1 + i];
        int r = -ENOMEM;
        if (opened)
                r = s->backend.call(s->backend.userdata, &call, &out, &err);
        for (size_t i = 0; i < N_BUFFERS; i++)
                if (streams[i])
                        fclose(streams[i]);
        const char *structured = b.data[N_BUFFERS - 1];
        size_t structured_len = b.len[N_BUFFERS - 1];
        if (is_cancelled(s, rq))
                return 0;
        if (r == -ENOMEM && !err.msg[0])
                psrun_error_set(&err, ENOMEM, "%s: out of memory", tools[t].name);
        if (r == -EINVAL)
                return write_argument_error(s, rq, f, err.msg);
        if (r < 0) {
                write_error(f, rq->id, MCP_INTERNAL_ERROR, err.msg);
                return 0;
        }
        begin_result(f, rq);
        fputs("\"content\":[", f);
        for (size_t i = 0; i < 1 + MCP_MORE_TEXT; i++)
                if (i == 0 || b.len[i])
                        write_text_item(f, i > 0, b.data[i], b.len[i]);
        fputc(']', f);
        if (HAS_STRUCTURED(rq)) {
                fputs(",\"structuredContent\":", f);
                if (structured_len)
                        fwrite(structured, 1, structured_len, f);
                else if (out.is_error) {
                        /* A failure says what went wrong there too. */
                        fputs("{\"error\":", f);
                        json_write_bytes(f, b.data[0], b.len[0]);
                        fputc('}', f);
                } else
                        fputs("{}", f);
        }
        fprintf(f, ",\"isError\":%s", out.is_error ? "true" : "false");
        end_result(f, s, rq, 0);
        return 0;
}

struct method {
        const char *name;
        int (*run)(struct mcp_server *s, const struct request *rq, FILE *f);
        bool legacy_only; /* not part of the stateless revision */
};

static const struct method methods[] = {
        {"initialize", do_initialize, true},     {"ping", do_ping, true},
        {"server/discover", do_discover, false}, {"tools/list", do_tools_list, false},
        {"tools/call", do_tools_call, false},
};

/* The stateless era's per-request version: 0 when absent (the handshake
 * era), 1 when it is one we speak, -1 after writing an error (-32022 for a
 * version we do not speak, -32602 for an envelope without capabilities). */
static int check_meta_version(const struct request *rq, FILE *f)
{
        const struct mj *v = mj_get(mj_get(rq->params, "_meta"), MCP_META_VERSION);
        if (!v)
                return 0;
        for (size_t i = 0; v->kind == MJ_STRING && i < N_VERSIONS; i++) {
                if (strcmp(v->str, supported_versions[i]) != 0)
                        continue;
                if (i != 0)
                        return 0;
                /* The revision requires the client's capabilities on every
                 * request (an empty object for none). */
                const struct mj *caps = mj_get(mj_get(rq->params, "_meta"), MCP_META_CLIENT_CAPS);
                if (!caps || caps->kind != MJ_OBJECT) {
                        write_error(f, rq->id, MCP_INVALID_PARAMS,
                                    "params._meta: " MCP_META_CLIENT_CAPS
                                    " (an object) is missing; revision " MCP_STATELESS_VERSION
                                    " requires it on every request");
                        return -1;
                }
                return 1;
        }
        fputs("{\"jsonrpc\":\"2.0\",\"id\":", f);
        fwrite(rq->id->text, 1, rq->id->text_len, f);
        fprintf(f,
                ",\"error\":{\"code\":%d,\"message\":\"Unsupported protocol version\","
                "\"data\":{\"supported\":",
                MCP_UNSUPPORTED_VERSION);
        write_versions(f, 0);
        fputs(",\"requested\":", f);
        fwrite(v->text, 1, v->text_len, f);
        fputs("}}}\n", f);
        return -1;
}

static int handle(struct mcp_server *s, const struct mj *msg, FILE *f)
{
        if (msg->kind != MJ_OBJECT) {
                write_error(f, NULL, MCP_INVALID_REQUEST, "a message must be a JSON object");
                return 0;
        }
        struct request rq = {.msg = msg, .id = mj_get(msg, "id"), .params = mj_get(msg, "params")};
        if (rq.id &&
            !(rq.id->kind == MJ_STRING || (rq.id->kind == MJ_NUMBER && rq.id->is_integer))) {
                write_error(f, NULL, MCP_INVALID_REQUEST, "id must be a string or an integer");
                return 0;
        }
        const char *version = mj_get_string(msg, "jsonrpc");
        const char *method = mj_get_string(msg, "method");
        if (!version || strcmp(version, "2.0") != 0) {
                if (rq.id || !method)
                        write_error(f, rq.id, MCP_INVALID_REQUEST, "jsonrpc must be \"2.0\"");
                return 0;
        }
        if (!method) {
                /* A response to a request of ours: we send none, so ignore it. */
                if (!rq.id || mj_get(msg, "result") || mj_get(msg, "error"))
                        return 0;
                write_error(f, rq.id, MCP_INVALID_REQUEST, "method (a string) is missing");
                return 0;
        }
        if (!rq.id) {
                /* Notifications are never answered; cancellation is the
                 * reader's (mcp_cancel_request_id). */
                if (strcmp(method, "notifications/initialized") == 0)
                        s->initialized = true;
                return 0;
        }
        if (is_cancelled(s, &rq))
                return 0;
        if (rq.params && rq.params->kind != MJ_OBJECT) {
                write_error(f, rq.id, MCP_INVALID_PARAMS, "params must be an object");
                return 0;
        }
        int era = check_meta_version(&rq, f);
        if (era < 0)
                return 0;
        rq.stateless = era == 1;
        rq.version = rq.stateless           ? MCP_STATELESS_VERSION
                     : s->legacy_version[0] ? s->legacy_version
                                            : MCP_LATEST_LEGACY;
        for (size_t i = 0; i < sizeof(methods) / sizeof(methods[0]); i++) {
                if (strcmp(methods[i].name, method) != 0 ||
                    (rq.stateless && methods[i].legacy_only))
                        continue;
                return methods[i].run(s, &rq, f);
        }
        char buf[300];
        snprintf(buf, sizeof(buf), "Method not found: %.200s", method);
        write_error(f, rq.id, MCP_METHOD_NOT_FOUND, buf);
        return 0;
}

int mcp_handle_message(struct mcp_server *s, const char *msg, size_t len, FILE *out)
{
        _cleanup_free_ char *buf = NULL;
        size_t buf_len = 0;
        FILE *f = open_memstream(&buf, &buf_len);
        if (!f)
                return -ENOMEM;
        struct mj *v = NULL;
        psrun_error err = {0};
        if (mj_parse(msg, len, &v, &err) < 0)
                write_error(f, NULL, MCP_PARSE_ERROR, err.msg);
        else
                handle(s, v, f);
        mj_free(v);
        if (fclose(f) != 0)
                return -ENOMEM;
        if (buf_len && (fwrite(buf, 1, buf_len, out) != buf_len || fflush(out) != 0))
                return -EIO;
        return 0;
}

int mcp_cancel_request_id(const char *msg, size_t len, char **request_id)
{
        /* Cheap test first: most lines are not cancellations. */
        if (!memmem(msg, len, "notifications/cancelled", strlen("notifications/cancelled")))
                return 0;
        struct mj *v = NULL;
        psrun_error err = {0};
        if (mj_parse(msg, len, &v, &err) < 0)
                return 0;
        const char *method = mj_get_string(v, "method");
        const struct mj *id = mj_get(mj_get(v, "params"), "requestId");
        int r = 0;
        if (method && strcmp(method, "notifications/cancelled") == 0 && !mj_get(v, "id") && id &&
            (id->kind == MJ_STRING || id->kind == MJ_NUMBER)) {
                *request_id = strndup(id->text, id->text_len);
                r = *request_id ? 1 : 0;
        }
        mj_free(v);
        return r;
}

void mcp_write_progress(FILE *out, const struct mj *token, unsigned long long progress,
                        const char *message, size_t message_len)
{
        fputs("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\",\"params\":{"
              "\"progressToken\":",
              out);
        fwrite(token->text, 1, token->text_len, out);
        fprintf(out, ",\"progress\":%llu,\"message\":", progress);
        json_write_bytes(out, message, message_len);
        fputs("}}\n", out);
        fflush(out);
}
