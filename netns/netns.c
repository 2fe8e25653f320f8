/* SPDX-License-Identifier: MIT */
#include "netns/netns.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fault.h"
#include "netns/name-relay.h"

struct mode_ops {
        bool veth; /* a veth pair, an address lease and an nft table */
};

static const struct mode_ops modes[_NETNS_MODE_MAX] = {
        [NETNS_MODE_NONE] = {false},
        [NETNS_MODE_RESTRICTED] = {true},
        [NETNS_MODE_FULL] = {true},
};

bool netns_mode_has_veth(enum netns_mode mode)
{
        return (unsigned) mode < _NETNS_MODE_MAX && modes[mode].veth;
}

const struct netns_range netns_never4[] = {
        {{0}, 8}, {{127}, 8}, {{169, 254}, 16}, {{224}, 4}, {{240}, 4},
};
const size_t netns_n_never4 = ARRAY_SIZE(netns_never4);
const struct netns_range netns_private4[] = {
        {{10}, 8},
        {{100, 64}, 10},
        {{172, 16}, 12},
        {{192, 168}, 16},
};
const size_t netns_n_private4 = ARRAY_SIZE(netns_private4);

static struct cidr range_cidr(const struct netns_range *r)
{
        struct cidr c = {.family = AF_INET, .prefix = r->prefix};
        memcpy(c.addr, r->addr, 4);
        return c;
}

/* Two CIDRs of one family share an address: they agree on the shorter
 * prefix. */
static bool cidr_overlaps(const struct cidr *a, const struct cidr *b)
{
        if (a->family != b->family)
                return false;
        const struct cidr *shorter = a->prefix < b->prefix ? a : b;
        const struct cidr *other = shorter == a ? b : a;
        return cidr_contains(shorter, other->family, other->addr);
}

/* inner lies wholly inside outer. */
static bool cidr_within(const struct cidr *inner, const struct cidr *outer)
{
        return inner->family == outer->family && inner->prefix >= outer->prefix &&
               cidr_contains(outer, inner->family, inner->addr);
}

static bool overlaps_any(const struct cidr *c, const struct netns_range *r, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                struct cidr rc = range_cidr(&r[i]);
                if (cidr_overlaps(c, &rc))
                        return true;
        }
        return false;
}

static const char *cidr_text(const struct cidr *c, char *buf, size_t len)
{
        char a[INET6_ADDRSTRLEN];
        inet_ntop(c->family, c->addr, a, sizeof(a));
        snprintf(buf, len, "%s/%u", a, c->prefix);
        return buf;
}

/*
 * Entries that could not do what they say are errors, not silent no-ops:
 * allow_private opens private ranges only (never loopback, link-local,
 * metadata or multicast, and IPv6 is off inside), and an allow_cidrs entry
 * in a private range is reachable only where allow_private opens it too.
 */
static int check_ranges(const struct netns_plan *p, psrun_error *err)
{
        char t[64];
        for (size_t i = 0; i < p->n_privates; i++) {
                const struct cidr *c = &p->privates[i];
                bool inside = false;
                if (c->family != AF_INET)
                        return psrun_error_set(err, EINVAL,
                                               "allow_private[%zu]: IPv6 is off inside the sandbox",
                                               i);
                if (overlaps_any(c, netns_never4, netns_n_never4))
                        return psrun_error_set(err, EINVAL,
                                               "allow_private[%zu]: %s is never reachable "
                                               "(loopback, link-local and metadata, multicast)",
                                               i, cidr_text(c, t, sizeof(t)));
                for (size_t k = 0; k < netns_n_private4; k++) {
                        struct cidr rc = range_cidr(&netns_private4[k]);
                        inside |= cidr_within(c, &rc);
                }
                if (!inside)
                        return psrun_error_set(err, EINVAL,
                                               "allow_private[%zu]: %s is not a private range "
                                               "(10.0.0.0/8, 100.64.0.0/10, 172.16.0.0/12, "
                                               "192.168.0.0/16): it would allow nothing",
                                               i, cidr_text(c, t, sizeof(t)));
        }
        for (size_t i = 0; i < p->n_cidrs; i++) {
                const struct cidr *c = &p->cidrs[i];
                if (!c->port && p->n_ports == 0)
                        return psrun_error_set(err, EINVAL,
                                               "allow_cidrs[%zu]: %s has no port, and allow_ports "
                                               "is empty: give it one (CIDR:port)",
                                               i, cidr_text(c, t, sizeof(t)));
                if (overlaps_any(c, netns_never4, netns_n_never4))
                        return psrun_error_set(err, EINVAL,
                                               "allow_cidrs[%zu]: %s is never reachable "
                                               "(loopback, link-local and metadata, multicast)",
                                               i, cidr_text(c, t, sizeof(t)));
                if (!overlaps_any(c, netns_private4, netns_n_private4))
                        continue;
                bool opened = false;
                for (size_t k = 0; k < p->n_privates; k++)
                        opened |= cidr_within(c, &p->privates[k]);
                if (!opened)
                        return psrun_error_set(err, EINVAL,
                                               "allow_cidrs[%zu]: %s is in a private range: list "
                                               "it in allow_private too",
                                               i, cidr_text(c, t, sizeof(t)));
        }
        return 0;
}

/* A resolv.conf nameserver: one address, a host route of its family. */
static bool parse_nameserver(const char *s, struct cidr *c)
{
        if (inet_pton(AF_INET, s, c->addr) == 1) {
                c->family = AF_INET;
                c->prefix = 32;
                return true;
        }
        if (inet_pton(AF_INET6, s, c->addr) == 1) {
                c->family = AF_INET6;
                c->prefix = 128;
                return true;
        }
        return false;
}

/* The next usable nameserver line of a resolv.conf: its address as
 * text and parsed. Zone ids (fe80::1%eth0) are skipped. */
static bool next_nameserver(FILE *f, char addr[128], struct cidr *c)
{
        char line[256];
        while (f && fgets(line, sizeof(line), f)) {
                if (sscanf(line, " nameserver %127s", addr) != 1 || strchr(addr, '%'))
                        continue;
                *c = (struct cidr){0};
                if (parse_nameserver(addr, c))
                        return true;
        }
        return false;
}

/* The host's nameservers, for the proxy's upstream. */
static int read_host_resolvers(struct netns_plan *p, psrun_error *err)
{
        _cleanup_fclose_ FILE *f = fopen("/etc/resolv.conf", "re");
        char addr[128];
        struct cidr c;
        while (p->n_upstream < NETNS_MAX_UPSTREAM && next_nameserver(f, addr, &c))
                p->upstream[p->n_upstream++] = c;
        if (p->n_upstream == 0)
                return psrun_error_set(err, ENOENT,
                                       "network: dns_upstream: not given, and the host's "
                                       "/etc/resolv.conf names no nameserver");
        return 0;
}

int netns_host_resolvers(char ***ret, size_t *n)
{
        _cleanup_fclose_ FILE *f = fopen("/etc/resolv.conf", "re");
        _cleanup_(strv_freep) char **v = calloc(NETNS_MAX_UPSTREAM + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        size_t k = 0;
        char addr[128];
        struct cidr c;
        while (k < NETNS_MAX_UPSTREAM && next_nameserver(f, addr, &c)) {
                v[k] = strdup(addr);
                if (!v[k])
                        return -ENOMEM;
                k++;
        }
        *n = k;
        *ret = TAKE_PTR(v);
        return 0;
}

int netns_plan(const struct netns_request *req, struct netns_plan *p, psrun_error *err)
{
        memset(p, 0, sizeof(*p));
        p->lease_fd = -1;
        if ((unsigned) req->mode >= _NETNS_MODE_MAX)
                return psrun_error_set(err, EINVAL, "network: unknown mode %d", (int) req->mode);
        p->mode = req->mode;
        /* A fresh namespace has lo down: programs that talk to themselves
         * over 127.0.0.1 still work. */
        p->loopback_up = true;
        p->veth = modes[p->mode].veth;
        if (!p->veth)
                return 0;

        if (req->n_ports > NETNS_MAX_PORTS || req->n_cidrs > NETNS_MAX_CIDRS ||
            req->n_privates > NETNS_MAX_CIDRS || req->n_upstream > NETNS_MAX_UPSTREAM)
                return psrun_error_set(err, E2BIG, "network: request past its bounds");
        if (req->n_ports)
                memcpy(p->ports, req->ports, req->n_ports * sizeof(p->ports[0]));
        p->n_ports = req->n_ports;
        memcpy(p->cidrs, req->cidrs, req->n_cidrs * sizeof(p->cidrs[0]));
        p->n_cidrs = req->n_cidrs;
        memcpy(p->privates, req->privates, req->n_privates * sizeof(p->privates[0]));
        p->n_privates = req->n_privates;
        memcpy(p->upstream, req->upstream, req->n_upstream * sizeof(p->upstream[0]));
        p->n_upstream = req->n_upstream;
        int r = check_ranges(p, err);
        if (r >= 0 && p->n_upstream == 0)
                r = read_host_resolvers(p, err);
        if (r < 0)
                return r;
        if (req->pool_given) {
                memcpy(&p->pool.base, req->pool.addr, 4);
                p->pool.prefix = req->pool.prefix;
                p->pool_given = true;
        }
        p->min_ttl_ms = req->min_ttl_ms;
        p->max_ttl_ms = req->max_ttl_ms;
        p->allow_domains = req->allow_domains;
        p->n_allow_domains = req->n_allow_domains;
        /* A name is pinned on allow_ports: with none, on nothing. */
        if (p->n_allow_domains && p->n_ports == 0)
                return psrun_error_set(err, EINVAL,
                                       "allow_ports: empty, so no name of allow_domains could be "
                                       "reached");
        p->log_path = req->log_path;
        if (p->mode == NETNS_MODE_RESTRICTED && req->name_check)
                for (size_t i = 0; i < p->n_ports; i++)
                        if (p->ports[i] == 443 || p->ports[i] == 80)
                                p->checked_ports[p->n_checked_ports++] = p->ports[i];

        uint32_t rnd;
        if (getrandom(&rnd, sizeof(rnd), 0) != (ssize_t) sizeof(rnd))
                return psrun_error_errno(err, errno, "network: getrandom");
        snprintf(p->id, sizeof(p->id), "%08x", rnd);
        snprintf(p->host_if, sizeof(p->host_if), "psr%s", p->id);
        snprintf(p->table, sizeof(p->table), "psrun_%s", p->id);
        return 0;
}

/*
 * A group has one reader per namespace. The lease's slot is unique within
 * its pool only: sandboxes of two network_pools would meet on a group, and
 * the second could not bind it ("nflog: bind group ...: Operation not
 * permitted"). So the group is claimed here, the slot's first, else the next
 * free one, and held until the lease goes.
 */
#define NFLOG_TRIES 256

static int claim_nflog_group(struct netns_plan *p, psrun_error *err)
{
        uint16_t first = p->nflog_group;
        for (unsigned k = 0; k < NFLOG_TRIES; k++) {
                uint16_t g = (uint16_t) (NETNS_NFLOG_BASE | ((first + k) & 0x7fff));
                int r = nflog_open(g, &p->nflog, k + 1 < NFLOG_TRIES ? NULL : err);
                if (r >= 0) {
                        p->nflog_group = g;
                        return 0;
                }
                /* Taken by another reader: the next one. */
                if (r != -EPERM && r != -EBUSY)
                        return k + 1 < NFLOG_TRIES
                                       ? psrun_error_errno(err, r, "network: nflog: bind group %u",
                                                           g)
                                       : r;
        }
        return -EBUSY;
}

int netns_claim_nflog(struct netns_plan *p, psrun_error *err)
{
        return p->veth ? claim_nflog_group(p, err) : 0;
}

static void fill_resolv_conf(struct netns_plan *p)
{
        char gw[INET_ADDRSTRLEN];
        inet_ntop(AF_INET, &p->gateway, gw, sizeof(gw));
        /* The proxy on the gateway is the only resolver the sandbox can
         * reach; glibc's defaults (5 s, 2 attempts) would make a refused
         * name slow, so fail fast. */
        snprintf(p->resolv_conf, sizeof(p->resolv_conf),
                 "# psrun: the DNS proxy on the gateway\nnameserver %s\noptions timeout:2 "
                 "attempts:2\n",
                 gw);
}

int netns_lease(struct netns_plan *p, psrun_error *err)
{
        if (!p->veth)
                return 0;
        int r = addr_pool_pick(p, err);
        if (r >= 0)
                r = addr_pool_lease(p, err);
        if (r >= 0)
                r = claim_nflog_group(p, err);
        if (r < 0) {
                netns_release(p);
                return r;
        }
        fill_resolv_conf(p);
        return 0;
}

int netns_lease_private(struct netns_plan *p, psrun_error *err)
{
        if (!p->veth)
                return 0;
        /* The namespace holds this one sandbox: the pool's first /30 is
         * free there. The host's routes (which pasta copies in) rule out a
         * pool they touch. */
        int r = addr_pool_pick(p, err);
        if (r < 0)
                return r;
        uint32_t net = ntohl(p->pool.base.s_addr);
        p->gateway.s_addr = htonl(net + 1);
        p->sandbox.s_addr = htonl(net + 2);
        p->nflog_group = NETNS_NFLOG_BASE;
        fill_resolv_conf(p);
        return 0;
}

void netns_release(struct netns_plan *p)
{
        nflog_close(p->nflog);
        p->nflog = NULL;
        if (p->lease_fd < 0)
                return;
        (void) unlink(p->lease_path);
        p->lease_fd = safe_close(p->lease_fd);
}

/* Writes 1 to a sysctl of the namespace we are in; 0 or -errno. */
static int sysctl_write(const char *path, const char *value)
{
        _cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t n = write(fd, value, strlen(value));
        return n == (ssize_t) strlen(value) ? 0 : n < 0 ? -errno : -EIO;
}

static int enable_forwarding(psrun_error *err)
{
        /* NAT needs the host to forward IPv4 at all; what it may forward
         * from the sandbox is decided by psrun's table. */
        char buf[4] = "";
        _cleanup_close_ int fd = open("/proc/sys/net/ipv4/ip_forward", O_RDONLY | O_CLOEXEC);
        if (fd >= 0 && read(fd, buf, sizeof(buf) - 1) > 0 && buf[0] == '1')
                return 0;
        int r = sysctl_write("/proc/sys/net/ipv4/ip_forward", "1");
        if (r < 0)
                return psrun_error_errno(err, r, "network: sysctl net.ipv4.ip_forward=1");
        return 0;
}

/* The network namespace of the sandbox: child's (by pid) or ns_fd. */
static int setup(const struct netns_plan *p, pid_t child, int ns_fd, struct netns_state *st,
                 psrun_error *err)
{
        *st = (struct netns_state) NETNS_STATE_INIT;
        if (!p->veth)
                return 0;
        /* The name check's listener, whose port the table redirects to. */
        uint16_t relay_port = 0;
        if (p->n_checked_ports) {
                st->relay_fd = name_relay_listen(p, &relay_port, err);
                if (st->relay_fd < 0)
                        return st->relay_fd;
        }
        /* The firewall first: no packet passes before the rules hold. */
        int r = st->nft = nft_open(err);
        if (r >= 0) {
                r = nft_add_sandbox_table(st->nft, p, relay_port, err);
                st->table_made = r >= 0;
        }
        if (r >= 0)
                fault_point("net:table");
        if (r >= 0)
                r = enable_forwarding(err);
        if (r >= 0) {
                r = ns_fd >= 0 ? veth_create_ns(p, ns_fd, err) : veth_create(p, child, err);
                st->veth_made = r >= 0;
        }
        if (r >= 0)
                fault_point("net:veth");
        return r;
}

int netns_setup(const struct netns_plan *p, pid_t child, struct netns_state *st, psrun_error *err)
{
        return setup(p, child, -1, st, err);
}

int netns_setup_ns(const struct netns_plan *p, int ns_fd, struct netns_state *st, psrun_error *err)
{
        return setup(p, 0, ns_fd, st, err);
}

void netns_remove_table(const struct netns_plan *p, struct netns_state *st)
{
        if (st->table_made)
                (void) nft_delete_table(st->nft, p->table, NULL);
        st->table_made = false;
}

void netns_teardown(const struct netns_plan *p, struct netns_state *st)
{
        if (!p->veth)
                return; /* nothing was made (and st may be all zeros) */
        /* The veth is not deleted here: deleting one waits for RCU grace
         * periods (17-19 ms here, most of a run's network cost). The pair
         * goes with the sandbox's namespace, which the kernel frees in the
         * background once the sandbox's last process is gone (it is, when
         * we get here), and no fd of ours holds it. A later lease of the
         * same /30 skips it while its gateway address still exists
         * (addr-pool.c). */
        /* After the sandbox is gone, never before: until then the table
         * is what confines it. */
        netns_remove_table(p, st);
        st->relay_fd = safe_close(st->relay_fd);
        st->veth_made = false;
        nft_close(st->nft);
        st->nft = -1;
}

/* Whether some process, or a /run/netns name, still holds the network
 * namespace with inode ino. */
static bool netns_exists(uint64_t ino)
{
        static const char *const dirs[] = {"/proc", "/run/netns"};
        for (size_t k = 0; k < ARRAY_SIZE(dirs); k++) {
                DIR *d = opendir(dirs[k]);
                struct dirent *de;
                while (d && (de = readdir(d))) {
                        char path[300];
                        if (k == 0 && (de->d_name[0] < '0' || de->d_name[0] > '9'))
                                continue;
                        if (de->d_name[0] == '.')
                                continue;
                        snprintf(path, sizeof(path), k == 0 ? "%s/%s/ns/net" : "%s/%s", dirs[k],
                                 de->d_name);
                        struct stat st;
                        if (stat(path, &st) == 0 && (uint64_t) st.st_ino == ino) {
                                closedir(d);
                                return true;
                        }
                }
                if (d)
                        closedir(d);
        }
        return false;
}

/* Removes what a dead owner left of each lease whose id matches want
 * (NULL: every dead lease): its veth, its table, the lease. A lease of
 * another network namespace is that namespace's gc's to remove while the
 * namespace exists (its table is there, out of our reach: removing the
 * lease here would leave the table for good); once the namespace is gone,
 * its veth and table went with it and only the lease is left to remove. */
static int remove_dead(const char *want, psrun_error *err)
{
        _cleanup_close_ int dfd = open(NETNS_STATE_DIR, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dfd < 0)
                return errno == ENOENT
                               ? 0
                               : psrun_error_errno(err, errno, "gc: open %s", NETNS_STATE_DIR);
        int dup = fcntl(dfd, F_DUPFD_CLOEXEC, 3);
        if (dup < 0)
                return psrun_error_errno(err, errno, "gc: %s", NETNS_STATE_DIR);
        DIR *d = fdopendir(dup);
        if (!d) {
                close(dup);
                return psrun_error_errno(err, errno, "gc: %s", NETNS_STATE_DIR);
        }
        struct stat own;
        uint64_t own_ns = stat("/proc/thread-self/ns/net", &own) == 0 ? (uint64_t) own.st_ino : 0;
        int nft = -1;
        int removed = 0;
        struct dirent *de;
        while ((de = readdir(d))) {
                char id[9];
                uint64_t ns;
                bool alive;
                if (de->d_name[0] == '.' ||
                    addr_pool_lease_owner(dfd, de->d_name, id, &ns, &alive) < 0 || alive ||
                    (want && strcmp(id, want) != 0))
                        continue;
                if (ns && ns != own_ns) {
                        if (!netns_exists(ns) && unlinkat(dfd, de->d_name, 0) == 0)
                                removed++;
                        continue;
                }
                char name[32];
                snprintf(name, sizeof(name), "psr%s", id);
                veth_delete(name);
                if (nft >= 0 || (nft = nft_open(NULL)) >= 0) {
                        snprintf(name, sizeof(name), "psrun_%s", id);
                        (void) nft_delete_table(nft, name, NULL);
                }
                if (unlinkat(dfd, de->d_name, 0) == 0)
                        removed++;
        }
        closedir(d);
        nft_close(nft);
        return removed;
}

int netns_gc(psrun_error *err)
{
        return remove_dead(NULL, err);
}

int netns_reap(const char *id, psrun_error *err)
{
        if (!id || strlen(id) != 8 || strspn(id, "0123456789abcdef") != 8)
                return psrun_error_set(err, EINVAL, "gc: `%s` is not a network id", id ? id : "");
        return remove_dead(id, err);
}
