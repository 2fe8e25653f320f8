/* SPDX-License-Identifier: MIT */
/* The DNS proxy's decisions on names and addresses (netns/dns-rules.h). */
#include "netns/dns-rules.h"

#include <string.h>
#include <sys/socket.h>

#include "common/cidr.h"
#include "common/cleanup.h"

bool dns_name_allowed(const struct netns_plan *plan, const char *name)
{
        for (size_t i = 0; i < plan->n_allow_domains; i++)
                if (dns_name_matches(name, plan->allow_domains[i]))
                        return true;
        return false;
}

/* Ranges an answer may not point into unless allow_private covers it. */
static const struct {
        int family;
        uint8_t addr[16];
        unsigned prefix;
} refused_ranges[] = {
        {AF_INET, {0}, 8},                                          /* this network */
        {AF_INET, {10}, 8},                                         /* RFC 1918 */
        {AF_INET, {100, 64}, 10},                                   /* CGNAT */
        {AF_INET, {127}, 8},                                        /* loopback */
        {AF_INET, {169, 254}, 16},                                  /* link-local, metadata */
        {AF_INET, {172, 16}, 12},                                   /* RFC 1918 */
        {AF_INET, {192, 168}, 16},                                  /* RFC 1918 */
        {AF_INET, {224}, 3},                                        /* multicast, reserved */
        {AF_INET6, {0}, 96},                                        /* ::, ::1, v4-compatible */
        {AF_INET6, {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff}, 96}, /* v4-mapped */
        {AF_INET6, {0xfc}, 7},                                      /* ULA, fd00:ec2::254 */
        {AF_INET6, {0xfe, 0x80}, 10},                               /* link-local */
        {AF_INET6, {0xff}, 8},                                      /* multicast */
};

bool dns_addr_refused(const struct netns_plan *plan, const struct dns_addr *a)
{
        /* The pool (other sandboxes) first: allow_private never opens it. */
        struct cidr pool = {.family = AF_INET, .prefix = plan->pool.prefix};
        memcpy(pool.addr, &plan->pool.base, 4);
        if (cidr_contains(&pool, a->family, a->addr))
                return true;
        for (size_t i = 0; i < plan->n_privates; i++)
                if (cidr_contains(&plan->privates[i], a->family, a->addr))
                        return false;
        for (size_t i = 0; i < ARRAY_SIZE(refused_ranges); i++) {
                struct cidr c = {.family = refused_ranges[i].family,
                                 .prefix = refused_ranges[i].prefix};
                memcpy(c.addr, refused_ranges[i].addr, 16);
                if (cidr_contains(&c, a->family, a->addr))
                        return true;
        }
        return false;
}
