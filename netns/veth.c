/* SPDX-License-Identifier: MIT */
/*
 * The veth pair: the host end "psr<id>" stays in psrun's namespace with the
 * gateway address; the peer is created directly inside the child's network
 * namespace as eth0, and configured there through a netlink socket opened in
 * that namespace (a socket stays in the namespace it was created in), so
 * the child itself does nothing. IPv6 is off on both ends before either is
 * up: no link-local address ever exists that could reach the host
 * (docs/network.md).
 *
 * Plain rtnetlink (netns/netlink.h), each end's address, state and route in
 * one sendmsg(): three round trips in all, where a library asked for each
 * step and read the link back before changing it.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/if_link.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/veth.h>
#include <net/if.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "netns/netlink.h"
#include "netns/netns.h"

#define SANDBOX_IF     "eth0"
#define LOOPBACK_INDEX 1 /* lo is the first interface of every namespace */

/* disable_ipv6 on one interface of the current namespace; a kernel without
 * IPv6 has no such file, which is as good. */
static int ipv6_off(const char *ifname)
{
        char path[96];
        snprintf(path, sizeof(path), "/proc/sys/net/ipv6/conf/%s/disable_ipv6", ifname);
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return errno == ENOENT ? 0 : -errno;
        return write(fd, "1", 1) == 1 ? 0 : -errno;
}

/* RTM_NEWLINK on an existing link: up. */
static void put_up(struct nlbuf *b, int index)
{
        struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC,
                                .ifi_index = index,
                                .ifi_flags = IFF_UP,
                                .ifi_change = IFF_UP};
        nl_end(b, nl_begin(b, RTM_NEWLINK, 0, true, &ifi, sizeof(ifi)));
}

/* RTM_NEWADDR: addr/30 on index. */
static void put_addr(struct nlbuf *b, int index, struct in_addr addr)
{
        struct ifaddrmsg ifa = {.ifa_family = AF_INET,
                                .ifa_prefixlen = 30,
                                .ifa_scope = RT_SCOPE_UNIVERSE,
                                .ifa_index = (unsigned) index};
        size_t m = nl_begin(b, RTM_NEWADDR, NLM_F_CREATE | NLM_F_EXCL, true, &ifa, sizeof(ifa));
        nl_put(b, IFA_LOCAL, &addr, sizeof(addr));
        nl_put(b, IFA_ADDRESS, &addr, sizeof(addr));
        nl_end(b, m);
}

/* RTM_NEWROUTE: default via gw dev index. */
static void put_default_route(struct nlbuf *b, int index, struct in_addr gw)
{
        struct rtmsg rt = {.rtm_family = AF_INET,
                           .rtm_table = RT_TABLE_MAIN,
                           .rtm_protocol = RTPROT_STATIC,
                           .rtm_scope = RT_SCOPE_UNIVERSE,
                           .rtm_type = RTN_UNICAST};
        size_t m = nl_begin(b, RTM_NEWROUTE, NLM_F_CREATE | NLM_F_EXCL, true, &rt, sizeof(rt));
        nl_put(b, RTA_GATEWAY, &gw, sizeof(gw));
        nl_put_u32(b, RTA_OIF, (uint32_t) index);
        nl_end(b, m);
}

/* The steps of one batch, by the message that failed. */
static int batch(int fd, struct nlbuf *b, const char *const *steps, size_t n, psrun_error *err)
{
        unsigned failed;
        int r = nl_transact(fd, b, &failed);
        if (r < 0)
                return psrun_error_errno(err, r, "network: veth: %s",
                                         failed < n ? steps[failed] : steps[n - 1]);
        return 0;
}

/* The pair, its peer born in the child's namespace as eth0. */
static int add_pair(int fd, const struct netns_plan *p, int child_ns, psrun_error *err)
{
        _cleanup_(nlbuf_free) struct nlbuf b = NLBUF_INIT;
        struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC};
        size_t m = nl_begin(&b, RTM_NEWLINK, NLM_F_CREATE | NLM_F_EXCL, true, &ifi, sizeof(ifi));
        nl_put_str(&b, IFLA_IFNAME, p->host_if);
        size_t info = nl_nest(&b, IFLA_LINKINFO);
        nl_put_str(&b, IFLA_INFO_KIND, "veth");
        size_t data = nl_nest(&b, IFLA_INFO_DATA);
        size_t peer = nl_nest(&b, VETH_INFO_PEER);
        nl_raw(&b, &ifi, sizeof(ifi)); /* the peer's own ifinfomsg */
        nl_put_str(&b, IFLA_IFNAME, SANDBOX_IF);
        nl_put_u32(&b, IFLA_NET_NS_FD, (uint32_t) child_ns);
        nl_nest_end(&b, peer);
        nl_nest_end(&b, data);
        nl_nest_end(&b, info);
        nl_end(&b, m);
        char step[48];
        snprintf(step, sizeof(step), "add %s", p->host_if);
        const char *steps[] = {step};
        return batch(fd, &b, steps, 1, err);
}

/* The host end: IPv6 off, the gateway address, up. */
static int config_host_end(int fd, const struct netns_plan *p, psrun_error *err)
{
        int r = ipv6_off(p->host_if);
        if (r < 0)
                return psrun_error_errno(err, r, "network: veth: disable IPv6 on %s", p->host_if);
        int index = (int) if_nametoindex(p->host_if);
        if (index <= 0)
                return psrun_error_errno(err, errno, "network: veth: %s", p->host_if);
        _cleanup_(nlbuf_free) struct nlbuf b = NLBUF_INIT;
        put_addr(&b, index, p->gateway);
        put_up(&b, index);
        char a[64], u[48];
        snprintf(a, sizeof(a), "add the gateway address to %s", p->host_if);
        snprintf(u, sizeof(u), "set up %s", p->host_if);
        const char *steps[] = {a, u};
        return batch(fd, &b, steps, ARRAY_SIZE(steps), err);
}

/* In the child's namespace (the calling thread is, for a moment): a route
 * socket, IPv6 off on eth0 and its index. Back in its own namespace after,
 * always. */
static int enter_child(int child_ns, int *sock, int *index, psrun_error *err)
{
        _cleanup_close_ int own_ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        if (own_ns < 0)
                return psrun_error_errno(err, errno, "network: veth: open %s",
                                         "/proc/thread-self/ns/net");
        if (setns(child_ns, CLONE_NEWNET) < 0)
                return psrun_error_errno(err, errno, "network: veth: enter the sandbox's netns");
        int fd = nl_open(NETLINK_ROUTE);
        int r6 = fd < 0 ? 0 : ipv6_off(SANDBOX_IF);
        int ix = fd < 0 ? 0 : (int) if_nametoindex(SANDBOX_IF);
        int ix_err = errno;
        if (setns(own_ns, CLONE_NEWNET) < 0) {
                /* We cannot be left in the sandbox's namespace. */
                abort(); /* layering: fail closed */
        }
        if (fd < 0)
                return psrun_error_errno(err, fd, "network: veth: netlink socket in the sandbox");
        *sock = fd;
        if (r6 < 0)
                return psrun_error_errno(err, r6, "network: veth: disable IPv6 on %s", SANDBOX_IF);
        if (ix <= 0)
                return psrun_error_errno(err, ix_err, "network: veth: %s not in the sandbox",
                                         SANDBOX_IF);
        *index = ix;
        return 0;
}

/* The sandbox's end: its address, up, the default route; and lo up too:
 * the child brings it up itself where it made the namespace, but a
 * session's install exec gets a namespace of the host's user namespace,
 * where the child has no right to. */
static int config_sandbox_end(int child_ns, const struct netns_plan *p, psrun_error *err)
{
        _cleanup_close_ int fd = -1;
        int index = 0;
        int r = enter_child(child_ns, &fd, &index, err);
        if (r < 0)
                return r;
        _cleanup_(nlbuf_free) struct nlbuf b = NLBUF_INIT;
        put_addr(&b, index, p->sandbox);
        put_up(&b, index);
        put_default_route(&b, index, p->gateway);
        put_up(&b, LOOPBACK_INDEX);
        static const char *const steps[] = {
                "add the sandbox address to " SANDBOX_IF,
                "set up " SANDBOX_IF,
                "add the default route in the sandbox",
                "set up lo",
        };
        return batch(fd, &b, steps, ARRAY_SIZE(steps), err);
}

int veth_create(const struct netns_plan *p, pid_t child, psrun_error *err)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/ns/net", (int) child);
        _cleanup_close_ int child_ns = open(path, O_RDONLY | O_CLOEXEC);
        if (child_ns < 0)
                return psrun_error_errno(err, errno, "network: veth: open %s", path);
        return veth_create_ns(p, child_ns, err);
}

int veth_create_ns(const struct netns_plan *p, int child_ns, psrun_error *err)
{
        _cleanup_close_ int fd = nl_open(NETLINK_ROUTE);
        if (fd < 0)
                return psrun_error_errno(err, fd, "network: veth: netlink socket for %s",
                                         p->host_if);
        int r = add_pair(fd, p, child_ns, err);
        if (r >= 0)
                r = config_host_end(fd, p, err);
        if (r >= 0)
                r = config_sandbox_end(child_ns, p, err);
        return r;
}

void veth_delete(const char *host_if)
{
        _cleanup_close_ int fd = nl_open(NETLINK_ROUTE);
        if (fd < 0)
                return;
        _cleanup_(nlbuf_free) struct nlbuf b = NLBUF_INIT;
        struct ifinfomsg ifi = {.ifi_family = AF_UNSPEC};
        size_t m = nl_begin(&b, RTM_DELLINK, 0, true, &ifi, sizeof(ifi));
        nl_put_str(&b, IFLA_IFNAME, host_if);
        nl_end(&b, m);
        (void) nl_transact(fd, &b, NULL);
}
