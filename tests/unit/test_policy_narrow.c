/* SPDX-License-Identifier: MIT */
/* psrun_policy_set_narrowing / psrun_policy_narrows: a value is taken only
 * when it leaves the policy no wider (policy/policy-narrow.c). */
#include <criterion/criterion.h>
#include <errno.h>
#include <psrun.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "policy/policy.h"
#include "runtime/api-internal.h"

static psrun_policy *policy_from(const char *yaml)
{
        psrun_policy *p = psrun_policy_new();
        psrun_error err = {0};
        cr_assert_not_null(p);
        cr_assert_eq(psrun_policy_load_string(p, yaml, &err), 0, "%s", err.msg);
        return p;
}

static void value_is(const psrun_policy *p, const char *key, const char *want)
{
        char buf[512];
        psrun_error err = {0};
        cr_assert_geq(psrun_policy_get(p, key, buf, sizeof(buf), &err), 0, "%s", err.msg);
        cr_expect_str_eq(buf, want, "%s", key);
}

static void narrows(psrun_policy *p, const char *key, const char *value, const char *then)
{
        psrun_error err = {0};
        cr_expect_eq(psrun_policy_set_narrowing(p, key, value, &err), 0, "%s=%s: %s", key, value,
                     err.msg);
        value_is(p, key, then);
}

/* Refused with errnum and exactly msg; the policy keeps `kept`. */
static void refused(psrun_policy *p, const char *key, const char *value, int errnum,
                    const char *msg, const char *kept)
{
        psrun_error err = {0};
        cr_expect_eq(psrun_policy_set_narrowing(p, key, value, &err), -errnum, "%s=%s: %s", key,
                     value, err.msg);
        cr_expect_eq(err.code, errnum);
        cr_expect_str_eq(err.msg, msg, "%s=%s", key, value);
        cr_expect_null(strchr(err.msg, '\n'));
        value_is(p, key, kept);
}

#define WIDEN EPERM

Test(policy_narrow, sizes)
{
        psrun_policy *p = policy_from("memory_limit: 1G\ndisk_limit: 2G\n");
        refused(p, "memory_limit", "2G", WIDEN,
                "policy.memory_limit: `2G` would widen the policy (it is 1G)", "1G");
        narrows(p, "memory_limit", "1G", "1G");
        narrows(p, "memory_limit", "512M", "512M");
        /* The new value is the ceiling from now on. */
        refused(p, "memory_limit", "1G", WIDEN,
                "policy.memory_limit: `1G` would widen the policy (it is 512M)", "512M");
        narrows(p, "disk_limit", "1.5G", "1536M");
        refused(p, "msgqueue_limit", "1M", WIDEN,
                "policy.msgqueue_limit: `1M` would widen the policy (it is 128K)", "128K");
        narrows(p, "output_limit", "64K", "64K");
        narrows(p, "background_limit", "2", "2");
        refused(p, "background_limit", "9", WIDEN,
                "policy.background_limit: `9` would widen the policy (it is 2)", "2");
        psrun_policy_free(p);
}

Test(policy_narrow, counts_and_cpus)
{
        psrun_policy *p = policy_from("pids_limit: 100\ncpu_limit: 2\n");
        narrows(p, "pids_limit", "50", "50");
        refused(p, "pids_limit", "51", WIDEN,
                "policy.pids_limit: `51` would widen the policy (it is 50)", "50");
        /* Kernel quotas: 0 allows none, the narrowest. */
        narrows(p, "inotify_limit", "0", "0");
        refused(p, "namespace_limit", "1", WIDEN,
                "policy.namespace_limit: `1` would widen the policy (it is 0)", "0");
        narrows(p, "cpu_limit", "0.5", "0.5");
        refused(p, "cpu_limit", "2.5", WIDEN,
                "policy.cpu_limit: `2.5` would widen the policy (it is 0.5)", "0.5");
        psrun_policy_free(p);
}

Test(policy_narrow, durations)
{
        psrun_policy *p = policy_from("timeout: 60\nidle_timeout: 30m\nlifetime: 0\n");
        narrows(p, "timeout", "30s", "30000ms");
        refused(p, "timeout", "31s", WIDEN,
                "policy.timeout: `31s` would widen the policy (it is 30000ms)", "30000ms");
        /* idle_timeout and lifetime: 0 is "no limit", the widest. */
        refused(p, "idle_timeout", "0", WIDEN,
                "policy.idle_timeout: `0` would widen the policy (it is 1800000ms)", "1800000ms");
        narrows(p, "idle_timeout", "5m", "300000ms");
        narrows(p, "lifetime", "1h", "3600000ms");
        refused(p, "lifetime", "0", WIDEN,
                "policy.lifetime: `0` would widen the policy (it is 3600000ms)", "3600000ms");
        narrows(p, "dns_max_ttl", "60s", "60000ms");
        psrun_policy_free(p);
}

Test(policy_narrow, network_modes)
{
        psrun_policy *p = policy_from("network: full\ninstall_network: restricted\n");
        narrows(p, "network", "full", "full");
        narrows(p, "network", "restricted", "restricted");
        refused(p, "network", "full", WIDEN,
                "policy.network: `full` would widen the policy (it is restricted)", "restricted");
        narrows(p, "network", "none", "none");
        refused(p, "network", "restricted", WIDEN,
                "policy.network: `restricted` would widen the policy (it is none)", "none");
        refused(p, "install_network", "full", WIDEN,
                "policy.install_network: `full` would widen the policy (it is restricted)",
                "restricted");
        narrows(p, "install_network", "none", "none");
        psrun_policy_free(p);
}

Test(policy_narrow, domain_lists_are_subsets)
{
        psrun_policy *p =
                policy_from("network: restricted\n"
                            "allow_domains: [a.example, '*.b.example']\n"
                            "install_allow_domains: [pypi.org, files.pythonhosted.org]\n");
        static const char both[] = "[\"a.example\", \"*.b.example\"]";
        /* allow_domains adds to the list: only names it already allows. */
        narrows(p, "allow_domains", "[a.example]", both);
        narrows(p, "allow_domains", "[x.b.example, '*.y.b.example']",
                "[\"a.example\", \"*.b.example\", \"x.b.example\", \"*.y.b.example\"]");
        refused(p, "allow_domains", "[b.example]", WIDEN,
                "policy.allow_domains: `[b.example]` would widen the policy (`b.example` is not "
                "within its allow_domains)",
                "[\"a.example\", \"*.b.example\", \"x.b.example\", \"*.y.b.example\"]");
        refused(p, "allow_domains", "[evil.example]", WIDEN,
                "policy.allow_domains: `[evil.example]` would widen the policy (`evil.example` "
                "is not within its allow_domains)",
                "[\"a.example\", \"*.b.example\", \"x.b.example\", \"*.y.b.example\"]");
        refused(p, "allow_domains", "[xb.example]", WIDEN,
                "policy.allow_domains: `[xb.example]` would widen the policy (`xb.example` is "
                "not within its allow_domains)",
                "[\"a.example\", \"*.b.example\", \"x.b.example\", \"*.y.b.example\"]");
        /* install_allow_domains replaces the list: a subset narrows it. */
        narrows(p, "install_allow_domains", "[pypi.org]", "[\"pypi.org\"]");
        refused(p, "install_allow_domains", "[files.pythonhosted.org]", WIDEN,
                "policy.install_allow_domains: `[files.pythonhosted.org]` would widen the policy "
                "(`files.pythonhosted.org` is not within its install_allow_domains)",
                "[\"pypi.org\"]");
        narrows(p, "install_allow_domains", "[]", "[]");
        psrun_policy_free(p);
}

Test(policy_narrow, cidrs_ports_and_dns_servers)
{
        psrun_policy *p = policy_from("network: restricted\n"
                                      "allow_cidrs: ['192.0.2.0/24:443']\n"
                                      "allow_private: [10.0.0.0/8]\n"
                                      "allow_ports: [80, 443]\n"
                                      "dns_upstream: [192.0.2.53, 192.0.2.54]\n");
        narrows(p, "allow_cidrs", "['192.0.2.16/28:443']", "[\"192.0.2.16/28:443\"]");
        refused(p, "allow_cidrs", "['192.0.2.0/24:443']", WIDEN,
                "policy.allow_cidrs: `['192.0.2.0/24:443']` would widen the policy "
                "(`192.0.2.0/24:443` is not within its allow_cidrs)",
                "[\"192.0.2.16/28:443\"]");
        /* No port: every allowed port, more than 443 alone. */
        refused(p, "allow_cidrs", "[192.0.2.16/28]", WIDEN,
                "policy.allow_cidrs: `[192.0.2.16/28]` would widen the policy (`192.0.2.16/28` "
                "is not within its allow_cidrs)",
                "[\"192.0.2.16/28:443\"]");
        narrows(p, "allow_private", "[10.1.0.0/16]", "[\"10.1.0.0/16\"]");
        refused(p, "allow_private", "[10.0.0.0/8]", WIDEN,
                "policy.allow_private: `[10.0.0.0/8]` would widen the policy (`10.0.0.0/8` is "
                "not within its allow_private)",
                "[\"10.1.0.0/16\"]");
        narrows(p, "allow_ports", "[443]", "[443]");
        refused(p, "allow_ports", "[443, 22]", WIDEN,
                "policy.allow_ports: `[443, 22]` would widen the policy (port 22 is not one of "
                "its allow_ports)",
                "[443]");
        narrows(p, "dns_upstream", "[192.0.2.54]", "[\"192.0.2.54\"]");
        refused(p, "dns_upstream", "[192.0.2.53]", WIDEN,
                "policy.dns_upstream: `[192.0.2.53]` would widen the policy (`192.0.2.53` is not "
                "within its dns_upstream)",
                "[\"192.0.2.54\"]");
        psrun_policy_free(p);
}

Test(policy_narrow, booleans_layers_and_approve)
{
        psrun_policy *p = policy_from("approve: [install]\n");
        refused(p, "readonly_rootfs", "false", WIDEN,
                "policy.readonly_rootfs: `false` would widen the policy (it is true)", "true");
        narrows(p, "readonly_rootfs", "true", "true");
        narrows(p, "landlock", "required", "required");
        refused(p, "landlock", "auto", WIDEN,
                "policy.landlock: `auto` would widen the policy (it is required)", "required");
        refused(p, "apparmor", "off", WIDEN,
                "policy.apparmor: `off` would widen the policy (it is auto)", "auto");
        refused(p, "approve", "[]", WIDEN,
                "policy.approve: `[]` would widen the policy (it would no longer ask before "
                "install)",
                "[\"install\"]");
        narrows(p, "approve", "[install]", "[\"install\"]");
        psrun_policy_free(p);

        /* The other way round, false to true narrows. */
        p = policy_from("readonly_rootfs: false\napprove: []\n");
        narrows(p, "readonly_rootfs", "true", "true");
        narrows(p, "approve", "[install]", "[\"install\"]");
        psrun_policy_free(p);
}

Test(policy_narrow, env_takes_nothing_more_from_the_caller)
{
        psrun_policy *p = policy_from("env: {A: a, TERM: null}\n");
        narrows(p, "env", "{A: z, B: b}", "{\"A\": \"z\", \"TERM\": null, \"B\": \"b\"}");
        /* Inheriting TERM again is no wider: the policy does already. */
        narrows(p, "env", "[TERM]", "{\"A\": \"z\", \"TERM\": null, \"B\": \"b\"}");
        refused(p, "env", "{SECRET_TOKEN: null}", WIDEN,
                "policy.env: `{SECRET_TOKEN: null}` would widen the policy (SECRET_TOKEN would "
                "come from the caller's environment)",
                "{\"A\": \"z\", \"TERM\": null, \"B\": \"b\"}");
        refused(p, "env", "[HOME, X=1]", WIDEN,
                "policy.env: `[HOME, X=1]` would widen the policy (HOME would come from the "
                "caller's environment)",
                "{\"A\": \"z\", \"TERM\": null, \"B\": \"b\"}");
        /* An explicit value in place of an inherited one narrows. */
        narrows(p, "env", "{TERM: dumb}", "{\"A\": \"z\", \"TERM\": \"dumb\", \"B\": \"b\"}");
        psrun_policy_free(p);
}

Test(policy_narrow, free_keys_and_keys_without_order)
{
        psrun_policy *p = psrun_policy_new();
        narrows(p, "workdir", "/workspace/src", "/workspace/src");
        narrows(p, "hostname", "box", "box");
        refused(p, "backend", "gvisor", EOPNOTSUPP,
                "policy.backend: psrun knows no order of its values, so it cannot tell a "
                "narrowing from a widening",
                "native");
        refused(p, "mounts", "[/etc:/host-etc]", EOPNOTSUPP,
                "policy.mounts: psrun knows no order of its values, so it cannot tell a "
                "narrowing from a widening",
                "[]");
        refused(p, "network_log", "/tmp/log", EOPNOTSUPP,
                "policy.network_log: psrun knows no order of its values, so it cannot tell a "
                "narrowing from a widening",
                "");
        psrun_policy_free(p);
}

Test(policy_narrow, unknown_keys_and_bad_values)
{
        psrun_policy *p = psrun_policy_new();
        psrun_error err = {0};
        cr_expect_eq(psrun_policy_set_narrowing(p, "networks", "none", &err), -EINVAL);
        cr_expect_str_eq(err.msg, "-o networks: unknown key `networks`, did you mean `network`?");
        cr_expect_eq(psrun_policy_narrows(p, "zzzzzz", "none", &err), -EINVAL);
        cr_expect_str_eq(err.msg, "-o zzzzzz: unknown key `zzzzzz`");
        refused(p, "memory_limit", "lots", EINVAL,
                "-o memory_limit: \"lots\" is not a size (use e.g. 512M, 2G)", "512M");
        cr_expect_eq(psrun_policy_set_narrowing(NULL, "timeout", "1", &err), -EINVAL);
        cr_expect_eq(psrun_policy_set_narrowing(p, NULL, "1", &err), -EINVAL);
        cr_expect_eq(psrun_policy_narrows(p, "timeout", NULL, &err), -EINVAL);
        psrun_policy_free(p);
}

Test(policy_narrow, narrows_sets_nothing)
{
        psrun_policy *p = policy_from("timeout: 2s\n");
        psrun_error err = {0};
        cr_expect_eq(psrun_policy_narrows(p, "timeout", "1500ms", &err), 0, "%s", err.msg);
        value_is(p, "timeout", "2000ms");
        cr_expect_eq(psrun_policy_narrows(p, "timeout", "10", &err), -EPERM);
        cr_expect_str_eq(err.msg, "policy.timeout: `10` would widen the policy (it is 2000ms)");
        value_is(p, "timeout", "2000ms");
        psrun_policy_free(p);
}

/* Every key has a rule: setting the value a policy already has is never
 * a widening, unless the key is one of these, whose values have no order. */
Test(policy_narrow, every_key_has_a_rule)
{
        static const char *const no_order[] = {
                "network_pool",
                "network_log",
                "pip_index_url",
                "npm_registry",
                "user",
                "backend",
                "mounts",
                "gvisor_platform",
                "apparmor_profile",
                "violations",
                "image",
                "image_store",
                "registry_mirrors",
                "insecure_registries",
                "tools",
        };
        psrun_policy *p = policy_from("network: restricted\n"
                                      "allow_domains: [a.example]\n"
                                      "allow_cidrs: [192.0.2.0/24]\n"
                                      "allow_private: [10.0.0.0/8]\n"
                                      "dns_upstream: [192.0.2.53]\n"
                                      "network_pool: 10.200.0.0/16\n"
                                      "network_log: /tmp/psrun-net.log\n"
                                      "pip_index_url: https://pypi.example/simple\n"
                                      "npm_registry: https://npm.example/\n"
                                      "approve: [install]\n"
                                      "env: {A: a}\n"
                                      "mounts: [/src:/src]\n"
                                      "apparmor_profile: custom\n");
        for (size_t i = 0; policy_key_name_at(i); i++) {
                const char *key = policy_key_name_at(i);
                char value[512];
                psrun_error err = {0};
                cr_assert_geq(psrun_policy_get(p, key, value, sizeof(value), &err), 0);
                bool ordered = true;
                for (size_t j = 0; j < sizeof(no_order) / sizeof(no_order[0]); j++)
                        if (strcmp(no_order[j], key) == 0)
                                ordered = false;
                int r = psrun_policy_narrows(p, key, value, &err);
                cr_expect_eq(r, ordered ? 0 : -EOPNOTSUPP, "%s=%s: %s", key, value, err.msg);
        }
        psrun_policy_free(p);
}

/* policy_check_ceiling: a per-call value of a limit narrows it, never
 * widens it, with the option and the policy's value in one line. */
Test(policy_narrow, per_call_ceilings)
{
        psrun_policy *pp = policy_from("timeout: 10s\noutput_limit: 64K\n");
        const struct policy *p = &((const struct psrun_policy *) pp)->p;
        psrun_error err = {0};
        cr_expect_eq(policy_check_ceiling(p, "timeout", "timeout_ms", 10000, &err), 0);
        cr_expect_eq(policy_check_ceiling(p, "timeout", "timeout_ms", 1, &err), 0);
        cr_expect_eq(policy_check_ceiling(p, "timeout", "timeout_ms", 10001, &err), -EPERM);
        cr_expect_str_eq(err.msg, "timeout_ms: 10001 is above the policy's timeout 10s");
        cr_expect_eq(policy_check_ceiling(p, "output_limit", "output_limit", 65536, &err), 0);
        cr_expect_eq(policy_check_ceiling(p, "output_limit", "output_limit", 65537, &err), -EPERM);
        cr_expect(strstr(err.msg, "output_limit: 65537 is above the policy's output_limit "), "%s",
                  err.msg);
        /* Only limits have a ceiling. */
        cr_expect_eq(policy_check_ceiling(p, "network", "network", 1, &err), -EINVAL);
        cr_expect_str_eq(err.msg, "network: `network` is not a limit");
        cr_expect_eq(policy_check_ceiling(p, "nope", "x", 1, &err), -EINVAL);
        psrun_policy_free(pp);
}
