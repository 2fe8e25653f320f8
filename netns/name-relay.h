/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The name check of a restricted sandbox (docs/network.md, "Names on each
 * connection"): a thread of the process that runs its DNS proxy, listening
 * on the gateway. The sandbox's table redirects TCP to a pin on 443 or 80
 * here; the relay reads the ClientHello's SNI or each request's Host
 * (netns/name-check.c), lets the connection on only when the name is on
 * allow_domains and its destination (SO_ORIGINAL_DST) was pinned for that
 * name or its CNAME chain, then connects there and relays the bytes as they
 * are, with splice(2): TLS is never terminated.
 */

#include <stdbool.h>
#include <stdint.h>

#include "common/error.h"
#include "netns/dns-packet.h"
#include "netns/netns.h"

struct name_relay;

/* What the relay decided about one connection, for the proxy's counts and
 * log: proto "tls" or "http"; name the one asked for ("" when none could
 * be read); reason NULL when allowed, else why not ("not allowed", "not
 * pinned for the name", or the parser's: "no sni", ...). */
struct name_relay_verdict {
        const char *proto;
        const char *name;
        const char *reason;
        const char *addr; /* the destination, dotted */
        uint16_t port;
};
typedef void (*name_relay_report_fn)(void *userdata, const struct name_relay_verdict *v);

/* The listener: TCP on the gateway, a port of the kernel's choosing (*port),
 * bound before the gateway's address exists (the table that redirects to
 * it is written first). The fd, or -errno. */
int name_relay_listen(const struct netns_plan *plan, uint16_t *port, psrun_error *err);

/* Starts the relay's thread on listen_fd (taken: closed on failure too). */
int name_relay_start(const struct netns_plan *plan, int listen_fd, name_relay_report_fn report,
                     void *userdata, struct name_relay **ret, psrun_error *err);
/* Stops the thread and closes every connection. Accepts NULL. */
void name_relay_stop(struct name_relay *r);

/* The proxy answered name (and the CNAME hops that led to addr) with addr,
 * pinned until until_ms (monotonic): connections to it may ask for those
 * names until then. */
void name_relay_pinned(struct name_relay *r, const char *const *names, size_t n_names,
                       const struct dns_addr *addr, uint64_t until_ms);
