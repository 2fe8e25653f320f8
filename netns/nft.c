/* SPDX-License-Identifier: MIT */
/*
 * psrun's firewall: one `table inet psrun_<id>` per sandbox, built in one
 * nf_tables transaction (all or nothing), so removal is one `delete table`.
 * Every rule matches on the host end of the sandbox's veth, in psrun's (the
 * host's) namespace, out of the sandbox's reach.
 *
 *   input    from the veth: only DNS (UDP/TCP 53) to the gateway; the host
 *            itself is otherwise unreachable in every mode.
 *   forward  from the veth: source must be the sandbox's address; IPv6,
 *            loopback, link-local (so metadata), multicast, reserved ranges
 *            and the pool (the other sandboxes) always refused; private
 *            ranges unless allow_private; then `full` accepts, `restricted`
 *            accepts only TCP to (addr . port) pins and allow_cidrs.
 *            Refusals are logged to NFLOG and rejected (TCP reset, ICMP
 *            admin-prohibited), not dropped, so clients fail fast.
 *            to the veth: replies only; inbound connections never.
 *   postrouting: masquerade the sandbox's address.
 *
 * The transaction is nf_tables netlink written here (netns/nft-expr.c has
 * the expressions), not nft text through libnftables: loading that library,
 * parsing the text and fetching the ruleset cache cost a few milliseconds
 * of every start. Each rule below says, in nft syntax, what it is; `nft
 * list table inet psrun_<id>` prints exactly that (the net tier compares
 * the two).
 *
 * The table is deliberately not `flags owner` (deleted by the kernel when
 * psrun's socket closes): if psrun were killed, the rules would vanish
 * before the sandbox's pdeathsig kill, a window in which the sandbox could
 * reach the host unfiltered. Killed runs' tables stay, closed, until
 * `psrun gc` deletes them with their lease.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <linux/netfilter/nf_conntrack_common.h>
#include <linux/netfilter/nf_tables.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netlink.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "netns/netns.h"
#include "netns/nft-expr.h"

/* The named sets' ids within the transaction; anonymous ones follow. */
enum { SET_PIN4 = 1, SET_PIN6, SET_ALLOWPRIV4, SET_FIRST_ANON };

int nft_open(psrun_error *err)
{
        int fd = nl_open(NETLINK_NETFILTER);
        if (fd < 0)
                return psrun_error_errno(err, fd, "network: nft: netlink socket");
        return fd;
}

void nft_close(int fd)
{
        nl_close_later(fd);
}

/* One transaction: all of it, or nothing (the kernel aborts the batch). */
static int transact(int fd, struct nlbuf *b, const char *what, const char *table, psrun_error *err)
{
        int r = nl_transact(fd, b, NULL);
        if (r < 0 && err)
                psrun_error_errno(err, r, "network: nft: %s %s", what, table);
        return r;
}

/* ---- what the sandbox may reach: addresses and ranges ---- */

static uint32_t addr4(const void *a)
{
        uint32_t v;
        memcpy(&v, a, 4);
        return ntohl(v);
}

static struct nft_range range_of(uint32_t addr, unsigned prefix)
{
        uint64_t size = 1ULL << (32 - prefix);
        uint32_t lo = addr & (uint32_t) ~(size - 1);
        return (struct nft_range){lo, lo + size};
}

static size_t ranges_of(const struct netns_range *r, size_t n, struct nft_range *out)
{
        for (size_t i = 0; i < n; i++)
                out[i] = range_of(addr4(r[i].addr), r[i].prefix);
        return n;
}

/* ---- the chains ---- */

static void add_chains(struct nlbuf *b, const char *t, uint16_t relay_port)
{
        nft_base_chain(b, t, "input", "filter", NF_INET_LOCAL_IN, -10);
        nft_chain(b, t, "from_sandbox_to_host");
        nft_base_chain(b, t, "forward", "filter", NF_INET_FORWARD, -10);
        nft_chain(b, t, "to_sandbox");
        nft_chain(b, t, "from_sandbox");
        nft_chain(b, t, "refuse");
        nft_chain(b, t, "log_refusal");
        nft_base_chain(b, t, "postrouting", "nat", NF_INET_POST_ROUTING, 100);
        if (relay_port)
                nft_base_chain(b, t, "prerouting", "nat", NF_INET_PRE_ROUTING, -100);
}

/* counter dns_dropped {...}, counter unlogged {...}: what the rate limits
 * held back (read by nft_read_limited). */
static void add_counters(struct nlbuf *b, const struct netns_plan *p, uint16_t relay_port)
{
        nft_counter(b, p->table, NFT_COUNTER_DNS_DROPPED);
        nft_counter(b, p->table, NFT_COUNTER_UNLOGGED);
        if (relay_port)
                nft_counter(b, p->table, NFT_COUNTER_CHECKS_DROPPED);
}

/* ip saddr <sandbox> ip daddr <gateway>, as the input chain's DNS rules
 * begin. */
static void match_sandbox_to_gateway(struct nlbuf *b, const struct netns_plan *p)
{
        nft_match_nfproto(b, NFPROTO_IPV4);
        nft_match_ip_addr(b, NFT_IP_SADDR, NFT_CMP_EQ, ntohl(p->sandbox.s_addr), 32);
        nft_match_ip_addr(b, NFT_IP_DADDR, NFT_CMP_EQ, ntohl(p->gateway.s_addr), 32);
}

static void add_sets(struct nlbuf *b, const struct netns_plan *p)
{
        const char *t = p->table;
        nft_set(b, t, "pin4", SET_PIN4, NFT_SET_TIMEOUT, NFT_TYPE_IPV4_PORT, 8, 0, NFT_UDATA_NONE);
        nft_set(b, t, "pin6", SET_PIN6, NFT_SET_TIMEOUT, NFT_TYPE_IPV6_PORT, 20, 0, NFT_UDATA_NONE);
        struct nft_range priv[NETNS_MAX_CIDRS];
        size_t n = 0;
        for (size_t i = 0; i < p->n_privates; i++)
                if (p->privates[i].family == AF_INET)
                        priv[n++] = range_of(addr4(p->privates[i].addr), p->privates[i].prefix);
        /* set allowpriv4 { type ipv4_addr; flags interval; auto-merge;
         *                  elements = { allow_private } } */
        nft_interval_set(b, t, "allowpriv4", SET_ALLOWPRIV4, 0, priv, n, NFT_UDATA_AUTOMERGE);
}

/* iifname|oifname "<veth>" jump <chain> */
static void jump_on_veth(struct nlbuf *b, const struct netns_plan *p, const char *chain,
                         uint32_t key, const char *to)
{
        struct nft_msg r = nft_rule(b, p->table, chain);
        nft_match_ifname(b, key, NFT_CMP_EQ, p->host_if);
        nft_verdict(b, NFT_JUMP, to);
        nft_rule_end(b, r);
}

/* verdict goto|jump chain alone: "goto refuse", "drop", "accept". */
static void bare_verdict(struct nlbuf *b, const char *t, const char *chain, int code,
                         const char *to)
{
        struct nft_msg r = nft_rule(b, t, chain);
        nft_verdict(b, code, to);
        nft_rule_end(b, r);
}

/* The name check's listener (netns/name-relay.c) takes only what the
 * prerouting chain redirected to it, and new connections only up to a
 * rate (its work is psrun's CPU, not the sandbox's cgroup's):
 * ip saddr <sandbox> ip daddr <gateway> tcp dport <relay> ct state new
 * limit rate over <NETNS_CHECK_RATE>/second burst <NETNS_CHECK_BURST> packets
 * counter name "checks_dropped" drop
 * ip saddr <sandbox> ip daddr <gateway> tcp dport <relay> ct status dnat accept */
static void add_relay_input(struct nlbuf *b, const struct netns_plan *p, uint16_t relay_port)
{
        const char *t = p->table;
        struct nft_msg r = nft_rule(b, t, "from_sandbox_to_host");
        match_sandbox_to_gateway(b, p);
        nft_match_l4proto(b, IPPROTO_TCP);
        nft_match_port(b, relay_port);
        nft_match_ct_state(b, NF_CT_STATE_BIT(IP_CT_NEW));
        nft_limit(b, NETNS_CHECK_RATE, NETNS_CHECK_BURST, true);
        nft_counter_ref(b, NFT_COUNTER_CHECKS_DROPPED);
        nft_verdict(b, NF_DROP, NULL);
        nft_rule_end(b, r);
        r = nft_rule(b, t, "from_sandbox_to_host");
        match_sandbox_to_gateway(b, p);
        nft_match_l4proto(b, IPPROTO_TCP);
        nft_match_port(b, relay_port);
        nft_match_ct_status(b, IPS_DST_NAT);
        nft_verdict(b, NF_ACCEPT, NULL);
        nft_rule_end(b, r);
}

/* TCP to a pin on a name-checked port goes to the listener, its
 * destination kept for SO_ORIGINAL_DST (the sandbox sees its own):
 * iifname "<veth>" ip saddr <sandbox> tcp dport { 80, 443 }
 * ip daddr . tcp dport @pin4 redirect to :<relay> */
static void add_prerouting(struct nlbuf *b, const struct netns_plan *p, uint16_t relay_port,
                           uint32_t *set_id)
{
        const char *t = p->table;
        uint32_t id = 0;
        if (p->n_checked_ports > 1) {
                uint8_t ports[4];
                for (size_t j = 0; j < p->n_checked_ports; j++) {
                        ports[2 * j] = (uint8_t) (p->checked_ports[j] >> 8);
                        ports[2 * j + 1] = (uint8_t) p->checked_ports[j];
                }
                id = (*set_id)++;
                nft_value_set(b, t, id, NFT_TYPE_INET_SERVICE, 2, ports, p->n_checked_ports);
        }
        struct nft_msg r = nft_rule(b, t, "prerouting");
        nft_match_ifname(b, NFT_META_IIFNAME, NFT_CMP_EQ, p->host_if);
        nft_match_nfproto(b, NFPROTO_IPV4);
        nft_match_ip_addr(b, NFT_IP_SADDR, NFT_CMP_EQ, ntohl(p->sandbox.s_addr), 32);
        nft_match_l4proto(b, IPPROTO_TCP);
        if (id) {
                nft_payload(b, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG_1);
                nft_lookup(b, NFT_REG_1, "__set%d", id, false);
        } else {
                nft_match_port(b, p->checked_ports[0]);
        }
        nft_payload(b, NFT_PAYLOAD_NETWORK_HEADER, NFT_IP_DADDR, 4, NFT_REG_1);
        nft_payload(b, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG32_01);
        nft_lookup(b, NFT_REG_1, "pin4", SET_PIN4, false);
        nft_redirect(b, relay_port);
        nft_rule_end(b, r);
}

static void add_input(struct nlbuf *b, const struct netns_plan *p, uint16_t relay_port,
                      uint32_t *set_id)
{
        const char *t = p->table;
        jump_on_veth(b, p, "input", NFT_META_IIFNAME, "from_sandbox_to_host");
        /* ip saddr <sandbox> ip daddr <gateway> meta l4proto { tcp, udp }
         * th dport 53 accept */
        /* What the proxy is sent past its rate is dropped here, before
         * psrun reads it (psrun's CPU is not the sandbox's cgroup's):
         * ip saddr <sandbox> ip daddr <gateway> udp dport 53
         * limit rate over <NETNS_DNS_RATE>/second burst <NETNS_DNS_BURST> packets
         * counter name "dns_dropped" drop
         * ip saddr <sandbox> ip daddr <gateway> tcp dport 53 ct state new
         * limit rate over <NETNS_DNS_TCP_RATE>/second burst <NETNS_DNS_TCP_BURST> packets
         * counter name "dns_dropped" drop */
        static const struct {
                uint8_t proto;
                uint64_t rate;
                uint32_t burst;
        } dns_limits[] = {
                {IPPROTO_UDP, NETNS_DNS_RATE, NETNS_DNS_BURST},
                {IPPROTO_TCP, NETNS_DNS_TCP_RATE, NETNS_DNS_TCP_BURST},
        };
        for (size_t i = 0; i < ARRAY_SIZE(dns_limits); i++) {
                struct nft_msg l = nft_rule(b, t, "from_sandbox_to_host");
                match_sandbox_to_gateway(b, p);
                nft_match_l4proto(b, dns_limits[i].proto);
                nft_match_port(b, 53);
                if (dns_limits[i].proto == IPPROTO_TCP)
                        nft_match_ct_state(b, NF_CT_STATE_BIT(IP_CT_NEW));
                nft_limit(b, dns_limits[i].rate, dns_limits[i].burst, true);
                nft_counter_ref(b, NFT_COUNTER_DNS_DROPPED);
                nft_verdict(b, NF_DROP, NULL);
                nft_rule_end(b, l);
        }
        uint32_t id = (*set_id)++;
        const uint8_t protos[] = {IPPROTO_TCP, IPPROTO_UDP};
        nft_value_set(b, t, id, NFT_TYPE_INET_PROTO, 1, protos, 2);
        struct nft_msg r = nft_rule(b, t, "from_sandbox_to_host");
        match_sandbox_to_gateway(b, p);
        nft_meta(b, NFT_META_L4PROTO, NFT_REG_1);
        nft_lookup(b, NFT_REG_1, "__set%d", id, false);
        nft_match_port(b, 53);
        nft_verdict(b, NF_ACCEPT, NULL);
        nft_rule_end(b, r);
        if (relay_port)
                add_relay_input(b, p, relay_port);
        bare_verdict(b, t, "from_sandbox_to_host", NFT_GOTO, "refuse");
}

static void add_to_sandbox(struct nlbuf *b, const struct netns_plan *p)
{
        const char *t = p->table;
        jump_on_veth(b, p, "forward", NFT_META_IIFNAME, "from_sandbox");
        jump_on_veth(b, p, "forward", NFT_META_OIFNAME, "to_sandbox");
        /* Inbound never: only the replies of what the sandbox opened.
         * ct state established,related accept; drop */
        struct nft_msg r = nft_rule(b, t, "to_sandbox");
        nft_match_ct_state(b, NF_CT_STATE_BIT(IP_CT_ESTABLISHED) | NF_CT_STATE_BIT(IP_CT_RELATED));
        nft_verdict(b, NF_ACCEPT, NULL);
        nft_rule_end(b, r);
        bare_verdict(b, t, "to_sandbox", NF_DROP, NULL);
}

/* ip daddr <cidr> tcp dport <port> accept, or tcp dport { allow_ports }. */
static void add_cidr_rule(struct nlbuf *b, const struct netns_plan *p, const struct cidr *c,
                          uint32_t *set_id)
{
        const char *t = p->table;
        uint8_t ports[NETNS_MAX_PORTS * 2];
        uint32_t id = 0;
        /* One port is a comparison, as nft writes `{ 80 }`. */
        if (!c->port && p->n_ports > 1) {
                for (size_t j = 0; j < p->n_ports; j++) {
                        ports[2 * j] = (uint8_t) (p->ports[j] >> 8);
                        ports[2 * j + 1] = (uint8_t) p->ports[j];
                }
                id = (*set_id)++;
                nft_value_set(b, t, id, NFT_TYPE_INET_SERVICE, 2, ports, p->n_ports);
        }
        struct nft_msg r = nft_rule(b, t, "from_sandbox");
        nft_match_nfproto(b, NFPROTO_IPV4);
        nft_match_ip_addr(b, NFT_IP_DADDR, NFT_CMP_EQ, addr4(c->addr), c->prefix);
        nft_match_l4proto(b, IPPROTO_TCP);
        if (id) {
                nft_payload(b, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG_1);
                nft_lookup(b, NFT_REG_1, "__set%d", id, false);
        } else {
                nft_match_port(b, c->port ? c->port : p->ports[0]);
        }
        nft_verdict(b, NF_ACCEPT, NULL);
        nft_rule_end(b, r);
}

static void add_from_sandbox(struct nlbuf *b, const struct netns_plan *p, uint32_t *set_id)
{
        const char *t = p->table;
        uint32_t sb = ntohl(p->sandbox.s_addr);
        /* Spoofed sources are dropped (no reply to an address that is not
         * the sandbox's): ip saddr != <sandbox> drop */
        struct nft_msg r = nft_rule(b, t, "from_sandbox");
        nft_match_nfproto(b, NFPROTO_IPV4);
        nft_match_ip_addr(b, NFT_IP_SADDR, NFT_CMP_NEQ, sb, 32);
        nft_verdict(b, NF_DROP, NULL);
        nft_rule_end(b, r);
        /* meta nfproto ipv6 goto refuse */
        r = nft_rule(b, t, "from_sandbox");
        nft_match_nfproto(b, NFPROTO_IPV6);
        nft_verdict(b, NFT_GOTO, "refuse");
        nft_rule_end(b, r);
        /* ct state established,related accept */
        r = nft_rule(b, t, "from_sandbox");
        nft_match_ct_state(b, NF_CT_STATE_BIT(IP_CT_ESTABLISHED) | NF_CT_STATE_BIT(IP_CT_RELATED));
        nft_verdict(b, NF_ACCEPT, NULL);
        nft_rule_end(b, r);

        /* Never reachable, whatever allow_private says:
         * ip daddr { 0/8, 127/8, 169.254/16, 224/4, 240/4 } goto refuse */
        struct nft_range never[8];
        size_t n = ranges_of(netns_never4, netns_n_never4, never);
        uint32_t id = (*set_id)++;
        nft_interval_set(b, t, "__set%d", id, NFT_SET_ANONYMOUS | NFT_SET_CONSTANT, never, n,
                         NFT_UDATA_NONE);
        r = nft_rule(b, t, "from_sandbox");
        nft_match_nfproto(b, NFPROTO_IPV4);
        nft_payload(b, NFT_PAYLOAD_NETWORK_HEADER, NFT_IP_DADDR, 4, NFT_REG_1);
        nft_lookup(b, NFT_REG_1, "__set%d", id, false);
        nft_verdict(b, NFT_GOTO, "refuse");
        nft_rule_end(b, r);
        /* The pool is the other sandboxes: never, whatever allow_private
         * covers (their own tables drop what comes in, but silently; this
         * refuses at once, and does not depend on them).
         * ip daddr <pool> goto refuse */
        r = nft_rule(b, t, "from_sandbox");
        nft_match_nfproto(b, NFPROTO_IPV4);
        nft_match_ip_addr(b, NFT_IP_DADDR, NFT_CMP_EQ, ntohl(p->pool.base.s_addr), p->pool.prefix);
        nft_verdict(b, NFT_GOTO, "refuse");
        nft_rule_end(b, r);
        /* The host's own addresses where they are not ours (a router's
         * host, behind pasta), whatever allow_private or a pin says:
         * ip daddr <host address> goto refuse */
        for (size_t i = 0; i < p->n_host4; i++) {
                r = nft_rule(b, t, "from_sandbox");
                nft_match_nfproto(b, NFPROTO_IPV4);
                nft_match_ip_addr(b, NFT_IP_DADDR, NFT_CMP_EQ, ntohl(p->host4[i].s_addr), 32);
                nft_verdict(b, NFT_GOTO, "refuse");
                nft_rule_end(b, r);
        }
        /* ip daddr { 10/8, 100.64/10, 172.16/12, 192.168/16 }
         * ip daddr != @allowpriv4 goto refuse */
        struct nft_range priv[8];
        n = ranges_of(netns_private4, netns_n_private4, priv);
        id = (*set_id)++;
        nft_interval_set(b, t, "__set%d", id, NFT_SET_ANONYMOUS | NFT_SET_CONSTANT, priv, n,
                         NFT_UDATA_NONE);
        r = nft_rule(b, t, "from_sandbox");
        nft_match_nfproto(b, NFPROTO_IPV4);
        nft_payload(b, NFT_PAYLOAD_NETWORK_HEADER, NFT_IP_DADDR, 4, NFT_REG_1);
        nft_lookup(b, NFT_REG_1, "__set%d", id, false);
        nft_payload(b, NFT_PAYLOAD_NETWORK_HEADER, NFT_IP_DADDR, 4, NFT_REG_1);
        nft_lookup(b, NFT_REG_1, "allowpriv4", SET_ALLOWPRIV4, true);
        nft_verdict(b, NFT_GOTO, "refuse");
        nft_rule_end(b, r);

        if (p->mode == NETNS_MODE_FULL) {
                bare_verdict(b, t, "from_sandbox", NF_ACCEPT, NULL);
        } else {
                /* ip daddr . tcp dport @pin4 accept */
                r = nft_rule(b, t, "from_sandbox");
                nft_match_nfproto(b, NFPROTO_IPV4);
                nft_match_l4proto(b, IPPROTO_TCP);
                nft_payload(b, NFT_PAYLOAD_NETWORK_HEADER, NFT_IP_DADDR, 4, NFT_REG_1);
                nft_payload(b, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG32_01);
                nft_lookup(b, NFT_REG_1, "pin4", SET_PIN4, false);
                nft_verdict(b, NF_ACCEPT, NULL);
                nft_rule_end(b, r);
                for (size_t i = 0; i < p->n_cidrs; i++)
                        if (p->cidrs[i].family == AF_INET)
                                add_cidr_rule(b, p, &p->cidrs[i], set_id);
        }
        bare_verdict(b, t, "from_sandbox", NFT_GOTO, "refuse");
}

static void add_refuse(struct nlbuf *b, const struct netns_plan *p)
{
        const char *t = p->table;
        /* ct state new jump log_refusal */
        struct nft_msg r = nft_rule(b, t, "refuse");
        nft_match_ct_state(b, NF_CT_STATE_BIT(IP_CT_NEW));
        nft_verdict(b, NFT_JUMP, "log_refusal");
        nft_rule_end(b, r);
        /* meta l4proto tcp reject with tcp reset */
        r = nft_rule(b, t, "refuse");
        nft_match_l4proto(b, IPPROTO_TCP);
        nft_reject(b, NFT_REJECT_TCP_RST, 0);
        nft_rule_end(b, r);
        /* reject with icmpx admin-prohibited */
        r = nft_rule(b, t, "refuse");
        nft_reject(b, NFT_REJECT_ICMPX_UNREACH, NFT_REJECT_ICMPX_ADMIN_PROHIBITED);
        nft_rule_end(b, r);
}

/* Each refusal is reported (NFLOG, read by psrun) up to a rate; past it
 * the packet is still refused, only counted instead:
 * limit rate over <NETNS_LOG_RATE>/second burst <NETNS_LOG_BURST> packets
 * counter name "unlogged" return
 * log group <group> */
static void add_log_refusal(struct nlbuf *b, const struct netns_plan *p)
{
        struct nft_msg r = nft_rule(b, p->table, "log_refusal");
        nft_limit(b, NETNS_LOG_RATE, NETNS_LOG_BURST, true);
        nft_counter_ref(b, NFT_COUNTER_UNLOGGED);
        nft_verdict(b, NFT_RETURN, NULL);
        nft_rule_end(b, r);
        r = nft_rule(b, p->table, "log_refusal");
        nft_log(b, p->nflog_group);
        nft_rule_end(b, r);
}

static void add_postrouting(struct nlbuf *b, const struct netns_plan *p)
{
        /* ip saddr <sandbox> oifname != "<veth>" masquerade */
        struct nft_msg r = nft_rule(b, p->table, "postrouting");
        nft_match_nfproto(b, NFPROTO_IPV4);
        nft_match_ip_addr(b, NFT_IP_SADDR, NFT_CMP_EQ, ntohl(p->sandbox.s_addr), 32);
        nft_match_ifname(b, NFT_META_OIFNAME, NFT_CMP_NEQ, p->host_if);
        nft_masq(b);
        nft_rule_end(b, r);
}

int nft_add_sandbox_table(int fd, const struct netns_plan *p, uint16_t relay_port, psrun_error *err)
{
        _cleanup_(nlbuf_free) struct nlbuf b = NLBUF_INIT;
        uint32_t set_id = SET_FIRST_ANON;
        nft_batch_begin(&b);
        nft_table(&b, NFT_MSG_NEWTABLE, p->table);
        add_chains(&b, p->table, relay_port);
        add_sets(&b, p);
        add_counters(&b, p, relay_port);
        add_input(&b, p, relay_port, &set_id);
        add_to_sandbox(&b, p);
        add_from_sandbox(&b, p, &set_id);
        add_refuse(&b, p);
        add_log_refusal(&b, p);
        add_postrouting(&b, p);
        if (relay_port)
                add_prerouting(&b, p, relay_port, &set_id);
        nft_batch_end(&b);
        int r = transact(fd, &b, "add table", p->table, err);
        /* The batch names every expression psrun uses: a kernel without
         * one of their modules says only ENOENT. */
        if (r == -ENOENT && err)
                psrun_error_set(err, ENOENT,
                                "network: nft: add table %s: an nf_tables module is missing "
                                "(nft_objref, nft_ct, nft_limit, nft_log, nft_reject_inet?)",
                                p->table);
        return r;
}

int nft_delete_table(int fd, const char *table, psrun_error *err)
{
        _cleanup_(nlbuf_free) struct nlbuf b = NLBUF_INIT;
        nft_batch_begin(&b);
        nft_table(&b, NFT_MSG_DELTABLE, table);
        nft_batch_end(&b);
        return transact(fd, &b, "delete table", table, err);
}

int nft_pin(int fd, const char *table, int family, const uint8_t *addr, const uint16_t *ports,
            size_t n_ports, unsigned timeout_s, psrun_error *err)
{
        if (n_ports == 0)
                return 0;
        _cleanup_(nlbuf_free) struct nlbuf b = NLBUF_INIT;
        const char *set = family == AF_INET ? "pin4" : "pin6";
        size_t alen = family == AF_INET ? 4 : 16;
        /* add (so it exists), delete, add: in one transaction, a pin that
         * is already there gets the new answer's timeout. */
        static const uint16_t verbs[] = {NFT_MSG_NEWSETELEM, NFT_MSG_DELSETELEM,
                                         NFT_MSG_NEWSETELEM};
        nft_batch_begin(&b);
        for (size_t v = 0; v < ARRAY_SIZE(verbs); v++) {
                struct nft_msg list = nft_elements_begin(&b, verbs[v], table, set);
                for (size_t i = 0; i < n_ports; i++) {
                        /* addr . port: each field of a concatenation takes
                         * a whole 32-bit register. */
                        uint8_t key[20] = {0};
                        memcpy(key, addr, alen);
                        key[alen] = (uint8_t) (ports[i] >> 8);
                        key[alen + 1] = (uint8_t) ports[i];
                        nft_element(&b, key, alen + 4, 0, (uint64_t) timeout_s * 1000, NULL, 0);
                }
                nft_elements_end(&b, list);
        }
        nft_batch_end(&b);
        return transact(fd, &b, "pin in", table, err);
}

struct limited_scan {
        struct netns_limited *out;
        bool dns, unlogged;
};

static void limited_one(const struct nlmsghdr *h, void *arg)
{
        struct limited_scan *s = arg;
        const char *name;
        uint64_t packets;
        if (!nft_counter_parse(h, &name, &packets))
                return;
        if (strcmp(name, NFT_COUNTER_DNS_DROPPED) == 0) {
                s->out->dns_dropped = packets;
                s->dns = true;
        } else if (strcmp(name, NFT_COUNTER_UNLOGGED) == 0) {
                s->out->unlogged = packets;
                s->unlogged = true;
        } else if (strcmp(name, NFT_COUNTER_CHECKS_DROPPED) == 0) {
                s->out->checks_dropped = packets;
        }
}

int nft_read_limited(int fd, const char *table, struct netns_limited *out)
{
        _cleanup_(nlbuf_free) struct nlbuf b = NLBUF_INIT;
        nft_counters_dump(&b, table);
        /* A table without the name check has no checks_dropped. */
        *out = (struct netns_limited){0};
        struct limited_scan s = {.out = out};
        int r = nl_dump(fd, &b, limited_one, &s);
        if (r >= 0 && !(s.dns && s.unlogged))
                r = -ENOENT;
        return r;
}
