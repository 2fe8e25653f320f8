/* SPDX-License-Identifier: MIT */
#pragma once

/* psrun's DNS proxy for one sandbox: a thread of the supervising process
 * answering on the gateway's port 53 (netns/dns-proxy.c). */

#include "common/error.h"
#include "netns/netns.h"
#include "netns/stats.h"

struct dns_proxy;

/* Starts serving (no-op without a veth: *ret stays NULL). plan and the
 * nf_tables socket nft (netns_state.nft), which only the proxy uses while
 * it runs, must outlive the proxy. relay_fd: the name check's listener
 * (name_relay_listen), taken (closed on failure too); -1: none. */
int dns_proxy_start(const struct netns_plan *plan, int nft, int relay_fd, struct dns_proxy **ret,
                    psrun_error *err);
/* Stops the thread, closes everything, and copies the counts to stats
 * (when not NULL). Accepts NULL. */
void dns_proxy_stop(struct dns_proxy *proxy, struct netns_stats *stats);

/* Windows of counting: between dns_proxy_watch and dns_proxy_unwatch,
 * every query and refusal is also counted in *w (a session's exec: what
 * the network allowed and refused while it ran; execs running at once
 * share the network, so each counts what happened meanwhile). At most
 * DNS_PROXY_MAX_WATCHERS at once (-EAGAIN past that; *w still reads as
 * active with no counts). Either thread; NULL proxy (no network): *w is
 * left zeroed, not active. */
#define DNS_PROXY_MAX_WATCHERS 72
int dns_proxy_watch(struct dns_proxy *proxy, struct netns_stats *w);
/* Reads what the kernel has logged so far, then closes the window: *w is
 * the caller's again. */
void dns_proxy_unwatch(struct dns_proxy *proxy, struct netns_stats *w);

static inline void dns_proxy_stopp(struct dns_proxy **proxy)
{
        dns_proxy_stop(*proxy, NULL);
}
