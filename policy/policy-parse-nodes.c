/* SPDX-License-Identifier: MIT */
/*
 * The policy parser's YAML side (policy/policy-parse.h): where an error is
 * and what the offending value was, and reading one node as the type a key
 * expects (scalars, lists, mappings). policy-parse.c has the key table and
 * the documents.
 */
#include "policy/policy-parse.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/cleanup.h"

#define MSG_MAX PSRUN_ERROR_MSG_MAX

/* ---- where an error is, and what the offending value is ---- */

/* "policy.yaml:3:5: mounts[0].target", "-o mounts[0].target" (the CLI's
 * option) or "mounts[0].target" (a key the C API set). */
static void format_where(const struct parse_ctx *ctx, const yaml_node_t *node, const char *path,
                         char *buf, size_t size)
{
        if (!ctx->name)
                snprintf(buf, size, "%s%s", ctx->opt_prefix ? ctx->opt_prefix : "-o ",
                         path ? path : ctx->opt_key);
        else
                snprintf(buf, size, "%s:%zu:%zu%s%s", ctx->name, node->start_mark.line + 1,
                         node->start_mark.column + 1, path ? ": " : "", path ? path : "");
}

int ctx_fail(struct parse_ctx *ctx, const yaml_node_t *node, const char *path, int errnum,
             const char *fmt, ...)
{
        char where[MSG_MAX / 2], what[MSG_MAX];
        va_list ap;

        format_where(ctx, node, path, where, sizeof(where));
        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        return psrun_error_set(ctx->err, errnum, "%.*s: %.*s", MSG_MAX / 2, where, MSG_MAX / 2,
                               what);
}

/* Adds the location to a message a pure check already put in ctx->err. */
int ctx_prefix(struct parse_ctx *ctx, const yaml_node_t *node, const char *path)
{
        char where[MSG_MAX / 2];

        format_where(ctx, node, path, where, sizeof(where));
        return psrun_error_prefix(ctx->err, "%s", where);
}

int unknown_key(struct parse_ctx *ctx, const yaml_node_t *node, const char *path, const char *key,
                const char *suggestion)
{
        char shown[SHOWN_MAX];

        policy_escape(key, shown, sizeof(shown));
        if (suggestion)
                return ctx_fail(ctx, node, path, EINVAL, "unknown key `%s`, did you mean `%s`?",
                                shown, suggestion);
        return ctx_fail(ctx, node, path, EINVAL, "unknown key `%s`", shown);
}

/* ---- YAML nodes ---- */

enum scalar_kind {
        SCALAR_NULL,
        SCALAR_BOOL,
        SCALAR_NUMBER,
        SCALAR_STRING,
};

/* YAML's plain-scalar booleans, restricted to true/false/yes/no. */
static const struct {
        const char *name;
        bool value;
} bool_names[] = {
        {"true", true},   {"True", true}, {"TRUE", true},   {"yes", true},
        {"Yes", true},    {"YES", true},  {"false", false}, {"False", false},
        {"FALSE", false}, {"no", false},  {"No", false},    {"NO", false},
};

static const char *const null_names[] = {"", "~", "null", "Null", "NULL"};

static const char *scalar_text_raw(const yaml_node_t *node)
{
        return (const char *) node->data.scalar.value;
}

static bool is_number_text(const char *s)
{
        size_t digits;

        s += *s == '-' || *s == '+';
        digits = strspn(s, "0123456789");
        s += digits;
        if (*s == '.') {
                size_t frac = strspn(s + 1, "0123456789");
                digits += frac;
                s += 1 + frac;
        }
        if (digits > 0 && (*s == 'e' || *s == 'E')) {
                s++;
                s += *s == '-' || *s == '+';
                if (strspn(s, "0123456789") == 0)
                        return false;
                s += strspn(s, "0123456789");
        }
        return digits > 0 && *s == '\0';
}

/* Quoted scalars are always strings; plain ones resolve as YAML would. */
static enum scalar_kind scalar_kind(const yaml_node_t *node)
{
        const char *s = scalar_text_raw(node);

        if (node->data.scalar.style != YAML_PLAIN_SCALAR_STYLE &&
            node->data.scalar.style != YAML_ANY_SCALAR_STYLE)
                return SCALAR_STRING;
        for (size_t i = 0; i < ARRAY_SIZE(null_names); i++)
                if (streq(s, null_names[i]))
                        return SCALAR_NULL;
        for (size_t i = 0; i < ARRAY_SIZE(bool_names); i++)
                if (streq(s, bool_names[i].name))
                        return SCALAR_BOOL;
        return is_number_text(s) ? SCALAR_NUMBER : SCALAR_STRING;
}

bool node_is_null(const yaml_node_t *node)
{
        return node->type == YAML_SCALAR_NODE && scalar_kind(node) == SCALAR_NULL;
}

const char *node_kind_name(const yaml_node_t *node)
{
        static const char *const scalar_names[] = {
                [SCALAR_NULL] = "null",
                [SCALAR_BOOL] = "a boolean",
                [SCALAR_NUMBER] = "a number",
                [SCALAR_STRING] = "a string",
        };

        if (node->type == YAML_MAPPING_NODE)
                return "a mapping";
        if (node->type == YAML_SEQUENCE_NODE)
                return "a list";
        return scalar_names[scalar_kind(node)];
}

/* The text of a non-null scalar, else "expected <expect>, got <kind>". */
int node_text(struct parse_ctx *ctx, const yaml_node_t *node, const char *path, const char *expect,
              const char **ret)
{
        if (node->type != YAML_SCALAR_NODE || scalar_kind(node) == SCALAR_NULL)
                return ctx_fail(ctx, node, path, EINVAL, "expected %s, got %s", expect,
                                node_kind_name(node));
        if (strlen(scalar_text_raw(node)) != node->data.scalar.length)
                return ctx_fail(ctx, node, path, EINVAL, "must not contain NUL characters");
        *ret = scalar_text_raw(node);
        return 0;
}

int node_bool(struct parse_ctx *ctx, const yaml_node_t *node, const char *path, bool *ret)
{
        static const char expect[] = "a boolean (true or false)";

        if (node->type != YAML_SCALAR_NODE || scalar_kind(node) != SCALAR_BOOL)
                return ctx_fail(ctx, node, path, EINVAL, "expected %s, got %s", expect,
                                node_kind_name(node));
        for (size_t i = 0; i < ARRAY_SIZE(bool_names); i++)
                if (streq(scalar_text_raw(node), bool_names[i].name))
                        *ret = bool_names[i].value;
        return 0;
}

int node_path_with(struct parse_ctx *ctx, const yaml_node_t *node, const char *path, char **ret,
                   int (*normalize)(const char *, char **, psrun_error *))
{
        const char *s;
        char *normalized;
        int r = node_text(ctx, node, path, "a path", &s);

        if (r < 0)
                return r;
        r = normalize(s, &normalized, ctx->err);
        if (r < 0)
                return ctx_prefix(ctx, node, path);
        free(*ret);
        *ret = normalized;
        return 0;
}

int node_path(struct parse_ctx *ctx, const yaml_node_t *node, const char *path, char **ret)
{
        return node_path_with(ctx, node, path, ret, policy_normalize_path);
}

/* List keys take a list, or one scalar as a one-item list. */
int list_length(struct parse_ctx *ctx, const yaml_node_t *node, const char *path,
                const char *expect, size_t *ret)
{
        size_t n;

        if (node->type == YAML_SEQUENCE_NODE)
                n = (size_t) (node->data.sequence.items.top - node->data.sequence.items.start);
        else if (node->type == YAML_SCALAR_NODE && !node_is_null(node))
                n = 1;
        else
                return ctx_fail(ctx, node, path, EINVAL, "expected %s, got %s", expect,
                                node_kind_name(node));
        if (n > POLICY_MAX_LIST)
                return ctx_fail(ctx, node, path, EINVAL, "too many entries (at most %d)",
                                POLICY_MAX_LIST);
        *ret = n;
        return 0;
}

/* Item i of a list node (the node itself when a scalar stands for a list);
 * fills the item's path: "mounts[2]" or "mounts". */
yaml_node_t *list_item(struct parse_ctx *ctx, yaml_node_t *node, const char *key, size_t i,
                       char *path, size_t size)
{
        if (node->type != YAML_SEQUENCE_NODE) {
                snprintf(path, size, "%s", key);
                return node;
        }
        snprintf(path, size, "%s[%zu]", key, i);
        return yaml_document_get_node(ctx->doc, node->data.sequence.items.start[i]);
}

/* The key text of pair i of a mapping; keys must be non-null scalars. */
int mapping_key(struct parse_ctx *ctx, const yaml_node_t *node, size_t i, const char *path,
                yaml_node_t **ret_node, const char **ret)
{
        *ret_node = yaml_document_get_node(ctx->doc, node->data.mapping.pairs.start[i].key);
        return node_text(ctx, *ret_node, path, "a string as key", ret);
}
