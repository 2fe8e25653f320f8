/* SPDX-License-Identifier: MIT */
#pragma once

/* What the network layer refused, for the run's result: counts, and the
 * first NETNS_MAX_DENIED distinct refusals (a name, or an address and
 * port) with how often each happened. */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define NETNS_MAX_DENIED 32

struct netns_denied {
        char name[254]; /* a refused name, or "" */
        char addr[46];  /* a refused destination, or "" */
        uint16_t port;
        char proto[8]; /* "tcp", "udp", … for addr (a copy: the stats cross processes) */
        uint64_t count;
};

struct netns_stats {
        bool active; /* restricted or full: the result carries `network` */
        uint64_t allowed_queries, denied_queries;
        struct netns_denied denied[NETNS_MAX_DENIED];
        size_t n_denied;
        uint64_t denied_more; /* refusals of entries past the first NETNS_MAX_DENIED */
};

/* What the network's rate limits held back (docs/network.md) is listed as
 * a refusal of a name that no query can have (names are lowercase): DNS
 * queries dropped unanswered, and refusals not reported one by one (still
 * refused). Always listed, ahead of the list's last other entry. */
#define NETNS_LIMITED_DNS    "rate limit: DNS queries dropped"
#define NETNS_LIMITED_LOG    "rate limit: refusals not itemized (NFLOG)"
#define NETNS_LIMITED_CHECKS "rate limit: connections to the name check dropped"

/* Counts one refusal of a name (addr NULL) or of addr:port/proto. */
void netns_stats_deny(struct netns_stats *s, const char *name, const char *addr, uint16_t port,
                      const char *proto);
/* Counts n of what a rate limit held back (NETNS_LIMITED_*). */
void netns_stats_limit(struct netns_stats *s, const char *what, uint64_t n);
bool netns_denied_is_limit(const struct netns_denied *d);
