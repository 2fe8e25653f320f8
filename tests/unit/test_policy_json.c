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
