/* SPDX-License-Identifier: MIT */
/*
 * Host bind sources and device nodes, opened by the parent before clone3.
 * The child of a new user namespace has only its mapped ids outside it: a
 * source below a directory only the host's root may search was EACCES
 * there, where runc and crun (which open sources in the runtime) bind it,
 * and no mknod works there at all. So the parent, as the user who runs
 * psrun, clones each source (open_tree) and makes the config's device nodes
 * in a tmpfs of its own; the child inherits the fds and only attaches them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "rootfs/mounts.h"

static int step_error(psrun_error *err, const struct mount_step *s, int r)
{
        char what[512];
        mount_step_describe(s, what, sizeof(what));
        return psrun_error_errno(err, r, "rootfs: %s", what);
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
         * below it in the sandbox would reach the host's. */
        struct mount_attr a = {.propagation = MS_PRIVATE};
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

int rootfs_sources_open(const struct rootfs_plan *plan, struct rootfs_sources *s, psrun_error *err)
{
        *s = (struct rootfs_sources) ROOTFS_SOURCES_INIT;
        if (plan->n_steps == 0)
                return 0;
        s->fds = malloc(plan->n_steps * sizeof(*s->fds));
        if (!s->fds)
                return psrun_error_errno(err, ENOMEM, "rootfs");
        s->n = plan->n_steps;
        for (size_t i = 0; i < s->n; i++)
                s->fds[i] = -1;
        for (size_t i = 0; i < plan->n_steps; i++) {
                const struct mount_step *st = &plan->steps[i];
                int r = 0;
                if (st->op == MOUNT_OP_BIND && st->node) {
                        if (s->nodes_fd < 0 && (s->nodes_fd = nodes_tmpfs()) < 0)
                                r = s->nodes_fd;
                        if (r == 0)
                                r = make_node(s->nodes_fd, st);
                } else if (st->op == MOUNT_OP_MASK || (st->op == MOUNT_OP_BIND && st->from_host)) {
                        r = clone_source(st, &s->fds[i]);
                        if (r == -ENOENT && st->optional)
                                r = 0;
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
        *s = (struct rootfs_sources) ROOTFS_SOURCES_INIT;
}
