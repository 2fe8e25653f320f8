/* SPDX-License-Identifier: MIT */
/*
 * Everything between clone3() and execve(). Rules (DESIGN.md):
 *  - async-signal-safe only: no malloc, stdio, locks or logging — psrun may be
 *    embedded in a multi-threaded process, whose other threads' locks are
 *    frozen in this copy of its memory;
 *  - the plan is read, never changed; every string was made by the parent;
 *  - a failing step sends {step, errno, index} on the sync socket and exits;
 *  - seccomp is the last step before execve(): it would block the setup.
 */
#include "runtime/child.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/capability.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>
#include <linux/openat2.h>
#include <sys/mount.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "common/signals.h"
#include "policy/seccomp-notify.h"
#include "runtime/pty.h"

static const char *const step_names[_CHILD_STEP_MAX] = {
        [CHILD_STEP_SYNC] = "sync",
        [CHILD_STEP_JOIN] = "namespaces: join",
        [CHILD_STEP_PRIVATE_MOUNTS] = "namespaces: a private copy of the session's mounts",
        [CHILD_STEP_HOSTNAME] = "hostname",
        [CHILD_STEP_DOMAINNAME] = "domainname",
        [CHILD_STEP_LOOPBACK] = "network: bring up lo",
        [CHILD_STEP_ROOT_PRIVATE] = "rootfs: make mounts private",
        [CHILD_STEP_ROOT_TMPFS] = "rootfs: mount the new root",
        [CHILD_STEP_ROOT_BUNDLE] = "rootfs: bind the bundle's root",
        [CHILD_STEP_PIVOT] = "rootfs: pivot_root",
        [CHILD_STEP_ROOT_PROPAGATION] = "rootfs: rootfsPropagation",
        [CHILD_STEP_MOUNT] = "rootfs",
        [CHILD_STEP_CONSOLE] = "console",
        [CHILD_STEP_RLIMIT] = "rlimit",
        [CHILD_STEP_TIMENS] = "time namespace",
        [CHILD_STEP_PERSONALITY] = "personality",
        [CHILD_STEP_ROOT_ID] = "identity: become root of the user namespace",
        [CHILD_STEP_USER_QUOTAS] = "user namespace quotas",
        [CHILD_STEP_INIT] = "init",
        [CHILD_STEP_FORK] = "init: fork",
        [CHILD_STEP_SIGNALS] = "signals",
        [CHILD_STEP_BOUNDING] = "capabilities: bounding set",
        [CHILD_STEP_GROUPS] = "identity: setgroups",
        [CHILD_STEP_SETGID] = "identity: setgid",
        [CHILD_STEP_SETUID] = "identity: setuid",
        [CHILD_STEP_CAPS] = "capabilities",
        [CHILD_STEP_CHDIR] = "chdir",
        [CHILD_STEP_NO_NEW_PRIVS] = "no_new_privs",
        [CHILD_STEP_APPARMOR] = "apparmor",
        [CHILD_STEP_LANDLOCK] = "landlock",
        [CHILD_STEP_LOOKUP] = "exec",
        [CHILD_STEP_CLOSE_FDS] = "close inherited fds",
        [CHILD_STEP_WAIT_START] = "wait for start",
        [CHILD_STEP_SECCOMP] = "seccomp",
        [CHILD_STEP_EXEC] = "exec",
        [CHILD_STEP_CGROUP] = "cgroup: join the exec's cgroups",
        [CHILD_STEP_OOM_SCORE] = "oom_score_adj",
        [CHILD_STEP_REQUEST] = "the exec's request",
};

const char *child_step_name(enum child_step step)
{
        return (unsigned) step < _CHILD_STEP_MAX && step_names[step] ? step_names[step] : "setup";
}

struct child_ctx {
        const struct plan *plan;
        int sync_fd;
        uint32_t index; /* set by a failing step that has parts */
        int *host_fds;  /* per mount step: detached copy of a host bind source, or -1 */
        const struct rootfs_sources *sources; /* the parent's (launch_clone), or NULL */
        int rootfs_fd;     /* PLAN_ROOT_BUNDLE: O_PATH fd of the bundle's root, then its copy */
        int console_slave; /* -1: no terminal */
        char *exec_path;   /* PATH_MAX bytes: argv[0] as found by step_lookup */
        int listener;      /* the seccomp listener, until it is handed over; -1: none */
        const struct child_attach *attach; /* plan->zygote: its cgroups to join */
};

/*
 * glibc's set*id() wrappers make every thread of the process change ids with
 * it, by signalling them and waiting. The child of a multi-threaded psrun
 * embedder still has those threads in glibc's list, but not in reality: the
 * wrapper would wait forever. The raw syscalls change this process only,
 * which is what the child wants.
 */
static long sys_setresuid(uid_t u)
{
        return syscall(SYS_setresuid, u, u, u);
}

static long sys_setresgid(gid_t g)
{
        return syscall(SYS_setresgid, g, g, g);
}

static void send_msg(int fd, const struct child_msg *m)
{
        /* MSG_NOSIGNAL: after READY nobody may be reading any more. */
        ssize_t n;
        do
                n = send(fd, m, sizeof(*m), MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
}

static _Noreturn void fail(struct child_ctx *c, enum child_step step, int r, int exit_code)
{
        struct child_msg m = {
                .kind = CHILD_MSG_ERROR,
                .step = step,
                .err = r < 0 ? -r : r,
                .index = c->index,
        };
        send_msg(c->sync_fd, &m);
        _exit(exit_code);
}

/* ---- what the sandbox sees of psrun ---- */

/* arg_start and arg_end of this process, fields 48 and 49 of
 * /proc/self/stat, parsed by hand (no stdio here). */
static int read_arg_area(unsigned long *start, unsigned long *end)
{
        char buf[2048];
        int fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        ssize_t n = read(fd, buf, sizeof(buf) - 1);
        int r = n < 0 ? -errno : 0;
        close(fd);
        if (r < 0)
                return r;
        buf[n] = '\0';
        /* The command name (field 2) may hold spaces and ')': skip past its
         * last ')'. */
        const char *p = strrchr(buf, ')');
        if (!p)
                return -EPROTO;
        unsigned long *want[] = {start, end};
        int field = 2;
        for (p++; *p && field < 49;) {
                while (*p == ' ')
                        p++;
                field++;
                unsigned long v = 0;
                for (; *p >= '0' && *p <= '9'; p++)
                        v = v * 10 + (unsigned long) (*p - '0');
                while (*p && *p != ' ')
                        p++;
                if (field >= 48)
                        *want[field - 48] = v;
        }
        return field == 49 ? 0 : -EPROTO;
}

static int step_proctitle(struct child_ctx *c)
{
        /* /proc/PID/cmdline is readable by every process that can see us,
         * and ours is the host's `psrun ...` command line: policy paths,
         * mount sources, the bundle, the binary's path. This copy of the
         * memory is ours alone (no CLONE_VM), so the arguments are wiped and
         * a neutral name written. The last byte is left non-NUL, so that the
         * kernel reads up to the first NUL (its setproctitle rule): "init". */
        static const char title[] = "init";
        unsigned long start = 0, end = 0;
        int r = read_arg_area(&start, &end);
        if (r < 0)
                return r;
        if (end <= start)
                return 0;
        char *area = (char *) start;
        size_t len = end - start;
        memset(area, 0, len);
        if (len < sizeof(title))
                return 0;
        memcpy(area, title, sizeof(title));
        if (len > sizeof(title))
                area[len - 1] = ' ';
        return 0;
}

static int step_oom_score(struct child_ctx *c)
{
        /* A session's execs are the OOM killer's first choice, init its
         * last (runtime/session-supervisor-backends.c); raising one's own
         * score needs no privilege. */
        const char *v = c->plan->oom_score_adj;
        if (!v)
                return 0;
        int fd = open("/proc/self/oom_score_adj", O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int r = write_all(fd, v, strlen(v));
        close(fd);
        return r;
}

static int step_attach_self(struct child_ctx *c)
{
        /* A zygote is made while its supervisor is idle and then left
         * alone: it writes itself ("0") into the hierarchies clone3 could
         * not place it in (v1), with psrun's own ids, before it joins
         * anything. The write waits for the kernel's cgroup lock, which on
         * v1 can take milliseconds: here, not in the supervisor. */
        const struct child_attach *a = c->attach;
        for (size_t i = 0; a && i < a->n; i++) {
                ssize_t n;
                do
                        n = write(a->fds[i], "0", 1);
                while (n < 0 && errno == EINTR);
                if (n != 1) {
                        c->index = (uint32_t) i;
                        return n < 0 ? -errno : -EIO;
                }
                close(a->fds[i]);
        }
        return 0;
}

static int step_not_dumpable(struct child_ctx *c)
{
        /* Until execve this process holds psrun's host fds and runs psrun's
         * binary: a process of the container (the same uid when there is no
         * user namespace) must not open /proc/PID/fd/N, /proc/PID/cwd or
         * /proc/PID/exe of it. execve makes the command dumpable again. */
        return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 ? -errno : 0;
}

/* ---- namespaces set up by the init process ---- */

static int step_join(struct child_ctx *c)
{
        /* The plan lists the user namespace first: entering it first gives
         * the rights to enter the ones it owns. */
        const struct plan *p = c->plan;
        for (size_t i = 0; i < p->n_joins; i++) {
                if (setns(p->joins[i].fd, p->joins[i].type) < 0) {
                        c->index = (uint32_t) i;
                        return -errno;
                }
                /* A mount namespace joined by path: the root is built in a
                 * private copy of it, never in it (nor in the host's). */
                if (p->joins[i].type == CLONE_NEWNS &&
                    (unshare(CLONE_NEWNS) < 0 ||
                     mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)) {
                        c->index = (uint32_t) i;
                        return -errno;
                }
        }
        if (p->join_pidfd >= 0 && p->join_flags && setns(p->join_pidfd, (int) p->join_flags) < 0) {
                c->index = UINT32_MAX;
                return -errno;
        }
        return 0;
}

static int step_private_mounts(struct child_ctx *c)
{
        /* Still psrun's ids and user namespace: the copy belongs to it, so
         * the sandbox's processes (in the sandbox's user namespace, with no
         * capabilities) cannot change it, and the sandbox's namespace quota
         * (0) is not asked. step_join enters the rest afterwards. */
        const struct plan *p = c->plan;
        if (p->private_resolv_fd < 0)
                return 0;
        if (setns(p->join_pidfd, CLONE_NEWNS) < 0 || unshare(CLONE_NEWNS) < 0)
                return -errno;
        /* The target is resolved inside the sandbox's root, following no
         * link that its code may have planted there. */
        int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return -errno;
        struct open_how how = {
                .flags = O_PATH | O_CLOEXEC,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
        };
        int target = (int) syscall(SYS_openat2, root, "etc/resolv.conf", &how, sizeof(how));
        int r = target < 0 ? -errno : 0;
        close(root);
        if (r < 0)
                return r;
        if (move_mount(p->private_resolv_fd, "", target, "",
                       MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH) < 0)
                r = -errno;
        close(target);
        return r;
}

static int step_cgroupns(struct child_ctx *c)
{
        /* After the joins: the namespace belongs to the user namespace the
         * child ends up in. The parent attached us to our cgroups already,
         * so they are the namespace's root (runtime/launch.c). */
        if (!c->plan->unshare_cgroupns)
                return 0;
        return unshare(CLONE_NEWCGROUP) < 0 ? -errno : 0;
}

static int step_hostname(struct child_ctx *c)
{
        const char *h = c->plan->hostname;
        if (h && sethostname(h, strlen(h)) < 0)
                return -errno;
        return 0;
}

static int step_domainname(struct child_ctx *c)
{
        const char *d = c->plan->domainname;
        if (d && setdomainname(d, strlen(d)) < 0)
                return -errno;
        return 0;
}

static int step_loopback(struct child_ctx *c)
{
        if (!c->plan->loopback_up)
                return 0;
        _cleanup_close_ int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        struct ifreq ifr = {0};
        memcpy(ifr.ifr_name, "lo", 3);
        if (ioctl(fd, SIOCGIFFLAGS, &ifr) < 0)
                return -errno;
        ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
        if (ioctl(fd, SIOCSIFFLAGS, &ifr) < 0)
                return -errno;
        return 0;
}

static int step_open_sources(struct child_ctx *c)
{
        /* The host's bind sources and the config's device nodes were opened
         * by the parent, with psrun's own ids (rootfs/sources.c): ours are
         * the user namespace's by now. What is left is cloning the nodes,
         * from the tmpfs they were made in, while this mount namespace is
         * still a copy of the host's. */
        const struct rootfs_plan *rp = &c->plan->rootfs;
        const struct rootfs_sources *src = c->sources;
        for (size_t i = 0; i < rp->n_steps; i++)
                c->host_fds[i] = src && i < src->n ? src->fds[i] : -1;
        if (!src)
                return 0;
        size_t failed = 0;
        int r = rootfs_sources_clone_nodes(rp, src->nodes_fd, c->host_fds, c->plan->base_dir,
                                           &failed);
        if (r < 0)
                c->index = (uint32_t) failed;
        return r;
}

static int step_open_rootfs(struct child_ctx *c)
{
        if (c->plan->root != PLAN_ROOT_BUNDLE)
                return 0;
        c->rootfs_fd = open(c->plan->rootfs_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return c->rootfs_fd < 0 ? -errno : 0;
}

static int step_root_private(struct child_ctx *c)
{
        /* Nothing mounted from here on may propagate back to the host. */
        if (c->plan->root == PLAN_ROOT_JOINED)
                return 0;
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return -errno;
        return 0;
}

static int step_root_tmpfs(struct child_ctx *c)
{
        if (c->plan->root != PLAN_ROOT_TMPFS)
                return 0;
        if (mount("psrun-root", c->plan->base_dir, "tmpfs", MS_NOSUID | MS_NODEV,
                  "mode=0755,size=16m") < 0)
                return -errno;
        return 0;
}

static int step_copy_rootfs(struct child_ctx *c)
{
        /* A private recursive copy of the bundle's root (the bundle's own
         * mount is never changed), detached, made before any namespace is
         * joined: a mount namespace joined by path need not see the bundle,
         * and a tree of another namespace cannot be copied from there. */
        if (c->plan->root != PLAN_ROOT_BUNDLE)
                return 0;
        int tree = open_tree(c->rootfs_fd, "",
                             OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE | AT_EMPTY_PATH);
        if (tree < 0)
                return -errno;
        safe_close(c->rootfs_fd);
        c->rootfs_fd = tree;
        return 0;
}

static int step_root_bundle(struct child_ctx *c)
{
        /* The copy, attached at the base directory. */
        if (c->plan->root != PLAN_ROOT_BUNDLE)
                return 0;
        if (move_mount(c->rootfs_fd, "", AT_FDCWD, c->plan->base_dir, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return -errno;
        c->rootfs_fd = safe_close(c->rootfs_fd);
        return 0;
}

static int step_mounts_early(struct child_ctx *c)
{
        const struct rootfs_plan *rp = &c->plan->rootfs;
        if (c->plan->root != PLAN_ROOT_BUNDLE)
                return 0;
        for (size_t i = 0; i < rp->n_steps; i++) {
                if (!rp->steps[i].early)
                        continue;
                int r = mount_step_apply_early(&rp->steps[i]);
                if (r < 0) {
                        c->index = (uint32_t) i;
                        return r;
                }
                c->host_fds[i] = r; /* attached by step_mounts, in order */
        }
        return 0;
}

static int pivot_stacked(struct child_ctx *c)
{
        /* pivot_root(".", ".") stacks the old root on the new one; detaching
         * it leaves the new root alone, and writes nothing into the bundle
         * (no put-old directory). Host bind sources are open fds already, so
         * nothing later needs the host's root. */
        if (chdir(c->plan->base_dir) < 0)
                return -errno;
        if (c->plan->no_pivot) {
                if (mount(".", "/", NULL, MS_MOVE, NULL) < 0 || chroot(".") < 0)
                        return -errno;
        } else {
                if (syscall(SYS_pivot_root, ".", ".") < 0)
                        return -errno;
                if (umount2(".", MNT_DETACH) < 0)
                        return -errno;
        }
        return chdir("/") < 0 ? -errno : 0;
}

static int step_pivot(struct child_ctx *c)
{
        if (c->plan->root == PLAN_ROOT_JOINED)
                return 0;
        if (c->plan->root == PLAN_ROOT_BUNDLE)
                return pivot_stacked(c);
        /* The new root is the tmpfs; the host's root moves to /.oldroot until
         * the mount steps have taken what they need from it. */
        char old[PATH_MAX];
        size_t n = strlen(c->plan->base_dir);
        if (n + sizeof(ROOTFS_OLDROOT) > sizeof(old))
                return -ENAMETOOLONG;
        memcpy(old, c->plan->base_dir, n);
        memcpy(old + n, ROOTFS_OLDROOT, sizeof(ROOTFS_OLDROOT));
        if (mkdir(old, 0700) < 0)
                return -errno;
        if (syscall(SYS_pivot_root, c->plan->base_dir, old) < 0)
                return -errno;
        if (chdir("/") < 0)
                return -errno;
        return 0;
}

static int step_root_propagation(struct child_ctx *c)
{
        unsigned long prop = c->plan->rootfs_propagation;
        if (!prop || c->plan->root == PLAN_ROOT_JOINED)
                return 0;
        return mount(NULL, "/", NULL, prop, NULL) < 0 ? -errno : 0;
}

static int step_mounts(struct child_ctx *c)
{
        const struct rootfs_plan *rp = &c->plan->rootfs;
        for (size_t i = 0; i < rp->n_steps; i++) {
                int r = mount_step_apply(&rp->steps[i], c->host_fds[i]);
                if (c->host_fds[i] >= 0) {
                        close(c->host_fds[i]);
                        c->host_fds[i] = -1;
                }
                if (r == -ENOENT && rp->steps[i].optional)
                        continue;
                if (r < 0) {
                        c->index = (uint32_t) i;
                        return r;
                }
        }
        return 0;
}

static int step_console(struct child_ctx *c)
{
        /* The pty is made in the container's own devpts, so the process
         * sees its terminal under /dev/pts; the master goes to whoever
         * listens on --console-socket. */
        const struct plan *p = c->plan;
        if (p->console_fd < 0)
                return 0;
        struct oci_console_size size = {.height = p->console_rows, .width = p->console_cols};
        return oci_console_setup(p->console_fd, "/dev/ptmx",
                                 p->console_rows || p->console_cols ? &size : NULL,
                                 &c->console_slave);
}

static int step_console_attach(struct child_ctx *c)
{
        if (c->console_slave < 0)
                return 0;
        int r = oci_console_attach(c->console_slave);
        c->console_slave = -1;
        return r;
}

static int step_rlimits(struct child_ctx *c)
{
        for (size_t i = 0; i < c->plan->n_rlimits; i++) {
                const struct plan_rlimit *l = &c->plan->rlimits[i];
                if (setrlimit(l->resource, &l->limit) < 0) {
                        c->index = (uint32_t) i;
                        return -errno;
                }
        }
        return 0;
}

static int step_root_id(struct child_ctx *c)
{
        /* Until now the child ran with psrun's own (unmapped) ids, which it
         * needed to reach the bind sources. From here on it is the user
         * namespace's root: an unprivileged id on the host. (Files can only
         * be created in the sandbox's own tmpfs by an id mapped in it.) */
        if (sys_setresgid(0) < 0 || sys_setresuid(0) < 0)
                return -errno;
        /* A credential change clears the parent-death signal: set it again. */
        if (c->plan->pdeathsig && prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                return -errno;
        return 0;
}

static int step_user_quotas(struct child_ctx *c)
{
        /* In our own user namespace (the sysctls under /proc/sys/user are
         * per namespace, looked up by the writer's): capped here, they hold
         * for everything the command does, which has no CAP_SYS_RESOURCE
         * to raise them. */
        const struct plan *p = c->plan;
        for (size_t i = 0; i < p->n_user_quotas; i++) {
                const struct plan_user_quota *q = &p->user_quotas[i];
                int fd = open(q->path, O_WRONLY | O_CLOEXEC);
                if (fd < 0 && errno == ENOENT)
                        continue; /* not in this kernel */
                int r = fd < 0 ? -errno : write_all(fd, q->value, strlen(q->value));
                if (fd >= 0)
                        close(fd);
                if (r < 0) {
                        c->index = (uint32_t) i;
                        return r;
                }
        }
        return 0;
}

/* ---- the command's own process ---- */

static int step_signals(struct child_ctx *c)
{
        /* Start the command as from a fresh shell: default dispositions,
         * nothing blocked. */
        signals_reset_dispositions();
        sigset_t none;
        sigemptyset(&none);
        if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
                return -errno;
        return 0;
}

static int step_timens(struct child_ctx *c)
{
        /* The offsets can only be set while the namespace has no process:
         * made for our children, set, then entered (the switch at execve
         * that newer kernels make is not in every kernel psrun runs on). */
        const char *offsets = c->plan->timens_offsets;
        if (!offsets[0])
                return 0;
        if (unshare(CLONE_NEWTIME) < 0)
                return -errno;
        _cleanup_close_ int fd = open("/proc/self/timens_offsets", O_WRONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        int r = write_all(fd, offsets, strlen(offsets));
        if (r < 0)
                return r;
        _cleanup_close_ int ns = open("/proc/self/ns/time_for_children", O_RDONLY | O_CLOEXEC);
        if (ns < 0)
                return -errno;
        return setns(ns, CLONE_NEWTIME) < 0 ? -errno : 0;
}

static int step_personality(struct child_ctx *c)
{
        if (c->plan->personality == 0xffffffffUL)
                return 0;
        return personality(c->plan->personality) < 0 ? -errno : 0;
}

static int step_bounding(struct child_ctx *c)
{
        const struct caps_plan *caps = &c->plan->caps;
        for (int cap = 0; cap <= caps->last_cap; cap++) {
                if (caps->bounding & (1ULL << cap))
                        continue;
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno != EINVAL) {
                        c->index = (uint32_t) cap;
                        return -errno;
                }
        }
        if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0 && errno != EINVAL)
                return -errno;
        /* Keep the permitted set across setuid; step_caps sets it exactly. */
        if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0)
                return -errno;
        return 0;
}

static int step_groups(struct child_ctx *c)
{
        if (syscall(SYS_setgroups, c->plan->n_groups, c->plan->groups) < 0)
                return -errno;
        return 0;
}

static int step_setgid(struct child_ctx *c)
{
        gid_t g = c->plan->gid;
        return sys_setresgid(g) < 0 ? -errno : 0;
}

static int step_stdio_owner(struct child_ctx *c)
{
        /* As runc: stdio that is a pipe, socket or file is given to the
         * process's uid, so that it can reopen /dev/stdout and the like.
         * Never a device (a terminal of the caller's stays the caller's);
         * an owner or id the user namespace cannot map (EPERM, EINVAL) or a
         * read-only file system leaves it as it is. */
        if (!c->plan->chown_stdio)
                return 0;
        for (int fd = 0; fd <= 2; fd++) {
                struct stat st;
                if (fstat(fd, &st) < 0 || st.st_uid == c->plan->uid ||
                    !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) || S_ISREG(st.st_mode)))
                        continue;
                if (fchown(fd, c->plan->uid, (gid_t) -1) < 0 && errno != EPERM && errno != EINVAL &&
                    errno != EROFS)
                        return -errno;
        }
        return 0;
}

static int step_setuid(struct child_ctx *c)
{
        uid_t u = c->plan->uid;
        return sys_setresuid(u) < 0 ? -errno : 0;
}

static int step_caps(struct child_ctx *c)
{
        const struct caps_plan *caps = &c->plan->caps;
        struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct data[2] = {
                {(uint32_t) caps->effective, (uint32_t) caps->permitted,
                 (uint32_t) caps->inheritable},
                {(uint32_t) (caps->effective >> 32), (uint32_t) (caps->permitted >> 32),
                 (uint32_t) (caps->inheritable >> 32)},
        };
        if (syscall(SYS_capset, &hdr, data) < 0)
                return -errno;
        for (int cap = 0; cap <= caps->last_cap; cap++) {
                if (!(caps->ambient & (1ULL << cap)))
                        continue;
                if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, cap, 0, 0) < 0) {
                        c->index = (uint32_t) cap;
                        return -errno;
                }
        }
        if (prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0) < 0)
                return -errno;
        return 0;
}

static int step_chdir(struct child_ctx *c)
{
        /* The CVE-2024-21626 class: until execve this process still holds
         * psrun's host fds (close-on-exec, not closed), so a working
         * directory such as /proc/self/fd/N would be a host directory, from
         * where `..` climbs the host's tree. The directory is resolved
         * inside the root with no magic links (so no /proc/self/fd/N, no
         * /proc/PID/cwd), and then verified: the kernel's getcwd() names a
         * directory outside the root "(unreachable)/...". */
        const char *dir = c->plan->workdir ? c->plan->workdir : "/";
        _cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return -errno;
        struct open_how how = {
                .flags = O_PATH | O_DIRECTORY | O_CLOEXEC,
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        _cleanup_close_ int fd = (int) syscall(SYS_openat2, root, dir, &how, sizeof(how));
        if (fd < 0)
                return -errno;
        if (fchdir(fd) < 0)
                return -errno;
        /* exec_path is free until step_lookup fills it. */
        long n = syscall(SYS_getcwd, c->exec_path, PATH_MAX);
        if (n < 0)
                return -errno;
        if (c->exec_path[0] != '/')
                return -EXDEV;
        return 0;
}

static int step_no_new_privs(struct child_ctx *c)
{
        if (!c->plan->no_new_privs)
                return 0;
        return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ? -errno : 0;
}

static int step_apparmor(struct child_ctx *c)
{
        /* Takes effect at execve(). Before Landlock, whose rules would
         * refuse the write to /proc/self/attr. */
        if (!c->plan->apparmor.active)
                return 0;
        return apparmor_plan_apply(&c->plan->apparmor);
}

static int step_landlock(struct child_ctx *c)
{
        if (c->plan->landlock.ruleset_fd < 0)
                return 0;
        int failed = -1;
        int r = landlock_plan_apply(&c->plan->landlock, &failed);
        c->index = failed < 0 ? UINT32_MAX : (uint32_t) failed;
        return r;
}

static bool is_executable_file(const char *path)
{
        struct stat st;
        return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

static int refuse_self(const char *path)
{
        /* The CVE-2019-5736 class: an image whose /bin/sh is a link to
         * /proc/self/exe would have psrun exec this very binary, inside the
         * container. The program is resolved with no magic links (so no
         * /proc/PID/exe, /proc/PID/fd/N or /proc/PID/root on the way) and
         * must not be the executable this process runs. */
        struct open_how how = {.flags = O_PATH | O_CLOEXEC, .resolve = RESOLVE_NO_MAGICLINKS};
        _cleanup_close_ int fd = (int) syscall(SYS_openat2, AT_FDCWD, path, &how, sizeof(how));
        if (fd < 0)
                return -errno;
        _cleanup_close_ int self = open("/proc/self/exe", O_PATH | O_CLOEXEC);
        struct stat a, b;
        if (self < 0 || fstat(fd, &a) < 0 || fstat(self, &b) < 0)
                return -errno;
        if (a.st_dev == b.st_dev && a.st_ino == b.st_ino)
                return -EPERM;
        return 0;
}

static int find_program(struct child_ctx *c)
{
        /* Find argv[0] now, with the command's identity and root, so that a
         * missing program is an error of `psrun create`, not a silent exit
         * after `psrun start`. PATH search by hand: execvp() is not
         * async-signal-safe. */
        const struct plan *p = c->plan;
        const char *file = p->argv[0];
        size_t flen = strlen(file);
        if (strchr(file, '/')) {
                if (flen + 1 > PATH_MAX)
                        return -ENAMETOOLONG;
                memcpy(c->exec_path, file, flen + 1);
                if (access(file, F_OK) < 0)
                        return -errno;
                return 0;
        }
        const char *path = p->path_env && *p->path_env ? p->path_env : "/usr/bin:/bin";
        int best = -ENOENT;
        while (*path) {
                const char *end = strchrnul(path, ':');
                size_t dlen = (size_t) (end - path);
                if (dlen + 1 + flen + 1 <= PATH_MAX) {
                        char *buf = c->exec_path;
                        memcpy(buf, dlen ? path : ".", dlen ? dlen : 1);
                        size_t off = dlen ? dlen : 1;
                        buf[off++] = '/';
                        memcpy(buf + off, file, flen + 1);
                        if (is_executable_file(buf))
                                return 0;
                        if (errno == EACCES)
                                best = -EACCES;
                }
                path = *end ? end + 1 : end;
        }
        c->exec_path[0] = '\0';
        return best;
}

static int step_lookup(struct child_ctx *c)
{
        int r = find_program(c);
        if (r < 0)
                return r;
        return refuse_self(c->exec_path);
}

/* close_range's fallback, as crun's: every fd >= first but those in keep,
 * closed or marked close-on-exec, found by walking /proc/self/fd (a kernel
 * before 5.9 has no close_range; a config's seccomp profile may refuse
 * it). */
static int fds_from_proc(unsigned first, const int *keep, size_t n_keep, bool cloexec)
{
        int dir = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (dir < 0)
                return -errno;
        char buf[2048] __attribute__((aligned(8)));
        long n;
        int r = 0;
        while ((n = syscall(SYS_getdents64, dir, buf, sizeof(buf))) > 0) {
                for (long off = 0; off < n;) {
                        /* struct linux_dirent64: ino, off, reclen, type, name */
                        unsigned short reclen;
                        memcpy(&reclen, buf + off + 16, sizeof(reclen));
                        const char *name = buf + off + 19;
                        off += reclen;
                        unsigned fd = 0;
                        bool digits = name[0] != '\0';
                        for (const char *p = name; *p && digits; p++) {
                                digits = *p >= '0' && *p <= '9';
                                fd = fd * 10 + (unsigned) (*p - '0');
                        }
                        bool kept = false;
                        for (size_t k = 0; k < n_keep; k++)
                                kept = kept || (int) fd == keep[k];
                        if (!digits || fd < first || kept || (int) fd == dir)
                                continue;
                        if (cloexec ? fcntl((int) fd, F_SETFD, FD_CLOEXEC) < 0
                                    : close((int) fd) < 0)
                                r = r ? r : -errno;
                }
        }
        if (n < 0)
                r = -errno;
        close(dir);
        return r;
}

static int step_close_fds(struct child_ctx *c)
{
        /* No host fd beyond 0-2 (and those --preserve-fds names) reaches the
         * command. CLOEXEC rather than close, so the sync socket can still
         * report a failing execve. Done before a config's early seccomp
         * filter (exec_steps): nothing of psrun's own may need a syscall
         * that filter may refuse. */
        unsigned first = 3 + c->plan->preserve_fds;
        if (syscall(SYS_close_range, first, ~0U, CLOSE_RANGE_CLOEXEC) < 0) {
                if (errno != ENOSYS && errno != EPERM)
                        return -errno;
                return fds_from_proc(first, NULL, 0, true);
        }
        return 0;
}

/*
 * --preserve-fds N passes fds 3..N+2 as they are, as crun does: those the
 * caller passed are open and not close-on-exec (that is how they came
 * through its execve into psrun), a hole in the range stays a hole, and
 * psrun's own fds that landed in it (the state root, the container's lock)
 * are close-on-exec, as all of psrun's fds are from birth, so they never
 * reach the command. Before init waits for `start` they are closed, not
 * only left to execve: it must not hold the lock meanwhile. keep: an fd of
 * the child's own still needed (the exec FIFO).
 */
static void close_own_preserved(unsigned first, int keep)
{
        for (unsigned fd = 3; fd < first; fd++) {
                if ((int) fd == keep)
                        continue;
                int flags = fcntl((int) fd, F_GETFD);
                if (flags >= 0 && (flags & FD_CLOEXEC))
                        close((int) fd);
        }
}

static int step_wait_start(struct child_ctx *c)
{
        /* OCI create ends here: tell `psrun create` we are ready, let go of
         * the sync socket (create exits, nobody reads it), and wait for the
         * byte `psrun start` writes into the FIFO. A read of 0 bytes cannot
         * happen while we hold the FIFO open for writing too. */
        int fd = c->plan->exec_fifo_fd;
        if (fd < 0)
                return 0;
        struct child_msg m = {.kind = CHILD_MSG_READY};
        send_msg(c->sync_fd, &m);
        /* Close, not only mark close-on-exec: `psrun create`'s container
         * lock is an inherited open file, and a flock lives as long as any
         * fd of it; so does everything else we must not hold while we wait. */
        unsigned first = 3 + c->plan->preserve_fds;
        close_own_preserved(first, fd);
        int r = 0;
        if ((unsigned) fd >= first) {
                if ((unsigned) fd > first &&
                    syscall(SYS_close_range, first, (unsigned) fd - 1, 0) < 0)
                        r = -errno;
                if (r == 0 && syscall(SYS_close_range, (unsigned) fd + 1, ~0U, 0) < 0)
                        r = -errno;
        } else if (syscall(SYS_close_range, first, ~0U, 0) < 0) {
                r = -errno;
        }
        /* A config's early seccomp filter may refuse close_range: the lock
         * must go all the same, or `psrun start` waits for it forever. */
        if (r == -ENOSYS || r == -EPERM)
                (void) fds_from_proc(first, &fd, 1, false);
        char byte;
        ssize_t n;
        do
                n = read(fd, &byte, 1);
        while (n < 0 && errno == EINTR);
        if (n != 1)
                _exit(CHILD_EXIT_SETUP);
        return 0;
}

/* Every fd but 0-2, those --preserve-fds names and those in keep closed:
 * close_range over the gaps. keep is sorted here. */
static int keep_only(unsigned first, int *keep, size_t n)
{
        for (size_t i = 1; i < n; i++)
                for (size_t j = i; j > 0 && keep[j - 1] > keep[j]; j--) {
                        int t = keep[j];
                        keep[j] = keep[j - 1];
                        keep[j - 1] = t;
                }
        unsigned from = first;
        for (size_t i = 0; i <= n; i++) {
                if (i < n && (keep[i] < 0 || (unsigned) keep[i] < from))
                        continue;
                unsigned to = i < n ? (unsigned) keep[i] : ~0U;
                if (to > from && syscall(SYS_close_range, from, i < n ? to - 1 : to, 0) < 0) {
                        if (errno != ENOSYS)
                                return -errno;
                        return fds_from_proc(first, keep, n, false);
                }
                if (i < n)
                        from = to + 1;
        }
        return 0;
}

static int step_keep_planned_fds(struct child_ctx *c)
{
        /* OCI exec (the CVE-2016-9962 class): the command's process will be
         * visible in the container, where a process with CAP_SYS_PTRACE can
         * open /proc/PID/fd/N of it even though it is not dumpable. Of
         * psrun's fds (the state root, cgroup directories, its own
         * namespaces) it gets none: closed now, before the joins, while
         * /proc is still the host's for the fallback. A session's zygote
         * waits in the sandbox for its request: it holds none of the
         * supervisor's fds meanwhile (its lock, its control socket). */
        const struct plan *p = c->plan;
        if (!p->spawn_command && !p->zygote)
                return 0;
        int keep[5 + PLAN_MAX_JOINS];
        size_t n = 0;
        keep[n++] = c->sync_fd;
        keep[n++] = p->join_pidfd;
        keep[n++] = p->console_fd;
        keep[n++] = p->landlock.ruleset_fd;
        keep[n++] = p->exec_fifo_fd;
        for (size_t i = 0; i < p->n_joins; i++)
                keep[n++] = p->joins[i].fd;
        return keep_only(3 + p->preserve_fds, keep, n);
}

static int step_drop_join_fds(struct child_ctx *c)
{
        /* Joined: the command's process gets no fd of the container's init
         * or namespaces either. */
        const struct plan *p = c->plan;
        if (!p->spawn_command && !p->zygote)
                return 0;
        if (p->join_pidfd >= 0)
                close(p->join_pidfd);
        for (size_t i = 0; i < p->n_joins; i++)
                close(p->joins[i].fd);
        return 0;
}

static int step_seccomp(struct child_ctx *c)
{
        const struct plan *p = c->plan;
        if (p->seccomp.len == 0 || p->seccomp_early)
                return 0;
        if (p->seccomp_notify.len)
                return seccomp_program_load_listener(&p->seccomp_notify, &p->seccomp, &c->listener);
        return seccomp_program_load(&p->seccomp);
}

static int step_report_exec(struct child_ctx *c)
{
        /* After seccomp, which allows sendmsg and close: the parent learns
         * that the command starts, gets its listener, and (SO_PASSCRED on
         * its end) sees this process's pid in its own namespace, which is
         * the creator of the Landlock domain. Refused syscalls made before
         * the parent reads the listener wait for it in the kernel. */
        if (!c->plan->report_exec)
                return 0;
        struct child_msg m = {
                .kind = CHILD_MSG_EXEC,
                .err = c->plan->seccomp_notify.len && c->listener < 0 ? EBUSY : 0,
        };
        struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
        union {
                char buf[CMSG_SPACE(sizeof(int))];
                struct cmsghdr align;
        } u;
        struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
        if (c->listener >= 0) {
                msg.msg_control = u.buf;
                msg.msg_controllen = sizeof(u.buf);
                struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
                cm->cmsg_level = SOL_SOCKET;
                cm->cmsg_type = SCM_RIGHTS;
                cm->cmsg_len = CMSG_LEN(sizeof(int));
                memcpy(CMSG_DATA(cm), &c->listener, sizeof(int));
        }
        ssize_t n;
        do
                n = sendmsg(c->sync_fd, &msg, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        int r = n < 0 ? -errno : 0;
        /* The command must not hold its own listener: it could answer its
         * refusals itself. (O_CLOEXEC as well, but a failed execve.) */
        c->listener = safe_close(c->listener);
        return r;
}

static int step_seccomp_early(struct child_ctx *c)
{
        /* Without no_new_privs, loading a filter needs CAP_SYS_ADMIN, which
         * the steps after this one drop: the filter must then allow them
         * (OCI profiles do, as runc loads them at the same point). */
        if (c->plan->seccomp.len == 0 || !c->plan->seccomp_early)
                return 0;
        return seccomp_program_load(&c->plan->seccomp);
}

struct child_step_def {
        enum child_step id;
        int (*run)(struct child_ctx *c);
};

/* Run by pid 1 of the new namespaces, with the user namespace's full
 * capabilities. */
/* Run first, before the child waits for its id maps: from its birth it may
 * be visible in a container's pid namespace (OCI exec), with psrun's host
 * fds, cwd, executable and command line. */
static const struct child_step_def early_steps[] = {
        {CHILD_STEP_SYNC, step_not_dumpable},
        {CHILD_STEP_SYNC, step_proctitle},
        {CHILD_STEP_OOM_SCORE, step_oom_score},
};

static const struct child_step_def setup_steps[] = {
        {CHILD_STEP_ROOT_BUNDLE, step_open_rootfs},
        /* Private before the sources are cloned: a clone of a shared mount
         * would stay in its peer group, and mounts made below the bind in
         * the sandbox would reach the host. */
        {CHILD_STEP_ROOT_PRIVATE, step_root_private},
        {CHILD_STEP_MOUNT, step_open_sources},
        {CHILD_STEP_ROOT_BUNDLE, step_copy_rootfs},
        {CHILD_STEP_PRIVATE_MOUNTS, step_private_mounts},
        {CHILD_STEP_CGROUP, step_attach_self},
        {CHILD_STEP_CLOSE_FDS, step_keep_planned_fds},
        {CHILD_STEP_JOIN, step_join},
        {CHILD_STEP_JOIN, step_drop_join_fds},
        {CHILD_STEP_JOIN, step_cgroupns},
        {CHILD_STEP_HOSTNAME, step_hostname},
        {CHILD_STEP_DOMAINNAME, step_domainname},
        {CHILD_STEP_LOOPBACK, step_loopback},
        {CHILD_STEP_ROOT_ID, step_root_id},
        {CHILD_STEP_USER_QUOTAS, step_user_quotas},
        /* Detached, before anything is mounted over the base directory
         * (under which host paths an overlay names may lie). */
        {CHILD_STEP_MOUNT, step_mounts_early},
        {CHILD_STEP_ROOT_TMPFS, step_root_tmpfs},
        {CHILD_STEP_ROOT_BUNDLE, step_root_bundle},
        {CHILD_STEP_PIVOT, step_pivot},
        {CHILD_STEP_ROOT_PROPAGATION, step_root_propagation},
        {CHILD_STEP_MOUNT, step_mounts},
        {CHILD_STEP_CONSOLE, step_console},
};

/* Run by the process that becomes the command. Order matters: the bounding
 * set needs CAP_SETPCAP, so it goes before setuid; Landlock needs
 * no_new_privs once capabilities are gone; seccomp is last because it would
 * block the syscalls of the steps before it. */
static const struct child_step_def exec_steps[] = {
        {CHILD_STEP_CONSOLE, step_console_attach},
        {CHILD_STEP_SIGNALS, step_signals},
        {CHILD_STEP_RLIMIT, step_rlimits},
        {CHILD_STEP_TIMENS, step_timens},
        {CHILD_STEP_PERSONALITY, step_personality},
        {CHILD_STEP_CLOSE_FDS, step_close_fds},
        {CHILD_STEP_SECCOMP, step_seccomp_early},
        {CHILD_STEP_BOUNDING, step_bounding},
        {CHILD_STEP_GROUPS, step_groups},
        {CHILD_STEP_SETGID, step_setgid},
        {CHILD_STEP_SETUID, step_stdio_owner},
        {CHILD_STEP_SETUID, step_setuid},
        {CHILD_STEP_CAPS, step_caps},
        {CHILD_STEP_CHDIR, step_chdir},
        {CHILD_STEP_NO_NEW_PRIVS, step_no_new_privs},
        {CHILD_STEP_APPARMOR, step_apparmor},
        {CHILD_STEP_LANDLOCK, step_landlock},
        {CHILD_STEP_EXEC, step_lookup},
        {CHILD_STEP_WAIT_START, step_wait_start},
        {CHILD_STEP_SECCOMP, step_seccomp},
        {CHILD_STEP_SECCOMP, step_report_exec},
};

/*
 * A session's zygote (plan->zygote) runs the same steps in two parts. Ahead
 * of its request: everything that does not need it, the security layers
 * included: no_new_privs, AppArmor, Landlock and seccomp (loading a filter
 * costs the kernel a JIT compilation, 0.3-0.4 ms here). What follows them
 * is in the session's allowlist (the default profile: dup3, setresuid,
 * capset, prctl, openat2, fchdir, getcwd, stat, access, sendmsg, execve),
 * and a refusal would be a setup error, never a layer left out. It waits
 * as uid 0 of the sandbox, which the sandbox's own uid cannot signal.
 */
static const struct child_step_def zygote_steps_ahead[] = {
        {CHILD_STEP_CONSOLE, step_console_attach},
        {CHILD_STEP_SIGNALS, step_signals},
        {CHILD_STEP_RLIMIT, step_rlimits},
        {CHILD_STEP_TIMENS, step_timens},
        {CHILD_STEP_PERSONALITY, step_personality},
        {CHILD_STEP_CLOSE_FDS, step_close_fds},
        {CHILD_STEP_SECCOMP, step_seccomp_early},
        {CHILD_STEP_BOUNDING, step_bounding},
        {CHILD_STEP_GROUPS, step_groups},
        {CHILD_STEP_SETGID, step_setgid},
        {CHILD_STEP_NO_NEW_PRIVS, step_no_new_privs},
        {CHILD_STEP_APPARMOR, step_apparmor},
        {CHILD_STEP_LANDLOCK, step_landlock},
        {CHILD_STEP_SECCOMP, step_seccomp},
};

static const struct child_step_def zygote_steps_after_request[] = {
        {CHILD_STEP_SETUID, step_stdio_owner},  {CHILD_STEP_SETUID, step_setuid},
        {CHILD_STEP_CAPS, step_caps},           {CHILD_STEP_CHDIR, step_chdir},
        {CHILD_STEP_EXEC, step_lookup},         {CHILD_STEP_WAIT_START, step_wait_start},
        {CHILD_STEP_SECCOMP, step_report_exec},
};

static int exit_code_for(enum child_step step, int r)
{
        if (step != CHILD_STEP_EXEC)
                return CHILD_EXIT_SETUP;
        return r == -ENOENT ? CHILD_EXIT_NOTFOUND : CHILD_EXIT_NOEXEC;
}

static void run_steps(struct child_ctx *c, const struct child_step_def *steps, size_t n)
{
        for (size_t i = 0; i < n; i++) {
                c->index = 0;
                int r = steps[i].run(c);
                if (r < 0)
                        fail(c, steps[i].id, r, exit_code_for(steps[i].id, r));
        }
}

/* plan->zygote: its request, read into memory of its own (this process's
 * copy; no allocation), and its plan from there on a copy with the
 * request's argv, envp, workdir and PATH. */
static char request_buf[CHILD_REQUEST_MAX] __attribute__((aligned(16)));
static struct plan request_plan;

static int await_request(struct child_ctx *c)
{
        struct iovec iov = {.iov_base = request_buf, .iov_len = sizeof(request_buf)};
        union {
                char buf[CMSG_SPACE(3 * sizeof(int))];
                struct cmsghdr align;
        } u;
        struct msghdr msg = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = u.buf,
                .msg_controllen = sizeof(u.buf),
        };
        ssize_t n;
        do
                n = recvmsg(c->sync_fd, &msg, MSG_CMSG_CLOEXEC);
        while (n < 0 && errno == EINTR);
        if (n <= 0)
                _exit(CHILD_EXIT_SETUP); /* the supervisor gave this one up */
        int fds[3] = {-1, -1, -1};
        size_t n_fds = 0;
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&msg); cm; cm = CMSG_NXTHDR(&msg, cm))
                if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS)
                        for (size_t i = 0; i < (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int); i++) {
                                int fd;
                                memcpy(&fd, CMSG_DATA(cm) + i * sizeof(int), sizeof(int));
                                if (n_fds < 3)
                                        fds[n_fds++] = fd;
                                else
                                        close(fd);
                        }
        /* The supervisor made it; checked all the same: every offset
         * inside the message, every string ends before its end. */
        struct child_request h;
        size_t len = (size_t) n;
        if (n_fds != 3 || (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || len < sizeof(h) ||
            request_buf[len - 1] != '\0')
                return -EPROTO;
        memcpy(&h, request_buf, sizeof(h));
        size_t slots = (size_t) h.argc + 1 + h.envc + 1;
        if (h.len != len || h.argc == 0 || h.argc > len || h.envc > len ||
            sizeof(h) + slots * sizeof(uintptr_t) > len)
                return -EPROTO;
        uintptr_t *slot = (uintptr_t *) (void *) (request_buf + sizeof(h));
        size_t strings = sizeof(h) + slots * sizeof(uintptr_t);
        for (size_t i = 0; i < slots; i++) {
                bool end = i == h.argc || i == slots - 1;
                if (end != (slot[i] == (uintptr_t) CHILD_REQUEST_NONE) ||
                    (!end && (slot[i] < strings || slot[i] >= len)))
                        return -EPROTO;
                slot[i] = end ? 0 : (uintptr_t) (request_buf + slot[i]);
        }
        if ((h.cwd != CHILD_REQUEST_NONE && (h.cwd < strings || h.cwd >= len)) ||
            (h.path != CHILD_REQUEST_NONE && (h.path < strings || h.path >= len)))
                return -EPROTO;
        request_plan = *c->plan;
        request_plan.argv = (char **) slot;
        request_plan.envp = (char **) slot + h.argc + 1;
        if (h.cwd != CHILD_REQUEST_NONE)
                request_plan.workdir = request_buf + h.cwd;
        request_plan.path_env = h.path != CHILD_REQUEST_NONE ? request_buf + h.path : NULL;
        c->plan = &request_plan;
        /* The client's stdio, as a clone of an idle supervisor has
         * /dev/null. */
        for (int i = 0; i < 3; i++) {
                if (dup3(fds[i], i, 0) < 0)
                        return -errno;
        }
        for (int i = 0; i < 3; i++)
                if (fds[i] > 2)
                        close(fds[i]);
        return 0;
}

static _Noreturn void become_command(struct child_ctx *c)
{
        umask(c->plan->umask);
        if (c->plan->zygote) {
                run_steps(c, zygote_steps_ahead, ARRAY_SIZE(zygote_steps_ahead));
                int r = await_request(c);
                if (r < 0)
                        fail(c, CHILD_STEP_REQUEST, r, CHILD_EXIT_SETUP);
                run_steps(c, zygote_steps_after_request, ARRAY_SIZE(zygote_steps_after_request));
        } else {
                run_steps(c, exec_steps, ARRAY_SIZE(exec_steps));
        }
        execve(c->exec_path, c->plan->argv, c->plan->envp);
        int r = -errno;
        fail(c, CHILD_STEP_EXEC, r, exit_code_for(CHILD_STEP_EXEC, r));
}

static void drop_caps_but_kill(void)
{
        /* pid 1 keeps CAP_KILL alone: it forwards signals to the command,
         * which runs under another uid. Nothing else, not even in its
         * bounding set. */
        for (int cap = 0; cap <= 63; cap++)
                if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) < 0 && errno == EINVAL)
                        break;
        struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3};
        struct __user_cap_data_struct data[2] = {
                {.effective = 1U << CAP_KILL, .permitted = 1U << CAP_KILL}};
        (void) syscall(SYS_capset, &hdr, data);
}

#if !defined(__SANITIZE_ADDRESS__)
/* The command's process starts on this stack, sharing init's memory until
 * it execs (CLONE_VM | CLONE_VFORK): no copy of init's pages, no page
 * faults. init is suspended meanwhile, so nothing else uses it. */
static char command_stack[64 * 1024] __attribute__((aligned(64)));

static int command_main(void *arg)
{
        become_command(arg);
}

static int spawned_main(void *arg)
{
        struct child_ctx *c = arg;
        /* Its parent is psrun's (CLONE_PARENT), whose death it follows. */
        if (c->plan->pdeathsig)
                (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
        become_command(c);
}
#endif

static int send_spawned(int sync_fd, pid_t pid, int pidfd)
{
        struct child_msg m = {.kind = CHILD_MSG_SPAWNED, .status = pid};
        char cbuf[CMSG_SPACE(sizeof(int))] __attribute__((aligned(8)));
        memset(cbuf, 0, sizeof(cbuf));
        struct iovec iov = {.iov_base = &m, .iov_len = sizeof(m)};
        struct msghdr msg = {
                .msg_iov = &iov,
                .msg_iovlen = 1,
                .msg_control = cbuf,
                .msg_controllen = sizeof(cbuf),
        };
        struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
        cm->cmsg_level = SOL_SOCKET;
        cm->cmsg_type = SCM_RIGHTS;
        cm->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(cm), &pidfd, sizeof(int));
        ssize_t n;
        do
                n = sendmsg(sync_fd, &msg, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        return n == (ssize_t) sizeof(m) ? 0 : -errno;
}

/* plan->spawn_command (OCI exec): this process was made outside the
 * container's pid namespace, where no process of the container can see it,
 * and has joined the others with only the fds the command gets. Only now is
 * the process the container sees made, as runc's and crun's exec do: psrun's
 * child (CLONE_PARENT), so that psrun waits for it, signals it and writes
 * its pid; it shares our memory until it execs (CLONE_VM | CLONE_VFORK), as
 * init's command does. Its error record, if a step fails, comes before our
 * message. */
static _Noreturn void spawn_command(struct child_ctx *c)
{
        int pidfd = -1;
        unsigned long flags = CLONE_VFORK | CLONE_PARENT | CLONE_PIDFD | SIGCHLD;
#if defined(__SANITIZE_ADDRESS__)
        /* A copy of our memory in sanitizer builds (see run_init). */
        pid_t pid = (pid_t) syscall(SYS_clone, flags, 0, &pidfd, NULL, 0);
        if (pid == 0) {
                if (c->plan->pdeathsig)
                        (void) prctl(PR_SET_PDEATHSIG, SIGKILL);
                become_command(c);
        }
#else
        pid_t pid = clone(spawned_main, command_stack + sizeof(command_stack),
                          (int) (flags | CLONE_VM), c, &pidfd);
#endif
        if (pid < 0)
                fail(c, CHILD_STEP_FORK, -errno, CHILD_EXIT_SETUP);
        _exit(send_spawned(c->sync_fd, pid, pidfd) < 0 ? CHILD_EXIT_SETUP : 0);
}

/* pid 1 of the sandbox: reaps orphans, forwards signals, reports how the
 * command ended. When it exits the kernel kills everything left in the pid
 * namespace, so no background process outlives the command. */
static _Noreturn void run_init(struct child_ctx *c, const sigset_t *waitset)
{
        pid_t main_pid = 0; /* a session's init has no command */
        if (!c->plan->init_only) {
#if defined(__SANITIZE_ADDRESS__)
                /* ASan cannot follow the switch to command_stack: in sanitizer
                 * builds the command gets a copy of init's memory instead (a
                 * raw clone, not fork(), which would take glibc's locks). */
                main_pid = (pid_t) syscall(SYS_clone, SIGCHLD, 0, NULL, NULL, 0);
                if (main_pid == 0)
                        become_command(c);
#else
                main_pid = clone(command_main, command_stack + sizeof(command_stack),
                                 CLONE_VM | CLONE_VFORK | SIGCHLD, c);
#endif
                if (main_pid < 0)
                        fail(c, CHILD_STEP_FORK, -errno, CHILD_EXIT_SETUP);
        }

        /* Nothing of the command may reach or inspect pid 1: no capabilities
         * but CAP_KILL, not dumpable (so not ptrace-able, /proc/1/mem
         * closed), no fds. */
        drop_caps_but_kill();
        (void) prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
        (void) prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
        int fd = c->sync_fd;
        if (fd > 0)
                (void) syscall(SYS_close_range, 0, (unsigned) fd - 1, 0);
        (void) syscall(SYS_close_range, (unsigned) fd + 1, ~0U, 0);
        if (c->plan->init_only) {
                /* The session's supervisor waits for this before it accepts
                 * execs; after it, nothing more is ever sent. */
                struct child_msg m = {.kind = CHILD_MSG_READY};
                send_msg(fd, &m);
        }

        for (;;) {
                siginfo_t si;
                int sig = sigwaitinfo(waitset, &si);
                if (sig < 0)
                        continue;
                if (sig != SIGCHLD) {
                        /* Never kill(0 or -1, ...): a session's init has no
                         * command to forward to. */
                        if (main_pid > 0)
                                (void) kill(main_pid, sig);
                        continue;
                }
                for (;;) {
                        int status;
                        pid_t w = waitpid(-1, &status, WNOHANG);
                        if (w <= 0)
                                break;
                        if (w == main_pid) {
                                struct child_msg m = {.kind = CHILD_MSG_EXIT, .status = status};
                                send_msg(fd, &m);
                                _exit(0);
                        }
                }
        }
}

/* Block until the parent sends `expect`; EOF means it died or gave up. */
static void wait_parent(struct child_ctx *c, char expect)
{
        char got = 0;
        ssize_t n;
        do
                n = read(c->sync_fd, &got, 1);
        while (n < 0 && errno == EINTR);
        if (n != 1 || got != expect)
                _exit(CHILD_EXIT_SETUP);
}

_Noreturn void child_main(const struct plan *plan, int sync_fd,
                          const struct rootfs_sources *sources)
{
        /* On the stack, bounded: the child must not allocate.
         * rootfs_plan_add() refuses steps past ROOTFS_MAX_STEPS. */
        int host_fds[ROOTFS_MAX_STEPS];
        char exec_path[PATH_MAX];
        struct child_ctx c = {
                .plan = plan,
                .sync_fd = sync_fd,
                .host_fds = host_fds,
                .sources = sources,
                .rootfs_fd = -1,
                .console_slave = -1,
                .exec_path = exec_path,
                .listener = -1,
        };

        /* If psrun dies, so does the sandbox: pid 1's death takes down the
         * whole pid namespace. (Not for a detached OCI container, which
         * outlives `psrun create` by design.) */
        if (plan->pdeathsig && prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                fail(&c, CHILD_STEP_SYNC, -errno, CHILD_EXIT_SETUP);
        run_steps(&c, early_steps, ARRAY_SIZE(early_steps));
        /* Wait for the parent to write the id maps. EOF means it died
         * before the death signal was armed. */
        wait_parent(&c, CHILD_SYNC_MAPPED);

        umask(0);
        run_steps(&c, setup_steps, ARRAY_SIZE(setup_steps));

        /* Meanwhile the parent put us in our cgroups: only once we are there
         * may the command start, so everything it does is limited. */
        wait_parent(&c, CHILD_SYNC_CONFINED);

        if (plan->spawn_command)
                spawn_command(&c);
        if (!plan->use_init)
                become_command(&c);

        sigset_t waitset;
        sigemptyset(&waitset);
        static const int forwarded[] = {SIGCHLD, SIGINT,  SIGTERM, SIGHUP,
                                        SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH};
        for (size_t i = 0; i < ARRAY_SIZE(forwarded); i++)
                sigaddset(&waitset, forwarded[i]);
        /* Blocked before the fork, so no SIGCHLD is lost. */
        if (sigprocmask(SIG_BLOCK, &waitset, NULL) < 0)
                fail(&c, CHILD_STEP_INIT, -errno, CHILD_EXIT_SETUP);
        if (setsid() < 0)
                fail(&c, CHILD_STEP_INIT, -errno, CHILD_EXIT_SETUP);
        run_init(&c, &waitset);
}

_Noreturn void child_main_zygote(const struct plan *plan, int sync_fd,
                                 const struct child_attach *attach)
{
        /* No release from the parent: an exec joins namespaces that exist
         * (no id maps to wait for) and puts itself in its cgroups
         * (step_attach_self) before anything of the command can run. */
        int host_fds[ROOTFS_MAX_STEPS];
        char exec_path[PATH_MAX];
        struct child_ctx c = {
                .plan = plan,
                .sync_fd = sync_fd,
                .host_fds = host_fds,
                .rootfs_fd = -1,
                .console_slave = -1,
                .exec_path = exec_path,
                .listener = -1,
                .attach = attach,
        };
        if (plan->pdeathsig && prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                fail(&c, CHILD_STEP_SYNC, -errno, CHILD_EXIT_SETUP);
        run_steps(&c, early_steps, ARRAY_SIZE(early_steps));
        umask(0);
        run_steps(&c, setup_steps, ARRAY_SIZE(setup_steps));
        become_command(&c);
}
