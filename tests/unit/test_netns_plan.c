/* SPDX-License-Identifier: MIT */
/* netns_plan(), through the policy's request (plan_policy_network):
 * allow_cidrs and allow_private entries that could not do what they say
 * are errors naming the entry, not silent no-ops. */
#include <criterion/criterion.h>
#include <string.h>
#include <unistd.h>

#include "netns/netns.h"
#include "policy/policy.h"
#include "runtime/plan.h"

static int plan_with(const char *const *opts, struct netns_plan *np, psrun_error *err)
{
        struct policy p;
        cr_assert_eq(policy_init(&p), 0);
        /* An upstream given: the host's resolv.conf is not read. */
        cr_assert_eq(policy_set_option(&p, "dns_upstream=[192.0.2.53]", err), 0, "%s", err->msg);
        for (size_t i = 0; opts[i]; i++)
                cr_assert_eq(policy_set_option(&p, opts[i], err), 0, "%s: %s", opts[i], err->msg);
        int r = policy_validate(&p, err);
        if (r >= 0)
                r = plan_policy_network(&p, np, err);
        policy_free(&p);
        return r;
}

Test(netns_plan, entries_that_cannot_work_are_refused)
{
        static const struct {
                const char *opts[4];
                const char *want;
        } bad[] = {
                {{"network=restricted", "allow_cidrs=[10.77.0.1/32:80]"},
                 "allow_cidrs[0]: 10.77.0.1/32 is in a private range: list it in allow_private"},
                {{"network=restricted", "allow_cidrs=[0.0.0.0/0]"},
                 "allow_cidrs[0]: 0.0.0.0/0 is never reachable"},
                {{"network=restricted", "allow_cidrs=[192.0.2.0/24, 169.254.169.254/32:80]"},
                 "allow_cidrs[1]: 169.254.169.254/32 is never reachable"},
                {{"network=restricted", "allow_private=[10.1.0.0/16]",
                  "allow_cidrs=[10.0.0.0/8:22]"},
                 "allow_cidrs[0]: 10.0.0.0/8 is in a private range"},
                {{"network=full", "allow_private=[127.0.0.0/8]"},
                 "allow_private[0]: 127.0.0.0/8 is never reachable"},
                {{"network=full", "allow_private=[224.0.0.0/4]"}, "is never reachable"},
                {{"network=full", "allow_private=[0.0.0.0/0]"}, "is never reachable"},
                {{"network=full", "allow_private=[198.18.0.0/15]"},
                 "allow_private[0]: 198.18.0.0/15 is not a private range"},
                {{"network=full", "allow_private=[10.0.0.0/7]"}, "is not a private range"},
                {{"network=full", "allow_private=[fc00::/7]"},
                 "allow_private[0]: IPv6 is off inside the sandbox"},
                /* No port to reach anything on. */
                {{"network=restricted", "allow_ports=[]", "allow_cidrs=[192.0.2.0/24]"},
                 "allow_cidrs[0]: 192.0.2.0/24 has no port, and allow_ports is empty"},
                {{"network=restricted", "allow_ports=[]", "allow_domains=[example.test]"},
                 "allow_ports: empty, so no name of allow_domains could be reached"},
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                struct netns_plan np;
                psrun_error err = {0};
                cr_expect_lt(plan_with(bad[i].opts, &np, &err), 0, "%s accepted", bad[i].want);
                cr_expect(strstr(err.msg, bad[i].want), "want \"%s\": %s", bad[i].want, err.msg);
        }
}

Test(netns_plan, entries_that_work_are_taken)
{
        static const char *const good[][4] = {
                {"network=full", "allow_private=[10.0.0.0/8, 192.168.1.0/24]"},
                {"network=restricted", "allow_private=[10.77.0.0/16]",
                 "allow_cidrs=[10.77.0.1/32:80, 198.18.0.0/15]"},
                {"network=restricted", "allow_cidrs=[192.0.2.0/24:443]"},
                /* Every entry names its port: allow_ports is not needed. */
                {"network=restricted", "allow_ports=[]", "allow_cidrs=[192.0.2.0/24:443]"},
                {"network=full", "allow_ports=[]"},
        };
        for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
                struct netns_plan np;
                psrun_error err = {0};
                cr_expect_eq(plan_with(good[i], &np, &err), 0, "%s %s: %s", good[i][1],
                             good[i][2] ? good[i][2] : "", err.msg);
        }
}

/* A network without a veth is up at once, holds nothing, and comes down
 * (twice, and never up) without touching a socket or a proxy. */
Test(netns_plan, a_network_without_veth_is_up_and_down_with_nothing)
{
        static const char *const none[] = {"network=none", NULL};
        struct netns_plan np;
        psrun_error err = {0};
        cr_assert_eq(plan_with(none, &np, &err), 0, "%s", err.msg);
        cr_assert(!np.veth);

        struct netns_live never = NETNS_LIVE_INIT;
        netns_down(&never, NULL);
        netns_live_close(&never);
        cr_assert_null(never.plan);

        struct netns_live live;
        cr_assert_eq(netns_up(&np, getpid(), &live, &err), 0, "%s", err.msg);
        cr_assert_eq(live.plan, &np);
        cr_assert_null(live.proxy);
        cr_assert_eq(live.state.nft, -1, "no nf_tables socket without a table");
        netns_down(&live, NULL);
        netns_live_close(&live);
        cr_assert_null(live.plan);
        netns_live_close(&live);
}
