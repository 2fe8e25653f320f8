/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * Network modes as a small ops table. Every sandbox gets a new network
 * namespace; the mode decides what is put in it (docs/network.md).
 *   none:       only lo, up.
 *   full:       a veth pair, an address pair from the pool, NAT and a
 *               firewall in psrun's own nft table (never the host itself,
 *               metadata, link-local, other sandboxes or private ranges).
 *   restricted: as full, but forwarding is default-deny: only (address .
 *               port) pairs the DNS proxy pinned for allowed names.
 *
 * Split in three: netns_plan() is pure (a request in, plan out: the
 * request is filled from a policy by runtime/plan-policy.c, netns/ knows no
 * policy);
 * netns_lease() takes an address pair (a file under NETNS_STATE_DIR that
 * `psrun gc` can find); netns_up() runs in the parent between clone3 and
 * the release of the child and builds the veth, addresses, routes, the
 * nft table and the DNS proxy (a live network: netns_setup() and
 * dns_proxy_start()); netns_down() and netns_live_close() undo it on every
 * path. Every holder of a network (psrun run under each backend, a
 * session's own and an install's) uses netns_up and netns_down.
 */

#include <netinet/in.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/cidr.h"
#include "common/error.h"

#define NETNS_STATE_DIR      "/run/psrun/net"
#define NETNS_MAX_CIDRS      64
#define NETNS_MAX_UPSTREAM   4
#define NETNS_MAX_PORTS      64
#define NETNS_MAX_HOST_ADDRS 32
/* What one sandbox may make psrun (outside its cgroup) do for it, per
 * second, in the kernel's limits of its table (netns/nft.c) and the
 * proxy's own (netns/dns-proxy.c); docs/network.md says why these. UDP
 * queries to the proxy, new TCP connections to it, refusals reported. */
#define NETNS_DNS_RATE      250
#define NETNS_DNS_BURST     500
#define NETNS_DNS_TCP_RATE  50
#define NETNS_DNS_TCP_BURST 100
#define NETNS_LOG_RATE      50
#define NETNS_LOG_BURST     100
/* New connections to the name check's listener (netns/name-relay.c). */
#define NETNS_CHECK_RATE  200
#define NETNS_CHECK_BURST 400
/* NFLOG groups of the sandboxes: base + the lease's slot (one reader each). */
#define NETNS_NFLOG_BASE 0x8000

/* The pool of sandbox subnets: one /30 per sandbox. */
struct netns_pool {
        struct in_addr base; /* network order */
        unsigned prefix;
};

/* The modes, in the policy's order (network: none|restricted|full). */
enum netns_mode {
        NETNS_MODE_NONE,
        NETNS_MODE_RESTRICTED,
        NETNS_MODE_FULL,
        _NETNS_MODE_MAX,
};

/* What a sandbox's network is asked to be: the policy's network keys,
 * parsed (runtime/plan-policy.c fills it; a session's install network
 * fills its own there too). The lists are copied into the plan; the
 * strings are borrowed and must outlive it. */
struct netns_request {
        enum netns_mode mode;
        const uint16_t *ports; /* allow_ports */
        size_t n_ports;
        struct cidr cidrs[NETNS_MAX_CIDRS]; /* allow_cidrs */
        size_t n_cidrs;
        struct cidr privates[NETNS_MAX_CIDRS]; /* allow_private */
        size_t n_privates;
        struct cidr upstream[NETNS_MAX_UPSTREAM]; /* dns_upstream; none: the host's */
        size_t n_upstream;
        bool pool_given; /* network_pool */
        struct cidr pool;
        uint64_t min_ttl_ms, max_ttl_ms;
        const char *const *allow_domains;
        size_t n_allow_domains;
        const char *log_path; /* network_log; NULL: none */
        bool name_check;      /* restricted: connections to 443 and 80 through the name check */
};

/* Whether a mode has a veth (and so an address lease, a table, a proxy,
 * and a use for the request's lists). */
bool netns_mode_has_veth(enum netns_mode mode);

struct netns_plan {
        enum netns_mode mode;
        bool loopback_up; /* the child brings lo up */
        bool veth;        /* full, restricted */

        char id[9];       /* 8 hex digits: psrun_<id>, psr<id> */
        char host_if[16]; /* the host end: "psr<id>" */
        char table[24];   /* "psrun_<id>" */
        struct netns_pool pool;
        bool pool_given;                 /* network_pool set: no host-route check */
        struct in_addr gateway, sandbox; /* the host end's and the sandbox's address */
        int lease_fd;                    /* -1: no lease held */
        uint16_t nflog_group;            /* refused connections are logged here */
        /* Bound to nflog_group from the lease on, so no other sandbox of
         * this namespace (from another pool) can have the group; the proxy
         * reads it; netns_release() closes it. */
        struct nflog *nflog;
        char lease_path[64];

        uint16_t ports[NETNS_MAX_PORTS];
        size_t n_ports;
        struct cidr cidrs[NETNS_MAX_CIDRS]; /* allow_cidrs */
        size_t n_cidrs;
        struct cidr privates[NETNS_MAX_CIDRS]; /* allow_private */
        size_t n_privates;
        struct cidr upstream[NETNS_MAX_UPSTREAM]; /* dns_upstream, prefix full */
        size_t n_upstream;
        uint64_t min_ttl_ms, max_ttl_ms;
        const char *const *allow_domains; /* the request's, borrowed */
        size_t n_allow_domains;
        const char *log_path; /* borrowed */
        /* The ports of allow_ports whose connections are name-checked
         * (443: TLS, 80: HTTP), in the relay's order; none: no relay. */
        uint16_t checked_ports[2];
        size_t n_checked_ports;

        char resolv_conf[128]; /* the sandbox's /etc/resolv.conf */

        /* Addresses refused as the host itself is, in every mode: a rootless
         * router's host's (runtime/rootless.c), which pasta would reach as
         * any other destination; the router's own are refused at input. */
        struct in_addr host4[NETNS_MAX_HOST_ADDRS];
        size_t n_host4;
};

/* IPv4 ranges a sandbox never reaches (loopback, link-local and so cloud
 * metadata, multicast, reserved), and those it reaches only through
 * allow_private (RFC 1918, CGNAT); netns/nft.c writes its rules from them,
 * netns_plan() checks allow_cidrs and allow_private against them. */
struct netns_range {
        uint8_t addr[4];
        unsigned prefix;
};
extern const struct netns_range netns_never4[];
extern const size_t netns_n_never4;
extern const struct netns_range netns_private4[];
extern const size_t netns_n_private4;

/* What netns_setup() built, for teardown. */
#define NETNS_STATE_INIT                                                                           \
        {                                                                                          \
                .nft = -1, .relay_fd = -1                                                          \
        }
struct netns_state {
        bool veth_made;
        bool table_made;
        int nft; /* nf_tables socket (netns/nft.c), kept for the DNS proxy's pins; -1: none */
        /* The name check's listener (netns/name-relay.c) until the proxy
         * takes it; -1: none, or taken. */
        int relay_fd;
};

/* The nameservers the DNS proxy forwards to when dns_upstream names none
 * (the host's /etc/resolv.conf, as netns_plan reads it), as text, a
 * NULL-terminated strv (strv_free); none: *n is 0. */
int netns_host_resolvers(char ***ret, size_t *n);

/* Plan the network of a request; pure apart from reading the host's
 * resolv.conf when it names no upstream. */
int netns_plan(const struct netns_request *req, struct netns_plan *plan, psrun_error *err);
/* Take an address pair from the pool (checking the host's routes when no
 * pool is given), claim an NFLOG group and fill resolv_conf. No-op without
 * a veth. */
int netns_lease(struct netns_plan *plan, psrun_error *err);
/* For a namespace that holds this sandbox's network alone (a rootless
 * run's router namespace, runtime/router.c): the pool's first /30 (the
 * pool checked against this namespace's routes, as netns_lease does), no
 * lease file, no NFLOG group yet; resolv_conf filled. */
int netns_lease_private(struct netns_plan *plan, psrun_error *err);
/* Claims the plan's NFLOG group in the calling thread's namespace (the
 * slot's, else the next free one), as netns_lease does; released by
 * netns_release(). No-op without a veth. */
int netns_claim_nflog(struct netns_plan *plan, psrun_error *err);
/* Gives the lease back (removes its file). Safe to call twice. */
void netns_release(struct netns_plan *plan);

/* In the parent, the child stopped before its command: veth into its
 * namespace, addresses, routes, the nft table. Fails closed: the message
 * names the step ("network: nft: add table psrun_…: Operation not
 * permitted"). On failure what was made is in *st for netns_teardown(). */
int netns_setup(const struct netns_plan *plan, pid_t child, struct netns_state *st,
                psrun_error *err);
/* The same into the network namespace ns_fd (not the child's, by pid). */
int netns_setup_ns(const struct netns_plan *plan, int ns_fd, struct netns_state *st,
                   psrun_error *err);
/* Deletes the table: once the sandbox is gone, never before (until then
 * it is what confines it). netns_teardown() does it too, if not yet done.
 * Deleting needs nothing more of the caller, but the kernel frees what it
 * deleted only after an RCU grace period, and the next close of an
 * nf_tables socket of the namespace waits for that (8-12 ms here): so
 * callers delete early and leave netns_teardown(), which closes, for
 * last. */
void netns_remove_table(const struct netns_plan *plan, struct netns_state *st);
void netns_teardown(const struct netns_plan *plan, struct netns_state *st);

/* ---- one live network (netns/live.c) ---- */

struct dns_proxy;
struct netns_stats;

/* A network up for its sandbox: what netns_setup() built and the DNS
 * proxy serving it. */
struct netns_live {
        const struct netns_plan *plan; /* NULL: nothing up, or closed */
        struct netns_state state;
        struct dns_proxy *proxy; /* NULL: none (no veth, or stopped) */
};
#define NETNS_LIVE_INIT                                                                            \
        {                                                                                          \
                .plan = NULL, .state = NETNS_STATE_INIT, .proxy = NULL                             \
        }

/* Builds plan's network for the process pid (stopped before its command):
 * the firewall, the veth, then the proxy that pins what it answers. plan
 * must outlive the network; no-op without a veth. Fails closed, naming the
 * step; what was made is undone by netns_down / netns_live_close. */
int netns_up(const struct netns_plan *plan, pid_t pid, struct netns_live *live, psrun_error *err);
/* The same into the network namespace ns_fd, made before the sandbox that
 * is to be cloned into it (runtime/router.c). */
int netns_up_ns(const struct netns_plan *plan, int ns_fd, struct netns_live *live,
                psrun_error *err);
/* Once every process of the network is gone (never before: until then
 * the table is what confines them): stops the proxy (its counts to stats,
 * when not NULL) and deletes the table. The nf_tables socket stays open
 * until netns_live_close (see netns_remove_table: its close waits for the
 * kernel's grace period, so holders close it last). Safe to call twice. */
void netns_down(struct netns_live *live, struct netns_stats *stats);
/* netns_down if not yet, then the socket closed. Safe on NETNS_LIVE_INIT
 * and twice. */
void netns_live_close(struct netns_live *live);

/* Removes veths, tables and leases of psrun runs that died. Returns how
 * many leases were removed, or -errno. */
int netns_gc(psrun_error *err);
/* The same for one network, by its id (netns_plan.id), when its owner is
 * dead: a session's, named in its state (runtime/session/api.c). */
int netns_reap(const char *id, psrun_error *err);

/* ---- the pieces, one file each ---- */

/* netns/addr-pool.c */
int addr_pool_pick(struct netns_plan *plan, psrun_error *err);
int addr_pool_lease(struct netns_plan *plan, psrun_error *err);
/* Reads a lease file: the run's id, the inode of the network namespace its
 * veth and table are in (0: not recorded), whether its owner still lives. */
int addr_pool_lease_owner(int dir_fd, const char *name, char id[9], uint64_t *netns, bool *alive);

/* netns/nflog.c: refused connections as the kernel logs them */
struct nflog;
typedef void (*nflog_fn)(void *userdata, const char *addr, uint16_t port, const char *proto);
int nflog_open(uint16_t group, struct nflog **ret, psrun_error *err);
void nflog_close(struct nflog *nl);
int nflog_fd(struct nflog *nl);
/* Reads what is queued (non-blocking, up to 64 messages, none once
 * *budget is 0) and calls fn for each packet while *budget lasts
 * (decremented); returns how many packets of a message read were past it
 * (counted, neither parsed nor reported). */
uint64_t nflog_read(struct nflog *nl, size_t *budget, nflog_fn fn, void *userdata);

/* netns/veth.c */
int veth_create(const struct netns_plan *plan, pid_t child, psrun_error *err);
int veth_create_ns(const struct netns_plan *plan, int child_ns, psrun_error *err);
void veth_delete(const char *host_if);

/* netns/nft.c: the table, through an nf_tables netlink socket of the
 * calling thread's namespace (nft_open: the fd, or -errno). One user at a
 * time: a transaction reads its own acks. */
int nft_open(psrun_error *err);
void nft_close(int fd);
/* relay_port: the name check's listener on the gateway (netns/name-relay.c),
 * what the prerouting chain redirects checked ports to; 0: none. */
int nft_add_sandbox_table(int fd, const struct netns_plan *plan, uint16_t relay_port,
                          psrun_error *err);
int nft_delete_table(int fd, const char *table, psrun_error *err);
/* What the table's rate limits held back so far (its named counters):
 * 0, or -errno (-ENOENT: a table without them). */
struct netns_limited {
        uint64_t dns_dropped;    /* packets to the proxy past NETNS_DNS_RATE / _TCP_RATE */
        uint64_t unlogged;       /* refusals past NETNS_LOG_RATE: refused, not reported */
        uint64_t checks_dropped; /* connections to the name check past NETNS_CHECK_RATE */
};
#define NFT_COUNTER_DNS_DROPPED    "dns_dropped"
#define NFT_COUNTER_UNLOGGED       "unlogged"
#define NFT_COUNTER_CHECKS_DROPPED "checks_dropped"
int nft_read_limited(int fd, const char *table, struct netns_limited *out);
/* Pins addr . port for timeout_s seconds in the table's pin4/pin6 set. */
int nft_pin(int fd, const char *table, int family, const uint8_t *addr, const uint16_t *ports,
            size_t n_ports, unsigned timeout_s, psrun_error *err);
