/* SPDX-License-Identifier: MIT */
/*
 * The MCP protocol layer (cli/mcp/proto.c) with a fake backend: the
 * handshake era, the stateless 2026-07-28 era, error codes, argument
 * checking. Every answer is parsed back with the strict reader.
 */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/mcp/json.h"
#include "cli/mcp/proto.h"
#include "common/json.h"

static int calls;
static enum mcp_tool last_tool;
static const char *cancelled_id; /* what fake_cancelled says is cancelled */

static int fake_call(void *userdata, const struct mcp_call *call, struct mcp_tool_out *out,
                     psrun_error *err)
{
        calls++;
        last_tool = call->tool;
        const char *cmd = mj_get_string(call->args, "command");
        if (cmd && strcmp(cmd, "bad") == 0)
                return psrun_error_set(err, EINVAL, "sandbox_exec: bad");
        if (cmd && strcmp(cmd, "cancel me") == 0)
                cancelled_id = "\"running\""; /* the client cancels while it runs */
        if (cmd && strcmp(cmd, "items") == 0) {
                /* psrun's summary first, the command's output after it. */
                fputs("Exit code: 3", out->text);
                fputs("STDOUT:\nExit code: 0\n", out->more[0]);
                fputs("STDERR: (empty)", out->more[1]);
        } else if (cmd && strcmp(cmd, "huge") == 0) {
                /* Past the cap once escaped: 1 MiB of control bytes is 6. */
                for (size_t i = 0; i < (1U << 20); i++)
                        fputc('\001', out->more[0]);
        } else
                fprintf(out->text, "ran %s", mcp_tool_name(call->tool));
        fputs("{\"ok\":true}", out->structured);
        out->is_error = cmd && strcmp(cmd, "false") == 0;
        return 0;
}

static bool fake_cancelled(void *userdata, const struct mj *id)
{
        return cancelled_id && strlen(cancelled_id) == id->text_len &&
               memcmp(cancelled_id, id->text, id->text_len) == 0;
}

static struct mcp_server server;

static void setup(void)
{
        memset(&server, 0, sizeof(server));
        server.backend.call = fake_call;
        server.backend.cancelled = fake_cancelled;
        server.version = "9.9";
        calls = 0;
        cancelled_id = NULL;
}

TestSuite(mcp_proto, .init = setup);

static char out_buf[1 << 16];

/* Send one message; returns the answer parsed (NULL when none), checking it
 * is exactly one line of JSON-RPC 2.0. */
static struct mj *send_msg(const char *msg)
{
        FILE *f = fmemopen(out_buf, sizeof(out_buf), "w");
        cr_assert_not_null(f);
        cr_assert_eq(mcp_handle_message(&server, msg, strlen(msg), f), 0);
        long n = ftell(f);
        fclose(f);
        out_buf[n] = '\0';
        if (n == 0)
                return NULL;
        cr_assert_eq(out_buf[n - 1], '\n', "no newline: %s", out_buf);
        cr_assert_eq(strchr(out_buf, '\n'), out_buf + n - 1, "more than one line: %s", out_buf);
        struct mj *v = NULL;
        psrun_error err = {0};
        cr_assert_eq(mj_parse(out_buf, (size_t) n, &v, &err), 0, "%s: %s", err.msg, out_buf);
        cr_assert_str_eq(mj_get_string(v, "jsonrpc"), "2.0");
        return v;
}

static int error_code(const struct mj *v)
{
        const struct mj *e = mj_get(v, "error");
        cr_assert_not_null(e, "not an error: %s", out_buf);
        cr_assert_null(mj_get(v, "result"));
        return (int) mj_get(e, "code")->integer;
}

static void expect_error(const char *msg, int code)
{
        struct mj *v = send_msg(msg);
        cr_assert_not_null(v, "no answer to %s", msg);
        cr_assert_eq(error_code(v), code, "%s -> %s", msg, out_buf);
        cr_assert_not_null(mj_get_string(mj_get(v, "error"), "message"));
        mj_free(v);
}

#define STATELESS_META                                                                             \
        "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                   \
        "\"io.modelcontextprotocol/clientCapabilities\":{}}"

Test(mcp_proto, malformed_messages_are_errors_not_crashes)
{
        expect_error("{", MCP_PARSE_ERROR);
        expect_error("\xff", MCP_PARSE_ERROR);
        expect_error("[]", MCP_INVALID_REQUEST);
        expect_error("42", MCP_INVALID_REQUEST);
        expect_error("{\"jsonrpc\":\"1.0\",\"id\":1,\"method\":\"ping\"}", MCP_INVALID_REQUEST);
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":{},\"method\":\"ping\"}", MCP_INVALID_REQUEST);
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":1.5,\"method\":\"ping\"}", MCP_INVALID_REQUEST);
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":7}", MCP_INVALID_REQUEST);
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"params\":[1]}",
                     MCP_INVALID_PARAMS);
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"nope\"}", MCP_METHOD_NOT_FOUND);
        /* A parse error has id null. */
        struct mj *v = send_msg("{\"id\":1,");
        cr_assert_eq(mj_get(v, "id")->kind, MJ_NULL);
        mj_free(v);
}

Test(mcp_proto, notifications_and_responses_get_no_answer)
{
        cr_assert_null(send_msg("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}"));
        cr_assert(server.initialized);
        cr_assert_null(send_msg("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/whatever\"}"));
        cr_assert_null(send_msg("{\"jsonrpc\":\"2.0\",\"method\":\"tools/call\",\"params\":"
                                "{\"name\":\"sandbox_exec\",\"arguments\":{\"command\":\"x\"}}}"));
        cr_assert_eq(calls, 0, "a notification ran a tool");
        cr_assert_null(send_msg("{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{}}"));
}

/* 2024-11-05 (SDK 1.0.x) gets nothing its schema lacks: no title, no
 * instructions, no annotations or outputSchema, no structuredContent. */
Test(mcp_proto, revision_2024_11_05_gets_only_its_fields)
{
        struct mj *v =
                send_msg("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\","
                         "\"params\":{\"protocolVersion\":\"2024-11-05\",\"capabilities\":{},"
                         "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
        const struct mj *r = mj_get(v, "result");
        cr_assert_null(mj_get(r, "instructions"), "%s", out_buf);
        cr_assert_null(mj_get(mj_get(r, "serverInfo"), "title"), "%s", out_buf);
        mj_free(v);
        v = send_msg("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}");
        const struct mj *tools = mj_get(mj_get(v, "result"), "tools");
        cr_assert_eq(tools->len, MCP_N_TOOLS);
        for (size_t i = 0; i < tools->len; i++)
                cr_assert_eq(tools->items[i].len, 3, "name, description, inputSchema: %s", out_buf);
        mj_free(v);
        v = send_msg("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/call\",\"params\":{"
                     "\"name\":\"sandbox_exec\",\"arguments\":{\"command\":\"true\"}}}");
        cr_assert_null(mj_get(mj_get(v, "result"), "structuredContent"), "%s", out_buf);
        cr_assert_not_null(mj_get(mj_get(v, "result"), "content"));
        mj_free(v);
        v = send_msg("{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
                     "\"name\":\"sandbox_exec\",\"arguments\":{}}}");
        cr_assert_eq(mj_get(mj_get(v, "result"), "isError")->boolean, true, "%s", out_buf);
        cr_assert_null(mj_get(mj_get(v, "result"), "structuredContent"), "%s", out_buf);
        mj_free(v);
}

Test(mcp_proto, handshake_negotiates_within_the_legacy_era)
{
        static const char *const asked[][2] = {
                {"2025-11-25", "2025-11-25"}, {"2025-06-18", "2025-06-18"},
                {"2025-03-26", "2025-03-26"}, {"2024-11-05", "2024-11-05"},
                {"2026-07-28", "2025-11-25"}, {"garbage", "2025-11-25"},
        };
        for (size_t i = 0; i < sizeof(asked) / sizeof(asked[0]); i++) {
                char msg[256];
                snprintf(msg, sizeof(msg),
                         "{\"jsonrpc\":\"2.0\",\"id\":\"a%zu\",\"method\":\"initialize\","
                         "\"params\":{\"protocolVersion\":\"%s\",\"capabilities\":{},"
                         "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}",
                         i, asked[i][0]);
                struct mj *v = send_msg(msg);
                const struct mj *r = mj_get(v, "result");
                cr_assert_not_null(r, "%s", out_buf);
                cr_assert_str_eq(mj_get_string(r, "protocolVersion"), asked[i][1]);
                cr_assert_not_null(mj_get(mj_get(r, "capabilities"), "tools"));
                cr_assert_str_eq(mj_get_string(mj_get(r, "serverInfo"), "name"), "psrun");
                cr_assert_null(mj_get(r, "resultType"), "legacy results carry no resultType");
                char id[8];
                snprintf(id, sizeof(id), "a%zu", i);
                cr_assert_str_eq(mj_get_string(v, "id"), id);
                mj_free(v);
        }
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}",
                     MCP_INVALID_PARAMS);
        struct mj *v = send_msg("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}");
        cr_assert_eq(mj_get(v, "result")->len, 0);
        mj_free(v);
}

Test(mcp_proto, stateless_era)
{
        struct mj *v = send_msg("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\","
                                "\"params\":{" STATELESS_META "}}");
        const struct mj *r = mj_get(v, "result");
        cr_assert_not_null(r, "%s", out_buf);
        cr_assert_str_eq(mj_get_string(r, "resultType"), "complete");
        const struct mj *versions = mj_get(r, "supportedVersions");
        cr_assert_eq(versions->len, 5);
        cr_assert_str_eq(versions->items[0].str, "2026-07-28");
        cr_assert_not_null(mj_get(mj_get(r, "_meta"), "io.modelcontextprotocol/serverInfo"));
        mj_free(v);

        /* Every result carries resultType, tools/call's too. */
        v = send_msg("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
                     "\"name\":\"sandbox_list_files\",\"arguments\":{}," STATELESS_META "}}");
        cr_assert_str_eq(mj_get_string(mj_get(v, "result"), "resultType"), "complete");
        mj_free(v);

        /* The handshake is not part of it. */
        expect_error("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"initialize\",\"params\":{"
                     "\"protocolVersion\":\"2026-07-28\"," STATELESS_META "}}",
                     MCP_METHOD_NOT_FOUND);
        cr_assert_eq(calls, 1);
}

Test(mcp_proto, stateless_results_carry_server_info_and_cache_hints)
{
        /* The listing results are cacheable (SEP-2549: ttlMs and cacheScope
         * required); every result names the server in _meta. */
        static const char *const listing[] = {"server/discover", "tools/list"};
        for (size_t i = 0; i < 2; i++) {
                char msg[512];
                snprintf(msg, sizeof(msg),
                         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"%s\",\"params\":"
                         "{" STATELESS_META "}}",
                         listing[i]);
                struct mj *v = send_msg(msg);
                const struct mj *r = mj_get(v, "result");
                cr_assert_not_null(r, "%s", out_buf);
                const struct mj *ttl = mj_get(r, "ttlMs");
                cr_assert(ttl && ttl->kind == MJ_NUMBER && ttl->is_integer && ttl->integer > 0,
                          "%s", out_buf);
                cr_assert_str_eq(mj_get_string(r, "cacheScope"), "private");
                cr_assert_str_eq(mj_get_string(r, "resultType"), "complete");
                cr_assert_str_eq(
                        mj_get_string(mj_get(mj_get(r, "_meta"), MCP_META_SERVER_INFO), "name"),
                        "psrun");
                mj_free(v);
        }
        struct mj *v = send_msg(
                "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{"
                "\"name\":\"sandbox_exec\",\"arguments\":{\"command\":\"x\"}," STATELESS_META "}}");
        const struct mj *r = mj_get(v, "result");
        cr_assert_str_eq(mj_get_string(mj_get(mj_get(r, "_meta"), MCP_META_SERVER_INFO), "version"),
                         "9.9");
        cr_assert_null(mj_get(r, "ttlMs"), "a tool result is not cacheable");
        mj_free(v);
        /* The handshake era's results stay as 2025-11-25 has them. */
        v = send_msg("{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
        r = mj_get(v, "result");
        cr_assert_null(mj_get(r, "ttlMs"));
        cr_assert_null(mj_get(r, "cacheScope"));
        cr_assert_null(mj_get(r, "_meta"));
        mj_free(v);
}

Test(mcp_proto, stateless_requests_need_client_capabilities)
{
        static const char *const metas[] = {
                "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}",
                "{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
                "\"io.modelcontextprotocol/clientCapabilities\":[]}",
        };
        for (size_t i = 0; i < 2; i++) {
                char msg[512];
                snprintf(msg, sizeof(msg),
                         "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{"
                         "\"name\":\"sandbox_exec\",\"arguments\":{\"command\":\"x\"},\"_meta\":%s}"
                         "}",
                         metas[i]);
                struct mj *v = send_msg(msg);
                cr_assert_eq(error_code(v), MCP_INVALID_PARAMS, "%s", out_buf);
                cr_assert_not_null(
                        strstr(mj_get_string(mj_get(v, "error"), "message"), MCP_META_CLIENT_CAPS));
                mj_free(v);
        }
        cr_assert_eq(calls, 0);
}

Test(mcp_proto, cancelled_requests_get_no_answer)
{
        /* Cancelled before it ran: not run, not answered. */
        cancelled_id = "\"queued\"";
        cr_assert_null(send_msg(
                "{\"jsonrpc\":\"2.0\",\"id\":\"queued\",\"method\":\"tools/call\","
                "\"params\":{\"name\":\"sandbox_exec\",\"arguments\":{\"command\":\"x\"}}}"));
        cr_assert_null(
                send_msg("{\"jsonrpc\":\"2.0\",\"id\":\"queued\",\"method\":\"tools/list\"}"));
        cr_assert_eq(calls, 0);
        /* The same id as a number is another request. */
        struct mj *v = send_msg("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\"}");
        cr_assert_not_null(v);
        mj_free(v);
        /* Cancelled while it ran: run, not answered. */
        cr_assert_null(send_msg("{\"jsonrpc\":\"2.0\",\"id\":\"running\",\"method\":\"tools/call\","
                                "\"params\":{\"name\":\"sandbox_exec\",\"arguments\":"
                                "{\"command\":\"cancel me\"}," STATELESS_META "}}"));
        cr_assert_eq(calls, 1);
        v = send_msg("{\"jsonrpc\":\"2.0\",\"id\":\"next\",\"method\":\"tools/call\",\"params\":{"
                     "\"name\":\"sandbox_exec\",\"arguments\":{\"command\":\"x\"}}}");
        cr_assert_not_null(mj_get(v, "result"), "%s", out_buf);
        mj_free(v);
}

Test(mcp_proto, unknown_version_is_32022_with_supported_and_requested)
{
        static const char *const bad[] = {"\"2099-01-01\"", "\"\"", "7", "null"};
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                char msg[256];
                snprintf(msg, sizeof(msg),
                         "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"tools/list\",\"params\":{"
                         "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":%s}}}",
                         bad[i]);
                struct mj *v = send_msg(msg);
                cr_assert_eq(error_code(v), MCP_UNSUPPORTED_VERSION, "%s", out_buf);
                const struct mj *data = mj_get(mj_get(v, "error"), "data");
                cr_assert_eq(mj_get(data, "supported")->len, 5);
                const struct mj *req = mj_get(data, "requested");
                cr_assert_not_null(req);
                cr_assert_eq(req->text_len, strlen(bad[i]));
                cr_assert_eq(memcmp(req->text, bad[i], req->text_len), 0);
                cr_assert_eq(mj_get(v, "id")->integer, 9);
                mj_free(v);
        }
}

Test(mcp_proto, tools_list_is_deterministic_and_strict)
{
        static const char *const names[] = {
                "sandbox_exec",         "sandbox_read_file",       "sandbox_write_file",
                "sandbox_list_files",   "sandbox_install_package", "sandbox_create",
                "sandbox_destroy",      "sandbox_process_list",    "sandbox_process_output",
                "sandbox_process_kill", "sandbox_process_wait"};
        char first[sizeof(out_buf)];
        for (int round = 0; round < 2; round++) {
                struct mj *v = send_msg("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
                const struct mj *tools = mj_get(mj_get(v, "result"), "tools");
                cr_assert_eq(tools->len, 11);
                for (size_t i = 0; i < 11; i++) {
                        const struct mj *t = &tools->items[i];
                        cr_assert_str_eq(mj_get_string(t, "name"), names[i]);
                        const struct mj *schema = mj_get(t, "inputSchema");
                        cr_assert_str_eq(mj_get_string(schema, "type"), "object");
                        cr_assert_eq(mj_get(schema, "additionalProperties")->boolean, false);
                }
                if (round == 0)
                        strcpy(first, out_buf);
                else
                        cr_assert_str_eq(out_buf, first);
                mj_free(v);
        }
}

static void call_error(const char *name_and_args, int code, const char *msg_part)
{
        char msg[1024];
        snprintf(msg, sizeof(msg),
                 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{%s}}",
                 name_and_args);
        struct mj *v = send_msg(msg);
        cr_assert_eq(error_code(v), code, "%s -> %s", msg, out_buf);
        const char *m = mj_get_string(mj_get(v, "error"), "message");
        cr_assert_not_null(strstr(m, msg_part), "`%s` lacks `%s`", m, msg_part);
        mj_free(v);
}

/* A tools/call whose arguments are wrong: an isError result (2025-11-25),
 * the message in the text and in structuredContent.error. */
static void call_invalid(const char *name_and_args, const char *msg_part)
{
        char msg[1024];
        snprintf(msg, sizeof(msg),
                 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{%s}}",
                 name_and_args);
        struct mj *v = send_msg(msg);
        const struct mj *r = mj_get(v, "result");
        cr_assert_not_null(r, "%s -> %s", msg, out_buf);
        cr_assert_eq(mj_get(r, "isError")->boolean, true, "%s", out_buf);
        const char *text = mj_get_string(&mj_get(r, "content")->items[0], "text");
        cr_assert_not_null(strstr(text, "Invalid arguments: "), "%s", text);
        cr_assert_not_null(strstr(text, msg_part), "`%s` lacks `%s`", text, msg_part);
        const char *e = mj_get_string(mj_get(r, "structuredContent"), "error");
        cr_assert_not_null(e, "%s", out_buf);
        cr_assert_not_null(strstr(e, msg_part), "`%s` lacks `%s`", e, msg_part);
        mj_free(v);
}

Test(mcp_proto, bad_tool_calls_are_json_rpc_errors)
{
        /* Protocol faults: no such tool, no name, arguments not an object. */
        call_error("\"name\":\"rm_rf\"", MCP_INVALID_PARAMS, "Unknown tool: rm_rf");
        call_error("\"arguments\":{}", MCP_INVALID_PARAMS, "params.name");
        call_error("\"name\":\"sandbox_exec\",\"arguments\":[]", MCP_INVALID_PARAMS,
                   "must be an object");
        cr_assert_eq(calls, 0);
}

Test(mcp_proto, bad_arguments_are_tool_errors)
{
        call_invalid("\"name\":\"sandbox_exec\"", "missing argument `command`");
        call_invalid("\"name\":\"sandbox_exec\",\"arguments\":{\"command\":1}",
                     "`command` must be a string, not number");
        call_invalid("\"name\":\"sandbox_exec\",\"arguments\":{\"command\":\"a\\u0000b\"}", "NUL");
        call_invalid(
                "\"name\":\"sandbox_exec\",\"arguments\":{\"command\":\"x\",\"timeout\":\"5\"}",
                "`timeout` must be a number");
        call_invalid("\"name\":\"sandbox_exec\",\"arguments\":{\"command\":\"x\",\"timeout\":-1}",
                     "above 0");
        call_invalid(
                "\"name\":\"sandbox_exec\",\"arguments\":{\"command\":\"x\",\"cwd\":\"/\"}",
                "its arguments are command, timeout, background, handle; unknown argument `cwd`");
        call_invalid("\"name\":\"sandbox_exec\",\"arguments\":{\"command\":\"x\",\"background\":1}",
                     "`background` must be a boolean, not number");
        /* The process tools: an id from 1, a signal from the list, a stream. */
        call_invalid("\"name\":\"sandbox_process_kill\",\"arguments\":{}", "missing argument `id`");
        call_invalid(
                "\"name\":\"sandbox_process_kill\",\"arguments\":{\"id\":1,\"signal\":\"STOP\"}",
                "`signal` must be one of TERM, KILL, INT, HUP, QUIT, USR1, USR2, not `STOP`");
        call_invalid("\"name\":\"sandbox_process_output\",\"arguments\":{\"id\":0}",
                     "`id` must be an integer from 1 to 4294967295");
        call_invalid(
                "\"name\":\"sandbox_process_output\",\"arguments\":{\"id\":1,\"stream\":\"stdin\"}",
                "`stream` must be one of stdout, stderr, not `stdin`");
        call_invalid("\"name\":\"sandbox_process_output\",\"arguments\":{\"id\":1,\"offset\":-1}",
                     "`offset` must be an integer from 0");
        call_invalid("\"name\":\"sandbox_process_wait\",\"arguments\":{\"id\":1,\"timeout\":0}",
                     "`timeout` must be above 0");
        call_invalid("\"name\":\"sandbox_process_list\",\"arguments\":{\"id\":1}",
                     "its arguments are handle; unknown argument `id`");
        call_invalid("\"name\":\"sandbox_write_file\",\"arguments\":{\"file_path\":\"a\","
                     "\"content\":\"\",\"encoding\":\"rot13\"}",
                     "`encoding` must be one of utf-8, base64, not `rot13`");
        /* Each enum lists its own values (the tool list, not the encodings). */
        call_invalid("\"name\":\"sandbox_install_package\",\"arguments\":{\"package\":\"a\","
                     "\"tool\":\"ruby\"}",
                     "`tool` must be one of python, node, not `ruby`");
        /* A value the model sent is shown on one line. */
        call_invalid("\"name\":\"sandbox_install_package\",\"arguments\":{\"package\":\"a\","
                     "\"tool\":\"a\\nb\"}",
                     "not `a\\x0ab`");
        call_invalid("\"name\":\"sandbox_destroy\",\"arguments\":{}", "missing argument `handle`");
        cr_assert_eq(calls, 0, "no bad call reached the backend");
        /* What the backend calls bad arguments is an isError result too. */
        call_invalid("\"name\":\"sandbox_exec\",\"arguments\":{\"command\":\"bad\"}",
                     "sandbox_exec: bad");
        cr_assert_eq(calls, 1, "only the backend's own rejection reached it");
}

Test(mcp_proto, tool_results)
{
        struct mj *v = send_msg("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"method\":\"tools/call\","
                                "\"params\":{\"name\":\"sandbox_exec\",\"arguments\":"
                                "{\"command\":\"false\",\"timeout\":0.5}}}");
        const struct mj *r = mj_get(v, "result");
        cr_assert_not_null(r, "%s", out_buf);
        cr_assert_eq(last_tool, MCP_TOOL_EXEC);
        cr_assert_eq(mj_get(r, "isError")->boolean, true);
        const struct mj *content = mj_get(r, "content");
        cr_assert_eq(content->len, 1);
        cr_assert_str_eq(mj_get_string(&content->items[0], "type"), "text");
        cr_assert_str_eq(mj_get_string(&content->items[0], "text"), "ran sandbox_exec");
        cr_assert(mj_get(mj_get(r, "structuredContent"), "ok")->boolean);
        mj_free(v);
        /* arguments may be left out or null when nothing is required. */
        v = send_msg("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                     "\"params\":{\"name\":\"sandbox_list_files\",\"arguments\":null}}");
        cr_assert_eq(mj_get(mj_get(v, "result"), "isError")->boolean, false);
        cr_assert_eq(last_tool, MCP_TOOL_LIST_FILES);
        mj_free(v);
}

Test(mcp_proto, cancel_and_progress_helpers)
{
        const char *c = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\","
                        "\"params\":{\"requestId\":\"r-1\",\"reason\":\"user\"}}";
        char *id = NULL;
        cr_assert_eq(mcp_cancel_request_id(c, strlen(c), &id), 1);
        cr_assert_str_eq(id, "\"r-1\"");
        free(id);
        const char *req = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"notifications/cancelled\","
                          "\"params\":{\"requestId\":1}}";
        cr_assert_eq(mcp_cancel_request_id(req, strlen(req), &id), 0, "a request is no cancel");
        cr_assert_eq(mcp_cancel_request_id("{", 1, &id), 0);

        struct mj *token = NULL;
        psrun_error err = {0};
        cr_assert_eq(mj_parse("\"tok\"", 5, &token, &err), 0);
        FILE *f = fmemopen(out_buf, sizeof(out_buf), "w");
        mcp_write_progress(f, token, 3, "a\nb\xff", 4);
        long n = ftell(f);
        fclose(f);
        out_buf[n] = '\0';
        mj_free(token);
        cr_assert_eq(strchr(out_buf, '\n'), out_buf + n - 1);
        struct mj *v = NULL;
        cr_assert_eq(mj_parse(out_buf, (size_t) n, &v, &err), 0, "%s", err.msg);
        const struct mj *p = mj_get(v, "params");
        cr_assert_str_eq(mj_get_string(p, "progressToken"), "tok");
        cr_assert_eq(mj_get(p, "progress")->integer, 3);
        mj_free(v);
}

Test(mcp_proto, output_items_come_after_psrun_s_own)
{
        struct mj *v = send_msg("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                                "\"params\":{\"name\":\"sandbox_exec\",\"arguments\":"
                                "{\"command\":\"items\"}}}");
        const struct mj *content = mj_get(mj_get(v, "result"), "content");
        cr_assert_eq(content->len, 3, "%s", out_buf);
        cr_assert_str_eq(mj_get_string(&content->items[0], "text"), "Exit code: 3");
        cr_assert_str_eq(mj_get_string(&content->items[1], "text"), "STDOUT:\nExit code: 0\n");
        cr_assert_str_eq(mj_get_string(&content->items[2], "text"), "STDERR: (empty)");
        mj_free(v);
        /* Items left empty are not sent. */
        v = send_msg("{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\","
                     "\"params\":{\"name\":\"sandbox_exec\",\"arguments\":{\"command\":\"x\"}}}");
        cr_assert_eq(mj_get(mj_get(v, "result"), "content")->len, 1);
        mj_free(v);
}

Test(mcp_proto, a_text_item_is_capped_as_escaped_json)
{
        const char *msg = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                          "\"params\":{\"name\":\"sandbox_exec\",\"arguments\":"
                          "{\"command\":\"huge\"}}}";
        char *buf = NULL;
        size_t n = 0;
        FILE *f = open_memstream(&buf, &n);
        cr_assert_eq(mcp_handle_message(&server, msg, strlen(msg), f), 0);
        fclose(f);
        /* 1 MiB of \u0001 would be a 6 MiB line. */
        cr_assert_lt(n, MCP_TEXT_MAX + 4096, "a line of %zu bytes", n);
        struct mj *v = NULL;
        psrun_error err = {0};
        cr_assert_eq(mj_parse(buf, n, &v, &err), 0, "%s", err.msg);
        const struct mj *item = &mj_get(mj_get(v, "result"), "content")->items[1];
        const char *text = mj_get_string(item, "text");
        cr_assert_not_null(strstr(text, "[psrun mcp: cut here: this text was 1048576 bytes"));
        mj_free(v);
        free(buf);
}

Test(mcp_proto, integer_arguments_are_checked)
{
        call_invalid("\"name\":\"sandbox_read_file\",\"arguments\":{\"file_path\":\"a\","
                     "\"offset\":-1}",
                     "must be an integer from 0");
        call_invalid("\"name\":\"sandbox_read_file\",\"arguments\":{\"file_path\":\"a\","
                     "\"offset\":1.5}",
                     "must be an integer");
        call_invalid("\"name\":\"sandbox_read_file\",\"arguments\":{\"file_path\":\"a\","
                     "\"length\":0}",
                     "`length` must be an integer from 1 to 262144");
        call_invalid("\"name\":\"sandbox_read_file\",\"arguments\":{\"file_path\":\"a\","
                     "\"length\":262145}",
                     "`length` must be an integer from 1 to 262144");
        call_invalid("\"name\":\"sandbox_read_file\",\"arguments\":{\"file_path\":\"a\","
                     "\"offset\":\"0\"}",
                     "`offset` must be an integer, not string");
        cr_assert_eq(calls, 0);
        struct mj *v = send_msg("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\","
                                "\"params\":{\"name\":\"sandbox_read_file\",\"arguments\":"
                                "{\"file_path\":\"a\",\"offset\":0,\"length\":262144}}}");
        cr_assert_not_null(mj_get(v, "result"), "%s", out_buf);
        mj_free(v);
        cr_assert_eq(calls, 1);
}

/* The background-process tools' annotations say what they do. */
Test(mcp_proto, process_tools_have_truthful_annotations)
{
        static const struct {
                const char *name;
                bool read_only, destructive;
        } want[] = {
                {"sandbox_process_list", true, false},
                {"sandbox_process_output", true, false},
                {"sandbox_process_kill", false, true},
                {"sandbox_process_wait", true, false},
        };
        struct mj *v = send_msg("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}");
        const struct mj *tools = mj_get(mj_get(v, "result"), "tools");
        size_t found = 0;
        for (size_t i = 0; i < tools->len; i++) {
                const struct mj *t = &tools->items[i];
                const char *name = mj_get_string(t, "name");
                if (strcmp(name, "sandbox_exec") == 0) {
                        const struct mj *bg = mj_get(mj_get(mj_get(t, "inputSchema"), "properties"),
                                                     "background");
                        cr_assert_str_eq(mj_get_string(bg, "type"), "boolean");
                }
                for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
                        if (strcmp(name, want[k].name) != 0)
                                continue;
                        const struct mj *a = mj_get(t, "annotations");
                        cr_assert_eq(mj_get(a, "readOnlyHint")->boolean, want[k].read_only, "%s",
                                     name);
                        cr_assert_eq(mj_get(a, "destructiveHint")->boolean, want[k].destructive,
                                     "%s", name);
                        cr_assert_not_null(mj_get(t, "outputSchema"), "%s", name);
                        cr_assert(strstr(mj_get_string(t, "description"), "background") != NULL,
                                  "%s", name);
                        found++;
                }
        }
        cr_assert_eq(found, 4);
        mj_free(v);
}
