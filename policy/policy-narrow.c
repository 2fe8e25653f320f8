/* SPDX-License-Identifier: MIT */
/*
 * "May this value only narrow the policy?": the rule behind
 * psrun_policy_set_narrowing and psrun_policy_narrows, for front ends
 * that let a less trusted caller (an MCP client, a model) adjust a policy
 * an operator set. The key is set on a copy, exactly as policy_set_option
 * sets it, and the copy's field is compared with the original's by the
 * key's order (narrow_rules[] below). A key whose values have no order
 * that psrun can vouch for (mounts, backend, user, URLs, ...) is refused
 * rather than guessed.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/names.h"
#include "policy/policy.h"

enum narrow_kind {
        N_NONE,    /* no order: refused */
        N_FREE,    /* no value widens the sandbox (a path or name inside it) */
        N_LOWER,   /* uint64_t: lower is narrower */
        N_LOWER_0, /* uint64_t: lower is narrower, but 0 means "no limit" */
        N_CPUS,    /* double: lower is narrower */
        N_RANK,    /* an enum: by rank[value], lower is narrower */
        N_TRUE,    /* bool: true is the safe side */
        N_DOMAINS, /* names: each covered by one of the policy's (`*.` included) */
        N_CIDRS,   /* blocks: each inside one of the policy's */
        N_STRV,    /* strings: each one of the policy's */
        N_PORTS,   /* allow_ports: each one of the policy's */
        N_APPROVE, /* approve: every action the policy gates is still gated */
        N_ENV,     /* env: nothing more taken from the caller's environment */
};

struct narrow_rule {
        const char *name;
        enum narrow_kind kind;
        size_t offset;
        size_t count_offset; /* lists: where their length is */
        const int *rank;     /* N_RANK: rank of each enum value */
        bool with_port;      /* N_CIDRS: "CIDR:port" entries */
};

/* Networks: none < restricted < full. */
static const int network_rank[_POLICY_NETWORK_MAX] = {
        [POLICY_NETWORK_NONE] = 0,
        [POLICY_NETWORK_RESTRICTED] = 1,
        [POLICY_NETWORK_FULL] = 2,
};
/* An optional layer: required < auto < off. */
static const int layer_rank[_POLICY_LAYER_MAX] = {
        [POLICY_LAYER_REQUIRED] = 0,
        [POLICY_LAYER_AUTO] = 1,
        [POLICY_LAYER_OFF] = 2,
};

/* strict refuses where best_effort would run with less. */
static const int limits_rank[_POLICY_LIMITS_MAX] = {
        [POLICY_LIMITS_STRICT] = 0,
        [POLICY_LIMITS_BEST_EFFORT] = 1,
};

#define AT(field)    .offset = offsetof(struct policy, field)
#define COUNT(field) .count_offset = offsetof(struct policy, field)

/* Every key of the parser's table (tests/unit/test_policy_narrow.c checks). */
static const struct narrow_rule narrow_rules[] = {
        {"network", N_RANK, AT(network), .rank = network_rank},
        {"allow_domains", N_DOMAINS, AT(allow_domains), COUNT(n_allow_domains)},
        {"allow_ports", N_PORTS, AT(allow_ports)},
        {"allow_cidrs", N_CIDRS, AT(allow_cidrs), COUNT(n_allow_cidrs), .with_port = true},
        {"allow_private", N_CIDRS, AT(allow_private), COUNT(n_allow_private)},
        {"dns_upstream", N_STRV, AT(dns_upstream), COUNT(n_dns_upstream)},
        /* A pin lives between the two: shorter is narrower. */
        {"dns_min_ttl", N_LOWER, AT(dns_min_ttl_ms)},
        {"dns_max_ttl", N_LOWER, AT(dns_max_ttl_ms)},
        {"network_pool", .kind = N_NONE},
        {"network_log", .kind = N_NONE}, /* a host path psrun writes */
        {"name_check", N_TRUE, AT(name_check)},
        {"install_network", N_RANK, AT(install_network), .rank = network_rank},
        {"install_allow_domains", N_DOMAINS, AT(install_allow_domains),
         COUNT(n_install_allow_domains)},
        {"pip_index_url", .kind = N_NONE},
        {"npm_registry", .kind = N_NONE},
        {"approve", N_APPROVE, AT(approve)},
        {"memory_limit", N_LOWER, AT(memory_limit)},
        {"cpu_limit", N_CPUS, AT(cpu_limit)},
        {"pids_limit", N_LOWER, AT(pids_limit)},
        {"disk_limit", N_LOWER, AT(disk_limit)},
        {"timeout", N_LOWER, AT(timeout_ms)},
        {"idle_timeout", N_LOWER_0, AT(idle_timeout_ms)},
        {"lifetime", N_LOWER_0, AT(lifetime_ms)},
        {"output_limit", N_LOWER, AT(output_limit)},
        {"background_limit", N_LOWER, AT(background_limit)},
        {"env", .kind = N_ENV},
        {"workdir", .kind = N_FREE},
        {"readonly_rootfs", N_TRUE, AT(readonly_rootfs)},
        {"user", .kind = N_NONE},
        {"backend", .kind = N_NONE},
        {"gvisor_platform", .kind = N_NONE},
        {"mounts", .kind = N_NONE}, /* host paths */
        {"hostname", .kind = N_FREE},
        {"landlock", N_RANK, AT(landlock), .rank = layer_rank},
        {"apparmor", N_RANK, AT(apparmor), .rank = layer_rank},
        {"apparmor_profile", .kind = N_NONE},
        {"violations", .kind = N_NONE},
        {"limits", N_RANK, AT(limits), .rank = limits_rank},
        /* Kernel quotas: 0 allows none, the narrowest. */
        {"pty_limit", N_LOWER, AT(pty_limit)},
        {"inotify_limit", N_LOWER, AT(inotify_limit)},
        {"inotify_watch_limit", N_LOWER, AT(inotify_watch_limit)},
        {"fanotify_limit", N_LOWER, AT(fanotify_limit)},
        {"fanotify_mark_limit", N_LOWER, AT(fanotify_mark_limit)},
        {"namespace_limit", N_LOWER, AT(namespace_limit)},
        {"sigpending_limit", N_LOWER, AT(sigpending_limit)},
        {"msgqueue_limit", N_LOWER, AT(msgqueue_limit)},
        {"image", .kind = N_NONE}, /* another root */
        {"image_store", .kind = N_NONE},
        {"registry_mirrors", .kind = N_NONE},
        {"insecure_registries", .kind = N_NONE},
        {"image_max_size", N_LOWER, AT(image_max_size)},
        {"tools", .kind = N_NONE},
};

#define FIELD(p, r, type) ((const type *) (const void *) ((const char *) (p) + (r)->offset))

static size_t count_of(const struct policy *p, const struct narrow_rule *r)
{
        return *(const size_t *) (const void *) ((const char *) p + r->count_offset);
}

/* name strictly below base, at a label boundary (the DNS proxy's `*.`). */
static bool name_below(const char *name, const char *base)
{
        size_t nl = strlen(name), bl = strlen(base);
        return nl > bl + 1 && name[nl - bl - 1] == '.' && streq(name + nl - bl, base);
}

/* Every name `inner` allows, `outer` allows: "*.b.c" covers "a.b.c" and
 * "*.a.b.c", never "b.c". */
static bool domain_covers(const char *outer, const char *inner)
{
        if (streq(outer, inner))
                return true;
        if (strncmp(outer, "*.", 2) != 0)
                return false;
        const char *name = strncmp(inner, "*.", 2) == 0 ? inner + 2 : inner;
        return name_below(name, outer + 2);
}

static bool cidr_covers(const char *outer, const char *inner, bool with_port)
{
        struct cidr o, i;
        psrun_error ignored;
        if (policy_parse_cidr(outer, with_port, &o, &ignored) < 0 ||
            policy_parse_cidr(inner, with_port, &i, &ignored) < 0)
                return false;
        return o.family == i.family && o.prefix <= i.prefix &&
               cidr_contains(&o, i.family, i.addr) && (o.port == 0 || o.port == i.port);
}

static bool item_covered(const struct narrow_rule *r, char *const *outer, size_t n,
                         const char *inner)
{
        for (size_t i = 0; i < n; i++)
                if (r->kind == N_DOMAINS ? domain_covers(outer[i], inner)
                    : r->kind == N_CIDRS ? cidr_covers(outer[i], inner, r->with_port)
                                         : streq(outer[i], inner))
                        return true;
        return false;
}

static bool env_inherits(const struct policy *p, const char *name)
{
        for (size_t i = 0; i < p->n_env; i++)
                if (!p->env[i].value && streq(p->env[i].name, name))
                        return true;
        return false;
}

/*
 * Whether `now` (`was` with the key set) is wider than `was` in this key;
 * if so, why, in a few words for the message. A scalar's why is the value
 * it had (set by the caller).
 */
static bool widens(const struct narrow_rule *r, const struct policy *was, const struct policy *now,
                   char *why, size_t size)
{
        char shown[128];
        switch (r->kind) {
        case N_NONE:
        case N_FREE:
                return false;
        case N_LOWER:
                return *FIELD(now, r, uint64_t) > *FIELD(was, r, uint64_t);
        case N_LOWER_0: {
                uint64_t a = *FIELD(was, r, uint64_t), b = *FIELD(now, r, uint64_t);
                return a != 0 && (b == 0 || b > a);
        }
        case N_CPUS:
                return *FIELD(now, r, double) > *FIELD(was, r, double);
        case N_RANK:
                return r->rank[*FIELD(now, r, int)] > r->rank[*FIELD(was, r, int)];
        case N_TRUE:
                return *FIELD(was, r, bool) && !*FIELD(now, r, bool);
        case N_DOMAINS:
        case N_CIDRS:
        case N_STRV: {
                char *const *outer =
                        *(char **const *) (const void *) ((const char *) was + r->offset);
                char *const *inner =
                        *(char **const *) (const void *) ((const char *) now + r->offset);
                for (size_t i = 0; i < count_of(now, r); i++)
                        if (!item_covered(r, outer, count_of(was, r), inner[i])) {
                                snprintf(why, size, "`%s` is not within its %s",
                                         policy_escape(inner[i], shown, sizeof(shown)), r->name);
                                return true;
                        }
                return false;
        }
        case N_PORTS:
                for (size_t i = 0; i < now->n_allow_ports; i++) {
                        bool found = false;
                        for (size_t j = 0; j < was->n_allow_ports && !found; j++)
                                found = was->allow_ports[j] == now->allow_ports[i];
                        if (!found) {
                                snprintf(why, size, "port %u is not one of its allow_ports",
                                         (unsigned) now->allow_ports[i]);
                                return true;
                        }
                }
                return false;
        case N_APPROVE:
                for (size_t i = 0;; i++) {
                        uint32_t bit;
                        const char *name = policy_action_name_at(i, &bit);
                        if (!name)
                                return false;
                        if ((was->approve & bit) && !(now->approve & bit)) {
                                snprintf(why, size, "it would no longer ask before %s", name);
                                return true;
                        }
                }
        case N_ENV:
                for (size_t i = 0; i < now->n_env; i++)
                        if (!now->env[i].value && !env_inherits(was, now->env[i].name)) {
                                snprintf(why, size, "%s would come from the caller's environment",
                                         policy_escape(now->env[i].name, shown, sizeof(shown)));
                                return true;
                        }
                return false;
        }
        return true;
}

static int no_order(const char *shown_key, psrun_error *err)
{
        return psrun_error_set(err, EOPNOTSUPP,
                               "policy.%s: psrun knows no order of its values, so it cannot tell "
                               "a narrowing from a widening",
                               shown_key);
}

int policy_narrowed(const struct policy *p, const char *key, const char *value, struct policy *ret,
                    psrun_error *err)
{
        char shown_key[128], shown_value[128], why[256] = "";
        psrun_error ignored;
        if (!err)
                err = &ignored;
        const struct narrow_rule *rule = NULL;
        for (size_t i = 0; i < ARRAY_SIZE(narrow_rules) && !rule; i++)
                if (streq(narrow_rules[i].name, key))
                        rule = &narrow_rules[i];
        policy_escape(key, shown_key, sizeof(shown_key));
        /* Unknown keys go on to the parser, which says so. */
        if (rule && rule->kind == N_NONE)
                return no_order(shown_key, err);
        _cleanup_free_ char *kv = NULL;
        if (asprintf(&kv, "%s=%s", key, value) < 0)
                return psrun_error_errno(err, ENOMEM, "policy");
        _cleanup_(policy_free) struct policy next = {0};
        int r = policy_copy(&next, p);
        if (r < 0)
                return psrun_error_errno(err, -r, "policy");
        /* Bad values: the parser's own messages. */
        r = policy_set_option(&next, kv, err);
        if (r < 0)
                return r;
        if (!rule)
                return no_order(shown_key, err);
        if (widens(rule, p, &next, why, sizeof(why))) {
                policy_escape(value, shown_value, sizeof(shown_value));
                if (!why[0]) {
                        char shown_had[128];
                        _cleanup_free_ char *had = NULL;
                        r = policy_get_value(p, key, &had, err);
                        if (r < 0)
                                return r;
                        snprintf(why, sizeof(why), "it is %s",
                                 policy_escape(had, shown_had, sizeof(shown_had)));
                }
                return psrun_error_set(err, EPERM, "policy.%s: `%s` would widen the policy (%s)",
                                       shown_key, shown_value, why);
        }
        *ret = next;
        next = (struct policy){0};
        return 0;
}

int policy_check_ceiling(const struct policy *p, const char *key, const char *option,
                         uint64_t value, psrun_error *err)
{
        const struct narrow_rule *rule = NULL;
        for (size_t i = 0; i < ARRAY_SIZE(narrow_rules) && !rule; i++)
                if (streq(narrow_rules[i].name, key))
                        rule = &narrow_rules[i];
        if (!rule || rule->kind != N_LOWER)
                return psrun_error_set(err, EINVAL, "%s: `%s` is not a limit", option, key);
        uint64_t ceiling = *FIELD(p, rule, uint64_t);
        if (value <= ceiling)
                return 0;
        _cleanup_free_ char *shown = NULL;
        if (policy_get_value(p, key, &shown, NULL) < 0)
                shown = NULL;
        /* A duration in whole seconds reads as the policy writes it: 10s,
         * not 10000ms. */
        size_t n = shown ? strlen(shown) : 0;
        if (n > 5 && streq(shown + n - 5, "000ms"))
                strcpy(shown + n - 5, "s");
        return psrun_error_set(err, EPERM, "%s: %" PRIu64 " is above the policy's %s %s", option,
                               value, key, shown ? shown : "");
}
