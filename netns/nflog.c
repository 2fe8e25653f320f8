/* SPDX-License-Identifier: MIT */
/*
 * Refused connections, as the kernel reports them: the `refuse` chain of a
 * sandbox's nft table logs the first packet of each refused flow to NFLOG
 * group plan->nflog_group (one group per sandbox: a group has one reader),
 * and the DNS proxy's thread reads them here (plain netlink: six messages' worth of code does
 * not need a library loaded at every start) and counts them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "netns/netlink.h"
#include "netns/netns.h"

struct nflog {
        int fd;
};

static void put_attr(char *buf, size_t *len, uint16_t type, const void *data, uint16_t size)
{
        struct nlattr *a = (struct nlattr *) (buf + *len);
        a->nla_type = type;
        a->nla_len = (uint16_t) (NLA_HDRLEN + size);
        memcpy(buf + *len + NLA_HDRLEN, data, size);
        *len += NLA_ALIGN(a->nla_len);
}

/* NFULNL_MSG_CONFIG for group: bind, copy 64 bytes of each packet, and
 * send each packet at once (the default batches for up to a second: a
 * short run would end before its refusals arrive). Waits for the ack. */
static int config(int fd, uint16_t group)
{
        char buf[256] __attribute__((aligned(NLMSG_ALIGNTO))) = {0};
        struct nlmsghdr *nlh = (struct nlmsghdr *) buf;
        size_t len = NLMSG_HDRLEN;
        nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
        nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
        nlh->nlmsg_seq = 1;
        struct nfgenmsg *g = (struct nfgenmsg *) (buf + len);
        g->nfgen_family = AF_UNSPEC;
        g->version = NFNETLINK_V0;
        g->res_id = htons(group);
        len += NLMSG_ALIGN(sizeof(*g));
        struct nfulnl_msg_config_cmd cmd = {.command = NFULNL_CFG_CMD_BIND};
        put_attr(buf, &len, NFULA_CFG_CMD, &cmd, sizeof(cmd));
        struct nfulnl_msg_config_mode mode = {.copy_range = htonl(64),
                                              .copy_mode = NFULNL_COPY_PACKET};
        put_attr(buf, &len, NFULA_CFG_MODE, &mode, sizeof(mode));
        uint32_t qthresh = htonl(1);
        put_attr(buf, &len, NFULA_CFG_QTHRESH, &qthresh, sizeof(qthresh));
        nlh->nlmsg_len = (uint32_t) len;

        struct sockaddr_nl kernel = {.nl_family = AF_NETLINK};
        if (sendto(fd, buf, len, 0, (struct sockaddr *) &kernel, sizeof(kernel)) < 0)
                return -errno;
        char reply[512] __attribute__((aligned(NLMSG_ALIGNTO)));
        ssize_t n = recv(fd, reply, sizeof(reply), 0);
        if (n < 0)
                return -errno;
        struct nlmsghdr *r = (struct nlmsghdr *) reply;
        if (!NLMSG_OK(r, (size_t) n) || r->nlmsg_type != NLMSG_ERROR)
                return -EPROTO;
        struct nlmsgerr *e = NLMSG_DATA(r);
        return e->error;
}

int nflog_open(uint16_t group, struct nflog **ret, psrun_error *err)
{
        int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_NETFILTER);
        if (fd < 0)
                return psrun_error_errno(err, errno, "network: nflog: socket");
        struct sockaddr_nl self = {.nl_family = AF_NETLINK};
        int r = bind(fd, (struct sockaddr *) &self, sizeof(self)) < 0 ? -errno : 0;
        if (r >= 0)
                r = config(fd, group);
        struct nflog *nl = r >= 0 ? malloc(sizeof(*nl)) : NULL;
        if (r >= 0 && !nl)
                r = -ENOMEM;
        if (r < 0) {
                close(fd);
                return psrun_error_errno(err, r, "network: nflog: bind group %u%s", group,
                                         r == -EINVAL ? " (no nfnetlink_log in this kernel? "
                                                        "modprobe nfnetlink_log)"
                                                      : "");
        }
        nl->fd = fd;
        *ret = nl;
        return 0;
}

void nflog_close(struct nflog *nl)
{
        if (!nl)
                return;
        nl_close_later(nl->fd);
        free(nl);
}

int nflog_fd(struct nflog *nl)
{
        return nl->fd;
}

/* One NFULNL_MSG_PACKET: its payload is the IP header and (at least) the
 * first 4 bytes of TCP/UDP, the ports. IPv6 is off inside, but a v6
 * packet the host's rules refuse is reported all the same. */
static void packet(const struct nlmsghdr *nlh, nflog_fn fn, void *userdata)
{
        size_t off = NLMSG_HDRLEN + NLMSG_ALIGN(sizeof(struct nfgenmsg));
        const uint8_t *b = NULL;
        size_t len = 0;
        while (off + NLA_HDRLEN <= nlh->nlmsg_len) {
                const struct nlattr *a = (const struct nlattr *) ((const char *) nlh + off);
                if (a->nla_len < NLA_HDRLEN || off + a->nla_len > nlh->nlmsg_len)
                        return;
                if ((a->nla_type & NLA_TYPE_MASK) == NFULA_PAYLOAD) {
                        b = (const uint8_t *) a + NLA_HDRLEN;
                        len = a->nla_len - NLA_HDRLEN;
                }
                off += NLA_ALIGN(a->nla_len);
        }
        size_t hlen;
        uint8_t proto;
        char addr[INET6_ADDRSTRLEN];
        if (b && len >= 20 && (b[0] >> 4) == 4) {
                hlen = (size_t) (b[0] & 0xf) * 4;
                proto = b[9];
                inet_ntop(AF_INET, b + 16, addr, sizeof(addr));
        } else if (b && len >= 40 && (b[0] >> 4) == 6) {
                /* The fixed header only: a packet with extension headers
                 * is reported without its port. */
                hlen = 40;
                proto = b[6];
                inet_ntop(AF_INET6, b + 24, addr, sizeof(addr));
        } else {
                return;
        }
        uint16_t port = 0;
        if ((proto == IPPROTO_TCP || proto == IPPROTO_UDP) && len >= hlen + 4)
                port = (uint16_t) (b[hlen + 2] << 8 | b[hlen + 3]);
        const char *name = proto == IPPROTO_TCP                               ? "tcp"
                           : proto == IPPROTO_UDP                             ? "udp"
                           : proto == IPPROTO_ICMP || proto == IPPROTO_ICMPV6 ? "icmp"
                                                                              : "ip";
        fn(userdata, addr, port, name);
}

uint64_t nflog_read(struct nflog *nl, size_t *budget, nflog_fn fn, void *userdata)
{
        char buf[8192] __attribute__((aligned(NLMSG_ALIGNTO)));
        uint64_t skipped = 0;
        for (int i = 0; i < 64 && *budget > 0; i++) {
                ssize_t n = recv(nl->fd, buf, sizeof(buf), MSG_DONTWAIT);
                if (n < 0 && errno == ENOBUFS)
                        continue; /* the queue overflowed: what is left is still read */
                if (n <= 0)
                        break;
                size_t left = (size_t) n;
                for (struct nlmsghdr *h = (struct nlmsghdr *) buf; NLMSG_OK(h, left);
                     h = NLMSG_NEXT(h, left)) {
                        if (h->nlmsg_type != ((NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET))
                                continue;
                        if (*budget == 0) {
                                skipped++;
                                continue;
                        }
                        (*budget)--;
                        packet(h, fn, userdata);
                }
        }
        return skipped;
}
