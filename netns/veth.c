/* SPDX-License-Identifier: MIT */
/*
 * The veth pair: the host end "psr<id>" stays in psrun's namespace with the
 * gateway address; the peer is created directly inside the child's network
 * namespace as eth0, and configured there through a netlink socket opened in
 * that namespace (a socket stays in the namespace it was created in), so
 * the child itself does nothing. IPv6 is off on both ends: no link-local
 * address exists that could reach the host (docs/network.md).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <netlink/route/addr.h>
#include <netlink/route/link.h>
#include <netlink/route/link/veth.h>
#include <netlink/route/route.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "netns/netns.h"

#define SANDBOX_IF "eth0"

static void nl_sock_freep(struct nl_sock **s)
{
        if (*s)
                nl_socket_free(*s);
}

static void link_putp(struct rtnl_link **l)
{
        if (*l)
                rtnl_link_put(*l);
}

static int nl_err(psrun_error *err, int r, const char *what, const char *name)
{
        /* libnl's codes are its own; the kernel's errno is lost, name it. */
        int e = r == -NLE_PERM ? EPERM : r == -NLE_EXIST ? EEXIST : r == -NLE_NOMEM ? ENOMEM : EIO;
        return psrun_error_set(err, e, "network: veth: %s %s: %s", what, name, nl_geterror(r));
}

static int route_socket(struct nl_sock **ret)
{
        struct nl_sock *sk = nl_socket_alloc();
        if (!sk)
                return -NLE_NOMEM;
        int r = nl_connect(sk, NETLINK_ROUTE);
        if (r < 0) {
                nl_socket_free(sk);
                return r;
        }
        *ret = sk;
        return 0;
}

/* ifindex by name in the socket's namespace; 0 when absent. */
static int ifindex(struct nl_sock *sk, const char *name)
{
        _cleanup_(link_putp) struct rtnl_link *l = NULL;
        if (rtnl_link_get_kernel(sk, 0, name, &l) < 0)
                return 0;
        return rtnl_link_get_ifindex(l);
}

static int add_addr(struct nl_sock *sk, int index, struct in_addr a, unsigned prefix)
{
        struct rtnl_addr *addr = rtnl_addr_alloc();
        struct nl_addr *local = nl_addr_build(AF_INET, &a, 4);
        int r = -NLE_NOMEM;
        if (addr && local) {
                nl_addr_set_prefixlen(local, (int) prefix);
                rtnl_addr_set_ifindex(addr, index);
                rtnl_addr_set_local(addr, local);
                r = rtnl_addr_add(sk, addr, 0);
        }
        if (local)
                nl_addr_put(local);
        if (addr)
                rtnl_addr_put(addr);
        return r;
}

static int set_up(struct nl_sock *sk, const char *name)
{
        _cleanup_(link_putp) struct rtnl_link *old = NULL;
        _cleanup_(link_putp) struct rtnl_link *change = rtnl_link_alloc();
        int r = rtnl_link_get_kernel(sk, 0, name, &old);
        if (r < 0)
                return r;
        if (!change)
                return -NLE_NOMEM;
        rtnl_link_set_flags(change, IFF_UP);
        return rtnl_link_change(sk, old, change, 0);
}

static int default_route(struct nl_sock *sk, int index, struct in_addr gw)
{
        struct rtnl_route *route = rtnl_route_alloc();
        struct rtnl_nexthop *nh = rtnl_route_nh_alloc();
        struct nl_addr *dst = nl_addr_build(AF_INET, &(struct in_addr){0}, 4);
        struct nl_addr *via = nl_addr_build(AF_INET, &gw, 4);
        int r = -NLE_NOMEM;
        if (route && nh && dst && via) {
                nl_addr_set_prefixlen(dst, 0);
                rtnl_route_set_family(route, AF_INET);
                rtnl_route_set_dst(route, dst);
                rtnl_route_nh_set_ifindex(nh, index);
                rtnl_route_nh_set_gateway(nh, via);
                rtnl_route_add_nexthop(route, nh);
                nh = NULL; /* the route owns it now */
                r = rtnl_route_add(sk, route, 0);
        }
        if (nh)
                rtnl_route_nh_free(nh);
        if (dst)
                nl_addr_put(dst);
        if (via)
                nl_addr_put(via);
        if (route)
                rtnl_route_put(route);
        return r;
}

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

/* A route socket inside the child's network namespace, and IPv6 off on its
 * eth0 while we are there. The calling thread returns to its namespace. */
static int enter_child(pid_t child, struct nl_sock **ret, psrun_error *err)
{
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/ns/net", (int) child);
        _cleanup_close_ int child_ns = open(path, O_RDONLY | O_CLOEXEC);
        _cleanup_close_ int own_ns = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        if (child_ns < 0 || own_ns < 0)
                return psrun_error_errno(err, errno, "network: veth: open %s",
                                         child_ns < 0 ? path : "/proc/thread-self/ns/net");
        if (setns(child_ns, CLONE_NEWNET) < 0)
                return psrun_error_errno(err, errno, "network: veth: enter the sandbox's netns");
        int r = route_socket(ret);
        int r6 = r < 0 ? 0 : ipv6_off(SANDBOX_IF);
        if (setns(own_ns, CLONE_NEWNET) < 0) {
                /* We cannot be left in the sandbox's namespace. */
                abort();
        }
        if (r < 0)
                return nl_err(err, r, "netlink socket in", "the sandbox");
        if (r6 < 0) {
                nl_socket_free(*ret);
                *ret = NULL;
                return psrun_error_errno(err, r6, "network: veth: disable IPv6 on %s", SANDBOX_IF);
        }
        return 0;
}

int veth_create(const struct netns_plan *p, pid_t child, psrun_error *err)
{
        _cleanup_(nl_sock_freep) struct nl_sock *sk = NULL;
        int r = route_socket(&sk);
        if (r < 0)
                return nl_err(err, r, "netlink socket for", p->host_if);

        _cleanup_(link_putp) struct rtnl_link *link = rtnl_link_veth_alloc();
        if (!link)
                return psrun_error_errno(err, ENOMEM, "network: veth");
        rtnl_link_set_name(link, p->host_if);
        struct rtnl_link *peer = rtnl_link_veth_get_peer(link);
        rtnl_link_set_name(peer, SANDBOX_IF);
        rtnl_link_set_ns_pid(peer, child);
        rtnl_link_put(peer);
        r = rtnl_link_add(sk, link, NLM_F_CREATE | NLM_F_EXCL);
        if (r < 0)
                return nl_err(err, r, "add", p->host_if);

        r = ipv6_off(p->host_if);
        if (r < 0)
                return psrun_error_errno(err, r, "network: veth: disable IPv6 on %s", p->host_if);
        int index = ifindex(sk, p->host_if);
        if ((r = add_addr(sk, index, p->gateway, 30)) < 0)
                return nl_err(err, r, "add the gateway address to", p->host_if);
        if ((r = set_up(sk, p->host_if)) < 0)
                return nl_err(err, r, "set up", p->host_if);

        _cleanup_(nl_sock_freep) struct nl_sock *inside = NULL;
        r = enter_child(child, &inside, err);
        if (r < 0)
                return r;
        index = ifindex(inside, SANDBOX_IF);
        if (!index)
                return psrun_error_set(err, ENODEV, "network: veth: %s not in the sandbox",
                                       SANDBOX_IF);
        if ((r = add_addr(inside, index, p->sandbox, 30)) < 0)
                return nl_err(err, r, "add the sandbox address to", SANDBOX_IF);
        if ((r = set_up(inside, SANDBOX_IF)) < 0)
                return nl_err(err, r, "set up", SANDBOX_IF);
        if ((r = default_route(inside, index, p->gateway)) < 0)
                return nl_err(err, r, "add the default route in", "the sandbox");
        /* lo too: the child brings it up itself where it made the
         * namespace, but a session's install exec gets a namespace of the
         * host's user namespace, where the child has no right to. */
        if ((r = set_up(inside, "lo")) < 0)
                return nl_err(err, r, "set up", "lo");
        return 0;
}

void veth_delete(const char *host_if)
{
        _cleanup_(nl_sock_freep) struct nl_sock *sk = NULL;
        if (route_socket(&sk) < 0)
                return;
        _cleanup_(link_putp) struct rtnl_link *l = rtnl_link_alloc();
        if (!l)
                return;
        rtnl_link_set_name(l, host_if);
        (void) rtnl_link_delete(sk, l);
}
