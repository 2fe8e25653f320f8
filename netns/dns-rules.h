/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * What the DNS proxy of a restricted sandbox lets through (docs/network.md):
 * pure decisions on a name and on an answer's address, from the network
 * plan alone.
 */

#include <stdbool.h>

#include "netns/dns-packet.h"
#include "netns/netns.h"

/* The name is on allow_domains (exact, or below an anchored `*.`). */
bool dns_name_allowed(const struct netns_plan *plan, const char *name);
/* An answer's address the sandbox may not be sent to: the pool of the
 * other sandboxes always; private, loopback, link-local, CGNAT, metadata,
 * multicast and reserved ranges unless allow_private covers it
 * (rebinding). */
bool dns_addr_refused(const struct netns_plan *plan, const struct dns_addr *a);
