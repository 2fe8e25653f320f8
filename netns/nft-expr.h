/* SPDX-License-Identifier: MIT */
#pragma once

/*
 * The nf_tables netlink vocabulary psrun's table is written in
 * (netns/nft.c): a batch, the table, chains, sets and their elements, rules
 * and the expressions of a rule, all for the inet family. Each function
 * appends to an nlbuf; nothing is sent here. The encodings are the kernel's
 * (linux/netfilter/nf_tables.h), in the form nft(8) writes them, so that
 * `nft list` prints the table as its rules were written.
 */

#include <linux/netfilter/nf_tables.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "netns/netlink.h"

/* nft's datatype ids, as sets are typed (and printed) by them. */
#define NFT_TYPE_IPV4_ADDR    7
#define NFT_TYPE_IPV6_ADDR    8
#define NFT_TYPE_INET_PROTO   12
#define NFT_TYPE_INET_SERVICE 13
#define NFT_TYPE_CONCAT(a, b) (((a) << 6) | (b))
#define NFT_TYPE_IPV4_PORT    NFT_TYPE_CONCAT(NFT_TYPE_IPV4_ADDR, NFT_TYPE_INET_SERVICE)
#define NFT_TYPE_IPV6_PORT    NFT_TYPE_CONCAT(NFT_TYPE_IPV6_ADDR, NFT_TYPE_INET_SERVICE)

/* Offsets in the IPv4 header. */
#define NFT_IP_SADDR 12
#define NFT_IP_DADDR 16

/* The nft metadata a set may carry for nft(8) (the kernel keeps it, never
 * reads it). */
enum nft_udata { NFT_UDATA_NONE, NFT_UDATA_AUTOMERGE };

/* An IPv4 interval [lo, hi), in host order; hi up to 2^32. */
struct nft_range {
        uint32_t lo;
        uint64_t hi;
};

void nft_batch_begin(struct nlbuf *b);
void nft_batch_end(struct nlbuf *b);

/* NFT_MSG_NEWTABLE or NFT_MSG_DELTABLE. */
void nft_table(struct nlbuf *b, uint16_t verb, const char *table);
void nft_chain(struct nlbuf *b, const char *table, const char *name);
/* A base chain at hook with priority, policy accept. */
void nft_base_chain(struct nlbuf *b, const char *table, const char *name, const char *type,
                    uint32_t hook, int32_t priority);

/* A set of keys of key_len bytes and nft type key_type, with the id that
 * rules of the same batch refer to it by. */
void nft_set(struct nlbuf *b, const char *table, const char *name, uint32_t id, uint32_t flags,
             uint32_t key_type, uint32_t key_len, uint32_t size, enum nft_udata udata);
/* An anonymous constant set of n values of len bytes each ("__set%d"). */
void nft_value_set(struct nlbuf *b, const char *table, uint32_t id, uint32_t key_type, uint32_t len,
                   const uint8_t *values, size_t n);
/* An IPv4 interval set holding ranges (merged where they touch or overlap,
 * which the kernel would refuse), with its elements. flags: besides
 * NFT_SET_INTERVAL. */
void nft_interval_set(struct nlbuf *b, const char *table, const char *name, uint32_t id,
                      uint32_t flags, struct nft_range *ranges, size_t n, enum nft_udata udata);

/* A message whose attributes end in a nest still open (a rule's
 * expressions, a set's elements): both offsets, to close them. */
struct nft_msg {
        size_t msg, nest;
};

/* NFT_MSG_NEWSETELEM or NFT_MSG_DELSETELEM for the set's elements, then
 * nft_element() for each and nft_elements_end(). */
struct nft_msg nft_elements_begin(struct nlbuf *b, uint16_t verb, const char *table,
                                  const char *set);
void nft_element(struct nlbuf *b, const void *key, size_t len, uint32_t flags, uint64_t timeout_ms,
                 const void *udata, size_t udata_len);
void nft_elements_end(struct nlbuf *b, struct nft_msg list);

/* A rule appended to chain: its expressions follow, then nft_rule_end(). */
struct nft_msg nft_rule(struct nlbuf *b, const char *table, const char *chain);
void nft_rule_end(struct nlbuf *b, struct nft_msg rule);

/* Expressions. */
void nft_meta(struct nlbuf *b, uint32_t key, uint32_t dreg);
void nft_payload(struct nlbuf *b, uint32_t base, uint32_t offset, uint32_t len, uint32_t dreg);
void nft_cmp(struct nlbuf *b, uint32_t op, uint32_t sreg, const void *data, size_t len);
void nft_lookup(struct nlbuf *b, uint32_t sreg, const char *set, uint32_t set_id, bool invert);
/* code: NF_ACCEPT, NF_DROP, or NFT_JUMP/NFT_GOTO to chain. */
void nft_verdict(struct nlbuf *b, int32_t code, const char *chain);
void nft_log(struct nlbuf *b, uint16_t group);
void nft_reject(struct nlbuf *b, uint32_t type, uint8_t code);
void nft_masq(struct nlbuf *b);
/* redirect to :<port> (to the incoming interface's address). */
void nft_redirect(struct nlbuf *b, uint16_t port);
/* limit rate [over] <rate>/second burst <burst> packets: matches under the
 * rate, or with over past it. */
void nft_limit(struct nlbuf *b, uint64_t rate, uint32_t burst, bool over);
/* counter name "<name>": counts into the table's named counter. */
void nft_counter_ref(struct nlbuf *b, const char *name);

/* A named counter of the table: counter <name> { packets 0 bytes 0 }. */
void nft_counter(struct nlbuf *b, const char *table, const char *name);
/* A dump of the table's named counters (nl_dump), and the name and packets
 * of one message of its answer (false: not a counter). */
void nft_counters_dump(struct nlbuf *b, const char *table);
bool nft_counter_parse(const struct nlmsghdr *h, const char **name, uint64_t *packets);

/* Matches, as nft compiles them. */
void nft_match_nfproto(struct nlbuf *b, uint8_t nfproto); /* meta nfproto ipv4|ipv6 */
void nft_match_l4proto(struct nlbuf *b, uint8_t proto);   /* meta l4proto tcp */
void nft_match_port(struct nlbuf *b, uint16_t port);      /* th dport <port> */
/* iifname/oifname ==/!= name */
void nft_match_ifname(struct nlbuf *b, uint32_t key, uint32_t op, const char *name);
/* ip saddr|daddr ==/!= addr/prefix (host order; after nft_match_nfproto). */
void nft_match_ip_addr(struct nlbuf *b, uint32_t offset, uint32_t op, uint32_t addr,
                       unsigned prefix);
/* ct state <bits> (any of them) */
void nft_match_ct_state(struct nlbuf *b, uint32_t bits);
/* ct status <bits> (any of them: IPS_DST_NAT is `dnat`) */
void nft_match_ct_status(struct nlbuf *b, uint32_t bits);
