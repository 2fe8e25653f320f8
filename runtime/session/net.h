/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The networks a session's supervisor holds, as `psrun run` does for its
 * one sandbox: a live network each (netns_up: a veth, an nft table and a
 * DNS proxy thread), built while the process that will use it waits
 * (between launch_confine and launch_release), torn down once it is gone
 * (netns_down, netns_live_close).
 *
 *   the session's own: init's network namespace, which every exec joins
 *     (policy `network`); planned and leased with init's plan.
 *   an install exec's: a namespace of its own (policy `install_network`,
 *     allowlist `install_allow_domains`), made by clone3 in psrun's user
 *     namespace, with a resolv.conf naming its own gateway bound in a
 *     private copy of the session's mounts (plan.private_resolv_fd).
 *
 * Each network's id is in the session's info file ("net <id>"), so that
 * `psrun gc` removes what a SIGKILLed supervisor left (netns_reap).
 */

#include <sys/types.h>

#include "common/error.h"
#include "netns/dns-proxy.h"
#include "netns/netns.h"
#include "policy/policy.h"

/* An install exec's network, from plan to teardown. */
struct install_net {
        struct netns_plan plan;
        struct netns_live net;
        char resolv_path[128]; /* in the session's state directory */
        int resolv_tree;       /* open_tree clone of resolv_path: plan.private_resolv_fd */
};

/* Plans and leases the install network of pol (install_network and
 * install_allow_domains in place of network and allow_domains; allow_cidrs
 * is the session's own and not carried over), writes its resolv.conf
 * into state_dir and clones it as a detached mount. *ret NULL when
 * install_network is none (the install runs in the session's network). */
int install_net_prepare(const struct policy *pol, const char *state_dir, struct install_net **ret,
                        psrun_error *err);
/* netns_up for the install exec's process. */
int install_net_start(struct install_net *in, pid_t pid, psrun_error *err);
/* Everything undone: the network, the lease, the file. NULL-safe. */
void install_net_free(struct install_net *in, struct netns_stats *stats);
