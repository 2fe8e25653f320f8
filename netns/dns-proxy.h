/* SPDX-License-Identifier: MIT */
#pragma once

/* psrun's DNS proxy for one sandbox: a thread of the supervising process
 * answering on the gateway's port 53 (netns/dns-proxy.c). */

#include "common/error.h"
#include "netns/netns.h"
#include "netns/stats.h"

struct dns_proxy;

/* Starts serving (no-op without a veth: *ret stays NULL). plan and nft must
 * outlive the proxy. */
int dns_proxy_start(const struct netns_plan *plan, struct nft_ctx *nft, struct dns_proxy **ret,
                    psrun_error *err);
/* Stops the thread, closes everything, and copies the counts to stats
 * (when not NULL). Accepts NULL. */
void dns_proxy_stop(struct dns_proxy *proxy, struct netns_stats *stats);

static inline void dns_proxy_stopp(struct dns_proxy **proxy)
{
        dns_proxy_stop(*proxy, NULL);
}
