/* SPDX-License-Identifier: MIT */
/* psrun without root: the identity of a sandbox and what holds its limits
 * (docs/rootless.md). */
#include "runtime/rootless.h"

#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/plan.h"

/* A user with more ids than this in one line still gets only these: the
 * sandbox's ids are 0..65535, as root's. */
#define ROOTLESS_ID_COUNT 65536ULL

static int parse_u64_field(const char *s, size_t len, uint64_t *ret)
{
        if (len == 0 || len > 20)
                return -EINVAL;
        uint64_t v = 0;
        for (size_t i = 0; i < len; i++) {
                if (s[i] < '0' || s[i] > '9')
                        return -EINVAL;
                uint64_t d = (uint64_t) (s[i] - '0');
                if (v > (UINT64_MAX - d) / 10)
                        return -EINVAL;
                v = v * 10 + d;
        }
        *ret = v;
        return 0;
}

int subid_find(const char *text, const char *name, uid_t uid, struct subid_range *out)
{
        char uid_text[16];
        snprintf(uid_text, sizeof(uid_text), "%u", (unsigned) uid);
        for (const char *line = text; line && *line;) {
                const char *end = strchr(line, '\n');
                size_t len = end ? (size_t) (end - line) : strlen(line);
                const char *c1 = memchr(line, ':', len);
                const char *next = end ? end + 1 : NULL;
                if (!c1 || line[0] == '#') {
                        line = next;
                        continue;
                }
                size_t owner_len = (size_t) (c1 - line);
                bool mine = (name && strlen(name) == owner_len && !memcmp(line, name, owner_len)) ||
                            (strlen(uid_text) == owner_len && !memcmp(line, uid_text, owner_len));
                if (!mine) {
                        line = next;
                        continue;
                }
                const char *rest = c1 + 1;
                size_t rest_len = len - owner_len - 1;
                const char *c2 = memchr(rest, ':', rest_len);
                struct subid_range r;
                if (!c2 || parse_u64_field(rest, (size_t) (c2 - rest), &r.start) < 0 ||
                    parse_u64_field(c2 + 1, rest_len - (size_t) (c2 - rest) - 1, &r.count) < 0)
                        return -EINVAL;
                /* The kernel's ids are 32 bits; (uid_t) -1 is no id. */
                if (r.count == 0 || r.start + r.count > 0xffffffffULL) {
                        line = next;
                        continue;
                }
                *out = r;
                return 1;
        }
        return 0;
}

bool rootless_active(void)
{
        return geteuid() != 0;
}

static void closep_int(int *fd)
{
        safe_close(*fd);
}

/* The user's range in file, 0 with none (or no such file). */
static int subid_lookup(const char *file, const char *name, uid_t uid, struct subid_range *out,
                        psrun_error *err)
{
        _cleanup_(closep_int) int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return errno == ENOENT ? 0 : psrun_error_errno(err, errno, "identity: %s", file);
        _cleanup_free_ char *text = NULL;
        size_t len;
        int r = read_all(fd, 1 << 20, &text, &len);
        if (r < 0)
                return psrun_error_errno(err, r, "identity: reading %s", file);
        r = subid_find(text, name, uid, out);
        if (r == -EINVAL)
                return psrun_error_set(err, EINVAL, "identity: %s: a malformed line for %s", file,
                                       name ? name : "this user");
        return r;
}

int rootless_subids(struct subid_range *uids, struct subid_range *gids, psrun_error *err)
{
        uid_t me = geteuid();
        const struct passwd *pw = getpwuid(me);
        const char *name = pw ? pw->pw_name : NULL;
        *uids = *gids = (struct subid_range){0};
        int r = subid_lookup("/etc/subuid", name, me, uids, err);
        if (r > 0)
                r = subid_lookup("/etc/subgid", name, me, gids, err);
        if (r <= 0)
                return r;
        if (!idmap_have_helpers())
                return 0;
        if (uids->count > ROOTLESS_ID_COUNT)
                uids->count = ROOTLESS_ID_COUNT;
        if (gids->count > ROOTLESS_ID_COUNT)
                gids->count = ROOTLESS_ID_COUNT;
        return 1;
}

int rootless_plan_identity(const struct policy *pol, struct plan *p, psrun_error *err)
{
        uid_t me = geteuid();
        gid_t my_gid = getegid();
        const struct passwd *pw = getpwuid(me);
        const char *name = pw ? pw->pw_name : NULL;
        struct subid_range su, sg;
        int r = rootless_subids(&su, &sg, err);
        if (r < 0)
                return r;
        p->rootless.active = true;
        if (r > 0) {
                uint64_t nu = su.count, ng = sg.count;
                if ((uint64_t) p->uid >= nu || (uint64_t) p->gid >= ng)
                        return psrun_error_set(err, ERANGE,
                                               "identity: user %u:%u is past the %llu:%llu ids "
                                               "/etc/subuid and /etc/subgid give %s",
                                               (unsigned) p->uid, (unsigned) p->gid,
                                               (unsigned long long) nu, (unsigned long long) ng,
                                               name ? name : "this user");
                /* Exactly the range the files give (newuidmap checks it
                 * again): inside 0.. onto the user's first range. */
                snprintf(p->uid_map, sizeof(p->uid_map), "0 %llu %llu\n",
                         (unsigned long long) su.start, (unsigned long long) nu);
                snprintf(p->gid_map, sizeof(p->gid_map), "0 %llu %llu\n",
                         (unsigned long long) sg.start, (unsigned long long) ng);
                p->rootless.subids = true;
                return 0;
        }
        /* One id: the user, as the sandbox's user inside (the policy's
         * `user`, 1000 or 0 with `user: root`, or an image's User); the
         * user's group as its group. */
        snprintf(p->uid_map, sizeof(p->uid_map), "%u %u 1\n", (unsigned) p->uid, (unsigned) me);
        snprintf(p->gid_map, sizeof(p->gid_map), "%u %u 1\n", (unsigned) p->gid, (unsigned) my_gid);
        p->rootless.setgroups_deny = true;
        p->rootless.setup_uid = p->uid;
        p->rootless.setup_gid = p->gid;
        return 0;
}
/* The limits a policy asks for: those it sets to other than psrun's
 * defaults. The defaults are psrun's choice, not the caller's: where no
 * cgroup can hold them they become rlimits and the result says so, rather
 * than `psrun run -- true` refusing every user (docs/rootless.md). */
static const char *asked_limit(const struct policy *pol)
{
        if (pol->memory_limit != POLICY_DEFAULT_MEMORY_LIMIT)
                return "memory_limit";
        if (pol->cpu_limit != POLICY_DEFAULT_CPU_LIMIT)
                return "cpu_limit";
        if (pol->pids_limit != POLICY_DEFAULT_PIDS_LIMIT)
                return "pids_limit";
        return NULL;
}

static int add_rlimit(struct plan *p, int resource, uint64_t value, psrun_error *err)
{
        if (p->n_rlimits >= PLAN_MAX_RLIMITS)
                return psrun_error_set(err, E2BIG, "limits: too many rlimits");
        p->rlimits[p->n_rlimits++] =
                (struct plan_rlimit){.resource = resource, .limit = {value, value}};
        return 0;
}

/* A user cannot raise a hard rlimit: the quotas' rlimits (plan_quotas) stay
 * at most where the user's are. */
static void clamp_rlimits(struct plan *p)
{
        for (size_t i = 0; i < p->n_rlimits; i++) {
                struct rlimit cur;
                struct plan_rlimit *l = &p->rlimits[i];
                if (getrlimit(l->resource, &cur) < 0)
                        continue;
                if (l->limit.rlim_max > cur.rlim_max)
                        l->limit.rlim_max = cur.rlim_max;
                if (l->limit.rlim_cur > l->limit.rlim_max)
                        l->limit.rlim_cur = l->limit.rlim_max;
        }
}

int rootless_plan_limits(const struct policy *pol, struct plan *p, const char *cgroup_parent,
                         struct cgroup **cg, psrun_error *err)
{
        *cg = NULL;
        clamp_rlimits(p);
        /* Whatever happens to the cgroup: the workspace is a tmpfs of its
         * size, and the timeout kills pid 1 of the sandbox's pid namespace,
         * which takes every process in it down (no cgroup needed). */
        p->rootless.disk = "tmpfs";
        p->rootless.timeout = "pid namespace";
        _cleanup_free_ char *delegated = NULL;
        const char *parent = cgroup_parent;
        if (!parent && cgroup_find_delegated(&delegated) > 0)
                parent = delegated;
        if (parent) {
                psrun_error cerr = {0};
                int r = cgroup_create(parent, &p->limits, cg, &cerr);
                if (r >= 0) {
                        p->rootless.memory = p->rootless.cpu = p->rootless.pids = "cgroup";
                        return 0;
                }
                /* A parent the caller named is never second-guessed. */
                if (cgroup_parent) {
                        *err = cerr;
                        return r;
                }
        }
        const char *asked = asked_limit(pol);
        if (asked && pol->limits == POLICY_LIMITS_STRICT)
                return psrun_error_set(err, EPERM,
                                       "limits: %s needs a cgroup, and this user has no delegated "
                                       "cgroup v2 subtree (cgroup v1 host, or no user@%u.service "
                                       "delegation): name one with --cgroup-parent, or set "
                                       "`limits: best_effort` for rlimits (docs/rootless.md)",
                                       asked, (unsigned) geteuid());
        /* Best effort: RLIMIT_AS bounds each process's address space (not
         * the sandbox's sum); RLIMIT_NPROC the processes of the command's
         * uid in the sandbox's user namespace, where the kernel counts them
         * apart from the user's own; RLIMIT_CPU each process's cpu seconds,
         * at most what cpu_limit cores would use in the whole timeout. */
        int r = 0;
        p->rootless.memory = p->rootless.pids = p->rootless.cpu = "not enforced";
        if (pol->memory_limit && (r = add_rlimit(p, RLIMIT_AS, pol->memory_limit, err)) >= 0)
                p->rootless.memory = "rlimit_as";
        if (r >= 0 && pol->pids_limit &&
            (r = add_rlimit(p, RLIMIT_NPROC, pol->pids_limit + 1, err)) >= 0)
                p->rootless.pids = "rlimit_nproc";
        if (r >= 0 && pol->cpu_limit > 0 && pol->timeout_ms) {
                uint64_t secs = (uint64_t) ceil(pol->cpu_limit * (double) pol->timeout_ms / 1000.0);
                if ((r = add_rlimit(p, RLIMIT_CPU, secs ? secs : 1, err)) >= 0)
                        p->rootless.cpu = "rlimit_cpu";
        }
        clamp_rlimits(p);
        return r;
}

/* name on $PATH (as podman finds pasta and slirp4netns), into buf. */
static bool find_on_path(const char *name, char *buf, size_t size)
{
        const char *path = getenv("PATH");
        if (!path || !*path)
                path = "/usr/bin:/bin";
        for (const char *d = path; *d;) {
                size_t len = strcspn(d, ":");
                if (len > 0 && len + strlen(name) + 2 <= size) {
                        snprintf(buf, size, "%.*s/%s", (int) len, d, name);
                        if (access(buf, X_OK) == 0)
                                return true;
                }
                d += len;
                if (*d == ':')
                        d++;
        }
        return false;
}

/* The router's maps and the sandbox's, relative to the router's ids: the
 * user is root of the router (so that it may use the user's cgroup and
 * files there), the sandbox's ids are those it would have had, one step
 * down. */
int rootless_nest_maps(const char *sandbox_map, unsigned me, bool subids, char *router,
                       size_t router_size, char *inner, size_t inner_size)
{
        unsigned long long in = 0, out = 0, count = 0;
        int end = 0;
        /* One line, as rootless_plan_identity writes it; one id is one id. */
        if (sscanf(sandbox_map, "%llu %llu %llu\n%n", &in, &out, &count, &end) != 3 || !end ||
            sandbox_map[end] != '\0' || count == 0 || count > ROOTLESS_ID_COUNT ||
            (!subids && count != 1))
                return -EINVAL;
        if (subids) {
                /* inside 0.. onto the router's 1.., which are the range. */
                snprintf(router, router_size, "0 %u 1\n1 %llu %llu\n", me, out, count);
                snprintf(inner, inner_size, "%llu 1 %llu\n", in, count);
        } else {
                snprintf(router, router_size, "0 %u 1\n", me);
                snprintf(inner, inner_size, "%llu 0 1\n", in);
        }
        return 0;
}

static bool is_loopback(const struct cidr *c)
{
        static const uint8_t v6_loopback[16] = {[15] = 1};
        return (c->family == AF_INET && c->addr[0] == 127) ||
               (c->family == AF_INET6 && memcmp(c->addr, v6_loopback, 16) == 0);
}

int rootless_plan_network(struct plan *p, psrun_error *err)
{
        if (!p->net.veth)
                return 0;
        const char *mode = p->net.mode == NETNS_MODE_FULL ? "full" : "restricted";
        /* pasta (Debian's and podman's default), else slirp4netns. */
        static const char *const links[] = {"pasta", "slirp4netns"};
        for (size_t i = 0; i < ARRAY_SIZE(links) && !p->rootless.link; i++)
                if (find_on_path(links[i], p->rootless.link_path, sizeof(p->rootless.link_path)))
                        p->rootless.link = links[i];
        if (!p->rootless.link)
                return psrun_error_set(err, ENOENT,
                                       "network: %s without root needs pasta on PATH: install "
                                       "the passt package (or slirp4netns) (docs/rootless.md)",
                                       mode);
        if (access("/dev/net/tun", R_OK | W_OK) < 0)
                return psrun_error_errno(err, errno,
                                         "network: %s without root needs /dev/net/tun readable "
                                         "and writable by this user, for %s (docs/rootless.md)",
                                         mode, p->rootless.link);
        for (size_t i = 0; i < p->net.n_upstream; i++)
                if (is_loopback(&p->net.upstream[i]))
                        return psrun_error_set(err, EOPNOTSUPP,
                                               "dns_upstream: the resolver on the host's loopback "
                                               "is out of reach without root (the router "
                                               "namespace has a loopback of its own): name a "
                                               "resolver's address (docs/rootless.md)");
        /* The host's own addresses: behind pasta or slirp4netns they are
         * destinations like any other, where root's table refuses the host
         * at input. */
        struct ifaddrs *ifa = NULL;
        if (getifaddrs(&ifa) < 0)
                return psrun_error_errno(err, errno, "network: the host's addresses");
        for (struct ifaddrs *i = ifa; i; i = i->ifa_next) {
                if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET)
                        continue;
                if (p->net.n_host4 == NETNS_MAX_HOST_ADDRS) {
                        freeifaddrs(ifa);
                        return psrun_error_set(err, E2BIG,
                                               "network: the host has more than %d IPv4 "
                                               "addresses, which a rootless sandbox must be kept "
                                               "from",
                                               NETNS_MAX_HOST_ADDRS);
                }
                p->net.host4[p->net.n_host4++] = ((struct sockaddr_in *) i->ifa_addr)->sin_addr;
        }
        freeifaddrs(ifa);
        /* pasta gives the router the host's address: a resolver there is
         * the router's own loopback's business, out of reach. */
        for (size_t i = 0; strcmp(p->rootless.link, "pasta") == 0 && i < p->net.n_upstream; i++)
                for (size_t k = 0; k < p->net.n_host4; k++)
                        if (p->net.upstream[i].family == AF_INET &&
                            !memcmp(p->net.upstream[i].addr, &p->net.host4[k], 4))
                                return psrun_error_set(err, EOPNOTSUPP,
                                                       "dns_upstream: a resolver on an address "
                                                       "of the host's own is out of reach "
                                                       "without root (the router namespace "
                                                       "has the host's address as its own): "
                                                       "name another (docs/rootless.md)");
        char inner_uid[sizeof(p->uid_map)], inner_gid[sizeof(p->gid_map)];
        if (rootless_nest_maps(p->uid_map, (unsigned) geteuid(), p->rootless.subids,
                               p->rootless.router_uid_map, sizeof(p->rootless.router_uid_map),
                               inner_uid, sizeof(inner_uid)) < 0 ||
            rootless_nest_maps(p->gid_map, (unsigned) getegid(), p->rootless.subids,
                               p->rootless.router_gid_map, sizeof(p->rootless.router_gid_map),
                               inner_gid, sizeof(inner_gid)) < 0)
                return psrun_error_set(err, EINVAL, "identity: a map psrun cannot nest");
        snprintf(p->uid_map, sizeof(p->uid_map), "%s", inner_uid);
        snprintf(p->gid_map, sizeof(p->gid_map), "%s", inner_gid);
        p->rootless.router = true;
        return 0;
}
