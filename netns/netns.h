/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Network modes as a small ops table. Every sandbox gets a new network
 * namespace; the mode decides what is put in it.
 *   none:       only lo, up.
 *   full:       (not yet) a veth pair, an address pair, NAT via nftables.
 *   restricted: (not yet) as full, egress default-drop, psrun's DNS proxy.
 */

#include <stdbool.h>

#include "common/error.h"
#include "policy/policy.h"

struct netns_plan {
        bool loopback_up; /* the child brings lo up */
};

/* Plan the network for a mode; -EOPNOTSUPP for modes not built yet. */
int netns_plan(enum policy_network mode, struct netns_plan *plan, psrun_error *err);
