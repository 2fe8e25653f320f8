/* SPDX-License-Identifier: MIT */
/* The session keys: install_network, install_allow_domains, the package
 * indexes, approve. */
#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

#include "policy/policy.h"

static int set(struct policy *p, const char *opt, psrun_error *err)
{
        return policy_set_option(p, opt, err);
}

Test(policy_install, defaults)
{
        struct policy p;
        cr_assert_eq(policy_init(&p), 0);
        cr_expect_eq(p.install_network, POLICY_NETWORK_RESTRICTED);
        cr_assert_eq(p.n_install_allow_domains, 3);
        cr_expect_str_eq(p.install_allow_domains[0], "pypi.org");
        cr_expect_str_eq(p.install_allow_domains[1], "files.pythonhosted.org");
        cr_expect_str_eq(p.install_allow_domains[2], "registry.npmjs.org");
        cr_expect_null(p.install_allow_domains[3]);
        cr_expect_null(p.pip_index_url);
        cr_expect_null(p.npm_registry);
        cr_expect_eq(p.approve, 0);
        psrun_error err = {0};
        cr_expect_eq(policy_validate(&p, &err), 0, "%s", err.msg);
        policy_free(&p);
}

Test(policy_install, allowlist_replaces_its_default_and_expands_presets)
{
        struct policy p;
        psrun_error err = {0};
        cr_assert_eq(policy_init(&p), 0);
        cr_assert_eq(set(&p, "install_allow_domains=[Mirror.Example.COM., '@crates']", &err), 0,
                     "%s", err.msg);
        cr_assert_eq(p.n_install_allow_domains, 4);
        cr_expect_str_eq(p.install_allow_domains[0], "mirror.example.com");
        cr_expect_str_eq(p.install_allow_domains[1], "crates.io");
        /* A later source replaces, as an operator naming a mirror means. */
        cr_assert_eq(set(&p, "install_allow_domains=[pypi.test]", &err), 0, "%s", err.msg);
        cr_assert_eq(p.n_install_allow_domains, 1);
        cr_expect_str_eq(p.install_allow_domains[0], "pypi.test");
        cr_assert_eq(set(&p, "install_allow_domains=[]", &err), 0, "%s", err.msg);
        cr_expect_eq(p.n_install_allow_domains, 0);
        cr_expect_not_null(p.install_allow_domains);
        cr_expect_eq(policy_validate(&p, &err), 0, "%s", err.msg);
        /* Given, it only means something for a restricted install network. */
        cr_assert_eq(set(&p, "install_network=full", &err), 0);
        cr_expect_lt(policy_validate(&p, &err), 0);
        cr_expect(strstr(err.msg, "install_allow_domains: only used with"), "%s", err.msg);
        policy_free(&p);
}

Test(policy_install, hostile_values_name_the_field)
{
        static const struct {
                const char *opt, *want;
        } bad[] = {
                {"install_network=everywhere", "install_network"},
                {"install_allow_domains=[evil.test/x]", "install_allow_domains[0]"},
                {"install_allow_domains=['@nope']", "unknown preset"},
                {"pip_index_url=ftp://pypi.test/", "must start with https:// or http://"},
                {"pip_index_url=http://user:pw@pypi.test/", "credentials"},
                {"pip_index_url=http://pypi.test/simple?x=1", "not accepted in the path"},
                {"pip_index_url=http://pypi.test/a b", "not accepted in the path"},
                {"pip_index_url=http://pypi.test/$(id)", "not accepted in the path"},
                {"pip_index_url=http://pypi.test/`id`", "not accepted in the path"},
                {"pip_index_url=http://:80/", "has no host"},
                {"pip_index_url=http://pypi.test:0/", "port"},
                {"pip_index_url=http://pypi.test:99999/", "port"},
                {"pip_index_url=http://-pypi.test/", "has no host"},
                {"npm_registry=javascript:alert(1)", "must start with"},
                {"npm_registry=''", "npm_registry"},
                {"approve=[install, delete]", "unknown action `delete`"},
                {"approve=[instal]", "did you mean `install`"},
                {"approve=[[install]]", "approve[0]"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct policy p;
                psrun_error err = {0};
                cr_assert_eq(policy_init(&p), 0);
                cr_expect_lt(set(&p, bad[i].opt, &err), 0, "%s accepted", bad[i].opt);
                cr_expect(strstr(err.msg, bad[i].want), "%s: %s", bad[i].opt, err.msg);
                cr_expect_null(strchr(err.msg, '\n'), "%s: multi-line", bad[i].opt);
                /* All or nothing: the policy is as before. */
                cr_expect_null(p.pip_index_url, "%s", bad[i].opt);
                cr_expect_eq(p.n_install_allow_domains, 3, "%s", bad[i].opt);
                policy_free(&p);
        }
}

Test(policy_install, urls_normalize)
{
        struct policy p;
        psrun_error err = {0};
        cr_assert_eq(policy_init(&p), 0);
        cr_assert_eq(set(&p, "pip_index_url=HTTP://PyPI.Test:8080/Simple/", &err), 0, "%s",
                     err.msg);
        /* Scheme and host lowercased, the path as given. */
        cr_expect_str_eq(p.pip_index_url, "http://pypi.test:8080/Simple/");
        cr_assert_eq(set(&p, "npm_registry=https://[2001:db8::1]/npm/", &err), 0, "%s", err.msg);
        cr_expect_str_eq(p.npm_registry, "https://[2001:db8::1]/npm/");
        cr_expect_eq(policy_validate(&p, &err), 0, "%s", err.msg);
        /* Direct writes are checked by validate. */
        free(p.pip_index_url);
        p.pip_index_url = strdup("http://a@b/");
        cr_expect_lt(policy_validate(&p, &err), 0);
        cr_expect(strstr(err.msg, "pip_index_url"), "%s", err.msg);
        policy_free(&p);
}

Test(policy_install, approve_actions)
{
        struct policy p;
        psrun_error err = {0};
        cr_assert_eq(policy_init(&p), 0);
        cr_assert_eq(set(&p, "approve=[install, install]", &err), 0, "%s", err.msg);
        cr_expect_eq(p.approve, POLICY_ACTION_INSTALL);
        cr_assert_eq(set(&p, "approve=[]", &err), 0, "%s", err.msg);
        cr_expect_eq(p.approve, 0);
        /* One action alone, as the list keys take one value. */
        cr_assert_eq(set(&p, "approve=install", &err), 0, "%s", err.msg);
        cr_expect_eq(p.approve, POLICY_ACTION_INSTALL);
        cr_assert_eq(set(&p, "approve=[]", &err), 0, "%s", err.msg);
        cr_expect_eq(p.approve, 0);
        p.approve = 1U << 7;
        cr_expect_lt(policy_validate(&p, &err), 0);
        cr_expect(strstr(err.msg, "approve"), "%s", err.msg);
        cr_expect_eq(policy_action_from_string("install"), (int) POLICY_ACTION_INSTALL);
        cr_expect_lt(policy_action_from_string("Install"), 0);
        cr_expect_lt(policy_action_from_string(NULL), 0);
        uint32_t bit = 0;
        cr_expect_str_eq(policy_action_name_at(0, &bit), "install");
        cr_expect_eq(bit, POLICY_ACTION_INSTALL);
        cr_expect_null(policy_action_name_at(1, NULL));
        policy_free(&p);
}

Test(policy_install, copy_is_deep)
{
        struct policy a, b;
        psrun_error err = {0};
        cr_assert_eq(policy_init(&a), 0);
        cr_assert_eq(set(&a, "pip_index_url=http://pypi.test/simple", &err), 0);
        cr_assert_eq(set(&a, "npm_registry=http://npm.test/", &err), 0);
        cr_assert_eq(set(&a, "install_allow_domains=[pypi.test]", &err), 0);
        cr_assert_eq(policy_copy(&b, &a), 0);
        cr_expect_neq(b.pip_index_url, a.pip_index_url);
        cr_expect_str_eq(b.pip_index_url, a.pip_index_url);
        cr_expect_neq(b.npm_registry, a.npm_registry);
        cr_expect_neq(b.install_allow_domains, a.install_allow_domains);
        cr_expect_str_eq(b.install_allow_domains[0], "pypi.test");
        cr_expect(b.install_allow_domains_given);
        policy_free(&a);
        cr_expect_eq(policy_validate(&b, &err), 0, "%s", err.msg);
        policy_free(&b);
}
