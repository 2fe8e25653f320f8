/* SPDX-License-Identifier: MIT */
/* One live network: set up, served and torn down the same way by every
 * holder (netns/netns.h). */
#include "netns/netns.h"

#include "common/cleanup.h"
#include "netns/dns-proxy.h"

static int up(const struct netns_plan *plan, pid_t pid, int ns_fd, struct netns_live *live,
              psrun_error *err)
{
        *live = (struct netns_live) NETNS_LIVE_INIT;
        live->plan = plan;
        if (!plan->veth)
                return 0;
        /* The firewall and the veth first, then the proxy: it pins what
         * it answers in the table. */
        int r = ns_fd >= 0 ? netns_setup_ns(plan, ns_fd, &live->state, err)
                           : netns_setup(plan, pid, &live->state, err);
        if (r >= 0)
                r = dns_proxy_start(plan, live->state.nft, TAKE_FD(live->state.relay_fd),
                                    &live->proxy, err);
        return r;
}

int netns_up(const struct netns_plan *plan, pid_t pid, struct netns_live *live, psrun_error *err)
{
        return up(plan, pid, -1, live, err);
}

int netns_up_ns(const struct netns_plan *plan, int ns_fd, struct netns_live *live, psrun_error *err)
{
        return up(plan, 0, ns_fd, live, err);
}

void netns_down(struct netns_live *live, struct netns_stats *stats)
{
        if (!live->plan)
                return;
        dns_proxy_stop(TAKE_PTR(live->proxy), stats);
        netns_remove_table(live->plan, &live->state);
}

void netns_live_close(struct netns_live *live)
{
        if (!live->plan)
                return;
        netns_down(live, NULL);
        netns_teardown(live->plan, &live->state);
        live->plan = NULL;
}
