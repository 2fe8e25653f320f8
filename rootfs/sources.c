/* SPDX-License-Identifier: MIT */
/*
 * Host bind sources and device nodes, opened by the parent before clone3.
 * The child of a new user namespace has only its mapped ids outside it: a
 * source below a directory only the host's root may search was EACCES
 * there, where runc and crun (which open sources in the runtime) bind it,
 * and no mknod works there at all. So the parent, as the user who runs
 * psrun, clones each source (open_tree) and makes the config's device nodes
 * in a tmpfs of its own; the child inherits the fds and only attaches them.
 * An idmapped bind gets its id mapping here too: only a detached mount
 * takes one, through a user namespace made for it.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "common/names.h"
#include "rootfs/mounts.h"

static int step_error(psrun_error *err, const struct mount_step *s, int r)
{
        char what[512];
        mount_step_describe(s, what, sizeof(what));
        return psrun_error_errno(err, r, "rootfs: %s", what);
}

/* What idmap_tree names when mount_setattr itself refused. */
static const char idmap_setattr[] = "MOUNT_ATTR_IDMAP";

static int idmap_error(psrun_error *err, const struct mount_step *s, const char *what, int r)
{
        char step[512];
        mount_step_describe(s, step, sizeof(step));
        /* EINVAL from mount_setattr: mostly a filesystem that takes no
         * idmapped mounts (tmpfs before Linux 6.3, 9p, ...). */
        if (r == -EINVAL && what == idmap_setattr)
                what = "the source's filesystem takes no idmapped mounts on this kernel "
                       "(MOUNT_ATTR_IDMAP)";
        return psrun_error_errno(err, r, "rootfs: %s: idmap: %s", step, what);
}

/*
 * A user namespace with these maps, as an fd: a child made in a new one
 * waits on a pipe while we (root of ours: any ids, and no setgroups "deny"
 * needed) write its maps and open its namespace, then exits. The namespace
 * outlives it in the fd. *what: the file a refusal came from.
 */
static int userns_of_maps(const char *uid_map, const char *gid_map, const char **what)
{
        int hold[2];
        *what = "user namespace";
        if (pipe2(hold, O_CLOEXEC) < 0)
                return -errno;
        /* Raw clone, fork's semantics: the child makes only system calls. */
        pid_t pid = (pid_t) syscall(SYS_clone, CLONE_NEWUSER | SIGCHLD, NULL, NULL, NULL, NULL);
        if (pid == 0) {
                char c;
                close(hold[1]);
                while (read(hold[0], &c, 1) < 0 && errno == EINTR)
                        ;
                _exit(0);
        }
        int r = pid < 0 ? -errno : 0;
        close(hold[0]);
        if (r == 0) {
                *what = "uidMappings";
                r = write_proc_file(pid, "uid_map", uid_map);
        }
        if (r == 0) {
                *what = "gidMappings";
                r = write_proc_file(pid, "gid_map", gid_map);
        }
        int fd = -1;
        if (r == 0) {
                *what = "user namespace";
                char path[64];
                snprintf(path, sizeof(path), "/proc/%d/ns/user", (int) pid);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd < 0)
                        r = -errno;
        }
        close(hold[1]);
        while (pid > 0 && waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
        return r < 0 ? r : fd;
}

/* The step's id mapping on its detached clone. */
static int idmap_tree(const struct mount_step *s, int tree, const char **what)
{
        _cleanup_close_ int userns = -1;
        if (s->idmap_userns) {
                *what = s->idmap_userns;
                userns = open(s->idmap_userns, O_RDONLY | O_CLOEXEC);
                if (userns < 0)
                        return -errno;
        } else {
                userns = userns_of_maps(s->idmap_uids, s->idmap_gids, what);
                if (userns < 0)
                        return userns;
        }
        *what = idmap_setattr;
        struct mount_attr a = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t) userns};
        if (mount_setattr(tree, "", AT_EMPTY_PATH | (s->idmap_recursive ? AT_RECURSIVE : 0), &a,
                          sizeof(a)) < 0)
                return -errno;
        return 0;
}

static int clone_source(const struct mount_step *s, int *ret)
{
        bool mask = s->op == MOUNT_OP_MASK;
        /* A masked file gets a clone of the host's /dev/null, never the
         * container's, which the image may have made a link. */
        int tree = open_tree(AT_FDCWD, mask ? "/dev/null" : s->source,
                             OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
                                     (s->single || mask ? 0 : AT_RECURSIVE));
        if (tree < 0)
                return -errno;
        /* A clone of a shared mount stays in its peer group: mounts made
         * below it in the sandbox would reach the host's. So it is made
         * private, unless the config asked for its mounts to propagate
         * (Kubernetes' Bidirectional and HostToContainer volumes): a slave
         * receives the host's and sends nothing back; shared is the bind as
         * the kernel makes it, in the source's peer group both ways. */
        if (s->peers == MS_SHARED && !mask) {
                *ret = tree;
                return 0;
        }
        struct mount_attr a = {.propagation =
                                       s->peers == MS_SLAVE && !mask ? MS_SLAVE : MS_PRIVATE};
        if (mount_setattr(tree, "", AT_EMPTY_PATH | AT_RECURSIVE, &a, sizeof(a)) < 0) {
                int r = -errno;
                close(tree);
                return r;
        }
        *ret = tree;
        return 0;
}

/* The tmpfs the device nodes are made in: nosuid, noexec, but not nodev
 * (its superblock is the runtime's, so its nodes open); the child, root of
 * the user namespace but only its mapped id outside, may search it. */
static int nodes_tmpfs(void)
{
        _cleanup_close_ int fs = fsopen("tmpfs", FSOPEN_CLOEXEC);
        if (fs < 0)
                return -errno;
        if (fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0711", 0) < 0 ||
            fsconfig(fs, FSCONFIG_SET_STRING, "size", "4k", 0) < 0 ||
            fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                return -errno;
        int mnt = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
        return mnt < 0 ? -errno : mnt;
}

static int make_node(int dir, const struct mount_step *s)
{
        /* chmod after mknod: the node's mode is the config's, not cut by
         * psrun's umask. */
        if (mknodat(dir, s->source, s->mode, s->dev) < 0 ||
            fchownat(dir, s->source, s->uid, s->gid, AT_SYMLINK_NOFOLLOW) < 0 ||
            fchmodat(dir, s->source, s->mode & 07777, 0) < 0)
                return -errno;
        return 0;
}

/* The steps whose host source is cloned before the pivot. */
static bool clones_host_source(const struct mount_step *st)
{
        return st->op == MOUNT_OP_MASK || (st->op == MOUNT_OP_BIND && st->from_host && !st->node);
}

/* Whether the root gets a procfs of its own at /proc, and the host's /proc
 * is a full one (not subset=pid) to judge its files by: the same kernel's
 * files, as a fresh instance will show them. */
static bool judge_proc_masks(const struct rootfs_plan *plan)
{
        bool fresh = false;
        for (size_t i = 0; !fresh && i < plan->n_steps; i++) {
                const struct mount_step *st = &plan->steps[i];
                fresh = st->op == MOUNT_OP_MOUNT && st->fstype && streq(st->fstype, "proc") &&
                        st->target && streq(st->target, "/proc");
        }
        struct stat sb;
        return fresh && stat("/proc/version", &sb) == 0;
}

/* A mask of /proc/X needs its clone of /dev/null only where X is a file:
 * a directory gets a tmpfs, and a path this kernel lacks is skipped (the
 * mask is optional). Each clone is a mount namespace which, closed unused,
 * costs the kernel an RCU grace period to free; most of the default masks
 * name files few kernels have. A wrong guess never leaves a file unmasked:
 * a file to mask with no clone fails the run (mounts-apply.c, mask_file:
 * -ENODEV). */
static bool mask_needs_no_clone(const struct mount_step *st, bool judge)
{
        if (!judge || st->op != MOUNT_OP_MASK || strncmp(st->target, "/proc/", 6) != 0)
                return false;
        struct stat sb;
        if (lstat(st->target, &sb) < 0)
                return errno == ENOENT;
        return S_ISDIR(sb.st_mode);
}

int rootfs_sources_clone_host(const struct rootfs_plan *plan, int *fds, size_t *failed)
{
        bool judge = judge_proc_masks(plan);
        for (size_t i = 0; i < plan->n_steps; i++) {
                const struct mount_step *st = &plan->steps[i];
                if (!clones_host_source(st) || fds[i] >= 0 || mask_needs_no_clone(st, judge))
                        continue;
                int r = st->idmap_uids || st->idmap_userns ? -EOPNOTSUPP
                                                           : clone_source(st, &fds[i]);
                if (r == -ENOENT && st->optional)
                        r = 0;
                if (r < 0) {
                        *failed = i;
                        return r;
                }
        }
        return 0;
}

int rootfs_sources_open(const struct rootfs_plan *plan, struct rootfs_sources *s, psrun_error *err)
{
        *s = (struct rootfs_sources) ROOTFS_SOURCES_INIT;
        /* An overlay the child makes (in_child) has no source here: the
         * child opens the layers in its own mount namespace, as the
         * overlay takes only layers of the mounter's namespace. */
        if (plan->overlay && !plan->overlay->in_child) {
                int r = rootfs_overlay_open(plan->overlay, &s->root_fd, err);
                if (r < 0)
                        return r;
        }
        if (plan->n_steps == 0)
                return 0;
        s->fds = malloc(plan->n_steps * sizeof(*s->fds));
        if (!s->fds) {
                rootfs_sources_close(s);
                return psrun_error_errno(err, ENOMEM, "rootfs");
        }
        s->n = plan->n_steps;
        for (size_t i = 0; i < s->n; i++)
                s->fds[i] = -1;
        bool judge = judge_proc_masks(plan);
        for (size_t i = 0; i < plan->n_steps; i++) {
                const struct mount_step *st = &plan->steps[i];
                int r = 0;
                if (mask_needs_no_clone(st, judge))
                        continue;
                if (st->op == MOUNT_OP_BIND && st->node) {
                        if (s->nodes_fd < 0 && (s->nodes_fd = nodes_tmpfs()) < 0)
                                r = s->nodes_fd;
                        if (r == 0)
                                r = make_node(s->nodes_fd, st);
                } else if (clones_host_source(st) && !plan->sources_in_child) {
                        r = clone_source(st, &s->fds[i]);
                        if (r == -ENOENT && st->optional)
                                r = 0;
                        const char *what = NULL;
                        if (r == 0 && s->fds[i] >= 0 && (st->idmap_uids || st->idmap_userns))
                                r = idmap_tree(st, s->fds[i], &what);
                        if (r < 0 && what) {
                                rootfs_sources_close(s);
                                return idmap_error(err, st, what, r);
                        }
                }
                if (r < 0) {
                        rootfs_sources_close(s);
                        return step_error(err, st, r);
                }
        }
        return 0;
}

void rootfs_sources_close(struct rootfs_sources *s)
{
        for (size_t i = 0; s->fds && i < s->n; i++)
                safe_close(s->fds[i]);
        free(s->fds);
        safe_close(s->nodes_fd);
        safe_close(s->root_fd);
        *s = (struct rootfs_sources) ROOTFS_SOURCES_INIT;
}
