/* SPDX-License-Identifier: MIT */
/*
 * Refused connections, as the kernel reports them: the `refuse` chain of a
 * sandbox's nft table logs the first packet of each refused flow to NFLOG
 * group plan->nflog_group (one group per sandbox: a group has one reader),
 * and the DNS proxy's thread reads them here (libmnl) and counts them.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <libmnl/libmnl.h>
#include <linux/netfilter/nfnetlink.h>
#include <linux/netfilter/nfnetlink_log.h>
#include <netinet/ip.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "netns/netns.h"

static int config(struct mnl_socket *nl, uint16_t group, uint8_t family, uint8_t cmd, bool set_mode)
{
        char buf[MNL_SOCKET_BUFFER_SIZE];
        struct nlmsghdr *nlh = mnl_nlmsg_put_header(buf);
        nlh->nlmsg_type = (NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG;
        nlh->nlmsg_flags = NLM_F_REQUEST | NLM_F_ACK;
        struct nfgenmsg *g = mnl_nlmsg_put_extra_header(nlh, sizeof(*g));
        g->nfgen_family = family;
        g->version = NFNETLINK_V0;
        g->res_id = htons(group);
        struct nfulnl_msg_config_cmd c = {.command = cmd};
        mnl_attr_put(nlh, NFULA_CFG_CMD, sizeof(c), &c);
        if (set_mode) {
                /* The IP and transport headers are all we read. */
                struct nfulnl_msg_config_mode m = {.copy_range = htonl(64),
                                                   .copy_mode = NFULNL_COPY_PACKET};
                mnl_attr_put(nlh, NFULA_CFG_MODE, sizeof(m), &m);
                /* Each packet at once, not batched for up to a second: a
                 * short run must see its refusals before it ends. */
                mnl_attr_put_u32(nlh, NFULA_CFG_QTHRESH, htonl(1));
        }
        if (mnl_socket_sendto(nl, nlh, nlh->nlmsg_len) < 0)
                return -errno;
        ssize_t n = mnl_socket_recvfrom(nl, buf, sizeof(buf));
        if (n < 0)
                return -errno;
        return mnl_cb_run(buf, (size_t) n, 0, 0, NULL, NULL) < 0 ? -errno : 0;
}

int nflog_open(uint16_t group, struct mnl_socket **ret, psrun_error *err)
{
        struct mnl_socket *nl = mnl_socket_open2(NETLINK_NETFILTER, SOCK_CLOEXEC);
        if (!nl)
                return psrun_error_errno(err, errno, "network: nflog: socket");
        int r = mnl_socket_bind(nl, 0, MNL_SOCKET_AUTOPID) < 0 ? -errno : 0;
        if (r >= 0)
                r = config(nl, group, AF_UNSPEC, NFULNL_CFG_CMD_BIND, true);
        if (r < 0) {
                mnl_socket_close(nl);
                return psrun_error_errno(err, r, "network: nflog: bind group %u", group);
        }
        *ret = nl;
        return 0;
}

void nflog_close(struct mnl_socket *nl)
{
        if (nl)
                mnl_socket_close(nl);
}

int nflog_fd(struct mnl_socket *nl)
{
        return mnl_socket_get_fd(nl);
}

struct packet_ctx {
        const void *payload;
        size_t len;
};

static int attr_cb(const struct nlattr *attr, void *data)
{
        struct packet_ctx *p = data;
        if (mnl_attr_get_type(attr) == NFULA_PAYLOAD) {
                p->payload = mnl_attr_get_payload(attr);
                p->len = mnl_attr_get_payload_len(attr);
        }
        return MNL_CB_OK;
}

struct read_ctx {
        nflog_fn fn;
        void *userdata;
};

static int msg_cb(const struct nlmsghdr *nlh, void *data)
{
        struct read_ctx *rc = data;
        struct packet_ctx p = {0};
        mnl_attr_parse(nlh, sizeof(struct nfgenmsg), attr_cb, &p);
        const uint8_t *b = p.payload;
        if (!b || p.len < 20 || (b[0] >> 4) != 4)
                return MNL_CB_OK;
        size_t ihl = (size_t) (b[0] & 0xf) * 4;
        uint8_t proto = b[9];
        uint16_t port = 0;
        if ((proto == IPPROTO_TCP || proto == IPPROTO_UDP) && p.len >= ihl + 4)
                port = (uint16_t) (b[ihl + 2] << 8 | b[ihl + 3]);
        char addr[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, b + 16, addr, sizeof(addr));
        const char *name = proto == IPPROTO_TCP    ? "tcp"
                           : proto == IPPROTO_UDP  ? "udp"
                           : proto == IPPROTO_ICMP ? "icmp"
                                                   : "ip";
        rc->fn(rc->userdata, addr, port, name);
        return MNL_CB_OK;
}

void nflog_read(struct mnl_socket *nl, nflog_fn fn, void *userdata)
{
        char buf[MNL_SOCKET_BUFFER_SIZE];
        struct read_ctx rc = {fn, userdata};
        for (int i = 0; i < 64; i++) {
                ssize_t n = recv(mnl_socket_get_fd(nl), buf, sizeof(buf), MSG_DONTWAIT);
                if (n <= 0)
                        return;
                (void) mnl_cb_run(buf, (size_t) n, 0, 0, msg_cb, &rc);
        }
}
