/* SPDX-License-Identifier: MIT */
/*
 * One key's value as text, in the vocabulary the parser reads
 * (policy_set_option, `-o`, psrun_policy_set): what the public getter
 * psrun_policy_get returns. Setting the text back gives the same value:
 * scalars as `-o` takes them (512M, 300000ms, full), a string quoted only
 * where `-o` would read it as something else, lists and mappings as JSON,
 * which is a YAML flow node. The formats are policy-json.c's, key by key.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/json.h"
#include "common/names.h"
#include "policy/policy.h"

enum value_kind {
        V_ENUM,
        V_SIZE,
        V_COUNT,
        V_DURATION,
        V_CPUS,
        V_BOOL,
        V_STRING, /* char *; `fallback` when NULL */
        V_STRV,   /* char **, its count at count_offset */
        V_PORTS,
        V_APPROVE,
        V_ENV,
        V_USER,
        V_MOUNTS,
};

struct value_key {
        const char *name;
        enum value_kind kind;
        size_t offset;
        size_t count_offset;
        const char *(*enum_name)(const struct policy *p, size_t offset);
        const char *fallback;
};

#define FIELD(p, k, type) ((const type *) (const void *) ((const char *) (p) + (k)->offset))

static const char *network_name(const struct policy *p, size_t offset)
{
        return policy_network_to_string(
                *(const enum policy_network *) (const void *) ((const char *) p + offset));
}

static const char *backend_name(const struct policy *p, size_t offset)
{
        return policy_backend_to_string(
                *(const enum policy_backend *) (const void *) ((const char *) p + offset));
}

static const char *platform_name(const struct policy *p, size_t offset)
{
        return policy_gvisor_platform_to_string(
                *(const enum policy_gvisor_platform *) (const void *) ((const char *) p + offset));
}

static const char *layer_name(const struct policy *p, size_t offset)
{
        return policy_layer_to_string(
                *(const enum policy_layer *) (const void *) ((const char *) p + offset));
}

static const char *violations_name(const struct policy *p, size_t offset)
{
        return policy_violations_to_string(
                *(const enum policy_violations *) (const void *) ((const char *) p + offset));
}

static const char *limits_name(const struct policy *p, size_t offset)
{
        return policy_limits_to_string(
                *(const enum policy_limits *) (const void *) ((const char *) p + offset));
}

#define AT(field)    .offset = offsetof(struct policy, field)
#define COUNT(field) .count_offset = offsetof(struct policy, field)
#define ENUM(fn)     V_ENUM, .enum_name = (fn)

/* Every key of the parser's table (tests/unit/test_policy_get.c checks). */
static const struct value_key value_keys[] = {
        {"network", ENUM(network_name), AT(network)},
        {"allow_domains", V_STRV, AT(allow_domains), COUNT(n_allow_domains)},
        {"allow_ports", V_PORTS, AT(allow_ports)},
        {"allow_cidrs", V_STRV, AT(allow_cidrs), COUNT(n_allow_cidrs)},
        {"allow_private", V_STRV, AT(allow_private), COUNT(n_allow_private)},
        {"dns_upstream", V_STRV, AT(dns_upstream), COUNT(n_dns_upstream)},
        {"dns_min_ttl", V_DURATION, AT(dns_min_ttl_ms)},
        {"dns_max_ttl", V_DURATION, AT(dns_max_ttl_ms)},
        {"network_pool", V_STRING, AT(network_pool)},
        {"network_log", V_STRING, AT(network_log)},
        {"name_check", V_BOOL, AT(name_check)},
        {"install_network", ENUM(network_name), AT(install_network)},
        {"install_allow_domains", V_STRV, AT(install_allow_domains),
         COUNT(n_install_allow_domains)},
        {"pip_index_url", V_STRING, AT(pip_index_url)},
        {"npm_registry", V_STRING, AT(npm_registry)},
        {"approve", V_APPROVE, AT(approve)},
        {"memory_limit", V_SIZE, AT(memory_limit)},
        {"cpu_limit", V_CPUS, AT(cpu_limit)},
        {"pids_limit", V_COUNT, AT(pids_limit)},
        {"disk_limit", V_SIZE, AT(disk_limit)},
        {"timeout", V_DURATION, AT(timeout_ms)},
        {"idle_timeout", V_DURATION, AT(idle_timeout_ms)},
        {"lifetime", V_DURATION, AT(lifetime_ms)},
        {"output_limit", V_SIZE, AT(output_limit)},
        {"background_limit", V_COUNT, AT(background_limit)},
        {"env", V_ENV, AT(env)},
        {"workdir", V_STRING, AT(workdir), .fallback = POLICY_DEFAULT_WORKDIR},
        {"readonly_rootfs", V_BOOL, AT(readonly_rootfs)},
        {"user", V_USER, AT(uid)},
        {"backend", ENUM(backend_name), AT(backend)},
        {"gvisor_platform", ENUM(platform_name), AT(gvisor_platform)},
        {"mounts", V_MOUNTS, AT(mounts)},
        {"hostname", V_STRING, AT(hostname), .fallback = POLICY_DEFAULT_HOSTNAME},
        {"landlock", ENUM(layer_name), AT(landlock)},
        {"apparmor", ENUM(layer_name), AT(apparmor)},
        {"apparmor_profile", V_STRING, AT(apparmor_profile)},
        {"violations", ENUM(violations_name), AT(violations)},
        {"limits", ENUM(limits_name), AT(limits)},
        {"pty_limit", V_COUNT, AT(pty_limit)},
        {"inotify_limit", V_COUNT, AT(inotify_limit)},
        {"inotify_watch_limit", V_COUNT, AT(inotify_watch_limit)},
        {"fanotify_limit", V_COUNT, AT(fanotify_limit)},
        {"fanotify_mark_limit", V_COUNT, AT(fanotify_mark_limit)},
        {"namespace_limit", V_COUNT, AT(namespace_limit)},
        {"sigpending_limit", V_COUNT, AT(sigpending_limit)},
        {"msgqueue_limit", V_SIZE, AT(msgqueue_limit)},
        {"image", V_STRING, AT(image)},
        {"image_store", V_STRING, AT(image_store), .fallback = POLICY_DEFAULT_IMAGE_STORE},
        {"registry_mirrors", V_STRV, AT(registry_mirrors), COUNT(n_registry_mirrors)},
        {"insecure_registries", V_STRV, AT(insecure_registries), COUNT(n_insecure_registries)},
        {"image_max_size", V_SIZE, AT(image_max_size)},
        {"tools", V_STRV, AT(tools), COUNT(n_tools)},
};

/* Whether `-o key=s` reads s back as this string: it is one plain scalar
 * unless it opens like a flow node or a quoted one, has blanks at either
 * end (trimmed) or is YAML's null. */
static bool plain_safe(const char *s)
{
        static const char *const nulls[] = {"~", "null", "Null", "NULL"};
        size_t len = strlen(s);
        if (len == 0 || strchr("[{\"' \t", s[0]) || s[len - 1] == ' ' || s[len - 1] == '\t')
                return false;
        for (size_t i = 0; i < ARRAY_SIZE(nulls); i++)
                if (streq(s, nulls[i]))
                        return false;
        for (const char *c = s; *c; c++)
                if ((unsigned char) *c < 0x20 || *c == 0x7f)
                        return false;
        return true;
}

static void write_string(FILE *f, const char *s)
{
        if (plain_safe(s))
                fputs(s, f);
        else
                json_write_string(f, s);
}

static void write_value(FILE *f, const struct policy *p, const struct value_key *k)
{
        char buf[64];
        switch (k->kind) {
        case V_ENUM:
                fputs(k->enum_name(p, k->offset), f);
                break;
        case V_SIZE:
                format_size(*FIELD(p, k, uint64_t), buf, sizeof(buf));
                fputs(buf, f);
                break;
        case V_COUNT:
                fprintf(f, "%" PRIu64, *FIELD(p, k, uint64_t));
                break;
        case V_DURATION:
                /* As `psrun policy` writes it: exact, whatever the unit. */
                fprintf(f, "%" PRIu64 "ms", *FIELD(p, k, uint64_t));
                break;
        case V_CPUS:
                format_cpus(*FIELD(p, k, double), buf, sizeof(buf));
                fputs(buf, f);
                break;
        case V_BOOL:
                fputs(*FIELD(p, k, bool) ? "true" : "false", f);
                break;
        case V_STRING: {
                const char *s = *FIELD(p, k, char *);
                if (!s)
                        s = k->fallback;
                /* Unset and no default: nothing to set back. */
                if (s)
                        write_string(f, s);
                break;
        }
        case V_STRV: {
                char *const *v = *(char **const *) (const void *) ((const char *) p + k->offset);
                size_t n = *(const size_t *) (const void *) ((const char *) p + k->count_offset);
                fputc('[', f);
                for (size_t i = 0; i < n; i++) {
                        fputs(i ? ", " : "", f);
                        json_write_string(f, v[i]);
                }
                fputc(']', f);
                break;
        }
        case V_PORTS:
                policy_json_write_ports(f, p);
                break;
        case V_APPROVE:
                policy_json_write_approve(f, p);
                break;
        case V_ENV:
                policy_json_write_env(f, p);
                break;
        case V_USER:
                fprintf(f, "%u:%u", (unsigned) p->uid, (unsigned) p->gid);
                break;
        case V_MOUNTS:
                fputc('[', f);
                for (size_t i = 0; i < p->n_mounts; i++) {
                        fputs(i ? ", {\"source\": " : "{\"source\": ", f);
                        json_write_string(f, p->mounts[i].source);
                        fputs(", \"target\": ", f);
                        json_write_string(f, p->mounts[i].target);
                        fprintf(f, ", \"readonly\": %s}", p->mounts[i].readonly ? "true" : "false");
                }
                fputc(']', f);
                break;
        }
}

int policy_get_value(const struct policy *p, const char *key, char **ret, psrun_error *err)
{
        char shown[128];
        const struct value_key *k = NULL;
        for (size_t i = 0; i < ARRAY_SIZE(value_keys) && !k; i++)
                if (streq(value_keys[i].name, key))
                        k = &value_keys[i];
        if (!k) {
                const char *hint = policy_suggest_key(key);
                policy_escape(key, shown, sizeof(shown));
                if (hint)
                        return psrun_error_set(err, EINVAL,
                                               "policy: unknown key `%s`, did you mean `%s`?",
                                               shown, hint);
                return psrun_error_set(err, EINVAL, "policy: unknown key `%s`", shown);
        }
        _cleanup_free_ char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        if (!f)
                return psrun_error_errno(err, ENOMEM, "policy.%s", k->name);
        write_value(f, p, k);
        bool failed = ferror(f);
        if (fclose(f) != 0 || failed || !text)
                return psrun_error_errno(err, ENOMEM, "policy.%s", k->name);
        *ret = TAKE_PTR(text);
        return 0;
}
