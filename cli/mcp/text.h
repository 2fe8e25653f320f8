/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the MCP tools write for the model (cli/mcp/server.c runs the tools): base64
 * both ways, paths as the sandbox sees them, the output streams, the
 * Blocked: lines of what a layer refused, the network's refusals, and the
 * session API's result JSON as structuredContent. Pure formatting: a FILE
 * in, text out.
 */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <psrun.h>

void mcp_b64_encode(FILE *f, const unsigned char *p, size_t n);
/* Strict base64 (padding required, whitespace allowed between groups):
 * *ret malloc'd; -EINVAL for anything else. */
int mcp_b64_decode(const char *s, size_t len, unsigned char **ret, size_t *ret_len);

/*
 * Text the sandbox chose (a file name, a refused path or domain), escaped
 * for a model to read on one line: backslash as \\, \n \t \r, every other
 * control byte and byte that is not well-formed UTF-8 as \xHH, and the
 * invisible or line-breaking characters (C1 controls, bidi and zero-width
 * controls, U+2028/U+2029, the BOM) as \u{hex digits}, e.g. \u{202e}. It never holds a newline
 * or a raw control byte, and reads back as exactly one sequence of bytes.
 * At most max bytes are written (cut at a character, then "...").
 */
void mcp_write_escaped_name(FILE *f, const char *s, size_t len, size_t max);

/* A /workspace-relative path shown as the sandbox sees it (escaped). */
void mcp_write_path(FILE *f, const char *path);
/* "NAME:\n" and the bytes ("NAME: (empty)" for none). */
void mcp_write_stream(FILE *f, const char *name, const char *data, size_t len);

/*
 * A command's output cut to fit in max bytes once escaped as JSON (a
 * control byte is 6): its start, one line `[... N bytes omitted ...]` and
 * its end, each half within max/2. 0 with *ret NULL when it fits as it is;
 * else *ret is malloc'd. -ENOMEM.
 */
int mcp_cut_output(const char *data, size_t len, size_t max, char **ret, size_t *ret_len);

/*
 * A listing for a model: one line per entry in text (type, size, escaped
 * name, `/` after a directory) and, in structured, the object
 * {"directory", "entries": [{"name" or "name_b64", "type", "size", "mode",
 * "mtime"}], "truncated"}: a name that is well-formed UTF-8 is a JSON
 * string, exact; one that is not has name_b64, its bytes in base64, and no
 * name. Entries stop before the text would pass text_max or the structured
 * object structured_max bytes as JSON; a cut listing (there or by the
 * library's bounds) starts with a line saying how many entries are shown
 * and how to see the rest. Returns the entries shown.
 */
size_t mcp_write_listing(FILE *text, FILE *structured, const char *dir, const psrun_listing *l,
                         size_t text_max, size_t structured_max);

/* "Blocked:" and one line per refusal with what the model can do about it;
 * limits that decided `reason` are left to the Killed: line. */
void mcp_write_blocked(FILE *f, const psrun_result *r, const char *reason);
/* Whether any refusal of `layer` is in the result. */
bool mcp_has_layer(const psrun_result *r, const char *layer);
/* `title`, then the names and addr:port/proto the network refused. */
void mcp_write_refusals(FILE *f, const psrun_network_stats *n, const char *title);
/* The session API's result JSON, without its newline; 0 or -errno. */
int mcp_write_result_json(FILE *f, const psrun_exec_result *res);
