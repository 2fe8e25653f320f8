/* SPDX-License-Identifier: MIT */
/*
 * The router of a rootless sandbox's network (runtime/router.h).
 *
 *   psrun (the user)            router (root of its user namespace R)
 *     fork ──────────────────►  unshare(user, net): R and its netns
 *     ◄──── 'U' ──────────────
 *     R's maps (newuidmap, or one id)
 *     pasta --userns --netns of the router (our child, death signal)
 *     'M' ───────────────────►  the sandbox's netns (R owns it)
 *                               table, forwarding, veth, DNS proxy
 *                               clone3(CLONE_PARENT): the sandbox, into it
 *                               the sandbox's maps (below R's ids)
 *     ◄──── 'S' + pidfd ──────
 *     (the sandbox builds its root)  waits for pasta's default route
 *     ◄──── 'L' ──────────────  before the command is released
 *     ... supervises the sandbox as its parent ...
 *     'D' ───────────────────►  proxy stopped, table deleted
 *     ◄──── counts ───────────
 *     EOF ───────────────────►  exits; pasta killed, both reaped
 *
 * The link is pasta (package passt), else slirp4netns where only that is
 * on $PATH; "pasta" below stands for either.
 *
 * The router is a fork of psrun: it runs psrun's network code unchanged
 * (netns/), with the plan it inherited. Its death signal, and pasta's,
 * take both down with psrun (kill -9 too); the namespaces go with their
 * last process, and no file names them: nothing is left for `psrun gc`.
 */
#include "runtime/router.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/clock.h"
#include "common/clone.h"
#include "common/fdpass.h"
#include "common/fileio.h"
#include "netns/netlink.h"
#include "netns/netns.h"
#include "runtime/cgroup/cgroup.h"
#include "runtime/child.h"
#include "runtime/plan.h"
#include "runtime/rootless.h"

/* pasta's link must be up within this, and the router answer within
 * this plus its own work. */
#define ROUTER_LINK_TIMEOUT_MS  5000
#define ROUTER_REPLY_TIMEOUT_MS 10000
#define ROUTER_EXIT_TIMEOUT_MS  2000

enum router_kind {
        ROUTER_UNSHARED = 'U', /* R exists: map it */
        ROUTER_MAPPED = 'M',   /* R is mapped and pasta started: go on */
        ROUTER_STARTED = 'S',  /* the sandbox: its pid, its pidfd attached */
        ROUTER_LINKED = 'L',   /* pasta's link is up: the command may start */
        ROUTER_DOWN = 'D',     /* stop the proxy, delete the table; the counts back */
};

struct router_reply {
        char kind;
        int r; /* 0, or -errno with err */
        pid_t pid;
        psrun_error err;
};

struct router {
        pid_t pid; /* the router, our child */
        int pidfd;
        int ctl; /* our end of its control socket */
        /* pasta (or slirp4netns) on the router's namespace, our child; 0:
         * none */
        pid_t link;
        int link_pidfd;
        int link_log;     /* a memfd: its stderr */
        const char *name; /* "pasta", "slirp4netns" */
        bool linked;
        bool down;
};

static void send_reply(int ctl, char kind, int r, pid_t pid, const psrun_error *err, int fd)
{
        struct router_reply rep = {.kind = kind, .r = r, .pid = pid};
        if (err && r < 0)
                rep.err = *err;
        (void) fdpass_send(ctl, &rep, sizeof(rep), &fd, fd >= 0 ? 1 : 0, 0);
}

/* One byte from the parent; 0 at EOF (the parent gave up or died). */
static char read_order(int ctl)
{
        char c = 0;
        ssize_t n;
        while ((n = recv(ctl, &c, 1, 0)) < 0 && errno == EINTR)
                ;
        return n == 1 ? c : 0;
}

static void find_default(const struct nlmsghdr *h, void *arg)
{
        const struct rtmsg *rt = NLMSG_DATA(h);
        if (h->nlmsg_type == RTM_NEWROUTE && h->nlmsg_len >= NLMSG_LENGTH(sizeof(*rt)) &&
            rt->rtm_family == AF_INET && rt->rtm_dst_len == 0 && rt->rtm_table == RT_TABLE_MAIN)
                *(bool *) arg = true;
}

static bool have_default_route(void)
{
        _cleanup_close_ int fd = nl_open(NETLINK_ROUTE);
        _cleanup_(nlbuf_free) struct nlbuf b = NLBUF_INIT;
        struct rtmsg rt = {.rtm_family = AF_INET};
        nl_end(&b, nl_begin(&b, RTM_GETROUTE, NLM_F_DUMP, false, &rt, sizeof(rt)));
        bool found = false;
        return fd >= 0 && nl_dump(fd, &b, find_default, &found) >= 0 && found;
}

/* pasta configures the router's namespace as the host's (its address, its
 * default route; slirp4netns its own 10.0.2.100 and route) once it is
 * attached: wait for the route. The parent
 * closes ctl if pasta dies meanwhile. */
static int wait_link(int ctl, const char *name, psrun_error *err)
{
        uint64_t end = monotonic_ms() + ROUTER_LINK_TIMEOUT_MS;
        while (!have_default_route()) {
                struct pollfd p = {ctl, POLLIN, 0};
                if (monotonic_ms() >= end)
                        return psrun_error_set(err, ETIMEDOUT,
                                               "network: %s: no default route in the router "
                                               "namespace after %d s (has the host one?)",
                                               name, ROUTER_LINK_TIMEOUT_MS / 1000);
                if (poll(&p, 1, 2) > 0)
                        return psrun_error_set(err, ECANCELED, "network: router: cancelled");
        }
        return 0;
}

static void must_setns(int fd)
{
        /* A thread of the router left in the sandbox's namespace would
         * serve the proxy from there: never. */
        if (setns(fd, CLONE_NEWNET) < 0)
                abort(); /* layering: fail closed */
}

/* The sandbox, cloned from the sandbox's network namespace (not a new one)
 * as psrun's child, into cg. */
static pid_t clone_sandbox(const struct plan *plan, struct cgroup *cg, int router_ns,
                           int sandbox_ns, int *pidfd)
{
        int cgfd = cg ? cgroup_clone_fd(cg) : -1;
        struct clone_args_v2 args = {
                .flags = (plan->clone_flags & ~(uint64_t) CLONE_NEWNET) | CLONE_PARENT |
                         CLONE_PIDFD | (cgfd >= 0 ? CLONE_INTO_CGROUP : 0),
                .pidfd = (uint64_t) (uintptr_t) pidfd,
                /* CLONE_PARENT: the exit signal is ours, SIGCHLD to psrun. */
                .exit_signal = 0,
                .cgroup = cgfd >= 0 ? (uint64_t) cgfd : 0,
        };
        must_setns(sandbox_ns);
        pid_t pid = (pid_t) syscall(SYS_clone3, &args, sizeof(args));
        if (pid != 0) {
                int e = errno;
                must_setns(router_ns);
                errno = e;
        }
        return pid;
}

/* The sandbox's maps, relative to ours (we are root of R, the parent of
 * its user namespace). */
static int write_sandbox_maps(pid_t pid, const struct plan *plan, psrun_error *err)
{
        int r = 0;
        if (plan->rootless.setgroups_deny && (r = write_proc_file(pid, "setgroups", "deny")) < 0)
                return psrun_error_errno(err, r, "identity: write setgroups of the sandbox");
        if ((r = write_proc_file(pid, "uid_map", plan->uid_map)) < 0)
                return psrun_error_errno(err, r, "identity: write uid_map of the sandbox");
        if ((r = write_proc_file(pid, "gid_map", plan->gid_map)) < 0)
                return psrun_error_errno(err, r, "identity: write gid_map of the sandbox");
        return 0;
}

static int open_own_netns(psrun_error *err)
{
        int fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
        return fd >= 0 ? fd : psrun_error_errno(err, errno, "network: router: its namespace");
}

/* Serves until the parent closes ctl: 'D' takes the network down and
 * sends the counts. */
static void serve(int ctl, struct netns_live *live)
{
        char c;
        while ((c = read_order(ctl)) != 0) {
                if (c != ROUTER_DOWN)
                        continue;
                _cleanup_free_ struct netns_stats *stats = calloc(1, sizeof(*stats));
                netns_down(live, stats);
                if (stats)
                        (void) send(ctl, stats, sizeof(*stats), MSG_NOSIGNAL);
                else
                        (void) send(ctl, "", 1, MSG_NOSIGNAL);
        }
}

static _Noreturn void router_main(const struct plan *plan, struct cgroup *cg,
                                  const struct rootfs_sources *sources, int sync_child, int ctl,
                                  pid_t parent)
{
        psrun_error err = {0};
        /* Only psrun's death (or its EOF) ends us; the caller's terminal
         * signals are psrun's to forward, not ours to die of. */
        sigset_t all;
        sigfillset(&all);
        sigprocmask(SIG_BLOCK, &all, NULL);
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent)
                _exit(1);
        if (unshare(CLONE_NEWUSER | CLONE_NEWNET) < 0) {
                int r = psrun_error_errno(&err, errno,
                                          "network: router: a user and network namespace");
                send_reply(ctl, ROUTER_UNSHARED, r, 0, &err, -1);
                _exit(1);
        }
        send_reply(ctl, ROUTER_UNSHARED, 0, 0, NULL, -1);
        if (read_order(ctl) != ROUTER_MAPPED)
                _exit(1);

        /* Ours to fill (the NFLOG group, in this namespace). */
        struct netns_plan net = plan->net;
        struct netns_live live = NETNS_LIVE_INIT;
        int router_ns = -1, sandbox_ns = -1, pidfd = -1;
        pid_t pid = -1;
        int r = netns_claim_nflog(&net, &err);
        if (r >= 0)
                r = router_ns = open_own_netns(&err);
        /* The sandbox's network namespace, ours (R owns it), made here and
         * left at once. */
        if (r >= 0 && unshare(CLONE_NEWNET) < 0)
                r = psrun_error_errno(&err, errno, "network: router: the sandbox's namespace");
        if (r >= 0) {
                r = sandbox_ns = open_own_netns(&err);
                must_setns(router_ns);
        }
        /* The whole network before the sandbox exists. */
        if (r >= 0)
                r = netns_up_ns(&net, sandbox_ns, &live, &err);
        if (r >= 0) {
                pid = clone_sandbox(plan, cg, router_ns, sandbox_ns, &pidfd);
                if (pid == 0)
                        child_main(plan, sync_child, sources && sources->n ? sources : NULL);
                if (pid < 0)
                        r = psrun_error_errno(&err, errno, "clone3");
        }
        /* Only the sandbox holds its end of the sync socket: psrun reads
         * its EOF as the sandbox's. */
        close(sync_child);
        if (r >= 0)
                r = write_sandbox_maps(pid, plan, &err);
        /* A sandbox cloned and then failed is psrun's child still: its pid
         * and pidfd go back with the error, for psrun to reap it. */
        if (r < 0 && pidfd >= 0)
                (void) syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
        send_reply(ctl, ROUTER_STARTED, r, pid > 0 ? pid : 0, &err, pidfd);
        /* The sandbox builds its root meanwhile; its command waits for
         * this (router_wait_linked). */
        if (r >= 0) {
                psrun_error lerr = {0};
                int l = wait_link(ctl, plan->rootless.link, &lerr);
                send_reply(ctl, ROUTER_LINKED, l, 0, &lerr, -1);
                serve(ctl, &live);
        }
        netns_live_close(&live);
        netns_release(&net);
        _exit(r < 0);
}

/* Waits for the router's reply of kind; pasta dying meanwhile (when it
 * runs) fails it with pasta's first line. */
static int wait_reply(struct router *rt, char kind, struct router_reply *rep, int *fd,
                      psrun_error *err);

static bool read_link_line(struct router *rt, char *line, size_t size)
{
        char buf[1024];
        ssize_t n = rt->link_log >= 0 ? pread(rt->link_log, buf, sizeof(buf) - 1, 0) : -1;
        if (n <= 0)
                return false;
        buf[n] = '\0';
        /* The last line says why it ended: pasta tries syslog first and
         * says so ("Failed to send ..."), slirp4netns tells its steps. */
        bool found = false;
        for (char *s = buf, *e; *s; s = e + (*e != '\0')) {
                e = s + strcspn(s, "\n");
                if (e > s && strncmp(s, "Failed to send ", 15) != 0) {
                        snprintf(line, size, "%.*s", (int) (e - s), s);
                        found = true;
                }
        }
        return found;
}

static int link_failed(struct router *rt, psrun_error *err)
{
        char line[256];
        siginfo_t si = {0};
        (void) waitid((idtype_t) P_PIDFD, (id_t) rt->link_pidfd, &si, WEXITED);
        rt->link = 0;
        if (read_link_line(rt, line, sizeof(line)))
                return psrun_error_set(err, EPROTO, "network: %s: %s", rt->name, line);
        return psrun_error_set(err, EPROTO, "network: %s %s with status %d and no message",
                               rt->name, si.si_code == CLD_EXITED ? "exited" : "was killed",
                               si.si_status);
}

static int wait_reply(struct router *rt, char kind, struct router_reply *rep, int *fd,
                      psrun_error *err)
{
        uint64_t end = monotonic_ms() + ROUTER_REPLY_TIMEOUT_MS;
        for (;;) {
                uint64_t now = monotonic_ms();
                if (now >= end)
                        return psrun_error_set(err, ETIMEDOUT, "network: router: no answer in %d s",
                                               ROUTER_REPLY_TIMEOUT_MS / 1000);
                struct pollfd p[2] = {{rt->ctl, POLLIN, 0},
                                      {rt->link ? rt->link_pidfd : -1, POLLIN, 0}};
                int n = poll(p, 2, (int) (end - now));
                if (n < 0 && errno != EINTR)
                        return psrun_error_errno(err, errno, "network: router: poll");
                if (n <= 0)
                        continue;
                if (p[0].revents) {
                        struct fdpass_in in;
                        ssize_t k = fdpass_recv(rt->ctl, rep, sizeof(*rep), &in, 0);
                        if (k == (ssize_t) sizeof(*rep) && rep->kind == kind) {
                                /* The fd comes with an error too (a sandbox
                                 * to reap). */
                                if (fd)
                                        *fd = in.n_fds ? in.fds[0] : -1;
                                fdpass_close(&in, fd && in.n_fds ? 1 : 0);
                                if (rep->r < 0) {
                                        *err = rep->err;
                                        return rep->r;
                                }
                                return 0;
                        }
                        if (k >= 0)
                                fdpass_close(&in, 0);
                        /* The router died: pasta's failure explains it, if any. */
                        if (rt->link && poll(&p[1], 1, 50) > 0)
                                return link_failed(rt, err);
                        return psrun_error_set(err, EPROTO, "network: router: ended during set-up");
                }
                if (p[1].revents)
                        return link_failed(rt, err);
        }
}

/* The link's command line: pasta or slirp4netns on the namespaces given
 * as paths. Neither forwards a port of the host's in, nor maps the host's
 * loopback (pasta: the gateway's address) into the namespace. */
static void link_argv(const char *name, char *userns, char *netns, char **argv)
{
        if (strcmp(name, "pasta") == 0) {
                /* -f: our child, not a daemon; no port forwarded either way;
                 * no DHCP, NDP, RA (pasta configures the namespace itself). */
                char *const a[] = {"pasta",       "-f",        "-q",       "--config-net",
                                   "-t",          "none",      "-u",       "none",
                                   "-T",          "none",      "-U",       "none",
                                   "--no-map-gw", "--no-dhcp", "--no-ndp", "--no-dhcpv6",
                                   "--no-ra",     "--userns",  userns,     "--netns",
                                   netns,         NULL};
                memcpy(argv, a, sizeof(a));
                return;
        }
        /* Its DNS forwarder (10.0.2.3) off: the proxy is the resolver. */
        char *const a[] = {"slirp4netns", "--configure", "--mtu=65520", "--disable-host-loopback",
                           "--disable-dns",
                           /* Its own filter (--enable-sandbox needs root). */
                           "--enable-seccomp", "--netns-type=path", "--userns-path", userns, netns,
                           "tap0", NULL};
        memcpy(argv, a, sizeof(a));
}

/* The link, attached to the router's namespaces, as our child: it dies
 * with psrun (the death signal survives its exec, it is not setuid). */
static int start_link(struct router *rt, const struct plan *plan, psrun_error *err)
{
        rt->name = plan->rootless.link;
        /* The router's namespaces as fds of ours, opened before it moves
         * (it makes the sandbox's namespace on its main thread, which
         * /proc/PID/ns/net follows): the link opens them by these numbers. */
        char path[64];
        snprintf(path, sizeof(path), "/proc/%d/ns/user", (int) rt->pid);
        _cleanup_close_ int user_fd = open(path, O_RDONLY | O_CLOEXEC);
        snprintf(path, sizeof(path), "/proc/%d/ns/net", (int) rt->pid);
        _cleanup_close_ int net_fd = open(path, O_RDONLY | O_CLOEXEC);
        if (user_fd < 0 || net_fd < 0)
                return psrun_error_errno(err, errno, "network: %s: the router's namespaces",
                                         rt->name);
        char userns[64], netns[64];
        snprintf(userns, sizeof(userns), "/proc/self/fd/%d", user_fd);
        snprintf(netns, sizeof(netns), "/proc/self/fd/%d", net_fd);
        char *argv[32];
        link_argv(rt->name, userns, netns, argv);
        rt->link_log = memfd_create("psrun-link", MFD_CLOEXEC);
        if (rt->link_log < 0)
                return psrun_error_errno(err, errno, "network: %s: its log", rt->name);
        int devnull = open("/dev/null", O_RDWR | O_CLOEXEC);
        if (devnull < 0)
                return psrun_error_errno(err, errno, "network: %s: /dev/null", rt->name);
        pid_t parent = getpid();
        pid_t pid = fork();
        if (pid == 0) {
                /* Async-signal-safe only, until the exec. */
                if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent ||
                    dup2(devnull, 0) < 0 || dup2(devnull, 1) < 0 || dup2(rt->link_log, 2) < 0 ||
                    fcntl(user_fd, F_SETFD, 0) < 0 || fcntl(net_fd, F_SETFD, 0) < 0)
                        _exit(127);
                sigset_t none;
                sigemptyset(&none);
                sigprocmask(SIG_SETMASK, &none, NULL);
                execv(plan->rootless.link_path, argv);
                _exit(127);
        }
        close(devnull);
        if (pid < 0)
                return psrun_error_errno(err, errno, "network: %s: fork", rt->name);
        rt->link = pid;
        rt->link_pidfd = (int) syscall(SYS_pidfd_open, pid, 0);
        if (rt->link_pidfd < 0) {
                int e = errno;
                kill(pid, SIGKILL);
                (void) waitpid(pid, NULL, 0);
                rt->link = 0;
                return psrun_error_errno(err, e, "network: %s: pidfd", rt->name);
        }
        return 0;
}

static int map_router(struct router *rt, const struct plan *plan, psrun_error *err)
{
        if (plan->rootless.subids)
                return idmap_apply_maps(rt->pid, plan->rootless.router_uid_map,
                                        plan->rootless.router_gid_map, err);
        int r = write_proc_file(rt->pid, "setgroups", "deny");
        if (r >= 0)
                r = write_proc_file(rt->pid, "uid_map", plan->rootless.router_uid_map);
        if (r >= 0)
                r = write_proc_file(rt->pid, "gid_map", plan->rootless.router_gid_map);
        return r < 0 ? psrun_error_errno(err, r, "identity: the router's maps") : 0;
}

/* Kill and reap a child of ours by its pidfd, after `grace_ms` for it to
 * end by itself. */
static void reap(pid_t pid, int pidfd, int grace_ms)
{
        if (pid <= 0)
                return;
        struct pollfd p = {pidfd, POLLIN, 0};
        if (pidfd < 0 || grace_ms == 0 || poll(&p, 1, grace_ms) <= 0)
                (void) kill(pid, SIGKILL);
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
}

int router_clone(const struct plan *plan, struct cgroup *cg, const struct rootfs_sources *sources,
                 int sync_parent, int sync_child, struct router **ret, pid_t *pid, int *pidfd,
                 psrun_error *err)
{
        *ret = NULL;
        struct router *rt = calloc(1, sizeof(*rt));
        if (!rt)
                return psrun_error_errno(err, ENOMEM, "network: router");
        *rt = (struct router){.pidfd = -1, .ctl = -1, .link_pidfd = -1, .link_log = -1};
        int sv[2];
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
                free(rt);
                return psrun_error_errno(err, errno, "network: router: socketpair");
        }
        pid_t parent = getpid();
        /* fork, not clone3: the router runs psrun's code (malloc, threads),
         * which glibc's fork makes safe in a threaded caller. */
        rt->pid = fork();
        if (rt->pid == 0) {
                close(sv[0]);
                close(sync_parent);
                router_main(plan, cg, sources, sync_child, sv[1], parent);
        }
        close(sv[1]);
        rt->ctl = sv[0];
        if (rt->pid < 0) {
                int e = errno;
                router_close(rt);
                return psrun_error_errno(err, e, "network: router: fork");
        }
        rt->pidfd = (int) syscall(SYS_pidfd_open, rt->pid, 0);
        struct router_reply rep;
        int r = rt->pidfd < 0 ? psrun_error_errno(err, errno, "network: router: pidfd") : 0;
        if (r >= 0)
                r = wait_reply(rt, ROUTER_UNSHARED, &rep, NULL, err);
        if (r >= 0)
                r = map_router(rt, plan, err);
        if (r >= 0)
                r = start_link(rt, plan, err);
        if (r >= 0 && send(rt->ctl, &(char){ROUTER_MAPPED}, 1, MSG_NOSIGNAL) != 1)
                r = psrun_error_errno(err, errno, "network: router: release");
        int fd = -1;
        rep.pid = 0;
        if (r >= 0)
                r = wait_reply(rt, ROUTER_STARTED, &rep, &fd, err);
        if (r >= 0 && fd < 0)
                r = psrun_error_set(err, EPROTO, "network: router: no pidfd of the sandbox");
        if (r < 0) {
                /* Killed by the router already; ours to reap. */
                if (fd >= 0 && rep.pid > 0)
                        reap(rep.pid, fd, 0);
                safe_close(fd);
                router_close(rt);
                return r;
        }
        *pid = rep.pid;
        *pidfd = fd;
        *ret = rt;
        return 0;
}

int router_wait_linked(struct router *rt, psrun_error *err)
{
        if (!rt || rt->linked)
                return 0;
        struct router_reply rep;
        int r = wait_reply(rt, ROUTER_LINKED, &rep, NULL, err);
        rt->linked = r >= 0;
        return r;
}

void router_down(struct router *rt, struct netns_stats *stats)
{
        if (!rt || rt->down)
                return;
        rt->down = true;
        if (send(rt->ctl, &(char){ROUTER_DOWN}, 1, MSG_NOSIGNAL) != 1)
                return;
        _cleanup_free_ struct netns_stats *got = calloc(1, sizeof(*got));
        /* The counts, past a ROUTER_LINKED not read yet (the sandbox
         * ended before its command started). */
        uint64_t end = monotonic_ms() + ROUTER_EXIT_TIMEOUT_MS;
        while (got) {
                uint64_t now = monotonic_ms();
                struct pollfd p = {rt->ctl, POLLIN, 0};
                if (now >= end || poll(&p, 1, (int) (end - now)) <= 0)
                        return;
                ssize_t n = recv(rt->ctl, got, sizeof(*got), 0);
                if (n <= 0)
                        return;
                if (n == (ssize_t) sizeof(*got)) {
                        if (stats)
                                *stats = *got;
                        return;
                }
        }
}

void router_close(struct router *rt)
{
        if (!rt)
                return;
        /* pasta first (the sandbox is gone: nothing needs its link), to
         * die while the router, at our EOF, stops the proxy, deletes the
         * table and exits. */
        if (rt->link > 0)
                (void) kill(rt->link, SIGKILL);
        rt->ctl = safe_close(rt->ctl);
        reap(rt->pid, rt->pidfd, ROUTER_EXIT_TIMEOUT_MS);
        reap(rt->link, rt->link_pidfd, 0);
        safe_close(rt->pidfd);
        safe_close(rt->link_pidfd);
        safe_close(rt->link_log);
        free(rt);
}
