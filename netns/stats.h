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

/* Counts one refusal of a name (addr NULL) or of addr:port/proto. */
void netns_stats_deny(struct netns_stats *s, const char *name, const char *addr, uint16_t port,
                      const char *proto);
