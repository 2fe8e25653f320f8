/* SPDX-License-Identifier: MIT */
/* The network keys: CIDRs, ports, presets, and what each mode accepts. */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

static int set(struct policy *p, const char *opt, psrun_error *err)
{
        return policy_set_option(p, opt, err);
}

Test(policy_net, hostile_values_name_the_field)
{
        static const struct {
                const char *opt, *want;
        } bad[] = {
                {"allow_cidrs=[10.0.0.1/8]", "allow_cidrs[0]"},
                {"allow_cidrs=[192.0.2.0/33]", "prefix length"},
                {"allow_cidrs=[192.0.2.1:0]", "port"},
                {"allow_cidrs=[192.0.2.1:65536]", "port"},
                {"allow_cidrs=[not-an-ip]", "allow_cidrs[0]"},
                {"allow_private=[2001:db8::1/16]", "host bits"},
                {"allow_ports=[0]", "allow_ports[0]"},
                {"allow_ports=[70000]", "allow_ports[0]"},
                {"allow_ports=[-1]", "allow_ports[0]"},
                {"dns_upstream=[1.2.3]", "dns_upstream[0]"},
                {"dns_upstream=[1.2.3.4/24]", "dns_upstream[0]"},
                {"dns_max_ttl=0", "dns_max_ttl"},
                {"network_pool=10.0.0.0/33", "network_pool"},
                {"allow_domains=[\"@nope\"]", "unknown preset"},
                {"name_check=maybe", "name_check"},
                {"name_check=1", "name_check"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct policy p;
                psrun_error err = {0};
                cr_assert_eq(policy_init(&p), 0);
                cr_expect_lt(set(&p, bad[i].opt, &err), 0, "%s accepted", bad[i].opt);
                cr_expect(strstr(err.msg, bad[i].want), "%s: %s", bad[i].opt, err.msg);
                cr_expect_null(strchr(err.msg, '\n'), "%s: multi-line", bad[i].opt);
                policy_free(&p);
        }
}

Test(policy_net, keys_outside_their_mode_are_refused)
{
        struct policy p;
        psrun_error err = {0};
        cr_assert_eq(policy_init(&p), 0);
        cr_assert_eq(set(&p, "allow_private=[10.1.0.0/16]", &err), 0, "%s", err.msg);
        /* A session's install network (install_network, restricted by
         * default) reads the shared network keys even with network none. */
        cr_expect_eq(policy_validate(&p, &err), 0, "%s", err.msg);
        /* psrun run has no installs: there they mean nothing. */
        cr_expect_lt(policy_check_network_alone(&p, &err), 0);
        cr_expect(strstr(err.msg, "allow_private: not used with `network: none`"), "%s", err.msg);
        cr_assert_eq(set(&p, "install_network=none", &err), 0);
        cr_expect_lt(policy_validate(&p, &err), 0);
        cr_expect(strstr(err.msg, "allow_private"), "%s", err.msg);
        cr_expect(strstr(err.msg, "install_network: none"), "%s", err.msg);
        cr_assert_eq(set(&p, "network=full", &err), 0);
        cr_expect_eq(policy_validate(&p, &err), 0, "%s", err.msg);
        cr_assert_eq(set(&p, "allow_cidrs=[192.0.2.0/24:443]", &err), 0, "%s", err.msg);
        cr_expect_lt(policy_validate(&p, &err), 0, "allow_cidrs means nothing in full mode");
        cr_assert_eq(set(&p, "network=restricted", &err), 0);
        cr_expect_eq(policy_validate(&p, &err), 0, "%s", err.msg);
        cr_assert_eq(set(&p, "dns_min_ttl=2h", &err), 0);
        cr_expect_lt(policy_validate(&p, &err), 0, "min above max");
        policy_free(&p);
}

Test(policy_net, name_check_is_on_by_default_off_only_where_it_means_something)
{
        struct policy p;
        psrun_error err = {0};
        cr_assert_eq(policy_init(&p), 0);
        cr_expect(p.name_check);
        cr_assert_eq(set(&p, "name_check=off", &err), 0, "%s", err.msg);
        cr_expect_not(p.name_check);
        cr_assert_eq(set(&p, "name_check=on", &err), 0, "%s", err.msg);
        cr_expect(p.name_check);
        cr_assert_eq(set(&p, "name_check=false", &err), 0, "%s", err.msg);
        cr_expect_not(p.name_check);
        /* install_network is restricted by default: it reads the key. */
        cr_expect_eq(policy_validate(&p, &err), 0, "%s", err.msg);
        cr_assert_eq(set(&p, "install_network=full", &err), 0);
        cr_expect_lt(policy_validate(&p, &err), 0);
        cr_expect(strstr(err.msg, "name_check: only used with `network: restricted`"), "%s",
                  err.msg);
        cr_assert_eq(set(&p, "network=restricted", &err), 0);
        cr_expect_eq(policy_validate(&p, &err), 0, "%s", err.msg);
        /* A ceiling: turning it off widens. */
        struct policy q, r;
        cr_assert_eq(policy_init(&q), 0);
        cr_expect_eq(policy_narrowed(&q, "name_check", "false", &r, &err), -EPERM);
        cr_expect(strstr(err.msg, "name_check"), "%s", err.msg);
        policy_free(&q);
        policy_free(&p);
}

Test(policy_net, presets_expand_and_values_normalize)
{
        struct policy p;
        psrun_error err = {0};
        cr_assert_eq(policy_init(&p), 0);
        cr_assert_eq(set(&p, "network=restricted", &err), 0);
        cr_assert_eq(set(&p, "allow_domains=[\"@pypi\", pypi.org, \"@github\"]", &err), 0, "%s",
                     err.msg);
        cr_expect_eq(p.n_allow_domains, 7, "presets expanded without duplicates");
        cr_expect_str_eq(p.allow_domains[0], "pypi.org");
        cr_expect_str_eq(p.allow_domains[1], "files.pythonhosted.org");
        cr_assert_eq(set(&p, "allow_cidrs=[\"[2001:db8::1]:443\", 192.0.2.7]", &err), 0, "%s",
                     err.msg);
        cr_expect_str_eq(p.allow_cidrs[0], "[2001:db8::1/128]:443");
        cr_expect_str_eq(p.allow_cidrs[1], "192.0.2.7/32");
        cr_expect_lt(policy_validate(&p, &err), 0, "IPv6 is off inside: refused, not ignored");
        cr_expect(strstr(err.msg, "allow_cidrs[0]: IPv6"), "%s", err.msg);
        cr_assert_eq(set(&p, "allow_cidrs=[192.0.2.0/24:8443, 192.0.2.7]", &err), 0, "%s", err.msg);
        cr_expect_str_eq(p.allow_cidrs[0], "192.0.2.0/24:8443");
        cr_assert_eq(set(&p, "allow_ports=[8080]", &err), 0);
        cr_expect_eq(p.n_allow_ports, 1, "a list replaces the default 80, 443");
        cr_expect_eq(policy_validate(&p, &err), 0, "%s", err.msg);

        /* what `psrun policy` prints loads back to the same policy */
        char *buf = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&buf, &len);
        cr_assert_eq(policy_write_json(&p, f), 0);
        fclose(f);
        struct policy q;
        cr_assert_eq(policy_init(&q), 0);
        cr_assert_eq(policy_load_buffer(&q, "json", buf, len, &err), 0, "%s", err.msg);
        cr_expect_eq(q.n_allow_domains, 7);
        cr_expect_eq(q.n_allow_cidrs, 2);
        cr_expect_str_eq(q.allow_cidrs[0], "192.0.2.0/24:8443");
        cr_expect_eq(q.n_allow_ports, 1);
        cr_expect_eq(q.allow_ports[0], 8080);
        free(buf);
        policy_free(&q);
        policy_free(&p);
}
