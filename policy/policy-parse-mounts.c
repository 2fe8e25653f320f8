/* SPDX-License-Identifier: MIT */
/*
 * The `mounts` key of the policy parser: each item is a mapping
 * {source, target, readonly} or a "SOURCE:TARGET[:ro|rw]" string.
 */
#include "policy/policy-parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/cleanup.h"

typedef int (*mount_field_fn)(struct parse_ctx *ctx, const yaml_node_t *node, const char *path,
                              void *field);

static int mount_path_field(struct parse_ctx *ctx, const yaml_node_t *node, const char *path,
                            void *field)
{
        return node_path(ctx, node, path, field);
}

static int mount_source_field(struct parse_ctx *ctx, const yaml_node_t *node, const char *path,
                              void *field)
{
        return node_path_with(ctx, node, path, field, policy_normalize_source);
}

static int mount_bool_field(struct parse_ctx *ctx, const yaml_node_t *node, const char *path,
                            void *field)
{
        return node_bool(ctx, node, path, field);
}

static const struct mount_key {
        const char *name;
        mount_field_fn parse;
        size_t offset;
        bool required;
} mount_keys[] = {
        {"source", mount_source_field, offsetof(struct policy_mount, source), true},
        {"target", mount_path_field, offsetof(struct policy_mount, target), true},
        {"readonly", mount_bool_field, offsetof(struct policy_mount, readonly), false},
};

static const char *const mount_modes[] = {"ro", "rw"};

/* {source: /a, target: /b, readonly: false}; *target_node is where target was. */
static int parse_mount_mapping(struct parse_ctx *ctx, yaml_node_t *node, const char *path,
                               struct policy_mount *m, const yaml_node_t **target_node)
{
        const char *names[ARRAY_SIZE(mount_keys)];
        bool seen[ARRAY_SIZE(mount_keys)] = {false};
        char field_path[PATH_TEXT_MAX];
        int r;

        for (size_t k = 0; k < ARRAY_SIZE(mount_keys); k++)
                names[k] = mount_keys[k].name;
        for (size_t i = 0; i < mapping_length(node); i++) {
                yaml_node_t *key_node;
                const char *name;
                size_t k;

                r = mapping_key(ctx, node, i, path, &key_node, &name);
                if (r < 0)
                        return r;
                for (k = 0; k < ARRAY_SIZE(mount_keys) && !streq(name, mount_keys[k].name); k++)
                        ;
                if (k == ARRAY_SIZE(mount_keys))
                        return unknown_key(ctx, key_node, path, name,
                                           policy_suggest_from(name, names, ARRAY_SIZE(names)));
                if (seen[k])
                        return ctx_fail(ctx, key_node, path, EINVAL, "duplicate key `%s`", name);
                seen[k] = true;
                snprintf(field_path, sizeof(field_path), "%s.%s", path, name);
                yaml_node_t *value = mapping_value(ctx, node, i);
                r = mount_keys[k].parse(ctx, value, field_path, (char *) m + mount_keys[k].offset);
                if (r < 0)
                        return r;
                if (mount_keys[k].offset == offsetof(struct policy_mount, target))
                        *target_node = value;
        }
        for (size_t k = 0; k < ARRAY_SIZE(mount_keys); k++)
                if (mount_keys[k].required && !seen[k])
                        return ctx_fail(ctx, node, path, EINVAL, "missing `%s`",
                                        mount_keys[k].name);
        return 0;
}

/* "SOURCE:TARGET[:ro|rw]". */
static int parse_mount_string(struct parse_ctx *ctx, yaml_node_t *node, const char *path,
                              struct policy_mount *m)
{
        char shown[SHOWN_MAX], field_path[PATH_TEXT_MAX];
        const char *s, *c1, *c2;
        int r = node_text(ctx, node, path, "SOURCE:TARGET[:ro|rw] or a mapping", &s);

        if (r < 0)
                return r;
        c1 = strchr(s, ':');
        if (!c1)
                return ctx_fail(ctx, node, path, EINVAL, "\"%s\" is not SOURCE:TARGET[:ro|rw]",
                                policy_escape(s, shown, sizeof(shown)));
        c2 = strchr(c1 + 1, ':');
        if (c2) {
                size_t mode = 0;
                while (mode < ARRAY_SIZE(mount_modes) && !streq(mount_modes[mode], c2 + 1))
                        mode++;
                if (mode == ARRAY_SIZE(mount_modes))
                        return ctx_fail(ctx, node, path, EINVAL, "mode `%s` is not one of ro, rw",
                                        policy_escape(c2 + 1, shown, sizeof(shown)));
                m->readonly = mode == 0;
        }

        _cleanup_free_ char *source = strndup(s, (size_t) (c1 - s));
        _cleanup_free_ char *target = c2 ? strndup(c1 + 1, (size_t) (c2 - c1 - 1)) : strdup(c1 + 1);
        if (!source || !target)
                return psrun_error_errno(ctx->err, ENOMEM, "mounts");
        snprintf(field_path, sizeof(field_path), "%s.source", path);
        if (policy_normalize_source(source, &m->source, ctx->err) < 0)
                return ctx_prefix(ctx, node, field_path);
        snprintf(field_path, sizeof(field_path), "%s.target", path);
        if (policy_normalize_path(target, &m->target, ctx->err) < 0)
                return ctx_prefix(ctx, node, field_path);
        return 0;
}

/* mounts from a later source add to the list, as repeated -v do for docker. */
int parse_mounts_key(struct parse_ctx *ctx, const struct policy_key *key, yaml_node_t *node,
                     struct policy *p)
{
        char path[PATH_TEXT_MAX], target_path[PATH_TEXT_MAX + 8], shown[SHOWN_MAX];
        size_t n;
        int r = list_length(ctx, node, key->name, key->expect, &n);

        if (r < 0)
                return r;
        struct policy_mount *grown = realloc(p->mounts, (p->n_mounts + n + 1) * sizeof(*grown));
        if (!grown)
                return psrun_error_errno(ctx->err, ENOMEM, "%s", key->name);
        p->mounts = grown;
        memset(p->mounts + p->n_mounts, 0, (n + 1) * sizeof(*grown));
        size_t first = p->n_mounts;
        for (size_t i = 0; i < n; i++) {
                yaml_node_t *item = list_item(ctx, node, key->name, i, path, sizeof(path));
                const yaml_node_t *target_node = item;
                /* Owned by p from here on, so a failure below frees it. */
                struct policy_mount *m = &p->mounts[p->n_mounts++];

                m->readonly = true;
                if (item->type == YAML_MAPPING_NODE)
                        r = parse_mount_mapping(ctx, item, path, m, &target_node);
                else
                        r = parse_mount_string(ctx, item, path, m);
                if (r < 0)
                        return r;
                snprintf(target_path, sizeof(target_path), "%s.target", path);
                if (policy_check_mount_target(m->target, ctx->err) < 0)
                        return ctx_prefix(ctx, target_node, target_path);
                for (size_t j = 0; j < first + i; j++) {
                        if (!streq(p->mounts[j].target, m->target))
                                continue;
                        policy_escape(m->target, shown, sizeof(shown));
                        if (j < first)
                                return ctx_fail(ctx, target_node, target_path, EINVAL,
                                                "\"%s\" is already the target of an earlier "
                                                "mount",
                                                shown);
                        return ctx_fail(ctx, target_node, target_path, EINVAL,
                                        "\"%s\" is already the target of %s[%zu]", shown, key->name,
                                        j - first);
                }
        }
        return 0;
}
