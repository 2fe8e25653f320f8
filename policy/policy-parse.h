/* SPDX-License-Identifier: MIT */
/*
 * Internal to the policy parser (policy-parse.c and policy-parse-mounts.c):
 * the parse context, the key table entry, and the YAML node helpers both
 * files use. Not part of the public policy.h.
 */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <yaml.h>

#include "policy/policy.h"
#include "common/names.h"

/* Room for a value shown in a message (policy_escape cuts it shorter). */
#define SHOWN_MAX     128
#define PATH_TEXT_MAX 96

/* ---- where an error is, and what the offending value is ---- */

struct parse_ctx {
        const char *name;    /* document name for "name:line:col", NULL for -o */
        const char *opt_key; /* -o: the key as typed (escaped), for messages */
        /* -o: what messages put before the key: "-o " for the CLI's
         * option, "" for the C API's key (psrun_policy_set). */
        const char *opt_prefix;
        yaml_document_t *doc;
        psrun_error *err;
};

int ctx_fail(struct parse_ctx *ctx, const yaml_node_t *node, const char *path, int errnum,
             const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Adds the location to a message a pure check already put in ctx->err. */
int ctx_prefix(struct parse_ctx *ctx, const yaml_node_t *node, const char *path);
int unknown_key(struct parse_ctx *ctx, const yaml_node_t *node, const char *path, const char *key,
                const char *suggestion);

/* ---- YAML nodes (policy/policy-parse-nodes.c) ---- */

/* "~", "null", an empty plain scalar; and a node's kind for messages. */
bool node_is_null(const yaml_node_t *node);
const char *node_kind_name(const yaml_node_t *node);

/* The text of a non-null scalar, else "expected <expect>, got <kind>". */
int node_text(struct parse_ctx *ctx, const yaml_node_t *node, const char *path, const char *expect,
              const char **ret);
int node_bool(struct parse_ctx *ctx, const yaml_node_t *node, const char *path, bool *ret);
int node_path_with(struct parse_ctx *ctx, const yaml_node_t *node, const char *path, char **ret,
                   int (*normalize)(const char *, char **, psrun_error *));
int node_path(struct parse_ctx *ctx, const yaml_node_t *node, const char *path, char **ret);

/* List keys take a list, or one scalar as a one-item list. */
int list_length(struct parse_ctx *ctx, const yaml_node_t *node, const char *path,
                const char *expect, size_t *ret);
/* Item i of a list node (the node itself when a scalar stands for a list);
 * fills the item's path: "mounts[2]" or "mounts". */
yaml_node_t *list_item(struct parse_ctx *ctx, yaml_node_t *node, const char *key, size_t i,
                       char *path, size_t size);

static inline size_t mapping_length(const yaml_node_t *node)
{
        return (size_t) (node->data.mapping.pairs.top - node->data.mapping.pairs.start);
}

/* The key text of pair i of a mapping; keys must be non-null scalars. */
int mapping_key(struct parse_ctx *ctx, const yaml_node_t *node, size_t i, const char *path,
                yaml_node_t **ret_node, const char **ret);

static inline yaml_node_t *mapping_value(struct parse_ctx *ctx, const yaml_node_t *node, size_t i)
{
        return yaml_document_get_node(ctx->doc, node->data.mapping.pairs.start[i].value);
}

/* ---- the key table ---- */

struct policy_key;
typedef int (*key_parse_fn)(struct parse_ctx *ctx, const struct policy_key *key, yaml_node_t *node,
                            struct policy *p);

struct policy_key {
        const char *name;
        key_parse_fn parse;
        size_t offset;
        const char *expect; /* "a size": for "expected a size, got a list" */
        /* numbers (uint64_t fields): syntax, inclusive bounds, how to show them */
        int (*parse_number)(const char *s, uint64_t *ret);
        const char *hint; /* " (use e.g. 512M, 2G)" */
        uint64_t min, max;
        void (*format)(uint64_t v, char *buf, size_t size);
        /* enums: the name of value i, NULL past the last */
        const char *(*enum_name)(int v);
        /* strings: check and copy */
        int (*normalize)(const char *in, char **ret, psrun_error *err);
        /* lists of strings: where the count is */
        size_t count_offset;
};

/* policy-parse-mounts.c: the `mounts` key. */
int parse_mounts_key(struct parse_ctx *ctx, const struct policy_key *key, yaml_node_t *node,
                     struct policy *p);
