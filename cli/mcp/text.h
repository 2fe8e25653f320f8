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

/* A /workspace-relative path shown as the sandbox sees it. */
void mcp_write_path(FILE *f, const char *path);
/* "NAME:\n" and the bytes, ending in a newline. */
void mcp_write_stream(FILE *f, const char *name, const char *data, size_t len);

/* "Blocked:" and one line per refusal with what the model can do about it;
 * limits that decided `reason` are left to the Killed: line. */
void mcp_write_blocked(FILE *f, const psrun_result *r, const char *reason);
/* Whether any refusal of `layer` is in the result. */
bool mcp_has_layer(const psrun_result *r, const char *layer);
/* `title`, then the names and addr:port/proto the network refused. */
void mcp_write_refusals(FILE *f, const psrun_network_stats *n, const char *title);
/* The session API's result JSON, without its newline; 0 or -errno. */
int mcp_write_result_json(FILE *f, const psrun_exec_result *res);
