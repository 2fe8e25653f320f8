/* SPDX-License-Identifier: MIT */
/*
 * The address pool: one /30 per sandbox (network, gateway .1, sandbox .2,
 * broadcast) out of `network_pool`, or out of the first candidate /16 that
 * none of the host's routes touch. A lease is a file NETNS_STATE_DIR/<subnet>
 * holding the run's id and the network namespace its veth and table are in
 * ("<id>\nnetns <inode>\n"), created atomically (an O_TMPFILE linked into
 * place, which fails if the name exists) and flock()ed for the owner's
 * lifetime: a lease nobody holds the lock of belongs to a dead run, and
 * `psrun gc` in that namespace removes it with the run's veth and nft
 * table.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "netns/netlink.h"
#include "netns/netns.h"

/* Candidates when no network_pool is given, in order. */
static const struct netns_range pool_candidates[] = {
        {{10, 213}, 16}, {{10, 214}, 16}, {{10, 215}, 16}, {{100, 85}, 16}, {{100, 86}, 16},
};

static uint32_t addr_of(const uint8_t *a)
{
        uint32_t v;
        memcpy(&v, a, 4);
        return ntohl(v);
}

static bool overlaps(uint32_t a, unsigned alen, uint32_t b, unsigned blen)
{
        unsigned len = alen < blen ? alen : blen;
        uint32_t mask = len ? ~0U << (32 - len) : 0;
        return (a & mask) == (b & mask);
}

/* Which candidates a route of the host touches. */
struct route_scan {
        uint32_t net[ARRAY_SIZE(pool_candidates)];
        unsigned prefix[ARRAY_SIZE(pool_candidates)];
        bool used[ARRAY_SIZE(pool_candidates)];
};

static void check_route(const struct nlmsghdr *h, void *arg)
{
        struct route_scan *s = arg;
        const struct rtmsg *rt = NLMSG_DATA(h);
        if (h->nlmsg_type != RTM_NEWROUTE || h->nlmsg_len < NLMSG_LENGTH(sizeof(*rt)) ||
            rt->rtm_family != AF_INET)
                return;
        /* The default route covers everything and says nothing. */
        if (rt->rtm_dst_len == 0)
                return;
        uint32_t dst = 0;
        int oif = 0;
        size_t left = h->nlmsg_len - NLMSG_LENGTH(sizeof(*rt));
        for (const struct rtattr *a = RTM_RTA(rt); RTA_OK(a, left); a = RTA_NEXT(a, left)) {
                if (a->rta_type == RTA_DST && RTA_PAYLOAD(a) == 4)
                        memcpy(&dst, RTA_DATA(a), 4);
                else if (a->rta_type == RTA_OIF && RTA_PAYLOAD(a) == 4)
                        memcpy(&oif, RTA_DATA(a), 4);
                else if (a->rta_type == RTA_MULTIPATH && RTA_PAYLOAD(a) >= sizeof(struct rtnexthop))
                        oif = ((const struct rtnexthop *) RTA_DATA(a))->rtnh_ifindex;
        }
        /* Routes of psrun's own sandboxes are inside the pool by design. */
        char name[IF_NAMESIZE] = "";
        if (oif > 0 && if_indextoname((unsigned) oif, name) && strncmp(name, "psr", 3) == 0)
                return;
        for (size_t i = 0; i < ARRAY_SIZE(pool_candidates); i++)
                if (overlaps(ntohl(dst), rt->rtm_dst_len, s->net[i], s->prefix[i]))
                        s->used[i] = true;
}

int addr_pool_pick(struct netns_plan *p, psrun_error *err)
{
        if (p->pool_given)
                return 0;
        struct route_scan s = {0};
        for (size_t i = 0; i < ARRAY_SIZE(pool_candidates); i++) {
                s.net[i] = addr_of(pool_candidates[i].addr);
                s.prefix[i] = pool_candidates[i].prefix;
        }
        _cleanup_close_ int fd = nl_open(NETLINK_ROUTE);
        _cleanup_(nlbuf_free) struct nlbuf b = NLBUF_INIT;
        struct rtmsg rt = {.rtm_family = AF_INET};
        nl_end(&b, nl_begin(&b, RTM_GETROUTE, NLM_F_DUMP, false, &rt, sizeof(rt)));
        int r = fd < 0 ? fd : nl_dump(fd, &b, check_route, &s);
        if (r < 0)
                return psrun_error_errno(err, r, "network: address pool: read the host's routes");
        for (size_t i = 0; i < ARRAY_SIZE(pool_candidates); i++)
                if (!s.used[i]) {
                        memcpy(&p->pool.base, pool_candidates[i].addr, 4);
                        p->pool.prefix = pool_candidates[i].prefix;
                        return 0;
                }
        return psrun_error_set(err, EADDRINUSE,
                               "network: address pool: the host routes every candidate "
                               "(10.213-215.0.0/16, 100.85-86.0.0/16); set network_pool");
}

static int open_state_dir(psrun_error *err)
{
        if (mkdir("/run/psrun", 0700) < 0 && errno != EEXIST)
                return psrun_error_errno(err, errno, "network: lease: mkdir /run/psrun");
        if (mkdir(NETNS_STATE_DIR, 0700) < 0 && errno != EEXIST)
                return psrun_error_errno(err, errno, "network: lease: mkdir %s", NETNS_STATE_DIR);
        int fd = open(NETNS_STATE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return psrun_error_errno(err, errno, "network: lease: open %s", NETNS_STATE_DIR);
        return fd;
}

/* Whether addr is assigned to an interface of this namespace: only then
 * can a socket bind to it. */
static bool address_in_use(uint32_t addr)
{
        _cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = addr};
        return fd >= 0 && bind(fd, (struct sockaddr *) &sa, sizeof(sa)) == 0;
}

int addr_pool_lease(struct netns_plan *p, psrun_error *err)
{
        _cleanup_close_ int dfd = open_state_dir(err);
        if (dfd < 0)
                return dfd;
        _cleanup_close_ int fd = openat(dfd, ".", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd < 0)
                return psrun_error_errno(err, errno, "network: lease: create");
        if (flock(fd, LOCK_EX) < 0)
                return psrun_error_errno(err, errno, "network: lease: lock");
        struct stat ns;
        if (stat("/proc/thread-self/ns/net", &ns) < 0)
                return psrun_error_errno(err, errno, "network: lease: our network namespace");
        char text[64];
        int n = snprintf(text, sizeof(text), "%s\nnetns %llu\n", p->id,
                         (unsigned long long) ns.st_ino);
        if (write(fd, text, (size_t) n) != n)
                return psrun_error_errno(err, EIO, "network: lease: write");

        uint32_t base = ntohl(p->pool.base.s_addr);
        uint32_t slots = 1U << (32 - p->pool.prefix - 2);
        uint32_t start;
        if (getrandom(&start, sizeof(start), 0) != (ssize_t) sizeof(start))
                start = (uint32_t) getpid();
        char proc[64];
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        for (uint32_t k = 0; k < slots; k++) {
                uint32_t net = base + ((start + k) % slots) * 4;
                struct in_addr a = {htonl(net)};
                char name[INET_ADDRSTRLEN];
                inet_ntop(AF_INET, &a, name, sizeof(name));
                if (linkat(AT_FDCWD, proc, dfd, name, AT_SYMLINK_FOLLOW) < 0) {
                        if (errno == EEXIST)
                                continue;
                        return psrun_error_errno(err, errno, "network: lease: link %s", name);
                }
                if (address_in_use(htonl(net + 1))) {
                        /* An ended run's veth not yet gone with its namespace. */
                        (void) unlinkat(dfd, name, 0);
                        continue;
                }
                p->gateway.s_addr = htonl(net + 1);
                p->nflog_group = (uint16_t) (NETNS_NFLOG_BASE | (((start + k) % slots) & 0x7fff));
                p->sandbox.s_addr = htonl(net + 2);
                snprintf(p->lease_path, sizeof(p->lease_path), "%s/%s", NETNS_STATE_DIR, name);
                p->lease_fd = TAKE_FD(fd);
                return 0;
        }
        return psrun_error_set(err, EADDRINUSE, "network: lease: every /30 of the pool is taken");
}

int addr_pool_lease_owner(int dfd, const char *name, char id[9], uint64_t *netns, bool *alive)
{
        _cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (fd < 0)
                return -errno;
        char text[64] = "";
        ssize_t n = read(fd, text, sizeof(text) - 1);
        if (n < 9 || strspn(text, "0123456789abcdef") != 8)
                return -EINVAL;
        memcpy(id, text, 8);
        id[8] = '\0';
        unsigned long long ino = 0;
        /* 0: a lease of before namespaces were recorded. */
        *netns = sscanf(text + 9, "netns %llu", &ino) == 1 ? ino : 0;
        /* The owner holds the lock while it lives. */
        *alive = flock(fd, LOCK_EX | LOCK_NB) < 0;
        return 0;
}
