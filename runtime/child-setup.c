/* SPDX-License-Identifier: MIT */
/*
 * The child's steps before the command exists: what the sandbox sees of
 * psrun, the namespaces, the root and its mounts, the console, the user
 * namespace's quotas (runtime/child-internal.h; the rules are
 * runtime/child.c's).
 */
#include "runtime/child-internal.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <net/if.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "runtime/pty.h"

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

int step_proctitle(struct child_ctx *c)
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

int step_oom_score(struct child_ctx *c)
{
        /* A session's execs are the OOM killer's first choice, init its
         * last (runtime/session/supervisor-backends.c); raising one's own
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

int step_attach_self(struct child_ctx *c)
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

int step_not_dumpable(struct child_ctx *c)
{
        /* Until execve this process holds psrun's host fds and runs psrun's
         * binary: a process of the container (the same uid when there is no
         * user namespace) must not open /proc/PID/fd/N, /proc/PID/cwd or
         * /proc/PID/exe of it. execve makes the command dumpable again.
         * Rootless with one id, the parent (no privilege) writes our
         * setgroups and id maps itself, which a non-dumpable process's /proc
         * files refuse it: we turn it off once they are written
         * (child_not_dumpable_after_maps); so does a rootless router
         * (runtime/router.c), for the maps below its own. No other process
         * is in our namespaces before then, and the user could trace psrun
         * anyway. */
        if (plan_maps_by_user(c->plan))
                return 0;
        return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 ? -errno : 0;
}

/* ---- namespaces set up by the init process ---- */

int step_join(struct child_ctx *c)
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
                 * private copy of it, never in it (nor in the host's). Not a
                 * rootless session's exec, which joins the sandbox's
                 * namespaces by fd (CHILD_MSG_NAMESPACE): its root is built. */
                if (p->joins[i].type == CLONE_NEWNS && !p->exec_pidns &&
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

int step_private_mounts(struct child_ctx *c)
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

int step_cgroupns(struct child_ctx *c)
{
        /* After the joins: the namespace belongs to the user namespace the
         * child ends up in. The parent attached us to our cgroups already,
         * so they are the namespace's root (runtime/launch.c). */
        if (!c->plan->unshare_cgroupns || c->plan->cgroupns_confined)
                return 0;
        return unshare(CLONE_NEWCGROUP) < 0 ? -errno : 0;
}

int step_cgroupns_confined(struct child_ctx *c)
{
        /* Once released as confined: in every cgroup by now, before the
         * command exists (nothing of the root shows the namespace). */
        if (!c->plan->unshare_cgroupns || !c->plan->cgroupns_confined)
                return 0;
        return unshare(CLONE_NEWCGROUP) < 0 ? -errno : 0;
}

int step_cgroup_quota_confined(struct child_ctx *c)
{
        if (c->cgroup_quota_fd < 0)
                return 0;
        const struct plan_user_quota *q = &c->plan->user_quotas[c->cgroup_quota_index];
        int r = write_all(c->cgroup_quota_fd, q->value, strlen(q->value));
        close(c->cgroup_quota_fd);
        c->cgroup_quota_fd = -1;
        c->index = c->cgroup_quota_index;
        return r;
}

int step_hostname(struct child_ctx *c)
{
        const char *h = c->plan->hostname;
        if (h && sethostname(h, strlen(h)) < 0)
                return -errno;
        return 0;
}

int step_domainname(struct child_ctx *c)
{
        const char *d = c->plan->domainname;
        if (d && setdomainname(d, strlen(d)) < 0)
                return -errno;
        return 0;
}

int step_loopback(struct child_ctx *c)
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

int step_open_sources(struct child_ctx *c)
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
        size_t failed = 0;
        /* Rootless: the host's sources are ours to clone, here. */
        int r = rp->sources_in_child ? rootfs_sources_clone_host(rp, c->host_fds, &failed) : 0;
        if (r < 0) {
                c->index = (uint32_t) failed;
                return r;
        }
        if (!src)
                return 0;
        r = rootfs_sources_clone_nodes(rp, src->nodes_fd, c->host_fds, c->plan->base_dir, &failed);
        if (r < 0)
                c->index = (uint32_t) failed;
        return r;
}

int step_open_rootfs(struct child_ctx *c)
{
        /* An image root: the overlay the parent made (rootfs/overlay.c). */
        if (c->plan->root == PLAN_ROOT_IMAGE) {
                if (c->plan->rootfs.overlay && c->plan->rootfs.overlay->in_child)
                        return 0; /* made by step_image_overlay */
                if (!c->sources || c->sources->root_fd < 0)
                        return -EBADF;
                c->rootfs_fd = c->sources->root_fd;
                return 0;
        }
        if (c->plan->root != PLAN_ROOT_BUNDLE)
                return 0;
        c->rootfs_fd = open(c->plan->rootfs_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
        return c->rootfs_fd < 0 ? -errno : 0;
}

/* A rootless image root's overlay (rootfs.overlay->in_child), or NULL. */
static const struct rootfs_overlay *overlay_in_child(const struct child_ctx *c)
{
        const struct rootfs_overlay *o = c->plan->rootfs.overlay;
        return c->plan->root == PLAN_ROOT_IMAGE && o && o->in_child ? o : NULL;
}

int step_image_layers(struct child_ctx *c)
{
        /* Rootless: the layers' directories, opened in this mount
         * namespace (an overlay takes layers of its mounter's namespace
         * only) and with psrun's own ids still, which the user's 0700
         * store lets through where the user namespace's root is refused. */
        const struct rootfs_overlay *o = overlay_in_child(c);
        if (!o)
                return 0;
        if (o->n_lowers > ROOTFS_MAX_LOWERS)
                return -E2BIG;
        for (size_t i = 0; i < o->n_lowers; i++) {
                c->lower_fds[i] = open(o->lowers[i], O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
                if (c->lower_fds[i] < 0) {
                        int r = -errno;
                        c->index = (uint32_t) i;
                        while (i--)
                                close(c->lower_fds[i]);
                        return r;
                }
        }
        return 0;
}

int step_image_overlay(struct child_ctx *c)
{
        /* The overlay an unprivileged user may mount only in a user
         * namespace of its own, here as its root (or its one id), before
         * the quotas leave no mount namespace to make (a detached mount is
         * one). */
        const struct rootfs_overlay *o = overlay_in_child(c);
        if (!o)
                return 0;
        int r = rootfs_overlay_make_in_child(o, c->lower_fds, &c->rootfs_fd);
        for (size_t i = 0; i < o->n_lowers; i++)
                close(c->lower_fds[i]);
        return r;
}

int step_root_private(struct child_ctx *c)
{
        /* Nothing mounted from here on may propagate back to the host. */
        if (c->plan->root == PLAN_ROOT_JOINED)
                return 0;
        if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
                return -errno;
        return 0;
}

int step_root_tmpfs(struct child_ctx *c)
{
        if (c->plan->root != PLAN_ROOT_TMPFS)
                return 0;
        if (mount("psrun-root", c->plan->base_dir, "tmpfs", MS_NOSUID | MS_NODEV,
                  "mode=0755,size=16m") < 0)
                return -errno;
        return 0;
}

int step_copy_rootfs(struct child_ctx *c)
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

int step_root_bundle(struct child_ctx *c)
{
        /* The copy (or the image's overlay), attached at the base directory. */
        if (c->plan->root != PLAN_ROOT_BUNDLE && c->plan->root != PLAN_ROOT_IMAGE)
                return 0;
        if (move_mount(c->rootfs_fd, "", AT_FDCWD, c->plan->base_dir, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return -errno;
        c->rootfs_fd = safe_close(c->rootfs_fd);
        return 0;
}

int step_mounts_early(struct child_ctx *c)
{
        const struct rootfs_plan *rp = &c->plan->rootfs;
        if (c->plan->root != PLAN_ROOT_BUNDLE && c->plan->root != PLAN_ROOT_IMAGE)
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

int step_pivot(struct child_ctx *c)
{
        if (c->plan->root == PLAN_ROOT_JOINED)
                return 0;
        if (c->plan->root == PLAN_ROOT_BUNDLE || c->plan->root == PLAN_ROOT_IMAGE)
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

int step_root_propagation(struct child_ctx *c)
{
        unsigned long prop = c->plan->rootfs_propagation;
        if (!prop || c->plan->root == PLAN_ROOT_JOINED)
                return 0;
        return mount(NULL, "/", NULL, prop, NULL) < 0 ? -errno : 0;
}

int step_mounts(struct child_ctx *c)
{
        const struct rootfs_plan *rp = &c->plan->rootfs;
        if (!rp->n_steps)
                return 0;
        /* The root once for every step: each resolves its paths in it. */
        _cleanup_close_ int root = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
        if (root < 0)
                return -errno;
        for (size_t i = 0; i < rp->n_steps; i++) {
                int r = mount_step_apply(&rp->steps[i], root, c->host_fds[i]);
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

int step_console(struct child_ctx *c)
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

int step_console_attach(struct child_ctx *c)
{
        if (c->console_slave < 0)
                return 0;
        int r = oci_console_attach(c->console_slave);
        c->console_slave = -1;
        return r;
}

int step_rlimits(struct child_ctx *c)
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

int step_root_id(struct child_ctx *c)
{
        /* Until now the child ran with psrun's own (unmapped) ids, which it
         * needed to reach the bind sources. From here on it is the user
         * namespace's root: an unprivileged id on the host. (Files can only
         * be created in the sandbox's own tmpfs by an id mapped in it.) */
        if (sys_setresgid(c->plan->rootless.setup_gid) < 0 ||
            sys_setresuid(c->plan->rootless.setup_uid) < 0)
                return -errno;
        /* A credential change clears the parent-death signal: set it again. */
        if (c->plan->pdeathsig && prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
                return -errno;
        return 0;
}

int step_user_quotas(struct child_ctx *c)
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
                if (fd >= 0 && q->cgroupns && p->cgroupns_confined) {
                        /* Written once our own cgroup namespace is made
                         * (step_cgroup_quota_confined), as if made here. */
                        c->cgroup_quota_fd = fd;
                        c->cgroup_quota_index = (uint32_t) i;
                        continue;
                }
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
