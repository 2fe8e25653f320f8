/* SPDX-License-Identifier: MIT */
/*
 * Applying one mount step, in the child between clone3() and execve()
 * (runtime/child.c runs the list): async-signal-safe only, no allocation,
 * no stdio, the step read and never changed.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/fileio.h"
#include "rootfs/mounts.h"

/* An atime mode (noatime, strictatime) is a value in the MOUNT_ATTR__ATIME
 * field, not a bit: the kernel takes it only with that field cleared. */
static uint64_t atime_clear(uint64_t attr)
{
        return attr & MOUNT_ATTR__ATIME ? MOUNT_ATTR__ATIME : 0;
}

static int setattr(const char *target, uint64_t attr, bool recursive)
{
        struct mount_attr a = {.attr_set = attr, .attr_clr = atime_clear(attr)};
        if (mount_setattr(AT_FDCWD, target, recursive ? AT_RECURSIVE : 0, &a, sizeof(a)) < 0)
                return -errno;
        return 0;
}

static int give(const struct mount_step *s)
{
        if (s->chown && lchown(s->target, s->uid, s->gid) < 0)
                return -errno;
        return 0;
}

static int bind_from_fd(const struct mount_step *s, int tree)
{
        /* The detached copy of the source is made read-only (etc.) before it
         * is attached: never visible with weaker flags. */
        if (s->attr_set) {
                struct mount_attr a = {.attr_set = s->attr_set,
                                       .attr_clr = atime_clear(s->attr_set)};
                unsigned flags = AT_EMPTY_PATH | (s->recursive ? AT_RECURSIVE : 0);
                if (mount_setattr(tree, "", flags, &a, sizeof(a)) < 0)
                        return -errno;
        }
        if (move_mount(tree, "", AT_FDCWD, s->target, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return -errno;
        return 0;
}

static int mask_file(const struct mount_step *s, int null_tree)
{
        /* The CVE-2025-31133 class: the container's own /dev/null may be a
         * symbolic link (to /proc/sys/kernel/core_pattern, say), and a bind
         * by path would put that file, writable, over the masked one. The
         * mask is a clone of the host's /dev/null, taken before the pivot
         * (step_open_sources), and checked to be the null device. */
        struct stat st;
        if (null_tree < 0)
                return -ENODEV;
        if (fstat(null_tree, &st) < 0)
                return -errno;
        if (!S_ISCHR(st.st_mode) || st.st_rdev != makedev(1, 3))
                return -ENODEV;
        if (move_mount(null_tree, "", AT_FDCWD, s->target, MOVE_MOUNT_F_EMPTY_PATH) < 0)
                return -errno;
        return 0;
}

static int make_node(const struct mount_step *s)
{
        /* Something the image put at the node's path (a symbolic link to a
         * host file through /proc, a regular file, another device) is
         * replaced, never followed or kept. */
        struct stat st;
        if (mknod(s->target, s->mode, s->dev) == 0)
                return 0;
        if (errno != EEXIST)
                return -errno;
        if (lstat(s->target, &st) < 0)
                return -errno;
        if ((st.st_mode & S_IFMT) == (s->mode & S_IFMT) && st.st_rdev == s->dev)
                return 0;
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (unlink(s->target) < 0)
                return -errno;
        return mknod(s->target, s->mode, s->dev) < 0 ? -errno : 0;
}

int mount_step_apply(const struct mount_step *s, int host_fd)
{
        int fd, r;
        struct stat st;

        switch (s->op) {
        case MOUNT_OP_MKDIR:
                if (mkdir(s->target, s->mode) < 0 && errno != EEXIST)
                        return -errno;
                return give(s);
        case MOUNT_OP_MKFILE:
                /* A mount point: whatever is there already (a FIFO, a
                 * socket, a device node) is never opened for I/O, which
                 * could block on a FIFO or wake a device. */
                if (mknod(s->target, S_IFREG | (s->mode & 07777), 0) < 0 && errno != EEXIST)
                        return -errno;
                return give(s);
        case MOUNT_OP_SYMLINK:
                if (symlink(s->source, s->target) < 0 && errno != EEXIST)
                        return -errno;
                return 0;
        case MOUNT_OP_WRITE:
                fd = open(s->target,
                          O_WRONLY | O_CLOEXEC | O_NOFOLLOW | (s->existing ? 0 : O_CREAT | O_TRUNC),
                          s->mode);
                if (fd < 0)
                        return -errno;
                r = write_all(fd, s->data, s->data_len);
                close(fd);
                return r < 0 ? r : give(s);
        case MOUNT_OP_BIND:
                if (s->from_host)
                        return host_fd < 0 ? -ENOENT : bind_from_fd(s, host_fd);
                /* MS_REC: a non-recursive bind of a tree with locked submounts
                 * is refused in a user namespace, and would hide them. */
                if (mount(s->source, s->target, NULL, MS_BIND | (s->single ? 0 : MS_REC), NULL) < 0)
                        return -errno;
                return s->attr_set ? setattr(s->target, s->attr_set, s->recursive) : 0;
        case MOUNT_OP_MOUNT:
                if (s->early) {
                        /* Made before the pivot (mount_step_apply_early). */
                        if (host_fd < 0)
                                return -EBADF;
                        if (move_mount(host_fd, "", AT_FDCWD, s->target, MOVE_MOUNT_F_EMPTY_PATH) <
                            0)
                                return -errno;
                        return s->attr_set ? setattr(s->target, s->attr_set, s->recursive) : 0;
                }
                if (mount(s->source, s->target, s->fstype, s->flags, s->data) < 0)
                        return -errno;
                return s->attr_set ? setattr(s->target, s->attr_set, s->recursive) : 0;
        case MOUNT_OP_MASK:
                if (stat(s->target, &st) < 0)
                        return -errno;
                if (S_ISDIR(st.st_mode)) {
                        r = mount("psrun-mask", s->target, "tmpfs",
                                  MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC,
                                  "size=0,nr_inodes=1,mode=0555");
                        return r < 0 ? -errno : 0;
                }
                return mask_file(s, host_fd);
        case MOUNT_OP_SETATTR:
                return setattr(s->target, s->attr_set, s->recursive);
        case MOUNT_OP_MKNOD:
                r = make_node(s);
                return r < 0 ? r : give(s);
        case MOUNT_OP_DETACH:
                if (umount2(s->target, MNT_DETACH) < 0)
                        return -errno;
                if (rmdir(s->target) < 0)
                        return -errno;
                return 0;
        default:
                return -EINVAL;
        }
}

int mount_step_apply_early(const struct mount_step *s)
{
        /* A new instance as a detached mount (fsopen/fsmount), made while the
         * host's /proc and /sys are still in this mount namespace: the
         * kernel lets a user namespace make procfs or sysfs only where a
         * full instance is visible. It is attached later, at the step's place
         * in the config's order (mount_step_apply with host_fd), after the
         * pivot, where every target resolves inside the root. */
        static const struct {
                unsigned long flag;
                uint64_t attr;
        } attrs[] = {
                {MS_RDONLY, MOUNT_ATTR_RDONLY},
                {MS_NOSUID, MOUNT_ATTR_NOSUID},
                {MS_NODEV, MOUNT_ATTR_NODEV},
                {MS_NOEXEC, MOUNT_ATTR_NOEXEC},
                {MS_NOATIME, MOUNT_ATTR_NOATIME},
                {MS_NODIRATIME, MOUNT_ATTR_NODIRATIME},
                {MS_STRICTATIME, MOUNT_ATTR_STRICTATIME},
        };
        int fs = fsopen(s->fstype, FSOPEN_CLOEXEC);
        if (fs < 0)
                return -errno;
        int r = 0;
        if (s->source && fsconfig(fs, FSCONFIG_SET_STRING, "source", s->source, 0) < 0)
                r = -errno;
        /* "key=value,flag,...": one fsconfig each, from a copy on the stack. */
        char data[1024];
        size_t len = s->data ? strlen(s->data) : 0;
        if (r == 0 && len >= sizeof(data))
                r = -E2BIG;
        if (r == 0 && len) {
                memcpy(data, s->data, len + 1);
                for (char *opt = data, *next; r == 0 && opt; opt = next) {
                        next = strchr(opt, ',');
                        if (next)
                                *next++ = '\0';
                        if (!*opt)
                                continue;
                        char *eq = strchr(opt, '=');
                        if (eq)
                                *eq = '\0';
                        if ((eq ? fsconfig(fs, FSCONFIG_SET_STRING, opt, eq + 1, 0)
                                : fsconfig(fs, FSCONFIG_SET_FLAG, opt, NULL, 0)) < 0)
                                r = -errno;
                }
        }
        if (r == 0 && fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
                r = -errno;
        uint64_t attr = 0;
        for (size_t i = 0; i < sizeof(attrs) / sizeof(attrs[0]); i++)
                if (s->flags & attrs[i].flag)
                        attr |= attrs[i].attr;
        int tree = r == 0 ? fsmount(fs, FSMOUNT_CLOEXEC, (unsigned) attr) : -1;
        if (r == 0 && tree < 0)
                r = -errno;
        close(fs);
        return r < 0 ? r : tree;
}

int rootfs_sources_clone_nodes(const struct rootfs_plan *plan, int nodes_fd, int *fds,
                               const char *dir, size_t *failed)
{
        if (nodes_fd < 0)
                return 0;
        /* Attached, the tmpfs is in our mount namespace (a private copy of
         * the host's: nothing reaches the host), where open_tree may clone
         * from it; the fd then names the attached mount. */
        if (move_mount(nodes_fd, "", AT_FDCWD, dir, MOVE_MOUNT_F_EMPTY_PATH) < 0) {
                *failed = 0;
                return -errno;
        }
        int r = 0;
        for (size_t i = 0; r == 0 && i < plan->n_steps; i++) {
                const struct mount_step *s = &plan->steps[i];
                if (s->op != MOUNT_OP_BIND || !s->node)
                        continue;
                fds[i] = open_tree(nodes_fd, s->source, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
                if (fds[i] < 0) {
                        r = -errno;
                        *failed = i;
                }
        }
        if (umount2(dir, MNT_DETACH) < 0 && r == 0) {
                r = -errno;
                *failed = 0;
        }
        return r;
}
