/* SPDX-License-Identifier: MIT */
/* policy_write_json: what it prints reads back as the same policy. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

static char *json_of(const struct policy *p)
{
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        cr_assert_not_null(f);
        cr_assert_eq(policy_write_json(p, f), 0);
        fclose(f);
        return buf;
}

static void round_trip(const char *yaml)
{
        struct policy a, b;
        psrun_error err = {0};
        cr_assert_eq(policy_init(&a), 0);
        cr_assert_eq(policy_load_buffer(&a, "in.yaml", yaml, strlen(yaml), &err), 0, "%s", err.msg);
        char *first = json_of(&a);

        cr_assert_eq(policy_init(&b), 0);
        cr_assert_eq(policy_load_buffer(&b, "out.json", first, strlen(first), &err), 0, "%s\n%s",
                     err.msg, first);
        char *second = json_of(&b);
        cr_expect_str_eq(second, first);
        cr_expect_eq(policy_validate(&b, &err), 0, "%s", err.msg);
        free(first);
        free(second);
        policy_free(&a);
        policy_free(&b);
}

Test(policy_json, defaults_round_trip)
{
        round_trip("");
}

Test(policy_json, every_key_round_trips)
{
        round_trip("network: restricted\n"
                   "allow_domains: [pypi.org, '*.pythonhosted.org']\n"
                   "memory_limit: 1536M\n"
                   "cpu_limit: 0.25\n"
                   "pids_limit: 77\n"
                   "disk_limit: 3G\n"
                   "timeout: 2.5\n"
                   "env: {A: 'x \"quoted\" \\\\ y', B: ~, C: \"line\\nbreak\"}\n"
                   "workdir: /workspace/a b\n"
                   "readonly_rootfs: false\n"
                   "user: 4242:4343\n"
                   "backend: gvisor\n"
                   "gvisor_platform: systrap\n"
                   "mounts: [{source: ./rel, target: /workspace/rel, readonly: false}, "
                   "/src:/src]\n"
                   "hostname: box-1\n"
                   "landlock: required\n"
                   "apparmor: off\n"
                   "apparmor_profile: my-profile\n"
                   "install_allow_domains: [pypi.test, '@npm']\n"
                   "pip_index_url: http://pypi.test/simple\n"
                   "npm_registry: https://npm.test:8443/registry/\n"
                   "approve: [install]\n");
        round_trip("install_network: none\napprove: []\n");
        round_trip("install_network: full\n");
}

Test(policy_json, shape)
{
        struct policy p;
        cr_assert_eq(policy_init(&p), 0);
        char *s = json_of(&p);
        cr_expect(strstr(s, "\"memory_limit\": \"512M\""), "%s", s);
        cr_expect(strstr(s, "\"timeout\": \"300000ms\""), "%s", s);
        cr_expect(strstr(s, "\"user\": \"1000:1000\""), "%s", s);
        cr_expect(strstr(s, "\"gvisor_platform\": \"auto\""), "%s", s);
        cr_expect(!strstr(s, "apparmor_profile"), "%s", s);
        free(s);
        policy_free(&p);
}

/*
 * The struct, field by field: a session's supervisor gets its policy as
 * this JSON (runtime/session/image.c), so every field must come back, not
 * only those the printer prints. A field added to struct policy changes
 * its size and fails the assertion until it is compared here too.
 */
_Static_assert(sizeof(struct policy) == 600, "struct policy changed: compare the new field below");

static void expect_strv_eq(char *const *a, size_t na, char *const *b, size_t nb, const char *what)
{
        cr_expect_eq(na, nb, "%s: %zu entries, then %zu", what, na, nb);
        for (size_t i = 0; i < na && i < nb; i++)
                cr_expect_str_eq(a[i], b[i], "%s[%zu]", what, i);
}

static void expect_opt_str_eq(const char *a, const char *b, const char *what)
{
        cr_expect((a == NULL) == (b == NULL), "%s: %s, then %s", what, a ? a : "(none)",
                  b ? b : "(none)");
        if (a && b)
                cr_expect_str_eq(a, b, "%s", what);
}

static void expect_same_policy(const struct policy *a, const struct policy *b)
{
        cr_expect_eq(a->network, b->network);
        expect_strv_eq(a->allow_domains, a->n_allow_domains, b->allow_domains, b->n_allow_domains,
                       "allow_domains");
        cr_expect_eq(a->n_allow_ports, b->n_allow_ports, "allow_ports");
        cr_expect_arr_eq(a->allow_ports, b->allow_ports, sizeof(a->allow_ports), "allow_ports");
        expect_strv_eq(a->allow_cidrs, a->n_allow_cidrs, b->allow_cidrs, b->n_allow_cidrs,
                       "allow_cidrs");
        expect_strv_eq(a->allow_private, a->n_allow_private, b->allow_private, b->n_allow_private,
                       "allow_private");
        expect_strv_eq(a->dns_upstream, a->n_dns_upstream, b->dns_upstream, b->n_dns_upstream,
                       "dns_upstream");
        cr_expect_eq(a->dns_min_ttl_ms, b->dns_min_ttl_ms, "dns_min_ttl");
        cr_expect_eq(a->dns_max_ttl_ms, b->dns_max_ttl_ms, "dns_max_ttl");
        expect_opt_str_eq(a->network_pool, b->network_pool, "network_pool");
        expect_opt_str_eq(a->network_log, b->network_log, "network_log");
        cr_expect_eq(a->install_network, b->install_network, "install_network");
        if (a->install_network == POLICY_NETWORK_RESTRICTED)
                expect_strv_eq(a->install_allow_domains, a->n_install_allow_domains,
                               b->install_allow_domains, b->n_install_allow_domains,
                               "install_allow_domains");
        /* install_allow_domains_given: whether a source named the list; a
         * printed list is a named one. Not a setting of the sandbox. */
        expect_opt_str_eq(a->pip_index_url, b->pip_index_url, "pip_index_url");
        expect_opt_str_eq(a->npm_registry, b->npm_registry, "npm_registry");
        cr_expect_eq(a->approve, b->approve, "approve");
        cr_expect_eq(a->memory_limit, b->memory_limit, "memory_limit");
        cr_expect(a->cpu_limit == b->cpu_limit, "cpu_limit: %.17g, then %.17g", a->cpu_limit,
                  b->cpu_limit);
        cr_expect_eq(a->pids_limit, b->pids_limit, "pids_limit");
        cr_expect_eq(a->disk_limit, b->disk_limit, "disk_limit");
        cr_expect_eq(a->timeout_ms, b->timeout_ms, "timeout");
        cr_expect_eq(a->idle_timeout_ms, b->idle_timeout_ms, "idle_timeout");
        cr_expect_eq(a->lifetime_ms, b->lifetime_ms, "lifetime");
        cr_expect_eq(a->output_limit, b->output_limit, "output_limit");
        cr_expect_eq(a->background_limit, b->background_limit, "background_limit");
        cr_expect_eq(a->n_env, b->n_env, "env");
        for (size_t i = 0; i < a->n_env && i < b->n_env; i++) {
                cr_expect_str_eq(a->env[i].name, b->env[i].name, "env[%zu]", i);
                expect_opt_str_eq(a->env[i].value, b->env[i].value, a->env[i].name);
        }
        expect_opt_str_eq(a->workdir, b->workdir, "workdir");
        cr_expect_eq(a->readonly_rootfs, b->readonly_rootfs, "readonly_rootfs");
        cr_expect_eq(a->uid, b->uid, "uid");
        cr_expect_eq(a->gid, b->gid, "gid");
        cr_expect_eq(a->backend, b->backend, "backend");
        cr_expect_eq(a->gvisor_platform, b->gvisor_platform, "gvisor_platform");
        cr_expect_eq(a->n_mounts, b->n_mounts, "mounts");
        for (size_t i = 0; i < a->n_mounts && i < b->n_mounts; i++) {
                cr_expect_str_eq(a->mounts[i].source, b->mounts[i].source, "mounts[%zu]", i);
                cr_expect_str_eq(a->mounts[i].target, b->mounts[i].target, "mounts[%zu]", i);
                cr_expect_eq(a->mounts[i].readonly, b->mounts[i].readonly, "mounts[%zu]", i);
        }
        expect_opt_str_eq(a->hostname, b->hostname, "hostname");
        cr_expect_eq(a->landlock, b->landlock, "landlock");
        cr_expect_eq(a->apparmor, b->apparmor, "apparmor");
        expect_opt_str_eq(a->apparmor_profile, b->apparmor_profile, "apparmor_profile");
        cr_expect_eq(a->violations, b->violations, "violations");
        cr_expect_eq(a->limits, b->limits, "limits");
        cr_expect_eq(a->pty_limit, b->pty_limit, "pty_limit");
        cr_expect_eq(a->inotify_limit, b->inotify_limit, "inotify_limit");
        cr_expect_eq(a->inotify_watch_limit, b->inotify_watch_limit, "inotify_watch_limit");
        cr_expect_eq(a->fanotify_limit, b->fanotify_limit, "fanotify_limit");
        cr_expect_eq(a->fanotify_mark_limit, b->fanotify_mark_limit, "fanotify_mark_limit");
        cr_expect_eq(a->namespace_limit, b->namespace_limit, "namespace_limit");
        cr_expect_eq(a->sigpending_limit, b->sigpending_limit, "sigpending_limit");
        cr_expect_eq(a->msgqueue_limit, b->msgqueue_limit, "msgqueue_limit");
        expect_opt_str_eq(a->image, b->image, "image");
        expect_opt_str_eq(a->image_store, b->image_store, "image_store");
        expect_strv_eq(a->registry_mirrors, a->n_registry_mirrors, b->registry_mirrors,
                       b->n_registry_mirrors, "registry_mirrors");
        expect_strv_eq(a->insecure_registries, a->n_insecure_registries, b->insecure_registries,
                       b->n_insecure_registries, "insecure_registries");
        cr_expect_eq(a->image_max_size, b->image_max_size, "image_max_size");
        expect_strv_eq(a->tools, a->n_tools, b->tools, b->n_tools, "tools");
}

static void struct_round_trip(const char *yaml)
{
        struct policy a, b;
        psrun_error err = {0};
        cr_assert_eq(policy_init(&a), 0);
        cr_assert_eq(policy_load_buffer(&a, "in.yaml", yaml, strlen(yaml), &err), 0, "%s\n%s",
                     err.msg, yaml);
        cr_assert_eq(policy_validate(&a, &err), 0, "%s", err.msg);
        char *json = json_of(&a);
        cr_assert_eq(policy_init(&b), 0);
        cr_assert_eq(policy_load_buffer(&b, "out.json", json, strlen(json), &err), 0, "%s\n%s",
                     err.msg, json);
        expect_same_policy(&a, &b);
        free(json);
        policy_free(&a);
        policy_free(&b);
}

Test(policy_json, every_field_comes_back)
{
        struct_round_trip("");
        struct_round_trip("network: restricted\n"
                          "allow_domains: [pypi.org, '*.pythonhosted.org']\n"
                          "allow_ports: [443, 8443]\n"
                          "allow_cidrs: [192.0.2.0/24, '198.18.0.1/32:53']\n"
                          "allow_private: [198.18.0.0/15]\n"
                          "dns_upstream: [192.0.2.53]\n"
                          "dns_min_ttl: 5s\ndns_max_ttl: 2h\n"
                          "network_pool: 198.18.0.0/16\n"
                          "network_log: /var/log/psrun-net.jsonl\n"
                          "memory_limit: 1536M\ncpu_limit: 0.333333333\npids_limit: 77\n"
                          "disk_limit: 1048577\ntimeout: 2.5\nidle_timeout: 90s\nlifetime: 1h\n"
                          "output_limit: 12345\nbackground_limit: 5\n"
                          "env: {A: 'x \"q\" \\\\ y', B: ~, C: \"tab\\there\\r\\n\", "
                          "D: \"\\x01\\x7f\\x85\\x9f\\u2028\\u2029\\ufeff\\ufffe\\uffff\", "
                          "E: \"\\u00e9\\u4e2d\\U0001F600\"}\n"
                          "workdir: /workspace/a b\nreadonly_rootfs: false\nuser: 4242:4343\n"
                          "backend: gvisor\ngvisor_platform: ptrace\n"
                          "mounts: [{source: ./rel, target: /workspace/rel, readonly: false}, "
                          "/src:/src]\n"
                          "hostname: box-1\nlandlock: required\napparmor: off\n"
                          "apparmor_profile: my-profile\nviolations: full\nlimits: best_effort\n"
                          "install_allow_domains: [pypi.test, '@npm']\n"
                          "pip_index_url: http://pypi.test/simple\n"
                          "npm_registry: https://npm.test:8443/registry/\n"
                          "approve: [install]\n"
                          "pty_limit: 7\ninotify_limit: 3\ninotify_watch_limit: 99\n"
                          "fanotify_limit: 2\nfanotify_mark_limit: 5\nnamespace_limit: 1\n"
                          "sigpending_limit: 11\nmsgqueue_limit: 64K\n"
                          "image: 127.0.0.1:5000/test/small:v1\nimage_store: /srv/images\n"
                          "registry_mirrors: [mirror.test, 'ghcr.io=http://cache.test:5000']\n"
                          "insecure_registries: ['127.0.0.1:5000']\nimage_max_size: 2G\n"
                          "tools: [python, node]\n");
        struct_round_trip("image: oci:./layout:v1\n");
        /* The network keys an install network reads with `network: none`. */
        struct_round_trip("network: none\ninstall_network: full\nallow_ports: [8080]\n"
                          "dns_upstream: [192.0.2.1]\nnetwork_pool: 198.18.4.0/24\n"
                          "allow_private: [198.18.0.0/15]\ndns_max_ttl: 10m\n");
        struct_round_trip("install_network: none\napprove: []\ncpu_limit: 1024\n");
        struct_round_trip("cpu_limit: 0.000000001\n");
        struct_round_trip("cpu_limit: 3.141592653\n");
}
