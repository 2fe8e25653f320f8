/* SPDX-License-Identifier: MIT */
/* The nf_tables netlink vocabulary of psrun's table (netns/nft-expr.h). */
#include "netns/nft-expr.h"

#include <arpa/inet.h>
#include <endian.h>
#include <linux/netfilter.h>
#include <linux/netlink.h>
#include <linux/netfilter/nf_nat.h>
#include <linux/netfilter/nfnetlink.h>
#include <net/if.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"

/* nft's user data of sets and elements: type, length, value (u32s in host
 * order). */
#define UDATA_SET_KEYBYTEORDER  0
#define UDATA_SET_MERGE         2
#define UDATA_ELEM_FLAGS        1
#define UDATA_ELEM_F_OPEN       1 /* the interval runs to the end of the space */
#define UDATA_BYTEORDER_BIG_END 2

static size_t udata_u32(uint8_t *buf, size_t off, uint8_t type, uint32_t v)
{
        buf[off] = type;
        buf[off + 1] = sizeof(v);
        memcpy(buf + off + 2, &v, sizeof(v));
        return off + 2 + sizeof(v);
}

static size_t object(struct nlbuf *b, uint16_t verb, uint16_t flags)
{
        struct nfgenmsg g = {.nfgen_family = NFPROTO_INET, .version = NFNETLINK_V0};
        return nl_begin(b, (uint16_t) ((NFNL_SUBSYS_NFTABLES << 8) | verb), flags, true, &g,
                        sizeof(g));
}

static void batch_marker(struct nlbuf *b, uint16_t type)
{
        struct nfgenmsg g = {.nfgen_family = AF_UNSPEC,
                             .version = NFNETLINK_V0,
                             .res_id = htons(NFNL_SUBSYS_NFTABLES)};
        nl_end(b, nl_begin(b, type, 0, false, &g, sizeof(g)));
}

void nft_batch_begin(struct nlbuf *b)
{
        batch_marker(b, NFNL_MSG_BATCH_BEGIN);
}

void nft_batch_end(struct nlbuf *b)
{
        batch_marker(b, NFNL_MSG_BATCH_END);
}

void nft_table(struct nlbuf *b, uint16_t verb, const char *table)
{
        /* A new table must be new: never added to a table of that name. */
        size_t m = object(b, verb, verb == NFT_MSG_NEWTABLE ? NLM_F_CREATE | NLM_F_EXCL : 0);
        nl_put_str(b, NFTA_TABLE_NAME, table);
        if (verb == NFT_MSG_NEWTABLE)
                nl_put_be32(b, NFTA_TABLE_FLAGS, 0);
        nl_end(b, m);
}

void nft_chain(struct nlbuf *b, const char *table, const char *name)
{
        size_t m = object(b, NFT_MSG_NEWCHAIN, NLM_F_CREATE);
        nl_put_str(b, NFTA_CHAIN_TABLE, table);
        nl_put_str(b, NFTA_CHAIN_NAME, name);
        nl_end(b, m);
}

void nft_base_chain(struct nlbuf *b, const char *table, const char *name, const char *type,
                    uint32_t hook, int32_t priority)
{
        size_t m = object(b, NFT_MSG_NEWCHAIN, NLM_F_CREATE);
        nl_put_str(b, NFTA_CHAIN_TABLE, table);
        nl_put_str(b, NFTA_CHAIN_NAME, name);
        nl_put_str(b, NFTA_CHAIN_TYPE, type);
        nl_put_be32(b, NFTA_CHAIN_POLICY, NF_ACCEPT);
        size_t h = nl_nest(b, NFTA_CHAIN_HOOK);
        nl_put_be32(b, NFTA_HOOK_HOOKNUM, hook);
        nl_put_be32(b, NFTA_HOOK_PRIORITY, (uint32_t) priority);
        nl_nest_end(b, h);
        nl_end(b, m);
}

void nft_set(struct nlbuf *b, const char *table, const char *name, uint32_t id, uint32_t flags,
             uint32_t key_type, uint32_t key_len, uint32_t size, enum nft_udata udata)
{
        size_t m = object(b, NFT_MSG_NEWSET, NLM_F_CREATE);
        nl_put_str(b, NFTA_SET_TABLE, table);
        nl_put_str(b, NFTA_SET_NAME, name);
        nl_put_be32(b, NFTA_SET_FLAGS, flags);
        nl_put_be32(b, NFTA_SET_KEY_TYPE, key_type);
        nl_put_be32(b, NFTA_SET_KEY_LEN, key_len);
        nl_put_be32(b, NFTA_SET_ID, id);
        if (size) {
                size_t d = nl_nest(b, NFTA_SET_DESC);
                nl_put_be32(b, NFTA_SET_DESC_SIZE, size);
                nl_nest_end(b, d);
        }
        if (udata == NFT_UDATA_AUTOMERGE) {
                /* For nft(8): big-endian keys, and `auto-merge`. */
                uint8_t u[12];
                size_t n = udata_u32(u, 0, UDATA_SET_KEYBYTEORDER, UDATA_BYTEORDER_BIG_END);
                n = udata_u32(u, n, UDATA_SET_MERGE, 1);
                nl_put(b, NFTA_SET_USERDATA, u, n);
        }
        nl_end(b, m);
}

static struct nft_msg elements_begin(struct nlbuf *b, uint16_t verb, const char *table,
                                     const char *set, uint32_t set_id)
{
        struct nft_msg m = {object(b, verb, verb == NFT_MSG_NEWSETELEM ? NLM_F_CREATE : 0), 0};
        nl_put_str(b, NFTA_SET_ELEM_LIST_TABLE, table);
        nl_put_str(b, NFTA_SET_ELEM_LIST_SET, set);
        if (set_id)
                nl_put_be32(b, NFTA_SET_ELEM_LIST_SET_ID, set_id);
        m.nest = nl_nest(b, NFTA_SET_ELEM_LIST_ELEMENTS);
        return m;
}

struct nft_msg nft_elements_begin(struct nlbuf *b, uint16_t verb, const char *table,
                                  const char *set)
{
        return elements_begin(b, verb, table, set, 0);
}

void nft_element(struct nlbuf *b, const void *key, size_t len, uint32_t flags, uint64_t timeout_ms,
                 const void *udata, size_t udata_len)
{
        size_t e = nl_nest(b, NFTA_LIST_ELEM);
        if (flags)
                nl_put_be32(b, NFTA_SET_ELEM_FLAGS, flags);
        if (timeout_ms)
                nl_put_be64(b, NFTA_SET_ELEM_TIMEOUT, timeout_ms);
        size_t k = nl_nest(b, NFTA_SET_ELEM_KEY);
        nl_put(b, NFTA_DATA_VALUE, key, len);
        nl_nest_end(b, k);
        if (udata_len)
                nl_put(b, NFTA_SET_ELEM_USERDATA, udata, udata_len);
        nl_nest_end(b, e);
}

void nft_elements_end(struct nlbuf *b, struct nft_msg list)
{
        nl_nest_end(b, list.nest);
        nl_end(b, list.msg);
}

void nft_value_set(struct nlbuf *b, const char *table, uint32_t id, uint32_t key_type, uint32_t len,
                   const uint8_t *values, size_t n)
{
        nft_set(b, table, "__set%d", id, NFT_SET_ANONYMOUS | NFT_SET_CONSTANT, key_type, len,
                (uint32_t) n, NFT_UDATA_NONE);
        struct nft_msg list = elements_begin(b, NFT_MSG_NEWSETELEM, table, "__set%d", id);
        for (size_t i = 0; i < n; i++)
                nft_element(b, values + i * len, len, 0, 0, NULL, 0);
        nft_elements_end(b, list);
}

static int range_cmp(const void *a, const void *b)
{
        const struct nft_range *x = a, *y = b;
        return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sorts and merges ranges that overlap or touch; returns how many are left. */
static size_t merge_ranges(struct nft_range *r, size_t n)
{
        if (n == 0)
                return 0;
        qsort(r, n, sizeof(*r), range_cmp);
        size_t k = 0;
        for (size_t i = 1; i < n; i++) {
                if (r[i].lo <= r[k].hi) {
                        if (r[i].hi > r[k].hi)
                                r[k].hi = r[i].hi;
                } else {
                        r[++k] = r[i];
                }
        }
        return k + 1;
}

void nft_interval_set(struct nlbuf *b, const char *table, const char *name, uint32_t id,
                      uint32_t flags, struct nft_range *ranges, size_t n, enum nft_udata udata)
{
        n = merge_ranges(ranges, n);
        /* An interval is its start and, one past its last address, an end
         * element; nft also ends the gap below the first interval. */
        bool gap_below = n > 0 && ranges[0].lo != 0;
        uint32_t size = (uint32_t) (2 * n + gap_below);
        bool anonymous = flags & NFT_SET_ANONYMOUS;
        nft_set(b, table, name, id, flags | NFT_SET_INTERVAL, NFT_TYPE_IPV4_ADDR, 4,
                anonymous ? size : 0, udata);
        if (n == 0)
                return;
        struct nft_msg list = elements_begin(b, NFT_MSG_NEWSETELEM, table, name, id);
        uint32_t zero = 0;
        if (gap_below)
                nft_element(b, &zero, 4, NFT_SET_ELEM_INTERVAL_END, 0, NULL, 0);
        uint8_t open[6];
        size_t open_len = udata_u32(open, 0, UDATA_ELEM_FLAGS, UDATA_ELEM_F_OPEN);
        for (size_t i = 0; i < n; i++) {
                uint32_t lo = htonl(ranges[i].lo);
                if (ranges[i].hi > UINT32_MAX) {
                        nft_element(b, &lo, 4, 0, 0, open, open_len);
                        continue;
                }
                uint32_t hi = htonl((uint32_t) ranges[i].hi);
                nft_element(b, &lo, 4, 0, 0, NULL, 0);
                nft_element(b, &hi, 4, NFT_SET_ELEM_INTERVAL_END, 0, NULL, 0);
        }
        nft_elements_end(b, list);
}

struct nft_msg nft_rule(struct nlbuf *b, const char *table, const char *chain)
{
        struct nft_msg m = {object(b, NFT_MSG_NEWRULE, NLM_F_CREATE | NLM_F_APPEND), 0};
        nl_put_str(b, NFTA_RULE_TABLE, table);
        nl_put_str(b, NFTA_RULE_CHAIN, chain);
        m.nest = nl_nest(b, NFTA_RULE_EXPRESSIONS);
        return m;
}

void nft_rule_end(struct nlbuf *b, struct nft_msg rule)
{
        nl_nest_end(b, rule.nest);
        nl_end(b, rule.msg);
}

/* One expression: its name, then its data nest (returned, for expr_end). */
static size_t expr_begin(struct nlbuf *b, const char *name, size_t *data)
{
        size_t e = nl_nest(b, NFTA_LIST_ELEM);
        nl_put_str(b, NFTA_EXPR_NAME, name);
        *data = nl_nest(b, NFTA_EXPR_DATA);
        return e;
}

static void expr_end(struct nlbuf *b, size_t e, size_t data)
{
        nl_nest_end(b, data);
        nl_nest_end(b, e);
}

static void put_data(struct nlbuf *b, uint16_t type, const void *data, size_t len)
{
        size_t d = nl_nest(b, type);
        nl_put(b, NFTA_DATA_VALUE, data, len);
        nl_nest_end(b, d);
}

void nft_meta(struct nlbuf *b, uint32_t key, uint32_t dreg)
{
        size_t d, e = expr_begin(b, "meta", &d);
        nl_put_be32(b, NFTA_META_KEY, key);
        nl_put_be32(b, NFTA_META_DREG, dreg);
        expr_end(b, e, d);
}

void nft_payload(struct nlbuf *b, uint32_t base, uint32_t offset, uint32_t len, uint32_t dreg)
{
        size_t d, e = expr_begin(b, "payload", &d);
        nl_put_be32(b, NFTA_PAYLOAD_DREG, dreg);
        nl_put_be32(b, NFTA_PAYLOAD_BASE, base);
        nl_put_be32(b, NFTA_PAYLOAD_OFFSET, offset);
        nl_put_be32(b, NFTA_PAYLOAD_LEN, len);
        expr_end(b, e, d);
}

void nft_cmp(struct nlbuf *b, uint32_t op, uint32_t sreg, const void *data, size_t len)
{
        size_t d, e = expr_begin(b, "cmp", &d);
        nl_put_be32(b, NFTA_CMP_SREG, sreg);
        nl_put_be32(b, NFTA_CMP_OP, op);
        put_data(b, NFTA_CMP_DATA, data, len);
        expr_end(b, e, d);
}

static void bitwise(struct nlbuf *b, uint32_t reg, const void *mask, size_t len)
{
        static const uint8_t zero[16];
        size_t d, e = expr_begin(b, "bitwise", &d);
        nl_put_be32(b, NFTA_BITWISE_SREG, reg);
        nl_put_be32(b, NFTA_BITWISE_DREG, reg);
        nl_put_be32(b, NFTA_BITWISE_LEN, (uint32_t) len);
        put_data(b, NFTA_BITWISE_MASK, mask, len);
        put_data(b, NFTA_BITWISE_XOR, zero, len);
        expr_end(b, e, d);
}

void nft_lookup(struct nlbuf *b, uint32_t sreg, const char *set, uint32_t set_id, bool invert)
{
        size_t d, e = expr_begin(b, "lookup", &d);
        nl_put_be32(b, NFTA_LOOKUP_SREG, sreg);
        nl_put_str(b, NFTA_LOOKUP_SET, set);
        nl_put_be32(b, NFTA_LOOKUP_SET_ID, set_id);
        if (invert)
                nl_put_be32(b, NFTA_LOOKUP_FLAGS, NFT_LOOKUP_F_INV);
        expr_end(b, e, d);
}

void nft_verdict(struct nlbuf *b, int32_t code, const char *chain)
{
        size_t d, e = expr_begin(b, "immediate", &d);
        nl_put_be32(b, NFTA_IMMEDIATE_DREG, NFT_REG_VERDICT);
        size_t data = nl_nest(b, NFTA_IMMEDIATE_DATA);
        size_t v = nl_nest(b, NFTA_DATA_VERDICT);
        nl_put_be32(b, NFTA_VERDICT_CODE, (uint32_t) code);
        if (chain)
                nl_put_str(b, NFTA_VERDICT_CHAIN, chain);
        nl_nest_end(b, v);
        nl_nest_end(b, data);
        expr_end(b, e, d);
}

void nft_log(struct nlbuf *b, uint16_t group)
{
        size_t d, e = expr_begin(b, "log", &d);
        nl_put_be16(b, NFTA_LOG_GROUP, group);
        expr_end(b, e, d);
}

void nft_reject(struct nlbuf *b, uint32_t type, uint8_t code)
{
        size_t d, e = expr_begin(b, "reject", &d);
        nl_put_be32(b, NFTA_REJECT_TYPE, type);
        nl_put_u8(b, NFTA_REJECT_ICMP_CODE, code);
        expr_end(b, e, d);
}

void nft_masq(struct nlbuf *b)
{
        size_t d, e = expr_begin(b, "masq", &d);
        expr_end(b, e, d);
}

void nft_redirect(struct nlbuf *b, uint16_t port)
{
        /* The port in a register first, as nft writes `redirect to :P`. */
        uint16_t be = htons(port);
        size_t d, e = expr_begin(b, "immediate", &d);
        nl_put_be32(b, NFTA_IMMEDIATE_DREG, NFT_REG_1);
        put_data(b, NFTA_IMMEDIATE_DATA, &be, sizeof(be));
        expr_end(b, e, d);
        e = expr_begin(b, "redir", &d);
        nl_put_be32(b, NFTA_REDIR_REG_PROTO_MIN, NFT_REG_1);
        nl_put_be32(b, NFTA_REDIR_FLAGS, NF_NAT_RANGE_PROTO_SPECIFIED);
        expr_end(b, e, d);
}

void nft_limit(struct nlbuf *b, uint64_t rate, uint32_t burst, bool over)
{
        size_t d, e = expr_begin(b, "limit", &d);
        nl_put_be64(b, NFTA_LIMIT_RATE, rate);
        nl_put_be64(b, NFTA_LIMIT_UNIT, 1); /* per second */
        nl_put_be32(b, NFTA_LIMIT_BURST, burst);
        nl_put_be32(b, NFTA_LIMIT_TYPE, NFT_LIMIT_PKTS);
        nl_put_be32(b, NFTA_LIMIT_FLAGS, over ? NFT_LIMIT_F_INV : 0);
        expr_end(b, e, d);
}

void nft_counter_ref(struct nlbuf *b, const char *name)
{
        size_t d, e = expr_begin(b, "objref", &d);
        nl_put_be32(b, NFTA_OBJREF_IMM_TYPE, NFT_OBJECT_COUNTER);
        nl_put_str(b, NFTA_OBJREF_IMM_NAME, name);
        expr_end(b, e, d);
}

void nft_counter(struct nlbuf *b, const char *table, const char *name)
{
        size_t m = object(b, NFT_MSG_NEWOBJ, NLM_F_CREATE);
        nl_put_str(b, NFTA_OBJ_TABLE, table);
        nl_put_str(b, NFTA_OBJ_NAME, name);
        nl_put_be32(b, NFTA_OBJ_TYPE, NFT_OBJECT_COUNTER);
        size_t d = nl_nest(b, NFTA_OBJ_DATA);
        nl_put_be64(b, NFTA_COUNTER_BYTES, 0);
        nl_put_be64(b, NFTA_COUNTER_PACKETS, 0);
        nl_nest_end(b, d);
        nl_end(b, m);
}

void nft_counters_dump(struct nlbuf *b, const char *table)
{
        struct nfgenmsg g = {.nfgen_family = NFPROTO_INET, .version = NFNETLINK_V0};
        size_t m = nl_begin(b, (uint16_t) ((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_GETOBJ),
                            NLM_F_DUMP, false, &g, sizeof(g));
        nl_put_str(b, NFTA_OBJ_TABLE, table);
        nl_put_be32(b, NFTA_OBJ_TYPE, NFT_OBJECT_COUNTER);
        nl_end(b, m);
}

/* The first attribute of type in the len bytes at p (a message's or a
 * nest's), or NULL. */
static const struct nlattr *attr_find(const char *p, size_t len, uint16_t type)
{
        size_t off = 0;
        while (off + NLA_HDRLEN <= len) {
                const struct nlattr *a = (const struct nlattr *) (p + off);
                if (a->nla_len < NLA_HDRLEN || off + a->nla_len > len)
                        return NULL;
                if ((a->nla_type & NLA_TYPE_MASK) == type)
                        return a;
                off += NLA_ALIGN(a->nla_len);
        }
        return NULL;
}

bool nft_counter_parse(const struct nlmsghdr *h, const char **name, uint64_t *packets)
{
        size_t hdr = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));
        if (h->nlmsg_type != ((NFNL_SUBSYS_NFTABLES << 8) | NFT_MSG_NEWOBJ) || h->nlmsg_len < hdr)
                return false;
        const char *p = (const char *) h + hdr;
        size_t len = h->nlmsg_len - hdr;
        const struct nlattr *n = attr_find(p, len, NFTA_OBJ_NAME);
        const struct nlattr *d = attr_find(p, len, NFTA_OBJ_DATA);
        const struct nlattr *c = d ? attr_find((const char *) d + NLA_HDRLEN,
                                               d->nla_len - NLA_HDRLEN, NFTA_COUNTER_PACKETS)
                                   : NULL;
        if (!n || !c || c->nla_len != NLA_HDRLEN + 8 || n->nla_len <= NLA_HDRLEN ||
            ((const char *) n)[n->nla_len - 1] != '\0')
                return false;
        uint64_t be;
        memcpy(&be, (const char *) c + NLA_HDRLEN, 8);
        *name = (const char *) n + NLA_HDRLEN;
        *packets = be64toh(be);
        return true;
}

void nft_match_nfproto(struct nlbuf *b, uint8_t nfproto)
{
        nft_meta(b, NFT_META_NFPROTO, NFT_REG_1);
        nft_cmp(b, NFT_CMP_EQ, NFT_REG_1, &nfproto, 1);
}

void nft_match_l4proto(struct nlbuf *b, uint8_t proto)
{
        nft_meta(b, NFT_META_L4PROTO, NFT_REG_1);
        nft_cmp(b, NFT_CMP_EQ, NFT_REG_1, &proto, 1);
}

void nft_match_port(struct nlbuf *b, uint16_t port)
{
        uint16_t be = htons(port);
        nft_payload(b, NFT_PAYLOAD_TRANSPORT_HEADER, 2, 2, NFT_REG_1);
        nft_cmp(b, NFT_CMP_EQ, NFT_REG_1, &be, 2);
}

void nft_match_ifname(struct nlbuf *b, uint32_t key, uint32_t op, const char *name)
{
        char padded[IFNAMSIZ] = {0};
        strncpy(padded, name, sizeof(padded) - 1);
        nft_meta(b, key, NFT_REG_1);
        nft_cmp(b, op, NFT_REG_1, padded, sizeof(padded));
}

void nft_match_ip_addr(struct nlbuf *b, uint32_t offset, uint32_t op, uint32_t addr,
                       unsigned prefix)
{
        if (prefix == 0)
                return; /* every address */
        uint32_t mask = prefix >= 32 ? UINT32_MAX : ~(UINT32_MAX >> prefix);
        uint32_t net = htonl(addr & mask), be_mask = htonl(mask);
        /* Whole bytes are compared as they are; a prefix that ends inside
         * a byte is masked first. */
        size_t len = prefix % 8 == 0 ? prefix / 8 : 4;
        nft_payload(b, NFT_PAYLOAD_NETWORK_HEADER, offset, (uint32_t) len, NFT_REG_1);
        if (prefix % 8)
                bitwise(b, NFT_REG_1, &be_mask, 4);
        nft_cmp(b, op, NFT_REG_1, &net, len);
}

static void match_ct_bits(struct nlbuf *b, uint32_t key, uint32_t bits)
{
        uint32_t zero = 0;
        size_t d, e = expr_begin(b, "ct", &d);
        nl_put_be32(b, NFTA_CT_KEY, key);
        nl_put_be32(b, NFTA_CT_DREG, NFT_REG_1);
        expr_end(b, e, d);
        /* The state is a host-order bit mask. */
        bitwise(b, NFT_REG_1, &bits, sizeof(bits));
        nft_cmp(b, NFT_CMP_NEQ, NFT_REG_1, &zero, sizeof(zero));
}

void nft_match_ct_state(struct nlbuf *b, uint32_t bits)
{
        match_ct_bits(b, NFT_CT_STATE, bits);
}

void nft_match_ct_status(struct nlbuf *b, uint32_t bits)
{
        match_ct_bits(b, NFT_CT_STATUS, bits);
}
