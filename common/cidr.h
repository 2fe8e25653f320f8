/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * An address block, the value the policy's network keys are parsed into
 * (policy_parse_cidr, policy/policy.h) and the network layer works with
 * (netns/): shared here so that neither includes the other.
 */

#include <stdbool.h>
#include <stdint.h>

/* family AF_INET or AF_INET6, address in network order. */
struct cidr {
        int family;
        uint8_t addr[16];
        unsigned prefix;
        uint16_t port; /* allow_cidrs "CIDR:port"; 0: every allowed port */
};

/* Whether addr (of family) lies inside c. */
static inline bool cidr_contains(const struct cidr *c, int family, const uint8_t *addr)
{
        if (c->family != family)
                return false;
        for (unsigned i = 0; i < c->prefix; i++) {
                uint8_t m = (uint8_t) (0x80 >> (i % 8));
                if ((c->addr[i / 8] & m) != (addr[i / 8] & m))
                        return false;
        }
        return true;
}
