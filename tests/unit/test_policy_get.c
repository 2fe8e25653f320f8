/* SPDX-License-Identifier: MIT */
/* psrun_policy_get: every key reads back as text psrun_policy_set takes for
 * the same value (policy/policy-get.c). */
#include <criterion/criterion.h>
#include <errno.h>
#include <psrun.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "policy/policy.h"
#include "runtime/api-internal.h"

/* One value per key (`want`: what the getter gives for it; NULL: the value
 * as written). Every key of the vocabulary is here: see all_keys_covered. */
static const struct {
        const char *key, *value, *want;
} values[] = {
        {"network", "restricted", NULL},
        {"allow_domains", "[a.example, '*.b.example']", "[\"a.example\", \"*.b.example\"]"},
        {"allow_ports", "[443, 8443]", NULL},
        {"allow_cidrs", "[192.0.2.0/24, '192.0.2.1/32:443']",
         "[\"192.0.2.0/24\", \"192.0.2.1/32:443\"]"},
        {"allow_private", "[10.1.0.0/16]", "[\"10.1.0.0/16\"]"},
        {"dns_upstream", "[192.0.2.53, 2001:db8::53]", "[\"192.0.2.53\", \"2001:db8::53\"]"},
        {"dns_min_ttl", "10s", "10000ms"},
        {"dns_max_ttl", "2h", "7200000ms"},
        {"network_pool", "10.200.0.0/16", NULL},
        {"network_log", "/var/log/psrun.jsonl", NULL},
        {"name_check", "false", NULL},
        {"install_network", "full", NULL},
        {"install_allow_domains", "[pypi.org]", "[\"pypi.org\"]"},
        {"pip_index_url", "https://pypi.example/simple", NULL},
        {"npm_registry", "https://npm.example/", NULL},
        {"approve", "[install]", "[\"install\"]"},
        {"memory_limit", "1.5G", "1536M"},
        {"cpu_limit", "0.25", NULL},
        {"pids_limit", "64", NULL},
        {"disk_limit", "2g", "2G"},
        {"timeout", "2.5", "2500ms"},
        {"idle_timeout", "0", "0ms"},
        {"lifetime", "1h", "3600000ms"},
        {"output_limit", "64K", NULL},
        {"background_limit", "4", NULL},
        {"env", "[A=b, TERM]", "{\"A\": \"b\", \"TERM\": null}"},
        {"workdir", "/srv/dir", NULL},
        {"readonly_rootfs", "false", NULL},
        {"user", "root", "0:0"},
        {"backend", "gvisor", NULL},
        {"gvisor_platform", "ptrace", NULL},
        {"mounts", "[/src:/src, {source: /a, target: /b, readonly: false}]",
         "[{\"source\": \"/src\", \"target\": \"/src\", \"readonly\": true}, "
         "{\"source\": \"/a\", \"target\": \"/b\", \"readonly\": false}]"},
        {"hostname", "box", NULL},
        {"landlock", "required", NULL},
        {"apparmor", "off", NULL},
        {"apparmor_profile", "custom", NULL},
        {"violations", "full", NULL},
        {"limits", "best_effort", NULL},
        {"pty_limit", "8", NULL},
        {"inotify_limit", "3", NULL},
        {"inotify_watch_limit", "100", NULL},
        {"fanotify_limit", "2", NULL},
        {"fanotify_mark_limit", "50", NULL},
        {"namespace_limit", "2", NULL},
        {"sigpending_limit", "10", NULL},
        {"msgqueue_limit", "1M", NULL},
        {"image", "python:3.11-slim", NULL},
        {"image_store", "/srv/images", NULL},
        {"registry_mirrors", "[mirror.test]", "[\"mirror.test\"]"},
        {"insecure_registries", "['127.0.0.1:5000']", "[\"127.0.0.1:5000\"]"},
        {"image_max_size", "2G", NULL},
        {"tools", "[python, node]", "[\"python\", \"node\"]"},
        /* Strings that `-o` would read as something else come back quoted. */
        {"network_log", "'null'", "\"null\""},
        {"network_log", "'[x'", "\"[x\""},
        {"hostname", "'NULL'", "\"NULL\""},
};

static char *get(const psrun_policy *p, const char *key)
{
        psrun_error err = {0};
        int n = psrun_policy_get(p, key, NULL, 0, &err);
        cr_assert_geq(n, 0, "%s: %s", key, err.msg);
        char *buf = malloc((size_t) n + 1);
        cr_assert_not_null(buf);
        cr_assert_eq(psrun_policy_get(p, key, buf, (size_t) n + 1, &err), n);
        return buf;
}

static char *policy_json(const psrun_policy *p)
{
        /* The whole policy (the internal struct's JSON), to compare. */
        const struct policy *in = &p->p;
        char *text = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&text, &len);
        cr_assert_not_null(f);
        cr_assert_eq(policy_write_json(in, f), 0);
        fclose(f);
        return text;
}

Test(policy_get, every_key_round_trips)
{
        for (size_t i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
                psrun_error err = {0};
                psrun_policy *a = psrun_policy_new(), *b = psrun_policy_new();
                cr_assert(a && b);
                cr_assert_eq(psrun_policy_set(a, values[i].key, values[i].value, &err), 0,
                             "%s=%s: %s", values[i].key, values[i].value, err.msg);
                _cleanup_free_ char *got = get(a, values[i].key);
                const char *want = values[i].want ? values[i].want : values[i].value;
                cr_expect_str_eq(got, want, "%s=%s", values[i].key, values[i].value);
                /* What came out sets the same value on a fresh policy. */
                cr_assert_eq(psrun_policy_set(b, values[i].key, got, &err), 0, "%s=%s: %s",
                             values[i].key, got, err.msg);
                _cleanup_free_ char *again = get(b, values[i].key);
                cr_expect_str_eq(again, got, "%s", values[i].key);
                _cleanup_free_ char *ja = policy_json(a), *jb = policy_json(b);
                cr_expect_str_eq(ja, jb, "%s=%s", values[i].key, got);
                psrun_policy_free(a);
                psrun_policy_free(b);
        }
}

Test(policy_get, all_keys_covered)
{
        for (size_t i = 0; policy_key_name_at(i); i++) {
                const char *key = policy_key_name_at(i);
                bool found = false;
                for (size_t j = 0; j < sizeof(values) / sizeof(values[0]) && !found; j++)
                        found = strcmp(values[j].key, key) == 0;
                cr_expect(found, "no round-trip value for `%s`", key);
        }
}

Test(policy_get, defaults)
{
        psrun_policy *p = psrun_policy_new();
        static const char *const want[][2] = {
                {"network", "none"},
                {"memory_limit", "512M"},
                {"cpu_limit", "1"},
                {"pids_limit", "256"},
                {"disk_limit", "1G"},
                {"timeout", "300000ms"},
                {"workdir", "/workspace"},
                {"hostname", "sandbox"},
                {"readonly_rootfs", "true"},
                {"allow_domains", "[]"},
                {"env", "{}"},
                {"approve", "[]"},
                {"pip_index_url", ""},
                {"user", "1000:1000"},
                {"mounts", "[]"},
                {"allow_ports", "[80, 443]"},
        };
        for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
                _cleanup_free_ char *got = get(p, want[i][0]);
                cr_expect_str_eq(got, want[i][1], "%s", want[i][0]);
        }
        psrun_policy_free(p);
}

Test(policy_get, buffer_too_small_and_errors)
{
        psrun_policy *p = psrun_policy_new();
        psrun_error err = {0};
        char buf[8];
        memset(buf, 'x', sizeof(buf));
        /* "300000ms" is 8 characters: with its NUL it needs 9. */
        cr_expect_eq(psrun_policy_get(p, "timeout", buf, sizeof(buf), &err), 8);
        cr_expect_str_eq(buf, "", "a value cut short is never written");
        char big[9];
        cr_expect_eq(psrun_policy_get(p, "timeout", big, sizeof(big), &err), 8);
        cr_expect_str_eq(big, "300000ms");
        cr_expect_eq(psrun_policy_get(p, "networks", buf, sizeof(buf), &err), -EINVAL);
        cr_expect_str_eq(err.msg, "policy: unknown key `networks`, did you mean `network`?");
        cr_expect_eq(psrun_policy_get(p, "zzzzzzzz", buf, sizeof(buf), &err), -EINVAL);
        cr_expect_str_eq(err.msg, "policy: unknown key `zzzzzzzz`");
        cr_expect_eq(psrun_policy_get(NULL, "timeout", buf, sizeof(buf), &err), -EINVAL);
        cr_expect_eq(psrun_policy_get(p, "timeout", NULL, 4, &err), -EINVAL);
        psrun_policy_free(p);
}
