/* SPDX-License-Identifier: MIT */
/*
 * The MCP server's file tools (docs/mcp.md): sandbox_read_file,
 * sandbox_write_file and sandbox_list_files over the session's host-side
 * file API (psrun_read_file, psrun_write_file_opts, psrun_list_dir in
 * include/psrun.h), bounded for the model: a read shows a part with the
 * offset to go on from, a listing its entries and bytes of names.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <psrun.h>

#include "cli/mcp/json.h"
#include "cli/mcp/proto.h"
#include "cli/mcp/server.h"
#include "cli/mcp/text.h"
#include "common/cleanup.h"
#include "common/json.h"

/* A listing for a model: MCP_LIST_MAX entries, 256 KiB of names read, and
 * 256 KiB of text / 512 KiB of structuredContent as JSON. */
#define LIST_NAMES_MAX      (256U << 10)
#define LIST_TEXT_MAX       (256U << 10)
#define LIST_STRUCTURED_MAX (512U << 10)

/*
 * A part of a file for the model: at most `length` (MCP_READ_MAX) bytes
 * from `offset`. The first text item is psrun's: the path, the file's size,
 * which bytes are shown and how, and the offset to read on from; the bytes
 * themselves are the next item (text, or base64), where what the file says
 * cannot pass for psrun's note.
 */
static int tool_read_file(struct server *srv, const struct mcp_call *call, struct mcp_tool_out *out,
                          psrun_error *err)
{
        struct sandbox *sb = pick_sandbox(srv, call, out);
        if (!sb)
                return 0;
        const char *path = mj_get_string(call->args, "file_path");
        const struct mj *o = mj_get(call->args, "offset"), *l = mj_get(call->args, "length");
        uint64_t offset = o ? (uint64_t) o->number : 0;
        size_t length = l ? (size_t) l->number : MCP_READ_MAX;
        psrun_file_data fd = {0};
        if (psrun_read_file(sb->session, path, offset, length, &fd, err) < 0)
                return session_error(srv, sb, out, "Cannot read the file", err);
        if (fd.truncated && fd.len > 0) {
                size_t keep = fd.len - split_character(fd.data, fd.len);
                if (keep > 0 && mj_is_text(fd.data, keep))
                        fd.len = keep;
        }
        bool text = mj_is_text(fd.data, fd.len);
        bool more = offset + fd.len < fd.size;
        FILE *t = out->text;
        mcp_write_path(t, path);
        fprintf(t, ": %" PRIu64 " bytes", fd.size);
        if (fd.len == 0)
                fputs(offset ? "; nothing from that offset (past the end)." : " (empty).", t);
        else if (offset == 0 && !more)
                fprintf(t, ", all shown as %s in the next content item.",
                        text ? "UTF-8 text" : "base64 (a binary file)");
        else
                fprintf(t,
                        "; bytes %" PRIu64 " to %" PRIu64 " (%zu) are shown as %s in the next "
                        "content item.",
                        offset, offset + fd.len - 1, fd.len,
                        text ? "UTF-8 text" : "base64 (a binary file)");
        if (fd.len && more)
                fprintf(t,
                        " Truncated: %" PRIu64 " more bytes follow; read on with "
                        "sandbox_read_file and offset: %" PRIu64 ".",
                        fd.size - offset - fd.len, offset + fd.len);
        if (text)
                fwrite(fd.data, 1, fd.len, out->more[0]);
        else
                mcp_b64_encode(out->more[0], (const unsigned char *) fd.data, fd.len);
        FILE *s = out->structured;
        fputs("{\"path\":", s);
        json_write_string(s, path);
        fprintf(s,
                ",\"size\":%" PRIu64 ",\"offset\":%" PRIu64 ",\"len\":%zu,\"truncated\":%s,"
                "\"encoding\":\"%s\",\"content\":",
                fd.size, offset, fd.len, more ? "true" : "false", text ? "utf-8" : "base64");
        if (text)
                json_write_bytes(s, fd.data, fd.len);
        else {
                fputc('"', s);
                mcp_b64_encode(s, (const unsigned char *) fd.data, fd.len);
                fputc('"', s);
        }
        fputc('}', s);
        free(fd.data);
        return 0;
}

static int tool_write_file(struct server *srv, const struct mcp_call *call,
                           struct mcp_tool_out *out, psrun_error *err)
{
        const char *path = mj_get_string(call->args, "file_path");
        const struct mj *content = mj_get(call->args, "content");
        const char *encoding = mj_get_string(call->args, "encoding");
        _cleanup_free_ unsigned char *decoded = NULL;
        const void *data = content->str;
        size_t len = content->len;
        if (encoding && strcmp(encoding, "base64") == 0) {
                if (mcp_b64_decode(content->str, content->len, &decoded, &len) < 0)
                        return psrun_error_set(err, EINVAL,
                                               "sandbox_write_file: content is not valid base64");
                data = decoded;
        }
        struct sandbox *sb = pick_sandbox(srv, call, out);
        if (!sb)
                return 0;
        /* A cancel stops the writer within a chunk and leaves the old file
         * (docs/mcp.md, "Cancellation"). */
        psrun_write_options o = {.cancel = mcp_halt_flag()};
        if (psrun_write_file_opts(sb->session, path, data, len, 0644, &o, err) < 0)
                return session_error(srv, sb, out, "Cannot write the file", err);
        fprintf(out->text, "Successfully wrote %zu bytes to ", len);
        mcp_write_path(out->text, path);
        fputs("{\"path\":", out->structured);
        json_write_string(out->structured, path);
        fprintf(out->structured, ",\"bytes\":%zu}", len);
        return 0;
}

static int tool_list_files(struct server *srv, const struct mcp_call *call,
                           struct mcp_tool_out *out, psrun_error *err)
{
        const char *dir = mj_get_string(call->args, "directory");
        if (!dir)
                dir = "/workspace";
        struct sandbox *sb = pick_sandbox(srv, call, out);
        if (!sb)
                return 0;
        psrun_list_options o = {.max_entries = MCP_LIST_MAX, .max_bytes = LIST_NAMES_MAX};
        psrun_listing l = {0};
        if (psrun_list_dir(sb->session, dir, &o, &l, err) < 0)
                return session_error(srv, sb, out, "Cannot list the directory", err);
        mcp_write_listing(out->text, out->structured, dir, &l, LIST_TEXT_MAX, LIST_STRUCTURED_MAX);
        psrun_listing_free(&l);
        return 0;
}

const mcp_tool_fn mcp_file_tools[MCP_N_TOOLS] = {
        [MCP_TOOL_READ_FILE] = tool_read_file,
        [MCP_TOOL_WRITE_FILE] = tool_write_file,
        [MCP_TOOL_LIST_FILES] = tool_list_files,
};
