/* SPDX-License-Identifier: MIT */
/*
 * The policy parser: a YAML (or JSON) document or one `-o key=value` in, a
 * validated struct policy out. Every key dispatches through policy_keys[]
 * below. A source is applied to a copy of the policy, and the copy replaces
 * the caller's struct only when the whole source was good: a bad line never
 * leaves a half-applied policy behind.
 *
 * The walk never recurses beyond the shape of the vocabulary (top level ->
 * list -> mount item -> scalar), so anchors, aliases and even cyclic
 * documents cannot make it loop or blow up.
 */
#include "policy/policy-parse.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "common/cleanup.h"

/* ---- the key table ---- */

#define FIELD(p, key, type) ((type *) (void *) ((char *) (p) + (key)->offset))

static void join_names(const struct policy_key *key, char *buf, size_t size)
{
        const char *name;
        size_t o = 0;

        buf[0] = '\0';
        for (int i = 0; (name = key->enum_name(i)) && o < size; i++)
                o += (size_t) snprintf(buf + o, size - o, "%s%s", i ? ", " : "", name);
}

static int enum_value(const struct policy_key *key, const char *s)
{
        const char *name;

        for (int i = 0; (name = key->enum_name(i)); i++)
                if (streq(name, s))
                        return i;
        return -EINVAL;
}

static int parse_enum(struct parse_ctx *ctx, const struct policy_key *key, yaml_node_t *node,
                      struct policy *p)
{
        char names[128], shown[SHOWN_MAX], expect[160];
        const char *s;
        int r, v;

        join_names(key, names, sizeof(names));
        snprintf(expect, sizeof(expect), "one of %s", names);
        r = node_text(ctx, node, key->name, expect, &s);
        if (r < 0)
                return r;
        v = enum_value(key, s);
        if (v < 0)
                return ctx_fail(ctx, node, key->name, EINVAL, "`%s` is not one of %s",
                                policy_escape(s, shown, sizeof(shown)), names);
        *FIELD(p, key, int) = v;
        return 0;
}

/* Sizes, counts, durations: "-5" is a number, just below the minimum. */
static int parse_number_key(struct parse_ctx *ctx, const struct policy_key *key, yaml_node_t *node,
                            struct policy *p)
{
        char shown[SHOWN_MAX], bound[32];
        const char *s;
        uint64_t v = 0;
        int r = node_text(ctx, node, key->name, key->expect, &s);

        if (r < 0)
                return r;
        policy_escape(s, shown, sizeof(shown));
        r = key->parse_number(s[0] == '-' ? s + 1 : s, &v);
        if (r == -EINVAL)
                return ctx_fail(ctx, node, key->name, EINVAL, "\"%s\" is not %s%s", shown,
                                key->expect, key->hint);
        if (r == 0 && (s[0] == '-' || v < key->min)) {
                if (key->min == 0)
                        return ctx_fail(ctx, node, key->name, ERANGE, "must not be negative");
                if (key->min == 1)
                        return ctx_fail(ctx, node, key->name, ERANGE, "must be greater than 0");
                key->format(key->min, bound, sizeof(bound));
                return ctx_fail(ctx, node, key->name, ERANGE, "\"%s\" is too small (at least %s)",
                                shown, bound);
        }
        if (r < 0 || v > key->max) {
                key->format(key->max, bound, sizeof(bound));
                return ctx_fail(ctx, node, key->name, ERANGE, "\"%s\" is too large (at most %s)",
                                shown, bound);
        }
        *FIELD(p, key, uint64_t) = v;
        return 0;
}

static int parse_cpu_key(struct parse_ctx *ctx, const struct policy_key *key, yaml_node_t *node,
                         struct policy *p)
{
        char shown[SHOWN_MAX];
        const char *s;
        double v = 0;
        int r = node_text(ctx, node, key->name, key->expect, &s);

        if (r < 0)
                return r;
        r = parse_cpus(s[0] == '-' ? s + 1 : s, &v);
        if (r == -EINVAL)
                return ctx_fail(ctx, node, key->name, EINVAL,
                                "\"%s\" is not a number of CPUs (use e.g. 2, 0.5)",
                                policy_escape(s, shown, sizeof(shown)));
        if (r == 0 && (s[0] == '-' || v <= 0))
                return ctx_fail(ctx, node, key->name, ERANGE, "must be greater than 0");
        if (r < 0 || v > POLICY_CPU_LIMIT_MAX)
                return ctx_fail(ctx, node, key->name, ERANGE, "\"%s\" is too large (at most %d)",
                                policy_escape(s, shown, sizeof(shown)), POLICY_CPU_LIMIT_MAX);
        *FIELD(p, key, double) = v;
        return 0;
}

static int parse_bool_key(struct parse_ctx *ctx, const struct policy_key *key, yaml_node_t *node,
                          struct policy *p)
{
        return node_bool(ctx, node, key->name, FIELD(p, key, bool));
}

/* A boolean that also reads `on` and `off` (name_check: off). */
static int parse_on_off_key(struct parse_ctx *ctx, const struct policy_key *key, yaml_node_t *node,
                            struct policy *p)
{
        if (node->type == YAML_SCALAR_NODE && node->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
                const char *s = (const char *) node->data.scalar.value;
                if (strcmp(s, "on") == 0 || strcmp(s, "off") == 0) {
                        *FIELD(p, key, bool) = s[1] == 'n';
                        return 0;
                }
        }
        return node_bool(ctx, node, key->name, FIELD(p, key, bool));
}

static int parse_string_key(struct parse_ctx *ctx, const struct policy_key *key, yaml_node_t *node,
                            struct policy *p)
{
        char **field = FIELD(p, key, char *);
        char *value;
        const char *s;
        int r = node_text(ctx, node, key->name, key->expect, &s);

        if (r < 0)
                return r;
        r = key->normalize(s, &value, ctx->err);
        if (r < 0)
                return ctx_prefix(ctx, node, key->name);
        free(*field);
        *field = value;
        return 0;
}

static int parse_user_key(struct parse_ctx *ctx, const struct policy_key *key, yaml_node_t *node,
                          struct policy *p)
{
        const char *s;
        int r = node_text(ctx, node, key->name, key->expect, &s);

        if (r < 0)
                return r;
        if (policy_parse_user(s, &p->uid, &p->gid, ctx->err) < 0)
                return ctx_prefix(ctx, node, key->name);
        return 0;
}

struct domain_list {
        char ***v;
        size_t *n;
};

static int add_domain(struct domain_list l, char *domain);
static int add_preset(struct parse_ctx *ctx, yaml_node_t *item, const char *path, const char *name,
                      struct domain_list l);

/* Adds the list's names (without duplicates); a preset ("@pypi") adds its
 * names. */
static int parse_domain_list(struct parse_ctx *ctx, const struct policy_key *key, yaml_node_t *node,
                             struct domain_list l)
{
        char path[PATH_TEXT_MAX];
        size_t n;
        int r = list_length(ctx, node, key->name, key->expect, &n);

        if (r < 0)
                return r;
        char **grown = realloc(*l.v, (*l.n + n + 1) * sizeof(char *));
        if (!grown)
                return psrun_error_errno(ctx->err, ENOMEM, "%s", key->name);
        *l.v = grown;
        (*l.v)[*l.n] = NULL;
        for (size_t i = 0; i < n; i++) {
                yaml_node_t *item = list_item(ctx, node, key->name, i, path, sizeof(path));
                const char *s;
                char *domain;

                r = node_text(ctx, item, path, "a domain name", &s);
                if (r < 0)
                        return r;
                if (s[0] == '@') {
                        r = add_preset(ctx, item, path, s, l);
                        if (r < 0)
                                return r;
                        continue;
                }
                if (policy_normalize_domain(s, &domain, ctx->err) < 0)
                        return ctx_prefix(ctx, item, path);
                r = add_domain(l, domain);
                if (r < 0)
                        return psrun_error_errno(ctx->err, ENOMEM, "%s", key->name);
        }
        return 0;
}

/* allow_domains from a later source adds to the list. */
static int parse_domains_key(struct parse_ctx *ctx, const struct policy_key *key, yaml_node_t *node,
                             struct policy *p)
{
        return parse_domain_list(ctx, key, node,
                                 (struct domain_list){&p->allow_domains, &p->n_allow_domains});
}

/* install_allow_domains replaces its default (@pypi, @npm) and what an
 * earlier source set: an operator who names a mirror wants only it. */
static int parse_install_domains_key(struct parse_ctx *ctx, const struct policy_key *key,
                                     yaml_node_t *node, struct policy *p)
{
        _cleanup_strv_free_ char **v = NULL;
        size_t n = 0;
        int r = parse_domain_list(ctx, key, node, (struct domain_list){&v, &n});
        if (r < 0)
                return r;
        if (!v && !(v = calloc(1, sizeof(char *))))
                return psrun_error_errno(ctx->err, ENOMEM, "%s", key->name);
        strv_free(p->install_allow_domains);
        p->install_allow_domains = TAKE_PTR(v);
        p->n_install_allow_domains = n;
        p->install_allow_domains_given = true;
        return 0;
}

/* Takes domain; the list has room (or is grown here). */
static int add_domain(struct domain_list l, char *domain)
{
        for (size_t j = 0; j < *l.n; j++)
                if (streq((*l.v)[j], domain)) {
                        free(domain);
                        return 0;
                }
        char **grown = realloc(*l.v, (*l.n + 2) * sizeof(char *));
        if (!grown) {
                free(domain);
                return -ENOMEM;
        }
        *l.v = grown;
        (*l.v)[(*l.n)++] = domain;
        (*l.v)[*l.n] = NULL;
        return 0;
}

/* "@pypi" stands for its names: `psrun policy` prints them expanded. */
static int add_preset(struct parse_ctx *ctx, yaml_node_t *item, const char *path, const char *name,
                      struct domain_list l)
{
        char shown[SHOWN_MAX];
        const char *const *names = policy_domain_preset(name);
        if (!names) {
                const char *hint = policy_suggest_from(name, policy_domain_preset_names, 5);
                policy_escape(name, shown, sizeof(shown));
                if (hint)
                        return ctx_fail(ctx, item, path, EINVAL,
                                        "unknown preset `%s`, did you mean `%s`?", shown, hint);
                return ctx_fail(ctx, item, path, EINVAL,
                                "unknown preset `%s` (known: @pypi @npm @crates @go @github)",
                                shown);
        }
        for (; *names; names++) {
                char *d = strdup(*names);
                if (!d || add_domain(l, d) < 0)
                        return psrun_error_errno(ctx->err, ENOMEM, "%s", path);
        }
        return 0;
}

/* approve: the actions that need the embedder's yes; replaces. */
static int parse_approve_key(struct parse_ctx *ctx, const struct policy_key *key, yaml_node_t *node,
                             struct policy *p)
{
        char path[PATH_TEXT_MAX], shown[SHOWN_MAX];
        size_t n;
        int r = list_length(ctx, node, key->name, key->expect, &n);

        if (r < 0)
                return r;
        uint32_t bits = 0;
        for (size_t i = 0; i < n; i++) {
                yaml_node_t *item = list_item(ctx, node, key->name, i, path, sizeof(path));
                const char *s;

                r = node_text(ctx, item, path, "an action name", &s);
                if (r < 0)
                        return r;
                int bit = policy_action_from_string(s);
                if (bit < 0) {
                        const char *names[8];
                        size_t k = 0;
                        while (k < ARRAY_SIZE(names) && (names[k] = policy_action_name_at(k, NULL)))
                                k++;
                        const char *hint = policy_suggest_from(s, names, k);
                        policy_escape(s, shown, sizeof(shown));
                        if (hint)
                                return ctx_fail(ctx, item, path, EINVAL,
                                                "unknown action `%s`, did you mean `%s`?", shown,
                                                hint);
                        return ctx_fail(ctx, item, path, EINVAL,
                                        "unknown action `%s` (known: install)", shown);
                }
                bits |= (uint32_t) bit;
        }
        p->approve = bits;
        return 0;
}

/* A list of strings, each checked and normalized by key->normalize; a later
 * source replaces the list. */
static int parse_strv_key(struct parse_ctx *ctx, const struct policy_key *key, yaml_node_t *node,
                          struct policy *p)
{
        char path[PATH_TEXT_MAX];
        size_t n;
        int r = list_length(ctx, node, key->name, key->expect, &n);

        if (r < 0)
                return r;
        _cleanup_strv_free_ char **v = calloc(n + 1, sizeof(char *));
        if (!v)
                return psrun_error_errno(ctx->err, ENOMEM, "%s", key->name);
        for (size_t i = 0; i < n; i++) {
                yaml_node_t *item = list_item(ctx, node, key->name, i, path, sizeof(path));
                const char *s;

                r = node_text(ctx, item, path, key->expect, &s);
                if (r < 0)
                        return r;
                if (key->normalize(s, &v[i], ctx->err) < 0)
                        return ctx_prefix(ctx, item, path);
        }
        char ***field = FIELD(p, key, char **);
        size_t *count = (size_t *) (void *) ((char *) p + key->count_offset);
        strv_free(*field);
        *field = TAKE_PTR(v);
        *count = n;
        return 0;
}

/* allow_ports: a list of port numbers; replaces the default 80, 443. */
static int parse_ports_key(struct parse_ctx *ctx, const struct policy_key *key, yaml_node_t *node,
                           struct policy *p)
{
        char path[PATH_TEXT_MAX], shown[SHOWN_MAX];
        uint16_t ports[POLICY_MAX_PORTS];
        size_t n;
        int r = list_length(ctx, node, key->name, key->expect, &n);

        if (r < 0)
                return r;
        if (n > POLICY_MAX_PORTS)
                return ctx_fail(ctx, node, key->name, E2BIG, "at most %d ports", POLICY_MAX_PORTS);
        for (size_t i = 0; i < n; i++) {
                yaml_node_t *item = list_item(ctx, node, key->name, i, path, sizeof(path));
                const char *s;
                uint64_t v;

                r = node_text(ctx, item, path, "a port number", &s);
                if (r < 0)
                        return r;
                if (parse_uint64(s, &v) < 0 || v == 0 || v > 65535)
                        return ctx_fail(ctx, item, path, ERANGE,
                                        "\"%s\" is not a port (1 to 65535)",
                                        policy_escape(s, shown, sizeof(shown)));
                ports[i] = (uint16_t) v;
        }
        memcpy(p->allow_ports, ports, n * sizeof(ports[0]));
        p->n_allow_ports = n;
        return 0;
}

/* Sets name to value (NULL: inherit), replacing an earlier entry of the same
 * name in place, so the list keeps first-seen order and unique names. */
static int env_set(struct policy *p, const char *name, size_t name_len, const char *value)
{
        _cleanup_free_ char *v = NULL;

        if (value && !(v = strdup(value)))
                return -ENOMEM;
        for (size_t i = 0; i < p->n_env; i++)
                if (strlen(p->env[i].name) == name_len &&
                    strncmp(p->env[i].name, name, name_len) == 0) {
                        free(p->env[i].value);
                        p->env[i].value = TAKE_PTR(v);
                        return 0;
                }
        if (p->n_env >= POLICY_MAX_LIST)
                return -E2BIG;
        _cleanup_free_ char *n = strndup(name, name_len);
        if (!n)
                return -ENOMEM;
        struct policy_env *env = reallocarray(p->env, p->n_env + 1, sizeof(*env));
        if (!env)
                return -ENOMEM;
        p->env = env;
        p->env[p->n_env++] = (struct policy_env){.name = TAKE_PTR(n), .value = TAKE_PTR(v)};
        return 0;
}

static int env_set_checked(struct parse_ctx *ctx, const yaml_node_t *node, const char *path,
                           struct policy *p, const char *name, size_t name_len, const char *value)
{
        _cleanup_free_ char *n = strndup(name, name_len);
        int r;

        if (!n)
                return psrun_error_errno(ctx->err, ENOMEM, "env");
        if (policy_check_env_name(n, ctx->err) < 0)
                return ctx_prefix(ctx, node, path);
        r = env_set(p, name, name_len, value);
        if (r == -E2BIG)
                return ctx_fail(ctx, node, path, E2BIG, "too many variables (at most %d)",
                                POLICY_MAX_LIST);
        if (r < 0)
                return psrun_error_errno(ctx->err, r, "env");
        return 0;
}

static int parse_env_mapping(struct parse_ctx *ctx, yaml_node_t *node, struct policy *p)
{
        char path[PATH_TEXT_MAX], shown[SHOWN_MAX];
        size_t n = mapping_length(node);
        int r;

        if (n > POLICY_MAX_LIST)
                return ctx_fail(ctx, node, "env", EINVAL, "too many entries (at most %d)",
                                POLICY_MAX_LIST);
        for (size_t i = 0; i < n; i++) {
                yaml_node_t *key_node, *value = mapping_value(ctx, node, i);
                const char *name, *text = NULL;

                r = mapping_key(ctx, node, i, "env", &key_node, &name);
                if (r < 0)
                        return r;
                /* YAML does not allow a key twice in one mapping; say so. */
                for (size_t j = 0; j < i; j++) {
                        yaml_node_t *other;
                        const char *other_name;
                        if (mapping_key(ctx, node, j, "env", &other, &other_name) >= 0 &&
                            streq(name, other_name))
                                return ctx_fail(ctx, key_node, "env", EINVAL,
                                                "duplicate variable `%s`",
                                                policy_escape(name, shown, sizeof(shown)));
                }
                snprintf(path, sizeof(path), "env.%s", policy_escape(name, shown, sizeof(shown)));
                /* Numbers and booleans are taken as written; null inherits. */
                if (!node_is_null(value)) {
                        r = node_text(ctx, value, path, "a string or null", &text);
                        if (r < 0)
                                return r;
                }
                r = env_set_checked(ctx, key_node, path, p, name, strlen(name), text);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* env: [NAME=value, NAME] or one such string. Appends to (or overrides)
 * what earlier sources set. */
static int parse_env_key(struct parse_ctx *ctx, const struct policy_key *key, yaml_node_t *node,
                         struct policy *p)
{
        char path[PATH_TEXT_MAX];
        size_t n;
        int r;

        if (node->type == YAML_MAPPING_NODE)
                return parse_env_mapping(ctx, node, p);
        r = list_length(ctx, node, key->name, key->expect, &n);
        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                yaml_node_t *item = list_item(ctx, node, key->name, i, path, sizeof(path));
                const char *s, *eq;

                r = node_text(ctx, item, path, "NAME=value or NAME", &s);
                if (r < 0)
                        return r;
                eq = strchr(s, '=');
                r = env_set_checked(ctx, item, path, p, s, eq ? (size_t) (eq - s) : strlen(s),
                                    eq ? eq + 1 : NULL);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int normalize_hostname(const char *in, char **ret, psrun_error *err)
{
        int r = policy_check_hostname(in, err);

        if (r < 0)
                return r;
        *ret = strdup(in);
        return *ret ? 0 : psrun_error_errno(err, ENOMEM, "hostname");
}

static int normalize_profile(const char *in, char **ret, psrun_error *err)
{
        int r = policy_check_apparmor_profile(in, err);

        if (r < 0)
                return r;
        *ret = strdup(in);
        return *ret ? 0 : psrun_error_errno(err, ENOMEM, "apparmor_profile");
}

static const char *network_name(int v)
{
        return policy_network_to_string((enum policy_network) v);
}

static const char *backend_name(int v)
{
        return policy_backend_to_string((enum policy_backend) v);
}

static const char *gvisor_platform_name(int v)
{
        return policy_gvisor_platform_to_string((enum policy_gvisor_platform) v);
}

static const char *layer_name(int v)
{
        return policy_layer_to_string((enum policy_layer) v);
}

static const char *violations_name(int v)
{
        return policy_violations_to_string((enum policy_violations) v);
}

static const char *limits_name(int v)
{
        return policy_limits_to_string((enum policy_limits) v);
}

#define OFFSET(field)   .offset = offsetof(struct policy, field)
#define COUNT(field)    .count_offset = offsetof(struct policy, field)
#define SIZE_HINT       " (use e.g. 512M, 2G)"
#define SIZE_KEY        .expect = "a size", .parse_number = parse_size, .hint = SIZE_HINT
#define ENUM_KEY(name_) .parse = parse_enum, .enum_name = (name_)
#define QUOTA_KEY(min_, max_)                                                                      \
        .expect = "an integer", .parse_number = parse_uint64, .hint = "", .min = (min_),           \
        .max = (max_), .format = format_uint64

/* The vocabulary, in the order of docs/policy.md. */
static const struct policy_key policy_keys[] = {
        {"network", OFFSET(network), ENUM_KEY(network_name)},
        {"allow_domains", parse_domains_key, OFFSET(allow_domains),
         .expect = "a list of domain names"},
        {"allow_ports", parse_ports_key, OFFSET(allow_ports), .expect = "a list of ports"},
        {"allow_cidrs", parse_strv_key, OFFSET(allow_cidrs), COUNT(n_allow_cidrs),
         .expect = "a list of CIDR[:port]", .normalize = policy_normalize_cidr_port},
        {"allow_private", parse_strv_key, OFFSET(allow_private), COUNT(n_allow_private),
         .expect = "a list of CIDRs", .normalize = policy_normalize_cidr},
        {"dns_upstream", parse_strv_key, OFFSET(dns_upstream), COUNT(n_dns_upstream),
         .expect = "a list of IP addresses", .normalize = policy_normalize_ip},
        {"dns_min_ttl", parse_number_key, OFFSET(dns_min_ttl_ms), .expect = "a duration",
         .parse_number = parse_duration_ms, .hint = " (use e.g. 30s, 5m)", .min = 0,
         .max = POLICY_DNS_TTL_MAX, .format = format_duration_ms},
        {"dns_max_ttl", parse_number_key, OFFSET(dns_max_ttl_ms), .expect = "a duration",
         .parse_number = parse_duration_ms, .hint = " (use e.g. 30s, 5m)", .min = 1000,
         .max = POLICY_DNS_TTL_MAX, .format = format_duration_ms},
        {"network_pool", parse_string_key, OFFSET(network_pool), .expect = "a CIDR",
         .normalize = policy_normalize_cidr},
        {"network_log", parse_string_key, OFFSET(network_log), .expect = "a path",
         .normalize = policy_normalize_source},
        {"name_check", parse_on_off_key, OFFSET(name_check)},
        {"install_network", OFFSET(install_network), ENUM_KEY(network_name)},
        {"install_allow_domains", parse_install_domains_key, OFFSET(install_allow_domains),
         .expect = "a list of domain names"},
        {"pip_index_url", parse_string_key, OFFSET(pip_index_url), .expect = "a URL",
         .normalize = policy_normalize_url},
        {"npm_registry", parse_string_key, OFFSET(npm_registry), .expect = "a URL",
         .normalize = policy_normalize_url},
        {"approve", parse_approve_key, OFFSET(approve), .expect = "a list of actions"},
        {"memory_limit", parse_number_key, OFFSET(memory_limit), SIZE_KEY,
         .min = POLICY_MEMORY_LIMIT_MIN, .max = POLICY_MEMORY_LIMIT_MAX, .format = format_size},
        {"cpu_limit", parse_cpu_key, OFFSET(cpu_limit), .expect = "a number"},
        {"pids_limit", parse_number_key, OFFSET(pids_limit), .expect = "an integer",
         .parse_number = parse_uint64, .hint = "", .min = POLICY_PIDS_LIMIT_MIN,
         .max = POLICY_PIDS_LIMIT_MAX, .format = format_uint64},
        {"disk_limit", parse_number_key, OFFSET(disk_limit), SIZE_KEY, .min = POLICY_DISK_LIMIT_MIN,
         .max = POLICY_DISK_LIMIT_MAX, .format = format_size},
        {"timeout", parse_number_key, OFFSET(timeout_ms), .expect = "a duration",
         .parse_number = parse_duration_ms, .hint = " (use e.g. 300, 300s, 5m, 1h, 500ms)",
         .min = POLICY_TIMEOUT_MS_MIN, .max = POLICY_TIMEOUT_MS_MAX, .format = format_duration_ms},
        {"idle_timeout", parse_number_key, OFFSET(idle_timeout_ms), .expect = "a duration",
         .parse_number = parse_duration_ms, .hint = " (use e.g. 30m, 0 for none)", .min = 0,
         .max = POLICY_TIMEOUT_MS_MAX, .format = format_duration_ms},
        {"lifetime", parse_number_key, OFFSET(lifetime_ms), .expect = "a duration",
         .parse_number = parse_duration_ms, .hint = " (use e.g. 2h, 0 for none)", .min = 0,
         .max = POLICY_TIMEOUT_MS_MAX, .format = format_duration_ms},
        {"output_limit", parse_number_key, OFFSET(output_limit), SIZE_KEY,
         .min = POLICY_OUTPUT_LIMIT_MIN, .max = POLICY_OUTPUT_LIMIT_MAX, .format = format_size},
        {"background_limit", parse_number_key, OFFSET(background_limit), .expect = "an integer",
         .parse_number = parse_uint64, .hint = " (0 for no background processes)", .min = 0,
         .max = POLICY_BACKGROUND_LIMIT_MAX, .format = format_uint64},
        {"env", parse_env_key, OFFSET(env), .expect = "a mapping or a list"},
        {"workdir", parse_string_key, OFFSET(workdir), .expect = "a path",
         .normalize = policy_normalize_path},
        {"readonly_rootfs", parse_bool_key, OFFSET(readonly_rootfs)},
        {"user", parse_user_key, OFFSET(uid), .expect = "UID[:GID]"},
        {"backend", OFFSET(backend), ENUM_KEY(backend_name)},
        {"gvisor_platform", OFFSET(gvisor_platform), ENUM_KEY(gvisor_platform_name)},
        {"mounts", parse_mounts_key, OFFSET(mounts), .expect = "a list of mounts"},
        {"hostname", parse_string_key, OFFSET(hostname), .expect = "a hostname",
         .normalize = normalize_hostname},
        {"landlock", OFFSET(landlock), ENUM_KEY(layer_name)},
        {"apparmor", OFFSET(apparmor), ENUM_KEY(layer_name)},
        {"apparmor_profile", parse_string_key, OFFSET(apparmor_profile), .expect = "a profile name",
         .normalize = normalize_profile},
        {"violations", OFFSET(violations), ENUM_KEY(violations_name)},
        {"limits", OFFSET(limits), ENUM_KEY(limits_name)},
        {"pty_limit", parse_number_key, OFFSET(pty_limit), QUOTA_KEY(1, POLICY_PTY_LIMIT_MAX)},
        {"inotify_limit", parse_number_key, OFFSET(inotify_limit), QUOTA_KEY(0, POLICY_QUOTA_MAX)},
        {"inotify_watch_limit", parse_number_key, OFFSET(inotify_watch_limit),
         QUOTA_KEY(0, POLICY_QUOTA_MAX)},
        {"fanotify_limit", parse_number_key, OFFSET(fanotify_limit),
         QUOTA_KEY(0, POLICY_QUOTA_MAX)},
        {"fanotify_mark_limit", parse_number_key, OFFSET(fanotify_mark_limit),
         QUOTA_KEY(0, POLICY_QUOTA_MAX)},
        {"namespace_limit", parse_number_key, OFFSET(namespace_limit),
         QUOTA_KEY(0, POLICY_QUOTA_MAX)},
        {"sigpending_limit", parse_number_key, OFFSET(sigpending_limit),
         QUOTA_KEY(0, POLICY_QUOTA_MAX)},
        {"msgqueue_limit", parse_number_key, OFFSET(msgqueue_limit), SIZE_KEY, .min = 0,
         .max = POLICY_MSGQUEUE_LIMIT_MAX, .format = format_size},
        {"image", parse_string_key, OFFSET(image), .expect = "an image reference",
         .normalize = policy_normalize_image},
        {"image_store", parse_string_key, OFFSET(image_store), .expect = "a path",
         .normalize = policy_normalize_path},
        {"registry_mirrors", parse_strv_key, OFFSET(registry_mirrors), COUNT(n_registry_mirrors),
         .expect = "a list of MIRROR or REGISTRY=MIRROR", .normalize = policy_normalize_registry},
        {"insecure_registries", parse_strv_key, OFFSET(insecure_registries),
         COUNT(n_insecure_registries), .expect = "a list of HOST[:PORT]",
         .normalize = policy_normalize_registry},
        {"image_max_size", parse_number_key, OFFSET(image_max_size), SIZE_KEY,
         .min = POLICY_IMAGE_MAX_SIZE_MIN, .max = POLICY_IMAGE_MAX_SIZE_MAX, .format = format_size},
        {"tools", parse_strv_key, OFFSET(tools), COUNT(n_tools), .expect = "a list of tool names",
         .normalize = policy_normalize_tool},
};

static const struct policy_key *find_key(const char *name)
{
        for (size_t i = 0; i < ARRAY_SIZE(policy_keys); i++)
                if (streq(policy_keys[i].name, name))
                        return &policy_keys[i];
        return NULL;
}

const char *policy_key_name_at(size_t i)
{
        return i < ARRAY_SIZE(policy_keys) ? policy_keys[i].name : NULL;
}

const char *policy_suggest_key(const char *key)
{
        const char *names[ARRAY_SIZE(policy_keys)];

        for (size_t i = 0; i < ARRAY_SIZE(policy_keys); i++)
                names[i] = policy_keys[i].name;
        return policy_suggest_from(key, names, ARRAY_SIZE(names));
}

/* ---- documents ---- */

static int apply_document(struct parse_ctx *ctx, struct policy *p)
{
        bool seen[ARRAY_SIZE(policy_keys)] = {false};
        yaml_node_t *root = yaml_document_get_root_node(ctx->doc);
        int r;

        /* An empty document (or only comments, or "---") changes nothing. */
        if (!root || node_is_null(root))
                return 0;
        if (root->type != YAML_MAPPING_NODE)
                return ctx_fail(ctx, root, NULL, EINVAL,
                                "the top level must be a mapping of keys, got %s",
                                node_kind_name(root));
        for (size_t i = 0; i < mapping_length(root); i++) {
                yaml_node_t *key_node;
                const char *name;
                const struct policy_key *key;

                r = mapping_key(ctx, root, i, NULL, &key_node, &name);
                if (r < 0)
                        return r;
                key = find_key(name);
                if (!key)
                        return unknown_key(ctx, key_node, NULL, name, policy_suggest_key(name));
                if (seen[key - policy_keys])
                        return ctx_fail(ctx, key_node, NULL, EINVAL, "duplicate key `%s`",
                                        key->name);
                seen[key - policy_keys] = true;
                r = key->parse(ctx, key, mapping_value(ctx, root, i), p);
                if (r < 0)
                        return r;
        }
        return 0;
}

static int syntax_error(struct parse_ctx *ctx, const yaml_parser_t *parser, const char *buf,
                        size_t len)
{
        yaml_mark_t mark = parser->problem_mark;
        yaml_node_t at = {0};

        if (parser->error == YAML_MEMORY_ERROR)
                return psrun_error_errno(ctx->err, ENOMEM, "%s", ctx->name ? ctx->name : "-o");
        /* Reader errors (bad UTF-8, control characters) only know the offset. */
        if (parser->error == YAML_READER_ERROR) {
                mark = (yaml_mark_t){0};
                mark.index = parser->problem_offset;
                for (size_t i = 0; i < parser->problem_offset && i < len; i++) {
                        mark.column++;
                        if (buf[i] == '\n') {
                                mark.line++;
                                mark.column = 0;
                        }
                }
        }
        at.start_mark = mark;
        /* A -o value is one line: say where in it, by character. */
        if (!ctx->name && mark.index >= len)
                return ctx_fail(ctx, &at, NULL, EINVAL,
                                "YAML syntax error: %s (at the end of the value)",
                                parser->problem ? parser->problem : "unknown");
        if (!ctx->name)
                return ctx_fail(ctx, &at, NULL, EINVAL, "YAML syntax error: %s (at character %zu)",
                                parser->problem ? parser->problem : "unknown", mark.index + 1);
        return ctx_fail(ctx, &at, NULL, EINVAL, "YAML syntax error: %s",
                        parser->problem ? parser->problem : "unknown");
}

static inline void yaml_event_deletep(yaml_event_t *e)
{
        yaml_event_delete(e);
}

/* The explicit tag of a node event, or NULL. */
static const yaml_char_t *event_tag(const yaml_event_t *e)
{
        switch (e->type) {
        case YAML_SCALAR_EVENT:
                return e->data.scalar.tag;
        case YAML_SEQUENCE_START_EVENT:
                return e->data.sequence_start.tag;
        case YAML_MAPPING_START_EVENT:
                return e->data.mapping_start.tag;
        default:
                return NULL;
        }
}

/*
 * A pass over the events before the document is built: libyaml's loader
 * and scanner take time quadratic in the nesting depth (50,000 levels: 9 s),
 * so the depth is bounded here, where the parser has descended no further
 * than the bound. Explicit tags ("!foo", "!!int") would be dropped by the
 * key parsers, which read only the text: refused rather than ignored.
 */
static int prescan_yaml(struct parse_ctx *ctx, const char *buf, size_t len)
{
        _cleanup_(yaml_parser_delete) yaml_parser_t parser = {0};
        char shown[SHOWN_MAX];
        size_t depth = 0, events = 0;

        if (!yaml_parser_initialize(&parser))
                return psrun_error_errno(ctx->err, ENOMEM, "%s", ctx->name ? ctx->name : "-o");
        yaml_parser_set_input_string(&parser, (const unsigned char *) buf, len);
        for (;;) {
                _cleanup_(yaml_event_deletep) yaml_event_t e = {0};
                if (!yaml_parser_parse(&parser, &e))
                        return syntax_error(ctx, &parser, buf, len);
                if (e.type == YAML_STREAM_END_EVENT)
                        return 0;
                yaml_node_t at = {.start_mark = e.start_mark};
                const yaml_char_t *tag = event_tag(&e);
                if (tag)
                        return ctx_fail(ctx, &at, NULL, EINVAL,
                                        "YAML tag `%s` is not supported: write the value alone",
                                        policy_escape((const char *) tag, shown, sizeof(shown)));
                if (++events > POLICY_MAX_NODES)
                        return ctx_fail(ctx, &at, NULL, E2BIG, "more than %d YAML values",
                                        POLICY_MAX_NODES);
                if (e.type == YAML_SEQUENCE_START_EVENT || e.type == YAML_MAPPING_START_EVENT) {
                        if (++depth > POLICY_MAX_DEPTH)
                                return ctx_fail(ctx, &at, NULL, EINVAL,
                                                "nested too deeply (more than %d levels)",
                                                POLICY_MAX_DEPTH);
                } else if (e.type == YAML_SEQUENCE_END_EVENT || e.type == YAML_MAPPING_END_EVENT) {
                        depth--;
                }
        }
}

/* Loads exactly one document from buf into ctx->doc. */
static int load_yaml(struct parse_ctx *ctx, const char *buf, size_t len)
{
        _cleanup_(yaml_parser_delete) yaml_parser_t parser = {0};
        _cleanup_(yaml_document_delete) yaml_document_t extra = {0};
        yaml_node_t *extra_root;

        if (len > POLICY_MAX_DOCUMENT_SIZE)
                return ctx_fail(ctx, NULL, NULL, EFBIG, "larger than 1 MiB");
        int r = prescan_yaml(ctx, buf, len);
        if (r < 0)
                return r;
        if (!yaml_parser_initialize(&parser))
                return psrun_error_errno(ctx->err, ENOMEM, "%s", ctx->name ? ctx->name : "-o");
        yaml_parser_set_input_string(&parser, (const unsigned char *) buf, len);
        if (!yaml_parser_load(&parser, ctx->doc))
                return syntax_error(ctx, &parser, buf, len);
        if (!yaml_parser_load(&parser, &extra))
                return syntax_error(ctx, &parser, buf, len);
        extra_root = yaml_document_get_root_node(&extra);
        if (extra_root)
                return ctx_fail(ctx, extra_root, NULL, EINVAL, "only one YAML document is allowed");
        return 0;
}

/* Parses the source in ctx into a copy of *p; *p changes only on success. */
static int apply_to_copy(struct parse_ctx *ctx, const struct policy_key *key, yaml_node_t *value,
                         struct policy *p)
{
        _cleanup_(policy_free) struct policy copy = {0};
        int r = policy_copy(&copy, p);

        if (r < 0)
                return psrun_error_errno(ctx->err, r, "policy");
        r = key ? key->parse(ctx, key, value, &copy) : apply_document(ctx, &copy);
        if (r < 0)
                return r;
        policy_free(p);
        *p = copy;
        copy = (struct policy){0};
        return 0;
}

int policy_load_buffer(struct policy *p, const char *name, const char *buf, size_t len,
                       psrun_error *err)
{
        _cleanup_(yaml_document_delete) yaml_document_t doc = {0};
        psrun_error ignored;
        struct parse_ctx ctx = {.name = name ? name : "policy", .doc = &doc};
        int r;

        /* The pure checks report through err; give them one to fill. */
        ctx.err = err ? err : &ignored;
        err = ctx.err;

        if (len > POLICY_MAX_DOCUMENT_SIZE)
                return psrun_error_set(err, EFBIG, "%s: larger than 1 MiB", ctx.name);
        r = load_yaml(&ctx, buf ? buf : "", buf ? len : 0);
        if (r < 0)
                return r;
        return apply_to_copy(&ctx, NULL, NULL, p);
}

/* Values that open like YAML flow ([..], {..}, quotes) are parsed as YAML;
 * anything else is one plain scalar taken literally, so `*.example.com`,
 * `a#b` and `A: b` need no quoting on a command line. */
static int option_document(struct parse_ctx *ctx, const char *value)
{
        size_t len;

        value += strspn(value, " \t");
        len = strlen(value);
        while (len > 0 && (value[len - 1] == ' ' || value[len - 1] == '\t'))
                len--;
        if (len > 0 && strchr("[{\"'", value[0]))
                return load_yaml(ctx, value, len);
        if (len > POLICY_MAX_DOCUMENT_SIZE)
                return ctx_fail(ctx, NULL, NULL, EFBIG, "value is larger than 1 MiB");
        if (!yaml_document_initialize(ctx->doc, NULL, NULL, NULL, 1, 1))
                return psrun_error_errno(ctx->err, ENOMEM, "%s%s",
                                         ctx->opt_prefix ? ctx->opt_prefix : "-o ", ctx->opt_key);
        if (!yaml_document_add_scalar(ctx->doc, NULL, (const yaml_char_t *) value, (int) len,
                                      YAML_PLAIN_SCALAR_STYLE))
                return ctx_fail(ctx, NULL, NULL, EINVAL, "value is not valid UTF-8");
        return 0;
}

static int set_option(struct policy *p, const char *key_eq_value, const char *prefix,
                      psrun_error *err)
{
        _cleanup_(yaml_document_delete) yaml_document_t doc = {0};
        char shown[SHOWN_MAX];
        const char *eq = strchr(key_eq_value, '=');
        psrun_error ignored;
        struct parse_ctx ctx = {.doc = &doc, .err = err ? err : &ignored, .opt_prefix = prefix};
        int r;

        err = ctx.err;

        if (!eq || eq == key_eq_value)
                return psrun_error_set(err, EINVAL, "%s%s: expected key=value", prefix,
                                       policy_escape(key_eq_value, shown, sizeof(shown)));
        _cleanup_free_ char *name = strndup(key_eq_value, (size_t) (eq - key_eq_value));
        if (!name)
                return psrun_error_errno(err, ENOMEM, "policy");
        ctx.opt_key = policy_escape(name, shown, sizeof(shown));
        const struct policy_key *key = find_key(name);
        if (!key)
                return unknown_key(&ctx, NULL, NULL, name, policy_suggest_key(name));
        r = option_document(&ctx, eq + 1);
        if (r < 0)
                return r;
        return apply_to_copy(&ctx, key, yaml_document_get_root_node(&doc), p);
}

int policy_set_option(struct policy *p, const char *key_eq_value, psrun_error *err)
{
        return set_option(p, key_eq_value, "-o ", err);
}

int policy_set_key(struct policy *p, const char *key_eq_value, psrun_error *err)
{
        return set_option(p, key_eq_value, "", err);
}
